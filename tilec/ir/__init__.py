"""tilec.ir: IterDomains, TensorViews, the GEMM fusion, index maps, launch inference, traces."""

from tilec.ir.fusion import GemmFusion
from tilec.ir.indexing import IndexMap, index_map, index_symbol
from tilec.ir.iterdomain import IterDomain, Merge, Split, Swizzle, ceil_div
from tilec.ir.launch import LaunchDims, infer_launch
from tilec.ir.tensorview import AxisRef, TensorView
from tilec.ir.trace import Schedule
from tilec.ir.types import DType, IterType, MemoryType, ParallelType

__all__ = [
    "AxisRef", "DType", "GemmFusion", "IndexMap", "IterDomain", "IterType", "LaunchDims",
    "MemoryType", "Merge", "ParallelType", "Schedule", "Split", "Swizzle", "TensorView",
    "ceil_div", "index_map", "index_symbol", "infer_launch",
]
