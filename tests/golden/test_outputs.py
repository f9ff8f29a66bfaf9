"""What tilec prints over the examples does not change by accident (issue 27: a redesign keeps
behaviour; "a test compares gen/masks/explain output over the examples with the outputs before
the change").

Each command of :data:`COMMANDS` runs in-process (``tilec.app.cli.main``) and its stdout and
stderr, with the repository path normalised, must equal ``tests/golden/out/<name>.txt``; the
files were written from main before the restructure of issue 27 began.

A change that is meant to change an output (a form proved that was only checked, a better
note) refreshes the files: ``TILEC_UPDATE_GOLDEN=1 python -m pytest -q tests/golden``, then read
the diff (``git diff tests/golden``) and say in the commit why it changed.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.inprocess import tilec

ROOT = Path(__file__).resolve().parents[2]
OUT = Path(__file__).resolve().parent / "out"
UPDATE = os.environ.get("TILEC_UPDATE_GOLDEN") == "1"

EX = "examples/"
CLUSTER = ["seed004_persistent_cluster", "my_gemm", "gemm_decomposition"]
TILE = ["gemm_basic", "grouped_raster", "split_k", "stream_k"]
SIMT = ["simt_sgemm", "simt_warp_tiled", "coalescing_naive", "coalescing_coalesced"]


def _commands() -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for ex in CLUSTER + TILE:
        out[f"gen_triton_{ex}"] = ["gen", EX + ex + ".py", "-o", "-"]
        out[f"gen_cuda_{ex}"] = ["gen", EX + ex + ".py", "--target", "cuda", "-o", "-"]
        out[f"explain_{ex}"] = ["explain", EX + ex + ".py"]
        out[f"masks_{ex}"] = ["masks", EX + ex + ".py"]
    for ex in CLUSTER:
        out[f"masks_json_{ex}"] = ["masks", EX + ex + ".py", "--json"]
        out[f"masks_sliced_{ex}"] = ["masks", EX + ex + ".py", "--mode", "sliced"]
        out[f"masks_sliced_json_{ex}"] = ["masks", EX + ex + ".py", "--mode", "sliced", "--json"]
    for ex in SIMT:
        out[f"gen_{ex}"] = ["gen", EX + ex + ".py", "--target", "cuda", "-o", "-"]
        out[f"masks_{ex}"] = ["masks", EX + ex + ".py"]
        out[f"explain_{ex}"] = ["explain", EX + ex + ".py"]
    # documented variants (the examples' docstrings)
    out["gen_cuda_gemm_basic_nk"] = ["gen", EX + "gemm_basic.py", "--target", "cuda", "--param",
                                     "B_LAYOUT=nk", "-o", "-"]
    out["gen_decomposition_streamk"] = ["gen", EX + "gemm_decomposition.py", "--param",
                                        "DECOMP=streamk", "-o", "-"]
    out["explain_decomposition_deep"] = ["explain", EX + "gemm_decomposition.py", "--param", "M=512",
                                         "--param", "N=512", "--param", "K=65536"]
    out["explain_grouped_symbolic"] = ["explain", EX + "grouped_raster.py", "--param", "M=1024",
                                       "--param", "N=512"]
    out["gen_split_k_4"] = ["gen", EX + "split_k.py", "--param", "SPLITS=4", "-o", "-"]
    out["gen_stream_k_hybrid"] = ["gen", EX + "stream_k.py", "--param", "DECOMP=sk2_dp", "-o", "-"]
    out["show_seed"] = ["show", EX + "seed004_persistent_cluster.py"]
    return out


COMMANDS = _commands()


def run(argv: list[str]) -> str:
    """stdout + stderr of ``tilec ARGV`` run here, the exit status last, paths normalised."""
    rc, out, err = tilec(argv)
    text = out + err + f"[exit {rc}]\n"
    return text.replace(str(ROOT), "<repo>")


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_output_unchanged(name: str) -> None:
    got = run(COMMANDS[name])
    path = OUT / f"{name}.txt"
    if UPDATE:
        OUT.mkdir(exist_ok=True)
        path.write_text(got)
        return
    assert path.exists(), f"no golden output for {name}: run TILEC_UPDATE_GOLDEN=1"
    want = path.read_text()
    if got != want:
        import difflib

        diff = "".join(list(difflib.unified_diff(want.splitlines(True), got.splitlines(True),
                                                 "golden", "now"))[:80])
        pytest.fail(f"`tilec {' '.join(COMMANDS[name])}` changed:\n{diff}")
