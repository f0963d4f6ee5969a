"""Every difference the corpus shows between ours and langchain-core's converters, named.

An entry maps one observed difference (``harness.differences``) of a case to why it is
there. A lowercase id (``invalid-evidence``) is an intended difference: a row of
``docs/differential.md`` says what and why. A ``gap:`` id is a loss that ought not to be:
ours should carry what theirs carries and does not yet (``GAPS`` says what is missing and
who is on it). The test fails on a difference listed nowhere and on a listed difference that
no longer happens, so this file is always the exact state.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from .harness import Key

__all__ = ["EXPECTED", "GAPS", "Gap"]


@dataclass(frozen=True)
class Gap:
    """A loss ours should not have."""

    kind: Literal["being fixed", "open"]
    """``being fixed``: part of the adapter work under way; ``open``: nobody is on it."""
    what: str


GAPS: dict[str, Gap] = {
    "gap:developer-role": Gap(
        "being fixed",
        "the developer role (SystemMessage.role) is not read from or written to "
        "additional_kwargs.__openai_role__ / a ChatMessage role, nor carried by openai_chat",
    ),
    "gap:refusal": Gap(
        "being fixed",
        "a refusal (additional_kwargs.refusal, a v1 refusal block) is not read as a RefusalPart; "
        "the langchain writer raises KeyError on a RefusalPart (a crash, not a TraceError)",
    ),
    "gap:image-detail": Gap("being fixed", "image_url.detail is not read into ImagePart.detail"),
    "gap:audio-format": Gap(
        "being fixed",
        "an input_audio block read from LangChain keeps its format as metadata, not as a mime "
        "type, so openai_chat cannot write it",
    ),
    "gap:audio-reply": Gap(
        "being fixed", "openai_chat audio replies are not written to additional_kwargs.audio"
    ),
    "gap:citations": Gap(
        "being fixed", "openai_chat annotations are not written as LangChain citations"
    ),
    "gap:flat-model-dump": Gap("being fixed", "the flat model_dump() form is not read"),
    "gap:anthropic-shaped": Gap(
        "being fixed",
        "tool_use blocks with empty tool_calls and tool_result blocks in a human message are "
        "refused as conflicting_fields",
    ),
    "gap:raw-bytes": Gap(
        "being fixed", "raw bytes in Bedrock Converse / Vertex blocks are refused as unserializable"
    ),
    "gap:responses-function-call": Gap(
        "open",
        "a Responses function_call block in AI content with empty tool_calls is not read as a "
        "call (theirs reads it), so its result is refused as an orphan",
    ),
}


EXPECTED: dict[str, dict[Key, str]] = {
    "anth_result_then_text": {
        ("read", "refused", "conflicting_fields", 1): "gap:anthropic-shaped",
    },
    "anth_thinking": {
        ("to_openai", "drop", "reasoning"): "non-chat-blocks",
        ("to_openai", "missing", (1, "reasoning", "Because.")): "non-chat-blocks",
        ("to_openai", "missing", (1, "reasoning_extra", "signature", '"c2ln"')): "non-chat-blocks",
    },
    "anth_tool_result_blocks": {
        ("read", "refused", "conflicting_fields", 1): "gap:anthropic-shaped",
    },
    "anth_tool_result_error": {
        ("read", "refused", "conflicting_fields", 1): "gap:anthropic-shaped",
    },
    "anth_tool_result_image": {
        ("read", "refused", "conflicting_fields", 1): "gap:anthropic-shaped",
    },
    "anth_tool_round": {
        ("read", "refused", "conflicting_fields", 1): "gap:anthropic-shaped",
    },
    "anth_two_results": {
        ("read", "refused", "conflicting_fields", 1): "gap:anthropic-shaped",
    },
    "bedrock_document_bytes": {
        ("read", "refused", "unserializable_value", 0): "gap:raw-bytes",
    },
    "bedrock_image_bytes": {
        ("read", "refused", "unserializable_value", 0): "gap:raw-bytes",
    },
    "bedrock_image_bytes_typed": {
        ("read", "refused", "unserializable_value", 0): "gap:raw-bytes",
    },
    "flat_anthropic": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_chunk": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_developer": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_image_detail": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_invalid_call": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_metadata": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_minimal": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_plain": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_refusal": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_tool_error_artifact": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "flat_tool_round": {
        ("read", "refused", "malformed_event", 0): "gap:flat-model-dump",
    },
    "lc_audio_input_audio": {
        ("to_openai", "refused", "not_representable", 0): "gap:audio-format",
    },
    "lc_chat_message_developer": {
        ("to_openai", "missing", (0, "role", "developer")): "gap:developer-role",
    },
    "lc_chat_message_unknown_role": {
        ("read", "refused", "unknown_role", 1): "unknown-role",
    },
    "lc_developer_and_system": {
        ("to_openai", "missing", (0, "role", "developer")): "gap:developer-role",
    },
    "lc_developer_role": {
        ("to_openai", "missing", (0, "role", "developer")): "gap:developer-role",
    },
    "lc_duplicate_call_ids": {
        ("read", "refused", "duplicate_tool_call_id", 3): "invalid-evidence",
    },
    "lc_empty_list": {
        ("read", "refused", "empty_conversation", None): "empty-trace",
    },
    "lc_file_openai_no_filename": {
        (
            "to_openai",
            "missing",
            (
                0,
                "filename",
                "data:application/pdf;base64,JVBERi0xLjQKJcOkw7zDtsOf",
                "LC_AUTOGENERATED",
            ),
        ): "invented-filename",
    },
    "lc_file_v0_id": {
        (
            "to_openai",
            "missing",
            (0, "filename", "file_id:file-abc123", "LC_AUTOGENERATED"),
        ): "invented-filename",
    },
    "lc_file_v1_file_id": {
        (
            "to_openai",
            "missing",
            (0, "filename", "file_id:file-abc123", "LC_AUTOGENERATED"),
        ): "invented-filename",
    },
    "lc_file_v1_url": {
        ("to_openai", "refused", "not_representable", 0): "both-refuse",
    },
    "lc_guard_content": {
        ("to_openai", "missing", (0, "text", "Protected content")): "json-as-text",
    },
    "lc_image_url_detail": {
        (
            "to_openai",
            "missing",
            (0, "image_detail", "https://img.example.org/cat.png", "high"),
        ): "gap:image-detail",
    },
    "lc_json_block": {
        ("to_openai", "missing", (0, "text", '{"key": "value"}')): "json-as-text",
    },
    "lc_orphan_tool_result": {
        ("read", "refused", "orphan_tool_result", 1): "invalid-evidence",
    },
    "lc_reasoning_v1": {
        ("to_openai", "drop", "reasoning"): "non-chat-blocks",
        ("to_openai", "missing", (1, "reasoning", "Add them.")): "non-chat-blocks",
    },
    "lc_refusal_kwarg": {
        ("to_openai", "missing", (1, "refusal", "I can't help with that.")): "gap:refusal",
    },
    "lc_remove_message": {
        ("read", "refused", "unknown_role", 1): "unknown-role",
    },
    "lc_responses_function_call": {
        ("read", "refused", "orphan_tool_result", 2): "gap:responses-function-call",
    },
    "lc_thinking_block": {
        ("to_openai", "drop", "reasoning"): "non-chat-blocks",
        ("to_openai", "missing", (1, "reasoning", "The user wants a number.")): "non-chat-blocks",
        ("to_openai", "missing", (1, "reasoning_extra", "signature", '"sig=="')): "non-chat-blocks",
    },
    "lc_tool_error_status": {
        ("to_openai", "drop", "is_error"): "no-error-flag",
    },
    "lc_unanswered_call": {
        ("read", "refused", "unanswered_tool_call", 1): "invalid-evidence",
    },
    "oa_annotations": {
        (
            "to_langchain",
            "missing",
            (1, "citation", "https://ex.org/1", "One", 0, 3, None),
        ): "gap:citations",
        (
            "to_langchain",
            "missing",
            (1, "citation", "https://ex.org/2", "Two", 4, 7, None),
        ): "gap:citations",
    },
    "oa_audio_reply": {
        ("to_langchain", "missing", (1, "audio_reply", "id", '"audio_abc123"')): "gap:audio-reply",
    },
    "oa_audio_reply_full": {
        (
            "to_langchain",
            "missing",
            (1, "audio_reply", "data", '"UklGRiQAAABXQVZFZm10IA=="'),
        ): "gap:audio-reply",
        (
            "to_langchain",
            "missing",
            (1, "audio_reply", "expires_at", "1729000000"),
        ): "gap:audio-reply",
        ("to_langchain", "missing", (1, "audio_reply", "id", '"audio_x"')): "gap:audio-reply",
        ("to_langchain", "missing", (1, "audio_reply", "transcript", '"Hi!"')): "gap:audio-reply",
    },
    "oa_call_without_type": {
        ("read", "refused", "malformed_event", 1): "required-field",
    },
    "oa_developer": {
        ("to_langchain", "missing", (0, "role", "developer")): "gap:developer-role",
        ("to_openai", "missing", (0, "role", "developer")): "gap:developer-role",
    },
    "oa_developer_parts": {
        ("to_langchain", "missing", (0, "role", "developer")): "gap:developer-role",
        ("to_openai", "missing", (0, "role", "developer")): "gap:developer-role",
    },
    "oa_image_data_url": {
        (
            "to_langchain",
            "missing",
            (0, "image_detail", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", "auto"),
        ): "gap:image-detail",
        (
            "to_openai",
            "missing",
            (0, "image_detail", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUg==", "auto"),
        ): "gap:image-detail",
    },
    "oa_image_detail": {
        (
            "to_langchain",
            "missing",
            (0, "image_detail", "https://img.example.org/dog.jpg", "low"),
        ): "gap:image-detail",
        (
            "to_openai",
            "missing",
            (0, "image_detail", "https://img.example.org/dog.jpg", "low"),
        ): "gap:image-detail",
    },
    "oa_message_id": {
        ("to_langchain", "missing", (0, "id", "msg_1")): "foreign-keys",
        ("to_langchain", "missing", (1, "id", "msg_2")): "foreign-keys",
    },
    "oa_orphan_tool": {
        ("read", "refused", "orphan_tool_result", 1): "invalid-evidence",
    },
    "oa_refusal_empty_content": {
        ("to_langchain", "missing", (1, "refusal", "I can't help with that.")): "gap:refusal",
        ("to_openai", "missing", (1, "refusal", "I can't help with that.")): "gap:refusal",
    },
    "oa_tool_status_key": {
        ("to_langchain", "missing", (2, "status", "error")): "foreign-keys",
    },
    "oa_unanswered_call": {
        ("read", "refused", "unanswered_tool_call", 1): "invalid-evidence",
    },
    "oa_unknown_message_key": {
        (
            "to_langchain",
            "missing",
            (0, "extra", "additional_kwargs", "x_trace_id", '"abc"'),
        ): "foreign-keys",
    },
    "oa_unknown_part_key": {
        (
            "to_langchain",
            "missing",
            (0, "extra", "text", "cache_control", '{"type": "ephemeral"}'),
        ): "foreign-keys",
    },
    "short_tuple_developer": {
        ("to_openai", "missing", (0, "role", "developer")): "gap:developer-role",
    },
    "vertex_media_audio": {
        ("read", "refused", "unserializable_value", 0): "gap:raw-bytes",
    },
    "vertex_media_image": {
        ("read", "refused", "unserializable_value", 0): "gap:raw-bytes",
    },
}
"""Case name -> each difference it shows -> why; a case not listed carries all theirs does."""
