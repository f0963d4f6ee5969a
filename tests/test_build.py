"""The fast paths' builders give exactly what the models' validating constructors give."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import AIMessage, HumanMessage, SystemMessage, ToolCall, ToolMessage, _build
from tracebridge._json import NotPlainJson, json_copy_checked
from tracebridge.errors import TraceError
from tracebridge.hashing import transcript_hash

texts = st.text(max_size=5)
maybe_texts = st.none() | texts
json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | texts,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3),
    max_leaves=8,
)
json_objects = st.dictionaries(texts, json_values, max_size=3)


def given_keywords(**keywords: Any) -> dict[str, Any]:
    """The keywords that differ from the defaults, as the fast paths pass them."""
    defaults = {"name": None, "id": None, "tool_call_id": None, "metadata": {}, "args": {},
                "tool_calls": [], "is_error": False, "role": "system"}
    return {k: v for k, v in keywords.items() if k == "content" or v != defaults.get(k, object())}


def same(built: Any, validated: Any) -> None:
    assert type(built) is type(validated)
    assert built == validated
    assert built.model_fields_set == validated.model_fields_set
    assert list(built.__dict__) == list(validated.__dict__)  # field order: repr and dumps
    assert repr(built) == repr(validated)
    assert built.model_dump_json() == validated.model_dump_json()
    if not isinstance(built, ToolCall):
        assert transcript_hash([built]) == transcript_hash([validated])


@given(texts, maybe_texts, maybe_texts, json_objects)
def test_human(content: str, name: str | None, id: str | None, metadata: dict[str, Any]) -> None:
    same(
        _build.human(content, name, id, metadata),
        HumanMessage(**given_keywords(content=content, name=name, id=id, metadata=metadata)),
    )


@given(texts, st.sampled_from(["system", "developer"]), maybe_texts, maybe_texts, json_objects)
def test_system(
    content: str, role: str, name: str | None, id: str | None, metadata: dict[str, Any]
) -> None:
    same(
        _build.system(content, role, name, id, metadata),
        SystemMessage(
            **given_keywords(content=content, role=role, name=name, id=id, metadata=metadata)
        ),
    )


def test_system_role_is_checked() -> None:
    with pytest.raises(ValueError, match="system or developer, not 'user'"):
        _build.system("x", "user")


@given(texts, maybe_texts, maybe_texts, st.booleans(), maybe_texts, json_objects)
def test_tool(
    content: str,
    call_id: str | None,
    name: str | None,
    is_error: bool,
    id: str | None,
    metadata: dict[str, Any],
) -> None:
    keywords = given_keywords(
        content=content, tool_call_id=call_id, name=name, is_error=is_error, id=id,
        metadata=metadata,
    )
    same(_build.tool(content, call_id, name, is_error, id, metadata), ToolMessage(**keywords))


@given(texts, json_objects, maybe_texts, json_objects)
def test_call(name: str, args: dict[str, Any], id: str | None, metadata: dict[str, Any]) -> None:
    keywords = given_keywords(name=name, args=args, id=id, metadata=metadata)
    keywords["name"] = name
    same(_build.call(name, dict(args), id, metadata), ToolCall(**keywords))


@given(texts, st.lists(st.tuples(texts, json_objects), max_size=2), maybe_texts, maybe_texts,
       json_objects)
def test_ai(
    content: str,
    calls: list[tuple[str, dict[str, Any]]],
    name: str | None,
    id: str | None,
    metadata: dict[str, Any],
) -> None:
    built_calls = [_build.call(n, dict(a)) for n, a in calls]
    typed_calls = [ToolCall(name=n, args=a) for n, a in calls]
    same(
        _build.ai(content, built_calls, name, id, metadata),
        AIMessage(
            **given_keywords(
                content=content, tool_calls=typed_calls, name=name, id=id, metadata=metadata
            )
        ),
    )


def test_defaults_are_fresh_objects() -> None:
    """Each built message has its own default lists and dicts, as pydantic's factories give."""
    first, second = _build.ai("a"), _build.ai("b")
    assert first.tool_calls is not second.tool_calls
    assert first.citations is not second.citations
    assert first.metadata is not second.metadata


def test_a_shared_fields_set_is_never_changed_through_a_message() -> None:
    """Messages of one shape share their fields-set: copying one with an update, and trying
    to set a field, leave the others' as they were."""
    first, second = _build.human("a"), _build.human("b")
    assert first.model_fields_set is second.model_fields_set  # what the sharing saves
    copied = first.model_copy(update={"name": "Ada"})
    assert copied.model_fields_set == {"content", "name"}
    with pytest.raises(ValueError, match="frozen"):
        second.name = "Bo"  # type: ignore[misc]
    assert first.model_fields_set == second.model_fields_set == {"content"}
    assert _build.human("c").model_fields_set == {"content"}
    call = _build.call("search", {"q": 1}, "c1")
    deep = call.model_copy(update={"metadata": {"x": 1}}, deep=True)
    assert deep.model_fields_set == {"name", "args", "id", "metadata"}
    assert _build.call("search", {"q": 2}, "c2").model_fields_set == {"name", "args", "id"}


@given(json_values)
def test_json_copy_checked_copies_plain_json(value: Any) -> None:
    copied = json_copy_checked(value)
    assert copied == value
    if isinstance(value, (dict, list)):
        assert copied is not value


@pytest.mark.parametrize(
    "value",
    [{"a": float("nan")}, [1, (2, 3)], {1: "x"}, {"a": {"b": {1, 2}}}, [float("inf")], b"x"],
)
def test_json_copy_checked_refuses_what_check_json_refuses(value: Any) -> None:
    from tracebridge._json import check_json

    with pytest.raises(NotPlainJson):
        json_copy_checked(value)
    with pytest.raises(TraceError) as raised:
        check_json(value, "metadata")
    assert raised.value.code == "unserializable_value"


@pytest.mark.parametrize("bottom", [None, "x", (1, 2), float("nan"), {1: "x"}])
def test_check_json_refuses_values_nested_past_pythons_depth(bottom: Any) -> None:
    from tracebridge._json import check_json

    value: Any = bottom
    for depth in range(3000):
        value = [value] if depth % 2 else {"k": value}
    # deeper than any JSON value may be (MAX_DEPTH, 128 levels), whatever is at the bottom:
    # refused at the item that holds the deep part, never a RecursionError
    with pytest.raises(TraceError) as raised:
        check_json(value, "metadata")
    assert (raised.value.code, raised.value.path) == ("unserializable_value", "metadata[0]")
