"""Oracles for the proofs tests: sampling points that satisfy a context, brute force, z3."""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator, Sequence

import sympy

from tilec.proofs import Context, FactKind, compile_int


def symbols_of(*exprs: sympy.Basic) -> list[sympy.Symbol]:
    out: set[sympy.Symbol] = set()
    for e in exprs:
        out |= e.free_symbols
    return sorted(out, key=lambda s: s.name)


def _is_positive(s: sympy.Symbol, ctx: Context) -> bool:
    return ctx.positive_fact(s) is not None


def points(
    syms: Sequence[sympy.Symbol], ctx: Context, n: int = 1500, hi: int = 7, seed: int = 0
) -> Iterator[dict[sympy.Symbol, int]]:
    """Assignments meeting every fact of ``ctx``: exhaustive when small, else seeded random."""
    checks = [compile_int(f.condition(), list(syms)) for f in ctx.facts]
    ranges = [range(1 if _is_positive(s, ctx) else 0, hi + 1) for s in syms]
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
    fa, fb = compile_int(a, syms), compile_int(b, syms)
    for pt in points(syms, ctx, **kw):
        vals = [pt[s] for s in syms]
        if fa(*vals) != fb(*vals):
            return pt
    return None


def brute_implies(p: sympy.Basic, q: sympy.Basic, ctx: Context, **kw: int) -> dict | None:
    """A point where ``p`` holds and ``q`` does not, or None."""
    syms = symbols_of(p, q)
    fp, fq = compile_int(p, syms), compile_int(q, syms)
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
        solver.add(env[s] >= (1 if _is_positive(s, ctx) else 0))
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
    if isinstance(e, sympy.StrictLessThan):
        return _z3(e.lhs, env) < _z3(e.rhs, env)
    raise TypeError(f"no z3 translation for {e}")
