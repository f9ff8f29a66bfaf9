"""The CUDA (wgmma/TMA) path on issue 30's 50 shapes against torch.matmul (cuBLAS), on the GPU.

Run on the device machine from the repository root (devdeps/ holds the packages tilec needs that
the device's image lacks: cachetools, platformdirs; sympy, networkx, tqdm are there; devdeps/ is
git-ignored, so the device tool must carry it)::

    PYTHONPATH=$PWD:$PWD/devdeps PYTHONUNBUFFERED=1 python bench/dispatch_cuda.py all \
        [--out $OUT] [--quick] [--only REGEX] [--candidates 'BN=192' \
        --candidates 'DECOMP=splitk,SPLITS=4' --candidates 'seed:CM=2,CN=1']

or in two phases, ``prepare`` anywhere (CPU) and ``run`` on the device over the same folder::

    PYTHONPATH=$PWD python bench/dispatch_cuda.py prepare --dir DIR [--only ...] [--candidates ...]
    PYTHONPATH=$PWD:$PWD/devdeps python bench/dispatch_cuda.py run --dir DIR [--out DIR]

1. ``prepare`` (no GPU): per shape (bench/dispatch.py's ``SUITE`` + ``EXTRA``, bf16, A M x K and
   B K x N row-major, C M x N), examples/gemm_decomposition.py with every knob "auto" lowered for
   ``--target cuda`` as ``tilec gen --target cuda --no-tuned`` does at that shape (the heuristic:
   tilec/transforms/heuristic.py ``_cuda_rule`` and ``_decomposition``), and each
   ``--candidates`` configuration: knob overrides of that schedule (the other knobs still
   "auto"; ``CM=2,CN=1``: its 2x1 cluster, B multicast; ``SWAP_AB=1,BM=104,BN=64,WARPS=8``:
   the swapped CUDA kernel, our M on wgmma's N; ``EPILOGUE=tma``: the CUDA epilogue), or ``seed:KNOBS``, examples/seed004_persistent_cluster.py with the heuristic's tile,
   stages and decomposition at the shape and KNOBS on top (``seed:CM=2,CN=1``: a 2x1 cluster).
   Writes one ``<sha>.cu`` per distinct source (shapes whose plans print the same source share
   it: the CUDA kernel takes M, N, K and the strides at run time), ``plans.pkl`` (the plans, for
   their work-split rules) and ``manifest.json`` (per plan: shape, candidate, params, config,
   source, the heuristic's reasons, or the error that stopped it) into ``--dir``.
2. ``run`` (GPU): nvcc over the distinct sources in parallel (``--jobs``, launch.py's
   NVCC_FLAGS), then per shape: correctness on fresh random inputs into a NaN-poisoned C
   (relative Frobenius error against an fp32 reference < 2e-2, no NaN; which variant ran:
   closed / general, the file's ``facts_hold``), then the heuristic's kernel, each candidate and
   torch.matmul timed in turn for ``--rounds`` (>= 5) rounds of ``tilec.runtime.bench.time_ms``
   (L2 flushed before every replay, launches hidden); medians, spreads (max - min over median).
   A shape whose rows TMA cannot take (N or K not a multiple of 8: 16-byte rows) is run as a
   library user would get it: A and / or B copied into row-padded buffers inside the timed call
   (``"padded": true``); a shape that still fails is a row with its ``"error"`` and
   ``correct: false``, and the run goes on.  A kernel that corrupts the CUDA context fails the
   shapes after it too: the JSON is written after every shape.
3. ``all``: both in one process (lowering the 50 shapes takes about 10 s on one core).

Writes ``dispatch_cuda_<card>_<date>.json`` under ``--out`` (default $OUT, else bench/results):
``{"device", "date", "script", "clocks": {"before", "after"}, "rows": [{"name", "M", "N", "K",
"path": "cuda", "x_cublas", "correct", "config", "variant", "ms", "ms_cublas", "spread", ...}],
"candidates": [...]}`` (x_cublas = cuBLAS ms / tilec ms, same run; candidate rows have no
``path`` and say which ``candidate`` they are, with ``x_heuristic`` = heuristic ms / theirs).
Prints a table, the geomean of x_cublas and the count under 0.9x.  ``--quick``: dispatch.py's
12 quick shapes, shorter timing.  The CUDA kernels are built for sm_90a (H100 / H200).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import pickle
import re
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
if str(ROOT / "bench") not in sys.path:
    sys.path.insert(0, str(ROOT / "bench"))

from dispatch import EXTRA, QUICK, SUITE, clocks, geomean  # noqa: E402

SCHEDULE = ROOT / "examples" / "gemm_decomposition.py"
SEED = ROOT / "examples" / "seed004_persistent_cluster.py"
HEURISTIC = "heuristic"
# the heuristic's knobs of gemm_decomposition.py a seed004 candidate takes over (GROUP_M as its
# grouped raster's GROUP; WARPS, LOAD have no seed knob)
SEED_KNOBS = ("BM", "BN", "BK", "SMS", "DTYPE", "B_LAYOUT", "DECOMP", "SPLITS", "SK_WAVES",
              "FIXUP", "STAGES")
TOL = 2e-2
DEVICE = "cuda"  # the tests run the GPU part's bookkeeping on "cpu", with stand-in kernels


def sync() -> None:
    """Wait for the device (nothing on the CPU)."""
    import torch

    if DEVICE == "cuda":
        torch.cuda.synchronize()


def shapes(quick: bool = False, only: str | None = None,
           extra: tuple[tuple[str, int, int, int], ...] = ()) -> list[tuple[str, int, int, int]]:
    """bench/dispatch.py's 50 shapes (``quick``: its QUICK ones), then ``extra`` (``--shape``);
    ``only``: the names matching it."""
    out = [s for s in SUITE + EXTRA if not quick or s[0] in QUICK] + list(extra)
    return [s for s in out if not only or re.search(only, s[0])]


def parse_candidate(spec: str) -> tuple[str, dict[str, Any]]:
    """``"BN=192"`` -> ("gemm", {"BN": 192}); ``"seed:CM=2,CN=1"`` -> ("seed", {...}); values
    typed as ``--param`` types them.

    >>> parse_candidate("seed:CM=2,CN=1")
    ('seed', {'CM': 2, 'CN': 1})
    >>> parse_candidate("DECOMP=splitk, SPLITS=4")
    ('gemm', {'DECOMP': 'splitk', 'SPLITS': 4})
    >>> parse_candidate("seed:EVICT=last/normal")  # seed004's L2 hints, A/B
    ('seed', {'EVICT': 'last,normal'})
    """
    from tilec.runtime.loader import parse_params

    kind, _, body = spec.partition(":") if ":" in spec else ("gemm", "", spec)
    if kind not in ("gemm", "seed"):
        raise ValueError(f"candidate {spec!r}: the prefix must be 'seed:' (or none) but is {kind!r}")
    knobs = parse_params([s.strip() for s in body.split(",") if s.strip()])
    if isinstance(knobs.get("EVICT"), str):
        knobs["EVICT"] = knobs["EVICT"].replace("/", ",")
    return kind, knobs


def label(params: dict[str, Any]) -> str:
    """A config in a few words (the library's label), with the cluster where there is one."""
    from tilec.library.build import _label

    text = _label(params)
    if "CM" in params and ("CLUSTER" in params or int(params["CM"]) * int(params["CN"]) > 1):
        text += f" c{params['CM']}x{params['CN']}"
    if params.get("SWAP_AB") in (1, True):  # (SWAP_AB, EPILOGUE: gemm_decomposition.py
        text += " swap"                     # arguments outside its PARAMS, as candidates give them)
    if params.get("EPILOGUE", "auto") != "auto":
        text += f" epi={params['EPILOGUE']}"
    return text


def _lower(schedule: Path, overrides: dict[str, Any]) -> tuple[Any, Any]:
    """(loaded schedule, plan) of ``schedule`` with ``overrides`` for CUDA, as ``tilec gen
    --target cuda --no-tuned`` lowers it (leader multicast mode)."""
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule

    loaded = load_schedule(schedule, overrides, target="cuda", tuned=False)
    return loaded, kernel_plan(loaded, target="cuda")


def plan_entry(name: str, M: int, N: int, K: int, candidate: str, sms: int,
               heuristic_params: dict[str, Any] | None) -> tuple[dict[str, Any], Any, str | None]:
    """One manifest entry, its plan and its source (the plan and source None on an error)."""
    from tilec.codegen.cuda.printer import emit

    entry: dict[str, Any] = {"name": name, "M": M, "N": N, "K": K, "candidate": candidate}
    over: dict[str, Any]
    try:
        if candidate == HEURISTIC:
            schedule, over = SCHEDULE, {"M": M, "N": N, "K": K, "SMS": sms}
        else:
            kind, knobs = parse_candidate(candidate)
            if kind == "gemm":
                schedule, over = SCHEDULE, {"M": M, "N": N, "K": K, "SMS": sms, **knobs}
            else:
                if heuristic_params is None:
                    raise ValueError("the heuristic's plan failed at this shape: no tile to take")
                schedule = SEED
                over = {k: heuristic_params[k] for k in SEED_KNOBS}
                over.update(M=M, N=N, K=K, ORDER="grouped", GROUP=heuristic_params["GROUP_M"])
                over.update(knobs)
                over.setdefault("CLUSTER", int(over.get("CM", 2)) * int(over.get("CN", 1)))
        loaded, plan = _lower(schedule, over)
        source = emit(plan)
    except Exception as e:  # a refused configuration is a row, not the end
        entry["error"] = f"{type(e).__name__}: {e}"
        return entry, None, None
    params = {k: v for k, v in loaded.params.items() if k not in ("M", "N", "K")}
    entry.update(schedule=str(schedule.relative_to(ROOT)), params=params, config=label(params),
                 why=list(loaded.notes), source=hashlib.sha1(source.encode()).hexdigest()[:16])
    return entry, plan, source


def shape_plans(job: tuple[str, int, int, int, list[str], int]
                ) -> list[tuple[dict[str, Any], bytes, str | None]]:
    """The heuristic's plan of one shape and its candidates': (entry, pickled plan, source)."""
    name, M, N, K, candidates, sms = job
    out = []
    heur: dict[str, Any] | None = None
    for cand in [HEURISTIC, *candidates]:
        t0 = time.perf_counter()
        entry, plan, source = plan_entry(name, M, N, K, cand, sms, heur)
        entry["lower_s"] = round(time.perf_counter() - t0, 2)
        if cand == HEURISTIC and plan is not None:
            heur = entry["params"]
        if plan is not None:
            from tilec.codegen.cuda.printer import CudaPrinter

            entry["cname"] = CudaPrinter(plan).cname
        out.append((entry, pickle.dumps(plan), source))
    return out


def prepare(folder: Path, todo: list[tuple[str, int, int, int]], candidates: list[str],
            sms: int = 132, jobs: int = 1) -> dict[str, Any]:
    """Lower every (shape, candidate), ``jobs`` shapes at a time in worker processes, and write
    the sources, ``plans.pkl`` and ``manifest.json`` into ``folder``; the manifest."""
    t0 = time.perf_counter()
    folder.mkdir(parents=True, exist_ok=True)
    entries: list[dict[str, Any]] = []
    plans: list[Any] = []
    sources: dict[str, dict[str, Any]] = {}
    work = [(name, M, N, K, candidates, sms) for name, M, N, K in todo]
    if jobs > 1 and len(work) > 1:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor

        pool = ProcessPoolExecutor(min(jobs, len(work)),
                                   mp_context=multiprocessing.get_context("fork"))
        results = pool.map(shape_plans, work)
    else:
        pool, results = None, map(shape_plans, work)
    for lowered in results:
        for entry, plan, source in lowered:
            if source is not None:
                sha = entry["source"]
                if sha not in sources:
                    (folder / f"{sha}.cu").write_text(source)
                    sources[sha] = {"file": f"{sha}.cu", "cname": entry["cname"], "plans": []}
                sources[sha]["plans"].append(len(entries))
            entry["plan"] = len(plans)
            plans.append(pickle.loads(plan))
            entries.append(entry)
            print(f"  {entry['name']:24s} {entry['candidate']:24s} {entry['lower_s']:5.1f} s  "
                  + (entry["config"] + " " + entry["source"] if "error" not in entry
                     else entry["error"][:100]), flush=True)
    if pool is not None:
        pool.shutdown()
    (folder / "plans.pkl").write_bytes(pickle.dumps(plans))
    manifest = {"schedule": str(SCHEDULE.relative_to(ROOT)), "sms": sms, "candidates": candidates,
                "plans": entries, "sources": sources, "jobs": jobs,
                "prepare_s": round(time.perf_counter() - t0, 2)}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1, default=str))
    print(f"prepared {len(entries)} plans, {len(sources)} distinct sources in "
          f"{manifest['prepare_s']:.1f} s into {folder}", flush=True)
    return manifest


