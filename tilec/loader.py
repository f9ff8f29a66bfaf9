"""Loading schedule files: a Python file with ``PARAMS`` (defaults) and ``schedule(**params)``.

Example::

    >>> from tilec.loader import parse_params
    >>> parse_params(["CN=2", "DTYPE=fp16"])
    {'CN': 2, 'DTYPE': 'fp16'}
"""

from __future__ import annotations

import importlib.util
import inspect
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any

from tilec.errors import ParamError, TilecError

if TYPE_CHECKING:
    from tilec.ir import GemmFusion


@dataclass
class LoadedSchedule:
    path: Path
    module: ModuleType
    params: dict[str, Any]
    fusion: GemmFusion


def parse_value(text: str) -> Any:
    try:
        return int(text, 0)
    except ValueError:
        pass
    low = text.lower()
    if low in ("true", "false"):
        return low == "true"
    return text


def parse_params(items: Sequence[str] | None) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in items or ():
        name, sep, value = item.partition("=")
        if not sep or not name.isidentifier() or not value:
            raise ParamError(f"--param must look like NAME=VALUE but got {item!r}")
        out[name] = parse_value(value)
    return out


def load_module(path: str | Path) -> ModuleType:
    p = Path(path)
    if not p.is_file():
        raise TilecError(f"schedule file {str(p)!r} does not exist")
    spec = importlib.util.spec_from_file_location(f"tilec_schedule_{p.stem}", p)
    if spec is None or spec.loader is None:
        raise TilecError(f"cannot import schedule file {str(p)!r}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "schedule", None)):
        raise TilecError(f"{p}: a schedule file must define schedule(**params) -> GemmFusion")
    return module


def load_schedule(path: str | Path, overrides: dict[str, Any] | None = None) -> LoadedSchedule:
    """Import ``path``, apply ``overrides`` to its ``PARAMS`` and build the fusion."""
    module = load_module(path)
    defaults = dict(getattr(module, "PARAMS", {}))
    sig = inspect.signature(module.schedule)
    known = set(defaults) | set(sig.parameters)
    for name in overrides or {}:
        if name not in known:
            raise ParamError(
                f"{Path(path).name}: unknown parameter {name!r}; valid parameters are "
                f"{', '.join(sorted(known))}"
            )
    params = defaults | dict(overrides or {})
    missing = [n for n, p in sig.parameters.items()
               if p.default is inspect.Parameter.empty and n not in params]
    if missing:
        raise ParamError(f"{Path(path).name}: parameter(s) {', '.join(missing)} have no value")
    fusion = module.schedule(**{k: v for k, v in params.items() if k in sig.parameters})
    from tilec.ir import GemmFusion

    if not isinstance(fusion, GemmFusion):
        raise TilecError(f"{path}: schedule() must return a GemmFusion but returned {type(fusion).__name__}")
    return LoadedSchedule(Path(path), module, params, fusion)
