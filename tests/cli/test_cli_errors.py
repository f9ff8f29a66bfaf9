"""The ``tilec`` command's error handling beyond one program per mistake (tests/must_fail):
closed pipes, outputs that are never partial, one-line messages, and option choices that are the
policy enums' values."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tilec.app.cli import build_parser, main
from tilec.transforms.pipeline import Target
from tilec.transforms.plan import MulticastMode

ROOT = Path(__file__).resolve().parents[2]
BASIC = str(ROOT / "examples" / "gemm_basic.py")


def test_a_closed_pipe_ends_quietly() -> None:
    """`tilec show ... | head`: the reader is gone before tilec writes; no traceback."""
    p = subprocess.Popen([sys.executable, "-c", "from tilec.app.cli import entry; entry()", "show",
                          BASIC], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT)
    assert p.stdout is not None and p.stderr is not None
    p.stdout.close()  # like `head` exiting at once
    err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 141, err
    assert err == ""


def test_an_output_is_never_partial(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "k.py"
    out.write_text("the old kernel\n")
    # a failure while the output is put in place leaves the old file and no temporary file
    import tilec.app.cli

    def fail(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(tilec.app.cli.os, "replace", fail)
    assert main(["gen", BASIC, "-o", str(out)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"tilec: error: cannot write {str(out)!r}: No space left on device"]
    assert out.read_text() == "the old kernel\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.py"]
    monkeypatch.undo()
    # an error before the write leaves the old file too
    assert main(["gen", BASIC, "--param", "BM=96", "-o", str(out)]) == 2
    assert out.read_text() == "the old kernel\n"
    # a success replaces it, with the mode a plain open() would give
    assert main(["gen", BASIC, "-o", str(out)]) == 0
    assert "@triton.jit" in out.read_text()
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    assert sorted(p.name for p in tmp_path.iterdir()) == ["k.py"]


def test_a_multi_line_message_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def schedule():\n    raise ValueError('first\\nsecond')\n")
    assert main(["show", str(bad)]) == 2
    assert capsys.readouterr().err.splitlines() == [
        f"tilec: error: {bad}:2: ValueError: first second"]


def test_option_choices_are_the_policy_values() -> None:
    """--target and --mode list the enums' values (kept as strings: the command must not import
    sympy before a cache hit), so the two cannot drift apart."""
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    for name, parser in sub.choices.items():  # type: ignore[union-attr]
        for action in parser._actions:
            if action.dest == "target":
                assert action.choices == Target.values(), name
            if action.dest == "mode":  # check also takes 'both' (it tests either mode)
                extra = ["both"] if name == "check" else []
                assert action.choices == [*MulticastMode.values(), *extra], name
