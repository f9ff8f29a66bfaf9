"""Rewrite rules: each instantiates one theorem of :data:`THEOREMS` at a sub-expression.

Rules are data, in tinygrad's and Halide's style: ``RULES`` maps a name to ``Rule(theorem, phase,
shape, body, rewrite)`` -- the pattern (a :class:`Shape`: ``floor(num/den)`` with ``num`` a sum, a
remainder of a remainder, ...), the ``lhs -> rhs`` it performs, the theorem whose side conditions
must hold.  One matcher (:meth:`Rule.apply`) matches the shape and hands the parts to the body, which
binds the theorem's pattern symbols and builds the right-hand side; :meth:`Env.step` discharges the
theorem's own side conditions (taken from the theorem data, never restated here) and refuses a
binding that is not integer-valued.  One driver (:mod:`..simplify`) applies the rules.

The matcher is :mod:`.match`; the rule bodies live by family: :mod:`.quotients` (one quotient or
remainder), :mod:`.sums` (over a sum or product), :mod:`.recombine` (back into the dividend, merged
quotients) and :mod:`.order` (decided by bounds).  This module is the table.

Example:
    >>> import sympy
    >>> from ..context import Context
    >>> I, CN = sympy.symbols("I CN", integer=True, positive=True)
    >>> env = Env(Context(), sympy.Mod(sympy.Mod(I, 4 * CN), CN))
    >>> out = RULES["2.12 (a%(b*c))%b"].apply(sympy.Mod(sympy.Mod(I, 4 * CN), CN, evaluate=False), env)
    >>> out[0], [s.theorem for s in out[1]]
    (Mod(I, CN), ['2.12', '2.7.1'])
"""

from __future__ import annotations

from .match import Env, Rewrite, Rule, Shape
from .order import rule_2_16, rule_2_16_by, rule_const_quotient, rule_min_max
from .quotients import (
    rule_2_5_floor,
    rule_2_5_mod,
    rule_2_9,
    rule_2_11,
    rule_2_11_by,
    rule_2_12_by,
    rule_2_12_floor,
    rule_2_12_mod,
    rule_2_13,
    rule_2_14,
    rule_ceil_3,
    rule_ceil_4,
)
from .recombine import rule_merge_quotients, rule_recombine
from .sums import (
    rule_2_7_1,
    rule_2_7_2,
    rule_2_10,
    rule_2_15,
    rule_2_15_1,
    rule_2_15_2,
    rule_radix_div,
    rule_radix_mod,
)

__all__ = ["BY_DIVISOR", "DISTRIBUTE", "ROOT_DEPENDENT", "RULES", "STRUCTURE", "TIDY", "Env", "Rewrite",
           "Rule", "Shape"]

STRUCTURE = "structure"
DISTRIBUTE = "distribute"
TIDY = "tidy"
DIRECTED = "directed"  # never run by the driver: a caller asks for it with its divisors

FLOOR, CEIL, MOD = Shape("floor"), Shape("ceiling"), Shape("Mod")

