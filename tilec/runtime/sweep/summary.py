"""What a sweep found: per shape, the tuned best against the baseline and cuBLAS; over all
shapes, the seed's numbers (the share of shapes that gained, the mean gain over those, the best
and the worst), overall and per decomposition.

Per decomposition means what the seed asked of its one hybrid: the fastest correct config of
*that* decomposition against the baseline, over the shapes where the space had one. Which
decomposition won a shape is :attr:`ShapeResult.winner`.

Example::

    >>> from tilec.runtime.sweep.store import Row
    >>> rows = [Row("s", 64, 1024, 1024, "tuned", '{"DECOMP": "dp"}', "dp", "dp", True, 1.0),
    ...         Row("s", 64, 1024, 1024, "tuned", '{"DECOMP": "splitk"}', "sk", "splitk", True, 2.0),
    ...         Row("s", 64, 1024, 1024, "baseline", '{}', "base", None, True, 1.5),
    ...         Row("s", 64, 1024, 1024, "cublas", '{}', "cuBLAS", None, True, 1.2)]
    >>> [r] = shape_results(rows)
    >>> r.winner, r.speedup, round(r.vs_cublas, 2)
    ('dp', 1.5, 1.2)
    >>> s = summarize([r])
    >>> s["improved"]["share"], s["per_decomposition"]["splitk"]["worst"]["speedup"]
    (1.0, 0.75)
"""

from __future__ import annotations

import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tilec.runtime.sweep.store import Row

__all__ = ["THRESHOLD", "ShapeResult", "format_summary", "shape_results", "summarize"]

THRESHOLD = 0.02  # the seed counted a shape as improved above a 2% gain


@dataclass(frozen=True)
class ShapeResult:
    """One shape: the fastest correct tuned config, the baseline and cuBLAS."""

    M: int
    N: int
    K: int
    best: Row | None  # None when no tuned config ran correctly
    baseline_ms: float | None
    cublas_ms: float | None
    configs: int  # tuned rows
    failed: int  # rows with ok = 0 (any role)
    by_decomp: dict[str, Row] = field(default_factory=dict)  # the fastest of each decomposition
    errors: tuple[str, ...] = ()

    @property
    def shape(self) -> tuple[int, int, int]:
        return (self.M, self.N, self.K)

    @property
    def winner(self) -> str | None:
        return self.best.decomp if self.best else None

    @property
    def speedup(self) -> float | None:
        """Baseline time over the best tuned time (> 1: the tuned schedule is faster)."""
        return _ratio(self.baseline_ms, self.best.ms if self.best else None)

    @property
    def vs_cublas(self) -> float | None:
        return _ratio(self.cublas_ms, self.best.ms if self.best else None)

    def decomp_speedup(self, decomp: str) -> float | None:
        row = self.by_decomp.get(decomp)
        return _ratio(self.baseline_ms, row.ms if row else None)


def _ratio(num: float | None, den: float | None) -> float | None:
    return num / den if num and den else None


def _fastest(rows: Iterable[Row]) -> Row | None:
    ok = [r for r in rows if r.ok and r.ms is not None]
    return min(ok, key=lambda r: (r.ms, r.config)) if ok else None


def shape_results(rows: Iterable[Row]) -> list[ShapeResult]:
    """The rows grouped by shape (in the order shapes first appear)."""
    by_shape: dict[tuple[int, int, int], list[Row]] = {}
    for r in rows:
        by_shape.setdefault((r.M, r.N, r.K), []).append(r)
    out = []
    for (M, N, K), rs in by_shape.items():
        tuned = [r for r in rs if r.role == "tuned"]
        base = _fastest(r for r in rs if r.role == "baseline")
        cub = _fastest(r for r in rs if r.role == "cublas")
        decomps = sorted({r.decomp for r in tuned if r.decomp})
        by_decomp = {d: b for d in decomps if (b := _fastest(r for r in tuned if r.decomp == d))}
        out.append(ShapeResult(M, N, K, _fastest(tuned), base.ms if base else None,
                               cub.ms if cub else None, len(tuned),
                               sum(1 for r in rs if not r.ok), by_decomp,
                               tuple(f"{r.label}: {r.error}" for r in rs if not r.ok)))
    return out


