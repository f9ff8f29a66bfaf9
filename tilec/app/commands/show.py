"""``tilec show``: the views, their loop domains, the launch and the index maps, simplified as
a person reads them (:func:`readable_map`; ``tilec explain`` shows the same views)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from tilec.app.commands.common import load_args, write_output

if TYPE_CHECKING:
    from tilec.app.loader import LoadedSchedule


def readable_map(im: Any) -> tuple[dict[str, Any], list[Any]]:
    """An index map's logical indices and predicates as printed: simplified by the theorems under
    its loop bounds (the IR builds them unevaluated, with ``/1``, ``*1`` and the splits' digits)."""
    from sympy import true

    from tilec.proofs import Context, simplify

    ctx = Context()
    for s, b in im.bounds.items():
        ctx.bound(s, b)
    logical = {k: simplify(e, ctx).expr for k, e in im.logical.items()}
    predicates = [p for p in (simplify(p, ctx).expr for p in im.predicates) if p is not true]
    return logical, predicates


def show_data(loaded: LoadedSchedule) -> dict[str, Any]:
    """What ``tilec show --json`` prints: per view its loop, index map (readable), bounds and
    predicates, and the launch."""
    from tilec.ir import index_map, infer_launch

    fusion = loaded.fusion
    launch = infer_launch(fusion)
    views = []
    for v in fusion.views():
        im = index_map(v)
        logical, predicates = readable_map(im)
        views.append({
            "name": v.name,
            "memory": v.memory.value,
            "loop": [str(a) for a in v.loop],
            "index_map": {k: str(e) for k, e in logical.items()},
            "broadcast": sorted(im.broadcast),
            "bounds": {str(s): str(b) for s, b in im.bounds.items()},
            "predicates": [str(p) for p in predicates],
        })
    return {
        "params": loaded.params,
        "launch": {
            "grid": [str(g) for g in launch.grid],
            "cluster": list(launch.cluster),
            "block": [str(b) for b in launch.block],
            "requirements": [str(r) for r in launch.requirements],
        },
        "views": views,
        "schedule": str(fusion.schedule),
    }


def run(args: argparse.Namespace) -> int:
    """``tilec show``: the views with their loop domains, the launch, the index maps."""
    from tilec.ir import index_map, infer_launch

    loaded = load_args(args)
    if args.json:
        write_output(args, json.dumps(show_data(loaded), indent=1))
        return 0
    fusion = loaded.fusion
    out = [f"# {loaded.path.name}  " + " ".join(f"{k}={v}" for k, v in loaded.params.items()), ""]
    out.append("views (loop domains):")
    out += [f"  {v}" for v in fusion.views()]
    out += ["", f"launch: {infer_launch(fusion)}", "", "index maps:"]
    for v in fusion.views():
        out += ["  " + line for line in str(index_map(v)).splitlines()]
    write_output(args, "\n".join(out))
    return 0
