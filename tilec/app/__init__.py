"""The application around the compiler: the `tilec` command, schedule files and their
parameters, the on-disk cache, progress bars and pictures."""
