"""Cheap construction of quotients, remainders and conditions (no sympy assumption queries).

sympy's ``floor``/``Mod``/``Eq`` constructors ask its assumptions system (``is_integer``,
``is_positive``, ...) about their arguments; on index expressions over positive symbols that costs
milliseconds per node and dominated the prover.  The builders here canonicalise structurally and
create the node with ``evaluate=False``:

* :func:`mk_floor` / :func:`mk_ceiling`: numbers fold; integer-valued summands move out
  (``floor(x/4 + y) -> y + floor(x/4)``); ``floor(floor(x)) -> floor(x)`` -- what sympy's ``floor``
  does, less its costly numeric-range probe (which the 2.5 rule covers, with a trace).
* :func:`mk_mod`: numbers fold; ``p % q -> 0`` when ``q`` divides ``p`` by factorisation; nested
  ``(x % (k*q)) % q -> x % q``; ``(a % q + b) % q -> (a + b) % q``; a common monomial factor moves
  out (``(CN*x) % (CN*CM) -> CN*(x % CM)``); summands that are multiples of ``q`` drop -- sympy's own
  ``Mod`` canonicalisation, decided by factorisation instead of assumption queries.
* :func:`mk_rel`: a relation, decided only when both sides are equal or differ by a number.
* :func:`canon`: any expression, possibly built under ``sympy.evaluate(False)`` (nested ``Add``,
  ``Mul(Pow(4, -1), Add(...))`` inside a ``floor``), rebuilt into the canonical form above.

Every rewrite is an identity for integer arguments and a nonzero divisor; none needs a side
condition, so none appears in a proof trace (the same contract as sympy's evaluation).

Example:
    >>> import sympy
    >>> x, y, CN, CM = sympy.symbols("x y CN CM", integer=True, positive=True)
    >>> mk_mod(CN * x, CN * CM)
    CN*(Mod(x, CM))
    >>> with sympy.evaluate(False):
    ...     raw = sympy.floor(sympy.Mul(sympy.Pow(4, -1), sympy.Add(x, sympy.Add(4 * y, 3))))
    >>> canon(raw)
    y + floor(x/4 + 3/4)
"""

from __future__ import annotations

from math import gcd as igcd

import sympy
from sympy import Add, Integer, Mod, Mul, Pow, S, ceiling, floor
from sympy.core.relational import Relational

from .cache import CONTENT


def as_expr(e: object) -> sympy.Basic:
    """``e`` as a sympy object; a string is parsed *unevaluated* and then canonicalised here.

    sympy's own ``Mod`` evaluation is wrong on nested remainders (sympy 1.12 to 1.14 give
    ``Mod(3*Mod(x, 6), 6) -> 3*Mod(x, 6)``; sympy issues 29757 and 28744), so nothing the proofs
    build goes through it.

    >>> as_expr("Mod(3*Mod(x, 6), 6)")
    3*(Mod(Mod(x, 6), 2))
    """
    if isinstance(e, sympy.Basic):
        return e
    if isinstance(e, str):
        from sympy.parsing.sympy_parser import parse_expr

        return canon(parse_expr(e, evaluate=False))
    return sympy.sympify(e)


_sym = as_expr


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


# -- builders ---------------------------------------------------------------------------------
def mk_floor(arg: sympy.Expr) -> sympy.Expr:
    """``floor(arg)``, canonicalised structurally."""
    return _round(floor, arg)


def mk_ceiling(arg: sympy.Expr) -> sympy.Expr:
    """``ceiling(arg)``, canonicalised structurally."""
    return _round(ceiling, arg)


def mk_div(num: sympy.Expr, den: sympy.Expr) -> sympy.Expr:
    """``floor(num / den)``."""
    return mk_floor(num / den)


def _round(op: type, arg: sympy.Expr) -> sympy.Expr:
    arg = _sym(arg)
    if arg.is_Number:
        return op(arg)
    ipart: list[sympy.Expr] = []
    rest: list[sympy.Expr] = []
    for t in Add.make_args(arg):
        (ipart if is_int(t) else rest).append(t)
    if not rest:
        return arg
    spart = Add(*rest)
    inner = spart if isinstance(spart, floor | ceiling) else op(spart, evaluate=False)
    return Add(*ipart, inner) if ipart else inner


