"""A run as one self-contained HTML page: the gate decision, the slices, the calibration and
every case a person has to look at.

The page needs nothing outside itself: its CSS and its script are inline, it loads no font,
image or script from anywhere (its Content-Security-Policy forbids every fetch), and every
text from the run (case ids, reasons, transcripts) is HTML-escaped. Sections, in order:

* the run: status, counts, judge, cost, versions, manifest hash;
* the gate: the decision and its blockers (when a policy was given);
* slices: one bar per slice, its passed / failed / blocked / errored / unrun / review counts;
* calibration: per goal metric, the judge-vs-human confusion table and the figures per slice;
* cases: every failed, blocked and review case with its transcript as ``tracebridge.render``
  writes it (tool calls and results visible), each metric's verdict and the judge's reason,
  and the human label; then every errored and unrun case, with why.
"""

from __future__ import annotations

import html
import json
from collections import Counter
from typing import Any

from ..render import render
from .calibrate import ALL, CONFUSION, unfinished_line
from .cases import CaseSet, LoadedCase
from .gate import Decision, slice_name
from .outcome import STATES
from .policy import Policy
from .rundir import CaseRow, RunDir

__all__ = ["SHOWN_STATES", "report_html"]

SHOWN_STATES = ("failed", "blocked", "review")
"""The states whose cases the report shows whole."""

_CSS = """
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;max-width:1100px;padding:1rem 2rem;
color:#1d1d1f;background:#fff}
h1{font-size:1.5rem}h2{font-size:1.2rem;border-bottom:1px solid #ddd;padding-bottom:.2rem;
margin-top:2rem}h3{font-size:1rem;margin-bottom:.3rem}
table{border-collapse:collapse;margin:.4rem 0}td,th{border:1px solid #ccc;padding:.2rem .5rem;
text-align:left}td.n,th.n{text-align:right}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.1rem 1rem}dt{font-weight:600}
dd{margin:0;overflow-wrap:anywhere}
.decision{display:inline-block;padding:.3rem .8rem;border-radius:4px;font-weight:700;color:#fff}
.d0{background:#1a7f37}.d1{background:#cf222e}.d2{background:#9a6700}.d3{background:#8250df}
.bar{display:flex;height:1.4rem;width:100%;border:1px solid #bbb;border-radius:3px;
overflow:hidden}.bar span{display:block;height:100%}
.s-passed{background:#2da44e}.s-failed{background:#cf222e}.s-blocked{background:#57606a}
.s-errored{background:#bc4c00}.s-unrun{background:#d0d7de}.s-review{background:#8250df}
.legend span{display:inline-block;margin-right:1rem}.legend i{display:inline-block;width:.8rem;
height:.8rem;margin-right:.3rem;vertical-align:middle}
.slice{margin:.8rem 0}.case{border:1px solid #ccc;border-radius:4px;margin:1rem 0;
padding:.5rem 1rem}.case h3{margin-top:.2rem}.badge{color:#fff;padding:0 .4rem;
border-radius:3px;font-size:.85rem}
pre.transcript{background:#f6f8fa;padding:.6rem;overflow-x:auto;white-space:pre-wrap;
overflow-wrap:anywhere}.call{color:#0550ae;font-weight:600}.result{color:#953800}
ul.blockers li{font-family:ui-monospace,monospace;font-size:.9rem}
button{margin:.2rem .4rem .2rem 0}
"""

_SCRIPT = """
document.querySelectorAll('button[data-state]').forEach(function (button) {
  button.addEventListener('click', function () {
    var state = button.getAttribute('data-state');
    document.querySelectorAll('section.case').forEach(function (section) {
      section.hidden = state !== 'all' && section.getAttribute('data-state') !== state;
    });
  });
});
"""

_CSP = ("default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'; "
        "img-src data:; base-uri 'none'; form-action 'none'")


def _e(value: object) -> str:
    # A lone surrogate (read from a JSON escape) has no UTF-8 spelling: the page shows it as
    # its escape, as `tracebridge show` prints it.
    text = html.escape(str(value), quote=True)
    return text if text.isascii() else text.encode("utf-8", "backslashreplace").decode("utf-8")


def report_html(run: RunDir, cases: CaseSet, calibration: dict[str, Any],
                policy: Policy | None, decision: Decision | None) -> str:
    """The whole page."""
    loaded = {case.case_id: case for case in cases.cases}
    body = [
        f"<h1>tracebridge run report: {_e(run.path.name)}</h1>",
        _facts(run),
        _gate(decision),
        _slices(run, policy),
        _calibration(calibration),
        _cases(run, loaded),
    ]
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{_CSP}\">"
        "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
        f"<title>tracebridge report: {_e(run.path.name)}</title><style>{_CSS}</style>"
        "</head><body>\n" + "\n".join(body) + f"\n<script>{_SCRIPT}</script>\n</body></html>\n"
    )


