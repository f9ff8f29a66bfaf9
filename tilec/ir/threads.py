"""Thread-level choices of a SIMT (CUDA-core) schedule that are not loop structure.

The loop structure of a thread-level schedule is ordinary IR: the block tile is C's axes bound to
``BIDx/y``, the warp tile and the lanes are thread axes merged into ``TIDx`` (``tid = warp*32 +
lane``), the thread tile is C's serial register axes, the vector width a ``Vectorize`` axis, the
K tile a ``[Ko, Ki]`` split.  What the loops cannot say lives here, set by nine verbs of
:class:`~tilec.ir.GemmFusion` (each recorded in the schedule trace):

* ``fusion.circular_buffer(stages, fragments, async_copy)``: shared-memory buffers per operand
  and how K tiles reach them.  Without ``async_copy`` (1 or 2 stages) a thread loads its part of
  the next K tile into registers (128-bit ``ld.global``) while the current one is multiplied and
  stores it to shared memory (``st.shared``) before the barrier; with ``async_copy`` (2 to 4
  stages) ``cp.async`` copies global memory straight to shared memory, ``stages - 1`` K tiles
  ahead (Ampere's LDGSTS; A, stored transposed, goes in 4-byte copies).  ``fragments``: register
  buffers of the k-slice the FMAs read (2: the next slice is read from shared memory while the
  FMAs of this one run);
* ``fusion.smem_pad(operand, pad)``: elements appended to each row of the operand's shared tile
  (against bank conflicts); left unset, lowering picks the pad with the fewest conflicts;
* ``fusion.copy_lanes(operand, lanes)``: how the threads of the operand's cooperative tile copy
  walk the tile: ``lanes`` consecutive threads move consecutive vectors of one row, the next
  ``lanes`` threads the same columns of the next row, and the tile's rows are walked before its
  next ``lanes``-vector column block (unset: a whole row of consecutive threads).  A warp then
  covers ``32 / lanes`` rows of ``lanes`` vectors: with A stored transposed, 8 lanes of 4 bytes
  over 4 rows put a warp's ``cp.async`` stores in 32 distinct banks (one row in all would hit 8);
* ``fusion.smem_swizzle("A")``: A's transposed shared tile stores element ``(m, k)`` at column
  ``w*(m//w) + (m + k//(32/w)) % w`` of row ``k`` (``w``: the width of the k-slice reads):
  each aligned ``w``-vector stays in place, its elements rotated by ``k // (32/w)``.  With
  rows ``w`` words past a multiple of 32, a warp's transposed stores of 32 consecutive k of one
  row then fall in 32 distinct banks, while a k-slice read stays one aligned ``w``-vector (its
  elements in a rotated order the printer undoes: ``ki`` is a constant of the unrolled loop);
* ``fusion.spread_copies(slices)``: with ``cp.async``, the next K tile's copy instructions are
  issued in ``slices`` groups, one before each of the current tile's first ``slices`` k-slices
  (unset: 1, all at the top of the tile), so that the warps' copies do not queue in one burst
  before the shared-memory reads of the FMAs;
* ``fusion.copy_addresses(how)``: how a thread's ``cp.async`` copies of a K tile compute
  their global addresses (see :data:`COPY_ADDRESSES`).  ``index`` prints each copy's element
  index (32-bit, then widened: an add and a wide multiply-add per copy in SASS, since LDGSTS
  folds only offsets within 2 KB into the instruction and a thread's rows are further apart);
  ``stride``: one pointer per thread and K tile plus the copy number times the distance between
  a thread's copies, passed to the kernel as an argument, so that ptxas, which cannot fold a
  value it does not know, makes each address one wide multiply-add (``IMAD.WIDE.U32``, which
  issues to the FMA pipe, beside the FFMAs); ``byte_stride``: the stride a 64-bit byte count, so
  each address is one 64-bit add (``IADD3`` + ``IADD3.X``, the integer pipe);
* ``fusion.stage_c(on)``: whether the epilogue stages the register tile through shared memory
  (the K tiles' buffers, free after the main loop) so that a warp's global stores of C cover
  consecutive columns (128 contiguous bytes per 32-bit store instruction).  Unset, lowering
  stages where C's stores are 32-bit (rows of C not proven 16-byte aligned) and the tile fits
  in the K tiles' shared memory; ``True`` stages every variant whose tile fits, ``False`` none
  (:mod:`tilec.transforms.simt.cstage`);
* ``fusion.min_blocks_per_sm(n)``: CTAs that must fit on one SM (``__launch_bounds__``' second
  argument: the compiler caps registers at 65536 / (threads * n));
* ``fusion.fma_order(order)``: the order of the k-slice's FMAs over the thread tile
  ``acc[i][j] += a[i] * b[j]`` (see :data:`FMA_ORDERS`).  Consecutive FMAs that share an operand
  let the hardware take it from the operand reuse cache instead of the register file; ptxas
  keeps much of the source order, so the order decides how many FFMAs read all three operands
  from the register file.

Example::

    >>> from tilec.ir import GemmFusion
    >>> f = GemmFusion(256, 256, 64, dtype="fp32")
    >>> _ = f.circular_buffer(2, fragments=2).smem_pad("A", 4).min_blocks_per_sm(2)
    >>> f.thread_options
    ThreadOptions(stages=2, fragments=2, async_copy=False, pad_a=4, pad_b=None, min_blocks=2, fma_order='rows', lanes_a=None, lanes_b=None, copy_slices=1, swizzle_a=False, copy_addresses='index', stage_c=None)
    >>> print(f.schedule.calls[-1])
    fusion.min_blocks_per_sm(2)
"""

