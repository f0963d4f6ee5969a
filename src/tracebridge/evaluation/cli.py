"""``tracebridge run CASES --out RUN_DIR --metric NAME ...``: an evaluation run over a case file.

Cases are loaded and checked (every bad case reported by line and case_id), deterministic
checks block what they must, controls run first, the judged metrics run under the budget
through the cache, and RUN_DIR is written as the run goes (see docs/evaluation.md). Running
again on the same RUN_DIR resumes.

Exit codes: 0 the run is complete (every case passed, failed, was blocked or needs review);
1 the case file holds bad cases; 2 the request or the input is unusable (a flag, an unreadable
file, a RUN_DIR of another run, in use by another run, or one that cannot be read back, a
damaged cache, a --checks that cannot be loaded, a cost limit without the model's price, a
result that cannot be written); 3 the run is incomplete (cases errored or unrun: a provider
failure, the budget boundary, or the estimate did not fit the budget; a control that could not
be scored stops the run this way too); 4 a control came out otherwise than its role expects;
130 interrupted (RUN_DIR keeps what was written; run again to resume; interrupted before the
run started, nothing was written); 143 the same, stopped by SIGTERM (``timeout``, ``docker
stop``, a CI job cancelled), 129 by SIGHUP (the terminal closed), which the run takes as it
takes Ctrl-C (an interrupt after the
run finished stops nothing: the finished run is reported). A case file that holds no case at
all is unusable too (exit 2), not one of bad cases.
"""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import Any, TextIO

from .._cli_output import same_file, summary_stream
from .._jsonstream import UnreadableInput
from ..errors import MissingExtraError
from ..metrics import cli as metrics_cli
from ..metrics.cli import DETERMINISTIC, JUDGED
from ..metrics.judge import OpenAIJudge
from .budget import MAX_LIMIT, Budget, Price, check_priced, count_text, parse_price
from .cache import DEFAULT_PATH, CacheError, NoCache, ResultCache
from .cases import CaseFileError, CaseSet, load_cases
from .checks import CheckError, UserCheck, load_check
from .gate import one_line
from .record import CASES, RESULTS, SPENT, SUMMARY, RecordError, RunRecord
from .runner import Runner, RunSettings, UsageError

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_INCOMPLETE, EXIT_CONTROLS = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130
EXIT_TERMINATED = 128 + signal.SIGTERM
DEFAULT_CACHE = DEFAULT_PATH


def configure(parser: argparse.ArgumentParser) -> None:
    """Add the ``run`` arguments to ``parser``."""

    parser.add_argument("cases", metavar="CASES",
                        help="the case file: JSONL, one case per line, or a JSON list of cases")
    parser.add_argument("--out", required=True, metavar="RUN_DIR",
                        help="the run directory (created; an existing one is resumed; one "
                        "in use by another run is refused, exit 2)")
    parser.add_argument(
        "-m", "--metric", dest="metrics", action="append", required=True, metavar="NAME",
        choices=[*DETERMINISTIC, *JUDGED],
        help="a metric to compute (repeat for several): " + ", ".join([*DETERMINISTIC, *JUDGED]),
    )
    parser.add_argument("--model", metavar="M", help="the judge model (for judged metrics)")
    parser.add_argument("--base-url", metavar="URL",
                        help="an OpenAI-compatible endpoint (default: the OpenAI API)")
    parser.add_argument("--api-key-env", default="OPENAI_API_KEY", metavar="VAR",
                        help="environment variable holding the API key (default: "
                        "OPENAI_API_KEY)")
    parser.add_argument("--max-requests", type=int, metavar="N",
                        help="judge requests the run may send, retries included")
    parser.add_argument("--max-tokens", type=int, metavar="N",
                        help="judge tokens (input and output) the run may spend")
    parser.add_argument("--max-cost", type=float, metavar="DOLLARS",
                        help="dollars the run may spend (needs --price for the model)")
    parser.add_argument("--price", dest="prices", action="append", default=[],
                        metavar="MODEL=IN,OUT",
                        help="a model's price in dollars per million input and output tokens")
    parser.add_argument("--concurrency", type=int, default=4, metavar="N",
                        help="jobs in flight at once (default: 4)")
    parser.add_argument("--timeout", type=float, default=120.0, metavar="SECONDS",
                        help="seconds per judge request (default: 120)")
    parser.add_argument("--retries", type=int, default=2, metavar="N",
                        help="retries of a failed or invalid judge request (default: 2)")
    parser.add_argument("--cache", default=DEFAULT_CACHE, metavar="PATH",
                        help=f"the result cache (default: {DEFAULT_CACHE})")
    parser.add_argument("--no-cache", action="store_true", help="use no result cache")
    parser.add_argument("--allow-partial", action="store_true",
                        help="start even when the estimate does not fit the budget")
    parser.add_argument("--continue-on-control-failure", action="store_true",
                        help="score the other cases even when a control comes out wrong")
    parser.add_argument("--checks", action="append", default=[], metavar="MODULE:FUNCTION",
                        help="a user check: a function of the case returning a list of "
                        "problems (repeat for several); MODULE must be importable (on the "
                        "import path: PYTHONPATH=. for a module in the current directory)")
    parser.add_argument("--pass-threshold", type=float, default=1.0, metavar="X",
                        help="a metric passes a case at this value or above (default: 1.0)")


