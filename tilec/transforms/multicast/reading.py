"""Reading an operand's index map: the box origin with the Bulk indices at 0 and the rank in
place of the cluster's hardware indices, the alive predicates, the loop bounds and the rank's
extent, for every launch of one schedule structure (kept by the view's uid-free content)."""

from __future__ import annotations

from typing import Any

import sympy

from tilec.ir import IndexMap, ParallelType, index_map, index_symbol
from tilec.ir.tensorview import TensorView
from tilec.transforms.memo import TRANSFORMS
from tilec.transforms.multicast.records import AlivePart, OperandForms
from tilec.transforms.multicast.table import RANK


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


def forms_of(view: TensorView, cluster: tuple[int, int, int]) -> tuple[Any, OperandForms]:
    """The operand forms of ``view`` in ``cluster`` and their key: the view's structure (uid-free
    content) and the cluster, so every launch of one schedule structure shares them (the
    process's table, :data:`tilec.transforms.memo.TRANSFORMS`' ``multicast_forms``)."""
    key = (view.structure(), cluster)
    return key, TRANSFORMS.multicast_forms.get_or(key, lambda: operand_forms(view, cluster))
