"""WorkSplit: one decomposition's numbers, and the index formulas the kernels print.

A decomposition cuts the ``num_tiles x k_iters`` iteration space into work units run by ``grid``
CTAs; the formula methods give, as sympy expressions of the kernel variables
(:mod:`tilec.transforms.symbols`), which unit, tile, K range and workspace slot each CTA has.
How a split is made and follows the problem size: :mod:`tilec.transforms.decompose`.
"""

from __future__ import annotations

from dataclasses import dataclass, fields

import sympy

from tilec.errors import InternalError
from tilec.ir import ceil_div
from tilec.ir.types import Decomposition, Fixup
from tilec.transforms.symbols import ITER, PID, WORK_SYMBOLS, Formula  # noqa: F401 (doctests)

__all__ = ["WorkSplit"]


@dataclass(frozen=True)
class WorkSplit:
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
        return ceil_div(self.sk_tiles * self.k_iters, self.sk_ctas)

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
