"""Work decompositions: coverage oracle (every (tile, k-iter) exactly once), the split's printed
formulas against the units at every point, validation messages, tile orders, the cost model and
the heuristic."""

from __future__ import annotations

import itertools

import pytest
import sympy
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.plans import plan
from tilec.codegen.triton.printer import emit
from tilec.errors import TilecError, UnsupportedError
from tilec.proofs.evaluate import compile_int
from tilec.transforms.cost_model import (
    SK_L2_PENALTY,
    SK_L2_PENALTY_WIDE,
    estimate_cost,
    fixup_iters,
    simulate,
)
from tilec.transforms.choice import choose_decomposition
from tilec.transforms.decompose import make_work_split, work_units
from tilec.transforms.pipeline import choose_load_kind
from tilec.transforms.plan import (
    IT_BEGIN,
    IT_END,
    ITER,
    PID,
    TILE,
    UNIT,
    Decomposition,
    DType,
    Fixup,
    J,
    SIZE_M,
    SIZE_N,
    LoadKind,
    WorkSplit,
)

KINDS = [
    (Decomposition.DATA_PARALLEL, {}),
    (Decomposition.SPLIT_K, {"splits": 2}),
    (Decomposition.SPLIT_K, {"splits": 3}),
    (Decomposition.STREAM_K, {}),
    (Decomposition.DP_ONE_SK_WAVE, {}),
    (Decomposition.TWO_TILE_SK_DP, {}),
    *[(Decomposition.STREAM_K_PP, {"sk_waves": w}) for w in range(8)],
    (Decomposition.DP_FRONT_TAIL, {}),
]


def _check_cover(split: WorkSplit) -> None:
    """The postcondition: every (tile, k) exactly once, no empty unit, units in k-order per CTA."""
    tiles, k_iters = split.num_tiles, split.k_iters
    per_cta = work_units(split)
    assert len(per_cta) == split.grid
    seen: dict[tuple[int, int], int] = {}
    for cta, units in enumerate(per_cta):
        for t, kb, ke in units:
            assert 0 <= t < tiles and 0 <= kb < ke <= k_iters, (cta, t, kb, ke)
            for k in range(kb, ke):
                assert (t, k) not in seen, f"(tile {t}, k {k}) twice: CTAs {seen[(t, k)]}, {cta}"
                seen[(t, k)] = cta
    assert len(seen) == tiles * k_iters


def _fn(expr, *syms):
    """The formula as exact integer Python (what the printers print, evaluated)."""
    f = compile_int([sympy.sympify(expr)], list(syms))
    return lambda *v: int(f(*v)[0])


