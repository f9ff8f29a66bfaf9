"""A nearest rule lends its tile; its decomposition is re-chosen at the shape
(tilec/runtime/rules.py: rechoose, Rules.lookup). The oracle is the cost model itself: its ranking
of every candidate decomposition for the tile (transforms/choice.py) and the heuristic's choice
with the tile pinned."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from tilec.runtime.loader import load_schedule
from tilec.runtime.rules import (
    DECOMP_KNOBS,
    FORMAT,
    KEEP_MARGIN,
    TILE_KNOBS,
    Rules,
    modeled,
    rechoose,
)
from tilec.transforms.choice import rank_decompositions
from tilec.transforms.heuristic import REDUCE_MARGIN, REDUCE_MIN_SPLITS, heuristic
from tilec.transforms.plan import Decomposition, Fixup

TILES = [(16, 64, 256), (32, 32, 16), (64, 64, 128), (128, 128, 64), (128, 256, 64)]
DECOMPS = [("dp", 1, 1, "deterministic"), ("splitk", 2, 1, "deterministic"),
           ("splitk", 7, 1, "atomic"), ("skpp", 1, 2, "deterministic"),
           ("streamk", 1, 1, "deterministic"), ("splitk", 16, 1, "reduce_kernel")]


def _params(tile: tuple[int, int, int], decomp: tuple) -> dict:
    return {"BM": tile[0], "BN": tile[1], "BK": tile[2], "STAGES": 3, "WARPS": 4, "GROUP_M": 8,
            "LOAD": "auto", **dict(zip(DECOMP_KNOBS, decomp, strict=True))}


def _model_best(M: int, N: int, K: int, tile: tuple[int, int, int], sms: int) -> float:
    """The cost model's best time for the tile, from its own ranking (deterministic fix-up; a
    reduce-kernel split-K of enough parts where it is REDUCE_MARGIN faster)."""
    BM, BN, BK = tile
    det = rank_decompositions(M, N, K, BM, BN, BK, sms)[0][0]
    red = [r[0] for r in rank_decompositions(M, N, K, BM, BN, BK, sms, fixup=Fixup.REDUCE_KERNEL)
           if r[3].kind is Decomposition.SPLIT_K and r[3].splits >= REDUCE_MIN_SPLITS]
    return red[0] if red and red[0] < det * (1 - REDUCE_MARGIN) else det


shapes = st.tuples(st.integers(1, 3000), st.integers(1, 3000), st.integers(1, 20000))


@settings(max_examples=60, deadline=None)
@given(shapes, st.sampled_from(TILES), st.sampled_from(DECOMPS), st.sampled_from([4, 16, 132]))
def test_rechoice_keeps_the_tile_and_models_within_the_margin(
        shape: tuple[int, int, int], tile: tuple[int, int, int], decomp: tuple, sms: int) -> None:
    M, N, K = shape
    rule = _params(tile, decomp)
    got, why = rechoose(M, N, K, rule, sms=sms)
    assert {k: got[k] for k in TILE_KNOBS} == {k: rule[k] for k in TILE_KNOBS}
    best = _model_best(M, N, K, tile, sms)
    own = modeled(M, N, K, rule, sms)
    if own <= best * (1 + KEEP_MARGIN):
        assert got == rule and "kept" in why, (own, best)
    else:
        assert modeled(M, N, K, got, sms) == pytest.approx(best), why
        assert why.startswith("decomposition re-chosen for this shape") and f"{best:.1f}" in why


@settings(max_examples=40, deadline=None)
@given(shapes, st.sampled_from(TILES), st.sampled_from([4, 132]))
def test_rechoice_is_the_heuristics_choice_for_the_tile(shape: tuple[int, int, int],
                                                        tile: tuple[int, int, int],
                                                        sms: int) -> None:
    """With no margin (a bucket's config: its decomposition never kept for its own sake) the
    re-choice is the decomposition the heuristic picks with the tile pinned, knob for knob."""
    M, N, K = shape
    rule = _params(tile, ("splitk", 2, 1, "deterministic"))
    got, why = rechoose(M, N, K, rule, sms=sms, margin=None)
    cfg, _ = heuristic(M, N, K, sms=sms, fixed={k: rule[k] for k in ("BM", "BN", "BK")})
    want = cfg.params()
    assert {k: got[k] for k in DECOMP_KNOBS} == {k: want[k] for k in DECOMP_KNOBS}
    assert ("is the model's best here too" if got == rule else "re-chosen") in why


def _rules() -> Rules:
    return Rules.from_data({"format": FORMAT, "schedule": "g.py", "schedule_key": "k",
                            "radius": 1.0, "rules": [
                                {"M": 2048, "N": 2048, "K": 8192,
                                 "params": _params((128, 256, 64), ("dp", 1, 1, "deterministic"))},
                                {"M": 4096, "N": 512, "K": 16384,
                                 "params": _params((128, 128, 64), ("splitk", 3, 1, "atomic"))}]})


def test_lookup_keeps_exact_rules_and_rechooses_nearest_ones() -> None:
    rules = _rules()
    exact, why = rules.lookup(4096, 512, 16384)  # type: ignore[misc]
    assert exact["DECOMP"] == "splitk" and exact["SPLITS"] == 3 and "exact shape" in why
    # 2304^2: 162 tiles of 128x256 on 132 SMs (1.23 waves): the rule's dp is lent its tile only
    got, why = rules.lookup(2304, 2304, 8192)  # type: ignore[misc]
    best = _model_best(2304, 2304, 8192, (128, 256, 64), 132)
    assert (got["BM"], got["BN"]) == (128, 256) and got["DECOMP"] != "dp"
    assert modeled(2304, 2304, 8192, got, 132) == pytest.approx(best)
    assert "nearest tuned shape 2048x2048x8192" in why and "re-chosen" in why
    assert "162 tiles of 128x256 on 132 SMs (1.23 waves)" in why
    # 2048 x 2048 x 6000: 128 tiles, dp modeled best: kept, and said so
    got, why = rules.lookup(2048, 2048, 6000)  # type: ignore[misc]
    assert got["DECOMP"] == "dp" and "kept" in why


def test_a_rule_without_a_tile_is_lent_as_it_is() -> None:
    rules = Rules.from_data({"format": FORMAT, "schedule": "g.py", "radius": 1.0,
                             "rules": [{"M": 256, "N": 256, "K": 256, "params": {"BM": 64}}]})
    assert rules.lookup(300, 256, 256) == (
        {"BM": 64}, "rules g.py: nearest tuned shape 256x256x256 (log2 distance 0.23 <= radius 1)")


def test_gen_uses_the_rechoice_with_the_schedules_sms() -> None:
    """tilec gen's road (load_schedule with rules): the rule's tile, the decomposition re-chosen
    over the schedule's SMS."""
    rules = _rules()
    for sms in (132, 8):
        got = load_schedule("examples/gemm_decomposition.py",
                            {"M": 2304, "N": 2304, "K": 8192, "SMS": sms}, tuned=False,
                            rules=rules).params
        want, _ = rules.lookup(2304, 2304, 8192, sms=sms)  # type: ignore[misc]
        assert {k: got[k] for k in (*TILE_KNOBS, *DECOMP_KNOBS)} == {
            k: want[k] for k in (*TILE_KNOBS, *DECOMP_KNOBS)}
        assert modeled(2304, 2304, 8192, got, sms) <= (1 + KEEP_MARGIN) * _model_best(
            2304, 2304, 8192, (128, 256, 64), sms)
