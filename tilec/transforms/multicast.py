"""TMA multicast derivation: which CTAs of a cluster share an operand box, who issues, the mask.

Semantics (DESIGN.md, "Multicast derivation"; seed 004). For an operand tile loaded by TMA, read
off its index map with the Bulk indices at 0 (the box origin):

* ``same(r1, r2)``: every non-Broadcast logical index of the box origin is equal for ranks r1 and
  r2 at the same loop point (persistent round, cluster index, k-iteration), and both are alive
  (their tile exists in this round: the split predicates at the box origin hold).
* **leader** mode: ``issue(rank) = alive(rank) and not any(same(r, rank) for r < rank)``,
  ``mask(rank) = sum(same(r, rank) << r)``.
* **sliced** mode: each of the n members of a group issues slice ``#{r < rank: same(r, rank)}``
  of ``n`` of the box (cut along its outermost dimension) with the group's mask.

Both come as the **general form** (an unrolled sum over the cluster's ranks; always correct) and,
where the proofs engine narrows ``same`` to a pattern in the ranks alone under the schedule's
divisibility facts, a **closed form** (``rank % CN == 0``, ``((1 << CN) - 1) << (CN*(rank//CN))``).
Narrowing may lose sharing, never invent it. A closed form is also checked against the general
form on every CTA of the concrete launch before it is reported; the facts it rests on become the
run-time ``guard``.

Example::

    >>> from tilec.transforms.multicast import derive_from_file
    >>> d = derive_from_file("examples/seed004_persistent_cluster.py", {"CM": 1, "CN": 2})
    >>> d.operands["A"].issue  # the CTA's tile must exist in this round (the last is partial)
    Eq(Mod(rank, CN), 0) & (CLUSTER*cidx + SMS*i_rt + rank < CM*CN*ceiling(M/(BM*CM))*ceiling(N/(BN*CN)))
    >>> d.operands["A"].closed_form, "CLUSTER % CN == 0" in d.operands["A"].facts
    (True, True)
"""

from __future__ import annotations

import functools
import inspect
import itertools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import sympy

from tilec.errors import LaunchError, TilecError
from tilec.ir import GemmFusion, IndexMap, ParallelType, index_map, index_symbol, infer_launch
from tilec.ir.pyeval import compile_int
from tilec.ir.tensorview import TensorView
from tilec.transforms.plan import MulticastMode

RANK = index_symbol("rank")
R1, R2 = index_symbol("r1"), index_symbol("r2")
_R = index_symbol("r")


@dataclass
class Row:
    point: dict[str, int]  # the variables (i_rt, cidx, ...) and rank
    alive: bool
    issue: bool
    mask: int
    slice_index: int | None
    slice_count: int | None


