"""``convert_batch``: a batch of raw trace records in, the same rows out with their
conversion or why there is none. No Ray here: any engine that hands over Arrow tables can
call it.

A record is the JSON text of one trace (one JSONL line). It is parsed here, read by its
format's reader and written by the target's writer; whatever goes wrong with one record is
written into that row's error columns, so the function never raises for bad data and gives
back exactly as many rows as it got, in the same order.

Text that UTF-8 cannot hold (a lone surrogate: JSON's ``"\\ud83c"`` escape spells one, and
Python reads it as it stands) cannot go into an Arrow string column either. Every string a
batch function writes is therefore written as the command line writes it (``JSON_SAFE``):
such a character becomes its escape, ``\\ud83c``, which in JSON text (``output``,
``result``) reads back as the same character.
"""

from __future__ import annotations

import inspect
import json
from collections.abc import Callable, Collection
from typing import Any

import pyarrow as pa

from .._cli_commands import to_json
from .._cli_input import EVENTS
from .._cli_output import JSON_SAFE
from .._drop import check_flag
from .._jsonstream import _parse_line
from ..errors import FormatError, TraceError
from ..messages import Message
from ..options import Option, reader_options, writer_options
from ..registry import FORMATS, NATIVE, carried, convert, get_adapter

__all__ = [
    "CONVERT_COLUMNS",
    "SAMPLE",
    "RowError",
    "arrow_array",
    "check_options",
    "check_source",
    "convert_batch",
    "convert_record",
    "json_safe",
    "parse_record",
    "reader_of",
    "record_texts",
    "row_problems",
]

SAMPLE = "sample"
"""``source`` for records that are ``MultiTurnSample`` JSON (``read_traces`` tags them so);
converted as ``tracebridge`` records are."""

CONVERT_COLUMNS: dict[str, pa.DataType] = {
    "output": pa.string(),
    "error_code": pa.string(),
    "error_index": pa.int64(),
    "error_path": pa.string(),
    "error_message": pa.string(),
}
"""The columns ``convert_batch`` adds; ``output`` is null on error, the rest null when the
record converted."""


