"""SimtPlan: a thread-level (CUDA-core, fp32) GEMM kernel derived from the schedule of ``C``.

Every loop axis of C has one role, read from its parallel type and iteration type:

==========================  ==============================================================
C loop axis                 role in the SIMT kernel
==========================  ==============================================================
``BIDx/y/z`` (M or N)       grid: the CTA's tile of C (``m_base``, ``n_base``)
``TIDx/y/z`` (M, N, merged) block: the thread's place in the tile (``m_local``, ``n_local``)
Serial/Unroll M or N axis   register tile: one accumulator per index (an unrolled loop)
``Vectorize`` N axis        128/64-bit accesses of B (global or shared) and of C
``Vectorize`` M axis        128/64-bit reads of the (transposed) A tile in shared memory
one K axis                  serial K loop reading A and B straight from global memory
two K axes ``Ko, Ki``       K tiles of ``BK = extent(Ki)`` staged through shared memory
==========================  ==============================================================

Indices are the IR's index maps (sympy over the loop symbols ``tidx``, ``bidy``, ``i_Mr`` ...):
``m = m_base(bid) + m_local(tid, reg)``.  With staging, the A tile (BM x BK) and the B tile
(BK x BN) are copied by all threads cooperatively (:class:`~tilec.transforms.simt.staging.TileCopy`: linear thread id -> (row, col),
vector width proven from alignment facts), A stored transposed ``As[k][m]``, each tile's row
padded as the schedule says or against bank conflicts (:mod:`tilec.transforms.simt.banks`), A's
rows swizzled when the schedule says (``TileCopy.place``).  How the tiles move (buffers,
``cp.async``, which threads copy what, register fragments, CTAs per SM) is the fusion's
:class:`~tilec.ir.threads.ThreadOptions`.  Vector widths are used only where alignment is proven;
where it is not, the plan falls back to scalar accesses and says so in ``notes``.

:mod:`tilec.transforms.simt.hierarchy` writes the CUTLASS hierarchy (block, warp and thread
tiles) with the IR's verbs and derives back from any plan which rows and columns each warp
computes.

Example::

    >>> from tilec.ir import GemmFusion, ParallelType as P
    >>> f = GemmFusion(64, 64, 64, dtype="fp32")
    >>> _ = f.c.split(0, 32).split(2, 32).parallelize(0, P.BIDx).parallelize(1, P.TIDx)
    >>> _ = f.c.parallelize(2, P.BIDy).parallelize(3, P.TIDy)
    >>> plan = lower_simt(f)
    >>> plan.block, plan.grid, plan.m_expr
    ((32, 32, 1), (2, 2, 1), 32*bidx + tidx)
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import sympy

from tilec.errors import ScheduleError, UnsupportedError
from tilec.ir import GemmFusion, IterDomain, ParallelType, index_map, index_symbol, infer_launch
from tilec.ir.threads import ThreadOptions
from tilec.ir.types import BLayout, Decomposition, DType
from tilec.proofs import Context, evaluate_grid
from tilec.proofs.bounds import bounds as interval
from tilec.transforms.memo import TRANSFORMS
from tilec.transforms.simt.cstage import plan_c_stage
from tilec.transforms.simt.plan import (
    ALIGN,
    LDA,
    LDB,
    LDC,
    SIZE_K,
    SIZE_M,
    SIZE_N,
    RegAxis,
    SimtPlan,
    SimtVariant,
    register_points,
    vec0,
)
from tilec.transforms.simt.staging import divides, proven_multiple, simplify, stage_tiles
from tilec.transforms.simt.work import simt_work_split

# the plan's types are importable from here too (the printer and the tests name them so)
__all__ = [
    "LDA", "LDB", "LDC", "SIZE_K", "SIZE_M", "SIZE_N", "RegAxis", "SimtPlan", "SimtVariant",
    "lower_simt", "register_points", "run_time_variants", "variants_of",
]

P = ParallelType


# -- lowering ------------------------------------------------------------------------------------


def lower_simt(fusion: GemmFusion, *, name: str = "tilec_simt", variants: bool = False) -> SimtPlan:
    """Derive the SIMT kernel of a thread-level schedule of ``fusion.c`` (see module docstring).

    The fusion's :class:`~tilec.ir.threads.ThreadOptions` give the shared buffers per operand
    (2: the next K tile is read into registers while the current one is multiplied; 1: load,
    sync, compute, sync), the register buffers of the k-slice, the shared tiles' pads and the
    CTAs per SM the compiler must fit.

    The fusion's sizes are the reference launch; the run-time variants (the schedule's trace
    replayed over symbolic sizes, lowered once per set of facts) are :func:`variants_of` the
    plan, lowered when the printer first asks (or here, with ``variants``).
    """
    sizes = []
    for d, e in (("M", fusion.M), ("N", fusion.N), ("K", fusion.K)):
        if not e.is_Integer:
            raise UnsupportedError(f"SIMT printer: the reference size {d} must be a constant but "
                                   f"got {e} (the kernel itself takes M, N, K at run time)")
        sizes.append(int(e))
    M, N, K = sizes
    if any(call.method == "swizzle" for call in fusion.schedule.calls):
        # the grouped raster's tile map over symbolic sizes is not lowered for SIMT: its
        # run-time variants failed deep in the printer (an inexact division, a missing bound)
        raise UnsupportedError("SIMT printer: a swizzled tile order (c.swizzle, the grouped "
                               "raster) is not printed for SIMT; walk C's tiles in row or "
                               "column order (BIDy, BIDx) or merged without the swizzle")
    if max(M * K, K * N, M * N) >= 2**31:
        raise UnsupportedError(f"SIMT printer: {M}x{N}x{K} needs 64-bit indices (int32 only)")
    ref = _lower(fusion, name, (M, N, K), (K, N, N))
    if not variants:
        return ref
    return replace(ref, variants=variants_of(ref))


def variants_of(plan: SimtPlan) -> tuple[SimtVariant, ...]:
    """The plan's run-time variants (:func:`run_time_variants` of the schedule it was lowered
    from, ``plan.schedule``), lowered once per plan object."""
    if plan.variants:
        return plan.variants
    hit = TRANSFORMS.simt_variants.get(id(plan))
    if hit is not None and hit[0] is plan:
        return hit[1]
    out = run_time_variants(plan.schedule, plan)
    TRANSFORMS.simt_variants[id(plan)] = (plan, out)
    return out


def run_time_variants(schedule: str, ref: SimtPlan) -> tuple[SimtVariant, ...]:
    """The kernels the launcher chooses among, most facts first: ``tiles`` (M, N, K multiples
    of the CTA and K tiles, leading dimensions of 4 elements and 16-byte aligned pointers: no
    boundary predicate, every vector the schedule asks for), ``ragged_n`` (M and K multiples of
    the tiles, B's rows of 4 elements and 16-byte aligned, N, C and its rows anything: the
    tiles' K loop, the vector at the end of B's rows copied in part, 32-bit C stores under
    ``n < N``; only where the schedule's B copies are ``cp.async`` vectors and its C stores
    vectors, see :func:`ragged_n_spec`), ``aligned`` (N and K multiples of 4 with the
    tiles' alignment: predicated edges, 128-bit rows), ``general`` (nothing assumed:
    predicated, scalar global accesses).  The schedule's trace is replayed over the sizes of
    each (its calls must not depend on M, N, K, as a kernel compiled for a configuration is)."""
    bk = ref.staging.BK if ref.staging is not None else 1
    four = ("lda", "ldb", "ldc")
    specs = [("tiles", (ref.BM, ref.BN, bk), four, "ABC"), ("aligned", (1, ALIGN, ALIGN), four, "ABC"),
             ("general", (1, 1, 1), (), "")]
    out = [_variant(schedule, ref.name, *spec) for spec in specs]
    rn = ragged_n_spec(out[0].plan, bk)
    if rn is not None:
        out.insert(1, _variant(schedule, ref.name, *rn))
    return tuple(out)


def ragged_n_spec(tiles: SimtPlan, bk: int) -> tuple[str, tuple[int, int, int], tuple[str, ...], str] | None:
    """``ragged_n``'s facts, where it differs from ``tiles`` only by what a C row of any length
    and alignment needs (None elsewhere): the ``tiles`` kernel stages its K tiles with
    ``cp.async`` (a copy's source size may be cut at the end of B's rows: ``TileCopy.edge``),
    copies B in vectors and stores C in vectors.  The mainloop is then the tiles' (A's copies
    are 4-byte, so A needs no fact but M and K, B's vector guard ``n < N`` is the same for
    every K tile); the epilogue stores 32-bit values under ``n < N``.  The launcher's padding
    runs it with B copied to rows of 4 elements and C written in place (no C copy)."""
    st = tiles.staging
    if st is None or not tiles.options.async_copy or st.b.vec == 1 or tiles.vec_c == 1:
        return None
    return ("ragged_n", (tiles.BM, 1, bk), ("ldb",), "B")


def _variant(schedule: str, name: str, vname: str, mult: tuple[int, int, int],
             four: tuple[str, ...], pointers: str) -> SimtVariant:
    """The variant ``vname``: M, N, K multiples of ``mult``, the leading dimensions named in
    ``four`` multiples of 4 elements, the ``pointers`` (of ``"ABC"``) 16-byte aligned."""
    back: dict[sympy.Symbol, sympy.Expr] = {}
    facts: list[str] = []

    def multiple(sym: sympy.Symbol, f: int) -> sympy.Expr:
        if f == 1:
            return sym
        q = sympy.Symbol(f"{sym.name}_q", integer=True, positive=True)
        back[q] = sym / f
        facts.append(f"{sym.name} % {f} == 0")
        return f * q

    v_sizes = tuple(multiple(s, f) for s, f in zip((SIZE_M, SIZE_N, SIZE_K), mult, strict=True))
    v_lds = tuple(multiple(s, ALIGN if s.name in four else 1) for s in (LDA, LDB, LDC))
    if pointers:  # the pointers' addresses
        ptr = pointers if len(pointers) == 1 else f"({' | '.join(pointers)})"
        facts.append(f"{ptr} % {4 * ALIGN} == 0")
    g = _replay(schedule, *v_sizes)
    plan = _lower(g, name, v_sizes, v_lds)
    return SimtVariant(vname, tuple(dict.fromkeys(facts)), plan, back)


def _replay(schedule: str, M: sympy.Expr, N: sympy.Expr, K: sympy.Expr) -> GemmFusion:
    """The schedule's trace (``str(fusion.schedule)``: its import, the fusion's creation, its
    calls) run again on a fusion of sizes ``M``, ``N``, ``K``."""
    from tilec.errors import TilecError

    def make(**kw: object) -> GemmFusion:
        return GemmFusion(**{**kw, "M": M, "N": N, "K": K})  # type: ignore[arg-type]

    ns: dict[str, object] = {"GemmFusion": make, "ParallelType": ParallelType}
    program = "\n".join(ln for ln in schedule.splitlines() if not ln.startswith("from tilec.ir import"))
    try:
        exec(compile(program, "<tilec schedule, run-time sizes>", "exec"), ns)
    except (TilecError, TypeError, ValueError) as e:
        raise UnsupportedError(
            f"SIMT printer: the schedule does not replay over run-time sizes ({type(e).__name__}: "
            f"{e}); a shape-generic kernel needs scheduling calls that do not depend on M, N, K"
        ) from e
    return ns["fusion"]  # type: ignore[return-value]


def _lower(fusion: GemmFusion, name: str, sizes: tuple, lds: tuple) -> SimtPlan:
    """:func:`lower_simt` for the fusion's sizes ``sizes`` (integers, or symbols with facts)
    and leading dimensions ``lds`` (of A, B, C)."""
    opts = fusion.thread_options
    if fusion.dtype is not DType.FP32:
        raise UnsupportedError(f"SIMT printer: dtype must be fp32 but got {fusion.dtype.value}")
    if fusion.b_layout is not BLayout.KN:
        raise UnsupportedError("SIMT printer: B must be K x N row-major (b_layout='kn')")
    M, N, K = sizes
    lda, ldb, ldc = lds
    c = fusion.c
    im = index_map(c)
    launch = infer_launch(fusion)
    if launch.cluster != (1, 1, 1):
        raise UnsupportedError(f"SIMT printer: clusters are not supported (cluster {launch.cluster})")
    bounds = {s: e for s, e in im.bounds.items()}
    m_expr, n_expr, k_expr = (sympy.expand(im.logical[d]) for d in ("M", "N", "K"))
    tsyms: list[sympy.Symbol] = []
    bsyms: list[sympy.Symbol] = []
    reg: list[RegAxis] = []
    kaxes: list[tuple[IterDomain, sympy.Symbol]] = []
    for pos, (ax, s) in enumerate(im.loop):
        pt = ax.ptype
        if ax.is_reduction:
            if pt.is_hardware_index or pt is P.Vectorize:
                raise UnsupportedError(
                    f"SIMT printer: C axis {pos} ({ax}) is a K axis bound to {pt.name}; the K "
                    f"reduction is serial per thread (split K across CTAs with fusion.decompose)"
                )
            kaxes.append((ax, s))
            continue
        if pt.is_block or pt.is_thread:
            (tsyms if pt.is_thread else bsyms).append(s)
        elif pt in (P.SERIAL, P.Unroll, P.Vectorize):
            reg.append(_reg_axis(pos, ax, s, m_expr, n_expr))
        else:
            raise UnsupportedError(f"SIMT printer: C axis {pos} ({ax}) bound to {pt.name}")
    concrete = all(isinstance(v, int) for v in sizes)
    for dims in ((launch.grid,) if concrete else ()) + (launch.block,):
        for e in dims:
            if not sympy.sympify(e).is_Integer:
                raise UnsupportedError(f"SIMT printer: launch dims must be constants but got {dims}")
    grid = tuple(int(e) if sympy.sympify(e).is_Integer else sympy.sympify(e) for e in launch.grid)
    block = tuple(int(e) for e in launch.block)
    threads = block[0] * block[1] * block[2]
    if threads > 1024:
        raise ScheduleError(f"C: the thread axes give {threads} threads per CTA; the limit is 1024")

    zero_local = {s: 0 for s in tsyms} | {r.symbol: 0 for r in reg}
    m_base, n_base = m_expr.xreplace(zero_local), n_expr.xreplace(zero_local)
    m_local = simplify(m_expr - m_base, bounds)
    n_local = simplify(n_expr - n_base, bounds)
    for what, e in (("M", m_local), ("N", n_local)):
        if e.free_symbols & set(bsyms):
            raise UnsupportedError(
                f"SIMT printer: the {what} index within a CTA ({e}) depends on the block index; "
                f"the CTA's tile of C must be a rectangle offset by blockIdx"
            )
    local_syms = [*tsyms, *(r.symbol for r in reg)]
    BM = _extent_of(m_local, local_syms, bounds)
    BN = _extent_of(n_local, local_syms, bounds)
    notes: list[str] = []
    ksyms = {s for _, s in kaxes}
    # K predicates belong to the reduction (zero-filled tiles, or a loop of exactly K); the rest
    # guard a thread's C element
    c_preds = [q for q in im.predicates if not q.free_symbols & ksyms]
    # global accesses along N (C stores, unstaged B loads): the row's length and leading
    # dimension must keep the vectors aligned; shared reads only need an aligned start
    vec_c = _vector_width("N", reg, n_expr, (N, ldc),
                          bounds, c_preds, notes)
    if len(kaxes) == 1 and vec_c > 1 and not proven_multiple(ldb, vec_c, bounds):
        notes.append(f"B loads: ldb = {ldb} not proven a multiple of {vec_c}; scalar")
        vec_c = 1
    vec_n = _vector_width("N", reg, n_expr, None, bounds, [], []) if len(kaxes) == 2 else vec_c
    vec_m = _vector_width("M", reg, m_expr, None, bounds, [], notes)

    staging = None
    k_symbol = None
    if len(kaxes) == 1:
        k_symbol = kaxes[0][1]
        if opts != ThreadOptions(min_blocks=opts.min_blocks, fma_order=opts.fma_order):
            notes.append("circular_buffer / smem_pad / smem_swizzle / copy_lanes / spread_copies / "
                         "copy_addresses / stage_c apply to staged K tiles only; ignored (no K staging)")
        if vec_m > 1:
            notes.append("Vectorize on an M axis applies to staged A tiles only; ignored (no K staging)")
            vec_m = 1
    elif len(kaxes) == 2:
        (ao, so), (ai, si) = kaxes
        bk = ai.extent
        if not bk.is_Integer or sympy.expand(k_expr - (so * bk + si)) != 0:
            raise UnsupportedError(
                f"SIMT printer: K must be split once as [Ko, Ki] (K = Ko*BK + Ki) to stage tiles "
                f"through shared memory but its index is {k_expr}"
            )
        frag = (m_local.xreplace(vec0(reg, "M") if vec_m > 1 else {}), vec_m,
                n_local.xreplace(vec0(reg, "N") if vec_n > 1 else {}), vec_n)
        k_tiles = int(ao.extent) if ao.extent.is_Integer else ao.extent
        staging = stage_tiles(int(bk), so, si, k_tiles, opts, (M, N, K, lda, ldb), BM, BN,
                              m_base, n_base, block, frag, bounds, notes)
        if vec_n > 1 and not (proven_multiple(n_local.xreplace(vec0(reg, "N")), vec_n, bounds)
                              and staging.b.pitch % vec_n == 0):
            notes.append(f"B tile reads in shared memory: alignment to {vec_n} not proven")
    else:
        raise UnsupportedError(f"SIMT printer: C has {len(kaxes)} K axes; expected 1 or 2 ([Ko, Ki])")

    c_stage = plan_c_stage(opts, staging, BM, BN, block,
                           tuple(index_symbol(n) for n in ("tidx", "tidy", "tidz")), reg, m_local, n_local,
                           vec_n, vec_c, (M, N), c_preds, bounds, notes)
    decomp = fusion.decomposition
    work = simt_work_split(fusion, grid=grid, block_names=[b.name for b in bsyms], BM=BM, BN=BN,
                           BK=staging.BK if staging else None, async_copy=opts.async_copy,
                           notes=notes, concrete=concrete)
    guard_a = sympy.true if _below(m_expr, bounds, M) else sympy.Lt(m_expr, M)
    n0 = n_expr.xreplace(vec0(reg, "N") if vec_c > 1 else {})
    guard_b = sympy.true if _below(n_expr, bounds, N) else sympy.Lt(n0, N)
    return SimtPlan(
        name=name, M=M, N=N, K=K, grid=grid, block=block,  # type: ignore[arg-type]
        thread_symbols=tuple(tsyms), block_symbols=tuple(bsyms),
        m_expr=m_expr, n_expr=n_expr, k_expr=k_expr, m_base=m_base, n_base=n_base,
        m_local=m_local, n_local=n_local, BM=BM, BN=BN, reg=tuple(reg), k_symbol=k_symbol,
        staging=staging, vec_m=vec_m, vec_n=vec_n, bounds=bounds,
        predicates=tuple(c_preds), guard_a=guard_a, guard_b=guard_b,
        options=opts, schedule=str(fusion.schedule), notes=tuple(notes), work=work,
        lda=lda, ldb=ldb, ldc=ldc, vec_c=vec_c, c_stage=c_stage,
        decomposition=None if decomp.kind is Decomposition.DATA_PARALLEL else decomp,
    )


def _reg_axis(pos: int, ax: IterDomain, s: sympy.Symbol, m: sympy.Expr, n: sympy.Expr) -> RegAxis:
    in_m, in_n = s in m.free_symbols, s in n.free_symbols
    if in_m and in_n:
        raise UnsupportedError(
            f"SIMT printer: register axis {pos} ({ax}) mixes M and N; split it so that each "
            f"register axis walks one of them"
        )
    if not ax.extent.is_Integer:
        raise UnsupportedError(f"SIMT printer: register axis {pos} ({ax}) needs a constant extent")
    vec = ax.ptype is P.Vectorize
    if vec and int(ax.extent) not in (2, 4):
        raise ScheduleError(
            f"C: Vectorize axis {pos} ({ax}) must have extent 2 or 4 (64/128-bit fp32) but has "
            f"{ax.extent}"
        )
    return RegAxis(s, int(ax.extent), "M" if in_m else "N", vec)


def _vector_width(dim: str, reg: list[RegAxis], expr: sympy.Expr,
                  row: tuple[sympy.Expr, sympy.Expr] | None, bounds: dict, preds: list,
                  notes: list[str]) -> int:
    """The Vectorize width along ``dim`` when it is proven: unit stride, aligned start; for a
    global access ``row = (length, leading dimension)``: both multiples of the width (a
    vector never straddles the edge ``index < length``, and every row starts aligned)."""
    axes = [r for r in reg if r.dim == dim and r.vector]
    if not axes:
        return 1
    if len(axes) > 1:
        raise ScheduleError(f"C: {len(axes)} Vectorize axes walk {dim}; at most one may")
    v = axes[0]
    start = expr.xreplace({v.symbol: 0})
    why = None
    if simplify(expr - start, bounds) != v.symbol:
        why = f"{dim} index is not start + {v.symbol}"
    elif row is not None and not divides(v.extent, row[0]):
        why = f"row length {row[0]} is not a multiple of {v.extent}"
    elif row is not None and not divides(v.extent, row[1]):
        why = f"leading dimension {row[1]} is not a multiple of {v.extent}"
    elif not proven_multiple(start, v.extent, bounds):
        why = f"start {start} not proven a multiple of {v.extent}"
    elif any(v.symbol in p.free_symbols and not _is_edge(p, expr, row) for p in preds):
        # ``index < row`` with row % width == 0 and an aligned start: all lanes in or all out
        why = f"a predicate inside the tile depends on {v.symbol}"
    if why:
        notes.append(f"Vectorize {v.symbol} (width {v.extent}) falls back to scalar: {why}")
        return 1
    return v.extent


def _is_edge(pred: sympy.Basic, index: sympy.Expr, row: tuple | None) -> bool:
    return (row is not None and isinstance(pred, sympy.StrictLessThan)
            and sympy.expand(pred.lhs - index) == 0 and sympy.expand(pred.rhs - row[0]) == 0)


def _grid_points(syms: list[sympy.Symbol], bounds: dict) -> list[np.ndarray]:
    ranges = [np.arange(int(bounds[s])) for s in syms]
    return [g.ravel() for g in np.meshgrid(*ranges, indexing="ij")] if syms else []


def _extent_of(local: sympy.Expr, syms: list[sympy.Symbol], bounds: dict) -> int:
    """1 + the largest value of a tile-local index over the CTA's threads and registers."""
    used = [s for s in syms if s in local.free_symbols]
    if not used:
        return 1
    pts = _grid_points(used, bounds)
    vals = np.asarray(evaluate_grid(local, used, pts))
    return int(vals.max()) + 1


def _below(expr: sympy.Expr, bounds: dict, size: sympy.Expr | int) -> bool:
    """``expr < size`` over the whole loop domain, proved (interval bound, else enumeration of
    a concrete domain); False when unknown (the access keeps its guard)."""
    ctx = Context()
    for s, b in bounds.items():
        ctx.bound(s, b)
    hi = interval(expr, ctx)[1]
    if sympy.Lt(hi, size) is sympy.true:
        return True
    syms = sorted(expr.free_symbols, key=str)
    if not all(s in bounds and bounds[s].is_Integer for s in syms) or not isinstance(size, int):
        return False
    total = int(np.prod([int(bounds[s]) for s in syms], dtype=np.int64)) if syms else 1
    if total > 1 << 24:
        return False
    top = int(np.max(evaluate_grid(expr, syms, _grid_points(syms, bounds)))) if syms else int(expr)
    return top < size
