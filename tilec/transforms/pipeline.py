"""Lowering: a scheduled GEMM fusion -> the backend-neutral :class:`KernelPlan`, as a pipeline
of named passes.

Each pass takes the frozen :class:`Lowering` state and returns a new one with its part of the
plan filled in (a pass that does not apply returns its input)::

    PIPELINE = (tile_axes, tile_order, decomposition, multicast, legalize)

* :func:`tile_axes`: the MMA tile (BM, BN, BK) is C's ``Mma`` axes, one per M, N, K;
* :func:`tile_order`: C's index map over the linear work index ``t = r * num_ctas + pid``
  (``pid`` the linear CTA id, ``r`` the persistent round);
* :func:`decomposition`: the fusion's ``decompose(...)`` choice as a
  :class:`~tilec.transforms.plan.WorkSplit` (``auto`` asks the cost model);
* :func:`multicast`: per operand, the derivation's issue predicate and mask (CUDA, clusters);
* :func:`legalize`: what the target can run: loads, cluster, warps and stages (the schedule's
  ``set_kernel`` choices, else the target's defaults).

:func:`lower_steps` yields every intermediate state (``tilec explain``, tests); :func:`lower`
returns the plan. Example::

    >>> from tilec.app.loader import load_schedule
    >>> s = load_schedule("examples/seed004_persistent_cluster.py", {"M": 512, "N": 512})
    >>> plan = lower(s.fusion, target="triton", params=s.params)
    >>> (plan.BM, plan.BN, plan.BK, plan.order.tiles_m, plan.order.tiles_n, plan.work.grid)
    (128, 256, 64, 4, 2, 8)
    >>> [name for name, _ in lower_steps(s.fusion)]
    ['input', 'tile_axes', 'tile_order', 'decomposition', 'multicast', 'legalize']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import sympy

from tilec.errors import UnsupportedError
from tilec.ir import GemmFusion, ParallelType, index_map, index_symbol, infer_launch
from tilec.ir.types import DType
from tilec.policy import PolicyEnum
from tilec.proofs.evaluate import compile_int
from tilec.transforms.decompose import choose_decomposition, make_work_split
from tilec.transforms.plan import (
    Decomposition,
    InputPrecision,
    KernelPlan,
    LoadKind,
    MulticastMode,
    MulticastPlan,
    OperandLoad,
    TileOrder,
    WorkSplit,
)

__all__ = [
    "PIPELINE",
    "Lowering",
    "Target",
    "choose_load_kind",
    "decomposition",
    "legalize",
    "lower",
    "lower_steps",
    "multicast",
    "tile_axes",
    "tile_order",
]

T = index_symbol("t")


class Target(PolicyEnum, label="target"):
    """Which backend the plan is for: it decides loads, layouts and what can be kept.

    TRITON: pointer or tensor-descriptor loads; no clusters (Triton cannot issue multicast):
      a cluster schedule keeps its tile order and each CTA loads its own tiles (noted in the
      plan).
    CUDA: sm_90a TMA + WGMMA, clusters and multicast; B given N x K or K x N; with a cluster
      the work split is made per cluster (every CTA of a cluster keeps one K range).
    """

    TRITON = "triton"
    CUDA = "cuda"


@dataclass(frozen=True)
class Lowering:
    """What the passes hand on: the schedule and the options of :func:`lower` (given), and the
    plan's parts, filled in by the passes (``None`` / empty until then)."""

    fusion: GemmFusion = field(compare=False)
    target: Target
    params: Mapping[str, Any] = field(default_factory=dict, compare=False)
    symbolic: GemmFusion | None = field(default=None, compare=False)
    mode: MulticastMode = MulticastMode.LEADER
    use_multicast: bool = True
    input_precision: InputPrecision = InputPrecision.IEEE
    name: str | None = None
    # filled by the passes
    tile: tuple[int, int, int] | None = None  # tile_axes: (BM, BN, BK)
    order: TileOrder | None = None  # tile_order
    num_ctas: int = 0  # tile_order: CTAs of the schedule's grid
    persistent: bool = False  # tile_order: the CTAs walk the tiles in rounds
    work: WorkSplit | None = None  # decomposition
    multicasts: tuple[MulticastPlan | None, MulticastPlan | None] = (None, None)  # multicast
    a: OperandLoad | None = None  # legalize
    b: OperandLoad | None = None  # legalize
    cluster: tuple[int, int, int] = (1, 1, 1)  # legalize: the cluster launched
    num_warps: int = 0  # legalize
    num_stages: int = 0  # legalize
    epilogue: str = "auto"  # legalize
    notes: tuple[str, ...] = ()

    @property
    def sizes(self) -> tuple[int, int, int]:
        f = self.fusion
        return int(f.M), int(f.N), int(f.K)

    def plan(self) -> KernelPlan:
        """The KernelPlan of a state every pass has run on."""
        assert self.tile and self.order and self.work and self.a and self.b, self.summary()
        M, N, K = self.sizes
        BM, BN, BK = self.tile
        return KernelPlan(
            name=self.name or f"tilec_gemm_{M}x{N}x{K}_{BM}x{BN}x{BK}",
            M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, dtype=self.fusion.dtype, order=self.order,
            work=self.work, a=self.a, b=self.b, input_precision=self.input_precision,
            num_warps=self.num_warps, num_stages=self.num_stages, cluster=self.cluster,
            b_transposed=self.fusion.b_layout == "nk", notes=self.notes, epilogue=self.epilogue,
        )

    def summary(self) -> str:
        """The parts filled in so far, one line each (what the pass docstrings show)."""
        M, N, K = self.sizes
        out = [f"{self.target.value}: C[{M}, {N}] += A[{M}, {K}] @ B, {self.fusion.dtype.value}"]
        if self.tile:
            out.append("tile: {}x{}x{}".format(*self.tile))
        if self.order:
            o = self.order
            out.append(f"order: t -> ({o.tile_m}, {o.tile_n}), {o.num_tiles} indices over "
                       f"{o.tiles_m} x {o.tiles_n} tiles, {self.num_ctas} CTAs"
                       + (" (persistent)" if self.persistent else ""))
        if self.work:
            w = self.work
            line = f"work: {w.kind.value}, grid {w.grid}"
            if w.split_k:
                line += f", splits {w.splits}"
            if w.stream_k:
                line += f", Stream-K tiles [{w.sk_start}, {w.sk_end}) over {w.sk_ctas} CTAs"
            if w.split_k or w.stream_k:
                line += f", fix-up {w.fixup.value}"
            out.append(line)
        for op, mc in zip("AB", self.multicasts, strict=True):
            if mc is not None:
                out.append(f"multicast {op}: {mc.mode.value}, "
                           f"{'closed' if mc.closed_form else 'general'} form, issue {mc.issue}")
        for op in (self.a, self.b):
            if op is not None:
                out.append(f"load {op.name}: {op.kind.value} box {op.box}"
                           + (" multicast" if op.multicast else ""))
        if self.num_warps:
            out.append(f"launch: cluster {self.cluster}, {self.num_warps} warps, "
                       f"{self.num_stages} stages"
                       + (f", epilogue {self.epilogue}" if self.epilogue != "auto" else ""))
        return "\n".join(out)


