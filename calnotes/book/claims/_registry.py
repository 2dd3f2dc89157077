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
           "STATUSES", "CONTROL_KINDS", "NEAR_FACTOR", "INCONCLUSIVE", "PAPER_NAMES", "cite",
           "claim_sentence", "comparison_text"]

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

PAPER_NAMES = {
    "000": "the truthfulness paper",
    "001": "the utility paper",
    "003": "the proper-calibration-errors paper",
    "004": "the reassessing paper",
}
"""Paper number -> the one short name the book uses for it everywhere (the *Papers and notation*
page introduces them): claim lines, the ledger, the errata and findings pages. A claim's id starts
with its paper's number and its ``source`` names the paper by this name (:func:`cite`,
:func:`registry_problems`)."""


def cite(paper: str, where: str, note: str = "") -> str:
    """A claim's ``source``: where in which paper, with the paper's short name.

    Examples
    --------
    >>> cite("004", "Prop 4.8")
    'Prop 4.8 of the reassessing paper'
    >>> cite("000", "Thm 2.6", "after Hartline et al.")
    'Thm 2.6 of the truthfulness paper, after Hartline et al.'
    """
    if paper not in PAPER_NAMES:
        raise ValueError(f"paper: expected one of {sorted(PAPER_NAMES)}, got {paper!r}")
    text = f"{where} of {PAPER_NAMES[paper]}"
    return f"{text}, {note}" if note else text


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
    quantity : str
        What the check's number is, in the statement's own terms and units (plain text,
        Unicode math), e.g. ``"|z| of the simulated mean against the exact value"`` or
        ``"number of post-hoc methods whose Brier score is above the uncalibrated one"``: the
        claim line reads ``<quantity> = <measured> <symbol> <threshold>``
        (``claim_sentence``). Required (:func:`registry_problems`).
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
    quantity: str = ""
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

    @property
    def sentence(self) -> str:
        """The claim line's text in words and symbols (``claim_sentence``)."""
        return claim_sentence(self)

    def _repr_markdown_(self) -> str:
        c = self.claim
        mark = {"verified": "✓", "illustration": "◦", "erratum": "≠", "finding": "◇"}.get(
            self.status, "✗")
        word = BADGES.get(self.status, BADGES["FAILED"])[0]
        return f"{mark} **{word}** `{c.id}` ({c.source}): {claim_sentence(self)}"

    def _repr_html_(self) -> str:
        return claim_line_html(self)

    def __repr__(self) -> str:
        return f"Result({self.claim.id!r}, measured={self.measured!r}, status={self.status!r})"


#: Badge of each status in a chapter's claim line: (label, background, text colour). The
#: backgrounds are the Okabe-Ito palette's (distinguishable with every common colour-vision
#: deficiency); the word on the badge carries the status too. The text is black: 5.4:1 or more
#: on every background (white on the green was 3.4:1, under WCAG AA's 4.5:1 for small text).
BADGES = {
    "verified": ("agrees", "#009E73", "#000"),
    "illustration": ("illustration", "#56B4E9", "#000"),
    "erratum": ("erratum (confirmed)", "#E69F00", "#000"),
    "finding": ("finding on our data", "#CC79A7", "#000"),
    "FAILED": ("FAILED", "#D55E00", "#000"),
}


def claim_anchor(claim_id: str) -> str:
    """The HTML id of a claim's row on the ledger page (``claim-000-ex1-1-...``)."""
    return "claim-" + claim_id.replace(".", "-").replace("_", "-")


def erratum_anchor(claim_id: str) -> str:
    """The HTML id of a claim's entry on the errata page (``erratum-000-ex1-1-...``): the
    page's own target (:func:`calnotes.book.claims.errata_notes.anchor`)."""
    from .errata_notes import anchor
    return anchor(claim_id)


def _appendix_link(chapter: str, page: str) -> str:
    import posixpath
    return posixpath.relpath(f"book/appendix/{page}", posixpath.dirname(chapter)) + ".html"


