"""The swapped-operand rule past 1024 rows (``cuda_swap.wide_rows``: 168x128 swapped tiles where M is
cut into 168s with little waste, the last wave nearly full and K at least 3584) and the swapped
ring's stage budget for 64 columns (168x64 at 7 stages, 128x64 at 8), against session 15's H200
probes (bench/results/cuda_probe_s15a_h200_2026-11-28.json run e, cuda_probe_s15b_... runs c
and d): where the rule takes a shape, its exact pick was timed and beat every unswapped config
timed beside it (for the stage counts: every other stage count of the same tile); where it
declines, no swapped candidate beat the unswapped pick by more than 1%."""

from __future__ import annotations

import pytest

from tests.probes import timed
from tilec.transforms import cuda_swap
from tilec.transforms.heuristic import heuristic

RUNS = ("cuda_probe_s15a_h200_2026-11-28.json", "cuda_probe_s15b_h200_2026-11-28.json")
KEYS = ("SWAP_AB", "BM", "BN", "STAGES", "DECOMP", "CM", "CN")
DEEP = {"deep_128_k64k", "skinny_512_k64k", "deep_256x1024_k128k", "skinny_1024_k32k",
        "ragged_1000"}  # test_cuda_few_deep_rule.py; 1000^3: no swapped candidate


def _runs() -> dict[tuple[str, int, int, int], list[dict[tuple, float]]]:
    out: dict[tuple[str, int, int, int], list[dict[tuple, float]]] = {}
    for run in RUNS:
        for shape, rows in timed(run, keys=KEYS).items():
            if shape[0] not in DEEP:
                out.setdefault(shape, []).append(rows)
    return out


def _key(cfg) -> tuple:  # type: ignore[no-untyped-def]
    return (cfg.SWAP_AB, cfg.BM, cfg.BN, cfg.STAGES, cfg.DECOMP.value, cfg.CM, cfg.CN)


SHAPES = sorted(_runs())


def test_both_kinds_probed() -> None:
    wide = [s for s in SHAPES if cuda_swap.wide_rows(*s[1:], 132)]
    declined = [s for s in SHAPES if s[1] > 1024 and not cuda_swap.wide_rows(*s[1:], 132)]
    assert len(wide) >= 8 and {s[0] for s in declined} == {"g2000", "g2500", "h2680"}


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s[0])
def test_pick_timed_and_fastest(shape: tuple[str, int, int, int]) -> None:
    name, M, N, K = shape
    cfg, _ = heuristic(M, N, K, target="cuda")
    runs = _runs()[shape]
    if cfg.SWAP_AB:
        timed_in = [rows for rows in runs if _key(cfg) in rows]
        assert timed_in, (name, cfg.short())
        for rows in timed_in:
            rivals = [ms for k, ms in rows.items() if k[0] == 0] or [
                ms for k, ms in rows.items() if k[1:3] == (cfg.BM, cfg.BN) and k != _key(cfg)]
            assert rivals and rows[_key(cfg)] < min(rivals), (name, cfg.short(), rows)
    else:
        for rows in runs:
            swapped = [ms for k, ms in rows.items() if k[0] == 1]
            unswapped = [ms for k, ms in rows.items() if k[0] == 0]
            assert min(swapped) >= min(unswapped) * 0.99, (name, rows)


def test_the_wide_rule_only_in_the_measured_range() -> None:
    assert cuda_swap.wide_rows(8192, 8192, 8192, 132) is None  # M past 3400
    assert cuda_swap.wide_rows(1500, 3584, 2048, 132) is None  # K under 3584
    assert cuda_swap.wide_rows(1500, 3600, 18944, 132) is None  # N off 128
    assert heuristic(1500, 3584, 18944, target="cuda", fixed={"SWAP_AB": 0})[0].SWAP_AB == 0
