"""Launch inference: grid / cluster / block dims from the bound axes."""

from __future__ import annotations

import pytest
import sympy

from tilec.ir import GemmFusion, infer_launch
from tilec.ir import ParallelType as P

from .helpers import cdiv


@pytest.mark.parametrize("m,n,bm,bn", [(512, 512, 128, 128), (1000, 300, 128, 64), (64, 4096, 64, 256)])
def test_data_parallel_2d(m: int, n: int, bm: int, bn: int) -> None:
    f = GemmFusion(M=m, N=n, K=64)
    f.c.split(0, bm).split(2, bn).parallelize(0, P.BIDy).parallelize(2, P.BIDx)
    f.c.parallelize(1, P.Mma).parallelize(3, P.Mma)
    launch = infer_launch(f)
    assert launch.grid == (cdiv(n, bn), cdiv(m, bm), 1)
    assert launch.cluster == (1, 1, 1) and launch.block == (1, 1, 1)
    assert launch.num_ctas == cdiv(n, bn) * cdiv(m, bm)
    assert launch.bindings == {P.BIDy: cdiv(m, bm), P.BIDx: cdiv(n, bn)}
    assert str(launch) == f"grid=({cdiv(n, bn)}, {cdiv(m, bm)}, 1) cluster=(1, 1, 1) block=(1, 1, 1)"


def test_threads_give_the_block() -> None:
    f = GemmFusion(M=256, N=256, K=64)
    f.c.split(0, 128).split(1, 2).parallelize(0, P.BIDx).parallelize(1, P.TIDy)
    f.c.split(-2, 128).parallelize(-2, P.TIDx)
    assert infer_launch(f).block == (128, 64, 1)


def test_set_cluster_with_bidx() -> None:
    f = GemmFusion(M=1024, N=512, K=64)
    f.c.split(0, 128).split(2, 128).parallelize(0, P.BIDx).parallelize(2, P.BIDy)
    f.set_cluster(2, 4)
    launch = infer_launch(f)
    assert launch.grid == (8, 4, 1) and launch.cluster == (2, 4, 1)
    assert launch.cluster_size == 8 and launch.requirements == ()


def test_set_cluster_with_symbolic_grid_is_a_requirement() -> None:
    f = GemmFusion(M="M", N=512, K=64)
    f.c.split(0, 128).parallelize(0, P.BIDx)
    f.set_cluster(2)
    launch = infer_launch(f)
    m = sympy.Symbol("M", integer=True, positive=True)
    assert launch.grid == (sympy.ceiling(m / 128), 1, 1) and launch.cluster == (2, 1, 1)
    (req,) = launch.requirements
    for mv, ok in [(256, True), (384, False), (257, False), (641, True)]:  # ceil(M/128) even
        assert bool(req.subs(m, mv)) is ok, mv


def test_cluster_index_and_rank() -> None:
    f = GemmFusion(M=4096, N=256, K=64)
    f.c.split(0, 128).split(0, 4).parallelize(0, P.CIDx).parallelize(1, P.RankX)
    f.c.split(-2, 128).parallelize(-3, P.BIDy)
    launch = infer_launch(f)
    assert launch.grid == (32, 2, 1) and launch.cluster == (4, 1, 1)


def test_views_list_and_agreeing_extents() -> None:
    f = GemmFusion(M=512, N=512, K=64)
    f.c.split(0, 128).parallelize(0, P.BIDx)
    f.propagate()
    assert f.a_smem is not None and f.b_smem is not None
    launch = infer_launch([f.c, f.a_smem, f.b_smem])
    assert launch.grid == (4, 1, 1)
