"""The built library's per-call Python path on CPU, without a GPU: a module whose one kernel is
a real generated Triton kernel file (examples/gemm_decomposition.py's launcher, ``tilec build``'s
printer) with Triton's launch replaced by a no-op, so every line before the launch runs as on
the GPU (checks, the dispatch, the fast path, the kernel file's run(): variant, descriptors,
the cached compiled kernel) and nothing after it.

    PYTHONPATH=. python bench/host_overhead_library_cpu.py [--calls N] [--rounds R]

Prints microseconds per call (medians over rounds) of matmul (new out), matmul with out=, the
kernel file's run() alone and torch.empty; matmul minus run() is what the library adds. CPU
tensors take the launcher's CUDA path here: its one-comparison check is bypassed (it fails for
tensors off CUDA and would call _check_args, which a CUDA call skips), and the library reads
no TRITON_INTERPRET per call. Compare two trees by running it with each on PYTHONPATH in turn.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.append(str(ROOT))  # after PYTHONPATH: the tree to measure comes first


def kernel_file(M: int, N: int, K: int) -> str:
    """The Triton kernel file of the heuristic's config at M x N x K (shape-generic)."""
    from tilec.runtime.loader import load_schedule
    from tilec.library.build import _kernels_of
    from tilec.library.table import resolve_at

    path = ROOT / "examples" / "gemm_decomposition.py"
    raw = dict(load_schedule(path, None, target="triton", tuned=False).raw_params)
    params, _ = resolve_at(raw, (M, N, K), target="triton", tuned=None, rules=[], key="")
    params = {k: v for k, v in params.items() if k not in ("M", "N", "K")}
    return _kernels_of(path, params, (M, N, K), "triton")[1]


def module(src: str):
    """A built module (tests/library/fake.py's tables) whose kernel is ``src``, launch stubbed."""
    from tests.library.fake import fake_library, import_module
    from tilec.library import module_text

    lib = fake_library(name="cpuhost", layout="kn", dtype="bfloat16")
    lib.kernels["k0"] = src
    m = import_module(module_text(lib, built="bench"), Path(tempfile.mkdtemp()), "cpuhost")
    m._on_cpu_ok = lambda: True
    k = m._kernel("k0")

    class Compiled:  # what Triton's JIT returns; indexing it gives the launcher
        def __getitem__(self, grid):
            return lambda *args, stream=None: None

    class Jit:
        def __getitem__(self, grid):
            return lambda *args, **kw: Compiled()

    k.gemm_kernel, k.CompiledKernel, k._current_device = Jit(), Compiled, lambda: "cpu"
    k._check_args = lambda a, b, out: None
    return m, k


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--calls", type=int, default=5000)
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--shape", default="256x512x1024")
    args = p.parse_args()
    os.environ["TRITON_INTERPRET"] = "1"
    os.environ.setdefault("TILEC_CACHE", tempfile.mkdtemp())
    import torch

    M, N, K = (int(x) for x in args.shape.split("x"))
    m, k = module(kernel_file(M, N, K))
    a = torch.randn(M, K, dtype=torch.bfloat16)
    b = torch.randn(K, N, dtype=torch.bfloat16)
    out = torch.empty(M, N, dtype=torch.bfloat16)
    items = {"matmul": lambda: m.matmul(a, b), "matmul out=": lambda: m.matmul(a, b, out=out),
             "kernel run()": lambda: k.run(a, b),
             "torch.empty": lambda: torch.empty((M, N), dtype=torch.bfloat16)}
    times: dict[str, list[float]] = {name: [] for name in items}
    for fn in items.values():
        fn()
        fn()
    for _ in range(args.rounds):
        for name, fn in items.items():
            t = time.perf_counter()
            for _ in range(args.calls):
                fn()
            times[name].append((time.perf_counter() - t) / args.calls * 1e6)
    print(f"{M}x{N}x{K}: " + "; ".join(f"{name} {statistics.median(v):.1f} us"
                                       for name, v in times.items()))


if __name__ == "__main__":
    main()