@dataclass
class OperandMulticast:
    """The derivation for one operand. Expressions are over ``variables`` and the parameters."""

    operand: str
    mode: MulticastMode
    cluster_size: int
    variables: list[sympy.Symbol]
    origin: dict[str, sympy.Expr]  # box origin per non-broadcast logical axis, in rank
    alive: sympy.Boolean
    general: _LazyGeneral
    closed_form: bool = False
    issue: sympy.Boolean = sympy.false
    mask: sympy.Expr = sympy.S.Zero
    slice_index: sympy.Expr | None = None
    slice_count: sympy.Expr | None = None
    narrowed_same: sympy.Boolean | None = None
    facts: list[str] = field(default_factory=list)
    proof: list[dict[str, str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    box_bytes: int = 0
    alive_parts: list[tuple[sympy.Boolean, Any]] = field(default_factory=list)
    rank_extent: sympy.Expr = sympy.S.One
    bounds: dict[sympy.Symbol, sympy.Expr] = field(default_factory=dict)
    table: list[Row] = field(default_factory=list)

    @property
    def guard(self) -> sympy.Boolean:
        """The closed form's facts as one condition (true when it rests on none): what a run-time
        guard tests when sizes are only known at launch."""
        from tilec.transforms.multicast_closed import fact_expr

        return sympy.And(*[fact_expr(f) for f in self.facts]) if self.closed_form else sympy.true

    @property
    def same(self) -> sympy.Boolean:
        """same(r1, r2) over the variables: origins equal and both alive (the general form)."""
        return self.general.forms[0]

    @property
    def general_issue(self) -> sympy.Boolean:
        # sliced: every alive member of a group issues its own slice
        return self.alive if self.mode is MulticastMode.SLICED else self.general.forms[1]

    @property
    def general_mask(self) -> sympy.Expr:
        return self.general.forms[2]

    @property
    def general_slice_index(self) -> sympy.Expr:
        return self.general.forms[3]

    @property
    def general_slice_count(self) -> sympy.Expr:
        return self.general.forms[4]

    def forms(self) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr | None, sympy.Expr | None]:
        """The forms a kernel should use: closed where proven, else general."""
        if self.closed_form:
            return self.issue, self.mask, self.slice_index, self.slice_count
        if self.mode is MulticastMode.SLICED:
            return (self.general_issue, self.general_mask, self.general_slice_index,
                    self.general_slice_count)
        return self.general_issue, self.general_mask, None, None


@dataclass
class MulticastDerivation:
    params: dict[str, Any]
    cluster_size: int
    mode: MulticastMode
    operands: dict[str, OperandMulticast]

    def to_json(self) -> dict[str, Any]:
        """The ``tilec masks --json`` object (see docs/cli.md)."""
        from tilec.transforms.multicast_closed import fact_sympy_text

        ops = {}
        for name, op in self.operands.items():
            issue, mask, sidx, scount = op.forms()
            sliced = self.mode is MulticastMode.SLICED
            ops[name] = {
                "closed_form": op.closed_form,
                "variables": [str(v) for v in op.variables],
                "issue_predicate": _text(issue),
                "mask": _text(mask),
                "slice_index": _text(sidx) if sliced and sidx is not None else None,
                "slice_count": _text(scount) if sliced and scount is not None else None,
                "facts": [fact_sympy_text(f) for f in op.facts],
                "proof": list(op.proof),
                "table": [
                    {**row.point, "alive": row.alive, "issue": row.issue, "mask": row.mask,
                     "slice_index": row.slice_index if sliced else None,
                     "slice_count": row.slice_count if sliced else None}
                    for row in op.table
                ],
            }
        return {"params": self.params, "cluster_size": self.cluster_size,
                "mode": self.mode.value, "operands": ops}


@functools.lru_cache(maxsize=4096)
def _text(expr: sympy.Basic) -> str:
    """str() of a form, memoised: a schedule's general forms are printed for every launch."""
    return str(expr)


# -- reading the operand's index map -------------------------------------------------------


def _rank_substitution(im: IndexMap, cluster: tuple[int, int, int],
                       extra_bounds: dict[sympy.Symbol, sympy.Expr] | None = None,
                       ) -> tuple[dict[sympy.Symbol, sympy.Expr], list[sympy.Symbol]]:
    """Express the per-dimension rank (or blockIdx under set_cluster) in the linear ``rank``."""
    cx, cy, _ = cluster
    linear = {0: sympy.Mod(RANK, cx) if (cy, cluster[2]) != (1, 1) else RANK,
              1: sympy.Mod(sympy.floor(RANK / cx), cy), 2: sympy.floor(RANK / (cx * cy))}
    if cx == 1:
        linear[0] = sympy.Integer(0)
    subs: dict[sympy.Symbol, sympy.Expr] = {}
    extra: list[sympy.Symbol] = []
    extra_bounds = {} if extra_bounds is None else extra_bounds
    for ax, sym in im.loop:
        pt, d = ax.ptype, ax.ptype.dim
        if pt.is_rank and d is not None:
            subs[sym] = linear[d] if cluster[d] > 1 else sympy.Integer(0)
        elif pt.is_block and d is not None and cluster[d] > 1:
            cid = index_symbol(f"cid{'xyz'[d]}")
            subs[sym] = cid * cluster[d] + linear[d]
            extra.append(cid)
            extra_bounds[cid] = sympy.ceiling(ax.extent / cluster[d])
    return subs, extra


def _operand_forms(view: TensorView, cluster: tuple[int, int, int],
                   alive_parts: list[tuple[sympy.Boolean, Any]]
                   ) -> tuple[dict[str, sympy.Expr], sympy.Boolean, list[sympy.Symbol],
                              dict[sympy.Symbol, sympy.Expr]]:
    im = index_map(view)
    with sympy.evaluate(False):
        return _operand_forms_unevaluated(im, cluster, alive_parts)


def _operand_forms_unevaluated(im: IndexMap, cluster: tuple[int, int, int],
                               alive_parts: list[tuple[sympy.Boolean, Any]]) -> tuple[dict[str, sympy.Expr], sympy.Boolean, list[sympy.Symbol],
                                          dict[sympy.Symbol, sympy.Expr]]:
    extra_bounds: dict[sympy.Symbol, sympy.Expr] = {}
    subs, extra = _rank_substitution(im, cluster, extra_bounds)
    bulk = {s: sympy.Integer(0) for a, s in im.loop
            if a.ptype in (ParallelType.Bulk, ParallelType.Multicast)}
    every = {**bulk, **subs}
    origin = {name: sympy.sympify(e).xreplace(every) for name, e in im.logical.items()
              if name not in im.broadcast}
    # k-loop symbols: they index only K; every CTA of a cluster walks them in lockstep
    mn = set().union(*[sympy.sympify(e).free_symbols for n, e in im.logical.items() if n != "K"])
    k_only = sympy.sympify(im.logical.get("K", 0)).free_symbols - mn
    cta_level = [s for a, s in im.loop if s not in bulk and s not in subs and s not in k_only]
    # a predicate on k-loop symbols alone bounds the K loop; it is not about the CTA
    parts = [(p.xreplace(every), f) for p, f in zip(im.predicates, im.predicate_facts, strict=True)
             if not (p.free_symbols & set(im.symbols)) <= k_only]
    alive = sympy.And(*[p for p, _ in parts])
    alive_parts[:] = parts
    # an origin that does not depend on the rank is equal for every CTA of the cluster
    origin = {n: e for n, e in origin.items() if RANK in e.free_symbols}
    # a k-loop symbol matters only if the ranks' origins depend on it (K offsets per CTA)
    same_syms = set().union(*[e.free_symbols for e in origin.values()])
    variables = cta_level + extra + [s for s in im.symbols if s in k_only and s in same_syms]
    bounds = {s: b for s, b in im.bounds.items() if s in variables} | extra_bounds
    return origin, alive, variables, bounds


def _same(origin: dict[str, sympy.Expr], a: sympy.Expr, b: sympy.Expr) -> sympy.Boolean:
    return sympy.And(*[sympy.Eq(e.xreplace({RANK: a}), e.xreplace({RANK: b}))
                       for e in origin.values()])


# -- the derivation ------------------------------------------------------------------------


def derive(
    fusion: GemmFusion,
    mode: MulticastMode | str = MulticastMode.LEADER,
    *,
    symbolic: GemmFusion | None = None,
    params: dict[str, Any] | None = None,
    table: bool = True,
    closed: bool = True,
) -> MulticastDerivation:
    """Derive issue predicates and masks for A and B of a (concrete) scheduled ``fusion``.

    ``symbolic`` is the same schedule built with its integer parameters as symbols (see
    :func:`symbolic_instance`); when given, the closed forms are derived over the parameter
    names, which is where the theorems apply cleanly, and evaluated at ``params``.
    """
    mode = MulticastMode(mode) if isinstance(mode, str) else mode
    params = dict(params or {})
    launch = infer_launch(fusion)
    cs = launch.cluster_size
    a, b = fusion.operands()
    sym_views = symbolic.operands() if symbolic is not None else (a, b)
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in params.items()
              if isinstance(v, int) and not isinstance(v, bool)}
    out: dict[str, OperandMulticast] = {}
    for name, view, sview in (("A", a, sym_views[0]), ("B", b, sym_views[1])):
        out[name] = _derive_operand(name, view, sview, launch.cluster, mode, values, fusion, table,
                                    closed)
    return MulticastDerivation(params, cs, mode, out)


