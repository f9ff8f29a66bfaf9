"""The proof of the alive predicates: each predicate that can fail at this launch depends on the
rank only through the proof's rank keys (a group is all alive or all dead), or holds at every CTA
of every launch that meets its facts (a grid the cluster divides: the tile index below the tile
count), so that the closed form's ``alive`` gate is uniform over a group. And the K-loop
predicates a launch leaves out, with the facts under which they hold at every launch."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import sympy

from tilec.proofs import Context, Fact, FactKind, Result, rewrite_by, simplify
from tilec.proofs.bounds import Reasoner
from tilec.transforms.multicast.cuts import BOUND_BY, cut_at_grouping
from tilec.transforms.multicast.proof import _context, _trace_rows
from tilec.transforms.multicast.table import R1, R2, RANK, holds_at, value_at

if TYPE_CHECKING:
    from tilec.transforms.multicast.digits import KeyDigits
    from tilec.transforms.multicast.proof import _Row
    from tilec.transforms.multicast.records import AlivePart, OperandForms, OperandMulticast


def _alive_uniform(op: OperandMulticast, kd: KeyDigits, keys: tuple[sympy.Expr, ...],
                   ctx: Context, values: dict[sympy.Symbol, int], facts: list[Fact],
                   rows: list[_Row], groupings: list[sympy.Expr]) -> list[AlivePart]:
    """Each alive predicate that can fail here depends on the rank only through
    ``floor(rank/block)``, where ``block`` starts the keys' top run of kept digits (a group lies
    in one block at every launch): a group is all alive or all dead wherever the facts hold.
    Returns the predicates that could not be proved so (none: proved)."""

    failed: list[AlivePart] = []
    memo: dict[Any, Any] = {}  # the context's abstraction for interval reasoning
    block = kd.block
    # the keys (and the block) as opaque values: a predicate left without the rank then depends
    # on it only through them, the same for every member of a group
    kd_markers = {k: sympy.Symbol(f"_key{i}", integer=True, nonnegative=True)
                  for i, k in enumerate([*keys, sympy.floor(RANK / block)])}
    divisors_216 = [g for g in dict.fromkeys([block, *groupings, *kd.b[1:]]) if g != 1]
    for part in op.alive_parts:
        e, f = part.exact_when
        if holds_at(e, f, values) or RANK not in part.pred.free_symbols:
            continue
        cands = [part.pred]
        split = _split_bound(part)
        if split is not None:
            cands.append(split)
        g216: dict[sympy.Basic, Result] = {}  # 2.16's candidates -> their step
        for base in list(cands):
            if not isinstance(base, sympy.StrictLessThan):
                continue
            for g in divisors_216:
                if holds_at(base.args[1], g, values):
                    ctx.divisible(base.args[1], g)
                    # e < B*g  <=>  e/g < B: the engine's 2.16 read right to left, at a g
                    # that divides the bound at this launch (the fact just stated)
                    got = rewrite_by(base, ctx, [BOUND_BY], [g])
                    if got.trace:
                        g216[got.expr] = got
                        cands.append(got.expr)
        # each also with the divisors of the rank's tile index cut by the rank's grouping
        tries = [(c, False) for c in cands] + [(c, True) for c in cands]
        for cand, cut in tries:
            cutting = cut_at_grouping(cand, groupings, ctx, values) if cut else None
            if cutting is not None and not cutting.trace:
                continue
            e_cut = cand if cutting is None else cutting.expr
            res = simplify(e_cut, ctx)
            left = res.expr.xreplace(kd_markers)
            # the predicate or its split bound, as written (2.16's variants and the cuts only
            # rewrite what interval reasoning reads through anyway)
            if RANK in left.free_symbols and isinstance(res.expr, sympy.Rel) and not cut \
                    and cand not in g216:
                bound_used = _bound_holds(res.expr, ctx, values, memo)
                if bound_used is None and isinstance(e_cut, sympy.Rel) and e_cut != res.expr:
                    bound_used = _bound_holds(e_cut, ctx, values, memo)
                if bound_used is not None:
                    left = sympy.true  # holds at every launch (interval reasoning)
                    rows.append(("bounds", res.expr, sympy.true))
                    facts.extend(bound_used)
            if RANK not in left.free_symbols:
                bound = g216.get(cand)
                base = cand if bound is None else bound.trace[0].before
                if base is split:
                    rows.append(("ceil.def", part.pred, split))
                stated = set(ctx.facts)
                for done in (bound, cutting, res):  # the engine's steps, in the order taken
                    if done is not None:
                        rows.extend(_trace_rows(done))
                        facts.extend(f for f in done.used_facts if f in stated)
                break
        else:
            failed.append(part)
    return failed


@dataclass
class _Abstraction:
    """A context's facts read for interval reasoning at every launch: each ceiling of the
    parameters a positive symbol, each loop bound ``ceiling(P/R)`` exact here a quotient ``Q``
    (``P`` written ``R*Q``), per use of divisibility facts the local context and its facts' way
    back to the context's own."""

    sub: dict[sympy.Basic, sympy.Basic]
    tie_map: dict[sympy.Basic, sympy.Basic]
    exact: list[tuple[sympy.Expr, sympy.Expr, sympy.Symbol]]
    loop: set[sympy.Basic]
    locals: dict[Any, tuple[Context, dict[Fact, Fact], set[sympy.Symbol]]] = field(
        default_factory=dict)
    tied: dict[sympy.Basic, sympy.Basic] = field(default_factory=dict)

    def tie(self, e: sympy.Basic, sub: dict[sympy.Basic, sympy.Basic] | None = None
            ) -> sympy.Basic:
        if sub is None:
            hit = self.tied.get(e)
            if hit is None:
                hit = self.tied[e] = self.tie(e, self.sub)
            return hit
        e = e.xreplace(sub)
        for _ in range(4):  # P -> R*Q, where R is itself a P of another bound (SMS -> CLUSTER*Q)
            new = e.xreplace(self.tie_map)
            if new == e:
                break
            e = new
        return e

    def local(self, ctx: Context, divisibility: bool
              ) -> tuple[Context, dict[Fact, Fact], set[sympy.Symbol]]:
        key = (ctx.key(), divisibility)
        if key in self.locals:
            return self.locals[key]
        local, back = Context(), {}
        for f in ctx.facts:
            subj = self.tie(f.subject)
            other = self.tie(f.other) if f.other is not None else None
            if f.kind is FactKind.POSITIVE:
                local.positive(subj)
            elif f.kind is FactKind.NONNEG:
                local.nonneg(subj)
            elif f.kind is FactKind.BOUND:
                local.bound(subj, other)
            elif divisibility:
                local.divisible(subj, other)
            else:
                continue
            back[local.facts[-1]] = f
        params = _bounded_params(local, set(self.sub.values()), self.loop)
        self.locals[key] = (local, back, params)
        return self.locals[key]