def _facts(run: RunDir) -> str:
    summary = run.summary
    raw = run.raw_summary
    judge = summary.judge or {}
    usage = summary.usage
    if run.finished:
        counts = ", ".join(f"{summary.counts.get(state, 0)} {state}" for state in STATES)
    else:  # the settled cases by state, then those the run has not come to yet
        found = Counter(row.state for row in run.cases)
        counts = ", ".join([*(f"{found[state]} {state}" for state in STATES),
                            f"{run.unsettled} unsettled (the run has not finished)"])
    rows = [
        ("status", summary.status),
        ("stopped", summary.stopped or "-"),
        ("cases", f"{summary.cases}: {counts}"),
        ("metrics", ", ".join(f"{name} ({version})" for name, version
                              in summary.metrics.items())),
        ("judge", judge.get("name", "none")),
        ("usage", f"{usage.get('requests', 0)} request(s), {usage.get('prompt_tokens', 0)} + "
                  f"{usage.get('completion_tokens', 0)} tokens"),
        ("cost", f"${summary.cost:.4f}" if summary.cost is not None and
         summary.cost_unknown is None else f"unknown ({summary.cost_unknown})"),
        ("case file", summary.case_file),
        ("manifest", summary.manifest_hash),
        ("versions", f"tracebridge {summary.tracebridge}, {raw.get('python', '?')}"),
        ("time", f"{raw.get('started_at') or '?'} to "
                 f"{raw.get('finished_at') or 'not finished'}"),
    ]
    items = "".join(f"<dt>{_e(k)}</dt><dd id=\"fact-{_e(k.replace(' ', '-'))}\">{_e(v)}</dd>"
                    for k, v in rows)
    return f"<section id=\"run\"><h2>Run</h2><dl class=\"facts\">{items}</dl></section>"


def _gate(decision: Decision | None) -> str:
    if decision is None:
        return ("<section id=\"gate\"><h2>Gate</h2><p id=\"decision\">no policy given: no "
                "gate decision (tracebridge report --policy POLICY.toml)</p></section>")
    blockers = "".join(f"<li>{_e(blocker)}</li>" for blocker in decision.blockers)
    listed = (f"<h3>{len(decision.blockers)} blocker(s)</h3><ul class=\"blockers\" "
              f"id=\"blockers\">{blockers}</ul>" if blockers else "<p>No blockers.</p>")
    return (f"<section id=\"gate\"><h2>Gate</h2><p><span id=\"decision\" class=\"decision "
            f"d{decision.exit_code}\">{_e(decision.name)} (exit {decision.exit_code})</span>"
            f"</p>{listed}</section>")


def _slices(run: RunDir, policy: Policy | None) -> str:
    counts: dict[str, Counter[str]] = {}
    for row in run.cases:
        counts.setdefault(slice_name(row), Counter())[row.state] += 1
    legend = "".join(f"<span><i class=\"s-{state}\"></i>{state}</span>" for state in STATES)
    parts = [f"<section id=\"slices\"><h2>Slices</h2><p class=\"legend\">{legend}</p>"]
    for index, (name, found) in enumerate(sorted(counts.items())):
        total = sum(found.values())
        limit = None if policy is None else policy.slices.get(name)
        said = "" if policy is None else (" (no policy)" if limit is None
                                          else f" (failure limit {limit.max_failures})")
        segments = "".join(
            f"<span class=\"s-{state}\" style=\"width:{100 * found[state] / total:.4f}%\" "
            f"title=\"{state}: {found[state]}\"></span>" for state in STATES if found[state])
        cells = "".join(f"<td class=\"n\" data-state=\"{state}\">{found[state]}</td>"
                        for state in STATES)
        parts.append(
            f"<div class=\"slice\" id=\"slice-{index}\" data-slice=\"{_e(name)}\"><h3>"
            f"{_e(name or '(no slice)')}: {total} case(s){_e(said)}</h3>"
            f"<div class=\"bar\" role=\"img\" aria-label=\"{_e(name)}\">{segments}</div>"
            f"<table><tr>{''.join(f'<th class=n>{s}</th>' for s in STATES)}</tr>"
            f"<tr>{cells}</tr></table></div>")
    parts.append("</section>")
    return "".join(parts)


def _calibration(calibration: dict[str, Any]) -> str:
    parts = ["<section id=\"calibration\"><h2>Calibration against human labels</h2>",
             f"<p>{calibration['labelled_cases']} labelled case(s).</p>"]
    if not calibration["finished"]:
        parts.append(f"<p id=\"calibration-unfinished\">{_e(unfinished_line(calibration))}.</p>")
    for metric, groups in calibration["metrics"].items():
        whole = groups["slices"][ALL]
        both, false_ach, false_fail, neither = (whole[key] for key in CONFUSION)
        parts.append(
            f"<h3>{_e(metric)}</h3><table class=\"confusion\" data-metric=\"{_e(metric)}\">"
            "<tr><th></th><th>human: achieved</th><th>human: not achieved</th></tr>"
            f"<tr><th>judge: achieved</th><td class=\"n\">{both}</td>"
            f"<td class=\"n\">{false_ach}</td></tr>"
            f"<tr><th>judge: not achieved</th><td class=\"n\">{false_fail}</td>"
            f"<td class=\"n\">{neither}</td></tr></table>")
        header = ("slice", "count", "scored", "agreement", "false achievements",
                  "false failures", "evaluator errors", "kappa")
        rows = "".join(
            f"<tr><td>{_e(name)}</td>" + "".join(
                f"<td class=\"n\">{_figure(figures[key])}</td>"
                for key in ("count", "scored", "agreement_rate", "false_achievements",
                            "false_failures", "evaluator_errors", "kappa")) + "</tr>"
            for name, figures in groups["slices"].items())
        parts.append("<table><tr>" + "".join(f"<th>{h}</th>" for h in header) + f"</tr>{rows}"
                     "</table>")
    if not calibration["metrics"]:
        parts.append("<p>The run has no goal metric to compare with the labels.</p>")
    parts.append("</section>")
    return "".join(parts)