class _LazyGeneral:
    """The general forms, built on first use (a closed form usually makes them unneeded)."""

    def __init__(self, origin: dict[str, sympy.Expr], alive: sympy.Boolean, cs: int) -> None:
        self.origin, self.alive, self.cs = origin, alive, cs
        self._forms: tuple[Any, ...] | None = None

    @property
    def forms(self) -> tuple[Any, ...]:
        if self._forms is None:
            self._forms = _general(self.origin, self.alive, self.cs)
        return self._forms


def _general(origin: dict[str, sympy.Expr], alive: sympy.Boolean, cs: int
             ) -> tuple[sympy.Boolean, sympy.Boolean, sympy.Expr, sympy.Expr, sympy.Expr]:
    # built unevaluated: these are printed and compiled, never simplified (and sympy's
    # canonicalisation of Piecewise over floor/Mod costs seconds)
    with sympy.evaluate(False):
        return _general_unevaluated(origin, alive, cs)


def _general_unevaluated(origin: dict[str, sympy.Expr], alive: sympy.Boolean, cs: int
                         ) -> tuple[sympy.Boolean, sympy.Boolean, sympy.Expr, sympy.Expr, sympy.Expr]:
    same = sympy.And(_same(origin, R1, R2), alive.xreplace({RANK: R1}), alive.xreplace({RANK: R2}))
    same_r = same.xreplace({R1: _R, R2: RANK})
    before = sympy.Sum(sympy.Piecewise((1, sympy.And(same_r, sympy.Lt(_R, RANK))), (0, True)),
                       (_R, 0, cs - 1))
    issue = sympy.And(alive, sympy.Eq(before, 0))
    mask = sympy.Sum(sympy.Piecewise((2**_R, same_r), (0, True)), (_R, 0, cs - 1))
    count = sympy.Sum(sympy.Piecewise((1, same_r), (0, True)), (_R, 0, cs - 1))
    return same, issue, mask, before, count


