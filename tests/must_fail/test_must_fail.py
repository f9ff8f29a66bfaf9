"""Runs the programs that must fail (Halide's habit): every other ``*.py`` in this folder is one
small program that makes one mistake, and says what tilec must answer::

    EXPECT = AxisNameError, "C: split: names of axis 0 (iS.M{256}) must be two strings ..."

A Python-API program defines ``program()``; a command-line program defines ``ARGV`` (and
``FILES``: schedule files written to a fresh folder first; ``{tmp}`` and ``{examples}`` in ARGV
name that folder and examples/). Checked here:

* ``program()`` raises exactly the class (not a parent, not a subclass) with the words in its
  message;
* ``tilec ARGV --debug`` raises the same; ``tilec ARGV -o OUT`` returns 2 and prints exactly one
  line, ``tilec: error: <the words ...>``, on stderr, nothing on stdout and no traceback, and
  leaves neither OUT nor a temporary file behind;
* ``EXPECT = "usage", words``: a usage error of the argument parser (exit 2, the same one line);
* every program and its words are in docs/errors.md (the catalogue matches the code).
"""

from __future__ import annotations

import importlib
from pathlib import Path
from types import ModuleType

import pytest

from tilec.app.cli import main
from tilec.errors import TilecError

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
PROGRAMS = sorted(p.stem for p in HERE.glob("*.py") if p.stem != "__init__"
                  and not p.stem.startswith("test_"))


def load(name: str) -> ModuleType:
    return importlib.import_module(f"tests.must_fail.{name}")


def argv(module: ModuleType, tmp: Path) -> list[str]:
    for fname, text in getattr(module, "FILES", {}).items():
        (tmp / fname).parent.mkdir(parents=True, exist_ok=True)
        (tmp / fname).write_text(text)
    return [a.format(tmp=tmp, examples=ROOT / "examples") for a in module.ARGV]


def test_the_folder_holds_programs() -> None:
    assert len(PROGRAMS) >= 60
    for name in PROGRAMS:
        m = load(name)
        assert m.__doc__, name
        assert hasattr(m, "program") != hasattr(m, "ARGV"), name  # one or the other


@pytest.mark.parametrize("name", PROGRAMS)
def test_program_fails_as_expected(name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                   monkeypatch: pytest.MonkeyPatch) -> None:
    m = load(name)
    cls, words = m.EXPECT
    if hasattr(m, "program"):
        with pytest.raises(TilecError) as e:
            m.program()
        assert type(e.value) is cls, (type(e.value), cls)
        assert words in str(e.value)
        return
    monkeypatch.chdir(tmp_path)  # relative outputs (viz's default name) land here too
    args = argv(m, tmp_path)
    before = set(tmp_path.rglob("*"))
    if cls == "usage":
        with pytest.raises(SystemExit) as ex:
            main(args)
        status = ex.value.code
    else:
        with pytest.raises(TilecError) as e:
            main([*args, "--debug"])
        assert type(e.value) is cls, (type(e.value), cls)
        assert words in str(e.value)
        capsys.readouterr()
        out = tmp_path / "out.txt"
        status = main(args if "-o" in args else [*args, "-o", str(out)])
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert status == 2
    assert len(lines) == 1 and lines[0].startswith("tilec: error: "), captured.err
    assert words in lines[0] and "Traceback" not in captured.err
    assert captured.out == ""
    assert set(tmp_path.rglob("*")) == before  # no output, no temporary file left behind


def test_every_program_is_in_the_catalogue() -> None:
    doc = (ROOT / "docs" / "errors.md").read_text()
    for name in PROGRAMS:
        words = load(name).EXPECT[1]
        assert f"`{name}`" in doc, f"docs/errors.md does not name tests/must_fail/{name}.py"
        assert words in doc, f"docs/errors.md lacks the message of {name}: {words}"
