"""Every case of the differential corpus, in one list (each module registers its own)."""

from __future__ import annotations

from . import flat_dicts, langchain_blocks, langchain_messages, openai_dicts, providers
from .case import CASES, Case, Kind

__all__ = ["CASES", "Case", "Kind"]

_MODULES = (langchain_messages, langchain_blocks, providers, openai_dicts, flat_dicts)
"""Imported for the cases they register."""
