"""The command line's input side: the traces of one FILE, selected, their format told once.

``TraceFile`` opens FILE (``-`` is standard input), streams its documents
(``tracebridge._jsonstream``), picks each one's trace at ``--at``, tells the format once from
the first records unless ``--from`` names it (when several formats read those alike, each
later record is checked as they were: one they read differently, or of another shape, is a
bad record), and reads each trace into typed messages with the options given. A record that
cannot be read is an ``Item`` with a ``Problem``, so that ``--keep-going`` can report it and
go on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from itertools import chain
from typing import Any, TextIO

from ._jsonstream import ESCAPE, JsonDocuments, Record, Shape, UnreadableInput, is_jsonl_name
from .errors import FormatError, TraceError
from .messages import Message
from .options import Option, OptionError, command_line_hint, options_of, parse_options
from .registry import FORMATS, detect_format, get_adapter

__all__ = [
    "EVENTS",
    "READABLE",
    "Item",
    "Problem",
    "TraceFile",
    "looks_like_events",
    "matching",
    "select",
    "open_text",
]

EVENTS = "llama_index_events"
"""A LlamaIndex AgentWorkflow event stream, read by ``llama_index.events_to_messages``."""
READABLE: tuple[str, ...] = (*FORMATS, EVENTS)
"""What ``--from`` accepts: every format, and the event streams that can only be read."""
WHOLE_FILE = "otel"
"""The format whose files are one trace, whatever their number of records."""
DETECT_FROM = 32
"""How many records the format is told from (they must all have its shape)."""
_HEAD_LIMIT = 1000
"""How many records (readable or not) detection looks at before it gives up."""


def looks_like_events(trace: Any) -> bool:
    """A non-empty list of ``{"event", "data"}`` or serialized (``qualified_name``) events."""
    if not isinstance(trace, list) or not trace:
        return False
    return all(
        isinstance(event, dict)
        and (
            (isinstance(event.get("event"), str) and isinstance(event.get("data"), dict))
            or isinstance(event.get("qualified_name"), str)
        )
        for event in trace
    )


@dataclass(frozen=True)
class Problem:
    """Why a record cannot be used: a stable ``code`` and one line of explanation."""

    code: str
    """A ``TraceError`` code, or ``not_json``, ``no_record`` (a JSONL line that is not UTF-8
    text), ``no_such_path``, ``too_deep``, ``internal_error``."""
    message: str
    error: TraceError | None = None


@dataclass(frozen=True)
class Item:
    """One record of FILE: its trace (the document's part at ``--at``), or its problem."""

    file: str
    line: int
    shape: Shape
    document: Any
    trace: Any = None
    problem: Problem | None = None
    read: list[Message] | None = None
    """The trace's messages, when telling its format apart read them already (with no
    options): they are not read again."""
    written_as: Shape | None = None
    """The shape its conversion is written in, when not ``shape``: a JSONL file read as one
    trace (OpenTelemetry) is one JSON line, so that the output is JSONL as FILE is."""
    element: int | None = None
    """Its place (1-based) in FILE's top-level array of traces; None in JSONL or a single
    document. Elements may share a line (``json.dump`` writes the array on one): this, not
    ``line``, tells them apart."""

    def place(self) -> str:
        """``line N``, or ``element K (line N)`` in an array of traces."""
        if self.element is None:
            return f"line {self.line}"
        return f"element {self.element} (line {self.line})"

    def where(self) -> str:
        """``FILE: line N: `` (``FILE: element K (line N): `` in an array) in a file of
        several records; nothing for a single document."""
        return "" if self.shape == "json" else f"{self.file}: {self.place()}: "


@dataclass(frozen=True)
class FormatCheck:
    """What a file's first records told of its format when several formats had their shape
    and read them alike (Chat Completions and Galtea turns without tool calls): the format
    taken, the candidates (the format taken first), and what it was told from (``its first
    32 records``). Each later record is checked against them (``told_apart``)."""

    format: str
    candidates: tuple[str, ...]
    told: str

    @functools.cached_property
    def adapters(self) -> dict[str, Any]:
        """Each candidate's adapter, in order."""
        return {name: get_adapter(name) for name in self.candidates}

    def told_apart(self, item: Item) -> Item:
        """A record after the first ones, checked as they were: when several formats read
        those alike, the one taken must read this record as the others do (else it is
        ambiguous, as it is on its own), and it must still have the shape of the format taken.

        It is kept cheap: the candidates' shape tests are asked first (a record that only the
        format taken has the shape of is read once, as before), and the reading that tells
        the formats apart is the record's reading (``Item.read``), not done again."""
        if item.problem is not None:
            return item
        names = [name for name, adapter in self.adapters.items()
                 if _has_shape(adapter, item.trace)]
        if names == [self.format]:
            return item
        if self.format not in names:
            found = matching(item.trace, READABLE)
            if not found:
                return item  # no format's shape: its reader says what is wrong, as before
            return replace(item, problem=Problem("unknown_format", (
                f"it has the shape of {' or '.join(found)}, not of {self.format}, which this "
                f"file is read as (told from {self.told}); one file holds one format: pass "
                f"--from FORMAT")))
        readings: list[list[Message]] = []
        try:  # the format taken is first: the candidates keep their order
            readings = [self.adapters[name].to_messages(item.trace) for name in names]
        except TraceError:
            pass  # one refuses it: detect_format says whether all do, alike
        except Exception:  # a reader's bug, or a trace nested too deeply: reading it tells
            return item
        if readings and all(reading == readings[0] for reading in readings):
            return replace(item, read=readings[0])
        try:  # read differently, or refused by some: said as for this record alone
            detect_format(item.trace, candidates=names)
        except FormatError as exc:
            return replace(item, problem=Problem("unknown_format", command_line_hint(str(exc))))
        except Exception:  # refused alike by every format (or a bug): reading it tells
            return item
        return item


class TraceFile:
    """The records of one FILE, and how to read them (format, options)."""

    def __init__(
        self,
        path: str,
        stdin: TextIO,
        *,
        source: str,
        at: str | None,
        from_options: list[str],
        allow_pending: bool,
        notice: Callable[[str], object],
    ) -> None:
        self.name = path
        self.at = at
        self.format: str | None = None if source == "auto" else source
        self._pairs = from_options
        self._allow_pending = allow_pending
        self._notice = notice
        self.options: dict[str, Any] = {}
        self.known_options: dict[str, Option] = {}
        self.check: FormatCheck | None = None
        """When several formats had the shape of the first records and read them alike: the
        check each later record passes too."""
        self._read: Callable[..., list[Message]] | None = None
        self._elements = 0
        """How many elements of a top-level array of traces have been read."""
        self._stream = stream = stdin if path == "-" else open_text(path)
        self._own = path != "-"
        self.documents = JsonDocuments(
            stream, path, self._is_record, jsonl=path != "-" and is_jsonl_name(path)
        )

    def close(self) -> None:
        if self._own:
            self._stream.close()

    # --- records ---------------------------------------------------------------------------

    def items(self) -> Iterator[Item]:
        """Every record, with its trace or its problem; the format is settled before the first."""
        items: Iterator[Item] = (self._item(record) for record in self.documents)
        if self.format is None:
            head: list[Item] = []
            readable = 0
            for item in items:
                head.append(item)
                readable += item.problem is None
                if readable >= DETECT_FROM or len(head) >= _HEAD_LIMIT:
                    break
            if readable:
                self.format = self._detect([item for item in head if item.problem is None])
            elif len(head) >= _HEAD_LIMIT:
                raise FormatError(f"{self.name}: none of the first {_HEAD_LIMIT} records can be "
                                  f"read, so there is nothing to tell the format from")
            if self.check is not None:
                items = map(self.check.told_apart, items)
            items = chain(head, items)
        if self.format is not None:  # else every record has a problem: none is read
            self._prepare()
        if self.format == WHOLE_FILE:
            items = self._whole(items)
        yield from items

    def _whole(self, items: Iterator[Item]) -> Iterator[Item]:
        """The file as one record: OpenTelemetry spans of one trace spread over the batches
        of a file (the file exporter writes one batch per line), so they are read together
        (held in memory: a trace is rebuilt from all of its spans)."""
        first: Item | None = None
        traces = []
        for item in items:
            if item.problem is not None:
                yield item
                return
            first = first or item
            traces.append(item.trace)
        if first is not None:
            trace = traces[0] if len(traces) == 1 else traces
            written: Shape = "jsonl" if first.shape == "jsonl" else "json"
            yield Item(self.name, first.line, "json", trace, trace, written_as=written)

    def _item(self, record: Record) -> Item:
        shape = self.documents.shape or "json"
        element = None
        if shape == "array":  # every record of an array is one of its elements, in order
            self._elements += 1
            element = self._elements
        if record.problem is not None:
            return Item(self.name, record.line, shape, None,
                        problem=Problem(record.code, record.problem), element=element)
        trace = record.value
        if self.at is not None:
            trace, missing = select(record.value, self.at)
            if missing is not None:
                return Item(self.name, record.line, shape, record.value,
                            problem=Problem("no_such_path", missing), element=element)
        return Item(self.name, record.line, shape, record.value, trace, element=element)

    def _is_record(self, element: Any) -> bool:
        """Is an element of a top-level array a conversation of its own?"""
        if self.at is not None:
            return select(element, self.at)[1] is None
        if isinstance(element, list):
            return True  # no format's message is a list, so a list here is a conversation
        names = [self.format] if self.format is not None else READABLE
        return bool(matching(element, names))

    # --- the format ------------------------------------------------------------------------

    def _detect(self, head: list[Item]) -> str:
        shaped = [(item, names) for item in head if (names := matching(item.trace, READABLE))]
        if not shaped:
            first = head[0]
            raise FormatError(
                f"{first.where()}cannot tell the format of this {type(first.trace).__name__}: "
                f"it matches none of {', '.join(READABLE)}; pass --from FORMAT"
            )
        common = list(shaped[0][1])
        for item, names in shaped[1:]:
            if not set(common) & set(names):
                raise FormatError(
                    f"{self.name}: {shaped[0][0].place()} has the shape of "
                    f"{' or '.join(shaped[0][1])}, {item.place()} of {' or '.join(names)}; "
                    f"one file holds one format: pass --from FORMAT"
                )
            common = [name for name in common if name in names]
        candidates = [name for name in common if name != EVENTS]
        if len(candidates) > 1:
            for item, _ in shaped:
                try:
                    detect_format(item.trace, candidates=candidates)
                except FormatError as exc:
                    raise FormatError(f"{item.where()}{command_line_hint(str(exc))}") from None
                except TraceError:
                    continue  # broken the same way in every format: it fails when read
        if shaped[0][0].shape == "json":
            told = "its shape"
        elif len(shaped) == 1:
            told = shaped[0][0].place()
        else:
            told = f"its first {len(shaped)} records"
        # a whole file is one trace: it has no later records
        if len(candidates) > 1 and common[0] != WHOLE_FILE:
            self.check = FormatCheck(common[0], tuple(candidates), told)
        self._notice(f"reading {self.name} as {common[0]} (told from {told}; --from to "
                     f"choose)")
        return common[0]

    def _prepare(self) -> None:
        assert self.format is not None
        if self.format == EVENTS:
            self._read = get_adapter("llama_index").events_to_messages  # type: ignore[attr-defined]
        else:
            self._read = get_adapter(self.format).to_messages
        self.known_options = options_of(self._read, None)
        self.options = parse_options(self._pairs, self.known_options, "--from-option")
        if self._allow_pending:
            if self.options.get("allow_pending") is False:
                raise OptionError("--allow-pending and --from-option allow_pending=false say "
                                  "the opposite: give one of them")
            self.options["allow_pending"] = True

    # --- reading ---------------------------------------------------------------------------

    def typed(self, trace: Any) -> list[Message]:
        """The trace's typed messages; raises ``TraceError`` for an invalid one."""
        assert self._read is not None, "items() settles the format first"
        return self._read(trace, **self.options)

    def messages(self, item: Item) -> list[Message]:
        """The typed messages of a readable record (see ``typed``)."""
        if item.read is not None and not self.options:
            return item.read
        return self.typed(item.trace)

    def hint(self, message: str) -> str:
        """An error message in the command line's spelling."""
        return command_line_hint(message, reader=self.known_options, allow_pending_flag=True,
                                 at=self.at)


def _has_shape(adapter: Any, trace: Any) -> bool:
    """``adapter.detect(trace)``; a shape test that fails on a value has answered no."""
    try:
        return bool(adapter.detect(trace))
    except Exception:  # see ``matching``
        return False


def matching(trace: Any, names: tuple[str, ...] | list[str]) -> list[str]:
    """The formats among ``names`` whose shape ``trace`` has.

    A shape test that fails on a value has answered "not this shape" for it.
    """
    found = []
    for name in names:
        try:
            if name == EVENTS:
                matched = looks_like_events(trace)
            else:
                matched = get_adapter(name).detect(trace)
        except Exception:  # see the docstring; reading the trace would fail the same way
            matched = False
        if matched:
            found.append(name)
    return found


def select(document: Any, at: str) -> tuple[Any, str | None]:
    """The part of ``document`` at ``at`` (dot-separated keys or list positions), or why not."""
    value = document
    for step in at.split("."):
        if isinstance(value, dict) and step in value:
            value = value[step]
        elif isinstance(value, list) and _is_position(step) and int(step) < len(value):
            value = value[int(step)]
        else:
            return None, f"--at {at}: there is no {step!r} here"
    return value, None


def _is_position(step: str) -> bool:
    """A list position is ASCII digits only: a superscript or full-width digit is a key."""
    return step.isascii() and step.isdigit()


def open_text(path: str) -> TextIO:
    """A UTF-8 text file, read lazily and as written (a byte-order mark is skipped; no newline
    translation: a JSONL line ends at ``\n`` only). Bytes that are not UTF-8 are escaped
    (``ESCAPE``), so that ``JsonDocuments`` fails the JSONL line holding them, not the file."""
    try:  # the caller closes it
        return open(path, encoding="utf-8-sig", errors=ESCAPE, newline="\n")
    except OSError as exc:
        raise UnreadableInput(f"cannot read {path}: {exc}") from None
