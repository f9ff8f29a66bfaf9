"""tilec.runtime.session: one run derives a schedule's multicast forms once, whatever asks
(masks, explain, viz), builds it over symbols once (gen's lowering too), and keys what it keeps
by content, so two schedules that differ never share an entry."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from tilec.app.cli import main
from tilec.runtime.loader import load_schedule
from tilec.runtime.session import Session

ROOT = Path(__file__).resolve().parents[2]
SEED = str(ROOT / "examples" / "seed004_persistent_cluster.py")
Q = dict(M=512, N=1024, K=64, CM=1, CN=2, CLUSTER=2, SMS=8)
ARGS = [f"--param={k}={v}" for k, v in Q.items()]


@pytest.fixture
def calls(monkeypatch: pytest.MonkeyPatch) -> Counter[str]:
    """How often the derivation and the symbolic build run (the real ones, counted)."""
    from tilec.transforms.multicast import derive

    seen: Counter[str] = Counter()
    for name in ("derive_loaded", "symbolic_build"):
        real = getattr(derive, name)

        def counted(*a: object, _real=real, _name=name, **kw: object) -> object:
            seen[_name] += 1
            return _real(*a, **kw)

        monkeypatch.setattr(derive, name, counted)
    return seen


@pytest.mark.parametrize("argv", [
    ["masks", SEED, *ARGS],
    ["explain", SEED, *ARGS],
    ["viz", SEED, *ARGS, "--kind", "multicast"],
])
def test_a_run_derives_once(argv: list[str], calls: Counter[str], tmp_path: Path,
                            monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("TILEC_CACHE", str(tmp_path))
    monkeypatch.chdir(tmp_path)  # viz writes its picture here
    assert main(argv) == 0
    assert calls == Counter(derive_loaded=1, symbolic_build=1)


def test_gen_derives_through_the_session(calls: Counter[str], capsys) -> None:
    assert main(["gen", SEED, *ARGS, "--target", "cuda"]) == 0
    assert calls == Counter(derive_loaded=1, symbolic_build=1)


def test_gen_and_masks_share_one_derivation(calls: Counter[str]) -> None:
    """The CUDA lowering asks the session (cluster_k_ranges, the replay fallback); for a
    data-parallel schedule that can be built over symbols neither changes the answer, so a
    later masks (or explain, viz) in the same session reuses gen's derivation, and the plan's
    multicast is read from that very derivation."""
    from tilec.runtime.build import kernel_plan

    s = Session()
    loaded = load_schedule(SEED, Q)
    plan = kernel_plan(loaded, target="cuda", session=s)
    assert calls == Counter(derive_loaded=1, symbolic_build=1)
    d = s.derivation(loaded, "leader")  # what masks asks
    assert calls["derive_loaded"] == 1
    assert plan.b.multicast is None  # CN = 2: the cluster's CTAs share A's box only
    assert plan.a.multicast is not None and plan.a.multicast.closed_form
    assert plan.a.multicast.facts is d.operands["A"].facts  # read from this very derivation
    kernel_plan(load_schedule(SEED, Q), target="cuda", session=s)  # a second gen: no new one
    kernel_plan(loaded, target="triton", session=s)  # Triton issues no multicast: asks nothing
    assert calls["derive_loaded"] == 1
    kernel_plan(loaded, target="cuda", mode="sliced", session=s)
    assert calls["derive_loaded"] == 2


def test_the_lowerings_options_key_where_they_change_the_answer(calls: Counter[str]) -> None:
    """A cluster schedule that splits K: masks refuses it (the schedule's index map does not
    show the K parts), gen's lowering derives it under its cluster work split: two entries,
    and the refusal does not poison gen's."""
    from tilec.errors import UnsupportedError
    from tilec.runtime.build import kernel_plan

    s = Session()
    loaded = load_schedule(SEED, {**Q, "K": 256, "DECOMP": "splitk", "SPLITS": 2})
    with pytest.raises(UnsupportedError, match="one K range"):
        s.derivation(loaded, "leader")
    plan = kernel_plan(loaded, target="cuda", session=s)
    assert plan.work is not None and plan.work.split_k
    assert calls["derive_loaded"] == 2
    kernel_plan(loaded, target="cuda", session=s)
    assert calls["derive_loaded"] == 2


def test_the_same_question_is_answered_once() -> None:
    s = Session()
    first = s.derive_from_file(SEED, Q)
    assert s.derive_from_file(SEED, Q) is first
    assert s.derive_from_file(SEED, Q, mode="sliced") is not first
    assert s.derive_from_file(SEED, {**Q, "M": 640}) is not first
    s.clear()
    assert s.derive_from_file(SEED, Q) is not first


def test_symbolic_builds_are_shared_across_sizes_but_not_across_values() -> None:
    """A positive integer becomes a symbol (M=512 and M=640 build the same schedule over
    symbols); a parameter that stays a value (GROUP=0: the seed branches on it) keys its own."""
    s = Session()
    a = s.symbolic(load_schedule(SEED, Q))
    assert s.symbolic(load_schedule(SEED, {**Q, "M": 640})) is a
    assert s.symbolic(load_schedule(SEED, {**Q, "GROUP": 0})) is not a  # 0 is no symbol
    grouped = s.symbolic(load_schedule(SEED, {**Q, "ORDER": "grouped"}))
    assert grouped is not a and str(grouped.fusion.schedule) != str(a.fusion.schedule)
