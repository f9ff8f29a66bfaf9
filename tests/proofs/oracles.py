"""Oracles for the proofs tests: sampling points that satisfy a context, brute force, z3, and a
Euclidean-mode evaluator (nvFuser's division) written independently of tilec's own."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable, Iterator, Sequence
from fractions import Fraction
from math import ceil, gcd

import sympy

from tilec.proofs import Context, FactKind, compile_int


def scalar(expr: sympy.Basic, syms: Sequence[sympy.Symbol]) -> Callable[..., int | bool]:
    """tilec's exact evaluator for one expression, as a function of ``syms`` returning its value."""
    fn = compile_int([expr], list(syms))
    return lambda *vals: fn(*vals)[0]


def symbols_of(*exprs: sympy.Basic) -> list[sympy.Symbol]:
    out: set[sympy.Symbol] = set()
    for e in exprs:
        out |= e.free_symbols
    return sorted(out, key=lambda s: s.name)


def _is_positive(s: sympy.Symbol, ctx: Context) -> bool:
    return ctx.positive_fact(s) is not None


def _sign_range(s: sympy.Symbol, ctx: Context, hi: int) -> tuple[int, int]:
    """The values ``s`` may take, read from sympy's assumptions and the facts themselves (not from
    the reasoner): a symbol of no known sign ranges over negatives too."""
    about = [f for f in ctx.facts if f.subject == s]
    if s.is_positive or any(f.kind is FactKind.POSITIVE for f in about):
        return 1, hi
    if s.is_nonnegative or any(f.kind in (FactKind.NONNEG, FactKind.BOUND) for f in about):
        return 0, hi  # a bound fact is 0 <= s < upper
    if s.is_negative:
        return -hi, -1
    if s.is_nonpositive:
        return -hi, 0
    return -hi, hi


def points(
    syms: Sequence[sympy.Symbol], ctx: Context, n: int = 1500, hi: int = 7, seed: int = 0
) -> Iterator[dict[sympy.Symbol, int]]:
    """Assignments meeting every fact of ``ctx``: exhaustive when small, else seeded random.  Each
    symbol ranges over what its declaration and the facts allow (negatives where nothing says it
    is nonnegative)."""
    checks = [scalar(f.condition(), syms) for f in ctx.facts]
    ranges = [range(lo, top + 1) for lo, top in (_sign_range(s, ctx, hi) for s in syms)]
    total = 1
    for r in ranges:
        total *= len(r)
    if total <= 4 * n:
        candidates: Iterator[tuple[int, ...]] = itertools.product(*ranges)
    else:
        rng = random.Random(seed)
        candidates = (tuple(rng.choice(r) for r in ranges) for _ in range(40 * n))
    found = 0
    for vals in candidates:
        if all(chk(*vals) for chk in checks):
            yield dict(zip(syms, vals, strict=True))
            found += 1
            if found >= n:
                return


def brute_equal(a: sympy.Basic, b: sympy.Basic, ctx: Context, **kw: int) -> dict | None:
    """A counterexample to ``a == b`` (as a dict) on sampled points, or None."""
    syms = symbols_of(a, b)
    fa, fb = scalar(a, syms), scalar(b, syms)
    for pt in points(syms, ctx, **kw):
        vals = [pt[s] for s in syms]
        if fa(*vals) != fb(*vals):
            return pt
    return None


def brute_implies(p: sympy.Basic, q: sympy.Basic, ctx: Context, **kw: int) -> dict | None:
    """A point where ``p`` holds and ``q`` does not, or None."""
    syms = symbols_of(p, q)
    fp, fq = scalar(p, syms), scalar(q, syms)
    for pt in points(syms, ctx, **kw):
        vals = [pt[s] for s in syms]
        if fp(*vals) and not fq(*vals):
            return pt
    return None


# -- z3 ---------------------------------------------------------------------------------------
def z3_equal(a: sympy.Expr, b: sympy.Expr, ctx: Context, timeout_ms: int = 500) -> bool | None:
    """True if z3 proves ``a == b`` under ctx, False if it finds a counterexample, None if unknown."""
    import z3

    syms = symbols_of(a, b, *(f.condition() for f in ctx.facts))
    env = {s: z3.Int(s.name) for s in syms}
    solver = z3.Solver()
    solver.set("timeout", timeout_ms)
    for s in syms:
        lo, top = _sign_range(s, ctx, 2**62)
        if lo > -(2**62):
            solver.add(env[s] >= lo)
        if top < 2**62:
            solver.add(env[s] <= top)
    for f in ctx.facts:
        if f.kind is not FactKind.NONNEG:
            solver.add(_z3(f.condition(), env))
    solver.add(_z3(a, env) != _z3(b, env))
    res = solver.check()
    if res == z3.unsat:
        return True
    if res == z3.sat:
        return False
    return None


