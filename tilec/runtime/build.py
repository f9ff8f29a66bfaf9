"""From a loaded schedule to a kernel: its plan (:func:`kernel_plan`), its source
(:func:`kernel_source`), the Triton file imported (:func:`load_triton`) and a callable that runs
it (:func:`kernel`).

Example::

    >>> from tilec.runtime.loader import load_schedule
    >>> plan = kernel_plan(load_schedule("examples/gemm_basic.py", {"M": 256, "N": 256, "K": 64}))
    >>> plan.name, (plan.BM, plan.BN)
    ('tilec_gemm_basic', (128, 128))
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from collections.abc import Callable
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tilec.errors import TilecError

if TYPE_CHECKING:
    from tilec.ir import GemmFusion, LaunchDims
    from tilec.runtime.loader import LoadedSchedule
    from tilec.runtime.session import Session
    from tilec.transforms.multicast.derive import MulticastDerivation
    from tilec.transforms.plan import KernelPlan
    from tilec.transforms.simt.lower import SimtPlan

__all__ = ["is_thread_level", "kernel", "kernel_plan", "kernel_source", "load_triton",
           "nothing_multicast"]


def is_thread_level(fusion: GemmFusion) -> bool:
    """A SIMT schedule (threads at the loop level) rather than a tensor-core one."""
    return any(a.ptype.is_thread for a in fusion.c.loop)


def nothing_multicast(fusion: GemmFusion) -> str | None:
    """Why no operand box of ``fusion`` can be multicast, or None when one may be: a
    thread-level (SIMT) schedule loads its tiles with threads, not TMA; a launch whose clusters
    hold one CTA has no other CTA to share a box with. Reads the launch only (no derivation).

    >>> from tilec.runtime.loader import load_schedule
    >>> nothing_multicast(load_schedule("examples/simt_sgemm.py").fusion).split(":")[0]
    'a thread-level (SIMT) schedule'
    >>> print(nothing_multicast(load_schedule("examples/gemm_basic.py").fusion))
    the launch has no cluster (clusters of 1 CTA, grid (8, 8, 1)); TMA multicast shares a box among the CTAs of one cluster: fusion.set_cluster(n) or an axis bound to RankX makes one
    >>> nothing_multicast(load_schedule("examples/seed004_persistent_cluster.py").fusion) is None
    True
    """
    from tilec.ir import infer_launch

    if is_thread_level(fusion):
        return ("a thread-level (SIMT) schedule: its threads copy the A and B tiles with "
                "ordinary loads, not TMA boxes, so there is no box to multicast")
    launch = infer_launch(fusion)
    if launch.cluster_size == 1:
        grid = ", ".join(str(g) for g in launch.grid)
        return (f"the launch has no cluster (clusters of 1 CTA, grid ({grid})); TMA multicast "
                f"shares a box among the CTAs of one cluster: fusion.set_cluster(n) or an axis "
                f"bound to RankX makes one")
    return None


def kernel_plan(loaded: LoadedSchedule, *, target: str = "triton", mode: str = "leader",
                multicast: bool = True, session: Session | None = None) -> KernelPlan | SimtPlan:
    """The KernelPlan (a SimtPlan for a thread-level schedule) of ``loaded`` for ``target``;
    the CUDA lowering takes its multicast derivation from ``session``
    (:meth:`~tilec.runtime.session.Session.derivation`, default
    :data:`~tilec.runtime.session.SESSION`): derived once per session, shared with masks."""
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
    derivation = None
    if target == "cuda":
        from tilec.runtime.session import SESSION

        s = session or SESSION

        def derivation(launch: LaunchDims) -> MulticastDerivation:
            return s.derivation(loaded, mode, cluster_k_ranges=True, sizes_fallback=True,
                                launch=launch)

    return lower(fusion, target=target, params=loaded.params, mode=mode, multicast=multicast,
                 name=name, derivation=derivation)


def kernel_source(plan: KernelPlan | SimtPlan, target: str = "triton") -> str:
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


def kernel(plan: KernelPlan | SimtPlan, target: str = "triton",
           session: Session | None = None) -> Callable[..., Any]:
    """A callable ``f(a, b, out)`` -> C that runs ``plan``'s kernel (compiled once)."""
    from tilec.transforms.plan import KernelPlan

    if not isinstance(plan, KernelPlan):  # a SimtPlan: the SIMT kernel's own launcher
        from tilec.codegen.cuda.simt.launch import build as build_simt

        simt = build_simt(plan)
        return lambda a, b, out=None: simt(a, b, out)
    if target == "triton":
        mod = load_triton(plan, session=session)
        return lambda a, b, out=None: mod.run(a, b, out=out)
    from tilec.codegen.cuda.launch import build

    k = build(plan)
    return lambda a, b, out=None: k(a, b, out)


def load_triton(plan: KernelPlan, *, warp_specialize: bool = False,
                session: Session | None = None) -> ModuleType:
    """Write the Triton file of ``plan`` (:func:`tilec.codegen.triton.printer.emit`) and import
    it: tests and benches run the exact text a user gets.

    The file lives under ``$TILEC_CACHE/triton`` (:func:`tilec.runtime.cache.root`, or a temp
    dir when that is off or not writable); the module's ``__file__`` is that path. One source
    is imported once per ``session`` (default :data:`~tilec.runtime.session.SESSION`).
    """
    from tilec.codegen.triton.printer import emit
    from tilec.runtime import cache
    from tilec.runtime.session import SESSION

    loaded = (session or SESSION).triton_modules
    src = emit(plan, warp_specialize=warp_specialize)
    key = hashlib.sha1(src.encode()).hexdigest()[:16]
    if key in loaded:
        return loaded[key]
    root = cache.root()
    folder = str(root / "triton") if root is not None else tempfile.mkdtemp(prefix="tilec_")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        folder = tempfile.mkdtemp(prefix="tilec_")
    name = f"tilec_{plan.name}_{key}".replace("-", "_")
    path = os.path.join(folder, name + ".py")
    if not os.path.exists(path):
        tmp = path + f".{os.getpid()}.tmp"
        with open(tmp, "w") as f:
            f.write(src)
        os.replace(tmp, path)
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod  # triton's jit reads the source through the module
    spec.loader.exec_module(mod)
    loaded[key] = mod
    return mod
