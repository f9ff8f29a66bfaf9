"""CUDA C++ backend (sm_90a): print a :class:`~tilec.transforms.plan.KernelPlan` as a ``.cu`` file.

The kernel is a persistent, warp-specialized TMA + WGMMA GEMM:

* warpgroup 0 is the producer (``setmaxnreg`` down to 40): one thread walks the tile order and
  issues TMA box loads (128-byte swizzle) into a ``num_stages``-deep ring of shared-memory stages,
  each guarded by a *full* and an *empty* mbarrier with phase tracking;
* warpgroups 1..C are consumers (``setmaxnreg`` up to 232): each owns BM/C rows of the tile, waits
  on *full*, runs ``wgmma.mma_async m64nBNk16`` from shared memory into fp32 registers, then
  releases the stage by arriving on the *empty* barrier of every CTA of the cluster (``mapa`` + a
  remote arrive), and finally writes its rows of C by the plan's epilogue (``KernelPlan.epilogue``,
  the schedule's ``set_kernel(epilogue=)``): by default packed to 16 bits in registers and stored
  box by box through shared memory and TMA during the next tile's first k-iterations
  ("overlap"), else through the TMA staging ring after the k-loop ("tma", "tma_tile"), or
  straight from registers to global memory ("direct": fp32 C, rows TMA cannot store);
* with the plan's ``swap_ab`` (SWAP_AB=1) each tile is computed as C^T = B^T A^T: the consumers
  split BN in 64-column slabs, ``wgmma.mma_async m64nBMk16`` takes a slab of B as its A and A's
  stage as its B, so BM is any multiple of 8 (:mod:`.swap`);
* with a cluster, operand loads are TMA multicasts whose issue predicate, mask and slice come from
  the plan's :class:`~tilec.transforms.plan.MulticastPlan` (closed form, general run-time form, or
  the closed form behind a run-time guard), printed from sympy by
  :class:`~tilec.codegen.cuda.expr.CudaExprPrinter` into ``__host__ __device__`` functions;
* every CTA runs the same number of persistent rounds; a CTA whose tile is dead in a round issues
  nothing, expects no bytes, and still releases its stages, so the cluster's barrier counts stay
  balanced; a cluster barrier before exit keeps peers alive while remote arrivals may land.

Work is walked in units ``work_unit(worker, j) -> (group, kb0, kb1)`` printed from the plan's
:class:`~tilec.transforms.plan.WorkSplit` (data-parallel, split-K, Stream-K and its hybrids); a
worker is a CTA, or a whole cluster, whose CTAs run tiles ``group * CLUSTER + rank`` over the same
K range.  A unit that covers part of a tile's K range ends in the fix-up (deterministic: private
workspace slots summed in K order by the last arrival; atomic: fp32 adds into one tile; reduce
kernel, split-K only: private slots, summed in K order by a second kernel, ``reduce_kernel``,
that the launcher runs after the GEMM on the same stream: :mod:`.reduce`).

Example::

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.runtime.build import kernel_plan
    >>> s = load_schedule("examples/seed004_persistent_cluster.py",
    ...                   {"M": 512, "N": 512, "K": 256, "CM": 1, "CN": 2, "SMS": 4})
    >>> src = emit(kernel_plan(s, target="cuda"))
    >>> "cp.async.bulk.tensor" in src and "__cluster_dims__(2, 1, 1)" in src
    True
"""

from tilec.codegen.cuda.printer.file import CudaPrinter, emit, emit_schedule, host_prefix
from tilec.codegen.cuda.printer.schedule import SCHEDULE_BEGIN, SCHEDULE_END
from tilec.codegen.cuda.printer.shape import Kernel, KernelShape

__all__ = [
    "SCHEDULE_BEGIN",
    "SCHEDULE_END",
    "CudaPrinter",
    "Kernel",
    "KernelShape",
    "emit",
    "emit_schedule",
    "host_prefix",
]
