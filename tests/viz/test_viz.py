"""``tilec viz``: the data behind each picture against the plan and the derivation, and the PNGs
read back (pixel size, more than one colour)."""

from __future__ import annotations

import itertools
import json
from collections import Counter, defaultdict
from pathlib import Path

import matplotlib.image as mpimg
import numpy as np
import pytest

from tilec.app.cli import main
from tilec.app.viz import multicast_patterns, tile_assignment, timeline
from tilec.runtime.loader import load_schedule
from tilec.runtime.session import derive_from_file
from tilec.transforms.cost_model import UNIT_OVERHEAD, estimate_cost
from tilec.transforms.pipeline import lower

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed004_persistent_cluster.py")
STREAMK = str(ROOT / "examples" / "stream_k.py")
SEED_P = dict(M=1024, N=2048, K=512, SMS=16, CLUSTER=4, CM=2, CN=2)


def _params(p: dict[str, object]) -> list[str]:
    return [a for k, v in p.items() for a in ("--param", f"{k}={v}")]


def _png(path: Path) -> np.ndarray:
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    return mpimg.imread(str(path))


def _colours(img: np.ndarray) -> int:
    return len(np.unique((img[..., :3] * 255).astype(np.uint8).reshape(-1, 3), axis=0))


@pytest.mark.parametrize("kind", ["tiles", "multicast", "timeline", "all"])
def test_png_has_size_and_colours(kind: str, tmp_path: Path) -> None:
    out = tmp_path / f"{kind}.png"
    assert main(["viz", SEED, *_params(SEED_P), "--kind", kind, "--size", "900x700",
                 "-o", str(out)]) == 0
    img = _png(out)
    assert img.shape[:2] == (700, 900)
    assert _colours(img) > 8  # the cluster hues / group colours / unit kinds, not a blank page


def test_default_size_of_all(tmp_path: Path) -> None:
    out = tmp_path / "all.png"
    assert main(["viz", STREAMK, "--param", "SMS=16", "-o", str(out)]) == 0
    assert _png(out).shape[:2] == (2600, 1800)  # no cluster: the multicast panel is a note


def test_tiles_cover_the_grid_once_and_clusters_are_cm_by_cn_blocks() -> None:
    s = load_schedule(SEED, SEED_P)
    plan = lower(s.fusion, params=s.params)
    cells = tile_assignment(plan, grid=16, cluster_size=4)
    assert sorted((c.tile_m, c.tile_n) for c in cells) == [
        (m, n) for m in range(plan.order.concrete().tiles_m)
        for n in range(plan.order.concrete().tiles_n)]
    by_cluster: dict[tuple[int, int], list[tuple[int, int]]] = defaultdict(list)
    for c in cells:
        assert c.cta == c.t % 16 and c.round == c.t // 16 and c.cluster * 4 + c.rank == c.cta
        by_cluster[(c.round, c.cluster)].append((c.tile_m, c.tile_n))
    for tiles in by_cluster.values():  # CM=2 x CN=2: each cluster computes a 2 x 2 block
        ms, ns = {m for m, _ in tiles}, {n for _, n in tiles}
        assert len(tiles) == 4 and len(ms) == 2 and len(ns) == 2
        assert max(ms) - min(ms) == 1 and max(ns) - min(ns) == 1 and min(ms) % 2 == 0


@pytest.mark.parametrize("mode", ["leader", "sliced"])
def test_multicast_groups_match_the_derivation(mode: str) -> None:
    d = derive_from_file(SEED, SEED_P, mode=mode)
    pats = multicast_patterns(d)
    # rank = rm * CN + rn: A (same rows) is shared inside {0,1},{2,3}; B inside {0,2},{1,3}
    expected = {"A": [[0, 1], [2, 3]], "B": [[0, 2], [1, 3]]}
    for op, want in expected.items():
        assert sum(p.count for p in pats[op]) == len(d.operands[op].table) // 4
        for p in pats[op]:
            if all(p.alive):
                assert p.groups() == want
            for g in p.groups():
                for r in g:
                    assert p.mask[r] == sum(1 << q for q in g)
                    assert p.issue[r] == (mode == "sliced" or r == g[0])
                    if mode == "sliced":
                        assert (p.slice_index[r], p.slice_count[r]) == (g.index(r), len(g))


