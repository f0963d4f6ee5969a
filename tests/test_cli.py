"""The tracebridge command: exit codes, messages, JSON and JSONL, never a traceback."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_helpers import run

from tracebridge import MultiTurnSample

GOOD = [
    {"type": "human", "content": "weather in Paris?"},
    {"type": "ai", "content": "", "tool_calls": [{"name": "get_weather", "id": "c1",
                                                  "args": {"city": "Paris"}}]},
    {"type": "tool", "content": "18 C", "tool_call_id": "c1", "name": "get_weather"},
    {"type": "ai", "content": "18 C in Paris."},
]
ORPHAN = [{"type": "human", "content": "hi"}, {"type": "tool", "content": "x", "tool_call_id": "z"}]


@pytest.fixture
def good_file(tmp_path: Path) -> Path:
    path = tmp_path / "good.json"
    path.write_text(json.dumps(GOOD), encoding="utf-8")
    return path


def test_show_renders_the_conversation(good_file: Path) -> None:
    assert run("show", str(good_file)) == (
        0,
        "[0] human: weather in Paris?\n"
        "[1] ai:\n"
        '    -> get_weather [id=c1] {"city": "Paris"}\n'
        "[2] tool get_weather [id=c1]: 18 C\n"
        "[3] ai: 18 C in Paris.\n",
        f"tracebridge: reading {good_file} as tracebridge (told from its shape; --from to "
        "choose)\n",
    )


def test_validate_says_ok_with_the_count(good_file: Path) -> None:
    assert run("validate", str(good_file), "--from", "tracebridge") == (
        0, "ok: 4 messages (tracebridge)\n", ""
    )


def test_validate_reports_code_path_and_line_for_jsonl() -> None:
    stdin = json.dumps(GOOD) + "\n\n" + json.dumps(ORPHAN) + "\n" + json.dumps(GOOD) + "\n"
    code, out, err = run("validate", "-", "--from", "tracebridge", stdin=stdin)
    assert (code, err) == (1, "")
    lines = out.splitlines()
    assert lines[0] == "line 1: ok: 4 messages (tracebridge)"
    assert lines[1].startswith("line 3: invalid: orphan_tool_result at messages[1].tool_call_id: ")
    assert len(lines) == 2  # without --keep-going the first invalid record ends the run


def test_validate_allow_pending_accepts_a_trace_cut_mid_tool() -> None:
    cut = json.dumps(GOOD[:2])
    assert run("validate", "-", stdin=cut)[0] == 1
    assert run("validate", "-", "--allow-pending", stdin=cut)[0] == 0


def test_convert_writes_json_to_a_file(good_file: Path, tmp_path: Path) -> None:
    out_path = tmp_path / "out.json"
    code, out, err = run("convert", str(good_file), "--to", "tracebridge", "-o", str(out_path))
    assert (code, out) == (0, "")
    assert err == f"tracebridge: reading {good_file} as tracebridge (told from its shape; " \
        "--from to choose)\n"
    converted = json.loads(out_path.read_text(encoding="utf-8"))
    assert MultiTurnSample(messages=converted) == MultiTurnSample(messages=GOOD)


def test_convert_keeps_jsonl_as_jsonl() -> None:
    stdin = json.dumps(GOOD) + "\n" + json.dumps(GOOD[:1]) + "\n"
    code, out, err = run("convert", "-", "--to", "tracebridge", stdin=stdin)
    assert (code, err) == (
        0, "tracebridge: reading - as tracebridge (told from its first 2 records; --from to "
        "choose)\n"
    )
    assert [len(json.loads(line)) for line in out.splitlines()] == [4, 1]


def test_convert_of_an_invalid_trace_exits_1_with_the_code() -> None:
    code, out, err = run("convert", "-", "--from", "tracebridge", "--to", "tracebridge",
                         stdin=json.dumps(ORPHAN))
    assert (code, out) == (1, "")
    assert err.startswith("tracebridge: invalid trace: tracebridge: messages[1].tool_call_id: ")
    assert err.rstrip().endswith("[orphan_tool_result]")


@pytest.mark.parametrize(
    ("stdin", "message"),
    [
        ("", "tracebridge: - is empty: expected a JSON trace or JSONL traces\n"),
        ('{"a":', "tracebridge: -: not valid JSON: Expecting value: line 1 column 6 (char 5)\n"),
    ],
)
def test_unreadable_input_exits_2_with_one_line(stdin: str, message: str) -> None:
    assert run("show", "-", stdin=stdin) == (2, "", message)


def test_a_line_that_is_not_json_stops_the_run_after_what_came_before() -> None:
    stdin = '[{"type": "human", "content": "a"}]\n{"a":\n[{"type": "human", "content": "b"}]\n'
    assert run("show", "-", "--from", "tracebridge", stdin=stdin) == (
        2,
        "# line 1\n[0] human: a\n",  # standard output streams: what was shown stays shown
        "tracebridge: -: line 2: not valid JSON: Expecting value: line 1 column 6 (char 5)\n",
    )


def test_a_missing_file_exits_2(tmp_path: Path) -> None:
    code, out, err = run("show", str(tmp_path / "nope.json"))
    assert (code, out) == (2, "")
    assert err.startswith(f"tracebridge: cannot read {tmp_path / 'nope.json'}: ")


def test_an_undetectable_trace_exits_2() -> None:
    code, _, err = run("show", "-", stdin='{"unrelated": true}')
    assert code == 2
    assert "cannot tell the format of this dict" in err


def test_formats_lists_every_format_with_its_summary() -> None:
    code, out, _ = run("formats")
    from tracebridge.registry import FORMATS

    assert code == 0
    # the event streams are listed too: they can be read (--from), not written
    assert [line.split()[0] for line in out.splitlines()] == [*FORMATS, "llama_index_events"]
    # told from their shape like any format, so --from is not needed to read them
    assert out.splitlines()[-1] == (
        "llama_index_events  LlamaIndex AgentWorkflow event streams (read, not written)"
    )


def test_schema_prints_the_sample_json_schema() -> None:
    code, out, _ = run("schema")
    assert code == 0
    assert json.loads(out) == MultiTurnSample.model_json_schema()


def test_the_installed_command_prints_no_traceback(tmp_path: Path) -> None:
    exe = shutil.which("tracebridge", path=str(Path(sys.executable).parent))
    assert exe is not None, "the tracebridge console script is not installed"
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(ORPHAN), encoding="utf-8")
    done = subprocess.run([exe, "validate", str(bad)], capture_output=True, text=True)
    assert done.returncode == 1
    assert "orphan_tool_result" in done.stdout
    assert "Traceback" not in done.stdout + done.stderr


def test_python_dash_m_runs_the_same_command(good_file: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "tracebridge", "validate", str(good_file), "--from", "tracebridge"],
        capture_output=True, text=True,
    )
    assert (done.returncode, done.stdout) == (0, "ok: 4 messages (tracebridge)\n")


def test_at_reads_the_trace_inside_a_larger_document() -> None:
    document = json.dumps({"description": "demo", "case": {"trace": GOOD}})
    assert run("validate", "-", "--at", "case.trace", stdin=document) == (
        0, "ok: 4 messages (tracebridge)\n",
        "tracebridge: reading - as tracebridge (told from its shape; --from to choose)\n"
    )
    assert run("validate", "-", "--at", "case.nope", stdin=document) == (
        2, "", "tracebridge: --at case.nope: there is no 'nope' here\n"
    )


def test_score_is_wired_to_the_metric_layer(tmp_path: Path) -> None:
    sample = MultiTurnSample(
        messages=GOOD, reference_tool_calls=[{"name": "get_weather", "args": {"city": "Paris"}}]
    )
    dataset = tmp_path / "samples.jsonl"
    dataset.write_text(sample.model_dump_json() + "\n", encoding="utf-8")
    out_path = tmp_path / "results.jsonl"
    code, _, err = run("score", str(dataset), "--metric", "tool_call_f1", "-o", str(out_path))
    assert (code, err) == (0, "")
    (result,) = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert (result["line"], result["name"], result["value"]) == (1, "tool_call_f1", 1.0)


ROOT = Path(__file__).resolve().parents[1]
TOOL_ERROR = ROOT / "golden_traces" / "langchain" / "tool_error.json"


def test_to_option_accepts_a_named_loss() -> None:
    code, out, err = run("convert", str(TOOL_ERROR), "--at", "trace", "--to", "openai_chat",
                         "--from", "langchain")
    assert (code, out) == (1, "")
    # the hint is spelled in flags, and pasting it is accepted
    assert err.rstrip().endswith(
        "pass --to-option drop=is_error to leave it out [not_representable]"
    )
    for spelled in ("drop=is_error", 'drop=["is_error"]', "drop=['is_error']"):
        code, out, err = run("convert", str(TOOL_ERROR), "--at", "trace", "--to", "openai_chat",
                             "--from", "langchain", "--to-option", spelled)
        assert (code, err) == (0, "")
    roles = {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}
    trace = json.loads(TOOL_ERROR.read_text(encoding="utf-8"))["trace"]
    assert [m["role"] for m in json.loads(out)] == [roles[m["type"]] for m in trace]


def test_an_unknown_option_is_a_usage_error() -> None:
    assert run("convert", str(TOOL_ERROR), "--at", "trace", "--to", "openai_chat",
               "--to-option", "dorp=1") == (
        2, "", "tracebridge: --to-option 'dorp=1': expected KEY=VALUE with KEY one of: drop\n"
    )


def test_from_option_reaches_the_source_adapter() -> None:
    cut = json.dumps(GOOD[:2])
    assert run("show", "-", "--from-option", "allow_pending=true", stdin=cut)[0] == 0


def test_langchain_output_is_json_that_reads_back() -> None:
    source = ROOT / "golden_traces" / "openai_chat" / "parallel_calls.json"
    code, out, _ = run("convert", str(source), "--at", "trace", "--to", "langchain")
    assert code == 0
    dumped = json.loads(out)
    assert {item["type"] for item in dumped} <= {"system", "human", "ai", "tool"}
    assert run("validate", "-", "--from", "langchain", stdin=out) == (
        0, f"ok: {len(dumped)} messages (langchain)\n", ""
    )


def test_objects_whose_json_dump_cannot_hold_a_lone_surrogate_are_refused_in_one_line() -> None:
    # LlamaIndex's ChatMessage dump encodes every string as UTF-8: a lone surrogate (kept
    # from a \udcff escape) made `convert` exit 70 as an internal error
    trace = [{"role": "user", "additional_kwargs": {"k\udcff": {"x": 1}},
              "blocks": [{"block_type": "text", "text": "hi"}]}]
    code, out, err = run("convert", "-", "--from", "llama_index", "--to", "llama_index",
                         stdin=json.dumps(trace))
    assert (code, out) == (1, "")
    assert err == (
        "tracebridge: cannot write llama_index: llama_index: "
        "messages[0].metadata.llama_index.additional_kwargs: the key 'k\\udcff' holds a lone "
        "surrogate, which LlamaIndex's JSON dump writes as 'k\\ufffd\\ufffd\\ufffd' (or cannot "
        "write at all); the ChatMessage would not read back [not_representable]\n"
    )
    code, out, err = run("convert", "-", "--from", "llama_index", "--to", "tracebridge",
                         stdin=json.dumps(trace))
    assert (code, err) == (0, "")
    assert '"k\udcff": {' in out  # the stream writes it as its escape
