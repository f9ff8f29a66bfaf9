"""The built library (``tilec build``) against torch.matmul on a broad shape list, on the GPU.

    PYTHONPATH=. python bench/dispatch.py [--quick] [--rules FILE ...] [--out DIR]

1. Builds the library of ``--schedule`` (default examples/gemm_decomposition.py, bf16, B K x N)
   for the card it runs on (``tilec build --card auto``; rules files give per-card tables),
   buckets only unless ``--exact`` (then the shapes are exact entries): the dispatch is measured
   on shapes it was not told about. ``--target cuda``: the CUDA (wgmma / TMA) library; nvcc
   builds the shapes' kernels in ``--jobs`` threads before the timing (``build_kernels``), and
   the file is ``dispatch_library_cuda_<card>_<date>.json``.
2. Per shape (the 14 of shared/bench/suite.json, copied below, and 36 more: LLM layers from public
   model configs, decode M 1-64, MoE M 128-512, ragged sizes, deep K): correctness on fresh
   random inputs into a NaN-poisoned out (relative error against torch.matmul in fp32 and no NaN),
   then ``matmul`` and ``torch.matmul`` timed alternately for ``--rounds`` rounds (>= 5; each a
   ``tilec.runtime.bench.time_ms``: L2 flushed before each replay, launches hidden), medians;
   ``x_cublas`` = cuBLAS time / library time.
3. Host time per call (bench/host_overhead_library.py) and the compile count and time over a
   200-shape stream with repeated shapes (``stream_shapes``): a shape whose config and facts ran
   before must not compile again.
4. matmul replayed from a CUDA graph and called inside torch.compile (fullgraph, dynamic shapes).

Clocks (nvidia-smi) are read before and after. Writes ``dispatch_<card>_<date>.json``:
``{"device", "date", "rows": [{"name", "M", "N", "K", "path", "x_cublas", "correct", ...}],
"host": [...], "stream": {...}, "graphs": {...}, "clocks": {...}}`` into ``--out`` (default $OUT or
bench/results). ``--quick``: 12 shapes, 5 rounds of shorter timing, a 60-shape stream.
``--parts shapes`` / ``--parts host,stream,graphs``: a run split in two (each under the device's
10-minute limit; the file name then says which parts). ``--choices default|h100|h200`` (CPU,
no GPU): each shape's configuration in that table beside the one ``tilec gen`` resolves at the
shape with the same rules files, and how many agree.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

# shared/bench/suite.json (bf16, A M x K, B K x N, C M x N row-major)
SUITE: list[tuple[str, int, int, int]] = [
    ("sq1024", 1024, 1024, 1024), ("sq2048", 2048, 2048, 2048), ("sq4096", 4096, 4096, 4096),
    ("sq8192", 8192, 8192, 8192), ("seed001_awq", 128, 4096, 7168),
    ("decode_m16", 16, 4096, 4096), ("decode_m64", 64, 28672, 4096),
    ("wave_1664", 1664, 1664, 8192), ("wave_2304", 2304, 2304, 8192),
    ("wave_3328", 3328, 3328, 8192), ("wave_1408x1920", 1408, 1920, 16384),
    ("skinny_512_k64k", 512, 512, 65536), ("skinny_1024_k32k", 1024, 1024, 32768),
    ("ragged", 4095, 4097, 4100),
]

# N, K of public model layers: Llama-3-8B (hidden 4096, 8 KV heads of 128, MLP 14336),
# Llama-3-70B (8192, MLP 28672), Qwen2-7B (3584, 4 KV heads, MLP 18944), Mixtral-8x7B experts
# (4096 / 14336), DeepSeek-V3 routed experts (hidden 7168, expert MLP 2048)
LAYERS = {
    "l3_8b_qkv": (6144, 4096), "l3_8b_o": (4096, 4096), "l3_8b_gateup": (28672, 4096),
    "l3_8b_down": (4096, 14336), "l3_70b_qkv": (10240, 8192), "l3_70b_down": (8192, 28672),
    "qwen2_7b_qkv": (4608, 3584), "qwen2_7b_down": (3584, 18944),
    "mixtral_w1": (14336, 4096), "mixtral_w2": (4096, 14336),
    "dsv3_gateup": (4096, 7168), "dsv3_down": (7168, 2048),
}
EXTRA: list[tuple[str, int, int, int]] = [
    # prefill (batch x sequence tokens)
    ("l3_8b_qkv_m4096", 4096, *LAYERS["l3_8b_qkv"]),
    ("l3_8b_gateup_m2048", 2048, *LAYERS["l3_8b_gateup"]),
    ("l3_8b_down_m2048", 2048, *LAYERS["l3_8b_down"]),
    ("l3_70b_qkv_m2048", 2048, *LAYERS["l3_70b_qkv"]),
    ("l3_70b_down_m1024", 1024, *LAYERS["l3_70b_down"]),
    ("qwen2_7b_qkv_m3000", 3000, *LAYERS["qwen2_7b_qkv"]),
    ("qwen2_7b_down_m1500", 1500, *LAYERS["qwen2_7b_down"]),
    # decode, M 1-64
    ("l3_8b_qkv_m1", 1, *LAYERS["l3_8b_qkv"]), ("l3_8b_o_m2", 2, *LAYERS["l3_8b_o"]),
    ("l3_8b_gateup_m4", 4, *LAYERS["l3_8b_gateup"]),
    ("l3_8b_down_m8", 8, *LAYERS["l3_8b_down"]), ("l3_70b_qkv_m16", 16, *LAYERS["l3_70b_qkv"]),
    ("l3_70b_down_m32", 32, *LAYERS["l3_70b_down"]),
    ("qwen2_7b_qkv_m48", 48, *LAYERS["qwen2_7b_qkv"]),
    ("qwen2_7b_down_m64", 64, *LAYERS["qwen2_7b_down"]),
    ("dsv3_gateup_m24", 24, *LAYERS["dsv3_gateup"]),
    # MoE experts, M 128-512 tokens each
    ("mixtral_w1_m128", 128, *LAYERS["mixtral_w1"]),
    ("mixtral_w2_m256", 256, *LAYERS["mixtral_w2"]),
    ("mixtral_w1_m384", 384, *LAYERS["mixtral_w1"]),
    ("mixtral_w2_m512", 512, *LAYERS["mixtral_w2"]),
    ("dsv3_gateup_m200", 200, *LAYERS["dsv3_gateup"]),
    ("dsv3_down_m320", 320, *LAYERS["dsv3_down"]),
    ("dsv3_down_m512", 512, *LAYERS["dsv3_down"]),
    # ragged: nothing a multiple of a tile; rows not 16-byte multiples
    ("ragged_1000", 1000, 1000, 1000), ("ragged_333", 333, 4096, 4096),
    ("ragged_77x14336", 77, 14336, 4096), ("ragged_2047x6144", 2047, 6144, 4096),
    ("ragged_n4097", 1024, 4097, 4096), ("ragged_k4100", 2048, 2048, 4100),
    ("ragged_1531x2999x1999", 1531, 2999, 1999),
    # deep K
    ("deep_128_k64k", 128, 128, 65536), ("deep_64x4096_k32k", 64, 4096, 32768),
    ("deep_2048_k32k", 2048, 2048, 32768), ("deep_256x1024_k128k", 256, 1024, 131072),
    ("deep_4096x512_k16k", 4096, 512, 16384), ("deep_1000x1000_k50000", 1000, 1000, 50000),
]
QUICK = ("sq1024", "sq4096", "decode_m16", "skinny_512_k64k", "ragged", "wave_1664",
         "l3_8b_qkv_m1", "l3_8b_down_m8", "mixtral_w1_m384", "ragged_1000", "ragged_k4100",
         "deep_2048_k32k")


def shapes(quick: bool = False) -> list[tuple[str, int, int, int]]:
    """The suite's shapes and the extra ones (``--quick``: :data:`QUICK`)."""
    every = SUITE + EXTRA
    return [s for s in every if s[0] in QUICK] if quick else every


