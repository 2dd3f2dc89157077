"""The browser check of the built book (scripts/browser_check.py), on a tiny site made here.

One page per defect the check looks for (an image that does not load, raw TeX left untypeset, a
MathJax error node, a request to another host, a broken link and a broken anchor, a JavaScript
error, an element running out of the main column, a tall scroll box cutting off its content),
and pages that must pass although they hold look-alikes (dollar amounts in prose, TeX inside code,
an external link, a wide element in a short scroll box). Runs the real CLI in headless Chromium:
skipped only when /usr/bin/chromium, /usr/bin/chromedriver or selenium is missing
(``make test`` installs them when it can: scripts/ensure_chromium.sh and the ``browser`` extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "scripts" / "browser_check.py"


def _missing() -> list[str]:
    missing = [p for p in ("/usr/bin/chromium", "/usr/bin/chromedriver")
               if not os.access(p, os.X_OK)]
    if importlib.util.find_spec("selenium") is None:
        missing.append("selenium (the browser extra)")
    return missing


@pytest.fixture(scope="module")
def browser_available() -> None:
    missing = _missing()
    if missing:
        pytest.skip("browser check needs " + ", ".join(missing)
                    + " (scripts/ensure_chromium.sh installs chromium and chromium-driver)")


def _page(body: str, head: str = "") -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>t</title>{head}</head>"
            f"<body><main>{body}</main></body></html>")


IMAGE = ("<svg xmlns='http://www.w3.org/2000/svg' width='40' height='20'>"
         "<rect width='40' height='20'/></svg>")

GOOD = _page("""
<h1 id="top">A good page</h1>
<p>Prose with dollar amounts: it costs $5 and $10, or $3.50 each; a fee of $5
   and a refund of US$10.</p>
<p>TeX in code is not math: <code>$x$</code> and <code>\\(y\\)</code>, nor are
   <code>\\mathbb E</code> and <code>{prf:ref}`lem`</code>; prose may name a path
   C:\\temp\\infile.</p>
<pre>\\begin{align} a &amp;= b \\end{align} and $$z$$</pre>
<div class="highlight"><span>$w$</span></div>
<p><img src="img/ok.svg" alt="a rectangle"></p>
<p><a href="other.html#target">an anchor</a>, <a href="#top">this page's top</a>,
   <a href="sub/">a folder's index</a>, <a href="other.html">a page</a>,
   <a href="https://example.org/paper.pdf">a paper elsewhere</a>,
   <a href="mailto:someone@example.org">mail</a></p>
<div style="overflow-x: auto; max-width: 300px">
  <div style="width: 2000px">a wide element in a short scroll box</div>
