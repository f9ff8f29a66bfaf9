"""Subcommands beyond ``show``: gen, masks, explain, viz, bench, tune (registered into tilec.app.cli
on import). The reference is docs/cli.md."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from tilec.app.cli import (
    atomic_path,
    command,
    load_args,
    nonnegative_int,
    positive_int,
    write_output,
)
from tilec.errors import TilecError
from tilec.runtime.build import is_thread_level


def _mode_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=["leader", "sliced"], default="leader",
                   help="multicast mode (default: leader)")


def _derive(args: argparse.Namespace) -> Any:
    from tilec.app.loader import derive_from_file, parse_params

    return derive_from_file(args.schedule, parse_params(args.param), mode=args.mode)


def _gen_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="triton (default) or cuda (sm_90a; a thread-level fp32 schedule gives "
                        "the SIMT kernel)")
    _mode_option(p)
    p.add_argument("--no-multicast", action="store_true",
                   help="cuda: keep the cluster but load every tile per CTA")
    p.add_argument("--no-tuned", action="store_true",
                   help="resolve 'auto' parameters by the heuristic even where tilec tune "
                        "recorded a choice")
    p.add_argument("--rules", metavar="FILE",
                   help="a rules file (tilec sweep --export) for the 'auto' parameters at shapes "
                        "in or near the swept set; a tuned record still comes first")


def kernel_plan(args: argparse.Namespace, loaded: Any) -> Any:
    """The KernelPlan (or SimtPlan) ``tilec gen`` prints for these arguments."""
    from tilec.runtime.build import kernel_plan as build_plan

    return build_plan(loaded, target=args.target, mode=args.mode,
                      multicast=not args.no_multicast)


@command("gen", "emit a standalone kernel file (Triton with run(a, b), or CUDA .cu)", _gen_options)
def cmd_gen(args: argparse.Namespace) -> int:
    from tilec.runtime.build import kernel_source

    loaded = load_args(args)
    plan = kernel_plan(args, loaded)
    source = kernel_source(plan, args.target)
    notes = [*loaded.notes, *getattr(plan, "notes", ())]
    if args.json:
        write_output(args, json.dumps({"target": args.target, "params": loaded.params,
                                 "notes": notes, "source": source}, indent=1, default=str))
        return 0
    write_output(args, source)
    for note in notes:  # after the write: a failed write is one line
        print(f"tilec: note: {note}", file=sys.stderr)
    return 0


@command("masks", "TMA multicast issue predicates and masks per operand", _mode_option)
def cmd_masks(args: argparse.Namespace) -> int:
    if args.json:
        from tilec.app import cache
        from tilec.app.loader import parse_params

        overrides = parse_params(args.param)
        # a cache hit needs no sympy at all: look it up before importing the derivation
        text = cache.read(cache.masks_key(args.schedule, overrides, args.mode)) if Path(
            args.schedule).is_file() else None
        if text is None:
            text = cache.masks_json(args.schedule, overrides, mode=args.mode)
        write_output(args, text)
        return 0
    d = _derive(args)
    cs = d.cluster_size
    out = [f"cluster of {cs} CTAs, {d.mode.value} mode; "
           + " ".join(f"{k}={v}" for k, v in d.params.items())]
    for name, op in d.operands.items():
        issue, mask, sidx, scount = (_readable(f) for f in op.forms())
        out += ["", f"operand {name}: {'closed form' if op.closed_form else 'general form'}"
                f" ({op.box_bytes} bytes per box, each CTA's barrier expects all of them)",
                f"  issue = {issue}", f"  mask  = {mask}"]
        if d.mode.value == "sliced":
            out += [f"  slice = {sidx} of {scount}"]
        if op.facts:
            out.append("  facts: " + ", ".join(map(str, op.facts)))
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


def _readable(e: Any) -> Any:
    """A form as printed: simplified by the theorems under no facts but the default signs (a
    general form stays general), so no ``+ 0``, ``/1`` or split left to undo by hand."""
    from tilec.proofs import simplify

    return e if e is None or isinstance(e, int) else simplify(e).expr


# -- explain --------------------------------------------------------------------------------


@command("explain", "the derivation as a person reads it: index maps, tile order, decomposition, "
         "multicast theorems, coalescing", _mode_option)
def cmd_explain(args: argparse.Namespace) -> int:
    loaded = load_args(args)
    sections = explain_sections(args, loaded)
    if args.json:
        write_output(args, json.dumps(sections, indent=1))
        return 0
    out = [f"# {loaded.path.name}: " + " ".join(f"{k}={v}" for k, v in loaded.params.items()), ""]
    for title, sec in sections["sections"].items():
        out += [f"== {title} ==", sec["text"], ""]
    write_output(args, "\n".join(out).rstrip())
    return 0


def explain_sections(args: argparse.Namespace, loaded: Any) -> dict[str, Any]:
    """``{"params": ..., "sections": {title: {"applicable": bool, "text": str, ...}}}``."""
    sections: dict[str, Any] = {}
    for title, fn in _explainers():
        try:
            sec = fn(args, loaded)
        except TilecError as e:
            sec = {"applicable": False, "text": f"(not applicable: {e})"}
        sections[title] = {"applicable": True, **sec}
    return {"params": loaded.params, "sections": sections}


def _explain_views(args: argparse.Namespace, loaded: Any) -> dict[str, Any]:
    from tilec.app.cli import show_data
    from tilec.ir import index_map, infer_launch

    fusion = loaded.fusion
    out = [f"launch: {infer_launch(fusion)}", ""]
    data = show_data(loaded)  # index maps simplified under their loop bounds
    for v, d in zip(fusion.views(), data["views"], strict=True):
        im = index_map(v)
        out += [str(v), f"  {v.name}:"]
        out += [f"    {k} = {e}" + ("  (broadcast)" if k in im.broadcast else "")
                for k, e in d["index_map"].items()]
        out.append("    where " + ", ".join(f"{s} < {b}" for s, b in d["bounds"].items()))
        out += [f"    predicate: {p}" for p in d["predicates"]]
        out.append("")
    return {"text": "\n".join(out).rstrip(), "launch": data["launch"], "views": data["views"]}


def _lowered(loaded: Any) -> Any:
    """The plan without multicast (order and work split are the same for every target)."""
    from tilec.transforms.pipeline import lower

    if is_thread_level(loaded.fusion):
        raise TilecError("a thread-level (SIMT) schedule has one CTA per C tile in launch order; "
                         "see the coalescing section")
    return PLANS.get(loaded, lambda: lower(loaded.fusion, target="cuda", params=loaded.params,
                                           multicast=False))


class PlanCache:
    """Lowered plans of one command, keyed by content: the schedule file's text and the
    parameters it was built with (the explain sections share one lowering)."""

    def __init__(self, size: int = 4) -> None:
        self.size = size
        self._plans: dict[tuple[str, str], Any] = {}

    def get(self, loaded: Any, make: Any) -> Any:
        key = (loaded.path.read_text(), json.dumps(loaded.params, sort_keys=True, default=str))
        if key not in self._plans:
            if len(self._plans) >= self.size:
                self._plans.pop(next(iter(self._plans)))
            self._plans[key] = make()
        return self._plans[key]


PLANS = PlanCache()


def _explain_tile_order(args: argparse.Namespace, loaded: Any) -> dict[str, Any]:
    from tilec.ir import infer_launch

    plan = _lowered(loaded)
    o = plan.order
    launch = infer_launch(loaded.fusion)
    grid = 1
    for g in launch.grid:
        grid *= int(g)
    alive = plan.order.alive_tiles()
    first = [(t, *mn) for t, mn in list(alive.items())[:8]]
    rounds = -(-int(o.num_tiles) // grid)
    text = [f"t = r * {grid} + pid   (r: persistent round, pid: linear CTA id"
            + (f" = cidx * {launch.cluster_size} + rank)" if launch.cluster_size > 1 else ")"),
            f"tile_m(t) = {o.tile_m}", f"tile_n(t) = {o.tile_n}",
            f"num_tiles = {o.num_tiles} linear indices ({rounds} round(s) of {grid} CTAs) over "
            f"{o.tiles_m} x {o.tiles_n} = {plan.tiles} C tiles of {plan.BM}x{plan.BN}"
            + (f"; {int(o.num_tiles) - len(alive)} padded indices are skipped"
               if len(alive) < int(o.num_tiles) else ""),
            f"order: {o.description}",
            "first tiles: " + ", ".join(f"t={t} -> ({m}, {n})" for t, m, n in first)]
    proofs = {}
    for name, raw in (("tile_m", o.raw_tile_m), ("tile_n", o.raw_tile_n)):
        if raw is not None:
            from tilec.transforms.pipeline import coordinate_proof

            proofs[name] = (raw, coordinate_proof(raw, int(o.num_tiles)))
            text += [f"{name}: simplified under 0 <= t < {o.num_tiles}",
                     *("  " + line for line in proofs[name][1].explain().splitlines())]
    return {"text": "\n".join(text), "tile_m": str(o.tile_m), "tile_n": str(o.tile_n),
            "proofs": {k: {"input": str(r[0]), "result": str(r[1].expr),
                           "steps": [str(step) for step in r[1].trace]}
                       for k, r in proofs.items()},
            "num_tiles": int(o.num_tiles), "tiles_m": o.tiles_m, "tiles_n": o.tiles_n,
            "grid": grid, "rounds": rounds, "cluster_size": launch.cluster_size,
            "first_tiles": [list(x) for x in first]}


def _explain_decomposition(args: argparse.Namespace, loaded: Any) -> dict[str, Any]:
    from tilec.transforms.cost_model import plan_cost

    plan = _lowered(loaded)
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


def _explain_multicast(args: argparse.Namespace, loaded: Any) -> dict[str, Any]:
    from tilec.ir import infer_launch

    if infer_launch(loaded.fusion).cluster_size == 1:
        raise TilecError("no cluster: nothing to multicast")
    d = _derive(args)
    out = []
    for name, op in d.operands.items():
        out.append(f"operand {name}:")
        out.append("  box origin (Bulk indices at 0), per non-broadcast axis:")
        out += [f"    {k} = {_readable(e)}" for k, e in op.origin.items()]
        out.append(f"  alive(rank) = {_readable(op.alive)}")
        out.append("  same(r1, r2) = origin(r1) == origin(r2) and alive(r1) and alive(r2)")
        if op.proof:
            out.append("  proof:")
            out += [f"    {i + 1}. [{s['theorem']}] {s['before']}  ->  {s['after']}"
                    for i, s in enumerate(op.proof)]
        if op.narrowed_same is not None:
            out.append(f"  same narrows to: {op.narrowed_same}")
        if op.facts:
            out.append("  facts used: " + ", ".join(map(str, op.facts)))
        issue, mask, sidx, scount = (_readable(f) for f in op.forms())
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

    from tilec.transforms.multicast.closed import what_would_close

    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in d.params.items()
              if isinstance(v, int) and not isinstance(v, bool)}
    return what_would_close(op, values)


def _explain_coalescing(args: argparse.Namespace, loaded: Any) -> dict[str, Any]:
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


def _explain_parameters(args: argparse.Namespace, loaded: Any) -> dict[str, Any]:
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


def _explainers() -> list[tuple[str, Any]]:
    return [("parameters", _explain_parameters), ("views", _explain_views),
            ("tile order", _explain_tile_order),
            ("decomposition", _explain_decomposition), ("TMA multicast", _explain_multicast),
            ("coalescing", _explain_coalescing)]


# -- viz ------------------------------------------------------------------------------------


def _viz_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--kind", choices=["tiles", "multicast", "timeline", "all", "threads"],
                   default="all", help="which picture (default all: the three as panels of one "
                   "PNG; threads: which lane of which warp touches which element, for a "
                   "thread-level schedule)")
    p.add_argument("--warps", default="0,1", metavar="W,W,...",
                   help="threads picture: the warps drawn (default 0,1)")
    _mode_option(p)
    p.add_argument("--sms", type=positive_int, default=None,
                   help="SMs of the timeline (default: the decomposition's grid, at most 132)")
    p.add_argument("--size", default=None, metavar="WxH",
                   help="image size in pixels (default per kind: tiles 1600x1000, multicast "
                        "1400x900, timeline 1600x1000, all 1800x2600, threads 1800x1000)")
    p.add_argument("--rounds", type=positive_int, default=4,
                   help="tile picture: at most this many round panels (the first ones and the "
                        "last; default 4)")


def _size(text: str | None) -> tuple[int, int] | None:
    if text is None:
        return None
    w, sep, h = text.lower().partition("x")
    if not (sep and w.isdigit() and h.isdigit() and int(w) > 0 and int(h) > 0):
        raise TilecError(f"--size must look like WIDTHxHEIGHT in pixels (1600x1000) but got "
                         f"{text!r}")
    return int(w), int(h)


@command("viz", "draw the schedule (PNG): C tiles per round, multicast groups, SM timeline",
         _viz_options)
def cmd_viz(args: argparse.Namespace) -> int:
    from tilec.app import viz
    from tilec.ir import infer_launch

    size = _size(args.size)
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
    plan = _lowered(loaded)
    launch = infer_launch(loaded.fusion)
    grid = 1
    for g in launch.grid:
        grid *= int(g)
    cs = launch.cluster_size
    derivation = None
    if cs > 1 and args.kind in ("multicast", "all"):
        derivation = _derive(args)
    sms = args.sms if args.sms is not None else min(plan.work.grid, 132)
    path = Path(args.output or f"{loaded.path.stem}_{args.kind}.png")
    with atomic_path(path) as tmp:
        viz.render(args.kind, tmp, plan=plan, grid=grid, cluster_size=cs,
                   derivation=derivation, mode=args.mode, sms=sms, size=size,
                   max_rounds=args.rounds)
    print(f"wrote {path}", file=sys.stderr)
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


def _viz_threads(args: argparse.Namespace, loaded: Any, size: tuple[int, int] | None) -> int:
    from tilec.app import viz
    from tilec.transforms.simt.lower import lower_simt

    try:
        warps = [int(w) for w in args.warps.split(",")]
    except ValueError:
        raise TilecError(f"--warps must be warp numbers separated by commas (0,1) but got "
                         f"{args.warps!r}") from None
    plan = lower_simt(loaded.fusion)
    out = args.output or f"{loaded.path.stem}_threads.png"
    path, maps = viz.render_threads(out, plan, warps, size=size)
    print(f"wrote {path}", file=sys.stderr)
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


# -- bench and tune (GPU) -------------------------------------------------------------------


def require_gpu(what: str) -> Any:
    """``torch`` when a CUDA GPU is usable, else the one-line user error."""
    try:
        import torch
    except ImportError:
        raise TilecError(f"{what} needs a CUDA GPU (torch is not installed)") from None
    if not torch.cuda.is_available():
        raise TilecError(f"{what} needs a CUDA GPU (torch.cuda.is_available() is False)")
    return torch


def _bench_options(p: argparse.ArgumentParser) -> None:
    _gen_options(p)
    p.add_argument("--sweep", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="benchmark every combination of these parameter values (repeatable)")
    p.add_argument("--warmup", type=nonnegative_int, default=25,
                   help="warm-up time per kernel, ms")
    p.add_argument("--rep", type=positive_int, default=100, help="timed replays per kernel, ms")


def _sweep_points(args: argparse.Namespace) -> list[dict[str, Any]]:
    import itertools

    from tilec.app.loader import parse_params, parse_value

    axes = []
    for item in args.sweep:
        name, sep, values = item.partition("=")
        vals = [v for v in values.split(",") if v]
        if not sep or not name.isidentifier() or not vals:
            raise TilecError(f"--sweep must look like NAME=V1,V2,... but got {item!r}")
        parse_params([f"{name}={v}" for v in vals])
        axes.append([(name, parse_value(v)) for v in vals])
    return [dict(c) for c in itertools.product(*axes)] if axes else [{}]


@command("bench", "time the generated kernel against torch.matmul and a plain Triton kernel "
         "(GPU)", _bench_options)
def cmd_bench(args: argparse.Namespace) -> int:
    from tilec.app.progress import Progress

    points = _sweep_points(args)
    loaded = load_args(args)  # the file and the fixed --param values are checked before the GPU
    torch = require_gpu("bench")
    if is_thread_level(loaded.fusion):
        raise TilecError(f"{loaded.path.name}: bench times tile-level schedules; the SIMT "
                         f"kernels are not benchmarked by tilec yet")
    base = list(args.param)
    results = []
    bar = Progress(points, "bench")
    for point in bar:
        bar.set_postfix(" ".join(f"{k}={v}" for k, v in point.items()))
        args.param = base + [f"{k}={v}" for k, v in point.items()]
        pl = load_args(args)
        plan = kernel_plan(args, pl)
        res = _bench_plan(torch, plan, args)
        results.append({"params": pl.params, "point": point, "M": plan.M, "N": plan.N,
                        "K": plan.K, "target": args.target, **res})
    args.param = base
    data = {"device": torch.cuda.get_device_name(0), "target": args.target,
            "method": "triton.testing.do_bench median, L2 flushed before each replay",
            "results": results}
    if args.json:
        write_output(args, json.dumps(data, indent=1))
        return 0
    head = (f"{'M':>6} {'N':>6} {'K':>6}  {'tilec ms':>9} {'TFLOP/s':>8}  {'cuBLAS ms':>9} "
            f"{'TFLOP/s':>8}  {'plain ms':>9} {'TFLOP/s':>8}  {'vs cuBLAS':>9}  rel_err")
    out = [f"# {loaded.path.name} on {data['device']}, --target {args.target} ({data['method']})",
           head]
    for r in results:
        out.append(f"{r['M']:>6} {r['N']:>6} {r['K']:>6}  {r['tilec_ms']:>9.4f} "
                   f"{r['tilec_tflops']:>8.1f}  {r['cublas_ms']:>9.4f} {r['cublas_tflops']:>8.1f}  "
                   f"{r['plain_ms']:>9.4f} {r['plain_tflops']:>8.1f}  "
                   f"{r['cublas_ms'] / r['tilec_ms']:>8.2f}x  {r['rel_err']:.2e}"
                   + "".join(f"  {k}={v}" for k, v in r["point"].items()))
    write_output(args, "\n".join(out))
    return 0


def _bench_plan(torch: Any, plan: Any, args: argparse.Namespace) -> dict[str, Any]:
    from tilec.ir.types import DType
    from tilec.runtime.bench import plain_matmul, rel_err, tflops, time_ms

    plain_cfg = (plan.BM, plan.BN, plan.BK, 8, 3, 8 if plan.BM * plan.BN >= 128 * 256 else 4)
    if args.target == "triton":
        from tilec.runtime.bench import bench_plan

        return bench_plan(plan, plain_cfg=plain_cfg, warmup=args.warmup, rep=args.rep)
    from tilec.codegen.cuda.launch import build

    dt = {DType.FP16: torch.float16, DType.BF16: torch.bfloat16, DType.FP32: torch.float32}
    dtype = dt[plan.dtype]
    g = torch.Generator(device="cuda").manual_seed(0)
    M, N, K = plan.M, plan.N, plan.K
    a = torch.randn((M, K), device="cuda", dtype=dtype, generator=g)
    b = torch.randn((N, K) if plan.b_transposed else (K, N), device="cuda", dtype=dtype,
                    generator=g)
    b_kn = (b.T if plan.b_transposed else b).contiguous()
    kernel = build(plan)
    out = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    c = kernel(a, b, out)
    torch.cuda.synchronize()
    res: dict[str, Any] = {"rel_err": rel_err(c, a.float() @ b_kn.float()),
                           "nan": int(c.isnan().sum().item())}
    res["tilec_ms"] = time_ms(lambda: kernel(a, b, out), args.warmup, args.rep)
    res["cublas_ms"] = time_ms(lambda: torch.matmul(a, b_kn), args.warmup, args.rep)
    res["plain_ms"] = time_ms(lambda: plain_matmul(a, b_kn, plain_cfg), args.warmup, args.rep)
    for k in [k for k in res if k.endswith("_ms")]:
        res[k[:-3] + "_tflops"] = tflops(M, N, K, res[k])
    return res


def _tune_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="the backend whose kernels are timed (default: triton)")
    p.add_argument("--sms", type=positive_int, default=None,
                   help="SMs the decomposition plans for (default: the schedule's SMS, else 132)")
    p.add_argument("--limit", type=positive_int, default=None,
                   help="time at most this many configs (the heuristic's choice first)")
    p.add_argument("--dry-run", action="store_true",
                   help="list the configs that would be timed; needs no GPU")


@command("tune", "time the schedule's own 'auto' parameter choices on the GPU and record the "
         "winner for tilec gen", _tune_options)
def cmd_tune(args: argparse.Namespace) -> int:
    from tilec.app.cli import overrides
    from tilec.runtime.autotune import space, tune, write_params

    loaded = load_args(args)  # the file and the --param values are checked before the GPU
    if is_thread_level(loaded.fusion):
        raise TilecError(f"{loaded.path.name}: tune times tensor-core schedules; a thread-level "
                         f"schedule is tuned by giving its parameters")
    given = overrides(args)
    if args.dry_run:
        configs = space(args.schedule, given, target=args.target, sms=args.sms, limit=args.limit)
        if args.json:
            write_output(args, json.dumps({"configs": [c.params() for c in configs]}, indent=1))
        else:
            write_output(args, "\n".join([f"# {len(configs)} configs of {loaded.path.name} "
                                    f"(heuristic first)", *(f"  {c.short()}" for c in configs)]))
        return 0
    require_gpu("tune")
    res = tune(args.schedule, given, target=args.target, sms=args.sms, limit=args.limit)
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
