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

import itertools
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace
from typing import Any

import sympy

from tilec.errors import TilecError, UnsupportedError
from tilec.ir import GemmFusion, LaunchDims, ParallelType, infer_launch
from tilec.ir.tensorview import TensorView
from tilec.ir.types import MulticastMode
from tilec.proofs.evaluate import compile_int
from tilec.transforms.multicast.closed import derive_closed
from tilec.transforms.multicast.reading import forms_of, operand_forms
from tilec.transforms.multicast.records import (
    AlivePart,
    MulticastDerivation,
    OperandForms,
    OperandMulticast,
    Scope,
)
from tilec.transforms.multicast.table import R1, R2, RANK, RESERVED, launch_table, same_box

__all__ = [
    "R1",
    "R2",
    "RANK",
    "RESERVED",
    "AlivePart",
    "MulticastDerivation",
    "OperandForms",
    "OperandMulticast",
    "SymbolicInstance",
    "check_params",
    "derive",
    "derive_loaded",
    "forms_of",
    "launch_table",
    "operand_forms",
    "same_box",
    "splits_k",
    "symbolic_build",
    "symbolic_instance",
]


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
    launch: LaunchDims | None = None,
    over: Collection[str] | None = None,
) -> MulticastDerivation:
    """Derive issue predicates and masks for A and B of a (concrete) scheduled ``fusion``.

    ``launch``: the launch of ``fusion`` as the lowering inferred it once
    (:attr:`tilec.transforms.pipeline.IRFacts.launch`: the multicast pass and the session's
    derivation for ``tilec gen`` pass it); None infers it here, the fallback of every caller
    without a lowering (``tilec masks`` / ``explain`` / ``viz`` / ``check``, the benches, tests).

    ``cluster_k_ranges``: the caller runs a ``fusion.decompose(...)`` split so that every CTA of
    a cluster works on one group of ``cluster`` consecutive tiles and one K range at a time (the
    CUDA lowering's cluster work split); the derivation over the schedule's walk then holds per
    group. Without it a cluster schedule with a split-K or Stream-K decomposition is refused.

    ``symbolic`` is the same schedule built with its integer parameters as symbols (see
    :func:`symbolic_instance`); when given, the forms are over the parameter names (where the
    theorems apply) and evaluated at ``params``. The table covers every CTA of the launch at
    every loop point; a closed form is reported only where it equals it everywhere. ``prove``:
    also prove the closed forms with the theorems (for every launch that meets their facts).
    ``over``: the parameters ``symbolic`` is built over (the CUDA lowering's replay over M, N,
    K: ``("M", "N", "K")``); None: every positive integer one (:func:`symbolic_instance`).

    A form claims nothing where a parameter it was derived with as a number differs: without
    ``symbolic`` the forms are over this launch's numbers, so a closed form is at launch scope
    (proved, if at all, for these numbers); a parameter outside ``over`` is pinned at its value
    (:attr:`~tilec.transforms.multicast.records.ClosedForm.pinned`, part of its guard).
    """
    if not isinstance(fusion, GemmFusion):
        raise TilecError(f"derive: fusion must be a GemmFusion but got {type(fusion).__name__} "
                         f"{fusion!r}")
    mode = MulticastMode(mode)
    if symbolic is not None and not isinstance(symbolic, GemmFusion):
        raise TilecError(f"derive: symbolic must be a GemmFusion or None but got {symbolic!r}")
    params = dict(params or {})
    check_params(params)
    launch = infer_launch(fusion) if launch is None else launch
    cs = launch.cluster_size
    kind = fusion.decomposition.describe()
    if cs > 1 and splits_k(fusion) and not cluster_k_ranges:
        raise UnsupportedError(
            f"multicast needs the CTAs of a cluster on one K range, but fusion.decompose("
            f"{kind!r}) hands them different K parts at lowering, which the schedule's index map "
            f"does not show: split K in the schedule instead (split rKo and bind the part to a "
            f"CTA index) so that the derivation sees each CTA's K range, or launch no cluster")
    a, b = fusion.operands()
    sym_views = symbolic.operands() if symbolic is not None else (a, b)
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in params.items()
              if isinstance(v, int) and not isinstance(v, bool)}
    pinned = tuple(sorted(((p, v) for p, v in values.items() if symbolic is None or (
        over is not None and p.name not in over)), key=lambda pv: pv[0].name))
    operands = (("A", a, sym_views[0]), ("B", b, sym_views[1]))
    # the forms and alive conditions of both operands first, in one toggle of sympy's evaluate
    # flag (each toggle clears sympy's cache: none then falls between the operands' proofs)
    with sympy.evaluate(False):
        read = {name: _read_operand(sview, launch.cluster, {} if symbolic is None else values)
                for name, _, sview in operands}
    out = {name: _derive_operand(name, view, *read[name], launch.cluster, mode, values, fusion,
                                 table, closed, prove, concrete=symbolic is None)
           for name, view, _ in operands}
    if pinned:
        out = {name: _pin(op, pinned, symbolic is None) for name, op in out.items()}
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
    key, forms = forms_of(sview, cluster)
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


