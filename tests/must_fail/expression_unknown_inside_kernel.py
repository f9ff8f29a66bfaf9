"""a Triton expression that uses a value the kernel does not have (SMS)."""

from __future__ import annotations

import sympy

from tilec.codegen.triton.expr import print_expr
from tilec.errors import UnsupportedError

EXPECT = UnsupportedError, "triton: expression depends on SMS, unknown inside the kernel (known: t)"


def program() -> None:
    t = sympy.Symbol("t", integer=True, nonnegative=True)
    sms = sympy.Symbol("SMS", integer=True, positive=True)
    print_expr(t + sms, {t: "pid"})
