"""tilec: a schedule file with a syntax error."""

from __future__ import annotations

from tilec.errors import ScheduleFileError

EXPECT = ScheduleFileError, "syntax.py:1: SyntaxError: invalid syntax"
FILES = {
    "syntax.py": "def schedule(:\n",
}
ARGV = ["gen", "{tmp}/syntax.py"]
