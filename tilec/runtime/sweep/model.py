"""A measure function without a GPU: the decomposition cost model's time for a config.

``tilec sweep --model`` (and the tests and doctests) put these in place of
:func:`tilec.runtime.autotune.measure`: the rows, the summary and the picture then show what the
cost model predicts, not what a GPU does. The time is the modeled critical path in k-iterations
(:func:`~tilec.transforms.cost_model.estimate_cost`) at :data:`ITER_MS` per 128x128x64
k-iteration (the H200's dense bf16 rate over its 132 SMs); cuBLAS is taken to run at
:data:`CUBLAS_TFLOPS`.

Example::

    >>> m = measure("examples/gemm_decomposition.py", {"M": 4096, "N": 4096, "K": 4096})
    >>> m.ok, round(m.ms, 3), round(m.tflops)
    (True, 0.148, 930)
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from tilec.runtime.autotune import Measurement

__all__ = ["CUBLAS_TFLOPS", "ITER_MS", "cublas", "measure"]

ITER_MS = 2 * 128 * 128 * 64 / (989e12 / 132) * 1e3  # one 128x128x64 k-iteration on one SM
CUBLAS_TFLOPS = 700.0


def measure(path: str, params: Mapping[str, Any], *, target: str = "triton",
            device: str | None = None, check: bool = True,
            timer: Callable[..., float] | None = None) -> Measurement:
    """The cost model's milliseconds for the schedule at ``params`` (a Measurement)."""
    from tilec.runtime.autotune import Measurement
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule
    from tilec.transforms.cost_model import estimate_cost

    try:
        from tilec.runtime.autotune import schedule_params

        loaded = load_schedule(path, schedule_params(path, params), target=target, tuned=False)
        plan = kernel_plan(loaded, target=target)
        sms = loaded.params.get("SMS", 132)
        sms = sms if isinstance(sms, int) else 132
        cost = estimate_cost(plan.work, sms, plan.BM, plan.BN, plan.BK,
                             dtype_bytes=plan.dtype.nbytes, alive=plan.order.alive_tiles())
        ms = cost.total * plan.BM * plan.BN * plan.BK / (128 * 128 * 64) * ITER_MS
        return Measurement(ms, True, None, 2.0 * plan.M * plan.N * plan.K / (ms * 1e-3) / 1e12)
    except Exception as e:
        return Measurement(None, False, f"{type(e).__name__}: {e}"[:400])


def cublas(path: str, params: Mapping[str, Any], *, target: str = "triton",
           timer: Callable[..., float] | None = None) -> Measurement:
    """cuBLAS at :data:`CUBLAS_TFLOPS`."""
    from tilec.runtime.autotune import Measurement

    M, N, K = (int(params[d]) for d in "MNK")
    ms = 2.0 * M * N * K / (CUBLAS_TFLOPS * 1e12) * 1e3
    return Measurement(ms, True, None, CUBLAS_TFLOPS)
