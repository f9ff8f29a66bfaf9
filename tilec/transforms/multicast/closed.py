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
from enum import Enum
from typing import TYPE_CHECKING, Any

import sympy

from tilec.lru import LRU
from tilec.proofs.build import mk_mod
from tilec.proofs.evaluate import compile_int
from tilec.proofs.trace import text
from tilec.transforms.multicast.derive import R1, R2, RANK, launch_table, launch_values, same_box

if TYPE_CHECKING:
    from tilec.proofs import Context, Fact
    from tilec.transforms.multicast.derive import AlivePart, OperandForms, OperandMulticast, Row

# the geometric sums' index: an integer and nothing more (sympy's Sum.doit gives its dummy the
# assumptions both limits share; a sign stated here could contradict them: InconsistentAssumptions)
_J = sympy.Symbol("j", integer=True)
_DEBUG = bool(__import__("os").environ.get("TILEC_MC_DEBUG"))


@dataclass(frozen=True)
class RankDigits:
    """Mixed-radix digits of the rank (innermost first) and which of them a group spans."""

    radices: tuple[int, ...]
    shared: frozenset[int]

    def key(self, rank: int) -> tuple[int, ...]:
        out, rest = [], rank
        for i, r in enumerate(self.radices):
            if i not in self.shared:
                out.append(rest % r)
            rest //= r
        return tuple(out)

    def runs(self) -> list[tuple[int, int, bool]]:
        """Maximal runs of digits with the same status: (first digit, end digit, shared)."""
        out: list[tuple[int, int, bool]] = []
        for i in range(len(self.radices)):
            s = i in self.shared
            if out and out[-1][2] == s:
                out[-1] = (out[-1][0], i + 1, s)
            else:
                out.append((i, i + 1, s))
        return out

    def describe(self, b: list[sympy.Expr] | None = None) -> str:
        """The groups in words, with the boundaries ``b`` (1, R0, R0*R1, ...) if given."""
        if b is None:
            b, w = [sympy.Integer(1)], 1
            for r in self.radices:
                w *= r
                b.append(sympy.Integer(w))
        if not self.shared:
            return "never shared"
        if len(self.shared) == len(self.radices):
            return "the whole cluster shares"
        parts = []
        for a, e, shared in self.runs():
            if shared:
                lo, hi = b[a], b[e]
                parts.append(f"{hi} consecutive ranks" if lo == 1 else
                             f"{_quotient(hi, lo)} ranks {lo} apart")
        return "groups of " + " x ".join(parts)


class Scope(Enum):
    """Where a closed form holds (the cluster's shape fixed: it is part of the schedule).

    * ``PROVED``: equal to the definition (issue, mask, slice, alive) for every value of the
      parameters that meets its facts; the facts are exactly the conditions it rests on.
    * ``NARROWING``: for every value meeting its facts it is *sound* (it never puts a CTA that
      needs another box, or a dead one, in a mask; every alive CTA gets its box once), and it is
      exact at this launch; elsewhere it may share less than the definition (seed 004's
      "narrowing approximation": a congruence step of the proof keeps only part of the sharing).
    * ``LAUNCH``: equal to the exact table at every CTA of this launch; nothing is claimed at
      any other launch (the theorems do not reach it).
    """

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
    would_prove: tuple[Fact, ...] = ()  # LAUNCH/NARROWING: a fact under which it is proved

    @property
    def proved(self) -> bool:
        """Exact for every launch that meets the facts."""
        return self.scope is Scope.PROVED

    @property
    def guard(self) -> sympy.Boolean:
        """The condition under which a kernel may use the form: its facts (PROVED, NARROWING),
        or the very launch it was checked at (LAUNCH: every parameter it mentions at its value)."""
        if self.scope is Scope.LAUNCH:
            used = set().union(*[sympy.sympify(e).free_symbols for e in (
                self.issue, self.mask, self.slice_index, self.slice_count)])
            return sympy.And(*[sympy.Eq(p, v) for p, v in self.at if p in used])
        return sympy.And(*[f.condition() for f in self.facts])


@dataclass(frozen=True)
class ClosedResult:
    closed: ClosedForm | None
    notes: tuple[str, ...] = ()
    proof: tuple[dict[str, str], ...] = ()
    narrowed: sympy.Boolean | None = None


# -- 1. decide ----------------------------------------------------------------------------


def uniform_partition(table: tuple[Row, ...] | list[Row], cs: int
                      ) -> tuple[tuple[int, ...] | None, str]:
    """Per rank, the mask of its group when the groups never change (else None and where).

    A rank that is never alive is a group of its own (it is in no mask)."""
    seen: dict[int, tuple[int, dict[str, int]]] = {}
    for row in table:
        if not row.alive:
            continue
        r = row.point["rank"]
        first = seen.setdefault(r, (row.mask, row.point))
        if first[0] != row.mask:
            return None, (f"the sharing changes with the loop point: rank {r} shares "
                          f"{_bits(first[0])} at {_at(first[1])} but {_bits(row.mask)} at "
                          f"{_at(row.point)}")
    return tuple(seen[r][0] if r in seen else 1 << r for r in range(cs)), ""


def _bits(mask: int) -> str:
    return "{" + ", ".join(str(i) for i in range(mask.bit_length()) if mask >> i & 1) + "}"


def _at(point: dict[str, int]) -> str:
    return " ".join(f"{k}={v}" for k, v in point.items() if k != "rank")


