"""Pieces of the closed-form derivation checked on their own: 2.11 folding (the engine's),
rank digits and the forms built from them, at every rank of every cluster size."""

from __future__ import annotations

import itertools

import sympy

from tilec.proofs import Context, simplify
from tilec.transforms.multicast.digits import (
    RankDigits,
    _case_forms,
    _factorizations,
    digit_forms,
    rank_digits,
)
from tilec.transforms.multicast.table import RANK

X = sympy.Symbol("x", integer=True, nonnegative=True)
A, B = sympy.symbols("A B", integer=True, positive=True)


def _equal_on_grid(e1: sympy.Expr, e2: sympy.Expr) -> bool:
    for x, a, b in itertools.product(range(0, 40, 3), range(1, 6), range(1, 5)):
        at = {X: x, A: a, B: b}
        if e1.xreplace(at) != e2.xreplace(at):
            return False
    return True


def fold(e):
    """The engine's simplification (2.11 read backwards, rule_merge_quotients, in its tidy
    phase): what the derivation relies on to see ``floor(r/(CM*CN))`` as one digit."""
    return simplify(e, Context()).expr


def test_fold_symbolic_divisors():
    e = sympy.floor(sympy.floor(X / A) / B)
    folded = fold(e)
    assert folded.count(sympy.floor) == 1
    assert _equal_on_grid(e, folded)


def test_fold_numeric_and_summed_dividends():
    # floor(floor((x + 3)/2)/B): sympy distributes the 1/2 over the sum
    e = sympy.floor(sympy.floor((X + 3) / 2) / B)
    folded = fold(e)
    assert folded.count(sympy.floor) == 1
    assert _equal_on_grid(e, folded)


def test_three_levels_fold_to_one():
    e = sympy.floor(sympy.floor(sympy.floor(X / A) / B) / 3)
    folded = fold(e)
    assert folded.count(sympy.floor) == 1
    assert _equal_on_grid(e, folded)


def _groups(cs, same):
    return tuple(sum(1 << q for q in range(cs) if same(r, q)) for r in range(cs))


def _check_forms(groups, issue, mask, sidx, scount):
    """Leader = lowest rank of its group, mask = the group's bits, slice = rank among them."""
    cs = len(groups)
    for r in range(cs):
        at = {RANK: r}
        members = [q for q in range(cs) if groups[r] >> q & 1]
        assert bool(issue.xreplace(at)) == (members[0] == r), (groups, r, issue)
        assert int(sympy.sympify(mask).xreplace(at).doit()) == groups[r], (groups, r, mask)
        assert int(sympy.sympify(sidx).xreplace(at)) == members.index(r)
        assert int(sympy.sympify(scount).xreplace(at)) == len(members)


def test_every_digit_pattern_is_found_and_its_forms_are_exact():
    """All mixed-radix digit patterns of clusters of 1..16 (contiguous, strided, 2-D axes, whole
    cluster, never shared): rank_digits recovers the groups, digit_forms gives their forms."""
    for cs in range(1, 17):
        for radices in _factorizations(cs):
            for k in range(len(radices) + 1):
                for shared in itertools.combinations(range(len(radices)), k):
                    d = RankDigits(radices, frozenset(shared))
                    groups = _groups(cs, lambda r, q, d=d: d.key(r) == d.key(q))
                    found = rank_digits(groups)
                    assert found is not None
                    assert _groups(cs, lambda r, q, f=found: f.key(r) == f.key(q)) == groups
                    w, b = 1, [sympy.Integer(1)]
                    for x in found.radices:
                        w *= x
                        b.append(sympy.Integer(w))
                    _check_forms(groups, *digit_forms(found, b))


def test_symbolic_boundaries_read_like_the_schedule():
    cm, cn = sympy.symbols("CM CN", integer=True, positive=True)
    # B of the seed (CM=2, CN=2): ranks agreeing on rank % CN and rank // (CM*CN)
    d = RankDigits((2, 2), frozenset({1}))
    issue, mask, _, _ = digit_forms(d, [sympy.Integer(1), cn, cm * cn])
    assert issue == sympy.Lt(sympy.Mod(RANK, cm * cn), cn)
    assert str(mask) == "2**(CM*CN*floor(rank/(CM*CN)) + Mod(rank, CN))*Sum(2**(CN*j), (j, 0, CM - 1))"


def test_a_partition_that_is_no_digit_pattern_gets_rank_cases():
    groups = _groups(4, lambda r, q: (r in (0, 3)) == (q in (0, 3)))  # {0, 3}, {1, 2}
    assert rank_digits(groups) is None
    _check_forms(groups, *_case_forms(groups))


def test_residue_class_forms_are_exact():
    """The ranks congruent modulo D in a cluster of cs (D need not divide cs, and may exceed
    it): leader, mask, slice and count at every rank, against the classes counted directly."""
    from tilec.transforms.multicast.digits import residue_forms

    d_sym, top = sympy.symbols("D CLUSTER", integer=True, positive=True)
    forms = residue_forms(d_sym, top)
    for cs in range(1, 17):
        for d in range(1, cs + 3):
            groups = _groups(cs, lambda r, q, d=d: r % d == q % d)
            at = {d_sym: d, top: cs}
            _check_forms(groups, *(sympy.sympify(f).xreplace(at) for f in forms))
