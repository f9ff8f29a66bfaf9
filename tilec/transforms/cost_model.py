"""The decomposition cost model: a work split's units simulated on the SMs, in k-iterations.

One model serves the choice of a decomposition (:func:`estimate_cost`, used by
:func:`~tilec.transforms.choice.rank_decompositions` and the parameter heuristic) and the
timeline picture (``tilec viz --kind timeline`` draws :func:`simulate`'s blocks):

* a unit ``(tile, k_begin, k_end)`` costs its k-iterations, ``+SK penalty`` each inside the
  Stream-K region (:func:`sk_penalty`: worse L2 reuse), plus :data:`UNIT_OVERHEAD` (pipeline fill
  and epilogue);
* a partial unit (split-K part, Stream-K range) is followed by its fix-up: writing its fp32
  partial (half of :func:`fixup_iters`); the tile's reducer, the contributor with the tile's first
  K range (in Stream-K the CTA that reaches that tile last), also reads every contributor's
  partial back (half of :func:`fixup_iters` each); with the reduce-kernel fix-up nobody reads
  back in the GEMM kernel: a second launch (:data:`REDUCE_LAUNCH`) then reads every partial,
  spread over all SMs ("reduce" blocks after the last unit);
* CTAs start on SMs in pid order as SMs free up (one CTA per SM at a time), each running its
  units (:func:`~tilec.transforms.decompose.work_units`) back to back.

Example::

    >>> from tilec.transforms.decompose import make_work_split
    >>> ws = make_work_split("dp", M=128, N=128, K=64, BM=64, BN=64, BK=16, sms=3)
    >>> estimate_cost(ws, 3, 64, 64, 16).total  # two waves of (4 + 2) iterations
    12.0
    >>> [(b.sm, b.kind, b.start, b.end) for b in simulate(ws, 3, 64, 64, 16).blocks][-2:]
    [(1, 'idle', 6.0, 12.0), (2, 'idle', 6.0, 12.0)]
"""

from __future__ import annotations

import heapq
from collections.abc import Container
from dataclasses import dataclass, replace

from tilec.ir.types import Decomposition, Fixup
from tilec.transforms.decompose import work_units
from tilec.transforms.plan import KernelPlan
from tilec.transforms.worksplit import WorkSplit

__all__ = [
    "FIXUP_SCALE",
    "REDUCE_LAUNCH",
    "SK_L2_PENALTY",
    "SK_L2_PENALTY_WIDE",
    "UNIT_OVERHEAD",
    "Block",
    "Cost",
    "Timeline",
    "describe_model",
    "estimate_cost",
    "fixup_iters",
    "plan_cost",
    "plan_timeline",
    "simulate",
    "sk_penalty",
]

UNIT_OVERHEAD = 2.0  # pipeline fill + epilogue of one unit, in k-iterations
# the reduce kernel's launch after the GEMM kernel, in k-iterations: on the H200 the second
# kernel started ~4.5 us after the first ended, about five 128x256x64 iterations
# (bench/results/fixup_probe_r2_h200_2026-11-23.json)
REDUCE_LAUNCH = 5.0
# Stream-K iterations run at odd K offsets: worse L2 reuse (seed 001).  Calibrated on the H200:
# when Stream-K is the whole problem (no DP tiles) or its region has more tiles than CTAs, every
# CTA streams its own tiles at its own K offset from the start and the operands stop being shared
# through L2: whole-grid Stream-K ran at 0.75x DP on 1664^2 x 8192 with 128x128 tiles (a Stream-K
# iteration ~2.0x a DP one) and at 0.77x with 128x256 tiles (~1.6x)
# (bench/results/triton_h200_2026-11-21.json, "previous").  A partial last wave spread over every
# SM after DP waves costs less, but not the +15% this model assumed until 2026-11-23: on twelve
# large shapes (bench/results/explore_heuristic_r3_h200_2026-11-23.json) DP beat DP + Stream-K
# whenever the last wave was at least half full (3328^2 x 8192: 0.997x against 0.956x cuBLAS;
# 6144^2 x 2048: 1.004x / 0.941x) and lost to it below a quarter (2304^2 x 8192: 0.80x / 0.96x);
# with the reducer's reads modeled (below), a penalty anywhere in 0.4 .. 0.7 picks the measured
# best or within 0.6% of it on all eighteen measured shapes, 0.15 and 0.3 do not.
SK_L2_PENALTY = 0.5  # Stream-K region after DP tiles, fewer tiles than Stream-K CTAs
SK_L2_PENALTY_WIDE = 0.8  # whole-problem Stream-K, or more Stream-K tiles than CTAs
FIXUP_SCALE = 2.0  # measured fix-ups (atomics / workspace round trip) cost ~2x their bytes


