"""Build a generated ``.cu`` with nvcc and launch it from Python (ctypes + torch tensors).

One kernel serves every shape: M, N, K and the row strides are launch arguments; the work
split's numbers at the launch's sizes come from :func:`run_split` (the plan's rule,
``plan.split.at``, made per shape and kept), and the file's launcher picks the variant
(``facts_hold``).

Example (on a machine with an sm_90 GPU)::

    >>> from tilec.runtime.loader import load_schedule                          # doctest: +SKIP
    >>> from tilec.runtime.build import kernel_plan                     # doctest: +SKIP
    >>> s = load_schedule("examples/seed004_persistent_cluster.py", {"M": 4096})  # doctest: +SKIP
    >>> k = build(kernel_plan(s, target="cuda"))                       # doctest: +SKIP
    >>> C = k(A, B_nk)             # any M, N, K                         # doctest: +SKIP
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
from tilec.codegen.cuda.printer.file import LAUNCH_ERRORS
from tilec.codegen.cuda.printer.work import RUN_BOUNDS, STREAM_K_KINDS
from tilec.dtypes import torch_dtype
from tilec.errors import KernelArgumentError, TilecError
from tilec.ir import ceil_div
from tilec.transforms.plan import DType, KernelPlan, WorkSplit

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


def run_split(plan: KernelPlan, M: int, N: int, K: int) -> WorkSplit:
    """The plan's work split at sizes M, N, K (each >= 1): its rule made at them
    (``plan.split.at``, lowering's own rule; at the plan's sizes it is ``plan.work``).  A plan
    without a rule (fixed sizes) runs only at its own sizes."""
    if plan.fixed_sizes and (M, N, K) != (plan.M, plan.N, plan.K):
        raise KernelArgumentError(f"{plan.name}: the schedule could not be lowered over symbolic "
                                  f"sizes, so this kernel serves only {plan.M} x {plan.N} x "
                                  f"{plan.K} but the launch is {M} x {N} x {K}")
    if plan.split is not None:
        return plan.split.at(M, N, K)
    if (M, N, K) != (plan.M, plan.N, plan.K):
        raise KernelArgumentError(f"{plan.name}: the plan has fixed sizes {plan.M} x {plan.N} x {plan.K} "
                          f"(no work-split rule) but the launch is {M} x {N} x {K}")
    return plan.work


def launch_numbers(plan: KernelPlan, split: WorkSplit) -> tuple[int, int, int, int]:
    """(grid, splits, sk_tiles, sk_ctas) of ``split`` as the file's launcher takes them."""
    if split.kind in STREAM_K_KINDS:
        return split.grid, 1, split.sk_tiles, split.sk_ctas
    return split.grid, split.splits, 0, 0


def check_bounds(plan: KernelPlan, M: int, N: int, K: int) -> None:
    """Sizes the kernel's ``int`` arithmetic and the printed work formulas are sized for
    (:data:`~tilec.codegen.cuda.printer.work.RUN_BOUNDS`), else a :class:`KernelArgumentError`."""
    k_iters = ceil_div(K, plan.BK)
    groups = ceil_div(ceil_div(M, plan.BM) * ceil_div(N, plan.BN), plan.cluster[0])
    if max(M, N, K) > 2**31 - 1 or k_iters > RUN_BOUNDS["K_ITERS"] or groups > RUN_BOUNDS["GROUPS"]:
        raise KernelArgumentError(f"{plan.name}: M, N, K = {M}, {N}, {K} is past the kernel's bounds "
                          f"(each below 2**31, K / BK at most {RUN_BOUNDS['K_ITERS']}, tile "
                          f"groups at most {RUN_BOUNDS['GROUPS']})")


def row_pad(cols: int, elem: int) -> int:
    """The row stride (elements) TMA takes for rows of ``cols`` elements of ``elem`` bytes: the
    row rounded up to a multiple of 16 bytes.

    >>> row_pad(4097, 2), row_pad(4096, 2), row_pad(3, 4)
    (4104, 4096, 4)
    """
    return ceil_div(cols * elem, 16) * 16 // elem


