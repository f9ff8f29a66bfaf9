"""The CUDA module's copy of ``tilec gen --target cuda``'s heuristic (tilec/library/cuda_model.py,
_cuda_heuristic) against gen's choice at the shape, knob for knob, on bench/dispatch.py's shapes,
each rule's edges and random shapes, for 132 SMs and others; and the grouped lowering of the
build (one lowering per kernel, each config's work-split numbers from its own rule) against
lowering each config alone."""

from __future__ import annotations

import random
import sys
from pathlib import Path
from types import ModuleType

import pytest

from tests.library.fake import heuristic_module
from tilec.library.table import ConfigSet

ROOT = Path(__file__).resolve().parents[2]
GEN = ROOT / "examples" / "gemm_decomposition.py"


def _module(tmp: Path, sms: int) -> tuple[ModuleType, ConfigSet, dict]:
    """A CUDA module (torch kernels, empty tables) carrying what tilec build gives the copy."""
    from tilec.library.cuda_model import cuda_heuristic_data
    from tilec.runtime.loader import load_schedule

    raw = load_schedule(GEN, {"SMS": sms}, target="cuda", tuned=False).raw_params
    configs = ConfigSet()
    data = cuda_heuristic_data(raw, configs)
    assert data is not None
    return heuristic_module(tmp, f"cudaheur{sms}", configs, data, target="cuda"), configs, raw


def _edges(sms: int) -> list[tuple[int, int, int]]:
    """Shapes on and beside each rule's boundaries (cuda_swap.rule, cuda_rules.cuda_rule,
    heuristic._cluster)."""
    rng = random.Random(sms)
    ms = [1, 16, 17, 32, 33, 64, 65, 96, 97, 127, 128, 129, 256, 257, 1000, 1024, 1025, 1500,
          2000, 3400, 3401]
    ns = [64, 128, 192, 256, 500, 504, 512, 1000, 1024, 4096, 6144, 6168, 8192, 16384, 28672]
    ks = [16, 1000, 2048, 3584, 4096, 8192, 8193, 16383, 16384, 18944, 18945, 32767, 32768, 65536]
    return [(rng.choice(ms), rng.choice(ns), rng.choice(ks)) for _ in range(250)]


@pytest.mark.parametrize("sms", [132, 114, 16])
def test_the_cuda_copy_is_gens_heuristic(tmp_path: Path, sms: int) -> None:
    """The copy's config at each shape is gen's (load_schedule with target cuda, the heuristic
    at the shape), every knob; it never answers None (the build carries every config)."""
    from tilec.runtime.loader import load_schedule

    sys.path.insert(0, str(ROOT / "bench"))
    from dispatch import shapes  # type: ignore[import-not-found]

    mod, configs, _ = _module(tmp_path, sms)
    rng = random.Random(100 + sms)
    todo = [(M, N, K) for _, M, N, K in shapes()] + _edges(sms)
    todo += [tuple(int(2 ** rng.uniform(0, 15)) for _ in range(3)) for _ in range(150)]
    todo += [(rng.randint(33, 1024), 64 * rng.randint(1, 300), rng.randint(1, 8192))
             for _ in range(100)]  # the swapped rows tiles
    todo += [(rng.randint(1000, 3500), 128 * rng.randint(8, 80), rng.randint(3500, 19000))
             for _ in range(100)]  # the swapped 168x128 tiles past 1024 rows
    todo += [(2000, 5120, 8192), (2500, 3584, 18944)]  # last waves 91% and 80% full with 168
    todo += [(rng.randint(1000, 3500), 128 * rng.randint(8, 80), rng.randint(3500, 19000))
             for _ in range(100)]  # the wide rows' cut: 128-176 rows, the fullest last wave
    todo += [(rng.randint(30, 180), 64 * rng.randint(28, 70), rng.randint(1500, 14500))
             for _ in range(120)]  # one swapped row tile under half a wave: whole or split-K 2
    todo += [(rng.randint(1, 17), 128 * rng.randint(10, 140), rng.randint(1000, 9000))
             for _ in range(80)]  # the decode rows' 16x128 and 16x256 tiles
    todo += [(rng.randint(32, 272), 64 * rng.randint(28, 140), rng.randint(8193, 28672))
             for _ in range(50)]  # session 20: the rows tile past K = 8192, from 32 rows
    todo += [(rng.randint(1, 16), 128 * rng.randint(10, 70), rng.randint(8193, 28672))
             for _ in range(30)]  # session 20: decode 16x128 in two K parts to K = 28672
    todo += [(rng.randint(1025, 3400), 128 * rng.randint(8, 80), rng.randint(3584, 7168))
             for _ in range(30)]  # session 20: the ragged cut from K = 3584
    seen = set()
    for M, N, K in todo:
        got = mod._heuristic(M, N, K)
        assert got is not None, (M, N, K)
        want = load_schedule(GEN, {"SMS": sms, "M": M, "N": N, "K": K}, target="cuda",
                             tuned=False).params
        assert configs.params[got[0]] == {k: v for k, v in want.items()
                                          if k not in ("M", "N", "K")}, (M, N, K, got[1])
        seen.add(got[0])
    if sms == 132:  # the shapes reach the swapped, deep-K, clustered and weighed configs
        picked = [configs.params[i] for i in seen]
        assert {p["SWAP_AB"] for p in picked} == {0, 1}
        assert {p["CM"] for p in picked} == {1, 2}
        assert {p["DECOMP"] for p in picked} >= {"dp", "splitk"}
        assert any(p["SWAP_AB"] and p["DECOMP"] == "splitk" and p["SPLITS"] == 2 for p in picked)
        assert {(16, 128, "dp"), (16, 128, "splitk"), (176, 128, "dp")} <= {
            (p["BM"], p["BN"], p["DECOMP"]) for p in picked if p["SWAP_AB"]}
        assert len(seen) > 40, len(seen)


