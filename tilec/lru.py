"""The LRU cache of multicast/derive.py, multicast/closed.py and tilec/testing/launch.py: one class,
:class:`tilec.proofs.cache.Memo` (cachetools' ``LRUCache`` with ``get_or(key, compute)``), under its
old name.  When those three import it from there (or use the runtime ``Session``), this file goes.

Example::

    >>> c = LRU(2)
    >>> c.get_or(1, lambda: "a"), c.get_or(2, lambda: "b"), c.get_or(3, lambda: "c")
    ('a', 'b', 'c')
    >>> 1 in c, 3 in c
    (False, True)
"""

from tilec.proofs.cache import Memo as LRU

__all__ = ["LRU"]
