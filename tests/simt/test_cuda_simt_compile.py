"""The SIMT CUDA printer: generated kernels compile with nvcc for sm_90a (in parallel)."""

from __future__ import annotations

import re
import shutil
import subprocess
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from simt_helpers import load

from tilec.codegen.cuda.simt import emit_simt
from tilec.transforms.simt.lower import lower_simt

KERNELS = {
    "naive": ("coalescing_naive.py", dict(M=511, N=769, K=333)),
    "coalesced": ("coalescing_coalesced.py", dict(M=1024, N=1024, K=1024)),
    "smem": ("simt_sgemm.py", dict(M=1000, N=1000, K=1001, KIND="smem")),
    "reg1d": ("simt_sgemm.py", dict(M=511, N=769, K=333, KIND="reg1d")),
    "reg2d": ("simt_sgemm.py", dict(M=1024, N=1024, K=1024, KIND="reg2d")),
    "vec": ("simt_sgemm.py", dict(M=1000, N=1000, K=1001, KIND="vec")),
    # examples/simt_warp_tiled.py: the three rows of CONFIGS (the small ones named: the cost
    # model's CONFIG=auto takes the large row at these sizes), the
    # register-staged pipeline, 4 stages of 128 x 256, and ragged shapes (vector fallbacks)
    "wt_large": ("simt_warp_tiled.py", dict(M=4096, N=4096, K=4096, DECOMP="dp")),
    # the row's own choice at 4096^3 (3.88 waves): dp_ft, partials added into C
    "wt_large_ft": ("simt_warp_tiled.py", dict(M=4096, N=4096, K=4096)),
    "wt_small8": ("simt_warp_tiled.py", dict(M=3072, N=3072, K=3072, CONFIG="small8")),
    "wt_small16": ("simt_warp_tiled.py", dict(M=1024, N=1024, K=1024, CONFIG="small16")),
    "wt_sync": ("simt_warp_tiled.py", dict(M=1000, N=1000, K=1001, CONFIG="large", ASYNC=0,
                                           STAGES=2, BK=8)),
    "wt_s4": ("simt_warp_tiled.py", dict(M=256, N=512, K=96, CONFIG="large", STAGES=4, BN=256,
                                         WM=64, WN=64, TN=16, MIN_BLOCKS=1)),
    "wt_ragged_large": ("simt_warp_tiled.py", dict(M=300, N=257, K=131, CONFIG="large")),
    "wt_ragged_small8": ("simt_warp_tiled.py", dict(M=1, N=299, K=7, CONFIG="small8")),
    "wt_ragged_small16": ("simt_warp_tiled.py", dict(M=129, N=131, K=257, CONFIG="small16")),
    # the copy verbs: swizzled register-staged copies (32-bit A loads: K = 1001), copy_lanes
    # and spread cp.async copies on a ragged shape
    "wt_sync_swizzle": ("simt_warp_tiled.py", dict(M=1000, N=1000, K=1001, CONFIG="large",
                                                   ASYNC=0, STAGES=2, BK=16, SWIZZLE=1,
                                                   LANES_A=4, MIN_BLOCKS=1)),
    "wt_ragged_lanes_spread": ("simt_warp_tiled.py", dict(M=257, N=131, K=300, CONFIG="large",
                                                          SWIZZLE=0, LANES_A=8, SPREAD=4,
                                                          DECOMP="dp")),
    # copy_addresses: the large row with whole indices; a ragged K whose A copies fold
    "wt_large_index": ("simt_warp_tiled.py", dict(M=4096, N=4096, K=4096, ADDR="index",
                                                   DECOMP="dp")),
    "wt_large_bytes": ("simt_warp_tiled.py", dict(M=4096, N=4096, K=4096, ADDR="byte_stride",
                                                   DECOMP="dp")),
    "wt_ragged_stride_b": ("simt_warp_tiled.py", dict(M=130, N=255, K=3, CONFIG="large")),
    # the epilogue staged through shared memory (fusion.stage_c; unset: the 32-bit variants):
    # gpt2's vocabulary projection, every variant (128-bit copies out), register-staged K
    # tiles (static shared memory, one array), a deterministic split-K fix-up
    "wt_gpt2": ("simt_warp_tiled.py", dict(M=2048, N=50257, K=768)),
    "wt_stage_on": ("simt_warp_tiled.py", dict(M=300, N=257, K=131, CONFIG="large", STAGE_C="on")),
    "wt_stage_sync": ("simt_warp_tiled.py", dict(M=1000, N=1000, K=1001, CONFIG="large", ASYNC=0,
                                                 STAGES=2, BK=32)),
    "wt_stage_splitk": ("simt_warp_tiled.py", dict(M=300, N=257, K=131, CONFIG="large",
                                                   DECOMP="splitk", SPLITS=3, FIXUP="deterministic")),
}


