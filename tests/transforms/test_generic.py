"""Sizes are symbols (issue 26): one lowering serves every problem size.

The plan is lowered once, at a reference size; its tile order and work split are then checked at
other sizes against the brute-force oracles (the order's cells, ``work_units``), and the
expressions a printer prints (``SplitRule.forms``) against the per-launch rule (``split_at``).
"""

from __future__ import annotations

import itertools

import pytest
import sympy

from tests.plans import plan, schedule
from tilec.runtime.loader import load_schedule
from tilec.ir.iterdomain import as_extent
from tilec.transforms.decompose import split_at, work_units
from tilec.transforms.pipeline import lower
from tilec.transforms.pipeline import over_sizes
from tilec.transforms.plan import SIZE_K, SIZE_M, SIZE_N, Decomposition

SIZES = [(1, 1, 1), (16, 16, 16), (17, 33, 15), (80, 16, 256), (100, 70, 50), (160, 96, 64),
         (255, 129, 300), (512, 48, 1000), (33, 500, 17)]

CASES = [
    dict(decomposition="dp"),
    dict(decomposition="dp", sms=3),
    dict(decomposition="dp", sms=4, order="grouped", group_m=3),
    dict(decomposition="splitk", splits=3),
    dict(decomposition="splitk", splits=4, sms=5),
    dict(decomposition="streamk", sms=5),
    dict(decomposition="streamk", sms=4, order="grouped", group_m=2),
    dict(decomposition="dp_1sk", sms=6),
    dict(decomposition="sk2_dp", sms=4),
    dict(decomposition="skpp", sk_waves=2, sms=3),
    dict(decomposition="skpp", sk_waves=0, sms=3),
    dict(decomposition="auto", sms=4),
]


def test_the_size_symbols_are_the_schedules_names() -> None:
    assert (SIZE_M, SIZE_N, SIZE_K) == tuple(as_extent(n) for n in "MNK")
    f = over_sizes(schedule(100, 70, 50, 32, 32, 16, sms=4))
    assert f is not None and (f.M, f.N, f.K) == (SIZE_M, SIZE_N, SIZE_K)


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_the_split_at_any_size_is_the_rule_and_its_forms_agree(case) -> None:  # type: ignore[no-untyped-def]
    p = plan(100, 70, 50, 16, 16, 16, **case)
    rule = p.split
    assert rule is not None
    assert rule.at(p.M, p.N, p.K) == p.work  # the plan's split is the rule at its launch
    forms = rule.forms()
    for M, N, K in SIZES:
        w = split_at(rule, M, N, K)
        env = {SIZE_M: M, SIZE_N: N, SIZE_K: K}
        got = {k: int(sympy.sympify(e).xreplace(env)) for k, e in forms.items()}
        want = dict(grid=w.grid, num_tiles=w.num_tiles, k_iters=w.k_iters, splits=w.splits,
                    sk_tiles=w.sk_tiles, sk_ctas=w.sk_ctas, sk_start=w.sk_start)
        assert got == want, (M, N, K)
        # every k-iteration of every alive tile runs exactly once at this size (the oracle)
        order = p.order.at(M=M, N=N)
        alive = order.alive_tiles()
        done = sorted((t, k) for units in work_units(w, alive) for t, b, e in units
                      for k in range(b, e))
        assert done == sorted(itertools.product(alive, range(w.k_iters))), (M, N, K)


@pytest.mark.parametrize("decomp", ["dp", "splitk", "streamk", "dp_1sk", "skpp"])
def test_cluster_splits_follow_the_sizes(decomp: str) -> None:
    params = dict(M=512, N=512, K=256, SMS=8, CLUSTER=2, CM=2, DECOMP=decomp, SPLITS=2)
    s = load_schedule("examples/seed004_persistent_cluster.py", params)
    p = lower(s.fusion, target="cuda", params=s.params, multicast=False)
    assert p.split is not None and p.split.group == 2
    assert p.split.at(p.M, p.N, p.K) == p.work
    forms = p.split.forms()
    for M, N, K in [(100, 300, 64), (1024, 256, 4096), (129, 1, 65), (512, 512, 256)]:
        w = p.split.at(M, N, K)
        env = {SIZE_M: M, SIZE_N: N, SIZE_K: K}
        got = {k: int(sympy.sympify(e).xreplace(env)) for k, e in forms.items()}
        assert got["grid"] == w.grid and got["num_tiles"] == w.num_tiles, (M, N, K)
        assert (got["sk_tiles"], got["sk_ctas"], got["splits"]) == (w.sk_tiles, w.sk_ctas,
                                                                     w.splits)
        assert w.grid % 2 == 0


def test_the_order_counts_are_expressions_of_the_sizes() -> None:
    p = plan(100, 70, 50, 16, 16, 16, decomposition="streamk", sms=5)
    c = p.counts
    assert c.tiles_m == sympy.ceiling(SIZE_M / 16) and c.k_iters == sympy.ceiling(SIZE_K / 16)
    assert c.num_tiles.free_symbols <= {SIZE_M, SIZE_N}
    assert c.at(p.M, p.N, p.K) == dict(tiles_m=7, tiles_n=5, num_tiles=35, k_iters=4)
    assert p.work.kind is Decomposition.STREAM_K and p.tiles == 35
