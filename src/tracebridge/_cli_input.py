"""The command line's input side: the traces of one FILE, selected, their format told once.

``TraceFile`` opens FILE (``-`` is standard input), streams its documents
(``tracebridge._jsonstream``), picks each one's trace at ``--at``, tells the format once from
the first records unless ``--from`` names it, and reads each trace into typed messages with
the options given. A record that cannot be read is an ``Item`` with a ``Problem``, so that
``--keep-going`` can report it and go on.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from itertools import chain
from typing import Any, TextIO

from ._jsonstream import ESCAPE, JsonDocuments, Record, Shape, UnreadableInput, is_jsonl_name
from .errors import FormatError, TraceError
from .messages import Message
from .options import Option, command_line_hint, options_of, parse_options
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

    def where(self) -> str:
        """``FILE: line N: `` in a file of several records; nothing for a single document."""
        return "" if self.shape == "json" else f"{self.file}: line {self.line}: "


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
        self._read: Callable[..., list[Message]] | None = None
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
            yield Item(self.name, first.line, "json", trace, trace)

    def _item(self, record: Record) -> Item:
        shape = self.documents.shape or "json"
        if record.problem is not None:
            return Item(self.name, record.line, shape, None,
                        problem=Problem(record.code, record.problem))
        trace = record.value
        if self.at is not None:
            trace, missing = select(record.value, self.at)
            if missing is not None:
                return Item(self.name, record.line, shape, record.value,
                            problem=Problem("no_such_path", missing))
        return Item(self.name, record.line, shape, record.value, trace)

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
                    f"{self.name}: line {shaped[0][0].line} has the shape of "
                    f"{' or '.join(shaped[0][1])}, line {item.line} of {' or '.join(names)}; "
                    f"one file holds one format: pass --from FORMAT"
                )
            common = [name for name in common if name in names]
        if len(common) > 1:
            for item, _ in shaped:
                try:
                    detect_format(item.trace, candidates=[n for n in common if n != EVENTS])
                except FormatError as exc:
                    raise FormatError(f"{item.where()}{command_line_hint(str(exc))}") from None
                except TraceError:
                    continue  # broken the same way in every format: it fails when read
        if shaped[0][0].shape == "json":
            told = "its shape"
        elif len(shaped) == 1:
            told = f"line {shaped[0][0].line}"
        else:
            told = f"its first {len(shaped)} records"
        self._notice(f"reading {self.name} as {common[0]} (told from {told}; --from to choose)")
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
            self.options["allow_pending"] = True

    # --- reading ---------------------------------------------------------------------------

    def typed(self, trace: Any) -> list[Message]:
        """The trace's typed messages; raises ``TraceError`` for an invalid one."""
        assert self._read is not None, "items() settles the format first"
        return self._read(trace, **self.options)

    def hint(self, message: str) -> str:
        """An error message in the command line's spelling."""
        return command_line_hint(message, reader=self.known_options, allow_pending_flag=True)


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
        elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
            value = value[int(step)]
        else:
            return None, f"--at {at}: there is no {step!r} here"
    return value, None


def open_text(path: str) -> TextIO:
    """A UTF-8 text file, read lazily and as written (a byte-order mark is skipped; no newline
    translation: a JSONL line ends at ``\n`` only). Bytes that are not UTF-8 are escaped
    (``ESCAPE``), so that ``JsonDocuments`` fails the JSONL line holding them, not the file."""
    try:  # the caller closes it
        return open(path, encoding="utf-8-sig", errors=ESCAPE, newline="\n")
    except OSError as exc:
        raise UnreadableInput(f"cannot read {path}: {exc}") from None
