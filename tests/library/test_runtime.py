"""The built module's run-time half (tilec/library/runtime.py) on CPU, with torch kernels in place
of the generated ones (tests/library/fake.py): results against torch at every kind of shape, the
dispatch against a brute-force reading of the table, each bad input as one TilecError, the
compile counter, the custom op under torch.compile and opcheck, TILEC_LOG, and that the module
imports where tilec cannot be imported."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from tests.library.fake import fake_library, fake_module, import_module
from tilec.library import module_text

SHAPES = [(0, 8, 8), (1, 8, 8), (1, 1, 1), (5, 0, 3), (7, 9, 0), (16, 16, 16), (17, 33, 5),
          (3, 100, 64), (100, 100, 100), (64, 48, 32), (129, 7, 300)]


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("TRITON_INTERPRET", "1")
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path / "cache"))
    monkeypatch.delenv("TILEC_LOG", raising=False)
    monkeypatch.delenv("TILEC_CARD", raising=False)


def _operands(M: int, N: int, K: int, layout: str = "kn", seed: int = 0
              ) -> tuple[torch.Tensor, torch.Tensor]:
    g = torch.Generator().manual_seed(seed)
    a = torch.randn((M, K), generator=g)
    b = torch.randn((K, N), generator=g)
    if layout == "nk":
        b = torch.randn((N, K), generator=g).t()  # a linear layer's weight, transposed view
    return a, b


@pytest.mark.parametrize("layout", ["kn", "nk"])
def test_results_match_torch_at_every_kind_of_shape(tmp_path: Path, layout: str) -> None:
    m = fake_module(tmp_path, layout=layout)
    for M, N, K in SHAPES:
        a, b = _operands(M, N, K, layout, seed=M * 7 + N)
        out = torch.full((M, N), float("nan"))
        got = m.matmul(a, b, out=out)
        assert got is out and got.shape == (M, N)
        torch.testing.assert_close(got, (a.double() @ b.double()).float())
        fresh = m.matmul(a, b)
        torch.testing.assert_close(fresh, got)
    # an nk build reads the weight as it is stored (w.t() of an N x K w): no copy of b
    assert m.stats()["copies"] == 0


def test_leading_dimensions_and_copied_layouts(tmp_path: Path) -> None:
    m = fake_module(tmp_path)
    x = torch.randn(2, 3, 12)
    b = torch.randn(12, 5)
    torch.testing.assert_close(m.matmul(x, b), x @ b)
    out = torch.empty(2, 3, 5)
    assert m.matmul(x, b, out=out) is out
    torch.testing.assert_close(out, x @ b)
    before = m.stats()["copies"]
    at = torch.randn(12, 9).t()  # A stored column-major: copied, still right
    torch.testing.assert_close(m.matmul(at, b), at @ b)
    assert m.stats()["copies"] == before + 1
    with pytest.raises(m.TilecError, match=r"out must have shape \(2, 3, 'N'\)"):
        m.matmul(x, b, out=torch.empty(6, 5))


def _brute_class(x: int) -> int:
    c = 0
    while 2 ** c < x:
        c += 1
    return c


def test_dispatch_reads_the_table_like_brute_force(tmp_path: Path) -> None:
    lib = fake_library(classes=8)
    m = import_module(module_text(lib, built="test"), tmp_path, lib.name)
    table = lib.tables["default"]
    C = table["classes"]
    for M in (1, 2, 3, 15, 16, 17, 31, 128, 129, 1000, 5000):
        for N, K in ((1, 1), (48, 33), (4096, 4096)):
            c = [min(_brute_class(x), C - 1) for x in (M, N, K)]
            want = table["grid"][(c[0] * C + c[1]) * C + c[2]]
            if (M, N, K) in table["exact"]:
                want = table["exact"][(M, N, K)][0]
            assert m.explain(M, N, K).split("config ")[1].startswith(f"{want} "), (M, N, K)
            assert (f"classes ({c[0]}, {c[1]}, {c[2]})" in m.explain(M, N, K))
    assert "exact entry 100x100x100" in m.explain(100, 100, 100)
    assert "empty result" in m.explain(0, 5, 5) and "zeroed" in m.explain(5, 5, 0)


def test_stats_count_one_compile_per_config_and_facts(tmp_path: Path) -> None:
    m = fake_module(tmp_path)
    run = lambda M, N, K: m.matmul(*_operands(M, N, K))  # noqa: E731
    run(32, 32, 32)  # config 1, every fact holds, TMA kernel
    assert (m.stats()["variants"], m.stats()["kernels_loaded"]) == (1, 1)
    run(64, 96, 128)  # same config, same facts: nothing new
    run(64, 96, 128)
    assert (m.stats()["variants"], m.stats()["kernels_loaded"]) == (1, 1)
    run(33, 32, 32)  # same kernel, M % 32 fails: the variant without EVEN_M
    assert m.stats()["variants"] == 2
    run(65, 32, 32)  # M % 32 fails again: the same variant, no new compile
    assert m.stats()["variants"] == 2
    run(64, 40, 32)  # N % 32 fails (and N = 40 is not a multiple of 16): another variant
    assert m.stats()["variants"] == 3
    run(33, 32, 33)  # K * 4 bytes not a multiple of 16: TMA cannot load A's rows in place
    assert (m.stats()["variants"], m.stats()["kernels_loaded"]) == (4, 1)
    assert m.stats()["calls"] == 7
    assert "run before in this process" in m.explain(33, 32, 33)
    assert "not run yet" in m.explain(33, 33, 33)
    m.reset_stats()
    run(64, 96, 128)
    assert m.stats()["variants"] == 0 and m.stats()["calls"] == 1


def _bad(m, a, b, out=None, *, match: str) -> None:
    with pytest.raises(m.TilecError, match=match) as e:
        m.matmul(a, b, out=out)
    assert isinstance(e.value, ValueError) and isinstance(e.value, TypeError)


def test_bad_input_is_one_clear_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    m = fake_module(tmp_path)
    a, b = _operands(8, 4, 16)
    _bad(m, [[1.0]], b, match="a must be a torch.Tensor but is list")
    _bad(m, a.half(), b, match=r"a \(shape \(8, 16\), strides \(16, 1\), torch.float16, cpu\) "
         r"must be torch.float32")
    _bad(m, a, b.double(), match="b .*must be torch.float32")
    _bad(m, a[0], b, match=r"a \(shape \(16,\).* must be 2-D")
    _bad(m, a, torch.randn(15, 4), match=r"do not agree on K: a .*K = 16, b .*K = 15")
    _bad(m, a, b, torch.empty(8, 5), match=r"out \(shape \(8, 5\).*must have shape \(8, 4\)")
    _bad(m, a, b, torch.empty(8, 4, dtype=torch.float64), match="out .*must be torch.float32")
    _bad(m, a, b, torch.empty(4, 8).t(), match=r"out .*strides \(1, 8\).* must be contiguous")
    _bad(m, a, b, torch.empty(8, 4, device="meta"), match="out .* must be on cpu")
    # out overlapping an operand: a view of the same storage
    buf = torch.randn(8 * 16 + 32)
    _bad(m, buf[:128].view(8, 16), b, buf[100:132].view(8, 4), match="out overlaps a in memory")
    bb = torch.randn(16 * 4 + 8)
    _bad(m, a, bb[:64].view(16, 4), bb[40:72].view(8, 4), match="out overlaps b")
    # disjoint views of one storage are fine
    ok = m.matmul(buf[:128].view(8, 16), b, out=buf[128:160].view(8, 4))
    torch.testing.assert_close(ok, buf[:128].view(8, 16) @ b)
    monkeypatch.delenv("TRITON_INTERPRET")
    _bad(m, a, b, match=r"a \(.*cpu\) must be on a CUDA device")


def test_unaligned_rows_are_left_to_the_kernels_launcher(tmp_path: Path) -> None:
    m = fake_module(tmp_path)
    for M, N, K, who in ((8, 8, 6, "A's rows (6 x 4 bytes)"), (8, 6, 8, "B's rows (6 x 4 bytes)")):
        a, b = _operands(M, N, K)
        torch.testing.assert_close(m.matmul(a, b), a @ b)
        assert f"{who} are not 16-byte multiples" in m.explain(M, N, K)
    assert "16-byte" not in m.explain(8, 8, 8)
    nk = fake_module(tmp_path, name="nkgemm", layout="nk")  # B read as N x K: its rows are K
    assert "A's rows (6 x 4 bytes) and B's rows (6 x 4 bytes)" in nk.explain(8, 8, 6)
    ptr = fake_module(tmp_path, name="ptrgemm", tma=(False, False))  # pointer loads: no rule
    assert "16-byte" not in ptr.explain(8, 6, 6)


def test_custom_op_under_torch_compile_and_opcheck(tmp_path: Path) -> None:
    m = fake_module(tmp_path)
    op = getattr(torch.ops, m.OP_NAMESPACE).matmul
    a, b = _operands(17, 12, 8)
    torch.library.opcheck(op.default, (a, b))

    @torch.compile(backend="aot_eager", fullgraph=True)
    def f(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
        return torch.relu(m.matmul(x, w)) + 1

    for M in (17, 3, 64):  # changing batch sizes
        a, b = _operands(M, 12, 8, seed=M)
        torch.testing.assert_close(f(a, b), torch.relu(a @ b) + 1)
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        fa, fb = torch.empty(5, 8), torch.empty(8, 12)
        assert m.matmul(fa, fb).shape == (5, 12)
        with pytest.raises(m.TilecError, match="do not agree on K"):
            m.matmul(fa, torch.empty(7, 12))
    # backward through torch.matmul
    a.requires_grad_(True)
    m.matmul(a, b).sum().backward()
    torch.testing.assert_close(a.grad, torch.ones(64, 12) @ b.t())


def test_log_says_which_config_ran(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("TILEC_LOG", "1")
    m = fake_module(tmp_path)
    m.matmul(*_operands(40, 32, 32))
    m.matmul(*_operands(40, 32, 32))
    err = capsys.readouterr().err
    assert err.count("40x32x32 on table 'default': config 1 32x32x32") == 1
    assert "why: test rule: large M" in err and "M % 32 == 0 fails" in err
    assert "-> variant assuming N % 32 == 0 and K % 32 == 0" in err


def test_card_table_is_chosen_by_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    lib = fake_library()
    h200 = {**lib.tables["default"], "grid": [0] * len(lib.tables["default"]["grid"])}
    lib.tables["h200"] = h200
    monkeypatch.setenv("TILEC_CARD", "h200")
    m = import_module(module_text(lib, built="test"), tmp_path, "cards")
    assert m.card() == "h200" and "config 0" in m.explain(4096, 64, 64)
    monkeypatch.setenv("TILEC_CARD", "h100")  # no table of its own: the default one
    m2 = import_module(module_text(lib, built="test"), tmp_path, "cards2")
    assert m2.card() == "default" and "config 1" in m2.explain(4096, 64, 64)


def test_module_runs_without_tilec(tmp_path: Path) -> None:
    lib = fake_library(name="standalone")
    (tmp_path / "standalone.py").write_text(module_text(lib, built="test"))
    code = (
        "import sys, importlib.abc\n"
        "class Block(importlib.abc.MetaPathFinder):\n"
        "    def find_spec(self, name, path, target=None):\n"
        "        if name == 'tilec' or name.startswith('tilec.'):\n"
        "            raise ImportError('tilec is not installed here')\n"
        "sys.meta_path.insert(0, Block())\n"
        "import torch, standalone\n"
        "a, b = torch.randn(9, 20), torch.randn(20, 3)\n"
        "assert torch.allclose(standalone.matmul(a, b), a @ b, atol=1e-5)\n"
        "assert 'tilec' not in sys.modules\n"
        "print('ok')\n")
    env = dict(os.environ, TRITON_INTERPRET="1", TILEC_CACHE=str(tmp_path / "c"),
               PYTHONPATH=str(tmp_path))
    res = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)
    assert res.returncode == 0, res.stderr
    assert res.stdout.strip() == "ok"


def _counting(m, monkeypatch: pytest.MonkeyPatch) -> list:
    """Count the module's checked calls (its _run), leaving what they do unchanged."""
    seen: list = []
    inner = m._run

    def run(a, b, out):
        seen.append((tuple(a.shape), tuple(b.stride())))
        return inner(a, b, out)

    monkeypatch.setattr(m, "_run", run)
    return seen


