"""``tilec masks``: the TMA multicast issue predicate, mask (and slice) of each operand, with the
facts that closed them and a table over the cluster's ranks; ``--json`` reads the disk cache
first (a hit needs no sympy).

A schedule with nothing to multicast (a cluster of one CTA, or a thread-level SIMT schedule)
gets one line saying so and why (:func:`~tilec.runtime.build.nothing_multicast`), before any
derivation or table.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

from tilec.app.commands.common import derive, load_args, write_output
from tilec.runtime.build import nothing_multicast

if TYPE_CHECKING:
    import sympy

    from tilec.runtime.session import Session
    from tilec.transforms.multicast.derive import OperandMulticast


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


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec masks``: per operand the forms, the facts and the table of every rank."""
    if args.json:
        from tilec.runtime import cache
        from tilec.runtime.loader import parse_params

        overrides = parse_params(args.param)
        # a cache hit needs no sympy at all: look it up before importing the derivation
        key = session.masks_key(args.schedule, overrides, args.mode) if Path(
            args.schedule).is_file() else None
        text = cache.read(key)
        if text is None:
            text = nothing_multicast_json(args)
            if text is not None:
                cache.write(key, text)
        if text is None:
            text = session.masks_json(args.schedule, overrides, mode=args.mode)
        write_output(args, text)
        return 0
    loaded = load_args(args)
    reason = nothing_multicast(loaded.fusion)
    if reason is not None:
        write_output(args, f"nothing is multicast: {reason}")
        return 0
    d = derive(args, session)
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


def scope_lines(op: OperandMulticast, indent: str = "  ") -> list[str]:
    """Where the closed form holds: its scope, the facts it rests on (a proved or narrowing
    form) or, for a form checked at this launch only, the facts that would prove it (the engine
    proves a closed form where they hold) or why none was found."""
    if op.closed is None:
        return []
    scope = op.closed.scope.value
    out = [f"{indent}scope: {scope}"]
    if op.facts:
        out.append(f"{indent}facts: " + ", ".join(map(str, op.facts)))
    if op.closed.would_prove:
        at = ", ".join(f"{k}={v}" for k, v in op.closed.would_prove_at)
        out.append(f"{indent}would prove: " + ", ".join(map(str, op.closed.would_prove))
                   + (f" (proved at {at})" if at else ""))
    elif op.closed.why_launch:
        out.append(f"{indent}why launch: {op.closed.why_launch}")
    return out


def readable_form(e: sympy.Basic | int | None) -> sympy.Basic | int | None:
    """A form as printed: simplified by the theorems under no facts but the default signs (a
    general form stays general), so no ``+ 0``, ``/1`` or split left to undo by hand."""
    from tilec.proofs import simplify

    return e if e is None or isinstance(e, int) else simplify(e).expr