# --------------------------------------------------------------------------------------------
# The passes
# --------------------------------------------------------------------------------------------


def tile_axes(s: Lowering) -> Lowering:
    """The MMA tile: C's ``Mma`` axes, one per M, N and K, with constant extents.

    before::

        triton: C[256, 384] += A[256, 128] @ B, bf16

    after::

        triton: C[256, 384] += A[256, 128] @ B, bf16
        tile: 128x128x64

    >>> from tilec.app.loader import load_schedule
    >>> f = load_schedule("examples/gemm_basic.py", {"M": 256, "N": 384, "K": 128}).fusion
    >>> tile_axes(Lowering(f, Target.TRITON)).tile
    (128, 128, 64)
    """
    found = _mma_axes(s.fusion)
    return replace(s, tile=(found["M"][1], found["N"][1], found["K"][1]))


def _mma_axes(fusion: GemmFusion) -> dict[str, tuple[sympy.Symbol, int]]:
    """The Mma axis of each GEMM dimension: its loop symbol and extent."""
    im = index_map(fusion.c)
    found: dict[str, tuple[sympy.Symbol, int]] = {}
    for ax, sym in im.loop:
        if ax.ptype is not ParallelType.Mma:
            continue
        dims = [d for d, e in im.logical.items() if sym in sympy.sympify(e).free_symbols]
        if len(dims) != 1 or not ax.extent.is_Integer:
            raise UnsupportedError(
                f"C: Mma axis {ax} must index exactly one of M, N, K with a constant extent")
        if dims[0] in found:
            raise UnsupportedError(f"C: two Mma axes index {dims[0]}; the MMA tile needs one")
        found[dims[0]] = (sym, int(ax.extent))
    missing = [d for d in "MNK" if d not in found]
    if missing:
        raise UnsupportedError(
            f"C: no Mma axis for {', '.join(missing)}: split C's M, N and K by the tile (BM, BN, "
            f"BK) and parallelize the inner axes with ParallelType.Mma")
    return found


