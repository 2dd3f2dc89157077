"""The claims registry: every statement the book makes about a paper, checkable.

A :class:`Claim` couples a statement from a source (paper and number) with a *check*
(a function returning the measured quantity), the *reference* value the paper implies,
a *tolerance* with the reason for it, and what we *expect*: either the check agrees with
the paper (``expect="agrees"``) or careful checking found that it does not
(``expect="disagrees"``; such claims make the errata page).

The same registry drives the chapter cell after each theorem (:func:`assert_claim`,
which raises if the check does not come out as expected), ``tests/test_claims.py`` (every
claim at smoke size; ``-m slow`` at full size) and the verification ledger and errata
pages (:func:`ledger`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

__all__ = ["Claim", "Result", "register", "get_claim", "all_claims", "run_claim",
           "assert_claim", "ledger", "ClaimFailed"]

_REGISTRY: dict[str, "Claim"] = {}

COMPARISONS = {
    "abs": "|measured - reference| <= tolerance",
    "rel": "|measured - reference| <= tolerance * |reference|",
    "le": "measured <= reference + tolerance",
    "ge": "measured >= reference - tolerance",
}


class ClaimFailed(AssertionError):
    """A claim's check did not come out as registered."""


@dataclass(frozen=True)
class Claim:
    """A registered, checkable claim.

    Attributes
    ----------
    id : str
        ``paper.item.detail``, e.g. ``"003.lemma4.1"``.
    source : str
        Where the paper states it, e.g. ``"Gruber & Buettner (2022), Lemma 4.1"``.
    statement : str
        The claim in one sentence, as the book states it.
    check : callable
        ``check(size) -> float``, ``size`` in ``{"smoke", "full"}``; returns the measured
        quantity (deterministic: every random draw inside is seeded).
    reference : float
        The value the paper's statement implies for the measured quantity.
    tolerance : float
        Allowed deviation (see ``comparison``).
    tolerance_reason : str
        Why this tolerance: rounding error, standard errors, asymptotic order.
    comparison : {"abs", "rel", "le", "ge"}
        How measured and reference are compared (:data:`COMPARISONS`).
    chapter : str
        The chapter (docname) that states and asserts the claim.
    expect : {"agrees", "disagrees"}
        ``"disagrees"``: the check contradicts the printed text (an erratum); the assertion
        then requires the disagreement to persist, with ``evidence`` explaining it.
    evidence : str
        For ``expect="disagrees"``: what was measured and why the paper is wrong.
    """

    id: str
    source: str
    statement: str
    check: Callable[[str], float]
    reference: float
    tolerance: float
    tolerance_reason: str
    chapter: str
    comparison: str = "abs"
    expect: str = "agrees"
    evidence: str = ""

    def __post_init__(self):
        if self.comparison not in COMPARISONS:
            raise ValueError(f"comparison: expected one of {sorted(COMPARISONS)}, got {self.comparison!r}")
        if self.expect not in ("agrees", "disagrees"):
            raise ValueError(f"expect: expected 'agrees' or 'disagrees', got {self.expect!r}")
        if self.expect == "disagrees" and not self.evidence:
            raise ValueError(f"claim {self.id}: a disagreement needs its evidence")
        if not self.tolerance_reason:
            raise ValueError(f"claim {self.id}: every tolerance needs a reason")

    def holds(self, measured: float) -> bool:
        """Does ``measured`` agree with the reference under the comparison?"""
        ref, tol = self.reference, self.tolerance
        if not np.isfinite(measured):
            return False
        if self.comparison == "abs":
            return abs(measured - ref) <= tol
        if self.comparison == "rel":
            return abs(measured - ref) <= tol * abs(ref)
        if self.comparison == "le":
            return measured <= ref + tol
        return measured >= ref - tol


@dataclass(frozen=True)
class Result:
    """The outcome of running a claim's check."""

    claim: Claim
    measured: float
    seconds: float
    size: str
    agrees: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "agrees", self.claim.holds(self.measured))

    @property
    def as_expected(self) -> bool:
        return self.agrees == (self.claim.expect == "agrees")

    @property
    def gap(self) -> float:
        """``measured - reference``."""
        return float(self.measured - self.claim.reference)

    @property
    def status(self) -> str:
        if self.as_expected:
            return "verified" if self.agrees else "disagrees with the paper"
        return "FAILED"

    def _repr_markdown_(self) -> str:
        c = self.claim
        mark = "✓" if self.as_expected else "✗"
        return (f"{mark} **claim `{c.id}`** ({c.source}): {self.status}. "
                f"measured {self.measured:.6g}, reference {c.reference:.6g}, "
                f"gap {self.gap:.3g}; tolerance {c.tolerance:.3g} ({c.comparison}: "
                f"{c.tolerance_reason})")

    def __repr__(self) -> str:
        return f"Result({self.claim.id!r}, measured={self.measured!r}, status={self.status!r})"


def register(claim: Claim) -> Claim:
    """Add a claim to the registry (ids are unique)."""
    if claim.id in _REGISTRY:
        raise ValueError(f"claim id {claim.id!r} is registered twice")
    _REGISTRY[claim.id] = claim
    return claim


def get_claim(claim_id: str) -> Claim:
    """The registered claim with this id."""
    try:
        return _REGISTRY[claim_id]
    except KeyError:
        raise KeyError(f"no claim {claim_id!r}; registered: {sorted(_REGISTRY)}") from None


def all_claims() -> list[Claim]:
    """Every registered claim, sorted by id."""
    return [_REGISTRY[k] for k in sorted(_REGISTRY)]


def run_claim(claim_id: str, size: str = "smoke") -> Result:
    """Run a claim's check and return its :class:`Result` (does not raise on disagreement)."""
    if size not in ("smoke", "full"):
        raise ValueError(f"size: expected 'smoke' or 'full', got {size!r}")
    claim = get_claim(claim_id)
    start = time.perf_counter()
    measured = float(claim.check(size))
    return Result(claim, measured, time.perf_counter() - start, size)


def assert_claim(claim_id: str, size: str = "smoke") -> Result:
    """Run a claim and raise :class:`ClaimFailed` unless it comes out as registered.

    This is what a chapter calls right after a theorem and its proof.
    """
    result = run_claim(claim_id, size)
    if not result.as_expected:
        c = result.claim
        raise ClaimFailed(
            f"claim {c.id} ({c.source}) expected to {c.expect.rstrip('s')} with the paper but "
            f"measured {result.measured!r} vs reference {c.reference!r} "
            f"({COMPARISONS[c.comparison]}, tolerance {c.tolerance!r}: {c.tolerance_reason})"
        )
    return result


def ledger(size: str = "smoke") -> list[Result]:
    """Run every registered claim; the rows of the verification ledger."""
    return [run_claim(c.id, size) for c in all_claims()]
