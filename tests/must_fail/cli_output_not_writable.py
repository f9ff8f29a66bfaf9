"""tilec: -o into a folder that does not exist."""

from __future__ import annotations

from tilec.errors import TilecError

EXPECT = TilecError, "k.py': No such file or directory"
ARGV = ["gen", "{examples}/gemm_basic.py", "-o", "{tmp}/no/such/dir/k.py"]
