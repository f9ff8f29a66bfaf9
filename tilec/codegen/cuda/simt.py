"""CUDA printer for SIMT fp32 GEMM kernels: a :class:`~tilec.transforms.simt.lower.SimtPlan` as a ``.cu``.

One printer class, one method per part of the kernel; every index is a sympy expression of the
plan printed by :class:`~tilec.codegen.cuda.expr.CudaExprPrinter` (C ``/`` and ``%`` only on
proven-nonnegative operands).  The kernel:

* thread and block indices under the IR's symbol names (``tidx``, ``bidy``, ...);
* a register tile ``acc[TM][TN]`` over the plan's register axes (unrolled loops named after them);
* unstaged plans: a serial K loop reading A and B from global memory (predicated at the edges);
* staged plans: ``stages`` shared-memory buffers per operand, A stored transposed (``As[k][m]``);
  register-staged, the next K tile is read into registers while the current one is multiplied
  (one ``__syncthreads`` per K tile with 2 stages); with ``async_copy``, ``cp.async`` (inline PTX)
  copies ``stages - 1`` tiles ahead; with 2 fragments the next k-slice is read from shared memory
  while the FMAs of this one run; tile copies are 32/64/128-bit as the plan proved, at the
  plan's (row, col) per thread (``copy_lanes``), ``cp.async`` ones all at the top of a K tile
  or spread over its first k-slices (``spread_copies``), each from its whole element index or,
  with ``copy_addresses("stride")``, from the first copy's pointer plus ``it`` times a stride
  the kernel takes as an argument (``a_step``, ``b_step``: the launcher passes the constant; in
  elements, or in bytes as a 64-bit value with ``copy_addresses("byte_stride")``); a swizzled A tile is stored at
  ``TileCopy.place`` and its vectors read back rotated (``smem_swizzle``); tiles past
  48 KB live in dynamic shared memory;
* with a work split (``plan.work``: split-K or the Stream-K family, ``fusion.decompose``) the
  CTAs walk the split's units (``work_unit``, printed from the ``WorkSplit`` as the CUDA printer
  prints it, between ``WORK_BEGIN`` and ``WORK_END``), each its tile's K tiles ``[kb0, kb1)``,
  and a partial unit ends in the fix-up (a workspace the launcher allocates once);
* the epilogue stores the register tile under the IR's predicates (vector stores where proven);
* ``extern "C" int tilec_launch_<name>(A, B, C, stream)`` launches it (returns a cudaError_t,
  or -1 when a pointer is not 16-byte aligned and the kernel uses 128-bit accesses), with
  ``__launch_bounds__(threads, min_blocks)`` as the schedule asks.

Example::

    >>> from tilec.ir import GemmFusion, ParallelType as P
    >>> from tilec.transforms.simt.lower import lower_simt
    >>> f = GemmFusion(64, 64, 64, dtype="fp32")
    >>> _ = f.c.split(0, 32).split(2, 32).parallelize(0, P.BIDx).parallelize(1, P.TIDx)
    >>> _ = f.c.parallelize(2, P.BIDy).parallelize(3, P.TIDy)
    >>> src = emit_simt(lower_simt(f, name="naive"))
    >>> 'extern "C" int tilec_launch_naive' in src
    True
"""

from __future__ import annotations

import sympy

from tilec.codegen.cuda.expr import CudaExprPrinter
from tilec.codegen.cuda.printer.work import unit_functions
from tilec.codegen.cuda.runtime import INDEX_HELPERS
from tilec.errors import UnsupportedError
from tilec.transforms.plan import Fixup
from tilec.transforms.simt.lower import STATIC_SMEM, RegAxis, SimtPlan, TileCopy

# The fix-up's ticket (CUTLASS's split-K semaphore pattern): after a CTA barrier one thread
# takes it with an acquire-release atomic at GPU scope, instead of a fence in every thread.
TICKET_HELPER = r"""
__device__ __forceinline__ int tilec_ticket(int* p) {
  int old;
  asm volatile("atom.acq_rel.gpu.global.add.s32 %0, [%1], 1;" : "=r"(old) : "l"(p) : "memory");
  return old;
}
"""
WORK_BEGIN = "// -- work split (host-compilable) --"
WORK_END = "// -- end of work split --"

_VT = {1: "float", 2: "float2", 4: "float4"}
_LANE = ("x", "y", "z", "w")
_ZERO = {1: "0.f", 2: "make_float2(0.f, 0.f)", 4: "make_float4(0.f, 0.f, 0.f, 0.f)"}

# cp.async (sm_80+) in PTX: no CUDA C++ operator copies global memory straight to shared memory.
# A copy whose guard is false reads nothing (source size 0) and fills the destination with zeros.
ASYNC_HELPERS = r"""
template <int BYTES>
__device__ __forceinline__ void tilec_cp_async(void* smem, const void* gmem, bool full) {
  const unsigned dst = static_cast<unsigned>(__cvta_generic_to_shared(smem));
  const int src_bytes = full ? BYTES : 0;
  if constexpr (BYTES == 16) {
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" :: "r"(dst), "l"(gmem), "r"(src_bytes));
  } else {
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" :: "r"(dst), "l"(gmem), "n"(BYTES), "r"(src_bytes));
  }
}
__device__ __forceinline__ void tilec_cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void tilec_cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" :: "n"(N)); }
"""