# ------------------------------------------------------------------------------------ GPU part


def compile_all(folder: Path, manifest: dict[str, Any], shas: list[str], jobs: int
                ) -> tuple[dict[str, Path | str], float]:
    """nvcc (launch.py's ``compile_cu``: its NVCC_FLAGS) over the distinct sources ``shas``,
    ``jobs`` at a time: sha -> the shared library's path, or the error; with the seconds it took.
    Only nvcc runs in the threads (the plans are loaded in the caller's)."""
    from tilec.codegen.cuda import launch

    cache = folder / "so"
    cache.mkdir(exist_ok=True)

    def one(sha: str) -> Path | str:
        info = manifest["sources"][sha]
        lib = cache / f"{info['cname']}_{sha}.so"
        try:
            if not lib.exists():
                tmp = lib.with_name(f"{lib.stem}.tmp.so")
                launch.compile_cu((folder / info["file"]).read_text(), tmp, shared=True,
                                  werror=False)
                os.replace(tmp, lib)
            return lib
        except Exception as e:
            return f"{type(e).__name__}: {e}"[:2000]

    t0 = time.perf_counter()
    with ThreadPoolExecutor(max_workers=max(1, jobs)) as ex:
        built = dict(zip(shas, ex.map(one, shas), strict=True))
    return built, time.perf_counter() - t0


