"""Rules decided by order: a bound on a quotient as a bound on its dividend (2.16) and, at a
divisor the caller names, the other way (:data:`~.BY_DIVISOR`), the minimum or maximum of ordered
terms (tilec.min, tilec.max), a quotient pinned by its dividend's bounds (tilec.const-div,
tilec.const-mod)."""

from __future__ import annotations

import sympy
from sympy import floor

from .. import theorems as T
from ..build import mk_minmax, mk_rel, u_mod
from ..expand import frac
from .match import Env, Rewrite


# i/d < D -> i < D*d   (2.16), and its negation D <= i/d -> D*d <= i
def rule_2_16(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    if isinstance(e, sympy.StrictLessThan) and isinstance(e.lhs, floor):
        q, bound, make = e.lhs, e.rhs, (lambda i, Dd: mk_rel(sympy.Lt, i, Dd))
    elif isinstance(e, sympy.StrictGreaterThan) and isinstance(e.rhs, floor):
        q, bound, make = e.rhs, e.lhs, (lambda i, Dd: mk_rel(sympy.Lt, i, Dd))
    elif isinstance(e, sympy.GreaterThan) and isinstance(e.lhs, floor):
        q, bound, make = e.lhs, e.rhs, (lambda i, Dd: mk_rel(sympy.Ge, i, Dd))
    elif isinstance(e, sympy.LessThan) and isinstance(e.rhs, floor):
        q, bound, make = e.rhs, e.lhs, (lambda i, Dd: mk_rel(sympy.Ge, i, Dd))
    else:
        return None
    i, d = frac(q)
    if d == 1:
        return None
    return env.rewrite("2.16", e, make(i, bound * d), {T.i: i, T.d: d, T.D: bound})


# i < E -> i/d < E/d   (2.16 read right to left, with D*d = E), d a named divisor of E
def rule_2_16_by(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    if not isinstance(e, sympy.StrictLessThan):
        return None
    i, bound = e.args
    for d in env.divisors:
        # sympy's own quotients: the relation as the caller's expression writes it (E/d folds
        # to a product where d is a factor of E)
        D = floor(bound / d)
        after = sympy.Lt(floor(i / d), D)
        guard = sympy.Eq(u_mod(bound, d), 0, evaluate=False)
        st = env.step("2.16", e, after, {T.i: i, T.d: d, T.D: D}, guard=(guard,))
        if st is not None:
            return after, [st]
    return None


# min(a, b) -> a where a <= b   (tilec.min);  max(a, b) -> a where b <= a   (tilec.max)
def rule_min_max(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    number = "tilec.min" if isinstance(e, sympy.Min) else "tilec.max"
    for keep in e.args:
        for drop in e.args:
            if drop is keep:
                continue
            after = mk_minmax(e.func, [t for t in e.args if t is not drop])
            st = env.step(number, u_minmax(e.func, keep, drop), keep, {T.a: keep, T.b: drop})
            if st is not None:
                return after, [st]
    return None


def u_minmax(func: type, a: sympy.Expr, b: sympy.Expr) -> sympy.Expr:
    return func(a, b, evaluate=False)


# a/c -> k, a%c -> a - k*c where k*c <= a < (k+1)*c   (tilec.const-div, tilec.const-mod)
def rule_const_quotient(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    number = "tilec.const-div" if isinstance(e, floor) else "tilec.const-mod"
    if not den.is_Integer or den <= 1 or num.is_number:
        return None
    lo, hi = env.reasoner.bounds(num, [])
    if not (lo.is_Integer and hi.is_Integer) or lo // den != hi // den:
        return None
    k = sympy.Integer(lo // den)
    after = k if number == "tilec.const-div" else num - k * den
    return env.rewrite(number, e, after, {T.a: num, T.c: den, T.k: k})
