"""The browser check of the built book (scripts/browser_check.py), on a tiny site made here.

One page per defect the check looks for (an image that does not load, raw TeX left untypeset, a
MathJax error node, a request to another host, a broken link and a broken anchor, a JavaScript
error, an element running out of the main column, a tall scroll box cutting off its content, a
display formula wider than its column, a scroll box without a visible cue, a code block or table
cut off in print, a page scrolling sideways at 400 px, an image without a numbered caption, alt
text that is a file name or empty, figure text shown under 9 px or of unknown size, a raw pandas
table), and pages
that must pass although they hold look-alikes (dollar amounts in prose, TeX inside code, an
external link, wide content in short scroll boxes with a coloured scroll bar or an edge shadow, a
formula that fits, figures shown at exactly the minimum text size, an icon, a wide table and a
long code line that the book's own calnotes.css and calnotes.js fit to the printed column, the
ledger's hand-built table, the same data as the raw pandas table through styled_table). Runs
the real CLI in headless Chromium: skipped only when /usr/bin/chromium, /usr/bin/chromedriver or
selenium is missing (``make test`` installs them when it can: scripts/ensure_chromium.sh and the
``browser`` extra).
"""

from __future__ import annotations

import importlib.util
import json
import os
import struct
import subprocess
import sys
import zlib
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


STATIC = ROOT / "book" / "_ext" / "static"  # the book's own CSS and JS, copied into the site
BOOK_HEAD = ('<link rel="stylesheet" href="calnotes.css">'
             '<script src="calnotes.js" defer></script>')


def _book_page(body: str) -> str:
    """A page with the book's calnotes.css and calnotes.js, its column an article.bd-article."""
    return _page(f'<article class="bd-article">{body}</article>', head=BOOK_HEAD)


IMAGE = ("<svg xmlns='http://www.w3.org/2000/svg' width='40' height='20'>"
         "<rect width='40' height='20'/></svg>")
FONT_KEY = "calnotes:min_font_px"  # what calnotes.core.plotting writes (PNG_MIN_FONT_KEY)


def _chunk(kind: bytes, body: bytes) -> bytes:
    return (struct.pack(">I", len(body)) + kind + body
            + struct.pack(">I", zlib.crc32(kind + body) & 0xFFFFFFFF))


def _png(width: int, height: int = 10, text: dict[str, str] | None = None,
         itxt: dict[str, str] | None = None) -> bytes:
    """A grey PNG written here (not by the code under test), with tEXt / compressed iTXt chunks."""
    rows = b"".join(b"\x00" + b"\x80" * width for _ in range(height))
    chunks = [_chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0))]
    for key, value in (text or {}).items():
        chunks.append(_chunk(b"tEXt", key.encode("latin-1") + b"\0" + value.encode("latin-1")))
    for key, value in (itxt or {}).items():
        chunks.append(_chunk(b"iTXt", key.encode("latin-1") + b"\0\x01\x00" + b"\0\0"
                             + zlib.compress(value.encode("utf-8"))))
    chunks += [_chunk(b"IDAT", zlib.compress(rows)), _chunk(b"IEND", b"")]
    return b"\x89PNG\r\n\x1a\n" + b"".join(chunks)


# Figure text: 12 px in a 200 px image shown at 200 px is 12 px; shown at 150 px, 9 px (the
# minimum, passes); a 1000 px image with 12 px text shown at 400 px has 4.8 px text (fails).
IMAGES = {
    "img/fig.png": _png(200, text={"Software": "test", FONT_KEY: "12"}),
    "img/fig_itxt.png": _png(200, itxt={FONT_KEY: "12.00"}),
    "img/wide.png": _png(1000, text={FONT_KEY: "12"}),
    "img/plain.png": _png(200),
    "img/bad_key.png": _png(200, text={FONT_KEY: "large"}),
}


def _figure(src: str, alt: str = "a grey band", width: int = 200,
            number: str | None = "Fig. 1 ", caption: str = "A grey band.") -> str:
    num = f'<span class="caption-number">{number}</span>' if number is not None else ""
    return (f'<figure><img src="{src}" alt="{alt}" style="width: {width}px; max-width: 100%">'
            f'<figcaption><p>{num}<span class="caption-text">{caption}</span></p></figcaption>'
            "</figure>")


