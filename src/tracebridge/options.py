"""Adapter options as typed values: what each adapter accepts, parsed from ``KEY=VALUE`` text.

The options are read from the adapters' own signatures, so an adapter declares an option by
having it: every keyword-only parameter of ``to_messages`` / ``from_messages`` whose type the
command line can spell (``bool``, a ``Literal`` of strings, ``str``, ``int``, a collection of
strings) is an option. The choices of a ``drop`` list are the adapter's ``DROPPABLE`` names.

>>> [str(option) for option in reader_options("openai_chat").values()]
['allow_pending=true|false (default: false)']
>>> parse_options(["allow_pending=false"], reader_options("openai_chat"), "--from-option")
{'allow_pending': False}
"""

from __future__ import annotations

import ast
import functools
import inspect
import json
import re
import types
import typing
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Literal, Union

from .registry import FORMATS, get_adapter

__all__ = [
    "AdapterOptions",
    "Option",
    "OptionError",
    "command_line_hint",
    "options_of",
    "parse_options",
    "reader_options",
    "writer_options",
]

Kind = Literal["bool", "choice", "list", "text", "int"]

_COLLECTIONS = frozenset(
    {list, tuple, set, frozenset, Collection, Sequence, Iterable, typing.AbstractSet}
)


class OptionError(ValueError):
    """An option the adapter does not have, or a value of the wrong kind (one line)."""


@dataclass(frozen=True)
class Option:
    """One keyword option of an adapter function."""

    name: str
    kind: Kind
    default: Any
    choices: tuple[str, ...] | None = None
    """The accepted values (for a list: of each item); None when any text goes."""

    def __str__(self) -> str:
        shown = {"bool": "true|false", "text": "TEXT", "int": "N", "list": "NAME,..."}
        value = "|".join(self.choices or ()) if self.kind == "choice" else shown[self.kind]
        notes = []
        if self.kind == "list" and self.choices:
            notes.append(", ".join(self.choices))
        notes.append(f"default: {_spell(self.default)}")
        return f"{self.name}={value} ({'; '.join(notes)})"

    def parse(self, text: str, flag: str, pair: str) -> Any:
        """The value ``text`` stands for; ``OptionError`` when it is not one."""

        def wrong(expected: str) -> OptionError:
            return OptionError(f"{flag} {pair!r}: {self.name} takes {expected}")

        if self.kind == "bool":
            if text.lower() in ("true", "false"):
                return text.lower() == "true"
            raise wrong(f"true or false, got {text!r}")
        if self.kind == "int":
            try:
                return int(text)
            except ValueError:
                raise wrong(f"a whole number, got {text!r}") from None
        if self.kind == "text":
            return text
        if self.kind == "choice":
            value = _unquoted(text)
            if self.choices is not None and value not in self.choices:
                raise wrong(f"one of {', '.join(self.choices)}; got {text!r}")
            return value
        items = _list(text)
        if items is None:
            raise wrong(f"a comma list or a JSON list of names, got {text!r}")
        unknown = [item for item in items if self.choices is not None and item not in self.choices]
        if unknown:
            raise wrong(f"names from {', '.join(self.choices or ())}; got {', '.join(unknown)}")
        return tuple(items)


def _spell(value: Any) -> str:
    if value is None or value == ():
        return "none"
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


def _unquoted(text: str) -> str:
    try:
        value = json.loads(text)
    except ValueError:
        return text
    return value if isinstance(value, str) else text


def _list(text: str) -> list[str] | None:
    """``a,b``, ``["a", "b"]``, or the Python spelling ``['a']`` a Python hint shows."""
    stripped = text.strip()
    if not stripped.startswith(("[", "(", "{")):
        return [item.strip() for item in stripped.split(",") if item.strip()]
    for load in (json.loads, ast.literal_eval):
        try:
            value = load(stripped)
        except (ValueError, SyntaxError, MemoryError, RecursionError):
            continue
        if isinstance(value, (list, tuple, set)) and all(isinstance(v, str) for v in value):
            return sorted(value) if isinstance(value, set) else list(value)
    return None


