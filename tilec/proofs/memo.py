"""A bounded least-recently-used memo, keyed by content (stdlib only: the proofs import nothing else
of tilec).  ``functools.lru_cache`` memoises a function of hashable arguments; the engine's caches
are keyed by ``(expression, context key)`` and computed by a closure, so they are kept here.

Example::

    >>> c = Memo(2)
    >>> c.get_or(1, lambda: "a"), c.get_or(2, lambda: "b"), c.get_or(3, lambda: "c")
    ('a', 'b', 'c')
    >>> 1 in c, 3 in c
    (False, True)
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class Memo(Generic[V]):
    """At most ``limit`` entries; the least recently used one goes first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._data: OrderedDict[Hashable, V] = OrderedDict()

    def get_or(self, key: Hashable, compute: Callable[[], V]) -> V:
        """The value under ``key``, computed (and kept) on a miss."""
        if key in self._data:
            self._data.move_to_end(key)
            return self._data[key]
        value = self._data[key] = compute()
        if len(self._data) > self.limit:
            self._data.popitem(last=False)
        return value

    def __contains__(self, key: Hashable) -> bool:
        return key in self._data

    def clear(self) -> None:
        self._data.clear()
