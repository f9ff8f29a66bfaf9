"""The SIMT kernel's host-compilable section and its work split (split-K, the Stream-K family,
``dp_ft``): the run-time :class:`Shape`, its checks and the variant the launcher picks; for a
split, the ``Work`` numbers of one launch (``make_work``: :func:`~tilec.transforms.decompose.make_work_split`
at the launch's M, N, K), the unit walk printed from the :class:`~tilec.transforms.plan.WorkSplit`
formulas over those numbers (a WorkSplit whose fields are the ``Work`` struct's), the kernel
body that walks the units around the ``cp.async`` K loop, the fix-up of partial register tiles,
and the workspace and zeroed rows the launcher needs.  Everything between ``WORK_BEGIN`` and
``WORK_END`` compiles with g++ (the tests run it against the Python oracle at many shapes)."""

from __future__ import annotations

import sympy

from tilec.codegen.cuda.expr import CudaExprPrinter
from tilec.codegen.cuda.simt.body import SimtBody, in_place, partials
from tilec.codegen.cuda.simt.cstage import stage_functions
from tilec.codegen.cuda.simt.text import LANE, VT
from tilec.ir import ceil_div
from tilec.ir.types import DecompositionChoice
from tilec.proofs import Context
from tilec.transforms.plan import (
    CTA,
    IT_BEGIN,
    IT_END,
    PART,
    SIZE_K,
    SIZE_M,
    SIZE_N,
    TILE,
    UNIT,
    Decomposition,
    J,
    SplitRule,
    WorkSplit,
)
from tilec.transforms.simt.lower import SimtPlan

WORK_BEGIN = "// -- host-compilable section: shape checks, variant choice, work split --"
WORK_END = "// -- end of host-compilable section --"

# the Work struct: (C type, field, meaning)
WORK_FIELDS = (
    ("int", "gx", "tiles along x: tile g = bidy * gx + bidx"),
    ("int", "workers", "CTAs launched"),
    ("int", "groups", "tiles"),
    ("int", "k_iters", "K tiles of one tile"),
    ("int", "splits", "split-K parts (min(SPLITS, k_iters))"),
    ("int", "sk_tiles", "Stream-K (or front/tail) region tiles"),
    ("int", "sk_ctas", "CTAs the region is cut over"),
    ("int", "sk_start", "first region tile"),
    ("int", "dp_start", "first data-parallel tile"),
    ("int", "dp_tiles", "data-parallel tiles"),
    ("long long", "sk_iters", "the region's k-iterations"),
    ("int", "front", "dp_ft: the fronts' k-iterations"),
    ("int", "tail", "dp_ft: k_iters - front"),
    ("int", "tail_ctas", "dp_ft: CTAs streaming the tails"),
    ("long long", "tail_iters", "dp_ft: the tails' k-iterations"),
    ("int", "ft_slots", "dp_ft: workspace slots per region tile"),
    ("int", "partial_tiles", "tiles with partials (tickets)"),
    ("long long", "partial_slots", "workspace slots of partials"),
)


def _f(name: str) -> sympy.Symbol:
    return sympy.Symbol(f"W.{name}", integer=True, positive=True)


class RunTimeSplit:
    """The :class:`WorkSplit` formulas with the split's numbers the ``Work`` struct's fields
    (``W.k_iters``, ``W.sk_ctas``, ...): the same methods, run over symbols, so the kernel's
    walk is the split's own formulas with the numbers of the launch."""

    def __init__(self, kind: Decomposition) -> None:
        self.kind = kind
        self.split_k = kind is Decomposition.SPLIT_K
        self.front_tail = kind is Decomposition.DP_FRONT_TAIL
        for name in ("k_iters", "splits", "sk_ctas", "sk_iters", "sk_tiles"):
            setattr(self, name, _f(name))
        self.ft_front, self.ft_tail_ctas = _f("front"), _f("tail_ctas")
        self.ft_tail_iters, self.ft_slots = _f("tail_iters"), _f("ft_slots")


    def contributors(self, tile: sympy.Expr) -> sympy.Expr:
        """WorkSplit.contributors (split-K: ``splits``, a field here, not a literal)."""
        return self.splits if self.split_k else WorkSplit.contributors(self, tile)  # type: ignore[arg-type]


