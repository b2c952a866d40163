"""buildfuzz: a parallel-build nondeterminism fuzzer (plan → execute → observe → compare → explain → report)."""
