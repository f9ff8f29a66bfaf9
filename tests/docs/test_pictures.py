"""The pictures of docs/img/ are what ``tilec viz`` draws today (issue 29: the dp_1sk timeline
said makespan 57.0 / 61% while tilec drew 70.4 / 96%).

``scripts/make_docs_pictures.py`` draws every picture and records, in docs/img/pictures.json,
the numbers its caption states and a digest of the data drawn; here the record is computed again
from today's code. On a failure: ``python scripts/make_docs_pictures.py`` and commit the pictures.
"""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("make_docs_pictures",
                                              ROOT / "scripts" / "make_docs_pictures.py")
assert spec is not None and spec.loader is not None
pictures = importlib.util.module_from_spec(spec)
spec.loader.exec_module(pictures)


def recorded() -> dict:
    return json.loads(pictures.RECORD.read_text())


def test_every_picture_of_the_docs_is_drawn_by_the_script() -> None:
    """Each docs/img picture has a record and a command; each picture a doc shows exists."""
    on_disk = {p.name for p in pictures.IMG.iterdir() if p.suffix == ".png"}
    assert on_disk == set(pictures.PICTURES) == set(recorded())
    shown = set()
    for doc in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        shown |= set(re.findall(r"\(img/([\w.-]+\.png)\)", doc.read_text()))
    assert shown <= on_disk


def test_the_tutorial_shows_the_scripts_commands() -> None:
    """The viz commands the tutorial pastes are the ones that drew its pictures."""
    text = (ROOT / "docs" / "tutorial.md").read_text()
    for name in ("my_gemm.png", "dp_1sk_timeline.png"):
        assert f"$ {pictures.command(name)}\n" in text, name


@pytest.mark.parametrize("name", sorted(pictures.PICTURES))
def test_picture_is_up_to_date(name: str, tmp_path: Path) -> None:
    now = pictures.draw(name, tmp_path / name)
    assert (tmp_path / name).stat().st_size > 10_000  # a picture was drawn
    assert recorded()[name] == now, (
        f"docs/img/{name} is not what `{pictures.command(name)}` draws today: run "
        f"python scripts/make_docs_pictures.py and commit docs/img")


def test_the_record_sees_a_changed_timeline() -> None:
    """The record is sensitive: another decomposition gives another makespan and digest."""
    data = {"kind": "timeline", "timeline": {"sms": 2, "makespan": 4.0, "blocks": [
        {"sm": 0, "kind": "dp", "start": 0.0, "end": 4.0}, {"sm": 1, "kind": "dp", "start": 0.0,
                                                             "end": 2.0},
        {"sm": 1, "kind": "idle", "start": 2.0, "end": 4.0}]}}
    a = pictures.record("dp_1sk_timeline.png", data)
    assert a["timeline"] == {"sms": 2, "blocks": 3, "makespan": 4.0, "utilisation_percent": 75}
    data["timeline"]["blocks"][1]["end"] = 3.0
    assert pictures.record("dp_1sk_timeline.png", data)["digest"] != a["digest"]
