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

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import sympy
from sympy.core.parameters import global_parameters
from sympy.printing.precedence import PRECEDENCE, precedence
from sympy.printing.str import StrPrinter

from .cache import CONTENT


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


class _MemoStrPrinter(StrPrinter):
    """sympy's ``str`` printer, each sub-expression printed once per process: a proof's rows and
    a derivation's forms repeat the same sub-expressions (``ceiling(ceiling(N/BN)/CN)``) many
    times, and sympy orders the terms of every sum anew each time it prints one (most of the cost
    of printing). A sub-expression prints the same wherever it stands, except a Float at the top
    (its digits depend on the depth), which is never kept; the printer builds expressions (a
    negated coefficient), so the text is kept per state of sympy's ``evaluate`` and
    ``distribute`` switches (in :data:`~.cache.CONTENT`'s ``text`` table)."""

    def __init__(self) -> None:
        super().__init__({"order": None})  # what str(expr) uses

    def _print(self, expr: object, **kwargs: object) -> str:
        if kwargs or not isinstance(expr, sympy.Basic) or isinstance(expr, sympy.Float):
            return super()._print(expr, **kwargs)
        key = (expr, global_parameters.evaluate, global_parameters.distribute)
        hit: str | None = CONTENT.text.get(key)
        if hit is None:
            hit = super()._print(expr)
            CONTENT.text.remember(key, hit)
        return hit


_STR = _MemoStrPrinter()


def text(e: sympy.Basic) -> str:
    """``str(e)``, with the sub-expressions already printed in this process reused.

    >>> x, n = sympy.symbols("x n", integer=True, positive=True)
    >>> e = sympy.floor(x / n) + sympy.Mod(x + 1, n)
    >>> text(e) == str(e), text(sympy.Eq(e, 0)) == str(sympy.Eq(e, 0))
    (True, True)
    """
    return str(_STR.doprint(e))


class Why:
    """Text computed when first printed (printing is most of the cost of a cheap proof step).

    >>> w = Why(lambda: "interval reasoning")
    >>> str(w), bool(w)
    ('interval reasoning', True)
    """

    __slots__ = ("_fn", "_text")

    def __init__(self, text: str | Callable[[], str]) -> None:
        self._text: str | None = text if isinstance(text, str) else None
        self._fn = None if isinstance(text, str) else text

    def __str__(self) -> str:
        if self._text is None:
            self._text = str(self._fn())  # type: ignore[misc]
            self._fn = None
        return self._text

    def __repr__(self) -> str:
        return repr(str(self))

    @staticmethod
    def join(sep: str, parts: list[Why]) -> Why:
        """``sep.join`` of the non-empty parts, lazily."""
        return Why(lambda: sep.join(t for t in map(str, parts) if t))


def _text(x: object) -> str:
    return x if isinstance(x, str) else str(x) if isinstance(x, Why) else fmt(x)


class LazyConditions(list):
    """A step's ``conditions``: ``(condition, how)`` string pairs, printed on first access."""

    def __init__(self, pending: Sequence[tuple[object, object]]) -> None:
        super().__init__()
        self._pending: Sequence[tuple[object, object]] | None = pending

    def _force(self) -> None:
        pending = getattr(self, "_pending", None)
        if pending is not None:
            self._pending = None
            list.extend(self, [(_text(c), _text(h)) for c, h in pending])


def _forcing(name: str) -> Callable[..., object]:
    method = getattr(list, name)

    def wrapper(self: LazyConditions, *args: object, **kw: object) -> object:
        self._force()
        return method(self, *args, **kw)

    wrapper.__name__ = name
    return wrapper


for _name in ("__iter__", "__len__", "__getitem__", "__setitem__", "__delitem__", "__contains__",
              "__reversed__", "__eq__", "__ne__", "__lt__", "__le__", "__gt__", "__ge__", "__add__",
              "__iadd__", "__mul__", "__rmul__", "__imul__", "__repr__", "__str__", "__reduce_ex__",
              "append", "extend", "insert", "pop", "remove", "clear", "index", "count", "copy", "sort",
              "reverse"):
    setattr(LazyConditions, _name, _forcing(_name))
LazyConditions.__hash__ = None


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
    used: tuple[Any, ...] = ()  # the Fact objects ``facts`` prints (a caller keeps objects)

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
    def used_facts(self) -> list[Any]:
        """The Fact objects of :attr:`facts_used`, each once, in first-use order."""
        return list(dict.fromkeys(f for step in self.trace for f in step.used))

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
