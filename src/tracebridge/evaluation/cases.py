"""Case files: the model of one case, and loading a file of them with every problem reported.

A case file is JSONL (one case per line) or a JSON list of cases, read one record at a time.
Loading checks every record and reports each bad one by line and ``case_id`` at once
(``CaseFileError``): fields of the wrong type, unknown keys, a duplicate ``case_id``, an unknown
``control_role``, a ``goal_shift`` or ``cancellation`` control without a human label, a control
whose human label contradicts its role, an unknown ``source``, ``source_options`` that its
reader does not take (or without a ``source``), a transcript given as a whole
sample object that holds references or rubrics (only its messages are read). A case of a JSON
list is told by its element number too (``element 2 (line 1)``), as the command line tells the
traces of an array apart: ``json.dump`` writes the whole list on one line. A transcript that
cannot be read or breaks the conversation rules does not stop loading: the case keeps the
``TraceError`` (``LoadedCase.transcript_error``), is reported, and the conversation-rules check
blocks it.

Each case records ``source_hash`` (the SHA-256 of the canonical JSON of its transcript as
written) and ``transcript_hash`` (``MultiTurnSample.transcript_hash`` of its typed messages);
the case set records ``manifest_hash`` (the SHA-256 of every record's canonical JSON, in order).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationError,
    field_validator,
    model_validator,
)

from .. import native
from .._cli_input import EVENTS, READABLE, matching
from .._jsonstream import JsonDocuments, UnreadableInput, is_jsonl_name
from ..errors import FormatError, TraceError, short_repr, with_article
from ..hashing import canonical_json
from ..messages import Message, Metadata, ToolCall
from ..options import Option, options_of
from ..registry import detect_format, get_adapter
from ..sample import MultiTurnSample
from . import roles

__all__ = [
    "Case",
    "CaseFileError",
    "CaseProblem",
    "CaseSet",
    "ControlRole",
    "Expectation",
    "HumanAdjudication",
    "LoadedCase",
    "SOURCES",
    "load_cases",
    "read_cases",
]

SOURCES: tuple[str, ...] = (roles.ROLES, *READABLE)
"""What a case's ``source`` may name: the role/``call_id`` form, or any format ``convert
--from`` reads (``llama_index_events`` included)."""

_CONFIG = ConfigDict(frozen=True, extra="forbid", use_attribute_docstrings=True)
# Switches and counts are strict: JSON has its own booleans and numbers, and "false" is not
# false, nor 1 true, nor true a count of 1.
RESERVED_SLICES = ("(all)", "(no slice)")
"""Names calibration and the report give to every case and to cases without a slice."""


class ControlRole(str, Enum):
    """What a control case proves about the judge, and so what it must come out as."""

    POSITIVE = "positive"
    """The goal was achieved: the judge must say so."""
    NEGATIVE_FAILED_TOOL = "negative_failed_tool"
    """A tool failed and the agent said so: not achieved."""
    NEGATIVE_FALSE_CLAIM = "negative_false_claim"
    """A tool failed and the agent claimed success: not achieved."""
    PARTIAL_GOAL = "partial_goal"
    """Only part of the goal was reached: not achieved."""
    GOAL_SHIFT = "goal_shift"
    """The user changed the goal: the human label decides (required)."""
    CANCELLATION = "cancellation"
    """The user cancelled: the human label decides (required)."""
    DUPLICATE_SIDE_EFFECT = "duplicate_side_effect"
    """The action ran twice: a deterministic check must block it (a goal score is not enough)."""


ACHIEVED_ROLES = frozenset({ControlRole.POSITIVE})
NOT_ACHIEVED_ROLES = frozenset(
    {ControlRole.NEGATIVE_FAILED_TOOL, ControlRole.NEGATIVE_FALSE_CLAIM, ControlRole.PARTIAL_GOAL}
)
LABELLED_ROLES = frozenset({ControlRole.GOAL_SHIFT, ControlRole.CANCELLATION})


class Expectation(BaseModel):
    """One assertion about a ``domain_evidence`` field: exactly one of the three."""

    model_config = _CONFIG

    present: bool | None = Field(default=None, strict=True)
    """True: the field is there and not null; False: it is absent or null."""
    equals: Any = None
    """The field equals this JSON value (compared as typed JSON: numbers by value, booleans
    not numbers; null is a value)."""
    count: int | None = Field(default=None, ge=0, strict=True)
    """The field is a list of exactly this many items."""

    @model_validator(mode="after")
    def _exactly_one(self) -> Expectation:
        given = self.model_fields_set & {"present", "equals", "count"}
        if len(given) != 1:
            raise ValueError("an expectation has exactly one of present, equals, count "
                             f"(got {', '.join(sorted(given)) or 'none'})")
        if "present" in given and self.present is None:
            raise ValueError("present must be true or false")
        if "count" in given and self.count is None:
            raise ValueError("count must be a number of items")
        return self

    @property
    def kind(self) -> str:
        """``present``, ``equals`` or ``count``."""
        return next(iter(self.model_fields_set & {"present", "equals", "count"}))


class HumanAdjudication(BaseModel):
    """What a person decided about the case."""

    model_config = _CONFIG

    goal_achieved: bool = Field(strict=True)
    """Whether the user's goal was achieved."""
    reason: str | None = None
    """Why, in the person's words."""


