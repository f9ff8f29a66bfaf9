"""The application around the compiler: the `tilec` command (its subcommands in
:mod:`tilec.app.commands`) and its pictures (:mod:`tilec.app.viz`)."""
