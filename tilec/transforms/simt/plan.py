"""The SIMT kernel's data: :class:`SimtPlan` (a thread-level fp32 GEMM kernel, what
:func:`~tilec.transforms.simt.lower.lower_simt` derives from the schedule and the SIMT printer
prints), its run-time :class:`SimtVariant` s, the register tile (:class:`RegAxis`), the staged K
tiles (:class:`TileCopy`, :class:`SmemStaging`) and the memory instructions the analyses read
(:class:`GlobalAccess`, :class:`SharedAccess`). Values only: lowering, staging and the bank
and coalescing analyses build on them."""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np
import sympy

from tilec.ir import index_symbol
from tilec.ir.threads import ThreadOptions
from tilec.ir.types import DecompositionChoice
from tilec.transforms.symbols import SIZE_K, SIZE_M, SIZE_N
from tilec.transforms.worksplit import WorkSplit

__all__ = [
    "ALIGN",
    "IT",
    "LDA",
    "LDB",
    "LDC",
    "SIZE_K",
    "SIZE_M",
    "SIZE_N",
    "TID",
    "CStage",
    "GlobalAccess",
    "RegAxis",
    "SharedAccess",
    "SimtPlan",
    "SimtVariant",
    "SmemStaging",
    "TileCopy",
    "register_points",
    "vec0",
]

TID = index_symbol("tid")  # linear thread id: tidx + Dx*(tidy + Dy*tidz)
IT = index_symbol("it")  # iteration of a cooperative copy
LDA, LDB, LDC = (sympy.Symbol(n, integer=True, positive=True) for n in ("lda", "ldb", "ldc"))
ALIGN = 4  # fp32 elements of a 16-byte (128-bit) access


