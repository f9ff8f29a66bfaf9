"""CUDA backend, no GPU: the exact stage-release protocol's masks (docs/cuda_backend.md, "Stage
release"), when it is chosen, and the choice of epilogue; plans are the seed schedule lowered."""

from __future__ import annotations

import itertools

import pytest

from tests.codegen.cuda_plans import mc_values, seed
from tilec.codegen.cuda.printer import CudaPrinter, _cluster_all_or_none, emit
from tilec.errors import UnsupportedError
from tilec.transforms.plan import DType, MulticastMode

L, S = MulticastMode.LEADER, MulticastMode.SLICED


def _oracle_receivers(plan, cluster: int) -> list[int]:  # type: ignore[no-untyped-def]
    """R'(X) from the plan's sympy (closed form at round 0, cluster 0): X itself, plus the mask of
    every operand X issues; an operand without multicast lands in X only."""
    out = []
    for x in range(cluster):
        m = 1 << x
        for op in (plan.a, plan.b):
            if op.multicast is not None:
                v = mc_values(op.multicast, x, 0, 0)
                m |= v["mask"] if v["issue"] else 0
        out.append(m)
    return out


@pytest.mark.parametrize("cm,cn,mode", [(1, 2, L), (2, 1, S), (2, 2, L), (2, 2, S), (4, 1, L),
                                        (1, 4, S)])
def test_exact_release_masks(cm: int, cn: int, mode: MulticastMode) -> None:
    plan = seed(mode, M=2048, N=2048, K=256, BM=128, BN=256, CM=cm, CN=cn, SMS=16)
    cl = cm * cn
    shape = CudaPrinter(plan).shape
    assert shape.receivers == tuple(_oracle_receivers(plan, cl))
    # S' is the transpose of R': X's empty barrier gets one arrival per consumer of each Y with
    # X in S'(Y), which is exactly CONSUMERS * |R'(X)|, its count
    for x, y in itertools.product(range(cl), repeat=2):
        assert (shape.senders[y] >> x & 1) == (shape.receivers[x] >> y & 1)
    for x in range(cl):
        arrivals = sum(shape.senders[y] >> x & 1 for y in range(cl))
        assert arrivals == bin(shape.receivers[x]).count("1")
    src = emit(plan)
    assert "__popcll((RECV >> (8 * rank)) & 0xFF)" in src and "(SEND >> (8 * rank + ctid)) & 1" in src


def test_sliced_2x2_receivers_are_row_and_column() -> None:
    plan = seed(S, M=2048, N=2048, K=256, CM=2, CN=2, SMS=16)
    # rank r = 2*row + col: A goes along the row, B along the column
    assert CudaPrinter(plan).shape.receivers == (0b0111, 0b1011, 0b1101, 0b1110)


def test_run_time_masks_use_the_all_cluster_release() -> None:
    plan = seed(S, closed=False, M=1300, N=1100, K=512, CM=2, CN=2, SMS=8)
    assert CudaPrinter(plan).shape.receivers is None
    assert "CONSUMERS * CLUSTER" in emit(plan)


def test_partly_dead_clusters_are_detected() -> None:
    # 1300 / 128 -> 11 tile rows: groups of 2 rows leave the last group half dead
    plan = seed(M=1300, N=1024, K=256, CM=2, CN=1, SMS=8)
    assert not _cluster_all_or_none(plan, 2)
    assert CudaPrinter(plan).shape.receivers is None
    whole = seed(M=4096, N=4096, K=256, CM=2, CN=2, SMS=120)
    assert _cluster_all_or_none(whole, 4)  # 512 tiles on 120 CTAs: the last round is partial
    assert CudaPrinter(whole).shape.receivers is not None


def test_epilogue_choice() -> None:
    tma = seed(M=1000, N=1024, K=256, CM=1, SMS=4)
    assert CudaPrinter(tma).shape.tma_store
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in emit(tma)
    odd = seed(M=1000, N=1504, K=256, CM=1, SMS=4)
    assert CudaPrinter(odd).shape.tma_store
    odd = seed(M=1000, N=1500, K=256, CM=1, SMS=4)  # 3000-byte rows: TMA needs multiples of 16
    assert not CudaPrinter(odd).shape.tma_store
    with pytest.raises(UnsupportedError, match="16-byte rows"):
        emit(odd, epilogue="tma")
    import dataclasses
    f32 = dataclasses.replace(tma, out_dtype=DType.FP32)
    assert not CudaPrinter(f32).shape.tma_store
    assert not CudaPrinter(tma, epilogue="direct").shape.tma_store
    with pytest.raises(UnsupportedError, match="epilogue must be"):
        CudaPrinter(tma, epilogue="smem")
