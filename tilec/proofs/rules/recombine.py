"""Recombination: a remainder and its quotient back into their dividend (1.1, 2.12), and nested
quotients merged into one division (2.11 read backwards, the ``tidy`` phase)."""

from __future__ import annotations

import sympy
from sympy import Mod, floor

from .. import theorems as T
from ..build import exact_quotient, is_int, mk_div, mk_mod, u_add, u_div, u_mod, u_mul
from ..expand import expand, frac, identical
from ..trace import Step
from .match import Env, Rewrite


def _flat(q: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr, list[dict]]:
    """A quotient ``floor(n/d)`` with nested quotients merged: ``(X/b)/c`` -> ``(X, b*c)``, with the
    2.11 bindings that justify each merge (``c > 0``)."""
    n, d = frac(q)
    merges: list[dict] = []
    while isinstance(n, floor):
        n2, d2 = frac(n)
        if d2 == 1:
            break
        merges.append({T.a: n2, T.b: d2, T.c: d})
        n, d = n2, d2 * d
    return n, d, merges


def _merge_steps(env: Env, merges: list[dict]) -> list[Step] | None:
    out = []
    for b in merges:
        st = env.step("2.11", u_div(u_div(b[T.a], b[T.b]), b[T.c]), mk_div(b[T.a], b[T.b] * b[T.c]), b)
        if st is None:
            return None
        out.append(st)
    return out


def _terms(e: sympy.Expr) -> tuple[sympy.Expr, ...]:
    """The summands of ``e`` with products of sums distributed (``P*(t + x/P)`` -> ``P*t + P*(x/P)``)."""
    out: list[sympy.Expr] = []
    for u in e.args:
        if u.is_Mul and any(f.is_Add for f in u.args):
            out.extend(sympy.Add.make_args(expand(u)))
        else:
            out.append(u)
    return tuple(out)


def _as_quotient(z: sympy.Expr, merged: bool) -> tuple[sympy.Expr, sympy.Expr, list[dict]] | None:
    """``z`` as one quotient ``n/d`` (with nested quotients merged when ``merged``, see
    :func:`_flat`): a floor, or integer terms plus one floor (``2*x + (3*y + 1)/2`` is
    ``(4*x + 3*y + 1)/2``)."""
    if isinstance(z, floor):
        return _flat(z) if merged else (*frac(z), [])
    if not z.is_Add:
        return None
    floors = [t for t in z.args if isinstance(t, floor)]
    if len(floors) != 1:
        return None
    rest = z - floors[0]
    if not is_int(rest):
        return None
    n, d, merges = _flat(floors[0]) if merged else (*frac(floors[0]), [])
    return expand(n + rest * d), d, merges


# k*(Y % w) + k*w*(Y/w) -> k*Y   (1.1);  k*(Y % w) + k*w*((Y/w) % c) -> k*(Y % (w*c))   (2.12)
# Y is read off the quotient: any Y with Y % w == the remainder term (canonically) and Y/w == the
# quotient term; nested quotients are compared merged, (X/b)/w is X/(b*w)   (2.11)
def rule_recombine(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    if not e.has(Mod):
        return None
    terms = _terms(e)
    for i, u in enumerate(terms):
        mods = [f for f in sympy.Mul.make_args(u) if isinstance(f, Mod)]
        if len(mods) != 1:
            continue
        m = mods[0]
        k = u / m
        w = m.args[1]
        for j, v in enumerate(terms):
            if j == i:
                continue
            q = v / (k * w)
            high = None
            if isinstance(q, Mod):
                q, high = q.args
            found = None
            for merged in (False, True):
                quotient = _as_quotient(q, merged)
                if quotient is not None:
                    n, d, merges = quotient
                    y = exact_quotient(n * w, d)
                    if y is not None and mk_mod(y, w) == m:
                        found = y, merges
                        break
            y = m.args[0]
            if found is None and isinstance(y, floor) and quotient is not None:
                # (X/b) % w + w*(X/(b*w)): the quotient is (X/b)/w   (2.11)
                yn, yd, ymerges = _flat(y)
                if yd != 1 and identical(n * yd * w, yn * d):
                    found = y, [*merges, *ymerges, {T.a: yn, T.b: yd, T.c: w}]
            if found is None:
                continue
            y, merges = found
            steps = _merge_steps(env, merges)
            if steps is None:
                continue
            pair = u_add(m, u_mul(w, q if high is None else u_mod(q, high)))
            if high is None:
                s1 = env.step("1.1", pair, y, {T.a: y, T.c: w})
                after = y
            else:
                after = mk_mod(y, w * high)
                s1 = env.step("2.12", pair, after, {T.a: y, T.b: w, T.c: high})
            if s1 is None:
                continue
            rest = [t for n_, t in enumerate(terms) if n_ not in (i, j)]
            return sympy.Add(*rest, k * after), [*steps, s1]
    return None


# (a/b)/c -> a/(b*c)   (2.11, read backwards): one division instead of two, for printing
def rule_merge_quotients(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    n, d = num, den
    n2, d2 = frac(n)
    if d2 == 1:
        return None
    after = mk_div(n2, d2 * d)
    return env.rewrite("2.11", e, after, {T.a: n2, T.b: d2, T.c: d})
