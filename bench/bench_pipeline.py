"""The one-command path against cuBLAS (issue 12): on every shape of shared/bench/suite.json,

* ``gen``:   what ``tilec gen examples/gemm_decomposition.py --param M=.. --param N=.. --param K=..
             --no-tuned`` writes (the heuristic resolves the schedule's "auto" knobs), run through
             the generated file's own ``run(a, b)``;
* ``tuned``: ``tilec tune`` of the same schedule at that shape (``--limit`` configs), then
             ``tilec gen`` again, which now reads the tuned record;
* ``cublas``: torch.matmul;
* ``plain``: a plain Triton GEMM (tilec.runtime.bench.plain_matmul, 128x256x64, 8 warps,
             3 stages: the anchor configuration of the 2026-11-21 figures).

Each kernel is checked against an fp32 product first (NaN-poisoned output). Then ``--rounds``
rounds, each timing every kernel once in turn (tilec.runtime.bench.time_ms: median of replays,
L2 flushed before each, launches hidden behind a spinning kernel so that the GPU never waits for
Python); the table gives the median over rounds and the spread (min-max over median). Each round
also times every kernel with its launch visible (``time_ms(launch="visible")`` =
triton.testing.do_bench), reported beside: on small shapes that figure is the host's, not the
kernel's. Clocks are read (nvidia-smi), never set. Writes ``$OUT/pipeline.json`` (or
bench/results/pipeline_<device>_<date>.json).

    PYTHONPATH=. python bench/bench_pipeline.py [--rounds 5] [--limit 6] [--shapes sq1024,...]
"""

from __future__ import annotations

import argparse
import contextlib
import datetime
import importlib.util
import io
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402

from tilec.app.cli import main as tilec  # noqa: E402
from tilec.runtime.autotune import tune  # noqa: E402
from tilec.runtime.bench import plain_matmul, rel_err, tflops, time_ms  # noqa: E402

EXAMPLE = ROOT / "examples" / "gemm_decomposition.py"
SUITE = next((p for p in (ROOT / "shared", ROOT.parent / "shared")
              if (p / "bench" / "suite.json").exists()), ROOT.parent / "shared") / "bench" / "suite.json"
PLAIN = (128, 256, 64, 8, 3, 8)


def clocks() -> dict[str, str]:
    q = "clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:
        return {"error": str(e)}
    return dict(zip(q.split(","), (v.strip() for v in out.splitlines()[0].split(",")), strict=False))


