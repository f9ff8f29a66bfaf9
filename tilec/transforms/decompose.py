"""Work decompositions of a GEMM (seed 001, the Stream-K study): numbers, work units, cost model.

A decomposition cuts the ``tiles x k_iters`` iteration space of C = A @ B into work units
``(tile, k_begin, k_end)`` executed by ``grid`` CTAs.  This module holds everything that is
backend-neutral about that cut:

* :func:`make_work_split` builds a validated :class:`~tilec.transforms.plan.WorkSplit`;
* :func:`work_units` lists, per CTA, the units in the exact order the generated kernel runs them
  (the oracle of the tests and the source of the timeline pictures);
* :func:`stream_k_contributors` says which CTAs add into a tile and where their partials live
  (the fix-up's K order);
* :func:`estimate_cost` / :func:`choose_decomposition` are the cost model and the heuristic, with
  a human-readable explanation;
* :func:`simple_plan` builds a whole :class:`~tilec.transforms.plan.KernelPlan` with a row-major
  or grouped-raster :class:`~tilec.transforms.plan.TileOrder` (sympy expressions of ``t``).

The Stream-K region is the contiguous range of linear tile indices ``[sk_start, sk_start +
sk_tiles)``; its ``sk_tiles * k_iters`` iterations are cut evenly over ``sk_ctas`` CTAs:
CTA ``c`` owns iterations ``[c * I // C, (c + 1) * I // C)``.  A CTA keeps at most two partial
tiles (its first and its last), so a workspace of ``2 * sk_ctas`` tile slots is enough.

Example::

    >>> ws = make_work_split(Decomposition.SPLIT_K, M=64, N=64, K=64, BM=32, BN=32, BK=16,
    ...                      sms=4, splits=2)
    >>> ws.grid, ws.splits
    (8, 2)
    >>> work_units(ws, tiles=4, k_iters=4)[:2]
    [[(0, 0, 2)], [(0, 2, 4)]]
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import sympy

from tilec.errors import TilecError
from tilec.ir.types import SK_WAVES_MAX
from tilec.transforms.plan import (
    Decomposition,
    DType,
    Fixup,
    InputPrecision,
    KernelPlan,
    LoadKind,
    OperandLoad,
    TileOrder,
    WorkSplit,
)

__all__ = [
    "SK_WAVES_MAX",
    "choose_decomposition",
    "choose_load_kind",
    "estimate_cost",
    "grouped_order",
    "make_work_split",
    "rank_decompositions",
    "row_major_order",
    "simple_plan",
    "sk_penalty",
    "sk_region",
    "stream_k_contributors",
    "work_units",
]


Unit = tuple[int, int, int]  # (linear tile index, k_begin, k_end), k in k-iterations


def _cdiv(a: int, b: int) -> int:
    return -(-a // b)


def _check_positive(**values: int) -> None:
    for name, v in values.items():
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise TilecError(f"work split: {name} must be a positive integer but got {v!r}")


def _as_decomposition(kind: Decomposition | str) -> Decomposition:
    if isinstance(kind, Decomposition):
        return kind
    try:
        return Decomposition(kind)
    except ValueError:
        names = ", ".join(repr(d.value) for d in Decomposition)
        raise TilecError(f"decomposition must be one of {names} but got {kind!r}") from None


# --------------------------------------------------------------------------------------------
# Work splits
# --------------------------------------------------------------------------------------------


def _stream_k_split(
    kind: Decomposition,
    tiles: int,
    k_iters: int,
    sms: int,
    sk_tiles: int,
    sk_first: bool,
    sk_waves: int,
    fixup: Fixup,
) -> WorkSplit:
    sk_ctas = min(sms, sk_tiles * k_iters) if sk_tiles else 0
    dp_tiles = tiles - sk_tiles
    grid = max(sk_ctas, min(sms, dp_tiles))
    return WorkSplit(
        kind,
        grid=grid,
        sk_tiles=sk_tiles,
        sk_ctas=sk_ctas,
        sk_first=sk_first,
        sk_waves=sk_waves,
        fixup=fixup,
    )


def make_work_split(
    kind: Decomposition | str,
    *,
    M: int,
    N: int,
    K: int,
    BM: int,
    BN: int,
    BK: int,
    sms: int,
    splits: int = 1,
    sk_waves: int = 1,
    fixup: Fixup = Fixup.ATOMIC,
    grid: int | None = None,
) -> WorkSplit:
    """The validated numbers of one decomposition of an M x N x K GEMM on ``sms`` SMs.

    ``grid`` (data-parallel and split-K only) makes the kernel persistent: CTA ``pid`` runs
    units ``pid, pid + grid, ...``; by default there is one CTA per unit.

    >>> make_work_split("dp_1sk", M=256, N=256, K=64, BM=32, BN=32, BK=16, sms=6).sk_tiles
    4
    >>> make_work_split("splitk", M=16, N=16, K=64, BM=16, BN=16, BK=16, sms=4, splits=9)
    Traceback (most recent call last):
    ...
    tilec.errors.TilecError: split-K: SPLITS must be between 1 and k_iters=4 but got 9
    """
    kind = _as_decomposition(kind)
    _check_positive(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms)
    if not isinstance(fixup, Fixup):
        raise TilecError(f"work split: fixup must be a Fixup but got {fixup!r}")
    tiles = _cdiv(M, BM) * _cdiv(N, BN)
    k_iters = _cdiv(K, BK)
    if grid is not None and kind not in (Decomposition.DATA_PARALLEL, Decomposition.SPLIT_K):
        raise TilecError(
            f"{kind.value}: GRID is derived from SMs for Stream-K decompositions; "
            f"pass sms={grid} instead of grid={grid}"
        )

    if kind is Decomposition.DATA_PARALLEL:
        g = tiles if grid is None else grid
        if not 1 <= g <= tiles:
            raise TilecError(f"data-parallel: GRID must be between 1 and tiles={tiles} but got {g}")
        return WorkSplit(kind, grid=g, fixup=fixup)

    if kind is Decomposition.SPLIT_K:
        if not isinstance(splits, int) or not 1 <= splits <= k_iters:
            raise TilecError(
                f"split-K: SPLITS must be between 1 and k_iters={k_iters} but got {splits}"
            )
        units = tiles * splits
        g = units if grid is None else grid
        if not 1 <= g <= units:
            raise TilecError(
                f"split-K: GRID must be between 1 and tiles*splits={units} but got {g}"
            )
        return WorkSplit(kind, grid=g, splits=splits, fixup=fixup)

    full, rem = divmod(tiles, sms)
    if kind is Decomposition.STREAM_K:
        return _stream_k_split(kind, tiles, k_iters, sms, tiles, True, 0, fixup)
    if kind is Decomposition.DP_ONE_SK_WAVE:
        # the partial last wave, plus one full wave when it is less than half a wave
        sk = rem + (sms if full >= 1 and 0 < rem < sms // 2 else 0)
        return _stream_k_split(kind, tiles, k_iters, sms, sk, False, 1, fixup)
    if kind is Decomposition.TWO_TILE_SK_DP:
        # each Stream-K CTA gets between one and two tiles of work; DP waves follow
        sk = (rem + (sms if full >= 1 else 0)) if rem else 0
        return _stream_k_split(kind, tiles, k_iters, sms, sk, True, 2, fixup)
    if kind is Decomposition.STREAM_K_PP:
        if not isinstance(sk_waves, int) or not 0 <= sk_waves <= SK_WAVES_MAX:
            raise TilecError(
                f"Stream-K++: SK_WAVES must be between 0 and {SK_WAVES_MAX} but got {sk_waves}"
            )
        sk = 0 if sk_waves == 0 else min(tiles, (rem or sms) + (sk_waves - 1) * sms)
        return _stream_k_split(kind, tiles, k_iters, sms, sk, False, sk_waves, fixup)
    raise AssertionError(kind)  # pragma: no cover


def sk_region(split: WorkSplit, tiles: int) -> tuple[int, int]:
    """``(sk_start, sk_end)``: the linear tile indices that are cut Stream-K style."""
    if split.kind in (Decomposition.DATA_PARALLEL, Decomposition.SPLIT_K):
        return (0, 0)
    if split.sk_first:
        return (0, split.sk_tiles)
    return (tiles - split.sk_tiles, tiles)


def _sk_range(c: int, total: int, ctas: int) -> tuple[int, int]:
    return (c * total // ctas, (c + 1) * total // ctas)


def _sk_owner(i: int, total: int, ctas: int) -> int:
    # largest c with c * total // ctas <= i
    return ((i + 1) * ctas - 1) // total


def stream_k_contributors(
    split: WorkSplit, k_iters: int, local_tile: int
) -> list[tuple[int, int, int, int]]:
    """CTAs adding into Stream-K tile ``local_tile`` (index inside the SK region), in K order.

    Returns ``(cta, slot, k_begin, k_end)``; ``slot`` is the workspace slot of the partial
    (``2 * cta`` for the CTA's first tile, ``2 * cta + 1`` for its last).
    """
    total = split.sk_tiles * k_iters
    lo = _sk_owner(local_tile * k_iters, total, split.sk_ctas)
    hi = _sk_owner(local_tile * k_iters + k_iters - 1, total, split.sk_ctas)
    out = []
    for c in range(lo, hi + 1):
        b, e = _sk_range(c, total, split.sk_ctas)
        first_tile = b // k_iters
        kb = max(b - local_tile * k_iters, 0)
        ke = min(e - local_tile * k_iters, k_iters)
        out.append((c, 2 * c + (0 if first_tile == local_tile else 1), kb, ke))
    return out


def work_units(
    plan_or_split: KernelPlan | WorkSplit,
    tiles: int | None = None,
    k_iters: int | None = None,
) -> list[list[Unit]]:
    """Per CTA, the ``(tile, k_begin, k_end)`` units in the order the kernel runs them.

    ``tile`` is the linear tile index ``t`` of the plan's TileOrder; with a plan, tiles the
    order pads in (not ``alive``) are left out, as the kernel skips them.

    >>> ws = make_work_split("streamk", M=32, N=16, K=48, BM=16, BN=16, BK=16, sms=3)
    >>> work_units(ws, tiles=2, k_iters=3)
    [[(0, 0, 2)], [(0, 2, 3), (1, 0, 1)], [(1, 1, 3)]]
    """
    alive = None
    if isinstance(plan_or_split, KernelPlan):
        plan = plan_or_split
        split = plan.work
        tiles = int(plan.order.num_tiles) if tiles is None else tiles
        k_iters = plan.k_iters if k_iters is None else k_iters
        if int(plan.order.num_tiles) > plan.tiles:
            alive = {
                t
                for t in range(tiles)
                if (lambda mn: mn[0] < plan.order.tiles_m and mn[1] < plan.order.tiles_n)(
                    plan.order.evaluate(t)
                )
            }
    else:
        split = plan_or_split
    if tiles is None or k_iters is None:
        raise TilecError("work_units: pass tiles and k_iters with a WorkSplit")

    per_cta: list[list[Unit]] = [[] for _ in range(split.grid)]
    if split.kind is Decomposition.DATA_PARALLEL:
        for pid in range(split.grid):
            per_cta[pid] = [(t, 0, k_iters) for t in range(pid, tiles, split.grid)]
    elif split.kind is Decomposition.SPLIT_K:
        s = split.splits
        for pid in range(split.grid):
            for u in range(pid, tiles * s, split.grid):
                t, part = divmod(u, s)
                per_cta[pid].append((t, part * k_iters // s, (part + 1) * k_iters // s))
    else:
        sk_start, sk_end = sk_region(split, tiles)
        dp_start, dp_end = (sk_end, tiles) if split.sk_first else (0, sk_start)
        total = split.sk_tiles * k_iters
        for pid in range(split.grid):
            dp = [(t, 0, k_iters) for t in range(dp_start + pid, dp_end, split.grid)]
            sk: list[Unit] = []
            if pid < split.sk_ctas:
                b, e = _sk_range(pid, total, split.sk_ctas)
                if e > b:
                    for lt in range(b // k_iters, (e - 1) // k_iters + 1):
                        kb = max(b - lt * k_iters, 0)
                        ke = min(e - lt * k_iters, k_iters)
                        sk.append((sk_start + lt, kb, ke))
            per_cta[pid] = sk + dp if split.sk_first else dp + sk
    if alive is not None:
        per_cta = [[u for u in units if u[0] in alive] for units in per_cta]
    return per_cta


# --------------------------------------------------------------------------------------------
# Cost model and heuristic
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Cost:
    """Modeled time of one split, in k-iteration units of one CTA (1 CTA per SM)."""

    total: float  # critical path: when the last SM finishes
    busy: float  # summed work of all CTAs
    partial_units: int
    units: int

    @property
    def utilisation(self) -> float:
        return self.busy / self.total if self.total else 1.0


UNIT_OVERHEAD = 2.0  # pipeline fill + epilogue of one unit, in k-iterations
# Stream-K iterations run at odd K offsets: worse L2 reuse (seed 001).  Calibrated on the H200
# (bench/results/triton_h200_2026-11-21.json, "previous"): when Stream-K is the whole problem
# (no DP tiles) or its region has more tiles than CTAs, every CTA streams its own tiles at its own
# K offset from the start and the operands stop being shared through L2: whole-grid Stream-K ran
# at 0.75x DP on 1664^2 x 8192 with 128x128 tiles (a Stream-K iteration ~2.0x a DP one) and at
# 0.77x with 128x256 tiles (~1.6x).  A partial last wave spread over every SM after DP waves is
# cheaper: DP + 1 SK wave on 8192^3 ran at 1.11x DP (the model without penalty says 1.02x).
SK_L2_PENALTY = 0.15  # Stream-K region after DP tiles, fewer tiles than Stream-K CTAs
SK_L2_PENALTY_WIDE = 0.8  # whole-problem Stream-K, or more Stream-K tiles than CTAs
FIXUP_SCALE = 2.0  # measured fix-ups (atomics / workspace round trip) cost ~2x their bytes


def sk_penalty(split: WorkSplit, tiles: int) -> float:
    """Extra cost of one Stream-K iteration (fraction of a DP iteration) for ``split``."""
    wide = split.sk_tiles >= tiles or split.sk_tiles >= split.sk_ctas
    return SK_L2_PENALTY_WIDE if wide else SK_L2_PENALTY


def fixup_iters(BM: int, BN: int, BK: int, dtype_bytes: int = 2) -> float:
    """One partial tile's fix-up (fp32 write + read back), in k-iterations of the same CTA."""
    return FIXUP_SCALE * 2 * (4 * BM * BN) / (dtype_bytes * BK * (BM + BN))


def estimate_cost(
    split: WorkSplit, tiles: int, k_iters: int, sms: int, BM: int, BN: int, BK: int
) -> Cost:
    """Simulate the units of ``split`` on ``sms`` SMs (CTAs start in pid order when one frees).

    >>> ws = make_work_split("dp", M=128, N=128, K=64, BM=64, BN=64, BK=16, sms=3)
    >>> estimate_cost(ws, 4, 4, 3, 64, 64, 16).total  # two waves of 4 + 2 iterations
    12.0
    """
    per_cta = work_units(split, tiles, k_iters)
    fix = fixup_iters(BM, BN, BK)
    sk_start, sk_end = sk_region(split, tiles)
    pen = sk_penalty(split, tiles) if sk_end > sk_start else 0.0
    cta_cost = []
    partial = 0
    for units in per_cta:
        c = 0.0
        for t, kb, ke in units:
            n = ke - kb
            c += n * (1 + (pen if sk_start <= t < sk_end else 0.0)) + UNIT_OVERHEAD
            if n != k_iters:
                partial += 1
                c += fix
        cta_cost.append(c)
    free = [0.0] * min(sms, len(cta_cost))
    heapq.heapify(free)
    end = 0.0
    for c in cta_cost:
        start = heapq.heappop(free)
        end = max(end, start + c)
        heapq.heappush(free, start + c)
    n_units = sum(len(u) for u in per_cta)
    return Cost(total=end, busy=sum(cta_cost), partial_units=partial, units=n_units)


def _candidates(
    M: int, N: int, K: int, BM: int, BN: int, BK: int, sms: int, fixup: Fixup
) -> list[tuple[str, WorkSplit]]:
    kw = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms, fixup=fixup)
    k_iters = _cdiv(K, BK)
    tiles = _cdiv(M, BM) * _cdiv(N, BN)
    out = [("data-parallel", make_work_split(Decomposition.DATA_PARALLEL, **kw))]  # type: ignore[arg-type]
    if tiles < sms:
        for s in range(2, min(k_iters, 32) + 1):
            if tiles * s <= 2 * sms:
                out.append(
                    (f"split-K S={s}", make_work_split(Decomposition.SPLIT_K, splits=s, **kw))  # type: ignore[arg-type]
                )
    if tiles % sms:
        seen: set[tuple[int, bool]] = set()  # (sk_tiles, region at the start)

        def add(name: str, split: WorkSplit) -> None:
            # hybrids that cut the same Stream-K region run the same units: keep the first
            key = (split.sk_tiles, split.sk_first or split.sk_tiles == tiles)
            if key not in seen:
                seen.add(key)
                out.append((name, split))

        if tiles < sms:
            add("Stream-K", make_work_split(Decomposition.STREAM_K, **kw))  # type: ignore[arg-type]
        add("DP + 1 Stream-K wave", make_work_split(Decomposition.DP_ONE_SK_WAVE, **kw))  # type: ignore[arg-type]
        if tiles > sms:  # only the partial last wave in Stream-K, however small it is
            add("DP + Stream-K on the last partial wave",
                make_work_split(Decomposition.STREAM_K_PP, sk_waves=1, **kw))  # type: ignore[arg-type]
        add("two-tile Stream-K + DP", make_work_split(Decomposition.TWO_TILE_SK_DP, **kw))  # type: ignore[arg-type]
        for w in (2, 3):
            if w * sms < tiles:
                add(f"Stream-K++ {w} waves",
                    make_work_split(Decomposition.STREAM_K_PP, sk_waves=w, **kw))  # type: ignore[arg-type]
    return out


