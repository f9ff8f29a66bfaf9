"""The derivation's records: an operand's forms as its index map gives them, its derivation at
one launch, and a closed form with its scope. Frozen values: a derivation never changes one
after it is made."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING, Any

import sympy

from tilec.ir.types import MulticastMode
from tilec.proofs.trace import text
from tilec.transforms.memo import TRANSFORMS
from tilec.transforms.multicast.table import Row, _general

if TYPE_CHECKING:
    from tilec.proofs import Fact


@dataclass(frozen=True)
class AlivePart:
    """One predicate of the index map at the box origin, in ``rank`` and the variables.

    ``exact_when = (E, f)``: the predicate comes from a split of extent E by f, and vanishes when
    ``E % f == 0`` (the closed form then drops it, stating that fact)."""

    pred: sympy.Boolean
    exact_when: tuple[sympy.Expr, sympy.Expr]


@dataclass(frozen=True)
class OperandForms:
    """What the operand's index map says, for every launch of one schedule structure."""

    origin: dict[str, sympy.Expr]  # rank-dependent box origin per non-broadcast logical axis
    parts: tuple[AlivePart, ...]  # predicates that mention the CTA (rank or its loop point)
    k_parts: tuple[AlivePart, ...]  # predicates over the serial K loop alone (same for all CTAs)
    cta_vars: tuple[sympy.Symbol, ...]  # the CTA's loop point: rounds, cluster and block indices
    k_vars: tuple[sympy.Symbol, ...]  # serial K-loop symbols
    bounds: dict[sympy.Symbol, sympy.Expr]  # exclusive upper bounds of all of the above
    rank_extent: sympy.Expr  # the number of ranks, as the schedule writes it (CN, CLUSTER, 4)
    rank_dims: tuple[sympy.Expr, ...]  # per clustered hardware dimension, its rank extent


class Scope(Enum):
    """Where a closed form holds (the cluster's shape fixed: it is part of the schedule).

    * ``PROVED``: equal to the definition (issue, mask, slice, alive) for every value of the
      parameters that meets its facts; the facts are exactly the conditions it rests on.
    * ``NARROWING``: for every value meeting its facts it is *sound* (it never puts a CTA that
      needs another box, or a dead one, in a mask; every alive CTA gets its box once), and it is
      exact at this launch; elsewhere it may share less than the definition (seed 004's
      "narrowing approximation": a congruence step of the proof keeps only part of the sharing).
    * ``LAUNCH``: equal to the exact table at every CTA of this launch; nothing is claimed at
      any other launch (the theorems do not reach it, or the forms are over this launch's
      numbers: a schedule that could not be built over its parameters is proved, if at all, for
      its numbers only).

    A form derived over some parameters as numbers (:attr:`ClosedForm.pinned`) holds, whatever
    its scope, only where they have those values."""

    PROVED = "proved"
    NARROWING = "narrowing"
    LAUNCH = "launch"


@dataclass(frozen=True)
class ClosedForm:
    issue: sympy.Boolean
    mask: sympy.Expr
    slice_index: sympy.Expr
    slice_count: sympy.Expr
    facts: tuple[Fact, ...]  # PROVED/NARROWING: the conditions it holds under; LAUNCH: none
    scope: Scope
    structure: str  # the groups in words (at this launch only unless PROVED)
    at: tuple[tuple[sympy.Symbol, int], ...] = ()  # the launch it was derived at (its values)
    # LAUNCH, NARROWING: the facts, false here, under which the engine proves a closed form
    would_prove: tuple[Fact, ...] = ()
    why_launch: str = ""  # LAUNCH, NARROWING without would_prove: why no fact was found
    # with would_prove: the launch it was proved at (the parameters moved, their values)
    would_prove_at: tuple[tuple[str, int], ...] = ()
    # the parameters the forms were derived with as numbers (the schedule could not be built
    # over them), at their values: the form claims nothing where one of them differs
    pinned: tuple[tuple[sympy.Symbol, int], ...] = ()

    @property
    def proved(self) -> bool:
        """Exact for every launch that meets the facts."""
        return self.scope is Scope.PROVED

    @property
    def guard(self) -> sympy.Boolean:
        """The condition under which a kernel may use the form: its facts (PROVED, NARROWING),
        or the very launch it was checked at (LAUNCH: every parameter it mentions at its value);
        and every parameter it was derived with as a number at that number (:attr:`pinned`)."""
        pins = [sympy.Eq(p, v) for p, v in self.pinned]
        if self.scope is Scope.LAUNCH:
            used = set().union(*[sympy.sympify(e).free_symbols for e in (
                self.issue, self.mask, self.slice_index, self.slice_count)])
            return sympy.And(*[sympy.Eq(p, v) for p, v in self.at if p in used], *pins)
        return sympy.And(*[f.condition() for f in self.facts], *pins)


@dataclass(frozen=True)
class ClosedResult:
    closed: ClosedForm | None
    notes: tuple[str, ...] = ()
    proof: tuple[dict[str, str], ...] = ()
    narrowed: sympy.Boolean | None = None