def fresh_shapes(n: int, seed: int) -> list[tuple[str, int, int, int]]:
    """``n`` shapes nobody named (``--fresh``): three in four a layer of :data:`LAYERS` with M
    drawn log-uniform in 1..8192 (decode, MoE, prefill alike, any integer), one in four M, N and
    K each drawn log-uniform (M 1..8192, N and K 256..16384, any integer); seeded.

    >>> fresh_shapes(3, 18) == fresh_shapes(3, 18) and fresh_shapes(3, 18) != fresh_shapes(3, 19)
    True
    """
    rng = random.Random(seed)
    out = []
    for i in range(n):
        M = int(2 ** rng.uniform(0, 13))
        if i % 4 == 3:
            N, K = (int(2 ** rng.uniform(8, 14)) for _ in range(2))
            out.append((f"fresh_{M}x{N}x{K}", M, N, K))
        else:
            layer = rng.choice(sorted(LAYERS))
            out.append((f"fresh_{layer}_m{M}", M, *LAYERS[layer]))
    return out


def stream_shapes(n: int = 200, seed: int = 0) -> list[tuple[int, int, int]]:
    """A model-serving stream: M varies per call (decode 1-64, prefill chunks, ragged), N and K
    from the layers above; about half the calls repeat a shape seen before."""
    rng = random.Random(seed)
    layers = list(LAYERS.values())
    out: list[tuple[int, int, int]] = []
    while len(out) < n:
        if out and rng.random() < 0.5:
            out.append(rng.choice(out))
            continue
        N, K = rng.choice(layers)
        M = rng.choice([rng.randint(1, 64), rng.randint(65, 512), rng.choice([1024, 2048, 4096]),
                        rng.randint(513, 4096)])
        out.append((M, N, K))
    return out


