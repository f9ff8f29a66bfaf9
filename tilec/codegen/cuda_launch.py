"""Build a generated ``.cu`` with nvcc and launch it from Python (ctypes + torch tensors).

Example (on a machine with an sm_90 GPU)::

    >>> from tilec.codegen.cuda_seed import seed_plan           # doctest: +SKIP
    >>> k = build(seed_plan(M=4096, N=4096, K=4096, CM=2, CN=1))  # doctest: +SKIP
    >>> C = k(A, B_nk)                                          # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from pathlib import Path
from typing import Any

from tilec.codegen.cuda import CudaPrinter
from tilec.errors import TilecError
from tilec.transforms.plan import DType, KernelPlan

NVCC_FLAGS = ("-gencode=arch=compute_90a,code=sm_90a", "-O3", "-std=c++17", "-lineinfo")


class CudaBuildError(TilecError):
    """nvcc failed (or warned, under ``werror=True``) on a generated file."""


def nvcc() -> str:
    path = shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not Path(path).exists():
        raise CudaBuildError("nvcc not found on PATH nor at /usr/local/cuda/bin/nvcc")
    return path


def compile_cu(source: str, out: Path, *, shared: bool, werror: bool = True,
               extra: tuple[str, ...] = ()) -> str:
    """Compile ``source`` to ``out`` (an object file, or a shared library when ``shared``).

    Returns nvcc's diagnostics; raises :class:`CudaBuildError` on failure, or on any warning
    when ``werror``.
    """
    out.parent.mkdir(parents=True, exist_ok=True)
    cu = out.with_suffix(".cu")
    cu.write_text(source)
    cmd = [nvcc(), *NVCC_FLAGS, *extra, str(cu), "-o", str(out)]
    cmd += ["-shared", "-Xcompiler", "-fPIC"] if shared else ["-c"]
    proc = subprocess.run(cmd, capture_output=True, text=True)
    diag = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise CudaBuildError(f"nvcc failed on {cu}:\n{diag}")
    if werror and "warning" in diag.lower():
        raise CudaBuildError(f"nvcc warned on {cu}:\n{diag}")
    return diag


class CudaKernel:
    """A built kernel: ``kernel(A, B_nk, C=None, stream=None) -> C`` on torch CUDA tensors."""

    def __init__(self, plan: KernelPlan, lib_path: Path) -> None:
        self.plan = plan
        self.path = lib_path
        self.lib = ctypes.CDLL(str(lib_path))
        name = CudaPrinter(plan).cname
        self._launch = getattr(self.lib, f"{name}_launch")
        self._launch.argtypes = [ctypes.c_void_p] * 4
        self._launch.restype = ctypes.c_int
        self._clusters = getattr(self.lib, f"{name}_max_active_clusters")
        self._clusters.restype = ctypes.c_int

    def max_active_clusters(self) -> int:
        return int(self._clusters())

    def __call__(self, A: Any, B: Any, C: Any = None, stream: Any = None) -> Any:
        import torch

        p = self.plan
        tdt = {DType.BF16: torch.bfloat16, DType.FP16: torch.float16, DType.FP32: torch.float32}
        for name, t, shape in (("A", A, (p.M, p.K)), ("B", B, (p.N, p.K))):
            if tuple(t.shape) != shape or t.dtype != tdt[p.dtype] or not t.is_contiguous():
                raise TilecError(
                    f"operand {name}: expected a contiguous {p.dtype.value} tensor of shape {shape} "
                    f"but got {t.dtype} {tuple(t.shape)} (contiguous={t.is_contiguous()})"
                )
        if C is None:
            C = torch.empty((p.M, p.N), dtype=tdt[p.c_dtype], device=A.device)
        s = stream if stream is not None else torch.cuda.current_stream(A.device)
        rc = self._launch(A.data_ptr(), B.data_ptr(), C.data_ptr(), ctypes.c_void_p(s.cuda_stream))
        if rc != 0:
            raise RuntimeError(f"{p.name}: launch failed with code {rc}")
        return C


def build(plan: KernelPlan, cache_dir: str | os.PathLike[str] | None = None,
          source: str | None = None) -> CudaKernel:
    """Print ``plan`` (or take ``source``), build a shared library with nvcc, load it."""
    from tilec.codegen.cuda import emit

    src = source if source is not None else emit(plan)
    key = hashlib.sha1(src.encode()).hexdigest()[:16]
    root = Path(cache_dir) if cache_dir else Path(os.environ.get("TILEC_CUDA_CACHE", Path(tempfile.gettempdir()) / "tilec_cuda"))
    lib = root / f"{CudaPrinter(plan).cname}_{key}.so"
    if not lib.exists():
        # build under a private name, then rename: two threads building the same source (equal
        # plans) must never load a half-written library
        tmp = lib.with_name(f"{lib.stem}.{os.getpid()}.{threading.get_ident()}.so")
        compile_cu(src, tmp, shared=True, werror=False)
        os.replace(tmp, lib)
    return CudaKernel(plan, lib)
