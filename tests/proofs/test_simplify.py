"""Simplifier results against oracles: brute force on small domains, z3 where it decides."""

from __future__ import annotations

import pytest
import sympy
from sympy import Mod, ceiling, floor

from tilec.proofs import Context, bounds, fmt, narrow, prove_eq, simplify

from .oracles import brute_equal, brute_implies, z3_equal

P = {n: sympy.Symbol(n, integer=True, positive=True) for n in ("CM", "CN", "RN", "SMs", "C", "n", "m", "E")}
N = {n: sympy.Symbol(n, integer=True, nonnegative=True) for n in ("I", "x", "r", "rank", "i_rt", "j")}
CM, CN, SMs, C, n, m, E = P["CM"], P["CN"], P["SMs"], P["C"], P["n"], P["m"], P["E"]
I, x, r, rank, i_rt, j = N["I"], N["x"], N["r"], N["rank"], N["i_rt"], N["j"]  # noqa: E741

# (expression, context, expected result or None, a theorem the trace must name)
CASES = [
    (floor(Mod(I, CM * CN) / CN), Context(), Mod(floor(I / CN), CM), "2.12"),
    (Mod(Mod(I, CM * CN), CN, evaluate=False), Context(), Mod(I, CN), "2.12"),
    (floor(I / (CM * CN)) - floor(floor(I / CN) / CM), Context(), 0, "2.11"),
    (floor((i_rt * SMs + rank) / CN), Context().divisible(SMs, CN), None, "2.15.1"),
    (Mod(i_rt * SMs + rank, CN), Context().divisible(SMs, CN), Mod(rank, CN), "2.7.1"),
    (floor((CN * x + r) / CN), Context().bound(r, CN), x, "2.15.2"),
    (Mod(CN * x + r, CN * CM), Context().bound(r, CN), None, "2.7.2"),
    (Mod(r, C), Context().bound(r, C), r, "2.5"),
    (floor(r / C), Context().bound(r, C), 0, "2.5"),
    (Mod(i_rt * SMs, CN), Context().divisible(SMs, CN), 0, "2.9"),
    (floor(i_rt * SMs / CN), Context().divisible(SMs, CN), i_rt * floor(SMs / CN), "2.10"),
    (floor(x / floor(SMs / CN)), Context().divisible(SMs, CN), floor(x * CN / SMs), "2.14"),
    (sympy.Lt(floor(x / CN), C), Context(), sympy.Lt(x, C * CN), "2.16"),
    (ceiling(ceiling(E / n) / m), Context(), ceiling(E / (m * n)), "ceil.3"),
    (ceiling(SMs / CN), Context().divisible(SMs, CN), floor(SMs / CN), "ceil.4"),
    (floor((x + j) / 8), Context().bound(j, 4).divisible(x, 8), None, "2.15.2"),
]


@pytest.mark.parametrize("expr,ctx,expected,thm", CASES, ids=[fmt(c[0]) for c in CASES])
def test_simplification_is_sound_and_named(expr, ctx, expected, thm) -> None:  # type: ignore[no-untyped-def]
    res = simplify(expr, ctx)
    assert thm in res.trace.theorems(), res.explain()
    if expected is not None:
        assert sympy.simplify(res.expr - expected) == 0 if isinstance(expected, sympy.Expr | int) else res.expr == expected
    assert res.expr != expr
    if isinstance(expr, sympy.Expr):
        assert brute_equal(expr, res.expr, ctx, n=2000) is None
        assert z3_equal(expr, res.expr, ctx) in (True, None)
    else:
        assert brute_implies(expr, res.expr, ctx) is None and brute_implies(res.expr, expr, ctx) is None
    for step in res.trace:  # every step is itself sound on the sampled domain
        if isinstance(step.before, sympy.Expr) and step.exact:
            assert brute_equal(step.before, step.after, ctx, n=400) is None, str(step)


def test_z3_decides_linear_cases() -> None:
    ctx = Context().bound(r, CN)
    res = simplify(floor((8 * x + r) / 8), Context().bound(r, 8))
    assert res.expr == x
    assert z3_equal(floor((8 * x + r) / 8), res.expr, Context().bound(r, 8)) is True
    assert z3_equal(floor(x / 4), floor(x / 2), ctx) is False


def test_every_step_has_discharged_conditions_and_text() -> None:
    res = simplify(floor((i_rt * SMs + rank) / CN), Context().divisible(SMs, CN))
    text = str(res.trace)
    assert "2.15.1" in text and "SMs % CN == 0" in text
    assert res.facts_used == ["SMs % CN == 0"]
    for step in res.trace:
        assert all(how for _cond, how in step.conditions)


def test_unprovable_side_condition_blocks_the_rewrite() -> None:
    res = simplify(floor((i_rt * SMs + rank) / CN), Context())
    assert res.expr == floor((i_rt * SMs + rank) / CN) and not res.trace


def test_bounds_helper() -> None:
    ctx = Context().bound(r, C)
    assert bounds(Mod(I, CN), ctx) == (0, CN - 1)
    lo, hi = bounds(r + 2 * Mod(I, 4), ctx)
    assert lo == 0 and hi == C + 5
    assert bounds(x, ctx)[1] is sympy.oo


def test_prove_eq_refuses_false_equalities() -> None:
    assert prove_eq(floor(I / CN), Mod(I, CN), Context()) is None
    assert prove_eq(Mod(I + SMs, CN), Mod(I, CN), Context()) is None  # needs SMs % CN == 0
    assert prove_eq(Mod(I + SMs, CN), Mod(I, CN), Context().divisible(SMs, CN)) is not None


def test_narrow_never_weakens_on_random_shapes() -> None:
    ctx = Context().bound(r, 12).bound(j, 12)
    for cond in [
        sympy.Eq(floor(r / 4), floor(j / 4)),
        sympy.Eq(Mod(floor(r / 2), 3), Mod(floor(j / 2), 3)),
        sympy.Eq(floor(floor(r / 2) / 3) * 3 + Mod(floor(r / 2), 3), floor(floor(j / 2) / 3) * 3 + Mod(floor(j / 2), 3)),
        sympy.Eq(Mod(r + 6 * x, 3), Mod(j + 6 * x, 3)),
    ]:
        res = narrow(cond, ctx)
        assert brute_implies(res.expr, cond, ctx) is None, res.explain()