def build(*, schedule: Path, rules: list[str], exact: bool, max_size: int, jobs: int,
          folder: Path, quick: bool, target: str = "triton") -> tuple[Any, float]:
    """Build the library for this card, import it; with the seconds the build took."""
    from tilec.library import build_library, module_text

    t0 = time.perf_counter()
    extra = [(M, N, K) for _, M, N, K in shapes(quick)] if exact else []
    lib = build_library(schedule, target=target, rules=rules, card="auto", shapes=extra,
                        max_size=max_size, jobs=jobs, name="benchgemm")
    path = folder / "benchgemm.py"
    path.write_text(module_text(lib))
    seconds = time.perf_counter() - t0
    spec = importlib.util.spec_from_file_location("benchgemm", path)
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["benchgemm"] = mod
    spec.loader.exec_module(mod)
    return mod, seconds


def operands(mod: Any, M: int, N: int, K: int, device: str, seed: int) -> tuple[Any, Any]:
    """Fresh random a (M x K) and b (K x N) of the library's dtype (b a transposed N x K weight
    for an nk build, as a linear layer holds it)."""
    import torch

    dt = getattr(torch, mod.DTYPE)
    g = torch.Generator(device=device).manual_seed(seed)
    a = torch.randn((M, K), device=device, dtype=dt, generator=g)
    if mod.B_LAYOUT == "nk":
        return a, torch.randn((N, K), device=device, dtype=dt, generator=g).t()
    return a, torch.randn((K, N), device=device, dtype=dt, generator=g)


def check(mod: Any, M: int, N: int, K: int, *, device: str = "cuda", seed: int = 0,
          tol: float = 2e-2) -> dict[str, Any]:
    """matmul into a NaN-poisoned out on fresh inputs, against torch.matmul in fp32."""
    import torch

    a, b = operands(mod, M, N, K, device, seed)
    out = torch.full((M, N), float("nan"), device=device, dtype=getattr(torch, mod.OUT_DTYPE))
    mod.matmul(a, b, out=out)
    ref = torch.matmul(a.float(), b.float())
    nan = int(out.isnan().sum().item())
    scale = max(ref.abs().max().item(), 1e-30) if ref.numel() else 1.0
    err = (out.float() - ref).abs().max().item() / scale if ref.numel() else 0.0
    return {"correct": nan == 0 and err <= tol, "rel_err": err, "nan": nan}


