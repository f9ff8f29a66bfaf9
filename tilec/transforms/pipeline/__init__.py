"""Lowering: a scheduled GEMM fusion -> the backend-neutral :class:`KernelPlan`, as a pipeline
of named passes.

Each pass takes the frozen :class:`Lowering` state and returns a new one with its part of the
plan filled in (a pass that does not apply returns its input)::

    PIPELINE = (tile_axes, tile_order, decomposition, multicast, loads, cluster_split, legalize)

* :func:`tile_axes`: the MMA tile (BM, BN, BK) is C's ``Mma`` axes, one per M, N, K;
* :func:`tile_order`: C's index map over the linear work index ``t = r * num_ctas + pid``
  (``pid`` the linear CTA id, ``r`` the persistent round);
* :func:`decomposition`: the fusion's ``decompose(...)`` choice as a
  :class:`~tilec.transforms.plan.WorkSplit` (``auto`` asks the cost model);
* :func:`multicast`: per operand, the derivation's issue predicate and mask (CUDA, clusters);
* :func:`loads`: per operand, its load kind, box, multicast plan and L2 hint;
* :func:`cluster_split`: the cluster launched, and (CUDA) the work split over clusters;
* :func:`legalize`: warps, stages, epilogue and prefetch (the schedule's ``set_kernel``
  choices, else the target's defaults), and (CUDA) the cluster's stage release.

What the passes ask of the IR (the schedule over symbolic sizes, C's index map, the launch) is
asked once, when the first state is made (:class:`IRFacts`). :func:`lower_steps` yields every
intermediate state (tests, the docs); :func:`lower` returns the plan. Modules: :mod:`.state`
(the state, the options, the IR's facts), :mod:`.tiles` (``tile_axes``, ``tile_order``),
:mod:`.work` (``decomposition``, ``cluster_split``), :mod:`.loads` (``multicast``, ``loads``),
:mod:`.legalize` (with :mod:`.release`, the CUDA stage release); the pipeline itself is here. Example::

    >>> from tilec.runtime.loader import load_schedule
    >>> s = load_schedule("examples/seed004_persistent_cluster.py", {"M": 512, "N": 512})
    >>> plan = lower(s.fusion, target="triton", params=s.params)
    >>> (plan.BM, plan.BN, plan.BK, plan.order.tiles_m, plan.order.tiles_n, plan.work.grid)
    (128, 256, 64, ceiling(M/128), ceiling(N/256), 8)
    >>> ref = plan.order.concrete()  # at the reference launch, M = N = 512
    >>> (ref.tiles_m, ref.tiles_n, ref.num_tiles)
    (4, 2, 8)
    >>> [name for name, _ in lower_steps(s.fusion)]
    ['input', 'tile_axes', 'tile_order', 'decomposition', 'multicast', 'loads', 'cluster_split', 'legalize']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING, Any

from tilec.errors import UnsupportedError
from tilec.ir import GemmFusion, LaunchDims
from tilec.ir.types import Target
from tilec.transforms.pipeline.legalize import cuda_epilogue, legalize
from tilec.transforms.pipeline.loads import choose_load_kind, loads, multicast
from tilec.transforms.pipeline.state import IRFacts, Lowering, LowerOptions, over_sizes
from tilec.transforms.pipeline.tiles import coordinate_proof, tile_axes, tile_order
from tilec.transforms.pipeline.work import cluster_split, decomposition
from tilec.transforms.plan import InputPrecision, KernelPlan, MulticastMode

if TYPE_CHECKING:
    from tilec.transforms.multicast.derive import MulticastDerivation

__all__ = [
    "PIPELINE",
    "IRFacts",
    "LowerOptions",
    "Lowering",
    "Target",
    "choose_load_kind",
    "cluster_split",
    "coordinate_proof",
    "cuda_epilogue",
    "decomposition",
    "legalize",
    "loads",
    "lower",
    "lower_steps",
    "multicast",
    "over_sizes",
    "tile_axes",
    "tile_order",
]

Pass = Callable[[Lowering], Lowering]
PIPELINE: tuple[Pass, ...] = (tile_axes, tile_order, decomposition, multicast, loads,
                              cluster_split, legalize)


def lower_steps(fusion: GemmFusion, options: LowerOptions | None = None
                ) -> Iterator[tuple[str, Lowering]]:
    """``("input", state)`` and then ``(pass name, state after it)`` for each pass of
    :data:`PIPELINE`."""
    for dim in ("M", "N", "K"):
        if not getattr(fusion, dim).is_Integer:
            raise UnsupportedError(
                f"lowering needs concrete sizes but {dim} = {getattr(fusion, dim)}")
    state = Lowering(fusion, options or LowerOptions())
    yield "input", state
    for step in PIPELINE:
        state = step(state)
        yield step.__name__, state


def lower(
    fusion: GemmFusion,
    options: LowerOptions | None = None,
    *,
    target: Target | str = Target.TRITON,
    params: Mapping[str, Any] | None = None,
    symbolic: GemmFusion | None = None,
    mode: MulticastMode | str = MulticastMode.LEADER,
    multicast: bool = True,
    input_precision: InputPrecision = InputPrecision.IEEE,
    name: str | None = None,
    derivation: Callable[[LaunchDims], MulticastDerivation] | None = None,
) -> KernelPlan:
    """The KernelPlan of a scheduled fusion: every pass of :data:`PIPELINE`, in order.

    ``options`` (a :class:`LowerOptions`), or its fields as keywords: ``target``, ``params``
    (the schedule's parameters, for the multicast derivation), ``symbolic`` (the schedule built
    with symbolic sizes, for closed forms), ``mode``, ``multicast`` (False: plain loads),
    ``input_precision`` (fp32 dots), ``name`` (the kernel's name), ``derivation`` (a callable
    taking the launch and returning the multicast derivation: the caller's cache).
    """
    if options is None:
        options = LowerOptions(target, params or {}, symbolic, mode, multicast, input_precision,
                               name, derivation)
    *_, (_, state) = lower_steps(fusion, options)
    return state.plan()
