"""buildfuzz: a parallel-build nondeterminism fuzzer (plan → execute → observe → compare → explain → report)."""

__version__ = "0.1.0"  # the one place it is written: pyproject.toml reads it, reports carry it
