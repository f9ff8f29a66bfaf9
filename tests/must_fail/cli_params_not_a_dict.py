"""tilec: PARAMS that is not a dict."""

from __future__ import annotations

from tilec.errors import ScheduleFileError

EXPECT = ScheduleFileError, "plist.py: PARAMS must be a dict of parameter names to defaults (PARAMS = dict(M=1024, ...)) but got [1024, 1024]"
FILES = {
    "plist.py": "PARAMS = [1024, 1024]\n\n\ndef schedule(M=1, N=1):\n    return None\n",
}
ARGV = ["show", "{tmp}/plist.py"]