class SimtCudaPrinter:
    """Prints one :class:`SimtPlan` (see the module docstring)."""

    def __init__(self, plan: SimtPlan) -> None:
        if not plan.name.isidentifier():
            raise UnsupportedError(f"SIMT printer: kernel name {plan.name!r} is not a C identifier")
        self.p = plan
        self.ex = CudaExprPrinter()

    def c(self, e: sympy.Basic | int) -> str:
        return str(self.ex.doprint(sympy.sympify(e)))

    # -- file ----------------------------------------------------------------------------------
    def emit(self) -> str:
        parts = [self.header(), INDEX_HELPERS]
        if self.p.staging is not None and self.p.options.async_copy:
            parts.append(ASYNC_HELPERS)
        if self.partials:
            parts.append(TICKET_HELPER)
        if self.p.work is not None:
            parts.append(self.work_section())
        return "\n".join([*parts, self.kernel(), self.launcher()]) + "\n"

    @property
    def partials(self) -> bool:
        """Some work units cover part of a tile's K range: the kernel takes a workspace."""
        w = self.p.work
        return w is not None and (w.split_k or w.stream_k)

    def workspace(self) -> tuple[int, int]:
        """(fp32 workspace elements, int32 tickets) of the fix-up: a register tile of the CTA
        per partial slot (deterministic) or per partial tile (atomic), a ticket per partial
        tile."""
        w = self.p.work
        if w is None or not self.partials:
            return 0, 0
        words = self.p.reg_count("M") * self.p.reg_count("N") * self.p.threads
        n = w.partial_slots if w.fixup is Fixup.DETERMINISTIC else w.partial_tiles
        return n * words, w.partial_tiles

    @property
    def byte_steps(self) -> bool:
        """The stride arguments are 64-bit byte counts (``copy_addresses("byte_stride")``)."""
        return self.p.options.copy_addresses == "byte_stride"

    @property
    def step_args(self) -> list[tuple[str, int]]:
        """``(name, value)`` of the kernel's stride arguments (``fusion.copy_addresses``): the
        distance between a thread's tile copies, which the launcher passes as a runtime value
        so that ptxas cannot fold it: in elements (``stride``: each copy's address one wide
        multiply-add of it) or in bytes (``byte_stride``: one 64-bit add)."""
        st = self.p.staging
        if st is None or not self.p.options.async_copy:
            return []
        scale = 4 if self.byte_steps else 1
        return [(f"{cp.operand.lower()}_step", scale * cp.stride) for cp in (st.a, st.b) if cp.stride]

    @property
    def dynamic_smem(self) -> int:
        """Bytes of dynamic shared memory (0: the tiles fit the 48 KB of static memory)."""
        st = self.p.staging
        return st.smem_bytes if st is not None and st.smem_bytes > STATIC_SMEM else 0

    def header(self) -> str:
        p = self.p
        st = p.staging
        stage = (f"K tiles of {st.BK} staged in shared memory ({st.stages} stage(s), "
                 f"A {st.a.vec * 32}-bit / B {st.b.vec * 32}-bit copies)" if st else
                 "K read straight from global memory")
        lines = [
            f"// Generated by tilec (SIMT fp32): C[{p.M}, {p.N}] = A[{p.M}, {p.K}] @ B[{p.K}, {p.N}], "
            "row-major, fp32 FMA.",
            f"// grid {p.grid}, block {p.block}, CTA tile {p.BM}x{p.BN}, register tile "
            f"{p.reg_count('M')}x{p.reg_count('N')}, {stage}.",
            f"// m = {p.m_expr}",
            f"// n = {p.n_expr}",
            "// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 (-shared -Xcompiler -fPIC)",
        ]
        lines += [f"// note: {n}" for n in p.notes]
        lines += ["// schedule:"] + [f"//   {s}" for s in p.schedule.splitlines()]
        lines += ["#include <cstdint>", "#include <cuda_runtime.h>"]
        return "\n".join(lines)

    # -- kernel --------------------------------------------------------------------------------
    def kernel(self) -> str:
        p = self.p
        tm, tn = p.reg_count("M"), p.reg_count("N")
        body = [f"namespace {p.name} {{", f"[[maybe_unused]] constexpr int M = {p.M}, N = {p.N}, K = {p.K};", ""]
        bounds = f"{p.threads}, {p.options.min_blocks}" if p.options.min_blocks else f"{p.threads}"
        ty = "size_t" if self.byte_steps else "unsigned"
        steps = "".join(f", const {ty} {a}" for a, _ in self.step_args)
        if self.partials:
            steps += ", float* __restrict__ ws, int* __restrict__ tickets"
        body.append(f"__global__ void __launch_bounds__({bounds}) kernel("
                    f"const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C{steps}) {{")
        ind = "  "
        for s in p.thread_symbols:
            body.append(f"{ind}const int {s} = threadIdx.{s.name[-1]};")
        if p.work is not None:
            body += self.units(ind)
            body += ["}", "}  // namespace " + p.name]
            return "\n".join(body)
        for s in p.block_symbols:
            body.append(f"{ind}const int {s} = blockIdx.{s.name[-1]};")
        body.append(f"{ind}float acc[{tm}][{tn}];  // register tile")
        body += self.loops_flat(ind, tm, tn, "acc[i][j] = 0.f;")
        body += self.staged(ind) if p.staging else self.unstaged(ind)
        body += self.epilogue(ind)
        body += ["}", "}  // namespace " + p.name]
        return "\n".join(body)

    # -- split-K and Stream-K: a CTA walks work units ------------------------------------------
    def work_section(self) -> str:
        """The split's constants and its unit walk (``work_unit``, ``fix_of``, ``fix_slot``:
        the WorkSplit formulas, printed as the CUDA printer prints them), between
        ``WORK_BEGIN`` and ``WORK_END``: a host harness compiles them after ``INDEX_HELPERS``."""
        w = self.p.work
        assert w is not None
        consts = {"WORKERS": w.grid, "GROUPS": w.num_tiles, "K_ITERS": w.k_iters}
        if w.split_k:
            consts["SPLITS"] = w.splits
        elif w.stream_k:
            dp0, dp1 = w.dp_range
            consts |= {"SK_TILES": w.sk_tiles, "SK_CTAS": w.sk_ctas, "SK_START": w.sk_start,
                       "DP_START": dp0, "DP_TILES": dp1 - dp0}
        partials = w.split_k or w.stream_k
        lines = [WORK_BEGIN, f"namespace {self.p.name} {{",
                 *(f"constexpr int {k} = {v};" for k, v in consts.items()),
                 *unit_functions(w, partials), "}  // namespace", WORK_END]
        return "\n".join(lines)

    def units(self, ind: str) -> list[str]:
        """The kernel body of a split plan: CTA ``worker`` runs its units ``j = 0, 1, ...``
        (``work_unit``): tile ``g`` (``bidy = g / GX``, ``bidx = g % GX``), K tiles [kb0, kb1),
        the fix-up where the unit covers part of the tile's K range, the epilogue where the
        tile is whole (or this CTA summed its partials)."""
        p = self.p
        w = p.work
        assert w is not None and p.staging is not None
        tm, tn = p.reg_count("M"), p.reg_count("N")
        gx = p.grid[0]
        partials = w.split_k or w.stream_k
        out = [f"{ind}const int worker = blockIdx.x;  // this CTA's units: work_unit(worker, j, ...)",
               f"{ind}int bidx = 0, bidy = 0;  // the unit's tile g = bidy * {gx} + bidx"]
        if partials:
            out.append(f"{ind}__shared__ int fix_last;  // this CTA took the tile's last ticket")
        out.append(f"{ind}float acc[{tm}][{tn}];  // register tile")
        out += self.staged_setup(ind)
        i2 = ind + "  "
        out += [f"{ind}for (int j = 0; ; ++j) {{", f"{i2}int g, kb0, kb1;",
                f"{i2}if (!work_unit(worker, j, g, kb0, kb1)) break;",
                f"{i2}bidy = g / {gx}; bidx = g % {gx};"]
        out += self.loops_flat(i2, tm, tn, "acc[i][j] = 0.f;")
        out += self.staged_loop(i2, "kb0", "kb1")
        if partials:
            out += self.fixup(i2)
            out.append(f"{i2}if (last) {{")
            out += self.epilogue(i2 + "  ")
            out.append(f"{i2}}}")
        else:
            out += self.epilogue(i2)
        out += [f"{i2}tilec_cp_async_wait<0>();  // the next unit's copies reuse every buffer",
                f"{i2}__syncthreads();", f"{ind}}}"]
        return out

    def fixup(self, ind: str) -> list[str]:
        """A partial unit's fix-up (sets ``last``; whole units write C at once): the partial
        goes to the workspace in the register tile's own layout (float4 ``q`` of thread
        ``tid`` at ``q * THREADS + tid``, a warp's stores contiguous), a barrier and one
        thread's acquire-release ticket (``tilec_ticket``; a fence in every thread cost 2%
        at 4096^3, ``bench/results/simt_front_tail_ablate_*``); the CTA taking the tile's last
        ticket gets the sum in ``acc`` (deterministic:
        slots summed in K order, bitwise repeatable; atomic: the tile the partials were added
        into, read and zeroed), and resets the ticket, leaving the workspace clean."""
        p = self.p
        w = p.work
        assert w is not None
        tm, tn = p.reg_count("M"), p.reg_count("N")
        det = w.fixup is Fixup.DETERMINISTIC
        vw = 4 if tn % 4 == 0 else 1
        per_row = tn // vw
        nq = tm * per_row
        words = tm * tn * p.threads
        vt = _VT[vw]
        lane = (lambda e, j: f"{e}.{_LANE[j]}") if vw > 1 else (lambda e, j: e)
        i2, i3 = ind + "  ", ind + "    "

        def regs(q: str) -> list[str]:
            return [f"acc[{q} / {per_row}][{vw} * ({q} % {per_row}) + {j}]" for j in range(vw)]

        pack = (f"make_float4({', '.join(regs('q'))})" if vw > 1 else regs("q")[0])
        store = (f"__stcg(mine + q * {p.threads} + tid, {pack});" if det else
                 f"atomicAdd(mine + q * {p.threads} + tid, {pack});")
        out = [f"{ind}bool last = true;  // this CTA writes the tile",
               f"{ind}if (kb0 != 0 || kb1 != K_ITERS) {{  // part of the tile's K range: fix-up "
               f"({w.fixup.value})",
               f"{i2}int f, ord, cnt, slot;",
               f"{i2}fix_of(worker, j, g, f, ord, cnt, slot);",
               f"{i2}(void)ord;",
               f"{i2}{vt}* mine = reinterpret_cast<{vt}*>(ws + (size_t)({'slot' if det else 'f'}) * {words});",
               f"{i2}#pragma unroll",
               f"{i2}for (int q = 0; q < {nq}; ++q) {store}",
               f"{i2}__syncthreads();  // every thread's partial is stored",
               f"{i2}// one acq_rel ticket: its release covers the CTA's stores ordered before it by the",
               f"{i2}// barrier, its acquire the other partials the barrier below orders the reads after",
               f"{i2}if (tid == 0) fix_last = tilec_ticket(tickets + f) == cnt - 1;",
               f"{i2}__syncthreads();",
               f"{i2}last = fix_last;  // read by all before the unit's closing barrier",
               f"{i2}if (last) {{"]
        if det:
            # acc = slot 0, then += slots 1 .. cnt-1 (K order: bitwise repeatable); a compiler
            # barrier every 8 loads keeps the loads in flight within the register budget
            def summed(op: str) -> list[str]:
                return [f"{i3}  #pragma unroll", f"{i3}  for (int q = 0; q < {nq}; ++q) {{",
                        f"{i3}    const {vt} x = __ldcg(src + q * {p.threads} + tid);",
                        *(f"{i3}    {r} {op} {lane('x', j)};" for j, r in enumerate(regs("q"))),
                        f"{i3}    if (q % 8 == 7) asm volatile(\"\" ::: \"memory\");", f"{i3}  }}"]

            out += [f"{i3}for (int i = 0; i < cnt; ++i) {{",
                    f"{i3}  const {vt}* src = reinterpret_cast<const {vt}*>(ws + (size_t)fix_slot(f, i) * {words});",
                    f"{i3}  if (i == 0) {{", *("  " + x for x in summed("=")), f"{i3}    continue;",
                    f"{i3}  }}", *summed("+="), f"{i3}}}"]
        else:
            zero = _ZERO[vw]
            out += [f"{i3}#pragma unroll", f"{i3}for (int q = 0; q < {nq}; ++q) {{",
                    f"{i3}  const {vt} x = __ldcg(mine + q * {p.threads} + tid);",
                    f"{i3}  __stcg(mine + q * {p.threads} + tid, {zero});  // clean for the next launch",
                    *(f"{i3}  {r} = {lane('x', j)};" for j, r in enumerate(regs("q"))),
                    f"{i3}}}"]
        out += [f"{i3}if (tid == 0) tickets[f] = 0;  // every partial has arrived: reset for the next launch",
                f"{i2}}}", f"{ind}}}"]
        return out

    def loops_flat(self, ind: str, tm: int, tn: int, stmt: str) -> list[str]:
        return [f"{ind}#pragma unroll", f"{ind}for (int i = 0; i < {tm}; ++i)",
                f"{ind}  #pragma unroll", f"{ind}  for (int j = 0; j < {tn}; ++j) {stmt}"]

    def reg_loops(self, ind: str, axes: list[RegAxis], inner: list[str]) -> list[str]:
        """Nested unrolled loops over register axes, named as the IR's loop symbols."""
        out, cur = [], ind
        for a in axes:
            out += [f"{cur}#pragma unroll", f"{cur}for (int {a.symbol} = 0; {a.symbol} < {a.extent}; ++{a.symbol}) {{"]
            cur += "  "
        out += [cur + line for line in inner]
        for k in range(len(axes)):
            out.append(ind + "  " * (len(axes) - 1 - k) + "}")
        return out

    def vec_split(self, dim: str, width: int) -> tuple[list[RegAxis], dict[sympy.Symbol, int]]:
        """Register axes looped over and the vector axis' substitution (index 0)."""
        axes = self.p.regs(dim)
        if width == 1:
            return axes, {}
        v = next(a for a in axes if a.vector)
        return [a for a in axes if a is not v], {v.symbol: 0}

    def fetch(self, dim: str, dst: str, width: int, addr: sympy.Expr, guard: sympy.Boolean,
              src: str, rotate: str = "") -> list[str]:
        """``dst[flat]`` for every register point along ``dim`` from ``src[addr]``; with
        ``rotate`` (a C expression ``r``), element ``j`` of the register vector is the loaded
        vector's component ``(j + r) % width`` (a swizzled tile, ``TileCopy.rotation``)."""
        axes, v0 = self.vec_split(dim, width)
        flat = self.c(self.p.flat(dim).xreplace(v0))
        a = self.c(addr.xreplace(v0))
        g = guard.xreplace(v0) if guard is not sympy.true else guard
        load = f"*reinterpret_cast<const {_VT[width]}*>(&{src}[{a}])" if width > 1 else f"{src}[{a}]"
        if g is not sympy.true:
            load = f"({self.c(g)}) ? {load} : {_ZERO[width]}"
        if width == 1:
            inner = [f"{dst}[{flat}] = {load};"]
        elif rotate:  # the rotation is a constant once the k-slice loop is unrolled
            lanes = ", ".join(f"v.{_LANE[j]}" for j in range(width))
            inner = [f"const {_VT[width]} v = {load};", f"const float e[{width}] = {{{lanes}}};"]
            inner += [f"{dst}[{flat} + {j}] = e[({j} + {rotate}) % {width}];" for j in range(width)]
        else:
            inner = [f"const {_VT[width]} v = {load};"]
            inner += [f"{dst}[{flat} + {j}] = v.{_LANE[j]};" for j in range(width)]
        return self.reg_loops("", axes, inner)

    def fma(self, ind: str, am: str = "am", bn: str = "bn") -> list[str]:
        """The k-slice's FMAs in the schedule's order (``fusion.fma_order``)."""
        p = self.p
        tm, tn = p.reg_count("M"), p.reg_count("N")
        order = p.options.fma_order
        if order == "rows":
            return self.loops_flat(ind, tm, tn, f"acc[i][j] = fmaf({am}[i], {bn}[j], acc[i][j]);")
        if order == "snake_rows":
            return self.loops_flat(ind, tm, tn, f"{{ const int jj = (i & 1) ? {tn - 1} - j : j;  "
                                   f"acc[i][jj] = fmaf({am}[i], {bn}[jj], acc[i][jj]); }}")
        assert order == "snake_columns", order
        return [f"{ind}#pragma unroll", f"{ind}for (int j = 0; j < {tn}; ++j)",
                f"{ind}  #pragma unroll",
                f"{ind}  for (int i = 0; i < {tm}; ++i) {{ const int ii = (j & 1) ? {tm - 1} - i : i;  "
                f"acc[ii][j] = fmaf({am}[ii], {bn}[j], acc[ii][j]); }}"]

    def unstaged(self, ind: str) -> list[str]:
        p = self.p
        k = p.k_symbol
        assert k is not None
        out = [f"{ind}float am[{p.reg_count('M')}], bn[{p.reg_count('N')}];  // one k-slice of the "
               "A and B register tiles",
               f"{ind}for (int {k} = 0; {k} < {p.bounds[k]}; ++{k}) {{"]
        a = self.fetch("M", "am", 1, p.m_expr * p.K + p.k_expr, p.guard_a, "A")
        b = self.fetch("N", "bn", p.vec_n, p.k_expr * p.N + p.n_expr, p.guard_b, "B")
        out += [ind + "  " + s for s in a + b]
        out += self.fma(ind + "  ")
        out.append(f"{ind}}}")
        return out

    # -- shared-memory staging -----------------------------------------------------------------
    def staged(self, ind: str) -> list[str]:
        """Shared-memory K tiles: ``stages`` buffers per operand, ``fragments`` register buffers of
        the k-slice.  The next K tile is read from global memory into registers at the top of
        each K tile and stored to shared memory before the tile's last k-slice; with two
        fragments the next k-slice (the next tile's first, past the barrier) is read while the
        FMAs of this one run."""
        p = self.p
        st = p.staging
        assert st is not None
        ko, ki, kt = st.ko, st.ki, st.k_tiles
        tm, tn = p.reg_count("M"), p.reg_count("N")
        nf = p.options.fragments
        out = [f"{ind}const int tid = {self.c(p.tid_linear)};", *self.smem_arrays(ind)]
        if p.options.async_copy:
            return out + self.staged_setup(ind, head=False) + self.staged_loop(ind, "0", str(kt))
        out += [f"{ind}{_VT[st.a.vec]} ra[{st.a.iters}];  // the next K tile, global -> registers",
               f"{ind}{_VT[st.b.vec]} rb[{st.b.iters}];",
               f"{ind}float am[{nf}][{tm}], bn[{nf}][{tn}];  // k-slices of the A and B register tiles"]
        out.append(f"{ind}auto load_tile = [&](const int {ko}) {{  // global -> registers")
        out += self.copy_load(ind + "  ", st.a, "ra", "A") + self.copy_load(ind + "  ", st.b, "rb", "B")
        out.append(f"{ind}}};")
        out.append(f"{ind}auto store_tile = [&](const int buf) {{  // registers -> shared")
        out += self.copy_store(ind + "  ", st.a, "ra", "As") + self.copy_store(ind + "  ", st.b, "rb", "Bs")
        out.append(f"{ind}}};")
        out += self.load_slice_fn(ind, p, ki)
        out += [f"{ind}load_tile(0);", f"{ind}store_tile(0);", f"{ind}__syncthreads();"]
        if nf == 2:
            out.append(f"{ind}load_slice(0, 0, 0);")
        out.append(f"{ind}for (int {ko} = 0; {ko} < {kt}; ++{ko}) {{")
        i2, i3 = ind + "  ", ind + "    "
        more = f"{ko} + 1 < {kt}"
        out.append(f"{i2}const int buf = {f'{ko} & 1' if st.stages == 2 else '0'};")
        out.append(f"{i2}if ({more}) load_tile({ko} + 1);  // in flight during the FMAs")
        out += [f"{i2}#pragma unroll", f"{i2}for (int {ki} = 0; {ki} < {st.BK}; ++{ki}) {{"]
        # after the last tile the stores and the slice read are of stale registers and unused
        # data, harmless: no branch in the loop
        if st.stages == 2:  # the other buffer was last read before the previous tile's barrier
            swap = ["store_tile(buf ^ 1);", "__syncthreads();"]
        else:
            swap = ["__syncthreads();", "store_tile(0);", "__syncthreads();"]
        nxt = "buf ^ 1" if st.stages == 2 else "0"
        if nf == 2:
            out += [f"{i3}if ({ki} == {st.BK - 1}) {{  // the next tile to shared memory",
                    *(f"{i3}  {s}" for s in swap), f"{i3}}}",
                    f"{i3}if ({ki} < {st.BK - 1}) load_slice(({ki} + 1) & 1, buf, {ki} + 1);",
                    f"{i3}else load_slice(0, {nxt}, 0);  // the next tile's, past the barrier"]
            out += self.fma(i3, f"am[{ki} & 1]", f"bn[{ki} & 1]")
            out.append(f"{i2}}}")
        else:
            out.append(f"{i3}load_slice(0, buf, {ki});")
            out += self.fma(i3, "am[0]", "bn[0]")
            out.append(f"{i2}}}")
            out += [f"{i2}{s}" for s in swap]
        out.append(f"{ind}}}")
        return out

    def smem_arrays(self, ind: str) -> list[str]:
        st = self.p.staging
        assert st is not None
        sa, sb = (f"[{st.stages}][{st.BK}][{cp.pitch}]" for cp in (st.a, st.b))
        if not self.dynamic_smem:
            return [f"{ind}__shared__ __align__(16) float As{sa};  // A tile, transposed",
                    f"{ind}__shared__ __align__(16) float Bs{sb};"]
        a_words = st.stages * st.BK * st.a.pitch
        return [f"{ind}extern __shared__ __align__(16) float smem[];  // {self.dynamic_smem} bytes",
                f"{ind}auto As = reinterpret_cast<float (*)[{st.BK}][{st.a.pitch}]>(smem);  "
                "// A tile, transposed",
                f"{ind}auto Bs = reinterpret_cast<float (*)[{st.BK}][{st.b.pitch}]>(smem + {a_words});"]

    def staged_setup(self, ind: str, head: bool = True) -> list[str]:
        """What the ``cp.async`` K loop declares once: (with ``head``, the thread id and the
        shared tiles,) the k-slice registers and the ``issue_tile`` and ``load_slice`` lambdas
        (they read the block indices by reference: a unit walk sets them per unit)."""
        p = self.p
        st = p.staging
        assert st is not None
        tm, tn = p.reg_count("M"), p.reg_count("N")
        nf = p.options.fragments
        total = st.a.iters + st.b.iters  # copy instructions per thread and K tile
        out = [f"{ind}const int tid = {self.c(p.tid_linear)};", *self.smem_arrays(ind)] if head else []
        out.append(f"{ind}float am[{nf}][{tm}], bn[{nf}][{tn}];  // k-slices of the A and B register tiles")
        out.append(f"{ind}// global -> shared, async: copy instructions lo <= c < hi of the tile's {total} "
                   f"(A's {st.a.iters}, then B's)")
        out.append(f"{ind}auto issue_tile = [&](const int {st.ko}, const int buf, const int lo, const int hi) {{")
        out += self.copy_async(ind + "  ", st.a, "A", "As", 0) \
            + self.copy_async(ind + "  ", st.b, "B", "Bs", st.a.iters)
        out.append(f"{ind}}};")
        out += self.load_slice_fn(ind, p, st.ki)
        return out

    def staged_loop(self, ind: str, kb0: str, kb1: str) -> list[str]:
        """K tiles ``kb0 <= ko < kb1`` copied with ``cp.async`` into ``stages`` buffers,
        ``stages - 1`` tiles ahead (one commit group per tile, empty past the last;
        ``wait_group(stages - 2)`` leaves the younger tiles in flight), one barrier per K
        tile.  The first tile lands in buffer 0."""
        p = self.p
        st = p.staging
        assert st is not None
        ko, ki, S = st.ko, st.ki, st.stages
        nf = p.options.fragments
        total = st.a.iters + st.b.iters
        sl = p.options.copy_slices
        whole = kb0 == "0"  # the data-parallel kernel: the K loop's bounds are constants
        first = (lambda e: e) if whole else (lambda e: f"{kb0} + {e}")
        out = [f"{ind}#pragma unroll", f"{ind}for (int s = 0; s < {S - 1}; ++s) {{",
               f"{ind}  if ({first('s')} < {kb1}) issue_tile({first('s')}, s, 0, {total});",
               f"{ind}  tilec_cp_async_commit();", f"{ind}}}"]
        out += [f"{ind}int rd = 0, wr = {S - 1};  // buffers of tile {ko} and of tile {ko} + {S - 1}"]
        i2, i3 = ind + "  ", ind + "    "
        nxt = f"(rd + 1 == {S} ? 0 : rd + 1)"
        step = [f"{i2}rd = rd + 1 == {S} ? 0 : rd + 1;", f"{i2}wr = wr + 1 == {S} ? 0 : wr + 1;"]
        # the buffer of tile ko-1 was last read before the previous tile's barrier: any k-slice
        # of tile ko may copy into it; the group is committed before the wait of the last slice
        if sl == 1:
            issue = [f"{i2}if ({ko} + {S - 1} < {kb1}) issue_tile({ko} + {S - 1}, wr, 0, {total});",
                     f"{i2}tilec_cp_async_commit();"]
            spread: list[str] = []
        else:
            issue = []
            spread = [f"{i3}if ({ki} < {sl}) {{  // part {ki} of {sl} of tile {ko} + {S - 1}'s copies",
                      f"{i3}  if ({ko} + {S - 1} < {kb1}) issue_tile({ko} + {S - 1}, wr, "
                      f"{ki} * {total} / {sl}, ({ki} + 1) * {total} / {sl});",
                      f"{i3}  if ({ki} == {sl - 1}) tilec_cp_async_commit();", f"{i3}}}"]
        if nf == 2:
            out += [f"{ind}tilec_cp_async_wait<{S - 2}>();", f"{ind}__syncthreads();",
                    f"{ind}load_slice(0, 0, 0);",
                    f"{ind}for (int {ko} = {kb0}; {ko} < {kb1}; ++{ko}) {{",
                    *issue,
                    f"{i2}#pragma unroll", f"{i2}for (int {ki} = 0; {ki} < {st.BK}; ++{ki}) {{",
                    *spread,
                    f"{i3}if ({ki} == {st.BK - 1}) {{  // tile {ko} + 1 has landed, for every thread",
                    f"{i3}  tilec_cp_async_wait<{S - 2}>();", f"{i3}  __syncthreads();", f"{i3}}}",
                    f"{i3}if ({ki} < {st.BK - 1}) load_slice(({ki} + 1) & 1, rd, {ki} + 1);",
                    f"{i3}else load_slice(0, {nxt}, 0);  // the next tile's, past the barrier"]
            out += self.fma(i3, f"am[{ki} & 1]", f"bn[{ki} & 1]")
            out += [f"{i2}}}", *step, f"{ind}}}"]
        else:
            out += [f"{ind}for (int {ko} = {kb0}; {ko} < {kb1}; ++{ko}) {{",
                    f"{i2}tilec_cp_async_wait<{S - 2}>();  // tile {ko} has landed",
                    f"{i2}__syncthreads();  // for every thread; and tile {ko} - 1 is consumed",
                    *issue,
                    f"{i2}#pragma unroll", f"{i2}for (int {ki} = 0; {ki} < {st.BK}; ++{ki}) {{",
                    *spread,
                    f"{i3}load_slice(0, rd, {ki});"]
            out += self.fma(i3, "am[0]", "bn[0]")
            out += [f"{i2}}}", *step, f"{ind}}}"]
        return out

    def copy_async(self, ind: str, cp: TileCopy, src: str, dst: str, first: int) -> list[str]:
        """``cp.iters`` copies, numbered from ``first`` among the tile's; the lambda's
        ``lo <= c < hi`` picks which (constants once the loops are unrolled)."""
        col = self.c(cp.col)
        where = f"&{dst}[buf][{col}][{self.c(cp.place(cp.col, cp.row))}]" if cp.transposed \
            else f"&{dst}[buf][{self.c(cp.row)}][{col}]"
        assert not (cp.transposed and cp.vec > 1), "cp.async cannot transpose a vector"
        g = "true" if cp.guard is sympy.true else self.c(cp.guard)
        step = f"{cp.operand.lower()}_step"
        if not cp.stride:
            addr = f"&{src}[{self.c(cp.global_index)}]"
        elif self.byte_steps:
            addr = f"(const float*)((const char*)&{src}[{self.c(cp.base_index())}] + it * {step})"
        else:
            addr = f"&{src}[{self.c(cp.base_index())}] + (size_t)it * {step}"
        body = [f"const bool ok = {g};",
                f"tilec_cp_async<{4 * cp.vec}>({where}, ok ? {addr} : {src}, ok);"]
        if cp.guard_idx:
            body = [f"if (tid + it * {self.p.threads} < {cp.rows * cp.cols // cp.vec}) {{",
                    *("  " + b for b in body), "}"]
        c = f"it + {first}" if first else "it"
        return [f"{ind}#pragma unroll", f"{ind}for (int it = 0; it < {cp.iters}; ++it) {{",
                f"{ind}  if ({c} < lo || {c} >= hi) continue;",
                *(f"{ind}  {b}" for b in body), f"{ind}}}"]

    def load_slice_fn(self, ind: str, p: SimtPlan, ki: str) -> list[str]:
        """The ``load_slice(f, buf, ki)`` lambda: a k-slice of the A and B register tiles from
        shared buffer ``buf`` into fragment ``f`` (both K pipelines use it)."""
        out = [f"{ind}auto load_slice = [&](const int f, const int buf, const int {ki}) {{  // shared -> registers"]
        a = p.staging.a
        rot = self.c(a.rotation(p.staging.ki)) if a.swizzle > 1 else ""
        out += [ind + "  " + s for s in self.fetch("M", "am[f]", p.vec_m, p.m_local, sympy.true,
                                                   f"As[buf][{ki}]", rotate=rot)]
        out += [ind + "  " + s for s in self.fetch("N", "bn[f]", p.vec_n, p.n_local, sympy.true, f"Bs[buf][{ki}]")]
        out.append(f"{ind}}};")
        return out

    def copy_load(self, ind: str, cp: TileCopy, regs: str, src: str) -> list[str]:
        g = cp.guard
        if cp.guard_idx:
            g = sympy.And(g, sympy.Lt(sympy.Symbol("tid", integer=True, nonnegative=True)
                                      + sympy.Symbol("it", integer=True, nonnegative=True) * self.p.threads,
                                      cp.rows * cp.cols // cp.vec))
        load = (f"*reinterpret_cast<const {_VT[cp.vec]}*>(&{src}[{self.c(cp.global_index)}])"
                if cp.vec > 1 else f"{src}[{self.c(cp.global_index)}]")
        if g is not sympy.true:
            load = f"({self.c(g)}) ? {load} : {_ZERO[cp.vec]}"
        return [f"{ind}#pragma unroll", f"{ind}for (int it = 0; it < {cp.iters}; ++it)",
                f"{ind}  {regs}[it] = {load};"]

    def copy_store(self, ind: str, cp: TileCopy, regs: str, dst: str) -> list[str]:
        row, col = self.c(cp.row), self.c(cp.col)
        if cp.transposed:
            parts = [f"{dst}[buf][{col} + {j}][{self.c(cp.place(cp.col + j, cp.row))}] = "
                     f"{regs}[it]{'.' + _LANE[j] if cp.vec > 1 else ''};" for j in range(cp.vec)]
        elif cp.vec > 1:
            parts = [f"*reinterpret_cast<{_VT[cp.vec]}*>(&{dst}[buf][{row}][{col}]) = {regs}[it];"]
        else:
            parts = [f"{dst}[buf][{row}][{col}] = {regs}[it];"]
        cond = ""
        if cp.guard_idx:
            cond = f"if (tid + it * {self.p.threads} < {cp.rows * cp.cols // cp.vec}) "
        return [f"{ind}#pragma unroll", f"{ind}for (int it = 0; it < {cp.iters}; ++it) {{",
                *(f"{ind}  {cond}{s}" for s in parts), f"{ind}}}"]

    # -- epilogue ------------------------------------------------------------------------------
    def epilogue(self, ind: str) -> list[str]:
        p = self.p
        w = p.vec_n
        axes_n, v0 = self.vec_split("N", w)
        axes = [*p.regs("M"), *axes_n]
        fm, fn = self.c(p.flat("M")), self.c(p.flat("N").xreplace(v0))
        m, n = self.c(p.m_expr), self.c(p.n_expr.xreplace(v0))
        if w > 1:
            vals = ", ".join(f"acc[{fm}][{fn} + {j}]" for j in range(w))
            store = f"*reinterpret_cast<{_VT[w]}*>(&C[m * N + n]) = make_{_VT[w]}({vals});"
        else:
            store = f"C[m * N + n] = acc[{fm}][{fn}];"
        preds = [q.xreplace(v0) for q in p.predicates]
        guard = self.c(sympy.And(*preds)) if preds else ""
        inner = [f"const int m = {m};", f"const int n = {n};",
                 f"if ({guard}) {store}" if guard else store]
        return [f"{ind}// epilogue: the register tile to C", *self.reg_loops(ind, axes, inner)]

    # -- host ----------------------------------------------------------------------------------
    def launcher(self) -> str:
        p = self.p
        gx, gy, gz = p.grid
        bx, by, bz = p.block
        st = p.staging
        vec = max(p.vec_n, st.a.vec if st else 1, st.b.vec if st else 1)
        align = ("  if (((uintptr_t)A | (uintptr_t)B | (uintptr_t)C) & 15) return -1;  "
                 "// 128-bit accesses need 16-byte aligned pointers" if vec > 1 else "")
        dyn = self.dynamic_smem
        sfx = "ull" if self.byte_steps else "u"
        opt_in = [f"  static const cudaError_t opt_in = cudaFuncSetAttribute({p.name}::kernel, "
                  f"cudaFuncAttributeMaxDynamicSharedMemorySize, {dyn});",
                  "  if (opt_in != cudaSuccess) return (int)opt_in;"] if dyn else []
        args = "".join(f", {v}{sfx}" for _, v in self.step_args)
        ws: list[str] = []
        if p.work is not None:
            gx, gy, gz = p.work.grid, 1, 1
        if self.partials:
            words, tickets = self.workspace()
            # one workspace per process, allocated at the first launch; the last CTA of each
            # tile leaves it clean, so launches must be stream-ordered (as the CUDA backend's)
            ws = ["  static float* ws = nullptr;  // the fix-up's partials",
                  "  static int* tickets = nullptr;  // one per partial tile, zero between launches",
                  "  if (ws == nullptr) {",
                  f"    cudaError_t e = cudaMalloc(&ws, {words}ull * sizeof(float));",
                  f"    if (e == cudaSuccess) e = cudaMalloc(&tickets, {tickets}ull * sizeof(int));",
                  f"    if (e == cudaSuccess) e = cudaMemset(ws, 0, {words}ull * sizeof(float));",
                  f"    if (e == cudaSuccess) e = cudaMemset(tickets, 0, {tickets}ull * sizeof(int));",
                  "    if (e == cudaSuccess) e = cudaDeviceSynchronize();",
                  "    if (e != cudaSuccess) { ws = nullptr; return (int)e; }",
                  "  }"]
            args += ", ws, tickets"
        lines = [
            f'extern "C" int tilec_launch_{p.name}(const float* A, const float* B, float* C, void* stream) {{',
            *([align] if align else []),
            *opt_in,
            *ws,
            f"  {p.name}::kernel<<<dim3({gx}, {gy}, {gz}), dim3({bx}, {by}, {bz}), {dyn}, "
            f"(cudaStream_t)stream>>>(A, B, C{args});",
            "  return (int)cudaGetLastError();",
            "}",
        ]
        return "\n".join(lines)


def emit_simt(plan: SimtPlan) -> str:
    """The standalone ``.cu`` source of a SIMT plan (see module docstring)."""
    return SimtCudaPrinter(plan).emit()