def gen(shape: dict[str, int], out_dir: Path, tag: str, tuned: bool) -> tuple[object, list[str]]:
    """Run `tilec gen` as a user does and import the file it writes."""
    path = out_dir / f"{tag}.py"
    argv = ["gen", str(EXAMPLE), *(f"--param={d}={shape[d]}" for d in "MNK"), "-o", str(path)]
    if not tuned:
        argv.append("--no-tuned")
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = tilec(argv)
    if status != 0:
        raise RuntimeError(f"tilec gen failed: {err.getvalue()}")
    spec = importlib.util.spec_from_file_location(f"k_{tag}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    notes = [ln.removeprefix("tilec: note: ") for ln in err.getvalue().splitlines()
             if ln.startswith("tilec: note:")]
    return mod, notes


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--limit", type=int, default=6, help="configs tilec tune times per shape")
    ap.add_argument("--shapes", default="", help="comma-separated suite names (default: all)")
    ap.add_argument("--no-tune", action="store_true")
    args = ap.parse_args()
    suite = json.loads(SUITE.read_text())
    shapes = [s for s in suite["shapes"] if not args.shapes or s["name"] in args.shapes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="tilec_pipe_"))
    os.environ.setdefault("TILEC_CACHE", str(work / "cache"))
    dev = torch.cuda.get_device_name(0)
    data: dict[str, object] = {
        "script": "bench/bench_pipeline.py", "device": dev,
        "date": datetime.date.today().isoformat(), "rounds": args.rounds, "limit": args.limit,
        "method": "per round each kernel once, in turn; time_ms median of replays, L2 flushed "
                  "before each, launches hidden (held stream); median over rounds, spread = "
                  "(max-min)/median; *_launch_visible: the same rounds with do_bench (launch "
                  "visible)",
        "clocks_before": clocks(), "torch": torch.__version__,
        "triton": __import__("triton").__version__, "shapes": []}
    # the GPU idles at a low clock: ramp it up before the first tune (the tuner's first configs
    # would otherwise run at the idle clock); the clocks are read, never set
    w = torch.randn((8192, 8192), device="cuda", dtype=torch.bfloat16)
    t_warm = time.time()
    while time.time() - t_warm < 3.0:
        torch.matmul(w, w)
        torch.cuda.synchronize()
    del w
    data["clocks_after_warmup"] = clocks()
    t_start = time.time()
    for s in shapes:
        M, N, K = s["M"], s["N"], s["K"]
        row: dict[str, object] = {"name": s["name"], "M": M, "N": N, "K": K}
        a = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
        b = torch.randn((K, N), device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ b.float()
        out = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
        fns = {"cublas": lambda a=a, b=b: torch.matmul(a, b),
               "plain": lambda a=a, b=b: plain_matmul(a, b, PLAIN)}
        try:
            mod, notes = gen(s, work, f"{s['name']}_gen", tuned=False)
            row["gen_notes"] = notes
            fns["gen"] = lambda m=mod, a=a, b=b, out=out: m.run(a, b, out=out)
            if not args.no_tune:
                t0 = time.time()
                res = tune(EXAMPLE, {"M": M, "N": N, "K": K}, limit=args.limit, progress=False)
                row["tune_s"] = round(time.time() - t0, 1)
                row["tune"] = [{"config": c.short(), "ms": m.ms, "ok": m.ok, "error": m.error}
                               for c, m in res.results]
                mod_t, notes_t = gen(s, work, f"{s['name']}_tuned", tuned=True)
                row["tuned_notes"] = notes_t
                fns["tuned"] = lambda m=mod_t, a=a, b=b, out=out: m.run(a, b, out=out)
        except Exception as e:
            row["error"] = f"{type(e).__name__}: {e}"[:500]
        errs = {}
        for name, fn in fns.items():
            out.fill_(float("nan"))
            c = fn()
            torch.cuda.synchronize()
            errs[name] = rel_err(c, ref)
        row["rel_err"] = errs
        del ref
        times: dict[str, list[float]] = {k: [] for k in fns}
        visible: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(args.rounds):
            for name, fn in fns.items():
                times[name].append(time_ms(fn, warmup=25, rep=100))
                visible[name].append(time_ms(fn, warmup=25, rep=100, launch="visible"))
        row["ms"] = times
        row["ms_launch_visible"] = visible
        vmed = {k: statistics.median(v) for k, v in visible.items()}
        row["vs_cublas_launch_visible"] = {k: vmed["cublas"] / v for k, v in vmed.items()
                                           if k != "cublas"}
        med = {k: statistics.median(v) for k, v in times.items()}
        row["median_ms"] = med
        row["spread"] = {k: (max(v) - min(v)) / med[k] for k, v in times.items()}
        row["tflops"] = {k: tflops(M, N, K, v) for k, v in med.items()}
        row["vs_cublas"] = {k: med["cublas"] / v for k, v in med.items() if k != "cublas"}
        data["shapes"].append(row)  # type: ignore[union-attr]
        print(f"{s['name']:>16} " + "  ".join(
            f"{k} {row['vs_cublas'].get(k, 1.0):.3f}x" for k in fns if k != "cublas")
            + f"  (cuBLAS {row['tflops']['cublas']:.0f} TFLOP/s; launch visible: gen "
            f"{row['vs_cublas_launch_visible'].get('gen', 0):.3f}x)", flush=True)
    data["clocks_after"] = clocks()
    data["wall_s"] = round(time.time() - t_start, 1)
    summary = {}
    for k in ("gen", "tuned", "plain"):
        r = [row["vs_cublas"][k] for row in data["shapes"] if k in row.get("vs_cublas", {})]
        if r:
            summary[k] = {"geomean_vs_cublas": math.exp(sum(map(math.log, r)) / len(r)),
                          "min_vs_cublas": min(r), "shapes": len(r)}
        r = [row["vs_cublas_launch_visible"][k] for row in data["shapes"]
             if k in row.get("vs_cublas_launch_visible", {})]
        if r:
            summary[k + "_launch_visible"] = {
                "geomean_vs_cublas": math.exp(sum(map(math.log, r)) / len(r)),
                "min_vs_cublas": min(r), "shapes": len(r)}
    data["summary"] = summary
    print("\n" + f"{'shape':>16} {'M':>6} {'N':>6} {'K':>6}  {'cuBLAS TF':>9}  " + "  ".join(
        f"{k:>14}" for k in ("gen", "tuned", "plain")))
    for row in data["shapes"]:
        cells = []
        for k in ("gen", "tuned", "plain"):
            v = row.get("vs_cublas", {}).get(k)
            cells.append(f"{v:6.3f}x ±{100 * row['spread'][k]:3.0f}%" if v else f"{'-':>14}")
        print(f"{row['name']:>16} {row['M']:>6} {row['N']:>6} {row['K']:>6}  "
              f"{row['tflops']['cublas']:>9.0f}  " + "  ".join(cells))
    for k, v in summary.items():
        print(f"{k}: geomean {v['geomean_vs_cublas']:.3f}x cuBLAS, min {v['min_vs_cublas']:.3f}x "
              f"over {v['shapes']} shapes")
    dest = Path(os.environ["OUT"]) / "pipeline.json" if os.environ.get("OUT") else (
        ROOT / "bench" / "results" / f"pipeline_h200_{data['date']}.json")
    dest.write_text(json.dumps(data, indent=1, default=str))
    print(f"wrote {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
