"""The coverage inventory (calnotes.book.claims.inventory) against the registry and the errata page."""

import dataclasses
import re
from pathlib import Path

import pytest

from calnotes.book.claims import all_claims, inventory, run_claim
from calnotes.book.claims.inventory import (CONSISTENT, ERRATUM, FINDING, ILLUSTRATION, NOT_CHECKED,
                                            VERIFIED, Entry)

ROOT = Path(__file__).resolve().parent.parent
REGISTERED = {c.id for c in all_claims()}
ENTRIES = inventory.entries()


def test_inventory_is_consistent_with_the_registry():
    assert inventory.problems() == []


def test_every_registered_claim_checks_some_result():
    named = {i for e in ENTRIES for i in e.claims}
    missing = sorted(REGISTERED - named)
    assert not missing, f"registered claims in no inventory entry: {missing}"


def test_every_named_claim_is_registered():
    unknown = [(e.paper, e.label, i) for e in ENTRIES for i in e.claims if i not in REGISTERED]
    assert not unknown, f"inventory entries name unregistered claims: {unknown}"


def test_counts_add_up():
    rows = inventory.coverage()
    assert list(rows) == list(inventory.PAPERS)
    for paper, row in rows.items():
        mine = inventory.entries(paper)
        assert row.results == len(mine) > 0
        assert row.results == (row.verified + row.consistent + row.illustrations + row.errata
                               + row.findings + row.not_checked)
        assert row.consistent == sum(e.status == CONSISTENT for e in mine)
        assert row.illustrations == sum(e.status == ILLUSTRATION for e in mine)
        assert row.findings == sum(e.status == FINDING for e in mine)
        assert row.verified == sum(e.status == VERIFIED for e in mine)
        assert row.errata == sum(e.status == ERRATUM for e in mine)
        assert row.not_checked == sum(e.status == NOT_CHECKED for e in mine)
    assert sum(r.results for r in rows.values()) == len(ENTRIES)


@pytest.mark.parametrize("paper", list(inventory.PAPERS))
def test_labels_are_unique_within_a_paper(paper):
    labels = [e.label for e in inventory.entries(paper)]
    duplicated = sorted({label for label in labels if labels.count(label) > 1})
    assert not duplicated, f"paper {paper}: labels listed twice: {duplicated}"


def test_every_unchecked_result_says_why():
    for e in ENTRIES:
        if e.status == NOT_CHECKED:
            assert e.reason.strip() and not e.claims, (e.paper, e.label)
        else:
            assert e.claims and not e.reason, (e.paper, e.label)


def test_declared_status_is_what_the_registry_implies():
    for e in ENTRIES:
        assert e.status == inventory.implied_status(e), (e.paper, e.label)


def _errata_page_key():
    """How the errata page selects and labels its items: must be by claim id."""
    text = (ROOT / "book" / "appendix" / "errata.md").read_text()
    assert re.search(r"""c\.expect\s*==\s*["']disagrees["']""", text), \
        "the errata page no longer selects the claims registered as disagreeing"
    assert "errata_notes.erratum_entry(r, " in text, \
        "the errata page no longer renders one entry per disagreeing claim"
    return inventory.errata_items()


def test_errata_entries_are_errata_page_items():
    page_items = _errata_page_key()
    assert page_items == {c.id for c in all_claims() if c.expect == "disagrees"}
    covered = set()
    for e in ENTRIES:
        if e.status == ERRATUM:
            here = page_items.intersection(e.claims)
            assert here, f"{e.paper} {e.label}: erratum without an item of the errata page"
            covered |= here
        else:
            assert not page_items.intersection(e.claims), (e.paper, e.label)
    assert covered == page_items, f"errata items in no erratum entry: {page_items - covered}"


def test_statements_fit_one_line():
    for e in ENTRIES:
        assert "\n" not in e.statement and len(e.statement) <= 240, (e.paper, e.label)


def test_algorithms_name_their_code():
    for e in ENTRIES:
        if e.kind == "algorithm":
            assert e.code, (e.paper, e.label)


# --- the checks can fail ------------------------------------------------------------------

