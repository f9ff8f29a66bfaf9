"""tilec: a value that is not true/false for a bool parameter."""

from __future__ import annotations

from tilec.errors import ParamError

EXPECT = ParamError, "flag.py: parameter WIDE must be true or false (its default is False) but got 2"
FILES = {
    "flag.py": "from tilec.ir import GemmFusion\n\nPARAMS = dict(WIDE=False)\n\n\ndef schedule(WIDE):\n    return GemmFusion(256, 512 if WIDE else 256, 64)\n",
}
ARGV = ["show", "{tmp}/flag.py", "--param", "WIDE=2"]
