"""Interval and sign reasoning under a context: symbolic ``(lo, hi)`` with ``lo <= e <= hi`` for
every assignment the context allows, and proofs of ``e >= 0``, ``e > 0``, ``a <= b``, each recording
the facts it used.  :class:`~.bounds.Reasoner` adds divisibility and side conditions on top.

Example:
    >>> import sympy
    >>> I, CN = sympy.symbols("I CN", integer=True, positive=True)
    >>> iv = Intervals(Context())
    >>> iv.bounds(sympy.Mod(I, CN), []), iv.nonneg(CN - 1, [])
    ((0, CN - 1), True)
"""

from __future__ import annotations

import sympy
from sympy import oo

from .build import is_int, mk_ceiling, mk_floor, mk_minmax
from .cache import SESSION, ProofCache
from .context import Context, Fact
from .expand import frac

Bounds = tuple[sympy.Expr, sympy.Expr]


class Intervals:
    """Bounds and signs under ``ctx``; ``used`` collects the facts a proof read.  Contexts that
    differ only in divisibility facts share these answers (``cache.intervals``): none reads one."""

    def __init__(self, ctx: Context, cache: ProofCache | None = None) -> None:
        self.ctx = ctx
        self.cache = cache = cache or SESSION
        self._nonneg_cache: dict[sympy.Expr, tuple[bool, list[Fact]]]
        self._bounds_cache: dict[sympy.Expr, tuple[sympy.Expr, sympy.Expr, list[Fact]]]
        self._nonneg_cache, self._bounds_cache = cache.intervals.get_or(ctx.key(divisibility=False),
                                                                        lambda: ({}, {}))
        self._ordering = False  # proving e - g >= 0 for an order fact g >= 0
        self._active: set[sympy.Expr] = set()  # expressions whose bounds are being computed

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


def _sum(xs: tuple[sympy.Expr, ...]) -> sympy.Expr:
    if any(x is oo for x in xs):
        return oo
    if any(x is -oo for x in xs):
        return -oo
    return sympy.Add(*xs)
