"""Shared helpers of the SIMT tests: schedule files, a brute-force sector counter."""

from __future__ import annotations

import math
from pathlib import Path

import sympy

from tilec.runtime.loader import load_schedule

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"


def load(name: str, **params: object):  # type: ignore[no-untyped-def]
    return load_schedule(EXAMPLES / name, params).fusion


def warp_sectors(index: sympy.Expr, width: int, block: tuple[int, int, int], warp: int,
                 point: dict[sympy.Symbol, int]) -> tuple[int, list[int]]:
    """Brute force: distinct 32-byte sectors of warp ``warp`` (fp32, base pointer 256-aligned).

    Lanes are the linear thread ids 32*warp .. 32*warp+31, tid = x + Dx*(y + Dy*z); every other
    symbol takes its value from ``point``.
    """
    dx, dy, dz = block
    tx, ty, tz = (sympy.Symbol(n, integer=True, nonnegative=True) for n in ("tidx", "tidy", "tidz"))
    free = sorted(index.free_symbols, key=str)
    f = sympy.lambdify(free, index, modules="math")
    sectors: set[int] = set()
    addrs = []
    for tid in range(32 * warp, min(32 * warp + 32, dx * dy * dz)):
        coords = {tx: tid % dx, ty: (tid // dx) % dy, tz: tid // (dx * dy)}
        vals = {**point, **coords}
        a = int(f(*(vals[s] for s in free)))
        addrs.append(a)
        for b in range(4 * width):
            sectors.add((4 * a + b) // 32)
    return len(sectors), addrs


def ceil_div(a: int, b: int) -> int:
    return -(-a // b) if b else math.inf  # type: ignore[return-value]