@pytest.fixture(scope="module")
def sources() -> dict[str, str]:
    return {k: emit_simt(lower_simt(load(p, **q), name=k)) for k, (p, q) in KERNELS.items()}


@pytest.fixture(scope="module")
def compiled(sources: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        pytest.skip("nvcc not found on PATH: the CUDA compile tests need the CUDA toolkit")
    d = tmp_path_factory.mktemp("simt_cu")

    def build(item: tuple[str, str]) -> tuple[str, str]:
        name, src = item
        cu = Path(d) / f"{name}.cu"
        cu.write_text(src)
        r = subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O1", "-c", str(cu),
                            "-o", str(cu.with_suffix(".o")), "-Werror", "all-warnings"],
                           capture_output=True, text=True)
        return name, "" if r.returncode == 0 else r.stderr

    # the source no longer depends on the shape: kernels that differ only by name compile once
    first: dict[str, str] = {}
    for name, src in sources.items():
        first.setdefault(src.replace(name, "KERNEL"), name)
    unique = {name: sources[name] for name in first.values()}
    with ThreadPoolExecutor(len(unique)) as pool:
        done = dict(pool.map(build, unique.items()))
    return {name: done[first[src.replace(name, "KERNEL")]] for name, src in sources.items()}


@pytest.mark.parametrize("name", list(KERNELS))
def test_kernel_compiles_for_sm90a(name: str, compiled: dict[str, str]) -> None:
    assert compiled[name] == "", compiled[name]


SAME_CONFIG = {  # one configuration at two reference shapes (sizes that appear nowhere else)
    "naive": ("coalescing_naive.py", {}),
    "vec": ("simt_sgemm.py", dict(KIND="vec")),
    "large_dp": ("simt_warp_tiled.py", dict(CONFIG="large", DECOMP="dp")),
    "large_ft": ("simt_warp_tiled.py", dict(CONFIG="large", DECOMP="dp_ft")),
    "small8": ("simt_warp_tiled.py", dict(CONFIG="small8")),
    "splitk": ("simt_warp_tiled.py", dict(CONFIG="large", DECOMP="splitk", SPLITS=3,
                                          FIXUP="deterministic")),
}


@pytest.mark.parametrize("name", list(SAME_CONFIG))
def test_one_source_serves_every_shape(name: str) -> None:
    """Generated at two shapes of one configuration, the .cu files are byte-identical, and
    neither reference size appears in them: M, N, K are the kernel's arguments."""
    path, params = SAME_CONFIG[name]
    shapes = [(4447, 3931, 2719), (1237, 1531, 3391)]
    srcs = [emit_simt(lower_simt(load(path, **params, M=M, N=N, K=K), name=name))
            for M, N, K in shapes]
    assert srcs[0] == srcs[1]
    for size in {v for sh in shapes for v in sh}:
        assert str(size) not in srcs[0]
    assert "int M, int N, int K, int lda, int ldb, int ldc, void* stream)" in srcs[0]


