"""Print the numbers of the differential test against langchain-core's converters.

Usage: ``python scripts/differential_report.py`` (from the repository root).

Runs every case of ``tests/differential/corpus`` (see ``docs/differential.md``) and prints:
how many inputs the corpus holds, how many our readers read, how many of those
round-tripped exactly (input -> typed -> input, and typed -> input format -> typed), how many
were refused on reading and on writing (by code), which losses were accepted by ``drop=``
option, every difference from langchain-core's ``convert_to_openai_messages`` /
``convert_to_messages`` that remains with its reason (the "why" of its row in
``docs/differential.md``), and what ours carries that theirs does not. Exit status 0 when
every difference is named in ``tests/differential/expected.py`` (intended or a known gap),
1 otherwise.
"""

from __future__ import annotations

import re
import sys
import warnings
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from differential.corpus import CASES
from differential.expected import EXPECTED, GAPS
from differential.harness import Outcome, differences, run

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # theirs warns as it invents a file name
        outcomes = [run(case) for case in CASES]
    print(
        f"inputs in the corpus:        {len(outcomes)} "
        f"({', '.join(f'{n} {k}' for k, n in Counter(o.case.kind for o in outcomes).items())})"
    )
    _reading(outcomes)
    _writing(outcomes)
    unnamed = _differences(outcomes)
    _ours_carries_more(outcomes)
    return 1 if unnamed else 0


def _reading(outcomes: list[Outcome]) -> None:
    read = [o for o in outcomes if o.read_error is None]
    there = [o for o in read if o.round_trip == "exact"]
    back = [o for o in read if o.typed_round_trip == "exact"]
    both = [o for o in there if o.typed_round_trip == "exact"]
    print(f"read by ours:                {len(read)}")
    print(f"  round-tripped exactly both ways: {len(both)}")
    print(f"    input -> typed -> input:       {len(there)}")
    print(f"    typed -> input -> typed:       {len(back)}")
    for o in read:
        for way, status in (("input", o.round_trip), ("typed", o.typed_round_trip)):
            if status != "exact":
                print(f"    {way} round trip {status}: {o.case.name}")
    refused = [o for o in outcomes if o.read_error is not None]
    print(f"refused on reading:          {len(refused)}")
    by_code: dict[str, list[str]] = defaultdict(list)
    for o in refused:
        assert o.read_error is not None
        by_code[o.read_error[0]].append(o.case.name)
    for code, names in sorted(by_code.items()):
        print(f"  {code}: {len(names)} ({', '.join(names)})")


def _writing(outcomes: list[Outcome]) -> None:
    comparisons = [(o, c) for o in outcomes for c in o.comparisons.values()]
    ran = [(o, c) for o, c in comparisons if o.read_error is None]
    converting: dict[str, list[str]] = defaultdict(list)
    drops: dict[str, list[str]] = defaultdict(list)
    theirs_raised: list[str] = []
    for o, c in ran:
        label = f"{o.case.name}/{c.direction}"
        if c.ours_error is not None:
            converting[c.ours_error[0]].append(label)
        for option in c.drops:
            drops[option].append(label)
        if c.theirs_error is not None:
            ours = "ours refused" if c.ours_error else "ours converted"
            ours += f" with drop={list(c.drops)}" if c.drops and not c.ours_error else ""
            theirs_raised.append(f"{label} ({c.theirs_error[:70]}); {ours}")
    writing_back: dict[str, list[str]] = defaultdict(list)
    for o in outcomes:
        if o.round_trip not in (None, "exact", "differs"):
            writing_back[o.round_trip].append(o.case.name)
    total = sum(map(len, converting.values())) + sum(map(len, writing_back.values()))
    print(f"refused on writing:          {total}")
    print(
        f"  converting (input x direction, after the drop= options it named): "
        f"{sum(map(len, converting.values()))} of {len(ran)}"
    )
    for code, labels in sorted(converting.items()):
        print(f"    {code}: {len(labels)} ({', '.join(labels)})")
    print(f"  writing the input back (round trip): {sum(map(len, writing_back.values()))}")
    for code, names in sorted(writing_back.items()):
        print(f"    {code}: {len(names)} ({', '.join(names)})")
    print(f"left out by a drop= option:  {sum(map(len, drops.values()))}")
    for option, labels in sorted(drops.items()):
        print(f"  {option}: {len(labels)} ({', '.join(labels)})")
    raised_in = {line.split("/")[0] for line in theirs_raised}
    converted = sum("; ours converted" in line for line in theirs_raised)
    print(
        f"langchain-core raised:       {len(theirs_raised)} conversions of "
        f"{len(raised_in)} inputs; ours converted {converted} of them"
    )
    for line in theirs_raised:
        print(f"  {line}")


