"""The CUDA heuristic's half-wave rule (tilec/transforms/cuda_swap.py, ``half_wave``: one swapped
row tile of 64 columns under half a wave of tiles, split in two K parts) against the H200 probe it
was drawn from (bench/results/cuda_probe_fresh_m*_h200_2026-11-28_s18.json: per shape the
heuristic of then and swapped candidates, one run each): where the rule takes a shape, its pick
was timed and beat the unswapped pick of the same run by 3% or more and the swapped tile without
the split too; 175 rows (a 176-row tile, past the rule's 168) are left to the unswapped rules."""

from __future__ import annotations

import pytest

from tests.probes import timed
from tilec.transforms import cuda_swap
from tilec.transforms.heuristic import heuristic

RUNS = tuple(f"cuda_probe_fresh_{s}_h200_2026-11-28_s18.json"
             for s in ("m135", "m75", "m128", "m175"))
KEYS = ("SWAP_AB", "BM", "BN", "DECOMP", "SPLITS", "FIXUP")


def _key(cfg) -> tuple:  # type: ignore[no-untyped-def]
    return (cfg.SWAP_AB, cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.FIXUP.value)


SHAPES = sorted(timed(*RUNS, keys=KEYS))


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s[0])
def test_the_rule_takes_what_won(shape: tuple[str, int, int, int]) -> None:
    _, M, N, K = shape
    rows = timed(*RUNS, keys=KEYS)[shape]
    unswapped = min(ms for k, ms in rows.items() if k[0] == 0)
    cfg, why = heuristic(M, N, K, target="cuda")
    if M > cuda_swap.MAX_ROWS:  # 176 rows: measured (0.981x) with 7 stages, the ring holds 6
        assert cfg.SWAP_AB == 0 and cuda_swap.half_wave(M, N, K, 132) is None
        return
    assert cfg.SWAP_AB == 1 and cfg.SPLITS == 2 and "split-K 2" in why[0], why
    ms = rows.get(_key(cfg))
    assert ms is not None, (shape, cfg.short(), sorted(rows))
    assert ms * 1.03 <= unswapped, (shape, ms, unswapped)
    whole = [v for k, v in rows.items() if k[0] == 1 and k[3] == "dp" and k[1] == cfg.BM]
    assert all(ms < v for v in whole), (shape, ms, whole)


def test_the_probe_covers_the_rule() -> None:
    taken = [s for s in SHAPES if cuda_swap.half_wave(*s[1:], 132) is not None]
    assert [s[0] for s in taken] == ["m128", "m135", "m75"]


def test_the_rule_stays_in_what_was_measured() -> None:
    assert cuda_swap.half_wave(135, 4096, 4096, 132) is None  # K under 7168
    assert cuda_swap.half_wave(135, 4096, 16384, 132) is None  # past 14336
    assert cuda_swap.half_wave(32, 4096, 7168, 132) is None  # decode rows
    assert cuda_swap.half_wave(135, 2048, 7168, 132) is None  # a quarter wave or less
    assert cuda_swap.half_wave(135, 4224, 7168, 132) is None  # half a wave: rows_tile's
    assert cuda_swap.half_wave(135, 4160, 7168, 132) == 136
