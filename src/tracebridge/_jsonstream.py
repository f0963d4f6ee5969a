"""Read JSON documents from a text stream one at a time, in flat memory.

A file holds one JSON document, a JSON array of conversations, or JSONL (one document per
line). ``JsonDocuments`` tells which from the text itself and yields the documents as it
reads them, so a 200 MB file never sits in memory whole:

* the first document is decoded with ``json.JSONDecoder.raw_decode`` over a buffer that
  grows (doubling) only while that document is incomplete;
* a top-level array whose first element is itself a conversation (``is_record`` says so) is
  streamed element by element;
* once a second document follows the first, the file is JSONL and is read line by line from
  its first line on, so one broken line is one failed record, not the end of the file.

What a line is, as every JSONL reader of ours has it (``tracebridge.ray_data`` included): JSON
Lines are separated by ``\n`` alone (a ``\r`` before it is JSON whitespace at the end of the
line, so ``\r\n`` files read the same; a lone ``\r`` ends no line), the stream is read
without newline translation (``JsonDocuments`` sets ``newline="\n"`` on a text stream that has
not been read yet). A line is blank, and no record, when it holds JSON whitespace only (space,
tab, ``\r``); anything else on a line is read as a document (``\u00a0`` alone is not JSON). A
line holding two documents is not JSON ("Extra data"), the first line too. An object that has
a key twice is refused (``tracebridge._json.RepeatedKey``) like text that is not JSON: which
value was meant is not known.

Bytes that are not UTF-8: a stream opened with ``errors=ESCAPE`` (``open_text``, the command
line's standard input) holds each such byte as ``surrogateescape`` does, a character
U+DC80..U+DCFF, which no UTF-8 text decodes to. A JSONL line holding one is a record that is
not text (``Record.code`` ``no_record``, as ``tracebridge.ray_data`` gives that line a null
record), and the lines after it are read; a document that is not a JSONL line (one JSON
document, an array of conversations) refuses the input whole, as a stream read strictly does.
The ``ESCAPE`` handler counts what it escapes, so text is searched for such characters only
once some were made: reading a file that is all UTF-8 costs nothing more.

A pipe or a terminal (``tracebridge sample ... | tracebridge score -``) is read as its bytes
arrive (``_Arrivals``): a document is read as soon as it is whole, without waiting for a chunk
to fill or for the end of the input. A first document alone on its line is yielded before the
next line is read; ``shape`` is told once asked (``json`` when nothing follows, ``jsonl`` when
more does), which reads on until that is known. A document that is not whole yet is read on
as a file is, until the doubled size has come (or the end of its first line, if none has
come yet), so a long one that arrives in pieces is still decoded a logarithmic number of
times. A first line that is not JSON is a failed JSONL record when the next line that is not
blank is a document: that line is read on until it is whole, in a file as in a pipe (where
it may not have come yet). A file's first line must end in the chunks read already (a broken
document is found without reading the rest); a pipe's is read to its end.
"""

from __future__ import annotations

import codecs
import io
import json
import os
import re
import select
import stat
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Literal, TextIO

from ._json import UNIQUE_KEYS_DECODER

__all__ = ["ESCAPE", "JsonDocuments", "Record", "Shape", "UnreadableInput"]

Shape = Literal["json", "array", "jsonl"]
"""``json``: one document; ``array``: an array of conversations; ``jsonl``: one per line."""
Until = Literal["arrived", "line_end", "size"]
"""How long a pipe's read waits (``_Arrivals.read``): for what has arrived, for a ``\n``, or
for the size asked."""

_CHUNK = 1 << 16
_WHITESPACE = re.compile(r"[ \t\n\r]*")
BLANK = " \t\r"
"""What a blank line may hold (JSON whitespace): ``line.strip(BLANK)`` is empty."""
_DECODER = UNIQUE_KEYS_DECODER
_JSONL_SUFFIXES = (".jsonl", ".ndjson", ".jsonlines")
_HOLD = 1 << 18
"""Characters of a one-line top-level array held back before it is taken as conversations."""
_UNDECODABLE = re.compile("[\udc80-\udcff]")
"""A byte that is not UTF-8, as ``surrogateescape`` holds it (a JSON ``\\udc80`` escape is
six ASCII characters, never this)."""
NOT_TEXT = "no_record"
"""``Record.code`` of a JSONL line that is not UTF-8 text."""
ESCAPE = "tracebridge.surrogateescape"
"""The error handler to read JSON text with: ``surrogateescape``, counted (``_Escaped``)."""
_SURROGATEESCAPE = codecs.lookup_error("surrogateescape")


