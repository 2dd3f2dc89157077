"""The claims registry: every statement the book makes about a paper, checkable.

A :class:`Claim` couples a statement from a source (paper and number) with a *check*
(a function returning the measured quantity), the *reference* value the paper implies,
a *tolerance* with the reason for it, and what we *expect*:

``"agrees"``
    The check agrees with the paper, and the claim carries :class:`Control` s: false
    neighbours of its statement (a constant tightened, an inequality made strict or reversed, a
    hypothesis dropped, an estimator swapped for a biased one) measured by the same check on the
    same instances and compared with the same reference, comparison and tolerance. Every
    control must come out *disagreeing* (``rejected``); a control that agrees shows that the
    check has no power, and the claim fails exactly as a failed check does. At least one
    control must be *near* (:attr:`Control.near`: the boundary case, a hypothesis dropped at
    its edge, another reading of the printed text, or a constant scaled by at most 20%); the
    ledger shows the nearest one. Status ``"verified"``.
``"illustrates"``
    The check agrees but no *near* false neighbour can be rejected (a bound loose on the worst
    instance found, a statement true by construction); ``evidence`` says why, and for a loose
    bound how loose it is on the worst instance found (searched for, not only drawn). It may
    carry far controls (showing that the check can fail at all), never a near one. Status
    ``"illustration"``.
``"disagrees"``
    The careful check contradicts the printed text (an erratum); the assertion requires the
    disagreement to persist. ``evidence`` explains it and ``correction`` says, in one line, what
    is true instead. Status ``"erratum"``.
``"finding"``
    A result on our substitute data (MNIST-5k, simulators), not a statement about the papers'
    text: ``finding_holds`` records whether the paper's empirical statement carries over to our
    data -- ``True``, ``False`` or :data:`INCONCLUSIVE` (the effect lies within its sampling
    uncertainty: the check then measures the effect against "no effect" with a tolerance of its
    sampling uncertainty, and must agree) -- the assertion requires that outcome to persist,
    and ``evidence`` gives its sampling uncertainty. Status ``"finding"``.

The same registry drives the chapter cell after each theorem (:func:`assert_claim`,
which raises if the check or one of its controls does not come out as expected),
``tests/test_claims.py`` (every claim and control at smoke size; ``-m slow`` at full size)
and the verification ledger, findings and errata pages (:func:`ledger`).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

__all__ = ["Claim", "Control", "Result", "ControlResult", "register", "get_claim", "all_claims",
           "run_claim", "run_controls", "assert_claim", "ledger", "registry_problems", "ClaimFailed", "EXPECTS",
           "STATUSES", "CONTROL_KINDS", "NEAR_FACTOR", "INCONCLUSIVE"]

_REGISTRY: dict[str, "Claim"] = {}

COMPARISONS = {
    "abs": "|measured - reference| <= tolerance",
    "rel": "|measured - reference| <= tolerance * |reference|",
    "le": "measured <= reference + tolerance",
    "ge": "measured >= reference - tolerance",
}

EXPECTS = {"agrees": "verified", "illustrates": "illustration", "disagrees": "erratum",
           "finding": "finding"}
"""What a claim expects -> the status it has when it comes out as registered."""

STATUSES = ("verified", "illustration", "erratum", "finding")
"""The statuses of a claim that came out as registered (otherwise ``"FAILED"``)."""

INCONCLUSIVE = "inconclusive"
"""``finding_holds`` of a finding whose effect lies within its sampling uncertainty."""


class ClaimFailed(AssertionError):
    """A claim's check, or one of its controls, did not come out as registered."""


def _holds(measured: float, reference: float, tolerance: float, comparison: str) -> bool:
    if not np.isfinite(measured):
        return False
    if comparison == "abs":
        return abs(measured - reference) <= tolerance
    if comparison == "rel":
        return abs(measured - reference) <= tolerance * abs(reference)
    if comparison == "le":
        return measured <= reference + tolerance
    return measured >= reference - tolerance