@pytest.mark.parametrize("decomp", ["streamk", "dp_1sk", "sk2_dp", "skpp"])
def test_timeline_covers_every_tile_once_without_overlap(decomp: str) -> None:
    s = load_schedule(STREAMK, dict(M=640, N=640, K=1024, SMS=12, DECOMP=decomp, SK_WAVES=2))
    plan = lower(s.fusion, params=s.params)
    tl = timeline(plan, sms=12)
    # the picture is the cost model that chooses decompositions: same makespan, same work
    cost = estimate_cost(plan.work, 12, plan.BM, plan.BN, plan.BK,
                         dtype_bytes=plan.dtype.nbytes, alive=plan.order.alive_tiles())
    assert tl.makespan == cost.total and tl.busy() == pytest.approx(cost.busy)
    w = plan.work
    covered: dict[int, list[tuple[int, int]]] = defaultdict(list)
    per_sm = defaultdict(list)
    for b in tl.blocks:
        per_sm[b.sm].append(b)
        if b.kind in ("dp", "splitk", "streamk"):
            # a unit lasts its k-iterations (dearer inside the Stream-K region) + the overhead
            per_iter = 1 + (tl.penalty if w.sk_start <= b.tile < w.sk_end else 0.0)
            assert b.kind == ("streamk" if w.sk_start <= b.tile < w.sk_end else "dp")
            assert b.end - b.start == pytest.approx((b.k_end - b.k_begin) * per_iter
                                                    + UNIT_OVERHEAD)
            covered[b.tile].append((b.k_begin, b.k_end))
    assert len(covered) == plan.tiles
    for ranges in covered.values():  # K of each tile cut into disjoint ranges that cover it
        ranges.sort()
        assert ranges[0][0] == 0 and ranges[-1][1] == plan.k_iters
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges))
    for blocks in per_sm.values():
        blocks.sort(key=lambda b: b.start)
        assert blocks[0].start == 0
        assert all(a.end == b.start for a, b in itertools.pairwise(blocks))
        assert blocks[-1].end == pytest.approx(tl.makespan)
        for a, b in itertools.pairwise(blocks):  # a partial unit is followed by its fix-up
            if a.kind != "fixup" and a.kind != "idle" and a.k_end - a.k_begin != plan.k_iters:
                assert b.kind == "fixup" and b.tile == a.tile
    kinds = Counter(b.kind for b in tl.blocks)
    assert kinds["streamk"] > 0 and kinds["fixup"] > 0


def test_viz_json_is_the_drawn_data(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "t.png"
    assert main(["viz", SEED, *_params(SEED_P), "--kind", "all", "-o", str(out), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["file"] == str(out) and data["grid"] == 16 and data["cluster_size"] == 4
    assert len(data["tiles"]) == 8 * 8
    assert set(data["multicast"]) == {"A", "B"}
    # 4 rounds of 8 k-iterations and a unit's overhead, all SMs busy
    assert data["timeline"]["makespan"] == 4 * (8 + UNIT_OVERHEAD)


def test_viz_user_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    basic = str(ROOT / "examples" / "gemm_basic.py")
    simt = str(ROOT / "examples" / "simt_sgemm.py")
    for argv, says in [
        (["viz", basic, "--kind", "multicast", "-o", str(tmp_path / "x.png")], "no cluster"),
        (["viz", basic, "--size", "big", "-o", str(tmp_path / "x.png")], "WIDTHxHEIGHT"),
        (["viz", simt, "-o", str(tmp_path / "x.png")], "thread-level"),
        (["viz", basic, "-o", str(tmp_path / "no" / "such" / "x.png")], "cannot write"),
    ]:
        assert main(argv) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("tilec: error: ") and says in err[0], err


def test_timeline_of_a_cluster_split_runs_per_cluster() -> None:
    # CUDA clusters keep one K range: the split is over groups of CLUSTER tiles and the timeline
    # simulates clusters (sms // CLUSTER slots), each (group, k) once
    s = load_schedule(SEED, dict(M=1024, N=1024, K=640, SMS=16, CLUSTER=2, CM=2, CN=1))
    s.fusion.decompose("streamk", sms=12)
    plan = lower(s.fusion, target="cuda", params=s.params, multicast=False)
    assert plan.work.group == 2
    tl = timeline(plan, sms=16)
    assert tl.sms == min(16 // 2, plan.work.grid // 2)  # slots: clusters, at most the workers
    seen = Counter((b.tile, k) for b in tl.blocks if b.kind in ("dp", "streamk")
                   for k in range(b.k_begin, b.k_end))
    assert set(seen.values()) == {1}
    assert sorted(seen) == [(g, k) for g in range(plan.tiles // 2) for k in range(plan.k_iters)]
    assert Counter(b.kind for b in tl.blocks)["fixup"] > 0