def rank_decompositions(
    M: int, N: int, K: int, BM: int, BN: int, BK: int, sms: int, *,
    fixup: Fixup = Fixup.DETERMINISTIC,
) -> list[tuple[float, int, str, WorkSplit, Cost]]:  # fmt: skip
    """Every candidate decomposition with its modeled cost, fastest first (ties: DP first).

    >>> [name for _, _, name, _, _ in rank_decompositions(512, 512, 65536, 128, 128, 64, 132)][:2]
    ['split-K S=8', 'split-K S=16']
    """
    _check_positive(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms)
    tiles, k_iters = _cdiv(M, BM) * _cdiv(N, BN), _cdiv(K, BK)
    scored: list[Any] = []
    for name, split in _candidates(M, N, K, BM, BN, BK, sms, fixup):
        cost = estimate_cost(split, tiles, k_iters, sms, BM, BN, BK)
        scored.append((cost.total, len(scored), name, split, cost))
    return sorted(scored, key=lambda x: (x[0], x[1]))


def choose_decomposition(
    M: int,
    N: int,
    K: int,
    BM: int,
    BN: int,
    BK: int,
    sms: int,
    *,
    fixup: Fixup = Fixup.DETERMINISTIC,
) -> tuple[WorkSplit, list[str]]:
    """Pick the decomposition with the least modeled time; say why, with the numbers.

    >>> split, why = choose_decomposition(512, 512, 65536, 128, 128, 64, 132)
    >>> split.kind.value, split.splits
    ('splitk', 8)
    >>> why[0]
    'tiles: 4 x 4 = 16 of 128x128; k_iters: 1024 of BK=64; SMs: 132'
    """
    _check_positive(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms)
    tm, tn, k_iters = _cdiv(M, BM), _cdiv(N, BN), _cdiv(K, BK)
    tiles = tm * tn
    reasons = [f"tiles: {tm} x {tn} = {tiles} of {BM}x{BN}; k_iters: {k_iters} of BK={BK}; SMs: {sms}"]
    full, rem = divmod(tiles, sms)
    reasons.append(
        f"data-parallel waves: {tiles / sms:.2f} ({full} full, last wave {rem}/{sms} SMs busy"
        f" = {100 * (rem or sms) / sms:.0f}%)"
    )
    reasons.append(
        f"model: a unit costs its k-iterations + {UNIT_OVERHEAD:g} (fill/epilogue); a partial tile"
        f" adds {fixup_iters(BM, BN, BK):.2f} (fp32 fix-up); Stream-K iterations cost"
        f" +{100 * SK_L2_PENALTY:.0f}% (L2 reuse), +{100 * SK_L2_PENALTY_WIDE:.0f}% when"
        f" Stream-K is the whole problem or has more tiles than CTAs"
    )
    scored = rank_decompositions(M, N, K, BM, BN, BK, sms, fixup=fixup)
    best = scored[0]
    dp_total = next(total for total, _, _, split, _ in scored
                    if split.kind is Decomposition.DATA_PARALLEL)
    for total, _, name, _split, cost in scored[:6]:
        reasons.append(
            f"  {name}: critical path {total:.1f} iters ({dp_total / total:.2f}x DP),"
            f" {cost.units} units, {cost.partial_units} partial, utilisation"
            f" {100 * cost.utilisation / sms:.0f}%"
        )
    _, _, name, split, _ = best
    if split.kind is Decomposition.DATA_PARALLEL:
        reasons.append("chosen: data-parallel (no fix-up needed)")
    else:
        reasons.append(
            f"chosen: {name}, {dp_total / best[0]:.2f}x faster than data-parallel by the model;"
            f" fix-up {split.fixup.value}"
        )
    return split, reasons


