"""The command line, user-journey audit s39: records read past the first 32, write failures,
OpenTelemetry output read back, hints that respelled the user's own text, ``-o /dev/stdout``.

1. The format of a file is told from its first 32 records; when several formats read those
   alike (plain user/assistant lines: openai_chat and galtea), every later record was read as
   the first of them unchecked, so a Galtea ``retrieval_context`` or a Swarm ``sender`` on
   line 41 was dropped, exit 0. Each later record is now checked as the first ones were.
2. Write failures named no file (or the temporary file beside OUT), and a failing
   ``--errors FILE`` replaced the failure that stopped the run, or let OUT be replaced.
3. ``--to otel`` output could not be read back: the filter hint was in Python's spelling,
   and a JSONL file read as one OpenTelemetry trace was written as an indented document.
4. The hint rewriter respelled values quoted from the input and from the command line.
5. ``-o /dev/stdout`` whose reader went away ended with exit 2 and a message, where standard
   output ends with 141, quietly.

Every case runs the real console script in a process of its own.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tracebridge.adapters import otel
from tracebridge.errors import TraceError
from tracebridge.options import command_line_hint

SCRIPT = str(Path(sys.executable).with_name("tracebridge"))
"""The console script pip generated for this environment."""

HAS_DEV_FULL = os.path.exists("/dev/full") and stat.S_ISCHR(os.stat("/dev/full").st_mode)
needs_dev_full = pytest.mark.skipif(not HAS_DEV_FULL, reason="needs /dev/full")
FULL = "[Errno 28] No space left on device"


def tb(*argv: str, cwd: Path, stdout: Any = subprocess.PIPE) -> tuple[int, str, str]:
    """``tracebridge *argv`` in a process of its own: (exit status, stdout, stderr)."""
    done = subprocess.run([SCRIPT, *argv], cwd=cwd, stdout=stdout, stderr=subprocess.PIPE,
                          timeout=120)
    out = done.stdout.decode("utf-8") if done.stdout is not None else ""
    return done.returncode, out, done.stderr.decode("utf-8")


PLAIN = [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "hello"}]
RETRIEVAL = [{"role": "user", "content": "rates?"},
             {"role": "assistant", "content": "3%", "retrieval_context": "Rates page: 3% APR"}]
ANNOTATED = [{"role": "user", "content": "rates?"},
             {"role": "assistant", "content": "3%", "metadata": {"page": "Rates: 3% APR"}}]
"""Galtea reads a turn's ``metadata``, OpenAI chat keeps it as an unknown key: both have its
shape and read it differently (``retrieval_context`` is Galtea's alone)."""
SENDER = [{"role": "user", "content": "bill me"},
          {"role": "assistant", "content": "Sure", "sender": "Billing Agent"}]
ORPHAN = [{"role": "tool", "tool_call_id": "x", "content": "orphan"}]


def jsonl(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(record) + "\n" for record in records))
    return path


# --- 1. every record is checked, not the first 32 only ----------------------------------------

NOTICE = ("tracebridge: reading turns.jsonl as openai_chat (told from its first 32 records; "
          "--from to choose)")
AMBIGUOUS = ("ambiguous trace: it has the shape of openai_chat and galtea, and they read it "
             "differently (openai_chat reads 2 message(s), keeping metadata['openai_chat']; "
             "galtea reads 2 message(s), keeping metadata['galtea']); pass --from with one of "
             "them")
OTHER_SHAPE = ("it has the shape of swarm or galtea, not of openai_chat, which this file is "
               "read as (told from its first 32 records); one file holds one format: pass "
               "--from FORMAT")


def test_a_late_record_the_formats_read_differently_is_refused_as_on_its_own(
        tmp_path: Path) -> None:
    jsonl(tmp_path / "turns.jsonl", [PLAIN] * 40 + [ANNOTATED])
    code, out, err = tb("convert", "turns.jsonl", "--to", "galtea", cwd=tmp_path)
    assert code == 2
    assert out.splitlines() == [json.dumps(PLAIN)] * 40
    assert err.splitlines() == [NOTICE, f"tracebridge: turns.jsonl: line 41: {AMBIGUOUS}"]
    # the same record alone is refused with the same words
    jsonl(tmp_path / "one.jsonl", [ANNOTATED])
    assert tb("convert", "one.jsonl", "--to", "galtea", cwd=tmp_path) == (
        2, "", f"tracebridge: one.jsonl: line 1: {AMBIGUOUS}\n")


