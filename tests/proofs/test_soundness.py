"""Soundness in floor semantics: every answer of simplify, prove_eq, implies and narrow holds at every
point its context allows, checked by an evaluator written here (exact rationals, floor division),
independent of tilec's own.  First the audit's examples (issue 18), then random expression trees with
sums and differences in divisors, signed symbols (declared negative, or with no sign and not marked
signed), negative moduli, rational bounds, order facts between expressions, unevaluated numeric
subterms (``Mod(6, 4)``, ``floor(7/2)`` as written), Min/Max, and implications from relational
premises (substitution of an equality included).  ``TILEC_HYPOTHESIS_EXAMPLES=N`` runs N examples per
test (the default keeps the file well under a minute)."""

from __future__ import annotations

import math
import os
import random
from fractions import Fraction

import pytest
import sympy
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sympy import Add, Mod, Mul, Pow, ceiling, floor

from tilec.proofs import Context, Gcd, implies, narrow, prove_eq, simplify

# -- an evaluator of our own -------------------------------------------------------------------


def ev(e: sympy.Basic, env: dict[sympy.Symbol, int]) -> Fraction | bool:
    """``e`` at ``env`` in floor semantics; ZeroDivisionError where a divisor is 0."""
    if e is sympy.true or e is sympy.false:
        return bool(e)
    if e.is_Rational:
        return Fraction(int(e.p), int(e.q))
    if e.is_Symbol:
        return Fraction(env[e])
    if e.is_Add:
        return sum((ev(a, env) for a in e.args), Fraction(0))  # type: ignore[misc]
    if e.is_Mul:
        out = Fraction(1)
        for a in e.args:
            out *= ev(a, env)  # type: ignore[assignment]
        return out
    if e.is_Pow:
        base = ev(e.base, env)
        k = int(e.exp)
        if k < 0 and base == 0:
            raise ZeroDivisionError
        return base**k  # type: ignore[return-value,operator]
    if isinstance(e, floor):
        return Fraction(math.floor(ev(e.args[0], env)))  # type: ignore[arg-type]
    if isinstance(e, ceiling):
        return Fraction(math.ceil(ev(e.args[0], env)))  # type: ignore[arg-type]
    if isinstance(e, Mod):
        a, m = ev(e.args[0], env), ev(e.args[1], env)
        if m == 0:
            raise ZeroDivisionError
        return a - m * math.floor(a / m)  # type: ignore[operator]
    if isinstance(e, sympy.Min | sympy.Max):
        vals = [ev(a, env) for a in e.args]
        return min(vals) if isinstance(e, sympy.Min) else max(vals)  # type: ignore[type-var]
    if isinstance(e, Gcd):
        return Fraction(math.gcd(int(ev(e.args[0], env)), int(ev(e.args[1], env))))  # type: ignore[arg-type]
    ops = {sympy.Eq: "__eq__", sympy.Ne: "__ne__", sympy.Lt: "__lt__", sympy.Le: "__le__",
           sympy.Gt: "__gt__", sympy.Ge: "__ge__"}
    for cls, op in ops.items():
        if isinstance(e, cls):
            return bool(getattr(ev(e.lhs, env), op)(ev(e.rhs, env)))
    if isinstance(e, sympy.And):
        return all(ev(a, env) for a in e.args)
    if isinstance(e, sympy.Or):
        return any(ev(a, env) for a in e.args)
    if isinstance(e, sympy.Not):
        return not ev(e.args[0], env)
    raise TypeError(f"the test's evaluator does not know {type(e).__name__}: {e}")


def value(e: sympy.Basic, env: dict) -> Fraction | bool | None:
    try:
        return ev(e, env)
    except ZeroDivisionError:
        return None


