"""The coverage inventory: every numbered result of the four papers, and the claims that check it.

The claims registry (:mod:`calnotes.book.claims._registry`) holds what the book *checks*; this module
holds what the papers *state*, one :class:`Entry` per numbered result, so that the verification
ledger can say how much of each paper is covered and what is left.

What counts as a result
-----------------------
Every numbered lemma, proposition, theorem, corollary, observation and example of the papers'
text, including the results the papers cite with a number of their own
(Results 1-3 and Thm C.3, Lemma E.1); every numbered definition or displayed equation that
defines a quantity the library computes (its implementation is named in ``code``); every table
(or, where the paper reasons cell by cell, every table cell); and every stated conclusion or
remark that makes a checkable claim (Table 1's four conclusions, the verbal conclusions of the
experiment sections). Definitions that define no computed quantity (completeness, soundness,
proactive and interactive measurability, Rademacher complexity, VC and pseudo-dimension, U-scoring
rules in general), proofs, and experimental set-ups are not results. Paper 003's text is its
appendix only, so its main-text definitions (``CE_p``, the binned ECE, ``CE_S``) appear through
the appendix results that use them.

Statuses
--------
``"verified"``
    At least one registered claim checks the result and every one of them agrees with the
    paper. ``note`` says what of the result the claims leave out, if anything.
``"erratum"``
    At least one of the listed claims is registered with ``expect="disagrees"``: the careful
    check contradicts the printed text, and the claim is an item of the errata page (which lists
    every such claim under its id).
``"illustration"``
    Its claims agree but none is verified: each is registered with ``expect="illustrates"``
    (no false neighbour of the statement can be rejected at a feasible size; the claim says why).
``"finding"``
    Its only claims are findings on our substitute data (``expect="finding"``): the paper's
    empirical statement is rerun on MNIST-5k or a simulator, with its sampling uncertainty; not
    a statement about the paper's text.
``"not checked yet"``
    No registered claim checks the result; ``reason`` says why.

The status follows from the claims (:func:`implied_status`): an erratum if any claim is one,
else verified if any claim is verified (its note says what the others only illustrate), else
illustration if any claim illustrates, else finding.

The status is declared with each entry and :func:`problems` checks it against the registry, so
an entry cannot claim more than the registry backs. A claim may check several entries (a lemma
and the theorem it proves), and every registered claim checks at least one.
"""

from __future__ import annotations

import dataclasses

import importlib
from dataclasses import dataclass, field

from ._registry import PAPER_NAMES, all_claims

__all__ = ["Entry", "Coverage", "PAPERS", "KINDS", "STATUSES", "VERIFIED", "ERRATUM",
           "NOT_CHECKED", "ILLUSTRATION", "FINDING", "CONSISTENT", "entries", "find", "coverage", "errata_items", "implied_status",
           "status_from_results", "problems"]

PAPERS = dict(PAPER_NAMES)
"""Paper number -> the paper's short name (the numbering of ``papers/README.md``; the names of
the *Papers and notation* page, :data:`calnotes.book.claims._registry.PAPER_NAMES`)."""

VERIFIED, ERRATUM, NOT_CHECKED = "verified", "erratum", "not checked yet"
ILLUSTRATION, FINDING = "illustration", "finding"
#: A result whose claims agree but can only compare the paper's printed numbers with each other
#: (a table of an experiment that is not rerun offline): consistent, which is less than verified.
CONSISTENT = "consistent (not rerun)"
STATUSES = (VERIFIED, CONSISTENT, ILLUSTRATION, ERRATUM, FINDING, NOT_CHECKED)

KINDS = ("definition", "equation", "lemma", "proposition", "theorem", "corollary",
         "observation", "example", "remark", "algorithm", "cited result", "table",
         "table cell", "conclusion")


@dataclass(frozen=True)
class Entry:
    """One numbered result of a paper.

    Attributes
    ----------
    paper : str
        ``"000"``, ``"001"``, ``"003"`` or ``"004"`` (:data:`PAPERS`).
    label : str
        The result as the paper numbers it, e.g. ``"Thm 2.6"``, ``"Table 1 (f3, l1 cw)"``,
        ``"Sec. 5 (patching best)"``; unique within a paper.
    kind : str
        One of :data:`KINDS`.
    statement : str
        What the paper states, in one line.
    claims : tuple of str
        Ids of the registered claims that check it (empty when not checked).
    status : str
        One of :data:`STATUSES`.
    reason : str
        Why it is not checked (required for, and only for, ``"not checked yet"``).
    note : str
        For a checked entry: what of the statement the claims leave out, or how they read it.
    code : tuple of str
        Dotted names of the ``calnotes`` objects implementing a definition or algorithm.
    """

    paper: str
    label: str
    kind: str
    statement: str
    claims: tuple = ()
    status: str = NOT_CHECKED
    reason: str = ""
    note: str = ""
    code: tuple = field(default=())
    #: the claims compare the printed numbers with each other only (the experiment is not
    #: rerun): agreeing claims make the entry ``"consistent (not rerun)"``, not verified
    printed_only: bool = False

    def __post_init__(self):
        object.__setattr__(self, "claims", tuple(self.claims))
        object.__setattr__(self, "code", tuple(self.code))
        if self.paper not in PAPERS:
            raise ValueError(f"paper: expected one of {sorted(PAPERS)}, got {self.paper!r}")
        if self.kind not in KINDS:
            raise ValueError(f"{self.paper} {self.label}: kind {self.kind!r} not in {KINDS}")
        if self.status not in STATUSES:
            raise ValueError(f"{self.paper} {self.label}: status {self.status!r} not in {STATUSES}")


@dataclass(frozen=True)
class Coverage:
    """Counts of one paper's inventory (a row of the ledger's summary table).

    ``results == verified + consistent + illustrations + errata + findings + not_checked``.
    """

    paper: str
    title: str
    results: int
    verified: int
    errata: int
    not_checked: int
    illustrations: int = 0
    findings: int = 0
    consistent: int = 0


def _maker(paper: str):
    def verified(label, kind, statement, claims, note="", code=()):
        return Entry(paper, label, kind, statement, claims, VERIFIED, note=note, code=code)

    def erratum(label, kind, statement, claims, note="", code=()):
        return Entry(paper, label, kind, statement, claims, ERRATUM, note=note, code=code)

    def unchecked(label, kind, statement, reason, code=()):
        return Entry(paper, label, kind, statement, (), NOT_CHECKED, reason=reason, code=code)

    def illustrated(label, kind, statement, claims, note="", code=()):
        return Entry(paper, label, kind, statement, claims, ILLUSTRATION, note=note, code=code)

    def found(label, kind, statement, claims, note="", code=()):
        return Entry(paper, label, kind, statement, claims, FINDING, note=note, code=code)

    return verified, erratum, unchecked, illustrated, found


_BY_CONSTRUCTION = ("the checks build predictors calibrated by construction; calibration itself "
                    "(CE_p = 0) is computed by calnotes.theory.population.ce_p and checked in Part III")
def _printed_only(entry: Entry) -> Entry:
    """An entry whose agreeing claims only compare the printed numbers with each other."""
    return dataclasses.replace(entry, printed_only=True,
                               status=CONSISTENT if entry.status == VERIFIED else entry.status)


_PRINTED_ONLY = ("checks the printed numbers against each other only; the experiment itself "
                 "(pretrained models on {data}) is not rerun offline")

