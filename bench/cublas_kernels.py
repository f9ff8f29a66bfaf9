"""Which kernel cuBLAS runs per shape (issue 30: "find cuBLAS's kernel per shape; torch.profiler
gives its name: tile, cluster, stages, split-K/Stream-K").

For every shape of bench/dispatch.py's list (the suite and 36 more), torch.matmul on bf16 A (M x K)
and B (K x N) row-major is run under torch.profiler; every GPU kernel of the call is recorded
with its time, and the main kernel's name is parsed into what it says: the tile (``128x256x64``
in sm90_xmma names, ``256x128_64x4`` in nvjet names: tile and k-block x stages), the cluster
(``cluster2x1x1`` / ``_2x1_``), warp-specialised ping-pong or cooperative (``pingpong``,
``coop``), split-K / Stream-K (``splitK``, ``streamk``, ``_sk``, a second reduce kernel), and
the fp32-reduction kernel if there is one.

    PYTHONPATH=. python bench/cublas_kernels.py [--out DIR]

Prints a table and writes ``cublas_kernels_<card>_<date>.json`` under DIR ($OUT, else
bench/results).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "bench"))


def parse(name: str) -> dict[str, Any]:
    """What a cuBLAS kernel name says about its schedule (fields absent where it says nothing).

    >>> parse("nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_NNT")["tile"], parse("nvjet_hsh_256x128_64x4_2x1_v_bz_coopA_NNT")["cluster"]
    ('256x128x64', '2x1')
    >>> parse("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x256x64_cluster2x1x1_warpgroupsize2x1x1_execute_segment_k_off_kernel__5x_cublas")["tile"]
    '128x256x64'
    """
    out: dict[str, Any] = {}
    m = re.search(r"tilesize(\d+)x(\d+)x(\d+)", name)
    if m:
        out["tile"] = "x".join(m.groups())
    m = re.search(r"nvjet_\w+?_(\d+)x(\d+)_(\d+)x(\d+)_(\d+)x(\d+)_", name)
    if m:
        bm, bn, bk, st, cm, cn = m.groups()
        out.update(tile=f"{bm}x{bn}x{bk}", stages=int(st), cluster=f"{cm}x{cn}")
    m = re.search(r"cluster(\d+)x(\d+)x\d+", name)
    if m:
        out["cluster"] = f"{m.group(1)}x{m.group(2)}"
    m = re.search(r"stage(\d+)", name)
    if m:
        out["stages"] = int(m.group(1))
    low = name.lower()
    for key, pat in (("pingpong", "pingpong"), ("cooperative", "coop"), ("splitk", "splitk"),
                     ("streamk", "streamk|stream_k"), ("segment_k", "segment_k_on")):
        if re.search(pat, low):
            out[key] = True
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=None)
    args = ap.parse_args(argv)
    import torch
    from torch.profiler import ProfilerActivity, profile

    from dispatch import shapes

    out_dir = Path(args.out or os.environ.get("OUT") or ROOT / "bench" / "results")
    out_dir.mkdir(parents=True, exist_ok=True)
    rows = []
    for name, M, N, K in shapes():
        a = torch.randn(M, K, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(K, N, device="cuda", dtype=torch.bfloat16)
        for _ in range(3):
            torch.matmul(a, b)
        torch.cuda.synchronize()
        with profile(activities=[ProfilerActivity.CUDA]) as prof:
            for _ in range(5):
                torch.matmul(a, b)
            torch.cuda.synchronize()
        kernels: dict[str, list[float]] = {}
        for ev in prof.events():
            if ev.device_type == torch.autograd.DeviceType.CUDA:
                kernels.setdefault(ev.name, []).append(ev.device_time_total / 1000.0)
        per_call = {k: sum(v) / 5 for k, v in kernels.items()}
        main_k = max(per_call, key=per_call.get) if per_call else ""
        row = {"name": name, "M": M, "N": N, "K": K, "kernel": main_k, **parse(main_k),
               "kernels": {k: round(t, 5) for k, t in per_call.items()},
               "ms": round(sum(per_call.values()), 5)}
        rows.append(row)
        print(f"{name:24s} {M:6d} {N:6d} {K:6d} {row['ms']:8.4f} ms  {len(per_call)} kernel(s)  "
              f"{row.get('tile', '?'):12s} cl {row.get('cluster', '?'):4s} st {row.get('stages', '?')}  "
              f"{main_k[:90]}", flush=True)
        del a, b
    dev = torch.cuda.get_device_name(0)
    card = next((c for c in ("h200", "h100") if c in dev.lower()), "gpu")
    path = out_dir / f"cublas_kernels_{card}_{time.strftime('%Y-%m-%d')}.json"
    path.write_text(json.dumps({"device": dev, "date": time.strftime("%Y-%m-%d"),
                                "torch": torch.__version__, "script": "bench/cublas_kernels.py",
                                "rows": rows}, indent=1) + "\n")
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
