"""Print a built edition of the book to one PDF, a course reader, through headless Chromium,
offline.

    .venv/bin/python scripts/course_pdf.py [--html _build/course/html] [--out _build/course/calnotes.pdf]
                                           [--with-reference] [--skip PREFIX ...]
                                           [--pages DOCNAME ...] [--verify]

The default prints the *student* edition (``make course`` builds it into _build/course/html)
without the reference appendices (the verification ledger, the benchmarks and the API
reference: ``--with-reference`` prints them too, ``--skip`` names other pages to leave out):
the PDF is course material to hand out. In the teacher edition (``--html _build/html``) the
solutions are dropdowns, printed open.

The pages are served by a local HTTP server on 127.0.0.1 (a thread of this process; file://
would block MathJax's web fonts) and opened one after another, in the order of the table of
contents (``--toc``, default the student sources' _toc.yml), in Debian's Chromium driven by
Selenium through /usr/bin/chromedriver (Selenium never downloads a driver). Every host name
other than 127.0.0.1 fails to resolve inside the browser, so nothing is fetched from the
internet. Before a page is printed, MathJax's ``startup.promise`` has resolved (all math
typeset), the fonts and images have loaded, and the page has no MathJax error node
(``mjx-merror``), else the script fails.

What is printed is what the book's own print rules give (book/_ext/static/calnotes.css and
calnotes.js, which a browser's print dialog uses too): no code toggles, chapter boxes (rerun
command, download link) or header buttons; every dropdown open (a claim's "why"); theorem-like
and exercise boxes not split; headings kept with what follows; formulas and tables wider than
the column scaled to it. Print rules of this script add: no theme's print-only contents list,
short blocks kept in one piece, theorem and exercise boxes whole up to 90 % of a page (proofs
60 %), code lines wrapped; any block still wider than the column is reported. Each page is
printed with Chrome's ``Page.printToPDF`` (A4, backgrounds on, a running head with the book's
and the page's title, a document outline of its headings); a page whose print fails (a renderer
timeout on a very long page) is printed again in pieces of 25 pages, and one that still fails
is left out: the PDF of the rest is written and the script then fails naming it.

The PDF opens with a title page and a table of contents (parts, pages, their sections, with
page numbers), printed last and again if its length changes; bookmarks follow the parts of the
table of contents, a figure page under its chapter and each page's sections under it. The pages
are merged with pypdf and numbered "k / N" at the foot from a blank print of as many pages;
``--verify`` checks that every page's text carries its number.
"""

from __future__ import annotations

import argparse
import base64
import functools
import http.server
import io
import re
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from course import toc_docnames  # noqa: E402  (scripts/course.py: one reading of the TOC)

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PAGE_TIMEOUT = 300  # seconds for one page to load, typeset and print (long pages take long)
#: Left out of the PDF by default (``--with-reference`` prints them): the reference appendices,
#: the verification ledger (62 pages), the benchmarks (22 pages: calnotes timed against other
#: libraries) and the API reference (one page per module). They are for the library's users and
#: for checking the book; a course reader links to them in the HTML edition instead.
REFERENCE = ("book/appendix/ledger", "book/appendix/benchmarks", "book/appendix/api")
SKIP = REFERENCE

# After the load event: MathJax's first typesetting (startup.promise), fonts and images.
WAIT_JS = r"""
const done = arguments[arguments.length - 1];
(async () => {
  const mj = window.MathJax;
  if (mj && mj.startup && mj.startup.promise) { await mj.startup.promise; }
  if (document.fonts && document.fonts.ready) { await document.fonts.ready; }
  await Promise.all(Array.from(document.images).filter((im) => !im.complete).map(
    (im) => new Promise((r) => { im.onload = im.onerror = r; })));
  await new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r)));
  return {
    mathjax: !!(mj && mj.startup),
    typeset: document.querySelectorAll("mjx-container").length,
    errors: document.querySelectorAll("mjx-merror").length,
    title: document.title,
  };
})().then(done, (e) => done({failed: String(e)}));
"""