class _Escaped:
    """How many runs of bytes that are not UTF-8 ``ESCAPE`` has escaped in this process."""

    runs = 0


def _escape(error: UnicodeError) -> tuple[str | bytes, int]:
    _Escaped.runs += 1
    return _SURROGATEESCAPE(error)


codecs.register_error(ESCAPE, _escape)


class UnreadableInput(Exception):
    """The input cannot be read as JSON at all (one line, says where)."""


@dataclass(frozen=True)
class Record:
    """One document: its value, or why its line is not JSON (JSONL only)."""

    line: int
    """The line the document starts on (1-based)."""
    value: Any = None
    problem: str | None = None
    """``not valid JSON: ...`` for a JSONL line that does not parse, or holds an object with a
    key twice; ``not UTF-8 text: ...`` for one that is not text; the value is then None."""
    code: str = "not_json"
    """What the problem is, when there is one: ``not_json``, or ``no_record`` (``NOT_TEXT``)
    for a line that is not UTF-8 text."""


def is_jsonl_name(name: str) -> bool:
    """A file whose name says JSONL is JSONL even with a single line."""
    return name.lower().endswith(_JSONL_SUFFIXES)


class JsonDocuments:
    """The documents of ``stream``; ``shape`` is known once the first one has been read.

    ``name`` is how errors name the input; ``is_record`` tells an element of a top-level
    array that is a conversation of its own (the array is then streamed) from one that is
    part of a single trace (a message). ``jsonl`` reads JSONL from the start (a file named
    so); ``allow_empty`` yields nothing for an empty input instead of refusing it.

    A text stream that has not been read yet is set to read without newline translation
    (``newline="\n"``): a lone ``\r`` ends no JSONL line. A stream read with
    ``errors="surrogateescape"`` has its bytes that are not UTF-8 told line by line (see the
    module's docstring); a strict one fails whole at the first.
    """

    def __init__(
        self,
        stream: TextIO,
        name: str,
        is_record: Callable[[Any], bool],
        *,
        jsonl: bool = False,
        allow_empty: bool = False,
    ) -> None:
        self._arrivals = _arrivals(stream) if _untranslated(stream) else None
        """Where a pipe or a terminal is read from as its bytes arrive; None for a file."""
        self.stream = stream
        self._escaped = getattr(stream, "errors", None) == ESCAPE
        self._undecodable: int | None = None
        """Where the first byte that is not UTF-8 is (absolute), once a chunk read holds one."""
        self.allow_empty = allow_empty
        self.name = name
        self.is_record = is_record
        self._shape: Shape | None = "jsonl" if jsonl else None
        self._told_later = False
        """The first document was alone on its line and was yielded before what follows it
        was read: ``shape`` reads on to tell ``json`` from ``jsonl`` when asked."""
        self._buffer = ""
        self._pos = 0
        self._line = 1
        self._dropped = 0  # characters removed from the front of the buffer
        self._eof = False
        self._hold: int | None = 0
        """Where the first document's line starts (absolute), kept in the buffer until the
        document is read: when more follows on that line, the file is JSONL and the line is
        read again as any JSONL line is. None once it is of no use."""

    @property
    def shape(self) -> Shape | None:
        """``json``, ``array`` or ``jsonl`` once the first document has been read (None before,
        and for an empty input). Asked right after a first document alone on its line, it reads
        on until the next document or the end of the input says which."""
        return self._tell_shape()

    @shape.setter
    def shape(self, shape: Shape | None) -> None:
        self._shape = shape

    @property
    def is_array(self) -> bool:
        """Whether the documents are the elements of a top-level array, known without reading
        on (a first document alone on its line is no element)."""
        return self._shape == "array"

    def _tell_shape(self) -> Shape | None:
        if self._told_later:
            self._told_later = False
            self._shape = "jsonl" if self._peek() else "json"
        return self._shape

    # --- the buffer ----------------------------------------------------------------------

    def _read(self, size: int, until: Until = "arrived") -> None:
        chunk = self._read_text(size, until)
        if not chunk:
            self._eof = True
            return
        cut = self._pos if self._hold is None else min(self._pos, self._hold - self._dropped)
        if cut:
            self._dropped += cut
            self._buffer = self._buffer[cut:]
            self._pos -= cut
        if self._escaped and _Escaped.runs and self._undecodable is None \
                and not chunk.isascii():
            found = _UNDECODABLE.search(chunk)
            if found is not None:
                self._undecodable = self._dropped + len(self._buffer) + found.start()
        self._buffer += chunk

    def _read_text(self, size: int, until: Until = "arrived") -> str:
        try:
            if self._arrivals is not None:
                return self._arrivals.read(size, until)
            return self.stream.read(size)
        except UnicodeDecodeError as exc:
            raise UnreadableInput(f"{self.name}: not UTF-8 text: {exc.reason}") from None

    def _not_text_before(self, end: int) -> None:
        """Refuse the input when a byte that is not UTF-8 lies before ``end`` (in the
        buffer) in the document being read, which is no JSONL line: as a strict read does."""
        if self._undecodable is None:
            return
        at = self._undecodable - self._dropped
        if 0 <= at < end:
            start = self._buffer.rfind("\n", 0, at) + 1
            stop = self._buffer.find("\n", at)
            line = self._buffer[start : len(self._buffer) if stop < 0 else stop]
            raise UnreadableInput(f"{self.name}: not UTF-8 text: {_why_not_text(line)}")

    def _advance(self, to: int) -> None:
        self._line += self._buffer.count("\n", self._pos, to)
        self._pos = to

    def _skip_whitespace(self) -> bool:
        """Skip to the next character; False at the end of the input."""
        while True:
            match = _WHITESPACE.match(self._buffer, self._pos)
            assert match is not None  # the pattern matches the empty string
            self._advance(match.end())
            if self._pos < len(self._buffer):
                return True
            if self._eof:
                return False
            self._read(_CHUNK)

    def _peek(self) -> str:
        return self._buffer[self._pos] if self._skip_whitespace() else ""

    def _value(self) -> Any:
        """Decode the document at the current position, reading until it is complete."""
        size = _CHUNK
        while True:
            try:
                value, end = _DECODER.raw_decode(self._buffer, self._pos)
            except json.JSONDecodeError as exc:
                self._not_text_before(exc.pos + 1)
                if self._eof or not _maybe_incomplete(exc, len(self._buffer)):
                    raise UnreadableInput(self._describe(exc)) from None
            except RecursionError:
                raise UnreadableInput(
                    f"{self.name}: line {self._line}: not valid JSON: nested too deeply to read"
                ) from None
            except ValueError as exc:  # a key given twice, a number too long to convert
                raise UnreadableInput(
                    f"{self.name}: line {self._line}: not valid JSON: {exc}"
                ) from None
            else:
                self._not_text_before(end)
                if end < len(self._buffer) or self._eof:  # a number may go on in the next chunk
                    self._advance(end)
                    return value
                if self._arrivals is not None:
                    self._read(_CHUNK)  # whole but for a number: what has come says
                    continue
            self._read(size, self._until_more())
            size *= 2  # a long document is re-decoded a logarithmic number of times

    def _until_more(self) -> Until:
        """How long a pipe is read for a document not whole yet: ``size`` characters, or up
        to the end of its first line while none has come (a JSONL record is read once its
        line is whole). A file's read waits for ``size`` characters anyway."""
        return "size" if self._buffer.find("\n", self._pos) >= 0 else "line_end"

    def _describe(self, exc: json.JSONDecodeError) -> str:
        line = self._line + self._buffer.count("\n", self._pos, exc.pos)
        column = exc.pos - self._buffer.rfind("\n", 0, exc.pos)
        where = f"line {line} column {column} (char {self._dropped + exc.pos})"
        return f"{self.name}: not valid JSON: {exc.msg}: {where}"

    def _expect(self, found: str, wanted: str) -> UnreadableInput:
        self._not_text_before(self._pos + 1)
        what = repr(found) if found else "the end of the input"
        return UnreadableInput(
            f"{self.name}: line {self._line}: not valid JSON: expected {wanted}, found {what}"
        )

    # --- documents -----------------------------------------------------------------------

    def __iter__(self) -> Iterator[Record]:
        if self.shape == "jsonl":
            self._hold = None
            yield from self._lines(self._line)
            return
        if not self._peek():
            if self.allow_empty:
                return
            raise UnreadableInput(f"{self.name} is empty: expected a JSON trace or JSONL traces")
        first_line, start = self._line, self._dropped + self._pos
        # nothing has left the buffer yet (held from 0): the line starts after its last \n
        self._hold = self._dropped + self._buffer.rfind("\n", 0, self._pos) + 1
        try:
            first, streamed = self._first_document()
        except UnreadableInput:
            recovered = self._broken_first_line(start, first_line)
            if recovered is None:
                raise
            yield from recovered
            return
        if streamed is not None:
            yield from self._array(streamed, first_line, start)
            return
        end_line = self._line
        if self._alone_on_its_line(first_line):
            self._hold = None
            self._told_later = True
            yield Record(first_line, first)
            if self._tell_shape() == "jsonl":
                yield from self._lines(self._line)
            return
        if not self._peek():
            self.shape = "json"
            self._hold = None
            yield Record(first_line, first)
            return
        if end_line != first_line:
            raise UnreadableInput(
                f"{self.name}: line {self._line}: more JSON after the document of lines "
                f"{first_line} to {end_line}; a file holds one JSON document, or JSONL (one "
                f"document per line)"
            )
        yield from self._then_jsonl(Record(first_line, first))

    def _alone_on_its_line(self, line: int) -> bool:
        """Whether the first document, just read, is on one ``line`` and ends it: only JSON
        whitespace follows it up to a ``\n`` already read (nothing comes before it). It is
        then the first record whether the input is one document or JSONL, so it need not
        wait for what follows."""
        if self._line != line:
            return False
        end = self._buffer.find("\n", self._pos)
        return end >= 0 and not self._buffer[self._pos : end].strip(BLANK)

    def _then_jsonl(self, first: Record) -> Iterator[Record]:
        """More JSON follows the first document, which starts and ends on one line: the file
        is JSONL. The document is that line's record when nothing else is on the line; else
        the line is read again as any JSONL line is (and fails: "Extra data")."""
        assert self._hold is not None, "the first document's line is held"
        self.shape = "jsonl"
        line_start, self._hold = self._hold - self._dropped, None
        if self._line == first.line:  # more on the document's own line
            self._pos = line_start
            yield from self._lines(first.line)
            return
        yield first
        yield from self._lines(self._line)

    def _first_document(self) -> tuple[Any, Record | None]:
        """The first document, or (None, the first conversation) of an array of them."""
        if self._peek() != "[":
            return self._value(), None
        array_line = self._line
        self._advance(self._pos + 1)
        if self._peek() == "]":
            self._advance(self._pos + 1)
            return [], None
        element_line = self._line
        element = self._value()
        if self.is_record(element):
            return None, Record(element_line, element)
        return self._rest_of_array(element, array_line), None

    def _broken_first_line(self, start: int, line: int) -> Iterator[Record] | None:
        """JSONL whose first line is broken: that line is a failed record, the rest is read.

        It is JSONL when the next non-blank line is a JSON document on its own (a document
        spread over several lines never has a whole document as its second line, except
        for a bare scalar, which no trace is).
        """
        held = start if self._hold is None else self._hold
        if held < self._dropped:
            self._hold = None
            return None  # the start has left the buffer (a long array): not a JSONL line
        self._hold = held  # kept while the next line is read
        following = self._line_after(held)
        self._hold = None
        if following is None or not _whole_document(following):
            return None
        offset = held - self._dropped
        end = self._buffer.index("\n", offset)
        self._pos, self._line = end + 1, line + 1
        self.shape = "jsonl"
        return self._after_broken_line(self._buffer[offset:end], line)

    def _line_after(self, start: int) -> str | None:
        """The first line that is not blank after the one at ``start`` (absolute, held), read
        on until it is whole; None when the input ends first. A file's first line must end
        in the chunks read (a broken document is found without reading the rest); a pipe's
        buffer holds only what has come, so it is read on. Each character is searched once."""
        searched = start  # no \n before this, on the line being looked at
        first = True
        while True:
            end = self._buffer.find("\n", searched - self._dropped)
            if end < 0 and not self._eof:
                if first and self._arrivals is None:
                    return None
                searched = self._dropped + len(self._buffer)
                self._read(_CHUNK)
                continue
            if not first:
                text = self._buffer[start - self._dropped : None if end < 0 else end]
                if text.strip(BLANK):
                    return text
            if end < 0:
                return None
            first = False
            start = searched = self._dropped + end + 1

    def _after_broken_line(self, text: str, line: int) -> Iterator[Record]:
        yield self._line_record(text, line)
        yield from self._lines(line + 1)

    def _array(self, first: Record, line: int, start: int) -> Iterator[Record]:
        """The conversations of a top-level array, one by one.

        While the array is still on its first line and short, its elements are held back:
        if it ends there and more lines follow, it was the first line of a JSONL file (a
        list of lists, which then fails as one record) rather than an array of conversations.
        """
        held: list[Record] | None = [first]
        while True:
            found = self._peek()
            if found == "]":
                self._advance(self._pos + 1)
                break
            if found != ",":
                raise self._expect(found, "',' or ']' in the array of conversations")
            self._advance(self._pos + 1)
            self._peek()
            record = Record(self._line, self._value())
            if held is not None and (
                self._line != line or self._dropped + self._pos - start > _HOLD
            ):
                self.shape = "array"
                self._hold = None
                yield from held
                held = None
            if held is None:
                yield record
            else:
                held.append(record)
        end_line = self._line
        if held is not None and end_line == line and self._peek():
            values = [record.value for record in held]
            yield from self._then_jsonl(Record(line, values))
            return
        self._hold = None
        self.shape = "array"
        yield from held or ()
        if self._peek():
            raise UnreadableInput(
                f"{self.name}: line {self._line}: more JSON after the array of conversations; "
                f"a file holds one JSON document, or JSONL (one document per line)"
            )

    def _rest_of_array(self, first: Any, line: int) -> list[Any]:
        """A top-level array that is one trace: its elements after ``first`` (on ``line``)."""
        items = [first]
        while True:
            if self._line != line:
                self._hold = None  # no JSONL line: its text need not stay in memory
            found = self._peek()
            if found == "]":
                self._advance(self._pos + 1)
                return items
            if found != ",":
                raise self._expect(found, "',' or ']'")
            self._advance(self._pos + 1)
            self._peek()
            items.append(self._value())

    def _lines(self, line: int) -> Iterator[Record]:
        """JSONL from the current position on: one document per line that is not blank (JSON
        whitespace only)."""
        escaped = self._escaped
        for text in self._remaining_lines():
            if text.strip(BLANK):
                # (all but the first test take no time: no byte was escaped, or it is ASCII)
                if escaped and _Escaped.runs and not text.isascii() and _not_utf8(text):
                    yield _not_text(text, line)
                else:
                    yield _parse_line(text, line)
            line += 1

    def _line_record(self, text: str, line: int) -> Record:
        if self._escaped and _not_utf8(text):
            return _not_text(text, line)
        return _parse_line(text, line)

    def _remaining_lines(self) -> Iterator[str]:
        pieces = self._buffer[self._pos :].split("\n")
        self._buffer, self._pos = "", 0
        yield from pieces[:-1]
        tail = pieces[-1]
        if self._arrivals is not None:
            if not self._eof:
                yield from self._arrived_lines(tail)
            elif tail:
                yield tail
            return
        while not self._eof:
            try:
                text = self.stream.readline()
            except UnicodeDecodeError as exc:
                raise UnreadableInput(f"{self.name}: not UTF-8 text: {exc.reason}") from None
            if not text:
                break
            if text.endswith("\n"):
                yield tail + text[:-1]
                tail = ""
            else:
                tail += text
        if tail:
            yield tail

    def _arrived_lines(self, tail: str) -> Iterator[str]:
        """The lines of a pipe or a terminal, each as soon as its ``\n`` has arrived; ``tail``
        is the start of the first. A long line is joined once, from its pieces."""
        pieces = [tail]
        while chunk := self._read_text(_CHUNK):
            lines = chunk.split("\n")
            if len(lines) == 1:
                pieces.append(chunk)
                continue
            pieces.append(lines[0])
            yield "".join(pieces)
            yield from lines[1:-1]
            pieces = [lines[-1]]
        self._eof = True
        if rest := "".join(pieces):
            yield rest


