"""The proof of the sharing: ``same(r1, r2)`` narrowed by the proof engine under divisibility
facts about the parameters (each true at this launch), to a relation of the ranks alone.

Two attempts per operand: the box origin as the schedule writes it, then with each divisor of
the rank's tile index cut by the rank's grouping (2.11, 2.12). A congruence step of the engine's
narrowing (``X1 % D == X2 % D <= X1 == X2``) is exact where the ranks' spread is below ``D``
(:func:`exactness`); a congruence whose loop-point summands are common to both ranks is read as
one of the ranks alone (:func:`bounded_congruence`). The narrowed condition's rank keys
(``Eq(k(r1), k(r2)) & ...``) are what the forms are built from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sympy

from tilec.proofs import Context, Fact, FactKind, narrow, simplify
from tilec.proofs.bounds import Reasoner
from tilec.proofs.build import is_int
from tilec.proofs.evaluate import compile_int
from tilec.proofs.expand import frac
from tilec.transforms.memo import TRANSFORMS
from tilec.transforms.multicast.cuts import cut_at_grouping
from tilec.transforms.multicast.digits import _coefficients, _divisors
from tilec.transforms.multicast.table import R1, R2, RANK, holds_at, same_box, value_at

if TYPE_CHECKING:
    from tilec.transforms.multicast.records import OperandForms, OperandMulticast


_Row = tuple[str, sympy.Basic, sympy.Basic]  # a proof row: (theorem, before, after), unprinted


# proofs keyed by content: the operand's forms, which candidate facts hold, which splits are
# exact and the groups; launches that agree on all of these share one proof
PROOFS = TRANSFORMS.multicast_proofs


def _context(op: OperandMulticast, values: dict[sympy.Symbol, int]) -> Context:

    ctx = Context()
    exprs = [*op.origin.values(), op.alive]
    present = set().union(*[e.free_symbols for e in exprs]) | set().union(
        *[b.free_symbols for b in op.bounds.values()])
    for p in sorted(set(values) & present, key=str):
        ctx.positive(p)
    for r in (R1, R2, RANK):
        ctx.bound(r, op.rank_extent)
    for v, b in op.bounds.items():
        ctx.bound(v, b)
    return ctx


def _pairs(op: OperandMulticast, forms: OperandForms) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """Candidate facts ``c % d == 0``: coefficients of the loop variables and divisors of the
    rank's tile index by those divisors and by the rank's groupings; the alive bounds by both."""
    variables = list(op.variables[1:])
    whole = sympy.Tuple(*op.origin.values())
    divs = sorted(_divisors(whole), key=str)
    groupings = _groupings(op, forms)
    pairs = [(c, d) for c in sorted(_coefficients(whole, variables), key=str)
             for d in [*divs, *groupings] if c != d]
    pairs += [(d, g) for d in divs for g in groupings if d != g]
    pairs += [(p.pred.args[1], d) for p in op.alive_parts
              if isinstance(p.pred, sympy.StrictLessThan) for d in [*divs, *groupings]]
    return list(dict.fromkeys(pairs))


def _groupings(op: OperandMulticast, forms: OperandForms) -> list[sympy.Expr]:
    return [d for d in [op.rank_extent, *op.rank_dims] if d.free_symbols or d != 1]


@dataclass(frozen=True)
class _NoSteps:
    """A narrowing result with no step (the box origin does not depend on the rank)."""

    expr: sympy.Boolean
    trace: tuple[Any, ...] = ()


def _attempts(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
              groups: tuple[int, ...]) -> tuple[Any, ...]:
    pairs = PROOFS.get_or(("pairs", op.forms_key, op.alive_parts), lambda: _pairs(op, forms))
    held = tuple(holds_at(c, d, values) for c, d in pairs)
    key = (op.forms_key, op.alive_parts, held, groups)
    return PROOFS.get_or(key, lambda: _narrow_same(op, forms, values, groups, pairs, held))


def _narrow_same(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
                 groups: tuple[int, ...], pairs: list[tuple[sympy.Expr, sympy.Expr]],
                 held: tuple[bool, ...]) -> tuple[Any, ...]:
    """Both attempts at narrowing same(r1, r2) (as written; divisors cut by the grouping), up
    to the first whose keys give this launch's groups."""

    ctx = _context(op, values)
    variables = list(op.variables[1:])
    groupings = _groupings(op, forms)
    for (c, d), ok in zip(pairs, held, strict=True):
        if ok:
            ctx.divisible(c, d)
    # first as the schedule writes it; then with the divisors cut by the rank's grouping
    attempts = []
    for cut in (False, True):
        local = ctx.copy()
        rows: list[_Row] = []  # printed once the attempt succeeds (printing costs)
        used: list[Fact] = []  # every fact a step of the proof rests on
        origin = {}
        cuts = {}
        for n, e in op.origin.items():
            if not cut:
                cuts[n] = e
                continue
            res = cut_at_grouping(e, groupings, local, values)  # 2.11 / 2.12, by the engine
            used += res.used_facts
            rows += _trace_rows(res)
            cuts[n] = res.expr
        if cut and not rows:
            break  # nothing to cut: the same attempt again
        for name, e in cuts.items():
            res = simplify(e, local)
            used += res.used_facts
            rows += _trace_rows(res)
            origin[name] = res.expr
        same_exact = same_box(origin, R1, R2)
        res = narrow(same_exact, local)
        used += res.used_facts
        rows += _trace_rows(res)
        keys = None if res.expr.free_symbols & set(variables) else _keys(res.expr)
        stated = set(local.facts)
        facts = tuple(f for f in dict.fromkeys(used) if f in stated)
        attempts.append((facts, tuple(rows), res, None if keys is None else tuple(keys), local))
        if keys is not None and _groups_of(keys, values, len(groups)) == groups:
            break
    return tuple(attempts)