def _derive_operand(
    name: str, view: TensorView, sview: TensorView, cluster: tuple[int, int, int],
    mode: MulticastMode, values: dict[sympy.Symbol, int], fusion: GemmFusion, table: bool,
    closed: bool = True,
) -> OperandMulticast:
    cs = cluster[0] * cluster[1] * cluster[2]
    fkey = (id(sview), sview is view or sview.structure(), cluster)
    if fkey not in _FORMS or _FORMS[fkey][0] is not sview:
        alive_parts: list[tuple[sympy.Boolean, Any]] = []
        origin, alive, variables, bounds = _operand_forms(sview, cluster, alive_parts)
        rank_axes = [a for a in sview.loop if a.ptype.is_rank and a.ptype.dim is not None
                     and cluster[a.ptype.dim] > 1]
        rank_extent = rank_axes[0].extent if len(rank_axes) == 1 else sympy.Integer(cs)
        _FORMS[fkey] = (sview, origin, alive, variables, bounds, alive_parts, rank_extent,
                        _LazyGeneral(origin, alive, cs))
    (_, origin, alive, variables, bounds, alive_parts, rank_extent, general) = _FORMS[fkey]
    rows = [a for a in view.loop if a.ptype is ParallelType.Bulk]
    box_elems = sympy.Mul(*[a.extent for a in rows if not a.is_broadcast])
    op = OperandMulticast(
        operand=name, mode=mode, cluster_size=cs, variables=[RANK, *variables], origin=origin,
        alive=alive, general=general,
        box_bytes=int(box_elems) * fusion.dtype.nbytes if box_elems.is_Integer else 0,
        alive_parts=alive_parts, bounds=bounds, rank_extent=rank_extent,
    )
    if cs > 1 and not closed:
        op.notes.append("closed form not asked for")
    elif cs > 1:
        from tilec.transforms.multicast_closed import close  # the proofs-based narrowing

        close(op, values)
    else:
        op.closed_form, op.issue, op.mask = True, alive, sympy.Piecewise((1, alive), (0, True))
        op.slice_index, op.slice_count = sympy.Integer(0), sympy.Integer(1)
        op.notes.append("cluster of one CTA: no multicast")
    # the concrete launch: evaluate, and check the closed form against the general form
    if table:
        if view is sview:
            op.table = _table(op, origin, alive, variables, bounds, {}, cs)
        else:
            op.table = _table(op, origin, alive, variables, bounds, values, cs)
    op.variables = [RANK, *variables]
    return op