# -- 2. rank structure --------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _factorizations(n: int) -> tuple[tuple[int, ...], ...]:
    """Ordered factorizations of n into factors > 1, fewest factors first."""
    if n == 1:
        return ((),)
    out = [(n,)]
    for d in range(2, n):
        if n % d == 0:
            out += [(d, *rest) for rest in _factorizations(n // d) if rest]
    return tuple(sorted(set(out), key=len))


def rank_digits(groups: tuple[int, ...]) -> RankDigits | None:
    """The fewest mixed-radix digits whose shared ones span exactly the given groups."""
    cs = len(groups)
    for radices in _factorizations(cs):
        for k in range(len(radices) + 1):
            for shared in itertools.combinations(range(len(radices)), k):
                d = RankDigits(radices, frozenset(shared))
                keys = [d.key(r) for r in range(cs)]
                if all((keys[r] == keys[q]) == (groups[r] == groups[q])
                       for r in range(cs) for q in range(r)):
                    return d
    return None


def _candidates(op: OperandMulticast, forms: OperandForms, extra: list[sympy.Expr]
                ) -> list[sympy.Expr]:
    """Expressions of the schedule that may name a digit boundary, preferred first."""
    dims = list(forms.rank_dims)
    prods = [sympy.Mul(*dims[:i]) for i in range(1, len(dims) + 1)]
    whole = sympy.Tuple(*op.origin.values(), op.alive)
    return list(dict.fromkeys([*extra, forms.rank_extent, *prods, *_inner_divisors(whole),
                               *sorted(_divisors(whole), key=sympy.count_ops)]))


def _inner_divisors(expr: sympy.Basic) -> list[sympy.Expr]:
    """Divisors applied to the rank's tile index itself (``T/CN``, ``T % CN``), before those
    applied to a quotient of it (``(T/CN)/CM``): the digit nearest the rank comes first."""
    out = []
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.floor):
            x, d = sympy.fraction(node.args[0])
        elif isinstance(node, sympy.Mod):
            x, d = node.args
        else:
            continue
        if RANK in x.free_symbols and not x.has(sympy.floor, sympy.Mod) and RANK not in d.free_symbols:
            out.append(d)
    return sorted(dict.fromkeys(out), key=sympy.count_ops)


def _boundaries(digits: RankDigits, cands: list[sympy.Expr], values: dict[sympy.Symbol, int],
                cs: int) -> list[sympy.Expr]:
    """Symbolic cumulative weights 1, R0, R0*R1, ..., cs of the digits."""
    by_value: dict[int, sympy.Expr] = {}
    for c in cands:
        v = _value(c, values)
        if v is not None:
            by_value.setdefault(v, c)
    out, w = [sympy.Integer(1)], 1
    for r in digits.radices:
        w *= r
        out.append(by_value.get(w, sympy.Integer(w)))
    return out


# -- 3. forms -----------------------------------------------------------------------------


def _quotient(hi: sympy.Expr, lo: sympy.Expr) -> sympy.Expr:
    """hi/lo, an exact quotient of two digit boundaries (floor where sympy cannot see it)."""
    q = hi / lo
    return q if q.is_Integer or q.is_integer else sympy.floor(q)


def digit_forms(digits: RankDigits, b: list[sympy.Expr]
                ) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr, sympy.Expr]:
    """Leader predicate, mask, slice index and slice count of a digit pattern (alive aside)."""
    conds, base, geo = [], [], []
    sidx: sympy.Expr = sympy.Integer(0)
    scount: sympy.Expr = sympy.Integer(1)
    runs = digits.runs()
    for i, (a, e, shared) in enumerate(runs):
        lo, hi, top = b[a], b[e], i == len(runs) - 1
        if shared:
            conds.append(sympy.Eq(sympy.Mod(RANK, hi), 0) if lo == 1
                         else sympy.Lt(sympy.Mod(RANK, hi), lo))
            n = _quotient(hi, lo)
            geo.append(2**hi - 1 if lo == 1 else sympy.Sum(2 ** (lo * _J), (_J, 0, n - 1)))
            value = sympy.Mod(RANK, hi) if lo == 1 else sympy.floor(sympy.Mod(RANK, hi) / lo)
            sidx, scount = sidx + scount * value, scount * n
            if top:
                base.append(hi * sympy.floor(RANK / hi))
        elif lo == 1 and top:
            base.append(RANK)
        elif lo == 1:
            base.append(sympy.Mod(RANK, hi))
        elif top:
            base.append(lo * sympy.floor(RANK / lo))
        else:
            base.append(lo * sympy.Mod(sympy.floor(RANK / lo), _quotient(hi, lo)))
    mask = sympy.Mul(*geo) * 2 ** sympy.Add(*base)
    return sympy.And(*conds), mask, sidx, scount


def _case_forms(groups: tuple[int, ...]) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr,
                                                  sympy.Expr]:
    """A partition no digit pattern matches: the forms by rank cases."""
    cs = len(groups)
    lead = [r for r in range(cs) if groups[r] & ((1 << r) - 1) == 0]
    issue = sympy.Or(*[sympy.Eq(RANK, r) for r in lead])
    mask = sympy.Piecewise(*[(groups[r], sympy.Eq(RANK, r)) for r in range(cs - 1)],
                           (groups[cs - 1], True))
    sidx = sympy.Piecewise(*[(bin(groups[r] & ((1 << r) - 1)).count("1"), sympy.Eq(RANK, r))
                             for r in range(cs - 1)],
                           (bin(groups[cs - 1] & ((1 << (cs - 1)) - 1)).count("1"), True))
    scount = sympy.Piecewise(*[(bin(groups[r]).count("1"), sympy.Eq(RANK, r))
                               for r in range(cs - 1)], (bin(groups[cs - 1]).count("1"), True))
    return issue, mask, sidx, scount


