"""kforge's PyTorch side: the KernelBench importer (import_kernelbench), spec -> torch
(spec_torch) and the PyTorch baseline timer (baseline). Run through the `kforge import` and
`kforge baseline` commands, which locate the Python interpreter and set PYTHONPATH."""

# Exit codes shared with the C++ CLI (cli/commands.h).
EXIT_OK = 0
EXIT_FAILURE = 1
EXIT_USER_ERROR = 2
EXIT_ENVIRONMENT = 3
