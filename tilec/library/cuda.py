"""The CUDA half of a library built with ``tilec build --target cuda``.

Above the marker, tilec's side: :func:`cuda_entry`, what the module needs of one config's plan
besides its kernel source (plain data: the file's function prefix, the work split's numbers as a
Python function of M, N, K, what sizes the fix-up workspace, whether C is stored by TMA).

From the marker on, the text is copied into the module after :mod:`tilec.library.runtime` (CUDA
modules only): nvcc builds each embedded ``.cu`` on its first use into the cache folder (once
per source, keyed by its digest and the flags; :func:`build_kernels` builds them ahead, in
parallel), ctypes loads it, and :class:`_CudaRun` launches a config's kernel the way
``tilec.codegen.cuda.launch.CudaKernel`` does: operands whose rows TMA cannot take (not a
multiple of 16 bytes) are copied into row-padded buffers, the work split's numbers come from the
config's rule at the shape, the fix-up workspace is kept per device and grown, the launch goes
on the current stream. tests/library/test_cuda_library.py holds the numbers and the workspace to
tilec's own (run_split, the printer's workspace) at many shapes.
"""
# ruff: noqa: F821, E402  (the data block's names and runtime's; the copied imports below the marker)

from __future__ import annotations

from typing import Any

from tilec.errors import TilecError


def cuda_entry(plan: Any) -> dict[str, Any]:
    """What the module's :class:`_CudaRun` reads of ``plan`` (a config lowered for the cuda
    target), else a :class:`TilecError` where the plan cannot serve every shape."""
    from tilec.codegen.cuda.printer import CudaPrinter
    from tilec.codegen.cuda.printer.work import STREAM_K_KINDS
    from tilec.transforms.plan import Decomposition

    if plan.split is None:
        raise TilecError(f"{plan.name}: the schedule was lowered with fixed sizes (no work-split "
                         f"rule), so its CUDA kernel serves one shape only")
    if plan.split.kind is Decomposition.DP_FRONT_TAIL:
        raise TilecError(f"{plan.name}: front/tail (dp_ft) has no CUDA kernel")
    printer = CudaPrinter(plan)
    k = printer.kernel
    return {"cname": printer.cname, "numbers": cuda_numbers(plan.split),
            "stream_k": plan.split.kind in STREAM_K_KINDS,
            "split_k": plan.split.kind is Decomposition.SPLIT_K,
            "fixup": plan.split.fixup.value, "partials": bool(k.partials),
            "tile_floats": k.shape.cluster * plan.BM * plan.BN,
            "tickets_per_tile": k.shape.cluster * k.shape.consumers,
            "tma_store": bool(printer.shape.tma_store), "smem": printer.shape.smem_bytes}


def cuda_numbers(rule: Any) -> str:
    """The launch's work-split numbers (grid, splits, sk_tiles, sk_ctas, num_tiles) of the
    plan's :class:`~tilec.transforms.decompose.SplitRule` as a Python lambda of M, N, K."""
    from tilec.codegen.triton.expr import PythonIntPrinter
    from tilec.transforms.plan import SIZE_K, SIZE_M, SIZE_N

    forms = rule.forms()
    py = PythonIntPrinter({SIZE_M: "M", SIZE_N: "N", SIZE_K: "K"})
    names = ("grid", "splits", "sk_tiles", "sk_ctas", "num_tiles")
    return "lambda M, N, K: (" + ", ".join(py.doprint(forms[n]) for n in names) + ",)"


# ---- the built module's code: copied from here on (tilec.library.build.module_text) ----
import ctypes
import shutil
import subprocess
import threading

_CUDA_LOCK = threading.Lock()


def _nvcc() -> str:
    path = os.environ.get("TILEC_NVCC") or shutil.which("nvcc") or "/usr/local/cuda/bin/nvcc"
    if not os.path.exists(path):
        raise TilecError(f"{NAME}: the CUDA kernels are built by nvcc on first use, but nvcc is "
                         f"not on PATH nor at /usr/local/cuda/bin/nvcc (TILEC_NVCC names it)")
    return path


