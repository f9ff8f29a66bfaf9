"""The CUDA heuristic's rules for very few tiles and deep K (tilec/transforms/cuda_rules.py) against
the H200 probes they were drawn from:

* :data:`CUDA_FEW_DEEP` (at most sms/8 128x128 tiles over two tile rows or more, K >= 16384):
  128x256 split-K over the SMs with a 2x1 cluster where N holds two such tiles. Session 15's two
  probes (bench/results/cuda_probe_s15a_h200_2026-11-28.json, cuda_probe_s15b_...) timed it
  beside cuBLAS's nvjet 128x128 kernel (session 13's rule) and other splits and clusters; session
  13's probe (cuda_probe_deepk_nvjet_h200_2026-11-28_s13.json) timed the nvjet config where the
  rule does not fire (more tiles).
* :data:`CUDA_ONE_DEEP` (one 128x128 tile, K >= 32768): 6 stages, split-K 48, the deterministic
  fix-up (spread over the resident parts by the CUDA launcher). Session 16's probes
  (cuda_probe_s16a_..., cuda_probe_s16c_...) timed it beside the reduce kernel of session 15's rule.

Where a rule fires, its exact config was timed (in one run or more) and was the fastest in each
run that timed it (within 1%: the runs' noise) among the reproducible fix-ups (the atomic one,
timed for reference, is not bitwise repeatable and no rule picks it); where it does not, the
config it would give was slower than the heuristic's pick."""

from __future__ import annotations

import pytest

from tests.probes import timed
from tilec.transforms.cuda_rules import CUDA_FEW_DEEP, CUDA_ONE_DEEP
from tilec.transforms.heuristic import heuristic, parse_knob

KEYS = ("BM", "BN", "DECOMP", "SPLITS", "FIXUP", "STAGES", "CM", "CN")
S13 = "cuda_probe_deepk_nvjet_h200_2026-11-28_s13.json"
S15 = ("cuda_probe_s15a_h200_2026-11-28.json", "cuda_probe_s15b_h200_2026-11-28.json")
# (cuda_probe_s16b_... timed a build whose reduce_float4 was slower, since reverted: not a reference)
S16 = ("cuda_probe_s16a_h200_2026-11-28.json", "cuda_probe_s16c_h200_2026-11-28.json")
DEEP = ("deep_128_k64k", "skinny_512_k64k", "deep_256x1024_k128k")


def _key(cfg) -> tuple:  # type: ignore[no-untyped-def]
    return (cfg.BM, cfg.BN, cfg.DECOMP.value, cfg.SPLITS, cfg.FIXUP.value, cfg.STAGES, cfg.CM,
            cfg.CN)


def _runs() -> list[tuple[str, tuple[str, int, int, int], dict[tuple, float]]]:
    out = []
    for run in (S13, *S15, *S16):
        for shape, rows in timed(run, keys=KEYS).items():
            if (run == S13) == (shape[0] in DEEP):  # S13 beyond DEEP: where the rules do not fire
                continue
            out.append((run, shape, rows))
    return out


def _shapes() -> dict[tuple[str, int, int, int], list[tuple[str, dict[tuple, float]]]]:
    out: dict[tuple[str, int, int, int], list[tuple[str, dict[tuple, float]]]] = {}
    for run, shape, rows in _runs():
        out.setdefault(shape, []).append((run, rows))
    return out


@pytest.mark.parametrize("shape", sorted(_shapes()), ids=lambda s: s[0])
def test_rule_fires_where_its_config_was_fastest(shape: tuple[str, int, int, int]) -> None:
    name, M, N, K = shape
    cfg, why = heuristic(M, N, K, target="cuda")
    rule = why[0].rsplit("'", 2)[-2] if why[0].endswith("'") else ""
    runs = _shapes()[shape]
    if rule in (CUDA_FEW_DEEP, CUDA_ONE_DEEP):
        timed_in = [(run, rows) for run, rows in runs if _key(cfg) in rows]
        assert timed_in, (name, cfg.short())
        for run, rows in timed_in:
            best = min(ms for key, ms in rows.items() if key[KEYS.index("FIXUP")] != "atomic")
            assert rows[_key(cfg)] <= best * 1.01, (run, name, cfg.short(), rows)
    else:
        ((run, rows),) = runs
        assert run == S13
        nvjet = (128, 128, "splitk", 8, "reduce_kernel", 6, 2, 1)
        assert _key(cfg) != nvjet and rows[nvjet] > min(rows.values()) * 1.2, (name, rows)


def test_both_sides_probed_and_pins_kept() -> None:
    shapes = _shapes()
    fired = [heuristic(M, N, K, target="cuda")[1][0].endswith((f"'{CUDA_FEW_DEEP}'",
                                                               f"'{CUDA_ONE_DEEP}'"))
             for (_, M, N, K) in shapes]
    assert fired.count(True) == 3 and fired.count(False) == 2
    cfg, _ = heuristic(512, 512, 65536, target="cuda", fixed={"SPLITS": parse_knob("SPLITS", 4),
                                                              "CM": parse_knob("CM", 1)})
    assert (cfg.SPLITS, cfg.CM, cfg.BN, cfg.STAGES) == (4, 1, 256, 4)
    # N of one 256-column tile keeps the 128x128 tile (6 stages)
    narrow, _ = heuristic(1024, 256, 65536, target="cuda")
    assert (narrow.BN, narrow.STAGES, narrow.CM) == (128, 6, 2)
    one, _ = heuristic(128, 128, 65536, target="cuda", fixed={"SPLITS": parse_knob("SPLITS", 8)})
    assert (one.BN, one.SPLITS) == (128, 8)
    assert heuristic(512, 512, 65536)[0].CM == 1  # Triton: its own rule, no cluster
