"""``tracebridge gate``, ``calibrate`` and ``report``: decisions and views of a run directory.

    tracebridge gate RUN_DIR --policy POLICY.toml [--junit FILE] [--markdown FILE]
    tracebridge calibrate RUN_DIR [--json] [--cases FILE]
    tracebridge report RUN_DIR -o report.html [--policy POLICY.toml] [--cases FILE]

``gate`` exit codes: 0 passed, 1 quality failed, 2 incomplete, 3 review required (see
``evaluation.gate`` for the precedence), 4 the gate cannot be evaluated (an unusable RUN_DIR,
policy or flag). ``calibrate`` and ``report`` exit 0, or 4 when they cannot read what they
need; ``calibrate`` exits 2 on a run not finished (its figures are of the settled cases
only). Errors are one line each on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any, NoReturn, TextIO

EXIT_UNUSABLE = 4
EXIT_NOT_FINISHED = 2
"""``calibrate`` on a run not finished (the gate's exit status for it)."""


def _usage_exits_4(parser: argparse.ArgumentParser) -> None:
    """A wrong flag exits 4 like any unusable request (argparse would exit 2: incomplete)."""

    def error(message: str) -> NoReturn:
        parser.print_usage(sys.stderr)
        parser.exit(EXIT_UNUSABLE, f"{parser.prog}: error: {message}\n")

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
    """Decide on the run; blockers on stdout, one per line, sorted; the decision on stderr."""
    from .gate import decide
    from .gate_output import junit_xml, markdown
    from .policy import PolicyError, load_policy
    from .rundir import RunDirError, read_run

    err: TextIO = streams.stderr
    try:
        _apart([("--junit", args.junit), ("--markdown", args.markdown)], args)
        policy = load_policy(args.policy)
        run = read_run(args.run_dir)
        decision = decide(run, policy)
        if args.junit:
            _write(args.junit, junit_xml(run, policy, decision))
        if args.markdown:
            _write(args.markdown, markdown(run, policy, decision))
    except (PolicyError, RunDirError, _SameFile, OSError) as exc:
        err.write(f"tracebridge gate: {exc}\n")
        return EXIT_UNUSABLE
    for blocker in decision.blockers:
        streams.stdout.write(f"{blocker}\n")
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
    except RunDirError as exc:
        streams.stderr.write(f"tracebridge calibrate: {exc}\n")
        return EXIT_UNUSABLE
    if args.json:
        streams.stdout.write(json.dumps(calibration, indent=2, ensure_ascii=False) + "\n")
    else:
        streams.stdout.write(tables(calibration))
    if not calibration["finished"]:  # partial figures are not the run's: as the gate says
        streams.stderr.write(f"tracebridge calibrate: {unfinished_line(calibration)}\n")
        return EXIT_NOT_FINISHED
    return 0


def cmd_report(args: argparse.Namespace, streams: Any) -> int:
    """Write the HTML report."""
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
        _write(args.output, page)
    except (PolicyError, RunDirError, _SameFile, OSError) as exc:
        streams.stderr.write(f"tracebridge report: {exc}\n")
        return EXIT_UNUSABLE
    streams.stderr.write(f"tracebridge report: wrote {args.output}\n")
    return 0


class _SameFile(Exception):
    """An output flag names a file the command reads (one line)."""


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
    for number, (flag, path) in enumerate(outputs):
        clash = same_file(path, [*inputs, *outputs[number + 1:]])
        if clash is not None:
            raise _SameFile(f"{flag} {clash}")


def _write(path: str, text: str) -> None:
    # JSON_SAFE: a lone surrogate (from a JSON escape) is written as that escape, as on stdout
    from .._cli_output import JSON_SAFE

    with open(path, "w", encoding="utf-8", errors=JSON_SAFE) as out:
        out.write(text)
