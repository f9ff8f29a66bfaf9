"""Subcommands beyond ``show``: gen, masks, explain (registered into tilec.cli on import)."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from tilec.cli import _load, _write, command
from tilec.errors import TilecError


def _mode_option(p: argparse.ArgumentParser) -> None:
    p.add_argument("--mode", choices=["leader", "sliced"], default="leader",
                   help="multicast mode (default: leader)")


def _derive(args: argparse.Namespace) -> Any:
    from tilec.loader import parse_params
    from tilec.transforms.multicast import derive_from_file

    return derive_from_file(args.schedule, parse_params(args.param), mode=args.mode)


def _gen_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="triton (default) or cuda (sm_90a; a thread-level fp32 schedule gives "
                        "the SIMT kernel)")
    _mode_option(p)
    p.add_argument("--no-multicast", action="store_true",
                   help="cuda: keep the cluster but load every tile per CTA")


def is_thread_level(fusion: Any) -> bool:
    return any(a.ptype.is_thread for a in fusion.c.loop)


def plan_for(args: argparse.Namespace, loaded: Any) -> Any:
    """The KernelPlan (or SimtPlan) ``tilec gen`` prints for these arguments."""
    from tilec.transforms.lower import lower
    from tilec.transforms.multicast import symbolic_instance

    fusion = loaded.fusion
    name = "tilec_" + "".join(ch if ch.isalnum() else "_" for ch in loaded.path.stem)
    if is_thread_level(fusion):
        if args.target != "cuda":
            raise TilecError(
                f"{loaded.path.name}: a thread-level (TIDx/TIDy) schedule is a SIMT kernel; "
                f"generate it with --target cuda")
        from tilec.transforms.simt import lower_simt

        return lower_simt(fusion, name=name)
    sym = None
    if args.target == "cuda":
        sym = symbolic_instance(loaded.module.schedule, loaded.params)
    return lower(fusion, target=args.target, params=loaded.params, symbolic=sym,
                 mode=args.mode, multicast=not args.no_multicast, name=name)


@command("gen", "emit a standalone kernel file (Triton with run(a, b), or CUDA .cu)", _gen_options)
def cmd_gen(args: argparse.Namespace) -> int:
    loaded = _load(args)
    plan = plan_for(args, loaded)
    if is_thread_level(loaded.fusion):
        from tilec.codegen.cuda_simt import emit_simt

        source = emit_simt(plan)
    elif args.target == "triton":
        from tilec.codegen.triton import emit

        source = emit(plan)
    else:
        from tilec.codegen.cuda import emit as emit_cuda

        source = emit_cuda(plan)
    if args.json:
        _write(args, json.dumps({"target": args.target, "notes": list(getattr(plan, "notes", ())),
                                 "source": source}, indent=1))
        return 0
    for note in getattr(plan, "notes", ()):
        print(f"tilec: note: {note}", file=sys.stderr)
    _write(args, source)
    return 0


@command("masks", "TMA multicast issue predicates and masks per operand", _mode_option)
def cmd_masks(args: argparse.Namespace) -> int:
    d = _derive(args)
    if args.json:
        _write(args, json.dumps(d.to_json(), indent=1))
        return 0
    cs = d.cluster_size
    out = [f"cluster of {cs} CTAs, {d.mode.value} mode; "
           + " ".join(f"{k}={v}" for k, v in d.params.items())]
    for name, op in d.operands.items():
        issue, mask, sidx, scount = op.forms()
        out += ["", f"operand {name}: {'closed form' if op.closed_form else 'general form'}"
                f" ({op.box_bytes} bytes per box, each CTA's barrier expects all of them)",
                f"  issue = {issue}", f"  mask  = {mask}"]
        if d.mode.value == "sliced":
            out += [f"  slice = {sidx} of {scount}"]
        if op.facts:
            out.append("  facts: " + ", ".join(op.facts))
        out += [f"  note: {n}" for n in op.notes]
        var = [str(v) for v in op.variables if str(v) != "rank"]
        head = "  " + " ".join(f"{v:>6}" for v in var) + "   rank alive issue " + "mask".rjust(cs + 2)
        if d.mode.value == "sliced":
            head += "  slice"
        out.append(head)
        shown = 0
        for row in op.table:
            if shown >= 64:
                out.append(f"  ... {len(op.table) - shown} more rows (--json for all)")
                break
            line = "  " + " ".join(f"{row.point[v]:>6}" for v in var)
            line += f"   {row.point['rank']:>4} {'yes' if row.alive else 'no':>5} "
            line += f"{'yes' if row.issue else 'no':>5} " + format(row.mask, f"0{cs}b").rjust(cs + 2)
            if d.mode.value == "sliced" and row.alive:
                line += f"  {row.slice_index}/{row.slice_count}"
            out.append(line)
            shown += 1
    _write(args, "\n".join(out))
    return 0


@command("explain", "the derivation as a person reads it: index maps, same, theorems, facts",
         _mode_option)
def cmd_explain(args: argparse.Namespace) -> int:
    from tilec.ir import index_map, infer_launch

    loaded = _load(args)
    fusion = loaded.fusion
    out = [f"# {loaded.path.name}: " + " ".join(f"{k}={v}" for k, v in loaded.params.items()), "",
           f"launch: {infer_launch(fusion)}", ""]
    for v in fusion.views():
        out += [str(v), *("  " + line for line in str(index_map(v)).splitlines()), ""]
    explainers = _explainers()
    for title, fn in explainers:
        try:
            text = fn(args, loaded)
        except TilecError as e:
            text = f"(not applicable: {e})"
        if text:
            out += [f"== {title} ==", text, ""]
    _write(args, "\n".join(out).rstrip())
    return 0


def _explain_multicast(args: argparse.Namespace, loaded: Any) -> str:
    from tilec.ir import infer_launch

    if infer_launch(loaded.fusion).cluster_size == 1:
        return "no cluster: nothing to multicast"
    d = _derive(args)
    out = []
    for name, op in d.operands.items():
        out.append(f"operand {name}:")
        out.append("  box origin (Bulk indices at 0), per non-broadcast axis:")
        out += [f"    {k} = {e}" for k, e in op.origin.items()]
        out.append(f"  alive(rank) = {op.alive}")
        out.append("  same(r1, r2) = origin(r1) == origin(r2) and alive(r1) and alive(r2)")
        if op.proof:
            out.append("  proof:")
            out += [f"    {i + 1}. [{s['theorem']}] {s['before']}  ->  {s['after']}"
                    for i, s in enumerate(op.proof)]
        if op.narrowed_same is not None:
            out.append(f"  same narrows to: {op.narrowed_same}")
        if op.facts:
            out.append("  facts used: " + ", ".join(op.facts))
        issue, mask, sidx, scount = op.forms()
        out.append(f"  {'closed' if op.closed_form else 'general'} form ({d.mode.value}):")
        out.append(f"    issue(rank) = {issue}")
        out.append(f"    mask(rank)  = {mask}")
        if d.mode.value == "sliced":
            out.append(f"    slice       = {sidx} of {scount}")
        out += [f"  note: {n}" for n in op.notes]
    return "\n".join(out)


def _explainers() -> list[tuple[str, Any]]:
    items: list[tuple[str, Any]] = [("TMA multicast", _explain_multicast)]
    return items
