"""The state the lowering passes hand on: :class:`Lowering` (the schedule, the
:class:`LowerOptions` of :func:`~tilec.transforms.pipeline.lower`, the :class:`IRFacts` asked of
the IR once, and the plan's parts filled in so far, printed by :meth:`Lowering.summary` as the
passes' before/after docstrings show it)."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from tilec.errors import TilecError
from tilec.ir import GemmFusion, IndexMap, LaunchDims, index_map, infer_launch
from tilec.ir.types import Epilogue, L2Hint, Target
from tilec.transforms.memo import TRANSFORMS
from tilec.transforms.plan import (
    InputPrecision,
    KernelPlan,
    MulticastMode,
    MulticastPlan,
    OperandLoad,
    ReleaseProtocol,
    SplitRule,
    TileOrder,
    WorkSplit,
)

if TYPE_CHECKING:
    from tilec.transforms.multicast.derive import MulticastDerivation


@dataclass(frozen=True)
class LowerOptions:
    """What :func:`~tilec.transforms.pipeline.lower` is asked besides the fusion.

    ``target``: the backend (:class:`~tilec.ir.types.Target`); ``params``: the schedule's
    parameters (for the multicast derivation); ``symbolic``: the schedule built with symbolic
    parameters (for closed forms; None: its replay over M, N, K); ``mode``: the multicast mode;
    ``multicast``: False loads every operand plainly; ``input_precision``: of fp32 dots;
    ``name``: the kernel's name (None: ``tilec_gemm_BMxBNxBK``); ``derivation``: a callable
    taking the launch (:attr:`IRFacts.launch`, inferred once per lowering) and returning the
    multicast derivation of the schedule in ``mode`` at that launch, derived with
    ``cluster_k_ranges`` and over ``symbolic`` (else its replay over M, N, K), called only where
    the multicast pass applies (the caller's cache: :meth:`tilec.runtime.session.Session.derivation`);
    None: the pass derives it itself. Text is parsed into the enums.

    >>> LowerOptions(target="CUDA", mode="sliced").mode
    <MulticastMode.SLICED: 'sliced'>
    """

    target: Target = Target.TRITON
    params: Mapping[str, Any] = field(default_factory=dict, compare=False)
    symbolic: GemmFusion | None = field(default=None, compare=False)
    mode: MulticastMode = MulticastMode.LEADER
    multicast: bool = True
    input_precision: InputPrecision = InputPrecision.IEEE
    name: str | None = None
    derivation: Callable[[LaunchDims], MulticastDerivation] | None = field(
        default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "target", Target(self.target))
        object.__setattr__(self, "mode", MulticastMode(self.mode))
        object.__setattr__(self, "input_precision", InputPrecision(self.input_precision))
        object.__setattr__(self, "params", MappingProxyType(dict(self.params or {})))


@dataclass(frozen=True)
class IRFacts:
    """What lowering asks of the IR, asked once per lowering: the schedule replayed over the
    symbolic sizes ``M``, ``N``, ``K`` (``generic``; None where a call cannot be replayed), the
    view the plan's forms are read from (``generic``, else the fusion), C's index map over it,
    the launch at the fusion's sizes (validated there) and the launch of the view (its grid in
    M, N, K)."""

    generic: GemmFusion | None
    view: GemmFusion
    c_map: IndexMap
    launch: LaunchDims
    view_launch: LaunchDims

    @classmethod
    def of(cls, fusion: GemmFusion) -> IRFacts:
        generic = over_sizes(fusion)
        view = generic if generic is not None else fusion
        launch = infer_launch(fusion)
        return cls(generic, view, index_map(view.c), launch,
                   infer_launch(view) if generic is not None else launch)


def over_sizes(fusion: GemmFusion) -> GemmFusion | None:
    """The fusion's schedule replayed with M, N, K the symbols ``SIZE_M``, ``SIZE_N``,
    ``SIZE_K`` (every other number as recorded): the same configuration for every problem size.
    None when a recorded call cannot be replayed over symbols.

    >>> from tilec.runtime.loader import load_schedule
    >>> f = load_schedule("examples/gemm_basic.py", {"M": 256, "N": 384, "K": 128}).fusion
    >>> g = over_sizes(f)
    >>> g.M, infer_launch(g).grid
    (M, (ceiling(N/128), ceiling(M/128), 1))
    """
    return _replayed(str(fusion.schedule))


def _replayed(program: str) -> GemmFusion | None:
    return TRANSFORMS.replayed.get_or(program, lambda: _replay(program))


def _replay(program: str) -> GemmFusion | None:
    text, n = re.subn(r"GemmFusion\(M=[^,]+, N=[^,]+, K=[^,]+,",
                      "GemmFusion(M='M', N='N', K='K',", program, count=1)
    assert n == 1, program.splitlines()[:2]
    try:
        return GemmFusion.replay(text)
    except (TilecError, TypeError, ValueError):
        return None


@dataclass(frozen=True)
class Lowering:
    """What the passes hand on: the schedule, the options of :func:`lower` and the IR's facts
    (given), and the plan's parts, filled in by the passes (``None`` / empty until then).

    >>> from tilec.runtime.loader import load_schedule
    >>> f = load_schedule("examples/gemm_basic.py", {"M": 256, "N": 384, "K": 128}).fusion
    >>> s = Lowering(f, LowerOptions(target="cuda"))
    >>> s.target, s.ir.launch.grid, s.ir.view_launch.grid
    (<Target.CUDA: 'cuda'>, (3, 2, 1), (ceiling(N/128), ceiling(M/128), 1))
    """

    fusion: GemmFusion = field(compare=False)
    options: LowerOptions = field(default_factory=LowerOptions)
    ir: IRFacts = field(default=None, compare=False, repr=False)  # type: ignore[assignment]
    # filled by the passes
    tile: tuple[int, int, int] | None = None  # tile_axes: (BM, BN, BK)
    order: TileOrder | None = None  # tile_order
    num_ctas: int = 0  # tile_order: CTAs of the schedule's grid
    persistent: bool = False  # tile_order: the CTAs walk the tiles in rounds
    work: WorkSplit | None = None  # decomposition (cluster_split: over clusters)
    split: SplitRule | None = None  # decomposition: how it follows the sizes
    multicasts: tuple[MulticastPlan | None, MulticastPlan | None] = (None, None)  # multicast
    a: OperandLoad | None = None  # loads
    b: OperandLoad | None = None  # loads
    cluster: tuple[int, int, int] = (1, 1, 1)  # cluster_split: the cluster launched
    num_warps: int = 0  # legalize
    num_stages: int = 0  # legalize
    epilogue: Epilogue | None = None  # legalize (CUDA)
    release: ReleaseProtocol | None = None  # legalize (CUDA): the cluster's stage release
    prefetch: int = 0  # legalize
    notes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.ir is None:  # the first state: ask the IR (later states share its answers)
            object.__setattr__(self, "ir", IRFacts.of(self.fusion))

    @property
    def target(self) -> Target:
        return self.options.target

    @property
    def kernel_name(self) -> str:
        """The options' name, else ``tilec_gemm_BMxBNxBK`` (a configuration, any size)."""
        assert self.tile is not None
        return self.options.name or "tilec_gemm_{}x{}x{}".format(*self.tile)

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
            name=self.kernel_name,
            M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, dtype=self.fusion.dtype, order=self.order,
            work=self.work, a=self.a, b=self.b, input_precision=self.options.input_precision,
            num_warps=self.num_warps, num_stages=self.num_stages, cluster=self.cluster,
            notes=self.notes, epilogue=self.epilogue,
            prefetch=self.prefetch, split=self.split, release=self.release,
            fixed_sizes=self.ir.generic is None,
            swap_ab=self.fusion.kernel_options.swap_ab and self.target is not Target.TRITON,
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