@dataclass(frozen=True)
class TileCopy:
    """A cooperative global -> shared copy of one operand tile (rows x cols, row-major source).

    Thread ``tid`` at iteration ``it`` moves ``vec`` consecutive elements: row
    ``row(idx)``, column ``col(idx)`` with ``idx = tid + it * threads`` (guarded by
    ``idx < rows * cols / vec`` when ``guard_idx``).
    """

    operand: str
    rows: int
    cols: int
    vec: int
    iters: int
    guard_idx: bool
    row: sympy.Expr  # of TID, IT
    col: sympy.Expr
    global_index: sympy.Expr  # element offset in the operand, of TID, IT, bid and K-tile symbols
    guard: sympy.Boolean  # in-bounds condition of the vector (true when proven)
    pitch: int  # shared-memory row pitch in elements
    transposed: bool  # stored [col][row]
    swizzle: int = 0  # transposed tiles: 0, or the vector width w of the rotation (see ``place``)
    stride: sympy.Expr | int = 0  # elements between a thread's copies it and it + 1, passed to
    # the kernel as an argument (``fusion.copy_addresses("stride" / "byte_stride")``; a multiple
    # of the operand's leading dimension, which the launcher knows at run time); 0: each copy's
    # index printed whole
    edge: sympy.Expr | None = None  # None: whole vectors; else the elements of the row from the
    # copy's first one to the row's end (``N - n``): where ``guard`` (then only the K bound)
    # holds the copy moves ``min(vec, max(edge, 0))`` of them (cp.async's source size) and
    # zero-fills the rest, so a vector may straddle the row's end where the leading dimension
    # keeps its start aligned

    def base_index(self) -> sympy.Expr:
        """``global_index`` of the thread's first copy (``it = 0``)."""
        return self.global_index.xreplace({IT: 0})

    def place(self, k: sympy.Expr, m: sympy.Expr) -> sympy.Expr:
        """The column of shared row ``k`` that holds tile element ``(m, k)`` of a transposed
        tile: ``m``, or swizzled (``fusion.smem_swizzle``) ``w*(m//w) + (m + k//(32/w)) % w``:
        each aligned ``w``-vector stays in place, its elements rotated by ``k // (32/w)``.

        With rows ``w`` words past a multiple of 32 (the pad lowering picks), ``32/w``
        consecutive k rows start in distinct groups of ``w`` banks; the rotation sends the
        next ``32/w`` rows to the other banks of each group, so the transposed stores of 32
        consecutive k of one row hit 32 banks.  Elements ``m`` a multiple of ``w`` apart stay
        as far apart (a copy's iterations keep their immediate offsets)."""
        w = self.swizzle
        if w <= 1:
            return m
        return w * sympy.floor(m / w) + sympy.Mod(m + self.rotation(k), w)

    def rotation(self, k: sympy.Expr) -> sympy.Expr:
        """How far the elements of a ``w``-vector of row ``k`` are rotated (swizzled tiles):
        element ``m0 + v`` of the vector at ``m0`` is its component ``(v + rotation) % w``."""
        return sympy.floor(k / (32 // self.swizzle)) if self.swizzle > 1 else sympy.Integer(0)


@dataclass(frozen=True)
class SmemStaging:
    BK: int
    stages: int
    ko: sympy.Symbol  # K-tile loop symbol
    ki: sympy.Symbol  # inner K symbol
    k_tiles: sympy.Expr | int  # K tiles: ceil(K / BK), an int for the reference launch
    a: TileCopy
    b: TileCopy

    @property
    def smem_bytes(self) -> int:
        a = self.BK * self.a.pitch
        b = self.BK * self.b.pitch
        return 4 * self.stages * (a + b)


@dataclass(frozen=True)
class CStage:
    """The epilogue staged through shared memory (:mod:`tilec.transforms.simt.cstage`): each
    thread puts its register tile in a ``BM x pitch`` tile ``Cs`` (the K tiles' buffers, free
    after the main loop; ``put_width``-wide ``st.shared`` at word ``m_local * pitch + n_local``),
    then copy ``it`` of thread ``tid`` writes ``width`` elements of row ``row``, column ``col``
    of the CTA's tile to C (``tid + it * threads`` numbers them along the rows: a warp's
    lanes on consecutive columns), guarded by ``m < M`` / ``n < N`` where the variant does not
    prove them and by ``tid + it * threads < BM * BN / width`` when ``guard_idx``."""

    pitch: int
    put_width: int
    width: int
    iters: int
    guard_idx: bool
    row: sympy.Expr  # of TID, IT
    col: sympy.Expr
    guard_m: bool
    guard_n: bool
    wavefronts: int  # the register tile's puts: worst request over every warp
    ideal: int

    def word(self) -> sympy.Expr:
        """The word of ``Cs`` copy ``it`` of thread ``tid`` reads."""
        return self.row * self.pitch + self.col


@dataclass(frozen=True)
class SharedAccess:
    """One shared-memory instruction: ``width`` consecutive words from word ``word`` of ``array``
    (one buffer; the buffer offset is uniform and does not count), per active lane."""

    array: str  # "As" | "Bs"
    kind: str  # "load" | "store"
    word: sympy.Expr  # of the thread symbols and loop symbols
    width: int  # words per lane: 1, 2, 4
    what: str
    active: sympy.Boolean = sympy.true  # lanes that take part (a tile copy's last iteration)
    per_tile: int = 1  # instructions per K tile (register points, copy iterations, k-slices)


@dataclass(frozen=True)
class RegAxis:
    """One axis of the thread's register tile."""

    symbol: sympy.Symbol
    extent: int
    dim: str  # "M" or "N"
    vector: bool  # bound to Vectorize


@dataclass(frozen=True)
class GlobalAccess:
    """One global memory instruction of the kernel: element ``index`` of ``tensor``, ``width``
    consecutive fp32 elements per thread, under ``bounds`` for every symbol but the threads'."""

    tensor: str
    kind: str  # "load" or "store"
    index: sympy.Expr
    width: int
    what: str


@dataclass(frozen=True)
class SimtPlan:
    """A SIMT fp32 GEMM kernel: C[M, N] = A[M, K] @ B[K, N], all row-major.

    Lowered at the reference launch (``M``, ``N``, ``K`` integers: the analyses, tables and
    tests read it) and, in :func:`variants_of` (lowered on first use, cached), over the
    run-time sizes: each variant a plan whose sizes and leading dimensions are the symbols
    ``M``, ``N``, ``K``, ``lda``, ``ldb``, ``ldc`` (or multiples of them, the variant's facts).
    The printer prints the variants only."""

    name: str
    M: int
    N: int
    K: int
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    thread_symbols: tuple[sympy.Symbol, ...]  # bound tidx/tidy/tidz
    block_symbols: tuple[sympy.Symbol, ...]  # bound bidx/bidy/bidz
    m_expr: sympy.Expr
    n_expr: sympy.Expr
    k_expr: sympy.Expr
    m_base: sympy.Expr
    n_base: sympy.Expr
    m_local: sympy.Expr
    n_local: sympy.Expr
    BM: int
    BN: int
    reg: tuple[RegAxis, ...]
    k_symbol: sympy.Symbol | None  # unstaged: the serial K loop
    staging: SmemStaging | None
    vec_m: int  # width of As reads (staged)
    vec_n: int  # width of B reads and C stores
    bounds: dict[sympy.Symbol, sympy.Expr]  # every loop symbol -> extent
    predicates: tuple[sympy.Boolean, ...]  # guard of a thread's C element (IR predicates)
    guard_a: sympy.Boolean  # unstaged A load guard
    guard_b: sympy.Boolean
    options: ThreadOptions = field(default_factory=ThreadOptions)
    schedule: str = ""
    notes: tuple[str, ...] = field(default_factory=tuple)
    work: WorkSplit | None = None  # split-K / Stream-K units over the grid's tiles (simt.work)
    # the leading dimensions (elements between rows) of A, B, C: K, N, N at the reference
    lda: sympy.Expr | int = 0
    ldb: sympy.Expr | int = 0
    ldc: sympy.Expr | int = 0
    vec_c: int = 1  # width of the global accesses along N: C stores (and unstaged B loads)
    decomposition: DecompositionChoice | None = None  # the work split's kind (None: one CTA per tile)
    variants: tuple[SimtVariant, ...] = ()  # the run-time kernels, most facts first (variants_of)
    c_stage: CStage | None = None  # the epilogue through shared memory (None: straight to C)

    @property
    def threads(self) -> int:
        x, y, z = self.block
        return x * y * z

    @property
    def tid_linear(self) -> sympy.Expr:
        """``tid = x + Dx*(y + Dy*z)`` over the bound thread symbols."""
        dx, dy, _ = self.block
        sx, sy, sz = (index_symbol(n) if index_symbol(n) in self.thread_symbols else sympy.Integer(0)
                      for n in ("tidx", "tidy", "tidz"))
        return sx + dx * (sy + dy * sz)

    def thread_axes(self) -> tuple[sympy.Symbol, sympy.Symbol, sympy.Symbol]:
        """``(tidx, tidy, tidz)``: the symbols a thread's indices are written in."""
        return tuple(index_symbol(n) for n in ("tidx", "tidy", "tidz"))  # type: ignore[return-value]

    def regs(self, dim: str) -> list[RegAxis]:
        return [r for r in self.reg if r.dim == dim]

    def reg_count(self, dim: str) -> int:
        return int(np.prod([r.extent for r in self.regs(dim)], dtype=np.int64))

    def flat(self, dim: str) -> sympy.Expr:
        """The accumulator index of a register point along ``dim`` (mixed radix, loop order)."""
        out: sympy.Expr = sympy.Integer(0)
        for r in self.regs(dim):
            out = out * r.extent + r.symbol
        return out

    def vector_axis(self, dim: str) -> RegAxis | None:
        return next((r for r in self.regs(dim) if r.vector), None)

    def global_accesses(self) -> list[GlobalAccess]:
        """The kernel's global loads and stores, as the printer emits them."""
        zero_n = {r.symbol: 0 for r in self.regs("N") if r.vector and self.vec_c > 1}
        c_index = (self.m_expr * self.ldc + self.n_expr).xreplace(zero_n)
        out = []
        if self.staging is None:
            k = self.k_expr
            out.append(GlobalAccess("A", "load", self.m_expr * self.lda + k, 1, "A[m, k] per thread"))
            out.append(GlobalAccess("B", "load", (k * self.ldb + self.n_expr).xreplace(zero_n),
                                    self.vec_c, "B[k, n] per thread"))
        else:
            for cp in (self.staging.a, self.staging.b):
                idx = cp.global_index.xreplace({TID: self.tid_linear})
                out.append(GlobalAccess(cp.operand, "load", idx, cp.vec,
                                        f"{cp.operand} tile copy to shared memory"))
        cs = self.c_stage
        if cs is None:
            out.append(GlobalAccess("C", "store", c_index, self.vec_c, "C[m, n] from registers"))
        else:  # the staged epilogue: copy IT of the CTA's tile, by rows
            idx = ((self.m_base + cs.row) * self.ldc + self.n_base + cs.col).xreplace({TID: self.tid_linear})
            out.append(GlobalAccess("C", "store", idx, cs.width, "C[m, n] from shared memory, by rows"))
        return out

    def shared_accesses(self) -> list[SharedAccess]:
        """The kernel's shared-memory instructions (word offsets within one buffer), as printed."""
        st = self.staging
        if st is None:
            return []
        out = []
        for cp, arr in ((st.a, "As"), (st.b, "Bs")):
            row, col = (e.xreplace({TID: self.tid_linear}) for e in (cp.row, cp.col))
            active = sympy.true
            if cp.guard_idx:
                active = sympy.Lt(self.tid_linear + IT * self.threads, cp.rows * cp.cols // cp.vec)
            how = "cp.async copy" if self.options.async_copy else "tile copy"
            if cp.transposed:  # one scalar store per vector element j: T[col + j][row]
                for j in range(cp.vec):
                    what = f"{how}, element {j} of each {32 * cp.vec}-bit load" if cp.vec > 1 \
                        else f"{how}, transposed"
                    if cp.swizzle:
                        what += ", swizzled"
                    out.append(SharedAccess(arr, "store",
                                            (col + j) * cp.pitch + cp.place(col + j, row), 1,
                                            what, active, cp.iters))
            else:
                out.append(SharedAccess(arr, "store", row * cp.pitch + col, cp.vec, how,
                                        active, cp.iters))
        for dim, arr, cp, w, local in (("M", "As", st.a, self.vec_m, self.m_local),
                                       ("N", "Bs", st.b, self.vec_n, self.n_local)):
            v0 = vec0(self.reg, dim) if w > 1 else {}
            out.append(SharedAccess(arr, "load", st.ki * cp.pitch + local.xreplace(v0), w,
                                    f"k-slice of the {dim} register tile"
                                    + (", swizzled" if cp.swizzle else ""), sympy.true,
                                    st.BK * self.reg_count(dim) // w))
        return out

    def access_bounds(self, c_copies: bool = False) -> dict[sympy.Symbol, sympy.Expr]:
        b = dict(self.bounds)
        if self.staging is not None:
            # with ``c_copies``, also the staged epilogue's copies (global accesses: a superset
            # of the tile copies' iterations, sound for bounds; the bank counts enumerate exactly)
            more = self.c_stage.iters if c_copies and self.c_stage is not None else 0
            b[IT] = sympy.Integer(max(self.staging.a.iters, self.staging.b.iters, more))
        return b


@dataclass(frozen=True)
class SimtVariant:
    """One run-time kernel of a SIMT plan: the plan lowered over the run-time sizes under
    ``facts`` (C conditions on ``M``, ``N``, ``K``, ``lda``, ``ldb``, ``ldc`` and the pointers
    ``A``, ``B``, ``C``; none: the general kernel, always correct).  A fact is a size written as a
    multiple (``N = 128*N_q``), so the IR and the proofs drop the predicates and keep the
    vectors it makes true; ``back`` maps the multiples' symbols back to the run-time sizes
    (``N_q -> N/128``) for printing."""

    name: str
    facts: tuple[str, ...]
    plan: SimtPlan
    back: dict[sympy.Symbol, sympy.Expr]


def vec0(reg: list[RegAxis] | tuple[RegAxis, ...], dim: str) -> dict[sympy.Symbol, int]:
    """The vector axes of ``dim`` at 0: the first element of each vector."""
    return {r.symbol: 0 for r in reg if r.dim == dim and r.vector}


def register_points(plan: SimtPlan, dim: str) -> list[dict[sympy.Symbol, int]]:
    """Every register index point along ``dim`` (loop order)."""
    axes = plan.regs(dim)
    return [dict(zip([a.symbol for a in axes], v, strict=True))
            for v in itertools.product(*(range(a.extent) for a in axes))]
