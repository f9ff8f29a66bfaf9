"""The launch table: every CTA of one launch at every loop point, by brute force over the ranks
(the definition the closed forms are checked against), the symbols a derivation's expressions
use, and parameter expressions evaluated exactly at a launch.

Example::

    >>> import sympy
    >>> M = sympy.Symbol("M", integer=True, positive=True)
    >>> value_at(sympy.ceiling(M / 4), {M: 10}), holds_at(M, 5, {M: 10})
    (3, True)
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Iterator
from typing import Any, NamedTuple

import sympy

from tilec.ir import index_symbol
from tilec.ir.types import MulticastMode
from tilec.proofs.build import subst
from tilec.proofs.evaluate import compile_int
from tilec.transforms.memo import TRANSFORMS

RANK = index_symbol("rank")


R1, R2 = index_symbol("r1"), index_symbol("r2")


_R = index_symbol("r")


# the names a derivation's expressions use for its own variables: a schedule parameter may not
# take one of them (its symbol would be the same sympy symbol)
RESERVED = ("rank", "r1", "r2", "r", "j", "t")


class Row(NamedTuple):
    """One CTA at one loop point of the launch (a tuple: a launch has thousands of rows, and a
    frozen dataclass takes ten times as long to build)."""

    point: dict[str, int]  # the variables (i_rt, cidx, ...) and rank
    alive: bool
    issue: bool
    mask: int
    slice_index: int | None
    slice_count: int | None


def _points(variables: tuple[sympy.Symbol, ...], bounds: dict[sympy.Symbol, int]
            ) -> Iterator[tuple[int, ...]]:
    return itertools.product(*[range(int(bounds[v])) for v in variables])


def launch_values(bounds: dict[sympy.Symbol, sympy.Expr], variables: tuple[sympy.Symbol, ...],
                  values: dict[sympy.Symbol, int]) -> tuple[list[sympy.Symbol], list[int],
                                                            dict[sympy.Symbol, int]]:
    """The parameters as arguments, their values, and each variable's concrete extent."""
    psyms = sorted(values, key=str)
    pvals = [values[p] for p in psyms]
    ext = compile_int([bounds[v] for v in variables], psyms)(*pvals)
    return psyms, pvals, dict(zip(variables, ext, strict=True))


def launch_table(mode: MulticastMode, origin: dict[str, sympy.Expr], alive: sympy.Boolean,
           variables: tuple[sympy.Symbol, ...], bounds: dict[sympy.Symbol, sympy.Expr],
           values: dict[sympy.Symbol, int], cs: int) -> list[Row]:
    """Every (variables, rank) of the concrete launch, by brute force over ranks."""
    psyms, pvals, ext = launch_values(bounds, variables, values)
    # the origin only where the CTA is alive: at a padded tile an order's index maps may divide
    # by an extent that is zero there (a grouped raster's last band past the tile rows)
    alive_at = functools.partial(compile_int([alive], [*psyms, RANK, *variables]), *pvals)
    origin_at = functools.partial(compile_int([*origin.values()], [*psyms, RANK, *variables]),
                                  *pvals)
    keys = (*[str(v) for v in variables], "rank")
    sliced = mode is MulticastMode.SLICED
    rows: list[Row] = []
    ranks = range(cs)
    for point in _points(variables, ext):
        # the alive ranks by their box origin: a group is the ranks of one origin, in order
        live = [bool(alive_at(r, *point)[0]) for r in ranks]
        groups: dict[tuple[Any, ...], list[int]] = {}
        for r in ranks:
            if live[r]:
                groups.setdefault(origin_at(r, *point), []).append(r)
        member: dict[int, tuple[int, int, int]] = {}  # rank -> (its index, group mask, size)
        for group in groups.values():
            mask = sum(1 << q for q in group)
            member.update((q, (i, mask, len(group))) for i, q in enumerate(group))
        for r in ranks:
            at = dict(zip(keys, (*point, r), strict=True))
            if live[r]:
                i, mask, n = member[r]
                rows.append(Row(at, True, sliced or i == 0, mask, i, n))
            else:
                rows.append(Row(at, False, False, 0, 0, 0))
    return rows


def same_box(origin: dict[str, sympy.Expr], a: sympy.Expr, b: sympy.Expr) -> sympy.Boolean:
    """Origins equal for ranks ``a`` and ``b``, left unevaluated (what ``xreplace`` and ``Eq``
    build under ``sympy.evaluate(False)``, without toggling that flag: each toggle clears
    sympy's cache)."""
    return sympy.And(*[sympy.Eq(subst(e, {RANK: a}), subst(e, {RANK: b}), evaluate=False)
                       for e in origin.values()])


def _general(origin: dict[str, sympy.Expr], alive: sympy.Boolean, cs: int
             ) -> tuple[sympy.Boolean, sympy.Boolean, sympy.Expr, sympy.Expr, sympy.Expr]:
    # built unevaluated: these are printed and compiled, never simplified (and sympy's
    # canonicalisation of Piecewise over floor/Mod costs seconds)
    with sympy.evaluate(False):
        same = sympy.And(same_box(origin, R1, R2), alive.xreplace({RANK: R1}),
                         alive.xreplace({RANK: R2}))
        same_r = same.xreplace({R1: _R, R2: RANK})
        before = sympy.Sum(sympy.Piecewise((1, sympy.And(same_r, sympy.Lt(_R, RANK))), (0, True)),
                           (_R, 0, cs - 1))
        issue = sympy.And(alive, sympy.Eq(before, 0))
        mask = sympy.Sum(sympy.Piecewise((2**_R, same_r), (0, True)), (_R, 0, cs - 1))
        count = sympy.Sum(sympy.Piecewise((1, same_r), (0, True)), (_R, 0, cs - 1))
    return same, issue, mask, before, count


def value_at(expr: sympy.Expr, values: dict[sympy.Symbol, int]) -> int | None:
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


def _evaluator(expr: sympy.Expr) -> tuple[list[sympy.Symbol], Any]:
    """The parameters of ``expr`` and its compiled exact value (a derivation asks for the values
    of the same few divisors many times)."""
    def make() -> tuple[list[sympy.Symbol], Any]:
        syms = sorted(expr.free_symbols, key=str)
        return syms, compile_int([expr], syms)

    out: tuple[list[sympy.Symbol], Any] = TRANSFORMS.multicast_evaluators.get_or(expr, make)
    return out


def holds_at(c: sympy.Expr, d: sympy.Expr, values: dict[sympy.Symbol, int]) -> bool:
    cv, dv = value_at(c, values), value_at(d, values)
    return cv is not None and dv is not None and dv != 0 and cv % dv == 0
