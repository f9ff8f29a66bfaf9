"""Every example schedule's shape-generic CUDA kernel on the GPU, at shapes other than the one it
was lowered at (issue 26): the one-CTA-per-tile schedules (gemm_basic, grouped_raster: the CTA
count is a run-time Shape field, ORDER_CTAS) beside the persistent, split-K and Stream-K ones.

For each example and each B layout (kn, nk): the plan is lowered once at the example's own
parameters, built once, then launched at every shape of ``SHAPES`` (aligned, ragged, tiny, M=1);
each launch gets fresh random bf16 inputs, a NaN-poisoned C, and is compared with an fp32
reference (relative Frobenius error < 1e-2, no NaN). Both variants are forced where the facts hold
(``variant="closed"`` and ``"general"``), the general one everywhere. Rows TMA cannot take are
given as views of padded buffers (the caller's padding).

    PYTHONPATH=. python bench/gpu_cuda_examples.py [--out DIR] [--only REGEX]

Prints one line per launch and writes ``cuda_examples_<card>_<date>.json`` under DIR ($OUT, else
bench/results).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
import traceback
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

EXAMPLES = ["gemm_basic", "grouped_raster", "my_gemm", "gemm_decomposition", "split_k", "stream_k",
            "seed004_persistent_cluster"]
SHAPES = [(1024, 1024, 1024), (2048, 1536, 512), (1000, 1000, 1000), (4095, 4097, 4100),
          (200, 96, 128), (1, 4096, 4096), (3000, 5000, 2000), (128, 128, 65536)]


def padded(cols: int, elem: int = 2) -> int:
    """Row stride (elements) that is a multiple of 16 bytes."""
    return -(-cols * elem // 16) * 16 // elem


def card_name() -> str:
    import torch

    name = torch.cuda.get_device_properties(0).name.lower()
    return next((c for c in ("h200", "h100") if c in name), re.sub(r"\W+", "_", name))


def check(kernel: Any, M: int, N: int, K: int, nk: bool, variant: str | None, seed: int) -> dict[str, Any]:
    import torch

    g = torch.Generator(device="cuda").manual_seed(seed)
    A = torch.empty(M, padded(K), device="cuda", dtype=torch.bfloat16)[:, :K]
    A.copy_(torch.randn(M, K, device="cuda", generator=g))
    if nk:
        B = torch.empty(N, padded(K), device="cuda", dtype=torch.bfloat16)[:, :K]
        B.copy_(torch.randn(N, K, device="cuda", generator=g))
        ref = A.float() @ B.float().T
    else:
        B = torch.empty(K, padded(N), device="cuda", dtype=torch.bfloat16)[:, :N]
        B.copy_(torch.randn(K, N, device="cuda", generator=g))
        ref = A.float() @ B.float()
    C = torch.full((M, padded(N)), float("nan"), device="cuda", dtype=torch.bfloat16)[:, :N]
    kernel(A, B, C, variant=variant)
    torch.cuda.synchronize()
    nan = int(torch.isnan(C).sum())
    err = float(torch.linalg.norm(C.float() - ref) / torch.linalg.norm(ref)) if nan == 0 else float("nan")
    return {"M": M, "N": N, "K": K, "b_layout": "nk" if nk else "kn", "forced": variant,
            "ran": kernel.variant(M, N, K, C.stride(0)) if variant is None else variant,
            "rel_err": err, "nan": nan, "ok": nan == 0 and err < 1e-2}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None, help="regex over example names")
    args = ap.parse_args(argv)
    import torch

    from tilec.codegen.cuda.launch import build
    from tilec.errors import ParamError
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule

    out_dir = Path(args.out or os.environ.get("OUT") or ROOT / "bench" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    rows: list[dict[str, Any]] = []
    for ex in EXAMPLES:
        if args.only and not re.search(args.only, ex):
            continue
        for layout in ("kn", "nk"):
            t0 = time.time()
            try:
                try:
                    loaded = load_schedule(ROOT / "examples" / f"{ex}.py", {"B_LAYOUT": layout},
                                           target="cuda", tuned=False)
                except ParamError:  # the example fixes its layout (kn)
                    if layout != "kn":
                        continue
                    loaded = load_schedule(ROOT / "examples" / f"{ex}.py", {}, target="cuda",
                                           tuned=False)
                plan = kernel_plan(loaded, target="cuda")
                kernel = build(plan)
            except Exception as e:  # noqa: BLE001 (reported per example)
                msg = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"
                print(f"{ex:28s} {layout}  build failed: {msg}", flush=True)
                rows.append({"example": ex, "b_layout": layout, "build_error": msg})
                continue
            print(f"== {ex} ({layout}): built in {time.time() - t0:.1f}s", flush=True)
            for i, (M, N, K) in enumerate(SHAPES):
                runs = [None]
                try:
                    if kernel.variant(M, N, K, padded(N)) == "closed":
                        runs += ["closed", "general"]
                except Exception:  # noqa: BLE001
                    pass
                for v in runs:
                    try:
                        r = check(kernel, M, N, K, layout == "nk", v, seed=i)
                    except Exception as e:  # noqa: BLE001
                        r = {"M": M, "N": N, "K": K, "b_layout": layout, "forced": v, "ok": False,
                             "error": f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"}
                        if "CUDA" in r["error"]:
                            traceback.print_exc()
                    r["example"] = ex
                    rows.append(r)
                    print(f"{ex:28s} {layout} {M:5d}x{N:5d}x{K:5d} forced={str(v):8s} "
                          f"ran={r.get('ran', '-'):8s} ok={r['ok']} err={r.get('rel_err', r.get('error'))}",
                          flush=True)
    checked = [r for r in rows if "build_error" not in r]
    result = {"device": torch.cuda.get_device_name(0), "date": time.strftime("%Y-%m-%d"),
              "script": "bench/gpu_cuda_examples.py", "rows": rows,
              "all_ok": all(r["ok"] for r in checked), "launches": len(checked),
              "build_errors": [r for r in rows if "build_error" in r]}
    path = out_dir / f"cuda_examples_{card_name()}_{time.strftime('%Y-%m-%d')}.json"
    path.write_text(json.dumps(result, indent=1) + "\n")
    print(f"{len(checked)} launches, all ok: {result['all_ok']}; wrote {path}")
    return 0 if result["all_ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
