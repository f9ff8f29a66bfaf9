"""tilec: a schedule file that is not a .py file."""

from __future__ import annotations

from tilec.errors import ScheduleFileError

EXPECT = ScheduleFileError, "sched.txt' must be a Python file (.py)"
FILES = {
    "sched.txt": "PARAMS = {}\n",
}
ARGV = ["show", "{tmp}/sched.txt"]
