"""The one map from tilec's element types to torch's and Triton's (torch is imported only when a
``torch.dtype`` is asked for: printers need the names alone).

Example::

    >>> from tilec.ir.types import DType
    >>> TORCH_NAME[DType.BF16], TRITON_NAME[DType.FP16]
    ('bfloat16', 'float16')
    >>> torch_dtype("fp32")
    torch.float32
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tilec.ir.types import DType

if TYPE_CHECKING:
    import torch

__all__ = ["TORCH_NAME", "TRITON_NAME", "torch_dtype"]

TORCH_NAME: dict[DType, str] = {DType.FP16: "float16", DType.BF16: "bfloat16",
                                DType.FP32: "float32"}  # torch.<name>
TRITON_NAME: dict[DType, str] = dict(TORCH_NAME)  # tl.<name>: Triton spells them as torch does


def torch_dtype(dtype: DType | str) -> torch.dtype:
    """The ``torch.dtype`` of ``dtype`` (a :class:`~tilec.ir.types.DType` or its name)."""
    import torch

    return getattr(torch, TORCH_NAME[DType(dtype)])
