"""Floors: bare pydantic models of the same JSON shapes, read and written by a TypeAdapter.

Where no peer ships a converter for a format, an adapter is measured against the least a
typed reader can do: validate the same dicts into minimal models (and dump them back, for a
writer). Unknown keys are ignored, nothing is checked across messages, nothing is kept.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, Field, TypeAdapter


class Function(BaseModel):
    name: str
    arguments: str


class Call(BaseModel):
    id: str
    type: Literal["function"]
    function: Function


class System(BaseModel):
    role: Literal["system", "developer"]
    content: str
    name: str | None = None


class User(BaseModel):
    role: Literal["user"]
    content: str
    name: str | None = None


class Assistant(BaseModel):
    role: Literal["assistant"]
    content: str | None = None
    name: str | None = None
    tool_calls: list[Call] | None = None
    sender: str | None = None  # Swarm


class Tool(BaseModel):
    role: Literal["tool"]
    content: str
    tool_call_id: str
    name: str | None = None
    tool_name: str | None = None  # Swarm


ChatMessage = Annotated[System | User | Assistant | Tool, Field(discriminator="role")]


class Turn(BaseModel):
    role: Literal["user", "assistant"]
    content: str
    retrieval_context: str | None = None
    metadata: dict[str, Any] | None = None


class TextBlock(BaseModel):
    block_type: Literal["text"]
    text: str


class ToolCallBlock(BaseModel):
    block_type: Literal["tool_call"]
    tool_call_id: str | None = None
    tool_name: str
    tool_kwargs: dict[str, Any] | str


class LlamaMessage(BaseModel):
    role: str
    additional_kwargs: dict[str, Any] = {}
    blocks: list[Annotated[TextBlock | ToolCallBlock, Field(discriminator="block_type")]]


FLOORS: dict[str, TypeAdapter[Any]] = {
    "openai_chat": TypeAdapter(list[ChatMessage]),
    "swarm": TypeAdapter(list[ChatMessage]),
    "galtea": TypeAdapter(list[Turn]),
    "llama_index": TypeAdapter(list[LlamaMessage]),
}
"""The floor of each format, by adapter name."""