CONTROL_KINDS = {
    "scaled": "a constant or threshold of the statement multiplied by ``factor``",
    "boundary": "the statement at the smallest case or the exact edge of a hypothesis (k = 2, "
                "one bin, a single atom, mu = 0)",
    "hypothesis": "one hypothesis of the statement dropped, at its edge",
    "reading": "another reading of the printed statement",
    "alternative": "another false statement (a swapped estimator, a reversed inequality, a "
                   "degenerate kernel): evidence of power only when it is near the statement",
}
"""The kinds of negative control. ``boundary``, ``hypothesis``, ``reading`` and ``scaled``
with ``|factor - 1| <= NEAR_FACTOR`` are *near* (:attr:`Control.near`)."""

NEAR_FACTOR = 0.2
"""A scaled control is near when its constant moves by at most 20% (the registry's rule)."""


@dataclass(frozen=True)
class Control:
    """A negative control: a false neighbour of a claim's statement.

    Attributes
    ----------
    name : str
        Short name, e.g. ``"constant halved"``, ``"constant kernel"``, ``"k = 2"``.
    statement : str
        The false neighbour in one sentence (what would have to hold for the control to agree).
    check : callable
        ``check(size) -> float``: the quantity the claim's check measures, for the false
        neighbour, on the same instances (deterministic: seeded like the claim's check).
    reference : float, optional
        Where the false neighbour moves the reference (a constant tightened); defaults to the
        claim's. Comparison and tolerance are always the claim's.
    kind : str
        One of :data:`CONTROL_KINDS`: how the neighbour differs from the statement.
    factor : float, optional
        For ``kind="scaled"`` (required there, forbidden otherwise): the factor the
        statement's constant or threshold is multiplied by (``0.99`` for "tightened by 1%",
        ``1 / 12`` for "the bound divided by 12").

    Examples
    --------
    >>> c = Control("constant 1% smaller", "E <= 0.99 B", check=lambda size: 1.0,
    ...             kind="scaled", factor=0.99)
    >>> c.near, round(c.distance, 3)
    (True, 0.01)
    >>> Control("reversed", "E >= B", check=lambda size: 1.0, kind="alternative").near
    False
    """

    name: str
    statement: str
    check: Callable[[str], float]
    reference: Optional[float] = None
    kind: Optional[str] = None
    factor: Optional[float] = None

    def __post_init__(self):
        if not self.name.strip() or not self.statement.strip():
            raise ValueError("a control needs a name and a statement")
        if self.kind is not None and self.kind not in CONTROL_KINDS:
            raise ValueError(f"control {self.name!r}: kind must be one of "
                             f"{sorted(CONTROL_KINDS)}, got {self.kind!r}")
        if self.kind == "scaled":
            if self.factor is None or not np.isfinite(self.factor) or self.factor <= 0:
                raise ValueError(f"control {self.name!r}: a scaled control needs a positive, "
                                 f"finite factor, got {self.factor!r}")
        elif self.factor is not None:
            raise ValueError(f"control {self.name!r}: factor is for kind='scaled' only "
                             f"(kind={self.kind!r})")

    @property
    def distance(self) -> float:
        """How far the neighbour is from the statement: ``|factor - 1|`` for a scaled
        control, 0 for a boundary, hypothesis or reading control (at the statement's edge),
        ``inf`` for an alternative or an unclassified one."""
        if self.kind == "scaled":
            return abs(float(self.factor) - 1.0)
        if self.kind in ("boundary", "hypothesis", "reading"):
            return 0.0
        return float("inf")

    @property
    def near(self) -> bool:
        """Is this a *near* false neighbour (see :data:`CONTROL_KINDS`)?"""
        return self.distance <= NEAR_FACTOR + 1e-12

    def describe(self) -> str:
        """The kind and distance in words: ``"scaled x0.99 (1% off)"``, ``"boundary"``."""
        if self.kind == "scaled":
            f = float(self.factor)
            fold = max(f, 1 / f)
            off = f"{abs(f - 1) * 100:.2g}% off" if fold < 2 else f"{fold:.3g}-fold"
            return f"scaled x{f:.4g} ({off})"
        return self.kind or "unclassified"


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
        Why this tolerance (rounding error, standard errors, asymptotic order), and which
        region of the statement's range the check's instances cover.
    comparison : {"abs", "rel", "le", "ge"}
        How measured and reference are compared (:data:`COMPARISONS`).
    chapter : str
        The chapter (docname) that states and asserts the claim.
    expect : {"agrees", "illustrates", "disagrees", "finding"}
        See the module docstring (:data:`EXPECTS`).
    evidence : str
        ``"disagrees"``: what was measured and why the paper is wrong; ``"illustrates"``: why
        no false neighbour can be rejected; ``"finding"``: the result on our data with its
        sampling uncertainty.
    controls : tuple of Control
        The negative controls: required for ``expect="agrees"`` (:func:`registry_problems`),
        forbidden for ``"illustrates"``, optional for errata and findings.
    correction : str
        For ``expect="disagrees"``: one line saying what is true instead (required,
        :func:`registry_problems`).
    finding_holds : bool or "inconclusive", optional
        For ``expect="finding"``: does the paper's empirical statement hold on our data?
        :data:`INCONCLUSIVE` when the effect lies within its sampling uncertainty (the check
        measures the effect against "no effect" and must agree within that uncertainty).
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
    controls: tuple = ()
    correction: str = ""
    finding_holds: Optional[object] = None

    def __post_init__(self):
        object.__setattr__(self, "controls", tuple(self.controls))
        if self.comparison not in COMPARISONS:
            raise ValueError(f"comparison: expected one of {sorted(COMPARISONS)}, got {self.comparison!r}")
        if self.expect not in EXPECTS:
            raise ValueError(f"expect: expected one of {sorted(EXPECTS)}, got {self.expect!r}")
        if self.expect != "agrees" and not self.evidence:
            raise ValueError(f"claim {self.id}: expect={self.expect!r} needs its evidence")
        if self.expect == "finding" and self.finding_holds is None:
            raise ValueError(f"claim {self.id}: a finding needs finding_holds")
        if self.expect != "finding" and self.finding_holds is not None:
            raise ValueError(f"claim {self.id}: finding_holds is for findings only")
        if self.finding_holds not in (None, True, False, INCONCLUSIVE):
            raise ValueError(f"claim {self.id}: finding_holds must be True, False or "
                             f"{INCONCLUSIVE!r}, got {self.finding_holds!r}")
        if self.expect == "illustrates" and any(c.near for c in self.controls):
            raise ValueError(f"claim {self.id}: an illustration has no near control (a near "
                             "control that is rejected makes it a verified claim)")
        if not all(isinstance(c, Control) for c in self.controls):
            raise ValueError(f"claim {self.id}: controls must be Control instances")
        names = [c.name for c in self.controls]
        if len(set(names)) != len(names):
            raise ValueError(f"claim {self.id}: control names must be unique, got {names}")
        if not self.tolerance_reason:
            raise ValueError(f"claim {self.id}: every tolerance needs a reason")

    def holds(self, measured: float, reference: Optional[float] = None) -> bool:
        """Does ``measured`` agree with the reference (or ``reference``) under the comparison?"""
        ref = self.reference if reference is None else reference
        return _holds(measured, ref, self.tolerance, self.comparison)

    @property
    def expected_agreement(self) -> bool:
        """Must the check agree with the reference for the claim to come out as registered?"""
        if self.expect == "finding":
            return self.finding_holds is not False
        return self.expect in ("agrees", "illustrates")

    @property
    def near_controls(self) -> tuple:
        """The controls that are near false neighbours (:attr:`Control.near`)."""
        return tuple(c for c in self.controls if c.near)

    @property
    def outcome(self) -> str:
        """For a finding: ``"holds"``, ``"does not hold"`` or ``"inconclusive"``; else ``""``."""
        if self.expect != "finding":
            return ""
        if self.finding_holds == INCONCLUSIVE:
            return INCONCLUSIVE
        return "holds" if self.finding_holds else "does not hold"