@dataclass(frozen=True)
class OperandMulticast:
    """The derivation for one operand. Expressions are over ``variables`` and the parameters."""

    operand: str
    mode: MulticastMode
    cluster_size: int
    variables: tuple[sympy.Symbol, ...]  # rank first, then the loop point
    origin: dict[str, sympy.Expr]
    alive: sympy.Boolean
    alive_parts: tuple[AlivePart, ...]
    bounds: dict[sympy.Symbol, sympy.Expr]
    rank_extent: sympy.Expr
    rank_dims: tuple[sympy.Expr, ...]
    box_bytes: int
    table: tuple[Row, ...]
    closed: ClosedForm | None
    notes: tuple[str, ...] = ()
    proof: tuple[dict[str, str], ...] = ()
    narrowed_same: sympy.Boolean | None = None
    forms_key: Any = field(default=None, repr=False, compare=False)

    @property
    def closed_form(self) -> bool:
        return self.closed is not None

    @property
    def issue(self) -> sympy.Boolean:
        return self.closed.issue if self.closed else sympy.false

    @property
    def mask(self) -> sympy.Expr:
        return self.closed.mask if self.closed else sympy.S.Zero

    @property
    def slice_index(self) -> sympy.Expr | None:
        return self.closed.slice_index if self.closed else None

    @property
    def slice_count(self) -> sympy.Expr | None:
        return self.closed.slice_count if self.closed else None

    @property
    def facts(self) -> tuple[Fact, ...]:
        """The facts about the parameters the closed form rests on (objects, printable)."""
        return self.closed.facts if self.closed else ()

    @property
    def scope(self) -> Scope | None:
        """Where the closed form holds (:class:`~tilec.transforms.multicast.closed.Scope`), None
        without one."""
        return self.closed.scope if self.closed else None

    @property
    def guard(self) -> sympy.Boolean:
        """What a run-time guard tests when sizes are only known at launch: a proved (or
        narrowing) closed form's facts as one condition (true when it rests on none); for a form
        checked at this launch only, that launch (its parameters at their values); with the
        parameters it was derived with as numbers at those numbers (``closed.pinned``)."""
        return self.closed.guard if self.closed else sympy.true

    @functools.cached_property
    def _general(self) -> tuple[Any, ...]:
        return _general(self.origin, self.alive, self.cluster_size)

    @property
    def same(self) -> sympy.Boolean:
        """same(r1, r2) over the variables: origins equal and both alive (the general form)."""
        return self._general[0]

    @property
    def general_issue(self) -> sympy.Boolean:
        # sliced: every alive member of a group issues its own slice
        return self.alive if self.mode is MulticastMode.SLICED else self._general[1]

    @property
    def general_mask(self) -> sympy.Expr:
        return self._general[2]

    @property
    def general_slice_index(self) -> sympy.Expr:
        return self._general[3]

    @property
    def general_slice_count(self) -> sympy.Expr:
        return self._general[4]

    def forms(self) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr | None, sympy.Expr | None]:
        """The forms a kernel should use: closed where it holds, else general."""
        if self.closed:
            return self.issue, self.mask, self.slice_index, self.slice_count
        if self.mode is MulticastMode.SLICED:
            return (self.general_issue, self.general_mask, self.general_slice_index,
                    self.general_slice_count)
        return self.general_issue, self.general_mask, None, None


@dataclass(frozen=True)
class MulticastDerivation:
    params: dict[str, Any]
    cluster_size: int
    mode: MulticastMode
    operands: dict[str, OperandMulticast]

    def to_json(self) -> dict[str, Any]:
        """The ``tilec masks --json`` object (see docs/cli.md)."""
        ops = {}
        sliced = self.mode is MulticastMode.SLICED
        # one toggle of sympy's evaluate flag for all facts: each toggle clears sympy's cache
        with sympy.evaluate(False):
            facts = {name: [_fact_text(f) for f in op.facts] for name, op in self.operands.items()}
            would = {name: [_fact_text(f) for f in op.closed.would_prove] if op.closed else []
                     for name, op in self.operands.items()}
        for name, op in self.operands.items():
            issue, mask, sidx, scount = op.forms()
            ops[name] = {
                "closed_form": op.closed_form,
                "scope": op.scope.value if op.scope else None,
                "variables": [str(v) for v in op.variables],
                "issue_predicate": _text(issue),
                "mask": _text(mask),
                "slice_index": _text(sidx) if sliced and sidx is not None else None,
                "slice_count": _text(scount) if sliced and scount is not None else None,
                "facts": facts[name],
                "would_prove": would[name],
                "why_launch": op.closed.why_launch if op.closed else "",
                "proof": [dict(s) for s in op.proof],
                "table": [
                    {**row.point, "alive": row.alive, "issue": row.issue, "mask": row.mask,
                     "slice_index": row.slice_index if sliced else None,
                     "slice_count": row.slice_count if sliced else None}
                    for row in op.table
                ],
            }
        return {"params": self.params, "cluster_size": self.cluster_size,
                "mode": self.mode.value, "operands": ops}


def _fact_text(fact: Fact) -> str:
    """A fact as sympy reads it back (``Eq(Mod(SMS, CN), 0)``; ``CN > 0`` left unevaluated)."""
    with sympy.evaluate(False):  # (no toggle, no cache clear, inside the caller's block)
        return text(fact.condition())


def _text(expr: sympy.Basic) -> str:
    """str() of a form, memoised: a schedule's general forms are printed for every launch."""
    return TRANSFORMS.multicast_text.get_or(expr, lambda: text(expr))
