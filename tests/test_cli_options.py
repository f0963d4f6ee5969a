"""Typed adapter options: read from the adapters' signatures, parsed strictly, hints in flags."""

from __future__ import annotations

import inspect
import json
from collections.abc import Collection
from pathlib import Path
from typing import Any, Literal

import pytest
from cli_helpers import run

from tracebridge.options import (
    Option,
    OptionError,
    command_line_hint,
    options_of,
    parse_options,
    reader_options,
    writer_options,
)
from tracebridge.registry import ADAPTER_NAMES, FORMATS, get_adapter

ROOT = Path(__file__).resolve().parents[1]
TOOL_ERROR = ROOT / "golden_traces" / "langchain" / "tool_error.json"
CUT = [
    {"role": "user", "content": "weather?"},
    {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function", "function": {"name": "w", "arguments": "{}"}}]},
]


def _example(
    flag: bool = False,
    *,
    strict: bool = False,
    shape: Literal["pairs", "roles"] | None = None,
    drop: Collection[str] = (),
    joiner: str | None = None,
    limit: int = 3,
    omitted: list[object] | None = None,
) -> None:
    """A function shaped like an adapter's, to read options from."""


def test_options_come_from_keyword_only_parameters_and_their_types() -> None:
    assert options_of(_example, ("is_error", "reasoning")) == {
        "strict": Option("strict", "bool", False),
        "shape": Option("shape", "choice", None, ("pairs", "roles")),
        "drop": Option("drop", "list", (), ("is_error", "reasoning")),
        "joiner": Option("joiner", "text", None),
        "limit": Option("limit", "int", 3),
    }  # `flag` is positional and `omitted` cannot be spelled as text: neither is an option


@pytest.mark.parametrize(
    ("pair", "value"),
    [
        ("strict=true", {"strict": True}),
        ("strict=False", {"strict": False}),
        ("shape=pairs", {"shape": "pairs"}),
        ('shape="roles"', {"shape": "roles"}),
        ("drop=is_error", {"drop": ("is_error",)}),
        ("drop=is_error, reasoning", {"drop": ("is_error", "reasoning")}),
        ('drop=["reasoning"]', {"drop": ("reasoning",)}),
        ("drop=['is_error']", {"drop": ("is_error",)}),
        ("drop=", {"drop": ()}),
        ("joiner= / ", {"joiner": " / "}),
        ("limit=7", {"limit": 7}),
    ],
)
def test_values_are_parsed_by_type(pair: str, value: dict[str, object]) -> None:
    assert parse_options([pair], options_of(_example, ("is_error", "reasoning")), "--x") == value


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("strict=no", "--x 'strict=no': strict takes true or false, got 'no'"),
        ("strict=1", "--x 'strict=1': strict takes true or false, got '1'"),
        ("shape=rows", "--x 'shape=rows': shape takes one of pairs, roles; got 'rows'"),
        ("drop=is_eror", "--x 'drop=is_eror': drop takes names from is_error, reasoning; got "
                         "is_eror"),
        ("drop=[1]", "--x 'drop=[1]': drop takes a comma list or a JSON list of names, got '[1]'"),
        ("limit=many", "--x 'limit=many': limit takes a whole number, got 'many'"),
        ("nope=1", "--x 'nope=1': expected KEY=VALUE with KEY one of: strict, shape, drop, "
                   "joiner, limit"),
        ("strict", "--x 'strict': expected KEY=VALUE with KEY one of: strict, shape, drop, "
                   "joiner, limit"),
    ],
)
def test_bad_options_are_one_line(pair: str, message: str) -> None:
    with pytest.raises(OptionError) as raised:
        parse_options([pair], options_of(_example, ("is_error", "reasoning")), "--x")
    assert str(raised.value) == message


def test_a_list_given_twice_collects_and_anything_else_twice_is_refused() -> None:
    options = options_of(_example, ("is_error", "reasoning"))
    assert parse_options(["drop=is_error", "drop=reasoning"], options, "--x") == {
        "drop": ("is_error", "reasoning")
    }
    with pytest.raises(OptionError, match="strict is given twice"):
        parse_options(["strict=true", "strict=false"], options, "--x")


@pytest.mark.parametrize("name", FORMATS)
def test_every_adapter_option_the_command_line_can_spell_is_listed(name: str) -> None:
    module = get_adapter(name)
    for function, listed in ((module.to_messages, reader_options(name)),
                             (module.from_messages, writer_options(name))):
        keyword_only = [p.name for p in inspect.signature(function).parameters.values()
                        if p.kind is p.KEYWORD_ONLY]
        assert set(listed) <= set(keyword_only)
        assert set(keyword_only) - set(listed) <= {"omitted"}  # a list the caller reads back
    if "drop" in writer_options(name):  # every drop= names its choices, so the CLI lists them
        assert writer_options(name)["drop"].choices == tuple(module.DROPPABLE)