def _first(status):
    return next(e for e in ENTRIES if e.status == status)


def _with(old, new):
    return tuple(new if e is old else e for e in ENTRIES)


def test_problems_catches_an_unregistered_claim():
    e = _first(VERIFIED)
    found = inventory.problems(_with(e, dataclasses.replace(e, claims=e.claims + ("000.nope",))))
    assert found == [f"{e.paper} {e.label}: claim '000.nope' is not registered"]


def test_problems_catches_a_registered_claim_left_out():
    gone = "004.prop4.4"
    found = inventory.problems(tuple(e for e in ENTRIES if gone not in e.claims))
    assert f"registered claim {gone!r} is in no inventory entry" in found


def test_problems_catches_a_duplicate_label():
    found = inventory.problems(ENTRIES + (ENTRIES[0],))
    assert f"{ENTRIES[0].paper} {ENTRIES[0].label}: label appears twice" in found


def test_problems_catches_a_missing_reason():
    e = _first(NOT_CHECKED)
    found = inventory.problems(_with(e, dataclasses.replace(e, reason=" ")))
    assert found == [f"{e.paper} {e.label}: not checked yet, but no reason given"]


def test_problems_catches_a_wrong_status():
    e = _first(ERRATUM)
    found = inventory.problems(_with(e, dataclasses.replace(e, status=VERIFIED)))
    assert f"{e.paper} {e.label}: declared 'verified', the registry implies 'erratum'" in found
    e = _first(VERIFIED)
    found = inventory.problems(_with(e, dataclasses.replace(e, status=ERRATUM)))
    assert f"{e.paper} {e.label}: erratum without an errata-page item" in found


def test_problems_catches_an_errata_item_without_an_erratum_entry():
    claims = all_claims()
    agreeing = next(c for c in claims if c.expect == "agrees" and
                    sum(c.id in e.claims for e in ENTRIES) == 1)
    flipped = [dataclasses.replace(c, expect="disagrees", evidence="test") if c is agreeing else c
               for c in claims]
    found = inventory.problems(claims=flipped)
    assert f"errata item {agreeing.id!r} belongs to no erratum entry" in found


def test_problems_catches_code_that_does_not_resolve():
    e = next(e for e in ENTRIES if e.code)
    found = inventory.problems(_with(e, dataclasses.replace(e, code=("calnotes.nope.f",))))
    assert found == [f"{e.paper} {e.label}: code 'calnotes.nope.f' does not resolve"]


def test_entry_rejects_unknown_kind_status_and_paper():
    with pytest.raises(ValueError, match="kind"):
        Entry("000", "X", "lemmata", "-")
    with pytest.raises(ValueError, match="status"):
        Entry("000", "X", "lemma", "-", status="checked")
    with pytest.raises(ValueError, match="paper"):
        Entry("002", "X", "lemma", "-")


def test_status_from_results_follows_the_run():
    e = inventory.find("001", "App. B.2 (converse)")
    results = {i: run_claim(i) for i in e.claims}
    assert inventory.status_from_results(e, results) == VERIFIED
    failed = {i: dataclasses.replace(r, measured=float("nan")) for i, r in results.items()}
    assert inventory.status_from_results(e, failed) == "FAILED"


def test_printed_tables_are_consistent_not_verified():
    """A table whose experiment is not rerun offline (or a conclusion the paper draws from
    such tables), checked only against the paper's other printed numbers, is "consistent (not
    rerun)", and only such an entry may be (such checks must not count as verified)."""
    consistent = [e for e in ENTRIES if e.status == CONSISTENT]
    assert consistent and all(e.printed_only and e.kind in ("table", "conclusion")
                              for e in consistent)
    assert all(e.status in (CONSISTENT, ERRATUM) for e in ENTRIES if e.printed_only)
    # negative control: the same entry declared verified is a problem of the inventory
    e = consistent[0]
    found = inventory.problems(_with(e, dataclasses.replace(e, status=VERIFIED)))
    assert any("declared 'verified'" in p and "consistent (not rerun)" in p for p in found)
