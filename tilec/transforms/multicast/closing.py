"""What would close it: the single divisibility facts about the parameters, false at this launch,
under which an operand's sharing becomes uniform (a closed form exists), each with the nearest
launch that meets it and the form it gives there (``tilec explain``'s suggestions). The forms and
proofs themselves are :mod:`.closed`'s."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import sympy

from tilec.proofs import Fact, FactKind
from tilec.transforms.multicast.digits import (
    _boundaries,
    _divisors,
    digit_forms,
    rank_digits,
    uniform_partition,
)
from tilec.transforms.multicast.proof import _pairs
from tilec.transforms.multicast.table import holds_at, launch_table, value_at

if TYPE_CHECKING:
    from tilec.transforms.multicast.records import ClosedResult, OperandForms, OperandMulticast


@dataclass(frozen=True)
class Closer:
    """A fact about the parameters that would give a closed form, and the form it gives."""

    fact: Fact
    change: dict[str, tuple[int, int]]  # a launch that meets it: parameter -> (now, then)
    structure: str
    issue: sympy.Boolean
    mask: sympy.Expr


def what_would_close(op: OperandMulticast, values: dict[sympy.Symbol, int], *,
                     search: int = 64) -> list[Closer]:
    """The single divisibility facts about the parameters, false at this launch, under which
    the sharing becomes uniform: for each, the nearest launch that meets it (one parameter
    moved by the least relative change, the cluster kept) is tabulated exactly and must have
    uniform sharing. Weakest first (the smallest divisor: it holds for the most launches).

    >>> from tilec.runtime.session import derive_from_file
    >>> d = derive_from_file("examples/my_gemm.py", {"M": 4096, "N": 7800})
    >>> values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in d.params.items()
    ...           if isinstance(v, int)}
    >>> c = what_would_close(d.operands["A"], values)[0]
    >>> str(c.fact), c.change, str(c.issue)
    ('ceiling(N/BN) % CN == 0', {'N': (7800, 7680)}, 'Eq(Mod(rank, CN), 0)')
    """

    if op.closed_form or not values:
        return []
    keep = op.rank_extent.free_symbols
    out: list[tuple[int, int, Closer]] = []
    for c, d in _pairs(op, None):  # type: ignore[arg-type]
        if holds_at(c, d, values):
            continue
        dv = value_at(d, values)
        if not dv or dv <= 1:
            continue
        moves = [(abs(m[p] - values[p]) / values[p], str(p), p, m) for p in
                 c.free_symbols - keep - d.free_symbols
                 if (m := _nearest(p, [Fact(FactKind.DIVISIBLE, c, d)], values, [],
                                   search)) is not None]
        for _, _, p, moved in sorted(moves, key=lambda x: x[:2]):
            table = launch_table(op.mode, op.origin, op.alive, op.variables[1:], op.bounds, moved,
                           op.cluster_size)
            groups, _ = uniform_partition(table, op.cluster_size)
            if groups is None:
                continue
            digits = rank_digits(groups)
            if digits is None:
                continue
            b = _boundaries(digits, [op.rank_extent, *op.rank_dims,
                                     *sorted(_divisors(sympy.Tuple(*op.origin.values())),
                                             key=sympy.count_ops)], moved, op.cluster_size)
            lead, mask, _, _ = digit_forms(digits, b)
            out.append((dv, sympy.count_ops(d), Closer(
                Fact(FactKind.DIVISIBLE, c, d), {str(p): (values[p], moved[p])},
                digits.describe(b), lead, mask)))
            break
    out.sort(key=lambda x: (x[0], x[1], str(x[2].fact)))
    seen: dict[Fact, Closer] = {}
    for _, _, closer in out:
        seen.setdefault(closer.fact, closer)
    return list(seen.values())


# -- what would prove a form checked at this launch only ------------------------------------

# re-derives an operand at another launch of its schedule (closed.derive_closed without this
# search: the search's own result is never searched again)
Rederive = Callable[["OperandMulticast", "OperandForms", dict[sympy.Symbol, int]], "ClosedResult"]


@dataclass(frozen=True)
class Reach:
    """Where a closed form checked at this launch only stands: the facts about the parameters,
    false here, under which the engine proves a closed form (``would_prove``), or why no such
    fact was found (``why``: one of :data:`LAUNCH_CLASSES`' reasons)."""

    would_prove: tuple[Fact, ...] = ()
    why: str = ""
    moved: dict[str, tuple[int, int]] | None = None  # the launch it was proved at
    tried: int = 0  # the launches re-derived


def launch_reach(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
                 rederive: Rederive, first: tuple[Fact, ...] = (), *, tries: int = 3,
                 narrowing: bool = False) -> Reach:
    """The facts under which the engine proves this operand's closed form: each candidate fact
    (``first``, then the divisibility of the tile counts, the grid, the bands and the rounds
    by the cluster's groupings, and the reverse) that is false here is met at the nearest
    launch (one parameter moved, the cluster's shape and the parameters written as numbers
    kept), the operand re-derived there by ``rederive``; kept only where that derivation is
    proved. ``would_prove`` is then the proved form's facts that fail here (each true there:
    never a fact no launch meets). Where none of ``tries`` re-derivations proves it, ``why``
    names the class of the launch (:func:`launch_class`; ``narrowing``: the form is a
    narrowing, and that is its class)."""

    if not values:
        return Reach(why=_WHY + "the schedule's sizes are numbers (it was built over no "
                                "symbols)")
    frozen = op.rank_extent.free_symbols.union(*[d.free_symbols for d in op.rank_dims],
                                               *[p.pred.free_symbols for p in forms.k_parts])
    movable = set(values) - frozen
    hardware = [(p, r) for p, r in _bound_splits(op) if r.is_Integer and holds_at(p, r, values)]
    own = [Fact(FactKind.DIVISIBLE, c, d) for c, d in _own_splits(op)]
    size = len(op.table)
    seen: dict[tuple[int, ...], tuple[Fact, ...] | None] = {}  # launch looked at -> missing
    proofs = [0]  # the re-derivations run (a launch without uniform sharing costs none)

    def attempt(moved: dict[sympy.Symbol, int]) -> tuple[Fact, ...] | None:
        """The facts, false here, of the form proved at ``moved`` (None: not proved there,
        or on facts that all hold here: that tells nothing)."""
        key = tuple(moved[p] for p in sorted(moved, key=str))
        if key not in seen:
            seen[key] = None
            table = _table_at(op, moved, size)
            if table is not None:
                proofs[0] += 1
                got = _proved_at(op, forms, moved, rederive, table)
                seen[key] = None if got is None else tuple(
                    f for f in got if not _fact_holds(f, values)) or None
        return seen[key]

    def spent() -> bool:
        return proofs[0] >= tries or len(seen) >= 4 * tries

    best: tuple[tuple[Fact, ...], dict[sympy.Symbol, int]] | None = None
    for _, moved in _launches(op, forms, values, first, movable, hardware, own):
        if spent():
            break
        missing = attempt(moved)
        if missing is not None:
            best = (missing, moved)
            break
    # fewer facts: the launches that meet one of them alone, while tries are left
    for fact in best[0] if best is not None and len(best[0]) > 1 else ():
        for moved in _launches_meeting(fact, fact.free_symbols & movable, values, hardware, own):
            if spent():
                break
            missing = attempt(moved)
            if missing is not None and len(missing) < len(best[0]):  # type: ignore[index]
                best = (missing, moved)
    if best is None:
        why = _WHY + LAUNCH_CLASSES["narrowing"] if narrowing else launch_class(op, forms, values)
        return Reach(why=why, tried=proofs[0])
    missing, moved = best
    # each fact true there: never a fact with no parameter that is false here
    assert all(f.free_symbols for f in missing), missing
    change = {str(p): (values[p], moved[p]) for p in values if moved[p] != values[p]}
    return Reach(missing, "", change, proofs[0])


def _launches(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int],
              first: tuple[Fact, ...], movable: set[sympy.Basic],
              hardware: list[tuple[sympy.Expr, sympy.Expr]], own: list[Fact]
              ) -> Iterator[tuple[Fact | None, dict[sympy.Symbol, int]]]:
    """The launches to re-derive at, in order: the nearest meeting each fact of ``first``, the
    clean launch (:func:`_clean_launch`), then the nearest meeting each other candidate."""
    cands = [f for f in _reach_candidates(op, forms, values, first)
             if not _fact_holds(f, values) and f.free_symbols & movable]
    lead = [f for f in cands if f in first]
    for fact in lead:
        for moved in _launches_meeting(fact, fact.free_symbols & movable, values, hardware, own)[:2]:
            yield fact, moved
    splits = [f for f in cands if f.kind is FactKind.DIVISIBLE]
    clean = _clean_launch(splits, movable, values, hardware)
    if clean is not None:
        yield None, clean
    ones = [f for f in cands if f.kind is FactKind.BOUND]
    if ones:  # the clean launch with each divisor parameter at 1
        clean = _clean_launch(ones + splits, movable, values, hardware)
        if clean is not None:
            yield None, clean
    for fact in cands:
        if fact not in lead:
            for moved in _launches_meeting(fact, fact.free_symbols & movable, values, hardware,
                                           own)[:3]:
                yield fact, moved