class Case(BaseModel):
    """One case of a case file."""

    model_config = _CONFIG

    case_id: str = Field(min_length=1)
    """Unique in the file."""
    transcript: Any
    """The conversation, in any format tracebridge reads (see ``source``)."""
    source: str | None = None
    """The transcript's format (``roles`` or a format name); told from its shape when absent."""
    source_options: dict[str, Any] | None = None
    """The options of ``source``'s reader, those ``convert --from-option`` takes for it, as JSON
    (``{"session_id": "s-1"}`` picks one conversation of OpenTelemetry spans)."""
    slice: str | None = None
    """The group the case belongs to, for counts per slice (not ``(all)`` or ``(no slice)``,
    the names of the rows for every case and for cases without a slice)."""
    critical: bool = Field(default=False, strict=True)
    """Critical cases run right after the controls."""
    session_id: str | None = None
    """The session the conversation came from."""
    reference: str | None = None
    """The expected outcome, in words."""
    reference_version: str | None = None
    """The version of the references; required when a metric reads one."""
    reference_tool_calls: list[ToolCall] | None = None
    """The tool calls the agent was expected to make."""
    reference_topics: list[str] | None = None
    """The topics the agent may talk about."""
    rubrics: dict[str, str] | None = None
    """Named rubrics for judged metrics (``{"role": ...}``)."""
    domain_evidence: Metadata = Field(default_factory=dict)
    """What the systems the agent acted on record (ticket ids, operation ids ...), as JSON."""
    expect: dict[str, Expectation] = Field(default_factory=dict)
    """Assertions about ``domain_evidence`` fields, checked before any judge."""
    human_adjudication: HumanAdjudication | None = None
    """A person's verdict, compared with the judge's."""
    control_role: ControlRole | None = None
    """Set on a control case: what it must come out as."""
    metadata: Metadata = Field(default_factory=dict)
    """Anything else about the case, as JSON."""

    @field_validator("slice")
    @classmethod
    def _not_a_reserved_name(cls, value: str | None) -> str | None:
        if value in RESERVED_SLICES:
            raise ValueError(f"{value!r} names the calibration row of "
                             f"{'every case' if value == '(all)' else 'cases without a slice'}; "
                             "choose another slice name")
        return value

    @model_validator(mode="after")
    def _control_and_label_agree(self) -> Case:
        role, label = self.control_role, self.human_adjudication
        if role in LABELLED_ROLES and label is None:
            raise ValueError(f"{with_article(role.value)} control needs "
                             "human_adjudication.goal_achieved (its expected outcome is the "
                             "human label)")
        if label is not None and (
            (role in ACHIEVED_ROLES and not label.goal_achieved)
            or (role in NOT_ACHIEVED_ROLES and label.goal_achieved)
        ):
            assert role is not None
            raise ValueError(f"human_adjudication.goal_achieved={label.goal_achieved} "
                             f"contradicts control_role {role.value}")
        if self.source is not None and self.source not in SOURCES:
            raise ValueError(f"unknown source {self.source!r}; known: {', '.join(SOURCES)}")
        return self

    @model_validator(mode="after")
    def _source_options_fit(self) -> Case:
        if self.source_options is None:
            return self
        if self.source is None:
            raise ValueError("source_options: they are the options of a format's reader; name "
                             "the transcript's format in source")
        _reader_keywords(self.source, self.source_options)
        return self


