"""The book's bottom line in a few lines: the counts per status over the four papers and the
errata that affect a paper's conclusion, for the landing page's "Findings at a glance" box.

Everything is read from the inventory (:func:`calnotes.book.claims.inventory.coverage`) and the
errata notes (:data:`calnotes.book.claims.errata_notes.NOTES`); nothing is run here.  The page
*Do the papers hold?* runs every claim it names and fails if one no longer comes out as
stated, so the numbers here are checked where they are derived.

Examples
--------
>>> text = at_a_glance()
>>> text.startswith("Of the ") and "errata" in text
True
"""

from __future__ import annotations

from . import errata_notes, inventory

__all__ = ["totals", "consequential_errata", "at_a_glance"]


def totals() -> dict:
    """``{status: count}`` over the four papers' numbered results.

    Examples
    --------
    >>> t = totals()
    >>> t["results"] == sum(v for k, v in t.items() if k != "results")
    True
    """
    keys = ("results", "verified", "consistent", "illustrations", "errata", "findings",
            "not_checked")
    rows = inventory.coverage().values()
    return {key: sum(getattr(row, key) for row in rows) for key in keys}


def consequential_errata() -> list:
    """``[(claim id, note)]`` of the errata that affect a conclusion of a paper, in the
    errata notes' order."""
    return [(cid, note) for cid, note in errata_notes.NOTES.items()
            if note.severity == errata_notes.CONCLUSION]


def at_a_glance() -> str:
    """MyST Markdown: one sentence of counts, then one linked line per consequential erratum
    (with the paper's short name)."""
    t = totals()
    text = (f"Of the {t['results']} numbered results of the four papers, **{t['verified']}"
            f" are verified** (each with a check that rejects a near false neighbour of the"
            f" statement), {t['consistent']} are consistent with the paper's other numbers,"
            f" {t['illustrations']} are only illustrated, **{t['errata']} are contradicted**"
            f" by an erratum, {t['findings']} are findings on our substitute data and"
            f" {t['not_checked']} are not checked yet.")
    found = consequential_errata()
    if found:
        text += (f" {len(found)} errata affect a conclusion of the paper they are"
                 " in:\n\n")
        text += "\n".join(
            f"- [{note.title}](#{errata_notes.anchor(cid)})"
            f" ({errata_notes.PAPER_NOTES[cid.split('.')[0]].short})" for cid, note in found)
    return text