def _points(variables: list[sympy.Symbol], bounds: dict[sympy.Symbol, sympy.Expr]
            ) -> Iterator[tuple[int, ...]]:
    return itertools.product(*[range(int(bounds[v])) for v in variables])


_COMPILED: dict[tuple[Any, ...], Callable[..., tuple[Any, ...]]] = {}


def _compiled(exprs: list[Any], args: list[sympy.Symbol]) -> Callable[..., tuple[Any, ...]]:
    """compile_int, memoised: the symbolic forms are shared by every launch of a schedule."""
    key = (tuple(exprs), tuple(args))
    fn = _COMPILED.get(key)
    if fn is None:
        fn = _COMPILED[key] = compile_int(exprs, args)
    return fn


def _table(op: OperandMulticast, origin: dict[str, sympy.Expr], alive: sympy.Boolean,
           variables: list[sympy.Symbol], bounds: dict[sympy.Symbol, sympy.Expr],
           values: dict[sympy.Symbol, int], cs: int) -> list[Row]:
    """Every (variables, rank) of the concrete launch, by brute force over ranks."""
    used = list(variables)
    # parameters are passed as arguments: no sympy evaluation at concrete values (slow)
    psyms = sorted(values, key=str)
    pvals = [values[p] for p in psyms]
    key_fn: Callable[..., tuple[Any, ...]] = _compiled([*origin.values(), alive],
                                                       [RANK, *used, *psyms])
    closed_fn = None
    if op.closed_form:
        issue, mask, sidx, scount = op.issue, op.mask, op.slice_index, op.slice_count
        exprs = [sympy.sympify(e) for e in
                 (issue, mask, sidx if sidx is not None else 0, scount if scount is not None else 1)]
        closed_fn = _compiled(exprs, [RANK, *used, *psyms])
    bound_fn = _compiled([bounds[v] for v in used], psyms)
    conc_bounds = dict(zip(used, bound_fn(*pvals), strict=True))
    names = [str(v) for v in used]
    rows: list[Row] = []
    for point in _points(used, conc_bounds):
        keys = [key_fn(r, *point, *pvals) for r in range(cs)]
        for r in range(cs):
            live = bool(keys[r][-1])
            group = [q for q in range(cs) if live and keys[q][-1] and keys[q][:-1] == keys[r][:-1]]
            issue_v = live and (group[0] == r or op.mode is MulticastMode.SLICED)
            mask_v = sum(1 << q for q in group)
            row = Row({**dict(zip(names, point, strict=True)), "rank": r}, live, issue_v, mask_v,
                      group.index(r) if live else 0, len(group) if live else 0)
            if closed_fn is not None:
                ci, cm, csi, csc = closed_fn(r, *point, *pvals)
                sliced = op.mode is MulticastMode.SLICED
                if (bool(ci), int(cm)) != (row.issue, row.mask) or (
                        sliced and live and (int(csi), int(csc)) != (row.slice_index, row.slice_count)):
                    # never report an unsound closed form: fall back to the general form
                    op.closed_form = False
                    op.notes.append(
                        f"closed form disagreed with the general form at {row.point}: "
                        f"issue {bool(ci)} vs {row.issue}, mask {int(cm):#b} vs {row.mask:#b}; "
                        f"using the general form")
                    closed_fn = None
            rows.append(row)
    return rows


