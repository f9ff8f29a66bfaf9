"""How side conditions are discharged: divisibility, and a theorem's instantiated conditions.

``bounds(expr, ctx)`` gives symbolic ``(lo, hi)`` with ``lo <= expr <= hi`` for every assignment the
context allows (:mod:`.intervals`).  :class:`Reasoner` adds proofs of ``d | n`` to the interval and
sign reasoning and discharges a theorem's instantiated side condition, recording the facts it used.

Example:
    >>> import sympy
    >>> I, CN = sympy.symbols("I CN", integer=True, positive=True)
    >>> bounds(sympy.Mod(I, CN), Context())
    (0, CN - 1)
"""

from __future__ import annotations

import sympy
from sympy import oo

from .build import as_expr, canon, exact_quotient, is_int, mono_gcd
from .cache import SESSION, ProofCache
from .context import Context, Fact
from .expand import expand, frac
from .intervals import Bounds, Intervals
from .theorems import Gcd
from .trace import Why, fmt

__all__ = ["Bounds", "Reasoner", "bounds"]


def bounds(expr: sympy.Expr, ctx: Context, *, cache: ProofCache | None = None) -> Bounds:
    """Symbolic lower and upper bound of an integer expression (``-oo``/``oo`` when unknown)."""
    return Reasoner.for_context(ctx, cache=cache).bounds(canon(as_expr(expr)), [])


_CACHE_LIMIT = 50_000  # entries of one shared reasoner's own tables before they are emptied


class Reasoner(Intervals):
    """Proves sign and bound facts (:class:`~.intervals.Intervals`), divisibility facts and a
    theorem's side conditions under a context; ``used`` collects facts.
    Its answers are kept in ``cache`` (the session's, :data:`~.cache.SESSION` by default) and in
    tables of its own, which the session's ``reasoners`` table holds."""

    def __init__(self, ctx: Context, cache: ProofCache | None = None) -> None:
        super().__init__(ctx, cache)
        self._divides_cache: dict[tuple[sympy.Expr, sympy.Expr], tuple[str | None, list[Fact]]] = {}
        self._discharge_cache: dict[sympy.Basic, tuple[Why | None, list[Fact]]] = {}
        self.failed_rules: set[tuple[object, sympy.Basic]] = set()  # filled by the simplifier

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

    def positive_quotient(self, cond: sympy.Basic, used: list[Fact]) -> Why | None:
        """How ``q > 0`` holds for a quotient of positives (or a product of them) where
        interval reasoning, which bounds ``n/d`` below by ``1/d``, misses it: ``ceilDiv(n, d)``
        for ``n, d > 0``; ``n/d`` where ``d`` divides ``n``, a positive multiple of ``d`` being at
        least ``d`` (``ceilDiv(N, BN)/CN > 0`` given ``ceilDiv(N, BN) % CN == 0``); else None.

        Not part of :meth:`why`: the rules a caller directs at its divisors
        (:data:`~tilec.proofs.rules.BY_DIVISOR`) discharge with it, the driver's own rules do
        not (their answers, and what tilec prints from them, stay as they were)."""
        if isinstance(cond, sympy.Gt) and cond.rhs == 0:
            q = cond.lhs
        elif isinstance(cond, sympy.Lt) and cond.lhs == 0:
            q = cond.rhs
        else:
            return None
        local: list[Fact] = []
        if not self._positive_factors(q, local):
            return None
        used.extend(local)
        return Why(lambda: f"{fmt(q)} is a product of quotients of positives, each exact or "
                           "rounded up")

    def _positive_factors(self, q: sympy.Expr, used: list[Fact]) -> bool:
        if q.is_Mul:
            return all(self._positive_factors(t, used) for t in q.args)
        local: list[Fact] = []
        if self.positive(q, local):
            used.extend(local)
            return True
        if not isinstance(q, sympy.floor | sympy.ceiling):
            return False
        num, den = frac(q)
        exact = isinstance(q, sympy.ceiling) or self.divides(den, num, used) is not None
        return den != 1 and exact and self._positive_factors(num, used) and self._positive_factors(
            den, used)

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


def _chain(parts: list[str]) -> str:
    """Join ``a <= b <= c`` parts, dropping a link between two equal ends (``0 <= 0``)."""
    out = [parts[0]]
    for rel, term in zip(parts[1::2], parts[2::2], strict=True):
        if term == out[-1] and rel.strip() == "<=":
            continue
        out += [rel, term]
    return "".join(out)
