"""The custom ops of a built library: copied into every module ``tilec build`` writes, after
:mod:`tilec.library.runtime`; the module ends with ``_setup()``, which registers them.

``torch.ops.<OP_NAMESPACE>.matmul(a, b)`` and ``matmul_out(a, b, out)`` run the library's checked
call (``_run``); each has a fake kernel (the checks on shapes, strides and dtypes, no data), and
``matmul`` a backward through torch.matmul. ``matmul()`` calls them while torch.compile traces and
where a or b requires grad.
"""
# ruff: noqa: F821  (the data block's names: NAME, KERNELS, CONFIGS, DTYPE, OUT_DTYPE)

from __future__ import annotations

# ruff: noqa: I001 (the imports above the marker below are tilec's; the built module copies
# the text after it, so an import sorted past the marker would break it)

from tilec.library.checks import _check
from tilec.library.runtime import _run

# ---- the built module's code: copied from here on (tilec.library.build.module_text) ----
import hashlib
import os

import torch

_OPS: list = []  # the ops' overloads: matmul, matmul_out
_OPS_LIB: list = []  # their torch.library.Library


def _namespace() -> str:
    digest = hashlib.sha1(repr((NAME, sorted(KERNELS), CONFIGS)).encode()).hexdigest()[:8]
    base = "".join(ch if ch.isalnum() else "_" for ch in f"tilec_{NAME}_{digest}")
    for i in range(1000):
        ns = base if i == 0 else f"{base}_{i}"
        try:
            getattr(getattr(torch.ops, ns), "matmul")
        except (AttributeError, RuntimeError):
            return ns
    raise RuntimeError("no free torch.library namespace")  # pragma: no cover


def _setup() -> None:
    """Register the custom ops (``matmul`` and ``matmul_out``) with their fake kernels and a
    backward through torch.matmul; set the module's dtypes and log flag."""
    global _DTYPE, _OUT_DTYPE, _LOG, OP_NAMESPACE
    _DTYPE = getattr(torch, DTYPE)
    _OUT_DTYPE = getattr(torch, OUT_DTYPE)
    _LOG = os.environ.get("TILEC_LOG", "") not in ("", "0")
    OP_NAMESPACE = _namespace()
    # defined with torch.library.Library, not torch.library.custom_op: the same op for the
    # dispatcher, torch.compile and opcheck, without custom_op's Python wrapper on every call
    # (on CPU 7 us per call against 25)
    lib = torch.library.Library(OP_NAMESPACE, "DEF")
    _OPS_LIB[:] = [lib]  # the registrations live as long as the module
    lib.define("matmul(Tensor a, Tensor b) -> Tensor")
    lib.define("matmul_out(Tensor a, Tensor b, Tensor(a!) out) -> ()")
    lib.impl("matmul", lambda a, b: _run(a, b, None), "CompositeExplicitAutograd")

    def matmul_out(a, b, out):
        _run(a, b, out)

    lib.impl("matmul_out", matmul_out, "CompositeExplicitAutograd")

    def fake(a, b):
        M, N, _ = _check(a, b, None)
        return a.new_empty((M, N), dtype=_OUT_DTYPE)

    def fake_out(a, b, out):
        _check(a, b, out)

    torch.library.register_fake(f"{OP_NAMESPACE}::matmul", fake, lib=lib)
    torch.library.register_fake(f"{OP_NAMESPACE}::matmul_out", fake_out, lib=lib)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(*inputs)

    def backward(ctx, grad):
        a, b = ctx.saved_tensors
        g = grad.to(a.dtype)
        return torch.matmul(g, b.t()), torch.matmul(a.t(), g)

    torch.library.register_autograd(f"{OP_NAMESPACE}::matmul", backward,
                                    setup_context=setup_context, lib=lib)
    ops = getattr(torch.ops, OP_NAMESPACE)
    _OPS[:] = [ops.matmul.default, ops.matmul_out.default]
