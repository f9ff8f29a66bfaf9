"""Sympy -> CUDA C expression printer for schedule index arithmetic.

tilec indices are nonnegative integers and divisors positive; C's ``/`` and ``%`` truncate toward
zero, which equals Python's floor semantics only on nonnegative operands.  This printer emits
``a / b`` for ``floor(a/b)`` and ``a % b`` for ``Mod(a, b)`` only where the proofs engine proves the
dividend nonnegative and the divisor positive (under the facts it is given; a symbol that sympy does
not know nonnegative counts as signed); otherwise it calls the floor-semantics helpers
``tilec_floordiv`` / ``tilec_mod`` that the generated file defines.  Everything is printed in
``int`` arithmetic; powers of two become shifts (``1 << t`` where ``t <= 30`` is proven, else the
64-bit ``1LL << t``: ``2**31`` does not fit an ``int``); ``Sum`` with numeric bounds is folded to a
constant, otherwise printed as an immediately-invoked lambda loop.

``wide=True`` prints for 64-bit evaluation: the caller declares the expression's variables
``long long`` (so every product and sum that involves one is 64-bit), literals past ``int`` get
an ``LL`` suffix, and the helpers called are the ``*64`` ones.  :func:`magnitude` tells when an
expression needs it: a bound of every value C computes on the way to the result.

Example::

    >>> import sympy
    >>> from tilec.proofs import Context
    >>> r = sympy.Symbol("rank", integer=True, nonnegative=True)
    >>> CudaExprPrinter().doprint((2**2 - 1) * 2**(2 * sympy.floor(r / 2)))
    '3*(1LL << (2*(rank / 2)))'
    >>> CudaExprPrinter(ctx=Context().bound(r, 16)).doprint((2**2 - 1) * 2**(2 * sympy.floor(r / 2)))
    '3*(1 << (2*(rank / 2)))'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import sympy
from sympy.printing.c import C99CodePrinter

from tilec.codegen.signs import ProvenSigns, whole_mods
from tilec.errors import InternalError
from tilec.proofs import Context, frac
from tilec.proofs.expand import integral_relation


class CudaExprPrinter(C99CodePrinter, ProvenSigns):
    """C printer for integer/boolean schedule expressions (int arithmetic, no Python % leaks)."""

    printmethod = "_cudacode"
    language = "CUDA"

    def __init__(self, settings: dict[str, Any] | None = None, ctx: Context | None = None,
                 wide: bool = False, fields: Mapping[sympy.Basic, str] | None = None,
                 divisors: Mapping[sympy.Basic, str] | None = None) -> None:
        super().__init__(settings or {})
        ProvenSigns.__init__(self, ctx)
        self._wide = wide
        self._sfx = "64" if wide else ""  # the helpers of the arithmetic's width
        # sub-expressions computed once per launch (:class:`Invariants`): printed as their
        # names; a divisor among them divides by its ``tilec_fastdiv``
        self._fields = dict(fields or {})
        self._divisors = dict(divisors or {})

    def _print(self, expr: Any, **kwargs: Any) -> str:
        if self._fields and isinstance(expr, sympy.Basic) and expr in self._fields:
            return self._fields[expr]
        return super()._print(expr, **kwargs)

    def _fast(self, den: sympy.Expr) -> str | None:
        """The ``tilec_fastdiv`` of run-time divisor ``den`` (the dividend proven nonnegative
        and ``den`` positive by the caller), else None."""
        return self._divisors.get(den)

    def doprint(self, expr: Any, assign_to: Any = None) -> str:
        expr = whole_mods(sympy.sympify(expr))
        self.reason_about(expr)
        return super().doprint(expr, assign_to)

    # --- atoms -------------------------------------------------------------------------------
    def _print_Integer(self, expr: sympy.Integer) -> str:
        v = int(expr)
        if -(2**31) <= v < 2**31:
            return str(v)
        if self._wide and -(2**63) <= v < 2**63:
            return f"{v}LL"
        raise InternalError(f"integer literal {v} does not fit a {64 if self._wide else 32}-bit int")

    def _print_Rational(self, expr: sympy.Rational) -> str:
        raise InternalError(f"non-integer rational {expr} outside floor(): not an index expression")

    def _print_Float(self, expr: sympy.Float) -> str:
        raise InternalError(f"float {expr} in an index expression")

    def _print_BooleanTrue(self, expr: Any) -> str:
        return "true"

    def _print_BooleanFalse(self, expr: Any) -> str:
        return "false"

    # --- division ----------------------------------------------------------------------------
    # floor(n/d) -> n / d   (n >= 0, d > 0 proven)
    def _print_floor(self, expr: sympy.floor) -> str:
        num, den = frac(expr)
        if den == 1:
            return self._print(num)
        if self.truncation_is_floor(num, den):
            if fd := self._fast(den):
                return f"{fd}.div{self._sfx}({self._print(num)})"
            return f"({self.parenthesize(num, 50)} / {self.parenthesize(den, 50)})"
        return f"tilec_floordiv{self._sfx}({self._print(num)}, {self._print(den)})"

    # ceiling(n/d) -> (n + d - 1) / d   (n >= 0, d > 0 proven)
    def _print_ceiling(self, expr: sympy.ceiling) -> str:
        num, den = frac(expr)
        if den == 1:
            return self._print(num)
        if self.truncation_is_floor(num, den):
            if fd := self._fast(den):
                return f"{fd}.div{self._sfx}({self._print(num)} + {fd}.d - 1)"
            return f"(({self._print(num)} + {self.parenthesize(den - 1, 50)}) / {self.parenthesize(den, 50)})"
        return f"(-tilec_floordiv{self._sfx}(-({self._print(num)}), {self._print(den)}))"

    # Mod(a, b) -> a % b   (a >= 0, b > 0 proven)
    def _print_Mod(self, expr: sympy.Mod) -> str:
        a, b = expr.args
        if self.truncation_is_floor(a, b):
            if fd := self._fast(b):
                return f"{fd}.mod{self._sfx}({self._print(a)})"
            return f"({self.parenthesize(a, 50)} % {self.parenthesize(b, 50)})"
        return f"tilec_mod{self._sfx}({self._print(a)}, {self._print(b)})"

    # n/d -> n / d   (d divides n, proven: exact, the same under truncation)
    def _print_Mul(self, expr: sympy.Mul) -> str:
        num, den = sympy.fraction(expr)
        if den != 1:
            if not self.exact(num, den):
                raise InternalError(f"{expr} is not an integer (a division not proven exact)")
            return f"({self.parenthesize(num, 50)} / {self.parenthesize(den, 50)})"
        return super()._print_Mul(expr)

    # 2**e -> 1 << e where e <= 30 is proven (an int), else 1LL << e (a long long) ;
    # c**k (numeric k >= 0) -> repeated product
    def _print_Pow(self, expr: sympy.Pow) -> str:
        base, exp = expr.args
        if base == 2:
            if exp.is_Integer:
                return self._print(sympy.Integer(2) ** exp)
            one = "1" if self.below(exp, 31) else "1LL"
            return f"({one} << ({self._print(exp)}))"
        if exp.is_Integer and int(exp) >= 0:
            if int(exp) == 0:
                return "1"
            return "(" + "*".join([self.parenthesize(base, 50)] * int(exp)) + ")"
        raise InternalError(f"power {expr} is not an integer index expression")

    def _print_Min(self, expr: sympy.Min) -> str:
        out = self._print(expr.args[0])
        for a in expr.args[1:]:
            out = f"tilec_min{self._sfx}({out}, {self._print(a)})"
        return out

    def _print_Max(self, expr: sympy.Max) -> str:
        out = self._print(expr.args[0])
        for a in expr.args[1:]:
            out = f"tilec_max{self._sfx}({out}, {self._print(a)})"
        return out

    # Sum(f, (j, lo, hi)) -> constant when it folds, else a loop in a lambda
    def _print_Sum(self, expr: sympy.Sum) -> str:
        done = expr.doit()
        if not done.has(sympy.Sum) and done.is_Integer:
            return self._print(done)
        body = expr.function
        out = self._print(body)
        for var, lo, hi in expr.limits:
            v = self._print(var)
            out = (
                f"([&]() {{ {'long long' if self._wide else 'int'} s_ = 0; for (int {v} = {self._print(lo)}; {v} <= {self._print(hi)}; ++{v}) "
                f"s_ += {out}; return s_; }}())"
            )
        return out

    def _print_Piecewise(self, expr: sympy.Piecewise) -> str:
        if expr.args[-1].cond != sympy.true:
            raise InternalError(f"Piecewise without an otherwise branch: {expr}")
        out = self._print(expr.args[-1].expr)
        for e, c in reversed(expr.args[:-1]):
            out = f"(({self._print(c)}) ? ({self._print(e)}) : ({out}))"
        return out

    # relations and logic: always fully parenthesised
    def _print_Relational(self, expr: sympy.core.relational.Relational) -> str:
        expr = integral_relation(expr)  # x < 125/16 is printed as 16*x - 125 < 0
        return f"({self._print(expr.lhs)} {expr.rel_op} {self._print(expr.rhs)})"

    def _print_Not(self, expr: sympy.Not) -> str:
        return f"(!{self._print(expr.args[0])})"

    def _print_And(self, expr: sympy.And) -> str:
        return "(" + " && ".join(self._print(a) for a in expr.args) + ")"

    def _print_Or(self, expr: sympy.Or) -> str:
        return "(" + " || ".join(self._print(a) for a in expr.args) + ")"


def cexpr(expr: sympy.Basic | int | bool, ctx: Context | None = None, wide: bool = False) -> str:
    """Print one schedule expression as C (``int``/``bool``, or 64-bit with ``wide``), proving
    signs under ``ctx``."""
    return CudaExprPrinter(ctx=ctx, wide=wide).doprint(sympy.sympify(expr))


INT_MAX = 2**31 - 1


def nonneg_symbols(expr: sympy.Basic) -> sympy.Basic:
    """Kernel variables are nonnegative integers by construction: say so for the printer.

    >>> cexpr(nonneg_symbols(sympy.floor(sympy.Symbol("t") / 4)))
    '(t / 4)'
    """
    sub = {s: sympy.Symbol(s.name, integer=True, nonnegative=True) for s in expr.free_symbols}
    return expr.xreplace(sub)


def magnitude(expr: sympy.Basic | int, bounds: Mapping[str, int]) -> int:
    """A bound of the absolute value of every intermediate C computes for ``expr`` as
    :class:`CudaExprPrinter` prints it, each variable ``v`` in ``[0, bounds[v.name]]``: above
    :data:`INT_MAX`, the expression must be printed ``wide`` over ``long long`` variables.

    ``floor(a/b)`` is printed over its integer numerator (``floor(i/2 + 1/3)`` as
    ``(3*i + 2) / 6``), so that numerator is what is bounded (plus the divisor: a ceiling
    adds it).

    >>> i = sympy.Symbol("i", integer=True, nonnegative=True)
    >>> magnitude(sympy.floor(((i + 1) * 132 - 1) / 262144), {"i": 262143})
    34865151
    >>> magnitude(sympy.Min(i - 5, 7), {"i": 10}), magnitude(sympy.Mod(i, 3), {"i": 10})
    (15, 10)
    """
    e = sympy.sympify(expr)
    if isinstance(e, (sympy.floor, sympy.ceiling)):
        num, den = frac(e)
        return magnitude(num, bounds) + magnitude(den, bounds)  # ceiling prints num + den - 1
    if e.is_Integer or e.is_Rational:
        return int(abs(sympy.ceiling(abs(e))))
    if isinstance(e, sympy.Symbol):
        if e.name not in bounds:
            raise InternalError(f"magnitude: no bound for variable {e.name} in {expr}")
        return bounds[e.name]
    if e in (sympy.true, sympy.false):
        return 1
    if isinstance(e, sympy.Add):
        return sum(magnitude(a, bounds) for a in e.args)
    if isinstance(e, sympy.Mul):
        out = 1
        for a in e.args:
            out *= max(magnitude(a, bounds), 1)
        return out
    if isinstance(e, sympy.Pow) and e.exp.is_Integer and int(e.exp) >= 0:
        return max(magnitude(e.base, bounds), 1) ** int(e.exp)
    if isinstance(e, sympy.Pow) and e.base == 2:
        return 2 ** magnitude(e.exp, bounds)
    if isinstance(e, sympy.core.relational.Relational):
        r = integral_relation(e)
        return max(magnitude(r.lhs, bounds), magnitude(r.rhs, bounds))
    if isinstance(e, sympy.Piecewise):
        return max(max(magnitude(x, bounds), magnitude(c, bounds)) for x, c in e.args)
    if isinstance(e, (sympy.Mod, sympy.Min, sympy.Max, sympy.And, sympy.Or, sympy.Not)):
        return max(magnitude(a, bounds) for a in e.args)
    raise InternalError(f"magnitude: cannot bound {type(e).__name__} in {expr}")
