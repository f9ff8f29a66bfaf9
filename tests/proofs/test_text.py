"""tilec.proofs.trace.text: str() of an expression with each sub-expression's text kept."""

from __future__ import annotations

import sympy
from hypothesis import given, settings
from hypothesis import strategies as st
from sympy import Eq, Lt, Mod, Piecewise, ceiling, floor

from tilec.proofs.trace import text

_S = [sympy.Symbol(n, integer=True, positive=True) for n in ("M", "BM", "CN", "SMS")]
_R = sympy.Symbol("rank", integer=True, nonnegative=True)
_ATOMS = st.sampled_from([*_S, _R, sympy.Integer(-3), sympy.Integer(2), sympy.Rational(1, 2)])


def _expr(depth: int) -> st.SearchStrategy[sympy.Expr]:
    if depth == 0:
        return _ATOMS
    sub = _expr(depth - 1)
    return st.one_of(
        sub,
        st.builds(lambda a, b: a + b, sub, sub),
        st.builds(lambda a, b: a - b, sub, sub),
        st.builds(lambda a, b: -a * b, sub, sub),
        st.builds(lambda a, b: floor(a / b), sub, st.sampled_from(_S)),
        st.builds(lambda a, b: ceiling(a / b), sub, st.sampled_from(_S)),
        st.builds(lambda a, b: Mod(a, b), sub, st.sampled_from(_S)),
        st.builds(lambda a: 2**a, st.sampled_from([_R, *_S])),
    )


@settings(max_examples=150, deadline=None)
@given(_expr(3), _expr(2))
def test_text_is_str_wherever_a_sub_expression_stands(a: sympy.Expr, b: sympy.Expr) -> None:
    # a printed alone first, then inside larger expressions: its kept text must fit there too
    assert text(a) == str(a)
    for whole in (a + b, -a * b, Eq(a, b), Lt(a, b + 1), Piecewise((a, Lt(b, 0)), (b, True)),
                  sympy.Tuple(a, -a, b)):
        assert text(whole) == str(whole)


def test_text_follows_sympys_evaluate_switch() -> None:
    # the printer builds expressions (a negated coefficient), so a text kept with evaluation on
    # must not be reused with it off
    M, BM, CN, SMS = _S
    e = -2 * M * floor(SMS / CN) + Mod(_R, CN) - BM
    assert text(e) == str(e)
    with sympy.evaluate(False):
        u = sympy.Add(sympy.Mul(-2, M), e, sympy.Mul(-1, floor(SMS / CN)))
        assert text(u) == str(u)
        assert text(e) == str(e)
    assert text(u) == str(u)
