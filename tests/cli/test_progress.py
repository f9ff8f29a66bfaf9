"""tilec.runtime.progress: draws on a terminal only, TILEC_PROGRESS=0/1 overrides, items pass through."""

from __future__ import annotations

import io

import pytest

from tilec.runtime.progress import bar, skipped


class _Tty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_draws_on_a_tty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("TILEC_PROGRESS", raising=False)
    out = _Tty()
    b = bar(["a", "b", "c", "d"], "tune", stream=out)
    b.mininterval = 0  # draw every step (tqdm draws at most every 0.1 s by default)
    seen = []
    for x in b:
        b.set_postfix_str(f"config {x}")
        seen.append(x)
    assert seen == ["a", "b", "c", "d"]
    text = out.getvalue()
    assert "tune: " in text and " 2/4 " in text and " 4/4 " in text  # half way, and done
    assert "config c" in text


@pytest.mark.parametrize(("env", "tty", "drawn"), [
    (None, False, False), ("0", True, False), ("1", False, True), (None, True, True)])
def test_enabled(env, tty, drawn, monkeypatch: pytest.MonkeyPatch) -> None:
    if env is None:
        monkeypatch.delenv("TILEC_PROGRESS", raising=False)
    else:
        monkeypatch.setenv("TILEC_PROGRESS", env)
    out = _Tty() if tty else io.StringIO()
    assert list(bar(range(3), "x", stream=out)) == [0, 1, 2]
    assert (out.getvalue() != "") == drawn


def test_resumed_items_are_shown_done_but_not_in_the_rate() -> None:
    out = io.StringIO()
    b = bar(total=10, label="sweep", unit="shapes", stream=out, enabled=True)
    skipped(b, 4)
    assert b.n == 4 and b.format_dict["initial"] == 4  # the rate counts from the 5th
    b.update(1)
    b.close()
    assert " 5/10 " in out.getvalue()


def test_autotune_uses_it() -> None:
    from tilec.runtime import autotune

    assert autotune.bar is bar


def test_status_says_what_a_long_step_does(monkeypatch: pytest.MonkeyPatch) -> None:
    """A long derivation without a bar (issue 29: minutes without output): the step's name and
    its seconds on a terminal, cleared at the end; nothing when the step is short or off a TTY."""
    import time

    from tilec.runtime.progress import Status

    monkeypatch.delenv("TILEC_PROGRESS", raising=False)
    out = _Tty()
    with Status("explain: TMA multicast", stream=out, after=0.05, every=0.02):
        time.sleep(0.3)
    text = out.getvalue()
    assert "tilec: explain: TMA multicast... 0s" in text
    assert text.endswith("\r")  # cleared: the next line starts clean
    quick = _Tty()
    with Status("quick", stream=quick, after=5.0):
        pass
    assert quick.getvalue() == ""
    piped = io.StringIO()
    with Status("piped", stream=piped, after=0.0, every=0.01):
        time.sleep(0.05)
    assert piped.getvalue() == ""
