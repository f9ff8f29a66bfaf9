"""One launch of the CUDA path's kernel (``tilec``) or of torch.matmul (``cublas``) at M x N x K,
after two warm-up launches, for Nsight Compute to profile the third: where the deep-K main loop
loses to cuBLAS (issue 30). B is given K x N, as bench/dispatch_cuda.py gives it.

    ncu --launch-skip 2 --launch-count 1 -k regex:gemm_kernel --section SpeedOfLight \\
        python bench/ncu_deepk.py tilec 512 512 65536
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def main(argv: list[str]) -> int:
    import torch

    from tilec.codegen.cuda.launch import build
    from tilec.runtime.build import kernel_plan
    from tilec.runtime.loader import load_schedule

    who, (M, N, K) = argv[0], map(int, argv[1:4])
    A = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
    B = torch.randn((K, N), device="cuda", dtype=torch.bfloat16)
    if who == "tilec":
        s = load_schedule(ROOT / "examples" / "gemm_decomposition.py", {"M": M, "N": N, "K": K},
                          target="cuda", tuned=False)
        k = build(kernel_plan(s, target="cuda"))
        print("tilec:", " ".join(f"{n}={s.params[n]}" for n in ("BM", "BN", "DECOMP", "SPLITS",
                                                                "FIXUP", "CM", "CN")), flush=True)
        run = lambda: k(A, B)  # noqa: E731
    else:
        run = lambda: torch.matmul(A, B)  # noqa: E731
    for _ in range(3):
        run()
    torch.cuda.synchronize()
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
