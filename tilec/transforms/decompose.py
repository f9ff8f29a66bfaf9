"""Work decompositions of a GEMM (seed 001, the Stream-K study): their numbers, how they follow the
problem size, and their work units.

A decomposition cuts the ``tiles x k_iters`` iteration space of C = A @ B into work units
``(tile, k_begin, k_end)`` executed by ``grid`` CTAs.  This module holds what is backend-neutral
about that cut:

* :func:`make_work_split` builds a validated :class:`~tilec.transforms.worksplit.WorkSplit` (which
  carries the index formulas the printers print);
* :func:`work_units` lists, per CTA, the units in the exact order the generated kernel runs them
  (the oracle of the tests and the input of the cost model);
* :class:`SplitRule` (the plan's ``split``) makes the split at any launch (:func:`split_at`) and
  gives its numbers as expressions of M, N, K (:func:`split_forms`).

The choice among decompositions is :mod:`tilec.transforms.choice`.

The Stream-K region is the contiguous range of linear tile indices ``[sk_start, sk_end)``; its
``sk_iters = sk_tiles * k_iters`` iterations are cut evenly over ``sk_ctas`` CTAs: CTA ``c``
owns iterations ``[c * I // C, (c + 1) * I // C)``.  A CTA keeps at most two partial tiles (its
first and its last), so a workspace of ``2 * sk_ctas`` tile slots is enough.

Example::

    >>> ws = make_work_split(Decomposition.SPLIT_K, M=64, N=64, K=64, BM=32, BN=32, BK=16,
    ...                      sms=4, splits=2)
    >>> ws.grid, ws.splits, ws.num_tiles, ws.k_iters
    (8, 2, 4, 4)
    >>> work_units(ws)[:2]
    [[(0, 0, 2)], [(0, 2, 4)]]
"""

from __future__ import annotations

from collections.abc import Container
from dataclasses import dataclass, replace
from typing import Any

import sympy

from tilec.errors import TilecError
from tilec.ir import ceil_div
from tilec.ir.types import SK_WAVES_MAX, Decomposition, Fixup
from tilec.transforms.symbols import SIZE_K, SIZE_M, SIZE_N
from tilec.transforms.worksplit import WorkSplit

__all__ = [
    "SK_WAVES_MAX",
    "SplitRule",
    "Unit",
    "make_work_split",
    "over_clusters",
    "split_at",
    "split_forms",
    "work_units",
]


Unit = tuple[int, int, int]  # (linear tile index, k_begin, k_end), k in k-iterations


def check_positive(**values: int) -> None:
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


class _IntOps:
    """The split rules' arithmetic on Python ints (:func:`make_work_split`)."""

    min, max = staticmethod(min), staticmethod(max)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        return a if cond else b


class _SymOps:
    """The same rules over sympy expressions of M, N, K (:func:`split_forms`)."""

    min, max = staticmethod(sympy.Min), staticmethod(sympy.Max)

    @staticmethod
    def where(cond: Any, a: Any, b: Any) -> Any:
        cond = sympy.sympify(cond)
        if cond in (sympy.true, sympy.false):
            return a if cond is sympy.true else b
        return sympy.Piecewise((a, cond), (b, True))


