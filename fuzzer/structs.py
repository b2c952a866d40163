"""structs: JSON and TOML through msgspec types, the one place that knows msgspec's edges.

A type (a `msgspec.Struct`, or a container of them) says the shape once: `encode` and
`decode` move it through the store's JSON, `to_data` gives the plain dicts and lists it
encodes to, `to_builtins` and `convert` give and take the builtins the JSON report is
written from and read back into (fuzzer/report/json_format.py), and `read_table` checks a
settings or scenario file decoded by tomllib, turning msgspec's error into the one line
the author reads (the file, the key, what was expected, what was found). What a key
expects is said where the type is declared, as `Annotated[T, Meta(description="must be ...")]`.

File names that are not UTF-8 arrive as lone surrogates (surrogateescape), which msgspec's
JSON refuses both ways; the json module escapes them (`"\\udcff"`), as every store so far
holds them, so such data takes the json module's path.
"""

from __future__ import annotations

import functools
import json
import re
import types
import typing
from pathlib import Path
from typing import Any, Callable, TypeVar

import msgspec

from fuzzer.errors import UsageError

T = TypeVar("T")
_WHERE = re.compile(r" - at `\$(.*)`$")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")


def _enc_hook(obj: object) -> object:
    if isinstance(obj, Path):
        return str(obj)
    for base in (str, int, float):  # a subclass (a setting as its option read it, cli.options.JobsRange) as its base
        if isinstance(obj, base):
            return base(obj)
    raise NotImplementedError(f"cannot encode {type(obj).__name__}")


def _dec_hook(kind: type, obj: object) -> object:
    if kind is Path and isinstance(obj, str):
        return Path(obj)
    raise NotImplementedError(f"cannot decode {type(obj).__name__} as {kind.__name__}")


_ENCODER = msgspec.json.Encoder(enc_hook=_enc_hook)


@functools.lru_cache(maxsize=None)
def _decoder(kind: Any) -> msgspec.json.Decoder:
    return msgspec.json.Decoder(kind, dec_hook=_dec_hook)


def encode(obj: object) -> bytes:
    """JSON bytes of a struct (or of builtins holding structs)."""
    try:
        return _ENCODER.encode(obj)
    except UnicodeEncodeError:  # a lone surrogate: a file name that is not UTF-8
        return json.dumps(to_builtins(obj)).encode()


def decode(data: bytes | str, kind: type[T]) -> T:
    """`data` checked and converted to `kind`; raises msgspec.ValidationError if it does not fit."""
    try:
        return _decoder(kind).decode(data)
    except msgspec.ValidationError:
        raise
    except msgspec.DecodeError:  # msgspec reads no lone surrogate escape ("\udcff"); the json module does
        return convert(json.loads(data), kind)


def convert(data: object, kind: type[T]) -> T:
    """Builtins (a decoded report's dict, a TOML table) checked and converted to `kind`."""
    try:
        return msgspec.convert(data, kind, dec_hook=_dec_hook)
    except UnicodeEncodeError:  # msgspec quoting, in its error, a name that was not UTF-8 (a lone surrogate)
        raise msgspec.ValidationError("a key or value this buildfuzz does not know (not UTF-8)") from None


def to_data(obj: object) -> Any:
    """A struct as the JSON it encodes to, in builtins: dicts, lists, strings, numbers."""
    return json.loads(encode(obj))


def to_builtins(obj: object) -> Any:
    """A struct as builtins for a writer of its own text (the JSON report's json.dumps):
    unlike `to_data`, tuples stay tuples and a float stays as Python spells it (inf, nan),
    where msgspec's JSON would write null."""
    return msgspec.to_builtins(obj, enc_hook=_enc_hook)


def read_table(table: dict, kind: type[T], where: str) -> T:
    """A TOML table (tomllib's dict) as `kind`, or a UsageError naming `where`, the key,
    what it must be and what it was."""
    try:
        return convert(table, kind)
    except msgspec.ValidationError as e:
        raise UsageError(f"{where}: {problem(str(e), table, kind)}") from None