class _Unusable(Exception):
    """The request or the input cannot be used (exit 2)."""


class _Terminated(KeyboardInterrupt):
    """SIGTERM stopped the run (exit 143): an interrupt, taken the way Ctrl-C is."""


class _Termination:
    """The SIGTERM handler of a run. Before the run's event loop starts it raises
    ``_Terminated`` where the program is, as Ctrl-C raises ``KeyboardInterrupt``; while the
    run is under way it cancels the run's task from the loop, which then writes what an
    interrupted run leaves (``summary.json``, ``spent.jsonl``); once the loop is over there
    is nothing left to stop. A second SIGTERM changes nothing: the first is being honoured."""

    def __init__(self) -> None:
        self.received = False
        self._loop: asyncio.AbstractEventLoop | None = None
        self._task: asyncio.Task[Any] | None = None
        self._over = False
        self.finished: dict[str, Any] | None = None
        """The summary of the run once it finished: an interrupt after that stops nothing
        (``summary.json`` holds the finished run, which is what is reported)."""

    def attach(self) -> None:
        """From now on, cancel the task that calls this (in its running loop)."""
        self._loop, self._task = asyncio.get_running_loop(), asyncio.current_task()

    def detach(self) -> None:
        """The run's task is ending: its loop closes after it."""
        self._over = True

    def __call__(self, signum: int, frame: FrameType | None) -> None:
        if self.received or self._over:
            return
        self.received = True
        if self._loop is None or self._task is None:
            raise _Terminated
        self._loop.call_soon_threadsafe(self._task.cancel)


@contextmanager
def _terminating(termination: _Termination) -> Iterator[None]:
    """``termination`` handles SIGTERM within the block; the handler before is put back at
    its end. It takes SIGTERM only from its default action or from the command line's own
    handler: a program calling ``main`` that handles SIGTERM itself, or a process started with
    it ignored (as Ctrl-C, ignored, is), keeps it. Only the main thread can set a handler:
    elsewhere SIGTERM is left as it is."""
    from ..cli import _StopHandler  # (loaded: run is a command of it)

    current = signal.getsignal(signal.SIGTERM)
    if (threading.current_thread() is not threading.main_thread()
            or not (current is signal.SIG_DFL or isinstance(current, _StopHandler))):
        yield
        return
    previous = signal.signal(signal.SIGTERM, termination)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def cmd_run(args: argparse.Namespace, streams: Any) -> int:
    """Run the cases; returns the exit code. Errors are one line on stderr."""
    err: TextIO = streams.stderr
    try:
        summary = _run(args, err)
    except CaseFileError as exc:
        if not exc.problems:  # no case at all: an unusable input, as for score
            err.write(f"tracebridge run: {args.cases} holds no cases\n")
            return EXIT_USAGE
        for problem in exc.problems:
            err.write(f"tracebridge run: {args.cases}: {problem}\n")
        err.write(f"tracebridge run: {len(exc.problems)} bad case record(s); nothing ran\n")
        return EXIT_INVALID
    except _Unusable as exc:
        err.write(f"tracebridge run: {exc}\n")
        return EXIT_USAGE
    except _Terminated:
        err.write(f"tracebridge run: {_interrupted(args.out, 'terminated (SIGTERM)')}\n")
        return EXIT_TERMINATED
    except KeyboardInterrupt:
        err.write(f"tracebridge run: {_interrupted(args.out)}\n")
        return EXIT_INTERRUPTED
    summary_stream(streams.stdout, err).write(_report(summary, args.out))
    if summary["stopped"]:
        err.write(f"tracebridge run: stopped: {summary['stopped']}\n")
    if any(control["as_expected"] is False for control in summary["controls"]):
        return EXIT_CONTROLS
    if summary["status"] != "complete":
        return EXIT_INCOMPLETE
    return EXIT_OK


