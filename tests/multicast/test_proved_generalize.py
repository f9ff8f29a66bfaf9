"""Proved means proved: a closed form reported for every launch that meets its facts holds at
*other* parameter values meeting them (the cluster's shape fixed), against the first-principles
brute force of test_random_schedules.py, in both modes: issue, mask, slices and alive.

A random API schedule is derived the way ``tilec masks`` derives a schedule file (built over
symbols, evaluated at its parameters); for each closed form of scope PROVED the test draws other
values of M, N, K, BM, BN, BK and the order's own parameters, keeps those where every fact holds,
rebuilds the schedule there and compares the form with the brute force at every CTA of that
launch. A NARROWING form is checked for soundness there (never a CTA that needs another box, or
a dead one, in a mask; every alive CTA gets its box exactly once). ``TILEC_HYPOTHESIS_EXAMPLES``
raises the number of schedules (CI: a few dozen).
"""

from __future__ import annotations

import itertools
import os
import random

import pytest
import sympy
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.multicast.test_random_schedules import (
    Case,
    brute_force,
    build,
    cases,
    derive_symbolic,
    expected,
    params,
    symbols,
)
from tilec.errors import TilecError
from tilec.ir import infer_launch
from tilec.proofs import FactKind
from tilec.proofs.evaluate import compile_int
from tilec.transforms.multicast.records import Scope
from tilec.transforms.multicast.derive import derive

MANY = int(os.environ.get("TILEC_HYPOTHESIS_EXAMPLES", "0"))
NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]


def fact_holds(fact, values: dict[sympy.Symbol, int]) -> bool:
    """The fact at these parameter values, by tilec's exact evaluator (floor semantics)."""
    exprs = [fact.subject] + ([fact.other] if fact.other is not None else [])
    syms = sorted(set().union(*[sympy.sympify(e).free_symbols for e in exprs]), key=str)
    if any(s not in values for s in syms):
        return False
    try:
        got = compile_int(exprs, syms)(*[values[s] for s in syms])
    except (ZeroDivisionError, ValueError):
        return False
    if fact.kind is FactKind.DIVISIBLE:
        return got[1] != 0 and got[0] % got[1] == 0
    if fact.kind is FactKind.BOUND:
        return got[0] < got[1]
    if fact.kind is FactKind.POSITIVE:
        return got[0] > 0
    return got[0] >= 0


