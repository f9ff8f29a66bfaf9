"""``python -m tilec``: the ``tilec`` command (tilec.app.cli), where the console script is not
installed (a checkout on PYTHONPATH)."""

from tilec.app.cli import entry

entry()