for _name in ("split_k_unit", "split_k_range", "sk_range", "sk_owner", "sk_tiles_of",
              "sk_unit_range", "sk_first_tile", "first_contributor", "partial_slot", "sk_slot",
              "ft_tail_begin", "ft_tail_owner"):
    setattr(RunTimeSplit, _name, WorkSplit.__dict__[_name])


def fn(ret: str, name: str, expr: sympy.Basic, *args: str) -> str:
    """One formula as a host-device function of ``long long`` arguments and ``W``."""
    e = sympy.sympify(expr)
    syms = {a: sympy.Symbol(a, integer=True, nonnegative=True) for a in args}
    e = e.xreplace({s: syms[s.name] for s in e.free_symbols if s.name in syms})
    ctx = Context().positive(syms["it_end"]) if "it_end" in syms else Context()
    body = CudaExprPrinter(ctx=ctx, wide=True).doprint(e)
    params = "".join(f", long long {a}" for a in args)
    used = {s.name for s in e.free_symbols}
    unused = "".join(f"(void){a}; " for a in args if a not in used)
    return (f"TILEC_HD {ret} {name}(const Work& W{params}) {{ (void)W; {unused}"
            f"return ({ret})({body}); }}")


def host_section(pr: SimtBody) -> str:
    """The shape, its checks, the variant choice and (with a split) the work numbers and
    walk, between ``WORK_BEGIN`` and ``WORK_END``."""
    ref, gen = pr.ref, pr.general
    name = ref.name
    st = gen.staging
    bk = st.BK if st is not None else 1
    pad = [f"(long long)(({v} + {b - 1}) / {b}) * {b}" if b > 1 else f"(long long){v}"
           for v, b in (("S.M", ref.BM), ("S.N", ref.BN), ("S.K", bk))]
    lines = [WORK_BEGIN, f"namespace {name} {{",
             "struct Shape {  // one launch: C[M, N] = A[M, K] @ B[K, N], row-major",
             "  int M, N, K;",
             "  int lda, ldb, ldc;  // elements between consecutive rows of A, B, C",
             "};",
             "// 0, or why the kernel cannot take the shape: -2 a negative size, -3 a leading "
             "dimension shorter than its row,",
             "// -4 an index past 32 bits (the tiles padded to whole CTA and K tiles)",
             "TILEC_HD int check_shape(const Shape& S) {",
             "  if (S.M < 0 || S.N < 0 || S.K < 0) return -2;",
             "  if (S.lda < (S.K > 1 ? S.K : 1) || S.ldb < (S.N > 1 ? S.N : 1) || "
             "S.ldc < (S.N > 1 ? S.N : 1)) return -3;",
             f"  const long long Mp = {pad[0]}, Np = {pad[1]}, Kp = {pad[2]};",
             "  const long long lim = 2147483647LL;",
             "  if (Mp * S.lda + Kp > lim || Kp * S.ldb + Np > lim || Mp * S.ldc + Np > lim) return -4;",
             "  return 0;",
             "}",
             "// the first variant whose facts hold (the last assumes nothing)",
             "inline int pick_variant(const Shape& S, uintptr_t A, uintptr_t B, uintptr_t C) {",
             "  [[maybe_unused]] const int M = S.M, N = S.N, K = S.K, lda = S.lda, ldb = S.ldb, "
             "ldc = S.ldc;",
             "  (void)A; (void)B; (void)C;"]
    for i, v in enumerate(pr.variants[:-1]):
        lines.append(f"  if ({' && '.join(f'({f})' for f in v.facts)}) return {i};  // {v.name}")
    lines += [f"  return {len(pr.variants) - 1};  // {pr.variants[-1].name}", "}"]
    for v in pr.variants:
        pr.use(v)
        lines.append(pr.store_function())
        lines += stage_functions(pr)
        lines += pr.copy_functions()
    pr.use(pr.variants[-1])
    if pr.split:
        lines += work_section(pr)
    lines += ["}  // namespace", WORK_END]
    return "\n".join(lines)