def _formula(width: int) -> str:
    """A typeset display formula as MathJax 3 lays it out (the theme's div.math scroll box)."""
    return ('<div class="math" style="display: flex; max-width: 100%; overflow: hidden">'
            '<mjx-container class="MathJax" jax="CHTML" display="true" style="display: block; '
            f'flex-grow: 1; overflow: auto"><mjx-math style="display: inline-block; width: '
            f'{width}px">a = b</mjx-math></mjx-container></div>')


COMMONMARK_OUTPUT = (
    '<div class="cell_output docutils container"><div class="output text_markdown">'
    "<p>| paper | results | verified |\n|\u2014|\u2013:|\u2013:|\n| 000 | 12 | 10 |</p>"
    "<p>$f_3$ does not beat $f_1$; every result is on the {doc}<code class='docutils literal"
    " notranslate'><span class='pre'>ledger</span></code> page, as {cite:p}<code class='docutils"
    " literal notranslate'><span class='pre'>paper000</span></code> states.</p></div></div>")


def _dataframe_pages() -> tuple[str, str]:
    """One table as a notebook cell shows it: raw (``DataFrame.to_html()``, what a cell whose
    last expression is a DataFrame puts on the page) and through ``styled_table`` (the book's
    rule; plain-word headers, so the page needs no MathJax)."""
    import pandas as pd

    from calnotes.book.tables import styled_table

    df = pd.DataFrame({"n": [400, 400], "R_n": [0.058421, 0.044763],
                       "R_n_se": [0.00029501, 0.00027913], "l2_holds": [1.0, 0.98]},
                      index=pd.Index(["calibrated coin", "random population"],
                                     name="population"))
    styled = styled_table(df, digits=3, compact=True, caption="A caption.",
                          names={"n": "samples", "R_n": "complexity",
                                 "R_n_se": "standard error",
                                 "l2_holds": "bound holds"}).to_html()

    def cell(table: str) -> str:  # the theme's output box scrolls (calnotes.css: its cue)
        return _book_page('<div class="cell_output docutils container"><div class="output '
                          f'text_html" style="overflow-x: auto">{table}</div></div>')
    return cell(df.to_html()), cell(styled)


RAW_DATAFRAME, STYLED_DATAFRAME = _dataframe_pages()
# the ledger's summary, built by hand: pandas' class, without pandas' border="1"
LEDGER_TABLE = ('<table class="dataframe ledger-summary"><thead><tr><th>paper</th>'
                "<th>results</th></tr></thead><tbody><tr><td>000</td><td>12</td></tr>"
                "</tbody></table>")

CUE = "scrollbar-color: #666 transparent"
SHADOW = "background: linear-gradient(to left, #0003, transparent) right / 1em 100% no-repeat"

GOOD = _book_page("""
<h1 id="top">A good page</h1>
<p>Prose with dollar amounts: it costs $5 and $10, or $3.50 each; a fee of $5
   and a refund of US$10.</p>
<p>TeX in code is not math: <code>$x$</code> and <code>\\(y\\)</code>, nor are
   <code>\\mathbb E</code> and <code>{prf:ref}`lem`</code>; prose may name a path
   C:\\temp\\infile.</p>
<pre>\\begin{align} a &amp;= b \\end{align} and $$z$$</pre>
<div class="highlight"><span>$w$</span></div>
__FIGURES__
<p><a href="other.html#target">an anchor</a>, <a href="#top">this page's top</a>,
   <a href="sub/">a folder's index</a>, <a href="other.html">a page</a>,
   <a href="https://example.org/paper.pdf">a paper elsewhere</a>,
   <a href="mailto:someone@example.org">mail</a></p>
<div style="overflow-x: auto; max-width: 300px; scrollbar-color: #666 transparent">
  <div style="width: 2000px">a wide element in a short scroll box with a coloured bar</div>
</div>
<div style="overflow-x: auto; max-width: 300px; __SHADOW__">
  <table style="width: 2000px"><tr><td>a wide table in a box with an edge shadow</td></tr></table>
</div>
<div style="overflow-x: auto; max-width: 300px">
  <div style="width: 290px">a box that could scroll but need not: no cue needed</div>
</div>
<p><img src="img/ok.svg" alt="" style="width: 16px; height: 8px"> an icon is not a figure</p>
<p>A long sentence that wraps at a narrow window: the page keeps its width because prose breaks
   at spaces, as ordinary text does in every paragraph of the book.</p>
__FORMULA__
<div class="cell_output"><div class="output" style="overflow-x: auto; max-width: 600px">
  <table style="width: 1000px"><tr><td>a wide output table: scrolls on screen, and
  calnotes.js scales it to the column in print</td></tr></table>
</div></div>
<pre style="overflow: auto; max-width: 600px">a code line too long for the column, which scrolls \
on screen and wraps in print: x = 1; y = 2; z = 3; w = 4</pre>
__LEDGER__
""")

