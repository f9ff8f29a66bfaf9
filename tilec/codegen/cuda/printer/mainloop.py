"""The persistent warp-specialized kernel: the producer warpgroup's TMA loads (multicast
within the cluster) into the stage ring, the consumer warpgroups' wgmma loop, the stage
release protocol, and the hand-off to the fix-up and the epilogue."""

from __future__ import annotations

from tilec.codegen.cuda.printer.epilogue import (
    CTYPE,
    epilogue_direct,
    epilogue_tma,
    overlap_declare,
    overlap_pack,
    overlap_rest,
    overlap_step,
)
from tilec.codegen.cuda.printer.reduce import partial_store_call, reduced
from tilec.codegen.cuda.printer.schedule import evict_where
from tilec.codegen.cuda.printer.shape import Kernel
from tilec.codegen.cuda.printer.spread import spread
from tilec.codegen.cuda.printer.swap import (
    epilogue_direct_swap,
    epilogue_tma_swap,
    swap_mma,
    swapped,
)
from tilec.codegen.cuda.printer.work import fixup_call, order_ctas_fixed
from tilec.transforms.plan import MulticastMode, OperandLoad

PRODUCER_REGS, CONSUMER_REGS = 40, 232


def kernel_function(k: Kernel) -> str:
    """The ``__global__`` kernel: shared memory layout, barriers, producer and consumer roles."""
    p, s = k.plan, k.shape
    cdims = f" __cluster_dims__({s.cluster}, 1, 1)" if s.cluster > 1 else ""
    ab = CTYPE[p.dtype]
    lines = [
        f"namespace {k.cname} {{",
        f"using TIn = {ab};",
        f"using TOut = {CTYPE[p.c_dtype]};",
        "",
        "// FACTS: the closed variant (the launcher ran it because facts_hold(sh)): closed multicast",
        "// forms, the exact stage release where printed (HAS_EXACT), no boundary predicates.",
        "template <bool FACTS>",
        f"__global__ void __launch_bounds__(THREADS, 1){cdims}",
        "gemm_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,",
        "            const __grid_constant__ CUtensorMap tmC, TOut* __restrict__ C,",
        "            float* __restrict__ ws, int* __restrict__ tickets, const Shape sh"
        + (", const int spread) {" if spread(k) else ") {"),
        "  constexpr bool EXACT = FACTS && HAS_EXACT;  // the exact stage release (else all-cluster)",
        "  extern __shared__ uint8_t smem_raw[];",
        "  // 1024-byte alignment for the 128B swizzle; the same offset in every CTA of the cluster.",
        "  uint8_t* smem = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(smem_raw) + 1023) & ~uintptr_t(1023));",
        "  TIn* sA = reinterpret_cast<TIn*>(smem);",
        "  TIn* sB = reinterpret_cast<TIn*>(smem + STAGES * A_STAGE_BYTES);",
        *(["  uint8_t* epi = smem + STAGES * STAGE_BYTES;  // TMA-store staging: EPI_BYTES (1024-aligned)"]
          if s.tma_store else []),
        "  uint64_t* full = reinterpret_cast<uint64_t*>(smem + STAGES * STAGE_BYTES + EPI_BYTES);",
        "  uint64_t* empty = full + STAGES;",
        *(["  int* fix_last = reinterpret_cast<int*>(empty + STAGES);  // per consumer: reduces this tile"]
          if k.partials and not reduced(k) else []),
        "  (void)C; (void)tmC; (void)ws; (void)tickets;",
        "  const int wg = threadIdx.x / 128;",
        "  const int ctid = threadIdx.x % 128;",
        f"  const int rank = {'(int)tilec::cluster_ctarank()' if s.cluster > 1 else '0'};",
        "  // the worker: this CTA (no cluster) or its cluster; it walks work units work_unit(worker, j)",
        f"  const int worker = {'(int)tilec::cluster_id_x()' if s.cluster > 1 else '(int)blockIdx.x'};",
        "  (void)rank;",
        *(["  // reduce_kernel may be scheduled now (programmatic dependent launch): its CTAs take SMs",
           "  // this grid leaves idle and wait (griddepcontrol.wait) until this grid is done",
           "  asm volatile(\"griddepcontrol.launch_dependents;\" ::: \"memory\");"]
          if reduced(k) else []),
        "  if (threadIdx.x == 0) {",
        "    for (int s = 0; s < STAGES; ++s) {",
        "      tilec::mbar_init(&full[s], 1);  // the local producer's arrive.expect_tx",
        ("      // exact: one arrival per consumer warpgroup of each CTA in R'(rank); else every\n"
         "      // consumer warpgroup of the cluster\n"
         "      tilec::mbar_init(&empty[s], EXACT ? CONSUMERS * __popcll((RECV >> (8 * rank)) & 0xFF)\n"
         "                                        : CONSUMERS * CLUSTER);"
         if s.cluster > 1 else
         "      tilec::mbar_init(&empty[s], CONSUMERS * CLUSTER);  // every consumer warpgroup of the cluster"),
        "    }",
        "    tilec::mbar_fence_init();",
        "  }",
        "  tilec::cluster_sync();" if s.cluster > 1 else "  __syncthreads();",
        "  if (wg == 0) {",
        f"    tilec::setmaxnreg_dec<{PRODUCER_REGS}>();",
        "    if (ctid == 0) {",
        *producer(k),
        "    }",
        "  } else {",
        f"    tilec::setmaxnreg_inc<{CONSUMER_REGS}>();",
        *consumer(k),
        "  }",
        "  // No CTA leaves while a peer may still multicast into it or arrive on its barriers.",
        "  tilec::cluster_sync();" if s.cluster > 1 else "",
        "}",
        "}  // namespace",
    ]
    return "\n".join(lines)


