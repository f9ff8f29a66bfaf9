"""What a sweep worker does with one task: measure a config (or cuBLAS) of one shape and return
its row. The local pool (:mod:`tilec.runtime.sweep.pool`) and Ray (:mod:`tilec.runtime.sweep.ray_pool`) both run
:func:`run_task`, so a sweep's rows are the same whichever spreads the work.

A worker process sees one GPU (``CUDA_VISIBLE_DEVICES`` is set before torch is imported). After
a failed config it checks that its CUDA context still works; a context that a fault poisoned
(an illegal address) cannot run anything more, so the worker reports the row and exits, and the
pool starts a fresh one.

``Spec.measure`` names the function that measures a config (``module:function``, default
:func:`tilec.runtime.autotune.measure`) and ``Spec.cublas`` the one for the torch.matmul row:
names, not functions, so that a spawned process or a Ray worker imports them itself (and tests
can put a fake there).
"""

from __future__ import annotations

import importlib
import os
import socket
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tilec.runtime.autotune import Measurement

__all__ = ["Spec", "Task", "cublas_measure", "run_task", "wall_timer"]


@dataclass(frozen=True)
class Spec:
    """What every task of a sweep shares."""

    path: str  # the schedule file
    target: str = "triton"
    sweep: str = ""  # the sweep id the rows belong to
    measure: str = "tilec.runtime.autotune:measure"
    cublas: str = "tilec.runtime.sweep.worker:cublas_measure"
    check: bool = True


@dataclass(frozen=True)
class Task:
    """One (shape, config) to measure. ``params``: every parameter handed to the schedule (the
    shape, the fixed ones, the config's knobs); ``config``: the row's identity (the knobs)."""

    M: int
    N: int
    K: int
    role: str  # tuned | baseline | cublas
    config: str  # canonical JSON of the knob values
    label: str
    decomp: str | None
    params: dict[str, Any] = field(default_factory=dict, hash=False, compare=False)

    @property
    def key(self) -> tuple[int, int, int, str, str]:
        return (self.M, self.N, self.K, self.role, self.config)


def resolve_name(name: str) -> Callable[..., Any]:
    """``"package.module:function"`` -> the function."""
    mod, sep, attr = name.partition(":")
    if not sep:
        raise ValueError(f"a function name must look like module:function but got {name!r}")
    fn: Callable[..., Any] = getattr(importlib.import_module(mod), attr)
    return fn


def wall_timer(fn: Callable[[], Any]) -> float:
    """Milliseconds of one call of ``fn`` by the wall clock (the CPU interpreter: no GPU)."""
    t0 = time.perf_counter()
    fn()
    return (time.perf_counter() - t0) * 1e3


def _gpu() -> bool:
    if os.environ.get("TRITON_INTERPRET") == "1" or os.environ.get("CUDA_VISIBLE_DEVICES") == "":
        return False  # the interpreter, or a CPU worker (no GPU, and no torch import to say so)
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())


def device_name() -> str:
    if _gpu():
        import torch

        return str(torch.cuda.get_device_name(0))
    return "cpu (Triton interpreter)"


def cublas_measure(path: str, params: dict[str, Any], *, target: str = "triton",
                   timer: Callable[[Callable[[], Any]], float] | None = None) -> Measurement:
    """torch.matmul of the schedule's shape and dtype, timed like the configs."""
    from tilec.dtypes import torch_dtype
    from tilec.runtime.autotune import Measurement
    from tilec.runtime.loader import load_schedule

    try:
        import torch

        dtype = load_schedule(path, dict(params), target=target, tuned=False).fusion.dtype.value
        dt = torch_dtype(dtype)
        dev = "cuda" if _gpu() else "cpu"
        M, N, K = (int(params[d]) for d in "MNK")
        g = torch.Generator(device=dev).manual_seed(0)
        a = torch.randn((M, K), device=dev, dtype=dt, generator=g)
        b = torch.randn((K, N), device=dev, dtype=dt, generator=g)
        if timer is None:
            from tilec.runtime.autotune import gpu_timer

            timer = gpu_timer
        ms = timer(lambda: torch.matmul(a, b))
        return Measurement(ms, True, None, 2.0 * M * N * K / (ms * 1e-3) / 1e12 if ms else None)
    except Exception as e:
        return Measurement(None, False, f"{type(e).__name__}: {e}"[:400])


