"""The last pass, :func:`legalize`: what the target runs besides the loads and the work
split: warps, pipeline stages, the CUDA epilogue (``auto`` resolved here, by the shared memory
the kernel needs: :func:`cuda_epilogue`), the CUDA cluster's stage release
(:func:`~tilec.transforms.pipeline.release.release_protocol`) and the L2 prefetch; a
kernel-level choice the target cannot honour is refused here."""

from __future__ import annotations

from dataclasses import replace

from tilec.errors import UnsupportedError
from tilec.ir.types import SMEM_LIMIT, DType, Epilogue, Target
from tilec.transforms.pipeline.release import check_cluster_agreement, release_protocol
from tilec.transforms.pipeline.state import Lowering
from tilec.transforms.plan import SIZE_K, SIZE_M, SIZE_N

BOX_BYTES = 64 * 64 * 2  # one 64x64 16-bit staging box of the CUDA kernel's TMA-store epilogue


def cuda_smem_bytes(BM: int, BN: int, BK: int, dtype: DType, stages: int) -> int:
    """Shared memory of the CUDA kernel's stages, barriers and fix-up flags (without the
    epilogue's staging boxes), as its printer lays it out.

    >>> cuda_smem_bytes(128, 256, 64, DType.BF16, 4)
    197712
    """
    return stages * (BM + BN) * BK * dtype.nbytes + 1024 + 2 * 8 * stages + 16


def cuda_epilogue(given: Epilogue | None, BM: int, BN: int, BK: int, dtype: DType, warps: int,
                  stages: int) -> Epilogue:
    """The schedule's epilogue, else overlapped TMA stores where they fit (measured the
    fastest), else direct stores: TMA stores need a 16-bit C, BN a multiple of 64 and two
    staging boxes per consumer warpgroup beside the stages in shared memory.

    >>> cuda_epilogue(None, 128, 256, 64, DType.BF16, 12, 4), cuda_epilogue(None, 128, 96, 64, DType.BF16, 12, 4)
    (<Epilogue.OVERLAP: 'overlap'>, <Epilogue.DIRECT: 'direct'>)
    """
    if given is not None:
        return given
    boxes = (warps // 4 - 1) * 2 * BOX_BYTES
    fits = (dtype.nbytes == 2 and BN % 64 == 0
            and cuda_smem_bytes(BM, BN, BK, dtype, stages) + boxes <= SMEM_LIMIT)
    return Epilogue.OVERLAP if fits else Epilogue.DIRECT


def legalize(s: Lowering) -> Lowering:
    """Warps per CTA, pipeline stages, the epilogue and the L2 prefetch: the schedule's
    ``set_kernel`` choices, else the target's defaults (Triton: 8 warps for tiles of 128x256 or
    more, else 4, and 3 stages; CUDA: a producer and two consumer warpgroups where BM splits in
    two m64 multiples, else one, 4 stages, and :func:`cuda_epilogue`); for CUDA also the
    cluster's stage release (:func:`~tilec.transforms.pipeline.release.release_protocol`), once
    the cluster sizes of the parts are found to agree
    (:func:`~tilec.transforms.pipeline.release.check_cluster_agreement`).

    before (examples/gemm_basic.py, Triton)::

        load B: tma box (64, 128)

    after::

        load B: tma box (64, 128)
        launch: cluster (1, 1, 1), 4 warps, 3 stages

    >>> from tilec.runtime.loader import load_schedule
    >>> from tilec.transforms.pipeline import tile_axes
    >>> f = load_schedule("examples/gemm_basic.py", {"M": 256, "N": 256, "K": 64}).fusion
    >>> print(legalize(tile_axes(Lowering(f))).summary().splitlines()[-1])
    launch: cluster (1, 1, 1), 4 warps, 3 stages
    """
    assert s.tile is not None
    fusion, ko = s.fusion, s.fusion.kernel_options
    BM, BN, BK = s.tile
    notes = list(s.notes)
    epilogue = release = None
    if s.target is Target.TRITON:
        warps = ko.warps or (8 if BM * BN >= 128 * 256 else 4)
        if warps & (warps - 1):
            raise UnsupportedError(f"triton: warps must be a power of two but the schedule "
                                   f"asks for {warps}")
        stages = ko.stages or 3
        if fusion.dtype is DType.FP32:
            notes.append(f"fp32 dot in {s.options.input_precision.value} precision")
        if ko.prefetch:
            raise UnsupportedError(
                f"triton: set_kernel(prefetch={ko.prefetch}) is the CUDA producer's L2 prefetch; "
                "Triton pipelines its loads itself (leave prefetch to 'auto')")
        if ko.evict is not None:
            raise UnsupportedError(
                f"triton: set_kernel(evict={','.join(ko.evict)!r}) sets the CUDA kernel's L2 "
                "hints; the Triton kernel's loads carry none (leave evict to 'auto')")
        if ko.epilogue is not None:
            raise UnsupportedError(
                f"triton: set_kernel(epilogue={ko.epilogue.value!r}) chooses the CUDA kernel's "
                "epilogue; the Triton kernel stores C itself (leave epilogue to 'auto')")
    else:
        # 1 producer + 2 consumer warpgroups where BM splits in two m64 multiples, else 1 consumer
        warps = ko.warps or (12 if BM % 128 == 0 else 8)
        if ko.swap_ab:  # swapped operands: the consumers split BN in 64-column slabs
            warps = ko.warps or (12 if BN % 128 == 0 else 8)
        stages = ko.stages or 4
        epilogue = cuda_epilogue(ko.epilogue, BM, BN, BK, fusion.dtype, warps, stages)
        if ko.swap_ab and ko.epilogue is None:
            epilogue = Epilogue.DIRECT  # (the swapped kernel prints "direct" and "tma")
        assert s.order is not None and s.work is not None and s.a is not None and s.b is not None
        check_cluster_agreement(s.kernel_name, s.work, s.cluster[0], (s.a, s.b))
        M, N, K = s.sizes
        release = release_protocol(s.order, s.work.grid, s.cluster[0], (s.a, s.b),
                                   {SIZE_M: M, SIZE_N: N, SIZE_K: K})
    return replace(s, num_warps=warps, num_stages=stages, epilogue=epilogue, release=release,
                   prefetch=ko.prefetch or 0, notes=tuple(notes))