def unit_header(k: Kernel, ind: str) -> list[str]:
    """The tile of this CTA in work unit (g, kb0, kb1), and the schedule's own (round,
    cluster) of that tile, which the multicast functions are written over."""
    t = k.plan.order.index.name
    if order_ctas_fixed(k):
        split = "g / ORDER_CLUSTERS, cidx = g % ORDER_CLUSTERS"
    else:  # a run-time count: its fast division (make_shape)
        split = "sh.fd_ORDER_CLUSTERS.div(g), cidx = sh.fd_ORDER_CLUSTERS.mod(g)"
    return [
        f"{ind}const int {t} = g * CLUSTER + rank;",
        f"{ind}const int i_rt = {split};",
        f"{ind}(void)i_rt; (void)cidx;",
        f"{ind}const bool alive = sh.tile_alive({t});",
        f"{ind}const int m0 = sh.tile_m({t}) * BM, n0 = sh.tile_n({t}) * BN;",
    ]


def _hinted(op: OperandLoad) -> bool:
    """Whether ``op``'s loads carry an L2 policy: a hint other than normal, or one that changes
    with the launch's sizes (``evict_where``)."""
    return op.evict != "normal" or evict_where(op) is not None


def producer(k: Kernel) -> list[str]:
    """The producer thread: per work unit and k-iteration, wait for a free stage and issue its TMA
    loads."""
    p, s = k.plan, k.shape
    ind = "      "
    out = [f"{ind}tilec::tma_prefetch_map(&tmA);", f"{ind}tilec::tma_prefetch_map(&tmB);"]
    for op in (p.a, p.b):
        x = op.name.lower()
        if (rule := evict_where(op)) is not None:  # lowering's hint at the launch's sizes
            out.append(f"{ind}const uint64_t pol_{x} = sh.evict_{x}_where() ? "
                       f"tilec::policy_evict_{rule[1]}() : tilec::policy_evict_{rule[2]}();")
        elif _hinted(op):
            out.append(f"{ind}const uint64_t pol_{x} = tilec::policy_evict_{op.evict}();")
    out += [f"{ind}int stage = 0; uint32_t phase = 0;",
            f"{ind}int g, kb0, kb1;",
            f"{ind}for (int j = 0; sh.work_unit(worker, j, g, kb0, kb1); ++j) {{"]
    i2 = ind + "  "
    out += unit_header(k, i2)
    out.append(f"{i2}if (EXACT && !alive) continue;  // the whole cluster skips this unit (facts_hold)")
    multicast = s.cluster > 1 and (p.a.multicast or p.b.multicast)
    if multicast:
        out += [
            f"{i2}// Dead CTAs never receive: keep them out of every mask (all-cluster release).",
            f"{i2}int alive_mask = 0xFFFF;",
            f"{i2}if (!EXACT) {{",
            f"{i2}  alive_mask = 0;",
            f"{i2}  for (int r = 0; r < CLUSTER; ++r) alive_mask |= sh.tile_alive(g * CLUSTER + r) ? 1 << r : 0;",
            f"{i2}}}",
        ]
    for op in (p.a, p.b):
        x, mc = op.name.lower(), op.multicast
        if mc is None:
            out.append(f"{i2}const bool issue_{x} = alive;")
            continue
        out += [
            f"{i2}const bool issue_{x} = alive && sh.mc_{x}_issue<FACTS>(rank, i_rt, cidx);",
            f"{i2}const uint16_t mask_{x} = (uint16_t)(sh.mc_{x}_mask<FACTS>(rank, i_rt, cidx) & alive_mask);",
        ]
        if mc.mode is MulticastMode.SLICED:
            out += [
                f"{i2}const int sidx_{x} = sh.mc_{x}_slice_index<FACTS>(rank, i_rt, cidx);",
                f"{i2}const int scnt_{x} = sh.mc_{x}_slice_count<FACTS>(rank, i_rt, cidx);",
            ]
    expect = "alive ? STAGE_BYTES : 0u"
    if p.prefetch and k.loads:
        out += [f"{i2}// L2 look-ahead (the plan's prefetch): this unit's first PREFETCH k-iterations now,",
                f"{i2}// then k-iteration kb + PREFETCH with the loads of kb; the boxes this CTA issues",
                f"{i2}for (int kp = kb0; kp < kb1 && kp < kb0 + PREFETCH; ++kp) {{",
                *prefetch(k, "kp", i2 + "  "),
                f"{i2}}}"]
    out += [
        f"{i2}for (int kb = kb0; kb < kb1; ++kb) {{",
        f"{i2}  // Every CTA of R'(rank) has released this stage's previous use (exact release),",
        f"{i2}  // or every consumer of the cluster has (all-cluster release).",
        f"{i2}  tilec::mbar_wait(&empty[stage], phase ^ 1);",
        f"{i2}  // This CTA receives the whole A and B boxes (from itself or peers) when alive.",
    ]
    if k.loads:
        out += [f"{i2}  tilec::mbar_arrive_expect_tx(&full[stage], {expect});"]
        out += load(p.a, "sA", "m0", p.BM, s.chunks_a, i2 + "  ")
        out += (load(p.b, "sB", "n0", p.BN, s.chunks_b, i2 + "  ") if p.b.transposed
                else load_kn(p.b, s.chunks_b, i2 + "  "))
        if p.prefetch:
            out += [f"{i2}  if (kb + PREFETCH < kb1) {{",
                    *prefetch(k, "kb + PREFETCH", i2 + "    "),
                    f"{i2}  }}"]
    else:  # a measurement: every stage is released with nothing loaded
        unused = [f"{v}_{op.name.lower()}" for op in (p.a, p.b)
                  for v in (("issue",) + (("mask",) if op.multicast else ())
                            + (("sidx", "scnt") if op.multicast and
                               op.multicast.mode is MulticastMode.SLICED else ()))]
        out += [f"{i2}  tilec::mbar_arrive_expect_tx(&full[stage], 0u);  // MEASUREMENT: no loads",
                f"{i2}  {' '.join(f'(void){v};' for v in unused)}"]
    out += [
        f"{i2}  if (++stage == STAGES) {{ stage = 0; phase ^= 1; }}",
        f"{i2}}}",
        f"{ind}}}",
    ]
    return out


