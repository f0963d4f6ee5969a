"""The ``tracebridge`` command.

    tracebridge convert FILE [--from X] --to Y [-o OUT] [--at PATH] [--keep-going]
    tracebridge validate FILE [--from X] [--allow-pending] [--at PATH] [--keep-going]
    tracebridge show FILE [--from X] [--at PATH] [--keep-going]
    tracebridge sample FILE... [--references REFS.jsonl] [--id PATH] [-o OUT]
    tracebridge formats [--options]
    tracebridge schema
    tracebridge score DATASET.jsonl --metric NAME ... [--model M --base-url URL]

FILE is one JSON trace, a JSON array of traces, or JSONL with one trace per line (``-`` reads
standard input); records are read, converted and written one at a time, in the input's shape.
Exit codes: 0 success, 1 a trace is invalid (or, with --keep-going, some were), 2 the request
or the input is unusable, 70 an internal error (a bug), 130 interrupted. Errors are one line
each, never a traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any, TextIO

from ._cli_input import EVENTS, READABLE, Item, Problem, TraceFile
from ._cli_output import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    Output,
    RunStopped,
    Tally,
    internal_problem,
    typed_records,
)
from ._jsonstream import UnreadableInput
from .errors import FormatError, MissingExtraError, TraceError
from .messages import Message
from .options import OptionError, command_line_hint, parse_options, reader_options, writer_options
from .registry import FORMATS, NATIVE, get_adapter

__all__ = ["main", "to_json"]

EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141


@dataclass(frozen=True)
class Streams:
    stdin: TextIO
    stdout: TextIO
    stderr: TextIO


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


def _trace_file(args: argparse.Namespace, path: str, streams: Streams) -> TraceFile:
    return TraceFile(
        path,
        streams.stdin,
        source=args.source,
        at=args.at,
        from_options=args.from_options or [],
        allow_pending=args.allow_pending,
        notice=lambda text: streams.stderr.write(f"tracebridge: {text}\n"),
    )


@contextlib.contextmanager
def _running(sources: list[TraceFile], tally: Tally, out: Output | None = None) -> Iterator[None]:
    """Close what a run opened; a run that stops early leaves OUT as it was."""
    try:
        yield
    except BaseException:
        if out is not None:
            out.abandon()
        tally.close()
        raise
    finally:
        for source in sources:
            source.close()


def _told(item: Item, problem: Problem) -> str:
    prefix = "invalid trace: " if problem.error is not None else ""
    return f"{item.where()}{prefix}{problem.message}"


# --- convert ---------------------------------------------------------------------------------


def _writer(args: argparse.Namespace) -> dict[str, Any]:
    """The target's options, typed, and tried once on an empty conversation."""
    options = parse_options(args.to_options or [], writer_options(args.target), "--to-option")
    try:
        get_adapter(args.target).from_messages([], **options)
    except TraceError:
        pass  # an empty conversation may be refused; the options were accepted
    except ValueError as exc:  # the adapter's own check of its options
        raise OptionError(f"--to-option: {command_line_hint(str(exc))}") from None
    return options


def _converted(
    item: Item, messages: list[Message], source: TraceFile, args: argparse.Namespace,
    options: dict[str, Any],
) -> Any:
    from ._cli_sample import build_sample, sample_fields

    fields = sample_fields(item.trace) if source.format == NATIVE else {}
    if args.target == NATIVE and source.format == NATIVE and isinstance(item.trace, dict):
        return build_sample(messages, fields)  # a sample stays a sample, references and all
    if fields and not args.messages_only:
        raise TraceError(
            "not_representable",
            f"the sample's {', '.join(fields)} have no place in {args.target}: convert to "
            f"tracebridge to keep them, or pass --messages-only to convert the conversation "
            f"alone",
            path=next(iter(fields)),
            source=args.target,
        )
    return to_json(args.target, get_adapter(args.target).from_messages(messages, **options))


def cmd_convert(args: argparse.Namespace, streams: Streams) -> int:
    options = _writer(args)
    source = _trace_file(args, args.file, streams)
    tally = Tally(args.keep_going, args.errors, streams.stderr)
    out = Output(args.output, streams.stdout)
    with _running([source], tally, out):
        for item, messages in typed_records(source, tally, _told):
            try:
                value = _converted(item, messages, source, args, options)
            except TraceError as exc:
                problem = Problem(exc.code, source.hint(str(exc)), exc)
            except MissingExtraError:
                raise
            except Exception as exc:  # a writer's bug must not end a --keep-going run
                problem = internal_problem(f"writing {args.target}", exc)
            else:
                out.write(value, item.shape)
                tally.good()
                continue
            tally.fail(item, problem, f"{item.where()}cannot write {args.target}: "
                                      f"{problem.message}")
    out.commit()
    return tally.finish()


