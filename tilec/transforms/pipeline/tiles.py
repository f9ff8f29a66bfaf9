"""The first two passes: :func:`tile_axes` (the MMA tile, from C's ``Mma`` axes) and
:func:`tile_order` (C's index map over the linear work index ``t = r * num_ctas + pid``,
simplified by the theorems; :func:`coordinate_proof` keeps the proof for ``tilec explain``)."""

from __future__ import annotations

from dataclasses import replace

import sympy

from tilec.errors import UnsupportedError
from tilec.ir import IndexMap, ParallelType, ceil_div, index_symbol
from tilec.proofs import Context, Result, simplify
from tilec.transforms.pipeline.state import Lowering
from tilec.transforms.plan import SIZE_M, SIZE_N, TileOrder

T = index_symbol("t")


def tile_axes(s: Lowering) -> Lowering:
    """The MMA tile: C's ``Mma`` axes, one per M, N and K, with constant extents.

    before::

        triton: C[256, 384] += A[256, 128] @ B, bf16

    after::

        triton: C[256, 384] += A[256, 128] @ B, bf16
        tile: 128x128x64

    >>> from tilec.runtime.loader import load_schedule
    >>> f = load_schedule("examples/gemm_basic.py", {"M": 256, "N": 384, "K": 128}).fusion
    >>> tile_axes(Lowering(f)).tile
    (128, 128, 64)
    """
    found = mma_axes(s.ir.c_map)
    return replace(s, tile=(found["M"][1], found["N"][1], found["K"][1]))


def mma_axes(im: IndexMap) -> dict[str, tuple[sympy.Symbol, int]]:
    """The Mma axis of each GEMM dimension in C's index map: its loop symbol and extent."""
    found: dict[str, tuple[sympy.Symbol, int]] = {}
    for ax, sym in im.loop:
        if ax.ptype is not ParallelType.Mma:
            continue
        dims = [d for d, e in im.logical.items() if sym in sympy.sympify(e).free_symbols]
        if len(dims) != 1 or not ax.extent.is_Integer:
            raise UnsupportedError(
                f"C: Mma axis {ax} must index exactly one of M, N, K with a constant extent")
        if dims[0] in found:
            raise UnsupportedError(f"C: two Mma axes index {dims[0]}; the MMA tile needs one")
        found[dims[0]] = (sym, int(ax.extent))
    missing = [d for d in "MNK" if d not in found]
    if missing:
        raise UnsupportedError(
            f"C: no Mma axis for {', '.join(missing)}: split C's M, N and K by the tile (BM, BN, "
            f"BK) and parallelize the inner axes with ParallelType.Mma")
    return found


