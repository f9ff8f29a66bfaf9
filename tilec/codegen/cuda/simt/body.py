"""The SIMT kernel's body as the printer writes it: :class:`SimtBody` holds the plan and the
variant being printed (``use``), prints plan expressions in C (``c``) and writes the parts every
kernel is made of: the register loops, the global and shared-memory copies (``cp.async`` or
register-staged), the FMAs of a k-slice, the epilogue, and the host-compilable copy and store
functions the tests run.  :mod:`.units` adds the work split's walk around it and :mod:`.printer`
assembles the file (:class:`~tilec.codegen.cuda.simt.printer.SimtCudaPrinter`)."""

from __future__ import annotations

import sympy

from tilec.codegen.cuda.expr import CudaExprPrinter
from tilec.codegen.cuda.simt.cstage import staged_epilogue
from tilec.codegen.cuda.simt.text import LANE, VT, ZERO
from tilec.errors import UnsupportedError
from tilec.transforms.plan import Decomposition, Fixup
from tilec.transforms.simt.lower import RegAxis, SimtPlan, SimtVariant, variants_of
from tilec.transforms.simt.staging import STATIC_SMEM, TileCopy


def partials(plan: SimtPlan) -> bool:
    """Some work units may cover part of a tile's K range (a fix-up is printed)."""
    d = plan.decomposition
    if d is None:
        return False
    if d.kind is Decomposition.SPLIT_K:
        return d.splits > 1
    return not (d.kind is Decomposition.STREAM_K_PP and d.sk_waves == 0)


def in_place(plan: SimtPlan) -> bool:
    """The atomic fix-up: C is fp32, so partials are added into C itself (``atomicAdd``),
    after the launcher zeroes the rows of the partial tiles: no workspace, no tickets."""
    return partials(plan) and plan.decomposition is not None \
        and plan.decomposition.fixup is Fixup.ATOMIC


class SimtBody:
    """One :class:`SimtPlan` being printed: its variants (``plan.variants``), the one printed now
    (``use``: ``self.v``, its plan ``self.p``), and the kernel's parts as lists of lines."""

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
        if not self.dynamic_smem and self.p.c_stage is None:
            return [f"{ind}__shared__ __align__(16) float As{sa};  // A tile, transposed",
                    f"{ind}__shared__ __align__(16) float Bs{sb};"]
        a_words = st.stages * st.BK * st.a.pitch
        # one array when the epilogue reuses the buffers for C's tile (Cs, cstage.py)
        decl = (f"extern __shared__ __align__(16) float smem[];  // {self.dynamic_smem} bytes"
                if self.dynamic_smem else f"__shared__ __align__(16) float smem[{st.smem_bytes // 4}];")
        return [f"{ind}{decl}",
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
        if cp.edge is not None:  # the vector at the row's end: its columns < N, zeros after
            assert cp.vec == 4, "a partial copy is a 16-byte cp.async"
            nb = f"tilec_max(0, tilec_min(4 * ({self.c(cp.edge)}), 16))"
            # a copy of 0 bytes reads nothing: its address is not dereferenced (as Triton's
            # masked cp.async and CUTLASS's zfill copies), so no select of a safe one
            body = [f"const int bytes = {nb if g == 'true' else f'({g}) ? {nb} : 0'};",
                    f"tilec_cp_async_part({where}, {addr}, bytes);"]
        else:
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
        ``atomic``: added into C (``atomicAdd``, the atomic fix-up of a partial unit); staged
        through shared memory where the plan says (``plan.c_stage``, :mod:`.cstage`)."""
        p = self.p
        if p.c_stage is not None:
            return staged_epilogue(self, ind, atomic)
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
            # a partial copy (TileCopy.edge) says how many of its elements it reads
            part = ", int& elems" if cp.edge is not None else ""
            what = f"{cp.vec} element(s)" + (", elems of them read" if part else "")
            out += [f"TILEC_HD bool copy_{cp.operand}_{self.v.name}(const Shape& S, int tid, int it, "
                    f"int bidx, int bidy, int {st.ko}, long long& idx{part}) {{  // {what}",
                    "  [[maybe_unused]] const int M = S.M, N = S.N, K = S.K, lda = S.lda, "
                    "ldb = S.ldb, ldc = S.ldc;",
                    f"  (void)bidx; (void)bidy; (void){st.ko};",
                    *([f"  {live}"] if live else []),
                    f"  idx = {self.c(cp.global_index)};",
                    *([f"  elems = tilec_max(0, tilec_min({self.c(cp.edge)}, {cp.vec}));"] if part else []),
                    f"  return {g};",
                    "}"]
        return out
