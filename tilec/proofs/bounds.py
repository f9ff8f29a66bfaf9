"""Interval reasoning and divisibility: how side conditions are discharged.

``bounds(expr, ctx)`` gives symbolic ``(lo, hi)`` with ``lo <= expr <= hi`` for every assignment the
context allows.  :class:`Reasoner` proves ``e >= 0`` and ``d | n`` and discharges a theorem's
instantiated side condition, recording the facts it used.

Example:
    >>> import sympy
    >>> I, CN = sympy.symbols("I CN", integer=True, positive=True)
    >>> bounds(sympy.Mod(I, CN), Context())
    (0, CN - 1)
"""

from __future__ import annotations

import sympy
from sympy import oo

from .build import as_expr, canon, exact_quotient, is_int, mk_ceiling, mk_floor, mk_minmax, mono_gcd
from .cache import SESSION, ProofCache
from .context import Context, Fact
from .expand import expand, frac
from .theorems import Gcd
from .trace import Why, fmt

Bounds = tuple[sympy.Expr, sympy.Expr]


def bounds(expr: sympy.Expr, ctx: Context, *, cache: ProofCache | None = None) -> Bounds:
    """Symbolic lower and upper bound of an integer expression (``-oo``/``oo`` when unknown)."""
    return Reasoner.for_context(ctx, cache=cache).bounds(canon(as_expr(expr)), [])


_CACHE_LIMIT = 50_000  # entries of one shared reasoner's own tables before they are emptied