GOOD = GOOD.replace("__LEDGER__", LEDGER_TABLE).replace("__SHADOW__", SHADOW).replace("__FORMULA__", _formula(500)).replace(
    "__FIGURES__",
    _figure("img/fig.png")                               # 12 px text at full size
    + _figure("img/fig_itxt.png", width=150, number="Fig. 2.3 ")  # 9 px: just the minimum
    + _figure("img/wide.png", alt="a wide grey band", width=750, number="Figure 4"))

SITE = {
    # the book's own index.html is a redirect like this one
    "index.html": '<meta http-equiv="Refresh" content="0; url=good.html" />',
    "good.html": GOOD,
    "other.html": _page('<h1>Other</h1><p id="target">the target</p><a href="good.html">back</a>'),
    "sub/index.html": _page("<p>a folder's index page</p>"),
    "img/ok.svg": IMAGE,
    "missing_image.html": _page(_figure("img/nope.png", alt="a missing figure")),
    "raw_tex.html": _page("<p>The estimator $\\hat{x}_n$ is biased.</p>"),
    "raw_tex_lines.html": _page("<p>A sum $a_1 +\n  a_2$ over two source lines.</p>"),
    "raw_display.html": _page(r"<p>\[ \int_0^1 f \]</p>"),
    # a source line "+ ..." inside an inline formula became a list item
    "cut_formula.html": _page(r"<p>then $\mathrm{CE}_2^2 = \sum_k a_k</p>"
                              r"<ul><li>b_k = 1$ (eq. (20)), close to uniform.</li></ul>"),
    "bare_command.html": _page(r"<ul><li>\mathbb E f_k^2 = 1 - 1/n when</li></ul>"),
    "raw_role.html": _page("<p>The first bracket is the gap of {prf:ref}`the lemma "
                           "&lt;lem-x&gt;`.</p>"),
    # a Markdown(...) output that myst-nb rendered as CommonMark (the
    # page lost render_markdown_format: myst): the pipe table is a paragraph of text (dashes
    # turned into en and em dashes by the typographer), $...$ is text, a role is the text
    # "{doc}" and then the code "ledger"
    "commonmark_output.html": _book_page(COMMONMARK_OUTPUT),
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
    "cut_off.html": _page(f'<div style="overflow-x: auto; {CUE}">'
                          '<div style="width: 3000px; height: 3000px">tall and wide</div></div>'),
    # a formula or table wider than the column, scrolling without a cue
    "wide_formula.html": _page(_formula(2000)),
    "no_cue.html": _book_page('<div style="overflow-x: auto"><table style="width: 2000px"><tr>'
                              '<td>a wide table</td></tr></table></div>'),
    "hidden_bar.html": _page(f'<div style="overflow-x: auto; {CUE}; scrollbar-width: none">'
                             '<div style="width: 2000px">a wide element</div></div>'),
    # a box 6 px too wide: Chromium draws no scroll bar for it on some loads (the check would
    # pass by chance); 16 px too wide (MARGINAL_PX) is an ordinary scroll box
    "marginal_scroll.html": _page(f'<div style="overflow-x: auto; width: 300px; {CUE}">'
                                  '<div style="width: 306px">a sliver too wide</div></div>'),
    "just_wide.html": _page(f'<div style="overflow-x: auto; width: 300px; {CUE}">'
                            '<div style="width: 316px">two characters too wide</div></div>'),
    # print: a scroll box shows only its first part on paper; a table wider
    # than the printed column runs past the margin (no print rules, no calnotes.js here)
    "print_code.html": _page(f'<pre style="overflow-x: auto; max-width: 600px; {CUE}">'
                             + "x = 1; " * 40 + "</pre>"),
    "print_table.html": _page(f'<div style="overflow-x: auto; max-width: 600px; {CUE}">'
                              '<table style="width: 1000px"><tr><td>wide</td></tr></table></div>'),
    # at 400 px the page scrolls sideways
    "narrow.html": _page('<p>A name that cannot break: <code style="display: inline-block; '
                         'width: 600px">calnotes.theory.population.random_finite_distribution</code>'
                         "</p>"),
    # figures without caption or number, file names for alt text, tiny text
    "no_caption.html": _page('<p><img src="img/fig.png" alt="a grey band"></p>'),
    "no_number.html": _page(_figure("img/fig.png", number=None)),
    "number_only.html": _page(_figure("img/fig.png", caption="")),
    "path_alt.html": _page(_figure("img/fig.png", alt="../../_images/9c43aec0adf1.png")),
    "empty_alt.html": _page(_figure("img/fig.png", alt="")),
    "repr_alt.html": _page(_figure("img/fig.png", alt="<Figure size 640x480 with 2 Axes>")),
    "small_text.html": _page(_figure("img/wide.png", width=400)),
    "no_font_key.html": _page(_figure("img/plain.png")),
    "bad_font_key.html": _page(_figure("img/bad_key.png")),
    "svg_figure.html": _page(_figure("img/ok.svg")),
    # a cell whose last expression is a DataFrame: pandas' default HTML, and the control, the
    # same data through calnotes.book.tables.styled_table
    "raw_dataframe.html": RAW_DATAFRAME,
    "styled_dataframe.html": STYLED_DATAFRAME,
}

