"""The command line's output side: where records go, and how failures are counted.

``Output`` writes converted records in the input's shape (one JSON document, a JSON array,
or JSONL) as they come. With ``-o OUT`` it writes a temporary file beside OUT and renames
it over OUT only when the run ends normally, so OUT is never left half-written. When OUT is
a symbolic link, that is done beside the file it names (which is replaced; the link stays a
link); when OUT exists and is not a regular file (a FIFO, a device such as ``/dev/null``),
it is written directly, as it goes, since no file could be put in its place.

``Tally`` counts good and failed records. Without ``--keep-going`` the first failure ends
the run (``RunStopped``); with it, each failure is one line on standard error (and one JSON
object in ``--errors FILE``), and the run ends with ``N ok, M failed``. ``--errors -`` writes
each failure's JSON object to standard error in place of its line of text.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import stat
import tempfile
from collections.abc import Callable, Iterator, Sequence
from typing import Any, TextIO

from ._cli_input import Item, Problem, TraceFile
from ._jsonstream import Shape
from .errors import MissingExtraError, TraceError
from .messages import Message

__all__ = [
    "EXIT_INTERNAL",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_USAGE",
    "JSON_SAFE",
    "ClosedStream",
    "Output",
    "RunStopped",
    "Tally",
    "internal_problem",
    "os_reason",
    "same_file",
    "summary_stream",
    "typed_records",
]

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70
JSON_SAFE = "backslashreplace"
"""How text that UTF-8 cannot hold (a lone surrogate, which JSON's \\ud800 escape can
spell) is written: as that same escape, so the JSON written reads back as what was read."""


class RunStopped(Exception):
    """A record failed and ``--keep-going`` was not given: the run ends with ``exit_code``."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


class ClosedStream(io.TextIOBase):
    """A standard stream the process was started without (``>&-``): reading or writing it
    fails saying ``why`` (exit 2)."""

    def __init__(self, why: str) -> None:
        super().__init__()
        self.why = why

    def read(self, size: int | None = -1) -> str:
        raise OSError(self.why)

    def readline(self, size: int | None = -1) -> str:  # type: ignore[override]
        raise OSError(self.why)

    def write(self, text: str) -> int:
        raise OSError(self.why)


def summary_stream(stdout: TextIO, stderr: TextIO) -> TextIO:
    """Where a run whose results went to a file (``score -o OUT``, ``run --out RUN_DIR``)
    writes its closing summary: standard output, or standard error when standard output is
    closed (``>&-``). The summary is talk about the run, which a closed standard output
    neither stops nor fails (its exit status is the run's)."""
    return stderr if isinstance(stdout, ClosedStream) else stdout