def _exactness(res: Any, ctx: Context, values: dict[sympy.Symbol, int]) -> list[Fact] | None:
    """The facts under which every narrowing (congruence) step of ``res`` is an equivalence, or
    None. ``X1 % D == X2 % D -> X1 == X2`` is exact when ``|X1 - X2| < D``: with the common
    summands cancelled, ``X1 - X2 = g(r1) - g(r2)`` for a ``g`` of the rank alone, and
    ``hi - lo < D`` for its bounds ``lo <= g(rank) <= hi`` is the fact (a cluster whose ranks
    never wrap around the modulus). A quotient's congruence ``X1/D == X2/D -> X1 == X2`` (``X``
    the integer numerator) is exact where ``g`` is the same for every rank (``hi - lo < 1`` for
    an integer ``g``: the cluster lies in one block of the quotient's digit); otherwise it stays
    a narrowing."""

    out: list[Fact] = []
    for step in res.trace:
        if step.exact:
            continue
        before = step.before
        if not isinstance(before, sympy.Eq):
            return None
        if (isinstance(before.lhs, sympy.Mod) and isinstance(before.rhs, sympy.Mod)
                and before.lhs.args[1] == before.rhs.args[1]):
            got = _congruence_span(before.lhs.args[0], before.rhs.args[0], before.lhs.args[1],
                                   ctx, values)
        elif isinstance(before.lhs, sympy.floor) and isinstance(before.rhs, sympy.floor):
            # X1/D == X2/D -> X1 == X2 is exact where X1 - X2 is 0 for every pair of ranks. The
            # dividends split as the engine split them (frac: integer numerators over one
            # denominator); sympy.fraction keeps ``x/2 + floor(r/CM)/2`` whole, and a rational
            # g's spread below 1 (``floor((CLUSTER - 1)/CM)/2 < 1``, true at CM = 1) lets ranks
            # 0 and 1 differ. For an integer g the spread below 1 is a spread of 0.
            (x1, d1), (x2, d2) = frac(before.lhs), frac(before.rhs)
            got = (_congruence_span(x1, x2, sympy.Integer(1), ctx, values)
                   if d1 == d2 and d1 != 1 else None)
            if got is not None and not is_int(got[0]):
                return None
        else:
            return None
        if got is None:
            return None
        out += got[1]
    return out


