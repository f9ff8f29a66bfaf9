"""Shape-generic Triton kernels (issue 26): one generated file, lowered at one size, serves every
M, N, K. Run in the CPU interpreter against torch in float64, C poisoned by NaN (every element
must be written), at shapes that meet the facts (the facts variant: no boundary masks) and at
shapes that meet some or none (masks along the sizes the tiles do not divide), for every
decomposition.
"""

from __future__ import annotations

import os
import re

os.environ["TRITON_INTERPRET"] = "1"

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.plans import plan
from tilec.codegen.triton.printer import emit
from tilec.errors import TilecError
from tilec.runtime.build import load_triton
from tilec.transforms.plan import DType, Fixup, LoadKind

CONFIGS = {  # TMA loads unless said otherwise
    "dp": dict(),
    "dp-pointer": dict(load=LoadKind.POINTER),
    "dp-persistent-grouped": dict(sms=3, order="grouped", group_m=2),
    "splitk-atomic-pointer": dict(decomposition="splitk", splits=3, fixup=Fixup.ATOMIC,
                                  load=LoadKind.POINTER),
    "splitk-persistent-reduce": dict(decomposition="splitk", splits=2, sms=4,
                                     fixup=Fixup.REDUCE_KERNEL),
    "streamk-deterministic-pointer": dict(decomposition="streamk", sms=5,
                                          fixup=Fixup.DETERMINISTIC, load=LoadKind.POINTER),
    "dp_1sk-atomic": dict(decomposition="dp_1sk", sms=3, fixup=Fixup.ATOMIC),
    "sk2_dp-grouped-reduce": dict(decomposition="sk2_dp", sms=4, order="grouped", group_m=3,
                                  fixup=Fixup.REDUCE_KERNEL),
    "skpp-deterministic": dict(decomposition="skpp", sk_waves=2, sms=3,
                               fixup=Fixup.DETERMINISTIC),
}
# (M, N, K): the first two meet the facts (16 divides them), the others are ragged: M = 1,
# K < BK, one dimension aligned and another not, more tiles than the reference launch had
SHAPES = [(64, 32, 48), (32, 96, 16), (1, 1, 1), (37, 50, 9), (100, 70, 50), (48, 17, 64),
          (129, 33, 40)]
TOL = {DType.FP16: 2e-3, DType.FP32: 1e-5}


def check(mod, M: int, N: int, K: int, dtype: DType, b_t: bool = False, seed: int = 0) -> None:  # type: ignore[no-untyped-def]
    g = torch.Generator().manual_seed(seed)
    dt = {DType.FP16: torch.float16, DType.FP32: torch.float32}[dtype]
    a = torch.randn((M, K), generator=g).to(dt)
    b = torch.randn((N, K) if b_t else (K, N), generator=g).to(dt)
    out = torch.full((M, N), float("nan"), dtype=dt)
    c = mod.run(a, b, out=out)
    assert c is out
    assert not c.isnan().any(), f"{int(c.isnan().sum())} elements of C never written at {M, N, K}"
    ref = a.double() @ (b.double().T if b_t else b.double())
    err = (c.double() - ref).abs().max().item() / max(ref.abs().max().item(), 1.0)
    assert err < TOL[dtype], f"relative error {err:.3g} at {M, N, K}"


@pytest.fixture
def variants(monkeypatch):  # type: ignore[no-untyped-def]
    """Records which variant (EVEN_M, EVEN_N, EVEN_K) each call of a module's run() takes."""
    taken: list[tuple[bool, bool, bool]] = []

    def spy(mod):  # type: ignore[no-untyped-def]
        facts = mod._facts

        def recorded(M: int, N: int, K: int) -> tuple[bool, bool, bool]:
            taken.append(facts(M, N, K))
            return taken[-1]

        monkeypatch.setattr(mod, "_facts", recorded)
        return mod

    spy.taken = taken  # type: ignore[attr-defined]
    return spy


@pytest.mark.parametrize("name", list(CONFIGS))
def test_one_kernel_serves_every_shape(name: str, variants) -> None:  # type: ignore[no-untyped-def]
    p = plan(80, 48, 32, 16, 16, 16, dtype=DType.FP16, **CONFIGS[name])  # type: ignore[arg-type]
    mod = variants(load_triton(p))
    for i, (M, N, K) in enumerate(SHAPES):
        check(mod, M, N, K, DType.FP16, seed=i)
    assert variants.taken == [(M % 16 == 0, N % 16 == 0, K % 16 == 0) for M, N, K in SHAPES]
    facts = [all(v) for v in variants.taken]
    assert True in facts and False in facts  # the facts variant and others ran
    # the deterministic fix-ups are bitwise stable at a size other than the lowered one
    if p.work.fixup is not Fixup.ATOMIC:
        g = torch.Generator().manual_seed(3)
        a, b = torch.randn((100, 50), generator=g).half(), torch.randn((50, 70), generator=g).half()
        assert torch.equal(mod.run(a, b), mod.run(a, b))


