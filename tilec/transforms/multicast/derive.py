"""TMA multicast derivation: which CTAs of a cluster share an operand box, who issues, the mask.

Semantics (DESIGN.md, "Multicast derivation"; seed 004). For an operand tile loaded by TMA, read
off its index map with the Bulk indices at 0 (the box origin):

* ``alive(rank)``: every predicate of the index map holds at the box origin: the CTA's tile
  exists in this round *and* the CTA has K work at this loop point (a split-K part of an uneven
  split has fewer k-iterations; the predicate of that split is kept, with the K-loop variable it
  mentions). Only predicates over the serial K loop alone that hold at every k-iteration of the
  launch are dropped (they gate nobody).
* ``same(r1, r2)``: every non-Broadcast logical index of the box origin is equal for ranks r1 and
  r2 at the same loop point, and both are alive.
* **leader** mode: ``issue(rank) = alive(rank) and not any(same(r, rank) for r < rank)``,
  ``mask(rank) = sum(same(r, rank) << r)``.
* **sliced** mode: each of the n members of a group issues slice ``#{r < rank: same(r, rank)}``
  of ``n`` of the box (cut along its outermost dimension) with the group's mask.

The **general form** is that definition unrolled over the cluster's ranks (always correct). The
**closed form** (:mod:`tilec.transforms.multicast.closed`) exists when the sharing groups are the
same at every loop point of the launch; it is built from the rank structure of those groups and
proved by the theorems where they reach, else checked over the whole launch.

A derivation is a value: :func:`derive` returns frozen objects and never changes them afterwards.

Example::

    >>> from tilec.ir import GemmFusion, ParallelType as P
    >>> f = GemmFusion(M=256, N=512, K=64, dtype="fp16")
    >>> _ = f.c.split(0, 64).split(2, 64).split(4, 64).reorder([0, 2, 4, 1, 3, 5])
    >>> _ = f.c.parallelize(0, P.BIDy).parallelize(1, P.BIDx)
    >>> _ = f.c.parallelize(3, P.Mma).parallelize(4, P.Mma).parallelize(5, P.Mma)
    >>> _ = f.set_cluster(2); f.propagate()
    >>> d = derive(f, "leader")
    >>> d.operands["A"].issue, d.operands["A"].mask
    (Eq(Mod(rank, 2), 0), 3*2**(2*floor(rank/2)))
    >>> d.operands["B"].issue, d.operands["B"].mask
    (True, 2**rank)
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, NamedTuple

import sympy

from tilec.errors import TilecError, UnsupportedError
from tilec.ir import GemmFusion, IndexMap, ParallelType, index_map, index_symbol, infer_launch
from tilec.ir.tensorview import TensorView
from tilec.ir.types import MulticastMode
from tilec.lru import LRU
from tilec.proofs.build import subst
from tilec.proofs.evaluate import compile_int
from tilec.proofs.trace import text

if TYPE_CHECKING:
    from tilec.proofs import Fact
    from tilec.transforms.multicast.closed import ClosedForm, Scope

RANK = index_symbol("rank")
R1, R2 = index_symbol("r1"), index_symbol("r2")
_R = index_symbol("r")
# the names a derivation's expressions use for its own variables: a schedule parameter may not
# take one of them (its symbol would be the same sympy symbol)
RESERVED = ("rank", "r1", "r2", "r", "j", "t")


class Row(NamedTuple):
    """One CTA at one loop point of the launch (a tuple: a launch has thousands of rows, and a
    frozen dataclass takes ten times as long to build)."""

    point: dict[str, int]  # the variables (i_rt, cidx, ...) and rank
    alive: bool
    issue: bool
    mask: int
    slice_index: int | None
    slice_count: int | None


@dataclass(frozen=True)
class AlivePart:
    """One predicate of the index map at the box origin, in ``rank`` and the variables.

    ``exact_when = (E, f)``: the predicate comes from a split of extent E by f, and vanishes when
    ``E % f == 0`` (the closed form then drops it, stating that fact)."""

    pred: sympy.Boolean
    exact_when: tuple[sympy.Expr, sympy.Expr]


@dataclass(frozen=True)
class OperandForms:
    """What the operand's index map says, for every launch of one schedule structure."""

    origin: dict[str, sympy.Expr]  # rank-dependent box origin per non-broadcast logical axis
    parts: tuple[AlivePart, ...]  # predicates that mention the CTA (rank or its loop point)
    k_parts: tuple[AlivePart, ...]  # predicates over the serial K loop alone (same for all CTAs)
    cta_vars: tuple[sympy.Symbol, ...]  # the CTA's loop point: rounds, cluster and block indices
    k_vars: tuple[sympy.Symbol, ...]  # serial K-loop symbols
    bounds: dict[sympy.Symbol, sympy.Expr]  # exclusive upper bounds of all of the above
    rank_extent: sympy.Expr  # the number of ranks, as the schedule writes it (CN, CLUSTER, 4)
    rank_dims: tuple[sympy.Expr, ...]  # per clustered hardware dimension, its rank extent


