"""The ``tilec`` command: help, the shared options, one-line user errors, --debug, outputs, and the
``masks --json`` schema of docs/cli.md."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import sympy

from tilec.app.cli import main
from tilec.errors import TilecError

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed004_persistent_cluster.py")
BASIC = str(ROOT / "examples" / "gemm_basic.py")
COMMANDS = ["show", "gen", "masks", "explain", "viz", "bench", "tune"]
HAS_GPU = False
try:
    import torch

    HAS_GPU = torch.cuda.is_available()
except ImportError:  # pragma: no cover
    pass


def _one_line_error(capsys: pytest.CaptureFixture[str]) -> str:
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("tilec: error: ") and "Traceback" not in captured.err
    return lines[0]


def test_help_lists_the_seven_subcommands() -> None:
    r = subprocess.run([sys.executable, "-c", "from tilec.app.cli import entry; entry()", "--help"],
                       capture_output=True, text=True, cwd=ROOT)
    assert r.returncode == 0
    listed = [line.split()[0] for line in r.stdout.splitlines()
              if line.startswith("    ") and line.split()[0] in COMMANDS]
    assert listed == COMMANDS


@pytest.mark.parametrize("cmd", COMMANDS)
def test_every_subcommand_takes_the_shared_options(cmd: str, capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main([cmd, "--help"])
    assert e.value.code == 0
    out = capsys.readouterr().out
    for opt in ("--param NAME=VALUE", "--json", "-o OUT, --output OUT", "--debug"):
        assert opt in out, (cmd, opt)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_bad_param_is_one_line(cmd: str, capsys) -> None:
    assert main([cmd, SEED, "--param", "CN"]) == 2
    assert _one_line_error(capsys) == (
        "tilec: error: --param must look like NAME=VALUE but got 'CN'")
    assert main([cmd, SEED, "--param", "NOPE=3"]) == 2
    assert "unknown parameter 'NOPE'" in _one_line_error(capsys)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_missing_file_is_one_line(cmd: str, capsys) -> None:
    assert main([cmd, "no_such_schedule.py"]) == 2
    assert _one_line_error(capsys) == (
        "tilec: error: schedule file 'no_such_schedule.py' does not exist")


@pytest.mark.parametrize("cmd", COMMANDS)
def test_debug_raises_before_or_after_the_subcommand(cmd: str) -> None:
    with pytest.raises(TilecError, match="does not exist"):
        main([cmd, "no_such_schedule.py", "--debug"])
    with pytest.raises(TilecError, match="does not exist"):
        main(["--debug", cmd, "no_such_schedule.py"])


def test_usage_error_is_one_line(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        main(["gen", BASIC, "--target", "ptx"])
    assert e.value.code == 2
    assert "invalid choice: 'ptx'" in _one_line_error(capsys)


@pytest.mark.parametrize("argv", [[SEED, "--param", "CLUSTER=1", "--param", "CM=1"], [BASIC]])
def test_masks_of_a_cluster_of_one_says_nothing_is_multicast(argv, tmp_path: Path) -> None:
    """No table of a cluster of one (tests/cli/test_masks_nothing_multicast.py has the rest)."""
    out = tmp_path / "m.json"
    assert main(["masks", *argv, "--json", "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert (data["cluster_size"], data["multicast"], data["operands"]) == (1, False, {})
    assert "no cluster" in data["reason"]


@pytest.mark.skipif(HAS_GPU, reason="checks the no-GPU error; this machine has a GPU")
@pytest.mark.parametrize("cmd", ["bench", "tune"])
def test_gpu_commands_without_gpu(cmd: str, capsys) -> None:
    assert main([cmd, BASIC]) == 2
    assert _one_line_error(capsys) == (
        f"tilec: error: {cmd} needs a CUDA GPU (torch.cuda.is_available() is False)")
    with pytest.raises(TilecError):
        main([cmd, BASIC, "--debug"])


def test_error_in_the_schedule_file_is_one_line(tmp_path: Path, capsys) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("PARAMS = dict(N=1)\n\ndef schedule(N):\n    return 1 // (N - 1)\n")
    assert main(["show", str(bad)]) == 2
    assert _one_line_error(capsys) == (
        f"tilec: error: {bad}:4: ZeroDivisionError: integer division or modulo by zero")
    (tmp_path / "syntax.py").write_text("def schedule(:\n")
    assert main(["gen", str(tmp_path / "syntax.py")]) == 2
    assert "syntax.py:1: SyntaxError" in _one_line_error(capsys)
    with pytest.raises(TilecError) as e:  # the traceback goes on into the schedule file
        main(["show", str(bad), "--debug"])
    assert isinstance(e.value.__cause__, ZeroDivisionError)


def test_gen_writes_the_file(tmp_path: Path, capsys) -> None:
    out = tmp_path / "k.py"
    assert main(["gen", BASIC, "--param", "M=256", "-o", str(out)]) == 0
    src = out.read_text()
    assert "@triton.jit" in src and "def run(a, b, out=None)" in src
    assert f"wrote {out}" in capsys.readouterr().err
    cu = tmp_path / "k.cu"
    # (a persistent schedule: the CUDA kernel needs its CTA count as a number)
    assert main(["gen", SEED, "--target", "cuda", "-o", str(cu)]) == 0
    assert "__global__" in cu.read_text()


def test_gen_json(capsys) -> None:
    assert main(["gen", BASIC, "--param", "M=256", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["target"] == "triton" and "def run(a, b, out=None)" in data["source"]
    assert isinstance(data["notes"], list)


def _symbols(op: dict, params: dict) -> dict[str, sympy.Symbol]:
    """The locals to read expressions back (N, S, E, I, Q are sympy names otherwise)."""
    return {v: sympy.Symbol(v, integer=True, nonnegative=True) for v in [*op["variables"], *params]}


def _check_op(op: dict, mode: str, cs: int, params: dict) -> None:
    assert set(op) == {"closed_form", "scope", "variables", "issue_predicate", "mask",
                       "slice_index", "slice_count", "facts", "would_prove", "why_launch",
                       "proof", "table"}
    assert isinstance(op["closed_form"], bool)
    assert op["scope"] in (("proved", "narrowing", "launch") if op["closed_form"] else (None,))
    assert op["scope"] != "launch" or op["facts"] == []
    assert all(isinstance(v, str) for v in op["variables"]) and "rank" in op["variables"]
    names = _symbols(op, params)
    issue = sympy.sympify(op["issue_predicate"], locals=names)
    mask = sympy.sympify(op["mask"], locals=names)
    assert isinstance(issue, sympy.logic.boolalg.Boolean)
    assert isinstance(mask, sympy.Expr)
    if mode == "sliced":
        sympy.sympify(op["slice_index"], locals=names)
        sympy.sympify(op["slice_count"], locals=names)
    else:
        assert op["slice_index"] is None and op["slice_count"] is None
    assert all(isinstance(f, str) for f in op["facts"])
    for f in op["facts"]:
        # each fact reads back as a condition, and holds at the parameters it was chosen at
        fact = sympy.sympify(f, locals=names)
        assert isinstance(fact, sympy.logic.boolalg.Boolean), f
        at = {names[k]: v for k, v in params.items() if k in names and isinstance(v, int)}
        assert fact.xreplace(at) is sympy.true, (f, params)
    for step in op["proof"]:
        assert set(step) == {"theorem", "before", "after"}
        assert all(isinstance(v, str) for v in step.values())
    assert op["table"]
    for row in op["table"]:
        assert set(row) == {"i_rt", "cidx", "rank", "alive", "issue", "mask", "slice_index",
                            "slice_count"}
        assert all(isinstance(row[k], int) and not isinstance(row[k], bool)
                   for k in ("i_rt", "cidx", "rank", "mask"))
        assert 0 <= row["rank"] < cs and 0 <= row["mask"] < 1 << cs
        assert isinstance(row["alive"], bool) and isinstance(row["issue"], bool)
        if mode == "sliced":
            assert isinstance(row["slice_index"], int) and isinstance(row["slice_count"], int)
        else:
            assert row["slice_index"] is None and row["slice_count"] is None


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_masks_json_schema(mode: str, tmp_path: Path, capsys) -> None:
    out = tmp_path / "masks.json"
    assert main(["masks", SEED, "--param", "CN=2", "--param", "CLUSTER=4", "--mode", mode,
                 "--json", "-o", str(out)]) == 0
    data = json.loads(out.read_text())
    assert set(data) == {"params", "cluster_size", "mode", "operands"}
    assert isinstance(data["params"], dict) and data["params"]["CN"] == 2
    assert data["cluster_size"] == 4 and data["mode"] == mode
    assert set(data["operands"]) == {"A", "B"}
    for op in data["operands"].values():
        _check_op(op, mode, 4, data["params"])
    # the closed forms read back by sympify agree with the table at every row
    for op in data["operands"].values():
        names = _symbols(op, data["params"])
        params = {names[k]: v for k, v in data["params"].items() if isinstance(v, int)}
        issue = sympy.sympify(op["issue_predicate"], locals=names).xreplace(params)
        mask = sympy.sympify(op["mask"], locals=names).xreplace(params)
        for row in op["table"][:64]:
            at = {names[v]: row[v] for v in op["variables"]}
            assert bool(issue.xreplace(at)) == row["issue"]
            assert int(mask.xreplace(at)) == row["mask"]


def test_explain_sections_and_json(capsys) -> None:
    dec = str(ROOT / "examples" / "gemm_decomposition.py")
    args = ["explain", dec, "--param", "M=512", "--param", "N=512", "--param", "K=65536"]
    assert main(args) == 0
    text = capsys.readouterr().out
    for title in ("parameters", "views", "tile order", "decomposition", "TMA multicast",
                  "coalescing"):
        assert f"== {title} ==" in text
    # the heuristic's reasons (the knobs are auto)
    assert "chosen: split-K S=16 with the reduce kernel" in text
    assert "DECOMP = splitk  (heuristic)" in text
    assert main([*args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    s = data["sections"]
    assert s["tile order"]["tiles_m"] == 4 and s["tile order"]["tiles_n"] == 2  # 128x256 tiles
    assert s["decomposition"]["kind"] == "splitk" and s["decomposition"]["splits"] == 16
    assert s["decomposition"]["fixup"] == "reduce_kernel"
    assert s["TMA multicast"]["applicable"] is False
    assert s["coalescing"]["applicable"] is False


def test_explain_coalescing_for_thread_level(capsys) -> None:
    naive = str(ROOT / "examples" / "coalescing_naive.py")
    assert main(["explain", naive, "--param", "M=256", "--param", "N=256", "--param", "K=64",
                 "--json"]) == 0
    s = json.loads(capsys.readouterr().out)["sections"]
    verdicts = {a["tensor"]: a["verdict"] for a in s["coalescing"]["accesses"]}
    assert verdicts == {"A": "uncoalesced", "B": "broadcast", "C": "uncoalesced"}
    assert s["tile order"]["applicable"] is False


def test_explain_multicast_seed(capsys) -> None:
    assert main(["explain", SEED, "--param", "CM=1", "--param", "CN=2"]) == 0
    text = capsys.readouterr().out
    assert "issue(rank) = Eq(Mod(rank, CN), 0)" in text
    assert "t = r * 132 + pid" in text


def test_explain_shows_the_proof_of_the_tile_coordinates(capsys) -> None:
    dec = str(ROOT / "examples" / "gemm_decomposition.py")
    assert main(["explain", dec, "--param", "M=4096", "--param", "N=4096", "--param", "K=4096",
                 "--json"]) == 0
    order = json.loads(capsys.readouterr().out)["sections"]["tile order"]
    for name in ("tile_m", "tile_n"):
        proof = order["proofs"][name]
        assert proof["result"] == order[name] and proof["input"] != proof["result"]
        assert any("[1.1]" in step for step in proof["steps"])  # the IR's split recombined


@pytest.mark.parametrize("argv", [
    [SEED], [str(ROOT / "examples" / "my_gemm.py"), "--param", "M=4096", "--param", "N=8192"],
    [SEED, "--param", "M=1000", "--param", "N=777"],
], ids=["seed", "tutorial", "seed-ragged"])
def test_masks_json_does_not_depend_on_the_hash_seed(tmp_path: Path, argv: list[str]) -> None:
    """Cold runs in processes with different hash seeds print the same derivation (a set's order
    once chose which divisor a closed form's block was printed with)."""
    outs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed,
               "TILEC_CACHE": str(tmp_path / f"cache{seed}")}
        r = subprocess.run([sys.executable, "-c", "from tilec.app.cli import entry; entry()",
                            "masks", *argv, "--json"], capture_output=True, text=True, cwd=ROOT,
                           env=env)
        assert r.returncode == 0, r.stderr
        outs.append(r.stdout)
    assert json.loads(outs[0])["operands"] and outs[0] == outs[1] == outs[2]
