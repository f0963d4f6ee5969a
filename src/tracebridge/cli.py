"""The ``tracebridge`` command.

    tracebridge convert FILE [--from X] --to Y [-o OUT] [--at PATH]
    tracebridge validate FILE [--from X] [--allow-pending] [--at PATH]
    tracebridge show FILE [--from X] [--at PATH]
    tracebridge formats
    tracebridge schema
    tracebridge score DATASET.jsonl --metric NAME ... [--model M --base-url URL]

FILE is a JSON trace, or JSONL with one trace per line (``-`` reads standard input).
Exit codes: 0 success, 1 a trace is invalid, 2 the request or the input is unusable.
Errors are one clear line each, never a traceback.
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

from .errors import FormatError, MissingExtraError, TraceError
from .registry import FORMATS, detect_format, get_adapter

__all__ = ["main"]

EXIT_OK, EXIT_INVALID, EXIT_USAGE = 0, 1, 2


class InputError(Exception):
    """The input file cannot be read or parsed."""


class InvalidRecord(Exception):
    """A trace in FILE is invalid; the message says which line and why."""


@dataclass(frozen=True)
class Record:
    """One trace read from FILE; ``line`` is its line number in a JSONL file."""

    trace: Any
    line: int | None

    def where(self) -> str:
        return f"line {self.line}: " if self.line is not None else ""


def read_records(path: str, stdin: TextIO) -> tuple[list[Record], bool]:
    """The traces in FILE, and whether it was JSONL."""
    try:
        text = stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from None
    if not text.strip():
        raise InputError(f"{path} is empty: expected a JSON trace or JSONL traces")
    try:
        return [Record(json.loads(text), None)], False
    except json.JSONDecodeError as whole:
        if whole.msg != "Extra data":
            raise InputError(f"{path}: not valid JSON: {whole}") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue  # blank lines between JSONL records carry nothing
        try:
            records.append(Record(json.loads(line), number))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path}: line {number}: not valid JSON: {exc}") from None
    return records, True


def select(records: list[Record], at: str | None) -> list[Record]:
    """Each record's part at ``at`` (dot-separated keys or list positions), e.g. ``trace``."""
    if at is None:
        return records
    selected = []
    for record in records:
        value = record.trace
        for step in at.split("."):
            if isinstance(value, dict) and step in value:
                value = value[step]
            elif isinstance(value, list) and step.isdigit() and int(step) < len(value):
                value = value[int(step)]
            else:
                raise InputError(f"{record.where()}--at {at}: there is no {step!r} here")
        selected.append(Record(value, record.line))
    return selected


def to_json(format_name: str, trace: Any) -> Any:
    """A trace as JSON: the adapter's ``to_json`` when it has one, else pydantic dumps."""
    dump: Callable[[Any], Any] | None = getattr(get_adapter(format_name), "to_json", None)
    if dump is not None:
        return dump(trace)
    if isinstance(trace, list):
        return [_model_json(item) for item in trace]
    return _model_json(trace)


def _model_json(value: Any) -> Any:
    model_dump = getattr(value, "model_dump", None)
    return model_dump(mode="json") if callable(model_dump) else value


def options(pairs: list[str] | None, function: Callable[..., Any], flag: str) -> dict[str, Any]:
    """``KEY=VALUE`` pairs as keyword options for ``function``; VALUE is JSON, else a string."""
    parameters = inspect.signature(function).parameters
    accepted = [name for name, p in parameters.items() if p.kind is p.KEYWORD_ONLY]
    parsed: dict[str, Any] = {}
    for pair in pairs or []:
        key, sep, text = pair.partition("=")
        if not sep or key not in accepted:
            raise InputError(
                f"{flag} {pair!r}: expected KEY=VALUE with KEY one of: {', '.join(accepted)}"
            )
        try:
            parsed[key] = json.loads(text)
        except json.JSONDecodeError:
            parsed[key] = text
    return parsed


def _source(args: argparse.Namespace, trace: Any) -> str:
    return detect_format(trace) if args.source == "auto" else str(args.source)


def _typed(args: argparse.Namespace, record: Record, **extra: Any) -> list[Any]:
    """The record's typed messages; an invalid trace becomes ``InvalidRecord``."""
    reader = get_adapter(_source(args, record.trace))
    given = options(args.from_options, reader.to_messages, "--from-option")
    try:
        return reader.to_messages(record.trace, **given, **extra)
    except TraceError as exc:
        raise InvalidRecord(f"{record.where()}{exc}") from None


def _write(out: TextIO, values: list[Any], jsonl: bool) -> None:
    if jsonl:
        for value in values:
            out.write(json.dumps(value, ensure_ascii=False) + "\n")
    else:
        out.write(json.dumps(values[0], ensure_ascii=False, indent=2) + "\n")


