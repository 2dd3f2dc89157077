"""Every registered claim and every one of its negative controls runs in CI at smoke size;
``-m slow`` runs them at full size. A control that is not rejected fails like a failed claim."""

import pytest

from calnotes.book import claims
from calnotes.book.claims._registry import Claim, Control

IDS = [c.id for c in claims.all_claims()]


@pytest.mark.parametrize("claim_id", IDS)
def test_claim_at_smoke_size(claim_id):
    result = claims.assert_claim(claim_id, "smoke")
    assert result.as_expected
    assert len(result.controls) == len(claims.get_claim(claim_id).controls)
    assert all(r.rejected for r in result.controls)


@pytest.mark.slow
@pytest.mark.parametrize("claim_id", IDS)
def test_claim_at_full_size(claim_id):
    result = claims.assert_claim(claim_id, "full")
    assert result.as_expected and all(r.rejected for r in result.controls)


def test_every_agreeing_claim_has_a_control_and_every_erratum_a_correction():
    assert claims.registry_problems() == []


def test_illustrations_say_why():
    """An illustration says why no near neighbour can be rejected (and may carry far controls
    that show its check can fail at all, never a near one)."""
    for c in claims.all_claims():
        if c.expect == "illustrates":
            assert not any(k.near for k in c.controls) and len(c.evidence) > 20, c.id


def test_every_verified_claim_has_a_near_control_and_every_control_a_kind():
    for c in claims.all_claims():
        assert all(k.kind in claims.CONTROL_KINDS for k in c.controls), c.id
        if c.expect == "agrees":
            assert c.near_controls, c.id


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
                quantity="the test quantity",
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
    assert claims.assert_claim("x.err").status == "erratum"
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


def _control(measured, **kw):
    return Control(name=kw.pop("name", "tightened"), statement="a false neighbour",
                   check=lambda size: measured, **kw)


def test_a_control_that_agrees_fails_the_claim(monkeypatch):
    strong = _dummy(1.0, id="x.strong", controls=(_control(2.0),))
    weak = _dummy(1.0, id="x.weak", controls=(_control(2.0, name="a"), _control(1.05, name="b")))
    moved = _dummy(1.0, id="x.moved", controls=(_control(1.0, reference=0.5),))
    for c in (strong, weak, moved):
        monkeypatch.setitem(claims._registry._REGISTRY, c.id, c)
    result = claims.assert_claim("x.strong")
    assert result.status == "verified" and [r.rejected for r in result.controls] == [True]
    assert [r.rejected for r in claims.run_controls("x.weak")] == [True, False]
    with pytest.raises(claims.ClaimFailed, match="not rejected.*'b'"):
        claims.assert_claim("x.weak")
    assert claims.run_controls("x.moved")[0].rejected          # reference moved to 0.5
    nan = _dummy(1.0, id="x.nan", controls=(_control(float("nan")),))
    monkeypatch.setitem(claims._registry._REGISTRY, nan.id, nan)
    assert claims.run_controls("x.nan")[0].rejected is False   # a failed computation is no power
    assert claims.run_claim("x.weak").controls == ()           # run_claim alone runs none
    assert claims.run_claim("x.weak", controls=True).status == "FAILED"


def test_run_controls_from_outside():
    claim = next(c for c in claims.all_claims() if c.controls)
    out = claims.run_controls(claim.id, "smoke")
    assert len(out) == len(claim.controls)
    assert all(isinstance(r.rejected, bool) for r in out)
    with pytest.raises(ValueError, match="size"):
        claims.run_controls(claim.id, "huge")