@dataclass(frozen=True)
class OperandMulticast:
    """The derivation for one operand. Expressions are over ``variables`` and the parameters."""

    operand: str
    mode: MulticastMode
    cluster_size: int
    variables: tuple[sympy.Symbol, ...]  # rank first, then the loop point
    origin: dict[str, sympy.Expr]
    alive: sympy.Boolean
    alive_parts: tuple[AlivePart, ...]
    bounds: dict[sympy.Symbol, sympy.Expr]
    rank_extent: sympy.Expr
    rank_dims: tuple[sympy.Expr, ...]
    box_bytes: int
    table: tuple[Row, ...]
    closed: ClosedForm | None
    notes: tuple[str, ...] = ()
    proof: tuple[dict[str, str], ...] = ()
    narrowed_same: sympy.Boolean | None = None
    forms_key: Any = field(default=None, repr=False, compare=False)

    @property
    def closed_form(self) -> bool:
        return self.closed is not None

    @property
    def issue(self) -> sympy.Boolean:
        return self.closed.issue if self.closed else sympy.false

    @property
    def mask(self) -> sympy.Expr:
        return self.closed.mask if self.closed else sympy.S.Zero

    @property
    def slice_index(self) -> sympy.Expr | None:
        return self.closed.slice_index if self.closed else None

    @property
    def slice_count(self) -> sympy.Expr | None:
        return self.closed.slice_count if self.closed else None

    @property
    def facts(self) -> tuple[Fact, ...]:
        """The facts about the parameters the closed form rests on (objects, printable)."""
        return self.closed.facts if self.closed else ()

    @property
    def scope(self) -> Scope | None:
        """Where the closed form holds (:class:`~tilec.transforms.multicast.closed.Scope`), None
        without one."""
        return self.closed.scope if self.closed else None

    @property
    def guard(self) -> sympy.Boolean:
        """What a run-time guard tests when sizes are only known at launch: a proved (or
        narrowing) closed form's facts as one condition (true when it rests on none); for a form
        checked at this launch only, that launch (its parameters at their values)."""
        return self.closed.guard if self.closed else sympy.true

    @functools.cached_property
    def _general(self) -> tuple[Any, ...]:
        return _general(self.origin, self.alive, self.cluster_size)

    @property
    def same(self) -> sympy.Boolean:
        """same(r1, r2) over the variables: origins equal and both alive (the general form)."""
        return self._general[0]

    @property
    def general_issue(self) -> sympy.Boolean:
        # sliced: every alive member of a group issues its own slice
        return self.alive if self.mode is MulticastMode.SLICED else self._general[1]

    @property
    def general_mask(self) -> sympy.Expr:
        return self._general[2]

    @property
    def general_slice_index(self) -> sympy.Expr:
        return self._general[3]

    @property
    def general_slice_count(self) -> sympy.Expr:
        return self._general[4]

    def forms(self) -> tuple[sympy.Boolean, sympy.Expr, sympy.Expr | None, sympy.Expr | None]:
        """The forms a kernel should use: closed where it holds, else general."""
        if self.closed:
            return self.issue, self.mask, self.slice_index, self.slice_count
        if self.mode is MulticastMode.SLICED:
            return (self.general_issue, self.general_mask, self.general_slice_index,
                    self.general_slice_count)
        return self.general_issue, self.general_mask, None, None