def _bounded_params(local: Context, syms: set[sympy.Basic], loop: set[sympy.Basic]
                    ) -> set[sympy.Symbol]:
    """State each positive parameter of ``local``'s facts and of ``syms`` positive and at most
    itself (``0 <= s <= s``: the bounds of ``SMS*i_rt`` are then symbolic); returns them."""
    params = sorted((syms | {s for f in local.facts for s in f.free_symbols}) - loop - {R1, R2, RANK},
                    key=str)
    params = [s for s in params if s.is_positive]
    local.positive(*params)
    for s in params:
        local.bound(s, s + 1)
    return set(params)


def _abstraction(ctx: Context, values: dict[sympy.Symbol, int], memo: dict[Any, Any]
                 ) -> _Abstraction:
    key = ctx.key(divisibility=False)  # the bounds: what the abstraction reads
    if key in memo:
        return memo[key]
    loop = {f.subject for f in ctx.facts if f.kind is FactKind.BOUND} | {R1, R2, RANK}
    quot: dict[sympy.Basic, sympy.Symbol] = {}
    exact: list[tuple[sympy.Expr, sympy.Expr, sympy.Symbol]] = []
    for f in ctx.facts:
        up = f.other
        if (f.kind is FactKind.BOUND and isinstance(up, sympy.ceiling) and up not in quot
                and not up.free_symbols & loop):
            p, r = up.args[0].as_numer_denom()
            if r != 1 and holds_at(p, r, values):
                quot[up] = sympy.Symbol(f"_q{len(quot)}", integer=True, positive=True)
                exact.append((p, r, quot[up]))
    ceils = {c for e in [*[x for f in ctx.facts for x in (f.subject, f.other) if x is not None],
                         *[x for p, r, _ in exact for x in (p, r)]]
             for c in e.atoms(sympy.ceiling) if not c.free_symbols & loop and c not in quot}
    sub: dict[sympy.Basic, sympy.Basic] = {**quot, **{
        c: sympy.Symbol(f"_ceil{i}", integer=True, positive=True)
        for i, c in enumerate(sorted(ceils, key=sympy.default_sort_key))}}
    tie_map = {p.xreplace(sub): r.xreplace(sub) * q for p, r, q in exact}
    memo[key] = _Abstraction(sub, tie_map, exact, loop)
    return memo[key]


