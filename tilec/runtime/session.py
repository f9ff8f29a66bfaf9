"""One run's memory: a :class:`Session` keeps, keyed by content, what the steps of one run share,
and is the one road to the multicast derivation (``tilec masks``, ``explain``, ``viz`` and
:func:`derive_from_file` ask :meth:`Session.derivation`; ``tilec gen``'s lowering takes the
derivation from it too, :meth:`Session.derivation` with the lowering's options).

It holds, as nvFuser's HeuristicDataCache does, caches passed down rather than globals:

* the schedule rebuilt over symbols, per schedule file text and the parameters that are not
  positive integers (those stay values in the symbolic build);
* the multicast derivations, per file text, parameters, mode and options;
* explain's lowered plan without multicast;
* the Triton modules imported, per source text (:func:`tilec.runtime.build.load_triton`);
* ``tilec masks --json`` on disk (:mod:`tilec.runtime.cache`), keyed with tilec's own source
  hash, computed once per session.

The ``tilec`` command makes one session per run and hands it to its command; a function called
without one uses :data:`SESSION`, the process's session, which :meth:`Session.clear` empties.

Example::

    >>> s = Session()
    >>> d = s.derive_from_file("examples/seed004_persistent_cluster.py", {"CM": 1, "CN": 2})
    >>> d is s.derive_from_file("examples/seed004_persistent_cluster.py", {"CM": 1, "CN": 2})
    True
    >>> d.operands["A"].closed_form, "SMS % CLUSTER == 0" in map(str, d.operands["A"].facts)
    (True, True)
"""

from __future__ import annotations

import json
from collections.abc import Callable, Hashable
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING, Any, TypeVar

from cachetools import LRUCache

from tilec.runtime import cache
from tilec.runtime.loader import LoadedSchedule, check_tiles, load_schedule

if TYPE_CHECKING:
    from tilec.ir import LaunchDims
    from tilec.ir.types import MulticastMode
    from tilec.transforms.multicast.derive import MulticastDerivation, SymbolicInstance
    from tilec.transforms.plan import KernelPlan

__all__ = ["SESSION", "Session", "clear_caches", "derive_from_file"]

V = TypeVar("V")


def get_or(store: LRUCache[Hashable, V], key: Hashable, make: Callable[[], V]) -> V:
    """``store[key]``, made (and kept) on a miss.  (cachetools' LRU directly, not tilec.proofs'
    Memo: a ``tilec masks`` cache hit must not import sympy, which the proofs package does.)"""
    if key in store:
        return store[key]
    value = store[key] = make()
    return value


def _params_key(params: dict[str, Any]) -> str:
    return json.dumps(params, sort_keys=True, default=str)


