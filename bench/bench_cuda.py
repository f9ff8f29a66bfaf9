"""GPU check and benchmark of the CUDA backend (H200): correctness matrix, timings vs cuBLAS,
compute-sanitizer on a small case.

Run on the device machine from the repository root::

    PYTHONPATH=. python3 bench/bench_cuda.py --out $OUT [--skip-perf] [--skip-sanitizer]

Correctness cases run in a worker subprocess with a per-case time limit, so a deadlocked
pipeline costs one case, not the run.  Writes cuda_correctness.json, cuda_perf.json,
cuda_sanitizer.txt under --out.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from tilec.codegen.cuda import CudaPrinter, emit
from tilec.codegen.cuda_launch import build
from tilec.codegen.cuda_seed import seed_plan
from tilec.transforms.plan import MulticastMode

L, S = MulticastMode.LEADER, MulticastMode.SLICED
CACHE = Path(os.environ.get("TILEC_CUDA_CACHE", "/tmp/tilec_cuda"))

# (M, N, K, BM, BN, CM, CN, mode, form, sms, multicast)
CASES = [
    (1024, 1024, 1024, 128, 256, 1, 1, L, "auto", 8, True),
    (1000, 1500, 776, 128, 256, 1, 1, L, "auto", 6, True),      # ragged M, N, K; partial last round
    (2048, 2048, 512, 128, 128, 1, 2, L, "auto", 8, True),
    (2048, 2048, 512, 128, 128, 2, 1, L, "auto", 8, True),
    (1100, 1300, 512, 128, 256, 1, 2, L, "general", 6, True),  # tiles % cluster != 0, partial round
    (1100, 1300, 512, 128, 256, 2, 1, L, "auto", 6, True),
    (1536, 2048, 768, 128, 256, 1, 4, L, "closed", 12, True),
    (2048, 1536, 768, 128, 256, 4, 1, L, "closed", 12, True),
    (2048, 2048, 768, 128, 256, 2, 2, L, "closed", 16, True),
    (1300, 1100, 512, 128, 256, 2, 2, L, "general", 8, True),  # partial groups: general form
    (1300, 1100, 512, 128, 256, 2, 2, L, "guarded", 8, True),
    (2048, 2048, 512, 128, 128, 1, 2, S, "closed", 8, True),
    (2048, 2048, 512, 128, 128, 2, 1, S, "closed", 8, True),
    (2048, 2048, 768, 128, 256, 2, 2, S, "closed", 16, True),
    (1536, 2048, 768, 128, 256, 1, 4, S, "closed", 12, True),
    (2048, 1536, 768, 128, 256, 4, 1, S, "closed", 12, True),
    (1300, 1100, 512, 128, 256, 2, 2, S, "general", 8, True),  # sliced, partial groups
    (1100, 1300, 520, 128, 256, 1, 4, S, "general", 8, True),
    (1000, 1000, 1000, 64, 128, 2, 1, L, "auto", 8, True),     # one consumer warpgroup
    (1000, 1000, 1000, 256, 128, 2, 2, L, "general", 8, True),  # two m64 per consumer
    (2048, 2048, 768, 128, 256, 2, 2, L, "closed", 16, False),  # cluster, no multicast
    (4096, 4096, 1024, 128, 256, 2, 2, S, "closed", 120, True),  # deadlocked before: 120 CTAs, partial round
    (4096, 4096, 1024, 128, 256, 2, 2, L, "closed", 120, True),
    (3072, 4096, 512, 128, 256, 4, 1, S, "closed", 120, True),
    (1000, 1500, 776, 128, 256, 1, 1, L, "auto", 6, True, "direct"),  # register epilogue, ragged
    (2048, 2048, 768, 128, 256, 2, 2, S, "closed", 16, True, "direct"),
]
DATE = "2026-11-21"

PERF_SIZES = [4096, 8192]
BAND_ROWS = 8  # grouped order: bands of 8 tile rows (BAND_ROWS // CM group rows)
# (CM, CN, multicast, mode, band, epilogue)
PERF_CFGS = [(1, 1, False, L, 0, "tma"), (1, 1, False, L, 1, "tma"), (1, 1, False, L, 1, "direct"),
             (2, 1, True, L, 1, "tma"), (2, 1, False, L, 1, "tma"), (2, 1, True, S, 1, "tma"),
             (1, 2, True, L, 1, "tma"), (1, 2, False, L, 1, "tma"),
             (2, 2, True, L, 1, "tma"), (2, 2, True, S, 1, "tma"), (2, 2, False, L, 1, "tma"),
             (4, 1, True, L, 1, "tma"), (4, 1, True, S, 1, "tma"), (4, 1, False, L, 1, "tma")]


def case_plan(c: tuple) -> object:
    M, N, K, BM, BN, CM, CN, mode, form, sms, mc = c[:11]
    return seed_plan(M=M, N=N, K=K, BM=BM, BN=BN, CM=CM, CN=CN, sms=sms, mode=mode, form=form,
                     multicast=mc, stages=4 if BN <= 256 and BM <= 128 else 3,
                     evict_a="first", evict_b="last")


def case_epilogue(c: tuple) -> str:
    return c[11] if len(c) > 11 else "auto"


def build_all(plans: list, epis: list | None = None) -> list:
    epis = epis or ["auto"] * len(plans)
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as ex:
        return list(ex.map(lambda pe: build(pe[0], CACHE, source=emit(pe[0], epilogue=pe[1])),
                           zip(plans, epis, strict=True)))


# ---------------------------------------------------------------------------- jobs
# A job is ("check", case) or ("perf", size, cm, cn, multicast, mode, sms) or ("cublas", size).
# Jobs run in a worker subprocess; the parent kills it when one job runs past its time limit
# (a deadlocked pipeline) and starts a new worker at the next job.

def perf_plan(n: int, cm: int, cn: int, mc: bool, mode: str, band: int, epi: str, sms: int) -> object:
    # closed forms: the facts (SMS % cluster == 0, whole cluster groups) hold at these sizes
    assert (n // 128) % cm == 0 and (n // 256) % cn == 0 and sms % (cm * cn) == 0
    return seed_plan(M=n, N=n, K=n, CM=cm, CN=cn, sms=sms, mode=MulticastMode(mode), multicast=mc,
                     form="closed", evict_a="first", evict_b="last",
                     band=(BAND_ROWS // cm) if band else 0)


def job_plan(job: list) -> object | None:
    if job[0] == "check":
        return case_plan(CASES[job[1]])
    if job[0] == "perf":
        return perf_plan(*job[1:])
    return None


def job_epilogue(job: list) -> str:
    if job[0] == "check":
        return case_epilogue(CASES[job[1]])
    return job[7] if job[0] == "perf" else "auto"


def run_job(job: list, kernels: dict) -> dict:
    import torch
    from triton.testing import do_bench

    if job[0] == "check":
        i = job[1]
        k = kernels[i]
        p = k.plan
        errs = []
        for trial in range(2):
            g = torch.Generator(device="cuda").manual_seed(1000 * i + trial)
            A = torch.randn(p.M, p.K, device="cuda", generator=g).to(torch.bfloat16)
            B = torch.randn(p.N, p.K, device="cuda", generator=g).to(torch.bfloat16)
            C = torch.full((p.M, p.N), float("nan"), device="cuda", dtype=torch.bfloat16)
            k(A, B, C)
            torch.cuda.synchronize()
            ref = A.double() @ B.double().T
            out = C.double()
            nan = int(torch.isnan(out).sum())
            rel = float(torch.linalg.norm(out - ref) / torch.linalg.norm(ref)) if nan == 0 else float("nan")
            errs.append((rel, nan))
        mcs = [op.multicast for op in (p.a, p.b)]
        return {"name": p.name, "M": p.M, "N": p.N, "K": p.K, "tile": [p.BM, p.BN, p.BK],
                "cluster": p.cluster[0], "sms": p.work.grid, "tiles": p.tiles,
                "num_tiles": int(p.order.num_tiles),
                "multicast": [None if m is None else f"{m.mode.value}/{'closed' if m.closed_form else 'general'}"
                              for m in mcs],
                "rel_err": [e[0] for e in errs], "nan_count": [e[1] for e in errs],
                "ok": all(n == 0 and r < 1e-2 for r, n in errs)}
    n = job[1]
    g = torch.Generator(device="cuda").manual_seed(n)
    A = torch.randn(n, n, device="cuda", generator=g).to(torch.bfloat16)
    B = torch.randn(n, n, device="cuda", generator=g).to(torch.bfloat16)
    flop = 2.0 * n**3
    if job[0] == "cublas":
        t = do_bench(lambda: torch.matmul(A, B.T), warmup=100, rep=300, return_mode="median")
        return {"size": n, "kernel": "cuBLAS torch.matmul(A, B.T)", "ms": t, "tflops": flop / t / 1e9}
    k = kernels[tuple(job)]
    C = torch.full((n, n), float("nan"), device="cuda", dtype=torch.bfloat16)  # poisoned
    k(A, B, C)
    torch.cuda.synchronize()
    ref = A.float() @ B.float().T
    rel = float(torch.linalg.norm(C.float() - ref) / torch.linalg.norm(ref))
    del ref
    t = do_bench(lambda: k(A, B, C), warmup=100, rep=300, return_mode="median")
    mc = k.plan.a.multicast or k.plan.b.multicast
    return {"size": n, "kernel": k.plan.name, "cluster": k.plan.cluster[0],
            "cluster_shape": f"{job[2]}x{job[3]}", "order": k.plan.order.description,
            "epilogue": job[7], "multicast": mc.mode.value if mc else "off", "sms": k.plan.work.grid,
            "ms": t, "tflops": flop / t / 1e9, "rel_err": rel}


def worker(jobs: list) -> None:
    keyed = {(j[1] if j[0] == "check" else tuple(j)): j for j in jobs if j[0] != "cublas"}
    plans = {key: job_plan(j) for key, j in keyed.items()}
    epis = [job_epilogue(j) for j in keyed.values()]
    built = dict(zip(plans, build_all(list(plans.values()), epis), strict=True))  # cached: just loads
    for j in jobs:
        print("START " + json.dumps(j), flush=True)
        try:
            r = run_job(j, built)
        except Exception as e:
            r = {"error": repr(e)[:300], "ok": False, "job": j}
            print("RESULT " + json.dumps(r), flush=True)
            return  # the CUDA context may be broken: the parent starts a fresh worker
        r["job"] = j
        print("RESULT " + json.dumps(r), flush=True)


def run_jobs(jobs: list, per_job_s: float, log) -> list[dict]:
    import queue
    import threading

    todo = list(jobs)
    results: list[dict] = []
    while todo:
        proc = subprocess.Popen([sys.executable, __file__, "--worker", json.dumps(todo)],
                                stdout=subprocess.PIPE, text=True, env=os.environ)
        q: queue.Queue = queue.Queue()
        threading.Thread(target=lambda: [q.put(ln) for ln in proc.stdout] + [q.put(None)],
                         daemon=True).start()
        current, last = None, time.time()
        while True:
            try:
                ln = q.get(timeout=0.2)
            except queue.Empty:
                ln = ""
            if ln is None:
                break
            if ln.startswith("START"):
                current, last = json.loads(ln[6:]), time.time()
            elif ln.startswith("RESULT"):
                r = json.loads(ln[7:])
                results.append(r)
                todo.remove(r["job"])
                log(r)
                current = None
            if current is not None and time.time() - last > per_job_s:
                proc.kill()
                break
        proc.wait()
        if current is not None:  # timed out or crashed inside a job
            r = {"job": current, "ok": False,
                 "error": "timeout (deadlock?)" if proc.returncode == -9 else f"worker died rc={proc.returncode}"}
            results.append(r)
            todo.remove(current)
            log(r)
        elif todo and proc.returncode != 0:
            break
    return results


def run_correctness(out: Path) -> list[dict]:
    t0 = time.time()
    build_all([case_plan(c) for c in CASES], [case_epilogue(c) for c in CASES])
    print(f"built {len(CASES)} correctness kernels in {time.time() - t0:.0f}s", flush=True)

    def log(r: dict) -> None:
        ok = "ok  " if r.get("ok") else "FAIL"
        print(f"  case {r['job'][1]:2d} {ok} {r.get('name', '')} err={r.get('rel_err', r.get('error'))}",
              flush=True)

    results = run_jobs([["check", i] for i in range(len(CASES))], 20.0, log)
    for r in results:
        r["epilogue"] = case_epilogue(CASES[r["job"][1]])
    (out / f"cuda_correctness_{DATE}.json").write_text(json.dumps(
        {"device": device(), "date": DATE, "cases": results}, indent=1))
    return results


# ---------------------------------------------------------------------------- perf
def run_perf(out: Path) -> list[dict]:
    # grid: one persistent CTA per SM, rounded to the clusters that fit at once
    probes = {cl: seed_plan(M=4096, N=4096, K=4096, CM=cl, CN=1, sms=132, form="closed") for cl in (1, 2, 4)}
    kprobe = dict(zip(probes, build_all(list(probes.values()))))
    sms_for = {cl: min(132 // cl, max(1, k.max_active_clusters())) * cl for cl, k in kprobe.items()}
    print(f"persistent grid per cluster size: {sms_for}", flush=True)
    jobs: list = []
    for n in PERF_SIZES:
        jobs.append(["cublas", n])
        jobs += [["perf", n, cm, cn, mc, mode.value, band, epi, sms_for[cm * cn]]
                 for cm, cn, mc, mode, band, epi in PERF_CFGS]
        jobs.append(["cublas", n])
    t0 = time.time()
    build_all([job_plan(j) for j in jobs if j[0] == "perf"], [job_epilogue(j) for j in jobs if j[0] == "perf"])
    print(f"built perf kernels in {time.time() - t0:.0f}s", flush=True)

    def log(r: dict) -> None:
        print(f"  {json.dumps(r)[:200]}", flush=True)

    rows = run_jobs(jobs, 20.0, log)
    base = {}
    for r in rows:
        if r["job"][0] == "cublas" and "ms" in r:
            base.setdefault(r["size"], r["ms"])
    for r in rows:
        if "ms" in r and r.get("size") in base:
            r["ratio_vs_cublas"] = base[r["size"]] / r["ms"]
    (out / f"cuda_perf_{DATE}.json").write_text(json.dumps(
        {"device": device(), "date": DATE, "grid_per_cluster_size": sms_for, "rows": rows}, indent=1))
    print(f"\n{'size':>5} {'cl':>4} {'mc':>7} {'order':>6} {'epi':>6} {'sms':>4} {'ms':>8} {'TFLOP/s':>8} {'x cuBLAS':>8}")
    for r in rows:
        if "ms" not in r:
            print(f"{r['job']} ERROR {r.get('error', '')[:80]}")
        elif r["job"][0] == "cublas":
            print(f"{r['size']:>5} cuBLAS {r['ms']:8.3f} {r['tflops']:8.1f}")
        else:
            print(f"{r['size']:>5} {r['cluster_shape']:>4} {r['multicast']:>7} "
                  f"{'band' if 'grouped' in r['order'] else 'rows':>6} {r['epilogue']:>6} {r['sms']:>4} "
                  f"{r['ms']:8.3f} {r['tflops']:8.1f} {r.get('ratio_vs_cublas', 0):8.3f}")
    return rows


# ---------------------------------------------------------------------------- sanitizer
SANITIZER_MAIN = r"""
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <cmath>
int main() {
  using namespace NS;
  std::vector<__nv_bfloat16> a((size_t)M * K), b((size_t)N * K);
  std::vector<float> af(a.size()), bf(b.size());
  unsigned s = 12345u;
  auto rnd = [&]() { s = s * 1664525u + 1013904223u; return ((s >> 9) & 0xFFFF) / 32768.0f - 1.0f; };
  for (size_t i = 0; i < a.size(); ++i) { a[i] = __float2bfloat16(rnd()); af[i] = __bfloat162float(a[i]); }
  for (size_t i = 0; i < b.size(); ++i) { b[i] = __float2bfloat16(rnd()); bf[i] = __bfloat162float(b[i]); }
  void *dA, *dB, *dC;
  cudaMalloc(&dA, a.size() * 2); cudaMalloc(&dB, b.size() * 2); cudaMalloc(&dC, (size_t)M * N * 2);
  cudaMemcpy(dA, a.data(), a.size() * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(dB, b.data(), b.size() * 2, cudaMemcpyHostToDevice);
  cudaMemset(dC, 0xFF, (size_t)M * N * 2);
  int rc = LAUNCH(dA, dB, dC, nullptr);
  cudaError_t e = cudaDeviceSynchronize();
  std::vector<__nv_bfloat16> c((size_t)M * N);
  cudaMemcpy(c.data(), dC, c.size() * 2, cudaMemcpyDeviceToHost);
  double num = 0, den = 0;
  for (int i = 0; i < M; ++i) for (int j = 0; j < N; ++j) {
    double r = 0; for (int k = 0; k < K; ++k) r += (double)af[(size_t)i * K + k] * bf[(size_t)j * K + k];
    double d = __bfloat162float(c[(size_t)i * N + j]) - r; num += d * d; den += r * r;
  }
  std::printf("launch rc=%d sync=%s rel_err=%.3e\n", rc, cudaGetErrorString(e), std::sqrt(num / den));
  return (rc == 0 && e == cudaSuccess && std::sqrt(num / den) < 1e-2) ? 0 : 1;
}
"""


def device() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version,clocks.max.sm",
                               "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "unknown"


def run_sanitizer(out: Path) -> str:
    # exact release + sliced 2x2 + TMA-store epilogue, 2 rounds; general form (all-cluster release)
    plans = [seed_plan(M=512, N=1024, K=192, BM=128, BN=256, CM=2, CN=2, sms=8, form="closed",
                       mode=S, evict_a="first", evict_b="last"),
             seed_plan(M=320, N=448, K=192, BM=128, BN=128, CM=2, CN=2, sms=4, form="general",
                       mode=L, evict_a="first", evict_b="last")]
    log = [f"device: {device()}  date: {DATE}"]
    for i, plan in enumerate(plans):
        name = CudaPrinter(plan).cname
        src = emit(plan) + SANITIZER_MAIN.replace("NS", name).replace("LAUNCH", f"{name}_launch")
        exe = CACHE / f"sanitize_main{i}"
        cu = exe.with_suffix(".cu")
        cu.parent.mkdir(parents=True, exist_ok=True)
        cu.write_text(src)
        r = subprocess.run(["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-O2", "-std=c++17", "-lineinfo",
                            str(cu), "-o", str(exe)], capture_output=True, text=True)
        log.append(f"## {plan.name}\n$ nvcc ... rc={r.returncode}\n{r.stdout}{r.stderr}")
        for tool in ("memcheck", "racecheck", "synccheck"):
            cmd = ["compute-sanitizer", "--tool", tool, str(exe)]
            try:
                r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
                log.append(f"$ {' '.join(cmd)}  (rc={r.returncode})\n{r.stdout[-2000:]}{r.stderr[-1000:]}")
            except subprocess.TimeoutExpired:
                log.append(f"$ {' '.join(cmd)}  TIMEOUT")
    text = "\n".join(log)
    (out / f"cuda_sanitizer_{DATE}.txt").write_text(text)
    print(text[-4000:], flush=True)
    return text


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--worker", default=None)
    ap.add_argument("--skip-perf", action="store_true")
    ap.add_argument("--skip-correctness", action="store_true")
    ap.add_argument("--skip-sanitizer", action="store_true")
    args = ap.parse_args()
    if args.worker is not None:
        worker(json.loads(args.worker))
        return
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if not args.skip_correctness:
        res = run_correctness(out)
        print(f"correctness: {sum(r.get('ok', False) for r in res)}/{len(CASES)} ok", flush=True)
    if not args.skip_perf:
        run_perf(out)
    if not args.skip_sanitizer:
        run_sanitizer(out)


if __name__ == "__main__":
    main()
