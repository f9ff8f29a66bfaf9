"""Integer polynomials, read structurally (no sympy assumption queries): whether an expression is
integer-valued, a term as ``coeff * prod(atom**k)``, exact quotients by factorisation, and the
greatest common monomial factor.  The builders (:mod:`.build`) decide remainders with these.

Example:
    >>> import sympy
    >>> x, CN, CM = sympy.symbols("x CN CM", integer=True, positive=True)
    >>> exact_quotient(CN * x + CN * CM, CN), exact_quotient(x + 1, CN)
    (CM + x, None)
    >>> mono_gcd(4 * CN * x, 6 * CN * CM)
    2*CN
"""

from __future__ import annotations

from math import gcd as igcd

import sympy
from sympy import Add, Mod, Mul, S, ceiling, floor

from .cache import CONTENT


def _sym(e: object) -> sympy.Basic:
    return e if isinstance(e, sympy.Basic) else sympy.sympify(e)


def is_int(e: sympy.Basic) -> bool:
    """Structurally integer-valued: integers, integer symbols, floor/ceiling/Mod, and +, *, ** of them."""
    hit = CONTENT.is_int.get(e)
    if hit is not None:
        return hit
    if e.is_Integer:
        ok = True
    elif e.is_Number:
        ok = False
    elif e.is_Symbol:
        ok = bool(e.is_integer)
    elif isinstance(e, floor | ceiling):
        ok = True
    elif isinstance(e, Mod):
        ok = is_int(e.args[0]) and is_int(e.args[1])
    elif e.is_Add or e.is_Mul:
        ok = all(is_int(a) for a in e.args)
    elif e.is_Pow:
        ok = bool(e.exp.is_Integer and e.exp >= 0 and is_int(e.base))
    elif type(e).__name__ == "Gcd":
        ok = True
    else:
        ok = False
    CONTENT.is_int.remember(e, ok)
    return ok


def monomial(t: sympy.Expr) -> tuple[sympy.Rational, dict[sympy.Expr, int]] | None:
    """``t`` as ``coeff * prod(atom**k)`` (an Add factor counts as an atom); None for odd powers."""
    coeff, rest = t.as_coeff_Mul()
    powers: dict[sympy.Expr, int] = {}
    if rest is S.One:
        return coeff, powers
    for f in Mul.make_args(rest):
        if f.is_Pow and f.exp.is_Integer:
            base, k = f.base, int(f.exp)
        elif f.is_Pow:
            return None
        else:
            base, k = f, 1
        powers[base] = powers.get(base, 0) + k
    return coeff, powers


def exact_quotient(n: sympy.Expr, d: sympy.Expr) -> sympy.Expr | None:
    """``n / d`` when it is an integer-valued polynomial (``d`` divides ``n`` by factorisation)."""
    n, d = _sym(n), _sym(d)
    if d == 0:
        return None
    if d == 1:
        return n if is_int(n) else None
    if n == 0:
        return S.Zero
    if n == d:
        return S.One
    if d.is_Add:
        q = n / d
        return q if not q.is_Add and _int_poly_term(q) else None
    out = []
    for t in Add.make_args(n):
        q = t / d
        if not _int_poly_term(q):
            return None
        out.append(q)
    return Add(*out)


def _int_poly_term(q: sympy.Expr) -> bool:
    mono = monomial(q)
    if mono is None or not mono[0].is_Integer:
        return False
    return all(k >= 0 and is_int(b) for b, k in mono[1].items())


def mono_gcd(*exprs: sympy.Expr) -> sympy.Expr:
    """The greatest common monomial factor (integer content times common atom powers) of all terms."""
    exprs = tuple(map(_sym, exprs))
    g = 0
    common: dict[sympy.Expr, int] | None = None
    for e in exprs:
        for t in Add.make_args(e):
            mono = monomial(t)
            if mono is None or not mono[0].is_Integer:
                return S.One
            coeff, powers = mono
            g = igcd(g, abs(int(coeff)))
            pos = {b: k for b, k in powers.items() if k > 0}
            if common is None:
                common = pos
            else:
                common = {b: min(k, pos[b]) for b, k in common.items() if b in pos}
    out: sympy.Expr = sympy.Integer(g or 1)
    for b, k in (common or {}).items():
        out = out * b**k
    return out
