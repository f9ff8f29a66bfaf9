"""tilec: viz --sms -3."""

from __future__ import annotations

EXPECT = "usage", "argument --sms: must be a positive integer but got '-3'"
ARGV = ["viz", "{examples}/stream_k.py", "--sms", "-3"]