def _pin(op: OperandMulticast, pinned: tuple[tuple[sympy.Symbol, int], ...], concrete: bool
         ) -> OperandMulticast:
    """``op`` with its closed form pinned to the parameters it was derived with as numbers;
    ``concrete`` (every parameter a number): at launch scope, its facts dropped (a proof over
    numbers says nothing at other numbers)."""
    c = op.closed
    if c is None:
        return op
    if not concrete:
        return _replace(op, closed=replace(c, pinned=pinned))
    why = ("the schedule could not be built over symbolic parameters: the forms are over this "
           "launch's numbers")
    c = replace(c, scope=Scope.LAUNCH, facts=(), at=pinned, pinned=pinned, would_prove=(),
                would_prove_at=(), why_launch=why)
    note = (f"closed form (at this launch: {c.structure}): checked at every CTA of this launch "
            f"only; {why}")
    return _replace(op, closed=c, notes=(note, *op.notes[1:]))


def _replace(op: OperandMulticast, **kw: Any) -> OperandMulticast:
    from dataclasses import replace

    return replace(op, **kw)


SIZE_NAMES = ("M", "N", "K")  # what the lowering's replay (over_sizes) is built over


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


def splits_k(fusion: GemmFusion) -> bool:
    """Whether ``fusion.decompose(...)`` hands the CTAs of a cluster different K parts at
    lowering (split-K, Stream-K): only then does :func:`derive`'s ``cluster_k_ranges`` change
    its answer (it accepts such a schedule rather than refusing it).

    >>> from tilec.runtime.loader import load_schedule
    >>> splits_k(load_schedule("examples/seed004_persistent_cluster.py").fusion)
    False
    """
    return fusion.decomposition.describe() not in ("dp", "auto")


def derive_loaded(loaded: Any, mode: MulticastMode | str = MulticastMode.LEADER,
                  table: bool = True, closed: bool = True,
                  symbolic: SymbolicInstance | None = None, prove: bool = True, *,
                  cluster_k_ranges: bool = False, fallback: GemmFusion | None = None,
                  launch: LaunchDims | None = None) -> MulticastDerivation:
    """Derive for a loaded schedule (:func:`tilec.runtime.loader.load_schedule`): built concretely and
    over symbols. Loading files and caching on disk are the caller's (the CLI's) business.

    ``cluster_k_ranges``, ``launch``: as :func:`derive`'s. ``fallback``: the schedule over
    symbols to derive over where it cannot be built over its parameters (the CUDA lowering's
    replay over M, N, K: its forms pinned to the other parameters' values); None: the forms
    are then over numbers, at launch scope, and a note says so."""
    mode = MulticastMode(mode)
    sym = symbolic or symbolic_build(loaded.module.schedule, loaded.params)
    over = sym.fusion if sym.fusion is not None else fallback
    d = derive(loaded.fusion, mode, symbolic=over, params=loaded.params, table=table,
               closed=closed, prove=prove, cluster_k_ranges=cluster_k_ranges, launch=launch,
               over=SIZE_NAMES if sym.fusion is None and fallback is not None else None)
    if over is None:
        note = (f"the schedule could not be built over symbolic parameters ({sym.why}): "
                f"closed forms are over numbers")
        d = MulticastDerivation(d.params, d.cluster_size, d.mode, {
            k: _replace(op, notes=(*op.notes, note)) for k, op in d.operands.items()})
    return d
