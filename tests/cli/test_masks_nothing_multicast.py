"""``tilec masks`` on a schedule with nothing to multicast (a cluster of one CTA, a thread-level
SIMT schedule): one line (or a small JSON object) saying so and why, before any derivation or
table is built, quickly (``simt_sgemm.py`` once took 259 s to print 16,777,152 rows)."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tilec.app.cli import main

ROOT = Path(__file__).resolve().parents[2]
EX = ROOT / "examples"
NONE = {
    "simt_sgemm.py": [], "simt_warp_tiled.py": [], "coalescing_naive.py": [],
    "coalescing_coalesced.py": [], "gemm_basic.py": [], "grouped_raster.py": [],
    "seed004_persistent_cluster.py": ["--param", "CLUSTER=1", "--param", "CM=1"],
}


@pytest.fixture
def no_derivation(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any derivation or launch table fails the test."""
    from tilec.transforms.multicast import derive

    def refuse(*args: object, **kw: object) -> None:
        raise AssertionError("a multicast table was built")

    for name in ("derive", "launch_table", "derive_loaded"):
        monkeypatch.setattr(derive, name, refuse)


@pytest.mark.parametrize("example", sorted(NONE))
def test_one_line_and_no_table(example: str, no_derivation: None, capsys, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path))
    argv = ["masks", str(EX / example), *NONE[example]]
    assert main(argv) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("nothing is multicast: ")
    why = "thread-level (SIMT)" if example.startswith(("simt", "coalescing")) else "no cluster"
    assert why in lines[0]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["multicast"] is False and why in data["reason"] and data["operands"] == {}
    assert data["cluster_size"] == 1 and data["mode"] == "leader"


def test_a_cluster_is_still_derived(capsys) -> None:
    """The early exit does not swallow a schedule with a cluster."""
    assert main(["masks", str(EX / "seed004_persistent_cluster.py"), "--param", "M=512",
                 "--param", "N=512", "--param", "SMS=8"]) == 0
    out = capsys.readouterr().out
    assert "nothing is multicast" not in out and "operand A" in out and "operand B" in out


@pytest.mark.parametrize("example", ["simt_sgemm.py", "simt_warp_tiled.py", "coalescing_naive.py"])
def test_fast_from_the_command_line(example: str, tmp_path: Path) -> None:
    """A cold process, as a user runs it (1 s on the 2-core dev machine; CI gets 10)."""
    t0 = time.monotonic()
    r = subprocess.run([sys.executable, "-c", "from tilec.app.cli import entry; entry()", "masks",
                        str(EX / example)], capture_output=True, text=True, cwd=ROOT, timeout=60,
                       env={"TILEC_CACHE": str(tmp_path), "PATH": "/usr/bin:/bin",
                            "PYTHONPATH": str(ROOT)})
    took = time.monotonic() - t0
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("nothing is multicast: a thread-level (SIMT) schedule")
    assert r.stdout.count("\n") == 1 and took < 10, took
