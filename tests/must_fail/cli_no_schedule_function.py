"""tilec: a file without schedule()."""

from __future__ import annotations

from tilec.errors import ScheduleFileError

EXPECT = ScheduleFileError, "nofn.py: a schedule file must define schedule(**params) -> GemmFusion"
FILES = {
    "nofn.py": "PARAMS = {}\n",
}
ARGV = ["show", "{tmp}/nofn.py"]
