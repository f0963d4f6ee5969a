"""The ``tracebridge`` command.

    tracebridge convert FILE [--from X] --to Y [-o OUT] [--at PATH] [--keep-going]
    tracebridge validate FILE [--from X] [--allow-pending] [--at PATH] [--keep-going]
    tracebridge show FILE [--from X] [--at PATH] [--keep-going]
    tracebridge sample FILE... [--references REFS.jsonl] [--id PATH] [-o OUT]
    tracebridge formats [--options]
    tracebridge schema
    tracebridge score DATASET.jsonl --metric NAME ... [--model M --base-url URL] [--allow-pending]
    tracebridge run CASES.jsonl --out RUN_DIR --metric NAME ... [--model M] [--max-requests N]
    tracebridge gate RUN_DIR --policy POLICY.toml [--junit FILE] [--markdown FILE]
    tracebridge calibrate RUN_DIR [--json]
    tracebridge report RUN_DIR -o report.html [--policy POLICY.toml]

FILE is one JSON trace, a JSON array of traces, or JSONL with one trace per line (``-`` reads
standard input); records are read, converted and written one at a time, in the input's shape.
Exit codes: 0 success, 1 a trace is invalid (or, with --keep-going, some were), 2 the request
or the input is unusable (a standard stream it needs closed, OUT not writable: nothing is left
beside OUT), 70 an internal error (a bug), 130 interrupted (Ctrl-C), 143 and 129 the same,
stopped by SIGTERM (``timeout``, ``docker stop``) or SIGHUP (the terminal closed), which a
command takes as it takes Ctrl-C (nothing is left beside OUT either), 141 the reader of
standard output went away. Errors are one line each, never a traceback. Standard error is
written if it can be: closed or full, it changes neither the run nor its exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from ._cli_commands import (
    Streams,
    cmd_convert,
    cmd_formats,
    cmd_sample,
    cmd_schema,
    cmd_show,
    cmd_validate,
    to_json,
)
from ._cli_input import READABLE
from ._cli_output import (
    EXIT_INTERNAL,
    EXIT_INVALID,
    EXIT_USAGE,
    JSON_SAFE,
    ClosedStream,
    RunStopped,
    os_reason,
)
from ._jsonstream import ESCAPE, UnreadableInput
from .errors import FormatError, MissingExtraError, TraceError
from .options import OptionError, command_line_hint
from .registry import FORMATS

if TYPE_CHECKING:
    from _typeshed import SupportsWrite

__all__ = ["main", "to_json"]

EXIT_INTERRUPTED, EXIT_BROKEN_PIPE = 130, 141
STOP_SIGNALS: dict[str, str] = {"SIGTERM": "terminated", "SIGHUP": "hung up"}
"""The signals a command takes as it takes Ctrl-C, by name (a system may lack SIGHUP), with
what is said when one stops it; it then exits 128 + the signal's number (143, 129)."""


def cmd_score(args: argparse.Namespace, streams: Streams) -> int:
    from .metrics import cli as metrics_cli

    return metrics_cli.run(args, stdin=streams.stdin, stdout=streams.stdout,
                           stderr=streams.stderr)


def cmd_run(args: argparse.Namespace, streams: Streams) -> int:
    from .evaluation import cli as evaluation_cli

    return evaluation_cli.cmd_run(args, streams)


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
                     help="also write each failure here as JSONL (without --keep-going: "
                     "the one that stopped the run); - writes it to stderr in place of the "
                     "failure's line of text")


class _Parser(argparse.ArgumentParser):
    """A parser whose ``--help`` is written to the command's standard output, flushed: help
    that cannot be written is one line and exit 2, as any output is (argparse's own
    ``print_help`` says nothing and exits 0). Started without standard output (``>&-``),
    the help goes to standard error, as argparse's does."""

    stdout: TextIO | None = None

    def error(self, message: str) -> NoReturn:
        """A usage error in one line on standard error, naming the command and where its
        help is (argparse's own writes the usage block first), exit 2; the words it quotes
        with their control characters as escapes."""
        from .evaluation.gate import one_line

        self.exit(2, f"{self.prog}: error: {one_line(message)} (see: {self.prog} --help)\n")

    def print_help(self, file: SupportsWrite[str] | None = None) -> None:
        if file is not None or self.stdout is None or isinstance(self.stdout, ClosedStream):
            super().print_help(file)
            return
        self.stdout.write(self.format_help())
        self.stdout.flush()


