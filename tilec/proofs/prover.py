"""Prover: equalities (``prove_eq``), sufficient conditions (``narrow``) and implication.

``narrow(cond, ctx)`` returns a condition that implies ``cond`` under ``ctx`` -- equal to it where
every step is exact, stronger where a ``congruence`` step drops an outer function (the only
narrowing step).  Exact steps on equalities: ``tilec.cancel`` (drop a common summand),
``tilec.mixed-radix`` (``a*c + b == d*c + e`` with both remainders in ``[0, c)``) and
``tilec.divmod-eq`` (``x/c == y/c & x%c == y%c`` is ``x == y``).

A congruence ``f(X1) == f(X2) <= X1 == X2`` is taken only where it pays: it makes a quotient and a
remainder of the same dividend recombine, or it exposes common summands whose cancellation leaves
a non-trivial condition (one that is not just ``rank1 == rank2``).

Example:
    >>> import sympy
    >>> from .context import Context
    >>> x, y, c = sympy.symbols("x y c", integer=True, positive=True)
    >>> cond = sympy.Eq(c * sympy.floor(x / c) + sympy.Mod(x, c), c * sympy.floor(y / c) + sympy.Mod(y, c))
    >>> narrow(cond, Context()).expr
    Eq(x, y)
"""

from __future__ import annotations

import sympy
from sympy import Eq, Mod, floor

from . import theorems as T
from .bounds import Reasoner
from .build import as_expr, canon, is_int, mk_div, mk_eq, mk_mod, rebuild, u_add, u_mul
from .cache import SESSION, ProofCache
from .context import Context, Fact
from .expand import expand, frac, replace
from .rules import Env
from .simplify import simplify
from .trace import LazyConditions, Result, Step, Trace, Why, fmt


def prove_eq(a: sympy.Expr, b: sympy.Expr, ctx: Context | None = None, *,
             cache: ProofCache | None = None) -> Result | None:
    """A proof that ``a == b`` for every assignment ``ctx`` allows, or None (results kept in
    ``cache``, the default session when None).

    >>> I, CM, CN = sympy.symbols("I CM CN", integer=True, positive=True)
    >>> res = prove_eq(sympy.floor(I / (CM * CN)), sympy.floor(sympy.floor(I / CN) / CM), Context())
    >>> res.trace.theorems()
    ['2.11']
    """
    ctx = ctx or Context()
    cache = cache or SESSION
    a, b = as_expr(a), as_expr(b)
    res = simplify(a - b, ctx, cache=cache)
    if expand(res.expr) == 0:
        return Result(sympy.true, res.trace, original=Eq(a, b, evaluate=False))
    ra, rb = simplify(a, ctx, cache=cache), simplify(b, ctx, cache=cache)
    if expand(ra.expr - rb.expr) == 0:
        return Result(sympy.true, Trace([*ra.trace, *rb.trace]), original=Eq(a, b, evaluate=False))
    for x, y, pre in ((a, b, []), (ra.expr, rb.expr, [*ra.trace, *rb.trace])):
        steps: list[Step] = list(pre)
        na, nb = normal_form(x, ctx, steps, cache), normal_form(y, ctx, steps, cache)
        if (na, nb) != (x, y) or pre:
            res = simplify(na - nb, ctx, cache=cache)
            if expand(res.expr) == 0:
                return Result(sympy.true, Trace([*steps, *res.trace]), original=Eq(a, b, evaluate=False))
        # last: every quotient as its dividend less its remainder, over the divisor (1.1), so that a
        # remainder the facts make 0 (2.9) or two remainders that agree leave no quotient behind
        wa, wb = _unfloor(na, ctx, steps, cache), _unfloor(nb, ctx, steps, cache)
        res = simplify(wa - wb, ctx, cache=cache)
        if expand(sympy.together(res.expr).as_numer_denom()[0]) == 0:
            return Result(sympy.true, Trace([*steps, *res.trace]), original=Eq(a, b, evaluate=False))
    return None