@dataclass(frozen=True)
class ControlResult:
    """The outcome of running one control: ``rejected`` is what a control must be."""

    claim_id: str
    control: Control
    measured: float
    reference: float
    seconds: float
    size: str
    rejected: bool

    @property
    def name(self) -> str:
        return self.control.name

    def __repr__(self) -> str:
        return (f"ControlResult({self.claim_id!r}, {self.name!r}, measured={self.measured!r}, "
                f"rejected={self.rejected!r})")


@dataclass(frozen=True)
class Result:
    """The outcome of running a claim's check (and, through :func:`assert_claim`, its controls)."""

    claim: Claim
    measured: float
    seconds: float
    size: str
    controls: tuple = ()
    agrees: bool = field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "agrees", self.claim.holds(self.measured))
        object.__setattr__(self, "controls", tuple(self.controls))

    @property
    def controls_rejected(self) -> bool:
        """Every control that was run came out disagreeing."""
        return all(c.rejected for c in self.controls)

    @property
    def as_expected(self) -> bool:
        return self.agrees == self.claim.expected_agreement and self.controls_rejected

    @property
    def gap(self) -> float:
        """``measured - reference``."""
        return float(self.measured - self.claim.reference)

    @property
    def nearest_rejected(self) -> Optional["ControlResult"]:
        """The rejected control nearest to the statement (smallest :attr:`Control.distance`;
        among equals the first registered), or ``None`` when none was run or rejected."""
        rejected = [r for r in self.controls if r.rejected]
        if not rejected:
            return None
        return min(rejected, key=lambda r: r.control.distance)

    @property
    def status(self) -> str:
        """``"verified"``, ``"illustration"``, ``"erratum"``, ``"finding"`` or ``"FAILED"``."""
        return EXPECTS[self.claim.expect] if self.as_expected else "FAILED"

    def _repr_markdown_(self) -> str:
        c = self.claim
        mark = {"verified": "✓", "illustration": "◦", "erratum": "≠", "finding": "◇"}.get(
            self.status, "✗")
        text = (f"{mark} **claim `{c.id}`** ({c.source}): {self.status}. "
                f"measured {self.measured:.6g}, reference {c.reference:.6g}, "
                f"gap {self.gap:.3g}; tolerance {c.tolerance:.3g} ({c.comparison}: "
                f"{c.tolerance_reason})")
        if self.controls:
            parts = [f"*{r.name}* {'rejected' if r.rejected else 'NOT rejected'} "
                     f"(measured {r.measured:.4g} vs {r.reference:.4g})" for r in self.controls]
            text += "; controls: " + "; ".join(parts)
        if c.expect == "illustrates":
            text += f"; illustration only: {c.evidence}"
        return text

    def _repr_html_(self) -> str:
        return claim_line_html(self)

    def __repr__(self) -> str:
        return f"Result({self.claim.id!r}, measured={self.measured!r}, status={self.status!r})"


