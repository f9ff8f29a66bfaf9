"""The generated files' ``tilec_fastdiv`` (runtime.py: division by a run-time divisor as a
multiply-high, an add and a shift) against exact division: g++ compiles the host side of the
helpers every generated file starts with, over edge values and random ones up to 2^31 - 1."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from tilec.codegen.cuda.runtime import FASTDIV_HELPERS, INDEX_HELPERS

INT_MAX = 2**31 - 1

HARNESS = INDEX_HELPERS + FASTDIV_HELPERS + r"""
#include <cstdio>
int main() {
  int d, n;
  // per line: d n -> floor(n / d) n % d (and the divisor back, as the struct keeps it)
  while (std::scanf("%d %d", &d, &n) == 2) {
    const tilec_fastdiv f = tilec_fastdiv_of(d);
    std::printf("%d %d %d\n", f.div(n), f.mod(n), f.d);
  }
  return 0;
}
"""


def divisors(rng: random.Random) -> list[int]:
    """Edge divisors (1, small, powers of two and their neighbours, the largest) and random ones
    at every magnitude."""
    out = {1, 2, 3, 5, 6, 7, 9, 10, 11, 66, 132, 641, 6700417, INT_MAX, INT_MAX - 1,
           (INT_MAX + 1) // 3, 46341}
    for b in range(1, 31):
        out |= {2**b - 1, 2**b, 2**b + 1}
    for _ in range(300):
        out.add(rng.randint(1, 2 ** rng.randint(1, 31) - 1))
    return sorted(out)


def dividends(d: int, rng: random.Random) -> list[int]:
    """Around 0, around multiples of ``d`` (the remainders' edges), the largest, random."""
    out = {0, 1, 2, d - 1, d, d + 1, INT_MAX, INT_MAX - 1, INT_MAX - d + 1, INT_MAX // d * d,
           INT_MAX // d * d - 1}
    for _ in range(12):
        q = rng.randint(0, INT_MAX // d)
        out |= {q * d - 1, q * d, q * d + 1, q * d + d - 1}
    for _ in range(12):
        out.add(rng.randint(0, INT_MAX))
    return sorted(n for n in out if 0 <= n <= INT_MAX)


@pytest.fixture(scope="module")
def harness(tmp_path_factory: pytest.TempPathFactory) -> Path:
    gxx = shutil.which("g++")
    if gxx is None:
        pytest.skip("g++ not found")
    d = tmp_path_factory.mktemp("fastdiv")
    (d / "fastdiv.cpp").write_text(HARNESS)
    exe = d / "fastdiv"
    proc = subprocess.run([gxx, "-O2", "-std=c++17", "-Wall", "-Wextra", "-Werror",
                           str(d / "fastdiv.cpp"), "-o", str(exe)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    return exe


def run(exe: Path, pairs: list[tuple[int, int]]) -> list[tuple[int, int, int]]:
    stdin = "".join(f"{d} {n}\n" for d, n in pairs)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout
    return [tuple(int(x) for x in line.split()) for line in out.splitlines()]


def test_fastdiv_equals_exact_division(harness: Path) -> None:
    rng = random.Random(20261128)
    pairs = [(d, n) for d in divisors(rng) for n in dividends(d, rng)]
    got = run(harness, pairs)
    assert len(got) == len(pairs)
    wrong = [(d, n, g) for (d, n), g in zip(pairs, got, strict=True) if g != (n // d, n % d, d)]
    assert not wrong, f"{len(wrong)} of {len(pairs)} wrong, e.g. (d, n, got) = {wrong[:5]}"


def test_fastdiv_a_wrong_multiplier_is_caught(harness: Path) -> None:
    """The test above can fail: the same division with the multiplier one too small (the
    rounding Granlund & Montgomery's m needs) is wrong somewhere in these values."""
    exe = harness.with_name("fastdiv_off")
    src = HARNESS.replace("+ 1 - (1ull << 32));", "- (1ull << 32));")
    assert src != HARNESS
    exe.with_suffix(".cpp").write_text(src)
    subprocess.run([shutil.which("g++") or "g++", "-O2", "-std=c++17", str(exe.with_suffix(".cpp")),
                    "-o", str(exe)], check=True)
    rng = random.Random(7)
    pairs = [(d, n) for d in divisors(rng)[:200] for n in dividends(d, rng)]
    got = run(exe, pairs)
    assert any(g[:2] != (n // d, n % d) for (d, n), g in zip(pairs, got, strict=True))