def work_section(pr: SimtBody) -> list[str]:
    """``Work``, ``make_work`` (make_work_split's numbers for the launch's shape), the unit walk
    and the fix-up's functions (WorkSplit's formulas over ``W``), ``tile_row`` and
    ``zeroed_rows`` (the atomic fix-up's rows of C)."""
    ref, gen = pr.ref, pr.general
    d = ref.decomposition
    assert d is not None and gen.staging is not None
    kind = d.kind
    pr.use(pr.variants[-1])
    gx, gy = pr.c(gen.grid[0]), pr.c(gen.grid[1])
    sms = str(d.sms) if d.sms else "tiles"
    out = ["struct Work {  // the work split's numbers for one launch (decompose.make_work_split)"]
    out += [f"  {t} {f};  // {what}" for t, f, what in WORK_FIELDS]
    out += ["};",
            "inline Work make_work(const Shape& S) {",
            "  [[maybe_unused]] const int M = S.M, N = S.N, K = S.K;",
            "  Work W{};",
            f"  const int tiles_n = {gx}, tiles_m = {gy}, tiles = tiles_m * tiles_n;",
            f"  const int sms = {sms};  // CTAs the split spreads over",
            "  (void)sms;",
            f"  W.gx = tiles_n; W.groups = tiles; W.k_iters = (K + {gen.staging.BK - 1}) / {gen.staging.BK};",
            "  W.splits = 1; W.dp_tiles = tiles; W.workers = tiles;"]
    if kind is Decomposition.DP_FRONT_TAIL:
        out += ["  const int rem = tiles % sms;",
                "  const int front = rem ? (int)(((long long)rem * W.k_iters + sms - 1) / sms) : W.k_iters;",
                "  const int sk = (rem && sms - rem <= (long long)rem * (W.k_iters - front)) ? rem : 0;",
                "  W.sk_tiles = sk; W.sk_ctas = sk ? sms : 0; W.workers = tiles - sk + (sk ? sms : 0);",
                "  W.sk_start = tiles - sk; W.dp_start = 0; W.dp_tiles = tiles - sk;",
                "  W.sk_iters = (long long)sk * W.k_iters;",
                "  W.front = sk ? (int)((W.sk_iters + W.sk_ctas - 1) / W.sk_ctas) : W.k_iters;",
                "  W.tail = W.k_iters - W.front; W.tail_ctas = W.sk_ctas - sk;",
                "  W.tail_iters = (long long)sk * W.tail;",
                "  if (sk) {  // slots per region tile: its front and the most tail pieces of any",
                "    auto owner = [&](long long x) { return ((x + 1) * W.tail_ctas - 1) / W.tail_iters; };",
                "    long long most = 0;",
                "    for (int f = 0; f < sk; ++f) {",
                "      const long long n = owner((long long)(f + 1) * W.tail - 1) - owner((long long)f * W.tail) + 1;",
                "      most = n > most ? n : most;",
                "    }",
                "    W.ft_slots = 1 + (int)most;",
                "  }",
                "  W.partial_tiles = sk; W.partial_slots = (long long)sk * W.ft_slots;"]
    else:  # generic's closed forms of the split's numbers (decompose.split_forms), printed
        out += forms_lines(gen, d)
    out += ["  return W;", "}"]
    out += walk_functions(kind, partials(ref))
    # the rows of C a tile covers: m_base at its block indices
    syms = {s.name: s for s in gen.block_symbols}
    g = sympy.Symbol("g", integer=True, nonnegative=True)
    gxs = sympy.Symbol("W.gx", integer=True, positive=True)
    at = {syms[n]: v for n, v in (("bidy", sympy.floor(g / gxs)), ("bidx", sympy.Mod(g, gxs)))
          if n in syms}
    out.append(f"TILEC_HD int tile_row(const Work& W, int g) {{ (void)W; return {pr.c(gen.m_base.xreplace(at))}; }}")
    out += ["// rows [r0, r1) of C that hold every partial tile (the atomic fix-up zeroes them first)",
            "inline void zeroed_rows(const Shape& S, const Work& W, int& r0, int& r1) {",
            "  r0 = 0; r1 = 0;",
            "  if (W.partial_tiles == 0) return;",
            "  if (W.splits > 1) { r1 = S.M; return; }",
            "  int lo = tile_row(W, W.sk_start), hi = lo;",
            "  for (int g = W.sk_start; g < W.sk_start + W.sk_tiles; ++g) {",
            "    const int r = tile_row(W, g);",
            "    lo = r < lo ? r : lo; hi = r > hi ? r : hi;",
            "  }",
            f"  r0 = lo; r1 = hi + {ref.BM} < S.M ? hi + {ref.BM} : S.M;",
            "}"]
    return out


