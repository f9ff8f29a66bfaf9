"""Closed forms of multicast issue predicates and masks, from the proofs engine.

Steps (each recorded in the operand's proof trace):

1. Candidate facts: ``c % d == 0`` for every coefficient ``c`` of a CTA-level variable (``SMS`` of
   ``i_rt``, ``CLUSTER`` of ``cidx``) and every divisor ``d`` of the tile-index arithmetic (``CN``,
   ``CM*CN``), kept only when true at the schedule's parameters; and the exactness of each split
   that adds an alive predicate.
2. ``narrow(same)`` under those facts. The result must depend on the two ranks alone; it is a
   sufficient condition, so sharing may be lost, never invented.
3. Pattern: ``floor(r/d)`` equal -> contiguous groups of d; ``floor(r/g)`` and ``r % d`` equal ->
   groups of g/d ranks strided by d; ``r`` equal -> no sharing; ``true`` -> the whole cluster.
4. Alive must be uniform over each group (a group is all alive or all dead), shown by rewriting
   each alive predicate so that the rank appears only inside the group key (2.16 then 2.15.1).

Anything that does not fit leaves ``closed_form`` False: the general form is used.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

import sympy

from tilec.ir.pyeval import compile_int
from tilec.transforms.multicast import R1, R2, RANK, _same

if TYPE_CHECKING:
    from tilec.proofs import Context
    from tilec.transforms.multicast import OperandMulticast

_J = sympy.Symbol("j", integer=True, nonnegative=True)


_COMPILED: dict[sympy.Expr, tuple[list[sympy.Symbol], Any]] = {}


def _value(expr: sympy.Expr, values: dict[sympy.Symbol, int]) -> int | None:
    """The exact integer value of a parameter expression (compiled once per expression)."""
    hit = _COMPILED.get(expr)
    if hit is None:
        syms = sorted(expr.free_symbols, key=str)
        try:
            hit = (syms, compile_int([expr], syms))
        except ValueError:
            hit = (syms, None)
        _COMPILED[expr] = hit
    syms, fn = hit
    if fn is None or any(s not in values for s in syms):
        return None
    try:
        return int(fn(*[values[s] for s in syms])[0])
    except (ValueError, TypeError, ZeroDivisionError):
        return None


def _divisors(expr: sympy.Basic) -> set[sympy.Expr]:
    """Divisors of floor/Mod nodes over the rank, with the products of nested chains."""
    out: set[sympy.Expr] = set()

    def chain(e: sympy.Basic) -> list[sympy.Expr]:
        if isinstance(e, sympy.floor):
            num, den = sympy.fraction(e.args[0])
            inner = chain(num)
            return [den, *[den * i for i in inner]]
        return []

    for node in sympy.preorder_traversal(expr):
        if RANK not in node.free_symbols:
            continue
        if isinstance(node, sympy.floor):
            out.update(chain(node))
        elif isinstance(node, sympy.Mod):
            m = node.args[1]
            out.add(m)
            out.update(m * d for d in chain(node.args[0]))
    return {d for d in out if d.free_symbols or (d.is_Integer and d > 1)}


def _coefficients(expr: sympy.Basic, variables: list[sympy.Symbol]) -> set[sympy.Expr]:
    """Coefficients of CTA-level variables in sums that also hold the rank."""
    out: set[sympy.Expr] = set()
    for node in sympy.preorder_traversal(expr):
        if isinstance(node, sympy.Add) and RANK in node.free_symbols:
            for term in node.args:
                for v in variables:
                    if v in term.free_symbols:
                        coeff, _ = term.as_independent(v, as_Add=False)
                        if coeff.free_symbols or (coeff.is_Integer and coeff > 1):
                            out.add(coeff)
    return out


def _context(op: OperandMulticast, values: dict[sympy.Symbol, int]) -> tuple[Context, sympy.Expr]:
    from tilec.proofs import Context

    ctx = Context()
    params = {s for s in values if s.is_positive}
    exprs = [*op.origin.values(), op.alive]
    present = set().union(*[e.free_symbols for e in exprs]) | set().union(
        *[b.free_symbols for b in op.bounds.values()])
    for p in sorted(params & present, key=str):
        ctx.positive(p)
    rank_extent = op.rank_extent
    for r in (R1, R2, RANK):
        ctx.bound(r, rank_extent)
    for v, b in op.bounds.items():
        ctx.bound(v, b)
    return ctx, rank_extent


def close(op: OperandMulticast, values: dict[sympy.Symbol, int]) -> None:
    """Fill ``op``'s closed forms where the proofs engine allows (see module docstring)."""
    from tilec.proofs import narrow, simplify

    if not op.origin:
        _set(op, [], [], sympy.Integer(op.cluster_size), values, rank_extent=op.rank_extent)
        return
    ctx, rank_extent = _context(op, values)
    variables = [v for v in op.variables if v != RANK]
    exprs = [*op.origin.values()]
    facts: list[str] = []
    pairs = _candidates(op, variables, exprs)
    held = tuple(_holds(c, d, values) for c, d in pairs)
    split_exact = tuple(_holds(e, f, values) for _, (e, f) in op.alive_parts)
    key = (id(op.origin), op.mode, held, split_exact)
    cached = _CLOSED.get(key)
    if cached is not None and cached[0] is op.origin:
        for name, value in cached[1].items():
            setattr(op, name, value() if callable(value) else value)
        return
    for (c, d), ok in zip(pairs, held, strict=True):
        if ok:
            ctx.divisible(c, d)
    origin = {}
    for name, e in op.origin.items():
        res = simplify(e, ctx)
        op.proof.extend(_trace_rows(res))
        folded = fold_nested_floors(res.expr)
        if folded != res.expr:
            op.proof.append({"theorem": "2.11", "before": str(res.expr), "after": str(folded)})
        origin[name] = folded
    # unevaluated: narrow() rewrites each equation itself (sympy's Eq would first try to
    # decide e(r1) - e(r2) == 0 over floors, for nothing)
    with sympy.evaluate(False):
        same_exact = _same(origin, R1, R2)
    _close_narrowed(op, narrow(same_exact, ctx), ctx, variables, facts, values, rank_extent)
    fields = ("closed_form", "issue", "mask", "slice_index", "slice_count", "narrowed_same",
              "facts")
    saved: dict[str, Any] = {f: getattr(op, f) for f in fields}
    saved |= {"proof": list(op.proof), "notes": list(op.notes)}
    _CLOSED[key] = (op.origin, {k: (lambda v=v: list(v)) if isinstance(v, list) else v
                                for k, v in saved.items()})


