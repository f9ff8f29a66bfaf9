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
(the heuristic decides); it says which rule it used. A nearest rule lends its tile knobs
(:data:`TILE_KNOBS`: they carry over between neighbouring shapes; its cluster,
:data:`CLUSTER_KNOBS`, with them) but not its decomposition
(:data:`DECOMP_KNOBS`: it follows the exact tile count modulo the SMs and the k-iterations, which
do not carry over): :func:`rechoose` re-chooses it at the shape with the cost model, keeping the
rule's own where it models within :data:`KEEP_MARGIN` of the best, and says so with the numbers.

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

    def lookup(self, M: int, N: int, K: int, key: str | None = None, *, sms: int = 132
               ) -> tuple[dict[str, Any], str] | None:
        """The knob values for an M x N x K problem and which rule gave them; None when no rule
        is within the radius. ``key``: the schedule's key; a file tuned on another version of
        the schedule still answers, and says so. A nearest rule lends its tile, its
        decomposition is re-chosen for this shape on ``sms`` SMs (:func:`rechoose`)."""
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
        text = (f"rules {self.name}: nearest tuned shape {r.M}x{r.N}x{r.K} "
                f"(log2 distance {d:.2f} <= radius {self.radius:.2g}){other}")
        params, how = rechoose(M, N, K, r.params, sms=sms)
        return params, f"{text}; {how}" if how else text


# --------------------------------------------------------------------------------------------
# a nearest rule's decomposition, re-chosen at the shape
# --------------------------------------------------------------------------------------------

TILE_KNOBS = ("BM", "BN", "BK", "STAGES", "WARPS", "GROUP_M", "LOAD")  # lent by a nearest rule
# the cluster goes with the tile (which operand it multicasts follows the tile grid, not the
# k-iterations): lent by a nearest rule too; a rule from before the knobs (none named) means 1x1
# (tilec.transforms.knobs.LATER_KNOBS)
CLUSTER_KNOBS = ("CM", "CN")
DECOMP_KNOBS = ("DECOMP", "SPLITS", "SK_WAVES", "FIXUP")  # re-chosen at the shape
# a tuned decomposition is kept where the model puts it within this of the best one: the
# model is not the measurement the rule was tuned on
KEEP_MARGIN = 0.03
_DET, _RED = "deterministic", "reduce_kernel"
# The decompositions a lent tile is re-chosen among, as (DECOMP, SPLITS, SK_WAVES, FIXUP), in the
# cost model's order (transforms/choice.py: ties go to the earlier): every candidate it weighs,
# and the reduce-kernel split-K the heuristic weighs beside them. A built library carries the
# kernel of every entry its shapes may pick (its run-time copy of this choice:
# tilec/library/runtime.py, _rechoose); :func:`applicable` says where the model weighs which.
MENU: tuple[tuple[str, int, int, str], ...] = (
    ("dp", 1, 1, _DET),
    *(("splitk", s, 1, _DET) for s in range(2, 33)),
    ("streamk", 1, 1, _DET), ("dp_1sk", 1, 1, _DET), ("skpp", 1, 1, _DET),
    ("sk2_dp", 1, 1, _DET), ("skpp", 1, 2, _DET), ("skpp", 1, 3, _DET),
    *(("splitk", s, 1, _RED) for s in range(8, 33)),
)


def applicable(entry: tuple[str, int, int, str], tiles: int, k_iters: int, sms: int) -> bool:
    """Whether the cost model weighs ``entry`` (of :data:`MENU`) at ``tiles`` tiles of
    ``k_iters`` k-iterations on ``sms`` SMs: split-K only for fewer tiles than SMs and one wave of
    parts (two with the reduce kernel); Stream-K only where the tiles leave a partial wave; whole-problem
    Stream-K only under one wave, Stream-K++ only past ``w`` waves.

    >>> applicable(("splitk", 3, 1, "deterministic"), 40, 64, 132)
    True
    >>> applicable(("splitk", 4, 1, "deterministic"), 40, 64, 132)  # 160 parts: two waves
    False
    >>> applicable(("splitk", 4, 1, "deterministic"), 40, 3, 132)  # more parts than k_iters
    False
    >>> applicable(("skpp", 1, 1, "deterministic"), 264, 64, 132)  # two whole waves
    False
    """
    kind, splits, waves, fixup = entry
    if kind == "dp":
        return True
    if kind == "splitk":  # parts in one wave; two with the reduce kernel (no reducer waits)
        wave = 2 * sms if fixup == _RED else sms
        return tiles < sms and splits <= k_iters and tiles * splits <= wave
    if tiles % sms == 0:
        return False
    if kind == "streamk":
        return tiles < sms
    if kind == "skpp":
        return tiles > waves * sms
    return True  # dp_1sk, sk2_dp


