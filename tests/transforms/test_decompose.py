"""Work decompositions: coverage oracle (every (tile, k-iter) exactly once), validation messages,
tile orders, the cost model and the heuristic."""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.errors import TilecError
from tilec.transforms.decompose import (
    SK_L2_PENALTY,
    SK_L2_PENALTY_WIDE,
    choose_decomposition,
    choose_load_kind,
    estimate_cost,
    fixup_iters,
    grouped_order,
    make_work_split,
    row_major_order,
    simple_plan,
    sk_region,
    stream_k_contributors,
    work_units,
)
from tilec.transforms.plan import Decomposition, DType, Fixup, LoadKind

KINDS = [
    (Decomposition.DATA_PARALLEL, {}),
    (Decomposition.SPLIT_K, {"splits": 2}),
    (Decomposition.SPLIT_K, {"splits": 3}),
    (Decomposition.STREAM_K, {}),
    (Decomposition.DP_ONE_SK_WAVE, {}),
    (Decomposition.TWO_TILE_SK_DP, {}),
    *[(Decomposition.STREAM_K_PP, {"sk_waves": w}) for w in range(8)],
]


def _check_cover(split, tiles: int, k_iters: int) -> None:
    """The postcondition: every (tile, k) exactly once, no empty unit, units in k-order per CTA."""
    per_cta = work_units(split, tiles, k_iters)
    assert len(per_cta) == split.grid
    seen: dict[tuple[int, int], int] = {}
    for cta, units in enumerate(per_cta):
        for t, kb, ke in units:
            assert 0 <= t < tiles and 0 <= kb < ke <= k_iters, (cta, t, kb, ke)
            for k in range(kb, ke):
                assert (t, k) not in seen, f"(tile {t}, k {k}) twice: CTAs {seen[(t, k)]}, {cta}"
                seen[(t, k)] = cta
    assert len(seen) == tiles * k_iters


def _check_contributors(split, tiles: int, k_iters: int) -> None:
    """Stream-K fix-up data: contributors in K order, slots distinct, as the units say."""
    start, end = sk_region(split, tiles)
    per_cta = work_units(split, tiles, k_iters)
    slots: set[int] = set()
    for lt in range(end - start):
        contrib = stream_k_contributors(split, k_iters, lt)
        assert contrib[0][2] == 0 and contrib[-1][3] == k_iters
        for (c0, _, _, e0), (c1, _, b1, _) in itertools.pairwise(contrib):
            assert c1 == c0 + 1 and e0 == b1  # K order, contiguous
        for cta, slot, kb, ke in contrib:
            assert (start + lt, kb, ke) in per_cta[cta]
            if len(contrib) > 1:
                assert slot not in slots and slot // 2 == cta
                slots.add(slot)


