"""Build a SIMT ``.cu`` with nvcc and run it from Python (ctypes + torch tensors) at any shape.

One library per configuration: ``kernel(A, B, C=None)`` takes the sizes and the leading
dimensions from the tensors on every call (``tilec_launch_<name>(A, B, C, M, N, K, lda, ldb,
ldc, stream)``) and the library picks the variant whose facts the launch meets
(:meth:`SimtKernel.variant` says which).  Bad input is refused before anything runs, with one
:class:`~tilec.codegen.cuda.launch.KernelArgumentError` naming the tensor, its shape and strides and what
is allowed.

Example (on a machine with an sm_90 GPU)::

    >>> from tilec.runtime.loader import load_schedule                                # doctest: +SKIP
    >>> from tilec.transforms.simt.lower import lower_simt                         # doctest: +SKIP
    >>> k = build(lower_simt(load_schedule("examples/simt_warp_tiled.py", {}).fusion))  # doctest: +SKIP
    >>> C = k(A, B)            # any M x K and K x N fp32 CUDA tensors                # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

from tilec.codegen.cuda.launch import compile_cu
from tilec.errors import KernelArgumentError
from tilec.transforms.simt.lower import SimtPlan

CODES = {-2: "a negative size", -3: "a leading dimension shorter than its row",
         -4: "an element index past 32 bits (int32 indexing)", -5: "no variant"}


def _rows(name: str, t: Any, device_type: str) -> tuple[int, int, int]:
    """(rows, cols, leading dimension) of a row-major fp32 matrix operand, or a KernelArgumentError."""
    import torch

    if not isinstance(t, torch.Tensor):
        raise KernelArgumentError(f"SIMT kernel: {name} must be a torch.Tensor but got {type(t).__name__}")
    desc = f"{name} (shape {tuple(t.shape)}, strides {tuple(t.stride())}, {t.dtype}, {t.device})"
    if t.dim() != 2:
        raise KernelArgumentError(f"SIMT kernel: {desc} must be a matrix (2 dimensions)")
    if t.dtype != torch.float32:
        raise KernelArgumentError(f"SIMT kernel: {desc} must be torch.float32 (an fp32 kernel)")
    if t.device.type != device_type:
        raise KernelArgumentError(f"SIMT kernel: {desc} must be on a {device_type.upper()} device")
    r, c = t.shape
    s0, s1 = t.stride()
    ld = s0 if r > 1 else max(c, 1)
    if (c > 1 and s1 != 1) or (r > 1 and s0 < max(c, 1)):
        raise KernelArgumentError(f"SIMT kernel: {desc} must be row-major with unit column stride, "
                          f"strides (ld, 1) with ld >= {max(c, 1)}; pass .contiguous()")
    return r, c, max(ld, 1)


def operands(A: Any, B: Any, C: Any = None, *, device_type: str = "cuda"
             ) -> tuple[int, int, int, int, int, int]:
    """``(M, N, K, lda, ldb, ldc)`` of a launch ``C = A @ B``, after checking every operand
    (a KernelArgumentError names the first one the kernel cannot take: not a fp32 row-major matrix on
    the device, K of A and B different, C of the wrong shape, on another device, or
    overlapping A or B).  ``C`` None: ``ldc = N``."""
    M, K, lda = _rows("A", A, device_type)
    K2, N, ldb = _rows("B", B, device_type)
    if K2 != K:
        raise KernelArgumentError(f"SIMT kernel: A (shape {tuple(A.shape)}) @ B (shape {tuple(B.shape)}): "
                          f"B must have K = {K} rows (A's columns) but has {K2}")
    if B.device != A.device:
        raise KernelArgumentError(f"SIMT kernel: B is on {B.device} but A on {A.device}")
    if C is None:
        return M, N, K, lda, ldb, max(N, 1)
    Mc, Nc, ldc = _rows("C", C, device_type)
    if (Mc, Nc) != (M, N):
        raise KernelArgumentError(f"SIMT kernel: C (shape {tuple(C.shape)}, strides {tuple(C.stride())}) "
                          f"must have shape ({M}, {N}) for A {tuple(A.shape)} @ B {tuple(B.shape)}")
    if C.device != A.device:
        raise KernelArgumentError(f"SIMT kernel: C is on {C.device} but A on {A.device}")
    for name, t in (("A", A), ("B", B)):
        if _overlap(C, t):
            raise KernelArgumentError(f"SIMT kernel: C (shape {tuple(C.shape)}, strides {tuple(C.stride())}) "
                              f"overlaps {name} (shape {tuple(t.shape)}, strides {tuple(t.stride())}); "
                              f"the output must not alias an input")
    return M, N, K, lda, ldb, ldc


def _overlap(x: Any, y: Any) -> bool:
    """The byte ranges of two tensors' storage spans intersect (a conservative alias test)."""
    if x.numel() == 0 or y.numel() == 0:
        return False

    def span(t: Any) -> tuple[int, int]:
        lo = t.data_ptr()
        hi = lo + t.element_size() * (1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride(), strict=True)))
        return lo, hi

    (a0, a1), (b0, b1) = span(x), span(y)
    return a0 < b1 and b0 < a1


