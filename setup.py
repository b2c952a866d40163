"""What pyproject.toml cannot say: the wheel carries the repository's scenarios/ as
fuzzer/bundled_scenarios, so `buildfuzz scenarios list` and `scenarios check --bundled`
work from an installed wheel. scenarios/ stays at the top of the repository, where the
README's commands and the tests use it (and where an editable install finds it)."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class BuildPyWithScenarios(build_py):
    def run(self):
        super().run()
        if not self.editable_mode:
            target = Path(self.build_lib) / "fuzzer" / "bundled_scenarios"
            shutil.rmtree(target, ignore_errors=True)  # a scenario removed since the last build must go
            shutil.copytree("scenarios", target, ignore=shutil.ignore_patterns("__pycache__", "*.py[cod]"))


setup(cmdclass={"build_py": BuildPyWithScenarios})