def test_with_keep_going_the_late_record_is_one_bad_line(tmp_path: Path) -> None:
    jsonl(tmp_path / "turns.jsonl", [PLAIN] * 40 + [ANNOTATED, PLAIN])
    code, out, err = tb("convert", "turns.jsonl", "--to", "galtea", "--keep-going",
                        "--errors", "errors.jsonl", cwd=tmp_path)
    assert code == 1
    assert out.splitlines() == [json.dumps(PLAIN)] * 41
    assert err.splitlines() == [
        NOTICE, f"tracebridge: turns.jsonl: line 41: {AMBIGUOUS}", "41 ok, 1 failed",
        "tracebridge: standard output has no line for a failed record or a blank line of "
        "turns.jsonl: a record after one has another line number there than in turns.jsonl, so "
        "ids by line number (as sample "
        "--references matches them) do not carry over; run sample on turns.jsonl"]
    assert [json.loads(line) for line in (tmp_path / "errors.jsonl").read_text().splitlines()] \
        == [{"file": "turns.jsonl", "line": 41, "code": "unknown_format", "index": None,
             "path": None, "source": None, "message": AMBIGUOUS}]


def test_a_late_record_only_galtea_has_the_shape_of_is_refused(tmp_path: Path) -> None:
    jsonl(tmp_path / "turns.jsonl", [PLAIN] * 40 + [RETRIEVAL])
    code, out, err = tb("convert", "turns.jsonl", "--to", "galtea", cwd=tmp_path)
    assert code == 2
    assert out.splitlines() == [json.dumps(PLAIN)] * 40
    assert err.splitlines() == [NOTICE, "tracebridge: turns.jsonl: line 41: it has the shape "
                                "of galtea, not of openai_chat, which this file is read as (told "
                                "from its first 32 records); one file holds one format: pass "
                                "--from FORMAT"]


def test_a_late_record_of_another_shape_is_refused(tmp_path: Path) -> None:
    jsonl(tmp_path / "turns.jsonl", [PLAIN] * 40 + [SENDER])
    code, out, err = tb("convert", "turns.jsonl", "--to", "swarm", cwd=tmp_path)
    assert code == 2
    assert out.splitlines() == [json.dumps(PLAIN)] * 40
    assert err.splitlines() == [NOTICE, f"tracebridge: turns.jsonl: line 41: {OTHER_SHAPE}"]
    code, out, err = tb("validate", "turns.jsonl", "--keep-going", cwd=tmp_path)
    assert code == 1
    assert out.splitlines() == [f"line {n}: ok: 2 messages (openai_chat)" for n in range(1, 41)]
    assert err.splitlines() == [NOTICE, f"tracebridge: turns.jsonl: line 41: {OTHER_SHAPE}",
                                "40 ok, 1 failed"]


GALTEA_REFUSES = [{"role": "user", "content": "hi"},
                  {"role": "assistant", "content": "hello", "metadata": 5}]
BOTH_REFUSE = ('[{"role": "user", "content": "hi"}, '
               '{"role": "assistant", "content": "a", "x": 1e400}]')
"""A record both formats have the shape of and refuse (``1e400`` reads as an infinite float)."""
REFUSED_BY_GALTEA = (
    "ambiguous trace: it has the shape of openai_chat and galtea, and they read it differently "
    "(openai_chat reads 2 message(s), keeping metadata['openai_chat']; galtea refuses it: "
    "malformed_event at conversation_turns[1].metadata); pass --from with one of them")
REFUSED_BY_BOTH = ("invalid trace: openai_chat: messages[1].x: inf is not a finite number "
                   "[unserializable_value]")
"""Both formats refuse it with one code at one message: the first one's refusal (exit 1)."""


@pytest.mark.parametrize(("line", "told", "code"), [
    (json.dumps(GALTEA_REFUSES), REFUSED_BY_GALTEA, 2),
    (BOTH_REFUSE, REFUSED_BY_BOTH, 1),
], ids=["refused-by-one", "refused-by-both"])
def test_a_late_record_a_format_refuses_is_told_as_on_its_own(
        tmp_path: Path, line: str, told: str, code: int) -> None:
    (tmp_path / "turns.jsonl").write_text((json.dumps(PLAIN) + "\n") * 40 + line + "\n")
    assert tb("convert", "turns.jsonl", "--to", "galtea", cwd=tmp_path) == (
        code, (json.dumps(PLAIN) + "\n") * 40,
        f"{NOTICE}\ntracebridge: turns.jsonl: line 41: {told}\n")
    (tmp_path / "one.jsonl").write_text(line + "\n")
    notice = ("tracebridge: reading one.jsonl as openai_chat (told from line 1; --from to "
              "choose)\n") if code == 1 else ""
    assert tb("convert", "one.jsonl", "--to", "galtea", cwd=tmp_path) == (
        code, "", f"{notice}tracebridge: one.jsonl: line 1: {told}\n")


