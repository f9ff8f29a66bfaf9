"""``tilec explain``: the derivation as a person reads it, one section per step: the parameters
and why ("auto"), the views and index maps, the tile order with its proof, the decomposition
and its modeled cost, the multicast forms with their theorems, the coalescing of a thread-level
schedule.  The sections (and ``tilec viz``) share the run's lowering and derivation: the
:class:`~tilec.runtime.session.Session` keeps them."""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from tilec.app.commands.common import derive, load_args, mode_option, write_output
from tilec.app.commands.masks import readable_form, scope_lines
from tilec.app.commands.show import show_data
from tilec.errors import TilecError
from tilec.runtime.build import is_thread_level
from tilec.runtime.progress import Status

if TYPE_CHECKING:
    from tilec.runtime.loader import LoadedSchedule
    from tilec.runtime.session import Session
    from tilec.transforms.plan import KernelPlan

Section = dict[str, Any]  # {"text": ..., and the section's data}
Explainer = Callable[[argparse.Namespace, "LoadedSchedule", "Session"], Section]


def options(p: argparse.ArgumentParser) -> None:
    """``--mode``, and ``--target``: the target whose heuristic resolves the 'auto' knobs."""
    mode_option(p)
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="resolve 'auto' parameters for this target's kernel (default triton)")


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec explain``: every section as text (``--json``: :func:`explain_sections`)."""
    loaded = load_args(args)
    sections = explain_sections(args, loaded, session)
    if args.json:
        write_output(args, json.dumps(sections, indent=1))
        return 0
    out = [f"# {loaded.path.name}: " + " ".join(f"{k}={v}" for k, v in loaded.params.items()), ""]
    for title, sec in sections["sections"].items():
        out += [f"== {title} ==", sec["text"], ""]
    write_output(args, "\n".join(out).rstrip())
    return 0


def explain_sections(args: argparse.Namespace, loaded: LoadedSchedule, session: Session
                     ) -> dict[str, Any]:
    """``{"params": ..., "sections": {title: {"applicable": bool, "text": str, ...}}}``."""
    sections: dict[str, Any] = {}
    for title, fn in _explainers():
        try:
            with Status(f"explain: {title}"):  # a long step says what it is doing
                sec = fn(args, loaded, session)
        except TilecError as e:
            sec = {"applicable": False, "text": f"(not applicable: {e})"}
        sections[title] = {"applicable": True, **sec}
    return {"params": loaded.params, "sections": sections}


def _explain_views(args: argparse.Namespace, loaded: LoadedSchedule, session: Session
                   ) -> Section:
    from tilec.app.commands.show import kernel_launch
    from tilec.ir import index_map

    fusion = loaded.fusion
    out = [f"launch: {kernel_launch(loaded, args.target, session)}", ""]
    data = show_data(loaded, args.target, session)  # index maps simplified under their loop bounds
    for v, d in zip(fusion.views(), data["views"], strict=True):
        im = index_map(v)
        out += [str(v), f"  {v.name}:"]
        out += [f"    {k} = {e}" + ("  (broadcast)" if k in im.broadcast else "")
                for k, e in d["index_map"].items()]
        out.append("    where " + ", ".join(f"{s} < {b}" for s, b in d["bounds"].items()))
        out += [f"    predicate: {p}" for p in d["predicates"]]
        out.append("")
    return {"text": "\n".join(out).rstrip(), "launch": data["launch"], "views": data["views"]}


def lowered(loaded: LoadedSchedule, session: Session) -> KernelPlan:
    """The plan without multicast (order and work split are the same for every target):
    :meth:`Session.lowered <tilec.runtime.session.Session.lowered>`."""
    if is_thread_level(loaded.fusion):
        raise TilecError("a thread-level (SIMT) schedule has one CTA per C tile in launch order; "
                         "see the coalescing section")
    return session.lowered(loaded)


def _explain_tile_order(args: argparse.Namespace, loaded: LoadedSchedule, session: Session
                        ) -> Section:
    from tilec.ir import ceil_div, infer_launch

    plan = lowered(loaded, session)
    o = plan.order
    launch = infer_launch(loaded.fusion)
    grid = 1
    for g in launch.grid:
        grid *= int(g)
    alive = plan.order.alive_tiles()
    first = [(t, *mn) for t, mn in list(alive.items())[:8]]
    c = o.concrete()  # the forms hold for every size; the numbers are this launch's
    rounds = ceil_div(int(c.num_tiles), grid)
    text = [f"t = r * {grid} + pid   (r: persistent round, pid: linear CTA id"
            + (f" = cidx * {launch.cluster_size} + rank)" if launch.cluster_size > 1 else ")"),
            f"tile_m(t) = {o.tile_m}", f"tile_n(t) = {o.tile_n}",
            f"num_tiles = {o.num_tiles} = {c.num_tiles} linear indices ({rounds} round(s) of "
            f"{grid} CTAs) over {c.tiles_m} x {c.tiles_n} = {plan.tiles} C tiles of "
            f"{plan.BM}x{plan.BN}"
            + (f"; {int(c.num_tiles) - len(alive)} padded indices are skipped"
               if len(alive) < int(c.num_tiles) else ""),
            f"order: {o.description}",
            "first tiles: " + ", ".join(f"t={t} -> ({m}, {n})" for t, m, n in first)]
    proofs = {}
    for name, raw in (("tile_m", o.raw_tile_m), ("tile_n", o.raw_tile_n)):
        if raw is not None:
            from tilec.transforms.pipeline import coordinate_proof

            proofs[name] = (raw, coordinate_proof(raw, o.num_tiles))
            text += [f"{name}: simplified under 0 <= t < {o.num_tiles}",
                     *("  " + line for line in proofs[name][1].explain().splitlines())]
    return {"text": "\n".join(text), "tile_m": str(o.tile_m), "tile_n": str(o.tile_n),
            "proofs": {k: {"input": str(r[0]), "result": str(r[1].expr),
                           "steps": [str(step) for step in r[1].trace]}
                       for k, r in proofs.items()},
            "num_tiles": int(c.num_tiles), "tiles_m": c.tiles_m, "tiles_n": c.tiles_n,
            "grid": grid, "rounds": rounds, "cluster_size": launch.cluster_size,
            "first_tiles": [list(x) for x in first]}


def _explain_decomposition(args: argparse.Namespace, loaded: LoadedSchedule, session: Session
                           ) -> Section:
    from tilec.transforms.cost_model import plan_cost

    plan = lowered(loaded, session)
    w = plan.work
    kind = loaded.fusion.decomposition.describe()
    reasons = list(plan.notes)
    cost = plan_cost(plan, w.grid)
    text = [f"{w.kind.value} (schedule asked for {kind!r}), fix-up {w.fixup.value}; grid {w.grid} "
            f"CTAs; {plan.tiles} tiles x {plan.k_iters} k-iterations of BK={plan.BK}"]
    if w.kind.value == "splitk":
        text.append(f"splits: {w.splits}")
    elif w.kind.value != "dp":
        text.append(f"Stream-K region: {w.sk_tiles} tiles over {w.sk_ctas} CTAs "
                    f"({'first' if w.sk_first else 'last'} tiles of the order)")
    text.append(f"modeled critical path: {cost.total:.1f} k-iterations, {cost.units} units, "
                f"{cost.partial_units} partial")
    text += ["why:", *("  " + r for r in reasons)]
    return {"text": "\n".join(text), "kind": w.kind.value, "requested": kind,
            "fixup": w.fixup.value, "grid": w.grid, "splits": w.splits, "sk_tiles": w.sk_tiles,
            "sk_ctas": w.sk_ctas, "sk_waves": w.sk_waves, "k_iters": plan.k_iters,
            "tiles": plan.tiles, "modeled_critical_path": cost.total, "reasons": reasons}


def _explain_multicast(args: argparse.Namespace, loaded: LoadedSchedule, session: Session
                       ) -> Section:
    from tilec.ir import infer_launch

    if infer_launch(loaded.fusion).cluster_size == 1:
        raise TilecError("no cluster: nothing to multicast")
    d = derive(args, session)
    out = []
    for name, op in d.operands.items():
        out.append(f"operand {name}:")
        out.append("  box origin (Bulk indices at 0), per non-broadcast axis:")
        out += [f"    {k} = {readable_form(e)}" for k, e in op.origin.items()]
        out.append(f"  alive(rank) = {readable_form(op.alive)}")
        out.append("  same(r1, r2) = origin(r1) == origin(r2) and alive(r1) and alive(r2)")
        if op.proof:
            out.append("  proof:")
            out += [f"    {i + 1}. [{s['theorem']}] {s['before']}  ->  {s['after']}"
                    for i, s in enumerate(op.proof)]
        if op.narrowed_same is not None:
            out.append(f"  same narrows to: {op.narrowed_same}")
        out += scope_lines(op)
        issue, mask, sidx, scount = (readable_form(f) for f in op.forms())
        out.append(f"  {'closed' if op.closed_form else 'general'} form ({d.mode.value}):")
        out.append(f"    issue(rank) = {issue}")
        out.append(f"    mask(rank)  = {mask}")
        if d.mode.value == "sliced":
            out.append(f"    slice       = {sidx} of {scount}")
        out += [f"  note: {n}" for n in op.notes]
        closers = _closers(d, op)
        out += [f"  would close with {c.fact} ("
                + ", ".join(f"{k}={a} -> {b}" for k, (a, b) in c.change.items())
                + f" meets it): {c.structure}; issue(rank) = {c.issue}, mask(rank) = {c.mask}"
                for c in closers[:3]]
    js = d.to_json()
    for op in js["operands"].values():
        del op["table"]  # `tilec masks --json` has the table
    return {"text": "\n".join(out), **js}


def _closers(d: Any, op: Any) -> list[Any]:
    """The weakest facts about the parameters that would close a general form."""
    import sympy

    from tilec.transforms.multicast.closing import what_would_close

    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in d.params.items()
              if isinstance(v, int) and not isinstance(v, bool)}
    return [_whole_tiles(c, values) for c in what_would_close(op, values)]


TILE_OF = {"M": "BM", "N": "BN", "K": "BK"}


def _whole_tiles(closer: Any, values: dict[Any, int]) -> Any:
    """``closer`` with a size it moves rounded up to whole tiles where the size was whole tiles
    and the fact still holds: ``N=768 -> 1024``, not ``N=768 -> 769`` (a 1-column tile)."""
    from dataclasses import replace

    import sympy

    from tilec.ir import ceil_div

    by_name = {str(k): (k, v) for k, v in values.items()}
    change = dict(closer.change)
    for name, (now, then) in closer.change.items():
        tile = by_name.get(TILE_OF.get(name, ""), (None, None))[1]
        if not tile or now % tile or then % tile == 0:
            continue
        rounded = ceil_div(then, tile) * tile if then > now else then // tile * tile
        moved = {k: (rounded if str(k) == name else v) for k, v in values.items()}
        if rounded > 0 and bool(closer.fact.condition().subs(moved) == sympy.true):
            change[name] = (now, rounded)
    return replace(closer, change=change)


def _explain_coalescing(args: argparse.Namespace, loaded: LoadedSchedule, session: Session
                        ) -> Section:
    from tilec.transforms.simt.banks import analyze_shared
    from tilec.transforms.simt.coalescing import analyze, explain_coalescing
    from tilec.transforms.simt.lower import lower_simt

    if not is_thread_level(loaded.fusion):
        raise TilecError("a tile-level schedule loads whole tiles with TMA or tl.load; the "
                         "analysis is for thread-level fp32 schedules")
    plan = lower_simt(loaded.fusion)
    reports = [{"tensor": r.tensor, "kind": r.kind, "pattern": r.pattern.value,
                "stride": None if r.stride is None else str(r.stride), "sectors": r.sectors,
                "ideal_sectors": r.ideal_sectors, "verdict": r.verdict} for r in analyze(plan)]
    shared = [{"array": r.array, "kind": r.kind, "what": r.what, "bits": 32 * r.width,
               "wavefronts": r.wavefronts, "ideal": r.ideal, "verdict": r.verdict}
              for r in analyze_shared(plan)]
    return {"text": explain_coalescing(plan), "accesses": reports, "shared": shared}


def _explain_parameters(args: argparse.Namespace, loaded: LoadedSchedule, session: Session
                        ) -> Section:
    res = loaded.resolution
    if res is None:
        return {"text": "every parameter is given by the schedule or the user (none is 'auto')",
                "choices": []}
    text = [f"{c.name} = {c.value}  ({c.source.value})" for c in res.choices]
    if res.reasons:
        text += ["heuristic:", *("  " + r for r in res.reasons)]
    return {"text": "\n".join(text), "reasons": list(res.reasons),
            "choices": [{"name": c.name, "value": c.value, "source": c.source.value,
                         "why": c.why} for c in res.choices]}


def _explainers() -> list[tuple[str, Explainer]]:
    return [("parameters", _explain_parameters), ("views", _explain_views),
            ("tile order", _explain_tile_order),
            ("decomposition", _explain_decomposition), ("TMA multicast", _explain_multicast),
            ("coalescing", _explain_coalescing)]
