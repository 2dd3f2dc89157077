"""The errata and findings pages tell each account once.

Each erratum is one typeset account (what the paper states, what is true instead) with the
evidence in a collapsed dropdown; the registry's plain-text restatement is not repeated; headings
carry the note's title, not a claim id; every target other pages link to is still defined. The
findings page gets the same treatment, with a summary table and chapter links. The entries are
rendered here from synthetic results (no check is run), exactly as the pages render them.
"""

import re
from pathlib import Path

import pytest

from calnotes.book import claims
from calnotes.book.claims import _registry, errata_notes
from calnotes.book.claims.errata_notes import (FINDING_TITLES, NOTES, anchor, erratum_entry,
                                               finding_anchor, finding_entry, markdown_text)

ROOT = Path(__file__).resolve().parent.parent
APPENDIX = ROOT / "book" / "appendix"
ERRATA = [c for c in claims.all_claims() if c.expect == "disagrees"]
FINDINGS = [c for c in claims.all_claims() if c.expect == "finding"]
DROPDOWN = re.compile(r"^````\{dropdown\} (?P<title>[^\n]+)\n(?P<body>.*?)^````$", re.M | re.S)


def synthetic(claim):
    """A result as the page would get it, without running the check."""
    return _registry.Result(claim, claim.reference + 3 * (claim.tolerance + 1), 0.0, "smoke")


def erratum(claim):
    return erratum_entry(synthetic(claim), ["Thm 9.9"])


def finding(claim):
    return finding_entry(synthetic(claim), ["Sec. 9"])


def outside_dropdowns(text):
    return DROPDOWN.sub("", text)


@pytest.mark.parametrize("claim", ERRATA, ids=lambda c: c.id)
def test_erratum_is_told_once_typeset_with_the_evidence_in_a_dropdown(claim):
    text = erratum(claim)
    note = NOTES[claim.id]
    # the typeset account, once each
    assert text.count(f"**The paper states.** {note.printed}") == 1
    assert text.count(f"**What is true instead.** {note.correction}") == 1
    # the registry's one-line ASCII correction is not repeated (neither raw nor escaped)
    assert claim.correction not in text
    assert markdown_text(claim.correction) not in text
    assert "In the registry's words" not in text
    # the ASCII evidence appears once, inside the single closed dropdown
    dropdowns = list(DROPDOWN.finditer(text))
    assert len(dropdowns) == 1
    assert text.count(markdown_text(claim.evidence)) == 1
    assert markdown_text(claim.evidence) in dropdowns[0].group("body")
    assert markdown_text(claim.evidence) not in outside_dropdowns(text)
    assert ":open:" not in dropdowns[0].group("body")


@pytest.mark.parametrize("claim", ERRATA, ids=lambda c: c.id)
def test_erratum_heading_has_the_title_and_no_claim_id(claim):
    text = erratum(claim)
    headings = re.findall(r"^#+ .*$", text, re.M)
    assert headings == [f"### {NOTES[claim.id].title}"]
    assert claim.id not in headings[0] and "`" not in headings[0]
    # the id survives only in small print inside the dropdown
    assert claim.id not in outside_dropdowns(text)
    assert f"<small>Claim `{claim.id}`" in DROPDOWN.search(text).group("body")


@pytest.mark.parametrize("claim", ERRATA, ids=lambda c: c.id)
def test_erratum_target_line_is_kept_before_its_heading(claim):
    assert erratum(claim).startswith(f"({anchor(claim.id)})=\n### ")


@pytest.mark.parametrize("claim", ERRATA + FINDINGS, ids=lambda c: c.id)
def test_measured_line_says_what_the_number_counts(claim):
    text = erratum(claim) if claim.expect == "disagrees" else finding(claim)
    measured = re.search(r"^\*\*Measured\.\*\* (.*)$", text, re.M).group(1)
    quantity = markdown_text(claim.quantity)
    assert quantity[1:] in measured and quantity[:1].upper() == measured[:1]
    # no comparison code words ("measured 80 against 1 (ge, tolerance 0 ...)")
    assert not re.search(r"\b(abs|rel|le|ge)\b, tolerance", text)
    assert "against the paper's" not in text