def _interrupted(out: str, how: str = "interrupted") -> str:
    """What an interrupt left: RUN_DIR as written so far, or nothing when the run had not
    started (no ``summary.json`` yet: the case file was being read, a check loaded)."""
    if not os.path.exists(os.path.join(out, SUMMARY)):
        return f"{how} before the run started; nothing was written to {out}"
    return f"{how}; {out} keeps what was written (run again to resume)"


def _run(args: argparse.Namespace, err: TextIO) -> dict[str, Any]:
    termination = _Termination()
    with _terminating(termination):
        try:
            return _set_up_and_run(args, err, termination)
        except asyncio.CancelledError:  # the run's task, cancelled by SIGTERM
            if termination.finished is not None:
                return termination.finished
            if termination.received:
                raise _Terminated from None
            raise
        except KeyboardInterrupt:  # Ctrl-C, which cancels the run's task as it awaits
            if termination.finished is not None:
                return termination.finished
            raise


def _set_up_and_run(args: argparse.Namespace, err: TextIO,
                    termination: _Termination) -> dict[str, Any]:
    try:
        _paths_named(args)
        _outputs_apart(args)
        checks = [load_check(spec) for spec in args.checks]
        prices = _prices(args.prices)
        budget = _checked_flags(args, prices)
        cases = load_cases(args.cases)
        for case in cases.unreadable():
            err.write(f"tracebridge run: {args.cases}: {case.place()} "
                      f"(case {one_line(case.case_id)}): "
                      f"the transcript cannot be used: {case.transcript_error}; the case is "
                      "blocked\n")
        runner = _runner(args, cases, checks, budget, err)
        return asyncio.run(_go(runner, termination))
    except (UnreadableInput, CheckError, RecordError, CacheError, UsageError,
            MissingExtraError, ValueError, OSError) as exc:
        raise _Unusable(str(exc)) from None


def _paths_named(args: argparse.Namespace) -> None:
    """Refuse an empty ``--out`` or ``--cache`` (a variable not set): the empty path would be
    the current directory, whose files the run would write over."""
    if not args.out:
        raise UsageError("--out is empty: give the run directory")
    if not args.cache and not args.no_cache:  # (with --no-cache, --cache is not read)
        raise UsageError("--cache is empty: give the cache file (or --no-cache)")


def _prices(texts: list[str]) -> dict[str, Price]:
    """The ``--price`` flags by model; two for one model are refused (which is meant is not
    known)."""
    prices: dict[str, Price] = {}
    given: dict[str, str] = {}
    for text in texts:
        model, price = parse_price(text)
        if model in prices:
            raise UsageError(f"--price {given[model]} and --price {text} both price {model}; "
                             "give one price per model")
        prices[model], given[model] = price, text
    return prices


def _outputs_apart(args: argparse.Namespace) -> None:
    """Refuse a CASES or --cache that is a file the run writes in RUN_DIR (``cases.jsonl``
    is rewritten as the run goes: the case file would be lost)."""
    written = [("the run's", os.path.join(args.out, name))
               for name in (CASES, RESULTS, SUMMARY, SPENT)]
    for flag, path in (("CASES", args.cases), ("--cache", None if args.no_cache else args.cache)):
        clash = same_file(path, written)
        if clash is not None:
            raise UsageError(f"{flag} {clash}")
    if not args.no_cache:
        clash = same_file(args.cache, [("CASES", args.cases)])
        if clash is not None:
            raise UsageError(f"--cache {clash}")


