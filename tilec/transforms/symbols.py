"""The names the plan's expressions are written over: the problem sizes ``M``, ``N``, ``K`` (the
kernels' run-time arguments), the kernel variables the work split's formulas use (``pid``,
``tile``, ...), and the work split's numbers as a shape-generic kernel receives them.

    >>> SIZES["M"] is SIZE_M, kernel_symbol("pid") == PID
    (True, True)
"""

from __future__ import annotations

import sympy

__all__ = [
    "CTA",
    "ITER",
    "IT_BEGIN",
    "IT_END",
    "PART",
    "PID",
    "SIZES",
    "SIZE_K",
    "SIZE_M",
    "SIZE_N",
    "TILE",
    "UNIT",
    "WORK_SYMBOLS",
    "Formula",
    "J",
    "kernel_symbol",
]


# the problem sizes as the plan's expressions name them (the kernels' run-time arguments M, N, K)
SIZE_M, SIZE_N, SIZE_K = (sympy.Symbol(n, integer=True, positive=True) for n in ("M", "N", "K"))
SIZES = {"M": SIZE_M, "N": SIZE_N, "K": SIZE_K}


def kernel_symbol(name: str) -> sympy.Symbol:
    """A nonnegative integer variable of the generated kernel (``pid``, ``tile``, ``u``, ...)."""
    return sympy.Symbol(name, integer=True, nonnegative=True)


# the variables the WorkSplit formulas are written over (the kernels' variables of the same name)
PID, UNIT, PART, TILE, J, CTA, ITER = (kernel_symbol(n) for n in ("pid", "u", "s", "tile", "j",
                                                                   "cta", "i"))
IT_BEGIN, IT_END = kernel_symbol("it_begin"), kernel_symbol("it_end")

Formula = sympy.Expr | int

# the work split's size-dependent numbers as a shape-generic kernel receives them (run-time
# arguments, or computed on the device from M, N, K): WorkSplit.symbolic()
WORK_SYMBOLS = {
    "grid": sympy.Symbol("GRID", integer=True, positive=True),
    "num_tiles": sympy.Symbol("NUM_TILES", integer=True, positive=True),
    "k_iters": sympy.Symbol("K_ITERS", integer=True, positive=True),
    "splits": sympy.Symbol("SPLITS", integer=True, positive=True),
    "sk_tiles": sympy.Symbol("SK_TILES", integer=True, nonnegative=True),
    "sk_ctas": sympy.Symbol("SK_CTAS", integer=True, nonnegative=True),
}
