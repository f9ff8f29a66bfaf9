"""Rewrite rules: each instantiates one theorem of :data:`THEOREMS` at a sub-expression.

Rules are data, in tinygrad's and Halide's style: ``RULES`` maps a name to ``Rule(theorem, phase,
shape, body, rewrite)`` -- the pattern (a :class:`Shape`: ``floor(num/den)`` with ``num`` a sum, a
remainder of a remainder, ...), the ``lhs -> rhs`` it performs, the theorem whose side conditions
must hold.  One matcher (:meth:`Rule.apply`) matches the shape and hands the parts to the body, which
binds the theorem's pattern symbols and builds the right-hand side; :meth:`Env.step` discharges the
theorem's own side conditions (taken from the theorem data, never restated here) and refuses a
binding that is not integer-valued.  One driver (:mod:`.simplify`) applies the rules.

Example:
    >>> import sympy
    >>> from .context import Context
    >>> I, CN = sympy.symbols("I CN", integer=True, positive=True)
    >>> env = Env(Context(), sympy.Mod(sympy.Mod(I, 4 * CN), CN))
    >>> out = RULES["2.12 (a%(b*c))%b"].apply(sympy.Mod(sympy.Mod(I, 4 * CN), CN, evaluate=False), env)
    >>> out[0], [s.theorem for s in out[1]]
    (Mod(I, CN), ['2.12', '2.7.1'])
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import sympy
from sympy import Mod, ceiling, floor

from . import theorems as T
from .bounds import Reasoner
from .build import (
    exact_quotient,
    is_int,
    mk_ceiling,
    mk_div,
    mk_minmax,
    mk_mod,
    mk_rel,
    mono_gcd,
    subst,
    u_add,
    u_div,
    u_mod,
    u_mul,
)
from .cache import ProofCache
from .context import Context, Fact
from .expand import expand, frac, identical
from .theorems import THEOREMS
from .trace import LazyConditions, Step

Rewrite = tuple[sympy.Basic, list[Step]]


class Env:
    """What a rule may consult: the reasoner (context), the session's cache and the whole
    expression being simplified."""

    def __init__(self, ctx: Context, root: sympy.Basic, cache: ProofCache | None = None) -> None:
        self.reasoner = Reasoner.for_context(ctx, cache=cache)
        self.cache: ProofCache = self.reasoner.cache
        self.set_root(root)

    def set_root(self, root: sympy.Basic) -> None:
        """Record the expression of the current pass (rule 2.11 looks for quotients in it)."""
        self.root = root
        quotients: dict[sympy.Expr, set[sympy.Expr]] = {}
        for q in root.atoms(floor):
            num, den = _frac(q)
            if den != 1:
                quotients.setdefault(num, set()).add(den)
        if quotients != getattr(self, "quotients", None):
            self.stuck: set[tuple[str, sympy.Basic]] = set()  # (phase, node): no rule applies
        self.quotients = quotients

    def step(self, number: str, before: sympy.Basic, after: sympy.Basic, binding: dict) -> Step | None:
        """A step of theorem ``number`` with ``binding``, or None if a side condition fails."""
        thm = THEOREMS[number]
        if not all(is_int(v) for v in binding.values()):
            return None  # pattern symbols are integers: x/(CM + 1) or a bound 3/2 never binds one
        used: list[Fact] = []
        shown_how: list[tuple[object, object]] = []
        for cond in thm.conditions:
            shown = subst(cond, binding)
            how = self.reasoner.why(shown, used)
            if how is None:
                return None
            shown_how.append((shown, how))
        facts = list(dict.fromkeys(map(str, dict.fromkeys(used))))
        return Step(number, before, after, LazyConditions(shown_how), facts, thm.exact)


_KINDS: dict[str, Callable[[sympy.Basic], bool]] = {
    "Add": lambda x: bool(x.is_Add),
    "Mul": lambda x: bool(x.is_Mul),
    "Mod": lambda x: isinstance(x, Mod),
    "floor": lambda x: isinstance(x, floor),
    "ceiling": lambda x: isinstance(x, ceiling),
}
_HEADS: dict[str, Callable[[sympy.Basic], bool]] = {
    **_KINDS,
    "MinMax": lambda x: isinstance(x, sympy.Min | sympy.Max),
    "Rel": lambda x: isinstance(x, sympy.core.relational.Relational),
}


@dataclass(frozen=True)
class Shape:
    """The node a rule rewrites: ``head(num, den)``, optionally with the kind of ``num`` / ``den``.

    For ``floor``/``ceiling`` heads ``num/den`` is the argument's fraction (``den != 1``), for ``Mod``
    its two arguments; for ``Add``, ``MinMax`` and ``Rel`` both are the node itself.

    >>> x, c = sympy.symbols("x c", integer=True, positive=True)
    >>> Shape("floor", num="Add").match(sympy.floor((x + 1) / c))
    (x + 1, c)
    >>> Shape("floor", num="Mod").match(sympy.floor((x + 1) / c)) is None
    True
    """

    head: str
    num: str | None = None
    den: str | None = None

    def head_matches(self, e: sympy.Basic) -> bool:
        """``e``'s head is this shape's (it depends only on ``e``'s class)."""
        return _HEADS[self.head](e)

    def match(self, e: sympy.Basic) -> tuple[sympy.Expr, sympy.Expr] | None:
        if not _HEADS[self.head](e):
            return None
        if self.head in ("floor", "ceiling"):
            num, den = _frac(e)
            if den == 1:
                return None
        elif self.head == "Mod":
            num, den = e.args
        else:
            num = den = e
        if self.num is not None and not _KINDS[self.num](num):
            return None
        if self.den is not None and not _KINDS[self.den](den):
            return None
        return num, den


@dataclass(frozen=True, eq=False)
class Rule:
    """A rewrite as data: the node's ``shape`` (the pattern), the ``rewrite`` it performs
    (``lhs -> rhs``), the ``theorem`` it instantiates (whose side conditions :meth:`Env.step`
    discharges) and the ``body`` that builds the right-hand side from the matched parts.
    :meth:`apply` is the one matcher every rule goes through."""

    theorem: str
    phase: str
    shape: Shape
    body: Callable[[sympy.Basic, sympy.Expr, sympy.Expr, Env], Rewrite | None]
    rewrite: str = ""

    def apply(self, e: sympy.Basic, env: Env) -> Rewrite | None:
        """``(new, steps)`` when ``e`` has the rule's shape and the theorem's conditions hold."""
        parts = self.shape.match(e)
        return None if parts is None else self.body(e, *parts, env)


_frac = frac


def _one(env: Env, number: str, before: sympy.Basic, after: sympy.Basic, binding: dict) -> Rewrite | None:
    st = env.step(number, before, after, binding)
    return None if st is None else (after, [st])


# r % a -> r   (2.5)
def rule_2_5_mod(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    return _one(env, "2.5", e, num, {T.r: num, T.a: den})


# r / a -> 0   (2.5)
def rule_2_5_floor(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    return _one(env, "2.5", e, sympy.Integer(0), {T.r: num, T.a: den})


# a % b -> 0   (2.9)
def rule_2_9(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    if num.is_number:
        return None
    return _one(env, "2.9", e, sympy.Integer(0), {T.a: num, T.b: den})


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
            out = _one(env, "2.11", e, mk_div(mk_div(num, b), c), {T.a: num, T.b: b, T.c: c})
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
    return _one(env, "2.13", e, after, {T.a: x, T.b: m, T.d: d})


# a/(b/c) -> (a*c)/b   (2.14)
def rule_2_14(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    b, c = _frac(den)
    return _one(env, "2.14", e, mk_div(num * c, b), {T.a: num, T.b: b, T.c: c})


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
    return _one(env, "2.15.1", e, mk_div(a, c) + mk_div(b, c), {T.a: a, T.b: b, T.c: c})


# (a+b)/c -> a/c   (2.15.2), 0 <= b < gcd(a, c)
def rule_2_15_2(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    div, rest = _divisible_split(num.args, c, env)
    if not div or not rest:
        return None
    a, b = sympy.Add(*div), sympy.Add(*rest)
    return _one(env, "2.15.2", e, mk_div(a, c), {T.a: a, T.b: b, T.c: c})


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
    return _one(env, "2.7.1", e, mk_mod(b, c), {T.a: a, T.b: b, T.c: c})


# (a+b) % c -> a % c + b   (2.7.2), 0 <= b < gcd(a, c)
def rule_2_7_2(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    for t in num.args:
        a = num - t
        if mono_gcd(a, c) == 1 and env.reasoner.divides(c, a, []) is None:
            continue
        out = _one(env, "2.7.2", e, mk_mod(a, c) + t, {T.a: a, T.b: t, T.c: c})
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
        return _one(env, "2.10", e, a * mk_div(b, c), {T.a: a, T.b: b, T.c: c})
    return None


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
    i, d = _frac(q)
    if d == 1:
        return None
    return _one(env, "2.16", e, make(i, bound * d), {T.i: i, T.d: d, T.D: bound})


# ceil(ceil(a/b)/c) -> ceil(a/(b*c))   (ceil.3)
def rule_ceil_3(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    c = den
    a, b = _frac(num)
    return _one(env, "ceil.3", e, mk_ceiling(a / (b * c)), {T.a: a, T.b: b, T.c: c})


# ceil(a/b) -> a/b   (ceil.4), b divides a
def rule_ceil_4(e: sympy.Basic, num: sympy.Expr, den: sympy.Expr, env: Env) -> Rewrite | None:
    a, b = num, den
    return _one(env, "ceil.4", e, mk_div(a, b), {T.a: a, T.b: b})


def _flat(q: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr, list[dict]]:
    """A quotient ``floor(n/d)`` with nested quotients merged: ``(X/b)/c`` -> ``(X, b*c)``, with the
    2.11 bindings that justify each merge (``c > 0``)."""
    n, d = _frac(q)
    merges: list[dict] = []
    while isinstance(n, floor):
        n2, d2 = _frac(n)
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
        return _flat(z) if merged else (*_frac(z), [])
    if not z.is_Add:
        return None
    floors = [t for t in z.args if isinstance(t, floor)]
    if len(floors) != 1:
        return None
    rest = z - floors[0]
    if not is_int(rest):
        return None
    n, d, merges = _flat(floors[0]) if merged else (*_frac(floors[0]), [])
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
    n2, d2 = _frac(n)
    if d2 == 1:
        return None
    after = mk_div(n2, d2 * d)
    return _one(env, "2.11", e, after, {T.a: n2, T.b: d2, T.c: d})


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
    return _one(env, number, e, after, {T.a: num, T.c: den, T.k: k})


STRUCTURE = "structure"
DISTRIBUTE = "distribute"
TIDY = "tidy"

FLOOR, CEIL, MOD = Shape("floor"), Shape("ceiling"), Shape("Mod")

RULES: dict[str, Rule] = {
    "1.1/2.12 recombine": Rule("1.1", STRUCTURE, Shape("Add"), rule_recombine,
                               "k*(Y%w) + k*w*(Y/w) -> k*Y ; k*(Y%w) + k*w*((Y/w)%c) -> k*(Y%(w*c))"),
    "tilec.min/max": Rule("tilec.min", STRUCTURE, Shape("MinMax"), rule_min_max,
                          "min(a, b) -> a (a <= b) ; max(a, b) -> a (b <= a)"),
    "2.5 r%a": Rule("2.5", STRUCTURE, MOD, rule_2_5_mod, "r % a -> r"),
    "2.5 r/a": Rule("2.5", STRUCTURE, FLOOR, rule_2_5_floor, "r/a -> 0"),
    "2.9": Rule("2.9", STRUCTURE, MOD, rule_2_9, "a % b -> 0"),
    "2.12 (a%(b*c))/b": Rule("2.12", STRUCTURE, Shape("floor", num="Mod"), rule_2_12_floor,
                             "(a%(b*c))/b -> (a/b)%c"),
    "2.12 (a%(b*c))%b": Rule("2.12", STRUCTURE, Shape("Mod", num="Mod"), rule_2_12_mod,
                             "(a%(b*c))%b -> a%b"),
    "2.11": Rule("2.11", STRUCTURE, FLOOR, rule_2_11, "a/(b*c) -> a/b/c where a/b occurs"),
    "2.13": Rule("2.13", STRUCTURE, MOD, rule_2_13, "a%b -> ((a/d)%(b/d))*d"),
    "2.14": Rule("2.14", STRUCTURE, Shape("floor", den="floor"), rule_2_14, "a/(b/c) -> (a*c)/b"),
    "ceil.3": Rule("ceil.3", STRUCTURE, Shape("ceiling", num="ceiling"), rule_ceil_3,
                   "ceil(ceil(a/b)/c) -> ceil(a/(b*c))"),
    "ceil.4": Rule("ceil.4", STRUCTURE, CEIL, rule_ceil_4, "ceil(a/b) -> a/b"),
    "2.16": Rule("2.16", DISTRIBUTE, Shape("Rel"), rule_2_16, "i/d < D -> i < D*d"),
    "2.15.2": Rule("2.15.2", DISTRIBUTE, Shape("floor", num="Add"), rule_2_15_2, "(a+b)/c -> a/c"),
    "2.11+2.15.2 (c*a+b)/(c*d)": Rule("2.15.2", DISTRIBUTE, Shape("floor", num="Add"), rule_radix_div,
                                      "(c*a + b)/(c*d) -> a/d"),
    "2.7.2": Rule("2.7.2", DISTRIBUTE, Shape("Mod", num="Add"), rule_2_7_2, "(a+b)%c -> a%c + b"),
    "2.12+2.7.1+2.5 (c*a+b)%(c*d)": Rule("2.12", DISTRIBUTE, Shape("Mod", num="Add"), rule_radix_mod,
                                         "(c*a + b)%(c*d) -> c*(a%d) + b"),
    "2.15.1": Rule("2.15.1", DISTRIBUTE, Shape("floor", num="Add"), rule_2_15_1,
                   "(a+b)/c -> a/c + b/c"),
    "2.7.1": Rule("2.7.1", DISTRIBUTE, Shape("Mod", num="Add"), rule_2_7_1, "(a+b)%c -> b%c"),
    "2.10": Rule("2.10", DISTRIBUTE, Shape("floor", num="Mul"), rule_2_10, "(a*b)/c -> a*(b/c)"),
    "2.15": Rule("2.15", DISTRIBUTE, Shape("floor", num="Add"), rule_2_15,
                 "(a+b)/c -> a/c (a%c + b < c)"),
    "tilec.const-div": Rule("tilec.const-div", DISTRIBUTE, FLOOR, rule_const_quotient, "a/c -> k"),
    "tilec.const-mod": Rule("tilec.const-mod", DISTRIBUTE, MOD, rule_const_quotient, "a%c -> a - k*c"),
    "2.11 (a/b)/c -> a/(b*c)": Rule("2.11", TIDY, Shape("floor", num="floor"), rule_merge_quotients,
                                    "(a/b)/c -> a/(b*c)"),
}
"""All rules, in the order the driver tries them at a node."""

ROOT_DEPENDENT = frozenset({rule_2_11})
"""Rules whose outcome depends on the whole expression, not only on the node and the context."""