def test_formats_options_lists_them_under_each_format() -> None:
    code, out, _ = run("formats", "--options")
    assert code == 0
    blocks: dict[str, list[str]] = {}
    current = ""
    for line in out.splitlines():
        if line.startswith(" "):
            blocks[current].append(line.strip())
        else:
            current = line.split()[0]
            blocks[current] = []
    assert list(blocks) == [*FORMATS, "llama_index_events"]
    for name, lines in blocks.items():
        assert "--from-option allow_pending=true|false (default: false)" in lines, name
    assert blocks["llama_index_events"] == [
        "--from-option allow_pending=true|false (default: false)"
    ]
    for name in ("openai_chat", "swarm"):  # swarm is written by the Chat Completions writer
        assert any(line.startswith("--to-option   drop=NAME,... (is_error") for line in
                   blocks[name]), name


# --- on the command line ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spelled", "code"),
    [("allow_pending=true", 0), ("allow_pending=TRUE", 0), ("allow_pending=false", 1),
     ("allow_pending=False", 1)],
)
def test_a_false_option_is_false(spelled: str, code: int) -> None:
    assert run("validate", "-", "--from", "openai_chat", "--from-option", spelled,
               stdin=json.dumps(CUT))[0] == code


@pytest.mark.parametrize("spelled", ["allow_pending=no", "allow_pending=0", "allow_pending="])
def test_a_value_that_is_not_a_boolean_is_refused_not_taken_as_true(spelled: str) -> None:
    code, out, err = run("validate", "-", "--from", "openai_chat", "--from-option", spelled,
                         stdin=json.dumps(CUT))
    value = spelled.split("=")[1]
    assert (code, out, err) == (
        2, "", f"tracebridge: --from-option {spelled!r}: allow_pending takes true or false, got "
        f"{value!r}\n"
    )


def test_an_unknown_option_of_the_detected_format_is_refused() -> None:
    assert run("convert", str(TOOL_ERROR), "--at", "trace", "--to", "openai_chat",
               "--to-option", "dorp=1") == (
        2, "", "tracebridge: --to-option 'dorp=1': expected KEY=VALUE with KEY one of: drop\n"
    )
    code, _, err = run("convert", str(TOOL_ERROR), "--at", "trace", "--to", "openai_chat",
                       "--to-option", "drop=nothing_such")
    assert code == 2
    assert err.startswith("tracebridge: --to-option 'drop=nothing_such': drop takes names from "
                          "is_error, ")


def test_a_format_without_options_says_so() -> None:
    assert run("convert", "-", "--from", "openai_chat", "--to", "tracebridge", "--to-option",
               "drop=x", stdin=json.dumps(CUT)) == (
        2, "", "tracebridge: --to-option 'drop=x': expected KEY=VALUE with KEY one of: none "
        "(this format takes no options)\n"
    )


def test_hints_are_spelled_in_flags() -> None:
    reader = reader_options("langchain")
    assert command_line_hint(
        "x: pass drop=['is_error'] to leave it out; drop={'a', 'b'} leaves them; "
        'drop=["c"]; skip_system=True leaves it out; drop_artifacts=True drops it '
        "(allow_pending=True accepts a trace cut mid-tool); pass source=<format>; "
        "pass source= one of them",
        reader=reader, allow_pending_flag=True,
    ) == (
        "x: pass --to-option drop=is_error to leave it out; --to-option drop=a,b leaves them; "
        "--to-option drop=c; --to-option skip_system=true leaves it out; --from-option "
        "drop_artifacts=true drops it (--allow-pending accepts a trace cut mid-tool); pass "
        "--from FORMAT; pass --from with one of them"
    )


def test_a_field_set_to_true_in_a_message_is_not_made_into_a_flag() -> None:
    assert command_line_hint(
        "no error flag (is_error=True); pass drop=['is_error'] to leave it out; "
        "fold_tools=True leaves it out; drop_artifacts=True drops it",
        reader=reader_options("openai_chat"), allow_pending_flag=True,
    ) == (
        "no error flag (is_error=True); pass --to-option drop=is_error to leave it out; "
        "--to-option fold_tools=true leaves it out; --from-option drop_artifacts=true drops it"
    )


def test_a_hint_names_only_options_that_exist() -> None:
    code, out, err = run("convert", str(TOOL_ERROR), "--at", "trace", "--to", "openai_chat")
    assert (code, out) == (1, "")
    assert err.splitlines()[-1] == (
        "tracebridge: cannot write openai_chat: openai_chat: messages[2].is_error: Chat "
        "Completions tool results have no error flag (is_error=True); pass --to-option "
        "drop=is_error to leave it out [not_representable]"
    )


def test_an_unanswered_call_hint_names_the_flag() -> None:
    code, out, _ = run("validate", "-", "--from", "openai_chat", stdin=json.dumps(CUT))
    assert code == 1
    assert "(--allow-pending accepts a trace cut mid-tool)" in out
    assert run("validate", "-", "--from", "openai_chat", "--allow-pending",
               stdin=json.dumps(CUT))[0] == 0


@pytest.mark.parametrize("name", ADAPTER_NAMES)
def test_each_adapter_declares_its_options_on_its_public_surface(name: str) -> None:
    module: Any = get_adapter(name)
    assert "options" in module.__all__
    assert module.options.name == name
    assert module.options.reader == reader_options(name)
    assert module.options.writer == writer_options(name)
    assert module.options.writer["drop"].choices == tuple(module.DROPPABLE)


def test_the_options_module_examples_hold() -> None:
    import doctest

    import tracebridge.options

    failed, attempted = doctest.testmod(tracebridge.options)
    assert (failed, attempted >= 4) == (0, True)
