"""Whether a call's argument text is ``dumps`` of what it parses to, answered without writing
it out when it is a flat object of plain values (``_read._FLAT``): the answer is always the
one writing it out gives (``dumps(args) == raw``), whatever the text."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge.adapters import openai_chat
from tracebridge.adapters.openai_chat._read import _FLAT, dumps, spelled_as_dumps

_KEYS = st.sampled_from(['"a"', '"b"', '"q r"', '"\\u0041"', '"é"', '"\\""', '"a\\/b"', '""'])
_VALUES = st.sampled_from([
    "0", "-0", "00", "01", "-1", "7", "12345678901234567890", "1.0", "1e3", "1.5", "-0.0",
    "true", "false", "null", '"x"', '"é"', '"\\u00e9"', '"tab\\t"', '"del\x7f"', '"~"',
    '"a\\\\b"', '"{\\"k\\": 1}"', "[]", "[1, 2]", "{}", '{"n": 1}',
])
_SEPARATORS = st.sampled_from([(", ", ": "), (",", ":"), (", ", ":"), (",", ": "), (" , ", " : ")])


@st.composite
def argument_texts(draw: st.DrawFn) -> str:
    """Object texts of a few entries, in every spelling: repeated keys, escapes, numbers in
    forms JSON allows and forms it does not, nested values, and each separator."""
    pairs = draw(st.lists(st.tuples(_KEYS, _VALUES), min_size=1, max_size=4))
    item, key = draw(_SEPARATORS)
    return "{" + item.join(k + key + v for k, v in pairs) + "}"


def _parsed(raw: str) -> dict[str, object] | None:
    try:
        value = json.loads(raw)
    except ValueError:
        return None
    return value if type(value) is dict else None


@given(argument_texts())
def test_the_answer_is_the_one_writing_it_out_gives(raw: str) -> None:
    args = _parsed(raw)
    if args is None:
        return  # (no arguments: the readers keep such text as it is, unparsed)
    assert spelled_as_dumps(args, raw) is (dumps(args) == raw)


@given(st.dictionaries(
    st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=5),
    st.one_of(st.none(), st.booleans(), st.integers(),
              st.text(st.characters(min_codepoint=32, max_codepoint=126), max_size=5)),
    min_size=1, max_size=5))
def test_a_flat_object_of_plain_values_is_answered_without_writing_it_out(
    args: dict[str, object],
) -> None:
    raw = json.dumps(args)
    assert spelled_as_dumps(args, raw)
    plain = all('"' not in k and "\\" not in k for k in args) and all(
        type(v) is not str or ('"' not in v and "\\" not in v) for v in args.values())
    assert (_FLAT(raw) is not None) is plain  # (else written out: still True, above)


@pytest.mark.parametrize(("raw", "kept"), [
    ('{"a": 1, "a": 2}', True),  # a key given twice: the parsed object holds it once
    ('{"a": -0}', True),
    ('{"a": 01}', None),  # not JSON: kept as text that did not parse (invalid_args)
    ('{"a": 1}', False),
    ('{"a": "x", "b": true, "c": null, "d": -3}', False),
])
def test_a_call_keeps_the_text_exactly_when_it_is_not_dumps_of_its_arguments(
    raw: str, kept: bool | None,
) -> None:
    trace = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "f", "arguments": raw}}]},
        {"role": "tool", "content": "ok", "tool_call_id": "c1"},
    ]
    call = openai_chat.to_messages(trace)[1].tool_calls[0]  # type: ignore[union-attr]
    if kept is None:
        assert (call.args, call.invalid_args, call.metadata) == ({}, raw, {})
    else:
        assert (call.args, call.invalid_args) == (json.loads(raw), None)
        assert call.metadata == ({"openai_chat": {"arguments": raw}} if kept else {})
    assert openai_chat.from_messages(openai_chat.to_messages(trace)) == trace
