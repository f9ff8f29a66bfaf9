"""Proof traces: one :class:`Step` per theorem application, printed so a person can follow it.

Expressions print in nvFuser's notation: ``a/b`` and ``a % b`` are Euclidean division and remainder
(equal to floor division here, where dividends are nonnegative and divisors positive).

Example:
    >>> import sympy
    >>> I, CN = sympy.symbols("I CN", integer=True, positive=True)
    >>> fmt(sympy.Mod(sympy.floor(I / CN), 4))
    '(I/CN) % 4'
"""

from __future__ import annotations

from dataclasses import dataclass, field

import sympy
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter


class _DivPrinter(StrPrinter):
    """``floor(a/b)`` -> ``a/b`` and ``Mod(a, b)`` -> ``a % b``, parenthesised like C's ``*``."""

    def parenthesize(self, item: sympy.Basic, level: int, strict: bool = False) -> str:
        p = PRECEDENCE["Mul"] if isinstance(item, sympy.floor | sympy.Mod) else precedence(item)
        if p < level or (not strict and p <= level):
            return f"({self._print(item)})"
        return self._print(item)

    def _side(self, e: sympy.Basic, left: bool) -> str:
        if e.is_Atom or (left and isinstance(e, sympy.floor)):
            return self._print(e)
        return f"({self._print(e)})"

    def _print_floor(self, e: sympy.floor) -> str:
        num, den = sympy.fraction(e.args[0])
        if den == 1:
            return f"floor({self._print(e.args[0])})"
        return f"{self._side(num, True)}/{self._side(den, False)}"

    def _print_ceiling(self, e: sympy.ceiling) -> str:
        num, den = sympy.fraction(e.args[0])
        return f"ceilDiv({self._print(num)}, {self._print(den)})"

    def _print_Mod(self, e: sympy.Mod) -> str:
        x, m = e.args
        return f"{self._side(x, False)} % {self._side(m, False)}"

    def _print_Abs(self, e: sympy.Abs) -> str:
        return f"|{self._print(e.args[0])}|"

    def _print_Equality(self, e: sympy.Eq) -> str:
        return f"{self._print(e.lhs)} == {self._print(e.rhs)}"

    def _print_Unequality(self, e: sympy.Ne) -> str:
        return f"{self._print(e.lhs)} != {self._print(e.rhs)}"


_PRINTER = _DivPrinter()


def fmt(e: sympy.Basic) -> str:
    """Print an expression or condition in nvFuser's notation."""
    return str(_PRINTER.doprint(e))


@dataclass
class Step:
    """One rewrite: ``theorem`` turned ``before`` into ``after`` (sub-expressions).

    ``conditions`` lists each instantiated side condition with how it was discharged;
    ``exact`` is False for a narrowing step (``after`` implies ``before``, not iff).
    """

    theorem: str
    before: sympy.Basic
    after: sympy.Basic
    conditions: list[tuple[str, str]] = field(default_factory=list)
    facts: list[str] = field(default_factory=list)
    exact: bool = True

    def __str__(self) -> str:
        arrow = "<=" if not self.exact else "->"
        lines = [f"[{self.theorem}] {fmt(self.before)}  {arrow}  {fmt(self.after)}"]
        lines += [f"      since {cond}: {how}" for cond, how in self.conditions]
        return "\n".join(lines)


class Trace(list[Step]):
    """The steps of a proof, in order; ``str(trace)`` numbers them."""

    def __str__(self) -> str:
        if not self:
            return "(no rewrite applied)"
        out = []
        for n, step in enumerate(self, 1):
            text = str(step).split("\n")
            out.append(f"{n:2d}. {text[0]}")
            out.extend(f"    {t}" for t in text[1:])
        return "\n".join(out)

    def theorems(self) -> list[str]:
        """Theorem numbers in order of use."""
        return [s.theorem for s in self]


@dataclass
class Result:
    """What the simplifier and prover return: the expression, its proof, and the facts it used."""

    expr: sympy.Basic
    trace: Trace = field(default_factory=Trace)
    original: sympy.Basic | None = None

    @property
    def facts_used(self) -> list[str]:
        """Stated facts and assumptions used by some step, each once, in first-use order."""
        seen: dict[str, None] = {}
        for step in self.trace:
            for fct in step.facts:
                seen.setdefault(fct, None)
        return list(seen)

    @property
    def exact(self) -> bool:
        """True when every step is an equivalence (no narrowing)."""
        return all(s.exact for s in self.trace)

    def explain(self) -> str:
        """Readable text: input, steps with discharged side conditions, result, facts used."""
        head = [] if self.original is None else [f"input:  {fmt(self.original)}"]
        facts = ", ".join(self.facts_used) or "none"
        return "\n".join([*head, str(self.trace), f"result: {fmt(self.expr)}", f"facts used: {facts}"])

    def __str__(self) -> str:
        return self.explain()
