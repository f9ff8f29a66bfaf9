"""Time `tilec masks examples/seed004_persistent_cluster.py --json` (issue target: < 1 s on the
CI machine), end to end in a fresh process: cold (empty $TILEC_CACHE: everything derived and
proved) and warm (the cached result of the same schedule, parameters and tilec), and the
derivation's parts in process.

    python bench/bench_masks.py [--runs 5]

Prints a table and writes bench/results/masks_seed.json. Run it on an otherwise idle machine:
on a 2-core machine any concurrent job doubles wall times.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "examples" / "seed004_persistent_cluster.py"


def fresh_process(runs: int) -> dict[str, float]:
    """Cold: a fresh process and an empty cache each run. Warm: a fresh process, cache filled."""
    cmd = [sys.executable, "-c", "from tilec.app.cli import entry; entry()", "masks", str(SEED),
           "--json", "-o", os.devnull]
    cold, warm, imports, bare, sym = [], [], [], [], []
    for _ in range(runs):
        with tempfile.TemporaryDirectory() as tmp:
            env = dict(os.environ, TILEC_CACHE=tmp)
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True, env=env)
            cold.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            subprocess.run(cmd, check=True, cwd=ROOT, capture_output=True, env=env)
            warm.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sympy, tilec.ir, tilec.proofs"],
                       check=True, cwd=ROOT)
        imports.append(time.perf_counter() - t0)
        # the floor under any sympy-based cold run: Python itself, and sympy with the modules
        # its first Add imports lazily (sympy.tensor, sympy.combinatorics)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "pass"], check=True)
        bare.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import sympy; sympy.Symbol('x') + 1"], check=True)
        sym.append(time.perf_counter() - t0)
    return {"cold_median_s": statistics.median(cold), "cold_min_s": min(cold),
            "warm_median_s": statistics.median(warm), "warm_min_s": min(warm),
            "python_sympy_tilec_imports_median_s": statistics.median(imports),
            "python_startup_median_s": statistics.median(bare),
            "python_sympy_import_median_s": statistics.median(sym)}


def in_process() -> dict[str, float]:
    from tilec.app.loader import load_schedule
    from tilec.app.loader import derive_from_file

    t0 = time.perf_counter()
    load_schedule(SEED)
    t1 = time.perf_counter()
    d = derive_from_file(SEED)
    t2 = time.perf_counter()
    text = json.dumps(d.to_json(), separators=(",", ":"))
    t3 = time.perf_counter()
    derive_from_file(SEED, {"M": 2 * 8192})  # same structure and facts: caches hit
    t4 = time.perf_counter()
    return {"build_schedule_s": t1 - t0, "derive_first_s": t2 - t1, "json_s": t3 - t2,
            "derive_cached_structure_s": t4 - t3, "json_bytes": len(text),
            "closed_A": d.operands["A"].closed_form, "closed_B": d.operands["B"].closed_form}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=5)
    args = ap.parse_args()
    res = {"machine": platform.machine(), "cpus": os.cpu_count(),
           "loadavg": os.getloadavg(), "date": time.strftime("%Y-%m-%d"),
           **fresh_process(args.runs), **in_process()}
    print(f"{'measure':<34} value")
    for k, v in res.items():
        print(f"{k:<34} {v:.3f}" if isinstance(v, float) else f"{k:<34} {v}")
    print(f"target < 1 s: cold {'met' if res['cold_median_s'] < 1 else 'MISSED'}, "
          f"warm (cache hit) {'met' if res['warm_median_s'] < 1 else 'MISSED'}")
    out = ROOT / "bench" / "results" / "masks_seed.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(res, indent=1) + "\n")


if __name__ == "__main__":
    main()
