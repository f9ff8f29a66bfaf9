"""The CUDA heuristic's swapped-operand rule (tilec/transforms/cuda_swap.py) against the H200
probe it was drawn from (bench/results/cuda_probe_swap_h200_2026-11-28_s14.json: cuBLAS's
small / ragged-M tiles as SWAP_AB=1 candidates beside the unswapped heuristic, same run): at every
probe shape the rule takes, its pick was timed (tile, decomposition, epilogue) and beat every
unswapped configuration timed there by 3% or more; where it declines (1000^3, 128 x 128 x 65536,
and 128 x 4096 x 7168, 512 x 7168 x 2048 from the first full run with the rule,
cuda_probe_swap_moved_h200_2026-11-28_s14.json) no swapped candidate beat the unswapped ones."""

from __future__ import annotations

import pytest

from tests.probes import timed
from tilec.ir.types import DType
from tilec.transforms import cuda_swap
from tilec.transforms.heuristic import heuristic
from tilec.transforms.pipeline.legalize import swap_epilogue
from tilec.transforms.plan import Decomposition

RUNS = ("cuda_probe_swap_h200_2026-11-28_s14.json",
        # the first full run's three shapes the rule then moved, beside their earlier configs
        "cuda_probe_swap_moved_h200_2026-11-28_s14.json")
KEYS = ("SWAP_AB", "BM", "BN", "DECOMP", "SPLITS", "FIXUP", "EPILOGUE")


def _timed() -> dict[tuple[str, int, int, int], dict[tuple, float]]:
    out = timed(*RUNS, keys=KEYS)
    # the second run's rows leave EPILOGUE auto: by then lowering's swapped default
    # (legalize.swap_epilogue), TMA stores for two consumers (BN 128), else direct ("auto")
    def epilogue(k: tuple) -> tuple:
        if k[-1] is not None:
            return k
        return (*k[:-1], "tma" if k[0] and k[2] % 128 == 0 else "auto")

    return {shape: {epilogue(k): ms for k, ms in rows.items()} for shape, rows in out.items()}


def _key(cfg) -> tuple:  # type: ignore[no-untyped-def]
    epi = swap_epilogue(cfg.BM, cfg.BN, cfg.BK, DType.BF16, cfg.WARPS, cfg.STAGES).value
    return (cfg.SWAP_AB, cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.FIXUP.value,
            "tma" if epi == "tma" else "auto")  # "auto" was the direct epilogue then


def _unswapped(shape: tuple[str, int, int, int]) -> float:
    """The fastest unswapped configuration (SWAP_AB=0) the probes timed at ``shape``."""
    rows = [v for k, v in _timed()[shape].items() if k[0] == 0]
    assert rows, shape
    return min(rows)


# shapes the later half-wave rule takes (cuda_swap.half_wave): its own probe,
# tests/transforms/test_cuda_half_wave.py (these runs timed no swapped split-K there)
HALF = [s for s in sorted(_timed()) if cuda_swap.half_wave(*s[1:], 132) is not None]
TAKEN = [s for s in sorted(_timed()) if cuda_swap.rule(*s[1:]) is not None and s not in HALF]
DECLINED = [s for s in sorted(_timed()) if cuda_swap.rule(*s[1:]) is None]


def test_the_probe_has_both_kinds() -> None:
    assert len(TAKEN) >= 9 and {s[0] for s in DECLINED} >= {
        "ragged_1000", "deep_128_k64k", "dsv3_down_m512"}
    assert [s[0] for s in HALF] == ["seed001_awq"]


@pytest.mark.parametrize("shape", TAKEN, ids=lambda s: s[0])
def test_pick_was_timed_and_beats_the_unswapped_pick(shape: tuple[str, int, int, int]) -> None:
    _, M, N, K = shape
    cfg, why = heuristic(M, N, K, target="cuda")
    assert cfg.SWAP_AB == 1 and "swapped operands" in why[0], why
    ms = _timed()[shape].get(_key(cfg))
    assert ms is not None, (shape, cfg.short(), sorted(_timed()[shape]))
    assert ms * 1.03 <= _unswapped(shape), (shape, ms, _unswapped(shape))


@pytest.mark.parametrize("shape", DECLINED, ids=lambda s: s[0])
def test_declined_where_no_swapped_candidate_won(shape: tuple[str, int, int, int]) -> None:
    swapped = [ms for k, ms in _timed()[shape].items() if k[0] == 1]
    assert swapped and min(swapped) >= _unswapped(shape) * 0.98, (shape, swapped)
    cfg, _ = heuristic(*shape[1:], target="cuda")
    assert cfg.SWAP_AB == 0


def test_user_knobs_win_over_the_rule() -> None:
    cfg, _ = heuristic(200, 4096, 7168, target="cuda", fixed={"SWAP_AB": 0})
    assert cfg.SWAP_AB == 0
    tile, _ = heuristic(200, 4096, 7168, target="cuda", fixed={"BM": 128})
    assert tile.SWAP_AB == 0 and tile.BM == 128
    split, _ = heuristic(200, 4096, 7168, target="cuda", fixed={"DECOMP": Decomposition.SPLIT_K})
    assert split.SWAP_AB == 1 and split.DECOMP is Decomposition.SPLIT_K  # parts: the cost model


def test_the_tuning_space_holds_the_swapped_tile_where_the_rule_declines() -> None:
    from tilec.transforms.heuristic import candidates

    deep = candidates(200, 4096, 32768, target="cuda")  # K past the rule's 28672 (session 20)
    assert deep[0].SWAP_AB == 0
    assert [(c.BM, c.BN) for c in deep if c.SWAP_AB] == [(104, 64)]
    taken = candidates(200, 4096, 7168, target="cuda")  # the rule's pick leads, swapped
    assert taken[0].SWAP_AB == 1 and any(not c.SWAP_AB for c in taken)
    assert not any(c.SWAP_AB for c in candidates(200, 4096, 32768, target="cuda",
                                                 fixed={"SWAP_AB": 0}))
    assert not any(c.SWAP_AB for c in candidates(200, 4096, 32768))  # Triton
