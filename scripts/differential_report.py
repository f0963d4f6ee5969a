"""Print the numbers of the differential test against langchain-core's converters.

Usage: ``python scripts/differential_report.py`` (from the repository root).

Runs every case of ``tests/differential/corpus`` (see ``docs/differential.md``) and prints:
how many inputs our readers read, how many of those round-tripped exactly, how many were
refused (by code), which losses were accepted by ``drop=`` option, every difference from
langchain-core's converters that remains with its reason, and what ours carries that
theirs does not. Exit status 0 when every difference is named in
``tests/differential/expected.py`` (intended or a known gap), 1 otherwise.
"""

from __future__ import annotations

import sys
import warnings
from collections import Counter, defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from differential.corpus import CASES
from differential.expected import EXPECTED, GAPS
from differential.harness import Outcome, differences, run


def main() -> int:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # theirs warns as it invents a file name
        outcomes = [run(case) for case in CASES]
    print(
        f"differential corpus: {len(outcomes)} inputs "
        f"({', '.join(f'{n} {k}' for k, n in Counter(o.case.kind for o in outcomes).items())})"
    )
    _reading(outcomes)
    _writing(outcomes)
    unnamed = _differences(outcomes)
    _ours_carries_more(outcomes)
    return 1 if unnamed else 0


def _reading(outcomes: list[Outcome]) -> None:
    read = [o for o in outcomes if o.read_error is None]
    exact = [o for o in read if o.round_trip == "exact"]
    print(f"read by our reader:          {len(read)}")
    print(f"  round-tripped exactly:     {len(exact)}")
    for o in read:
        if o.round_trip != "exact":
            print(f"  round trip {o.round_trip}: {o.case.name}")
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
    print(f"comparisons (input x direction): {len(ran)}")
    writer_refusals: dict[str, list[str]] = defaultdict(list)
    drops: dict[str, list[str]] = defaultdict(list)
    theirs_raised: list[str] = []
    for o, c in ran:
        label = f"{o.case.name}/{c.direction}"
        if c.ours_error is not None:
            writer_refusals[c.ours_error[0]].append(label)
        for option in c.drops:
            drops[option].append(label)
        if c.theirs_error is not None:
            theirs_raised.append(f"{label} ({c.theirs_error[:70]})")
    print(f"  ours refused to write:     {sum(map(len, writer_refusals.values()))}")
    for code, labels in sorted(writer_refusals.items()):
        print(f"    {code}: {len(labels)} ({', '.join(labels)})")
    print(f"  ours left out by drop=:    {sum(map(len, drops.values()))}")
    for option, labels in sorted(drops.items()):
        print(f"    {option}: {len(labels)} ({', '.join(labels)})")
    print(f"  langchain-core raised:     {len(theirs_raised)}")
    for line in theirs_raised:
        print(f"    {line}")


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
    cases_with = {line.split(":")[0] for lines in by_reason.values() for line in lines}
    print(f"differences remaining: {sum(map(len, by_reason.values()))} in {len(cases_with)} inputs")
    for title, wanted in (("intended (docs/differential.md)", None), ("known gaps", True)):
        reasons = [r for r in sorted(by_reason) if (r in GAPS) == bool(wanted)]
        count = sum(len(by_reason[r]) for r in reasons)
        print(f"  {title}: {count}")
        for reason in reasons:
            gap = GAPS.get(reason)
            label = f"{reason} [{gap.kind}]: {gap.what}" if gap else reason
            print(f"    {label}")
            for line in by_reason[reason]:
                print(f"      {line}")
    print(f"  not named anywhere: {len(unnamed)}")
    for line in unnamed:
        print(f"    {line}")
    print(f"  named but no longer happening: {len(stale)}")
    for line in stale:
        print(f"    {line}")
    return len(unnamed) + len(stale)


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