def _untranslated(stream: TextIO) -> bool:
    """Read ``stream`` as written: a text file opened with the default newline (universal
    newlines) would end a line at a lone ``\r``, and turn ``\r\n`` into ``\n``. Whether it
    is a text file not read from yet (so its bytes may be read past it)."""
    reconfigure = getattr(stream, "reconfigure", None)
    if reconfigure is None:
        return False
    try:
        reconfigure(newline="\n")
    except ValueError:  # io.UnsupportedOperation: read from already, so read as it is set
        return False
    return True


class _Arrivals:
    """A pipe or a terminal read as its bytes arrive, decoded as its text stream would.

    ``TextIOWrapper.read(n)`` waits for ``n`` characters or the end of the input, so a
    record written to a pipe that stays open would not be read until more came. ``read``
    returns what has arrived, and reads on only while more is waiting (``until="arrived"``),
    or until a ``\n`` has come (``line_end``), or waits for the size asked as a file's read
    does (``size``). Each read of the binary stream asks for one chunk at most.
    """

    def __init__(
        self, binary: io.BufferedIOBase, descriptor: int, encoding: str, errors: str
    ) -> None:
        self._binary = binary
        self._descriptor = descriptor
        self._decoder = codecs.getincrementaldecoder(encoding)(errors)

    def read(self, size: int, until: Until = "arrived") -> str:
        """Up to ``size`` characters or so (a character's bytes are not split), fewer as
        ``until`` says; ``""`` at the end of the input."""
        parts: list[str] = []
        count = 0
        while True:
            data = self._binary.read1(min(max(size - count, 1), _CHUNK))
            text = self._decoder.decode(data, final=not data)
            parts.append(text)
            count += len(data)
            # a character cut between reads is read on to its end
            if not data or (text and (count >= size or self._enough(text, until))):
                return "".join(parts)

    def _enough(self, text: str, until: Until) -> bool:
        """Whether a read that has just got ``text`` returns before its size has come."""
        if until == "arrived":
            return not self._waiting()
        return until == "line_end" and "\n" in text

    def _waiting(self) -> bool:
        """Whether more bytes can be read without waiting for them."""
        try:
            return bool(select.select([self._descriptor], [], [], 0)[0])
        except (OSError, ValueError):  # no descriptor select takes: read what is there
            return False


