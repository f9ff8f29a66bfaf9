"""``tilec show``: the views, their loop domains, the launch and the index maps, simplified as
a person reads them (:func:`readable_map`; ``tilec explain`` shows the same views)."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from tilec.app.commands.common import load_args, write_output
from tilec.errors import TilecError

if TYPE_CHECKING:
    from tilec.ir.indexing import IndexMap
    from tilec.ir.launch import LaunchDims
    from tilec.runtime.loader import LoadedSchedule
    from tilec.runtime.session import Session


def readable_map(im: IndexMap) -> tuple[dict[str, Any], list[Any]]:
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


def options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="the kernel whose block is shown (default triton, as tilec gen)")


def kernel_launch(loaded: LoadedSchedule, target: str = "triton",
                  session: Session | None = None) -> LaunchDims:
    """The launch of the kernel ``tilec gen --target`` prints: the IR's grid and cluster, and
    for a tile-level schedule the block of the lowered plan (its warps x 32 threads: the IR
    binds no thread axis, so its own block is (1, 1, 1)). Over symbolic sizes (no lowering) the
    IR's launch.

    >>> from tilec.runtime.loader import load_schedule
    >>> seed = load_schedule("examples/seed004_persistent_cluster.py")
    >>> kernel_launch(seed, "cuda").block, kernel_launch(seed, "triton").block
    ((384, 1, 1), (256, 1, 1))
    """
    from dataclasses import replace

    import sympy

    from tilec.ir import infer_launch
    from tilec.runtime.build import is_thread_level, kernel_plan
    from tilec.runtime.loader import MAX_TILES, tile_count
    from tilec.transforms.plan import KernelPlan

    launch = infer_launch(loaded.fusion)
    if is_thread_level(loaded.fusion):
        return launch  # the schedule binds the threads itself
    tiles = tile_count(loaded.fusion)
    if tiles is None or tiles > MAX_TILES:
        return launch  # symbolic, or too many tiles to lower (show prints any size)
    try:
        plan = kernel_plan(loaded, target=target, session=session)
    except TilecError:
        return launch  # symbolic sizes, or a schedule this target does not lower
    assert isinstance(plan, KernelPlan)  # a tile-level schedule's plan
    return replace(launch, block=(sympy.Integer(32 * plan.num_warps), sympy.Integer(1),
                                  sympy.Integer(1)))


def show_data(loaded: LoadedSchedule, target: str = "triton", session: Session | None = None
              ) -> dict[str, Any]:
    """What ``tilec show --json`` prints: per view its loop, index map (readable), bounds and
    predicates, and the launch of the ``target`` kernel (:func:`kernel_launch`)."""
    from tilec.ir import index_map

    fusion = loaded.fusion
    launch = kernel_launch(loaded, target, session)
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


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec show``: the views with their loop domains, the launch, the index maps."""
    from tilec.ir import index_map
    from tilec.runtime.build import is_thread_level

    loaded = load_args(args)
    if args.json:
        write_output(args, json.dumps(show_data(loaded, args.target, session), indent=1))
        return 0
    fusion = loaded.fusion
    out = [f"# {loaded.path.name}  " + " ".join(f"{k}={v}" for k, v in loaded.params.items()), ""]
    out.append("views (loop domains):")
    out += [f"  {v}" for v in fusion.views()]
    launch = kernel_launch(loaded, args.target, session)
    unknown = all(b == 1 for b in launch.block) and not is_thread_level(fusion)
    out += ["", f"launch: {launch}" + ("  (block: the lowering's warps, once the sizes are "
                                        "numbers)" if unknown else ""), "", "index maps:"]
    for v in fusion.views():
        out += ["  " + line for line in str(index_map(v)).splitlines()]
    write_output(args, "\n".join(out))
    return 0