# -- the closed form of one operand -------------------------------------------------------


def derive_closed(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
                  prove: bool = True) -> ClosedResult:
    """The closed form of ``op`` at this launch, or why there is none (see module docstring)."""
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
    would = proof.would_prove if proof is not None and scope is Scope.LAUNCH else ()
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


def _k_loop_facts(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int]
                  ) -> list[Fact] | None:
    """The facts under which the K-loop predicates this launch leaves out (they hold at each of
    its k-iterations) hold at every launch: the split is exact, or the theorems prove the
    predicate under the loop bounds. None when neither: the form is this launch's only."""
    from tilec.proofs import Fact, FactKind, simplify

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
            by_text = {str(f): f for f in ctx.facts}
            out += [by_text[t] for t in res.facts_used if t in by_text]
        elif _holds(*part.exact_when, values):
            out.append(Fact(FactKind.DIVISIBLE, *part.exact_when))
        else:
            return None
    return out


def _alive_at_launch(op: OperandMulticast, values: dict[sympy.Symbol, int]
                     ) -> tuple[sympy.Boolean, list[Fact]]:
    """The alive predicates that can fail at this launch, and the facts that drop the others
    (an exact split has no predicate)."""
    from tilec.proofs import Fact, FactKind

    kept, facts = [], []
    for part in op.alive_parts:
        e, f = part.exact_when
        ev, fv = _value(e, values), _value(f, values)
        if ev is not None and fv and ev % fv == 0:
            facts.append(Fact(FactKind.DIVISIBLE, e, f))
        else:
            kept.append(part.pred)
    return sympy.And(*kept), facts


def _boundary_facts(b: list[sympy.Expr], values: dict[sympy.Symbol, int]) -> list[Fact]:
    """Each symbolic digit boundary divides the next: the digits tile the cluster."""
    from tilec.proofs import Fact, FactKind

    out = []
    for lo, hi in itertools.pairwise(b):
        if lo != 1 and (lo.free_symbols or hi.free_symbols) and not (hi / lo).is_integer:
            out.append(Fact(FactKind.DIVISIBLE, hi, lo))
    return out