@pytest.mark.parametrize("layout", ["kn", "nk"])
def test_a_call_like_a_checked_one_skips_the_checks(tmp_path: Path, layout: str,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    m = fake_module(tmp_path, layout=layout)
    checked = _counting(m, monkeypatch)
    for M, N, K in ((17, 33, 8), (64, 48, 32)):
        for seed in range(3):  # new tensors each time: same key, other addresses
            a, b = _operands(M, N, K, layout, seed=seed)
            torch.testing.assert_close(m.matmul(a, b), (a.double() @ b.double()).float())
            out = torch.full((M, N), float("nan"))
            assert m.matmul(a, b, out=out) is out
            torch.testing.assert_close(out, (a.double() @ b.double()).float())
            x = torch.randn(2, M, K)  # leading dimensions, flattened and restored
            torch.testing.assert_close(m.matmul(x, b), (x.double() @ b.double()).float())
    # one checked call per (shape, with or without out, 2-D or 3-D); the rest took the fast path
    assert len(checked) == 2 * 3
    assert m.stats()["calls"] == 2 * 3 * 3 and m.stats()["copies"] == 0


def test_the_fast_path_key_holds_strides_dtype_and_device(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A call that differs from a checked one only in strides, dtype, device or addresses is
    checked again: each gets the checked path's copy or error, never the earlier decision."""
    m = fake_module(tmp_path)
    checked = _counting(m, monkeypatch)
    a, b = _operands(8, 4, 16)
    out = torch.empty(8, 4)
    m.matmul(a, b)
    m.matmul(a, b, out=out)
    assert len(checked) == 2
    # strides: b of the same shape stored column-major is copied (and correct), not read as is
    bt = torch.randn(4, 16).t()
    torch.testing.assert_close(m.matmul(a, bt), a @ bt)
    assert m.stats()["copies"] == 1 and len(checked) == 3
    # out of the same shape with other strides: refused as it was the first time
    _bad(m, a, b, torch.empty(4, 8).t(), match=r"out .*strides \(1, 8\).* must be contiguous")
    # dtype
    _bad(m, a.double(), b, match=r"a \(shape \(8, 16\), strides \(16, 1\), torch.float64")
    _bad(m, a, b, torch.empty(8, 4, dtype=torch.float64), match="out .*must be torch.float32")
    # device
    _bad(m, a, torch.empty(16, 4, device="meta"), match="a and b must be on one device")
    # addresses: a base that is not 16-byte aligned (same shape and strides) is copied
    buf = torch.randn(8 * 16 + 1)
    a1 = buf[1:].view(8, 16)
    assert a1.stride() == a.stride() and a1.data_ptr() % 16
    before = m.stats()["copies"]
    torch.testing.assert_close(m.matmul(a1, b), a1 @ b)
    assert m.stats()["copies"] == before + 1
    # ... and an out overlapping an operand of a key that ran with a disjoint out
    big = torch.randn(8 * 16 + 64)
    m.matmul(big[:128].view(8, 16), b, out=big[128:160].view(8, 4))
    _bad(m, big[:128].view(8, 16), b, big[96:128].view(8, 4), match="out overlaps a in memory")
    # the environment: off CUDA only under the interpreter, read again per call
    monkeypatch.delenv("TRITON_INTERPRET")
    _bad(m, a, b, match=r"a \(.*cpu\) must be on a CUDA device")
    _bad(m, a, b, out, match=r"a \(.*cpu\) must be on a CUDA device")


def test_eager_autograd_goes_through_the_op(tmp_path: Path) -> None:
    """A kernel launch records no autograd: where a or b requires grad, matmul runs the op (its
    backward: torch.matmul), so the gradients are torch's; out= is refused as torch does."""
    m = fake_module(tmp_path)
    a, b = _operands(9, 5, 12)
    a.requires_grad_(True)
    b.requires_grad_(True)
    m.matmul(a, b).square().sum().backward()
    ra, rb = a.detach().clone().requires_grad_(True), b.detach().clone().requires_grad_(True)
    (ra @ rb).square().sum().backward()
    torch.testing.assert_close(a.grad, ra.grad)
    torch.testing.assert_close(b.grad, rb.grad)
    with pytest.raises(m.TilecError, match="out= takes no part in autograd, but a requires"):
        m.matmul(a, b, out=torch.empty(9, 5))
    with torch.no_grad():  # no graph wanted: the kernel itself
        assert m.matmul(a, b).grad_fn is None


def test_state_clear_forgets_everything(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Everything the module remembers lives in one object whose clear() empties every field
    (read from the object, so a field added later is covered), after which a call is checked
    and dispatched again, as in a fresh process."""
    m = fake_module(tmp_path)
    checked = _counting(m, monkeypatch)
    monkeypatch.setattr(m, "_LOG", True)
    a, b = _operands(17, 33, 8)
    for _ in range(2):
        m.matmul(a, b)
    m.explain(17, 33, 8)
    state = m._STATE
    fields = [f for f in state.__slots__ if f != "libs"]  # libs: a CUDA module's launchers
    assert m.TARGET == "triton" and "libs" in state.__slots__
    filled = [f for f in fields if getattr(state, f)]
    assert set(filled) == set(fields), f"the calls left {set(fields) - set(filled)} empty"
    state.clear()
    for f in fields:
        value = getattr(state, f)
        assert not value or (isinstance(value, dict) and not any(value.values())), f
    assert len(checked) == 1
    torch.testing.assert_close(m.matmul(a, b), (a.double() @ b.double()).float())
    assert len(checked) == 2 and m.stats()["kernels_loaded"] == 1
    m.matmul(a, b)  # the fast path's bound look-up reads the cleared (same) table again
    assert len(checked) == 2 and m.stats()["calls"] == 2
