"""What OpenInference's LlamaIndex instrumentation records in its own way.

``openinference-instrumentation-llama-index`` makes a span of every method LlamaIndex's
dispatcher wraps, named ``<class>.<method>``; on an LLM every such span is of kind ``LLM``
(its ``_init_span_kind``), whether or not the method calls the model. Messages are recorded
only from the chat events (``LLMChatStartEvent``, ``LLMChatEndEvent``) that the model-calling
methods (``chat``, ``achat``, ``stream_chat``, ...) send. ``_prepare_chat_with_tools``, abstract
in ``FunctionCallingLLM`` and so given a span in every implementation, only builds the request
that the next ``chat`` / ``achat`` sends: its span holds ``input.value`` and ``output.value``,
never messages. Such a span is no model call (with content capture off it is the ``chat``
span that has no messages, and is refused).

A tool span (``FunctionTool.acall``) records the method's bound arguments as ``input.value``,
``{"kwargs": {...}}``: the call's arguments are those kwargs.
"""

from __future__ import annotations

from typing import Any

from ._flat import LEGACY_INPUT, LEGACY_OUTPUT, OPENINFERENCE_INPUT, OPENINFERENCE_OUTPUT
from ._genai import INPUT, OUTPUT, SYSTEM
from ._spans import Span

SCOPE = "openinference.instrumentation.llama_index"

NO_CALL_METHODS = frozenset({"_prepare_chat_with_tools"})
"""LLM methods LlamaIndex's dispatcher wraps in a span that make no model call."""


def prepares_only(span: Span) -> bool:
    """Whether ``span`` is a LlamaIndex ``<class>._prepare_chat_with_tools`` span that
    recorded no messages: it prepares a model call, it makes none."""
    owner, dot, method = span.name.rpartition(".")
    return (
        span.scope == SCOPE
        and bool(owner and dot)
        and method in NO_CALL_METHODS
        and not records_messages(span)
    )


_MESSAGE_PREFIXES = tuple(
    f"{prefix}." for prefix in (
        OPENINFERENCE_INPUT, OPENINFERENCE_OUTPUT, LEGACY_INPUT, LEGACY_OUTPUT, INPUT, OUTPUT
    )
)


def records_messages(span: Span) -> bool:
    """Whether the span holds an attribute the call reader reads messages (or a reference
    to them, ``gen_ai.input.messages.ref``) from."""
    return any(
        key in (INPUT, OUTPUT, SYSTEM) or key.startswith(_MESSAGE_PREFIXES)
        for key in span.attributes
    )


def tool_arguments(span: Span, args: Any) -> Any:
    """A LlamaIndex tool span's arguments: the ``kwargs`` of its bound arguments
    (``{"kwargs": {"city": "Paris"}}`` -> ``{"city": "Paris"}``); ``args`` otherwise."""
    if (
        span.scope == SCOPE
        and isinstance(args, dict)
        and args.keys() == {"kwargs"}
        and isinstance(args["kwargs"], dict)
    ):
        return args["kwargs"]
    return args
