"""The deterministic fix-up spread over a tile's K parts (``Fixup.DETERMINISTIC``, split-K).

The ticket fix-up (printer/work.py) leaves the sum to the part that arrives last: one warpgroup
reads every slot of its rows while the others have left, the fix-up's serial part (48 parts of a
128x128 tile: 3 MiB read by two warpgroups).  Where every K part of every tile is resident at once,
the launch spreads it instead: each part stores its partial to its slot as before, arrives on the
tile's ticket and waits until all ``cnt`` parts have (a second round of adds counts the parts out;
the last one out resets the ticket for the next launch), then sums its share of the warpgroup's
float4s over every slot in K order, the reduce kernel's own work (``reduce_float4``), and writes
C.  No part runs the epilogue.  Each element is summed from the same slots in the same order as
the last part would sum it, so a launch gives the same bits either way; it saves the serial part
and, beside ``Fixup.REDUCE_KERNEL``, the second kernel's launch and the wait for the whole grid.

The wait is safe only where the parts it waits for are running: every part has its own CTA (work
units <= workers: no CTA walks a second unit), the grid fits on the device at once (the occupancy
query's clusters, kept per device), and the launch is cooperative (``cudaLaunchAttributeCooperative``:
the driver runs every CTA of the grid at once, so a grid never gets some of its SMs while another
kernel, on another stream or in another process, holds the rest).  The launcher tests the first
two and that the tiles are cut into at least :data:`SPREAD_MIN_PARTS` parts, then launches
cooperatively with ``spread = 1`` (a kernel argument); elsewhere, where the driver refuses the
cooperative launch, and everywhere when ``TILEC_CUDA_SPREAD=0``, the plain launch runs the ticket
fix-up (``spread = 0``).  ``<name>_last_spread()`` says which the last launch ran.
bench/spread_streams.py runs two spread GEMMs on two streams at once, again and again."""

from __future__ import annotations

from tilec.codegen.cuda.printer.epilogue import CTYPE
from tilec.codegen.cuda.printer.reduce import env_switch, reduce_put
from tilec.codegen.cuda.printer.shape import Kernel
from tilec.codegen.cuda.printer.swap import swapped
from tilec.transforms.plan import Decomposition, Fixup

# Launches cut into fewer K parts keep the ticket fix-up.  Measured on an H200 (session 16,
# bench/round_s16_dev1.sh): over the 14 shapes whose pick is split-K in 2-4 parts the spread sum
# lost 3-21% (0.890x cuBLAS geomean against 0.984x), at 16 parts it was even with the reduce
# kernel, at 48 (one 128x128 tile, K 65536) it gained 4%.  A form that summed 8 float4s per thread
# at once, slot by slot (round_s16_dev6.sh, not kept), lost as much at 2-4 parts (0.939x against
# 0.981x): the loss is not the loads' latency.  (Likely the stores: the spread writes C in the
# reduce kernel's scattered pairs where the last part's epilogue stores whole boxes by TMA.)
SPREAD_MIN_PARTS = 16
# Slots a thread loads at once: the reduce kernel's 16.  In session 16's second run, 24 with the
# loads past the last slot predicated off (in reduce_float4, for the reduce kernel too) ran 128 x
# 128 x 65536 at 0.79x where 16 with the last slot loaded again had run 0.90x; 32 and 48 loaded
# again (round_s16_dev4.sh) were within noise of 16.
SPREAD_LOADS = 16


def spread(k: Kernel) -> bool:
    """Whether the file prints the spread sum: a split-K plan with the deterministic fix-up."""
    w = k.plan.work
    return k.partials and w.fixup is Fixup.DETERMINISTIC and w.kind is Decomposition.SPLIT_K


def spread_schedule(k: Kernel) -> list[str]:
    """Host-compilable: each part's share of a consumer warpgroup's float4s (``spread_share``;
    the shares of parts 0 .. cnt-1 cut ``[0, WG_FLOAT4S)`` in order, none empty while
    ``cnt <= WG_FLOAT4S``)."""
    return [swapped(k, ln) for ln in [
        "// Fixup.DETERMINISTIC spread (spread.py): K part ord of cnt sums float4s [lo, hi) of each",
        "// consumer warpgroup's WG_FLOAT4S (its partial in the accumulators' layout, part_float4)",
        "constexpr int WG_FLOAT4S = WG_M * BN / 4;",
        "TILEC_HD void spread_share(int ord, int cnt, int& lo, int& hi) {",
        "  lo = (int)((long long)WG_FLOAT4S * ord / cnt);",
        "  hi = (int)((long long)WG_FLOAT4S * (ord + 1) / cnt);",
        "}",
    ]]


