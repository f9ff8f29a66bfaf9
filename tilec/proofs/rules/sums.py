"""Rules that distribute a quotient or remainder over a sum or product (the ``distribute``
phase): 2.15, 2.15.1 and 2.15.2 for quotients, 2.7.1 and 2.7.2 for remainders, 2.10 for a
multiple, and the mixed-radix pairs ``(c*a + b)/(c*d)`` and ``(c*a + b)%(c*d)``."""

from __future__ import annotations

import sympy

from .. import theorems as T
from ..build import exact_quotient, mk_div, mk_mod, mono_gcd, u_add, u_div, u_mod, u_mul
from .match import Env, Rewrite


def _divisible_split(terms: tuple, c: sympy.Expr, env: Env) -> tuple[list, list]:
    div: list[sympy.Expr] = []
    rest: list[sympy.Expr] = []
    for t in terms:
        (div if env.reasoner.divides(c, t, []) is not None else rest).append(t)
    return div, rest


def _low_digit_splits(num: sympy.Expr, den: sympy.Expr) -> list[tuple[sympy.Expr, sympy.Expr, sympy.Expr, sympy.Expr]]:
    """Ways to read ``num`` as ``c*a + b`` and ``den`` as ``c*d`` (``c`` a common factor, ``d != 1``)."""
    if not num.is_Add or den == 1:
        return []
    out = []
    seen: set[sympy.Expr] = set()
    for t in num.args:
        c = mono_gcd(den, t)
        if c == 1 or c in seen or c == den or c == -den:
            continue
        seen.add(c)
        d = exact_quotient(den, c)
        high = [q for q in (exact_quotient(u, c) for u in num.args) if q is not None]
        low = [u for u in num.args if exact_quotient(u, c) is None]
        if d is None or not low or not high:
            continue
        out.append((c, sympy.Add(*high), sympy.Add(*low), d))
    return out


# (c*a + b)/(c*d) -> (c*a + b)/c/d -> a/d   (2.11, then 2.15.2), 0 <= b < c
def rule_radix_div(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    for c, a, b, d in _low_digit_splits(num, den):
        s1 = env.step("2.11", e, u_div(u_div(num, c), d), {T.a: num, T.b: c, T.c: d})
        if s1 is None:
            continue
        s2 = env.step("2.15.2", u_div(num, c), a, {T.a: c * a, T.b: b, T.c: c})
        if s2 is None:
            continue
        return mk_div(a, d), [s1, s2]
    return None


# (c*a + b)%(c*d) -> (c*a + b)%c + c*(((c*a + b)/c)%d) -> b + c*(a%d)   (2.12; 2.7.1, 2.5; 2.15.2)
def rule_radix_mod(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    for c, a, b, d in _low_digit_splits(num, den):
        low, high = u_mod(num, c), u_div(num, c)
        s1 = env.step("2.12", e, u_add(low, u_mul(c, u_mod(high, d))), {T.a: num, T.b: c, T.c: d})
        if s1 is None:
            continue
        s2 = env.step("2.7.1", low, u_mod(b, c), {T.a: c * a, T.b: b, T.c: c})
        s3 = env.step("2.5", u_mod(b, c), b, {T.r: b, T.a: c})
        s4 = env.step("2.15.2", high, a, {T.a: c * a, T.b: b, T.c: c})
        if s2 is None or s3 is None or s4 is None:
            continue
        return b + c * mk_mod(a, d), [s1, s2, s3, s4]
    return None


# (a+b)/c -> a/c + b/c   (2.15.1), a the terms that are multiples of c
def rule_2_15_1(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    div, rest = _divisible_split(num.args, c, env)
    if not div:
        return None
    if not rest:
        div, rest = div[:1], div[1:]
    a, b = sympy.Add(*div), sympy.Add(*rest)
    return env.rewrite("2.15.1", e, mk_div(a, c) + mk_div(b, c), {T.a: a, T.b: b, T.c: c})


# (a+b)/c -> a/c   (2.15.2), 0 <= b < gcd(a, c)
def rule_2_15_2(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    div, rest = _divisible_split(num.args, c, env)
    if not div or not rest:
        return None
    a, b = sympy.Add(*div), sympy.Add(*rest)
    return env.rewrite("2.15.2", e, mk_div(a, c), {T.a: a, T.b: b, T.c: c})


# (a+b)/c -> a/c + b/c -> a/c   (2.15, 2.5) when b is small and a%c + b < c
def rule_2_15(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    if len(num.args) > 4:
        return None
    for t in num.args:
        s2 = env.step("2.5", mk_div(t, c), sympy.Integer(0), {T.r: t, T.a: c})
        if s2 is None:
            continue
        a = num - t
        s1 = env.step("2.15", e, mk_div(a, c) + mk_div(t, c), {T.a: a, T.b: t, T.c: c})
        if s1 is not None:
            return mk_div(a, c), [s1, s2]
    return None


# (a+b) % c -> b % c   (2.7.1), a the terms that are multiples of c
def rule_2_7_1(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    div, rest = _divisible_split(num.args, c, env)
    if not div or not rest:
        return None
    a, b = sympy.Add(*div), sympy.Add(*rest)
    return env.rewrite("2.7.1", e, mk_mod(b, c), {T.a: a, T.b: b, T.c: c})


# (a+b) % c -> a % c + b   (2.7.2), 0 <= b < gcd(a, c)
def rule_2_7_2(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    for t in num.args:
        a = num - t
        if mono_gcd(a, c) == 1 and env.reasoner.divides(c, a, []) is None:
            continue
        out = env.rewrite("2.7.2", e, mk_mod(a, c) + t, {T.a: a, T.b: t, T.c: c})
        if out is not None:
            return out
    return None


# (a*b)/c -> a*(b/c)   (2.10), b a multiple of c
def rule_2_10(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    for b in num.args:
        if b.is_number or env.reasoner.divides(c, b, []) is None:
            continue
        a = num / b
        return env.rewrite("2.10", e, a * mk_div(b, c), {T.a: a, T.b: b, T.c: c})
    return None
