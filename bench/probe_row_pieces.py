"""(Session 20: ran with bench/results/s20_rows_b.diff applied, ROWS_B, measured and not kept;
without it the launcher refuses such rows. Output: bench/results/cuda_rows_b_h200_2026-11-29_s20.txt.)

The CUDA kernel's ROWS_B variant (B given K x N whose rows are not 16-byte multiples, loaded by
the kernel itself, no copy of B), on the GPU through ``tilec gen``'s launcher
(tilec.codegen.cuda.launch).

    python bench/probe_row_pieces.py prepare DIR     # CPU: plans and sources (pickled)
    python bench/probe_row_pieces.py run DIR         # GPU: nvcc, then every case

Each case runs a plan of examples/gemm_decomposition.py (its heuristic at the shape, or the
knobs given: a 2x1 cluster multicasting B, leader and sliced, a swapped tile, split-K with the
reduce kernel, Stream-K) at M x N x K with B's rows ``N + pad`` elements long (N odd or off a multiple of 8,
so no 2-D map can stride over them), into a NaN-poisoned C, against an fp32 reference
(relative Frobenius error < 2e-2, no NaN). Each case runs twice: as is, and with B's column 0
set to NaN, where only C's column 0 may be NaN: a row piece reads past N into the next row's
first columns, which must reach no column of C below N. Prints one line per case and
``all correct`` or the failures (exit 1).
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GEMM = ROOT / "examples" / "gemm_decomposition.py"

# (M, N, K, knobs, B row padding in elements); the swapped tiles forced (gen's rules swap only
# where N % 64 == 0)
CASES = [
    (512, 1001, 1024, {}, 0),                      # rows of 2002 bytes (2-byte aligned)
    (1000, 1000, 1000, {}, 3),                     # a view: rows of 1003 elements, K % 64 = 40
    (4096, 4100, 4096, {"CM": 2, "CN": 1, "BM": 128, "BN": 128}, 0),  # 2x1 cluster, B multicast
    (1000, 1001, 2048, {"CM": 2, "CN": 1, "BM": 128, "BN": 128, "MODE": "sliced"}, 0),
    (135, 4097, 7168, {"SWAP_AB": 1, "BM": 136, "BN": 64, "STAGES": 8, "WARPS": 8,
                       "DECOMP": "splitk", "SPLITS": 2, "FIXUP": "deterministic"}, 0),
    (9, 7171, 2048, {"SWAP_AB": 1, "BM": 16, "BN": 128, "STAGES": 6, "WARPS": 8,
                     "DECOMP": "dp"}, 0),          # the decode 16x128 swapped tile
    (3, 355, 3840, {}, 0),                         # split-K with the reduce kernel
    (1832, 6897, 13504, {"BM": 128, "BN": 128, "DECOMP": "streamk",
                         "FIXUP": "deterministic"}, 0),  # Stream-K
    (1, 13559, 2056, {}, 0),                       # one row, a wide B
]


def prepare(folder: Path) -> None:
    from tilec.codegen.cuda.printer import emit
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule

    folder.mkdir(parents=True, exist_ok=True)
    plans = []
    for M, N, K, knobs, _ in CASES:
        over = {k: v for k, v in knobs.items() if k != "MODE"}
        loaded = load_schedule(GEMM, {"M": M, "N": N, "K": K, **over}, target="cuda", tuned=False)
        plan = kernel_plan(loaded, target="cuda", mode=knobs.get("MODE", "leader"))
        plans.append((plan, emit(plan)))
    (folder / "plans.pkl").write_bytes(pickle.dumps(plans))
    print(f"prepared {len(plans)} plans into {folder}")


def run(folder: Path) -> int:
    import concurrent.futures

    import torch

    from tilec.codegen.cuda.launch import build

    plans = pickle.loads((folder / "plans.pkl").read_bytes())
    with concurrent.futures.ThreadPoolExecutor(16) as pool:
        kernels = list(pool.map(lambda ps: build(ps[0], cache_dir=folder, source=ps[1]), plans))
    bad = []
    for (M, N, K, knobs, pad), kern in zip(CASES, kernels, strict=True):
        g = torch.Generator(device="cuda").manual_seed(M + N + K)
        dt = torch.bfloat16
        a = torch.randn((M, K), device="cuda", dtype=dt, generator=g)
        b = torch.randn((K, N + pad), device="cuda", dtype=dt, generator=g)[:, :N]
        for poison in (False, True):
            if poison:
                b[:, 0] = float("nan")
            c = torch.full((M, N), float("nan"), device="cuda", dtype=dt)
            kern(a, b, c)
            ref = a.float() @ b.float()
            got, want = (c[:, 1:], ref[:, 1:]) if poison else (c, ref)
            err = ((got.float() - want).norm() / want.norm()).item()
            nan = int(got.isnan().sum().item())
            ok = nan == 0 and err < 2e-2
            print(f"{M}x{N}x{K} {knobs or ''} B ld {b.stride(0)}"
                  f"{' (column 0 NaN)' if poison else ''}: {kern.plan.name}; rel err {err:.2e}, "
                  f"{nan} NaN: {'ok' if ok else 'WRONG'}", flush=True)
            if not ok:
                bad.append((M, N, K, poison))
    torch.cuda.synchronize()
    print("all correct" if not bad else f"wrong: {bad}")
    return 1 if bad else 0


if __name__ == "__main__":
    what, folder = sys.argv[1], Path(sys.argv[2])
    sys.exit(prepare(folder) if what == "prepare" else run(folder))
