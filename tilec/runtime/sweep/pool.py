"""Spreading a sweep over the GPUs of one host: one worker process per GPU.

Each timing worker is a spawned process that sees one GPU (``CUDA_VISIBLE_DEVICES``); the
driver hands it one task at a time, so it always knows which config a worker is on:

* a worker that sends no result within ``timeout`` seconds is killed (SIGKILL) and its config
  recorded as failed (``timeout``); a worker that dies (a segfault, a GPU fault, an OOM kill) has
  its config recorded as failed with the exit status; either way a fresh worker takes its place
  and the sweep goes on;
* ``build_ahead`` more processes compile the Triton kernels of the next tasks into Triton's
  disk cache (:func:`~tilec.runtime.sweep.worker.build`) while the GPUs time the current ones: a kernel
  is specialised to its shape, and compiling it costs ten times what timing it does. A timing
  worker takes the first task already built, else the first no builder has taken (and compiles
  it itself), so the GPUs never wait for the builders.

Without a GPU (the CPU interpreter) the workers are CPU processes, ``gpus`` of them.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import signal
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from multiprocessing.connection import wait
from typing import Any

from tilec.errors import TilecError
from tilec.runtime.sweep.worker import Spec, Task, main

__all__ = ["LocalPool", "failure_row"]

Record = Callable[[Task, dict[str, Any]], None]


def failure_row(error: str, seconds: float | None = None, worker: str | None = None
                ) -> dict[str, Any]:
    """The row of a config that produced no measurement (timeout, dead worker)."""
    return {"ok": False, "ms": None, "tflops": None, "rel_err": None, "error": error,
            "seconds": seconds, "device": None, "worker": worker, "fatal": False}


def exit_text(code: int | None) -> str:
    if code is None:
        return "unknown status"
    if code < 0:
        try:
            return f"signal {signal.Signals(-code).name}"
        except ValueError:
            return f"signal {-code}"
    return f"exit status {code}"


@dataclass
class _Slot:
    """One worker process and what it is doing."""

    role: str  # "time" | "build"
    gpu: str | None
    proc: Any = None
    conn: Any = None
    ready: bool = False
    busy: tuple[int, Task, float] | None = None  # task id, task, start (monotonic)
    early_deaths: int = 0
    name: str = field(default="")


class LocalPool:
    """Timing workers (one per entry of ``gpus``: a GPU index, or None for a CPU worker) and
    ``build_ahead`` compile workers; see the module docstring."""

    def __init__(self, spec: Spec, gpus: list[str | None], *, timeout: float = 300.0,
                 build_ahead: int = 0) -> None:
        if not gpus:
            raise TilecError("a sweep needs at least one worker (--gpus)")
        self.spec = spec
        self.timeout = timeout
        self.ctx = mp.get_context("spawn")
        self.slots = [_Slot("time", g, name=f"gpu {g}" if g is not None else f"cpu {i}")
                      for i, g in enumerate(gpus)]
        # builders compile for the GPU's architecture and launch nothing: spread their
        # CUDA contexts over the GPUs
        self.slots += [_Slot("build", gpus[i % len(gpus)], name=f"builder {i}")
                       for i in range(build_ahead)]
        self.workers = len(gpus)

    def _start(self, s: _Slot) -> None:
        parent, child = self.ctx.Pipe(duplex=True)
        s.proc = self.ctx.Process(target=main, args=(child, self.spec, s.gpu, s.role),
                                  daemon=True, name=f"tilec-sweep {s.name}")
        s.proc.start()
        child.close()
        s.conn, s.ready, s.busy = parent, False, None

    def _stop(self, s: _Slot, kill: bool) -> None:
        if s.proc is None:
            return
        if kill and s.proc.is_alive():
            s.proc.kill()
        s.proc.join(5)
        s.conn.close()
        s.proc = None

    def run(self, tasks: Iterable[Task], record: Record) -> None:
        """Measure every task; ``record(task, row)`` (in this process) as each finishes."""
        source: Iterator[Task] = iter(tasks)
        pending: deque[tuple[int, Task]] = deque()
        built: dict[int, str] = {}  # task id -> "building" | "done"
        next_id = 0
        exhausted = False
        builders = [s for s in self.slots if s.role == "build"]
        window = 2 * len(self.slots) + 4
        for s in self.slots:
            self._start(s)
        try:
            while True:
                while not exhausted and len(pending) < window:
                    try:
                        pending.append((next_id, next(source)))
                        next_id += 1
                    except StopIteration:
                        exhausted = True
                self._dispatch(pending, built, builders)
                timing = [s for s in self.slots if s.role == "time" and s.busy]
                if exhausted and not pending and not timing:
                    return
                self._wait(record, built)
        finally:
            for s in self.slots:
                if s.proc is not None and s.proc.is_alive() and not s.busy:
                    with contextlib.suppress(OSError):
                        s.conn.send(None)
            for s in self.slots:
                self._stop(s, kill=bool(s.busy))
            for s in self.slots:
                self._stop(s, kill=True)

    def _dispatch(self, pending: deque[tuple[int, Task]], built: dict[int, str],
                  builders: list[_Slot]) -> None:
        for s in builders:
            if s.ready and s.busy is None:
                nxt = next(((i, t) for i, t in pending if i not in built and t.role != "cublas"),
                           None)
                if nxt is None:
                    break
                built[nxt[0]] = "building"
                self._send(s, *nxt)
        for s in self.slots:
            if s.role != "time" or not s.ready or s.busy is not None:
                continue
            pick = next(((i, t) for i, t in pending if built.get(i) == "done"), None) or next(
                ((i, t) for i, t in pending if i not in built), None)
            if pick is None:
                break
            pending.remove(pick)
            self._send(s, *pick)

    def _send(self, s: _Slot, tid: int, task: Task) -> None:
        s.busy = (tid, task, time.monotonic())
        with contextlib.suppress(OSError):  # it died: _wait sees the sentinel, records the task
            s.conn.send(("task", tid, task))

    def _wait(self, record: Record, built: dict[int, str]) -> None:
        live = [s for s in self.slots if s.proc is not None]
        now = time.monotonic()
        limits = [s.busy[2] + self.timeout - now for s in live if s.busy]
        ready = wait([s.conn for s in live] + [s.proc.sentinel for s in live],
                     timeout=max(0.05, min([1.0, *limits])))
        for s in live:
            if s.conn in ready:
                try:
                    while s.conn.poll():
                        self._message(s, s.conn.recv(), record, built)
                except (EOFError, OSError):
                    pass
            if s.proc.sentinel in ready or not s.proc.is_alive():
                s.proc.join(5)
                self._died(s, record, built)
            elif s.busy and time.monotonic() - s.busy[2] > self.timeout:
                self._timeout(s, record, built)

    def _message(self, s: _Slot, msg: tuple[Any, ...], record: Record,
                 built: dict[int, str]) -> None:
        kind = msg[0]
        if kind == "ready":
            s.ready, s.early_deaths = True, 0
        elif kind == "result" and s.busy and s.busy[0] == msg[1]:
            task = s.busy[1]
            s.busy = None
            record(task, msg[2])
        elif kind == "built" and s.busy and s.busy[0] == msg[1]:
            built[msg[1]] = "done"
            s.busy = None

    def _died(self, s: _Slot, record: Record, built: dict[int, str]) -> None:
        code = s.proc.exitcode
        if s.busy:
            tid, task, t0 = s.busy
            if s.role == "time":
                record(task, failure_row(f"worker died ({exit_text(code)}) during this config",
                                         time.monotonic() - t0, f"pid {s.proc.pid}"))
            else:
                built[tid] = "done"  # not built: the timing worker compiles it (and may fail)
        elif not s.ready:
            s.early_deaths += 1
            if s.early_deaths >= 3:
                raise TilecError(f"sweep: the worker for {s.name} died three times before it "
                                 f"was ready ({exit_text(code)}); see its messages above")
        self._stop(s, kill=True)
        self._start(s)

    def _timeout(self, s: _Slot, record: Record, built: dict[int, str]) -> None:
        tid, task, t0 = s.busy  # type: ignore[misc]
        if s.role == "time":
            record(task, failure_row(f"timeout: no result after {self.timeout:g} s (worker "
                                     f"killed)", time.monotonic() - t0, f"pid {s.proc.pid}"))
        else:
            built[tid] = "done"
        s.busy = None
        self._stop(s, kill=True)
        self._start(s)