def test_every_erratum_target_that_other_pages_link_to_is_defined():
    defined = set(re.findall(r"^\(([a-z0-9-]+)\)=$", "\n".join(erratum(c) for c in ERRATA),
                             re.M))
    # the targets the other pages and the claim lines build
    assert {anchor(c.id) for c in ERRATA} <= defined
    assert {_registry.erratum_anchor(c.id) for c in ERRATA} <= defined
    # and any written out literally in the book's sources
    written = set()
    for path in (ROOT / "book").rglob("*.md"):
        written |= set(re.findall(r"#(erratum-[a-z0-9-]+)", path.read_text()))
    assert written <= defined, sorted(written - defined)


@pytest.mark.parametrize("claim", FINDINGS, ids=lambda c: c.id)
def test_finding_is_told_once_with_a_title_a_chapter_link_and_a_dropdown(claim):
    text = finding(claim)
    assert text.startswith(f"({finding_anchor(claim.id)})=\n### {FINDING_TITLES[claim.id]}\n")
    headings = re.findall(r"^#+ .*$", text, re.M)
    assert len(headings) == 1 and claim.id not in headings[0] and "`" not in headings[0]
    assert f"{{doc}}`/{claim.chapter}`" in text
    assert "chapter *" not in text  # chapter names are links, not italics
    dropdowns = list(DROPDOWN.finditer(text))
    assert len(dropdowns) == 1
    assert text.count(markdown_text(claim.evidence)) == 1
    assert markdown_text(claim.evidence) in dropdowns[0].group("body")
    assert claim.id not in outside_dropdowns(text)
    assert f"**On our data.** {errata_notes._OUTCOME_SENTENCE[claim.outcome]}" in text


def test_findings_summary_has_one_row_per_finding_with_outcome_and_chapter_link():
    table = errata_notes.findings_summary([synthetic(c) for c in FINDINGS])
    rows = table.splitlines()
    assert rows[0] == "| finding | paper | on our data | rerun in |"
    assert len(rows) == 2 + len(FINDINGS)
    for claim, row in zip(FINDINGS, rows[2:]):
        cells = [cell.strip() for cell in row.strip("|").split(" | ")]
        assert cells[0] == f"[{FINDING_TITLES[claim.id]}](#{finding_anchor(claim.id)})"
        assert cells[1] == claim.id.split(".")[0]
        assert cells[2] in ("carries over", "does not carry over", "inconclusive")
        assert cells[3] == f"{{doc}}`/{claim.chapter}`"


def test_every_finding_has_a_title():
    assert errata_notes.finding_problems() == []
    assert sorted(FINDING_TITLES) == sorted(c.id for c in FINDINGS)


def test_errata_summary_links_every_entry_by_its_target():
    table = errata_notes.errata_summary([synthetic(c) for c in ERRATA], lambda i: ["Thm 9.9"])
    for claim in ERRATA:
        assert f"](#{anchor(claim.id)})" in table


@pytest.mark.parametrize("claim", ERRATA + FINDINGS, ids=lambda c: c.id)
def test_entry_is_well_formed_myst(claim):
    text = erratum(claim) if claim.expect == "disagrees" else finding(claim)
    assert text.count("````") == 2  # one dropdown, opened and closed
    # no ASCII notation left in the evidence shown to a reader
    shown = DROPDOWN.search(text).group("body")
    for ascii_math in ("sqrt(", ">=", "<=", "eps1", "Theta(", "->"):
        assert ascii_math not in shown, ascii_math


def test_pages_render_the_entries_from_the_notes():
    errata = (APPENDIX / "errata.md").read_text()
    assert "In the registry's words" not in errata
    assert "errata_notes.erratum_entry(" in errata
    findings = (APPENDIX / "data_findings.md").read_text()
    # Markdown outputs parsed as MyST: {doc} links and dropdowns work there
    assert "render_markdown_format: myst" in findings.split("---")[1]
    assert "errata_notes.finding_entry(" in findings
    assert "errata_notes.findings_summary(" in findings


def test_count_tables_use_short_headers_with_a_key():
    for header, meaning in errata_notes.COUNT_KEY:
        assert len(header) <= 9 and "&shy;" not in header, header
        assert meaning
    assert len(errata_notes.COUNT_KEY) == len(errata_notes.COUNT_FIELDS) == 7
    for page in ("papers_hold.md", "ledger.md"):
        text = (APPENDIX / page).read_text()
        assert "COUNT_KEY" in text and "&shy;" not in text, page
