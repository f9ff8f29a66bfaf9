"""The host side of the file, plain Python: ``run(a, b, out=None)`` checks its arguments, makes
the tensor descriptors of TMA operands, takes the fix-up's workspace (kept per device and
stream, left zeroed by the kernel) and launches ``gemm_kernel`` (and ``reduce_kernel``).

On small problems the kernel takes less GPU time than Triton's launch path takes CPU time
(bench/host_overhead.py), so the launcher is lean:

* the checks are one comparison of shapes, dtypes and devices; the message naming the tensor
  comes from ``_check_args``, called only when that comparison fails;
* a TMA descriptor is a copy of one that Triton built and checked at import (on a meta tensor of
  the same shape and dtype), with the operand as its base: the constructor's checks would
  cost microseconds per call and say nothing new for a tensor of that shape, dtype and alignment;
* the first launch on a CUDA device goes through Triton's JIT (it compiles and specializes);
  the compiled kernel it returns is kept per device and later calls launch it directly on the
  current stream, skipping argument binding and specialization. A compiled kernel is specialized
  on its pointers' 16-byte alignment, so both launches need aligned pointers (any other call
  takes the JIT path), and on the current device (Triton's JIT compiles for the current device).
  The interpreter (``TRITON_INTERPRET=1``) returns no compiled kernel and always takes the JIT
  path. What the kept kernel does not see: Triton settings changed after the first launch (debug,
  instrumentation), and the JIT's check that the kernel's globals are unchanged (they are this
  file's constants); launch hooks still run (the grid runner reads them per launch).
"""

from __future__ import annotations

from tilec.codegen.triton.printer.fixup import reduce_rows
from tilec.codegen.triton.printer.kernel import TORCH_DTYPE, Code, Kernel
from tilec.transforms.plan import Fixup, LoadKind, OperandLoad


