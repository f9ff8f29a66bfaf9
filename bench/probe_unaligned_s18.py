"""Where 1000^3 loses on the CUDA path (0.82x cuBLAS while 1024^3 runs at 0.95-1.0x): the kernels gen
picks at 1000^3 (128x128 data-parallel) and at 1024^3 (swapped 128x64, 8 stages), each launched
through a built CUDA module's own launch (``_CudaRun``) at 1024^3 in its closed and its general variant, at 1000^3 with rows of
1000 elements (2000 bytes, off the 128-byte grid) and with rows of 1024 (the same sizes, every row
on the grid), and with one of M, N, K at 1000 at a time; torch.matmul (cuBLAS) on the same
operands in the same rounds (tilec.runtime.bench.time_ms: L2 flushed, launches hidden), 7 rounds,
medians and spreads; results checked against an fp32 product.

    PYTHONPATH=. python bench/probe_unaligned_s18.py MODULE.py [--out DIR]
"""

from __future__ import annotations

import argparse
import datetime
import importlib.util
import json
import statistics
import subprocess
import sys
from pathlib import Path

import torch

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tilec.runtime.bench import time_ms  # noqa: E402

CASES = [  # name, M, N, K, row length of A, B and C (elements), variant (-1 the launcher's)
    ("1024^3 closed", 1024, 1024, 1024, 1024, -1),
    ("1024^3 general", 1024, 1024, 1024, 1024, 0),
    ("1000^3 rows 1000", 1000, 1000, 1000, None, -1),
    ("1000^3 rows 1024", 1000, 1000, 1000, 1024, -1),
    ("M 1000", 1000, 1024, 1024, None, -1),
    ("N 1000 rows 1000", 1024, 1000, 1024, None, -1),
    ("N 1000 rows 1024", 1024, 1000, 1024, 1024, -1),
    ("K 1000 rows 1000", 1024, 1024, 1000, None, -1),
    ("K 1000 rows 1024", 1024, 1024, 1000, 1024, -1),
]


def operand(rows: int, cols: int, ld: int | None) -> torch.Tensor:
    full = torch.randn(rows, ld or cols, device="cuda", dtype=torch.bfloat16)
    return full[:, :cols]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("module")
    ap.add_argument("--out", default="bench/results")
    ap.add_argument("--rounds", type=int, default=7)
    args = ap.parse_args()
    spec = importlib.util.spec_from_file_location("probemod", args.module)
    mod = importlib.util.module_from_spec(spec)
    sys.modules["probemod"] = mod
    spec.loader.exec_module(mod)
    picks = {s: mod._choose(s, s, s).config for s in (1000, 1024)}
    mod.build_kernels([(s, s, s) for s in picks])
    rows = []
    for (at, index), (name, M, N, K, ld, variant) in (
            (p, c) for p in picks.items() for c in CASES):
        run = mod._CudaRun(index)
        a, b = operand(M, K, ld), operand(K, N, ld)
        c = operand(M, N, ld).fill_(float("nan"))
        nums, _, _ = run._split(M, N, K)

        def ours(a=a, b=b, c=c, M=M, N=N, K=K, nums=nums, variant=variant, run=run):
            rc = run.launch(a.data_ptr(), b.data_ptr(), c.data_ptr(), 0, 0,
                            mod._cuda_stream(a.device), M, N, K, a.stride(0), b.stride(0),
                            c.stride(0), *nums, variant)
            assert rc == 0, rc

        ours()
        torch.cuda.synchronize()
        err = (c.float() - a.float() @ b.float()).abs().max().item()
        ref = torch.empty(M, N, device="cuda", dtype=torch.bfloat16)
        theirs = lambda a=a, b=b, ref=ref: torch.matmul(a, b, out=ref)  # noqa: E731
        t_ours, t_cublas = [], []
        for _ in range(args.rounds):
            t_ours.append(time_ms(ours))
            t_cublas.append(time_ms(theirs))
        mo, mc = statistics.median(t_ours), statistics.median(t_cublas)
        row = {"config": mod.CONFIGS[index]["label"], "picked_at": at, "case": name, "M": M, "N": N, "K": K, "ld": ld, "variant": variant,
               "ms": mo, "ms_cublas": mc, "x_cublas": mc / mo, "max_err": err,
               "spread": [(max(t) - min(t)) / statistics.median(t) for t in (t_ours, t_cublas)]}
        rows.append(row)
        print(f"{mod.CONFIGS[index]['label'][:34]:34s} {name:20s} tilec {mo * 1000:7.2f} us  cublas {mc * 1000:7.2f} us  "
              f"x {mc / mo:.3f}  err {err:.3g}", flush=True)
    smi = subprocess.run(["nvidia-smi", "--query-gpu=name,clocks.sm,clocks.mem",
                          "--format=csv,noheader"], capture_output=True, text=True).stdout.strip()
    out = {"device": torch.cuda.get_device_name(), "date": str(datetime.date.today()),
           "script": "bench/probe_unaligned_s18.py",
           "clocks": smi, "rounds": args.rounds, "rows": rows}
    path = Path(args.out) / f"cuda_probe_unaligned_{'h200' if 'H200' in out['device'] else 'h100'}_{out['date']}_s18.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=1))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
