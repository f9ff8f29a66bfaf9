"""``tilec check``: a verdict per operand, exit 0 when tilec agrees with the brute force, 1 with
the launch and CTA where it does not (a launch's own forms, or a proved form at another launch
meeting its facts), 2 on a user error; one line for a schedule with nothing to multicast."""

from __future__ import annotations

import dataclasses
import json
import re
from pathlib import Path

import pytest
import sympy

import tilec.app.commands.check as check_cmd
import tilec.testing.brute as brute
import tilec.testing.launch as launch
from tilec.app.cli import main

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed004_persistent_cluster.py")
GROUPED = str(ROOT / "examples" / "grouped_raster.py")
MY_GEMM = str(ROOT / "examples" / "my_gemm.py")
RANK = sympy.Symbol("rank", integer=True, nonnegative=True)
FEW = ["--examples", "3", "--max-size", "40"]
TWO_BY_TWO = ["--param", "M=32", "--param", "BM=16", "--param", "N=32", "--param", "BN=16",
              "--param", "GROUP_M=1"]


def _corrupt(monkeypatch: pytest.MonkeyPatch, operand: str = "A") -> None:
    """tilec's derivation with ``operand``'s mask, closed or general, the rank's own bit."""
    real = launch.derive_at

    def wrong(path, params, mode="leader", cluster=None):
        d = real(path, params, mode, cluster)
        ops = dict(d.operands)
        op = ops[operand]
        closed = dataclasses.replace(op.closed, mask=2**RANK) if op.closed else None
        ops[operand] = dataclasses.replace(op, closed=closed)
        return dataclasses.replace(d, operands=ops)

    monkeypatch.setattr(launch, "derive_at", wrong)