def forms_lines(gen: SimtPlan, d: DecompositionChoice) -> list[str]:
    """``make_work``'s numbers for split-K and the Stream-K family: the closed forms of
    :func:`tilec.transforms.decompose.split_forms` (what ``make_work_split`` gives at M, N,
    K), over the launch's tile counts (``sms`` unset: the tiles, as the reference's split),
    printed in 64-bit arithmetic; the rest follows from them as in ``WorkSplit``."""
    from tilec.transforms.decompose import split_forms

    st = gen.staging
    assert st is not None
    tm_, tn_ = ceil_div(SIZE_M, gen.BM), ceil_div(SIZE_N, gen.BN)
    kt_ = ceil_div(SIZE_K, st.BK)
    tiles = tm_ * tn_
    rule = SplitRule(d.kind, ctas=0, sms=d.sms or tiles, BM=gen.BM, BN=gen.BN, BK=st.BK,  # type: ignore[arg-type]
                     num_tiles=tiles, splits=d.splits, sk_waves=d.sk_waves, fixup=d.fixup)
    forms = split_forms(rule)
    names = {n: sympy.Symbol(v, integer=True, positive=True)
             for n, v in (("tiles_m", "tm"), ("tiles_n", "tn"), ("k_iters", "kt"), ("tiles", "T"))}
    ctx = Context()

    def c(e: sympy.Expr) -> str:
        e = sympy.sympify(e).subs({tm_: names["tiles_m"], tn_: names["tiles_n"], kt_: names["k_iters"]})
        e = e.subs(names["tiles_m"] * names["tiles_n"], names["tiles"])
        return CudaExprPrinter(ctx=ctx, wide=True).doprint(e)

    first = kind_first(d.kind)
    out = ["  {  // decompose.split_forms: the split's numbers as expressions of the tile counts",
           "    const long long tm = tiles_m, tn = tiles_n, kt = W.k_iters, T = tm * tn;",
           "    (void)tm; (void)tn; (void)kt; (void)T;",
           f"    W.workers = (int)({c(forms['grid'])});",
           f"    W.splits = (int)({c(forms['splits'])});",
           f"    W.sk_tiles = (int)({c(forms['sk_tiles'])});",
           f"    W.sk_ctas = (int)({c(forms['sk_ctas'])});",
           f"    W.sk_start = (int)({c(forms['sk_start'])});",
           "  }",
           "  W.sk_iters = (long long)W.sk_tiles * W.k_iters;"]
    if d.kind is Decomposition.SPLIT_K:
        out += ["  W.dp_tiles = W.splits > 1 ? 0 : tiles;",
                "  if (W.splits > 1) { W.partial_tiles = tiles; W.partial_slots = (long long)tiles * W.splits; }"]
    else:
        out += [f"  W.dp_start = {'W.sk_tiles' if first else '0'}; W.dp_tiles = tiles - W.sk_tiles;  "
                f"// the Stream-K tiles {'first' if first else 'last'}",
                "  W.partial_tiles = W.sk_tiles; W.partial_slots = 2LL * W.sk_ctas;"]
    return out


def kind_first(kind: Decomposition) -> bool:
    """The Stream-K region comes first in the tile order (``WorkSplit.sk_first``)."""
    return kind in (Decomposition.STREAM_K, Decomposition.TWO_TILE_SK_DP)


