"""a built kernel's launcher given A and B whose K differ (the SIMT launcher's checks, on CPU)."""

from __future__ import annotations

from tilec.errors import KernelArgumentError

EXPECT = KernelArgumentError, "SIMT kernel: A (shape (4, 3)) @ B (shape (5, 2)): B must have K = 3 rows (A's columns) but has 5"


def program() -> None:
    import torch

    from tilec.codegen.cuda.simt.launch import operands

    operands(torch.zeros(4, 3), torch.zeros(5, 2), device_type="cpu")
