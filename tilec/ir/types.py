"""Enumerations of the IR: iteration types, parallel types (with their hardware meaning),
memory spaces and element types; the policy a schedule chooses (decomposition, fix-up, load kind,
multicast mode, input precision) and the frozen values that carry it from the user's verbs to
lowering (:class:`DecompositionChoice`, :class:`KernelOptions`)."""

from __future__ import annotations

import enum
from dataclasses import dataclass

from tilec.policy import PolicyEnum


class IterType(enum.Enum):
    """What an IterDomain iterates over.

    ITERATION: an output axis; each index is a distinct element.
    REDUCTION: summed over (K of the GEMM); may not merge with an iteration axis.
    BROADCAST: every index names the same element (N for operand A, M for operand B); it may
      carry an expanded extent so that it replays the consumer's schedule, but it never
      launches work and never takes part in "same data" relations.
    """

    ITERATION = "i"
    REDUCTION = "r"
    BROADCAST = "b"


class ParallelType(enum.Enum):
    """How a loop axis is executed; the value is the hardware index it binds to.

    Grid level: BIDx/y/z = blockIdx (CTA in grid); with clusters BIDx = CIDx * clusterDim.x +
    RankX. CIDx/y/z = %clusterid (cluster in grid). RankX/Y/Z = %cluster_ctaid (CTA rank inside its
    cluster; the linear %cluster_ctarank is RankX + cx * (RankY + cy * RankZ)).
    Inside a CTA: TIDx/y/z = threadIdx. Multicast: a slice of one TMA box issued by one CTA of a
    sharing group (sliced mode). Bulk: inside a TMA box (no loop, index 0 in the issuing code).
    Serial: a plain loop. Unroll: an unrolled loop. Vectorize: one vector access. Mma: an axis of
    the tensor-core instruction's tile.
    """

    SERIAL = "S"
    BIDx = "blockIdx.x"
    BIDy = "blockIdx.y"
    BIDz = "blockIdx.z"
    CIDx = "clusterIdx.x"
    CIDy = "clusterIdx.y"
    CIDz = "clusterIdx.z"
    RankX = "cluster_ctaid.x"
    RankY = "cluster_ctaid.y"
    RankZ = "cluster_ctaid.z"
    TIDx = "threadIdx.x"
    TIDy = "threadIdx.y"
    TIDz = "threadIdx.z"
    Multicast = "multicast"
    Bulk = "bulk"
    Unroll = "unroll"
    Vectorize = "vectorize"
    Mma = "mma"

    @property
    def dim(self) -> int | None:
        """0, 1, 2 for the x, y, z hardware index types; None for the others."""
        return _DIM.get(self)

    @property
    def is_block(self) -> bool:
        return self in (ParallelType.BIDx, ParallelType.BIDy, ParallelType.BIDz)

    @property
    def is_cluster(self) -> bool:
        return self in (ParallelType.CIDx, ParallelType.CIDy, ParallelType.CIDz)

    @property
    def is_rank(self) -> bool:
        return self in (ParallelType.RankX, ParallelType.RankY, ParallelType.RankZ)

    @property
    def is_thread(self) -> bool:
        return self in (ParallelType.TIDx, ParallelType.TIDy, ParallelType.TIDz)

    @property
    def is_hardware_index(self) -> bool:
        """Bound to a hardware index (launches work along it)."""
        return self.is_block or self.is_cluster or self.is_rank or self.is_thread

    @property
    def symbol_name(self) -> str | None:
        """The loop-index symbol name used in index maps for this hardware index."""
        return _SYMBOL.get(self)


_DIM = {
    ParallelType.BIDx: 0, ParallelType.BIDy: 1, ParallelType.BIDz: 2,
    ParallelType.CIDx: 0, ParallelType.CIDy: 1, ParallelType.CIDz: 2,
    ParallelType.RankX: 0, ParallelType.RankY: 1, ParallelType.RankZ: 2,
    ParallelType.TIDx: 0, ParallelType.TIDy: 1, ParallelType.TIDz: 2,
}  # fmt: skip

_SYMBOL = {
    ParallelType.BIDx: "bidx", ParallelType.BIDy: "bidy", ParallelType.BIDz: "bidz",
    ParallelType.CIDx: "cidx", ParallelType.CIDy: "cidy", ParallelType.CIDz: "cidz",
    ParallelType.RankX: "rank_x", ParallelType.RankY: "rank_y", ParallelType.RankZ: "rank_z",
    ParallelType.TIDx: "tidx", ParallelType.TIDy: "tidy", ParallelType.TIDz: "tidz",
}  # fmt: skip


class MemoryType(enum.Enum):
    GLOBAL = "global"
    SHARED = "shared"
    REGISTER = "register"


class DType(PolicyEnum, label="dtype",
            aliases={"float16": "fp16", "half": "fp16", "bfloat16": "bf16", "float32": "fp32",
                     "float": "fp32"}):
    """Element type of A, B and C (accumulation is always fp32).

    >>> DType.parse("float16"), DType("BF16")
    (<DType.FP16: 'fp16'>, <DType.BF16: 'bf16'>)
    """

    FP16 = "fp16"
    BF16 = "bf16"
    FP32 = "fp32"

    @property
    def nbytes(self) -> int:
        return 4 if self is DType.FP32 else 2


