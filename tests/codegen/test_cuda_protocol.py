"""CUDA backend, no GPU: the exact stage-release protocol's masks (docs/cuda_backend.md, "Stage
release"), when it is chosen, the grouped seed order, and the choice of epilogue."""

from __future__ import annotations

import itertools

import pytest

from tilec.codegen.cuda import CudaPrinter, _cluster_all_or_none, emit
from tilec.codegen.cuda_seed import closed_matches_general, evaluate, seed_order, seed_plan
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
                v = evaluate(op.multicast, x, 0, 0, "closed")
                m |= v["mask"] if v["issue"] else 0
        out.append(m)
    return out


@pytest.mark.parametrize("cm,cn,mode", [(1, 2, L), (2, 1, S), (2, 2, L), (2, 2, S), (4, 1, L),
                                        (1, 4, S)])
def test_exact_release_masks(cm: int, cn: int, mode: MulticastMode) -> None:
    plan = seed_plan(M=2048, N=2048, K=256, BM=128, BN=256, CM=cm, CN=cn, sms=16, mode=mode,
                     form="closed")
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
    plan = seed_plan(M=2048, N=2048, K=256, CM=2, CN=2, sms=16, mode=S, form="closed")
    # rank r = 2*row + col: A goes along the row, B along the column
    assert CudaPrinter(plan).shape.receivers == (0b0111, 0b1011, 0b1101, 0b1110)


@pytest.mark.parametrize("form", ["general", "guarded"])
def test_run_time_masks_use_the_all_cluster_release(form: str) -> None:
    plan = seed_plan(M=1300, N=1100, K=512, CM=2, CN=2, sms=8, mode=S, form=form)
    assert CudaPrinter(plan).shape.receivers is None
    assert "CONSUMERS * CLUSTER" in emit(plan)


def test_partly_dead_clusters_are_detected() -> None:
    # 1300 / 128 -> 11 tile rows: groups of 2 rows leave the last group half dead
    plan = seed_plan(M=1300, N=1024, K=256, CM=2, CN=1, sms=8, form="closed")
    assert not _cluster_all_or_none(plan, 2)
    assert CudaPrinter(plan).shape.receivers is None
    whole = seed_plan(M=4096, N=4096, K=256, CM=2, CN=2, sms=120, form="closed")
    assert _cluster_all_or_none(whole, 4)  # 512 tiles on 120 CTAs: the last round is partial
    assert CudaPrinter(whole).shape.receivers is not None


@pytest.mark.parametrize("tm,tn,cm,cn,band", [(32, 16, 2, 2, 4), (10, 6, 2, 1, 3), (7, 5, 1, 1, 4),
                                              (9, 7, 1, 2, 2), (64, 32, 1, 1, 8)])
def test_grouped_order_is_a_bijection_with_whole_groups(tm: int, tn: int, cm: int, cn: int,
                                                        band: int) -> None:
    o = seed_order(tm, tn, cm, cn, band)
    cl = cm * cn
    seen = [o.evaluate(t) for t in range(int(o.num_tiles))]
    alive = [x for x in seen if x[0] < tm and x[1] < tn]
    assert sorted(alive) == sorted(itertools.product(range(tm), range(tn)))
    for g in range(len(seen) // cl):  # each run of CLUSTER indices is one cm x cn group
        grp = seen[g * cl:(g + 1) * cl]
        assert all(m // cm == grp[0][0] // cm and n // cn == grp[0][1] // cn for m, n in grp)
        assert [(m % cm, n % cn) for m, n in grp] == [(k // cn, k % cn) for k in range(cl)]


def test_grouped_closed_forms_match_general() -> None:
    plan = seed_plan(M=2048, N=2048, K=256, CM=2, CN=2, sms=16, mode=S, form="closed", band=2)
    for op in (plan.a, plan.b):
        assert closed_matches_general(op.multicast, plan.order, 16)


def test_epilogue_choice() -> None:
    tma = seed_plan(M=1000, N=1024, K=256, sms=4)
    assert CudaPrinter(tma).shape.tma_store
    assert "cp.async.bulk.tensor.2d.global.shared::cta" in emit(tma)
    odd = seed_plan(M=1000, N=1500, K=256, sms=4)  # 3000-byte rows: TMA needs multiples of 16
    assert not CudaPrinter(odd).shape.tma_store
    with pytest.raises(UnsupportedError, match="16-byte rows"):
        emit(odd, epilogue="tma")
    import dataclasses
    f32 = dataclasses.replace(tma, out_dtype=DType.FP32)
    assert not CudaPrinter(f32).shape.tma_store
    assert not CudaPrinter(tma, epilogue="direct").shape.tma_store
    with pytest.raises(UnsupportedError, match="epilogue must be"):
        CudaPrinter(tma, epilogue="smem")
