"""Sympy -> Triton expression printer, sign-aware.

sympy's ``floor(a/b)`` and ``Mod(a, b)`` are floor division; Triton's integer ``//`` and ``%``
truncate toward zero, like C.  The two agree only for ``a >= 0`` and ``b > 0``, so the printer emits
``a // b`` and ``a % b`` only where the proofs engine proves both (under the facts it is given; a
symbol that sympy does not know nonnegative counts as signed).  Elsewhere it prints floor division
spelled out with operators whose result is the same in either semantics::

    fmod(a, b) = ((a % b + b) % b)          # in [0, b) for b > 0, in (b, 0] for b < 0
    fdiv(a, b) = ((a - fmod(a, b)) // b)    # an exact division: truncation and floor agree

There are no silent guards: a divisor is printed as it is.  No ``/`` is ever printed (Triton
divides in fp32): a remainder of a fraction that sympy made is written back over integers
(:func:`~tilec.codegen.signs.whole_mods`), and a quotient left in a product is printed as ``//``
only where it is proven exact.

Example::

    >>> import sympy
    >>> t = sympy.Symbol("t", integer=True, nonnegative=True)
    >>> TritonExprPrinter({t: "t"}).doprint(sympy.floor(t / 4) * 2 + sympy.Mod(t, 3))
    '(t % 3) + 2*(t // 4)'
    >>> x = sympy.Symbol("x", integer=True)
    >>> TritonExprPrinter({t: "t", x: "x"}).doprint(sympy.floor((t - x) / 4))
    '((t - x - ((t - x) % 4 + 4) % 4) // 4)'
"""

from __future__ import annotations

from collections.abc import Mapping

import sympy
from sympy.printing.str import StrPrinter

from tilec.codegen.signs import ProvenSigns, whole_mods
from tilec.errors import InternalError, UnsupportedError
from tilec.proofs import Context, frac
from tilec.proofs.expand import integral_relation

__all__ = ["PythonIntPrinter", "TritonExprPrinter", "print_expr"]


class TritonExprPrinter(StrPrinter, ProvenSigns):
    """Print integer index expressions (and their comparisons) as Triton scalar code.

    ``names`` maps each free symbol to the Triton variable holding it; any other symbol is
    refused (the kernel could not evaluate it).  ``ctx`` holds facts (bounds, signs) under which
    the signs of dividends and divisors are proven.
    """

    def __init__(self, names: Mapping[sympy.Symbol, str], ctx: Context | None = None) -> None:
        super().__init__()
        ProvenSigns.__init__(self, ctx)
        self._names = dict(names)

    def doprint(self, expr: sympy.Basic) -> str:  # type: ignore[override]
        expr = whole_mods(sympy.sympify(expr))
        self.reason_about(expr)
        return super().doprint(expr)

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
    # n/d -> n // d   (d divides n, proven: exact, the same under truncation); never n / d
    def _print_Mul(self, expr: sympy.Mul) -> str:
        num, den = sympy.fraction(expr)
        if den != 1:
            if not self.exact(num, den):
                raise InternalError(f"triton: {expr} is not an integer (a division not proven exact)")
            return f"({self._operand(num)} // {self._operand(den)})"
        return super()._print_Mul(expr)

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        base, exp = expr.args
        if not (exp.is_Integer and int(exp) > 0):
            raise InternalError(f"triton: cannot print power {expr} as integer arithmetic")
        return "(" + " * ".join([self.parenthesize(base, 100)] * int(exp)) + ")"

    def _fdiv(self, num: sympy.Expr, den: sympy.Expr) -> str:
        # floor(a/b) -> a // b  (a >= 0, b > 0 proven), else ((a - fmod(a, b)) // b)
        if self.truncation_is_floor(num, den):
            return f"({self._operand(num)} // {self._operand(den)})"
        a, b = self._print(num), self._operand(den)
        return f"(({a} - {self._fmod_text(num, den)}) // {b})"

    def _fmod_text(self, num: sympy.Expr, den: sympy.Expr) -> str:
        b = self._operand(den)
        return f"({self._operand(num)} % {b} + {b}) % {b}"

    def _print_floor(self, expr: sympy.floor) -> str:
        num, den = frac(expr)
        return self._print(num) if den == 1 else self._fdiv(num, den)

    def _print_ceiling(self, expr: sympy.ceiling) -> str:
        # ceiling(a/b) -> (a + b - 1) // b  (a >= 0, b > 0 proven), else -floor(-a/b)
        num, den = frac(expr)
        if den == 1:
            return self._print(num)
        if self.truncation_is_floor(num, den):
            return f"(({self._print(num + den - 1)}) // {self._operand(den)})"
        return f"(-{self._fdiv(-num, den)})"

    def _operand(self, e: sympy.Expr) -> str:
        # an operand of // or %: parenthesised unless atomic (// and % bind like *)
        s = self._print(e)
        if (e.is_Atom and not (e.is_Number and e < 0)) or isinstance(e, sympy.Min | sympy.Max):
            return s
        return s if s.startswith("(") and s.endswith(")") and _balanced(s[1:-1]) else f"({s})"

    def _print_Mod(self, expr: sympy.Mod) -> str:
        # Mod(a, b) -> a % b  (a >= 0, b > 0 proven), else ((a % b + b) % b)
        a, b = expr.args
        if self.truncation_is_floor(a, b):
            return f"({self._operand(a)} % {self._operand(b)})"
        return f"({self._fmod_text(a, b)})"

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
        expr = integral_relation(expr)  # x < 125/16 is printed as 16*x - 125 < 0
        return f"({self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)})"

    def _print_And(self, expr: sympy.And) -> str:
        return "(" + " & ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr: sympy.Or) -> str:
        return "(" + " | ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr: sympy.Not) -> str:
        return f"(not {self._print(expr.args[0])})"

    def emptyPrinter(self, expr: object) -> str:
        raise InternalError(f"triton: no printing rule for {type(expr).__name__}: {expr}")


