"""tilec sweep end to end on the CPU: the Triton interpreter measures tiny fp16 shapes in a
worker process, checked against torch; the summary against the rows; the picture read back;
the rules file looked up."""

from __future__ import annotations

import json
import os

os.environ["TRITON_INTERPRET"] = "1"  # before triton is imported (here and in the workers)

from pathlib import Path

import matplotlib.image
import numpy as np
import pytest

from tilec.app.cli import main
from tilec.runtime.rules import Rules
from tilec.runtime.sweep.plot import figure
from tilec.runtime.sweep.store import Row, Store
from tilec.runtime.sweep.summary import shape_results, summarize

EX = str(Path(__file__).resolve().parents[2] / "examples" / "gemm_decomposition.py")


def test_sweep_on_the_interpreter(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db, png, rules, out = (tmp_path / n for n in ("s.sqlite", "m.png", "r.json", "s.json"))
    args = ["sweep", EX, "--shapes", "M=32,64 N=64 K=64,128", "--param", "DTYPE=fp16",
            "--param", "SMS=4", "--limit", "2", "--gpus", "1", "--db", str(db)]
    assert main([*args, "--plot", str(png), "--export", str(rules), "--json", "-o", str(out)]
                ) == 0
    err = capsys.readouterr().err
    assert "4 shapes" in err and "0 failed" in err
    st = Store(db)
    rows = list(st.rows(st.sweeps()[0]["id"]))
    st.close()
    # each shape: 2 configs of the space, the baseline, cuBLAS; all built, checked and timed
    assert len(rows) == 4 * 4 and all(r.ok and r.ms and r.ms > 0 for r in rows)
    assert all(r.rel_err is not None and r.rel_err < 5e-3 for r in rows if r.role != "cublas")
    data = json.loads(out.read_text())
    by_shape = {(s["M"], s["N"], s["K"]): s for s in data["shapes"]}
    for (M, N, K), s in by_shape.items():  # the summary is the rows' arithmetic
        mine = [r for r in rows if (r.M, r.N, r.K) == (M, N, K)]
        best = min((r for r in mine if r.role == "tuned"), key=lambda r: r.ms)
        base = next(r for r in mine if r.role == "baseline")
        assert s["best"]["ms"] == best.ms and s["speedup"] == pytest.approx(base.ms / best.ms)
    assert data["summary"]["compared"] == 4
    h, w = matplotlib.image.imread(png).shape[:2]
    assert (w, h) == (1200, 900)
    r = Rules.load(rules)
    for (M, N, K), s in by_shape.items():
        params, why = r.lookup(M, N, K)
        assert params == s["best"]["params"] and "exact shape" in why
    # a rerun measures nothing and reports the same summary
    assert main([*args, "--json", "-o", str(out)]) == 0
    assert "0 configs measured" in capsys.readouterr().err
    assert json.loads(out.read_text())["summary"] == data["summary"]


def test_report_of_a_sweep_that_is_not_in_the_db(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "s.sqlite"
    st = Store(db)
    st.begin("other", "x.py", "triton", {}, {})
    st.close()
    assert main(["sweep", EX, "--db", str(db)]) == 2
    assert "holds no result of this sweep" in capsys.readouterr().err
    assert main(["sweep", EX, "--shapes", "M=16", "--db", str(db)]) == 2
    assert "no values for N, K" in capsys.readouterr().err


def _result(M: int, K: int, N: int, speed: float, decomp: str) -> list[Row]:
    return [Row("s", M, N, K, "tuned", f'{{"d": "{decomp}"}}', decomp, decomp, True, 1.0),
            Row("s", M, N, K, "baseline", "{}", "b", None, True, speed)]


def test_the_map_has_the_seeds_axes_and_diverges_at_one() -> None:
    rows = (_result(16, 1024, 1024, 2.0, "dp_1sk") + _result(16, 4096, 1024, 0.5, "splitk")
            + _result(256, 1024, 1024, 1.0, "dp"))
    results = shape_results(rows)
    fig = figure(results, baseline="split-K")
    speed, won = fig.axes[0], fig.axes[1]
    assert (speed.get_xlabel(), speed.get_ylabel()) == ("K-N pair (K, N)", "M")
    assert [t.get_text() for t in speed.get_xticklabels()] == ["1k,1k", "4k,1k"]
    assert [t.get_text() for t in speed.get_yticklabels()] == ["16", "256"]
    assert "speedup" in fig.axes[2].get_ylabel()  # the colour bar
    im = speed.images[0]
    assert im.norm(1.0) == pytest.approx(0.5)  # diverging around 1.0
    grid = im.get_array()
    assert grid[0, 0] == 2.0 and grid[0, 1] == 0.5 and np.ma.is_masked(grid[1, 1])
    red, green = im.to_rgba(0.5)[:2], im.to_rgba(2.0)[:2]
    assert red[0] > red[1] and green[1] > green[0]
    labels = [t.get_text() for t in won.get_legend().get_texts()]
    assert labels == ["dp", "dp_1sk", "splitk"]
    s = summarize(results)
    assert s["best"]["speedup"] == 2.0 and s["worst"]["speedup"] == 0.5
    assert s["improved"]["share"] == pytest.approx(1 / 3) and s["winners"]["dp_1sk"] == 1
