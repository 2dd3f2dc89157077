"""The "This chapter" box, trimmed: no box on the book's first page,
a one-line rerun hint with the download link on figure pages, and no "No claims are
registered" sentence on a chapter without claims."""

from __future__ import annotations

import pytest

from calnotes.book.chapters import list_chapters
from calnotes.book.claims.status import chapter_status

FIGURE_PAGES = [c.docname for c in list_chapters() if "/figures/" in c.docname]


def test_the_first_page_displays_no_box():
    from IPython.core.formatters import DisplayFormatter

    status = chapter_status("book/intro")
    assert status.kind == "root"
    # what a notebook cell ending in chapter_status(...) outputs: nothing at all
    assert DisplayFormatter().format(status) == ({}, {})
    assert status._repr_html_() == "" and status.text() == ""


def test_figure_pages_get_a_one_line_rerun_hint_with_the_download_link():
    assert len(FIGURE_PAGES) >= 4
    for docname in FIGURE_PAGES:
        status = chapter_status(docname)
        html = status._repr_html_()
        assert status.kind == "figure", docname
        assert html.startswith('<p class="chapter-rerun">') and html.count("<p") == 1
        assert status.command in html and "download>download it as a notebook</a>" in html
        assert "This chapter" not in html and "admonition" not in html
        assert "parameters:" not in html and "No claims" not in html


def test_a_chapter_without_claims_has_no_claims_sentence():
    status = chapter_status("book/practice/evaluate")
    assert status.kind == "chapter" and not status._counts()
    html = status._repr_html_()
    assert "This chapter" in html and status.command in html and "download it as" in html
    assert "No claims are registered" not in html and "Claims checked" not in html
    assert status.text() == f"rerun with new parameters: {status.command}"


@pytest.mark.parametrize("docname", ["book/truthfulness/table1", "book/foundations/measures"])
def test_a_chapter_with_claims_keeps_its_full_box(docname):
    status = chapter_status(docname)
    html = status._repr_html_()
    assert status.kind == "chapter"
    assert html.startswith('<div class="admonition note chapter-box">')
    assert "Claims checked in this chapter:" in html and "ledger.html" in html
    assert "(parameters: <code>seed</code>" in html
