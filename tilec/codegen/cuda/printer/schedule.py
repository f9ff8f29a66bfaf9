"""The schedule's index logic as plain ``__host__ __device__`` C++ (host-compilable): the tile
order, the work split (:mod:`.work`) and the multicast forms, each printed from the plan's
sympy expressions; a host harness includes this section of the file to test it."""

from __future__ import annotations

import sympy

from tilec.codegen.cuda.expr import CudaExprPrinter, nonneg_symbols
from tilec.codegen.cuda.printer.shape import LOOP_VARS, PAIR_VARS, Kernel
from tilec.codegen.cuda.printer.work import work_functions
from tilec.errors import UnsupportedError
from tilec.proofs import Context
from tilec.transforms.plan import MulticastMode, MulticastPlan

SCHEDULE_BEGIN = "// ---- tilec schedule functions: begin"
SCHEDULE_END = "// ---- tilec schedule functions: end"


def fn(ret: str, name: str, params: tuple[str, ...], expr: sympy.Basic,
       ctx: Context | None = None) -> str:
    """``expr`` as a ``TILEC_HD`` function of ``int`` parameters, signs proven under ``ctx``."""
    args = ", ".join(f"int {v}" for v in params)
    body = CudaExprPrinter(ctx=ctx).doprint(nonneg_symbols(sympy.sympify(expr)))
    return f"TILEC_HD {ret} {name}({args}) {{ return {body}; }}"


def schedule_functions(k: Kernel) -> str:
    """The schedule's index logic as plain ``__host__ __device__`` C++ (host-compilable).

    Tile order (``tile_m``, ``tile_n``, ``tile_alive``) and, per multicast operand X,
    ``mc_X_issue``/``mc_X_mask``/``mc_X_slice_index``/``mc_X_slice_count`` over
    (rank, i_rt, cidx), each printed from the plan's sympy expressions.
    """
    o = k.plan.order
    t = o.index.name
    out = [SCHEDULE_BEGIN, f"namespace {k.cname} {{"]
    live = Context().bound(o.index, o.num_tiles)  # tile_alive asks t < NUM_TILES first
    out.append(fn("int", "tile_m", (t,), o.tile_m, live))
    out.append(fn("int", "tile_n", (t,), o.tile_n, live))
    out.append(
        f"TILEC_HD bool tile_alive(int {t}) {{ return {t} < NUM_TILES && "
        f"tile_m({t}) < TILES_M && tile_n({t}) < TILES_N; }}"
    )
    out += work_functions(k)
    for op in (k.plan.a, k.plan.b):
        if op.multicast is not None:
            out += multicast_functions(op.name.lower(), op.multicast)
    out += ["}", SCHEDULE_END]
    return "\n".join(out)


def multicast_functions(x: str, mc: MulticastPlan) -> list[str]:
    """Operand ``x``'s multicast functions: the general form from ``same``, the closed form, and the
    guard between them, each as the plan gives it."""
    v = LOOP_VARS
    sliced = mc.mode is MulticastMode.SLICED
    out = [f"// operand {x.upper()}: {mc.mode.value} multicast"]
    use_closed = mc.closed_form
    use_general = (not mc.closed_form) or mc.guard != sympy.true
    if use_general:
        out.append(fn("bool", f"mc_{x}_same", PAIR_VARS, mc.same))
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
        out.append(fn("bool", f"mc_{x}_issue_closed", v, mc.issue))
        out.append(fn("int", f"mc_{x}_mask_closed", v, mc.mask))
        if sliced:
            if mc.slice_index is None or mc.slice_count is None:
                raise UnsupportedError(
                    f"operand {x.upper()}: a sliced closed form needs slice_index and slice_count"
                )
            out.append(fn("int", f"mc_{x}_slice_index_closed", v, mc.slice_index))
            out.append(fn("int", f"mc_{x}_slice_count_closed", v, mc.slice_count))
    if use_closed and use_general:
        out.append(fn("bool", f"mc_{x}_guard", v, mc.guard))
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