def problem(message: str, table: dict, kind: type) -> str:
    """msgspec's `Expected ... - at `$.expect.kind`` as the author's terms: the dotted key,
    what it must be (the field's description), what the file held."""
    found = _WHERE.search(message)
    steps = _steps(found.group(1) if found else "")
    what = message[:found.start()] if found else message
    if match := re.fullmatch(r"Object contains unknown field `(.+)`", what):
        inner = _type_at(kind, steps)
        known = ", ".join(_key(steps + [f.encode_name]) for f in msgspec.structs.fields(inner))
        return f"unknown key {_key(steps + [match.group(1)])!r}; known keys: {known}"
    if match := re.fullmatch(r"Object missing required field `(.+)`", what):
        return f"missing key {_key(steps + [match.group(1)])!r}"
    while steps and isinstance(steps[-1], int):  # an element's error is its key's: `run.jobs`
        steps.pop()
    expected = _description(kind, steps) or what.rstrip()
    return f"{_key(steps)} {expected}, got {shown_toml(_value_at(table, steps))}"


def _steps(path: str) -> list[str | int]:
    return [name if index == "" else int(index) for name, index in _STEP.findall(path)]


def _key(steps: list[str | int]) -> str:
    """The dotted key as the author sees it; inside a list of tables, from the list's name
    on (`culprits.kind`, not `expect.culprits[0].kind`)."""
    last = max((i for i, s in enumerate(steps) if isinstance(s, int)), default=None)
    names = steps if last is None else [steps[last - 1], *steps[last + 1:]]
    return ".".join(str(n) for n in names)


def _value_at(table: object, steps: list[str | int]) -> object:
    for step in steps:
        table = table[step]
    return table


def _type_at(kind: Any, steps: list[str | int]) -> Any:
    """The struct (or container) declared at `steps` inside `kind`."""
    for step in steps:
        kind = _element(kind, step)
    return _unwrapped(kind, lambda k: isinstance(k, type) and issubclass(k, msgspec.Struct))


def _element(kind: Any, step: str | int) -> Any:
    """The declared type of field `step` of a struct, or of an element of a tuple or list."""
    if isinstance(step, int):
        return typing.get_args(_unwrapped(kind, lambda k: typing.get_origin(k) in (tuple, list)))[0]
    struct = _unwrapped(kind, lambda k: isinstance(k, type) and issubclass(k, msgspec.Struct))
    return next(f.type for f in msgspec.structs.fields(struct) if f.encode_name == step)


def _unwrapped(kind: Any, wanted: Callable[[Any], bool]) -> Any:
    """`kind` out of its Annotated wrapper, or the member of its union `wanted` accepts."""
    if typing.get_origin(kind) is typing.Annotated:
        return _unwrapped(typing.get_args(kind)[0], wanted)
    if typing.get_origin(kind) in (typing.Union, types.UnionType):
        return next(m for m in map(lambda a: _unwrapped(a, wanted), typing.get_args(kind)) if wanted(m))
    return kind


def _description(kind: Any, steps: list[str | int]) -> str | None:
    """What the field at `steps` must be: the description declared on it (on the field's
    whole type first, then on a member of its union)."""
    declared = functools.reduce(_element, steps, kind)
    candidates = [declared, *typing.get_args(declared)]
    for candidate in candidates:
        if typing.get_origin(candidate) is typing.Annotated:
            for meta in typing.get_args(candidate)[1:]:
                if isinstance(meta, msgspec.Meta) and meta.description:
                    return meta.description
    return None


def shown_toml(value: object) -> str:
    """A file's value as its author wrote it, shortened: `5`, `"abc"`, `[5]`, `true`."""
    text = str(value).lower() if isinstance(value, bool) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