# -- symbols and contexts ------------------------------------------------------------------------
CM, CN, P = sympy.symbols("CM CN P", integer=True, positive=True)
x, y, r = sympy.symbols("x y r", integer=True, nonnegative=True)
s = sympy.Symbol("s", integer=True)  # signed: may be negative
n = sympy.Symbol("n", integer=True, negative=True)
u = sympy.Symbol("u", integer=True)  # no sign, and no Context.signed: still not nonnegative
SYMS = (CM, CN, P, x, y, r, s, n, u)
RANGES = {CM: (1, 6), CN: (1, 6), P: (1, 7), x: (0, 40), y: (0, 40), r: (0, 12), s: (-12, 12),
          n: (-12, -1), u: (-12, 12)}
MANY = int(os.environ.get("TILEC_HYPOTHESIS_EXAMPLES", "0"))


def ctx_of(kind: int) -> Context:
    ctx = Context().signed(s)
    if kind == 1:
        ctx.bound(r, CN)
    elif kind == 2:
        ctx.bound(r, CN).bound(x, CM * CN)
    elif kind == 3:
        ctx.bound(x, 4 * P).divisible(P, CN)
    elif kind == 4:  # a rational bound: r <= ceil(CN/2) - 1
        ctx.bound(r, CN / 2)
    elif kind == 5:
        ctx.bound(x, sympy.Rational(7, 2)).bound(r, (CN + 1) / 2)
    elif kind == 6:  # an order fact between expressions, and one on a symbol of no sign
        ctx.assume(sympy.Le(x + y, CM * CN) & sympy.Lt(u, 3))
    return ctx


def sample(ctx: Context, rng: random.Random, n: int) -> list[dict[sympy.Symbol, int]]:
    """Up to ``n`` points meeting every fact of ``ctx`` (signed ``s`` ranges over negatives too)."""
    conds = [f.condition() for f in ctx.facts]
    out: list[dict] = []
    for _ in range(n * 30):
        env = {v: rng.randint(*RANGES[v]) for v in SYMS}
        if all(value(c, env) for c in conds):
            out.append(env)
            if len(out) >= n:
                break
    return out


def agree(a: sympy.Basic, b: sympy.Basic, points: list[dict]) -> dict | None:
    """A point where both are defined and differ, or None."""
    for env in points:
        va, vb = value(a, env), value(b, env)
        if va is not None and vb is not None and va != vb:
            return env
    return None


def refutes(p: sympy.Basic, q: sympy.Basic, points: list[dict]) -> dict | None:
    """A point where ``p`` holds and ``q`` does not (both defined), or None."""
    for env in points:
        vp, vq = value(p, env), value(q, env)
        if vp is True and vq is False:
            return env
    return None


def u_div(a: sympy.Expr, d: sympy.Expr, op: type = floor) -> sympy.Expr:
    return op(Mul(a, Pow(d, -1, evaluate=False), evaluate=False), evaluate=False)


# -- the audit's examples ----------------------------------------------------------------------
SUM_IN_DIVISOR = floor(x * CN / (2 * CN * (CM + 1)))


def test_a_sum_in_the_divisor_keeps_the_floor() -> None:
    """``floor(x*CN/(2*CN*(CM+1)))`` was ``x/(2*(CM+1))``, not an integer (0 vs 1/4 at x=CM=CN=1)."""
    for e in (SUM_IN_DIVISOR, ceiling(x * CN / (2 * CN * (CM + 1)))):
        out = simplify(e, Context()).expr
        assert out.atoms(floor, ceiling), out
        assert agree(e, out, sample(Context(), random.Random(0), 400)) is None


def test_narrow_keeps_a_false_condition_false() -> None:
    cond = sympy.Ne(SUM_IN_DIVISOR, 0)
    out = narrow(cond, Context()).expr
    env = {CM: 1, CN: 1, x: 1}
    assert value(cond, env) is False and value(out, env) is False
    assert prove_eq(SUM_IN_DIVISOR, x / (2 * (CM + 1)), Context()) is None


def test_a_divisor_that_may_be_negative_blocks_2_12() -> None:
    """``floor(Mod(x, 2*CN - 8)/2)`` became ``Mod(floor(x/2), CN - 4)``: -3 vs 0 at x=1, CN=1."""
    e = floor(Mod(x, 2 * CN - 8) / 2)
    out = simplify(e, Context()).expr
    assert value(e, {x: 1, CN: 1}) == value(out, {x: 1, CN: 1}) == -3
    assert agree(e, out, sample(Context(), random.Random(1), 400)) is None
    # where the cofactor is positive it still applies
    good = simplify(floor(Mod(x, 2 * CN + 8) / 2), Context())
    assert "2.12" in good.trace.theorems() and good.expr == Mod(floor(x / 2), CN + 4)