def _option(name: str, hint: Any, default: Any, droppable: tuple[str, ...] | None) -> Option | None:
    """The option a parameter of type ``hint`` makes, or None when text cannot spell it."""
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if origin in (Union, types.UnionType):
        kept = [arg for arg in args if arg is not type(None)]
        if len(kept) != 1:
            return None
        hint = kept[0]
        origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint is bool:
        return Option(name, "bool", default)
    if hint is int:
        return Option(name, "int", default)
    if hint is str:
        return Option(name, "text", default)
    if origin is Literal and all(isinstance(arg, str) for arg in args):
        return Option(name, "choice", default, tuple(args))
    if origin in _COLLECTIONS and args and args[0] is str:
        return Option(name, "list", default, droppable if name == "drop" else None)
    return None


def options_of(
    function: Callable[..., Any], droppable: tuple[str, ...] | None
) -> dict[str, Option]:
    """The options ``function`` takes as keyword-only parameters the command line can spell."""
    try:
        hints = typing.get_type_hints(function)
    except (NameError, TypeError):
        hints = {}
    found: dict[str, Option] = {}
    for parameter in inspect.signature(function).parameters.values():
        if parameter.kind is not parameter.KEYWORD_ONLY:
            continue
        default = None if parameter.default is parameter.empty else parameter.default
        option = _option(parameter.name, hints.get(parameter.name, str), default, droppable)
        if option is not None:
            found[parameter.name] = option
    return found


def _droppable(module: Any) -> tuple[str, ...] | None:
    names = getattr(module, "DROPPABLE", None)
    return tuple(names) if isinstance(names, (tuple, list)) else None


def reader_options(format_name: str, reader: Callable[..., Any] | None = None) -> dict[str, Option]:
    """The options of a format's ``to_messages`` (or of ``reader``, when given)."""
    module = get_adapter(format_name)
    return options_of(reader or module.to_messages, None)


def writer_options(format_name: str) -> dict[str, Option]:
    """The options of a format's ``from_messages``."""
    module = get_adapter(format_name)
    return options_of(module.from_messages, _droppable(module))


class AdapterOptions:
    """An adapter's declared options, its module's ``options``: ``reader`` (what
    ``to_messages`` accepts) and ``writer`` (what ``from_messages`` accepts, a ``drop`` list's
    choices being the losses it can accept by name), read from the signatures when asked.

    >>> from tracebridge.adapters import openai_chat
    >>> [str(option) for option in openai_chat.options.reader.values()]
    ['allow_pending=true|false (default: false)']
    """

    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    @property
    def reader(self) -> dict[str, Option]:
        """``reader_options`` of this adapter."""
        return reader_options(self.name)

    @property
    def writer(self) -> dict[str, Option]:
        """``writer_options`` of this adapter."""
        return writer_options(self.name)

    def __repr__(self) -> str:
        return f"AdapterOptions({self.name!r})"


