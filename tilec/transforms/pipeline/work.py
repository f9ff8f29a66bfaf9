"""The decomposition pass: the schedule's ``decompose(...)`` choice as a
:class:`~tilec.transforms.plan.WorkSplit` over the order's tiles, and
:func:`cluster_work_split`, the same split over clusters (CUDA, run by ``legalize``)."""

from __future__ import annotations

from dataclasses import replace

import sympy

from tilec.errors import UnsupportedError
from tilec.ir import GemmFusion
from tilec.transforms.choice import choose_decomposition
from tilec.transforms.decompose import make_work_split, over_clusters
from tilec.transforms.pipeline.state import Lowering
from tilec.transforms.plan import Decomposition, SplitRule, WorkSplit


def decomposition(s: Lowering) -> Lowering:
    """The work split of the schedule's ``decompose(...)`` choice over the order's tiles.

    Data-parallel: the schedule's CTAs walk the linear tiles (``grid = min(num_ctas,
    num_tiles)``). Split-K: one CTA per (tile, K part), or on a persistent schedule ``grid =
    min(num_ctas, units)`` CTAs walking the units. The Stream-K family spreads its region over
    ``sms`` CTAs (``decompose(sms=...)``, default the schedule's grid). ``auto`` asks the cost
    model (:func:`~tilec.transforms.choice.choose_decomposition`) and notes why.

    before (examples/split_k.py, M = N = 256, K = 1024, SPLITS = 4)::

        order: t -> (floor(t/2), Mod(t, 2)), 4 indices over 2 x 2 tiles, 4 CTAs

    after::

        order: t -> (floor(t/2), Mod(t, 2)), 4 indices over 2 x 2 tiles, 4 CTAs
        work: splitk, grid 16, splits 4, fix-up atomic

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.pipeline import Target, tile_axes, tile_order
    >>> f = load_schedule("examples/stream_k.py", dict(M=384, N=384, SMS=4)).fusion
    >>> s = decomposition(tile_order(tile_axes(Lowering(f, Target.TRITON))))
    >>> print(s.summary().splitlines()[-1])
    work: streamk, grid 4, Stream-K tiles [0, 9) over 4 CTAs, fix-up deterministic
    """
    assert s.tile is not None and s.order is not None
    M, N, K = s.sizes
    BM, BN, BK = s.tile
    num_tiles, num_ctas = int(s.order.concrete().num_tiles), s.num_ctas
    d = s.fusion.decomposition
    sms = d.sms or num_ctas

    def split(kind: Decomposition, **extra: int) -> WorkSplit:
        return make_work_split(kind, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms,
                               num_tiles=num_tiles, fixup=d.fixup, **extra)

    why: list[str] = []
    if d.kind is None:
        chosen, why = choose_decomposition(M, N, K, BM, BN, BK, sms, fixup=d.fixup)
        kind, splits, sk_waves = chosen.kind, chosen.splits, chosen.sk_waves or 1
    else:
        kind, splits, sk_waves = d.kind, d.splits, d.sk_waves
    if kind is Decomposition.DP_FRONT_TAIL:
        raise UnsupportedError(
            f"{s.target.value}: decomposition dp_ft (front/tail) is printed by the SIMT printer "
            f"only (tilec gen --target cuda of a thread-level fp32 schedule); use dp_1sk here")
    if kind is Decomposition.DATA_PARALLEL:
        work = split(kind, grid=min(num_ctas, num_tiles))
        why = why or [f"data-parallel: the schedule's grid of {num_ctas} CTAs walks {num_tiles} "
                      f"linear tiles"]
    elif kind is Decomposition.SPLIT_K:
        # the kernel serves every K: where this one has fewer k-iterations than parts, each
        # launch cuts K into at most k_iters parts (SplitRule.at), this one too
        if splits < 1:
            raise UnsupportedError(f"split-K: SPLITS must be at least 1 but got {splits}")
        units = num_tiles * min(splits, -(-K // BK))
        work = split(kind, splits=min(splits, -(-K // BK)),
                     grid=min(num_ctas, units) if s.persistent else units)
    else:
        work = split(kind, sk_waves=sk_waves)
    if d.kind is not None and kind is not Decomposition.DATA_PARALLEL:
        why = [f"{kind.value} chosen by the schedule (fusion.decompose)"]
    rule = SplitRule(kind, ctas=num_ctas if s.persistent else 0, sms=sms, BM=BM, BN=BN, BK=BK,
                     num_tiles=sympy.sympify(s.order.num_tiles), splits=splits,
                     sk_waves=sk_waves, fixup=work.fixup)
    return replace(s, work=work, split=rule, notes=(*s.notes, *why))


def cluster_work_split(fusion: GemmFusion, work: WorkSplit, K: int, BK: int, num_ctas: int,
                        num_tiles: int, cluster: int) -> tuple[WorkSplit, list[str]]:
    """CUDA with clusters: the same decomposition, over groups of ``cluster`` consecutive linear
    tiles and clusters of CTAs, so every CTA of a cluster runs one K range (multicast shares each
    stage between them).  Data-parallel needs no change: a cluster's CTAs walk one group a round.
    """
    if cluster == 1:
        return work, []
    d = fusion.decomposition
    split = over_clusters(work, d.sms or num_ctas, cluster)
    if work.kind is Decomposition.DATA_PARALLEL:
        if split.grid == work.grid:
            return work, []
        # fewer tiles than CTAs and not a whole number of clusters: round the grid up to whole
        # clusters; the extra CTAs' tiles are past NUM_TILES, so they are dead (no loads, no
        # stores) and their cluster runs the all-cluster release with alive masks
        return split, [
            f"cuda: grid {work.grid} rounded up to {split.grid}, whole clusters of {cluster} (the "
            f"last {split.grid - work.grid} CTA(s) dead)"]
    return split, [f"cuda: {work.kind.value} over {split.num_tiles} groups of {cluster} tiles and "
                   f"{split.grid // cluster} clusters: every CTA of a cluster keeps the same K "
                   f"range"]
