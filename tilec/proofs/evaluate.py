"""Exact integer evaluation of index expressions and conditions (the oracle for brute-force checks).

``compile_int(expr, syms)`` turns a sympy expression into a Python function of integers that
evaluates ``floor(a/b)`` as ``a // b`` and ``Mod(a, b)`` as ``a % b`` (Python's floor semantics,
which are sympy's), or with ``euclid=True`` as Euclidean division and remainder (nvFuser's).

Example:
    >>> import sympy
    >>> i, n = sympy.symbols("i n", integer=True)
    >>> compile_int(sympy.floor(i / n) * n + sympy.Mod(i, n), [i, n])(-7, 3)
    -7
    >>> compile_int(sympy.floor(i / n), [i, n], euclid=True)(7, -3)
    -2
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from fractions import Fraction
from math import ceil, gcd

import sympy


def ediv(a: int, b: int) -> int:
    """Euclidean quotient: ``a == ediv(a, b)*b + emod(a, b)`` with ``0 <= emod(a, b) < |b|``."""
    q = a // b
    return q + 1 if b < 0 and a % b != 0 else q


def emod(a: int, b: int) -> int:
    """Euclidean remainder, always in ``[0, |b|)``."""
    return a - ediv(a, b) * b


def _fdiv(a: int, b: int) -> int:
    return a // b


def _fmod(a: int, b: int) -> int:
    return a % b


class _Compiler:
    def __init__(self) -> None:
        self.helpers: dict[str, object] = {"Fraction": Fraction, "_ceil": ceil, "_gcd": gcd}

    def go(self, e: sympy.Basic) -> str:
        if e is sympy.true:
            return "True"
        if e is sympy.false:
            return "False"
        if e.is_Integer:
            return f"({int(e)})"
        if e.is_Rational:
            return f"Fraction({e.p}, {e.q})"
        if e.is_Symbol:
            return f"v_{e.name}"
        if isinstance(e, sympy.floor | sympy.ceiling):
            num, den = sympy.fraction(sympy.together(e.args[0]))
            if isinstance(e, sympy.floor):
                return f"_div({self.go(num)}, {self.go(den)})"
            return f"_ceil(Fraction({self.go(num)}, {self.go(den)}))"
        if isinstance(e, sympy.Mod):
            return f"_mod({self.go(e.args[0])}, {self.go(e.args[1])})"
        if e.is_Add:
            return "(" + " + ".join(self.go(a) for a in e.args) + ")"
        if e.is_Mul:
            num, den = sympy.fraction(e)
            if den != 1:
                return f"Fraction({self.go(num)}, {self.go(den)})"
            return "(" + " * ".join(self.go(a) for a in e.args) + ")"
        if e.is_Pow and e.exp.is_Integer:
            if e.exp >= 0:
                return f"({self.go(e.base)} ** {int(e.exp)})"
            return f"Fraction(1, {self.go(e.base)} ** {-int(e.exp)})"
        if isinstance(e, sympy.Abs):
            return f"abs({self.go(e.args[0])})"
        if isinstance(e, sympy.Max | sympy.Min):
            return f"{type(e).__name__.lower()}({', '.join(self.go(a) for a in e.args)})"
        if type(e).__name__ == "Gcd":
            return f"_gcd({self.go(e.args[0])}, {self.go(e.args[1])})"
        ops = {sympy.Eq: "==", sympy.Ne: "!=", sympy.Lt: "<", sympy.Le: "<=", sympy.Gt: ">", sympy.Ge: ">="}
        for cls, op in ops.items():
            if isinstance(e, cls):
                return f"({self.go(e.lhs)} {op} {self.go(e.rhs)})"
        if isinstance(e, sympy.And | sympy.Or):
            op = " and " if isinstance(e, sympy.And) else " or "
            return "(" + op.join(self.go(a) for a in e.args) + ")"
        if isinstance(e, sympy.Not):
            return f"(not {self.go(e.args[0])})"
        if isinstance(e, sympy.Implies):
            return f"((not {self.go(e.args[0])}) or {self.go(e.args[1])})"
        if isinstance(e, sympy.Equivalent):
            parts = [self.go(a) for a in e.args]
            return "(" + " == ".join(f"bool({p})" for p in parts) + ")"
        raise TypeError(f"cannot evaluate {type(e).__name__}: {e}")


def compile_int(
    expr: sympy.Basic, syms: Sequence[sympy.Symbol], euclid: bool = False
) -> Callable[..., int | bool]:
    """A Python function of ``syms`` (positional integers) computing ``expr`` exactly.

    Raises ``ZeroDivisionError`` at a point where some divisor is 0.
    """
    comp = _Compiler()
    body = comp.go(expr)
    args = ", ".join(f"v_{s.name}" for s in syms)
    scope: dict[str, object] = dict(comp.helpers)
    scope["_div"], scope["_mod"] = (ediv, emod) if euclid else (_fdiv, _fmod)
    exec(f"def _f({args}):\n    return {body}\n", scope)
    return scope["_f"]  # type: ignore[return-value]