def tile_order(s: Lowering) -> Lowering:
    """The schedule's tile order over the linear work index ``t``, and the CTAs that walk it.

    With ``pid`` the linear CTA id (``blockIdx``, or ``cidx * cluster + rank``) and ``r`` the
    persistent round (the serial CTA-level axes), ``t = r * num_ctas + pid``; ``tile_m(t)``,
    ``tile_n(t)`` are C's M and N origins at that CTA over BM and BN, simplified by the theorems
    under ``0 <= t < num_tiles``. A predicate ``t < E`` of the schedule (the persistent split's
    padding) ends the walk where the real tiles end.

    before (examples/split_k.py, M = N = 256, one CTA per tile)::

        triton: C[256, 256] += A[256, 1024] @ B, bf16
        tile: 128x128x64

    after::

        triton: C[256, 256] += A[256, 1024] @ B, bf16
        tile: 128x128x64
        order: t -> (floor(t/ceiling(N/128)), Mod(t, ceiling(N/128))), 4 indices over 2 x 2 tiles, 4 CTAs

    >>> from tilec.runtime.loader import load_schedule
    >>> f = load_schedule("examples/stream_k.py", dict(M=384, N=384, SMS=4)).fusion
    >>> s = tile_order(tile_axes(Lowering(f)))
    >>> [s.order.evaluate(t) for t in range(5)], s.num_ctas, s.persistent
    ([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)], 4, True)
    """
    assert s.tile is not None
    generic, fusion, im, launch = s.ir.generic, s.ir.view, s.ir.c_map, s.ir.view_launch
    tiles = mma_axes(im)
    gx, gy, gz = (sympy.sympify(g) for g in launch.grid)
    cx, cy, cz = launch.cluster
    num_ctas = gx * gy * gz
    k_syms = sympy.sympify(im.logical["K"]).free_symbols
    mn_syms = sympy.sympify(im.logical["M"]).free_symbols | sympy.sympify(im.logical["N"]).free_symbols
    zero = {tiles[d][0]: sympy.Integer(0) for d in "MNK"}
    rounds: list[tuple[sympy.Symbol, sympy.Expr]] = []
    grid_axes: list[tuple[sympy.Symbol, ParallelType]] = []
    subs: dict[sympy.Symbol, sympy.Expr] = {}
    for ax, sym in im.loop:
        pt, d = ax.ptype, ax.ptype.dim
        if (pt.is_block or pt.is_cluster or pt.is_rank) and d is not None:
            grid_axes.append((sym, pt))
        elif pt.is_thread or sym in zero:
            subs[sym] = sympy.Integer(0)
        elif sym in k_syms and sym not in mn_syms:
            subs[sym] = sympy.Integer(0)  # the K loop: not part of the tile order
        else:
            rounds.append((sym, sympy.sympify(ax.extent)))
    # t = r * num_ctas + pid; without rounds every CTA runs one index: pid = t
    pid = sympy.Mod(T, num_ctas) if rounds and num_ctas != 1 else (T if not rounds else 0)
    b = [sympy.Mod(pid, gx), sympy.Mod(sympy.floor(pid / gx), gy), sympy.floor(pid / (gx * gy))]
    for sym, pt in grid_axes:
        d = pt.dim
        if pt.is_block:
            subs[sym] = b[d]
        elif pt.is_cluster:
            subs[sym] = sympy.floor(b[d] / (cx, cy, cz)[d])
        else:
            subs[sym] = sympy.Mod(b[d], (cx, cy, cz)[d])
    # rounds are the serial CTA-level loops, outermost first: t = r * num_ctas + pid
    total_rounds = sympy.Mul(*(e for _, e in rounds))
    r = sympy.floor(T / num_ctas)
    stride = total_rounds
    for sym, e in rounds:
        stride = stride / e
        subs[sym] = r if len(rounds) == 1 else sympy.Mod(sympy.floor(r / stride), e)
    BM, BN, _ = s.tile
    # C's origin at the tile t: substituted, then evaluated (the IR keeps its ceilings of
    # irreducible ratios unevaluated; with t in place they may fold)
    m0 = sympy.sympify(im.logical["M"]).xreplace(subs).doit()
    n0 = sympy.sympify(im.logical["N"]).xreplace(subs).doit()
    walked = total_rounds * num_ctas
    # the persistent split pads the walk to whole rounds; a predicate t < E of the schedule
    # (the merged tile count) ends it where the real tiles end, so a Stream-K region or a
    # grouped raster's last group is placed on real tiles, not on padding
    preds = [sympy.sympify(p).xreplace(subs).doit() for p in im.predicates]
    num_tiles = _walk_end(preds, walked, num_ctas)
    # simplified under 0 <= t < num_tiles (the real tiles): a grouped raster's last-group size
    # min(G, tiles_m - g*G) is G on every real tile when G divides tiles_m
    raw_m, raw_n = m0 / BM, n0 / BN
    tile_m, tile_n = _simplified(raw_m, num_tiles), _simplified(raw_n, num_tiles)
    desc = "from the schedule: " + ", ".join(str(a) for a in fusion.c.loop
                                              if a.ptype is not ParallelType.Mma)
    M, N, _ = s.sizes
    ref = ((SIZE_M, M), (SIZE_N, N)) if generic is not None else ()
    order = TileOrder(T, tile_m, tile_n, num_tiles, ceil_div(SIZE_M if ref else M, BM),
                      ceil_div(SIZE_N if ref else N, BN), desc,
                      ctas=num_ctas, raw_tile_m=sympy.expand(raw_m),
                      raw_tile_n=sympy.expand(raw_n), sizes=ref)
    notes = s.notes if generic is not None else (*s.notes, _FIXED_SIZES)
    return replace(s, order=order, num_ctas=int(sympy.sympify(num_ctas).xreplace(dict(ref))),
                   persistent=bool(rounds), notes=notes)


_FIXED_SIZES = ("sizes fixed: the schedule could not be replayed over symbolic M, N, K; its "
                "order holds at the fusion's sizes only")


def _walk_end(preds: list[sympy.Basic], walked: sympy.Expr, num_ctas: sympy.Expr) -> sympy.Expr:
    """The linear indices walked: ``walked`` (rounds x CTAs), ended by the schedule's
    predicates of the form ``t < E`` (E free of t) at the smallest E."""
    ends = []
    for p in preds:
        if not isinstance(p, sympy.StrictLessThan):
            continue
        ctx = Context()
        ctx.bound(T, walked)
        lhs = simplify(sympy.expand(p.lhs), ctx).expr
        if lhs == T and T not in p.rhs.free_symbols:
            ends.append(p.rhs)
    if not ends:
        return walked
    end = sympy.Min(*ends)
    # a persistent split of E indices walks ceiling(E / ctas) * ctas >= E of them
    if walked == ceil_div(end, num_ctas) * num_ctas or walked == end:
        return end
    return sympy.Min(walked, end)


def _simplified(expr: sympy.Expr, num_tiles: sympy.Expr) -> sympy.Expr:
    """The tile coordinate simplified by the theorems under ``0 <= t < num_tiles``."""
    return coordinate_proof(expr, num_tiles).expr


def coordinate_proof(expr: sympy.Expr, num_tiles: sympy.Expr) -> Result:
    """The simplification of a tile coordinate under ``0 <= t < num_tiles``, with its proof
    trace (a :class:`tilec.proofs.Result`; ``tilec explain`` prints it)."""
    ctx = Context()
    ctx.bound(T, sympy.sympify(num_tiles))
    return simplify(sympy.expand(expr), ctx)
