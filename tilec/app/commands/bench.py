"""``tilec bench`` (GPU): the generated kernel timed against torch.matmul (cuBLAS) and a plain
Triton kernel of the same tile, at the given parameters or over every point of ``--sweep``."""

from __future__ import annotations

import argparse
import json
from typing import TYPE_CHECKING, Any

from tilec.app.commands import gen
from tilec.app.commands.common import (
    load_args,
    nonnegative_int,
    positive_int,
    require_gpu,
    write_output,
)
from tilec.errors import TilecError
from tilec.runtime.build import is_thread_level

if TYPE_CHECKING:
    from tilec.runtime.session import Session


def options(p: argparse.ArgumentParser) -> None:
    gen.options(p)
    p.add_argument("--sweep", action="append", default=[], metavar="NAME=V1,V2,...",
                   help="benchmark every combination of these parameter values (repeatable)")
    p.add_argument("--warmup", type=nonnegative_int, default=25,
                   help="warm-up time per kernel, ms")
    p.add_argument("--rep", type=positive_int, default=100, help="timed replays per kernel, ms")


def _sweep_points(args: argparse.Namespace) -> list[dict[str, Any]]:
    import itertools

    from tilec.runtime.loader import parse_params, parse_value

    axes = []
    for item in args.sweep:
        name, sep, values = item.partition("=")
        vals = [v for v in values.split(",") if v]
        if not sep or not name.isidentifier() or not vals:
            raise TilecError(f"--sweep must look like NAME=V1,V2,... but got {item!r}")
        for v in vals:  # each value as --param would read it (one at a time: a sweep)
            parse_params([f"{name}={v}"])
        axes.append([(name, parse_value(v)) for v in vals])
    return [dict(c) for c in itertools.product(*axes)] if axes else [{}]


def run(args: argparse.Namespace, session: Session) -> int:
    """``tilec bench``: a table (or JSON) of the times of every sweep point."""
    from tilec.runtime.progress import bar as progress_bar

    points = _sweep_points(args)
    loaded = load_args(args)  # the file and the fixed --param values are checked before the GPU
    torch = require_gpu("bench")
    if is_thread_level(loaded.fusion):
        raise TilecError(f"{loaded.path.name}: bench times tile-level schedules; the SIMT "
                         f"kernels are not benchmarked by tilec yet")
    base = list(args.param)
    results = []
    bar = progress_bar(points, "bench")
    for point in bar:
        bar.set_postfix_str(" ".join(f"{k}={v}" for k, v in point.items()))
        # the point's values replace a --param of the same name (a name given once)
        args.param = ([p for p in base if p.partition("=")[0] not in point]
                      + [f"{k}={v}" for k, v in point.items()])
        pl = load_args(args)
        plan = gen.kernel_plan(args, pl, session)
        res = _bench_plan(torch, plan, args, session)
        results.append({"params": pl.params, "point": point, "M": plan.M, "N": plan.N,
                        "K": plan.K, "target": args.target, **res})
    args.param = base
    data = {"device": torch.cuda.get_device_name(0), "target": args.target,
            "method": "time_ms median, L2 flushed before each replay, launches hidden",
            "results": results}
    if args.json:
        write_output(args, json.dumps(data, indent=1))
        return 0
    head = (f"{'M':>6} {'N':>6} {'K':>6}  {'tilec ms':>9} {'TFLOP/s':>8}  {'cuBLAS ms':>9} "
            f"{'TFLOP/s':>8}  {'plain ms':>9} {'TFLOP/s':>8}  {'vs cuBLAS':>9}  rel_err")
    out = [f"# {loaded.path.name} on {data['device']}, --target {args.target} ({data['method']})",
           head]
    for r in results:
        out.append(f"{r['M']:>6} {r['N']:>6} {r['K']:>6}  {r['tilec_ms']:>9.4f} "
                   f"{r['tilec_tflops']:>8.1f}  {r['cublas_ms']:>9.4f} {r['cublas_tflops']:>8.1f}  "
                   f"{r['plain_ms']:>9.4f} {r['plain_tflops']:>8.1f}  "
                   f"{r['cublas_ms'] / r['tilec_ms']:>8.2f}x  {r['rel_err']:.2e}"
                   + "".join(f"  {k}={v}" for k, v in r["point"].items()))
    write_output(args, "\n".join(out))
    return 0


def _bench_plan(torch: Any, plan: Any, args: argparse.Namespace, session: Session
                ) -> dict[str, Any]:
    from tilec.dtypes import torch_dtype
    from tilec.runtime.bench import plain_matmul, rel_err, tflops, time_ms

    plain_cfg = (plan.BM, plan.BN, plan.BK, 8, 3, 8 if plan.BM * plan.BN >= 128 * 256 else 4)
    if args.target == "triton":
        from tilec.runtime.bench import bench_plan

        return bench_plan(plan, plain_cfg=plain_cfg, warmup=args.warmup, rep=args.rep,
                          session=session)
    from tilec.codegen.cuda.launch import build

    dtype = torch_dtype(plan.dtype)
    g = torch.Generator(device="cuda").manual_seed(0)
    M, N, K = plan.M, plan.N, plan.K
    a = torch.randn((M, K), device="cuda", dtype=dtype, generator=g)
    b = torch.randn((N, K) if plan.b.transposed else (K, N), device="cuda", dtype=dtype,
                    generator=g)
    b_kn = (b.T if plan.b.transposed else b).contiguous()
    kernel = build(plan)
    out = torch.full((M, N), float("nan"), device="cuda", dtype=dtype)
    c = kernel(a, b, out)
    torch.cuda.synchronize()
    res: dict[str, Any] = {"rel_err": rel_err(c, a.float() @ b_kn.float()),
                           "nan": int(c.isnan().sum().item())}
    res["tilec_ms"] = time_ms(lambda: kernel(a, b, out), args.warmup, args.rep)
    res["cublas_ms"] = time_ms(lambda: torch.matmul(a, b_kn), args.warmup, args.rep)
    res["plain_ms"] = time_ms(lambda: plain_matmul(a, b_kn, plain_cfg), args.warmup, args.rep)
    for k in [k for k in res if k.endswith("_ms")]:
        res[k[:-3] + "_tflops"] = tflops(M, N, K, res[k])
    return res
