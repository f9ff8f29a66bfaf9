"""The schedule trace is a Python program: printing it and running it (Schedule.replay) rebuilds
structurally equal IR for C, A_smem and B_smem."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tilec.runtime.loader import load_schedule
from tilec.errors import TilecError
from tilec.ir import GemmFusion, ParallelType

from .helpers import SEED


def structures(f: GemmFusion) -> list[object]:
    return [v.structure() for v in f.views()]


def assert_round_trip(f: GemmFusion) -> GemmFusion:
    text = str(f.schedule)
    g = GemmFusion.replay(f.schedule)
    assert structures(g) == structures(f), text
    assert g.cluster_dims == f.cluster_dims
    assert str(g.schedule) == text  # the replayed trace prints the same program
    return g


@st.composite
def random_schedule(draw: st.DrawFn) -> GemmFusion:
    size = st.one_of(st.integers(1, 300), st.sampled_from(["M", "N", "K", "S"]))
    f = GemmFusion(M=draw(size), N=draw(size), K=draw(size),
                   dtype=draw(st.sampled_from(["bf16", "fp16", "fp32"])),
                   b_layout=draw(st.sampled_from(["kn", "nk"])),
                   non_portable_cluster=draw(st.booleans()))
    c = f.c
    for _ in range(draw(st.integers(0, 10))):
        n = c.ndim
        pos = st.integers(-n, n - 1)
        op = draw(st.sampled_from(
            ["split", "merge", "reorder", "swizzle", "parallelize", "cluster", "propagate",
             "broadcast"]))
        try:  # illegal calls must raise and leave no trace
            if op == "split":
                factor = draw(st.one_of(st.integers(-1, 64), st.sampled_from(["BM", "BN"])))
                names = draw(st.one_of(st.none(), st.just(("o", "i"))))
                c.split(draw(pos), factor, inner=draw(st.booleans()), names=names)
            elif op == "merge":
                if draw(st.booleans()):
                    c.merge(draw(pos))
                else:
                    c.merge(draw(pos), draw(pos), name=draw(st.sampled_from([None, "T"])))
            elif op == "reorder":
                perm = draw(st.permutations(range(n)))
                c.reorder(list(perm) if draw(st.booleans()) else {perm[0]: 0})
            elif op == "swizzle":
                c.swizzle(draw(pos), draw(pos), draw(st.integers(0, 4)))
            elif op == "parallelize":
                c.parallelize(draw(pos), draw(st.sampled_from(list(ParallelType))))
            elif op == "cluster":
                f.set_cluster(draw(st.integers(1, 4)), draw(st.integers(1, 2)))
            elif op == "broadcast":
                c.broadcast(draw(st.integers(0, n)))
            else:
                f.propagate()
        except TilecError:
            pass
    return f


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(f=random_schedule())
def test_random_schedule_round_trips(f: GemmFusion) -> None:
    assert_round_trip(f)


SEED_PARAMS = [
    {},
    {"CN": 2},
    {"M": 1000, "N": 700, "K": 300, "CM": 3, "CN": 2, "SMS": 10, "CLUSTER": 4},
    {"M": "M", "N": "N", "K": "K", "BN": 128, "CLUSTER": 1},
    {"DTYPE": "fp16", "BM": 64, "SMS": 114},
]


@pytest.mark.parametrize("params", SEED_PARAMS, ids=lambda p: ",".join(f"{k}={v}" for k, v in p.items()) or "defaults")
def test_seed_round_trips(params: dict[str, object]) -> None:
    f = load_schedule(SEED, params).fusion
    g = assert_round_trip(f)
    assert "fusion.c.parallelize(1, ParallelType.CIDx)" in str(g.schedule)


def test_structure_sees_a_dropped_call() -> None:
    """The comparison above can fail: dropping one recorded call changes the structure."""
    f = load_schedule(SEED, {}).fusion
    assert str(f.schedule.calls[-2]) == "fusion.c.parallelize(6, ParallelType.Mma)"
    g = GemmFusion.replay(f.schedule)
    del f.schedule.calls[-2]
    h = GemmFusion.replay(f.schedule)
    for before, after in zip(structures(g), structures(h), strict=True):
        assert before != after  # C has Ki serial, the operands Ki unbulked


def test_failed_call_is_not_recorded() -> None:
    f = GemmFusion(M=64, N=64, K=32)
    f.c.split(0, 16)
    before = str(f.schedule)
    with pytest.raises(TilecError):
        f.c.split(0, 0)
    with pytest.raises(TilecError):
        f.c.reorder([0, 0, 1, 2])
    with pytest.raises(TilecError):
        f.c.merge(1, 3)  # iteration with reduction
    assert str(f.schedule) == before


def test_trace_text_of_a_small_schedule() -> None:
    """The printed trace is the contract: golden text for one small schedule."""
    f = GemmFusion(M=256, N="N", K=64, dtype="fp16")
    f.c.split(0, 128).split(-2, "BN", inner=False, names=("No", "Ni")).reorder({2: 0})
    f.c.parallelize(0, ParallelType.BIDx).merge(1, 2, name="MN")
    f.set_cluster(2)
    f.propagate()
    assert str(f.schedule).splitlines() == [
        "from tilec.ir import GemmFusion, ParallelType",
        "fusion = GemmFusion(M=256, N='N', K=64, dtype='fp16', b_layout='kn')",
        "fusion.c.split(0, 128)",
        "fusion.c.split(-2, 'BN', inner=False, names=('No', 'Ni'))",
        "fusion.c.reorder({2: 0})",
        "fusion.c.parallelize(0, ParallelType.BIDx)",
        "fusion.c.merge(1, 2, name='MN')",
        "fusion.set_cluster(2, 1, 1)",
        "fusion.propagate()",
    ]
