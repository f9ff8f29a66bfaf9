"""The CUDA heuristic's half-wave rule (tilec/transforms/cuda_swap.py, ``half_wave``: one swapped
row tile of 64 columns under half a wave of tiles; in two K parts from K = 7168, whole below)
against the H200 probes it was drawn from (bench/results/cuda_probe_fresh_m*_h200_2026-11-28_s18.json
and ..._2026-11-29_s19.json: per shape the heuristic of then and swapped candidates, one run
each): where the rule takes a shape, its pick was timed and beat the unswapped pick of the same
run by 3% or more, and the same tile with the other K split (whole or two parts) too."""

from __future__ import annotations

import pytest

from tests.probes import timed
from tilec.transforms import cuda_swap
from tilec.transforms.heuristic import heuristic

RUNS = (*(f"cuda_probe_fresh_{s}_h200_2026-11-28_s18.json" for s in ("m135", "m75", "m128", "m175")),
        *(f"cuda_probe_fresh_{s}_h200_2026-11-29_s19.json" for s in ("m132", "m100k2", "m175")))
KEYS = ("SWAP_AB", "BM", "BN", "DECOMP", "SPLITS", "FIXUP", "STAGES")


def _key(cfg) -> tuple:  # type: ignore[no-untyped-def]
    return (cfg.SWAP_AB, cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.FIXUP.value,
            cfg.STAGES)


def _timed() -> dict:
    """Per shape, per key: the fastest of the runs that timed it (m175 was timed in s18 and
    s19)."""
    out: dict = {}
    for run in RUNS:
        for shape, rows in timed(run, keys=KEYS).items():
            for k, ms in rows.items():
                have = out.setdefault(shape, {})
                have[k] = min(ms, have.get(k, ms))
    return out


SHAPES = sorted(_timed())


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: s[0])
def test_the_rule_takes_what_won(shape: tuple[str, int, int, int]) -> None:
    _, M, N, K = shape
    rows = _timed()[shape]
    unswapped = min(ms for k, ms in rows.items() if k[0] == 0)
    cfg, why = heuristic(M, N, K, target="cuda")
    parts = 2 if K >= cuda_swap.HALF_WAVE_SPLIT_K else 1
    assert cfg.SWAP_AB == 1 and cfg.SPLITS == parts and "under half a wave" in why[0], why
    ms = rows.get(_key(cfg))
    assert ms is not None, (shape, cfg.short(), sorted(rows))
    assert ms * 1.03 <= unswapped, (shape, ms, unswapped)
    other = [v for k, v in rows.items() if k[0] == 1 and k[1] == cfg.BM and k[4] != parts]
    assert all(ms <= v * 1.002 for v in other), (shape, ms, other)  # 0.2%: a tie


def test_the_split_was_timed_both_ways_on_both_sides_of_7168() -> None:
    both = [s for s in SHAPES if {k[4] for k in _timed()[s] if k[0] == 1 and k[1] ==
                                   cuda_swap.half_wave(*s[1:], 132)[0]} == {1, 2}]
    assert {s[3] >= cuda_swap.HALF_WAVE_SPLIT_K for s in both} == {True, False}, both


def test_the_probe_covers_the_rule() -> None:
    taken = [s for s in SHAPES if cuda_swap.half_wave(*s[1:], 132) is not None]
    assert [s[0] for s in taken] == ["m100k2", "m128", "m132", "m135", "m175", "m75"]


def test_the_rule_stays_in_what_was_measured() -> None:
    assert cuda_swap.half_wave(135, 4096, 1024, 132) is None  # K under 2048
    assert cuda_swap.half_wave(135, 4096, 16384, 132) is None  # past 14336
    assert cuda_swap.half_wave(32, 4096, 7168, 132) is None  # decode rows
    assert cuda_swap.half_wave(177, 4096, 7168, 132) is None  # past one 176-row tile
    assert cuda_swap.half_wave(135, 2048, 7168, 132) is None  # a quarter wave or less
    assert cuda_swap.half_wave(135, 4224, 7168, 132) is None  # half a wave: rows_tile's
    assert cuda_swap.half_wave(135, 4160, 7168, 132) == (136, 2)
    assert cuda_swap.half_wave(135, 4160, 7167, 132) == (136, 1)
