"""Measure functions for the sweep's tests: deterministic times from the parameters, and faults
on chosen shapes (they run in spawned workers and Ray tasks, so they are named, not passed)."""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from typing import Any

RAISES, HANGS, DIES = 17, 18, 19  # M of the shapes whose configs fail, each in its own way


@dataclass(frozen=True)
class Fake:
    ms: float | None
    ok: bool
    error: str | None = None
    tflops: float | None = None
    rel_err: float | None = None


def fake_ms(params: dict[str, Any]) -> float:
    """A time that depends on every knob (so the fastest config is a real choice)."""
    text = ",".join(f"{k}={params[k]}" for k in sorted(params))
    return 0.1 + (sum(ord(c) * (i + 1) for i, c in enumerate(text)) % 997) / 100.0


def measure(path: str, params: dict[str, Any], *, target: str = "triton", device: Any = None,
            check: bool = True, timer: Any = None) -> Fake:
    M = params["M"]
    tuned = "BM" in params  # the baseline gives DECOMP only
    if M == RAISES and tuned:
        raise RuntimeError("injected failure")
    if M == HANGS and not tuned:
        time.sleep(600)
    if M == DIES and not tuned:
        os.kill(os.getpid(), signal.SIGKILL)
    return Fake(fake_ms(params), True, None, 1.0, 0.0)


def slow(path: str, params: dict[str, Any], **kw: Any) -> Fake:
    time.sleep(0.25)
    return Fake(fake_ms(params), True)


def cublas(path: str, params: dict[str, Any], *, target: str = "triton", timer: Any = None
           ) -> Fake:
    return Fake(fake_ms({"cublas": 1, **params}), True)
