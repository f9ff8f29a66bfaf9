"""The operand passes: :func:`multicast` (per operand, the derivation's multicast TMA load, CUDA
with clusters) and :func:`loads` (how each operand is loaded: its kind, chosen by
:func:`choose_load_kind` for Triton, its box, multicast and L2 hint)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import sympy

from tilec.errors import UnsupportedError
from tilec.ir.types import BLayout, DType, L2Hint, Target
from tilec.transforms.pipeline.state import Lowering
from tilec.transforms.plan import SIZES, LoadKind, MulticastMode, MulticastPlan, OperandLoad


def multicast(s: Lowering) -> Lowering:
    """Per operand, the multicast TMA load of the derivation (:mod:`tilec.transforms.multicast.derive`),
    with the schedule's parameters substituted; ``None`` where nothing is shared. Applies to the
    CUDA target with clusters of more than one CTA (Triton issues no multicast).

    before (examples/seed004_persistent_cluster.py, M = N = 512, SMS = 8, CUDA)::

        work: dp, grid 8

    after::

        work: dp, grid 8
        multicast B: leader, closed form, issue Eq(Mod(rank, 2), 0)

    >>> from tilec.runtime.loader import load_schedule
    >>> s = load_schedule("examples/seed004_persistent_cluster.py", dict(M=512, N=512, SMS=8))
    >>> from tilec.transforms.pipeline import LowerOptions
    >>> st = multicast(Lowering(s.fusion, LowerOptions(target="cuda", params=s.params)))
    >>> st.multicasts[0], st.multicasts[1].issue, st.multicasts[1].cluster_size
    (None, Eq(Mod(rank, 2), 0), 2)
    >>> triton = replace(st, options=LowerOptions(target="triton"))
    >>> multicast(triton) is triton  # Triton issues no multicast: the pass does not apply
    True
    """
    if s.target is not Target.CUDA or not s.options.multicast or s.ir.launch.cluster_size == 1:
        return s
    params, mode = dict(s.options.params), s.options.mode
    if s.options.derivation is not None:  # the caller's (its session's cache)
        d = s.options.derivation(s.ir.launch)
        assert d.mode is mode, (d.mode, mode)
    else:
        from tilec.transforms.multicast.derive import derive

        # over symbols: the schedule's parameters (for the closed forms' facts), else its
        # replay over M, N, K; the forms keep M, N, K, every other parameter takes its value
        symbolic = s.options.symbolic if s.options.symbolic is not None else s.ir.generic
        d = derive(s.fusion, mode, symbolic=symbolic, params=params, table=True,
                   cluster_k_ranges=True,  # cluster_split runs the work split over clusters
                   launch=s.ir.launch,
                   over=None if s.options.symbolic is not None else tuple(SIZES))
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in params.items()
              if isinstance(v, int) and not isinstance(v, bool) and k not in SIZES}

    def conc(e: sympy.Basic | None) -> Any:
        return None if e is None else sympy.sympify(e).xreplace(values)

    out: dict[str, MulticastPlan | None] = {}
    for name, op in d.operands.items():
        if all(row.mask == (1 << row.point["rank"]) or not row.alive for row in op.table):
            out[name] = None  # nothing is shared: plain TMA loads
            continue
        issue, mask, sidx, scount = op.forms()
        # the run-time guard is the closed form's facts with the parameters' values: what is
        # left names M, N, K and is tested at run time (the closed form where it holds, the
        # general form elsewhere); a guard false for every size keeps the general form
        guard = _at_launch(conc(op.guard))
        closed = op.closed_form and guard is not sympy.false
        if not closed:
            sliced = mode is MulticastMode.SLICED
            issue, mask = op.general_issue, op.general_mask
            sidx, scount = ((op.general_slice_index, op.general_slice_count) if sliced
                            else (None, None))
        out[name] = MulticastPlan(
            mode=mode, cluster_size=d.cluster_size, variables=tuple(op.variables),
            same=conc(op.same), issue=conc(issue), mask=conc(mask),
            slice_index=conc(sidx), slice_count=conc(scount), closed_form=closed,
            guard=guard if closed else sympy.true, facts=op.facts if closed else (),
            scope=op.scope.value if closed and op.scope else None)
    return replace(s, multicasts=(out.get("A"), out.get("B")))


def _at_launch(cond: sympy.Basic) -> sympy.Basic:
    """A condition over the parameters decided where they are all known (``true``/``false``);
    one that still names a parameter is kept for a run-time guard."""
    if cond.free_symbols:
        return _evaluated(cond)
    return sympy.true if bool(cond.doit()) else sympy.false


def _evaluated(cond: sympy.Basic) -> sympy.Basic:
    """``cond`` with its decided parts folded (the derivation builds facts unevaluated:
    ``Eq(0, 0) & Eq(Mod(M, 128), 0)`` -> ``Eq(Mod(M, 128), 0)``)."""
    if isinstance(cond, sympy.And | sympy.Or | sympy.Not):
        return type(cond)(*(_evaluated(a) for a in cond.args))
    if isinstance(cond, sympy.core.relational.Relational):
        return type(cond)(cond.lhs, cond.rhs)
    return cond


def choose_load_kind(cols: int | None, dtype: DType, box: tuple[int, int]) -> LoadKind:
    """TMA when the row stride (``cols`` elements) is 16-byte aligned and the box fits TMA's
    limits (at most 256 per dimension, a row of at least 16 bytes), else POINTER. ``cols=None``:
    rows of any length, as a shape-generic kernel's launcher copies rows TMA cannot take into
    aligned ones (the row stride is a run-time matter; the box is the configuration's).

    >>> choose_load_kind(4100, DType.BF16, (64, 64)), choose_load_kind(4096, DType.BF16, (64, 64))
    (<LoadKind.POINTER: 'pointer'>, <LoadKind.TMA: 'tma'>)
    >>> choose_load_kind(None, DType.BF16, (64, 64)), choose_load_kind(None, DType.BF16, (64, 512))
    (<LoadKind.TMA: 'tma'>, <LoadKind.POINTER: 'pointer'>)
    """
    if cols is not None and (cols * dtype.nbytes) % 16:
        return LoadKind.POINTER
    if any(b > 256 for b in box) or box[-1] * dtype.nbytes < 16:
        return LoadKind.POINTER
    return LoadKind.TMA


def _evict_rule(s: Lowering, given: tuple[L2Hint, L2Hint] | None) -> tuple[L2Hint, L2Hint, str]:
    """The CUDA kernel's L2 hints of A's and B's loads, and why: the schedule's
    ``set_kernel(evict=)``; else, where the tiles make one tile row (B read once, A by every
    tile), A last, B first (128x4096x7168: 27.5 us against 31.2,
    bench/results/cuda_perf_2026-11-23_s7b.json); else none: A first / B last, the rule before,
    ran 512^2 x 65536, 256 x 1024 x 131072, 1000^2 x 50000 and 2048 x 10240 x 8192 3-6% slower
    than no hint, 1536^2 x 65536 and 128^2 x 65536 1-2% faster
    (bench/results/cuda_evict_h200_2026-11-28_s13.json)."""
    if given is not None:
        return (*given, f"cuda: L2 hints A {given[0]}, B {given[1]} (set_kernel(evict=))")
    if s.order is not None and s.order.concrete().tiles_m == 1 and s.order.concrete().tiles_n > 1:
        return (*_ONE_ROW, "cuda: L2 hints A last, B first: one tile row reads each B tile once "
                "and A in every tile (set_kernel(evict=) changes them)")
    return (*_NO_HINT, "cuda: no L2 hints: more than one tile row (set_kernel(evict=) sets them)")


_ONE_ROW = (L2Hint.LAST, L2Hint.FIRST)  # one tile row: A in every tile, B once
_NO_HINT = (L2Hint.NORMAL, L2Hint.NORMAL)


def loads(s: Lowering) -> Lowering:
    """How each operand reaches shared memory: its load kind, box and layout, and on CUDA its
    multicast plan and L2 eviction hint.

    Triton: TMA where the box allows it (:func:`choose_load_kind`), else pointer loads (the
    launcher copies rows TMA cannot take into aligned ones, so the kind never depends on the
    size lowered at). CUDA: TMA loads with the multicast plans and L2 hints
    (:func:`_evict_rule`). A ``set_kernel(load=)`` the target cannot run is refused here.

    before (examples/gemm_basic.py, Triton)::

        work: dp, grid 4

    after::

        work: dp, grid 4
        load A: tma box (128, 64)
        load B: tma box (64, 128)

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.pipeline import tile_axes
    >>> f = load_schedule("examples/gemm_basic.py", {"M": 256, "N": 256, "K": 64}).fusion
    >>> print(loads(tile_axes(Lowering(f))).summary())
    triton: C[256, 256] += A[256, 64] @ B, bf16
    tile: 128x128x64
    load A: tma box (128, 64)
    load B: tma box (64, 128)
    """
    assert s.tile is not None
    fusion, ko = s.fusion, s.fusion.kernel_options
    BM, BN, BK = s.tile
    b_t = fusion.b_layout is BLayout.NK
    a_box, b_box = (BM, BK), ((BN, BK) if b_t else (BK, BN))
    notes = s.notes
    if s.target is Target.TRITON:
        kinds = {}
        for op, box in (("A", a_box), ("B", b_box)):
            auto = choose_load_kind(None, fusion.dtype, box)
            if ko.load is LoadKind.TMA and auto is not LoadKind.TMA:
                raise UnsupportedError(
                    f"triton: set_kernel(load='tma'): TMA needs boxes of at most 256, 16 bytes "
                    f"wide or more; operand {op} has box {box} of {fusion.dtype.nbytes}-byte "
                    f"elements: use load='pointer'")
            kinds[op] = ko.load or auto
        a = OperandLoad("A", kinds["A"], a_box)
        b = OperandLoad("B", kinds["B"], b_box, transposed=b_t)
    else:
        if ko.load is LoadKind.POINTER:
            raise UnsupportedError("cuda: operands are loaded by TMA; set_kernel(load='pointer') "
                                   "is for the Triton target")
        mc_a, mc_b = s.multicasts
        ev_a, ev_b, why = _evict_rule(s, ko.evict)
        notes = (*notes, why)
        where_a = where_b = None
        if ko.evict is None and s.order is not None:  # the rule's condition, decided per launch
            one_row = sympy.Eq(s.order.tiles_m, 1) & (s.order.tiles_n > 1)
            if one_row not in (sympy.true, sympy.false):
                # the hints at the lowering's sizes, and the other side's where the launch differs
                cond, other = ((sympy.Not(one_row), _NO_HINT) if (ev_a, ev_b) == _ONE_ROW
                               else (one_row, _ONE_ROW))
                where_a, where_b = (cond, other[0]), (cond, other[1])
        a = OperandLoad("A", LoadKind.TMA, a_box, multicast=mc_a, evict=ev_a, evict_where=where_a)
        b = OperandLoad("B", LoadKind.TMA, b_box, transposed=b_t, multicast=mc_b, evict=ev_b,
                        evict_where=where_b)
    return replace(s, a=a, b=b, notes=notes)
