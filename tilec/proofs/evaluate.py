"""The exact integer evaluator of tilec: index expressions, predicates and conditions at points.

One walk over the sympy tree prints Python source that computes the value exactly, with
sympy's (Python's) floor semantics: ``floor(a/b)`` is ``a // b``, ``Mod(a, b)`` is ``a % b``
(the sign of ``b``), ``ceiling(a/b)`` is ``-(-a // b)``.  sympy may hold a floor of a sum with
rational coefficients (``floor(33*i/2 + j/4)``: it distributes numeric divisors), so every
subexpression is carried as ``num / den`` over integers and divided only where a floor,
ceiling or Mod asks; relations compare ``num * den`` with 0 (the sign of ``num / den``, whatever
the sign of ``den``).  The walk does no sympy arithmetic, so compiling costs no assumption
queries, and compiled functions are memoised by content.

Two entry points share the walk:

- :func:`compile_int` -- a Python function of ints (arbitrary size) returning a tuple of values;
- :func:`evaluate_grid` -- the same expression over numpy int64 arrays (``floor_divide`` and
  ``mod`` are floor semantics too; no float ever), for point grids such as a warp's lanes.

numpy is imported by the grid path only: a process that evaluates at points (``tilec masks``)
does not pay for it.

Example::

    >>> import numpy as np
    >>> i, n = sympy.symbols("i n", integer=True)
    >>> compile_int([sympy.floor(33 * i / 2 + sympy.Rational(1, 4)), sympy.Mod(i, n)], [i, n])(3, -2)
    (49, -1)
    >>> evaluate_grid(sympy.floor(i / n) * n + sympy.Mod(i, n), [i, n], [np.arange(-3, 3), 4])
    array([-3, -2, -1,  0,  1,  2])
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import sympy

from .cache import CONTENT

if TYPE_CHECKING:
    import numpy as np

IntValue = int | bool | None
"""An exact value: an int, a bool for a condition, None where no branch of a Piecewise holds."""
IntFunction = Callable[..., tuple[IntValue, ...]]
"""What :func:`compile_int` returns: a function of ints (by position) to a tuple of exact values."""
GridFunction = Callable[..., "np.ndarray | int | bool"]

_Num = tuple[str, "str | None"]  # value == num / den; den None means 1
_REL = {"==": "==", "!=": "!=", "<": "<", "<=": "<=", ">": ">", ">=": ">="}


def _mul(a: str | None, b: str | None) -> str | None:
    if a is None:
        return b
    if b is None:
        return a
    return f"{a} * {b}"


def _par(s: str | None) -> str | None:
    return None if s is None else f"({s})"


class _Walk:
    """Python source for one expression; ``grid`` prints numpy-array operations instead of
    ``min``/``max``/``and``/``or``/``not``/conditional expressions (``//``, ``%``, ``**`` and
    comparisons are the same text for both)."""

    def __init__(self, grid: bool) -> None:
        self.grid = grid

    # -- integer and boolean values --------------------------------------------------------
    def value(self, e: sympy.Basic) -> str:
        if isinstance(e, sympy.logic.boolalg.Boolean) and not isinstance(e, sympy.Symbol):
            return self.bool(e)
        return self.int(e)

    def int(self, e: sympy.Basic) -> str:
        n, d = self.rat(e)
        return n if d is None else f"(({n}) // ({d}))"

    def rat(self, e: sympy.Basic) -> _Num:
        if e.is_Integer:
            return (str(e.p) if e.p >= 0 else f"({e.p})"), None
        if e.is_Rational:
            return f"({e.p})", str(e.q)
        if e.is_Symbol:
            return str(e), None
        if e in (sympy.nan, sympy.zoo, sympy.oo, -sympy.oo):
            # a formula undefined where it is never used (0/0 of an empty region): an error only
            # if evaluated
            return f"_undefined({str(e)!r})", None
        if e.is_Add:
            return self._add(e)
        if e.is_Mul:
            num: str | None = None
            den: str | None = None
            for a in e.args:
                n, d = self.rat(a)
                num = num if n == "1" else _mul(num, f"({n})")
                den = _mul(den, _par(d))
            return (f"({num})" if num else "1"), den
        if e.is_Pow and e.exp.is_Integer:
            n, d = self.rat(e.base)
            k = int(e.exp)
            if k < 0:
                n, d, k = (d or "1"), n, -k
            if k == 1:
                return n, d
            return f"(({n}) ** {k})", (f"(({d}) ** {k})" if d is not None else None)
        if e.is_Pow:  # a symbolic exponent (2**rank): an integer power of an integer base
            return f"_ipow({self.int(e.base)}, {self.int(e.exp)})", None
        if isinstance(e, sympy.floor):
            return self.int(e.args[0]), None
        if isinstance(e, sympy.ceiling):
            n, d = self.rat(e.args[0])
            return (n if d is None else f"(-((-({n})) // ({d})))"), None
        if isinstance(e, sympy.Mod):
            (n1, d1), (n2, d2) = self.rat(e.args[0]), self.rat(e.args[1])
            if d1 is None and d2 is None:
                return f"(({n1}) % ({n2}))", None
            # a - b*floor(a/b), over the denominator d1*d2
            a, b = _mul(f"({n1})", _par(d2)), _mul(f"({n2})", _par(d1))
            return f"({a} - {b} * (({a}) // ({b})))", _mul(_par(d1), _par(d2))
        if isinstance(e, sympy.Piecewise):
            return self._piecewise(e)
        if isinstance(e, sympy.Min | sympy.Max):
            return self._minmax(e)
        if isinstance(e, sympy.Abs):
            n, d = self.rat(e.args[0])
            return f"abs({n})", (None if d is None else f"abs({d})")
        if type(e).__name__ in ("Gcd", "gcd") and len(e.args) == 2:
            return f"_gcd({self.int(e.args[0])}, {self.int(e.args[1])})", None
        if isinstance(e, sympy.Sum) and len(e.limits) == 1 and not self.grid:
            (var, lo, hi), = e.limits
            return (f"sum({self.int(e.function)} for {var} in "
                    f"range({self.int(lo)}, {self.int(hi)} + 1))"), None
        if isinstance(e, sympy.logic.boolalg.Boolean) and not isinstance(e, sympy.Symbol):
            return self.bool(e), None  # a condition used as 0/1
        raise TypeError(f"cannot evaluate {type(e).__name__} {e}"
                        + (" over a grid" if self.grid else "") + " as an exact integer")

    def _add(self, e: sympy.Add) -> _Num:
        groups: dict[str | None, list[str]] = {}
        for a in e.args:
            n, d = self.rat(a)
            groups.setdefault(d, []).append(n)
        if list(groups) == [None]:
            return "(" + " + ".join(groups[None]) + ")", None
        dens = list(groups)
        parts = []
        for d, ns in groups.items():
            others = None
            for o in dens:
                if o != d:
                    others = _mul(others, _par(o))
            total = "(" + " + ".join(ns) + ")"
            parts.append(total if others is None else f"{total} * {others}")
        common: str | None = None
        for d in dens:
            common = _mul(common, _par(d))
        return "(" + " + ".join(parts) + ")", common

    def _minmax(self, e: sympy.Min | sympy.Max) -> _Num:
        fn = "_min" if isinstance(e, sympy.Min) else "_max"
        parts = [self.rat(a) for a in e.args]
        if all(d is None for _, d in parts):
            return f"{fn}(" + ", ".join(n for n, _ in parts) + ")", None
        # over the common positive denominator prod(d_j**2): n_i/d_i == n_i*d_i*prod_{j!=i} d_j**2 / D
        squares = [None if d is None else f"({d}) * ({d})" for _, d in parts]
        nums = []
        for i, (n, d) in enumerate(parts):
            t = _mul(f"({n})", _par(d))
            for j, sq in enumerate(squares):
                if j != i:
                    t = _mul(t, _par(sq))
            nums.append(t or "1")
        den = None
        for sq in squares:
            den = _mul(den, _par(sq))
        return f"{fn}(" + ", ".join(nums) + ")", den

    def _piecewise(self, e: sympy.Piecewise) -> _Num:
        if any(isinstance(v, sympy.logic.boolalg.Boolean) and not v.is_Symbol for v, _ in e.args):
            vals = [self.value(v) for v, _ in e.args]
            return self._choose(vals, e), None
        # each branch as num / den: a rational branch (floor(Piecewise((1/3, c), ...) * x))
        # must not be floored before it is multiplied
        branches = [self.rat(v) for v, _ in e.args]
        num = self._choose([n for n, _ in branches], e)
        if all(d is None for _, d in branches):
            return num, None
        return num, self._choose([d or "1" for _, d in branches], e)

    def _choose(self, vals: list[str], e: sympy.Piecewise) -> str:
        conds = [c for _, c in e.args]
        if self.grid:
            cs = ", ".join(self.bool(c) for c in conds)
            return f"_select(({cs},), ({', '.join(vals)},))"
        out = "None"
        for v, c in reversed(list(zip(vals, conds, strict=True))):
            out = v if c is sympy.true else f"({v} if {self.bool(c)} else {out})"
        return out

    def bool(self, e: sympy.Basic) -> str:
        if e is sympy.true:
            return "True"
        if e is sympy.false:
            return "False"
        if isinstance(e, sympy.Symbol):
            return str(e)
        if isinstance(e, sympy.core.relational.Relational) and e.rel_op in _REL:
            (n1, d1), (n2, d2) = self.rat(e.lhs), self.rat(e.rhs)
            if d1 is None and d2 is None:
                return f"({n1} {_REL[e.rel_op]} {n2})"
            # n1/d1 - n2/d2 has the sign of (n1*d2 - n2*d1) * d1*d2
            diff = f"({_mul(f'({n1})', _par(d2))} - {_mul(f'({n2})', _par(d1))})"
            den = _mul(_par(d1), _par(d2))
            return f"({diff} * {den} {_REL[e.rel_op]} 0)"
        if isinstance(e, sympy.And | sympy.Or):
            parts = [self.bool(a) for a in e.args]
            if self.grid:
                fn = "_and" if isinstance(e, sympy.And) else "_or"
                return f"{fn}(" + ", ".join(parts) + ")"
            return "(" + (" and " if isinstance(e, sympy.And) else " or ").join(parts) + ")"
        if isinstance(e, sympy.Not):
            return self._not(self.bool(e.args[0]))
        if isinstance(e, sympy.Implies):
            p, q = (self.bool(a) for a in e.args)
            return f"_or({self._not(p)}, {q})" if self.grid else f"((not {p}) or {q})"
        if isinstance(e, sympy.Equivalent):
            parts = [self.bool(a) for a in e.args]
            if self.grid:
                return "_and(" + ", ".join(f"({parts[0]}) == ({p})" for p in parts[1:]) + ")"
            return "(" + " == ".join(f"bool({p})" for p in parts) + ")"
        if isinstance(e, sympy.Piecewise):
            return self._choose([self.bool(v) for v, _ in e.args], e)
        raise TypeError(f"cannot evaluate {type(e).__name__} {e} as a condition")

    def _not(self, p: str) -> str:
        return f"_np.logical_not({p})" if self.grid else f"(not {p})"


def int_source(expr: sympy.Basic) -> str:
    """Python source for the exact value of an integer- or bool-valued expression.

        >>> i, n = sympy.symbols("i n", integer=True, positive=True)
        >>> int_source(sympy.floor(i / n) + sympy.Mod(i, 4))
        '(((i) % (4)) + ((((i))) // ((n))))'
    """
    return _Walk(grid=False).value(sympy.sympify(expr))


def compile_int(exprs: Sequence[sympy.Basic | int], args: Sequence[sympy.Symbol]) -> IntFunction:
    """A Python function of ``args`` (ints, by position) returning the exact values of
    ``exprs`` (ints / bools) as a tuple; memoised by content.  Symbols are matched by name.
    A zero divisor raises ``ZeroDivisionError``; a Piecewise no branch of which holds gives None.

        >>> x = sympy.Symbol("x", integer=True)
        >>> compile_int([sympy.floor(x / 3), sympy.Lt(x, 0)], [x])(-7)
        (-3, True)
    """
    key = (tuple(sympy.sympify(e) for e in exprs), tuple(str(a) for a in args))
    fn: IntFunction = CONTENT.compiled.get_or(key, lambda: _compiled(*key))
    return fn


def _compiled(exprs: tuple[sympy.Basic, ...], names: tuple[str, ...]) -> IntFunction:
    walk = _Walk(grid=False)
    body = ", ".join(walk.value(e) for e in exprs)
    result = f"({body},)" if exprs else "()"
    src = f"def _f({', '.join(names)}):\n    return {result}\n"
    namespace: dict[str, Any] = {"_min": min, "_max": max, "_gcd": math.gcd, "_ipow": _ipow,
                                 "_undefined": _undefined}
    exec(compile(src, "<tilec int eval>", "exec"), namespace)
    fn = namespace["_f"]
    fn.source = src
    return fn


def _undefined(what: str) -> NoReturn:
    raise ValueError(f"the expression is {what} (undefined) here: not an integer")


def _ipow(base: Any, exp: Any) -> Any:
    """``base ** exp`` for a non-negative integer exponent (never a float)."""
    if not isinstance(exp, int):  # numpy values: the grid's check
        return _ipow_grid(base, exp)
    if exp < 0:
        raise ValueError(f"negative exponent {exp} in an integer expression")
    return base ** exp


def _ipow_grid(base: Any, exp: Any) -> Any:
    """:func:`_ipow` over arrays."""
    import numpy as np

    if np.any(np.asarray(exp) < 0):
        raise ValueError(f"negative exponent {exp} in an integer expression")
    return base ** exp


def _select(conds: tuple[Any, ...], vals: tuple[Any, ...]) -> np.ndarray:
    """The first value whose condition holds, per point; every point must have one."""
    import numpy as np

    shape = np.broadcast_shapes(*(np.shape(c) for c in conds), *(np.shape(v) for v in vals))
    cs = [np.broadcast_to(c, shape) for c in conds]
    hit = functools.reduce(np.logical_or, cs)
    if not np.all(hit):
        raise ValueError("a Piecewise has no branch that holds at some point of the grid")
    choices = [np.broadcast_to(np.asarray(v), shape) for v in vals]
    return np.select(cs, choices, default=choices[-1])  # the default keeps the values' dtype


def _grid_scope() -> dict[str, Any]:
    import numpy as np

    return {
        "_np": np, "_select": _select, "_gcd": np.gcd, "_ipow": _ipow_grid,
        "_undefined": _undefined,
        "_min": lambda *a: functools.reduce(np.minimum, a),
        "_max": lambda *a: functools.reduce(np.maximum, a),
        "_and": lambda *a: functools.reduce(np.logical_and, a),
        "_or": lambda *a: functools.reduce(np.logical_or, a),
    }


def _compiled_grid(expr: sympy.Basic, names: tuple[str, ...]) -> GridFunction:
    src = f"def _g({', '.join(names)}):\n    return {_Walk(grid=True).value(expr)}\n"
    namespace = dict(_grid_scope())
    exec(compile(src, "<tilec grid eval>", "exec"), namespace)
    fn = namespace["_g"]
    fn.source = src
    return fn


def evaluate_grid(expr: sympy.Basic | int, syms: Sequence[sympy.Symbol],
                  arrays: Sequence[np.ndarray | int]) -> np.ndarray:
    """``expr`` at every point of a grid: ``arrays[i]`` holds the values of ``syms[i]`` (numpy
    integer arrays or ints, broadcast together).  Exact int64 arithmetic with floor semantics
    (the values of :func:`compile_int` wherever they fit in int64); an int64 array, or a bool
    array for a condition, of the broadcast shape.  A zero divisor raises ``ZeroDivisionError``.

        >>> import numpy as np
        >>> t = sympy.Symbol("t", integer=True)
        >>> evaluate_grid(sympy.Piecewise((t // 2, t < 3), (-t, True)), [t], [np.arange(6)])
        array([ 0,  0,  1, -3, -4, -5])
    """
    import numpy as np

    if len(syms) != len(arrays):
        raise ValueError(f"evaluate_grid: {len(syms)} symbols but {len(arrays)} arrays")
    e = sympy.sympify(expr)
    vals = [np.asarray(a, dtype=np.int64) for a in arrays]
    shape = np.broadcast_shapes(*(v.shape for v in vals))
    key = (e, tuple(str(s) for s in syms))
    fn: GridFunction = CONTENT.compiled_grid.get_or(key, lambda: _compiled_grid(*key))
    with np.errstate(divide="raise", invalid="raise"):
        try:
            out = np.asarray(fn(*vals))
        except FloatingPointError as err:
            raise ZeroDivisionError(f"evaluate_grid: a divisor of {e} is 0 at some point") from err
    dtype = bool if out.dtype == np.bool_ else np.int64
    return np.broadcast_to(out.astype(dtype, copy=False), shape)