def test_statuses_and_their_rules(monkeypatch):
    with pytest.raises(ValueError, match="illustration has no near control"):
        _dummy(1.0, expect="illustrates", evidence="loose", controls=(
            _control(2.0, kind="scaled", factor=0.9),))
    far = _dummy(1.0, id="x.far", expect="illustrates", evidence="worst instance: 0.1 of the "
                 "bound", controls=(_control(2.0, kind="scaled", factor=1 / 12),))
    assert far.controls[0].near is False
    with pytest.raises(ValueError, match="finding_holds must be"):
        _dummy(1.0, expect="finding", evidence="se", finding_holds="maybe")
    with pytest.raises(ValueError, match="finding_holds"):
        _dummy(1.0, expect="finding", evidence="se 0.01")
    with pytest.raises(ValueError, match="evidence"):
        _dummy(1.0, expect="illustrates")
    ill = _dummy(1.0, id="x.ill", expect="illustrates", evidence="vacuous at every n")
    held = _dummy(1.0, id="x.fh", expect="finding", evidence="se", finding_holds=True)
    fails = _dummy(2.0, id="x.ff", expect="finding", evidence="se", finding_holds=False)
    wrong = _dummy(1.0, id="x.fw", expect="finding", evidence="se", finding_holds=False)
    for c in (ill, held, fails, wrong):
        monkeypatch.setitem(claims._registry._REGISTRY, c.id, c)
    assert claims.assert_claim("x.ill").status == "illustration"
    assert claims.assert_claim("x.fh").status == "finding"
    assert claims.assert_claim("x.ff").status == "finding"
    with pytest.raises(claims.ClaimFailed):
        claims.assert_claim("x.fw")
    bare = _dummy(1.0, id="x.bare")
    err = _dummy(2.0, id="x.err3", expect="disagrees", evidence="e")
    assert claims.registry_problems([bare, err, ill]) == [
        "x.bare: agrees but has no negative control (add one, or register it with "
        "expect='illustrates' and say why none can be rejected)",
        "x.err3: erratum without a correction (what is true instead)"]
    inconclusive = _dummy(1.05, id="x.fi", expect="finding", evidence="within 1 SE",
                          finding_holds=claims.INCONCLUSIVE)
    beyond = _dummy(3.0, id="x.fb", expect="finding", evidence="within 1 SE",
                    finding_holds=claims.INCONCLUSIVE)
    for c in (inconclusive, beyond):
        monkeypatch.setitem(claims._registry._REGISTRY, c.id, c)
    assert inconclusive.outcome == "inconclusive" and held.outcome == "holds"
    assert fails.outcome == "does not hold" and ill.outcome == ""
    assert claims.assert_claim("x.fi").status == "finding"
    with pytest.raises(claims.ClaimFailed):      # an effect beyond its noise is not inconclusive
        claims.assert_claim("x.fb")


def test_control_kinds_and_nearness():
    with pytest.raises(ValueError, match="kind must be one of"):
        _control(2.0, kind="tightened")
    with pytest.raises(ValueError, match="needs a positive, finite factor"):
        _control(2.0, kind="scaled")
    with pytest.raises(ValueError, match="factor is for kind='scaled' only"):
        _control(2.0, kind="boundary", factor=0.9)
    # the 20% rule at its edge, from both sides, and the kinds that are near by definition
    assert _control(2.0, kind="scaled", factor=0.8).near
    assert _control(2.0, kind="scaled", factor=1.2).near
    assert not _control(2.0, kind="scaled", factor=0.79).near
    assert not _control(2.0, kind="scaled", factor=1.21).near
    for kind in ("boundary", "hypothesis", "reading"):
        assert _control(2.0, kind=kind).near and _control(2.0, kind=kind).distance == 0
    assert not _control(2.0, kind="alternative").near
    assert not _control(2.0).near                     # unclassified is never near
    assert _control(2.0, kind="scaled", factor=0.99).describe() == "scaled x0.99 (1% off)"
    assert _control(2.0, kind="scaled", factor=1 / 12).describe() == "scaled x0.08333 (12-fold)"


def test_a_verified_claim_needs_a_near_control(monkeypatch):
    far_only = _dummy(1.0, id="x.faronly", controls=(
        _control(2.0, name="reversed", kind="alternative"),
        _control(3.0, name="bound / 3", kind="scaled", factor=1 / 3)))
    near = _dummy(1.0, id="x.near", controls=(
        _control(2.0, name="reversed", kind="alternative"),
        _control(1.5, name="tightened 1%", kind="scaled", factor=0.99),
        _control(1.7, name="k = 2", kind="boundary")))
    unkinded = _dummy(1.0, id="x.unkinded", controls=(_control(2.0, name="tightened"),))
    problems = claims.registry_problems([far_only, near, unkinded])
    assert problems == [
        "x.faronly: agrees but has no near control (boundary, hypothesis, reading, or scaled "
        "by at most 20%): add one, or register it as an illustration with the slack of its "
        "worst instance",
        "x.unkinded: agrees but has no near control (boundary, hypothesis, reading, or scaled "
        "by at most 20%): add one, or register it as an illustration with the slack of its "
        "worst instance",
        "x.unkinded: control 'tightened' has no kind (one of ['alternative', 'boundary', "
        "'hypothesis', 'reading', 'scaled'])"]
    monkeypatch.setitem(claims._registry._REGISTRY, near.id, near)
    result = claims.assert_claim("x.near")
    # the nearest rejected control: the boundary one (distance 0) before the 1% one
    assert result.nearest_rejected.name == "k = 2"
    assert claims.run_claim("x.near").nearest_rejected is None     # no controls run
