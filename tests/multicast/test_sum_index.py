"""Issue 28's InconsistentAssumptions class: the geometric sums in the digit and residue forms
(``2**m * Sum(2**(d*j), (j, 0, count - 1))``) once used an index declared nonnegative. sympy's
``Sum.doit`` gives its dummy the assumptions both limits share, so a sum whose lower limit is
negative (what sympy's own rewrites of these sums produce: Karr's reversed limits, index shifts)
asked for an index both nonnegative and negative and raised ``InconsistentAssumptions`` out of
``derive_closed``. The index now says only that it is an integer."""

from __future__ import annotations

import pytest
import sympy
from sympy.core.facts import InconsistentAssumptions

from tilec.transforms.multicast import digits

N = sympy.Symbol("n", integer=True, negative=True)
P = sympy.Symbol("p", integer=True, positive=True)
D = sympy.Symbol("D", integer=True, positive=True)


def _sums(j: sympy.Symbol) -> list[sympy.Sum]:
    return [sympy.Sum(2**j, (j, N, -1)), sympy.Sum(2 ** (D * j), (j, -P, -1)),
            sympy.Sum(2 ** (D * j), (j, 0, N - 1)).reverse_order(j)]


def test_a_signed_index_is_the_class():
    """The class itself: with an index declared nonnegative, sympy raises (so the test below
    can fail if the index regains a sign)."""
    j = sympy.Symbol("j", integer=True, nonnegative=True)
    with pytest.raises(InconsistentAssumptions):
        sympy.Sum(2**j, (j, N, -1)).doit()


@pytest.mark.parametrize("k", range(3))
def test_the_forms_index_sums_over_negative_limits(k):
    s = _sums(digits._J)[k]
    got = s.doit()
    # and the value is the sum's (Karr's convention), checked at numbers
    for n, p, d in [(-1, 1, 1), (-3, 2, 2), (-5, 4, 3)]:
        at = {N: n, P: p, D: d}
        want = s.subs(at).doit()
        assert sympy.nsimplify(got.subs(at) - want) == 0


def test_residue_forms_mask_over_symbols_evaluates():
    """The residue form's mask, over a symbolic divisor and cluster size, evaluates (doit,
    simplify) and agrees with the brute-force member set at numbers."""
    top = sympy.Symbol("CS", integer=True, positive=True)
    _, mask, _, count = digits.residue_forms(D, top)
    done = sympy.simplify(mask.doit())
    from tilec.transforms.multicast.table import RANK
    for cs in range(1, 9):
        for d in range(1, cs + 1):
            for r in range(d):
                at = {top: cs, D: d, RANK: r}
                want = sum(1 << m for m in range(r, cs, d))
                assert int(done.subs(at)) == want, (cs, d, r)
                assert int(count.subs(at)) == len(range(r, cs, d))
