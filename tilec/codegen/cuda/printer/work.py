"""The work split of the CUDA kernel and its fix-up: the ``work_unit`` / ``fix_of`` /
``fix_slot`` schedule functions printed from the plan's
:class:`~tilec.transforms.plan.WorkSplit` formulas over the run-time counts (``K_ITERS``,
``GROUPS``, ``WORKERS``, the Stream-K numbers: fields of the kernel's ``Shape``, counted in
groups of CLUSTER tiles and clusters), the workspace the launcher allocates per call, and the
device function that sums partial tiles."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from tilec.codegen.cuda.expr import INT_MAX, CudaExprPrinter, magnitude, nonneg_symbols
from tilec.codegen.cuda.printer.shape import Kernel
from tilec.codegen.cuda.printer.spread import spread
from tilec.codegen.cuda.printer.swap import swapped
from tilec.proofs import Context
from tilec.transforms.plan import (
    CTA,
    IT_BEGIN,
    IT_END,
    PART,
    TILE,
    UNIT,
    Decomposition,
    Fixup,
    J,
    KernelPlan,
    WorkSplit,
    kernel_symbol,
)

# the Stream-K family: a region of tiles cut by k-iterations (its size is a run-time number)
STREAM_K_KINDS = (Decomposition.STREAM_K, Decomposition.DP_ONE_SK_WAVE,
                  Decomposition.TWO_TILE_SK_DP, Decomposition.STREAM_K_PP)
# the work split's run-time numbers, as the kernel's Shape names them
# (WorkSplit.symbolic's names, plan.WORK_SYMBOLS; the split's num_tiles is GROUPS here: the
# groups of CLUSTER tiles the workers walk)
K_ITERS, GROUPS, SK_TILES, SK_CTAS, SPLITS = (
    kernel_symbol(n) for n in ("K_ITERS", "GROUPS", "SK_TILES", "SK_CTAS", "SPLITS"))
# what the launcher accepts (sizes are int): the bounds the formulas' intermediates are sized for
# (the launcher refuses larger: tilec.codegen.cuda.launch)
RUN_BOUNDS = {"K_ITERS": 1 << 25, "GROUPS": 1 << 26, "SK_TILES": 1 << 26, "SK_CTAS": 1 << 16,
              "SPLITS": 1 << 8}


def bound(v: sympy.Expr | int) -> int:
    """An upper bound of a work-split number: itself, or over :data:`RUN_BOUNDS`."""
    return magnitude(v, RUN_BOUNDS)


def cuts_k(plan: KernelPlan) -> bool:
    """Whether the configuration cuts tiles into K parts: split-K in more than one part by its
    rule (``plan.split``), even where the plan's own sizes leave one (K of one k-iteration): the
    kernel serves every size, and its launcher passes the rule's parts at each."""
    rule = plan.split
    return plan.work.split_k or (rule is not None and rule.kind is Decomposition.SPLIT_K
                                 and rule.splits > 1)


def partials(plan: KernelPlan) -> bool:
    """Whether the configuration's decomposition may cut a tile's K range (a fix-up is printed):
    split-K (:func:`cuts_k`), or a Stream-K kind (whose region may be empty at some sizes)."""
    return cuts_k(plan) or plan.work.kind in STREAM_K_KINDS