def prefetch(k: Kernel, kb: str, ind: str) -> list[str]:
    """L2 prefetches of k-iteration ``kb``'s boxes: the boxes this CTA's loads issue (all of
    them without multicast or as the leader; its share where sliced)."""
    p, s = k.plan, k.shape
    out = []
    for op, row0, rows, chunks in ((p.a, "m0", p.BM, s.chunks_a), (p.b, "n0", p.BN, s.chunks_b)):
        x, mc = op.name.lower(), op.multicast
        hint = f", pol_{x}" if _hinted(op) else ""
        call = "tilec::tma_prefetch_l2" + ("_hint" if hint else "")
        sliced = mc is not None and mc.mode is MulticastMode.SLICED
        first, step = (f"sidx_{x}", f"scnt_{x}") if sliced else ("0", "1")
        if op.name == "B" and not p.b.transposed:  # K x N: BN/64 boxes of BK x 64
            at = f"n0 + c * 64, ({kb}) * BK"
            n = "CHUNKS_B"
        else:
            sub = rows // chunks
            at = f"({kb}) * BK, {row0} + c * {sub}"
            n = str(chunks)
        out.append(f"{ind}if (issue_{x}) for (int c = {first}; c < {n}; c += {step}) "
                   f"{call}(&tm{op.name}, {at}{hint});")
    return out


