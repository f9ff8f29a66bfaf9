"""Closed forms of multicast issue predicates and masks, from the rank structure of the sharing.

The method, for one operand of one launch:

1. **Decide.** The exact table (every CTA at every loop point, from the index maps) says whether
   the sharing groups depend on the loop point: the sharing is *uniform* when every alive rank is
   in the same group at every loop point where it is alive. If it is not, there is no closed form
   in the ranks alone (the general form is used, with the loop point where the groups change).
2. **Rank structure.** A uniform partition of the ranks is matched against mixed-radix digits of
   the rank (``rank = d0 + R0*(d1 + R1*(d2 + ...))``, the axes of a 2-D cluster are digits too):
   ranks share when they agree on the *kept* digits and may differ on the *shared* ones. Groups
   of consecutive ranks, strided ranks, an axis of a 2-D cluster, the whole cluster, never
   shared and a cluster of one are all such digit patterns. The digit boundaries are written
   with the schedule's own expressions (``CN``, ``CM*CN``, ``CLUSTER``) where one has the value.
   A partition that no digit pattern matches gets a closed form by rank cases.
3. **Forms** from the digits: the leader is the rank whose shared digits are 0
   (``Eq(Mod(rank, CN), 0)``), the mask is the kept digits' bits times one geometric sum per run
   of shared digits (``(2**CN - 1)*2**(CN*floor(rank/CN))``); in sliced mode the slice is the
   shared digits' value. The CTA's own ``alive`` gates both (alive is uniform over a group).
4. **Proof.** The proofs engine narrows ``same(r1, r2)`` under divisibility facts about the
   parameters (each true at this launch). Where the narrowed condition is a relation of the ranks
   alone with the same groups, and each alive predicate depends on the rank only through the
   group, the closed form is *proved* for every launch that meets the facts; otherwise it is
   *checked*: it equals the exact table at every CTA of this launch, and holds for this launch.
   Either way the forms are compared with the table before they are reported.

Facts are objects (:class:`tilec.proofs.Fact`) about the parameters, never about loop variables.
"""

from __future__ import annotations

import functools
import itertools
import operator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import sympy

from tilec.proofs import Fact, FactKind
from tilec.proofs.build import mk_mod
from tilec.proofs.evaluate import compile_int
from tilec.proofs.trace import text
from tilec.transforms.multicast.alive import _alive_at_launch, _alive_uniform, _k_loop_facts
from tilec.transforms.multicast.bands import _full_groups
from tilec.transforms.multicast.closing import launch_reach
from tilec.transforms.multicast.digits import (
    KeyDigits,
    _boundaries,
    _candidates,
    _case_forms,
    _divisors,
    digit_forms,
    key_digits,
    rank_digits,
    residue_digits,
    residue_forms,
    uniform_partition,
)
from tilec.transforms.multicast.proof import (
    _attempts,
    _bounded_congruence,
    _context,
    _exactness,
    _groupings,
    _groups_of,
    _keys,
    _NoSteps,
    _Row,
)
from tilec.transforms.multicast.records import AlivePart, ClosedForm, ClosedResult, Scope
from tilec.transforms.multicast.table import R1, R2, RANK, launch_values

if TYPE_CHECKING:
    from tilec.transforms.multicast.records import OperandForms, OperandMulticast


@dataclass(frozen=True)
class _Proof:
    facts: list[Fact]
    rows: tuple[dict[str, str], ...]
    narrowed: sympy.Boolean
    divisors: list[sympy.Expr]
    alive_proved: bool
    exact: bool  # every step an equivalence under the facts (else a narrowing)
    keys: tuple[sympy.Expr, ...]
    digits: KeyDigits | None  # the keys' groups as digits for every launch (None: not digits)
    would_prove: tuple[Fact, ...] = ()  # where the alive predicates are not proved: what would


