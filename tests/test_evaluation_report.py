"""``tracebridge report``: one self-contained HTML page, every text from the run escaped.

(The page in a real browser: test_evaluation_report_browser.py.)
"""

from __future__ import annotations

from html.parser import HTMLParser
from pathlib import Path

from cli_helpers import run
from evaluation_helpers import case, goal
from fake_openai_server import FakeOpenAI
from gate_helpers import make_run, report_run


class Tags(HTMLParser):
    """Every start tag with its attributes, and the text of every <style>."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.styles: list[str] = []
        self._in_style = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_style = tag == "style"

    def handle_data(self, data: str) -> None:
        if self._in_style:
            self.styles.append(data)
            self._in_style = False


def test_the_page_needs_nothing_outside_itself(tmp_path: Path, server: FakeOpenAI) -> None:
    out, policy = report_run(tmp_path, server)
    page = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(page), "--policy", str(policy)) == (
        0, "", f"tracebridge report: wrote {page}\n")
    text = page.read_text()
    parser = Tags()
    parser.feed(text)
    names = [tag for tag, _ in parser.tags]
    assert not {"link", "img", "iframe", "object", "embed", "base", "form"} & set(names)
    fetching = {"src", "href", "srcset", "action", "data", "poster", "background"}
    assert [(tag, attrs) for tag, attrs in parser.tags if fetching & set(attrs)] == []
    assert names.count("script") == 1
    assert all("url(" not in style and "@import" not in style for style in parser.styles)
    [csp] = [attrs["content"] for tag, attrs in parser.tags
             if tag == "meta" and attrs.get("http-equiv") == "Content-Security-Policy"]
    assert csp is not None
    assert csp.startswith("default-src 'none'; ")


def test_every_text_from_the_run_is_escaped(tmp_path: Path, server: FakeOpenAI) -> None:
    out, policy = report_run(tmp_path, server)
    page = tmp_path / "report.html"
    run("report", str(out), "-o", str(page), "--policy", str(policy))
    text = page.read_text()
    assert "<script>alert(1)</script>" not in text
    assert "no refund: &lt;script&gt;alert(1)&lt;/script&gt;" in text
    assert "<b>now</b>" not in text
    assert "Refund order 7 &lt;b&gt;now&lt;/b&gt;." in text


def test_without_a_policy_the_page_says_there_is_no_decision(
        tmp_path: Path, server: FakeOpenAI) -> None:
    out = make_run(tmp_path, server, [case("a")], [goal(True)])
    page = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(page))[0] == 0
    assert ("<p id=\"decision\">no policy given: no gate decision (tracebridge report --policy "
            "POLICY.toml)</p>") in page.read_text()


def test_a_run_dir_that_is_not_one_is_a_one_line_error(tmp_path: Path) -> None:
    code, _, err = run("report", str(tmp_path), "-o", str(tmp_path / "r.html"))
    assert (code, err) == (4, f"tracebridge report: {tmp_path} is not a run directory (no "
                              "summary.json)\n")
    assert not (tmp_path / "r.html").exists()


def test_a_lone_surrogate_is_shown_as_its_escape(tmp_path: Path, server: FakeOpenAI) -> None:
    cut = case("cut", human_adjudication={"goal_achieved": True, "reason": "ok \ud83c"})
    cut["transcript"][0]["content"] += " \ud83c"
    out = make_run(tmp_path, server, [cut], [])  # the judge is not asked: no UTF-8 prompt
    page = tmp_path / "report.html"
    assert run("report", str(out), "-o", str(page)) == (
        0, "", f"tracebridge report: wrote {page}\n")
    text = page.read_text()
    assert "[0] human: " in text
    assert text.count(" \\ud83c") == 2
