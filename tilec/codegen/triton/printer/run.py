"""The printed ``run(a, b, out=None)`` of a Triton kernel file and what it calls: ``_key`` (the
call's tensors' shapes, strides, dtypes and devices), ``_run`` (the checked path: every check,
the variant, descriptors, workspace, the JIT or direct launch) and ``_fast`` (a closure over what
``_run`` decided for one key: the per-call checks the key cannot carry, then the compiled
kernel's launch). :mod:`tilec.codegen.triton.printer.launcher` prints the helpers they call and
says why the launcher is lean.
"""

from __future__ import annotations

from tilec.codegen.triton.printer.fixup import partial_tiles
from tilec.codegen.triton.printer.kernel import Code, Kernel
from tilec.transforms.plan import Fixup, LoadKind, OperandLoad

__all__ = ["run_fn"]


def run_fn(k: Kernel, c: Code, tdt: str, cdt: str) -> None:
    """``run`` (a dictionary look-up, then the call's ``_fast`` function), ``_run`` (every check
    and decision, the JIT launch) and ``_fast`` (what ``_run`` decided, launched directly)."""
    p = k.plan
    kdim, ndim = (1, 0) if p.b.transposed else (0, 1)
    b_form = "(N, K)" if p.b.transposed else "(K, N)"
    reduce = k.fixup is Fixup.REDUCE_KERNEL
    c("_FAST = {}  # _key() of a call that launched a compiled kernel -> its _fast() function")
    c("_Tensor = torch.Tensor", "", "")
    c("def _key(a, b, out):")
    c.indent()
    c('"""What run()\'s checks read but the addresses: the tensors\' shapes, strides, dtypes and')
    c('devices. A call with the key of one that passed them passes them."""')
    c("if out is None:")
    c.indent()("return (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, "
               "b.device)").dedent()
    c("return (a.shape, a.stride(), a.dtype, a.device, b.shape, b.stride(), b.dtype, b.device,")
    c("        out.shape, out.stride(), out.dtype, out.device)")
    c.dedent()("", "")
    c("def run(a, b, out=None):")
    c.indent()
    c(f'"""C = A @ B{".T" if p.b.transposed else ""}: a is (M, K), b is {b_form}, '
      f'{p.dtype.value}; returns (M, N).')
    c("")
    c("Any M, N, K >= 0 (M = 0 or N = 0: out untouched; K = 0: C = 0); the operands may be any")
    c("row-major views (unit column stride, else copied); out: an (M, N) contiguous tensor to")
    c("write into (every element is written), default a new one. The variant is chosen per call:")
    c("EVEN_M/N/K: no boundary mask along the sizes the tiles divide (_facts(M, N, K)).")
    c("Each variant compiles once per device (Triton's cache). A call whose tensors have the")
    c("shapes, strides, dtypes and devices of one that launched a compiled kernel (and took its")
    c("operands as given) repeats that call's decisions (_fast): one dictionary look-up, then")
    c("the per-call checks its key cannot carry (16-byte aligned addresses, out apart from a and")
    c("b, the current device) and the launch; any other call takes the checked path (_run).")
    c('"""')
    c("if type(a) is _Tensor and type(b) is _Tensor and (out is None or type(out) is _Tensor):")
    c.indent()
    c("fast = _FAST.get(_key(a, b, out))")
    c("if fast is not None:")
    c.indent()("return fast(a, b, out)").dedent()
    c.dedent()
    c("return _run(a, b, out)")
    c.dedent()("", "")
    c("def _run(a, b, out):")
    c.indent()
    c('"""run()\'s checked path: every check, the variant, descriptors, workspace and launch; a')
    c("call that launched a compiled kernel on its operands as given leaves _fast() for its key.")
    c('"""')
    c("if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)")
    c(f"        and a.dtype == {tdt} and b.dtype == {tdt} and a.dim() == 2 and b.dim() == 2")
    c(f"        and a.shape[1] == b.shape[{kdim}] and a.is_cuda and b.is_cuda")
    c("        and a.get_device() == b.get_device()")
    c(f"        and (out is None or isinstance(out, torch.Tensor) and out.dtype == {cdt}")
    c(f"             and out.shape == (a.shape[0], b.shape[{ndim}]) and out.is_cuda")
    c("             and out.get_device() == a.get_device() and out.is_contiguous())):")
    c.indent()("_check_args(a, b, out)  # raises, or passes for tensors off CUDA (the interpreter)")
    c.dedent()
    if k.static:
        c("if a.shape != _SHAPES[0] or b.shape != _SHAPES[1]:")
        c.indent()("_check_shape(a, b)  # raises: this file serves one shape").dedent()
    c("M, K = a.shape")
    c(f"N = b.shape[{ndim}]")
    c("given = out is not None")
    c("if not given:")
    c.indent()(f"out = torch.empty((M, N), dtype={cdt}, device=a.device)").dedent()
    c("if M == 0 or N == 0:")
    c.indent()("return out").dedent()
    c("if K == 0:")
    c.indent()("return out.zero_()").dedent()
    c("a0, b0 = a, b  # the operands as given: a call that copies one leaves no fast path")
    c("if a.stride(1) != 1:")
    c.indent()("a = a.contiguous()").dedent()
    c("if b.stride(1) != 1:")
    c.indent()("b = b.contiguous()").dedent()
    if k.static:
        c("if a.stride(0) != _LEADING[0]:")
        c.indent()("a = _rows(a, _LEADING[0])").dedent()
        c("if b.stride(0) != _LEADING[1]:")
        c.indent()("b = _rows(b, _LEADING[1])").dedent()
    c("tma_a, tma_b = _rows_aligned(a), _rows_aligned(b)")
    c("if _COPY_UNALIGNED:  # copy rows TMA cannot take into aligned ones")
    c.indent()
    c("if not tma_a:")
    c.indent()("a, tma_a = _aligned(a), True").dedent()
    c("if not tma_b:")
    c.indent()("b, tma_b = _aligned(b), True").dedent()
    c.dedent()
    c(f"{', '.join(k.numbers)} = _numbers(M, N, K)")
    c("even = _facts(M, N, K)")
    if k.static:  # out is contiguous: ldc = N (or any, where M = 1)
        c("lda, ldb, ldc = _LEADING")
    else:
        c("lda, ldb, ldc = a.stride(0), b.stride(0), out.stride(0)")
    c("if given and (_spans_meet(out, ldc, a, lda) or _spans_meet(out, ldc, b, ldb)):")
    c.indent()("_check_args(a, b, out)  # out overlaps an operand: raises, naming it").dedent()
    b_rows = "N" if p.b.transposed else "K"
    c(f"wide = max(M * lda, {b_rows} * ldb, M * ldc) + K + N >= 2**31  # int64 offsets")
    # pointer arguments the compiled kernel is specialized on (16-byte alignment); TMA operands
    # are descriptors (_desc aligns their bases), the workspace is allocated aligned
    c("aligned = (out.data_ptr() | a.data_ptr() | b.data_ptr()) % 16 == 0 and "
      "1 not in (lda, ldb, ldc)")
    flags = {"A": "tma_a", "B": "tma_b"}
    x_of = {"A": "x", "B": "y"}
    boxes = {}
    for op, var, box in _descs(k):
        if op.kind is LoadKind.TMA:
            boxes[op.name] = box
            c(f"{x_of[op.name]} = _desc({var}, {box}) if {flags[op.name]} else {var}")
        else:
            c(f"{flags[op.name]} = False  # the configuration loads {op.name} through pointers")
            c(f"{x_of[op.name]} = {var}")
    c("if out.is_cuda:")
    c.indent()("index = out.get_device()", "stream = _current_stream(index)").dedent()
    c("else:  # the interpreter's CPU tensors")
    c.indent()("index, stream = str(out.device), 0").dedent()
    args = "x, y, out"
    work = ""
    if k.partials:
        tiles = partial_tiles(k)
        # one fp32 buffer per partial tile (atomic), else one slot per partial
        if k.fixup is Fixup.ATOMIC:
            slots = tiles
        elif k.split_k:
            slots = "NUM_TILES * SPLITS"
        else:
            slots = "2 * SK_CTAS"
        c(f"work = (({slots}) * {p.BM * p.BN}, {tiles})  # the workspace's fp32 and int32 "
          "elements")
        c("ws, tickets = _workspace((index, stream), out, *work)")
        args += ", ws, tickets"
        work = ", work"
    c("sizes = (M, N, K, lda, ldb, ldc, *even, tma_a, tma_b, wide)  # a compiled kernel takes "
      "its constexprs too")
    if reduce:
        c(f"programs, SUBS = _reduce_grid({partial_tiles(k)}, GRID)")
    c("key = (index, even, tma_a, tma_b, wide, lda % 16 == 0, ldb % 16 == 0, ldc % 16 == 0)")
    c("launch = _LAUNCHES.get(key)")
    c("if launch is not None and aligned and index == _current_device():")
    c.indent()
    c(f"launch[0][(GRID, 1, 1)]({args}, *sizes, stream=stream)")
    if reduce:
        c("if programs:")
        c.indent()("launch[1][(programs, 1, 1)](out, ws, SUBS, *sizes, stream=stream)").dedent()
    c.dedent()
    c("else:")
    c.indent()
    kw = ("EVEN_M=even[0], EVEN_N=even[1], EVEN_K=even[2], TMA_A=tma_a, TMA_B=tma_b, "
          "WIDE=wide")
    shape_args = "M, N, K, lda, ldb, ldc"
    c(f"kernel = gemm_kernel[(GRID,)]({args}, {shape_args}, {kw}, num_warps={p.num_warps}, "
      f"num_stages={p.num_stages})")
    if reduce:
        c("if not programs:  # no partial tile at this size")
        c.indent()("return out").dedent()
        c(f"reducer = reduce_kernel[(programs,)](out, ws, SUBS, {shape_args}, {kw}, "
          "num_warps=4)")
        c("if not (isinstance(kernel, CompiledKernel) and isinstance(reducer, CompiledKernel)")
        c("        and aligned and index == _current_device()):")
        c.indent()("return out  # the interpreter, or a launch the compiled kernel cannot take")
        c.dedent()
        c("launch = _LAUNCHES[key] = (kernel, reducer)")
    else:
        c("if not (isinstance(kernel, CompiledKernel) and aligned and index == _current_device()):")
        c.indent()("return out  # the interpreter, or a launch the compiled kernel cannot take")
        c.dedent()
        c("launch = _LAUNCHES[key] = (kernel,)")
    c.dedent()
    c("if a is a0 and b is b0:  # operands as given: later calls with this key take _fast")
    c.indent()
    c("if len(_FAST) >= 4096:")
    c.indent()("_FAST.clear()").dedent()
    grid = "GRID, programs, SUBS" if reduce else "GRID"
    protos = ", ".join(f"_proto({var}, {boxes[op.name]}) if {flags[op.name]} else None"
                       for op, var, _ in _descs(k) if op.name in boxes)
    comma = "," if len(boxes) == 1 else ""
    c("_FAST[_key(a0, b0, out if given else None)] = _fast(")
    c(f"    launch, sizes, ({grid},), out.dtype, out.device, index{work},")
    c(f"    (_extent(a, lda), _extent(b, ldb), _extent(out, ldc)), ({protos}{comma}))")
    c.dedent()
    c("return out")
    c.dedent()("", "")
    _fast_fn(k, c, boxes, reduce)