@pytest.mark.parametrize("divisor", [2 * CN - 8, CN * (P - 3), s, -2 * P])
def test_each_rule_refuses_a_divisor_that_may_be_negative(divisor: sympy.Expr) -> None:
    ctx = Context().signed(s).bound(r, CN)
    rng = random.Random(2)
    exprs = [
        floor(x / (CN * divisor)) - floor(floor(x / CN) / divisor),  # 2.11
        Mod(Mod(x, CN * divisor, evaluate=False), CN, evaluate=False),  # 2.12
        floor((CN * x + r) / (CN * divisor)),  # tilec.radix-div
        Mod(CN * x + r, CN * divisor),  # tilec.radix-mod / 2.7.2
        floor((divisor * x + r) / divisor),  # 2.15.2
        floor((x + r) / divisor),  # 2.15
    ]
    for e in exprs:
        out = simplify(e, ctx).expr
        assert agree(e, out, sample(ctx, rng, 600)) is None, (e, out)


def test_a_rational_bound_is_not_an_integer_bound() -> None:
    """2.16 rewrote ``floor(x/4) < 3/2`` to ``x < 6``, false at x=6."""
    cond = sympy.Lt(floor(x / 4), sympy.Rational(3, 2))
    out = simplify(cond, Context()).expr
    assert value(cond, {x: 6}) is True and value(out, {x: 6}) is True
    assert simplify(sympy.Lt(floor(x / 4), 2), Context()).expr == sympy.Lt(x, 8)


def test_assume_respects_signed_symbols() -> None:
    assert implies(sympy.Lt(s, 4), sympy.Ge(s, 0), Context().signed(s)) is False
    assert implies(sympy.Lt(x, 4), sympy.Ge(x, 0), Context()) is True


def test_a_negative_modulus_does_not_recurse() -> None:
    e = Mod(P * CN * ceiling(sympy.Integer(12) / CN) + r, -2 * P)
    out = simplify(e, Context()).expr
    assert agree(e, out, sample(Context(), random.Random(3), 400)) is None
    assert simplify(Mod(x + 5, -3), Context()).expr is not None


def test_sympys_nested_mod_bug_is_avoided() -> None:
    """sympy 1.14 evaluates ``Mod(3*Mod(x, 6), 6)`` to ``3*Mod(x, 6)`` (sympy issues 29757/28744):
    the proofs never evaluate through it."""
    raw = Mod(3 * Mod(x, 6, evaluate=False), 6, evaluate=False)
    out = simplify(raw, Context()).expr
    assert value(raw, {x: 2}) == 0 and value(out, {x: 2}) == 0
    assert agree(raw, out, sample(Context(), random.Random(4), 200)) is None
    assert simplify("Mod(3*Mod(x, 6), 6)").expr.subs(sympy.Symbol("x"), 2) == 0


# -- random expression trees -------------------------------------------------------------------
INT = st.sampled_from([0, 1, 2, 3, 5, 7, 12])
# numbers as written, not evaluated: the builders and rules must read them as the numbers they are
UNEVALUATED = st.sampled_from([
    Mod(6, 4, evaluate=False), Mod(-7, 3, evaluate=False), Mod(7, -3, evaluate=False),
    floor(sympy.Rational(7, 2), evaluate=False), ceiling(sympy.Rational(-5, 3), evaluate=False),
    floor(Mul(7, Pow(2, -1, evaluate=False), evaluate=False), evaluate=False),
])
LEAF = st.one_of(st.sampled_from([x, y, r, s, n, u, CM, CN, P]), INT.map(sympy.Integer), UNEVALUATED)
DIVISOR = st.one_of(
    st.sampled_from([2, 3, 4, 8, -2, -3]).map(sympy.Integer),
    st.sampled_from([CN, CM, P, CM * CN, 2 * CN, CN + 1, 2 * (CM + 1), 2 * CN - 8, P - 3, CN * (P - 3),
                     s, -2 * P, CM * CN + CN, s + 2, n, u, CN - n, u * u + 1]),
)