class Output:
    """Records written as they come, in the shape the input had."""

    def __init__(self, path: str | None, stdout: TextIO) -> None:
        self.path = None if path in (None, "-") else path
        self._temp: str | None = None
        self._target = ""
        """The file the temporary file replaces: OUT, or the file it links to."""
        self._direct = False
        """OUT is written as it goes (it is not a regular file), and closed at the end."""
        self.count = 0
        self._shape: Shape | None = None
        self._shared: int | None = None
        """The descriptor of the standard stream OUT is (``-o /dev/stdout``), or None."""
        if self.path is None:
            self.stream = stdout
            return
        self._shared = standard_stream(self.path)
        try:
            self.stream = self._open(self.path)
        except OSError as exc:  # no such directory, a read-only one: OUT is named, not the
            raise self._cannot_write(exc) from None  # temporary file beside it

    def _open(self, path: str) -> TextIO:
        if self._shared is not None:  # -o /dev/stdout, redirected to a file: written through it
            self._direct = True
            return os.fdopen(os.dup(self._shared), "w", encoding="utf-8", errors=JSON_SAFE)
        target = _replaced(path)
        if target is None:
            self._direct = True
            return open(path, "w", encoding="utf-8", errors=JSON_SAFE)  # commit/abandon close it
        self._target = target
        directory, base = os.path.split(target)
        descriptor, self._temp = tempfile.mkstemp(
            prefix=f".{base}.", suffix=".partial", dir=directory
        )
        return os.fdopen(descriptor, "w", encoding="utf-8", errors=JSON_SAFE)

    def write(self, value: Any, shape: Shape) -> None:
        """Write one record; ``shape`` is the input's."""
        self._shape = shape
        if shape == "json":
            text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
        elif shape == "array":
            text = ("[\n" if self.count == 0 else ",\n") + json.dumps(value, ensure_ascii=False)
        else:
            text = json.dumps(value, ensure_ascii=False) + "\n"
        try:
            self.stream.write(text)
        except OSError as exc:
            if self.path is None:
                raise  # standard output: a reader that went away is exit 141, not an error
            raise self._cannot_write(exc) from None
        self.count += 1

    def commit(self, shape: Shape | None = None) -> None:
        """The run ended normally: close an open array and put OUT in place. ``shape`` is
        the input's, for a run that wrote no record: an array of traces whose every record
        failed is written as ``[]``, not as nothing."""
        self._shape = self._shape or shape
        if self._direct:
            try:
                if self._shape == "array":
                    self.stream.write("\n]\n" if self.count else "[]\n")
                self.stream.close()
            except OSError as exc:
                raise self._cannot_write(exc) from None
            finally:
                self._direct = False
            return
        if self._temp is None:  # standard output
            if self._shape == "array":
                self.stream.write("\n]\n" if self.count else "[]\n")
            self.stream.flush()
            return
        try:
            if self._shape == "array":
                self.stream.write("\n]\n" if self.count else "[]\n")
            self.stream.close()  # the last write (a full disk)
            _as_replaced(self._temp, self._target)
            os.replace(self._temp, self._target)
        except BaseException as exc:  # OUT cannot be put in place (a full disk, a closed
            with contextlib.suppress(OSError, ValueError):  # directory)
                self.stream.close()
            with contextlib.suppress(OSError):
                os.unlink(self._temp)  # no stray copy of the output is left beside it
            self._temp = None
            if isinstance(exc, OSError):  # named as OUT, not as the temporary file
                raise self._cannot_write(exc) from None
            raise
        self._temp = None

    def _cannot_write(self, exc: OSError) -> OSError:
        """Writing OUT failed (a full disk, ``/dev/full``, a FIFO whose reader went away): one
        line naming OUT, exit 2. A broken pipe is no closed standard output, unless OUT is
        standard output (``-o /dev/stdout | head -1``): that stays a ``BrokenPipeError``,
        exit 141 without a message, as when no ``-o`` is given."""
        if isinstance(exc, BrokenPipeError) and self._shared == 1:
            return exc
        return OSError(f"cannot write {self.path}: {os_reason(exc)}")

    def abandon(self) -> None:
        """The run stopped: OUT is left as it was (standard output keeps what it got; OUT
        written directly keeps what it got, and is closed).

        Nothing is left beside OUT either, even when closing fails again for the reason the
        run stopped (a full disk: the buffered rest cannot be written)."""
        if self._direct:
            self._direct = False
            with contextlib.suppress(OSError, ValueError):
                self.stream.close()
            return
        if self._temp is None:
            return
        temp, self._temp = self._temp, None
        try:
            with contextlib.suppress(OSError, ValueError):
                self.stream.close()
        finally:
            with contextlib.suppress(OSError):
                os.unlink(temp)


