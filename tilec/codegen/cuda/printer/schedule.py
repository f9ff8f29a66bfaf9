"""The schedule's index logic as plain ``__host__ __device__`` C++ (host-compilable): the
run-time ``Shape`` (sizes, counts, the work split's numbers) whose members are the tile order,
the work split (:mod:`.work`) and the multicast forms, each printed from the plan's sympy
expressions; ``make_shape`` and ``facts_hold`` (the closed variant's launch test); a host
harness includes this section of the file to test it."""

from __future__ import annotations

import sympy

from tilec.codegen.cuda.expr import CudaExprPrinter, cexpr, nonneg_symbols
from tilec.codegen.cuda.printer.invariants import Invariants
from tilec.codegen.cuda.printer.reduce import reduce_schedule, reduced
from tilec.codegen.cuda.printer.shape import LOOP_VARS, PAIR_VARS, Kernel
from tilec.codegen.cuda.printer.spread import spread, spread_schedule
from tilec.codegen.cuda.printer.work import (
    fast_divisors,
    order_clusters,
    order_ctas_fixed,
    shape_fields,
    work_functions,
)
from tilec.errors import UnsupportedError
from tilec.proofs import Context
from tilec.transforms.plan import (
    SIZE_K,
    SIZE_M,
    SIZE_N,
    SIZES,
    MulticastMode,
    MulticastPlan,
    OperandLoad,
)

SCHEDULE_BEGIN = "// ---- tilec schedule functions: begin"
SCHEDULE_END = "// ---- tilec schedule functions: end"


def kernel_vars(expr: sympy.Basic) -> sympy.Basic:
    """The kernel's variables are nonnegative integers, the sizes M, N, K positive ones (a
    launch with a zero size never reaches the kernel): say so for the printer."""
    e = nonneg_symbols(sympy.sympify(expr))
    return e.xreplace({s: SIZES[s.name] for s in e.free_symbols if s.name in SIZES})


def cvar(expr: sympy.Basic, ctx: Context | None = None) -> str:
    """One plan expression as C over the kernel's variables (:func:`kernel_vars`)."""
    return cexpr(kernel_vars(expr), ctx)


def fn(ret: str, name: str, params: tuple[str, ...], expr: sympy.Basic,
       ctx: Context | None = None, inv: Invariants | None = None) -> str:
    """``expr`` as a ``TILEC_HD`` function of ``int`` parameters, signs proven under ``ctx``;
    its size-only parts read from the ``Shape`` fields of ``inv`` (divisions by them fast)."""
    args = ", ".join(f"int {v}" for v in params)
    printer = CudaExprPrinter(ctx=ctx, fields=inv.fields if inv else None,
                              divisors=inv.divisors if inv else None)
    body = printer.doprint(kernel_vars(expr))
    return f"TILEC_HD {ret} {name}({args}) {{ return {body}; }}"


def counts(k: Kernel) -> dict[str, sympy.Basic]:
    """The counts ``make_shape`` computes from M, N, K (``plan.counts``; ``ORDER_CTAS`` where
    the schedule's CTAs are one per tile), by field name."""
    c = k.plan.counts
    out = {"K_ITERS": c.k_iters, "TILES_M": c.tiles_m, "TILES_N": c.tiles_n,
           "NUM_TILES": c.num_tiles}
    if not order_ctas_fixed(k):
        out["ORDER_CTAS"] = sympy.sympify(k.plan.order.ctas or k.plan.work.grid)
    return out