def _sk_region(kind: Decomposition, tiles: Any, sms: int, sk_waves: int, ops: Any) -> Any:
    """Stream-K tiles of a family member (the rule, once, for ints and for expressions)."""
    full, rem = tiles // sms, tiles % sms
    if kind is Decomposition.STREAM_K:
        return tiles
    if kind is Decomposition.DP_ONE_SK_WAVE:
        # the partial last wave, plus one full wave when it is less than half a wave
        return rem + ops.where((full >= 1) & (rem > 0) & (rem < sms // 2), sms, 0)
    if kind is Decomposition.TWO_TILE_SK_DP:
        # each Stream-K CTA gets between one and two tiles of work; DP waves follow
        return ops.where(rem > 0, rem + ops.where(full >= 1, sms, 0), 0)
    assert kind is Decomposition.STREAM_K_PP, kind
    if sk_waves == 0:
        return 0
    return ops.min(tiles, ops.where(rem > 0, rem, sms) + (sk_waves - 1) * sms)


def _sk_numbers(tiles: Any, k_iters: Any, sms: int, sk_tiles: Any, ops: Any) -> tuple[Any, Any]:
    """(sk_ctas, grid) of a Stream-K region of ``sk_tiles`` tiles (0 CTAs when it is empty)."""
    sk_ctas = ops.min(sms, sk_tiles * k_iters)
    return sk_ctas, ops.max(sk_ctas, ops.min(sms, tiles - sk_tiles))


def _stream_k_split(
    kind: Decomposition,
    tiles: int,
    num_tiles: int,
    k_iters: int,
    sms: int,
    sk_tiles: int,
    sk_first: bool,
    sk_waves: int,
    fixup: Fixup,
) -> WorkSplit:
    sk_ctas, grid = _sk_numbers(tiles, k_iters, sms, sk_tiles, _IntOps)
    return WorkSplit(kind, grid=grid, sk_tiles=sk_tiles, sk_ctas=sk_ctas, sk_first=sk_first,
                     sk_waves=sk_waves, fixup=fixup, num_tiles=num_tiles, k_iters=k_iters)


SK_FIRST = frozenset({Decomposition.STREAM_K, Decomposition.TWO_TILE_SK_DP})


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
    num_tiles: int | None = None,
) -> WorkSplit:
    """The validated numbers of one decomposition of an M x N x K GEMM on ``sms`` SMs.

    ``grid`` (data-parallel and split-K only) makes the kernel persistent: CTA ``pid`` runs
    units ``pid, pid + grid, ...``; by default there is one CTA per unit. ``num_tiles``: the
    linear tile indices the tile order walks, when it pads past the ``tiles`` C tiles (whole
    cluster groups, whole persistent rounds); the padded indices are skipped by the kernel.

    >>> make_work_split("dp_1sk", M=256, N=256, K=64, BM=32, BN=32, BK=16, sms=6).sk_tiles
    4
    >>> make_work_split("splitk", M=16, N=16, K=64, BM=16, BN=16, BK=16, sms=4, splits=9)
    Traceback (most recent call last):
    ...
    tilec.errors.TilecError: split-K: SPLITS must be between 1 and k_iters=4 but got 9
    """
    kind = _as_decomposition(kind)
    check_positive(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms)
    if not isinstance(fixup, Fixup):
        raise TilecError(f"work split: fixup must be a Fixup but got {fixup!r}")
    tiles = ceil_div(M, BM) * ceil_div(N, BN)
    k_iters = ceil_div(K, BK)
    n = tiles if num_tiles is None else num_tiles
    if n < tiles:
        raise TilecError(f"work split: num_tiles={n} walks fewer indices than the {tiles} tiles")
    if grid is not None and kind not in (Decomposition.DATA_PARALLEL, Decomposition.SPLIT_K):
        raise TilecError(
            f"{kind.value}: GRID is derived from SMs for Stream-K decompositions; "
            f"pass sms={grid} instead of grid={grid}"
        )

    if kind is Decomposition.DATA_PARALLEL:
        g = n if grid is None else grid
        if not 1 <= g <= n:
            raise TilecError(f"data-parallel: GRID must be between 1 and tiles={n} but got {g}")
        return WorkSplit(kind, grid=g, fixup=fixup, num_tiles=n, k_iters=k_iters)

    if kind is Decomposition.SPLIT_K:
        if not isinstance(splits, int) or not 1 <= splits <= k_iters:
            raise TilecError(
                f"split-K: SPLITS must be between 1 and k_iters={k_iters} but got {splits}"
            )
        units = n * splits
        g = units if grid is None else grid
        if not 1 <= g <= units:
            raise TilecError(
                f"split-K: GRID must be between 1 and tiles*splits={units} but got {g}"
            )
        return WorkSplit(kind, grid=g, splits=splits, fixup=fixup, num_tiles=n,
                         k_iters=k_iters)

    full, rem = divmod(tiles, sms)
    if kind in (Decomposition.STREAM_K, Decomposition.DP_ONE_SK_WAVE,
                Decomposition.TWO_TILE_SK_DP):
        sk = _sk_region(kind, tiles, sms, 1, _IntOps)
        return _stream_k_split(kind, tiles, n, k_iters, sms, sk, kind in SK_FIRST,
                               2 if kind is Decomposition.TWO_TILE_SK_DP else
                               (1 if kind is Decomposition.DP_ONE_SK_WAVE else 0), fixup)
    if kind is Decomposition.DP_FRONT_TAIL:
        # the partial last wave's tiles, when cutting them leaves tails (A < k_iters);
        # one CTA per data-parallel tile, then the wave's `sms` CTAs
        # (every tail CTA gets a tail iteration: W - T <= T * (k_iters - A))
        front = ceil_div(rem * k_iters, sms) if rem else k_iters
        sk = rem if rem and sms - rem <= rem * (k_iters - front) else 0
        return WorkSplit(kind, grid=tiles - sk + (sms if sk else 0), sk_tiles=sk,
                         sk_ctas=sms if sk else 0, fixup=fixup, num_tiles=n, k_iters=k_iters)
    if kind is Decomposition.STREAM_K_PP:
        if not isinstance(sk_waves, int) or not 0 <= sk_waves <= SK_WAVES_MAX:
            raise TilecError(
                f"Stream-K++: SK_WAVES must be between 0 and {SK_WAVES_MAX} but got {sk_waves}"
            )
        sk = _sk_region(kind, tiles, sms, sk_waves, _IntOps)
        return _stream_k_split(kind, tiles, n, k_iters, sms, sk, False, sk_waves, fixup)
    raise AssertionError(kind)  # pragma: no cover


def over_clusters(work: WorkSplit, sms: int, cluster: int) -> WorkSplit:
    """The same decomposition over groups of ``cluster`` consecutive linear tiles and clusters
    of CTAs (CUDA), so every CTA of a cluster runs one K range: data-parallel rounds its grid up
    to whole clusters (the extra CTAs' tiles are past the walk: dead); the others cut
    ``ceil(num_tiles / cluster)`` one-tile groups over ``sms // cluster`` clusters.

    >>> w = make_work_split("streamk", M=96, N=16, K=64, BM=16, BN=16, BK=16, sms=4)
    >>> g = over_clusters(w, 4, 2)
    >>> (g.num_tiles, g.sk_ctas, g.grid, g.group)
    (3, 2, 4, 2)
    """
    if cluster == 1:
        return work
    if work.kind is Decomposition.DATA_PARALLEL:
        return replace(work, grid=ceil_div(work.grid, cluster) * cluster)
    groups = ceil_div(work.num_tiles, cluster)
    # a split of `groups` one-tile rows over the clusters: the same rule, counted in groups
    g = make_work_split(work.kind, M=groups, N=1, K=work.k_iters, BM=1, BN=1, BK=1,
                        sms=max(sms // cluster, 1), splits=work.splits,
                        sk_waves=work.sk_waves if work.kind is Decomposition.STREAM_K_PP else 1,
                        fixup=work.fixup)
    return WorkSplit(g.kind, grid=g.grid * cluster, splits=g.splits, sk_tiles=g.sk_tiles,
                     sk_ctas=g.sk_ctas, sk_first=g.sk_first, sk_waves=g.sk_waves,
                     fixup=g.fixup, group=cluster, num_tiles=g.num_tiles, k_iters=g.k_iters)


@dataclass(frozen=True)
class SplitRule:
    """How the work split follows the problem size: ``plan.work`` is this rule at the reference
    launch; :meth:`at` makes it at any other (a launcher, per call), :meth:`forms` gives its
    numbers as expressions of M, N, K (a printer prints them).

    ``kind``, ``splits``, ``sk_waves``, ``fixup``: the schedule's choice (``auto``: the cost
    model's choice at the reference launch; split-K parts are capped by k_iters at run time);
    ``ctas``: the persistent grid's CTAs (0: one CTA per unit); ``sms``: the CTAs a Stream-K
    region spreads over; ``group``: CTAs per cluster (CUDA: the split is made over groups);
    ``num_tiles``: the order's linear indices walked, an expression of M and N.
    """

    kind: Decomposition
    ctas: int
    sms: int
    BM: int
    BN: int
    BK: int
    num_tiles: sympy.Expr
    splits: int = 1
    sk_waves: int = 1
    fixup: Fixup = Fixup.ATOMIC
    group: int = 1

    def at(self, M: int, N: int, K: int) -> WorkSplit:
        """:func:`split_at`."""
        return split_at(self, M, N, K)

    def forms(self) -> dict[str, sympy.Expr]:
        """:func:`split_forms`."""
        return split_forms(self)


def split_at(rule: SplitRule, M: int, N: int, K: int) -> WorkSplit:
    """The work split of ``rule`` at one launch (M, N, K >= 1): what the plan's ``work`` is at
    its reference launch, made at any other (a launcher calls it per call, or caches it by
    shape).

    >>> tiles = sympy.ceiling(SIZE_M / 16) * sympy.ceiling(SIZE_N / 16)
    >>> rule = SplitRule(Decomposition.DP_ONE_SK_WAVE, ctas=4, sms=4, BM=16, BN=16, BK=16,
    ...                  num_tiles=tiles)
    >>> w = split_at(rule, 80, 16, 64)
    >>> (w.num_tiles, w.sk_tiles, w.sk_ctas, w.grid)
    (5, 5, 4, 4)
    """
    if min(M, N, K) < 1:
        raise TilecError(f"work split: M, N, K must be positive but got {M}, {N}, {K} (a "
                         f"launcher returns before splitting an empty problem)")
    n = int(sympy.sympify(rule.num_tiles).xreplace({SIZE_M: M, SIZE_N: N}))
    kw = dict(M=M, N=N, K=K, BM=rule.BM, BN=rule.BN, BK=rule.BK, fixup=rule.fixup, num_tiles=n)
    kind, k_iters = rule.kind, ceil_div(K, rule.BK)
    if kind is Decomposition.DATA_PARALLEL:
        work = make_work_split(kind, sms=rule.sms, grid=min(rule.ctas, n) if rule.ctas else n,
                               **kw)  # type: ignore[arg-type]
    elif kind is Decomposition.SPLIT_K:
        splits = min(rule.splits, k_iters)
        units = n * splits
        grid = min(rule.ctas, units) if rule.ctas else units
        work = make_work_split(kind, sms=rule.sms, splits=splits, grid=grid,
                               **kw)  # type: ignore[arg-type]
    else:
        work = make_work_split(kind, sms=rule.sms, sk_waves=rule.sk_waves,
                               **kw)  # type: ignore[arg-type]
    return over_clusters(work, rule.sms, rule.group)


def split_forms(rule: SplitRule) -> dict[str, sympy.Expr]:
    """The numbers of :func:`split_at` as sympy expressions of the sizes ``SIZE_M``,
    ``SIZE_N``, ``SIZE_K`` (M, N, K >= 1): ``grid``, ``num_tiles`` (linear indices, or groups
    with clusters), ``k_iters``, ``splits``, ``sk_tiles``, ``sk_ctas`` and ``sk_start`` (the
    Stream-K region's first index). A printer prints them into the launcher; the tests check
    them against :func:`split_at` at many sizes. Front/tail (SIMT) has no forms.

    >>> tiles = sympy.ceiling(SIZE_M / 16) * sympy.ceiling(SIZE_N / 16)
    >>> f = split_forms(SplitRule(Decomposition.STREAM_K, ctas=4, sms=4, BM=16, BN=16, BK=16,
    ...                           num_tiles=tiles))
    >>> f["sk_ctas"]
    Min(4, ceiling(K/16)*ceiling(M/16)*ceiling(N/16))
    """
    kind, ops = rule.kind, _SymOps
    if kind is Decomposition.DP_FRONT_TAIL:
        raise TilecError("work split: front/tail (dp_ft) numbers have no closed forms; "
                         "use split_at per launch")
    n = sympy.sympify(rule.num_tiles)
    tiles = ceil_div(SIZE_M, rule.BM) * ceil_div(SIZE_N, rule.BN)
    k_iters = ceil_div(SIZE_K, rule.BK)
    zero = sympy.Integer(0)
    out: dict[str, sympy.Expr] = {"k_iters": k_iters, "splits": sympy.Integer(1),
                                  "sk_tiles": zero, "sk_ctas": zero, "sk_start": zero}
    g = rule.group
    if kind is Decomposition.DATA_PARALLEL:
        grid = ops.min(rule.ctas, n) if rule.ctas else n
        if g > 1:
            grid = ceil_div(grid, g) * g
        out.update(grid=grid, num_tiles=n)
        return out
    units_n = ceil_div(n, g) if g > 1 else n
    if kind is Decomposition.SPLIT_K:
        splits = ops.min(rule.splits, k_iters)
        units = units_n * splits
        if g > 1:  # one cluster per (group, part)
            grid = units * g
        else:
            grid = ops.min(rule.ctas, units) if rule.ctas else units
        out.update(grid=grid, num_tiles=units_n, splits=splits)
        return out
    sms = max(rule.sms // g, 1) if g > 1 else rule.sms
    real = units_n if g > 1 else tiles  # groups are the tiles of a cluster split
    sk = sympy.sympify(_sk_region(kind, real, sms, rule.sk_waves, ops))
    sk_ctas, grid = _sk_numbers(real, k_iters, sms, sk, ops)
    out.update(grid=grid * g, num_tiles=units_n, sk_tiles=sk, sk_ctas=sk_ctas,
               sk_start=zero if kind in SK_FIRST else units_n - sk)
    return out


def work_units(split: WorkSplit, alive: Container[int] | None = None) -> list[list[Unit]]:
    """Per CTA, the ``(tile, k_begin, k_end)`` units in the order the kernel runs them.

    ``tile`` is the linear tile index ``t`` of the plan's TileOrder; with ``alive`` (the order's
    :meth:`~tilec.transforms.plan.TileOrder.alive_tiles`), the indices the order pads in are left
    out, as the kernel skips them.  Plain integer arithmetic: the oracle of the split's formulas.

    >>> ws = make_work_split("streamk", M=32, N=16, K=48, BM=16, BN=16, BK=16, sms=3)
    >>> work_units(ws)
    [[(0, 0, 2)], [(0, 2, 3), (1, 0, 1)], [(1, 1, 3)]]
    """
    tiles, k_iters = split.num_tiles, split.k_iters
    per_cta: list[list[Unit]] = [[] for _ in range(split.grid)]
    if split.kind is Decomposition.DATA_PARALLEL:
        for pid in range(split.grid):
            per_cta[pid] = [(t, 0, k_iters) for t in range(pid, tiles, split.grid)]
    elif split.kind is Decomposition.DP_FRONT_TAIL:
        dp = split.num_tiles - split.sk_tiles
        a = split.ft_front if split.front_tail else k_iters
        d = k_iters - a
        for pid in range(split.grid):
            c = pid - dp
            if c < 0:
                per_cta[pid] = [(pid, 0, k_iters)]
            elif c < split.sk_tiles:
                per_cta[pid] = [(dp + c, 0, a)]
            else:
                t, L, W = c - split.sk_tiles, split.ft_tail_iters, split.ft_tail_ctas
                b, e = t * L // W, (t + 1) * L // W
                for f in range(b // d, (e - 1) // d + 1 if e > b else 0):
                    per_cta[pid].append((dp + f, a + max(b - f * d, 0), a + min(e - f * d, d)))
    elif split.kind is Decomposition.SPLIT_K:
        s = split.splits
        for pid in range(split.grid):
            for u in range(pid, tiles * s, split.grid):
                t, part = divmod(u, s)
                per_cta[pid].append((t, part * k_iters // s, (part + 1) * k_iters // s))
    else:
        sk_start = split.sk_start
        dp_start, dp_end = split.dp_range
        total, ctas = split.sk_iters, split.sk_ctas
        for pid in range(split.grid):
            dp = [(t, 0, k_iters) for t in range(dp_start + pid, dp_end, split.grid)]
            sk: list[Unit] = []
            if pid < ctas:
                b, e = pid * total // ctas, (pid + 1) * total // ctas
                for lt in range(b // k_iters, (e - 1) // k_iters + 1 if e > b else 0):
                    sk.append((sk_start + lt, max(b - lt * k_iters, 0),
                               min(e - lt * k_iters, k_iters)))
            per_cta[pid] = sk + dp if split.sk_first else dp + sk
    if alive is not None:
        per_cta = [[u for u in units if u[0] in alive] for units in per_cta]
    return per_cta