def _clean_launch(cands: list[Fact], movable: set[sympy.Basic],
                  values: dict[sympy.Symbol, int],
                  hardware: list[tuple[sympy.Expr, sympy.Expr]], search: int = 64
                  ) -> dict[sympy.Symbol, int] | None:
    """The launch near this one where the launch's own splits are exact (each alive
    predicate's, each loop bound's, each band's) and the tile counts are multiples of the
    rank's groupings, as many as moving one parameter per fact reaches (greedy, in the order
    of ``cands``): the most regular launch nearby, None where no fact is met."""
    met: list[Fact] = []
    at = dict(values)
    for fact in cands[:_CLEAN_FACTS]:
        if _fact_holds(fact, at):
            met.append(fact)
            continue
        for p in sorted(fact.free_symbols & movable, key=str):
            hit = _nearest(p, [*met, fact], at, hardware, search)
            if hit is not None:
                met.append(fact)
                at = hit
                break
    return at if at != values else None


_CLEAN_FACTS = 12  # the candidates a clean launch tries to meet (the launch's own splits first)


def _nearest(p: sympy.Basic, want: list[Fact], values: dict[sympy.Symbol, int],
             hardware: list[tuple[sympy.Expr, sympy.Expr]], search: int
             ) -> dict[sympy.Symbol, int] | None:
    """The launch nearest ``values`` meeting every fact of ``want`` (and the grid a multiple of
    the cluster), moving only ``p``."""
    v = values[p]
    for step in range(1, max(search, v) + 1):
        for nv in (v + step, v - step):
            m = {**values, p: nv}
            if nv >= 1 and all(_fact_holds(f, m) for f in want) and all(
                    holds_at(a, b, m) for a, b in hardware):
                return m
    return None


