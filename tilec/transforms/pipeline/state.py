"""The state the lowering passes hand on: :class:`Lowering` (the schedule, the options of
:func:`~tilec.transforms.pipeline.lower` and the plan's parts filled in so far, printed by
:meth:`Lowering.summary` as the passes' before/after docstrings show it)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from tilec.ir import GemmFusion
from tilec.ir.types import Epilogue, L2Hint, Target
from tilec.transforms.plan import (
    InputPrecision,
    KernelPlan,
    MulticastMode,
    MulticastPlan,
    OperandLoad,
    SplitRule,
    TileOrder,
    WorkSplit,
)


@dataclass(frozen=True)
class Lowering:
    """What the passes hand on: the schedule and the options of :func:`lower` (given), and the
    plan's parts, filled in by the passes (``None`` / empty until then)."""

    fusion: GemmFusion = field(compare=False)
    target: Target
    params: Mapping[str, Any] = field(default_factory=dict, compare=False)
    symbolic: GemmFusion | None = field(default=None, compare=False)
    mode: MulticastMode = MulticastMode.LEADER
    use_multicast: bool = True
    input_precision: InputPrecision = InputPrecision.IEEE
    name: str | None = None
    # filled by the passes
    tile: tuple[int, int, int] | None = None  # tile_axes: (BM, BN, BK)
    order: TileOrder | None = None  # tile_order
    num_ctas: int = 0  # tile_order: CTAs of the schedule's grid
    persistent: bool = False  # tile_order: the CTAs walk the tiles in rounds
    work: WorkSplit | None = None  # decomposition: the split at the fusion's sizes
    split: SplitRule | None = None  # decomposition: how it follows the sizes
    multicasts: tuple[MulticastPlan | None, MulticastPlan | None] = (None, None)  # multicast
    a: OperandLoad | None = None  # legalize
    b: OperandLoad | None = None  # legalize
    cluster: tuple[int, int, int] = (1, 1, 1)  # legalize: the cluster launched
    num_warps: int = 0  # legalize
    num_stages: int = 0  # legalize
    epilogue: Epilogue | None = None  # legalize
    prefetch: int = 0  # legalize
    notes: tuple[str, ...] = ()

    @property
    def sizes(self) -> tuple[int, int, int]:
        f = self.fusion
        return int(f.M), int(f.N), int(f.K)

    def plan(self) -> KernelPlan:
        """The KernelPlan of a state every pass has run on."""
        assert self.tile and self.order and self.work and self.a and self.b, self.summary()
        M, N, K = self.sizes
        BM, BN, BK = self.tile
        return KernelPlan(
            name=self.name or f"tilec_gemm_{BM}x{BN}x{BK}",  # a configuration, any size
            M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, dtype=self.fusion.dtype, order=self.order,
            work=self.work, a=self.a, b=self.b, input_precision=self.input_precision,
            num_warps=self.num_warps, num_stages=self.num_stages, cluster=self.cluster,
            notes=self.notes, epilogue=self.epilogue,
            prefetch=self.prefetch, split=self.split,
        )

    def summary(self) -> str:
        """The parts filled in so far, one line each (what the pass docstrings show)."""
        M, N, K = self.sizes
        out = [f"{self.target.value}: C[{M}, {N}] += A[{M}, {K}] @ B, {self.fusion.dtype.value}"]
        if self.tile:
            out.append("tile: {}x{}x{}".format(*self.tile))
        if self.order:
            o = self.order
            c = o.concrete()
            out.append(f"order: t -> ({o.tile_m}, {o.tile_n}), {c.num_tiles} indices over "
                       f"{c.tiles_m} x {c.tiles_n} tiles, {self.num_ctas} CTAs"
                       + (" (persistent)" if self.persistent else ""))
        if self.work:
            w = self.work
            line = f"work: {w.kind.value}, grid {w.grid}"
            if w.split_k:
                line += f", splits {w.splits}"
            if w.stream_k:
                line += f", Stream-K tiles [{w.sk_start}, {w.sk_end}) over {w.sk_ctas} CTAs"
            if w.split_k or w.stream_k:
                line += f", fix-up {w.fixup.value}"
            out.append(line)
        for op, mc in zip("AB", self.multicasts, strict=True):
            if mc is not None:
                out.append(f"multicast {op}: {mc.mode.value}, "
                           f"{'closed' if mc.closed_form else 'general'} form, issue {mc.issue}")
        for op in (self.a, self.b):
            if op is not None:
                out.append(f"load {op.name}: {op.kind.value} box {op.box}"
                           + (" multicast" if op.multicast else "")
                           + (f", L2 evict {op.evict}" if op.evict is not L2Hint.NORMAL else ""))
        if self.num_warps:
            out.append(f"launch: cluster {self.cluster}, {self.num_warps} warps, "
                       f"{self.num_stages} stages"
                       + (f", epilogue {self.epilogue}"
                          if self.fusion.kernel_options.epilogue is not None else "")
                       + (f", L2 prefetch {self.prefetch} k-iterations ahead"
                          if self.prefetch else ""))
        return "\n".join(out)
