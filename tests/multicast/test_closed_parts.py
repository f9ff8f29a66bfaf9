"""Pieces of the closed-form derivation checked on their own: 2.11 folding, fact texts."""

from __future__ import annotations

import itertools

import sympy

from tilec.transforms.multicast_closed import (
    divisible_text,
    fact_expr,
    fact_sympy_text,
    fold_nested_floors,
)

X = sympy.Symbol("x", integer=True, nonnegative=True)
A, B = sympy.symbols("A B", integer=True, positive=True)


def _equal_on_grid(e1: sympy.Expr, e2: sympy.Expr) -> bool:
    for x, a, b in itertools.product(range(0, 40, 3), range(1, 6), range(1, 5)):
        at = {X: x, A: a, B: b}
        if e1.xreplace(at) != e2.xreplace(at):
            return False
    return True


def test_fold_symbolic_divisors():
    e = sympy.floor(sympy.floor(X / A) / B)
    folded = fold_nested_floors(e)
    assert folded == sympy.floor(X / (A * B))
    assert _equal_on_grid(e, folded)


def test_fold_numeric_and_summed_dividends():
    # floor(floor((x + 3)/2)/B): sympy distributes the 1/2 over the sum
    e = sympy.floor(sympy.floor((X + 3) / 2) / B)
    folded = fold_nested_floors(e)
    assert folded.count(sympy.floor) == 1
    assert _equal_on_grid(e, folded)


def test_three_levels_fold_to_one():
    e = sympy.floor(sympy.floor(sympy.floor(X / A) / B) / 3)
    folded = fold_nested_floors(e)
    assert folded == sympy.floor(X / (3 * A * B))
    assert _equal_on_grid(e, folded)


def test_a_floor_inside_a_sum_is_not_folded():
    # floor(floor(x/A)/B + 1) = floor(x/(A*B)) + 1 holds, but it is not 2.11's shape: left alone
    e = sympy.floor(sympy.floor(X / A) / B + sympy.Rational(1, 2))
    assert fold_nested_floors(e) == e


def test_fact_texts_read_back_as_the_same_condition():
    cm, cn, cl = sympy.symbols("CM CN CLUSTER", integer=True, positive=True)
    text = divisible_text(cl, cm * cn)
    assert text == "CLUSTER % (CM*CN) == 0"
    cond = sympy.sympify(fact_sympy_text(text), locals={"CM": cm, "CN": cn, "CLUSTER": cl})
    assert cond == fact_expr(text) == sympy.Eq(sympy.Mod(cl, cm * cn), 0)
    for c, m, n in itertools.product(range(1, 9), range(1, 4), range(1, 4)):
        assert bool(cond.xreplace({cl: c, cm: m, cn: n})) == (c % (m * n) == 0)
