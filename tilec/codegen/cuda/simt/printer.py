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

import re

import sympy

from tilec.codegen.cuda.expr import CudaExprPrinter
from tilec.codegen.cuda.runtime import INDEX_HELPERS
from tilec.codegen.cuda.simt.text import ASYNC_HELPERS, LANE, TICKET_HELPER, VT, ZERO
from tilec.codegen.cuda.simt.units import host_section, in_place, partials, units
from tilec.errors import UnsupportedError
from tilec.transforms.simt.lower import RegAxis, SimtPlan, SimtVariant, variants_of
from tilec.transforms.simt.staging import STATIC_SMEM, TileCopy


class SimtCudaPrinter:
    """Prints one :class:`SimtPlan` (see the module docstring): a kernel per run-time variant
    (``plan.variants``), the host section, the launcher."""

    def __init__(self, plan: SimtPlan) -> None:
        if not plan.name.isidentifier():
            raise UnsupportedError(f"SIMT printer: kernel name {plan.name!r} is not a C identifier")
        self.ref = plan
        self.variants = list(variants_of(plan))
        self.general = self.variants[-1].plan
        self.use(self.variants[-1])
        self.ex = CudaExprPrinter()

    def use(self, v: SimtVariant) -> None:
        """Print variant ``v`` from now on (``self.p``: its plan)."""
        self.v = v
        self.p = v.plan

    def c(self, e: sympy.Basic | int) -> str:
        """A plan expression in C, the variant's fact symbols written back as the run-time
        sizes (``lda_q -> lda/4``, so ``32*lda_q`` prints ``8*lda``)."""
        e = sympy.sympify(e)
        if self.v.back:
            e = e.xreplace(self.v.back)
        return str(CudaExprPrinter().doprint(e))

    # -- file ----------------------------------------------------------------------------------
    def emit(self) -> str:
        kernels: list[tuple[SimtVariant, str]] = []
        for v in self.variants:  # a variant printed as the next one is dropped (its facts buy nothing)
            self.use(v)
            kernels.append((v, self.kernel()))
        kept = [(v, k) for i, (v, k) in enumerate(kernels)
                if i + 1 == len(kernels) or k != kernels[i + 1][1]]
        self.variants = [v for v, _ in kept]
        self.use(self.variants[-1])
        parts = [self.header(), INDEX_HELPERS]
        if self.p.staging is not None and self.p.options.async_copy:
            parts.append(ASYNC_HELPERS)
        if self.deterministic:
            parts.append(TICKET_HELPER)
        parts.append(host_section(self))
        parts += [k.replace(" kernel(", f" kernel_{v.name}(", 1) for v, k in kept]
        return "\n".join([*parts, self.launcher()]) + "\n"

    @property
    def split(self) -> bool:
        """The CTAs walk a work split's units (``plan.decomposition``), numbered per launch."""
        return self.ref.decomposition is not None

    @property
    def deterministic(self) -> bool:
        return partials(self.ref) and not in_place(self.ref)

    @property
    def byte_steps(self) -> bool:
        """The stride arguments are 64-bit byte counts (``copy_addresses("byte_stride")``)."""
        return self.p.options.copy_addresses == "byte_stride"

    @property
    def step_args(self) -> list[tuple[str, sympy.Expr]]:
        """``(name, value)`` of the kernel's stride arguments (``fusion.copy_addresses``): the
        distance between a thread's tile copies (a multiple of the leading dimension), which the
        launcher computes per launch and ptxas therefore cannot fold: in elements (``stride``:
        each copy's address one wide multiply-add of it) or in bytes (``byte_stride``: one
        64-bit add)."""
        st = self.p.staging
        if st is None or not self.p.options.async_copy:
            return []
        scale = 4 if self.byte_steps else 1
        return [(f"{cp.operand.lower()}_step", scale * sympy.sympify(cp.stride))
                for cp in (st.a, st.b) if cp.stride]

    @property
    def dynamic_smem(self) -> int:
        """Bytes of dynamic shared memory (0: the tiles fit the 48 KB of static memory)."""
        st = self.p.staging
        return st.smem_bytes if st is not None and st.smem_bytes > STATIC_SMEM else 0

    def header(self) -> str:
        p = self.ref
        st = p.staging
        stage = (f"K tiles of {st.BK} staged in shared memory ({st.stages} stage(s))" if st else
                 "K read straight from global memory")
        lines = [
            "// Generated by tilec (SIMT fp32): C[M, N] = A[M, K] @ B[K, N], rows lda, ldb, ldc "
            "elements apart, fp32 FMA;",
            "// M, N, K and the leading dimensions are run-time arguments (one kernel per variant "
            "below, picked per launch).",
            f"// block {p.block}, CTA tile {p.BM}x{p.BN}, register tile "
            f"{p.reg_count('M')}x{p.reg_count('N')}, {stage}.",
            f"// m = {p.m_expr}",
            f"// n = {p.n_expr}",
            "// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -O3 (-shared -Xcompiler -fPIC)",
        ]
        for v in self.variants:
            q = v.plan
            lines.append(f"// variant {v.name}: {' && '.join(v.facts) or 'no facts (always correct)'}; "
                         f"A {q.staging.a.vec * 32 if q.staging else 32}-bit / "
                         f"B {q.staging.b.vec * 32 if q.staging else q.vec_c * 32}-bit loads, "
                         f"C {q.vec_c * 32}-bit stores")
            lines += [f"//   note: {n}" for n in q.notes]
        # the schedule's calls (its reference sizes are not the kernel's: it takes any)
        sched = [ln if not ln.startswith("fusion = GemmFusion(") else
                 re.sub(r"M=\d+, N=\d+, K=\d+", "M=M, N=N, K=K", ln) for ln in p.schedule.splitlines()]
        lines += ["// schedule:"] + [f"//   {s}" for s in sched]
        lines += ["#include <cstdint>", "#include <cuda_runtime.h>"]
        return "\n".join(lines)

    # -- kernel --------------------------------------------------------------------------------
    def kernel(self) -> str:
        p = self.p
        tm, tn = p.reg_count("M"), p.reg_count("N")
        body = [f"namespace {self.ref.name} {{"]
        bounds = f"{p.threads}, {p.options.min_blocks}" if p.options.min_blocks else f"{p.threads}"
        ty = "size_t" if self.byte_steps else "unsigned"
        steps = "".join(f", const {ty} {a}" for a, _ in self.step_args)
        if self.split:
            steps += ", const Work W"
        if self.deterministic:
            steps += ", float* __restrict__ ws, int* __restrict__ tickets"
        body.append(f"__global__ void __launch_bounds__({bounds}) kernel("
                    f"const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, "
                    f"const Shape S{steps}) {{")
        ind = "  "
        body.append(f"{ind}[[maybe_unused]] const int M = S.M, N = S.N, K = S.K, lda = S.lda, "
                    "ldb = S.ldb, ldc = S.ldc;")
        if p.staging is not None and not self.split:
            body.append(f"{ind}const int k_tiles = (K + {p.staging.BK - 1}) / {p.staging.BK};  "
                        "// K tiles (K > 0: the launcher)")
        for s in p.thread_symbols:
            body.append(f"{ind}const int {s} = threadIdx.{s.name[-1]};")
        if self.split:
            body += units(self, ind)
            body += ["}", "}  // namespace " + self.ref.name]
            return "\n".join(body)
        for s in p.block_symbols:
            body.append(f"{ind}const int {s} = blockIdx.{s.name[-1]};")
        body.append(f"{ind}float acc[{tm}][{tn}];  // register tile")
        body += self.loops_flat(ind, tm, tn, "acc[i][j] = 0.f;")
        body += self.staged(ind) if p.staging else self.unstaged(ind)
        body += self.epilogue(ind)
        body += ["}", "}  // namespace " + self.ref.name]
        return "\n".join(body)

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
        load = f"*reinterpret_cast<const {VT[width]}*>(&{src}[{a}])" if width > 1 else f"{src}[{a}]"
        if g is not sympy.true:
            load = f"({self.c(g)}) ? {load} : {ZERO[width]}"
        if width == 1:
            inner = [f"{dst}[{flat}] = {load};"]
        elif rotate:  # the rotation is a constant once the k-slice loop is unrolled
            lanes = ", ".join(f"v.{LANE[j]}" for j in range(width))
            inner = [f"const {VT[width]} v = {load};", f"const float e[{width}] = {{{lanes}}};"]
            inner += [f"{dst}[{flat} + {j}] = e[({j} + {rotate}) % {width}];" for j in range(width)]
        else:
            inner = [f"const {VT[width]} v = {load};"]
            inner += [f"{dst}[{flat} + {j}] = v.{LANE[j]};" for j in range(width)]
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
               f"{ind}for (int {k} = 0; {k} < {self.c(p.bounds[k])}; ++{k}) {{"]
        a = self.fetch("M", "am", 1, p.m_expr * p.lda + p.k_expr, p.guard_a, "A")
        b = self.fetch("N", "bn", p.vec_c, p.k_expr * p.ldb + p.n_expr, p.guard_b, "B")
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
        ko, ki, kt = st.ko, st.ki, "k_tiles"
        tm, tn = p.reg_count("M"), p.reg_count("N")
        nf = p.options.fragments
        out = [f"{ind}const int tid = {self.c(p.tid_linear)};", *self.smem_arrays(ind)]
        if p.options.async_copy:
            return out + self.staged_setup(ind, head=False) + self.staged_loop(ind, "0", kt)
        out += [f"{ind}{VT[st.a.vec]} ra[{st.a.iters}];  // the next K tile, global -> registers",
               f"{ind}{VT[st.b.vec]} rb[{st.b.iters}];",
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
        load = (f"*reinterpret_cast<const {VT[cp.vec]}*>(&{src}[{self.c(cp.global_index)}])"
                if cp.vec > 1 else f"{src}[{self.c(cp.global_index)}]")
        if g is not sympy.true:
            load = f"({self.c(g)}) ? {load} : {ZERO[cp.vec]}"
        return [f"{ind}#pragma unroll", f"{ind}for (int it = 0; it < {cp.iters}; ++it)",
                f"{ind}  {regs}[it] = {load};"]

    def copy_store(self, ind: str, cp: TileCopy, regs: str, dst: str) -> list[str]:
        row, col = self.c(cp.row), self.c(cp.col)
        if cp.transposed:
            parts = [f"{dst}[buf][{col} + {j}][{self.c(cp.place(cp.col + j, cp.row))}] = "
                     f"{regs}[it]{'.' + LANE[j] if cp.vec > 1 else ''};" for j in range(cp.vec)]
        elif cp.vec > 1:
            parts = [f"*reinterpret_cast<{VT[cp.vec]}*>(&{dst}[buf][{row}][{col}]) = {regs}[it];"]
        else:
            parts = [f"{dst}[buf][{row}][{col}] = {regs}[it];"]
        cond = ""
        if cp.guard_idx:
            cond = f"if (tid + it * {self.p.threads} < {cp.rows * cp.cols // cp.vec}) "
        return [f"{ind}#pragma unroll", f"{ind}for (int it = 0; it < {cp.iters}; ++it) {{",
                *(f"{ind}  {cond}{s}" for s in parts), f"{ind}}}"]

    # -- epilogue ------------------------------------------------------------------------------
    def epilogue(self, ind: str, atomic: bool = False) -> list[str]:
        """The register tile to C under the IR's predicates (vector stores where proven);
        ``atomic``: added into C (``atomicAdd``, the atomic fix-up of a partial unit)."""
        p = self.p
        w = p.vec_c
        axes_n, v0 = self.vec_split("N", w)
        axes = [*p.regs("M"), *axes_n]
        fm, fn = self.c(p.flat("M")), self.c(p.flat("N").xreplace(v0))
        m, n = self.c(p.m_expr), self.c(p.n_expr.xreplace(v0))
        if w > 1:
            vals = ", ".join(f"acc[{fm}][{fn} + {j}]" for j in range(w))
            store = (f"atomicAdd(reinterpret_cast<{VT[w]}*>(&C[m * ldc + n]), make_{VT[w]}({vals}));"
                     if atomic else
                     f"*reinterpret_cast<{VT[w]}*>(&C[m * ldc + n]) = make_{VT[w]}({vals});")
        else:
            store = (f"atomicAdd(&C[m * ldc + n], acc[{fm}][{fn}]);" if atomic else
                     f"C[m * ldc + n] = acc[{fm}][{fn}];")
        preds = [q.xreplace(v0) for q in p.predicates]
        guard = self.c(sympy.And(*preds)) if preds else ""
        inner = [f"const int m = {m};", f"const int n = {n};",
                 f"if ({guard}) {store}" if guard else store]
        what = "added into C" if atomic else "to C"
        return [f"{ind}// epilogue: the register tile {what}", *self.reg_loops(ind, axes, inner)]

    def store_function(self) -> str:
        """``c_store_<variant>``: the element ``(m, n)`` a thread's store at this register point
        writes (``vec_c`` elements from ``n``) and whether it writes (the epilogue's guard), the
        same expressions the kernel's epilogue prints; host-compilable (the tests enumerate
        every thread of every CTA at run-time shapes)."""
        p = self.p
        axes_n, v0 = self.vec_split("N", p.vec_c)
        axes = [*p.regs("M"), *axes_n]
        preds = [q.xreplace(v0) for q in p.predicates]
        guard = self.c(sympy.And(*preds)) if preds else "true"
        idx = ["bidx", "bidy", "bidz", "tidx", "tidy", "tidz", *(str(a.symbol) for a in axes)]
        return "\n".join([
            f"TILEC_HD bool c_store_{self.v.name}(const Shape& S, "
            + ", ".join(f"int {i}" for i in idx) + ", int& m, int& n) {",
            "  [[maybe_unused]] const int M = S.M, N = S.N, K = S.K, lda = S.lda, ldb = S.ldb, "
            "ldc = S.ldc;",
            "  " + " ".join(f"(void){i};" for i in idx),
            f"  m = {self.c(p.m_expr)}; n = {self.c(p.n_expr.xreplace(v0))};",
            f"  return {guard};  // {p.vec_c} element(s) from n",
            "}"])

    def copy_functions(self) -> list[str]:
        """``copy_<A|B>_<variant>``: copy ``it`` of thread ``tid`` of the K tile ``ko`` of a
        CTA: whether it reads (the tile copy's guard; false: zero-filled) and the element index
        of its first element (``vec`` consecutive), the expressions the kernel's copies print;
        host-compilable (the tests count every element each CTA loads at run-time shapes)."""
        st = self.p.staging
        if st is None:
            return []
        out = []
        for cp in (st.a, st.b):
            g = "true" if cp.guard is sympy.true else self.c(cp.guard)
            live = (f"if (tid + it * {self.p.threads} >= {cp.rows * cp.cols // cp.vec}) return false;"
                    if cp.guard_idx else "")
            out += [f"TILEC_HD bool copy_{cp.operand}_{self.v.name}(const Shape& S, int tid, int it, "
                    f"int bidx, int bidy, int {st.ko}, long long& idx) {{  // {cp.vec} element(s)",
                    "  [[maybe_unused]] const int M = S.M, N = S.N, K = S.K, lda = S.lda, "
                    "ldb = S.ldb, ldc = S.ldc;",
                    f"  (void)bidx; (void)bidy; (void){st.ko};",
                    *([f"  {live}"] if live else []),
                    f"  idx = {self.c(cp.global_index)};",
                    f"  return {g};",
                    "}"]
        return out

    # -- host ----------------------------------------------------------------------------------
    def launch_variant(self, i: int, v: SimtVariant) -> list[str]:
        """The launch of variant ``v`` (case ``i`` of the launcher's switch)."""
        self.use(v)
        p = self.p
        bx, by, bz = p.block
        dyn = self.dynamic_smem
        gen = self.general
        if self.split:
            grid = "dim3(W.workers, 1, 1)"
        else:
            gx, gy, gz = (self.c(e) for e in gen.grid)
            grid = f"dim3({gx}, {gy}, {gz})"
        out = [f"    case {i}: {{  // {v.name}"]
        if dyn:
            out += [f"      static const cudaError_t opt_in = cudaFuncSetAttribute(kernel_{v.name}, "
                    f"cudaFuncAttributeMaxDynamicSharedMemorySize, {dyn});",
                    "      if (opt_in != cudaSuccess) return (int)opt_in;"]
        ty = "size_t" if self.byte_steps else "unsigned"
        args = "".join(f", ({ty})({self.c(e)})" for _, e in self.step_args)
        if self.split:
            args += ", W"
        if self.deterministic:
            args += ", ws, tickets"
        out += [f"      kernel_{v.name}<<<{grid}, dim3({bx}, {by}, {bz}), {dyn}, st>>>(A, B, C, S{args});",
                "      break;", "    }"]
        return out

    def launcher(self) -> str:
        """``tilec_variant_<name>`` (which variant a launch runs) and ``tilec_launch_<name>``:
        checks the shape, handles the empty cases, computes the work split's numbers and
        zeroes C's partial rows or grows the workspace as the split needs, picks the variant
        and launches it."""
        name = self.ref.name
        lines = [
            f'extern "C" int tilec_variant_{name}(const void* A, const void* B, const void* C, int M, '
            "int N, int K, int lda, int ldb, int ldc) {",
            f"  return {name}::pick_variant({name}::Shape{{M, N, K, lda, ldb, ldc}}, (uintptr_t)A, "
            "(uintptr_t)B, (uintptr_t)C);",
            "}",
            "// C[M, N] = A[M, K] @ B[K, N] (row-major, rows lda, ldb, ldc elements apart) on stream; "
            "0 or a cudaError_t,",
            "// or check_shape's negative code. M = 0 or N = 0: nothing; K = 0: C = 0.",
            f'extern "C" int tilec_launch_{name}(const float* A, const float* B, float* C, int M, int N, '
            "int K, int lda, int ldb, int ldc, void* stream) {",
            f"  using namespace {name};",
            "  const Shape S{M, N, K, lda, ldb, ldc};",
            "  const cudaStream_t st = (cudaStream_t)stream;",
            "  if (const int bad = check_shape(S)) return bad;",
            "  if (M == 0 || N == 0) return 0;",
            "  if (K == 0) return (int)cudaMemset2DAsync(C, (size_t)ldc * sizeof(float), 0, "
            "(size_t)N * sizeof(float), M, st);",
        ]
        if self.split:
            lines.append("  const Work W = make_work(S);")
        if in_place(self.ref):
            lines += ["  int r0, r1;  // the partial tiles' rows: the atomic fix-up adds into zeros",
                      "  zeroed_rows(S, W, r0, r1);",
                      "  if (r1 > r0) {",
                      "    const cudaError_t z = cudaMemset2DAsync(C + (size_t)r0 * ldc, (size_t)ldc * "
                      "sizeof(float), 0, (size_t)N * sizeof(float), r1 - r0, st);",
                      "    if (z != cudaSuccess) return (int)z;",
                      "  }"]
        if self.deterministic:
            p = self.general
            words = p.reg_count("M") * p.reg_count("N") * p.threads
            # one workspace per process, grown to the largest launch so far; the last CTA of each
            # tile leaves its ticket zero, so launches must be stream-ordered
            lines += ["  static float* ws = nullptr;  // the fix-up's partials",
                      "  static int* tickets = nullptr;  // one per partial tile, zero between launches",
                      "  static long long ws_slots = 0, ws_tickets = 0;",
                      "  if (W.partial_slots > ws_slots || W.partial_tiles > ws_tickets) {",
                      "    cudaError_t e = cudaDeviceSynchronize();  // the old buffers may be in use",
                      "    if (ws) cudaFree(ws);",
                      "    if (tickets) cudaFree(tickets);",
                      "    ws = nullptr; tickets = nullptr; ws_slots = ws_tickets = 0;",
                      "    const long long slots = W.partial_slots > 0 ? W.partial_slots : 1;",
                      "    const long long n_tk = W.partial_tiles > 0 ? W.partial_tiles : 1;",
                      f"    if (e == cudaSuccess) e = cudaMalloc(&ws, (size_t)slots * {words} * sizeof(float));",
                      "    if (e == cudaSuccess) e = cudaMalloc(&tickets, (size_t)n_tk * sizeof(int));",
                      "    if (e == cudaSuccess) e = cudaMemset(tickets, 0, (size_t)n_tk * sizeof(int));",
                      "    if (e == cudaSuccess) e = cudaDeviceSynchronize();",
                      "    if (e != cudaSuccess) { ws = nullptr; tickets = nullptr; return (int)e; }",
                      "    ws_slots = slots; ws_tickets = n_tk;",
                      "  }"]
        lines += ["  switch (pick_variant(S, (uintptr_t)A, (uintptr_t)B, (uintptr_t)C)) {"]
        for i, v in enumerate(self.variants):
            lines += self.launch_variant(i, v)
        lines += ["    default: return -5;", "  }", "  return (int)cudaGetLastError();", "}"]
        return "\n".join(lines)


def emit_simt(plan: SimtPlan) -> str:
    """The standalone ``.cu`` source of a SIMT plan (see module docstring)."""
    return SimtCudaPrinter(plan).emit()
