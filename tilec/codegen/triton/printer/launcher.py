"""The host side of the file, plain Python: ``run(a, b, out=None)`` takes any M, N, K, checks its
arguments, computes the work split's numbers for the sizes (``_numbers``, the plan's
:class:`~tilec.transforms.plan.SplitRule` forms printed as Python, cached per shape), picks the
variant (``EVEN_M``, ``EVEN_N``, ``EVEN_K``: the tile divides that size, no boundary mask
along it; all three: the facts variant; ``WIDE``: int64 offsets),
makes the tensor descriptors of TMA operands (a prototype per shape and strides, its base
replaced per call), takes the fix-up's workspace (kept per device and stream, grown when a call
needs more, left zeroed by the kernel) and launches ``gemm_kernel`` (and ``reduce_kernel``).

On small problems the kernel takes less GPU time than Triton's launch path takes CPU time
(bench/host_overhead.py), so the launcher is lean:

* ``run`` is one dictionary look-up of the call's key (the tensors' shapes, strides, dtypes and
  devices), then that key's ``_fast`` function: a closure over everything the checked path
  ``_run`` decided for it (numbers, variant flags, descriptor prototypes, workspace size, the
  compiled kernel's launcher with its grid bound), which checks only what the key cannot carry
  (16-byte aligned addresses, ``out`` apart from ``a`` and ``b``, the current device) and
  launches. A new key, a call that copies an operand and a failed per-call check take ``_run``;
* ``_run``'s checks are one comparison of dtypes, ranks, devices and K; the message naming the
  tensor comes from ``_check_args``, called only when that comparison fails;
* a TMA descriptor is a copy of one that Triton built and checked (on a meta tensor of the same
  shape, strides and dtype), with the operand as its base;
* the first launch of a variant on a CUDA device goes through Triton's JIT (it compiles and
  specializes); the compiled kernel it returns is kept per (device, variant, the leading
  dimensions' 16-alignment) and later calls launch it directly on the current stream
  (``kernel[grid](*args, stream=)``, in Triton 3.6 and 3.9 alike), skipping argument binding and
  specialization. The sizes and the work split's numbers are not
  specialized (``do_not_specialize``), so one compiled kernel serves every shape of its
  variant. A compiled kernel is specialized on its pointers' 16-byte alignment, so both
  launches need aligned pointers (any other call takes the JIT path), and on the current device.
  The interpreter (``TRITON_INTERPRET=1``) returns no compiled kernel and always takes the JIT
  path (``_run``).
"""

from __future__ import annotations

from tilec.codegen.triton.expr import PythonIntPrinter
from tilec.codegen.triton.printer.fixup import reduce_grid_fn
from tilec.codegen.triton.printer.kernel import TORCH_DTYPE, Code, Kernel
from tilec.codegen.triton.printer.run import run_fn
from tilec.transforms.plan import SIZE_K, SIZE_M, SIZE_N, Fixup, LoadKind

SIZE_NAMES = {SIZE_M: "M", SIZE_N: "N", SIZE_K: "K"}


def launcher(k: Kernel) -> str:
    """Module state, the errors, ``_numbers``, ``_facts``, ``_check_args``, ``_desc`` (TMA),
    ``_workspace`` (partials) and ``run``."""
    p = k.plan
    tdt, cdt = TORCH_DTYPE[p.dtype], TORCH_DTYPE[p.c_dtype]
    c = Code()
    c("_LAUNCHES = {}  # (device, variant, alignment) -> the compiled kernels (after a JIT launch)",
      "_NUMBERS = {}  # (M, N, K) -> the work split's numbers",
      '_current_device = getattr(torch._C, "_cuda_getDevice", None) or torch.cuda.current_device',
      '_current_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (',
      "    lambda index: torch.cuda.current_stream(index).cuda_stream)", "", "")
    _errors(c)
    _numbers_fn(k, c)
    _facts_fn(k, c)
    _check_args_fn(k, c, tdt, cdt)
    if k.static:
        _static_fn(k, c)
    _aligned_fn(c, p.dtype.nbytes)
    if LoadKind.TMA in (p.a.kind, p.b.kind):
        _desc_fn(c, tdt)
    if k.partials:
        _workspace_fn(c)
    if k.fixup is Fixup.REDUCE_KERNEL:
        c(reduce_grid_fn(k).rstrip("\n"), "", "")
    run_fn(k, c, tdt, cdt)
    return c.text()


