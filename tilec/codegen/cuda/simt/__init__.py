"""The CUDA printer of SIMT fp32 GEMM kernels (a :class:`~tilec.transforms.simt.lower.SimtPlan`
as one ``.cu``): :mod:`~tilec.codegen.cuda.simt.body` the kernel's parts (register loops, K
loops, copies, epilogue); :mod:`~tilec.codegen.cuda.simt.units` the work split's unit walk and
fix-up (split-K and the Stream-K family) around them; :mod:`~tilec.codegen.cuda.simt.printer`
the file (header, kernels, launcher); :mod:`~tilec.codegen.cuda.simt.text` the fixed CUDA
helpers."""

from tilec.codegen.cuda.simt.printer import SimtCudaPrinter, emit_simt
from tilec.codegen.cuda.simt.units import WORK_BEGIN, WORK_END

__all__ = ["WORK_BEGIN", "WORK_END", "SimtCudaPrinter", "emit_simt"]