def _arrivals(stream: TextIO) -> _Arrivals | None:
    """How to read ``stream`` as it arrives when it is a pipe, a FIFO or a terminal, opened
    as text over a buffered binary stream; None for a regular file (a chunk read from it
    waits for nothing) or any other stream."""
    binary = getattr(stream, "buffer", None)
    encoding = getattr(stream, "encoding", None)
    errors = getattr(stream, "errors", None)
    if not isinstance(binary, io.BufferedIOBase) or not isinstance(encoding, str) \
            or not isinstance(errors, str):
        return None
    try:
        descriptor = stream.fileno()
        if stat.S_ISREG(os.fstat(descriptor).st_mode):
            return None
    except (OSError, ValueError):  # io.UnsupportedOperation: no descriptor
        return None
    return _Arrivals(binary, descriptor, encoding, errors)


def _whole_document(text: str) -> bool:
    """Is ``text`` one JSON object or array (a key given twice or not)?"""
    try:
        return isinstance(json.loads(text), (dict, list))
    except (ValueError, RecursionError):
        return False


def _not_utf8(text: str) -> bool:
    """Does ``text``, read with ``ESCAPE``, hold a byte that is not UTF-8? (Encoding fails at
    a lone surrogate, and faster than a search finds one.)"""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _not_text(text: str, line: int) -> Record:
    """The record of a JSONL line holding bytes that are not UTF-8."""
    return Record(line, problem=f"not UTF-8 text: {_why_not_text(text)}", code=NOT_TEXT)


