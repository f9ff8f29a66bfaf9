"""The CUDA heuristic's tiles for M <= 128 against the H200 probes they were drawn from
(bench/results/cuda_probe_rows_h200_2026-11-28_s13.json: 72-128 rows, 128x64 / 64x256 / 64x128
tiles timed side by side; cuda_probe_decode_h200_2026-11-28_s13.json: 1-64 rows, 64x128 with 4
or 8 stages, 64x192, 64x256): at every probe shape the heuristic's pick was timed; it is within
3% of the fastest at 72-128 rows, within 8% at decode rows (1 x 6144 x 4096: 64x128 split-K 2
5.5% behind 64x192 split-K 4; 32 x 8192 x 28672: the deep-K rule's 128x256 7% behind 64x128),
and 2% off the fastest in the geometric mean; the boundaries' two sides pick different tiles.
These are the unswapped rules (SWAP_AB=0 pinned): where the swapped-operand rule takes a shape,
tests/transforms/test_cuda_swap_rule.py checks it against its own probe."""

from __future__ import annotations

import math

import pytest

from tests.probes import timed
from tilec.transforms.heuristic import heuristic

UNSWAPPED = {"SWAP_AB": 0}
RUNS = ("cuda_probe_rows_h200_2026-11-28_s13.json", "cuda_probe_decode_h200_2026-11-28_s13.json")


def _timed() -> dict[tuple[str, int, int, int], dict[tuple, float]]:
    return timed(*RUNS, keys=("BM", "BN", "DECOMP", "SPLITS", "STAGES"))


@pytest.mark.parametrize("shape", sorted(_timed()), ids=lambda s: s[0])
def test_pick_was_timed_and_is_near_the_fastest(shape: tuple[str, int, int, int]) -> None:
    assert _off(shape) <= (1.03 if shape[1] > 64 else 1.08), shape


def _off(shape: tuple[str, int, int, int]) -> float:
    """The heuristic's pick's time over the fastest timed at ``shape``."""
    _, M, N, K = shape
    cfg, _ = heuristic(M, N, K, target="cuda", fixed=UNSWAPPED)
    timed = _timed()[shape]
    key = (cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.STAGES)
    assert key in timed, (shape, cfg.short(), sorted(timed))
    return timed[key] / min(timed.values())


def test_picks_are_2_percent_off_the_fastest_in_the_geomean() -> None:
    offs = [_off(s) for s in _timed()]
    assert math.exp(sum(map(math.log, offs)) / len(offs)) <= 1.02, offs


def test_the_probes_cover_both_sides_of_the_rules() -> None:
    picks = {(cfg.BM, cfg.BN, cfg.STAGES) for (_, M, N, K) in _timed()
             for cfg in [heuristic(M, N, K, target="cuda", fixed=UNSWAPPED)[0]]}
    assert {(64, 256, 4), (128, 64, 8), (64, 128, 8)} <= picks, picks
