"""Loading schedule files: a Python file with ``PARAMS`` (defaults) and ``schedule(**params)``.

Everything a schedule file can get wrong is a :class:`~tilec.errors.TilecError` here, so every
caller (the ``tilec`` command, :func:`~tilec.runtime.session.derive_from_file`, tests) reports it the same way:

* the file is missing, is not Python, or raises while it is imported or while ``schedule()``
  runs: :class:`~tilec.errors.ScheduleFileError` with ``file:line: Exception: message``;
* a :class:`~tilec.errors.TilecError` raised by a verb the schedule calls keeps its class and
  gains the ``file:line:`` of the call;
* a parameter that is unknown (the closest name is suggested), missing, or of the wrong type for
  its default: :class:`~tilec.errors.ParamError`.

An exception raised inside tilec's own code is not the file's fault: it goes on unchanged (a bug).

Example::

    >>> from tilec.runtime.loader import parse_params
    >>> parse_params(["CN=2", "DTYPE=fp16"])
    {'CN': 2, 'DTYPE': 'fp16'}
"""

from __future__ import annotations

import difflib
import importlib.util
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType, TracebackType
from typing import TYPE_CHECKING, Any, Protocol

from tilec.errors import ParamError, ScheduleFileError, TilecError

if TYPE_CHECKING:
    from tilec.ir import GemmFusion
    from tilec.transforms.heuristic import Resolution


class RulesLike(Protocol):
    """What ``load_schedule(rules=...)`` asks of a rules file (:mod:`tilec.runtime.rules`)."""

    def lookup(self, M: int, N: int, K: int, key: str | None = None, *, sms: int = 132
               ) -> tuple[dict[str, Any], str] | None: ...

_TILEC_DIR = Path(__file__).resolve().parents[1]  # the tilec package


@dataclass
class LoadedSchedule:
    """A built schedule: ``params`` are what ``schedule()`` was called with (every ``"auto"``
    knob resolved), ``raw_params`` what the file and the user gave, ``resolution`` where each
    knob's value came from (None when nothing was left to tilec)."""

    path: Path
    module: ModuleType
    params: dict[str, Any]
    fusion: GemmFusion
    raw_params: dict[str, Any] = field(default_factory=dict)
    resolution: Resolution | None = None

    @property
    def notes(self) -> list[str]:
        """One line per source that chose a parameter (``heuristic chose BM=64 ...``)."""
        return self.resolution.notes if self.resolution else []


def parse_value(text: str) -> int | bool | str:
    """``--param`` values: Python ints (``0x80`` too), ``true``/``false``, else the text."""
    try:
        return int(text, 0)
    except ValueError:
        pass
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    return text


def parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    """``["NAME=VALUE", ...]`` as a dict (see :func:`parse_value`); a name given twice is an
    error (which of the two was meant?).

    >>> parse_params(["CN=2", "CN=4"])
    Traceback (most recent call last):
    ...
    tilec.errors.ParamError: --param CN is given twice (CN=2, then CN=4); give it once
    """
    out: dict[str, Any] = {}
    given: dict[str, str] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier() or not value:
            raise ParamError(f"--param must look like NAME=VALUE but got {item!r}")
        if name in given:
            raise ParamError(f"--param {name} is given twice ({given[name]}, then {item}); "
                             f"give it once")
        given[name] = item
        out[name] = parse_value(value)
    return out


INDEX_LIMIT = 2**31  # kernels index with 32-bit integers: every integer parameter stays below


def check_int_range(name: str, key: str, value: int) -> int:
    """An integer parameter within what a kernel can index (``|value| < 2**31``)."""
    if abs(value) >= INDEX_LIMIT:
        raise ParamError(f"{name}: parameter {key} = {value} is too large: kernels index with "
                         f"32-bit integers, so an integer parameter must be < 2**31 "
                         f"({INDEX_LIMIT})")
    return value


def load_module(path: str | Path) -> ModuleType:
    """Import a schedule file (it must define ``schedule``)."""
    p = Path(path)
    if not p.exists():
        raise ScheduleFileError(f"schedule file {str(p)!r} does not exist")
    if not p.is_file():
        raise ScheduleFileError(f"schedule file {str(p)!r} is not a file")
    spec = importlib.util.spec_from_file_location(f"tilec_schedule_{p.stem}", p)
    if spec is None or spec.loader is None:
        raise ScheduleFileError(f"schedule file {str(p)!r} must be a Python file (.py)")
    module = importlib.util.module_from_spec(spec)
    _run_user_code(p, lambda: spec.loader.exec_module(module))  # type: ignore[union-attr]
    if not callable(getattr(module, "schedule", None)):
        raise ScheduleFileError(f"{p}: a schedule file must define schedule(**params) -> GemmFusion")
    return module


