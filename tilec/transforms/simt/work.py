"""The work decomposition of a SIMT kernel: the schedule's ``fusion.decompose(...)`` as a
:class:`~tilec.transforms.plan.WorkSplit` over the kernel's CTA tiles.

Data-parallel (the default) keeps the plain kernel: one CTA per tile of the launch grid, its
``blockIdx`` the tile.  Split-K, the Stream-K family (``streamk``, ``dp_1sk``, ``sk2_dp``,
``skpp``) and ``dp_ft`` (the last wave's fronts and tails, SIMT only) number the tiles of that grid row-major, ``g = bidy * GX + bidx``, and cut the
``tiles x k_tiles`` iteration space into work units ``(g, kb0, kb1)`` with the split's own
formulas (the ones the Triton and CUDA printers print): the kernel's CTAs walk their units,
each unit the K tiles ``[kb0, kb1)`` of tile ``g``, and a unit that covers part of a tile's K
range ends in the fix-up (deterministic: a slot per partial, summed in K order by the CTA that
takes the tile's last ticket; atomic: partials added into one fp32 tile).  ``sms`` of
``decompose`` is the number of CTAs the Stream-K family spreads its work over: on the SIMT path
that is SMs x CTAs per SM (264 for two CTAs per SM on the H200), so that one wave of CTAs holds
every Stream-K worker.

Why: a data-parallel grid whose last wave is partly empty loses that part of the wave (4096^3 of
128 x 128 tiles at two CTAs per SM: 1024 tiles over 264 slots, 3.88 waves; measured 3% fewer
GFLOP/s than a 4224 x 4096 problem of exactly 4 waves, ``bench/results/simt_tail_probe_*``);
``dp_1sk`` runs the whole waves data-parallel and spreads the partial one over every slot.

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.simt.lower import lower_simt
    >>> f = load_schedule("examples/simt_warp_tiled.py",
    ...                   dict(M=512, N=512, K=256, CONFIG="large", DECOMP="streamk",
    ...                        SMS_SLOTS=6)).fusion
    >>> w = lower_simt(f).work
    >>> w.kind.value, w.grid, w.sk_tiles, w.k_iters
    ('streamk', 6, 16, 8)
"""

from __future__ import annotations

from tilec.errors import UnsupportedError
from tilec.ir import GemmFusion
from tilec.transforms.decompose import make_work_split
from tilec.transforms.plan import Decomposition, Fixup, WorkSplit


def simt_work_split(fusion: GemmFusion, *, grid: tuple[int, int, int], block_names: list[str],
                    BM: int, BN: int, BK: int | None, async_copy: bool,
                    notes: list[str], concrete: bool = True) -> WorkSplit | None:
    """The SIMT kernel's work split at the reference launch, or None for the plain
    data-parallel kernel (and for a run-time plan, ``concrete`` False: its numbers are the
    launcher's, ``make_work`` printed by :mod:`tilec.codegen.cuda.simt.units`, per launch).

    ``grid``: the data-parallel launch grid (one CTA per tile); ``block_names``: the block
    symbols bound (``bidx``, ``bidy``); ``BK``: the staged K tile (None: K is not staged).
    Refused (UnsupportedError, naming what to change): ``auto`` (no SIMT cost model), the
    ``reduce_kernel`` fix-up, a K loop that is not staged through ``cp.async``, and a grid that
    is not 2-D over ``bidx`` and ``bidy``.
    """
    d = fusion.decomposition
    if d.kind is Decomposition.DATA_PARALLEL:
        return None
    if d.kind is None:
        raise UnsupportedError("SIMT printer: decompose('auto') has no cost model on the SIMT path; "
                               "name the decomposition (dp, splitk, streamk, dp_1sk, sk2_dp, skpp, dp_ft)")
    if d.fixup is Fixup.REDUCE_KERNEL:
        raise UnsupportedError("SIMT printer: the reduce_kernel fix-up is not printed for SIMT "
                               "kernels; use fixup='deterministic' or 'atomic'")
    if BK is None or not async_copy:
        raise UnsupportedError(
            f"SIMT printer: {d.kind.value} needs K tiles staged through cp.async "
            f"(split K as [Ko, Ki] and circular_buffer(..., async_copy=True))")
    gx, gy, gz = grid
    if gz != 1 or not set(block_names) <= {"bidx", "bidy"}:
        raise UnsupportedError(f"SIMT printer: {d.kind.value} numbers the tiles of a 2-D grid over "
                               f"bidx and bidy, but the grid is {grid} over {block_names}")
    if not concrete:
        notes.append(f"work: {d.kind.value}, fix-up {d.fixup.value}, its numbers per launch "
                     f"(make_work; tile g = bidy * tiles_n + bidx)")
        return None
    M, N, K = (int(e) for e in (fusion.M, fusion.N, fusion.K))
    tiles = gx * gy
    sms = d.sms or tiles
    work = make_work_split(d.kind, M=M, N=N, K=K, BM=BM, BN=BN, BK=BK, sms=sms,
                           splits=d.splits, sk_waves=d.sk_waves, fixup=d.fixup, num_tiles=tiles)
    if work.kind is Decomposition.DP_FRONT_TAIL and not work.front_tail:
        notes.append(f"work: dp_ft: {tiles} tiles fill whole waves of {sms} CTAs (or leave no "
                     f"tails to stream): one CTA per tile")
        return None
    if work.split_k:
        what = f"{work.splits} K parts of each of {tiles} tiles, {work.grid} CTAs"
    elif work.front_tail:
        dp = work.num_tiles - work.sk_tiles
        what = (f"tiles [0, {dp}) one CTA each, the fronts [0, {work.ft_front}) of tiles "
                f"[{dp}, {work.num_tiles}) on {work.sk_tiles} CTAs, their tails over "
                f"{work.ft_tail_ctas} CTAs, {work.grid} CTAs")
    elif work.stream_k:
        dp0, dp1 = work.dp_range
        what = (f"Stream-K tiles [{work.sk_start}, {work.sk_end}) over {work.sk_ctas} CTAs, "
                f"tiles [{dp0}, {dp1}) data-parallel, {work.grid} CTAs")
    else:
        what = f"whole tiles over {work.grid} CTAs"
    notes.append(f"work: {work.kind.value}, {what}, fix-up {work.fixup.value} "
                 f"(tile g = bidy * {gx} + bidx)")
    return work
