"""Property-based tests of a schedule's TMA multicast masks, for the schedules you write.

Two pieces: :func:`params`, a hypothesis strategy that draws parameter values for a schedule
file (its ``PARAMS``: sizes and tiles drawn small, the cluster shape kept, facts met if asked),
and :func:`check`, an oracle that derives tilec's multicast tables and forms at those values and
compares them (issue, mask, slice, alive; both modes) with a brute force written from first
principles: every CTA of the launch, the operand's index map at the box origin, shared when both
CTAs are alive and every non-broadcast index agrees (:mod:`tilec.testing.brute`). With
``base=``, the closed forms tilec *proved* at another launch are checked here too, wherever
their facts hold. ``tilec check SCHEDULE`` runs the same from the command line.

A test of one's own schedule, in a few lines::

    >>> from hypothesis import given, settings
    >>> from tilec.testing import check, params
    >>> SEED = "examples/seed004_persistent_cluster.py"
    >>> @settings(max_examples=3, deadline=None, database=None)
    ... @given(p=params(SEED, fixed={"CLUSTER": 2, "CM": 2, "CN": 1}, facts=["SMS % CLUSTER == 0"]))
    ... def test_seed_masks(p):
    ...     check(SEED, p)  # raises MaskMismatch (an AssertionError) naming the launch and CTA
    >>> test_seed_masks()

A failure reads like ``A: FAIL at M=24, N=10, ...: rank 1 got mask 0b11 but needs 0b10
(closed form, leader mode, at i_rt=0 cidx=2; unsound: ...)``.
"""

from __future__ import annotations

from tilec.testing.brute import Mismatch, Truth, brute_force, expected
from tilec.testing.facts import holds
from tilec.testing.launch import (
    MaskMismatch,
    Report,
    Verdict,
    check,
    derive_at,
    oracle,
    proved_forms,
    scope_of,
)
from tilec.testing.strategies import Kind, kinds, params

__all__ = ["Kind", "MaskMismatch", "Mismatch", "Report", "Truth", "Verdict", "brute_force",
           "check", "derive_at", "expected", "holds", "kinds", "oracle", "params",
           "proved_forms", "scope_of"]