def cmd_convert(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    records, jsonl = read_records(args.file, stdin)
    records = select(records, args.at)
    target = get_adapter(args.target)
    target_options = options(args.to_options, target.from_messages, "--to-option")
    converted = []
    for record in records:
        messages = _typed(args, record)
        try:
            converted.append(to_json(args.target, target.from_messages(messages, **target_options)))
        except TraceError as exc:
            raise InvalidRecord(f"{record.where()}cannot write {args.target}: {exc}") from None
    if args.output:
        with open(args.output, "w", encoding="utf-8") as out:
            _write(out, converted, jsonl)
    else:
        _write(stdout, converted, jsonl)
    return EXIT_OK


def cmd_validate(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    records = select(read_records(args.file, stdin)[0], args.at)
    failures = 0
    for record in records:
        name = _source(args, record.trace)
        reader = get_adapter(name)
        given = options(args.from_options, reader.to_messages, "--from-option")
        try:
            messages = reader.to_messages(record.trace, allow_pending=args.allow_pending, **given)
        except TraceError as exc:
            failures += 1
            stdout.write(f"{record.where()}invalid: {exc.code} at {exc.path or 'trace'}: {exc}\n")
        else:
            stdout.write(f"{record.where()}ok: {len(messages)} messages ({name})\n")
    return EXIT_INVALID if failures else EXIT_OK


def cmd_show(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from .render import render

    records = select(read_records(args.file, stdin)[0], args.at)
    for number, record in enumerate(records):
        if len(records) > 1:
            stdout.write(("\n" if number else "") + f"# {record.where().rstrip(': ')}\n")
        stdout.write(render(_typed(args, record)) + "\n")
    return EXIT_OK


def cmd_formats(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    for name in FORMATS:
        module = get_adapter(name)
        summary = (module.__doc__ or "").strip().splitlines()[0] if module.__doc__ else ""
        stdout.write(f"{name:12} {summary.replace('``', '')}\n")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from .sample import MultiTurnSample

    stdout.write(json.dumps(MultiTurnSample.model_json_schema(), indent=2) + "\n")
    return EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracebridge",
        description="Convert, validate and show agent conversation traces.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, helptext: str, run: Any) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=helptext, description=helptext)
        sub.set_defaults(run=run)
        return sub

    def add_file(sub: argparse.ArgumentParser) -> None:
        sub.add_argument(
            "file", metavar="FILE", help="a JSON trace, or JSONL (one per line); - is stdin"
        )
        sub.add_argument(
            "--from", dest="source", default="auto", choices=("auto", *FORMATS),
            help="the trace's format (default: detect it from its shape)",
        )
        sub.add_argument(
            "--at", metavar="PATH",
            help="read the trace at this dot-separated key path inside each JSON document "
            "(e.g. 'trace' for a golden-trace file)",
        )
        sub.add_argument(
            "--from-option", dest="from_options", action="append", metavar="KEY=VALUE",
            help="an option for the source adapter's to_messages (VALUE is JSON or a string)",
        )

    convert = add("convert", "convert traces from one format to another", cmd_convert)
    add_file(convert)
    convert.add_argument("--to", dest="target", required=True, choices=FORMATS)
    convert.add_argument("-o", "--output", help="write here instead of standard output")
    convert.add_argument(
        "--to-option", dest="to_options", action="append", metavar="KEY=VALUE",
        help="an option for the target adapter's from_messages, e.g. drop='[\"is_error\"]' "
        "(VALUE is JSON or a string)",
    )

    validate = add("validate", "check traces; exit 1 if any is invalid", cmd_validate)
    add_file(validate)
    validate.add_argument(
        "--allow-pending", action="store_true",
        help="accept unanswered tool calls at the very end (a trace cut mid-tool)",
    )

    add_file(add("show", "print traces as readable conversations", cmd_show))
    add("formats", "list the formats", cmd_formats)
    add("schema", "print the JSON Schema of a MultiTurnSample", cmd_schema)

    from .metrics import cli as metrics_cli

    metrics_cli.configure(add("score", "score a JSONL file of samples with metrics", cmd_score))
    return parser


def cmd_score(args: argparse.Namespace, stdin: TextIO, stdout: TextIO) -> int:
    from .metrics import cli as metrics_cli

    return metrics_cli.run(args, stdout=stdout)


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the command; returns the exit code."""
    args = _parser().parse_args(argv)
    err = stderr or sys.stderr
    try:
        code: int = args.run(args, stdin or sys.stdin, stdout or sys.stdout)
    except (TraceError, InvalidRecord) as exc:
        err.write(f"tracebridge: invalid trace: {exc}\n")
        return EXIT_INVALID
    except (InputError, FormatError, MissingExtraError, OSError) as exc:
        err.write(f"tracebridge: {exc}\n")
        return EXIT_USAGE
    return code