</div>
""")

SITE = {
    # the book's own index.html is a redirect like this one
    "index.html": '<meta http-equiv="Refresh" content="0; url=good.html" />',
    "good.html": GOOD,
    "other.html": _page('<h1>Other</h1><p id="target">the target</p><a href="good.html">back</a>'),
    "sub/index.html": _page("<p>a folder's index page</p>"),
    "img/ok.svg": IMAGE,
    "missing_image.html": _page('<p><img src="img/nope.png" alt="missing"></p>'),
    "raw_tex.html": _page("<p>The estimator $\\hat{x}_n$ is biased.</p>"),
    "raw_tex_lines.html": _page("<p>A sum $a_1 +\n  a_2$ over two source lines.</p>"),
    "raw_display.html": _page(r"<p>\[ \int_0^1 f \]</p>"),
    # reader finding 1: a source line "+ ..." inside an inline formula became a list item
    "cut_formula.html": _page(r"<p>then $\mathrm{CE}_2^2 = \sum_k a_k</p>"
                              r"<ul><li>b_k = 1$ (eq. (20)), close to uniform.</li></ul>"),
    "bare_command.html": _page(r"<ul><li>\mathbb E f_k^2 = 1 - 1/n when</li></ul>"),
    "raw_role.html": _page("<p>The first bracket is the gap of {prf:ref}`the lemma "
                           "&lt;lem-x&gt;`.</p>"),
    "math_error.html": _page(
        '<p><mjx-container><mjx-merror data-mjx-error="Undefined control sequence \\foo">'
        "\\foo</mjx-merror></mjx-container></p>"),
    "external.html": _page("<p>loads a script from a CDN</p>",
                           head='<script src="https://cdn.example.org/lib.js"></script>'),
    "broken_link.html": _page('<p><a href="nowhere.html">gone</a> and '
                              '<a href="other.html#no-such-anchor">no anchor</a></p>'),
    "js_error.html": _page("<p>declares a constant twice</p>"
                           "<script>const THEBE_JS_URL = 1;</script>"
                           "<script>const THEBE_JS_URL = 2;</script>"),
    "overflow.html": _page('<p>text</p><div style="width: 3000px">far too wide</div>'),
    "cut_off.html": _page('<div style="overflow-x: auto">'
                          '<div style="width: 3000px; height: 3000px">tall and wide</div></div>'),
}

EXPECTED = {  # page: (check, a piece of the reason)
    "missing_image.html": ("image", "img/nope.png"),
    "raw_tex.html": ("math", r"$\hat{x}_n$"),
    "raw_display.html": ("math", r"\[ \int_0^1 f \]"),
    "raw_tex_lines.html": ("math", "$a_1 + a_2$"),
    "cut_formula.html": ("math", r"$\mathrm"),
    "bare_command.html": ("math", r"\mathbb"),
    "raw_role.html": ("math", "{prf:ref}`"),
    "math_error.html": ("math", "Undefined control sequence"),
    "external.html": ("request", "https://cdn.example.org/lib.js"),
    "js_error.html": ("console", "Identifier 'THEBE_JS_URL' has already been declared"),
    "overflow.html": ("overflow", "far too wide"),
    "cut_off.html": ("overflow", "cut off at the right edge"),
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site")
    for name, text in SITE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    return root


def _run(site: Path, tmp_path: Path, *args: str) -> tuple[subprocess.CompletedProcess, dict]:
    report = tmp_path / "report.json"
    proc = subprocess.run(
        [sys.executable, str(SCRIPT), "--html", str(site), "--json", str(report), *args],
        capture_output=True, text=True, timeout=600)
    results = json.loads(report.read_text()) if report.exists() else []
    return proc, {r["page"]: r["failures"] for r in results}


def test_every_defect_is_reported_with_its_page_and_reason(browser_available, site, tmp_path):
    shots = tmp_path / "shots"
    proc, failures = _run(site, tmp_path, "--screenshots", str(shots),
                          "--screenshot-pages", "good.html", "overflow.html")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert set(failures) == set(SITE) - {"img/ok.svg"}, "every page checked"
    for page, (check, piece) in EXPECTED.items():
        reasons = [f["reason"] for f in failures[page] if f["check"] == check]
        assert any(piece in r for r in reasons), (page, check, failures[page])
        assert f"FAIL {page}: [{check}]" in proc.stderr
    links = [f["reason"] for f in failures["broken_link.html"] if f["check"] == "link"]
    assert any("'nowhere.html': no file nowhere.html" in r for r in links), links
    assert any("has no element with id 'no-such-anchor'" in r for r in links), links
    # the page that loads from elsewhere fails for that request, not for anything local
    assert all("cdn.example.org" in f["reason"] for f in failures["external.html"])
    for page in ("good.html", "other.html", "sub/index.html", "index.html"):
        assert failures[page] == [], (page, failures[page])
    for page in ("good.html", "overflow.html"):
        shot = shots / (page.removesuffix(".html") + ".png")
        assert shot.read_bytes().startswith(b"\x89PNG"), shot


def test_a_good_site_passes(browser_available, site, tmp_path):
    proc, failures = _run(site, tmp_path, "--pages", "index.html", "good.html", "other.html",
                          "sub/*.html")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert sorted(failures) == ["good.html", "index.html", "other.html", "sub/index.html"]
    assert "all 4 page(s) pass" in proc.stdout


def test_the_check_refuses_a_missing_book(tmp_path):
    proc = subprocess.run([sys.executable, str(SCRIPT), "--html", str(tmp_path / "nothing")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "build the book first" in proc.stderr
