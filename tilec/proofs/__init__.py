"""tilec.proofs: integer-division theorems as data, an assumption context, a simplifier with a
proof trace, a prover for equalities and sufficient conditions, and tilec's one exact integer
evaluator (:mod:`.evaluate`).  Pure sympy (numpy for grids); imports nothing else of tilec (its
caches are :class:`.memo.Memo`, stdlib only).

Example:
    >>> import sympy
    >>> I, CM, CN = sympy.symbols("I CM CN", integer=True, positive=True)
    >>> res = simplify(sympy.floor(sympy.Mod(I, CM * CN) / CN), Context())
    >>> res.expr
    Mod(floor(I/CN), CM)
    >>> res.trace.theorems()
    ['2.12', '2.15.1', '2.5']
"""

from .bounds import Reasoner, bounds
from .build import canon, frac
from .context import Context, Fact, FactKind
from .evaluate import compile_int, evaluate_grid, int_source
from .prover import implies, narrow, prove_eq
from .rules import RULES, Rule
from .simplify import PIPELINE, simplify
from .theorems import THEOREMS, Gcd, Theorem
from .trace import Result, Step, Trace, fmt


def clear_caches() -> None:
    """Forget every result cached across calls (simplify/narrow results, shared reasoners, canonical
    forms).  Results never depend on the caches; this is for benchmarks and memory."""
    import sys

    _b, _u, _p, _s = (sys.modules[f"{__name__}.{m}"] for m in ("bounds", "build", "prover", "simplify"))

    _s._RESULTS.clear()
    _p._NARROWED.clear()
    _b._SHARED.clear()
    _b._INTERVALS.clear()
    _b._DIVIDES.clear()
    _b.frac.cache_clear()
    _u._INT_CACHE.clear()
    _u._CANON_CACHE.clear()
    _u._EXPAND_CACHE.clear()


__all__ = [
    "PIPELINE",
    "RULES",
    "THEOREMS",
    "Context",
    "Fact",
    "FactKind",
    "Gcd",
    "Reasoner",
    "Result",
    "Rule",
    "Step",
    "Theorem",
    "Trace",
    "bounds",
    "canon",
    "clear_caches",
    "compile_int",
    "evaluate_grid",
    "fmt",
    "frac",
    "implies",
    "int_source",
    "narrow",
    "prove_eq",
    "simplify",
]
