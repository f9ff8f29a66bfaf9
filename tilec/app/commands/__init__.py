"""The ``tilec`` subcommands, one module per command of the table in :mod:`tilec.app.cli`
(``show``, ``gen``, ``masks``, ``explain``, ``viz``, ``bench``, ``tune``, ``sweep``), each with
``run(args) -> exit status`` and, where it has options of its own, ``options(parser)``;
:mod:`.common` holds what they share (parameters, loading, output, the GPU check).  The
reference is docs/cli.md."""
