"""The generated files' ``tilec_fastdiv`` (runtime.py: division by a run-time divisor as a
multiply-high, an add and a shift) against exact division: g++ compiles the host side of the
helpers the wgmma files start with, over edge values and random ones: divisors up to 2^31 - 1,
dividends up to 2^31 - 1 (``div``, ``mod``) and 2^63 - 1 (``div64``, ``mod64``)."""

from __future__ import annotations

import random
import shutil
import subprocess
from pathlib import Path

import pytest

from tilec.codegen.cuda.runtime import FASTDIV_HELPERS, INDEX_HELPERS

INT_MAX = 2**31 - 1
LONG_MAX = 2**63 - 1

HARNESS = INDEX_HELPERS + FASTDIV_HELPERS + r"""
#include <cstdio>
int main() {
  int d, n;
  long long n64;
  // per line: d n n64 -> floor(n / d) n % d d floor(n64 / d) n64 % d
  while (std::scanf("%d %d %lld", &d, &n, &n64) == 3) {
    const tilec_fastdiv f = tilec_fastdiv_of(d);
    std::printf("%d %d %d %lld %lld\n", f.div(n), f.mod(n), f.d, f.div64(n64), f.mod64(n64));
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


def dividends(d: int, rng: random.Random, top: int = INT_MAX) -> list[int]:
    """Around 0, around multiples of ``d`` (the remainders' edges), the largest below ``top``,
    random ones at every magnitude."""
    out = {0, 1, 2, d - 1, d, d + 1, top, top - 1, top - d + 1, top // d * d, top // d * d - 1}
    for _ in range(12):
        q = rng.randint(0, top // d)
        out |= {q * d - 1, q * d, q * d + 1, q * d + d - 1}
    for _ in range(12):
        out.add(rng.randint(0, 2 ** rng.randint(1, top.bit_length()) - 1))
    return sorted(n for n in out if 0 <= n <= top)


def cases(rng: random.Random, count: int | None = None) -> list[tuple[int, int, int]]:
    """(d, n < 2^31, n64 < 2^63) triples over :func:`divisors` and :func:`dividends`."""
    out = []
    for d in divisors(rng)[:count]:
        small, large = dividends(d, rng), dividends(d, rng, LONG_MAX)
        out += [(d, small[i % len(small)], large[i % len(large)])
                for i in range(max(len(small), len(large)))]
    return out


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


def run(exe: Path, triples: list[tuple[int, int, int]]) -> list[tuple[int, ...]]:
    stdin = "".join(f"{d} {n} {n64}\n" for d, n, n64 in triples)
    out = subprocess.run([str(exe)], input=stdin, capture_output=True, text=True, check=True).stdout
    return [tuple(int(x) for x in line.split()) for line in out.splitlines()]


def exact(d: int, n: int, n64: int) -> tuple[int, ...]:
    return (n // d, n % d, d, n64 // d, n64 % d)


def test_fastdiv_equals_exact_division(harness: Path) -> None:
    triples = cases(random.Random(20261128))
    got = run(harness, triples)
    assert len(got) == len(triples)
    wrong = [(t, g) for t, g in zip(triples, got, strict=True) if g != exact(*t)]
    assert not wrong, f"{len(wrong)} of {len(triples)} wrong, e.g. ((d, n, n64), got) = {wrong[:5]}"


@pytest.mark.parametrize("which, wrong", [
    (slice(0, 2), ("f.mul = (unsigned)(q1 + 1 - (1ull << 32));", "f.mul = (unsigned)(q1 - (1ull << 32));")),
    (slice(3, 5), ("/ (unsigned long long)d + 1;  // mod 2^64", "/ (unsigned long long)d;  // mod 2^64")),
])
def test_fastdiv_a_wrong_multiplier_is_caught(harness: Path, which: slice,
                                              wrong: tuple[str, str]) -> None:
    """The test above can fail: the same division with a multiplier one too small (the
    rounding Granlund & Montgomery's m needs), 32- or 64-bit, is wrong somewhere in these
    values."""
    src = HARNESS.replace(*wrong)
    assert src != HARNESS
    exe = harness.with_name(f"fastdiv_off{which.start}")
    exe.with_suffix(".cpp").write_text(src)
    subprocess.run([shutil.which("g++") or "g++", "-O2", "-std=c++17", str(exe.with_suffix(".cpp")),
                    "-o", str(exe)], check=True)
    triples = cases(random.Random(7), 200)
    got = run(exe, triples)
    assert any(g[which] != exact(*t)[which] for t, g in zip(triples, got, strict=True))
