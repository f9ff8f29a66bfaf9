"""Lowering: a scheduled GEMM fusion -> the backend-neutral :class:`KernelPlan`, as a pipeline
of named passes.

Each pass takes the frozen :class:`Lowering` state and returns a new one with its part of the
plan filled in (a pass that does not apply returns its input)::

    PIPELINE = (tile_axes, tile_order, decomposition, multicast, legalize)

* :func:`tile_axes`: the MMA tile (BM, BN, BK) is C's ``Mma`` axes, one per M, N, K;
* :func:`tile_order`: C's index map over the linear work index ``t = r * num_ctas + pid``
  (``pid`` the linear CTA id, ``r`` the persistent round);
* :func:`decomposition`: the fusion's ``decompose(...)`` choice as a
  :class:`~tilec.transforms.plan.WorkSplit` (``auto`` asks the cost model);
* :func:`multicast`: per operand, the derivation's issue predicate and mask (CUDA, clusters);
* :func:`legalize`: what the target can run: loads, cluster, warps and stages (the schedule's
  ``set_kernel`` choices, else the target's defaults).

:func:`lower_steps` yields every intermediate state (``tilec explain``, tests); :func:`lower`
returns the plan. Modules: :mod:`.state` (the state and the target), :mod:`.tiles`
(``tile_axes``, ``tile_order``), :mod:`.work` (``decomposition``), :mod:`.loads` (``multicast``,
``legalize``); the pipeline itself is here. Example::

    >>> from tilec.runtime.loader import load_schedule
    >>> s = load_schedule("examples/seed004_persistent_cluster.py", {"M": 512, "N": 512})
    >>> plan = lower(s.fusion, target="triton", params=s.params)
    >>> (plan.BM, plan.BN, plan.BK, plan.order.tiles_m, plan.order.tiles_n, plan.work.grid)
    (128, 256, 64, ceiling(M/128), ceiling(N/256), 8)
    >>> ref = plan.order.concrete()  # at the reference launch, M = N = 512
    >>> (ref.tiles_m, ref.tiles_n, ref.num_tiles)
    (4, 2, 8)
    >>> [name for name, _ in lower_steps(s.fusion)]
    ['input', 'tile_axes', 'tile_order', 'decomposition', 'multicast', 'legalize']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any

from tilec.errors import UnsupportedError
from tilec.ir import GemmFusion
from tilec.transforms.pipeline.loads import choose_load_kind, legalize, multicast
from tilec.transforms.pipeline.state import Lowering, Target
from tilec.transforms.pipeline.tiles import coordinate_proof, tile_axes, tile_order
from tilec.transforms.pipeline.work import decomposition
from tilec.transforms.plan import InputPrecision, KernelPlan, MulticastMode

__all__ = [
    "PIPELINE",
    "Lowering",
    "Target",
    "choose_load_kind",
    "coordinate_proof",
    "decomposition",
    "legalize",
    "lower",
    "lower_steps",
    "multicast",
    "tile_axes",
    "tile_order",
]

Pass = Callable[[Lowering], Lowering]
PIPELINE: tuple[Pass, ...] = (tile_axes, tile_order, decomposition, multicast, legalize)


def lower_steps(
    fusion: GemmFusion,
    *,
    target: Target | str = Target.TRITON,
    params: Mapping[str, Any] | None = None,
    symbolic: GemmFusion | None = None,
    mode: MulticastMode | str = MulticastMode.LEADER,
    multicast: bool = True,
    input_precision: InputPrecision = InputPrecision.IEEE,
    name: str | None = None,
) -> Iterator[tuple[str, Lowering]]:
    """``("input", state)`` and then ``(pass name, state after it)`` for each pass of
    :data:`PIPELINE` (arguments as for :func:`lower`)."""
    for dim in ("M", "N", "K"):
        if not getattr(fusion, dim).is_Integer:
            raise UnsupportedError(
                f"lowering needs concrete sizes but {dim} = {getattr(fusion, dim)}")
    state = Lowering(fusion, Target(target), dict(params or {}), symbolic,
                     MulticastMode(mode), multicast, input_precision, name)
    yield "input", state
    for step in PIPELINE:
        state = step(state)
        yield step.__name__, state


def lower(fusion: GemmFusion, **options: Any) -> KernelPlan:
    """The KernelPlan of a scheduled fusion: every pass of :data:`PIPELINE`, in order.

    ``target`` (:class:`Target`), ``params`` (the schedule's parameters, for the multicast
    derivation), ``symbolic`` (the schedule built with symbolic sizes, for closed forms),
    ``mode`` (:class:`~tilec.ir.types.MulticastMode`), ``multicast`` (False: plain loads),
    ``input_precision`` (fp32 dots), ``name`` (the kernel's name).
    """
    *_, (_, state) = lower_steps(fusion, **options)
    return state.plan()
