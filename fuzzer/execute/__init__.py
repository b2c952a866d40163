"""execute: one build under one perturbation (workspace, guard, jitter, local executor)."""