def _num(x: float, against=()) -> str:
    """A number for a claim line: an integer as an integer, a short decimal as it is (1.125),
    else 3 significant digits, more where needed to tell it from the numbers in ``against``
    (so that 1.0003 > 1 never reads "1 > 1"); a leading minus sign as the typographic one."""
    x = float(x)
    if np.isnan(x):
        return "nan (no value)"
    if np.isinf(x):
        return "∞" if x > 0 else "−∞"
    if x == round(x) and abs(x) < 1e7:
        text = str(int(round(x)))
    else:
        exact = [d for d in range(1, 5) if float(f"{x:.{d}g}") == x]
        others = [float(a) for a in against if np.isfinite(a) and float(a) != x]
        for digits in range(exact[0] if exact else 3, 11):
            text = f"{x:.{digits}g}"
            if all(text != f"{a:.{digits}g}" for a in others):
                break
    return "−" + text[1:] if text.startswith("-") else text


def _rounding(tolerance: float, reference: float) -> bool:
    """Is the tolerance only a floating-point rounding slack (not a statistical allowance)?"""
    return 0 < tolerance <= 1e-9 * max(1.0, abs(reference))


def comparison_text(claim: "Claim", measured: float) -> str:
    """The measured value against the reference, with a symbol: what follows ``quantity =``.

    The symbol is the comparison that holds: ``≤``/``≥`` (``>``/``<`` when the bound is
    broken), ``≈`` within a tolerance (``≠`` outside it), ``= … exactly`` at tolerance 0.
    A tolerance that is only rounding slack is said so; a larger one is added to the bound in
    the open.

    Examples
    --------
    >>> c = Claim("x.y", "s", "s", check=lambda size: 0.0, reference=0.0, tolerance=4.0,
    ...           tolerance_reason="4 standard errors", chapter="c", comparison="le")
    >>> comparison_text(c, 1.3318)
    '1.33 ≤ 4 (the tolerance)'
    >>> comparison_text(c, 5.1)
    '5.1 > 4 (the tolerance)'
    >>> c = Claim("x.y", "s", "s", check=lambda size: 0.0, reference=0.0, tolerance=1e-12,
    ...           tolerance_reason="rounding", chapter="c")
    >>> comparison_text(c, 4e-16)
    '4e-16 ≈ 0 (to within rounding, 1e-12)'
    """
    r, t, kind = float(claim.reference), float(claim.tolerance), claim.comparison
    holds = claim.holds(measured)
    if kind in ("abs", "rel"):
        if t == 0:
            return (f"{_num(measured)} exactly" if holds
                    else f"{_num(measured, [r])} ≠ {_num(r, [measured])}")
        m, ref = _num(measured, [r]), _num(r, [measured])
        if kind == "rel":
            share = abs(measured - r) / abs(r) if r else float("inf")
            return (f"{m} {'≈' if holds else '≠'} {ref} (off by {share:.2%} of it; tolerance "
                    f"{t:.2%})")
        if measured == r:
            return f"{m} exactly"
        if _rounding(t, r):
            return (f"{m} ≈ {ref} (to within rounding, {_num(t)})" if holds
                    else f"{m} ≠ {ref} (|difference| {_num(abs(measured - r))} > {_num(t)})")
        return (f"{m} {'≈' if holds else '≠'} {ref} (|difference| "
                f"{_num(abs(measured - r), [t])} {'≤' if holds else '>'} {_num(t)})")
    le = kind == "le"
    if t == 0 and 0 < abs(r) <= 1e-9:
        # a bound of +-1e-12 at tolerance 0: "strictly beyond rounding", not a constant
        strict = "<" if le else ">"
        if holds:
            bound = "≤" if le else "≥"
            return f"{_num(measured)} {strict} 0 (beyond rounding: {bound} {_num(r)})"
        return f"{_num(measured)} {'≥' if le else '≤'} 0 (not beyond rounding, {_num(abs(r))})"
    bound = r + t if le else r - t
    symbol = ("≤" if holds else ">") if le else ("≥" if holds else "<")
    if t == 0:
        return f"{_num(measured, [r])} {symbol} {_num(r, [measured])}"
    if _rounding(t, r):
        slack = "to within rounding" if holds else "beyond rounding"
        return f"{_num(measured, [r])} {symbol} {_num(r, [measured])} ({slack}, {_num(t)})"
    if r == 0:
        return f"{_num(measured, [bound])} {symbol} {_num(bound, [measured])} (the tolerance)"
    sign = "plus" if le else "minus"
    return (f"{_num(measured, [bound])} {symbol} {_num(bound, [measured])} "
            f"({_num(r)} {sign} a tolerance of {_num(t)})")