def _prove(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
           groups: tuple[int, ...]) -> _Proof | None:
    """Narrow same(r1, r2) under the facts that hold here; a proof when it leaves the same
    groups as a relation of the ranks alone. The narrowing is kept by content (launches that
    agree on which candidate facts hold share it); what depends on the values themselves (the
    keys' digits, the exactness bounds, the alive predicates) is decided per launch."""

    full_facts: list[Fact] = []
    full_rows: list[_Row] = []
    op = _full_groups(op, values, full_facts, full_rows)
    if not op.origin:  # no coordinate of the box depends on the rank: one group, the cluster
        attempts: tuple[Any, ...] = ((
            (), (), _NoSteps(sympy.true), (), _context(op, values)),)
    else:
        attempts = _attempts(op, forms, values, groups)
    variables = set(op.variables[1:])
    for facts_, rows_, res, keys, ctx_ in attempts:
        narrowed, extra_rows, extra_facts = res.expr, [], []
        if keys is None:
            got = _bounded_congruence(res.expr, ctx_, values)
            if got is None:
                continue
            narrowed, extra_rows, extra_facts = got
            keys = None if narrowed.free_symbols & variables else _keys(narrowed)
            keys = None if keys is None else tuple(keys)
        if keys is None or _groups_of(list(keys), values, len(groups)) != groups:
            continue
        facts = [*full_facts, *facts_, *extra_facts]
        rows, ctx = [*full_rows, *rows_, *extra_rows], ctx_.copy()
        exact_facts = _exactness(res, ctx, values)
        if exact_facts is not None:
            facts += exact_facts
        kd = key_digits(keys, op.rank_extent, values) or residue_digits(keys, op.rank_extent)
        failed = None if kd is None else _alive_uniform(op, kd, keys, ctx, values, facts, rows,
                                                        _groupings(op, forms))
        # an alive predicate not proved uniform vanishes where its split is exact: that fact
        # would prove the form (its predicate is then true at every launch meeting it)
        would = () if not failed else tuple(dict.fromkeys(
            Fact(FactKind.DIVISIBLE, *p.exact_when) for p in failed))
        key_divs = sorted(_divisors(sympy.Tuple(*keys)), key=sympy.count_ops)
        printed = tuple({"theorem": t, "before": text(b), "after": text(a)} for t, b, a in rows)
        return _Proof(facts, printed, narrowed, key_divs, failed == [], exact_facts is not None,
                      keys, kd, would)
    return None


def derive_closed(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
                  prove: bool = True, *, reach: bool = True) -> ClosedResult:
    """The closed form of ``op`` at this launch, or why there is none (see module docstring).

    A form the theorems do not reach at this launch is tried once more with each parameter
    whose value here is 1 written as 1 (``CN = 1`` makes a digit of the rank one rank wide, a
    quotient by it the dividend): proved so, it holds for every launch that meets its facts
    and ``CN < 2`` (a positive parameter: it is 1 there).

    ``reach``: a form left at launch (or narrowing) scope names the facts under which the engine
    proves it, or why none was found (:func:`~tilec.transforms.multicast.closing.launch_reach`)."""
    result = _special_or(_derive_closed(op, forms, values, prove), op, forms, values, prove)
    if not (reach and prove and result.closed is not None and op.cluster_size > 1
            and result.closed.scope in (Scope.LAUNCH, Scope.NARROWING)):
        return result
    got = launch_reach(op, forms, values, functools.partial(derive_closed, reach=False),
                       result.closed.would_prove,
                       narrowing=result.closed.scope is Scope.NARROWING)
    at = tuple((k, then) for k, (_, then) in sorted((got.moved or {}).items()))
    return replace(result, closed=replace(result.closed, would_prove=got.would_prove,
                                          why_launch=got.why, would_prove_at=at))


def _special_or(result: ClosedResult, op: OperandMulticast, forms: OperandForms,
                values: dict[sympy.Symbol, int], prove: bool) -> ClosedResult:
    """``result``, or where it is at launch scope the form proved with each parameter of value 1
    here written as 1 (see :func:`derive_closed`)."""
    if not (prove and result.closed is not None and result.closed.scope is Scope.LAUNCH):
        return result
    exprs = [*op.origin.values(), op.alive, *op.bounds.values()]
    ones = sorted({p for p, v in values.items() if v == 1} & set().union(
        *[sympy.sympify(e).free_symbols for e in exprs]), key=str)
    if not ones:
        return result
    special = _specialized(op, forms, dict.fromkeys(ones, sympy.Integer(1)))
    got = _derive_closed(*special, values, prove)
    if got.closed is None or got.closed.scope is not Scope.PROVED:
        return result
    closed = replace(got.closed, facts=(*got.closed.facts, *[
        Fact(FactKind.BOUND, p, sympy.Integer(2)) for p in ones]))
    return ClosedResult(closed, (_note(closed, True, prove, op.cluster_size),), got.proof,
                        got.narrowed)


