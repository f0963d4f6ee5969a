"""The commands that read traces: ``convert``, ``validate``, ``show``, ``sample``, and the
listings ``formats`` and ``schema``. ``cli.py`` parses the command line and calls them.
"""

from __future__ import annotations

import argparse
import contextlib
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, TextIO

from ._cli_input import EVENTS, READABLE, WHOLE_FILE, Item, Problem, TraceFile
from ._cli_output import (
    EXIT_OK,
    Output,
    RunStopped,
    Tally,
    internal_problem,
    same_file,
    typed_records,
)
from ._jsonstream import Shape
from .errors import MissingExtraError, TraceError
from .messages import Message
from .options import OptionError, command_line_hint, parse_options, reader_options, writer_options
from .registry import NATIVE, carried, get_adapter
from .sample import surrogate_key_in

__all__ = [
    "Streams",
    "cmd_convert",
    "cmd_formats",
    "cmd_sample",
    "cmd_schema",
    "cmd_show",
    "cmd_validate",
    "to_json",
]


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
        return [_model_json(item, format_name, i) for i, item in enumerate(trace)]
    return _model_json(trace, format_name, None)


def _model_json(value: Any, format_name: str, index: int | None) -> Any:
    model_dump = getattr(value, "model_dump", None)
    if not callable(model_dump):
        return value
    try:
        dumped = model_dump(mode="json")
    except UnicodeEncodeError:  # pydantic's JSON mode encodes a nested dict key as UTF-8
        raise _lone_surrogate(format_name, index) from None
    # but a dict field's own key it writes as U+FFFD, without an error: only a U+FFFD in a
    # key is worth the closer look, at the Python form (a U+FFFD may be the text's own)
    if _replacement_in_key(dumped) and surrogate_key_in(model_dump()):
        raise _lone_surrogate(format_name, index)
    return dumped


def _lone_surrogate(format_name: str, index: int | None) -> TraceError:
    return TraceError(
        "not_representable",
        f"the {format_name} object holds a lone surrogate (text read with "
        f"surrogateescape, or a \\udcXX escape), which its JSON dump cannot write; "
        f"convert to tracebridge or a dict format to keep it",
        index=index,
        path=None if index is None else f"messages[{index}]",
        source=format_name,
    )


def _replacement_in_key(value: Any) -> bool:
    """Whether a dict in ``value`` (plain JSON values) has a key holding U+FFFD."""
    if type(value) is dict:
        for key, item in value.items():
            if "\ufffd" in key or (type(item) in (dict, list) and _replacement_in_key(item)):
                return True
    elif type(value) is list:
        return any(type(item) in (dict, list) and _replacement_in_key(item) for item in value)
    return False


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
    """Close what a run opened; a run that stops early leaves OUT as it was.

    When ``--errors FILE`` cannot be written either, the failure that stopped the run is
    still told, and the run ends on the write failure (exit 2); an interrupt stays one."""
    try:
        yield
    except BaseException as stopped:
        if out is not None:
            out.abandon()
        unwritten = tally.abandon()
        if unwritten is not None:
            if isinstance(stopped, RunStopped):
                if str(stopped):
                    tally.stderr.write(f"tracebridge: {stopped}\n")
                raise unwritten from None
            tally.stderr.write(f"tracebridge: {unwritten}\n")
        raise
    finally:
        for source in sources:
            source.close()


def _outputs_apart(args: argparse.Namespace, files: list[str]) -> None:
    """Refuse ``--errors FILE`` that is an input or OUT: it is opened (emptied) at once, before
    the input is read. ``-o OUT`` may be the input: it is written beside it and put in place
    when the run ends, once the input has been read whole."""
    inputs: list[tuple[str, str | None]] = [("the input", path) for path in files]
    inputs += [("the references file", getattr(args, "references", None)),
               ("-o", getattr(args, "output", None))]
    clash = same_file(args.errors, inputs)
    if clash is not None:
        raise OptionError(f"--errors {clash}")


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
        # a sample stays a sample, references and all
        return build_sample(messages, fields, source.options.get("allow_pending") is True)
    if fields and not args.messages_only:
        raise TraceError(
            "not_representable",
            f"the sample's {', '.join(fields)} have no place in {args.target}: convert to "
            f"tracebridge to keep them, or pass --messages-only to convert the conversation "
            f"alone",
            path=next(iter(fields)),
            source=args.target,
        )
    assert source.format is not None  # told before its first record was read
    written = get_adapter(args.target).from_messages(
        carried(messages, source.format, args.target), **options)
    return to_json(args.target, written)