@dataclass(frozen=True)
class MulticastDerivation:
    params: dict[str, Any]
    cluster_size: int
    mode: MulticastMode
    operands: dict[str, OperandMulticast]

    def to_json(self) -> dict[str, Any]:
        """The ``tilec masks --json`` object (see docs/cli.md)."""
        ops = {}
        sliced = self.mode is MulticastMode.SLICED
        # one toggle of sympy's evaluate flag for all facts: each toggle clears sympy's cache
        with sympy.evaluate(False):
            facts = {name: [_fact_text(f) for f in op.facts] for name, op in self.operands.items()}
            would = {name: [_fact_text(f) for f in op.closed.would_prove] if op.closed else []
                     for name, op in self.operands.items()}
        for name, op in self.operands.items():
            issue, mask, sidx, scount = op.forms()
            ops[name] = {
                "closed_form": op.closed_form,
                "scope": op.scope.value if op.scope else None,
                "variables": [str(v) for v in op.variables],
                "issue_predicate": _text(issue),
                "mask": _text(mask),
                "slice_index": _text(sidx) if sliced and sidx is not None else None,
                "slice_count": _text(scount) if sliced and scount is not None else None,
                "facts": facts[name],
                "would_prove": would[name],
                "proof": [dict(s) for s in op.proof],
                "table": [
                    {**row.point, "alive": row.alive, "issue": row.issue, "mask": row.mask,
                     "slice_index": row.slice_index if sliced else None,
                     "slice_count": row.slice_count if sliced else None}
                    for row in op.table
                ],
            }
        return {"params": self.params, "cluster_size": self.cluster_size,
                "mode": self.mode.value, "operands": ops}


def _fact_text(fact: Fact) -> str:
    """A fact as sympy reads it back (``Eq(Mod(SMS, CN), 0)``; ``CN > 0`` left unevaluated)."""
    with sympy.evaluate(False):  # (no toggle, no cache clear, inside the caller's block)
        return text(fact.condition())


@functools.lru_cache(maxsize=4096)
def _text(expr: sympy.Basic) -> str:
    """str() of a form, memoised: a schedule's general forms are printed for every launch."""
    return text(expr)


# -- reading the operand's index map -------------------------------------------------------


def _rank_substitution(im: IndexMap, cluster: tuple[int, int, int],
                       extra_bounds: dict[sympy.Symbol, sympy.Expr],
                       ) -> tuple[dict[sympy.Symbol, sympy.Expr], list[sympy.Symbol],
                                  list[sympy.Expr]]:
    """Express the per-dimension rank (or blockIdx under set_cluster) in the linear ``rank``."""
    cx, cy, _ = cluster
    linear = {0: sympy.Mod(RANK, cx) if (cy, cluster[2]) != (1, 1) else RANK,
              1: sympy.Mod(sympy.floor(RANK / cx), cy), 2: sympy.floor(RANK / (cx * cy))}
    if cx == 1:
        linear[0] = sympy.Integer(0)
    subs: dict[sympy.Symbol, sympy.Expr] = {}
    extra: list[sympy.Symbol] = []
    dims: dict[int, sympy.Expr] = {}
    for ax, sym in im.loop:
        pt, d = ax.ptype, ax.ptype.dim
        if pt.is_rank and d is not None:
            subs[sym] = linear[d] if cluster[d] > 1 else sympy.Integer(0)
            if cluster[d] > 1:
                dims[d] = ax.extent
        elif pt.is_block and d is not None and cluster[d] > 1:
            cid = index_symbol(f"cid{'xyz'[d]}")
            subs[sym] = cid * cluster[d] + linear[d]
            extra.append(cid)
            extra_bounds[cid] = sympy.ceiling(ax.extent / cluster[d])
            dims[d] = sympy.Integer(cluster[d])
    return subs, extra, [dims[d] for d in sorted(dims)]


def operand_forms(view: TensorView, cluster: tuple[int, int, int]) -> OperandForms:
    """The rank-dependent box origin and the alive predicates of one operand view."""
    im = index_map(view)
    with sympy.evaluate(False):
        return _operand_forms(im, cluster)