# --- validate, show, sample --------------------------------------------------------------------


def _verdict(item: Item, problem: Problem) -> str:
    if problem.error is None:
        return _told(item, problem)  # not a verdict on a trace: the record cannot be read
    line = "" if item.shape == "json" else f"line {item.line}: "
    return f"{line}invalid: {problem.code} at {problem.error.path or 'trace'}: {problem.message}"


def cmd_validate(args: argparse.Namespace, streams: Streams) -> int:
    source = _trace_file(args, args.file, streams)
    tally = Tally(args.keep_going, args.errors, streams.stderr, report=streams.stdout)
    with _running([source], tally):
        for item, messages in typed_records(source, tally, _verdict):
            line = "" if item.shape == "json" else f"line {item.line}: "
            streams.stdout.write(f"{line}ok: {len(messages)} messages ({source.format})\n")
            tally.good()
    return tally.finish()


def cmd_show(args: argparse.Namespace, streams: Streams) -> int:
    from .render import render

    source = _trace_file(args, args.file, streams)
    tally = Tally(args.keep_going, args.errors, streams.stderr)
    with _running([source], tally):
        for item, messages in typed_records(source, tally, _told):
            if item.shape != "json":
                streams.stdout.write(("\n" if tally.ok else "") + f"# line {item.line}\n")
            streams.stdout.write(render(messages) + "\n")
            tally.good()
    return tally.finish()


def cmd_sample(args: argparse.Namespace, streams: Streams) -> int:
    from ._cli_sample import run_sample

    files = [_trace_file(args, path, streams) for path in args.files]
    tally = Tally(args.keep_going, args.errors, streams.stderr)

    def typed() -> Any:
        for source in files:
            for item, messages in typed_records(source, tally, _told):
                yield item, messages, source

    with _running(files, tally):
        out = run_sample(args, files, typed(), streams.stdin, streams.stdout, tally,
                         files[0].hint)
    out.commit()
    return tally.finish()


# --- formats, schema, score ------------------------------------------------------------------


def cmd_formats(args: argparse.Namespace, streams: Streams) -> int:
    out = streams.stdout
    for name in READABLE:
        if name == EVENTS:
            summary = "LlamaIndex AgentWorkflow event streams (read only, with --from)"
            readers = reader_options("llama_index", get_adapter("llama_index")
                                     .events_to_messages)  # type: ignore[attr-defined]
            writers: dict[str, Any] = {}
        else:
            module = get_adapter(name)
            doc = (module.__doc__ or "").strip()
            summary = doc.splitlines()[0].replace("``", "") if doc else ""
            readers, writers = reader_options(name), writer_options(name)
        out.write(f"{name:19} {summary}\n")
        if args.options:
            for option in readers.values():
                out.write(f"    --from-option {option}\n")
            for option in writers.values():
                out.write(f"    --to-option   {option}\n")
    return EXIT_OK


def cmd_schema(args: argparse.Namespace, streams: Streams) -> int:
    from .sample import MultiTurnSample

    streams.stdout.write(json.dumps(MultiTurnSample.model_json_schema(), indent=2) + "\n")
    return EXIT_OK


def cmd_score(args: argparse.Namespace, streams: Streams) -> int:
    from .metrics import cli as metrics_cli

    return metrics_cli.run(args, stdin=streams.stdin, stdout=streams.stdout,
                           stderr=streams.stderr)


# --- the parser ------------------------------------------------------------------------------


def _add_reading(sub: argparse.ArgumentParser, *, many: bool = False) -> None:
    if many:
        sub.add_argument("files", nargs="+", metavar="FILE",
                         help="JSON traces, JSON arrays of traces, or JSONL; - is stdin")
    else:
        sub.add_argument("file", metavar="FILE",
                         help="a JSON trace, a JSON array of traces, or JSONL; - is stdin")
    sub.add_argument(
        "--from", dest="source", default="auto", choices=("auto", *READABLE), metavar="FORMAT",
        help="the traces' format, one of " + ", ".join(READABLE) + " (default: told once "
        "from the first records, and said on stderr)",
    )
    sub.add_argument(
        "--at", metavar="PATH",
        help="read the trace at this dot-separated key path inside each JSON document "
        "(e.g. 'trace' for a golden-trace file)",
    )
    sub.add_argument(
        "--from-option", dest="from_options", action="append", metavar="KEY=VALUE",
        help="an option of the source format (see: tracebridge formats --options)",
    )
    sub.add_argument(
        "--allow-pending", action="store_true",
        help="accept unanswered tool calls at the very end (a trace cut mid-tool)",
    )
    sub.add_argument(
        "--keep-going", action="store_true",
        help="go on after a bad record: report it on stderr, end with 'N ok, M failed' "
        "(exit 1 if any failed)",
    )
    sub.add_argument("--errors", metavar="FILE",
                     help="with --keep-going, also write each failure here as JSONL")


