"""What LlamaIndex's JSON dump of an object writes as another value, found before it is read.

``model_dump(mode="json")`` writes a NaN or an infinity as null and a dict key that is not a
string as its text (``{1: "a", "1": "b"}`` becomes ``{"1": "b"}``: one value is lost). A
ChatMessage object is read through that dump, so such a value would be read as null or under
another key without a word, where the same message as a dict (and the same event through
``dump_events``) is refused: ``unserializable_value`` at the value (for a key, at the dict
that holds it, as ``tracebridge._json.check_json`` says it of a dict).

Only what pydantic's serializer writes is asked (the Python-mode dump, ``model_dump()``, whose
keys and nesting are the JSON dump's), and only for objects whose dump was not written out by
hand: a hand-written dump keeps a value as it is, and the dict road checks it.
"""

from __future__ import annotations

from typing import Any

from tracebridge import TraceError
from tracebridge._json import dump_fault_at
from tracebridge.errors import short_repr

from ._blocks import NAME


def not_json_at(value: Any, path: str) -> tuple[str, str] | None:
    """The first place in ``value`` (a Python-mode dump) that a JSON dump would write as
    another value, and why; or None."""
    found = dump_fault_at(value, path)
    if found is None:
        return None
    where, what = found
    if type(what) is float:
        return where, f"{what!r}, which JSON has no form for (LlamaIndex's dump writes null in " \
                      f"its place)"
    return where, (f"object keys must be strings, got {type(what).__name__} {short_repr(what)} "
                   f"(LlamaIndex's dump writes it as {str(what)!r}, over any key of that text)")


def check_json_form(obj: Any, index: int | None, where: str) -> None:
    """Refuse (``unserializable_value`` at the value) a pydantic object holding what its JSON
    dump would write as another value (``not_json_at``)."""
    check_dumped_form(obj.model_dump(), index, where)


def check_dumped_form(dumped: Any, index: int | None, where: str) -> None:
    """``check_json_form`` of a Python-mode dump (of an object, or one of its fields)."""
    found = not_json_at(dumped, where)
    if found is not None:
        raise TraceError("unserializable_value", found[1], index=index, path=found[0],
                         source=NAME)
