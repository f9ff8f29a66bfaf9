"""The CUDA heuristic's reduce-kernel choice against the H200 run it was drawn from
(bench/results/cuda_reduce_h200_2026-11-28_s13.json: the deterministic fix-up beside the reduce
kernel at 2-64 parts on deep-K and skinny shapes): where the pick was timed it is within 3% of the
fastest timed config. The one-tile 128 x 128 x 65536 is now cuda_rules.CUDA_ONE_DEEP's (split-K 48
at 6 stages, the deterministic fix-up that the CUDA launcher spreads over the parts: timed in
sessions 15-16, tests/transforms/test_cuda_few_deep_rule.py); here, the ticket form of that fix-up
ran 1.5x or more behind the reduce kernel."""

from __future__ import annotations

import pytest

from tests.probes import timed
from tilec.codegen.cuda.printer.spread import SPREAD_MIN_PARTS
from tilec.transforms.heuristic import heuristic

RUN = "cuda_reduce_h200_2026-11-28_s13.json"


def _timed() -> dict[tuple[str, int, int, int], dict[tuple, float]]:
    return timed(RUN, keys=("BM", "BN", "DECOMP", "SPLITS", "FIXUP"), skip_untimed=True)


@pytest.mark.parametrize("shape", sorted(_timed()), ids=lambda s: s[0])
def test_pick_near_the_fastest_timed(shape: tuple[str, int, int, int]) -> None:
    name, M, N, K = shape
    cfg, _ = heuristic(M, N, K, target="cuda")
    timed = _timed()[shape]
    key = (cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.FIXUP.value)
    if key not in timed:
        pytest.skip(f"{name}: the pick {cfg.short()} was not timed")
    assert timed[key] <= min(timed.values()) * 1.03, (name, cfg.short(), timed)


def test_one_deep_tile_takes_the_spread_deterministic_fix_up() -> None:
    """128 x 128 x 65536 takes the deterministic fix-up in 48 parts, enough for the CUDA launcher
    to spread its sum over the parts (printer/spread.py).  This run timed that fix-up's ticket form
    (the last part sums the tile alone) 1.5x or more behind the reduce kernel: the cost the
    spread removes (session 16 timed the spread ahead of the reduce kernel:
    test_cuda_few_deep_rule.py)."""
    cfg, why = heuristic(128, 128, 65536, target="cuda")
    assert cfg.FIXUP.value == "deterministic" and cfg.SPLITS >= SPREAD_MIN_PARTS, cfg.short()
    assert any("the deterministic fix-up" in w for w in why), why
    timed = _timed()[("deep_128_k64k", 128, 128, 65536)]
    det = min(v for k, v in timed.items() if k[4] == "deterministic")
    red = [v for k, v in timed.items() if k[:2] == (128, 128) and k[4] == "reduce_kernel"
           and k[3] >= 16]
    assert red and max(red) < det / 1.5, timed