def sk_penalty(split: WorkSplit) -> float:
    """Extra cost of one Stream-K iteration (fraction of a DP iteration) for ``split``."""
    wide = split.sk_tiles >= split.num_tiles or split.sk_tiles >= split.sk_ctas
    return SK_L2_PENALTY_WIDE if wide else SK_L2_PENALTY


def fixup_iters(BM: int, BN: int, BK: int, dtype_bytes: int = 2) -> float:
    """One partial tile's fp32 round trip (written once, read back once), in k-iterations of the
    same CTA: each contributor pays half (its write), the tile's reducer half per contributor."""
    return FIXUP_SCALE * 2 * (4 * BM * BN) / (dtype_bytes * BK * (BM + BN))


def describe_model(BM: int, BN: int, BK: int, dtype_bytes: int = 2) -> str:
    """The model's constants in one sentence (``tilec explain`` prints it)."""
    half = fixup_iters(BM, BN, BK, dtype_bytes) / 2
    return (f"model: a unit costs its k-iterations + {UNIT_OVERHEAD:g} (fill/epilogue); a partial"
            f" adds {half:.2f} (its fp32 partial out), its tile's reducer {half:.2f} per"
            f" contributor (partials read back); Stream-K"
            f" iterations cost +{100 * SK_L2_PENALTY:.0f}% (L2 reuse),"
            f" +{100 * SK_L2_PENALTY_WIDE:.0f}% when Stream-K is the whole problem or has more"
            f" tiles than CTAs")


@dataclass(frozen=True)
class Block:
    """A span of one SM's time, in k-iterations.

    ``kind``: "dp" (a whole tile), "splitk" (a split-K part), "streamk" (a Stream-K range), each
    lasting its modeled cost; "fixup" (the partial's fix-up after it); "reduce" (the reduce
    kernel's launch and share of the partials, after the GEMM kernel); "idle" (the SM's tail
    until the last SM finishes).
    """

    sm: int
    cta: int
    kind: str
    start: float
    end: float
    tile: int | None = None
    k_begin: int | None = None
    k_end: int | None = None


@dataclass(frozen=True)
class Timeline:
    """Every SM's blocks; ``fixup`` and ``overhead`` are the model's per-unit constants."""

    sms: int
    k_iters: int
    fixup: float
    overhead: float
    penalty: float  # extra cost of a Stream-K iteration
    blocks: tuple[Block, ...]

    @property
    def makespan(self) -> float:
        return max((b.end for b in self.blocks), default=0.0)

    def busy(self) -> float:
        return sum(b.end - b.start for b in self.blocks if b.kind != "idle")

    def units(self) -> list[Block]:
        """The work blocks (not fix-ups, not idle tails)."""
        return [b for b in self.blocks if b.kind in ("dp", "splitk", "streamk")]


@dataclass(frozen=True)
class Cost:
    """Modeled time of one split, in k-iteration units of one CTA (1 CTA per SM)."""

    total: float  # critical path: when the last SM finishes
    busy: float  # summed work of all CTAs
    partial_units: int
    units: int

    @property
    def utilisation(self) -> float:
        return self.busy / self.total if self.total else 1.0