def cmd_convert(args: argparse.Namespace, streams: Streams) -> int:
    _outputs_apart(args, [args.file])
    options = _writer(args)
    source = _trace_file(args, args.file, streams)
    tally = Tally(args.keep_going, args.errors, streams.stderr)
    out = Output(args.output, streams.stdout)
    moved: Shape | None = None
    """The shape OUT is written in, once a record is written at another place of OUT than
    of FILE (after a failed record or a blank line, both left out)."""
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
                out.write(value, item.written_as or item.shape)
                if _number_in_file(item) != out.count:
                    moved = item.written_as or item.shape
                tally.good()
                continue
            tally.fail(item, problem, f"{item.where()}cannot write {args.target}: "
                                      f"{problem.message}")
        tally.complete()  # --errors FILE first: OUT is put in place only when it is written
    out.commit(_shape_written(source))
    status = tally.finish()
    if moved is not None:
        streams.stderr.write(f"tracebridge: {_places_moved(args, moved)}\n")
    return status


def _number_in_file(item: Item) -> int:
    """The number ``sample`` gives ``item`` by its place in FILE: its element number in an
    array, else its line number (the line a record of several lines starts on)."""
    return item.line if item.element is None else item.element


def _places_moved(args: argparse.Namespace, shape: Shape) -> str:
    """Why ids by place do not carry over from FILE to OUT: OUT holds each record written
    on the next line (element), none for a failed record or a blank line of FILE, and OUT's
    formats have no place for an id (``sample`` numbers them again, pairing references with
    other conversations)."""
    out = "standard output" if args.output in (None, "-") else args.output
    file = "standard input" if args.file == "-" else args.file
    number, left_out = (("element number", "element for a failed record") if shape == "array"
                        else ("line number", "line for a failed record or a blank line"))
    return (f"{out} has no {left_out} of {file}: a record after one has another {number} "
            f"there than in {file}, so ids by {number} (as sample --references matches them) "
            f"do not carry over; run sample on {file}")


def _shape_written(source: TraceFile) -> Shape | None:
    """The shape of what ``convert`` writes, when no record was written: FILE's (an array of
    traces is ``[]``), none for a file read whole as one trace (its one record failed)."""
    return None if source.format == WHOLE_FILE else source.documents.shape


# --- validate, show, sample --------------------------------------------------------------------


def _verdict(item: Item, problem: Problem) -> str:
    if problem.error is None:
        return _told(item, problem)  # not a verdict on a trace: the record cannot be read
    return (f"{_place(item)}invalid: {problem.code} at {problem.error.path or 'trace'}: "
            f"{problem.message}")


def _place(item: Item) -> str:
    """``line N: `` (``element K (line N): `` in an array) before a record's verdict in a
    file of several records; nothing for a single document."""
    return "" if item.shape == "json" else f"{item.place()}: "


def cmd_validate(args: argparse.Namespace, streams: Streams) -> int:
    _outputs_apart(args, [args.file])
    source = _trace_file(args, args.file, streams)
    tally = Tally(args.keep_going, args.errors, streams.stderr, report=streams.stdout)
    with _running([source], tally):
        for item, messages in typed_records(source, tally, _verdict):
            streams.stdout.write(
                f"{_place(item)}ok: {len(messages)} messages ({source.format})\n")
            tally.good()
    return tally.finish()


def cmd_show(args: argparse.Namespace, streams: Streams) -> int:
    from .render import render

    _outputs_apart(args, [args.file])
    source = _trace_file(args, args.file, streams)
    tally = Tally(args.keep_going, args.errors, streams.stderr)
    with _running([source], tally):
        for item, messages in typed_records(source, tally, _told):
            if item.shape != "json":
                streams.stdout.write(("\n" if tally.ok else "") + f"# {item.place()}\n")
            streams.stdout.write(render(messages) + "\n")
            tally.good()
    return tally.finish()


def cmd_sample(args: argparse.Namespace, streams: Streams) -> int:
    from ._cli_sample import read_stdin_once, run_sample

    read_stdin_once(args.files, args.references)
    _outputs_apart(args, args.files)
    files = [_trace_file(args, path, streams) for path in args.files]
    tally = Tally(args.keep_going, args.errors, streams.stderr)

    def typed() -> Any:
        for source in files:
            for item, messages in typed_records(source, tally, _told):
                yield item, messages, source

    with _running(files, tally):
        out = run_sample(args, files, typed(), streams.stdin, streams.stdout, tally,
                         files[0].hint)
        try:
            tally.complete()  # --errors FILE first: OUT is put in place only when it is written
        except BaseException:
            out.abandon()
            raise
    out.commit()
    return tally.finish()


# --- formats, schema, score ------------------------------------------------------------------


def cmd_formats(args: argparse.Namespace, streams: Streams) -> int:
    out = streams.stdout
    for name in READABLE:
        if name == EVENTS:
            summary = "LlamaIndex AgentWorkflow event streams (read, not written)"
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
