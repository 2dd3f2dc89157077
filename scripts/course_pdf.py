"""Print a built edition of the book to one PDF through headless Chromium, offline.

    .venv/bin/python scripts/course_pdf.py [--html _build/course/html] [--out _build/course/calnotes.pdf]

The default prints the *student* edition (``make course`` builds it into _build/course/html):
the PDF is course material to hand out, and in the teacher edition (``--html _build/html``)
the solutions are collapsed dropdowns, which print as their titles only.

The pages are served by a local HTTP server on 127.0.0.1 (a thread of this process; file://
would block MathJax's web fonts) and opened one after another, in the order of the table of
contents (``--toc``, default the student sources' _toc.yml), in Debian's Chromium driven by
Selenium through /usr/bin/chromedriver (Selenium never downloads a driver). Every host name
other than 127.0.0.1 fails to resolve inside the browser, so nothing is fetched from the
internet. Before a page is printed, MathJax's ``startup.promise`` has resolved (all math
typeset), the fonts and images have loaded, and the page has no MathJax error node
(``mjx-merror``), else the script fails; print rules keep code cells, figures, tables and
boxes in one piece where they fit on a page. Each page is printed with Chrome's
``Page.printToPDF`` (Selenium's ``print_page``: A4, backgrounds on) and the pages are merged
with pypdf, one bookmark per page (its title).
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
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from course import toc_docnames  # noqa: E402  (scripts/course.py: one reading of the TOC)

ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
PAGE_TIMEOUT = 120  # seconds for one page to load and typeset (the API page is long)

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


# Print rules added to every page before printing: keep code cells, outputs, figures, tables,
# boxes and display math in one piece when they fit on a page (a block taller than a page still
# breaks), and keep headings with what follows them.
PRINT_CSS = """
@media print {
  div.cell_input, div.cell_output, div.highlight, pre, figure, img, table, div.admonition,
  div.math, mjx-container[display="true"] { break-inside: avoid; }
  h1, h2, h3, h4, .admonition-title { break-after: avoid; }
}
"""
ADD_CSS_JS = ("const s = document.createElement('style'); s.textContent = arguments[0];"
              " document.head.appendChild(s);")


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


def toc_pages(toc_file: Path) -> list:
    """The docnames of a jb-book table of contents in reading order (suffixes dropped)."""
    toc = yaml.safe_load(toc_file.read_text())
    return [re.sub(r"\.(md|ipynb)$", "", d) for d in toc_docnames(toc)]


def print_book(html: Path, toc_file: Path, out: Path, log=print) -> dict:
    """Print every page of ``html`` in ``toc_file`` order into ``out``; a summary dict."""
    from pypdf import PdfReader, PdfWriter
    from selenium.webdriver.common.print_page_options import PrintOptions

    pages = toc_pages(toc_file)
    missing = [d for d in pages if not (html / f"{d}.html").is_file()]
    if missing:
        raise SystemExit(f"course_pdf: pages missing from {html}: {missing}")
    server, base = serve(html)
    driver = start_browser()
    writer = PdfWriter()
    problems, t0 = [], time.time()
    try:
        opts = PrintOptions()
        opts.page_width, opts.page_height = 21.0, 29.7          # A4, in cm
        opts.margin_top = opts.margin_bottom = 1.2
        opts.margin_left = opts.margin_right = 1.0
        opts.background = True
        opts.shrink_to_fit = True
        for docname in pages:
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
            pdf = PdfReader(io.BytesIO(base64.b64decode(driver.print_page(opts))))
            first = len(writer.pages)
            for page in pdf.pages:
                writer.add_page(page)
            title = state["title"].split(" — ")[0].split(" &#8212; ")[0].strip() or docname
            writer.add_outline_item(title=title, page_number=first)
            log(f"course_pdf: {docname}: {len(pdf.pages)} pages, {state['typeset']} formulas")
    finally:
        driver.quit()
        server.shutdown()
    if problems:
        raise SystemExit("course_pdf: " + "\n  ".join(problems))
    out.parent.mkdir(parents=True, exist_ok=True)
    writer.add_metadata({"/Title": "calnotes: measuring calibration, verified",
                         "/Creator": "scripts/course_pdf.py (headless Chromium)"})
    with open(out, "wb") as fh:
        writer.write(fh)
    summary = {"pages": len(writer.pages), "documents": len(pages),
               "bytes": out.stat().st_size, "seconds": round(time.time() - t0, 1)}
    log(f"course_pdf: {out.relative_to(ROOT) if out.is_relative_to(ROOT) else out}:"
        f" {summary['pages']} pages from {summary['documents']} documents,"
        f" {summary['bytes'] / 1e6:.1f} MB, {summary['seconds']} s")
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
    args = parser.parse_args(argv)
    toc = args.toc
    if toc is None:
        student = ROOT / "_build" / "course-src" / "_toc.yml"
        teacher = args.html.resolve() == (ROOT / "_build" / "html").resolve()
        toc = ROOT / "_toc.yml" if teacher or not student.is_file() else student
    print_book(args.html.resolve(), toc, args.out.resolve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
