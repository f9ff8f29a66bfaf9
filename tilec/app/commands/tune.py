"""``tilec tune`` (GPU): the schedule's own "auto" parameter choices timed
(:mod:`tilec.runtime.autotune`), the winner recorded so that a later ``tilec gen`` of the same
schedule and shape uses it; ``-o params.json`` pins it for ``--params-file``."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from tilec.app.commands.common import load_args, overrides, positive_int, require_gpu, write_output
from tilec.errors import TilecError
from tilec.runtime.build import is_thread_level

if TYPE_CHECKING:
    from tilec.runtime.session import Session


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="the backend whose kernels are timed (default: triton)")
    p.add_argument("--sms", type=positive_int, default=None,
                   help="SMs the decomposition plans for (default: the schedule's SMS, else 132)")
    p.add_argument("--limit", type=positive_int, default=None,
                   help="time at most this many configs (the heuristic's choice first)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the configs that would be timed; needs no GPU")


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec tune``: the configs ranked by time and the winner recorded (``--dry-run``: the
    configs only)."""
    from tilec.runtime.autotune import space, tune, write_params
    from tilec.transforms.heuristic import KNOBS

    loaded = load_args(args)  # the file and the --param values are checked before the GPU
    if is_thread_level(loaded.fusion):
        raise TilecError(f"{loaded.path.name}: tune times tensor-core schedules; a thread-level "
                         f"schedule is tuned by giving its parameters")
    given = overrides(args)
    if args.dry_run:
        if not any(isinstance(loaded.raw_params.get(k), str)
                   and loaded.raw_params[k].lower() == "auto" for k in KNOBS):
            # what tune() says on the GPU (the file's own values are no configs to list)
            raise TilecError(f"{loaded.path.name}: no parameter is 'auto' at these values, so "
                             f"there is nothing to tune; set the knobs to tune to 'auto' (for "
                             f"example --param BM=auto) or leave them out of --param")
        configs = space(args.schedule, given, target=args.target, sms=args.sms, limit=args.limit)
        if args.json:
            write_output(args, json.dumps({"configs": [c.params() for c in configs]}, indent=1))
        else:
            write_output(args, "\n".join([f"# {len(configs)} configs of {loaded.path.name} "
                                    f"(heuristic first)", *(f"  {c.short()}" for c in configs)]))
        return 0
    require_gpu("tune")
    res = tune(args.schedule, given, target=args.target, sms=args.sms, limit=args.limit,
               session=session)
    M, N, K = res.shape
    ranked = sorted(res.results, key=lambda r: (r[1].ms is None, r[1].ms or 0.0))
    if args.output and args.output.endswith(".json") and not args.json:
        write_params(args.output, {**given, **res.params})
        print(f"wrote {args.output} (use it with --params-file)", file=sys.stderr)
        args.output = None
    if args.json:
        write_output(args, json.dumps({
            "M": M, "N": N, "K": K, "best": res.params, "key": res.key, "note": res.note,
            "results": [{"config": c.params(), "ms": m.ms, "tflops": m.tflops, "ok": m.ok,
                         "error": m.error} for c, m in ranked]}, indent=1))
        return 0
    out = [f"# tune {loaded.path.name} at {M}x{N}x{K}: {len(ranked)} configs"]
    for c, m in ranked:
        if m.ms is None:
            out.append(f"  {'failed':>9}  {c.short()}: {m.error}")
        else:
            out.append(f"  {m.ms:>7.4f}ms {m.tflops or 0:>7.1f} TFLOP/s  {c.short()}")
    if res.note:
        out.append(res.note)
    out.append(f"best: {res.best.short()}; recorded: tilec gen of this schedule at these "
               f"parameters now uses it (--no-tuned to ignore)")
    out.append("pin it: " + " ".join(f"--param {k}={v}" for k, v in res.params.items()))
    write_output(args, "\n".join(out))
    return 0
