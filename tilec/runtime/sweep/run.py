"""The sweep driver: for every shape, the tasks (each config of the schedule's tuning space, the
baseline, cuBLAS), spread over the workers, each row committed as it arrives.

Example (the cost model stands in for the GPU: :mod:`tilec.runtime.sweep.model`)::

    >>> import tempfile, pathlib
    >>> db = pathlib.Path(tempfile.mkdtemp()) / "s.sqlite"
    >>> r = run_sweep("examples/gemm_decomposition.py", [(256, 1024, 1024)], db=db, limit=2,
    ...               executor="inline", measure="tilec.runtime.sweep.model:measure",
    ...               cublas="tilec.runtime.sweep.model:cublas", progress=False)
    >>> r.measured, r.skipped  # two configs, the baseline, cuBLAS
    (4, 0)
    >>> run_sweep("examples/gemm_decomposition.py", [(256, 1024, 1024)], db=db, limit=2,
    ...           executor="inline", measure="tilec.runtime.sweep.model:measure",
    ...           cublas="tilec.runtime.sweep.model:cublas", progress=False).skipped
    4
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilec.errors import TilecError
from tilec.runtime.progress import bar as progress_bar
from tilec.runtime.progress import skipped
from tilec.runtime.sweep.shapes import Shape
from tilec.runtime.sweep.store import Row, Store, canonical
from tilec.runtime.sweep.worker import Spec, Task, run_task

__all__ = ["DEFAULT_BASELINE", "SweepRun", "gpu_list", "run_sweep", "tasks_of"]

# the seed compared its tuned Stream-K hybrid with the split-K kernel in production
DEFAULT_BASELINE: dict[str, Any] = {"DECOMP": "splitk"}


@dataclass(frozen=True)
class SweepRun:
    """What one call of :func:`run_sweep` did."""

    sweep: str  # the sweep id (rows in the store)
    shapes: int
    measured: int  # rows written by this run
    skipped: int  # rows already in the store (a resumed sweep)
    failed: int  # rows of this run with ok = 0
    seconds: float
    workers: int
    shapes_per_minute: float | None  # shapes completed in this run per minute of it
    completed: int = 0  # shapes this run measured to the end
    stopped: bool = False  # time_limit ended it before every shape was done


def tasks_of(path: str, shape: Shape, *, fixed: Mapping[str, Any], baseline: Mapping[str, Any],
             target: str = "triton", sms: int | None = None, limit: int | None = None
             ) -> list[Task]:
    """The tasks of one shape: each config of the tuning space
    (:func:`~tilec.runtime.autotune.space`, the heuristic's choice first), the baseline, cuBLAS."""
    from tilec.runtime.autotune import space

    M, N, K = shape
    dims = {"M": M, "N": N, "K": K}
    out = []
    try:
        configs = space(path, {**fixed, **dims}, target=target, sms=sms, limit=limit)
    except TilecError as e:  # this shape has no space (the schedule refuses it): one failed row
        return [Task(M, N, K, "tuned", "{}", "(no tuning space)", None,
                     {"error": f"{type(e).__name__}: {e}"})]
    for cfg in configs:
        knobs = cfg.params()
        out.append(Task(M, N, K, "tuned", canonical(knobs), cfg.short(),
                        str(knobs.get("DECOMP")), {**fixed, **dims, **knobs}))
    out.append(Task(M, N, K, "baseline", canonical(baseline),
                    "baseline " + " ".join(f"{k}={v}" for k, v in baseline.items()), None,
                    {**fixed, **dims, **baseline}))
    out.append(Task(M, N, K, "cublas", "{}", "cuBLAS (torch.matmul)", None, {**fixed, **dims}))
    return out


def gpu_list(gpus: str | int | None) -> list[str | None]:
    """``--gpus all|N`` -> the worker slots: GPU indices, or CPU workers without a GPU."""
    count = 0
    if os.environ.get("TRITON_INTERPRET") != "1":
        try:
            import torch

            count = torch.cuda.device_count()
        except ImportError:
            count = 0
    if gpus in (None, "all"):
        n = count or 1
    else:
        try:
            n = int(gpus)
        except ValueError:
            raise TilecError(f"--gpus must be 'all' or a positive number but got {gpus!r}"
                             ) from None
        if n < 1:
            raise TilecError(f"--gpus must be 'all' or a positive number but got {gpus!r}")
        if count and n > count:
            raise TilecError(f"--gpus {n}: this host has {count} GPU(s)")
    return [str(i) for i in range(n)] if count else [None] * n


def run_sweep(path: str | Path, shapes: Sequence[Shape], *, db: str | Path,
              fixed: Mapping[str, Any] | None = None,
              baseline: Mapping[str, Any] | None = None, target: str = "triton",
              sms: int | None = None, limit: int | None = None, gpus: str | int | None = "all",
              executor: str = "pool", ray_address: str | None = None, timeout: float = 300.0,
              build_ahead: int | None = None, measure: str | None = None,
              cublas: str | None = None, check: bool = True, progress: bool = True,
              time_limit: float | None = None, log: Callable[[str], None] | None = None
              ) -> SweepRun:
    """Measure every (shape, config) of the sweep not yet in ``db`` and commit each row.

    ``time_limit``: start no new shape after this many seconds (the configs in flight finish;
    a rerun goes on from there). ``executor``: ``"pool"`` (one process per GPU of this host, :class:`~tilec.runtime.sweep.pool.
    LocalPool`), ``"ray"`` (Ray tasks on the cluster at ``ray_address``, or a local one for
    ``"local"``: :mod:`tilec.runtime.sweep.ray_pool`) or ``"inline"`` (this process; tests, doctests).
    """
    from tilec.runtime.records import schedule_key

    path = str(path)
    if not Path(path).is_file():
        raise TilecError(f"schedule file {path!r} does not exist")
    fixed = dict(fixed or {})
    baseline = dict(DEFAULT_BASELINE if baseline is None else baseline)
    for dim in ("M", "N", "K"):
        if dim in fixed or dim in baseline:
            raise TilecError(f"sweep: {dim} comes from --shapes; do not fix it with --param or "
                             f"--baseline")
    store = Store(db)
    key = schedule_key(Path(path).read_text(), target)
    sid = store.begin(key, path, target, fixed, baseline)
    spec = Spec(path, target, sid, measure or Spec.measure, cublas or Spec.cublas, check)
    done = store.done(sid)
    shapes = list(dict.fromkeys(shapes))
    remaining: dict[Shape, int] = {}  # tasks of a planned shape not yet recorded
    counts = {"measured": 0, "skipped": 0, "failed": 0, "fresh": 0, "stopped": 0}
    bar = progress_bar(total=len(shapes), label=f"sweep {Path(path).name}", unit="shapes",
                       enabled=None if progress else False)
    t0 = time.monotonic()

    def plan() -> Iterator[Task]:
        for s in shapes:
            if time_limit is not None and time.monotonic() - t0 > time_limit:
                counts["stopped"] = 1
                return
            ts = tasks_of(path, s, fixed=fixed, baseline=baseline, target=target, sms=sms,
                          limit=limit)
            todo = [t for t in ts if t.key not in done]
            counts["skipped"] += len(ts) - len(todo)
            remaining[s] = len(todo)
            if not todo:  # finished by an earlier run: not this run's throughput
                skipped(bar)
            for t in todo:
                if t.label == "(no tuning space)":
                    record(t, {"ok": False, "error": t.params["error"]})
                else:
                    yield t

    def record(task: Task, row: Mapping[str, Any]) -> None:
        store.add(Row(sid, task.M, task.N, task.K, task.role, task.config, task.label,
                      task.decomp, bool(row.get("ok")), row.get("ms"), row.get("tflops"),
                      row.get("rel_err"), row.get("error"), row.get("seconds"),
                      row.get("device"), row.get("worker"), time.time()))
        counts["measured"] += 1
        if not row.get("ok"):
            counts["failed"] += 1
            if log is not None:
                log(f"failed: {task.M}x{task.N}x{task.K} {task.label}: {row.get('error')}")
        s = (task.M, task.N, task.K)
        remaining[s] -= 1
        if remaining[s] == 0:
            counts["fresh"] += 1
            bar.update(1)
        bar.set_postfix_str(f"{counts['measured']} configs, {counts['failed']} failed")

    workers = 1
    try:
        if executor == "inline":
            for task in plan():
                record(task, run_task(spec, task))
        elif executor == "pool":
            from tilec.runtime.sweep.pool import LocalPool

            slots = gpu_list(gpus)
            workers = len(slots)
            if build_ahead is None:
                build_ahead = default_build_ahead(slots, target)
            LocalPool(spec, slots, timeout=timeout, build_ahead=build_ahead).run(plan(), record)
        elif executor == "ray":
            from tilec.runtime.sweep.ray_pool import RayPool

            pool = RayPool(spec, ray_address or "local", timeout=timeout, gpus=gpus)
            workers = pool.slots
            pool.run(plan(), record)
        else:
            raise TilecError(f"sweep: executor must be pool, ray or inline but got {executor!r}")
    finally:
        bar.close()
        store.close()
    seconds = time.monotonic() - t0
    rate = counts["fresh"] / seconds * 60.0 if counts["fresh"] and seconds > 0 else None
    return SweepRun(sid, len(shapes), counts["measured"], counts["skipped"], counts["failed"],
                    seconds, workers, rate, counts["fresh"], bool(counts["stopped"]))


def default_build_ahead(slots: Sequence[str | None], target: str) -> int:
    """Compile workers beside the GPUs: the host's cores less one per GPU and one for the
    driver, at most 8 per GPU; none without a GPU or for the CUDA target."""
    if target != "triton" or slots[0] is None:
        return 0
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (
        os.cpu_count() or 1)
    return max(0, min(cores - len(slots) - 1, 8 * len(slots)))
