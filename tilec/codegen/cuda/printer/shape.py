"""What the CUDA kernel is built from: the plan checked against what this backend prints, its
launch and tiling numbers (:class:`KernelShape`, with the stage-release protocol's receiver sets
that lowering decided: ``KernelPlan.release``, :mod:`tilec.transforms.pipeline.release`), and the
:class:`Kernel` every section of the file is printed from."""

from __future__ import annotations

from dataclasses import dataclass

import sympy

from tilec.errors import UnsupportedError
from tilec.ir import ceil_div
from tilec.transforms.pipeline.release import plan_release
from tilec.transforms.plan import (
    Decomposition,
    DType,
    Fixup,
    KernelPlan,
    LoadKind,
    MulticastMode,
    OperandLoad,
)

LOOP_VARS = ("rank", "i_rt", "cidx")  # the kernel values multicast expressions may use
PAIR_VARS = ("r1", "r2", "i_rt", "cidx")  # the variables of `same`
SIZES = ("M", "N", "K")  # the run-time sizes (members of the kernel's Shape)
SMEM_LIMIT = 227 * 1024
BOX_BYTES = 64 * 64 * 2  # one 64x64 16-bit staging box of the TMA-store epilogue


@dataclass(frozen=True)
class KernelShape:
    """Launch and tiling numbers the kernel is built from (all checked against the plan)."""

    consumers: int  # consumer warpgroups
    wg_m: int  # tile rows per consumer warpgroup (swap_ab: tile columns, WG_N)
    m_sub: int  # m64 wgmma rows per consumer warpgroup (swap_ab: 64-column slabs, N_SUB)
    cluster: int
    stages: int
    chunks_a: int  # TMA boxes one stage of A is cut into (sliced multicast), else 1
    chunks_b: int
    smem_bytes: int
    tma_store: bool  # epilogue through shared memory and TMA stores (else registers -> global)
    # Exact stage-release protocol (docs/cuda_backend.md, "Stage release"): per rank X, the CTAs
    # X's loads land in, itself included (R'(X)), and the CTAs that load into X (S'(X)).
    # None: the masks vary per round; the conservative all-cluster protocol is printed.
    receivers: tuple[int, ...] | None
    senders: tuple[int, ...] | None
    epi_boxes: int = 2  # TMA-store staging boxes per consumer warpgroup
    swap: bool = False  # the plan's swap_ab: each tile computed as C^T = B^T A^T

    @property
    def threads(self) -> int:
        return 128 * (1 + self.consumers)


@dataclass(frozen=True)
class Kernel:
    """One kernel being printed: the plan, its checked shape and the printer's options (the
    epilogue printed; ``mma_in_flight``, ``loads``: see :func:`~tilec.codegen.cuda.printer.emit`),
    ``cname`` the C namespace of the file."""

    plan: KernelPlan
    shape: KernelShape
    epilogue: str
    mma_in_flight: int
    loads: bool
    cname: str
    # some work units may cover part of a tile's K range (a fix-up is printed): split-K, or a
    # Stream-K kind (its region's size is a run-time number); work.partials
    partials: bool


def _const_int(expr: sympy.Expr | None) -> int | None:
    """The value of a constant expression, else None."""
    if expr is None:
        return None
    e = sympy.sympify(expr)
    return int(e) if e.is_Integer else None


