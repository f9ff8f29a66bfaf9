"""The one sign check both expression printers make before printing ``floor(a/b)`` and
``Mod(a, b)`` as the target's plain division and remainder (C's ``/`` and ``%``, Triton's ``//``
and ``%`` on integers truncate toward zero): that is floor division only where ``a >= 0`` and
``b > 0`` are proven under the printer's facts; elsewhere a printer emits its sign-aware form.

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

__all__ = ["ProvenSigns"]


class ProvenSigns:
    """Mixed into a printer: ``reason_about(expr)`` when a print starts, then
    ``truncation_is_floor(num, den)`` per division node."""

    def __init__(self, ctx: Context | None) -> None:
        self._ctx = ctx
        self._signs: Reasoner | None = None

    def reason_about(self, expr: sympy.Basic) -> None:
        """Bounds of ``expr``'s sub-expressions under the printer's facts, kept for the print."""
        self._signs = Reasoner.for_signs_of(sympy.sympify(expr), self._ctx)

    def truncation_is_floor(self, num: sympy.Expr, den: sympy.Expr) -> bool:
        """``num >= 0`` and ``den > 0`` proven: truncating division is floor division here."""
        r = self._signs or Reasoner.for_signs_of(sympy.Tuple(num, den), self._ctx)
        return r.positive(den, []) and r.nonneg(num, [])