def _unfloor(e: sympy.Basic, ctx: Context, steps: list[Step], cache: ProofCache | None = None) -> sympy.Basic:
    """``e`` with every quotient ``floor(n/d)`` written ``(n - n%d)/d`` (1.1, an identity wherever
    ``d != 0``: floor semantics), innermost first.

    >>> x, c = sympy.symbols("x c", integer=True, positive=True)
    >>> _unfloor(c * sympy.floor(x / c), Context(), [])
    x - Mod(x, c)
    """
    env = Env(ctx, e, cache)

    def go(node: sympy.Basic) -> sympy.Basic:
        if node.is_Atom or not node.args:
            return node
        args = [go(a) for a in node.args]
        out = rebuild(node, args) if any(x is not y for x, y in zip(args, node.args, strict=True)) else node
        if isinstance(out, floor):
            n, d = frac(out)
            if d != 1 and is_int(n) and is_int(d):
                after = (n - mk_mod(n, d)) / d
                st = env.step("1.1", u_add(mk_mod(n, d), u_mul(d, out)), n, {T.a: n, T.c: d})
                if st is not None:
                    steps.append(st)
                    return after
        return out

    return go(e)


def normal_form(e: sympy.Basic, ctx: Context, steps: list[Step], cache: ProofCache | None = None) -> sympy.Basic:
    """``e`` with every ceiling written as a floor (ceil.1) and nested quotients merged (2.11), where
    the divisors are proven positive: the form in which two ways of writing one split compare.

    >>> x, b, c = sympy.symbols("x b c", integer=True, positive=True)
    >>> normal_form(sympy.ceiling(x / c) + sympy.floor(sympy.floor(x / b) / c), Context(), [])
    floor((c + x - 1)/c) + floor(x/(b*c))
    """
    env = Env(ctx, e, cache)

    def go(node: sympy.Basic) -> sympy.Basic:
        if node.is_Atom or not node.args:
            return node
        args = [go(a) for a in node.args]
        out = rebuild(node, args) if any(x is not y for x, y in zip(args, node.args, strict=True)) else node
        if isinstance(out, sympy.ceiling):
            n, d = frac(out)
            after = mk_div(n + d - 1, d)
            st = env.step("ceil.1", out, after, {T.a: n, T.b: d}) if d != 1 else None
            if st is not None:
                steps.append(st)
                out = go(after)
        if isinstance(out, floor):
            n, d = frac(out)
            if isinstance(n, floor) and d != 1:
                n2, d2 = frac(n)
                after = mk_div(n2, d2 * d)
                st = env.step("2.11", out, after, {T.a: n2, T.b: d2, T.c: d}) if d2 != 1 else None
                if st is not None:
                    steps.append(st)
                    out = go(after)
        return out

    return go(canon(e))


def narrow(cond: sympy.Basic, ctx: Context | None = None, *, cache: ProofCache | None = None) -> Result:
    """A condition that implies ``cond`` under ``ctx`` (never weaker), with its proof trace
    (results kept in ``cache``, the default session when None)."""
    ctx = ctx or Context()
    cache = cache or SESSION
    cond = as_expr(cond)
    key = (cond, ctx.key())

    def compute() -> tuple[sympy.Basic, tuple[Step, ...]]:
        first = simplify(canon(cond), ctx, tidy=False, cache=cache)
        steps = list(first.trace)
        return _Narrower(ctx, steps, cache).boolean(first.expr), tuple(steps)

    hit = cache.narrowed.get_or(key, compute)
    return Result(hit[0], Trace(hit[1]), original=cond)


def implies(p: sympy.Basic, q: sympy.Basic, ctx: Context | None = None, *,
            cache: ProofCache | None = None) -> bool:
    """True only when ``p`` is proven to imply ``q`` under ``ctx``.

    >>> x, E = sympy.symbols("x E", integer=True, positive=True)
    >>> implies(sympy.Lt(x, 4), sympy.Lt(sympy.floor(x / 2), 2), Context())
    True
    """
    ctx = ctx or Context()
    cache = cache or SESSION
    p, q = canon(as_expr(p)), canon(as_expr(q))  # numbers as written (Mod(6, 4)) are numbers
    if q is sympy.true or p is sympy.false or p == q:
        return True
    have = set(sympy.And.make_args(p))
    local = ctx.copy().assume(p)
    reasoner = Reasoner(local, cache)
    subs = {c.lhs: c.rhs for c in have if isinstance(c, Eq) and c.lhs.is_Symbol}
    for goal in sympy.And.make_args(q):
        if goal in have:
            continue
        if reasoner.why(goal, []) is not None:
            continue
        if isinstance(goal, Eq) and prove_eq(goal.lhs, goal.rhs, local, cache=cache) is not None:
            continue
        if subs and simplify(replace(goal, subs), local, cache=cache).expr is sympy.true:
            continue
        narrowed = narrow(goal, local, cache=cache).expr
        if narrowed is sympy.true or set(sympy.And.make_args(narrowed)) <= have:
            continue
        return False
    return True


