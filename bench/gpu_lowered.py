"""Schedules lowered through the IR (tilec.transforms.pipeline) on the GPU: the kernels `tilec gen`
prints, with the derived multicast masks (CUDA) and the IR's tile orders (Triton).

Checks each against a float32 torch reference on random inputs with a NaN-poisoned output, then
times the large ones beside cuBLAS (torch.matmul). Writes bench/results/lowered_h200_<date>.json
(or $OUT/lowered.json when OUT is set).

    PYTHONPATH=. python bench/gpu_lowered.py
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import traceback
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tilec.runtime.loader import load_schedule  # noqa: E402
from tilec.transforms.multicast.derive import symbolic_instance  # noqa: E402
from tilec.transforms.pipeline import lower  # noqa: E402

SEED = ROOT / "examples" / "seed004_persistent_cluster.py"
DECOMP = ROOT / "examples" / "gemm_decomposition.py"


def rel(c: torch.Tensor, ref: torch.Tensor) -> float:
    return float((c.float() - ref).norm() / ref.norm())


def time_ms(fn) -> float:
    import triton.testing

    return float(triton.testing.do_bench(fn, warmup=25, rep=100, return_mode="median"))


def cuda_case(params: dict, mode: str, timing: bool) -> dict:
    from tilec.codegen.cuda.launch import build

    s = load_schedule(SEED, params)
    sym = symbolic_instance(s.module.schedule, s.params)
    plan = lower(s.fusion, target="cuda", params=s.params, symbolic=sym, mode=mode,
                 name=f"low_{abs(hash(json.dumps(params, sort_keys=True))) % 10**8}_{mode}")
    kern = build(plan)
    M, N, K = plan.M, plan.N, plan.K
    out = {"target": "cuda", "params": params, "mode": mode,
           "closed": {op: (getattr(plan, op.lower()).multicast.closed_form
                           if getattr(plan, op.lower()).multicast else None) for op in "AB"}}
    for trial in range(2):
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        kern(a, b, c)
        torch.cuda.synchronize()
        ref = a.float() @ b.float().T
        out[f"rel_err_{trial}"] = rel(c, ref)
        out["nan"] = bool(torch.isnan(c).any())
    out["ok"] = not out["nan"] and max(out["rel_err_0"], out["rel_err_1"]) < 1e-2
    if timing:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(N, K, device="cuda", dtype=torch.bfloat16)
        c = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        ms = time_ms(lambda: kern(a, b, c))
        ms_ref = time_ms(lambda: torch.matmul(a, b.T))
        fl = 2 * M * N * K
        out |= {"ms": ms, "cublas_ms": ms_ref, "tflops": fl / ms / 1e9,
                "cublas_tflops": fl / ms_ref / 1e9, "x_cublas": ms_ref / ms}
    return out


def triton_case(params: dict, timing: bool) -> dict:
    from tilec.runtime.build import load_triton

    s = load_schedule(DECOMP, params)
    plan = lower(s.fusion, target="triton", params=s.params)
    mod = load_triton(plan)
    M, N, K = plan.M, plan.N, plan.K
    out = {"target": "triton", "params": params, "work": plan.work.kind.value}
    for trial in range(2):
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        c = torch.full((M, N), float("nan"), device="cuda", dtype=torch.bfloat16)
        mod.run(a, b, out=c)
        torch.cuda.synchronize()
        out[f"rel_err_{trial}"] = rel(c, a.float() @ b.float())
        out["nan"] = bool(torch.isnan(c).any())
    out["ok"] = not out["nan"] and max(out["rel_err_0"], out["rel_err_1"]) < 1e-2
    if timing:
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        ms = time_ms(lambda: mod.run(a, b))
        ms_ref = time_ms(lambda: torch.matmul(a, b))
        fl = 2 * M * N * K
        out |= {"ms": ms, "cublas_ms": ms_ref, "x_cublas": ms_ref / ms, "tflops": fl / ms / 1e9}
    return out


CASES = [
    # seed schedule, derived masks: ragged, partial last round, clusters of 2 and 4
    ("cuda", dict(M=1000, N=1500, K=776, CM=2, CN=1, CLUSTER=2, SMS=132), "leader", False),
    ("cuda", dict(M=1100, N=1300, K=520, CM=1, CN=2, CLUSTER=2, SMS=132), "sliced", False),
    ("cuda", dict(M=2048, N=2048, K=512, CM=2, CN=2, CLUSTER=4, SMS=120), "leader", False),
    ("cuda", dict(M=2048, N=2048, K=512, CM=2, CN=2, CLUSTER=4, SMS=120), "sliced", False),
    ("cuda", dict(M=4096, N=4096, K=4096, CM=2, CN=1, CLUSTER=2, SMS=132), "leader", True),
    ("cuda", dict(M=8192, N=8192, K=8192, CM=2, CN=1, CLUSTER=2, SMS=132), "leader", True),
    # decompositions through the IR's grouped-raster order
    ("triton", dict(M=1000, N=700, K=3000, BM=64, BN=64, BK=64, SMS=132, DECOMP="streamk",
                    FIXUP="deterministic"), None, False),
    ("triton", dict(M=1000, N=700, K=3000, BM=64, BN=64, BK=64, SMS=132, DECOMP="splitk",
                    SPLITS=3, FIXUP="atomic"), None, False),
    ("triton", dict(M=4096, N=4096, K=4096, DECOMP="dp"), None, True),
    ("triton", dict(M=512, N=512, K=65536, BM=128, BN=128, BK=64, DECOMP="auto"), None, True),
    ("triton", dict(M=128, N=4096, K=7168, BM=64, BN=128, BK=128, DECOMP="auto"), None, True),
]


def main() -> None:
    results = []
    only = os.environ.get("CASES")  # e.g. CASES=9,10: re-run some cases only
    cases = [c for i, c in enumerate(CASES) if not only or str(i) in only.split(",")]
    for target, params, mode, timing in cases:
        t0 = time.time()
        try:
            r = cuda_case(params, mode, timing) if target == "cuda" else triton_case(params, timing)
        except Exception as e:  # one bad case must not hide the others
            r = {"target": target, "params": params, "mode": mode, "ok": False,
                 "error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc()[-2000:]}
        r["seconds"] = time.time() - t0
        results.append(r)
        print(json.dumps({k: v for k, v in r.items() if k != "trace"}), flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.mem,driver_version",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    doc = {"date": time.strftime("%Y-%m-%d"), "device": torch.cuda.get_device_name(),
           "nvidia_smi": smi, "torch": torch.__version__, "results": results}
    suffix = f"_cases{only.replace(',', '-')}" if only else ""
    dest = Path(os.environ["OUT"]) / f"lowered{suffix}.json" if os.environ.get("OUT") else (
        ROOT / "bench" / "results" / f"lowered_h200_{doc['date']}{suffix}.json")
    dest.write_text(json.dumps(doc, indent=1) + "\n")
    print("\nsummary")
    for r in results:
        extra = f" {r['x_cublas']:.2f}x cuBLAS" if "x_cublas" in r else ""
        print(f"  {r['target']:6} {'ok ' if r['ok'] else 'BAD'} {json.dumps(r['params'])}"
              f" {r.get('mode') or r.get('work', '')}{extra} {r.get('error', '')}")


if __name__ == "__main__":
    main()
