"""Benchmark: the seed derivation (nvFuser TMA-multicast discussion), every step, timed.

Prints a table and writes JSON to bench/results/bench_proofs.json.  ``cold`` is the first run in
a fresh process (sympy's caches empty); ``warm`` the median of later runs.

    python bench/bench_proofs.py
"""

from __future__ import annotations

import json
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import sympy
from sympy import Eq, Mod, floor

from tilec.proofs import Context, narrow, prove_eq, simplify

RN, CM, CN, SMs, CS = (sympy.Symbol(n, integer=True, positive=True) for n in ("RN", "CM", "CN", "SMs", "cluster_size"))
i_rt, cidx, r1, r2, I = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("i_rt", "cidx", "rank1", "rank2", "I"))  # noqa: E741


def i_bm(x: sympy.Expr) -> sympy.Expr:
    return floor(floor(x / (CM * CN)) / RN) * CM + floor(Mod(x, CM * CN) / CN)


def i_bn(x: sympy.Expr) -> sympy.Expr:
    return Mod(floor(x / (CM * CN)), RN) * CN + Mod(x, CN)


def lin(rank: sympy.Symbol) -> sympy.Expr:
    return i_rt * SMs + cidx * CS + rank


CTX_A = Context().divisible(SMs, CN).divisible(CS, CN).bound(r1, CS).bound(r2, CS)
CTX_B = Context().divisible(SMs, CM * CN).divisible(CS, CM * CN).bound(r1, CS).bound(r2, CS)

STEPS: list[tuple[str, Callable[[], object]]] = [
    ("2.12+2.15.1: I%(CM*CN)/CN", lambda: simplify(floor(Mod(I, CM * CN) / CN), Context())),
    ("2.11: I/(CM*CN) == I/CN/CM", lambda: prove_eq(floor(I / (CM * CN)), floor(floor(I / CN) / CM), Context())),
    ("narrow same_bulk(A), symbolic I", lambda: narrow(Eq(i_bm(I), i_bm(sympy.Symbol("I2", integer=True, nonnegative=True))), Context())),
    ("narrow same_bulk(A), facts", lambda: narrow(Eq(i_bm(lin(r1)), i_bm(lin(r2))), CTX_A)),
    ("narrow same_bulk(B), facts", lambda: narrow(Eq(i_bn(lin(r1)), i_bn(lin(r2))), CTX_B)),
]


def main(repeats: int = 5) -> None:
    rows = []
    for name, fn in STEPS:
        t0 = time.perf_counter()
        fn()
        cold = time.perf_counter() - t0
        warm = []
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            warm.append(time.perf_counter() - t0)
        rows.append({"step": name, "cold_ms": cold * 1e3, "warm_ms": statistics.median(warm) * 1e3})
    total = {"step": "TOTAL", "cold_ms": sum(r["cold_ms"] for r in rows), "warm_ms": sum(r["warm_ms"] for r in rows)}
    print(f"{'step':40s} {'cold ms':>10s} {'warm ms':>10s}")
    for r in [*rows, total]:
        print(f"{r['step']:40s} {r['cold_ms']:10.1f} {r['warm_ms']:10.1f}")
    out = Path(__file__).parent / "results"
    out.mkdir(exist_ok=True)
    meta = {"python": platform.python_version(), "sympy": sympy.__version__, "machine": platform.machine()}
    (out / "bench_proofs.json").write_text(json.dumps({"meta": meta, "rows": rows, "total": total}, indent=2))


if __name__ == "__main__":
    main()