def tile_order(s: Lowering) -> Lowering:
    """The schedule's tile order over the linear work index ``t``, and the CTAs that walk it.

    With ``pid`` the linear CTA id (``blockIdx``, or ``cidx * cluster + rank``) and ``r`` the
    persistent round (the serial CTA-level axes), ``t = r * num_ctas + pid``; ``tile_m(t)``,
    ``tile_n(t)`` are C's M and N origins at that CTA over BM and BN, simplified by the theorems
    under ``0 <= t < num_tiles``. A predicate ``t < E`` of the schedule (the persistent split's
    padding) ends the walk where the real tiles end.

    before (examples/split_k.py, M = N = 256, one CTA per tile)::

        triton: C[256, 256] += A[256, 1024] @ B, bf16
        tile: 128x128x64

    after::

        triton: C[256, 256] += A[256, 1024] @ B, bf16
        tile: 128x128x64
        order: t -> (floor(t/2), Mod(t, 2)), 4 indices over 2 x 2 tiles, 4 CTAs

    >>> from tilec.app.loader import load_schedule
    >>> f = load_schedule("examples/stream_k.py", dict(M=384, N=384, SMS=4)).fusion
    >>> s = tile_order(tile_axes(Lowering(f, Target.TRITON)))
    >>> [s.order.evaluate(t) for t in range(5)], s.num_ctas, s.persistent
    ([(0, 0), (0, 1), (0, 2), (1, 0), (1, 1)], 4, True)
    """
    fusion = s.fusion
    assert s.tile is not None
    im = index_map(fusion.c)
    launch = infer_launch(fusion)
    tiles = _mma_axes(fusion)
    gx, gy, gz = (int(g) for g in launch.grid)
    cx, cy, cz = launch.cluster
    num_ctas = gx * gy * gz
    k_syms = sympy.sympify(im.logical["K"]).free_symbols
    mn_syms = sympy.sympify(im.logical["M"]).free_symbols | sympy.sympify(im.logical["N"]).free_symbols
    zero = {tiles[d][0]: sympy.Integer(0) for d in "MNK"}
    rounds: list[tuple[sympy.Symbol, int]] = []
    pid = sympy.Mod(T, num_ctas) if num_ctas > 1 else sympy.Integer(0)
    b = [sympy.Mod(pid, gx), sympy.Mod(sympy.floor(pid / gx), gy), sympy.floor(pid / (gx * gy))]
    subs: dict[sympy.Symbol, sympy.Expr] = {}
    for ax, sym in im.loop:
        pt, d = ax.ptype, ax.ptype.dim
        if pt.is_block and d is not None:
            subs[sym] = b[d]
        elif pt.is_cluster and d is not None:
            subs[sym] = sympy.floor(b[d] / (cx, cy, cz)[d])
        elif pt.is_rank and d is not None:
            subs[sym] = sympy.Mod(b[d], (cx, cy, cz)[d])
        elif pt.is_thread or sym in zero:
            subs[sym] = sympy.Integer(0)
        elif sym in k_syms and sym not in mn_syms:
            subs[sym] = sympy.Integer(0)  # the K loop: not part of the tile order
        elif ax.extent.is_Integer:
            rounds.append((sym, int(ax.extent)))
        else:
            raise UnsupportedError(f"C: loop axis {ax} has a symbolic extent {ax.extent}")
    # rounds are the serial CTA-level loops, outermost first: t = r * num_ctas + pid
    total_rounds = 1
    for _, e in rounds:
        total_rounds *= e
    r = sympy.floor(T / num_ctas)
    stride = total_rounds
    for sym, e in rounds:
        stride //= e
        subs[sym] = r if len(rounds) == 1 else sympy.Mod(sympy.floor(r / stride), e)
    BM, BN, _ = s.tile
    m0 = sympy.sympify(im.logical["M"]).xreplace(subs)
    n0 = sympy.sympify(im.logical["N"]).xreplace(subs)
    num_tiles = total_rounds * num_ctas
    M, N, _ = s.sizes
    # the persistent split pads the walk to whole rounds; a predicate t < E of the schedule
    # (the merged tile count) ends it where the real tiles end, so a Stream-K region or a
    # grouped raster's last group is placed on real tiles, not on padding
    preds = [sympy.sympify(str(p.xreplace(subs)), locals={"t": T}) for p in im.predicates]
    preds = [p for p in preds if isinstance(p, sympy.Basic) and p.free_symbols <= {T}]
    if preds:
        walked = compile_int([sympy.And(*preds)], [T])
        num_tiles = max((t for t in range(num_tiles) if walked(t)[0]), default=-1) + 1
    # simplified under 0 <= t < num_tiles (the real tiles): a grouped raster's last-group size
    # min(G, tiles_m - g*G) is G on every real tile when G divides tiles_m
    raw_m = sympy.sympify(str(m0), locals={"t": T}) / BM
    raw_n = sympy.sympify(str(n0), locals={"t": T}) / BN
    tile_m, tile_n = _simplified(raw_m, num_tiles), _simplified(raw_n, num_tiles)
    desc = "from the schedule: " + ", ".join(str(a) for a in fusion.c.loop
                                              if a.ptype is not ParallelType.Mma)
    order = TileOrder(T, tile_m, tile_n, sympy.Integer(num_tiles), -(-M // BM), -(-N // BN), desc,
                      ctas=num_ctas, raw_tile_m=sympy.expand(raw_m), raw_tile_n=sympy.expand(raw_n))
    return replace(s, order=order, num_ctas=num_ctas, persistent=bool(rounds))


def _simplified(expr: sympy.Expr, num_tiles: int) -> sympy.Expr:
    """The tile coordinate simplified by the theorems under ``0 <= t < num_tiles``."""
    return coordinate_proof(expr, num_tiles).expr


def coordinate_proof(expr: sympy.Expr, num_tiles: int) -> Any:
    """The simplification of a tile coordinate under ``0 <= t < num_tiles``, with its proof
    trace (a :class:`tilec.proofs.Result`; ``tilec explain`` prints it)."""
    from tilec.proofs import Context, simplify

    ctx = Context()
    ctx.bound(T, sympy.Integer(num_tiles))
    return simplify(sympy.expand(expr), ctx)


def decomposition(s: Lowering) -> Lowering:
    """The work split of the schedule's ``decompose(...)`` choice over the order's tiles.

    Data-parallel: the schedule's CTAs walk the linear tiles (``grid = min(num_ctas,
    num_tiles)``). Split-K: one CTA per (tile, K part), or on a persistent schedule ``grid =
    min(num_ctas, units)`` CTAs walking the units. The Stream-K family spreads its region over
    ``sms`` CTAs (``decompose(sms=...)``, default the schedule's grid). ``auto`` asks the cost
    model (:func:`~tilec.transforms.decompose.choose_decomposition`) and notes why.

    before (examples/split_k.py, M = N = 256, K = 1024, SPLITS = 4)::

        order: t -> (floor(t/2), Mod(t, 2)), 4 indices over 2 x 2 tiles, 4 CTAs

    after::

        order: t -> (floor(t/2), Mod(t, 2)), 4 indices over 2 x 2 tiles, 4 CTAs
        work: splitk, grid 16, splits 4, fix-up atomic

    >>> from tilec.app.loader import load_schedule
    >>> f = load_schedule("examples/stream_k.py", dict(M=384, N=384, SMS=4)).fusion
    >>> s = decomposition(tile_order(tile_axes(Lowering(f, Target.TRITON))))
    >>> print(s.summary().splitlines()[-1])
    work: streamk, grid 4, Stream-K tiles [0, 9) over 4 CTAs, fix-up deterministic
    """
    assert s.tile is not None and s.order is not None
    M, N, K = s.sizes
    BM, BN, BK = s.tile
    num_tiles, num_ctas = int(s.order.num_tiles), s.num_ctas
    d = s.fusion.decomposition
    sms = d.sms or num_ctas

    def split(kind: Decomposition, **extra: int) -> WorkSplit:
        return make_work_split(kind, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms,
                               num_tiles=num_tiles, fixup=d.fixup, **extra)

    why: list[str] = []
    if d.kind is None:
        chosen, why = choose_decomposition(M, N, K, BM, BN, BK, sms, fixup=d.fixup)
        kind, splits, sk_waves = chosen.kind, chosen.splits, chosen.sk_waves or 1
    else:
        kind, splits, sk_waves = d.kind, d.splits, d.sk_waves
    if kind is Decomposition.DATA_PARALLEL:
        work = split(kind, grid=min(num_ctas, num_tiles))
        why = why or [f"data-parallel: the schedule's grid of {num_ctas} CTAs walks {num_tiles} "
                      f"linear tiles"]
    elif kind is Decomposition.SPLIT_K:
        units = num_tiles * splits
        work = split(kind, splits=splits, grid=min(num_ctas, units) if s.persistent else units)
    else:
        work = split(kind, sk_waves=sk_waves)
    if d.kind is not None and kind is not Decomposition.DATA_PARALLEL:
        why = [f"{kind.value} chosen by the schedule (fusion.decompose)"]
    return replace(s, work=work, notes=(*s.notes, *why))


def _cluster_work_split(fusion: GemmFusion, work: WorkSplit, K: int, BK: int, num_ctas: int,
                        num_tiles: int, cluster: int) -> tuple[WorkSplit, list[str]]:
    """CUDA with clusters: the same decomposition, over groups of ``cluster`` consecutive linear
    tiles and clusters of CTAs, so every CTA of a cluster runs one K range (multicast shares each
    stage between them).  Data-parallel needs no change: a cluster's CTAs walk one group a round.
    """
    if work.kind is Decomposition.DATA_PARALLEL or cluster == 1:
        return work, []
    groups, clusters = -(-num_tiles // cluster), num_ctas // cluster
    d = fusion.decomposition
    sms = d.sms // cluster if d.sms else clusters
    # a split of `groups` one-tile rows over `clusters` workers: the same rule, counted in groups
    g = make_work_split(work.kind, M=groups, N=1, K=K, BM=1, BN=1, BK=BK, sms=max(sms, 1),
                        splits=work.splits,
                        sk_waves=work.sk_waves if work.kind is Decomposition.STREAM_K_PP else 1,
                        fixup=work.fixup)
    split = WorkSplit(g.kind, grid=g.grid * cluster, splits=g.splits, sk_tiles=g.sk_tiles,
                      sk_ctas=g.sk_ctas, sk_first=g.sk_first, sk_waves=g.sk_waves,
                      fixup=g.fixup, group=cluster, num_tiles=g.num_tiles, k_iters=g.k_iters)
    return split, [f"cuda: {work.kind.value} over {groups} groups of {cluster} tiles and "
                   f"{g.grid} clusters: every CTA of a cluster keeps the same K range"]


def multicast(s: Lowering) -> Lowering:
    """Per operand, the multicast TMA load of the derivation (:mod:`tilec.transforms.multicast.derive`),
    with the schedule's parameters substituted; ``None`` where nothing is shared. Applies to the
    CUDA target with clusters of more than one CTA (Triton issues no multicast).

    before (examples/seed004_persistent_cluster.py, M = N = 512, SMS = 8, CUDA)::

        work: dp, grid 8

    after::

        work: dp, grid 8
        multicast B: leader, closed form, issue Eq(Mod(rank, 2), 0)

    >>> from tilec.app.loader import load_schedule
    >>> s = load_schedule("examples/seed004_persistent_cluster.py", dict(M=512, N=512, SMS=8))
    >>> st = multicast(Lowering(s.fusion, Target.CUDA, s.params))
    >>> st.multicasts[0], st.multicasts[1].issue, st.multicasts[1].cluster_size
    (None, Eq(Mod(rank, 2), 0), 2)
    >>> triton = replace(st, target=Target.TRITON)
    >>> multicast(triton) is triton  # Triton issues no multicast: the pass does not apply
    True
    """
    if s.target is not Target.CUDA or not s.use_multicast:
        return s
    if infer_launch(s.fusion).cluster_size == 1:
        return s
    from tilec.transforms.multicast.derive import derive

    params = dict(s.params)
    d = derive(s.fusion, s.mode, symbolic=s.symbolic, params=params, table=True,
               cluster_k_ranges=True)  # legalize runs the cluster work split
    values = {sympy.Symbol(k, integer=True, positive=True): v for k, v in params.items()
              if isinstance(v, int) and not isinstance(v, bool)}

    def conc(e: Any) -> Any:
        return None if e is None else sympy.sympify(e).xreplace(values)

    out: dict[str, MulticastPlan | None] = {}
    for name, op in d.operands.items():
        if all(row.mask == (1 << row.point["rank"]) or not row.alive for row in op.table):
            out[name] = None  # nothing is shared: plain TMA loads
            continue
        issue, mask, sidx, scount = op.forms()
        # the run-time guard is the closed form's facts at the launch's parameters: true here,
        # since the derivation ran at them; a plan whose facts fail keeps the general form
        guard = _at_launch(conc(op.guard))
        closed = op.closed_form and guard is not sympy.false
        if not closed:
            sliced = s.mode is MulticastMode.SLICED
            issue, mask = op.general_issue, op.general_mask
            sidx, scount = ((op.general_slice_index, op.general_slice_count) if sliced
                            else (None, None))
        out[name] = MulticastPlan(
            mode=s.mode, cluster_size=d.cluster_size, variables=tuple(op.variables),
            same=conc(op.same), issue=conc(issue), mask=conc(mask),
            slice_index=conc(sidx), slice_count=conc(scount), closed_form=closed,
            guard=guard if closed else sympy.true, facts=op.facts if closed else ())
    return replace(s, multicasts=(out.get("A"), out.get("B")))


def _at_launch(cond: sympy.Basic) -> sympy.Basic:
    """A condition over the parameters decided where they are all known (``true``/``false``);
    one that still names a parameter is kept for a run-time guard."""
    if cond.free_symbols:
        return cond
    return sympy.true if bool(cond.doit()) else sympy.false


def choose_load_kind(cols: int, dtype: DType, box: tuple[int, int]) -> LoadKind:
    """TMA when the row stride (``cols`` elements) is 16-byte aligned and the box fits TMA's
    limits (at most 256 per dimension, a row of at least 16 bytes), else POINTER.

    >>> choose_load_kind(4100, DType.BF16, (64, 64)), choose_load_kind(4096, DType.BF16, (64, 64))
    (<LoadKind.POINTER: 'pointer'>, <LoadKind.TMA: 'tma'>)
    """
    if (cols * dtype.nbytes) % 16:
        return LoadKind.POINTER
    if any(b > 256 for b in box) or box[-1] * dtype.nbytes < 16:
        return LoadKind.POINTER
    return LoadKind.TMA


def legalize(s: Lowering) -> Lowering:
    """What the target runs: operand loads, the cluster launched, warps and stages.

    Triton: TMA where the strides allow it (:func:`choose_load_kind`), else pointer loads; the
    schedule's cluster is not launched (noted). CUDA: TMA loads with the multicast plans and L2
    eviction hints. ``set_kernel(stages, warps, load)`` choices are kept; a load kind the target
    cannot run is refused here.

    before (examples/gemm_basic.py, Triton)::

        work: dp, grid 4

    after::

        work: dp, grid 4
        load A: tma box (128, 64)
        load B: tma box (64, 128)
        launch: cluster (1, 1, 1), 4 warps, 3 stages

    >>> from tilec.app.loader import load_schedule
    >>> s = load_schedule("examples/gemm_basic.py", {"M": 256, "N": 256, "K": 64})
    >>> st = Lowering(s.fusion, Target.TRITON)
    >>> print(legalize(st).summary())
    triton: C[256, 256] += A[256, 64] @ B, bf16
    load A: tma box (128, 64)
    load B: tma box (64, 128)
    launch: cluster (1, 1, 1), 4 warps, 3 stages
    """
    fusion, ko = s.fusion, s.fusion.kernel_options
    M, N, K = s.sizes
    BM, BN, BK = s.tile or _tile_of(fusion)
    launch = infer_launch(fusion)
    b_t = fusion.b_layout == "nk"
    b_box = (BN, BK) if b_t else (BK, BN)
    notes = list(s.notes)
    cluster = launch.cluster
    work = s.work
    if s.target is Target.TRITON:
        if launch.cluster_size > 1:
            notes.append(
                f"triton: the schedule's cluster {cluster} is not launched (Triton issues no "
                f"multicast); its tile order is kept and each CTA loads its own tiles")
            cluster = (1, 1, 1)
        rows = {"A": K, "B": K if b_t else N}  # the row length of each operand in memory
        kinds = {}
        for op, box in (("A", (BM, BK)), ("B", b_box)):
            auto = choose_load_kind(rows[op], fusion.dtype, box)
            if ko.load is LoadKind.TMA and auto is not LoadKind.TMA:
                raise UnsupportedError(
                    f"triton: set_kernel(load='tma'): TMA needs 16-byte aligned rows and boxes "
                    f"of at most 256, 16 bytes wide or more; operand {op} has rows of "
                    f"{rows[op]} x {fusion.dtype.nbytes} bytes and box {box}: use load='pointer'")
            kinds[op] = ko.load or auto
        a = OperandLoad("A", kinds["A"], (BM, BK))
        b = OperandLoad("B", kinds["B"], b_box, transposed=b_t)
        warps = ko.warps or (8 if BM * BN >= 128 * 256 else 4)
        if warps & (warps - 1):
            raise UnsupportedError(f"triton: warps must be a power of two but the schedule "
                                   f"asks for {warps}")
        stages = ko.stages or 3
        if fusion.dtype is DType.FP32:
            notes.append(f"fp32 dot in {s.input_precision.value} precision")
        if ko.epilogue is not None:
            raise UnsupportedError(
                f"triton: set_kernel(epilogue={ko.epilogue!r}) chooses the CUDA kernel's "
                "epilogue; the Triton kernel stores C itself (leave epilogue to 'auto')")
    else:
        if ko.load is LoadKind.POINTER:
            raise UnsupportedError("cuda: operands are loaded by TMA; set_kernel(load='pointer') "
                                   "is for the Triton target")
        mc_a, mc_b = s.multicasts
        a = OperandLoad("A", LoadKind.TMA, (BM, BK), multicast=mc_a, evict="first")
        b = OperandLoad("B", LoadKind.TMA, b_box, transposed=b_t, multicast=mc_b, evict="last")
        work, why = _cluster_work_split(fusion, s.work, K, BK, s.num_ctas,
                                        int(s.order.num_tiles), launch.cluster_size)
        notes += why
        # 1 producer + 2 consumer warpgroups where BM splits in two m64 multiples, else 1 consumer
        warps = ko.warps or (12 if BM % 128 == 0 else 8)
        stages = ko.stages or 4
        if launch.cluster_size > 2:
            notes.append(
                f"cuda: a persistent grid of {s.num_ctas} CTAs in clusters of "
                f"{launch.cluster_size} runs in waves if the GPU cannot hold them all at once "
                f"(an H200 holds 30 clusters of 4: use SMS=120); CudaKernel.max_active_clusters() "
                f"tells on the device")
    return replace(s, a=a, b=b, cluster=cluster, num_warps=warps, num_stages=stages,
                   notes=tuple(notes), work=work, epilogue=ko.epilogue or "auto")


def _tile_of(fusion: GemmFusion) -> tuple[int, int, int]:
    found = _mma_axes(fusion)
    return found["M"][1], found["N"][1], found["K"][1]


Pass = Callable[[Lowering], Lowering]
PIPELINE: tuple[Pass, ...] = (tile_axes, tile_order, decomposition, multicast, legalize)


def lower_steps(
    fusion: GemmFusion,
    *,
    target: Target | str = Target.TRITON,
    params: Mapping[str, Any] | None = None,
    symbolic: GemmFusion | None = None,
    mode: MulticastMode | str = MulticastMode.LEADER,
    multicast: bool = True,
    input_precision: InputPrecision = InputPrecision.IEEE,
    name: str | None = None,
) -> Iterator[tuple[str, Lowering]]:
    """``("input", state)`` and then ``(pass name, state after it)`` for each pass of
    :data:`PIPELINE` (arguments as for :func:`lower`)."""
    for dim in ("M", "N", "K"):
        if not getattr(fusion, dim).is_Integer:
            raise UnsupportedError(
                f"lowering needs concrete sizes but {dim} = {getattr(fusion, dim)}")
    state = Lowering(fusion, Target(target), dict(params or {}), symbolic,
                     MulticastMode(mode), multicast, input_precision, name)
    yield "input", state
    for step in PIPELINE:
        state = step(state)
        yield step.__name__, state


def lower(fusion: GemmFusion, **options: Any) -> KernelPlan:
    """The KernelPlan of a scheduled fusion: every pass of :data:`PIPELINE`, in order.

    ``target`` (:class:`Target`), ``params`` (the schedule's parameters, for the multicast
    derivation), ``symbolic`` (the schedule built with symbolic sizes, for closed forms),
    ``mode`` (:class:`~tilec.ir.types.MulticastMode`), ``multicast`` (False: plain loads),
    ``input_precision`` (fp32 dots), ``name`` (the kernel's name).
    """
    state = None
    for _, state in lower_steps(fusion, **options):
        pass
    assert state is not None
    return state.plan()
