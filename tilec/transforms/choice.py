"""The choice of a work decomposition: every candidate the shape calls for, scored by the cost model
(:mod:`tilec.transforms.cost_model`), fastest first, and the reasons with their numbers
(``decompose("auto")``, the parameter heuristic, ``tilec explain``).

Example::

    >>> split, why = choose_decomposition(256, 256, 4096, 128, 128, 64, 8)
    >>> split.kind.value, split.splits
    ('splitk', 2)
"""

from __future__ import annotations

from tilec.ir import ceil_div
from tilec.ir.types import Decomposition, Fixup
from tilec.transforms.cost_model import Cost, describe_model, estimate_cost
from tilec.transforms.decompose import check_positive, make_work_split
from tilec.transforms.worksplit import WorkSplit

__all__ = ["choose_decomposition", "rank_decompositions"]


def _candidates(
    M: int, N: int, K: int, BM: int, BN: int, BK: int, sms: int, fixup: Fixup
) -> list[tuple[str, WorkSplit]]:
    kw = dict(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms, fixup=fixup)
    k_iters = ceil_div(K, BK)
    tiles = ceil_div(M, BM) * ceil_div(N, BN)
    out = [("data-parallel", make_work_split(Decomposition.DATA_PARALLEL, **kw))]  # type: ignore[arg-type]
    # split-K parts in one wave, except with the reduce kernel (no CTA waits for another's
    # partial there): a deterministic fix-up's reducer waits for its tile's other parts, and parts
    # in a second wave made it wait a whole wave (H200, bench/results/
    # explore_s11_set2_h200_2026-11-28.json: 48x4608x3584 64x64 tiles (72) split-K 2 and 3 ran
    # 0.68x cuBLAS against 0.94x data-parallel; 1408x1920x16384 128x256 (88 tiles) split-K 2 0.62x
    # against Stream-K++ 0.85x; explore_heuristic_h200_2026-11-23.json: 1024^2 x 32768 128x128 (64)
    # split-K 3 0.72x against split-K 2 0.93x)
    one_wave = 2 * sms if fixup is Fixup.REDUCE_KERNEL else sms
    if tiles < sms:
        for s in range(2, min(k_iters, 32) + 1):
            if tiles * s <= one_wave:
                out.append(
                    (f"split-K S={s}", make_work_split(Decomposition.SPLIT_K, splits=s, **kw))  # type: ignore[arg-type]
                )
    if tiles % sms:
        seen: set[tuple[int, bool]] = set()  # (sk_tiles, region at the start)

        def add(name: str, split: WorkSplit) -> None:
            # hybrids that cut the same Stream-K region run the same units: keep the first
            key = (split.sk_tiles, split.sk_first or split.sk_tiles == tiles)
            if key not in seen:
                seen.add(key)
                out.append((name, split))

        if tiles < sms:
            add("Stream-K", make_work_split(Decomposition.STREAM_K, **kw))  # type: ignore[arg-type]
        add("DP + 1 Stream-K wave", make_work_split(Decomposition.DP_ONE_SK_WAVE, **kw))  # type: ignore[arg-type]
        if tiles > sms:  # only the partial last wave in Stream-K, however small it is
            add("DP + Stream-K on the last partial wave",
                make_work_split(Decomposition.STREAM_K_PP, sk_waves=1, **kw))  # type: ignore[arg-type]
        add("two-tile Stream-K + DP", make_work_split(Decomposition.TWO_TILE_SK_DP, **kw))  # type: ignore[arg-type]
        for w in (2, 3):
            if w * sms < tiles:
                add(f"Stream-K++ {w} waves",
                    make_work_split(Decomposition.STREAM_K_PP, sk_waves=w, **kw))  # type: ignore[arg-type]
    return out


def rank_decompositions(
    M: int, N: int, K: int, BM: int, BN: int, BK: int, sms: int, *,
    fixup: Fixup = Fixup.DETERMINISTIC,
) -> list[tuple[float, int, str, WorkSplit, Cost]]:  # fmt: skip
    """Every candidate decomposition with its modeled cost, fastest first (ties: DP first).

    >>> [name for _, _, name, _, _ in rank_decompositions(512, 512, 65536, 128, 128, 64, 132)][:2]
    ['split-K S=8', 'split-K S=7']
    """
    check_positive(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms)
    scored: list[tuple[float, int, str, WorkSplit, Cost]] = []
    for name, split in _candidates(M, N, K, BM, BN, BK, sms, fixup):
        cost = estimate_cost(split, sms, BM, BN, BK)
        scored.append((cost.total, len(scored), name, split, cost))
    return sorted(scored, key=lambda x: (x[0], x[1]))


def choose_decomposition(
    M: int,
    N: int,
    K: int,
    BM: int,
    BN: int,
    BK: int,
    sms: int,
    *,
    fixup: Fixup = Fixup.DETERMINISTIC,
) -> tuple[WorkSplit, list[str]]:
    """Pick the decomposition with the least modeled time; say why, with the numbers.

    >>> split, why = choose_decomposition(512, 512, 65536, 128, 128, 64, 132)
    >>> split.kind.value, split.splits
    ('splitk', 8)
    >>> why[0]
    'tiles: 4 x 4 = 16 of 128x128; k_iters: 1024 of BK=64; SMs: 132'
    """
    check_positive(M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms)
    tm, tn, k_iters = ceil_div(M, BM), ceil_div(N, BN), ceil_div(K, BK)
    tiles = tm * tn
    reasons = [f"tiles: {tm} x {tn} = {tiles} of {BM}x{BN}; k_iters: {k_iters} of BK={BK}; SMs: {sms}"]
    full, rem = divmod(tiles, sms)
    reasons.append(
        f"data-parallel waves: {tiles / sms:.2f} ({full} full, last wave {rem}/{sms} SMs busy"
        f" = {100 * (rem or sms) / sms:.0f}%)"
    )
    reasons.append(describe_model(BM, BN, BK))
    scored = rank_decompositions(M, N, K, BM, BN, BK, sms, fixup=fixup)
    best = scored[0]
    dp_total = next(total for total, _, _, split, _ in scored
                    if split.kind is Decomposition.DATA_PARALLEL)
    for total, _, name, _split, cost in scored[:6]:
        reasons.append(
            f"  {name}: critical path {total:.1f} iters ({dp_total / total:.2f}x DP),"
            f" {cost.units} units, {cost.partial_units} partial, utilisation"
            f" {100 * cost.utilisation / sms:.0f}%"
        )
    _, _, name, split, _ = best
    if split.kind is Decomposition.DATA_PARALLEL:
        reasons.append("chosen: data-parallel (no fix-up needed)")
    else:
        reasons.append(
            f"chosen: {name}, {dp_total / best[0]:.2f}x faster than data-parallel by the model;"
            f" fix-up {split.fixup.value}"
        )
    return split, reasons