def operands(M: int, N: int, K: int, seed: int) -> tuple[Any, Any]:
    """Fresh random bf16 A (M x K) and B (K x N), contiguous."""
    import torch

    g = torch.Generator(device=DEVICE).manual_seed(seed)
    return (torch.randn((M, K), device=DEVICE, dtype=torch.bfloat16, generator=g),
            torch.randn((K, N), device=DEVICE, dtype=torch.bfloat16, generator=g))


def caller(kernel: Any, a: Any, b: Any, c: Any, pad: bool) -> Any:
    """``kernel`` on a, b into c; ``pad``: A's and B's rows first copied into buffers whose row
    stride TMA takes (a multiple of 16 bytes), inside the call, as a library would."""
    import torch

    from tilec.codegen.cuda.launch import row_pad

    if not pad:
        return lambda: kernel(a, b, c)
    (M, K), N = a.shape, b.shape[1]
    ka, nb = row_pad(K, a.element_size()), row_pad(N, b.element_size())

    def padded() -> Any:
        A, B = a, b
        if ka != K:
            A = torch.empty((M, ka), device=a.device, dtype=a.dtype)[:, :K]
            A.copy_(a)
        if nb != N:
            B = torch.empty((K, nb), device=b.device, dtype=b.dtype)[:, :N]
            B.copy_(b)
        return kernel(A, B, c)

    return padded