# ------------------------------------------------------------------------------------- 000
v, x, n, il, fd = _maker("000")
_T1 = "E[{measure}({f})] = {value} (n i.i.d. samples of the Sec. 4 distribution)."
_THETA = "Theta is read with a derived constant (the claim names it)."
_P000 = (
    v("Def 2.1", "definition", "A k-class predictor is calibrated: Pr[y = r | f(x) = p] = p_r "
      "for every prediction p and class r.", ["000.lemmaC.1", "000.thm4.1"],
      note=_BY_CONSTRUCTION, code=["calnotes.theory.population.ce_p"]),
    v("Def 2.2", "definition", "A binary predictor is calibrated: Pr[y = 1 | f(x) = p] = p.",
      ["000.lemmaC.2"], note=_BY_CONSTRUCTION, code=["calnotes.theory.population.ce_p"]),
    v("Def 2.3", "definition", "A calibration measure is truthful if reporting the truth minimises "
      "its expectation over y_i ~ p*_i.", ["000.thm2.6.truthful", "000.thm3.1", "000.obs3.2",
                                           "000.ex1.1.not_truthful"],
      code=["calnotes.core.expectation.expected_qece"]),
    v("Def 2.4", "definition", "ECE = (1/n) sum_i |p_i - ybar_{p_i}|, conditioning on equal "
      "prediction values.", ["000.ex1.1.simulation", "000.ex1.1.constant"],
      code=["calnotes.core.measures.unbinned_ece", "calnotes.core.expectation.expected_unbinned_ece"]),
    v("Def 2.5", "definition", "l1- and l2-QECE_m over the m quantile bins of eq. (1), "
      "B_j = {i : (j-1)n/m < i <= jn/m} after sorting the predictions.",
      ["000.def2.5.as_printed", "000.thm2.6.enumeration", "000.thm2.6.exact"],
      note="recomputed from the printed text on every outcome vector of small instances "
           "(m not dividing n, straddling ties); the paper sorts without a rule for tied "
           "predictions; the library averages over their orders (the measures chapter states "
           "the convention)",
      code=["calnotes.core.measures.l1_qece", "calnotes.core.measures.l2_qece",
            "calnotes.core.binning.equal_mass_bins"]),
    v("Def 2.7", "definition", "Class-wise aggregation: the mean of a binary measure over the k "
      "one-vs-rest problems.", ["000.thm3.1", "000.lemmaC.1"],
      code=["calnotes.core.measures.classwise"]),
    v("Def 2.8", "definition", "Confidence aggregation: the binary measure on the top class "
      "(largest predicted probability).", ["000.obs3.2"], code=["calnotes.core.measures.confidence"]),
    v("Def 2.9", "definition", "f dominates g if f has no larger expected loss than g under every "
      "proper loss.", ["000.thm4.1", "000.appB.blackwell"], code=["calnotes.theory.decisions.dominates"]),
    v("Def A.5", "definition", "Multi-class Brier loss sum_r (p_r - 1[y = r])^2.",
      ["000.lemmaC.1", "000.sec5.m_equals_n"], code=["calnotes.core.scores.brier_loss"]),
    v("Def A.6", "definition", "Classification error 1[y != argmax_r p_r].",
      ["000.appB.blackwell"], code=["calnotes.core.scores.zero_one_loss"]),
    v("Def B.1", "definition", "A finite decision problem (A, Y, L), its best response BR_L(q) and "
      "induced loss l_L(q, y) = L(BR_L(q), y).", ["000.thmB.3.induced_is_proper"],
      code=["calnotes.theory.decisions.DecisionProblem"]),
    v("Def B.2", "definition", "A loss l is proper if E_{y~p} l(p, y) <= E_{y~p} l(q, y) for all "
      "p, q.", ["000.thmB.3.induced_is_proper", "000.thmB.3.proper_is_induced"],
      code=["calnotes.core.scores.ProperLoss"]),
    x("Ex 1.1", "example", "With truth p*_i = i/n the truthful predictor has ECE O(1/n) while the "
      "constant 1/2 has O(1/sqrt(n)): ECE is not truthful.",
      ["000.ex1.1.truthful_unbinned", "000.ex1.1.constant", "000.ex1.1.not_truthful",
       "000.ex1.1.simulation"],
      note="the conclusion (ECE is not truthful) holds; the O(1/n) rate does not"),
    v("Ex 1.1 (binned)", "example", "With m equal-width bins the truthful predictor's binned ECE "
      "is O(sqrt(m/n)); the constant predictor's stays O(1/sqrt(n)).",
      ["000.ex1.1.truthful_binned_m", "000.ex1.1.truthful_binned_n", "000.ex1.1.constant"]),
    v("Thm 2.6", "theorem", "l2-QECE_m is truthful for every m, and E[l2-QECE_m(p*; y)] = "
      "n^-2 sum_i p*_i (1 - p*_i).",
      ["000.thm2.6.enumeration", "000.thm2.6.exact", "000.thm2.6.simulation",
       "000.thm2.6.truthful"],
      note="truthfulness is checked against nine families of alternative reports and a local "
           "search for a better report (from a single sample and one bin up), not all reports"),
    v("Thm 3.1", "theorem", "If CAL is truthful for binary prediction, CAL^classwise is truthful "
      "for k-class prediction.", ["000.thm3.1"],
      note="checked for CAL = l2-QECE_m, the case the paper uses"),
    v("Obs 3.2", "observation", "l2-QECE_m^conf is not truthful for k-class prediction.",
      ["000.obs3.2"]),
    v("Thm 4.1", "theorem", "If a calibrated f1 dominates a calibrated f2, then "
      "E[l2-QECE_m^classwise](f1) <= E[l2-QECE_m^classwise](f2) for every n and m.",
      ["000.thm4.1", "000.lemmaC.1"],
      note="dominance realised as a garbling (Blackwell); exact expectations on small instances"),
    v("Table 1 (f1, l1 conf)", "table cell",
      _T1.format(measure="l1-QECE^conf", f="f1", value="Theta(sqrt((1-eps1) eps1 m/n))"),
      ["000.table1.f1.l1_conf"], note=_THETA),
    v("Table 1 (f1, l1 cw)", "table cell",
      _T1.format(measure="l1-QECE^classwise", f="f1",
                 value="Theta((1/k) sqrt((1-eps1) eps1 m/n))"),
      ["000.table1.f1.l1_cw"], note=_THETA),
    v("Table 1 (f1, l2 conf)", "table cell",
      _T1.format(measure="l2-QECE^conf", f="f1", value="(1-eps1) eps1 / n"),
      ["000.table1.f1.l2_conf"]),
    v("Table 1 (f1, l2 cw)", "table cell",
      _T1.format(measure="l2-QECE^classwise", f="f1", value="2 (1-eps1) eps1 / (k n)"),
      ["000.table1.f1.l2_cw"]),
    x("Table 1 (f2, l1 conf)", "table cell",
      _T1.format(measure="l1-QECE^conf", f="f2", value="eps2 + above"),
      ["000.table1.f2.l1_conf"], note="the additive form is an upper bound; the exact value is a "
      "folded-normal mean"),
    x("Table 1 (f2, l1 cw)", "table cell",
      _T1.format(measure="l1-QECE^classwise", f="f2", value="eps2/k + above"),
      ["000.table1.f2.l1_cw"], note="the bias term is 2 eps2/k (as App. D.2 writes), and the "
      "additive form overstates"),
    v("Table 1 (f2, l2 conf)", "table cell",
      _T1.format(measure="l2-QECE^conf", f="f2", value="eps2^2/m + above"),
      ["000.table1.f2.l2_conf"]),
    v("Table 1 (f2, l2 cw)", "table cell",
      _T1.format(measure="l2-QECE^classwise", f="f2", value="2 eps2^2/(k m) + above"),
      ["000.table1.f2.l2_cw"]),
    v("Table 1 (f3, l1 conf)", "table cell",
      _T1.format(measure="l1-QECE^conf", f="f3", value="Theta(sqrt((1-1/k)(1/k) m/n))"),
      ["000.table1.f3.l1_conf"], note=_THETA),
    x("Table 1 (f3, l1 cw)", "table cell",
      _T1.format(measure="l1-QECE^classwise", f="f3",
                 value="Theta((1/k) sqrt((1-1/k)(1/k) m/n))"),
      ["000.table1.f3.l1_cw"], note="f3's class-wise error equals its confidence error: no "
      "k-free constant fits"),
    v("Table 1 (f3, l2 conf)", "table cell",
      _T1.format(measure="l2-QECE^conf", f="f3", value="(1-1/k)(1/k) / n"),
      ["000.table1.f3.l2_conf"]),
    v("Table 1 (f3, l2 cw)", "table cell",
      _T1.format(measure="l2-QECE^classwise", f="f3", value="(1-1/k) / (k n)"),
      ["000.table1.f3.l2_cw"]),
    x("Table 1 (f4, l1 conf)", "table cell",
      _T1.format(measure="l1-QECE^conf", f="f4", value="(k-1) eps3 + above"),
      ["000.table1.f4.l1_conf"], note="the additive form is an upper bound"),
    x("Table 1 (f4, l1 cw)", "table cell",
      _T1.format(measure="l1-QECE^classwise", f="f4", value="2 (k-1) eps3 / k + above"),
      ["000.table1.f4.l1_cw"], note="'above' (the f3 cell) is too small by k/2"),
    v("Table 1 (f4, l2 conf)", "table cell",
      _T1.format(measure="l2-QECE^conf", f="f4", value="(k-1)^2 eps3^2/m + above"),
      ["000.table1.f4.l2_conf"]),
    v("Table 1 (f4, l2 cw)", "table cell",
      _T1.format(measure="l2-QECE^classwise", f="f4", value="(k-1) eps3^2/m + above"),
      ["000.table1.f4.l2_cw"]),
    x("Sec. 4, concl. 1", "conclusion", "For k >> 1/eps1 the uninformative f3 beats the ground "
      "truth f1 under the three non-truthful measures.", ["000.table1.conclusion1"],
      note="holds for l1 and l2 confidence aggregation, fails for l1 class-wise"),
    x("Sec. 4, concl. 2", "conclusion", "For k >> 1/eps1 and small eps3 the miscalibrated constant "
      "f4 beats f1 under the three non-truthful measures.", ["000.table1.conclusion2"],
      note="holds for l1 and l2 confidence aggregation, fails for l1 class-wise"),
    v("Sec. 4, concl. 3", "conclusion", "Under the truthful l2-QECE^classwise f1 is best and f2 "
      "(eps2 ~ 1/sqrt(n)) beats f3, whatever m.", ["000.table1.conclusion3"]),
    x("Sec. 4, concl. 4", "conclusion", "Under the non-truthful measures (eps1 << 1/k) f2 is worse "
      "than f3 for small m and better for large m.", ["000.table1.conclusion4"],
      note="holds for l1 and l2 confidence aggregation, fails for l1 class-wise at small m"),
    x("App. D (facts (i)-(ii))", "conclusion", "Calibrated bins: expected binned l1 error "
      "Theta(sqrt(p(1-p)) sqrt(m/n)), l2 error p(1-p)/n; an additive bias delta adds delta to "
      "l1-QECE and delta^2/m to l2-QECE.",
      ["000.table1.derivation", "000.table1.f1.l1_conf", "000.table1.f2.l1_conf",
       "000.table1.f2.l2_conf"],
      note="the l1 half of fact (ii) is only an upper bound near the sampling scale"),
    v("Thm B.3", "theorem", "Induced losses of decision problems are proper, and every proper "
      "loss is the induced loss of a decision problem (A = Delta(Y), L = l).",
      ["000.thmB.3.induced_is_proper", "000.thmB.3.proper_is_induced",
       "000.thmB.3.grid_limit"],
      note="the converse is checked with finite grids of actions (log, Brier, spherical)"),
    v("App. B (dominance)", "conclusion", "Dominance under all proper losses is dominance in all "
      "decision problems; for calibrated predictors it is the Blackwell order.",
      ["000.appB.blackwell"], note="checked in the direction garbling => dominated"),
    v("Lemma C.1", "lemma", "For a calibrated k-class f, E[l2-QECE_m^classwise] = E[l_Brier] / "
      "(k n) for every m.", ["000.lemmaC.1", "000.lemmaC.1.simulation"]),
    v("Lemma C.2", "lemma", "For a calibrated binary f, E[l2-QECE_m] = E[(f(x) - y)^2] / n for "
      "every m.", ["000.lemmaC.2", "000.lemmaC.2.simulation"]),
    v("Sec. 5.2 (m = n)", "conclusion", "With m = n bins the l2-ECE is the squared loss, so "
      "rankings by calibration error approach those by loss.", ["000.sec5.m_equals_n"],
      note="on the MNIST-5k suite, not the paper's CIFAR-100 checkpoints"),
    fd("Sec. 5.2 (ECE flips)", "conclusion", "The classical binned ECE with confidence "
       "aggregation flips the ranking of checkpoints between bin counts.",
       ["000.sec5.ece_conf_flips"], note="holds on the MNIST-5k suite (80 of 325 pairs flip, "
       "bootstrap SD 14), not the paper's CIFAR-100 checkpoints"),
    fd("Sec. 5.2 (dominance)", "conclusion", "The checkpoints are consistently ordered by every "
       "proper loss (log, Brier, spherical, 0-1).", ["000.sec5.checkpoint_dominance"],
       note="inconclusive on the MNIST-5k suite: 41 of the 45 checkpoint pairs are ordered, the 4 "
            "unordered ones 1.5 bootstrap SDs from none (the CIFAR-100 checkpoints are not "
            "available offline)"),
    fd("Sec. 5.2 (QECE preserves)", "conclusion", "The truthful l2-QECE preserves the dominance "
       "between checkpoints at every bin count.", ["000.sec5.qece_preserves"],
       note="does not carry over to the MNIST-5k suite at m = 20 and 100 (one test sample; "
            "Thm 4.1 is about expectations), holds at m = n by the identity of Sec. 5.2"),
    fd("Sec. 5.2 (large m)", "conclusion", "As m grows, the lower-log-loss (informative) predictor "
       "gets the lower calibration error, as conclusion 4 predicts.", ["000.sec5.large_m"],
       note="inconclusive on the MNIST-5k suite: 9 more chain pairs agree at m = 100 than at "
            "m = 20, 1.8 bootstrap SDs"),
    n("Sec. 5.3", "conclusion", "Across all models and checkpoints the dominance order is "
      "preserved, with few exceptions, by the truthful measure at every bin count.",
      reason="the six CIFAR-100 networks are not available offline"),
)