# Print rules added to every page before printing (the course edition's own print styles; the
# book's stylesheets in book/_ext/static are not touched). The theme's print-only table of
# contents and its 3em centred title left the first page of a chapter half empty: the PDF has
# bookmarks instead, and the title is set at the size of the screen's. Blocks are kept in one
# piece only when short (KEEP_JS marks them): a tall code cell or table breaks across pages
# instead of leaving a blank half page before it. Code lines wrap instead of running off the page.
PRINT_CSS = """
@media print {
  #jb-print-toc, .bd-header-article, .prev-next-area, .bd-sidebar-secondary,
  .bd-sidebar-primary, .bd-header, .bd-footer, .bd-footer-content, a.headerlink { display: none !important; }
  .bd-main .bd-content #jb-print-docs-body h1 { font-size: 2em; text-align: left; margin-top: 0; }
  .bd-main .bd-content table, div.cell_output, div.cell_input, div.highlight, pre, figure,
  div.admonition, div.math, mjx-container[display="true"] { break-inside: auto; }
  .calnotes-keep { break-inside: avoid !important; }
  .calnotes-split { break-inside: auto !important; }
  h1, h2, h3, h4, .admonition-title, caption, figcaption { break-after: avoid; }
  pre, pre code, div.highlight pre { white-space: pre-wrap !important; overflow-wrap: anywhere; }
  img { max-width: 100% !important; height: auto !important; }
}
"""
ADD_CSS_JS = ("const s = document.createElement('style'); s.textContent = arguments[0];"
              " document.head.appendChild(s);")

# Before printing, in the print layout (emulated, at the printed column's width, and kept for
# the print): mark the short blocks, to be kept on one page. Formulas and tables wider than the
# column are scaled to it by the book's own print script (book/_ext/static/calnotes.js, which
# serves a browser's print dialog too); a formula or table still running past the column's
# right edge after it (a theorem box, an output area) is scaled here, the same way (CSS zoom on
# the formula or table itself, so nothing is scaled twice). What still overflows is reported.
KEEP_JS = r"""
const done = arguments[arguments.length - 1];
const main = document.querySelector("article.bd-article") || document.querySelector("main")
  || document.body;
// the right edge an element must stay within: its block's content box (a formula in a theorem
// box stays inside the box), never past the article's
const limit = (el) => {
  const box = el.parentElement.closest("div.math, div.output, div.cell_output, div.admonition,"
    + " section.theorem-content, div.proof, blockquote") || main;
  const r = box.getBoundingClientRect(), style = getComputedStyle(box);
  return Math.min(r.right - parseFloat(style.paddingRight) - parseFloat(style.borderRightWidth),
                  main.getBoundingClientRect().right);
};
const overflowing = () =>
  Array.from(main.querySelectorAll("mjx-math, table, img, pre")).filter((el) => {
    const r = el.getBoundingClientRect();
    return r.width > 0 && r.right > limit(el) + 2 && !el.matches("table table");
  });
// every dropdown open (the book's calnotes.js does the same when printing starts; here too for
// pages without it), except the code toggles, which the book's print rules leave out
for (const d of document.querySelectorAll("details:not([open])")) {
  if (!d.matches(".hide.above-input")) d.open = true;
}
for (const el of document.querySelectorAll(".toggle-hidden")) el.classList.remove("toggle-hidden");
requestAnimationFrame(() => requestAnimationFrame(() => {   // after the book's print handlers
  const keep = "div.cell_input, div.cell_output, div.highlight, pre, figure, img, table,"
    + " div.admonition, div.math, mjx-container[display='true'], blockquote, dl";
  const pageHeight = 1000;    // CSS px of the text block of an A4 page (10.45 in at 96 px/in)
  let kept = 0;
  for (const el of document.querySelectorAll(keep)) {
    if (el.getBoundingClientRect().height < pageHeight * 0.25) {
      el.classList.add("calnotes-keep"); kept++;
    }
  }
  // theorem-like and exercise boxes in one piece up to 90 % of a page, proofs up to 60 % (a
  // taller one moved whole would leave most of a page blank); taller ones may break
  for (const el of document.querySelectorAll("div.proof, div.exercise, div.solution")) {
    const h = el.getBoundingClientRect().height;
    const plainProof = el.matches("div.proof") && el.classList.length <= 2;  // "proof admonition"
    if (h > 0 && h < pageHeight * (plainProof ? 0.6 : 0.9)) {
      el.classList.add("calnotes-keep"); kept++;
    } else if (h > 0) {
      el.classList.add("calnotes-split");
    }
  }
  const found = overflowing();
  const wide = found.filter((el) => !found.some((o) => o !== el && o.contains(el)));
  const scale = wide.map((el) => {                    // measure all, then scale: one layout
    const r = el.getBoundingClientRect();
    return [el, (limit(el) - Math.max(r.left, main.getBoundingClientRect().left)) / r.width];
  });
  let scaled = 0;
  for (const [el, factor] of scale) {
    if (factor > 0.2) {
      el.style.zoom = ((parseFloat(el.style.zoom) || 1) * factor).toFixed(4);
      scaled++;
    }
  }
  requestAnimationFrame(() => {
    const still = overflowing().map((el) => (el.textContent || el.tagName).trim().slice(0, 40));
    done({kept: kept, scaled: scaled, wide: still.slice(0, 5), nWide: still.length});
  });
}));
"""