def _figure(value: Any) -> str:
    if value is None:
        return "-"
    return f"{value:.3f}" if isinstance(value, float) else str(value)


def _cases(run: RunDir, loaded: dict[str, LoadedCase]) -> str:
    shown = [row for row in run.cases if row.state in SHOWN_STATES]
    buttons = "".join(f"<button type=\"button\" data-state=\"{s}\">{s}</button>"
                      for s in ("all", *SHOWN_STATES))
    parts = [f"<section id=\"cases\"><h2>Cases to look at ({len(shown)})</h2>",
             f"<p>Show: {buttons}</p>" if shown else "<p>None.</p>"]
    parts += [_case(run, row, loaded.get(row.case_id)) for row in shown]
    rest = [(row.case_id, row.state, "; ".join(row.reasons))
            for row in run.cases if row.state in ("errored", "unrun")]
    settled = {row.case_id for row in run.cases}
    unsettled = [(case_id, "unsettled", "the run has not finished: no state yet (resume it)")
                 for case_id in loaded if case_id not in settled]
    if rest or unsettled:
        items = "".join(f"<tr><td>{_e(case_id)}</td><td>{state}</td><td>{_e(why)}</td></tr>"
                        for case_id, state, why in [*rest, *unsettled])
        title = "Errored, unrun and unsettled" if unsettled else "Errored and unrun"
        parts.append(f"<h3 id=\"not-scored\">{title} ({len(rest) + len(unsettled)})</h3>"
                     f"<table><tr><th>case</th><th>state</th><th>why</th></tr>{items}</table>")
    parts.append("</section>")
    return "".join(parts)


def _case(run: RunDir, row: CaseRow, case: LoadedCase | None) -> str:
    facts = [f"slice {_e(row.slice or '(no slice)')}", row.place()]
    if row.critical:
        facts.append("critical")
    if row.control is not None:
        facts.append(f"control {_e(row.control.role)}: expected {_e(row.control.expected)}, "
                     f"came out {_e(row.control.outcome or '-')}")
    reasons = "".join(f"<li>{_e(reason)}</li>" for reason in row.reasons)
    verdicts = []
    for metric in run.metrics_of(row):
        result = run.result_of(row, metric)
        if result is None:
            verdicts.append(f"<tr><td>{_e(metric)}</td><td>no result</td><td></td></tr>")
            continue
        value = "no value" if result.value is None else f"{result.value:g}"
        why = result.reason if result.error is None else f"error: {result.error}"
        verdicts.append(f"<tr><td>{_e(metric)}</td><td class=\"n verdict\">{_e(value)}</td>"
                        f"<td class=\"judge-reason\">{_e(why or '')}</td></tr>")
    label = None if case is None else case.case.human_adjudication
    human = "none" if label is None else (
        ("achieved" if label.goal_achieved else "not achieved")
        + (f": {label.reason}" if label.reason else ""))
    table = ("<table><tr><th>metric</th><th>verdict</th><th>judge's reason</th></tr>"
             + "".join(verdicts) + "</table>") if verdicts else ""
    return (
        f"<section class=\"case\" id=\"case-{_e(row.case_id)}\" data-state=\"{row.state}\">"
        f"<h3>{_e(row.case_id)} <span class=\"badge s-{row.state}\">{row.state}</span></h3>"
        f"<p>{'; '.join(facts)}</p><ul class=\"reasons\">{reasons}</ul>{table}"
        f"<p class=\"human\">human label: {_e(human)}</p>{_transcript(case)}</section>"
    )


def _transcript(case: LoadedCase | None) -> str:
    if case is None:
        return "<p>the case is not in the case file</p>"
    if case.messages is None:
        raw = json.dumps(case.case.transcript, indent=1, ensure_ascii=False)
        return (f"<p>the transcript could not be read: {_e(case.transcript_error)}</p>"
                f"<pre class=\"transcript\">{_e(raw)}</pre>")
    lines = []
    for line in render(case.messages).split("\n"):
        text = _e(line)
        if line.startswith("    -> "):
            text = f"<span class=\"call\">{text}</span>"
        elif line.startswith("[") and "] tool" in line.split(":", 1)[0]:
            text = f"<span class=\"result\">{text}</span>"
        lines.append(text)
    return f"<pre class=\"transcript\">{chr(10).join(lines)}</pre>"
