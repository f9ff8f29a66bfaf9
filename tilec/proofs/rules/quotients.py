"""Rules on one quotient or remainder (the ``structure`` phase): a small dividend (2.5), a
multiple (2.9), a remainder of a remainder (2.12), nested quotients (2.11), a common factor (2.13),
a quotient by an exact quotient (2.14), nested and divisible ceil divisions (ceil.3, ceil.4); and
the cuts at a divisor the caller names (2.11, 2.12: :data:`~.BY_DIVISOR`, never run by the
driver on its own).  Each rule's comment is its ``lhs -> rhs`` and the theorem it instantiates."""

from __future__ import annotations

import sympy

from .. import theorems as T
from ..build import (
    canon,
    exact_quotient,
    mk_ceiling,
    mk_div,
    mk_mod,
    mono_gcd,
    u_add,
    u_div,
    u_mod,
    u_mul,
)
from ..expand import frac
from .match import Env, Rewrite


# r % a -> r   (2.5)
def rule_2_5_mod(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    return env.rewrite("2.5", e, num, {T.r: num, T.a: den})


# r / a -> 0   (2.5)
def rule_2_5_floor(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    return env.rewrite("2.5", e, sympy.Integer(0), {T.r: num, T.a: den})


# a % b -> 0   (2.9)
def rule_2_9(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    if num.is_number:
        return None
    return env.rewrite("2.9", e, sympy.Integer(0), {T.a: num, T.b: den})


def _cofactor(big: sympy.Expr, small: sympy.Expr, numbers: bool = False) -> sympy.Expr | None:
    """``big / small`` when it is a polynomial with integer coefficients other than 1 (for two
    numbers only when ``numbers``)."""
    if small == 1 or (small.is_number and big.is_number and not numbers):
        return None
    q = exact_quotient(big, small)
    return q if q is not None and q != 1 else None


# a % (b*c) -> a%b + ((a/b)%c)*b   (2.12), then (...)/b -> (a/b)%c   (2.15.1, 2.5)
def rule_2_12_floor(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    b = den
    x, big = num.args
    c = _cofactor(big, b, numbers=True)
    if c is None:
        return None
    digit = mk_mod(mk_div(x, b), c)
    low = mk_mod(x, b)
    s1 = env.step("2.12", num, low + b * digit, {T.a: x, T.b: b, T.c: c})
    if s1 is None:
        return None
    mid = u_div(u_add(low, u_mul(b, digit)), b)
    split = u_add(u_div(low, b), digit)
    s2 = env.step("2.15.1", mid, split, {T.a: b * digit, T.b: low, T.c: b})
    s3 = env.step("2.5", mk_div(low, b), sympy.Integer(0), {T.r: low, T.a: b})
    if s2 is None or s3 is None:
        return None
    return digit, [s1, s2, s3]


# (a % (b*c)) % b -> a % b   (2.12, then 2.7.1)
def rule_2_12_mod(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    (x, big), b = num.args, den
    c = _cofactor(big, b, numbers=True)
    if c is None:
        return None
    digit = mk_mod(mk_div(x, b), c)
    low = mk_mod(x, b)
    s1 = env.step("2.12", e.args[0], low + b * digit, {T.a: x, T.b: b, T.c: c})
    mid = u_mod(u_add(low, u_mul(b, digit)), b)
    s2 = env.step("2.7.1", mid, low, {T.a: b * digit, T.b: low, T.c: b})
    if s1 is None or s2 is None:
        return None
    return low, [s1, s2]


# a/(b*c) -> a/b/c   (2.11), only where a/b already occurs in the expression
def rule_2_11(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    for b in sorted(env.quotients.get(num, ()), key=sympy.default_sort_key):
        c = _cofactor(den, b) if b != den else None
        if c is not None:
            out = env.rewrite("2.11", e, mk_div(mk_div(num, b), c), {T.a: num, T.b: b, T.c: c})
            if out is not None:
                return out
    return None


# a % b -> ((a/d) % (b/d))*d   (2.13), d a symbolic common factor
def rule_2_13(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    x, m = num, den
    d = mono_gcd(x, m)
    if d == 1 or d.is_number or d == m:
        return None
    xd, md = exact_quotient(x, d), exact_quotient(m, d)
    if xd is None or md is None:
        return None
    after = mk_mod(xd, md) * d
    return env.rewrite("2.13", e, after, {T.a: x, T.b: m, T.d: d})


# a/(b/c) -> (a*c)/b   (2.14)
def rule_2_14(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    b, c = frac(den)
    return env.rewrite("2.14", e, mk_div(num * c, b), {T.a: num, T.b: b, T.c: c})


# ceil(ceil(a/b)/c) -> ceil(a/(b*c))   (ceil.3)
def rule_ceil_3(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    a, b = frac(num)
    return env.rewrite("ceil.3", e, mk_ceiling(a / (b * c)), {T.a: a, T.b: b, T.c: c})


# ceil(a/b) -> a/b   (ceil.4), b divides a
def rule_ceil_4(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    a, b = num, den
    return env.rewrite("ceil.4", e, mk_div(a, b), {T.a: a, T.b: b})


# -- cut at a divisor the caller names (Env.divisors): a/(b*c), a%(b*c) with b*c written d ---------
def _cuts(den: sympy.Expr, env: Env) -> list[tuple[sympy.Expr, sympy.Expr, sympy.Basic]]:
    """``(b, d/b, d % b == 0)`` for each named divisor ``b`` other than ``d`` itself, in order:
    ``d/b`` written as the quotient ``floor(d/b)`` (it is exact where the guard holds)."""
    return [(b, u_div(den, b), sympy.Eq(u_mod(den, b), 0, evaluate=False))
            for b in env.divisors if b != den]


# a/d -> (a/b)/(d/b)   (2.11 with b*c = d), b a named divisor of d
def rule_2_11_by(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    for b, c, guard in _cuts(den, env):
        after = u_div(u_div(num, b), c)
        st = env.step("2.11", e, after, {T.a: num, T.b: b, T.c: canon(c)}, guard=(guard,))
        if st is not None:
            return after, [st]
    return None


# a%d -> a%b + ((a/b)%(d/b))*b   (2.12 with b*c = d), b a named divisor of d
def rule_2_12_by(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    for b, c, guard in _cuts(den, env):
        after = u_add(u_mod(num, b), u_mul(b, u_mod(u_div(num, b), c)))
        st = env.step("2.12", e, after, {T.a: num, T.b: b, T.c: canon(c)}, guard=(guard,))
        if st is not None:
            return after, [st]
    return None