def _balanced(s: str) -> bool:
    depth = 0
    for ch in s:
        depth += {"(": 1, ")": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def print_expr(expr: sympy.Basic | int, names: Mapping[sympy.Symbol, str], ctx: Context | None = None) -> str:
    """Print ``expr`` with ``names`` for its symbols (ints print as themselves), proving signs
    under ``ctx``."""
    return TritonExprPrinter(names, ctx).doprint(sympy.sympify(expr))


class PythonIntPrinter(StrPrinter):
    """Print integer expressions of the sizes as plain Python for the launcher: Python's ``//``
    and ``%`` are floor division, sympy's semantics, so nothing depends on signs.

    >>> M = sympy.Symbol("M", integer=True, positive=True)
    >>> e = sympy.Piecewise((sympy.ceiling(M / 16), sympy.Mod(M, 4) > 0), (sympy.Min(M, 3), True))
    >>> PythonIntPrinter({M: "M"}).doprint(e)
    '(-(-M // 16) if ((M % 4) > 0) else min(3, M))'
    """

    def __init__(self, names: Mapping[sympy.Symbol, str]) -> None:
        super().__init__()
        self._names = dict(names)

    def _print_Symbol(self, expr: sympy.Symbol) -> str:
        if expr not in self._names:
            raise UnsupportedError(f"launcher: expression depends on {expr}, unknown to the "
                                   f"launcher (known: {', '.join(map(str, self._names))})")
        return self._names[expr]

    def _print_Integer(self, expr: sympy.Integer) -> str:
        return str(int(expr))

    def _print_Rational(self, expr: sympy.Rational) -> str:
        raise InternalError(f"launcher: non-integer constant {expr} outside floor/ceiling")

    def _print_Mul(self, expr: sympy.Mul) -> str:
        coeff, _ = expr.as_coeff_Mul()
        if not coeff.is_integer:
            raise InternalError(f"launcher: non-integer coefficient in {expr}")
        return super()._print_Mul(expr)

    def _operand(self, e: sympy.Expr) -> str:
        s = self._print(e)
        return s if e.is_Atom and not (e.is_Number and e < 0) else f"({s})"

    def _print_floor(self, expr: sympy.floor) -> str:
        num, den = frac(expr)
        return self._print(num) if den == 1 else f"({self._operand(num)} // {self._operand(den)})"

    def _print_ceiling(self, expr: sympy.ceiling) -> str:
        num, den = frac(expr)
        return self._print(num) if den == 1 else f"-(-{self._operand(num)} // {self._operand(den)})"

    def _print_Mod(self, expr: sympy.Mod) -> str:
        a, b = expr.args
        return f"({self._operand(a)} % {self._operand(b)})"

    def _print_Min(self, expr: sympy.Min) -> str:
        return f"min({', '.join(self._print(a) for a in expr.args)})"

    def _print_Max(self, expr: sympy.Max) -> str:
        return f"max({', '.join(self._print(a) for a in expr.args)})"

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        *pieces, (last, last_cond) = expr.args
        if last_cond is not sympy.true:
            raise InternalError(f"launcher: Piecewise without a default branch: {expr}")
        out = self._print(last)
        for value, cond in reversed(pieces):
            out = f"({self._print(value)} if {self._print(cond)} else {out})"
        return out

    def _print_Relational(self, expr: sympy.core.relational.Relational) -> str:
        op = "==" if expr.rel_op == "==" else expr.rel_op
        return f"({self._print(expr.lhs)} {op} {self._print(expr.rhs)})"

    def _print_And(self, expr: sympy.And) -> str:
        return "(" + " and ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr: sympy.Or) -> str:
        return "(" + " or ".join(self._print(a) for a in expr.args) + ")"

    def _print_Not(self, expr: sympy.Not) -> str:
        return f"(not {self._print(expr.args[0])})"

    def _print_BooleanTrue(self, expr: sympy.Basic) -> str:
        return "True"

    def _print_BooleanFalse(self, expr: sympy.Basic) -> str:
        return "False"

    def emptyPrinter(self, expr: object) -> str:
        raise InternalError(f"launcher: no printing rule for {type(expr).__name__}: {expr}")
