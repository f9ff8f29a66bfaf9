"""SimtPlan lowering: tile decomposition, cooperative copies, vector proofs, errors."""

from __future__ import annotations

import itertools
from collections import Counter

import pytest
import sympy
from simt_helpers import load

from tilec.errors import ScheduleError, UnsupportedError
from tilec.ir import GemmFusion
from tilec.ir import ParallelType as P
from tilec.transforms.simt.lower import lower_simt
from tilec.transforms.simt.plan import IT, TID

SMALL = [("coalescing_naive.py", dict(M=40, N=24, K=8, B=16)),
         ("coalescing_coalesced.py", dict(M=40, N=24, K=8, B=8)),
         ("simt_sgemm.py", dict(M=70, N=72, K=20, KIND="smem", BM=16, BN=16, BK=8)),
         ("simt_sgemm.py", dict(M=70, N=72, K=20, KIND="reg1d", BM=16, BN=16, BK=4, TM=4)),
         ("simt_sgemm.py", dict(M=64, N=72, K=20, KIND="reg2d", BM=16, BN=16, BK=4, TM=2, TN=4)),
         ("simt_sgemm.py", dict(M=64, N=72, K=20, KIND="vec", BM=32, BN=32, BK=4, TM=8, TN=8))]


def points(plan, syms):  # type: ignore[no-untyped-def]
    for vals in itertools.product(*(range(int(plan.bounds[s])) for s in syms)):
        yield dict(zip(syms, vals, strict=True))


@pytest.mark.parametrize(("path", "params"), SMALL, ids=[f"{p}-{q.get('KIND', '')}" for p, q in SMALL])
def test_every_element_of_c_is_computed_once_inside_its_ctas_tile(path, params) -> None:  # type: ignore[no-untyped-def]
    plan = lower_simt(load(path, **params))
    syms = [*plan.block_symbols, *plan.thread_symbols, *(r.symbol for r in plan.reg)]
    seen: Counter[tuple[int, int]] = Counter()
    exprs = [plan.m_expr, plan.n_expr, plan.m_base, plan.n_base, plan.m_local, plan.n_local,
             sympy.And(*plan.predicates)]
    f = sympy.lambdify(syms, exprs, modules="math")
    for pt in points(plan, syms):
        m, n, mb, nb, ml, nl, ok = f(*pt.values())
        assert mb + ml == m and nb + nl == n
        assert 0 <= ml < plan.BM and 0 <= nl < plan.BN
        if ok:
            seen[(m, n)] += 1
    assert set(seen) == {(m, n) for m in range(plan.M) for n in range(plan.N)}
    assert set(seen.values()) == {1}


@pytest.mark.parametrize(("path", "params"), [s for s in SMALL if "KIND" in s[1]],
                         ids=lambda x: str(x.get("KIND", "")) if isinstance(x, dict) else "")
def test_tile_copies_cover_each_tile_element_once(path, params) -> None:  # type: ignore[no-untyped-def]
    plan = lower_simt(load(path, **params))
    st = plan.staging
    assert st is not None
    for cp in (st.a, st.b):
        got: Counter[tuple[int, int]] = Counter()
        for tid in range(plan.threads):
            for it in range(cp.iters):
                if cp.guard_idx and tid + it * plan.threads >= cp.rows * cp.cols // cp.vec:
                    continue
                r, c = (int(e.subs({TID: tid, IT: it})) for e in (cp.row, cp.col))
                for j in range(cp.vec):
                    got[(r, c + j)] += 1
        assert set(got) == set(itertools.product(range(cp.rows), range(cp.cols)))
        assert set(got.values()) == {1}


def test_vec_kernel_is_fully_vectorized_and_its_transposed_stores_are_conflict_free() -> None:
    plan = lower_simt(load("simt_sgemm.py", KIND="vec"))
    st = plan.staging
    assert (plan.vec_m, plan.vec_n, st.a.vec, st.b.vec) == (4, 4, 4, 4)
    assert plan.notes == ()
    # brute force: one warp's scalar stores As[c + j][r], one per vector element j
    for j in range(st.a.vec):
        words = [(int(st.a.col.subs(TID, t)) + j) * st.a.pitch + int(st.a.row.subs({TID: t, IT: 0}))
                 for t in range(32)]
        assert len({w % 32 for w in words}) == 32
    assert st.a.pitch % 4 == 0  # 128-bit reads of As stay aligned


def test_vectorize_falls_back_to_scalar_with_a_note_when_alignment_is_not_proven() -> None:
    plan = lower_simt(load("simt_sgemm.py", KIND="vec", M=256, N=258, K=64))
    # C's rows of 258 floats: scalar C stores, 64-bit B copies; the shared reads stay 128-bit
    assert plan.vec_c == 1 and plan.staging.b.vec == 2 and plan.vec_n == 4
    assert any("i_Nri" in n and "258" in n for n in plan.notes)


def fusion32() -> GemmFusion:
    f = GemmFusion(64, 64, 64, dtype="fp32")
    f.c.split(0, 16).split(2, 16)
    return f


def test_errors() -> None:
    f = GemmFusion(64, 64, 64, dtype="bf16")
    with pytest.raises(UnsupportedError, match="fp32"):
        lower_simt(f)
    f = fusion32()
    f.c.split(4, 16).parallelize(5, P.TIDx)
    with pytest.raises(UnsupportedError, match="serial per thread"):
        lower_simt(f)
    f = fusion32()
    f.c.split(3, 3).parallelize(4, P.Vectorize)
    with pytest.raises(ScheduleError, match="extent 2 or 4"):
        lower_simt(f)
    f = fusion32()
    f.c.reorder([0, 2, 1, 3, 4]).merge(2).parallelize(2, P.SERIAL)
    with pytest.raises(UnsupportedError, match="mixes M and N"):
        lower_simt(f)
    f = GemmFusion("M", 64, 64, dtype="fp32")
    with pytest.raises(UnsupportedError, match="constant"):
        lower_simt(f)
    f = fusion32()
    f.c.split(4, 8).split(4, 2)
    with pytest.raises(UnsupportedError, match="K axes"):
        lower_simt(f)


def test_unstaged_loads_are_guarded_only_at_ragged_edges() -> None:
    even = lower_simt(load("coalescing_naive.py", M=64, N=64, K=8))
    ragged = lower_simt(load("coalescing_naive.py", M=70, N=64, K=8))
    assert even.guard_a is sympy.true and even.predicates == ()
    assert ragged.guard_a is not sympy.true and len(ragged.predicates) == 1