def test_a_late_record_of_no_formats_shape_is_told_by_the_reader(tmp_path: Path) -> None:
    jsonl(tmp_path / "turns.jsonl", [PLAIN] * 40 + [[{"speaker": "user", "text": "hi"}]])
    assert tb("convert", "turns.jsonl", "--to", "galtea", cwd=tmp_path) == (
        1, (json.dumps(PLAIN) + "\n") * 40,
        f"{NOTICE}\ntracebridge: turns.jsonl: line 41: invalid trace: openai_chat: messages[0]: "
        "a message needs 'role' (one of system, developer, user, assistant, tool, function); "
        "found keys ['speaker', 'text'] [malformed_event]\n")


def test_from_names_the_format_and_keeps_what_it_reads(tmp_path: Path) -> None:
    jsonl(tmp_path / "turns.jsonl", [PLAIN] * 40 + [RETRIEVAL])
    code, out, err = tb("convert", "turns.jsonl", "--from", "galtea", "--to", "galtea",
                        cwd=tmp_path)
    assert (code, err) == (0, "")
    assert json.loads(out.splitlines()[40])[1]["retrieval_context"] == "Rates page: 3% APR"


# --- 2. write failures name what could not be written ----------------------------------------


@needs_dev_full
def test_validate_with_errors_on_a_full_device_still_gives_its_verdict(tmp_path: Path) -> None:
    jsonl(tmp_path / "orphan.jsonl", [ORPHAN])
    assert tb("validate", "orphan.jsonl", "--from", "openai_chat", "--errors", "/dev/full",
              cwd=tmp_path) == (
        2,
        "line 1: invalid: orphan_tool_result at messages[0].tool_call_id: openai_chat: "
        "messages[0].tool_call_id: tool result answers nothing: no AIMessage comes before it "
        "[orphan_tool_result]\n",
        f"tracebridge: cannot write --errors /dev/full: {FULL}\n",
    )


@needs_dev_full
def test_convert_with_errors_on_a_full_device_still_tells_the_bad_record(
        tmp_path: Path) -> None:
    jsonl(tmp_path / "orphan.jsonl", [ORPHAN])
    assert tb("convert", "orphan.jsonl", "--from", "openai_chat", "--to", "langchain",
              "--errors", "/dev/full", cwd=tmp_path) == (
        2, "",
        "tracebridge: orphan.jsonl: line 1: invalid trace: openai_chat: messages[0]."
        "tool_call_id: tool result answers nothing: no AIMessage comes before it "
        f"[orphan_tool_result]\ntracebridge: cannot write --errors /dev/full: {FULL}\n",
    )


@needs_dev_full
def test_keep_going_with_errors_on_a_full_device_leaves_out_as_it_was(tmp_path: Path) -> None:
    jsonl(tmp_path / "mix.jsonl", [PLAIN, ORPHAN])
    (tmp_path / "out.jsonl").write_text("OLD\n")
    assert tb("convert", "mix.jsonl", "--from", "openai_chat", "--to", "langchain",
              "--keep-going", "--errors", "/dev/full", "-o", "out.jsonl", cwd=tmp_path) == (
        2, "",
        "tracebridge: mix.jsonl: line 2: invalid trace: openai_chat: messages[0].tool_call_id: "
        "tool result answers nothing: no AIMessage comes before it [orphan_tool_result]\n"
        f"1 ok, 1 failed\ntracebridge: cannot write --errors /dev/full: {FULL}\n",
    )
    assert (tmp_path / "out.jsonl").read_text() == "OLD\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mix.jsonl", "out.jsonl"]


@needs_dev_full
def test_sample_with_errors_on_a_full_device_writes_no_out(tmp_path: Path) -> None:
    jsonl(tmp_path / "mix.jsonl", [PLAIN, ORPHAN])
    code, out, err = tb("sample", "mix.jsonl", "--from", "openai_chat", "--keep-going",
                        "--errors", "/dev/full", "-o", "samples.jsonl", cwd=tmp_path)
    assert (code, out) == (2, "")
    assert err.splitlines()[-2:] == ["1 ok, 1 failed",
                                     f"tracebridge: cannot write --errors /dev/full: {FULL}"]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mix.jsonl"]