@dataclass(frozen=True)
class RunSplit:
    """The plan's work split with its size-dependent numbers as the kernel's run-time names:
    ``k_iters`` is ``K_ITERS``, ``num_tiles`` ``GROUPS``, ``sk_tiles`` ``SK_TILES``,
    ``sk_ctas`` ``SK_CTAS``, split-K's ``splits`` ``SPLITS`` (capped by K_ITERS at a launch);
    the configuration (kind, sk_first, fixup) stays.  Its formulas are
    :class:`~tilec.transforms.plan.WorkSplit`'s own, evaluated over these symbols (as
    ``WorkSplit.symbolic()``'s, whose ``split_k`` property cannot decide ``SPLITS > 1``: here it
    is the configuration's).

    >>> from tilec.transforms.plan import PART
    >>> RunSplit.of(WorkSplit(Decomposition.SPLIT_K, grid=8, num_tiles=4, k_iters=9,
    ...                       splits=2)).split_k_range(PART)
    (floor(K_ITERS*s/SPLITS), floor(K_ITERS*(s + 1)/SPLITS))
    """

    kind: Decomposition
    split_k: bool  # the configuration cuts tiles into K parts
    sk_first: bool
    fixup: Fixup
    splits: sympy.Expr | int = 1
    k_iters: sympy.Expr = K_ITERS
    num_tiles: sympy.Expr = GROUPS
    sk_tiles: sympy.Expr = SK_TILES
    sk_ctas: sympy.Expr = SK_CTAS
    front_tail = False  # dp_ft is printed by the SIMT printer only

    @staticmethod
    def of(w: WorkSplit, split_k: bool | None = None) -> RunSplit:
        """``w``'s configuration over the run-time names; ``split_k``: whether it cuts K
        (:func:`cuts_k`; None: ``w.split_k``)."""
        cut = w.split_k if split_k is None else split_k
        return RunSplit(w.kind, cut, w.sk_first, w.fixup, SPLITS if cut else 1)

    @property
    def stream_k(self) -> bool:
        return self.kind in STREAM_K_KINDS

    @property
    def sk_iters(self) -> sympy.Expr:
        return self.sk_tiles * self.k_iters

    def contributors(self, tile: sympy.Expr) -> sympy.Expr:
        """(WorkSplit.contributors; split-K's count is the run-time SPLITS.)"""
        return sympy.sympify(self.splits) if self.split_k else WorkSplit.contributors(self, tile)

    split_k_unit = WorkSplit.split_k_unit
    split_k_range = WorkSplit.split_k_range
    sk_range = WorkSplit.sk_range
    sk_owner = WorkSplit.sk_owner
    sk_tiles_of = WorkSplit.sk_tiles_of
    sk_unit_range = WorkSplit.sk_unit_range
    sk_first_tile = WorkSplit.sk_first_tile
    first_contributor = WorkSplit.first_contributor
    partial_slot = WorkSplit.partial_slot
    sk_slot = WorkSplit.sk_slot


def shape_fields(k: Kernel) -> list[str]:
    """The work split's run-time fields of the kernel's ``Shape`` (beside the sizes and counts)."""
    return (["SK_TILES", "SK_CTAS", "SK_START", "DP_START", "DP_TILES"]
            if k.plan.work.kind in STREAM_K_KINDS else ["SPLITS"] if cuts_k(k.plan) else [])


def order_ctas_fixed(k: Kernel) -> bool:
    """The schedule's own CTA count is a number (a persistent schedule); otherwise (one CTA per
    tile) it is an expression of M, N and ``ORDER_CTAS`` / ``ORDER_CLUSTERS`` are ``Shape``
    fields computed per launch."""
    ctas = k.plan.order.ctas or k.plan.work.grid
    return isinstance(ctas, int) or bool(sympy.sympify(ctas).is_Integer)


def order_clusters(k: Kernel, shape_var: str) -> str:
    """How the kernel names the schedule's clusters per round: the constant, or the field of the
    ``Shape`` called ``shape_var``."""
    return "ORDER_CLUSTERS" if order_ctas_fixed(k) else f"{shape_var}.ORDER_CLUSTERS"


