"""The one rewrite driver: apply the rules of :mod:`.rules` bottom-up to a fixed point (and,
once at each node, the rules a caller directs at divisors it names: :func:`rewrite_by`).

The pipeline has three named phases: ``structure`` (rules that reshape quotients and remainders:
1.1 and 2.12 recombination, 2.5, 2.9, 2.11, 2.12, 2.13, 2.14, ceil.*, min/max) runs to a fixed point
first, so that 2.11 sees the quotients 2.12 creates; then ``distribute`` (adding 2.7.x, 2.10, 2.15.x,
2.16, pinned quotients); last ``tidy`` merges nested quotients ``(a/b)/c -> a/(b*c)`` (2.11 read
backwards, where ``c > 0``) with the structure rules, so what is printed divides once.

Example:
    >>> import sympy
    >>> from .context import Context
    >>> I, CM, CN = sympy.symbols("I CM CN", integer=True, positive=True)
    >>> res = simplify(sympy.floor(sympy.Mod(I, CM * CN) / CN), Context())
    >>> res.expr, res.trace.theorems()
    (Mod(floor(I/CN), CM), ['2.12', '2.15.1', '2.5'])
"""

from __future__ import annotations

from collections.abc import Sequence

import sympy

from .build import as_expr, canon, rebuild
from .cache import SESSION, ProofCache
from .context import Context
from .expand import frac
from .rules import BY_DIVISOR, DISTRIBUTE, ROOT_DEPENDENT, RULES, STRUCTURE, TIDY, Env, Rule
from .trace import Result, Step, Trace

MAX_PASSES = 24

PIPELINE: list[tuple[str, list[Rule]]] = [
    (STRUCTURE, [r for r in RULES.values() if r.phase == STRUCTURE]),
    (DISTRIBUTE, [r for r in RULES.values() if r.phase in (STRUCTURE, DISTRIBUTE)]),
    # last: what reads best -- nested quotients merged, and recombinations they enable
    (TIDY, [r for r in RULES.values() if r.phase in (TIDY, STRUCTURE) and r.body not in ROOT_DEPENDENT]),
]


def simplify(expr: sympy.Basic, ctx: Context | None = None, *, tidy: bool = True,
             cache: ProofCache | None = None) -> Result:
    """Simplify an integer expression or condition with the theorems, under ``ctx``.

    Returns a :class:`Result` whose ``expr`` equals ``expr`` for every assignment ``ctx`` allows,
    with the proof ``trace`` and the ``facts_used``.  ``tidy=False`` skips the last phase (the
    prover keeps quotients split where they pair with remainders).  Results are kept in ``cache``
    (a :class:`~.cache.ProofCache`; the default session when None).
    """
    ctx = ctx or Context()
    cache = cache or SESSION
    given = as_expr(expr)
    key = (given, ctx.key(), tidy)
    hit = cache.results.get_or(key, lambda: _simplify(canon(given), ctx, tidy, cache))
    return Result(hit[0], Trace(hit[1]), original=None)


def _simplify(expr: sympy.Basic, ctx: Context, tidy: bool, cache: ProofCache
              ) -> tuple[sympy.Basic, tuple[Step, ...]]:
    steps: list[Step] = []
    env = Env(ctx, expr, cache)
    for phase, rules in PIPELINE:
        if phase == TIDY and not tidy:
            continue
        for _ in range(MAX_PASSES):
            env.set_root(expr)
            new = _pass(expr, phase, rules, env, steps, {})
            if new == expr:
                break
            expr = new
    return expr, tuple(steps)


def _applicable(phase: str, rules: list[Rule], node: sympy.Basic, env: Env) -> list[Rule]:
    """The rules of ``phase`` whose pattern's head can match a node of this class, in order (the
    head is a property of the class: a rule of another head never applies)."""
    key = (phase, type(node))
    hit: list[Rule] | None = env.cache.dispatch.get(key)
    if hit is None:
        hit = [r for r in rules if r.shape.head_matches(node)]
        env.cache.dispatch.remember(key, hit)
    return hit