# ------------------------------------------------------------------------------------- 001
v, x, n, il, fd = _maker("001")
_TABLE_APP = ("Table {n} ({what}): accuracy, Brier, TCE^bin, CWE^bin and utility calibration "
              "errors of six post-hoc methods, mean +- std over 10 splits.")
_TABLE_CLAIMS = ["001.tables.ts_keeps_accuracy", "001.appB2.tables_cwe", "001.appB2.tables_tce_topk",
                 "001.tables.brier_ge_error_rate", "001.tables.calibration_le_sqrt_brier",
                 "001.sec5.no_single_best", "001.appC4.order_varies"]
_P001 = (
    v("Def 1.1", "definition", "Mean calibration error MCE(f) = E||E[Y | f(X)] - f(X)||_2^2.",
      ["003.thm3.1.brier_ge_ce2"],
      note="no 001 result uses it; it is CE_2^2 of paper 003 and is exercised there",
      code=["calnotes.theory.population.ce_p"]),
    v("Eqs. (2.1)-(2.2)", "definition", "Binned TCE^bin and CWE^bin: sums over m bins of "
      "|E[(p* - Y*) 1{p* in B_j}]| (class-wise: per class, weighted).",
      ["001.appB2.bound", "001.appB2.counterexample"],
      code=["calnotes.book.claims.utility.binned_top_and_classwise"]),
    v("Eq. (2.3)", "definition", "Weighted calibration CE_W(f) = sup_{w in W} "
      "E<w(f(X)), f(X) - Y>.", ["001.eq3.3"]),
    v("Eqs. (3.1)-(3.2)", "definition", "Predicted utility v_u(X) = <f(X), ubar(X)> and UC(f, u) = "
      "sup_I |E[(u(f(X), Y) - v_u(X)) 1{v_u(X) in I}]|.",
      ["001.eq3.3", "001.lemma3.4.estimator"],
      code=["calnotes.theory.utility.population_uc", "calnotes.theory.utility.utility_calibration"]),
    v("Eq. (3.3)", "equation", "UC(f, u) is weighted calibration with witnesses "
      "xi ubar 1{v_u in I}.", ["001.eq3.3"]),
    v("Prop 3.2", "proposition", "For every utility u and threshold t0, the risk gap to the best "
      "monotone post-processing of v_u is at most 2 UC(f, u).", ["001.prop3.2"]),
    il("Prop 3.3", "proposition", "DCU(f) <= sqrt(8 UC(f, u)) + UC(f, u).",
      ["001.prop3.3", "001.prop3.3.proof"],
      note="DCU is an infimum; it is bounded above by explicit calibrated candidates"),
    v("Lemma 3.4", "lemma", "|UC_hat(f, u; S) - UC(f, u)| <= O~(sqrt(log(1/delta)/n)) with "
      "dimension-free constants; UC_hat takes O(n log n + n T_eval) time.",
      ["001.lemma3.4.bound", "001.lemma3.4.estimator", "001.lemma3.4.dimension_free"],
      note="the run time is not timed: the estimator is one sort and one scan, and its exactness "
           "is checked"),
    v("Eq. (3.5)", "definition", "UC(f, U) = sup_{u in U} UC(f, u).",
      ["001.appB2.bound", "001.cor4.3.rate_in_C"], code=["calnotes.theory.utility.uc_class"]),
    x("Ex 3.5", "example", "U_TCE and U_CWE: UC(f, U_TCE) = sup_I |E[Y* - p* 1{p* in I}]| and the "
      "class-wise analogue.", ["001.ex3.5.printed", "001.appB2.bound"],
      note="a misplaced parenthesis; App. B.2's version is the intended one",
      code=["calnotes.theory.utility.top_class", "calnotes.theory.utility.classwise"]),
    v("Ex 3.6", "example", "Linear utilities U_lin = {u_a : a in [-1, 1]^C}, v = <f(X), a>.",
      ["001.cor4.3.rate_in_C", "001.lemma3.4.dimension_free", "001.propB.8.shatter",
       "001.eq3.3"], code=["calnotes.theory.utility.linear", "calnotes.theory.utility.sample_linear"]),
    v("Ex 3.7", "example", "Rank-based utilities u_theta(p, e_j) = theta_rank(p, j) and top-K "
      "utilities theta_r = 1{r <= K}.", ["001.corB.10", "001.eq3.3"],
      code=["calnotes.theory.utility.rank", "calnotes.theory.utility.top_k", "calnotes.theory.utility.sample_rank"]),
    v("Ex 3.8", "example", "Decision utilities u_l(p, y) = -l(y, delta_l(p)) for bounded K-action "
      "losses.", ["001.eq3.3"], note="they enter only the eq. (3.3) identity check",
      code=["calnotes.theory.utility.decision"]),
    v("Cor 4.3", "corollary", "UC is interactively measurable for U_lin and U_rank with "
      "n = O~((C + log(1/delta))/eps^2) samples.",
      ["001.cor4.3.rate_in_n", "001.cor4.3.rate_in_C"],
      note="the upper bound's n^(-1/2) rate is checked at C = 2, where the supremum over U_lin is "
           "exact; the C-dependence only from below (the supremum grows at least like sqrt(C)); "
           "U_rank follows by Cor B.10's reduction"),
    il("Algorithm 1", "algorithm", "Iterative patching: find the worst witness, step eta_t along "
      "it, project onto the simplex, stop when err_t <= eps.",
      ["001.prop4.4.terminal", "001.appA.finite_sample"],
      code=["calnotes.theory.patching.patch_population", "calnotes.theory.patching.UtilityPatching"]),
    v("Prop 4.4", "proposition", "With eta_t = err_t/C Algorithm 1 stops within O(C/eps^2) "
      "iterations, the Brier score non-increasing at every step.",
      ["001.prop4.4.brier", "001.prop4.4.decrease", "001.prop4.4.iterations",
       "001.prop4.4.terminal"]),
    il("App. A (finite samples)", "conclusion", "With fresh samples per iteration Algorithm 1 keeps "
      "its guarantee if err_t is estimated to O(eps); N = O~(log(C/delta)/eps^2) suffices for "
      "U_CWE and U_topK.", ["001.appA.finite_sample"],
      note="the final population UC is checked; the sample sizes N are not"),
    v("App. B.1 (eq. (B.1))", "cited result", "Binary CutOff calibration bounds the gain of "
      "monotone recalibration of a thresholded decision by 2 Delta_Cutoff.",
      ["001.appB1.cutoff"],
      note="exact on binary populations, monotone recalibration in both directions"),
    v("App. B.2 (bound)", "proposition", "For any m-bin partition TCE^bin <= m UC(f, U_TCE) and "
      "CWE^bin <= m UC(f, U_CWE).",
      ["001.appB2.bound", "001.appB2.tables_cwe", "001.appB2.tables_tce_topk"],
      note="on the printed tables the TCE^bin bound uses U_topK, which contains U_TCE"),
    v("App. B.2 (converse)", "example", "p* in {0.45, 0.55} with accuracies 0.05, 0.95: "
      "TCE^bin = 0 on three bins while UC(f, U_TCE) >= 0.2.", ["001.appB2.counterexample"]),
    n("App. B.3", "cited result", "Proactive measurability (auditing) is computationally hard "
      "for decision-calibration and projected smooth calibration witnesses.",
      reason="computational-hardness results cited from Gopalan et al. (2024); not a numerical "
             "statement"),
    il("Thm B.4", "theorem", "R_n(G_U) <= 2 sum_j R_n(P_j(U)).", ["001.thmB.4"],
      note="the empirical complexities given the sample, exactly (all sign vectors), on finite "
           "classes and samples of n <= 12"),
    il("Cor B.5", "corollary", "sup_u |UC_hat - UC| <= 2 R_n(G_U) + 4 sqrt(log(2/delta)/(2n)) "
      "with probability 1 - delta.", ["001.corB.5"],
      note="coverage by simulation on finite classes with exact UC, R_n by Monte Carlo"),
    n("Cor B.6", "corollary", "U_lin is interactively measurable with "
      "N = O((C^3 log(n/C) + log(1/delta))/eps^2).",
      reason="an O() rate with unspecified constants, superseded by the sharper Cor B.9; its "
             "C-dependence would need the supremum over U_lin for C > 2, which is not "
             "computable here (App. B.3)"),
    il("Result 1", "cited result", "Massart and Sauer: R_n(B) <= sqrt(2 d log(en/d)/n) for VC "
      "dimension d.", ["001.result1"],
      note="exact empirical complexities of thresholds, intervals and a shattered sample, "
           "n <= 12"),
    n("Result 2", "cited result", "Goldberg and Jerrum: Boolean formulas of linear predicates in "
      "m parameters have VC dimension O(m log m).",
      reason="a textbook result cited from Goldberg and Jerrum (1993), stated as O(m log m) "
             "with an unspecified constant: no number to check"),
    n("Result 3", "cited result", "Pseudo-dimension d gives uniform deviation "
      "O(B (sqrt(2 d log(n/d)) + sqrt(log(1/delta)))/sqrt(n)).",
      reason="a textbook result cited from Mohri et al. (2018, Thm 10.6), stated as O() with an "
             "unspecified constant: no number to check (its Rademacher form, Cor B.5, is "
             "checked)"),
    v("Prop B.8", "proposition", "Pdim(G_lin) = Omega(C) and O(C log C).",
      ["001.propB.8.shatter"],
      note="only the lower bound (C - 1 shattered points); the O(C log C) upper bound is not "
           "checked"),
    v("Cor B.9", "corollary", "sup_{u in U_lin} |UC_hat - UC| <= O~(sqrt((C + log(1/delta))/n)).",
      ["001.cor4.3.rate_in_n", "001.cor4.3.rate_in_C"],
      note="the n^(-1/2) rate at C = 2 (exact supremum); the scaling in C only from below, on "
           "one calibrated model"),
    v("Cor B.10", "corollary", "Rank utilities are linear utilities after sorting each "
      "prediction, so U_rank has the sample complexity of U_lin.", ["001.corB.10"],
      note="the reduction (equal estimates) is checked; the Pdim consequence follows from "
           "Prop B.8"),
    v("Thm B.11", "theorem", "||F_E - F_hat||_L2[0,2] <= sqrt(2 eps_stat) + "
      "sqrt(ln(2/delta_M)/M) with probability 1 - delta_S - delta_M.",
      ["001.thmB.11.l2", "001.thmB.11.dkw_coverage", "001.thmB.11.eps_stat_needed"],
      note="the DKW step is verified; the L2 bound itself only illustrated (vacuous at every "
           "feasible n with Lemma 3.4's eps_stat)"),
    x("Table 1", "table", "ViT-ImageNet-1K: Brier, CWE^bin, TCE^bin and U_comb of six methods, "
      "mean +- 2 std. errors over 10 splits.",
      ["001.table1.pm_caption", "001.table1.pm_two_factors", "001.table1.means_equal_table7",
       "001.table1.ucomb_is_max", "001.appB2.tables_tce_topk",
       "001.tables.calibration_le_sqrt_brier", "001.sec5.no_single_best"],
      note=_PRINTED_ONLY.format(data="ImageNet-1K")),
    x("Sec. 5 (all improve)", "conclusion", "All post-hoc methods improve the Brier score and "
      "the calibration errors of Table 1.",
      ["001.sec5.brier_improves", "001.sec5.calibration_improves"],
      note="the calibration errors improve; the Brier score does not for IR and vector scaling"),
    v("Sec. 5 (no single best)", "conclusion", "No single method dominates uniformly.",
      ["001.sec5.no_single_best"],
      note="read off the printed Table 1 (and Tables 2-8), beyond the rounding of the digits; "
           "the recalibrators chapter also computes it on its own data (verdict (b))"),
    il("Sec. 5 (patching best)", "conclusion", "Patching achieves the best TCE^bin and U_comb of "
      "Table 1.", ["001.sec5.patching_best"], note="read off the printed table"),
    n("Sec. 5 (Fig. 1)", "conclusion", "On the U_rank and U_lin eCDFs the uncalibrated model is "
      "consistently worst; vector scaling is best on U_rank but worst on U_lin.",
      reason="a statement about figures of ViT-ImageNet predictions, not available offline; the "
             "recalibrators chapter tests the analogue on its own data (verdict (d), which fails "
             "there) without a claim"),
    v("App. C.2 (utilities)", "definition", "Gain-matrix utilities u_R(p, e_i) = R_{i, j*(p)}, "
      "aligned (off-diagonal Unif(0, 0.1)) and misaligned (specialist blocks of 0.2).",
      ["001.appC2.gain_utilities", "001.eq3.3"],
      code=["calnotes.theory.utility.gain_matrix", "calnotes.theory.utility.sample_gain_matrices"]),
    n("App. C.2 (dynamics)", "conclusion", "Under Algorithm 1 the worst sampled UC drops then "
      "stabilises, and the UC distributions shift left, for aligned and misaligned classes.",
      reason="the CIFAR-100 and ImageNet checkpoints are not available offline; the patching "
             "chapter reruns the experiment on the logistic-normal simulator and reports the "
             "verdict without a registered claim"),
    n("App. C.3", "conclusion", "Over 24 sparse sampling priors every patched eCDF lies left of "
      "every uncalibrated one (no overlap).",
      reason="ViT-ImageNet predictions are not available; the recalibrators chapter tests it on "
             "the simulator, where the bundles overlap even for the true probabilities, and "
             "argues this says nothing against the paper (no claim)"),
    v("App. C.4 (U_dcg)", "definition", "DCG utilities theta_r = log2(1 + r)^(-gamma), gamma in "
      "{0.5, 0.75, 1, 1.25, 1.5, 2}.", ["001.eq3.3"], code=["calnotes.theory.utility.dcg"]),
    v("App. C.4 (U_w2v)", "definition", "Similarity utility u(p, e_j) = sum_i p_i S[i, j], S the "
      "cosine similarity of word2vec class embeddings.", ["001.eq3.3"],
      note="with a random similarity matrix: the word2vec embeddings are not used offline",
      code=["calnotes.theory.utility.similarity"]),
    v("App. C.4 (obs. 1)", "conclusion", "The order of the post-hoc methods varies with the "
      "evaluated utility class.", ["001.appC4.order_varies"],
      note="read off the printed means of Tables 2-8 (two methods change places between two "
           "utility columns in every table; the best method changes in 5 of 7); the "
           "recalibrators chapter also computes it on its own data (verdict (e))"),
    n("App. C.4 (obs. 2)", "conclusion", "In several settings post-hoc methods shift the eCDF of "
      "utility calibration errors to the right (worse).",
      reason="a statement about the eCDFs of Figs. 5-8 (sampled U_lin, U_rank), whose data are "
             "not available offline; the printed tables give only the supremum over each "
             "finite class, which does not decide where the distribution lies; the "
             "recalibrators chapter tests it on its own data (verdict (f)) without a claim"),
    _printed_only(v("Table 2", "table", _TABLE_APP.format(n=2, what="RepVGG, CIFAR-10"), _TABLE_CLAIMS,
      note=_PRINTED_ONLY.format(data="CIFAR-10"))),
    _printed_only(v("Table 3", "table", _TABLE_APP.format(n=3, what="ResNet, CIFAR-10"), _TABLE_CLAIMS,
      note=_PRINTED_ONLY.format(data="CIFAR-10"))),
    _printed_only(v("Table 4", "table", _TABLE_APP.format(n=4, what="RepVGG, CIFAR-100"), _TABLE_CLAIMS,
      note=_PRINTED_ONLY.format(data="CIFAR-100"))),
    _printed_only(v("Table 5", "table", _TABLE_APP.format(n=5, what="ResNet, CIFAR-100"), _TABLE_CLAIMS,
      note=_PRINTED_ONLY.format(data="CIFAR-100"))),
    x("Table 6", "table", _TABLE_APP.format(n=6, what="ResNet, ImageNet"),
      _TABLE_CLAIMS + ["001.table6.dirichlet_topk_brier"],
      note=_PRINTED_ONLY.format(data="ImageNet") + "; the Dirichlet row's U_topK exceeds the "
           "largest value its Brier score allows"),
    _printed_only(v("Table 7", "table", _TABLE_APP.format(n=7, what="ViT, ImageNet"),
      _TABLE_CLAIMS + ["001.table1.means_equal_table7", "001.table1.pm_two_factors",
                       "001.table1.ucomb_is_max"],
      note=_PRINTED_ONLY.format(data="ImageNet") + "; the conflict between its +- and Table "
           "1's is recorded under Table 1")),
    _printed_only(v("Table 8", "table", _TABLE_APP.format(n=8, what="DistilBERT, Yahoo Answers"),
      _TABLE_CLAIMS, note=_PRINTED_ONLY.format(data="Yahoo Answers"))),
)

