"""Suggested fixes, proven by rebuilds: one module per remedy kind, `proof` runs them, `fixes` writes them."""
