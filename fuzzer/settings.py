"""Settings for `buildfuzz run` from four places, the first that sets one wins: the command
line, `BUILDFUZZ_*` environment variables, the built project's settings file, and the
defaults.

The file is looked for in the source directory (`--source`, itself set on the command line
or as BUILDFUZZ_SOURCE): `buildfuzz.toml` (keys at the top level) or `[tool.buildfuzz]` in
`pyproject.toml`. Its keys are the long option names (`runs = 40`, `report-json = "x.json"`,
`jitter = false`, `artifact = ["*.so"]`, `output = ["../dist"]`) plus `command`, the build
command; relative paths (single ones and each of a list) are relative to the file's
directory. Click does the layering: the file becomes the command's `default_map`, the
environment its `auto_envvar_prefix`, and
`Context.get_parameter_source` tells the report where each value came from.
"""

from __future__ import annotations

import functools
import os
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated

import click
import msgspec
from click.core import ParameterSource
from msgspec import Meta

from fuzzer.config import shown
from fuzzer.errors import UsageError
from fuzzer.model import SettingSource
from fuzzer.structs import read_table, shown_toml

ENV_PREFIX = "BUILDFUZZ"
FILE_NAMES = ("buildfuzz.toml", "pyproject.toml")
# the report's `source` of each setting (None: click knows none, a parameter never processed)
SOURCES: dict[ParameterSource | None, SettingSource] = {
    ParameterSource.COMMANDLINE: SettingSource.COMMAND_LINE,
    ParameterSource.ENVIRONMENT: SettingSource.ENVIRONMENT,
    ParameterSource.DEFAULT_MAP: SettingSource.FILE,
    ParameterSource.DEFAULT: SettingSource.DEFAULT,
}
NOT_IN_FILE = {"source"}  # the file is found in the source directory


@dataclass(frozen=True)
class SettingsFile:
    where: str = ""  # "proj/pyproject.toml [tool.buildfuzz]"; "" when there is none
    values: dict | None = None  # parameter name → value: the command's default_map


class ConfiguredCommand(click.Command):
    """A command that also reads BUILDFUZZ_* variables and the source tree's settings file."""

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("context_settings", {})["auto_envvar_prefix"] = ENV_PREFIX
        super().__init__(*args, **kwargs)

    def make_context(self, info_name, args, parent=None, **extra):
        if extra.get("resilient_parsing"):  # shell completion: no settings needed, no error wanted
            return super().make_context(info_name, args, parent=parent, **extra)
        # a first, forgiving parse finds --source (the file lives there) and where each value came from
        probe = super().make_context(info_name, list(args), parent=parent, resilient_parsing=True)
        warn_unknown_variables(self, probe)
        found = read_settings(probe)
        try:
            ctx = super().make_context(info_name, args, parent=parent, default_map=found.values, **extra)
        except click.BadParameter as e:
            raise _named_variable(e, probe) from None
        ctx.meta[__name__] = found
        return ctx


def read_settings(ctx: click.Context) -> SettingsFile:
    """The settings file in the source directory, its values checked and converted."""
    source = ctx.params.get("source")
    if source is None:  # a bad --source: the real parse says so
        return SettingsFile()
    tables = [(path, where, table) for path, where, table in map(_table, _candidates(Path(source))) if table]
    if not tables:
        return SettingsFile()
    if len(tables) > 1:
        raise UsageError(f"both {tables[0][1]} and {tables[1][1]} hold buildfuzz settings: keep one")
    path, where, table = tables[0]
    keys = file_keys(ctx.command)
    for key in table:
        _explain_misplaced(keys, key, where)
    given = read_table(table, file_type(ctx.command), shown(where))
    return SettingsFile(where, {keys[key].name: _value(ctx, keys[key], key, getattr(given, keys[key].name),
                                                       path.parent, where) for key in table})


def file_keys(command: click.Command) -> dict[str, click.Parameter]:
    """Key → parameter, for every parameter the file may set."""
    return {_key(param): param for param in command.params if param.name not in NOT_IN_FILE}


@functools.lru_cache(maxsize=None)
def file_type(command: click.Command) -> type[msgspec.Struct]:
    """The file's table as a struct: a field per key, typed as TOML writes the value (msgspec
    refuses any other key, and `runs = 3.5` or `runs = true` for a count)."""
    return msgspec.defstruct("Settings", [(param.name, _toml_type(param) | msgspec.UnsetType,
                                           msgspec.field(default=msgspec.UNSET, name=key))
                                          for key, param in sorted(file_keys(command).items())],
                             forbid_unknown_fields=True, frozen=True)


def _toml_type(param: click.Parameter) -> object:
    if param.nargs == -1:  # the build command: one shell command line, or its words
        return Annotated[str | tuple[str, ...], Meta(description='must be a string or a list of strings, '
                                                                 'e.g. "make -j{jobs}"')]
    if param.multiple:
        return Annotated[tuple[str, ...], Meta(description='must be a list of strings, e.g. ["out/*.so"]')]
    if getattr(param, "is_flag", False):
        return Annotated[bool, Meta(description="must be true or false")]
    if isinstance(param.type, click.types.IntParamType):
        return Annotated[int, Meta(description="must be a whole number")]
    if isinstance(param.type, click.types.FloatParamType):
        return Annotated[float, Meta(description="must be a number")]
    return Annotated[str, Meta(description="must be a string")]