EXPECTED = {  # page: (check, a piece of the reason)
    "missing_image.html": ("image", "img/nope.png"),
    "raw_tex.html": ("math", r"$\hat{x}_n$"),
    "raw_display.html": ("math", r"\[ \int_0^1 f \]"),
    "raw_tex_lines.html": ("math", "$a_1 + a_2$"),
    "cut_formula.html": ("math", r"$\mathrm"),
    "bare_command.html": ("math", r"\mathbb"),
    "raw_role.html": ("markup", "MyST role left as text: \"The first bracket is the gap of"
                                " {prf:ref}`"),
    "commonmark_output.html": ("markup", "Markdown pipe table left as text: \"| paper |"),
    "math_error.html": ("math", "Undefined control sequence"),
    "external.html": ("request", "https://cdn.example.org/lib.js"),
    "js_error.html": ("console", "Identifier 'THEBE_JS_URL' has already been declared"),
    "overflow.html": ("overflow", "far too wide"),
    "cut_off.html": ("overflow", "cut off at the right edge"),
    "wide_formula.html": ("math-width", "display formula 2000 px wide"),
    "no_cue.html": ("scroll-cue", "without a visible scroll cue (scroll bar not styled"),
    "hidden_bar.html": ("scroll-cue", "(no scroll bar shown)"),
    "marginal_scroll.html": ("scroll-cue", "only 6 px too wide (under 16 px"),
    "narrow.html": ("narrow", "at 400 px the page scrolls horizontally"),
    "print_code.html": ("print", "shows 600 px of its"),
    "print_table.html": ("print", "table (\"wide\") runs"),
    "no_caption.html": ("caption", "fig.png is not in a <figure> with a numbered caption"),
    "no_number.html": ("caption", "has no number in its caption"),
    "number_only.html": ("caption", "has a number but no caption text"),
    "path_alt.html": ("alt", "has a file name for alt text: '../../_images/9c43aec0adf1.png'"),
    "empty_alt.html": ("alt", "has empty alt text"),
    "repr_alt.html": ("alt", "has a file name for alt text: '<Figure size"),
    "small_text.html": ("figure-text", "shown 4.8 px high, under 9 px"),
    "no_font_key.html": ("figure-text", "no calnotes:min_font_px text chunk"),
    "bad_font_key.html": ("figure-text", "no valid calnotes:min_font_px text chunk ('large')"),
    "svg_figure.html": ("figure-text", "not a PNG"),
    "raw_dataframe.html": ("table", 'raw pandas table (DataFrame.to_html'),
}
ONLY = {  # pages that must fail for their one defect and nothing else
    "no_cue.html", "hidden_bar.html", "marginal_scroll.html", "narrow.html", "no_caption.html",
    "print_code.html", "print_table.html",
    "no_number.html", "number_only.html", "path_alt.html", "empty_alt.html", "repr_alt.html",
    "small_text.html", "no_font_key.html", "bad_font_key.html", "svg_figure.html",
    "raw_dataframe.html",
}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("site")
    for name, text in SITE.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text, encoding="utf-8")
    for name, data in IMAGES.items():
        (root / name).write_bytes(data)
    for name in ("calnotes.css", "calnotes.js"):
        (root / name).write_bytes((STATIC / name).read_bytes())
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
    for page in ONLY:
        assert len(failures[page]) == 1, (page, failures[page])
    # the page that loads from elsewhere fails for that request, not for anything local
    assert all("cdn.example.org" in f["reason"] for f in failures["external.html"])
    for page in ("good.html", "other.html", "sub/index.html", "index.html", "just_wide.html",
                 "styled_dataframe.html"):
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


