"""Samples on the command line: the reference fields of a sample, and ``tracebridge sample``.

``tracebridge sample FILE... [--references REFS.jsonl]`` reads traces in any format and
writes a dataset: one ``MultiTurnSample`` JSON per line, ready for ``tracebridge score``
(``score --allow-pending`` for samples made with ``--allow-pending``).
A references file holds one JSON object per line, ``{"id": ..., "reference": ...,
"reference_tool_calls": [...], "reference_topics": [...], "rubrics": {...},
"metadata": {...}}``; a trace takes the references whose ``id`` is its own. A trace's id is
the value at ``--id PATH`` in its document, else the document's ``id`` key (absent or
``null``: none; another value than a string or a whole number is refused), else its number:
its element number (1-based) in a JSON array of traces, however the array is laid out on
lines, else its line number (JSONL, or a single document); ``FILE:N`` when several files are
read. The id is kept as ``metadata["id"]``. Ids are unique: a repeated id in the references
file, or two traces with one id (``3`` and ``"3"`` are one id, and a document's ``id`` may be
another record's number), is refused, exit 2, naming both records (the traces' ids in bounded
memory: ``SeenIds``). A fault in the references file (a value that is not plain JSON
included) is one line naming its line and field, exit 2, and what ``--errors FILE`` holds.
What a trace's sample and its reference both say must be the same JSON (``same_json``).
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, TextIO, cast

from pydantic import TypeAdapter, ValidationError

from ._cli_input import Item, Problem, TraceFile, open_text, select
from ._cli_output import EXIT_USAGE, Output, RunStopped, Tally
from ._json import check_json, json_path, same_json
from ._jsonstream import JsonDocuments, UnreadableInput
from .errors import CODES, ErrorCode, TraceError, short_repr
from .messages import Message
from .options import OptionError
from .sample import ALLOW_PENDING, MultiTurnSample

__all__ = [
    "REFERENCE_FIELDS",
    "References",
    "build_sample",
    "read_stdin_once",
    "sample_fields",
]

REFERENCE_FIELDS: tuple[str, ...] = tuple(
    name for name in MultiTurnSample.model_fields if name != "messages"
)
"""What a sample holds besides its conversation."""
_CHECKS: dict[str, TypeAdapter[Any]] = {
    name: TypeAdapter(Any if field.annotation is None else field.annotation)
    for name, field in MultiTurnSample.model_fields.items()
    if name in REFERENCE_FIELDS
}


def sample_fields(trace: Any) -> dict[str, Any]:
    """The reference fields a tracebridge sample document sets (none for a message list)."""
    if not isinstance(trace, dict):
        return {}
    return {name: trace[name] for name in REFERENCE_FIELDS
            if name in trace and trace[name] is not None and trace[name] != {}}


def build_sample(
    messages: list[Message], fields: dict[str, Any], allow_pending: bool = False
) -> dict[str, Any]:
    """A validated sample's JSON; a field of the wrong type is ``malformed_event``. With
    ``allow_pending``, the conversation may end on unanswered tool calls, as it was read."""
    for name, value in fields.items():
        try:
            _CHECKS[name].validate_python(value)
        except ValidationError as exc:
            first = exc.errors()[0]
            inner = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
            raise TraceError(
                "malformed_event",
                f"{first['msg']} (got {short_repr(first['input'])})",
                path=f"{name}{inner}",
            ) from None
    # the Python form (plain JSON values): pydantic's JSON mode cannot encode a lone
    # surrogate in a nested key; the output writes it escaped
    context = ALLOW_PENDING if allow_pending else None
    sample = MultiTurnSample.model_validate({"messages": messages, **fields}, strict=False,
                                            context=context)
    return sample.model_dump()


@dataclass(frozen=True, slots=True)
class _Entry:
    text: str
    """The entry's fields as compact JSON: held as text, a reference takes about a tenth of
    the memory its parsed form would (a large references file is held whole)."""
    line: int


class References:
    """The references file: entries by id (checked when read), and which were used."""

    def __init__(self, path: str, stdin: TextIO) -> None:
        self.path = path
        self.entries: dict[str, _Entry] = {}
        self.used: set[str] = set()
        stream = stdin if path == "-" else open_text(path)
        try:
            for record in JsonDocuments(stream, path, lambda e: isinstance(e, dict), jsonl=True):
                self._add(record.line, record.value, record.problem, record.code)
        finally:
            if stream is not stdin:
                stream.close()

    def _add(self, line: int, value: Any, problem: str | None, code: str) -> None:
        if problem is not None:
            raise ReferenceFault(self.path, line, code, problem)
        if not isinstance(value, dict) or "id" not in value:
            raise ReferenceFault(self.path, line, "malformed_event", "expected an object with "
                                 f"an 'id', got {short_repr(value)}")
        key = id_key(value["id"])
        if key is None:
            raise ReferenceFault(self.path, line, "malformed_event", "id must be a string or a "
                                 f"whole number, got {short_repr(value['id'])}", path="id")
        unknown = sorted(set(value) - {"id", *REFERENCE_FIELDS})
        if unknown:
            raise ReferenceFault(self.path, line, "malformed_event", "unknown field "
                                 f"{', '.join(map(repr, unknown))}; a reference has id and "
                                 f"{', '.join(REFERENCE_FIELDS)}", path=unknown[0])
        if key in self.entries:
            raise ReferenceFault(self.path, line, "malformed_event", f"id {value['id']!r} is "
                                 f"also on line {self.entries[key].line}", path="id")
        fields = {k: v for k, v in value.items() if k != "id"}
        for name, field_value in fields.items():
            _check_reference_field(self.path, line, name, field_value)
        bad_id = _metadata_id_problem(fields)
        if bad_id is not None:
            raise ReferenceFault(self.path, line, bad_id.code, bad_id.message,
                                 path="metadata.id")
        text = json.dumps(fields, ensure_ascii=False, separators=(",", ":"))
        self.entries[key] = _Entry(text, line)

    def take(self, key: str) -> tuple[dict[str, Any], int] | None:
        entry = self.entries.get(key)
        if entry is None:
            return None
        self.used.add(key)
        fields: dict[str, Any] = json.loads(entry.text)
        return fields, entry.line

    def unused(self) -> list[str]:
        return [key for key in self.entries if key not in self.used]


class ReferenceFault(UnreadableInput):
    """A line of the references file that cannot be used (exit 2), ``FILE: line N: what``;
    for ``--errors FILE``, the record it is, with its ``code`` and the ``path`` at fault."""

    def __init__(self, file: str, line: int, code: str, what: str,
                 path: str | None = None) -> None:
        super().__init__(f"{file}: line {line}: {what}")
        self.item = Item(file, line, "jsonl", None)
        fault = TraceError(cast(ErrorCode, code), what, path=path) if code in CODES else None
        self.problem = Problem(code, str(self), fault)


def _check_reference_field(file: str, line: int, name: str, value: Any) -> None:
    """A reference field as a sample takes it: plain JSON (a tool call's ``args`` and
    ``metadata`` each counted from themselves, as a ``ToolCall`` counts them), of its type."""
    try:
        for at, part in _json_parts(name, value):
            check_json(part, at)
        _CHECKS[name].validate_python(value)
    except TraceError as exc:
        path = exc.path or name
        raise ReferenceFault(file, line, exc.code, f"{path}: {exc.detail}", path=path) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        inner = "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in first["loc"])
        raise ReferenceFault(file, line, "malformed_event", f"{name}{inner}: {first['msg']}",
                             path=f"{name}{inner}") from None


def _json_parts(name: str, value: Any) -> Iterator[tuple[str, Any]]:
    """The values of a reference field checked as JSON, each with its path."""
    if name != "reference_tool_calls" or not isinstance(value, list):
        yield name, value
        return
    for index, call in enumerate(value):
        at = json_path(name, index)
        if isinstance(call, dict):
            yield from ((json_path(at, key), part) for key, part in call.items())
        else:
            yield at, call


class SeenIds:
    """Each trace id taken so far, and where (``FILE: line N``, ``FILE: element K (line N)``):
    an id names one trace.

    The first ``IN_MEMORY`` ids are held in a dict; from then on all of them are in a
    temporary SQLite table on disk (deleted when closed), so a file of any number of
    traces is checked in bounded memory."""

    IN_MEMORY = 500_000

    def __init__(self) -> None:
        self._held: dict[str, str] = {}
        self._table: sqlite3.Connection | None = None

    def add(self, key: str, where: str) -> str | None:
        """Record ``key`` at ``where``; where it was taken before, if it was (then nothing
        is recorded)."""
        table = self._table
        if table is None:
            earlier = self._held.setdefault(key, where)
            if earlier is not where:
                return earlier
            if len(self._held) > self.IN_MEMORY:
                self._spill()
            return None
        found = table.execute("SELECT place FROM seen WHERE id = ?", (_blob(key),)).fetchone()
        if found is not None:
            return bytes(found[0]).decode("utf-8", "surrogatepass")
        table.execute("INSERT INTO seen VALUES (?, ?)", (_blob(key), _blob(where)))
        return None

    def _spill(self) -> None:
        table = sqlite3.connect("")  # "": a temporary database on disk
        table.execute("PRAGMA journal_mode = OFF")
        table.execute("CREATE TABLE seen (id BLOB PRIMARY KEY, place BLOB NOT NULL)")
        table.executemany(
            "INSERT INTO seen VALUES (?, ?)",
            ((_blob(key), _blob(where)) for key, where in self._held.items()),
        )
        self._held = {}
        self._table = table

    def close(self) -> None:
        if self._table is not None:
            self._table.close()
            self._table = None


def _blob(text: str) -> bytes:
    """Text as SQLite takes it: UTF-8, lone surrogates (a JSON "\\ud800", a file name
    that is not UTF-8) included."""
    return text.encode("utf-8", "surrogatepass")


def id_key(value: Any) -> str | None:
    """Ids match as text: ``3`` and ``"3"`` are the same id."""
    if isinstance(value, bool) or not isinstance(value, (str, int)):
        return None
    return str(value)


def record_id(item: Item, id_path: str | None, several_files: bool) -> tuple[Any, Problem | None]:
    """A record's id, or why it has none: ``--id PATH``, the document's ``id`` (absent or
    ``null``: none), else its element number in an array of traces or its line number.
    Nothing at ``--id PATH`` is ``no_such_path``; an id that is not a string or a whole
    number, there or in ``id``, is ``malformed_event``."""
    if id_path is not None:
        value, missing = select(item.document, id_path)
        if missing is not None:
            return None, Problem("no_such_path", missing.replace("--at", "--id", 1))
        if id_key(value) is None:
            return None, Problem("malformed_event", f"--id {id_path}: an id must be a string or "
                                 f"a whole number, got {short_repr(value)}")
        return value, None
    if isinstance(item.document, dict) and item.document.get("id") is not None:
        value = item.document["id"]
        if id_key(value) is None:  # not replaced by the record's number: that is another id
            return None, Problem("malformed_event", f"id: an id must be a string or a whole "
                                 f"number, got {short_repr(value)} (--id PATH takes the id "
                                 f"from elsewhere)")
        return value, None
    number = item.line if item.element is None else item.element
    return (f"{item.file}:{number}" if several_files else number), None


def merged(trace_fields: dict[str, Any], reference: dict[str, Any] | None, ref_where: str,
           record: Any) -> dict[str, Any]:
    """The sample's fields: the trace's own, the references', and ``metadata["id"]``. What
    both hold must be the same JSON (``true``, ``1`` and ``1.0`` are three values)."""
    fields = dict(trace_fields)
    metadata = dict(fields.pop("metadata", {}))
    own_id = "id" in metadata
    for name, value in (reference or {}).items():
        if name == "metadata":
            for key, item in value.items():
                if key in metadata and not same_json(metadata[key], item):
                    raise TraceError("conflicting_fields", f"metadata {key!r} differs between "
                                     f"the trace and {ref_where}", path=f"metadata.{key}")
                metadata[key] = item
        elif name in fields and not same_json(_as_held(name, fields[name]),
                                              _as_held(name, value)):
            raise TraceError("conflicting_fields", f"{name} is in the trace's sample and, "
                             f"differently, in {ref_where}", path=name)
        else:
            fields[name] = value
    if "id" in metadata and id_key(metadata["id"]) != id_key(record):
        # a sample that sample --keep-going wrote after a failed record: its own id is right
        held = "" if own_id else f" in {ref_where}"
        hint = " (pass --id metadata.id to take the sample's own id)" if own_id else ""
        raise TraceError("conflicting_fields", f"metadata id {metadata['id']!r}{held} differs "
                         f"from the record's id {record!r}{hint}", path="metadata.id")
    fields["metadata"] = {"id": record, **metadata}
    return fields


def _as_held(name: str, value: Any) -> Any:
    """A reference field as the sample holds it (a tool call with its defaults), to compare;
    as given when it is not valid (``build_sample`` then refuses it)."""
    check = _CHECKS[name]
    try:
        return check.dump_python(check.validate_python(value))
    except ValidationError:
        return value


def _metadata_id_problem(fields: dict[str, Any]) -> Problem | None:
    """Why the id a sample's ``metadata`` holds cannot be its id, if it cannot."""
    metadata = fields.get("metadata")
    if not isinstance(metadata, dict) or id_key(metadata.get("id", "")) is not None:
        return None
    return Problem("malformed_event", f"metadata.id: an id must be a string or a whole "
                   f"number, got {short_repr(metadata['id'])}")