def check(kernel: Any, M: int, N: int, K: int, seed: int) -> dict[str, Any]:
    """The kernel into a NaN-poisoned C on fresh inputs against fp32: whether it ran padded (only
    where the plain call is refused), the relative Frobenius error, NaNs, the variant."""
    import torch

    from tilec.errors import KernelArgumentError

    a, b = operands(M, N, K, seed)
    c = torch.full((M, N), float("nan"), device=DEVICE, dtype=torch.bfloat16)
    out: dict[str, Any] = {"padded": False}
    try:
        caller(kernel, a, b, c, False)()
    except KernelArgumentError as e:
        out.update(padded=True, refused=str(e))
        caller(kernel, a, b, c, True)()
    sync()
    ref = torch.matmul(a.float(), b.float())
    nan = int(c.isnan().sum().item())
    den = float(torch.linalg.norm(ref))
    err = float(torch.linalg.norm(c.float() - ref)) / den if den else 0.0
    out.update(rel_err=err, nan=nan, correct=bool(nan == 0 and err < TOL),
               variant=kernel.variant(M, N, K, kernel.c_copy_stride(c) or c.stride(0)))
    return out


def spread(xs: list[float]) -> float:
    """(max - min) / median of round medians."""
    return (max(xs) - min(xs)) / statistics.median(xs)


