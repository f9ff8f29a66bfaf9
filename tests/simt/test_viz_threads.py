"""``tilec viz --kind threads``: the thread -> element map against the index maps, the PNG."""

from __future__ import annotations

import json
from pathlib import Path

import matplotlib.image as mpimg
import pytest
from matplotlib.figure import Figure
from simt_helpers import EXAMPLES, load

from tilec.app.cli import main
from tilec.app.viz_threads import draw_threads, render_threads, thread_map
from tilec.errors import TilecError
from tilec.ir import index_map, index_symbol
from tilec.transforms.simt.lower import lower_simt

SIZES = dict(M=96, N=80, K=48)


def brute_force(fusion, warps):  # type: ignore[no-untyped-def]
    """Element of A, B and C each thread of ``warps`` touches at block 0 and k = 0, from C's
    index map alone (the seed's naive and coalesced kernels read A[m, k], B[k, n], write C[m, n])."""
    im = index_map(fusion.c)
    from tilec.ir import infer_launch

    dx = int(infer_launch(fusion).block[0])
    tx, ty = index_symbol("tidx"), index_symbol("tidy")
    out: dict[str, dict[tuple[int, int], list[tuple[int, int]]]] = {"A": {}, "B": {}, "C": {}}
    for w in warps:
        for tid in range(32 * w, 32 * w + 32):
            point = {s: 0 for s in im.bounds} | {tx: tid % dx, ty: tid // dx}
            m, n, k = (int(im.logical[d].subs(point)) for d in "MNK")
            for t, cell in (("A", (m, k)), ("B", (k, n)), ("C", (m, n))):
                out[t].setdefault(cell, []).append((w, tid % 32))
    return out


@pytest.mark.parametrize("example", ["coalescing_naive.py", "coalescing_coalesced.py"])
@pytest.mark.parametrize("warps", [(0,), (0, 1), (3, 5)])
def test_thread_map_against_the_index_map(example: str, warps: tuple[int, ...]) -> None:
    fusion = load(example, **SIZES, B=16)
    maps = {m.tensor: m for m in thread_map(lower_simt(fusion), warps)}
    expect = brute_force(fusion, warps)
    for t in "ABC":
        assert {c: sorted(v) for c, v in maps[t].cells.items()} == \
            {c: sorted(v) for c, v in expect[t].items()}


def test_seed_pictures_in_numbers() -> None:
    naive = {m.tensor: m for m in thread_map(lower_simt(load("coalescing_naive.py", M=64, N=64,
                                                             K=64)), (0,))}
    # naive: lane l of warp 0 reads A[l, 0] (a column: 32 sectors), all read B[0, 0]
    assert naive["A"].cells == {(lane, 0): [(0, lane)] for lane in range(32)}
    assert naive["A"].sectors == {0: 32} and naive["B"].sectors == {0: 1}
    assert naive["B"].cells == {(0, 0): [(0, lane) for lane in range(32)]}
    co = {m.tensor: m for m in thread_map(lower_simt(load("coalescing_coalesced.py", M=64, N=64,
                                                          K=64)), (0,))}
    assert co["B"].cells == {(0, lane): [(0, lane)] for lane in range(32)}
    assert co["C"].sectors == {0: 4} and co["A"].sectors == {0: 1}


def test_the_png_has_the_size_and_one_labelled_panel_per_access(tmp_path: Path) -> None:
    plan = lower_simt(load("coalescing_naive.py", M=64, N=64, K=64))
    path, maps = render_threads(tmp_path / "t.png", plan, (0, 1), size=(900, 500))
    img = mpimg.imread(path)
    assert img.shape[:2] == (500, 900)
    fig = Figure()
    draw_threads(fig, maps)
    axes = fig.axes
    assert [a.get_title().split(",")[0] for a in axes] == ["A load", "B load", "C store"]
    assert [a.get_xlabel() for a in axes] == ["column of A (64 per row)", "column of B (64 per row)",
                                              "column of C (64 per row)"]
    assert "uncoalesced" in axes[0].get_title() and "warp 1: 32" in axes[0].get_title()
    labels = {t.get_text() for t in axes[2].texts}  # lanes of the C store, a cell each
    assert {str(lane) for lane in range(32)} <= labels


def test_errors() -> None:
    plan = lower_simt(load("coalescing_naive.py", M=64, N=64, K=64))
    with pytest.raises(TilecError, match=r"warps must be in 0\.\.31"):
        thread_map(plan, (32,))
    with pytest.raises(TilecError, match="unknown loop symbol"):
        thread_map(plan, (0,), {"nope": 1})
    with pytest.raises(TilecError, match="out of its range"):
        thread_map(plan, (0,), {"i_K": 64})


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "c.png"
    assert main(["viz", str(EXAMPLES / "coalescing_coalesced.py"), "--kind", "threads",
                 "--warps", "0", "-o", str(out), "--json", "--param", "M=64", "--param", "N=64",
                 "--param", "K=64"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert out.is_file() and data["warps"] == [0]
    b = next(a for a in data["accesses"] if a["tensor"] == "B")
    assert b["verdict"] == "coalesced" and b["cells"][:2] == [[0, 0, 0, 0], [0, 1, 0, 1]]
    assert main(["viz", str(EXAMPLES / "gemm_basic.py"), "--kind", "threads",
                 "-o", str(tmp_path / "x.png")]) == 2
    assert "this one is tile-level" in capsys.readouterr().err
    assert main(["viz", str(EXAMPLES / "simt_sgemm.py"), "-o", str(tmp_path / "x.png")]) == 2
    assert "use --kind threads" in capsys.readouterr().err
