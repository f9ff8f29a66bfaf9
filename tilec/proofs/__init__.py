"""tilec.proofs: integer-division theorems as data, an assumption context, a simplifier with a
proof trace, a prover for equalities and sufficient conditions, and tilec's one exact integer
evaluator (:mod:`.evaluate`).  Built on sympy (numpy for grids, cachetools for LRU tables); it
imports nothing of tilec.  Its memo tables are held by two objects (:mod:`.cache`): a
:class:`ProofCache` per proof session, which the entry points take as ``cache=`` (:data:`SESSION`
by default), and the :data:`CONTENT` cache of pure functions of an expression;
:func:`clear_caches` empties both.

The modules, from the ground up: :mod:`.cache` (the memo tables), :mod:`.evaluate` (exact integer
values), :mod:`.trace` (steps, results, printing), :mod:`.algebra` (integer polynomials),
:mod:`.build` (structural builders, ``canon``), :mod:`.expand` (whole expressions through them),
:mod:`.context` (facts), :mod:`.theorems` (the theorems as data), :mod:`.intervals` (bounds and
signs), :mod:`.bounds` (the Reasoner: divisibility, side conditions), :mod:`.rules` (the rewrite
rules and their matcher), :mod:`.simplify` (the one driver), :mod:`.prover` (equalities,
narrowing, implication).

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
from .build import canon
from .cache import CONTENT, SESSION, ContentCache, ProofCache, clear_caches
from .context import Context, Fact, FactKind
from .evaluate import compile_int, evaluate_grid, int_source
from .expand import frac
from .prover import implies, narrow, prove_eq
from .rules import BY_DIVISOR, RULES, Rule
from .simplify import PIPELINE, rewrite_by, simplify
from .theorems import THEOREMS, Gcd, Theorem
from .trace import Result, Step, Trace, fmt

__all__ = [
    "BY_DIVISOR",
    "CONTENT",
    "PIPELINE",
    "RULES",
    "SESSION",
    "THEOREMS",
    "ContentCache",
    "Context",
    "Fact",
    "FactKind",
    "Gcd",
    "ProofCache",
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
    "rewrite_by",
    "simplify",
]
