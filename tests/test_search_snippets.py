"""Search result snippets come from the page's text.

Sphinx's search page (searchtools.js) cuts a result's snippet from the text of the page's
``[role="main"]`` element; in the book's theme that element also holds the header's download
buttons, the right-hand contents list and the previous/next links, so snippets read "....md" or
"....pdf Truthful calibration measures Contents", with formulas as raw ``\\(\\ell_2\\)``. The
book's script (book/_ext/static/calnotes.js) makes the snippet text the article's alone, with
formulas as text. Run in headless Chromium on Sphinx's own searchtools.js and a page shaped
like the theme's; skipped when chromium, chromedriver or selenium is missing.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
CALNOTES_JS = ROOT / "book" / "_ext" / "static" / "calnotes.js"

if importlib.util.find_spec("selenium") is None or not all(
        os.access(p, os.X_OK) for p in ("/usr/bin/chromium", "/usr/bin/chromedriver")):
    pytest.skip("needs chromium, chromedriver and selenium", allow_module_level=True)

# A result page as the theme lays it out (pydata-sphinx-theme 0.17's layout.html): the header
# with the download buttons, then the article, the contents list and the prev/next links, all
# inside <main role="main">.
RESULT_PAGE = r"""<!DOCTYPE html><html><head><title>Truthful</title></head><body>
<main id="main-content" class="bd-main" role="main"><div class="bd-content">
<div class="bd-article-container">
<div class="bd-header-article d-print-none"><div class="header-article-items">
<button>.md</button><button>.pdf</button><span>Toggle fullscreen</span></div></div>
<article class="bd-article"><section id="truthful">
<h1>Truthful calibration measures<a class="headerlink" href="#truthful">#</a></h1>
<div class="cell tag_hide-input"><details class="hide above-input"><summary>
<span class="collapsed">Show code cell source</span></summary>
<div class="cell_input"><pre>import calnotes</pre></div></details></div>
<p>The <span class="math notranslate nohighlight">\(\ell_2\)</span>-QECE is truthful in the
sense of the hierarchy <span class="math notranslate nohighlight">\(\mathrm{ECE}_1 \le
\frac{1}{2}\)</span>.</p>
<section id="hierarchy">
<h2>The hierarchy</h2>
<p>Theorem 3.1 orders the measures.</p>
</section>
</section></article>
<footer class="prev-next-footer d-print-none"><a>previous Measures</a></footer></div>
<div class="bd-sidebar-secondary bd-toc">Contents Truthful The hierarchy</div>
</div></main></body></html>"""


def _site(folder: Path, with_calnotes: bool) -> Path:
    import sphinx
    searchtools = Path(sphinx.__file__).parent / "themes" / "basic" / "static" / "searchtools.js"
    (folder / "searchtools.js").write_bytes(searchtools.read_bytes())
    (folder / "calnotes.js").write_bytes(CALNOTES_JS.read_bytes())
    scripts = ('<script>const _ready = (f) => document.addEventListener("DOMContentLoaded", f);'
               '</script><script src="searchtools.js"></script>')
    if with_calnotes:
        scripts += '<script defer src="calnotes.js"></script>'    # as the book's pages load it
    page = folder / ("search.html" if with_calnotes else "search_sphinx.html")
    page.write_text(f"<!DOCTYPE html><html><head><meta charset=\"utf-8\">{scripts}</head>"
                    "<body></body></html>")
    return page


def _snippet_text(driver, page: Path, anchor: str = "") -> str:
    driver.get(page.as_uri())
    return driver.execute_script("return Search.htmlToText(arguments[0], arguments[1]);",
                                 RESULT_PAGE, anchor)


def test_snippets_come_from_the_article_with_formulas_as_text(driver, tmp_path):
    text = " ".join(_snippet_text(driver, _site(tmp_path, True)).split())
    assert text.startswith("Truthful calibration measures The ℓ_2-QECE is truthful"), text
    assert "ECE_1 ≤ 1/2" in text
    for leaked in (".md", ".pdf", "Toggle fullscreen", "Show code cell source", "import calnotes",
                   "Contents", "previous Measures", "\\(", "\\ell"):
        assert leaked not in text, (leaked, text)
    # a result in a section: the section's text
    section = " ".join(_snippet_text(driver, _site(tmp_path, True), "#hierarchy").split())
    assert section == "The hierarchy Theorem 3.1 orders the measures."


def test_sphinx_alone_takes_the_snippet_from_the_header_buttons(driver, tmp_path):
    """The control: Sphinx's own htmlToText on the same page gives the finding's snippet."""
    text = " ".join(_snippet_text(driver, _site(tmp_path, False)).split())
    assert text.startswith(".md.pdf"), text
    assert "\\(\\ell_2\\)" in text and "Contents" in text
