"""End to end: the seed schedule, lowered through the IR for CUDA, prints exactly the issue
predicates, masks and slices the multicast derivation computed (compiled and run on the host,
compared with the derivation's table of every CTA of every round, and with the tile order)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.codegen.test_cuda_emit import _run_harness
from tilec.runtime.loader import load_schedule
from tilec.transforms.multicast.derive import derive, symbolic_instance
from tilec.transforms.pipeline import lower
from tilec.transforms.plan import MulticastMode

SEED = Path(__file__).resolve().parents[2] / "examples" / "seed004_persistent_cluster.py"

CASES = [
    (dict(M=1000, N=1500, K=128, CM=2, CN=1, CLUSTER=2, SMS=132), "leader"),
    (dict(M=1100, N=1300, K=128, CM=1, CN=2, CLUSTER=2, SMS=130), "sliced"),
    (dict(M=2048, N=2048, K=128, CM=2, CN=2, CLUSTER=4, SMS=120), "leader"),
    (dict(M=1536, N=2304, K=128, CM=2, CN=2, CLUSTER=4, SMS=12), "sliced"),
]


@pytest.mark.skipif(shutil.which("g++") is None, reason="needs g++ for the host harness")
@pytest.mark.parametrize("params,mode", CASES, ids=[f"{c[1]}-{i}" for i, c in enumerate(CASES)])
def test_cuda_source_prints_the_derived_masks(params, mode, tmp_path):
    s = load_schedule(SEED, params)
    sym = symbolic_instance(s.module.schedule, s.params)
    plan = lower(s.fusion, target="cuda", params=s.params, symbolic=sym, mode=mode)
    got = _run_harness(plan, tmp_path)
    # the tile order the kernel walks is the schedule's
    for t, (m, n, _alive) in got["T"].items():
        assert (m, n) == plan.order.evaluate(t)
    d = derive(s.fusion, MulticastMode(mode), symbolic=sym, params=s.params)
    for name in ("A", "B"):
        load = plan.a if name == "A" else plan.b
        table = d.operands[name].table
        if load.multicast is None:  # nothing shared: the plan must say so truthfully
            assert all(r.mask == 1 << r.point["rank"] for r in table if r.alive)
            continue
        printed = got[name]
        assert printed, f"{name}: no multicast functions printed"
        for row in table:
            if not row.alive:
                continue  # the kernel also ANDs its own liveness; dead rows are never issued
            key = (row.point["i_rt"], row.point["cidx"], row.point["rank"])
            vals = printed[key]
            assert bool(vals[0]) == row.issue and vals[1] == row.mask, (name, key, vals, row)
            if mode == "sliced":
                assert (vals[2], vals[3]) == (row.slice_index, row.slice_count), (name, key)
