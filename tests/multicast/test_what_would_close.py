"""`tilec explain` names the weakest fact about the parameters that would close a general form,
and the closed form it would give: checked by deriving at the launch it proposes."""

from __future__ import annotations

from pathlib import Path

import pytest
import sympy

from tilec.cli import main
from tilec.ir.pyeval import compile_int
from tilec.loader import derive_from_file
from tilec.transforms.multicast import RANK
from tilec.transforms.multicast_closed import what_would_close

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
