"""The derivation against a brute force written from first principles, over random schedules
built through the verbs: row-major, column-major, swizzled, persistent, seed-order and split-K
tile orders (split-K parts on a CTA index, uneven splits included), clusters of 1 to 16.

The brute force never reads the derivation: it walks every CTA of the launch (its hardware
indices: blockIdx = clusterIdx * clusterDim + rank), every serial loop point, evaluates the
operand's index map with the box (Bulk) indices at 0, and calls a CTA *alive* there when every
split predicate holds (its tile exists and its K part has this k-iteration). Two CTAs of one
cluster share when both are alive and their box origins agree on every non-broadcast axis.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

import pytest
import sympy
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tilec.ir import GemmFusion, ParallelType, index_map, infer_launch
from tilec.proofs.evaluate import compile_int
from tilec.transforms.multicast.derive import derive

P = ParallelType


# -- schedules ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    order: str  # row, col, swizzle, persistent, seed, splitk
    M: int
    N: int
    K: int
    BM: int
    BN: int
    BK: int
    cluster: tuple[int, int, int]
    extra: int  # SMS for persistent orders, splits for split-K, group for swizzle
    cm: int = 1  # seed order: cluster factors
    cn: int = 1


def params(c: Case) -> dict[str, int]:
    """The schedule's integer parameters by name (what a schedule file's PARAMS would hold; the
    cluster's shape is not one of them, except CLUSTER of the persistent orders' split)."""
    p = {"M": c.M, "N": c.N, "K": c.K, "BM": c.BM, "BN": c.BN, "BK": c.BK}
    if c.order in ("persistent", "seed"):
        p.update(SMS=c.extra, CLUSTER=c.cluster[0] * c.cluster[1] * c.cluster[2])
        if c.order == "seed":
            p.update(CM=c.cm, CN=c.cn)
    elif c.order == "swizzle":
        p["G"] = c.extra
    elif c.order == "splitk":
        p["SPLITS"] = c.extra
    return p


def build(c: Case, values: dict[str, Any] | None = None) -> GemmFusion:
    """The schedule of ``c``; ``values`` replaces its parameters (symbols: the build over
    symbols that the closed forms are derived from), the cluster's shape stays ``c.cluster``."""
    p = {**params(c), **(values or {})}
    cs = c.cluster[0] * c.cluster[1] * c.cluster[2]
    f = GemmFusion(p["M"], p["N"], p["K"], dtype="fp16", non_portable_cluster=cs > 8)
    v = f.c
    v.split(0, p["BM"]).split(2, p["BN"]).split(4, p["BK"])  # [Mo, Mi, No, Ni, rKo, rKi]
    if c.order == "splitk":
        v.split(4, p["SPLITS"], names=("Koo", "Koi"))  # [Mo, Mi, No, Ni, rKoo, rKoi, rKi]
        v.reorder([0, 2, 5, 4, 1, 3, 6])  # [Mo, No, Koi, Koo, Mi, Ni, Ki]
        v.merge(0)  # [T, Koi, Koo, Mi, Ni, Ki]
        v.parallelize(0, P.BIDx).parallelize(1, P.BIDy)
        v.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
        f.set_cluster(*c.cluster)
        f.propagate()
        return f
    v.reorder([0, 2, 4, 1, 3, 5])  # [Mo, No, rKo, Mi, Ni, rKi]
    if c.order == "grid2d":  # tile rows on blockIdx.y, columns on blockIdx.x, 2-D clusters
        v.parallelize(0, P.BIDy).parallelize(1, P.BIDx)
        v.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
        f.set_cluster(*c.cluster)
        f.propagate()
        return f
    if c.order == "col":
        v.reorder([1, 0, 2, 3, 4, 5])
    if c.order == "swizzle":
        v.swizzle(0, 1, p["G"])
    if c.order == "seed":
        v.split(0, p["CM"], names=("RM", "CM")).split(2, p["CN"], names=("RN", "CN"))
        v.reorder([0, 2, 1, 3, 4, 5, 6, 7])
        v.merge(0).merge(0).merge(0)
    else:
        v.merge(0)  # T
    if c.order in ("persistent", "seed"):
        v.split(0, p["SMS"], names=("rt", "sms"))  # [rt, sms, rKo, ...]
        v.split(1, p["CLUSTER"], names=("cluster", "rank"))
        v.parallelize(1, P.CIDx).parallelize(2, P.RankX)
        v.parallelize(4, P.Mma).parallelize(5, P.Mma).parallelize(6, P.Mma)
    else:
        v.parallelize(0, P.BIDx)
        v.parallelize(2, P.Mma).parallelize(3, P.Mma).parallelize(4, P.Mma)
        f.set_cluster(*c.cluster)
    f.propagate()
    return f


