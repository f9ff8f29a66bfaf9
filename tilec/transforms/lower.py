"""Lowering: a scheduled GEMM fusion -> the backend-neutral :class:`KernelPlan`.

The schedule drives the plan:

* the MMA tile (BM, BN, BK) is C's ``Mma`` axes, one per M, N, K;
* the launch (grid, cluster) is :func:`~tilec.ir.infer_launch`;
* the tile order is C's index map: with ``pid`` the linear CTA id (``blockIdx``, or
  ``cidx * cluster + rank``) and ``r`` the persistent round (the serial CTA-level axes), the
  linear work index is ``t = r * num_ctas + pid``, and ``tile_m(t)``, ``tile_n(t)`` are C's M
  and N origins at that CTA over BM and BN;
* the decomposition is the fusion's ``decompose(...)`` choice (data-parallel by default;
  ``auto`` asks the cost model);
* per operand, the multicast issue predicate and mask come from the derivation
  (:mod:`tilec.transforms.multicast`), with the schedule's parameters substituted.

Example::

    >>> from tilec.loader import load_schedule
    >>> s = load_schedule("examples/seed004_persistent_cluster.py", {"M": 512, "N": 512})
    >>> plan = lower(s.fusion, target="triton", params=s.params)
    >>> (plan.BM, plan.BN, plan.BK, plan.order.tiles_m, plan.order.tiles_n, plan.work.grid)
    (128, 256, 64, 4, 2, 8)
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import sympy

from tilec.errors import UnsupportedError
from tilec.ir import GemmFusion, ParallelType, index_map, index_symbol, infer_launch
from tilec.ir.types import DType
from tilec.policy import PolicyEnum
from tilec.transforms.plan import (
    Decomposition,
    Fixup,
    InputPrecision,
    KernelPlan,
    LoadKind,
    MulticastMode,
    MulticastPlan,
    OperandLoad,
    TileOrder,
    WorkSplit,
)

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


def _tile_axes(fusion: GemmFusion) -> dict[str, tuple[sympy.Symbol, int]]:
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


def tile_order(fusion: GemmFusion, values: dict[str, int] | None = None) -> tuple[TileOrder, int]:
    """The schedule's tile order over the linear work index ``t``, and the number of CTAs."""
    im = index_map(fusion.c)
    launch = infer_launch(fusion)
    tiles = _tile_axes(fusion)
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
    BM, BN = tiles["M"][1], tiles["N"][1]
    m0 = sympy.sympify(im.logical["M"]).xreplace(subs)
    n0 = sympy.sympify(im.logical["N"]).xreplace(subs)
    num_tiles = total_rounds * num_ctas
    tile_m = _simplified(sympy.sympify(str(m0), locals={"t": T}) / BM, num_tiles)
    tile_n = _simplified(sympy.sympify(str(n0), locals={"t": T}) / BN, num_tiles)
    M, N = int(fusion.M), int(fusion.N)
    # the persistent split pads the walk to whole rounds; a predicate t < E of the schedule
    # (the merged tile count) ends it where the real tiles end, so a Stream-K region or a
    # grouped raster's last group is placed on real tiles, not on padding
    preds = [sympy.sympify(str(p.xreplace(subs)), locals={"t": T}) for p in im.predicates]
    preds = [p for p in preds if isinstance(p, sympy.Basic) and p.free_symbols <= {T}]
    if preds:
        from tilec.ir.pyeval import compile_int

        alive = compile_int([sympy.And(*preds)], [T])
        last = max((t for t in range(num_tiles) if alive(t)[0]), default=-1)
        num_tiles = last + 1
    desc = "from the schedule: " + ", ".join(str(a) for a in fusion.c.loop
                                              if a.ptype is not ParallelType.Mma)
    order = TileOrder(T, tile_m, tile_n, sympy.Integer(num_tiles),
                      -(-M // BM), -(-N // BN), desc, ctas=num_ctas)
    return order, num_ctas


def _simplified(expr: sympy.Expr, num_tiles: int) -> sympy.Expr:
    """The tile coordinate simplified by the theorems under ``0 <= t < num_tiles``."""
    from tilec.proofs import Context, simplify

    ctx = Context()
    ctx.bound(T, sympy.Integer(num_tiles))
    return simplify(sympy.expand(expr), ctx).expr


def _work_split(fusion: GemmFusion, M: int, N: int, K: int, BM: int, BN: int, BK: int,
                num_ctas: int, num_tiles: int) -> tuple[WorkSplit, list[str]]:
    from tilec.transforms.decompose import choose_decomposition, make_work_split

    d = fusion.decomposition
    fixup = d.fixup
    sms = d.sms or num_ctas
    if d.kind is None:
        split, why = choose_decomposition(M, N, K, BM, BN, BK, sms, fixup=fixup)
        if split.kind is Decomposition.DATA_PARALLEL:
            split = WorkSplit(Decomposition.DATA_PARALLEL, grid=min(num_ctas, num_tiles),
                              fixup=fixup)
        return split, why
    if d.kind is Decomposition.DATA_PARALLEL:
        return WorkSplit(Decomposition.DATA_PARALLEL, grid=min(num_ctas, num_tiles)), [
            f"data-parallel: the schedule's grid of {num_ctas} CTAs walks {num_tiles} linear tiles"]
    split = make_work_split(d.kind, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms,
                            splits=d.splits, sk_waves=d.sk_waves, fixup=fixup)
    return split, [f"{split.kind.value} chosen by the schedule (fusion.decompose)"]


def _cluster_work_split(fusion: GemmFusion, work: WorkSplit, K: int, BK: int, num_ctas: int,
                        num_tiles: int, cluster: int) -> tuple[WorkSplit, list[str]]:
    """CUDA with clusters: the same decomposition, over groups of ``cluster`` consecutive linear
    tiles and clusters of CTAs, so every CTA of a cluster runs one K range (multicast shares each
    stage between them).  Data-parallel needs no change: a cluster's CTAs walk one group a round.
    """
    from tilec.transforms.decompose import make_work_split

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
                      fixup=g.fixup, group=cluster)
    return split, [f"cuda: {work.kind.value} over {groups} groups of {cluster} tiles and "
                   f"{g.grid} clusters: every CTA of a cluster keeps the same K range"]


def _multicast(fusion: GemmFusion, mode: MulticastMode, params: dict[str, Any],
               symbolic: GemmFusion | None) -> dict[str, MulticastPlan | None]:
    from tilec.transforms.multicast import derive

    d = derive(fusion, mode, symbolic=symbolic, params=params, table=True)
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
        out[name] = MulticastPlan(
            mode=mode, cluster_size=d.cluster_size, variables=tuple(op.variables),
            same=conc(op.same), issue=conc(issue), mask=conc(mask),
            slice_index=conc(sidx), slice_count=conc(scount), closed_form=op.closed_form,
            guard=sympy.true, facts=tuple(op.facts))
    return out


def lower(
    fusion: GemmFusion,
    *,
    target: Target | str = Target.TRITON,
    params: dict[str, Any] | None = None,
    symbolic: GemmFusion | None = None,
    mode: MulticastMode | str = MulticastMode.LEADER,
    multicast: bool = True,
    num_warps: int | None = None,
    num_stages: int | None = None,
    input_precision: InputPrecision = InputPrecision.IEEE,
    name: str | None = None,
) -> KernelPlan:
    """The KernelPlan of a scheduled fusion for ``target`` (see module docstring)."""
    target = Target(target) if isinstance(target, str) else target
    mode = MulticastMode(mode) if isinstance(mode, str) else mode
    params = dict(params or {})
    for dim in ("M", "N", "K"):
        if not getattr(fusion, dim).is_Integer:
            raise UnsupportedError(f"lowering needs concrete sizes but {dim} = {getattr(fusion, dim)}")
    M, N, K = int(fusion.M), int(fusion.N), int(fusion.K)
    tiles = _tile_axes(fusion)
    BM, BN, BK = tiles["M"][1], tiles["N"][1], tiles["K"][1]
    launch = infer_launch(fusion)
    order, num_ctas = tile_order(fusion)
    notes: list[str] = []
    work, why = _work_split(fusion, M, N, K, BM, BN, BK, num_ctas, int(order.num_tiles))
    notes += why
    cluster = launch.cluster
    ko = fusion.kernel_options
    b_t = fusion.b_layout == "nk"
    num_warps = num_warps or ko.warps
    num_stages = num_stages or ko.stages
    if target is Target.TRITON:
        from tilec.transforms.decompose import choose_load_kind

        if launch.cluster_size > 1:
            notes.append(
                f"triton: the schedule's cluster {cluster} is not launched (Triton issues no "
                f"multicast); its tile order is kept and each CTA loads its own tiles")
            cluster = (1, 1, 1)
        bshape = (N, K) if b_t else (K, N)
        bbox = (BN, BK) if b_t else (BK, BN)
        kinds = [choose_load_kind(M, K, fusion.dtype, (BM, BK)),
                 choose_load_kind(*bshape, fusion.dtype, bbox)]
        if ko.load is LoadKind.POINTER:
            kinds = [LoadKind.POINTER, LoadKind.POINTER]
        elif ko.load is LoadKind.TMA and LoadKind.POINTER in kinds:
            raise UnsupportedError(
                f"set_kernel(load='tma'): TMA needs 16-byte aligned rows and boxes; "
                f"{'A' if kinds[0] is LoadKind.POINTER else 'B'} of this problem "
                f"(M={M}, N={N}, K={K}, {fusion.dtype.value}) has none: use load='pointer'")
        a = OperandLoad("A", kinds[0], (BM, BK))
        b = OperandLoad("B", kinds[1], bbox, transposed=b_t)
        warps = num_warps or (8 if BM * BN >= 128 * 256 else 4)
        if warps & (warps - 1):
            raise UnsupportedError(f"triton: warps must be a power of two but the schedule "
                                   f"asks for {warps}")
        stages = num_stages or 3
    else:
        mc: dict[str, MulticastPlan | None] = {"A": None, "B": None}
        if launch.cluster_size > 1 and multicast:
            mc = _multicast(fusion, mode, params, symbolic)
        a = OperandLoad("A", LoadKind.TMA, (BM, BK), multicast=mc["A"], evict="first")
        b = OperandLoad("B", LoadKind.TMA, (BN, BK) if b_t else (BK, BN), transposed=b_t,
                        multicast=mc["B"], evict="last")
        work, why = _cluster_work_split(fusion, work, K, BK, num_ctas, int(order.num_tiles),
                                        launch.cluster_size)
        notes += why
        # 1 producer + 2 consumer warpgroups where BM splits in two m64 multiples, else 1 consumer
        warps = num_warps or ko.warps or (12 if BM % 128 == 0 else 8)
        stages = num_stages or ko.stages or 4
        if launch.cluster_size > 2:
            notes.append(
                f"cuda: a persistent grid of {num_ctas} CTAs in clusters of "
                f"{launch.cluster_size} runs in waves if the GPU cannot hold them all at once "
                f"(an H200 holds 30 clusters of 4: use SMS=120); CudaKernel.max_active_clusters() "
                f"tells on the device")
    if fusion.dtype is DType.FP32 and target is Target.TRITON:
        notes.append(f"fp32 dot in {input_precision.value} precision")
    return KernelPlan(
        name=name or f"tilec_gemm_{M}x{N}x{K}_{BM}x{BN}x{BK}",
        M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, dtype=fusion.dtype, order=order, work=work,
        a=a, b=b, input_precision=input_precision, num_warps=warps, num_stages=stages,
        cluster=cluster, b_transposed=b_t, notes=tuple(notes),
    )
