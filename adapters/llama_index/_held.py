"""What LlamaIndex holds of a block dict: the block built by its own class (as
``ChatMessage.model_validate`` builds it) and dumped again (``model_dump(mode="json")``).

LlamaIndex's block classes drop keys they have no field for (also inside nested blocks:
a citation's ``cited_content``, a citable block's ``content``) and change some values when
they build a block: data that is not base64 text is encoded again (``"x"`` becomes
``"eA=="``), an empty mimetype or audio format is replaced by the one LlamaIndex guesses, an
empty document title by ``"input_document"``, a number in a ``Dict[str, int]`` made an int.
A block whose held form differs from it would not be written back as it was read, so the
reader refuses it where it differs, and the writer refuses a part whose block would differ.

Two kinds of difference are not refusals:

* a key the block leaves out, or gives as null, that LlamaIndex fills in (the mimetype it
  derives from a URL, the title ``"input_document"``, ``url: None``): the block reads as
  LlamaIndex holds it, with the filled value, exactly as a ChatMessage built from it dumps;
* a mimetype or audio format given as null on a message's own block (not a nested one),
  which stays null: the writer sets it back after LlamaIndex guessed one
  (``_parts.restore_mimetypes``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from tracebridge.errors import short_repr

KEPT_NULL = frozenset({"image_mimetype", "video_mimetype", "document_mimetype", "format"})
"""Fields of a message's own media block whose null the writer restores after LlamaIndex's
guess: a null there is kept, not filled."""

DATA_KEYS = frozenset({"image", "audio", "video", "data"})
"""The fields of media blocks that hold base64 data."""


@dataclass(frozen=True)
class Difference:
    """Where (keys and indexes inside the block) and how LlamaIndex would not hold a block
    as given."""

    at: tuple[str | int, ...]
    detail: str
    given: Any = None


def hold(block: dict[str, Any], cls: Any) -> dict[str, Any] | Difference:
    """The block as LlamaIndex holds it (``cls``: its LlamaIndex class), or where LlamaIndex
    would refuse, drop or change what the block gives."""
    try:
        held: dict[str, Any] = cls.model_validate(block).model_dump(mode="json")
    except ValidationError as error:
        first = error.errors()[0]
        return Difference(_located(block, first["loc"]),
                          f"LlamaIndex refuses this block: {first['msg']}")
    found: dict[str, Any] | Difference = _compared(block, held, ())
    return found


def located(path: str, at: tuple[str | int, ...]) -> str:
    """``path`` followed by the keys and indexes ``at``."""
    return path + "".join(f"[{k}]" if type(k) is int else f".{k}" for k in at)


def _compared(given: Any, held: Any, at: tuple[str | int, ...]) -> Any:
    """``held`` with the nulls that are kept (see the module docstring) put back, or the first
    place where ``held`` drops or changes what ``given`` says."""
    if type(given) is dict and type(held) is dict:
        merged = dict(held)
        for key, value in given.items():
            if key not in held:
                return Difference((*at, key), f"LlamaIndex has no field {key!r} here and "
                                  f"would drop it", value)
            if value is None and (held[key] is None or (not at and key in KEPT_NULL)):
                merged[key] = None
                continue
            if value is None:
                continue  # a null LlamaIndex fills in, as it fills in a missing key
            found = _compared(value, held[key], (*at, key))
            if isinstance(found, Difference):
                return found
            merged[key] = found
        return merged
    if type(given) is list and type(held) is list and len(given) == len(held):
        items = []
        for k, (value, kept) in enumerate(zip(given, held, strict=True)):
            found = _compared(value, kept, (*at, k))
            if isinstance(found, Difference):
                return found
            items.append(found)
        return items
    if type(given) is type(held) and given == held and type(given) not in (dict, list):
        return held
    return Difference(at, _changed(given, held, at), given)


def _changed(given: Any, held: Any, at: tuple[str | int, ...]) -> str:
    detail = f"LlamaIndex would hold {short_repr(given)} as {short_repr(held)}"
    key = at[-1] if at else None
    if key in DATA_KEYS and type(given) is str:
        return detail + " (it keeps data as base64 text and encodes anything else again)"
    if key in KEPT_NULL and given == "":
        return detail + " (it takes an empty one for a missing one and puts its own guess there)"
    if key == "title" and given == "":
        return detail + " (it gives an untitled document that title)"
    return detail


def _located(block: dict[str, Any], loc: tuple[Any, ...]) -> tuple[str | int, ...]:
    """The keys and indexes of a validation error's location, followed as far as they go into
    the block. The tag of a nested block (``content.0.image.url``: ``image`` names the union
    member) is not a key; a missing field is named at the end."""
    at: list[str | int] = []
    current: Any = block
    tagged = False
    for k, step in enumerate(loc):
        if type(current) is dict:
            if at and not tagged and step == current.get("block_type"):
                tagged = True
                continue
            if type(step) is str and (step in current or k == len(loc) - 1):
                at.append(step)
                current = current.get(step)
                tagged = False
                continue
        elif type(current) is list and type(step) is int and 0 <= step < len(current):
            at.append(step)
            current = current[step]
            tagged = False
            continue
        break
    return tuple(at)