def _congruence_span(x1: sympy.Expr, x2: sympy.Expr, d: sympy.Expr, ctx: Context,
                     values: dict[sympy.Symbol, int]) -> tuple[sympy.Expr, list[Fact]] | None:
    """``X1 % D == X2 % D  <=>  g(r1) == g(r2)`` where ``X = c + g(rank)`` (``c`` the summands
    common to both ranks) and ``|g(r1) - g(r2)| <= hi - lo < D`` for the bounds of ``g``: returns
    ``g`` (in ``rank``) and the facts (the bound as a fact where it is symbolic), or None."""

    if d.free_symbols & {R1, R2, RANK}:
        return None
    g = _rank_part(x1, x2)
    if g is None:
        return None
    used: list[Fact] = []
    lo, hi = Reasoner.for_context(ctx).bounds(g, used)
    if lo.has(sympy.oo, -sympy.oo) or hi.has(sympy.oo, -sympy.oo):
        return None
    span = hi - lo
    if span.free_symbols & {RANK, R1, R2}:
        return None
    sv, dv = value_at(span, values), value_at(d, values)
    if sv is None or dv is None or not sv < dv:
        return None
    facts = [] if span.is_Integer and d.is_Integer else [Fact(FactKind.BOUND, span, d)]
    return g, facts + used


def _rank_part(x1: sympy.Expr, x2: sympy.Expr) -> sympy.Expr | None:
    """``g`` (in ``rank``) with ``X1 = c + g(r1)``, ``X2 = c + g(r2)`` for a ``c`` common to
    both ranks (the loop point's summands), or None."""
    if R2 in x1.free_symbols:
        x1, x2 = x2, x1
    if R2 in x1.free_symbols or R1 in x2.free_symbols:
        return None
    g1, g2 = x1.xreplace({R1: RANK}), x2.xreplace({R2: RANK})
    if sympy.expand(g1 - g2) != 0:
        return None  # not one expression of the rank
    # g(rank): the summands that hold the rank (the others are common to both ranks)
    return sympy.Add(*[t for t in sympy.Add.make_args(sympy.expand(g1)) if RANK in t.free_symbols])


def _bounded_congruence(cond: sympy.Boolean, ctx: Context, values: dict[sympy.Symbol, int]
                        ) -> tuple[sympy.Boolean, list[_Row], list[Fact]] | None:
    """Each ``X1 % D == X2 % D`` of a conjunction whose loop-point summands are common to both
    ranks, as ``g(r1) == g(r2)`` where the ranks' spread is below ``D`` (an equivalence under
    the bound, :func:`_congruence_span`). None when nothing changes."""

    out, rows, facts = [], [], []
    for c in sympy.And.make_args(cond):
        if isinstance(c, sympy.Eq):
            cancelled = _cancel_common(c)
            if cancelled is not c:
                rows.append(("tilec.cancel", c, cancelled))
                c = cancelled
        if (isinstance(c, sympy.Eq) and isinstance(c.lhs, sympy.Mod)
                and isinstance(c.rhs, sympy.Mod) and c.lhs.args[1] == c.rhs.args[1]):
            got = _congruence_span(c.lhs.args[0], c.rhs.args[0], c.lhs.args[1], ctx, values)
            if got is not None:
                g, fs = got
                new = simplify(sympy.Eq(g.xreplace({RANK: R1}), g.xreplace({RANK: R2})),
                               ctx).expr
                rows.append(("tilec.bounded-congruence", c, new))
                facts += fs
                out.append(new)
                continue
            g = _rank_part(c.lhs.args[0], c.rhs.args[0])
            d = c.lhs.args[1]
            if g is not None and g.free_symbols == {RANK} and not d.free_symbols & {R1, R2, RANK}:
                # (c + g1) % D == (c + g2) % D  <=>  g1 % D == g2 % D: a shift by the common c
                new = sympy.Eq(sympy.Mod(g.xreplace({RANK: R1}), d),
                               sympy.Mod(g.xreplace({RANK: R2}), d))
                rows.append(("tilec.congruence-shift", c, new))
                out.append(new)
                continue
        out.append(c)
    return (sympy.And(*out), rows, facts) if rows else None