def _operand_forms(im: IndexMap, cluster: tuple[int, int, int]) -> OperandForms:
    extra_bounds: dict[sympy.Symbol, sympy.Expr] = {}
    subs, extra, rank_dims = _rank_substitution(im, cluster, extra_bounds)
    bulk = {s: sympy.Integer(0) for a, s in im.loop
            if a.ptype in (ParallelType.Bulk, ParallelType.Multicast)}
    every = {**bulk, **subs}
    origin = {name: sympy.sympify(e).xreplace(every) for name, e in im.logical.items()
              if name not in im.broadcast}
    # serial K-loop symbols: they index only K and no hardware index runs them; every CTA of a
    # cluster walks them in lockstep. A K-only axis bound to a CTA index (the part of a split-K)
    # is part of the CTA's identity instead.
    mn = set().union(*[sympy.sympify(e).free_symbols for n, e in im.logical.items() if n != "K"])
    k_only = sympy.sympify(im.logical.get("K", 0)).free_symbols - mn
    serial_k = [s for a, s in im.loop if s in k_only and s not in every
                and not a.ptype.is_hardware_index]
    cta_vars = [s for a, s in im.loop if s not in every and s not in serial_k]
    # every predicate at the box origin: a CTA whose tile or K part is empty there is dead
    parts: list[AlivePart] = []
    k_parts: list[AlivePart] = []
    cta = {RANK, *cta_vars, *extra}
    for p, f in zip(im.predicates, im.predicate_facts, strict=True):
        q = p.xreplace(every)
        if q is sympy.true or not q.free_symbols & (cta | set(serial_k)):
            continue  # a predicate of Bulk indices alone holds at the origin
        (parts if q.free_symbols & cta else k_parts).append(AlivePart(q, f))
    # an origin coordinate that does not depend on the rank is equal for the whole cluster
    origin = {n: e for n, e in origin.items() if RANK in e.free_symbols}
    bounds = {s: b for s, b in im.bounds.items() if s in cta_vars or s in serial_k} | extra_bounds
    rank_extent = sympy.Mul(*rank_dims) if rank_dims else sympy.Integer(1)
    return OperandForms(origin, tuple(parts), tuple(k_parts), (*cta_vars, *extra),
                        tuple(serial_k), bounds, rank_extent, tuple(rank_dims))


def same_box(origin: dict[str, sympy.Expr], a: sympy.Expr, b: sympy.Expr) -> sympy.Boolean:
    """Origins equal for ranks ``a`` and ``b``, left unevaluated (what ``xreplace`` and ``Eq``
    build under ``sympy.evaluate(False)``, without toggling that flag: each toggle clears
    sympy's cache)."""
    return sympy.And(*[sympy.Eq(subst(e, {RANK: a}), subst(e, {RANK: b}), evaluate=False)
                       for e in origin.values()])


class FormsCache:
    """Operand forms keyed by the view's structure (uid-free content) and the cluster: every
    launch of one schedule structure shares them. Explicit, so that a caller owns its lifetime."""

    def __init__(self, size: int = 64) -> None:
        self._forms: LRU[OperandForms] = LRU(size)

    def get(self, view: TensorView, cluster: tuple[int, int, int]) -> tuple[Any, OperandForms]:
        key = (view.structure(), cluster)
        return key, self._forms.get_or(key, lambda: operand_forms(view, cluster))


FORMS = FormsCache()


# -- the derivation ------------------------------------------------------------------------


