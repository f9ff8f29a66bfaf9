"""The on-disk cache of tilec masks --json: a hit returns what a fresh derivation returns, and
any change of parameters or mode is a miss."""

from __future__ import annotations

import json
from pathlib import Path

from tilec.transforms.multicast import _disk_cache, derive_from_file, masks_json
from tilec.transforms.plan import MulticastMode

SEED = Path(__file__).resolve().parents[2] / "examples" / "seed004_persistent_cluster.py"
Q = dict(M=512, N=1024, K=64, CM=1, CN=2, CLUSTER=2, SMS=8)


def test_cache_hit_equals_fresh_derivation(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path))
    first = masks_json(SEED, Q)
    files = list((tmp_path / "multicast").glob("*.json"))
    assert len(files) == 1
    again = masks_json(SEED, Q)
    fresh = json.loads(json.dumps(derive_from_file(SEED, Q).to_json()))
    assert first == again == fresh


def test_cache_key_changes_with_params_and_mode(tmp_path, monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path))
    keys = {
        _disk_cache(SEED, {**Q, "M": m}, mode, True, True)
        for m in (512, 640) for mode in MulticastMode
    }
    assert len(keys) == 4


def test_cache_off(monkeypatch):
    monkeypatch.setenv("TILEC_CACHE", "off")
    assert _disk_cache(SEED, Q, MulticastMode.LEADER, True, True) is None
