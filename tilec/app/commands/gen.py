"""``tilec gen``: the schedule lowered for ``--target`` and printed as a standalone kernel file
(Triton with ``run(a, b)``, or CUDA ``.cu``); ``tilec bench`` builds its kernels the same way."""

from __future__ import annotations

import argparse
import json
import sys
from typing import TYPE_CHECKING

from tilec.app.commands.common import load_args, mode_option, write_output
from tilec.errors import UnsupportedError
from tilec.runtime.progress import Status

if TYPE_CHECKING:
    from tilec.runtime.loader import LoadedSchedule
    from tilec.runtime.session import Session
    from tilec.transforms.plan import KernelPlan
    from tilec.transforms.simt.lower import SimtPlan


def options(p: argparse.ArgumentParser) -> None:
    """gen's options (bench takes them too)."""
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="triton (default) or cuda (sm_90a; a thread-level fp32 schedule gives "
                        "the SIMT kernel)")
    mode_option(p)
    p.add_argument("--no-multicast", action="store_true",
                   help="cuda: keep the cluster but load every tile per CTA")
    p.add_argument("--no-tuned", action="store_true",
                   help="resolve 'auto' parameters by the heuristic even where tilec tune "
                        "recorded a choice")
    p.add_argument("--rules", metavar="FILE",
                   help="a rules file (tilec sweep --export) for the 'auto' parameters at shapes "
                        "in or near the swept set; a tuned record still comes first")


def gen_options(p: argparse.ArgumentParser) -> None:
    """gen's own options: :func:`options` and ``--sizes``."""
    options(p)
    p.add_argument("--sizes", choices=["generic", "static"], default="generic",
                   help="triton: generic (default) takes M, N, K at run time; static fixes them "
                        "(and the leading dimensions) to the schedule's as tl.constexpr, and "
                        "its run() refuses any other shape")


def kernel_plan(args: argparse.Namespace, loaded: LoadedSchedule, session: Session
                ) -> KernelPlan | SimtPlan:
    """The KernelPlan (or SimtPlan) ``tilec gen`` prints for these arguments."""
    from tilec.runtime.build import kernel_plan as build_plan

    return build_plan(loaded, target=args.target, mode=args.mode,
                      multicast=not args.no_multicast, session=session)


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec gen``: the kernel source (and with ``--json`` the parameters and notes)."""
    from tilec.runtime.build import kernel_source

    static = args.sizes == "static"
    if static and args.target != "triton":
        raise UnsupportedError(f"--sizes static is Triton-only but --target is {args.target}; "
                         "the CUDA kernel takes M, N, K at run time")
    loaded = load_args(args)
    with Status(f"gen: lowering {loaded.path.name} and printing its {args.target} kernel"):
        plan = kernel_plan(args, loaded, session)
        if static:
            from tilec.codegen.triton.printer import emit
            from tilec.transforms.plan import KernelPlan

            assert isinstance(plan, KernelPlan), "--target triton lowers to a KernelPlan"
            source = emit(plan, static=True)
        else:
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