# The page's second-level headings as printed (in the print layout, after KEEP_JS), for the
# contents and the bookmarks: their text with formulas as text (the TeX MathJax typeset, read
# back through the book's calnotesTexToText when the page has it); Chrome's own outline has the
# pages but runs wrapped lines together and drops formulas.
HEADINGS_JS = r"""
const article = document.querySelector("article.bd-article") || document.querySelector("main")
  || document.body;
const asText = (typeof calnotesTexToText === "function") ? calnotesTexToText : (t) => t;
return Array.from(article.querySelectorAll("h2")).filter((h) => h.getClientRects().length > 0)
  .map((h) => {
    const tex = new Map();
    try {
      for (const item of MathJax.startup.document.getMathItemsWithin(h)) {
        tex.set(item.typesetRoot, item.math);
      }
    } catch (e) { /* no MathJax on this page */ }
    const originals = Array.from(h.querySelectorAll("mjx-container"));
    const copy = h.cloneNode(true);
    for (const el of copy.querySelectorAll(".headerlink")) el.remove();
    Array.from(copy.querySelectorAll("mjx-container")).forEach((m, i) => {
      m.replaceWith(tex.has(originals[i]) ? asText(tex.get(originals[i])) : "");
    });
    return copy.textContent.replace(/\s+/g, " ").trim();
  });
"""


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def serve(folder: Path):
    """A local HTTP server for ``folder`` on a free port of 127.0.0.1: ``(server, base url)``."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, f"http://127.0.0.1:{server.server_address[1]}/"


def start_browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--no-first-run", "--hide-scrollbars",
                "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
                "--window-size=1280,1000"):
        options.add_argument(arg)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_script_timeout(PAGE_TIMEOUT)
    driver.set_page_load_timeout(PAGE_TIMEOUT)
    return driver


def toc_pages(toc_file: Path, skip=()) -> list:
    """The docnames of a jb-book table of contents in reading order (suffixes dropped), less
    those starting with one of ``skip``."""
    toc = yaml.safe_load(toc_file.read_text())
    pages = [re.sub(r"\.(md|ipynb)$", "", d) for d in toc_docnames(toc)]
    return [d for d in pages if not any(d.startswith(prefix) for prefix in skip)]


# A4 and margins in inches (Chrome's Page.printToPDF takes inches). The running head (book and
# chapter title) sits in the top margin; the page number ("12 / 480") in the bottom margin is
# stamped afterwards from a second, blank print of the whole book (number_pages), since each
# chapter is printed on its own and Chrome numbers the pages of one print job only.
PAPER = {"paperWidth": 8.27, "paperHeight": 11.69, "marginTop": 0.62, "marginBottom": 0.62,
         "marginLeft": 0.45, "marginRight": 0.45}
PRINT_WIDTH_PX = int((PAPER["paperWidth"] - PAPER["marginLeft"] - PAPER["marginRight"]) * 96)
CHUNK = 25          # pages per piece when a long page is printed in pieces


def _escape(text: str) -> str:
    return (text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


def header_template(book: str, chapter: str) -> str:
    return ('<div style="font-size:7.5px;width:100%;margin:0 0.45in;color:#555;'
            'display:flex;justify-content:space-between;font-family:sans-serif">'
            f'<span>{_escape(book)}</span><span>{_escape(chapter)}</span></div>')


FOOTER_TEMPLATE = ('<div style="font-size:8px;width:100%;text-align:center;color:#333;'
                   'font-family:sans-serif"><span class="pageNumber"></span> / '
                   '<span class="totalPages"></span></div>')


def _print(driver, params: dict) -> bytes:
    return base64.b64decode(driver.execute_cdp_cmd("Page.printToPDF", params)["data"])


def print_document(driver, params: dict, log, name: str) -> bytes:
    """One page printed: whole, else (a renderer timeout on a very long page) in pieces of
    :data:`CHUNK` pages merged, each piece tried twice. Raises RuntimeError naming the page."""
    from pypdf import PdfReader, PdfWriter
    from selenium.common.exceptions import WebDriverException

    try:
        return _print(driver, params)
    except WebDriverException as exc:
        log(f"course_pdf: {name}: printing the page at once failed"
            f" ({str(exc).strip().splitlines()[0][:120]}); printing it in pieces of {CHUNK}")
    writer, first = PdfWriter(), 1
    while True:
        piece = None
        for attempt in (1, 2):
            try:
                piece = _print(driver, {**params, "pageRanges": f"{first}-{first + CHUNK - 1}"})
                break
            except WebDriverException as exc:
                message = str(exc)
                if "exceeds" in message or "Page range" in message or "invalid" in message.lower():
                    piece = b""           # past the last page
                    break
                if attempt == 2:
                    raise RuntimeError(f"{name}: pages {first}-{first + CHUNK - 1} failed twice:"
                                       f" {message.strip().splitlines()[0][:200]}") from None
        if not piece:
            break
        reader = PdfReader(io.BytesIO(piece))
        for page in reader.pages:
            writer.add_page(page)
        if len(reader.pages) < CHUNK:
            break
        first += CHUNK
    out = io.BytesIO()
    writer.write(out)
    return out.getvalue()


def number_pages(driver, base: str, html: Path, writer, log) -> None:
    """Stamp "k / N" at the foot of every page of ``writer``: a blank N-page document printed
    with Chrome's footer (its own pageNumber/totalPages), merged page by page onto the book."""
    total = len(writer.pages)
    driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
    (Path(html) / "__calnotes_blank__.html").write_text(
        "<!doctype html><html><body style='margin:0'>"
        + "<div style='height:1px;break-after:page'></div>" * (total - 1) + "<div></div>"
        "</body></html>")
    driver.get(base + "__calnotes_blank__.html")
    blank = _print(driver, {**PAPER, "printBackground": False, "displayHeaderFooter": True,
                            "headerTemplate": "<span></span>", "footerTemplate": FOOTER_TEMPLATE,
                            "pageRanges": f"1-{total}"})
    from pypdf import PdfReader
    stamps = PdfReader(io.BytesIO(blank))
    if len(stamps.pages) < total:
        raise RuntimeError(f"page numbers: the blank document has {len(stamps.pages)} pages,"
                           f" the book {total}")
    for page, stamp in zip(writer.pages, stamps.pages):
        page.merge_page(stamp)
    log(f"course_pdf: page numbers stamped on {total} pages")


