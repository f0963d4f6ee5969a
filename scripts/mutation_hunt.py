"""Hunt for law breaks with mutated golden traces (a long run; not part of the test suite).

Usage: ``python scripts/mutation_hunt.py [--seed N] [--format NAME] [--typed]``
(from the repository root; about a minute per mode on two cores).

Trace mode (the default): every field of every golden trace is, in turn, replaced by a few
values of other types (seeded), deleted, duplicated (list items) or joined by an unknown key.
Each mutant the format's reader accepts is a valid trace of that format, so it must obey
the adapter laws (docs/model.md):

* ``read-escape``: the reader raised something else than a ``TraceError``;
* ``lossless``: ``from_messages(to_messages(t))`` differs from ``t`` (compared as the law
  kits compare; a LlamaIndex dict as LlamaIndex's own ``ChatMessage`` holds it, so a key it
  fills in with its default is no difference); ``lossless-refused``: the writer refused its
  own format's trace;
* ``write-code`` / ``write-escape``: another format's writer failed otherwise than with
  ``not_representable``;
* ``changed``: written to a format and read back, the transcript hash differs (the
  conversion lost something it did not refuse);
* ``reread``: a writer's output is refused by its own reader.

Typed mode (``--typed``): the typed messages of every golden trace, with one field at a time
set to an awkward value (empty text, ``"null"``, a ``data:`` URL, a comma, ...) and kept
only when it is still a valid conversation, are written to every format and read back:
``changed``, ``reread``, ``write-code`` and ``write-escape`` as above. Kept metadata stays,
as a user's edit of a read conversation would leave it.

Prints one line per finding (the first of each kind, field and format) and a count; exit
status 1 when there is any. One finding is known and kept on purpose: a Chat Completions or
Responses trace whose call with unparsed arguments has no result before the conversation
goes on is read (the rules let such a call go unanswered) but not written back (the API
refuses it), ``lossless-refused`` on ``malformed_arguments.json`` with its result deleted.
"""

from __future__ import annotations

import argparse
import copy
import importlib
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))  # the law kits: how each format's traces compare

from pydantic import TypeAdapter, ValidationError  # noqa: E402

from tracebridge import TraceError, transcript_hash, validate  # noqa: E402
from tracebridge.cli import to_json  # noqa: E402
from tracebridge.messages import AnyMessage  # noqa: E402
from tracebridge.registry import FORMATS, get_adapter  # noqa: E402

REPLACEMENTS: list[Any] = [
    None, True, False, 0, -1, 2.5, "", "x", "tool", [], {}, [None], ["x"], [{}],
    {"type": "x"}, {"role": "user"}, {"a": {"b": None}}, 10**30, "\ud800", 1e308,
]
TYPED_VALUES: list[Any] = [
    "", " ", "x", None, "input_document", "data:;base64,AA==", "null", "{}", "[]", "\n",
    "a,b", 0, True,
]
MESSAGES: TypeAdapter[list[AnyMessage]] = TypeAdapter(list[AnyMessage])

Path_ = tuple[Any, ...]


def paths(value: Any, at: Path_ = ()) -> Iterator[Path_]:
    yield at
    if isinstance(value, dict):
        for key, item in value.items():
            yield from paths(item, (*at, key))
    elif isinstance(value, list):
        for position, item in enumerate(value):
            yield from paths(item, (*at, position))


def get(value: Any, at: Path_) -> Any:
    for key in at:
        value = value[key]
    return value


def mutants(trace: Any, rng: random.Random) -> Iterator[tuple[str, Any]]:
    for at in paths(trace):
        if at:
            for new in rng.sample(REPLACEMENTS, 5):
                mutant = copy.deepcopy(trace)
                get(mutant, at[:-1])[at[-1]] = new
                yield f"{at} := {new!r}", mutant
            mutant = copy.deepcopy(trace)
            del get(mutant, at[:-1])[at[-1]]
            yield f"del {at}", mutant
            if isinstance(get(trace, at[:-1]), list):
                mutant = copy.deepcopy(trace)
                parent = get(mutant, at[:-1])
                parent.insert(at[-1], copy.deepcopy(parent[at[-1]]))
                yield f"dup {at}", mutant
        if isinstance(get(trace, at), dict):
            mutant = copy.deepcopy(trace)
            get(mutant, at)["zz_extra"] = rng.choice(REPLACEMENTS)
            yield f"add {at}.zz_extra", mutant


def goldens(only: str | None) -> Iterator[tuple[str, Path, dict[str, Any]]]:
    for path in sorted(ROOT.glob("golden_traces/*/*.json")):
        name = path.parent.name
        document = json.loads(path.read_text(encoding="utf-8"))
        if "trace" in document and (only is None or name == only):
            yield name, path, document