def run_task(spec: Spec, task: Task) -> dict[str, Any]:
    """Measure ``task``; the row's fields (see :class:`~tilec.runtime.sweep.store.Row`) as a dict.
    ``fatal`` is true when this process's GPU can no longer be used."""
    t0 = time.perf_counter()
    timer = None if _gpu() else wall_timer
    try:
        if task.role == "cublas":
            m = resolve_name(spec.cublas)(spec.path, task.params, target=spec.target, timer=timer)
        else:
            m = resolve_name(spec.measure)(spec.path, task.params, target=spec.target,
                                           check=spec.check, timer=timer)
        row = {"ok": bool(m.ok), "ms": m.ms, "tflops": getattr(m, "tflops", None),
               "rel_err": getattr(m, "rel_err", None), "error": m.error}
    except Exception as e:  # the measure function itself broke: this config fails, not the sweep
        row = {"ok": False, "ms": None, "tflops": None, "rel_err": None,
               "error": f"{type(e).__name__}: {e}"[:400]}
    if row["ok"] and row["ms"] is None and timer is not None:
        row["ok"], row["error"] = False, "nothing timed it"
    model = spec.measure.startswith("tilec.runtime.sweep.model:")
    row.update(seconds=time.perf_counter() - t0,
               device="cost model (no GPU)" if model else device_name(),
               worker=f"{socket.gethostname()}:{os.getpid()}", fatal=not row["ok"] and _poisoned())
    return row


def _poisoned() -> bool:
    """Whether this process's CUDA context is dead (after a fault nothing runs on it)."""
    if not _gpu():
        return False
    try:
        import torch

        torch.cuda.synchronize()
        return bool(torch.ones(4, device="cuda").sum().item() != 4.0)
    except Exception:
        return True


# -- ahead-of-time compilation -----------------------------------------------------------------


def build(spec: Spec, task: Task) -> bool:
    """Compile ``task``'s Triton kernel into Triton's on-disk cache without running it, so that
    the GPU worker that times it later loads it instead of compiling (on a CPU core beside the
    GPU). Best effort: False when nothing was compiled (the timing worker then compiles)."""
    if task.role == "cublas" or spec.target != "triton" or not _gpu():
        return False
    import types

    import torch
    from triton.runtime.jit import JITFunction

    from tilec.dtypes import torch_dtype
    from tilec.runtime.autotune import schedule_params
    from tilec.runtime.build import kernel_plan, load_triton
    from tilec.runtime.loader import load_schedule

    # the very plan measure() builds, so that the kernel source (Triton's cache key) is the same
    loaded = load_schedule(spec.path, schedule_params(spec.path, task.params),
                           target=spec.target, tuned=False)
    plan = kernel_plan(loaded, target=spec.target)
    mod = load_triton(plan)
    dt = torch_dtype(plan.dtype)
    a = torch.empty((plan.M, plan.K), device="cuda", dtype=dt)
    b = torch.empty((plan.N, plan.K) if plan.b.transposed else (plan.K, plan.N), device="cuda",
                    dtype=dt)
    out = torch.empty((plan.M, plan.N), device="cuda", dtype=dt)

    class Warm:  # kernel[grid](*args) -> compile only
        def __init__(self, fn: Any) -> None:
            self.fn = fn

        def __getitem__(self, grid: Any) -> Callable[..., Any]:
            return lambda *args, **kw: self.fn.warmup(*args, grid=grid, **kw)

    run = mod.run
    env = {k: Warm(v) if isinstance(v, JITFunction) else v for k, v in run.__globals__.items()}
    types.FunctionType(run.__code__, env, run.__name__, run.__defaults__, run.__closure__)(
        a, b, out)
    return True


# -- the worker process ------------------------------------------------------------------------


def main(conn: Any, spec: Spec, gpu: str | None, role: str) -> None:
    """A worker process: ``("task", id, Task)`` in, ``("result", id, row)`` out (``role`` "time"),
    or ``("built", id, ok)`` (``role`` "build"); ``None`` ends it."""
    os.environ["CUDA_VISIBLE_DEVICES"] = "" if gpu is None else gpu
    _orphan_watch(os.getppid())
    try:
        import tilec.runtime.loader  # noqa: F401  (before "ready": the first task's clock is fair)

        if _gpu():
            import torch

            torch.cuda.init()
        conn.send(("ready", os.getpid()))
        while True:
            msg = conn.recv()
            if msg is None:
                return
            _, tid, task = msg
            if role == "build":
                try:
                    ok = build(spec, task)
                except Exception as e:
                    ok = False
                    print(f"tilec sweep: build of {task.label} failed: {e}"[:300],
                          file=sys.stderr)
                conn.send(("built", tid, ok))
                continue
            row = run_task(spec, task)
            conn.send(("result", tid, row))
            if row["fatal"]:
                os._exit(3)  # the pool records the row already sent and starts a fresh worker
    except (EOFError, BrokenPipeError, KeyboardInterrupt):
        return  # the driver went away: nothing to report to



def _orphan_watch(parent: int) -> None:
    """End this process when the driver dies (kill -9 included), even inside a hung config."""
    import threading

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(4)

    threading.Thread(target=watch, daemon=True).start()