def _pass(
    e: sympy.Basic, phase: str, rules: list[Rule], env: Env, steps: list[Step], memo: dict
) -> sympy.Basic:
    """One bottom-up pass; each distinct sub-expression is rewritten at most once."""
    if e in memo:
        return memo[e]
    out = e
    if e.args and not e.is_Atom:
        args = [_pass(a, phase, rules, env, steps, memo) for a in e.args]
        if any(x is not y for x, y in zip(args, e.args, strict=True)):
            out = rebuild(e, args)
    if isinstance(out, sympy.Expr | sympy.Rel) and not out.is_Atom and (phase, out) not in env.stuck:
        failed = env.reasoner.failed_rules  # (rule, node) that did not apply under this context
        for rule in _applicable(phase, rules, out, env):
            key = (rule, out)
            if key in failed:
                continue
            hit = rule.apply(out, env)
            if hit is not None:
                out, new_steps = hit
                steps.extend(new_steps)
                break
            if rule.body not in ROOT_DEPENDENT:
                failed.add(key)
        else:
            env.stuck.add((phase, out))
    memo[e] = out
    return out


def rewrite_by(expr: sympy.Basic, ctx: Context, rules: Sequence[str],
               divisors: Sequence[sympy.Expr], *, holding: frozenset[sympy.Symbol] = frozenset(),
               cache: ProofCache | None = None) -> Result:
    """Apply the named rules of :data:`~.rules.BY_DIVISOR` once at each node of ``expr``,
    bottom-up (a node's arguments first), each at the first of ``divisors`` whose conditions
    hold under ``ctx``: a quotient or remainder cut at a digit boundary the caller chooses
    (2.11, 2.12), a bound divided by a factor it chooses (2.16 read right to left).
    ``holding``: where given, only quotients and remainders whose dividend holds one of these
    symbols and whose divisor none (the rank's tile index cut by the rank's grouping).

    Returns a :class:`Result` with a step per rewrite (``expr`` itself where none applies).
    The nodes are rebuilt as written (unevaluated): the caller simplifies the result.

    >>> I, CN, N = sympy.symbols("I CN N", integer=True, positive=True)
    >>> ctx = Context().divisible(sympy.ceiling(N / 4), CN)
    >>> res = rewrite_by(sympy.floor(I / sympy.ceiling(N / 4)), ctx,
    ...                  ["2.11 a/d -> (a/b)/(d/b)"], [CN])
    >>> res.expr, res.trace.theorems(), res.facts_used
    (floor(floor(I/CN)/floor(ceiling(N/4)/CN)), ['2.11'], ['ceiling(N/4) % CN == 0'])
    """
    table = [BY_DIVISOR[name] for name in rules]
    env = Env(ctx, expr, cache, tuple(sympy.sympify(d) for d in divisors))
    steps: list[Step] = []

    def visit(e: sympy.Basic) -> sympy.Basic:
        if e.args and not e.is_Atom:
            args = [visit(a) for a in e.args]
            if any(x is not y for x, y in zip(args, e.args, strict=True)):
                e = e.func(*args) if isinstance(e, sympy.And | sympy.Or) else e.func(
                    *args, evaluate=False)
        if holding and not _holds(e, holding):
            return e
        for rule in table:
            hit = rule.apply(e, env)
            if hit is not None:
                steps.extend(hit[1])
                return hit[0]
        return e

    return Result(visit(expr), Trace(steps), original=None)


def _holds(e: sympy.Basic, holding: frozenset[sympy.Symbol]) -> bool:
    """``e`` is a quotient or remainder whose dividend holds a symbol of ``holding`` and whose
    divisor none."""
    if isinstance(e, sympy.floor):
        num, den = frac(e)
    elif isinstance(e, sympy.Mod):
        num, den = e.args
    else:
        return False
    return bool(num.free_symbols & holding) and not den.free_symbols & holding