class Findings:
    def __init__(self) -> None:
        self.seen: set[tuple[str, ...]] = set()

    def add(self, kind: str, key: tuple[str, ...], where: str, detail: str) -> None:
        if (kind, *key) in self.seen:
            return
        self.seen.add((kind, *key))
        print(f"{kind}: {where}: {detail[:400]}", flush=True)


def canonical(name: str, kit: Any, trace: Any) -> Any:
    if name == "llama_index":
        from llama_index.core.base.llms.types import ChatMessage

        from tracebridge.adapters.llama_index._held import KEPT_NULL

        held = []
        for item in trace:
            try:
                dumped = (ChatMessage.model_validate(item).model_dump(mode="json")
                          if isinstance(item, dict) else item)
            except ValidationError:
                dumped = item
            if dumped is not item and isinstance(item.get("blocks"), list):
                # a null mimetype the writer sets back after LlamaIndex's guess stays null
                for given, block in zip(item["blocks"], dumped["blocks"], strict=False):
                    for key in KEPT_NULL & given.keys() if isinstance(given, dict) else ():
                        if given[key] is None:
                            block[key] = None
            held.append(dumped)
        trace = held
    return kit.canonical(trace)


def read_back(target: str, written: Any) -> Any:
    stored = json.loads(json.dumps(to_json(target, written)))
    try:
        return get_adapter(target).to_messages(stored, allow_pending=True)
    except TypeError:  # a reader without the option
        return get_adapter(target).to_messages(stored)


def across(messages: list[Any], where: str, field: str, findings: Findings) -> None:
    """Every format writes ``messages`` whole (the same transcript hash) or refuses."""
    for target in FORMATS:
        key = (target, field)
        try:
            written = get_adapter(target).from_messages(messages)
        except TraceError as error:
            if error.code != "not_representable":
                findings.add("write-code", key, f"{where} -> {target}", str(error))
            continue
        except Exception as error:  # the finding: it escaped
            findings.add("write-escape", key, f"{where} -> {target}", repr(error))
            continue
        try:
            again = read_back(target, written)
        except Exception as error:  # the finding: it escaped
            findings.add("reread", key, f"{where} -> {target}", repr(error))
            continue
        if transcript_hash(again) != transcript_hash(messages):
            first = next((k for k, (a, b) in enumerate(zip(messages, again, strict=False))
                          if a != b), None)
            findings.add("changed", key, f"{where} -> {target}",
                         f"message {first}: {messages[first]!r} => {again[first]!r}"
                         if first is not None else "a message more or less")


def hunt_traces(seed: int, only: str | None, findings: Findings) -> None:
    rng = random.Random(seed)
    for name, path, document in goldens(only):
        kit = importlib.import_module(f"law_kits.{name}").KIT
        adapter = get_adapter(name)
        options = document.get("to_options", {})
        for label, mutant in mutants(document["trace"], rng):
            where = f"{path.relative_to(ROOT)} {label}"
            field = label.rsplit("'", 2)[-2] if "'" in label else label.split()[0]
            try:
                messages = adapter.to_messages(mutant, **options)
            except TraceError:
                continue
            except Exception as error:  # the finding: it escaped
                findings.add("read-escape", (name, field), where, repr(error))
                continue
            if not options and name != "otel":  # otel writes its own span layout
                try:
                    back = adapter.from_messages(messages, **kit.from_options)
                except TraceError as error:
                    findings.add("lossless-refused", (name, field), where, str(error))
                else:
                    if canonical(name, kit, back) != canonical(name, kit, mutant):
                        findings.add("lossless", (name, field), where, "")
            across(list(messages), where, field, findings)


def hunt_typed(seed: int, only: str | None, findings: Findings) -> None:
    rng = random.Random(seed)
    for name, path, document in goldens(only):
        try:
            messages = get_adapter(name).to_messages(document["trace"],
                                                     **document.get("to_options", {}))
        except TraceError:
            continue
        dumped = MESSAGES.dump_python(list(messages), mode="json")
        for at in paths(dumped):
            if not at or at[-1] == "type" or "metadata" in at:
                continue
            if isinstance(get(dumped, at), (dict, list)):
                continue
            for new in rng.sample(TYPED_VALUES, 4):
                edited = copy.deepcopy(dumped)
                get(edited, at[:-1])[at[-1]] = new
                try:
                    typed = MESSAGES.validate_python(edited)
                    validate(typed, allow_pending=True)
                except (ValidationError, TraceError, ValueError):
                    continue
                across(typed, f"{path.relative_to(ROOT)} {at} := {new!r}", str(at[-1]),
                       findings)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--format", choices=FORMATS, help="only this format's golden traces")
    parser.add_argument("--typed", action="store_true", help="mutate typed messages instead")
    args = parser.parse_args(argv)
    findings = Findings()
    (hunt_typed if args.typed else hunt_traces)(args.seed, args.format, findings)
    print(f"{len(findings.seen)} finding(s)")
    return 1 if findings.seen else 0


if __name__ == "__main__":
    sys.exit(main())
