"""The ``tilec`` command.

``tilec show|gen|masks|explain|viz|bench|tune SCHEDULE.py [--param NAME=VALUE ...] [--json] [-o OUT]``

A user error (a :class:`~tilec.errors.TilecError`, a usage error, or an exception raised by the
schedule file's own code) prints one line ``tilec: error: ...`` and exits with status 2;
``--debug`` (before or after the subcommand) shows the traceback instead.  ``-o OUT`` is written
whole or not at all; a closed stdout (``tilec masks ... | head``) ends the command quietly with
status 141.  The reference is docs/cli.md.
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import gc
import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from tilec.app.loader import parse_params
from tilec.errors import TilecError

if TYPE_CHECKING:
    from tilec.app.loader import LoadedSchedule

Command = Callable[[argparse.Namespace], int]
_COMMANDS: dict[str, tuple[Command, str, Callable[[argparse.ArgumentParser], None]]] = {}


def command(name: str, help: str, extra: Callable[[argparse.ArgumentParser], None] | None = None
            ) -> Callable[[Command], Command]:
    def register(fn: Command) -> Command:
        _COMMANDS[name] = (fn, help, extra or (lambda p: None))
        return fn

    return register


def overrides(args: argparse.Namespace) -> dict[str, Any]:
    """The parameter values the user gave: ``--params-file`` first, ``--param`` over it."""
    out: dict[str, Any] = {}
    if getattr(args, "params_file", None):
        out.update(params_file(args.params_file))
    out.update(parse_params(args.param))
    return out


def params_file(path: str) -> dict[str, Any]:
    """A JSON object of parameter values (what ``tilec tune -o`` writes)."""
    try:
        data = json.loads(Path(path).read_text())
    except OSError as e:
        raise TilecError(f"--params-file: cannot read {path!r}: {e.strerror or e}") from None
    except ValueError as e:
        raise TilecError(f"--params-file: {path!r} is not JSON: {e}") from None
    if not isinstance(data, dict) or not all(isinstance(k, str) for k in data):
        raise TilecError(f"--params-file: {path!r} must hold a JSON object of parameter names "
                         f"to values, like {{\"BM\": 128}}, but holds {type(data).__name__}")
    bad = [k for k, v in data.items() if not isinstance(v, (int, str, bool, float))]
    if bad:
        raise TilecError(f"--params-file: {path!r}: parameter {bad[0]} must be a number, text or "
                         f"true/false but is {data[bad[0]]!r}")
    return data


def load_args(args: argparse.Namespace) -> LoadedSchedule:
    """Load the schedule file (every mistake in it is a TilecError: see tilec.app.loader); knobs
    left "auto" are resolved for the command's target (a tuned record unless --no-tuned)."""
    from tilec.app.loader import load_schedule

    rules = None
    if getattr(args, "rules", None):
        from tilec.runtime.rules import Rules

        rules = Rules.load(args.rules)
    return load_schedule(args.schedule, overrides(args), target=getattr(args, "target", "triton"),
                         tuned=not getattr(args, "no_tuned", False), rules=rules)


def write_output(args: argparse.Namespace, text: str) -> None:
    if getattr(args, "output", None):
        with atomic_path(Path(args.output)) as tmp:
            tmp.write_text(text if text.endswith("\n") else text + "\n")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary file beside ``path``, renamed onto it when the block succeeds and removed
    when it fails: an error never leaves a partial output file.

    >>> import tempfile
    >>> out = Path(tempfile.mkdtemp()) / "k.txt"
    >>> with atomic_path(out) as tmp:
    ...     _ = tmp.write_text("done")
    >>> out.read_text(), sorted(p.name for p in out.parent.iterdir())
    ('done', ['k.txt'])
    """
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise TilecError(f"cannot write {str(path)!r}: {e.strerror or e}") from None
    os.close(fd)
    tmp, done = Path(name), False
    try:
        yield tmp
        try:
            mask = os.umask(0)
            os.umask(mask)
            os.chmod(tmp, 0o666 & ~mask)  # what open() would have given the file
            os.replace(tmp, path)
        except OSError as e:
            raise TilecError(f"cannot write {str(path)!r}: {e.strerror or e}") from None
        done = True
    finally:
        if not done:
            with contextlib.suppress(OSError):
                tmp.unlink()


def positive_int(text: str) -> int:
    """argparse type: an int >= 1 (a usage error otherwise)."""
    return _int_at_least(text, 1, "a positive integer")


def nonnegative_int(text: str) -> int:
    """argparse type: an int >= 0 (a usage error otherwise)."""
    return _int_at_least(text, 0, "an integer >= 0")


def _int_at_least(text: str, low: int, what: str) -> int:
    try:
        value = int(text, 0)
    except ValueError:
        value = low - 1
    if value < low:
        raise argparse.ArgumentTypeError(f"must be {what} but got {text!r}")
    return value


# -- show -----------------------------------------------------------------------------------


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


@command("show", "print the views, loop domains, launch dims and index maps")
def cmd_show(args: argparse.Namespace) -> int:
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


# -- entry point ----------------------------------------------------------------------------


def _load_plugins() -> None:
    """Subcommands that live beside their layer register themselves on import."""
    import importlib

    for mod in ("tilec.app.commands", "tilec.runtime.sweep.cli"):
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
every subcommand takes: SCHEDULE.py [--param NAME=VALUE ...] [--params-file FILE] [--json]
                        [-o OUT] [--debug]
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
        p.add_argument("--params-file", metavar="FILE",
                       help="parameter values from a JSON object (tilec tune -o writes one); "
                            "--param overrides it")
        p.add_argument("--json", action="store_true", help="machine-readable output")
        p.add_argument("-o", "--output", metavar="OUT", help="write the result to OUT")
        # SUPPRESS: a subcommand's default must not reset `tilec --debug COMMAND`
        p.add_argument("--debug", action="store_true", default=argparse.SUPPRESS,
                       help="show the traceback of an error")
        extra(p)
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
    fn = _COMMANDS[args.command][0]
    try:
        status = fn(args)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return status
    except TilecError as e:
        if args.debug:
            raise
        print(f"tilec: error: {one_line(str(e))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        if args.debug:
            raise
        print("tilec: interrupted", file=sys.stderr)
        return 130


def one_line(message: str) -> str:
    """A message as one line (a schedule's own exception may span several)."""
    return " ".join(part.strip() for part in message.splitlines() if part.strip())


def entry() -> None:
    # A short-lived process that builds many small sympy objects and frees few: collecting the
    # youngest generation every 700 allocations (the default) cost a tenth of a cold
    # 'tilec masks'. mypy raises its threshold for the same reason.
    gc.set_threshold(200_000, 30, 30)
    rc = main()
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
