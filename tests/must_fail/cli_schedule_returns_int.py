"""tilec: schedule() returns something else than a GemmFusion."""

from __future__ import annotations

from tilec.errors import ScheduleFileError

EXPECT = ScheduleFileError, "wrong.py: schedule() must return a GemmFusion but returned int"
FILES = {
    "wrong.py": "def schedule():\n    return 42\n",
}
ARGV = ["show", "{tmp}/wrong.py"]
