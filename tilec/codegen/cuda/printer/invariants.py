"""What the schedule's per-tile functions compute from the run-time sizes alone, computed once per
launch: CUTLASS's way of paying for run-time sizes.

Every maximal sub-expression of M, N, K only (``ceiling(N/256)``, ``2*ceiling(N/256)``, a
multicast guard) becomes a field of the kernel's ``Shape`` that ``make_shape`` fills on the host;
a per-tile division or remainder by one of them (``t / (2*TILES_N)``, ``Mod(t/2, TILES_N)``)
uses its ``tilec_fastdiv`` (a multiply-high, an add and a shift; runtime.py) instead of the
~20-instruction integer division the compiler emits for a divisor it cannot see.  The functions
still print from the plan's expressions, their signs proven on the whole expression as before
(:class:`~tilec.codegen.cuda.expr.CudaExprPrinter`): only the printed text of a hoisted part
changes.

Example::

    >>> from tilec.transforms.plan import SIZE_M, SIZE_N
    >>> t = sympy.Symbol("t", integer=True, nonnegative=True)
    >>> inv = Invariants({sympy.ceiling(SIZE_N / 256): "TILES_N"})
    >>> inv.add(sympy.floor(t / (2 * sympy.ceiling(SIZE_N / 256))) + sympy.Mod(t, SIZE_M)
    ...         + t * sympy.ceiling(SIZE_N / 256))
    >>> sorted((n, str(e)) for e, n in inv.fields.items())
    [('M', 'M'), ('SZ0', '2*ceiling(N/256)'), ('TILES_N', 'ceiling(N/256)')]
    >>> sorted(inv.divisors.values())
    ['fd_M', 'fd_SZ0']
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

import sympy
from sympy.logic.boolalg import Boolean

from tilec.codegen.signs import whole_mods
from tilec.proofs import frac
from tilec.proofs.expand import integral_relation

SIZE_NAMES = frozenset({"M", "N", "K"})


def _safe(e: sympy.Basic) -> bool:
    """Every division in ``e`` is by a positive divisor at every size (sympy's assumptions on
    the positive sizes): ``make_shape`` may compute ``e`` at any launch, where the kernel may have
    reached it only behind a condition.

    >>> from tilec.transforms.plan import SIZE_M
    >>> _safe(sympy.ceiling(SIZE_M / 128)), _safe(sympy.Mod(5, sympy.ceiling(SIZE_M / 128) - 1))
    (True, False)
    """
    for d in e.atoms(sympy.floor, sympy.ceiling, sympy.Mod):
        den = frac(d)[1] if isinstance(d, (sympy.floor, sympy.ceiling)) else d.args[1]
        if not (den.is_Number or den.is_positive):
            return False
    return True


class Invariants:
    """The size-only parts of the expressions given to :meth:`add`: ``fields`` (expression ->
    its ``Shape`` field name; ``known`` names first, e.g. the counts make_shape computes anyway)
    and ``divisors`` (a field used as a divisor -> its ``tilec_fastdiv`` field).  Expressions are
    taken as the printer sees them (``whole_mods`` applied; pass them with the kernel's variable
    assumptions, schedule.kernel_vars)."""

    def __init__(self, known: Mapping[sympy.Basic, str] | None = None,
                 sizes: Iterable[str] = SIZE_NAMES) -> None:
        self.known = {whole_mods(sympy.sympify(e)): n for e, n in (known or {}).items()}
        self.sizes = frozenset(sizes)
        self.fields: dict[sympy.Basic, str] = {}
        self.divisors: dict[sympy.Basic, str] = {}
        self.booleans: set[str] = set()  # fields of C type bool (the rest are int)

    def _size_only(self, e: sympy.Basic) -> bool:
        names = {s.name for s in e.free_symbols}
        return bool(names) and names <= self.sizes

    def _field(self, e: sympy.Basic) -> str:
        if e not in self.fields:
            size = e.name if isinstance(e, sympy.Symbol) and e.name in self.sizes else None
            name = size or self.known.get(e) or f"SZ{sum(1 for n in self.fields.values() if n.startswith('SZ'))}"
            self.fields[e] = name
            if isinstance(e, Boolean):
                self.booleans.add(name)
        return self.fields[e]

    def _divisor(self, d: sympy.Expr) -> None:
        if d.is_Number or not self._size_only(d):
            return
        self.divisors.setdefault(d, f"fd_{self._field(d)}")

    def add(self, expr: sympy.Basic) -> None:
        """Collect the size-only parts of ``expr`` (as :class:`CudaExprPrinter` walks it)."""
        self._walk(whole_mods(sympy.sympify(expr)))

    def _walk(self, e: sympy.Basic) -> None:
        if e.is_Atom or not e.args:
            return
        if self._size_only(e) and (e.is_integer or isinstance(e, Boolean)) and _safe(e):
            self._field(e)
            return
        if isinstance(e, (sympy.floor, sympy.ceiling)):
            num, den = frac(e)
            self._divisor(den)
            self._walk(num)
            self._walk(den)
            return
        if isinstance(e, sympy.Mod):
            self._divisor(e.args[1])
        if isinstance(e, sympy.core.relational.Relational):
            r = integral_relation(e)
            self._walk(r.lhs)
            self._walk(r.rhs)
            return
        if isinstance(e, sympy.Mul):
            num, den = sympy.fraction(e)
            if den != 1:
                self._walk(num)
                self._walk(den)
                return
        for a in e.args:
            self._walk(a)

    def hoisted(self) -> list[tuple[str, sympy.Basic]]:
        """(name, expression) of the fields beyond the known ones, in the order found."""
        known = set(self.known.values()) | self.sizes
        return [(n, e) for e, n in self.fields.items() if n not in known]
