"""Whole expressions rewritten through the builders (:mod:`.build`), never through sympy's own
``Mod`` evaluation: expansion, substitution, an exact zero test, a quotient's fraction, and a
relation with its rational coefficients cleared.

Example:
    >>> import sympy
    >>> x, c = sympy.symbols("x c", integer=True, positive=True)
    >>> identical(c * (x + 1), c * x + c), frac(sympy.floor((x + 1) / (2 * c)))
    (True, (x + 1, 2*c))
"""

from __future__ import annotations

from math import gcd as igcd

import sympy
from sympy import Add, Mod, Mul, S, ceiling, floor
from sympy.core.relational import Relational

from .algebra import monomial
from .build import REL_TRUTH, rebuild
from .cache import CONTENT
from .evaluate import compile_int


def identical(a: sympy.Expr, b: sympy.Expr) -> bool:
    """``expand(a - b) == 0`` (:func:`expand`, the builders' one), exactly, without expanding where
    one point tells them apart.

    ``expand`` applies only identities (valid for every value its symbols' assumptions allow), so
    ``a - b`` that expands to 0 is 0 at every such point where it is defined: a point where ``a``
    and ``b`` have different exact values (:func:`~tilec.proofs.evaluate.compile_int`) answers
    False. Otherwise -- equal there, or no point to try (a symbol a positive integer cannot stand
    for, two symbols of one name, a node the evaluator does not know, a zero divisor) -- ``expand``
    decides. The answer is ``expand``'s in every case; a difference is what the rules' searches
    meet most (``expand`` rebuilds every floor it passes through).

    >>> x, c = sympy.symbols("x c", integer=True, positive=True)
    >>> identical(c * (x + 1), c * x + c), identical(c * floor(x / c), x - Mod(x, c))
    (True, False)
    """
    if a == b:
        return True
    for point in _POINTS:
        args = _witness_point(a, b, point)
        if args is None:
            break
        try:
            va, vb = compile_int([a, b], args[0])(*args[1])
        except (ArithmeticError, ValueError, TypeError):
            break
        if va != vb:
            return False
    return expand(a - b) == 0


# values of distinct primes, then of mixed magnitudes (a quotient of small values is often 0 or 1)
_POINTS = ((11, 13, 17, 19, 23, 29, 31, 37, 41, 43, 47, 53, 59, 61, 67, 71),
           (1009, 3, 65537, 7, 100003, 5, 4099, 2, 257, 10007, 97, 524287, 6007, 127, 8191, 31337))


def _witness_point(a: sympy.Expr, b: sympy.Expr, values: tuple[int, ...]
                   ) -> tuple[list[sympy.Symbol], list[int]] | None:
    """The free symbols of ``a`` and ``b`` (by name) and a value from ``values`` for each that
    meets its assumptions, or None."""
    syms = sorted(a.free_symbols | b.free_symbols, key=lambda s: s.name)
    if len(syms) > len(values) or len({s.name for s in syms}) != len(syms):
        return None
    vals = list(values[:len(syms)])
    for s, v in zip(syms, vals, strict=True):
        fits = CONTENT.fits.get((s, v))
        if fits is None:
            n = sympy.Integer(v)
            fits = all(getattr(n, f"is_{k}") == want for k, want in s.assumptions0.items())
            CONTENT.fits.remember((s, v), fits)
        if not fits:
            return None
    return syms, vals


def expand(e: sympy.Basic) -> sympy.Basic:
    """``sympy.expand(e)`` with every quotient and remainder rebuilt by the builders above.

    ``sympy.expand`` rebuilds each ``Mod`` it passes through with sympy's own evaluation, which is
    wrong on nested remainders (``Mod(3*Mod(x, 6), 6) -> 3*Mod(x, 6)``) and recurses without end on
    others (``Mod((CN - 1)*(x + 1), CN + 1)``): a zero test through it could prove a false equality.
    Here sums and products are expanded one level at a time (``deep=False``) and ``floor``,
    ``ceiling``, ``Mod`` and relations are rebuilt structurally, so the result is an identity of
    ``e`` for integer arguments.

    >>> x = sympy.Symbol("x", integer=True, nonnegative=True)
    >>> expand(Mod(3*Mod(x, 6, evaluate=False), 6, evaluate=False) - 3*Mod(x, 6)) == 0
    False
    >>> expand(2*(x + floor((x + 1)*(x - 1)/2)))
    2*x + 2*floor(x**2/2 - 1/2)
    """
    hit = CONTENT.expand.get(e)
    if hit is not None:
        return hit
    if e.is_Atom or not e.args:
        out = e
    else:
        args = [expand(a) for a in e.args]
        if isinstance(e, floor | ceiling | Mod) or (isinstance(e, Relational) and e.func in REL_TRUTH):
            out = rebuild(e, args)
        elif e.is_Add or e.is_Mul or e.is_Pow:
            out = sympy.expand(e.func(*args), deep=False)
        elif all(x is y for x, y in zip(args, e.args, strict=True)):
            out = e
        else:
            out = e.func(*args)
    CONTENT.expand.remember(e, out)
    return out