def spread_sum_function(k: Kernel) -> str:
    """``spread_sum``: the wait for every part of the tile on its ticket, then this part's share
    of the warpgroup's sums, written to C (the reduce kernel's ``reduce_float4`` and ``put``)."""
    return "\n".join([
        "namespace " + k.cname + " {",
        f"using TOut = {CTYPE[k.plan.c_dtype]};  // (as the kernel's)",
        "// Fixup.DETERMINISTIC spread over the parts (the launcher's `spread`: every part resident):",
        "// in on the tile's ticket, wait for all cnt parts, out (the last out resets it), then this",
        "// part's share of the warpgroup's float4s summed in K order from every slot, written to C",
        "__device__ __forceinline__ void spread_sum(const Shape& sh, TOut* __restrict__ C, const float* ws,",
        "                                           int* ticket, int f, int ord, int cnt, int rank, int cw,",
        "                                           int ctid) {",
        "  if (ctid == 0) {",
        "    tilec::ticket_acq_rel(ticket);  // in: releases the partial the barrier before ordered",
        "    while (tilec::ld_acquire(ticket) < cnt) __nanosleep(32);  // every part's partial stored",
        "    if (atomicAdd(ticket, 1) == 2 * cnt - 1) atomicExch(ticket, 0);  // out",
        "  }",
        "  tilec::named_bar_sync(1 + cw, 128);  // the acquire covers the warpgroup's reads below",
        "  int lo, hi;",
        "  spread_share(ord, cnt, lo, hi);",
        "  const float4* w4 = reinterpret_cast<const float4*>(ws);",
        "  const auto load = [&](long long i) { return __ldcg(w4 + i); };",
        *reduce_put(k, "  "),
        "  const long long base = (long long)f * PART_FLOAT4S + part_float4(rank, cw, 0, 0);",
        f"  for (int e = lo + ctid; e < hi; e += 128) reduce_float4<float4, {SPREAD_LOADS}>(sh, base + e, load, put);",
        "}",
        "}  // namespace",
    ])


def spread_helpers(n: str) -> str:
    """The launcher's helpers: the switch (``TILEC_CUDA_SPREAD``) and the CTAs resident at once
    (the file's own occupancy query, ``n``_max_active_clusters, kept per device)."""
    return "\n".join([
        "#include <cstdlib>",
        *env_switch("use_spread", "TILEC_CUDA_SPREAD", "The spread sum (spread.py)"),
        "",
        "static int last_spread = 0;  // whether the last launch spread (TILEC's tests and benches)",
        "",
        f'extern "C" int {n}_max_active_clusters();',
        "// The CTAs of this kernel resident on the current device at once (whole clusters), kept per",
        "// device; 0 where the query fails (then no launch spreads).",
        "static long long resident_ctas() {",
        "  static long long ctas[64] = {0};",
        "  int dev = 0;",
        "  if (cudaGetDevice(&dev) != cudaSuccess || dev < 0 || dev >= 64) return 0;",
        "  if (ctas[dev] > 0) return ctas[dev];",
        f"  const int n = {n}_max_active_clusters();",
        "  if (n <= 0) { (void)cudaGetLastError(); return 0; }",
        "  return ctas[dev] = (long long)n * CLUSTER;",
        "}",
        "",
    ])


def spread_launch(args: str, ind: str = "  ") -> list[str]:
    """The launcher's spread launch: where the launch cuts tiles into at least SPREAD_MIN_PARTS K
    parts, every unit has its own worker and the grid fits on the device at once, a cooperative
    launch (``cudaLaunchAttributeCooperative``: the driver runs every CTA of the grid at once,
    whatever else the GPU runs, so no part waits on one that cannot start); ``launched`` tells the
    plain launch after it to stand down.  Where the driver refuses it, the plain launch runs the
    ticket fix-up.  ``args``: the kernel's arguments before ``spread``."""
    return [
        f"{ind}// the deterministic fix-up spread over the parts where each has its own CTA and all fit at",
        f"{ind}// once (spread.py), launched cooperatively; else (or refused) the last part sums",
        f"{ind}bool launched = false;",
        f"{ind}if (splits >= {SPREAD_MIN_PARTS} && use_spread() && (long long)sh.GROUPS * sh.SPLITS * CLUSTER <= grid &&",
        f"{ind}    grid <= resident_ctas()) {{",
        f"{ind}  cudaLaunchConfig_t cfg = {{}};",
        f"{ind}  cfg.gridDim = dim3(grid, 1, 1); cfg.blockDim = dim3(THREADS, 1, 1);",
        f"{ind}  cfg.dynamicSmemBytes = SMEM_BYTES; cfg.stream = (cudaStream_t)stream;",
        f"{ind}  cudaLaunchAttribute attr[1];",
        f"{ind}  attr[0].id = cudaLaunchAttributeCooperative; attr[0].val.cooperative = 1;",
        f"{ind}  cfg.attrs = attr; cfg.numAttrs = 1;",
        f"{ind}  launched = cudaLaunchKernelEx(&cfg, kernel, {args}, 1) == cudaSuccess;",
        f"{ind}  if (!launched) (void)cudaGetLastError();  // refused: the plain launch below",
        f"{ind}}}",
        f"{ind}last_spread = launched ? 1 : 0;",
    ]