def launcher(k: Kernel) -> str:
    """Module state, ``_check``, ``_check_args``, ``_desc`` (TMA), ``_workspace``
    (partials) and ``run``."""
    p = k.plan
    w = p.work
    tdt, cdt = TORCH_DTYPE[p.dtype], TORCH_DTYPE[p.c_dtype]
    tma = LoadKind.TMA in (p.a.kind, p.b.kind)
    # the launcher is plain Python: sizes are int literals (tl.constexpr is for kernels)
    M, N, K, BM, BN = p.M, p.N, p.K, p.BM, p.BN
    b_shape = f"({N}, {K})" if p.b_transposed else f"({K}, {N})"
    c = Code()
    c(f"_AB = (({M}, {K}), {tdt}, {b_shape}, {tdt})  # A's and B's shape and dtype",
      f"_OUT = (({M}, {N}), {cdt})",
      "_LAUNCHES = {}  # CUDA device index -> the compiled kernel's launcher (after a JIT launch)",
      '_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device',
      '_current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (',
      "    lambda index: torch.cuda.current_stream(index).cuda_stream)")
    sizes = {"M": M, "N": N, "K": K}
    descs = [(op, var, sizes[rows], sizes[cols], box) for op, var, rows, cols, box in _descs(k)
             if op.kind is LoadKind.TMA]
    for _, var, r, cl, box in descs:
        c(f'_{var.upper()}_DESC = TensorDescriptor(torch.empty(({r}, {cl}), dtype={tdt}, device="meta"),',
          f"    shape=[{r}, {cl}], strides=[{cl}, 1], block_shape=[{box[0]}, {box[1]}])")
    c("", "")
    c("def _check(name, x, shape, dtype):")
    c.indent()
    c("if not isinstance(x, torch.Tensor):")
    c.indent()('raise TypeError(f"{name} must be a torch.Tensor but got {type(x).__name__}")').dedent()
    c("if tuple(x.shape) != shape:")
    c.indent()('raise ValueError(f"{name} must have shape {shape} but got {tuple(x.shape)}")').dedent()
    c("if x.dtype != dtype:")
    c.indent()('raise TypeError(f"{name} must have dtype {dtype} but got {x.dtype}")').dedent()
    c.dedent()
    c("", "")
    c("def _check_args(a, b, out):")
    c.indent()
    c('"""run()\'s checks one at a time, raising with the tensor, shape, dtype or device that is')
    c("wrong (run() compares them all at once and calls this only when that comparison fails).")
    c('"""')
    c(f'_check("A", a, ({M}, {K}), {tdt})')
    c(f'_check("B", b, {b_shape}, {tdt})')
    c("if a.device != b.device:")
    c.indent()('raise ValueError(f"A and B must be on one device but got {a.device} and {b.device}")').dedent()
    c("if out is not None:")
    c.indent()
    c(f'_check("out", out, ({M}, {N}), {cdt})')
    c("if not out.is_contiguous():")
    c.indent()('raise ValueError(f"out must be contiguous but has strides {out.stride()}")').dedent()
    c("if out.device != a.device:")
    c.indent()('raise ValueError(f"out must be on the device of A ({a.device}) but is on {out.device}")')
    c.dedent().dedent().dedent()
    c("", "")
    if tma:
        c("def _desc(x, proto):")
        c.indent()
        c('"""proto (built and checked by Triton at import) with x as its base, or a copy of x where')
        c("x is not 16-byte aligned (TMA needs aligned base addresses): x has proto's shape and")
        c("dtype (run() checked them), so the constructor's checks would find nothing new.")
        c('"""')
        c("d = object.__new__(TensorDescriptor)")
        c("d.__dict__.update(proto.__dict__)")
        c("d.base = x if x.data_ptr() % 16 == 0 else x.clone()")
        c("return d")
        c.dedent()("", "")
    if k.partials:
        _workspace_fn(c)
    c("def run(a, b, out=None):")
    c.indent()
    c(f'"""C = A @ B{".T" if p.b_transposed else ""}: a is (M, K), b is {b_shape}, '
      f'{p.dtype.value}; returns (M, N).')
    c("")
    c("out: an (M, N) tensor to write into (every element is written); default: a new one.")
    c("The first call on a CUDA device compiles through Triton's JIT; later calls on it launch")
    c("the compiled kernel directly (when out and the pointer operands are 16-byte aligned).")
    c('"""')
    c("if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)")
    c("        and (a.shape, a.dtype, b.shape, b.dtype) == _AB")
    c("        and a.is_cuda and b.is_cuda and a.get_device() == b.get_device()")
    c("        and (out is None or isinstance(out, torch.Tensor) and (out.shape, out.dtype) == _OUT")
    c("             and out.is_cuda and out.get_device() == a.get_device() and out.is_contiguous())):")
    c.indent()("_check_args(a, b, out)  # raises, or passes for tensors off CUDA (the interpreter)")
    c.dedent()
    c("a = a.contiguous()", "b = b.contiguous()")
    c("if out is None:")
    c.indent()(f"out = torch.empty(({M}, {N}), dtype={cdt}, device=a.device)").dedent()
    # pointer arguments the compiled kernel is specialized on (16-byte alignment); TMA operands
    # are descriptors (_desc aligns their bases), the workspace is allocated aligned
    ptrs = ["out"] + [var for op, var, *_ in _descs(k) if op.kind is not LoadKind.TMA]
    c("aligned = " + (f"({' | '.join(f'{v}.data_ptr()' for v in ptrs)})" if len(ptrs) > 1
                      else "out.data_ptr()") + " % 16 == 0")
    for _, var, *_ in descs:
        c(f"{var} = _desc({var}, _{var.upper()}_DESC)")
    c("if out.is_cuda:")
    c.indent()("index = out.get_device()", "stream = _current_stream(index)").dedent()
    c("else:  # the interpreter's CPU tensors")
    c.indent()("index, stream = str(out.device), 0").dedent()
    args = "a, b, out"
    if k.partials:
        n_tickets = w.partial_tiles
        # one fp32 buffer per partial tile (atomic), else one slot per partial
        slots = n_tickets if k.fixup is Fixup.ATOMIC else w.partial_slots
        c(f"ws, tickets = _workspace((index, stream), out, {slots * BM * BN}, {n_tickets})")
        args += ", ws, tickets"
    reduce = k.fixup is Fixup.REDUCE_KERNEL
    # the reduce kernel's programs: one per row strip of each partial tile
    programs = w.partial_tiles * (p.BM // reduce_rows(k)) if reduce else 0
    c("launch = _LAUNCHES.get(index)")
    c("if launch is not None and aligned and index == _current_device():")
    c.indent()
    if reduce:
        c(f"launch[0]({args}, stream=stream)", "launch[1](out, ws, stream=stream)")
    else:
        c(f"launch({args}, stream=stream)")
    c("return out")
    c.dedent()
    c(f"kernel = gemm_kernel[(GRID,)]({args}, num_warps={p.num_warps}, num_stages={p.num_stages})")
    if reduce:
        c(f"reducer = reduce_kernel[({programs},)](out, ws, num_warps=4)")
        c("if (isinstance(kernel, CompiledKernel) and isinstance(reducer, CompiledKernel) and aligned")
        c("        and index == _current_device()):")
        c.indent()(f"_LAUNCHES[index] = (kernel[({w.grid}, 1, 1)], reducer[({programs}, 1, 1)])")
    else:
        c("if isinstance(kernel, CompiledKernel) and aligned and index == _current_device():")
        c.indent()(f"_LAUNCHES[index] = kernel[({w.grid}, 1, 1)]")
    c.dedent()
    c("return out")
    return c.text()


def _workspace_fn(c: Code) -> None:
    c("_WORKSPACES = {}", "", "")
    c("def _workspace(key, out, n_ws, n_tickets):")
    c.indent()
    c('"""fp32 partial buffers and int32 tickets on out\'s device, zeroed once and kept per key')
    c("(device, stream).")
    c("")
    c("The kernel leaves both zeroed again (the last contributor of a tile clears its buffer")
    c("and resets its ticket), so a call launches no memset; launches on one stream run in")
    c("order, so two of them never share a workspace.")
    c('"""')
    c("ws = _WORKSPACES.get(key)")
    c("if ws is None:")
    c.indent()
    c("buf = torch.zeros(n_ws + n_tickets, dtype=torch.float32, device=out.device)")
    c("ws = _WORKSPACES[key] = (buf[:n_ws], buf[n_ws:].view(torch.int32))")
    c.dedent()
    c("return ws")
    c.dedent()
    c("", "")


def _descs(k: Kernel) -> list[tuple[OperandLoad, str, str, str, tuple[int, int]]]:
    """Per operand: its load, the argument's name, its rows and columns and the TMA box."""
    p = k.plan
    out = [(p.a, "a", "M", "K", (p.BM, p.BK))]
    if p.b_transposed:
        out.append((p.b, "b", "N", "K", (p.BN, p.BK)))
    else:
        out.append((p.b, "b", "K", "N", (p.BK, p.BN)))
    return out
