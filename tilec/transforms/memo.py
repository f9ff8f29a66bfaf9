"""The transforms' memo tables, held by one object instead of module globals (issue 27: caches
as objects, all cleared by one call).

:class:`TransformCache` keeps what the lowering and the multicast derivation compute from a
schedule's text or a plan object and may ask again within a run: the schedule replayed over
symbols (:func:`tilec.transforms.pipeline.state.over_sizes`), a SIMT plan's run-time variants
(:func:`tilec.transforms.simt.lower.variants_of`), and the multicast derivation's own tables.
:data:`TRANSFORMS` is the process's one; :func:`tilec.runtime.session.clear_caches` empties it
with the proof engine's and the run session's.  Results never depend on what the tables hold.

Example::

    >>> c = TransformCache()
    >>> c.replayed.get_or("text", lambda: 1), c.sizes()["replayed"]
    (1, 1)
    >>> c.clear(); c.sizes()["replayed"]
    0
"""

from __future__ import annotations

from typing import Any

from tilec.proofs.cache import Memo, _Tables

__all__ = ["TRANSFORMS", "TransformCache"]


class TransformCache(_Tables):
    """The transforms' memo tables (see the module docstring); ``clear()`` empties them all."""

    def __init__(self) -> None:
        self.replayed: Memo[Any] = Memo(256)  # schedule text over symbols -> GemmFusion | None
        self.simt_variants: Memo[Any] = Memo(64)  # id(SimtPlan) -> (plan, its variants)
        # the multicast derivation's: proofs keyed by content (the operand's forms, which
        # candidate facts hold, the exact splits and groups: launches agreeing on these share
        # one), printed forms, and compiled exact evaluators of divisors
        self.multicast_forms: Memo[Any] = Memo(64)  # (view structure, cluster) -> its forms
        self.multicast_proofs: Memo[Any] = Memo(256)
        self.multicast_text: Memo[Any] = Memo(4096)  # form -> str()
        self.multicast_evaluators: Memo[Any] = Memo(4096)  # expr -> (its symbols, evaluator)


TRANSFORMS = TransformCache()
"""The process's transform cache."""