def page_numbers_ok(pdf_path: Path) -> list:
    """The pages (1-based) whose text lacks their "k / N" number: empty when all have it."""
    from pypdf import PdfReader
    reader = PdfReader(str(pdf_path))
    total = len(reader.pages)
    return [i + 1 for i, page in enumerate(reader.pages)
            if not re.search(rf"(?<!\d){i + 1}\s*/\s*{total}(?!\d)", page.extract_text() or "")]


@dataclass
class Entry:
    """A page of the table of contents: its docname, its depth (1: a chapter or the root page,
    2: a section page such as a figure page) and the caption of its part (None outside parts)."""
    docname: str
    level: int = 1
    part: str | None = None


def toc_entries(toc_file: Path | None, pages: list) -> list:
    """An :class:`Entry` for each of ``pages`` (in their order), with its part and depth read
    from the jb-book table of contents ``toc_file`` (flat, without parts, when None)."""
    found: dict = {}
    if toc_file is not None:
        toc = yaml.safe_load(Path(toc_file).read_text())
        strip = lambda d: re.sub(r"\.(md|ipynb)$", "", d)          # noqa: E731

        def walk(items, level, part):
            for item in items or []:
                if "file" in item:
                    found.setdefault(strip(item["file"]), Entry(strip(item["file"]), level, part))
                walk(item.get("sections"), level + 1, part)

        found[strip(toc["root"])] = Entry(strip(toc["root"]))
        for part in toc.get("parts", []):
            walk(part.get("chapters"), 1, part.get("caption"))
        walk(toc.get("chapters"), 1, None)
    return [found.get(d, Entry(d)) for d in pages]


