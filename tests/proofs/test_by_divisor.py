"""The rules a caller directs at a divisor it names (``BY_DIVISOR``: 2.11 and 2.12 cutting a
quotient or remainder at a digit boundary, 2.16 dividing a bound), applied by ``rewrite_by``:
each rewrite equals its input wherever the context holds (brute force and z3), each guard and
side condition is needed (without it a counterexample exists and the rule refuses), and the
positivity lemma they discharge ``d/b > 0`` with is sound and stays out of the driver's own
reasoning."""

from __future__ import annotations

import pytest
import sympy
from sympy import Lt, Mod, ceiling, floor

from tilec.proofs import BY_DIVISOR, THEOREMS, Context, Fact, FactKind, Reasoner, rewrite_by

from .oracles import brute_equal, points, scalar, symbols_of, z3_equal

P = {n: sympy.Symbol(n, integer=True, positive=True) for n in ("N", "BN", "CN", "CM", "G")}
N, BN, CN, CM, G = (P[n] for n in ("N", "BN", "CN", "CM", "G"))
x, t, rank = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("x", "t", "rank"))
CUT_DIV, CUT_MOD, BOUND = (
    "2.11 a/d -> (a/b)/(d/b)", "2.12 a%d -> a%b + ((a/b)%(d/b))*b", "2.16 i < E -> i/d < E/d")
CUTS = [CUT_DIV, CUT_MOD]


def test_each_directed_rule_instantiates_a_theorem() -> None:
    assert {r.theorem for r in BY_DIVISOR.values()} == {"2.11", "2.12", "2.16"} <= set(THEOREMS)
    assert [BY_DIVISOR[n].theorem for n in (CUT_DIV, CUT_MOD, BOUND)] == ["2.11", "2.12", "2.16"]


# (expression, divisor named, context): a symbolic digit boundary held by a stated fact, one
# held by factorisation, numbers, and a quotient of a sum over a remainder (nested)
CASES = [
    (floor((t + rank) / ceiling(N / BN)), CN, Context().divisible(ceiling(N / BN), CN)),
    (Mod(t + rank, ceiling(N / BN)), CN, Context().divisible(ceiling(N / BN), CN)),
    (floor(x / (CM * CN)), CN, Context()),
    (Mod(x, CM * CN), CM, Context()),
    (floor(x / 12), 4, Context()),
    (Mod(floor(x / 6), 4) + Mod(x, 6), 2, Context()),
    (Mod(floor((t + rank) / (G * ceiling(N / BN))), ceiling(N / BN)), G,
     Context().divisible(ceiling(N / BN), G)),
]


@pytest.mark.parametrize("k", range(len(CASES)))
def test_cuts_equal_their_input_where_the_context_holds(k: int) -> None:
    e, b, ctx = CASES[k]
    res = rewrite_by(e, ctx, CUTS, [b])
    assert res.trace, res.explain()  # each case is cut somewhere
    assert set(res.trace.theorems()) <= {"2.11", "2.12"}
    assert brute_equal(e, res.expr, ctx, n=1500, hi=9) is None, res.explain()
    if not e.atoms(ceiling):  # z3's ceiling needs a positive divisor it can see
        assert z3_equal(e, res.expr, ctx) is not False


def test_a_cut_reports_the_divisibility_it_rests_on_as_a_fact() -> None:
    e, b, ctx = CASES[0]
    res = rewrite_by(e, ctx, CUTS, [b])
    assert str(res.expr) == str(floor(floor((t + rank) / CN) / floor(ceiling(N / BN) / CN)))
    assert Fact(FactKind.DIVISIBLE, ceiling(N / BN), CN) in res.used_facts
    # the side condition c > 0 of 2.11 with c = ceilDiv(N, BN)/CN: from the same fact
    assert "product of quotients of positives" in res.explain()


def test_a_cut_needs_the_divisor_to_divide() -> None:
    e = floor((t + rank) / ceiling(N / BN))
    # without the fact the rule refuses: the cut is wrong where CN does not divide ceilDiv(N, BN)
    assert not rewrite_by(e, Context(), CUTS, [CN]).trace
    assert not rewrite_by(floor(x / 10), Context(), CUTS, [4]).trace
    assert brute_equal(floor(x / 10), floor(floor(x / 4) / 2), Context(), hi=20) is not None  # x = 8
    assert not rewrite_by(Mod(x, 10), Context(), CUTS, [4]).trace
    assert brute_equal(Mod(x, 10), Mod(x, 4) + 4 * Mod(floor(x / 4), 2), Context(), hi=20) is not None


