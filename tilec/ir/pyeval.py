"""Exact integer evaluation of index expressions in Python.

sympy's ``floor(a/b)`` may hold a sum with rational coefficients (``floor(33*i/2 + j/4)``: sympy
distributes numeric divisors); printing it as float division would be wrong for large values.
:class:`IntPrinter` puts every ``floor``/``ceiling`` argument over a common denominator and prints
integer ``//`` (exact for any size), so the compiled function is exact on Python ints.

Example::

    >>> import sympy
    >>> i = sympy.Symbol("i", integer=True, nonnegative=True)
    >>> f = compile_int([sympy.floor(33 * i / 2 + sympy.Rational(1, 4))], [i])
    >>> f(3)
    (49,)
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import sympy
from sympy.printing.pycode import PythonCodePrinter


class IntPrinter(PythonCodePrinter):
    """Python source for integer-valued sympy expressions, with exact ``//`` and ``%``."""

    def _frac(self, arg: sympy.Expr) -> tuple[str, str]:
        # re-evaluate first: together() misreads unevaluated products such as Mul(1/4, Add(..))
        with sympy.evaluate(True):
            num, den = sympy.fraction(sympy.together(arg.doit(deep=True)))
        return self._print(sympy.expand(num)), self._print(den)

    def _print_floor(self, expr: sympy.floor) -> str:
        n, d = self._frac(expr.args[0])
        return f"(({n}) // ({d}))" if d != "1" else f"({n})"

    def _print_ceiling(self, expr: sympy.ceiling) -> str:
        n, d = self._frac(expr.args[0])
        return f"(-((-({n})) // ({d})))" if d != "1" else f"({n})"

    def _print_Mod(self, expr: sympy.Mod) -> str:
        a, b = expr.args
        return f"(({self._print(a)}) % ({self._print(b)}))"

    def _print_Rational(self, expr: sympy.Rational) -> str:
        if expr.q == 1:
            return str(expr.p)
        raise ValueError(f"non-integer constant {expr} in an integer expression")

    def _print_Pow(self, expr: sympy.Pow, rational: bool = False) -> str:
        base, exp = expr.args
        if exp.is_negative:
            raise ValueError(f"negative power {expr} in an integer expression")
        return f"(({self._print(base)}) ** ({self._print(exp)}))"

    def _exact(self, expr: sympy.Expr) -> str | None:
        """An integer-valued sum or product with rational parts (an exact division, e.g.
        ``cidx*(CLUSTER/CN)`` under ``CLUSTER % CN == 0``) as one ``num // den`` over a common
        denominator; never term by term, which would distribute a floor over a sum."""
        if not _has_fraction(expr):
            return None
        with sympy.evaluate(True):
            num, den = sympy.fraction(sympy.together(expr.doit(deep=True)))
        if den == 1:
            return None
        return f"(({self._print(sympy.expand(num))}) // ({self._print(den)}))"

    def _print_Relational(self, expr: sympy.core.relational.Relational) -> str:
        # sympy may rewrite ceiling(N/BN) > x into N/BN > x (true over the reals): compare
        # rationals exactly by clearing the (positive) denominator, never with //
        with sympy.evaluate(True):
            num, den = sympy.fraction(sympy.together((expr.lhs - expr.rhs).doit(deep=True)))
        if den == 1:
            return super()._print_Relational(expr)
        if den.is_positive is not True:
            raise ValueError(f"cannot clear denominator {den} of {expr}: sign unknown")
        op = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}[expr.rel_op]
        return f"(({self._print(sympy.expand(num))}) {op} 0)"

    def _print_Mul(self, expr: sympy.Mul) -> str:
        exact = self._exact(expr)
        return exact if exact is not None else super()._print_Mul(expr)

    def _print_Add(self, expr: sympy.Add, order: Any = None) -> str:
        exact = self._exact(expr)
        return exact if exact is not None else super()._print_Add(expr, order)

    def _print_Min(self, expr: sympy.Min) -> str:
        return "min(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_Max(self, expr: sympy.Max) -> str:
        return "max(" + ", ".join(self._print(a) for a in expr.args) + ")"

    def _print_BooleanTrue(self, expr: Any) -> str:
        return "True"

    def _print_BooleanFalse(self, expr: Any) -> str:
        return "False"

    def _print_Sum(self, expr: sympy.Sum) -> str:
        (var, lo, hi), = expr.limits
        body = self._print(expr.function)
        return (f"sum(({body}) for {self._print(var)} in "
                f"range({self._print(lo)}, ({self._print(hi)}) + 1))")


def _has_fraction(expr: sympy.Basic) -> bool:
    """A non-integer rational or a negative power outside any floor/ceiling/Mod."""
    stack = [expr]
    while stack:
        e = stack.pop()
        if isinstance(e, sympy.Rational) and not isinstance(e, sympy.Integer):
            return True
        if isinstance(e, sympy.Pow) and (e.exp.is_negative or not e.exp.is_integer):
            return True
        if isinstance(e, sympy.floor | sympy.ceiling | sympy.Mod):
            continue
        stack.extend(e.args)
    return False


def compile_int(
    exprs: Sequence[sympy.Basic], args: Sequence[sympy.Symbol]
) -> Callable[..., tuple[Any, ...]]:
    """A Python function of ``args`` returning the exact values of ``exprs`` (ints / bools)."""
    printer = IntPrinter({"fully_qualified_modules": False, "inline": True,
                          "allow_unknown_functions": False})
    names = [str(a) for a in args]
    body = ", ".join(printer.doprint(e) for e in exprs)
    src = f"def _f({', '.join(names)}):\n    return ({body},)\n"
    namespace: dict[str, Any] = {}
    exec(compile(src, "<tilec int eval>", "exec"), namespace)
    fn = namespace["_f"]
    fn.source = src
    return fn
