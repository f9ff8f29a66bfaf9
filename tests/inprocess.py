"""``tilec ARGV`` run in this process from the repository root, its output captured: what the
golden outputs and the CLI-facing tests compare."""

from __future__ import annotations

import contextlib
import io
import os
from pathlib import Path

from tilec.app.cli import main

ROOT = Path(__file__).resolve().parents[1]


def tilec(argv: list[str]) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of ``tilec ARGV`` run from the repository root."""
    so, se = io.StringIO(), io.StringIO()
    cwd = os.getcwd()
    os.chdir(ROOT)
    try:
        with contextlib.redirect_stdout(so), contextlib.redirect_stderr(se):
            rc = main(argv)
    finally:
        os.chdir(cwd)
    return rc, so.getvalue(), se.getvalue()