from __future__ import annotations

from dataclasses import dataclass

from tilec.errors import ScheduleError

MAX_PAD = 32  # elements: a pad past one bank row never removes another conflict
FMA_ORDERS = {
    "rows": "i outer, j inner: a[i] shared along a row, nothing shared between rows",
    "snake_rows": "i outer, j inner reversed on odd rows: b[j] also shared between rows",
    "snake_columns": "j outer, i inner reversed on odd columns: b[j] shared along a column, "
                     "a[i] between columns",
}
COPY_ADDRESSES = {
    "index": "each copy's element index in 32 bits, widened to a pointer",
    "stride": "a pointer per thread and K tile plus copy number x a stride passed as a kernel "
              "argument (one wide multiply-add per copy)",
    "byte_stride": "the same with the stride a 64-bit byte count (one 64-bit add per copy, on the "
                   "integer pipe: none on the FMA pipe the FFMAs need)",
}


@dataclass(frozen=True)
class ThreadOptions:
    """The thread-level options of a fusion (defaults: what a schedule gets without the verbs)."""

    stages: int = 2
    fragments: int = 1
    async_copy: bool = False
    pad_a: int | None = None
    pad_b: int | None = None
    min_blocks: int | None = None
    fma_order: str = "rows"
    lanes_a: int | None = None
    lanes_b: int | None = None
    copy_slices: int = 1
    swizzle_a: bool = False
    copy_addresses: str = "index"
    stage_c: bool | None = None  # None: lowering decides (:mod:`tilec.transforms.simt.cstage`)

    def pad(self, operand: str) -> int | None:
        return self.pad_a if operand == "A" else self.pad_b

    def lanes(self, operand: str) -> int | None:
        return self.lanes_a if operand == "A" else self.lanes_b


def check_stages(stages: object, fragments: object, async_copy: object) -> tuple[int, int, bool]:
    if not isinstance(async_copy, bool):
        raise ScheduleError(f"circular_buffer: async_copy must be True or False but got "
                            f"{async_copy!r}")
    lo, hi = (2, 4) if async_copy else (1, 2)
    if isinstance(stages, bool) or not isinstance(stages, int) or not lo <= stages <= hi:
        raise ScheduleError(f"circular_buffer: stages must be in {lo}..{hi}"
                            f"{' with async_copy' if async_copy else ' (4 with async_copy)'} but "
                            f"got {stages!r}")
    if isinstance(fragments, bool) or not isinstance(fragments, int) or fragments not in (1, 2):
        raise ScheduleError(f"circular_buffer: fragments must be 1 or 2 but got {fragments!r}")
    return stages, fragments, async_copy


def check_pad(operand: object, pad: object) -> tuple[str, int]:
    if operand not in ("A", "B"):
        raise ScheduleError(f"smem_pad: operand must be 'A' or 'B' but got {operand!r}")
    if isinstance(pad, bool) or not isinstance(pad, int) or not 0 <= pad <= MAX_PAD:
        raise ScheduleError(f"smem_pad: the pad of {operand} must be an integer in 0..{MAX_PAD} "
                            f"(elements per row) but got {pad!r}")
    return operand, pad  # type: ignore[return-value]


def check_lanes(operand: object, lanes: object) -> tuple[str, int]:
    if operand not in ("A", "B"):
        raise ScheduleError(f"copy_lanes: operand must be 'A' or 'B' but got {operand!r}")
    if isinstance(lanes, bool) or not isinstance(lanes, int) or lanes not in (1, 2, 4, 8, 16, 32):
        raise ScheduleError(f"copy_lanes: the lanes of {operand}'s tile copy along a row must be "
                            f"a power of 2 in 1..32 but got {lanes!r}")
    return operand, lanes  # type: ignore[return-value]


def check_swizzle(operand: object) -> str:
    if operand != "A":
        raise ScheduleError(f"smem_swizzle: only A's shared tile (stored transposed) is swizzled; "
                            f"got operand {operand!r}")
    return operand


def check_slices(slices: object) -> int:
    if isinstance(slices, bool) or not isinstance(slices, int) or not 1 <= slices <= 64:
        raise ScheduleError(f"spread_copies: slices must be an integer in 1..64 (k-slices of a K "
                            f"tile) but got {slices!r}")
    return slices


def check_copy_addresses(how: object) -> str:
    if how not in COPY_ADDRESSES:
        raise ScheduleError(f"copy_addresses: how must be one of {', '.join(COPY_ADDRESSES)} but "
                            f"got {how!r}")
    return how  # type: ignore[return-value]


def check_stage_c(on: object) -> bool:
    if not isinstance(on, bool):
        raise ScheduleError(f"stage_c: on must be True or False but got {on!r}")
    return on


def check_min_blocks(n: object) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= 32:
        raise ScheduleError(f"min_blocks_per_sm: n must be an integer in 1..32 (CTAs per SM) but "
                            f"got {n!r}")
    return n


def check_fma_order(order: object) -> str:
    if order not in FMA_ORDERS:
        raise ScheduleError(f"fma_order: order must be one of {', '.join(FMA_ORDERS)} but got "
                            f"{order!r}")
    return order  # type: ignore[return-value]
