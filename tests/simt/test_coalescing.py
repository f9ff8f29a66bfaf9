"""Coalescing verdicts: the seed's two mappings, and random schedules against brute force."""

from __future__ import annotations

import itertools
import random

import pytest
import sympy
from simt_helpers import load, warp_sectors

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P
from tilec.transforms.simt.coalescing import Pattern, analyze, explain_coalescing, warps
from tilec.transforms.simt.lower import lower_simt


def by_tensor(reports):  # type: ignore[no-untyped-def]
    return {r.tensor: r for r in reports}


def test_seed_naive_is_strided_for_a_and_c_broadcast_for_b() -> None:
    r = by_tensor(analyze(load("coalescing_naive.py", M=1024, N=512, K=256)))
    assert r["A"].pattern is Pattern.STRIDED and r["A"].stride == 256  # K
    assert r["C"].pattern is Pattern.STRIDED and r["C"].stride == 512  # N
    assert r["B"].pattern is Pattern.BROADCAST and r["B"].stride == 0
    assert (r["A"].sectors, r["B"].sectors, r["C"].sectors) == (32, 1, 32)
    assert r["A"].verdict == "uncoalesced" and r["B"].verdict == "broadcast"


@pytest.mark.parametrize("two_d", [False, True])
def test_seed_coalesced_is_broadcast_for_a_contiguous_for_b_and_c(two_d: bool) -> None:
    r = by_tensor(analyze(load("coalescing_coalesced.py", M=256, N=256, K=128, TRANSPOSED_2D=two_d)))
    assert r["A"].pattern is Pattern.BROADCAST and r["A"].sectors == 1
    for t in "BC":
        assert r[t].pattern is Pattern.CONTIGUOUS and r[t].stride == 1
        assert r[t].sectors == r[t].sectors_min == 4 and r[t].verdict == "coalesced"
    # the stride was proven symbolically (theorem 2.5 on the lane index) for the 1-D block
    if not two_d:
        assert any("2.5" in line for line in r["B"].proof)


def test_explain_prints_a_verdict_per_access() -> None:
    text = explain_coalescing(load("coalescing_naive.py", M=256, N=256, K=64))
    rows = [line for line in text.splitlines() if line.startswith("  ") and "sector" in line]
    assert len(rows) == 3
    assert "A load" in rows[0] and "uncoalesced" in rows[0]
    assert "B load" in rows[1] and "broadcast" in rows[1]


def test_unaligned_rows_give_a_sector_range() -> None:
    # N = 100: rows of B start at 400-byte offsets, so a warp's 128 bytes span 4 or 5 sectors
    r = by_tensor(analyze(load("coalescing_coalesced.py", M=64, N=100, K=36)))
    assert r["B"].pattern is Pattern.CONTIGUOUS
    assert (r["B"].sectors_min, r["B"].sectors) == (4, 5)


def test_warp_families() -> None:
    (w,) = warps((16, 16, 1))  # a warp spans two rows of 16
    assert len(w.lanes) == 32 and int(w.lanes[17][sympy.Symbol("tidx", integer=True, nonnegative=True)]) == 1
    assert len(warps((48, 2, 1))) == 3  # irregular: every warp enumerated


# -- random schedules against brute force --------------------------------------------------------


def random_schedule(rng: random.Random) -> GemmFusion:
    M, N = rng.choice([64, 96, 100, 128]), rng.choice([64, 80, 96, 128, 132])
    K = rng.choice([32, 36, 64])
    BM, BN = rng.choice([8, 16, 32]), rng.choice([4, 8, 16, 32, 48])
    TM, TN = rng.choice([1, 2, 4]), rng.choice([1, 2, 4])
    f = GemmFusion(M, N, K, dtype="fp32")
    c = f.c
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni"))
    axes = ["Mo", "Mi", "No", "Ni", "K"]
    if TM > 1:
        c.split(1, TM, names=("Mt", "Mr"))
        axes[1:2] = ["Mt", "Mr"]
    if TN > 1:
        p = axes.index("Ni")
        c.split(p, TN, names=("Nt", "Nr"))
        axes[p:p + 1] = ["Nt", "Nr"]
    if rng.random() < 0.5:
        c.split(axes.index("K"), rng.choice([4, 8]), names=("Ko", "Ki"))
        axes[axes.index("K"):axes.index("K") + 1] = ["Ko", "Ki"]
    mt = "Mt" if TM > 1 else "Mi"
    nt = "Nt" if TN > 1 else "Ni"
    order = ["Mo", "No", mt, nt] + [a for a in axes if a.startswith("K")] + \
        [a for a in ("Mr", "Nr") if a in axes]
    if rng.random() < 0.5:
        order[2], order[3] = order[3], order[2]
    c.reorder([axes.index(a) for a in order])
    grid = [P.BIDx, P.BIDy]
    rng.shuffle(grid)
    c.parallelize(0, grid[0]).parallelize(1, grid[1])
    if rng.random() < 0.5:
        c.merge(2)
        c.parallelize(2, P.TIDx)
    else:
        c.parallelize(2, P.TIDy).parallelize(3, P.TIDx)
    if order[-1] == "Nr" and TN in (2, 4) and rng.random() < 0.6:
        c.parallelize(c.ndim - 1, P.Vectorize)
    f.propagate()
    return f


@pytest.mark.parametrize("seed", range(16))
def test_random_schedules_agree_with_brute_force_sector_counts(seed: int) -> None:
    rng = random.Random(seed)
    f = random_schedule(rng)
    plan = lower_simt(f)
    reports = analyze(plan, prove=seed % 4 == 0)  # the proof must agree with the lane offsets
    bounds = plan.access_bounds()
    nwarps = -(-plan.threads // 32)
    full = [w for w in range(nwarps) if 32 * (w + 1) <= plan.threads] or [0]
    for acc, rep in zip(plan.global_accesses(), reports, strict=True):
        assert rep.sectors is not None, rep
        seen = set()
        for _ in range(6):
            point = {s: rng.randrange(int(b)) for s, b in bounds.items()}
            w = rng.choice(full)
            n, addrs = warp_sectors(acc.index, acc.width, plan.block, w, point)
            seen.add(n)
            assert rep.sectors_min <= n <= rep.sectors, (seed, acc.tensor, n, rep)
            if rep.offsets is not None and len(addrs) == len(rep.offsets):
                assert tuple(a - addrs[0] for a in addrs) == rep.offsets
            if rep.pattern is Pattern.BROADCAST:
                assert len(set(addrs)) == 1
            if rep.pattern in (Pattern.CONTIGUOUS, Pattern.STRIDED):
                steps = {b - a for a, b in itertools.pairwise(addrs)}
                assert steps == {int(rep.stride)}
        if rep.sectors == rep.sectors_min:
            assert seen == {rep.sectors}