def _errors(c: Code) -> None:
    c("try:  # tilec's user errors where tilec is installed; the file also runs without it")
    c.indent()("from tilec.errors import TilecError").dedent()
    c("except ImportError:  # pragma: no cover")
    c.indent()
    c("class TilecError(Exception):")
    c.indent()('"""A user error: the message names the tensor, its shape and what is allowed."""')
    c.dedent().dedent()
    c("", "")
    c("class ArgumentError(TilecError, ValueError):")
    c.indent()('"""run() was given a tensor of a shape, layout or device it cannot take."""')
    c.dedent()("", "")
    c("class ArgumentTypeError(TilecError, TypeError):")
    c.indent()('"""run() was given something that is not a tensor of the kernel\'s dtype."""')
    c.dedent()("", "")


def _numbers_fn(k: Kernel, c: Code) -> None:
    """``_numbers(M, N, K)``: the work split's numbers, the rule's forms printed as Python."""
    steps = k.number_steps()
    py = PythonIntPrinter({**SIZE_NAMES, **{sym: sym.name for sym, _ in steps}})
    c("def _numbers(M, N, K):")
    c.indent()
    c(f'"""({", ".join(k.numbers)}) at M, N, K >= 1: the work split of the plan\'s rule,')
    c("computed once per shape.")
    c('"""')
    c("got = _NUMBERS.get((M, N, K))")
    c("if got is None:")
    c.indent()
    for sym, e in steps:
        c(f"{sym.name} = {py.doprint(e)}")
    c("if len(_NUMBERS) > 4096:")
    c.indent()("_NUMBERS.clear()").dedent()
    c(f"got = _NUMBERS[(M, N, K)] = ({', '.join(k.numbers)},)")
    c.dedent()
    c("return got")
    c.dedent()("", "")


def _facts_fn(k: Kernel, c: Code) -> None:
    """``_facts(M, N, K)``: which of the plan's facts hold (EVEN_M, EVEN_N, EVEN_K)."""
    py = PythonIntPrinter(SIZE_NAMES)
    facts = k.plan.facts
    assert len(facts) == 3, facts  # Triton: the tiles' facts only (no multicast guard)
    c("def _facts(M, N, K):")
    c.indent()
    c('"""(EVEN_M, EVEN_N, EVEN_K) at M, N, K: which tile divides its size (the variant runs')
    c('without the boundary masks along those; all three: the facts variant, no mask at all)."""')
    c("return (" + ", ".join(py.doprint(f) for f in facts) + ")")
    c.dedent()("", "")


