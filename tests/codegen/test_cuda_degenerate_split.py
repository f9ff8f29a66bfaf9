"""A split-K configuration lowered at sizes where its parts degenerate (K of one k-iteration: the
plan's own split has one part) prints the kernel it prints at a deep K: the kernel serves every
size and its launcher passes the rule's parts at each (printer/work.py's ``cuts_k``). Before,
such a kernel had no K-part paths, and launched at a deep K each part ran the whole K."""

from __future__ import annotations

from pathlib import Path

import pytest

from tilec.library.build import _lower
from tilec.runtime.build import kernel_source

SCHEDULE = Path(__file__).resolve().parents[2] / "examples" / "gemm_decomposition.py"
BASE = {"GROUP_M": 8, "SMS": 132, "DTYPE": "bf16", "SK_WAVES": 1, "LOAD": "auto",
        "B_LAYOUT": "kn", "DECOMP": "splitk"}


@pytest.mark.parametrize("knobs, M, N", [
    # the decode rule's swapped 16x256, split-K 3 (cuda_swap.rule)
    ({"BM": 16, "BN": 256, "BK": 64, "STAGES": 6, "WARPS": 8, "SWAP_AB": 1, "CM": 1, "CN": 1,
      "SPLITS": 3, "FIXUP": "deterministic"}, 1, 6144),
    # 128x256 split-K 16 with the reduce kernel on a 2x1 cluster (cuda_rules.CUDA_FEW_DEEP)
    ({"BM": 128, "BN": 256, "BK": 64, "STAGES": 4, "WARPS": 12, "SWAP_AB": 0, "CM": 2, "CN": 1,
      "SPLITS": 16, "FIXUP": "reduce_kernel"}, 512, 512),
])
def test_a_degenerate_split_prints_the_deep_kernel(knobs: dict, M: int, N: int) -> None:
    params = {**BASE, **knobs}
    shallow = _lower(SCHEDULE, params, (M, N, 64), "cuda")
    deep = _lower(SCHEDULE, params, (M, N, 64 * 64 * knobs["SPLITS"]), "cuda")
    assert shallow.work.splits == 1 and deep.work.splits == knobs["SPLITS"]
    src = kernel_source(shallow, "cuda")
    assert "unit_part(" in src and "fix_of(" in src
    assert src == kernel_source(deep, "cuda")