def _differences(outcomes: list[Outcome]) -> int:
    by_reason: dict[str, list[str]] = defaultdict(list)
    unnamed: list[str] = []
    stale: list[str] = []
    for o in outcomes:
        expected = EXPECTED.get(o.case.name, {})
        observed = differences(o)
        for key in sorted(observed, key=repr):
            if key in expected:
                by_reason[expected[key]].append(f"{o.case.name}: {_key(key)}")
            else:
                unnamed.append(f"{o.case.name}: {_key(key)}")
        stale += [f"{o.case.name}: {_key(k)}" for k in sorted(expected.keys() - observed, key=repr)]
    why = _documented_reasons()
    named = {line.split(":")[0] for lines in by_reason.values() for line in lines}
    every = named | {line.split(":")[0] for line in unnamed}
    print(
        f"disagreements with langchain-core remaining: {len(every)} inputs, "
        f"{sum(map(len, by_reason.values())) + len(unnamed)} differences "
        f"({len(named)} inputs with named ones, "
        f"{len({line.split(':')[0] for line in unnamed})} with unnamed ones)"
    )
    for title, wanted in (("intended (docs/differential.md)", None), ("known gaps", True)):
        reasons = [r for r in sorted(by_reason) if (r in GAPS) == bool(wanted)]
        count = sum(len(by_reason[r]) for r in reasons)
        print(f"  {title}: {count}")
        for reason in reasons:
            gap = GAPS.get(reason)
            names = sorted({line.split(":")[0] for line in by_reason[reason]})
            label = f"{reason} [{gap.kind}]: {gap.what}" if gap else f"{reason}: {why[reason]}"
            print(f"    {label}")
            print(f"      {_inputs(len(names))}: {', '.join(names)}")
            for line in by_reason[reason]:
                print(f"      {line}")
    print(
        f"  not named anywhere: {len(unnamed)} in "
        f"{_inputs(len({line.split(':')[0] for line in unnamed}))}"
    )
    for line in unnamed:
        print(f"    {line}")
    print(f"  named but no longer happening: {len(stale)}")
    for line in stale:
        print(f"    {line}")
    return len(unnamed) + len(stale)


def _inputs(count: int) -> str:
    return f"{count} input" if count == 1 else f"{count} inputs"


def _documented_reasons() -> dict[str, str]:
    """Each intended difference's id -> its "why" column in ``docs/differential.md``."""
    text = (ROOT / "docs" / "differential.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| `([a-z-]+)` \|.*\| ([^|]+) \|$", text, re.M)
    return {name: why.strip() for name, why in rows}


def _key(key: tuple[object, ...]) -> str:
    where, what, *rest = key
    return f"{where} {what} " + " ".join(map(repr, rest))


def _ours_carries_more(outcomes: list[Outcome]) -> None:
    kinds: Counter[str] = Counter()
    for o in outcomes:
        for c in o.comparisons.values():
            kinds.update(f"{c.direction}:{fact[1]}" for fact in c.extra)
    print(f"facts ours carries that theirs does not: {sum(kinds.values())}")
    for kind, count in sorted(kinds.items()):
        print(f"  {kind}: {count}")


if __name__ == "__main__":
    raise SystemExit(main())