def evict_where(op: OperandLoad) -> tuple[sympy.Basic, str, str] | None:
    """(condition over M, N, K, hint, else-hint): lowering's size-dependent L2 hint of ``op``'s
    loads, ``hint`` where the condition holds at the launch's sizes and ``else-hint`` elsewhere,
    when the plan carries one (``OperandLoad.evict_where``; e.g. one tile row: A last, B first);
    else None. Printed the same whichever size the plan was lowered at (a built library's
    kernels are one text for every shape): the hint other than normal is the one with a
    condition."""
    rule = getattr(op, "evict_where", None)
    if rule is None:
        return None
    cond, hint = rule
    names = [str(getattr(h, "value", h)) for h in (hint, op.evict)]
    for h in names:
        if h not in ("first", "last", "normal"):
            raise UnsupportedError(
                f"operand {op.name}: a size-dependent L2 hint chooses between 'first', 'last' "
                f"and 'normal' but the plan gives {h!r}")
    extra = {s.name for s in sympy.sympify(cond).free_symbols} - {"M", "N", "K"}
    if extra:
        raise UnsupportedError(f"operand {op.name}: its L2 hint's condition {cond} uses "
                               f"{sorted(extra)}; the kernel knows only M, N, K")
    cond = sympy.sympify(cond)
    if names[0] == "normal":  # the lowering's sizes held the other hint: its condition instead
        return sympy.Not(cond), names[1], names[0]
    return cond, names[0], names[1]


def per_tile_expressions(k: Kernel) -> list[sympy.Basic]:
    """The plan's expressions the schedule functions print (tile order, multicast forms, the
    conditions of size-dependent L2 hints)."""
    o = k.plan.order
    out = [o.tile_m, o.tile_n]
    out += [rule[0] for op in (k.plan.a, k.plan.b) if (rule := evict_where(op)) is not None]
    for op in (k.plan.a, k.plan.b):
        mc = op.multicast
        if mc is not None:
            out += [mc.same]
            if mc.closed_form:
                out += [mc.issue, mc.mask]
                if mc.mode is MulticastMode.SLICED:
                    out += [e for e in (mc.slice_index, mc.slice_count) if e is not None]
                if mc.guard != sympy.true:
                    out.append(mc.guard)
    return out


def work_divisors(k: Kernel) -> list[str]:
    """The work split's run-time numbers its printed functions divide by (fast: ``fd_X``)."""
    return fast_divisors(work_functions(k))


def invariants(k: Kernel) -> Invariants:
    """The size-only parts of the schedule functions (:mod:`.invariants`): ``Shape`` fields,
    the counts under their own names."""
    inv = Invariants({kernel_vars(e): n for n, e in counts(k).items()})
    for e in per_tile_expressions(k):
        inv.add(kernel_vars(e))
    return inv


def shape_struct(k: Kernel, inv: Invariants) -> list[str]:
    """The kernel's ``Shape``: the run-time sizes, the counts derived from them, the work
    split's run-time numbers and the size-only parts of the schedule functions (``inv``), with
    the schedule functions as members, so that the plan's expressions read ``M``, ``N``, ``K``
    and the counts by name."""
    o = k.plan.order
    t = o.index.name
    fields = ["M", "N", "K", "K_ITERS", "TILES_M", "TILES_N", "NUM_TILES", "GROUPS", "GRID",
              "WORKERS", *shape_fields(k)]
    divisors = sorted(set(inv.divisors.values()) | {f"fd_{n}" for n in work_divisors(k)})
    if not order_ctas_fixed(k):
        fields += ["ORDER_CTAS", "ORDER_CLUSTERS"]
        divisors.append("fd_ORDER_CLUSTERS")
    hoisted = [n for n, _ in inv.hoisted()]
    ints = [n for n in hoisted if n not in inv.booleans]
    bools = [n for n in hoisted if n in inv.booleans]
    # tile_alive asks t < NUM_TILES first
    live = Context().bound(kernel_vars(o.index), kernel_vars(o.num_tiles))
    members = [
        fn("int", "tile_m", (t,), o.tile_m, live, inv),
        fn("int", "tile_n", (t,), o.tile_n, live, inv),
        f"TILEC_HD bool tile_alive(int {t}) {{ return {t} < NUM_TILES && "
        f"tile_m({t}) < TILES_M && tile_n({t}) < TILES_N; }}",
        *work_functions(k),
    ]
    for op in (k.plan.a, k.plan.b):
        if op.multicast is not None:
            members += multicast_functions(op.name.lower(), op.multicast, inv)
        if (rule := evict_where(op)) is not None:
            members += [f"// operand {op.name}: L2 hint {rule[1]} where this holds, else {rule[2]}",
                        fn("bool", f"evict_{op.name.lower()}_where", (), rule[0], inv=inv)]
    members = [_const_member(m) for m in members]
    return [
        "// The run-time problem (make_shape): sizes, the counts derived from them, the work split's",
        "// numbers, what the schedule's functions compute from the sizes alone (SZ*) and the",
        "// divisors they divide by (fd_*: tilec_fastdiv); the schedule's functions are members, so",
        "// its expressions read them by name.",
        "struct Shape {",
        f"  int {', '.join(fields + ints)};",
        *([f"  bool {', '.join(bools)};"] if bools else []),
        *([f"  tilec_fastdiv {', '.join(divisors)};"] if divisors else []),
        "  long long LDC;  // C's row stride (elements)",
        *("  " + m for m in "\n".join(members).splitlines()),
        "};",
    ]