def _bound_holds(cond: sympy.Rel, ctx: Context, values: dict[sympy.Symbol, int],
                 memo: dict[Any, Any]) -> list[Fact] | None:
    """The facts of ``ctx`` under which interval reasoning proves ``cond`` at every launch, or
    None. Each ceiling of the parameters is read as a positive integer symbol first (it is one:
    ``ceiling(E/f) >= 1`` for E, f > 0), its divisibility facts carried over. A loop bound
    ``ceiling(P/R)`` whose split is exact at this launch is read as the quotient ``Q = P/R``
    (``P`` written ``R*Q`` wherever it stands) under the fact ``P % R == 0``: the grid of a
    cluster that divides it, the rounds of a persistent walk that fill every SM. Then the
    theorems simplify ``cond`` (2.16: ``i/d < D <=> i < D*d``) and interval reasoning bounds
    what is left, each parameter bounded by itself (``0 <= s <= s``: ``SMS*i < SMS*Q``).
    ``memo``: the context's abstraction, kept by the caller across the conditions it asks."""
    ab = _abstraction(ctx, values, memo)
    loop = ab.loop | _LOOP_NAMES(cond)
    extra = sorted({c for c in cond.atoms(sympy.ceiling) if not c.free_symbols & loop
                    and c not in ab.sub}, key=sympy.default_sort_key)
    sub = {**ab.sub, **{c: sympy.Symbol(f"_ceilc{i}", integer=True, positive=True)
                        for i, c in enumerate(extra)}} if extra else ab.sub
    tied = ab.tie(cond, sub)
    # first with the divisibility facts (they cut quotients the grouping keeps), then without
    # (they split the quotient 2.16 reads: ``x/d + y/d < D``)
    for divisibility in (True, False):
        local, back, params = ab.local(ctx, divisibility)
        new = {s for s in tied.free_symbols if s.is_positive} - loop - params
        if new:
            local = local.copy()
            _bounded_params(local, new, loop)
        got = _bound_attempt(tied, local, back, ab, loop)
        if got is not None:
            used, named = got
            return used + [Fact(FactKind.DIVISIBLE, p, r) for p, r, q in ab.exact if q in named]
    return None


def _bound_attempt(tied: sympy.Rel, local: Context, back: dict[Fact, Fact], ab: _Abstraction,
                   loop: set[sympy.Basic]) -> tuple[list[Fact], set[sympy.Basic]] | None:
    """One try of :func:`_bound_holds`: the facts of the caller's context it used and the
    symbols its proof names, or None."""
    reasoner = Reasoner.for_context(local)
    used: list[Fact] = []
    res = simplify(tied, local)
    target = ab.tie(res.expr)
    used_steps = res.used_facts
    if target is not sympy.true and reasoner.why(target, used) is None and not _linear_bound(
            target, reasoner, loop, used):
        return None
    named = tied.free_symbols | target.free_symbols | set().union(
        *[f.free_symbols for f in [*used, *used_steps]])
    return [back[f] for f in [*used_steps, *used] if f in back], named


def _linear_bound(cond: sympy.Basic, reasoner: Any, loop: set[sympy.Basic], used: list[Fact]
                  ) -> bool:
    """``a < b`` (or ``<=``) by interval reasoning on the loop terms of ``b - a`` alone: the
    terms free of the loop variables are kept as they are (a lower bound of ``SMS*Q`` would be
    1), the others replaced by their lower bound, and the sum expanded must be nonnegative."""
    if not isinstance(cond, sympy.StrictLessThan | sympy.LessThan | sympy.StrictGreaterThan
                      | sympy.GreaterThan):
        return False
    small, big = (cond.lhs, cond.rhs) if isinstance(cond, sympy.Lt | sympy.Le) else (
        cond.rhs, cond.lhs)
    strict = isinstance(cond, sympy.Lt | sympy.Gt)
    d = sympy.expand(big - small - (1 if strict else 0))
    fixed = sympy.Add(*[t for t in sympy.Add.make_args(d) if not t.free_symbols & loop])
    moving = sympy.expand(d - fixed)
    local: list[Fact] = []
    lo, _ = reasoner.bounds(moving, local)
    if lo.has(sympy.oo, -sympy.oo):
        return False
    if not reasoner.nonneg(sympy.expand(fixed + lo), local):
        return False
    used.extend(local)
    return True


