"""Test-wide settings: every cache tilec keeps on disk (multicast JSON, generated Triton files,
autotune results) goes to a fresh directory per test session, so no run reuses another's."""

from __future__ import annotations

import os
import tempfile

if "TILEC_CACHE" not in os.environ or os.environ.get("CI"):
    os.environ["TILEC_CACHE"] = tempfile.mkdtemp(prefix="tilec-test-cache-")