class Tally:
    """Good and failed records, the ``--keep-going`` policy, and ``--errors FILE`` (``-``:
    standard error, where each failure is then its JSON object instead of a line of text)."""

    def __init__(
        self, keep_going: bool, errors: str | None, stderr: TextIO, report: TextIO | None = None
    ) -> None:
        self.keep_going = keep_going
        self.stderr = stderr
        self.report = report
        """Where invalid traces are told when that is the command's output (``validate``);
        a record that cannot be read at all is told on standard error all the same."""
        self.ok = 0
        self.failed = 0
        self.internal = 0
        self._errors_path = errors
        self._errors: TextIO | None = None
        self._json_on_stderr = errors == "-"
        """``--errors -``: each failure is told on standard error as its JSON object only."""
        if errors is not None and not self._json_on_stderr:
            try:
                self._errors = open(  # noqa: SIM115 - closed in finish
                    errors, "w", encoding="utf-8", errors=JSON_SAFE
                )
            except OSError as exc:  # a directory, a closed one: named as --errors
                raise self._cannot_write(exc) from None

    def good(self) -> None:
        self.ok += 1

    def fail(self, item: Item, problem: Problem, message: str) -> None:
        """Count a failed record; without ``--keep-going`` this ends the run.

        When ``--errors FILE`` cannot be written, the failure is still told, then the run
        stops on that (exit 2)."""
        self.failed += 1
        self.internal += problem.code == "internal_error"
        reported = self.report is not None and problem.error is not None
        if reported:
            assert self.report is not None
            self.report.write(message + "\n")
        try:
            self._record(item, problem)
        except OSError:
            if not reported:
                self.stderr.write(f"tracebridge: {message}\n")
            raise
        told = reported or self._json_on_stderr
        if not self.keep_going:
            raise RunStopped("" if told else message, _exit_code(problem))
        if not told:
            self.stderr.write(f"tracebridge: {message}\n")

    def _record(self, item: Item, problem: Problem) -> None:
        """The failure as one JSON line in ``--errors FILE`` (also the one that ends a run);
        a record of an array of traces has its ``element`` too."""
        errors = self.stderr if self._json_on_stderr else self._errors
        if errors is not None:
            error = problem.error
            place = {"line": item.line}
            if item.element is not None:
                place["element"] = item.element
            text = json.dumps({
                "file": item.file,
                **place,
                "code": problem.code,
                "index": error.index if error is not None else None,
                "path": error.path if error is not None else None,
                "source": error.source if error is not None else None,
                "message": problem.message,
            }, ensure_ascii=False) + "\n"
            try:
                errors.write(text)
            except OSError as exc:  # a full disk, /dev/full
                self.abandon()
                raise self._cannot_write(exc) from None

    def finish(self) -> int:
        """Close ``--errors``, print the count line, and give the exit status."""
        self.complete()
        if self.keep_going:
            self.stderr.write(f"{self.ok} ok, {self.failed} failed\n")
        if self.internal:
            return EXIT_INTERNAL
        return EXIT_INVALID if self.failed else EXIT_OK

    def complete(self) -> None:
        """Close ``--errors``: before OUT is put in place, so that OUT is left as it was when
        FILE cannot be written. The count line is printed all the same (``--keep-going``)."""
        try:
            self.close()
        except OSError:
            if self.keep_going:
                self.stderr.write(f"{self.ok} ok, {self.failed} failed\n")
            raise

    def close(self) -> None:
        """Close ``--errors``; ``OSError`` naming it when its last lines cannot be written."""
        if self._errors is not None:
            errors, self._errors = self._errors, None
            try:
                errors.close()
            except OSError as exc:
                raise self._cannot_write(exc) from None

    def abandon(self) -> OSError | None:
        """Close ``--errors`` as a run stops for another reason: whether that failed too."""
        try:
            self.close()
        except OSError as exc:
            return exc
        return None

    def _cannot_write(self, exc: OSError) -> OSError:
        return OSError(f"cannot write --errors {self._errors_path}: {os_reason(exc)}")


def os_reason(exc: OSError) -> str:
    """What the system said, without the file it names (the temporary file beside OUT is
    no file the user gave): ``[Errno 2] No such file or directory``."""
    if exc.errno is not None and exc.strerror:
        return f"[Errno {exc.errno}] {exc.strerror}"
    return str(exc)


def _exit_code(problem: Problem) -> int:
    if problem.error is not None:
        return EXIT_INVALID
    if problem.code == "internal_error":
        return EXIT_INTERNAL
    return EXIT_USAGE  # the input itself is unusable: not JSON, nothing at --at, too deep


