"""What would close it: the single divisibility facts about the parameters, false at this launch,
under which an operand's sharing becomes uniform (a closed form exists), each with the nearest
launch that meets it and the form it gives there (``tilec explain``'s suggestions). The forms and
proofs themselves are :mod:`.closed`'s."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

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
    from tilec.transforms.multicast.records import OperandMulticast


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
                 if (m := _nearest(c, d, p, values, max(search, values[p]))) is not None]
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


def _nearest(c: sympy.Expr, d: sympy.Expr, p: sympy.Symbol, values: dict[sympy.Symbol, int],
             search: int) -> dict[sympy.Symbol, int] | None:
    """The launch nearest to ``values`` with ``c % d == 0``, moving only ``p``."""
    v = values[p]
    for step in range(1, search + 1):
        for nv in (v + step, v - step):
            if nv >= 1:
                moved = {**values, p: nv}
                if holds_at(c, d, moved):
                    return moved
    return None