def parse_options(pairs: Sequence[str], options: dict[str, Option], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as typed keyword arguments; ``OptionError`` for the first bad one.

    A list option given twice collects both (``drop=a`` and ``drop=b`` is ``drop=a,b``).
    """
    parsed: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        key = key.strip()
        if not sep or key not in options:
            accepted = ", ".join(options) or "none (this format takes no options)"
            raise OptionError(f"{flag} {pair!r}: expected KEY=VALUE with KEY one of: {accepted}")
        option = options[key]
        value = option.parse(text, flag, pair)
        if key in parsed:
            if option.kind != "list":
                raise OptionError(f"{flag} {pair!r}: {key} is given twice")
            value = (*parsed[key], *value)
        parsed[key] = value
    return parsed


@functools.cache
def _option_names() -> tuple[frozenset[str], frozenset[str]]:
    """The names of every format's reader options and writer options."""
    readers: set[str] = set()
    writers: set[str] = set()
    for name in FORMATS:
        readers.update(reader_options(name))
        writers.update(writer_options(name))
    return frozenset(readers), frozenset(writers)


_NAME = r"""(?:'[^'\\]*'|"[^"\\]*")"""
_DROP = re.compile(
    rf"\bdrop=[\[\{{\(]\s*({_NAME}(?:\s*,\s*{_NAME})*)?\s*,?\s*[\]\}}\)]"
)
_FLAG_TRUE = re.compile(r"\b([a-z_]+)=True\b")
_NAMES = re.compile(r"['\"]([^'\"]+)['\"]")
_FILTER = re.compile(  # otel's ambiguous_trace: what selects each conversation (hex ids)
    r"(?P<lead>filter: | \| )span_id=(?P<span>[0-9a-f]+)(?P<at> \(its last call, at .*?\); )"
    r"trace_id=(?P<traces>[0-9a-f]+(?:, [0-9a-f]+)*)(?P<session>; session_id=)?"
)
_QUOTED = re.compile(r"""(?<!\w)(?:'(?:[^'\\\n]|\\.)*'|"(?:[^"\\\n]|\\.)*")""")
"""A quoted value (Python's repr of a string): text from the user's input, never rewritten.
A quote after a letter is an apostrophe (``the tool's``), not the start of one."""
_SOURCE = re.compile(r"pass source=<format>|pass source= one of them")
_PASS_KEY = re.compile(r"\bpass its '([A-Za-z_][A-Za-z0-9_]*)'")
"""A key of a wrapper to read the trace from (Swarm's ``Response`` record): ``--at KEY``."""
_OMITTED = re.compile(r" \(recorded in omitted\)")
"""The ``omitted`` list is a Python parameter: the command line has none to record in."""


def command_line_hint(
    message: str,
    *,
    reader: dict[str, Option] | None = None,
    allow_pending_flag: bool = False,
    at: str | None = None,
) -> str:
    """``message`` with its Python spellings (``drop=['x']``, ``flag=True``, ``source=``, an
    OpenTelemetry filter ``span_id=...``) turned into the flags that do the same on the
    command line.

    ``name=True`` becomes a flag only when ``name`` is an option (of ``reader``, else of some
    format); anything else (a message field, as in "no error flag (is_error=True)") is kept.
    A quoted value (``unknown role 'fold_tools=True'``) is the input's own text: it is never
    rewritten, so the message says what the input holds. ``at``: the ``--at PATH`` the trace
    was read at, under which a key the message names to read instead is.
    """

    def drop(match: re.Match[str]) -> str:
        return "--to-option drop=" + ",".join(_NAMES.findall(match.group(1) or ""))

    def flag(match: re.Match[str]) -> str:
        name = match.group(1)
        if name == "allow_pending" and allow_pending_flag:
            return "--allow-pending"
        if reader is not None and name in reader:
            return f"--from-option {name}=true"
        readers, writers = _option_names()
        if name in writers:
            return f"--to-option {name}=true"
        if name in readers:
            return f"--from-option {name}=true"
        return match.group(0)  # not an option (a field, as in "is_error=True"): as written

    def selected(match: re.Match[str]) -> str:
        session = "; --from-option session_id=" if match.group("session") else ""
        return (f"{match.group('lead')}--from-option span_id={match.group('span')}"
                f"{match.group('at')}--from-option trace_id={match.group('traces')}{session}")

    def source(match: re.Match[str]) -> str:
        if match.group(0) == "pass source=<format>":
            return "pass --from FORMAT"
        return "pass --from with one of them"

    message = _outside_quotes(_DROP, drop, message)
    message = _outside_quotes(_FLAG_TRUE, flag, message)
    message = _outside_quotes(_FILTER, selected, message)
    below = f"{at}." if at else ""  # the key is under the record's trace at --at PATH
    message = _outside_quotes(_PASS_KEY, lambda match: f"pass --at {below}{match.group(1)}",
                              message)
    message = _outside_quotes(_OMITTED, lambda match: "", message)
    return _outside_quotes(_SOURCE, source, message)


def _outside_quotes(
    pattern: re.Pattern[str], spell: Callable[[re.Match[str]], str], message: str
) -> str:
    """``pattern.sub(spell, message)``, but for matches that start inside a quoted value."""
    quoted = [found.span() for found in _QUOTED.finditer(message)]

    def outside(match: re.Match[str]) -> str:
        at = match.start()
        if any(start <= at < end for start, end in quoted):
            return match.group(0)
        return spell(match)

    return pattern.sub(outside, message)