# -- schedules built over symbols ----------------------------------------------------------


_SYMBOLIC: dict[tuple[Any, ...], GemmFusion | None] = {}
_LAST_SYMBOLIC_ERROR: list[str] = [""]
_FORMS: dict[tuple[Any, ...], tuple[Any, ...]] = {}


def symbolic_instance(schedule: Callable[..., GemmFusion], params: dict[str, Any]
                      ) -> GemmFusion | None:
    """The schedule rebuilt with every positive integer parameter a positive integer symbol (a
    parameter of 0 or less stays as it is: a positive symbol cannot stand for it, and a schedule
    may branch on it, as the seed's GROUP=0 does).

    Returns None when the schedule cannot be built symbolically (it branches on a value, say).
    """
    sig = inspect.signature(schedule)
    sym_params = {}
    for k, v in params.items():
        if k not in sig.parameters:
            continue
        if isinstance(v, int) and not isinstance(v, bool) and v > 0:
            sym_params[k] = sympy.Symbol(k, integer=True, positive=True)
        else:
            sym_params[k] = v
    try:
        return schedule(**sym_params)
    except (TilecError, TypeError, ValueError) as e:
        _LAST_SYMBOLIC_ERROR[0] = f"{type(e).__name__}: {e}"
        return None


def derive_from_file(path: str | Path, overrides: dict[str, Any] | None = None,
                     mode: MulticastMode | str = MulticastMode.LEADER,
                     table: bool = True, closed: bool = True) -> MulticastDerivation:
    """Load a schedule file, build it concretely and symbolically, and derive."""
    from tilec.loader import load_schedule

    mode = MulticastMode(mode) if isinstance(mode, str) else mode
    return _derive_loaded(path, load_schedule(path, overrides), mode, table, closed)


def masks_json(path: str | Path, overrides: dict[str, Any] | None = None,
               mode: MulticastMode | str = MulticastMode.LEADER) -> str:
    """``tilec masks --json`` as text, kept on disk between runs (see :mod:`tilec.cache`)."""
    from tilec import cache

    mode = MulticastMode(mode) if isinstance(mode, str) else mode
    key = cache.masks_key(path, dict(overrides or {}), mode.value)
    text = cache.read(key)
    if text is None:
        text = json.dumps(derive_from_file(path, overrides, mode).to_json(), separators=(",", ":"))
        cache.write(key, text)
    return text


def _derive_loaded(path: str | Path, loaded: Any, mode: MulticastMode, table: bool,
                   closed: bool) -> MulticastDerivation:
    p = Path(path).resolve()
    shape = tuple(sorted((k, v) for k, v in loaded.params.items()
                         if not isinstance(v, int) or isinstance(v, bool)))
    key = (str(p), p.stat().st_mtime, shape)
    if key not in _SYMBOLIC:
        _SYMBOLIC[key] = symbolic_instance(loaded.module.schedule, loaded.params)
    sym = _SYMBOLIC[key]
    if infer_launch(loaded.fusion).cluster_size == 1:
        raise LaunchError(
            f"{Path(path).name}: the schedule launches no cluster (cluster of 1 CTA): "
            f"there is nothing to multicast; bind CIDx/RankX or call fusion.set_cluster()")
    d = derive(loaded.fusion, mode, symbolic=sym, params=loaded.params, table=table,
               closed=closed)
    if sym is None:
        for op in d.operands.values():
            op.notes.append("the schedule could not be built over symbolic parameters "
                            f"({_LAST_SYMBOLIC_ERROR[0]}): closed forms are over numbers")
    return d
