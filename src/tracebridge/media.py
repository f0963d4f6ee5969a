"""Audio format names <-> mime types: the one table every adapter uses.

OpenAI names an audio clip's encoding with a short ``format`` (``"wav"``, ``"mp3"``); LangChain,
LlamaIndex and the typed model use a mime type. Reading a format gives its mime type from
``AUDIO_MIME_TYPES`` (an unlisted format ``x`` gives ``audio/x``); writing a mime type gives the
format back, and the spellings in ``AUDIO_MIME_ALIASES`` count as the mime type they name, in the
transcript hash too.

=========  ==============
format     mime type
=========  ==============
wav        audio/wav
mp3        audio/mpeg
flac       audio/flac
opus       audio/opus
aac        audio/aac
pcm16      audio/pcm
=========  ==============

>>> audio_mime_type("mp3"), audio_format("audio/mpeg"), audio_format("audio/x-wav")
('audio/mpeg', 'mp3', 'wav')

Inline media in OpenAI-style parts is a base64 ``data:`` URL; ``split_data_url`` and
``data_url`` are the one reading and spelling of it.

>>> split_data_url("data:image/png;base64,iVBO"), data_url("image/png", "iVBO")
(('image/png', 'iVBO'), 'data:image/png;base64,iVBO')
"""

from __future__ import annotations

import re

__all__ = [
    "AUDIO_MIME_ALIASES",
    "AUDIO_MIME_TYPES",
    "audio_format",
    "audio_mime_type",
    "canonical_audio_mime_type",
    "data_url",
    "split_data_url",
]

_DATA_URL = re.compile(r"data:([^,]*);base64,(.*)", re.DOTALL)


def split_data_url(text: str) -> tuple[str, str] | None:
    """``(mime_type, base64 data)`` of a base64 ``data:`` URL; None for any other text.

    The mime type is everything before ``;base64,``: it may be empty (``data:;base64,...``)
    or carry parameters (``text/plain;charset=utf-8``), so ``data_url`` of any mime type
    without a comma reads back as itself.

    >>> split_data_url("data:;base64,AA==")
    ('', 'AA==')
    >>> split_data_url("data:text/plain;charset=utf-8;base64,AA==")
    ('text/plain;charset=utf-8', 'AA==')
    """
    found = _DATA_URL.fullmatch(text)
    return None if found is None else (found[1], found[2])


def data_url(mime_type: str, data: str) -> str:
    """The base64 ``data:`` URL of ``data`` (the inverse of ``split_data_url``)."""
    return f"data:{mime_type};base64,{data}"

AUDIO_MIME_TYPES: dict[str, str] = {
    "wav": "audio/wav",
    "mp3": "audio/mpeg",
    "flac": "audio/flac",
    "opus": "audio/opus",
    "aac": "audio/aac",
    "pcm16": "audio/pcm",
}
"""A provider's audio format name -> the mime type the typed model holds."""

AUDIO_MIME_ALIASES: dict[str, str] = {
    "audio/mp3": "audio/mpeg",
    "audio/x-mp3": "audio/mpeg",
    "audio/mpeg3": "audio/mpeg",
    "audio/x-wav": "audio/wav",
    "audio/wave": "audio/wav",
    "audio/vnd.wave": "audio/wav",
    "audio/x-flac": "audio/flac",
    "audio/x-aac": "audio/aac",
    "audio/pcm16": "audio/pcm",
}
"""Other spellings of a listed mime type, and the one they stand for.

Every ``audio/<format>`` of a format the table names another mime type for is one of them
(``audio/pcm16``): written as that format, it would read back as the table's mime type.
"""

_FORMATS = {mime: name for name, mime in AUDIO_MIME_TYPES.items()}


def audio_mime_type(audio_format: str) -> str:
    """The mime type of a format name: the table's, else ``audio/<format>``."""
    return AUDIO_MIME_TYPES.get(audio_format, f"audio/{audio_format}")


def canonical_audio_mime_type(mime_type: str) -> str:
    """The table's spelling of ``mime_type``: its type and subtype in lower case (they are
    case-insensitive: ``AUDIO/WAV`` is ``audio/wav``), an alias as what it stands for;
    parameters after a ``;`` as they are.

    >>> canonical_audio_mime_type("AUDIO/MP3"), canonical_audio_mime_type("Audio/L16;rate=8000")
    ('audio/mpeg', 'audio/l16;rate=8000')
    """
    essence, semicolon, parameters = mime_type.partition(";")
    essence = essence.lower()
    return AUDIO_MIME_ALIASES.get(essence, essence) + semicolon + parameters


def audio_format(mime_type: str) -> str | None:
    """The format name of an ``audio/...`` mime type, or None when it is not audio.

    ``audio_mime_type(audio_format(m))`` is ``canonical_audio_mime_type(m)`` for any audio ``m``.
    """
    canonical = canonical_audio_mime_type(mime_type)
    if canonical in _FORMATS:
        return _FORMATS[canonical]
    if canonical.startswith("audio/") and len(canonical) > len("audio/"):
        return canonical[len("audio/") :]
    return None