class Session:
    """What one run keeps between its steps (see the module docstring); ``clear()`` empties it."""

    def __init__(self, size: int = 16) -> None:
        self._symbolic: LRUCache[Hashable, SymbolicInstance] = LRUCache(size)
        self._derived: LRUCache[Hashable, MulticastDerivation] = LRUCache(4)
        self._lowered: LRUCache[Hashable, KernelPlan] = LRUCache(4)
        self.triton_modules: dict[str, ModuleType] = {}  # load_triton's, by source hash
        # tilec.testing's oracle: its derivations and brute-force truths at drawn parameters
        self.oracle_derived: LRUCache[Hashable, Any] = LRUCache(64)
        self.oracle_truth: LRUCache[Hashable, Any] = LRUCache(64)
        self._fingerprint: str | None = None

    def clear(self) -> None:
        """Forget everything kept in memory (the disk cache stays)."""
        for c in (self._symbolic, self._derived, self._lowered, self.triton_modules,
                  self.oracle_derived, self.oracle_truth):
            c.clear()
        self._fingerprint = None

    # -- the schedule over symbols, the derivation -------------------------------------------
    def symbolic(self, loaded: LoadedSchedule) -> SymbolicInstance:
        """``loaded``'s schedule rebuilt over symbols (:func:`~tilec.transforms.multicast.derive.symbolic_build`),
        once per file text and per parameter that does not become a symbol."""
        from tilec.transforms.multicast.derive import symbolic_build

        kept = tuple(sorted((k, "+" if _positive_int(v) else repr(v))
                            for k, v in loaded.params.items()))
        key = (loaded.path.read_bytes(), kept)
        return get_or(self._symbolic, key,
                       lambda: symbolic_build(loaded.module.schedule, loaded.params))

    def derivation(self, loaded: LoadedSchedule, mode: MulticastMode | str = "leader", *,
                   table: bool = True, closed: bool = True, prove: bool = True,
                   cluster_k_ranges: bool = False, sizes_fallback: bool = False,
                   launch: LaunchDims | None = None) -> MulticastDerivation:
        """The multicast derivation of ``loaded`` in ``mode``
        (:func:`~tilec.transforms.multicast.derive.derive_loaded`, over :meth:`symbolic`).

        The CUDA lowering asks with ``cluster_k_ranges`` (its cluster work split gives a
        cluster's CTAs one K range) and ``sizes_fallback`` (where the schedule cannot be built
        over its parameters, derive over its replay over M, N, K,
        :func:`~tilec.transforms.pipeline.state.over_sizes`). Each is part of the key only
        where it changes the answer (a schedule that splits K; one that cannot be built over
        symbols), so ``tilec gen`` and ``tilec masks`` of one schedule share a derivation.
        ``launch``: the schedule's launch where the caller has it (the lowering's
        :attr:`~tilec.transforms.pipeline.IRFacts.launch`); not part of the key (it is the
        schedule's), None: the derivation infers it."""
        from tilec.transforms.multicast.derive import derive_loaded, splits_k
        from tilec.transforms.pipeline.state import over_sizes

        sym = self.symbolic(loaded)
        k_ranges = cluster_k_ranges and splits_k(loaded.fusion)
        fallback = sizes_fallback and sym.fusion is None
        mode_name = str(getattr(mode, "value", mode))
        key = (loaded.path.read_bytes(), _params_key(loaded.params), mode_name, table, closed,
               prove, k_ranges, fallback)
        return get_or(self._derived, key, lambda: derive_loaded(
            loaded, mode, table=table, closed=closed, symbolic=sym, prove=prove,
            cluster_k_ranges=k_ranges,
            fallback=over_sizes(loaded.fusion) if fallback else None, launch=launch))

    def derive_from_file(self, path: str | Path, overrides: dict[str, Any] | None = None,
                         mode: MulticastMode | str = "leader", table: bool = True,
                         closed: bool = True, prove: bool = True) -> MulticastDerivation:
        """Load a schedule file (refusing more than :data:`~tilec.runtime.loader.MAX_TILES`
        tiles) and derive its multicast forms (:meth:`derivation`)."""
        loaded = load_schedule(path, overrides)
        check_tiles(loaded)
        return self.derivation(loaded, mode, table=table, closed=closed, prove=prove)

    def masks_json(self, path: str | Path, overrides: dict[str, Any] | None = None,
                   mode: str = "leader") -> str:
        """``tilec masks --json`` as text, kept on disk between runs (derived on a miss only)."""
        key = self.masks_key(path, dict(overrides or {}), str(getattr(mode, "value", mode)))
        text = cache.read(key)
        if text is None:
            d = self.derive_from_file(path, overrides, mode)
            text = json.dumps(d.to_json(), separators=(",", ":"))
            cache.write(key, text)
        return text

    def masks_key(self, path: str | Path, overrides: dict[str, Any], mode: str) -> Path | None:
        """Where ``tilec masks --json`` of these arguments is kept (:func:`~tilec.runtime.cache.masks_key`)."""
        if self._fingerprint is None:
            self._fingerprint = cache.code_fingerprint()
        return cache.masks_key(path, overrides, mode, self._fingerprint)

    # -- plans ---------------------------------------------------------------------------------
    def lowered(self, loaded: LoadedSchedule) -> KernelPlan:
        """``loaded`` lowered without multicast (order and work split are the same for every
        target): what explain's sections and viz's pictures share."""
        from tilec.transforms.pipeline import lower

        key = (loaded.path.read_text(), _params_key(loaded.params))
        return get_or(self._lowered, key, lambda: lower(
            loaded.fusion, target="cuda", params=loaded.params, multicast=False))


def _positive_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v > 0


SESSION = Session()  # the process's session: what a function called without one shares


def derive_from_file(path: str | Path, overrides: dict[str, Any] | None = None,
                     mode: MulticastMode | str = "leader", table: bool = True,
                     closed: bool = True, prove: bool = True,
                     session: Session | None = None) -> MulticastDerivation:
    """:meth:`Session.derive_from_file` of ``session`` (default :data:`SESSION`).

    >>> d = derive_from_file("examples/seed004_persistent_cluster.py", {"CM": 1, "CN": 2})
    >>> sorted(d.operands)
    ['A', 'B']
    """
    return (session or SESSION).derive_from_file(path, overrides, mode, table, closed, prove)


def clear_caches() -> None:
    """Forget everything tilec keeps in memory across calls, in one call: the process's
    :data:`SESSION`, the transforms' tables (:data:`tilec.transforms.memo.TRANSFORMS`) and the
    proof engine's (:func:`tilec.proofs.clear_caches`).  Results never depend on them; this is
    for benchmarks, tests and memory.  (A built library's module keeps its own state.)"""
    from tilec.proofs import clear_caches as clear_proofs
    from tilec.transforms.memo import TRANSFORMS

    SESSION.clear()
    TRANSFORMS.clear()
    clear_proofs()