def mk_mod(p: sympy.Expr, q: sympy.Expr) -> sympy.Expr:
    """``Mod(p, q)``, canonicalised structurally."""
    p, q = _sym(p), _sym(q)
    if q == 0:
        raise ZeroDivisionError("Modulo by zero")
    if p.is_Number and q.is_Number:
        return p % q
    if q.could_extract_minus_sign():  # floor semantics: p % (-q) == -((-p) % q)   (2.6)
        return -mk_mod(-p, -q)
    if p == 0 or p == q or p == -q:
        return S.Zero
    if exact_quotient(p, q) is not None:
        return S.Zero
    if isinstance(p, Mod):
        x, qi = p.args
        if exact_quotient(qi, q) is not None:
            return mk_mod(x, q)
        if qi.is_Number and q.is_Number and 0 < qi <= q:
            return p
    elif p.is_Add:
        mods = [t for t in p.args if isinstance(t, Mod)]
        if mods and all(t.args[1] == q for t in mods):
            net = Add(*[t.args[0] if isinstance(t, Mod) else t for t in p.args])
            return mk_mod(net, q)
    g = mono_gcd(p, q)
    if g != 1:
        pg, qg = exact_quotient(p, g), exact_quotient(q, g)
        if pg is not None and qg is not None:
            return g * mk_mod(pg, qg)
    if p.is_Add:
        keep = []
        changed = False
        for t in p.args:
            if t.is_Integer and q.is_Integer and int(t) % int(q) != int(t):
                # Python ints: under sympy.evaluate(False) Integer % Integer stays a Mod node
                t, changed = Integer(int(t) % int(q)), True
                if t == 0:
                    continue
            elif is_int(t) and exact_quotient(t, q) is not None:
                changed = True
                continue
            keep.append(t)
        if changed:
            return mk_mod(Add(*keep), q)
    elif p.is_Mul and q.is_Integer and is_int(p):
        coeff, rest = p.as_coeff_Mul()
        if coeff.is_Integer and int(coeff) % int(q) != int(coeff):
            # Python ints (see above: an unevaluated Mod(1, 2) never equals 1, and recursed)
            c = int(coeff) % int(q)
            return S.Zero if c == 0 else mk_mod(Mul(Integer(c), rest), q)
    return Mod(p, q, evaluate=False)


_REL_TRUTH = {
    sympy.Eq: lambda d: d == 0,
    sympy.Ne: lambda d: d != 0,
    sympy.Lt: lambda d: d < 0,
    sympy.Le: lambda d: d <= 0,
    sympy.Gt: lambda d: d > 0,
    sympy.Ge: lambda d: d >= 0,
}


def mk_rel(cls: type, lhs: sympy.Expr, rhs: sympy.Expr) -> sympy.Basic:
    """``cls(lhs, rhs)``, decided only when ``lhs - rhs`` is a number."""
    test = _REL_TRUTH.get(cls)
    if test is not None:
        d = S.Zero if lhs == rhs else lhs - rhs
        if d.is_Number and d.is_finite:
            return sympy.true if test(d) else sympy.false
    return cls(lhs, rhs, evaluate=False)


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
        from .evaluate import compile_int

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
        if isinstance(e, floor | ceiling | Mod) or (isinstance(e, Relational) and e.func in _REL_TRUTH):
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


def mk_eq(lhs: sympy.Expr, rhs: sympy.Expr) -> sympy.Basic:
    """``Eq(lhs, rhs)`` (see :func:`mk_rel`)."""
    return mk_rel(sympy.Eq, lhs, rhs)