def _check_formulas(split: WorkSplit) -> None:
    """The split's formulas (printed by the backends) against the units at every point: which
    units a CTA runs, who contributes to a partial tile in K order, and distinct slots."""
    per_cta = work_units(split)
    k = split.k_iters
    if split.split_k:
        tile_of, part_of = (_fn(e, UNIT) for e in split.split_k_unit(UNIT))
        kb_of, ke_of = (_fn(e, PID) for e in split.split_k_range(PID))
        for pid, units in enumerate(per_cta):
            for u, unit in zip(range(pid, split.num_tiles * split.splits, split.grid), units,
                               strict=True):
                s = part_of(u)
                assert unit == (tile_of(u), kb_of(s), ke_of(s))
    if split.front_tail:  # the fronts' CTAs, then the tails' ranges and their owners
        dp, a, d = split.num_tiles - split.sk_tiles, split.ft_front, k - split.ft_front
        begin = _fn(split.ft_tail_begin(PID), PID)
        owner = _fn(split.ft_tail_owner(ITER), ITER)
        assert split.sk_tiles * d <= split.ft_tail_ctas * a  # no tail CTA outlasts a front
        for c in range(split.sk_tiles):
            assert per_cta[dp + c] == [(dp + c, 0, a)]
        for t in range(split.ft_tail_ctas):
            b, e = begin(t), begin(t + 1)
            assert all(owner(x) == t for x in range(b, e))
            assert sum(ke - kb for _, kb, ke in per_cta[dp + split.sk_tiles + t]) == e - b
    if split.stream_k and not split.front_tail:
        it_b, it_e = (_fn(e, PID) for e in split.sk_range(PID))
        first_of, end_of = (_fn(e, IT_BEGIN, IT_END) for e in split.sk_tiles_of(IT_BEGIN, IT_END))
        kb_of, ke_of = (_fn(e, TILE, IT_BEGIN, IT_END)
                        for e in split.sk_unit_range(TILE, IT_BEGIN, IT_END))
        owner = _fn(split.sk_owner(ITER), ITER)
        first_tile = _fn(split.sk_first_tile(PID), PID)
        for c in range(split.sk_ctas):
            b, e = it_b(c), it_e(c)
            sk = [(split.sk_start + lt, kb_of(lt, b, e), ke_of(lt, b, e))
                  for lt in range(first_of(b, e), end_of(b, e))]
            assert sk == [u for u in per_cta[c] if split.sk_start <= u[0] < split.sk_end]
            assert all(owner(i) == c for i in range(b, e))
            if e > b:
                assert first_tile(c) == first_of(b, e)
    # partials: contributors in K order, their slots distinct (the fix-up's reading order)
    contributors = _fn(split.contributors(TILE), TILE)
    slot = _fn(split.partial_slot(TILE, J), TILE, J)
    lo = split.sk_start if split.stream_k else 0
    slots: set[int] = set()
    for lt in range(split.partial_tiles):
        units = sorted((kb, ke, cta) for cta, us in enumerate(per_cta) for t, kb, ke in us
                       if t == lo + lt)
        assert len(units) == contributors(lt)
        assert units[0][0] == 0 and units[-1][1] == k
        assert all(a[1] == b[0] for a, b in itertools.pairwise(units))  # K order, contiguous
        if len(units) > 1:
            for j, (_, _, cta) in enumerate(units):
                sl = slot(lt, j)
                assert sl not in slots and sl < split.partial_slots
                if split.front_tail:
                    assert sl == lt * split.ft_slots + j
                else:
                    assert sl // (2 if split.stream_k else 1) == (cta if split.stream_k else
                                                                   lt * split.splits + j)
                slots.add(sl)