class Reasoner:
    """Proves sign, bound and divisibility facts under a context; ``used`` collects facts.
    Its answers are kept in ``cache`` (the session's, :data:`~.cache.SESSION` by default) and in
    tables of its own, which the session's ``reasoners`` table holds."""

    def __init__(self, ctx: Context, cache: ProofCache | None = None) -> None:
        self.ctx = ctx
        self.cache = cache = cache or SESSION
        self._nonneg_cache: dict[sympy.Expr, tuple[bool, list[Fact]]]
        self._bounds_cache: dict[sympy.Expr, tuple[sympy.Expr, sympy.Expr, list[Fact]]]
        self._nonneg_cache, self._bounds_cache = cache.intervals.get_or(ctx.key(divisibility=False),
                                                                   lambda: ({}, {}))
        self._divides_cache: dict[tuple[sympy.Expr, sympy.Expr], tuple[str | None, list[Fact]]] = {}
        self._discharge_cache: dict[sympy.Basic, tuple[Why | None, list[Fact]]] = {}
        self.failed_rules: set[tuple[object, sympy.Basic]] = set()  # filled by the simplifier
        self._ordering = False  # proving e - g >= 0 for an order fact g >= 0
        self._active: set[sympy.Expr] = set()  # expressions whose bounds are being computed

    @classmethod
    def for_context(cls, ctx: Context, *, cache: ProofCache | None = None) -> Reasoner:
        """A reasoner for ``ctx``'s current facts, shared across calls in ``cache``'s session
        (its own tables persist with it)."""
        cache = cache or SESSION
        hit: Reasoner = cache.reasoners.get_or(ctx.key(), lambda: cls(ctx.copy(), cache))
        if len(hit._nonneg_cache) + len(hit._bounds_cache) + len(hit._divides_cache) > _CACHE_LIMIT:
            hit._nonneg_cache.clear()
            hit._bounds_cache.clear()
            hit.__init__(hit.ctx, cache)  # type: ignore[misc]
        return hit

    @classmethod
    def for_signs_of(cls, expr: sympy.Basic, ctx: Context | None = None, *,
                     cache: ProofCache | None = None) -> Reasoner:
        """A reasoner for proving signs inside ``expr`` before printing it as C or Triton.

        Stricter than the default context: a free symbol of ``expr`` that sympy does not know to be
        nonnegative is signed unless ``ctx`` states a fact about it.

        >>> n, s = sympy.Symbol("n", integer=True, nonnegative=True), sympy.Symbol("s", integer=True)
        >>> r = Reasoner.for_signs_of(n + s)
        >>> r.nonneg(n, []), r.nonneg(s, [])
        (True, False)
        """
        local = (ctx or Context()).copy()
        local.signed(*(x for x in expr.free_symbols if x.is_Symbol and not x.is_nonnegative))
        return cls.for_context(local, cache=cache)

    # -- bounds -------------------------------------------------------------------------------
    def bounds(self, e: sympy.Expr, used: list[Fact]) -> Bounds:
        """(lo, hi) of ``e``; facts used are appended to ``used``."""
        hit = self._bounds_cache.get(e)
        if hit is None:
            if e in self._active:  # a bound that refers back to itself (x < x/2 + 1): no bound
                return -oo, oo
            self._active.add(e)
            try:
                local: list[Fact] = []
                hit = (*self._bounds(e, local), local)
            finally:
                self._active.discard(e)
            if not self._ordering:  # see nonneg
                self._bounds_cache[e] = hit
        used.extend(hit[2])
        return hit[0], hit[1]

    def _bounds(self, e: sympy.Expr, used: list[Fact]) -> Bounds:
        if e.is_Number:
            return e, e
        if e.is_Symbol:
            return self._symbol_bounds(e, used)
        if e.is_Add:
            los, his = zip(*(self.bounds(t, used) for t in e.args), strict=True)
            return _sum(los), _sum(his)
        if e.is_Mul:
            return self._mul_bounds(e, used)
        if isinstance(e, sympy.Mod):
            return self._mod_bounds(e, used)
        if isinstance(e, sympy.floor | sympy.ceiling):
            return self._div_bounds(e, used)
        if e.is_Pow and e.exp.is_Integer and e.exp > 0:
            lo, hi = self.bounds(e.base, used)
            if self._nonneg_number(lo):
                return lo**e.exp, hi**e.exp
        if isinstance(e, sympy.Max | sympy.Min):
            bs = [self.bounds(t, used) for t in e.args]
            return _pick(e.func, [b[0] for b in bs]), _pick(e.func, [b[1] for b in bs])
        return -oo, oo

    def _symbol_bounds(self, s: sympy.Symbol, used: list[Fact]) -> Bounds:
        lo: sympy.Expr = -oo
        pos = self.ctx.positive_fact(s)
        nn = self.ctx.is_nonneg_symbol(s)
        if pos is not None:
            lo = sympy.Integer(1)
            if self.ctx.stated(pos) or not s.is_positive:
                used.append(pos)
        elif nn:
            lo = sympy.Integer(0)
            if isinstance(nn, Fact) and nn.kind.value == "nonneg":
                used.append(nn)
        ups = self.ctx.uppers(s)
        if ups:
            used.append(ups[0])
            return lo, _below(s, ups[0].other)  # type: ignore[arg-type]
        return lo, oo

    def _mul_bounds(self, e: sympy.Expr, used: list[Fact]) -> Bounds:
        coeff, rest = e.as_coeff_Mul()
        factors = sympy.Mul.make_args(rest)
        local: list[Fact] = []
        bs = [self.bounds(t, local) for t in factors]
        if not all(self._nonneg_number(lo) or self.nonneg(lo, local) for lo, _ in bs):
            return -oo, oo
        used.extend(local)
        lo = sympy.Mul(*(b[0] for b in bs))
        hi = oo if any(b[1] is oo for b in bs) else sympy.Mul(*(b[1] for b in bs))
        if coeff >= 0:
            return coeff * lo, coeff * hi if hi is not oo else oo
        return (coeff * hi if hi is not oo else -oo), coeff * lo

    def _mod_bounds(self, e: sympy.Mod, used: list[Fact]) -> Bounds:
        x, m = e.args
        local: list[Fact] = []
        if not self.positive(m, local):
            return -oo, oo
        used.extend(local)
        hi = m - 1
        xlo, xhi = self.bounds(x, local)
        if self._nonneg_number(xlo) and xhi is not oo and _is_nonneg_number(hi - xhi - 1):
            used.extend(local)
            hi = xhi
        return sympy.Integer(0), hi

    def _div_bounds(self, e: sympy.Expr, used: list[Fact]) -> Bounds:
        num, den = frac(e)
        op = type(e)
        if den == 1:
            return self.bounds(num, used)
        local: list[Fact] = []
        if not self.positive(den, local):
            return -oo, oo
        nlo, nhi = self.bounds(num, local)
        used.extend(local)
        lo = -oo if nlo is -oo else _lazy(op, nlo / den)
        hi = oo if nhi is oo else _lazy(op, nhi / den)
        if nlo is not -oo and self._nonneg_number(nlo) and nhi is not oo and self.nonneg(den - 1 - nhi, used):
            hi = sympy.Integer(0) if op is sympy.floor else hi
            lo = sympy.Integer(0) if op is sympy.floor else lo
        return lo, hi

    # -- signs --------------------------------------------------------------------------------
    def nonneg(self, e: sympy.Expr, used: list[Fact]) -> bool:
        """Prove ``e >= 0``: replace bounded terms by their bounds, then sum numeric term bounds."""
        key = e
        if self._ordering:  # within an order fact's proof: answers without order facts, not kept
            return self._nonneg(e, used)
        if key in self._nonneg_cache:
            ok, facts = self._nonneg_cache[key]
            used.extend(facts)
            return ok
        local: list[Fact] = []
        ok = self._nonneg(e, local)
        self._nonneg_cache[key] = (ok, local if ok else [])
        if ok:
            used.extend(local)
        return ok

    def _nonneg(self, e: sympy.Expr, used: list[Fact]) -> bool:
        if self._plain_nonneg(e, used):
            return True
        if self._ordering:
            return False
        # an order fact g >= 0 (first_m + G <= num_m): e >= 0 where e - g >= 0 is proven without
        # order facts (one at a time: no chain of them, so no regress)
        syms = e.free_symbols
        for fct in self.ctx.orders():
            if not (fct.subject.free_symbols & syms):
                continue
            local: list[Fact] = []
            self._ordering = True
            try:
                ok = self._plain_nonneg(e - fct.subject, local)
            finally:
                self._ordering = False
            if ok:
                used.extend([*local, fct])
                return True
        return False

    def _plain_nonneg(self, e: sympy.Expr, used: list[Fact]) -> bool:
        e = sympy.expand(e, deep=False)
        for _ in range(4):
            if e.is_number:
                return _is_nonneg_number(e)
            if self._numeric_lower(e, used):
                return True
            local: list[Fact] = []
            new_terms = []
            for t in sympy.Add.make_args(e):
                coeff, mono = t.as_coeff_Mul()
                if mono == 1 or (_plain(mono) and (coeff > 0 or not self._has_upper(mono))):
                    new_terms.append(t)
                    continue
                lo, hi = self.bounds(mono, local)
                sub = lo if coeff > 0 else hi
                if sub in (oo, -oo):
                    return False
                new_terms.append(coeff * sub)
            new = sympy.expand(sympy.Add(*new_terms), deep=False)
            if new == e:
                return False
            used.extend(local)
            e = new
        return False

    def _has_upper(self, mono: sympy.Expr) -> bool:
        return any(self.ctx.uppers(s) for s in mono.free_symbols)

    def _numeric_lower(self, e: sympy.Expr, used: list[Fact]) -> bool:
        """Sum of numeric lower bounds of the terms of a polynomial in plain symbols is >= 0."""
        total = sympy.Integer(0)
        local: list[Fact] = []
        for t in sympy.Add.make_args(e):
            coeff, mono = t.as_coeff_Mul()
            if mono == 1:
                total += coeff
                continue
            if coeff < 0 or not _plain(mono):
                return False
            lo = sympy.Integer(1)
            for s in sympy.Mul.make_args(mono):
                base = s.base if s.is_Pow and s.exp.is_Integer and s.exp > 0 else s
                if not base.is_Symbol:
                    return False
                slo = self._symbol_bounds(base, local)[0]
                if slo is -oo or slo < 0:
                    return False
                lo *= slo
            total += coeff * lo
        if total >= 0:
            used.extend(local)
            return True
        return False

    def positive(self, e: sympy.Expr, used: list[Fact]) -> bool:
        """Prove ``e > 0``."""
        if e.is_Symbol:
            fct = self.ctx.positive_fact(e)
            if fct is not None:
                if self.ctx.stated(fct) or not e.is_positive:
                    used.append(fct)
                return True
        if e.is_Mul and all(self.positive(t, used) for t in e.args):
            return True
        return self.nonneg(e - 1, used)

    def le(self, a: sympy.Expr, b: sympy.Expr, used: list[Fact]) -> bool:
        """Prove ``a <= b``."""
        return self.nonneg(b - a, used)

    def _nonneg_number(self, e: sympy.Expr) -> bool:
        return bool(e.is_number and e is not -oo and _is_nonneg_number(e))

    # -- divisibility -------------------------------------------------------------------------
    def divides(self, d: sympy.Expr, n: sympy.Expr, used: list[Fact]) -> str | None:
        """Prove ``n % d == 0``; return how (factorisation or stated fact), or None."""
        hit = self._divides_cache.get((d, n))
        if hit is None:
            # _divides reads only the divisibility facts about n's symbols (of n, its terms and
            # factors, a quotient's numerator): contexts that agree on those share the answer
            key = (d, n, self.ctx.divisibility_within(n.free_symbols))
            hit = self.cache.divides.get_or(key, lambda: self._divides_traced(d, n))
            self._divides_cache[(d, n)] = hit
        if hit[0] is not None:
            used.extend(hit[1])
        return hit[0]

    def _divides_traced(self, d: sympy.Expr, n: sympy.Expr) -> tuple[str | None, list[Fact]]:
        local: list[Fact] = []
        return self._divides(d, n, local), local

    def _divides(self, d: sympy.Expr, n: sympy.Expr, used: list[Fact]) -> str | None:
        if not (is_int(n) and is_int(d)) or d == 0:
            return None  # divisibility is a statement about integers (x/(CM + 1) is no multiple of 2)
        if n == 0:
            return "0 is a multiple of everything"
        q = exact_quotient(n, d)
        if q is not None:
            return f"factorisation: {fmt(n)} = {fmt(d)}*({fmt(q)})" if q != 1 else "identity"
        if n.is_Add:
            hows = []
            for t in n.args:
                how = self.divides(d, t, used)
                if how is None:
                    return None
                hows.append(how)
            return "each term: " + "; ".join(hows)
        for fct in self.ctx.divisibility(n):
            if exact_quotient(fct.other, d) is not None:
                used.append(fct)
                via = "" if fct.other == d else f" and {fmt(d)} divides {fmt(fct.other)}"
                return f"stated fact {fct}{via}"
        if n.is_Mul:
            for t in n.args:
                if t.is_Number and not self.ctx.divisibility(t):  # d | 2 stated: d | 2*x
                    continue
                local: list[Fact] = []
                how = self.divides(d, t, local)
                if how is not None:
                    used.extend(local)
                    return f"factor {fmt(t)}: {how}"
        if isinstance(n, sympy.floor):
            num, den = frac(n)
            local = []
            h1 = self.divides(den * d, num, local)
            if h1 is not None:
                used.extend(local)
                return f"{fmt(num)} is a multiple of {fmt(den * d)} ({h1}), so {fmt(n)} is exact"
        return None

    # -- side conditions ----------------------------------------------------------------------
    def discharge(self, cond: sympy.Basic, used: list[Fact]) -> str | None:
        """How an instantiated side condition holds, or None when it cannot be proven."""
        why = self.why(cond, used)
        return None if why is None else str(why)

    def why(self, cond: sympy.Basic, used: list[Fact]) -> Why | None:
        """:meth:`discharge` with the text left unprinted until asked for."""
        hit = self._discharge_cache.get(cond)
        if hit is None:
            local: list[Fact] = []
            hit = (self._discharge(cond, local), local)
            self._discharge_cache[cond] = hit
        if hit[0] is not None:
            used.extend(hit[1])
        return hit[0]

    def _discharge(self, cond: sympy.Basic, used: list[Fact]) -> Why | None:
        if cond is sympy.true:
            return Why("holds identically")
        if isinstance(cond, sympy.And):
            hows = [self.why(c, used) for c in cond.args]
            return None if any(h is None for h in hows) else Why.join("; ", hows)  # type: ignore[arg-type]
        if isinstance(cond, sympy.Eq):
            lhs, rhs = cond.lhs, cond.rhs
            if isinstance(rhs, sympy.Mod) and lhs == 0:
                lhs, rhs = rhs, lhs
            if isinstance(lhs, sympy.Mod) and rhs == 0:
                how = self.divides(lhs.args[1], lhs.args[0], used)
                return None if how is None else Why(how)
            if expand(lhs - rhs) == 0:
                return Why("identity")
            return None
        if isinstance(cond, sympy.Ne):
            local: list[Fact] = []
            if self.positive(cond.lhs - cond.rhs, local) or self.positive(cond.rhs - cond.lhs, local):
                used.extend(local)
                return Why("interval reasoning")
            return None
        if isinstance(cond, sympy.Gt | sympy.Lt) and 0 in (cond.lhs, cond.rhs):
            x = cond.lhs if isinstance(cond, sympy.Gt) else cond.rhs
            if x.is_Symbol and x != 0 and (fct := self.ctx.positive_fact(x)) is not None:
                used.append(fct)
                return Why("stated fact" if self.ctx.stated(fct) else "assumption (positive symbol)")
        if isinstance(cond, sympy.Rel):
            small, big = (cond.lhs, cond.rhs) if isinstance(cond, sympy.Lt | sympy.Le) else (cond.rhs, cond.lhs)
            strict = isinstance(cond, sympy.Lt | sympy.Gt)
            return self._prove_le(small, big, used, strict)
        return None

    def _prove_le(self, small: sympy.Expr, big: sympy.Expr, used: list[Fact], strict: bool = False) -> Why | None:
        big, how_big = self._resolve(big, used)
        if big is None:
            return None
        local: list[Fact] = []
        if isinstance(big, sympy.Abs):
            if not self.nonneg(big.args[0], local):
                return None
            big = big.args[0]
        if self.le(small + 1 if strict else small, big, local):
            used.extend(local)
            return Why(lambda: f"interval reasoning: {self.interval_text(small, big, strict)}{how_big}")
        return None

    def interval_text(self, small: sympy.Expr, big: sympy.Expr, strict: bool) -> str:
        """The chain of bounds behind ``small < big`` (or ``<=``), e.g. ``0 <= r % CN <= CN - 1 < CN``.

        Only links that hold are shown: an upper bound of ``small`` appears only when it is itself
        proven below ``big``.
        """
        rel = " < " if strict else " <= "
        if small.is_number:  # 0 <= x: show x's interval, lower end first
            lo, hi = self.bounds(big, [])
            parts = [fmt(small), rel, fmt(lo), " <= ", fmt(big)] if lo is not -oo else [fmt(small), rel, fmt(big)]
            if hi is not oo:
                parts += [" <= ", fmt(hi)]
            return _chain(parts)
        lo, hi = self.bounds(small, [])
        parts = [] if lo is -oo else [fmt(lo), " <= "]
        parts.append(fmt(small))
        if hi is not oo and hi != small and self.le(hi + 1 if strict else hi, big, []):
            parts += [" <= ", fmt(hi)]
        parts += [rel, fmt(big)]
        return _chain(parts)

    def _resolve(self, big: sympy.Expr, used: list[Fact]) -> tuple[sympy.Expr | None, str | Why]:
        """Replace ``gcd(a, c)`` by a provable lower bound: ``c`` when ``c | a``, else the poly gcd."""
        if not isinstance(big, Gcd):
            return big, ""
        x, m = big.args
        local: list[Fact] = []
        how = self.divides(m, x, local)
        if how is not None and self.positive(m, local):
            used.extend(local)
            return m, Why(lambda: f"; gcd = {fmt(m)} since {fmt(m)} divides {fmt(x)} ({how})")
        g = mono_gcd(x, m)
        if g != 1 and self.positive(g, local):
            used.extend(local)
            return g, Why(lambda: f"; {fmt(g)} divides the gcd")
        return None, ""