def _sympys_mod(t: tuple) -> sympy.Expr:
    """``k * Mod(e, m)`` through sympy's own evaluation (which may rewrite it, wrongly on nested
    remainders), as written where sympy cannot evaluate it (it raises on some unevaluated trees)."""
    try:
        return t[0] * Mod(t[1], t[2])
    except (TypeError, ValueError):
        return Mul(t[0], Mod(t[1], t[2], evaluate=False), evaluate=False)


def _node(children: st.SearchStrategy) -> st.SearchStrategy:
    two = st.tuples(children, children)
    return st.one_of(
        two.map(lambda t: Add(t[0], t[1], evaluate=False)),
        two.map(lambda t: Add(t[0], Mul(-1, t[1], evaluate=False), evaluate=False)),
        st.tuples(st.sampled_from([2, 3, -1, 4]).map(sympy.Integer) | st.sampled_from([CN, P, s]), children)
        .map(lambda t: Mul(t[0], t[1], evaluate=False)),
        st.tuples(children, DIVISOR).map(lambda t: u_div(*t)),
        st.tuples(children, DIVISOR).map(lambda t: u_div(t[0], t[1], ceiling)),
        st.tuples(children, DIVISOR).map(lambda t: Mod(t[0], t[1], evaluate=False)),
        # the shapes the rules look for: c*a + b over c*d, remainders of remainders, q*(X/q) + X%q
        st.tuples(children, DIVISOR, DIVISOR).map(
            lambda t: Mod(Mod(t[0], Mul(t[1], t[2]), evaluate=False), t[1], evaluate=False)),
        st.tuples(children, DIVISOR, DIVISOR).map(lambda t: u_div(Mod(t[0], Mul(t[1], t[2]), evaluate=False), t[1])),
        st.tuples(children, children, DIVISOR).map(
            lambda t: u_div(Add(Mul(t[2], t[0]), t[1], evaluate=False), Mul(t[2], CN, evaluate=False))),
        st.tuples(children, DIVISOR).map(
            lambda t: Add(Mod(t[0], t[1], evaluate=False), Mul(t[1], u_div(t[0], t[1])), evaluate=False)),
        two.map(lambda t: sympy.Min(t[0], t[1], evaluate=False)),
        two.map(lambda t: sympy.Max(t[0], t[1], evaluate=False)),
        # sympy's own Mod evaluation (wrong on nested remainders) applied to a drawn tree
        st.tuples(st.sampled_from([2, 3, CN]), children, st.sampled_from([6, 4, CN * 2])).map(_sympys_mod),
    )


