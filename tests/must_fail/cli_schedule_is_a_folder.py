"""tilec: a folder where a schedule file belongs."""

from __future__ import annotations

from tilec.errors import ScheduleFileError

EXPECT = ScheduleFileError, "sub' is not a file"
FILES = {"sub/x.py": "PARAMS = {}\n"}
ARGV = ["show", "{tmp}/sub"]
