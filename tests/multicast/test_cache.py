"""The on-disk cache of tilec masks --json: a hit returns what a fresh derivation returns, any
change of parameters or mode is a miss, and a hit does not import sympy."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tilec.runtime.session import Session, derive_from_file

ROOT = Path(__file__).resolve().parents[2]
SEED = ROOT / "examples" / "seed004_persistent_cluster.py"
Q = dict(M=512, N=1024, K=64, CM=1, CN=2, CLUSTER=2, SMS=8)


def test_cache_hit_equals_fresh_derivation(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path))
    first = Session().masks_json(SEED, Q)
    assert len(list((tmp_path / "multicast").glob("*.json"))) == 1
    again = Session().masks_json(SEED, Q)  # another run: read from disk
    fresh = json.loads(json.dumps(derive_from_file(SEED, Q, session=Session()).to_json()))
    assert json.loads(first) == json.loads(again) == fresh


def test_cache_key_changes_with_params_and_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path))
    keys = {Session().masks_key(SEED, {**Q, "M": m}, mode) for m in (512, 640)
            for mode in ("leader", "sliced")}
    assert len(keys) == 4


def test_cache_off(monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", "off")
    assert Session().masks_key(SEED, Q, "leader") is None


def test_a_hit_imports_no_sympy(tmp_path):
    env = dict(os.environ, TILEC_CACHE=str(tmp_path))
    args = ["masks", str(SEED), "--json", "--param", "CN=2", "--param", "M=512", "-o",
            str(tmp_path / "out.json")]
    code = (f"import sys; from tilec.app.cli import main; rc = main({args!r}); "
            "print('sympy' in sys.modules); sys.exit(rc)")
    first = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           cwd=ROOT, check=True)
    second = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, cwd=ROOT, check=True)
    assert first.stdout.split()[-1] == "True"  # the miss derives
    assert second.stdout.split()[-1] == "False"  # the hit only reads the file
    assert json.loads((tmp_path / "out.json").read_text())["operands"]["A"]["closed_form"]
