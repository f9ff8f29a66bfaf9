"""The epilogue staged through shared memory (``plan.c_stage``, tilec/transforms/simt/cstage.py),
emulated on the host from the printed expressions: ``c_put_<variant>`` (the word of ``Cs`` a
thread's register point is put at) beside ``c_store_<variant>`` (the element of C that register
holds: the unstaged epilogue's map, tested in test_simt_shapes.py) and ``c_copy_<variant>`` (the
word copy ``it`` of thread ``tid`` reads and the element of C it writes), compiled with g++ and
run for every thread, register and copy of every CTA at ragged M and N: no two registers put at
one word, every copy reads the word holding the register of the element it writes, every element
of C written exactly once and nothing outside, and a warp's store instruction on consecutive
columns of one row.  Also: which variants the lowering stages, the switch, and the printed
kernel's barriers."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from simt_helpers import load

from tilec.codegen.cuda.runtime import INDEX_HELPERS
from tilec.codegen.cuda.simt import WORK_BEGIN, WORK_END, SimtCudaPrinter, emit_simt
from tilec.errors import ScheduleError
from tilec.ir import GemmFusion
from tilec.transforms.simt.lower import lower_simt

CONFIGS = {
    "large_ft": dict(CONFIG="large"),  # dp_ft, the atomic fix-up: ragged_n and general staged
    "large_dp": dict(CONFIG="large", DECOMP="dp"),
    "small16": dict(CONFIG="small16"),  # 64 x 64, 4 warps
    "on": dict(CONFIG="large", DECOMP="dp", STAGE_C="on"),  # every variant, 128-bit copies out
    "sync32": dict(CONFIG="large", ASYNC=0, STAGES=2, BK=32),  # register-staged, pad 0 to fit
}
SHAPES = [(300, 257, 131), (129, 131, 257), (1, 1, 1), (257, 4, 33), (128, 130, 96),
          (256, 260, 64), (384, 512, 64), (65, 516, 36)]

HARNESS = r"""
#include <cstdio>
#include <cstdint>
#include <vector>
%(helpers)s
%(section)s
using namespace %(name)s;
int main() {
  int M, N, K, v;
  while (std::scanf("%%d %%d %%d %%d", &M, &N, &K, &v) == 4) {
    const Shape S{M, N, K, K, N, N};
    const int gx = %(gx)s, gy = %(gy)s;
    std::vector<int> seen((size_t)M * N, 0);
    long long clash = 0, wrong = 0, outside = 0, scattered = 0, copies = 0;
    std::vector<long long> owner;
    for (int bidy = 0; bidy < gy; ++bidy) for (int bidx = 0; bidx < gx; ++bidx) {
      const int bidz = 0;
      int words = 0, width = 1, iters = 0, put = 1;
      switch (v) { %(sizes)s }
      owner.assign(words, -1);
      for (int tidz = 0; tidz < %(bz)d; ++tidz) for (int tidy = 0; tidy < %(by)d; ++tidy)
      for (int tidx = 0; tidx < %(bx)d; ++tidx) {
        %(loops)s
          int m = 0, n = 0, word = -1, base = 0;
          switch (v) { %(puts)s }
          if (word < 0 || word >= words || base %% put != 0) { ++clash; continue; }
          if (owner[word] != -1) ++clash;
          owner[word] = (long long)m * 1048576 + n;
        %(close)s
      }
      for (int it = 0; it < iters; ++it) for (int w0 = 0; w0 < %(threads)d; w0 += 32) {
        int first = -1, m0 = 0, n0 = 0;
        for (int tid = w0; tid < w0 + 32 && tid < %(threads)d; ++tid) {
          int word = 0, m = 0, n = 0;
          bool ok = false;
          switch (v) { %(copies)s }
          if (!ok) continue;
          ++copies;
          if (first < 0) { first = tid; m0 = m; n0 = n; }
          else if (m != m0 || n != n0 + (tid - first) * width) ++scattered;
          for (int e = 0; e < width; ++e) {
            if (word %% width != 0 || word + e < 0 || word + e >= words
                || owner[word + e] != (long long)m * 1048576 + n + e) ++wrong;
            if (m < 0 || m >= M || n + e < 0 || n + e >= N) ++outside;
            else ++seen[(size_t)m * N + n + e];
          }
        }
      }
    }
    long long never = 0, twice = 0;
    for (int x : seen) { never += x == 0; twice += x > 1; }
    std::printf("%%lld %%lld %%lld %%lld %%lld %%lld %%lld\n", never, twice, outside, clash, wrong,
                scattered, copies);
  }
  return 0;
}
"""


def facts_hold(facts: tuple[str, ...], M: int, N: int, K: int) -> bool:
    env = dict(M=M, N=N, K=K, lda=K, ldb=N, ldc=N, A=0, B=0, C=0)
    return all(eval(f, {}, env) for f in facts)


def staged_variants(name: str) -> list[str]:
    plan = lower_simt(load("simt_warp_tiled.py", M=512, N=512, K=256, **CONFIGS[name]), name=name)
    return [v.name for v in SimtCudaPrinter(plan).variants if v.plan.c_stage is not None]


def test_the_lowering_stages_the_32_bit_variants_only() -> None:
    """Unset, the variants whose C stores are 32-bit are staged and the 128-bit ones are not;
    ``STAGE_C=on`` stages them all, ``off`` none; the register-staged row whose K tiles take
    16 KB cannot hold the 64 KB tile and says so."""
    assert staged_variants("large_ft") == ["ragged_n", "general"]
    assert staged_variants("small16") == ["ragged_n", "general"]
    assert staged_variants("on") == ["tiles", "ragged_n", "aligned", "general"]
    assert staged_variants("sync32") == ["general"]
    off = lower_simt(load("simt_warp_tiled.py", M=300, N=257, K=131, CONFIG="large", STAGE_C="off"))
    src = emit_simt(off)
    assert "Cs[" not in src and "C epilogue: stored from the registers (stage_c(False))" in src
    tight = lower_simt(load("simt_warp_tiled.py", M=300, N=257, K=131, CONFIG="large", ASYNC=0,
                            STAGES=2, BK=8))
    assert "Cs[" not in emit_simt(tight)
    assert any("does not fit in the K tiles' 16640 bytes" in n for n in tight.notes)


def test_stage_c_verb_is_recorded_and_checked() -> None:
    f = GemmFusion(64, 64, 64, dtype="fp32")
    f.stage_c(False)
    assert f.thread_options.stage_c is False and "fusion.stage_c(False)" in str(f.schedule)
    with pytest.raises(ScheduleError, match="stage_c: on must be True or False but got 1"):
        f.stage_c(1)  # type: ignore[arg-type]


def test_staged_kernel_waits_and_barriers() -> None:
    """The tile goes into the K tiles' buffers only after every copy landed and every thread
    passed a barrier; the copies to C start after a second one; the split's next unit after a
    third (its copies reuse the buffers)."""
    src = emit_simt(lower_simt(load("simt_warp_tiled.py", M=300, N=257, K=131, CONFIG="large"), name="k"))
    kern = src[src.index("kernel_ragged_n("):]
    block = kern[kern.index("epilogue: the register tile to C through shared memory"):]
    wait, bar1 = block.index("tilec_cp_async_wait<0>();"), block.index("__syncthreads();")
    put, bar2 = block.index("float4*>(&Cs["), block.index("__syncthreads();", block.index("float4*>(&Cs["))
    store = block.index("C[m * ldc + n] = Cs[")
    after = block.index("__syncthreads();", store)
    assert wait < bar1 < put < bar2 < store < after
    assert "__shared__ __align__(16) float smem[" in emit_simt(
        lower_simt(load("simt_warp_tiled.py", **CONFIGS["sync32"], M=300, N=257, K=131)))


@pytest.mark.parametrize("name", list(CONFIGS))
def test_every_element_stored_once_from_its_register_by_consecutive_lanes(
        name: str, tmp_path: Path) -> None:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("needs g++ for the host harness")
    plan = lower_simt(load("simt_warp_tiled.py", M=512, N=512, K=256, **CONFIGS[name]), name=name)
    pr = SimtCudaPrinter(plan)
    src = pr.emit()
    section = src[src.index(WORK_BEGIN):src.index(WORK_END)]
    variants = pr.variants
    gen = variants[-1].plan
    pr.use(variants[-1])
    gx, gy, _ = (pr.c(e) for e in gen.grid)
    axes = {str(a.symbol): a.extent for v in variants for a in v.plan.reg}
    loops = "".join(f"for (int {s} = 0; {s} < {e}; ++{s}) " for s, e in axes.items()) + "{"
    sizes, puts, copies, staged = [], [], [], []
    for i, v in enumerate(variants):
        q, st = v.plan, v.plan.c_stage
        if st is None:
            continue
        staged.append(i)
        vec = next((a for a in q.regs("N") if a.vector), None)
        store_n = [a for a in q.regs("N") if not (a.vector and q.vec_c > 1)]
        put_n = [a for a in q.regs("N") if not (a.vector and st.put_width > 1)]
        sregs = "".join(f", {a.symbol}" for a in [*q.regs("M"), *store_n])
        pregs = "".join(f", {a.symbol}" for a in [*q.regs("M"), *put_n])
        # a register's element: c_store's, plus the vector index where the store is a vector;
        # its word: c_put's, plus the vector index where the put is a vector
        dn = f" n += {vec.symbol};" if vec is not None and q.vec_c > 1 else ""
        dw = f" + {vec.symbol}" if vec is not None and st.put_width > 1 else ""
        sizes.append(f"case {i}: words = {q.BM * st.pitch}; width = {st.width}; iters = {st.iters}; "
                     f"put = {st.put_width}; break;")
        puts.append(f"case {i}: c_store_{v.name}(S, bidx, bidy, bidz, tidx, tidy, tidz{sregs}, m, n);{dn} "
                    f"base = c_put_{v.name}(S, tidx, tidy, tidz{pregs}); word = base{dw}; break;")
        copies.append(f"case {i}: ok = c_copy_{v.name}(S, bidx, bidy, bidz, tid, it, word, m, n); break;")
    assert staged, name
    bx, by, bz = gen.block
    cpp = tmp_path / "stage.cpp"
    cpp.write_text(HARNESS % dict(helpers=INDEX_HELPERS, section=section, name=name, gx=gx, gy=gy,
                                  bx=bx, by=by, bz=bz, threads=gen.threads, loops=loops, close="}",
                                  sizes=" ".join(sizes), puts=" ".join(puts), copies=" ".join(copies)))
    exe = tmp_path / "stage"
    r = subprocess.run([gxx, "-std=c++17", "-O2", "-Wall", "-Werror", str(cpp), "-o", str(exe)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    jobs = [(M, N, K, i) for M, N, K in SHAPES for i in staged
            if facts_hold(variants[i].facts, M, N, K)]
    assert {i for *_, i in jobs} == set(staged)  # every staged variant at some shape
    out = subprocess.run([str(exe)], input="".join(" ".join(map(str, j)) + "\n" for j in jobs),
                         capture_output=True, text=True, check=True).stdout.split("\n")
    for job, line in zip(jobs, out, strict=False):
        never, twice, outside, clash, wrong, scattered, copies_done = map(int, line.split())
        assert (never, twice, outside, clash, wrong, scattered) == (0,) * 6, (name, job, line)
        assert copies_done > 0


def test_sass_puts_128_bit_and_stores_32_bit_by_rows(tmp_path: Path) -> None:
    """SASS (-O3, sm_90a) of gpt2's library (the large row, dp_ft): ragged_n and general put the
    register tile with 16 STS.128 per path (whole tile, partial tile) and copy it out with 64
    32-bit STG / REDG each, behind the two barriers; tiles and aligned keep their 16 128-bit
    stores and no STS; with STAGE_C=off no variant has an STS."""
    nvcc = shutil.which("nvcc")
    cuobjdump = Path(__import__("triton").__file__).parent / "backends/nvidia/bin/cuobjdump"
    if nvcc is None or not cuobjdump.exists():
        pytest.skip("needs nvcc and Triton's cuobjdump")
    import re
    from collections import Counter

    def ops(stage: str) -> dict[str, Counter[str]]:
        cu = tmp_path / f"gpt2_{stage}.cu"
        cu.write_text(emit_simt(lower_simt(load("simt_warp_tiled.py", M=2048, N=50257, K=768,
                                                STAGE_C=stage), name="gpt2")))
        subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-cubin", str(cu),
                        "-o", str(cu.with_suffix(".cubin"))], check=True, capture_output=True)
        sass = subprocess.run([str(cuobjdump), "-sass", str(cu.with_suffix(".cubin"))], check=True,
                              capture_output=True, text=True).stdout
        out = {}
        for part in sass.split("Function : ")[1:]:
            name = re.search(r"kernel_(\w+?)E", part.split()[0]).group(1)  # type: ignore[union-attr]
            out[name] = Counter(re.findall(r"/\*[0-9a-f]{4,}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)", part))
        return out

    auto, off = ops("auto"), ops("off")
    for v in ("ragged_n", "general"):
        c = auto[v]
        assert (c["STS.128"], c["STG.E"], c["STG.E.128"]) == (32, 64, 0), c
        assert c["REDG.E.ADD.F32.FTZ.RN.STRONG.GPU"] == 64 and c["BAR.SYNC.DEFER_BLOCKING"] >= 7
        assert off[v]["STS.128"] == 0 and off[v]["STG.E"] == 64 and off[v]["BAR.SYNC.DEFER_BLOCKING"] == 3
    for v in ("tiles", "aligned"):
        assert (auto[v]["STS.128"], auto[v]["STG.E.128"]) == (0, 16) and auto[v] == off[v]
