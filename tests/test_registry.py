"""The registry: every adapter module is registered, found by name, detected by shape."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import tracebridge
from tracebridge import HumanMessage, MultiTurnSample, TraceError, convert, registry
from tracebridge._optional import require
from tracebridge.errors import FormatError, MissingExtraError
from tracebridge.registry import ADAPTER_NAMES, FORMATS, detect_format, get_adapter

ROOT = Path(__file__).resolve().parents[1]


def test_every_package_in_adapters_is_registered_and_nothing_else() -> None:
    packages = {p.parent.name for p in (ROOT / "adapters").glob("*/__init__.py")}
    assert packages == set(ADAPTER_NAMES)
    # One package per framework: no adapter code left beside them.
    assert [p.name for p in (ROOT / "adapters").glob("*.py")] == ["__init__.py"]


@pytest.mark.parametrize("name", FORMATS)
def test_every_format_has_the_adapter_surface(name: str) -> None:
    adapter = get_adapter(name)
    assert name == adapter.NAME
    assert callable(adapter.to_messages)
    assert callable(adapter.from_messages)
    assert callable(adapter.detect)


@pytest.mark.parametrize("name", ADAPTER_NAMES)
def test_every_adapter_has_its_law_kit_golden_traces_and_docs(name: str) -> None:
    assert (ROOT / "tests" / "law_kits" / f"{name}.py").is_file()
    assert list((ROOT / "golden_traces" / name).glob("*.json")), "no golden traces"
    assert list((ROOT / "golden_traces" / name / "invalid").glob("*.json")), "no invalid cases"
    assert (ROOT / "docs" / "adapters" / f"{name}.md").is_file()


def test_an_unknown_format_name_is_one_clear_sentence() -> None:
    with pytest.raises(FormatError) as caught:
        get_adapter("autogen")
    assert str(caught.value) == (
        "unknown format 'autogen'; known formats: " + ", ".join(FORMATS)
    )


def test_a_missing_framework_names_the_extra_to_install() -> None:
    with pytest.raises(MissingExtraError) as caught:
        require("tracebridge_no_such_pkg", adapter="demo", extra="demo", package="demo-pkg")
    assert str(caught.value) == (
        'the demo adapter needs demo-pkg, which is not installed: pip install "tracebridge[demo]"'
    )


def test_auto_detects_tracebridge_json() -> None:
    trace = [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}]
    assert detect_format(trace) == "tracebridge"
    assert detect_format(MultiTurnSample(messages=[HumanMessage(content="hi")])) == "tracebridge"
    assert convert(trace, target="tracebridge") == [
        {"type": "human", "content": "hi", "name": None, "id": None, "metadata": {}},
        {"type": "ai", "content": "hello", "tool_calls": [], "name": None, "citations": [],
         "audio": None, "id": None, "metadata": {}},
    ]


def test_auto_fails_clearly_when_nothing_matches() -> None:
    with pytest.raises(FormatError, match="matches none of"):
        detect_format({"unrelated": True})


def test_auto_reads_a_trace_every_matching_format_reads_alike() -> None:
    # A bare user/assistant list is both an OpenAI chat history and Galtea role turns; both
    # readers give the same typed messages, so the choice cannot change what is read.
    chat = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
    assert detect_format(chat) == "openai_chat"
    assert convert(chat, target="tracebridge") == [
        {"type": "human", "content": "hi", "name": None, "id": None, "metadata": {}},
        {"type": "ai", "content": "hello", "tool_calls": [], "name": None, "citations": [],
         "audio": None, "id": None, "metadata": {}},
    ]


def test_auto_fails_clearly_when_matching_formats_read_differently() -> None:
    # metadata is a field of Galtea's turns, and an unknown key to OpenAI: two readings
    # (retrieval_context and the file lists are Galtea's alone: those lists are galtea's)
    turns = [{"role": "user", "content": "q"},
             {"role": "assistant", "content": "a", "metadata": {"k": 1}}]
    with pytest.raises(FormatError) as caught:
        detect_format(turns)
    assert str(caught.value) == (
        "ambiguous trace: it has the shape of openai_chat and galtea, and they read it "
        "differently (openai_chat reads 2 message(s), keeping metadata['openai_chat']; "
        "galtea reads 2 message(s), keeping metadata['galtea']); pass source= one of them"
    )


class _Refusing:
    """A stand-in adapter that has every trace's shape and refuses each the same way."""

    def __init__(self, name: str) -> None:
        self.NAME = name

    def detect(self, trace: object) -> bool:
        return True

    def to_messages(self, trace: object) -> list:
        raise TraceError("orphan_tool_result", "no call", index=1, path="messages[1]",
                         source=self.NAME)


def test_auto_raises_the_trace_error_every_matching_format_agrees_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(registry, "get_adapter", _Refusing)
    with pytest.raises(TraceError) as caught:
        detect_format([{}], candidates=("a", "b"))
    assert (caught.value.code, caught.value.source) == ("orphan_tool_result", "a")


BLOCK_FRAMEWORKS = textwrap.dedent(
    """
    import sys
    class Block:
        def find_spec(self, name, path=None, target=None):
            if name.split(".")[0] in {"langchain_core", "llama_index", "openai"}:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)
            return None
    sys.meta_path.insert(0, Block())
    """
)


def test_import_tracebridge_loads_no_framework() -> None:
    code = (
        "import sys, tracebridge, tracebridge.registry, tracebridge.cli;"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in "
        "{'langchain_core', 'langgraph', 'llama_index', 'openai', 'httpx'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


@pytest.mark.parametrize(
    ("name", "extra"), [("langchain", "langchain"), ("llama_index", "llama-index")]
)
def test_adapters_import_without_their_framework_and_name_the_extra(name: str, extra: str) -> None:
    # Building a framework's own objects needs the framework: the adapter names the extra.
    code = BLOCK_FRAMEWORKS + textwrap.dedent(
        f"""
        from tracebridge import HumanMessage
        from tracebridge.registry import get_adapter
        from tracebridge.errors import MissingExtraError
        adapter = get_adapter({name!r})
        assert adapter.detect([{{"unrelated": 1}}]) is False
        try:
            adapter.from_messages([HumanMessage(content="hi")])
        except MissingExtraError as exc:
            print(exc)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().endswith(f'pip install "tracebridge[{extra}]"')


def test_the_public_surface_is_what_the_docs_list() -> None:
    listed = (ROOT / "docs" / "model.md").read_text(encoding="utf-8")
    section = listed.split("## Public API", 1)[1].split("\n## ", 1)[0]
    names = sorted(line.split("`")[1] for line in section.splitlines() if line.startswith("- `"))
    assert names == sorted(tracebridge.__all__)
    assert tracebridge.__all__ == [
        "AIMessage", "AudioPart", "AudioReference", "Citation", "FilePart", "HumanMessage",
        "ImagePart", "Message", "MultiTurnSample", "OpaquePart", "ReasoningPart", "RefusalPart",
        "SystemMessage", "TextPart",
        "ToolCall", "ToolMessage", "TraceError", "check", "convert", "render",
        "transcript_hash", "validate",
    ]


def test_tracebridge_json_is_not_claimed_for_a_flat_langchain_dump() -> None:
    # A LangChain model_dump() shares the type tags, but has fields no typed message has.
    flat = {"type": "human", "content": "hi", "additional_kwargs": {}, "response_metadata": {},
            "name": None, "id": None}
    assert get_adapter("tracebridge").detect([flat]) is False
    assert get_adapter("tracebridge").detect([{"type": "human", "content": "hi", "id": "m1"}])