def path_of(mod: Any, M: int, N: int, K: int) -> dict[str, str]:
    """The config, variant and reason of a shape, from the library's explain()."""
    text = mod.explain(M, N, K).splitlines()
    config = text[0].split(": config ", 1)[-1]
    variant = next((ln.rsplit("-> variant ", 1)[-1] for ln in text if "-> variant " in ln), "")
    why = next((ln[5:] for ln in text if ln.startswith("why: ")), "")
    return {"config": config, "variant": variant, "why": why}


def timed(mod: Any, M: int, N: int, K: int, rounds: int, quick: bool) -> dict[str, Any]:
    """matmul and torch.matmul timed in turn, ``rounds`` times each; medians and spreads."""
    import torch

    from tilec.runtime.bench import time_ms

    a, b = operands(mod, M, N, K, "cuda", 1)
    out = torch.empty((M, N), device="cuda", dtype=getattr(torch, mod.OUT_DTYPE))
    ref_out = torch.empty_like(out)
    warm, rep = (10, 40) if quick else (25, 100)
    lib, cub = [], []
    for _ in range(rounds):
        lib.append(time_ms(lambda: mod.matmul(a, b, out=out), warm, rep))
        cub.append(time_ms(lambda: torch.matmul(a, b, out=ref_out), warm, rep))
    lib_ms, cub_ms = statistics.median(lib), statistics.median(cub)
    return {"tilec_ms": lib_ms, "cublas_ms": cub_ms, "x_cublas": cub_ms / lib_ms,
            "tilec_ms_range": [min(lib), max(lib)], "cublas_ms_range": [min(cub), max(cub)]}


