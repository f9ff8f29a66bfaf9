"""KernelPlan: the backend-neutral description of one GEMM kernel.

Lowering (``tilec.transforms.pipeline``) turns a scheduled fusion into a plan; each backend in
``tilec.codegen`` prints the same plan.  A feature in the plan is either printed by a backend or
refused by it with a :class:`~tilec.errors.UnsupportedError`; it is never silently dropped.

Everything that depends on the schedule is carried as data here: the tile order as sympy
expressions of the linear tile index ``t``, the work split (decomposition:
:class:`~tilec.transforms.worksplit.WorkSplit`, and the :class:`~tilec.transforms.decompose.SplitRule`
that makes it at any size), and per operand the load (box, multicast issue predicate and mask).  Backends print expressions with their own
printers; they never re-derive the schedule.

Example::

    >>> import sympy

    >>> t = sympy.Symbol("t", integer=True, nonnegative=True)
    >>> order = TileOrder(t, tile_m=sympy.floor(t / 4), tile_n=sympy.Mod(t, 4),
    ...                   num_tiles=sympy.Integer(8), tiles_m=2, tiles_n=4)
    >>> order.evaluate(5)
    (1, 1)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from functools import cached_property
from types import MappingProxyType

import sympy

from tilec.ir import ceil_div
from tilec.ir.types import (
    Decomposition,
    DType,
    Epilogue,
    Fixup,
    InputPrecision,
    L2Hint,
    LoadKind,
    MulticastMode,
)
from tilec.proofs.context import Fact
from tilec.transforms.decompose import SplitRule
from tilec.transforms.symbols import (
    CTA,
    IT_BEGIN,
    IT_END,
    ITER,
    PART,
    PID,
    SIZE_K,
    SIZE_M,
    SIZE_N,
    SIZES,
    TILE,
    UNIT,
    WORK_SYMBOLS,
    J,
    kernel_symbol,
)
from tilec.transforms.worksplit import WorkSplit

# the plan's parts and the names its expressions use, importable from here with the plan
__all__ = [
    "CTA",
    "ITER",
    "IT_BEGIN",
    "IT_END",
    "PART",
    "PID",
    "SIZES",
    "SIZE_K",
    "SIZE_M",
    "SIZE_N",
    "TILE",
    "UNIT",
    "WORK_SYMBOLS",
    "Counts",
    "DType",
    "Decomposition",
    "Epilogue",
    "Fixup",
    "InputPrecision",
    "J",
    "KernelPlan",
    "L2Hint",
    "LoadKind",
    "MulticastMode",
    "MulticastPlan",
    "OperandLoad",
    "ReleaseProtocol",
    "SplitRule",
    "TileOrder",
    "WorkSplit",
    "kernel_symbol",
]


class _Frozen:
    """Pickles and copies a frozen dataclass by its fields only (compiled evaluators and other
    caches kept on the value are rebuilt on first use)."""

    def __getstate__(self) -> dict[str, object]:
        return {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]


@dataclass(frozen=True)
class TileOrder(_Frozen):
    """Where the linear tile index ``t`` lands in the C tile grid, for every problem size.

    ``tile_m``/``tile_n`` are sympy expressions of ``index`` and the sizes :data:`SIZE_M`,
    :data:`SIZE_N` (nothing else unknown at launch); ``num_tiles`` (an expression of the sizes)
    counts the linear indices walked: it may exceed ``tiles_m * tiles_n`` when the order pads to
    whole cluster groups or persistent rounds (such tiles fail ``alive``). ``tiles_m`` and
    ``tiles_n`` are the C tile counts, ``ceiling(M/BM)`` and ``ceiling(N/BN)``.
    ``ctas``: the CTAs of the schedule's own walk, ``t = round * ctas + pid`` (an expression of
    the sizes when one CTA runs each tile; 0: unknown); a backend that runs another work split
    maps a tile back to (round, pid) with it.

    ``sizes`` binds the sizes for the integer questions (the plan's reference launch):
    :meth:`evaluate`, :meth:`is_alive`, :meth:`alive_tiles` answer at it, :meth:`concrete` is
    the order with every expression evaluated there, and :meth:`at` binds other sizes (the forms
    are shared). Printers print the symbolic forms, never the bound values.

    The one answer to "is tile t alive?" is :meth:`is_alive` (and its sympy form :attr:`alive`
    on coordinates in range); the coordinates are compiled once, by the exact integer evaluator.

    >>> t = sympy.Symbol("t", integer=True, nonnegative=True)
    >>> tn = sympy.ceiling(SIZE_N / 32)
    >>> o = TileOrder(t, sympy.floor(t / tn), sympy.Mod(t, tn), sympy.ceiling(SIZE_M / 32) * tn,
    ...               sympy.ceiling(SIZE_M / 32), tn, sizes=((SIZE_M, 64), (SIZE_N, 96)))
    >>> o.evaluate(4), o.concrete().num_tiles, o.at(M=32, N=32).concrete().num_tiles
    ((1, 1), 6, 1)
    >>> o2 = TileOrder(t, sympy.Mod(t, 4), sympy.floor(t / 4), sympy.Integer(12), 3, 3)
    >>> o2.is_alive(2), o2.is_alive(3), o2.is_alive(12), list(o2.alive_tiles())[:4]
    (True, False, False, [0, 1, 2, 4])
    """

    index: sympy.Symbol
    tile_m: sympy.Expr
    tile_n: sympy.Expr
    num_tiles: sympy.Expr
    tiles_m: sympy.Expr | int
    tiles_n: sympy.Expr | int
    description: str = "row-major"
    ctas: sympy.Expr | int = 0
    # the coordinates as the IR's index map gives them, before the theorems simplified them
    # (for explain's proof; not part of the order's identity)
    raw_tile_m: sympy.Expr | None = field(default=None, compare=False)
    raw_tile_n: sympy.Expr | None = field(default=None, compare=False)
    # the sizes the integer questions are answered at: ((SIZE_M, 512), (SIZE_N, 384))
    sizes: tuple[tuple[sympy.Symbol, int], ...] = ()

    @property
    def alive(self) -> sympy.Boolean:
        """The tile at ``index`` exists (for indices below ``num_tiles``)."""
        return sympy.And(sympy.Lt(self.tile_m, self.tiles_m), sympy.Lt(self.tile_n, self.tiles_n))

    def at(self, **sizes: int) -> TileOrder:
        """The same order with its integer questions answered at other sizes (``M=``, ``N=``)."""
        bound = dict(self.sizes)
        for k, v in sizes.items():
            if k not in ("M", "N", "K"):
                raise TypeError(f"TileOrder.at: sizes are M, N, K but got {k}")
            bound[SIZES[k]] = int(v)
        return replace(self, sizes=tuple(sorted(bound.items(), key=lambda kv: kv[0].name)))

    def concrete(self) -> TileOrder:
        """The order with every expression evaluated at :attr:`sizes` (coordinates over
        ``index`` only, counts as integers)."""
        return self._concrete

    @cached_property
    def _concrete(self) -> TileOrder:
        b = dict(self.sizes)

        def num(e: sympy.Expr | int) -> int:
            v = sympy.sympify(e).xreplace(b)
            if not v.is_Integer:
                raise TypeError(
                    f"TileOrder: {e} is not a number at sizes {self.sizes or 'unbound'}")
            return int(v)

        return TileOrder(
            self.index, sympy.sympify(self.tile_m).xreplace(b),
            sympy.sympify(self.tile_n).xreplace(b),
            sympy.Integer(num(self.num_tiles)), num(self.tiles_m), num(self.tiles_n),
            self.description, num(self.ctas), self.raw_tile_m, self.raw_tile_n, self.sizes)

    @cached_property
    def coords(self) -> Callable[[int], tuple[int, int]]:
        """``t -> (tile_m(t), tile_n(t))`` at :attr:`sizes`, as exact integer Python."""
        from tilec.proofs.evaluate import compile_int

        syms = (SIZE_M, SIZE_N)
        fn = compile_int([self.tile_m, self.tile_n], [self.index, *syms])
        b = dict(self.sizes)
        m_size, n_size = (b.get(s, 0) for s in syms)

        def coords(t: int) -> tuple[int, int]:
            m, n = fn(t, m_size, n_size)
            return int(m), int(n)

        return coords

    def evaluate(self, t: int) -> tuple[int, int]:
        """``(tile_m(t), tile_n(t))``; may raise ZeroDivisionError past a grouped raster's end."""
        return self.coords(t)

    def is_alive(self, t: int) -> bool:
        """Whether linear index ``t`` is walked and names a C tile (padded indices do not)."""
        return t in self._alive

    def alive_tiles(self) -> Mapping[int, tuple[int, int]]:
        """``t -> (tile_m, tile_n)`` for every alive index, in order of ``t`` (read-only)."""
        return self._alive

    @cached_property
    def _alive(self) -> Mapping[int, tuple[int, int]]:
        c = self.concrete()
        out: dict[int, tuple[int, int]] = {}
        for t in range(int(c.num_tiles)):
            try:
                m, n = self.coords(t)
            except ZeroDivisionError:  # past the last band of a grouped raster: padding
                continue
            if 0 <= m < c.tiles_m and 0 <= n < c.tiles_n:
                out[t] = (m, n)
        return MappingProxyType(out)

@dataclass(frozen=True)
class MulticastPlan:
    """A multicast TMA load of one operand inside a cluster (see DESIGN "Multicast derivation").

    All expressions are sympy over ``variables`` (``rank`` = %cluster_ctarank, ``i_rt`` the
    persistent round, ``cidx`` the cluster index, ...) and the plan's sizes.
    ``same`` is over ``r1``/``r2`` (two ranks) and the other variables: the general form
    evaluates it at run time; ``issue``/``mask`` are the closed forms when ``closed_form``.
    ``guard`` (may be ``true``) selects the closed form at run time when it rests on facts
    that are unknown until launch; otherwise the general form runs.
    """

    mode: MulticastMode
    cluster_size: int
    variables: tuple[sympy.Symbol, ...]
    same: sympy.Boolean
    issue: sympy.Boolean
    mask: sympy.Expr
    slice_index: sympy.Expr | None
    slice_count: sympy.Expr | None
    closed_form: bool
    guard: sympy.Boolean = sympy.true
    facts: tuple[Fact, ...] = ()  # what the closed form rests on; guard is their conjunction
    # where the closed form holds: "proved" (wherever the facts hold), "narrowing" (sound
    # wherever they hold), "launch" (this launch only: guard is its parameter values); None: general
    scope: str | None = None


@dataclass(frozen=True)
class OperandLoad:
    """How operand ``name`` ("A" or "B") is brought into shared memory per k-iteration."""

    name: str
    kind: LoadKind
    box: tuple[int, int]  # (rows, cols) of the tile as stored in global memory
    transposed: bool = False  # B given as N x K
    multicast: MulticastPlan | None = None
    evict: L2Hint = L2Hint.NORMAL  # the L2 eviction hint of its loads (CUDA)
    # lowering's size-dependent hint: (condition over M, N, hint), the hint where the condition
    # holds at a launch's sizes (the CUDA kernel picks it per launch); None: evict at every size
    evict_where: tuple[sympy.Basic, L2Hint] | None = None


@dataclass(frozen=True)
class ReleaseProtocol:
    """How the CTAs of a CUDA cluster release a pipeline stage (docs/cuda_backend.md, "Stage
    release"), decided by lowering (:mod:`tilec.transforms.pipeline.release`).  The exact
    release: per rank X, ``receivers[X]`` the bit mask of the CTAs X's loads land in, X itself
    included (R'(X)), and ``senders[X]`` the CTAs that load into X (S'(X) = {Y : X in R'(Y)}),
    whose empty barriers X's consumers arrive on.  Empty tuples: the all-cluster release (the
    masks vary per round, or no cluster is wholly alive with them).

    >>> ReleaseProtocol((0b11, 0b10), (0b01, 0b11)).exact, ReleaseProtocol().exact
    (True, False)
    """

    receivers: tuple[int, ...] = ()
    senders: tuple[int, ...] = ()

    @property
    def exact(self) -> bool:
        """Whether the exact release is printed (else the all-cluster one)."""
        return bool(self.receivers)


@dataclass(frozen=True)
class Counts:
    """The counts a kernel derives from its run-time sizes, as sympy expressions of
    :data:`SIZE_M`, :data:`SIZE_N`, :data:`SIZE_K`.

    >>> c = Counts(sympy.ceiling(SIZE_M / 128), sympy.ceiling(SIZE_N / 64),
    ...            sympy.ceiling(SIZE_M / 128) * sympy.ceiling(SIZE_N / 64),
    ...            sympy.ceiling(SIZE_K / 64))
    >>> c.at(M=300, N=64, K=64)
    {'tiles_m': 3, 'tiles_n': 1, 'num_tiles': 3, 'k_iters': 1}
    """

    tiles_m: sympy.Expr
    tiles_n: sympy.Expr
    num_tiles: sympy.Expr  # linear tile indices walked (the order's padding included)
    k_iters: sympy.Expr

    def at(self, M: int, N: int, K: int) -> dict[str, int]:
        """The counts at one launch."""
        b = {SIZE_M: M, SIZE_N: N, SIZE_K: K}
        return {f.name: int(getattr(self, f.name).xreplace(b)) for f in fields(self)}


@dataclass(frozen=True)
class KernelPlan:
    """One GEMM kernel, C[M, N] = A[M, K] @ B[K, N], ready for any backend."""

    name: str
    M: int
    N: int
    K: int
    BM: int
    BN: int
    BK: int
    dtype: DType
    order: TileOrder
    work: WorkSplit
    a: OperandLoad
    b: OperandLoad
    out_dtype: DType | None = None  # None: same as dtype
    input_precision: InputPrecision = InputPrecision.IEEE
    num_warps: int = 4
    num_stages: int = 3
    cluster: tuple[int, int, int] = (1, 1, 1)
    notes: tuple[str, ...] = field(default_factory=tuple)
    # CUDA: how C is written (the schedule's set_kernel(epilogue=), else lowering's choice);
    # None: the target writes C its own way (Triton)
    epilogue: Epilogue | None = None
    # CUDA: the producer prefetches A's and B's boxes this many k-iterations ahead into L2 (0: no)
    prefetch: int = 0
    # how ``work`` follows the sizes (``work`` is this rule at M, N, K); None: fixed sizes
    split: SplitRule | None = None
    # lowered over this launch's numbers (the schedule could not be replayed over symbolic
    # M, N, K): every formula holds at M x N x K only, and the launchers refuse other sizes
    fixed_sizes: bool = False
    # CUDA: the cluster's stage release (lowering's choice); None: not decided (Triton plans)
    release: ReleaseProtocol | None = None
    # CUDA: each CTA computes its tile as C^T = B^T A^T (the schedule's set_kernel(swap_ab=)):
    # our N on wgmma's M (64 per warpgroup), our M on its N (BM any multiple of 8)
    swap_ab: bool = False

    @property
    def k_iters(self) -> int:
        """k-iterations of a tile at the reference launch (printers: :attr:`counts`)."""
        return ceil_div(self.K, self.BK)

    @property
    def tiles(self) -> int:
        """C tiles at the reference launch (printers: :attr:`counts`)."""
        o = self.order.concrete()
        return int(o.tiles_m) * int(o.tiles_n)

    @property
    def sizes(self) -> dict[sympy.Symbol, int]:
        """The reference launch: ``{SIZE_M: M, SIZE_N: N, SIZE_K: K}``."""
        return {SIZE_M: self.M, SIZE_N: self.N, SIZE_K: self.K}

    @property
    def facts(self) -> tuple[sympy.Boolean, ...]:
        """The conditions on the run-time sizes of the kernel's *facts variant*: the tiles divide
        M, N and K (no boundary masks), and each multicast plan's guard (its closed forms).
        The general variant assumes none of them; a launcher tests them with
        :meth:`facts_hold` and picks the variant.

        >>> from tests.plans import plan
        >>> p = plan(64, 64, 64, 32, 32, 16)
        >>> p.facts
        (Eq(Mod(M, 32), 0), Eq(Mod(N, 32), 0), Eq(Mod(K, 16), 0))
        >>> p.facts_hold(64, 96, 32), p.facts_hold(64, 96, 33)
        (True, False)
        """
        out = [sympy.Eq(sympy.Mod(SIZE_M, self.BM), 0), sympy.Eq(sympy.Mod(SIZE_N, self.BN), 0),
               sympy.Eq(sympy.Mod(SIZE_K, self.BK), 0)]
        for op in (self.a, self.b):
            g = op.multicast.guard if op.multicast is not None else sympy.true
            for cond in (g.args if isinstance(g, sympy.And) else (g,)):
                if cond is not sympy.true and cond not in out:
                    out.append(cond)
        return tuple(out)

    def facts_hold(self, M: int, N: int, K: int) -> bool:
        """Whether every one of :attr:`facts` holds at M, N, K."""
        env = {SIZE_M: M, SIZE_N: N, SIZE_K: K}
        return all(bool(f.xreplace(env)) for f in self.facts)

    @property
    def counts(self) -> Counts:
        """The size-dependent counts as expressions of M, N, K (what a printer prints)."""
        o = self.order
        return Counts(tiles_m=sympy.sympify(o.tiles_m), tiles_n=sympy.sympify(o.tiles_n),
                      num_tiles=sympy.sympify(o.num_tiles),
                      k_iters=ceil_div(SIZE_K, self.BK))

    @property
    def c_dtype(self) -> DType:
        return self.out_dtype or self.dtype