def replace(e: sympy.Basic, mapping: dict) -> sympy.Basic:
    """``e.xreplace(mapping)`` with every rebuilt node made by the builders above (``xreplace``
    evaluates the nodes it rebuilds: ``Mod(y, 6)`` with ``y -> 3*Mod(x, 6)`` would become sympy's
    wrong ``3*Mod(x, 6)``).

    >>> x, y = sympy.symbols("x y", integer=True, nonnegative=True)
    >>> replace(Mod(y, 6), {y: 3*Mod(x, 6)})
    3*(Mod(x, 2))
    """
    hit = mapping.get(e)
    if hit is not None:
        return hit
    if e.is_Atom or not e.args:
        return e
    args = [replace(a, mapping) for a in e.args]
    if all(x is y for x, y in zip(args, e.args, strict=True)):
        return e
    return rebuild(e, args)


def frac(e: sympy.Basic) -> tuple[sympy.Expr, sympy.Expr]:
    """Numerator and denominator of the argument of a floor/ceiling: ``floor(a/b)`` -> ``(a, b)``.

    Structural: the denominator is the product of the atoms' largest negative powers times the
    least common multiple of the coefficients' denominators.  The numerator is built from each
    term's exponents, never as ``term * den``: sympy distributes a number over a sum
    (``2*(CM + 1) -> 2*CM + 2``), and ``x/(2*(CM + 1)) * (2*CM + 2)`` would stay a fraction.

    >>> x, CM, CN = sympy.symbols("x CM CN", integer=True, positive=True)
    >>> frac(sympy.floor(x * CN / (2 * CN * (CM + 1))))
    (x, 2*CM + 2)
    """
    hit = CONTENT.frac.get(e)
    if hit is None:
        hit = _frac(e)
        CONTENT.frac.remember(e, hit)
    return hit


def _frac(e: sympy.Basic) -> tuple[sympy.Expr, sympy.Expr]:
    arg = e.args[0]
    terms = Add.make_args(arg)
    qden = 1
    neg: dict[sympy.Expr, int] = {}
    monos = []
    for t in terms:
        mono = monomial(t)
        if mono is None or not mono[0].is_Rational:
            return _fraction(arg)
        coeff, powers = mono
        qden = qden * coeff.q // igcd(qden, coeff.q)
        for b, k in powers.items():
            if k < 0:
                neg[b] = max(neg.get(b, 0), -k)
        monos.append(mono)
    den: sympy.Expr = sympy.Integer(qden)
    for b, k in neg.items():
        den = den * b**k
    if den == 1:
        return arg, S.One
    out = []
    for coeff, powers in monos:
        factors = [b ** (powers.get(b, 0) + neg.get(b, 0)) for b in {**powers, **neg}]
        out.append(Mul(coeff * qden, *factors))
    return Add(*out), den


def _fraction(arg: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    num, den = sympy.fraction(sympy.together(arg))
    if den.could_extract_minus_sign():
        num, den = -num, -den
    return expand(num), den


def integral_relation(rel: Relational) -> Relational:
    """``rel`` with its rational coefficients cleared: ``x < 125/16`` -> ``16*x < 125``.

    Both sides are multiplied by the (positive) least common denominator of the terms of
    ``lhs - rhs``, so the relation holds exactly when ``rel`` does; terms inside ``floor`` or
    ``Mod`` are atoms. A printer of integer code prints the result.

    >>> x = sympy.Symbol("x", integer=True)
    >>> integral_relation(sympy.Lt(x, sympy.Rational(125, 16)))
    16*x - 125 < 0
    >>> integral_relation(sympy.Eq(x, 3))
    Eq(x, 3)
    """
    diff = expand(rel.lhs - rel.rhs)
    den = 1
    for term in Add.make_args(diff):
        c = term.as_coeff_Mul()[0]
        if c.is_Rational and c.q != 1:
            den = den * c.q // igcd(den, c.q)
    if den == 1:
        return rel
    return rel.func(expand(diff * den), 0)
