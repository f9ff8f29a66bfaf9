"""The ``tilec`` command.

``tilec show|gen|masks|check|explain|viz|bench|tune|sweep|build SCHEDULE.py [--param NAME=VALUE ...] [--json] [-o OUT]``

:data:`COMMANDS` is the one table of subcommands: each row names the command, its one-line help,
the function that runs it and the options of its own; the code of each lives in
:mod:`tilec.app.commands` (one module per command, what they share in
:mod:`tilec.app.commands.common`).

A user error (a :class:`~tilec.errors.TilecError`, a usage error, or an exception raised by the
schedule file's own code) prints one line ``tilec: error: ...`` and exits with status 2;
``--debug`` (before or after the subcommand) shows the traceback too (the command's status stays
2; :func:`main` raises the error to its caller).  ``-o OUT`` is written whole or not at all
(``-o -``: stdout); a closed stdout (``tilec masks ... | head``) ends the command quietly with
status 141.  The reference is docs/cli.md.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import os
import sys
import threading
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NoReturn

from tilec.app.commands import bench, build, check, explain, gen, masks, show, sweep, tune, viz
from tilec.app.commands.common import mode_option
from tilec.errors import ParamError, TilecError
from tilec.runtime.session import Session


def no_options(p: argparse.ArgumentParser) -> None:
    """A command with only the options every command takes."""


@dataclass(frozen=True)
class Command:
    """One row of the command table: ``tilec NAME`` runs ``run(args, session)`` (its exit
    status; ``session``: the run's :class:`~tilec.runtime.session.Session`) with the options
    every command takes (:func:`build_parser`) and those ``options`` adds."""

    name: str
    help: str
    run: Callable[[argparse.Namespace, Session], int]
    options: Callable[[argparse.ArgumentParser], None] = no_options


COMMANDS: tuple[Command, ...] = (
    Command("show", "print the views, loop domains, launch dims and index maps", show.run,
            show.options),
    Command("gen", "emit a standalone kernel file (Triton with run(a, b), or CUDA .cu)",
            gen.run, gen.gen_options),
    Command("masks", "TMA multicast issue predicates and masks per operand",
            masks.run, mode_option),
    Command("check", "test the multicast masks against a brute force over drawn launches "
            "(one verdict per operand)", check.run, check.options),
    Command("explain", "the derivation as a person reads it: index maps, tile order, "
            "decomposition, multicast theorems, coalescing", explain.run, explain.options),
    Command("viz", "draw the schedule: C tiles per round, multicast groups, SM timeline (PNG; "
            "SVG, PDF or JPEG by -o's extension)",
            viz.run, viz.options),
    Command("bench", "time the generated kernel against torch.matmul and a plain Triton kernel "
            "(GPU)", bench.run, bench.options),
    Command("tune", "time the schedule's own 'auto' parameter choices on the GPU and record the "
            "winner for tilec gen", tune.run, tune.options),
    Command("sweep", "tune the schedule over many shapes on every GPU at hand, against a "
            "baseline and cuBLAS; summary, map (PNG) and rules file", sweep.run, sweep.options),
    Command("build", "a standalone Python module with matmul(a, b) for any shape: the "
            "configs per shape bucket, their kernels, a torch custom op", build.run,
            build.options),
)


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``tilec: error: ...``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"tilec: error: {message} (see '{self.prog} --help')\n")


EPILOG = """\
every subcommand takes: SCHEDULE.py [--param NAME=VALUE ...] [--params-file FILE] [--json]
                        [-o OUT] [--debug]
a user error prints one line 'tilec: error: ...' and exits 2; --debug shows the traceback
docs: docs/cli.md (reference), docs/tutorial.md, docs/errors.md"""


def build_parser() -> argparse.ArgumentParser:
    """The parser of every command of :data:`COMMANDS`, each with the common options."""
    parser = _Parser(
        prog="tilec",
        description="tilec: a scheduling DSL for GEMM kernels on NVIDIA Hopper.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for cmd in COMMANDS:
        p = sub.add_parser(cmd.name, help=cmd.help, description=cmd.help)
        p.add_argument("schedule", help="schedule file (defines PARAMS and schedule(**params))")
        p.add_argument("--param", action="append", metavar="NAME=VALUE", default=[],
                       help="override a schedule parameter (repeatable)")
        p.add_argument("--params-file", metavar="FILE",
                       help="parameter values from a JSON object (tilec tune -o writes one); "
                            "--param overrides it")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT")
        # SUPPRESS: a subcommand's default must not reset `tilec --debug COMMAND`
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an error")
        cmd.options(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _main(argv)
    except BrokenPipeError:
        # the reader went away (`tilec masks ... | head`): stop quietly, as `yes | head` does
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13  # what the shell reports for a process ended by SIGPIPE


def _main(argv: Sequence[str] | None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    run = next(cmd.run for cmd in COMMANDS if cmd.name == args.command)
    try:
        check_symbolic(args)
        status = run(args, Session())
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except TilecError as e:
        if args.debug:
            raise  # to the caller: entry() prints the traceback and exits 2
        print(f"tilec: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("tilec: interrupted", file=sys.stderr)
        return 130


SYMBOLIC_COMMANDS = ("show", "explain")  # the commands that print a schedule over symbols


def check_symbolic(args: argparse.Namespace) -> None:
    """``--param N=N`` keeps N symbolic: ``show`` and ``explain`` print the schedule over it; a
    command that needs numbers (a kernel, a table, a picture, a timing) says so in one line."""
    if args.command in SYMBOLIC_COMMANDS:
        return
    for item in getattr(args, "param", None) or ():
        name, _, value = item.partition("=")
        if name and value == name:
            raise ParamError(
                f"--param {item} keeps {name} symbolic, which only "
                f"{' and '.join('tilec ' + c for c in SYMBOLIC_COMMANDS)} print; tilec "
                f"{args.command} needs a number for every parameter (--param {name}=1024)")


def one_line(message: str) -> str:
    """A message as one line (a schedule's own exception may span several)."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def entry() -> None:
    # A short-lived process that builds many small sympy objects and frees few: collecting the
    # youngest generation every 700 allocations (the default) cost a tenth of a cold
    # 'tilec masks'. mypy raises its threshold for the same reason.
    gc.set_threshold(200_000, 30, 30)
    try:
        rc = main()
    except TilecError as e:  # --debug: the traceback, and the status of a user error still
        traceback.print_exc()
        print(f"tilec: error: {one_line(str(e))}", file=sys.stderr)
        rc = 2
    if threading.active_count() > 1:
        sys.exit(rc)  # a thread still running: the interpreter's shutdown joins it
    # Freeing every object at exit (sympy's caches, the derivation's expressions) cost a cold
    # 'tilec masks' 0.1 to 0.3 s on the 2-core CI machine: run the exit handlers (temporary
    # directories, Ray, logging), flush, and leave without it, as mypy does.
    atexit._run_exitfuncs()
    try:
        sys.stdout.flush()
        sys.stderr.flush()
    except OSError:  # a closed pipe (tilec ... | head): Python's own exit status for it
        rc = rc or 120
    os._exit(rc)