def _below(s: sympy.Symbol, upper: sympy.Expr) -> sympy.Expr:
    """The largest value ``s < upper`` allows, as a bound: ``upper - 1`` for an integer ``s`` and
    an integer-valued ``upper``; ``ceil(upper) - 1`` for a rational one (``r < CN/2`` is ``r <=
    ceil(CN/2) - 1``, not ``r <= CN/2 - 1``: at CN = 3 it allows r = 1); ``upper`` itself for a
    symbol not known to be an integer.

    >>> r, CN = sympy.symbols("r CN", integer=True, positive=True)
    >>> _below(r, CN), _below(r, sympy.Rational(5, 2)), _below(r, CN / 2)
    (CN - 1, 2, ceiling(CN/2) - 1)
    """
    if not is_int(s):
        return upper
    if is_int(upper):
        return upper - 1
    return mk_ceiling(upper) - 1


def _pick(func: type, xs: list[sympy.Expr]) -> sympy.Expr:
    """``Min``/``Max`` of bounds, infinities included, built structurally (see ``mk_minmax``)."""
    absorbing, neutral = (-oo, oo) if func is sympy.Min else (oo, -oo)
    if absorbing in xs:
        return absorbing
    rest = [x for x in xs if x != neutral]
    return mk_minmax(func, rest) if rest else neutral


