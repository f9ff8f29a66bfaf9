"""``tilec show`` on the seed schedule."""

from __future__ import annotations

import json

import pytest

from tilec.app.cli import main

from .helpers import ROOT

SEED = "examples/seed004_persistent_cluster.py"


@pytest.fixture(autouse=True)
def _at_repo_root(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(ROOT)


def test_show_seed_with_cn2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", SEED, "--param", "CN=2"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert "CM=2 CN=2 SMS=132 CLUSTER=2 DTYPE=bf16 B_LAYOUT=nk DECOMP=dp" in out[0]
    # 8192/128 = 64 tile rows, 8192/256 = 32 tile columns: 2048 tiles over 132 SMs = 16 rounds
    # the block is the Triton kernel's (num_warps = 8), not the IR's (1, 1, 1): issue 29
    assert "launch: grid=(132, 1, 1) cluster=(2, 1, 1) block=(256, 1, 1)" in out
    assert ("  C[iS.rt{16}, iCIDx.cluster{66}, iRankX.rank{2}, rS.Ko{128}, iMma.Mi{128}, "
            "iMma.Ni{256}, rMma.Ki{64}]") in out
    assert ("  A_smem[iS.rt{16}, iCIDx.cluster{66}, iRankX.rank{2}, iS.Ko{128}, iBulk.Mi{128}, "
            "bBulk.Ni{256}, iBulk.Ki{64}]") in out
    assert "index maps:" in out


def test_show_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", SEED, "--param", "CN=2", "--param", "SMS=128", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["params"]["CN"] == 2 and data["params"]["SMS"] == 128
    assert data["launch"]["grid"] == ["128", "1", "1"] and data["launch"]["cluster"] == [2, 1, 1]
    assert [v["name"] for v in data["views"]] == ["C", "A_smem", "B_smem"]
    c = data["views"][0]
    assert c["loop"][:3] == ["iS.rt{16}", "iCIDx.cluster{64}", "iRankX.rank{2}"]
    assert set(c["index_map"]) == {"M", "N", "K"}
    assert data["views"][1]["broadcast"] == ["N"] and data["views"][2]["broadcast"] == ["M"]
    assert data["schedule"].startswith("from tilec.ir import GemmFusion, ParallelType\n")


def test_show_unknown_param(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", SEED, "--param", "CX=2"]) == 2
    captured = capsys.readouterr()
    lines = captured.err.splitlines()
    assert len(lines) == 1, captured.err
    assert lines[0].startswith("tilec: error: ") and "'CX'" in lines[0]
    assert captured.out == ""


def test_show_malformed_param(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["show", SEED, "--param", "CN"]) == 2
    err = capsys.readouterr().err.splitlines()
    assert err == ["tilec: error: --param must look like NAME=VALUE but got 'CN'"]


def test_show_writes_file(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "show.txt"
    assert main(["show", SEED, "-o", str(out)]) == 0
    assert "launch: grid=(132, 1, 1) cluster=(2, 1, 1) block=(256, 1, 1)" in out.read_text()