@pytest.mark.parametrize("b_t", [False, True])
@pytest.mark.parametrize("copy", [False, True])
def test_tma_loads_where_rows_allow_and_pointers_elsewhere(b_t: bool, copy: bool,
                                                           monkeypatch) -> None:  # type: ignore[no-untyped-def]
    # a TMA configuration: rows of 7 or 9 fp32 (28, 36 bytes) are not 16-byte multiples, so that
    # operand runs the variant with masked pointer loads (or, with _COPY_UNALIGNED, is copied
    # into aligned rows and keeps TMA); M = 1 and boxes past every edge
    p = plan(64, 64, 64, 16, 16, 16, dtype=DType.FP32, load=LoadKind.TMA, b_transposed=b_t,
             decomposition="streamk", sms=3, fixup=Fixup.DETERMINISTIC)
    assert (p.a.kind, p.b.kind) == (LoadKind.TMA, LoadKind.TMA)
    mod = load_triton(p)
    monkeypatch.setattr(mod, "_COPY_UNALIGNED", copy)
    seen: list[bool] = []
    rows_aligned = mod._rows_aligned
    monkeypatch.setattr(mod, "_rows_aligned", lambda x: seen.append(rows_aligned(x)) or seen[-1])
    for i, (M, N, K) in enumerate([(64, 64, 64), (1, 20, 7), (33, 9, 40), (50, 48, 9)]):
        check(mod, M, N, K, DType.FP32, b_t=b_t, seed=i)
    assert True in seen and False in seen  # both kinds of load ran (or were copied into TMA)


def test_empty_problems() -> None:
    mod = load_triton(plan(64, 64, 64, 16, 16, 16, dtype=DType.FP16, decomposition="splitk", splits=2))
    for M, N in ((0, 5), (5, 0), (0, 0)):
        c = mod.run(torch.randn(M, 7).half(), torch.randn(7, N).half())
        assert c.shape == (M, N)
    out = torch.full((3, 4), float("nan")).half()
    assert mod.run(torch.randn(3, 0).half(), torch.randn(0, 4).half(), out=out) is out
    assert not out.any()  # K = 0: C = 0


def test_the_source_holds_no_problem_size() -> None:
    for kw in CONFIGS.values():
        one = emit(plan(1000, 777, 555, 16, 16, 16, dtype=DType.FP16, **kw))  # type: ignore[arg-type]
        other = emit(plan(96, 16, 32, 16, 16, 16, dtype=DType.FP16, **kw))  # type: ignore[arg-type]
        assert one == other
        # no size, tile count (63 x 49) or k_iters (35) of the launch lowered for
        assert not re.search(r"\b(1000|777|555|63|49|35)\b", one)


def test_bad_arguments_are_user_errors_naming_the_tensors() -> None:
    mod = load_triton(plan(64, 64, 64, 16, 16, 16, dtype=DType.FP16))
    a, b = torch.randn(20, 30).half(), torch.randn(31, 40).half()
    with pytest.raises(TilecError, match=r"A is \(M, K\) = \(20, 30\) .* B has shape \(31, 40\)"):
        mod.run(a, b)
    buf = torch.zeros(20 * 40 + 30 * 20).half()
    x = buf[: 20 * 30].view(20, 30)
    with pytest.raises(TilecError, match=r"out \(20, 40\) overlaps A \(20, 30\)"):
        mod.run(x, torch.randn(30, 40).half(), out=buf[100:100 + 800].view(20, 40))
    with pytest.raises(TilecError, match="A must have dtype torch.float16 but got torch.float32"):
        mod.run(a.float(), b)


def test_one_module_per_configuration() -> None:
    # the file is keyed by its text, which holds no size: plans of one configuration lowered at
    # different sizes load one module (one compile per variant, Triton's cache keyed by source)
    kw = CONFIGS["streamk-deterministic-pointer"]
    one = load_triton(plan(80, 48, 32, 16, 16, 16, dtype=DType.FP16, **kw))  # type: ignore[arg-type]
    other = load_triton(plan(160, 16, 64, 16, 16, 16, dtype=DType.FP16, **kw))  # type: ignore[arg-type]
    assert one is other
    assert load_triton(plan(80, 48, 32, 16, 32, 16, dtype=DType.FP16, **kw)) is not one  # another tile


@settings(max_examples=10, deadline=None, suppress_health_check=list(HealthCheck))
@given(M=st.integers(1, 200), N=st.integers(1, 100), K=st.integers(1, 150),
       name=st.sampled_from(["sk2_dp-grouped-reduce", "splitk-atomic-pointer",
                             "skpp-deterministic"]))
def test_random_shapes_through_one_file(M: int, N: int, K: int, name: str) -> None:
    # every file lowered at 80 x 48 x 32, run at a random shape
    mod = load_triton(plan(80, 48, 32, 16, 16, 16, dtype=DType.FP16, **CONFIGS[name]))  # type: ignore[arg-type]
    check(mod, M, N, K, DType.FP16, seed=M * 7 + N)
