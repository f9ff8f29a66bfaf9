"""Time building the seed schedule and its index maps (budget: 200 ms on the CI machine).

    /work/venv/bin/python bench/bench_ir.py [--runs 20] [--out bench/results/ir_build.json]

Stages, each timed separately per run (median and max over ``--runs`` runs, after one warm-up):
``build`` = ``schedule(**params)`` of examples/seed004_persistent_cluster.py (GemmFusion, the
verbs, propagation); ``index_maps`` = ``index_map`` of C, A_smem and B_smem; ``launch`` =
``infer_launch``; ``total`` = the three together. The budget applies to concrete sizes; the
symbolic case (M, N, K as names) is reported for information. Exit status 1 if a concrete case
is over budget. Not a unit test: CI machines vary.
"""

from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import sympy

from tilec.ir import index_map, infer_launch
from tilec.runtime.loader import load_module

ROOT = Path(__file__).resolve().parents[1]
SEED = ROOT / "examples" / "seed004_persistent_cluster.py"
BUDGET_MS = 200.0

CASES: dict[str, dict[str, Any]] = {
    "defaults": {},
    "CN=2": {"CN": 2},
    "ragged": {"M": 1000, "N": 700, "K": 300, "CM": 3, "CN": 2, "SMS": 10, "CLUSTER": 4},
    "symbolic M,N,K": {"M": "M", "N": "N", "K": "K"},
}
# concrete sizes are what the budget is about; symbolic sizes are reported, not judged
INFORMATIONAL = {"symbolic M,N,K"}


def run_case(module: Any, params: dict[str, Any], runs: int) -> dict[str, Any]:
    stages: dict[str, list[float]] = {"build": [], "index_maps": [], "launch": [], "total": []}
    for i in range(runs + 1):  # run 0 warms caches (sympy, imports) and is not kept
        t0 = time.perf_counter()
        fusion = module.schedule(**params)
        t1 = time.perf_counter()
        maps = [index_map(v) for v in fusion.views()]
        t2 = time.perf_counter()
        infer_launch(fusion)
        t3 = time.perf_counter()
        assert len(maps) == 3
        if i:
            for k, v in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t3 - t0), strict=True):
                stages[k].append(v * 1e3)  # ms
    return {k: {"median_ms": round(statistics.median(v), 3), "max_ms": round(max(v), 3)}
            for k, v in stages.items()}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--out", default=str(ROOT / "bench" / "results" / "ir_build.json"))
    args = ap.parse_args(argv)

    module = load_module(SEED)
    results = {}
    for name, overrides in CASES.items():
        params = dict(module.PARAMS) | overrides
        results[name] = run_case(module, params, args.runs)

    cols = ("build", "index_maps", "launch", "total")
    print(f"seed004 schedule + index maps, median (max) over {args.runs} runs, ms; budget {BUDGET_MS:g} ms")
    print(f"{'case':<16}" + "".join(f"{c:>20}" for c in cols) + "   ok")
    ok_all = True
    for name, r in results.items():
        ok = r["total"]["median_ms"] < BUDGET_MS
        r["within_budget"] = ok
        if name not in INFORMATIONAL:
            ok_all &= ok
        cells = "".join(f"{r[c]['median_ms']:>11.2f} ({r[c]['max_ms']:>6.2f})" for c in cols)
        verdict = ("yes" if ok else "NO") + (" (informational)" if name in INFORMATIONAL else "")
        print(f"{name:<16}{cells}   {verdict}")

    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({
        "benchmark": "ir_build",
        "what": "examples/seed004_persistent_cluster.py: schedule(**params), index_map of C/A_smem/B_smem, infer_launch",
        "runs": args.runs,
        "budget_ms": BUDGET_MS,
        "within_budget": ok_all,
        "machine": {"python": sys.version.split()[0], "sympy": sympy.__version__,
                    "platform": platform.platform(), "processor": platform.processor()},
        "cases": {name: {"params": CASES[name], "informational": name in INFORMATIONAL, **r}
                  for name, r in results.items()},
    }, indent=1) + "\n")
    print(f"wrote {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}")
    return 0 if ok_all else 1


if __name__ == "__main__":
    raise SystemExit(main())
