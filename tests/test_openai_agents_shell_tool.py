"""An Agents SDK run with a ShellTool reads as its ``to_input_list()`` with its agents.

The SDK replays a ``shell_call_output`` without its status, ``shell_output`` and
``provider_data`` (and without each output chunk's ``created_by``). The reader stripped only
``created_by`` and a null status, so the run's items no longer equalled ``to_input_list()``:
it took the "history was rewritten" way and read every item before the mismatch from the
replay list, without its agent and its RunItem wrapper, and without a word. Reading the same
run's ``new_items`` kept all that and wrote back a list other than ``to_input_list()``. Now
the input form is the SDK's, and what it strips is kept with the wrapper.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from agents import Agent, Runner, ShellTool
from openai.types.responses import ResponseFunctionShellToolCall
from test_openai_agents import GENERATOR

from tracebridge.adapters import openai_agents


def _shell_run(stdout: str = "file_a\nfile_b") -> Any:
    call = ResponseFunctionShellToolCall(
        id="sh_1", type="shell_call", call_id="call_sh1", status="completed",
        action={"commands": ["ls"], "timeout_ms": 1000, "max_output_length": 1000},
        environment={"type": "local"})
    model = GENERATOR.ScriptModel([
        [GENERATOR.reasoning("rs_1", "List the files."), call],
        [GENERATOR.message("msg_1", "There are two files.")],
    ])
    agent = Agent(name="Ops Bot", instructions="Use the shell.", model=model,
                  tools=[ShellTool(executor=lambda request: stdout)])
    return asyncio.run(Runner.run(agent, "What files are here?"))


def test_a_shell_run_reads_with_its_agents_either_way() -> None:
    result = _shell_run()
    from_result = openai_agents.to_messages(result)
    assert [(m.type, m.name) for m in from_result] == [
        ("human", None), ("ai", "Ops Bot"), ("tool", None), ("ai", "Ops Bot")]
    assert from_result == openai_agents.to_messages(result.new_items, input=result.input)


def test_the_shell_output_is_written_back_as_the_sdk_replays_it() -> None:
    result = _shell_run()
    messages = openai_agents.to_messages(result)
    assert openai_agents.from_messages(messages, drop_names=True) == result.to_input_list()


def test_what_the_sdk_does_not_replay_is_kept_with_the_wrapper() -> None:
    result = _shell_run()
    raw = json.loads(json.dumps(result.new_items[2].raw_item))
    [record] = openai_agents.to_messages(result)[2].metadata["openai_agents"]["run_items"]
    assert raw["type"] == "shell_call_output"
    assert record["stripped"] == {key: raw[key] for key in
                                  ("status", "shell_output", "provider_data") if key in raw}
    assert "status" in record["stripped"]


def test_a_stored_shell_output_with_chunk_authors_replays_without_them() -> None:
    result = _shell_run()
    stored = json.loads(result.to_state().to_string())
    [output] = [item for item in stored["generated_items"]
                if item["type"] == "tool_call_output_item"]
    output["raw_item"]["created_by"] = "svc"
    output["raw_item"]["output"][0]["created_by"] = "svc"
    messages = openai_agents.to_messages(stored["generated_items"], input=stored["original_input"])
    [record] = messages[2].metadata["openai_agents"]["run_items"]
    assert record["stripped"]["output"][0]["created_by"] == "svc"
    assert record["stripped"]["created_by"] == "svc"
    assert openai_agents.from_messages(messages, drop_names=True) == result.to_input_list()
