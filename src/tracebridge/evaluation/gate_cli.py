"""``tracebridge gate``, ``calibrate`` and ``report``: decisions and views of a run directory.

    tracebridge gate RUN_DIR --policy POLICY.toml [--junit FILE] [--markdown FILE]
    tracebridge calibrate RUN_DIR [--json] [--cases FILE]
    tracebridge report RUN_DIR -o report.html [--policy POLICY.toml] [--cases FILE]

``gate`` exit codes: 0 passed, 1 quality failed, 2 incomplete, 3 review required (see
``evaluation.gate`` for the precedence), 4 the gate cannot be evaluated (an unusable RUN_DIR,
policy or flag, or an output that cannot be written). ``calibrate`` and ``report`` exit 0,
or 4 when they cannot read what they need or write what they make; ``calibrate`` exits 2 on
a run not finished (its figures are of the settled cases only). An output file ``-`` is
standard output (``report -o -``; ``gate --junit -`` or ``--markdown -``, which stdout then
holds instead of the blockers). Errors are one line each on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
from typing import Any, NoReturn, TextIO

EXIT_UNUSABLE = 4
EXIT_NOT_FINISHED = 2
"""``calibrate`` on a run not finished (the gate's exit status for it)."""


def _usage_exits_4(parser: argparse.ArgumentParser) -> None:
    """A wrong flag, a missing one or a word too many exits 4 with one line, like any
    unusable request (argparse would exit 2: incomplete)."""

    def error(message: str) -> NoReturn:
        from .gate import one_line

        parser.exit(EXIT_UNUSABLE, f"{parser.prog}: error: {one_line(message)}\n")

    parser.error = error  # type: ignore[method-assign]


def configure_gate(parser: argparse.ArgumentParser) -> None:
    """Add the ``gate`` arguments to ``parser``."""
    _usage_exits_4(parser)
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (tracebridge run)")
    parser.add_argument("--policy", required=True, metavar="POLICY.toml",
                        help="the release policy (TOML; see docs/gate.md)")
    parser.add_argument("--junit", metavar="FILE", help="also write JUnit XML here")
    parser.add_argument("--markdown", metavar="FILE",
                        help="also write a Markdown summary here (e.g. $GITHUB_STEP_SUMMARY)")


def configure_calibrate(parser: argparse.ArgumentParser) -> None:
    """Add the ``calibrate`` arguments to ``parser``."""
    _usage_exits_4(parser)
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (tracebridge run)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of tables")
    _cases_flag(parser)


def configure_report(parser: argparse.ArgumentParser) -> None:
    """Add the ``report`` arguments to ``parser``."""
    _usage_exits_4(parser)
    parser.add_argument("run_dir", metavar="RUN_DIR", help="a run directory (tracebridge run)")
    parser.add_argument("-o", "--output", required=True, metavar="FILE",
                        help="the HTML file to write")
    parser.add_argument("--policy", metavar="POLICY.toml",
                        help="the release policy, for the gate decision in the report")
    _cases_flag(parser)


def _cases_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--cases", metavar="FILE",
                        help="the run's case file, when it is no longer where summary.json "
                        "says (it must be the same file: same manifest hash)")


def cmd_gate(args: argparse.Namespace, streams: Any) -> int:
    """Decide on the run; blockers on stdout, one per line, sorted (unless ``--junit`` or
    ``--markdown`` writes its document there: ``-``, ``/dev/stdout``...); the decision on
    stderr. Output that cannot be
    written makes the gate unusable (exit 4): no decision was delivered."""
    from .gate import decide
    from .gate_output import junit_xml, markdown
    from .policy import PolicyError, load_policy
    from .rundir import RunDirError, read_run

    err: TextIO = streams.stderr
    stdout: TextIO = streams.stdout
    try:
        _apart([("--junit", args.junit), ("--markdown", args.markdown)], args)
        policy = load_policy(args.policy)
        run = read_run(args.run_dir)
        decision = decide(run, policy)
        if args.junit is not None:
            _write(args.junit, junit_xml(run, policy, decision), stdout)
        if args.markdown is not None:
            _write(args.markdown, markdown(run, policy, decision), stdout)
        # standard output is a document's (however named), blockers and all
        if not any(path is not None and _on_stdout(path) for path in (args.junit, args.markdown)):
            _print(stdout, "".join(f"{blocker}\n" for blocker in decision.blockers))
    except BrokenPipeError:
        raise  # the reader of stdout went away: exit 141, as for every command
    except (PolicyError, RunDirError, _OutputRefused, OSError) as exc:
        err.write(_failed("gate", exc))
        return EXIT_UNUSABLE
    err.write(f"tracebridge gate: {decision.name} (exit {decision.exit_code}): "
              f"{len(decision.blockers)} blocker(s)\n")
    return decision.exit_code


