"""What every ``tilec`` command shares: the parameter values the user gave (``--param``,
``--params-file``), the schedule loaded from them, the multicast derivation (``--mode``), output
written whole or not at all (``-o``), argparse types, and the GPU check of the GPU commands."""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tilec.errors import TilecError
from tilec.runtime.loader import check_tiles, parse_params
from tilec.runtime.progress import Status

if TYPE_CHECKING:
    from tilec.runtime.loader import LoadedSchedule
    from tilec.runtime.session import Session
    from tilec.transforms.multicast.derive import MulticastDerivation


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
    """Load the schedule file (every mistake in it is a TilecError: see tilec.runtime.loader); knobs
    left "auto" are resolved for the command's target (a tuned record unless --no-tuned)."""
    from tilec.runtime.loader import load_schedule

    rules = None
    if getattr(args, "rules", None):
        from tilec.runtime.rules import Rules

        rules = Rules.load(args.rules)
    loaded = load_schedule(args.schedule, overrides(args),
                           target=getattr(args, "target", "triton"),
                           tuned=not getattr(args, "no_tuned", False), rules=rules)
    # show prints the IR whatever its size; the other commands walk the tiles
    if getattr(args, "command", None) != "show":
        check_tiles(loaded)
    return loaded


def write_output(args: argparse.Namespace, text: str) -> None:
    """Print ``text``, or write it to ``-o OUT`` whole (:func:`atomic_path`; ``-o -``: print)."""
    if to_file(args):
        with atomic_path(Path(args.output)) as tmp:
            tmp.write_text(text if text.endswith("\n") else text + "\n")
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        print(text)


def to_file(args: argparse.Namespace) -> bool:
    """Whether ``-o OUT`` names a file (``-o -`` is stdout, as for most Unix tools)."""
    out = getattr(args, "output", None)
    return bool(out) and out != "-"


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


def mode_option(p: argparse.ArgumentParser) -> None:
    """``--mode leader|sliced``: the multicast mode of the commands that derive multicast."""
    p.add_argument("--mode", choices=["leader", "sliced"], default="leader",
                   help="multicast mode (default: leader)")


def derive(args: argparse.Namespace, session: Session) -> MulticastDerivation:
    """The multicast derivation of the schedule file at the given parameters and ``--mode``
    (:meth:`Session.derivation <tilec.runtime.session.Session.derivation>`)."""
    from tilec.runtime.loader import load_schedule

    loaded = load_schedule(args.schedule, overrides(args))
    symbolic = [k for k, v in loaded.params.items() if v == k or hasattr(v, "free_symbols")]
    if symbolic:  # (show and explain take --param N=N; the table needs numbers)
        raise TilecError(f"the multicast table needs numbers but {', '.join(symbolic)} "
                         f"{'is' if len(symbolic) == 1 else 'are'} symbolic")
    check_tiles(loaded)
    with Status(f"{args.command}: deriving the multicast forms of {loaded.path.name}"):
        return session.derivation(loaded, args.mode)


def require_gpu(what: str) -> ModuleType:
    """``torch`` when a CUDA GPU is usable, else the one-line user error."""
    try:
        import torch
    except ImportError:
        raise TilecError(f"{what} needs a CUDA GPU (torch is not installed)") from None
    if not torch.cuda.is_available():
        raise TilecError(f"{what} needs a CUDA GPU (torch.cuda.is_available() is False)")
    return torch
