"""Benchmark tilec's SIMT fp32 kernels against cuBLAS SGEMM (torch.matmul, TF32 off) on one GPU.

Two steps, so that the sympy work stays on the CPU and the GPU machine only compiles and runs:

    python bench/bench_simt.py gen --dir gen/ [--kernels warp vec] [--sizes 1024 2048 ...]
                                    [--ragged 40] [--variant NAME:K=V,K=V ...]
    python bench/bench_simt.py run --dir gen/ --out result.json [--rounds 5] [--explore]

``gen`` writes one ``.cu`` per kernel configuration with ``tilec gen``'s printer (the kernels take
M, N, K and the leading dimensions at run time: every shape a configuration serves runs the
same library, the variant its facts select, recorded per shape) and a manifest of (kernel,
shape) jobs; ``--generic`` adds a list of non-square and ragged shapes (``GENERIC_SHAPES``).
``run`` builds each library once with nvcc (``-gencode=arch=compute_90a,code=sm_90a -O3``),
checks every job against a float64 reference on fresh random inputs with the output poisoned
with NaN (every element must be written; ``max|C - ref| / max|ref|`` under 1e-5), twice, the
two results bitwise equal (unless the plan adds partials atomically), ragged shapes included,
then times them.

Timing method (seed 003): GPU clocks, power and throttle reasons read with nvidia-smi before and
after every size (never changed); per kernel and size, ``1000*exp((1024 - size)/3100)`` replays
(the seed's count), each after an L2 flush (a buffer of twice the L2 zeroed), each timed with CUDA
events around the kernel alone, and the mean of the last half of the replays taken (the clocks
have settled); cuBLAS and the tilec kernels side by side, in alternating order, for ``--rounds``
rounds (>= 5); reported: the median over rounds and the spread (max - min) / median.
``--explore`` divides the replays by ``--explore-div`` (8) and takes ``--explore-rounds`` (2)
rounds (a sweep, not a result).

The shape-generic kernels against cuBLAS (one library each, every shape; on the GPU machine
``bench/simt_device.sh``)::

    python bench/bench_simt.py gen --dir gen_generic --kernels generic_large generic_large_dp \
        --generic --ragged 20 --ragged-kernels generic_large generic_large_dp warp_small16
    bench/simt_device.sh gen_generic "" simt_generic_<card>_<date>

Issue 30's SIMT target (``CONFIG=auto``: the cost model's row and split per shape; ragged
launches through the launcher's padding, the copies timed with the kernel; every job also
checked with the padding forced; ``--rows-out`` writes the issue's rows)::

    python bench/bench_simt.py gen --dir simt_gen10 --kernels warp --sizes --dispatch \
        --ragged 12 --ragged-kernels warp
    python bench/bench_simt.py run --dir simt_gen10 --out bench/results/simt_dispatch_<card>_<date>.json \
        --rounds 5 --pad auto --rows-out bench/results/dispatch_simt_<card>_<date>.json

The cost model's exploration (``--explore-model``: at each shape the kernels the model weighs,
:data:`EXPLORE` and :func:`explore_kernels`; the timings it is fitted on)::

    python bench/bench_simt.py gen --dir simt_explore --kernels --sizes --dispatch --explore-model \
        --ragged 6 --ragged-kernels T_ft W_ft M3_ft LW_ft L16_ft L_s4
    python bench/bench_simt.py run --dir simt_explore --out simt_explore_<card>_<date>.json --pad auto \
        --explore --explore-div 4 --explore-rounds 3
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import random
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

KERNELS = {  # name -> (schedule file, parameter overrides)
    "naive": ("examples/coalescing_naive.py", {}),
    "coalesced": ("examples/coalescing_coalesced.py", {}),
    "vec": ("examples/simt_sgemm.py", {"KIND": "vec"}),
    "warp": ("examples/simt_warp_tiled.py", {}),  # the configuration picked by the problem
    "warp_large": ("examples/simt_warp_tiled.py", {"CONFIG": "large"}),
    "warp_small8": ("examples/simt_warp_tiled.py", {"CONFIG": "small8"}),
    "warp_small16": ("examples/simt_warp_tiled.py", {"CONFIG": "small16"}),
    # one library for every shape: the large row with its last-wave split (dp_ft: one CTA per
    # tile where the tiles fill whole waves), and without
    "generic_large": ("examples/simt_warp_tiled.py", {"CONFIG": "large", "DECOMP": "dp_ft"}),
    "generic_large_dp": ("examples/simt_warp_tiled.py", {"CONFIG": "large", "DECOMP": "dp"}),
}
NVCC = ["nvcc", "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-shared", "-Xcompiler", "-fPIC"]
TOL = 1e-5


# -- gen (CPU) ------------------------------------------------------------------------------------


def _config_key(job: dict[str, Any]) -> dict[str, Any]:
    """The job's schedule calls (without the sizes' header): the configuration its library is."""
    from tilec.runtime.loader import load_schedule

    params = {k: v for k, v in job["params"].items() if k != "PAD"}
    fusion = load_schedule(ROOT / job["schedule"], {**params, "M": job["M"], "N": job["N"],
                                                    "K": job["K"]}).fusion
    return {**job, "key": "\n".join(str(c) for c in fusion.schedule.calls),
            **({"pad": job["params"]["PAD"]} if "PAD" in job["params"] else {})}


def _generate(job: dict[str, Any]) -> dict[str, Any]:
    """The library of one configuration (lowered at the job's shape, its reference)."""
    from tilec.codegen.cuda.simt import SimtCudaPrinter
    from tilec.runtime.loader import load_schedule
    from tilec.transforms.simt.lower import lower_simt

    params = {k: v for k, v in job["params"].items() if k != "PAD"}
    fusion = load_schedule(ROOT / job["schedule"], {**params, "M": job["M"], "N": job["N"],
                                                    "K": job["K"]}).fusion
    plan = lower_simt(fusion, name=job["name"])
    pr = SimtCudaPrinter(plan)
    Path(job["file"]).write_text(pr.emit())
    from tilec.transforms.simt.cost import ctas_per_sm

    d = plan.decomposition
    return {"name": job["name"], "tile": [plan.BM, plan.BN], "block": plan.block,
            "model": {"BK": plan.staging.BK if plan.staging is not None else 1,
                      "min_blocks": plan.options.min_blocks,
                      "ctas": ctas_per_sm(plan.options.min_blocks, plan.threads),
                      "decomp": d.kind.value if d is not None and d.kind is not None else "dp",
                      "splits": d.splits if d is not None else 1,
                      "stages": plan.staging.stages if plan.staging is not None else 0,
                      "warp": _warp_tile(job, params)},
            "bitwise": d is None or d.fixup.value == "deterministic",
            "variants": {v.name: {"facts": list(v.facts), "notes": list(v.plan.notes)}
                         for v in pr.variants}}


def _warp_tile(job: dict[str, Any], params: dict[str, Any]) -> list[int] | None:
    """The warp tile ``[WM, WN]`` of a warp-tiled schedule's job (its row's, or the override);
    None for other schedules (the plan does not record it)."""
    if not job["schedule"].endswith("simt_warp_tiled.py"):
        return None
    import importlib.util

    spec = importlib.util.spec_from_file_location("simt_warp_tiled", ROOT / job["schedule"])
    ex = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(ex)  # type: ignore[union-attr]
    name = params.get("CONFIG", "auto")
    row = dict(zip(ex.KEYS, ex.CONFIGS[ex.config(job["M"], job["N"], job["K"]) if name == "auto" else name],
                   strict=True))
    return [params.get("WM") or row["WM"], params.get("WN") or row["WN"]]


GENERIC_SHAPES = [  # non-square, ragged and deep-K shapes for the shape-generic kernels
    "4096x1024x4096", "1024x4096x4096", "8192x2048x1024", "2048x8192x1024", "1000x1000x1000",
    "4097x4096x4096", "4096x4095x4096", "4096x4096x4095", "3000x5000x700", "128x4096x7168",
    "7168x128x4096", "512x512x16384", "16384x512x512", "5120x3072x2048"]


DISPATCH_SHAPES = {  # issue 30's SIMT target: non-square shapes (LLM layers, MoE, ragged, deep K)
    "llama8b_qkv_t4096": "4096x6144x4096", "llama8b_o_t2048": "2048x4096x4096",
    "llama8b_up_t2048": "2048x14336x4096", "llama8b_down_t2048": "2048x4096x14336",
    "llama8b_vocab_t1024": "1024x32000x4096", "qwen7b_qkv_t3000": "3000x4608x3584",
    "moe_up_t512": "512x14336x4096", "moe_down_t256": "256x4096x14336",
    "gpt2_vocab_t2048": "2048x50257x768", "issue30_3000x5000x2000": "3000x5000x2000",
    "issue30_7000x3000x4096": "7000x3000x4096", "proj_2048x8192x1024": "2048x8192x1024",
    "ragged_n_4096x4095x4096": "4096x4095x4096", "ragged_k_4096x4096x4095": "4096x4096x4095",
    "ragged_m_4097x4096x4096": "4097x4096x4096", "ragged_3001x5001x2001": "3001x5001x2001",
    "deep_k_512x512x16384": "512x512x16384"}


# the SIMT cost model's exploration (``gen --explore-model``): the rows and work splits it weighs,
# as parameters of the warp-tiled schedule; ``PAD`` (not a schedule parameter) is the launcher's
# padding mode for that kernel's launches (``run --pad`` for the others)
LARGE = {"CONFIG": "large"}
TALL = {"CONFIG": "large", "BM": 256, "BN": 128, "BK": 16, "WM": 64, "WN": 64, "TM": 8, "TN": 16,
        "MIN_BLOCKS": 1, "STAGES": 3}  # cuBLAS's 256x128 tile, 8 warps of 64 x 64, one CTA per SM
EXPLORE = {
    "L_ft": {**LARGE, "DECOMP": "dp_ft"},  # today's pick nearly everywhere
    "L_dp": {**LARGE, "DECOMP": "dp"},
    "L_1sk": {**LARGE, "DECOMP": "dp_1sk", "FIXUP": "atomic"},  # the partial wave in Stream-K
    "L16_ft": {**LARGE, "BK": 16, "STAGES": 4, "DECOMP": "dp_ft"},  # stages: a shorter fill
    "LW_ft": {**LARGE, "WM": 64, "WN": 32, "DECOMP": "dp_ft"},  # the warp tile 64 x 32
    "T_ft": {**TALL, "DECOMP": "dp_ft"},
    "W_ft": {**TALL, "BM": 128, "BN": 256, "DECOMP": "dp_ft"},  # 128x256, 8 warps of 64 x 64
    "M3_ft": {**LARGE, "BM": 128, "BN": 64, "MIN_BLOCKS": 3, "DECOMP": "dp_ft"},  # 4 warps, 3/SM
    "S16": {"CONFIG": "small16", "DECOMP": "dp"},
    "L_sk": {**LARGE, "DECOMP": "streamk", "FIXUP": "atomic"},  # fewer than two waves of tiles
    "L_s4": {**LARGE, "DECOMP": "splitk", "SPLITS": 4, "FIXUP": "atomic"},  # under a wave
    "L_s16": {**LARGE, "DECOMP": "splitk", "SPLITS": 16, "FIXUP": "atomic"},
    "L_np": {**LARGE, "DECOMP": "dp_ft", "PAD": "never"},  # ragged: the variant met, no copies
}


def explore_kernels(M: int, N: int, K: int, slots: int = 264) -> list[str]:
    """The kernels ``--explore-model`` times at ``M x N x K``: every row with its last-wave
    split and the large row one CTA per tile and with a Stream-K last wave; Stream-K where the
    large row's tiles fill fewer than two waves of ``slots``, split-K (4 parts, and 16 where
    under 32 tiles) where under one; the large row without padding where a size or leading
    dimension misses the tiles variant's multiples.

    >>> explore_kernels(512, 512, 16384)[-3:], "L_np" in explore_kernels(4096, 4095, 4096)
    (['L_sk', 'L_s4', 'L_s16'], True)
    """
    tiles = -(-M // 128) * -(-N // 128)
    out = ["L_ft", "L_dp", "L_1sk", "L16_ft", "LW_ft", "T_ft", "W_ft", "M3_ft", "S16"]
    out += ["L_sk"] if tiles < 2 * slots else []
    out += ["L_s4"] if tiles < slots else []
    out += ["L_s16"] if tiles < 32 else []
    out += ["L_np"] if M % 128 or N % 128 or K % 32 else []
    return out


def ragged_shapes(n: int, seed: int = 16) -> list[tuple[int, int, int]]:
    """Corners and random M, N, K in 1..300 (none a multiple of 4 at the corners: every vector
    access falls back somewhere)."""
    rng = random.Random(seed)
    out = [(1, 1, 1), (300, 300, 300), (1, 299, 7), (299, 1, 299), (129, 131, 257),
           (127, 65, 9), (3, 5, 2), (255, 257, 17), (65, 63, 33), (2, 130, 129)]
    while len(out) < n:
        out.append((rng.randint(1, 300), rng.randint(1, 300), rng.randint(1, 300)))
    return out[:n]


def shape(text: str) -> tuple[int, int, int]:
    """``"4224x4096x4096"`` -> ``(4224, 4096, 4096)``."""
    try:
        M, N, K = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise SystemExit(f"--shapes: expected MxNxK (three positive integers), got {text!r}") from None
    if min(M, N, K) < 1:
        raise SystemExit(f"--shapes: sizes must be positive, got {text!r}")
    return M, N, K


def cmd_gen(args: argparse.Namespace) -> int:
    kernels = dict(KERNELS)
    for spec in args.variant:
        name, _, kv = spec.partition(":")
        base, params = kernels["warp"]
        over = {k: int(v) if v.lstrip("-").isdigit() else v
                for k, v in (p.split("=") for p in kv.split(",") if p)}
        kernels[name] = (base, {**params, **over})
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    shapes = [(s, s, s) for s in args.sizes] + [shape(x) for x in args.shapes]
    shapes += [shape(x) for x in GENERIC_SHAPES] if args.generic else []
    shapes += [shape(x) for x in DISPATCH_SHAPES.values()] if args.dispatch else []
    for name, params in EXPLORE.items():
        kernels.setdefault(name, ("examples/simt_warp_tiled.py", params))
    jobs = []
    for M, N, K in shapes if args.explore_model else []:  # the model's candidates per shape
        for k in explore_kernels(M, N, K):
            path, params = kernels[k]
            jobs.append(dict(kernel=k, schedule=path, params=params, M=M, N=N, K=K, timed=True))
    for k in args.kernels + [v.partition(":")[0] for v in args.variant]:
        path, params = kernels[k]
        for M, N, K in shapes:
            jobs.append(dict(kernel=k, schedule=path, params=params, M=M, N=N, K=K,
                             timed=not args.untimed))
    for k in args.ragged_kernels:
        path, params = kernels[k]
        for M, N, K in ragged_shapes(args.ragged):
            jobs.append(dict(kernel=k, schedule=path, params=params, M=M, N=N, K=K, timed=False))
    t0 = time.time()
    with ProcessPoolExecutor(args.jobs) as pool:
        jobs = list(pool.map(_config_key, jobs))
    # one library per (kernel, configuration): named after the kernel, numbered when the
    # kernel's schedule picks several configurations (CONFIG=auto)
    libs: dict[tuple[str, str], dict[str, Any]] = {}
    for j in jobs:
        key = (j["kernel"], j.pop("key"))
        if key not in libs:
            n = sum(1 for kk in libs if kk[0] == j["kernel"])
            name = j["kernel"] if n == 0 else f"{j['kernel']}_{n}"
            libs[key] = {**j, "name": name, "file": str(out / f"{name}.cu")}
        j["name"] = libs[key]["name"]
        j["file"] = f"{j['name']}.cu"
    old = json.loads((out / "manifest.json").read_text()) if args.append else []
    taken = {j["name"] for j in old}
    clash = taken & {v["name"] for v in libs.values()}
    if clash:
        raise SystemExit(f"--append: libraries {sorted(clash)} exist in {out}; use another kernel name")
    with ProcessPoolExecutor(args.jobs) as pool:
        built = {b["name"]: b for b in pool.map(_generate, libs.values())}
    for j in jobs:
        b = built[j["name"]]
        j.update(tile=b["tile"], block=b["block"], bitwise=b["bitwise"], variants=b["variants"],
                 model=b["model"])
    (out / "manifest.json").write_text(json.dumps(old + jobs, indent=1))
    print(f"generated {len(built)} libraries for {len(jobs)} (kernel, shape) jobs in "
          f"{time.time() - t0:.1f} s into {out}")
    return 0


# -- run (GPU) ------------------------------------------------------------------------------------


def build(cu: Path) -> Path | str:
    so = cu.with_suffix(".so")
    r = subprocess.run([*NVCC, str(cu), "-o", str(so)], capture_output=True, text=True)
    return so if r.returncode == 0 else r.stderr[-2000:]


def clocks() -> dict[str, str]:
    q = ("name,clocks.sm,clocks.mem,clocks.max.sm,clocks.max.mem,power.draw,temperature.gpu,"
         "clocks_throttle_reasons.active")
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip().splitlines()
    except (OSError, subprocess.TimeoutExpired) as e:
        return {"error": str(e)}
    return dict(zip(q.split(","), (v.strip() for v in out[0].split(",")), strict=False)) if out else {}


def replays(size: int) -> int:
    """The seed's replay count: 1000*exp((1024 - size)/3100) (371 at 4096)."""
    return int(1000 * math.exp((1024 - size) / 3100))


def time_kernel(torch: Any, fn: Any, flush: Any, reps: int) -> float:
    """Mean ms of the last half of ``reps`` replays, each after an L2 flush, events around ``fn``."""
    events = []
    for _ in range(reps):
        flush.zero_()
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        events.append((s, e))
    torch.cuda.synchronize()
    ms = [s.elapsed_time(e) for s, e in events]
    half = ms[len(ms) // 2:]
    return sum(half) / len(half)


def cublas_kernel(torch: Any, fn: Any) -> list[str]:
    """The names of the kernels torch.matmul launches (cuBLAS's choice for this size)."""
    from torch.profiler import ProfilerActivity, profile

    try:
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            fn()
            torch.cuda.synchronize()
        return sorted({e.key for e in prof.key_averages() if e.device_type.name == "CUDA"})
    except Exception as e:  # the profiler is a nicety: never lose a run to it
        return [f"profiler failed: {e}"]


def launcher(so: Path | str, name: str) -> tuple[Any, Any]:
    """``tilec_launch_<name>`` and ``tilec_variant_<name>`` of a built library (ctypes)."""
    lib = ctypes.CDLL(str(so))
    fn = getattr(lib, f"tilec_launch_{name}")
    fn.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 6 + [ctypes.c_void_p]
    fn.restype = ctypes.c_int
    var = getattr(lib, f"tilec_variant_{name}")
    var.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 6
    var.restype = ctypes.c_int
    return fn, var


def cmd_launch(args: argparse.Namespace) -> int:
    """Launch the named kernels once each (already built by ``run``): the program ncu profiles.
    A name is ``LIBRARY_M_N_K`` (or ``cublas_M_N_K`` for torch.matmul)."""
    import torch

    d = Path(args.dir)
    dev = torch.device("cuda")
    for name in args.names:
        lib, *mnk = name.rsplit("_", 3)
        M, N, K = (int(x) for x in mnk)
        if lib == "cublas":
            A, B = torch.randn(M, K, device=dev), torch.randn(K, N, device=dev)
            torch.backends.cuda.matmul.allow_tf32 = False
            torch.matmul(A, B)
            torch.cuda.synchronize()
            continue
        fn, _ = launcher(d / f"{lib}.so", lib)
        A, B = torch.randn(M, K, device=dev), torch.randn(K, N, device=dev)
        C = torch.empty(M, N, device=dev)
        rc = fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, N, K, K, N, N,
                torch.cuda.current_stream().cuda_stream)
        torch.cuda.synchronize()
        print(name, "rc", rc)
    return 0


NCU = {  # tilec's predicted counter -> Nsight Compute's metric
    "shared_ld_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum",
    "shared_st_wavefronts": "l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum",
    "shared_ld_requests": "smsp__inst_executed_op_shared_ld.sum",
    "shared_st_requests": "smsp__inst_executed_op_shared_st.sum",
    "global_ld_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
    "global_ld_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
    "global_st_sectors": "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
    "global_st_requests": "l1tex__t_requests_pipe_lsu_mem_global_op_st.sum",
}


def read_ncu_csv(path: Path) -> dict[str, dict[str, str]]:
    """``kernel namespace -> {metric: value}`` from ``ncu --csv`` output (tilec kernels only)."""
    import csv
    import io

    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    out: dict[str, dict[str, str]] = {}
    for row in csv.DictReader(io.StringIO("\n".join(lines[start:]))):
        name = row["Kernel Name"]
        key = name.split("::")[0] if "::kernel(" in name else name[:80]
        out.setdefault(key, {})[row["Metric Name"]] = row["Metric Value"]
    return out


def cmd_counters(args: argparse.Namespace) -> int:
    """Nsight Compute's memory counters of tilec kernels against the analysis' predictions
    (recomputed from each kernel's schedule and parameters, with ``--pin`` added)."""
    from tilec.runtime.loader import load_schedule
    from tilec.transforms.simt import banks, coalescing
    from tilec.transforms.simt.lower import lower_simt

    pin = {k: int(v) if v.lstrip("-").isdigit() else v  # for the warp-tiled schedule's defaults
           for k, v in (p.split("=") for p in args.pin)}
    rows = []
    for csv_path, man_path in zip(args.csv, args.manifest, strict=True):
        measured = read_ncu_csv(Path(csv_path))
        for j in json.loads(Path(man_path).read_text()):
            if j["name"] not in measured:
                continue
            pinned = pin if "warp_tiled" in j["schedule"] else {}
            params = {**pinned, **j["params"], "M": j["M"], "N": j["N"], "K": j["K"]}
            plan = lower_simt(load_schedule(ROOT / j["schedule"], params).fusion, name=j["name"])
            pred = {**banks.predicted_counters(plan), **coalescing.predicted_counters(plan)}
            m = measured[j["name"]]
            rows.append({"kernel": j["name"], "schedule": j["schedule"], "params": params,
                         "counters": {k: {"predicted": v, "ncu_metric": NCU[k],
                                          "measured": int(m[NCU[k]].replace(",", ""))}
                                      for k, v in pred.items() if k in NCU}})
    perf = {}
    for spec in args.perf:  # stall reasons, issue slots, shared wavefronts (simt_device.sh)
        label, _, path = spec.rpartition("=")  # LABEL=PATH: kernels named LABEL/kernel
        for name, metrics in read_ncu_csv(Path(path)).items():
            if "distribution" not in name:
                perf.setdefault(f"{label}/{name}" if label else name, {}).update(metrics)
    Path(args.out).write_text(json.dumps({"date": args.date, "device": "NVIDIA H200",
                                          "ncu": "--clock-control none", "kernels": rows,
                                          "profiles": perf}, indent=1))
    for r in rows:
        for k, c in r["counters"].items():
            print(f"{r['kernel']:28s} {k:22s} {c['predicted']:>12} {c['measured']:>12}")
    return 0


def cmd_sources(args: argparse.Namespace) -> int:
    """Per-PC SASS and per-PC metrics (the SourceCounters section's stall samples, instructions
    executed) of every kernel in an Nsight Compute report, as JSON, through the Python report
    interface that ships with ``ncu`` (``extras/python/ncu_report.py``; on the GPU machine)."""
    import glob
    import shutil

    ncu = shutil.which("ncu")
    roots = [str(Path(ncu).resolve().parent)] if ncu else []
    found = [p for r in [*roots, "/opt/nvidia/nsight-compute", "/usr/local/cuda"]
             for p in glob.glob(f"{r}/**/extras/python", recursive=True)]
    sys.path[:0] = found[:1]
    import ncu_report  # type: ignore[import-not-found]

    ctx = ncu_report.load_report(args.report)
    out = []
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            act = rng.action_by_idx(a)
            metrics: dict[str, dict[int, float]] = {}
            for name in act.metric_names():
                if not any(s in name for s in args.match):
                    continue
                m = act.metric_by_name(name)
                if not m.has_correlation_ids() or m.num_instances() < 2:
                    continue
                ids = m.correlation_ids()
                metrics[name] = {int(ids.as_uint64(i)): m.as_double(i)
                                 for i in range(m.num_instances()) if m.as_double(i)}
            pcs = sorted({pc for m in metrics.values() for pc in m})
            sass = {pc: str(act.sass_by_pc(pc)) for pc in pcs}
            out.append({"kernel": act.name(), "sass": sass, "metrics": metrics})
            print(act.name()[:80], len(sass), "PCs,", len(metrics), "per-PC metrics", flush=True)
    Path(args.out).write_text(json.dumps(out))
    return 0


def check(torch: Any, fn: Any, A: Any, B: Any, C: Any) -> float:
    """Relative error of one run on NaN-poisoned C against float64 (inf when a NaN is left)."""
    ref = A.double() @ B.double()
    C.fill_(float("nan"))
    fn()
    torch.cuda.synchronize()
    err = (C.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1e-30)
    return err if math.isfinite(err) else math.inf


def pad_launch(j: dict[str, Any], fn: Any, A: Any, B: Any, C: Any, mode: str, ws: Any,
               stream: int, device_name: str) -> tuple[Any, Any]:
    """``(launch, padding)``: a launch of job ``j``'s library on ``A @ B -> C`` through the
    launcher's padding (``mode`` as ``kernel(..., pad=mode)``), the cost model fed from the
    manifest (the tile, K tile, threads, CTAs per SM, work split, the variants' facts)."""
    from tilec.codegen.cuda.simt.launch import run_padded
    from tilec.transforms.simt import cost
    from tilec.transforms.simt.padding import padding

    m = j["model"]
    threads = j["block"][0] * j["block"][1] * j["block"][2]
    row = cost.row_of(j["tile"][0], j["tile"][1], m["BK"], threads, m["min_blocks"], m.get("warp"),
                      m.get("stages", 0))
    decomp = m["decomp"] if m["decomp"] in cost.DECOMPS else "streamk"  # sk2_dp, skpp
    card = cost.card_of(device_name)

    def est(v: str, M: int, N: int, K: int) -> float:
        return cost.estimate(row, decomp, M, N, K, card, v, splits=m["splits"])

    M, K = A.shape
    N = B.shape[1]
    p = padding(M, N, K, A.stride(0), B.stride(0), C.stride(0),
                (A.data_ptr(), B.data_ptr(), C.data_ptr()),
                [(n, v["facts"]) for n, v in j["variants"].items()], est,
                card.dram * cost.DEFAULT.dram_efficiency, mode)

    def raw(a: Any, b: Any, c: Any) -> int:
        rc = fn(a.data_ptr(), b.data_ptr(), c.data_ptr(), a.shape[0], b.shape[1], a.shape[1],
                a.stride(0), b.stride(0), c.stride(0), stream)
        if rc != 0:
            raise RuntimeError(f"{j['name']} {tuple(a.shape)} @ {tuple(b.shape)}: launch failed: {rc}")
        return 0

    def padded() -> int:
        run_padded(A, B, C, p, raw, ws)
        return 0

    return (padded if p.padded else lambda: raw(A, B, C)), p


def cmd_run(args: argparse.Namespace) -> int:
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    d = Path(args.dir)
    manifest = json.loads((d / "manifest.json").read_text())
    t0 = time.time()
    files = sorted({j["file"] for j in manifest})
    with ThreadPoolExecutor(os.cpu_count() or 8) as pool:
        built = dict(zip(files, pool.map(build, [d / f for f in files]), strict=True))
    sos = [built[j["file"]] for j in manifest]
    print(f"built {len(files)} libraries in {time.time() - t0:.1f} s", flush=True)
    dev = torch.device("cuda")
    l2 = torch.cuda.get_device_properties(dev).L2_cache_size
    flush = torch.empty(2 * l2 // 4, dtype=torch.float32, device=dev)
    stream = torch.cuda.current_stream().cuda_stream
    result: dict[str, Any] = {
        "device": torch.cuda.get_device_name(dev), "torch": torch.__version__,
        "cuda": torch.version.cuda, "allow_tf32": torch.backends.cuda.matmul.allow_tf32,
        "l2_bytes": l2, "date": time.strftime("%Y-%m-%d"), "script": "bench/bench_simt.py",
        "method": (__doc__ or "").split("Timing method")[1].strip(),
        "rounds": args.rounds, "explore": args.explore, "checks": [], "timings": [], "clocks": []}
    fns: dict[str, Any] = {}
    ok = True
    from tilec.codegen.cuda.simt.launch import Workspace

    ws = Workspace()
    device_name = torch.cuda.get_device_name(dev)
    g = torch.Generator(device=dev).manual_seed(2026)
    for j, so in zip(manifest, sos, strict=True):
        M, N, K = j["M"], j["N"], j["K"]
        if isinstance(so, str):
            result["checks"].append({**j, "correct": False, "build_error": so})
            print(f"{j['name']}: build failed\n{so}", flush=True)
            ok = False
            continue
        fn, var = launcher(so, j["name"])
        A = torch.randn(M, K, device=dev, generator=g)
        B = torch.randn(K, N, device=dev, generator=g)
        C = torch.empty(M, N, device=dev)
        variant = list(j["variants"])[var(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, N, K, K, N, N)]

        def launch(fn=fn, A=A, B=B, C=C, M=M, N=N, K=K) -> int:  # type: ignore[no-untyped-def]
            rc = fn(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, N, K, K, N, N, stream)
            if rc != 0:
                raise RuntimeError(f"launch failed: {rc}")
            return rc

        pad_note, ran = "", variant
        mode = j.get("pad", args.pad)  # the job's own padding mode (--explore-model's L_np)
        if mode != "never":
            launch, pad = pad_launch(j, fn, A, B, C, mode, ws, stream, device_name)
            variant, ran = pad.variant, pad.variant + (" (padded)" if pad.padded else "")
            pad_note = pad.why
        err = check(torch, launch, A, B, C)
        first = C.clone()
        err2 = check(torch, launch, A, B, C)  # a second run: a race shows as a moving result
        # bitwise repeatable unless partials are added atomically (in arrival order)
        same = bool(torch.equal(first, C))
        good = err < TOL and err2 < TOL and (same or not j.get("bitwise", True))
        err_padded = err_ragged = None
        if args.pad != "never":  # the padded path forced, whatever the model says
            forced, _ = pad_launch(j, fn, A, B, C, "tiles", ws, stream, device_name)
            err_padded = check(torch, forced, A, B, C)
            good &= err_padded < TOL
            if "ragged_n" in j["variants"]:  # B to rows of 4, C in place (where M % BM == 0)
                forced, _ = pad_launch(j, fn, A, B, C, "ragged_n", ws, stream, device_name)
                err_ragged = check(torch, forced, A, B, C)
                good &= err_ragged < TOL
        ok &= good
        result["checks"].append({"name": j["name"], "kernel": j["kernel"], "size": [M, N, K],
                                 "variant": ran, "rel_err": err, "rel_err_again": err2,
                                 "bitwise_repeat": same, "correct": good,
                                 "padding": pad_note, "rel_err_padded_tiles": err_padded,
                                 "rel_err_padded_ragged_n": err_ragged,
                                 "facts": j["variants"][variant]["facts"],
                                 "notes": j["variants"][variant]["notes"], "tile": j["tile"],
                                 "block": j["block"], "model": j["model"], "params": j["params"],
                                 "pad_mode": mode})
        if not good:
            print(f"{j['name']} {M}x{N}x{K} ({ran}): WRONG rel_err {err:.3e} / {err2:.3e}, "
                  f"padded {err_padded}", flush=True)
        if j["timed"]:
            fns[f"{j['kernel']}@{M}x{N}x{K}"] = (j, fn, ran)
    print(f"checked {len(result['checks'])} kernels: {'all correct' if ok else 'ERRORS'}", flush=True)
    save(args.out, result)
    if args.check_only:
        return 0 if ok else 1

    shapes = sorted({(j["M"], j["N"], j["K"]) for j, _, _ in fns.values()})
    rounds = args.explore_rounds if args.explore else args.rounds
    for M, N, K in shapes:
        s = M if M == N == K else f"{M}x{N}x{K}"  # the label of rows and clocks
        A = torch.randn(M, K, device=dev, generator=g)
        B = torch.randn(K, N, device=dev, generator=g)
        C = torch.empty(M, N, device=dev)
        peers: dict[str, Any] = {"cublas": lambda A=A, B=B, C=C: torch.matmul(A, B, out=C)}
        variants = {}
        for j, fn, variant in fns.values():
            if (j["M"], j["N"], j["K"]) == (M, N, K):  # the same inputs for every kernel
                peers[j["kernel"]] = (lambda f=fn, A=A, B=B, C=C, M=M, N=N, K=K:
                                      f(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, N, K, K, N, N,
                                        stream))
                variants[j["kernel"]] = variant
                if j.get("pad", args.pad) != "never":  # the copies timed with the kernel
                    peers[j["kernel"]], pad = pad_launch(j, fn, A, B, C, j.get("pad", args.pad), ws,
                                                         stream, device_name)
                    variants[j["kernel"]] = pad.variant + (" (padded)" if pad.padded else "")
        reps = replays(round((M * N * K) ** (1 / 3))) // (args.explore_div if args.explore else 1)
        reps = max(reps, 8)
        result["clocks"].append({"size": s, "when": "before", **clocks()})
        for k, f in peers.items():  # warm-up: module load, cuBLAS heuristics
            if k != "cublas" and f() != 0:
                raise RuntimeError(f"{k} {s}: launch failed")
        torch.cuda.synchronize()
        result.setdefault("cublas_kernels", {})[s] = cublas_kernel(torch, peers["cublas"])
        per: dict[str, list[float]] = {k: [] for k in peers}
        order = list(peers)
        for r in range(rounds):
            for k in (order if r % 2 == 0 else order[::-1]):
                per[k].append(time_kernel(torch, peers[k], flush, reps))
        result["clocks"].append({"size": s, "when": "after", **clocks()})
        flops = 2.0 * M * N * K
        line = []
        for k, ms in per.items():
            med = sorted(ms)[len(ms) // 2]
            row = {"kernel": k, "size": s, "shape": [M, N, K], "reps": reps, "round_ms": ms, "median_ms": med,
                   "gflops": flops / med / 1e6, "spread": (max(ms) - min(ms)) / med,
                   "variant": variants.get(k, "")}
            result["timings"].append(row)
            line.append(f"{k} {row['gflops']:.0f}")
        print(f"{s}: " + ", ".join(line), flush=True)
        save(args.out, result)  # after every size: a run cut short keeps what it measured
    save(args.out, result)
    summary(result)
    if args.rows_out:
        save(args.rows_out, issue_rows(result))
    return 0 if ok else 1


def issue_rows(result: dict[str, Any]) -> dict[str, Any]:
    """Issue 30's rows from a run: per timed (kernel, shape), cuBLAS's median over the kernel's
    (``x_cublas``) and whether every check of that kernel at that shape passed."""
    names = {shape(v): k for k, v in DISPATCH_SHAPES.items()}
    cub = {tuple(t["shape"]): t["median_ms"] for t in result["timings"] if t["kernel"] == "cublas"}
    good: dict[tuple[str, tuple[int, ...]], bool] = {}
    for c in result["checks"]:
        key = (c["kernel"], tuple(c["size"]))
        good[key] = good.get(key, True) and bool(c["correct"])
    rows = []
    for t in result["timings"]:
        sh = tuple(t["shape"])
        if t["kernel"] == "cublas" or sh not in cub:
            continue
        M, N, K = sh
        rows.append({"name": names.get(sh, f"{M}x{N}x{K}"), "M": M, "N": N, "K": K, "path": "simt",
                     "x_cublas": cub[sh] / t["median_ms"],
                     "correct": good.get((t["kernel"], sh), False), "kernel": t["kernel"],
                     "variant": t.get("variant", "")})
    return {"device": result["device"], "date": result["date"], "rows": rows}


def cmd_check_launcher(args: argparse.Namespace) -> int:
    """One library per kernel through the Python launcher, at shapes that pick each variant:
    contiguous, padded leading dimensions (a column slice of a wider matrix), pointers 4 bytes
    past a 16-byte boundary (the general variant), M = 0, K = 0; each as it is and with the
    launcher's padding forced to the tiles and the aligned variant; every result against
    float64, C outside the view untouched."""
    import torch

    from tilec.codegen.cuda.simt.launch import build as build_simt
    from tilec.runtime.loader import load_schedule
    from tilec.transforms.simt.lower import lower_simt

    torch.backends.cuda.matmul.allow_tf32 = False
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(7)
    rows, ok = [], True
    for k in args.kernels:
        path, params = KERNELS[k]
        fusion = load_schedule(ROOT / path, {**params, "M": 1024, "N": 1024, "K": 1024}).fusion
        kern = build_simt(lower_simt(fusion, name=k))
        for M, N, K in [(1024, 1024, 1024), (1000, 1100, 780), (257, 131, 77), (1, 1, 1),
                        (4097, 300, 33), (0, 5, 7), (5, 7, 0)]:
            for how, mode in [(h, m) for h in ("contiguous", "padded", "offset")
                              for m in ("never", "tiles", "aligned")]:
                pad = 8 if how == "padded" else 0
                off = 1 if how == "offset" else 0
                A = torch.randn(M, K + pad + off, device=dev, generator=g)[:, off:off + K]
                B = torch.randn(K, N + pad + off, device=dev, generator=g)[:, off:off + N]
                Cb = torch.full((M, N + pad + off), float("nan"), device=dev)
                C = Cb[:, off:off + N]
                decided = kern.decide(A, B, C, pad=mode)  # the launcher's padding, forced
                variant = decided.variant + (" (padded)" if decided.padded else "")
                # the launcher's reading of the facts is the library's pick_variant
                same_pick = decided.padded or decided.variant == kern.variant(A, B, C)
                kern(A, B, C, pad=mode)
                torch.cuda.synchronize()
                ref = A.double() @ B.double()
                err = ((C.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1e-30)
                       if C.numel() else 0.0)
                untouched = bool(torch.isnan(Cb[:, :off]).all() and torch.isnan(Cb[:, off + N:]).all())
                good = math.isfinite(err) and err < TOL and untouched and same_pick
                ok &= good
                rows.append({"kernel": k, "shape": [M, N, K], "layout": how, "pad": mode,
                             "variant": variant, "rel_err": err, "outside_untouched": untouched,
                             "correct": good})
                print(f"{k} {M}x{N}x{K} {how:10s} pad={mode:7s} {variant:17s} {err:.2e} "
                      f"{'ok' if good else 'WRONG'}", flush=True)
    save(args.out, {"device": torch.cuda.get_device_name(dev), "checks": rows})
    return 0 if ok else 1


def save(out: str, result: dict[str, Any]) -> None:
    Path(out).parent.mkdir(parents=True, exist_ok=True)
    Path(out).write_text(json.dumps(result, indent=1))


def summary(result: dict[str, Any]) -> None:
    """Per size: each kernel's GFLOP/s and its ratio to cuBLAS (printed last)."""
    by: dict[int, dict[str, dict[str, Any]]] = {}
    for t in result["timings"]:
        by.setdefault(t["size"], {})[t["kernel"]] = t
    names = sorted({t["kernel"] for t in result["timings"]} - {"cublas"})
    print("size   cublas  " + "  ".join(f"{n:>14}" for n in names))
    for s, row in sorted(by.items(), key=lambda kv: kv[1]["cublas"].get("shape", [kv[0]] * 3)):
        cb = row["cublas"]["gflops"]
        cells = [f"{row[n]['gflops']:7.0f} {row[n]['gflops'] / cb:5.3f}x" if n in row else " " * 14
                 for n in names]
        print(f"{s!s:>5} {cb:7.0f}  " + "  ".join(cells))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--dir", required=True)
    g.add_argument("--kernels", nargs="*", default=["warp"])
    g.add_argument("--sizes", type=int, nargs="*", default=list(range(1024, 8193, 1024)))
    g.add_argument("--shapes", nargs="*", default=[], metavar="MxNxK",
                   help="timed shapes besides the square sizes")
    g.add_argument("--generic", action="store_true",
                   help="add GENERIC_SHAPES (non-square, ragged, deep K) to the timed shapes")
    g.add_argument("--dispatch", action="store_true",
                   help="add DISPATCH_SHAPES (issue 30's non-square SIMT set) to the timed shapes")
    g.add_argument("--ragged", type=int, default=40, help="ragged shapes per ragged kernel")
    g.add_argument("--ragged-kernels", nargs="*",
                   default=["warp_large", "warp_small8", "warp_small16"])
    g.add_argument("--variant", action="append", default=[], metavar="NAME:K=V,K=V",
                   help="a variant of the warp-tiled schedule with these parameters")
    g.add_argument("--explore-model", action="store_true",
                   help="time, at each shape, the kernels the SIMT cost model weighs (EXPLORE, "
                        "explore_kernels): rows, warp tiles, stages, work splits, padding")
    g.add_argument("--jobs", type=int, default=2)
    g.add_argument("--untimed", action="store_true", help="check only (kernels for ncu)")
    g.add_argument("--append", action="store_true", help="add to the directory's manifest")
    r = sub.add_parser("run")
    r.add_argument("--dir", required=True)
    r.add_argument("--out", required=True)
    r.add_argument("--rounds", type=int, default=5)
    r.add_argument("--explore", action="store_true",
                   help="a sweep: the replays divided by --explore-div, --explore-rounds rounds")
    r.add_argument("--explore-div", type=int, default=8)
    r.add_argument("--explore-rounds", type=int, default=2)
    r.add_argument("--check-only", action="store_true", help="build and check, time nothing")
    r.add_argument("--pad", default="never", choices=["never", "auto", "tiles", "aligned"],
                   help="launch through the launcher's padding (tilec.transforms.simt.padding."
                        "padding): the copies are timed with the kernel; with a mode other than "
                        "never every job is also checked with padding forced to the tiles variant")
    r.add_argument("--rows-out", default="", metavar="JSON",
                   help="also write issue 30's rows: {device, date, rows: [{name, M, N, K, path, "
                        "x_cublas, correct}]} (names from DISPATCH_SHAPES where they match)")
    cl = sub.add_parser("check-launcher", help="the Python launcher (tilec.codegen.cuda.simt."
                        "launch) on strided, offset and empty operands against float64")
    cl.add_argument("--out", required=True)
    cl.add_argument("--kernels", nargs="*", default=["generic_large", "warp_small16", "vec"])
    la = sub.add_parser("launch")
    la.add_argument("--dir", required=True)
    la.add_argument("names", nargs="+")
    c = sub.add_parser("counters")
    c.add_argument("--csv", nargs="*", default=[])
    c.add_argument("--manifest", nargs="*", default=[])
    c.add_argument("--pin", nargs="*", default=[], metavar="K=V")
    c.add_argument("--perf", nargs="*", default=[], metavar="[LABEL=]CSV",
                   help="ncu CSVs (stall profiles, shared wavefronts) to keep, kernels prefixed LABEL/")
    c.add_argument("--out", required=True)
    c.add_argument("--date", default=time.strftime("%Y-%m-%d"))
    so = sub.add_parser("sources")
    so.add_argument("report")
    so.add_argument("--out", required=True)
    so.add_argument("--match", nargs="*", default=["pcsamp", "inst_executed"])
    args = ap.parse_args()
    return {"gen": cmd_gen, "run": cmd_run, "launch": cmd_launch, "check-launcher": cmd_check_launcher,
            "counters": cmd_counters, "sources": cmd_sources}[args.cmd](args)


if __name__ == "__main__":
    raise SystemExit(main())
