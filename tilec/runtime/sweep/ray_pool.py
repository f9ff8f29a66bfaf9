"""Spreading a sweep over a Ray cluster: one Ray task per (shape, config).

``--ray ADDRESS`` joins the cluster at ADDRESS (``ray start --head`` printed it; ``auto`` finds
the local one); ``--ray local`` starts a private one on this host. Each task runs
:func:`~tilec.runtime.sweep.worker.run_task`, the same function the local pool runs, so the rows are the
same either way. On a cluster with GPUs each task asks for one GPU (Ray sets its
``CUDA_VISIBLE_DEVICES``); without GPUs, for one CPU.

At most one task per GPU (or CPU) of the cluster is in flight, so a task starts when it is
submitted and ``timeout`` counts from there: a task past it is cancelled (its worker process is
killed) and recorded as failed. A task whose worker dies (a segfault, a GPU fault that left the
worker unusable) is run once more on a fresh worker (the fault may have been an earlier task's),
then recorded as failed with Ray's error. The driver writes every row; the
workers need the tilec package and the schedule file at the same path (a shared file system, or
Ray's ``runtime_env``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from tilec.errors import TilecError
from tilec.runtime.sweep.pool import failure_row
from tilec.runtime.sweep.worker import Spec, Task, run_task

__all__ = ["RayPool", "ray_task"]

_POISONED = False


def ray_task(spec: Spec, task: Task) -> dict[str, Any]:
    """The body of a Ray task: a worker whose GPU a fault made unusable leaves before it takes
    another task (Ray starts a fresh one)."""
    global _POISONED
    if _POISONED:
        os._exit(3)
    row = run_task(spec, task)
    _POISONED = bool(row.get("fatal"))
    return row


class RayPool:
    """Ray tasks over the cluster at ``address`` (``"local"``: a private one; ``gpus``: how
    many CPUs it gets when this host has no GPU, default 2)."""

    def __init__(self, spec: Spec, address: str, *, timeout: float = 300.0,
                 gpus: str | int | None = None) -> None:
        try:
            import ray
        except ImportError:
            raise TilecError("--ray needs Ray: pip install 'tilec[sweep]' (or pip install ray)"
                             ) from None
        self.ray = ray
        self.spec = spec
        self.timeout = timeout
        if not ray.is_initialized():
            # the workers import tilec (and tests' fakes) as this process does
            env = {"env_vars": {"PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}}
            if address == "local":
                n = int(gpus) if isinstance(gpus, int) or (isinstance(gpus, str)
                                                          and gpus.isdigit()) else 2
                ray.init(num_cpus=n, include_dashboard=False, log_to_driver=False,
                         runtime_env=env)
            else:
                ray.init(address=address, log_to_driver=False, runtime_env=env)
        res = ray.cluster_resources()
        self.gpu = int(res.get("GPU", 0)) > 0
        self.slots = int(res.get("GPU", 0)) or int(res.get("CPU", 1))
        self.remote = ray.remote(num_gpus=1 if self.gpu else 0, num_cpus=0 if self.gpu else 1,
                                 max_retries=1)(ray_task)

    def run(self, tasks: Iterable[Task], record: Callable[[Task, dict[str, Any]], None]
            ) -> None:
        """Measure every task; ``record(task, row)`` in this process as each finishes."""
        ray = self.ray
        source: Iterator[Task] = iter(tasks)
        flight: dict[Any, tuple[Task, float]] = {}
        exhausted = False
        try:
            while True:
                while not exhausted and len(flight) < self.slots:
                    try:
                        task = next(source)
                    except StopIteration:
                        exhausted = True
                        break
                    flight[self.remote.remote(self.spec, task)] = (task, time.monotonic())
                if not flight:
                    return
                now = time.monotonic()
                left = min(t0 + self.timeout - now for _, t0 in flight.values())
                ready, _ = ray.wait(list(flight), num_returns=1, timeout=max(0.05, min(left, 1.0)))
                for ref in ready:
                    task, t0 = flight.pop(ref)
                    try:
                        row = ray.get(ref)
                    except Exception as e:  # the worker died, or the task could not run
                        row = failure_row(f"Ray task failed: {type(e).__name__}: "
                                          f"{str(e).splitlines()[0] if str(e) else ''}"[:400],
                                          time.monotonic() - t0)
                    record(task, row)
                now = time.monotonic()
                for ref, (task, t0) in list(flight.items()):
                    if now - t0 > self.timeout:
                        ray.cancel(ref, force=True)
                        flight.pop(ref)
                        record(task, failure_row(f"timeout: no result after {self.timeout:g} s "
                                                 f"(Ray task cancelled)", now - t0))
        finally:
            for ref in flight:
                ray.cancel(ref, force=True)