class _Narrower:
    """Rewrites a conjunction of equalities with the exact rules, then congruence where it pays."""

    def __init__(self, ctx: Context, steps: list[Step], cache: ProofCache) -> None:
        self.reasoner = Reasoner.for_context(ctx, cache=cache)
        self.steps = steps

    def boolean(self, c: sympy.Basic) -> sympy.Basic:
        if isinstance(c, sympy.Or):
            return sympy.Or(*(self.boolean(a) for a in c.args))
        if isinstance(c, sympy.And | Eq):
            return self.conjunction(list(sympy.And.make_args(c)))
        return c  # Ne, Not, <, ...: only exact simplification (narrowing a negation would widen)

    def conjunction(self, cs: list[sympy.Basic]) -> sympy.Basic:
        for _ in range(32):
            cs = self._exact(cs)
            if sympy.false in cs:
                return sympy.false
            new = self._congruence(cs)
            if new is None:
                break
            cs = new
        return sympy.And(*cs)

    # -- exact rules ---------------------------------------------------------------------------
    def _exact(self, cs: list[sympy.Basic]) -> list[sympy.Basic]:
        changed = True
        while changed:
            changed = False
            out: list[sympy.Basic] = []
            for c in cs:
                if c is sympy.true:
                    changed = True
                    continue
                new = self._one_exact(c) if isinstance(c, Eq) else None
                if new is None:
                    out.append(c)
                else:
                    out.extend(new)
                    changed = True
            cs = self._recombine(out)
            changed = changed or len(cs) != len(out)
        return cs

    def _one_exact(self, c: Eq) -> list[sympy.Basic] | None:
        cancelled = _cancel(c)
        if cancelled is not None:
            self.steps.append(Step("tilec.cancel", c, cancelled))
            return [cancelled]
        return self._mixed_radix(c)

    def _mixed_radix(self, c: Eq) -> list[sympy.Basic] | None:
        lhs, rhs = sympy.expand(c.lhs, deep=False), sympy.expand(c.rhs, deep=False)
        for radix in _radix_candidates(lhs) & _radix_candidates(rhs):
            (a1, b1), (a2, b2) = _digits(lhs, radix), _digits(rhs, radix)
            used: list[Fact] = []
            conds = []
            for rem in (b1, b2):
                ok = self.reasoner.nonneg(rem, used) and self.reasoner.nonneg(radix - 1 - rem, used)
                if not ok:
                    break
                conds.append((Why(lambda rem=rem, radix=radix: f"0 <= {fmt(rem)} < {fmt(radix)}"),  # type: ignore[misc]
                              Why(lambda rem=rem, radix=radix: "interval reasoning: "  # type: ignore[misc]
                                  + self.reasoner.interval_text(rem, radix, strict=True))))
            else:
                parts = [mk_eq(a1, a2), mk_eq(b1, b2)]
                after = sympy.And(*parts)
                facts = list(dict.fromkeys(str(f) for f in used))
                self.steps.append(Step("tilec.mixed-radix", c, after, LazyConditions(conds), facts,
                                       used=tuple(dict.fromkeys(used))))
                return [p for p in parts if p is not sympy.true]
        return None

    def _recombine(self, cs: list[sympy.Basic]) -> list[sympy.Basic]:
        """``x/c == y/c`` and ``x%c == y%c`` -> ``x == y`` (tilec.divmod-eq)."""
        for q in cs:
            qs = _quotient_pair(q)
            if qs is None:
                continue
            (x, y, m) = qs
            for r in cs:
                if r is q or not isinstance(r, Eq):
                    continue
                if _mod_pair(r, x, y, m):
                    merged = mk_eq(x, y)
                    self.steps.append(Step("tilec.divmod-eq", sympy.And(q, r), merged))
                    rest = [c for c in cs if c is not q and c is not r]
                    return [*rest, merged]
        return cs

    # -- narrowing -----------------------------------------------------------------------------
    def _congruence(self, cs: list[sympy.Basic]) -> list[sympy.Basic] | None:
        for c in cs:
            inner = _strip(c)
            if not isinstance(inner, Eq):
                # None, or arguments that the builders decide: equal ones make ``c`` true already,
                # different numbers (``x == x + 1``) would narrow to false, which proves nothing
                continue
            if self._enables_recombine(inner, cs) or _pays_by_cancel(inner):
                self.steps.append(Step("congruence", c, inner, exact=False))
                return [inner if x is c else x for x in cs]
        return None

    @staticmethod
    def _enables_recombine(inner: Eq, cs: list[sympy.Basic]) -> bool:
        qs = _quotient_pair(inner)
        if qs is None:
            return False
        x, y, m = qs
        return any(_mod_pair(r, x, y, m) for r in cs)


