"""Build a SIMT ``.cu`` with nvcc and run it from Python (ctypes + torch tensors) at any shape.

One library per configuration: ``kernel(A, B, C=None)`` takes the sizes and the leading
dimensions from the tensors on every call (``tilec_launch_<name>(A, B, C, M, N, K, lda, ldb,
ldc, stream)``) and the library picks the variant whose facts the launch meets
(:meth:`SimtKernel.variant` says which).  Bad input is refused before anything runs, with one
:class:`~tilec.codegen.cuda.launch.KernelArgumentError` naming the tensor, its shape and strides and what
is allowed.

**Padding** (:func:`tilec.transforms.simt.padding.padding` decides, :func:`run_padded` copies): where a launch's sizes or leading dimensions
miss a faster variant's facts (N or K not a multiple of 4: the ``general`` variant's scalar
accesses, about 1.24x the ``tiles`` time; M, N or K not a multiple of the tile: ``aligned``'s
predicates, about 1.10x), the launcher may copy the operands that miss them into zero-padded
workspace buffers that meet them (zero K columns of A and rows of B leave the product unchanged;
rows of A and columns of B past M and N only reach rows and columns of C that are not copied
back), run that variant at the padded sizes into a padded C when C misses them, and copy C's
valid part back; ``ragged_n`` (M and K on the tiles, B's rows of 4 elements: N and C
anything) writes the caller's C, so where only C's rows miss the vector rule (N not a multiple
of 4) B alone is copied, into rows of N rounded up to 4.  It does when the SIMT cost model (:mod:`tilec.transforms.simt.cost`) expects
the copies (their bytes at the card's bandwidth, a few microseconds per copy kernel) and the
faster variant to beat the variant the launch meets as it is: never for small problems, where
the copies dominate.  ``kernel(A, B, C, pad=...)`` or ``TILEC_SIMT_PAD`` overrides: ``auto``
(the model), ``never``, ``tiles``, ``ragged_n`` or ``aligned`` (pad to that variant's facts
whenever the launch misses them); :meth:`SimtKernel.decide` says what a launch does and why.  The workspaces are
cached per device, stream and operand, grown to the largest launch.

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
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tilec.codegen.cuda.launch import compile_cu
from tilec.errors import KernelArgumentError
from tilec.transforms.simt.lower import SimtPlan
from tilec.transforms.simt.padding import Padding, padding

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


class Workspace:
    """Buffers for padded operands, one per (device, stream, operand), grown to the largest
    request; :meth:`get` returns a contiguous ``rows x cols`` view of one."""

    def __init__(self) -> None:
        self._buf: dict[tuple[str, int, str], Any] = {}

    def get(self, like: Any, role: str, rows: int, cols: int, stream: int = 0) -> Any:
        import torch

        key = (str(like.device), stream, role)
        buf = self._buf.get(key)
        if buf is None or buf.numel() < rows * cols:
            buf = torch.empty(rows * cols, dtype=like.dtype, device=like.device)
            self._buf[key] = buf
        return buf[:rows * cols].view(rows, cols)


def run_padded(A: Any, B: Any, C: Any, p: Padding, launch: Callable[[Any, Any, Any], Any],
               workspace: Workspace, stream: int = 0) -> Any:
    """``C = A @ B`` as ``p`` says: the operands ``p`` copies into workspace buffers of the
    padded sizes (A's columns and B's rows past K zeroed; the rows and columns past M and N
    left as they are: they reach only what is not copied back), ``launch(a, b, c)`` on the
    padded operands, C's valid part copied back.  Torch operations on the current stream."""
    M, K = A.shape
    N = B.shape[1]
    a, b, c = A, B, C
    if p.copy_a:
        a = workspace.get(A, "A", p.M, p.K, stream)
        a[:M, :K].copy_(A)
        if p.K > K:
            a[:, K:].zero_()
    if p.copy_b:  # rows of b_cols, the launch's N columns of them
        b = workspace.get(B, "B", p.K, p.b_cols or p.N, stream)
        b[:K, :N].copy_(B)
        if p.K > K:
            b[K:].zero_()
        b = b[:, :p.N]
    if p.copy_c:
        c = workspace.get(C, "C", p.M, p.c_cols or p.N, stream)[:, :p.N]
    launch(a, b, c)
    if p.copy_c:
        C.copy_(c[:M, :N])
    return C


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
        self.facts = [(v.name, v.facts) for v in printer.variants]
        self.pad = os.environ.get("TILEC_SIMT_PAD", "auto")
        self.workspace = Workspace()

    def estimate(self, variant: str, M: int, N: int, K: int, device_name: str = "H100") -> float:
        """The cost model's time (s) of a launch of ``variant`` at ``M x N x K``
        (:func:`tilec.transforms.simt.cost.estimate` with this plan's tile and work split)."""
        from tilec.transforms.simt import cost

        p = self.plan
        bk = p.staging.BK if p.staging is not None else 1
        row = cost.row_of(p.BM, p.BN, bk, p.threads, p.options.min_blocks)
        kind = p.decomposition.kind.value if p.decomposition and p.decomposition.kind else "dp"
        decomp = kind if kind in cost.DECOMPS else "streamk"
        splits = p.decomposition.splits if p.decomposition else 1
        return cost.estimate(row, decomp, M, N, K, cost.card_of(device_name), variant,
                             splits=splits)

    def decide(self, A: Any, B: Any, C: Any, pad: str | None = None) -> Padding:
        """What a launch on these tensors does (:func:`padding`; ``pad`` None: ``self.pad``,
        ``TILEC_SIMT_PAD`` or ``auto``)."""
        from tilec.transforms.simt import cost

        M, N, K, lda, ldb, ldc = operands(A, B, C, device_type=A.device.type)
        name = torch_device_name(A)
        card = cost.card_of(name)
        return padding(M, N, K, lda, ldb, ldc, (A.data_ptr(), B.data_ptr(), C.data_ptr()),
                       self.facts, lambda v, m, n, k: self.estimate(v, m, n, k, name),
                       card.dram * cost.DEFAULT.dram_efficiency, pad or self.pad)

    def variant(self, A: Any, B: Any, C: Any) -> str:
        """The variant a launch on these tensors runs (the first whose facts hold)."""
        M, N, K, lda, ldb, ldc = operands(A, B, C)
        return self.variants[self._variant(A.data_ptr(), B.data_ptr(), C.data_ptr(),
                                           M, N, K, lda, ldb, ldc)]

    def __call__(self, A: Any, B: Any, C: Any = None, stream: Any = None,
                 pad: str | None = None) -> Any:
        import torch

        M, N, *_ = operands(A, B, C)
        if C is None:
            C = torch.empty((M, N), dtype=torch.float32, device=A.device)
        major, minor = torch.cuda.get_device_capability(A.device)
        if (major, minor) != (9, 0):
            raise KernelArgumentError(f"{self.plan.name}: built for sm_90a but {A.device} has compute "
                              f"capability {major}.{minor}")
        s = stream if stream is not None else torch.cuda.current_stream(A.device)
        p = self.decide(A, B, C, pad)
        with torch.cuda.device(A.device), torch.cuda.stream(s):
            if p.padded:
                run_padded(A, B, C, p, lambda a, b, c: self._run(a, b, c, s), self.workspace,
                           s.cuda_stream)
            else:
                self._run(A, B, C, s)
        return C

    def _run(self, A: Any, B: Any, C: Any, s: Any) -> None:
        """The library's launch on these tensors (checked by :func:`operands`) on stream ``s``."""
        M, N, K, lda, ldb, ldc = operands(A, B, C)
        rc = self._launch(A.data_ptr(), B.data_ptr(), C.data_ptr(), M, N, K, lda, ldb, ldc,
                          ctypes.c_void_p(s.cuda_stream))
        if rc < 0:
            raise KernelArgumentError(f"{self.plan.name}: A {tuple(A.shape)} strides {tuple(A.stride())}, "
                              f"B {tuple(B.shape)} strides {tuple(B.stride())}, C {tuple(C.shape)} "
                              f"strides {tuple(C.stride())}: {CODES.get(rc, rc)}")
        if rc != 0:
            raise KernelArgumentError(f"{self.plan.name}: launch failed with cudaError_t {rc}")


def torch_device_name(t: Any) -> str:
    """The name of the device a tensor is on (``cpu`` for host tensors)."""
    import torch

    return torch.cuda.get_device_name(t.device) if t.device.type == "cuda" else "cpu"


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