def _check_args_fn(k: Kernel, c: Code, tdt: str, cdt: str) -> None:
    p = k.plan
    kdim, ndim = (1, 0) if p.b.transposed else (0, 1)
    b_form = "(N, K)" if p.b.transposed else "(K, N)"
    c("def _check(name, x, dtype):")
    c.indent()
    c("if not isinstance(x, torch.Tensor):")
    c.indent()('raise ArgumentTypeError(f"{name} must be a torch.Tensor but got {type(x).__name__}")')
    c.dedent()
    c("if x.dim() != 2:")
    c.indent()('raise ArgumentError(f"{name} must be a matrix but has shape {tuple(x.shape)}")')
    c.dedent()
    c("if x.dtype != dtype:")
    c.indent()('raise ArgumentTypeError(f"{name} must have dtype {dtype} but got {x.dtype}")')
    c.dedent().dedent()("", "")
    c("def _check_args(a, b, out):")
    c.indent()
    c('"""run()\'s checks one at a time, raising with the tensor, shape, dtype or device that is')
    c("wrong (run() compares them all at once and calls this only when that comparison fails).")
    c('"""')
    c(f'_check("A", a, {tdt})')
    c(f'_check("B", b, {tdt})')
    c(f"if a.shape[1] != b.shape[{kdim}]:")
    c.indent()
    c(f'raise ArgumentError(f"A is (M, K) = {{tuple(a.shape)}} and B must be {b_form} with the '
      f'same K, but B has shape {{tuple(b.shape)}}")')
    c.dedent()
    c("if a.device != b.device:")
    c.indent()('raise ArgumentError(f"A and B must be on one device but got {a.device} and {b.device}")')
    c.dedent()
    c("if out is not None:")
    c.indent()
    c(f'_check("out", out, {cdt})')
    c(f"want = (a.shape[0], b.shape[{ndim}])")
    c("if tuple(out.shape) != want:")
    c.indent()('raise ArgumentError(f"out must have shape {want} but got {tuple(out.shape)}")')
    c.dedent()
    c("if not out.is_contiguous():")
    c.indent()('raise ArgumentError(f"out must be contiguous but has strides {out.stride()}")')
    c.dedent()
    c("if out.device != a.device:")
    c.indent()('raise ArgumentError(f"out must be on the device of A ({a.device}) but is on {out.device}")')
    c.dedent()
    c("for name, x in ((\"A\", a), (\"B\", b)):")
    c.indent()
    c("if not _apart(out, x):")
    c.indent()
    c('raise ArgumentError(f"out {tuple(out.shape)} overlaps {name} {tuple(x.shape)} in memory: '
      'C is written while A and B are read; pass a separate out")')
    c.dedent().dedent().dedent().dedent()("", "")
    c("def _spans_meet(x, ldx, y, ldy):")
    c.indent()
    c('"""Whether the memory spans of matrices x and y (rows of unit stride, leading dimensions')
    c('ldx, ldy) meet: the cheap test run() makes on every call with an out."""')
    c("x0, y0 = x.data_ptr(), y.data_ptr()")
    c("return x0 < y0 + _extent(y, ldy) and y0 < x0 + _extent(x, ldx)")
    c.dedent()("", "")
    c("def _extent(x, ldx):")
    c.indent()
    c('"""Bytes from matrix x\'s first element to one past its last (rows of unit stride, leading')
    c('dimension ldx)."""')
    c("return ((x.shape[0] - 1) * ldx + x.shape[1]) * x.element_size()")
    c.dedent()("", "")
    c("def _apart(x, y):")
    c.indent()
    c('"""Whether the memory spans of x and y do not overlap (empty tensors never do)."""')
    c("if not x.numel() or not y.numel():")
    c.indent()("return True").dedent()
    c("x0, y0 = x.data_ptr(), y.data_ptr()")
    c("x1 = x0 + (sum((n - 1) * s for n, s in zip(x.shape, x.stride())) + 1) * x.element_size()")
    c("y1 = y0 + (sum((n - 1) * s for n, s in zip(y.shape, y.stride())) + 1) * y.element_size()")
    c("return x1 <= y0 or y1 <= x0")
    c.dedent()("", "")


def _static_fn(k: Kernel, c: Code) -> None:
    """The static file's one shape, its leading dimensions, ``_check_shape`` (the refusal of
    any other shape) and ``_rows`` (an operand copied into the rows the kernels take)."""
    p = k.plan
    b_shape = (p.N, p.K) if p.b.transposed else (p.K, p.N)
    c(f"_SHAPES = (({p.M}, {p.K}), {b_shape})  # A's and B's: the one shape this file serves")
    c(f"_LEADING = {k.leading}  # lda, ldb, ldc: constexpr in the kernels", "", "")
    c("def _check_shape(a, b):")
    c.indent()
    c('"""Raise naming the operand whose shape is not the one this file serves."""')
    c('for name, x, want in (("A", a, _SHAPES[0]), ("B", b, _SHAPES[1])):')
    c.indent()
    c("if tuple(x.shape) != want:")
    c.indent()
    other = ("the schedule could not be lowered over symbolic sizes: print a kernel per shape"
             if p.fixed_sizes else "print the shape-generic kernel (tilec gen) for other shapes")
    c(f'raise ArgumentError(f"{{name}} has shape {{tuple(x.shape)}} but this file serves only '
      f'M, N, K = {p.M}, {p.N}, {p.K} ({{name}} of shape {{want}}); {other}")')
    c.dedent().dedent().dedent()("", "")
    c("def _rows(x, ld):")
    c.indent()
    c('"""x copied into rows of ld elements (the leading dimension the kernels are compiled for)."""')
    c("buf = torch.empty((x.shape[0], ld), dtype=x.dtype, device=x.device)")
    c("buf[:, :x.shape[1]].copy_(x)")
    c("return buf[:, :x.shape[1]]")
    c.dedent()("", "")


