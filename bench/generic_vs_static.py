"""The cost of run-time sizes (issue 26): on every shape of shared/bench/suite.json, the
shape-generic Triton kernel that ``tilec gen`` writes today against the per-shape kernel that
``tilec gen`` wrote at 9d1b699 for the same configuration (bench/static_9d1b699: the files and the
heuristic's configs), with torch.matmul (cuBLAS) timed in the same rounds. With
``--static-from-gen`` the per-shape kernel is instead the file ``tilec gen --sizes static`` prints
today for that configuration (the generic file's text with M, N, K and the leading dimensions
``tl.constexpr``), so the two differ only in the sizes being fixed.

Per shape: both kernels and cuBLAS checked against an fp32 product (NaN-poisoned output, fresh
random inputs), then ``--rounds`` rounds, each timing static, generic and cuBLAS once in turn with
tilec.runtime.bench.time_ms (median of replays, L2 flushed before each, launches hidden). The table
gives the median over rounds, generic/static = static time / generic time (> 1: the generic kernel
is faster), and the spread (max-min over median) of each. Clocks are read (nvidia-smi), never set.

    PYTHONPATH=. python bench/generic_vs_static.py [--rounds 5] [--shapes sq1024,...] [--out DIR]
                                                   [--static-from-gen]
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
from tilec.runtime.bench import rel_err, time_ms  # noqa: E402

STATIC = ROOT / "bench" / "static_9d1b699"
EXAMPLE = ROOT / "examples" / "gemm_decomposition.py"


def clocks() -> dict[str, str]:
    q = "clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,temperature.gpu,power.draw"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except Exception as e:  # noqa: BLE001 - a reading, never fatal
        return {"error": str(e)}
    return dict(zip(q.split(","), (v.strip() for v in out.splitlines()[0].split(",")), strict=False))


def load(path: Path, tag: str) -> object:
    spec = importlib.util.spec_from_file_location(tag, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def gen_file(cfg: dict, out_dir: Path, tag: str, sizes: str = "generic") -> object:
    """``tilec gen --sizes SIZES`` with the static kernel's configuration pinned (generic: the
    sizes are given only as the reference launch, the file must not depend on them)."""
    path = out_dir / f"{sizes}_{tag}.py"
    argv = ["gen", str(EXAMPLE), "--no-tuned", "--sizes", sizes, "-o", str(path)]
    argv += [f"--param={d}={cfg[d]}" for d in "MNK"]
    argv += [f"--param={k}={v}" for k, v in cfg["params"].items()]
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        status = tilec(argv)
    if status != 0:
        raise RuntimeError(f"tilec gen failed: {err.getvalue()}")
    return load(path, f"{sizes}_{tag}")


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--shapes", default="", help="comma-separated suite names (default: all)")
    ap.add_argument("--out", default=os.environ.get("OUT", ""))
    ap.add_argument("--static-from-gen", action="store_true",
                    help="the per-shape kernel: tilec gen --sizes static of today's tree (default: "
                         "the files 9d1b699 printed, bench/static_9d1b699)")
    args = ap.parse_args()
    configs = json.loads((STATIC / "configs.json").read_text())
    names = [n for n in configs if not args.shapes or n in args.shapes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="tilec_generic_"))
    os.environ.setdefault("TILEC_CACHE", str(work / "cache"))
    data: dict = {"script": "bench/generic_vs_static.py", "device": torch.cuda.get_device_name(0),
                  "date": datetime.date.today().isoformat(), "rounds": args.rounds,
                  "method": "per round static, generic, cublas once each in turn; time_ms median "
                            "of replays, L2 flushed before each, launches hidden; median over "
                            "rounds; spread = (max-min)/median",
                  "static": "tilec gen --sizes static" if args.static_from_gen
                            else "bench/static_9d1b699",
                  "clocks_before": clocks(), "torch": torch.__version__,
                  "triton": __import__("triton").__version__, "rows": []}
    w = torch.randn((8192, 8192), device="cuda", dtype=torch.bfloat16)
    t0 = time.time()
    while time.time() - t0 < 3.0:  # ramp the clock up (read, never set)
        torch.matmul(w, w)
        torch.cuda.synchronize()
    del w
    data["clocks_after_warmup"] = clocks()
    card = "h200" if "H200" in data["device"] else "h100" if "H100" in data["device"] else "gpu"
    dest = (Path(args.out) if args.out else ROOT / "bench" / "results") / (
        f"generic_vs_static_{card}_{data['date']}{'_gen' if args.static_from_gen else ''}.json")
    dest.parent.mkdir(parents=True, exist_ok=True)
    for name in names:
        cfg = configs[name]
        M, N, K = cfg["M"], cfg["N"], cfg["K"]
        row: dict = {"name": name, "M": M, "N": N, "K": K, "config": cfg["params"]}
        a = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
        b = torch.randn((K, N), device="cuda", dtype=torch.bfloat16)
        ref = a.float() @ b.float()
        out = torch.empty((M, N), device="cuda", dtype=torch.bfloat16)
        fns = {"cublas": lambda a=a, b=b: torch.matmul(a, b)}
        try:
            st = (gen_file(cfg, work, name, "static") if args.static_from_gen
                  else load(STATIC / f"{name}.py", f"static_{name}"))
            fns["static"] = lambda m=st, a=a, b=b, out=out: m.run(a, b, out=out)
            ge = gen_file(cfg, work, name)
            fns["generic"] = lambda m=ge, a=a, b=b, out=out: m.run(a, b, out=out)
        except Exception as e:  # noqa: BLE001 - recorded in the row
            row["error"] = f"{type(e).__name__}: {e}"[:800]
        row["rel_err"] = {}
        for k, fn in fns.items():
            out.fill_(float("nan"))
            c = fn()
            torch.cuda.synchronize()
            row["rel_err"][k] = rel_err(c, ref)
        row["correct"] = all(v < 2e-2 for v in row["rel_err"].values())
        del ref
        times: dict[str, list[float]] = {k: [] for k in fns}
        for _ in range(args.rounds):
            for k, fn in fns.items():
                times[k].append(time_ms(fn, warmup=25, rep=100))
        med = {k: statistics.median(v) for k, v in times.items()}
        row["ms"] = times
        row["median_ms"] = med
        row["spread"] = {k: (max(v) - min(v)) / med[k] for k, v in times.items()}
        if "generic" in med and "static" in med:
            row["generic_vs_static"] = med["static"] / med["generic"]
        row["x_cublas"] = {k: med["cublas"] / v for k, v in med.items() if k != "cublas"}
        data["rows"].append(row)
        dest.write_text(json.dumps(data, indent=1, default=str))  # kept if the run is cut short
        print(f"{name:>18} generic/static {row.get('generic_vs_static', float('nan')):.3f}  "
              f"generic {row['x_cublas'].get('generic', float('nan')):.3f}x cuBLAS  "
              f"static {row['x_cublas'].get('static', float('nan')):.3f}x  "
              f"correct {row['correct']}", flush=True)
    data["clocks_after"] = clocks()
    r = [row["generic_vs_static"] for row in data["rows"] if "generic_vs_static" in row]
    if r:
        data["summary"] = {"geomean_generic_vs_static": math.exp(sum(map(math.log, r)) / len(r)),
                           "min": min(r), "max": max(r), "shapes": len(r)}
        print(f"\ngeneric vs static: geomean {data['summary']['geomean_generic_vs_static']:.3f} "
              f"(min {min(r):.3f}, max {max(r):.3f}) over {len(r)} shapes")
    dest.write_text(json.dumps(data, indent=1, default=str))
    print(f"wrote {dest}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