def _load_script():
    spec = importlib.util.spec_from_file_location("browser_check", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault(spec.name, module)  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_png_text_reads_the_key_matplotlib_writes(tmp_path):
    """The reading side of figure-text against the writing side the book uses (matplotlib)."""
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(2, 1), dpi=100)
    fig.savefig(tmp_path / "f.png", metadata={FONT_KEY: "12.50"})
    png_text = _load_script().png_text
    assert png_text((tmp_path / "f.png").read_bytes())[FONT_KEY] == "12.50"
    assert png_text(_png(5, itxt={FONT_KEY: "9"}))[FONT_KEY] == "9"
    assert png_text(IMAGE.encode()) == {}


def test_raw_markup_flags_each_kind_and_passes_prose():
    """The detector behind the math and markup checks, on block texts as the browser check
    collects them (inline code stands as `…`): without a browser."""
    raw_markup = _load_script().raw_markup
    kinds = lambda text: sorted({c for c, _ in raw_markup(text)})          # noqa: E731
    assert kinds("| paper | results | verified | |\u2014|\u2013:|\u2013:| | 000 | 12 |") \
        == ["markup"]
    assert kinds("| a | b | |---|:-:| | 1 | 2 |") == ["markup"]
    assert kinds("every result is on the {doc}`\u2026` page") == ["markup"]
    assert kinds("as {cite:p}`\u2026` states") == ["markup"]
    assert kinds(":::{prf:theorem} Main") == ["markup"]
    assert kinds("$f_3$ does not beat $f_1$") == ["math"]
    assert kinds("the \\(\\ell_2\\)-QECE") == ["math"]
    for prose in ("it costs $5 and $10, or $3.50 each", "P(Y = k | f = z) and |x| + |y|",
                  "x: str | None = None, y: int | None = None, z: dict | None = None",
                  "a range 1--3 and a dash --- here", "the role `\u2026` and the {braces}"):
        assert raw_markup(prose) == [], prose


def test_a_markdown_output_rendered_as_commonmark_is_flagged(browser_available, site, tmp_path):
    """The student edition's *Do the papers hold?* showed its summary
    table as pipe text, its formulas as $...$ and its references as {doc} and {cite:p} text.
    The browser check flags each, on the page as the browser lays it out."""
    proc, failures = _run(site, tmp_path, "--pages", "commonmark_output.html")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    reasons = [(f["check"], f["reason"]) for f in failures["commonmark_output.html"]]
    assert ("markup", "Markdown pipe table left as text: \"| paper | results | verified |"
            " |\u2014|\u2013:|\u2013:| | 000 | 12 | 10 |\"") in reasons, reasons
    assert any(c == "math" and "$f_3$ does not beat $f_1$" in r for c, r in reasons), reasons
    roles = [r for c, r in reasons if c == "markup" and r.startswith("MyST role")]
    assert roles and "{doc}`\u2026` page" in roles[0], reasons
    assert {c for c, _ in reasons} == {"math", "markup"}, reasons


def test_a_raw_pandas_table_is_flagged_and_a_styled_one_passes(browser_available, site,
                                                               tmp_path):
    """A cell whose last expression is a DataFrame shows pandas' default HTML (code-name
    headers, five or six digits, a header row for the index's name): the check names the table
    by its first header cells. The same data through styled_table, and the ledger's own table
    (class "dataframe", no border) on the good page, pass."""
    proc, failures = _run(site, tmp_path, "--pages", "raw_dataframe.html",
                          "styled_dataframe.html", "good.html")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert failures["raw_dataframe.html"] == [{
        "check": "table",
        "reason": 'raw pandas table (DataFrame.to_html: code names for headers, unformatted'
                  ' numbers, no caption), headers "n | R_n | R_n_se | l2_holds": show it'
                  " through calnotes.book.tables.styled_table"}], failures
    assert failures["styled_dataframe.html"] == [], failures
    assert failures["good.html"] == [], failures
    assert 'border="1" class="dataframe"' in RAW_DATAFRAME                # the real thing
    assert 'class="dataframe' not in STYLED_DATAFRAME and 'id="T_' in STYLED_DATAFRAME