def load(op: OperandLoad, buf: str, row0: str, rows: int, chunks: int, ind: str) -> list[str]:
    """The TMA load of one stage of operand ``op`` (plain, leader multicast, or sliced
    multicast)."""
    x, mc = op.name.lower(), op.multicast
    tm = f"&tm{op.name}"
    hint = f", pol_{x}" if _hinted(op) else ""
    sfx = "_hint" if hint else ""
    base = f"{buf} + stage * {rows} * BK"
    if mc is None:
        return [f"{ind}if (issue_{x}) tilec::tma_load{sfx}({base}, {tm}, &full[stage], kb * BK, {row0}{hint});"]
    if mc.mode is MulticastMode.LEADER:
        return [
            f"{ind}if (issue_{x}) tilec::tma_load_multicast{sfx}({base}, {tm}, &full[stage], "
            f"kb * BK, {row0}, mask_{x}{hint});"
        ]
    sub = rows // chunks
    return [
        f"{ind}// sliced: this CTA issues chunks sidx, sidx + scnt, ... of the {chunks} "
        f"{sub}-row chunks, to the whole group",
        f"{ind}if (issue_{x})",
        f"{ind}  for (int c = sidx_{x}; c < {chunks}; c += scnt_{x})",
        f"{ind}    tilec::tma_load_multicast{sfx}({base} + c * {sub} * BK, {tm}, &full[stage], "
        f"kb * BK, {row0} + c * {sub}, mask_{x}{hint});",
    ]


