"""Galtea attached files <-> ``FilePart``s.

The Galtea SDK (5.12) attaches a file to a turn as an ``AttachedFile``: ``{"uri", "filename",
"mime_type", "type": "file"}`` (``mimeType`` in its camelCase dumps and in the API's content
parts). A user turn holds them in ``input_files``, an assistant turn in ``output_files``. Each
becomes a ``FilePart(url=uri, filename=..., mime_type=...)``; what the part has no field for is
kept under the part's ``metadata["galtea"]``:

* ``field``: the list it came from, when it is not the usual one for the turn's role;
* ``type``: the file's ``type`` when it is not ``"file"``;
* ``absent``: the keys of the SDK's full form the file did not have (``filename``, ...);
* ``aliases``: ``["mimeType"]`` when the file spelled it so;
* ``extra``: any other key, verbatim.

Written back, a file has the SDK's full form (all four keys), less what ``absent`` names.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Collection, Mapping
from typing import Any, Literal

from tracebridge._json import json_path
from tracebridge.errors import TraceError, short_repr, with_article
from tracebridge.messages import FilePart

from ._kept import as_read, kept

__all__ = ["FILE_FIELDS", "FileField", "checked_namespace", "default_field", "file_fields",
           "part_field", "read_files", "write_file"]

NAME = "galtea"
FileField = Literal["input_files", "output_files"]
FILE_FIELDS: tuple[FileField, ...] = ("input_files", "output_files")
_CAMEL: dict[str, str] = {"input_files": "inputFiles", "output_files": "outputFiles"}
_FILE_KEYS = ("uri", "filename", "mime_type", "type")
_PART_KEYS = ("field", "type", "absent", "aliases", "extra")


def default_field(role: str) -> FileField:
    """Where a turn of this role keeps its files."""
    return "input_files" if role == "user" else "output_files"


def file_fields(turn: dict[str, Any]) -> list[tuple[FileField, str]]:
    """The file lists a turn has: (field, key as spelled), input files first."""
    found: list[tuple[FileField, str]] = []
    for field in FILE_FIELDS:
        for key in (field, _CAMEL[field]):
            if key in turn:
                found.append((field, key))
    return found


def read_files(value: Any, role: str, field: FileField, where: str, index: int) -> list[FilePart]:
    """The ``FilePart``s of one file list (``where`` is its path, e.g. ``turns[0].inputFiles``)."""

    def bad(detail: str, path: str = where) -> TraceError:
        return TraceError("malformed_event", detail, index=index, path=path, source=NAME)

    if type(value) is not list:
        raise bad(f"expected a list of attached files, got {type(value).__name__} "
                  f"{short_repr(value)}")
    parts: list[FilePart] = []
    for k, item in enumerate(value):
        at = json_path(where, k)
        if not isinstance(item, Mapping):  # mapped, not kept: any mapping is read as its dict
            raise bad(f"expected an attached file (a dict with 'uri'), got "
                      f"{type(item).__name__} {short_repr(item)}", at)
        parts.append(_read_file(as_read(item), role, field, at, index, bad))
    return parts


def _read_file(item: dict[str, Any], role: str, field: FileField, at: str, index: int,
               bad: Any) -> FilePart:
    namespace: dict[str, Any] = {}
    if field != default_field(role):
        namespace["field"] = field
    if "mime_type" in item and "mimeType" in item:
        raise bad("the file spells its mime type twice ('mime_type' and 'mimeType')", at)
    if "mimeType" in item:
        namespace["aliases"] = ["mimeType"]
    fields = {("mime_type" if key == "mimeType" else key): value for key, value in item.items()}
    if type(fields.get("uri")) is not str:
        found = short_repr(fields["uri"]) if "uri" in fields else "no 'uri'"
        raise bad(f"an attached file needs its reference as a string under 'uri', got {found}",
                  json_path(at, "uri"))
    for key in ("filename", "mime_type"):
        if fields.get(key) is not None and type(fields[key]) is not str:
            raise bad(f"expected a string or null, got {short_repr(fields[key])}",
                      json_path(at, key if key in item else "mimeType"))
    kind = fields.get("type", "file")
    if type(kind) is not str:
        raise bad(f"expected a string, got {short_repr(kind)}", json_path(at, "type"))
    if kind != "file":
        namespace["type"] = kind
    absent = [key for key in _FILE_KEYS[1:] if key not in fields]
    if absent:
        namespace["absent"] = absent
    extra = {key: value for key, value in item.items()
             if key not in _FILE_KEYS and key != "mimeType"}
    if extra:
        namespace["extra"] = kept(extra, index, at)
    return FilePart(
        url=fields["uri"],
        filename=fields.get("filename"),
        mime_type=fields.get("mime_type"),
        metadata={NAME: namespace} if namespace else {},
    )


def part_field(part: FilePart, role: str) -> FileField:
    """The file list a ``FilePart`` goes to (its recorded one, else the role's own)."""
    recorded = part.metadata.get(NAME, {})
    field = recorded.get("field") if isinstance(recorded, dict) else None
    return field if field in FILE_FIELDS else default_field(role)


def checked_namespace(metadata: dict[str, Any], index: int, at: str,
                      keys: Collection[str]) -> tuple[dict[str, Any], Callable[..., TraceError]]:
    """``metadata["galtea"]`` of a message or part at ``at`` ({} when absent), checked to be a
    dict of known ``keys``; and the error maker for what is wrong inside it."""
    namespace = metadata.get(NAME, {})  # the namespace itself is optional
    base = f"{at}.metadata.{NAME}"

    def bad(detail: str, key: str | None = None) -> TraceError:
        path = base if key is None else json_path(base, key)
        return TraceError("malformed_event", detail, index=index, path=path, source=NAME)

    if not isinstance(namespace, dict):
        raise bad(f"expected a dict, got {type(namespace).__name__} {short_repr(namespace)}")
    for key in namespace:
        if key not in keys:
            raise bad(f"unknown key {key!r}; this galtea namespace holds {', '.join(keys)}", key)
    return namespace, bad


def write_file(part: FilePart, role: str, index: int, at: str) -> dict[str, Any]:
    """The attached-file dict of a ``FilePart`` that has a url and no data or file id, in a
    turn of ``role``. Its namespace must record only what the written file carries (what
    ``_read_file`` records): anything else would be left out without a word."""
    namespace, bad = checked_namespace(part.metadata, index, at, _PART_KEYS)
    if namespace.get("field", "input_files") not in FILE_FIELDS:
        raise bad(f"expected one of {FILE_FIELDS}, got {short_repr(namespace['field'])}", "field")
    if namespace.get("field") == default_field(role):
        raise bad(f"{namespace['field']!r} is where {with_article(role)} turn's files go already "
                  "(record 'field' only for the other list)", "field")
    absent = namespace.get("absent", [])
    if (type(absent) is not list or not all(type(key) is str for key in absent)
            or not set(absent) <= set(_FILE_KEYS[1:]) or ("absent" in namespace and not absent)
            or len(set(absent)) != len(absent)):
        raise bad(f"expected a non-empty list of {_FILE_KEYS[1:]}, got {short_repr(absent)}",
                  "absent")
    if len(absent) > 1 and absent != [key for key in _FILE_KEYS[1:] if key in absent]:
        # the written file holds its keys in one order: read back, this one would change
        raise bad(f"expected absent in the order a file is read in "
                  f"({[key for key in _FILE_KEYS[1:] if key in absent]}), got {absent}",
                  "absent")
    aliases = namespace.get("aliases", [])
    if aliases != ["mimeType"] and "aliases" in namespace:
        raise bad(f"expected ['mimeType'], got {short_repr(aliases)}", "aliases")
    if aliases and "mime_type" in absent:
        raise bad("'mimeType' is recorded as the spelling of 'mime_type', which is recorded as "
                  "absent", "aliases")
    kind = namespace.get("type", "file")
    if type(kind) is not str or (kind == "file" and "type" in namespace):
        raise bad(f"expected a type other than 'file' (the default), got {short_repr(kind)}",
                  "type")
    extra = namespace.get("extra", {})
    if type(extra) is not dict or set(extra) & {*_FILE_KEYS, "mimeType"} or (
            "extra" in namespace and not extra):
        raise bad(f"expected a non-empty dict of other file keys, got {short_repr(extra)}",
                  "extra")
    values = {"uri": part.url, "filename": part.filename, "mime_type": part.mime_type,
              "type": kind}
    written: dict[str, Any] = {}
    for key in _FILE_KEYS:
        if key in absent:
            if values[key] is not None and (key != "type" or values[key] != "file"):
                raise bad(f"{key!r} is recorded as absent but the part has "
                          f"{short_repr(values[key])}", "absent")
            continue
        written["mimeType" if key == "mime_type" and aliases else key] = values[key]
    written.update(copy.deepcopy(extra))
    return written