def _cancel_common(c: sympy.Eq) -> sympy.Boolean:
    """``k*X + e == k*Y + e  <=>  X == Y`` for a positive ``k`` and a common ``e`` (the rows of
    a box origin scaled by the tile size: ``2*(T1 % D) == 2*(T2 % D)``); ``c`` itself when
    nothing cancels."""
    # the sums at the top only: the ranks' own terms inside a floor or Mod are never common,
    # and expanding there rebuilds (and re-evaluates) every nested Mod
    lhs, rhs = sympy.expand(c.lhs, deep=False), sympy.expand(c.rhs, deep=False)
    common = set(sympy.Add.make_args(lhs)) & set(sympy.Add.make_args(rhs))
    lhs = sympy.Add(*[t for t in sympy.Add.make_args(lhs) if t not in common])
    rhs = sympy.Add(*[t for t in sympy.Add.make_args(rhs) if t not in common])
    kl, xl = lhs.as_independent(R1, R2, RANK, as_Add=False)
    kr, xr = rhs.as_independent(R1, R2, RANK, as_Add=False)
    if kl != kr or not kl.is_positive or (kl == 1 and not common):
        return c
    # left unevaluated: sympy's equality test of two floors rewrites both (seconds), and the
    # ranks' sides are never decidable by it
    return sympy.true if xl == xr else sympy.Eq(xl, xr, evaluate=False)


def _groups_of(keys: list[sympy.Expr], values: dict[sympy.Symbol, int], cs: int
               ) -> tuple[int, ...] | None:
    """The groups rank-only keys make at this launch."""
    if not keys:
        return tuple((1 << cs) - 1 for _ in range(cs))
    syms = sorted(set().union(*[k.free_symbols for k in keys]) - {RANK}, key=str)
    if any(s not in values for s in syms):
        return None
    fn = compile_int(keys, [RANK, *syms])
    pv = [values[s] for s in syms]
    kv = [fn(r, *pv) for r in range(cs)]
    return tuple(sum(1 << q for q in range(cs) if kv[q] == kv[r]) for r in range(cs))


def _trace_rows(res: Any) -> list[_Row]:
    return [(str(s.theorem), s.before, s.after) for s in res.trace]


def _keys(cond: sympy.Boolean) -> list[sympy.Expr] | None:
    """``Eq(k(r1), k(r2)) & ...`` as the list of rank keys ``k(rank)`` (None if not of that
    form); ``true`` is the empty list (one group)."""
    if cond is sympy.true:
        return []
    if cond is sympy.false:
        return None
    keys = []
    for c in sympy.And.make_args(cond):
        if not isinstance(c, sympy.Eq):
            return None
        lhs, rhs = c.lhs, c.rhs
        if R2 in lhs.free_symbols:
            lhs, rhs = rhs, lhs
        kl, kr = lhs.xreplace({R1: RANK}), rhs.xreplace({R2: RANK})
        if R2 in kl.free_symbols or R1 in kr.free_symbols:
            return None
        if kl != kr and sympy.expand(kl - kr) != 0:
            return None
        keys.append(_key_core(kl))
    return keys


def _key_core(k: sympy.Expr) -> sympy.Expr:
    """A key without what cannot tell two ranks apart: ``c*k + e == c*k' + e  <=>  k == k'`` for
    a positive ``c`` and an ``e`` free of the rank (``2*r1 == 2*r2``: the rank itself)."""
    k = sympy.Add(*[t for t in sympy.Add.make_args(k) if RANK in t.free_symbols])
    c, rest = k.as_independent(RANK, as_Add=False)
    return rest if c.is_positive and rest != 0 else k