def _table_at(op: OperandMulticast, moved: dict[sympy.Symbol, int], size: int
              ) -> tuple[Any, ...] | None:
    """The operand's exact table at ``moved`` where a closed form may exist there (its sharing
    uniform over the loop points); None where it may not, or where the launch is empty or far
    larger than this one (``size`` rows)."""
    from tilec.transforms.multicast.table import launch_values

    variables = op.variables[1:]
    _, _, ext = launch_values(op.bounds, variables, moved)
    rows = op.cluster_size
    for e in ext.values():
        rows *= max(int(e), 0)
    if rows == 0 or rows > max(4 * size, 4096):
        return None
    table = tuple(launch_table(op.mode, op.origin, op.alive, variables, op.bounds, moved,
                               op.cluster_size))
    return table if uniform_partition(table, op.cluster_size)[0] is not None else None


def _proved_at(op: OperandMulticast, forms: OperandForms, moved: dict[sympy.Symbol, int],
               rederive: Rederive, table: tuple[Any, ...]) -> tuple[Fact, ...] | None:
    """The facts of the operand's closed form re-derived at ``moved`` (its ``table`` there),
    where it is proved."""
    from dataclasses import replace

    from tilec.transforms.multicast.records import Scope

    got = rederive(replace(op, table=table, closed=None), forms, moved)
    if got.closed is None or got.closed.scope is not Scope.PROVED:
        return None
    return got.closed.facts