def check(p: KernelPlan, epilogue: str) -> KernelShape:
    """The plan's launch and tiling numbers for ``epilogue`` (the plan's, lowering's choice, or
    a printer option), or an UnsupportedError naming what this backend does not print.  The
    cluster sizes and the epilogue are lowering's (:func:`~tilec.transforms.pipeline.legalize.legalize`);
    the stage release is the plan's (``KernelPlan.release``; a plan without one, lowered for
    Triton or edited after lowering, gets
    :func:`~tilec.transforms.pipeline.release.plan_release`'s)."""
    check_supported(p)
    consumers, wg_m, m_sub = swap_warpgroups(p, epilogue) if p.swap_ab else warpgroups(p)
    cx = p.cluster[0]
    chunks = [check_multicast(op, cx, rows) for op, rows in ((p.a, p.BM), (p.b, p.BN))]
    if not p.b.transposed:
        chunks[1] = p.BN // 64  # 64-column boxes of the K x N tile
    stage_bytes = (p.BM + p.BN) * p.BK * p.dtype.nbytes
    smem = p.num_stages * stage_bytes + 1024 + 2 * 8 * p.num_stages + 16  # + fix-up flags
    if p.num_stages < 2 or smem > SMEM_LIMIT:
        raise UnsupportedError(
            f"CUDA backend: {p.num_stages} stages of {stage_bytes} bytes need {smem} bytes of "
            f"shared memory (2 stages at least, {SMEM_LIMIT} at most)"
        )
    boxes, epi = (swap_staging(p, epilogue, smem, consumers) if p.swap_ab else
                  epilogue_staging(p, epilogue, smem, consumers, m_sub))
    tma_store = epilogue not in ("direct", "none")
    rp = plan_release(p)
    assert not rp.exact or len(rp.receivers) == cx, (p.name, rp, cx)
    return KernelShape(consumers, wg_m, m_sub, cx, p.num_stages, chunks[0], chunks[1],
                       smem + (epi if tma_store else 0), tma_store,
                       rp.receivers if rp.exact else None, rp.senders if rp.exact else None,
                       boxes, p.swap_ab)


def epilogue_staging(p: KernelPlan, epilogue: str, smem: int, consumers: int,
                     m_sub: int) -> tuple[int, int]:
    """The epilogue's staging boxes per consumer warpgroup and their bytes: 64x64 swizzled
    boxes, two in a ring ("tma", "overlap"), or the warpgroup's whole tile ("tma_tile": its
    stores overlap the next tile).  C's rows must be 16-byte multiples for TMA stores: the
    launcher pads C or refuses; a TMA-store epilogue needs a 16-bit C, BN a multiple of 64 and
    the room in shared memory (lowering chooses one only where it fits:
    :func:`~tilec.transforms.pipeline.legalize.cuda_epilogue`)."""
    boxes = m_sub * p.BN // 64 if epilogue == "tma_tile" else 2
    epi = consumers * boxes * BOX_BYTES
    can_tma = p.c_dtype.nbytes == 2 and p.BN % 64 == 0 and smem + epi <= SMEM_LIMIT
    if epilogue in ("tma", "tma_tile", "overlap") and not can_tma:
        raise UnsupportedError(
            f"CUDA backend: the {epilogue!r} epilogue stores through TMA: it needs a "
            f"16-bit C, BN a multiple of 64 and {epi} more bytes of shared memory (plan "
            f"{p.name!r}: {p.c_dtype.value}, BN={p.BN}, {smem} bytes already)")
    return boxes, epi


def warpgroups(p: KernelPlan) -> tuple[int, int, int]:
    """(consumer warpgroups, tile rows per consumer, m64 wgmma rows per consumer): one producer
    warpgroup + consumers, from the plan's warps (the schedule's set_kernel(warps=))."""
    consumers = p.num_warps // 4 - 1
    if p.num_warps % 4 or not 1 <= consumers <= 2 or p.BM % (64 * consumers):
        raise UnsupportedError(
            f"CUDA backend: {p.num_warps} warps per CTA are one producer warpgroup and "
            f"{p.num_warps / 4 - 1:g} consumer warpgroups; they must be 8 or 12 with BM "
            f"(= {p.BM}) a multiple of 64 x consumers"
        )
    wg_m = p.BM // consumers
    m_sub = wg_m // 64
    if m_sub * p.BN // 2 > 128:
        raise UnsupportedError(
            f"CUDA backend: a consumer warpgroup would hold {m_sub * p.BN // 2} fp32 "
            f"accumulators per thread for BM={p.BM}, BN={p.BN} (at most 128)"
        )
    return consumers, wg_m, m_sub


