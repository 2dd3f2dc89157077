"""The reader's notes on the errata and the papers (calnotes.book.claims.errata_notes)."""

import re
from pathlib import Path

import pytest

from calnotes.book import claims
from calnotes.book.claims import errata_notes, inventory
from calnotes.book.claims.errata_notes import NOTES, PAPER_NOTES, SEVERITIES, SEVERITY_MEANING

ROOT = Path(__file__).resolve().parent.parent
ERRATA = sorted(c.id for c in claims.all_claims() if c.expect == "disagrees")


def test_every_erratum_claim_has_a_note_and_every_note_is_an_erratum():
    assert sorted(NOTES) == ERRATA


def test_no_problems():
    assert errata_notes.problems() == []


@pytest.mark.parametrize("claim_id", sorted(NOTES))
def test_note_is_complete_and_renders(claim_id):
    note = NOTES[claim_id]
    assert note.severity in SEVERITIES
    for name in ("title", "printed", "correction", "why"):
        text = getattr(note, name)
        assert text.strip(), f"{claim_id}: empty {name}"
        assert errata_notes.tex_problems(text) == [], (claim_id, name, text)
        # a Markdown table cell or a list marker would break the page's layout
        assert "|" not in text, f"{claim_id}: {name} uses '|' (use \\lvert, \\rvert, \\mid)"


def test_severity_scale_is_documented():
    assert set(SEVERITY_MEANING) == set(SEVERITIES)
    doc = errata_notes.__doc__
    for severity in SEVERITIES:
        assert f'``"{severity}"``' in doc, severity


def test_papers_have_notes_with_verified_claims():
    assert list(PAPER_NOTES) == list(inventory.PAPERS)
    for paper, note in PAPER_NOTES.items():
        assert note.short and note.title and note.authors and note.venue
        assert note.holds
        for sentence, ids in note.holds:
            assert errata_notes.tex_problems(sentence) == []
            assert ids
            for i in ids:
                assert claims.get_claim(i).expect == "agrees", i


def test_paper_notes_cite_existing_bibliography_keys():
    bib = (ROOT / "book" / "references.bib").read_text()
    keys = set(re.findall(r"@\w+\{([^,\s]+),", bib))
    for note in PAPER_NOTES.values():
        assert note.cite in keys, note.cite


def test_tex_problems_finds_each_defect():
    assert errata_notes.tex_problems(r"$\frac{a}{b}$ and $\mathbb 1\{x\}$") == []
    assert errata_notes.tex_problems("$a$ and $b") == ["odd number of $"]
    assert errata_notes.tex_problems(r"$\frac{a}{b$")[0].startswith("formula 1 has unbalanced")
    assert errata_notes.tex_problems(r"$a}{b$")[0].startswith("formula 1 has unbalanced")
    assert errata_notes.tex_problems(r"$\bigl(a$")[0].startswith("formula 1 has unpaired")
    assert "display math" in errata_notes.tex_problems("$$a$$")[0]
    assert errata_notes.tex_problems("$a\n+ b$") == ["line break inside the text"]


def test_a_missing_or_stray_note_is_reported():
    erratum = claims.get_claim(ERRATA[0])
    agreeing = next(c for c in claims.all_claims() if c.expect == "agrees")
    found = errata_notes.problems(claims.all_claims() + [agreeing.__class__(
        **{**{f: getattr(erratum, f) for f in erratum.__dataclass_fields__},
           "id": "999.new.erratum"})])
    assert "999.new.erratum: erratum claim without a note" in found
    without = [c for c in claims.all_claims() if c.id != ERRATA[0]]
    assert f"{ERRATA[0]}: note for a claim that is not an erratum" in errata_notes.problems(without)


def test_anchors_are_unique_labels():
    anchors = [errata_notes.anchor(i) for i in NOTES]
    assert len(set(anchors)) == len(anchors)
    assert all(re.fullmatch(r"erratum-[a-z0-9-]+", a) for a in anchors)
