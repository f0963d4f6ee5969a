"""Chat Completions message dicts: every role, call and part shape the API defines."""

from __future__ import annotations

from typing import Any

from .case import PDF_B64, PNG_B64, WAV_B64, case

_URL = "https://img.example.org/dog.jpg"


def _fn(call_id: str, name: str, arguments: str) -> dict[str, Any]:
    return {"id": call_id, "type": "function", "function": {"name": name, "arguments": arguments}}


def _called(arguments: str, *, answered: bool = True) -> list[dict[str, Any]]:
    """A user turn, one call with ``arguments``, its result and a reply (or no result)."""
    trace: list[dict[str, Any]] = [
        {"role": "user", "content": "Do it"},
        {"role": "assistant", "content": None, "tool_calls": [_fn("call_1", "do", arguments)]},
    ]
    if answered:
        trace += [
            {"role": "tool", "tool_call_id": "call_1", "content": "done"},
            {"role": "assistant", "content": "Done."},
        ]
    else:
        trace.append({"role": "user", "content": "Never mind."})
    return trace


@case("openai", "system, user and assistant strings")
def oa_plain() -> list[Any]:
    return [
        {"role": "system", "content": "Be brief."},
        {"role": "user", "content": "Hi"},
        {"role": "assistant", "content": "Hello."},
    ]


@case("openai", "the developer role")
def oa_developer() -> list[Any]:
    return [{"role": "developer", "content": "Use tools first."}, {"role": "user", "content": "go"}]


@case("openai", "a developer message of text parts")
def oa_developer_parts() -> list[Any]:
    return [
        {"role": "developer", "content": [{"type": "text", "text": "Rule 1"}]},
        {"role": "user", "content": "ok"},
    ]


@case("openai", "names on system, user and assistant")
def oa_names() -> list[Any]:
    return [
        {"role": "system", "content": "Rules", "name": "policy"},
        {"role": "user", "content": "hi", "name": "ana"},
        {"role": "assistant", "content": "hello", "name": "helper"},
    ]


@case("openai", "one call, its result, a reply")
def oa_tool_round() -> list[Any]:
    return _called('{"city": "Oslo"}')


@case("openai", "text beside two parallel calls")
def oa_parallel_calls() -> list[Any]:
    return [
        {"role": "user", "content": "Oslo and Rome"},
        {
            "role": "assistant",
            "content": "Checking both.",
            "tool_calls": [
                _fn("call_a", "weather", '{"city": "Oslo"}'),
                _fn("call_b", "weather", '{"city": "Rome"}'),
            ],
        },
        {"role": "tool", "tool_call_id": "call_a", "content": "-2C"},
        {"role": "tool", "tool_call_id": "call_b", "content": "16C"},
        {"role": "assistant", "content": "Rome is warmer."},
    ]


@case("openai", "arguments '' for a tool without parameters")
def oa_arguments_empty_string() -> list[Any]:
    return _called("")


@case("openai", "arguments '{}'")
def oa_arguments_empty_object() -> list[Any]:
    return _called("{}")


@case("openai", "arguments spelled with spaces and escapes")
def oa_arguments_spelling() -> list[Any]:
    return _called('{ "city" : "S\\u00e3o Paulo" }')


@case("openai", "nested arguments")
def oa_arguments_nested() -> list[Any]:
    return _called('{"filters": [{"k": "size", "v": 3.5}], "strict": true, "limit": null}')


@case("openai", "malformed arguments, never answered")
def oa_arguments_malformed() -> list[Any]:
    return _called('{"city": "Os', answered=False)


@case("openai", "arguments that are a JSON list, never answered")
def oa_arguments_list() -> list[Any]:
    return _called("[1, 2]", answered=False)


@case("openai", "a call without the 'type' key")
def oa_call_without_type() -> list[Any]:
    trace = _called('{"a": 1}')
    del trace[1]["tool_calls"][0]["type"]
    return trace