def _const_member(line: str) -> str:
    """A printed ``TILEC_HD`` function as a const member of ``Shape``."""
    if not line.startswith(("TILEC_HD", "template")):
        return line
    return line.replace(") {", ") const {", 1)


def make_shape(k: Kernel, inv: Invariants) -> list[str]:
    """``make_shape(M, N, K, ldc, grid, splits, sk_tiles, sk_ctas)``: the counts printed from
    the plan's expressions of M, N, K (``plan.counts``); ``grid``, split-K's parts and the
    Stream-K numbers from the launcher's split (``plan.split.at``:
    :func:`tilec.codegen.cuda.launch.run_split`)."""
    p = k.plan
    sizes = {"M": SIZE_M, "N": SIZE_N, "K": SIZE_K}
    named = counts(k)
    for name, e in named.items():
        extra = {s.name for s in e.free_symbols} - set(sizes)
        if extra:
            raise UnsupportedError(f"CUDA backend: {name} = {e} uses {sorted(extra)}; the launcher "
                                   "knows only M, N, K")
    body = [f"  s.{n} = {cvar(e)};" for n, e in named.items()]
    body += ["  s.GROUPS = (s.NUM_TILES + CLUSTER - 1) / CLUSTER;",
             "  s.GRID = grid; s.WORKERS = grid / CLUSTER;"]
    if not order_ctas_fixed(k):  # one CTA per tile: the schedule's walk has as many as tiles
        body += ["  s.ORDER_CLUSTERS = s.ORDER_CTAS / CLUSTER > 1 ? s.ORDER_CTAS / CLUSTER : 1;",
                 "  s.fd_ORDER_CLUSTERS = tilec_fastdiv_of(s.ORDER_CLUSTERS);"]
    body += [f"  s.{n} = {cvar(e)};" for n, e in inv.hoisted()]
    body += [f"  s.{fd} = tilec_fastdiv_of(s.{inv.fields[d]});" for d, fd in inv.divisors.items()]
    fields = shape_fields(k)
    if "SK_TILES" in fields:
        start = "0" if p.work.sk_first else "s.GROUPS - sk_tiles"
        body += ["  s.SK_TILES = sk_tiles; s.SK_CTAS = sk_ctas;",
                 f"  s.SK_START = {start};",
                 f"  s.DP_START = {'sk_tiles' if p.work.sk_first else '0'}; "
                 "s.DP_TILES = s.GROUPS - sk_tiles;"]
    else:
        body += ["  (void)sk_tiles; (void)sk_ctas;"]
    body += ["  s.SPLITS = splits;" if "SPLITS" in fields else "  (void)splits;"]
    known = set(inv.divisors.values())
    body += [f"  s.fd_{n} = tilec_fastdiv_of(s.{n});" for n in work_divisors(k)
             if f"fd_{n}" not in known]
    return [
        "// The Shape of a launch: M, N, K and C's row stride; grid, splits (split-K's parts),",
        "// sk_tiles, sk_ctas (the Stream-K region) are the work split's at these sizes (the",
        "// launcher's: plan.split.at).",
        "TILEC_HD Shape make_shape(int M, int N, int K, long long ldc, int grid, int splits, "
        "int sk_tiles, int sk_ctas) {",
        "  Shape s;",
        "  memset(&s, 0, sizeof(Shape));  // padding too: launchers compare shapes bytewise",
        "  s.M = M; s.N = N; s.K = K; s.LDC = ldc;",
        *body,
        "  return s;",
        "}",
    ]


