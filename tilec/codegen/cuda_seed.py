"""Hand-built KernelPlans for the seed schedule (persistent grid, 1-D clusters, multicast).

A stand-in until ``tilec.transforms.multicast`` and the lowering land: it writes down, for the seed
schedule of the nvFuser multicast discussion, the tile order and the MulticastPlans (closed and
general forms) that the derivation is expected to produce, so the CUDA backend can be printed,
compiled and run now.  Tests and ``bench/bench_cuda.py`` use it; nothing in the backend does.

Seed schedule: ``SMS`` persistent CTAs in clusters of ``CLUSTER`` along x; CTA (cidx, rank) in
round ``i_rt`` takes the linear tile ``I = i_rt*SMS + cidx*CLUSTER + rank``; tiles are grouped
CM x CN per group of CLUSTER consecutive indices (CM*CN == CLUSTER), groups row-major.
A is shared by the CN CTAs of one group row, B by the CM CTAs of one group column.

Example::

    >>> p = seed_plan(M=256, N=512, K=128, BM=128, BN=128, CM=1, CN=2, sms=4)
    >>> p.order.evaluate(3), p.a.multicast.mode.value
    ((0, 3), 'leader')
"""

from __future__ import annotations

import itertools
from typing import Literal

import sympy

from tilec.transforms.plan import (
    Decomposition,
    DType,
    KernelPlan,
    LoadKind,
    MulticastMode,
    MulticastPlan,
    OperandLoad,
    TileOrder,
    WorkSplit,
)

_NN = {"integer": True, "nonnegative": True}
t, rank, i_rt, cidx, r1, r2, j = (sympy.Symbol(n, **_NN) for n in ("t", "rank", "i_rt", "cidx", "r1", "r2", "j"))
Form = Literal["closed", "general", "guarded", "auto"]


