"""What a built library checks before it runs a kernel, and how it hands operands over: copied
into every module ``tilec build`` writes, ahead of :mod:`tilec.library.runtime`.

The checks read shapes, strides, dtypes, devices and addresses, never data, so they also run on
fake tensors (the custom op's fake kernel). Each mistake is one :class:`TilecError` naming the
tensor, its shape, strides, dtype and device, and what is allowed.
"""
# ruff: noqa: F821  (the data block's names: NAME, DTYPE, B_LAYOUT; _DTYPE, _OUT_DTYPE of _setup)

from __future__ import annotations

# ---- the built module's code: copied from here on (tilec.library.build.module_text) ----
import os

import torch


class TilecError(ValueError, TypeError):
    """Bad input to the library: the message names the tensor, its shape and strides and what is
    allowed. A ValueError and a TypeError, so either ``except`` catches it."""


# --------------------------------------------------------------------------------------------
# checks
# --------------------------------------------------------------------------------------------


def _describe(name: str, x: torch.Tensor) -> str:
    return f"{name} (shape {tuple(x.shape)}, strides {tuple(x.stride())}, {x.dtype}, {x.device})"


def _on_cpu_ok() -> bool:
    return TARGET != "cuda" and os.environ.get("TRITON_INTERPRET") == "1"


def _check(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor | None
           ) -> tuple[int, int, int]:
    """(M, N, K) of ``a @ b`` into ``out``, or a TilecError; reads no data (runs on fakes)."""
    for name, x in (("a", a), ("b", b)) + ((("out", out),) if out is not None else ()):
        if not isinstance(x, torch.Tensor):
            raise TilecError(f"{NAME}.matmul: {name} must be a torch.Tensor but is "
                             f"{type(x).__name__}")
        if x.dim() != 2:
            raise TilecError(f"{NAME}.matmul: {_describe(name, x)} must be 2-D (a: M x K, "
                             f"b: K x N, out: M x N)")
    for name, x in (("a", a), ("b", b)):
        if x.dtype != _DTYPE:
            raise TilecError(f"{NAME}.matmul: {_describe(name, x)} must be {_DTYPE} (this "
                             f"library was built for {DTYPE}; build another for {x.dtype})")
    M, K = a.shape
    K2, N = b.shape
    if K != K2:
        raise TilecError(f"{NAME}.matmul: a and b do not agree on K: {_describe('a', a)} is "
                         f"M x K with K = {K}, {_describe('b', b)} is K x N with K = {K2}")
    dev = a.device
    if b.device != dev:
        raise TilecError(f"{NAME}.matmul: a and b must be on one device but {_describe('a', a)}"
                         f" and {_describe('b', b)}")
    if dev.type != "cuda" and not (dev.type in ("cpu", "meta") and _on_cpu_ok()):
        raise TilecError(f"{NAME}.matmul: {_describe('a', a)} must be on a CUDA device (" + (
            "the kernels are CUDA sm_90a kernels)" if TARGET == "cuda" else "the kernels are "
            "Triton kernels; TRITON_INTERPRET=1 runs them on CPU)"))
    if out is not None:
        if tuple(out.shape) != (M, N):
            raise TilecError(f"{NAME}.matmul: {_describe('out', out)} must have shape "
                             f"{(M, N)} (a is {M} x {K}, b is {K} x {N})")
        if out.dtype != _OUT_DTYPE:
            raise TilecError(f"{NAME}.matmul: {_describe('out', out)} must be {_OUT_DTYPE}")
        if out.device != dev:
            raise TilecError(f"{NAME}.matmul: {_describe('out', out)} must be on {dev}, the "
                             f"device of a and b")
        if not out.is_contiguous():
            raise TilecError(f"{NAME}.matmul: {_describe('out', out)} must be contiguous "
                             f"(strides ({N}, 1)): the kernel stores C row by row")
    return M, N, K


def _span(x: torch.Tensor) -> tuple[int, int]:
    """The byte range [lo, hi) of ``x``'s elements in its storage's address space."""
    lo = hi = x.data_ptr()
    for size, stride in zip(x.shape, x.stride()):
        if stride < 0:
            lo += (size - 1) * stride * x.element_size()
        else:
            hi += (size - 1) * stride * x.element_size()
    return lo, hi + x.element_size()


def _check_overlap(a: torch.Tensor, b: torch.Tensor, out: torch.Tensor) -> None:
    """A TilecError when ``out`` shares memory with ``a`` or ``b`` (the kernel would read what
    it has already written)."""
    if out.numel() == 0:
        return
    o_lo, o_hi = _span(out)
    for name, x in (("a", a), ("b", b)):
        if x.numel() == 0:
            continue
        lo, hi = _span(x)
        if lo < o_hi and o_lo < hi:
            raise TilecError(f"{NAME}.matmul: out overlaps {name} in memory: "
                             f"{_describe('out', out)} spans bytes [{o_lo:#x}, {o_hi:#x}), "
                             f"{_describe(name, x)} spans [{lo:#x}, {hi:#x}); give an out that "
                             f"shares no memory with a or b")


# --------------------------------------------------------------------------------------------
# operands
# --------------------------------------------------------------------------------------------


def _operands(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, int]:
    """a as the kernel reads it (M x K, row-major), b likewise (K x N row-major, or N x K
    row-major for an nk build), each copied only where its layout or base address needs it."""
    bk = b.t() if B_LAYOUT == "nk" else b
    copies = 0
    if not a.is_contiguous() or a.data_ptr() % 16:
        a, copies = torch.empty(a.shape, dtype=a.dtype, device=a.device).copy_(a), 1
    if not bk.is_contiguous() or bk.data_ptr() % 16:
        bk, copies = torch.empty(bk.shape, dtype=bk.dtype, device=bk.device).copy_(bk), copies + 1
    return a, bk, copies
