"""Timing of generated Triton kernels against torch.matmul (cuBLAS) and a plain Triton kernel.

Method (seed 003, with launches hidden): ``time_ms``, the median of replays each timed between CUDA
events after zeroing a 256 MB buffer (flushing the 50-60 MB L2 of an H100/H200), warm-up 25 ms,
100 ms of replays, queued behind a spinning kernel so that no replay waits for its Python launch;
TFLOP/s = 2*M*N*K / median. ``time_ms(..., launch="visible")`` is ``triton.testing.do_bench``.  Correctness: relative error of the result against
``torch.matmul`` in fp32 on the same inputs, ``max|C - R| / max|R|``.

The plain Triton kernel is the Triton tutorial's grouped-raster data-parallel kernel with
pointer loads, the baseline the issue's targets are stated against.

Example (GPU)::

    >>> from tilec.transforms.decompose import simple_plan            # doctest: +SKIP
    >>> bench_plan(simple_plan(4096, 4096, 4096, 128, 256, 64, dtype=DType.BF16))  # doctest: +SKIP
    {'tilec_tflops': ..., 'cublas_tflops': ..., 'plain_tflops': ..., 'rel_err': ...}
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import triton
import triton.language as tl

from tilec.dtypes import torch_dtype
from tilec.transforms.plan import DType, KernelPlan  # noqa: F401  (DType: the example)

if TYPE_CHECKING:
    import torch

    from tilec.runtime.session import Session

__all__ = ["bench_plan", "plain_matmul", "rel_err", "tflops", "time_ms"]


@triton.jit
def _plain_kernel(
    a_ptr, b_ptr, c_ptr, M, N, K,
    sam, sak, sbk, sbn, scm, scn,
    BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr,
):  # fmt: skip
    pid = tl.program_id(0)
    num_pid_m = tl.cdiv(M, BM)
    num_pid_n = tl.cdiv(N, BN)
    num_pid_in_group = GROUP_M * num_pid_n
    group_id = pid // num_pid_in_group
    first_pid_m = group_id * GROUP_M
    group_size_m = min(num_pid_m - first_pid_m, GROUP_M)
    pid_m = first_pid_m + ((pid % num_pid_in_group) % group_size_m)
    pid_n = (pid % num_pid_in_group) // group_size_m
    offs_am = (pid_m * BM + tl.arange(0, BM)) % M
    offs_bn = (pid_n * BN + tl.arange(0, BN)) % N
    offs_k = tl.arange(0, BK)
    a_ptrs = a_ptr + offs_am[:, None] * sam + offs_k[None, :] * sak
    b_ptrs = b_ptr + offs_k[:, None] * sbk + offs_bn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, tl.cdiv(K, BK)):
        a = tl.load(a_ptrs, mask=offs_k[None, :] < K - k * BK, other=0.0)
        b = tl.load(b_ptrs, mask=offs_k[:, None] < K - k * BK, other=0.0)
        acc = tl.dot(a, b, acc)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    offs_cm = pid_m * BM + tl.arange(0, BM)
    offs_cn = pid_n * BN + tl.arange(0, BN)
    c_ptrs = c_ptr + scm * offs_cm[:, None] + scn * offs_cn[None, :]
    mask = (offs_cm[:, None] < M) & (offs_cn[None, :] < N)
    tl.store(c_ptrs, acc.to(c_ptr.dtype.element_ty), mask=mask)


def plain_matmul(a: torch.Tensor, b: torch.Tensor, cfg: tuple[int, ...] = (128, 256, 64, 8, 3, 8)
                 ) -> torch.Tensor:
    """The plain Triton kernel; ``cfg`` = (BM, BN, BK, GROUP_M, num_stages, num_warps)."""
    import torch

    bm, bn, bk, gm, stages, warps = cfg
    M, K = a.shape
    _, N = b.shape
    c = torch.empty((M, N), dtype=a.dtype, device=a.device)
    grid = (triton.cdiv(M, bm) * triton.cdiv(N, bn),)
    _plain_kernel[grid](
        a, b, c, M, N, K, a.stride(0), a.stride(1), b.stride(0), b.stride(1),
        c.stride(0), c.stride(1), BM=bm, BN=bn, BK=bk, GROUP_M=gm,
        num_stages=stages, num_warps=warps,
    )  # fmt: skip
    return c


def time_ms(fn: Callable[[], Any], warmup: int = 25, rep: int = 100, *, launch: str = "hidden") -> float:
    """Median milliseconds of ``fn()`` on the GPU, the L2 flushed (256 MB written) before each replay.

    ``launch="hidden"`` (the default) measures the kernels, not the host: before each batch of
    replays the stream is held by a spinning kernel (``torch.cuda._sleep``) long enough for the
    CPU to queue the whole batch, so no replay waits for its launch (nvbench's "blocking kernel").
    Each replay is still timed alone between CUDA events, after its own flush. Without it, a
    kernel shorter than its Python launch measures the CPU: ``launch="visible"`` is
    ``triton.testing.do_bench``'s method, which waits for each launch; the host's own cost per
    call is measured apart (bench/host_overhead.py).
    """
    if launch == "visible":
        return float(triton.testing.do_bench(fn, warmup=warmup, rep=rep, return_mode="median"))
    if launch != "hidden":
        raise ValueError(f"launch must be 'hidden' or 'visible' but got {launch!r}")
    import statistics
    import time

    import torch

    drv = triton.runtime.driver.active
    cache = drv.get_empty_cache_for_benchmark()
    fn()
    torch.cuda.synchronize()
    # one replay's GPU time (flush included) and its host time: they size the batches and the hold
    t0 = time.perf_counter()
    start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    start.record()
    for _ in range(5):
        drv.clear_cache(cache)
        fn()
    end.record()
    host_s = (time.perf_counter() - t0) / 5
    torch.cuda.synchronize()
    gpu_ms = max(start.elapsed_time(end) / 5, 1e-3)
    n_warmup = max(1, int(warmup / gpu_ms))
    n_repeat = max(5, int(rep / gpu_ms))
    # a batch stays well inside the launch queue (4 entries a replay); the hold covers queueing it
    batch = 64
    hold_cycles = int((batch * host_s * 2 + 1e-4) * _clock_hz())
    for _ in range(n_warmup):
        fn()
    times: list[float] = []
    while len(times) < n_repeat:
        n = min(batch, n_repeat - len(times))
        ev = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
              for _ in range(n)]
        torch.cuda._sleep(hold_cycles)
        for s, e in ev:
            drv.clear_cache(cache)
            s.record()
            fn()
            e.record()
        torch.cuda.synchronize()
        times += [s.elapsed_time(e) for s, e in ev]
    return float(statistics.median(times))


def _clock_hz() -> float:
    """The SM clock's upper bound, for sizing ``torch.cuda._sleep``'s spin (cycles, not time)."""
    import torch

    props = torch.cuda.get_device_properties(torch.cuda.current_device())
    khz = getattr(props, "clock_rate", 0) or 2_000_000  # kHz; H100/H200: 1.98 GHz
    return float(khz) * 1e3


def tflops(M: int, N: int, K: int, ms: float) -> float:
    return 2.0 * M * N * K / (ms * 1e-3) / 1e12


def rel_err(c: torch.Tensor, ref: torch.Tensor) -> float:
    """``max|c - ref| / max|ref|`` in fp32."""
    d = (c.float() - ref.float()).abs().max().item()
    return d / max(ref.float().abs().max().item(), 1e-30)


def bench_plan(
    plan: KernelPlan,
    *,
    plain_cfg: tuple[int, ...] | None = None,
    warmup: int = 25,
    rep: int = 100,
    seed: int = 0,
    session: Session | None = None,
) -> dict[str, Any]:
    """Time ``plan``'s generated kernel (imported once per ``session``), torch.matmul and the
    plain Triton kernel (GPU)."""
    import torch

    from tilec.runtime.build import load_triton

    dt = torch_dtype(plan.dtype)
    g = torch.Generator(device="cuda").manual_seed(seed)
    M, N, K = plan.M, plan.N, plan.K
    a = torch.randn((M, K), device="cuda", dtype=dt, generator=g)
    b = torch.randn((N, K) if plan.b.transposed else (K, N), device="cuda", dtype=dt, generator=g)
    bb = b.T if plan.b.transposed else b
    mod = load_triton(plan, session=session)
    ref = torch.matmul(a.float(), bb.float())
    out = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
    c = mod.run(a, b, out=out)
    res: dict[str, Any] = {"rel_err": rel_err(c, ref), "nan": int(c.isnan().sum().item())}
    del ref
    res["tilec_ms"] = time_ms(lambda: mod.run(a, b, out=out), warmup, rep)
    res["cublas_ms"] = time_ms(lambda: torch.matmul(a, bb), warmup, rep)
    if plain_cfg is not None:
        res["plain_ms"] = time_ms(lambda: plain_matmul(a, bb.contiguous(), plain_cfg), warmup, rep)
    for k in [k for k in res if k.endswith("_ms")]:
        res[k[:-3] + "_tflops"] = tflops(M, N, K, res[k])
    return res