@needs_dev_full
@pytest.mark.parametrize("command", [
    ["convert", "ok.jsonl", "--from", "openai_chat", "--to", "langchain"],
    ["validate", "ok.jsonl", "--from", "openai_chat"],
    ["show", "ok.jsonl", "--from", "openai_chat"],
    ["formats"],
])
def test_a_full_standard_output_is_named(tmp_path: Path, command: list[str]) -> None:
    jsonl(tmp_path / "ok.jsonl", [PLAIN])
    with open("/dev/full", "w") as full:
        assert tb(*command, cwd=tmp_path, stdout=full) == (
            2, "", f"tracebridge: cannot write standard output: {FULL}\n")


def test_out_in_a_missing_directory_is_named_not_its_temporary_file(tmp_path: Path) -> None:
    jsonl(tmp_path / "ok.jsonl", [PLAIN])
    assert tb("convert", "ok.jsonl", "--from", "openai_chat", "--to", "langchain", "-o",
              "nodir/out.jsonl", cwd=tmp_path) == (
        2, "", "tracebridge: cannot write nodir/out.jsonl: [Errno 2] No such file or directory\n")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ok.jsonl"]


def test_errors_naming_a_directory_names_the_option(tmp_path: Path) -> None:
    jsonl(tmp_path / "orphan.jsonl", [ORPHAN])
    assert tb("convert", "orphan.jsonl", "--from", "openai_chat", "--to", "langchain",
              "--keep-going", "--errors", ".", cwd=tmp_path) == (
        2, "", "tracebridge: cannot write --errors .: [Errno 21] Is a directory\n")


# --- 3. --to otel output is read back -----------------------------------------------------------

FIRST = [{"role": "user", "content": "first"}, {"role": "assistant", "content": "one"}]
SECOND = [{"role": "user", "content": "second"}, {"role": "assistant", "content": "two"}]


