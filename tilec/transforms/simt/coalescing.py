"""Coalescing analysis: how many 32-byte sectors each warp request of a SIMT schedule touches.

A warp is 32 consecutive linear thread ids ``tid = x + Dx*(y + Dy*z)``.  For every global access
of the kernel (:meth:`SimtPlan.global_accesses`: the element index as a sympy function of
``tidx``/``tidy``/``tidz``, block indices, loop indices and register indices), the lanes of a warp
are written in closed form: when the block's x extent is a multiple of 32, lane ``l`` of warp
``(wx, y, z)`` is ``x = 32*wx + l``; when 32 is a multiple of ``Dx`` the warp spans ``32/Dx`` rows,
``x = l % Dx``, ``y = (32/Dx)*wy + l / Dx``, and so on.  Warp indices (``wx``, ``wy``, ...) stay
symbolic, so one derivation covers every warp of every CTA at every loop iteration.

For each access:

* the stride between consecutive lanes, ``index(l+1) - index(l)``, simplified by the proofs engine
  under ``0 <= l < 31`` (theorem trace kept): ``0`` is **broadcast**, the access width (1 element,
  or 4 for a 128-bit access) is **contiguous**, anything else **strided**; a stride the engine cannot
  free of ``l`` means the lanes' offsets are not one arithmetic progression (**irregular**);
* the offsets of the 32 lanes from lane 0 (exact integers, every warp alike) and the alignment of
  lane 0's address modulo 32 bytes (proved as ``index % g == 0``), which give the number of distinct
  32-byte sectors per warp request: exact when the alignment is proven, a range otherwise;
* a verdict: efficiency = the fewest sectors that could hold the bytes used / sectors touched.

When the block's shape does not split warps regularly (say ``Dx = 48``) the warps are enumerated.

Example (the seed's naive mapping: C[x][y], x from threadIdx.x)::

    >>> from tilec.ir import GemmFusion, ParallelType as P
    >>> f = GemmFusion(256, 256, 256, dtype="fp32")
    >>> _ = f.c.split(0, 32).split(2, 32).parallelize(0, P.BIDx).parallelize(1, P.TIDx)
    >>> _ = f.c.parallelize(2, P.BIDy).parallelize(3, P.TIDy)
    >>> [(r.tensor, r.pattern.value, r.sectors) for r in analyze(f)]
    [('A', 'strided', 32), ('B', 'broadcast', 1), ('C', 'strided', 32)]
"""

from __future__ import annotations

import enum
import math
from dataclasses import dataclass, field

import numpy as np
import sympy

from tilec.errors import InternalError
from tilec.ir import GemmFusion, ceil_div, index_symbol
from tilec.proofs import evaluate_grid
from tilec.transforms.simt.lower import lower_simt
from tilec.transforms.simt.plan import GlobalAccess, SimtPlan
from tilec.transforms.simt.staging import simplify

WARP = 32
SECTOR = 32  # bytes
ELEM = 4  # fp32 bytes
_T = tuple(index_symbol(n) for n in ("tidx", "tidy", "tidz"))
LANE = index_symbol("lane")


class Pattern(enum.Enum):
    """How the lanes of a warp spread over memory.

    BROADCAST: every lane reads the same address; one sector, the value is broadcast.
    CONTIGUOUS: lane l at base + l*width; the warp touches one dense run (4 sectors for fp32).
    STRIDED: lane l at base + l*s with s != width; from s*4 >= 32 bytes on, a sector per lane.
    IRREGULAR: no single stride, e.g. a warp over two rows of a 16-wide block; see the sectors.
    """

    BROADCAST = "broadcast"
    CONTIGUOUS = "contiguous"
    STRIDED = "strided"
    IRREGULAR = "irregular"


