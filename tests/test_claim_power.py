"""The claims have power: every plausible slip planted in the library makes a claim fail.

Each :class:`planting.Plant` (``tests/plants/``) changes one library function the way a
hurried edit would -- a constant a few percent off, ``n`` for ``n - 1``, a bin edge moved or
closed on the other side, a tie rule changed, a variance or bias term dropped, a sum over
classes turned into a mean, the arguments of an asymmetric divergence swapped, a bandwidth or
a default moved -- and names the registered claims whose checks reach it. With the slip in
place those claims run at smoke size with their negative controls, and at least one must come
out other than registered (its check disagrees, or a control is no longer rejected). A plant
that no claim catches is a defect of the claims: strengthen a claim, never drop the plant.

A plant must also be *silent*: the slipped library runs and returns numbers. A plant that
makes a check raise proves nothing about the claims' power, so it fails this suite too.
"""

from __future__ import annotations

import pytest

from calnotes.book import claims
from planting import planted
from plants import PLANTS

MIN_PLANTS = 30


def test_enough_plants_over_enough_functions():
    assert len(PLANTS) >= MIN_PLANTS, f"only {len(PLANTS)} plants"
    names = [p.name for p in PLANTS]
    assert len(set(names)) == len(names), "plant names must be unique"
    known = {c.id for c in claims.all_claims()}
    for p in PLANTS:
        unknown = set(p.claims) - known
        assert not unknown, f"plant {p.name!r} names unregistered claims {sorted(unknown)}"


@pytest.mark.parametrize("plant", PLANTS, ids=[p.name for p in PLANTS])
def test_a_claim_catches_the_slip(plant):
    outcomes = []
    with planted(plant):
        for claim_id in plant.claims:
            try:
                result = claims.run_claim(claim_id, "smoke", controls=True)
            except Exception as exc:     # noqa: BLE001 -- a loud slip is not a silent one
                pytest.fail(f"plant {plant.name!r} is not silent: claim {claim_id} raised "
                            f"{type(exc).__name__}: {exc}")
            outcomes.append(result)
            if not result.as_expected:
                return
    summary = "; ".join(f"{r.claim.id}: measured {r.measured:.6g} vs {r.claim.reference:.6g}"
                        for r in outcomes)
    pytest.fail(f"no claim caught the slip {plant.name!r} in {plant.target}: {summary}")


def test_planting_reaches_names_imported_elsewhere():
    """The plant replaces the object wherever the library imported it by name, and undoes it."""
    import calnotes
    from calnotes.core import measures
    from planting import Plant, scale_result

    original = measures.l2_qece
    plant = Plant("doubled", "calnotes.core.measures.l2_qece", scale_result(2.0), ("000.thm2.6.exact",))
    with planted(plant):
        assert calnotes.l2_qece is measures.l2_qece is not original
    assert calnotes.l2_qece is measures.l2_qece is original