def load_kn(op: OperandLoad, chunks: int, ind: str) -> list[str]:
    """B given K x N: the stage's BK x BN tile as ``chunks`` boxes of BK x 64 (128-byte rows),
    box ``c`` at ``c * 64 * BK`` elements (MN-major for wgmma, transpose-B)."""
    mc = op.multicast
    hint = ", pol_b" if _hinted(op) else ""
    sfx = "_hint" if hint else ""
    dst = "sB + stage * BN * BK + c * 64 * BK"
    at = "n0 + c * 64, kb * BK"
    if mc is None:
        call, first, step = f"tilec::tma_load{sfx}({dst}, &tmB, &full[stage], {at}{hint});", "0", "1"
    else:
        call = f"tilec::tma_load_multicast{sfx}({dst}, &tmB, &full[stage], {at}, mask_b{hint});"
        sliced = mc.mode is MulticastMode.SLICED
        first, step = ("sidx_b", "scnt_b") if sliced else ("0", "1")
    return [
        f"{ind}// B (K x N): {chunks} boxes of BK x 64"
        + (", this CTA's share of them to the whole group" if first != "0" else ""),
        f"{ind}if (issue_b)",
        f"{ind}  for (int c = {first}; c < CHUNKS_B; c += {step})",
        f"{ind}    {call}",
    ]


def mma(k: Kernel, ind: str) -> list[str]:
    """One stage's wgmmas of consumer ``cw``: its M_SUB m64 row blocks of A's stage against
    B's whole stage (K-major, or MN-major with transpose-B for B given K x N)."""
    p = k.plan
    return [
        f"{ind}const TIn* a = sA + stage * BM * BK + cw * WG_M * BK;",
        f"{ind}const TIn* b = sB + stage * BN * BK;",
        f"{ind}tilec::wgmma_fence();",
        f"{ind}#pragma unroll",
        f"{ind}for (int kk = 0; kk < BK / 16; ++kk) {{",
        (f"{ind}  const uint64_t db = tilec::smem_desc_sw128(b + kk * 16);" if p.b.transposed else
         f"{ind}  const uint64_t db = tilec::smem_desc_sw128_mn(b + kk * 16 * 64, 64 * BK * sizeof(TIn));"),
        f"{ind}  #pragma unroll",
        f"{ind}  for (int ms = 0; ms < M_SUB; ++ms)",
        f"{ind}    tilec::wgmma_m64n{p.BN}k16(acc[ms], tilec::smem_desc_sw128(a + ms * 64 * BK + kk * 16), db,",
        f"{ind}                              (kb > kb0 || kk > 0) ? 1 : 0);",
        f"{ind}}}",
        f"{ind}tilec::wgmma_commit();",
    ]


def release(k: Kernel, st: str) -> str:
    """One consumer warpgroup gives stage ``st`` back: one arrival on each CTA of S'(rank)
    (exact), of the whole cluster (all-cluster), or on its own barrier (no cluster)."""
    s = k.shape
    if s.cluster == 1:
        return f"if (ctid == 0) tilec::mbar_arrive_local(&empty[{st}]);"
    return (f"if (ctid < CLUSTER && (!EXACT || ((SEND >> (8 * rank + ctid)) & 1))) "
            f"tilec::mbar_arrive_remote(&empty[{st}], ctid);")


