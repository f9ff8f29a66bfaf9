"""The SIMT launcher's checks (tilec.codegen.cuda.simt.launch.operands), on CPU tensors: the
sizes and leading dimensions it passes, and one KernelArgumentError (a TilecError) naming the tensor,
its shape and strides for what the kernel cannot take."""

from __future__ import annotations

import pytest
import torch

from tilec.errors import KernelArgumentError
from tilec.codegen.cuda.simt.launch import operands
from tilec.errors import TilecError


def test_sizes_and_leading_dimensions_come_from_the_tensors() -> None:
    A = torch.zeros(37, 70)[:, :13]  # rows 70 apart
    B = torch.zeros(13, 21)
    C = torch.zeros(37, 24)[:, :21]
    assert operands(A, B, C, device_type="cpu") == (37, 21, 13, 70, 21, 24)
    assert operands(A, B, device_type="cpu") == (37, 21, 13, 70, 21, 21)
    # empty and one-row operands have no meaningful stride: the row length
    assert operands(torch.zeros(0, 5), torch.zeros(5, 3), device_type="cpu")[:3] == (0, 3, 5)
    assert operands(torch.zeros(1, 5), torch.zeros(5, 0), device_type="cpu")[3:5] == (5, 1)


@pytest.mark.parametrize(("a", "b", "c", "match"), [
    (torch.zeros(4, 5, dtype=torch.float64), torch.zeros(5, 3), None,
     r"A \(shape \(4, 5\), strides \(5, 1\), torch.float64, cpu\) must be torch.float32"),
    (torch.zeros(4, 5), torch.zeros(6, 3), None,
     r"B must have K = 5 rows \(A's columns\) but has 6"),
    (torch.zeros(4, 5), torch.zeros(3, 5).t(), None,
     r"B \(shape \(5, 3\), strides \(1, 5\).*must be row-major with unit column stride"),
    (torch.zeros(4, 5), torch.zeros(5, 3), torch.zeros(4, 4),
     r"C \(shape \(4, 4\), strides \(4, 1\)\) must have shape \(4, 3\)"),
    (torch.zeros(4, 5), torch.zeros(5, 3), torch.zeros(3, 4).t(),
     r"C \(shape \(4, 3\), strides \(1, 4\).*must be row-major"),
    (torch.zeros(2, 3, 4), torch.zeros(5, 3), None, r"A \(shape \(2, 3, 4\).*must be a matrix"),
])
def test_bad_operands_are_refused_naming_the_tensor(a, b, c, match) -> None:  # type: ignore[no-untyped-def]
    with pytest.raises(KernelArgumentError, match=match):
        operands(a, b, c, device_type="cpu")


def test_output_aliasing_an_input_and_host_tensors_are_refused() -> None:
    X = torch.zeros(8, 8)
    with pytest.raises(KernelArgumentError, match=r"C \(shape \(8, 8\), strides \(8, 1\)\) overlaps A"):
        operands(X, torch.zeros(8, 8), X, device_type="cpu")
    with pytest.raises(KernelArgumentError, match=r"overlaps B"):
        operands(torch.zeros(4, 4), X[:4, :4], X[2:6, 4:], device_type="cpu")  # interleaved rows
    operands(torch.zeros(4, 4), X[:4, :4], X[4:, :4], device_type="cpu")  # disjoint rows: fine
    with pytest.raises(TilecError, match=r"A \(shape \(4, 5\).*must be on a CUDA device"):
        operands(torch.zeros(4, 5), torch.zeros(5, 3))
