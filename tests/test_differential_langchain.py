"""At least what the framework carries: on every input of the differential corpus, whatever
langchain-core's ``convert_to_openai_messages`` / ``convert_to_messages`` carry, ours carries
too, or the difference is named (``tests/differential/expected.py``): an intended one, with
its row in ``docs/differential.md``, or a known gap. See that page for the method."""

from __future__ import annotations

import re
import warnings
from pathlib import Path

import pytest
from differential.corpus import CASES, Case
from differential.expected import EXPECTED, GAPS
from differential.facts import langchain_facts, openai_facts
from differential.harness import differences, run
from langchain_core.messages import AIMessage, HumanMessage, SystemMessage

DOCS = Path(__file__).resolve().parents[1] / "docs" / "differential.md"
INTENDED = frozenset(re.findall(r"^\| `([a-z-]+)` \|", DOCS.read_text(encoding="utf-8"), re.M))


def _run(case: Case) -> object:
    with warnings.catch_warnings():
        # theirs warns when it invents a file name; that is one of the documented differences
        warnings.simplefilter("ignore", UserWarning)
        return run(case)


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.name)
def test_ours_carries_what_langchain_carries_or_the_difference_is_named(case: Case) -> None:
    observed = differences(_run(case))  # type: ignore[arg-type]
    expected = EXPECTED.get(case.name, {})
    unexplained = sorted(observed - expected.keys(), key=repr)
    gone = sorted(expected.keys() - observed, key=repr)
    assert (unexplained, gone) == ([], []), (
        f"{case.name} ({case.shape}): differences nobody named: {unexplained}; "
        f"named differences that no longer happen: {gone}"
    )
    gaps = sorted({why for why in expected.values() if why in GAPS})
    if gaps:
        pytest.xfail("known gap: " + "; ".join(f"{gap}: {GAPS[gap].what}" for gap in gaps))


def test_every_reason_is_a_documented_difference_or_a_known_gap() -> None:
    reasons = {why for entries in EXPECTED.values() for why in entries.values()}
    assert reasons - INTENDED - GAPS.keys() == set()


def test_every_documented_difference_and_gap_is_shown_by_a_case() -> None:
    reasons = {why for entries in EXPECTED.values() for why in entries.values()}
    assert (INTENDED - reasons, GAPS.keys() - reasons) == (set(), set())


def test_expectations_name_only_cases_of_the_corpus() -> None:
    assert set(EXPECTED) - {case.name for case in CASES} == set()


def test_the_corpus_is_broad() -> None:
    kinds = {
        kind: sum(case.kind == kind for case in CASES) for kind in ("messages", "openai", "flat")
    }
    assert len(CASES) >= 100
    assert min(kinds.values()) >= 10, kinds


# --- the projection: one piece of information is one fact, wherever it is kept ------------


def test_a_refusal_is_one_fact_in_additional_kwargs_a_block_or_an_openai_dict() -> None:
    in_kwargs = langchain_facts([AIMessage("", additional_kwargs={"refusal": "No."})])
    in_block = langchain_facts([AIMessage([{"type": "refusal", "refusal": "No."}])])
    in_openai = openai_facts([{"role": "assistant", "content": None, "refusal": "No."}])
    assert in_kwargs == in_block == in_openai == {(0, "role", "assistant"), (0, "refusal", "No.")}


def test_an_inline_image_is_one_fact_in_every_block_shape() -> None:
    url = "data:image/png;base64,AAAA"
    shapes = [
        {"type": "image_url", "image_url": {"url": url}},
        {"type": "image", "base64": "AAAA", "mime_type": "image/png"},
        {"type": "image", "source_type": "base64", "data": "AAAA", "mime_type": "image/png"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAAA"}},
        {"type": "image", "image": {"format": "png", "source": {"bytes": b"\x00\x00\x00"}}},
    ]
    facts = [langchain_facts([HumanMessage([shape])]) for shape in shapes]
    assert all(fact == {(0, "role", "user"), (0, "image", url)} for fact in facts), facts


def test_text_parts_are_one_text_fact_as_a_string_content_reads() -> None:
    parts = [{"type": "text", "text": "a"}, "b"]
    assert langchain_facts([SystemMessage(parts)]) == openai_facts(
        [{"role": "system", "content": "a\nb"}]
    )


def test_arguments_compare_parsed_and_an_empty_string_means_no_arguments() -> None:
    def call(arguments: str) -> dict[str, object]:
        function = {"name": "f", "arguments": arguments}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "c", "function": function}],
        }

    assert openai_facts([call('{ "a" : 1 }')]) == openai_facts([call('{"a": 1}')])
    assert openai_facts([call("")]) == openai_facts([call("{}")])
    assert (0, "invalid_call", "c", "f", "[1]") in openai_facts([call("[1]")])


def test_a_key_nobody_names_is_a_fact_of_its_own() -> None:
    facts = openai_facts([{"role": "user", "content": "hi", "x_trace_id": "t"}])
    assert (0, "extra", "message", "x_trace_id", '"t"') in facts