def derive(
    fusion: GemmFusion,
    mode: MulticastMode | str = MulticastMode.LEADER,
    *,
    symbolic: GemmFusion | None = None,
    params: dict[str, Any] | None = None,
    table: bool = True,
    closed: bool = True,
    prove: bool = True,
    cluster_k_ranges: bool = False,
) -> MulticastDerivation:
    """Derive issue predicates and masks for A and B of a (concrete) scheduled ``fusion``.

    ``cluster_k_ranges``: the caller runs a ``fusion.decompose(...)`` split so that every CTA of
    a cluster works on one group of ``cluster`` consecutive tiles and one K range at a time (the
    CUDA lowering's cluster work split); the derivation over the schedule's walk then holds per
    group. Without it a cluster schedule with a split-K or Stream-K decomposition is refused.

    ``symbolic`` is the same schedule built with its integer parameters as symbols (see
    :func:`symbolic_instance`); when given, the forms are over the parameter names (where the
    theorems apply) and evaluated at ``params``. The table covers every CTA of the launch at
    every loop point; a closed form is reported only where it equals it everywhere. ``prove``:
    also prove the closed forms with the theorems (for every launch that meets their facts).
    """
    if not isinstance(fusion, GemmFusion):
        raise TilecError(f"derive: fusion must be a GemmFusion but got {type(fusion).__name__} "
                         f"{fusion!r}")
    mode = MulticastMode(mode)
    if symbolic is not None and not isinstance(symbolic, GemmFusion):
        raise TilecError(f"derive: symbolic must be a GemmFusion or None but got {symbolic!r}")
    params = dict(params or {})
    check_params(params)
    launch = infer_launch(fusion)
    cs = launch.cluster_size
    kind = fusion.decomposition.describe()
    if cs > 1 and kind not in ("dp", "auto") and not cluster_k_ranges:
        raise UnsupportedError(
            f"multicast needs the CTAs of a cluster on one K range, but fusion.decompose("
            f"{kind!r}) hands them different K parts at lowering, which the schedule's index map "
            f"does not show: split K in the schedule instead (split rKo and bind the part to a "
            f"CTA index) so that the derivation sees each CTA's K range, or launch no cluster")
    a, b = fusion.operands()
    sym_views = symbolic.operands() if symbolic is not None else (a, b)
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in params.items()
              if isinstance(v, int) and not isinstance(v, bool)}
    operands = (("A", a, sym_views[0]), ("B", b, sym_views[1]))
    # the forms and alive conditions of both operands first, in one toggle of sympy's evaluate
    # flag (each toggle clears sympy's cache: none then falls between the operands' proofs)
    with sympy.evaluate(False):
        read = {name: _read_operand(sview, launch.cluster, {} if symbolic is None else values)
                for name, _, sview in operands}
    out = {name: _derive_operand(name, view, *read[name], launch.cluster, mode, values, fusion,
                                 table, closed, prove, concrete=symbolic is None)
           for name, view, _ in operands}
    return MulticastDerivation(params, cs, mode, out)


def check_params(params: dict[str, Any]) -> None:
    """A parameter named like a derivation variable would be confused with it: refuse."""
    from tilec.errors import ParamError

    taken = {*RESERVED, "i_rt", "cidx", "cidy", "cidz", "bidx", "bidy", "bidz", "rank_x",
             "rank_y", "rank_z"}
    for k in params:
        if k in taken or k.startswith("i_"):
            raise ParamError(
                f"schedule parameter {k!r} has the name of a variable of the multicast derivation "
                f"(rank, r1, r2, cidx, bidx, rank_x, i_<axis>, ...): rename the parameter")


def _selected_parts(forms: OperandForms, values: dict[sympy.Symbol, int]
                    ) -> tuple[AlivePart, ...]:
    """The alive predicates of this launch: a K-loop predicate that holds at every k-iteration
    (``i_Ko*BK < K``) gates nobody and is left out; one that fails somewhere is kept."""
    kept = list(forms.parts)
    for part in forms.k_parts:
        syms = sorted(part.pred.free_symbols & set(forms.k_vars), key=str)
        psyms = sorted(part.pred.free_symbols - set(syms), key=str)
        if any(p not in values for p in psyms):
            kept.append(part)
            continue
        pv = [values[p] for p in psyms]
        fn = compile_int([part.pred], [*syms, *psyms])
        ext = compile_int([forms.bounds[s] for s in syms], psyms)(*pv)
        if not all(fn(*pt, *pv)[0] for pt in itertools.product(*[range(int(e)) for e in ext])):
            kept.append(part)
    return tuple(kept)


def _read_operand(sview: TensorView, cluster: tuple[int, int, int],
                  values: dict[sympy.Symbol, int]
                  ) -> tuple[Any, OperandForms, tuple[AlivePart, ...], sympy.Boolean]:
    """The operand's forms, its alive predicates at this launch and their conjunction (built
    unevaluated: a conjunction to print and compile, not to decide)."""
    key, forms = FORMS.get(sview, cluster)
    parts = _selected_parts(forms, values)
    with sympy.evaluate(False):
        alive = sympy.And(*[p.pred for p in parts])
    return key, forms, parts, alive


