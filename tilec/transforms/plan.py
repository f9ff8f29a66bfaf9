"""KernelPlan: the backend-neutral description of one GEMM kernel.

Lowering (``tilec.transforms.lower``) turns a scheduled fusion into a plan; each backend in
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

from dataclasses import dataclass, field

import sympy

from tilec.ir.types import (
    Decomposition,
    DType,
    Fixup,
    InputPrecision,
    LoadKind,
    MulticastMode,
)

__all__ = [
    "DType",
    "Decomposition",
    "Fixup",
    "InputPrecision",
    "KernelPlan",
    "LoadKind",
    "MulticastMode",
    "MulticastPlan",
    "OperandLoad",
    "TileOrder",
    "WorkSplit",
]


@dataclass(frozen=True)
class TileOrder:
    """Where the linear tile index ``t`` lands in the C tile grid.

    ``tile_m``/``tile_n`` are sympy expressions of ``index`` (and nothing else unknown at launch);
    ``num_tiles`` counts the linear indices walked (it may exceed tiles_m * tiles_n when the
    order pads to whole cluster groups: such tiles fail ``alive``).
    """

    index: sympy.Symbol
    tile_m: sympy.Expr
    tile_n: sympy.Expr
    num_tiles: sympy.Expr
    tiles_m: int
    tiles_n: int
    description: str = "row-major"

    @property
    def alive(self) -> sympy.Boolean:
        return sympy.And(sympy.Lt(self.tile_m, self.tiles_m), sympy.Lt(self.tile_n, self.tiles_n))

    def evaluate(self, t: int) -> tuple[int, int]:
        sub = {self.index: t}
        return int(self.tile_m.subs(sub)), int(self.tile_n.subs(sub))


@dataclass(frozen=True)
class WorkSplit:
    """The decomposition's numbers, as the kernel needs them.

    DATA_PARALLEL: tiles ``t = pid + r * grid`` for r = 0, 1, ... (persistent when grid < tiles).
    SPLIT_K: unit u in [0, num_tiles * splits): tile u // splits, K part u % splits;
      units ``u = pid + r * grid``.
    Stream-K family: the first (``sk_first``) or last ``sk_tiles`` tiles of the order are split
      evenly over ``sk_ctas`` CTAs by k-iterations; the other tiles go data-parallel over all
      ``grid`` CTAs.
    """

    kind: Decomposition
    grid: int
    splits: int = 1
    sk_tiles: int = 0
    sk_ctas: int = 0
    sk_first: bool = False
    sk_waves: int = 0
    fixup: Fixup = Fixup.ATOMIC


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
    facts: tuple[str, ...] = ()


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

    @property
    def k_iters(self) -> int:
        return -(-self.K // self.BK)

    @property
    def tiles(self) -> int:
        return self.order.tiles_m * self.order.tiles_n

    @property
    def c_dtype(self) -> DType:
        return self.out_dtype or self.dtype