def _specialized(op: OperandMulticast, forms: OperandForms, sub: dict[sympy.Symbol, sympy.Expr]
                 ) -> tuple[OperandMulticast, OperandForms]:
    """``op`` and ``forms`` with the parameters of ``sub`` replaced (a launch family)."""

    def parts(ps: tuple[AlivePart, ...]) -> tuple[AlivePart, ...]:
        return tuple(AlivePart(p.pred.xreplace(sub), (p.exact_when[0].xreplace(sub),
                                                      p.exact_when[1].xreplace(sub))) for p in ps)

    def exprs(d: dict[Any, sympy.Expr]) -> dict[Any, sympy.Expr]:
        return {k: sympy.sympify(e).xreplace(sub) for k, e in d.items()}

    rank_extent = op.rank_extent.xreplace(sub)
    rank_dims = tuple(d.xreplace(sub) for d in op.rank_dims)
    alive_parts = parts(op.alive_parts)
    key = (op.forms_key, "specialized", tuple(sorted((str(k), str(v)) for k, v in sub.items())))
    new_op = replace(op, origin=exprs(op.origin), alive=op.alive.xreplace(sub),
                     alive_parts=alive_parts, bounds=exprs(op.bounds), rank_extent=rank_extent,
                     rank_dims=rank_dims, forms_key=key)
    new_forms = replace(forms, origin=exprs(forms.origin), parts=parts(forms.parts),
                        k_parts=parts(forms.k_parts), bounds=exprs(forms.bounds),
                        rank_extent=forms.rank_extent.xreplace(sub),
                        rank_dims=tuple(d.xreplace(sub) for d in forms.rank_dims))
    return new_op, new_forms


def _derive_closed(op: OperandMulticast, forms: OperandForms,
                   values: dict[sympy.Symbol, int], prove: bool) -> ClosedResult:
    cs = op.cluster_size
    groups, why = uniform_partition(op.table, cs)
    if groups is None:
        return ClosedResult(None, (f"{why}: general form",))
    digits = rank_digits(groups)
    proof = _prove(op, forms, values, groups) if prove and cs > 1 else None
    facts: list[Fact] = []
    rows: tuple[dict[str, str], ...] = ()
    narrowed = None
    keys: list[sympy.Expr] = []
    if proof is not None:
        facts += proof.facts
        rows, narrowed, keys = proof.rows, proof.narrowed, proof.divisors
    alive, alive_facts = _alive_at_launch(op, values)
    facts += alive_facts
    kd = proof.digits if proof is not None else None
    if kd is not None and kd.residue is not None:  # the ranks congruent modulo D
        lead, mask, sidx, scount = residue_forms(kd.residue, op.rank_extent)
        structure = f"the ranks congruent modulo {kd.residue}"
    elif kd is not None and kd.digits is not None:  # the proof's groups as digits of the rank
        b = list(kd.b)
        lead, mask, sidx, scount = digit_forms(kd.digits, b)
        facts += _boundary_facts(b, values)
        structure = kd.digits.describe(b)
    elif digits is not None:  # this launch's groups, boundaries named by their value here
        b = _boundaries(digits, _candidates(op, forms, keys), values, cs)
        lead, mask, sidx, scount = digit_forms(digits, b)
        structure = digits.describe(b)
    else:
        lead, mask, sidx, scount = _case_forms(groups)
        structure = "groups by rank cases"
    if cs == 1:
        mask = sympy.Integer(1)
    issue = sympy.true if op.mode.value == "sliced" else lead
    issue = issue if alive is sympy.true else sympy.And(alive, issue)
    mask = mask if alive is sympy.true else sympy.Piecewise((mask, alive), (0, True))
    at = tuple(sorted(values.items(), key=lambda kv: str(kv[0])))
    scope = Scope.LAUNCH
    if cs == 1:
        scope = Scope.PROVED  # one CTA: issue when alive, mask 1, at every launch
    elif proof is not None and kd is not None and proof.alive_proved:
        k_facts = _k_loop_facts(op, forms, values)
        if k_facts is not None:
            facts += k_facts
            scope = Scope.PROVED if proof.exact else Scope.NARROWING
    # the proof's candidates (derive_closed keeps those that re-derive proved); a fact of no
    # parameter (``10 % 4 == 0`` where the schedule writes both as numbers) never holds
    would = tuple(f for f in proof.would_prove if f.free_symbols
                  ) if proof is not None and scope is Scope.LAUNCH else ()
    closed = ClosedForm(issue, mask, sidx, scount,
                        _parameter_facts(facts, op) if scope is not Scope.LAUNCH else (),
                        scope, structure, at, would)
    bad = _disagreement(op, closed, values)
    if bad:  # an internal inconsistency: never report a closed form the table contradicts
        return ClosedResult(None, (f"closed form disagreed with the table at {bad}: general "
                                   f"form",), rows, narrowed)
    return ClosedResult(closed, (_note(closed, proof is not None, prove, cs),), rows, narrowed)