def _chain(parts: list[str]) -> str:
    """Join ``a <= b <= c`` parts, dropping a link between two equal ends (``0 <= 0``)."""
    out = [parts[0]]
    for rel, term in zip(parts[1::2], parts[2::2], strict=True):
        if term == out[-1] and rel.strip() == "<=":
            continue
        out += [rel, term]
    return "".join(out)


def _lazy(op: type, x: sympy.Expr) -> sympy.Expr:
    """``op(x)`` through the structural builders (sympy's floor eval is costly)."""
    return mk_floor(x) if op is sympy.floor else mk_ceiling(x)


def _is_nonneg_number(e: sympy.Expr) -> bool:
    if not e.is_number:
        return False
    try:
        return bool(e.doit() >= 0)
    except TypeError:  # an unevaluated number sympy cannot order
        return False


def _plain(mono: sympy.Expr) -> bool:
    """A product of powers of symbols (no floor, Mod, ...)."""
    return all(
        f.is_Symbol or (f.is_Pow and f.base.is_Symbol and f.exp.is_Integer and f.exp > 0)
        for f in sympy.Mul.make_args(mono)
    )


def _is_int_poly(q: sympy.Expr) -> bool:
    """True when ``q`` is a polynomial with integer coefficients in integer-valued atoms."""
    return is_int(q)


def _sum(xs: tuple[sympy.Expr, ...]) -> sympy.Expr:
    if any(x is oo for x in xs):
        return oo
    if any(x is -oo for x in xs):
        return -oo
    return sympy.Add(*xs)