_CLOSED: dict[tuple[Any, ...], tuple[Any, dict[str, Any]]] = {}
_PAIRS: dict[int, tuple[Any, list[tuple[sympy.Expr, sympy.Expr]]]] = {}


def _candidates(op: OperandMulticast, variables: list[sympy.Symbol], exprs: list[sympy.Expr]
                ) -> list[tuple[sympy.Expr, sympy.Expr]]:
    hit = _PAIRS.get(id(op.origin))
    if hit is not None and hit[0] is op.origin:
        return hit[1]
    whole = sympy.Tuple(*exprs)  # a container to walk; an evaluated And of Eqs cost 0.1 s
    pairs = [(c, d) for c in sorted(_coefficients(whole, variables), key=str)
             for d in sorted(_divisors(whole), key=str) if c != d]
    _PAIRS[id(op.origin)] = (op.origin, pairs)
    return pairs


def _holds(c: sympy.Expr, d: sympy.Expr, values: dict[sympy.Symbol, int]) -> bool:
    cv, dv = _value(c, values), _value(d, values)
    return cv is not None and dv is not None and dv != 0 and cv % dv == 0


def _close_narrowed(op: OperandMulticast, res: Any, ctx: Context, variables: list[sympy.Symbol],
                    facts: list[str], values: dict[sympy.Symbol, int], rank_extent: sympy.Expr
                    ) -> None:
    op.proof.extend(_trace_rows(res))
    op.narrowed_same = res.expr
    if res.expr.free_symbols & set(variables):
        op.notes.append(f"narrowed same still depends on {sorted(map(str, res.expr.free_symbols & set(variables)))}: general form")
        return
    keys = _keys(res.expr)
    if keys is None:
        op.notes.append(f"narrowed same {res.expr} is not a recognised group pattern: general form")
        return
    facts.extend(res.facts_used)
    _set(op, keys, facts, rank_extent, values, rank_extent=rank_extent, ctx=ctx)


def fold_nested_floors(expr: sympy.Expr) -> sympy.Expr:
    """2.11 right to left: ``floor(floor(x/a)/b) -> floor(x/(a*b))`` for a, b > 0.

    The simplifier splits divisions (left to right); folding them back over the rank lets the
    narrowing see ``floor(r/(CM*CN))`` as one digit of the rank instead of narrowing the outer
    floor away (which would lose the sharing of B's column groups).
    """

    def fold(e: sympy.Basic) -> sympy.Basic:
        if isinstance(e, sympy.floor):
            # no together() here: a sum of two or more terms never has a lone floor numerator
            num, den = sympy.fraction(e.args[0])
            if isinstance(num, sympy.floor) and den.is_positive:
                inum, iden = sympy.fraction(sympy.together(num.args[0]))
                if iden.is_positive:
                    return sympy.floor(inum / (iden * den))
        return e

    prev = None
    while prev != expr:
        prev, expr = expr, expr.replace(lambda e: isinstance(e, sympy.floor), fold)
    return expr


