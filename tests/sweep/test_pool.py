"""The local pool and Ray: faults (a config that raises, one that hangs, a worker killed
mid-config) are recorded and the sweep goes on; the rows are the ones an inline run gives;
kill -9 of the driver at any moment loses nothing that was committed and a rerun completes it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.sweep.fakes import DIES, HANGS, RAISES
from tilec.runtime.sweep.run import DEFAULT_BASELINE, run_sweep, tasks_of
from tilec.runtime.sweep.store import Store

ROOT = Path(__file__).resolve().parents[2]
EX = str(ROOT / "examples" / "gemm_decomposition.py")
FAKE = {"measure": "tests.sweep.fakes:measure", "cublas": "tests.sweep.fakes:cublas"}
GOOD = [(64, 1024, 1024), (256, 2048, 1024)]
FAULTY = [(RAISES, 1024, 1024), (HANGS, 1024, 1024), (DIES, 1024, 1024)]


def _rows(db: Path, sid: str) -> dict[tuple, tuple]:
    st = Store(db)
    try:
        return {r.key: (r.ok, r.ms, r.error) for r in st.rows(sid)}
    finally:
        st.close()


def _expected_keys(shapes: list[tuple[int, int, int]], limit: int) -> set[tuple]:
    return {t.key for s in shapes for t in tasks_of(EX, s, fixed={}, baseline=DEFAULT_BASELINE,
                                                    limit=limit)}


@pytest.fixture(scope="module")
def inline(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple, tuple]:
    db = tmp_path_factory.mktemp("inline") / "s.sqlite"
    run = run_sweep(EX, GOOD, db=db, limit=3, executor="inline", progress=False, **FAKE)
    return _rows(db, run.sweep)


def test_pool_records_every_fault_and_goes_on(tmp_path: Path, inline) -> None:
    db = tmp_path / "s.sqlite"
    run = run_sweep(EX, FAULTY + GOOD, db=db, limit=3, executor="pool", gpus=2, timeout=4.0,
                    build_ahead=0, progress=False, **FAKE)
    rows = _rows(db, run.sweep)
    assert set(rows) == _expected_keys(FAULTY + GOOD, 3)  # every (shape, config) has its row
    raised = [v for k, v in rows.items() if k[0] == RAISES and k[3] == "tuned"]
    assert raised and all(not ok and "RuntimeError: injected failure" in e for ok, _, e in raised)
    hung = rows[(HANGS, 1024, 1024, "baseline", '{"DECOMP": "splitk"}')]
    assert not hung[0] and hung[2].startswith("timeout: no result after 4 s")
    died = rows[(DIES, 1024, 1024, "baseline", '{"DECOMP": "splitk"}')]
    assert not died[0] and "worker died (signal SIGKILL)" in died[2]
    # the other configs of the faulty shapes, and every good shape, ran as they do inline
    assert sum(1 for ok, _, _ in rows.values() if not ok) == len(raised) + 2
    assert {k: v for k, v in rows.items() if k[0] not in (RAISES, HANGS, DIES)} == inline
    assert run.failed == len(raised) + 2 and run.workers == 2


def test_ray_local_gives_the_rows_of_the_pool(tmp_path: Path, inline) -> None:
    ray = pytest.importorskip("ray")
    db = tmp_path / "s.sqlite"
    try:
        run = run_sweep(EX, [(DIES, 1024, 1024), *GOOD], db=db, limit=3, executor="ray",
                        ray_address="local", gpus=2, timeout=30.0, progress=False, **FAKE)
    finally:
        ray.shutdown()
    rows = _rows(db, run.sweep)
    assert {k: v for k, v in rows.items() if k[0] != DIES} == inline
    died = rows[(DIES, 1024, 1024, "baseline", '{"DECOMP": "splitk"}')]
    assert not died[0] and "Ray task failed" in died[2]


def test_kill_9_then_resume_loses_nothing(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    shapes = [(64, 1024, 1024), (128, 1024, 2048), (256, 2048, 1024)]
    code = (f"from tilec.runtime.sweep.run import run_sweep\n"
            f"run_sweep({EX!r}, {shapes!r}, db={str(db)!r}, limit=2, executor='pool', gpus=1, "
            f"build_ahead=0, progress=False, measure='tests.sweep.fakes:slow', "
            f"cublas='tests.sweep.fakes:cublas')\n")
    proc = subprocess.Popen([sys.executable, "-c", code], cwd=ROOT,
                            env={**os.environ, "PYTHONPATH": str(ROOT)})
    deadline = time.monotonic() + 90
    before: dict[tuple, tuple] = {}
    while time.monotonic() < deadline and proc.poll() is None:
        if db.exists():
            st = Store(db)
            try:
                rows = list(st.rows(st.sweeps()[0]["id"])) if st.sweeps() else []
            finally:
                st.close()
            if len(rows) >= 3:
                os.kill(proc.pid, signal.SIGKILL)  # the driver, mid-sweep
                proc.wait()
                break
        time.sleep(0.1)
    assert proc.returncode == -signal.SIGKILL, "the sweep ended before it could be killed"
    st = Store(db)
    sid = st.sweeps()[0]["id"]
    before = {r.key: r for r in st.rows(sid)}
    st.close()
    total = _expected_keys(shapes, 2)
    assert 3 <= len(before) < len(total)
    # the worker notices its driver is gone and ends (no orphan keeps a GPU)
    pids = {int(r.worker.rsplit(":", 1)[1]) for r in before.values()}
    time.sleep(2.5)
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)
    run = run_sweep(EX, shapes, db=db, limit=2, executor="inline", progress=False,
                    measure="tests.sweep.fakes:slow", cublas="tests.sweep.fakes:cublas")
    assert run.sweep == sid and run.skipped == len(before)
    assert run.measured == len(total) - len(before)
    st = Store(db)
    after = {r.key: r for r in st.rows(sid)}
    st.close()
    assert set(after) == total  # nothing lost, nothing twice (the key is the primary key)
    assert all(after[k] == r for k, r in before.items())  # committed rows were kept as they were


def test_time_limit_stops_between_shapes_and_a_rerun_goes_on(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite"
    kw = dict(db=db, limit=1, executor="inline", progress=False,
              measure="tests.sweep.fakes:slow", cublas="tests.sweep.fakes:cublas")
    first = run_sweep(EX, GOOD, time_limit=0.1, **kw)  # the first shape starts in time
    assert (first.completed, first.stopped, first.measured) == (1, True, 3)
    rest = run_sweep(EX, GOOD, **kw)
    assert (rest.completed, rest.stopped, rest.skipped, rest.measured) == (1, False, 3, 3)
