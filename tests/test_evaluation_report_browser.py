"""The report in a real headless Chromium (the system's package, driven by playwright): it loads
with no console error and no request beyond itself, shows the run's numbers, runs its script,
executes nothing from the run, and a screenshot is taken.

Under CI (``CI`` set) a missing Chromium or playwright fails the test; elsewhere it is skipped,
with the reason. ``.ci/run`` installs Chromium with apt-get.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from cli_helpers import run
from evaluation_helpers import WITH_REFERENCE
from fake_openai_server import FakeOpenAI
from gate_helpers import FAILED_TOOL, TICKET, report_run

from tracebridge.evaluation.roles import to_messages
from tracebridge.render import render

ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]


def _unavailable(reason: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{reason} (CI must run the browser test: see .ci/run)")
    pytest.skip(reason)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    chromium = shutil.which("chromium") or "/usr/bin/chromium"
    if not Path(chromium).exists():
        _unavailable("no Chromium: apt-get install chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("no playwright: pip install -e '.[test]'")
    with sync_playwright() as driver:
        launched = driver.chromium.launch(executable_path=chromium, args=ARGS)
        yield launched
        launched.close()


def test_the_report_in_chromium(tmp_path: Path, server: FakeOpenAI, browser: Any) -> None:
    # playwright's sync API keeps an event loop in this thread; the run wants its own
    with ThreadPoolExecutor(1) as thread:
        out, policy = thread.submit(report_run, tmp_path, server).result()
    page_file = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(page_file), "--policy", str(policy))[0] == 0
    _, blockers, _ = run("gate", str(out), "--policy", str(policy))
    summary = json.loads((out / "summary.json").read_text())

    page = browser.new_page(viewport={"width": 1200, "height": 900})
    problems: list[str] = []
    requests: list[str] = []
    dialogs: list[str] = []
    page.on("console", lambda message: message.type in ("error", "warning")
            and problems.append(f"{message.type}: {message.text}"))
    page.on("pageerror", lambda error: problems.append(f"pageerror: {error}"))
    page.on("request", lambda request: requests.append(request.url))
    page.on("dialog", lambda dialog: (dialogs.append(dialog.message), dialog.dismiss()))
    url = page_file.as_uri()
    page.goto(url)
    page.wait_for_load_state("load")

    assert problems == []
    assert requests == [url]  # the page itself, nothing else

    # the gate
    assert page.inner_text("#decision") == "quality failed (exit 1)"
    assert page.locator("#blockers li").all_inner_texts() == blockers.splitlines()
    assert blockers.splitlines() == [
        "cases_unrun: run: 1 case(s) unrun, over the limit of 0 (later)",
        "evaluator_errors: run: 1 evaluator error(s), over the limit of 0 (errored)",
        "receipt_not_verified: blocked: expect ticket_id: expected present, but "
        "domain_evidence has no such field",
        f"review_required: review: {WITH_REFERENCE} says achieved; the human label says not "
        "achieved",
    ]

    # the run's numbers: the facts, and each slice's counts as summary.json has them
    assert page.inner_text("#fact-status") == "incomplete"
    assert page.inner_text("#fact-cases") == (
        "7: 2 passed, 1 failed, 1 blocked, 1 errored, 1 unrun, 1 review")
    assert page.inner_text("#fact-usage") == "5 request(s), 400 + 80 tokens"
    shown = {}
    for block in page.locator("div.slice").all():
        cells = block.locator("td[data-state]")
        shown[block.get_attribute("data-slice")] = {
            cells.nth(i).get_attribute("data-state"): int(cells.nth(i).inner_text())
            for i in range(cells.count())}
    assert shown == summary["slices"]
    assert shown["refunds"] == {"passed": 0, "failed": 1, "blocked": 0, "errored": 1,
                                "unrun": 1, "review": 0}
    assert page.locator("div.slice h3").all_inner_texts() == [
        "refunds: 3 case(s) (failure limit 1)", "tickets: 4 case(s) (failure limit 0)"]
    bar = page.locator("div.slice").nth(0).locator(".bar span")
    widths = [bar.nth(i).bounding_box()["width"] for i in range(bar.count())]
    assert len(widths) == 3
    assert widths[0] == pytest.approx(widths[1], abs=1) == pytest.approx(widths[2], abs=1)

    # the calibration's confusion table: fail (judge 0, human 0), review (judge 1, human 0)
    table = page.locator(f"table.confusion[data-metric='{WITH_REFERENCE}'] td")
    assert table.all_inner_texts() == ["0", "1", "0", "1"]

    # the cases to look at, each with its transcript as render() writes it
    cases = page.locator("section.case")
    assert [cases.nth(i).get_attribute("id") for i in range(cases.count())] == [
        "case-fail", "case-blocked", "case-review"]
    failed = page.locator("#case-fail")
    assert failed.locator("pre.transcript").inner_text() == render(to_messages(FAILED_TOOL))
    assert failed.locator(".call").all_inner_texts() == ['    -> refund [id=call-9] {"order": 7}']
    assert failed.locator(".result").all_inner_texts() == [
        "[2] tool [id=call-9] (error): refund service down"]
    assert failed.locator(".human").inner_text() == (
        "human label: not achieved: no refund: <script>alert(1)</script>")
    assert failed.locator("td.judge-reason").all_inner_texts() == ["the tool failed"]
    assert failed.locator("td.verdict").all_inner_texts() == ["0"]
    review = page.locator("#case-review")
    assert review.locator("pre.transcript").inner_text() == render(to_messages(TICKET))
    assert review.locator("td.judge-reason").all_inner_texts() == ["T-1 was created"]
    assert review.locator(".human").inner_text() == "human label: not achieved: T-1 is a dup"
    assert page.locator("#not-scored + table td:first-child").all_inner_texts() == [
        "errored", "later"]
    assert dialogs == []  # the label's <script> is text, never run

    # the page's own script: show only the cases in review
    page.click("button[data-state='review']")
    assert [cases.nth(i).is_visible() for i in range(cases.count())] == [False, False, True]
    page.click("button[data-state='all']")
    assert [cases.nth(i).is_visible() for i in range(cases.count())] == [True, True, True]
    assert problems == []

    shot = tmp_path / "report.png"
    page.screenshot(path=str(shot), full_page=True)
    page.close()
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = int.from_bytes(data[16:20], "big"), int.from_bytes(data[20:24], "big")
    assert width == 1200
    assert height > 900  # the whole page, longer than the window
    if os.environ.get("TRACEBRIDGE_REPORT_SCREENSHOT"):  # to look at it: a path to copy it to
        shutil.copyfile(shot, os.environ["TRACEBRIDGE_REPORT_SCREENSHOT"])


def test_a_missing_browser_fails_under_ci_and_is_skipped_elsewhere(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=r"^no Chromium: apt-get install chromium "
                       r"\(CI must run the browser test: see \.ci/run\)$"):
        _unavailable("no Chromium: apt-get install chromium")
    monkeypatch.delenv("CI")
    with pytest.raises(pytest.skip.Exception, match=r"^no Chromium: apt-get install chromium$"):
        _unavailable("no Chromium: apt-get install chromium")