def _why_not_text(text: str) -> str:
    """Why the bytes of ``text`` (read with ``ESCAPE``) are not UTF-8, as a strict read says
    it (``invalid continuation byte``)."""
    try:
        text.encode("utf-8", "surrogateescape").decode("utf-8")
    except UnicodeDecodeError as exc:
        return str(exc.reason)
    return "invalid start byte"  # not reached: an escaped byte never decodes


def _parse_line(text: str, line: int) -> Record:
    """One JSONL line's record: its document, or why it is none (an object with a key twice
    included: ``not valid JSON: an object has the key 'k' twice ...``)."""
    try:
        return Record(line, _DECODER.decode(text))
    except json.JSONDecodeError as exc:
        return Record(line, problem=f"not valid JSON: {exc}")
    except RecursionError:
        return Record(line, problem="not valid JSON: nested too deeply to read")
    except ValueError as exc:  # a key given twice, a number too long to convert
        return Record(line, problem=f"not valid JSON: {exc}")


def _maybe_incomplete(exc: json.JSONDecodeError, size: int) -> bool:
    """Could more input complete the document?

    An incomplete document fails at its very end (after ``[``, ``:``, ``,``, a key, or in
    a literal, number or escape cut short), or in a string that runs to the end. A failure
    anywhere else is a real error, found without reading the rest of a large file.
    """
    return size - exc.pos <= 6 or exc.msg.startswith("Unterminated string")
