"""Host (CPU) time per call of a built library's ``matmul`` beside torch.matmul's, on small
shapes (where the launch, not the kernel, is the cost), on the GPU.

    PYTHONPATH=. python bench/host_overhead_library.py [--quick] [--module mygemm.py]

Without ``--module`` it builds examples/gemm_decomposition.py as bench/dispatch.py does. Each
figure: CALLS calls without synchronising (few enough that the launch queue never fills, so the
GPU never holds the CPU back), timed, / CALLS; matmul (new out), matmul with out=, the custom op
(torch.ops.<ns>.matmul: the dispatcher's cost, what torch.compile graphs call) and torch.matmul
in turn, for ROUNDS rounds; medians and [min, max]. ``host_times`` is what bench/dispatch.py
reports. ``--breakdown`` (or ``host_times(..., breakdown=True)``) adds what a call is made of:
``empty_us`` (torch.empty of the result), ``kernel_run_us`` / ``kernel_run_out_us`` (the chosen
kernel file's run() called directly, new out / out=: Triton's launch and the launcher's Python),
``key_us`` (the fast path's key and look-up alone), ``direct_launches_cached`` (compiled kernels
the kernel file keeps for its direct launch: 0 means every call went through Triton's JIT),
``fast_keys`` (keys run()'s fast path serves: 0 means run() took its checked path) and the
``config``; matmul_us minus kernel_run_us is what the library adds. Each row's ``errors``:
relative errors of fast-path calls with new tensors (and of an unaligned a) against fp32.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SHAPES = [(1, 4096, 4096), (16, 4096, 4096), (128, 1024, 1024), (256, 256, 256),
          (1000, 1000, 1000)]
CALLS = 200
ROUNDS = 7


def _per_call(fn: Any, calls: int, sync: Any) -> float:
    sync()
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    t = time.perf_counter() - t0
    sync()
    return t / calls * 1e6


def _fast_path_errors(mod: Any, a: Any, b: Any, out: Any) -> dict[str, float]:
    """After the timed calls (every key seen: the fast paths of the library and of the kernel
    file), relative errors against fp32 torch.matmul of calls with new tensors of the same
    shapes and strides: new out, out=, a 3-D a, and an a whose base is 2 bytes past an
    aligned address (the checked path: copied). An error above ~1e-2 is a wrong result."""
    import torch

    def rel(c: Any, x: Any, y: Any) -> float:
        ref = x.float() @ y.float()
        return float((c.float() - ref).abs().max() / ref.abs().max().clamp_min(1.0))

    M, K = a.shape
    x = torch.randn_like(a)
    y = torch.randn_like(b)  # b's strides (a dense tensor's are preserved)
    assert y.stride() == b.stride()
    o = torch.empty_like(out)
    odd = torch.empty(M * K + 1, dtype=a.dtype, device=a.device)[1:].view(M, K)
    odd.copy_(x)
    return {"new": rel(mod.matmul(x, y), x, y),
            "out": rel(mod.matmul(x, y, out=o), x, y),
            "lead": rel(mod.matmul(x.view(1, M, K), y)[0], x, y),
            "unaligned_a": rel(mod.matmul(odd, y), odd, y)}


def host_times(mod: Any, *, quick: bool = False, device: str = "cuda",
               shapes: list[tuple[int, int, int]] | None = None, breakdown: bool = False
               ) -> list[dict[str, Any]]:
    """Per shape: microseconds of host time per call of each item, medians over rounds."""
    import torch

    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    calls, rounds = (50, 3) if quick else (CALLS, ROUNDS)
    dt = getattr(torch, mod.DTYPE)
    op = getattr(torch.ops, mod.OP_NAMESPACE).matmul
    rows = []
    for M, N, K in shapes or SHAPES:
        a = torch.randn((M, K), device=device, dtype=dt)
        b = (torch.randn((N, K), device=device, dtype=dt).t() if mod.B_LAYOUT == "nk"
             else torch.randn((K, N), device=device, dtype=dt))
        out = torch.empty((M, N), device=device, dtype=getattr(torch, mod.OUT_DTYPE))
        items = {"matmul_us": lambda: mod.matmul(a, b),
                 "matmul_out_us": lambda: mod.matmul(a, b, out=out),
                 "custom_op_us": lambda: op(a, b),
                 "torch_us": lambda: torch.matmul(a, b)}
        if breakdown:
            mod.matmul(a, b)
            run = mod._STATE.loaded[mod._STATE.memo[(M, N, K)].runner].run
            bk = b.t() if mod.B_LAYOUT == "nk" else b
            key = getattr(mod, "_key", None)
            odt = getattr(torch, mod.OUT_DTYPE)
            items.update({
                "empty_us": lambda: torch.empty((M, N), device=device, dtype=odt),
                "kernel_run_us": lambda: run(a, bk),
                "kernel_run_out_us": lambda: run(a, bk, out=out)})
            if key is not None:
                items["key_us"] = lambda: mod._FAST_GET(key(a, b, None))
        for fn in items.values():  # compile and warm every path first
            fn()
            fn()
        times: dict[str, list[float]] = {k: [] for k in items}
        for _ in range(rounds):
            for k, fn in items.items():
                times[k].append(_per_call(fn, calls, sync))
        row: dict[str, Any] = {"M": M, "N": N, "K": K}
        row["errors"] = _fast_path_errors(mod, a, b, out)
        if breakdown:  # 0: the kernel file's direct launch never engaged (Triton's JIT per call)
            kmod = mod._STATE.loaded[mod._STATE.memo[(M, N, K)].runner]
            row["direct_launches_cached"] = len(getattr(kmod, "_LAUNCHES", {}))
            row["fast_keys"] = len(getattr(kmod, "_FAST", {}))  # run()'s fast path engaged
            row["config"] = mod.CONFIGS[mod._STATE.memo[(M, N, K)].config]["label"]
        for k, v in times.items():
            row[k] = statistics.median(v)
            row[k[:-3] + "_range_us"] = [min(v), max(v)]
        rows.append(row)
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--module", help="a built library (tilec build -o FILE)")
    p.add_argument("--breakdown", action="store_true",
                   help="also time torch.empty, the kernel's run() alone and the fast path's key")
    p.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    args = p.parse_args()
    import torch

    if args.module:
        path = Path(args.module)
    else:
        from tilec.library import build_library, module_text

        lib = build_library(ROOT / "examples" / "gemm_decomposition.py", name="hostgemm",
                            max_size=8192, jobs=os.cpu_count() or 1)
        path = Path(tempfile.mkdtemp()) / "hostgemm.py"
        path.write_text(module_text(lib))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = mod
    spec.loader.exec_module(mod)
    rows = host_times(mod, quick=args.quick, breakdown=args.breakdown)
    for r in rows:
        print(f"{r['M']}x{r['N']}x{r['K']}: " + ", ".join(
            f"{k[:-3]} {v:.1f}" for k, v in r.items()
            if k.endswith("_us") and not k.endswith("range_us")) + " (us per call)")
    date = time.strftime("%Y-%m-%d", time.gmtime())
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res = {"device": torch.cuda.get_device_name(), "date": date, "rows": rows}
    card = "h200" if "h200" in res["device"].lower() else "h100" if "h100" in res["device"].lower() \
        else "gpu"
    (out / f"host_overhead_library_{card}_{date}.json").write_text(json.dumps(res, indent=1))


if __name__ == "__main__":
    main()
