"""The documented commands work as documented (issue 29: docs that cannot go stale).

Every fenced block of README.md, docs/tutorial.md and docs/cli.md that a marker comment precedes
is run here, in a temporary directory (with ``examples/`` linked in and a private ``TILEC_CACHE``,
so no tuned record of this machine changes a note), on the CPU:

* ``<!-- output -->``: a transcript, ``$ command`` lines each followed by the output pasted
  under it (stdout and stderr as they come, ``2>&1``). Each command runs in ``bash``, in order
  (a later command may use a file an earlier one wrote), and its output must equal the pasted
  one after :func:`normalise` (the temporary directory, float timings);
* ``<!-- output: no-gpu -->``: the same, run only where torch sees no GPU (the "needs a CUDA
  GPU" errors);
* ``<!-- output: gpu -->``: pasted from a GPU run and **not run** here: :data:`GPU_ONLY` lists
  the commands that need one, and a command of that list must not sit in a block that runs;
* ``<!-- commands -->``: commands without pasted output (README's short examples): each must
  exit 0, except the ones of :data:`GPU_ONLY`, which are skipped.

``TILEC_UPDATE_DOCS=1 python -m pytest -q tests/docs`` rewrites the pasted outputs in place
with what the commands print today (other helpers change gen's, masks' and explain's output:
refresh, read the diff, commit).
"""

from __future__ import annotations

import difflib
import os
import re
import shlex
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = {"readme": ROOT / "README.md", "tutorial": ROOT / "docs" / "tutorial.md",
        "cli": ROOT / "docs" / "cli.md"}
UPDATE = os.environ.get("TILEC_UPDATE_DOCS") == "1"

# Commands that need a GPU or the CUDA toolkit, never run here (prefixes of the command line):
GPU_ONLY = {
    "tilec bench": "times kernels on a CUDA GPU",
    "tilec tune": "times kernels on a CUDA GPU (tilec tune --dry-run does run)",
    "nvcc": "the CUDA toolkit's compiler (slow here; its ptxas messages vary by version)",
}
# Documented commands that main breaks today, with why: the step still runs; while it fails the
# test is an expected failure naming it, and once it works the test fails until it is removed here.
KNOWN_BROKEN: dict[str, str] = {}  # command -> why (main at ada8f98 had gen --target cuda)
MARKER = re.compile(r"^<!-- (output|output: gpu|output: no-gpu|commands) -->\s*$")


@dataclass
class Step:
    """One command of a block and the output pasted under it (lines)."""

    command: str
    expected: list[str]
    first: int  # line index of the expected output's first line in the doc
    end: int  # line index past the expected output (trailing blank lines excluded)


@dataclass
class Block:
    kind: str  # output | output: gpu | output: no-gpu | commands
    start: int  # line index of the opening fence
    steps: list[Step] = field(default_factory=list)


def parse(text: str) -> list[Block]:
    """The marked blocks of a markdown text."""
    lines = text.split("\n")
    blocks = []
    i = 0
    while i < len(lines):
        m = MARKER.match(lines[i])
        if not m:
            i += 1
            continue
        assert lines[i + 1].startswith("```"), f"line {i + 2}: a marker must precede a fence"
        start = i + 1
        close = next(j for j in range(start + 1, len(lines)) if lines[j].startswith("```"))
        block = Block(m.group(1), start)
        body = lines[start + 1:close]
        if block.kind == "commands":
            block.steps = [Step(line.split("  #")[0].strip(), [], 0, 0) for line in body
                           if line.strip() and not line.lstrip().startswith("#")]
        else:
            block.steps = _transcript(body, start + 1)
        blocks.append(block)
        i = close + 1
    return blocks


def _transcript(body: list[str], offset: int) -> list[Step]:
    steps: list[Step] = []
    i = 0
    while i < len(body):
        assert body[i].startswith("$ "), f"line {offset + i + 1}: a transcript starts with '$ '"
        command = body[i][2:]
        while not _complete(command):  # a quoted argument over several lines
            i += 1
            command += "\n" + body[i]
        i += 1
        first = i
        while i < len(body) and not body[i].startswith("$ "):
            i += 1
        end = i
        while end > first and not body[end - 1].strip():
            end -= 1
        steps.append(Step(command, body[first:end], offset + first, offset + end))
    return steps


def _complete(command: str) -> bool:
    try:
        shlex.split(command)
    except ValueError:
        return False
    return True


def gpu_only(command: str) -> str | None:
    """Why ``command`` is not run here (:data:`GPU_ONLY`), else None."""
    for prefix, why in GPU_ONLY.items():
        words = command.split()
        if command.startswith(prefix) and "--help" not in words and not (
                prefix == "tilec tune" and "--dry-run" in words):
            return why
    return None


def has_gpu() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return torch.cuda.is_available()