@pytest.mark.parametrize(("kind", "extra"), KINDS, ids=lambda x: str(x))
@pytest.mark.parametrize("sms", [1, 4, 6, 7])
def test_cover_small_domain(kind, extra, sms):
    for M, N, K in itertools.product([1, 16, 33, 64, 100, 161], [16, 50, 112], [1, 16, 40, 112]):
        BM = BN = BK = 16
        k_iters = -(-K // BK)
        if extra.get("splits", 1) > k_iters:
            continue
        split = make_work_split(kind, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms, **extra)
        assert (split.num_tiles, split.k_iters) == (-(-M // BM) * -(-N // BN), k_iters)
        _check_cover(split)
        if split.partial_tiles and M in (33, 161):
            _check_formulas(split)


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
    _check_cover(split)
    _check_formulas(split)
    if split.sk_tiles and not split.front_tail:
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
    assert [u[0] for u in work_units(one)[0]] == [0, 8, 16, 17]
    assert work_units(one)[0][2:] == [(16, 0, 8), (17, 0, 3)]
    assert (one.sk_start, one.sk_end, one.dp_range, one.sk_iters) == (16, 27, (0, 16), 88)


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


@pytest.mark.parametrize("group_m", [1, 3, 8])
@pytest.mark.parametrize("sms", [None, 4])
def test_orders_are_bijections_at_every_size(group_m, sms):
    """The orders lowered once from a row-major and a grouped-raster schedule (sizes symbols)
    cover the C tiles once at every size, not only at the size they were lowered at."""
    for order in ("row", "grouped"):
        o = plan(16 * 5, 16 * 7, 16, 16, 16, 16, order=order, group_m=group_m, sms=sms).order
        assert o.tile_m.free_symbols <= {o.index, SIZE_M, SIZE_N}
        for tiles_m in (1, 3, 5, 9, 17):
            for tiles_n in (1, 2, 7):
                for M, N in ((16 * tiles_m, 16 * tiles_n), (16 * tiles_m - 5, 16 * tiles_n - 15)):
                    at = o.at(M=M, N=N)
                    every = [(m, n) for m in range(tiles_m) for n in range(tiles_n)]
                    walked = int(at.concrete().num_tiles)
                    assert walked >= tiles_m * tiles_n
                    cells = list(at.alive_tiles().values())
                    assert sorted(cells) == every, (order, M, N)
                    assert not at.is_alive(walked) and not at.is_alive(-1)
                    if order == "grouped":  # walks down a band of group_m rows first
                        band = min(group_m, tiles_m)
                        assert [at.evaluate(t)[0] for t in range(band)] == list(range(band))


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
    dp = estimate_cost(make_work_split("dp", **kw), 4, 16, 16, 16)
    sk = estimate_cost(make_work_split("streamk", **kw), 4, 16, 16, 16)
    tail = estimate_cost(make_work_split("skpp", sk_waves=1, **kw), 4, 16, 16, 16)
    assert dp.total == 2 * (32 + 2)
    # whole-problem Stream-K pays the wide L2 penalty: 40 iterations at 1.8x each > DP; the last
    # CTA runs two partial units: one writes its partial (half a round trip), the other is its
    # tile's reducer (its own partial out, both contributors' read back: 1.5 round trips)
    fix = fixup_iters(16, 16, 16)
    assert sk.total == pytest.approx(40 * (1 + SK_L2_PENALTY_WIDE) + 2 * 2 + fix / 2 + 3 * fix / 2)
    assert sk.total > dp.total
    # DP wave + the last tile over 4 CTAs: 34 + 8 iterations at 1.5x + one unit; the CTA with
    # the tile's first K range sums all four partials
    assert tail.total < dp.total and tail.partial_units == 4
    assert tail.total == pytest.approx(34 + 8 * (1 + SK_L2_PENALTY) + 2 + fix / 2 * (1 + 4))
    reducer = [b for b in simulate(make_work_split("skpp", sk_waves=1, **kw), 4, 16, 16, 16).blocks
               if b.kind == "fixup" and b.end - b.start > fix / 2]
    assert [(b.tile, b.k_begin) for b in reducer] == [(4, 0)]


def test_load_kind_and_plan():
    assert choose_load_kind(4100, DType.BF16, (64, 64)) is LoadKind.POINTER  # 8200 B rows
    assert choose_load_kind(4096, DType.FP16, (64, 64)) is LoadKind.TMA
    assert choose_load_kind(4, DType.FP32, (64, 4)) is LoadKind.TMA
    assert choose_load_kind(4096, DType.FP16, (512, 64)) is LoadKind.POINTER  # box over 256
    p = plan(100, 70, 50, 32, 32, 16, decomposition="streamk", sms=5,
             fixup=Fixup.DETERMINISTIC, order="grouped", group_m=2)
    assert p.tiles == 12 and p.k_iters == 4 and p.work.sk_ctas == 5
    assert (p.work.num_tiles, p.work.k_iters) == (12, 4)
    assert isinstance(p.order.tile_m, sympy.Expr)
    with pytest.raises(UnsupportedError, match="BM must be a power of two"):
        emit(plan(100, 100, 64, 24, 16, 16))


def test_a_work_split_that_breaks_an_invariant_is_refused_once_for_every_printer() -> None:
    from tilec.errors import InternalError
    from tilec.transforms.plan import Decomposition, WorkSplit

    ok = WorkSplit(Decomposition.STREAM_K, grid=4, num_tiles=1, k_iters=4, sk_tiles=1, sk_ctas=4,
                   sk_first=True)
    assert [ok.sk_range(c) for c in range(4)] == [(c, c + 1) for c in range(4)]
    with pytest.raises(InternalError, match="4 Stream-K iterations over 5 CTAs"):
        WorkSplit(Decomposition.STREAM_K, grid=5, num_tiles=1, k_iters=4, sk_tiles=1, sk_ctas=5,
                  sk_first=True)
    with pytest.raises(InternalError, match="3 Stream-K tiles of 2"):
        WorkSplit(Decomposition.STREAM_K_PP, grid=8, num_tiles=2, k_iters=4, sk_tiles=3,
                  sk_ctas=4)
