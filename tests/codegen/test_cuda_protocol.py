"""CUDA backend, no GPU: the exact stage-release protocol's masks (docs/cuda_backend.md, "Stage
release"), when it is chosen, and the choice of epilogue; plans are the seed schedule lowered."""

from __future__ import annotations

import itertools

import pytest

from tests.codegen.cuda_plans import mc_values, seed, sizes
from tilec.codegen.cuda.printer import CudaPrinter, emit
from tilec.errors import UnsupportedError
from tilec.ir.types import Epilogue
from tilec.transforms.pipeline.release import cluster_all_or_none
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
                v = mc_values(op.multicast, x, 0, 0, sizes=sizes(plan))
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
    assert not cluster_all_or_none(plan, 2)
    assert CudaPrinter(plan).shape.receivers is None
    whole = seed(M=4096, N=4096, K=256, CM=2, CN=2, SMS=120)
    assert cluster_all_or_none(whole, 4)  # 512 tiles on 120 CTAs: the last round is partial
    assert CudaPrinter(whole).shape.receivers is not None


def test_epilogue_choice() -> None:
    tma = seed(M=1000, N=1024, K=256, CM=1, SMS=4)
    assert CudaPrinter(tma).shape.tma_store
    assert CudaPrinter(tma).epilogue == "overlap"  # lowering's: overlapped TMA stores (they fit)
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in emit(tma)
    odd = seed(M=1000, N=1504, K=256, CM=1, SMS=4)
    assert CudaPrinter(odd).shape.tma_store
    # C's row stride is a launch's (3000-byte rows: the launcher pads C or refuses it), so the
    # file does not depend on it
    odd = seed(M=1000, N=1500, K=256, CM=1, SMS=4)
    assert CudaPrinter(odd).epilogue == "overlap" and emit(odd) == emit(seed(M=1000, N=1504, K=256,
                                                                              CM=1, SMS=4))
    import dataclasses
    f32 = dataclasses.replace(tma, out_dtype=DType.FP32)  # an fp32 C: no TMA stores
    for epi in ("tma", "tma_tile", "overlap"):
        with pytest.raises(UnsupportedError, match="16-bit C"):
            emit(f32, epilogue=epi)
    with pytest.raises(UnsupportedError, match="16-bit C"):
        emit(f32)  # the plan's own (overlap) is checked as well
    assert not CudaPrinter(dataclasses.replace(f32, epilogue=Epilogue.DIRECT)).shape.tma_store
    assert not CudaPrinter(tma, epilogue="direct").shape.tma_store
    with pytest.raises(UnsupportedError, match="epilogue must be"):
        CudaPrinter(tma, epilogue="smem")


def _consumer_k_loop(src: str) -> str:
    """The consumer's k-loop: from its full-barrier wait to the release of the last stage."""
    a = src.index("tilec::mbar_wait(&full[stage], phase);")
    return src[a:src.index("tilec::wgmma_wait<0>();", a)]


def test_overlapped_epilogue_stores_the_last_tile_inside_the_next_k_loop() -> None:
    plan = seed(M=2048, N=2048, K=1024, CM=2, SMS=8)  # 128 x 256 tiles: 4 boxes per warpgroup
    src = emit(plan)
    loop = _consumer_k_loop(src)
    # one box of the pending (packed) tile per k-iteration, after this k-iteration's wgmmas are
    # issued and before the wait for the previous ones
    assert loop.index("tilec::wgmma_commit();") < loop.index("if (flushed < EPI_STEPS)") \
        < loop.index("tilec::wgmma_wait<1>();")
    assert "tilec::tma_store(&tmC, box, pend_n + q * 64, pend_m + ms * 64);" in loop
    assert "constexpr int EPI_STEPS = M_SUB * (BN / 64);" in src
    assert "pend[ms][j][0] = pack(acc[ms][4 * j], acc[ms][4 * j + 1]);" in src
    # the last tile's boxes are stored before the wait that keeps shared memory alive for them
    assert src.rindex("tilec::tma_store(&tmC") < src.rindex("tilec::tma_store_wait<0>();")
    # the schedule's choice reaches the printer; the "tma" epilogue stores after the k-loop
    tma = seed(M=2048, N=2048, K=1024, CM=2, SMS=8, EPILOGUE="tma")
    assert tma.epilogue == "tma" and CudaPrinter(tma).epilogue == "tma"
    src_tma = emit(tma)
    assert "pend[" not in src_tma and "tma_store(" not in _consumer_k_loop(src_tma)
    assert "// Epilogue: registers -> two staging boxes -> TMA stores." in src_tma
    assert "// Epilogue: packed to 16 bits in registers;" in src
    # the shared memory the launcher checks is the one the printed kernel uses
    assert CudaPrinter(plan).shape.smem_bytes == CudaPrinter(tma).shape.smem_bytes


def test_no_loads_measurement_prints_no_tma_loads() -> None:
    plan = seed(M=2048, N=2048, K=1024, CM=2, SMS=8)
    assert "tilec::tma_load_multicast" in emit(plan)
    src = emit(plan, epilogue="none", loads=False)
    assert "tilec::tma_load" not in src.split("gemm_kernel(")[1]
    assert "mbar_arrive_expect_tx(&full[stage], 0u);  // MEASUREMENT: no loads" in src
    assert "// Epilogue: NONE (a measurement" in src