def walk_functions(kind: Decomposition, with_partials: bool) -> list[str]:
    """``work_unit(W, w, j, g, kb0, kb1)``: unit ``j`` of CTA ``w`` is tile ``g`` over K tiles
    [kb0, kb1) (false: no more units), the walk of :func:`tilec.transforms.decompose.work_units`;
    with partials, ``fix_of`` (where the unit's partial goes) and ``fix_slot``."""
    w = RunTimeSplit(kind)
    head = "TILEC_HD bool work_unit(const Work& W, int w, int j, int& g, int& kb0, int& kb1) {"
    if kind is Decomposition.SPLIT_K:
        group, part = w.split_k_unit(UNIT)
        k_begin, k_end = w.split_k_range(PART)
        out = ["// split-K: unit u = w + j * workers is K part s of tile g (WorkSplit.split_k_unit, "
               "split_k_range)",
               fn("int", "unit_group", group, "u"), fn("int", "unit_part", part, "u"),
               fn("int", "part_k_begin", k_begin, "s"), fn("int", "part_k_end", k_end, "s"),
               head,
               "  const int u = w + j * W.workers;",
               "  if (u >= W.groups * W.splits) return false;",
               "  const int s = unit_part(W, u);",
               "  g = unit_group(W, u); kb0 = part_k_begin(W, s); kb1 = part_k_end(W, s);",
               "  return true;", "}"]
        return out + (partial_functions(w, "w + j * W.workers", "g") if with_partials else [])
    if kind is Decomposition.DP_FRONT_TAIL:
        x = sympy.Symbol("x", integer=True, nonnegative=True)
        t = sympy.Symbol("t", integer=True, nonnegative=True)
        return [
            "// dp_ft: data-parallel tiles one CTA each; region tile f's front [0, front) on CTA "
            "dp_tiles + f, its tail [front, k_iters) streamed over the tail_ctas last CTAs",
            fn("long long", "tail_begin", w.ft_tail_begin(t), "t"),
            fn("int", "tail_owner", w.ft_tail_owner(x), "x"),
            head,
            "  if (w < W.dp_tiles) { g = W.dp_start + w; kb0 = 0; kb1 = W.k_iters; return j == 0; }",
            "  const int c = w - W.dp_tiles;",
            "  if (c < W.sk_tiles) { g = W.sk_start + c; kb0 = 0; kb1 = W.front; return j == 0; }",
            "  const long long b = tail_begin(W, c - W.sk_tiles), e = tail_begin(W, c - W.sk_tiles + 1);",
            "  const int f = (int)(b / W.tail) + j;  // the j-th region tile this tail CTA's range touches",
            "  if ((long long)f * W.tail >= e) return false;",
            "  g = W.sk_start + f;",
            "  const long long lo = b - (long long)f * W.tail, hi = e - (long long)f * W.tail;",
            "  kb0 = W.front + (int)(lo > 0 ? lo : 0); kb1 = W.front + (int)(hi < W.tail ? hi : W.tail);",
            "  return true;",
            "}",
            "// the partials of region tile f: its front (0), then its tail pieces in K order",
            fn("int", "contributors", w.contributors(TILE), "tile"),
            fn("long long", "fix_slot", w.partial_slot(TILE, J), "tile", "j"),
            "TILEC_HD void fix_of(const Work& W, int w, int j, int g, int& f, int& ord, int& cnt, "
            "long long& slot) {",
            "  (void)j;",
            "  f = g - W.sk_start; cnt = contributors(W, f);",
            "  const int c = w - W.dp_tiles;",
            "  ord = c < W.sk_tiles ? 0 : 1 + (c - W.sk_tiles) - tail_owner(W, (long long)f * W.tail);",
            "  slot = fix_slot(W, f, ord);",
            "}",
        ]
    # the Stream-K family
    it_begin, it_end = w.sk_range(CTA)
    first_t, end_t = w.sk_tiles_of(IT_BEGIN, IT_END)
    k_begin, k_end = w.sk_unit_range(TILE, IT_BEGIN, IT_END)
    sk_first = kind_first(kind)
    out = [
        f"// {kind.value}: Stream-K over tiles [sk_start, sk_start + sk_tiles) cut evenly over "
        f"sk_ctas CTAs by k-iterations; the other tiles data-parallel "
        f"({'Stream-K first' if sk_first else 'data-parallel first'})",
        fn("long long", "sk_begin", it_begin, "cta"),
        fn("long long", "sk_end", it_end, "cta"),
        fn("int", "sk_tile_begin", first_t, "it_begin"),
        fn("int", "sk_tile_end", end_t, "it_end"),
        fn("int", "sk_k_begin", k_begin, "tile", "it_begin"),
        fn("int", "sk_k_end", k_end, "tile", "it_end"),
        head,
        "  long long b = 0, e = 0; int first = 0, n_sk = 0;",
        "  if (w < W.sk_ctas) { b = sk_begin(W, w); e = sk_end(W, w); first = sk_tile_begin(W, b); "
        "n_sk = sk_tile_end(W, e) - first; }",
        "  const int n_dp = w < W.dp_tiles ? (W.dp_tiles - w + W.workers - 1) / W.workers : 0;",
        f"  const int sk_j = j{'' if sk_first else ' - n_dp'}, dp_j = j{' - n_sk' if sk_first else ''};",
        f"  if ({'j < n_sk' if sk_first else 'j >= n_dp'}) {{",
        "    if (sk_j >= n_sk) return false;",
        "    const int tile = first + sk_j;",
        "    kb0 = sk_k_begin(W, tile, b); kb1 = sk_k_end(W, tile, e);",
        "    g = W.sk_start + tile; return true;",
        "  }",
        "  if (dp_j >= n_dp) return false;",
        "  g = W.dp_start + w + dp_j * W.workers; kb0 = 0; kb1 = W.k_iters; return true;",
        "}",
    ]
    return out + (partial_functions(w, "w", "g - W.sk_start") if with_partials else [])


