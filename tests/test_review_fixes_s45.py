"""What the review of this stop's fixes found: a kept list of the keys a Chat Completions
url_citation left out is written only when it is the one the reader keeps for the citation."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tracebridge import AIMessage, Citation, HumanMessage, TraceError
from tracebridge.adapters import openai_chat, swarm

ADAPTERS = {"openai_chat": openai_chat, "swarm": swarm}


def _cited(citation: Citation) -> list[Any]:
    return [HumanMessage(content="q"), AIMessage(content="hi", citations=[citation])]


def _read_without_title(name: str) -> Citation:
    annotation = {"type": "url_citation",
                  "url_citation": {"url": "u", "start_index": 0, "end_index": 1}}
    read = ADAPTERS[name].to_messages(
        [{"role": "user", "content": "q"},
         {"role": "assistant", "content": "hi", "annotations": [annotation]}]
    )
    citation = read[1].citations[0]
    assert citation.metadata == {name: {"absent": ["title"]}}
    return citation


def _kept(name: str, absent: Any, **fields: Any) -> Citation:
    inner = fields.pop("inner", None)
    namespace = {"absent": absent} | ({} if inner is None else {"inner": inner})
    return Citation(**{"url": "u", "start_index": 0, "end_index": 1, **fields},
                    metadata={name: namespace})


CASES = {
    "a title filled in since": (
        lambda name: _read_without_title(name).model_copy(update={"title": "T"}),
        "['title']", "title has a value now"),
    "out of order": (
        lambda name: _kept(name, ["end_index", "title"], end_index=None),
        "['end_index', 'title']", "the reader lists them once each, in the annotation's order"),
    "listed twice": (
        lambda name: _kept(name, ["title", "title"]),
        "['title', 'title']", "the reader lists them once each, in the annotation's order"),
    "null in inner too": (
        lambda name: _kept(name, ["title"], inner={"title": None}),
        "['title']", "title is kept as null in inner too"),
    "empty": (
        lambda name: _kept(name, [], title="T"),
        "[]", "the reader keeps no empty list"),
}


@pytest.mark.parametrize("name", sorted(ADAPTERS))
@pytest.mark.parametrize("case", sorted(CASES))
def test_a_kept_absent_list_the_reader_would_not_keep_is_refused(name: str, case: str) -> None:
    build, shown, why = CASES[case]
    with pytest.raises(TraceError) as caught:
        ADAPTERS[name].from_messages(_cited(build(name)))
    path = f"messages[1].citations[0].metadata.{name}.absent"
    assert (caught.value.code, caught.value.index, caught.value.path, str(caught.value)) == (
        "not_representable", 1, path,
        f"{name}: {path}: the kept list of keys the source's url_citation left out ({shown}) "
        f"is not what this format's reader keeps for this citation ({why}): written, it "
        "would read back otherwise [not_representable]",
    )


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_the_list_the_reader_kept_still_round_trips(name: str) -> None:
    messages = _cited(_read_without_title(name))
    written = ADAPTERS[name].from_messages(messages)
    assert written[1]["annotations"] == [
        {"type": "url_citation", "url_citation": {"url": "u", "start_index": 0, "end_index": 1}}
    ]
    assert ADAPTERS[name].to_messages(written) == messages


# --- a LangChain function_call copy joined from a stream: read in linear time ------------------

def _spelled_by_some(name: str, values: list[Any], specs: list[dict[str, Any]]) -> bool:
    """The definition: some calls of ``specs``, in order, spell ``name`` and ``values``."""
    from itertools import combinations

    from tracebridge._json import same_json

    valid = [s for s in specs if "invalid_args" not in s]
    return any(
        "".join(s["name"] for s in chosen) == name
        and all(same_json(v, s["args"]) for v, s in zip(values, chosen, strict=True))
        for chosen in combinations(valid, len(values))
    )


@given(
    names=st.lists(st.sampled_from(["f", "g", "fg", ""]), min_size=1, max_size=6),
    args=st.lists(st.sampled_from([{}, {"a": 1}, {"a": 1.0}, {"b": [1]}]), min_size=6,
                  max_size=6),
    picks=st.lists(st.integers(0, 5), max_size=4),
)
def test_a_joined_copy_is_found_exactly_when_some_calls_spell_it(
    names: list[str], args: list[dict[str, Any]], picks: list[int]
) -> None:
    from tracebridge.adapters.langchain._calls import _spells_calls

    specs = [{"name": n, "args": args[k], "id": f"c{k}"} for k, n in enumerate(names)]
    chosen = sorted({p for p in picks if p < len(specs)})
    name = "".join(specs[p]["name"] for p in chosen)
    values = [specs[p]["args"] for p in chosen] or [{"z": 0}]
    assert _spells_calls(name, values, specs) == _spelled_by_some(name, values, specs)


def test_a_copy_of_two_thousand_joined_calls_keeps_one_state_per_call() -> None:
    from tracebridge.adapters.langchain import _calls

    specs = [{"name": "f", "args": {"k": k}, "id": f"c{k}"} for k in range(2000)]
    seen: list[int] = []
    original = _calls.same_json

    def counted(a: Any, b: Any, **options: Any) -> bool:
        seen.append(1)
        return original(a, b, **options)

    _calls.same_json = counted  # type: ignore[assignment]
    try:
        assert _calls._spells_calls("f" * 2000, [{"k": k} for k in range(2000)], specs)
    finally:
        _calls.same_json = original  # type: ignore[assignment]
    assert len(seen) <= 2 * 2000


# --- Galtea: a mapped field spelled twice, read with object_pairs_hook=OrderedDict -------------

_FILE = {"uri": "gs://f/a.pdf", "filename": None, "mime_type": None, "type": "file"}
_ENVELOPE = {"assistant_message": "b", "content": [{"type": "file", "uri": "gs://f/a.pdf"}]}
_TWICE = {
    "files": {"input_files": [_FILE], "inputFiles": [_FILE]},
    "envelopes": {"actualOutput": _ENVELOPE, "actual_output_data": _ENVELOPE},
}


@pytest.mark.parametrize("case", sorted(_TWICE))
def test_a_mapped_field_spelled_twice_reads_from_ordered_dicts(case: str) -> None:
    import json
    from collections import OrderedDict

    from tracebridge.adapters import galtea

    record = {"id": "t", "index": 0, "session_id": "s", "input": "a", "actual_output": "b",
              **_TWICE[case]}
    if case == "envelopes":
        del record["actual_output"]
    text = json.dumps([record])
    plain = galtea.to_messages(json.loads(text))
    assert galtea.to_messages(json.loads(text, object_pairs_hook=OrderedDict)) == plain


# --- the evaluation cache waits out its whole timeout on a locked file ---------------------------

def test_opening_a_locked_cache_tries_until_the_whole_timeout_has_passed(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sqlite3

    from tracebridge.evaluation import cache as cache_module

    clock = [0.0]  # the time SQLite waits on a lock and the pauses pass on this clock
    opened = cache_module.ResultCache._connect_once

    def locked_until_0_95(self: Any, timeout: float) -> Any:
        if clock[0] < 0.95:
            clock[0] += 0.1
            raise cache_module._Locked(sqlite3.OperationalError("database is locked"))
        return opened(self, timeout)

    def sleep(seconds: float) -> None:
        clock[0] += seconds

    monkeypatch.setattr(cache_module.ResultCache, "_connect_once", locked_until_0_95)
    # the module's own clock only: the test process's time module is left alone
    monkeypatch.setattr(cache_module, "time", SimpleNamespace(monotonic=lambda: clock[0],
                                                              sleep=sleep))
    cache = cache_module.ResultCache(tmp_path / "cache.sqlite", timeout=1.0)
    cache.close()
    assert 0.95 <= clock[0] <= 1.1


@pytest.mark.parametrize("name", sorted(ADAPTERS))
def test_a_kept_inner_value_beside_absent_is_refused_at_inner(name: str) -> None:
    citation = _kept(name, ["title"], inner={"title": "T"})
    with pytest.raises(TraceError) as caught:
        ADAPTERS[name].from_messages(_cited(citation))
    assert (caught.value.code, caught.value.index, caught.value.path) == (
        "not_representable", 1, f"messages[1].citations[0].metadata.{name}.inner.title"
    )


# --- LlamaIndex: only the keys an entry left out are written without ---------------------------

def _llama_cited(annotation: dict[str, Any]) -> list[Any]:
    from llama_index.core.llms import ChatMessage

    return [ChatMessage(role="user", content="q"),
            ChatMessage(role="assistant", content="see x",
                        additional_kwargs={"annotations": [annotation]})]


_WHOLE = {"type": "url_citation", "url_citation": {"url": "https://a", "title": "A",
                                                   "start_index": 0, "end_index": 3}}


def test_llama_index_refuses_a_citation_read_whole_then_cleared() -> None:
    from tracebridge.adapters import llama_index

    read = llama_index.to_messages(_llama_cited({**_WHOLE, "zz": 1}))
    cited = read[1].citations[0].model_copy(update={"title": None, "start_index": None})
    edited = [read[0], read[1].model_copy(update={"citations": [cited]})]
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages(edited)
    assert (caught.value.code, caught.value.index, caught.value.path, str(caught.value)) == (
        "not_representable", 1, "messages[1].citations[0]",
        "llama_index: messages[1].citations[0]: an OpenAI url_citation in "
        "additional_kwargs['annotations'] needs title, start_index; drop=['citations'] leaves "
        "citations out [not_representable]",
    )


def test_llama_index_lists_the_keys_an_entry_left_out_and_writes_them_back() -> None:
    from tracebridge.adapters import llama_index

    partial = {"type": "url_citation", "url_citation": {"url": "https://a", "end_index": 3}}
    read = llama_index.to_messages(_llama_cited(partial))
    assert read[1].citations[0].metadata == {
        "llama_index": {"absent": ["title", "start_index"]}
    }
    assert llama_index.from_messages(read)[1].additional_kwargs == {"annotations": [partial]}
    filled = read[1].citations[0].model_copy(update={"title": "A"})
    with pytest.raises(TraceError) as caught:
        llama_index.from_messages([read[0], read[1].model_copy(update={"citations": [filled]})])
    assert (caught.value.code, caught.value.path) == (
        "not_representable", "messages[1].citations[0].metadata.llama_index.absent"
    )


# --- a user check that raises an exception outside Exception ---------------------------------

class _Escaping(BaseException):
    """An exception a library may raise that is not an Exception (as CancelledError is not)."""


@pytest.mark.parametrize("kind", [_Escaping, GeneratorExit])
def test_a_check_raising_a_base_exception_is_a_reason(tmp_path: Any, kind: type) -> None:
    from evaluation_helpers import case, write_cases

    from tracebridge.evaluation.cases import load_cases
    from tracebridge.evaluation.checks import UserCheck, check_case

    def check(_: Any) -> list[str]:
        raise kind("stop")

    [loaded] = load_cases(str(write_cases(tmp_path, [case("a")]))).cases
    assert check_case(loaded, [], [UserCheck("mychk:f", check)]) == [
        f"check mychk:f raised {kind.__name__}: stop"
    ]


def test_ctrl_c_in_a_check_stays_an_interrupt(tmp_path: Any) -> None:
    from evaluation_helpers import case, write_cases

    from tracebridge.evaluation.cases import load_cases
    from tracebridge.evaluation.checks import UserCheck, check_case

    def check(_: Any) -> list[str]:
        raise KeyboardInterrupt

    [loaded] = load_cases(str(write_cases(tmp_path, [case("a")]))).cases
    with pytest.raises(KeyboardInterrupt):
        check_case(loaded, [], [UserCheck("mychk:f", check)])


def test_a_module_raising_a_base_exception_at_import_is_a_check_error(
    tmp_path: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tracebridge.evaluation.checks import CheckError, load_check

    (tmp_path / "escapes_at_import_s45.py").write_text(
        "import asyncio\nraise asyncio.CancelledError('gone')\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(CheckError) as caught:
        load_check("escapes_at_import_s45:f")
    assert str(caught.value) == (
        "--checks escapes_at_import_s45:f: cannot import escapes_at_import_s45: "
        "CancelledError: gone"
    )
