"""A closed form checked at its launch only says which facts would prove it (issue 28: "the
remainder says which fact would prove it"), or why none was found.

For each such form (``scope`` LAUNCH, and NARROWING: proved sound, not exact) of a random API
schedule, derived as ``tilec masks`` derives
a schedule file: either ``would_prove`` names facts about the parameters, each false here, or
``why_launch`` names the launch's class (closing.LAUNCH_CLASSES), never both, never neither.
Where facts are named, the schedule is rebuilt at the launch the search proved it at
(``would_prove_at``) and derived again from scratch: every named fact holds there (so none is
a fact no launch meets, like ``19 % 6 == 0``), the form there is PROVED and rests on them, and
at other launches meeting its facts it equals the first-principles brute force (both modes).
"""

from __future__ import annotations

import os
import random

import pytest
import sympy
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from tests.multicast.test_proved_generalize import compare_at, fact_holds, other_values
from tests.multicast.test_random_schedules import Case, derive_symbolic, params, symbols
from tilec.transforms.multicast.closing import LAUNCH_CLASSES, launch_class_key, why_class
from tilec.transforms.multicast.records import Scope

MANY = int(os.environ.get("TILEC_HYPOTHESIS_EXAMPLES", "0"))
NO_SHRINK = [Phase.explicit, Phase.reuse, Phase.generate]


def case_at(c: Case, values: dict[str, int]) -> Case:
    """``c``'s schedule at other parameter values (the cluster's shape kept)."""
    return Case(c.order, values["M"], values["N"], values["K"], values["BM"], values["BN"],
                values["BK"], c.cluster, values.get("SMS", values.get("G", values.get(
                    "SPLITS", c.extra))), values.get("CM", c.cm), values.get("CN", c.cn))


def check_reach(c: Case, mode: str, name: str, literal: frozenset[str], rnd: random.Random,
                want: int = 2) -> int:
    """The checks of the module docstring for operand ``name`` of ``c`` (a LAUNCH form);
    returns how many other launches the re-derived form was compared at."""
    op = derive_symbolic(c, mode, literal).operands[name]
    assert op.scope in (Scope.LAUNCH, Scope.NARROWING), (c, name, op.notes)
    closed = op.closed
    assert bool(closed.would_prove) != bool(closed.why_launch), (c, name, closed)
    if closed.why_launch:
        assert why_class(closed.why_launch) in LAUNCH_CLASSES, closed.why_launch
        assert closed.would_prove_at == ()
        return 0
    syms = symbols(c)
    here = {syms[k]: v for k, v in params(c).items()}
    for f in closed.would_prove:
        free = f.free_symbols
        assert free, f"a fact of no parameter: {f}"  # 19 % 6 == 0 is false at every launch
        assert free <= set(syms.values()) - {syms[k] for k in literal}, f
        assert not fact_holds(f, here), f"{f} holds here: it proves nothing more"
    values = {**params(c), **dict(closed.would_prove_at)}
    assert all(values[k] == params(c)[k] for k in literal)  # a number in the schedule stays
    at = {syms[k]: v for k, v in values.items()}
    assert all(fact_holds(f, at) for f in closed.would_prove), (closed.would_prove, values)
    # derived again from scratch where they hold: proved, resting on them
    other = case_at(c, values)
    again = derive_symbolic(other, mode, literal).operands[name]
    assert again.scope is Scope.PROVED, (other, name, again.notes)
    assert {str(f) for f in closed.would_prove} <= {str(f) for f in again.facts}, (
        [str(f) for f in closed.would_prove], [str(f) for f in again.facts])
    # and that proved form equals the brute force at other launches meeting its facts
    ran = 0
    for _ in range(200):
        v = {**other_values(other, rnd), **{k: params(c)[k] for k in literal}}
        if all(fact_holds(f, {syms[k]: x for k, x in v.items()}) for f in again.facts):
            ran += compare_at(other, name, again, mode, v)
        if ran >= want:
            break
    return ran


