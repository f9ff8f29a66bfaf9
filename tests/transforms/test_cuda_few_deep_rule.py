"""The CUDA heuristic's rule for very few tiles and deep K (heuristic.CUDA_FEW_DEEP: cuBLAS's
nvjet kernel as Nsight Compute named it: 128x128 tiles, 6 stages, a 2x1 cluster, split-K over the
SMs) against the H200 probe it was drawn from (bench/results/cuda_probe_deepk_nvjet_h200_2026-11-
28_s13.json): where the rule fires, its exact config was timed and was the fastest there; where it
does not (more tiles), the heuristic's own pick was faster than that config."""

from __future__ import annotations

import pytest

from tests.probes import timed
from tilec.transforms.heuristic import CUDA_FEW_DEEP, heuristic

RUN = "cuda_probe_deepk_nvjet_h200_2026-11-28_s13.json"


def _timed() -> dict[tuple[str, int, int, int], dict[tuple, float]]:
    return timed(RUN, keys=("BM", "BN", "DECOMP", "SPLITS", "FIXUP", "STAGES", "CM", "CN"))


def _key(cfg) -> tuple:  # type: ignore[no-untyped-def]
    return (cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.FIXUP.value, cfg.STAGES, cfg.CM,
            cfg.CN)


@pytest.mark.parametrize("shape", sorted(_timed()), ids=lambda s: s[0])
def test_rule_fires_where_its_config_was_fastest(shape: tuple[str, int, int, int]) -> None:
    name, M, N, K = shape
    cfg, why = heuristic(M, N, K, target="cuda")
    timed = _timed()[shape]
    nvjet = (128, 128, "splitk", 8, "reduce_kernel", 6, 2, 1)
    if why[0].endswith(f"'{CUDA_FEW_DEEP}'"):
        assert _key(cfg) == nvjet and timed[nvjet] == min(timed.values()), (name, timed)
    else:
        assert _key(cfg) != nvjet
        assert timed[nvjet] > min(timed.values()) * 1.2, (name, timed)


def test_both_sides_probed_and_pins_kept() -> None:
    fired = [heuristic(M, N, K, target="cuda")[1][0].endswith(f"'{CUDA_FEW_DEEP}'")
             for (_, M, N, K) in _timed()]
    assert fired.count(True) == 2 and fired.count(False) == 2
    from tilec.transforms.heuristic import parse_knob

    cfg, _ = heuristic(512, 512, 65536, target="cuda", fixed={"SPLITS": parse_knob("SPLITS", 4),
                                                              "CM": parse_knob("CM", 1)})
    assert (cfg.SPLITS, cfg.CM, cfg.BN, cfg.STAGES) == (4, 1, 128, 6)
    assert heuristic(512, 512, 65536)[0].CM == 1  # Triton: its own rule, no cluster
