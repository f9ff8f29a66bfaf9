"""One compiled SIMT kernel at many run-time shapes, on the host: the variant the launcher picks
(its facts evaluated on the sizes and pointers), the shapes it refuses, every variant's C
stores (the epilogue's element map and guard, printed as ``c_store_<variant>``) and tile copies
(``copy_<A|B>_<variant>``: the copy's guard and element index) compiled with g++ and run for
every thread of every CTA (and K tile): each element of C written exactly once, each element of
A read once per CTA column and of B once per CTA row, nothing outside them, at every shape whose
facts the variant's hold (the general one at all of them)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
import sympy
from simt_helpers import load

from tilec.codegen.cuda.runtime import INDEX_HELPERS
from tilec.codegen.cuda.simt import WORK_BEGIN, WORK_END, SimtCudaPrinter
from tilec.transforms.simt.lower import lower_simt
from tilec.transforms.simt.plan import SIZE_M, SIZE_N

CONFIGS = {
    "naive": ("coalescing_naive.py", dict(M=64, N=64, K=64)),
    "vec": ("simt_sgemm.py", dict(M=256, N=256, K=64, KIND="vec")),
    "large": ("simt_warp_tiled.py", dict(M=512, N=512, K=256, CONFIG="large", DECOMP="dp")),
    "small16": ("simt_warp_tiled.py", dict(M=512, N=512, K=256, CONFIG="small16")),
}
# whole tiles, aligned ragged, unaligned ragged, tiny, one row, K = 1, N ragged only (ragged_n)
SHAPES = [(128, 128, 32), (256, 384, 64), (300, 260, 132), (300, 257, 131), (1, 1, 1),
          (1, 131, 7), (129, 4, 1), (65, 516, 36), (256, 257, 64), (128, 3, 32), (128, 130, 96)]


def leading_dimensions(M: int, N: int, K: int) -> list[tuple[int, int, int]]:
    """Contiguous, padded by a few elements, and B's rows rounded up to 4 with C's as they
    are (what the launcher's ragged_n padding passes)."""
    return [(K, N, N), (K + 4, N + 8, N + 4), (K, -(-N // 4) * 4, N)]

HARNESS = r"""
#include <cstdio>
#include <cstdint>
#include <vector>
%(helpers)s
%(section)s
using namespace %(name)s;
int main() {
  int M, N, K, lda, ldb, ldc, v;
  while (std::scanf("%%d %%d %%d %%d %%d %%d %%d", &M, &N, &K, &lda, &ldb, &ldc, &v) == 7) {
    const Shape S{M, N, K, lda, ldb, ldc};
    std::printf("P %%d %%d %%d\n", check_shape(S), pick_variant(S, 0, 0, 0), pick_variant(S, 4, 0, 0));
    if (check_shape(S) != 0 || M == 0 || N == 0) continue;
    std::vector<int> seen((size_t)M * N, 0);
    long long outside = 0;
    const int gx = %(gx)s, gy = %(gy)s, gz = %(gz)s;
    for (int bidz = 0; bidz < gz; ++bidz) for (int bidy = 0; bidy < gy; ++bidy)
    for (int bidx = 0; bidx < gx; ++bidx)
    for (int tidz = 0; tidz < %(bz)d; ++tidz) for (int tidy = 0; tidy < %(by)d; ++tidy)
    for (int tidx = 0; tidx < %(bx)d; ++tidx) {
      %(loops)s
        int m, n;
        bool ok = false;
        switch (v) { %(cases)s }
        if (!ok) continue;
        for (int e = 0; e < width; ++e) {
          if (m < 0 || m >= M || n + e < 0 || n + e >= N) ++outside;
          else ++seen[(size_t)m * N + n + e];
        }
      %(close)s
    }
    long long never = 0, twice = 0;
    for (int x : seen) { never += x == 0; twice += x > 1; }
    std::printf("C %%lld %%lld %%lld\n", never, twice, outside);
    // the tile copies: every element of A read once per CTA column, of B once per CTA row,
    // nothing outside (a guarded copy is zero-filled)
    std::vector<int> ca((size_t)M * K, 0), cb((size_t)K * N, 0);
    long long wild = 0;
    [[maybe_unused]] auto take = [&](std::vector<int>& cnt, long long idx, int ld, int rows, int cols) {
      const long long r = idx / ld, c = idx %% ld;
      if (idx < 0 || r >= rows || c >= cols) ++wild; else ++cnt[(size_t)r * cols + c];
    };
    %(copies)s
    long long wrong_a = 0, wrong_b = 0;
    for (int x : ca) wrong_a += x != %(copies_a)s;
    for (int x : cb) wrong_b += x != %(copies_b)s;
    std::printf("L %%lld %%lld %%lld\n", wrong_a, wrong_b, wild);
  }
  return 0;
}
"""


def facts_hold(facts: tuple[str, ...], M: int, N: int, K: int, lda: int, ldb: int, ldc: int) -> bool:
    env = dict(M=M, N=N, K=K, lda=lda, ldb=ldb, ldc=ldc, A=0, B=0, C=0)
    return all(eval(f, {}, env) for f in facts)  # noqa: S307 - the facts are "x % d == 0" texts


@pytest.mark.parametrize("name", list(CONFIGS))
def test_variant_choice_and_every_c_store_at_run_time_shapes(name: str, tmp_path: Path) -> None:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("needs g++ for the host harness")
    path, params = CONFIGS[name]
    plan = lower_simt(load(path, **params), name=name)
    pr = SimtCudaPrinter(plan)
    src = pr.emit()
    variants = pr.variants
    section = src[src.index(WORK_BEGIN):src.index(WORK_END)]
    gen = variants[-1].plan
    pr.use(variants[-1])
    gx, gy, gz = (pr.c(e) for e in gen.grid)
    cases = []
    for i, v in enumerate(variants):
        axes_n = [a for a in v.plan.regs("N") if not (a.vector and v.plan.vec_c > 1)]
        regs = [str(a.symbol) for a in [*v.plan.regs("M"), *axes_n]]
        cases.append(f"case {i}: ok = c_store_{v.name}(S, bidx, bidy, bidz, tidx, tidy, tidz"
                     + "".join(f", {r}" for r in regs) + f", m, n); width = {v.plan.vec_c}; break;")
    # the register loops: the union of every variant's axes (the vector axis is looped by the
    # variants that store scalars; a vector store covers its lanes at index 0)
    axes = {str(a.symbol): a.extent for v in variants for a in v.plan.reg}
    loops = "".join(f"for (int {s} = 0; {s} < {e}; ++{s}) " for s, e in axes.items()) + "{ int width = 1;"
    vec_axes = {str(a.symbol) for v in variants for a in v.plan.regs("N") if a.vector and v.plan.vec_c > 1}
    if vec_axes:  # a variant with vector stores runs only at its vector index 0
        loops += " if (" + " || ".join(f"({s} != 0 && %s)" for s in vec_axes) + ") continue;"
        vec_cases = " || ".join(f"v == {i}" for i, v in enumerate(variants) if v.plan.vec_c > 1)
        loops = loops % tuple(f"({vec_cases})" for _ in vec_axes)
    copies = []
    for i, v in enumerate(variants):
        st = v.plan.staging
        if st is None:
            continue
        body = []
        for cp, ld, rows, cols, cnt in ((st.a, "lda", "M", "K", "ca"), (st.b, "ldb", "K", "N", "cb")):
            # a partial copy (TileCopy.edge: the vector at the end of a row) reads `elems`
            part, elems = (", elems", "elems") if cp.edge is not None else ("", str(cp.vec))
            body.append(
                f"for (int it = 0; it < {cp.iters}; ++it) {{ long long idx; "
                + ("int elems; " if part else "") +
                f"if (copy_{cp.operand}_{v.name}(S, tid, it, bidx, bidy, ko, idx{part})) "
                f"for (int e = 0; e < {elems}; ++e) take({cnt}, idx + e, {ld}, {rows}, {cols}); }}")
        copies.append(
            f"if (v == {i}) for (int bidy = 0; bidy < gy; ++bidy) for (int bidx = 0; bidx < gx; ++bidx) "
            f"for (int ko = 0; ko < (K + {st.BK - 1}) / {st.BK}; ++ko) "
            f"for (int tid = 0; tid < {v.plan.threads}; ++tid) {{ {' '.join(body)} }}")
    staged = gen.staging is not None
    cpp = tmp_path / "shapes.cpp"
    bx, by, bz = gen.block
    cpp.write_text(HARNESS % dict(helpers=INDEX_HELPERS, section=section, name=name, gx=gx, gy=gy,
                                  gz=gz, bx=bx, by=by, bz=bz, loops=loops, close="}",
                                  cases=" ".join(cases), copies="\n    ".join(copies),
                                  copies_a="gx" if staged else "0", copies_b="gy" if staged else "0"))
    exe = tmp_path / "shapes"
    r = subprocess.run([gxx, "-std=c++17", "-O2", "-Wall", "-Werror", str(cpp), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    jobs, expect = [], []
    for M, N, K in SHAPES:
        for lda, ldb, ldc in leading_dimensions(M, N, K):
            want = next(i for i, v in enumerate(variants) if facts_hold(v.facts, M, N, K, lda, ldb, ldc))
            for i, v in enumerate(variants):
                if facts_hold(v.facts, M, N, K, lda, ldb, ldc):
                    jobs.append((M, N, K, lda, ldb, ldc, i))
                    expect.append((want, (M, N, K, lda, ldb, ldc), v.name))
    # refused: a negative size, a leading dimension shorter than the row, 32-bit overflow
    bad = [((-1, 4, 4, 4, 4, 4), -2), ((4, 4, 8, 7, 4, 4), -3), ((70000, 70000, 4, 4, 70000, 70000), -4)]
    text = "".join(" ".join(map(str, j)) + "\n" for j in jobs)
    text += "".join(" ".join(map(str, s)) + " 0\n" for s, _ in bad)
    out = subprocess.run([str(exe)], input=text, capture_output=True, text=True, check=True).stdout.split("\n")
    lines = iter(out)
    for (want, shape, vname), job in zip(expect, jobs, strict=True):
        code, picked, misaligned = map(int, next(lines).split()[1:])
        assert code == 0 and picked == want, (shape, picked, want)
        # a misaligned A picks a variant without A's pointer fact (the general one, one that
        # needs no vectors, or ragged_n: A's copies are 4-byte)
        assert not any("(A | B | C)" in f or f.startswith("A %") for f in variants[misaligned].facts), \
            (shape, misaligned)
        never, twice, outside = map(int, next(lines).split()[1:])
        assert (never, twice, outside) == (0, 0, 0), (name, vname, shape)
        wrong_a, wrong_b, wild = map(int, next(lines).split()[1:])
        assert (wrong_a, wrong_b, wild) == (0, 0, 0), (name, vname, shape)
    for shape, code in bad:
        assert int(next(lines).split()[1]) == code, shape
    assert len(variants) >= 2 and variants[-1].facts == ()
    assert {SIZE_M, SIZE_N} & set().union(*(sympy.sympify(q).free_symbols for q in gen.predicates))
