"""Exact integer evaluation of index expressions in Python.

sympy's ``floor(a/b)`` may hold a sum with rational coefficients (``floor(33*i/2 + j/4)``: sympy
distributes numeric divisors); printing it as float division would be wrong for large values.
:func:`compile_int` walks the tree itself, carrying every subexpression as ``num / den`` over
Python ints, and prints integer ``//`` and ``%`` (exact for any size); it does no sympy arithmetic,
so compiling costs no assumption queries. :class:`IntPrinter` (sympy's code printer, with the
same exact rules) prints the node types the walk does not know.

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
    names = [str(a) for a in args]
    body = ", ".join(int_source(e) for e in exprs)
    src = f"def _f({', '.join(names)}):\n    return ({body},)\n"
    namespace: dict[str, Any] = {}
    exec(compile(src, "<tilec int eval>", "exec"), namespace)
    fn = namespace["_f"]
    fn.source = src
    return fn


def int_source(expr: sympy.Basic) -> str:
    """Python source for the exact value of an integer- or bool-valued expression.

    A direct walk over the tree (no sympy arithmetic, so no assumption queries): every
    subexpression is carried as ``num / den`` over Python ints, floors become ``//`` on the
    numerator and denominator, relations compare ``num * den`` with 0 (the same sign as
    ``num / den``, whatever the sign of ``den``). Node types the walk does not know go through
    :class:`IntPrinter`.

        >>> i, n = sympy.symbols("i n", integer=True, positive=True)
        >>> int_source(sympy.floor(i / n) + sympy.Mod(i, 4))
        '(((i) % (4)) + ((((i))) // ((n))))'
    """
    if isinstance(expr, sympy.logic.boolalg.Boolean) and not isinstance(expr, sympy.Symbol):
        return _bool(expr)
    return _int(expr)


_IntSource = tuple[str, "str | None"]  # value == num / den; den None means 1


def _int(e: sympy.Basic) -> str:
    n, d = _rat(e)
    return n if d is None else f"({n}) // ({d})"


def _mul(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return f"{a} * {b}"


def _rat(e: sympy.Basic) -> _IntSource:
    if e.is_Integer:
        return (str(e.p) if e.p >= 0 else f"({e.p})"), None
    if e.is_Rational:
        return f"({e.p})", str(e.q)
    if e.is_Symbol:
        return str(e), None
    if e.is_Add:
        groups: dict[str | None, list[str]] = {}
        for a in e.args:
            n, d = _rat(a)
            groups.setdefault(d, []).append(n)
        if list(groups) == [None]:
            return "(" + " + ".join(groups[None]) + ")", None
        dens = list(groups)
        parts = []
        for d, ns in groups.items():
            others = None
            for o in dens:
                if o != d:
                    others = _mul(others, f"({o})" if o is not None else None)
            total = "(" + " + ".join(ns) + ")"
            parts.append(total if others is None else f"{total} * {others}")
        common: str | None = None
        for d in dens:
            common = _mul(common, f"({d})" if d is not None else None)
        return "(" + " + ".join(parts) + ")", common
    if e.is_Mul:
        num: str | None = None
        den: str | None = None
        for a in e.args:
            n, d = _rat(a)
            num = num if n == "1" else _mul(num, f"({n})")
            den = _mul(den, f"({d})" if d is not None else None)
        return f"({num})" if num else "1", den
    if e.is_Pow and e.exp.is_Integer:
        n, d = _rat(e.base)
        k = int(e.exp)
        if k < 0:
            n, d, k = (d or "1"), n, -k
        if k == 1:
            return n, d
        return f"(({n}) ** {k})", (f"(({d}) ** {k})" if d is not None else None)
    if isinstance(e, sympy.floor):
        n, d = _rat(e.args[0])
        return (n if d is None else f"(({n}) // ({d}))"), None
    if isinstance(e, sympy.ceiling):
        n, d = _rat(e.args[0])
        return (n if d is None else f"(-((-({n})) // ({d})))"), None
    if isinstance(e, sympy.Mod):
        (n1, d1), (n2, d2) = _rat(e.args[0]), _rat(e.args[1])
        if d1 is None and d2 is None:
            return f"(({n1}) % ({n2}))", None
        # a - b*floor(a/b), over the denominator d1*d2
        a, b = _mul(f"({n1})", d2 and f"({d2})"), _mul(f"({n2})", d1 and f"({d1})")
        return f"({a} - {b} * (({a}) // ({b})))", _mul(d1 and f"({d1})", d2 and f"({d2})")
    if isinstance(e, sympy.Piecewise):
        if any(isinstance(val, sympy.logic.boolalg.Boolean) and not val.is_Symbol
               for val, _ in e.args):
            out = "None"
            for val, cond in reversed(e.args):
                v = _bool(val) if isinstance(val, sympy.logic.boolalg.Boolean) else _int(val)
                out = v if cond is sympy.true else f"({v} if {_bool(cond)} else {out})"
            return out, None
        # each branch as num / den: a rational branch (floor(Piecewise((1/3, c), ...) * x))
        # must not be floored before it is multiplied
        branches = [(_rat(val), cond) for val, cond in e.args]
        rational = any(d is not None for (_, d), _ in branches)
        num, den = "None", "None"
        for (n, d), cond in reversed(branches):
            d = d or "1"
            if cond is sympy.true:
                num, den = n, d
            else:
                c = _bool(cond)
                num, den = f"({n} if {c} else {num})", f"({d} if {c} else {den})"
        return num, (den if rational else None)
    if isinstance(e, sympy.Min | sympy.Max) and all(a.is_integer for a in e.args):
        fn = "min" if isinstance(e, sympy.Min) else "max"
        return f"{fn}(" + ", ".join(_int(a) for a in e.args) + ")", None
    if isinstance(e, sympy.Sum) and len(e.limits) == 1:
        (var, lo, hi), = e.limits
        return (f"sum({_int(e.function)} for {var} in range({_int(lo)}, {_int(hi)} + 1))",
                None)
    return f"({_fallback(e)})", None


_REL = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _bool(e: sympy.Basic) -> str:
    if e is sympy.true:
        return "True"
    if e is sympy.false:
        return "False"
    if isinstance(e, sympy.core.relational.Relational) and e.rel_op in _REL:
        (n1, d1), (n2, d2) = _rat(e.lhs), _rat(e.rhs)
        if d1 is None and d2 is None:
            return f"({n1} {_REL[e.rel_op]} {n2})"
        # n1/d1 - n2/d2 has the sign of (n1*d2 - n2*d1) * d1*d2
        diff = f"({_mul(f'({n1})', d2 and f'({d2})')} - {_mul(f'({n2})', d1 and f'({d1})')})"
        den = _mul(d1 and f"({d1})", d2 and f"({d2})")
        return f"({diff} * {den} {_REL[e.rel_op]} 0)"
    if isinstance(e, sympy.And):
        return "(" + " and ".join(_bool(a) for a in e.args) + ")"
    if isinstance(e, sympy.Or):
        return "(" + " or ".join(_bool(a) for a in e.args) + ")"
    if isinstance(e, sympy.Not):
        return f"(not {_bool(e.args[0])})"
    return f"({_fallback(e)})"


def _fallback(e: sympy.Basic) -> str:
    printer = IntPrinter({"fully_qualified_modules": False, "inline": True,
                          "allow_unknown_functions": False})
    return printer.doprint(e)
