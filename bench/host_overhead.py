"""Host (CPU) time per call of the generated Triton launcher ``run()``, piece by piece, beside
torch.matmul's: on small problems the kernel takes less GPU time than ``run()`` takes to launch
it, and a benchmark that does not hide the launch measures the CPU. Also checks on the GPU that
``run()`` computes A @ B on its first call (Triton's JIT), on later calls (the compiled kernel
launched directly) and when it has to go back to the JIT (unaligned pointers).

    PYTHONPATH=. python bench/host_overhead.py [--before DIR]     (GPU; writes $OUT/host_overhead.json)

``--before DIR``: DIR holds files an earlier tilec generated for the same shapes (``sq1024.py``
...); their ``run()`` is timed in the same rounds, for a before/after taken on one host.

Each host figure: N calls without synchronising, timed, / N (N small enough that the launch queue
never fills, so the GPU never holds the CPU back); every item of a shape is timed once per round,
in turn, for ROUNDS rounds; median and [min, max] over the rounds. GPU time of one call:
do_bench (L2 flushed), median. Clocks are read before and after (never set).
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import inspect
import io
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
import triton  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

from tilec.app.cli import main as tilec  # noqa: E402
from tilec.runtime.bench import rel_err, time_ms  # noqa: E402

EX = ROOT / "examples" / "gemm_decomposition.py"
# name -> (M, N, K, extra schedule parameters); the first four are timed, the others checked
SHAPES: dict[str, tuple[int, int, int, dict[str, str]]] = {
    "sq1024": (1024, 1024, 1024, {}),
    "sq2048": (2048, 2048, 2048, {}),
    "decode_m16": (16, 4096, 4096, {}),
    "skinny_512_k64k": (512, 512, 65536, {}),
    "skinny_reduce_kernel": (512, 512, 65536, {"FIXUP": "reduce_kernel"}),
    "sq1024_pointer": (1024, 1024, 1024, {"LOAD": "pointer"}),
    "streamk_1024x1024x8192": (1024, 1024, 8192, {"DECOMP": "streamk"}),
}
TIMED = ("sq1024", "sq2048", "decode_m16", "skinny_512_k64k", "sq1024_pointer")
MISALIGNED = ("sq1024", "sq1024_pointer", "skinny_reduce_kernel")  # also checked misaligned
N = 256
ROUNDS = 7
TOL = 1e-2  # bf16 output, fp32 accumulation: max|c - ref| / max|ref|


def clocks() -> dict[str, str]:
    q = "clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # a reading, never a reason to stop
        return {"error": str(e)}
    return dict(zip(q.split(","), (v.strip() for v in out.splitlines()[0].split(",")), strict=False))


def load(path: Path, name: str) -> Any:
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def gen(name: str, M: int, Nn: int, K: int, extra: dict[str, str], work: Path) -> Any:
    path = work / f"{name}.py"
    params = [f"--param={k}={v}" for k, v in {"M": M, "N": Nn, "K": K, **extra}.items()]
    with contextlib.redirect_stderr(io.StringIO()):
        assert tilec(["gen", str(EX), *params, "--no-tuned", "-o", str(path)]) == 0
    return load(path, f"k_{name}")


def unaligned(shape: tuple[int, int], like: torch.Tensor) -> torch.Tensor:
    """A contiguous tensor of ``shape`` 2 bytes past a 16-byte aligned address."""
    n = shape[0] * shape[1]
    return torch.empty(n + 8, dtype=like.dtype, device=like.device)[1:n + 1].view(shape)


def check(mod: Any, M: int, Nn: int, K: int, misaligned: bool) -> dict[str, Any]:
    """run() against fp32 A @ B: first call (JIT), second (direct), new tensors, out=None, a
    column-major A; if ``misaligned``, an unaligned out and (pointer loads) an unaligned A (both
    back to the JIT: each compiles another specialization); then, with gemm_kernel removed from
    the module, calls that must launch the compiled kernel directly."""
    errs: dict[str, float] = {}

    def one(tag: str, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None) -> None:
        c = mod.run(a, b, out=out)
        torch.cuda.synchronize()
        assert out is None or c is out
        errs[tag] = rel_err(c, a.float() @ b.float())

    g = torch.Generator(device="cuda").manual_seed(0)

    def operands() -> tuple[torch.Tensor, torch.Tensor]:
        return (torch.randn((M, K), device="cuda", dtype=torch.bfloat16, generator=g),
                torch.randn((K, Nn), device="cuda", dtype=torch.bfloat16, generator=g))

    a, b = operands()
    out = torch.empty((M, Nn), device="cuda", dtype=torch.bfloat16)
    one("first_jit", a, b, out)
    launches_after_first = len(mod._LAUNCHES)
    one("second_direct", a, b, out)
    a2, b2 = operands()
    one("new_tensors", a2, b2, out)
    one("out_none", a2, b2, None)
    if misaligned:
        one("unaligned_out_jit", a, b, unaligned((M, Nn), out))
    if misaligned and "a.data_ptr()" in Path(mod.__file__).read_text():  # A is a pointer too
        ua = unaligned((M, K), a)
        ua.copy_(a2)
        one("unaligned_a_jit", ua, b2, out)
    one("noncontiguous_a", a2.T.contiguous().T, b2, out)
    jit, mod.gemm_kernel = mod.gemm_kernel, None  # a call that reached the JIT path would fail
    try:
        a3, b3 = operands()
        one("direct_only", a3, b3, out)
        one("direct_only_again", a2, b2, out)
    finally:
        mod.gemm_kernel = jit
    bad = {k: v for k, v in errs.items() if not v < TOL}
    return {"rel_err": errs, "ok": not bad, "launches_after_first": launches_after_first,
            "launches": len(mod._LAUNCHES)}


def timed(items: dict[str, Any]) -> dict[str, dict[str, float]]:
    for fn in items.values():
        for _ in range(20):
            fn()
    torch.cuda.synchronize()
    per: dict[str, list[float]] = {k: [] for k in items}
    for _ in range(ROUNDS):
        for k, fn in items.items():
            t = time.perf_counter()
            for _ in range(N):
                fn()
            per[k].append((time.perf_counter() - t) / N * 1e6)
            torch.cuda.synchronize()
    return {k: {"median_us": statistics.median(v), "min_us": min(v), "max_us": max(v)}
            for k, v in per.items()}


def host_row(mod: Any, before: Any, M: int, Nn: int, K: int) -> dict[str, Any]:
    a = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
    b = torch.randn((K, Nn), device="cuda", dtype=torch.bfloat16)
    out = torch.empty((M, Nn), device="cuda", dtype=torch.bfloat16)
    mod.run(a, b, out=out)
    dev = torch.cuda.current_device()
    stream = mod._current_stream(dev)
    tma = hasattr(mod, "_desc")
    args = [mod._desc(a, mod._A_DESC), mod._desc(b, mod._B_DESC), out] if tma else [a, b, out]
    if hasattr(mod, "_workspace"):
        args += list(mod._workspace((dev, stream), out, 1, 1))  # the key run() made: no new one
    warps, stages = map(int, re.search(r"num_warps=(\d+), num_stages=(\d+)",
                                       Path(mod.__file__).read_text()).groups())
    items: dict[str, Any] = {
        "run": lambda: mod.run(a, b, out=out),
        "torch.matmul": lambda: torch.matmul(a, b),
        "run_new_out": lambda: mod.run(a, b),
    }
    if before is not None:
        before.run(a, b, out=out)
        items["run_before"] = lambda: before.run(a, b, out=out)
        items["run_before_new_out"] = lambda: before.run(a, b)
    items.update({
        "jit_launch": lambda: mod.gemm_kernel[(mod.GRID,)](*args, num_warps=warps,
                                                          num_stages=stages),
        "direct_launch": lambda: mod._LAUNCHES[dev](*args, stream=stream),
        "check_args": lambda: mod._check_args(a, b, out),
        "stream_torch_cuda": lambda: torch.cuda.current_stream(out.device).cuda_stream,
        "stream_raw": lambda: mod._current_stream(dev),
        "current_device": lambda: mod._current_device(),
    })
    if tma:
        items.update(descriptor_items(mod, a, b, args, warps, stages))
    row: dict[str, Any] = {"host": timed(items)}
    row["gpu_us"] = time_ms(lambda: mod.run(a, b, out=out)) * 1e3
    row["cublas_gpu_us"] = time_ms(lambda: torch.matmul(a, b)) * 1e3
    return row


def descriptor_items(mod: Any, a: torch.Tensor, b: torch.Tensor, args: list[Any], warps: int,
                     stages: int) -> dict[str, Any]:
    """Building the two descriptors (Triton's constructor, run()'s copies) and what Triton's
    launcher does with them on every launch: encode each as a CUtensorMap on the host
    (``make_tensordesc_arg``, Triton internals: skipped where its signature differs)."""
    a_ctor = dict(shape=list(a.shape), strides=list(a.stride()),
                  block_shape=list(mod._A_DESC.block_shape))
    b_ctor = dict(shape=list(b.shape), strides=list(b.stride()),
                  block_shape=list(mod._B_DESC.block_shape))
    items: dict[str, Any] = {
        "descriptor_ctor_x2": lambda: (TensorDescriptor(a, **a_ctor), TensorDescriptor(b, **b_ctor)),
        "descriptor_copy_x2": lambda: (mod._desc(a, mod._A_DESC), mod._desc(b, mod._B_DESC)),
    }
    try:
        from triton.backends.nvidia.driver import make_tensordesc_arg

        kernel = mod.gemm_kernel[(mod.GRID,)](*args, num_warps=warps, num_stages=stages)
        metas = list(kernel.metadata.tensordesc_meta)[:2]
        extra = (None,) if len(inspect.signature(make_tensordesc_arg).parameters) == 3 else ()
        items["tma_encode_x2"] = lambda: [make_tensordesc_arg(d, m, *extra)
                                          for d, m in zip(args[:2], metas, strict=True)]
        items["tma_encode_x2"]()
    except Exception as e:  # Triton internals: measured where they are as read
        print("tma_encode_x2 skipped:", repr(e), flush=True)
        items.pop("tma_encode_x2", None)
    return items


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--before", type=Path, default=None)
    opts = ap.parse_args()
    dest = Path(os.environ.get("OUT", ".")) / "host_overhead.json"
    res: dict[str, Any] = {
        "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "triton": triton.__version__, "calls_per_timing": N, "rounds": ROUNDS,
        "clocks_before": clocks(), "checks": {}, "rows": {}, "errors": {},
    }
    work = Path(tempfile.mkdtemp())
    mods: dict[str, Any] = {}
    for name, (M, Nn, K, extra) in SHAPES.items():
        try:
            t = time.perf_counter()
            mods[name] = mod = gen(name, M, Nn, K, extra, work)
            res["checks"][name] = r = check(mod, M, Nn, K, name in MISALIGNED)
            r["gen_and_check_s"] = time.perf_counter() - t
            r["stream_fn"] = getattr(mod._current_stream, "__name__", "?")
            r["device_fn"] = getattr(mod._current_device, "__name__", "?")
            print(name, r, flush=True)
        except Exception as e:  # report and go on with the other shapes
            res["errors"][f"check {name}"] = repr(e)
            print(name, "ERROR", repr(e), flush=True)
        dest.write_text(json.dumps(res, indent=1))
    for name in TIMED:
        if name not in mods:
            continue
        M, Nn, K, _ = SHAPES[name]
        try:
            before = None
            if opts.before is not None and (opts.before / f"{name}.py").exists():
                before = load(opts.before / f"{name}.py", f"before_{name}")
            res["rows"][name] = r = host_row(mods[name], before, M, Nn, K)
            print(name, {k: round(v["median_us"], 2) for k, v in r["host"].items()},
                  round(r["gpu_us"], 1), flush=True)
        except Exception as e:
            res["errors"][f"time {name}"] = repr(e)
            print(name, "ERROR", repr(e), flush=True)
        dest.write_text(json.dumps(res, indent=1))
    res["clocks_after"] = clocks()
    dest.write_text(json.dumps(res, indent=1))
    return 0 if not res["errors"] and all(c["ok"] for c in res["checks"].values()) else 1


if __name__ == "__main__":
    sys.exit(main())
