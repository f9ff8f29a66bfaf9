"""The host side of the file, plain Python: ``run(a, b, out=None)`` checks its arguments, makes
the tensor descriptors of TMA operands, takes the fix-up's workspace (kept per device and
stream, left zeroed by the kernel) and launches ``gemm_kernel`` (and ``reduce_kernel``)."""

from __future__ import annotations

from tilec.codegen.triton.printer.kernel import TORCH_DTYPE, Code, Kernel
from tilec.transforms.plan import Fixup, LoadKind, OperandLoad


def launcher(k: Kernel) -> str:
    """``_check``, ``_aligned`` (TMA), ``_workspace`` (partials) and ``run``."""
    p = k.plan
    w = p.work
    tdt = TORCH_DTYPE[p.dtype]
    # the launcher is plain Python: sizes are int literals (tl.constexpr is for kernels)
    M, N, K, BM, BN = p.M, p.N, p.K, p.BM, p.BN
    b_shape = f"({N}, {K})" if p.b_transposed else f"({K}, {N})"
    c = Code()
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
    if LoadKind.TMA in (p.a.kind, p.b.kind):
        c("def _aligned(x):")
        c.indent()
        c("return x if x.data_ptr() % 16 == 0 else x.clone()  # TMA needs 16-byte base addresses")
        c.dedent()("", "")
    if k.partials:
        _workspace_fn(c)
    c("def run(a, b, out=None):")
    c.indent()
    c(f'"""C = A @ B{".T" if p.b_transposed else ""}: a is (M, K), b is {b_shape}, '
      f'{p.dtype.value}; returns (M, N).')
    c("")
    c("out: an (M, N) tensor to write into (every element is written); default: a new one.")
    c('"""')
    c(f'_check("A", a, ({M}, {K}), {tdt})')
    c(f'_check("B", b, {b_shape}, {tdt})')
    c("if a.device != b.device:")
    c.indent()('raise ValueError(f"A and B must be on one device but got {a.device} and {b.device}")').dedent()
    c("a = a.contiguous()", "b = b.contiguous()")
    c("if out is None:")
    c.indent()(f"out = torch.empty(({M}, {N}), dtype={TORCH_DTYPE[p.c_dtype]}, device=a.device)").dedent()
    c("else:")
    c.indent()
    c(f'_check("out", out, ({M}, {N}), {TORCH_DTYPE[p.c_dtype]})')
    c("if not out.is_contiguous() or out.device != a.device:")
    c.indent()('raise ValueError("out must be contiguous and on the device of A")').dedent()
    c.dedent()
    sizes = {"M": M, "N": N, "K": K}
    for op, var, rows, cols, box in _descs(k):
        if op.kind is LoadKind.TMA:
            r, cl = sizes[rows], sizes[cols]
            c(f"{var} = TensorDescriptor(_aligned({var}), shape=[{r}, {cl}], "
              f"strides=[{cl}, 1], block_shape=[{box[0]}, {box[1]}])")
    args = "a, b, out"
    if k.partials:
        n_tickets = w.partial_tiles
        # one fp32 buffer per partial tile (atomic), else one slot per partial
        slots = n_tickets if k.fixup is Fixup.ATOMIC else w.partial_slots
        c(f"ws, tickets = _workspace(out.device, {slots * BM * BN}, {n_tickets})")
        args += ", ws, tickets"
    c(f"gemm_kernel[(GRID,)]({args}, num_warps={p.num_warps}, num_stages={p.num_stages})")
    if k.fixup is Fixup.REDUCE_KERNEL:
        c(f"reduce_kernel[({w.partial_tiles} * RED_STRIPS,)](out, ws, num_warps=4)")
    c("return out")
    return c.text()


def _workspace_fn(c: Code) -> None:
    c("_WORKSPACES = {}", "", "")
    c("def _workspace(device, n_ws, n_tickets):")
    c.indent()
    c('"""fp32 partial buffers and int32 tickets, zeroed once and kept per (device, stream).')
    c("")
    c("The kernel leaves both zeroed again (the last contributor of a tile clears its buffer")
    c("and resets its ticket), so a call launches no memset; launches on one stream run in")
    c("order, so two of them never share a workspace.")
    c('"""')
    c('stream = torch.cuda.current_stream(device).cuda_stream if device.type == "cuda" else 0')
    c("key = (str(device), stream)")
    c("if key not in _WORKSPACES:")
    c.indent()
    c("buf = torch.zeros(n_ws + n_tickets, dtype=torch.float32, device=device)")
    c("_WORKSPACES[key] = (buf[:n_ws], buf[n_ws:].view(torch.int32))")
    c.dedent()
    c("return _WORKSPACES[key]")
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