def compile_stream(mod: Any, stream: list[tuple[int, int, int]], device: str = "cuda"
                   ) -> dict[str, Any]:
    """Run the stream; count compiles (variants new to the process) and their time, and check
    that no shape whose (kernel, facts) ran before compiled again."""
    import torch

    mod.reset_stats()
    seen: set = set()
    repeats_compiled = 0
    t0 = time.perf_counter()
    per_call: list[float] = []
    for i, (M, N, K) in enumerate(stream):
        a, b = operands(mod, M, N, K, device, i)
        key = mod._choose(M, N, K)
        variant = key.variant
        before = mod.stats()["variants"]
        t = time.perf_counter()
        mod.matmul(a, b)
        if device == "cuda":
            torch.cuda.synchronize()
        per_call.append(time.perf_counter() - t)
        compiled = mod.stats()["variants"] - before
        if variant in seen and compiled:
            repeats_compiled += 1
        seen.add(variant)
    st = mod.stats()
    return {"calls": len(stream), "distinct_shapes": len(set(stream)),
            "variants_compiled": st["variants"], "compile_s": st["compile_s"],
            "triton_compiles": st["triton_compiles"], "kernels_loaded": st["kernels_loaded"],
            "repeat_variant_compiled": repeats_compiled,
            "stream_s": time.perf_counter() - t0,
            "median_call_ms_after_compiles": 1e3 * statistics.median(per_call[len(per_call) // 2:])}


def graphs_and_compile(mod: Any, device: str = "cuda") -> dict[str, Any]:
    """matmul captured in a CUDA graph (replayed on new inputs) and inside torch.compile
    (fullgraph, dynamic shapes, three batch sizes): correct or not, and the error if one."""
    import torch

    res: dict[str, Any] = {}
    try:
        a, b = operands(mod, 256, 512, 1024, device, 7)
        out = torch.empty((256, 512), device=device, dtype=getattr(torch, mod.OUT_DTYPE))
        mod.matmul(a, b, out=out)  # compile the variant before capturing
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            mod.matmul(a, b, out=out)
        a.copy_(torch.randn_like(a))
        g.replay()
        torch.cuda.synchronize()
        ref = a.float() @ b.float()
        res["cuda_graph_correct"] = bool((out.float() - ref).abs().max() <= 2e-2 * ref.abs().max())
    except Exception as e:  # noqa: BLE001  (reported, not fatal)
        res["cuda_graph_correct"], res["cuda_graph_error"] = False, f"{type(e).__name__}: {e}"
    try:
        f = torch.compile(lambda x, w: torch.relu(mod.matmul(x, w)) * 2, dynamic=True,
                          fullgraph=True)
        ok = True
        for M in (17, 64, 300):
            x, w = operands(mod, M, 512, 1024, device, M)
            ref = torch.relu(x.float() @ w.float()) * 2
            ok &= bool((f(x, w).float() - ref).abs().max() <= 2e-2 * ref.abs().max())
        res["torch_compile_correct"] = ok
    except Exception as e:  # noqa: BLE001
        res["torch_compile_correct"], res["torch_compile_error"] = False, f"{type(e).__name__}: {e}"
    return res


def choices(mod: Any, schedule: Path, rules: list[str], card: str | None = None,
            todo: list[tuple[str, int, int, int]] | None = None) -> list[dict[str, Any]]:
    """Per shape of ``todo`` (default: the 50; CPU only): the module's configuration (its table for ``card``, default the
    detected one) beside the one ``tilec gen`` resolves at the shape with the same rules files
    (those of that card or of none), for the module's target, and whether they agree."""
    from tilec.runtime.loader import load_schedule
    from tilec.library.build import _label
    from tilec.library.table import card_of, resolve_at
    from tilec.runtime.records import schedule_key
    from tilec.runtime.rules import Rules

    table = card or mod.card()
    use = []
    for f in rules:
        device = json.loads(Path(f).read_text()).get("device")
        if card_of(device) in (None, None if table == "default" else table):
            use.append(Rules.load(f))
    target = mod.TARGET  # gen for the module's own target
    raw = dict(load_schedule(schedule, None, target=target, tuned=False).raw_params)
    key = schedule_key(schedule.read_text(), target)
    old = mod._STATE.card
    mod._STATE.card = table
    rows = []
    try:
        for name, M, N, K in todo or shapes():
            lib = mod.CONFIGS[mod._choose(M, N, K).config]["label"]
            params, why = resolve_at(raw, (M, N, K), target=target, tuned=None, rules=use,
                                     key=key)
            rows.append({"name": name, "M": M, "N": N, "K": K, "library": lib,
                         "gen": _label(params), "agree": lib == _label(params), "gen_why": why,
                         "library_why": mod._choose(M, N, K).why})
    finally:
        mod._STATE.card = old
    return rows


def clocks() -> dict[str, str]:
    """SM / memory clocks, temperature and power as nvidia-smi reads them (never set)."""
    q = "clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw"
    try:
        out = subprocess.run(["nvidia-smi", f"--query-gpu={q}", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.TimeoutExpired):
        return {}
    return dict(zip(q.split(","), (v.strip() for v in out.splitlines()[0].split(","))))


def geomean(xs: list[float]) -> float:
    xs = [x for x in xs if x > 0]
    return math.exp(sum(map(math.log, xs)) / len(xs)) if xs else float("nan")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    p.add_argument("--fresh", type=int, default=0,
                   help="time N shapes nobody named (fresh_shapes, seeded by --seed) instead of "
                        "the 50")
    p.add_argument("--seed", type=int, default=18, help="--fresh's seed")
    p.add_argument("--schedule", default=str(ROOT / "examples" / "gemm_decomposition.py"))
    # no rules file by default: the H200 sweep's (bench/results/sweep_h200_2026-11-23_rules.json)
    # was tuned with the per-shape kernels of 2026-11-23; with today's shape-generic kernels its
    # nearest rules ran 0.935x cuBLAS over these shapes against 0.986x for gen's heuristic at each
    # shape (H200, dispatch_h200_2026-11-28.json vs dispatch_h200_2026-11-28_s11_heuristic_exact.json)
    p.add_argument("--rules", action="append", default=None,
                   help="rules files (default: none, see above; --rules none: none)")
    p.add_argument("--exact", action="store_true", help="the shapes as exact table entries")
    p.add_argument("--target", choices=["triton", "cuda"], default="triton",
                   help="the library's kernels (tilec build --target); a --module says its own")
    p.add_argument("--max-size", type=int, default=32768)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--stream", type=int, default=200)
    p.add_argument("--module", default="",
                   help="a module tilec build wrote beforehand (skips the build on the GPU machine)")
    p.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    p.add_argument("--parts", default="shapes,host,stream,graphs",
                   help="which parts run (comma-separated; a long run may be split in two)")
    p.add_argument("--choices", default="",
                   help="CPU only: print the module's choice beside tilec gen's per shape for "
                        "this table (default, h100, h200) and exit")
    args = p.parse_args()
    parts = set(args.parts.split(","))
    if args.choices:
        args.rules = args.rules or []
        args.rules = [r for r in args.rules if r != "none"]
        if args.module:
            spec = importlib.util.spec_from_file_location("benchgemm", args.module)
            assert spec is not None and spec.loader is not None
            mod = importlib.util.module_from_spec(spec)
            sys.modules["benchgemm"] = mod
            spec.loader.exec_module(mod)
        else:
            mod, _ = build(schedule=Path(args.schedule), rules=args.rules, exact=args.exact,
                           max_size=args.max_size, jobs=args.jobs,
                           folder=Path(tempfile.mkdtemp(prefix="dispatch_")), quick=args.quick,
                           target=args.target)
        rows = choices(mod, Path(args.schedule), args.rules, args.choices,
                       fresh_shapes(args.fresh, args.seed) if args.fresh else None)
        for r in rows:
            print(f"{r['name']:24s} {'same' if r['agree'] else 'DIFF':4s} library "
                  f"{r['library']:45s} gen {r['gen']}")
        print(f"{sum(r['agree'] for r in rows)} of {len(rows)} agree (table {args.choices!r})")
        return
    import torch

    from host_overhead_library import host_times

    rounds = max(5, args.rounds)
    args.rules = args.rules or []
    args.rules = [r for r in args.rules if r != "none"]
    device = torch.cuda.get_device_name()
    work = Path(tempfile.mkdtemp(prefix="dispatch_"))
    clocks_before = clocks()
    if args.module:  # built beforehand (tilec build), e.g. on a CPU machine: no build here
        spec = importlib.util.spec_from_file_location("benchgemm", args.module)
        assert spec is not None and spec.loader is not None
        mod = importlib.util.module_from_spec(spec)
        sys.modules["benchgemm"] = mod
        spec.loader.exec_module(mod)
        build_s = 0.0
    else:
        mod, build_s = build(schedule=Path(args.schedule), rules=args.rules, exact=args.exact,
                             max_size=args.max_size, jobs=args.jobs, folder=work,
                             quick=args.quick, target=args.target)
    print(f"built in {build_s:.1f} s: card table {mod.card()!r}, {len(mod.CONFIGS)} configs, "
          f"{len(mod.KERNELS)} kernels", flush=True)
    date = time.strftime("%Y-%m-%d", time.gmtime())
    card = mod.card() if mod.card() != "default" else (
        "h200" if "h200" in device.lower() else "h100" if "h100" in device.lower() else "gpu")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    todo = fresh_shapes(args.fresh, args.seed) if args.fresh else shapes(args.quick)
    tag = ("_quick" if args.quick else "") + (f"_fresh{args.fresh}s{args.seed}" if args.fresh
                                              else "") + ("" if parts >= {"shapes", "host", "stream", "graphs"}
                                              else "_" + "_".join(sorted(parts)))
    cuda = mod.TARGET == "cuda"
    path = out / f"dispatch_{'library_cuda_' if cuda else ''}{card}_{date}{tag}.json"
    rows: list[dict[str, Any]] = []
    result: dict[str, Any] = {
        "device": device, "date": date, "rows": rows, "build_s": build_s,
        "clocks": {"before": clocks_before},
        "library": {"schedule": Path(args.schedule).name, "configs": len(mod.CONFIGS),
                    "kernels": len(mod.KERNELS), "table": mod.card(), "target": mod.TARGET,
                    "exact": len(mod.TABLES[mod.card()]["exact"]),
                    "max_size": args.max_size, "rules": args.rules},
        "method": "medians of >= 5 alternated rounds of tilec.runtime.bench.time_ms "
                  "(L2 flushed, launches hidden); x_cublas = cuBLAS ms / tilec ms"}

    def save() -> None:  # after every step: a run cut short keeps what it measured
        result["clocks"]["after"] = clocks()
        path.write_text(json.dumps(result, indent=1))

    if cuda and "shapes" in parts:  # nvcc builds the shapes' kernels at once, not per first call
        t0 = time.perf_counter()
        mod.build_kernels([(M, N, K) for _, M, N, K in todo], jobs=args.jobs)
        result["library"]["nvcc_s"] = time.perf_counter() - t0
        print(f"nvcc built {len(mod._STATE.libs)} kernels in {result['library']['nvcc_s']:.0f} s",
              flush=True)
    print(f"{'shape':24s} {'M':>6s} {'N':>6s} {'K':>7s} {'x_cublas':>8s} {'ok':>3s} "
          f"{'tilec ms':>9s} {'cublas ms':>9s}  config / variant", flush=True)
    for name, M, N, K in (todo if "shapes" in parts else []):
        row: dict[str, Any] = {"name": name, "M": M, "N": N, "K": K, "path": mod.TARGET}
        row.update(path_of(mod, M, N, K))
        try:
            row.update(check(mod, M, N, K))
            row.update(timed(mod, M, N, K, rounds, args.quick))
        except Exception as e:  # noqa: BLE001  (a failing shape is a row, not the end)
            row.update({"correct": False, "x_cublas": 0.0, "error": f"{type(e).__name__}: {e}"})
        rows.append(row)
        print(f"{name:24s} {M:6d} {N:6d} {K:7d} {row['x_cublas']:8.3f} "
              f"{'yes' if row['correct'] else 'NO':>3s} {row.get('tilec_ms', 0):9.4f} "
              f"{row.get('cublas_ms', 0):9.4f}  {row['config']} / {row['variant']}"
              + (f"  {row['error']}" if "error" in row else ""), flush=True)
        result["geomean_x_cublas"] = geomean([r["x_cublas"] for r in rows])
        save()
    if rows:
        print(f"geomean x_cublas {result['geomean_x_cublas']:.3f} over {len(rows)} shapes; "
              f"{sum(not r['correct'] for r in rows)} incorrect", flush=True)
    result["host"] = host_times(mod, quick=args.quick, breakdown=True) if "host" in parts else []
    save()
    for h in result["host"]:
        print(f"host per call {h['M']}x{h['N']}x{h['K']}: matmul {h['matmul_us']:.1f} us, "
              f"out= {h['matmul_out_us']:.1f} us, custom op {h['custom_op_us']:.1f} us, "
              f"torch.matmul {h['torch_us']:.1f} us; kernel run() alone {h['kernel_run_us']:.1f}"
              f" us, torch.empty {h['empty_us']:.1f} us", flush=True)
    if "stream" in parts:
        result["stream"] = compile_stream(mod, stream_shapes(60 if args.quick else args.stream))
        save()
        print(f"stream: {result['stream']}", flush=True)
    if "graphs" in parts:
        result["graphs"] = graphs_and_compile(mod)
        save()
        print(f"CUDA graph and torch.compile: {result['graphs']}", flush=True)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