def _trace_rows(res: Any) -> list[dict[str, str]]:
    rows = []
    for step in res.trace:
        rows.append({"theorem": str(step.theorem), "before": str(step.before),
                     "after": str(step.after)})
    return rows


def _keys(cond: sympy.Boolean) -> list[sympy.Expr] | None:
    if cond is sympy.true:
        return []
    if cond is sympy.false:
        return None
    conj = cond.args if isinstance(cond, sympy.And) else (cond,)
    keys = []
    for c in conj:
        if not isinstance(c, sympy.Eq):
            return None
        lhs, rhs = c.lhs, c.rhs
        if R2 in lhs.free_symbols:
            lhs, rhs = rhs, lhs
        kl, kr = lhs.xreplace({R1: RANK}), rhs.xreplace({R2: RANK})
        if R2 in kl.free_symbols or R1 in kr.free_symbols:
            return None
        if kl != kr and sympy.expand(kl - kr) != 0:
            return None
        keys.append(_strip(kl))
    return keys


def _strip(key: sympy.Expr) -> sympy.Expr:
    """Drop rank-free offsets and positive factors: ``c*f(rank) + e`` is equal iff ``f`` is."""
    while True:
        _, dep = key.as_independent(RANK, as_Add=True)
        coeff, dep = dep.as_independent(RANK, as_Add=False)
        if dep == key or not (coeff.is_positive or coeff == 1):
            return key
        key = dep


def _classify(keys: list[sympy.Expr], cs: sympy.Expr) -> tuple[str, sympy.Expr, sympy.Expr] | None:
    """('contiguous', d, _) | ('strided', g, d) | ('single', 1, 1)."""
    div = mod = None
    for k in keys:
        if k == RANK:
            return ("single", sympy.Integer(1), sympy.Integer(1))
        if isinstance(k, sympy.floor):
            num, den = sympy.fraction(sympy.together(k.args[0]))
            if num != RANK or div is not None:
                return None
            div = den
        elif isinstance(k, sympy.Mod) and k.args[0] == RANK and mod is None:
            mod = k.args[1]
        else:
            return None
    if div is None and mod is None:
        return ("contiguous", cs, sympy.Integer(1))
    if mod is None:
        return ("contiguous", div, sympy.Integer(1))
    return ("strided", div if div is not None else cs, mod)


def _set(op: OperandMulticast, keys: list[sympy.Expr], facts: list[str], cs: sympy.Expr,
         values: dict[sympy.Symbol, int], *, rank_extent: sympy.Expr, ctx: Any = None) -> None:
    kind = _classify(keys, cs)
    if kind is None:
        op.notes.append(f"group keys {keys} are not a recognised pattern: general form")
        return
    name, g, d = kind
    csv = _value(cs, values) if cs.free_symbols else int(cs)
    gv, dv = _value(g, values), _value(d, values)
    if csv is None or gv is None or dv is None:
        op.notes.append("group sizes unknown at these parameters: general form")
        return
    if name == "contiguous":
        if csv % gv:
            op.notes.append(f"cluster size {csv} is not a multiple of the group size {g} = {gv}: general form")
            return
        if g != cs:
            facts.append(divisible_text(rank_extent, g))
        issue = sympy.Eq(sympy.Mod(RANK, g), 0)
        mask = (2**g - 1) * 2 ** (g * sympy.floor(RANK / g))
        sidx, scount = sympy.Mod(RANK, g), g
    elif name == "strided":
        if csv % gv or gv % dv:
            op.notes.append(f"strided groups {g} / {d} do not tile the cluster: general form")
            return
        if g != cs:
            facts.append(divisible_text(rank_extent, g))
        facts.append(divisible_text(g, d))
        m = g / d if (g / d).is_integer or not (g / d).free_symbols else sympy.floor(g / d)
        issue = sympy.Lt(sympy.Mod(RANK, g), d)
        mask = sympy.Sum(2 ** (_J * d), (_J, 0, m - 1)) * 2 ** (sympy.Mod(RANK, d) + g * sympy.floor(RANK / g))
        sidx, scount = sympy.floor(sympy.Mod(RANK, g) / d), m
    else:
        issue, mask, sidx, scount = sympy.true, 2**RANK, sympy.Integer(0), sympy.Integer(1)
    alive = _uniform_alive(op, keys, kind, values, facts, ctx)
    if alive is None:
        return
    op.closed_form = True
    if op.mode.value == "sliced":
        issue = sympy.true  # every alive member issues its own slice
    op.issue = sympy.And(alive, issue) if alive is not sympy.true else issue
    op.mask = mask if alive is sympy.true else sympy.Piecewise((mask, alive), (0, True))
    op.slice_index, op.slice_count = sidx, scount
    op.facts = list(dict.fromkeys(facts))


