"""The schedule trace: every scheduling call, replayable as Python.

``print(fusion.schedule)`` is a Python program that rebuilds the same fusion (nvFuser's
"fusion as a runnable reproducer", TVM's schedule trace); :meth:`GemmFusion.replay
<tilec.ir.fusion.GemmFusion.replay>` runs it (the trace knows calls, not the fusion they build).

Example::

    >>> from tilec.ir import GemmFusion
    >>> f = GemmFusion(M=64, N=64, K=32)
    >>> _ = f.c.split(0, 16)
    >>> print(f.schedule)
    from tilec.ir import GemmFusion, ParallelType
    fusion = GemmFusion(M=64, N=64, K=32, dtype='bf16', b_layout='kn')
    fusion.c.split(0, 16)
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Call:
    target: str  # Python expression naming the receiver, e.g. "fusion.c"
    method: str
    args: tuple[Any, ...]
    kwargs: tuple[tuple[str, Any], ...]

    def __str__(self) -> str:
        parts = [_py(a) for a in self.args]
        parts += [f"{k}={_py(v)}" for k, v in self.kwargs]
        return f"{self.target}.{self.method}({', '.join(parts)})"


def _py(value: Any) -> str:
    if isinstance(value, enum.Enum):
        return f"{type(value).__name__}.{value.name}"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{_py(k)}: {_py(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list | tuple):
        inner = ", ".join(_py(v) for v in value)
        return f"[{inner}]" if isinstance(value, list) else f"({inner}{',' if len(value) == 1 else ''})"
    return repr(value)


_DEFAULTS = {"inner": True}


@dataclass
class Schedule:
    """The header (how the fusion was created) and the calls made on it, in order."""

    header: str
    calls: list[Call] = field(default_factory=list)
    targets: dict[str, str] = field(default_factory=dict)  # view name -> Python expression
    paused: int = 0

    def record(self, owner: str, method: str, args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
        if self.paused:
            return
        kept = tuple((k, v) for k, v in kwargs.items() if v is not None and _DEFAULTS.get(k, object()) != v)
        self.calls.append(Call(self.targets.get(owner, owner), method, tuple(args), kept))

    def __str__(self) -> str:
        lines = ["from tilec.ir import GemmFusion, ParallelType", self.header]
        lines += [str(c) for c in self.calls]
        return "\n".join(lines)


class paused:
    """Context manager: calls made inside are internal and not recorded."""

    def __init__(self, schedule: Schedule) -> None:
        self.schedule = schedule

    def __enter__(self) -> None:
        self.schedule.paused += 1

    def __exit__(self, *exc: object) -> None:
        self.schedule.paused -= 1