def _parameter_facts(facts: list[Fact], op: OperandMulticast) -> tuple[Fact, ...]:
    """Facts about the parameters only (a bound on a loop variable is not a fact to guard on)."""
    loop = {*op.variables, R1, R2, RANK}

    def free(f: Fact) -> set[sympy.Basic]:
        return f.subject.free_symbols | (f.other.free_symbols if f.other is not None else set())

    def trivial(f: Fact) -> bool:  # 24*ceiling(M/BM) % 2 == 0: true for every value
        return f.kind.value == "divisible" and f.other is not None and mk_mod(
            f.subject, f.other) == 0

    return tuple(dict.fromkeys(f for f in facts if free(f) and not free(f) & loop
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


# -- 4. proof -----------------------------------------------------------------------------


_Row = tuple[str, sympy.Basic, sympy.Basic]  # a proof row: (theorem, before, after), unprinted


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


def _value(expr: sympy.Expr, values: dict[sympy.Symbol, int]) -> int | None:
    """The exact integer value of a parameter expression."""
    expr = sympy.sympify(expr)
    if expr.is_Integer:
        return int(expr)
    syms, fn = _evaluator(expr)
    if any(s not in values for s in syms):
        return None
    try:
        return int(fn(*[values[s] for s in syms])[0])
    except (ValueError, TypeError, ZeroDivisionError):
        return None


@functools.lru_cache(maxsize=4096)
def _evaluator(expr: sympy.Expr) -> tuple[list[sympy.Symbol], Any]:
    """The parameters of ``expr`` and its compiled exact value (a derivation asks for the values
    of the same few divisors many times)."""
    syms = sorted(expr.free_symbols, key=str)
    return syms, compile_int([expr], syms)


def _divisors(expr: sympy.Basic) -> list[sympy.Expr]:
    """Divisors of floor/Mod nodes over the rank, with the products of nested chains, in
    sympy's canonical order (never a set's: that depends on the process's hash seed, and the
    first divisor that fits is the one printed)."""
    out: set[sympy.Expr] = set()

    def chain(e: sympy.Basic) -> list[sympy.Expr]:
        if isinstance(e, sympy.floor):
            num, den = sympy.fraction(e.args[0])
            return [den, *[den * i for i in chain(num)]]
        return []

    for node in sympy.preorder_traversal(expr):
        if RANK not in node.free_symbols:
            continue
        if isinstance(node, sympy.floor):
            out.update(chain(node))
        elif isinstance(node, sympy.Mod):
            m = node.args[1]
            out.add(m)
            out.update(m * d for d in chain(node.args[0]))
    return sorted((d for d in out if d.free_symbols or (d.is_Integer and d > 1)),
                  key=sympy.default_sort_key)


def _coefficients(expr: sympy.Basic, variables: list[sympy.Symbol]) -> set[sympy.Expr]:
    """Coefficients of CTA-level variables in sums that also hold the rank."""
    out: set[sympy.Expr] = set()
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Add) and RANK in node.free_symbols:
            for term in node.args:
                for v in variables:
                    if v in term.free_symbols:
                        coeff, _ = term.as_independent(v, as_Add=False)
                        if coeff.free_symbols or (coeff.is_Integer and coeff > 1):
                            out.add(coeff)
    return out


def _context(op: OperandMulticast, values: dict[sympy.Symbol, int]) -> Context:
    from tilec.proofs import Context

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


def _holds(c: sympy.Expr, d: sympy.Expr, values: dict[sympy.Symbol, int]) -> bool:
    cv, dv = _value(c, values), _value(d, values)
    return cv is not None and dv is not None and dv != 0 and cv % dv == 0


# proofs keyed by content: the operand's forms, which candidate facts hold, which splits are
# exact and the groups; launches that agree on all of these share one proof
PROOFS: LRU[Any] = LRU(256)


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


def _prove(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
           groups: tuple[int, ...]) -> _Proof | None:
    """Narrow same(r1, r2) under the facts that hold here; a proof when it leaves the same
    groups as a relation of the ranks alone. The narrowing is kept by content (launches that
    agree on which candidate facts hold share it); what depends on the values themselves (the
    keys' digits, the exactness bounds, the alive predicates) is decided per launch."""
    from tilec.proofs import Fact, FactKind

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


def _full_groups(op: OperandMulticast, values: dict[sympy.Symbol, int], facts: list[Fact],
                 rows: list[_Row]) -> OperandMulticast:
    """A grouped raster's group size ``Min(G, X - G*floor(t/(G*W)))`` (``X`` tile rows in bands
    of ``G``, ``W`` tiles a row, ``t`` the tile index) is ``G`` on every band where the launch
    meets ``X % G == 0`` and ``t < X*W`` at every loop point: ``G*floor(t/(G*W)) <= X - G``.
    ``t`` must be a sum of the loop variables with positive coefficients whose largest value
    is below ``X*W``, a bound ``ceiling(P/R)`` read as ``P/R`` under the fact ``P % R == 0``
    (the cluster divides the grid). Returns ``op`` with each such Min replaced (its origin and
    alive predicates), the facts and the proof row added; ``op`` itself where none applies.
    Where the grid has one band (``X <= G``) its index ``floor(t/(G*W))`` is 0 (``t < X*W <=
    G*W``), the size ``X`` and ``t % (G*W)`` is ``t``, under the fact ``G - X >= 0``."""
    from tilec.proofs import Fact, FactKind
    from tilec.transforms.multicast.derive import AlivePart

    variables = set(op.variables)
    exprs = [*op.origin.values(), *[p.pred for p in op.alive_parts]]
    mins = set().union(*[e.atoms(sympy.Min) for e in exprs]) if exprs else set()
    sub: dict[sympy.Basic, sympy.Basic] = {}
    for m in sorted(mins, key=sympy.default_sort_key):
        if len(m.args) != 2:
            continue
        for g, b in (m.args, m.args[::-1]):
            if g.free_symbols & variables:
                continue
            got = _full_band(g, b, op, values, variables)
            if got is None:
                continue
            x, band, extra = got
            if _holds(x, g, values):  # every band full: the group size is G
                sub[m] = g
                rows.append(("full group", m, g))
                facts.append(Fact(FactKind.DIVISIBLE, x, g))
            else:  # one band (X <= G): its index is 0, the group size X, the tile index < G*W
                y, gw = band.args[0].as_numer_denom()
                sub[band], sub[m] = sympy.Integer(0), x
                for md in set().union(*[e.atoms(sympy.Mod) for e in exprs]):
                    if sympy.expand(md.args[1] - gw) == 0 and sympy.expand(md.args[0] - y) == 0:
                        sub[md] = md.args[0]
                rows.append(("one band", m, x))
                facts.append(Fact(FactKind.NONNEG, sympy.expand(g - x)))
            facts.extend(Fact(FactKind.DIVISIBLE, p, r) for p, r in extra)
            break
    if not sub:
        return op
    origin = {n: e.xreplace(sub) for n, e in op.origin.items()}
    parts = tuple(AlivePart(p.pred.xreplace(sub), p.exact_when) for p in op.alive_parts)
    return replace(op, origin=origin, alive_parts=parts, forms_key=(op.forms_key, "band", tuple(
        sorted((str(k), str(v)) for k, v in sub.items()))))


def _full_band(g: sympy.Expr, b: sympy.Expr, op: OperandMulticast,
               values: dict[sympy.Symbol, int], variables: set[sympy.Symbol]
               ) -> tuple[sympy.Expr, sympy.Expr, list[tuple[sympy.Expr, sympy.Expr]]] | None:
    """``(X, floor(Y/(g*W)), [(P, R), ...])`` when ``b == X - g*floor(Y/(g*W))`` with ``Y == t``
    (the theorems' simplification), ``t < X*W`` at every loop point, and here either ``X % g ==
    0`` (every band full) or ``X <= g`` (one band)."""
    from tilec.proofs import simplify

    for f in b.atoms(sympy.floor):
        x = sympy.expand(b + g * f)
        xv, gv = _value(x, values), _value(g, values)
        if x.free_symbols & variables or xv is None or gv is None or not (
                _holds(x, g, values) or 0 < xv <= gv):
            continue
        num, den = f.args[0].as_numer_denom()
        w = sympy.cancel(den / g)
        if w.free_symbols & variables or sympy.expand(x - (b + g * f)) != 0:
            continue
        t = sympy.expand(simplify(num).expr)
        # a sum of c*v, one loop variable a term, c free of them (nothing else: t >= 0)
        terms = [sympy.Mul.make_args(a) for a in sympy.Add.make_args(t)]
        if not t.free_symbols & variables or any(
                len([f_ for f_ in a if f_ in variables]) != 1
                or any(f_.free_symbols & variables for f_ in a if f_ not in variables)
                for a in terms):
            continue
        top, extra, ok = sympy.Integer(0), [], True
        for v in sorted(t.free_symbols & variables, key=str):
            c = t.coeff(v)
            ub = op.rank_extent if v == RANK else op.bounds.get(v)
            if ub is None or c.free_symbols & variables or not (c.is_positive or (
                    _value(c, values) or 0) > 0 and c.free_symbols <= set(values)):
                ok = False
                break
            if isinstance(ub, sympy.ceiling):
                p, r = ub.args[0].as_numer_denom()
                if not _holds(p, r, values):
                    ok = False
                    break
                extra.append((p, r))
                ub = p / r
            top += c * (ub - 1)
        if not ok:
            continue
        slack = sympy.simplify(x * w - top)
        if slack.is_positive:
            return x, f, extra
    return None


@dataclass(frozen=True)
class _NoSteps:
    """A narrowing result with no step (the box origin does not depend on the rank)."""

    expr: sympy.Boolean
    trace: tuple[Any, ...] = ()


def _attempts(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
              groups: tuple[int, ...]) -> tuple[Any, ...]:
    pairs = PROOFS.get_or(("pairs", op.forms_key, op.alive_parts), lambda: _pairs(op, forms))
    held = tuple(_holds(c, d, values) for c, d in pairs)
    key = (op.forms_key, op.alive_parts, held, groups)
    return PROOFS.get_or(key, lambda: _narrow_same(op, forms, values, groups, pairs, held))


def _narrow_same(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
                 groups: tuple[int, ...], pairs: list[tuple[sympy.Expr, sympy.Expr]],
                 held: tuple[bool, ...]) -> tuple[Any, ...]:
    """Both attempts at narrowing same(r1, r2) (as written; divisors cut by the grouping), up
    to the first whose keys give this launch's groups."""
    from tilec.proofs import narrow, simplify

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
        used: list[str] = []  # every fact a step of the proof rests on
        origin = {}
        cuts = {n: _factor_divisors(e, groupings, local, values, rows, used) if cut else e
                for n, e in op.origin.items()}
        if cut and not rows:
            break  # nothing to cut: the same attempt again
        for name, e in cuts.items():
            res = simplify(e, local)
            used += res.facts_used
            rows += _trace_rows(res)
            folded = fold_nested_floors(res.expr)
            if folded != res.expr:
                rows.append(("2.11", res.expr, folded))
            origin[name] = folded
        same_exact = same_box(origin, R1, R2)
        res = narrow(same_exact, local)
        used += res.facts_used
        rows += _trace_rows(res)
        keys = None if res.expr.free_symbols & set(variables) else _keys(res.expr)
        by_text = {str(f): f for f in local.facts}
        facts = tuple(by_text[t] for t in dict.fromkeys(used) if t in by_text)
        attempts.append((facts, tuple(rows), res, None if keys is None else tuple(keys), local))
        if keys is not None and _groups_of(keys, values, len(groups)) == groups:
            break
    return tuple(attempts)


@dataclass(frozen=True)
class KeyDigits:
    """The groups of a proof's rank keys as mixed-radix digits with symbolic boundaries
    ``b = [1, ..., top]`` (each divides the next, by the facts): the keys keep the digits in
    ``kept`` and the ranks of a group differ only in the others."""

    b: tuple[sympy.Expr, ...]
    digits: RankDigits | None  # radices at this launch (1 where two boundaries are equal here)
    block: sympy.Expr  # where the top run of kept digits starts: a group lies in one block
    residue: sympy.Expr | None = None  # the one key is rank % D, D not dividing the cluster


def residue_digits(keys: tuple[sympy.Expr, ...] | list[sympy.Expr], top: sympy.Expr
                   ) -> KeyDigits | None:
    """The one key ``rank % D`` where ``D`` need not divide the cluster: the ranks congruent
    modulo D share (no digit pattern: ``{0, 4}, {1, 5}, {2}, {3}`` in a cluster of 6)."""
    if len(keys) != 1 or not isinstance(keys[0], sympy.Mod) or keys[0].args[0] != RANK:
        return None
    d = keys[0].args[1]
    if d.free_symbols & {RANK, R1, R2}:
        return None
    return KeyDigits((sympy.Integer(1), d, top), None, top, d)


def residue_forms(d: sympy.Expr, top: sympy.Expr
                  ) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr, sympy.Expr]:
    """Leader, mask, slice index and count of the classes of ``rank % d`` in ``top`` ranks:
    the members are ``m, m + d, ...`` below ``top`` (``m = rank % d``)."""
    m = sympy.Mod(RANK, d)
    count = sympy.floor((top - 1 - m) / d) + 1
    mask = 2**m * sympy.Sum(2 ** (d * _J), (_J, 0, count - 1))
    return sympy.Lt(RANK, d), mask, sympy.floor(RANK / d), count