def test_printed_features_follow_the_plan(sources: dict[str, str]) -> None:
    vec, naive, smem = sources["vec"], sources["naive"], sources["smem"]
    assert 'extern "C" int tilec_launch_vec(' in vec
    assert "reinterpret_cast<const float4*>(&As[buf]" in vec  # 128-bit shared reads of A
    # 128-bit C stores in the variants whose facts align the rows, scalar ones in the general
    assert "*reinterpret_cast<float4*>(&C[m * ldc + n]) = make_float4(" in vec
    assert "C[m * ldc + n] = acc[i_Mri + 4*i_Mro][i_Nri + 4*i_Nro];" in vec
    assert "((A | B | C) % 16 == 0)) return 0;  // tiles" in vec and "return 2;  // general" in vec
    assert "__shared__" not in naive and "__syncthreads" not in naive
    assert "if (((32*bidx + tidx < M) && (32*bidy + tidy < N)))" in naive  # predicated edge
    assert "((32*bidx + tidx < M)) ? A[i_K + lda*(32*bidx + tidx)]" in naive  # predicated load
    assert "for (int i_K = 0; i_K < K; ++i_K) {" in naive
    assert "store_tile(buf ^ 1)" in smem  # double-buffered
    assert "__shared__" in smem


def test_warp_tiled_features_follow_the_plan(sources: dict[str, str]) -> None:
    large, sync, small8 = sources["wt_large"], sources["wt_sync"], sources["wt_small8"]
    assert "__launch_bounds__(256, 2)" in large and "__launch_bounds__(64)" in small8
    assert "cp.async.cg.shared.global" in large and "tilec_cp_async_wait<1>()" in large
    assert "tilec_cp_async<4>(&As[buf]" in large and "tilec_cp_async<16>(&Bs[buf]" in large
    # 3 x 32 x (132 + 128) floats: past the 48 KB of static shared memory
    assert "extern __shared__ __align__(16) float smem[];  // 99840 bytes" in large
    assert "cudaFuncAttributeMaxDynamicSharedMemorySize, 99840" in large
    assert "const int jj = (i & 1) ? 7 - j : j;" in large  # fma_order('snake_rows')
    assert "load_slice(0, (rd + 1 == 3 ? 0 : rd + 1), 0);  // the next tile's" in large
    assert "cp.async" not in sync and "store_tile(buf ^ 1);" in sync
    assert "float As[2][8][132]" in sync  # the pad against the transposed stores' conflicts
    # smem_swizzle (the large row): A's stores rotated by k // 8, the reads rotated back
    assert "const float e[4] = {v.x, v.y, v.z, v.w};" in large
    assert "am[f][4*i_Rm + 1] = e[(1 + (i_Ki / 8)) % 4];" in large
    assert "tilec_cp_async<4>(&As[buf][(tid % 32)][8*it + (((tid / 32) + (((tid % 32)) / 8)) % 4)" in large
    swz = sources["wt_sync_swizzle"]
    assert "e[(3 + (i_Ki / 8)) % 4]" in swz and "cp.async" not in swz
    spread = sources["wt_ragged_lanes_spread"]
    # 16 copies of A and 16 of B (32-bit: N = 131) per K tile, 8 before each of 4 k-slices
    assert "issue_tile(i_Ko + 2, wr, i_Ki * 32 / 4, (i_Ki + 1) * 32 / 4);" in spread
    assert "if (i_Ki == 3) tilec_cp_async_commit();" in spread
    assert "e[" not in spread and "issue_tile(s, s, 0, 32)" in spread
    # copy_addresses('stride') (the large row): one pointer per copy loop plus it x the
    # kernel's stride argument, which the launcher computes from the leading dimension
    assert "ok ? &A[32*i_Ko + lda*(128*bidy + (tid / 32)) + (tid % 32)] + (size_t)it * a_step" in large
    assert "const Shape S, const unsigned a_step, const unsigned b_step) {" in large
    assert "(A, B, C, S, (unsigned)(8*lda), (unsigned)(8*ldb));" in large  # 128-bit B copies
    assert "(A, B, C, S, (unsigned)(8*lda), (unsigned)(2*ldb));" in large  # general: 32-bit
    index = sources["wt_large_index"]
    assert "_step" not in index and "&A[32*i_Ko + lda*(128*bidy + 8*it + (tid / 32)) +" in index
    bytes_ = sources["wt_large_bytes"]  # copy_addresses('byte_stride'): 64-bit byte strides
    assert "const size_t a_step, const size_t b_step" in bytes_
    assert "(A, B, C, S, (size_t)(32*lda), (size_t)(32*ldb));" in bytes_
    assert "(const float*)((const char*)&A[32*i_Ko + lda*(128*bidy" in bytes_ and "+ it * a_step)" in bytes_
    # the leading dimension is a run-time value: a thread's copies rows apart always take the
    # stride (at the reference K = 3 they would fit LDGSTS' immediate offsets)
    fold = sources["wt_ragged_stride_b"]
    assert "(size_t)it * a_step" in fold and "(size_t)it * b_step" in fold
    ft = sources["wt_large_ft"]  # the row's choice: whole waves one CTA each, then fronts/tails
    assert "note: work: dp_ft, fix-up atomic, its numbers per launch" in ft
    assert "kernel_tiles<<<dim3(W.workers, 1, 1)" in ft and "zeroed_rows(S, W, r0, r1);" in ft
    assert "atomicAdd(reinterpret_cast<float4*>(&C[m * ldc + n])" in ft and "int* __restrict__ tickets" not in ft
    ragged = sources["wt_ragged_large"]
    assert "note: Vectorize i_Vn (width 4) falls back to scalar: row length N is not a multiple of 4" in ragged
    assert "tilec_cp_async<4>(&Bs[buf]" in ragged  # general: 32-bit B copies
    assert "tilec_cp_async<16>(&Bs[buf]" in ragged  # tiles, aligned: 128-bit


