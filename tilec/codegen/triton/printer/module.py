"""The generated source as a Python module: :func:`load` writes ``emit(plan)`` to the cache
folder and imports it (tests and benches run the exact text a user gets), :func:`run_plan` and
:func:`bench` use it."""

from __future__ import annotations

import hashlib
import importlib.util
import os
import sys
import tempfile
from types import ModuleType
from typing import Any

from tilec.codegen.triton.printer.file import emit
from tilec.transforms.plan import KernelPlan

_LOADED: dict[str, ModuleType] = {}


def load(plan: KernelPlan, *, warp_specialize: bool = False) -> ModuleType:
    """Write ``emit(plan)`` to a file and import it (tests and benches run the exact user text).

    The file lives under ``$TILEC_CACHE/triton`` (default ``~/.cache/tilec/triton``, or a temp
    dir when that is not writable); the module's ``__file__`` is that path.
    """
    src = emit(plan, warp_specialize=warp_specialize)
    key = hashlib.sha1(src.encode()).hexdigest()[:16]
    if key in _LOADED:
        return _LOADED[key]
    root = os.environ.get("TILEC_CACHE") or os.path.join(os.path.expanduser("~"), ".cache", "tilec")
    folder = os.path.join(root, "triton")
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
    _LOADED[key] = mod
    return mod


def run_plan(plan: KernelPlan, a: Any, b: Any, out: Any = None, **opts: Any) -> Any:
    """``load(plan, **opts).run(a, b, out)``."""
    return load(plan, **opts).run(a, b, out)


def bench(plan: KernelPlan, **kw: Any) -> dict[str, Any]:
    """Time the plan's kernel, torch.matmul and a plain Triton kernel (GPU): :func:`tilec.runtime.bench.bench_plan`."""
    from tilec.runtime.bench import bench_plan

    return bench_plan(plan, **kw)