def _parser(argv: Sequence[str], stdout: TextIO | None = None) -> argparse.ArgumentParser:
    parser = _Parser(
        prog="tracebridge",
        description="Convert, validate and show agent conversation traces; build and score "
        "datasets.",
    )
    parser.stdout = stdout
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def add(name: str, helptext: str, run: Any) -> argparse.ArgumentParser:
        sub = commands.add_parser(name, help=helptext, description=helptext)
        sub.stdout = stdout
        sub.set_defaults(run=run, refuse=sub.error)  # a word too many is told as the command's
        return sub

    convert = add("convert", "convert traces from one format to another", cmd_convert)
    _add_reading(convert)
    convert.add_argument("--to", dest="target", required=True, choices=FORMATS,
                         metavar="FORMAT", help="one of " + ", ".join(FORMATS))
    convert.add_argument("-o", "--output", metavar="OUT",
                         help="write here (all at once, when the run ends; a FIFO or device "
                         "as it goes) instead of stdout")
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
                        "its element number in a JSON array of traces, or its line number)")
    sample.add_argument("-o", "--output", metavar="OUT", help="write here instead of stdout")

    formats = add("formats", "list the formats", cmd_formats)
    formats.add_argument("--options", action="store_true",
                         help="also list each format's options")
    add("schema", "print the JSON Schema of a MultiTurnSample", cmd_schema)

    score = add("score", "score a dataset of samples with metrics", cmd_score)
    if "score" in argv:  # the metrics are imported only when they are used
        from .metrics import cli as metrics_cli

        metrics_cli.configure(score)
    run = add("run", "run an evaluation over a case file (checks, controls, budget, cache)",
              cmd_run)
    if "run" in argv:
        from .evaluation import cli as evaluation_cli

        evaluation_cli.configure(run)
    _add_run_views(add, argv)
    return parser


def _add_run_views(add: Any, argv: Sequence[str]) -> None:
    """``gate``, ``calibrate`` and ``report``: decisions on and views of a run directory."""
    views = {"gate": "decide on a run directory under a release policy (exit 0/1/2/3/4)",
             "calibrate": "compare a run's goal verdicts with its human labels",
             "report": "write a run as one self-contained HTML page"}
    for name, helptext in views.items():
        sub = add(name, helptext, cmd_run_view)
        if name in argv:
            from .evaluation import gate_cli

            getattr(gate_cli, f"configure_{name}")(sub)
            sub.set_defaults(refuse=sub.error)  # its words are refused as its flags are: exit 4


def cmd_run_view(args: argparse.Namespace, streams: Streams) -> int:
    from .evaluation import gate_cli

    command: int = getattr(gate_cli, f"cmd_{args.command}")(args, streams)
    return command


# --- main ------------------------------------------------------------------------------------


def main(
    argv: Sequence[str] | None = None,
    *,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    stderr: TextIO | None = None,
) -> int:
    """Run the command; returns the exit code."""
    err = _diagnostics(sys.stderr if stderr is None else stderr)
    try:
        return _run(argv, Streams(stdin or _stdin(), stdout or _stdout(), err))
    finally:
        err.flush()  # what another writer left in its buffer fails here, not at exit (120)


def _run(argv: Sequence[str] | None, streams: Streams) -> int:
    """The command's exit code, its errors said on ``streams.stderr``, one line each."""
    err = streams.stderr
    try:
        with _stop_signals() as stopping:
            words = sys.argv[1:] if argv is None else list(argv)
            args = _parsed(_parser(words, streams.stdout), words)
            code: int = args.run(args, streams)
            streams.stdout.flush()
            return _as_signalled(code, stopping)
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
    except OptionError as exc:  # it quotes the pair given, as given (its hints are spelled)
        err.write(f"tracebridge: {exc}\n")
        return EXIT_USAGE
    except (UnreadableInput, FormatError, MissingExtraError, OSError) as exc:
        err.write(f"tracebridge: {command_line_hint(str(exc))}\n")
        return EXIT_USAGE
    except _Stopped as exc:
        err.write(f"tracebridge: {exc}\n")
        return exc.exit_code
    except KeyboardInterrupt:
        err.write("tracebridge: interrupted\n")
        return EXIT_INTERRUPTED
    except Exception as exc:  # the promise is one line, never a traceback; this is a bug
        err.write(f"tracebridge: internal error {type(exc).__name__}: {exc} (a bug: please "
                  f"report it)\n")
        return EXIT_INTERNAL