def _stats(pairs: Sequence[tuple[ShapeResult, float]], threshold: float) -> dict[str, Any]:
    """The seed's numbers over (shape, speedup) pairs."""
    if not pairs:
        return {"shapes": 0}
    gained = [s for _, s in pairs if s > 1 + threshold]
    lost = [s for _, s in pairs if s < 1 - threshold]
    best = max(pairs, key=lambda p: p[1])
    worst = min(pairs, key=lambda p: p[1])
    return {
        "shapes": len(pairs),
        "improved": {"share": len(gained) / len(pairs), "count": len(gained),
                     "mean_gain": statistics.fmean(gained) - 1 if gained else None},
        "regressed": {"share": len(lost) / len(pairs), "count": len(lost)},
        "geomean_speedup": statistics.geometric_mean([s for _, s in pairs]),
        "best": {"shape": list(best[0].shape), "speedup": best[1]},
        "worst": {"shape": list(worst[0].shape), "speedup": worst[1]},
    }


def summarize(results: Sequence[ShapeResult], threshold: float = THRESHOLD) -> dict[str, Any]:
    """The summary as JSON-ready data (see the module docstring)."""
    timed = [(r, s) for r in results if (s := r.speedup) is not None]
    out: dict[str, Any] = {
        **_stats(timed, threshold),
        "shapes": len(results),
        "compared": len(timed),
        "threshold": threshold,
        "without_result": [list(r.shape) for r in results if r.speedup is None],
    }
    vs = [r.vs_cublas for r in results if r.vs_cublas is not None]
    out["vs_cublas"] = ({"geomean": statistics.geometric_mean(vs), "min": min(vs),
                         "max": max(vs), "faster_share": sum(v > 1 for v in vs) / len(vs)}
                        if vs else None)
    winners: dict[str, int] = {}
    for r in results:
        if r.winner:
            winners[r.winner] = winners.get(r.winner, 0) + 1
    out["winners"] = dict(sorted(winners.items(), key=lambda kv: -kv[1]))
    decomps = sorted({d for r in results for d in r.by_decomp})
    out["per_decomposition"] = {
        d: {**_stats([(r, s) for r in results if (s := r.decomp_speedup(d)) is not None],
                     threshold), "won": winners.get(d, 0)}
        for d in decomps}
    return out


def format_summary(s: dict[str, Any], *, head: str = "") -> str:
    """The summary as a few readable lines."""
    out = [head] if head else []
    n = s.get("shapes", 0)
    if not s.get("improved"):
        out.append(f"{n} shapes, none with both a tuned result and a baseline")
        return "\n".join(out)
    imp, reg = s["improved"], s["regressed"]
    gain = f", mean gain {imp['mean_gain']:+.1%} over them" if imp["mean_gain"] is not None else ""
    out.append(f"tuned vs baseline over {s['compared']} of {n} shapes: {imp['share']:.0%} improved by more than "
               f"{s['threshold']:.0%}{gain}; {reg['share']:.0%} slower; geomean "
               f"{s['geomean_speedup']:.3f}x")
    out.append(f"  best {s['best']['speedup']:.2f}x at {_shape(s['best']['shape'])}, worst "
               f"{s['worst']['speedup']:.2f}x at {_shape(s['worst']['shape'])}")
    if s.get("vs_cublas"):
        v = s["vs_cublas"]
        out.append(f"tuned vs cuBLAS: geomean {v['geomean']:.3f}x (from {v['min']:.2f}x to "
                   f"{v['max']:.2f}x), faster on {v['faster_share']:.0%} of the shapes")
    if s.get("winners"):
        out.append("won by: " + ", ".join(f"{d} {c}" for d, c in s["winners"].items()))
    out.append("per decomposition (its fastest config vs the baseline):")
    for d, st in s["per_decomposition"].items():
        if not st.get("shapes"):
            continue
        i = st["improved"]
        g = f", mean gain {i['mean_gain']:+.1%}" if i["mean_gain"] is not None else ""
        out.append(f"  {d:>8}: {st['shapes']} shapes, {i['share']:.0%} improved{g}, best "
                   f"{st['best']['speedup']:.2f}x, worst {st['worst']['speedup']:.2f}x, "
                   f"won {st['won']}")
    if s.get("without_result"):
        out.append(f"{len(s['without_result'])} shape(s) without a result (every config failed, "
                   f"or the baseline did)")
    return "\n".join(out)


def _shape(s: Sequence[int]) -> str:
    return "x".join(str(v) for v in s)