EXPR = st.recursive(LEAF, _node, max_leaves=6)
CTX = st.integers(0, 6)
SETTINGS = settings(max_examples=max(MANY, 500), deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def _points(kind: int, seed: int) -> tuple[Context, list[dict]]:
    ctx = ctx_of(kind)
    return ctx, sample(ctx, random.Random(seed), 48)


@SETTINGS
@given(e=EXPR, kind=CTX, seed=st.integers(0, 2**16))
def test_random_trees_simplify_soundly(e: sympy.Expr, kind: int, seed: int) -> None:
    ctx, pts = _points(kind, seed)
    out = simplify(e, ctx)
    bad = agree(e, out.expr, pts)
    assert bad is None, f"simplify({e}) = {out.expr} under {ctx}: differ at {bad}\n{out.explain()}"


@settings(SETTINGS, max_examples=max(MANY, 250))
@given(e=EXPR, f=EXPR, kind=CTX, seed=st.integers(0, 2**16))
def test_random_trees_prove_eq_soundly(e: sympy.Expr, f: sympy.Expr, kind: int, seed: int) -> None:
    ctx, pts = _points(kind, seed)
    # a true pair (so proofs happen) and a pair that is usually false
    for a, b in ((e, simplify(e, Context().signed(s)).expr), (e, f)):
        res = prove_eq(a, b, ctx)
        if res is not None:
            bad = agree(a, b, pts)
            assert bad is None, f"prove_eq({a}, {b}) under {ctx} but they differ at {bad}\n{res.explain()}"


REL = st.sampled_from([sympy.Lt, sympy.Le, sympy.Eq, sympy.Ne, sympy.Ge])
BOUND = st.one_of(INT.map(sympy.Integer), st.sampled_from([sympy.Rational(3, 2), sympy.Rational(-1, 2), CN, CM * CN,
                                                            CN / 2, sympy.Rational(5, 2), (CM + 1) / 2, n, u]))


@settings(SETTINGS, max_examples=max(MANY, 250))
@given(rel=REL, e=EXPR, bound=BOUND, rel2=REL, f=EXPR, bound2=BOUND, kind=CTX, seed=st.integers(0, 2**16))
def test_random_conditions_narrow_and_imply_soundly(
    rel: type, e: sympy.Expr, bound: sympy.Expr, rel2: type, f: sympy.Expr, bound2: sympy.Expr, kind: int, seed: int
) -> None:
    ctx, pts = _points(kind, seed)
    cond = rel(e, bound, evaluate=False)
    res = narrow(cond, ctx)
    bad = refutes(res.expr, cond, pts)
    assert bad is None, f"narrow({cond}) = {res.expr} under {ctx}, but false at {bad}\n{res.explain()}"
    simple = simplify(cond, ctx).expr  # exact: equivalent both ways
    assert refutes(simple, cond, pts) is None and refutes(cond, simple, pts) is None, (cond, simple)
    other = rel2(f, bound2, evaluate=False)
    for p, q in ((cond, other), (sympy.Lt(e, bound, evaluate=False), sympy.Lt(u_div(e, 2), bound, evaluate=False))):
        if implies(p, q, ctx):
            bad = refutes(p, q, pts)
            assert bad is None, f"implies({p}, {q}) under {ctx}, but false at {bad}"


@settings(SETTINGS, max_examples=max(MANY, 250))
@given(rel=REL, e=EXPR, f=EXPR, rel2=REL, g=EXPR, bound=BOUND, sym=st.sampled_from([x, y, s, u]),
       k=st.sampled_from([2, 3, 6, CN]), which=st.tuples(st.integers(0, 3), st.integers(0, 6)), kind=CTX,
       seed=st.integers(0, 2**16))
def test_implies_from_relational_premises_soundly(
    rel: type, e: sympy.Expr, f: sympy.Expr, rel2: type, g: sympy.Expr, bound: sympy.Expr, sym: sympy.Symbol,
    k: sympy.Expr, which: tuple[int, int], kind: int, seed: int
) -> None:
    """Premises that relate two expressions, conjunctions of them, and an equality ``sym == e`` that
    ``implies`` substitutes into the goal (the class of ``y == 3*(x % 6)`` => ``y % 6 == y``)."""
    ctx, pts = _points(kind, seed)
    between = rel(e, f, evaluate=False)
    subst = sympy.Eq(sym, e, evaluate=False)
    premises = [between, subst, sympy.And(between, sympy.Lt(sym, bound, evaluate=False)), sympy.And(subst, between)]
    m = Mod(sym, k, evaluate=False)
    goals = [rel2(g, bound, evaluate=False), sympy.Eq(m, sym, evaluate=False), sympy.Lt(m, k - 1, evaluate=False),
             sympy.Eq(u_div(sym, k), 0, evaluate=False), sympy.Le(sympy.Min(sym, f, evaluate=False), e, evaluate=False),
             sympy.Ge(sym, 0, evaluate=False), rel2(Mod(e, k, evaluate=False), bound, evaluate=False)]
    p, q = premises[which[0]], goals[which[1]]
    if implies(p, q, ctx):
        bad = refutes(p, q, pts)
        assert bad is None, f"implies({p}, {q}) under {ctx}, but false at {bad}"