# ------------------------------------------------------------------------------------- 003
v, x, n, il, fd = _maker("003")
_P003 = (
    v("Def C.1", "definition", "TCE_p(f) = (E|f_C - P(Y = C | f_C)|^p)^(1/p) and CWCE_p(f) = "
      "(sum_k E|f_k - P(Y = k | f_k)|^p)^(1/p).",
      ["003.thm3.1.ce_ge_cwce", "003.thm3.1.tce_p_ge_tce_1", "003.thm3.1.cwce_le_2"],
      code=["calnotes.theory.population.tce", "calnotes.theory.population.cwce", "calnotes.core.measures.tce",
            "calnotes.core.measures.cwce"]),
    x("Def C.2", "definition", "KS(f) = E[KS(f, C)], KS(f, k) = max_sigma |int_[0, sigma] "
      "z - P(Y = k | f_k = z) dP_{f_k}(z)|.", ["003.thm3.1.tce_ge_ks.definition"],
      note="read literally the definition is not the quantity the proof of Thm 3.1 bounds: its "
           "instance (TCE_1 = 0, KS = 1/4) breaks both TCE_1 >= KS and TCE_p = 0 <=> KS = 0",
      code=["calnotes.theory.population.ks_error"]),
    v("Def C.3", "definition", "MMCE(f) = ||E[(f_C - P(Y = C | f_C)) k(f_C, .)]||_H.",
      ["003.thm3.1.mmce_le_c_tce", "003.thm3.1.tce0_iff_mmce0_iff_ks0"],
      code=["calnotes.theory.population.mmce"]),
    v("Def C.4", "definition", "KCE(f) = ||E[(f(X) - P_{Y|f(X)}) k(f(X), .)]||_H.",
      ["003.thm3.1.calibrated_iff_ce0_iff_kce0"], code=["calnotes.theory.population.kce"]),
    v("Def C.5", "definition", "Expected score s_S(P, Q) = E_{Y~Q} S(P, Y).",
      ["003.lemmaD.1", "003.lemma4.1"], code=["calnotes.theory.population.expected_score"]),
    v("Def C.6", "definition", "Divergence d_S(P, Q) = s_S(P, Q) - s_S(Q, Q) and generalized "
      "entropy g_S(Q) = s_S(Q, Q).", ["003.lemmaD.1", "003.thm4.3.upper_bound"],
      code=["calnotes.core.scores.divergence", "calnotes.core.scores.entropy"]),
    v("Lemma D.1", "lemma", "CE_S(f) = E[S(f(X), Y)] - E[g_S(P_{Y|f(X)})] for every proper S.",
      ["003.lemmaD.1"]),
    v("Thm 3.1 (BS = 0 => CE_p = 0)", "theorem", "Eq. (5)/(7): BS(f) = 0 implies CE_p(f) = 0; "
      "the converse fails (f = P_Y).", ["003.thm3.1.bs0_implies_ce0", "003.thm3.1.ce0_not_bs0"]),
    v("Thm 3.1 (CE_p = 0 <=> KCE = 0)", "theorem", "Eq. (5)/(7): CE_p(f) = 0 iff KCE(f) = 0 iff "
      "f is calibrated.", ["003.thm3.1.calibrated_iff_ce0_iff_kce0"],
      note="KCE with a characteristic kernel; with a constant kernel it fails (the control)"),
    v("Thm 3.1 (CE_p = 0 => CWCE_p = 0)", "theorem", "Eq. (5)/(8): calibration implies zero "
      "CWCE_p, not conversely.", ["003.thm3.1.ce0_implies_cwce0", "003.prop3.2"]),
    x("Thm 3.1 (CWCE_p = 0 => TCE_p = 0)", "theorem", "Eq. (5)/(9): zero CWCE_p implies zero "
      "TCE_p (and MMCE).", ["003.thm3.1.cwce0_implies_tce0", "003.thm3.1.ce0_implies_tce0"],
      note="fails for TCE_p of Def C.1 when atoms share a coordinate value; calibration "
           "(CE_p = 0) still implies TCE_p = 0"),
    x("Thm 3.1 (TCE_p = 0 <=> KS = 0)", "theorem", "Eq. (5)/(9)-(10): TCE_p(f) = 0 iff "
      "MMCE(f) = 0 iff KS(f) = 0.",
      ["003.thm3.1.tce0_iff_mmce0_iff_ks0", "003.thm3.1.tce_ge_ks.definition"],
      note="holds with KS as the proof reads it and MMCE with a characteristic kernel (a "
           "constant or linear kernel fails: controls); with Def C.2 read literally the "
           "example of 003.thm3.1.tce_ge_ks.definition has TCE_1 = 0 and KS > 0"),
    v("Thm 3.1 (TCE_p = 0 => ECE = 0)", "theorem", "Eq. (5)/(11): zero TCE_p implies zero binned "
      "ECE, not conversely.",
      ["003.thm3.1.tce0_iff_mmce0_iff_ks0", "003.thm3.1.ece0_not_tce0"]),
    v("Thm 3.1 (BS <= 2)", "theorem", "Eq. (6)/(12): 2 >= BS(f).", ["003.thm3.1.brier_le_2"]),
    v("Thm 3.1 (BS >= CE_2^2)", "theorem", "Eq. (12): BS(f) >= CE_2(f)^2.",
      ["003.thm3.1.brier_ge_ce2"]),
    v("Thm 3.1 (norm order)", "theorem", "Eq. (13): n^(1/p - 1/q) CE_q(f) >= CE_p(f) for "
      "p <= q.", ["003.thm3.1.ce_norm_order"]),
    v("Thm 3.1 (sqrt(BS) >= CE_p)", "theorem", "Eq. (6): n^(1/p - 1/2) sqrt(BS(f)) >= CE_p(f) "
      "for 1 <= p <= 2.", ["003.thm3.1.sqrt_brier_ge_ce_p"]),
    v("Thm 3.1 (CE_p >= CWCE_p)", "theorem", "Eq. (15): CE_p(f) >= CWCE_p(f).",
      ["003.thm3.1.ce_ge_cwce"]),
    x("Thm 3.1 (CWCE_p >= TCE_p)", "theorem", "Eq. (16): CWCE_p(f) >= TCE_p(f).",
      ["003.thm3.1.cwce_ge_tce", "003.thm3.1.cwce_ge_tce.proof_reading"],
      note="fails for TCE_p of Def C.1; holds when read as the proof's step (ii) reads it"),
    v("Thm 3.1 (TCE_p >= TCE_1)", "theorem", "Eq. (17): TCE_p(f) >= TCE_1(f).",
      ["003.thm3.1.tce_p_ge_tce_1"]),
    x("Thm 3.1 (TCE_1 >= KS)", "theorem", "Eq. (18): TCE_1(f) >= KS(f).",
      ["003.thm3.1.tce_ge_ks", "003.thm3.1.tce_ge_ks.definition"],
      note="holds with KS as the proof reads it, fails with Def C.2 read literally"),
    v("Thm 3.1 (TCE_1 >= ECE)", "theorem", "Eq. (19): TCE_1(f) >= ECE(f) for equal-width "
      "binnings.", ["003.thm3.1.tce_ge_ece"]),
    x("Thm 3.1 (TCE_1 >= c MMCE)", "theorem", "Eq. (6): TCE_1(f) >= c MMCE(f), "
      "c = sqrt(max_r k(r, r)).", ["003.thm3.1.tce_ge_c_mmce", "003.thm3.1.mmce_le_c_tce"],
      note="the constant belongs on the other side: c TCE_1 >= MMCE holds"),
    v("Thm 3.1 proof (eq. (14))", "equation", "CE_p is the same whether the vector p-norm or the "
      "L^p norm is taken first.", ["003.thm3.1.eq14"],
      note="not with mixed exponents once k >= 3 (the control)"),
    v("Thm 3.1 proof (ECE vs MMCE)", "conclusion", "Since ECE = 0 does not imply MMCE = 0, "
      "ECE >= c MMCE fails.", ["003.thm3.1.ece0_not_mmce0"],
      note="for a characteristic kernel (Laplacian); with a constant kernel ECE = 0 gives "
           "MMCE = 0 (the control)"),
    v("App. C (CWCE_p <= 2^(1/p))", "remark", "CWCE_p(f) <= 2^(1/p) (after Def C.1).",
      ["003.thm3.1.cwce_le_2"]),
    x("Prop 3.2", "proposition", "There are distributions where MMCE, KS, ECE, TCE_p and CWCE_p "
      "are all zero yet CE_2(f) >= 1 - 1/n - eps.", ["003.prop3.2", "003.prop3.2.binary"],
      note="false for n = 2 (CWCE_p = CE_p there); exact instances with eps = 0 for n = 3, 4, 5"),
    x("Prop D.2", "proposition", "t^f (top entry replaced by ACC(f)) has zero MMCE, KS, ECE and "
      "TCE_p and keeps the accuracy, yet is not calibrated in general.",
      ["003.propD.2", "003.propD.2.all_models", "003.propD.2.ks_definition",
       "003.propD.2.held_out"],
      note="exact on finite populations for MMCE, top-label KS, ECE, TCE_1, TCE_2, accuracy and "
           "'not calibrated', under the proof's assumption ACC(f) > 1/k (false without it, "
           "although the statement says 'for all models': erratum); KS "
           "as Def C.2 defines it is not zero (erratum); on a held-out split of the MNIST-5k "
           "suite the errors are sampling noise",
      code=["calnotes.theory.population.accuracy_preserving_transform",
            "calnotes.recalibrate.AccuracyPreservingTransform"]),
    x("Prop 3.3", "proposition", "E[ECE_hat_(n)] ~ mu_(n) >= ECE, d mu/dn < 0, d2 mu/dn2 > 0 and "
      "d2 mu/(dn dECE) > 0 (folded normal).",
      ["003.prop3.3.approximation", "003.prop3.3.monotone", "003.prop3.3.convex",
       "003.prop3.3.cross", "003.prop3.3.cross.calibrated_bin",
       "003.prop3.3.printed_derivatives", "003.prop3.3.estimator_law",
       "003.eq25.ece_estimator"],
      note="the approximation against the exact binomial expectation (one confidence value per "
           "bin; the binomial law itself against the estimator enumerated); the shape inequalities through the derivatives' closed forms (central "
           "differences, n in [2, 1e5]); the cross-derivative is 0 through a calibrated bin "
           "(mu_i = 0, where eq. (34) vanishes), not > 0 as printed (erratum), and the proof's "
           "closed forms (31)-(33) lack the factor dn_j/dn = p_j (erratum; signs unaffected); "
           "mu_(n) >= ECE (Jensen, eq. (30)) is not registered separately; the estimator "
           "eq. (25) itself is the library's confidence ECE, recomputed from the text (its bins "
           "are closed on the right, the library's on the left: they differ only on the edges)",
      code=["calnotes.core.expectation.folded_normal_ece_bias"]),
    v("Lemma 4.1", "lemma", "Expected score = generalized entropy of P_Y - sharpness + "
      "calibration, for every proper score.", ["003.lemma4.1", "003.lemma4.1.symbolic"]),
    v("Thm 4.3", "theorem", "U_S(f) = E[S(f(X), Y)] - inf g_S >= CE_S(f), and U_S - CE_S -> 0 "
      "as ACC(f) -> 1.", ["003.thm4.3.upper_bound", "003.thm4.3.accuracy_limit"],
      code=["calnotes.theory.estimators.calibration_upper_bound"]),
    v("Prop 4.5", "proposition", "For injective h, U_S(h o f) - U_S(f) = CE_S(h o f) - CE_S(f); "
      "hence the same order and the same derivative in h.",
      ["003.prop4.5", "003.prop4.5.injectivity"],
      note="the identity (and that injectivity is needed) is checked; the derivative form, "
           "eq. (39), is not registered separately"),
    v("Lemma E.1", "cited result", "P(Y | P(Y | X)) = P(Y | X).", ["003.lemmaE.1"],
      note="exactly on finite distributions, for h = id and h = f of Vaicenavicius et al. "
           "(2019, Prop 1)", code=["calnotes.theory.population.conditional_expectation"]),
    x("App. E.1.1", "conclusion", "Binary t^f(p) = P(Y = 1 | f(X) < 0.5) or P(Y = 1 | f(X) >= "
      "0.5) is calibrated and keeps the accuracy.",
      ["003.appE.1.binary", "003.appE.1.binary.accuracy"],
      note="calibrated: holds; the accuracy is kept iff P(Y = 1 | f < 0.5) <= 1/2 <= "
           "P(Y = 1 | f >= 0.5), not whenever the first is below the second as printed"),
    v("App. E.1.2", "conclusion", "t^f(p) = P(Y | r o f(X) = r(p)) is calibrated, keeps the "
      "accuracy when each predicted label is its group's most likely outcome, and lowers "
      "sharpness.", ["003.appE.1"]),
    v("Prop E.2", "proposition", "SHARP_S(f) >= SHARP_S(m o f) for every map m of the "
      "predictions.", ["003.propE.2", "003.appE.1"]),
    v("Def F.3", "definition", "A U-score is proper if comparing Q with itself gives the best "
      "expected value; strictly proper if only then.",
      ["003.appF.proper", "003.appF.not_strictly_proper"],
      note="for the SKCE U-score of eq. (52)", code=["calnotes.theory.population.skce"]),
    v("Def F.4", "definition", "U-score entropy g(Q_1..Q_r) = s(Q_1..Q_r, Q_1..Q_r).",
      ["003.appF.calibration_term"],
      note="for the SKCE U-score (g_S = 0), computed inside the claim's check"),
    v("Def F.5", "definition", "U-divergence d_S = s_S(P, Q) - g_S(Q).",
      ["003.appF.no_sharpness", "003.appF.calibration_term"],
      note="for the SKCE U-score, computed inside the claims' checks"),
    v("App. F (eq. (50))", "equation", "For a proper U-score, expected score = entropy + "
      "calibration - sharpness.", ["003.appF.calibration_term", "003.appF.no_sharpness"],
      note="checked for the SKCE U-score, whose entropy and sharpness terms vanish"),
    v("App. F (eqs. (52)-(55))", "example", "S = (P1 - e_y1)^T k(P1, P2) (P2 - e_y2) has g_S = 0, "
      "its calibration term is the SKCE; proper but not strictly proper, and blind to sharpness.",
      ["003.appF.calibration_term", "003.appF.proper", "003.appF.not_strictly_proper",
       "003.appF.no_sharpness"], code=["calnotes.theory.population.skce"]),
    v("App. F.1", "conclusion", "The U-statistic of a U-score is the unbiased minimum-variance "
      "estimator of its expectation.", ["003.appF.u_statistic"],
      note="unbiasedness is checked for the SKCE (all pairs and linear blocks); minimum "
           "variance is not", code=["calnotes.theory.skce.skce_unbiased"]),
    v("App. F (strictly proper U-scores)", "conclusion", "For a strictly proper U-score, CE_S is "
      "zero iff f is calibrated.", ["003.appF.strictly_proper"],
      note="for one strictly proper U-score (r = 2: two Brier terms plus the SKCE kernel "
           "term), computed by enumeration inside the claim's check"),
    v("App. G.1", "conclusion", "Logistic-normal predictions (100 classes, inverse-Wishart scale "
      "I/0.01) reach about 87.6% accuracy, and labels drawn from them are calibrated.",
      ["003.appG.1.accuracy", "003.appG.1.calibrated"],
      code=["calnotes.data.simulate_logistic_normal"]),
    n("App. G.3", "conclusion", "sqrt(BS) is a stable upper bound of CE_2 across the logit sets; "
      "the other estimators are lower bounds.",
      reason="the logit sets of Kull et al. and Rahimi et al. are not shipped; the bound itself "
             "is Thm 3.1 (sqrt(BS) >= CE_p), which is checked"),
    v("App. G.4", "conclusion", "Only the Brier score estimates the CE_2^2 improvement of an "
      "injective recalibration without bias; other estimators are sensitive to the test size.",
      ["003.appG.4.brier_unbiased", "003.appG.4.binned_biased"],
      note="on the App. G.1 simulator, against the binned estimator only (not the KDE ones)"),
    n("App. G.5", "conclusion", "In variance regression (Friedman 1, Residential Building) "
      "recalibration with DSS corrects variance overfitting, which the SKCE misses.",
      reason="regression with mixture density networks is outside the book's classification "
             "scope"),
)