# --------------------------------------------------------------------------------------------
# Tile orders and plans
# --------------------------------------------------------------------------------------------

T = sympy.Symbol("t", integer=True, nonnegative=True)


def row_major_order(tiles_m: int, tiles_n: int, t: sympy.Symbol = T) -> TileOrder:
    """``t -> (t // tiles_n, t % tiles_n)``."""
    return TileOrder(
        t,
        tile_m=sympy.floor(t / tiles_n),
        tile_n=sympy.Mod(t, tiles_n),
        num_tiles=sympy.Integer(tiles_m * tiles_n),
        tiles_m=tiles_m,
        tiles_n=tiles_n,
        description="row-major",
    )


def grouped_order(tiles_m: int, tiles_n: int, group_m: int, t: sympy.Symbol = T) -> TileOrder:
    """Grouped raster (Triton tutorial): column-major inside bands of ``group_m`` tile rows.

    The last band may be shorter (``tiles_m % group_m`` rows): a Piecewise keeps every divisor a
    positive constant.

    >>> o = grouped_order(3, 2, 2)
    >>> [o.evaluate(i) for i in range(6)]
    [(0, 0), (1, 0), (0, 1), (1, 1), (2, 0), (2, 1)]
    """
    if group_m < 1:
        raise TilecError(f"grouped raster: GROUP_M must be a positive integer but got {group_m}")
    g = min(group_m, tiles_m)
    band = g * tiles_n
    full_bands, last = divmod(tiles_m, g)
    in_band = sympy.Mod(t, band)
    tile_m = sympy.floor(t / band) * g + sympy.Mod(in_band, g)
    tile_n = sympy.floor(in_band / g)
    if last:
        r = t - full_bands * band
        last_m = full_bands * g + sympy.Mod(r, last)
        last_n = sympy.floor(r / last)
        cond = sympy.StrictLessThan(t, full_bands * band)
        tile_m = sympy.Piecewise((tile_m, cond), (last_m, True))
        tile_n = sympy.Piecewise((tile_n, cond), (last_n, True))
    return TileOrder(
        t,
        tile_m=tile_m,
        tile_n=tile_n,
        num_tiles=sympy.Integer(tiles_m * tiles_n),
        tiles_m=tiles_m,
        tiles_n=tiles_n,
        description=f"grouped raster, GROUP_M={group_m}",
    )


