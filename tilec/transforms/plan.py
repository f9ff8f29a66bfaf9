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

from tilec.ir.types import DType
from tilec.policy import PolicyEnum

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


class InputPrecision(PolicyEnum, label="input precision"):
    """How an fp32 dot is computed.

    IEEE: exact fp32 products (slow on tensor cores; the only mode Triton's interpreter gets right).
    TF32: tensor-core tf32 (10-bit mantissa products); the GPU default for fp32 in Triton.
    """

    IEEE = "ieee"
    TF32 = "tf32"


class Decomposition(PolicyEnum, label="decomposition"):
    """How the M x N x K iteration space is cut into work units for CTAs.

    DATA_PARALLEL: one CTA per output tile, whole K. Best when tiles fill whole waves.
    SPLIT_K: every tile's K range cut into ``splits`` equal parts; partials need a fix-up.
      Fills the machine for few, deep tiles; costs S-1 extra partial tiles of traffic per tile.
    STREAM_K: the tiles x k-iterations space is cut evenly over ``grid`` CTAs; perfectly
      balanced, but CTAs work at different K offsets at once (worse L2 reuse) and most tiles
      need a fix-up.
    DP_ONE_SK_WAVE: full waves data-parallel, the tiles of the last partial wave (plus one full
      wave when that partial wave is small) in Stream-K. Keeps L2 reuse of DP, removes the tail.
    TWO_TILE_SK_DP: the first Stream-K region (each SK CTA gets between one and two tiles of
      work) runs first, then full DP waves that hide the fix-up synchronisation.
    STREAM_K_PP: Stream-K++: ``sk_waves`` (0..7) trailing waves in Stream-K, the rest DP;
      0 is data-parallel, a large value approaches Stream-K.
    """

    DATA_PARALLEL = "dp"
    SPLIT_K = "splitk"
    STREAM_K = "streamk"
    DP_ONE_SK_WAVE = "dp_1sk"
    TWO_TILE_SK_DP = "sk2_dp"
    STREAM_K_PP = "skpp"


class Fixup(PolicyEnum, label="fix-up"):
    """How partial tiles (split-K, Stream-K) are combined into C.

    ATOMIC: each partial is atomically added into an fp32 buffer; fastest, not bitwise
      reproducible (the order of additions varies between runs).
    DETERMINISTIC: partials go to a workspace; the CTA that finishes a tile last (atomic ticket)
      sums them in K order and writes C. Bitwise reproducible; one extra pass over partials.
    REDUCE_KERNEL: partials go to a workspace and a second kernel reduces them in K order.
      Reproducible, no inter-CTA synchronisation, one extra launch.
    """

    ATOMIC = "atomic"
    DETERMINISTIC = "deterministic"
    REDUCE_KERNEL = "reduce_kernel"


class LoadKind(PolicyEnum, label="load kind"):
    """How an operand tile reaches the CTA.

    POINTER: masked pointer loads; handles any shape, alignment and ragged edges.
    TMA: tensor-memory-accelerator box loads (Triton tensor descriptors, CUDA cp.async.bulk.tensor);
      needs 16-byte aligned row strides; out-of-bounds elements are filled with zero by hardware.
    """

    POINTER = "pointer"
    TMA = "tma"


class MulticastMode(PolicyEnum, label="multicast mode"):
    """Who issues a multicast TMA load inside a sharing group of CTAs.

    LEADER: the lowest rank of each group issues the whole box with the group's mask.
    SLICED: each of the n CTAs of a group issues 1/n of the box (cut along the box's outermost
      dimension) with the group's mask (CUTLASS style); spreads TMA issue over the group.
    """

    LEADER = "leader"
    SLICED = "sliced"


@dataclass(frozen=True)
class TileOrder:
    """Where the linear tile index ``t`` lands in the C tile grid.

    ``tile_m``/``tile_n`` are sympy expressions of ``index`` (and nothing else unknown at launch);
    ``num_tiles`` counts the linear indices walked (it may exceed tiles_m * tiles_n when the
    order pads to whole cluster groups: such tiles fail ``alive``).
    ``ctas``: the CTAs of the schedule's own walk, ``t = round * ctas + pid`` (0: unknown); a
    backend that runs another work split maps a tile back to (round, pid) with it.
    """

    index: sympy.Symbol
    tile_m: sympy.Expr
    tile_n: sympy.Expr
    num_tiles: sympy.Expr
    tiles_m: int
    tiles_n: int
    description: str = "row-major"
    ctas: int = 0

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

    ``group`` > 1 (CUDA clusters, set by lowering): the split is over groups of ``group``
    consecutive linear tiles and clusters of ``group`` CTAs, so every CTA of a cluster runs the
    same K range (multicast shares each stage); then ``sk_tiles`` counts groups and ``sk_ctas``
    clusters, while ``grid`` still counts CTAs.
    """

    kind: Decomposition
    grid: int
    splits: int = 1
    sk_tiles: int = 0
    sk_ctas: int = 0
    sk_first: bool = False
    sk_waves: int = 0
    fixup: Fixup = Fixup.ATOMIC
    group: int = 1


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