def _aligned_fn(c: Code, nbytes: int) -> None:
    c("# rows TMA cannot take: True copies that operand into aligned rows and keeps TMA (H100,")
    c("# 4095 x 4097 x 4100 bf16: 0.38 ms with the copies, 0.72 with the per-shape kernel's")
    c("# pointer loads); False runs the variant that loads it through masked pointers, no copy")
    c("_COPY_UNALIGNED = True", "", "")
    c("def _rows_aligned(x):")
    c.indent()
    c('"""Whether TMA can take matrix x\'s rows as they are: a 16-byte aligned base and row stride."""')
    c(f"return x.data_ptr() % 16 == 0 and (x.stride(0) * {nbytes}) % 16 == 0 and "
      "x.stride(0) >= x.shape[1]")
    c.dedent()("", "")
    c("def _aligned(x):")
    c.indent()
    c('"""x, or a copy of x in rows that start on 16-byte boundaries: TMA needs them, and pointer')
    c("loads of rows that do are vectorized (the row stride's 16-alignment is known to the")
    c("compiled kernel); the copy costs a read and a write of x, the unaligned loads far more.")
    c('"""')
    c(f"if x.data_ptr() % 16 or (x.stride(0) * {nbytes}) % 16 or x.stride(0) < x.shape[1]:")
    c.indent()
    c(f"cols = -(-x.shape[1] * {nbytes} // 16) * 16 // {nbytes}")
    c("buf = torch.empty((x.shape[0], cols), dtype=x.dtype, device=x.device)")
    c("buf[:, :x.shape[1]].copy_(x)")
    c("x = buf[:, :x.shape[1]]")
    c.dedent()
    c("return x")
    c.dedent()("", "")


def _desc_fn(c: Code, tdt: str) -> None:
    c("_DESCS = {}  # (shape, row stride, box) -> a descriptor Triton built on a meta tensor",
      "", "")
    c("def _proto(x, box):")
    c.indent()
    c('"""The descriptor Triton built and checked for matrix x\'s shape, row stride and box, on a')
    c('meta tensor (no user tensor is kept)."""')
    c("key = (x.shape[0], x.shape[1], x.stride(0), box)")
    c("proto = _DESCS.get(key)")
    c("if proto is None:")
    c.indent()
    c(f'meta = torch.empty_strided(tuple(x.shape), x.stride(), dtype={tdt}, device="meta")')
    c("proto = TensorDescriptor(meta, shape=list(x.shape), strides=[x.stride(0), 1],")
    c("                         block_shape=list(box))")
    c("if len(_DESCS) > 1024:")
    c.indent()("_DESCS.clear()").dedent()
    c("_DESCS[key] = proto")
    c.dedent()
    c("return proto")
    c.dedent()("", "")
    c("def _desc(x, box):")
    c.indent()
    c('"""The tensor descriptor of matrix x (aligned rows of unit stride, see _aligned) with a TMA')
    c("box: a copy of its prototype (_proto) with x as its base.")
    c('"""')
    c("d = object.__new__(TensorDescriptor)")
    c("d.__dict__.update(_proto(x, box).__dict__)")
    c("d.base = x")
    c("return d")
    c.dedent()("", "")


def _workspace_fn(c: Code) -> None:
    c("_WORKSPACES = {}", "", "")
    c("def _workspace(key, out, n_ws, n_tickets):")
    c.indent()
    c('"""fp32 partial buffers and int32 tickets on out\'s device, zeroed once and kept per key')
    c("(device, stream), grown (zeroed again) when a call needs more than the kept ones hold.")
    c("")
    c("The kernel leaves both zeroed again (the last contributor of a tile clears its buffer")
    c("and resets its ticket), so a call launches no memset; launches on one stream run in")
    c("order, so two of them never share a workspace.")
    c('"""')
    c("ws = _WORKSPACES.get(key)")
    c("if ws is None or ws[0].numel() < n_ws or ws[1].numel() < n_tickets:")
    c.indent()
    c("if ws is not None:  # grow: keep what the kept ones held")
    c.indent()("n_ws, n_tickets = max(n_ws, ws[0].numel()), max(n_tickets, ws[1].numel())").dedent()
    c("n_ws, n_tickets = max(n_ws, 1), max(n_tickets, 1)")
    c("buf = torch.zeros(n_ws + n_tickets, dtype=torch.float32, device=out.device)")
    c("ws = _WORKSPACES[key] = (buf[:n_ws], buf[n_ws:].view(torch.int32))")
    c.dedent()
    c("return ws")
    c.dedent()("", "")
