"""The rank's tile index cut at the rank's grouping, for the proofs of the sharing and of the
alive predicates: which divisibility facts hold at this launch is the derivation's to say; the
cut itself is the proof engine's (its directed rules, :data:`tilec.proofs.BY_DIVISOR`, applied
by :func:`tilec.proofs.rewrite_by`, each step checking its side conditions).

Example::

    >>> import sympy
    >>> from tilec.proofs import Context
    >>> N, BN, CN = sympy.symbols("N BN CN", integer=True, positive=True)
    >>> res = cut_at_grouping(sympy.floor(RANK / sympy.ceiling(N / BN)), [CN], Context(),
    ...                       {N: 64, BN: 8, CN: 2})
    >>> res.expr, res.trace.theorems(), res.facts_used
    (floor(floor(rank/CN)/floor(ceiling(N/BN)/CN)), ['2.11'], ['ceiling(N/BN) % CN == 0'])
"""

from __future__ import annotations

import sympy

from tilec.proofs import Context, Result, frac, rewrite_by
from tilec.transforms.multicast.table import RANK, holds_at

__all__ = ["BOUND_BY", "CUTS_BY", "cut_at_grouping"]

BOUND_BY = "2.16 i < E -> i/d < E/d"
CUTS_BY = ("2.11 a/d -> (a/b)/(d/b)", "2.12 a%d -> a%b + ((a/b)%(d/b))*b")


def cut_at_grouping(e: sympy.Basic, groupings: list[sympy.Expr], ctx: Context,
                    values: dict[sympy.Symbol, int]) -> Result:
    """``e`` with each divisor ``D`` of the rank's tile index cut by the first rank grouping
    ``g`` that divides it at this launch (the fact ``D % g == 0`` stated in ``ctx``, where it
    stays): ``x/D -> (x/g)/(D/g)`` (2.11) and ``x%D -> x%g + ((x/g)%(D/g))*g`` (2.12). The rank
    then stays in ``x/g`` and ``x%g``, where the facts on the other summands drop the loop
    variables (2.15.1, 2.7.1): a cluster that never straddles a tile row shares that row.
    Returns the engine's :class:`~tilec.proofs.Result` (no step: nothing to cut)."""
    for node in sympy.postorder_traversal(e):  # the order the engine visits them
        if not isinstance(node, sympy.floor | sympy.Mod):
            continue
        x, d = frac(node) if isinstance(node, sympy.floor) else node.args
        if RANK in x.free_symbols and RANK not in d.free_symbols:
            g = next((g for g in groupings if g != d and holds_at(d, g, values)), None)
            if g is not None:
                ctx.divisible(d, g)
    return rewrite_by(e, ctx, CUTS_BY, groupings, holding=frozenset({RANK}))