class RowError(Exception):
    """Why one record has no result: a stable ``code`` (a ``TraceError`` code, or
    ``not_json``, ``no_record``, ``unknown_format``, ``invalid_sample``, ``too_deep``,
    ``internal_error``), the index and path inside the trace when known, and one line."""

    def __init__(
        self, code: str, message: str, index: int | None = None, path: str | None = None
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.index = index
        self.path = path

    @classmethod
    def of(cls, exc: Exception, doing: str) -> RowError:
        """The row error an exception from a reader, writer or metric stands for."""
        if isinstance(exc, RowError):
            return exc
        if isinstance(exc, TraceError):
            return cls(exc.code, str(exc), exc.index, exc.path)
        if isinstance(exc, FormatError):
            return cls("unknown_format", str(exc))
        if isinstance(exc, RecursionError):
            return cls("too_deep", f"{doing}: the trace is nested too deeply to read")
        return cls("internal_error", f"{doing}: internal error {type(exc).__name__}: {exc} "
                                     "(a bug in tracebridge: please report it with this record)")


def parse_record(text: str | None, line: int | None) -> Any:
    """The JSON value of one record; ``RowError`` (``not_json``, ``no_record``) otherwise."""
    if text is None:
        raise RowError("no_record", "no record: the line is not UTF-8 text, or the row has "
                                    "no record")
    parsed = _parse_line(text, line or 0)
    if parsed.problem is not None:
        raise RowError("not_json", parsed.problem)
    return parsed.value


def convert_record(
    text: str | None,
    line: int | None,
    *,
    source: str,
    target: str,
    source_options: dict[str, Any] | None = None,
    target_options: dict[str, Any] | None = None,
    messages_only: bool = False,
) -> str:
    """One record converted, as compact JSON text (as ``tracebridge convert`` writes it:
    framework objects dumped to JSON, a lone surrogate as its escape); ``RowError`` when it
    cannot be."""
    value = parse_record(text, line)
    try:
        if source == EVENTS:  # read only: an event stream has no writer, so no ``convert``
            messages = reader_of(EVENTS)(value, **(source_options or {}))
            written = get_adapter(target).from_messages(
                carried(messages, _format_of(EVENTS), target), **(target_options or {}))
        else:
            written = convert(value, source=NATIVE if source == SAMPLE else source,
                              target=target, source_options=source_options,
                              target_options=target_options, messages_only=messages_only)
        output = json.dumps(to_json(target, written), ensure_ascii=False, separators=(",", ":"))
    except Exception as exc:  # one record's failure is its row's error, never the batch's
        raise RowError.of(exc, f"converting from {source} to {target}") from None
    return json_safe(output)


def convert_batch(
    batch: pa.Table,
    *,
    source: str = "auto",
    target: str,
    source_options: dict[str, Any] | None = None,
    target_options: dict[str, Any] | None = None,
    messages_only: bool = False,
) -> pa.Table:
    """``batch`` with ``output``, ``error_code``, ``error_index``, ``error_path`` and
    ``error_message`` added; one row out per row in, in order.

    ``batch`` has a string column ``record`` (the JSON text of one trace; ``read_traces``
    makes it, with ``file`` and ``line``) and may have ``source``: the format told for the
    record's file, used when ``source="auto"`` (``llama_index_events`` and ``sample``, which
    ``read_traces`` also tells, included), and ``problem_code``/``problem``: why
    ``read_traces`` found the record unusable, which becomes the row's error. A sample
    (``MultiTurnSample`` JSON) whose references the target cannot hold is refused
    (``not_representable`` at the first of them), as ``tracebridge convert`` refuses it,
    unless ``messages_only=True`` (its ``--messages-only``) converts its conversation alone.
    Unknown format names, options the reader or writer does not take (or values they do not
    accept) and a missing framework package raise at once (the request is wrong, not the
    data); a record that cannot be read or written never does.

    >>> import pyarrow as pa
    >>> rows = pa.table({"record": ['[{"role": "user", "content": "hi"}]', "{"]})
    >>> out = convert_batch(rows, source="openai_chat", target="tracebridge")
    >>> out.column("error_code").to_pylist()
    [None, 'not_json']
    """
    check_flag("messages_only", messages_only)
    check_source(source)
    check_options(source, target, source_options, target_options)
    records = _column(batch, "record")
    lines = _column(batch, "line")
    sources = _column(batch, "source") if source == "auto" else None
    problems = row_problems(batch, records, told=source == "auto")
    columns: dict[str, list[Any]] = {name: [] for name in CONVERT_COLUMNS}
    for row, text in enumerate(records):
        told = sources[row] if sources is not None and sources[row] else source
        problem = problems[row]
        if problem is not None:
            _append(columns, None, problem)
            continue
        try:
            output = convert_record(text, lines[row], source=told, target=target,
                                    source_options=source_options,
                                    target_options=target_options,
                                    messages_only=messages_only)
        except RowError as error:
            _append(columns, None, error)
        else:
            _append(columns, output, None)
    return with_columns(batch, columns, CONVERT_COLUMNS)


def check_source(source: str) -> None:
    """Refuse a ``source`` no record can be read as (``FormatError``), or whose framework
    package is missing: the whole request is wrong, before any row."""
    if source in ("auto", SAMPLE):
        return
    if source == EVENTS:
        get_adapter("llama_index")
        return
    get_adapter(source)


def reader_of(source: str) -> Callable[..., list[Message]]:
    """The function that reads a record of ``source`` into messages (``sample`` records as
    ``tracebridge`` ones, an event stream with ``llama_index.events_to_messages``)."""
    if source == EVENTS:
        reader: Callable[..., list[Message]] = get_adapter(
            "llama_index").events_to_messages  # type: ignore[attr-defined]
        return reader
    return get_adapter(NATIVE if source == SAMPLE else source).to_messages


def _format_of(source: str) -> str:
    """The format whose adapter reads ``source`` (an event stream: LlamaIndex's; a sample:
    the tracebridge format's)."""
    return "llama_index" if source == EVENTS else NATIVE if source == SAMPLE else source


def check_options(
    source: str,
    target: str,
    source_options: dict[str, Any] | None,
    target_options: dict[str, Any] | None,
) -> None:
    """Refuse options the reader or the writer does not take, or values of the wrong kind
    (``ValueError``, before any row), as the command line refuses ``--from-option`` and
    ``--to-option``; the writer is then tried once on an empty conversation, as there, so
    that its own checks of its options speak now."""
    # a row read_traces tagged may also be an event stream or a sample
    readers = (*FORMATS, EVENTS, SAMPLE) if source == "auto" else (source,)
    _check_named("source_options", "reader", source_options or {}, {
        name: (reader_of(name), reader_options(_format_of(name), reader_of(name)))
        for name in readers})
    writer = get_adapter(target).from_messages
    _check_named("target_options", "writer", target_options or {},
                 {target: (writer, writer_options(target))})
    try:
        writer([], **(target_options or {}))
    except TraceError:
        pass  # an empty conversation may be refused; the options were accepted
    except ValueError as exc:  # the writer's own check of its options
        raise ValueError(f"target_options: {exc}") from None


def _check_named(
    what: str,
    role: str,
    options: dict[str, Any],
    takers: dict[str, tuple[Callable[..., Any], dict[str, Option]]],
) -> None:
    """Each option must be a keyword of one of the functions in ``takers`` (the reader of
    every format, when the format is told per record), of the kind each that has it takes
    (``tracebridge.options``; a keyword the command line cannot spell is not checked)."""
    for name, value in options.items():
        having = [known for function, known in takers.values() if name in _keywords(function)]
        if not having:
            names = sorted({k for function, _ in takers.values() for k in _keywords(function)})
            whose = (f"{next(iter(takers))}'s {role} has no option" if len(takers) == 1
                     else f"no format's {role} has the option")
            raise ValueError(f"{what}: {whose} {name!r} (known: {', '.join(names) or 'none'})")
        for known in having:
            if name in known and value != known[name].default:
                _check_value(what, known[name], value)


def _keywords(function: Callable[..., Any]) -> list[str]:
    return [p.name for p in inspect.signature(function).parameters.values()
            if p.kind is p.KEYWORD_ONLY]


def _check_value(what: str, option: Option, value: Any) -> None:
    """``value`` must be of ``option``'s kind (in its choices, when it has some)."""
    choices = option.choices
    if option.kind == "bool":
        ok, expected = value is True or value is False, "True or False"
    elif option.kind == "int":
        ok, expected = type(value) is int, "a whole number"
    elif option.kind == "text":
        ok, expected = isinstance(value, str), "text"
    elif option.kind == "choice":
        ok = isinstance(value, str) and (choices is None or value in choices)
        expected = f"one of {', '.join(choices or ())}"
    else:
        ok = (isinstance(value, Collection) and not isinstance(value, (str, bytes, dict))
              and all(isinstance(v, str) and (choices is None or v in choices)
                      for v in value))
        expected = f"a list of names from {', '.join(choices)}" if choices else "a list of names"
    if not ok:
        raise ValueError(f"{what}: {option.name} takes {expected}, got {value!r}")


def row_problems(batch: pa.Table, records: list[Any], *, told: bool) -> list[RowError | None]:
    """Per row, the problem ``read_traces`` found (``problem_code``, ``problem``): a record
    it could not read (null record) has it whatever the source; one that is not of its
    file's told format has it when that format is used (``told``)."""
    codes = _column(batch, "problem_code")
    messages = _column(batch, "problem")
    return [None if code is None or (text is not None and not told)
            else RowError(code, message or code)
            for code, message, text in zip(codes, messages, records, strict=True)]


def _append(columns: dict[str, list[Any]], output: str | None, error: RowError | None) -> None:
    columns["output"].append(output)
    columns["error_code"].append(None if error is None else error.code)
    columns["error_index"].append(None if error is None else error.index)
    columns["error_path"].append(None if error is None else error.path)
    columns["error_message"].append(None if error is None else error.message)


def _column(batch: pa.Table, name: str) -> list[Any]:
    """The column's values, or Nones when the batch has no such column."""
    if name == "record":
        return record_texts(batch, "trace")
    if name in batch.column_names:
        values: list[Any] = batch.column(name).to_pylist()
        return values
    return [None] * batch.num_rows


def record_texts(batch: pa.Table, what: str) -> list[str | None]:
    """The ``record`` column's values: ``ValueError`` (before any row) when the batch has
    none, or when it is not text, plain or dictionary-encoded (a binary column is decoded by
    the caller, who knows how)."""
    if "record" not in batch.column_names:
        raise ValueError(f"the batch has no 'record' column (the JSON text of each {what})")
    kind = batch.schema.field("record").type
    if not (_is_text(kind) or pa.types.is_null(kind)
            or (pa.types.is_dictionary(kind) and _is_text(kind.value_type))):
        raise ValueError(f"the batch's 'record' column must be text (string), got {kind} "
                         f"(the JSON text of each {what})")
    values: list[str | None] = batch.column("record").to_pylist()
    return values


def _is_text(kind: pa.DataType) -> bool:
    return bool(pa.types.is_string(kind) or pa.types.is_large_string(kind)
                or pa.types.is_string_view(kind))


def with_columns(
    batch: pa.Table, columns: dict[str, list[Any]], types: dict[str, pa.DataType]
) -> pa.Table:
    """``batch`` with ``columns`` added (replacing same-named ones), typed as ``types``."""
    table = batch
    for name, values in columns.items():
        array = arrow_array(values, types[name])
        if name in table.column_names:
            table = table.set_column(table.column_names.index(name), name, array)
        else:
            table = table.append_column(name, array)
    return table


def arrow_array(values: list[Any], kind: pa.DataType) -> pa.Array:
    """``values`` as an Arrow array of ``kind``; a string UTF-8 cannot hold (a lone
    surrogate) is written as ``json_safe`` writes it, where Arrow would refuse the batch."""
    try:
        return pa.array(values, type=kind)
    except UnicodeEncodeError:  # rare: the common case pays for no second pass
        return pa.array([json_safe(v) if type(v) is str else v for v in values], type=kind)


def json_safe(text: str) -> str:
    """``text`` with each character UTF-8 cannot hold (a lone surrogate) written as its
    escape (``\\ud83c``), as ``tracebridge convert`` writes its output (``JSON_SAFE``).

    >>> json_safe("cut emoji \\ud83c")
    'cut emoji \\\\ud83c'
    """
    return text if text.isascii() else text.encode("utf-8", JSON_SAFE).decode("utf-8")