@dataclass
class Printed:
    """One printed page of the book: its entry, title, PDF and section headings
    (``[(title, 0-based page in this PDF)]``, the h2 of Chrome's document outline)."""
    entry: Entry
    title: str
    pdf: object
    sections: list = field(default_factory=list)


def _sections(pdf, titles: list | None = None) -> list:
    """The second-level headings of a printed page: ``[(title, page index)]``, [] when it has
    none. The pages come from Chrome's document outline (``generateDocumentOutline``: the h1
    with the h2 under it); the titles from ``titles`` (the h2 of the page as printed,
    :data:`HEADINGS_JS`) when there are as many, else from the outline."""
    try:
        outline = pdf.outline
    except Exception:                           # noqa: BLE001 - a damaged outline: no sections
        return []
    out = []
    for i, item in enumerate(outline):
        if isinstance(item, list) and i > 0 and not isinstance(outline[i - 1], list):
            for child in item:
                if not isinstance(child, list):
                    out.append((child.title.strip(), pdf.get_destination_page_number(child)))
    if titles is not None and len(titles) == len(out):
        out = [(title or old, page) for title, (old, page) in zip(titles, out)]
    return out


def split_title(book_title: str) -> tuple:
    """``(title, edition)``: "calnotes: ... (student edition)" -> ("calnotes: ...",
    "Student edition"); a title without an edition in brackets gives ``(title, "")``."""
    m = re.match(r"^(.*?)\s*\(([^()]*edition)\)\s*$", book_title)
    if not m:
        return book_title, ""
    return m.group(1), m.group(2)[0].upper() + m.group(2)[1:]