def measure(kernels: dict[str, tuple[Any, bool]], M: int, N: int, K: int, rounds: int,
            quick: bool) -> dict[str, dict[str, Any]]:
    """Each kernel (with its padding) and torch.matmul ("cublas") timed in turn, ``rounds``
    times each; per name the median ms, the round medians and the spread."""
    import torch

    from tilec.runtime.bench import time_ms

    a, b = operands(M, N, K, 1)
    c = torch.empty((M, N), device=DEVICE, dtype=torch.bfloat16)
    ref = torch.empty_like(c)
    fns = {n: caller(k, a, b, c, pad) for n, (k, pad) in kernels.items()}
    fns["cublas"] = lambda: torch.matmul(a, b, out=ref)
    warm, rep = (10, 40) if quick else (25, 100)
    times: dict[str, list[float]] = {n: [] for n in fns}
    for _ in range(rounds):
        for n, fn in fns.items():
            times[n].append(time_ms(fn, warm, rep))
    return {n: {"ms": statistics.median(t), "ms_rounds": t, "spread": spread(t)}
            for n, t in times.items()}


def card_of(device: str) -> str:
    """h100 / h200 from the device's name, else the name in a word.

    >>> card_of("NVIDIA H100 80GB HBM3"), card_of("NVIDIA H200")
    ('h100', 'h200')
    """
    low = device.lower()
    return next((c for c in ("h200", "h100") if c in low), re.sub(r"\W+", "_", low).strip("_"))


def parse_shape(spec: str) -> tuple[str, int, int, int]:
    """``"probe=77x4096x4096"`` -> ("probe", 77, 4096, 4096).

    >>> parse_shape("m77=77x14336x4096")
    ('m77', 77, 14336, 4096)
    """
    name, sep, dims = spec.partition("=")
    parts = dims.split("x")
    if not sep or not name or len(parts) != 3 or not all(p.isdigit() and int(p) > 0 for p in parts):
        raise ValueError(f"--shape {spec!r}: expected NAME=MxNxK with positive integers")
    M, N, K = (int(p) for p in parts)
    return name, M, N, K