class BLayout(PolicyEnum, enum.StrEnum, label="B layout",
              hints={"kn": "K x N, row-major", "nk": "given as N x K"}):
    """How operand B is given in memory (a ``str``: ``BLayout.NK == "nk"``).

    KN: K x N, row-major (N contiguous), the mathematical layout; what the SIMT kernels read.
    NK: N x K, row-major (K contiguous), i.e. B transposed; what Hopper's WGMMA reads for a
      K-major B, so the CUDA tensor-core path wants it.
    """

    KN = "kn"
    NK = "nk"


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
    DP_FRONT_TAIL: the full waves data-parallel, one CTA per tile; the partial last wave's T
      tiles cut at one K index A: their fronts [0, A) run by T CTAs together (K in step), their
      tails [A, k_iters) as Stream-K over the wave's other CTAs. Printed by the SIMT printer.
    """

    DATA_PARALLEL = "dp"
    SPLIT_K = "splitk"
    STREAM_K = "streamk"
    DP_ONE_SK_WAVE = "dp_1sk"
    TWO_TILE_SK_DP = "sk2_dp"
    STREAM_K_PP = "skpp"
    DP_FRONT_TAIL = "dp_ft"


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


SK_WAVES_MAX = 7  # Stream-K++: 0..7 trailing waves in Stream-K (seed 001)

# CTAs per cluster: 8 portable, 16 at most (a multicast mask has 16 bits) with non_portable_cluster
PORTABLE_CLUSTER = 8
MAX_CLUSTER = 16
SMEM_LIMIT = 227 * 1024  # bytes of shared memory one CTA may use on sm_90


@dataclass(frozen=True)
class DecompositionChoice:
    """What a schedule asks of the work decomposition (``fusion.decompose``); lowering's
    ``decomposition`` pass turns it into a :class:`~tilec.transforms.plan.WorkSplit`.

    ``kind=None`` is ``auto``: the cost model chooses. ``sms=None``: the Stream-K family spreads
    work over the schedule's grid.

    >>> DecompositionChoice(Decomposition.SPLIT_K, splits=4).describe()
    'splitk'
    >>> DecompositionChoice(None).describe()
    'auto'
    """

    kind: Decomposition | None = Decomposition.DATA_PARALLEL
    splits: int = 1
    sk_waves: int = 1
    fixup: Fixup = Fixup.ATOMIC
    sms: int | None = None

    def describe(self) -> str:
        """The kind as the user spells it: ``auto`` or the decomposition's value."""
        return "auto" if self.kind is None else self.kind.value


class L2Hint(PolicyEnum, enum.StrEnum, label="evict"):
    """The L2 eviction hint of an operand's TMA loads (CUDA; a ``str``: ``L2Hint.LAST == "last"``).

    NORMAL: no hint. FIRST: ``evict_first``, lines read once. LAST: ``evict_last``, lines other
    CTAs read again.
    """

    NORMAL = "normal"
    FIRST = "first"
    LAST = "last"


class Epilogue(PolicyEnum, enum.StrEnum, label="epilogue"):
    """How the CUDA kernel writes its C tile (docs/cuda_backend.md, "Epilogue").

    TMA: registers -> two staging boxes in shared memory -> TMA stores. TMA_TILE: the whole tile
    staged, its stores overlap the next tile. DIRECT: registers -> global. OVERLAP: the tile is
    packed to 16 bits in registers and stored from there while the next tile's MMAs run.
    """

    TMA = "tma"
    TMA_TILE = "tma_tile"
    DIRECT = "direct"
    OVERLAP = "overlap"


class Target(PolicyEnum, enum.StrEnum, label="target"):
    """Which backend a plan is for: it decides loads, layouts and what can be kept.

    TRITON: pointer or tensor-descriptor loads; no clusters (Triton cannot issue multicast):
      a cluster schedule keeps its tile order and each CTA loads its own tiles (noted in the
      plan).
    CUDA: sm_90a TMA + WGMMA, clusters and multicast; B given N x K or K x N; with a cluster
      the work split is made per cluster (every CTA of a cluster keeps one K range).
    """

    TRITON = "triton"
    CUDA = "cuda"


# the values as text (the CLI's choices, messages)
EVICTS = tuple(h.value for h in L2Hint)
EPILOGUES = tuple(e.value for e in Epilogue)


@dataclass(frozen=True)
class KernelOptions:
    """Kernel-level choices a schedule makes (``fusion.set_kernel``); ``None`` leaves each to
    lowering (the target's default, or for ``load`` TMA where the strides allow it).

    stages: software-pipeline depth of the K loop; warps: warps per CTA; load: how operand tiles
    are loaded (:class:`LoadKind`); epilogue: how the CUDA kernel writes C (:class:`Epilogue`;
    None: lowering's choice); evict: the CUDA kernel's L2 eviction hints of A's and B's TMA
    loads (:class:`L2Hint`; None: lowering's rule); prefetch: how many k-iterations ahead of its
    loads the CUDA producer prefetches A's and B's boxes into L2 (``cp.async.bulk.prefetch``;
    None or 0: none); swap_ab: the CUDA kernel computes each tile as C^T = B^T A^T (our N on
    wgmma's M, our M on its N: BM any multiple of 8; Triton ignores it).
    """

    stages: int | None = None
    warps: int | None = None
    load: LoadKind | None = None
    epilogue: Epilogue | None = None
    evict: tuple[L2Hint, L2Hint] | None = None
    prefetch: int | None = None
    swap_ab: bool = False