def _derive_operand(
    name: str, view: TensorView, key: Any, forms: OperandForms, parts: tuple[AlivePart, ...],
    alive: sympy.Boolean, cluster: tuple[int, int, int], mode: MulticastMode,
    values: dict[sympy.Symbol, int], fusion: GemmFusion, table: bool, closed: bool, prove: bool,
    concrete: bool,
) -> OperandMulticast:
    from tilec.transforms.multicast.closed import derive_closed

    cs = cluster[0] * cluster[1] * cluster[2]
    used = set().union(alive.free_symbols, *[e.free_symbols for e in forms.origin.values()])
    variables = (*forms.cta_vars, *[s for s in forms.k_vars if s in used])
    bounds = {v: forms.bounds[v] for v in variables}
    rows_ = [a for a in view.loop if a.ptype is ParallelType.Bulk]
    box_elems = sympy.Mul(*[a.extent for a in rows_ if not a.is_broadcast])
    rows = launch_table(mode, forms.origin, alive, variables, bounds, {} if concrete else values, cs) \
        if table or closed else ()
    op = OperandMulticast(
        operand=name, mode=mode, cluster_size=cs, variables=(RANK, *variables),
        origin=forms.origin, alive=alive, alive_parts=parts, bounds=bounds,
        rank_extent=forms.rank_extent, rank_dims=forms.rank_dims,
        box_bytes=int(box_elems) * fusion.dtype.nbytes if box_elems.is_Integer else 0,
        table=tuple(rows), closed=None, forms_key=key)
    if not closed:
        return _replace(op, notes=("closed form not asked for",), table=op.table if table else ())
    result = derive_closed(op, forms, {} if concrete else values, prove)
    return _replace(op, closed=result.closed, notes=result.notes, proof=result.proof,
                    narrowed_same=result.narrowed, table=op.table if table else ())


def _replace(op: OperandMulticast, **kw: Any) -> OperandMulticast:
    from dataclasses import replace

    return replace(op, **kw)


def _points(variables: tuple[sympy.Symbol, ...], bounds: dict[sympy.Symbol, int]
            ) -> Iterator[tuple[int, ...]]:
    return itertools.product(*[range(int(bounds[v])) for v in variables])


def launch_values(bounds: dict[sympy.Symbol, sympy.Expr], variables: tuple[sympy.Symbol, ...],
                  values: dict[sympy.Symbol, int]) -> tuple[list[sympy.Symbol], list[int],
                                                            dict[sympy.Symbol, int]]:
    """The parameters as arguments, their values, and each variable's concrete extent."""
    psyms = sorted(values, key=str)
    pvals = [values[p] for p in psyms]
    ext = compile_int([bounds[v] for v in variables], psyms)(*pvals)
    return psyms, pvals, dict(zip(variables, ext, strict=True))


def launch_table(mode: MulticastMode, origin: dict[str, sympy.Expr], alive: sympy.Boolean,
           variables: tuple[sympy.Symbol, ...], bounds: dict[sympy.Symbol, sympy.Expr],
           values: dict[sympy.Symbol, int], cs: int) -> list[Row]:
    """Every (variables, rank) of the concrete launch, by brute force over ranks."""
    psyms, pvals, ext = launch_values(bounds, variables, values)
    # the origin only where the CTA is alive: at a padded tile an order's index maps may divide
    # by an extent that is zero there (a grouped raster's last band past the tile rows)
    alive_at = functools.partial(compile_int([alive], [*psyms, RANK, *variables]), *pvals)
    origin_at = functools.partial(compile_int([*origin.values()], [*psyms, RANK, *variables]),
                                  *pvals)
    keys = (*[str(v) for v in variables], "rank")
    sliced = mode is MulticastMode.SLICED
    rows: list[Row] = []
    ranks = range(cs)
    for point in _points(variables, ext):
        # the alive ranks by their box origin: a group is the ranks of one origin, in order
        live = [bool(alive_at(r, *point)[0]) for r in ranks]
        groups: dict[tuple[Any, ...], list[int]] = {}
        for r in ranks:
            if live[r]:
                groups.setdefault(origin_at(r, *point), []).append(r)
        member: dict[int, tuple[int, int, int]] = {}  # rank -> (its index, group mask, size)
        for group in groups.values():
            mask = sum(1 << q for q in group)
            member.update((q, (i, mask, len(group))) for i, q in enumerate(group))
        for r in ranks:
            at = dict(zip(keys, (*point, r), strict=True))
            if live[r]:
                i, mask, n = member[r]
                rows.append(Row(at, True, sliced or i == 0, mask, i, n))
            else:
                rows.append(Row(at, False, False, 0, 0, 0))
    return rows