def _parser(argv: Sequence[str]) -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="tracebridge",
        description="Convert, validate and show agent conversation traces; build and score "
        "datasets.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, helptext: str, run: Any) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=helptext, description=helptext)
        sub.set_defaults(run=run)
        return sub

    convert = add("convert", "convert traces from one format to another", cmd_convert)
    _add_reading(convert)
    convert.add_argument("--to", dest="target", required=True, choices=FORMATS,
                         metavar="FORMAT", help="one of " + ", ".join(FORMATS))
    convert.add_argument("-o", "--output", metavar="OUT",
                         help="write here (all at once, when the run ends) instead of stdout")
    convert.add_argument(
        "--to-option", dest="to_options", action="append", metavar="KEY=VALUE",
        help="an option of the target format, e.g. drop=is_error (see: tracebridge formats "
        "--options)",
    )
    convert.add_argument("--messages-only", action="store_true",
                         help="convert a sample's conversation and leave its references out")

    _add_reading(add("validate", "check traces; exit 1 if one is invalid", cmd_validate))
    _add_reading(add("show", "print traces as readable conversations", cmd_show))

    sample = add("sample", "make a dataset (MultiTurnSample JSONL) from traces", cmd_sample)
    _add_reading(sample, many=True)
    sample.add_argument("--references", metavar="REFS.jsonl",
                        help="JSONL of {id, reference, reference_tool_calls, reference_topics, "
                        "rubrics, metadata}, matched to traces by id")
    sample.add_argument("--id", metavar="PATH",
                        help="where each document holds its id (default: its 'id' key, else "
                        "its line number)")
    sample.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")

    formats = add("formats", "list the formats", cmd_formats)
    formats.add_argument("--options", action="store_true",
                         help="also list each format's options")
    add("schema", "print the JSON Schema of a MultiTurnSample", cmd_schema)

    score = add("score", "score a dataset of samples with metrics", cmd_score)
    if "score" in argv:  # the metrics are imported only when they are used
        from .metrics import cli as metrics_cli

        metrics_cli.configure(score)
    return parser


# --- main ------------------------------------------------------------------------------------


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the command; returns the exit code."""
    err = stderr or sys.stderr
    streams = Streams(stdin or _stdin(), stdout or sys.stdout, err)
    try:
        words = sys.argv[1:] if argv is None else list(argv)
        args = _parser(words).parse_args(words)
        code: int = args.run(args, streams)
        streams.stdout.flush()
        return code
    except RunStopped as exc:
        if str(exc):
            err.write(f"tracebridge: {exc}\n")
        return exc.exit_code
    except TraceError as exc:
        err.write(f"tracebridge: invalid trace: {command_line_hint(str(exc))}\n")
        return EXIT_INVALID
    except BrokenPipeError:
        _quiet(streams.stdout)
        return EXIT_BROKEN_PIPE
    except (UnreadableInput, OptionError, FormatError, MissingExtraError, OSError) as exc:
        err.write(f"tracebridge: {command_line_hint(str(exc))}\n")
        return EXIT_USAGE
    except KeyboardInterrupt:
        err.write("tracebridge: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:  # the promise is one line, never a traceback; this is a bug
        err.write(f"tracebridge: internal error {type(exc).__name__}: {exc} (a bug: please "
                  f"report it)\n")
        return EXIT_INTERNAL


def _stdin() -> TextIO:
    """Standard input as UTF-8 whatever the locale (a byte-order mark is skipped)."""
    # not a text file (replaced, closed, or already read): use it as it is
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stdin.reconfigure(encoding="utf-8-sig")  # type: ignore[union-attr]
    return sys.stdin


def _quiet(stdout: TextIO) -> None:
    """The reader of stdout went away (``| head``): exit without another error at shutdown."""
    if stdout is sys.stdout:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
