"""The box that opens each chapter (calnotes.book.claims.status): right chapter, right counts, a
command the command line accepts."""

from __future__ import annotations

import json
import re
import shlex

import pytest

from calnotes.book.chapters import list_chapters
from calnotes.book.claims import all_claims
from calnotes.book.claims.status import chapter_status
from calnotes.cli import build_parser

CHAPTERS = [c for c in list_chapters() if not c.docname.startswith("book/appendix")]


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_every_chapter_opens_with_its_own_box(chapter):
    text = chapter.path.read_text()
    if chapter.path.suffix == ".ipynb":     # a figure page: its code cells, tags first
        nb = json.loads(text)
        cells = [(f":tags: [{', '.join(c['metadata'].get('tags', []))}]\n" if
                  c["metadata"].get("tags") else "") + "".join(c["source"])
                 for c in nb["cells"] if c["cell_type"] == "code"]
        text = "\n".join(cells)
    else:
        cells = re.findall(r"^```\{code-cell\}[^\n]*\n(.*?)^```", text, flags=re.M | re.S)
    calls = re.findall(r'chapter_status\("([^"]+)"\)', text)
    assert calls == [chapter.docname]               # once, naming this chapter (no copy-paste)
    assert re.match(r":tags: \[parameters[],]", cells[0])  # the first code cell
    if chapter_status(chapter.docname).kind != "root":    # the first page shows no box
        assert "chapter_status(" in cells[1]        # right after the parameters cell


@pytest.mark.parametrize("chapter", CHAPTERS, ids=lambda c: c.name)
def test_counts_and_command(chapter):
    status = chapter_status(chapter.docname)
    mine = [c for c in all_claims() if c.chapter == chapter.docname]
    assert status.agree == sum(c.expect == "agrees" for c in mine)
    assert status.errata == sum(c.expect == "disagrees" for c in mine)
    assert status.illustrations == sum(c.expect == "illustrates" for c in mine)
    assert status.findings == sum(c.expect == "finding" for c in mine)
    argv = shlex.split(status.command)
    assert argv[0] == "calnotes"
    args = build_parser().parse_args(argv[1:])
    assert args.chapter == chapter.name and args.out == f"runs/{chapter.name}"
    name = args.parameter[0][0]
    assert name in chapter.parameters
    html = status._repr_html_()
    if status.kind == "root":
        assert html == "" and status.text() == ""
        return
    assert status.command in html and "download>download it as a notebook" in html
    if status.kind == "figure":
        assert "This chapter" not in html and html.count("<p") == 1     # one line, no box
    if mine:
        assert "ledger.html" in html
    assert "No claims are registered" not in html and "no registered claims" not in html


def test_claims_are_counted_somewhere():
    """Every claim belongs to a chapter that shows a box, or to the appendix."""
    shown = {c.docname for c in CHAPTERS}
    for claim in all_claims():
        assert claim.chapter in shown or claim.chapter.startswith("book/appendix"), claim.id


def test_unknown_chapter():
    with pytest.raises(ValueError, match="docname: 'book/nowhere' is not a chapter"):
        chapter_status("book/nowhere")