def load_schedule(path: str | Path, overrides: dict[str, Any] | None = None, *,
                  target: str = "triton", tuned: bool = True,
                  rules: RulesLike | None = None) -> LoadedSchedule:
    """Import ``path``, apply ``overrides`` to its ``PARAMS``, resolve the knobs left ``"auto"``
    (a tuned record of this schedule for ``target`` if ``tuned``, then ``rules``, then the
    heuristic: :mod:`tilec.transforms.heuristic`) and build the fusion."""
    module = load_module(path)
    name = Path(path).name
    defaults = _defaults(module, name)
    sig = inspect.signature(module.schedule)
    named = {n for n, p in sig.parameters.items()
             if p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)}
    takes_any = any(p.kind is p.VAR_KEYWORD for p in sig.parameters.values())
    known = set(defaults) | named
    overrides = dict(overrides or {})
    for key, value in overrides.items():
        if key not in known:
            raise ParamError(f"{name}: unknown parameter {key!r}; {_suggest(key, known)}"
                             f"valid parameters are {', '.join(sorted(known))}")
        overrides[key] = _typed(name, key, value, defaults.get(key))
    params = defaults | overrides
    missing = [n for n, p in sig.parameters.items()
               if p.default is inspect.Parameter.empty and n not in params
               and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]
    if missing:
        raise ParamError(
            f"{name}: parameter(s) {', '.join(missing)} have no value; give them defaults in "
            f"PARAMS (PARAMS = dict({missing[0]}=...)) or pass --param {missing[0]}=VALUE")
    raw = _none_knobs_auto(params)
    resolution = _resolve_auto(Path(path), raw, target=target, tuned=tuned, rules=rules)
    if resolution is not None:
        params = resolution.params
    args = params if takes_any else {k: v for k, v in params.items() if k in named}
    fusion = _run_user_code(Path(path), lambda: module.schedule(**args))
    from tilec.ir import GemmFusion

    if not isinstance(fusion, GemmFusion):
        raise ScheduleFileError(
            f"{path}: schedule() must return a GemmFusion but returned {type(fusion).__name__}")
    return LoadedSchedule(Path(path), module, params, fusion, raw, resolution)


def _none_knobs_auto(params: dict[str, Any]) -> dict[str, Any]:
    """``params``, where some knob is ``"auto"``, with the knobs valued None ``"auto"`` too: a
    file's ``STAGES=None`` leaves the choice to tilec, which the heuristic then makes (a None
    is no value the heuristic can keep)."""
    if not any(isinstance(v, str) and v.lower() == "auto" for v in params.values()):
        return dict(params)
    knobs = _knobs()
    if not any(isinstance(params.get(k), str) and params[k].lower() == "auto" for k in knobs):
        return dict(params)
    return {k: "auto" if v is None and k in knobs else v for k, v in params.items()}


def _resolve_auto(path: Path, params: dict[str, Any], *, target: str, tuned: bool,
                  rules: RulesLike | None) -> Resolution | None:
    """The resolution of the knobs ``params`` leaves ``"auto"``; None when there are none."""
    if not any(isinstance(v, str) and v.lower() == "auto" for v in params.values()):
        return None  # (the heuristic and its cost model are not even imported)
    from tilec.transforms.heuristic import KNOBS, resolve

    if not any(isinstance(params.get(k), str) and params[k].lower() == "auto" for k in KNOBS):
        return None
    from tilec.runtime.records import default_records, schedule_key

    key = schedule_key(path.read_text(), target)
    records = default_records() if tuned else None
    found = records.lookup(key, params) if records else None
    rule = None
    if rules is not None and all(isinstance(params.get(d), int) for d in "MNK"):
        sms = params["SMS"] if isinstance(params.get("SMS"), int) else 132  # resolve's default
        rule = rules.lookup(params["M"], params["N"], params["K"], key, sms=sms)
    try:
        return resolve(params, target=target, tuned=found, rules=rule)
    except TilecError as e:
        raise type(e)(f"{path.name}: {e}") from None


def _defaults(module: ModuleType, name: str) -> dict[str, Any]:
    params = getattr(module, "PARAMS", {})
    if not isinstance(params, dict) or not all(isinstance(k, str) for k in params):
        raise ScheduleFileError(f"{name}: PARAMS must be a dict of parameter names to defaults "
                                f"(PARAMS = dict(M=1024, ...)) but got {params!r}")
    return dict(params)


def _suggest(key: str, known: set[str]) -> str:
    """``did you mean 'BM'? `` for the closest known name (case first, then spelling)."""
    by_case = {k.lower(): k for k in known}
    close = ([by_case[key.lower()]] if key.lower() in by_case
             else difflib.get_close_matches(key, sorted(known), n=1, cutoff=0.6)
             or difflib.get_close_matches(key.upper(), sorted(known), n=1, cutoff=0.6))
    return f"did you mean {close[0]!r}? " if close else ""