def simulate(split: WorkSplit, sms: int, BM: int, BN: int, BK: int, *, dtype_bytes: int = 2,
             alive: Container[int] | None = None) -> Timeline:
    """The units of ``split`` on ``sms`` SMs (see the module docstring); ``alive`` leaves out the
    linear indices a padded tile order skips."""
    k_iters = split.k_iters
    fix = fixup_iters(BM, BN, BK, dtype_bytes)
    sk_start, sk_end = split.sk_start, split.sk_end
    pen = sk_penalty(split) if sk_end > sk_start else 0.0
    split_k = split.kind is Decomposition.SPLIT_K
    second_kernel = split.fixup is Fixup.REDUCE_KERNEL
    per_cta = work_units(split, alive)
    # the partial tiles' contributors, and which one sums them: the one with the tile's first K
    # range (Stream-K's CTA that starts a tile does so at the end of its range: it finishes last)
    parts: dict[int, list[int]] = {}
    for units in per_cta:
        for t, kb, ke in units:
            if ke - kb != k_iters:
                parts.setdefault(t, []).append(kb)
    reducer = {t: min(kbs) for t, kbs in parts.items()}
    blocks: list[Block] = []
    free = [(0.0, sm) for sm in range(min(sms, len(per_cta)))]
    heapq.heapify(free)
    for cta, units in enumerate(per_cta):
        now, sm = heapq.heappop(free)
        for t, kb, ke in units:
            n = ke - kb
            sk = sk_start <= t < sk_end
            kind = "streamk" if sk else ("splitk" if split_k and n != k_iters else "dp")
            end = now + n * (1 + (pen if sk else 0.0)) + UNIT_OVERHEAD
            blocks.append(Block(sm, cta, kind, now, end, t, kb, ke))
            now = end
            if n != k_iters:
                # its partial out; the reducer also reads every contributor's partial back
                reads = len(parts[t]) if reducer[t] == kb and not second_kernel else 0
                cost = fix / 2 * (1 + reads)
                blocks.append(Block(sm, cta, "fixup", now, now + cost, t, kb, ke))
                now += cost
        heapq.heappush(free, (now, sm))
    makespan = max((b.end for b in blocks), default=0.0)
    if second_kernel and parts:
        # every partial read once, all SMs sharing the reads, after the GEMM kernel ends
        n_sm = len(free)
        reduce = REDUCE_LAUNCH + sum(map(len, parts.values())) * fix / 2 / n_sm
        blocks += [Block(sm, -1, "reduce", makespan, makespan + reduce) for sm in range(n_sm)]
        free = [(makespan + reduce, sm) for sm in range(n_sm)]
        makespan += reduce
    for now, sm in sorted(free, key=lambda x: x[1]):
        if now < makespan:
            blocks.append(Block(sm, -1, "idle", now, makespan))
    return Timeline(len(free), k_iters, fix, UNIT_OVERHEAD, pen, tuple(blocks))


def estimate_cost(split: WorkSplit, sms: int, BM: int, BN: int, BK: int, *,
                  dtype_bytes: int = 2, alive: Container[int] | None = None) -> Cost:
    """The critical path and utilisation of :func:`simulate`'s timeline.

    >>> from tilec.transforms.decompose import make_work_split
    >>> ws = make_work_split("splitk", M=64, N=64, K=256, BM=64, BN=64, BK=16, sms=4, splits=4)
    >>> c = estimate_cost(ws, 4, 64, 64, 16)
    >>> half = fixup_iters(64, 64, 16) / 2  # the reducer writes its partial, reads all four
    >>> c.total == 4 + UNIT_OVERHEAD + half * (1 + 4), c.partial_units
    (True, 4)
    """
    return _cost(simulate(split, sms, BM, BN, BK, dtype_bytes=dtype_bytes, alive=alive),
                 split.k_iters)


def plan_timeline(plan: KernelPlan, sms: int) -> Timeline:
    """:func:`simulate` of the plan's split, on its tile and dtype, skipping padded indices.

    A split over groups of CTAs (``work.group`` > 1: CUDA clusters that keep one K range) is
    simulated per cluster: its workers are the clusters, on ``sms // group`` slots, and a block
    is one cluster's unit (``group`` tiles side by side).
    """
    w, alive = plan.work, plan.order.alive_tiles()
    if w.group > 1:
        w = replace(w, grid=w.grid // w.group)
        sms = max(sms // plan.work.group, 1)
        alive = {t // plan.work.group for t in alive}
    return simulate(w, sms, plan.BM, plan.BN, plan.BK, dtype_bytes=plan.dtype.nbytes,
                    alive=alive)


def plan_cost(plan: KernelPlan, sms: int) -> Cost:
    """:func:`estimate_cost` of the plan, as :func:`plan_timeline` simulates it."""
    return _cost(plan_timeline(plan, sms), plan.work.k_iters)


def _cost(tl: Timeline, k_iters: int) -> Cost:
    units = tl.units()
    partial = sum(1 for b in units if b.k_end - b.k_begin != k_iters)  # type: ignore[operator]
    return Cost(total=tl.makespan, busy=tl.busy(), partial_units=partial, units=len(units))