def _reach_candidates(op: OperandMulticast, forms: OperandForms,
                      values: dict[sympy.Symbol, int], first: tuple[Fact, ...]) -> list[Fact]:
    """Candidate facts, weakest first after ``first``: the proof's pairs (coefficients and
    divisors of the rank's tile index by its groupings), each grouping by each divisor (a
    cluster that covers whole tile rows), each alive predicate's split exact, each loop
    bound's split exact (full rounds, full clusters), each band of a grouped raster full."""

    whole = sympy.Tuple(*op.origin.values())
    divs = sorted(_divisors(whole), key=sympy.default_sort_key)
    groupings = [d for d in [op.rank_extent, *op.rank_dims] if d.free_symbols or d != 1]
    # the launch's own splits first (an alive predicate, a round, a band), then what they
    # split (the tile count, the grid) by the rank's groupings, then the proof's pairs
    own = _own_splits(op)
    counts = [(c, g) for c, _ in own for g in groupings if c != g and not c.is_Symbol]
    pairs = list(_pairs(op, forms))
    pairs += [(g, d) for g in groupings for d in divs if g != d]
    ranked = []
    for rank, group in enumerate((own, counts, pairs)):
        for c, d in dict.fromkeys(group):
            dv = value_at(d, values)
            if dv is None or dv <= 1:
                continue
            ranked.append((rank, dv, sympy.count_ops(d), str(c),
                           Fact(FactKind.DIVISIBLE, c, d)))
    ranked.sort(key=lambda x: x[:4])
    # a parameter that divides the rank's tile index at 1 (``CN < 2``: a digit one rank wide,
    # what the derivation's own specialization proves): last, the narrowest family
    ones = [Fact(FactKind.BOUND, d, sympy.Integer(2)) for d in divs
            if d.is_Symbol and (value_at(d, values) or 0) > 1]
    return list(dict.fromkeys([*first, *[f for *_, f in ranked], *ones]))


def _own_splits(op: OperandMulticast) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """The launch's own splits: each alive predicate's, each loop bound's, each band's."""
    return list(dict.fromkeys([p.exact_when for p in op.alive_parts] + _bound_splits(op)
                              + _bands(op)))


def _bound_splits(op: OperandMulticast) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """``(P, R)`` of each loop bound ``ceiling(P/R)`` over the parameters (the rounds of a
    persistent walk, the clusters of a grid)."""
    out = []
    for b in op.bounds.values():
        for c in sympy.sympify(b).atoms(sympy.ceiling):
            p, r = c.args[0].as_numer_denom()
            if r != 1:
                out.append((p, r))
    return out


def _bands(op: OperandMulticast) -> list[tuple[sympy.Expr, sympy.Expr]]:
    """``(X, G)`` of each grouped raster's group size ``Min(G, X - G*floor(t/(G*W)))``: the
    tile rows in bands of ``G`` (every band full where ``X % G == 0``)."""
    loop = set(op.variables)
    out = []
    for e in op.origin.values():
        for m in e.atoms(sympy.Min):
            for g, b in (m.args, m.args[::-1]):
                if g.free_symbols & loop:
                    continue
                for f in b.atoms(sympy.floor):
                    x = sympy.expand(b + g * f)
                    if not x.free_symbols & loop:
                        out.append((x, g))
    return out



def _fact_holds(fact: Fact, values: dict[sympy.Symbol, int]) -> bool:
    """The fact at these parameter values (exact, floor semantics); False where it cannot be
    evaluated."""
    s = value_at(fact.subject, values)
    o = value_at(fact.other, values) if fact.other is not None else None
    if s is None or (fact.other is not None and o is None):
        return False
    if fact.kind is FactKind.DIVISIBLE:
        return o is not None and o != 0 and s % o == 0
    if fact.kind is FactKind.BOUND:
        return o is not None and 0 <= s < o
    return s > 0 if fact.kind is FactKind.POSITIVE else s >= 0