def modeled(M: int, N: int, K: int, params: Mapping[str, Any], sms: int) -> float:
    """The cost model's time (k-iterations, :func:`~tilec.transforms.cost_model.estimate_cost`)
    of ``params``' tile and decomposition at M x N x K (split-K parts capped by k_iters, as a
    kernel caps them at run time)."""
    from tilec.transforms.cost_model import estimate_cost
    from tilec.transforms.decompose import make_work_split
    from tilec.transforms.plan import Decomposition, Fixup

    BM, BN, BK = (int(params[k]) for k in ("BM", "BN", "BK"))
    k_iters = -(-K // BK)
    split = make_work_split(Decomposition(params["DECOMP"]), M=M, N=N, K=K, BM=BM, BN=BN, BK=BK,
                            sms=sms, splits=min(int(params.get("SPLITS", 1)), k_iters),
                            sk_waves=int(params.get("SK_WAVES", 1)),
                            fixup=Fixup(params.get("FIXUP", _DET)))
    return estimate_cost(split, sms, BM, BN, BK).total


def _short(entry: Mapping[str, Any] | Sequence[Any]) -> str:
    kind, splits, waves, fixup = (tuple(entry[k] for k in DECOMP_KNOBS)
                                  if isinstance(entry, Mapping) else entry)
    return (f"{kind}{splits if kind == 'splitk' else ''}{f' w{waves}' if kind == 'skpp' else ''}"
            f"{' reduce_kernel' if fixup == _RED and kind != 'dp' else ''}")


def rechoose(M: int, N: int, K: int, params: Mapping[str, Any], *, sms: int = 132,
             margin: float | None = KEEP_MARGIN) -> tuple[dict[str, Any], str]:
    """``params`` (a rule's, tuned at another shape) with its decomposition re-chosen for the
    M x N x K problem on ``sms`` SMs, and what happened in words ("" where ``params`` has no
    tile and decomposition to weigh).

    The tile knobs (:data:`TILE_KNOBS`) carry over between shapes; the decomposition does not
    (it follows the exact tile count modulo the SMs and the k-iterations). The cost model
    weighs every :data:`MENU` entry that :func:`applicable` admits for the tile: the fastest
    with the deterministic fix-up, or a reduce-kernel split-K where it is
    ``REDUCE_MARGIN`` faster still (the heuristic's rule). The rule's own decomposition is kept
    where its modeled time is within ``margin`` of that best; ``margin=None``: never (a
    bucket's decomposition, the heuristic's at another shape: the model's pick here, exactly).

    >>> p = {"BM": 128, "BN": 256, "BK": 64, "DECOMP": "dp", "SPLITS": 1, "SK_WAVES": 1,
    ...      "FIXUP": "deterministic"}
    >>> q, why = rechoose(1500, 3584, 18944, p)  # 168 tiles: 1.27 waves
    >>> q["DECOMP"], q["SK_WAVES"], why.split(":")[0]
    ('skpp', 1, 'decomposition re-chosen for this shape')
    >>> rechoose(4096, 4096, 4096, p)[0] == p  # 128 tiles: the tuned dp kept
    True
    """
    if any(k not in params for k in ("BM", "BN", "BK", "DECOMP")):
        return dict(params), ""
    from tilec.transforms.heuristic import REDUCE_MARGIN

    BM, BN, BK = (int(params[k]) for k in ("BM", "BN", "BK"))
    tiles, k_iters = -(-M // BM) * -(-N // BN), -(-K // BK)
    scored = []
    for i, entry in enumerate(MENU):
        if applicable(entry, tiles, k_iters, sms):
            cand = dict(zip(DECOMP_KNOBS, entry, strict=True))
            scored.append((modeled(M, N, K, {**params, **cand}, sms), i, entry))
    best = min(s for s in scored if s[2][3] == _DET)
    reduce = [s for s in scored if s[2][3] == _RED]
    if reduce and min(reduce)[0] < best[0] * (1 - REDUCE_MARGIN):
        best = min(reduce)
    own = modeled(M, N, K, params, sms)
    waves = (f"{tiles} tiles of {BM}x{BN} on {sms} SMs ({tiles / sms:.2f} waves), "
             f"{k_iters} k-iterations")
    same = all(params.get(k) == v for k, v in zip(DECOMP_KNOBS, best[2], strict=True))
    if margin is None and same:
        return dict(params), (f"its decomposition {_short(params)} is the model's best here "
                              f"too: {waves}; {own:.1f} iterations modeled")
    if margin is not None and own <= best[0] * (1 + margin):
        return dict(params), (f"its tile and its decomposition {_short(params)} kept: {waves}; "
                              f"{own:.1f} iterations modeled, the model's best "
                              f"{_short(best[2])} {best[0]:.1f} (within {100 * margin:g}%)")
    out = {**params, **dict(zip(DECOMP_KNOBS, best[2], strict=True))}
    return out, (f"decomposition re-chosen for this shape: its tile lent, {_short(params)} -> "
                 f"{_short(best[2])}: {waves}; {own:.1f} -> {best[0]:.1f} iterations "
                 f"modeled ({len(scored)} candidates)")


def rules_data(entries: Sequence[Mapping[str, Any]], *, schedule: str, schedule_key: str,
               target: str, fixed: Mapping[str, Any], device: str | None,
               radius: float = DEFAULT_RADIUS) -> dict[str, Any]:
    """The JSON of a rules file (``entries``: M, N, K, params and what else a rule records)."""
    return {"format": FORMAT, "schedule": schedule, "schedule_key": schedule_key,
            "target": target, "fixed": dict(fixed), "device": device, "radius": radius,
            "metric": METRIC, "rules": [dict(e) for e in entries]}
