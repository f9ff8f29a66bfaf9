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

import sympy
from sympy import Add, Integer, Mod, Mul, Pow, S, ceiling, floor
from sympy.core.relational import Relational

from .algebra import exact_quotient, is_int, mono_gcd, monomial
from .cache import CONTENT

__all__ = ["REL_TRUTH", "as_expr", "canon", "exact_quotient", "is_int", "mk_ceiling", "mk_div", "mk_eq",
           "mk_floor", "mk_minmax", "mk_mod", "mk_rel", "mono_gcd", "monomial", "rebuild", "subst", "u_add",
           "u_div", "u_mod", "u_mul"]  # the integer-polynomial names are :mod:`.algebra`'s, handed on


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


REL_TRUTH = {
    sympy.Eq: lambda d: d == 0,
    sympy.Ne: lambda d: d != 0,
    sympy.Lt: lambda d: d < 0,
    sympy.Le: lambda d: d <= 0,
    sympy.Gt: lambda d: d > 0,
    sympy.Ge: lambda d: d >= 0,
}
"""The relations :func:`mk_rel` decides, each with its truth on ``lhs - rhs`` when that is a number."""


def mk_rel(cls: type, lhs: sympy.Expr, rhs: sympy.Expr) -> sympy.Basic:
    """``cls(lhs, rhs)``, decided only when ``lhs - rhs`` is a number."""
    test = REL_TRUTH.get(cls)
    if test is not None:
        d = S.Zero if lhs == rhs else lhs - rhs
        if d.is_Number and d.is_finite:
            return sympy.true if test(d) else sympy.false
    return cls(lhs, rhs, evaluate=False)


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
    if isinstance(e, Relational) and f in REL_TRUTH:
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
        elif isinstance(e, floor | ceiling | Mod) or (isinstance(e, Relational) and e.func in REL_TRUTH):
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