def work_constants(k: Kernel) -> dict[str, int]:
    """The decomposition's configuration numbers (the run-time ones are ``Shape`` fields)."""
    p, c = k.plan, k.shape.cluster
    if not order_ctas_fixed(k):
        return {}
    out = {"ORDER_CTAS": int(p.order.ctas or p.work.grid)}
    out["ORDER_CLUSTERS"] = max(out["ORDER_CTAS"] // c, 1)
    return out


def workspace(k: Kernel, w: WorkSplit) -> tuple[int, int]:
    """(fp32 workspace elements, int32 tickets) the launcher allocates for the fix-up of split
    ``w`` (the split at the launch's sizes, :func:`tilec.codegen.cuda.launch.run_split`): the
    split's partial slots (deterministic, reduce kernel) or partial tiles (atomic), each of
    CLUSTER tiles, and a ticket per partial tile, CTA of the cluster and consumer warpgroup
    (none for the reduce kernel: nobody waits)."""
    if not k.partials or not (w.split_k or w.stream_k):  # (w: a launch's concrete split)
        return 0, 0
    c = k.shape.cluster
    per = c * k.plan.BM * k.plan.BN
    if w.fixup is Fixup.REDUCE_KERNEL:  # slots only: nobody takes a ticket
        return w.partial_slots * per, 0
    idx = w.partial_slots if w.fixup is Fixup.DETERMINISTIC else w.partial_tiles
    return idx * per, w.partial_tiles * c * k.shape.consumers


def work_fn(ret: str, name: str, expr: sympy.Basic, **bounds: int) -> str:
    """One WorkSplit formula as a function of its variables (named as in the plan, each in
    ``[0, bound]``): in ``int``, or in ``long long`` where :func:`magnitude` says an
    intermediate may pass INT_MAX (then an ``int`` result is cast back).  ``it_end`` is
    positive: every Stream-K CTA's range is nonempty (``shape.check``)."""
    e = sympy.sympify(expr)
    wide = magnitude(e, RUN_BOUNDS | bounds) > INT_MAX
    names = list(bounds)
    args = ", ".join(f"{'long long' if wide else 'int'} {n}" for n in names)
    ctx = Context().positive(IT_END)
    fields = (K_ITERS, SK_CTAS, SK_TILES, GROUPS, SPLITS)
    field_of = {f.name: f.name for f in fields}
    if wide:  # the Shape's int fields, widened where they enter the 64-bit arithmetic
        cast = {f: kernel_symbol(f"((long long){f.name})") for f in fields}
        e = e.xreplace(cast)
        field_of = {cast[f].name: f.name for f in fields}
        fields = tuple(cast.values())
    for v in fields:  # divisors where they are used (nonempty regions)
        ctx.positive(v)
    # a division by one of them: its tilec_fastdiv (make_shape makes those the functions use:
    # fast_divisors)
    divisors = {nonneg_symbols(v): f"fd_{field_of[v.name]}" for v in fields}
    body = CudaExprPrinter(ctx=ctx, wide=wide, divisors=divisors).doprint(nonneg_symbols(e))
    if wide and ret == "int":
        body = f"(int)({body})"
    unused = "".join(f"(void){n}; " for n in names if n not in {v.name for v in e.free_symbols})
    return f"TILEC_HD {ret} {name}({args}) {{ {unused}return {body}; }}"


def fast_divisors(lines: list[str]) -> list[str]:
    """The run-time numbers whose ``tilec_fastdiv`` (``fd_X``) printed work functions use."""
    text = "\n".join(lines)
    return [f.name for f in (K_ITERS, SK_CTAS, SK_TILES, GROUPS, SPLITS) if f"fd_{f.name}." in text]


def work_functions(k: Kernel) -> list[str]:
    """The CUDA kernel's unit walk: :func:`unit_functions` of the plan's split over the run-time
    counts (members of the kernel's ``Shape``)."""
    return unit_functions(RunSplit.of(k.plan.work, cuts_k(k.plan)), k.partials)


def unit_functions(w: WorkSplit | RunSplit, partials: bool) -> list[str]:
    """``work_unit(w, j, g, kb0, kb1)``: unit ``j`` of worker ``w`` (a CTA, or a cluster) is
    group ``g`` (tiles ``g * CLUSTER + rank``; a tile, without clusters) over k-iterations
    [kb0, kb1); the same walk as :func:`tilec.transforms.decompose.work_units`.  With partial
    units, ``fix_of`` says where a partial goes and ``fix_slot`` where the i-th partial of a
    tile (K order) lives.  Every index formula is the split's, printed; the constants
    (``WORKERS``, ``GROUPS``, ``K_ITERS``, ``SPLITS`` or the ``SK_*`` / ``DP_*`` numbers) are
    the caller's (the CUDA and SIMT printers both print them)."""
    head = "TILEC_HD bool work_unit(int w, int j, int& g, int& kb0, int& kb1) {"
    if not partials:
        return [f"// {w.kind.value}: group w + j * WORKERS, whole K", head,
                "  g = w + j * WORKERS; kb0 = 0; kb1 = K_ITERS; return g < GROUPS;", "}"]
    if w.split_k:
        return split_k_work(w, head) + partials_work(w)
    if w.front_tail:
        return front_tail_work(w, head)
    return stream_k_work(w, head) + partials_work(w)


def front_tail_work(w: WorkSplit, head: str) -> list[str]:
    """DP_FRONT_TAIL: CTA ``w < DP_TILES`` runs data-parallel tile ``w``; the next SK_TILES CTAs
    the fronts [0, FRONT) of the region tiles; the last TAIL_CTAS stream the tails
    (WorkSplit.ft_tail_begin, ft_tail_owner, contributors, partial_slot)."""
    d, n = w.k_iters - w.ft_front, w.sk_tiles
    x = sympy.Symbol("x", integer=True, nonnegative=True)
    t = sympy.Symbol("t", integer=True, nonnegative=True)
    return [
        f"// {w.kind.value}: data-parallel tiles one CTA each; region tile f's front [0, FRONT) "
        "on CTA DP_TILES + f, its tail [FRONT, K_ITERS) streamed over the TAIL_CTAS last CTAs",
        f"[[maybe_unused]] constexpr int FRONT = {w.ft_front}, TAIL = {d}, TAIL_CTAS = {w.ft_tail_ctas};",
        work_fn("int", "tail_begin", w.ft_tail_begin(t), t=w.ft_tail_ctas),
        work_fn("int", "tail_owner", w.ft_tail_owner(x), x=w.ft_tail_iters),
        head,
        "  if (w < DP_TILES) { g = DP_START + w; kb0 = 0; kb1 = K_ITERS; return j == 0; }",
        "  const int c = w - DP_TILES;",
        "  if (c < SK_TILES) { g = SK_START + c; kb0 = 0; kb1 = FRONT; return j == 0; }",
        "  const int b = tail_begin(c - SK_TILES), e = tail_begin(c - SK_TILES + 1);",
        "  const int f = b / TAIL + j;  // the j-th region tile this tail CTA's range touches",
        "  if (f * TAIL >= e) return false;",
        "  g = SK_START + f;",
        "  kb0 = FRONT + tilec_max(b - f * TAIL, 0); kb1 = FRONT + tilec_min(e - f * TAIL, TAIL);",
        "  return true;",
        "}",
        "// the partials of region tile f: its front (0), then its tail pieces in K order",
        work_fn("int", "contributors", w.contributors(TILE), tile=n),
        work_fn("int", "fix_slot", w.partial_slot(TILE, J), tile=n, j=w.ft_slots),
        "TILEC_HD void fix_of(int w, int j, int g, int& f, int& ord, int& cnt, int& slot) {",
        "  (void)j;",
        "  f = g - SK_START; cnt = contributors(f);",
        "  const int c = w - DP_TILES;",
        "  ord = c < SK_TILES ? 0 : 1 + (c - SK_TILES) - tail_owner(f * TAIL);",
        "  slot = fix_slot(f, ord);",
        "}",
    ]


def split_k_work(w: WorkSplit | RunSplit, head: str) -> list[str]:
    """Split-K: WorkSplit.split_k_unit and split_k_range, and the walk of units over workers."""
    units, n = bound(w.num_tiles * w.splits), bound(w.splits)
    group, part = w.split_k_unit(UNIT)
    k_begin, k_end = w.split_k_range(PART)
    return [
        "// split-K: unit u = w + j * WORKERS is K part s of group g (WorkSplit.split_k_unit,",
        "// split_k_range)",
        work_fn("int", "unit_group", group, u=units),
        work_fn("int", "unit_part", part, u=units),
        work_fn("int", "part_k_begin", k_begin, s=n),
        work_fn("int", "part_k_end", k_end, s=n),
        head,
        "  const int u = w + j * WORKERS;",
        "  if (u >= GROUPS * SPLITS) return false;",
        "  const int s = unit_part(u);",
        "  g = unit_group(u); kb0 = part_k_begin(s); kb1 = part_k_end(s);",
        "  return true;", "}",
    ]


def stream_k_work(w: WorkSplit | RunSplit, head: str) -> list[str]:
    """The Stream-K family: WorkSplit.sk_range, sk_tiles_of and sk_unit_range, and the walk of
    the Stream-K and data-parallel regions (in the order of ``sk_first``)."""
    it = "long long" if bound(w.sk_iters) > INT_MAX else "int"
    b = dict(it_begin=bound(w.sk_iters), it_end=bound(w.sk_iters), tile=bound(w.num_tiles))
    it_begin, it_end = w.sk_range(CTA)
    first, end = w.sk_tiles_of(IT_BEGIN, IT_END)
    k_begin, k_end = w.sk_unit_range(TILE, IT_BEGIN, IT_END)
    order = "SK first, then data-parallel" if w.sk_first else "data-parallel, then SK"
    return [
        f"// {w.kind.value}: Stream-K over groups [SK_START, SK_START + SK_TILES) cut evenly "
        f"over SK_CTAS workers by k-iterations; the other groups data-parallel ({order})",
        "// (WorkSplit.sk_range, sk_tiles_of, sk_unit_range)",
        *(["static_assert(SK_START + SK_TILES <= GROUPS && DP_START + DP_TILES <= GROUPS, "
           "\"regions\");"] if isinstance(w, WorkSplit) else []),
        work_fn(it, "sk_begin", it_begin, cta=bound(w.sk_ctas)),
        work_fn(it, "sk_end", it_end, cta=bound(w.sk_ctas)),
        work_fn("int", "sk_tile_begin", first, it_begin=b["it_begin"]),
        work_fn("int", "sk_tile_end", end, it_end=b["it_end"]),
        work_fn("int", "sk_k_begin", k_begin, tile=b["tile"], it_begin=b["it_begin"]),
        work_fn("int", "sk_k_end", k_end, tile=b["tile"], it_end=b["it_end"]),
        head,
        f"  {it} b = 0, e = 0; int first = 0, n_sk = 0;",
        "  if (w < SK_CTAS) { b = sk_begin(w); e = sk_end(w); first = sk_tile_begin(b); "
        "n_sk = sk_tile_end(e) - first; }",
        "  const int n_dp = w < DP_TILES ? (DP_TILES - w + WORKERS - 1) / WORKERS : 0;",
        f"  const int sk_j = j{'' if w.sk_first else ' - n_dp'}, dp_j = j{' - n_sk' if w.sk_first else ''};",
        f"  if ({'j < n_sk' if w.sk_first else 'j >= n_dp'}) {{",
        "    if (sk_j >= n_sk) return false;",
        "    const int tile = first + sk_j;",
        "    kb0 = sk_k_begin(tile, b); kb1 = sk_k_end(tile, e);",
        "    g = SK_START + tile; return true;",
        "  }",
        "  if (dp_j >= n_dp) return false;",
        "  g = DP_START + w + dp_j * WORKERS; kb0 = 0; kb1 = K_ITERS; return true;",
        "}",
    ]


def partials_work(w: WorkSplit | RunSplit) -> list[str]:
    """Where the partials of partial-region tile ``tile`` come from and live (WorkSplit's
    first_contributor, contributors, partial_slot), and ``fix_of``: for unit ``j`` of worker
    ``w`` (split-K: unit ``u``; Stream-K: CTA ``w``), its tile, its place in K order, the
    number of partials and its slot."""
    n = w.partial_tiles if isinstance(w, WorkSplit) else bound(w.num_tiles)
    j = max(bound(w.splits), bound(w.sk_ctas))
    contributor = "w + j * WORKERS" if w.split_k else "w"
    tile = "g" if w.split_k else "g - SK_START"
    return [
        "// the partials of a partial-region tile f (a split-K group, or a Stream-K region's own",
        "// group index): its first contributor (unit or worker), how many, the j-th one's slot",
        work_fn("int", "first_contributor", w.first_contributor(TILE), tile=n),
        work_fn("int", "contributors", w.contributors(TILE), tile=n),
        work_fn("int", "fix_slot", w.partial_slot(TILE, J), tile=n, j=j),
        "TILEC_HD void fix_of(int w, int j, int g, int& f, int& ord, int& cnt, int& slot) {",
        *([] if w.split_k else ["  (void)j;"]),
        f"  f = {tile}; ord = {contributor} - first_contributor(f); cnt = contributors(f);",
        "  slot = fix_slot(f, ord);",
        "}",
    ]


def fixup_call(k: Kernel) -> str:
    """The consumer's call of the fix-up (``fixup_function``)."""
    extra = ", C, spread" if spread(k) else ""
    return f"fixup(sh, acc, ws, tickets, fix_last, worker, j, g, rank, cw, ctid{extra})"


def fixup_function(k: Kernel) -> str:
    """The fix-up of a partial tile, per consumer warpgroup (its WG_M rows): the partial goes
    to the workspace in the accumulators' own layout (float4 ``q`` of thread ``ctid`` at
    ``4 * (q * 128 + ctid)``, so a warp's stores are contiguous), then the warpgroup's barrier
    and one thread's acquire-release ticket (no fence in every thread); the
    warpgroup that takes the last ticket of the tile gets the whole sum in ``acc`` and
    writes C (returns true).

    deterministic: every partial has its own slot; the last sums the slots in K order
    (bitwise repeatable); split-K launches where every part is resident spread the sum over
    the parts instead (``spread``, printer/spread.py: the same sums, none by the epilogue).  atomic: partials are added (``red.global.add``) into one fp32
    tile, in whatever order they come; the last reads it and zeroes it for the next launch.
    """
    det = k.plan.work.fixup is Fixup.DETERMINISTIC
    spr = spread(k)
    sub = "WG_M * BN"
    region = f"(size_t)((IDX * CLUSTER + rank) * CONSUMERS + cw) * ({sub})"
    lines = [
        "namespace " + k.cname + " {",
        "__device__ __forceinline__ bool fixup(const Shape& sh, float (&acc)[M_SUB][BN / 2], float* ws, int* tickets,",
        "                                      int* fix_last, int worker, int j, int g, int rank,",
        "                                      int cw, int ctid" + (", TOut* C, int spread) {" if spr else ") {"),
        "  int f, ord, cnt, slot;",
        "  sh.fix_of(worker, j, g, f, ord, cnt, slot);",
        "  (void)ord;",
        "  constexpr int Q = BN / 8;  // float4s per m64 row block",
        f"  float4* mine = reinterpret_cast<float4*>(ws + {region.replace('IDX', 'slot' if det else 'f')});",
        "  #pragma unroll",
        "  for (int q = 0; q < M_SUB * Q; ++q) {",
        "    float* v = &acc[q / Q][4 * (q % Q)];",
        "    const float4 x = make_float4(v[0], v[1], v[2], v[3]);",
        ("    __stcg(mine + q * 128 + ctid, x);" if det else
         "    atomicAdd(mine + q * 128 + ctid, x);"),
        "  }",
        "  tilec::named_bar_sync(1 + cw, 128);  // the warpgroup's partial is stored",
        "  // one acq_rel ticket (CUTLASS's split-K semaphore): its release covers the stores the",
        "  // barrier ordered before it, its acquire the reads the next barrier orders after it",
        "  int* ticket = tickets + (f * CLUSTER + rank) * CONSUMERS + cw;",
        *(["  if (spread) { spread_sum(sh, C, ws, ticket, f, ord, cnt, rank, cw, ctid); return false; }"]
          if spr else []),
        "  if (ctid == 0) fix_last[cw] = tilec::ticket_acq_rel(ticket) == cnt - 1;",
        "  tilec::named_bar_sync(1 + cw, 128);",
        "  if (!fix_last[cw]) return false;",
    ]
    if det:
        lines += [
            "  // K order (bitwise repeatable): acc = slot 0, then += slots 1 .. cnt-1",
            "  for (int i = 0; i < cnt; ++i) {",
            "    const int s = sh.fix_slot(f, i);",
            f"    const float4* src = reinterpret_cast<const float4*>(ws + {region.replace('IDX', 's')});",
            "    if (i == 0) {",
            "      #pragma unroll",
            "      for (int q = 0; q < M_SUB * Q; ++q) {",
            "        const float4 x = __ldcg(src + q * 128 + ctid);",
            "        float* v = &acc[q / Q][4 * (q % Q)];",
            "        v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;",
            "      }",
            "      continue;",
            "    }",
            "    #pragma unroll",
            "    for (int q = 0; q < M_SUB * Q; ++q) {",
            "      const float4 x = __ldcg(src + q * 128 + ctid);",
            "      float* v = &acc[q / Q][4 * (q % Q)];",
            "      v[0] += x.x; v[1] += x.y; v[2] += x.z; v[3] += x.w;",
            "      // 16 loads (64 registers) in flight beside the 128 accumulators: no spills; the",
            "      // last warpgroup's reads of cnt partials are the fix-up's serial part",
            "      if (q % 16 == 15) asm volatile(\"\" ::: \"memory\");",
            "    }",
            "  }",
        ]
    else:
        lines += [
            "  #pragma unroll",
            "  for (int q = 0; q < M_SUB * Q; ++q) {",
            "    const float4 x = __ldcg(mine + q * 128 + ctid);",
            "    __stcg(mine + q * 128 + ctid, make_float4(0.f, 0.f, 0.f, 0.f));  // clean for the next launch",
            "    float* v = &acc[q / Q][4 * (q % Q)];",
            "    v[0] = x.x; v[1] = x.y; v[2] = x.z; v[3] = x.w;",
            "    if (q % 8 == 7) asm volatile(\"\" ::: \"memory\");",
            "  }",
        ]
    lines += [
        "  if (ctid == 0) *ticket = 0;  // every partial of this tile has arrived: reset for the next launch",
        "  return true;",
        "}",
        "}  // namespace",
    ]
    return swapped(k, "\n".join(lines))  # (SWAP_AB=1: the same layout, acc[N_SUB][BM / 2])