def facts_hold(k: Kernel) -> list[str]:
    """``facts_hold(s)``: whether the closed variant may run at Shape ``s`` (docs/cuda_backend.md,
    "Variants"): whole tiles (no boundary predicates); per multicast operand with a closed form,
    its guard (the conjunction of its facts) and, at every alive CTA of every group the launch
    walks, the closed form equal to the general one (so the closed variant is checked at the
    launch's sizes, whatever the scope of its proof); where the exact stage release is printed,
    every cluster wholly alive or dead with the receivers the file was printed with.  Linear in
    the groups walked; the launcher keeps the answers of recent shapes."""
    p = k.plan
    closed = [op for op in (p.a, p.b) if op.multicast is not None and op.multicast.closed_form]
    exact = k.shape.receivers is not None and k.shape.cluster > 1
    sizes = {SIZE_M, SIZE_N, SIZE_K}
    facts = [f for f in p.facts if f.free_symbols <= sizes]  # the rest: per point, below
    conds = " && ".join(cvar(f) for f in facts) or "true"
    lines = [
        "// The facts of the closed variant, tested on the run-time sizes (the launcher picks the",
        "// variant; the general one assumes nothing).",
        "inline bool facts_hold(const Shape& s) {",
        "  const int M = s.M, N = s.N, K = s.K;",
        "  (void)M; (void)N; (void)K;",
        "  // plan.facts: whole tiles (no boundary predicates) and the multicast guards' size facts",
        f"  if (!({conds})) return false;",
    ]
    if closed or exact:
        lines += [
            "  for (int g = 0; g < s.GROUPS; ++g) {",
            f"    const int i_rt = g / {order_clusters(k, 's')}, cidx = g % {order_clusters(k, 's')};",
            "    int alive = 0;",
            "    for (int r = 0; r < CLUSTER; ++r) alive |= s.tile_alive(g * CLUSTER + r) ? 1 << r : 0;",
            "    if (!alive) continue;",
        ]
        if exact:
            lines.append("    if (alive != (1 << CLUSTER) - 1) return false;  // the exact release: "
                         "whole clusters")
        lines += ["    for (int r = 0; r < CLUSTER; ++r) {",
                  "      if (!(alive >> r & 1)) continue;",
                  "      int recv = 1 << r;"]
        for op in closed:
            x, mc = op.name.lower(), op.multicast
            at = "(r, i_rt, cidx)"
            if mc.guard.free_symbols - sizes:  # a guard over the loop variables: per point
                lines.append(f"      if (!s.mc_{x}_guard{at}) return false;")
            # where it issues: the same receivers (alive ones: the kernel masks the rest) and slice
            qs = [f"(s.mc_{x}_mask_closed{at} & alive) != (s.mc_{x}_mask_general{at} & alive)"]
            if mc.mode is MulticastMode.SLICED:
                qs += [f"s.mc_{x}_{q}_closed{at} != s.mc_{x}_{q}_general{at}"
                       for q in ("slice_index", "slice_count")]
            lines += [f"      if (s.mc_{x}_issue_closed{at} != s.mc_{x}_issue_general{at}) return false;",
                      f"      if (s.mc_{x}_issue_closed{at} && ({' || '.join(qs)})) return false;"]
            lines.append(f"      if (s.mc_{x}_issue_closed{at}) recv |= s.mc_{x}_mask_closed{at};")
        if exact:
            lines.append("      if (recv != (int)((RECV >> (8 * r)) & 0xFF)) return false;")
        else:
            lines.append("      (void)recv;")
        lines += ["    }", "  }"]
    lines += ["  return true;", "}"]
    return lines


