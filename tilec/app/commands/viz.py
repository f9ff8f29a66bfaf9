"""``tilec viz``: the schedule drawn as a PNG (:mod:`tilec.app.viz` draws): the C tiles of each
round, the multicast groups, the SMs' timeline, or for a thread-level schedule which lane of
which warp touches which element."""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tilec.app.commands.common import atomic_path, derive, load_args, mode_option, positive_int
from tilec.app.commands.explain import lowered
from tilec.errors import TilecError
from tilec.runtime.build import is_thread_level
from tilec.runtime.progress import Status

if TYPE_CHECKING:
    from tilec.runtime.loader import LoadedSchedule
    from tilec.runtime.session import Session


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", choices=["tiles", "multicast", "timeline", "all", "threads"],
                   default="all", help="which picture (default all: the three as panels of one "
                   "PNG; threads: which lane of which warp touches which element, for a "
                   "thread-level schedule)")
    p.add_argument("--warps", default="0,1", metavar="W,W,...",
                   help="threads picture: the warps drawn (default 0,1)")
    mode_option(p)
    p.add_argument("--sms", type=positive_int, default=None,
                   help="SMs of the timeline (default: the decomposition's grid, at most 132)")
    p.add_argument("--size", default=None, metavar="WxH",
                   help="image size in pixels (default per kind: tiles 1600x1000, multicast "
                        "1400x900, timeline 1600x1000, all 1800x2600, threads 1800x1000)")
    p.add_argument("--rounds", type=positive_int, default=4,
                   help="tile picture: at most this many round panels (the first ones and the "
                        "last; default 4)")


def _size(text: str | None) -> tuple[int, int] | None:
    from tilec.app.viz import check_size

    if text is None:
        return None
    w, sep, h = text.lower().partition("x")
    if not (sep and w.isdigit() and h.isdigit() and int(w) > 0 and int(h) > 0):
        raise TilecError(f"--size must look like WIDTHxHEIGHT in pixels (1600x1000) but got "
                         f"{text!r}")
    return check_size((int(w), int(h)))


@contextlib.contextmanager
def _picture_out(name: str) -> Iterator[tuple[Any, str]]:
    """Where the picture goes and its format (by ``name``'s extension): a temporary file renamed
    onto ``name`` when complete, or for ``-`` stdout's bytes (PNG)."""
    from tilec.app.viz import picture_format

    fmt = picture_format(name)
    if name == "-":
        buf = io.BytesIO()
        yield buf, fmt
        sys.stdout.buffer.write(buf.getvalue())
        sys.stdout.flush()
        return
    with atomic_path(Path(name)) as tmp:
        yield tmp, fmt
    print(f"wrote {name}", file=sys.stderr)


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec viz``: the PNG of ``--kind`` (and with ``--json`` the data drawn)."""
    from tilec.app import viz
    from tilec.ir import infer_launch

    size = _size(args.size)
    if args.output == "-" and args.json:
        raise TilecError("viz: -o - writes the picture on stdout, where --json writes its data; "
                         "give the picture a file name")
    if args.output:
        viz.picture_format(args.output)  # a name of unknown format: refused before the work
    loaded = load_args(args)
    if is_thread_level(loaded.fusion):
        if args.kind != "threads":
            raise TilecError(f"{loaded.path.name}: viz --kind {args.kind} draws tile-level "
                             f"schedules (Mma tiles); a thread-level schedule has one CTA per "
                             f"tile: use --kind threads, or see `tilec explain`")
        return _viz_threads(args, loaded, size)
    if args.kind == "threads":
        raise TilecError(f"{loaded.path.name}: viz --kind threads draws thread-level schedules "
                         f"(TIDx/TIDy axes); this one is tile-level")
    with Status(f"viz: lowering {loaded.path.name}"):
        plan = lowered(loaded, session)
    if args.kind in ("timeline", "all") and plan.tiles > viz.MAX_TIMELINE_TILES:
        raise TilecError(f"{loaded.path.name}: viz --kind {args.kind} draws at most "
                         f"{viz.MAX_TIMELINE_TILES} tiles on the SM timeline (a block per tile "
                         f"and SM is under a pixel past it) but this schedule has {plan.tiles}; "
                         f"use --kind tiles, or a smaller problem")
    launch = infer_launch(loaded.fusion)
    grid = 1
    for g in launch.grid:
        grid *= int(g)
    cs = launch.cluster_size
    derivation = None
    if cs > 1 and args.kind in ("multicast", "all"):
        derivation = derive(args, session)
    sms = args.sms if args.sms is not None else min(plan.work.grid, 132)
    path = Path(args.output or f"{loaded.path.stem}_{args.kind}.png")
    with _picture_out(str(path)) as (out, fmt), Status(f"viz: drawing {args.kind}"):
        viz.render(args.kind, out, plan=plan, grid=grid, cluster_size=cs,
                   derivation=derivation, mode=args.mode, sms=sms, size=size,
                   max_rounds=args.rounds, fmt=fmt)
    if args.json:
        data: dict[str, Any] = {"kind": args.kind, "file": str(path),
                                "size": list(size or viz.DEFAULT_SIZE[args.kind]),
                                "grid": grid, "cluster_size": cs}
        if args.kind in ("tiles", "all"):
            data["tiles"] = [vars(c) for c in viz.tile_assignment(plan, grid, cs)]
        if derivation is not None:
            data["multicast"] = {k: [vars(p) for p in v]
                                 for k, v in viz.multicast_patterns(derivation).items()}
        if args.kind in ("timeline", "all"):
            tl = viz.timeline(plan, sms)
            data["timeline"] = {"sms": tl.sms, "k_iters": tl.k_iters, "fixup": tl.fixup,
                                "makespan": tl.makespan, "blocks": [vars(b) for b in tl.blocks]}
        print(json.dumps(data, indent=1))
    return 0


def _viz_threads(args: argparse.Namespace, loaded: LoadedSchedule, size: tuple[int, int] | None
                 ) -> int:
    from tilec.app import viz, viz_threads
    from tilec.transforms.simt.lower import lower_simt

    try:
        warps = [int(w) for w in args.warps.split(",")]
    except ValueError:
        raise TilecError(f"--warps must be warp numbers separated by commas (0,1) but got "
                         f"{args.warps!r}") from None
    plan = lower_simt(loaded.fusion)
    path = args.output or f"{loaded.path.stem}_threads.png"
    with _picture_out(path) as (out, fmt):
        _, maps = viz_threads.render_threads(out, plan, warps, size=size, fmt=fmt)
    if args.json:
        print(json.dumps({"kind": "threads", "file": str(path),
                          "size": list(size or viz.DEFAULT_SIZE["threads"]), "warps": warps,
                          "accesses": [{"tensor": m.tensor, "kind": m.kind, "width": m.width,
                                        "point": m.point, "sectors": m.sectors,
                                        "verdict": m.verdict,
                                        "cells": [[r, c, w, lane] for (r, c), who in
                                                  sorted(m.cells.items()) for w, lane in who]}
                                       for m in maps]}, indent=1))
    return 0