def _launches_meeting(fact: Fact, params: set[sympy.Basic], values: dict[sympy.Symbol, int],
                      hardware: list[tuple[sympy.Expr, sympy.Expr]], also: list[Fact],
                      search: int = 64) -> list[dict[sympy.Symbol, int]]:
    """For each parameter of ``params``, the nearest launch that meets ``fact`` moving only it
    (the grid still a multiple of the cluster where it is here), and the nearest that also
    meets as many facts of ``also`` about that parameter as it can, in order (its splits
    exact: a clean launch); by the least relative change."""

    out = []
    for p in sorted(params, key=str):
        plain = _nearest(p, [fact], values, hardware, search)
        if plain is None:
            continue
        out.append((abs(plain[p] - values[p]) / values[p], 0, str(p), plain))
        want, clean = [fact], plain
        for f in also:
            if p in f.free_symbols and not _fact_holds(f, clean):
                hit = _nearest(p, [*want, f], values, hardware, search)
                if hit is not None:
                    want, clean = [*want, f], hit
        if clean is not plain:
            out.append((abs(clean[p] - values[p]) / values[p], 1, str(p), clean))
    return list({tuple(sorted(m.items(), key=str)): m
                 for *_, m in sorted(out, key=lambda x: x[:3])}.values())


# why a form checked at this launch only has no fact that proves it, by what the launch looks
# like (the first that applies): its key, and the words of the record's reason
LAUNCH_CLASSES = {
    "tiny grid": "a tiny grid (all the launch's work fits one cluster at one loop point; its "
                 "dead CTAs make the sharing uniform here only)",
    "short last band": "a grouped raster (swizzle) whose last band is short (the band's group "
                       "size stays a Min)",
    "partial rounds": "persistent rounds that do not fill the SMs (a loop bound's split is "
                      "not exact: the last round's alive CTAs depend on the rank)",
    "not digits": "a tile order whose sharing groups are no digit pattern of the rank",
    "not narrowed": "a tile order whose same(r1, r2) the theorems do not narrow to the ranks "
                    "at this launch or any launch tried",
    # (a form of scope NARROWING, not LAUNCH)
    "narrowing": "a congruence step of the proof narrows (sound, and exact at this launch, "
                 "wherever its facts hold)",
}
_WHY = "no single divisibility fact closes it: "


def launch_class(op: OperandMulticast, forms: OperandForms, values: dict[sympy.Symbol, int]
                 ) -> str:
    """Why a form checked at this launch only has no fact that proves it (``"no single
    divisibility fact closes it: <class>"``), by what the launch looks like: see
    :data:`LAUNCH_CLASSES` (the first class that applies)."""
    return _WHY + LAUNCH_CLASSES[launch_class_key(op, values)]


def launch_class_key(op: OperandMulticast, values: dict[sympy.Symbol, int]) -> str:
    """The key of :data:`LAUNCH_CLASSES` for this operand's launch."""
    cs = op.cluster_size
    if sum(row.alive for row in op.table) <= cs:
        return "tiny grid"
    for x, g in _bands(op):
        xv, gv = value_at(x, values), value_at(g, values)
        if xv is not None and gv is not None and gv > 0 and xv % gv and xv > gv:
            return "short last band"
    for b in op.bounds.values():  # a loop's extent ceiling(P/R): rounds of R (SMS, CLUSTER)
        p, r = sympy.sympify(b).args[0].as_numer_denom() if isinstance(
            b, sympy.ceiling) else (b, sympy.Integer(1))
        if r != 1 and not holds_at(p, r, values):  # (a cluster grid's split is always exact)
            return "partial rounds"
    groups, _ = uniform_partition(op.table, cs)
    if groups is not None and rank_digits(groups) is None:
        return "not digits"
    return "not narrowed"


def why_class(why: str) -> str | None:
    """The :data:`LAUNCH_CLASSES` key of a reason written by :func:`launch_class`, or None."""
    for k, words in LAUNCH_CLASSES.items():
        if why == _WHY + words:
            return k
    return None
