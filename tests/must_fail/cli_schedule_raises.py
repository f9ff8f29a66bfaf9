"""tilec: a schedule whose own code raises."""

from __future__ import annotations

from tilec.errors import ScheduleFileError

EXPECT = ScheduleFileError, "bad.py:5: ZeroDivisionError: integer division or modulo by zero"
FILES = {
    "bad.py": "PARAMS = dict(N=1)\n\n\ndef schedule(N):\n    return 1 // (N - 1)\n",
}
ARGV = ["masks", "{tmp}/bad.py"]