def _cuda_library(kid: str, cname: str) -> object:
    """Kernel ``kid``'s launcher: the embedded source built by nvcc into the cache folder on
    first use (a private name, then renamed: a concurrent build never loads half a file)."""
    launch = _STATE.libs.get(kid)
    if launch is not None:
        return launch
    src = KERNELS[kid]
    digest = hashlib.sha1((src + repr(CUDA_FLAGS)).encode()).hexdigest()[:16]
    path = os.path.join(_cache_folder(), f"{NAME}_{kid}_{digest}.so")
    if not os.path.exists(path):
        t0 = time.perf_counter()
        stem = f"{path[:-3]}.{os.getpid()}.{threading.get_ident()}"
        with open(stem + ".cu", "w") as f:
            f.write(src)
        proc = subprocess.run([_nvcc(), *CUDA_FLAGS, "-shared", "-Xcompiler", "-fPIC",
                               stem + ".cu", "-o", stem + ".so"], capture_output=True, text=True)
        os.remove(stem + ".cu")
        if proc.returncode != 0:
            raise TilecError(f"{NAME}: nvcc failed on kernel {kid}:\n"
                             f"{(proc.stdout + proc.stderr)[-4000:]}")
        os.replace(stem + ".so", path)
        _STATS["compile_s"] += time.perf_counter() - t0
    with _CUDA_LOCK:
        if kid not in _STATE.libs:
            launch = getattr(ctypes.CDLL(path), f"{cname}_launch")
            launch.argtypes = ([ctypes.c_void_p] * 6 + [ctypes.c_int] * 3
                               + [ctypes.c_longlong] * 3 + [ctypes.c_int] * 5)
            launch.restype = ctypes.c_int
            _STATE.libs[kid] = launch
            _STATS["kernels_loaded"] += 1
    return _STATE.libs[kid]


def build_kernels(shapes: object = None, jobs: int = 8) -> int:
    """Have nvcc build, in ``jobs`` threads, the kernels that ``shapes`` ((M, N, K) triples)
    choose on this card, or every kernel of the library when None: what their first calls would
    otherwise build one at a time. Returns how many kernels are loaded."""
    if shapes is None:
        kids = {cfg["kernel"]: cfg["cuda"]["cname"] for cfg in CONFIGS}
    else:
        kids = {}
        for M, N, K in shapes:
            if min(M, N, K) > 0:
                cfg = CONFIGS[_choose(M, N, K).config]
                kids[cfg["kernel"]] = cfg["cuda"]["cname"]
    import concurrent.futures

    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        list(pool.map(lambda kv: _cuda_library(*kv), kids.items()))
    return len(_STATE.libs)


