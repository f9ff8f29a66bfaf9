"""KernelPlan: the backend-neutral description of one GEMM kernel.

Lowering (``tilec.transforms.pipeline``) turns a scheduled fusion into a plan; each backend in
``tilec.codegen`` prints the same plan.  A feature in the plan is either printed by a backend or
refused by it with a :class:`~tilec.errors.UnsupportedError`; it is never silently dropped.

Everything that depends on the schedule is carried as data here: the tile order as sympy
expressions of the linear tile index ``t``, the work split (decomposition), and per operand the
load (box, multicast issue predicate and mask).  Backends print expressions with their own
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

from tilec.ir.types import (
    Decomposition,
    DType,
    Fixup,
    InputPrecision,
    LoadKind,
    MulticastMode,
)
from tilec.proofs.context import Fact

__all__ = [
    "DType",
    "Counts",
    "Decomposition",
    "Fixup",
    "InputPrecision",
    "KernelPlan",
    "LoadKind",
    "MulticastMode",
    "MulticastPlan",
    "OperandLoad",
    "SIZE_K",
    "SIZE_M",
    "SIZE_N",
    "SplitRule",
    "TileOrder",
    "WORK_SYMBOLS",
    "WorkSplit",
]


# the problem sizes as the plan's expressions name them (the kernels' run-time arguments M, N, K)
SIZE_M, SIZE_N, SIZE_K = (sympy.Symbol(n, integer=True, positive=True) for n in ("M", "N", "K"))
SIZES = {"M": SIZE_M, "N": SIZE_N, "K": SIZE_K}


def kernel_symbol(name: str) -> sympy.Symbol:
    """A nonnegative integer variable of the generated kernel (``pid``, ``tile``, ``u``, ...)."""
    return sympy.Symbol(name, integer=True, nonnegative=True)


# the variables the WorkSplit formulas are written over (the kernels' variables of the same name)
PID, UNIT, PART, TILE, J, CTA, ITER = (kernel_symbol(n) for n in ("pid", "u", "s", "tile", "j",
                                                                   "cta", "i"))
IT_BEGIN, IT_END = kernel_symbol("it_begin"), kernel_symbol("it_end")

Formula = sympy.Expr | int

# the work split's size-dependent numbers as a shape-generic kernel receives them (run-time
# arguments, or computed on the device from M, N, K): WorkSplit.symbolic()
WORK_SYMBOLS = {
    "grid": sympy.Symbol("GRID", integer=True, positive=True),
    "num_tiles": sympy.Symbol("NUM_TILES", integer=True, positive=True),
    "k_iters": sympy.Symbol("K_ITERS", integer=True, positive=True),
    "splits": sympy.Symbol("SPLITS", integer=True, positive=True),
    "sk_tiles": sympy.Symbol("SK_TILES", integer=True, nonnegative=True),
    "sk_ctas": sympy.Symbol("SK_CTAS", integer=True, nonnegative=True),
}


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
class WorkSplit(_Frozen):
    """The decomposition's numbers, and its index formulas as the kernel needs them.

    DATA_PARALLEL: tiles ``t = pid + r * grid`` for r = 0, 1, ... (persistent when grid < tiles).
    SPLIT_K: unit u in [0, num_tiles * splits): tile u // splits, K part u % splits;
      units ``u = pid + r * grid``.
    Stream-K family: the first (``sk_first``) or last ``sk_tiles`` tiles of the order (linear
      indices ``[sk_start, sk_end)``) are split evenly over ``sk_ctas`` CTAs by k-iterations
      (``sk_iters`` in all); the other tiles go data-parallel over all ``grid`` CTAs.

    ``group`` > 1 (CUDA clusters, set by lowering): the split is over groups of ``group``
    consecutive linear tiles and clusters of ``group`` CTAs, so every CTA of a cluster runs the
    same K range (multicast shares each stage); then ``num_tiles`` and ``sk_tiles`` count groups
    and ``sk_ctas`` clusters, while ``grid`` still counts CTAs.

    ``num_tiles`` counts the linear tile indices of the order walked, ``k_iters`` the
    k-iterations of one tile.

    The formula methods return sympy expressions of the kernel variables they are given (the
    module's ``PID``, ``TILE``, ... or any expression); a printer prints them as they are, and
    ``decompose.work_units`` is their brute-force oracle in the tests.

    >>> w = WorkSplit(Decomposition.STREAM_K, grid=3, num_tiles=2, k_iters=3, sk_tiles=2,
    ...               sk_ctas=3, sk_first=True)
    >>> w.sk_range(PID), w.sk_owner(ITER)
    ((2*pid, 2*pid + 2), floor(i/2 + 1/3))
    >>> [w.contributors(t) for t in range(2)], w.partial_slot(1, 0)
    ([2, 2], 3)
    """

    kind: Decomposition
    grid: int
    num_tiles: int
    k_iters: int
    splits: int = 1
    sk_tiles: int = 0
    sk_ctas: int = 0
    sk_first: bool = False
    sk_waves: int = 0
    fixup: Fixup = Fixup.ATOMIC
    group: int = 1

    def __post_init__(self) -> None:
        """The invariants every printer relies on (``make_work_split`` keeps them; a split that
        breaks one is a tilec bug, refused here once rather than in each printer)."""
        from tilec.errors import InternalError

        bad = []
        if self.grid < 1 or self.num_tiles < 0 or self.k_iters < 1 or self.group < 1:
            bad.append(f"grid {self.grid}, num_tiles {self.num_tiles}, k_iters "
                       f"{self.k_iters}, group {self.group}")
        if self.splits < 1:
            bad.append(f"{self.splits} K parts")
        if self.front_tail and not (self.sk_tiles < self.sk_ctas
                                    and 1 <= self.ft_tail_ctas <= self.ft_tail_iters):
            bad.append(f"front/tail: {self.sk_tiles} tiles, {self.sk_ctas} CTAs: some tail CTA "
                       f"would get no tail iteration")
        elif self.stream_k and not self.front_tail and not 1 <= self.sk_ctas <= self.sk_iters:
            bad.append(f"{self.sk_iters} Stream-K iterations over {self.sk_ctas} CTAs (some CTA "
                       f"would get none)")
        if not 0 <= self.sk_tiles <= self.num_tiles:
            bad.append(f"{self.sk_tiles} Stream-K tiles of {self.num_tiles}")
        if bad:
            raise InternalError(f"WorkSplit {self.kind.value}: " + "; ".join(bad))

    def symbolic(self) -> WorkSplit:
        """The same split with its size-dependent numbers the run-time symbols of
        :data:`WORK_SYMBOLS` (``GRID``, ``NUM_TILES``, ``K_ITERS``, ``SPLITS``, ``SK_TILES``,
        ``SK_CTAS``): the formula methods then give the expressions a shape-generic kernel
        prints over its run-time numbers (unvalidated: the numbers are checked per launch by
        :meth:`SplitRule.at`). Only the formula methods and the structural fields (``kind``,
        ``sk_first``, ``fixup``, ``group``) are meaningful on it.

        >>> w = WorkSplit(Decomposition.STREAM_K, grid=3, num_tiles=2, k_iters=3, sk_tiles=2,
        ...               sk_ctas=3, sk_first=True)
        >>> w.symbolic().sk_range(PID)
        (floor(K_ITERS*SK_TILES*pid/SK_CTAS), floor(K_ITERS*SK_TILES*(pid + 1)/SK_CTAS))
        """
        out = object.__new__(WorkSplit)
        for f in fields(self):
            object.__setattr__(out, f.name, getattr(self, f.name))
        for name, sym in WORK_SYMBOLS.items():
            if name != "splits" or self.kind is Decomposition.SPLIT_K:
                object.__setattr__(out, name, sym)
        return out

    # -- the regions --------------------------------------------------------------------
    @property
    def split_k(self) -> bool:
        """Tiles are cut into ``splits`` K parts (a split-K with one part is data-parallel; a
        symbolic part count may be more than one)."""
        return self.kind is Decomposition.SPLIT_K and self.splits != 1

    @property
    def sk_start(self) -> int:
        """First linear tile index of the Stream-K region (== sk_end when there is none)."""
        if self.kind in (Decomposition.DATA_PARALLEL, Decomposition.SPLIT_K) or self.sk_first:
            return 0
        return self.num_tiles - self.sk_tiles

    @property
    def sk_end(self) -> int:
        """One past the last linear tile index of the Stream-K region."""
        if self.kind in (Decomposition.DATA_PARALLEL, Decomposition.SPLIT_K):
            return 0
        return self.sk_tiles if self.sk_first else self.num_tiles

    @property
    def stream_k(self) -> bool:
        return self.sk_end > self.sk_start

    @property
    def sk_iters(self) -> int:
        """k-iterations of the Stream-K region, cut evenly over ``sk_ctas`` CTAs."""
        return self.sk_tiles * self.k_iters

    @property
    def dp_range(self) -> tuple[int, int]:
        """Linear tile indices run data-parallel (whole K) beside the Stream-K region."""
        if not self.stream_k:
            return (0, 0) if self.split_k else (0, self.num_tiles)
        return (self.sk_end, self.num_tiles) if self.sk_first else (0, self.sk_start)

    @property
    def partial_tiles(self) -> int:
        """Tiles whose partials need a fix-up (tickets): all under split-K, the Stream-K region."""
        if self.split_k:
            return self.num_tiles
        return self.sk_tiles if self.stream_k else 0

    @property
    def partial_slots(self) -> int:
        """Workspace slots of partials: one per split-K unit, two per Stream-K CTA (its first
        and its last tile); front/tail: ``ft_slots`` per tile."""
        if self.front_tail:
            return self.sk_tiles * self.ft_slots
        return self.num_tiles * self.splits if self.split_k else 2 * self.sk_ctas

    # -- front/tail (DP_FRONT_TAIL) -------------------------------------------------------
    @property
    def front_tail(self) -> bool:
        """The partial wave's tiles cut into fronts and streamed tails (``dp_ft``)."""
        return self.kind is Decomposition.DP_FRONT_TAIL and self.sk_tiles > 0

    @property
    def ft_front(self) -> int:
        """A: the fronts' k-iterations, ``ceil(T * k_iters / W)`` (T tiles, W CTAs): no tail CTA
        gets more (``T * (k_iters - A) <= (W - T) * A``)."""
        return -(-self.sk_tiles * self.k_iters // self.sk_ctas)

    @property
    def ft_tail_ctas(self) -> int:
        """The CTAs that stream the tails: W - T."""
        return self.sk_ctas - self.sk_tiles

    @property
    def ft_tail_iters(self) -> int:
        """The tails' k-iterations, T * (k_iters - A), cut evenly over the tail CTAs."""
        return self.sk_tiles * (self.k_iters - self.ft_front)

    def ft_tail_begin(self, t: Formula) -> Formula:
        """Tail CTA ``t``'s first tail iteration (tail iteration ``x`` is k-iteration
        ``A + x % (k_iters - A)`` of region tile ``x // (k_iters - A)``)."""
        return sympy.floor(sympy.sympify(t) * self.ft_tail_iters / self.ft_tail_ctas)

    def ft_tail_owner(self, x: Formula) -> Formula:
        """The tail CTA whose range holds tail iteration ``x``."""
        return sympy.floor(((sympy.sympify(x) + 1) * self.ft_tail_ctas - 1) / self.ft_tail_iters)

    @property
    def ft_slots(self) -> int:
        """Workspace slots per region tile: its front and the most tail pieces of any tile."""
        d = self.k_iters - self.ft_front
        owner = lambda x: ((x + 1) * self.ft_tail_ctas - 1) // self.ft_tail_iters  # noqa: E731
        return 1 + max(owner((f + 1) * d - 1) - owner(f * d) + 1 for f in range(self.sk_tiles))

    # -- split-K ------------------------------------------------------------------------
    def split_k_unit(self, u: Formula) -> tuple[Formula, Formula]:
        """Unit ``u`` -> (tile, K part)."""
        return sympy.floor(sympy.sympify(u) / self.splits), sympy.Mod(u, self.splits)

    def split_k_range(self, s: Formula) -> tuple[Formula, Formula]:
        """K part ``s`` -> its k-iterations ``[k_begin, k_end)``."""
        s = sympy.sympify(s)
        k, n = self.k_iters, self.splits
        return sympy.floor(s * k / n), sympy.floor((s + 1) * k / n)

    # -- Stream-K -----------------------------------------------------------------------
    def sk_range(self, cta: Formula) -> tuple[Formula, Formula]:
        """Stream-K CTA ``cta`` -> its region iterations ``[it_begin, it_end)``."""
        c = sympy.sympify(cta)
        total, ctas = self.sk_iters, self.sk_ctas
        return sympy.floor(c * total / ctas), sympy.floor((c + 1) * total / ctas)

    def sk_owner(self, i: Formula) -> Formula:
        """The Stream-K CTA whose range holds region iteration ``i`` (the largest c with
        ``c * sk_iters // sk_ctas <= i``)."""
        return sympy.floor(((sympy.sympify(i) + 1) * self.sk_ctas - 1) / self.sk_iters)

    def sk_tiles_of(self, it_begin: Formula, it_end: Formula) -> tuple[Formula, Formula]:
        """The region tiles ``[first, end)`` that iterations ``[it_begin, it_end)`` touch."""
        k = self.k_iters
        return (sympy.floor(sympy.sympify(it_begin) / k),
                sympy.floor((sympy.sympify(it_end) - 1) / k) + 1)

    def sk_unit_range(self, tile: Formula, it_begin: Formula,
                      it_end: Formula) -> tuple[Formula, Formula]:
        """The k-iterations ``[k_begin, k_end)`` of region tile ``tile`` inside
        ``[it_begin, it_end)``."""
        k, t = self.k_iters, sympy.sympify(tile)
        return sympy.Max(sympy.sympify(it_begin) - t * k, 0), sympy.Min(sympy.sympify(it_end) - t * k, k)

    def sk_first_tile(self, cta: Formula) -> Formula:
        """The first region tile of Stream-K CTA ``cta``."""
        return sympy.floor(self.sk_range(cta)[0] / self.k_iters)

    # -- partials (split-K and Stream-K) ------------------------------------------------
    def first_contributor(self, tile: Formula) -> Formula:
        """The first (lowest K) unit or CTA adding into partial-region tile ``tile``."""
        if self.split_k:
            return sympy.sympify(tile) * self.splits
        return self.sk_owner(sympy.sympify(tile) * self.k_iters)

    def contributors(self, tile: Formula) -> Formula:
        """How many partials partial-region tile ``tile`` gets."""
        if self.split_k:
            return sympy.sympify(self.splits)
        if self.front_tail:  # its front and the tail CTAs its tail spans
            d, t = self.k_iters - self.ft_front, sympy.sympify(tile)
            return self.ft_tail_owner(t * d + d - 1) - self.ft_tail_owner(t * d) + 2
        k = self.k_iters
        t = sympy.sympify(tile)
        return self.sk_owner(t * k + k - 1) - self.sk_owner(t * k) + 1

    def partial_slot(self, tile: Formula, j: Formula) -> Formula:
        """Workspace slot of the ``j``-th partial (K order) of partial-region tile ``tile``:
        split-K, ``tile * splits + j``; Stream-K, ``2 * cta`` when it is the CTA's first tile
        and ``2 * cta + 1`` when it is its last."""
        if self.front_tail:  # the front is partial 0, the tail pieces 1, 2, ... in K order
            return sympy.sympify(tile) * self.ft_slots + sympy.sympify(j)
        c = self.first_contributor(tile) + sympy.sympify(j)
        return c if self.split_k else self.sk_slot(c, tile)

    def sk_slot(self, cta: Formula, tile: Formula) -> Formula:
        """Workspace slot of Stream-K CTA ``cta``'s partial of region tile ``tile``: ``2 * cta``
        for the CTA's first tile, ``2 * cta + 1`` for its last."""
        c = sympy.sympify(cta)
        first = sympy.Eq(self.sk_first_tile(c), tile)
        return 2 * c + sympy.Piecewise((0, first), (1, True))


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
        """:func:`tilec.transforms.decompose.split_at`."""
        from tilec.transforms.decompose import split_at

        return split_at(self, M, N, K)

    def forms(self) -> dict[str, sympy.Expr]:
        """:func:`tilec.transforms.decompose.split_forms`."""
        from tilec.transforms.decompose import split_forms

        return split_forms(self)


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
    evict: str = "normal"  # "normal" | "first" | "last": L2 eviction hint


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
    b_transposed: bool = False  # B stored N x K
    notes: tuple[str, ...] = field(default_factory=tuple)
    # CUDA: how C is written (tilec.ir.types.EPILOGUES, the schedule's set_kernel(epilogue=)),
    # "auto": the printer's choice
    epilogue: str = "auto"
    # CUDA: the producer prefetches A's and B's boxes this many k-iterations ahead into L2 (0: no)
    prefetch: int = 0
    # how ``work`` follows the sizes (``work`` is this rule at M, N, K); None: fixed sizes
    split: SplitRule | None = None

    @property
    def k_iters(self) -> int:
        """k-iterations of a tile at the reference launch (printers: :attr:`counts`)."""
        return -(-self.K // self.BK)

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
                      k_iters=sympy.ceiling(SIZE_K / self.BK))

    @property
    def c_dtype(self) -> DType:
        return self.out_dtype or self.dtype