def check_rows(kernel: str, name: str, shape: tuple[int, int], strides: tuple[int, int],
               elem: int, ptr: int, tma: bool = True) -> int:
    """Operand ``name`` (row-major ``shape``, ``strides`` in elements, ``elem`` bytes each,
    base address ``ptr``) as TMA takes it: unit column stride, a row stride at least the row
    and (``tma``) a multiple of 16 bytes, a 16-byte aligned base.  Its row stride, else a
    :class:`KernelArgumentError` naming the tensor, its shape and strides.

    >>> check_rows("k", "A", (100, 40), (40, 1), 2, 0)
    40
    >>> check_rows("k", "A", (100, 36), (36, 1), 2, 0)
    Traceback (most recent call last):
    ...
    tilec.errors.KernelArgumentError: k: operand A of shape (100, 36) and strides (36, 1): TMA needs a row stride of a multiple of 16 bytes but it is 72 bytes (pad the rows to 40 elements)
    """
    rows, cols = shape
    ld, one = (strides[0], strides[1]) if rows > 1 else (max(strides[0], cols), strides[1])
    where = f"operand {name} of shape {shape} and strides {strides}"
    if cols > 1 and one != 1:
        raise KernelArgumentError(f"{kernel}: {where} must be row-major (strides (ld, 1))")
    if rows * cols == 0:
        return max(ld, cols, 1)
    if ld < cols:
        raise KernelArgumentError(f"{kernel}: {where}: its row stride {ld} is shorter than its rows "
                          f"({cols} elements)")
    if tma and (ld * elem) % 16:
        raise KernelArgumentError(f"{kernel}: {where}: TMA needs a row stride of a multiple of 16 bytes "
                          f"but it is {ld * elem} bytes (pad the rows to "
                          f"{row_pad(cols, elem)} elements)")
    if tma and ptr % 16:
        raise KernelArgumentError(f"{kernel}: {where} must be 16-byte aligned for TMA but starts at "
                          f"0x{ptr:x}")
    return ld


