"""tilec: a schedule file that does not exist."""

from __future__ import annotations

from tilec.errors import ScheduleFileError

EXPECT = ScheduleFileError, "nope.py' does not exist"
ARGV = ["show", "{tmp}/nope.py"]