def _note(closed: ClosedForm, proof: bool, prove: bool, cs: int) -> str:
    """The closed form's scope in words; the groups are named as a claim only when proved."""
    if closed.scope is Scope.PROVED:
        return f"closed form ({closed.structure}): proved for every launch that meets its facts"
    if closed.scope is Scope.NARROWING:
        return (f"closed form (at this launch: {closed.structure}): exact at every CTA of this "
                f"launch; at every launch that meets its facts proved sound but a narrowing (it "
                f"never shares a box between CTAs that need different ones, and may share less "
                f"than is possible)")
    why = ("" if proof or not prove or cs == 1 else "; the theorems do not reach it") + (
        "" if not proof else "; the proof covers the sharing, not the alive predicates") + (
        "" if prove or cs == 1 else "; `tilec explain` proves it where the theorems reach")
    return f"closed form (at this launch: {closed.structure}): checked at every CTA of this " \
           f"launch only{why}"


def _boundary_facts(b: list[sympy.Expr], values: dict[sympy.Symbol, int]) -> list[Fact]:
    """Each symbolic digit boundary divides the next: the digits tile the cluster."""

    out = []
    for lo, hi in itertools.pairwise(b):
        if lo != 1 and (lo.free_symbols or hi.free_symbols) and not (hi / lo).is_integer:
            out.append(Fact(FactKind.DIVISIBLE, hi, lo))
    return out


def _parameter_facts(facts: list[Fact], op: OperandMulticast) -> tuple[Fact, ...]:
    """Facts about the parameters only (a bound on a loop variable is not a fact to guard on)."""
    loop = {*op.variables, R1, R2, RANK}

    def trivial(f: Fact) -> bool:  # 24*ceiling(M/BM) % 2 == 0: true for every value
        return f.kind.value == "divisible" and f.other is not None and mk_mod(
            f.subject, f.other) == 0

    return tuple(dict.fromkeys(f for f in facts if f.free_symbols and not f.free_symbols & loop
                               and not trivial(f)))


def _disagreement(op: OperandMulticast, closed: ClosedForm, values: dict[sympy.Symbol, int]
                  ) -> dict[str, int] | None:
    """The first row of the table where the closed form differs from it, or None."""
    variables = op.variables[1:]
    psyms, pvals, _ = launch_values(op.bounds, variables, values)
    fn = functools.partial(compile_int(
        [closed.issue, closed.mask, closed.slice_index, closed.slice_count],
        [*psyms, *variables, RANK]), *pvals)
    keys = [str(v) for v in variables]
    at = operator.itemgetter(*keys, "rank") if keys else (lambda point: (point["rank"],))
    sliced = op.mode.value == "sliced"
    for row in op.table:
        ci, cm, si, sc = fn(*at(row.point))
        if (bool(ci), int(cm)) != (row.issue, row.mask) or (
                sliced and row.alive and (int(si), int(sc)) != (row.slice_index, row.slice_count)):
            return row.point
    return None
