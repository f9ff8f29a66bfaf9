"""The one sign check both expression printers make before printing ``floor(a/b)`` and
``Mod(a, b)`` as the target's plain division and remainder (C's ``/`` and ``%``, Triton's ``//``
and ``%`` on integers truncate toward zero): that is floor division only where ``a >= 0`` and
``b > 0`` are proven under the printer's facts; elsewhere a printer emits its sign-aware form.

Before printing, :func:`whole_mods` undoes sympy's rewrite of a remainder into a multiple of a
remainder of a fraction (``Mod((CM+1)*y + CM + 1, 8*(CM+1))`` is evaluated by sympy to
``(CM+1)*Mod(((CM+1)*y + CM + 1)/(CM+1), 8)``): a printer must never print that ``/`` (Triton
evaluates it in fp32); a quotient that remains is printed only where :meth:`ProvenSigns.exact`
proves it exact.

    >>> import sympy
    >>> a, b = sympy.symbols("a b", integer=True, positive=True)
    >>> p = ProvenSigns(None)
    >>> p.reason_about(a // b)
    >>> p.truncation_is_floor(a, b), p.truncation_is_floor(a - 5, b)
    (True, False)
"""

from __future__ import annotations

import sympy

from tilec.proofs import Context, Reasoner
from tilec.proofs.build import is_int, rebuild
from tilec.proofs.expand import expand

__all__ = ["ProvenSigns", "whole_mods"]


def whole_mods(expr: sympy.Basic) -> sympy.Basic:
    """``expr`` with every remainder of a fraction written over integers:
    ``Mod(n/d, m) -> Mod(n, d*m)/d`` (an identity for every ``d != 0``), so that the factor ``d``
    sympy pulled out cancels again.

    >>> CM, y = sympy.symbols("CM y", integer=True, positive=True)
    >>> e = sympy.Mod((CM + 1) * y + CM + 1, 8 * (CM + 1))
    >>> e  # what sympy made of it
    (CM + 1)*(Mod((CM + y*(CM + 1) + 1)/(CM + 1), 8))
    >>> whole_mods(e)
    Mod(CM*y + CM + y + 1, 8*CM + 8)
    """
    if expr.is_Atom or not expr.args:
        return expr
    args = [whole_mods(a) for a in expr.args]
    if isinstance(expr, sympy.Mod) and not is_int(args[0]) and is_int(args[1]):
        num, den = sympy.fraction(sympy.together(args[0]))
        num, den = expand(num), expand(den)  # the builders' expand: sympy's rebuilds nested Mods wrongly
        if den != 1 and is_int(num) and is_int(den):
            return rebuild(expr, [num, den * args[1]]) / den
    if all(a is b for a, b in zip(args, expr.args, strict=True)):
        return expr
    return rebuild(expr, args)


class ProvenSigns:
    """Mixed into a printer: ``reason_about(expr)`` when a print starts, then
    ``truncation_is_floor(num, den)`` per division node."""

    def __init__(self, ctx: Context | None) -> None:
        self._ctx = ctx
        self._signs: Reasoner | None = None

    def reason_about(self, expr: sympy.Basic) -> None:
        """Bounds of ``expr``'s sub-expressions under the printer's facts, kept for the print."""
        self._signs = Reasoner.for_signs_of(sympy.sympify(expr), self._ctx)

    def exact(self, num: sympy.Expr, den: sympy.Expr) -> bool:
        """``den`` divides ``num``, proven (by factorisation or the printer's facts): ``num / den``
        is an integer, the same in every division semantics."""
        r = self._signs or Reasoner.for_signs_of(sympy.Tuple(num, den), self._ctx)
        return is_int(num) and is_int(den) and r.divides(den, num, []) is not None

    def below(self, e: sympy.Expr, bound: int) -> bool:
        """``e < bound`` is proven (a shift ``1 << e`` in ``int`` needs ``e <= 30``)."""
        r = self._signs or Reasoner.for_signs_of(e, self._ctx)
        return r.le(e + 1, sympy.Integer(bound), [])

    def truncation_is_floor(self, num: sympy.Expr, den: sympy.Expr) -> bool:
        """``num >= 0`` and ``den > 0`` proven: truncating division is floor division here."""
        r = self._signs or Reasoner.for_signs_of(sympy.Tuple(num, den), self._ctx)
        return r.positive(den, []) and r.nonneg(num, [])