def kernel_sass(sass: str, variant: str = "tiles") -> str:
    """The SASS of one variant's kernel (cuobjdump lists each function after "Function : ")."""
    parts = [p for p in sass.split("Function : ")[1:] if f"kernel_{variant}E" in p.split()[0]]
    assert len(parts) == 1, [p.split()[0] for p in sass.split("Function : ")[1:]]
    return parts[0]


CUOBJDUMP = Path(__import__("triton").__file__).parent / "backends/nvidia/bin/cuobjdump" \
    if __import__("importlib.util").util.find_spec("triton") else None


@pytest.mark.parametrize(("name", "want"), [
    ("wt_large", {"FFMA": 32 * 8 * 8, "LDS.128": 32 * 4, "LDGSTS.E.BYPASS.128": 1, "STG.E.128": 16}),
    ("wt_sync", {"FFMA": 8 * 8 * 8, "LDS.128": 8 * 4, "LDG.E.128.CONSTANT": 2, "STS.128": 1}),
    # swizzled: the rotation is resolved at compile time (no local memory, no more loads)
    ("wt_sync_swizzle", {"FFMA": 16 * 8 * 8, "LDS.128": 16 * 4}),
])
def test_sass_has_the_wide_accesses_and_one_unrolled_k_tile_of_ffma(
        name: str, want: dict[str, int], sources: dict[str, str],
        tmp_path_factory: pytest.TempPathFactory) -> None:
    """The machine code (cuobjdump of -O3 sm_90a): 128-bit global, cp.async and shared accesses,
    exactly BK x TM x TN FFMAs (the K tile's loop unrolled once, no copy), no local memory."""
    nvcc = shutil.which("nvcc")
    if nvcc is None or CUOBJDUMP is None or not CUOBJDUMP.is_file():
        pytest.skip("needs nvcc and the cuobjdump that Triton's package carries")
    d = tmp_path_factory.mktemp("sass")
    cu = d / f"{name}.cu"
    cu.write_text(sources[name])
    subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-cubin", str(cu),
                    "-o", str(d / "k.cubin")], check=True, capture_output=True)
    sass = kernel_sass(subprocess.run([str(CUOBJDUMP), "-sass", str(d / "k.cubin")], check=True,
                                      capture_output=True, text=True).stdout)
    ops = Counter(m.group(1) for m in re.finditer(r"/\*[0-9a-f]{4}\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)", sass))
    assert ops["FFMA"] == want["FFMA"]
    for op, n in want.items():
        assert ops[op] >= n, (op, ops[op])
    assert not any(op.startswith(("LDL", "STL")) for op in ops)


