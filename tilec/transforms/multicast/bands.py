"""A grouped raster's bands: the group size ``Min(G, X - G*floor(t/(G*W)))`` of the last band
read as ``G`` where every band is full, or the grid as one band, under the fact that says so."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

import sympy

from tilec.proofs import Fact, FactKind, simplify
from tilec.transforms.multicast.records import AlivePart
from tilec.transforms.multicast.table import RANK, holds_at, value_at

if TYPE_CHECKING:
    from tilec.transforms.multicast.proof import _Row
    from tilec.transforms.multicast.records import OperandMulticast


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
            if holds_at(x, g, values):  # every band full: the group size is G
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

    for f in b.atoms(sympy.floor):
        x = sympy.expand(b + g * f)
        xv, gv = value_at(x, values), value_at(g, values)
        if x.free_symbols & variables or xv is None or gv is None or not (
                holds_at(x, g, values) or 0 < xv <= gv):
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
            if ub is None or c.free_symbols & variables or not (c.is_positive or ((
                    value_at(c, values) or 0) > 0 and c.free_symbols <= set(values))):
                ok = False
                break
            if isinstance(ub, sympy.ceiling):
                p, r = ub.args[0].as_numer_denom()
                if not holds_at(p, r, values):
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
