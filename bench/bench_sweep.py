"""The seed-001 study on real GPUs: `tilec sweep` of examples/gemm_decomposition.py over shapes of
the seed's kind (M in 16..8192, N and K in 1024..16384), timed against split-K and cuBLAS.

    PYTHONPATH=$PWD python bench/bench_sweep.py --shapes GRID --gpus N --db FILE --limit 3 \
        --out RESULT.json [--plot MAP.png] [--build-ahead N]

Writes RESULT.json: the device, the clocks read before and after (never changed), the run's
wall time and throughput (shapes per minute, per GPU), the sweep's summary and the per-shape
results. The timing method is tilec.runtime.autotune.measure's (CUDA events through
triton.testing.do_bench, median, L2 flushed before each replay; each kernel checked against
torch first); cuBLAS is torch.matmul timed the same way.
"""

from __future__ import annotations

import argparse
import datetime
import json
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tilec.runtime.sweep.plot import render  # noqa: E402
from tilec.runtime.sweep.run import run_sweep  # noqa: E402
from tilec.runtime.sweep.shapes import parse_shapes  # noqa: E402
from tilec.runtime.sweep.store import Store  # noqa: E402
from tilec.runtime.sweep.summary import format_summary, shape_results, summarize  # noqa: E402

EX = str(ROOT / "examples" / "gemm_decomposition.py")


def clocks() -> list[str]:
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=index,name,clocks.sm,clocks.mem,"
                              "clocks.max.sm,temperature.gpu,power.draw", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip().splitlines()
    except (OSError, subprocess.SubprocessError) as e:
        return [f"nvidia-smi: {e}"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--shapes", required=True)
    ap.add_argument("--take", default=None, help="A:B:S: a slice of the shapes")
    ap.add_argument("--gpus", default="all")
    ap.add_argument("--db", required=True)
    ap.add_argument("--limit", type=int, default=3)
    ap.add_argument("--timeout", type=float, default=120.0)
    ap.add_argument("--build-ahead", type=int, default=None)
    ap.add_argument("--out", required=True)
    ap.add_argument("--plot", default=None)
    ap.add_argument("--time-limit", type=float, default=None)
    args = ap.parse_args()
    shapes = parse_shapes(args.shapes)
    if args.take:
        shapes = shapes[slice(*(int(x) if x else None for x in args.take.split(":")))]
    before = clocks()
    t0 = time.time()
    run = run_sweep(EX, shapes, db=args.db, limit=args.limit, gpus=args.gpus,
                    timeout=args.timeout, build_ahead=args.build_ahead, progress=False,
                    time_limit=args.time_limit,
                    log=lambda line: print(line[:240], file=sys.stderr))
    wall = time.time() - t0
    st = Store(args.db)
    rows = list(st.rows(run.sweep))
    st.close()
    results = shape_results(rows)
    summary = summarize(results)
    print(format_summary(summary), file=sys.stderr)
    devices = sorted({r.device for r in rows if r.device})
    data = {
        "date": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "device": devices, "clocks_before": before, "clocks_after": clocks(),
        "schedule": "examples/gemm_decomposition.py", "baseline": {"DECOMP": "splitk"},
        "limit": args.limit, "shapes_spec": args.shapes, "take": args.take,
        "method": "tilec.runtime.autotune.measure: checked against torch, then "
                  "triton.testing.do_bench median (warmup 10 ms, rep 40 ms), L2 flushed; "
                  "cuBLAS: torch.matmul timed alike",
        "run": {"shapes": run.shapes, "completed": run.completed, "stopped": run.stopped,
                "time_limit": args.time_limit, "workers": run.workers, "measured": run.measured,
                "failed": run.failed, "skipped": run.skipped, "seconds": run.seconds,
                "wall_seconds": wall, "shapes_per_minute": run.shapes_per_minute,
                "shapes_per_minute_per_gpu": (run.shapes_per_minute / run.workers
                                              if run.shapes_per_minute else None),
                "build_ahead": args.build_ahead},
        "task_seconds": {role: sorted(r.seconds for r in rows if r.role == role and r.seconds)
                         [len([r for r in rows if r.role == role and r.seconds]) // 2]
                         if any(r.role == role and r.seconds for r in rows) else None
                         for role in ("tuned", "baseline", "cublas")},
        "summary": summary,
        "shapes": [{"M": r.M, "N": r.N, "K": r.K, "best": r.best.label if r.best else None,
                    "decomp": r.winner, "best_ms": r.best.ms if r.best else None,
                    "baseline_ms": r.baseline_ms, "cublas_ms": r.cublas_ms,
                    "speedup": r.speedup, "vs_cublas": r.vs_cublas, "failed": r.failed,
                    "errors": list(r.errors)[:3]} for r in results],
    }
    Path(args.out).write_text(json.dumps(data, indent=1) + "\n")
    if args.plot:
        render(results, args.plot, title=f"gemm_decomposition.py: tuned vs split-K on "
               f"{', '.join(devices)} ({len(results)} shapes)", baseline="split-K")
    print(json.dumps(data["run"]), file=sys.stderr)


if __name__ == "__main__":
    main()