#: Badge of each status in a chapter's claim line: (label, background, text colour). The
#: colours are the Okabe-Ito palette's (distinguishable with every common colour-vision
#: deficiency); the word on the badge carries the status too.
BADGES = {
    "verified": ("agrees", "#009E73", "#fff"),
    "illustration": ("illustration", "#56B4E9", "#000"),
    "erratum": ("erratum (confirmed)", "#E69F00", "#000"),
    "finding": ("finding on our data", "#CC79A7", "#000"),
    "FAILED": ("FAILED", "#D55E00", "#fff"),
}


def claim_anchor(claim_id: str) -> str:
    """The HTML id of a claim's row on the ledger page (``claim-000-ex1-1-...``)."""
    return "claim-" + claim_id.replace(".", "-").replace("_", "-")


def erratum_anchor(claim_id: str) -> str:
    """The HTML id of a claim's entry on the errata page (``erratum-000-ex1-1-...``): the
    page's own target (:func:`calnotes.claims.errata_notes.anchor`)."""
    from .errata_notes import anchor
    return anchor(claim_id)


def _appendix_link(chapter: str, page: str) -> str:
    import posixpath
    return posixpath.relpath(f"book/appendix/{page}", posixpath.dirname(chapter)) + ".html"


def claim_line_html(result: "Result") -> str:
    """One line per claim, the same in every chapter (see :func:`show`).

    A badge whose colour and word give the status, the claim id linked to its row on the
    verification ledger (and, for an erratum, to its entry on the errata page), what was
    measured against what the paper implies, the size the claim ran at (the claim's registered
    size, not the chapter's parameters), and a *why* dropdown with the tolerance's reasoning and
    the negative controls.
    """
    import html as _html
    c = result.claim
    status = result.status
    word, bg, fg = BADGES.get(status, BADGES["FAILED"])
    badge = (f'<span class="claim-badge" style="background:{bg};color:{fg};border-radius:3px;'
             f'padding:0 0.4em;font-size:0.85em;white-space:nowrap">{word}</span>')
    ledger = _appendix_link(c.chapter, "ledger") + "#" + claim_anchor(c.id)
    ident = f'<a href="{ledger}"><code>{_html.escape(c.id)}</code></a>'
    extra = ""
    if status == "erratum":
        errata = _appendix_link(c.chapter, "errata") + "#" + erratum_anchor(c.id)
        extra = f' &middot; <a href="{errata}">what is true instead</a>'
    elif status == "finding":
        extra = f' &middot; <a href="{_appendix_link(c.chapter, "data_findings")}">findings</a>'
    numbers = (f"measured {result.measured:.4g}, paper {c.reference:.4g} "
               f"({c.comparison} {c.tolerance:.2g}; size <code>{result.size}</code>)")
    why = [f"<b>Tolerance.</b> {_html.escape(c.tolerance_reason)}"]
    if result.controls:
        why.append("<b>Negative controls</b> (must come out disagreeing): " + "; ".join(
            f"<i>{_html.escape(k.name)}</i> [{_html.escape(k.control.describe())}] "
            f"{'rejected' if k.rejected else 'NOT REJECTED'} "
            f"(measured {k.measured:.4g} vs {k.reference:.4g})" for k in result.controls))
    if c.expect == "illustrates":
        why.append(f"<b>Illustration only.</b> {_html.escape(c.evidence)}")
    details = ("<details style='display:inline'><summary style='display:inline;cursor:pointer'>"
               "<small>why</small></summary><div><small>" + "<br>".join(why)
               + "</small></div></details>")
    return (f'<div class="claim-line">{badge} {ident} <small>({_html.escape(c.source)})'
            f"{extra}</small>: {numbers} {details}</div>")