@dataclass(frozen=True)
class AccessReport:
    """The analysis of one global access, for a full warp."""

    tensor: str
    kind: str  # "load" | "store"
    what: str
    index: sympy.Expr  # element index of the access as a function of thread and loop symbols
    width: int  # elements per lane (vector width)
    lanes: int  # lanes in a warp (fewer when the block has < 32 threads)
    pattern: Pattern
    stride: sympy.Expr | None  # elements between consecutive lanes (None: irregular)
    offsets: tuple[int, ...] | None  # lane offsets from lane 0, in elements (None: symbolic)
    sectors: int | None  # most 32-byte sectors per warp request (None: depends on sizes)
    sectors_min: int | None  # fewest (differs from ``sectors`` when alignment is unknown)
    useful_bytes: int | None
    alignment: int  # lane 0's element index is proven a multiple of this
    proof: tuple[str, ...] = field(default_factory=tuple)  # theorem trace of the stride

    @property
    def ideal_sectors(self) -> int | None:
        return None if self.useful_bytes is None else math.ceil(self.useful_bytes / SECTOR)

    @property
    def efficiency(self) -> float | None:
        if self.sectors is None or self.ideal_sectors is None:
            return None
        return self.ideal_sectors / self.sectors

    @property
    def verdict(self) -> str:
        eff = self.efficiency
        if self.pattern is Pattern.BROADCAST:
            return "broadcast"
        if eff is None:
            return f"{self.pattern.value} (sectors depend on the sizes)"
        if eff >= 1:
            return "coalesced"
        return "uncoalesced" if eff <= 0.25 else "partially coalesced"


@dataclass(frozen=True)
class _Warp:
    """One family of warps: each lane's thread coordinates and the warp symbols' bounds."""

    lanes: list[dict[sympy.Symbol, sympy.Expr]]
    bounds: dict[sympy.Symbol, sympy.Expr]
    symbolic_lane: dict[sympy.Symbol, sympy.Expr] | None  # coordinates of lane ``LANE``


