"""Session 19's CUDA rules, drawn from shapes nobody had named (bench/dispatch.py --fresh), against
the H200 probes they came from (bench/results/cuda_probe_fresh_<m>_h200_2026-11-29_s19.json: per
shape the heuristic of then and swapped candidates, one run each):

* ``cuda_swap.wide_rows``: M just past a multiple of 128 and K >= 7168 cut in 136-176-row swapped
  tiles of 128 columns (1062, 1700, 2451 rows); 1369 rows (89 past 1280) keep the unswapped tile;
* ``cuda_swap.rows_tile``: one tile of up to 176 rows (171 x 14336 x 4096);
* ``cuda_swap.rule``: decode rows on a 16x128 swapped tile, whole at K <= 2048 (9 x 7168 x 2048),
  in two K parts under 24 tiles of 256 columns (9 x 4608 x 3584).

Where a rule takes a shape, its pick was timed and beat the heuristic of then by 3% or more, and
every other candidate of the same tile class (within 0.5%: a tie). (The half-wave probes of the same
session: test_cuda_half_wave.py.)"""

from __future__ import annotations

import pytest

from tests.probes import timed
from tilec.transforms import cuda_swap
from tilec.transforms.heuristic import heuristic

TAKEN = {"m1062": "128 columns a tile", "m1700": "128 columns a tile",
         "m2451": "128 columns a tile", "m171": "one wave of tiles or less",
         "m9": "16x128, split-K 2", "m9b": "16x128, a quarter wave"}
RUNS = tuple(f"cuda_probe_fresh_{s}_h200_2026-11-29_s19.json" for s in (*TAKEN, "m1369"))
KEYS = ("SWAP_AB", "BM", "BN", "DECOMP", "SPLITS", "STAGES")


def _key(cfg) -> tuple:  # type: ignore[no-untyped-def]
    return (cfg.SWAP_AB, cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.STAGES)


ROWS = timed(*RUNS, keys=KEYS)
SHAPES = sorted(ROWS)


def _then(rows: dict, name: str) -> float:
    """The heuristic of then: the unswapped pick, or the 16x256 decode tile (m9b)."""
    return min(ms for k, ms in rows.items() if k[0] == 0 or (name == "m9b" and k[2] == 256
                                                            and k[4] == 3))


@pytest.mark.parametrize("shape", [s for s in SHAPES if s[0] in TAKEN], ids=lambda s: s[0])
def test_the_rule_takes_what_won(shape: tuple[str, int, int, int]) -> None:
    name, M, N, K = shape
    rows = ROWS[shape]
    cfg, why = heuristic(M, N, K, target="cuda")
    assert cfg.SWAP_AB == 1 and TAKEN[name] in why[0], (name, why)
    ms = rows.get(_key(cfg))
    assert ms is not None, (name, cfg.short(), sorted(rows))
    assert ms * 1.03 <= _then(rows, name), (name, ms, rows)
    same_class = [v for k, v in rows.items() if k[0] == 1 and k[2] == cfg.BN and k != _key(cfg)]
    assert all(ms <= v * 1.005 for v in same_class), (name, ms, rows)


def test_the_ragged_cut_declines_where_the_last_tile_row_is_over_half_used() -> None:
    (shape,) = [s for s in SHAPES if s[0] == "m1369"]
    rows = ROWS[shape]
    assert cuda_swap.wide_rows(*shape[1:], 132) is None
    assert heuristic(*shape[1:], target="cuda")[0].SWAP_AB == 0
    swapped = min(ms for k, ms in rows.items() if k[0] == 1)
    assert swapped >= _then(rows, "m1369") * 0.97, rows  # no swapped tile won by 3%


def test_the_rules_stay_in_what_was_measured() -> None:
    assert cuda_swap.wide_rows(1062, 4096, 2048, 132) is None  # K under 3584 (session 20 took
    # the cut from 7168 back to 3584: test_cuda_fresh_rules_s20.py)
    assert cuda_swap.wide_rows(1062, 4096, 14336, 132)[0] == 136
    assert cuda_swap.rows_tile(177, 14336, 132) is None  # past 176 rows (2 x 96: 224 tiles)
    assert cuda_swap.rows_tile(171, 14336, 132) == (176, 128, 1)
    assert cuda_swap.rule(9, 7168, 4096)[0].BN == 256  # deeper than 2048: the 16x256 tile
    assert cuda_swap.rule(9, 4096, 3584) is None  # 32 tiles of 128 columns: a quarter wave