def swap_warpgroups(p: KernelPlan, epilogue: str) -> tuple[int, int, int]:
    """SWAP_AB=1: (consumer warpgroups, tile columns per consumer (WG_N), 64-column slabs per
    consumer (N_SUB)): each consumer warpgroup owns WG_N of the tile's BN columns, which are
    wgmma's M (64 per instruction), and all BM rows, wgmma's N; its accumulators are
    ``acc[N_SUB][BM / 2]``.  Refuses what the swapped kernel does not print."""
    consumers = p.num_warps // 4 - 1
    if p.num_warps % 4 or not 1 <= consumers <= 2 or p.BN % (64 * consumers):
        raise UnsupportedError(
            f"CUDA backend: SWAP_AB=1 splits BN (= {p.BN}) in 64-column slabs over the consumer "
            f"warpgroups; WARPS must be 8 (one consumer) or 12 (two, BN a multiple of 128) but "
            f"got WARPS={p.num_warps}")
    wg_n = p.BN // consumers
    n_sub = wg_n // 64
    if n_sub * p.BM // 2 > 128:
        raise UnsupportedError(
            f"CUDA backend: SWAP_AB=1: a consumer warpgroup would hold {n_sub * p.BM // 2} fp32 "
            f"accumulators per thread for BM={p.BM}, BN={p.BN}, WARPS={p.num_warps} (at most 128)")
    if epilogue not in ("direct", "tma", "none"):
        raise UnsupportedError(
            f"CUDA backend: SWAP_AB=1 writes C by the 'direct' or 'tma' epilogue; got "
            f"epilogue={epilogue!r}")
    return consumers, wg_n, n_sub


def swap_staging(p: KernelPlan, epilogue: str, smem: int, consumers: int) -> tuple[int, int]:
    """SWAP_AB=1: the "tma" epilogue's staging per consumer warpgroup, two boxes of BM rows x
    64 columns (the warpgroup's slab, 128-byte swizzled), and their bytes; the TMA store clips
    at M and N."""
    box = p.BM * 64 * p.c_dtype.nbytes
    epi = consumers * 2 * box
    if epilogue == "tma" and (p.c_dtype.nbytes != 2 or smem + epi > SMEM_LIMIT):
        raise UnsupportedError(
            f"CUDA backend: SWAP_AB=1 with the 'tma' epilogue needs a 16-bit C and {epi} more "
            f"bytes of shared memory (plan {p.name!r}: {p.c_dtype.value}, {smem} bytes already): "
            "fewer STAGES, or the 'direct' epilogue")
    return 2, epi


