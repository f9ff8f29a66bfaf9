"""``tilec masks``: the TMA multicast issue predicate, mask (and slice) of each operand, with the
facts that closed them and a table over the cluster's ranks; ``--json`` reads the disk cache
first (a hit needs no sympy).

A schedule with nothing to multicast (a cluster of one CTA, or a thread-level SIMT schedule)
gets one line saying so and why (:func:`nothing_multicast`), before any derivation or table.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tilec.app.commands.common import derive, load_args, write_output

if TYPE_CHECKING:
    from tilec.ir import GemmFusion


def nothing_multicast(fusion: GemmFusion) -> str | None:
    """Why no operand box of ``fusion`` can be multicast, or None when one may be: a
    thread-level (SIMT) schedule loads its tiles with threads, not TMA; a launch whose clusters
    hold one CTA has no other CTA to share a box with. Reads the launch only (no derivation).

    >>> from tilec.app.loader import load_schedule
    >>> nothing_multicast(load_schedule("examples/simt_sgemm.py").fusion).split(":")[0]
    'a thread-level (SIMT) schedule'
    >>> print(nothing_multicast(load_schedule("examples/gemm_basic.py").fusion))
    the launch has no cluster (clusters of 1 CTA, grid (8, 8, 1)); TMA multicast shares a box among the CTAs of one cluster: fusion.set_cluster(n) or an axis bound to RankX makes one
    >>> nothing_multicast(load_schedule("examples/seed004_persistent_cluster.py").fusion) is None
    True
    """
    from tilec.ir import infer_launch
    from tilec.runtime.build import is_thread_level

    if is_thread_level(fusion):
        return ("a thread-level (SIMT) schedule: its threads copy the A and B tiles with "
                "ordinary loads, not TMA boxes, so there is no box to multicast")
    launch = infer_launch(fusion)
    if launch.cluster_size == 1:
        grid = ", ".join(str(g) for g in launch.grid)
        return (f"the launch has no cluster (clusters of 1 CTA, grid ({grid})); TMA multicast "
                f"shares a box among the CTAs of one cluster: fusion.set_cluster(n) or an axis "
                f"bound to RankX makes one")
    return None


def nothing_multicast_json(args: argparse.Namespace) -> str | None:
    """The ``--json`` object of a schedule with nothing to multicast (None otherwise):
    ``{"params", "cluster_size", "mode", "multicast": false, "reason", "operands": {}}``."""
    import json

    loaded = load_args(args)
    reason = nothing_multicast(loaded.fusion)
    if reason is None:
        return None
    from tilec.ir import infer_launch

    cs = 1 if "thread-level" in reason else infer_launch(loaded.fusion).cluster_size
    return json.dumps({"params": loaded.params, "cluster_size": cs, "mode": args.mode,
                       "multicast": False, "reason": reason, "operands": {}},
                      separators=(",", ":"), default=str)


def run(args: argparse.Namespace) -> int:
    """``tilec masks``: per operand the forms, the facts and the table of every rank."""
    if args.json:
        from tilec.app import cache
        from tilec.app.loader import parse_params

        overrides = parse_params(args.param)
        # a cache hit needs no sympy at all: look it up before importing the derivation
        key = cache.masks_key(args.schedule, overrides, args.mode) if Path(
            args.schedule).is_file() else None
        text = cache.read(key)
        if text is None:
            text = nothing_multicast_json(args)
            if text is not None:
                cache.write(key, text)
        if text is None:
            text = cache.masks_json(args.schedule, overrides, mode=args.mode)
        write_output(args, text)
        return 0
    loaded = load_args(args)
    reason = nothing_multicast(loaded.fusion)
    if reason is not None:
        write_output(args, f"nothing is multicast: {reason}")
        return 0
    d = derive(args)
    cs = d.cluster_size
    out = [f"cluster of {cs} CTAs, {d.mode.value} mode; "
           + " ".join(f"{k}={v}" for k, v in d.params.items())]
    for name, op in d.operands.items():
        issue, mask, sidx, scount = (readable_form(f) for f in op.forms())
        out += ["", f"operand {name}: {'closed form' if op.closed_form else 'general form'}"
                f" ({op.box_bytes} bytes per box, each CTA's barrier expects all of them)",
                f"  issue = {issue}", f"  mask  = {mask}"]
        if d.mode.value == "sliced":
            out += [f"  slice = {sidx} of {scount}"]
        out += scope_lines(op)
        out += [f"  note: {n}" for n in op.notes]
        var = [str(v) for v in op.variables if str(v) != "rank"]
        head = "  " + " ".join(f"{v:>6}" for v in var) + "   rank alive issue " + "mask".rjust(cs + 2)
        if d.mode.value == "sliced":
            head += "  slice"
        out.append(head)
        for shown, row in enumerate(op.table):
            if shown >= 64:
                out.append(f"  ... {len(op.table) - shown} more rows (--json for all)")
                break
            line = "  " + " ".join(f"{row.point[v]:>6}" for v in var)
            line += f"   {row.point['rank']:>4} {'yes' if row.alive else 'no':>5} "
            line += f"{'yes' if row.issue else 'no':>5} " + format(row.mask, f"0{cs}b").rjust(cs + 2)
            if d.mode.value == "sliced" and row.alive:
                line += f"  {row.slice_index}/{row.slice_count}"
            out.append(line)
    write_output(args, "\n".join(out))
    return 0


def scope_lines(op: Any, indent: str = "  ") -> list[str]:
    """Where the closed form holds: its scope, the facts it rests on (a proved or narrowing
    form) or the fact that would prove it (a form checked at this launch only)."""
    if op.closed is None:
        return []
    scope = op.closed.scope.value
    out = [f"{indent}scope: {scope}"]
    if op.facts:
        out.append(f"{indent}facts: " + ", ".join(map(str, op.facts)))
    if op.closed.would_prove:
        out.append(f"{indent}would prove: " + ", ".join(map(str, op.closed.would_prove)))
    return out


def readable_form(e: Any) -> Any:
    """A form as printed: simplified by the theorems under no facts but the default signs (a
    general form stays general), so no ``+ 0``, ``/1`` or split left to undo by hand."""
    from tilec.proofs import simplify

    return e if e is None or isinstance(e, int) else simplify(e).expr