def read_stdin_once(files: list[str], references: str | None) -> None:
    """Refuse standard input named twice among FILE..., or both as a FILE and as
    ``--references``, before anything is read: standard input can be read only once, and the
    second reading would find it empty only after the first had done its work. It is ``-``,
    and, when it is a stream (a pipe, a terminal, a socket), any other name of it
    (``/dev/stdin``, ``/dev/fd/0``, ``/proc/self/fd/0``); a file ``< FILE`` gave it opens
    again from its start under another name, as a file named twice does."""
    times = files.count("-")
    if times > 1:
        twice = "twice" if times == 2 else f"{times} times"
        raise OptionError(f"- (standard input) is given {twice} as FILE: it can be read only "
                          "once; give it once")
    opened = _standard_input()
    readers = [path for path in files if _reads_standard_input(path, opened)]
    if len(readers) > 1:
        both = "both" if len(readers) == 2 else "all"
        raise OptionError(f"{_listed(readers)} are {both} standard input, given as FILE: it "
                          "can be read only once; give it once")
    if readers and references is not None and _reads_standard_input(references, opened):
        raise OptionError(f"--references {references} and FILE {readers[0]} both read "
                          "standard input, which can be read only once; give a file for one")


def _standard_input() -> os.stat_result | None:
    """What standard input (descriptor 0) is open on; None when it is closed."""
    try:
        return os.fstat(0)
    except OSError:
        return None


