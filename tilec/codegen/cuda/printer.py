"""CUDA C++ backend (sm_90a): print a :class:`~tilec.transforms.plan.KernelPlan` as a ``.cu`` file.

The kernel is a persistent, warp-specialized TMA + WGMMA GEMM:

* warpgroup 0 is the producer (``setmaxnreg`` down to 40): one thread walks the tile order and
  issues TMA box loads (128-byte swizzle) into a ``num_stages``-deep ring of shared-memory stages,
  each guarded by a *full* and an *empty* mbarrier with phase tracking;
* warpgroups 1..C are consumers (``setmaxnreg`` up to 232): each owns BM/C rows of the tile, waits
  on *full*, runs ``wgmma.mma_async m64nBNk16`` from shared memory into fp32 registers, then
  releases the stage by arriving on the *empty* barrier of every CTA of the cluster (``mapa`` + a
  remote arrive), and finally writes its rows of C by the plan's epilogue (``KernelPlan.epilogue``,
  the schedule's ``set_kernel(epilogue=)``): by default packed to 16 bits in registers and stored
  box by box through shared memory and TMA during the next tile's first k-iterations
  ("overlap"), else through the TMA staging ring after the k-loop ("tma", "tma_tile"), or
  straight from registers to global memory ("direct": fp32 C, rows TMA cannot store);
* with a cluster, operand loads are TMA multicasts whose issue predicate, mask and slice come from
  the plan's :class:`~tilec.transforms.plan.MulticastPlan` (closed form, general run-time form, or
  the closed form behind a run-time guard), printed from sympy by
  :class:`~tilec.codegen.cuda.expr.CudaExprPrinter` into ``__host__ __device__`` functions;
* every CTA runs the same number of persistent rounds; a CTA whose tile is dead in a round issues
  nothing, expects no bytes, and still releases its stages, so the cluster's barrier counts stay
  balanced; a cluster barrier before exit keeps peers alive while remote arrivals may land.

Work is walked in units ``work_unit(worker, j) -> (group, kb0, kb1)`` printed from the plan's
:class:`~tilec.transforms.plan.WorkSplit` (data-parallel, split-K, Stream-K and its hybrids); a
worker is a CTA, or a whole cluster, whose CTAs run tiles ``group * CLUSTER + rank`` over the same
K range.  A unit that covers part of a tile's K range ends in the fix-up (deterministic: private
workspace slots summed in K order by the last arrival; atomic: fp32 adds into one tile).

Example::

    >>> from tilec.app.loader import load_schedule
    >>> from tilec.runtime.build import kernel_plan
    >>> s = load_schedule("examples/seed004_persistent_cluster.py",
    ...                   {"M": 512, "N": 512, "K": 256, "CM": 1, "CN": 2, "SMS": 4})
    >>> src = emit(kernel_plan(s, target="cuda"))
    >>> "cp.async.bulk.tensor" in src and "__cluster_dims__(2, 1, 1)" in src
    True
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy

from tilec.codegen.cuda.expr import INT_MAX, CudaExprPrinter, magnitude
from tilec.codegen.cuda.runtime import DEVICE_HELPERS, INDEX_HELPERS, wgmma_function
from tilec.errors import UnsupportedError
from tilec.ir.types import EPILOGUES
from tilec.proofs import Context, compile_int
from tilec.transforms.plan import (
    CTA,
    IT_BEGIN,
    IT_END,
    PART,
    TILE,
    UNIT,
    J,
    Decomposition,
    DType,
    Fixup,
    KernelPlan,
    LoadKind,
    MulticastMode,
    MulticastPlan,
    OperandLoad,
)

SCHEDULE_BEGIN = "// ---- tilec schedule functions: begin"
SCHEDULE_END = "// ---- tilec schedule functions: end"

_LOOP_VARS = ("rank", "i_rt", "cidx")  # the kernel values multicast expressions may use
_PAIR_VARS = ("r1", "r2", "i_rt", "cidx")  # the variables of `same`
_CTYPE = {DType.BF16: "__nv_bfloat16", DType.FP16: "__half", DType.FP32: "float"}
_SMEM_LIMIT = 227 * 1024
_BOX_BYTES = 64 * 64 * 2  # one 64x64 16-bit staging box of the TMA-store epilogue
_PRODUCER_REGS, _CONSUMER_REGS = 40, 232


@dataclass(frozen=True)
class _Shape:
    """Launch and tiling numbers the kernel is built from (all checked against the plan)."""

    consumers: int  # consumer warpgroups
    wg_m: int  # tile rows per consumer warpgroup
    m_sub: int  # m64 wgmma rows per consumer warpgroup
    cluster: int
    stages: int
    chunks_a: int  # TMA boxes one stage of A is cut into (sliced multicast), else 1
    chunks_b: int
    smem_bytes: int
    tma_store: bool  # epilogue through shared memory and TMA stores (else registers -> global)
    # Exact stage-release protocol (docs/cuda_backend.md, "Stage release"): per rank X, the CTAs
    # X's loads land in, itself included (R'(X)), and the CTAs that load into X (S'(X)).
    # None: the masks vary per round; the conservative all-cluster protocol is printed.
    receivers: tuple[int, ...] | None
    senders: tuple[int, ...] | None
    epi_boxes: int = 2  # TMA-store staging boxes per consumer warpgroup

    @property
    def threads(self) -> int:
        return 128 * (1 + self.consumers)


def _nonneg_symbols(expr: sympy.Basic) -> sympy.Basic:
    """Kernel variables are nonnegative integers by construction: say so for the printer."""
    sub = {s: sympy.Symbol(s.name, integer=True, nonnegative=True) for s in expr.free_symbols}
    return expr.xreplace(sub)


def _const_int(expr: sympy.Expr | None) -> int | None:
    if expr is None:
        return None
    e = sympy.sympify(expr)
    return int(e) if e.is_Integer else None


def _cluster_all_or_none(p: KernelPlan, cluster: int) -> bool:
    """Every group of ``cluster`` consecutive linear tiles (what one cluster runs at a time, in
    every decomposition) is wholly alive or wholly dead, so the CTAs of a cluster skip the same
    units and use the same stages.  Checked at every tile the launch walks.
    """
    o = p.order
    n = int(o.num_tiles)
    for g in range(-(-n // cluster)):
        a = [o.is_alive(g * cluster + k) for k in range(cluster)]
        if any(a) != all(a):
            return False
    return True


def _static_receivers(p: KernelPlan, cluster: int) -> tuple[tuple[int, ...], tuple[int, ...]] | None:
    """R'(X) and S'(X) bit masks per rank when every load's destination set depends on the rank
    alone wherever the kernel uses it (closed forms, no guard, evaluated at every alive group of
    the walk) and every group is wholly alive or wholly dead; else None.

    R'(X) = {X} | OR over operands of (issue_x(X) ? mask_x(X) : 0) (1 << X without multicast);
    S'(Y) = {X : Y in R'(X)}.
    """
    if cluster > 1 and not _cluster_all_or_none(p, cluster):
        return None
    o = p.order
    oc = max((o.ctas or p.work.grid) // cluster, 1)
    n, tiles_m, tiles_n = int(o.num_tiles), int(o.tiles_m), int(o.tiles_n)

    def alive(t: int) -> bool:
        m, nn = o.coords(t)
        return m < tiles_m and nn < tiles_n

    alive_groups = [g for g in range(-(-n // cluster)) if g * cluster < n and alive(g * cluster)]
    recv = [1 << r for r in range(cluster)]
    for op in (p.a, p.b):
        mc = op.multicast
        if mc is None:
            continue
        if not mc.closed_form or mc.guard != sympy.true:
            return None
        exprs = [mc.issue, mc.mask]
        if mc.mode is MulticastMode.SLICED:
            exprs += [mc.slice_index, mc.slice_count]
        f = compile_int(exprs, sympy.symbols("rank i_rt cidx"))  # exact; symbols match by name
        for r in range(cluster):
            seen = {tuple(int(v) for v in f(r, g // oc, g % oc)) for g in alive_groups}
            if len(seen) > 1:
                return None
            if seen:
                issue, mask = next(iter(seen))[:2]
                recv[r] |= mask if issue else 0
    send = [sum(1 << x for x in range(cluster) if recv[x] >> y & 1) for y in range(cluster)]
    return tuple(recv), tuple(send)


class CudaPrinter:
    """Prints one plan; each ``_emit_*`` method returns one section of the file."""

    def __init__(self, plan: KernelPlan, mma_in_flight: int = 1, epilogue: str | None = None,
                 loads: bool = True) -> None:
        if mma_in_flight not in (0, 1):
            raise UnsupportedError(f"mma_in_flight must be 0 or 1 but got {mma_in_flight}")
        self.loads = loads  # False: a measurement, the producer arrives without loading
        epilogue = plan.epilogue if epilogue is None else epilogue
        if epilogue not in ("auto", *EPILOGUES, "none"):
            raise UnsupportedError(
                f"epilogue must be 'auto', {', '.join(map(repr, EPILOGUES))} or 'none' but got "
                f"{epilogue!r}")
        self.mma_in_flight = mma_in_flight
        self.epilogue = epilogue
        self.plan = plan
        self.expr = CudaExprPrinter()
        self.shape = self._check(plan)
        self.cname = re.sub(r"\W", "_", plan.name) or "tilec_gemm"

    # ------------------------------------------------------------------ validation
    def _check(self, p: KernelPlan) -> _Shape:
        w = p.work
        if w.kind is not Decomposition.DATA_PARALLEL and w.fixup is Fixup.REDUCE_KERNEL:
            raise UnsupportedError(
                f"CUDA backend: plan {p.name!r} asks for the {w.fixup.value!r} fix-up; the CUDA "
                "kernel sums partial tiles itself: use 'deterministic' (bitwise repeatable, the "
                "last CTA sums the partials in K order) or 'atomic'"
            )
        cx0 = p.cluster[0]
        if w.kind is not Decomposition.DATA_PARALLEL and cx0 > 1 and w.group != cx0:
            raise UnsupportedError(
                f"CUDA backend: plan {p.name!r} splits work per CTA ({w.kind.value}, group "
                f"{w.group}) but runs clusters of {cx0}: lower it with target='cuda' so that every "
                "CTA of a cluster keeps the same K range"
            )
        if p.dtype not in (DType.BF16, DType.FP16):
            raise UnsupportedError(
                f"CUDA backend: dtype of A and B must be bf16 or fp16 but plan {p.name!r} has "
                f"{p.dtype.value}"
            )
        for op in (p.a, p.b):
            if op.kind is not LoadKind.TMA:
                raise UnsupportedError(
                    f"CUDA backend: operand {op.name} must be loaded by TMA but its load is "
                    f"{op.kind.value!r}"
                )
            if op.evict not in ("normal", "first", "last"):
                raise UnsupportedError(
                    f"operand {op.name}: evict must be 'normal', 'first' or 'last' but got {op.evict!r}"
                )
        if p.a.transposed:
            raise UnsupportedError("CUDA backend: A must be stored M x K (K contiguous)")
        if not p.b_transposed and (p.BN % 64 != 0 or (p.N * p.dtype.nbytes) % 16 != 0):
            raise UnsupportedError(
                f"CUDA backend: B given K x N (N contiguous) is loaded in 64-column TMA boxes: BN "
                f"must be a multiple of 64 and N * {p.dtype.nbytes} of 16 bytes, but plan "
                f"{p.name!r} has BN = {p.BN}, N = {p.N} (store B as N x K: B_LAYOUT='nk')"
            )
        if p.BK * p.dtype.nbytes != 128:
            raise UnsupportedError(
                f"CUDA backend: BK must be {128 // p.dtype.nbytes} for {p.dtype.value} (one "
                f"128-byte swizzle row) but got BK = {p.BK}"
            )
        bbox = (p.BN, p.BK) if p.b_transposed else (p.BK, p.BN)
        if p.a.box != (p.BM, p.BK) or p.b.box != bbox:
            raise UnsupportedError(
                f"CUDA backend: boxes must be A ({p.BM}, {p.BK}) and B {bbox} but got "
                f"A {p.a.box} and B {p.b.box}"
            )
        if (p.K * p.dtype.nbytes) % 16 != 0:
            raise UnsupportedError(
                f"CUDA backend: TMA needs 16-byte row strides: K * {p.dtype.nbytes} must be a "
                f"multiple of 16 but K = {p.K}"
            )
        if p.BM % 64 != 0 or not 64 <= p.BM <= 256:
            raise UnsupportedError(f"CUDA backend: BM must be 64, 128, 192 or 256 but got {p.BM}")
        if p.BN % 16 != 0 or not 16 <= p.BN <= 256:
            raise UnsupportedError(
                f"CUDA backend: BN must be a multiple of 16 in [16, 256] but got {p.BN}"
            )
        # one producer warpgroup + consumers: the plan's warps (the schedule's set_kernel(warps=))
        consumers = p.num_warps // 4 - 1
        if p.num_warps % 4 or not 1 <= consumers <= 2 or p.BM % (64 * consumers):
            raise UnsupportedError(
                f"CUDA backend: {p.num_warps} warps per CTA are one producer warpgroup and "
                f"{p.num_warps / 4 - 1:g} consumer warpgroups; they must be 8 or 12 with BM "
                f"(= {p.BM}) a multiple of 64 x consumers"
            )
        wg_m = p.BM // consumers
        m_sub = wg_m // 64
        if m_sub * p.BN // 2 > 128:
            raise UnsupportedError(
                f"CUDA backend: a consumer warpgroup would hold {m_sub * p.BN // 2} fp32 "
                f"accumulators per thread for BM={p.BM}, BN={p.BN} (at most 128)"
            )
        cx, cy, cz = p.cluster
        if (cy, cz) != (1, 1) or not 1 <= cx <= 8:
            raise UnsupportedError(
                f"CUDA backend: the cluster must be 1-D along x with at most 8 CTAs but plan "
                f"{p.name!r} has cluster {p.cluster}"
            )
        if p.work.grid % cx != 0:
            raise UnsupportedError(
                f"CUDA backend: grid {p.work.grid} is not a multiple of the cluster size {cx}"
            )
        groups = -(-int(p.order.num_tiles) // cx)
        if (w.split_k or w.stream_k) and w.num_tiles != groups:
            raise UnsupportedError(
                f"CUDA backend: plan {p.name!r} splits {w.num_tiles} tiles but its workers walk "
                f"{groups} groups of {cx} linear tiles: lower it with target='cuda'")
        if w.stream_k and w.sk_ctas > w.sk_iters:
            raise UnsupportedError(
                f"CUDA backend: plan {p.name!r} cuts {w.sk_iters} Stream-K iterations over "
                f"{w.sk_ctas} CTAs: some would get none (make_work_split keeps sk_ctas <= sk_iters)")
        chunks = [self._check_multicast(op, cx, rows) for op, rows in ((p.a, p.BM), (p.b, p.BN))]
        if not p.b_transposed:
            chunks[1] = p.BN // 64  # 64-column boxes of the K x N tile
        stage_bytes = (p.BM + p.BN) * p.BK * p.dtype.nbytes
        smem = p.num_stages * stage_bytes + 1024 + 2 * 8 * p.num_stages + 16  # + fix-up flags
        if p.num_stages < 2 or smem > _SMEM_LIMIT:
            raise UnsupportedError(
                f"CUDA backend: {p.num_stages} stages of {stage_bytes} bytes need {smem} bytes of "
                f"shared memory (2 stages at least, {_SMEM_LIMIT} at most)"
            )
        # TMA-store epilogue: 64x64 swizzled staging boxes per consumer warpgroup, two in a ring
        # ("tma"), or the warpgroup's whole tile ("tma_tile": its stores overlap the next tile)
        boxes = m_sub * p.BN // 64 if self.epilogue == "tma_tile" else 2
        epi = consumers * boxes * _BOX_BYTES
        can_tma = (p.c_dtype.nbytes == 2 and p.BN % 64 == 0 and (p.N * p.c_dtype.nbytes) % 16 == 0
                   and smem + epi <= _SMEM_LIMIT)
        if self.epilogue in ("tma", "tma_tile", "overlap") and not can_tma:
            raise UnsupportedError(
                f"CUDA backend: the {self.epilogue!r} epilogue stores through TMA: it needs a "
                f"16-bit C with 16-byte rows (N * 2 a multiple of 16), BN a multiple of 64 and "
                f"{epi} more bytes of shared memory (plan {p.name!r}: {p.c_dtype.value}, N={p.N}, "
                f"BN={p.BN}, {smem} bytes already)")
        if self.epilogue == "auto":  # overlapped TMA stores where they fit (measured the fastest)
            self.epilogue = "overlap" if can_tma else "direct"
        tma_store = can_tma and self.epilogue not in ("direct", "none")
        rs = _static_receivers(p, cx)
        recv, send = (None, None) if rs is None else rs
        return _Shape(consumers, wg_m, m_sub, cx, p.num_stages, chunks[0], chunks[1],
                      smem + (epi if tma_store else 0), tma_store, recv, send, boxes)

    def _check_multicast(self, op: OperandLoad, cluster: int, rows: int) -> int:
        mc = op.multicast
        if mc is None:
            return 1
        if mc.cluster_size != cluster:
            raise UnsupportedError(
                f"operand {op.name}: multicast plan is for clusters of {mc.cluster_size} but the "
                f"kernel's cluster has {cluster} CTAs"
            )
        for e, allowed in ((mc.issue, _LOOP_VARS), (mc.mask, _LOOP_VARS), (mc.guard, _LOOP_VARS),
                           (mc.same, _PAIR_VARS)):
            names = {s.name for s in sympy.sympify(e).free_symbols}
            if not names <= set(allowed):
                raise UnsupportedError(
                    f"operand {op.name}: multicast expression {e} uses {sorted(names - set(allowed))}"
                    f"; the CUDA kernel provides only {', '.join(allowed)}"
                )
        if mc.mode is not MulticastMode.SLICED:
            return 1
        n = _const_int(mc.slice_count) if mc.closed_form and mc.guard == sympy.true else None
        chunks = n if n is not None else cluster
        if rows % chunks != 0 or (rows // chunks) % 8 != 0:
            raise UnsupportedError(
                f"operand {op.name}: sliced multicast cuts the box's {rows} rows into {chunks} "
                "slices; each must be a whole number of 8-row swizzle atoms"
            )
        return chunks

    # ------------------------------------------------------------------ file
    def emit(self) -> str:
        sections = [
            self._emit_header(),
            INDEX_HELPERS,
            self._emit_constants(),
            self.emit_schedule(),
            "#if defined(__CUDACC__)",
            DEVICE_HELPERS,
            wgmma_function(self.plan.BN, self.plan.dtype.value, not self.plan.b_transposed),
            self._emit_fixup() if self.partials else "",
            self._emit_kernel(),
            self._emit_host(),
            "#endif  // __CUDACC__",
        ]
        return "\n".join(s.strip("\n") + "\n" for s in sections)

    def _emit_header(self) -> str:
        p, s = self.plan, self.shape
        lines = [
            f"// Generated by tilec from plan {p.name!r}: C[{p.M}, {p.N}] = A[{p.M}, {p.K}] @ "
            f"{f'B[{p.N}, {p.K}]^T' if p.b_transposed else f'B[{p.K}, {p.N}]'}, {p.dtype.value} in, fp32 accumulate, {p.c_dtype.value} out.",
            f"// Tiles {p.BM}x{p.BN}x{p.BK}, {s.stages} stages, {s.consumers} consumer warpgroup(s), "
            f"cluster {s.cluster}, grid {p.work.grid}, tile order: {p.order.description}.",
            f"// Epilogue: {self._epilogue_name()}.",
            "// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 (-shared -Xcompiler -fPIC)",
        ]
        for op in (p.a, p.b):
            mc = op.multicast
            if mc is not None:
                form = "closed" if mc.closed_form else "general"
                if mc.closed_form and mc.guard != sympy.true:
                    form = "closed under a run-time guard, else general"
                lines.append(f"// Operand {op.name}: multicast {mc.mode.value}, {form} form; "
                             f"facts: {', '.join(map(str, mc.facts)) or 'none'}.")
        lines += ["#include <cstdint>", "#include <cstring>"]
        lines += [
            "#if defined(__CUDACC__)",
            "#include <cuda.h>",
            "#include <cuda_runtime.h>",
            "#include <cuda_bf16.h>",
            "#include <cuda_fp16.h>",
            "#endif",
        ]
        return "\n".join(lines)

    def _emit_constants(self) -> str:
        p, s = self.plan, self.shape
        consts = {
            "M": p.M, "N": p.N, "K": p.K, "BM": p.BM, "BN": p.BN, "BK": p.BK,
            "K_ITERS": p.k_iters, "STAGES": s.stages, "CONSUMERS": s.consumers,
            "WG_M": s.wg_m, "M_SUB": s.m_sub, "CLUSTER": s.cluster, "GRID": p.work.grid,
            "THREADS": s.threads, "TILES_M": p.order.tiles_m, "TILES_N": p.order.tiles_n,
            "NUM_TILES": int(p.order.num_tiles), "CHUNKS_A": s.chunks_a, "CHUNKS_B": s.chunks_b,
            "SMEM_BYTES": s.smem_bytes,
            "TMA_STORE": int(s.tma_store),
            "EPI_BYTES": s.consumers * s.epi_boxes * _BOX_BYTES if s.tma_store else 0,
        }
        consts |= self._work_constants()
        body = [f"constexpr int {k} = {v};" for k, v in consts.items()]
        body += [
            f"constexpr uint32_t A_STAGE_BYTES = BM * BK * {p.dtype.nbytes};",
            f"constexpr uint32_t B_STAGE_BYTES = BN * BK * {p.dtype.nbytes};",
            "constexpr uint32_t STAGE_BYTES = A_STAGE_BYTES + B_STAGE_BYTES;",
        ]
        if s.receivers is not None and s.cluster > 1:
            pack = lambda ms: sum(m << (8 * r) for r, m in enumerate(ms))  # noqa: E731
            body += [
                "// Stage release (docs/cuda_backend.md): byte r of RECV is R'(r), the CTAs rank r's "
                "loads land in (r too);",
                "// byte r of SEND is S'(r) = {x : r in R'(x)}, the CTAs whose empty barriers rank r's "
                "consumers arrive on.",
                f"constexpr uint64_t RECV = 0x{pack(s.receivers):x}ull;",
                f"constexpr uint64_t SEND = 0x{pack(s.senders):x}ull;",
            ]
        return f"namespace {self.cname} {{\n" + "\n".join(body) + "\n}"

    def _work_constants(self) -> dict[str, int]:
        """The decomposition's numbers, counted in groups of CLUSTER tiles and clusters."""
        p, c = self.plan, self.shape.cluster
        w = p.work
        walk = p.order.ctas or w.grid
        out = {"WORKERS": w.grid // c, "GROUPS": self._groups, "ORDER_CLUSTERS": walk // c}
        if w.split_k:
            out |= {"SPLITS": w.splits}
        elif w.stream_k:
            dp0, dp1 = w.dp_range
            out |= {"SK_TILES": w.sk_tiles, "SK_CTAS": w.sk_ctas, "SK_START": w.sk_start,
                    "DP_START": dp0, "DP_TILES": dp1 - dp0}
        return out

    @property
    def _groups(self) -> int:
        """Groups of CLUSTER consecutive linear tiles the workers walk (a partial split's
        ``num_tiles``: lowering counts it in groups; checked in ``_check``)."""
        return -(-int(self.plan.order.num_tiles) // self.shape.cluster)

    @property
    def partials(self) -> bool:
        """Whether some work units cover part of a tile's K range (a fix-up is printed)."""
        w = self.plan.work
        return w.split_k or w.stream_k

    def workspace(self) -> tuple[int, int]:
        """(fp32 workspace elements, int32 tickets) the launcher allocates for the fix-up:
        the split's partial slots (deterministic) or partial tiles (atomic), each of CLUSTER
        tiles, and a ticket per partial tile, CTA of the cluster and consumer warpgroup."""
        if not self.partials:
            return 0, 0
        w, c = self.plan.work, self.shape.cluster
        per = c * self.plan.BM * self.plan.BN
        idx = w.partial_slots if w.fixup is Fixup.DETERMINISTIC else w.partial_tiles
        return idx * per, w.partial_tiles * c * self.shape.consumers

    def _work_fn(self, ret: str, name: str, expr: sympy.Basic, **bounds: int) -> str:
        """One WorkSplit formula as a function of its variables (named as in the plan, each in
        ``[0, bound]``): in ``int``, or in ``long long`` where :func:`magnitude` says an
        intermediate may pass INT_MAX (then an ``int`` result is cast back).  ``it_end`` is
        positive: every Stream-K CTA's range is nonempty (``_check``)."""
        e = sympy.sympify(expr)
        wide = magnitude(e, bounds) > INT_MAX
        names = list(bounds)
        args = ", ".join(f"{'long long' if wide else 'int'} {n}" for n in names)
        ctx = Context().positive(IT_END)
        body = CudaExprPrinter(ctx=ctx, wide=wide).doprint(_nonneg_symbols(e))
        if wide and ret == "int":
            body = f"(int)({body})"
        unused = "".join(f"(void){n}; " for n in names if n not in {v.name for v in e.free_symbols})
        return f"TILEC_HD {ret} {name}({args}) {{ {unused}return {body}; }}"

    def _emit_work(self) -> list[str]:
        """``work_unit(w, j, g, kb0, kb1)``: unit ``j`` of worker ``w`` (a CTA, or a cluster) is
        group ``g`` (tiles ``g * CLUSTER + rank``) over k-iterations [kb0, kb1); the same walk as
        :func:`tilec.transforms.decompose.work_units`.  With partial units, ``fix_of`` says where
        a partial goes and ``fix_slot`` where the i-th partial of a tile (K order) lives.  Every
        index formula is the plan's :class:`~tilec.transforms.plan.WorkSplit`'s, printed."""
        w = self.plan.work
        head = "TILEC_HD bool work_unit(int w, int j, int& g, int& kb0, int& kb1) {"
        if not self.partials:
            return [f"// {w.kind.value}: group w + j * WORKERS, whole K", head,
                    "  g = w + j * WORKERS; kb0 = 0; kb1 = K_ITERS; return g < GROUPS;", "}"]
        if w.split_k:
            return self._split_k_work(head) + self._partials_work()
        return self._stream_k_work(head) + self._partials_work()

    def _split_k_work(self, head: str) -> list[str]:
        w = self.plan.work
        units, n = w.num_tiles * w.splits, w.splits
        group, part = w.split_k_unit(UNIT)
        k_begin, k_end = w.split_k_range(PART)
        return [
            "// split-K: unit u = w + j * WORKERS is K part s of group g (WorkSplit.split_k_unit,",
            "// split_k_range)",
            self._work_fn("int", "unit_group", group, u=units),
            self._work_fn("int", "unit_part", part, u=units),
            self._work_fn("int", "part_k_begin", k_begin, s=n),
            self._work_fn("int", "part_k_end", k_end, s=n),
            head,
            "  const int u = w + j * WORKERS;",
            "  if (u >= GROUPS * SPLITS) return false;",
            "  const int s = unit_part(u);",
            "  g = unit_group(u); kb0 = part_k_begin(s); kb1 = part_k_end(s);",
            "  return true;", "}",
        ]

    def _stream_k_work(self, head: str) -> list[str]:
        w = self.plan.work
        it = "long long" if w.sk_iters > INT_MAX else "int"
        b = dict(it_begin=w.sk_iters, it_end=w.sk_iters, tile=w.num_tiles)
        it_begin, it_end = w.sk_range(CTA)
        first, end = w.sk_tiles_of(IT_BEGIN, IT_END)
        k_begin, k_end = w.sk_unit_range(TILE, IT_BEGIN, IT_END)
        order = "SK first, then data-parallel" if w.sk_first else "data-parallel, then SK"
        return [
            f"// {w.kind.value}: Stream-K over groups [SK_START, SK_START + SK_TILES) cut evenly "
            f"over SK_CTAS workers by k-iterations; the other groups data-parallel ({order})",
            "// (WorkSplit.sk_range, sk_tiles_of, sk_unit_range)",
            "static_assert(SK_START + SK_TILES <= GROUPS && DP_START + DP_TILES <= GROUPS, \"regions\");",
            self._work_fn(it, "sk_begin", it_begin, cta=w.sk_ctas),
            self._work_fn(it, "sk_end", it_end, cta=w.sk_ctas),
            self._work_fn("int", "sk_tile_begin", first, it_begin=b["it_begin"]),
            self._work_fn("int", "sk_tile_end", end, it_end=b["it_end"]),
            self._work_fn("int", "sk_k_begin", k_begin, tile=b["tile"], it_begin=b["it_begin"]),
            self._work_fn("int", "sk_k_end", k_end, tile=b["tile"], it_end=b["it_end"]),
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

    def _partials_work(self) -> list[str]:
        """Where the partials of partial-region tile ``tile`` come from and live (WorkSplit's
        first_contributor, contributors, partial_slot), and ``fix_of``: for unit ``j`` of worker
        ``w`` (split-K: unit ``u``; Stream-K: CTA ``w``), its tile, its place in K order, the
        number of partials and its slot."""
        w = self.plan.work
        n = w.partial_tiles
        j = max(w.splits, w.sk_ctas)
        contributor = "w + j * WORKERS" if w.split_k else "w"
        tile = "g" if w.split_k else "g - SK_START"
        return [
            "// the partials of a partial-region tile f (a split-K group, or a Stream-K region's own",
            "// group index): its first contributor (unit or worker), how many, the j-th one's slot",
            self._work_fn("int", "first_contributor", w.first_contributor(TILE), tile=n),
            self._work_fn("int", "contributors", w.contributors(TILE), tile=n),
            self._work_fn("int", "fix_slot", w.partial_slot(TILE, J), tile=n, j=j),
            "TILEC_HD void fix_of(int w, int j, int g, int& f, int& ord, int& cnt, int& slot) {",
            *([] if w.split_k else ["  (void)j;"]),
            f"  f = {tile}; ord = {contributor} - first_contributor(f); cnt = contributors(f);",
            "  slot = fix_slot(f, ord);",
            "}",
        ]

    # ------------------------------------------------------------------ schedule functions
    def _fn(self, ret: str, name: str, params: tuple[str, ...], expr: sympy.Basic,
            ctx: Context | None = None) -> str:
        args = ", ".join(f"int {v}" for v in params)
        printer = self.expr if ctx is None else CudaExprPrinter(ctx=ctx)
        body = printer.doprint(_nonneg_symbols(sympy.sympify(expr)))
        return f"TILEC_HD {ret} {name}({args}) {{ return {body}; }}"

    def emit_schedule(self) -> str:
        """The schedule's index logic as plain ``__host__ __device__`` C++ (host-compilable).

        Tile order (``tile_m``, ``tile_n``, ``tile_alive``) and, per multicast operand X,
        ``mc_X_issue``/``mc_X_mask``/``mc_X_slice_index``/``mc_X_slice_count`` over
        (rank, i_rt, cidx), each printed from the plan's sympy expressions.
        """
        o = self.plan.order
        t = o.index.name
        out = [SCHEDULE_BEGIN, f"namespace {self.cname} {{"]
        live = Context().bound(o.index, o.num_tiles)  # tile_alive asks t < NUM_TILES first
        out.append(self._fn("int", "tile_m", (t,), o.tile_m, live))
        out.append(self._fn("int", "tile_n", (t,), o.tile_n, live))
        out.append(
            f"TILEC_HD bool tile_alive(int {t}) {{ return {t} < NUM_TILES && "
            f"tile_m({t}) < TILES_M && tile_n({t}) < TILES_N; }}"
        )
        out += self._emit_work()
        for op in (self.plan.a, self.plan.b):
            if op.multicast is not None:
                out += self._multicast_functions(op.name.lower(), op.multicast)
        out += ["}", SCHEDULE_END]
        return "\n".join(out)

    def _multicast_functions(self, x: str, mc: MulticastPlan) -> list[str]:
        v = _LOOP_VARS
        sliced = mc.mode is MulticastMode.SLICED
        out = [f"// operand {x.upper()}: {mc.mode.value} multicast"]
        use_closed = mc.closed_form
        use_general = (not mc.closed_form) or mc.guard != sympy.true
        if use_general:
            out.append(self._fn("bool", f"mc_{x}_same", _PAIR_VARS, mc.same))
            # issue(rank) = AND_{r < rank} !same(r, rank); sliced: every member issues its slice
            issue = (f"mc_{x}_same(rank, rank, i_rt, cidx)" if sliced else
                     f"[&]() {{ for (int r = 0; r < rank; ++r) if (mc_{x}_same(r, rank, i_rt, cidx)) "
                     "return false; return true; }()")
            out += [
                f"TILEC_HD bool mc_{x}_issue_general(int rank, int i_rt, int cidx) {{ return {issue}; }}",
                f"TILEC_HD int mc_{x}_mask_general(int rank, int i_rt, int cidx) {{ int m = 0; "
                f"for (int r = 0; r < CLUSTER; ++r) if (mc_{x}_same(r, rank, i_rt, cidx)) m |= 1 << r; "
                "return m; }",
                f"TILEC_HD int mc_{x}_slice_index_general(int rank, int i_rt, int cidx) {{ int n = 0; "
                f"for (int r = 0; r < rank; ++r) n += mc_{x}_same(r, rank, i_rt, cidx) ? 1 : 0; "
                "return n; }",
                f"TILEC_HD int mc_{x}_slice_count_general(int rank, int i_rt, int cidx) {{ int n = 0; "
                f"for (int r = 0; r < CLUSTER; ++r) n += mc_{x}_same(r, rank, i_rt, cidx) ? 1 : 0; "
                "return n; }",
            ]
        if use_closed:
            out.append(self._fn("bool", f"mc_{x}_issue_closed", v, mc.issue))
            out.append(self._fn("int", f"mc_{x}_mask_closed", v, mc.mask))
            if sliced:
                if mc.slice_index is None or mc.slice_count is None:
                    raise UnsupportedError(
                        f"operand {x.upper()}: a sliced closed form needs slice_index and slice_count"
                    )
                out.append(self._fn("int", f"mc_{x}_slice_index_closed", v, mc.slice_index))
                out.append(self._fn("int", f"mc_{x}_slice_count_closed", v, mc.slice_count))
        if use_closed and use_general:
            out.append(self._fn("bool", f"mc_{x}_guard", v, mc.guard))
        kinds = ["issue", "mask"] + (["slice_index", "slice_count"] if sliced else [])
        for k in kinds:
            ret = "bool" if k == "issue" else "int"
            if use_closed and use_general:
                call = (f"mc_{x}_guard(rank, i_rt, cidx) ? mc_{x}_{k}_closed(rank, i_rt, cidx) : "
                        f"mc_{x}_{k}_general(rank, i_rt, cidx)")
            else:
                call = f"mc_{x}_{k}_{'closed' if use_closed else 'general'}(rank, i_rt, cidx)"
            out.append(f"TILEC_HD {ret} mc_{x}_{k}(int rank, int i_rt, int cidx) {{ return {call}; }}")
        return out

    # ------------------------------------------------------------------ kernel
    def _emit_kernel(self) -> str:
        p, s = self.plan, self.shape
        cdims = f" __cluster_dims__({s.cluster}, 1, 1)" if s.cluster > 1 else ""
        ab = _CTYPE[p.dtype]
        lines = [
            f"namespace {self.cname} {{",
            f"using TIn = {ab};",
            f"using TOut = {_CTYPE[p.c_dtype]};",
            "",
            f"__global__ void __launch_bounds__(THREADS, 1){cdims}",
            "gemm_kernel(const __grid_constant__ CUtensorMap tmA, const __grid_constant__ CUtensorMap tmB,",
            "            const __grid_constant__ CUtensorMap tmC, TOut* __restrict__ C,",
            "            float* __restrict__ ws, int* __restrict__ tickets) {",
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
              if self.partials else []),
            "  (void)C; (void)tmC; (void)ws; (void)tickets;",
            "  const int wg = threadIdx.x / 128;",
            "  const int ctid = threadIdx.x % 128;",
            f"  const int rank = {'(int)tilec::cluster_ctarank()' if s.cluster > 1 else '0'};",
            "  // the worker: this CTA (no cluster) or its cluster; it walks work units work_unit(worker, j)",
            f"  const int worker = {'(int)tilec::cluster_id_x()' if s.cluster > 1 else '(int)blockIdx.x'};",
            "  (void)rank;",
            "  if (threadIdx.x == 0) {",
            "    for (int s = 0; s < STAGES; ++s) {",
            "      tilec::mbar_init(&full[s], 1);  // the local producer's arrive.expect_tx",
            ("      // one arrival per consumer warpgroup of each CTA in R'(rank)\n"
             "      tilec::mbar_init(&empty[s], CONSUMERS * __popcll((RECV >> (8 * rank)) & 0xFF));"
             if s.receivers is not None and s.cluster > 1 else
             "      tilec::mbar_init(&empty[s], CONSUMERS * CLUSTER);  // every consumer warpgroup of the cluster"),
            "    }",
            "    tilec::mbar_fence_init();",
            "  }",
            "  tilec::cluster_sync();" if s.cluster > 1 else "  __syncthreads();",
            "  if (wg == 0) {",
            f"    tilec::setmaxnreg_dec<{_PRODUCER_REGS}>();",
            "    if (ctid == 0) {",
            *self._producer(),
            "    }",
            "  } else {",
            f"    tilec::setmaxnreg_inc<{_CONSUMER_REGS}>();",
            *self._consumer(),
            "  }",
            "  // No CTA leaves while a peer may still multicast into it or arrive on its barriers.",
            "  tilec::cluster_sync();" if s.cluster > 1 else "",
            "}",
            "}  // namespace",
        ]
        return "\n".join(lines)

    def _unit_header(self, ind: str) -> list[str]:
        """The tile of this CTA in work unit (g, kb0, kb1), and the schedule's own (round,
        cluster) of that tile, which the multicast functions are written over."""
        t = self.plan.order.index.name
        return [
            f"{ind}const int {t} = g * CLUSTER + rank;",
            f"{ind}const int i_rt = g / ORDER_CLUSTERS, cidx = g % ORDER_CLUSTERS;",
            f"{ind}(void)i_rt; (void)cidx;",
            f"{ind}const bool alive = tile_alive({t});",
            f"{ind}const int m0 = tile_m({t}) * BM, n0 = tile_n({t}) * BN;",
        ]

    def _producer(self) -> list[str]:
        p, s = self.plan, self.shape
        exact = s.receivers is not None
        ind = "      "
        out = [f"{ind}tilec::tma_prefetch_map(&tmA);", f"{ind}tilec::tma_prefetch_map(&tmB);"]
        for op in (p.a, p.b):
            if op.evict != "normal":
                out.append(f"{ind}const uint64_t pol_{op.name.lower()} = tilec::policy_evict_{op.evict}();")
        out += [f"{ind}int stage = 0; uint32_t phase = 0;",
                f"{ind}int g, kb0, kb1;",
                f"{ind}for (int j = 0; work_unit(worker, j, g, kb0, kb1); ++j) {{"]
        i2 = ind + "  "
        out += self._unit_header(i2)
        if exact:
            out.append(f"{i2}if (!alive) continue;  // the whole cluster skips this unit (checked when printed)")
        elif s.cluster > 1 and (p.a.multicast or p.b.multicast):
            out += [
                f"{i2}// Dead CTAs never receive: keep them out of every mask.",
                f"{i2}int alive_mask = 0;",
                f"{i2}for (int r = 0; r < CLUSTER; ++r) alive_mask |= tile_alive(g * CLUSTER + r) ? 1 << r : 0;",
            ]
        for op in (p.a, p.b):
            x, mc = op.name.lower(), op.multicast
            if mc is None:
                out.append(f"{i2}const bool issue_{x} = alive;")
                continue
            live_mask = "" if exact else " & alive_mask"
            out += [
                f"{i2}const bool issue_{x} = alive && mc_{x}_issue(rank, i_rt, cidx);",
                f"{i2}const uint16_t mask_{x} = (uint16_t)(mc_{x}_mask(rank, i_rt, cidx){live_mask});",
            ]
            if mc.mode is MulticastMode.SLICED:
                out += [
                    f"{i2}const int sidx_{x} = mc_{x}_slice_index(rank, i_rt, cidx);",
                    f"{i2}const int scnt_{x} = mc_{x}_slice_count(rank, i_rt, cidx);",
                ]
        expect = "STAGE_BYTES" if exact else "alive ? STAGE_BYTES : 0u"
        out += [
            f"{i2}for (int kb = kb0; kb < kb1; ++kb) {{",
            f"{i2}  // Every CTA of R'(rank) has released this stage's previous use (exact release),",
            f"{i2}  // or every consumer of the cluster has (all-cluster release).",
            f"{i2}  tilec::mbar_wait(&empty[stage], phase ^ 1);",
            f"{i2}  // This CTA receives the whole A and B boxes (from itself or peers) when alive.",
        ]
        if self.loads:
            out += [f"{i2}  tilec::mbar_arrive_expect_tx(&full[stage], {expect});"]
            out += self._load(p.a, "sA", "m0", p.BM, s.chunks_a, i2 + "  ")
            out += (self._load(p.b, "sB", "n0", p.BN, s.chunks_b, i2 + "  ") if p.b_transposed
                    else self._load_kn(p.b, s.chunks_b, i2 + "  "))
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

    def _load(self, op: OperandLoad, buf: str, row0: str, rows: int, chunks: int, ind: str) -> list[str]:
        x, mc = op.name.lower(), op.multicast
        tm = f"&tm{op.name}"
        hint = f", pol_{x}" if op.evict != "normal" else ""
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

    def _load_kn(self, op: OperandLoad, chunks: int, ind: str) -> list[str]:
        """B given K x N: the stage's BK x BN tile as ``chunks`` boxes of BK x 64 (128-byte rows),
        box ``c`` at ``c * 64 * BK`` elements (MN-major for wgmma, transpose-B)."""
        mc = op.multicast
        hint = ", pol_b" if op.evict != "normal" else ""
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

    def _release(self, st: str) -> str:
        """One consumer warpgroup gives stage ``st`` back: one arrival on each CTA of S'(rank)
        (exact), of the whole cluster (all-cluster), or on its own barrier (no cluster)."""
        s = self.shape
        if s.cluster == 1:
            return f"if (ctid == 0) tilec::mbar_arrive_local(&empty[{st}]);"
        if s.receivers is not None:
            return (f"if (ctid < CLUSTER && ((SEND >> (8 * rank + ctid)) & 1)) "
                    f"tilec::mbar_arrive_remote(&empty[{st}], ctid);")
        return f"if (ctid < CLUSTER) tilec::mbar_arrive_remote(&empty[{st}], ctid);"

    def _consumer(self) -> list[str]:
        p, s = self.plan, self.shape
        exact = s.receivers is not None
        ind = "    "
        i2 = ind + "  "
        # A dead CTA of a live cluster still waits for and releases every stage (all-cluster
        # protocol); its MMAs are skipped.  The waits stay unconditional either way: a wait
        # with nothing in flight is free, and ptxas then needs no wait of its own before the
        # accumulators are read.
        guard = "" if exact else "if (alive) "
        out = [
            f"{ind}const int cw = wg - 1;  // consumer warpgroup: rows [cw * WG_M, (cw + 1) * WG_M)",
            f"{ind}float acc[M_SUB][BN / 2];",
            f"{ind}int stage = 0, prev = 0; uint32_t phase = 0;",
            *([f"{ind}uint32_t epi_count = 0;  // TMA-store staging boxes used so far (parity picks one)"]
              if s.tma_store and self.epilogue != "tma_tile" else []),
            *(self._overlap_declare(ind) if self.epilogue == "overlap" else []),
            f"{ind}(void)prev;",
            f"{ind}int g, kb0, kb1;",
            f"{ind}for (int j = 0; work_unit(worker, j, g, kb0, kb1); ++j) {{",
            *self._unit_header(i2),
        ]
        if exact:
            out.append(f"{i2}if (!alive) continue;")
        out += [
            f"{i2}for (int kb = kb0; kb < kb1; ++kb) {{",
            f"{i2}  tilec::mbar_wait(&full[stage], phase);",
            f"{i2}  {guard}{{",
            f"{i2}    const TIn* a = sA + stage * BM * BK + cw * WG_M * BK;",
            f"{i2}    const TIn* b = sB + stage * BN * BK;",
            f"{i2}    tilec::wgmma_fence();",
            f"{i2}    #pragma unroll",
            f"{i2}    for (int kk = 0; kk < BK / 16; ++kk) {{",
            (f"{i2}      const uint64_t db = tilec::smem_desc_sw128(b + kk * 16);" if p.b_transposed else
             f"{i2}      const uint64_t db = tilec::smem_desc_sw128_mn(b + kk * 16 * 64, 64 * BK * sizeof(TIn));"),
            f"{i2}      #pragma unroll",
            f"{i2}      for (int ms = 0; ms < M_SUB; ++ms)",
            f"{i2}        tilec::wgmma_m64n{p.BN}k16(acc[ms], tilec::smem_desc_sw128(a + ms * 64 * BK + kk * 16), db,",
            f"{i2}                                  (kb > kb0 || kk > 0) ? 1 : 0);",
            f"{i2}    }}",
            f"{i2}    tilec::wgmma_commit();",
            f"{i2}  }}",
            *(self._overlap_step(i2 + "  ") if self.epilogue == "overlap" else []),
            f"{i2}  tilec::wgmma_wait<{self.mma_in_flight}>();",
        ]
        if s.cluster > 1:
            who = "S'(rank)" if exact else "the whole cluster"
            out.append(f"{i2}  // Release the stage to every CTA that loads into this one ({who}).")
        if self.mma_in_flight:
            out += [
                f"{i2}  // One wgmma group stays in flight: the previous stage is now read, release it.",
                f"{i2}  if (kb > kb0) {{ {self._release('prev')} }}",
                f"{i2}  prev = stage;",
                f"{i2}  if (++stage == STAGES) {{ stage = 0; phase ^= 1; }}",
                f"{i2}}}",
                f"{i2}tilec::wgmma_wait<0>();",
                f"{i2}{self._release('prev')}",
            ]
        else:
            out += [
                f"{i2}  {self._release('stage')}",
                f"{i2}  if (++stage == STAGES) {{ stage = 0; phase ^= 1; }}",
                f"{i2}}}",
            ]
        epi = self._epilogue_tma(i2 + "  ") if s.tma_store else self._epilogue(i2 + "  ")
        if self.epilogue == "none":  # a measurement: the kernel without its epilogue
            epi = [f"{i2}  if (acc[0][0] == 12345.678f) C[0] = TOut(0.f);  // keeps the MMAs alive"]
        if self.epilogue == "overlap":
            # the last tile's stores that this unit's k-iterations did not cover, then this tile
            out += self._overlap_rest(i2)
            epi = self._overlap_pack(i2 + "  ")
        if self.partials:
            out += [f"{i2}if (alive && (kb0 != 0 || kb1 != K_ITERS) && !{self._fixup_call()}) continue;"]
        out += [
            f"{i2}if (alive) {{",
            *epi,
            f"{i2}}}",
            f"{ind}}}",
        ]
        if self.epilogue == "overlap":  # the last tile's boxes, before the wait for all stores
            out += self._overlap_rest(ind)
        if s.tma_store:
            out.append(f"{ind}if (ctid == 0) tilec::tma_store_wait<0>();  // stores done before exit")
        return out

    # ------------------------------------------------------------------ overlapped epilogue
    # The tile's fp32 accumulators are packed to 16-bit pairs in registers (pend: half the
    # registers) and the consumer starts the next tile at once.  Each of its first k-iterations,
    # after issuing its wgmmas, writes one 64x64 box of the packed tile into the staging ring of
    # the "tma" epilogue and hands it to a TMA store, so the copy engine writes C while the
    # tensor cores run.  Boxes a unit did not cover go after its k-loop; the last tile's after
    # the unit loop.  (Stores straight from registers in the k-loop were slower than the
    # epilogue they hid, 0.83-0.95x: bench/results/cuda_perf_2026-11-23c.json.)

    def _overlap_declare(self, ind: str) -> list[str]:
        p = self.plan
        pair = {DType.BF16: "__nv_bfloat162", DType.FP16: "__half2"}[p.c_dtype]
        conv = {DType.BF16: "__floats2bfloat162_rn", DType.FP16: "__floats2half2_rn"}[p.c_dtype]
        return [
            f"{ind}// overlapped epilogue: the last tile, packed, stored in EPI_STEPS boxes of 64x64",
            f"{ind}constexpr int EPI_STEPS = M_SUB * (BN / 64);",
            f"{ind}uint32_t pend[M_SUB][BN / 8][2];",
            f"{ind}int pend_m = 0, pend_n = 0, flushed = EPI_STEPS;  // EPI_STEPS: nothing pending",
            f"{ind}const int warp = ctid / 32, lane = ctid % 32;",
            f"{ind}uint8_t* ebuf = epi + cw * {self.shape.epi_boxes * _BOX_BYTES};",
            f"{ind}auto pack = [](float x, float y) {{ {pair} v = {conv}(x, y); uint32_t u; "
            "memcpy(&u, &v, 4); return u; };",
        ]

    def _overlap_store(self, ind: str, c: str) -> list[str]:
        """Box ``c`` (a compile-time constant once unrolled) of the pending tile: rows
        ``(c / (BN/64)) * 64``, columns ``(c % (BN/64)) * 64`` of this warpgroup's part."""
        return [
            f"{ind}const int ms = {c} / (BN / 64), q = {c} % (BN / 64);",
            f"{ind}uint8_t* box = ebuf + (epi_count & 1) * {_BOX_BYTES};",
            f"{ind}// the store that last read this box (two boxes ago) has finished reading it",
            f"{ind}if (ctid == 0) tilec::tma_store_wait_read<1>();",
            f"{ind}tilec::named_bar_sync(1 + cw, 128);",
            *self._box_write(ind, "pend[ms][j][h]"),
            f"{ind}tilec::fence_proxy_async_smem();  // st.shared -> the copy engine's reads",
            f"{ind}tilec::named_bar_sync(1 + cw, 128);",
            f"{ind}if (ctid == 0) {{",
            f"{ind}  tilec::tma_store(&tmC, box, pend_n + q * 64, pend_m + ms * 64);",
            f"{ind}  tilec::tma_store_commit();",
            f"{ind}}}",
            f"{ind}++epi_count;",
        ]

    def _overlap_step(self, ind: str) -> list[str]:
        return [
            f"{ind}// one box of the last tile's stores while this k-iteration's wgmmas run",
            f"{ind}if (flushed < EPI_STEPS) {{",
            f"{ind}  #pragma unroll",
            f"{ind}  for (int c = 0; c < EPI_STEPS; ++c) {{",
            f"{ind}    if (c != flushed) continue;",
            *self._overlap_store(ind + "    ", "c"),
            f"{ind}  }}",
            f"{ind}  ++flushed;",
            f"{ind}}}",
        ]

    def _overlap_rest(self, ind: str) -> list[str]:
        return [
            f"{ind}#pragma unroll",
            f"{ind}for (int c = 0; c < EPI_STEPS; ++c) {{",
            f"{ind}  if (c < flushed) continue;",
            *self._overlap_store(ind + "  ", "c"),
            f"{ind}}}",
            f"{ind}flushed = EPI_STEPS;",
        ]

    def _overlap_pack(self, ind: str) -> list[str]:
        return [
            f"{ind}pend_m = m0 + cw * WG_M; pend_n = n0;",
            f"{ind}#pragma unroll",
            f"{ind}for (int ms = 0; ms < M_SUB; ++ms) {{",
            f"{ind}  #pragma unroll",
            f"{ind}  for (int j = 0; j < BN / 8; ++j) {{",
            f"{ind}    pend[ms][j][0] = pack(acc[ms][4 * j], acc[ms][4 * j + 1]);",
            f"{ind}    pend[ms][j][1] = pack(acc[ms][4 * j + 2], acc[ms][4 * j + 3]);",
            f"{ind}  }}",
            f"{ind}}}",
            f"{ind}flushed = 0;",
        ]

    def _epilogue_name(self) -> str:
        e = self.epilogue
        if self.shape.tma_store:
            return {"tma_tile": "the whole tile staged in shared memory, TMA stores overlap the next tile",
                    "overlap": "packed to 16 bits in registers; during the next tile's first k-iterations, "
                               "one box a k-iteration through two staging boxes -> TMA stores"
                    }.get(e, "registers -> two staging boxes -> TMA stores")
        return {"none": "NONE (a measurement: C is not written)"}.get(e, "registers -> global")

    def _fixup_call(self) -> str:
        return "fixup(acc, ws, tickets, fix_last, worker, j, g, rank, cw, ctid)"

    def _emit_fixup(self) -> str:
        """The fix-up of a partial tile, per consumer warpgroup (its WG_M rows): the partial goes
        to the workspace in the accumulators' own layout (float4 ``q`` of thread ``ctid`` at
        ``4 * (q * 128 + ctid)``, so a warp's stores are contiguous), then a ticket; the
        warpgroup that takes the last ticket of the tile gets the whole sum in ``acc`` and
        writes C (returns true).

        deterministic: every partial has its own slot; the last sums the slots in K order
        (bitwise repeatable).  atomic: partials are added (``red.global.add``) into one fp32
        tile, in whatever order they come; the last reads it and zeroes it for the next launch.
        """
        det = self.plan.work.fixup is Fixup.DETERMINISTIC
        sub = "WG_M * BN"
        region = f"(size_t)((IDX * CLUSTER + rank) * CONSUMERS + cw) * ({sub})"
        lines = [
            "namespace " + self.cname + " {",
            "__device__ __forceinline__ bool fixup(float (&acc)[M_SUB][BN / 2], float* ws, int* tickets,",
            "                                      int* fix_last, int worker, int j, int g, int rank,",
            "                                      int cw, int ctid) {",
            "  int f, ord, cnt, slot;",
            "  fix_of(worker, j, g, f, ord, cnt, slot);",
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
            "  __threadfence();  // this thread's partial is visible device-wide before the ticket",
            "  tilec::named_bar_sync(1 + cw, 128);",
            "  int* ticket = tickets + (f * CLUSTER + rank) * CONSUMERS + cw;",
            "  if (ctid == 0) fix_last[cw] = atomicAdd(ticket, 1) == cnt - 1;",
            "  tilec::named_bar_sync(1 + cw, 128);",
            "  if (!fix_last[cw]) return false;",
            "  __threadfence();",
        ]
        if det:
            lines += [
                "  // K order (bitwise repeatable): acc = slot 0, then += slots 1 .. cnt-1",
                "  for (int i = 0; i < cnt; ++i) {",
                "    const int s = fix_slot(f, i);",
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
                "      if (q % 8 == 7) asm volatile(\"\" ::: \"memory\");  // 8 loads in flight: no spills",
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
        return "\n".join(lines)

    def _epilogue_tma(self, ind: str) -> list[str]:
        """Registers -> 64x64 staging boxes in shared memory (128-byte swizzle: 16-byte chunk
        ``c/8 ^ row%8`` of each 128-byte row, so a warp's 8 rows x 4 threads hit 32 distinct
        banks) -> ``cp.async.bulk.tensor`` stores, which clip ragged M/N edges.

        Ring of two boxes per warpgroup: writing one overlaps the store of the other, but the
        third box waits for the first store to have read its box.  Whole tile ("tma_tile"):
        every box has its own staging, the stores run on while the next tile's MMAs do, and
        only the next epilogue waits (for stores long finished)."""
        p, s = self.plan, self.shape
        pair = {DType.BF16: "__nv_bfloat162", DType.FP16: "__half2"}[p.c_dtype]
        conv = {DType.BF16: "__floats2bfloat162_rn", DType.FP16: "__floats2half2_rn"}[p.c_dtype]
        tile = s.epi_boxes == s.m_sub * p.BN // 64 and self.epilogue == "tma_tile"
        write = self._box_write(ind + "    ", "pack(acc[ms][4 * j + 2 * h], acc[ms][4 * j + 2 * h + 1])")
        head = [
            f"{ind}const int warp = ctid / 32, lane = ctid % 32;",
            f"{ind}uint8_t* ebuf = epi + cw * {s.epi_boxes * _BOX_BYTES};",
            f"{ind}auto pack = [](float x, float y) {{ {pair} v = {conv}(x, y); uint32_t u; "
            "memcpy(&u, &v, 4); return u; };",
        ]
        loop = [f"{ind}#pragma unroll", f"{ind}for (int ms = 0; ms < M_SUB; ++ms) {{",
                f"{ind}  #pragma unroll", f"{ind}  for (int q = 0; q < BN / 64; ++q) {{"]
        store = f"tilec::tma_store(&tmC, box, n0 + q * 64, m0 + cw * WG_M + ms * 64);"
        if tile:
            box = f"{ind}    uint8_t* box = ebuf + (ms * (BN / 64) + q) * {_BOX_BYTES};"
            return head + [
                f"{ind}// the previous tile's stores have read the staging (they ran during this tile's MMAs)",
                f"{ind}if (ctid == 0) tilec::tma_store_wait_read<0>();",
                f"{ind}tilec::named_bar_sync(1 + cw, 128);",
                *loop, box, *write, f"{ind}  }}", f"{ind}}}",
                f"{ind}tilec::fence_proxy_async_smem();  // st.shared -> the copy engine's reads",
                f"{ind}tilec::named_bar_sync(1 + cw, 128);",
                f"{ind}if (ctid == 0) {{",
                *(ind + "  " + ln[len(ind):] for ln in [*loop, box, f"{ind}    {store}",
                                                        f"{ind}  }}", f"{ind}}}"]),
                f"{ind}  tilec::tma_store_commit();",
                f"{ind}}}",
            ]
        return head + [
            *loop,
            f"{ind}    uint8_t* box = ebuf + (epi_count & 1) * {_BOX_BYTES};",
            f"{ind}    // the store that last read this box (two boxes ago) has finished reading it",
            f"{ind}    if (ctid == 0) tilec::tma_store_wait_read<1>();",
            f"{ind}    tilec::named_bar_sync(1 + cw, 128);",
            *write,
            f"{ind}    tilec::fence_proxy_async_smem();  // st.shared -> the copy engine's reads",
            f"{ind}    tilec::named_bar_sync(1 + cw, 128);",
            f"{ind}    if (ctid == 0) {{",
            f"{ind}      {store}",
            f"{ind}      tilec::tma_store_commit();",
            f"{ind}    }}",
            f"{ind}    ++epi_count;",
            f"{ind}  }}",
            f"{ind}}}",
        ]

    def _box_write(self, ind: str, value: str) -> list[str]:
        """The 64x64 box (ms, q) of a warpgroup's tile into the staging ``box``, 128-byte
        swizzled: ``value`` is the packed pair of fragment group ``j`` (= 8q + jj), row half h."""
        return [
            f"{ind}const uint32_t base = tilec::smem_u32(box);",
            f"{ind}#pragma unroll",
            f"{ind}for (int jj = 0; jj < 8; ++jj) {{",
            f"{ind}  const int j = 8 * q + jj;",
            f"{ind}  #pragma unroll",
            f"{ind}  for (int h = 0; h < 2; ++h) {{",
            f"{ind}    const int r = warp * 16 + lane / 4 + 8 * h;",
            f"{ind}    tilec::st_shared_b32(base + r * 128 + ((jj ^ (r & 7)) << 4) + (lane % 4) * 4, {value});",
            f"{ind}  }}",
            f"{ind}}}",
        ]

    def _epilogue(self, ind: str) -> list[str]:
        """Registers -> global memory; wgmma's accumulator layout (PTX ISA, m64nNk16 D fragment):
        value 4j+q of a thread sits at row warp*16 + lane/4 + 8*(q/2), col 8j + 2*(lane%4) + q%2."""
        p = self.plan
        pair = {DType.BF16: "__nv_bfloat162", DType.FP16: "__half2", DType.FP32: "float2"}[p.c_dtype]
        conv = {DType.BF16: "__floats2bfloat162_rn(x, y)", DType.FP16: "__floats2half2_rn(x, y)",
                DType.FP32: "make_float2(x, y)"}[p.c_dtype]
        one = {DType.BF16: "__float2bfloat16_rn", DType.FP16: "__float2half_rn", DType.FP32: "float"}[p.c_dtype]
        vec_ok = p.N % 2 == 0
        store = [
            f"{ind}auto put = [&](int row, int col, float x, float y) {{",
            f"{ind}  if (row >= M) return;",
            f"{ind}  TOut* dst = C + (size_t)row * N + col;",
        ]
        if vec_ok:
            store.append(f"{ind}  if (col + 1 < N) {{ *reinterpret_cast<{pair}*>(dst) = {conv}; return; }}")
        store += [
            f"{ind}  if (col < N) dst[0] = {one}(x);",
            f"{ind}  if (col + 1 < N) dst[1] = {one}(y);",
            f"{ind}}};",
        ]
        return store + [
            f"{ind}const int warp = ctid / 32, lane = ctid % 32;",
            f"{ind}#pragma unroll",
            f"{ind}for (int ms = 0; ms < M_SUB; ++ms) {{",
            f"{ind}  const int row = m0 + cw * WG_M + ms * 64 + warp * 16 + lane / 4;",
            f"{ind}  #pragma unroll",
            f"{ind}  for (int j = 0; j < BN / 8; ++j) {{",
            f"{ind}    const int col = n0 + 8 * j + 2 * (lane % 4);",
            f"{ind}    put(row, col, acc[ms][4 * j], acc[ms][4 * j + 1]);",
            f"{ind}    put(row + 8, col, acc[ms][4 * j + 2], acc[ms][4 * j + 3]);",
            f"{ind}  }}",
            f"{ind}}}",
        ]

    # ------------------------------------------------------------------ host
    def _emit_host(self) -> str:
        p = self.plan
        n = self.cname
        dts = {DType.BF16: "CU_TENSOR_MAP_DATA_TYPE_BFLOAT16", DType.FP16: "CU_TENSOR_MAP_DATA_TYPE_FLOAT16",
               DType.FP32: "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"}
        dt, dtc = dts[p.dtype], dts[p.c_dtype]
        bmap = (f"encode_map(&tmB, {dt}, sizeof(TIn), B, N, K, BN / CHUNKS_B, BK)" if p.b_transposed
                else f"encode_map(&tmB, {dt}, sizeof(TIn), B, K, N, BK, 64)")
        return f"""
namespace {n} {{
typedef CUresult (*EncodeTiled)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// A 2-D row-major [rows, cols] tensor as a TMA map: boxes of box_cols x box_rows, 128-byte
// swizzle; out-of-bounds elements read as zero and are not written (ragged M, N and K edges).
static int encode_map(CUtensorMap* map, CUtensorMapDataType dt, size_t elem, const void* ptr, int rows,
                      int cols, int box_rows, int box_cols) {{
  static EncodeTiled encode = nullptr;
  if (!encode) {{
    cudaDriverEntryPointQueryResult q;
    void* fn = nullptr;
    cudaError_t e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &fn, 12000, cudaEnableDefault, &q);
    if (e != cudaSuccess || q != cudaDriverEntryPointSuccess || !fn) return 1000;
    encode = reinterpret_cast<EncodeTiled>(fn);
  }}
  const cuuint64_t dims[2] = {{(cuuint64_t)cols, (cuuint64_t)rows}};
  const cuuint64_t strides[1] = {{(cuuint64_t)cols * elem}};
  const cuuint32_t box[2] = {{(cuuint32_t)box_cols, (cuuint32_t)box_rows}};
  const cuuint32_t estr[2] = {{1, 1}};
  CUresult r = encode(map, dt, 2, const_cast<void*>(ptr), dims, strides, box, estr,
                      CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                      CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  return r == CUDA_SUCCESS ? 0 : 2000 + (int)r;
}}
}}  // namespace {n}

// C (M x N, row-major) = A (M x K, row-major) @ {'B^T with B (N x K' if p.b_transposed else 'B with B (K x N'}, row-major), all on `stream`.
// Returns 0, a cudaError_t, 1000 + / 2000 + a driver error from the tensor-map encoder, or 3000
// (C not 16-byte aligned for the TMA-store epilogue).
// ws / tickets: the fix-up's fp32 workspace and zeroed int32 tickets ({n}_workspace tells the
// sizes; null when both are 0); the kernel leaves the tickets (and an atomic workspace) zeroed.
extern "C" int {n}_launch(const void* A, const void* B, void* C, void* ws, void* tickets, void* stream) {{
  using namespace {n};
  static bool attr_done = false;
  if (!attr_done) {{
    cudaError_t e = cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES);
    if (e != cudaSuccess) return (int)e;
    attr_done = true;
  }}
  static CUtensorMap tmA, tmB, tmC;
  static const void *lastA = nullptr, *lastB = nullptr, *lastC = nullptr;
  if (A != lastA) {{ int r = encode_map(&tmA, {dt}, sizeof(TIn), A, M, K, BM / CHUNKS_A, BK); if (r) return r; lastA = A; }}
  if (B != lastB) {{ int r = {bmap}; if (r) return r; lastB = B; }}
  if (TMA_STORE && C != lastC) {{
    if (reinterpret_cast<uintptr_t>(C) % 16 != 0) return 3000;  // TMA needs a 16-byte aligned C
    int r = encode_map(&tmC, {dtc}, sizeof(TOut), C, M, N, 64, 64); if (r) return r; lastC = C;
  }}
  gemm_kernel<<<GRID, THREADS, SMEM_BYTES, (cudaStream_t)stream>>>(tmA, tmB, tmC, static_cast<TOut*>(C),
                                                                 static_cast<float*>(ws), static_cast<int*>(tickets));
  return (int)cudaGetLastError();
}}

// How many clusters of this kernel fit on the device at once (for choosing GRID); < 0 on error.
extern "C" int {n}_max_active_clusters() {{
  using namespace {n};
  if (cudaFuncSetAttribute(gemm_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, SMEM_BYTES) != cudaSuccess)
    return -1;
  cudaLaunchConfig_t cfg = {{}};
  cfg.gridDim = dim3(GRID, 1, 1);
  cfg.blockDim = dim3(THREADS, 1, 1);
  cfg.dynamicSmemBytes = SMEM_BYTES;
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = CLUSTER; attr[0].val.clusterDim.y = 1; attr[0].val.clusterDim.z = 1;
  cfg.attrs = attr; cfg.numAttrs = 1;
  int n = 0;
  if (cudaOccupancyMaxActiveClusters(&n, gemm_kernel, &cfg) != cudaSuccess) return -2;
  return n;
}}
"""


def emit(plan: KernelPlan, mma_in_flight: int = 1, epilogue: str | None = None,
         loads: bool = True) -> str:
    """The standalone ``.cu`` source for ``plan`` (sm_90a); see the module docstring.

    ``mma_in_flight``: wgmma groups a consumer leaves running while it waits for the next stage
    (1: overlap the tensor cores with the next stage's wait; 0: wait for each stage's MMAs).
    ``epilogue``: "tma" (registers -> shared memory -> TMA store; needs a 16-bit C and the room),
    "tma_tile" (the same with the warpgroup's whole tile staged, so its stores overlap the next
    tile's MMAs; needs M_SUB * BN / 64 boxes of 8 KiB per consumer: fewer stages),
    "none" (a measurement only: C is not written, to time the kernel without its epilogue),
    "direct" (registers -> global), "overlap" (the tile packed to 16 bits in registers and
    stored box by box, through the "tma" staging ring, during the next tile's first
    k-iterations; the same needs as "tma"), "auto" (tma where it fits);
    None: the plan's choice (the schedule's ``set_kernel(epilogue=...)``).
    ``loads=False`` is a measurement only: the producer releases every stage with nothing
    loaded, so the kernel times its MMAs, barriers and epilogue without memory traffic.
    Raises :class:`~tilec.errors.UnsupportedError` for plan features this backend does not print.
    """
    return CudaPrinter(plan, mma_in_flight, epilogue, loads).emit()


def emit_schedule(plan: KernelPlan) -> str:
    """Only the host-compilable schedule section (the same text ``emit`` puts in the file)."""
    return CudaPrinter(plan).emit_schedule()


def host_prefix(source: str) -> str:
    """The host-compilable head of a generated file: constants and schedule functions.

    A host harness includes this text verbatim to check the masks the kernel will use.
    """
    return source[: source.index(SCHEDULE_END) + len(SCHEDULE_END)] + "\n"
