"""The SIMT cost model (tilec.transforms.simt.cost): its constants are the fit of the committed
measurements, a fit without some shapes predicts and ranks them as measured, its wave count
matches a simulation of the block scheduler, and CONFIG="auto" follows it."""

from __future__ import annotations

import math
import random
import sys
from dataclasses import replace
from importlib import import_module
from types import ModuleType

import pytest

from tilec.transforms.simt import cost
from tilec.transforms.simt.cost import CARDS, DEFAULT, Row, calibrate, estimate, measurements

LARGE = Row("large", 128, 128, 32, warps=8, ctas=2)


def _err(p: cost.Point, c: cost.Constants) -> float:
    return math.log(cost.point_estimate(p, c) / p.seconds)


def test_default_is_the_fit_of_the_committed_measurements() -> None:
    pts = measurements()
    assert len(pts) >= 200 and {p.card.name for p in pts} == {"H100", "H200"}
    assert {p.row.name for p in pts} == {r.name for r in cost.KNOWN}
    start = cost.Constants(rate={r.name: 3e11 for r in cost.KNOWN}, exposed=0.2)
    fit = calibrate(pts, start=start, iters=200)
    for key in cost._FIT:
        assert cost._get(fit, key) == pytest.approx(cost._get(DEFAULT, key), rel=0.03), key
    # left out of the fit: a small16 CTA alone on its SM (4 warps run faster than half the rate)
    out = cost.outliers(pts)
    assert len(out) <= 2 and {p.row.name for p in out} <= {"small8", "small16"}
    errs = sorted(abs(_err(p, DEFAULT)) for p in pts if p not in out)
    assert errs[len(errs) // 2] < 0.01  # median 1% (run-to-run noise, an exploration's 4 rounds)
    assert errs[int(0.95 * len(errs))] < 0.04
    big = sorted(abs(_err(p, DEFAULT)) for p in pts if p not in out and p.row.name != "small16")
    assert big[-1] < 0.07  # worst 7%: a 128x64 tile at 512x512x16384, 16 k-iterations per front


HELD_OUT = {(5120, 5120, 5120), (6144, 6144, 6144), (5120, 3072, 2048), (3000, 5000, 700),
            (512, 512, 16384), (2048, 8192, 1024), (128, 4096, 7168)}


def test_a_fit_without_some_shapes_predicts_and_ranks_them() -> None:
    pts = measurements()
    train = [p for p in pts if p.shape not in HELD_OUT]
    test = [p for p in pts if p.shape in HELD_OUT]
    assert len(test) >= 30
    c = calibrate(train)
    # the held-out times (the small16 row's SM sharing aside): median within 2%, each within
    # 8% (the worst: 128x64 tiles at 512x512x16384, 64 tiles on 396 slots)
    errs = sorted((abs(_err(p, c)), p.kernel, p.shape) for p in test if p.row.name != "small16")
    assert errs[len(errs) // 2][0] < 0.02 and errs[-1][0] < 0.08, errs[-3:]
    # dp_ft against one CTA per tile at the held-out squares: the measured order (gaps > 1.5%)
    for s in (5120, 6144):
        by = {p.decomp: p for p in test if p.M == p.N == p.K == s and p.kernel in ("warp", "dp")}
        assert by["dp"].seconds > 1.015 * by["dp_ft"].seconds
        assert estimate(LARGE, "dp", s, s, s, CARDS["H200"], c=c) > \
            estimate(LARGE, "dp_ft", s, s, s, CARDS["H200"], c=c)
    # the held-out H100 shapes' GFLOP/s in the measured order where they differ by more than 2%
    h100 = [p for p in test if p.card.name == "H100"]
    rate = {p: p.M * p.N * p.K / p.seconds for p in h100}
    pred = {p: p.M * p.N * p.K / estimate(p.row, p.decomp, p.M, p.N, p.K, p.card, p.variant, c)
            for p in h100}
    pairs = [(a, b) for a in h100 for b in h100 if rate[a] > 1.02 * rate[b]]
    assert len(pairs) >= 4
    for a, b in pairs:
        assert pred[a] > pred[b], ((a.M, a.N, a.K), (b.M, b.N, b.K))


def _simulate_dp(row: Row, M: int, N: int, K: int, sms: int) -> float:
    """One CTA per tile through a block scheduler: CTAs in order to the SM with the fewest
    resident (at most ``row.ctas``), a wave's SMs all finishing together (equal tiles)."""
    c = DEFAULT
    w = 2.0 * row.BM * row.BN * (-(-K // row.BK) * row.BK + c.overhead_k)
    R = c.rate_of(row.name)
    left = -(-M // row.BM) * -(-N // row.BN)
    t = 0.0
    while left:
        resident = [0] * sms
        for _ in range(min(left, sms * row.ctas)):
            resident[resident.index(min(resident))] += 1
        left -= sum(resident)
        t += max(n * w / (R * min(1.0, n * row.warps / cost.SAT)) for n in resident if n)
    return t


@pytest.mark.parametrize("seed", range(4))
def test_waves_match_a_simulated_block_scheduler(seed: int) -> None:
    rng = random.Random(seed)
    for _ in range(25):
        row = rng.choice(list(cost.ROWS.values()))
        M, N, K = rng.randint(1, 9000), rng.randint(1, 9000), rng.randint(1, 3000)
        sim = _simulate_dp(row, M, N, K, 132)
        got = estimate(row, "dp", M, N, K, CARDS["H200"], c=replace(DEFAULT, launch=0.0, exposed=0.0))
        floor = 4.0 * (M * K + K * N + M * N) / (4.8e12 * DEFAULT.dram_efficiency)
        assert got == pytest.approx(max(sim, floor))


def _example() -> ModuleType:
    from simt_helpers import EXAMPLES

    sys.path.insert(0, str(EXAMPLES))
    try:
        return import_module("simt_warp_tiled")
    finally:
        sys.path.remove(str(EXAMPLES))


def test_auto_follows_the_model() -> None:
    ex = _example()
    every = ex.rows(fitted=False)
    assert [r.name for r in every] == list(ex.CONFIGS)
    assert [(r.name, r.BM, r.BN, r.BK, r.warps, r.ctas) for r in every][:3] == [
        ("large", 128, 128, 32, 8, 2), ("small8", 64, 64, 8, 2, 7), ("small16", 64, 64, 16, 4, 5)]
    for r in every:  # the example's rows are the model's known rows (the bench maps kernels by them)
        assert cost.row_of(r.BM, r.BN, r.BK, 32 * r.warps, r.ctas, (r.WM, r.WN), r.stages) == r
    rows = ex.rows()
    assert {r.name for r in rows} == set(DEFAULT.rate)  # auto weighs the rows with a fitted rate
    for shape in [(4096,) * 3, (5120,) * 3, (7000, 3000, 4096), (512, 512, 16384), (300, 200, 64),
                  (8192, 2048, 1024), (2048, 50257, 768), (1, 1, 1)]:
        name, decomp, splits = ex.choice(*shape)
        best = min(cost.choices(*shape, rows))
        assert (name, decomp, splits) == best[1:], shape
        assert ex.decomposition(name, *shape) == (decomp, splits)
        fusion = ex.schedule(*shape)  # the schedule takes that split
        d = fusion.decomposition
        assert (d.kind.value if d is not None and d.kind is not None else "dp") == decomp, shape
    # the default launch (tests/golden): the large row, its last wave spread
    assert ex.choice(4096, 4096, 4096) == ("large", "dp_ft", 1)
    # one tile row of 32 tiles with a long K: spread over the slots, not 32 CTAs alone
    assert ex.decomposition("large", 128, 4096, 7168) == ("dp_ft", 1)
    # whole waves: one CTA per tile (nothing to spread)
    assert ex.decomposition("large", 128 * 66, 128 * 4, 4096) == ("dp", 1)


def test_calibrate_recovers_known_constants() -> None:
    """Points made by the model from chosen constants (the committed points' rows, splits,
    variants, paddings and shapes, plus shapes that separate the constants: small and deep K,
    Stream-K splits), fitted from a start 30% off: the chosen constants come back."""
    rates = {r.name: (3.1e11 + 1.3e10 * i) for i, r in enumerate(cost.KNOWN)}
    truth = cost.Constants(rate=rates,
                           overhead_k=40.0, ft=0.08, ft_fixed=8e-6, launch=6e-6,
                           variant={"tiles": 1.0, "aligned": 1.05, "general": 1.3},
                           dram_efficiency=0.7, exposed=0.3, sk=0.12)
    pts = measurements()
    rows = {p.row.name: p.row for p in pts}
    extra = [cost.Point("synthetic", "k", r, d, "tiles", s, s * n, k, CARDS["H100"], 0.0)
             for r in rows.values() for s in (512, 2048, 3000) for k in (64, 1024)
             for n, d in ((1, "dp"), (9, "dp_1sk"), (3, "streamk"))]
    synth = [replace(p, file="synthetic", seconds=cost.point_estimate(p, truth)) for p in pts + extra]
    start = cost._with(truth, [cost._get(truth, k) * (1.3 if i % 2 else 0.7)
                               for i, k in enumerate(cost._FIT)])
    fit = calibrate(synth, start=start, iters=200, trim=None)
    for key in cost._FIT:
        assert cost._get(fit, key) == pytest.approx(cost._get(truth, key), rel=0.01), key


def test_the_pick_is_the_measured_best() -> None:
    """Wherever a committed run timed several of the choices ``auto`` weighs at one shape
    (alternated with cuBLAS in one run, launched through the launcher's padding), the model's
    pick among them is the one measured fastest, or within 2% of it; where the run timed every
    choice ``auto`` weighs (the exploration of issue 30's 17 shapes), ``auto``'s own pick is
    one of them and within 2% of the fastest."""
    ex = _example()
    rows = ex.rows()
    offered = {(r.name, d, s) for r in rows for d, s in cost.OFFERED.get(r.name, (("dp", 1),))}
    runs: dict[tuple[str, tuple[int, ...]], dict[tuple[str, str, int], cost.Point]] = {}
    for p in measurements():
        key = (p.row.name, p.decomp, p.splits)
        if key in offered and p.pad == "auto":
            runs.setdefault((p.file, p.shape), {})[key] = p
    checked = every = 0
    for (file, shape), by in runs.items():
        if len(by) < 2:
            continue
        checked += 1
        best = min(by.values(), key=lambda p: p.seconds)
        pick = min(by.values(), key=lambda p: cost.point_estimate(p))
        assert pick.seconds <= 1.02 * best.seconds, (file, shape, pick.kernel, best.kernel)
        if len(by) >= len(offered) - 1:  # all but small8 (not timed off the squares)
            every += 1
            M, N, K = shape
            name, decomp, splits = cost.pick(M, N, K, rows, best.card)
            assert (name, decomp, splits) in by, (shape, name, decomp)
            assert by[name, decomp, splits].seconds <= 1.02 * best.seconds, (shape, name, decomp)
    assert checked >= 20 and every >= 17