def cmd_calibrate(args: argparse.Namespace, streams: Any) -> int:
    """Calibration tables on stdout (JSON with ``--json``)."""
    from .calibrate import calibrate, tables, unfinished_line
    from .rundir import RunDirError, read_run

    try:
        run = read_run(args.run_dir)
        calibration = calibrate(run, run.case_file(args.cases))
        if args.json:
            _print(streams.stdout, json.dumps(calibration, indent=2, ensure_ascii=False) + "\n")
        else:
            _print(streams.stdout, tables(calibration))
    except BrokenPipeError:
        raise
    except (RunDirError, OSError) as exc:
        streams.stderr.write(_failed("calibrate", exc))
        return EXIT_UNUSABLE
    if not calibration["finished"]:  # partial figures are not the run's: as the gate says
        streams.stderr.write(f"tracebridge calibrate: {unfinished_line(calibration)}\n")
        return EXIT_NOT_FINISHED
    return 0


def cmd_report(args: argparse.Namespace, streams: Any) -> int:
    """Write the HTML report (``-o -``: on stdout)."""
    from .calibrate import calibrate
    from .gate import decide
    from .policy import PolicyError, load_policy
    from .report import report_html
    from .rundir import RunDirError, read_run

    try:
        _apart([("-o", args.output)], args)
        policy = None if args.policy is None else load_policy(args.policy)
        run = read_run(args.run_dir)
        cases = run.case_file(args.cases)
        _apart([("-o", args.output)], args, cases.path)
        decision = None if policy is None else decide(run, policy)
        page = report_html(run, cases, calibrate(run, cases), policy, decision)
        _write(args.output, page, streams.stdout)
    except BrokenPipeError:
        raise
    except (PolicyError, RunDirError, _OutputRefused, OSError) as exc:
        streams.stderr.write(_failed("report", exc))
        return EXIT_UNUSABLE
    wrote = "standard output" if args.output == "-" else args.output
    streams.stderr.write(f"tracebridge report: wrote {wrote}\n")
    return 0


def _failed(command: str, exc: Exception) -> str:
    """Why ``command`` cannot be done, one line on stderr: what a damaged RUN_DIR or a policy
    holds (a metric name, a key) is quoted with its control characters as escapes."""
    from .gate import one_line

    return f"tracebridge {command}: {one_line(str(exc))}\n"


class _OutputRefused(Exception):
    """An output flag names a file the command reads, or no file at all (one line)."""


def _apart(outputs: list[tuple[str, str | None]], args: argparse.Namespace,
           case_file: str | os.PathLike[str] | None = None) -> None:
    """Refuse an output that is the policy, a file of RUN_DIR, the case file, or another
    output: it would be overwritten."""
    from .._cli_output import same_file
    from .record import CASES, RESULTS, SPENT, SUMMARY

    inputs: list[tuple[str, str | None]] = [("--policy", args.policy)]
    inputs += [("the run's", os.path.join(args.run_dir, name))
               for name in (SUMMARY, CASES, RESULTS, SPENT)]
    inputs.append(("the case file", None if case_file is None else os.fspath(case_file)))
    for flag, path in outputs:
        if path == "":  # a variable not set: no document would be delivered, and none said so
            raise _OutputRefused(f"{flag} is empty: give a file, or - for standard output")
    for number, (flag, path) in enumerate(outputs):
        later = outputs[number + 1:]
        shared = _sharing_stdout(path, later)
        if shared is not None:
            raise _OutputRefused(f"{flag} {path} and {shared[0]} {shared[1]} both name "
                                 "standard output; give a file for one")
        clash = same_file(path, [*inputs, *later])
        if clash is not None:
            raise _OutputRefused(f"{flag} {clash}")


def _sharing_stdout(
    path: str | None, later: list[tuple[str, str | None]]
) -> tuple[str, str] | None:
    """The first of ``later`` (flag, path) that writes standard output as ``path`` does, one
    of the two given as ``-``: ``/dev/stdout``, ``/proc/self/fd/1`` and the file standard
    output is redirected to are ``-`` too (the second document would be written over the
    first, or the first truncated away)."""
    if path is None:
        return None
    for flag, other in later:
        if other is not None and "-" in (path, other) and _on_stdout(path) and _on_stdout(other):
            return flag, other
    return None


def _on_stdout(path: str) -> bool:
    """Whether an output ``path`` is standard output: ``-``, or the file it writes."""
    if path == "-":
        return True
    try:
        return os.path.samestat(os.stat(path), os.fstat(1))
    except (OSError, ValueError):  # not there yet, or no standard output
        return False


def _write(path: str, text: str, stdout: TextIO) -> None:
    """Write an output file (``-``: stdout); ``OSError`` naming it when that fails."""
    # JSON_SAFE: a lone surrogate (from a JSON escape) is written as that escape, as on stdout
    from .._cli_output import JSON_SAFE, os_reason

    if path == "-":
        _print(stdout, text)
        return
    try:
        with open(path, "w", encoding="utf-8", errors=JSON_SAFE) as out:
            out.write(text)
    except OSError as exc:
        raise OSError(f"cannot write {path}: {os_reason(exc)}") from None


def _print(stdout: TextIO, text: str) -> None:
    """Write on stdout, flushed: a full disk is found here, not after the exit status is
    decided."""
    stdout.write(text)
    stdout.flush()
