"""The book's search ranks a chapter whose title names the query above API entries.

With Sphinx's default scores an API function whose name contains the word ("truthful") outranks
the chapter *Truthful calibration measures*, and the claims module's API page outranks *Errata*
for "erratum". book/_ext/search_scorer.js (Sphinx's ``html_search_scorer``) gives a page whose
title names the query a bonus, a section whose heading names it a smaller one, and the API pages
a malus. Run in headless Chromium on Sphinx's own searchtools.js with a small index in Sphinx's
format; the control runs the same query without the scorer. Skipped when chromium,
chromedriver or selenium is missing.
"""

from __future__ import annotations

import importlib.util
import json
import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCORER = ROOT / "book" / "_ext" / "search_scorer.js"

if importlib.util.find_spec("selenium") is None or not all(
        os.access(p, os.X_OK) for p in ("/usr/bin/chromium", "/usr/bin/chromedriver")):
    pytest.skip("needs chromium, chromedriver and selenium", allow_module_level=True)

DOCS = ["book/truthfulness/truthfulness", "book/appendix/api/calnotes.truthfulness",
        "book/foundations/measures", "book/appendix/errata", "book/appendix/api/calnotes.book.claims"]
TITLES = ["Truthful calibration measures", "calnotes.truthfulness", "The measures", "Errata",
          "calnotes.book.claims"]
# Sphinx's searchindex.js layout (7.x): terms and title terms map a (stemmed) word to documents;
# objects map a module to [document, object type, priority, anchor, name].
INDEX = {
    "docnames": DOCS, "titles": TITLES, "filenames": [d + ".md" for d in DOCS],
    "terms": {"truthful": [0, 1, 2], "erratum": [1, 2, 3, 4], "errata": [3]},
    "titleterms": {"truthful": [0, 2], "errata": 3, "calnotes.truthfulness": 1},
    "alltitles": {"Truthful calibration measures": [[0, None]], "Errata": [[3, None]],
                  "Why a measure should be truthful": [[2, "why-truthful"]]},
    "objects": {"calnotes": [[1, 1, 0, "module-calnotes.truthfulness", "truthfulness"]],
                "calnotes.truthfulness": [[1, 0, 1, "", "truthful_measure"],
                                          [1, 0, 1, "", "is_truthful"]],
                "calnotes.book.claims": [[4, 0, 1, "", "erratum_anchor"]]},
    "objnames": {"0": ["py", "function", "Python function"],
                 "1": ["py", "module", "Python module"]},
    "objtypes": {"0": "py:function", "1": "py:module"},
    "indexentries": {},
    "envversion": {},
}
# Sphinx's language_data.js for English, without the stemmer (words are indexed as typed here).
LANGUAGE_DATA = ("var stopwords = [];\n"
                 "var Stemmer = function () { this.stemWord = (w) => w; };\n")


def _ranking(driver, folder: Path, query: str, with_scorer: bool) -> list[str]:
    """The result titles of ``query``, best first, as the search page would list them."""
    import sphinx
    searchtools = Path(sphinx.__file__).parent / "themes" / "basic" / "static" / "searchtools.js"
    # Sphinx inlines the scorer file into language_data.js, which loads before searchtools.js
    data = LANGUAGE_DATA + (SCORER.read_text() if with_scorer else "")
    (folder / "language_data.js").write_text(data)
    (folder / "searchtools.js").write_bytes(searchtools.read_bytes())
    page = folder / "search.html"
    page.write_text('<!DOCTYPE html><html><head><meta charset="utf-8"><script>'
                    'const _ready = (f) => document.addEventListener("DOMContentLoaded", f);'
                    'const _ = (s) => s; const SPHINX_HIGHLIGHT_ENABLED = false;</script><script src="language_data.js"></script>'
                    '<script src="searchtools.js"></script></head><body></body></html>')
    driver.get(page.as_uri() + "?q=" + query)
    return driver.execute_script(
        "Search.setIndex(" + json.dumps(INDEX) + ");"
        "const parsed = Search._parseQuery(arguments[0]);"
        "return Search._performSearch(...parsed).reverse().map((r) => r[1]);", query)


def test_a_chapter_named_by_the_query_comes_first(driver, tmp_path):
    assert _ranking(driver, tmp_path, "truthful", True)[0] == "Truthful calibration measures"
    errata = _ranking(driver, tmp_path, "erratum", True)
    assert errata[0] == "Errata", errata
    # API entries come after every chapter that matches
    titles = _ranking(driver, tmp_path, "truthful", True)
    first_api = min(i for i, t in enumerate(titles) if t.startswith("calnotes."))
    chapters = [i for i, t in enumerate(titles) if not t.startswith("calnotes.")]
    assert max(chapters) < first_api, titles


def test_without_the_scorer_an_api_entry_comes_first(driver, tmp_path):
    """The control: Sphinx's default scores on the same index put an API entry first."""
    assert _ranking(driver, tmp_path, "truthful", False)[0].startswith("calnotes.")
    assert _ranking(driver, tmp_path, "erratum", False)[0] != "Errata"
