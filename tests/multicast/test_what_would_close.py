"""`tilec explain` names the weakest fact about the parameters that would close a general form,
and the closed form it would give: checked by deriving at the launch it proposes."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy

from tilec.app.cli import main
from tilec.proofs.evaluate import compile_int
from tilec.runtime.session import derive_from_file
from tilec.transforms.multicast.closing import what_would_close
from tilec.transforms.multicast.derive import RANK

EX = Path(__file__).resolve().parents[2] / "examples"


def _values(params):
    return {sympy.Symbol(k, integer=True, positive=True): v for k, v in params.items()
            if isinstance(v, int) and not isinstance(v, bool)}


@pytest.mark.parametrize("path,params,operand,fact", [
    ("my_gemm.py", {"M": 4096, "N": 7800}, "A", "ceiling(N/BN) % CN == 0"),
    ("seed004_persistent_cluster.py", {"CM": 1, "CN": 2, "SMS": 131}, "A", "SMS % CLUSTER == 0"),
])
def test_the_named_fact_closes_it(path, params, operand, fact):
    d = derive_from_file(EX / path, params)
    op = d.operands[operand]
    assert not op.closed_form  # the general form holds only
    closers = what_would_close(op, _values(d.params))
    assert closers and str(closers[0].fact) == fact, [str(c.fact) for c in closers]
    c = closers[0]
    moved = {**params, **{k: b for k, (_, b) in c.change.items()}}
    again = derive_from_file(EX / path, moved)
    op2 = again.operands[operand]
    assert op2.closed_form, op2.notes
    vals = _values(again.params)
    fn = compile_int([c.issue, c.mask], [RANK, *vals])
    for row in op2.table:
        if row.alive:
            issue, mask = fn(row.point["rank"], *vals.values())
            assert (bool(issue), int(mask)) == (row.issue, row.mask), row


def test_explain_prints_it(capsys):
    assert main(["explain", str(EX / "my_gemm.py"), "--param", "M=4096", "--param",
                 "N=7800"]) == 0
    text = capsys.readouterr().out
    assert "would close with ceiling(N/BN) % CN == 0 (N=7800 -> 7680 meets it)" in text


@pytest.mark.parametrize("path,params,vary", [
    ("my_gemm.py", {"M": 256, "N": 1024, "SMS": 4}, {"M": [128, 384, 640], "N": [512, 1536, 520],
                                                    "SMS": [2, 6, 8, 5]}),
    ("seed004_persistent_cluster.py", {"M": 1024, "N": 1024, "SMS": 8, "CN": 2, "CLUSTER": 4},
     {"M": [512, 1536, 1000], "N": [2048, 1024, 1000], "SMS": [4, 12, 16, 10]}),
])
def test_a_proved_closed_form_holds_at_every_launch_meeting_its_facts(path, params, vary):
    """"Proved" means: at any other launch where every listed fact holds, the same symbolic
    issue and mask equal the exact table there (a missing fact would show as a mismatch)."""
    d = derive_from_file(EX / path, params)
    checked = 0
    for name, op in d.operands.items():
        assert op.closed_form and "proved" in op.notes[-1], op.notes
        for k, options in vary.items():
            for v in options:
                q = {**params, k: v}
                again = derive_from_file(EX / path, q)
                vals = _values(again.params)
                if not all(f.condition().xreplace(vals) is sympy.true for f in op.facts):
                    continue
                other = again.operands[name]
                names = [str(s) for s in other.variables[1:]]
                fn = compile_int([op.issue, op.mask], [*op.variables, *vals])
                syms = {str(s): s for s in op.variables}
                assert set(names) <= set(syms)
                for row in other.table:
                    args = [row.point[str(s)] for s in op.variables]
                    assert tuple(map(int, fn(*args, *vals.values()))) == (row.issue, row.mask), (
                        name, q, row.point)
                checked += 1
    assert checked >= 4