def _key_interval(k: sympy.Expr, top: sympy.Expr) -> tuple[sympy.Expr, sympy.Expr] | None:
    """The digits ``[lo, hi)`` of the rank a key keeps: ``rank``, ``rank % H``, ``rank / L``,
    ``(rank % H) / L`` or ``(rank / L) % Q`` (= ``(rank % (L*Q)) / L``)."""
    one = sympy.Integer(1)
    if k == RANK:
        return one, top
    if isinstance(k, sympy.Mod) and k.args[0] == RANK and RANK not in k.args[1].free_symbols:
        return one, k.args[1]
    if isinstance(k, sympy.Mod) and isinstance(k.args[0], sympy.floor):
        x, lo = sympy.fraction(k.args[0].args[0])
        if x == RANK and RANK not in (lo * k.args[1]).free_symbols:
            return lo, lo * k.args[1]
    if isinstance(k, sympy.floor):
        x, lo = sympy.fraction(k.args[0])
        if RANK in lo.free_symbols:
            return None
        if x == RANK:
            return lo, top
        if isinstance(x, sympy.Mod) and x.args[0] == RANK and RANK not in x.args[1].free_symbols:
            return lo, x.args[1]
    return None


def key_digits(keys: tuple[sympy.Expr, ...] | list[sympy.Expr], top: sympy.Expr,
               values: dict[sympy.Symbol, int]) -> KeyDigits | None:
    """The digit pattern of rank keys, for every launch: None when a key is not a digit run of
    the rank or the boundaries do not divide one another at this launch."""
    spans = []
    for k in keys:
        iv = _key_interval(k, top)
        if iv is None:
            return None
        spans.append(iv)
    bounds = list(dict.fromkeys([sympy.Integer(1), *[x for iv in spans for x in iv], top]))
    vals = {x: _value(x, values) for x in bounds}
    if any(v is None or v < 1 for v in vals.values()):
        return None

    def divides(a: sympy.Expr, b: sympy.Expr) -> bool:
        q = b / a
        return bool(q.is_integer) and q != 1

    # 1 first, the top last, the others by value at this launch (where two are equal here, the
    # one that divides the other first)
    rest = [x for x in bounds if x != 1 and x != top]
    inner = sorted(rest, key=lambda x: (vals[x], sum(divides(y, x) for y in rest
                                                     if vals[y] == vals[x]), str(x)))
    order = [sympy.Integer(1), *inner, top] if top != 1 else [sympy.Integer(1)]
    if any(vals[b] % vals[a] for a, b in itertools.pairwise(order)):
        return None
    idx = {x: i for i, x in enumerate(order)}
    kept = set()
    for lo, hi in spans:
        if idx[lo] > idx[hi]:
            return None
        kept.update(range(idx[lo], idx[hi]))
    n = len(order) - 1
    radices = tuple(vals[order[i + 1]] // vals[order[i]] for i in range(n))
    shared = frozenset(range(n)) - kept
    start = n
    while start > 0 and start - 1 in kept:
        start -= 1
    return KeyDigits(tuple(order), RankDigits(radices, shared), order[start])


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
    if sympy.fraction(sympy.together(i))[1] != 1 or i.is_Mul and f in i.args \
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


def _exactness(res: Any, ctx: Context, values: dict[sympy.Symbol, int]) -> list[Fact] | None:
    """The facts under which every narrowing (congruence) step of ``res`` is an equivalence, or
    None. ``X1 % D == X2 % D -> X1 == X2`` is exact when ``|X1 - X2| < D``: with the common
    summands cancelled, ``X1 - X2 = g(r1) - g(r2)`` for a ``g`` of the rank alone, and
    ``hi - lo < D`` for its bounds ``lo <= g(rank) <= hi`` is the fact (a cluster whose ranks
    never wrap around the modulus). A quotient's congruence ``X1/D == X2/D -> X1 == X2`` is
    exact where ``g`` is the same for every rank (``hi - lo < 1``: the cluster lies in one
    block of the quotient's digit); otherwise it stays a narrowing."""
    from tilec.proofs import Fact, FactKind
    from tilec.proofs.bounds import Reasoner

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
            # X1/D == X2/D -> X1 == X2 is exact where X1 - X2 is 0 for every pair of ranks
            (x1, d1), (x2, d2) = (sympy.fraction(before.lhs.args[0]),
                                  sympy.fraction(before.rhs.args[0]))
            got = _congruence_span(x1, x2, sympy.Integer(1), ctx, values) if d1 == d2 else None
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
    from tilec.proofs import Fact, FactKind
    from tilec.proofs.bounds import Reasoner

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
    sv, dv = _value(span, values), _value(d, values)
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
    from tilec.proofs import simplify

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
    lhs, rhs = sympy.expand(c.lhs), sympy.expand(c.rhs)
    common = set(sympy.Add.make_args(lhs)) & set(sympy.Add.make_args(rhs))
    lhs = sympy.Add(*[t for t in sympy.Add.make_args(lhs) if t not in common])
    rhs = sympy.Add(*[t for t in sympy.Add.make_args(rhs) if t not in common])
    kl, xl = lhs.as_independent(R1, R2, RANK, as_Add=False)
    kr, xr = rhs.as_independent(R1, R2, RANK, as_Add=False)
    if kl != kr or not kl.is_positive or kl == 1 and not common:
        return c
    return sympy.Eq(xl, xr)


def _factor_divisors(e: sympy.Expr, groupings: list[sympy.Expr], ctx: Context,
                     values: dict[sympy.Symbol, int], rows: list[_Row],
                     used: list[str]) -> sympy.Expr:
    """Cut a divisor D of the rank's tile index by a rank grouping g with D % g == 0:
    ``x/D -> (x/g)/(D/g)`` (2.11) and ``x%D -> x%g + ((x/g)%(D/g))*g`` (2.12). The rank then
    stays in ``x/g`` and ``x%g``, where the facts on the other summands drop the loop variables
    (2.15.1, 2.7.1): a cluster that never straddles a tile row shares that row."""
    from tilec.proofs import Fact, FactKind
    from tilec.proofs.build import as_expr, canon

    def cut(node: sympy.Basic) -> sympy.Basic:
        if isinstance(node, sympy.floor):
            x, d = sympy.fraction(node.args[0])
        elif isinstance(node, sympy.Mod):
            x, d = node.args
        else:
            return node
        if RANK not in x.free_symbols or RANK in d.free_symbols:
            return node
        for g in groupings:
            if g == d or not _holds(d, g, values):
                continue
            q = sympy.floor(d / g)
            if isinstance(node, sympy.floor):
                new = sympy.floor(sympy.floor(x / g) / q)
                theorem = "2.11"
            else:
                new = sympy.Mod(x, g) + g * sympy.Mod(sympy.floor(x / g), q)
                theorem = "2.12"
            ctx.divisible(d, g)
            # the fact as the context states it (canonical: ``(G*5)`` written unevaluated)
            used.append(str(Fact(FactKind.DIVISIBLE, canon(as_expr(d)), canon(as_expr(g)))))
            rows.append((theorem, node, new))
            return new
        return node

    with sympy.evaluate(False):
        return e.replace(lambda n: isinstance(n, (sympy.floor, sympy.Mod)), cut)


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


def _alive_uniform(op: OperandMulticast, kd: KeyDigits, keys: tuple[sympy.Expr, ...],
                   ctx: Context, values: dict[sympy.Symbol, int], facts: list[Fact],
                   rows: list[_Row], groupings: list[sympy.Expr]) -> list[AlivePart]:
    """Each alive predicate that can fail here depends on the rank only through
    ``floor(rank/block)``, where ``block`` starts the keys' top run of kept digits (a group lies
    in one block at every launch): a group is all alive or all dead wherever the facts hold.
    Returns the predicates that could not be proved so (none: proved)."""
    from tilec.proofs import Fact, FactKind, simplify

    failed: list[AlivePart] = []
    block = kd.block
    # the keys (and the block) as opaque values: a predicate left without the rank then depends
    # on it only through them, the same for every member of a group
    kd_markers = {k: sympy.Symbol(f"_key{i}", integer=True, nonnegative=True)
                  for i, k in enumerate([*keys, sympy.floor(RANK / block)])}
    divisors_216 = [g for g in dict.fromkeys([block, *groupings, *kd.b[1:]]) if g != 1]
    for part in op.alive_parts:
        e, f = part.exact_when
        if _holds(e, f, values) or RANK not in part.pred.free_symbols:
            continue
        cands = [part.pred]
        split = _split_bound(part)
        if split is not None:
            cands.append(split)
        g216: dict[sympy.Basic, sympy.Basic] = {}  # 2.16's candidates -> what they rewrite
        for base in list(cands):
            if not isinstance(base, sympy.StrictLessThan):
                continue
            lhs, rhs = base.args
            for g in divisors_216:
                if _holds(rhs, g, values):
                    ctx.divisible(rhs, g)
                    # 2.16: e < B*g  <=>  e/g < B   (g > 0; any g that divides the bound)
                    c216 = sympy.Lt(sympy.floor(lhs / g), sympy.floor(rhs / g))
                    g216[c216] = (base, g)
                    cands.append(c216)
        # each also with the divisors of the rank's tile index cut by the rank's grouping
        tries = [(c, False) for c in cands] + [(c, True) for c in cands]
        for cand, cut in tries:
            cut_rows: list[_Row] = []
            cut_used: list[str] = []
            e_cut = _factor_divisors(cand, groupings, ctx, values, cut_rows, cut_used) \
                if cut else cand
            if cut and not cut_rows:
                continue
            res = simplify(e_cut, ctx)
            left = fold_nested_floors(res.expr).xreplace(kd_markers)
            if RANK in left.free_symbols and isinstance(res.expr, sympy.Rel):
                bound_used = _bound_holds(res.expr, ctx, values)
                if bound_used is None and isinstance(e_cut, sympy.Rel):
                    bound_used = _bound_holds(e_cut, ctx, values)
                if _DEBUG:
                    print("BOUND", e_cut, "|", res.expr, "->", bound_used)
                if bound_used is not None:
                    left = sympy.true  # holds at every launch (interval reasoning)
                    rows.append(("bounds", res.expr, sympy.true))
                    facts.extend(bound_used)
            if _DEBUG:
                print("ALIVE", cut, e_cut, "->", res.expr, "|", left)
            if RANK not in left.free_symbols:
                base, g = g216.get(cand, (cand, None))
                if base is split:
                    rows.append(("ceil.def", part.pred, split))
                if g is not None:
                    rows.append(("2.16", base, cand))
                    facts.append(Fact(FactKind.DIVISIBLE, base.args[1], g))
                rows.extend(cut_rows)
                rows.extend(_trace_rows(res))
                by_text = {str(fc): fc for fc in ctx.facts}
                facts.extend(by_text[t] for t in [*cut_used, *res.facts_used] if t in by_text)
                break
        else:
            failed.append(part)
    return failed


def _bound_holds(cond: sympy.Rel, ctx: Context, values: dict[sympy.Symbol, int] | None = None
                 ) -> list[Fact] | None:
    """The facts of ``ctx`` under which interval reasoning proves ``cond`` at every launch, or
    None. Each ceiling of the parameters is read as a positive integer symbol first (it is one:
    ``ceiling(E/f) >= 1`` for E, f > 0), its divisibility facts carried over. A loop bound
    ``ceiling(P/R)`` whose split is exact at this launch is read as the quotient ``Q = P/R``
    (``P`` written ``R*Q`` wherever it stands) under the fact ``P % R == 0``: the grid of a
    cluster that divides it, the rounds of a persistent walk that fill every SM. Then the
    theorems simplify ``cond`` (2.16: ``i/d < D <=> i < D*d``) and interval reasoning bounds
    what is left, each parameter bounded by itself (``0 <= s <= s``: ``SMS*i < SMS*Q``)."""
    from tilec.proofs import Context, Fact, FactKind, simplify
    from tilec.proofs.bounds import Reasoner

    loop = _LOOP_NAMES(cond) | {f.subject for f in ctx.facts if f.kind is FactKind.BOUND}
    quot: dict[sympy.Basic, sympy.Symbol] = {}
    exact: list[tuple[sympy.Expr, sympy.Expr, sympy.Symbol]] = []
    for f in ctx.facts:
        up = f.other
        if (f.kind is FactKind.BOUND and isinstance(up, sympy.ceiling) and up not in quot
                and not up.free_symbols & loop and values is not None):
            p, r = up.args[0].as_numer_denom()
            if r != 1 and _holds(p, r, values):
                quot[up] = sympy.Symbol(f"_q{len(quot)}", integer=True, positive=True)
                exact.append((p, r, quot[up]))
    ceils = {c for e in [cond, *[x for f in ctx.facts for x in (f.subject, f.other)
                                  if x is not None], *[x for p, r, _ in exact for x in (p, r)]]
             for c in e.atoms(sympy.ceiling) if not c.free_symbols & loop and c not in quot}
    sub: dict[sympy.Basic, sympy.Basic] = {**quot, **{
        c: sympy.Symbol(f"_ceil{i}", integer=True, positive=True)
        for i, c in enumerate(sorted(ceils, key=sympy.default_sort_key))}}
    tie_map = {p.xreplace(sub): r.xreplace(sub) * q for p, r, q in exact}

    def tie(e: sympy.Basic) -> sympy.Basic:
        e = e.xreplace(sub)
        for _ in range(4):  # P -> R*Q, where R is itself a P of another bound (SMS -> CLUSTER*Q)
            new = e.xreplace(tie_map)
            if new == e:
                break
            e = new
        return e

    # first with the divisibility facts (they cut quotients the grouping keeps), then without
    # (they split the quotient 2.16 reads: ``x/d + y/d < D``)
    for divisibility in (True, False):
        got = _bound_attempt(cond, ctx, tie, loop, set(sub.values()), divisibility)
        if got is not None:
            used, named = got
            return used + [Fact(FactKind.DIVISIBLE, p, r) for p, r, q in exact if q in named]
    return None


def _bound_attempt(cond: sympy.Rel, ctx: Context, tie: Any, loop: set[sympy.Basic],
                   abstract: set[sympy.Symbol], divisibility: bool
                   ) -> tuple[list[Fact], set[sympy.Basic]] | None:
    """One try of :func:`_bound_holds` over the facts of ``ctx`` read through ``tie``: the
    facts of ``ctx`` it used and the symbols its proof names, or None."""
    from tilec.proofs import Context, Fact, FactKind, simplify
    from tilec.proofs.bounds import Reasoner

    local, back = Context(), {}
    for f in ctx.facts:
        subj = tie(f.subject)
        other = tie(f.other) if f.other is not None else None
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
    tied = tie(cond)
    params = sorted((abstract | {s for f in local.facts for s in f.subject.free_symbols
                                 | (f.other.free_symbols if f.other is not None else set())}
                     | tied.free_symbols) - loop - {R1, R2, RANK}, key=str)
    params = [s for s in params if s.is_positive]
    local.positive(*params)
    for s in params:  # a parameter is at most itself: the bounds of SMS*i_rt are symbolic
        local.bound(s, s + 1)
    reasoner = Reasoner.for_context(local)
    used: list[Fact] = []
    res = simplify(tied, local)
    target = tie(res.expr)
    steps = set(res.facts_used)
    used_steps = [f for f in local.facts if str(f) in steps]
    if target is not sympy.true and reasoner.why(target, used) is None and not _linear_bound(
            target, reasoner, loop, used):
        return None
    named = tied.free_symbols | target.free_symbols | set().union(
        *[f.subject.free_symbols | (f.other.free_symbols if f.other is not None else set())
          for f in [*used, *used_steps]])
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


def fold_nested_floors(expr: sympy.Expr) -> sympy.Expr:
    """2.11 right to left: ``floor(floor(x/a)/b) -> floor(x/(a*b))`` for a, b > 0.

    The simplifier splits divisions (left to right); folding them back over the rank lets the
    narrowing see ``floor(r/(CM*CN))`` as one digit of the rank instead of narrowing the outer
    floor away (which would lose the sharing of B's column groups).
    """

    def fold(e: sympy.Basic) -> sympy.Basic:
        if isinstance(e, sympy.floor):
            num, den = sympy.fraction(e.args[0])
            if isinstance(num, sympy.floor) and den.is_positive:
                inum, iden = sympy.fraction(sympy.together(num.args[0]))
                if iden.is_positive:
                    return sympy.floor(inum / (iden * den))
        return e

    prev = None
    while prev != expr:
        prev, expr = expr, expr.replace(lambda e: isinstance(e, sympy.floor), fold)
    return expr


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
