"""Host (CPU) time per call of the generated Triton launcher ``run()``, piece by piece, beside
torch.matmul's and the plain Triton kernel's: on small problems the kernel takes less GPU time than
``run()`` takes to launch it, and a benchmark that does not hide the launch measures the CPU.

    PYTHONPATH=. python bench/host_overhead.py      (GPU; writes $OUT/host_overhead.json)

Each figure: the median over 5 rounds of (time of N calls without synchronising) / N, after a
warm-up, with the GPU time of one call (do_bench, L2 flushed) beside it.
"""

from __future__ import annotations

import contextlib
import importlib.util
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import torch  # noqa: E402
from triton.tools.tensor_descriptor import TensorDescriptor  # noqa: E402

from tilec.app.cli import main as tilec  # noqa: E402
from tilec.runtime.bench import plain_matmul, time_ms  # noqa: E402

EX = ROOT / "examples" / "gemm_decomposition.py"
SHAPES = {"sq1024": (1024, 1024, 1024), "sq2048": (2048, 2048, 2048), "decode_m16": (16, 4096, 4096)}
N = 2000


def per_call_us(fn) -> float:
    for _ in range(50):
        fn()
    torch.cuda.synchronize()
    out = []
    for _ in range(5):
        t = time.perf_counter()
        for _ in range(N):
            fn()
        out.append((time.perf_counter() - t) / N * 1e6)
        torch.cuda.synchronize()
    return statistics.median(out)


def shape_row(name: str, M: int, Nn: int, K: int, work: Path) -> dict[str, float]:
    path = work / f"{name}.py"
    with contextlib.redirect_stderr(io.StringIO()):
        assert tilec(["gen", str(EX), f"--param=M={M}", f"--param=N={Nn}", f"--param=K={K}",
                      "--no-tuned", "-o", str(path)]) == 0
    spec = importlib.util.spec_from_file_location(f"k_{name}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    a = torch.randn((M, K), device="cuda", dtype=torch.bfloat16)
    b = torch.randn((K, Nn), device="cuda", dtype=torch.bfloat16)
    out = torch.empty((M, Nn), device="cuda", dtype=torch.bfloat16)
    r = {"gpu_us": time_ms(lambda: mod.run(a, b, out=out)) * 1e3,
         "cublas_gpu_us": time_ms(lambda: torch.matmul(a, b)) * 1e3,
         "run": per_call_us(lambda: mod.run(a, b, out=out)),
         "run_new_out": per_call_us(lambda: mod.run(a, b)),
         "torch.matmul": per_call_us(lambda: torch.matmul(a, b)),
         "plain_triton": per_call_us(lambda: plain_matmul(a, b, (128, 256, 64, 8, 3, 8))),
         "check_x3": per_call_us(lambda: (mod._check("A", a, tuple(a.shape), a.dtype),
                                          mod._check("B", b, tuple(b.shape), b.dtype),
                                          mod._check("out", out, tuple(out.shape), out.dtype))),
         "contiguous_x2": per_call_us(lambda: (a.contiguous(), b.contiguous())),
         "descriptors_x2": per_call_us(lambda: (
             TensorDescriptor(mod._aligned(a), shape=list(a.shape), strides=[K, 1],
                              block_shape=[16, 64]),
             TensorDescriptor(mod._aligned(b), shape=list(b.shape), strides=[Nn, 1],
                              block_shape=[64, 64])))}
    if hasattr(mod, "_workspace"):
        r["workspace"] = per_call_us(lambda: mod._workspace(out.device, 1024, 64))
        r["current_stream"] = per_call_us(lambda: torch.cuda.current_stream(out.device).cuda_stream)
    return r


def main() -> int:
    work = Path(tempfile.mkdtemp())
    rows = {}
    for name, (M, Nn, K) in SHAPES.items():
        rows[name] = r = shape_row(name, M, Nn, K, work)
        print(name, {k: round(v, 1) for k, v in r.items()}, flush=True)
    dest = Path(os.environ.get("OUT", ".")) / "host_overhead.json"
    dest.write_text(json.dumps({"device": torch.cuda.get_device_name(0), "calls": N,
                                "torch": torch.__version__, "rows": rows}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
