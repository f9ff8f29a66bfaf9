"""Facts about a schedule's parameters, as a test states them and as tilec reports them.

A fact is a string in Python's integer syntax (``"SMS % CLUSTER == 0"``, ``"M >= 2*BM"``), a
sympy condition, a :class:`tilec.proofs.Fact` (what a closed form rests on), or a function of the
parameter dict. :func:`condition` turns the first three into one sympy condition over symbols
named like the parameters; :func:`holds` evaluates any of them exactly (floor semantics).

    >>> holds(["M % BM == 0", "N > BN"], {"M": 64, "BM": 16, "N": 40, "BN": 32})
    True
    >>> holds(["M % BM == 0"], {"M": 60, "BM": 16})
    False
    >>> divisibility(condition("SMS % CLUSTER == 0", ["SMS", "CLUSTER"]))
    (SMS, CLUSTER)
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import sympy

from tilec.errors import ParamError
from tilec.proofs.evaluate import compile_int

# a string, a sympy condition, a tilec Fact, or a function of the parameter dict
FactLike = Any


_FUNCTIONS = {"floor": sympy.floor, "ceiling": sympy.ceiling, "ceil": sympy.ceiling,
              "Mod": sympy.Mod, "Min": sympy.Min, "Max": sympy.Max, "min": sympy.Min,
              "max": sympy.Max, "Eq": sympy.Eq, "Ne": sympy.Ne, "And": sympy.And, "Or": sympy.Or,
              "Not": sympy.Not}


def symbol(name: str) -> sympy.Symbol:
    """A parameter's symbol, as the derivation names it."""
    return sympy.Symbol(name, integer=True, positive=True)


def condition(fact: FactLike, names: Iterable[str]) -> sympy.Boolean | None:
    """``fact`` as a sympy condition (None for a function of the parameters)."""
    from tilec.proofs import Fact, FactKind

    if isinstance(fact, Fact):
        s, o = fact.subject, fact.other
        return {FactKind.NONNEG: lambda: sympy.Ge(s, 0, evaluate=False),
                FactKind.POSITIVE: lambda: sympy.Gt(s, 0, evaluate=False),
                FactKind.BOUND: lambda: sympy.Lt(s, o, evaluate=False),
                FactKind.DIVISIBLE: lambda: sympy.Eq(sympy.Mod(s, o, evaluate=False), 0,
                                                     evaluate=False)}[fact.kind]()
    if isinstance(fact, sympy.Basic):
        return fact
    if isinstance(fact, str):
        from sympy.parsing.sympy_parser import parse_expr

        # every name a parameter symbol but the few functions a condition may call (sympy's
        # namespace would read Q, S or E as its own objects)
        local = {n: symbol(n) for n in re.findall(r"[A-Za-z_]\w*", fact)}
        local.update(_FUNCTIONS)
        try:
            out = parse_expr(fact, local_dict=local, evaluate=False)
        except (SyntaxError, TypeError, ValueError, AttributeError) as e:
            raise ParamError(f"fact {fact!r} is not a condition on the parameters "
                             f"({type(e).__name__}: {e})") from None
        if not isinstance(out, sympy.logic.boolalg.Boolean):
            raise ParamError(f"fact {fact!r} is not a condition (like 'M % BM == 0')")
        return out
    if callable(fact):
        return None
    raise ParamError(f"a fact is a string, a sympy condition, a tilec Fact or a function of the "
                     f"parameters, but got {fact!r}")


def holds(facts: Iterable[FactLike], params: Mapping[str, Any]) -> bool:
    """Whether every fact holds at ``params`` (a division by zero is a fact that fails)."""
    for fact in facts:
        cond = condition(fact, params)
        if cond is None:
            if not fact(params):
                return False
            continue
        syms = sorted(cond.free_symbols, key=str)
        unknown = [str(s) for s in syms if not _is_int(params.get(str(s)))]
        if unknown:
            raise ParamError(f"fact {fact} names {unknown[0]}, which is not an integer parameter "
                             f"(the parameters are {', '.join(sorted(params))})")
        try:
            if not compile_int([cond], syms)(*[params[str(s)] for s in syms])[0]:
                return False
        except ZeroDivisionError:
            return False
    return True


def divisibility(cond: sympy.Basic | None) -> tuple[sympy.Symbol, sympy.Expr] | None:
    """``(X, E)`` when ``cond`` says ``X % E == 0`` of one parameter X: a strategy can then draw
    X as a multiple of E instead of filtering."""
    if not isinstance(cond, sympy.Eq):
        return None
    lhs, rhs = cond.args
    if rhs != 0:
        lhs, rhs = rhs, lhs
    if rhs != 0 or not isinstance(lhs, sympy.Mod) or not isinstance(lhs.args[0], sympy.Symbol):
        return None
    x, e = lhs.args
    return (x, e) if x not in e.free_symbols else None


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)
