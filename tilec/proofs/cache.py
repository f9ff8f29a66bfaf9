"""The proof engine's memo tables, held by two objects instead of module globals.

* :class:`ProofCache` -- one proof session: results that depend on a :class:`~.context.Context`
  (simplified expressions, narrowed conditions, shared reasoners and what they proved).  The
  engine's entry points take ``cache=`` and pass it down (a :class:`~.bounds.Reasoner` holds it,
  a rule reaches it through the reasoner), as nvFuser passes its ``HeuristicDataCache``;
  :data:`SESSION` is the one used when none is given.
* :class:`ContentCache` -- pure functions of an expression's content, true under every context
  (is it integer-valued, its canonical form and expansion, a quotient's fraction, printed text,
  compiled evaluators).  The builders, printers and the evaluator are free functions called from
  every layer; they share :data:`CONTENT`.

:func:`clear_caches` empties both.  Results never depend on what the tables hold.

Example::

    >>> c = Memo(2)
    >>> c.get_or(1, lambda: "a"), c.get_or(2, lambda: "b"), c.get_or(3, lambda: "c")
    ('a', 'b', 'c')
    >>> 1 in c, 3 in c, len(c)
    (False, True, 2)
    >>> s = ProofCache()
    >>> _ = s.results.get_or("key", lambda: "value")
    >>> s.sizes()["results"], (s.clear(), s.sizes()["results"])[1]
    (1, 0)
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Generic, TypeVar

from cachetools import LRUCache

V = TypeVar("V")


class Memo(LRUCache, Generic[V]):  # type: ignore[type-arg]
    """cachetools' LRU cache of at most ``limit`` entries, with :meth:`get_or`."""

    def __init__(self, limit: int) -> None:
        super().__init__(maxsize=limit)

    def get_or(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The value under ``key``, computed (and kept) on a miss."""
        if key in self:
            hit: V = self[key]
            return hit
        value = self[key] = compute()
        return value


class Table(dict):  # type: ignore[type-arg]
    """A dict that empties itself when it outgrows ``limit``, for the hottest tables (``is_int``,
    ``canon``: called hundreds of thousands of times in a derivation): a plain ``dict.get`` costs
    less than an LRU's bookkeeping, and their entries are cheap to recompute."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def remember(self, key: Hashable, value: Any) -> None:
        """Keep ``value`` under ``key``."""
        if len(self) > self.limit:
            self.clear()
        self[key] = value


class _Tables:
    """Memo tables as attributes; :meth:`tables` finds every one (nothing to keep in step)."""

    def tables(self) -> dict[str, Memo[Any] | Table]:
        """Every table of this object, by attribute name."""
        return {k: v for k, v in vars(self).items() if isinstance(v, Memo | Table)}

    def sizes(self) -> dict[str, int]:
        """How many entries each table holds."""
        return {k: len(v) for k, v in self.tables().items()}

    def clear(self) -> None:
        """Empty every table."""
        for t in self.tables().values():
            t.clear()


class ProofCache(_Tables):
    """One proof session's memo tables: results under a context, keyed by ``(input, ctx.key())``."""

    def __init__(self) -> None:
        self.results: Memo[Any] = Memo(4096)  # (expr, context, tidy) -> simplified expr, steps
        self.narrowed: Memo[Any] = Memo(1024)  # (cond, context) -> narrowed cond, steps
        self.reasoners: Memo[Any] = Memo(64)  # context -> its shared Reasoner
        # bounds and signs read no divisibility fact: contexts that differ only in those (a proof
        # adds divisibility facts as it goes; the operands of one launch state different ones)
        # share them
        self.intervals: Memo[Any] = Memo(64)  # context less divisibility -> (signs, bounds)
        self.divides: Memo[Any] = Memo(16384)  # (d, n, the facts it may read) -> how, facts
        self.dispatch = Table(1024)  # (phase, node class) -> the rules whose head matches


class ContentCache(_Tables):
    """Memo tables of pure functions of an expression's content."""

    def __init__(self) -> None:
        self.is_int = Table(200_000)  # expr -> structurally integer-valued
        self.canon = Table(200_000)  # expr -> canonical form
        self.expand = Table(200_000)  # expr -> expansion through the builders
        self.frac = Table(16384)  # floor/ceiling -> (numerator, denominator)
        self.fits = Table(200_000)  # (symbol, value) -> the value meets the symbol's assumptions
        self.fact_text = Table(100_000)  # Fact -> str(fact)
        self.text = Table(100_000)  # (expr, evaluate, distribute) -> str(expr)
        self.compiled: Memo[Any] = Memo(2048)  # (exprs, names) -> exact evaluator
        self.compiled_grid: Memo[Any] = Memo(1024)  # (expr, names) -> grid evaluator


SESSION = ProofCache()
"""The proof session used where no ``cache=`` is given."""

CONTENT = ContentCache()
"""The one content cache of the process."""


def clear_caches() -> None:
    """Forget every result cached across calls (both objects above).  Results never depend on the
    caches; this is for benchmarks and memory."""
    SESSION.clear()
    CONTENT.clear()