FRONT_CSS = """
body { font-family: "Helvetica Neue", Arial, sans-serif; color: #222; margin: 0; }
.title-page { height: 9.9in; display: flex; flex-direction: column; justify-content: center;
  break-after: page; padding: 0 0.4in; }
.title-page h1 { font-size: 30pt; font-weight: 600; margin: 0 0 0.3em; line-height: 1.15; }
.title-page .edition { font-size: 16pt; color: #444; margin: 0 0 2.5em; }
.title-page p { font-size: 11pt; margin: 0.25em 0; color: #444; }
.contents h2 { font-size: 18pt; font-weight: 600; margin: 0 0 0.8em; }
.contents ol { list-style: none; margin: 0; padding: 0; }
.contents li { display: flex; align-items: baseline; font-size: 10.5pt; margin: 0.18em 0;
  break-inside: avoid; }
.contents li .fill { flex: 1; border-bottom: 1px dotted #999; margin: 0 0.4em; }
.contents li.part { font-weight: 600; font-size: 11.5pt; margin-top: 0.9em; break-after: avoid; }
.contents li.level-2 { padding-left: 1.6em; font-size: 10pt; color: #333; }
.contents li.section { padding-left: 1.6em; font-size: 9.5pt; color: #555; }
.contents li.level-2.section { padding-left: 3.2em; }
"""


def front_matter_html(book_title: str, printed: list, starts: list, date: str,
                      with_sections: bool = True) -> str:
    """The title page and the table of contents: parts, their pages (indented by depth) and the
    pages' sections, each with the number of the page it starts on (``starts``, 1-based)."""
    title, edition = split_title(book_title)
    rows, part = [], None
    for doc, start in zip(printed, starts):
        if doc.entry.part is not None and doc.entry.part != part:
            part = doc.entry.part
            rows.append(f'<li class="part"><span>{_escape(part)}</span><span class="fill"></span>'
                        f'<span>{start}</span></li>')
        level = min(doc.entry.level, 2)
        rows.append(f'<li class="level-{level}"><span>{_escape(doc.title)}</span>'
                    f'<span class="fill"></span><span>{start}</span></li>')
        if with_sections:
            for name, page in doc.sections:
                rows.append(f'<li class="level-{level} section"><span>{_escape(name)}</span>'
                            f'<span class="fill"></span><span>{start + page}</span></li>')
    return ("<!doctype html><html><head><meta charset='utf-8'><title>Contents</title>"
            f"<style>{FRONT_CSS}</style></head><body>"
            '<section class="title-page">'
            f"<h1>{_escape(title)}</h1>"
            + (f'<p class="edition">{_escape(edition)}</p>' if edition else "")
            + "<p>calnotes contributors</p>"
            f"<p>Printed {date} from the HTML edition, with its figures and formulas.</p>"
            "<p>Every chapter is also a notebook to run; the reference appendices (verification"
            " ledger, benchmarks, API) are in the HTML edition.</p>"
            "</section>"
            '<section class="contents"><h2>Contents</h2><ol>' + "".join(rows) + "</ol></section>"
            "</body></html>")


FRONT_GUESS = 2     # pages assumed for the title page and contents on the first try


def print_front_matter(driver, base: str, html: Path, book_title: str, printed: list,
                       date: str, log) -> object:
    """The title page and contents printed (a PdfReader), their page numbers right: printed
    again when the contents run to another number of pages than assumed."""
    from pypdf import PdfReader
    page = html / "__calnotes_front__.html"
    n_front = FRONT_GUESS
    try:
        for attempt in range(4):
            starts, at = [], n_front + 1
            for doc in printed:
                starts.append(at)
                at += len(doc.pdf.pages)
            page.write_text(front_matter_html(book_title, printed, starts, date))
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
            driver.get(base + page.name + f"?v={attempt}")     # never the cached first try
            front = PdfReader(io.BytesIO(_print(driver, {
                **PAPER, "printBackground": True, "displayHeaderFooter": True,
                "headerTemplate": "<span></span>", "footerTemplate": "<span></span>"})))
            if len(front.pages) == n_front:
                log(f"course_pdf: title page and contents: {n_front} pages")
                return front
            n_front = len(front.pages)
        raise RuntimeError("the contents do not settle on a number of pages")
    finally:
        page.unlink(missing_ok=True)