def standard_stream(path: str) -> int | None:
    """The descriptor (1 or 2) of this process's output stream that is open on the file
    ``path`` names, or None. ``-o /dev/stdout`` with standard output redirected to a file
    names that file: replacing it, or opening it anew (truncated, at another offset), would
    cut off or overwrite what else is written to the stream, so it is written through the
    stream's own descriptor.

    Standard input is never one: it is open for reading only (``< /dev/null``), so OUT
    naming the file it reads (``/dev/null``, or FILE itself with ``convert FILE -o FILE <
    FILE``) is written as any other OUT is."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    for fd in (1, 2):
        try:
            opened = os.fstat(fd)
        except OSError:  # closed
            continue
        if (opened.st_dev, opened.st_ino) == (found.st_dev, found.st_ino):
            return fd
    return None


def _replaced(path: str) -> str | None:
    """The file ``-o path`` replaces: ``path`` itself, or the file a symbolic link names
    (the link stays a link); None when ``path`` exists and is not a regular file (a FIFO, a
    device, a directory), which is written directly instead (a directory fails to open)."""
    try:
        found = os.stat(path)  # through links; a loop or a closed directory is an OSError
    except FileNotFoundError:  # not there yet, or a link to nothing yet: made where it points
        return os.path.realpath(path)
    if not stat.S_ISREG(found.st_mode):
        return None
    return os.path.realpath(path)


def _as_replaced(temp: str, target: str) -> None:
    """Give the file that replaces ``target`` the mode (less setuid and setgid) and, where the
    system allows it, the owner and group ``target`` has, as if it had been written directly;
    a new ``target`` gets what creating it would give (``0o666`` less the umask), not
    ``mkstemp``'s 0600."""
    try:
        found = os.stat(target)
    except FileNotFoundError:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(temp, 0o666 & ~umask)
        return
    # Another user's file cannot be given to them (nor can an owner unknown here, in a user
    # namespace): it is then ours, as a file written anew is, in its group when we may.
    try:
        os.chown(temp, found.st_uid, found.st_gid)
    except OSError:
        with contextlib.suppress(OSError):
            os.chown(temp, -1, found.st_gid)
    # a write clears setuid and setgid, as writing OUT directly would have
    os.chmod(temp, stat.S_IMODE(found.st_mode) & ~(stat.S_ISUID | stat.S_ISGID))


def same_file(output: str | None, inputs: Sequence[tuple[str, str | None]]) -> str | None:
    """Why ``output`` must not be written: it is the same file as one of ``inputs`` (pairs
    of what the input is and its path), which writing it would destroy before it is read;
    None when it is another file (or ``-``, or not there yet)."""
    if output is None or output == "-":
        return None
    for what, path in inputs:
        if path is None:
            continue
        if path == "-":
            same = _is_standard_input(output)
            path = "- (standard input)"
        else:
            try:
                same = os.path.samefile(output, path)
            except (OSError, ValueError):  # one does not exist (yet): the same file only by name
                same = os.path.abspath(output) == os.path.abspath(path)
        if same:
            return (f"{output} is the same file as {what} {path}: writing it would destroy it; "
                    "give another file")
    return None


def _is_standard_input(output: str) -> bool:
    """Whether ``output`` names the regular file standard input reads (``< FILE``); a device
    or a pipe is read and written apart (``-o /dev/null < /dev/null``)."""
    try:
        opened = os.fstat(0)
        found = os.stat(output)
    except (OSError, ValueError):  # closed, or OUT not there yet
        return False
    return stat.S_ISREG(opened.st_mode) and (opened.st_dev, opened.st_ino) == (
        found.st_dev, found.st_ino)


def internal_problem(doing: str, exc: Exception) -> Problem:
    """An exception no reader or writer should raise: a bug, told in one line."""
    if isinstance(exc, RecursionError):
        return Problem("too_deep", f"{doing}: the trace is nested too deeply to read")
    return Problem(
        "internal_error",
        f"{doing}: internal error {type(exc).__name__}: {exc} (a bug in tracebridge: please "
        f"report it with this record)",
    )


def typed_records(
    source: TraceFile, tally: Tally, describe: Callable[[Item, Problem], str]
) -> Iterator[tuple[Item, list[Message]]]:
    """The readable records of ``source`` with their messages; the rest go to ``tally``."""
    for item in source.items():
        problem = item.problem
        if problem is None:
            try:
                messages = source.messages(item)
            except TraceError as exc:
                problem = Problem(exc.code, source.hint(str(exc)), exc)
            except MissingExtraError:
                raise  # no record can be read: a usage error, not a bad record
            except Exception as exc:  # a reader's bug must not end a --keep-going run
                problem = internal_problem(f"reading it as {source.format}", exc)
            else:
                yield item, messages
                continue
        tally.fail(item, problem, describe(item, problem))
