"""Session 20's CUDA rules, drawn from fresh shapes that still lost, against the H200 probe they
came from (bench/results/cuda_probe_fresh_h200_2026-11-29_s20.log: per shape the heuristic of
then, first, and candidates, one run each; the printed table of bench/dispatch_cuda.py, the one
record holding all eight shapes):

* ``cuda_swap.rule``'s rows tile past K = 8192 for rows not a multiple of 128 up to 272
  (261 x 4096 x 14336, 78 x 8192 x 28672) and from 32 rows (32 x 7168 x 2048);
* decode rows on a 16x128 tile in two K parts to K = 28672 (6 x 8192 x 28672);
* ``cuda_swap.wide_rows``'s ragged cut from K = 3584 again (1037 x 4096 x 4096).

Where a rule takes a shape, its pick was timed and beat the heuristic of then by 3% or more, and
every other candidate of the same tile class (within 0.5%: a tie). Where no candidate won by 3%
(153 and 1369 x 4096 x 4096) or one point alone did (1198 x 8192 x 28672), the pick is the
heuristic of then."""

from __future__ import annotations

import re

import pytest

from tests.probes import RESULTS
from tilec.transforms import cuda_swap
from tilec.transforms.heuristic import heuristic

LOG = RESULTS / "cuda_probe_fresh_h200_2026-11-29_s20.log"
ROW = re.compile(r"^(?:(m\d+)|  \+ \S+)\s+(\d+)\s+(\d+)\s+(\d+)\s+[\d.]+ (yes|no)"
                 r"\s+([\d.]+)\s+[\d.]+\s+(.+?) sms132")  # who, M N K, x, ok, ms, label


def _probes() -> dict[str, dict]:
    """shape name -> {"shape": (M, N, K), "then": label, "ms": {label: ms}} from the log."""
    out: dict[str, dict] = {}
    name = None
    for line in LOG.read_text().splitlines():
        m = ROW.match(line)
        if not m:
            continue
        head, M, N, K, ok, ms, label = m.groups()
        assert ok == "yes", line
        if head:
            name = head
            out[name] = {"shape": (int(M), int(N), int(K)), "then": label, "ms": {}}
        assert name is not None
        out[name]["ms"][label] = float(ms)
    return out


PROBES = _probes()
TAKEN = {"m261": "on wgmma's N", "m78": "on wgmma's N", "m32": "on wgmma's N",
         "m6": "16x128, split-K 2", "m1037": "128 columns a tile"}
KEPT = ("m153", "m1369", "m1198")


def test_the_log_holds_every_probed_shape() -> None:
    assert set(PROBES) == {*TAKEN, *KEPT}
    assert all(len(p["ms"]) >= 3 for p in PROBES.values())


@pytest.mark.parametrize("name", sorted(TAKEN))
def test_the_rule_takes_what_won(name: str) -> None:
    probe = PROBES[name]
    cfg, why = heuristic(*probe["shape"], target="cuda")
    assert cfg.SWAP_AB == 1 and TAKEN[name] in why[0], (name, why)
    ms = probe["ms"].get(cfg.short())
    assert ms is not None, (name, cfg.short(), sorted(probe["ms"]))
    assert ms * 1.03 <= probe["ms"][probe["then"]], (name, ms, probe)
    same = [v for k, v in probe["ms"].items() if k.endswith(" swap") and k != cfg.short()
            and k.split("x")[1] == str(cfg.BN)]
    assert all(ms <= v * 1.005 for v in same), (name, ms, probe)


@pytest.mark.parametrize("name", KEPT)
def test_shapes_no_candidate_won_by_3_percent_keep_their_pick(name: str) -> None:
    probe = PROBES[name]
    cfg, _ = heuristic(*probe["shape"], target="cuda")
    assert cfg.short() == probe["then"], (name, cfg.short(), probe["then"])
    if name != "m1198":  # (8 x 152 rows won there by 10%: one point, no rule)
        assert min(probe["ms"].values()) * 1.03 > probe["ms"][probe["then"]], probe


def test_the_deeper_rules_stay_in_what_was_measured() -> None:
    assert cuda_swap.rule(256, 4096, 14336) is None  # a multiple of 128 rows: not timed swapped
    assert cuda_swap.rule(261, 4096, 14336)[0].BM == 136
    assert cuda_swap.rule(300, 4096, 14336) is None  # past 272 rows at K > 8192
    assert cuda_swap.rule(78, 8192, 32768) is None  # past K = 28672
    assert cuda_swap.rule(6, 8192, 32768) is None
    assert cuda_swap.rule(31, 7168, 2048) is None  # under 32 rows (K shallow): unswapped
    assert cuda_swap.wide_rows(1037, 4096, 2048, 132) is None  # K under 3584
