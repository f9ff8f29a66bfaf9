"""Triton backend: print a :class:`~tilec.transforms.plan.KernelPlan` as a standalone Python file.

The file holds small ``@triton.jit`` functions, one per plan feature, and a launcher::

    tile_coords(t)            the TileOrder, printed from its sympy expressions
    load_a / load_b           one per operand: masked pointer loads or tensor-descriptor (TMA) loads
    mainloop                  the K loop of one work unit (k_begin, k_end)
    store_c                   the epilogue (cast to C's dtype, masked store)
    partial_slot/contributors where the partials of a tile live, in K order (split-K / Stream-K)
    fixup                     atomic, deterministic (ticket) or workspace store (reduce kernel)
    unit                      one (tile, k_begin, k_end) unit: order + mainloop + epilogue/fix-up
    gemm_kernel               the schedule: data-parallel / split-K / Stream-K regions
    reduce_kernel             the separate reduction (Fixup.REDUCE_KERNEL)
    run(a, b, out=None)       checks, workspaces, descriptors, launches

Every index formula of the schedule (tile order, unit -> tile / split, Stream-K iteration ranges
and owners) is a sympy expression printed by :class:`TritonExprPrinter`; the Python text around
them is built by one emitter per feature, so a feature the plan does not use leaves no code.

Modules: :mod:`.kernel` (the checked plan every section reads, the code writer), :mod:`.tile`
(tile order, loads, K loop, epilogue), :mod:`.fixup` (partial tiles), :mod:`.work` (units and
the kernel), :mod:`.launcher` (``run``), :mod:`.file` (the assembled file, :func:`emit`).
Writing the file and importing it is the runtime's (:func:`tilec.runtime.build.load_triton`).

Example::

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.pipeline import lower
    >>> s = load_schedule("examples/split_k.py", {"M": 100, "N": 70, "K": 50, "BM": 32, "BN": 32,
    ...                                            "BK": 16, "SPLITS": 2})
    >>> src = emit(lower(s.fusion))
    >>> "def gemm_kernel" in src and "def run(a, b, out=None)" in src and "SPLITS = " in src
    True
"""

from tilec.codegen.triton.printer.file import TritonPrinter, emit

__all__ = ["TritonPrinter", "emit"]
