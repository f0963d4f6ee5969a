"""Write a large JSONL file of OpenAI chat tool-calling conversations, for measuring the CLI.

    python scripts/make_big_jsonl.py OUT.jsonl [--megabytes 200] [--seed 7] [--bad-every N]

Each line is one conversation (system prompt, user turns, assistant tool calls, sometimes
parallel, their results, answers), varied by a seeded random generator, so two runs with
the same arguments write the same bytes. ``--bad-every N`` makes every Nth line invalid in
one of three ways (an orphan tool result, a line that is not JSON, an unanswered call), to
try ``--keep-going``; the line numbers of the bad lines are printed.

Measure, e.g.:

    /usr/bin/time -v tracebridge validate OUT.jsonl --from openai_chat > /dev/null
    /usr/bin/time -v tracebridge convert OUT.jsonl --to langchain -o converted.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import sys

TOOLS = {
    "get_weather": lambda r: {"city": r.choice(["Paris", "Lima", "Oslo", "Kyoto", "Accra"])},
    "convert_currency": lambda r: {"amount": r.randint(1, 5000),
                                   "from": r.choice(["EUR", "USD", "JPY"]), "to": "GBP"},
    "search_docs": lambda r: {"query": r.choice(["refund policy", "api limits", "sso setup"]),
                              "top_k": r.randint(1, 10)},
    "create_ticket": lambda r: {"title": f"Issue {r.randint(1, 99999)}", "priority": "high"},
}
QUESTIONS = [
    "What's the weather like where I'm going next week, and should I pack a coat?",
    "Can you convert my invoice total and open a ticket if the amount looks wrong?",
    "Find the part of the docs that explains rate limits for the batch endpoint.",
    "I was charged twice this month; what does the refund policy say about it?",
]


def conversation(r: random.Random, number: int) -> list[dict[str, object]]:
    messages: list[dict[str, object]] = [
        {"role": "system", "content": "You are a support agent. Use tools when they help; "
         "answer briefly and cite what the tools returned."},
    ]
    for turn in range(r.choice([1, 1, 1, 2])):
        messages.append({"role": "user", "content": r.choice(QUESTIONS)})
        for step in range(r.choice([1, 1, 1, 2])):
            calls = []
            for k in range(r.choice([1, 1, 1, 2])):
                name = r.choice(list(TOOLS))
                calls.append({"id": f"call_{number}_{turn}_{step}_{k}", "type": "function",
                              "function": {"name": name,
                                           "arguments": json.dumps(TOOLS[name](r))}})
            messages.append({"role": "assistant", "content": None, "tool_calls": calls})
            for call in calls:
                messages.append({"role": "tool", "tool_call_id": call["id"],
                                 "content": json.dumps({"ok": True, "result": r.random()})})
        messages.append({"role": "assistant",
                         "content": f"Done: here is what I found ({r.randint(1, 10**6)})."})
    return messages


def broken(r: random.Random, number: int, kind: int) -> str:
    messages = conversation(r, number)
    if kind == 0:  # a tool result that answers nothing
        messages.insert(2, {"role": "tool", "tool_call_id": "nobody", "content": "?"})
    elif kind == 1:
        return json.dumps(messages)[:-7]  # cut short: not JSON
    else:  # the first call is never answered
        messages.remove(next(m for m in messages if m.get("role") == "tool"))
    return json.dumps(messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out")
    parser.add_argument("--megabytes", type=float, default=200.0)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--bad-every", type=int, default=0, metavar="N")
    args = parser.parse_args()
    r = random.Random(args.seed)
    limit = int(args.megabytes * 1_000_000)
    written = lines = 0
    bad: list[int] = []
    with open(args.out, "w", encoding="utf-8") as out:
        while written < limit:
            lines += 1
            if args.bad_every and lines % args.bad_every == 0:
                text = broken(r, lines, len(bad) % 3)
                bad.append(lines)
            else:
                text = json.dumps(conversation(r, lines))
            out.write(text + "\n")
            written += len(text) + 1
    print(f"{args.out}: {lines} conversations, {written / 1e6:.1f} MB", file=sys.stderr)
    if bad:
        print(f"bad lines ({len(bad)}): {bad[:10]}{' ...' if len(bad) > 10 else ''}",
              file=sys.stderr)


if __name__ == "__main__":
    main()