@dataclass(frozen=True)
class LoadedCase:
    """A case as loaded: its typed conversation (or why there is none) and its hashes."""

    case: Case
    line: int
    """The line of the case file the case starts on."""
    position: int
    """The case's place in the file (0-based)."""
    source_hash: str
    """``sha256:`` + hex SHA-256 of the transcript's canonical JSON, as written."""
    messages: list[Message] | None
    """The typed conversation; None when the transcript could not be read."""
    format: str | None
    """The format the transcript was read as."""
    transcript_error: TraceError | FormatError | None
    """Why the transcript could not be read (the conversation-rules check blocks the case)."""
    transcript_hash: str | None
    """``MultiTurnSample.transcript_hash()`` of the typed conversation."""
    element: int | None = None
    """Its place (1-based) in a JSON list of cases; None in JSONL or a file of one case.
    Cases of a list may share a line (``json.dump`` writes it on one): this tells them apart."""

    @property
    def case_id(self) -> str:
        return self.case.case_id

    def place(self) -> str:
        """``line N``, or ``element K (line N)`` in a JSON list of cases."""
        return record_place(self.line, self.element)

    def sample(self) -> MultiTurnSample:
        """The conversation with the case's references, for the metrics."""
        if self.messages is None:
            raise ValueError(f"case {self.case_id} has no readable transcript")
        case = self.case
        return MultiTurnSample(
            messages=self.messages,
            reference=case.reference,
            reference_tool_calls=case.reference_tool_calls,
            reference_topics=case.reference_topics,
            rubrics=case.rubrics,
            metadata={"case_id": case.case_id},
        )


@dataclass(frozen=True)
class CaseProblem:
    """A record of the case file that cannot be used."""

    line: int
    case_id: str | None
    message: str
    element: int | None = None
    """Its place (1-based) in a JSON list of cases; None in JSONL or a file of one case."""

    def __str__(self) -> str:
        # imported here: the gate reads case files, so it is imported after this module
        from .gate import one_line

        # the whole line: a key of the record the message names may hold a newline too
        case = f" (case {self.case_id})" if self.case_id is not None else ""
        return one_line(f"{record_place(self.line, self.element)}{case}: {self.message}")


def record_place(line: int, element: int | None) -> str:
    """``line N``, or ``element K (line N)`` for a case of a JSON list (as the command line
    names a trace of an array: ``Item.place``)."""
    return f"line {line}" if element is None else f"element {element} (line {line})"


class CaseFileError(Exception):
    """The case file cannot be used; ``problems`` lists every bad record."""

    def __init__(self, path: str, problems: list[CaseProblem]) -> None:
        self.path = path
        self.problems = problems
        first = problems[0] if problems else None
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        super().__init__(f"{path}: {first}{more}" if first else f"{path}: no cases")


@dataclass(frozen=True)
class CaseSet:
    """The cases of one file, in file order, and the hash of the whole set."""

    path: str
    cases: list[LoadedCase]
    manifest_hash: str

    def unreadable(self) -> list[LoadedCase]:
        """Cases whose transcript could not be read (they will be blocked)."""
        return [case for case in self.cases if case.transcript_error is not None]


def read_cases(path: str) -> Iterator[tuple[int, int | None, Any | None, str | None]]:
    """Every record of the case file: (line, element, value, problem), one at a time;
    ``element`` is the record's place (1-based) in a JSON list of cases, else None."""
    try:
        stream = open(path, encoding="utf-8-sig")  # noqa: SIM115 - closed when read
    except OSError as exc:
        raise UnreadableInput(f"cannot read {path}: {exc}") from None
    with stream:
        documents = JsonDocuments(
            stream, path, lambda element: isinstance(element, dict) and "case_id" in element,
            jsonl=is_jsonl_name(path), allow_empty=True,
        )
        for number, record in enumerate(documents, start=1):
            # every record of a list of cases is one of its elements, in order
            element = number if documents.shape == "array" else None
            if record.problem is not None:
                yield record.line, element, None, record.problem
            elif documents.shape == "json" and isinstance(record.value, list):
                raise UnreadableInput(f"{path}: expected a case per line or a JSON list of "
                                      f"cases (objects with case_id)")
            else:
                yield record.line, element, record.value, None


