"""GPU check of the shape-generic Triton kernels (issue 26): correctness at many shapes, generic
vs per-shape timing on the suite, compile count over a shape stream, host time per call.

    bench/triton_generic_pair.sh      (CPU: tilec gen of each suite shape's heuristic config into
                                       scratch/new, and with a per-shape printer's checkout into
                                       scratch/old)
    python bench/triton_generic_check.py [name,name,...]   (GPU; writes $OUT/generic_triton.json)

Results: bench/results/triton_generic_h100_2026-11-28.json.
"""

from __future__ import annotations

import importlib.util
import json
import math
import os
import random
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
import torch  # noqa: E402
import triton  # noqa: E402

OUT = Path(os.environ.get("OUT", "/tmp"))
SUITE = json.load(open(Path("/work/shared/bench/suite.json") if not (ROOT / "scratch" / "suite.json").exists() else ROOT / "scratch" / "suite.json"))["shapes"]
only = set(sys.argv[1].split(",")) if len(sys.argv) > 1 and sys.argv[1] else None
ROUNDS = int(os.environ.get("ROUNDS", "5"))


def imp(path: Path, name: str):  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def clocks() -> str:
    try:
        return subprocess.run(["nvidia-smi", "--query-gpu=clocks.sm,clocks.mem,temperature.gpu",
                               "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    except OSError:
        return "?"


def rel(c, ref) -> float:  # type: ignore[no-untyped-def]
    return ((c.float() - ref).abs().max() / ref.abs().max().clamp_min(1)).item()


def compiled(mod) -> int:  # type: ignore[no-untyped-def]
    n = 0
    for fn_name in ("gemm_kernel", "reduce_kernel"):
        fn = getattr(mod, fn_name, None)
        if fn is None:
            continue
        for v in fn.device_caches.values():
            n += len(v[0])
    return n


res: dict = {"device": torch.cuda.get_device_name(), "triton": triton.__version__,
             "torch": torch.__version__, "clocks_before": clocks(), "shapes": []}
dev = "cuda"
for s in SUITE:
    name, M, N, K = s["name"], s["M"], s["N"], s["K"]
    if only and name not in only:
        continue
    new = imp(ROOT / "scratch" / "new" / f"{name}.py", f"new_{name}")
    old_path = ROOT / "scratch" / "old" / f"{name}.py"
    old = imp(old_path, f"old_{name}") if old_path.exists() else None
    a = torch.randn(M, K, device=dev, dtype=torch.bfloat16)
    b = torch.randn(K, N, device=dev, dtype=torch.bfloat16)
    ref = (a.float() @ b.float())
    row = {"name": name, "M": M, "N": N, "K": K}
    t0 = time.time()
    c = new.run(a, b)
    torch.cuda.synchronize()
    row["first_call_s"] = round(time.time() - t0, 2)
    row["err_generic"] = rel(c, ref)
    c2 = new.run(a, b)  # the fast path
    torch.cuda.synchronize()
    row["err_generic_fast"] = rel(c2, ref)
    row["fast_path"] = len(new._LAUNCHES)
    # other shapes through the same file: ragged, small, M = 1
    other = []
    for (m, n, k) in [(1, N, K), (M // 3 + 1, N, K), (min(M, 257), min(N, 129), min(K, 100)),
                      (M, N, 64)]:
        x = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
        y = torch.randn(k, n, device=dev, dtype=torch.bfloat16)
        other.append([m, n, k, new._facts(m, n, k), rel(new.run(x, y), x.float() @ y.float())])
    row["other_shapes"] = other
    if old is not None:
        row["err_per_shape"] = rel(old.run(a, b), ref)
        tg, to = [], []
        for _ in range(ROUNDS):
            tg.append(triton.testing.do_bench(lambda: new.run(a, b), warmup=10, rep=50))
            to.append(triton.testing.do_bench(lambda: old.run(a, b), warmup=10, rep=50))
        row["ms_generic"] = statistics.median(tg)
        row["ms_per_shape"] = statistics.median(to)
        row["ratio_generic_over_per_shape"] = row["ms_generic"] / row["ms_per_shape"]
    row["compiled"] = compiled(new)
    res["shapes"].append(row)
    print(json.dumps(row), flush=True)

ratios = [r["ratio_generic_over_per_shape"] for r in res["shapes"] if "ratio_generic_over_per_shape" in r]
if ratios:
    res["geomean_generic_over_per_shape"] = math.exp(sum(map(math.log, ratios)) / len(ratios))

# compile count over a 200-shape stream (batch sizes with repeats) through one file
if os.environ.get("STREAM", "1") == "1":
    mod = imp(ROOT / "scratch" / "new" / "sq4096.py", "stream_mod")
    rng = random.Random(0)
    batches = [rng.choice([1, 7, 16, 31, 64, 100, 128, 255, 256, 512, 777, 1024]) for _ in range(200)]
    b = torch.randn(4096, 4096, device=dev, dtype=torch.bfloat16)
    t0 = time.time()
    facts = set()
    for m in batches:
        x = torch.randn(m, 4096, device=dev, dtype=torch.bfloat16)
        mod.run(x, b)
        facts.add(mod._facts(m, 4096, 4096))
    torch.cuda.synchronize()
    res["stream"] = {"calls": 200, "distinct_M": len(set(batches)), "compiled": compiled(mod),
                     "variants_seen": sorted(facts), "seconds": round(time.time() - t0, 2),
                     "fast_path_entries": len(mod._LAUNCHES)}
    print(json.dumps(res["stream"]), flush=True)
    # host time per call at a small shape (the fast path), beside torch.matmul
    x = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    y = torch.randn(1024, 1024, device=dev, dtype=torch.bfloat16)
    small = imp(ROOT / "scratch" / "new" / "sq1024.py", "small_mod")
    small_old = imp(ROOT / "scratch" / "old" / "sq1024.py", "small_old")
    small.run(x, y)
    small_old.run(x, y)
    torch.cuda.synchronize()
    host = {"shape": [1024, 1024, 1024]}
    for label, fn in (("generic_run", lambda: small.run(x, y)),
                      ("per_shape_run", lambda: small_old.run(x, y)),
                      ("torch_matmul", lambda: torch.matmul(x, y))):
        per = []
        for _ in range(5):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            for _ in range(200):
                fn()
            per.append((time.perf_counter() - t0) / 200 * 1e6)
            torch.cuda.synchronize()
        host[label + "_us"] = statistics.median(per)
    res["host_per_call"] = host
    print(json.dumps(host), flush=True)

res["clocks_after"] = clocks()
(OUT / "generic_triton.json").write_text(json.dumps(res, indent=1))
