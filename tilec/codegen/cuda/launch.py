"""Build a generated ``.cu`` with nvcc and launch it from Python (ctypes + torch tensors).

Example (on a machine with an sm_90 GPU)::

    >>> from tilec.app.loader import load_schedule                          # doctest: +SKIP
    >>> from tilec.runtime.build import kernel_plan                     # doctest: +SKIP
    >>> s = load_schedule("examples/seed004_persistent_cluster.py", {"M": 4096})  # doctest: +SKIP
    >>> k = build(kernel_plan(s, target="cuda"))                       # doctest: +SKIP
    >>> C = k(A, B_nk)                                                 # doctest: +SKIP
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

from tilec.codegen.cuda.printer import CudaPrinter
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


class LaunchError(TilecError):
    """A launch of a built kernel with arguments it cannot run on (shape, dtype, layout, device)."""


class CudaKernel:
    """A built kernel: ``kernel(A, B, C=None, stream=None) -> C`` on torch CUDA tensors.

    A is M x K, B is N x K (the plan's ``b_transposed``), C is M x N, all contiguous, on one
    CUDA device of compute capability 9.0 with room for the kernel's shared memory.  The fix-up
    workspace of split-K / Stream-K plans is allocated on first use per device and kept (the
    kernel leaves it clean); launches of one kernel object must be stream-ordered.
    """

    def __init__(self, plan: KernelPlan, lib_path: Path) -> None:
        self.plan = plan
        self.path = lib_path
        self.lib = ctypes.CDLL(str(lib_path))
        printer = CudaPrinter(plan)
        name = printer.cname
        self.smem_bytes = printer.shape.smem_bytes
        self.workspace_floats, self.tickets = printer.workspace()
        self._launch = getattr(self.lib, f"{name}_launch")
        self._launch.argtypes = [ctypes.c_void_p] * 6
        self._launch.restype = ctypes.c_int
        self._clusters = getattr(self.lib, f"{name}_max_active_clusters")
        self._clusters.restype = ctypes.c_int
        self._ws: dict[int, tuple[Any, Any]] = {}

    def max_active_clusters(self) -> int:
        return int(self._clusters())

    def _check(self, name: str, t: Any, shape: tuple[int, int], dtype: Any, device: Any) -> None:
        import torch

        if not isinstance(t, torch.Tensor):
            raise LaunchError(f"{self.plan.name}: operand {name} must be a torch.Tensor but got "
                              f"{type(t).__name__}")
        if t.device.type != "cuda" or (device is not None and t.device != device):
            raise LaunchError(f"{self.plan.name}: operand {name} must be on "
                              f"{device or 'a CUDA device'} but is on {t.device}")
        if tuple(t.shape) != shape:
            raise LaunchError(f"{self.plan.name}: operand {name} must have shape {shape} but has "
                              f"{tuple(t.shape)}")
        if t.dtype != dtype:
            raise LaunchError(f"{self.plan.name}: operand {name} must be {dtype} but is {t.dtype}")
        if not t.is_contiguous():
            raise LaunchError(f"{self.plan.name}: operand {name} must be contiguous (row-major, "
                              f"strides {(shape[1], 1)}) but has strides {tuple(t.stride())}")
        if t.data_ptr() % 16:
            raise LaunchError(f"{self.plan.name}: operand {name} must be 16-byte aligned for TMA "
                              f"but starts at 0x{t.data_ptr():x}")

    def __call__(self, A: Any, B: Any, C: Any = None, stream: Any = None) -> Any:
        import torch

        p = self.plan
        tdt = {DType.BF16: torch.bfloat16, DType.FP16: torch.float16, DType.FP32: torch.float32}
        self._check("A", A, (p.M, p.K), tdt[p.dtype], None)
        dev = A.device
        self._check("B", B, (p.N, p.K) if p.b_transposed else (p.K, p.N), tdt[p.dtype], dev)
        major, minor = torch.cuda.get_device_capability(dev)
        if (major, minor) != (9, 0):
            raise LaunchError(f"{p.name}: built for sm_90a but {dev} has compute capability "
                              f"{major}.{minor}")
        props = torch.cuda.get_device_properties(dev)
        room = getattr(props, "shared_memory_per_block_optin", None)
        if room is not None and self.smem_bytes > room:
            raise LaunchError(f"{p.name}: needs {self.smem_bytes} bytes of shared memory per CTA "
                              f"but {dev} allows {room}: use fewer stages or a smaller tile")
        if C is None:
            C = torch.empty((p.M, p.N), dtype=tdt[p.c_dtype], device=dev)
        self._check("C", C, (p.M, p.N), tdt[p.c_dtype], dev)
        ws, tickets = 0, 0
        if self.tickets:
            key = dev.index if dev.index is not None else torch.cuda.current_device()
            if key not in self._ws:
                self._ws[key] = (torch.zeros(self.workspace_floats, dtype=torch.float32, device=dev),
                                 torch.zeros(self.tickets, dtype=torch.int32, device=dev))
            ws, tickets = (t.data_ptr() for t in self._ws[key])
        s = stream if stream is not None else torch.cuda.current_stream(dev)
        with torch.cuda.device(dev):
            rc = self._launch(A.data_ptr(), B.data_ptr(), C.data_ptr(), ws, tickets,
                              ctypes.c_void_p(s.cuda_stream))
        if rc != 0:
            raise LaunchError(f"{p.name}: launch failed with code {rc} (a cudaError_t; 1000+ / "
                              "2000+: the tensor-map encoder; 3000: C not 16-byte aligned)")
        return C


def build(plan: KernelPlan, cache_dir: str | os.PathLike[str] | None = None,
          source: str | None = None) -> CudaKernel:
    """Print ``plan`` (or take ``source``), build a shared library with nvcc, load it."""
    from tilec.codegen.cuda.printer import emit

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