def _fast_fn(k: Kernel, c: Code, boxes: dict[str, tuple[int, int]], reduce: bool) -> None:
    """``_fast``: a closure over what ``_run`` decided for one key, launching the compiled
    kernel (its grid already bound) after the per-call checks the key cannot carry."""
    names = [n for n in ("A", "B") if n in boxes]
    c(f"def _fast(launch, sizes, grid, dtype, device, index{', work' if k.partials else ''}, "
      "extents, protos):")
    c.indent()
    c('"""What _run decided for one key, as a function of the call\'s tensors: the launch of')
    c("the compiled kernel on the current stream, after the checks the key cannot carry:")
    c("16-byte aligned addresses and the current device (else _run, which copies or")
    c("compiles), out apart from a and b (else _run, which raises). Holds no user tensor.")
    c('"""')
    c("M, N = sizes[0], sizes[1]")
    c("ext_a, ext_b, ext_o = extents")
    if names:
        c(f"{', '.join('p_' + n.lower() for n in names)}{',' if len(names) == 1 else ''} = "
          "(None if d is None else d.__dict__ for d in protos)")
    c("gemm = launch[0][(grid[0], 1, 1)]  # the compiled kernel's launcher, its grid bound")
    if reduce:
        c("programs, SUBS = grid[1], grid[2]")
        c("reduce = launch[1][(programs, 1, 1)] if programs else None")
    c('cuda = device.type == "cuda"')
    c("new = object.__new__", "")
    c("def fast(a, b, out):")
    c.indent()
    c("pa, pb = a.data_ptr(), b.data_ptr()")
    c("if (pa | pb) & 15 or (cuda and index != _current_device()):")
    c.indent()("return _run(a, b, out)").dedent()
    c("if out is None:")
    c.indent()("out = torch.empty((M, N), dtype=dtype, device=device)").dedent()
    c("else:")
    c.indent()
    c("po = out.data_ptr()")
    c("if po & 15 or (pa < po + ext_o and po < pa + ext_a) or (pb < po + ext_o "
      "and po < pb + ext_b):")
    c.indent()("return _run(a, b, out)  # copies, or raises naming the overlap").dedent()
    c.dedent()
    c("stream = _current_stream(index) if cuda else 0")
    for n, var in (("A", "a"), ("B", "b")):
        if n in boxes:
            pv = "p_" + n.lower()
            c(f"if {pv} is not None:")
            c.indent()
            c("d = new(TensorDescriptor)", f"d.__dict__.update({pv})", f"d.base = {var}",
              f"{var} = d")
            c.dedent()
    if k.partials:
        c("ws, tickets = _workspace((index, stream), out, *work)")
        c("gemm(a, b, out, ws, tickets, *sizes, stream=stream)")
    else:
        c("gemm(a, b, out, *sizes, stream=stream)")
    if reduce:
        c("if reduce is not None:")
        c.indent()("reduce(out, ws, SUBS, *sizes, stream=stream)").dedent()
    c("return out")
    c.dedent()
    c("return fast")
    c.dedent()


def _descs(k: Kernel) -> list[tuple[OperandLoad, str, tuple[int, int]]]:
    """Per operand: its load, the argument's name and the TMA box."""
    p = k.plan
    b_box = (p.BN, p.BK) if p.b.transposed else (p.BK, p.BN)
    return [(p.a, "a", (p.BM, p.BK)), (p.b, "b", b_box)]