def _notice(err: TextIO) -> Callable[[str], object]:
    """A one-line notice on stderr."""
    return lambda text: err.write(f"tracebridge run: {text}\n")


async def _go(runner: Runner, termination: _Termination) -> dict[str, Any]:
    termination.attach()
    try:
        termination.finished = await runner.run()
        return termination.finished
    finally:
        termination.detach()
        try:
            close = getattr(runner.judge, "aclose", None)
            if close is not None:
                await close()
        finally:  # an interrupt taken while the judge closes leaves the cache to close too
            runner.cache.close()


def _checked_flags(args: argparse.Namespace, prices: dict[str, Price]) -> Budget:
    """Refuse a flag out of its range, judge flags that make no judge (``--model`` missing
    for a judged metric, no API key) and a budget the judge cannot keep (a cost limit
    without its model's price), before the case file is read; the run's budget."""
    if args.concurrency < 1:
        raise UsageError(f"--concurrency must be 1 or more, got {args.concurrency}")
    if args.retries < 0:
        raise UsageError(f"--retries must be 0 or more, got {args.retries}")
    if not math.isfinite(args.timeout) or args.timeout <= 0:
        raise UsageError(f"--timeout must be a finite number more than 0, got {args.timeout}")
    if not 0.0 <= args.pass_threshold <= 1.0:  # (nan too: no value is below it, all pass)
        raise UsageError(f"--pass-threshold must be from 0 to 1, got {args.pass_threshold}")
    for flag, limit in (("--max-requests", args.max_requests), ("--max-tokens", args.max_tokens)):
        if limit is not None and limit < 0:
            shown = limit if limit > -(10**30) else count_text(limit)
            raise UsageError(f"{flag} must be 0 or more, got {shown}")
        if limit is not None and limit > MAX_LIMIT:
            raise UsageError(f"{flag} must be at most {MAX_LIMIT:,}, got {count_text(limit)}")
    if args.max_cost is not None and not (math.isfinite(args.max_cost) and args.max_cost >= 0):
        raise UsageError(f"--max-cost must be a finite number, 0 or more, got {args.max_cost}")
    budget = Budget(args.max_requests, args.max_tokens, args.max_cost, prices)
    try:
        if metrics_cli.judge_key(args) is not None:
            check_priced(budget, args.model)
    except metrics_cli._Unusable as exc:
        raise UsageError(str(exc)) from None
    except ValueError as exc:  # a cost limit without the model's price
        raise UsageError(str(exc)) from None
    return budget


def _runner(args: argparse.Namespace, cases: CaseSet, checks: list[UserCheck],
            budget: Budget, err: TextIO) -> Runner:
    judge = _judge(args)
    cache = NoCache() if args.no_cache else ResultCache(args.cache)
    settings = RunSettings(
        concurrency=args.concurrency,
        continue_on_control_failure=args.continue_on_control_failure,
        allow_partial=args.allow_partial,
        pass_threshold=args.pass_threshold,
    )
    try:
        return Runner(cases, args.metrics, RunRecord(args.out, _notice(err)),
                      judge=judge, model=args.model,
                      budget=budget, cache=cache, user_checks=checks, settings=settings)
    except UsageError:
        cache.close()
        raise


def _judge(args: argparse.Namespace) -> OpenAIJudge | None:
    """The judge ``score`` would build, its client and its answers retried ``--retries``
    times."""
    try:
        judge = metrics_cli._judge(args)  # the same flags, read the same way
    except metrics_cli._Unusable as exc:
        raise UsageError(str(exc)) from None
    if judge is not None:
        judge.client = judge.client.with_options(max_retries=args.retries)
        judge.max_retries = args.retries
    return judge


def _report(summary: dict[str, Any], out: str) -> str:
    counts = ", ".join(f"{count} {state}" for state, count in summary["counts"].items() if count)
    usage = summary["usage"]
    cost = "" if summary["cost"] is None else f", ${summary['cost']:.4f}"
    return (f"{summary['status']}: {counts or 'no cases'}; judge: {usage['requests']} "
            f"request(s), {usage['prompt_tokens']} + {usage['completion_tokens']} tokens{cost}; "
            f"{out}/summary.json\n")