@case("openai", "a custom (free-text) tool call")
def oa_custom_call() -> list[Any]:
    call = {"id": "call_c", "type": "custom", "custom": {"name": "sql", "input": "select 1"}}
    return [
        {"role": "user", "content": "query"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": "call_c", "content": "1"},
    ]


@case("openai", "legacy function_call and a function message")
def oa_function_legacy() -> list[Any]:
    return [
        {"role": "user", "content": "Time?"},
        {
            "role": "assistant",
            "content": None,
            "function_call": {"name": "get_time", "arguments": '{"tz": "UTC"}'},
        },
        {"role": "function", "name": "get_time", "content": "12:00"},
        {"role": "assistant", "content": "Noon."},
    ]


@case("openai", "a refusal with empty content")
def oa_refusal_empty_content() -> list[Any]:
    return [
        {"role": "user", "content": "Pick a lock"},
        {"role": "assistant", "content": "", "refusal": "I can't help with that."},
    ]


@case("openai", "a refusal with null content")
def oa_refusal_null_content() -> list[Any]:
    return [
        {"role": "user", "content": "Pick a lock"},
        {"role": "assistant", "content": None, "refusal": "I can't help with that."},
    ]


@case("openai", "a refusal content part")
def oa_refusal_part() -> list[Any]:
    return [
        {"role": "user", "content": "Pick a lock"},
        {"role": "assistant", "content": [{"type": "refusal", "refusal": "No."}]},
    ]


@case("openai", "user text parts")
def oa_text_parts() -> list[Any]:
    parts = [{"type": "text", "text": "one"}, {"type": "text", "text": "two"}]
    return [{"role": "user", "content": parts}, {"role": "assistant", "content": "three"}]


@case("openai", "assistant text parts")
def oa_assistant_text_parts() -> list[Any]:
    return [
        {"role": "user", "content": "count"},
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "1"}, {"type": "text", "text": "2"}],
        },
    ]


@case("openai", "system text parts")
def oa_system_parts() -> list[Any]:
    return [
        {"role": "system", "content": [{"type": "text", "text": "Rules."}]},
        {"role": "user", "content": "ok"},
    ]


@case("openai", "an image by URL with detail 'low'")
def oa_image_detail() -> list[Any]:
    image = {"type": "image_url", "image_url": {"url": _URL, "detail": "low"}}
    return [{"role": "user", "content": [{"type": "text", "text": "what?"}, image]}]


@case("openai", "an image as a data: URL with detail 'auto'")
def oa_image_data_url() -> list[Any]:
    url = f"data:image/png;base64,{PNG_B64}"
    return [
        {
            "role": "user",
            "content": [{"type": "image_url", "image_url": {"url": url, "detail": "auto"}}],
        }
    ]


@case("openai", "an image by URL, no detail")
def oa_image_plain() -> list[Any]:
    return [{"role": "user", "content": [{"type": "image_url", "image_url": {"url": _URL}}]}]