def _k_tile_loop(sass: str) -> Counter[str]:
    """The opcodes of the K-tile loop: from the target of the last backward branch to it."""
    ins = [(int(a, 16), op) for a, op in
           re.findall(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)", sass)]
    back = [(a, int(t, 16)) for a, t in re.findall(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?BRA (?:`\()?0x([0-9a-f]+)", sass)]
    end, start = max(((int(a, 16), t) for a, t in back if t < int(a, 16)), key=lambda x: x[0] - x[1])
    return Counter(op for a, op in ins if start <= a <= end)


def test_strided_copy_addresses_take_one_instruction_per_copy(
        sources: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    """The large row's K-tile loop in SASS (-O3 sm_90a, the tiles variant): with
    copy_addresses('stride') each of the 20 cp.async copies (16 of A, 4 of B) is one IMAD.WIDE
    from the stride argument, no IADD3."""
    nvcc = shutil.which("nvcc")
    if nvcc is None or CUOBJDUMP is None or not CUOBJDUMP.is_file():
        pytest.skip("needs nvcc and the cuobjdump that Triton's package carries")
    d = tmp_path_factory.mktemp("sass_addr")
    loops = {}
    for name in ("wt_large", "wt_large_index"):
        cu = d / f"{name}.cu"
        cu.write_text(sources[name])
        subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-cubin", str(cu),
                        "-o", str(d / f"{name}.cubin")], check=True, capture_output=True)
        loops[name] = _k_tile_loop(kernel_sass(subprocess.run(
            [str(CUOBJDUMP), "-sass", str(d / f"{name}.cubin")], check=True, capture_output=True,
            text=True).stdout))
    stride, index = loops["wt_large"], loops["wt_large_index"]
    for ops in (stride, index):
        assert ops["FFMA"] == 32 * 8 * 8 and ops["LDGSTS.E"] == 16 and ops["LDGSTS.E.BYPASS.128"] == 4
    # the leading dimension a run-time value, ptxas chains the whole indices' addresses too
    # (2259 instructions, as the stride's 2260: the 4096^3 kernel with lda a constant was 2276)
    assert stride["IADD3"] <= 2 < index["IADD3"]  # 2: the copies' base pointers, per K tile
    assert stride["IMAD.WIDE.U32"] + stride["IMAD.WIDE"] >= 20
    assert sum(stride.values()) <= 2260 and abs(sum(stride.values()) - sum(index.values())) <= 4


def test_ragged_n_prints_partial_b_copies_and_32_bit_c_stores(sources: dict[str, str]) -> None:
    """The ragged_n variant of the large row (dp_ft: partials added into C): its facts in
    pick_variant between tiles and aligned, B's 128-bit copies with a source size cut at N (the
    helper printed once), A's copies unguarded, C stored and added 32 bits at a time under
    n < N; the schedules without cp.async vector copies of B have no ragged_n."""
    ft = sources["wt_large_ft"]
    assert ("if ((M % 128 == 0) && (K % 32 == 0) && (ldb % 4 == 0) && (B % 16 == 0)) return 1;"
            "  // ragged_n") in ft and "return 2;  // aligned" in ft
    kern = ft[ft.index("kernel_ragged_n("):ft.index("}  // namespace", ft.index("kernel_ragged_n("))]
    assert ft.count("void tilec_cp_async_part(") == 1
    assert ("const int bytes = tilec_max(0, tilec_min(4 * (N - 128*bidx - 4*(tid % 32)), 16));"
            in kern)
    assert "tilec_cp_async_part(&Bs[buf][8*it + (tid / 32)][4*((tid % 32))], &B[" in kern
    assert kern.count("const bool ok = true;") == 1  # A: no M, K guard
    # 32-bit stores and atomic adds, staged through shared memory (a warp's lanes on
    # consecutive n: tests/simt/test_stage_c.py)
    assert "float4*>(&C[" not in kern and "float4*>(&Cs[" in kern
    assert "if ((n < N)) atomicAdd(&C[m * ldc + n], Cs[264*it + (tid % 128) + 132*(tid / 128)]);" in kern
    assert "if ((n < N)) C[m * ldc + n] = Cs[264*it + (tid % 128) + 132*(tid / 128)];" in kern
    assert "kernel_ragged_n<<<dim3(W.workers, 1, 1), dim3(256, 1, 1), 99840, st>>>(A, B, C, S, " \
           "(unsigned)(8*lda), (unsigned)(8*ldb), W);" in ft
    for name in ("vec", "wt_sync", "naive"):  # register-staged or unstaged: no ragged_n
        assert "ragged_n" not in sources[name] and "tilec_cp_async_part" not in sources[name]


def _inner_k_loop(sass: str, ffma: int) -> Counter[str]:
    """The opcodes of the innermost loop that holds ``ffma`` FFMAs (a K tile's, in a kernel
    whose units loop around it)."""
    ins = [(int(a, 16), op) for a, op in
           re.findall(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?([A-Z][\w.]*)", sass)]
    back = [(int(a, 16), int(t, 16)) for a, t in
            re.findall(r"/\*([0-9a-f]{4,})\*/\s+(?:@!?U?P\w+\s+)?BRA (?:`\()?0x([0-9a-f]+)", sass)]
    for end, start in sorted(((a, t) for a, t in back if t < a), key=lambda x: x[0] - x[1]):
        ops = Counter(op for a, op in ins if start <= a <= end)
        if ops["FFMA"] >= ffma:
            return ops
    raise AssertionError("no loop with the K tile's FFMAs")


def test_ragged_n_keeps_the_tiles_k_loop_and_the_model_reads_it(
        sources: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    """SASS (-O3 sm_90a) of the large row with dp_ft: ragged_n's K-tile loop is the tiles' (2048
    FFMA, 16 4-byte and 4 zero-filling 128-bit LDGSTS) plus the source sizes' few integer
    instructions, no local memory; the cost model's ``RAGGED_N`` is the ratio of the two loops'
    instruction counts (within 0.3%)."""
    from tilec.transforms.simt.cost import RAGGED_N

    nvcc = shutil.which("nvcc")
    if nvcc is None or CUOBJDUMP is None or not CUOBJDUMP.is_file():
        pytest.skip("needs nvcc and the cuobjdump that Triton's package carries")
    d = tmp_path_factory.mktemp("sass_ragged_n")
    cu = d / "ft.cu"
    cu.write_text(sources["wt_large_ft"])
    subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-cubin", str(cu),
                    "-o", str(d / "ft.cubin")], check=True, capture_output=True)
    sass = subprocess.run([str(CUOBJDUMP), "-sass", str(d / "ft.cubin")], check=True,
                          capture_output=True, text=True).stdout
    tiles, ragged = (_inner_k_loop(kernel_sass(sass, v), 32 * 8 * 8) for v in ("tiles", "ragged_n"))
    assert ragged["FFMA"] == tiles["FFMA"] == 32 * 8 * 8
    assert ragged["LDGSTS.E"] == 16 and ragged["LDGSTS.E.BYPASS.128.ZFILL"] == 4
    assert tiles["LDGSTS.E.BYPASS.128"] == 4 and "LDGSTS.E.BYPASS.128.ZFILL" not in tiles
    assert 0 < sum(ragged.values()) - sum(tiles.values()) <= 30
    assert sum(ragged.values()) / sum(tiles.values()) == pytest.approx(RAGGED_N, abs=0.003)
    body = kernel_sass(sass, "ragged_n")
    assert not re.search(r"\b(LDL|STL)", body)
    assert re.search(r"\bSTG\.E\b", body) and "STG.E.128" not in body


def test_byte_strides_take_the_copy_addresses_off_the_fma_pipe(
        sources: dict[str, str], tmp_path_factory: pytest.TempPathFactory) -> None:
    """copy_addresses('byte_stride') (SASS, -O3 sm_90a): the 18 chained copy addresses of the
    large row's K-tile loop are 64-bit adds (IADD3 + IADD3.X, the integer pipe) instead of
    IMAD.WIDE.U32 (the FMA pipe, where the FFMAs issue); the FFMAs are the same 2048."""
    nvcc = shutil.which("nvcc")
    if nvcc is None or CUOBJDUMP is None or not CUOBJDUMP.is_file():
        pytest.skip("needs nvcc and the cuobjdump that Triton's package carries")
    d = tmp_path_factory.mktemp("sass_bytes")
    loops = {}
    for name in ("wt_large", "wt_large_bytes"):
        cu = d / f"{name}.cu"
        cu.write_text(sources[name])
        subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-cubin", str(cu),
                        "-o", str(d / f"{name}.cubin")], check=True, capture_output=True)
        loops[name] = _k_tile_loop(kernel_sass(subprocess.run(
            [str(CUOBJDUMP), "-sass", str(d / f"{name}.cubin")], check=True, capture_output=True,
            text=True).stdout))
    elems, bytes_ = loops["wt_large"], loops["wt_large_bytes"]
    fma_pipe = {ops: sum(n for op, n in ops_.items() if op.startswith("IMAD"))
                for ops, ops_ in (("elems", elems), ("bytes", bytes_))}
    assert bytes_["FFMA"] == elems["FFMA"] == 32 * 8 * 8
    assert elems["IMAD.WIDE.U32"] >= 16 and bytes_["IMAD.WIDE.U32"] == 0
    assert bytes_["IADD3.X"] >= 16 and fma_pipe["bytes"] <= fma_pipe["elems"] - 16


def _sass_operands():  # type: ignore[no-untyped-def]
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    import sass_operands

    return sass_operands


def test_reuse_cache_model_per_slot_and_bank() -> None:
    """bench/sass_operands.py: an operand hits when its slot's entry for its bank holds it (R4
    and R5 both cached in slot 2 while they alternate; R4 still there two FFMAs later), and the
    flags it infers for unflagged SASS are the ones that make those hits."""
    so = _sass_operands()
    listing = ["FFMA R20, R10.reuse, R4.reuse, R20", "FFMA R22, R10, R5.reuse, R22",
               "FFMA R25, R11.reuse, R4.reuse, R25", "FFMA R27, R11, R5, R27",
               "FFMA R29, R12, R4, R29"]
    ins = so.from_pcs({16 * i: t for i, t in enumerate(listing)})
    fs = so.ffmas(ins)
    assert [f.rf for f in fs] == [(10, 4, 20), (5, 22), (11, 25), (27,), (12, 29)]
    assert [f.kind for f in fs] == ["rf3", "rf2", "rf2-pair", "rf1", "rf2"]
    bare = [(pc, op, [o.replace(".reuse", "") for o in ops]) for pc, op, ops in ins]
    assert [f.rf for f in so.ffmas(so.infer_reuse(bare))] == [f.rf for f in fs]


def test_inferred_reuse_flags_match_ptxas(sources: dict[str, str],
                                          tmp_path_factory: pytest.TempPathFactory) -> None:
    """On the large row's K-tile loop (SASS, -O3 sm_90a) the flags inferred from the listing
    without them give the register-file reads of ptxas' own flags, FFMA for FFMA but for 1%;
    and ptxas does keep two registers of one slot cached (a hit on an operand whose slot read
    the other bank in between)."""
    nvcc = shutil.which("nvcc")
    if nvcc is None or CUOBJDUMP is None or not CUOBJDUMP.is_file():
        pytest.skip("needs nvcc and the cuobjdump that Triton's package carries")
    so = _sass_operands()
    d = tmp_path_factory.mktemp("sass_reuse")
    (d / "k.cu").write_text(sources["wt_large"])
    subprocess.run([nvcc, "-gencode=arch=compute_90a,code=sm_90a", "-O3", "-cubin", str(d / "k.cu"),
                    "-o", str(d / "k.cubin")], check=True, capture_output=True)
    sass = kernel_sass(subprocess.run([str(CUOBJDUMP), "-sass", str(d / "k.cubin")], check=True,
                                      capture_output=True, text=True).stdout)
    lo, hi = so.k_tile_loop(sass)
    ins = [i for i in so.instructions(sass) if lo <= i[0] <= hi]
    real = so.ffmas(ins)
    inferred = so.ffmas(so.infer_reuse([(pc, op, [o.replace(".reuse", "") for o in ops])
                                        for pc, op, ops in ins]))
    assert len(real) == len(inferred) == 32 * 8 * 8
    differ = sum(a.rf != b.rf for a, b in zip(real, inferred, strict=True))
    assert differ <= len(real) // 100, differ
    ffma = [ops for _, op, ops in ins if op == "FFMA"]
    crossed = sum(1 for a, b, c in zip(ffma, ffma[1:], ffma[2:], strict=False)
                  for s in (1, 2) if a[s].endswith(".reuse") and a[s].split(".")[0] == c[s].split(".")[0]
                  and int(b[s].split(".")[0][1:]) % 2 != int(a[s].split(".")[0][1:]) % 2)
    assert crossed > 0