def divisible_text(n: sympy.Expr, d: sympy.Expr) -> str:
    """``n % d == 0`` as the proofs context prints it (operands parenthesised where needed).

        >>> cm, cn, cl = sympy.symbols("CM CN CLUSTER", integer=True, positive=True)
        >>> divisible_text(cl, cm * cn)
        'CLUSTER % (CM*CN) == 0'
    """
    from tilec.proofs.context import Fact, FactKind

    return str(Fact(FactKind.DIVISIBLE, n, d))


_DIVISIBLE_TEXT = re.compile(r"(.+?)\s*%\s*(.+?)\s*==\s*0")


def fact_sympy_text(text: str) -> str:
    """A fact string in the form ``sympy.sympify`` reads back as a condition (``a % b == 0``
    would be read as Python's ``==``, a plain False): ``Eq(Mod(a, b), 0)``; ``>``/``<`` forms
    are already readable.

        >>> fact_sympy_text("CLUSTER % (CM*CN) == 0"), fact_sympy_text("CN > 0")
        ('Eq(Mod(CLUSTER, (CM*CN)), 0)', 'CN > 0')
    """
    m = _DIVISIBLE_TEXT.fullmatch(text.strip())
    return f"Eq(Mod({m.group(1)}, {m.group(2)}), 0)" if m else text


def fact_expr(text: str) -> sympy.Boolean:
    """A fact string ("SMS % CN == 0", "CN > 0", "i < E") as a sympy condition over positive
    symbols: the proofs context's four fact forms, read through :func:`fact_sympy_text`."""
    names = set(re.findall(r"[A-Za-z_]\w*", text)) - {"Eq", "Mod", "ceiling", "floor"}
    local: dict[str, Any] = {n: sympy.Symbol(n, integer=True, positive=True) for n in names}
    local |= {"ceiling": sympy.ceiling, "floor": sympy.floor, "Mod": sympy.Mod, "Eq": sympy.Eq}
    return sympy.sympify(fact_sympy_text(text), locals=local)


def _uniform_alive(op: OperandMulticast, keys: list[sympy.Expr], kind: tuple[str, sympy.Expr, sympy.Expr],
                   values: dict[sympy.Symbol, int], facts: list[str], ctx: Any) -> sympy.Boolean | None:
    """The alive condition if it is constant over each group, else None (general form)."""
    from tilec.proofs import simplify

    kept: list[sympy.Boolean] = []
    for pred, (extent, factor) in op.alive_parts:
        ev, fv = _value(extent, values), _value(factor, values)
        if ev is not None and fv and ev % fv == 0:
            facts.append(divisible_text(extent, factor))
            continue  # the split is exact at these parameters: no predicate
        if RANK not in pred.free_symbols:
            kept.append(pred)
            continue
        if ctx is None or not _rank_only_in_keys(pred, keys, kind, ctx, op, facts):
            op.notes.append(f"alive predicate {pred} may differ inside a sharing group: general form")
            return None
        kept.append(pred)
    if not kept:
        return sympy.true
    return simplify(sympy.And(*kept), ctx).expr if ctx is not None else sympy.And(*kept)


def _rank_only_in_keys(pred: sympy.Boolean, keys: list[sympy.Expr], kind: tuple[str, sympy.Expr, sympy.Expr],
                       ctx: Any, op: OperandMulticast, facts: list[str]) -> bool:
    from tilec.proofs import simplify

    name, g, _ = kind
    block = g  # ranks of one group share floor(rank / g) (contiguous) or lie in one g-block
    candidates = [pred]
    if isinstance(pred, sympy.StrictLessThan) and name != "single":
        lhs, rhs = pred.args
        if sympy.Mod(rhs, block) == 0:
            # 2.16: e < B*g  <=>  e/g < B   (g > 0)
            candidates.append(sympy.Lt(sympy.floor(lhs / block), rhs / block))
    for cand in candidates:
        res = simplify(cand, ctx)
        expr = res.expr
        marker = sympy.Symbol("_key", integer=True, nonnegative=True)
        replaced = expr.xreplace({sympy.floor(RANK / block): marker})
        if name == "single" or RANK not in replaced.free_symbols:
            op.proof.extend(_trace_rows(res))
            if cand is not pred:
                op.proof.append({"theorem": "2.16", "before": str(pred), "after": str(cand)})
            facts.extend(res.facts_used)
            return True
    return False
