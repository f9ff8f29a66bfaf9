"""A bounded least-recently-used cache, keyed by content, with ``get_or(key, compute)``.

Left for the three modules that still import it (transforms/multicast/derive.py and closed.py,
tilec/testing/launch.py); each can take ``tilec.proofs.cache.Memo`` (cachetools' ``LRUCache`` with
the same ``get_or``) or the runtime ``Session`` instead, and this file then goes.

Example::

    >>> c = LRU(2)
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


class LRU(Generic[V]):
    """At most ``limit`` entries; the least recently used one goes first."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._data: OrderedDict[Hashable, V] = OrderedDict()

    def get_or(self, key: Hashable, compute: Callable[[], V]) -> V:
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
