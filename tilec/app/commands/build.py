"""``tilec build``: the schedule as a standalone Python module with ``matmul(a, b, out=None)`` for
any shape (:mod:`tilec.library`; docs/library.md)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from tilec.app.commands.common import overrides, positive_int, write_output
from tilec.errors import TilecError

if TYPE_CHECKING:
    from tilec.runtime.session import Session


def shape(text: str) -> tuple[int, int, int]:
    """argparse type: ``MxNxK`` (positive integers)."""
    parts = text.lower().split("x")
    try:
        dims = tuple(int(p) for p in parts)
    except ValueError:
        dims = ()
    if len(dims) != 3 or min(dims) < 1:
        raise argparse.ArgumentTypeError(f"must look like MxNxK (positive integers) but got "
                                         f"{text!r}")
    return dims


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="the kernels' backend: triton, or cuda (sm_90a; nvcc builds each "
                        "kernel on first use; no --rules)")
    p.add_argument("--rules", metavar="FILE", action="append", default=[],
                   help="a rules file (tilec sweep --export); repeatable, one per card: its "
                        "'device' names the card")
    p.add_argument("--card", choices=["auto", "h100", "h200"], default="auto",
                   help="auto (default): a table per card that has rules, chosen at run time; "
                        "h100/h200: that card's table only")
    p.add_argument("--shape", metavar="MxNxK", type=shape, action="append", default=[],
                   help="an exact table entry resolved at this shape (repeatable)")
    p.add_argument("--max-size", metavar="N", type=positive_int, default=16384,
                   help="sizes above N share the last bucket (default 16384)")
    p.add_argument("--jobs", metavar="N", type=positive_int, default=1,
                   help="processes resolving the buckets (default 1)")
    p.add_argument("--no-tuned", action="store_true",
                   help="leave out the tuned records (tilec tune) of this schedule")
    p.add_argument("--name", help="the module's name in messages (default: -o's stem)")


def run(args: argparse.Namespace, session: Session) -> int:
    from pathlib import Path

    from tilec.library import build_library, module_text

    if not args.output:
        raise TilecError("tilec build: give the module's path with -o (e.g. -o mygemm.py)")
    name = args.name or Path(args.output).stem
    if not name.isidentifier():
        raise TilecError(f"tilec build: the module name {name!r} is not a Python identifier; "
                         f"choose another -o or --name")
    lib = build_library(args.schedule, overrides(args), target=args.target, rules=args.rules,
                        card=args.card, shapes=args.shape, max_size=args.max_size,
                        tuned=not args.no_tuned, name=name, jobs=args.jobs)
    write_output(args, module_text(lib))
    if args.json:  # the module went to -o; stdout says what it holds
        print(json.dumps({"module": args.output, "name": name, "dtype": lib.dtype,
                          "b_layout": lib.b_layout, "tables": list(lib.tables),
                          "configs": [c["label"] for c in lib.configs],
                          "kernels": len(lib.kernels), "notes": lib.notes}, indent=1))
    print(f"tilec: {len(lib.configs)} configs, {len(lib.kernels)} kernels, tables: "
          f"{', '.join(lib.tables)}", file=sys.stderr)
    for note in lib.notes:
        print(f"tilec: note: {note}", file=sys.stderr)
    return 0
