"""The CUDA heuristic's tile for 64 < M <= 128 against the H200 probe it was drawn from
(bench/results/cuda_probe_rows_h200_2026-11-28_s13.json: 72-128 rows, 128x64 / 64x256 / 64x128
tiles timed side by side): at every probe shape the heuristic's pick was timed and is within 3%
of the fastest, and the two sides of the rule's boundary pick different tiles."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilec.transforms.heuristic import heuristic

RUN = Path(__file__).resolve().parents[2] / "bench" / "results" / "cuda_probe_rows_h200_2026-11-28_s13.json"


def _timed() -> dict[tuple[str, int, int, int], dict[tuple, float]]:
    doc = json.loads(RUN.read_text())
    out: dict[tuple[str, int, int, int], dict[tuple, float]] = {}
    for r in doc["rows"] + doc["candidates"]:
        assert r["correct"], r["name"]
        p = r["params"]
        key = (p["BM"], p["BN"], p["DECOMP"], p["SPLITS"], p["STAGES"])
        out.setdefault((r["name"], r["M"], r["N"], r["K"]), {})[key] = r["ms"]
    return out


@pytest.mark.parametrize("shape", sorted(_timed()), ids=lambda s: s[0])
def test_pick_is_within_3_percent_of_the_fastest_timed(shape: tuple[str, int, int, int]) -> None:
    _, M, N, K = shape
    cfg, _ = heuristic(M, N, K, target="cuda")
    timed = _timed()[shape]
    key = (cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.STAGES)
    assert key in timed, (shape, cfg.short(), sorted(timed))
    assert timed[key] <= min(timed.values()) * 1.03, (shape, cfg.short(), timed)


def test_the_probe_covers_both_sides_of_the_rule() -> None:
    picks = {heuristic(M, N, K, target="cuda")[0].BM for (_, M, N, K) in _timed()}
    assert picks == {64, 128}
