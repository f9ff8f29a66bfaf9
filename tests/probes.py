"""The device probes the CUDA heuristic's rules were drawn from (bench/dispatch_cuda.py's JSON,
under bench/results): per shape, each timed configuration's median milliseconds, keyed by the
knobs a rule's test compares."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"
DEFAULTS = {"CM": 1, "CN": 1, "SWAP_AB": 0}  # runs from before the cluster and swap knobs


def timed(*runs: str, keys: tuple[str, ...], skip_untimed: bool = False
          ) -> dict[tuple[str, int, int, int], dict[tuple[Any, ...], float]]:
    """``(name, M, N, K) -> {(params[k] for k in keys): ms}`` over the heuristic rows and the
    candidates of ``runs`` (file names under bench/results). Every timed row must be correct;
    a row without a time (a refused configuration) fails unless ``skip_untimed``."""
    out: dict[tuple[str, int, int, int], dict[tuple[Any, ...], float]] = {}
    for run in runs:
        doc = json.loads((RESULTS / run).read_text())
        for r in doc["rows"] + doc["candidates"]:
            if skip_untimed and "ms" not in r:
                continue
            assert r["correct"], (run, r["name"])
            key = tuple(r["params"].get(k, DEFAULTS.get(k)) for k in keys)
            out.setdefault((r["name"], r["M"], r["N"], r["K"]), {})[key] = r["ms"]
    return out