def test_the_copy_refuses_a_pinned_schedule() -> None:
    """A schedule pinning a knob gets no copy (gen's heuristic honours pins the copy does not
    know): the buckets answer."""
    from tilec.library.cuda_model import cuda_heuristic_data
    from tilec.runtime.loader import load_schedule

    for pins in ({"STAGES": 4}, {"CM": 1}, {"DECOMP": "dp"}):
        raw = load_schedule(GEN, pins, target="cuda", tuned=False).raw_params
        assert cuda_heuristic_data(raw, ConfigSet()) is None, pins
    raw = load_schedule(GEN, None, target="cuda", tuned=False).raw_params
    assert cuda_heuristic_data(raw, ConfigSet()) is not None


def test_grouped_lowering_is_each_configs_own() -> None:
    """Configs that differ only in SPLITS or SK_WAVES share one lowering in the build; what the
    module records of each (kernel source, facts, the cuda entry with its numbers) is what
    lowering that config alone gives."""
    from tilec.library.build import _config_kernels, _kernel_groups, _split_knobs
    from tilec.runtime.loader import load_schedule

    raw = load_schedule(GEN, None, target="cuda", tuned=False).raw_params
    base = {k: v for k, v in raw.items() if k not in ("M", "N", "K")}
    tile = dict(BM=128, BN=256, BK=64, WARPS=12, STAGES=4, GROUP_M=8, LOAD="auto", SWAP_AB=0,
                CM=1, CN=1)
    det, red = "deterministic", "reduce_kernel"
    params = [{**base, **tile, "DECOMP": d, "SPLITS": s, "SK_WAVES": w, "FIXUP": f}
              for d, s, w, f in [("splitk", 2, 1, det), ("splitk", 7, 1, det),
                                 ("splitk", 40, 1, red), ("splitk", 9, 1, red),
                                 ("skpp", 1, 1, det), ("skpp", 1, 3, det), ("dp", 1, 1, det)]]
    groups = _kernel_groups(params, "cuda")
    assert sorted(map(len, groups)) == [1, 2, 2, 2]
    shape = (512, 1024, 8192)
    for g in groups:
        together = _config_kernels((GEN, params[g[0]], shape, "cuda",
                                    [_split_knobs(params[i]) for i in g]))
        for i, one in zip(g, together, strict=True):
            alone = _config_kernels((GEN, params[i], shape, "cuda", [_split_knobs(params[i])]))
            assert one == alone[0], params[i]
        numbers = {one["cuda"]["numbers"] for one in together}
        assert len(numbers) == len(g)  # each its own split