RULES: dict[str, Rule] = {
    "1.1/2.12 recombine": Rule("1.1", STRUCTURE, Shape("Add"), rule_recombine,
                               "k*(Y%w) + k*w*(Y/w) -> k*Y ; k*(Y%w) + k*w*((Y/w)%c) -> k*(Y%(w*c))"),
    "tilec.min/max": Rule("tilec.min", STRUCTURE, Shape("MinMax"), rule_min_max,
                          "min(a, b) -> a (a <= b) ; max(a, b) -> a (b <= a)"),
    "2.5 r%a": Rule("2.5", STRUCTURE, MOD, rule_2_5_mod, "r % a -> r"),
    "2.5 r/a": Rule("2.5", STRUCTURE, FLOOR, rule_2_5_floor, "r/a -> 0"),
    "2.9": Rule("2.9", STRUCTURE, MOD, rule_2_9, "a % b -> 0"),
    "2.12 (a%(b*c))/b": Rule("2.12", STRUCTURE, Shape("floor", num="Mod"), rule_2_12_floor,
                             "(a%(b*c))/b -> (a/b)%c"),
    "2.12 (a%(b*c))%b": Rule("2.12", STRUCTURE, Shape("Mod", num="Mod"), rule_2_12_mod,
                             "(a%(b*c))%b -> a%b"),
    "2.11": Rule("2.11", STRUCTURE, FLOOR, rule_2_11, "a/(b*c) -> a/b/c where a/b occurs"),
    "2.13": Rule("2.13", STRUCTURE, MOD, rule_2_13, "a%b -> ((a/d)%(b/d))*d"),
    "2.14": Rule("2.14", STRUCTURE, Shape("floor", den="floor"), rule_2_14, "a/(b/c) -> (a*c)/b"),
    "ceil.3": Rule("ceil.3", STRUCTURE, Shape("ceiling", num="ceiling"), rule_ceil_3,
                   "ceil(ceil(a/b)/c) -> ceil(a/(b*c))"),
    "ceil.4": Rule("ceil.4", STRUCTURE, CEIL, rule_ceil_4, "ceil(a/b) -> a/b"),
    "2.16": Rule("2.16", DISTRIBUTE, Shape("Rel"), rule_2_16, "i/d < D -> i < D*d"),
    "2.15.2": Rule("2.15.2", DISTRIBUTE, Shape("floor", num="Add"), rule_2_15_2, "(a+b)/c -> a/c"),
    "2.11+2.15.2 (c*a+b)/(c*d)": Rule("2.15.2", DISTRIBUTE, Shape("floor", num="Add"), rule_radix_div,
                                      "(c*a + b)/(c*d) -> a/d"),
    "2.7.2": Rule("2.7.2", DISTRIBUTE, Shape("Mod", num="Add"), rule_2_7_2, "(a+b)%c -> a%c + b"),
    "2.12+2.7.1+2.5 (c*a+b)%(c*d)": Rule("2.12", DISTRIBUTE, Shape("Mod", num="Add"), rule_radix_mod,
                                         "(c*a + b)%(c*d) -> c*(a%d) + b"),
    "2.15.1": Rule("2.15.1", DISTRIBUTE, Shape("floor", num="Add"), rule_2_15_1,
                   "(a+b)/c -> a/c + b/c"),
    "2.7.1": Rule("2.7.1", DISTRIBUTE, Shape("Mod", num="Add"), rule_2_7_1, "(a+b)%c -> b%c"),
    "2.10": Rule("2.10", DISTRIBUTE, Shape("floor", num="Mul"), rule_2_10, "(a*b)/c -> a*(b/c)"),
    "2.15": Rule("2.15", DISTRIBUTE, Shape("floor", num="Add"), rule_2_15,
                 "(a+b)/c -> a/c (a%c + b < c)"),
    "tilec.const-div": Rule("tilec.const-div", DISTRIBUTE, FLOOR, rule_const_quotient, "a/c -> k"),
    "tilec.const-mod": Rule("tilec.const-mod", DISTRIBUTE, MOD, rule_const_quotient, "a%c -> a - k*c"),
    "2.11 (a/b)/c -> a/(b*c)": Rule("2.11", TIDY, Shape("floor", num="floor"), rule_merge_quotients,
                                    "(a/b)/c -> a/(b*c)"),
}
"""All rules, in the order the driver tries them at a node."""

BY_DIVISOR: dict[str, Rule] = {
    "2.11 a/d -> (a/b)/(d/b)": Rule("2.11", DIRECTED, FLOOR, rule_2_11_by,
                                    "a/d -> (a/b)/(d/b) where b divides d"),
    "2.12 a%d -> a%b + ((a/b)%(d/b))*b": Rule("2.12", DIRECTED, MOD, rule_2_12_by,
                                              "a%d -> a%b + ((a/b)%(d/b))*b where b divides d"),
    "2.16 i < E -> i/d < E/d": Rule("2.16", DIRECTED, Shape("Rel"), rule_2_16_by,
                                    "i < E -> i/d < E/d where d divides E"),
}
"""Rules at a divisor the caller names (``Env.divisors``, the first whose conditions hold): a
digit boundary the theorems cannot guess (which grouping of a cluster's ranks to cut a quotient
at, which factor of a bound to divide by).  The driver never runs them on its own (they would
undo what it merges); :func:`~tilec.proofs.simplify.rewrite_by` applies them where asked."""

ROOT_DEPENDENT = frozenset({rule_2_11})
"""Rules whose outcome depends on the whole expression, not only on the node and the context."""
