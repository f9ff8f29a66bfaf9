"""The matcher: what a rule matches (:class:`Shape`), what it is (:class:`Rule`) and what it may
consult (:class:`Env`: the reasoner, the session's cache, the whole expression).  :meth:`Env.step`
discharges a theorem's own side conditions (taken from the theorem data, never restated in a rule)
and refuses a binding that is not integer-valued.

Example:
    >>> x, c = sympy.symbols("x c", integer=True, positive=True)
    >>> Shape("floor", num="Add").match(sympy.floor((x + 1) / c))
    (x + 1, c)
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass

import sympy
from sympy import Mod, ceiling, floor

from ..bounds import Reasoner
from ..build import is_int, subst
from ..cache import ProofCache
from ..context import Context, Fact
from ..expand import frac
from ..theorems import THEOREMS
from ..trace import LazyConditions, Step

Rewrite = tuple[sympy.Basic, list[Step]]


class Env:
    """What a rule may consult: the reasoner (context), the session's cache, the whole
    expression being simplified and, for the rules a caller directs (:data:`~.BY_DIVISOR`), the
    divisors it names, in the order to try them."""

    def __init__(self, ctx: Context, root: sympy.Basic, cache: ProofCache | None = None,
                 divisors: tuple[sympy.Expr, ...] = ()) -> None:
        self.reasoner = Reasoner.for_context(ctx, cache=cache)
        self.cache: ProofCache = self.reasoner.cache
        self.divisors = divisors
        self.set_root(root)

    def set_root(self, root: sympy.Basic) -> None:
        """Record the expression of the current pass (rule 2.11 looks for quotients in it)."""
        self.root = root
        quotients: dict[sympy.Expr, set[sympy.Expr]] = {}
        for q in root.atoms(floor):
            num, den = frac(q)
            if den != 1:
                quotients.setdefault(num, set()).add(den)
        if quotients != getattr(self, "quotients", None):
            self.stuck: set[tuple[str, sympy.Basic]] = set()  # (phase, node): no rule applies
        self.quotients = quotients

    def step(self, number: str, before: sympy.Basic, after: sympy.Basic, binding: dict,
             guard: tuple[sympy.Basic, ...] = ()) -> Step | None:
        """A step of theorem ``number`` with ``binding``, or None if a side condition fails.
        ``guard``: conditions the rule itself needs for ``before`` to be an instance of the
        theorem (``d % b == 0``: ``d`` is ``b*(d/b)``), discharged the same way, listed first."""
        thm = THEOREMS[number]
        if not all(is_int(v) for v in binding.values()):
            return None  # pattern symbols are integers: x/(CM + 1) or a bound 3/2 never binds one
        used: list[Fact] = []
        shown_how: list[tuple[object, object]] = []
        for shown in itertools.chain(guard, (subst(c, binding) for c in thm.conditions)):
            how = self.reasoner.why(shown, used)
            if how is None and self.divisors:  # a directed rule: d/b > 0 for b | d, d, b > 0
                how = self.reasoner.positive_quotient(shown, used)
            if how is None:
                return None
            shown_how.append((shown, how))
        facts = list(dict.fromkeys(map(str, dict.fromkeys(used))))
        return Step(number, before, after, LazyConditions(shown_how), facts, thm.exact,
                    tuple(dict.fromkeys(used)))

    def rewrite(self, number: str, before: sympy.Basic, after: sympy.Basic, binding: dict) -> Rewrite | None:
        """``(after, [step])`` for one step of theorem ``number`` (see :meth:`step`), or None."""
        st = self.step(number, before, after, binding)
        return None if st is None else (after, [st])


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
            num, den = frac(e)
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