def warps(block: tuple[int, int, int]) -> list[_Warp]:
    """The warps of a block: one symbolic family when the shape splits regularly, else each."""
    dims = block
    total = dims[0] * dims[1] * dims[2]
    n_lanes = min(WARP, total)
    lanes: list[dict[sympy.Symbol, sympy.Expr]] = [{} for _ in range(n_lanes)]
    sym_lane: dict[sympy.Symbol, sympy.Expr] = {}
    wb: dict[sympy.Symbol, sympy.Expr] = {}
    left, div = n_lanes, 1
    for d, ext in enumerate(dims):
        t = _T[d]
        if left == 1 or ext % left == 0:
            w = index_symbol("w" + "xyz"[d])
            if ext // left > 1:
                wb[w] = sympy.Integer(ext // left)
            base = left * w if ext // left > 1 else sympy.Integer(0)
            for lane, coords in enumerate(lanes):
                coords[t] = base + (lane // div) % left
            sym_lane[t] = base + (sympy.floor(LANE / div) if div > 1 else LANE) if left > 1 else base
            left = 1
        elif left % ext == 0:
            for lane, coords in enumerate(lanes):
                coords[t] = sympy.Integer((lane // div) % ext)
            sym_lane[t] = sympy.Mod(sympy.floor(LANE / div) if div > 1 else LANE, ext)
            div *= ext
            left //= ext
        else:
            return _enumerated(block)
    return [_Warp(lanes, wb, sym_lane)]


def _enumerated(block: tuple[int, int, int]) -> list[_Warp]:
    dx, dy, dz = block
    total = dx * dy * dz
    out = []
    for w0 in range(0, total, WARP):
        lanes = []
        for tid in range(w0, min(w0 + WARP, total)):
            x, y, z = tid % dx, (tid // dx) % dy, tid // (dx * dy)
            lanes.append({_T[0]: sympy.Integer(x), _T[1]: sympy.Integer(y), _T[2]: sympy.Integer(z)})
        out.append(_Warp(lanes, {}, None))
    return out


def analyze(fusion: GemmFusion | SimtPlan, *, prove: bool = True) -> list[AccessReport]:
    """One :class:`AccessReport` per global access of the schedule's SIMT kernel.

    Lane offsets are exact: every warp of the block is enumerated (thread indices concrete), every
    other symbol stays symbolic, so offsets hold for all CTAs and loop iterations.  ``prove``
    adds the symbolic stride with its theorem trace (slower; it must agree with the offsets).
    """
    plan = fusion if isinstance(fusion, SimtPlan) else lower_simt(fusion)
    bounds = plan.access_bounds(c_copies=True)
    for t in _T:
        bounds.pop(t, None)
    family = warps(plan.block)[0] if prove else None
    out = []
    for acc in plan.global_accesses():
        parts = _analyze_access(acc.index, acc.width, plan.block, bounds)
        stride: sympy.Expr | None = None
        proof: tuple[str, ...] = ()
        if family is not None and family.symbolic_lane is not None:
            stride, proof = _stride(acc.index, family, {**bounds, **family.bounds},
                                    len(family.lanes))
        out.append(_merge(acc, parts, stride, proof))
    return out


@dataclass
class _Partial:
    lanes: int
    pattern: Pattern
    stride: sympy.Expr | None
    offsets: tuple[int, ...] | None
    sectors: tuple[int, int] | None
    useful: int | None
    alignment: int


def _analyze_access(index: sympy.Expr, width: int, block: tuple[int, int, int],
                    bounds: dict) -> list[_Partial]:
    dx, dy, dz = block
    total = dx * dy * dz
    tids = np.arange(total)
    coords = [tids % dx, (tids // dx) % dy, tids // (dx * dy)]
    terms = sympy.Add.make_args(sympy.expand(index))
    tset = set(_T)
    pure = sympy.Add(*(t for t in terms if t.free_symbols and t.free_symbols <= tset))
    mixed = sympy.Add(*(t for t in terms if t.free_symbols & tset and not t.free_symbols <= tset))
    rest = sympy.Add(*(t for t in terms if not t.free_symbols & tset))
    rest_const = int(sum(t for t in sympy.Add.make_args(rest) if t.is_Integer))
    rest_sym = sympy.expand(rest - rest_const)
    pure_vals = np.asarray(evaluate_grid(pure, list(_T), coords), dtype=np.int64) if pure != 0 \
        else np.zeros(total, dtype=np.int64)
    pure_vals = pure_vals + rest_const
    per = SECTOR // ELEM
    g_rest = per if rest_sym == 0 else _alignment(rest_sym, bounds)
    out = []
    for w0 in range(0, total, WARP):
        lane_ids = range(w0, min(w0 + WARP, total))
        vals: list[sympy.Expr] = []
        for tid in lane_ids:
            v = sympy.Integer(int(pure_vals[tid]))
            if mixed != 0:
                sub = {_T[d]: sympy.Integer(int(coords[d][tid])) for d in range(3)}
                v = v + mixed.xreplace(sub)
            vals.append(v)
        offs_sym = [sympy.expand(v - vals[0]) for v in vals]
        offs_sym = [o if o.is_Integer else simplify(o, bounds) for o in offs_sym]
        n = len(vals)
        if not all(o.is_Integer for o in offs_sym):
            out.append(_Partial(n, Pattern.IRREGULAR, None, None, None, None, 1))
            continue
        offs = tuple(int(o) for o in offs_sym)
        steps = {offs[i + 1] - offs[i] for i in range(n - 1)}
        stride: sympy.Expr | None
        if n == 1 or steps == {0}:
            pattern, stride = Pattern.BROADCAST, sympy.Integer(0)
        elif len(steps) == 1:
            st = steps.pop()
            stride = sympy.Integer(st)
            pattern = Pattern.CONTIGUOUS if st == width else Pattern.STRIDED
        else:
            pattern, stride = Pattern.IRREGULAR, None
        # lane 0's index = rest_sym + c0 with rest_sym a proven multiple of g_rest
        c0 = vals[0] if vals[0].is_Integer else None
        if c0 is None:
            c0_align = _alignment(sympy.expand(vals[0]), bounds)
            residues, align = list(range(0, per, min(c0_align, g_rest))), min(c0_align, g_rest)
        else:
            residues = sorted({(int(c0) + g_rest * j) % per for j in range(per)})
            align = math.gcd(g_rest, int(c0) % per or per)
        counts = []
        for res in residues:
            sec: set[int] = set()
            for o in offs:
                lo = (res + o) * ELEM
                sec.update(range(lo // SECTOR, (lo + width * ELEM - 1) // SECTOR + 1))
            counts.append(len(sec))
        useful = ELEM * len({o + j for o in offs for j in range(width)})
        out.append(_Partial(n, pattern, stride, offs, (min(counts), max(counts)), useful, align))
    return out


def _stride(index: sympy.Expr, warp: _Warp, b: dict, n: int) -> tuple[sympy.Expr | None, tuple[str, ...]]:
    """``index(l+1) - index(l)`` over ``0 <= l < n-1`` with the proofs engine (None: not uniform)."""
    if warp.symbolic_lane is None or n < 2:
        return None, ()
    b = {s: e for s, e in b.items() if s not in _T}
    at = index.xreplace(warp.symbolic_lane)
    nxt = at.xreplace({LANE: LANE + 1})
    diff = sympy.expand(nxt - at)
    proof: tuple[str, ...] = ()
    try:
        from tilec.proofs.context import Context
        from tilec.proofs.simplify import simplify as prove

        ctx = Context().bound(LANE, n - 1)
        for s, e in b.items():
            ctx.bound(s, e)
        res = prove(diff, ctx)
        diff = sympy.expand(res.expr)
        proof = tuple(str(res.trace).splitlines())
    except ImportError:  # proofs engine optional: sympy's own evaluation only
        pass
    if LANE in diff.free_symbols:
        return None, proof
    return diff, proof


def _alignment(base: sympy.Expr, b: dict) -> int:
    """The largest g in 8, 4, 2, 1 with ``base % g == 0`` proven (g elements = 4g bytes)."""
    for g in (SECTOR // ELEM, 4, 2):
        m = sympy.Mod(base, g)  # sympy decides the plain cases; the proofs engine the rest
        if m == 0 or (m.has(sympy.floor, sympy.Mod) and simplify(m, b) == 0):
            return g
    return 1


def _merge(acc: GlobalAccess, parts: list[_Partial], proved: sympy.Expr | None,
           proof: tuple[str, ...]) -> AccessReport:
    full = [p for p in parts if p.lanes == max(q.lanes for q in parts)]  # partial last warp aside
    pats = {p.pattern for p in full}
    strides = {p.stride for p in full}
    offsets = {p.offsets for p in full}
    known = [p.sectors for p in full if p.sectors is not None]
    stride = full[0].stride if len(strides) == 1 else None
    if proved is not None and proved.is_Integer:
        for p in full:
            if p.offsets is not None and p.offsets != tuple(i * int(proved) for i in range(p.lanes)):
                raise InternalError(f"{acc.tensor}: proved lane stride {proved} but lane offsets "
                                    f"are {p.offsets}")
    if proved is not None and stride is None and all(p.offsets is None for p in full):
        stride = proved  # symbolic sizes: the proof is all we have
    pattern = full[0].pattern if len(pats) == 1 else Pattern.IRREGULAR
    if pattern is Pattern.IRREGULAR and stride is not None and stride.free_symbols:
        pattern = Pattern.STRIDED
    useful = [p.useful for p in full]
    return AccessReport(
        tensor=acc.tensor, kind=acc.kind, what=acc.what, index=acc.index, width=acc.width,
        lanes=full[0].lanes, pattern=pattern, stride=stride,
        offsets=full[0].offsets if len(offsets) == 1 else None,
        sectors=max(s[1] for s in known) if len(known) == len(full) else None,
        sectors_min=min(s[0] for s in known) if len(known) == len(full) else None,
        useful_bytes=max(useful) if all(u is not None for u in useful) else None,  # type: ignore[type-var]
        alignment=min(p.alignment for p in full),
        proof=proof,
    )


def explain_coalescing(fusion: GemmFusion | SimtPlan) -> str:
    """A readable table of :func:`analyze` with each stride's proof, for ``tilec explain``.

    >>> from tilec.ir import GemmFusion, ParallelType as P
    >>> f = GemmFusion(256, 256, 256, dtype="fp32")
    >>> _ = f.c.split(0, 32).split(2, 32).reorder([0, 2, 1, 3, 4]).merge(2)
    >>> _ = f.c.parallelize(0, P.BIDx).parallelize(1, P.BIDy).parallelize(2, P.TIDx)
    >>> print(explain_coalescing(f).splitlines()[6])
      A load  broadcast    stride 0       1 sector  (ideal 1)   broadcast
    """
    from tilec.transforms.simt.banks import explain_banks
    from tilec.transforms.simt.hierarchy import describe_hierarchy

    plan = fusion if isinstance(fusion, SimtPlan) else lower_simt(fusion)
    reports = analyze(plan)
    dx, dy, dz = plan.block
    lines = [*describe_hierarchy(plan), "", f"coalescing (warp = {WARP} lanes of tid = x + {dx}*(y + {dy}*z), "
             f"block ({dx}, {dy}, {dz}), 32-byte sectors, fp32)", ""]
    for r in reports:
        stride = "irregular" if r.stride is None else f"stride {r.stride}"
        if r.sectors is None:
            sec = "sectors ?"
        elif r.sectors == r.sectors_min:
            sec = f"{r.sectors:>2} sector{'s' if r.sectors != 1 else ' '}"
        else:
            sec = f"{r.sectors_min}-{r.sectors} sectors"
        ideal = "" if r.ideal_sectors is None else f"(ideal {r.ideal_sectors})"
        lines.append(f"  {r.tensor} {r.kind:<5} {r.pattern.value:<12} {stride:<13} {sec:<9} "
                     f"{ideal:<11} {r.verdict}")
    lines.append("")
    for r in reports:
        lines.append(f"{r.tensor} {r.kind} ({r.what}), {r.width * 32}-bit per lane:")
        lines.append(f"  index = {r.index}")
        if r.offsets is not None:
            lines.append(f"  lane offsets = {list(r.offsets)}")
        lines.append(f"  lane 0 index proven a multiple of {r.alignment}")
        if r.stride is not None:
            lines.append(f"  index(l+1) - index(l) = {r.stride} for 0 <= l < {r.lanes - 1}")
        lines += ["    " + p for p in r.proof]
    lines += ["", explain_banks(plan)]
    if plan.notes:
        lines += ["", "notes:"] + ["  " + n for n in plan.notes]
    return "\n".join(lines)


def predicted_counters(plan: SimtPlan) -> dict[str, int]:
    """Whole-kernel global-memory totals the analysis predicts (Nsight Compute's
    ``l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum`` and ``..._st.sum``, with their requests),
    for shapes whose tiles are full and whose sector counts are exact.

    Requests per warp: staged, each tile copy ``iters`` per K tile; unstaged, one A load per M
    register point and one B load per N vector per k; the C store once per register point
    (staged through shared memory: once per copy of the CTA's tile, ``CStage.iters``).
    """
    warps = plan.grid[0] * plan.grid[1] * plan.grid[2] * ceil_div(plan.threads, WARP)
    rm, rn = plan.reg_count("M"), plan.reg_count("N") // plan.vec_c
    out = {"global_ld_sectors": 0, "global_st_sectors": 0, "global_ld_requests": 0,
           "global_st_requests": 0}
    for acc, rep in zip(plan.global_accesses(), analyze(plan, prove=False), strict=True):
        if rep.sectors is None or rep.sectors != rep.sectors_min:
            return {}
        st = plan.staging
        if acc.kind == "store":  # per register point, or the staged epilogue's copies
            n = plan.c_stage.iters if plan.c_stage is not None else rm * rn
        elif st is not None:
            n = (st.a if acc.tensor == "A" else st.b).iters * st.k_tiles
        else:
            n = plan.K * (rm if acc.tensor == "A" else rn)
        key = "ld" if acc.kind == "load" else "st"
        out[f"global_{key}_sectors"] += warps * n * rep.sectors
        out[f"global_{key}_requests"] += warps * n
    return out