def _controls_text(result: "Result") -> str:
    """The negative controls in a few words: the nearest rejected one by name, or the ones
    that were not rejected (a claim that fails for want of power)."""
    weak = [k for k in result.controls if not k.rejected]
    if weak:
        return "; false neighbour(s) NOT rejected: " + ", ".join(f"“{k.name}”" for k in weak)
    nearest = result.nearest_rejected
    if nearest is None:
        return ""
    n = len(result.controls)
    if nearest.control.near:
        if n == 1:
            return f"; its false neighbour “{nearest.name}” is rejected"
        return f"; all {n} false neighbours are rejected, the nearest “{nearest.name}”"
    why = " (no near one can be)" if result.claim.expect == "illustrates" else ""
    if n == 1:
        return f"; its far false neighbour “{nearest.name}” is rejected{why}"
    return f"; all {n} far false neighbours are rejected, the nearest “{nearest.name}”{why}"


def claim_sentence(result: "Result") -> str:
    """A claim line's text: what was measured, in the statement's terms, against the reference,
    with a symbol, and the nearest rejected false neighbour.

    ``<quantity> = <measured> <symbol> <threshold>``, e.g. "|z| of the simulated mean against
    the exact value = 1.33 ≤ 4 (the tolerance); all 2 false neighbours are rejected,
    the nearest “exact values 0.5% off”". A claim without a ``quantity`` (which
    :func:`registry_problems` refuses) reads "measured = …".

    Examples
    --------
    >>> c = Claim("x.y", "s", "s", check=lambda size: 2.0, reference=0.0, tolerance=0.0,
    ...           tolerance_reason="a count", chapter="c", comparison="le",
    ...           quantity="number of methods that raise the Brier score")
    >>> claim_sentence(Result(c, 2.0, 0.0, "smoke"))
    'number of methods that raise the Brier score = 2 > 0'
    """
    c = result.claim
    quantity = c.quantity.strip() or "measured"
    return f"{quantity} = {comparison_text(c, result.measured)}{_controls_text(result)}"


SIZE_WORDS = {"smoke": "the small (smoke) size, the one the test suite runs",
              "full": "the full size"}
"""How a claim line's *why* dropdown says the size the claim ran at."""