def mk_minmax(func: type, args: list | tuple) -> sympy.Expr:
    """``Min(*args)`` / ``Max(*args)`` built structurally: nested ones of the same kind flatten,
    duplicates go, numbers fold into one; never sympy's evaluation, which compares arguments
    through its assumptions and is wrong on some (``Min(1, floor(2/(CN - n)))`` is ``1`` for
    ``n < 0``, but 0 at CN=4, n=-8).

    >>> CN = sympy.Symbol("CN", integer=True, positive=True)
    >>> n = sympy.Symbol("n", integer=True, negative=True)
    >>> mk_minmax(sympy.Min, [1, floor(2 / (CN - n)), sympy.Min(3, CN, evaluate=False)])
    Min(1, CN, floor(2/(CN - n)))
    """
    flat: list[sympy.Expr] = []
    for a in args:
        a = _sym(a)
        flat.extend(a.args if isinstance(a, func) else (a,))
    nums = [a for a in flat if a.is_Number]
    rest = list(dict.fromkeys(a for a in flat if not a.is_Number))
    if nums:
        rest.insert(0, (min if func is sympy.Min else max)(nums))
    if len(rest) == 1:
        return rest[0]
    return func(*rest, evaluate=False)


def rebuild(e: sympy.Basic, args: list | tuple) -> sympy.Basic:
    """``e.func(*args)`` through the builders above."""
    f = e.func
    if f is floor:
        return mk_floor(args[0])
    if f is ceiling:
        return mk_ceiling(args[0])
    if f is Mod:
        return mk_mod(*args)
    if isinstance(e, Relational) and f in _REL_TRUTH:
        return mk_rel(f, *args)
    if f in (sympy.Min, sympy.Max):
        return mk_minmax(f, args)
    return f(*args)


def canon(e: sympy.Basic) -> sympy.Basic:
    """``e`` in canonical form: evaluated ``+ * **``, floor/ceiling/Mod/relations through the builders.

    A ``Mod`` whose arguments are already canonical is kept as given (an explicitly unevaluated
    ``Mod(Mod(I, 4*CN), CN)`` is left for the rules, which leave a trace), unless both are numbers.
    """
    hit = CONTENT.canon.get(e)
    if hit is not None:
        return hit
    if e.is_Atom or not e.args:
        out = e
    else:
        args = [canon(a) for a in e.args]
        if isinstance(e, Mod) and all(x == y for x, y in zip(args, e.args, strict=True)) and not (
                args[0].is_Number and args[1].is_Number):  # Mod(6, 4) as written is 2
            out = e
        elif isinstance(e, floor | ceiling | Mod) or (isinstance(e, Relational) and e.func in _REL_TRUTH):
            out = rebuild(e, args)
        elif isinstance(e, sympy.Min | sympy.Max):
            out = mk_minmax(e.func, args)  # Max(0, 1) as written is 1
        elif e.is_Add or e.is_Mul or e.is_Pow or isinstance(e, sympy.And | sympy.Or | sympy.Not):
            out = e.func(*args)
        elif all(x is y for x, y in zip(args, e.args, strict=True)):
            out = e
        else:
            out = e.func(*args)
    CONTENT.canon.remember(e, out)
    return out


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


# -- unevaluated construction (for the trace's display; never under sympy.evaluate(False), whose
# -- every toggle clears sympy's cache) ---------------------------------------------------------
def u_add(*args: sympy.Expr) -> sympy.Expr:
    """``Add(*args)`` left as written."""
    return Add(*args, evaluate=False)


def u_mul(*args: sympy.Expr) -> sympy.Expr:
    """``Mul(*args)`` left as written."""
    return Mul(*args, evaluate=False)


def u_div(num: sympy.Expr, den: sympy.Expr) -> sympy.Expr:
    """``floor(num/den)`` left as written."""
    return floor(Mul(num, Pow(den, -1, evaluate=False), evaluate=False), evaluate=False)


def u_mod(p: sympy.Expr, q: sympy.Expr) -> sympy.Expr:
    """``Mod(p, q)`` left as written."""
    return Mod(p, q, evaluate=False)


def subst(e: sympy.Basic, binding: dict) -> sympy.Basic:
    """``e.xreplace(binding)`` with every rebuilt node left unevaluated (a theorem instance)."""
    hit = binding.get(e)
    if hit is not None:
        return hit
    if e.is_Atom or not e.args:
        return e
    args = [subst(a, binding) for a in e.args]
    if all(x is y for x, y in zip(args, e.args, strict=True)):
        return e
    if isinstance(e, sympy.And | sympy.Or):
        return e.func(*args)
    return e.func(*args, evaluate=False)


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