def schedule_functions(k: Kernel) -> str:
    """The schedule's index logic as plain ``__host__ __device__`` C++ (host-compilable).

    ``Shape`` (its members: the tile order ``tile_m``, ``tile_n``, ``tile_alive``, the work
    split, and per multicast operand X ``mc_X_issue<FACTS>``, ``mc_X_mask<FACTS>``,
    ``mc_X_slice_index<FACTS>``, ``mc_X_slice_count<FACTS>`` over (rank, i_rt, cidx), each
    printed from the plan's sympy expressions), ``make_shape`` and ``facts_hold``.
    """
    out = [SCHEDULE_BEGIN, f"namespace {k.cname} {{"]
    inv = invariants(k)
    out += shape_struct(k, inv)
    out += make_shape(k, inv)
    out += facts_hold(k)
    if reduced(k) or spread(k):  # (the spread sum is the reduce kernel's work per float4)
        out += reduce_schedule(k)
    if spread(k):
        out += spread_schedule(k)
    out += ["}", SCHEDULE_END]
    return "\n".join(out)


def multicast_functions(x: str, mc: MulticastPlan, inv: Invariants | None = None) -> list[str]:
    """Operand ``x``'s multicast functions: the general form from ``same`` (per rank, at run
    time), the closed form, the guard between them, and per quantity the variant's choice:
    ``FACTS`` (the closed variant: :func:`facts_hold` held at launch) takes the closed form;
    the general variant the general form, or where the plan guards its closed form, the closed
    form where the guard holds (the guarded branch)."""
    v = LOOP_VARS
    sliced = mc.mode is MulticastMode.SLICED
    out = [f"// operand {x.upper()}: {mc.mode.value} multicast"]
    use_closed = mc.closed_form
    guarded = mc.closed_form and mc.guard != sympy.true
    out.append(fn("bool", f"mc_{x}_same", PAIR_VARS, mc.same, inv=inv))
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
        out.append(fn("bool", f"mc_{x}_issue_closed", v, mc.issue, inv=inv))
        out.append(fn("int", f"mc_{x}_mask_closed", v, mc.mask, inv=inv))
        if sliced:
            if mc.slice_index is None or mc.slice_count is None:
                raise UnsupportedError(
                    f"operand {x.upper()}: a sliced closed form needs slice_index and slice_count"
                )
            out.append(fn("int", f"mc_{x}_slice_index_closed", v, mc.slice_index, inv=inv))
            out.append(fn("int", f"mc_{x}_slice_count_closed", v, mc.slice_count, inv=inv))
    if guarded:
        out.append(fn("bool", f"mc_{x}_guard", v, mc.guard, inv=inv))
    kinds = ["issue", "mask"] + (["slice_index", "slice_count"] if sliced else [])
    for q in kinds:
        ret = "bool" if q == "issue" else "int"
        args = "(rank, i_rt, cidx)"
        general = f"mc_{x}_{q}_general{args}"
        if guarded:
            general = f"mc_{x}_guard{args} ? mc_{x}_{q}_closed{args} : {general}"
        if use_closed:
            body = (f"if constexpr (FACTS) return mc_{x}_{q}_closed{args}; "
                    f"else return {general};")
        else:
            body = f"return {general};"
        out.append(f"template <bool FACTS> TILEC_HD {ret} mc_{x}_{q}(int rank, int i_rt, "
                   f"int cidx) {{ {body} }}")
    return out
