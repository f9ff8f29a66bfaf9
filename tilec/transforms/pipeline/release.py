"""The CUDA cluster's stage-release protocol, decided in lowering from the plan's parts (no
printing): whether the cluster sizes of a plan's parts agree, and the exact release's receiver sets
(docs/cuda_backend.md, "Stage release").  :func:`~tilec.transforms.pipeline.legalize.legalize`
records :func:`release_protocol`'s answer as ``KernelPlan.release`` for target ``cuda``; the
CUDA printer reads it (and asks :func:`plan_release` only of a plan that carries none).

Example::

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.pipeline import lower
    >>> s = load_schedule("examples/seed004_persistent_cluster.py",
    ...                   {"M": 2048, "N": 2048, "CM": 2, "CN": 2, "CLUSTER": 4, "SMS": 16})
    >>> p = lower(s.fusion, target="cuda", params=s.params, mode="sliced")
    >>> p.release  # rank r = 2 * row + col: A goes along the row, B along the column
    ReleaseProtocol(receivers=(7, 11, 13, 14), senders=(7, 11, 13, 14))
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy

from tilec.errors import UnsupportedError
from tilec.ir import ceil_div
from tilec.proofs import compile_int
from tilec.transforms.plan import (
    Decomposition,
    KernelPlan,
    MulticastMode,
    OperandLoad,
    ReleaseProtocol,
    TileOrder,
    WorkSplit,
)

__all__ = ["ReleaseProtocol", "check_cluster_agreement", "cluster_all_or_none", "plan_release",
           "release_protocol"]


def check_cluster_agreement(name: str, work: WorkSplit, cluster: int,
                            loads: tuple[OperandLoad, OperandLoad]) -> None:
    """The cluster sizes of a CUDA plan's parts agree (checked by
    :func:`~tilec.transforms.pipeline.legalize.legalize`, before the release is decided): a
    work split that is not data-parallel hands every CTA of a cluster the same K range (its
    group is the cluster), and every multicast plan is for the launch's cluster; else an
    UnsupportedError naming both sizes.

    >>> from dataclasses import replace
    >>> split_k = WorkSplit(Decomposition.SPLIT_K, grid=4, num_tiles=2, k_iters=4, splits=2)
    >>> check_cluster_agreement("k", replace(split_k, group=2), 2, ())  # agree: nothing to say
    >>> try:
    ...     check_cluster_agreement("k", split_k, 2, ())
    ... except UnsupportedError as e:
    ...     print(str(e).split(":")[1])
     plan 'k' splits work per group of 1 CTA(s) (splitk) but launches clusters of 2
    """
    if work.kind is not Decomposition.DATA_PARALLEL and cluster > 1 and work.group != cluster:
        raise UnsupportedError(
            f"cuda: plan {name!r} splits work per group of {work.group} CTA(s) ({work.kind.value}) "
            f"but launches clusters of {cluster}: every CTA of a cluster must keep the same K "
            "range (the cluster work split makes the group the cluster)"
        )
    for op in loads:
        mc = op.multicast
        if mc is not None and mc.cluster_size != cluster:
            raise UnsupportedError(
                f"operand {op.name}: the multicast derivation is for clusters of "
                f"{mc.cluster_size} CTAs but the launch's cluster has {cluster}: derive it from "
                "the schedule being lowered"
            )


def cluster_all_or_none(p: KernelPlan, cluster: int) -> bool:
    """Every group of ``cluster`` consecutive linear tiles (what one cluster runs at a time, in
    every decomposition) is wholly alive or wholly dead, so the CTAs of a cluster skip the same
    units and use the same stages.  Checked at every tile the reference launch walks.
    """
    o = p.order
    n = int(o.concrete().num_tiles)
    for g in range(ceil_div(n, cluster)):
        a = [o.is_alive(g * cluster + k) for k in range(cluster)]
        if any(a) != all(a):
            return False
    return True


def release_protocol(order: TileOrder, grid: int, cluster: int,
                     loads: tuple[OperandLoad, OperandLoad],
                     sizes: Mapping[sympy.Symbol, int]) -> ReleaseProtocol:
    """R'(X) and S'(X) per rank when every load's destination set depends on the rank alone
    wherever the kernel uses it (closed forms, evaluated at every wholly alive group of the
    reference launch's walk: ``order`` at ``sizes``, ``grid`` CTAs in clusters of ``cluster``);
    else the all-cluster release (``ReleaseProtocol()``).  The kernel runs the exact release
    only in its closed variant, where the launch's ``facts_hold`` finds every cluster wholly
    alive or dead with these receivers at every alive group (the CUDA printer's schedule.py).

    R'(X) = {X} | OR over operands of (issue_x(X) ? mask_x(X) : 0); S'(Y) = {X : Y in R'(X)}.
    """
    o = order.concrete()  # the reference launch
    oc = max(int(o.ctas or grid) // cluster, 1)
    n, tiles_m, tiles_n = int(o.num_tiles), int(o.tiles_m), int(o.tiles_n)

    def alive(t: int) -> bool:
        m, nn = o.coords(t)
        return m < tiles_m and nn < tiles_n

    alive_groups = [g for g in range(ceil_div(n, cluster))
                    if all(g * cluster + r < n and alive(g * cluster + r) for r in range(cluster))]
    recv = [1 << r for r in range(cluster)]
    for op in loads:
        mc = op.multicast
        if mc is None:
            continue
        if not mc.closed_form:  # (its guard: the closed variant runs where it holds)
            return ReleaseProtocol()
        exprs = [mc.issue, mc.mask]
        if mc.mode is MulticastMode.SLICED:
            exprs += [mc.slice_index, mc.slice_count]
        exprs = [sympy.sympify(e).xreplace(sizes) for e in exprs]
        f = compile_int(exprs, sympy.symbols("rank i_rt cidx"))  # exact; symbols match by name
        for r in range(cluster):
            seen = {tuple(int(v) for v in f(r, g // oc, g % oc)) for g in alive_groups}
            if len(seen) > 1:
                return ReleaseProtocol()
            if seen:
                issue, mask = next(iter(seen))[:2]
                recv[r] |= mask if issue else 0
    send = [sum(1 << x for x in range(cluster) if recv[x] >> y & 1) for y in range(cluster)]
    return ReleaseProtocol(tuple(recv), tuple(send))


def plan_release(p: KernelPlan) -> ReleaseProtocol:
    """The plan's stage release: the one lowering recorded, else (a plan lowered for Triton,
    or one a test edited after lowering) :func:`release_protocol` of its parts."""
    if p.release is not None:
        return p.release
    return release_protocol(p.order, p.work.grid, p.cluster[0], (p.a, p.b), p.sizes)