def claim_line_html(result: "Result") -> str:
    """One line per claim, the same in every chapter (see :func:`show`).

    A badge whose colour and word give the status, the claim id linked to its row on the
    verification ledger (and, for an erratum, to its entry on the errata page), the source (the
    paper by its short name, :data:`PAPER_NAMES`), then what was measured, in words, against
    what the paper implies, with a symbol (``claim_sentence``), and a *why* dropdown with
    the statement, the tolerance's reasoning, the size the claim ran at (the claim's registered
    size, not the chapter's parameters) and every negative control with its numbers.
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
    why = [f"<b>Claim.</b> {_html.escape(c.statement)}",
           f"<b>Tolerance.</b> {_html.escape(c.tolerance_reason)}",
           f"<b>Size.</b> Run at {SIZE_WORDS.get(result.size, result.size)}."]
    if result.controls:
        why.append("<b>False neighbours</b> (negative controls: each must come out "
                   "disagreeing): " + "; ".join(
            f"<i>{_html.escape(k.name)}</i> ({_html.escape(k.control.statement)}; "
            f"{_html.escape(_kind_words(k.control))}): "
            f"{'rejected' if k.rejected else 'NOT REJECTED'}, it measures "
            f"{_html.escape(comparison_text_for(c, k.measured, k.reference))}"
            for k in result.controls))
    if c.expect == "illustrates":
        why.append(f"<b>Illustration only.</b> {_html.escape(c.evidence)}")
    details = ("<details style='display:inline'><summary style='display:inline;cursor:pointer'>"
               "<small>why</small></summary><div><small>" + "<br>".join(why)
               + "</small></div></details>")
    return (f'<div class="claim-line">{badge} {ident} <small>({_html.escape(c.source)})'
            f"{extra}</small>: {_html.escape(claim_sentence(result))} {details}</div>")


def _kind_words(control: "Control") -> str:
    """A control's kind in words: "a constant scaled by 0.99 (1% off)", "at the boundary"."""
    if control.kind == "scaled":
        f = float(control.factor)
        fold = max(f, 1 / f)
        off = f"{abs(f - 1) * 100:.2g}% off" if fold < 2 else f"{fold:.3g}-fold"
        return f"a constant scaled by {f:.4g}, {off}"
    return {"boundary": "at the statement's boundary", "hypothesis": "a hypothesis dropped",
            "reading": "another reading of the printed text",
            "alternative": "another false statement"}.get(control.kind, "unclassified")


def comparison_text_for(claim: "Claim", measured: float, reference: float) -> str:
    """:func:`comparison_text` against another reference (a control that moves it)."""
    if reference == claim.reference:
        return comparison_text(claim, measured)
    import dataclasses
    return comparison_text(dataclasses.replace(claim, reference=reference), measured)


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


def assert_claims(*claim_ids: str, size: str = "smoke") -> ClaimLines:
    """Assert several claims in order (:func:`assert_claim`) and show them one line each.

    What a chapter calls when a few claims follow one another: one (hidden) cell instead of
    one cell per claim. Raises :class:`ClaimFailed` at the first claim that does not come out
    as registered.

    Examples
    --------
    >>> from calnotes import claims
    >>> shown = claims.assert_claims("001.eq3.3", "003.lemma4.1")
    >>> [r.status for r in shown]
    ['verified', 'verified']
    """
    return show([assert_claim(i, size) for i in claim_ids])


def registry_problems(claims=None) -> list:
    """What the registry still lacks; empty when every claim meets the rules.

    Every control says what kind of neighbour it is (:data:`CONTROL_KINDS`); every
    ``"agrees"`` claim has at least one *near* control (:attr:`Control.near`; else it is an
    illustration, registered with ``expect="illustrates"`` and the slack of its worst instance);
    every erratum says what is true instead (``correction``); every claim says what its number
    is (``quantity``, the words of its claim line) and names its paper by the short name of
    :data:`PAPER_NAMES` in its ``source`` (:func:`cite`). That each control is *rejected* is
    checked when the claim runs (:func:`assert_claim`). The tests and the ledger page fail
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
        if not c.quantity.strip():
            out.append(f"{c.id}: no quantity (say in words what the check's number is, e.g. "
                       "'|z| of the simulated mean against the exact value'; the claim line "
                       "reads '<quantity> = <measured> <symbol> <threshold>')")
        paper = c.id.split(".", 1)[0]
        if paper in PAPER_NAMES and PAPER_NAMES[paper] not in c.source:
            out.append(f"{c.id}: source {c.source!r} does not name its paper as "
                       f"{PAPER_NAMES[paper]!r} (use cite({paper!r}, ...))")
    return out


def ledger(size: str = "smoke") -> list[Result]:
    """Run every registered claim with its controls; the rows of the verification ledger."""
    return [run_claim(c.id, size, controls=True) for c in all_claims()]