class CudaKernel:
    """A built kernel: ``kernel(A, B, C=None, stream=None) -> C`` on torch CUDA tensors, for any
    M, N, K >= 0.

    A is M x K, B is N x K (the plan's ``b.transposed``) or K x N, C is M x N, each row-major
    with a row stride (``stride(0)``) TMA can take: A and B at least the row, a multiple of 16
    bytes, the base 16-byte aligned (else :class:`KernelArgumentError` naming the tensor, its shape and
    strides); ``C=None`` allocates C, its rows padded to 16 bytes where a TMA-store epilogue
    needs it (C is then a view of a wider buffer); a given C whose rows TMA cannot store is
    written through a padded copy.  On one CUDA device of compute capability 9.0 with room
    for the kernel's shared memory.  The fix-up workspace of split-K / Stream-K plans is
    allocated per device, grown to the largest launch so far and kept (the kernel leaves it
    clean); launches of one kernel object must be stream-ordered.  A plan with the
    reduce-kernel fix-up (split-K) launches its second kernel, which sums the partials and
    writes C, after the GEMM on the same stream.
    """

    def __init__(self, plan: KernelPlan, lib_path: Path) -> None:
        self.plan = plan
        self.path = lib_path
        self.lib = ctypes.CDLL(str(lib_path))
        self.printer = printer = CudaPrinter(plan)
        name = printer.cname
        self.smem_bytes = printer.shape.smem_bytes
        self.tma_store = printer.shape.tma_store
        self._launch = getattr(self.lib, f"{name}_launch")
        self._launch.argtypes = ([ctypes.c_void_p] * 6 + [ctypes.c_int] * 3
                                 + [ctypes.c_longlong] * 3 + [ctypes.c_int] * 5)
        self._launch.restype = ctypes.c_int
        self._variant = getattr(self.lib, f"{name}_variant")
        self._variant.argtypes = [ctypes.c_int] * 3 + [ctypes.c_longlong] + [ctypes.c_int] * 4
        self._variant.restype = ctypes.c_int
        self._clusters = getattr(self.lib, f"{name}_max_active_clusters")
        self._clusters.restype = ctypes.c_int
        self._ws: dict[int, tuple[Any, Any]] = {}
        self._splits: dict[tuple[int, int, int], WorkSplit] = {}
        self._devices: set[tuple[Any, int]] = set()

    def max_active_clusters(self) -> int:
        return int(self._clusters())

    def split(self, M: int, N: int, K: int) -> WorkSplit:
        """The work split at M, N, K (:func:`run_split`), kept per shape."""
        key = (M, N, K)
        if key not in self._splits:
            self._splits[key] = run_split(self.plan, M, N, K)
        return self._splits[key]

    def variant(self, M: int, N: int, K: int, ldc: int | None = None) -> str:
        """Which variant a launch at these sizes runs: "closed" (its facts hold) or "general"."""
        grid, splits, sk_tiles, sk_ctas = launch_numbers(self.plan, self.split(M, N, K))
        facts = self._variant(M, N, K, N if ldc is None else ldc, grid, splits, sk_tiles, sk_ctas)
        return "closed" if facts else "general"

    def c_copy_stride(self, C: Any) -> int | None:
        """None where the kernel writes C in place; else the row stride of the padded copy it
        writes (copied into C after it): rows TMA stores cannot take (a row stride not a multiple
        of 16 bytes, a misaligned base) or a base the direct epilogue's pairs cannot."""
        ldc, elem = C.stride()[0], C.element_size()
        if (self.tma_store and ((ldc * elem) % 16 or C.data_ptr() % 16)) \
                or C.data_ptr() % (2 * elem):
            return row_pad(C.shape[1], elem)
        return None

    def _operand(self, name: str, t: Any, rows: int, cols: int, dtype: Any, device: Any,
                 tma: bool = True) -> int:
        """Check one operand (``rows x cols``, row-major with a row stride TMA can take); its row
        stride."""
        import torch

        p = self.plan
        if not isinstance(t, torch.Tensor):
            raise KernelArgumentError(f"{p.name}: operand {name} must be a torch.Tensor but got "
                              f"{type(t).__name__}")
        if t.device.type != "cuda" or (device is not None and t.device != device):
            raise KernelArgumentError(f"{p.name}: operand {name} must be on "
                              f"{device or 'a CUDA device'} but is on {t.device}")
        if tuple(t.shape) != (rows, cols):
            raise KernelArgumentError(f"{p.name}: operand {name} must have shape {(rows, cols)} but has "
                              f"{tuple(t.shape)}")
        if t.dtype != dtype:
            raise KernelArgumentError(f"{p.name}: operand {name} must be {dtype} but is {t.dtype}")
        return check_rows(p.name, name, tuple(t.shape), tuple(t.stride()), t.element_size(),
                          t.data_ptr(), tma)

    def __call__(self, A: Any, B: Any, C: Any = None, stream: Any = None,
                 variant: str | None = None) -> Any:
        """C = A @ B (B^T for an N x K B). ``variant`` "closed" / "general" forces one (a
        measurement; "closed" where its facts do not hold is refused); None: the launcher's
        choice."""
        import torch

        p = self.plan
        tdt = {d: torch_dtype(d) for d in (DType.BF16, DType.FP16, DType.FP32)}
        if not isinstance(A, torch.Tensor) or A.dim() != 2 or not isinstance(B, torch.Tensor) \
                or B.dim() != 2:
            raise KernelArgumentError(f"{p.name}: A and B must be 2-D torch tensors but got "
                              f"{getattr(A, 'shape', type(A).__name__)} and "
                              f"{getattr(B, 'shape', type(B).__name__)}")
        M, K = A.shape
        N = B.shape[0] if p.b.transposed else B.shape[1]
        check_bounds(p, M, N, K)
        lda = self._operand("A", A, M, K, tdt[p.dtype], None)
        dev = A.device
        b_shape = (N, K) if p.b.transposed else (K, N)
        if tuple(B.shape) != b_shape:
            raise KernelArgumentError(f"{p.name}: operand B must have shape {b_shape} "
                              f"({'N x K' if p.b.transposed else 'K x N'}, K = {K} from A) but has "
                              f"{tuple(B.shape)}")
        ldb = self._operand("B", B, *b_shape, tdt[p.dtype], dev)
        if (dev, self.smem_bytes) not in self._devices:  # checked once per device
            major, minor = torch.cuda.get_device_capability(dev)
            if (major, minor) != (9, 0):
                raise KernelArgumentError(f"{p.name}: built for sm_90a but {dev} has compute capability "
                                  f"{major}.{minor}")
            props = torch.cuda.get_device_properties(dev)
            room = getattr(props, "shared_memory_per_block_optin", None)
            if room is not None and self.smem_bytes > room:
                raise KernelArgumentError(f"{p.name}: needs {self.smem_bytes} bytes of shared memory per "
                                  f"CTA but {dev} allows {room}: use fewer stages or a smaller tile")
            self._devices.add((dev, self.smem_bytes))
        if C is None:
            cdt = tdt[p.c_dtype]
            elem = torch.tensor([], dtype=cdt).element_size()
            pad = row_pad(N, elem) if self.tma_store else N
            C = torch.empty((M, max(pad, 1)), dtype=cdt, device=dev)[:, :N]
        ldc = self._operand("C", C, M, N, tdt[p.c_dtype], dev, tma=False)
        if M == 0 or N == 0:
            return C
        if K == 0:
            return C.zero_()
        out = C
        pad = self.c_copy_stride(C)
        if pad is not None:  # the kernel writes a padded copy, copied into C after it
            C = torch.empty((M, pad), dtype=C.dtype, device=dev)[:, :N]
            ldc = pad
        split = self.split(M, N, K)
        grid, splits, sk_tiles, sk_ctas = launch_numbers(p, split)
        ws, tickets = 0, 0
        floats, count_ = self.printer.workspace(split)
        if floats or count_:  # (the reduce kernel's slots take no tickets)
            key = dev.index if dev.index is not None else torch.cuda.current_device()
            have = self._ws.get(key)
            if have is None or have[0].numel() < floats or have[1].numel() < count_:
                # grown: zeroed (the kernel leaves what it used clean)
                self._ws[key] = (torch.zeros(max(floats, 1), dtype=torch.float32, device=dev),
                                 torch.zeros(max(count_, 1), dtype=torch.int32, device=dev))
            ws, tickets = (t.data_ptr() for t in self._ws[key])
        s = stream if stream is not None else torch.cuda.current_stream(dev)
        if variant not in (None, "general", "closed"):
            raise KernelArgumentError(f"{p.name}: variant must be None, 'general' or 'closed' but got "
                              f"{variant!r}")
        v = {None: -1, "general": 0, "closed": 1}[variant]
        with torch.cuda.device(dev):
            rc = self._launch(A.data_ptr(), B.data_ptr(), C.data_ptr(), ws, tickets,
                              ctypes.c_void_p(s.cuda_stream), M, N, K, lda, ldb, ldc,
                              grid, splits, sk_tiles, sk_ctas, v)
        if rc != 0:
            raise KernelArgumentError(launch_error(p.name, rc, {"A": A, "B": B, "C": C}))
        if out is not C:
            out.copy_(C)
        return out


def launch_error(name: str, rc: int, tensors: dict[str, Any]) -> str:
    """The message of a launcher's return code (the file's ``LAUNCH_ERRORS``, a tensor-map
    encoder error, or a cudaError_t), naming the tensor, its shape and strides."""
    if rc in LAUNCH_ERRORS:
        op, what = LAUNCH_ERRORS[rc]
        t = tensors.get(op or "")
        about = (f"operand {op} of shape {tuple(t.shape)} and strides {tuple(t.stride())}: "
                 if t is not None else "")
        return f"{name}: launch refused (code {rc}): {about}{what}"
    if 1000 <= rc < 3000:
        return f"{name}: the TMA tensor-map encoder failed (code {rc}: 1000 no driver entry " \
               f"point, 2000 + a CUresult)"
    return f"{name}: launch failed with cudaError_t {rc}"


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