def _typed(name: str, key: str, value: Any, default: Any) -> Any:
    """``value`` checked against the type of its default (None: anything goes); an integer
    within :data:`INDEX_LIMIT` whatever the default."""
    if isinstance(value, int) and not isinstance(value, bool):
        check_int_range(name, key, value)
    if isinstance(default, str) and default.lower() == "auto":
        return value  # a knob left to tilec takes any value; resolve() checks it
    if isinstance(value, str) and value.lower() == "auto" and key in _knobs():
        return "auto"
    if isinstance(default, bool):
        if isinstance(value, bool):
            return value
        raise ParamError(f"{name}: parameter {key} must be true or false (its default is "
                         f"{default}) but got {value!r}")
    if isinstance(default, int):
        import sympy

        # a parameter given its own name stays symbolic: load_schedule(SEED, {"M": "M"})
        if isinstance(value, int) and not isinstance(value, bool):
            return check_int_range(name, key, value)
        if value == key or isinstance(value, sympy.Basic):
            return value
        raise ParamError(f"{name}: parameter {key} must be an integer (its default is {default}), "
                         f"or {key!r} to keep it symbolic, but got {value!r}")
    if isinstance(default, float):
        try:
            return float(value)
        except (TypeError, ValueError):
            raise ParamError(f"{name}: parameter {key} must be a number (its default is "
                             f"{default}) but got {value!r}") from None
    if isinstance(default, str) and not isinstance(value, str):
        # parse_value read it as an int or a bool; the schedule wants the text
        return str(value).lower() if isinstance(value, bool) else str(value)
    return value


def _knobs() -> tuple[str, ...]:
    from tilec.transforms.heuristic import KNOBS

    return KNOBS


def _run_user_code(path: Path, fn: Callable[[], Any]) -> Any:
    """Run the schedule file's code; its exceptions become user errors that name its line."""
    try:
        return fn()
    except TilecError as e:
        line = _last_line_in(e.__traceback__, path)
        if line is None:
            raise
        try:
            located = type(e)(f"{path}:{line}: {e}")
        except TypeError:  # a subclass with its own constructor: keep it as it is
            located = None
        if located is None:
            raise
        raise located.with_traceback(e.__traceback__) from e
    except Exception as e:
        if _raised_in_tilec(e):
            raise  # tilec's own code broke: an internal error, keep the traceback
        line = e.lineno if isinstance(e, SyntaxError) and _same(e.filename, path) else (
            _last_line_in(e.__traceback__, path))
        where = f"{path}:{line}" if line is not None else str(path)
        detail = e.msg if isinstance(e, SyntaxError) else str(e)
        raise ScheduleFileError(f"{where}: {type(e).__name__}: {detail}") from e


def _same(filename: str | None, path: Path) -> bool:
    return bool(filename) and Path(str(filename)).resolve() == path.resolve()


def _last_line_in(tb: TracebackType | None, path: Path) -> int | None:
    """The line of the innermost frame of ``tb`` that runs in ``path``."""
    line = None
    while tb is not None:
        if _same(tb.tb_frame.f_code.co_filename, path):
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _raised_in_tilec(e: BaseException) -> bool:
    tb = e.__traceback__
    last = None
    while tb is not None:
        last = tb
        tb = tb.tb_next
    if last is None:
        return False
    try:
        Path(last.tb_frame.f_code.co_filename).resolve().relative_to(_TILEC_DIR)
    except ValueError:
        return False
    return True


MAX_TILES = 2**20  # linear tiles a command walks: past it lowering, tables and pictures take
# minutes (a 131072^2 GEMM of 128x256 tiles, 524288 tiles: masks 16 s, explain 23 s)


def tile_count(fusion: GemmFusion) -> int | None:
    """The linear tiles of a schedule: the product of C's loop extents outside the tile (before
    the first Mma or thread axis), reductions left out; None where an extent is symbolic.

    >>> from tilec.runtime.loader import load_schedule
    >>> tile_count(load_schedule("examples/seed004_persistent_cluster.py").fusion)  # 16 x 132
    2112
    """
    n = 1
    for ax in fusion.c.loop:
        if ax.ptype.value == "mma" or ax.ptype.is_thread:
            break
        if ax.is_reduction:
            continue
        try:
            n *= int(ax.extent)
        except TypeError:
            return None
    return n


def check_tiles(loaded: LoadedSchedule) -> None:
    """Refuse a schedule of more than :data:`MAX_TILES` tiles in one line."""
    n = tile_count(loaded.fusion)
    if n is not None and n > MAX_TILES:
        sizes = " ".join(f"{k}={loaded.params[k]}" for k in "MNK" if k in loaded.params)
        raise TilecError(f"{loaded.path.name}: {sizes} walks {n} linear tiles; tilec derives, "
                         f"tabulates and draws at most {MAX_TILES} (2**20): use larger tiles or "
                         f"a smaller problem (tilec show prints the schedule at any size)")
