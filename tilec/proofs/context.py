"""Assumption context: signs, upper bounds and divisibility facts about symbols.

A symbol is nonnegative where sympy knows it (every tilec index and extent is declared so) or a
fact states it; a symbol declared negative, nonpositive or with no sign is not.
Every fact has a printable form, and the prover reports the facts a result used, so code generation
can guard on them at run time.

Example:
    >>> import sympy
    >>> SMs, CN, rank, C = sympy.symbols("SMs CN rank CLUSTER", integer=True, positive=True)
    >>> ctx = Context().positive(CN).bound(rank, C).divisible(SMs, CN)
    >>> [str(f) for f in ctx.facts]
    ['CN > 0', 'rank < CLUSTER', 'SMs % CN == 0']
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import sympy

from .build import as_expr, canon, is_int, mk_mod
from .cache import CONTENT
from .trace import text


class FactKind(Enum):
    """What a fact states about its subject."""

    NONNEG = "nonneg"  # x >= 0 (stated explicitly; the default for integer symbols is not reported)
    POSITIVE = "positive"  # x > 0
    BOUND = "bound"  # 0 <= x < upper
    DIVISIBLE = "divisible"  # x % d == 0


@dataclass(frozen=True)
class Fact:
    """One assumption. ``str(fact)`` is what a result reports (``"SMs % CN == 0"``)."""

    kind: FactKind
    subject: sympy.Expr
    other: sympy.Expr | None = None

    def __str__(self) -> str:
        out: str | None = CONTENT.fact_text.get(self)
        if out is None:  # printed often (the prover reports facts by their text): memoised
            out = self._text()
            CONTENT.fact_text.remember(self, out)
        return out

    def _text(self) -> str:
        s = _paren(self.subject)
        if self.kind is FactKind.NONNEG:
            return f"{self.subject} >= 0"
        if self.kind is FactKind.POSITIVE:
            return f"{self.subject} > 0"
        if self.kind is FactKind.BOUND:
            return f"{self.subject} < {self.other}"
        return f"{s} % {_paren(self.other)} == 0"

    @property
    def free_symbols(self) -> set[sympy.Basic]:
        """The symbols the fact is about (a positivity or nonnegativity fact has no ``other``)."""
        out = set(sympy.sympify(self.subject).free_symbols)
        if self.other is not None:
            out |= sympy.sympify(self.other).free_symbols
        return out

    def condition(self) -> sympy.Basic:
        """The fact as a sympy condition (for a run-time guard)."""
        if self.kind is FactKind.NONNEG:
            return sympy.Ge(self.subject, 0)
        if self.kind is FactKind.POSITIVE:
            return sympy.Gt(self.subject, 0)
        if self.kind is FactKind.BOUND:
            return sympy.Lt(self.subject, self.other)
        return sympy.Eq(mk_mod(self.subject, self.other), 0, evaluate=False)


def _paren(e: sympy.Expr | None) -> str:
    s = str(e) if e is None else text(e)
    return s if e is None or e.is_Atom or isinstance(e, sympy.Function) else f"({s})"


class Context:
    """Facts about integer symbols.  Methods return ``self`` so that calls chain.

    >>> i, E = sympy.symbols("i E", integer=True)
    >>> str(Context().bound(i, E).facts[0])
    'i < E'
    """

    def __init__(self) -> None:
        self._facts: list[Fact] = []
        self._signed: set[sympy.Symbol] = set()
        # the facts by subject, in the order given (the queries below ask about one subject;
        # a derivation's context holds dozens of facts)
        self._about: dict[sympy.Expr, list[Fact]] = {}
        self._known: set[Fact] = set()
        self._divisible: list[tuple[Fact, frozenset[sympy.Basic]]] = []  # with the subject's symbols
        self._orders: list[Fact] = []  # e >= 0 for an expression e other than a symbol

    # -- stating facts ------------------------------------------------------------------------
    def nonneg(self, *syms: sympy.Symbol) -> Context:
        """State ``s >= 0`` for each symbol."""
        for s in syms:
            self._add(Fact(FactKind.NONNEG, s))
        return self

    def positive(self, *syms: sympy.Symbol) -> Context:
        """State ``s > 0`` for each symbol (extents, divisors)."""
        for s in syms:
            self._add(Fact(FactKind.POSITIVE, s))
        return self

    def bound(self, sym: sympy.Symbol, upper: sympy.Expr | int) -> Context:
        """State ``0 <= sym < upper``."""
        self._add(Fact(FactKind.BOUND, sym, canon(as_expr(upper))))
        return self

    def divisible(self, n: sympy.Expr, d: sympy.Expr | int) -> Context:
        """State ``n % d == 0`` (a fact nvFuser cannot assume; tilec reports each use)."""
        self._add(Fact(FactKind.DIVISIBLE, canon(as_expr(n)), canon(as_expr(d))))
        return self

    def signed(self, *syms: sympy.Symbol) -> Context:
        """Mark symbols that may be negative (a symbol sympy does not know to be nonnegative is
        treated so anyway; this records the intent, and the printers' reasoners state it)."""
        self._signed.update(syms)
        return self

    def assume(self, cond: sympy.Basic) -> Context:
        """Add the facts a condition states, where it has one of the forms above.

        >>> x, y = sympy.symbols("x y", integer=True, nonnegative=True)
        >>> sorted(str(f) for f in Context().assume(sympy.Lt(x, y) & sympy.Eq(sympy.Mod(x, 4), 0)).facts)
        ['x % 4 == 0', 'x < y']
        """
        for c in sympy.And.make_args(cond):
            if isinstance(c, sympy.StrictLessThan) and c.lhs.is_Symbol:
                self._upper(c.lhs, c.rhs)
            elif isinstance(c, sympy.StrictGreaterThan) and c.rhs.is_Symbol and c.lhs != 0:
                self._upper(c.rhs, c.lhs)
            elif isinstance(c, sympy.StrictGreaterThan) and c.rhs == 0 and c.lhs.is_Symbol:
                self.positive(c.lhs)
            elif isinstance(c, sympy.Eq) and isinstance(c.lhs, sympy.Mod) and c.rhs == 0:
                self.divisible(*c.lhs.args)
            elif isinstance(c, sympy.Eq) and isinstance(c.rhs, sympy.Mod) and c.lhs == 0:
                self.divisible(*c.rhs.args)
            elif isinstance(c, sympy.Rel) and not isinstance(c, sympy.Eq | sympy.Ne):
                self._order(c)
        return self

    def _order(self, c: sympy.Rel) -> None:
        """``a <= b`` (or ``<``, ``>=``, ``>``) between integer expressions: the fact ``b - a >= 0``
        (``b - a - 1 >= 0`` when strict), read by the reasoner's sign proofs."""
        small, big = (c.lhs, c.rhs) if isinstance(c, sympy.Lt | sympy.Le) else (c.rhs, c.lhs)
        if not (is_int(small) and is_int(big)):
            return  # x < CN/2 between non-integers: not an integer fact
        gap = canon(sympy.expand(big - small - (1 if isinstance(c, sympy.Lt | sympy.Gt) else 0)))
        if not gap.is_number:
            self._add(Fact(FactKind.NONNEG, gap))

    def _upper(self, sym: sympy.Symbol, upper: sympy.Expr) -> None:
        """``sym < upper`` is a bound fact (``0 <= sym < upper``) only for a symbol known nonnegative:
        for a signed one it says nothing about the lower end, so it is an order fact."""
        if self.is_nonneg_symbol(sym) is False:
            self._order(sympy.Lt(sym, upper, evaluate=False))
            return
        self.bound(sym, upper)

    def copy(self) -> Context:
        """An independent copy."""
        new = Context()
        new._facts = list(self._facts)
        new._signed = set(self._signed)
        new._about = {k: list(v) for k, v in self._about.items()}
        new._known = set(self._known)
        new._divisible = list(self._divisible)
        new._orders = list(self._orders)
        return new

    def _add(self, fact: Fact) -> None:
        if fact not in self._known:
            self._facts.append(fact)
            self._known.add(fact)
            self._about.setdefault(fact.subject, []).append(fact)
            if fact.kind is FactKind.DIVISIBLE:
                self._divisible.append((fact, frozenset(fact.subject.free_symbols)))
            elif fact.kind is FactKind.NONNEG and not fact.subject.is_Symbol:
                self._orders.append(fact)

    # -- queries ------------------------------------------------------------------------------
    @property
    def facts(self) -> list[Fact]:
        """All stated facts, in the order given."""
        return list(self._facts)

    def key(self, *, divisibility: bool = True) -> tuple[tuple[Fact, ...], frozenset[sympy.Symbol]]:
        """A hashable summary (for caches); without the divisibility facts when
        ``divisibility=False`` (for results that read none: bounds and signs)."""
        facts = self._facts if divisibility else [
            f for f in self._facts if f.kind is not FactKind.DIVISIBLE]
        return (tuple(facts), frozenset(self._signed))

    def stated(self, fact: Fact) -> bool:
        """``fact`` is one of the stated facts (not a symbol's own assumption)."""
        return fact in self._known

    def positive_fact(self, s: sympy.Symbol) -> Fact | None:
        """The fact that makes ``s > 0``: a stated one, or the symbol's own assumption."""
        for fct in self._about.get(s, ()):
            if fct.kind is FactKind.POSITIVE:
                return fct
        if s.is_positive:
            return Fact(FactKind.POSITIVE, s)
        return None

    def is_nonneg_symbol(self, s: sympy.Symbol) -> Fact | bool | None:
        """A Fact when one states ``s >= 0``, else whether sympy knows ``s`` nonnegative (a symbol
        declared negative, nonpositive or with no sign is not)."""
        for fct in self._about.get(s, ()):
            if fct.kind in (FactKind.NONNEG, FactKind.BOUND):
                return fct
        return bool(s.is_nonnegative)

    def orders(self) -> list[Fact]:
        """Stated ``e >= 0`` facts about expressions other than a symbol (``num_m - first_m - G >=
        0`` from ``first_m + G <= num_m``)."""
        return self._orders

    def uppers(self, s: sympy.Symbol) -> list[Fact]:
        """Bound facts ``s < upper``."""
        return [fct for fct in self._about.get(s, ()) if fct.kind is FactKind.BOUND]

    def divisibility_within(self, symbols: set[sympy.Basic] | frozenset[sympy.Basic]) -> tuple[Fact, ...]:
        """Divisibility facts whose subject has no symbol outside ``symbols``, in order."""
        return tuple(f for f, fs in self._divisible if fs <= symbols)

    def divisibility(self, subject: sympy.Expr | None = None) -> list[Fact]:
        """Divisibility facts ``n % d == 0`` (those with ``n == subject`` when given)."""
        facts = self._facts if subject is None else self._about.get(subject, ())
        return [fct for fct in facts if fct.kind is FactKind.DIVISIBLE]

    def __repr__(self) -> str:
        return "Context(" + ", ".join(str(f) for f in self._facts) + ")"
