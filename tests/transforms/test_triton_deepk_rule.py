"""The Triton heuristic's deep-K rule for M or N off the 128 grid, against the H200 measurements
it came from (bench/results/explore_s11_set4_h200_2026-11-28.json): where the measured shapes fall
in the rule, its 256x128 tile is the one that ran faster; where they don't, the 128x128 rule's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tilec.transforms.heuristic import heuristic

RUN = Path(__file__).resolve().parents[2] / "bench" / "results" / "explore_s11_set4_h200_2026-11-28.json"


def _faster_tile() -> dict[tuple[int, int, int], tuple[int, int]]:
    """(M, N, K) -> (BM, BN) of the faster of the two configs timed there."""
    best: dict[tuple[int, int, int], tuple[float, tuple[int, int]]] = {}
    for r in json.loads(RUN.read_text())["rows"]:
        if r["ms"] is None:
            continue
        bm, bn = (int(x) for x in r["candidate"].split("x")[:2])
        key = (r["M"], r["N"], r["K"])
        if key not in best or r["ms"] < best[key][0]:
            best[key] = (r["ms"], (bm, bn))
    return {k: v[1] for k, v in best.items()}


@pytest.mark.parametrize("shape,tile", sorted(_faster_tile().items()))
def test_the_rule_picks_the_faster_tile(shape: tuple[int, int, int], tile: tuple[int, int]) -> None:
    cfg, why = heuristic(*shape)
    assert (cfg.BM, cfg.BN) == tile, (shape, cfg.short(), why[0])


def test_the_rule_stays_in_its_region() -> None:
    # shallower K (not measured) and M, N on the grid keep the 128x128 rule
    for shape in ((1000, 1000, 16384), (1024, 1024, 65536), (512, 1024, 40000)):
        cfg, why = heuristic(*shape)
        assert "off the 128 grid" not in why[0], shape
    cfg, why = heuristic(1000, 1000, 50000)
    assert "off the 128 grid" in why[0] and cfg.SPLITS > 1