@pytest.mark.parametrize(("kind", "extra"), KINDS, ids=lambda x: str(x))
@pytest.mark.parametrize("sms", [1, 4, 6, 7])
def test_cover_small_domain(kind, extra, sms):
    for M, N, K in itertools.product([1, 16, 33, 64, 100, 161], [16, 50, 112], [1, 16, 40, 112]):
        BM = BN = BK = 16
        k_iters = -(-K // BK)
        if extra.get("splits", 1) > k_iters:
            continue
        split = make_work_split(kind, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms, **extra)
        tiles = -(-M // BM) * -(-N // BN)
        _check_cover(split, tiles, k_iters)
        if split.sk_tiles:
            _check_contributors(split, tiles, k_iters)


@settings(max_examples=60, deadline=None)
@given(
    tiles_m=st.integers(1, 12), tiles_n=st.integers(1, 12), k_iters=st.integers(1, 40),
    sms=st.integers(1, 20), kind_i=st.integers(0, len(KINDS) - 1), grid=st.integers(1, 50),
)
def test_cover_random(tiles_m, tiles_n, k_iters, sms, kind_i, grid):
    kind, extra = KINDS[kind_i]
    M, N, K = tiles_m * 16, tiles_n * 16, k_iters * 16
    if extra.get("splits", 1) > k_iters:
        return
    g = None
    if kind in (Decomposition.DATA_PARALLEL, Decomposition.SPLIT_K):
        g = min(grid, tiles_m * tiles_n * extra.get("splits", 1))
    split = make_work_split(kind, M=M, N=N, K=K, BM=16, BN=16, BK=16, sms=sms, grid=g, **extra)
    _check_cover(split, tiles_m * tiles_n, k_iters)
    if split.sk_tiles:
        _check_contributors(split, tiles_m * tiles_n, k_iters)
        assert split.sk_ctas <= min(sms, split.sk_tiles * k_iters)


def test_hybrid_shapes():
    kw = dict(M=16 * 9, N=16 * 3, K=16 * 8, BM=16, BN=16, BK=16, sms=8)  # 27 tiles: 3 waves + 3
    one = make_work_split(Decomposition.DP_ONE_SK_WAVE, **kw)
    assert (one.sk_tiles, one.sk_first, one.grid) == (3 + 8, False, 8)  # small tail: + 1 wave
    big_tail = make_work_split(Decomposition.DP_ONE_SK_WAVE, **{**kw, "sms": 6})  # 4 waves + 3
    assert big_tail.sk_tiles == 3
    two = make_work_split(Decomposition.TWO_TILE_SK_DP, **kw)
    assert (two.sk_tiles, two.sk_first) == (3 + 8, True)
    pp = make_work_split(Decomposition.STREAM_K_PP, sk_waves=3, **kw)
    assert pp.sk_tiles == 3 + 16
    assert make_work_split(Decomposition.STREAM_K_PP, sk_waves=0, **kw).sk_tiles == 0
    assert make_work_split(Decomposition.STREAM_K_PP, sk_waves=7, **kw).sk_tiles == 27
    # the DP tiles come first for DP + 1 SK wave: CTA 0 runs tiles 0, 8 then its SK part
    assert [u[0] for u in work_units(one, 27, 8)[0]] == [0, 8, 16, 17]
    assert work_units(one, 27, 8)[0][2:] == [(16, 0, 8), (17, 0, 3)]


@pytest.mark.parametrize(
    ("kw", "msg"),
    [
        (dict(kind="splitk", splits=9), "split-K: SPLITS must be between 1 and k_iters=4 but got 9"),
        (dict(kind="splitk", splits=0), "split-K: SPLITS must be between 1 and k_iters=4 but got 0"),
        (dict(kind="skpp", sk_waves=8), "Stream-K++: SK_WAVES must be between 0 and 7 but got 8"),
        (dict(kind="dp", grid=99), "data-parallel: GRID must be between 1 and tiles=4 but got 99"),
        (dict(kind="bogus"), "decomposition must be one of 'dp', 'splitk'"),
        (dict(kind="dp", M=0), "work split: M must be a positive integer but got 0"),
        (dict(kind="streamk", grid=3), "streamk: GRID is derived from SMs"),
    ],
)
def test_validation_messages(kw, msg):
    args = dict(M=32, N=32, K=64, BM=16, BN=16, BK=16, sms=4)
    kind = kw.pop("kind")
    args.update(kw)
    with pytest.raises(TilecError, match=msg.replace("+", r"\+")):
        make_work_split(kind, **args)


@pytest.mark.parametrize("tiles_m", [1, 2, 3, 5, 8, 9, 17])
@pytest.mark.parametrize("tiles_n", [1, 2, 7])
@pytest.mark.parametrize("group_m", [1, 2, 3, 8])
def test_orders_are_bijections(tiles_m, tiles_n, group_m):
    for order in (row_major_order(tiles_m, tiles_n), grouped_order(tiles_m, tiles_n, group_m)):
        cells = [order.evaluate(t) for t in range(tiles_m * tiles_n)]
        assert sorted(cells) == [(m, n) for m in range(tiles_m) for n in range(tiles_n)]
    # grouped raster walks down a band of group_m rows before moving right
    g = grouped_order(tiles_m, tiles_n, group_m)
    assert [g.evaluate(t)[0] for t in range(min(group_m, tiles_m))] == list(range(min(group_m, tiles_m)))


def test_choose_decomposition_explains():
    split, why = choose_decomposition(512, 512, 65536, 128, 128, 64, 132)
    assert split.kind is Decomposition.SPLIT_K and 4 <= split.splits <= 16
    text = "\n".join(why)
    assert "tiles: 4 x 4 = 16" in text and "k_iters: 1024" in text and "chosen: split-K" in text
    # whole waves, deep K: data-parallel
    split, why = choose_decomposition(128 * 12, 128 * 11, 4096, 128, 128, 64, 132)
    assert split.kind is Decomposition.DATA_PARALLEL, why
    # 91 tiles on 132 SMs: the calibrated model keeps DP (measured 1.3x faster than Stream-K)
    split, why = choose_decomposition(1664, 1664, 8192, 128, 256, 64, 132)
    assert split.kind is Decomposition.DATA_PARALLEL, why
    # 5 deep tiles on 4 SMs: DP takes two waves, a Stream-K variant wins
    split, why = choose_decomposition(80, 16, 16 * 256, 16, 16, 16, 4)
    assert split.kind is not Decomposition.DATA_PARALLEL, why


def test_cost_model_waves():
    # 5 tiles on 4 SMs: DP needs two waves; Stream-K spreads 5 tiles' iterations over 4 CTAs
    kw = dict(M=80, N=16, K=16 * 32, BM=16, BN=16, BK=16, sms=4)
    dp = estimate_cost(make_work_split("dp", **kw), 5, 32, 4, 16, 16, 16)
    sk = estimate_cost(make_work_split("streamk", **kw), 5, 32, 4, 16, 16, 16)
    tail = estimate_cost(make_work_split("skpp", sk_waves=1, **kw), 5, 32, 4, 16, 16, 16)
    assert dp.total == 2 * (32 + 2)
    # whole-problem Stream-K pays the wide L2 penalty: 40 iterations at 1.8x each > DP
    assert sk.total == pytest.approx(40 * (1 + SK_L2_PENALTY_WIDE) + 2 * (2 + fixup_iters(16, 16, 16)))
    assert sk.total > dp.total
    # DP wave + the last tile over 4 CTAs: 34 + 8 iterations at 1.15x + one unit with fix-up
    assert tail.total < dp.total and tail.partial_units == 4
    assert tail.total == pytest.approx(34 + 8 * (1 + SK_L2_PENALTY) + 2 + fixup_iters(16, 16, 16))


def test_load_kind_and_plan():
    assert choose_load_kind(4095, 4100, DType.BF16) is LoadKind.POINTER  # 8200 B rows
    assert choose_load_kind(64, 4096, DType.FP16) is LoadKind.TMA
    assert choose_load_kind(64, 4, DType.FP32) is LoadKind.TMA
    p = simple_plan(100, 70, 50, 32, 32, 16, decomposition="streamk", sms=5,
                    fixup=Fixup.DETERMINISTIC, order="grouped", group_m=2)
    assert p.tiles == 12 and p.k_iters == 4 and p.work.sk_ctas == 5
    assert isinstance(p.order.tile_m, sympy.Expr)
    with pytest.raises(TilecError, match="BM must be a power of two"):
        simple_plan(10, 10, 10, 24, 16, 16)
    with pytest.raises(TilecError, match="order must be 'row' or 'grouped'"):
        simple_plan(10, 10, 10, 16, 16, 16, order="hilbert")
