"""The ``tilec`` command.

``tilec show|gen|masks|explain|viz|bench|tune SCHEDULE.py [--param NAME=VALUE ...] [--json] [-o OUT]``

A user error (a :class:`~tilec.errors.TilecError`, a usage error, or an exception raised by the
schedule file's own code) prints one line ``tilec: error: ...`` and exits with status 2;
``--debug`` (before or after the subcommand) shows the traceback instead.  The reference is
docs/cli.md.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from tilec.errors import TilecError
from tilec.loader import parse_params

if TYPE_CHECKING:
    from tilec.loader import LoadedSchedule

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, tuple[Command, str, Callable[[argparse.ArgumentParser], None]]] = {}


def command(name: str, help: str, extra: Callable[[argparse.ArgumentParser], None] | None = None
            ) -> Callable[[Command], Command]:
    def register(fn: Command) -> Command:
        _COMMANDS[name] = (fn, help, extra or (lambda p: None))
        return fn

    return register


def _load(args: argparse.Namespace) -> LoadedSchedule:
    """Load the schedule file; an exception raised by the file's own code is a user error."""
    params = parse_params(args.param)
    try:
        from tilec.loader import load_schedule

        return load_schedule(args.schedule, params)
    except TilecError:
        raise
    except Exception as e:
        where = _schedule_line(e, Path(args.schedule))
        if where is None:
            raise  # raised inside tilec: an internal error, keep the traceback
        raise TilecError(f"{args.schedule}:{where}: {type(e).__name__}: {e}") from e


def _schedule_line(e: BaseException, path: Path) -> int | None:
    """The line of ``path`` where ``e`` was raised (innermost frame), or None if elsewhere."""
    target = path.resolve()
    if isinstance(e, SyntaxError) and e.filename and Path(e.filename).resolve() == target:
        return e.lineno or 0
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is not None and Path(last.tb_frame.f_code.co_filename).resolve() == target:
        return last.tb_lineno
    return None


def _write(args: argparse.Namespace, text: str) -> None:
    if getattr(args, "output", None):
        try:
            Path(args.output).write_text(text if text.endswith("\n") else text + "\n")
        except OSError as e:
            raise TilecError(f"cannot write {args.output!r}: {e.strerror or e}") from None
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)


# -- show -----------------------------------------------------------------------------------


def show_data(loaded: LoadedSchedule) -> dict[str, Any]:
    from tilec.ir import index_map, infer_launch

    fusion = loaded.fusion
    launch = infer_launch(fusion)
    views = []
    for v in fusion.views():
        im = index_map(v)
        views.append({
            "name": v.name,
            "memory": v.memory.value,
            "loop": [str(a) for a in v.loop],
            "index_map": {k: str(e) for k, e in im.logical.items()},
            "broadcast": sorted(im.broadcast),
            "bounds": {str(s): str(b) for s, b in im.bounds.items()},
            "predicates": [str(p) for p in im.predicates],
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


@command("show", "print the views, loop domains, launch dims and index maps")
def cmd_show(args: argparse.Namespace) -> int:
    from tilec.ir import index_map, infer_launch

    loaded = _load(args)
    if args.json:
        _write(args, json.dumps(show_data(loaded), indent=1))
        return 0
    fusion = loaded.fusion
    out = [f"# {loaded.path.name}  " + " ".join(f"{k}={v}" for k, v in loaded.params.items()), ""]
    out.append("views (loop domains):")
    out += [f"  {v}" for v in fusion.views()]
    out += ["", f"launch: {infer_launch(fusion)}", "", "index maps:"]
    for v in fusion.views():
        out += ["  " + line for line in str(index_map(v)).splitlines()]
    _write(args, "\n".join(out))
    return 0


# -- entry point ----------------------------------------------------------------------------


def _load_plugins() -> None:
    """Subcommands that live beside their layer register themselves on import."""
    import importlib

    for mod in ("tilec.cli_commands",):
        try:
            importlib.import_module(mod)
        except ModuleNotFoundError as e:
            if e.name != mod:
                raise


class _Parser(argparse.ArgumentParser):
    """argparse, but a usage error is one line (``tilec: error: ...``), exit status 2."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"tilec: error: {message} (see '{self.prog} --help')\n")


EPILOG = """\
every subcommand takes: SCHEDULE.py [--param NAME=VALUE ...] [--json] [-o OUT] [--debug]
a user error prints one line 'tilec: error: ...' and exits 2; --debug shows the traceback
docs: docs/cli.md (reference), docs/tutorial.md, docs/errors.md"""


def build_parser() -> argparse.ArgumentParser:
    _load_plugins()
    parser = _Parser(
        prog="tilec",
        description="tilec: a scheduling DSL for GEMM kernels on NVIDIA Hopper.",
        epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    sub.required = True
    for name, (_, help_text, extra) in _COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        p.add_argument("schedule", help="schedule file (defines PARAMS and schedule(**params))")
        p.add_argument("--param", action="append", metavar="NAME=VALUE", default=[],
                       help="override a schedule parameter (repeatable)")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT")
        # SUPPRESS: a subcommand's default must not reset `tilec --debug COMMAND`
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an error")
        extra(p)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(list(sys.argv[1:] if argv is None else argv))
    fn = _COMMANDS[args.command][0]
    try:
        return fn(args)
    except TilecError as e:
        if args.debug:
            raise
        print(f"tilec: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("tilec: interrupted", file=sys.stderr)
        return 130


def entry() -> None:
    # A short-lived process that builds many small sympy objects and frees few: collecting the
    # youngest generation every 700 allocations (the default) cost a tenth of a cold
    # 'tilec masks'. mypy raises its threshold for the same reason.
    gc.set_threshold(200_000, 30, 30)
    sys.exit(main())