def normalise(text: str, tmp: Path) -> str:
    """What may differ between runs: the temporary directory and the repository's place, float
    timings (``1.2 s``, ``0.1807 ms``), trailing blanks."""
    text = text.replace(str(tmp) + "/", "").replace(str(tmp), ".")
    text = text.replace(str(ROOT) + "/", "")
    text = re.sub(r"\b\d+\.\d+ ?(ms|s)\b", r"<t> \1", text)
    return "\n".join(line.rstrip() for line in text.rstrip("\n").split("\n"))


def run(command: str, cwd: Path) -> tuple[int, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1", "COLUMNS": "100",
           "TILEC_CACHE": str(cwd / ".tilec-cache"), "TILEC_PROGRESS": "0",
           "PATH": os.pathsep.join([str(cwd / ".bin"), str(Path(sys.executable).parent),
                                    os.environ.get("PATH", "")])}
    env.pop("TRITON_INTERPRET", None)  # the docs say where they set it
    p = subprocess.run(["bash", "-c", command + " 2>&1"], cwd=cwd, env=env, text=True,
                       stdout=subprocess.PIPE, timeout=600, check=False)
    return p.returncode, p.stdout


def workdir(tmp: Path) -> Path:
    """A directory like the repository root: examples/ and docs/img/ (for viz -o)."""
    (tmp / "examples").symlink_to(ROOT / "examples")
    (tmp / "docs" / "img").mkdir(parents=True)
    # `tilec` is this checkout's command whether or not (or wherever) the package is installed
    shim = tmp / ".bin" / "tilec"
    shim.parent.mkdir()
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -c "
                    f"'from tilec.app.cli import entry; entry()' \"$@\"\n")
    shim.chmod(0o755)
    return tmp


@pytest.mark.parametrize("doc", sorted(DOCS))
def test_documented_commands(doc: str, tmp_path: Path) -> None:
    path = DOCS[doc]
    text = path.read_text()
    blocks = parse(text)
    assert blocks, f"{path.name}: no marked command block"
    cwd = workdir(tmp_path)
    gpu = has_gpu()
    failures: list[str] = []
    known: list[str] = []
    replace: list[tuple[int, int, list[str]]] = []
    for block in blocks:
        runs = block.kind in ("output", "commands") or (block.kind == "output: no-gpu" and not gpu)
        for step in block.steps:
            why = gpu_only(step.command)
            if block.kind == "output" and why:
                failures.append(f"{path.name}:{step.first}: {step.command!r} needs a GPU ({why}) "
                                f"but sits in a block that runs: mark it <!-- output: gpu -->")
                continue
            if not runs or (block.kind == "commands" and why):
                continue
            status, out = run(step.command, cwd)
            got = normalise(out, cwd)
            if block.kind == "commands":
                if status != 0:
                    failures.append(f"{path.name}: {step.command!r} exited {status}:\n{got}")
                continue
            want = "\n".join(step.expected)
            if step.command in KNOWN_BROKEN:
                if got == want:
                    failures.append(f"{path.name}: {step.command!r} works again: remove it from "
                                    f"KNOWN_BROKEN")
                else:
                    known.append(f"{step.command!r}: {KNOWN_BROKEN[step.command]}")
            elif "Traceback (most recent call last)" in got:  # never pasted into the docs
                failures.append(f"{path.name}:{step.first}: $ {step.command}\n{got}")
            elif got != want:
                if UPDATE:
                    replace.append((step.first, step.end, got.split("\n") if got else []))
                else:
                    diff = "\n".join(difflib.unified_diff(
                        step.expected, got.split("\n"), "pasted", "printed today", lineterm=""))
                    failures.append(f"{path.name}:{step.first}: $ {step.command}\n{diff}")
    if replace:
        lines = text.split("\n")
        for first, end, new in sorted(replace, reverse=True):
            lines[first:end] = new
        path.write_text("\n".join(lines))
    assert not failures, (
        "documented commands do not print what the docs paste (refresh with "
        "TILEC_UPDATE_DOCS=1 python -m pytest -q tests/docs, then read the diff):\n\n"
        + "\n\n".join(failures))
    if known:
        pytest.xfail("known broken in main: " + "; ".join(known))


def test_parse_a_transcript() -> None:
    """The parser itself: commands over several lines, outputs, blank lines between steps."""
    doc = "\n".join(["text", "<!-- output -->", "```", "$ tilec gen x.py -o k.py", "wrote k.py",
                     "", "$ python -c \"", "print(1)", "\"", "1", "```", "<!-- commands -->",
                     "```bash", "tilec show x.py   # a comment", "```"])
    out, cmds = parse(doc)
    assert [(s.command, s.expected) for s in out.steps] == [
        ("tilec gen x.py -o k.py", ["wrote k.py"]), ('python -c "\nprint(1)\n"', ["1"])]
    assert [s.command for s in cmds.steps] == ["tilec show x.py"]
    assert gpu_only("tilec bench examples/my_gemm.py") and not gpu_only("tilec gen x.py")