# ------------------------------------------------------------------------------------- 004
v, x, n, il, fd = _maker("004")
_MRR_TABLE = ("Table {n} (App. F): Table 1 recreated with {what}: accuracy, ECE, ACE, SmoothECE, "
              "NLL and Brier of baseline, TS, HB, IR and MRR.")
_MRR_CLAIMS = ["004.tables.mrr_mse", "004.tables.mrr_nll", "004.tables.mrr_single_value",
               "004.tables.accuracy_kept", "004.tables.loss_lower_bounds"]
_MRR_NOTE = ("the MRR row's NLL and MSE against its own accuracy and ECE, its ECE = ACE = "
             "SmoothECE, the accuracy kept by TS and MRR; the loss lower bounds on every row only "
             "illustrate (slack of 2.7x or more); the experiment ({data}) is not rerun offline")
_P004 = (
    il("Eq. (2.3)", "definition", "ECE_pi(c, h, g) = E|P(Y = c(X) | h(X) = p) - p| (L^q: the "
      "q-th power).", ["004.sec3.mrr_zero_ece", "004.sec3.mrr_ece_is_accuracy_gap"],
      code=["calnotes.theory.population.confidence_calibration_error", "calnotes.core.measures.tce"]),
    v("Sec. 3 (constant predictor)", "conclusion", "The constant g(X) = pi_Y is fully calibrated.",
      ["003.thm3.1.ce0_not_bs0"], note="checked as paper 003's example of the same fact"),
    il("Eq. (3.1)", "equation", "MRR (confidence := calibration-split accuracy) has ECE 0: "
      "P(Y = c(X) | h(X)) = P(Y = c(X)) = h(X).",
      ["004.sec3.mrr_zero_ece", "004.sec3.mrr_ece_is_accuracy_gap"],
      note="exactly 0 on the split it is fitted on; on a test split its ECE is the accuracy gap "
           "(identities true by construction: illustrations)",
      code=["calnotes.recalibrate.MeanReplacement"]),
    il("Sec. 3 (accuracy kept)", "conclusion", "MRR does not change the predicted class, so the "
      "test accuracy is unchanged.", ["004.sec3.accuracy_kept"],
      note="true by construction (TS and MRR cannot move the arg max): an illustration"),
    fd("Sec. 3 (MRR wins ECE)", "conclusion", "MRR dominates all pure calibration metrics "
       "(Table 1), and the results are not sensitive to the choice of model (App. F).",
       ["004.sec3.mrr_lowest_ece"],
       note="true of the printed tables; on the MNIST-5k suite MRR has the lowest ECE for 17 of "
            "26 models (a finding on our data, not an erratum)"),
    fd("Sec. 4 (NLL or MSE detects MRR)", "conclusion", "Either NLL or MSE alone would have "
       "detected the trivial behaviour of MRR.", ["004.sec3.proper_scores_detect_mrr"],
       note="holds on every model of the MNIST-5k suite"),
    v("Table 1", "table", "ViT on ImageNet-1K-Val: accuracy, ECE, ACE, SmoothECE, NLL and Brier "
      "of baseline, TS, HB, IR and MRR.", _MRR_CLAIMS,
      note=_MRR_NOTE.format(data="ViT on ImageNet-1K")),
    il("Remark 3.1", "remark", "Trivial calibration such as MRR is also detectable with ROC-AUC "
      "applied to the confidence calibration problem.", ["004.remark3.1.roc_auc"],
      note="MRR's AUC is exactly 1/2 on every model of the MNIST-5k suite, true by construction "
           "(one confidence value); temperature scaling's is not (the control)"),
    v("Eq. (4.1)", "definition", "Bregman divergence d_phi(x, y) = phi(x) - phi(y) - "
      "grad phi(y)^T (x - y); KL for phi = sum x log x.", ["004.sec4.bregman_examples"],
      code=["calnotes.core.scores.bregman_divergence"]),
    v("Lemma 4.1", "lemma", "E[d_phi(Z, X)] = sharpness gap E[phi(Z)] - E[phi(E[Z | X])] + "
      "calibration error E[d_phi(E[Z | X], X)].", ["004.lemma4.1"],
      code=["calnotes.theory.population.bregman_decomposition"]),
    v("Prop 4.2", "proposition", "sigma(g1(X)) in sigma(g2(X)) implies E[phi(E[pi_{Y|X} | g1])] "
      "<= E[phi(E[pi_{Y|X} | g2])].", ["004.prop4.2"]),
    v("Prop 4.3", "proposition", "Every calibrated g has E[d_phi(pi_{Y|X}, g(X))] <= "
      "E[d_phi(pi_{Y|X}, pi_Y)].", ["004.prop4.3"]),
    v("Prop 4.4", "proposition", "Among the L^q ECEs only the L^2 ECE is induced by a Bregman "
      "divergence.", ["004.prop4.4"]),
    v("Prop 4.5", "proposition", "The always-wrong predictor has confidence loss O(1/k) but full "
      "loss Omega(1).", ["004.prop4.5.confidence_loss", "004.prop4.5.full_loss"]),
    v("Lemma 4.6", "lemma", "If d_phi(x, y) >= d_varphi(x_i, y_i) for all i, then "
      "E[d_phi(E[pi_{Y|X} | g], g) | h] >= d_varphi(E[1{Y = c} | h], h).",
      ["004.lemma4.6", "004.lemma4.6.condition_matters", "004.lemma4.6.sharp_constant"],
      code=["calnotes.theory.population.confidence_calibration_error"]),
    v("Cor 4.7", "corollary", "Inequality (4.6) holds for the KL divergence and the logistic "
      "loss.", ["004.lemma4.6", "004.cor4.7.integrated"]),
    v("Eq. (4.7)", "definition", "Pointwise sharpness gap rho(p) = E[d_phi(pi_{Y|X}, g) | h = p] "
      "- d_varphi(E[1{Y = c} | h = p], p).", ["004.prop4.8", "004.sec5.sharpness_gaps"],
      code=["calnotes.theory.sharpness.pointwise_sharpness_gap",
            "calnotes.theory.sharpness.calibration_sharpness"]),
    v("Prop 4.8", "proposition", "Under Lemma 4.6's condition rho is nonnegative.",
      ["004.prop4.8", "004.prop4.8.condition_matters"]),
    v("Eq. (4.8)", "definition", "Nadaraya-Watson regression m_sigma(x) = sum K_sigma(x - x_i) "
      "y_i / sum K_sigma(x - x_i).", ["004.thmC.4.rate", "004.thmC.4.consistency"],
      code=["calnotes.core.kernel.nadaraya_watson"]),
    v("Thm 4.9", "theorem", "The kernel plug-in estimate of the confidence calibration error is "
      "consistent under conditions on K, sigma_n and h(X).",
      ["004.thmC.4.rate", "004.thmC.4.consistency"],
      note="see Thm C.4"),
    il("Thm C.3", "cited result", "Devroye (1978): uniform a.s. convergence of Nadaraya-Watson "
      "regression if sigma_n -> 0 and n sigma_n^(2d)/log n -> infinity.", ["004.thmC.3.uniform"],
      note="a falling sup-error on one exact smooth regression (d = 1) and one bandwidth "
           "sequence; an illustration: a bandwidth fixed at 0.1 (control) does not converge, "
           "but a bandwidth held at its value of the smallest n falls as fast over feasible n",
      code=["calnotes.core.kernel.nadaraya_watson"]),
    v("Thm C.4", "theorem", "The plug-in (C.3) converges in probability to the confidence "
      "calibration error when sigma_n -> 0 and n sigma_n^2/log n -> infinity.",
      ["004.thmC.4.rate", "004.thmC.4.consistency"],
      note="a falling root-mean-square error on one simulated distribution and one bandwidth "
           "sequence, and no bias beyond 3.5% at n = 40,000 (an 8% bias is detected), not a "
           "proof of convergence",
      code=["calnotes.theory.sharpness.confidence_calibration_plugin"]),
    fd("Sec. 5.1 (sharpness gaps)", "conclusion", "The diagrams reveal MRR and histogram binning: "
       "their few confidence values incur large sharpness gaps.", ["004.sec5.sharpness_gaps"],
       note="holds on the MNIST-5k suite's largest network (margin 4.3 bootstrap SDs at the "
            "default bandwidth 0.025), not the paper's ViT"),
    n("Sec. 5.1 (TS and IR)", "conclusion", "TS and IR skew the confidences towards higher values "
      "and buy their calibration with larger sharpness gaps.",
      reason="a statement about the paper's ViT-ImageNet predictions, not available offline; the "
             "sharpness-diagram chapter draws the MNIST-5k analogue without asserting it"),
    fd("Sec. 5.2", "conclusion", "HB is worse calibrated than IR, but not where it has no density; "
       "IR generalizes better (Brier) through smaller sharpness gaps.",
       ["004.sec5.2.ir_beats_hb"],
       note="on the MNIST-5k suite IR has the lower test ECE and Brier on most models; the "
            "'where it has no density' and sharpness-gap parts are drawn, not asserted"),
    fd("App. D", "conclusion", "Averaging kernel estimates over 10 random subsamples of 5,000 "
       "points loses virtually nothing.", ["004.appD.subsampling"],
       note="holds on a simulator at App. D's sizes: the subsample average is off the full "
            "estimate by about a tenth of the full estimate's own error",
       code=["calnotes.theory.sharpness.calibration_sharpness"]),
    v("App. E (eq. (E.1))", "equation", "E d(Y, g) = irreducible E d(Y, Q) + grouping "
      "E d(Q, C) + calibration E d(C, g).", ["004.appE.grouping_loss"],
      code=["calnotes.theory.sharpness.grouping_loss_decomposition"]),
    v("Table 2", "table", _MRR_TABLE.format(n=2, what="ResNet-50 (ImageNet)"), _MRR_CLAIMS,
      note=_MRR_NOTE.format(data="ImageNet")),
    v("Table 3", "table", _MRR_TABLE.format(n=3, what="EfficientNet (ImageNet)"), _MRR_CLAIMS,
      note=_MRR_NOTE.format(data="ImageNet")),
    v("Table 4", "table", _MRR_TABLE.format(n=4, what="ConvNeXt (ImageNet)"), _MRR_CLAIMS,
      note=_MRR_NOTE.format(data="ImageNet")),
    v("Table 5", "table", _MRR_TABLE.format(n=5, what="ResNet-32 (CIFAR-10)"), _MRR_CLAIMS,
      note=_MRR_NOTE.format(data="CIFAR-10")),
    v("Table 6", "table", _MRR_TABLE.format(n=6, what="ResNet-32 (CIFAR-100)"), _MRR_CLAIMS,
      note=_MRR_NOTE.format(data="CIFAR-100")),
    _printed_only(v("App. F.2", "conclusion", "Calibration suffers little from CIFAR-10 to "
      "CIFAR-100, but sharpness and hence Brier are much worse.",
      ["004.appF.2.sharpness_not_calibration"],
      note="from the printed Tables 5-6: on every method the sharpness gap grows by at least "
           "1.10 times what the confidence calibration error can (HB, the tightest); "
           + _PRINTED_ONLY.format(data="CIFAR-10 and CIFAR-100"))),
    n("App. G", "conclusion", "SmoothECE diagrams catch MRR but make HB and IR hard to compare: "
      "the sharpness band is what separates them.",
      reason="qualitative; the sharpness-diagram chapter draws the SmoothECE analogue without a "
             "claim"),
    fd("App. H (ranking stable)", "conclusion", "For bandwidths in [0.01, 0.05], and for the "
       "Gaussian and Epanechnikov kernels, the ranking of the recalibration methods does not "
       "change.", ["004.appH.ranking_stable"],
       note="inconclusive on the MNIST-5k suite: HB and IR, and the baseline and HB, trade "
            "places, but every reversal is within one bootstrap SD of a tie (a finding on our "
            "data, not an erratum)"),
    fd("App. H.1 (over-smoothing)", "conclusion", "Bandwidths above 0.1 over-smooth and can "
       "change the ranking of calibration error.", ["004.appH.over_smoothing"],
       note="holds on the MNIST-5k suite: at sigma = 0.25 the baseline ranks above TS, the "
            "reverse of sigma = 0.05 (2.3 bootstrap SDs)"),
)