def _reads_standard_input(path: str, opened: os.stat_result | None) -> bool:
    """Whether input ``path`` is standard input: ``-``, or a name of the stream it is open on
    (not of a regular file, which each name opens again from its start)."""
    if path == "-":
        return True
    if opened is None or stat.S_ISREG(opened.st_mode):
        return False
    try:
        return os.path.samestat(os.stat(path), opened)
    except (OSError, ValueError):  # not there (its reading says so), or a NUL in the name
        return False


def _listed(names: list[str]) -> str:
    """``a and b``, ``a, b and c``."""
    return f"{', '.join(names[:-1])} and {names[-1]}"


def _read_references(path: str, stdin: TextIO, tally: Tally) -> References:
    """The references file, read whole before any trace: a fault in it ends the run (exit
    2) whatever ``--keep-going`` says, and is the failure ``--errors FILE`` holds."""
    try:
        return References(path, stdin)
    except ReferenceFault as fault:
        tally.keep_going = False
        try:
            tally.fail(fault.item, fault.problem, str(fault))
        except RunStopped as stopped:  # its message is empty when --errors - told it
            raise RunStopped(str(stopped), EXIT_USAGE) from None
        raise


def run_sample(
    args: argparse.Namespace,
    files: list[TraceFile],
    typed: Iterator[tuple[Item, list[Message], TraceFile]],
    stdin: TextIO,
    stdout: TextIO,
    tally: Tally,
    hint: Any,
) -> Output:
    """Write one sample per readable trace; returns the output to commit."""
    references = _read_references(args.references, stdin, tally) if args.references else None
    out = Output(args.output, stdout)
    seen = SeenIds()
    try:
        for item, messages, source in typed:
            record, problem = record_id(item, args.id, len(files) > 1)
            if problem is not None:
                tally.fail(item, problem, f"{item.where()}{problem.message}")
                continue
            key = id_key(record)
            assert key is not None
            where = f"{item.file}: {item.place()}"
            earlier = seen.add(key, where)
            if earlier is not None:
                number = "line" if item.element is None else "element"
                raise UnreadableInput(
                    f"{where}: id {record!r} is also the id of {earlier}; each trace needs "
                    f"its own id (a document's id, --id PATH, or its {number} number)")
            own = sample_fields(item.trace) if source.format == "tracebridge" else {}
            found = references.take(key) if references is not None else None
            problem = _metadata_id_problem(own)
            if problem is not None:  # its reference is taken: it matched this trace
                tally.fail(item, problem, f"{item.where()}{problem.message}")
                continue
            ref_where = f"{args.references} line {found[1]}" if found is not None else ""
            try:
                fields = merged(own, found[0] if found else None, ref_where, record)
                sample = build_sample(messages, fields, source.options.get("allow_pending") is True)
            except TraceError as exc:
                error = exc.relocated(source="tracebridge")
                tally.fail(item, Problem(exc.code, str(error), error),
                           f"{item.where()}cannot make a sample: {hint(str(error))}")
                continue
            out.write(sample, "jsonl")
            tally.good()
    except BaseException:
        out.abandon()
        raise
    finally:
        seen.close()
    if references is not None and references.unused():
        unused = references.unused()
        shown = ", ".join(map(repr, unused[:5])) + (", ..." if len(unused) > 5 else "")
        tally.stderr.write(f"tracebridge: {len(unused)} reference(s) in {args.references} "
                           f"matched no trace: {shown}\n")
    return out
