"""The landing page's "Findings at a glance" box: counts that add up to the inventory, and one
working link per erratum that affects a paper's conclusion."""

import re
from pathlib import Path

from calnotes.book.claims import errata_notes, glance, inventory

ROOT = Path(__file__).resolve().parents[1]


def test_the_counts_are_the_inventorys_and_add_up():
    t = glance.totals()
    coverage = inventory.coverage().values()
    assert t["results"] == sum(row.results for row in coverage)
    assert t["results"] == sum(v for k, v in t.items() if k != "results")
    text = glance.at_a_glance()
    for key in ("results", "verified", "errata", "not_checked"):
        assert str(t[key]) in text


def test_every_consequential_erratum_is_one_linked_line_to_its_entry():
    text = glance.at_a_glance()
    links = re.findall(r"^- \[.*\]\(#([\w-]+)\)", text, flags=re.MULTILINE)
    wanted = [errata_notes.anchor(cid) for cid, note in errata_notes.NOTES.items()
              if note.severity == errata_notes.CONCLUSION]
    assert links == wanted and wanted
    # an erratum of lower severity is not listed
    minor = [cid for cid, note in errata_notes.NOTES.items()
             if note.severity != errata_notes.CONCLUSION]
    assert minor and not any(errata_notes.anchor(cid) in text for cid in minor)
    # the errata page defines each target (it writes "(anchor)=" before every entry)
    page = (ROOT / "book" / "appendix" / "errata.md").read_text()
    assert "({errata_notes.anchor(c.id)})=" in page


def test_the_bottom_line_comes_right_after_the_introduction():
    toc = (ROOT / "_toc.yml").read_text()
    files = re.findall(r"file: (\S+)", toc)
    assert files[0] == "book/appendix/papers_hold"
    intro = (ROOT / "book" / "intro.md").read_text()
    title = intro.index("\n# ")
    assert intro.index("at_a_glance()") > title
    assert intro.index("at_a_glance()") < intro.index("A weather forecaster")