def test_ok_with_a_verdict_per_operand(capsys) -> None:
    assert main(["check", SEED, *FEW, "--mode", "leader"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{SEED}: clusters of 2 CTAs; kept CM=2 CN=1 CLUSTER=2")
    assert out[1].startswith("A: ok, 3 launches, ") and out[2].startswith("B: ok, 3 launches, ")


def test_a_wrong_mask_fails_with_the_launch_and_the_cta(monkeypatch, capsys) -> None:
    _corrupt(monkeypatch, "A")
    # 2 x 2 tiles walked row by row: the two CTAs of a cluster share their tile row of A
    assert main(["check", GROUPED, "--cluster", "2", *FEW, "--mode", "leader", *TWO_BY_TWO]) == 1
    out = capsys.readouterr().out.splitlines()
    a = next(line for line in out if line.startswith("A: "))
    assert a.startswith("A: FAIL at M=32, N=32, K=") and "but needs 0b" in a and "leader mode" in a
    assert next(line for line in out if line.startswith("B: ")).startswith("B: no failure in")


def test_proved_forms_are_checked_at_other_launches(monkeypatch, capsys) -> None:
    """Pass 2 takes each proved form to launches drawn to meet its facts; it either holds there
    (the verdict says at how many) or the failure names the form's own launch. A proved form
    made wrong is caught at another launch, named as such."""
    from tilec.testing import holds

    monkeypatch.setattr(launch, "scope_of", lambda op: "general" if not op.closed_form else
                        "proved" if op.closed.proved else "launch")
    seen = []
    real_compare = brute.compare

    def spy(op, truth, params, mode, **kw):
        if kw.get("table") is False:
            seen.append((op, params, kw["source"]))
        return real_compare(op, truth, params, mode, **kw)

    monkeypatch.setattr(brute, "compare", spy)
    rc = main(["check", MY_GEMM, *FEW, "--mode", "leader"])
    out = capsys.readouterr().out.splitlines()
    assert seen and all(holds(op.facts, p) for op, p, _ in seen)
    assert all(src.startswith("proved form derived at M=") for _, _, src in seen)
    if rc == 0:
        assert any(re.fullmatch(
            r"[AB]: ok, 3 launches, .*(, held at all \d+ other launches meeting its facts|; "
            r"\d+ (proved|proved or narrowing) forms, each held wherever its facts did "
            r"\(\d+ launches\))", line)
            for line in out), out
    else:  # a proved form wrong elsewhere: what the pass is for
        assert rc == 1 and any(": FAIL at " in line and "(proved form derived at M=" in line
                               for line in out), out
    monkeypatch.setattr(brute, "compare", real_compare)
    # 2 x 2 tiles walked row by row (only K and BK drawn): A's closed form, taken as proved, holds
    # at every drawn launch, until pass 2 sees it corrupted
    monkeypatch.setattr(launch, "scope_of", lambda op: "general" if not op.closed_form else
                        "proved" if op.operand == "A" else "launch")
    run_proved = check_cmd._proved

    def proved_then_wrong(*args):
        _corrupt(monkeypatch, "A")
        return run_proved(*args)

    monkeypatch.setattr(check_cmd, "_proved", proved_then_wrong)
    assert main(["check", GROUPED, "--cluster", "2", *FEW, "--mode", "leader", "--json",
                 *TWO_BY_TWO]) == 1
    data = json.loads(capsys.readouterr().out)
    fail = data["operands"]["A"]["failure"]
    assert not data["ok"] and fail["source"].startswith("proved form derived at M=32 N=32 K=")
    assert (fail["field"], fail["got"], fail["needs"], fail["sound"]) == ("mask", 1, 3, False)


def test_json(capsys) -> None:
    assert main(["check", SEED, *FEW, "--mode", "sliced", "--json", "--seed", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["ok"] and data["cluster_size"] == 2 and data["mode"] == "sliced"
    assert data["kept"] == {"CM": 2, "CN": 1, "CLUSTER": 2} and data["seed"] == 3
    for name in ("A", "B"):
        op = data["operands"][name]
        assert op["ok"] and op["launches"] == 3 and sum(op["forms"].values()) == 3
        assert op["verdict"].startswith(f"{name}: ok, 3 launches")


@pytest.mark.parametrize("example", ["gemm_basic.py", "simt_sgemm.py"])
def test_nothing_multicast_is_one_line(example: str, capsys) -> None:
    assert main(["check", str(ROOT / "examples" / example)]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert len(out) == 1 and out[0].startswith("nothing is multicast: ")


def test_user_errors(capsys) -> None:
    assert main(["check", SEED, "--param", "NOPE=1"]) == 2
    assert "unknown parameter 'NOPE'" in capsys.readouterr().err
    assert main(["check", SEED, "--cluster", "4"]) == 2  # the seed binds RankX to CLUSTER=2
    err = capsys.readouterr().err.strip()
    assert err.startswith("tilec: error: cluster dim x is set to 4") and "\n" not in err
    # every drawn launch refused by the derivation: its reason, once
    assert main(["check", SEED, "--param", "DECOMP=splitk", "--examples", "2"]) == 2
    err = capsys.readouterr().err.strip()
    assert "tilec refused the first 10 drawn launches, e.g.: multicast needs the CTAs" in err
    with pytest.raises(SystemExit) as e:
        main(["check", SEED, "--cluster", "0,2"])
    assert e.value.code == 2
    assert "must be X[,Y[,Z]] of positive integers but got '0,2'" in capsys.readouterr().err


def test_progress_bar_on_stderr(monkeypatch, capsys) -> None:
    monkeypatch.setenv("TILEC_PROGRESS", "1")
    assert main(["check", SEED, "--examples", "2", "--max-size", "24", "--mode", "leader"]) == 0
    assert "launches: " in capsys.readouterr().err  # tqdm's bar, labelled


def test_the_command_table_imports_neither_sympy_nor_hypothesis() -> None:
    """Every tilec command imports the check command's module: it must stay light."""
    import subprocess
    import sys

    from tilec.testing.launch import CARRIED

    assert check_cmd.CARRIED == CARRIED
    r = subprocess.run([sys.executable, "-c", "import sys, tilec.app.cli; print("
                        "'sympy' in sys.modules, 'hypothesis' in sys.modules)"],
                       capture_output=True, text=True, cwd=ROOT, check=True)
    assert r.stdout.split() == ["False", "False"]