def _cancel(c: Eq) -> Eq | None:
    """``a + t == b + t`` -> ``a == b``; None when there is no common summand."""
    left, right = list(sympy.Add.make_args(c.lhs)), list(sympy.Add.make_args(c.rhs))
    common = [t for t in left if t in right]
    if not common or (len(left) == 1 and len(right) == 1):
        return None
    for t in common:
        left.remove(t)
        right.remove(t)
    return mk_eq(sympy.Add(*left), sympy.Add(*right))


def _mod_pair(r: sympy.Basic, x: sympy.Expr, y: sympy.Expr, m: sympy.Expr) -> bool:
    """``r`` is ``x % m == y % m`` (either way round)."""
    if not isinstance(r, Eq) or not (isinstance(r.lhs, Mod) and isinstance(r.rhs, Mod)):
        return False
    return {r.lhs.args, r.rhs.args} == {(x, m), (y, m)}


def _radix_candidates(e: sympy.Expr) -> set[sympy.Expr]:
    out = set()
    for t in sympy.Add.make_args(e):
        for fct in sympy.Mul.make_args(t):
            if not fct.is_number and (fct.is_Symbol or fct.is_Mul):
                out.add(fct)
    return out


def _digits(e: sympy.Expr, radix: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr]:
    """``e == high*radix + low`` where ``low`` collects the terms without the factor ``radix``."""
    high, low = [], []
    for t in sympy.Add.make_args(e):
        if radix in sympy.Mul.make_args(t):
            high.append(t / radix)
        else:
            low.append(t)
    return sympy.Add(*high), sympy.Add(*low)


def _quotient_pair(c: sympy.Basic) -> tuple[sympy.Expr, sympy.Expr, sympy.Expr] | None:
    if not isinstance(c, Eq) or not (isinstance(c.lhs, floor) and isinstance(c.rhs, floor)):
        return None
    (x, m1), (y, m2) = frac(c.lhs), frac(c.rhs)
    return (x, y, m1) if m1 == m2 and m1 != 1 else None


def _strip(c: sympy.Basic) -> sympy.Basic | None:
    """``f(X1) == f(X2)`` -> ``X1 == X2`` for f a quotient or remainder by the same divisor."""
    if not isinstance(c, Eq):
        return None
    lhs, rhs = c.lhs, c.rhs
    if isinstance(lhs, Mod) and isinstance(rhs, Mod) and lhs.args[1] == rhs.args[1]:
        return mk_eq(lhs.args[0], rhs.args[0])
    qs = _quotient_pair(c)
    return None if qs is None else mk_eq(qs[0], qs[1])


def _pays_by_cancel(inner: Eq) -> bool:
    cancelled = _cancel(inner)
    if cancelled is None or cancelled is sympy.true or cancelled is sympy.false:
        return False
    return not (cancelled.lhs.is_Symbol or cancelled.rhs.is_Symbol or cancelled.lhs.is_number)