def choose_load_kind(rows: int, cols: int, dtype: DType, box: Sequence[int] = ()) -> LoadKind:
    """TMA when the row stride is 16-byte aligned (and the box fits TMA's limits), else POINTER.

    >>> choose_load_kind(4095, 4100, DType.BF16), choose_load_kind(64, 4096, DType.BF16)
    (<LoadKind.POINTER: 'pointer'>, <LoadKind.TMA: 'tma'>)
    """
    del rows
    if (cols * dtype.nbytes) % 16:
        return LoadKind.POINTER
    if any(b > 256 for b in box) or (box and box[-1] * dtype.nbytes < 16):
        return LoadKind.POINTER
    return LoadKind.TMA


def simple_plan(
    M: int,
    N: int,
    K: int,
    BM: int,
    BN: int,
    BK: int,
    *,
    dtype: DType = DType.FP16,
    decomposition: Decomposition | str = Decomposition.DATA_PARALLEL,
    sms: int = 132,
    splits: int = 1,
    sk_waves: int = 1,
    fixup: Fixup = Fixup.ATOMIC,
    order: str = "row",
    group_m: int = 8,
    load: LoadKind | None = None,
    b_transposed: bool = False,
    input_precision: InputPrecision = InputPrecision.IEEE,
    num_warps: int = 4,
    num_stages: int = 3,
    grid: int | None = None,
    work: WorkSplit | None = None,
    name: str | None = None,
) -> KernelPlan:
    """A KernelPlan with a row-major or grouped-raster order, for tests, benches and examples.

    ``load=None`` picks TMA or POINTER per operand with :func:`choose_load_kind`; ``work``
    overrides the split built from ``decomposition``/``splits``/``sk_waves``/``fixup``.

    >>> p = simple_plan(100, 70, 50, 32, 32, 16, decomposition="splitk", splits=2, sms=4)
    >>> p.tiles, p.k_iters, p.work.grid
    (12, 4, 24)
    """
    _check_positive(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms)
    for name_, v in (("BM", BM), ("BN", BN), ("BK", BK)):
        if v < 16 or v & (v - 1):
            raise TilecError(f"plan: {name_} must be a power of two >= 16 but got {v}")
    tm, tn = _cdiv(M, BM), _cdiv(N, BN)
    if order == "row":
        tile_order = row_major_order(tm, tn)
    elif order == "grouped":
        tile_order = grouped_order(tm, tn, group_m)
    else:
        raise TilecError(f"plan: order must be 'row' or 'grouped' but got {order!r}")
    if work is None:
        work = make_work_split(
            decomposition,
            M=M,
            N=N,
            K=K,
            BM=BM,
            BN=BN,
            BK=BK,
            sms=sms,
            splits=splits,
            sk_waves=sk_waves,
            fixup=fixup,
            grid=grid,
        )
    a_box = (BM, BK)
    b_box = (BN, BK) if b_transposed else (BK, BN)
    a_kind = load or choose_load_kind(M, K, dtype, a_box)
    b_kind = load or (
        choose_load_kind(N, K, dtype, b_box) if b_transposed else choose_load_kind(K, N, dtype, b_box)
    )
    kind_name = work.kind.value + (f"{work.splits}" if work.kind is Decomposition.SPLIT_K else "")
    return KernelPlan(
        name=name or f"gemm_{M}x{N}x{K}_{kind_name}",
        M=M,
        N=N,
        K=K,
        BM=BM,
        BN=BN,
        BK=BK,
        dtype=dtype,
        order=tile_order,
        work=work,
        a=OperandLoad("A", a_kind, a_box),
        b=OperandLoad("B", b_kind, b_box, transposed=b_transposed),
        input_precision=input_precision,
        num_warps=num_warps,
        num_stages=num_stages,
        b_transposed=b_transposed,
    )
