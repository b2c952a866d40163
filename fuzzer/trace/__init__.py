"""trace: strace output → processes → steps → provenance, hazards and root divergent steps."""
