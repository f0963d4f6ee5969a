"""The audio format table: every format name maps to one mime type and back."""

from __future__ import annotations

import pytest

from tracebridge.media import (
    AUDIO_MIME_ALIASES,
    AUDIO_MIME_TYPES,
    audio_format,
    audio_mime_type,
    canonical_audio_mime_type,
)


@pytest.mark.parametrize(("name", "mime"), sorted(AUDIO_MIME_TYPES.items()))
def test_every_listed_format_goes_to_its_mime_type_and_back(name: str, mime: str) -> None:
    assert audio_mime_type(name) == mime
    assert audio_format(mime) == name


def test_the_table_names_the_formats_openai_uses() -> None:
    assert AUDIO_MIME_TYPES["wav"] == "audio/wav"
    assert AUDIO_MIME_TYPES["mp3"] == "audio/mpeg"


@pytest.mark.parametrize(("alias", "mime"), sorted(AUDIO_MIME_ALIASES.items()))
def test_an_alias_means_the_mime_type_it_names(alias: str, mime: str) -> None:
    assert canonical_audio_mime_type(alias) == mime
    assert audio_format(alias) == audio_format(mime)


def test_an_unlisted_audio_type_keeps_its_own_name() -> None:
    assert audio_mime_type("ogg") == "audio/ogg"
    assert audio_format("audio/ogg") == "ogg"
    assert canonical_audio_mime_type("audio/ogg") == "audio/ogg"


@pytest.mark.parametrize("mime", ["image/png", "audio/", "application/octet-stream"])
def test_what_is_not_audio_has_no_format(mime: str) -> None:
    assert audio_format(mime) is None