def run(folder: Path, out_dir: Path, rounds: int, quick: bool, jobs: int,
        only: str | None = None, shape_timeout: float = 120.0,
        extra: tuple[tuple[str, int, int, int], ...] = ()) -> dict[str, Any]:
    """Compile, check and time every prepared plan (``quick`` / ``only``: of those shapes);
    write and return the result.  A shape not done after ``shape_timeout`` seconds ends the
    run with its row saying so."""
    import torch

    from tilec.codegen.cuda.launch import CudaKernel

    torch.backends.cuda.matmul.allow_tf32 = False  # the fp32 reference in fp32
    manifest = json.loads((folder / "manifest.json").read_text())
    plans = pickle.loads((folder / "plans.pkl").read_bytes())
    device = torch.cuda.get_device_name()
    date = time.strftime("%Y-%m-%d", time.gmtime())
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"dispatch_cuda_{card_of(device)}_{date}{'_quick' if quick else ''}.json"
    result: dict[str, Any] = {
        "device": device, "date": date, "script": "bench/dispatch_cuda.py",
        "clocks": {"before": clocks()}, "schedule": manifest["schedule"], "sms": manifest["sms"],
        "rounds": rounds, "prepare_s": manifest["prepare_s"],
        "method": "per shape: the heuristic's kernel, the candidates and torch.matmul alternated, "
                  f"{rounds} rounds of tilec.runtime.bench.time_ms (L2 flushed before every "
                  "replay, launches hidden), medians; x_cublas = cuBLAS ms / tilec ms; padded "
                  "shapes include the operand copies in the timed call",
        "rows": [], "candidates": []}
    names = {n for n, *_ in shapes(quick, only, extra)}
    shas = list(dict.fromkeys(e["source"] for e in manifest["plans"]
                              if e["name"] in names and "source" in e))
    built, compile_s = compile_all(folder, manifest, shas, jobs)
    result["compile"] = {"sources": len(built), "seconds": round(compile_s, 1),
                         "failed": {s: e for s, e in built.items() if isinstance(e, str)}}
    print(f"compiled {len(built)} distinct sources in {compile_s:.1f} s "
          f"({len(result['compile']['failed'])} failed)", flush=True)

    def save() -> None:  # after every shape: a run cut short keeps what it measured
        result["clocks"]["after"] = clocks()
        heur = result["rows"]
        result["geomean_x_cublas"] = geomean([r["x_cublas"] for r in heur])
        result["under_0.9"] = sum(r["x_cublas"] < 0.9 for r in heur)
        path.write_text(json.dumps(result, indent=1, default=str))

    def hung(name: str, M: int, N: int, K: int, seconds: float) -> None:
        # a shape past its time (a kernel that never finishes): its row says so, the file is
        # written, and the process ends (the GPU context cannot be trusted after it)
        result["rows"].append({"name": name, "M": M, "N": N, "K": K, "path": "cuda",
                               "x_cublas": 0.0, "correct": False,
                               "error": f"hung: not done after {seconds:.0f} s; the run stopped"})
        result["hung"] = name
        save()
        print(f"{name}: not done after {seconds:.0f} s, the run stops; wrote {path}", flush=True)
        os._exit(3)

    by_shape: dict[str, list[dict[str, Any]]] = {}
    for e in manifest["plans"]:
        if e["name"] in names:
            by_shape.setdefault(e["name"], []).append(e)
    print(f"{'shape':24s} {'M':>6s} {'N':>6s} {'K':>7s} {'x_cublas':>8s} {'ok':>3s} "
          f"{'tilec ms':>9s} {'cublas ms':>9s}  config / variant", flush=True)
    for name, entries in by_shape.items():
        M, N, K = entries[0]["M"], entries[0]["N"], entries[0]["K"]
        watchdog = threading.Timer(shape_timeout, hung, (name, M, N, K, shape_timeout))
        watchdog.daemon = True
        watchdog.start()
        rows: dict[str, dict[str, Any]] = {}
        kernels: dict[str, tuple[Any, bool]] = {}
        seen: dict[tuple[str, str], str] = {}  # (source, params) -> the first candidate with them
        for e in entries:
            row: dict[str, Any] = {"name": name, "M": M, "N": N, "K": K}
            if e["candidate"] == HEURISTIC:
                row["path"] = "cuda"
            else:
                row["candidate"] = e["candidate"]
            row.update({k: e[k] for k in ("config", "params", "source", "why", "schedule")
                        if k in e})
            rows[e["candidate"]] = row
            try:
                if "error" in e:
                    raise RuntimeError(f"prepare: {e['error']}")
                lib = built[e["source"]]
                if isinstance(lib, str):
                    raise RuntimeError(f"nvcc: {lib}")
                key = (e["source"], json.dumps(e["params"], sort_keys=True, default=str))
                if key in seen:  # the same kernel at the same work split: measured once
                    row["same_as"] = seen[key]
                    continue
                seen[key] = e["candidate"]
                kernel = CudaKernel(plans[e["plan"]], Path(lib))
                row.update(check(kernel, M, N, K, seed=M + 7 * N + 13 * K))
                kernels[e["candidate"]] = (kernel, row["padded"])
            except Exception as err:  # a failing shape is a row, not the end
                row.update(correct=False, error=f"{type(err).__name__}: {err}"[:2000])
        try:
            timed = measure(kernels, M, N, K, max(5, rounds), quick) if kernels else {}
        except Exception as err:
            timed = {}
            for cand in kernels:
                rows[cand].update(correct=False, error=f"timing: {type(err).__name__}: {err}"[:2000])
        cub = timed.get("cublas")
        heur_ms = timed.get(HEURISTIC, {}).get("ms")
        for cand, row in rows.items():
            t = timed.get(row.get("same_as", cand))
            if t is not None and cub is not None:
                row.update(ms=t["ms"], ms_cublas=cub["ms"], x_cublas=cub["ms"] / t["ms"],
                           spread={"tilec": t["spread"], "cublas": cub["spread"]},
                           ms_rounds=t["ms_rounds"], ms_cublas_rounds=cub["ms_rounds"])
                if cand != HEURISTIC and heur_ms is not None:
                    row["x_heuristic"] = heur_ms / t["ms"]
            else:
                row.setdefault("x_cublas", 0.0)
                row.setdefault("correct", False)
            if "same_as" in row:
                src = rows[row["same_as"]]
                row.update({k: src[k] for k in ("correct", "rel_err", "nan", "variant", "padded")
                            if k in src})
            (result["rows"] if cand == HEURISTIC else result["candidates"]).append(row)
            tag = name if cand == HEURISTIC else f"  + {cand}"
            print(f"{tag:24s} {M:6d} {N:6d} {K:7d} {row['x_cublas']:8.3f} "
                  f"{'yes' if row.get('correct') else 'NO':>3s} {row.get('ms', 0):9.4f} "
                  f"{row.get('ms_cublas', 0):9.4f}  {row.get('config', '?')} / "
                  f"{row.get('variant', '')}{' padded' if row.get('padded') else ''}"
                  + (f"  same as {row['same_as']}" if "same_as" in row else "")
                  + (f"  {row['error'][:160]}" if "error" in row else ""), flush=True)
        watchdog.cancel()
        save()
    save()
    heur = result["rows"]
    print(f"geomean x_cublas {result['geomean_x_cublas']:.3f} over {len(heur)} shapes; "
          f"{result['under_0.9']} under 0.9x; {sum(not r.get('correct') for r in heur)} "
          f"incorrect or failed", flush=True)
    print(f"wrote {path}", flush=True)
    return result


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("phase", nargs="?", choices=["prepare", "run", "all"])
    p.add_argument("--all", action="store_true", help="the same as the phase 'all'")
    p.add_argument("--dir", default=None,
                   help="the folder of the sources and manifest (all: default a fresh temp one)")
    p.add_argument("--quick", action="store_true", help="dispatch.py's quick shapes, shorter timing")
    p.add_argument("--only", default=None, help="a regex over shape names")
    p.add_argument("--shape", action="append", default=[], type=parse_shape,
                   help="an extra shape NAME=MxNxK (repeatable; --only still filters)")
    p.add_argument("--candidates", action="append", default=[],
                   help="extra configurations per shape: 'KNOB=V,...' (gemm_decomposition.py) "
                        "or 'seed:KNOB=V,...' (seed004 with the heuristic's tile); repeatable")
    p.add_argument("--sms", type=int, default=132, help="the schedules' SMS (default 132)")
    p.add_argument("--rounds", type=int, default=5, help="timing rounds (at least 5)")
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                   help="worker processes lowering shapes, parallel nvcc runs (default: the cores)")
    p.add_argument("--shape-timeout", type=float, default=120.0,
                   help="seconds a shape may take before the run stops, its row saying it hung")
    p.add_argument("--out", default=os.environ.get("OUT") or str(ROOT / "bench" / "results"))
    args = p.parse_args(argv)
    from tilec.errors import TilecError

    if args.all:
        if args.phase not in (None, "all"):
            p.error(f"--all and the phase {args.phase!r} disagree")
        args.phase = "all"
    if args.phase is None:
        p.error("give a phase: prepare, run or all")
    for c in args.candidates:
        try:
            parse_candidate(c)
        except (ValueError, TilecError) as e:
            p.error(str(e))
    if args.phase != "all" and not args.dir:
        p.error(f"{args.phase} needs --dir")
    folder = Path(args.dir or tempfile.mkdtemp(prefix="dispatch_cuda_"))
    if args.phase in ("prepare", "all"):
        prepare(folder, shapes(args.quick, args.only, tuple(args.shape)), args.candidates, args.sms, args.jobs)
    if args.phase in ("run", "all"):
        run(folder, Path(args.out), args.rounds, args.quick, args.jobs, args.only,
            args.shape_timeout, tuple(args.shape))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
