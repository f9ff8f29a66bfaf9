"""Benchmark the SIMT fp32 kernels of tilec against cuBLAS SGEMM (torch, TF32 off) on one GPU.

Method (seed 003): each kernel is built from its schedule file with nvcc, loaded with ctypes and
checked against a float64 torch reference; then timed with CUDA events around the kernel alone,
the L2 cache flushed (a buffer of twice its size zeroed) before every replay, after warm-up,
over many replays (the seed's 1000*exp((1024 - size)/3100), capped by a time budget for slow
kernels), reporting the median.  GPU clocks, power and throttle reasons are read with nvidia-smi
before and after each size and reported; they are never changed (shared machine).

    python bench/bench_simt.py --out bench/results/simt_h200_2026-11-21.json [--sizes 1024 4096]
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KERNELS = {  # name -> (schedule file, parameter overrides)
    "naive": ("examples/coalescing_naive.py", {}),
    "coalesced": ("examples/coalescing_coalesced.py", {}),
    "smem": ("examples/simt_sgemm.py", {"KIND": "smem"}),
    "reg1d": ("examples/simt_sgemm.py", {"KIND": "reg1d"}),
    "reg2d": ("examples/simt_sgemm.py", {"KIND": "reg2d"}),
    "vec": ("examples/simt_sgemm.py", {"KIND": "vec"}),
}
EDGE_SIZES = [(511, 769, 333), (1000, 1000, 1001)]  # correctness only: predicated edges
NVCC = ["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-shared", "-Xcompiler", "-fPIC"]


def generate(kernel: str, M: int, N: int, K: int, outdir: Path) -> Path:
    from tilec.codegen.cuda_simt import emit_simt
    from tilec.loader import load_schedule
    from tilec.transforms.simt import lower_simt

    path, over = KERNELS[kernel]
    name = f"{kernel}_{M}_{N}_{K}"
    fusion = load_schedule(ROOT / path, {**over, "M": M, "N": N, "K": K}).fusion
    cu = outdir / f"{name}.cu"
    cu.write_text(emit_simt(lower_simt(fusion, name=name)))
    return cu


def _generate(job: tuple[str, tuple[int, int, int], Path]) -> Path:
    return generate(job[0], *job[1], job[2])


def build(cu: Path) -> Path | str:
    so = cu.with_suffix(".so")
    r = subprocess.run([*NVCC, str(cu), "-o", str(so)], capture_output=True, text=True)
    return so if r.returncode == 0 else r.stderr[-2000:]


def clocks() -> dict[str, str]:
    q = ("name,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,temperature.gpu,"
         "clocks_throttle_reasons.active")
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    return dict(zip(q.split(","), (v.strip() for v in out[0].split(",")), strict=False)) if out else {}


def time_fn(torch, fn, flush, size: int, budget_s: float) -> dict[str, float]:  # type: ignore[no-untyped-def]
    fn()
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    torch.cuda.synchronize()
    est = time.perf_counter() - t0
    warm = 2 if est < 0.05 else 0
    for _ in range(warm):
        fn()
    reps = int(1000 * math.exp((1024 - size) / 3100))
    reps = max(3, min(reps, int(budget_s / max(est, 1e-6))))
    events = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        events.append((s, e))
    torch.cuda.synchronize()
    ms = sorted(s.elapsed_time(e) for s, e in events)
    return {"median_ms": ms[len(ms) // 2], "min_ms": ms[0], "max_ms": ms[-1], "reps": reps}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--sizes", type=int, nargs="*", default=[1024, 2048, 4096, 8192])
    ap.add_argument("--kernels", nargs="*", default=list(KERNELS))
    ap.add_argument("--budget", type=float, default=1.5, help="seconds of replays per kernel/size")
    args = ap.parse_args()

    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    work = Path(tempfile.mkdtemp(prefix="tilec_simt_"))
    shapes = [(s, s, s) for s in args.sizes] + EDGE_SIZES
    t0 = time.time()
    jobs = [(k, sh, work) for k in args.kernels for sh in shapes]
    with ProcessPoolExecutor(min(16, os.cpu_count() or 8)) as pool:
        cus = dict(zip([(k, sh) for k, sh, _ in jobs], pool.map(_generate, jobs), strict=True))
    t_gen = time.time() - t0
    with ThreadPoolExecutor(os.cpu_count() or 8) as pool:
        sos = dict(zip(cus, pool.map(build, cus.values()), strict=True))
    t_build = time.time() - t0 - t_gen
    print(f"generated {len(cus)} kernels in {t_gen:.1f}s, built in {t_build:.1f}s", flush=True)

    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    result = {"device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
              "cuda": torch.version.cuda, "allow_tf32": torch.backends.cuda.matmul.allow_tf32,
              "l2_bytes": l2, "method": __doc__.strip().splitlines()[2:8], "runs": [],
              "clocks": []}
    for M, N, K in shapes:
        timed = (M, N, K) not in EDGE_SIZES
        result["clocks"].append({"size": [M, N, K], "when": "before", **clocks()})
        g = torch.Generator(device=dev).manual_seed(M + N + K)
        A = torch.randn(M, K, device=dev, generator=g)
        B = torch.randn(K, N, device=dev, generator=g)
        ref = A.double() @ B.double()
        scale = ref.abs().max().item()
        C = torch.empty(M, N, device=dev)
        C2 = torch.matmul(A, B)
        cublas_err = (C2.double() - ref).abs().max().item() / scale
        flops = 2.0 * M * N * K
        if timed:
            t = time_fn(torch, lambda A=A, B=B, C2=C2: torch.matmul(A, B, out=C2), flush, M, args.budget)
            result["runs"].append({"kernel": "cublas", "size": [M, N, K], "rel_err": cublas_err,
                                   "tflops": flops / t["median_ms"] / 1e9, **t})
            print(f"{M}x{N}x{K} cublas {t['median_ms']:.3f} ms {flops / t['median_ms'] / 1e9:.2f} TFLOP/s",
                  flush=True)
        for k in args.kernels:
            so = sos[(k, (M, N, K))]
            if isinstance(so, str):
                result["runs"].append({"kernel": k, "size": [M, N, K], "correct": False,
                                       "build_error": so})
                print(f"{M}x{N}x{K} {k}: build failed\n{so}", flush=True)
                continue
            lib = ctypes.CDLL(str(so))
            fn = getattr(lib, f"tilec_launch_{k}_{M}_{N}_{K}")
            fn.argtypes = [ctypes.c_void_p] * 4
            fn.restype = ctypes.c_int
            stream = torch.cuda.current_stream().cuda_stream

            def launch(fn=fn, A=A, B=B, C=C, stream=stream) -> None:  # type: ignore[no-untyped-def]
                rc = fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), stream)
                if rc != 0:
                    raise RuntimeError(f"launch failed: {rc}")

            C.fill_(float("nan"))
            launch()
            torch.cuda.synchronize()
            err = ((C.double() - ref).abs().max().item()) / scale
            ok = bool(math.isfinite(err) and err < max(1e-4, 20 * cublas_err))
            run = {"kernel": k, "size": [M, N, K], "rel_err": err, "correct": ok}
            if timed and ok:
                t = time_fn(torch, launch, flush, M, args.budget)
                run |= {"tflops": flops / t["median_ms"] / 1e9, **t}
            result["runs"].append(run)
            print(f"{M}x{N}x{K} {k:10s} err {err:.2e} ok={ok} "
                  + (f"{run['median_ms']:.3f} ms {run['tflops']:.2f} TFLOP/s" if "tflops" in run else ""),
                  flush=True)
        result["clocks"].append({"size": [M, N, K], "when": "after", **clocks()})
    # ratios
    def tf(k: str, s: int) -> float | None:
        for r in result["runs"]:
            if r["kernel"] == k and r["size"] == [s, s, s] and "tflops" in r:
                return float(r["tflops"])
        return None

    ratios = {}
    for s in args.sizes:
        best = max(((k, tf(k, s)) for k in args.kernels if tf(k, s)), key=lambda x: x[1], default=None)
        cb, nv, co = tf("cublas", s), tf("naive", s), tf("coalesced", s)
        ratios[str(s)] = {"coalesced_over_naive": co / nv if co and nv else None,
                          "best_kernel": best[0] if best else None,
                          "best_over_cublas": best[1] / cb if best and cb else None}
    result["ratios"] = ratios
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    Path(args.out).write_text(json.dumps(result, indent=1))
    print(json.dumps(ratios, indent=1))
    return 0 if all(r.get("correct", True) for r in result["runs"]) else 1


if __name__ == "__main__":
    raise SystemExit(main())