def check_supported(p: KernelPlan) -> None:
    """What this backend prints: the fix-up, dtypes, TMA loads and their boxes, tile sizes, a
    1-D cluster, the grid in whole clusters; else an UnsupportedError naming what differs."""
    w = p.work
    if w.fixup is Fixup.REDUCE_KERNEL and w.kind not in (Decomposition.DATA_PARALLEL,
                                                          Decomposition.SPLIT_K):
        raise UnsupportedError(
            f"CUDA backend: plan {p.name!r} is {w.kind.value!r} with the {w.fixup.value!r} "
            "fix-up; the CUDA reduce kernel sums split-K parts only: use DECOMP='splitk' with "
            "it, or the 'deterministic' or 'atomic' fix-up with a Stream-K kind"
        )
    if p.dtype not in (DType.BF16, DType.FP16):
        raise UnsupportedError(
            f"CUDA backend: dtype of A and B must be bf16 or fp16 but plan {p.name!r} has "
            f"{p.dtype.value}"
        )
    for op in (p.a, p.b):
        if op.kind is not LoadKind.TMA:
            raise UnsupportedError(
                f"CUDA backend: operand {op.name} must be loaded by TMA but its load is "
                f"{op.kind.value!r}"
            )
        if op.evict not in ("normal", "first", "last"):
            raise UnsupportedError(
                f"operand {op.name}: evict must be 'normal', 'first' or 'last' but got {op.evict!r}"
            )
    if p.a.transposed:
        raise UnsupportedError("CUDA backend: A must be stored M x K (K contiguous)")
    if not p.b.transposed and p.BN % 64 != 0:  # (B's row stride: checked at launch)
        raise UnsupportedError(
            f"CUDA backend: B given K x N (N contiguous) is loaded in 64-column TMA boxes: BN "
            f"must be a multiple of 64, but plan {p.name!r} has BN = {p.BN} (store B as N x K: "
            "B_LAYOUT='nk')"
        )
    if p.BK * p.dtype.nbytes != 128:
        raise UnsupportedError(
            f"CUDA backend: BK must be {128 // p.dtype.nbytes} for {p.dtype.value} (one "
            f"128-byte swizzle row) but got BK = {p.BK}"
        )
    bbox = (p.BN, p.BK) if p.b.transposed else (p.BK, p.BN)
    if p.a.box != (p.BM, p.BK) or p.b.box != bbox:
        raise UnsupportedError(
            f"CUDA backend: boxes must be A ({p.BM}, {p.BK}) and B {bbox} but got "
            f"A {p.a.box} and B {p.b.box}"
        )
    if p.swap_ab:  # our M is wgmma's N, our N its M (swap.swap_warpgroups)
        if p.BM % 8 != 0 or not 8 <= p.BM <= 256 or p.BN % 64 != 0 or not 64 <= p.BN <= 256:
            raise UnsupportedError(
                f"CUDA backend: SWAP_AB=1 needs BM a multiple of 8 in [8, 256] (wgmma's N) and "
                f"BN a multiple of 64 in [64, 256] (64-row wgmma slabs) but got BM={p.BM}, "
                f"BN={p.BN}")
    elif p.BM % 64 != 0 or not 64 <= p.BM <= 256:
        raise UnsupportedError(f"CUDA backend: BM must be 64, 128, 192 or 256 but got {p.BM}")
    if p.BN % 16 != 0 or not 16 <= p.BN <= 256:
        raise UnsupportedError(
            f"CUDA backend: BN must be a multiple of 16 in [16, 256] but got {p.BN}"
        )
    cx, cy, cz = p.cluster
    if (cy, cz) != (1, 1) or not 1 <= cx <= 8:
        raise UnsupportedError(
            f"CUDA backend: the cluster must be 1-D along x with at most 8 CTAs but plan "
            f"{p.name!r} has cluster {p.cluster}"
        )
    if w.grid % cx != 0:
        raise UnsupportedError(
            f"CUDA backend: grid {w.grid} is not a multiple of the cluster size {cx}"
        )
    groups = ceil_div(int(p.order.concrete().num_tiles), cx)
    if (w.split_k or w.stream_k) and w.num_tiles != groups:
        raise UnsupportedError(
            f"CUDA backend: plan {p.name!r} splits {w.num_tiles} tiles but its workers walk "
            f"{groups} groups of {cx} linear tiles: lower it with target='cuda'")


def check_multicast(op: OperandLoad, cluster: int, rows: int) -> int:
    """Check operand ``op``'s multicast plan for this cluster; the TMA boxes one stage of it
    is cut into."""
    mc = op.multicast
    if mc is None:
        return 1
    for e, allowed in ((mc.issue, LOOP_VARS + SIZES), (mc.mask, LOOP_VARS + SIZES),
                       (mc.guard, LOOP_VARS + SIZES), (mc.same, PAIR_VARS + SIZES)):
        names = {s.name for s in sympy.sympify(e).free_symbols}
        if not names <= set(allowed):
            raise UnsupportedError(
                f"operand {op.name}: multicast expression {e} uses {sorted(names - set(allowed))}"
                f"; the CUDA kernel provides only {', '.join(allowed)}"
            )
    if mc.mode is not MulticastMode.SLICED:
        return 1
    # the closed form's group size where it is one number (any chunk count is correct: each
    # member of a group issues chunks sidx, sidx + scnt, ...); else the cluster's
    n = _const_int(mc.slice_count) if mc.closed_form else None
    chunks = n if n is not None else cluster
    if rows % chunks != 0 or (rows // chunks) % 8 != 0:
        raise UnsupportedError(
            f"operand {op.name}: sliced multicast cuts the box's {rows} rows into {chunks} "
            "slices; each must be a whole number of 8-row swizzle atoms"
        )
    return chunks