class ClaimLines(list):
    """Results shown as one claim line each (what :func:`show` returns)."""

    def _repr_html_(self) -> str:
        return "".join(claim_line_html(r) for r in self)

    def _repr_markdown_(self) -> str:
        return "\n\n".join(r._repr_markdown_() for r in self)


def show(results) -> ClaimLines:
    """Display several claim results, one line each, in the format every chapter uses.

    Parameters
    ----------
    results : iterable of Result
        What :func:`assert_claim` returned.

    Examples
    --------
    >>> from calnotes import claims
    >>> lines = claims.show([claims.run_claim("001.eq3.3", "smoke")])
    >>> len(lines)
    1
    """
    return ClaimLines(results)


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


def _check_size(size: str) -> None:
    if size not in ("smoke", "full"):
        raise ValueError(f"size: expected 'smoke' or 'full', got {size!r}")


def run_controls(claim_id: str, size: str = "smoke") -> list:
    """Run every negative control of a claim; one :class:`ControlResult` per control.

    A control is *rejected* when its measured quantity does not agree with its reference (the
    claim's unless the control moves it) under the claim's comparison and tolerance: what a
    control must be for the claim to count as verified. A control that measures ``nan`` is not
    rejected (it measured nothing).

    Examples
    --------
    >>> from calnotes import claims
    >>> [(r.name, r.rejected) for r in claims.run_controls("003.lemma4.1")]
    [('grouping dropped', True), ('calibration term 1% off', True)]
    """
    _check_size(size)
    claim = get_claim(claim_id)
    out = []
    for control in claim.controls:
        start = time.perf_counter()
        measured = float(control.check(size))
        ref = claim.reference if control.reference is None else float(control.reference)
        # A control that measures nan has not measured anything (a failed computation): it
        # is not counted as rejected, so a broken control cannot pass for a powerful one.
        rejected = bool(not np.isnan(measured) and not claim.holds(measured, ref))
        out.append(ControlResult(claim.id, control, measured, ref,
                                 time.perf_counter() - start, size, rejected=rejected))
    return out


