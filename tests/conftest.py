"""Test-wide settings: every cache tilec keeps on disk (multicast JSON, generated Triton files,
autotune results) goes to a fresh directory per test session, so no run reuses another's; and
Triton's CPU interpreter is on before any test module imports Triton (a ``@triton.jit`` made
before ``TRITON_INTERPRET=1`` is a compiled kernel, which the interpreter then refuses to call:
"Cannot call @triton.jit'd outside of the scope of a kernel", when tests/simt ran before
tests/examples). A value the user set is kept."""

from __future__ import annotations

import os
import tempfile

if "TILEC_CACHE" not in os.environ or os.environ.get("CI"):
    os.environ["TILEC_CACHE"] = tempfile.mkdtemp(prefix="tilec-test-cache-")

os.environ.setdefault("TRITON_INTERPRET", "1")
