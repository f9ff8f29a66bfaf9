"""Benchmark: how many *true* equalities ``prove_eq`` proves, per family (issue 18).

Each family is a seeded sample of equalities that hold for every assignment of the context
(checked here by brute force before they count).  Families:

* ``1.1``:        ``X == p*(X/p) + X%p``                          (division with remainder)
* ``2.12``:       ``X%(b*c) == X%b + b*((X/b)%c)``                (the expanded mixed-radix remainder)
* ``nested``:     recombinations of two or three nested splits, e.g.
                  ``X == X%b + b*((X/b)%c) + b*c*(X/(b*c))``, ``(X/b)/c == X/(b*c)``,
                  ``(X/b)%c == (X%(b*c))/b``, with the digits in any order
* ``ceil.1``:     ``ceil(X/b) == (X + b - 1)/b``
* ``gemm``:       the GEMM index equalities the second audit (issue 28) found unproved, each under
                  its own facts: ``ceil(M/b) == (M - 1)/b + 1`` (M >= 1), ``b*ceil(M/b) == M`` given
                  ``M % b == 0``, a nested ceil-div against its floor form, the grouped raster's
                  ``min(num_m - first_m, G) == G`` given ``first_m + G <= num_m``, recombination by a
                  divisor that is a sum (``(x/(a+1))*(a+1) + x%(a+1) == x``), persistent-tile
                  recombinations that need ``SMs % CN == 0``

``X`` ranges over index-like dividends (sums of scaled symbols, remainders, quotients), ``p, b, c``
over positive divisors (numbers, symbols, products).  ``prove_eq`` must never prove a false equality
(tests/proofs/test_soundness.py checks that); here only the true ones are asked.

    python bench/bench_proof_completeness.py [--n 120] [--out bench/results/proof_completeness.json]
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import random
import time
from pathlib import Path

import sympy
from sympy import Mod, ceiling, floor

from tilec.proofs import Context, compile_int, prove_eq

x, y, r, t = sympy.symbols("x y r t", integer=True, nonnegative=True)
CM, CN, P = sympy.symbols("CM CN P", integer=True, positive=True)
M, A, G, SMS, NUM_M, FIRST_M = sympy.symbols("M A G SMs num_m first_m", integer=True, positive=True)
CTX = Context().bound(r, CN)
DIVISORS = [sympy.Integer(k) for k in (2, 3, 4, 8, 16, 132)] + [CN, CM, P, CM * CN, 2 * CN]


def dividend(rng: random.Random) -> sympy.Expr:
    forms = [
        lambda: x,
        lambda: x + y,
        lambda: CN * x + r,
        lambda: 4 * x + 3 * y + 1,
        lambda: Mod(x, rng.choice(DIVISORS)),
        lambda: floor(x / rng.choice(DIVISORS)),
        lambda: t * P + x,
        lambda: CM * floor(x / CN) + y,
    ]
    return rng.choice(forms)()


def family_1_1(rng: random.Random) -> tuple[sympy.Expr, sympy.Expr]:
    X, p = dividend(rng), rng.choice(DIVISORS)
    return X, p * floor(X / p) + Mod(X, p)


def family_2_12(rng: random.Random) -> tuple[sympy.Expr, sympy.Expr]:
    X, b, c = dividend(rng), rng.choice(DIVISORS), rng.choice(DIVISORS)
    return Mod(X, b * c), Mod(X, b) + b * Mod(floor(X / b), c)


def family_nested(rng: random.Random) -> tuple[sympy.Expr, sympy.Expr]:
    X = dividend(rng)
    b, c, d = (rng.choice(DIVISORS) for _ in range(3))
    kind = rng.randrange(5)
    if kind == 0:  # two splits and the outer quotient
        terms = [Mod(X, b), b * Mod(floor(X / b), c), b * c * floor(X / (b * c))]
        rng.shuffle(terms)
        return X, sympy.Add(*terms)
    if kind == 1:  # three digits
        terms = [Mod(X, b), b * Mod(floor(X / b), c), b * c * Mod(floor(X / (b * c)), d)]
        rng.shuffle(terms)
        return Mod(X, b * c * d), sympy.Add(*terms)
    if kind == 2:
        return floor(floor(X / b) / c), floor(X / (b * c))
    if kind == 3:
        return Mod(floor(X / b), c), floor(Mod(X, b * c) / b)
    # split-split of a merged index (IterDomain 2.1), with the quotient nested
    return X, Mod(X, b) + b * Mod(floor(X / b), c) + b * c * floor(floor(X / b) / c)


def family_ceil_1(rng: random.Random) -> tuple[sympy.Expr, sympy.Expr]:
    X, b = dividend(rng), rng.choice(DIVISORS)
    return ceiling(X / b), floor((X + b - 1) / b)


def family_gemm(rng: random.Random) -> tuple[sympy.Expr, sympy.Expr, list[sympy.Basic]]:
    b, c = rng.choice(DIVISORS), rng.choice([sympy.Integer(k) for k in (2, 4, 8)] + [CM, P])
    s = rng.choice([A + 1, A + CN, 2 * A + 1, CN + 1])  # a divisor that is a sum
    X = rng.choice([x, CN * x + r, M, x + y])
    kind = rng.randrange(8)
    if kind == 0:
        return ceiling(M / b), floor((M - 1) / b) + 1, []
    if kind == 1:
        return b * ceiling(M / b), M, [sympy.Eq(Mod(M, b), 0)]
    if kind == 2:
        return ceiling(ceiling(M / b) / c), floor((M + b * c - 1) / (b * c)), []
    if kind == 3:
        return ceiling(ceiling(M / b) / c), ceiling(M / (b * c)), []
    if kind == 4:
        return sympy.Min(NUM_M - FIRST_M, G), G, [sympy.Le(FIRST_M + G, NUM_M)]
    if kind == 5:
        terms = [floor(X / s) * s, Mod(X, s)]
        rng.shuffle(terms)
        return sympy.Add(*terms), X, []
    if kind == 6:
        return Mod(X, s) + s * Mod(floor(X / s), c) + s * c * floor(X / (s * c)), X, []
    persistent = [sympy.Eq(Mod(SMS, CN), 0)]
    return rng.choice([
        (CN * floor((t * SMS + r) / CN) + Mod(r, CN), t * SMS + r, persistent),
        (CN * floor((t * SMS + r) / CN) + Mod(t * SMS + r, CN), t * SMS + r, persistent),
        (floor((t * SMS + CN * y + r) / CN), t * floor(SMS / CN) + y, persistent),
        (CN * (t * floor(SMS / CN) + y) + r, t * SMS + CN * y + r, persistent),
    ])


FAMILIES = {"1.1": family_1_1, "2.12": family_2_12, "nested": family_nested, "ceil.1": family_ceil_1,
            "gemm": family_gemm}


def holds(a: sympy.Expr, b: sympy.Expr, given: list[sympy.Basic], samples: int = 300, seed: int = 0) -> bool:
    """``a == b`` at ``samples`` random points meeting ``CTX``'s facts and the ``given`` conditions
    (and at least one such point)."""
    conds = [f.condition() for f in CTX.facts] + list(given)
    syms = sorted(set().union(a.free_symbols, b.free_symbols, *(c.free_symbols for c in conds)), key=str)
    fa, fb = compile_int([a], syms), compile_int([b], syms)
    fc = compile_int(conds, syms) if conds else (lambda *v: ())
    rng = random.Random(seed)
    met = 0
    for _ in range(samples * 20):
        env = {s: rng.choice([rng.randint(1 if s.is_positive else 0, 40), rng.randint(1, 4) * 264])
               for s in syms}  # multiples of 2, 4, 8, 132: divisibility facts can hold
        vals = [env[s] for s in syms]
        if not all(fc(*vals)):
            continue
        met += 1
        if fa(*vals) != fb(*vals):
            return False
        if met >= samples:
            break
    return met > 0


def run(n: int, seed: int = 18) -> dict:
    rng = random.Random(seed)
    out: dict[str, dict] = {}
    total = proved_all = 0
    for name, make in FAMILIES.items():
        proved = asked = 0
        misses: list[str] = []
        t0 = time.perf_counter()
        while asked < n:
            a, b, *more = make(rng)
            given = more[0] if more else []
            ctx = CTX.copy().assume(sympy.And(*given))
            if not holds(a, b, given):
                raise AssertionError(f"family {name} made a false equality: {a} == {b} given {given}")
            asked += 1
            if prove_eq(a, b, ctx) is not None:
                proved += 1
            elif len(misses) < 5:
                misses.append(f"{a} == {b}")
        secs = time.perf_counter() - t0
        out[name] = {"asked": asked, "proved": proved, "rate": round(proved / asked, 3),
                     "seconds": round(secs, 2), "unproved_examples": misses}
        total += asked
        proved_all += proved
    out["overall"] = {"asked": total, "proved": proved_all, "rate": round(proved_all / total, 3)}
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=120, help="equalities per family")
    ap.add_argument("--out", default=str(Path(__file__).parent / "results" / "proof_completeness.json"))
    args = ap.parse_args()
    res = run(args.n)
    print(f"{'family':10} {'proved':>8} {'asked':>6} {'rate':>6} {'s':>6}")
    for name, row in res.items():
        print(f"{name:10} {row['proved']:>8} {row['asked']:>6} {row['rate']:>6.0%} {row.get('seconds', ''):>6}")
    doc = {"date": datetime.date.today().isoformat(), "machine": platform.machine(),
           "python": platform.python_version(), "sympy": sympy.__version__, "n_per_family": args.n,
           "context": str(CTX), "families": res}
    Path(args.out).write_text(json.dumps(doc, indent=1) + "\n")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