def seed_order(tiles_m: int, tiles_n: int, cm: int, cn: int, band: int = 0) -> TileOrder:
    """Groups of cm x cn tiles, one group per CLUSTER consecutive linear indices.

    ``band`` = 0: groups row-major.  ``band`` = G > 0: grouped (swizzled) order over groups:
    bands of G group rows, each walked column by column (the last band may be shorter), so the
    CTAs of one wave read G group rows of A and few columns of B (L2 reuse).
    """
    cl = cm * cn
    gn = -(-tiles_n // cn)
    gm = -(-tiles_m // cm)
    local, g = sympy.Mod(t, cl), sympy.floor(t / cl)
    if band <= 0 or band >= gm:
        gi, gj = sympy.floor(g / gn), sympy.Mod(g, gn)
        desc = f"cluster groups {cm}x{cn}, row-major"
    else:
        per = band * gn
        b0, w = sympy.floor(g / per), sympy.Mod(g, per)
        last = gm - (gm // band) * band  # rows in a short last band (0: none)
        if last == 0:
            gi, gj = b0 * band + sympy.Mod(w, band), sympy.floor(w / band)
        else:  # the short band is the last one: height band, or `last` there
            h = sympy.Piecewise((band, b0 < gm // band), (last, True))
            gi, gj = b0 * band + sympy.Mod(w, h), sympy.floor(w / h)
        desc = f"cluster groups {cm}x{cn}, grouped: bands of {band} group rows, column-major inside"
    tm = gi * cm + sympy.floor(local / cn)
    tn = gj * cn + sympy.Mod(local, cn)
    return TileOrder(t, tm, tn, sympy.Integer(gm * gn * cl), tiles_m, tiles_n, description=desc)


def _alive(order: TileOrder, idx: sympy.Expr) -> sympy.Boolean:
    return sympy.And(
        sympy.Lt(idx, order.num_tiles),
        sympy.Lt(order.tile_m.subs(order.index, idx), order.tiles_m),
        sympy.Lt(order.tile_n.subs(order.index, idx), order.tiles_n),
    )


def seed_multicast(order: TileOrder, operand: str, cm: int, cn: int, sms: int,
                   mode: MulticastMode, form: Form) -> MulticastPlan:
    """The MulticastPlan of operand "A" or "B" in the seed schedule."""
    cl = cm * cn
    idx = {r: i_rt * sms + cidx * cl + r for r in (r1, r2)}
    key = order.tile_m if operand == "A" else order.tile_n
    same = sympy.And(
        sympy.Eq(key.subs(order.index, idx[r1]), key.subs(order.index, idx[r2])),
        _alive(order, idx[r1]), _alive(order, idx[r2]),
    )
    if operand == "A":  # the CN CTAs of one group row
        issue = sympy.Eq(sympy.Mod(rank, cn), 0)
        mask = (2**cn - 1) * 2 ** (cn * sympy.floor(rank / cn))
        sidx, scnt = sympy.Mod(rank, cn), sympy.Integer(cn)
    else:  # the CM CTAs with equal rank % CN
        issue = sympy.Lt(sympy.Mod(rank, cl), cn)
        mask = sympy.Sum(2 ** (j * cn), (j, 0, cm - 1)) * 2 ** (sympy.Mod(rank, cn) + cl * sympy.floor(rank / cl))
        sidx, scnt = sympy.floor(rank / cn), sympy.Integer(cm)
    if mode is MulticastMode.SLICED:
        issue = sympy.true
    facts = (f"SMS % {cl} == 0", "whole cluster groups alive or dead")
    guard: sympy.Boolean = sympy.true
    if form == "guarded":  # closed form where the whole cluster is alive in this round
        guard = sympy.And(*[_alive(order, i_rt * sms + cidx * cl + r) for r in range(cl)])
    return MulticastPlan(
        mode=mode, cluster_size=cl, variables=(rank, i_rt, cidx), same=same, issue=issue,
        mask=mask, slice_index=sidx, slice_count=scnt,
        closed_form=form in ("closed", "guarded"), guard=guard, facts=facts,
    )


def seed_plan(M: int, N: int, K: int, BM: int = 128, BN: int = 256, BK: int = 64,
              CM: int = 1, CN: int = 1, sms: int = 132, stages: int = 4,
              mode: MulticastMode = MulticastMode.LEADER, form: Form = "auto",
              multicast: bool = True, dtype: DType = DType.BF16,
              evict_a: str = "normal", evict_b: str = "normal", band: int = 0) -> KernelPlan:
    """A data-parallel persistent plan of the seed schedule; ``form='auto'`` takes the closed
    form when an exhaustive check over the launch shows it equals the general one."""
    cl = CM * CN
    tiles_m, tiles_n = -(-M // BM), -(-N // BN)
    order = seed_order(tiles_m, tiles_n, CM, CN, band)
    loads = {}
    for op, box in (("A", (BM, BK)), ("B", (BN, BK))):
        share = CN if op == "A" else CM
        mc = None
        if multicast and cl > 1 and share > 1:
            f = form
            if form == "auto":
                closed = seed_multicast(order, op, CM, CN, sms, mode, "closed")
                f = "closed" if closed_matches_general(closed, order, sms) else "general"
            mc = seed_multicast(order, op, CM, CN, sms, mode, f)
        loads[op] = OperandLoad(op, LoadKind.TMA, box, transposed=(op == "B"), multicast=mc,
                                evict=evict_a if op == "A" else evict_b)
    name = (f"seed_{M}x{N}x{K}_{BM}x{BN}x{BK}_c{CM}x{CN}_{mode.value}_{form}"
            f"{'' if multicast else '_nomc'}{f'_band{band}' if band else ''}")
    return KernelPlan(
        name=name, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, dtype=dtype, order=order,
        work=WorkSplit(Decomposition.DATA_PARALLEL, grid=sms), a=loads["A"], b=loads["B"],
        num_warps=12, num_stages=stages, cluster=(cl, 1, 1), b_transposed=True,
    )


# ---- evaluating a MulticastPlan in Python (the oracle the tests compare the C against) ----------

def evaluate(mc: MulticastPlan, rank_: int, i_rt_: int, cidx_: int, which: str = "auto") -> dict[str, int]:
    """issue / mask / slice_index / slice_count of one CTA, from the plan's sympy.

    ``which``: "closed", "general", or "auto" (what the kernel runs: the guard picks).
    """
    sub = {rank: rank_, i_rt: i_rt_, cidx: cidx_}
    by_name = {s.name: v for s, v in sub.items()}

    def val(e: sympy.Basic, extra: dict[str, int] | None = None) -> int:
        env = dict(by_name, **(extra or {}))
        e = sympy.sympify(e)
        r = e.xreplace({s: sympy.Integer(env[s.name]) for s in e.free_symbols}).doit()
        return int(bool(r)) if r in (sympy.true, sympy.false) else int(r)

    if which == "auto":
        which = "closed" if mc.closed_form and val(mc.guard) else "general"
    sliced = mc.mode is MulticastMode.SLICED
    if which == "closed":
        out = {"issue": val(mc.issue), "mask": val(mc.mask)}
        if sliced:
            out |= {"slice_index": val(mc.slice_index), "slice_count": val(mc.slice_count)}
        return out
    same = [val(mc.same, {"r1": r, "r2": rank_}) for r in range(mc.cluster_size)]
    issue = same[rank_] if sliced else int(not any(same[:rank_]))
    out = {"issue": issue, "mask": sum(s << r for r, s in enumerate(same))}
    if sliced:
        out |= {"slice_index": sum(same[:rank_]), "slice_count": sum(same)}
    return out


def closed_matches_general(mc: MulticastPlan, order: TileOrder, sms: int) -> bool:
    """Exhaustive check over the launch: for every alive CTA, the closed form (with the kernel's
    own alive guards) issues and masks as the general form does."""
    cl = mc.cluster_size
    rounds = -(-int(order.num_tiles) // sms)
    for ir, ci, rk in itertools.product(range(rounds), range(sms // cl), range(cl)):
        base = ir * sms + ci * cl
        if not _alive_int(order, base + rk):
            continue
        alive_mask = sum(1 << r for r in range(cl) if _alive_int(order, base + r))
        c = evaluate(mc, rk, ir, ci, "closed")
        g = evaluate(mc, rk, ir, ci, "general")
        c["mask"] &= alive_mask
        if c != g:
            return False
    return True


def _alive_int(order: TileOrder, idx: int) -> bool:
    if idx >= int(order.num_tiles):
        return False
    m, n = order.evaluate(idx)
    return m < order.tiles_m and n < order.tiles_n
