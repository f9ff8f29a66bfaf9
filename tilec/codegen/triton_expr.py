"""Sympy -> Triton expression printer.

tilec indices are nonnegative integers and divisors positive constants, so sympy's floor
division and ``Mod`` (floor semantics) equal Triton's ``//`` and ``%`` (C truncation) on them.
The printer emits ``//``/``%`` only for a positive constant divisor and refuses anything else
(an :class:`~tilec.errors.InternalError`: the schedule layers must not hand such expressions over).

Example::

    >>> import sympy
    >>> t = sympy.Symbol("t", integer=True, nonnegative=True)
    >>> TritonExprPrinter({t: "t"}).doprint(sympy.floor(t / 4) * 2 + sympy.Mod(t, 3))
    '(t % 3) + 2*(t // 4)'
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from sympy.printing.str import StrPrinter

from tilec.errors import InternalError, UnsupportedError

__all__ = ["TritonExprPrinter", "print_expr"]


class TritonExprPrinter(StrPrinter):
    """Print integer index expressions (and their comparisons) as Triton scalar code.

    ``names`` maps each free symbol to the Triton variable holding it; any other symbol is
    refused (the kernel could not evaluate it).
    """

    def __init__(self, names: Mapping[sympy.Symbol, str]) -> None:
        super().__init__()
        self._names = dict(names)

    # leaves ------------------------------------------------------------------------------
    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        if expr not in self._names:
            known = ", ".join(sorted(str(s) for s in self._names)) or "none"
            raise UnsupportedError(
                f"triton: expression depends on {expr}, unknown inside the kernel (known: {known})"
            )
        return self._names[expr]

    def _print_Integer(self, expr: sympy.Integer) -> str:
        return str(int(expr))

    def _print_Rational(self, expr: sympy.Rational) -> str:
        raise InternalError(f"triton: non-integer constant {expr} outside floor/ceiling")

    def _print_BooleanTrue(self, expr: sympy.Basic) -> str:
        return "True"

    def _print_BooleanFalse(self, expr: sympy.Basic) -> str:
        return "False"

    # arithmetic ----------------------------------------------------------------------------
    def _print_Mul(self, expr: sympy.Mul) -> str:
        coeff, _ = expr.as_coeff_Mul()
        if not coeff.is_integer:
            raise InternalError(f"triton: non-integer coefficient in {expr}")
        return super()._print_Mul(expr)

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        base, exp = expr.args
        if not (exp.is_Integer and int(exp) > 0):
            raise InternalError(f"triton: cannot print power {expr} as integer arithmetic")
        return "(" + " * ".join([self.parenthesize(base, 100)] * int(exp)) + ")"

    def _divisor(self, den: sympy.Expr, expr: sympy.Expr) -> int | str:
        if not den.is_Integer:
            # A run-time divisor: only the IR's grouped raster makes one (the last group's size
            # Min(G, tiles_m - g*G), which sympy may fold to tiles_m - g*G), positive on every
            # tile the kernel walks. Clamped to 1 so that a tile past the end, masked off anyway,
            # can never divide by zero or a negative (Triton truncates; floor != truncation).
            return f"tl.maximum({self._print(den)}, 1)"
        if int(den) <= 0:
            # Triton's // and % truncate toward zero; floor semantics only hold for b > 0.
            raise InternalError(f"triton: divisor {den} of {expr} is not positive")
        return int(den)

    def _quotient(self, expr: sympy.Expr) -> tuple[sympy.Expr, int | str]:
        num, den = sympy.fraction(sympy.together(expr.args[0]))
        d = self._divisor(den, expr)
        if num.is_negative or num.could_extract_minus_sign():
            # sympy moves a negative divisor's sign into the numerator: floor(a/-b) = floor(-a/b)
            raise InternalError(f"triton: {expr} divides a negative numerator (negative divisor?)")
        return num, d

    def _print_floor(self, expr: sympy.floor) -> str:
        # floor(a/b) -> a // b   (a >= 0, b > 0)
        num, d = self._quotient(expr)
        return self._print(num) if d == 1 else f"({self._operand(num)} // {d})"

    def _print_ceiling(self, expr: sympy.ceiling) -> str:
        # ceiling(a/b) -> (a + b - 1) // b   (a >= 0, b > 0)
        num, d = self._quotient(expr)
        if isinstance(d, str):
            return f"(({self._print(num)} + {d} - 1) // {d})"
        return self._print(num) if d == 1 else f"(({self._print(num)} + {d - 1}) // {d})"

    def _operand(self, e: sympy.Expr) -> str:
        # an operand of // or %: parenthesised unless atomic (// and % bind like *)
        s = self._print(e)
        return s if (e.is_Atom or s.startswith("(")) and not e.is_Add else f"({s})"

    def _print_Mod(self, expr: sympy.Mod) -> str:
        # Mod(a, b) -> a % b   (a >= 0, b > 0)
        a, b = expr.args
        d = self._divisor(b, expr)
        return f"({self._operand(a)} % {d})"

    def _print_Min(self, expr: sympy.Min) -> str:
        return self._fold("tl.minimum", expr.args)

    def _print_Max(self, expr: sympy.Max) -> str:
        return self._fold("tl.maximum", expr.args)

    def _fold(self, fn: str, args: tuple[sympy.Expr, ...]) -> str:
        out = self._print(args[0])
        for a in args[1:]:
            out = f"{fn}({out}, {self._print(a)})"
        return out

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        # Piecewise((a, c), (b, True)) -> tl.where(c, a, b); every branch must be safe to evaluate
        *pieces, (last, last_cond) = expr.args
        if last_cond is not sympy.true:
            raise InternalError(f"triton: Piecewise without a default branch: {expr}")
        out = self._print(last)
        for value, cond in reversed(pieces):
            out = f"tl.where({self._print(cond)}, {self._print(value)}, {out})"
        return out

    # comparisons and logic -----------------------------------------------------------------
    def _print_Relational(self, expr: sympy.core.relational.Relational) -> str:
        return f"({self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)})"

    def _print_And(self, expr: sympy.And) -> str:
        return "(" + " & ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr: sympy.Or) -> str:
        return "(" + " | ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr: sympy.Not) -> str:
        return f"(not {self._print(expr.args[0])})"

    def emptyPrinter(self, expr: object) -> str:
        raise InternalError(f"triton: no printing rule for {type(expr).__name__}: {expr}")


def print_expr(expr: sympy.Basic | int, names: Mapping[sympy.Symbol, str]) -> str:
    """Print ``expr`` with ``names`` for its symbols (ints print as themselves)."""
    return TritonExprPrinter(names).doprint(sympy.sympify(expr))
