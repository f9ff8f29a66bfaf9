"""Small schedules written through the verbs, and their lowered plans, for tests.

Tests that want a plan of a given shape, decomposition and tile order build it the way a user
does: a schedule (:func:`schedule`) lowered by :func:`tilec.transforms.pipeline.lower`
(:func:`plan`). There is no other road to a KernelPlan.

* ``order="row"``: the C tiles in row-major order, one linear tile index;
* ``order="grouped"``: the grouped raster (``swizzle``, Triton's GROUP_SIZE_M);
* ``sms=None``: one CTA per tile (per split-K unit); ``sms=n``: a persistent grid of ``n`` CTAs
  walking the linear tile index in rounds (the decompositions spread their work over ``n``).

Example::

    >>> p = plan(100, 70, 50, 32, 32, 16, decomposition="splitk", splits=2)
    >>> p.tiles, p.k_iters, p.work.grid
    (12, 4, 24)
"""

from __future__ import annotations

from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P
from tilec.ir.types import Decomposition, DType, Fixup, LoadKind
from tilec.transforms.pipeline import Target, lower
from tilec.transforms.plan import InputPrecision, KernelPlan


def schedule(
    M: int, N: int, K: int, BM: int, BN: int, BK: int, *,
    dtype: DType | str = DType.FP16,
    decomposition: Decomposition | str = Decomposition.DATA_PARALLEL,
    sms: int | None = None,
    splits: int = 1,
    sk_waves: int = 1,
    fixup: Fixup | str = Fixup.ATOMIC,
    order: str = "row",
    group_m: int = 8,
    load: LoadKind | str | None = None,
    b_transposed: bool = False,
    stages: int | None = None,
    warps: int | None = None,
) -> GemmFusion:
    """The schedule: tiles BM x BN x BK in ``order``, persistent over ``sms`` CTAs if given."""
    if order not in ("row", "grouped"):
        raise ValueError(f"order must be 'row' or 'grouped' but got {order!r}")
    f = GemmFusion(M, N, K, dtype=DType(dtype), b_layout="nk" if b_transposed else "kn")
    c = f.c
    c.split(0, BM, names=("Mo", "Mi")).split(2, BN, names=("No", "Ni"))
    c.split(4, BK, names=("Ko", "Ki"))
    c.reorder([0, 2, 4, 1, 3, 5])  # [Mo, No, rKo, Mi, Ni, rKi]
    if order == "grouped":
        c.swizzle(0, 1, group_m)
    c.merge(0)  # [t, rKo, Mi, Ni, rKi]: one linear tile index
    if sms is None:
        c.parallelize(0, P.BIDx)
        mma = (2, 3, 4)
    else:
        c.split(0, sms, names=("rt", "pid"))  # persistent: round, CTA
        c.parallelize(1, P.BIDx)
        mma = (3, 4, 5)
    for ax in mma:
        c.parallelize(ax, P.Mma)
    f.decompose(decomposition, splits=splits, sk_waves=sk_waves, fixup=fixup, sms=sms)
    if (stages, warps, load) != (None, None, None):
        f.set_kernel(stages=stages, warps=warps, load=load)
    f.propagate()
    return f


def plan(
    M: int, N: int, K: int, BM: int, BN: int, BK: int, *,
    target: Target | str = Target.TRITON,
    input_precision: InputPrecision = InputPrecision.IEEE,
    name: str | None = None,
    **options: object,
) -> KernelPlan:
    """``lower(schedule(M, N, K, BM, BN, BK, **options))`` for ``target``."""
    fusion = schedule(M, N, K, BM, BN, BK, **options)  # type: ignore[arg-type]
    return lower(fusion, target=target, input_precision=input_precision, name=name)