del v, x, n

_ENTRIES: tuple = _P000 + _P001 + _P003 + _P004


def entries(paper: str | None = None) -> tuple:
    """The inventory, in the papers' order; only ``paper``'s entries if given.

    Parameters
    ----------
    paper : str, optional
        ``"000"``, ``"001"``, ``"003"`` or ``"004"``.

    Returns
    -------
    tuple of Entry

    Examples
    --------
    >>> from calnotes.book.claims import inventory
    >>> thm = [e for e in inventory.entries("000") if e.label == "Thm 2.6"][0]
    >>> thm.status, thm.claims[0]
    ('verified', '000.thm2.6.enumeration')
    """
    if paper is None:
        return _ENTRIES
    if paper not in PAPERS:
        raise ValueError(f"paper: expected one of {sorted(PAPERS)}, got {paper!r}")
    return tuple(e for e in _ENTRIES if e.paper == paper)


def find(paper: str, label: str) -> Entry:
    """The entry of ``paper`` labelled ``label``.

    Examples
    --------
    >>> from calnotes.book.claims import inventory
    >>> inventory.find("003", "Thm 3.1 (CWCE_p >= TCE_p)").status
    'erratum'
    """
    for e in entries(paper):
        if e.label == label:
            return e
    raise KeyError(f"no entry {label!r} for paper {paper}; labels: "
                   f"{[e.label for e in entries(paper)]}")