def add_outline(writer, printed: list, n_front: int) -> None:
    """Bookmarks: the contents; then per part (its caption) its pages, a section page (a figure
    page) under its chapter, and under each page its sections (h2)."""
    writer.add_outline_item(title="Contents", page_number=1 if n_front > 1 else 0)
    at, part, part_item, chapter_item = n_front, None, None, None
    for doc in printed:
        if doc.entry.part != part:
            part = doc.entry.part
            part_item = (writer.add_outline_item(title=part, page_number=at)
                         if part is not None else None)
        parent = chapter_item if doc.entry.level > 1 and chapter_item is not None else part_item
        item = writer.add_outline_item(title=doc.title, page_number=at, parent=parent)
        if doc.entry.level <= 1:
            chapter_item = item
        for name, page in doc.sections:
            writer.add_outline_item(title=name, page_number=at + page, parent=item)
        at += len(doc.pdf.pages)


def print_book(html: Path, toc_file: Path, out: Path, log=print, skip=(),
               pages: list | None = None) -> dict:
    """Print the pages of ``html`` in ``toc_file`` order (less ``skip`` prefixes; or exactly
    ``pages``) into ``out``: a title page and a table of contents with page numbers, then the
    pages, each with a running head; page numbers; bookmarks by part, page and section.
    Returns a summary dict.

    A page that cannot be printed (also in pieces) is reported and left out: the PDF of the
    other pages is still written, and the function raises ``SystemExit`` naming what is
    missing after writing it.
    """
    from pypdf import PdfReader, PdfWriter

    if pages is None:
        pages = toc_pages(toc_file, skip)
    missing = [d for d in pages if not (html / f"{d}.html").is_file()]
    if missing:
        raise SystemExit(f"course_pdf: pages missing from {html}: {missing}")
    entries = {e.docname: e for e in toc_entries(toc_file, pages)}
    blank = html / "__calnotes_blank__.html"
    server, base = serve(html)
    driver = start_browser()
    driver.set_window_size(PRINT_WIDTH_PX, 1000)      # the printed column's width
    writer = PdfWriter()
    problems, failed, printed, t0 = [], [], [], time.time()
    book_title = "calnotes"
    try:
        for docname in pages:
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": ""})
            driver.get(base + f"{docname}.html")
            state = driver.execute_async_script(WAIT_JS)
            if "failed" in state:
                problems.append(f"{docname}: waiting for the page failed: {state['failed']}")
                continue
            if state["errors"]:
                problems.append(f"{docname}: {state['errors']} MathJax error(s) (mjx-merror)")
            severe = [e["message"] for e in driver.get_log("browser")
                      if e["level"] == "SEVERE" and "favicon.ico" not in e["message"]]
            if severe:
                log(f"course_pdf: {docname}: console errors: {severe[:3]}")
            driver.execute_script(ADD_CSS_JS, PRINT_CSS)
            driver.execute_cdp_cmd("Emulation.setEmulatedMedia", {"media": "print"})
            fit = driver.execute_async_script(KEEP_JS)
            if fit["nWide"]:
                log(f"course_pdf: {docname}: {fit['nWide']} block(s) wider than the printed"
                    f" column, cut off at the margin: {fit['wide']}")
            headings = driver.execute_script(HEADINGS_JS)
            title = state["title"].split(" — ")[0].split(" &#8212; ")[0].strip() or docname
            if docname == pages[0]:
                book_title = (state["title"].split(" — ")[-1].strip() or book_title)
            params = {**PAPER, "printBackground": True, "displayHeaderFooter": True,
                      "headerTemplate": header_template(book_title, title),
                      "footerTemplate": "<span></span>", "preferCSSPageSize": False,
                      "generateDocumentOutline": True}
            try:
                # printed in the layout just measured: the print media stays emulated, so the
                # book's print script has fitted wide blocks to this width and stays applied
                data = print_document(driver, params, log, docname)
            except RuntimeError as exc:
                failed.append(docname)
                log(f"course_pdf: FAILED {exc}; the PDF is written without this page")
                continue
            pdf = PdfReader(io.BytesIO(data))
            printed.append(Printed(entries[docname], title, pdf, _sections(pdf, headings)))
            log(f"course_pdf: {docname}: {len(pdf.pages)} pages, {state['typeset']} formulas"
                + (f", {fit['scaled']} wide blocks scaled to the column" if fit["scaled"] else ""))
        if printed:
            front = print_front_matter(driver, base, html, book_title, printed,
                                       time.strftime("%Y-%m-%d"), log)
            for page in front.pages:
                writer.add_page(page)
            for doc in printed:
                for page in doc.pdf.pages:
                    writer.add_page(page)
            add_outline(writer, printed, len(front.pages))
            number_pages(driver, base, html, writer, log)
    finally:
        driver.quit()
        server.shutdown()
        server.server_close()
        blank.unlink(missing_ok=True)
    if problems:
        raise SystemExit("course_pdf: " + "\n  ".join(problems))
    out.parent.mkdir(parents=True, exist_ok=True)
    writer.add_metadata({"/Title": split_title(book_title)[0] if printed else book_title,
                         "/Creator": "scripts/course_pdf.py (headless Chromium)"})
    writer.page_mode = "/UseOutlines"           # a reader opens with the bookmarks shown
    with open(out, "wb") as fh:
        writer.write(fh)
    summary = {"pages": len(writer.pages), "documents": len(pages) - len(failed),
               "bytes": out.stat().st_size, "seconds": round(time.time() - t0, 1),
               "failed": failed}
    shown = out.relative_to(ROOT) if out.is_relative_to(ROOT) else out
    log(f"course_pdf: {shown}: {summary['pages']} pages from {summary['documents']} documents,"
        f" {summary['bytes'] / 1e6:.1f} MB, {summary['seconds']} s")
    if failed:
        raise SystemExit(f"course_pdf: {len(failed)} page(s) could not be printed and are"
                         f" missing from {shown} (a partial PDF): {failed}")
    return summary


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--html", type=Path, default=ROOT / "_build" / "course" / "html",
                        help="the built HTML (default: the student edition)")
    parser.add_argument("--toc", type=Path, default=None,
                        help="table of contents giving the page order (default: the student"
                             " sources' _build/course-src/_toc.yml, or _toc.yml for --html"
                             " _build/html)")
    parser.add_argument("--out", type=Path, default=ROOT / "_build" / "course" / "calnotes.pdf")
    parser.add_argument("--skip", nargs="*", default=None, metavar="PREFIX",
                        help="leave out the pages whose docname starts with one of these"
                             f" (default: {' '.join(SKIP)}, the reference appendices; --skip"
                             " with no value prints every page)")
    parser.add_argument("--with-reference", action="store_true",
                        help="also print the reference appendices (verification ledger,"
                             " benchmarks, API reference: about 110 more pages)")
    parser.add_argument("--pages", nargs="+", metavar="DOCNAME",
                        help="print only these pages, in this order (e.g. book/intro)")
    parser.add_argument("--verify", action="store_true",
                        help="after printing, check that every page carries its page number")
    args = parser.parse_args(argv)
    toc = args.toc
    if toc is None:
        student = ROOT / "_build" / "course-src" / "_toc.yml"
        teacher = args.html.resolve() == (ROOT / "_build" / "html").resolve()
        toc = ROOT / "_toc.yml" if teacher or not student.is_file() else student
    out = args.out.resolve()
    skip = args.skip if args.skip is not None else ([] if args.with_reference else SKIP)
    print_book(args.html.resolve(), toc, out, skip=tuple(skip), pages=args.pages)
    if args.verify:
        bad = page_numbers_ok(out)
        if bad:
            raise SystemExit(f"course_pdf: pages without their page number: {bad[:20]}")
        print(f"course_pdf: every page of {out.name} carries its page number")
    return 0


if __name__ == "__main__":
    sys.exit(main())
