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

import json
from typing import Any

import pyarrow as pa

from .._cli_commands import to_json
from .._cli_output import JSON_SAFE
from .._drop import check_flag
from .._jsonstream import _parse_line
from ..errors import FormatError, TraceError
from ..registry import convert, get_adapter

__all__ = [
    "CONVERT_COLUMNS",
    "RowError",
    "arrow_array",
    "convert_batch",
    "convert_record",
    "json_safe",
    "parse_record",
]

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
        written = convert(value, source=source, target=target,
                          source_options=source_options, target_options=target_options,
                          messages_only=messages_only)
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
    record's file, used when ``source="auto"``. A sample (``MultiTurnSample`` JSON) whose
    references the target cannot hold is refused (``not_representable`` at the first of
    them), as ``tracebridge convert`` refuses it, unless ``messages_only=True`` (its
    ``--messages-only``) converts its conversation alone. Unknown format names and a missing
    framework package raise at once (the request is wrong, not the data); a record that
    cannot be read or written never does.

    >>> import pyarrow as pa
    >>> rows = pa.table({"record": ['[{"role": "user", "content": "hi"}]', "{"]})
    >>> out = convert_batch(rows, source="openai_chat", target="tracebridge")
    >>> out.column("error_code").to_pylist()
    [None, 'not_json']
    """
    check_flag("messages_only", messages_only)
    get_adapter(target)  # an unknown name or a missing extra: the whole request is wrong
    if source != "auto":
        get_adapter(source)
    records = _column(batch, "record")
    lines = _column(batch, "line")
    sources = _column(batch, "source") if source == "auto" else None
    columns: dict[str, list[Any]] = {name: [] for name in CONVERT_COLUMNS}
    for row, text in enumerate(records):
        told = sources[row] if sources is not None and sources[row] else source
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


def _append(columns: dict[str, list[Any]], output: str | None, error: RowError | None) -> None:
    columns["output"].append(output)
    columns["error_code"].append(None if error is None else error.code)
    columns["error_index"].append(None if error is None else error.index)
    columns["error_path"].append(None if error is None else error.path)
    columns["error_message"].append(None if error is None else error.message)


def _column(batch: pa.Table, name: str) -> list[Any]:
    """The column's values, or Nones when the batch has no such column."""
    if name in batch.column_names:
        values: list[Any] = batch.column(name).to_pylist()
        return values
    if name == "record":
        raise ValueError("the batch has no 'record' column (the JSON text of each trace)")
    return [None] * batch.num_rows


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