def run_claim(claim_id: str, size: str = "smoke", controls: bool = False) -> Result:
    """Run a claim's check (and with ``controls=True`` its controls); does not raise."""
    _check_size(size)
    claim = get_claim(claim_id)
    start = time.perf_counter()
    measured = float(claim.check(size))
    seconds = time.perf_counter() - start
    ran = run_controls(claim_id, size) if controls else ()
    return Result(claim, measured, seconds, size, controls=ran)


def assert_claim(claim_id: str, size: str = "smoke") -> Result:
    """Run a claim and its controls; raise :class:`ClaimFailed` unless all come out as registered.

    This is what a chapter calls right after a theorem and its proof. A control that agrees
    (is not rejected) fails the claim: its check could not have told the statement from its
    false neighbour.
    """
    result = run_claim(claim_id, size, controls=True)
    c = result.claim
    if result.agrees != c.expected_agreement:
        want = "agree" if c.expected_agreement else "disagree"
        raise ClaimFailed(
            f"claim {c.id} ({c.source}) expected to {want} with its reference but "
            f"measured {result.measured!r} vs reference {c.reference!r} "
            f"({COMPARISONS[c.comparison]}, tolerance {c.tolerance!r}: {c.tolerance_reason})"
        )
    weak = [r for r in result.controls if not r.rejected]
    if weak:
        raise ClaimFailed(
            f"claim {c.id} ({c.source}): control(s) not rejected, so the check has no power: "
            + "; ".join(f"{r.name!r} ({r.control.statement}) measured {r.measured!r} vs "
                        f"reference {r.reference!r}" for r in weak)
            + f" ({COMPARISONS[c.comparison]}, tolerance {c.tolerance!r})")
    return result


def registry_problems(claims=None) -> list:
    """What the registry still lacks; empty when every claim meets the rules.

    Every control says what kind of neighbour it is (:data:`CONTROL_KINDS`); every
    ``"agrees"`` claim has at least one *near* control (:attr:`Control.near`; else it is an
    illustration, registered with ``expect="illustrates"`` and the slack of its worst instance);
    every erratum says what is true instead (``correction``). That each control is *rejected*
    is checked when the claim runs (:func:`assert_claim`). The tests and the ledger page fail
    unless this is empty.
    """
    claims = all_claims() if claims is None else claims
    out = []
    for c in claims:
        if c.expect == "agrees" and not c.controls:
            out.append(f"{c.id}: agrees but has no negative control (add one, or register it "
                       "with expect='illustrates' and say why none can be rejected)")
        elif c.expect == "agrees" and not c.near_controls:
            out.append(f"{c.id}: agrees but has no near control (boundary, hypothesis, reading, "
                       f"or scaled by at most {NEAR_FACTOR:.0%}): add one, or register it as an "
                       "illustration with the slack of its worst instance")
        for k in c.controls:
            if k.kind is None:
                out.append(f"{c.id}: control {k.name!r} has no kind (one of "
                           f"{sorted(CONTROL_KINDS)})")
        if c.expect == "disagrees" and not c.correction.strip():
            out.append(f"{c.id}: erratum without a correction (what is true instead)")
    return out


def ledger(size: str = "smoke") -> list[Result]:
    """Run every registered claim with its controls; the rows of the verification ledger."""
    return [run_claim(c.id, size, controls=True) for c in all_claims()]