class _Stopped(KeyboardInterrupt):
    """A stop signal (see STOP_SIGNALS) ended the command: an interrupt, taken the way Ctrl-C
    is (a run that stops early leaves OUT as it was, and nothing beside it)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum
        self.exit_code = 128 + signum

    def __str__(self) -> str:
        name = signal.Signals(self.signum).name
        return f"{STOP_SIGNALS[name]} ({name})"


class _StopHandler:
    """The handler of the stop signals during a command: the first raises ``_Stopped`` where
    the program is, as Ctrl-C raises ``KeyboardInterrupt``. A second one changes nothing (the
    first is being honoured: the run is clearing up), nor does one that comes once the command
    has ended (``over``): there is nothing left to stop."""

    def __init__(self) -> None:
        self.received: int | None = None
        self.over = False

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.received is not None or self.over:
            return
        self.received = signum
        raise _Stopped(signum)


@contextlib.contextmanager
def _stop_signals() -> Iterator[_StopHandler]:
    """``_StopHandler`` handles the stop signals within the block, each only while it has its
    default action (which ends the process without a word), and gives it back at the end.
    ``main`` may be called from Python: a signal the program handles itself (or ignores: ``nohup``
    ignores SIGHUP) is left to it. Only the main thread can set a handler: elsewhere the signals
    are left as they are."""
    handler = _StopHandler()
    taken: list[int] = []
    if threading.current_thread() is threading.main_thread():
        for name in STOP_SIGNALS:
            signum = getattr(signal, name, None)
            if signum is not None and signal.getsignal(signum) is signal.SIG_DFL:
                signal.signal(signum, handler)
                taken.append(signum)
    try:
        yield handler
    finally:
        handler.over = True
        for signum in taken:
            signal.signal(signum, signal.SIG_DFL)


def _as_signalled(code: int, stopping: _StopHandler) -> int:
    """The exit code of a command that took a stop signal as an interrupt and said so in its
    own words (``score``: exit 130): 128 + the signal's number, as when ``_run`` catches it."""
    if code == EXIT_INTERRUPTED and stopping.received is not None:
        return 128 + stopping.received
    return code


def _parsed(parser: argparse.ArgumentParser, words: list[str]) -> argparse.Namespace:
    """The command line parsed. A word no command takes is refused by the command's own
    parser when it has one (``gate``, ``calibrate`` and ``report``: exit 4, as for their
    flags), else by ``parser`` (exit 2)."""
    args, unknown = parser.parse_known_args(words)
    if unknown:
        refuse: Callable[[str], NoReturn] = getattr(args, "refuse", parser.error)
        refuse(f"unrecognized arguments: {' '.join(unknown)}")
    return args


def _stdin() -> TextIO:
    """Standard input as UTF-8 whatever the locale (a byte-order mark is skipped), read as
    ``open_text`` reads a file (a JSONL line that is not UTF-8 is one bad record)."""
    if sys.stdin is None:  # the process was started with its standard input closed
        return _closed("input")
    # not a text file (replaced, closed, or already read): use it as it is
    with contextlib.suppress(AttributeError, ValueError, OSError):
        sys.stdin.reconfigure(encoding="utf-8-sig", errors=ESCAPE)  # type: ignore[union-attr]
    return sys.stdin


def _stdout() -> TextIO:
    """Standard output as UTF-8 whatever the locale, as every OUT is written (JSON on it
    reads back as what was read), and what UTF-8 cannot hold as a JSON escape (see
    JSON_SAFE)."""
    if sys.stdout is None:
        return _closed("output")
    with contextlib.suppress(AttributeError, ValueError, OSError):  # as for _stdin
        sys.stdout.reconfigure(encoding="utf-8", errors=JSON_SAFE)  # type: ignore[union-attr]
    return cast(TextIO, _StandardOutput(sys.stdout))


class _StandardOutput:
    """Standard output, whose failed writes name it (``cannot write standard output:
    [Errno 28] No space left on device``, exit 2); a reader that went away stays a
    ``BrokenPipeError`` (exit 141, without a message)."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        try:
            return self.stream.write(text)
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OSError(f"cannot write standard output: {os_reason(exc)}") from None

    def flush(self) -> None:
        try:
            self.stream.flush()
        except BrokenPipeError:
            raise
        except OSError as exc:
            raise OSError(f"cannot write standard output: {os_reason(exc)}") from None

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _diagnostics(stream: TextIO | None) -> TextIO:
    """Standard error for what the command says about its run (notices, errors, counts): a
    stream that cannot take them (closed, ``2>&-``; full, ``2>/dev/full``) loses them, and
    the run goes on as it would have, with its own exit status."""
    return cast(TextIO, _BestEffort(stream))


class _BestEffort:
    """A stream dropped at its first failed write or flush (none at all when there is no
    stream). The process's standard error is let go of too: what a failed write left in its
    buffer would fail again at the interpreter's flush at exit, which then exits 120."""

    def __init__(self, stream: TextIO | None) -> None:
        self.stream = stream

    def write(self, text: str) -> int:
        if self.stream is not None:
            try:
                self.stream.write(text)
            except (OSError, ValueError):
                self._drop()
        return len(text)

    def flush(self) -> None:
        if self.stream is not None:
            try:
                self.stream.flush()
            except (OSError, ValueError):
                self._drop()

    def _drop(self) -> None:
        if self.stream is sys.stderr:
            sys.stderr = None
        self.stream = None


def _closed(which: str) -> TextIO:
    """A standard stream the process was started without (``>&-``): using it is an error
    of the command line (exit 2), not of the program; a run that does not use it is not
    stopped by it."""
    hint = "give a file instead" if which == "input" else "give -o FILE instead"
    return cast(TextIO, ClosedStream(f"standard {which} is closed; {hint}"))


def _quiet(stdout: TextIO) -> None:
    """The reader of stdout went away (``| head``): exit without another error at shutdown."""
    if isinstance(stdout, _StandardOutput):
        stdout = stdout.stream
    if stdout is sys.stdout:
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