# one schedule per class of launch form in the bench's sample (bench/bench_masks_random.py)
CLASSES = [
    # persistent, 2 tiles for a cluster of 16: the dead CTAs make B's sharing uniform
    ("tiny grid", Case("persistent", 5, 3, 14, 3, 3, 4, (16, 1, 1), 64), "B", ()),
    # the same with the tile sizes written as numbers: no launch tried proves it
    ("tiny grid, numbers", Case("persistent", 1, 40, 17, 2, 4, 4, (16, 1, 1), 32), "A",
     ("BM", "BN", "N")),
    # 8 tile rows... 9 rows in bands of G = 3 with 18 columns... a short last band
    ("short last band", Case("swizzle", 32, 13, 9, 3, 8, 2, (2, 1, 1), 3), "A", ()),
    ("short last band, 2", Case("swizzle", 18, 31, 17, 4, 4, 2, (2, 1, 1), 3), "A", ()),
    # SMS = 19 on clusters of 6: the last cluster and round are partial
    ("partial rounds", Case("persistent", 36, 4, 16, 4, 3, 3, (6, 1, 1), 19), "B", ()),
    # the same with SMS and CLUSTER written as numbers: the old would_prove was 19 % 6 == 0
    ("partial rounds, numbers", Case("persistent", 36, 4, 16, 4, 3, 3, (6, 1, 1), 19), "B",
     ("SMS", "CLUSTER")),
    # a seed order whose groups are rank cases
    ("not digits", Case("seed", 16, 18, 9, 4, 3, 8, (3, 1, 1), 3, 2, 1), "A", ()),
    # (seed 33x8x4, cluster 3, CM = 3 with CM, K, M numbers was this class until the rank's
    # cut went through the engine's 2.11/2.12: it is proved now, with CM == CLUSTER among its facts)
    ("not narrowed", Case("seed", 32, 37, 17, 4, 4, 3, (4, 1, 1), 16, 1, 3), "B", ()),
    # forms of scope NARROWING (a congruence step narrows): the same search
    ("narrowing", Case("seed", 8, 44, 10, 8, 4, 3, (2, 1, 1), 6, 3, 1), "A", ("CN", "M", "N")),
    ("narrowing, swizzle", Case("swizzle", 15, 12, 4, 4, 8, 8, (2, 1, 1), 4), "A", ()),
]


@pytest.mark.parametrize("mode", ["leader", "sliced"])
@pytest.mark.parametrize("what,c,name,literal", CLASSES, ids=[s[0] for s in CLASSES])
def test_launch_form_names_what_would_prove_it(what, c, name, literal, mode):
    lit = frozenset(literal)
    ran = check_reach(c, mode, name, lit, random.Random(28))
    op = derive_symbolic(c, mode, lit).operands[name]
    assert ran >= 1 or op.closed.why_launch, (what, "compared at no other launch")
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in params(c).items()}
    if op.scope is Scope.NARROWING:
        assert what.startswith("narrowing")
        assert not op.closed.why_launch or why_class(op.closed.why_launch) == "narrowing"
    else:
        assert launch_class_key(op, values) == what.split(",")[0], what


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_issue_28_no_constant_false_fact(mode):
    """SMS = 19 and CLUSTER = 6 written as numbers: B's would_prove was ``19 % 6 == 0`` (the
    exact split of the last cluster's alive predicate), a fact no launch of this schedule
    meets. Now every named fact holds at the launch it was proved at."""
    c = Case("persistent", 36, 4, 16, 4, 3, 3, (6, 1, 1), 19)
    op = derive_symbolic(c, mode, frozenset({"SMS", "CLUSTER"})).operands["B"]
    assert op.scope is Scope.LAUNCH
    assert "19 % 6 == 0" not in [str(f) for f in op.closed.would_prove]
    assert all(f.free_symbols for f in op.closed.would_prove)
    assert check_reach(c, mode, "B", frozenset({"SMS", "CLUSTER"}), random.Random(6)) >= 0


@st.composite
def launch_prone(draw: st.DrawFn) -> tuple[Case, tuple[str, ...]]:
    """Schedules whose forms are often checked at their launch only: persistent and seed
    orders (tiny grids, SMS not a multiple of the cluster) and swizzles with a short last
    band; some parameters written as numbers."""
    order = draw(st.sampled_from(["persistent", "seed", "swizzle"]))
    BM, BN, BK = (draw(st.sampled_from([2, 3, 4, 8])) for _ in range(3))
    M, N, K = draw(st.integers(1, 40)), draw(st.integers(1, 48)), draw(st.integers(1, 16))
    cs = draw(st.sampled_from([2, 3, 4, 6, 8, 16]))
    if order == "swizzle":
        tiles = -(-M // BM) * -(-N // BN)
        cs = next(d for d in (8, 6, 4, 3, 2, 1) if tiles % d == 0 and d <= cs)
        c = Case(order, M, N, K, BM, BN, BK, (cs, 1, 1), draw(st.integers(2, 4)))
    else:
        sms = cs * draw(st.integers(1, 4)) + draw(st.sampled_from([0, 1]))
        cm, cn = (draw(st.integers(1, 3)), draw(st.integers(1, 3))) if order == "seed" else (1, 1)
        c = Case(order, M, N, K, BM, BN, BK, (cs, 1, 1), sms, cm, cn)
    literal = draw(st.sampled_from([(), (), ("SMS",), ("BN", "N"), ("CLUSTER",)]))
    return c, tuple(k for k in literal if k in params(c))


@settings(max_examples=max(MANY, 12), deadline=None, suppress_health_check=list(HealthCheck),
          phases=NO_SHRINK)
@given(drawn=launch_prone(), mode=st.sampled_from(["leader", "sliced"]),
       seed=st.integers(0, 2**32 - 1))
def test_random_launch_forms_name_facts_that_prove_them(drawn, mode, seed):
    c, literal = drawn
    lit = frozenset(literal)
    if c.cluster[0] == 1:
        return
    d = derive_symbolic(c, mode, lit)
    for name, op in d.operands.items():
        if op.scope in (Scope.LAUNCH, Scope.NARROWING):
            check_reach(c, mode, name, lit, random.Random(seed), want=1)
