"""``tilec gen --sizes static`` (issue 26: "a per-shape kernel remains a choice where it is
measurably faster"): the shape-generic file's text with M, N, K and the leading dimensions
``tl.constexpr`` fixed to the plan's, and a launcher that refuses any other shape. Run in the CPU
interpreter against torch in float64, C poisoned by NaN.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"

import pytest
import torch

from tests.plans import plan
from tilec.app.cli import main
from tilec.codegen.triton.printer import emit
from tilec.codegen.triton.printer.kernel import SHAPE_ARGS
from tilec.errors import TilecError
from tilec.transforms.plan import DType, Fixup, LoadKind

TOL = {DType.FP16: 2e-3, DType.FP32: 1e-5}
TORCH = {DType.FP16: torch.float16, DType.FP32: torch.float32}

# (M, N, K, BM, BN, BK, options): ragged sizes, rows not 16-byte aligned (K = 36 fp16:
# 72 bytes; K = 7 fp32: 28 bytes), M = 1, every decomposition with a fix-up
CASES = {
    "dp-tma-fp16": (80, 48, 36, 16, 16, 16, dict(dtype=DType.FP16)),
    "dp-pointer-fp32-bt": (33, 9, 7, 16, 16, 16, dict(dtype=DType.FP32, load=LoadKind.POINTER,
                                                      b_transposed=True)),
    "splitk-reduce-fp16": (64, 32, 48, 16, 16, 16, dict(dtype=DType.FP16, decomposition="splitk",
                                                        splits=2, sms=4,
                                                        fixup=Fixup.REDUCE_KERNEL)),
    "streamk-det-fp32-m1": (1, 20, 7, 16, 16, 16, dict(dtype=DType.FP32, decomposition="streamk",
                                                       sms=3, fixup=Fixup.DETERMINISTIC)),
    "skpp-atomic-fp16": (50, 70, 100, 16, 32, 16, dict(dtype=DType.FP16, decomposition="skpp",
                                                       sk_waves=1, sms=3, fixup=Fixup.ATOMIC)),
}


def load(src: str, path: Path):  # type: ignore[no-untyped-def]
    path.write_text(src)
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def operands(M: int, N: int, K: int, dt: DType, b_t: bool, seed: int, wide: int = 0):  # type: ignore[no-untyped-def]
    """A and B at (M, N, K); ``wide`` > 0: views into rows ``wide`` elements longer."""
    g = torch.Generator().manual_seed(seed)
    a = torch.randn((M, K + wide), generator=g).to(TORCH[dt])[:, :K]
    b_shape = (N, K + wide) if b_t else (K, N + wide)
    b = torch.randn(b_shape, generator=g).to(TORCH[dt])[:, :b_shape[1] - wide]
    return a, b


def check(mod, a, b, dt: DType, b_t: bool) -> None:  # type: ignore[no-untyped-def]
    M, N = a.shape[0], b.shape[0] if b_t else b.shape[1]
    out = torch.full((M, N), float("nan"), dtype=TORCH[dt])
    c = mod.run(a, b, out=out)
    assert c is out and not c.isnan().any()
    ref = a.double() @ (b.double().T if b_t else b.double())
    err = (c.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1.0)
    assert err < TOL[dt], f"relative error {err:.3g}"


@pytest.mark.parametrize("name", list(CASES))
def test_static_file_computes_its_shape_and_refuses_others(name: str, tmp_path: Path) -> None:
    M, N, K, BM, BN, BK, opts = CASES[name]
    p = plan(M, N, K, BM, BN, BK, **opts)  # type: ignore[arg-type]
    b_t, dt = bool(opts.get("b_transposed")), p.dtype
    mod = load(emit(p, static=True), tmp_path / f"static_{name.replace('-', '_')}.py")
    for seed, wide in enumerate((0, 5)):  # contiguous, then row-strided views (copied into rows)
        check(mod, *operands(M, N, K, dt, b_t, seed, wide), dt, b_t)
    # any other shape: a TilecError naming the tensor, its shape and the one shape served
    a, b = operands(M, N, K, dt, b_t, 9)
    for bad_a, bad_b, who, shape in (
        (operands(M + 1, N, K, dt, b_t, 1)[0], b, "A", (M + 1, K)),
        (a, operands(M, N + 3, K, dt, b_t, 1)[1], "B", (N + 3, K) if b_t else (K, N + 3)),
        (operands(M, N, K + 16, dt, b_t, 1)[0], operands(M, N, K + 16, dt, b_t, 1)[1], "A",
         (M, K + 16)),
    ):
        with pytest.raises(TilecError) as e:
            mod.run(bad_a, bad_b)
        msg = str(e.value)
        assert "\n" not in msg
        assert msg.startswith(f"{who} has shape {shape} but this file serves only "
                              f"M, N, K = {M}, {N}, {K}"), msg


def _kernels(src: str) -> str:
    """The device code (from the first @triton.jit to the launcher's state), with the static
    file's changes undone: the sizes' ``tl.constexpr`` and the do_not_specialize lists."""
    body = src[src.index("@triton.jit"):src.index("_LAUNCHES = {}")]
    body = re.sub(r"\b(" + "|".join(SHAPE_ARGS) + r"): tl\.constexpr", r"\1", body)
    return re.sub(r"@triton\.jit\(do_not_specialize=\[.*?\]\)", "@triton.jit(...)", body)


@pytest.mark.parametrize("name", list(CASES))
def test_static_differs_from_generic_only_where_sizes_are_fixed(name: str) -> None:
    M, N, K, BM, BN, BK, opts = CASES[name]
    p = plan(M, N, K, BM, BN, BK, **opts)  # type: ignore[arg-type]
    generic, static = emit(p), emit(p, static=True)
    assert generic == emit(p, static=False)  # the default is the generic file
    assert _kernels(static) == _kernels(generic)
    # the kernels' signatures take every size as a constexpr, and nothing is left unspecialized
    # but the reduce kernel's SUBS
    for sig in re.findall(r"^def (?:gemm|reduce)_kernel\(.*$", static, re.M):
        assert all(f"{a}: tl.constexpr" in sig for a in SHAPE_ARGS), sig
    assert set(re.findall(r"do_not_specialize=(\[.*?\])", static)) <= {"[]", "['SUBS']"}
    # the launcher: generic lines removed are the header's "any M, N, K" and the strides read
    # per call; everything else added (the one shape, its checks and row copies)
    g_lines, s_lines = generic.splitlines(), set(static.splitlines())
    gone = [line for line in g_lines if line not in s_lines]
    allowed = ("any M, N, K", "do_not_specialize", "def gemm_kernel(", "def reduce_kernel(",
               "lda, ldb, ldc = a.stride(0), b.stride(0), out.stride(0)")
    assert gone and all(any(s in line for s in allowed) for line in gone), gone
    assert f"M, N, K = {M}, {N}, {K} only" in static


def test_gen_sizes_static_and_its_refusal_for_cuda(tmp_path: Path, capsys) -> None:  # type: ignore[no-untyped-def]
    example = str(Path(__file__).resolve().parents[2] / "examples" / "split_k.py")
    sizes = ["--param", "M=100", "--param", "N=70", "--param", "K=50", "--param", "BM=32",
             "--param", "BN=32", "--param", "BK=16", "--param", "SPLITS=2"]
    out = {}
    for mode in ("default", "generic", "static"):
        argv = ["gen", example, *sizes, "-o", str(tmp_path / f"{mode}.py")]
        assert main(argv + ([] if mode == "default" else ["--sizes", mode])) == 0
        out[mode] = (tmp_path / f"{mode}.py").read_text()
    assert out["default"] == out["generic"] != out["static"]
    assert "M: tl.constexpr, N: tl.constexpr, K: tl.constexpr" in out["static"]
    assert "_SHAPES = ((100, 50), (50, 70))" in out["static"]
    capsys.readouterr()
    assert main(["gen", example, *sizes, "--target", "cuda", "--sizes", "static"]) != 0
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "--sizes static is Triton-only" in err, err



# compiles gemm_kernel of the file argv[1] for sm_90 (no GPU needed) and prints its arguments
_COMPILE = """
import importlib.util, re, sys
from triton.backends.compiler import GPUTarget
from triton.compiler import ASTSource, compile
spec = importlib.util.spec_from_file_location("k", sys.argv[1])
mod = importlib.util.module_from_spec(spec)
spec.loader.exec_module(mod)
fn, const = mod.gemm_kernel, eval(sys.argv[2])
sig = {n: "constexpr" if n in const else "*fp16" if n in "abc" else "i32" for n in fn.arg_names}
src = ASTSource(fn, sig, {(fn.arg_names.index(n),): v for n, v in const.items()})
ttir = compile(src, target=GPUTarget("cuda", 90, 32), options=dict(num_warps=4, num_stages=2))
entry = next(l for l in ttir.asm["ttir"].splitlines() if "tt.func public @gemm_kernel" in l)
print(" ".join(re.findall(r"%(\\w+): ", entry)))
"""


@pytest.mark.parametrize("static", [False, True])
def test_static_kernel_compiles_for_sm90_with_its_sizes_folded(static: bool, tmp_path: Path) -> None:
    # compiled for sm_90 without a GPU (Triton's own compiler, in a process without the
    # interpreter): the static kernel's only arguments are its pointers (M, N, K and the leading
    # dimensions folded); the generic kernel's carry the sizes
    pytest.importorskip("triton.compiler")
    p = plan(80, 48, 40, 16, 16, 16, dtype=DType.FP16, load=LoadKind.POINTER)
    path = tmp_path / f"compiled_{static}.py"
    path.write_text(emit(p, static=static))
    const: dict[str, object] = dict(EVEN_M=True, EVEN_N=True, EVEN_K=False, TMA_A=False,
                                    TMA_B=False, WIDE=False)
    if static:
        const.update(zip(SHAPE_ARGS, (80, 48, 40, 40, 48, 48), strict=True))
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    env["TRITON_DEFAULT_FP_FUSION"] = "1"
    res = subprocess.run([sys.executable, "-c", _COMPILE, str(path), repr(const)], env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-2000:]
    args = res.stdout.split()
    if static:
        assert args == ["a", "b", "c"], args
    else:
        assert {"M", "N", "K", "lda", "ldb", "ldc"} <= set(args), args