def coverage(items=None) -> dict:
    """Per-paper counts of the five statuses (the ledger's summary).

    Parameters
    ----------
    items : iterable of Entry, optional
        Defaults to the whole inventory.

    Returns
    -------
    dict
        Paper number -> :class:`Coverage`, in the order of :data:`PAPERS`.

    Examples
    --------
    >>> from calnotes.book.claims import inventory
    >>> row = inventory.coverage()["001"]
    >>> (row.results == row.verified + row.consistent + row.illustrations + row.errata
    ...  + row.findings + row.not_checked == len(inventory.entries("001")))
    True
    """
    items = tuple(_ENTRIES if items is None else items)
    out = {}
    for paper, title in PAPERS.items():
        mine = [e for e in items if e.paper == paper]
        out[paper] = Coverage(
            paper=paper, title=title, results=len(mine),
            verified=sum(e.status == VERIFIED for e in mine),
            errata=sum(e.status == ERRATUM for e in mine),
            not_checked=sum(e.status == NOT_CHECKED for e in mine),
            illustrations=sum(e.status == ILLUSTRATION for e in mine),
            findings=sum(e.status == FINDING for e in mine),
            consistent=sum(e.status == CONSISTENT for e in mine))
    return out


def errata_items(claims=None) -> frozenset:
    """The items of the errata page: the ids of the claims registered as disagreeing.

    The errata page (``book/appendix/errata.md``) lists every claim with
    ``expect="disagrees"`` under a heading made of its id; the id is the key that an
    ``"erratum"`` entry points to.

    Examples
    --------
    >>> from calnotes.book.claims import inventory
    >>> "003.thm3.1.cwce_ge_tce" in inventory.errata_items()
    True
    """
    claims = all_claims() if claims is None else claims
    return frozenset(c.id for c in claims if c.expect == "disagrees")