def other_values(c: Case, rnd: random.Random) -> dict[str, int]:
    """Other parameter values for ``c``'s schedule, the cluster kept; divisible ones are drawn
    often (facts are mostly divisibility)."""
    p = params(c)
    out = dict(p)
    for k in ("BM", "BN", "BK"):
        out[k] = rnd.choice([1, 2, 3, 4, 6, 8])
    for k, hi in (("M", 64), ("N", 64), ("K", 24)):
        b = out["B" + k]
        out[k] = b * rnd.randint(1, max(1, hi // b)) if rnd.random() < 0.6 else rnd.randint(1, hi)
    if "CM" in p:
        out["CM"], out["CN"] = rnd.randint(1, 4), rnd.randint(1, 4)
    if "SMS" in p:
        cl = p["CLUSTER"]
        out["SMS"] = cl * rnd.randint(1, 6) + (0 if rnd.random() < 0.7 else rnd.randint(1, cl))
    if "G" in p:
        out["G"] = rnd.randint(1, 5)
    if "SPLITS" in p:
        out["SPLITS"] = rnd.randint(1, max(1, -(-out["K"] // out["BK"])))
    return out


def _form_fn(op):
    issue, mask, sidx, scount = op.forms()
    exprs = [sympy.sympify(e) for e in (issue, mask, sidx if sidx is not None else 0,
                                         scount if scount is not None else 1)]
    free = set().union(*[e.free_symbols for e in exprs])
    psyms = sorted(free - set(op.variables), key=str)
    return compile_int(exprs, [*op.variables, *psyms]), psyms


def compare_at(c: Case, name: str, op, mode: str, values: dict[str, int]) -> bool:
    """The closed form of ``op`` (derived at ``c``) against the brute force of the launch at
    ``values``; False when that launch cannot be built (a cluster that does not divide the
    grid). PROVED: equal at every CTA; NARROWING: sound at every CTA."""
    other = Case(c.order, values["M"], values["N"], values["K"], values["BM"], values["BN"],
                 values["BK"], c.cluster, values.get("SMS", values.get("G", values.get(
                     "SPLITS", c.extra))), values.get("CM", 1), values.get("CN", 1))
    try:
        f = build(other)
        infer_launch(f)
    except TilecError:
        return False
    cs = c.cluster[0] * c.cluster[1] * c.cluster[2]
    fn, psyms = _form_fn(op)
    pv = [values[str(s)] for s in psyms]
    names = [str(v) for v in op.variables]
    for key, groups in brute_force(f, name).items():
        at = dict(key)
        want = expected(groups, cs, mode)
        got = {}
        for r in range(cs):
            at["rank"] = r
            ci, cm, si, sc = fn(*[at[n] for n in names], *pv)
            got[r] = (bool(ci), int(cm), int(si), int(sc))
        where = (c, mode, name, values, key, op.scope, op.notes, [str(x) for x in op.facts])
        if op.scope is Scope.PROVED:
            for r in range(cs):
                w, g = want[r], got[r]
                assert (g[0], g[1]) == (w[0], w[1]), (*where, r, g, w)
                if mode == "sliced" and w[1]:
                    assert (g[2], g[3]) == (w[2], w[3]), (*where, r, g, w)
        else:
            _sound(got, want, cs, mode, where)
    return True


def _sound(got, want, cs, mode, where) -> None:
    """Narrowing: the form's groups refine the true ones; every alive CTA gets its box once."""
    for r in range(cs):
        g, w = got[r], want[r]
        if not w[1]:  # dead: issues nothing, in no mask
            assert not g[0] and not g[1], (*where, r, g)
            assert all(not (got[q][1] >> r & 1) for q in range(cs)), (*where, r)
            continue
        assert g[1] >> r & 1 and g[1] & ~w[1] == 0, (*where, r, g, w)
        members = [q for q in range(cs) if g[1] >> q & 1]
        assert all(got[q][1] == g[1] for q in members), (*where, r)
        if mode == "leader":
            assert sum(got[q][0] for q in members) == 1, (*where, r)
        else:
            assert sorted(got[q][2] for q in members) == list(range(len(members))), (*where, r)
            assert all(got[q][3] == len(members) for q in members), (*where, r)


def check_generalizes(c: Case, mode: str, rnd: random.Random, tries: int = 60,
                      want: int = 3, literal: frozenset[str] = frozenset()) -> int:
    """Derive ``c`` over symbols (``literal``: parameters written as numbers, kept); for every
    PROVED or NARROWING closed form compare at up to ``want`` other launches meeting its facts
    (of ``tries`` drawn). Returns how many ran."""
    d = derive_symbolic(c, mode, literal)
    syms = symbols(c)
    ran = 0
    for name, op in d.operands.items():
        if op.scope not in (Scope.PROVED, Scope.NARROWING):
            continue
        done = 0
        for _ in range(tries):
            values = {**other_values(c, rnd), **{k: params(c)[k] for k in literal}}
            if values == params(c):
                continue
            at = {syms[k]: v for k, v in values.items()}
            if not all(fact_holds(f, at) for f in op.facts):
                continue
            if compare_at(c, name, op, mode, values):
                done += 1
                ran += 1
            if done >= want:
                break
    return ran


@settings(max_examples=max(MANY, 25), deadline=None, suppress_health_check=list(HealthCheck),
          phases=NO_SHRINK)
@given(c=cases(), mode=st.sampled_from(["leader", "sliced"]), seed=st.integers(0, 2**32 - 1),
       literal=st.sampled_from([(), (), ("CLUSTER",), ("SMS",), ("BN", "N"), ("BM", "BK")]))
def test_proved_closed_forms_hold_at_other_launches_meeting_their_facts(c, mode, seed, literal):
    """``literal``: some parameters written as numbers in the schedule (``split(1, 3)``)."""
    check_generalizes(c, mode, random.Random(seed),
                      literal=frozenset(literal) & frozenset(params(c)))


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_issue_28_seed_order_never_shared_is_not_claimed_beyond_its_facts(mode):
    """Derived at M=8 N=3 BM=2 BN=1 CM=2 CN=1 SMS=2 CLUSTER=2, A was "never shared: proved"; at
    M=16 N=32 BM=8 CM=1 SMS=4 every printed fact held and A is shared by the whole cluster."""
    c = Case("seed", 8, 3, 4, 2, 1, 2, (2, 1, 1), 2, 2, 1)
    d = derive_symbolic(c, mode)
    op = d.operands["A"]
    values = {**params(c), "M": 16, "N": 32, "BM": 8, "CM": 1, "SMS": 4}
    at = {symbols(c)[k]: v for k, v in values.items()}
    if op.scope in (Scope.PROVED, Scope.NARROWING) and all(fact_holds(f, at) for f in op.facts):
        assert compare_at(c, "A", op, mode, values)
    assert op.scope is not Scope.PROVED or "never shared" not in op.notes[0] or not all(
        fact_holds(f, at) for f in op.facts)
    assert check_generalizes(c, mode, random.Random(0)) >= 0


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_issue_28_one_tile_column_is_this_launch_only(mode):
    """set_cluster(2) at M=24 N=2 (one tile column): B is shared by rank pairs here; at N=10 the
    same form would multicast B to a CTA that needs another tile. It is not claimed there."""
    c = Case("row", 24, 2, 8, 4, 2, 4, (2, 1, 1), 1)
    d = derive_symbolic(c, mode)
    op = d.operands["B"]
    assert op.closed_form
    values = {**params(c), "N": 10}
    at = {symbols(c)[k]: v for k, v in values.items()}
    if op.scope is Scope.LAUNCH:
        assert op.facts == () and "at this launch" in op.notes[0]
    else:
        assert not all(fact_holds(f, at) for f in op.facts) or compare_at(c, "B", op, mode, values)


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_issue_28_json_of_a_fact_with_a_numeric_coefficient(mode):
    """A persistent schedule that writes N, BN and SMS as numbers: its fact
    ``24*ceiling(M/BM) % 2 == 0`` sent ``masks --json`` into a RecursionError (mk_mod under
    sympy.evaluate(False): an unevaluated ``Mod(1, 2)`` never equals 1). Now the JSON is
    written, and a fact true for every value is not listed."""
    import json

    c = Case("persistent", 10, 48, 15, 4, 2, 4, (1, 1, 1), 2)
    sym = {k: v for k, v in symbols(c).items() if k not in ("BN", "N", "SMS")}
    d = derive(build(c), mode, symbolic=build(c, sym), params=params(c))
    out = json.loads(json.dumps(d.to_json()))
    for op in out["operands"].values():
        assert op["scope"] == "proved" and "Eq(0, 0)" not in op["facts"]


QUOTIENT_CONGRUENCE = [
    # derived at CM=2 SMS=4; at M=13 BM=6 SMS=6 CM=1 the form said 2**rank, the brute force 3
    (Case("seed", 29, 11, 6, 8, 8, 3, (2, 1, 1), 4, 2, 1),
     {"M": 13, "K": 4, "BM": 6, "BK": 4, "SMS": 6, "CM": 1}),
    # the same at a cluster of 3 (CM = CLUSTER = 3 here; found by a hunt over seed orders)
    (Case("seed", 6, 18, 2, 3, 8, 4, (3, 1, 1), 12, 3, 1),
     {"M": 18, "K": 6, "BM": 2, "BK": 6, "SMS": 9, "CM": 1}),
]


@pytest.mark.parametrize("mode", ["leader", "sliced"])
@pytest.mark.parametrize("c,there", QUOTIENT_CONGRUENCE, ids=["cluster2", "cluster3"])
def test_issue_28_quotient_congruence_needs_the_ranks_in_one_block(c, there, mode):
    """The seed order with N and BN written as numbers: A was "never shared: proved" resting
    on ``floor((CLUSTER - 1)/CM)/2 < 1``, the narrowing
    ``(c + T1/CM)/2 == (c + T2/CM)/2 <= c + T1/CM == c + T2/CM`` judged exact by the spread of a
    halved (rational) rank part. At CM = 1 every fact held, yet ranks share A's tile
    (T/CM = T). Now the fact is on the integer numerator (``floor((CLUSTER - 1)/CM) < 1``), and
    the form holds (brute force) wherever its facts do."""
    lit = frozenset(("BN", "N"))
    op = derive_symbolic(c, mode, lit).operands["A"]
    values = {**params(c), **there}
    at = {symbols(c)[k]: v for k, v in values.items()}
    if op.scope in (Scope.PROVED, Scope.NARROWING) and all(fact_holds(f, at) for f in op.facts):
        assert compare_at(c, "A", op, mode, values)
    assert check_generalizes(c, mode, random.Random(3021), literal=lit) > 0


def test_quotient_congruence_exactness_is_an_equivalence_where_its_facts_hold():
    """The exactness facts of ``floor((c*Q + T1/CM)/2) == floor((c*Q + T2/CM)/2) <=
    c*Q + T1/CM == c*Q + T2/CM`` (Q = CLUSTER/CM, T the rank), derived at CM = CLUSTER = 2:
    wherever they hold the step is an equivalence for every pair of ranks (brute force over CM,
    CLUSTER, c); at CM = 1, CLUSTER = 2 ranks 0 and 1 differ in T/CM but not in its half, and
    the step is no equivalence there."""
    from tilec.proofs import Context
    from tilec.proofs.trace import Step
    from tilec.transforms.multicast.proof import _exactness
    from tilec.transforms.multicast.table import R1, R2, RANK

    CM, CL = (sympy.Symbol(n, integer=True, positive=True) for n in ("CM", "CLUSTER"))
    c = sympy.Symbol("cidx", integer=True, nonnegative=True)

    def x(r):
        return c * sympy.floor(CL / CM) + sympy.floor(r / CM)

    step = Step("congruence", sympy.Eq(sympy.floor(x(R1) / 2), sympy.floor(x(R2) / 2)),
                sympy.Eq(x(R1), x(R2)), exact=False)
    res = type("Narrowed", (), {"trace": (step,)})
    ctx = Context().positive(CM, CL)
    for r in (R1, R2, RANK):
        ctx.bound(r, CL)
    facts = _exactness(res, ctx.copy(), {CM: 2, CL: 2})
    assert facts is not None
    assert _exactness(res, ctx.copy(), {CM: 1, CL: 2}) is None
    checked, excluded = 0, set()
    for cm, cl, ci in itertools.product(range(1, 6), range(1, 7), range(4)):
        for r1, r2 in itertools.product(range(cl), repeat=2):
            at = {CM: cm, CL: cl, c: ci, R1: r1, R2: r2}
            if not all(fact_holds(f, {**at, RANK: r}) for f in facts for r in (r1, r2)):
                excluded.add((cm, cl))
                continue
            x1, x2 = ci * (cl // cm) + r1 // cm, ci * (cl // cm) + r2 // cm
            assert (x1 // 2 == x2 // 2) == (x1 == x2), (cm, cl, ci, r1, r2, [str(f) for f in facts])
            checked += 1
    assert checked and (1, 2) in excluded


@st.composite
def full_band_swizzles(draw: st.DrawFn) -> Case:
    """Swizzled (grouped raster) schedules whose tile rows fill every band of G or lie in one
    band (the rewrites of the last band's ``Min(G, tiles_m - g*G)`` apply), clusters of 2 to 8."""
    G = draw(st.integers(1, 4))
    BM, BN, BK = (draw(st.sampled_from([2, 3, 4, 8])) for _ in range(3))
    tm = G * draw(st.integers(1, 4)) if draw(st.booleans()) else draw(st.integers(1, G))
    M = BM * (tm - 1) + draw(st.integers(1, BM))
    N, K = draw(st.integers(1, 48)), draw(st.integers(1, 24))
    tiles = tm * -(-N // BN)
    cs = next(d for d in (8, 6, 4, 3, 2, 1) if tiles % d == 0 and d <= draw(
        st.sampled_from([2, 3, 4, 6, 8])))
    return Case("swizzle", M, N, K, BM, BN, BK, (cs, 1, 1), G)


@settings(max_examples=max(MANY, 25), deadline=None, suppress_health_check=list(HealthCheck),
          phases=NO_SHRINK)
@given(c=full_band_swizzles(), mode=st.sampled_from(["leader", "sliced"]),
       seed=st.integers(0, 2**32 - 1), literal=st.sampled_from([(), (), ("G",), ("BN", "N")]))
def test_banded_swizzled_proved_forms_hold_at_other_launches(c, mode, seed, literal):
    check_generalizes(c, mode, random.Random(seed),
                      literal=frozenset(literal) & frozenset(params(c)))


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_full_band_swizzle_is_proved_under_its_band_fact(mode):
    """M=36 BM=8 (5 tile rows... G=1 fills every band): both operands proved, resting on
    ``ceiling(M/BM) % G == 0``; checked against the brute force at other launches meeting it."""
    c = Case("swizzle", 36, 46, 24, 8, 4, 2, (2, 1, 1), 1)
    d = derive_symbolic(c, mode)
    for name, op in d.operands.items():
        assert op.scope is Scope.PROVED, name
        assert any(f.kind is FactKind.DIVISIBLE and f.other == symbols(c)["G"]
                   and str(f.subject) == "ceiling(M/BM)" for f in op.facts), op.facts
    assert check_generalizes(c, mode, random.Random(1)) > 0


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_one_band_swizzle_is_proved_under_its_band_fact(mode):
    """Two tile rows in a band of G=3 (the grid is one band): A proved, resting on
    ``G - ceiling(M/BM) >= 0``; checked against the brute force at other launches meeting it."""
    c = Case("swizzle", 8, 32, 4, 4, 2, 2, (4, 1, 1), 3)
    op = derive_symbolic(c, mode).operands["A"]
    assert op.scope is Scope.PROVED
    assert any(f.kind is FactKind.NONNEG and str(f.subject) == "G - ceiling(M/BM)"
               for f in op.facts), op.facts
    assert check_generalizes(c, mode, random.Random(2)) > 0


# -- classes proved since session 10 (issue 28, reach): each proved and checked elsewhere ------

S10_CLASSES = [
    # the tile row's split predicate BM*(T/W) < M holds at every CTA of a grid the cluster
    # divides (T < X*W): B's column groups span tile rows of a 35-row problem (M % BM != 0)
    ("grid padding", Case("row", 35, 2, 1, 4, 4, 2, (3, 1, 1), 1), "B", ()),
    # the same through a column-major walk
    ("grid padding, column-major", Case("col", 26, 28, 11, 3, 3, 8, (6, 1, 1), 1), "A", ()),
    # a split written with numbers: 2*(2*cidx + rank) < N is evaluated 4*cidx + 2*rank
    ("evaluated split", Case("grid2d", 26, 11, 14, 3, 2, 8, (2, 1, 1), 1), "A", ("BM", "BN")),
    # the narrowing's keys 2*r1 == 2*r2: the rank itself (never shared)
    ("scaled key", Case("grid2d", 26, 11, 14, 3, 2, 8, (2, 1, 1), 1), "B", ("BM", "BN")),
    # 2*(T1 % D) == 2*(T2 % D): the tile size cancels, the ranks' spread is below D
    ("scaled congruence", Case("col", 26, 7, 16, 2, 4, 4, (2, 1, 1), 1), "A", ("BM", "N")),
    # a parameter that is 1 here written as 1 (fact G < 2): the grouped raster of G = 1
    ("specialized G = 1", Case("swizzle", 8, 13, 19, 2, 2, 3, (4, 1, 1), 1), "B", ("N",)),
    # CM = CN = 1 in the seed order: its digits one rank wide (facts CM < 2, CN < 2)
    ("specialized CM = CN = 1", Case("seed", 32, 5, 18, 2, 3, 8, (4, 1, 1), 12, 1, 1), "A",
     ("BK",)),
    ("specialized CM = CN = 1, B", Case("seed", 32, 5, 18, 2, 3, 8, (4, 1, 1), 12, 1, 1), "B",
     ("BK",)),
]


@pytest.mark.parametrize("mode", ["leader", "sliced"])
@pytest.mark.parametrize("what,c,name,literal", S10_CLASSES, ids=[s[0] for s in S10_CLASSES])
def test_session_10_class_is_proved_and_holds_elsewhere(what, c, name, literal, mode):
    """Each class was "checked at this launch only" before; now proved, and the proved form
    equals the brute force at other launches meeting its facts (both modes)."""
    lit = frozenset(literal)
    op = derive_symbolic(c, mode, lit).operands[name]
    assert op.scope is Scope.PROVED, (what, op.notes)
    syms = symbols(c)
    ran = 0
    rnd = random.Random(10)
    for _ in range(200):
        values = {**other_values(c, rnd), **{k: params(c)[k] for k in lit}}
        at = {syms[k]: v for k, v in values.items()}
        if values != params(c) and all(fact_holds(f, at) for f in op.facts):
            ran += compare_at(c, name, op, mode, values)
        if ran >= 4:
            break
    assert ran >= 1, (what, [str(f) for f in op.facts])
    if what.startswith("specialized"):  # the family it is proved for says so
        assert any(f.kind is FactKind.BOUND and f.other == 2 for f in op.facts), op.facts
