"""From a loaded schedule to a kernel: its plan (:func:`kernel_plan`) and a callable that runs it
(:func:`kernel`).

Example::

    >>> from tilec.app.loader import load_schedule
    >>> plan = kernel_plan(load_schedule("examples/gemm_basic.py", {"M": 256, "N": 256, "K": 64}))
    >>> plan.name, (plan.BM, plan.BN)
    ('tilec_gemm_basic', (128, 128))
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tilec.errors import TilecError

if TYPE_CHECKING:
    from tilec.app.loader import LoadedSchedule

__all__ = ["is_thread_level", "kernel", "kernel_plan", "kernel_source"]


def is_thread_level(fusion: Any) -> bool:
    """A SIMT schedule (threads at the loop level) rather than a tensor-core one."""
    return any(a.ptype.is_thread for a in fusion.c.loop)


def kernel_plan(loaded: LoadedSchedule, *, target: str = "triton", mode: str = "leader",
                multicast: bool = True) -> Any:
    """The KernelPlan (a SimtPlan for a thread-level schedule) of ``loaded`` for ``target``."""
    from tilec.transforms.pipeline import lower

    fusion = loaded.fusion
    name = "tilec_" + "".join(ch if ch.isalnum() else "_" for ch in loaded.path.stem)
    if is_thread_level(fusion):
        if target != "cuda":
            raise TilecError(
                f"{loaded.path.name}: a thread-level (TIDx/TIDy) schedule is a SIMT kernel; "
                f"generate it with --target cuda")
        from tilec.transforms.simt.lower import lower_simt

        return lower_simt(fusion, name=name)
    sym = None
    if target == "cuda":
        from tilec.transforms.multicast.derive import symbolic_instance

        sym = symbolic_instance(loaded.module.schedule, loaded.params)
    return lower(fusion, target=target, params=loaded.params, symbolic=sym, mode=mode,
                 multicast=multicast, name=name)


def kernel_source(plan: Any, target: str = "triton") -> str:
    """The source text of ``plan`` (Triton, CUDA, or the SIMT CUDA kernel)."""
    from tilec.transforms.plan import KernelPlan

    if not isinstance(plan, KernelPlan):
        from tilec.codegen.cuda.simt import emit_simt

        return emit_simt(plan)
    if target == "triton":
        from tilec.codegen.triton.printer import emit

        return emit(plan)
    from tilec.codegen.cuda.printer import emit as emit_cuda

    return emit_cuda(plan)


def kernel(plan: Any, target: str = "triton") -> Callable[..., Any]:
    """A callable ``f(a, b, out)`` -> C that runs ``plan``'s kernel (compiled once)."""
    from tilec.transforms.plan import KernelPlan

    if not isinstance(plan, KernelPlan):  # a SimtPlan: the SIMT kernel's own launcher
        from tilec.codegen.cuda.simt.launch import build as build_simt

        simt = build_simt(plan)
        return lambda a, b, out=None: simt(a, b, out)
    if target == "triton":
        from tilec.codegen.triton.printer import load

        mod = load(plan)
        return lambda a, b, out=None: mod.run(a, b, out=out)
    from tilec.codegen.cuda.launch import build

    k = build(plan)
    return lambda a, b, out=None: k(a, b, out)