def _cuda_stream(dev: torch.device) -> int:
    """The handle of ``dev``'s current stream (torch's raw getter where it has one: no Stream
    object per call)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(dev.index if dev.index is not None else torch.cuda.current_device())
    return torch.cuda.current_stream(dev).cuda_stream


def _row_pad(cols: int, elem: int) -> int:
    """Elements per row once a row of ``cols`` is rounded up to 16 bytes (as
    tilec.codegen.cuda.launch.row_pad)."""
    return -(-cols * elem // 16) * 16 // elem


def _tma_rows(x: torch.Tensor) -> torch.Tensor:
    """``x`` (row-major, 16-byte aligned) or, where its rows are not a multiple of 16 bytes, a
    copy in a buffer whose rows are (a view of it: ``stride(0)`` is the padded row)."""
    rows, cols = x.shape
    if (x.stride(0) * x.element_size()) % 16 == 0 and x.stride(0) >= cols:
        return x
    _STATS["copies"] += 1
    pad = _row_pad(cols, x.element_size())
    return torch.empty((rows, pad), dtype=x.dtype, device=x.device)[:, :cols].copy_(x)


class _CudaRun:
    """Config ``index``'s kernel: ``run(a, b, out=None)`` (a M x K, b in the kernel's layout,
    each row-major and 16-byte aligned: what runtime's _operands gives) -> out. ``launch``: the
    file's ``<cname>_launch`` (None: built and loaded by :func:`_cuda_library`)."""

    def __init__(self, index: int, launch: object = None) -> None:
        cfg = CONFIGS[index]
        self.e = e = cfg["cuda"]
        self.launch = launch or _cuda_library(cfg["kernel"], e["cname"])
        self.numbers = eval(e["numbers"])  # the build's own text: a lambda of M, N, K
        self.splits: dict = {}  # (M, N, K) -> the launch's numbers and workspace sizes
        self.ws: dict = {}  # device -> (fp32 workspace, int32 tickets), grown, left clean
        self.devices: set = set()

    def _split(self, M: int, N: int, K: int) -> tuple:
        got = self.splits.get((M, N, K))
        if got is None:
            e = self.e
            grid, splits, sk_tiles, sk_ctas, tiles = self.numbers(M, N, K)
            floats = tickets = 0
            partial = (splits != 1) if e["split_k"] else (sk_tiles > 0 and e["stream_k"])
            if e["partials"] and partial:  # printer/work.py's workspace()
                ptiles, slots = (tiles, tiles * splits) if e["split_k"] else (sk_tiles,
                                                                              2 * sk_ctas)
                if e["fixup"] == "reduce_kernel":
                    floats = slots * e["tile_floats"]
                else:
                    floats = (slots if e["fixup"] == "deterministic" else ptiles) \
                        * e["tile_floats"]
                    tickets = ptiles * e["tickets_per_tile"]
            nums = (grid, 1, sk_tiles, sk_ctas) if e["stream_k"] else (grid, splits, 0, 0)
            if len(self.splits) >= _MEMO_MAX:
                self.splits.clear()
            got = self.splits[(M, N, K)] = (nums, floats, tickets)
        return got

    def run(self, a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None = None
            ) -> torch.Tensor:
        dev = a.device
        if dev not in self.devices:
            if torch.cuda.get_device_capability(dev) != (9, 0):
                raise TilecError(f"{NAME}: the CUDA kernels are built for sm_90a (H100, H200) "
                                 f"but {dev} has compute capability "
                                 f"{torch.cuda.get_device_capability(dev)}")
            room = getattr(torch.cuda.get_device_properties(dev),
                           "shared_memory_per_block_optin", None)
            if room is not None and self.e["smem"] > room:
                raise TilecError(f"{NAME}: config {self.e['cname']} needs {self.e['smem']} bytes "
                                 f"of shared memory per CTA but {dev} allows {room}")
            self.devices.add(dev)
        M, K = a.shape
        N = b.shape[0] if B_LAYOUT == "nk" else b.shape[1]
        if out is None:
            out = torch.empty((M, N), dtype=_OUT_DTYPE, device=dev)
        a, b = _tma_rows(a), _tma_rows(b)
        c = out
        elem = out.element_size()
        if (self.e["tma_store"] and (out.stride(0) * elem) % 16) or out.data_ptr() % 16:
            c = torch.empty((M, _row_pad(N, elem)), dtype=out.dtype, device=dev)[:, :N]
        nums, floats, tickets = self._split(M, N, K)
        ws = tk = 0
        if floats or tickets:
            have = self.ws.get(dev)
            if have is None or have[0].numel() < floats or have[1].numel() < tickets:
                have = self.ws[dev] = (torch.zeros(max(floats, 1), dtype=torch.float32,
                                                   device=dev),
                                       torch.zeros(max(tickets, 1), dtype=torch.int32,
                                                   device=dev))
            ws, tk = have[0].data_ptr(), have[1].data_ptr()
        rc = self.launch(a.data_ptr(), b.data_ptr(), c.data_ptr(), ws, tk,
                         _cuda_stream(dev), M, N, K, a.stride(0), b.stride(0),
                         c.stride(0), *nums, -1)
        if rc != 0:
            what = CUDA_ERRORS.get(rc, "a cudaError_t, or 1000 + / 2000 + a tensor-map encoder "
                                   "error")
            raise TilecError(f"{NAME}: the CUDA launch at {M}x{N}x{K} failed (code {rc}: {what}); "
                             + ", ".join(_describe(n, t) for n, t in (("A", a), ("B", b),
                                                                      ("C", c))))
        if c is not out:
            out.copy_(c)
        return out
