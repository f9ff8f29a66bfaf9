"""Enumerations of the IR: iteration types, parallel types (with their hardware meaning),
memory spaces and element types."""

from __future__ import annotations

import enum

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
