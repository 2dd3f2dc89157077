"""Every registered claim runs in CI at smoke size; ``-m slow`` runs it at full size."""

import pytest

from calnotes import claims
from calnotes.claims._registry import Claim

IDS = [c.id for c in claims.all_claims()]


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_at_smoke_size(claim_id):
    result = claims.assert_claim(claim_id, "smoke")
    assert result.as_expected


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", IDS)
def test_claim_at_full_size(claim_id):
    assert claims.assert_claim(claim_id, "full").as_expected


def test_every_claim_names_an_existing_chapter_that_asserts_it():
    from pathlib import Path
    root = Path(__file__).resolve().parent.parent
    for claim in claims.all_claims():
        path = root / f"{claim.chapter}.md"
        assert path.is_file(), f"{claim.id}: chapter {claim.chapter} does not exist"
        assert f'"{claim.id}"' in path.read_text(), (
            f"{claim.id}: chapter {claim.chapter} does not assert it")


def _dummy(measured, **kw):
    base = dict(id="x.test", source="test", statement="s", check=lambda size: measured,
                reference=1.0, tolerance=0.1, tolerance_reason="r", chapter="c")
    base.update(kw)
    return Claim(**base)


@pytest.mark.parametrize("comparison, measured, holds", [
    ("abs", 1.05, True), ("abs", 1.2, False), ("abs", 0.85, False),
    ("rel", 1.09, True), ("rel", 1.11, False),
    ("le", 0.0, True), ("le", 1.11, False),
    ("ge", 5.0, True), ("ge", 0.89, False),
    ("abs", float("nan"), False),
])
def test_comparisons(comparison, measured, holds):
    assert _dummy(measured, comparison=comparison).holds(measured) is holds


def test_a_failing_claim_raises(monkeypatch):
    claim = _dummy(2.0)
    monkeypatch.setitem(claims._registry._REGISTRY, claim.id, claim)
    with pytest.raises(claims.ClaimFailed, match="x.test"):
        claims.assert_claim("x.test")


def test_a_disagreement_must_persist(monkeypatch):
    kept = _dummy(2.0, id="x.err", expect="disagrees", evidence="e")
    gone = _dummy(1.0, id="x.err2", expect="disagrees", evidence="e")
    monkeypatch.setitem(claims._registry._REGISTRY, kept.id, kept)
    monkeypatch.setitem(claims._registry._REGISTRY, gone.id, gone)
    assert claims.assert_claim("x.err").status == "disagrees with the paper"
    with pytest.raises(claims.ClaimFailed):
        claims.assert_claim("x.err2")


def test_registration_rules():
    with pytest.raises(ValueError, match="evidence"):
        _dummy(1.0, expect="disagrees")
    with pytest.raises(ValueError, match="reason"):
        _dummy(1.0, tolerance_reason="")
    with pytest.raises(ValueError, match="comparison"):
        _dummy(1.0, comparison="close")
    with pytest.raises(ValueError, match="twice"):
        claims.register(claims.get_claim(IDS[0]))
