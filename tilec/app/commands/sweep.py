"""``tilec sweep``: the seed-001 study at scale (:mod:`tilec.runtime.sweep` runs it).

    tilec sweep SCHEDULE.py --shapes FILE|GRID [--baseline PARAMS] [--gpus all|N]
                [--ray ADDRESS] [--db FILE] [--timeout S] [--limit N]
                [--plot OUT.png] [--export heuristic.json]

The reference is docs/cli.md (sweep) and docs/sweep.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tilec.app.commands.common import atomic_path, overrides, positive_int, write_output
from tilec.errors import TilecError

if TYPE_CHECKING:
    from tilec.runtime.session import Session


def _positive_float(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not v > 0:
        raise argparse.ArgumentTypeError(f"must be a positive number but got {text!r}")
    return v


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--shapes", metavar="FILE|GRID",
                   help="the shapes to measure: a file of 'M N K' lines (or JSON), or a grid "
                        "like 'M=16..8192x2 N=1024..16384x2 K=1024,4096' (without it: report "
                        "what --db holds)")
    p.add_argument("--baseline", metavar="PARAMS", default="DECOMP=splitk",
                   help="the baseline's parameters, NAME=VALUE separated by commas; the knobs "
                        "it leaves auto are the heuristic's (default: DECOMP=splitk, as the seed)")
    p.add_argument("--gpus", default="all", metavar="all|N",
                   help="worker processes: one per GPU of this host (default all); without a "
                        "GPU, N CPU workers on the Triton interpreter")
    p.add_argument("--ray", metavar="ADDRESS",
                   help="run the tasks on the Ray cluster at ADDRESS ('auto', 'host:port'), or "
                        "on a private local one ('local')")
    p.add_argument("--db", metavar="FILE",
                   help="the SQLite results file (default: SCHEDULE.sweep.sqlite in the current "
                        "directory); a rerun resumes it")
    p.add_argument("--timeout", type=_positive_float, default=300.0, metavar="S",
                   help="seconds one config may take (build, check, timing) before its worker "
                        "is killed and the config recorded as failed (default 300)")
    p.add_argument("--time-limit", type=_positive_float, default=None, metavar="S",
                   help="start no new shape after S seconds (a rerun goes on from there)")
    p.add_argument("--limit", type=positive_int, default=None, metavar="N",
                   help="at most N configs of the tuning space per shape (the heuristic's "
                        "choice first)")
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="the backend measured (default triton)")
    p.add_argument("--sms", type=positive_int, default=None,
                   help="SMs the tuning space is planned for (default: the schedule's SMS, "
                        "else 132)")
    p.add_argument("--build-ahead", type=int, default=None, metavar="N",
                   help="processes that compile the next kernels while the GPUs time the "
                        "current ones (default: the spare cores, at most 8 per GPU)")
    p.add_argument("--model", action="store_true",
                   help="no GPU: the decomposition cost model stands in for the measurements")
    p.add_argument("--threshold", type=float, default=0.02,
                   help="a shape counts as improved above this gain (default 0.02, the seed's)")
    p.add_argument("--plot", metavar="OUT.png",
                   help="draw the speedup map and the winning decompositions (PNG)")
    p.add_argument("--export", metavar="FILE.json",
                   help="write the tuned choices as a rules file for `tilec gen --rules`")
    p.add_argument("--radius", type=float, default=1.0,
                   help="--export: how far (log2 distance of M, N, K) a rule reaches (default 1)")


def _baseline(text: str) -> dict[str, Any]:
    from tilec.runtime.loader import parse_params

    items = [t for t in text.replace(",", " ").split() if t]
    try:
        return parse_params(items)
    except TilecError:
        raise TilecError(f"--baseline must be NAME=VALUE pairs separated by commas "
                         f"(DECOMP=splitk,SPLITS=4) but got {text!r}") from None


def use_interpreter_without_gpu() -> bool:
    """Without a usable CUDA GPU the workers (spawned: they inherit the environment) run the
    kernels in Triton's interpreter: ``TRITON_INTERPRET=1``, as docs/cli.md says; set here so the
    user need not (without it every config failed with Triton's '0 active drivers')."""
    if os.environ.get("TRITON_INTERPRET") == "1":
        return True
    try:
        import torch

        has_gpu = torch.cuda.is_available()
    except ImportError:
        has_gpu = False
    if has_gpu:
        return False
    os.environ["TRITON_INTERPRET"] = "1"
    print("tilec: note: no CUDA GPU: the workers run the kernels in Triton's interpreter "
          "(TRITON_INTERPRET=1; the times mean nothing)", file=sys.stderr)
    return True


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec sweep``: measure the shapes (``--shapes``), then report what ``--db`` holds."""
    from tilec.runtime.loader import load_module
    from tilec.runtime.records import schedule_key
    from tilec.runtime.sweep.run import gpu_list, run_sweep
    from tilec.runtime.sweep.shapes import parse_shapes
    from tilec.runtime.sweep.store import Store, sweep_id

    path = Path(args.schedule)
    load_module(path)  # a missing or broken file is one line before anything starts
    fixed = overrides(args)  # --param and --params-file
    baseline = _baseline(args.baseline)
    db = Path(args.db or f"{path.stem}.sweep.sqlite")
    if args.shapes:
        shapes = parse_shapes(args.shapes)
        gpus = args.gpus
        if not args.ray:
            if not args.model:
                use_interpreter_without_gpu()
            gpu_list(gpus)  # a bad --gpus is a usage error before the sweep starts
        model = ({"measure": "tilec.runtime.sweep.model:measure", "cublas": "tilec.runtime.sweep.model:cublas"}
                 if args.model else {"measure": None, "cublas": None})
        run = run_sweep(path, shapes, db=db, fixed=fixed, baseline=baseline, target=args.target,
                        sms=args.sms, limit=args.limit, gpus=gpus,
                        executor="ray" if args.ray else ("inline" if args.model else "pool"),
                        ray_address=args.ray, timeout=args.timeout,
                        build_ahead=args.build_ahead, time_limit=args.time_limit, log=_log, measure=model["measure"],
                        cublas=model["cublas"])
        rate = (f", {run.shapes_per_minute:.1f} shapes/min ("
                f"{run.shapes_per_minute / run.workers:.1f} per worker)"
                if run.shapes_per_minute else "")
        print(f"tilec sweep: {run.shapes} shapes, {run.measured} configs measured "
              f"({run.failed} failed), {run.skipped} already in {db}; {run.seconds:.0f} s on "
              f"{run.workers} worker(s){rate}"
              + ("; stopped by --time-limit (run it again to go on)" if run.stopped else ""),
              file=sys.stderr)
    if not db.exists():
        raise TilecError(f"--db {str(db)!r} does not exist; run a sweep first (--shapes)")
    store = Store(db)
    try:
        sid = sweep_id(schedule_key(path.read_text(), args.target), args.target, fixed, baseline)
        rows = list(store.rows(sid))
        if not rows:
            held = "; ".join(f"{s['path']} target {s['target']} --param {s['fixed']} "
                             f"--baseline {s['baseline']} ({s['rows']} rows)"
                             for s in store.sweeps()) or "nothing"
            raise TilecError(f"{db} holds no result of this sweep ({path.name} as it is now, "
                             f"--target {args.target}, these --param and --baseline values); it "
                             f"holds: {held}")
    finally:
        store.close()
    return _report(args, path, rows, fixed, baseline)


def _log(line: str) -> None:
    print(f"tilec sweep: {line}"[:300], file=sys.stderr)


def _report(args: argparse.Namespace, path: Path, rows: list[Any], fixed: dict[str, Any],
            baseline: dict[str, Any]) -> int:
    from tilec.runtime.sweep.summary import format_summary, shape_results, summarize

    results = shape_results(rows)
    summary = summarize(results, threshold=args.threshold)
    devices = sorted({r.device for r in rows if r.device})
    base = "baseline " + ",".join(f"{k}={v}" for k, v in baseline.items())
    if args.plot:
        from tilec.runtime.sweep.plot import render

        out = Path(args.plot)
        with atomic_path(out) as tmp:
            w, h = render(results, tmp, title=f"{path.name}: tuned vs {base}"
                          + (f" on {', '.join(devices)}" if devices else ""), baseline=base)
        print(f"wrote {out} ({w}x{h} px)", file=sys.stderr)
    if args.export:
        _export(args, path, results, fixed, devices)
    data = {"schedule": str(path), "target": args.target, "fixed": fixed,
            "baseline": baseline, "devices": devices, "summary": summary,
            "shapes": [_shape_json(r) for r in results]}
    if args.json:
        write_output(args, json.dumps(data, indent=1))
    else:
        write_output(args, format_summary(summary, head=f"# {path.name} vs {base}"
                                    + (f" on {', '.join(devices)}" if devices else "")))
    return 0


def _shape_json(r: Any) -> dict[str, Any]:
    return {"M": r.M, "N": r.N, "K": r.K,
            "best": None if r.best is None else {"label": r.best.label, "decomp": r.best.decomp,
                                                 "params": r.best.params, "ms": r.best.ms},
            "baseline_ms": r.baseline_ms, "cublas_ms": r.cublas_ms, "speedup": r.speedup,
            "vs_cublas": r.vs_cublas, "configs": r.configs, "failed": r.failed,
            "by_decomposition": {d: row.ms for d, row in r.by_decomp.items()},
            "errors": list(r.errors)}


def _export(args: argparse.Namespace, path: Path, results: list[Any], fixed: dict[str, Any],
            devices: list[str]) -> None:
    from tilec.runtime.records import schedule_key
    from tilec.runtime.rules import rules_data

    if args.radius < 0:
        raise TilecError(f"--radius must be >= 0 but got {args.radius}")
    entries = [{"M": r.M, "N": r.N, "K": r.K, "params": r.best.params, "label": r.best.label,
                "ms": r.best.ms, "baseline_ms": r.baseline_ms, "speedup": r.speedup}
               for r in results if r.best is not None]
    if not entries:
        raise TilecError("--export: no shape has a correct tuned config; nothing to export")
    data = rules_data(entries, schedule=path.name,
                      schedule_key=schedule_key(path.read_text(), args.target),
                      target=args.target, fixed=fixed, device=", ".join(devices) or None,
                      radius=args.radius)
    out = Path(args.export)
    with atomic_path(out) as tmp:
        tmp.write_text(json.dumps(data, indent=1) + "\n")
    print(f"wrote {out} ({len(entries)} rules)", file=sys.stderr)