def load_cases(path: str) -> CaseSet:
    """Read and check every case; ``CaseFileError`` lists every bad record."""
    digest = hashlib.sha256()
    problems: list[CaseProblem] = []
    cases: list[LoadedCase] = []
    seen: dict[str, tuple[int, int | None]] = {}
    """Each case_id taken so far, and where: its (line, element)."""
    for line, element, value, problem in read_cases(path):
        case_id = value.get("case_id") if isinstance(value, dict) else None
        case_id = case_id if isinstance(case_id, str) else None
        if problem is not None:
            problems.append(CaseProblem(line, None, problem, element))
            continue
        try:
            digest.update(canonical_json(value) + b"\n")
        except ValueError as exc:  # NaN or a value that is not JSON
            problems.append(CaseProblem(line, case_id, f"not JSON: {exc}", element))
            continue
        if not isinstance(value, dict):
            problems.append(CaseProblem(line, None, f"expected a case object, got "
                                        f"{type(value).__name__}", element))
            continue
        # an id is taken where it first stands, whether or not that record is a good case
        repeated = False
        if case_id is not None:
            first = seen.setdefault(case_id, (line, element))
            repeated = first != (line, element)
            if repeated:
                problems.append(CaseProblem(line, case_id, f"duplicate case_id (first "
                                            f"{_at(*first)})", element))
        try:
            case = Case.model_validate(value)
        except ValidationError as exc:
            problems.extend(CaseProblem(line, case_id, text, element)
                            for text in _described(exc))
            continue
        except TraceError as exc:  # a reference tool call holding a value that is not JSON
            problems.append(CaseProblem(line, case_id, str(exc), element))
            continue
        if repeated:
            continue
        loaded = _loaded(case, line, element, len(cases))
        unread = _sample_fields(loaded)
        if unread:
            problems.append(CaseProblem(line, case_id, _unread_problem(unread), element))
            continue
        cases.append(loaded)
    if problems:
        raise CaseFileError(path, problems)
    if not cases:
        raise CaseFileError(path, [])
    return CaseSet(path, cases, f"sha256:{digest.hexdigest()}")


def _at(line: int, element: int | None) -> str:
    """``on line N``, or ``at element K (line N)``."""
    return f"{'on' if element is None else 'at'} {record_place(line, element)}"


def _described(exc: ValidationError) -> list[str]:
    problems = []
    for error in exc.errors():
        where = ".".join(str(part) for part in error["loc"])
        message = error["msg"].removeprefix("Value error, ")
        if error["type"] == "enum":
            message = (f"unknown control_role {error['input']!r}; expected one of "
                       f"{', '.join(role.value for role in ControlRole)}")
        problems.append(f"{where}: {message}" if where else message)
    return problems


def _loaded(case: Case, line: int, element: int | None, position: int) -> LoadedCase:
    source_hash = f"sha256:{hashlib.sha256(canonical_json(case.transcript)).hexdigest()}"
    try:
        name, messages = _read(case)
    except TraceError as exc:
        return LoadedCase(case, line, position, source_hash, None, None, _for_a_case(exc, case),
                          None, element)
    except FormatError as exc:
        return LoadedCase(case, line, position, source_hash, None, None, exc, None, element)
    try:
        transcript_hash = MultiTurnSample(messages=messages).transcript_hash()
    except TraceError as exc:
        return LoadedCase(case, line, position, source_hash, None, name, _for_a_case(exc, case),
                          None, element)
    return LoadedCase(case, line, position, source_hash, messages, name, None, transcript_hash,
                      element)


def _for_a_case(error: TraceError, case: Case) -> TraceError:
    """``error`` with hints a case can follow: where it gives the filter that picks one
    conversation of several (OpenTelemetry spans), which the reader names as its option; none
    about ``allow_pending``, which a case does not take (its conversation must be complete)."""
    detail = error.detail.replace(roles._PENDING_HINT, "")
    if error.code == "ambiguous_trace" and "choose one with a filter" in detail:
        detail += _filter_hint(error.source if case.source is None else None)
    if detail == error.detail:
        return error
    return TraceError(error.code, detail, index=error.index, path=error.path,
                      source=error.source)


def _filter_hint(told: str | None) -> str:
    """Where a case gives the filter; ``told``: the format its transcript was told as, which
    the case must then name in ``source`` (``source_options`` needs it)."""
    named = "" if told is None else f" and names its format, \"source\": \"{told}\""
    return (f"; a case gives the filter as source_options{named}, such as "
            f"{{\"trace_id\": \"...\"}}")


_SAMPLE_FIELDS = ("reference", "reference_tool_calls", "reference_topics", "rubrics")
"""What a ``MultiTurnSample`` object holds besides its messages and metadata that the metrics
read (a sample's metadata, such as the id ``tracebridge sample`` writes there, none reads)."""