def consumer(k: Kernel) -> list[str]:
    """A consumer warpgroup: per work unit, the wgmma k-loop with stage release, then the fix-up
    and the epilogue."""
    p, s = k.plan, k.shape
    ind = "    "
    i2 = ind + "  "
    # A dead CTA of a live cluster still waits for and releases every stage (all-cluster
    # protocol); its MMAs are skipped.  The waits stay unconditional either way: a wait
    # with nothing in flight is free, and ptxas then needs no wait of its own before the
    # accumulators are read.
    guard = "if (alive) "
    out = [
        (f"{ind}const int cw = wg - 1;  // consumer warpgroup: columns [cw * WG_N, (cw + 1) * WG_N)"
         if p.swap_ab else
         f"{ind}const int cw = wg - 1;  // consumer warpgroup: rows [cw * WG_M, (cw + 1) * WG_M)"),
        swapped(k, f"{ind}float acc[M_SUB][BN / 2];"),
        f"{ind}int stage = 0, prev = 0; uint32_t phase = 0;",
        *([f"{ind}uint32_t epi_count = 0;  // TMA-store staging boxes used so far (parity picks one)"]
          if s.tma_store and k.epilogue != "tma_tile" else []),
        *(overlap_declare(k, ind) if k.epilogue == "overlap" else []),
        f"{ind}(void)prev;",
        f"{ind}int g, kb0, kb1;",
        f"{ind}for (int j = 0; sh.work_unit(worker, j, g, kb0, kb1); ++j) {{",
        *unit_header(k, i2),
    ]
    out += [
        f"{i2}if (EXACT && !alive) continue;",
        f"{i2}for (int kb = kb0; kb < kb1; ++kb) {{",
        f"{i2}  tilec::mbar_wait(&full[stage], phase);",
        f"{i2}  {guard}{{",
        *(swap_mma(k, i2 + "    ") if p.swap_ab else mma(k, i2 + "    ")),
        f"{i2}  }}",
        *(overlap_step(i2 + "  ") if k.epilogue == "overlap" else []),
        f"{i2}  tilec::wgmma_wait<{k.mma_in_flight}>();",
    ]
    if s.cluster > 1:
        out.append(f"{i2}  // Release the stage to every CTA that loads into this one (S'(rank) when "
                   "EXACT, else the whole cluster).")
    if k.mma_in_flight:
        out += [
            f"{i2}  // One wgmma group stays in flight: the previous stage is now read, release it.",
            f"{i2}  if (kb > kb0) {{ {release(k, 'prev')} }}",
            f"{i2}  prev = stage;",
            f"{i2}  if (++stage == STAGES) {{ stage = 0; phase ^= 1; }}",
            f"{i2}}}",
            f"{i2}tilec::wgmma_wait<0>();",
            f"{i2}if (kb1 > kb0) {{ {release(k, 'prev')} }}  // (an empty K part used no stage)",
        ]
    else:
        out += [
            f"{i2}  {release(k, 'stage')}",
            f"{i2}  if (++stage == STAGES) {{ stage = 0; phase ^= 1; }}",
            f"{i2}}}",
        ]
    if p.swap_ab:
        epi = (epilogue_tma_swap if s.tma_store else epilogue_direct_swap)(k, i2 + "  ")
    else:
        epi = epilogue_tma(k, i2 + "  ") if s.tma_store else epilogue_direct(k, i2 + "  ")
    if k.epilogue == "none":  # a measurement: the kernel without its epilogue
        epi = [f"{i2}  if (acc[0][0] == 12345.678f) C[0] = TOut(0.f);  // keeps the MMAs alive"]
    if k.epilogue == "overlap":
        # the last tile's stores that this unit's k-iterations did not cover, then this tile
        out += overlap_rest(i2)
        epi = overlap_pack(i2 + "  ")
    if k.partials:
        out += [swapped(k, ln) for ln in [
            f"{i2}if (kb0 == kb1) {{  // an empty K part (split-K with K_ITERS < SPLITS): a zero partial",
            f"{i2}  #pragma unroll",
            f"{i2}  for (int ms = 0; ms < M_SUB; ++ms)",
            f"{i2}    #pragma unroll",
            f"{i2}    for (int i = 0; i < BN / 2; ++i) acc[ms][i] = 0.f;",
            f"{i2}}}",
        ]]
        if reduced(k):  # every K part to its slot (one part: C written here, no reduce kernel)
            out.append(f"{i2}if (sh.SPLITS > 1) {{ if (alive) {partial_store_call()}; continue; }}")
        else:
            out.append(f"{i2}if (alive && (kb0 != 0 || kb1 != sh.K_ITERS) && !{fixup_call(k)}) continue;")
    out += [
        f"{i2}if (alive) {{",
        *epi,
        f"{i2}}}",
        f"{ind}}}",
    ]
    if k.epilogue == "overlap":  # the last tile's boxes, before the wait for all stores
        out += overlap_rest(ind)
    if s.tma_store:
        out.append(f"{ind}if (ctid == 0) tilec::tma_store_wait<0>();  // stores done before exit")
    return out