def _LOOP_NAMES(cond: sympy.Basic) -> set[sympy.Basic]:
    """The symbols of ``cond`` that are derivation variables (rank, r1, r2, i_..., cid...)."""
    return {s for s in cond.free_symbols if s in (RANK, R1, R2) or str(s).startswith(
        ("i_", "cid", "bid", "rank_"))}


def _split_bound(part: Any) -> sympy.Boolean | None:
    """A split's predicate ``f*i < E`` (its box origin, ``exact_when = (E, f)``) as the tile
    index bound ``i < ceiling(E/f)``: the same for every integer ``i`` (f > 0), and the form
    the theorems bound (``Mod(t, ceiling(E/f)) < ceiling(E/f)`` holds)."""
    pred = part.pred
    if not isinstance(pred, sympy.StrictLessThan):
        return None
    e, f = part.exact_when
    lhs = _evaluated(pred.lhs)
    if pred.rhs != e or f == 1 or not (lhs.is_Mul or lhs.is_Add):
        return None
    # 2*(2*c + r) is evaluated 4*c + 2*r: its quotient by 2 is one too
    i = lhs / f if lhs.is_Mul else sympy.cancel(lhs / f)
    if sympy.fraction(sympy.together(i))[1] != 1 or (i.is_Mul and f in i.args) \
            or not i.free_symbols:
        return None
    return sympy.Lt(i, sympy.ceiling(e / f))


def _first_box_of_split(part: Any, forms: OperandForms) -> bool:
    """``f*i < E`` for a loop variable ``i < ceiling(E/f)`` (a split of E by f at its box origin)
    holds at every launch: ``f*(ceiling(E/f) - 1) < E`` by the ceiling's definition."""
    pred = part.pred
    if not isinstance(pred, sympy.StrictLessThan):
        return False
    e, f = part.exact_when
    lhs = _evaluated(pred.lhs)
    if pred.rhs != e or not lhs.is_Mul:
        return False
    v = lhs / f
    return v in forms.bounds and v in forms.k_vars and forms.bounds[v] == sympy.ceiling(e / f)


def _evaluated(e: sympy.Basic) -> sympy.Basic:
    """``e`` rebuilt with sympy's evaluation (an index map's ``BK*i + 0`` is kept unevaluated)."""
    return e.func(*[_evaluated(a) for a in e.args]) if e.args else e


def _k_loop_facts(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int]
                  ) -> list[Fact] | None:
    """The facts under which the K-loop predicates this launch leaves out (they hold at each of
    its k-iterations) hold at every launch: the split is exact, or the theorems prove the
    predicate under the loop bounds. None when neither: the form is this launch's only."""

    out: list[Fact] = []
    ctx = None
    for part in forms.k_parts:
        if part in op.alive_parts:
            continue
        if _first_box_of_split(part, forms):
            continue  # holds at every launch: no fact
        if ctx is None:
            ctx = _context(op, values)
            for p in sorted(set(values) & set().union(*[q.pred.free_symbols
                                                        for q in forms.k_parts]), key=str):
                ctx.positive(p)
            for v in forms.k_vars:
                ctx.bound(v, forms.bounds[v])
        res = simplify(part.pred, ctx)
        if res.expr is sympy.true:
            stated = set(ctx.facts)
            out += [f for f in res.used_facts if f in stated]
        elif holds_at(*part.exact_when, values):
            out.append(Fact(FactKind.DIVISIBLE, *part.exact_when))
        else:
            return None
    return out


def _alive_at_launch(op: OperandMulticast, values: dict[sympy.Symbol, int]
                     ) -> tuple[sympy.Boolean, list[Fact]]:
    """The alive predicates that can fail at this launch, and the facts that drop the others
    (an exact split has no predicate)."""

    kept, facts = [], []
    for part in op.alive_parts:
        e, f = part.exact_when
        ev, fv = value_at(e, values), value_at(f, values)
        if ev is not None and fv and ev % fv == 0:
            facts.append(Fact(FactKind.DIVISIBLE, e, f))
        else:
            kept.append(part.pred)
    return sympy.And(*kept), facts