def partial_functions(w: RunTimeSplit, contributor: str, tile: str) -> list[str]:
    """Where the partials of partial-region tile ``f`` come from and live (WorkSplit's
    first_contributor, contributors, partial_slot), and ``fix_of``."""
    return [
        "// the partials of a partial-region tile f: its first contributor (unit or CTA), how "
        "many, the j-th one's slot",
        fn("int", "first_contributor", w.first_contributor(TILE), "tile"),
        fn("int", "contributors", w.contributors(TILE), "tile"),
        fn("long long", "fix_slot", w.partial_slot(TILE, J), "tile", "j"),
        "TILEC_HD void fix_of(const Work& W, int w, int j, int g, int& f, int& ord, int& cnt, "
        "long long& slot) {",
        *([] if w.split_k else ["  (void)j;"]),
        f"  f = {tile}; ord = {contributor} - first_contributor(W, f); cnt = contributors(W, f);",
        "  slot = fix_slot(W, f, ord);",
        "}",
    ]


def units(pr: SimtBody, ind: str) -> list[str]:
    """The kernel body of a split plan: CTA ``worker`` runs its units ``j = 0, 1, ...``
    (``work_unit``): tile ``g`` (``bidy = g / W.gx``, ``bidx = g % W.gx``), K tiles [kb0, kb1),
    the fix-up where the unit covers part of the tile's K range, the epilogue where the
    tile is whole (or this CTA summed its partials)."""
    p = pr.p
    assert p.staging is not None
    tm, tn = p.reg_count("M"), p.reg_count("N")
    split, atomic = partials(pr.ref), in_place(pr.ref)
    out = [f"{ind}const int worker = blockIdx.x;  // this CTA's units: work_unit(W, worker, j, ...)",
           f"{ind}int bidx = 0, bidy = 0;  // the unit's tile g = bidy * W.gx + bidx"]
    if split and not atomic:
        out.append(f"{ind}__shared__ int fix_last;  // this CTA took the tile's last ticket")
    out.append(f"{ind}float acc[{tm}][{tn}];  // register tile")
    out += pr.staged_setup(ind)
    i2 = ind + "  "
    out += [f"{ind}for (int j = 0; ; ++j) {{", f"{i2}int g, kb0, kb1;",
            f"{i2}if (!work_unit(W, worker, j, g, kb0, kb1)) break;",
            f"{i2}bidy = g / W.gx; bidx = g % W.gx;"]
    out += pr.loops_flat(i2, tm, tn, "acc[i][j] = 0.f;")
    out += pr.staged_loop(i2, "kb0", "kb1")
    if atomic:  # partials added into C, which the launcher zeroed
        out.append(f"{i2}if (kb0 != 0 || kb1 != W.k_iters) {{  // part of the tile's K range: "
                   "added into C")
        out += pr.epilogue(i2 + "  ", atomic=True)
        out.append(f"{i2}}} else {{")
        out += pr.epilogue(i2 + "  ")
        out.append(f"{i2}}}")
    elif split:
        out += fixup(pr, i2)
        out.append(f"{i2}if (last) {{")
        out += pr.epilogue(i2 + "  ")
        out.append(f"{i2}}}")
    else:
        out += pr.epilogue(i2)
    out += [f"{i2}tilec_cp_async_wait<0>();  // the next unit's copies reuse every buffer",
            f"{i2}__syncthreads();", f"{ind}}}"]
    return out