def symbols(c: Case) -> dict[str, sympy.Symbol]:
    """Every parameter of ``c`` a positive integer symbol (as ``tilec masks`` builds a schedule
    file over symbols)."""
    return {k: sympy.Symbol(k, integer=True, positive=True) for k in params(c)}


def derive_symbolic(c: Case, mode: str):
    """The derivation as ``tilec masks`` makes it: the schedule built over symbols, evaluated at
    ``c``'s parameters (closed forms over the parameter names, proved where the theorems reach)."""
    return derive(build(c), mode, symbolic=build(c, symbols(c)), params=params(c))


@st.composite
def cases(draw: st.DrawFn) -> Case:
    order = draw(st.sampled_from(["row", "col", "swizzle", "persistent", "seed", "splitk"]))
    BM, BN, BK = (draw(st.sampled_from([2, 3, 4, 8])) for _ in range(3))
    M, N = draw(st.integers(1, 40)), draw(st.integers(1, 48))
    K = draw(st.integers(1, 24))
    tiles = -(-M // BM) * -(-N // BN)
    cs = draw(st.sampled_from([1, 2, 3, 4, 6, 8, 16]))
    if order in ("persistent", "seed"):
        sms = cs * draw(st.integers(1, 4)) + draw(st.sampled_from([0, 0, 1]))
        cm, cn = (draw(st.integers(1, 3)), draw(st.integers(1, 3))) if order == "seed" else (1, 1)
        return Case(order, M, N, K, BM, BN, BK, (cs, 1, 1), sms, cm, cn)
    if tiles % cs:  # set_cluster: the cluster must divide the grid
        cs = next(d for d in (16, 8, 6, 4, 3, 2, 1) if tiles % d == 0 and d <= cs)
    extra = 1
    if order == "swizzle":
        extra = draw(st.integers(1, 4))
    if order == "splitk":
        extra = draw(st.integers(1, max(1, -(-K // BK))))
    return Case(order, M, N, K, BM, BN, BK, (cs, 1, 1), extra)


# -- the brute force ------------------------------------------------------------------------


def brute_force(f: GemmFusion, operand: str) -> dict[tuple, dict[int, tuple | None]]:
    """{(cluster index, serial loop point): {rank: box origin or None if dead}}."""
    view = f.operands()[0 if operand == "A" else 1]
    launch = infer_launch(f)
    cl = launch.cluster
    im = index_map(view)
    syms = im.symbols
    origin_names = [n for n in im.logical if n not in im.broadcast]
    fn = compile_int([*[im.logical[n] for n in origin_names], sympy.And(*im.predicates)], syms)
    hw, serial = [], []
    for ax, s in im.loop:
        if ax.ptype in (P.Bulk, P.Multicast):
            continue
        (hw if ax.ptype.is_hardware_index else serial).append((ax, s))
    out: dict[tuple, dict[int, tuple | None]] = {}
    ranges = [range(int(ax.extent)) for ax, _ in hw + serial]
    for values in itertools.product(*ranges):
        at = dict(zip([s for _, s in hw + serial], values, strict=True))
        rank_xyz, cid = [0, 0, 0], [0, 0, 0]
        for ax, s in hw:
            d = ax.ptype.dim
            if ax.ptype.is_rank:
                rank_xyz[d] = at[s]
            elif ax.ptype.is_cluster:
                cid[d] = at[s]
            elif ax.ptype.is_block and cl[d] > 1:  # blockIdx = clusterIdx * clusterDim + rank
                cid[d], rank_xyz[d] = divmod(at[s], cl[d])
        rank = rank_xyz[0] + cl[0] * (rank_xyz[1] + cl[1] * rank_xyz[2])
        named = {f"cid{'xyz'[d]}": cid[d] for d in range(3)}
        named.update({str(s): at[s] for ax, s in hw if not (
            ax.ptype.is_rank or ax.ptype.is_cluster
            or (ax.ptype.is_block and cl[ax.ptype.dim] > 1))})
        named.update({str(s): at[s] for _, s in serial})
        key = tuple(sorted(named.items()))
        res = fn(*[at.get(s, 0) for s in syms])
        out.setdefault(key, {})[rank] = tuple(res[:-1]) if res[-1] else None
    return out


def expected(groups: dict[int, tuple | None], cs: int, mode: str
             ) -> dict[int, tuple[bool, int, int, int]]:
    """Per rank: (issue, mask, slice index, slice count) from first principles."""
    out = {}
    for r in range(cs):
        o = groups.get(r)
        if o is None:
            out[r] = (False, 0, 0, 0)
            continue
        members = [q for q in range(cs) if groups.get(q) == o]
        issue = mode == "sliced" or members[0] == r
        out[r] = (issue, sum(1 << q for q in members), members.index(r), len(members))
    return out


# -- checks ---------------------------------------------------------------------------------


def _forms_at(op, rows):
    """Evaluate the forms a kernel would use (closed where reported, else general)."""
    issue, mask, sidx, scount = op.forms()
    exprs = [issue, mask, sidx if sidx is not None else 0, scount if scount is not None else 1]
    fn = compile_int([sympy.sympify(e) for e in exprs], list(op.variables))
    names = [str(v) for v in op.variables]
    for row in rows:
        yield row, fn(*[row.point[n] for n in names])


def check(c: Case, mode: str) -> dict[str, bool]:
    f = build(c)
    cs = infer_launch(f).cluster_size
    d = derive(f, mode)
    closed = {}
    for name, op in d.operands.items():
        truth = brute_force(f, name)
        by_point: dict[tuple, dict[int, tuple]] = {}
        for row, (ci, cm, si, sc) in _forms_at(op, op.table):
            by_point.setdefault(tuple((k, v) for k, v in row.point.items() if k != "rank"),
                                {})[row.point["rank"]] = (row, (bool(ci), int(cm), int(si), int(sc)))
        # every brute-force point is covered by the derivation's table, with the same verdicts
        seen = 0
        names = [str(v) for v in op.variables if str(v) != "rank"]
        for key, groups in truth.items():
            want = expected(groups, cs, mode)
            # the derivation's loop point: its variables are a subset of the brute force's
            at = dict(key)
            got = by_point.get(tuple((n, at[n]) for n in names))
            assert got is not None, (c, name, key, names)
            for got in [got]:
                seen += 1
                for r in range(cs):
                    row, (ci, cm, si, sc) = got[r]
                    w = want[r]
                    assert row.alive == (groups.get(r) is not None), (c, name, row)
                    # soundness and exactly-once: a dead CTA issues nothing and is in no mask;
                    # an alive one gets its group's mask (each byte once, from its own box)
                    assert (ci, cm) == (w[0], w[1]), (c, mode, name, row.point, (ci, cm), w,
                                                      op.closed_form, op.notes)
                    if mode == "sliced" and w[1]:
                        assert (si, sc) == (w[2], w[3]), (c, name, row.point)
        assert seen
        # completeness: a closed form whenever the groups never change with the loop point
        closed[name] = op.closed_form
        uniform = _uniform(truth, cs)
        assert op.closed_form == uniform, (c, name, op.notes)
        assert not any("disagreed" in n for n in op.notes), (c, name, op.notes)
        for fact in op.facts:  # facts are about parameters, never loop variables
            assert not {str(s) for s in fact.subject.free_symbols} & {str(v) for v in op.variables}
    return closed


def _uniform(truth: dict, cs: int) -> bool:
    group_of: dict[int, int] = {}
    for groups in truth.values():
        for r, o in groups.items():
            if o is None:
                continue
            m = sum(1 << q for q in range(cs) if groups.get(q) == o)
            if group_of.setdefault(r, m) != m:
                return False
    return True


NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck),
          phases=NO_SHRINK)
@given(c=cases(), mode=st.sampled_from(["leader", "sliced"]))
def test_random_schedules_against_the_brute_force(c, mode):
    check(c, mode)


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_issue_13_uneven_split_k_in_a_cluster(mode):
    """M=5 N=25 K=12 BM=2 BN=8 BK=3, split-K 3 (K parts of 2, 1 and 1 k-iterations), clusters of
    2 along x: at i_Koo=1 only part 0 has work; the others issue nothing and are in no mask."""
    c = Case("splitk", 5, 25, 12, 2, 8, 3, (2, 1, 1), 3)
    check(c, mode)
    d = derive(build(c), mode)
    for op in d.operands.values():
        dead = [r for r in op.table if r.point["i_Koo"] == 1 and r.point["bidy"] > 0]
        assert dead and not any(r.alive or r.issue or r.mask for r in dead)
        for r in op.table:
            if r.issue:
                assert not any(r.mask >> q.point["rank"] & 1 for q in dead
                               if {k: v for k, v in q.point.items() if k != "rank"}
                               == {k: v for k, v in r.point.items() if k != "rank"})


@pytest.mark.parametrize("cx,cy", [(2, 2), (4, 2), (2, 4), (1, 4)])
@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_two_dimensional_clusters(cx, cy, mode):
    """Clusters of cx x cy over a 2-D grid of tiles: A is shared along x (one tile row), B along
    y (one tile column); both are digit patterns of the rank (x + cx*y) with closed forms."""
    c = Case("grid2d", 8 * cy * 2, 8 * cx * 3, 16, 8, 8, 8, (cx, cy, 1), 1)
    check(c, mode)
    d = derive(build(c), mode)
    for name, op in d.operands.items():
        assert op.closed_form, (name, op.notes)
        for row in op.table:
            r = row.point["rank"]
            x, y = r % cx, r // cx
            same = ([q for q in range(cx * cy) if q // cx == y] if name == "A"
                    else [q for q in range(cx * cy) if q % cx == x])
            assert row.mask == sum(1 << q for q in same), (name, row)