@case("openai", "input_audio, wav")
def oa_audio_wav() -> list[Any]:
    audio = {"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "wav"}}
    return [{"role": "user", "content": [audio]}, {"role": "assistant", "content": "I heard it."}]


@case("openai", "input_audio, mp3")
def oa_audio_mp3() -> list[Any]:
    audio = {"type": "input_audio", "input_audio": {"data": WAV_B64, "format": "mp3"}}
    return [{"role": "user", "content": [audio]}]


@case("openai", "a file part with data and a filename")
def oa_file_data() -> list[Any]:
    file = {"filename": "a.pdf", "file_data": f"data:application/pdf;base64,{PDF_B64}"}
    return [{"role": "user", "content": [{"type": "file", "file": file}]}]


@case("openai", "a file part by file id")
def oa_file_id() -> list[Any]:
    return [{"role": "user", "content": [{"type": "file", "file": {"file_id": "file-xyz"}}]}]


@case("openai", "an assistant audio reply by id")
def oa_audio_reply() -> list[Any]:
    return [
        {"role": "user", "content": "Say hi"},
        {"role": "assistant", "content": None, "audio": {"id": "audio_abc123"}},
        {"role": "user", "content": "Again"},
    ]


@case("openai", "an audio reply as a response holds it (data, transcript, expiry)")
def oa_audio_reply_full() -> list[Any]:
    audio = {"id": "audio_x", "data": WAV_B64, "transcript": "Hi!", "expires_at": 1729000000}
    return [
        {"role": "user", "content": "Say hi"},
        {"role": "assistant", "content": None, "audio": audio},
    ]


@case("openai", "url_citation annotations")
def oa_annotations() -> list[Any]:
    cites = [
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://ex.org/1",
                "title": "One",
                "start_index": 0,
                "end_index": 3,
            },
        },
        {
            "type": "url_citation",
            "url_citation": {
                "url": "https://ex.org/2",
                "title": "Two",
                "start_index": 4,
                "end_index": 7,
            },
        },
    ]
    return [
        {"role": "user", "content": "news?"},
        {"role": "assistant", "content": "One Two", "annotations": cites},
    ]


@case("openai", "a tool result of text parts")
def oa_tool_text_parts() -> list[Any]:
    trace = _called('{"x": 1}')
    trace[2]["content"] = [{"type": "text", "text": "line 1"}, {"type": "text", "text": "line 2"}]
    return trace


@case("openai", "a key the API does not define, on a user message")
def oa_unknown_message_key() -> list[Any]:
    return [{"role": "user", "content": "hi", "x_trace_id": "abc"}]


@case("openai", "a key the API does not define, on a text part")
def oa_unknown_part_key() -> list[Any]:
    part = {"type": "text", "text": "Long context", "cache_control": {"type": "ephemeral"}}
    return [{"role": "user", "content": [part]}]


@case("openai", "a message id key (not in the API)")
def oa_message_id() -> list[Any]:
    return [
        {"role": "user", "content": "hi", "id": "msg_1"},
        {"role": "assistant", "content": "yo", "id": "msg_2"},
    ]


@case("openai", "a LangChain-style 'status' key on a tool message")
def oa_tool_status_key() -> list[Any]:
    trace = _called('{"x": 1}')
    trace[2]["status"] = "error"
    return trace


@case("openai", "null-valued optional keys")
def oa_null_keys() -> list[Any]:
    return [
        {"role": "user", "content": "hi", "name": None},
        {
            "role": "assistant",
            "content": "hello",
            "tool_calls": None,
            "function_call": None,
            "refusal": None,
        },
    ]


@case("openai", "a tool result that answers no call")
def oa_orphan_tool() -> list[Any]:
    return [
        {"role": "user", "content": "hi"},
        {"role": "tool", "tool_call_id": "call_z", "content": "?"},
    ]


@case("openai", "a parsed call left unanswered")
def oa_unanswered_call() -> list[Any]:
    return _called('{"a": 1}', answered=False)


@case("openai", "a long conversation with two tool rounds")
def oa_multi_turn() -> list[Any]:
    return [
        {"role": "system", "content": "Travel agent."},
        {"role": "user", "content": "Flight to Paris"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_fn("call_f", "flight", '{"to": "CDG"}')],
        },
        {"role": "tool", "tool_call_id": "call_f", "content": "AF12"},
        {"role": "assistant", "content": "Booked AF12. Hotel?"},
        {"role": "user", "content": "Yes"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [_fn("call_h", "hotel", '{"city": "Paris"}')],
        },
        {"role": "tool", "tool_call_id": "call_h", "content": "Hotel Lutetia"},
        {"role": "assistant", "content": "Hotel Lutetia booked."},
    ]


@case("openai", "a name on a tool message")
def oa_tool_name() -> list[Any]:
    trace = _called('{"x": 1}')
    trace[2]["name"] = "do"
    return trace