def fixup(pr: SimtBody, ind: str) -> list[str]:
    """A partial unit's fix-up (sets ``last``; whole units write C at once): the partial
    goes to the workspace in the register tile's own layout (float4 ``q`` of thread
    ``tid`` at ``q * THREADS + tid``, a warp's stores contiguous), a barrier and one
    thread's acquire-release ticket (``tilec_ticket``; a fence in every thread cost 2%
    at 4096^3, ``bench/results/simt_front_tail_ablate_*``); the CTA taking the tile's last
    ticket gets the sum in ``acc`` (its slots summed in K order: bitwise repeatable), and
    resets the ticket, leaving the workspace clean.  (The atomic fix-up adds into C instead:
    :func:`in_place`.)"""
    p = pr.p
    tm, tn = p.reg_count("M"), p.reg_count("N")
    vw = 4 if tn % 4 == 0 else 1
    per_row = tn // vw
    nq = tm * per_row
    words = tm * tn * p.threads
    vt = VT[vw]
    lane = (lambda e, j: f"{e}.{LANE[j]}") if vw > 1 else (lambda e, j: e)
    i2, i3 = ind + "  ", ind + "    "

    def regs(q: str) -> list[str]:
        return [f"acc[{q} / {per_row}][{vw} * ({q} % {per_row}) + {j}]" for j in range(vw)]

    pack = (f"make_float4({', '.join(regs('q'))})" if vw > 1 else regs("q")[0])
    store = f"__stcg(mine + q * {p.threads} + tid, {pack});"
    out = [f"{ind}bool last = true;  // this CTA writes the tile",
           f"{ind}if (kb0 != 0 || kb1 != W.k_iters) {{  // part of the tile's K range: fix-up "
           "(deterministic)",
           f"{i2}int f, ord, cnt;",
           f"{i2}long long slot;",
           f"{i2}fix_of(W, worker, j, g, f, ord, cnt, slot);",
           f"{i2}(void)ord;",
           f"{i2}{vt}* mine = reinterpret_cast<{vt}*>(ws + (size_t)slot * {words});",
           f"{i2}#pragma unroll",
           f"{i2}for (int q = 0; q < {nq}; ++q) {store}",
           f"{i2}__syncthreads();  // every thread's partial is stored",
           f"{i2}// one acq_rel ticket: its release covers the CTA's stores ordered before it by the",
           f"{i2}// barrier, its acquire the other partials the barrier below orders the reads after",
           f"{i2}if (tid == 0) fix_last = tilec_ticket(tickets + f) == cnt - 1;",
           f"{i2}__syncthreads();",
           f"{i2}last = fix_last;  // read by all before the unit's closing barrier",
           f"{i2}if (last) {{"]

    def summed(op: str) -> list[str]:
        return [f"{i3}  #pragma unroll", f"{i3}  for (int q = 0; q < {nq}; ++q) {{",
                f"{i3}    const {vt} x = __ldcg(src + q * {p.threads} + tid);",
                *(f"{i3}    {r} {op} {lane('x', j)};" for j, r in enumerate(regs("q"))),
                f"{i3}    if (q % 8 == 7) asm volatile(\"\" ::: \"memory\");", f"{i3}  }}"]

    out += [f"{i3}for (int i = 0; i < cnt; ++i) {{",
            f"{i3}  const {vt}* src = reinterpret_cast<const {vt}*>(ws + (size_t)fix_slot(W, f, i) * {words});",
            f"{i3}  if (i == 0) {{", *("  " + x for x in summed("=")), f"{i3}    continue;",
            f"{i3}  }}", *summed("+="), f"{i3}}}"]
    out += [f"{i3}if (tid == 0) tickets[f] = 0;  // every partial has arrived: reset for the next launch",
            f"{i2}}}", f"{ind}}}"]
    return out
