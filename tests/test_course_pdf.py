"""scripts/course_pdf.py on a two-page fabricated site: every printed page carries "k / N"
(the page numbers of the course PDF), a block wider than the column is scaled to it, and a
page that cannot be printed leaves a partial PDF and a message naming it. Runs headless
Chromium; skipped only when /usr/bin/chromium, /usr/bin/chromedriver, selenium or pypdf is
missing (``make test`` installs the first three when it can; pypdf is in the course extra)."""

from __future__ import annotations

import base64
import importlib.util
import io
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("selenium")
pypdf = pytest.importorskip("pypdf")
if not (Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()):
    pytest.skip("Debian's chromium and chromium-driver are not installed", allow_module_level=True)


def _script():
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("calnotes_course_pdf", ROOT / "scripts"
                                                  / "course_pdf.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _site(folder: Path) -> None:
    (folder / "book").mkdir(parents=True)
    long_text = "".join(f"<p>Paragraph {i} of a long page.</p>" for i in range(160))
    (folder / "book" / "long.html").write_text(
        '<html><head><meta charset="utf-8"><title>Long — Book</title></head>'
        f"<body><main>{long_text}</main></body></html>")
    (folder / "book" / "wide.html").write_text(
        "<html><head><meta charset=\"utf-8\"><title>Wide — Book</title></head><body><main>"
        "<table id='t'><tr>" + "".join(f"<td>cell{i:02d}</td>" for i in range(60)) + "</tr></table>"
        "</main></body></html>")


def test_every_page_is_numbered_and_wide_blocks_fit(tmp_path):
    script = _script()
    _site(tmp_path / "html")
    out = tmp_path / "book.pdf"
    lines = []
    summary = script.print_book(tmp_path / "html", None, out, log=lines.append,
                                pages=["book/long", "book/wide"])
    reader = pypdf.PdfReader(str(out))
    assert summary["pages"] == len(reader.pages) >= 3           # the long page spans pages
    assert script.page_numbers_ok(out) == []
    total = len(reader.pages)
    assert f"{total} / {total}" in reader.pages[-1].extract_text()
    # the 60-cell table is wider than an A4 column (the book's own print script would scale
    # it; this bare page has none): scaled to the column, so its last cell is printed; nothing
    # is left overflowing; the long page needs no scaling
    assert any(line.startswith("course_pdf: book/wide:") and "1 wide blocks scaled" in line
               for line in lines)
    assert "cell59" in reader.pages[-1].extract_text()
    assert not any("wider than the printed column" in line for line in lines)
    assert not any("book/long" in line and "scaled" in line for line in lines)
    assert [item.title for item in reader.outline] == ["Contents", "Long", "Wide"]
    # negative controls: a page without its number, and numbers of another total, fail
    bare = pypdf.PdfWriter()
    bare.add_page(reader.pages[0])
    bare.add_blank_page(width=595, height=842)
    with open(tmp_path / "bare.pdf", "wb") as fh:
        bare.write(fh)
    assert script.page_numbers_ok(tmp_path / "bare.pdf") == [1, 2]      # "1 / N" is not "1 / 2"


def test_a_page_that_cannot_be_printed_leaves_a_partial_pdf(tmp_path, monkeypatch):
    script = _script()
    _site(tmp_path / "html")
    real = script.print_document

    def failing(driver, params, log, name):
        if name == "book/wide":
            raise RuntimeError(f"{name}: pages 1-25 failed twice: renderer timeout")
        return real(driver, params, log, name)

    monkeypatch.setattr(script, "print_document", failing)
    out = tmp_path / "partial.pdf"
    lines = []
    with pytest.raises(SystemExit, match=r"1 page\(s\) could not be printed .*\['book/wide'\]"):
        script.print_book(tmp_path / "html", None, out, log=lines.append,
                          pages=["book/long", "book/wide"])
    assert len(pypdf.PdfReader(str(out)).pages) >= 2              # the long page is there
    assert any(line.startswith("course_pdf: FAILED book/wide") for line in lines)



STATIC = ROOT / "book" / "_ext" / "static"
# wraps over two lines of the printed column: Chrome's own outline ran such lines together
LONG_HEADING = ("Second section, whose heading is long enough to wrap over two lines of the"
                " printed column of an A4 page")


def _book_site(folder: Path) -> Path:
    """Pages shaped like the built book (article.bd-article, the book's calnotes.css and .js),
    in two parts, one chapter with a figure page under it, and each web-interface element the
    print must leave out or open."""
    (folder / "_static").mkdir(parents=True)
    for name in ("calnotes.css", "calnotes.js"):
        (folder / "_static" / name).write_bytes((STATIC / name).read_bytes())

    def page(name, title, body):
        path = folder / f"{name}.html"
        path.parent.mkdir(parents=True, exist_ok=True)
        depth = "../" * name.count("/")
        path.write_text(
            f'<html><head><meta charset="utf-8"><title>{title} — The Book (student edition)'
            f'</title><link rel="stylesheet" href="{depth}_static/calnotes.css">'
            f'<script defer src="{depth}_static/calnotes.js"></script></head><body>'
            '<div class="bd-header-article">HEADER-BUTTONS .md .pdf</div>'
            f'<article class="bd-article"><section><h1>{title}</h1>{body}</section></article>'
            "</body></html>")

    filler = "".join(f"<p>Paragraph {i} of the chapter.</p>" for i in range(70))
    page("book/intro", "Welcome", "<p>The intro.</p>")
    page("book/one/chap", "Chapter one",
         '<div class="cell tag_hide-input"><details class="admonition hide above-input">'
         "<summary>Show code cell source</summary><div class='cell_input'><pre>SECRET_CODE = 1"
         "</pre></div></details><div class='cell_output'><div class='output'>"
         "<div class='admonition note chapter-box'><p>Rerun it with new parameters</p></div>"
         "</div></div></div>"
         "<div class='claim-line'><span class='claim-badge'>agrees</span> measured 0.1 "
         "<details style='display:inline'><summary>why</summary><div>WHY-TEXT tolerance"
         "</div></details></div>"
         f"<section><h2>First section</h2>{filler}</section>"
         f"<section><h2>{LONG_HEADING}</h2>{filler}</section>")
    page("book/one/figures/fig", "A figure page", "<p>The figure.</p>")
    page("book/two/chap2", "Chapter two", "<p>Part two.</p>")
    page("book/appendix/ledger", "Ledger", "<p>LEDGER-ROWS</p>")
    toc = folder / "_toc.yml"
    toc.write_text("format: jb-book\nroot: book/intro\nparts:\n"
                   "  - caption: Part One\n    chapters:\n      - file: book/one/chap\n"
                   "        sections:\n          - file: book/one/figures/fig\n"
                   "  - caption: Part Two\n    chapters:\n      - file: book/two/chap2\n"
                   "  - caption: Appendix\n    chapters:\n      - file: book/appendix/ledger\n")
    return toc


def _outline(reader, items=None, depth=0):
    out = []
    for item in (reader.outline if items is None else items):
        if isinstance(item, list):
            out += _outline(reader, item, depth + 1)
        else:
            out.append((depth, item.title, reader.get_destination_page_number(item) + 1))
    return out


def test_a_course_reader_title_contents_bookmarks_and_print_rules(tmp_path, monkeypatch):
    """The course PDF opens with a title page and a table of contents
    whose page numbers are right; bookmarks are nested by part, chapter, figure page and
    section; the reference appendices are left out by default; code toggles, chapter boxes and
    header buttons are not printed, and a claim's "why" dropdown is printed open."""
    script = _script()
    toc = _book_site(tmp_path / "html")
    out = tmp_path / "reader.pdf"
    pages = script.toc_pages(toc, script.SKIP)
    assert "book/appendix/ledger" not in pages
    # the contents first assumed to fit on the title page: printed again, numbers corrected
    monkeypatch.setattr(script, "FRONT_GUESS", 1)
    summary = script.print_book(tmp_path / "html", toc, out, log=lambda *a: None, pages=pages)
    reader = pypdf.PdfReader(str(out))
    texts = [p.extract_text().replace("\ufb01", "fi") for p in reader.pages]   # no ligature
    assert "The Book" in texts[0] and "Student edition" in texts[0]
    assert "Contents" in texts[1]
    outline = _outline(reader)
    depth = {title: d for d, title, _ in outline}
    start = {title: page for _, title, page in outline}
    assert [t for _, t, _ in outline] == ["Contents", "Welcome", "Part One", "Chapter one",
                                          "First section", LONG_HEADING, "A figure page",
                                          "Part Two", "Chapter two"]
    assert (depth["Welcome"], depth["Part One"], depth["Chapter one"],
            depth["First section"], depth["A figure page"]) == (0, 0, 1, 2, 2)
    # every bookmark lands on the page that starts with its title; the contents say the same
    for title in ("Welcome", "Chapter one", "A figure page", "Chapter two"):
        assert texts[start[title] - 1].startswith(title), (title, start[title])
        assert f"\n{title} {start[title]}\n" in texts[1], (title, texts[1])
    assert "Second section, whose heading" in texts[start[LONG_HEADING] - 1]
    assert f"{start[LONG_HEADING]}\n" in texts[1].split("Second section, whose", 1)[1]
    body = "\n".join(texts[2:])
    for absent in ("Show code cell source", "SECRET_CODE", "Rerun it with new parameters",
                   "HEADER-BUTTONS", "LEDGER-ROWS"):
        assert absent not in body, absent
    assert "WHY-TEXT tolerance" in body                       # the dropdown printed open
    assert summary["pages"] == len(reader.pages)
    assert script.page_numbers_ok(out) == []



def test_theorem_boxes_are_not_split_and_headings_stay_with_their_text(tmp_path):
    """The book's print rules (calnotes.css): a theorem box or an exercise that would straddle
    a page break moves whole to the next page, and a heading never ends a page. Printed with
    the filler before it growing a line at a time; the control, without the book's rules, splits
    the box at some of these positions."""
    script = _script()
    css = (STATIC / "calnotes.css").read_text()
    driver = script.start_browser()

    def pages_of(n: int, with_css: bool, box: str) -> list:
        fill = "".join(f"<p>Filler paragraph {i} with a few words.</p>" for i in range(n))
        lines = "".join(f"<p>line {i} of the box</p>" for i in range(12))
        page = tmp_path / "p.html"
        page.write_text(
            f"<html><head><style>{css if with_css else ''} p {{ margin: 0.3em 0 }}</style>"
            f"</head><body><article class='bd-article'>{fill}{box.format(lines=lines)}"
            "<section><h2>HEADING-END</h2><p>" + "word " * 600 + "</p></section>"
            "</article></body></html>")
        driver.get(page.as_uri())
        data = base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", script.PAPER)["data"])
        return [p.extract_text() for p in pypdf.PdfReader(io.BytesIO(data)).pages]

    boxes = {
        "theorem": "<div class='proof theorem admonition'><p>BOX-START</p>{lines}"
                   "<p>BOX-END</p></div>",
        "exercise": "<div class='exercise admonition'><p>BOX-START</p>{lines}<p>BOX-END</p></div>",
    }
    try:
        split_without = 0
        for kind, box in boxes.items():
            for n in range(40, 62, 3):
                texts = pages_of(n, True, box)
                where = [i for i, t in enumerate(texts) if "BOX-START" in t or "BOX-END" in t]
                assert len(where) == 1, (kind, n, where)            # start and end together
                for t in texts:
                    assert not t.rstrip().endswith("HEADING-END"), (kind, n)
                control = pages_of(n, False, box)
                split_without += len([t for t in control if "BOX-START" in t or "BOX-END" in t]) > 1
        assert split_without > 0                                     # the control splits
    finally:
        driver.quit()