def test_the_first_divisor_that_divides_is_taken_and_the_divisor_itself_never() -> None:
    ctx = Context().divisible(ceiling(N / BN), CN)
    res = rewrite_by(floor(x / ceiling(N / BN)), ctx, [CUT_DIV], [CM, ceiling(N / BN), CN, G])
    assert res.trace.theorems() == ["2.11"]
    assert str(res.expr) == str(floor(floor(x / CN) / floor(ceiling(N / BN) / CN)))


def test_holding_cuts_only_quotients_of_the_named_symbols() -> None:
    e = floor((t + rank) / (CM * CN)) + floor(t / (CM * CN)) + Mod(rank, CM * CN)
    res = rewrite_by(e, Context(), CUTS, [CN], holding=frozenset({rank}))
    assert sorted(res.trace.theorems()) == ["2.11", "2.12"]
    assert floor(t / (CM * CN)) in res.expr.args  # t alone: left as it is
    assert brute_equal(e, res.expr, Context(), n=1500, hi=9) is None


def test_cuts_nest_bottom_up() -> None:
    e, b, ctx = CASES[6]
    res = rewrite_by(e, ctx, CUTS, [b])
    assert res.trace.theorems() == ["2.11", "2.12"]  # the inner quotient first, then around it
    assert res.trace[1].before.args[0] == res.trace[0].after


BOUNDS = [
    (Lt(t + rank, CM * CN * ceiling(N / BN)), CN, Context()),
    (Lt(t + rank, ceiling(N / BN)), CN, Context().divisible(ceiling(N / BN), CN)),
    (Lt(x, 12), 4, Context()),
    (Lt(x + rank, G * ceiling(N / BN)), ceiling(N / BN), Context()),
]


@pytest.mark.parametrize("k", range(len(BOUNDS)))
def test_a_divided_bound_is_equivalent_where_the_divisor_divides_it(k: int) -> None:
    e, d, ctx = BOUNDS[k]
    res = rewrite_by(e, ctx, [BOUND], [d])
    assert res.trace.theorems() == ["2.16"], res.explain()
    assert isinstance(res.expr, sympy.StrictLessThan) and isinstance(res.expr.lhs, sympy.floor)
    assert brute_equal(e, res.expr, ctx, n=1500, hi=9) is None, res.explain()
    if not e.atoms(ceiling):
        assert z3_equal(e, res.expr, ctx) is not False


def test_a_bound_is_divided_only_by_a_divisor_of_it() -> None:
    assert not rewrite_by(Lt(x, 10), Context(), [BOUND], [4]).trace
    assert brute_equal(Lt(x, 10), Lt(floor(x / 4), 2), Context(), hi=20) is not None  # x = 8, 9
    assert not rewrite_by(Lt(x, ceiling(N / BN)), Context(), [BOUND], [CN]).trace
    ctx = Context().divisible(ceiling(N / BN), CN)
    res = rewrite_by(Lt(x, ceiling(N / BN)), ctx, [BOUND], [CN])
    assert Fact(FactKind.DIVISIBLE, ceiling(N / BN), CN) in res.used_facts


POSITIVE = [  # (quotient, context): positive wherever the context holds, interval reasoning aside
    (ceiling(N / BN), Context()),
    (G * ceiling(N / BN), Context()),
    (floor(ceiling(N / BN) / CN), Context().divisible(ceiling(N / BN), CN)),
    (floor(G * ceiling(N / BN) / CN), Context().divisible(ceiling(N / BN), CN)),
    (floor(N / CN), Context().divisible(N, CN)),
]


@pytest.mark.parametrize("k", range(len(POSITIVE)))
def test_the_positive_quotient_lemma_is_sound(k: int) -> None:
    q, ctx = POSITIVE[k]
    cond = sympy.Gt(q, 0, evaluate=False)
    assert Reasoner.for_context(ctx).positive_quotient(cond, []) is not None
    syms = symbols_of(q, *(f.condition() for f in ctx.facts))
    fq = scalar(q, syms)
    pts = list(points(syms, ctx, n=800, hi=9))
    assert len(pts) > 20 and all(fq(*[p[s] for s in syms]) > 0 for p in pts)


def test_the_positive_quotient_lemma_needs_the_divisibility_and_stays_out_of_why() -> None:
    r = Reasoner.for_context(Context())
    assert r.positive_quotient(sympy.Gt(floor(N / CN), 0, evaluate=False), []) is None  # N < CN
    assert r.positive_quotient(sympy.Gt(ceiling(x / CN), 0, evaluate=False), []) is None  # x = 0
    # the driver's own rules discharge with why, which the lemma leaves as it was (what tilec
    # prints from their proofs does not change)
    ctx = Context().divisible(ceiling(N / BN), CN)
    assert Reasoner.for_context(ctx).why(
        sympy.Gt(floor(ceiling(N / BN) / CN), 0, evaluate=False), []) is None
