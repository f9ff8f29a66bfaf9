"""The GEMM fusion: C[M, N] = sum_K A[M, K] * B[K, N], and propagation of C's schedule.

The user schedules ``fusion.c`` (logical ``[M, N, rK]``). :meth:`GemmFusion.propagate` replays
C's transforms onto the operand tiles in shared memory (nvFuser's transform propagation):
``A_smem`` has logical ``[M, K, bN]`` and ``B_smem`` ``[bM, K, N]``, the broadcast axes expanded
to C's extents, so every operand tile carries C's grid, cluster and persistent axes.  C's ``Mma``
axes (the tile of one MMA) become ``Bulk`` axes of the operands (the TMA box).

Which axes are the same M, N, K across A, B, C and the tiles is a networkx graph
(:attr:`GemmFusion.axis_graph`); its connected components are the three GEMM dimensions.

Example::

    >>> f = GemmFusion(M=256, N=256, K=64)
    >>> _ = f.c.split(0, 128).split(2, 128)
    >>> f.propagate()
    >>> print(f.a_smem)
    A_smem[iS.Mo{2}, iS.Mi{128}, bS.No{2}, bS.Ni{128}, iS.K{64}]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Literal, TypeVar

import sympy

from tilec.errors import FusionError, LaunchError, PolicyError
from tilec.ir.iterdomain import IterDomain, as_extent
from tilec.ir.tensorview import TensorView
from tilec.ir.threads import (
    ThreadOptions,
    check_copy_addresses,
    check_fma_order,
    check_lanes,
    check_min_blocks,
    check_pad,
    check_slices,
    check_stage_c,
    check_stages,
    check_swizzle,
)
from tilec.ir.trace import Schedule, paused
from tilec.ir.types import (
    EPILOGUES,
    EVICTS,
    MAX_CLUSTER,
    PORTABLE_CLUSTER,
    SK_WAVES_MAX,
    BLayout,
    Decomposition,
    DecompositionChoice,
    DType,
    Epilogue,
    Fixup,
    IterType,
    KernelOptions,
    L2Hint,
    LoadKind,
    MemoryType,
    ParallelType,
)

if TYPE_CHECKING:
    import networkx as nx


def _size(name: str, value: int | str | sympy.Expr) -> sympy.Expr:
    if isinstance(value, bool) or not isinstance(value, int | str | sympy.Expr):
        raise FusionError(f"GEMM size {name} must be a positive integer or a name but got {value!r}")
    if isinstance(value, int) and value <= 0:
        raise FusionError(f"GEMM size {name} must be a positive integer but got {value}")
    if isinstance(value, str) and not value.isidentifier():
        raise FusionError(f"GEMM size {name} must be a positive integer or a name but got {value!r}")
    ext = as_extent(value)
    if ext.is_positive is False or ext.is_integer is False:
        raise FusionError(f"GEMM size {name} must be a positive integer but got {value!r}")
    return ext


class GemmFusion:
    """A GEMM with its views; ``c`` is the view you schedule."""

    def __init__(
        self,
        M: int | str | sympy.Expr,
        N: int | str | sympy.Expr,
        K: int | str | sympy.Expr,
        dtype: DType | str = "bf16",
        b_layout: BLayout | str = "kn",
        *,
        non_portable_cluster: bool = False,
    ) -> None:
        self.M, self.N, self.K = _size("M", M), _size("N", N), _size("K", K)
        self.dtype = DType(dtype)
        self.b_layout = BLayout(b_layout)  # a str: compares equal to "kn" / "nk"
        if not isinstance(non_portable_cluster, bool):
            raise FusionError(f"non_portable_cluster must be True or False but got "
                              f"{non_portable_cluster!r}")
        self.non_portable_cluster = non_portable_cluster
        header = (f"fusion = GemmFusion(M={_arg(M)}, N={_arg(N)}, K={_arg(K)}, "
                  f"dtype={self.dtype.value!r}, b_layout={self.b_layout.value!r}"
                  + (", non_portable_cluster=True" if non_portable_cluster else "") + ")")
        self.schedule = Schedule(header)
        self.schedule.targets.update({"C": "fusion.c", "A_smem": "fusion.a_smem",
                                      "B_smem": "fusion.b_smem", "fusion": "fusion"})
        m, n, k = (IterDomain(d, e) for d, e in (("M", self.M), ("N", self.N), ("K", self.K)))
        self.a = TensorView("A", [m.fresh(), k.fresh()], dtype=self.dtype)
        b_axes = [k.fresh(), n.fresh()] if self.b_layout is BLayout.KN else [n.fresh(), k.fresh()]
        self.b = TensorView("B", b_axes, dtype=self.dtype)
        self.c = TensorView(
            "C", [m, n, k.fresh(iter_type=IterType.REDUCTION)], dtype=self.dtype,
            memory=MemoryType.REGISTER, trace=self.schedule,
        )
        self.a_smem: TensorView | None = None
        self.b_smem: TensorView | None = None
        self._propagated: object = None
        self._links: list[tuple[tuple[str, str], str, int]] = []
        self._graph: nx.Graph | None = None
        self._link_logical(self.a, self.b, self.c)
        self.cluster_dims: tuple[int, int, int] = (1, 1, 1)
        self.decomposition = DecompositionChoice()
        self.kernel_options = KernelOptions()
        self.thread_options = ThreadOptions()

    @classmethod
    def replay(cls, schedule: Schedule | str) -> GemmFusion:
        """Run a schedule trace (``fusion.schedule``, or its text) and return the fusion it
        builds.

        >>> f = GemmFusion(M=64, N=64, K=32)
        >>> _ = f.c.split(0, 16)
        >>> GemmFusion.replay(f.schedule).c.structure() == f.c.structure()
        True
        """
        namespace: dict[str, object] = {}
        exec(compile(str(schedule), "<tilec schedule>", "exec"), namespace)
        fusion = namespace["fusion"]
        assert isinstance(fusion, cls), fusion
        return fusion

    def decompose(self, kind: Decomposition | str = "dp", *, splits: int = 1, sk_waves: int = 1,
                  fixup: Fixup | str = "atomic", sms: int | None = None) -> GemmFusion:
        """Choose the work decomposition that lowering gives the tiles of this schedule.

        ``kind``: ``auto`` (the cost model picks), ``dp``, ``splitk``, ``streamk``, ``dp_1sk``,
        ``sk2_dp``, ``skpp``, ``dp_ft`` (SIMT kernels only); ``fixup``: ``atomic``,
        ``deterministic``, ``reduce_kernel``
        (see :class:`tilec.ir.types.Decomposition` and ``Fixup``; members are taken too).
        ``splits`` (split-K) >= 1; ``sk_waves`` (Stream-K++) in 0..7; ``sms``: CTAs the
        Stream-K family spreads work over (default: the schedule's grid). The choice is kept as
        a frozen :class:`~tilec.ir.types.DecompositionChoice`:

        >>> GemmFusion(M=256, N=256, K=64).decompose("splitk", splits=2).decomposition
        DecompositionChoice(kind=<Decomposition.SPLIT_K: 'splitk'>, splits=2, sk_waves=1, fixup=<Fixup.ATOMIC: 'atomic'>, sms=None)
        >>> GemmFusion(M=256, N=256, K=64).decompose("broadcast")
        Traceback (most recent call last):
        ...
        tilec.errors.PolicyError: decomposition must be one of auto, dp, splitk, streamk, dp_1sk, sk2_dp, skpp, dp_ft but got 'broadcast'
        """
        parsed = Decomposition.parse(kind, extra=("auto",))
        fix = Fixup(fixup)
        if isinstance(splits, bool) or not isinstance(splits, int) or splits < 1:
            raise FusionError(f"decompose: splits must be a positive integer but got {splits!r}")
        if (isinstance(sk_waves, bool) or not isinstance(sk_waves, int)
                or not 0 <= sk_waves <= SK_WAVES_MAX):
            raise FusionError(f"decompose: sk_waves must be an integer in 0..{SK_WAVES_MAX} but "
                              f"got {sk_waves!r}")
        if sms is not None and (isinstance(sms, bool) or not isinstance(sms, int) or sms < 1):
            raise FusionError(f"decompose: sms must be a positive integer or None but got {sms!r}")
        choice = DecompositionChoice(None if isinstance(parsed, str) else parsed, splits=splits,
                                     sk_waves=sk_waves, fixup=fix, sms=sms)
        # the trace spells policy as the user does (strings replay without importing the enums)
        self.schedule.record("fusion", "decompose", (choice.describe(),),
                             {"splits": splits if splits != 1 else None,
                              "sk_waves": sk_waves if sk_waves != 1 else None,
                              "fixup": fix.value if fix is not Fixup.ATOMIC else None,
                              "sms": sms})
        self.decomposition = choice
        return self

    def set_kernel(self, stages: int | str | None = None, warps: int | str | None = None,
                   load: LoadKind | str | None = None, epilogue: Epilogue | str | None = None,
                   evict: str | tuple[L2Hint | str, L2Hint | str] | None = None,
                   prefetch: int | str | None = None,
                   swap_ab: bool | int | str | None = None) -> GemmFusion:
        """Kernel-level choices: software-pipeline ``stages`` (K tiles in flight), ``warps`` per
        CTA (CUDA: 4 per warpgroup), the operand ``load`` kind (``pointer``, ``tma``) and, for
        the CUDA target, the ``epilogue`` that writes C (``tma``, ``tma_tile``, ``direct``,
        ``overlap``: see :class:`~tilec.ir.types.Epilogue`), the CUDA kernel's L2 ``evict``
        hints of A's and B's loads (``"last,first"`` or a pair, each ``normal``, ``first`` or
        ``last``: :class:`~tilec.ir.types.L2Hint`) and its L2 ``prefetch`` distance (k-iterations
        ahead of the loads, 0..64; 0: none); ``swap_ab`` (CUDA only; Triton ignores it): each CTA
        computes its tile as C^T = B^T A^T, our N on wgmma's M and our M on its N.
        None or ``"auto"`` leaves a choice to lowering (TMA where the strides allow it, the
        target's default stages, warps and epilogue). Kept as a frozen
        :class:`~tilec.ir.types.KernelOptions` that lowering copies into the plan.

        >>> f = GemmFusion(M=256, N=256, K=64)
        >>> f.set_kernel(stages=4, warps=8, load="tma", epilogue="overlap").kernel_options
        KernelOptions(stages=4, warps=8, load=<LoadKind.TMA: 'tma'>, epilogue=<Epilogue.OVERLAP: 'overlap'>, evict=None, prefetch=None, swap_ab=False)
        >>> f.set_kernel(evict="last,first").kernel_options.evict
        (<L2Hint.LAST: 'last'>, <L2Hint.FIRST: 'first'>)
        >>> GemmFusion(M=256, N=256, K=64).set_kernel(warps=6)
        Traceback (most recent call last):
        ...
        tilec.errors.FusionError: set_kernel: warps must be a power of two or a multiple of 4 in 1..32, 'auto' or None but got 6
        """
        def count(name: str, v: object, ok: Callable[[int], bool], what: str) -> int | None:
            if v is None or (isinstance(v, str) and v.strip().lower() == "auto"):
                return None
            if isinstance(v, bool) or not isinstance(v, int) or not ok(v):
                raise FusionError(f"set_kernel: {name} must be {what}, 'auto' or None but got "
                                  f"{v!r}")
            return v

        st = count("stages", stages, lambda v: 1 <= v <= 16, "an integer in 1..16")
        wp = count("warps", warps, lambda v: 1 <= v <= 32 and (v & (v - 1) == 0 or v % 4 == 0),
                   "a power of two or a multiple of 4 in 1..32")
        parsed = None if load is None else LoadKind.parse(load, extra=("auto",))
        kind = None if isinstance(parsed, str) else parsed
        epi = _option(Epilogue, epilogue)
        if epi is False:
            raise FusionError(f"set_kernel: epilogue must be one of {', '.join(EPILOGUES)}, "
                              f"'auto' or None but got {epilogue!r}")
        ev = _evict_pair(evict)
        pf = count("prefetch", prefetch, lambda v: 0 <= v <= 64, "an integer in 0..64")
        sw = count("swap_ab", swap_ab, lambda v: v in (0, 1), "0 or 1") if not isinstance(
            swap_ab, bool) else int(swap_ab)
        self.schedule.record("fusion", "set_kernel", (),
                             {"stages": st, "warps": wp,
                              "load": kind.value if kind is not None else None,
                              "epilogue": epi.value if epi is not None else None,
                              "evict": ",".join(ev) if ev else None, "prefetch": pf,
                              "swap_ab": True if sw else None})
        self.kernel_options = KernelOptions(stages=st, warps=wp, load=kind, epilogue=epi, evict=ev,
                                            prefetch=pf or None, swap_ab=bool(sw))
        return self

    def set_cluster(self, x: int, y: int = 1, z: int = 1) -> GemmFusion:
        """Launch clusters of (x, y, z) CTAs over a grid bound with BIDx/y/z (no CIDx/RankX).

        The rank of a CTA is then ``blockIdx % clusterDim``. Schedules that bind CIDx and RankX get
        their cluster dims from those axes instead. At most 8 CTAs (16 with
        ``non_portable_cluster``).
        """
        for d, v in zip("xyz", (x, y, z), strict=True):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise LaunchError(f"cluster dim {d} must be a positive integer but got {v!r}")
        size = x * y * z
        if size > MAX_CLUSTER:
            raise LaunchError(f"set_cluster({x}, {y}, {z}) asks for {size} CTAs per cluster; a "
                              f"multicast mask addresses at most {MAX_CLUSTER} (16-bit ctaMask)")
        if size > PORTABLE_CLUSTER and not self.non_portable_cluster:
            raise LaunchError(f"set_cluster({x}, {y}, {z}) asks for {size} CTAs per cluster; the "
                              f"portable limit is {PORTABLE_CLUSTER}: pass "
                              f"non_portable_cluster=True to GemmFusion to allow up to "
                              f"{MAX_CLUSTER}")
        self.schedule.record("fusion", "set_cluster", (x, y, z), {})
        self.cluster_dims = (x, y, z)
        return self

    # -- thread-level options (SIMT schedules; tilec/ir/threads.py) ------------------------

    def circular_buffer(self, stages: int = 2, fragments: int = 1,
                        async_copy: bool = False) -> GemmFusion:
        """Shared-memory buffers per operand K tile (1-2; 2-4 copied with ``cp.async``) and
        register buffers of the k-slice (1 or 2) of a thread-level schedule
        (:mod:`tilec.ir.threads`)."""
        stages, fragments, async_copy = check_stages(stages, fragments, async_copy)
        self.schedule.record("fusion", "circular_buffer", (stages,),
                             {"fragments": fragments if fragments != 1 else None,
                              "async_copy": True if async_copy else None})
        self.thread_options = replace(self.thread_options, stages=stages, fragments=fragments,
                                      async_copy=async_copy)
        return self

    def smem_pad(self, operand: str, pad: int) -> GemmFusion:
        """Pad each row of ``operand``'s shared tile by ``pad`` elements (:mod:`tilec.ir.threads`)."""
        operand, pad = check_pad(operand, pad)
        self.schedule.record("fusion", "smem_pad", (operand, pad), {})
        key = "pad_a" if operand == "A" else "pad_b"
        self.thread_options = replace(self.thread_options, **{key: pad})
        return self

    def copy_lanes(self, operand: str, lanes: int) -> GemmFusion:
        """``lanes`` consecutive threads of ``operand``'s tile copy walk one row; the tile's rows
        come before its next column block (:mod:`tilec.ir.threads`)."""
        operand, lanes = check_lanes(operand, lanes)
        self.schedule.record("fusion", "copy_lanes", (operand, lanes), {})
        key = "lanes_a" if operand == "A" else "lanes_b"
        self.thread_options = replace(self.thread_options, **{key: lanes})
        return self

    def smem_swizzle(self, operand: str) -> GemmFusion:
        """Store A's transposed shared tile rotated by k (:mod:`tilec.ir.threads`)."""
        check_swizzle(operand)
        self.schedule.record("fusion", "smem_swizzle", (operand,), {})
        self.thread_options = replace(self.thread_options, swizzle_a=True)
        return self

    def spread_copies(self, slices: int) -> GemmFusion:
        """Issue the next K tile's ``cp.async`` copies over the first ``slices`` k-slices of a
        tile instead of all at its top (:mod:`tilec.ir.threads`)."""
        slices = check_slices(slices)
        self.schedule.record("fusion", "spread_copies", (slices,), {})
        self.thread_options = replace(self.thread_options, copy_slices=slices)
        return self

    def copy_addresses(self, how: str) -> GemmFusion:
        """How the ``cp.async`` tile copies compute their global addresses
        (:data:`tilec.ir.threads.COPY_ADDRESSES`)."""
        how = check_copy_addresses(how)
        self.schedule.record("fusion", "copy_addresses", (how,), {})
        self.thread_options = replace(self.thread_options, copy_addresses=how)
        return self

    def stage_c(self, on: bool = True) -> GemmFusion:
        """Stage C's epilogue through shared memory (coalesced stores) or not; unset, lowering
        decides (:mod:`tilec.ir.threads`)."""
        on = check_stage_c(on)
        self.schedule.record("fusion", "stage_c", (on,), {})
        self.thread_options = replace(self.thread_options, stage_c=on)
        return self

    def min_blocks_per_sm(self, n: int) -> GemmFusion:
        """Ask the compiler to fit ``n`` CTAs on one SM (``__launch_bounds__``)."""
        n = check_min_blocks(n)
        self.schedule.record("fusion", "min_blocks_per_sm", (n,), {})
        self.thread_options = replace(self.thread_options, min_blocks=n)
        return self

    def fma_order(self, order: str) -> GemmFusion:
        """The order of a k-slice's FMAs over the thread tile (:data:`tilec.ir.threads.FMA_ORDERS`)."""
        order = check_fma_order(order)
        self.schedule.record("fusion", "fma_order", (order,), {})
        self.thread_options = replace(self.thread_options, fma_order=order)
        return self

    # -- the axis graph ------------------------------------------------------------------

    def _link_logical(self, *views: TensorView) -> None:
        for v in views:
            for ax in v.logical:
                dim = ax.name  # an operand's broadcast M / N keeps its name; a user's its own
                self._links.append(((v.name, ax.name), dim, ax.uid))
        self._graph = None

    @property
    def axis_graph(self) -> nx.Graph:
        """Which axes of A, B, C and the operand tiles are the same M, N, K (networkx, built
        on first use: most commands never need it, and importing networkx costs a quarter
        second)."""
        import networkx as nx

        if self._graph is None:
            g = nx.Graph()
            for node, dim, uid in self._links:
                g.add_node(node, dim=dim, uid=uid)
                g.add_edge(node, ("gemm", dim))
            self._graph = g
        return self._graph

    def dims(self) -> dict[str, set[tuple[str, str]]]:
        """The GEMM dimensions as sets of (view, axis) nodes: {"M": {...}, "N": ..., "K": ...}."""
        out: dict[str, set[tuple[str, str]]] = {}
        import networkx as nx

        for comp in nx.connected_components(self.axis_graph):
            dim = next(d for v, d in comp if v == "gemm")
            out[dim] = {node for node in comp if node[0] != "gemm"}
        return out

    # -- propagation ---------------------------------------------------------------------

    def propagate(self) -> None:
        """Replay C's schedule onto the operand tiles ``a_smem`` and ``b_smem`` (rebuilt each call)."""
        self.schedule.record("fusion", "propagate", (), {})
        with paused(self.schedule):
            self.a_smem = self._replay("A_smem", bcast="N")
            self.b_smem = self._replay("B_smem", bcast="M")
        self._link_logical(self.a_smem, self.b_smem)
        self._propagated = self._stamp()

    def operands(self) -> tuple[TensorView, TensorView]:
        """The operand tiles, propagated again if C changed since the last propagation."""
        if self.a_smem is None or self.b_smem is None or self._propagated != self._stamp():
            with paused(self.schedule):
                self.a_smem = self._replay("A_smem", bcast="N")
                self.b_smem = self._replay("B_smem", bcast="M")
            self._propagated = self._stamp()
        assert self.a_smem is not None and self.b_smem is not None
        return self.a_smem, self.b_smem

    def _stamp(self) -> object:
        return self.c.structure()

    def _replay(self, name: str, bcast: str) -> TensorView:
        logical: list[IterDomain] = []
        amap: dict[int, IterDomain] = {}
        for ax in self.c.logical:
            if ax.name == bcast:
                new = ax.fresh(iter_type=IterType.BROADCAST, expanded=True)
            elif ax.is_broadcast:  # a broadcast added to C (C.broadcast) stays one
                new = ax.fresh()
            else:
                new = ax.fresh(iter_type=IterType.ITERATION)
            amap[ax.uid] = new
            logical.append(new)
        # an operand's logical order is its own: A [M, K, bN], B [bM, K, N]
        order = {"A_smem": ("M", "K", "N"), "B_smem": ("M", "K", "N")}[name]
        logical.sort(key=lambda a: order.index(a.name) if a.name in order else len(order))
        view = TensorView(name, logical, dtype=self.dtype, memory=MemoryType.SHARED)
        for t in self.c.transforms:
            view.replay_transform(t, amap)
        view.loop = [amap[a.uid] for a in self.c.loop]
        for pos, a in enumerate(self.c.loop):
            ptype = ParallelType.Bulk if a.ptype is ParallelType.Mma else a.ptype
            view._bind(pos, ptype)
        return view

    def views(self) -> list[TensorView]:
        a, b = self.operands()
        return [self.c, a, b]

    def __str__(self) -> str:
        return "\n".join(str(v) for v in self.views())


def _arg(value: int | str | sympy.Expr) -> str:
    return repr(value) if isinstance(value, int | str) else repr(str(value))


_E = TypeVar("_E", Epilogue, L2Hint)


def _option(kind: type[_E], value: object) -> _E | Literal[False] | None:
    """A member of ``kind`` named by ``value`` (a member or its text, any case); None for None or
    ``auto``; False for anything else (the caller says what it takes)."""
    if value is None or (isinstance(value, str) and value.strip().lower() == "auto"):
        return None
    if not isinstance(value, str):
        return False
    try:
        return kind(value)
    except PolicyError:
        return False


def _evict_pair(evict: object) -> tuple[L2Hint, L2Hint] | None:
    """``set_kernel(evict=...)``: ``"a,b"`` or ``(a, b)``, each an :class:`L2Hint`; None or
    auto: None.

    >>> _evict_pair("Last, first"), _evict_pair("auto"), _evict_pair(None)
    ((<L2Hint.LAST: 'last'>, <L2Hint.FIRST: 'first'>), None, None)
    """
    if evict is None or (isinstance(evict, str) and evict.strip().lower() == "auto"):
        return None
    parts = evict.split(",") if isinstance(evict, str) else list(evict)  # type: ignore[call-overload]
    pair = tuple(_option(L2Hint, str(x)) for x in parts)
    if len(pair) != 2 or any(x is None or x is False for x in pair):
        raise FusionError(f"set_kernel: evict must be two of {', '.join(EVICTS)} (A's, then B's: "
                          f"'last,first' or a pair), 'auto' or None but got {evict!r}")
    return pair  # type: ignore[return-value]