def _z3(e: sympy.Basic, env: dict):  # type: ignore[no-untyped-def]
    import z3

    if e.is_Integer:
        return z3.IntVal(int(e))
    if e.is_Symbol:
        return env[e]
    if isinstance(e, sympy.floor):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        return _z3(num, env) / _z3(den, env)  # z3 Int division is Euclidean
    if isinstance(e, sympy.ceiling):
        num, den = sympy.fraction(sympy.together(e.args[0]))
        return -((-_z3(num, env)) / _z3(den, env))  # ceil for a positive divisor
    if isinstance(e, sympy.Mod):
        return _z3(e.args[0], env) % _z3(e.args[1], env)
    if e.is_Add:
        return z3.Sum(*(_z3(t, env) for t in e.args))
    if e.is_Mul:
        out = _z3(e.args[0], env)
        for t in e.args[1:]:
            out = out * _z3(t, env)
        return out
    if e.is_Pow and e.exp.is_Integer and e.exp > 0:
        out = _z3(e.base, env)
        return z3.Product(*([out] * int(e.exp)))
    if isinstance(e, sympy.Eq):
        return _z3(e.lhs, env) == _z3(e.rhs, env)
    rels = {sympy.StrictLessThan: lambda p, q: p < q, sympy.LessThan: lambda p, q: p <= q,
            sympy.StrictGreaterThan: lambda p, q: p > q, sympy.GreaterThan: lambda p, q: p >= q,
            sympy.Ne: lambda p, q: p != q}
    if type(e) in rels:
        return rels[type(e)](_z3(e.lhs, env), _z3(e.rhs, env))
    if isinstance(e, sympy.Min | sympy.Max):
        out = _z3(e.args[0], env)
        for t in e.args[1:]:
            v = _z3(t, env)
            out = z3.If(v < out, v, out) if isinstance(e, sympy.Min) else z3.If(v > out, v, out)
        return out
    if isinstance(e, sympy.And | sympy.Or):
        return (z3.And if isinstance(e, sympy.And) else z3.Or)(*(_z3(t, env) for t in e.args))
    raise TypeError(f"no z3 translation for {e}")


# -- Euclidean division (nvFuser's), with Fractions ---------------------------------------------
def ediv(a: int, b: int) -> int:
    """Euclidean quotient: ``a == ediv(a, b)*b + emod(a, b)`` with ``0 <= emod(a, b) < |b|``."""
    q = a // b
    return q + 1 if b < 0 and a % b != 0 else q


def emod(a: int, b: int) -> int:
    """Euclidean remainder, always in ``[0, |b|)``."""
    return a - ediv(a, b) * b


class _Euclid:
    """Python source evaluating ``floor(a/b)`` as ``ediv(a, b)`` and ``Mod(a, b)`` as ``emod``;
    rationals as Fractions."""

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
                return f"ediv({self.go(num)}, {self.go(den)})"
            return f"_ceil(Fraction({self.go(num)}, {self.go(den)}))"
        if isinstance(e, sympy.Mod):
            return f"emod({self.go(e.args[0])}, {self.go(e.args[1])})"
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


def euclid_int(expr: sympy.Basic, syms: Sequence[sympy.Symbol]) -> Callable[..., int | bool]:
    """``expr`` as a function of ``syms`` under Euclidean division and remainder.

    >>> i, n = sympy.symbols("i n", integer=True)
    >>> euclid_int(sympy.floor(i / n), [i, n])(7, -3)
    -2
    """
    scope: dict[str, object] = {"Fraction": Fraction, "_ceil": ceil, "_gcd": gcd,
                                "ediv": ediv, "emod": emod}
    args = ", ".join(f"v_{s.name}" for s in syms)
    exec(f"def _f({args}):\n    return {_Euclid().go(expr)}\n", scope)
    return scope["_f"]  # type: ignore[return-value]
