"""Rules files: the tuned choices of a sweep (``tilec sweep --export heuristic.json``), which
``tilec gen --rules FILE`` uses for the knobs a schedule leaves ``"auto"`` at shapes in or near
the swept set.

The file is JSON (format ``tilec-rules/1``)::

    {"format": "tilec-rules/1",
     "schedule": "gemm_decomposition.py", "schedule_key": "3f2c...", "target": "triton",
     "fixed": {"DTYPE": "bf16"}, "device": "NVIDIA H200",
     "radius": 1.0, "metric": "euclidean distance of (log2 M, log2 N, log2 K)",
     "rules": [{"M": 256, "N": 4096, "K": 8192,
                "params": {"BM": 128, "BN": 128, "BK": 64, "DECOMP": "splitk", ...},
                "ms": 0.081, "baseline_ms": 0.094, "speedup": 1.16, "label": "128x128x64 ..."},
               ...]}

:meth:`Rules.lookup` answers a shape with the rule of that exact shape, else with the nearest
rule within ``radius`` (1.0: a factor of two in one dimension, or 1.41 in two), else nothing
(the heuristic decides); it says which rule it used.

Example::

    >>> r = Rules.from_data({"format": FORMAT, "schedule": "g.py", "schedule_key": "k",
    ...     "radius": 1.0, "rules": [{"M": 256, "N": 4096, "K": 4096, "params": {"BM": 64}}]})
    >>> r.lookup(256, 4096, 4096)
    ({'BM': 64}, 'rules g.py: exact shape 256x4096x4096')
    >>> r.lookup(300, 4096, 4096)[1]
    'rules g.py: nearest tuned shape 256x4096x4096 (log2 distance 0.23 <= radius 1)'
    >>> r.lookup(1024, 4096, 4096) is None  # two doublings away
    True
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tilec.errors import TilecError

__all__ = ["FORMAT", "METRIC", "Rule", "Rules", "RulesError"]

FORMAT = "tilec-rules/1"
METRIC = "euclidean distance of (log2 M, log2 N, log2 K)"
DEFAULT_RADIUS = 1.0


class RulesError(TilecError):
    """A rules file that cannot be read or does not hold rules."""


@dataclass(frozen=True)
class Rule:
    """The tuned knob values of one shape."""

    M: int
    N: int
    K: int
    params: dict[str, Any]

    def distance(self, M: int, N: int, K: int) -> float:
        return math.dist((math.log2(self.M), math.log2(self.N), math.log2(self.K)),
                         (math.log2(M), math.log2(N), math.log2(K)))


@dataclass(frozen=True)
class Rules:
    """A rules file's rules (see the module docstring)."""

    name: str
    rules: tuple[Rule, ...]
    radius: float = DEFAULT_RADIUS
    schedule_key: str | None = None

    @classmethod
    def load(cls, path: str | Path) -> Rules:
        """Read a rules file (``tilec sweep --export``)."""
        p = Path(path)
        try:
            data = json.loads(p.read_text())
        except OSError as e:
            raise RulesError(f"--rules {str(p)!r}: cannot read it: {e.strerror or e}") from None
        except json.JSONDecodeError as e:
            raise RulesError(f"--rules {str(p)!r} is not JSON: {e}") from None
        return cls.from_data(data, name=p.name)

    @classmethod
    def from_data(cls, data: Any, name: str | None = None) -> Rules:
        """Rules from the parsed JSON of a rules file."""
        label = name or (data.get("schedule", "rules") if isinstance(data, dict) else "rules")
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise RulesError(f"rules {label!r}: not a tilec rules file (its \"format\" must be "
                             f"{FORMAT!r}; `tilec sweep --export FILE` writes one)")
        radius = data.get("radius", DEFAULT_RADIUS)
        if isinstance(radius, bool) or not isinstance(radius, int | float) or radius < 0:
            raise RulesError(f"rules {label!r}: radius must be a number >= 0 but is {radius!r}")
        rules = []
        for i, r in enumerate(data.get("rules", [])):
            try:
                shape = [r[d] for d in "MNK"]
                params = r["params"]
            except (KeyError, TypeError):
                raise RulesError(f"rules {label!r}: rule {i} must have M, N, K and params"
                                 ) from None
            if not all(isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in shape):
                raise RulesError(f"rules {label!r}: rule {i}: M, N, K must be positive "
                                 f"integers but are {shape}")
            if not isinstance(params, dict):
                raise RulesError(f"rules {label!r}: rule {i}: params must be an object")
            rules.append(Rule(shape[0], shape[1], shape[2], dict(params)))
        return cls(str(data.get("schedule", label)) if name is None else name, tuple(rules),
                   float(radius), data.get("schedule_key"))

    def lookup(self, M: int, N: int, K: int, key: str | None = None
               ) -> tuple[dict[str, Any], str] | None:
        """The knob values for an M x N x K problem and which rule gave them; None when no rule
        is within the radius. ``key``: the schedule's key; a file tuned on another version of
        the schedule still answers, and says so."""
        if not self.rules or min(M, N, K) < 1:
            return None
        other = (f" (tuned on another version of the schedule: key {self.schedule_key})"
                 if key is not None and self.schedule_key not in (None, key) else "")
        for r in self.rules:
            if (r.M, r.N, r.K) == (M, N, K):
                return dict(r.params), f"rules {self.name}: exact shape {M}x{N}x{K}{other}"
        d, i = min((r.distance(M, N, K), i) for i, r in enumerate(self.rules))
        if d > self.radius:
            return None
        r = self.rules[i]
        return dict(r.params), (f"rules {self.name}: nearest tuned shape {r.M}x{r.N}x{r.K} "
                                f"(log2 distance {d:.2f} <= radius {self.radius:.2g}){other}")


def rules_data(entries: Sequence[Mapping[str, Any]], *, schedule: str, schedule_key: str,
               target: str, fixed: Mapping[str, Any], device: str | None,
               radius: float = DEFAULT_RADIUS) -> dict[str, Any]:
    """The JSON of a rules file (``entries``: M, N, K, params and what else a rule records)."""
    return {"format": FORMAT, "schedule": schedule, "schedule_key": schedule_key,
            "target": target, "fixed": dict(fixed), "device": device, "radius": radius,
            "metric": METRIC, "rules": [dict(e) for e in entries]}