def _sample_fields(case: LoadedCase) -> list[str]:
    """The fields besides ``messages`` that a transcript read as a whole sample object (the
    ``tracebridge`` format) gives a value: only its messages are read, so they would be lost
    (and the case scored against other references than the sample's)."""
    transcript = case.case.transcript
    if case.format != native.NAME or not isinstance(transcript, dict):
        return []
    return [name for name in _SAMPLE_FIELDS
            if transcript.get(name) is not None and transcript.get(name) != {}]


def _unread_problem(fields: list[str]) -> str:
    return (f"transcript: the sample object's {', '.join(fields)} "
            f"{'is' if len(fields) == 1 else 'are'} not read from a transcript; give "
            f"{'it' if len(fields) == 1 else 'them'} as case fields, or leave "
            f"{'it' if len(fields) == 1 else 'them'} out of the transcript")


def _read(case: Case) -> tuple[str, list[Message]]:
    source = case.source
    if source is None:
        source = roles.ROLES if roles.detect(case.transcript) else _format_of(case.transcript)
    options = _reader_keywords(source, case.source_options or {})
    if source == roles.ROLES:
        return source, roles.to_messages(case.transcript)
    return source, list(_reader(source)(case.transcript, **options))


def _reader(source: str) -> Callable[..., Any]:
    """The function that reads a transcript in ``source`` (not ``roles``)."""
    if source == EVENTS:
        return get_adapter("llama_index").events_to_messages  # type: ignore[attr-defined,no-any-return]
    return get_adapter(source).to_messages


_PENDING = "allow_pending"
"""The readers' option a case does not take: a conversation cut mid-tool is no case to score
(the ``MultiTurnSample`` the metrics read holds complete conversations only)."""


def _reader_keywords(source: str, given: dict[str, Any]) -> dict[str, Any]:
    """``source_options`` as the keyword arguments of ``source``'s reader: the options
    ``convert --from-option`` takes for it, each of JSON's own type (``"true"`` is no
    boolean), but not ``allow_pending``; ``ValueError`` naming the first that is not one."""
    readers = {} if source == roles.ROLES else options_of(_reader(source), None)
    known = {name: option for name, option in readers.items() if name != _PENDING}
    keywords: dict[str, Any] = {}
    for name, value in given.items():
        if name == _PENDING:
            raise ValueError(f"source_options: {_PENDING} is not a case option: a case's "
                             f"conversation must be complete (one cut mid-tool is blocked by "
                             f"the conversation rules)")
        option = known.get(name)
        if option is None:
            accepted = ", ".join(known) or "none (this format takes no options)"
            raise ValueError(f"source_options: {name!r} is not an option of {source}; it "
                             f"takes: {accepted}")
        keywords[name] = _option_value(option, value)
    return keywords


def _option_value(option: Option, value: Any) -> Any:
    """``value`` as ``option`` takes it; ``ValueError`` saying what it takes."""
    expected = _what_it_takes(option, value)
    if expected is not None:
        raise ValueError(f"source_options: {option.name} takes {expected}, got "
                         f"{short_repr(value)}")
    return tuple(value) if option.kind == "list" else value


def _what_it_takes(option: Option, value: Any) -> str | None:
    """What ``option`` takes, when ``value`` is not that; None when it is."""
    if option.kind == "bool":
        return None if type(value) is bool else "true or false"
    if option.kind == "int":
        return None if type(value) is int else "a whole number"
    if option.kind == "text":
        return None if type(value) is str else "a string"
    choices = option.choices
    if option.kind == "choice":
        assert choices is not None  # a Literal's values
        return None if type(value) is str and value in choices else f"one of {', '.join(choices)}"
    assert option.kind == "list"
    names = value if type(value) is list and all(type(item) is str for item in value) else None
    if names is not None and (choices is None or all(name in choices for name in names)):
        return None
    return "a list of names" if choices is None else f"a list of names from {', '.join(choices)}"


def _format_of(transcript: Any) -> str:
    """The format of ``transcript`` as ``convert --from auto`` tells it (``matching`` over
    the formats it reads); several shapes are told apart by reading them (``detect_format``)."""
    names = matching(transcript, READABLE)
    if not names:
        raise FormatError(f"cannot tell the format of this {type(transcript).__name__}: it "
                          f"matches none of {', '.join(SOURCES)}; pass source=<format>")
    if names == [EVENTS]:
        return EVENTS
    return detect_format(transcript, candidates=[name for name in names if name != EVENTS])