class SimtKernel:
    """A built SIMT library: ``kernel(A, B, C=None, stream=None) -> C`` for any shape."""

    def __init__(self, plan: SimtPlan, lib_path: Path) -> None:
        self.plan = plan
        self.path = lib_path
        self.lib = ctypes.CDLL(str(lib_path))
        name = plan.name
        self._launch = getattr(self.lib, f"tilec_launch_{name}")
        self._launch.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 6 + [ctypes.c_void_p]
        self._launch.restype = ctypes.c_int
        self._variant = getattr(self.lib, f"tilec_variant_{name}")
        self._variant.argtypes = [ctypes.c_void_p] * 3 + [ctypes.c_int] * 6
        self._variant.restype = ctypes.c_int
        from tilec.codegen.cuda.simt.printer import SimtCudaPrinter

        printer = SimtCudaPrinter(plan)
        printer.emit()  # the variants the file keeps
        self.variants = [v.name for v in printer.variants]

    def variant(self, A: Any, B: Any, C: Any) -> str:
        """The variant a launch on these tensors runs (the first whose facts hold)."""
        M, N, K, lda, ldb, ldc = operands(A, B, C)
        return self.variants[self._variant(A.data_ptr(), B.data_ptr(), C.data_ptr(),
                                           M, N, K, lda, ldb, ldc)]

    def __call__(self, A: Any, B: Any, C: Any = None, stream: Any = None) -> Any:
        import torch

        M, N, K, lda, ldb, ldc = operands(A, B, C)
        if C is None:
            C = torch.empty((M, N), dtype=torch.float32, device=A.device)
        major, minor = torch.cuda.get_device_capability(A.device)
        if (major, minor) != (9, 0):
            raise KernelArgumentError(f"{self.plan.name}: built for sm_90a but {A.device} has compute "
                              f"capability {major}.{minor}")
        s = stream if stream is not None else torch.cuda.current_stream(A.device)
        with torch.cuda.device(A.device):
            rc = self._launch(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, N, K, lda, ldb, ldc,
                              ctypes.c_void_p(s.cuda_stream))
        if rc < 0:
            raise KernelArgumentError(f"{self.plan.name}: A {tuple(A.shape)} strides {tuple(A.stride())}, "
                              f"B {tuple(B.shape)} strides {tuple(B.stride())}, C {tuple(C.shape)} "
                              f"strides {tuple(C.stride())}: {CODES.get(rc, rc)}")
        if rc != 0:
            raise KernelArgumentError(f"{self.plan.name}: launch failed with cudaError_t {rc}")
        return C


def build(plan: SimtPlan, cache_dir: str | os.PathLike[str] | None = None,
          source: str | None = None) -> SimtKernel:
    """Print ``plan`` (or take ``source``), build a shared library with nvcc (cached by the
    source's hash: one build per configuration, whatever the shapes), load it."""
    from tilec.codegen.cuda.simt.printer import emit_simt

    src = source if source is not None else emit_simt(plan)
    key = hashlib.sha1(src.encode()).hexdigest()[:16]
    root = Path(cache_dir) if cache_dir else Path(
        os.environ.get("TILEC_CUDA_CACHE", Path(tempfile.gettempdir()) / "tilec_cuda"))
    lib = root / f"{plan.name}_{key}.so"
    if not lib.exists():
        tmp = lib.with_name(f"{lib.stem}.{os.getpid()}.{threading.get_ident()}.so")
        compile_cu(src, tmp, shared=True, werror=False)
        os.replace(tmp, lib)
    return SimtKernel(plan, lib)
