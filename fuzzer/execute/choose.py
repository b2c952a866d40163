"""Which executor a campaign's builds go to, from its configuration."""

from __future__ import annotations

from fuzzer.config import FuzzConfig
from fuzzer.execute.executor import Executor
from fuzzer.execute.local import BuildSpec, LocalExecutor


def executor_factory(config: FuzzConfig):
    """A callable BuildSpec → Executor for this configuration (this machine, for now)."""

    def make(spec: BuildSpec) -> Executor:
        return LocalExecutor(spec)

    return make