def _key(param: click.Parameter) -> str:
    """An option's long name without dashes (`report-json`); the build command is `command`."""
    return next((opt[2:] for opt in param.opts if opt.startswith("--")), param.name)


def warn_unknown_variables(command: click.Command, ctx: click.Context) -> None:
    """A misspelt BUILDFUZZ_ variable would be silently ignored: say so. A warning, not an
    error: CI systems set variables of their own, and one may share the prefix."""
    known = {_variable(ctx, param) for param in command.params} - {None}
    for name in sorted(n for n in os.environ if n.startswith(ENV_PREFIX + "_") and n not in known):
        click.echo(f"buildfuzz: warning: {name} is not a setting of buildfuzz run (ignored); "
                   f"`buildfuzz run --help` shows them", err=True)


def used(ctx: click.Context) -> dict[str, dict]:
    """Every setting of this invocation: its value, and where it came from."""
    found: SettingsFile = ctx.meta.get(__name__, SettingsFile())
    settings = {}
    for param in ctx.command.params:
        source = ctx.get_parameter_source(param.name)
        option = param.opts[0] if isinstance(param, click.Option) else "after --"
        origins: dict[ParameterSource | None, str | None] = {
            ParameterSource.COMMANDLINE: option, ParameterSource.ENVIRONMENT: _variable(ctx, param),
            ParameterSource.DEFAULT_MAP: found.where}
        settings[_key(param)] = {"value": _json(ctx.params[param.name]), "source": SOURCES.get(source, SettingSource.DEFAULT),
                                 "origin": origins.get(source) or ""}
    return dict(sorted(settings.items()))


def _candidates(source: Path) -> list[tuple[Path, str]]:
    return [(source / "buildfuzz.toml", ""), (source / "pyproject.toml", "tool.buildfuzz")]


def _table(candidate: tuple[Path, str]) -> tuple[Path, str, dict]:
    """(path, how to name it, its buildfuzz table: {} when absent)."""
    path, dotted = candidate
    where = f"{path} [{dotted}]" if dotted else str(path)
    try:
        data = tomllib.loads(path.read_bytes().decode("utf-8"))
    except FileNotFoundError:
        return path, where, {}
    except OSError as e:
        raise UsageError(f"{shown(path)}: cannot read: {e.strerror}") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, ValueError) as e:
        raise UsageError(f"{shown(path)}: not valid UTF-8 TOML: {e}") from None
    for part in dotted.split(".") if dotted else ():
        data = data.get(part, {}) if isinstance(data, dict) else {}
    if not isinstance(data, dict):
        raise UsageError(f"{shown(where)} must be a table")
    return path, where, data


def _explain_misplaced(keys: dict[str, click.Parameter], key: str, where: str) -> None:
    """Two unknown keys deserve more than msgspec's refusal: one set elsewhere, one misspelt."""
    if key in NOT_IN_FILE:
        raise UsageError(f"{shown(where)}: key {shown(key)} is set by --{key} or BUILDFUZZ_{key.upper()}, "
                         "not in the file found there")
    if key not in keys and key.replace("_", "-") in keys:
        raise UsageError(f"{shown(where)}: unknown key {shown(key)} (did you mean {key.replace('_', '-')!r}?); "
                         f"known keys: {', '.join(sorted(keys))}")


def _value(ctx: click.Context, param: click.Parameter, key: str, value: object, base: Path, where: str):
    """One file value, as the option would have given it, or a one-line error naming the key."""
    try:
        return _converted(ctx, param, value, base)
    except click.BadParameter as e:
        raise UsageError(f"{shown(where)}: {key} {e.message}, got {shown_toml(value)}") from None


def _converted(ctx: click.Context, param: click.Parameter, value: object, base: Path):
    if param.nargs == -1:
        return (value,) if isinstance(value, str) else value
    if param.multiple and isinstance(param.type, click.Path):  # --output: relative to the file, as single paths are
        return tuple(param.type.convert(str(base / v), param, ctx) for v in value)
    if param.multiple or getattr(param, "is_flag", False):
        return value
    if isinstance(param.type, click.Path) and value:
        value = str(base / value)  # relative to the file, wherever buildfuzz runs from
    return param.type_cast_value(ctx, value)


def _named_variable(error: click.BadParameter, probe: click.Context) -> Exception:
    """Click's message names the option; the user set the variable."""
    param = error.param
    if param is None or probe.get_parameter_source(param.name) != ParameterSource.ENVIRONMENT:
        return error
    variable = _variable(probe, param)
    return UsageError(f"{variable}={shown(os.environ.get(variable, ''))}: {error.message}")


def _variable(ctx: click.Context, param: click.Parameter) -> str | None:
    if not isinstance(param, click.Option):
        return None
    return param.envvar if isinstance(param.envvar, str) else f"{ctx.auto_envvar_prefix}_{param.name.upper()}"


def _json(value: object) -> object:
    if isinstance(value, (tuple, list)):
        return [_json(v) for v in value]
    return str(value) if isinstance(value, Path) else value