def _general(origin: dict[str, sympy.Expr], alive: sympy.Boolean, cs: int
             ) -> tuple[sympy.Boolean, sympy.Boolean, sympy.Expr, sympy.Expr, sympy.Expr]:
    # built unevaluated: these are printed and compiled, never simplified (and sympy's
    # canonicalisation of Piecewise over floor/Mod costs seconds)
    with sympy.evaluate(False):
        same = sympy.And(same_box(origin, R1, R2), alive.xreplace({RANK: R1}),
                         alive.xreplace({RANK: R2}))
        same_r = same.xreplace({R1: _R, R2: RANK})
        before = sympy.Sum(sympy.Piecewise((1, sympy.And(same_r, sympy.Lt(_R, RANK))), (0, True)),
                           (_R, 0, cs - 1))
        issue = sympy.And(alive, sympy.Eq(before, 0))
        mask = sympy.Sum(sympy.Piecewise((2**_R, same_r), (0, True)), (_R, 0, cs - 1))
        count = sympy.Sum(sympy.Piecewise((1, same_r), (0, True)), (_R, 0, cs - 1))
    return same, issue, mask, before, count


# -- schedules built over symbols ----------------------------------------------------------


@dataclass(frozen=True)
class SymbolicInstance:
    """The schedule rebuilt over symbols, or why it could not be (``fusion`` None)."""

    fusion: GemmFusion | None
    why: str = ""


def symbolic_instance(schedule: Callable[..., GemmFusion], params: dict[str, Any]
                      ) -> GemmFusion | None:
    """The schedule rebuilt with every positive integer parameter a positive integer symbol (a
    parameter of 0 or less stays as it is: a positive symbol cannot stand for it, and a schedule
    may branch on it, as the seed's GROUP=0 does).

    Returns None when the schedule cannot be built symbolically (it branches on a value, say).
    """
    return symbolic_build(schedule, params).fusion


def symbolic_build(schedule: Callable[..., GemmFusion], params: dict[str, Any]
                   ) -> SymbolicInstance:
    """:func:`symbolic_instance` with the reason when the schedule cannot be built over symbols."""
    import inspect

    check_params(params)
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
        return SymbolicInstance(schedule(**sym_params))
    except (TilecError, TypeError, ValueError) as e:
        return SymbolicInstance(None, f"{type(e).__name__}: {e}")


def derive_loaded(loaded: Any, mode: MulticastMode | str = MulticastMode.LEADER,
                  table: bool = True, closed: bool = True,
                  symbolic: SymbolicInstance | None = None, prove: bool = True
                  ) -> MulticastDerivation:
    """Derive for a loaded schedule (:func:`tilec.runtime.loader.load_schedule`): built concretely and
    over symbols. Loading files and caching on disk are the caller's (the CLI's) business."""
    mode = MulticastMode(mode)
    sym = symbolic or symbolic_build(loaded.module.schedule, loaded.params)
    d = derive(loaded.fusion, mode, symbolic=sym.fusion, params=loaded.params, table=table,
               closed=closed, prove=prove)
    if sym.fusion is None:
        note = (f"the schedule could not be built over symbolic parameters ({sym.why}): "
                f"closed forms are over numbers")
        d = MulticastDerivation(d.params, d.cluster_size, d.mode, {
            k: _replace(op, notes=(*op.notes, note)) for k, op in d.operands.items()})
    return d