def test_otel_output_of_several_conversations_reads_back_with_the_filters_in_flags(
        tmp_path: Path) -> None:
    jsonl(tmp_path / "in.jsonl", [FIRST, SECOND])
    code, out, _ = tb("convert", "in.jsonl", "--from", "openai_chat", "--to", "otel",
                      cwd=tmp_path)
    assert code == 0
    (tmp_path / "otel.jsonl").write_text(out)
    documents = [json.loads(line) for line in out.splitlines()]
    assert len(documents) == 2
    with pytest.raises(TraceError) as raised:
        otel.to_messages(documents)
    said = str(raised.value)  # Python's spelling: "choose one with a filter: span_id=..."
    assert "filter: span_id=" in said
    spelled = (said.replace("filter: span_id=", "filter: --from-option span_id=")
               .replace(" | span_id=", " | --from-option span_id=")
               .replace("); trace_id=", "); --from-option trace_id=")
               .replace("; session_id=", "; --from-option session_id="))
    assert tb("convert", "otel.jsonl", "--to", "openai_chat", cwd=tmp_path) == (
        1, "",
        "tracebridge: reading otel.jsonl as otel (told from its first 2 records; --from to "
        f"choose)\ntracebridge: invalid trace: {spelled}\n",
    )
    # each conversation is read with the filter the message lists for it
    for document, chat in zip(documents, [FIRST, SECOND], strict=True):
        trace_id = document["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["traceId"]
        code, out, _ = tb("convert", "otel.jsonl", "--from", "otel", "--to", "openai_chat",
                          "--from-option", f"trace_id={trace_id}", cwd=tmp_path)
        assert (code, out) == (0, json.dumps(chat) + "\n")


def test_a_jsonl_file_read_as_otel_is_written_as_jsonl_and_reads_back(tmp_path: Path) -> None:
    jsonl(tmp_path / "in.jsonl", [FIRST, SECOND])
    out = tb("convert", "in.jsonl", "--from", "openai_chat", "--to", "otel", cwd=tmp_path)[1]
    (tmp_path / "otel.jsonl").write_text(out)
    trace_id = json.loads(out.splitlines()[0])["resourceSpans"][0]["scopeSpans"][0]["spans"][0][
        "traceId"]
    assert tb("convert", "otel.jsonl", "--from", "otel", "--to", "otel", "--from-option",
              f"trace_id={trace_id}", "-o", "back.jsonl", cwd=tmp_path) == (0, "", "")
    assert len((tmp_path / "back.jsonl").read_text().splitlines()) == 1
    assert tb("convert", "back.jsonl", "--from", "otel", "--to", "openai_chat",
              cwd=tmp_path) == (0, json.dumps(FIRST) + "\n", "")


def test_the_otel_filter_hint_is_spelled_in_flags() -> None:
    assert command_line_hint(
        "otel: trace: the spans hold 2 conversations (...); choose one with a filter: "
        "span_id=17e5d53446f17f40 (its last call, at [0].resourceSpans[0].scopeSpans[0]."
        "spans[0]); trace_id=3572, 66d1; session_id=chat-1 | span_id=fcd0 (its last call, at "
        "[1]); trace_id=c852 [ambiguous_trace]"
    ) == (
        "otel: trace: the spans hold 2 conversations (...); choose one with a filter: "
        "--from-option span_id=17e5d53446f17f40 (its last call, at [0].resourceSpans[0]."
        "scopeSpans[0].spans[0]); --from-option trace_id=3572, 66d1; --from-option "
        "session_id=chat-1 | --from-option span_id=fcd0 (its last call, at [1]); "
        "--from-option trace_id=c852 [ambiguous_trace]"
    )


# --- 4. what the user wrote is quoted as written ------------------------------------------------


def test_a_refused_to_option_is_quoted_as_typed(tmp_path: Path) -> None:
    jsonl(tmp_path / "ok.jsonl", [PLAIN])
    assert tb("convert", "ok.jsonl", "--from", "openai_chat", "--to", "openai_chat",
              "--to-option", "drop=[1]", cwd=tmp_path) == (
        2, "", "tracebridge: --to-option 'drop=[1]': drop takes a comma list or a JSON list of "
        "names, got '[1]'\n")


def test_a_value_quoted_from_the_trace_is_not_respelled(tmp_path: Path) -> None:
    (tmp_path / "t.json").write_text(json.dumps([{"role": "fold_tools=True", "content": "hi"}]))
    assert tb("convert", "t.json", "--from", "openai_chat", "--to", "langchain",
              cwd=tmp_path) == (
        1, "", "tracebridge: invalid trace: openai_chat: messages[0].role: unknown role "
        "'fold_tools=True'; accepted roles: system, developer, user, assistant, tool, function "
        "[unknown_role]\n")


def test_quoted_values_are_kept_beside_a_hint_that_is_respelled() -> None:
    assert command_line_hint(
        "unknown role 'drop=[\\'a\\'] fold_tools=True', \"it's drop=['b']\"; pass "
        "drop=['is_error'] to leave it out; the tool's fold_tools=True leaves it out"
    ) == (
        "unknown role 'drop=[\\'a\\'] fold_tools=True', \"it's drop=['b']\"; pass "
        "--to-option drop=is_error to leave it out; the tool's --to-option fold_tools=true "
        "leaves it out"
    )



def test_a_drop_that_names_nothing_is_not_respelled() -> None:
    # only a list of quoted names is respelled as --to-option drop=...
    assert command_line_hint("expected names, got drop=[1] here") == (
        "expected names, got drop=[1] here")
    assert command_line_hint("pass drop=['is_error', \"name\"] to leave it out") == (
        "pass --to-option drop=is_error,name to leave it out")

# --- 5. -o /dev/stdout whose reader goes away ---------------------------------------------------


def _piped_into_head(command: str, cwd: Path) -> list[tuple[str, str]]:
    """(exit status, standard error) of ``command`` piped into ``head -1``, writing to
    standard output, then to ``-o /dev/stdout``."""
    told = []
    for output in ("", " -o /dev/stdout"):
        done = subprocess.run(
            f"{SCRIPT} {command}{output} | head -1 >/dev/null; echo ${{PIPESTATUS[0]}}",
            shell=True, executable="/bin/bash", cwd=cwd, capture_output=True, text=True,
            timeout=120,
        )
        told.append((done.stdout, done.stderr))
    return told


def test_o_dev_stdout_whose_reader_went_away_ends_quietly_with_141(tmp_path: Path) -> None:
    jsonl(tmp_path / "in.jsonl",
          [[{"role": "user", "content": f"hi {n}"}, {"role": "assistant", "content": "ok"}]
           for n in range(20000)])
    assert _piped_into_head("convert in.jsonl --from openai_chat --to langchain", tmp_path) == [
        ("141\n", "")] * 2


def test_score_o_dev_stdout_whose_reader_went_away_ends_quietly_with_141(tmp_path: Path) -> None:
    jsonl(tmp_path / "samples.jsonl",
          [{"messages": [{"type": "human", "content": f"hi {n}"}, {"type": "ai", "content": "yo"}]}
           for n in range(20000)])
    assert _piped_into_head("score -m tool_call_f1 samples.jsonl", tmp_path) == [
        ("141\n", "")] * 2
