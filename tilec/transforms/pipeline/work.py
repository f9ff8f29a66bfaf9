"""The work passes: :func:`decomposition` (the schedule's ``decompose(...)`` choice as a
:class:`~tilec.transforms.plan.WorkSplit` over the order's tiles) and :func:`cluster_split` (the
cluster launched, and the same split over clusters: CUDA)."""

from __future__ import annotations

from dataclasses import replace

import sympy

from tilec.errors import UnsupportedError
from tilec.ir import ceil_div
from tilec.ir.types import Target
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
    >>> from tilec.transforms.pipeline import tile_axes, tile_order
    >>> f = load_schedule("examples/stream_k.py", dict(M=384, N=384, SMS=4)).fusion
    >>> s = decomposition(tile_order(tile_axes(Lowering(f))))
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
        units = num_tiles * min(splits, ceil_div(K, BK))
        work = split(kind, splits=min(splits, ceil_div(K, BK)),
                     grid=min(num_ctas, units) if s.persistent else units)
    else:
        work = split(kind, sk_waves=sk_waves)
    if d.kind is not None and kind is not Decomposition.DATA_PARALLEL:
        why = [f"{kind.value} chosen by the schedule (fusion.decompose)"]
    rule = SplitRule(kind, ctas=num_ctas if s.persistent else 0, sms=sms, BM=BM, BN=BN, BK=BK,
                     num_tiles=sympy.sympify(s.order.num_tiles), splits=splits,
                     sk_waves=sk_waves, fixup=work.fixup)
    return replace(s, work=work, split=rule, notes=(*s.notes, *why))


def cluster_split(s: Lowering) -> Lowering:
    """The cluster launched, and the work split over it.

    Triton launches no cluster (it issues no multicast): the schedule's tile order is kept and
    each CTA loads its own tiles (noted). CUDA with clusters of more than one CTA: the same
    decomposition over groups of ``cluster`` consecutive linear tiles and clusters of CTAs, so
    every CTA of a cluster runs one K range (multicast shares each stage between them);
    data-parallel needs no change (a cluster's CTAs walk one group a round) unless its grid
    is rounded up to whole clusters.

    before (examples/seed004_persistent_cluster.py, M = N = 512, SMS = 8, CUDA, Stream-K)::

        work: streamk, grid 8, Stream-K tiles [0, 8) over 8 CTAs, fix-up atomic

    after::

        work: streamk, grid 8, Stream-K tiles [0, 4) over 4 CTAs, fix-up atomic

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.pipeline import LowerOptions, tile_axes, tile_order
    >>> f = load_schedule("examples/seed004_persistent_cluster.py",
    ...                   dict(M=512, N=512, SMS=8, DECOMP="streamk")).fusion
    >>> s = decomposition(tile_order(tile_axes(Lowering(f, LowerOptions(target="cuda")))))
    >>> c = cluster_split(s)
    >>> c.cluster, c.work.group, c.split.group, c.work.sk_ctas
    ((2, 1, 1), 2, 2, 4)
    """
    assert s.work is not None and s.order is not None
    launch, notes = s.ir.launch, list(s.notes)
    size = launch.cluster_size
    if s.target is Target.TRITON:
        if size > 1:
            notes.append(
                f"triton: the schedule's cluster {launch.cluster} is not launched (Triton issues "
                f"no multicast); its tile order is kept and each CTA loads its own tiles")
        return replace(s, cluster=(1, 1, 1), notes=tuple(notes))
    work, split = s.work, s.split
    if size > 1:
        work = over_clusters(s.work, s.fusion.decomposition.sms or s.num_ctas, size)
        if s.work.kind is not Decomposition.DATA_PARALLEL:
            notes.append(f"cuda: {work.kind.value} over {work.num_tiles} groups of {size} tiles "
                         f"and {work.grid // size} clusters: every CTA of a cluster keeps the "
                         f"same K range")
        elif work.grid != s.work.grid:
            # fewer tiles than CTAs and not a whole number of clusters: the extra CTAs' tiles
            # are past NUM_TILES, so they are dead (no loads, no stores) and their cluster runs
            # the all-cluster release with alive masks
            notes.append(f"cuda: grid {s.work.grid} rounded up to {work.grid}, whole clusters of "
                         f"{size} (the last {work.grid - s.work.grid} CTA(s) dead)")
        if split is not None:
            split = replace(split, group=size)
    if size > 2:
        notes.append(
            f"cuda: a persistent grid of {s.num_ctas} CTAs in clusters of {size} runs in waves if "
            f"the GPU cannot hold them all at once"
            + (" (an H200 holds 30 clusters of 4: use SMS=120)" if size == 4 else "")
            + f"; CudaKernel.max_active_clusters() tells how many clusters of {size} fit on the "
            f"device")
    return replace(s, cluster=launch.cluster, work=work, split=split, notes=tuple(notes))