def implied_status(entry: Entry, claims=None) -> str:
    """The status the registry implies for ``entry`` (what its declared status must be).

    ``"not checked yet"`` without claims, ``"erratum"`` if any of its claims is an errata item,
    else ``"verified"`` if any is verified, else ``"illustration"`` if any illustrates, else
    ``"finding"``. Unknown claim ids raise ``KeyError``.

    Examples
    --------
    >>> from calnotes.book.claims import inventory
    >>> inventory.implied_status(inventory.find("004", "Prop 4.8"))
    'verified'
    """
    registry = {c.id: c for c in (all_claims() if claims is None else claims)}
    if not entry.claims:
        return NOT_CHECKED
    return _printed(entry, _combine([registry[i].expect for i in entry.claims]))


def _printed(entry: Entry, status: str) -> str:
    """``"consistent (not rerun)"`` instead of verified for an entry whose claims only compare
    printed numbers (:attr:`Entry.printed_only`)."""
    return CONSISTENT if status == VERIFIED and entry.printed_only else status


_STATUS_OF_EXPECT = {"agrees": VERIFIED, "illustrates": ILLUSTRATION, "disagrees": ERRATUM,
                     "finding": FINDING}


def _combine(expects) -> str:
    statuses = {_STATUS_OF_EXPECT[e] for e in expects}
    for status in (ERRATUM, VERIFIED, ILLUSTRATION, FINDING):
        if status in statuses:
            return status
    return NOT_CHECKED


def status_from_results(entry: Entry, results) -> str:
    """The status a run of the claims gives ``entry``.

    Parameters
    ----------
    entry : Entry
    results : mapping
        Claim id -> :class:`~calnotes.book.claims._registry.Result` (e.g. from ``claims.ledger``).

    Returns
    -------
    str
        ``"FAILED"`` if a claim did not come out as registered, else the status
        :func:`implied_status` gives (``"not checked yet"`` without claims).

    Examples
    --------
    >>> from calnotes.book.claims import inventory, run_claim
    >>> e = inventory.find("004", "Prop 4.4")
    >>> inventory.status_from_results(e, {i: run_claim(i) for i in e.claims})
    'verified'
    """
    if not entry.claims:
        return NOT_CHECKED
    statuses = [results[i].status for i in entry.claims]
    if "FAILED" in statuses:
        return "FAILED"
    return _printed(entry, _combine(results[i].claim.expect for i in entry.claims))


def _resolves(dotted: str) -> bool:
    """Does ``dotted`` name an object: the longest importable module prefix, then attributes?"""
    parts = dotted.split(".")
    for split in range(len(parts) - 1, 0, -1):
        module, attrs = ".".join(parts[:split]), parts[split:]
        try:
            obj = importlib.import_module(module)
        except ImportError:
            continue
        try:
            for a in attrs:
                obj = getattr(obj, a)
        except AttributeError:
            return False
        return True
    return False


def problems(items=None, claims=None) -> list:
    """Everything wrong with the inventory against the registry; empty when consistent.

    Checked: every registered claim checks some entry; every claim an entry names is
    registered; labels are unique within a paper; every ``"not checked yet"`` entry has a
    reason and no claims, and only those have a reason; the declared status is the one the
    registry implies (:func:`implied_status`); every ``"erratum"`` entry names an errata-page
    item and every errata-page item belongs to an ``"erratum"`` entry; every ``code`` name
    resolves to a ``calnotes`` object.

    Parameters
    ----------
    items : iterable of Entry, optional
        Defaults to the whole inventory.
    claims : iterable of Claim, optional
        Defaults to the registry.

    Returns
    -------
    list of str

    Examples
    --------
    >>> from calnotes.book.claims import inventory
    >>> inventory.problems()
    []
    >>> bad = inventory.Entry("000", "Thm 9.9", "theorem", "-", ["000.nope"], "verified")
    >>> inventory.problems(inventory.entries() + (bad,))
    ["000 Thm 9.9: claim '000.nope' is not registered"]
    """
    items = tuple(_ENTRIES if items is None else items)
    claims = tuple(all_claims() if claims is None else claims)
    registry = {c.id: c for c in claims}
    errata = errata_items(claims)
    out = []
    seen = set()
    named = set()
    erratum_claims = set()
    for e in items:
        where = f"{e.paper} {e.label}"
        if (e.paper, e.label) in seen:
            out.append(f"{where}: label appears twice")
        seen.add((e.paper, e.label))
        if not e.statement.strip():
            out.append(f"{where}: empty statement")
        if len(set(e.claims)) != len(e.claims):
            out.append(f"{where}: a claim is listed twice")
        unknown = [i for i in e.claims if i not in registry]
        out.extend(f"{where}: claim {i!r} is not registered" for i in unknown)
        named.update(e.claims)
        if e.status == NOT_CHECKED:
            if not e.reason.strip():
                out.append(f"{where}: not checked yet, but no reason given")
            if e.claims:
                out.append(f"{where}: not checked yet, but lists claims {list(e.claims)}")
        elif e.reason:
            out.append(f"{where}: a reason is given although the status is {e.status!r}")
        if not unknown:
            implied = implied_status(e, claims)
            if implied != e.status:
                out.append(f"{where}: declared {e.status!r}, the registry implies {implied!r}")
        if e.status == ERRATUM:
            items_here = [i for i in e.claims if i in errata]
            if not items_here:
                out.append(f"{where}: erratum without an errata-page item")
            erratum_claims.update(items_here)
        out.extend(f"{where}: code {name!r} does not resolve" for name in e.code
                   if not (name.startswith("calnotes.") and _resolves(name)))
    out.extend(f"registered claim {i!r} is in no inventory entry"
               for i in sorted(set(registry) - named))
    out.extend(f"errata item {i!r} belongs to no erratum entry"
               for i in sorted(errata - erratum_claims))
    return out
