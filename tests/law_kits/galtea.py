"""Law kit for Galtea turns: pairs, and role turns as the Galtea SDK's ``ConversationMessage``.

Traces: lists of pairs, or lists of role turns (any order of user/assistant) with the SDK's
optional fields in either spelling (``retrieval_context`` / ``retrievalContext`` on any turn,
``metadata``, ``input_files`` / ``inputFiles`` and ``output_files`` / ``outputFiles`` holding
attached files with or without their optional keys, ``mimeType`` or ``mime_type``, an odd
``type``, extra keys) and extra keys. Conversations: what the format expresses, with the
``metadata["galtea"]`` that ``to_messages`` records: text, then files (``FilePart``s by url).
Broken: one turn (or Trace record) broken per trace, at a known index.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from tracebridge import AIMessage, FilePart, HumanMessage, Message, TextPart

from law_kits import BrokenTrace, LawKit
from strategies import RULE_CODES, json_values, names, texts

RESERVED = {
    "role", "content", "retrieval_context", "retrievalContext", "metadata", "input_files",
    "inputFiles", "output_files", "outputFiles", "input", "actual_output",
    # with "index" and a session id, "id" would make a turn a Trace record
    "id", "index", "session_id", "sessionId",
}
FILE_KEYS = {"uri", "filename", "mime_type", "mimeType", "type"}

extra_keys = names.filter(lambda key: key not in RESERVED)
extras = st.dictionaries(extra_keys, json_values, max_size=2)
contexts = st.none() | texts
mime_types = st.none() | st.sampled_from(["application/pdf", "image/png", "text/csv"])
turn_metadata = st.none() | st.dictionaries(names, json_values, max_size=2)
CAMEL = {"retrieval_context": "retrievalContext", "input_files": "inputFiles",
         "output_files": "outputFiles"}
DEFAULT_FIELD = {"user": "input_files", "assistant": "output_files"}


@st.composite
def pair_turns(draw: st.DrawFn) -> dict[str, Any]:
    turn: dict[str, Any] = {"input": draw(texts), "actual_output": draw(texts)}
    if draw(st.booleans()):
        turn["retrieval_context"] = draw(contexts)
    return {**turn, **draw(extras)}


@st.composite
def attached_files(draw: st.DrawFn) -> dict[str, Any]:
    """An attached file as the SDK dumps it, or with keys left out, camelCase or extras."""
    file: dict[str, Any] = {"uri": draw(st.sampled_from(["gs://bucket/a.pdf", "https://x/b.png",
                                                         ""]))}
    if draw(st.booleans()):
        file["filename"] = draw(st.none() | names)
    if draw(st.booleans()):
        file[draw(st.sampled_from(["mime_type", "mimeType"]))] = draw(mime_types)
    if draw(st.booleans()):
        file["type"] = draw(st.sampled_from(["file", "FILE", "document"]))
    extra = draw(st.dictionaries(names.filter(lambda key: key not in FILE_KEYS), json_values,
                                 max_size=1))
    return {**file, **extra}


@st.composite
def role_turns(draw: st.DrawFn) -> dict[str, Any]:
    role = draw(st.sampled_from(["user", "assistant"]))
    turn: dict[str, Any] = {"role": role, "content": draw(texts)}
    if draw(st.booleans()):
        turn[draw(st.sampled_from(["retrieval_context", "retrievalContext"]))] = draw(contexts)
    if draw(st.booleans()):
        turn["metadata"] = draw(turn_metadata)
    for field in ("input_files", "output_files"):
        if draw(st.booleans()):
            key = draw(st.sampled_from([field, CAMEL[field]]))
            turn[key] = draw(st.lists(attached_files(), max_size=2))
    return {**turn, **draw(extras)}


pair_traces = st.lists(pair_turns(), min_size=1, max_size=4)
role_traces = st.lists(role_turns(), min_size=1, max_size=5)


def _metadata(namespace: dict[str, Any]) -> dict[str, Any]:
    return {"galtea": namespace} if namespace else {}


@st.composite
def file_parts(draw: st.DrawFn, *, role: str, field: str) -> FilePart:
    """A FilePart as to_messages reads an attached file of ``field`` on a ``role`` turn."""
    namespace: dict[str, Any] = {}
    if field != DEFAULT_FIELD[role]:
        namespace["field"] = field
    filename, mime_type = draw(st.none() | names), draw(mime_types)
    kind = draw(st.sampled_from(["file", "FILE"]))
    if kind != "file":
        namespace["type"] = kind
    absent = []
    if filename is None and draw(st.booleans()):
        absent.append("filename")
    if mime_type is None and draw(st.booleans()):
        absent.append("mime_type")
    if kind == "file" and draw(st.booleans()):
        absent.append("type")
    if absent:
        namespace["absent"] = absent
    if "mime_type" not in absent and draw(st.booleans()):
        namespace["aliases"] = ["mimeType"]
    extra = draw(st.dictionaries(names.filter(lambda key: key not in FILE_KEYS), json_values,
                                 max_size=1))
    if extra:
        namespace["extra"] = extra
    url = draw(st.sampled_from(["gs://bucket/a.pdf", "https://x/b.png"]))
    return FilePart(url=url, filename=filename, mime_type=mime_type,
                    metadata=_metadata(namespace))


@st.composite
def role_messages(draw: st.DrawFn) -> Message:
    """One Human or AI message as to_messages reads a role turn."""
    role = draw(st.sampled_from(["user", "assistant"]))
    namespace: dict[str, Any] = {}
    aliases: list[str] = []
    if draw(st.booleans()):
        namespace["retrieval_context"] = draw(contexts)
        if draw(st.booleans()):
            aliases.append("retrievalContext")
    if draw(st.booleans()):
        namespace["metadata"] = draw(turn_metadata)
    files: list[FilePart] = []
    empty: list[str] = []
    for field in ("input_files", "output_files"):
        if not draw(st.booleans()):
            continue
        found = draw(st.lists(file_parts(role=role, field=field), max_size=2))
        files.extend(found)
        if not found:
            empty.append(field)
        if draw(st.booleans()):
            aliases.append(CAMEL[field])
    if empty:
        namespace["empty_files"] = empty
    if aliases:
        namespace["aliases"] = aliases
    extra = draw(extras)
    if extra:
        namespace["extra"] = extra
    text = draw(texts)
    content: Any = text
    if files:
        content = [*([TextPart(text=text)] if text else []), *files]
    kind = HumanMessage if role == "user" else AIMessage
    return kind(content=content, metadata=_metadata(namespace))


role_conversations = st.lists(role_messages(), min_size=1, max_size=5)


@st.composite
def _answer_namespace(draw: st.DrawFn) -> dict[str, Any]:
    namespace: dict[str, Any] = {"shape": "pairs"}
    if draw(st.booleans()):
        namespace["retrieval_context"] = draw(contexts)
    extra = draw(extras)
    if extra:
        namespace["extra"] = extra
    return namespace


@st.composite
def pair_conversations(draw: st.DrawFn) -> list[Message]:
    """Alternating Human/AI text messages, as to_messages reads pairs."""
    messages: list[Message] = []
    marker = {"shape": "pairs"}
    for _ in range(draw(st.integers(1, 3))):
        messages.append(HumanMessage(content=draw(texts), metadata={"galtea": marker}))
        messages.append(AIMessage(content=draw(texts),
                                  metadata={"galtea": draw(_answer_namespace())}))
    return messages


# --- broken traces -----------------------------------------------------------------------

_UNSERIALIZABLE = st.sampled_from([(1, 2), {1, 2}, float("nan"), b"bytes", object()])


@st.composite
def broken_traces(draw: st.DrawFn, only: str | None = None) -> BrokenTrace:
    """A valid trace with one turn replaced or broken (``only``: a break of role turns); the
    code and index it must raise."""
    shape = "roles" if only is not None else draw(st.sampled_from(["pairs", "roles"]))
    trace: list[Any] = draw(pair_traces if shape == "pairs" else role_traces)
    at = draw(st.integers(0, len(trace) - 1))
    turn = dict(trace[at])
    kind = only if only is not None else draw(st.sampled_from(_BREAKS[shape]))
    code = "malformed_event"
    if kind == "not_a_dict":
        trace[at] = draw(st.sampled_from(["hi", None, 3, ["role", "user"]]))
    elif kind == "no_shape":
        trace[at] = {"system": "system", "content": "You are a pirate."}
    elif kind == "both_shapes":
        trace[at] = {"role": "user", "content": "hi", "input": "hi"}
    elif kind == "other_shape":
        at = len(trace)  # the first turn sets the shape; a later turn of the other shape breaks it
        other = role_turns() if shape == "pairs" else pair_turns()
        trace.append(draw(other))
        return BrokenTrace(trace, code, at)
    elif kind == "missing":
        del turn[draw(st.sampled_from(["input", "actual_output"] if shape == "pairs" else
                                      ["content"]))]
        trace[at] = turn
    elif kind == "not_a_string":
        key = draw(st.sampled_from(["input", "actual_output"] if shape == "pairs" else ["content"]))
        turn[key] = draw(st.sampled_from([None, 3, ["text"], {"type": "text", "text": "x"}]))
        trace[at] = turn
    elif kind == "context_not_a_string":
        turn["retrieval_context"] = draw(st.sampled_from([["a", "b"], 1, {"doc": "x"}]))
        turn.pop("retrievalContext", None)
        trace[at] = turn
    elif kind == "both_spellings":
        trace[at] = {**turn, "retrieval_context": None, "retrievalContext": None}
    elif kind == "metadata_not_a_dict":
        turn["metadata"] = draw(st.sampled_from(["support", 1, ["a"]]))
        trace[at] = turn
    elif kind == "files_not_a_list":
        turn.pop("inputFiles", None)
        turn["input_files"] = draw(st.sampled_from([{"uri": "gs://a"}, "gs://a", None]))
        trace[at] = turn
    elif kind == "file_without_uri":
        turn.pop("outputFiles", None)
        turn["output_files"] = [draw(st.sampled_from([{"filename": "a.pdf"}, {"uri": None},
                                                      "gs://a"]))]
        trace[at] = turn
    elif kind == "unknown_role":
        turn["role"] = draw(st.sampled_from(["system", "tool", "developer", "function", "User"]))
        trace[at] = turn
        return BrokenTrace(trace, "unknown_role", at, f"conversation_turns[{at}].role")
    elif kind == "role_not_a_string":
        turn["role"] = draw(st.sampled_from([None, 1, ["user"]]))
        trace[at] = turn
    elif kind == "unserializable_extra":
        turn["note"] = draw(_UNSERIALIZABLE)
        trace[at] = turn
        code = "unserializable_value"
    else:
        raise AssertionError(f"unknown break {kind!r}")
    return BrokenTrace(trace, code, at)


_COMMON = ["not_a_dict", "no_shape", "both_shapes", "other_shape", "missing", "not_a_string",
           "context_not_a_string", "unserializable_extra"]
_BREAKS = {
    "pairs": _COMMON,
    "roles": [*_COMMON, "unknown_role", "role_not_a_string", "both_spellings",
              "metadata_not_a_dict", "files_not_a_list", "file_without_uri"],
}


@st.composite
def broken_records(draw: st.DrawFn) -> BrokenTrace:
    """Trace records (as traces.list returns them) with one broken at a known index."""
    count = draw(st.integers(1, 4))
    records: list[dict[str, Any]] = [
        {"id": f"t{i}", "index": i, "session_id": "s1", "status": "GENERATED",
         "input": draw(texts.filter(bool)), "actual_output": draw(texts)}
        for i in range(count)
    ]
    at = draw(st.integers(0, count - 1))
    kind = draw(st.sampled_from(["nothing_to_read", "backwards", "input_not_text", "extra"]))
    code = "malformed_event"
    if kind == "nothing_to_read":
        records[at].update(input=None, actual_output=None, status="PENDING")
    elif kind == "backwards":
        if at == 0:
            at = count
            records.append({**records[0], "id": "late"})
        records[at]["index"] = -1
    elif kind == "input_not_text":
        records[at]["input"] = draw(st.sampled_from([3, ["q"], {"user_message": 3}]))
    else:
        records[at]["latency"] = draw(_UNSERIALIZABLE)
        code = "unserializable_value"
    return BrokenTrace(records, code, at)


RULES = {"unknown_role": broken_traces(only="unknown_role")}
NO_TOOL_CALLS = "Galtea turns hold text, context and files: no tool calls or results"

KIT = LawKit(
    traces=st.one_of(pair_traces, role_traces),
    conversations=st.one_of(role_conversations, pair_conversations()),
    rules=RULES,
    no_rules={code: NO_TOOL_CALLS for code in RULE_CODES},
    broken=st.one_of(
        broken_traces(),
        broken_records(),
        st.just(BrokenTrace([], "empty_conversation", None)),
        st.sampled_from([{"input": "q", "actual_output": "a"}, "turns", None]).map(
            lambda trace: BrokenTrace(trace, "malformed_event", None)
        ),
    ),
)
