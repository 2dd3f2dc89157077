r"""Reader's notes on the errata, and on the four papers: what the findings pages render.

The claims registry (:mod:`calnotes.book.claims._registry`) holds every erratum as a claim registered
with ``expect="disagrees"``, its plain-text ``evidence`` and one-line ``correction``. This module
adds what a reader needs to see at a glance, kept next to the claims so that the pages
(``book/appendix/papers_hold.md``, ``book/appendix/errata.md``) only render it:

:data:`NOTES`
    Erratum claim id -> :class:`ErratumNote`: a short title led by the paper's own result number,
    the paper's statement and what is true instead as Markdown with inline TeX (``$...$``, for
    MyST's dollarmath; no display math, so that nothing is wider than the column), and a
    severity from :data:`SEVERITIES` with one line of why.
:data:`PAPER_NOTES`
    Paper number -> :class:`PaperNote`: short name, full title, authors, venue, and the main
    verified results in a sentence or two, each with the verified claims that back it.

:func:`problems` checks both against the registry (every erratum claim has a note and every note
is an erratum claim; severities on the scale; balanced ``$`` and braces; every paper of the
inventory has a note whose claims are registered as verified); ``tests/test_errata_notes.py``
and the pages fail unless it is empty.

The severity scale
------------------
From least to most serious (:data:`SEVERITIES`, with :data:`SEVERITY_MEANING`):

``"typo or misprint"``
    A symbol, number or caption printed wrong; the paper's results do not rest on it (the
    intended statement is in the paper itself, or only one table entry is involved).
``"statement imprecise"``
    The statement holds under an extra condition (a regime, an assumption the proof makes, the
    reading of a definition that the proofs use) that the printed statement leaves out.
``"false as printed, conclusion unaffected"``
    False for the paper's own definitions, with no rescue in the text; what the paper goes on to
    conclude still holds, by another route or in a weaker form.
``"a conclusion of the paper is affected"``
    A conclusion the paper states (a table's conclusion, an experiment's summary), or a value it
    rests on, no longer holds as stated.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ._registry import PAPER_NAMES, all_claims

__all__ = ["SEVERITIES", "SEVERITY_MEANING", "ErratumNote", "PaperNote", "NOTES", "PAPER_NOTES",
           "anchor", "tex_problems", "problems"]
__all__ += ["FINDING_TITLES", "OUTCOME_WORDS", "finding_anchor", "finding_problems", "readable",
            "markdown_text", "measured_sentence", "erratum_entry", "errata_summary",
            "finding_entry", "findings_summary"]

TYPO = "typo or misprint"
IMPRECISE = "statement imprecise"
FALSE_UNAFFECTED = "false as printed, conclusion unaffected"
CONCLUSION = "a conclusion of the paper is affected"

SEVERITIES = (TYPO, IMPRECISE, FALSE_UNAFFECTED, CONCLUSION)
"""The severity scale, from least to most serious."""

SEVERITY_MEANING = {
    TYPO: "a symbol, number or caption printed wrong; no result of the paper rests on it",
    IMPRECISE: "holds under an extra condition (a regime, the proof's assumption, the proofs' "
               "reading of a definition) that the printed statement leaves out",
    FALSE_UNAFFECTED: "false for the paper's own definitions; what the paper concludes from it "
                      "still holds",
    CONCLUSION: "a conclusion the paper states, or a value it rests on, no longer holds as "
                "stated",
}
"""Severity -> what it means, in one line (the pages show it)."""


@dataclass(frozen=True)
class ErratumNote:
    """How the pages show one erratum claim.

    Attributes
    ----------
    title : str
        Short title, led by the paper's result number (Markdown with inline TeX).
    printed : str
        What the paper states (Markdown with inline TeX ``$...$``).
    correction : str
        What is true instead (Markdown with inline TeX); the claim's plain-text ``correction``
        says the same in one line.
    severity : str
        One of :data:`SEVERITIES`.
    why : str
        Why this severity, in one line (Markdown with inline TeX).
    """

    title: str
    printed: str
    correction: str
    severity: str
    why: str


@dataclass(frozen=True)
class PaperNote:
    """One of the four papers, as the findings and notation pages name it.

    Attributes
    ----------
    short : str
        The book's short name (``"the truthfulness paper"``).
    title, authors, venue : str
        Full title, authors and where it appeared.
    cite : str
        Its key in ``book/references.bib``.
    holds : tuple of (str, tuple of str)
        The main verified results: a sentence (Markdown with inline TeX) and the ids of the
        verified claims that back it.
    """

    short: str
    title: str
    authors: str
    venue: str
    cite: str
    holds: tuple = ()


# TeX shorthands: the quantile-binned ECEs of paper 000 and the Table 1 expectations.
_L1CONF = r"\ell_1\text{-QECE}^{(\mathrm{conf})}"
_L1CW = r"\ell_1\text{-QECE}^{(\mathrm{classwise})}"
_L2CONF = r"\ell_2\text{-QECE}^{(\mathrm{conf})}"
_S2_F1 = r"$s^2 = \varepsilon_1(1-\varepsilon_1)\,m/n$"
_S2_F3 = r"$s^2 = (1-\frac1k)\frac1k\,m/n$"


def _cell(measure: str, f: str) -> str:
    return rf"$\mathbb E[{measure}_m(f_{f})]$"


NOTES = {
    "000.ex1.1.truthful_unbinned": ErratumNote(
        title=r"Example 1.1: the truthful predictor's ECE is $\Theta(1)$, not $O(1/n)$",
        printed=r"With the truth $p^*_i = i/n$, the truthful predictor has "
                r"$\mathrm{ECE} = O(1/n)$.",
        correction=r"All $n$ predictions are distinct, so "
                   r"$\mathrm{ECE} = \frac1n \sum_i \lvert p_i - y_i \rvert$ and "
                   r"$\mathbb E\,\mathrm{ECE} = \frac{n^2-1}{3n^2} \to \frac13$: "
                   r"it is $\Theta(1)$.",
        severity=FALSE_UNAFFECTED,
        why=r"The example's point, that the ECE is not truthful (the constant $\frac12$ "
            r"scores better), holds, and more strongly."),
    "000.table1.conclusion1": ErratumNote(
        title=r"Table 1, conclusion 1: $f_3$ does not beat $f_1$ under "
              rf"${_L1CW}$",
        printed=r"For $k \gg 1/\varepsilon_1$ the uninformative calibrated $f_3$ has a lower "
                r"expected error than the ground truth $f_1$ under "
                rf"${_L1CONF}$, ${_L1CW}$ and ${_L2CONF}$.",
        correction=rf"Under ${_L1CW}$, $f_3$ never beats $f_1$: its error is at least "
                   r"$\sqrt{k-1}$ times that of $f_1$ for every $k \ge 3$. The conclusion "
                   rf"holds for ${_L1CONF}$ and ${_L2CONF}$.",
        severity=CONCLUSION,
        why="One of the three measures named in a stated conclusion of the paper's main table "
            "does not behave as the conclusion says."),
    "000.table1.conclusion2": ErratumNote(
        title=rf"Table 1, conclusion 2: $f_4$ does not beat $f_1$ under ${_L1CW}$",
        printed=r"For $k \gg 1/\varepsilon_1$ and small $\varepsilon_3$ the miscalibrated "
                r"uninformative $f_4$ has a lower expected error than $f_1$ under "
                rf"${_L1CONF}$, ${_L1CW}$ and ${_L2CONF}$.",
        correction=rf"Under ${_L1CW}$, $f_4$ never beats $f_1$ (its error is at least that "
                   r"of $f_3$). The conclusion holds for the two confidence measures.",
        severity=CONCLUSION,
        why="As for conclusion 1: one of the three measures of a stated conclusion fails."),
    "000.table1.conclusion4": ErratumNote(
        title=rf"Table 1, conclusion 4: no flip of $f_2$ and $f_3$ under ${_L1CW}$",
        printed=r"Under each non-truthful measure, with $\varepsilon_1 \ll 1/k$ and "
                r"$\varepsilon_2 \sim 1/\sqrt n$, $f_2$ has a higher expected error than $f_3$ "
                r"for small $m$ and a lower one for large $m$.",
        correction=rf"The flip happens under ${_L1CONF}$ and ${_L2CONF}$; under ${_L1CW}$, "
                   r"$f_2$ is below $f_3$ at every $m$.",
        severity=CONCLUSION,
        why="A stated conclusion of the main table fails for one of its three measures."),
    "000.table1.f2.l1_conf": ErratumNote(
        title=r"Table 1, cell ($f_2$, $\ell_1$ conf): the sum is only an upper bound",
        printed=_cell(_L1CONF, 2) + r" $= \varepsilon_2 + \text{above}$, above being the "
                r"$f_1$ cell (App. D: a bias $\delta$ contributes $\delta$).",
        correction=r"To CLT order it is the folded-normal mean "
                   r"$\mathbb E\lvert N(\varepsilon_2, s^2)\rvert$, " + _S2_F1 + r": between "
                   r"$\max(\varepsilon_2, \text{above})$ and $\varepsilon_2 + \text{above}$, "
                   r"reaching the sum only when $\varepsilon_2 \gg s$.",
        severity=IMPRECISE,
        why=r"Exact when the bias dominates the sampling noise ($\varepsilon_2 \gg s$); too "
            r"large near $\varepsilon_2 \approx s$, the regime of conclusions 3 and 4."),
    "000.table1.f2.l1_cw": ErratumNote(
        title=r"Table 1, cell ($f_2$, $\ell_1$ class-wise): bias coefficient $2/k$, not $1/k$",
        printed=_cell(_L1CW, 2) + r" $= \varepsilon_2/k + \text{above}$, above being the "
                r"$f_1$ cell.",
        correction=r"To CLT order it is $\frac2k\,\mathbb E\lvert N(\varepsilon_2, s^2)\rvert$, "
                   + _S2_F1 + r": the bias coefficient is $2/k$ (as App. D.2 writes), and the "
                   r"sum is only an upper bound.",
        severity=FALSE_UNAFFECTED,
        why=r"Wrong even where the sum is exact (the table's $1/k$ against App. D.2's $2/k$); "
            r"conclusion 4 fails through the $f_3$ cell, not this one."),
    "000.table1.f3.l1_cw": ErratumNote(
        title=r"Table 1, cell ($f_3$, $\ell_1$ class-wise): a spurious factor $1/k$",
        printed=_cell(_L1CW, 3) + r" $= \Theta\bigl(\frac1k \sqrt{(1-\frac1k)\frac1k\,"
                r"\frac mn}\bigr)$.",
        correction=r"Every class column of $f_3$ is its confidence problem, so the class-wise "
                   r"value equals the confidence value, "
                   r"$\Theta\bigl(\sqrt{(1-\frac1k)\frac1k\,\frac mn}\bigr)$, without the "
                   r"factor $\frac1k$.",
        severity=CONCLUSION,
        why=r"The cell is too small by the factor $k$; with the true value, conclusions 1, 2 "
            r"and 4 fail under the $\ell_1$ class-wise measure."),
    "000.table1.f4.l1_conf": ErratumNote(
        title=r"Table 1, cell ($f_4$, $\ell_1$ conf): the sum is only an upper bound",
        printed=_cell(_L1CONF, 4) + r" $= (k-1)\varepsilon_3 + \text{above}$, above being the "
                r"$f_3$ cell.",
        correction=r"To CLT order it is $\mathbb E\lvert N((k-1)\varepsilon_3, s^2)\rvert$, "
                   + _S2_F3 + r": at most $(k-1)\varepsilon_3 + \text{above}$ (App. D.4's "
                   r"$+\,O(\sqrt{m/n})$ holds), not equal to it.",
        severity=IMPRECISE,
        why=r"Exact as an upper bound (as App. D.4 states it) and when "
            r"$(k-1)\varepsilon_3 \gg s$; only the table's equality is too strong."),
    "000.table1.f4.l1_cw": ErratumNote(
        title=r"Table 1, cell ($f_4$, $\ell_1$ class-wise): inherits the $f_3$ cell's "
              r"factor $1/k$",
        printed=_cell(_L1CW, 4) + r" $= 2(k-1)\varepsilon_3/k + \text{above}$, above being "
                r"the $f_3$ cell.",
        correction=r"It is $\frac1k\bigl[\mathbb E\lvert N((k-1)\varepsilon_3, s^2)\rvert + "
                   r"(k-1)\,\mathbb E\lvert N(\varepsilon_3, s^2)\rvert\bigr]$, " + _S2_F3 +
                   r": the $f_3$ part has the confidence size, and the sum is only an upper "
                   r"bound.",
        severity=CONCLUSION,
        why=r"Too small by up to the factor $k/2$; with the true value, conclusion 2 fails "
            r"under the $\ell_1$ class-wise measure."),
    "001.ex3.5.printed": ErratumNote(
        title=r"Example 3.5: a misplaced parenthesis in "
              r"$\mathrm{UC}(f, \mathcal U_{\mathrm{TCE}})$",
        printed=r"$\mathrm{UC}(f, \mathcal U_{\mathrm{TCE}}) = \sup_I \bigl\lvert \mathbb "
                r"E[Y_* - p_*\, \mathbb 1\{p_* \in I\}] \bigr\rvert$, and likewise for "
                r"$\mathcal U_{\mathrm{CWE}}$.",
        correction=r"$\mathrm{UC}(f, \mathcal U_{\mathrm{TCE}}) = \sup_I \bigl\lvert \mathbb "
                   r"E[(Y_* - p_*)\, \mathbb 1\{p_* \in I\}] \bigr\rvert$ (App. B.2), and "
                   r"$\mathrm{UC}(f, \mathcal U_{\mathrm{CWE}}) = \sup_{c, I} \bigl\lvert "
                   r"\mathbb E[(Y_c - f_c)\, \mathbb 1\{f_c \in I\}] \bigr\rvert$ with "
                   r"$Y_c = \mathbb 1\{Y = e_c\}$.",
        severity=TYPO,
        why="App. B.2 states the intended formula (the one the book checks); the printed one "
            "is used nowhere else."),
    "001.sec5.brier_improves": ErratumNote(
        title="Sec. 5: not every post-hoc method improves the Brier score",
        printed="In Table 1 (ViT on ImageNet), all post-hoc methods improve the Brier score "
                "and the calibration errors.",
        correction="In the paper's own Table 1, isotonic regression and vector scaling have a "
                   "larger Brier score than the uncalibrated model; Dirichlet calibration, "
                   "temperature scaling and patching improve it.",
        severity=CONCLUSION,
        why="A stated summary of the experiment, contradicted by its table for two of five "
            "methods; the comparison of the methods by utility calibration does not rest on "
            "it."),
    "001.table1.pm_caption": ErratumNote(
        title=r"Tables 1 and 7: the $\pm$ bands do not match the captions",
        printed=r"Table 1 shows mean $\pm$ 2 standard errors over 10 splits and Table 7 mean "
                r"$\pm$ std of the same experiment, so each band of Table 1 is "
                r"$2/\sqrt{10} \approx 0.632$ times the std of Table 7.",
        correction=r"Only the four post-hoc Brier bands fit $2/\sqrt{10}$; the other 16 "
                   r"precisely printed bands are $2/\sqrt5 \approx 0.894$ times the std (2 "
                   r"standard errors over 5 splits): a caption misstates the bands.",
        severity=TYPO,
        why="The means are unaffected; only the stated width of the uncertainty bands is in "
            "question."),
    "001.table6.dirichlet_topk_brier": ErratumNote(
        title=r"Table 6, Dirichlet row: $\mathrm{UC}(f, \mathcal U_{\mathrm{topK}})$ and the "
              r"Brier score cannot both be right",
        printed=r"Table 6 (ResNet on ImageNet) prints, for Dirichlet calibration, the Brier "
                r"score $66.6 \times 10^{-2}$ and "
                r"$\mathrm{UC}(f, \mathcal U_{\mathrm{topK}}) = 990.0 \times 10^{-3}$.",
        correction=r"Since $\mathrm{UC}(f, \mathcal U_{\mathrm{topK}}) \le \mathbb E[1 - "
                   r"f_Y(X)] \le \sqrt{\frac{C-1}{C}\,\mathrm{Brier}}$ for every predictor "
                   r"on the simplex, that Brier score allows at most $0.816$: no predictions "
                   r"give the printed pair.",
        severity=TYPO,
        why="A single table entry; every other row satisfies the bound."),
    "003.appE.1.binary.accuracy": ErratumNote(
        title=r"App. E.1.1: the condition for $t^f$ to keep the accuracy is too weak",
        printed=r"If $\Pr(Y = 1 \mid f(X) < \frac12) < \Pr(Y = 1 \mid f(X) \ge \frac12)$, "
                r"then $t^f \circ f$ has the same accuracy as $f$.",
        correction=r"$t^f$ keeps the accuracy iff "
                   r"$\Pr(Y = 1 \mid f < \frac12) \le \frac12 \le \Pr(Y = 1 \mid f \ge \frac12)$"
                   r": each group's majority label must be its predicted label, as App. E.1.2 "
                   r"requires.",
        severity=IMPRECISE,
        why="Holds under the stronger condition, which App. E.1.2 states for many classes."),
    "003.prop3.2.binary": ErratumNote(
        title="Prop 3.2: false for two classes",
        printed=r"For every $\varepsilon > 0$ and surjective $f$ with $n$ classes there is a "
                r"distribution on which $\mathrm{MMCE}$, $\mathrm{KS}$, $\mathrm{ECE}$, "
                r"$\mathrm{TCE}_p$ and $\mathrm{CWCE}_p$ vanish while "
                r"$\mathrm{CE}_2(f) \ge 1 - \frac1n - \varepsilon$.",
        correction=r"For $n = 2$, $\mathrm{CWCE}_p = \mathrm{CE}_p$, so no such distribution "
                   r"exists; for $n = 3, 4, 5$ exact instances exist, even with "
                   r"$\varepsilon = 0$.",
        severity=IMPRECISE,
        why=r"The proposition's point, that every common error can vanish on a miscalibrated "
            r"model, stands for the checked $n \ge 3$."),
    "003.propD.2.all_models": ErratumNote(
        title=r"Prop D.2: needs $\mathrm{ACC}(f) > 1/n$",
        printed=r"For all models $f$, $t^f \circ f$ has zero $\mathrm{MMCE}$, $\mathrm{KS}$, "
                r"$\mathrm{ECE}$ and $\mathrm{TCE}_p$, and "
                r"$\mathrm{ACC}(t^f \circ f) = \mathrm{ACC}(f)$.",
        correction=r"This holds for every model with $\mathrm{ACC}(f) > 1/n$; for "
                   r"$\mathrm{ACC}(f) \le 1/n$, $t^f$ can move the argmax and change the "
                   r"accuracy.",
        severity=IMPRECISE,
        why=r"The proof assumes $\mathrm{ACC}(f) > 1/n$ ('in every practical setting'); the "
            r"statement leaves it out."),
    "003.propD.2.ks_definition": ErratumNote(
        title=r"Prop D.2 with Def C.2: $\mathrm{KS}(t^f \circ f) = 0$ only for the proofs' KS",
        printed=r"$\mathrm{KS}(t^f \circ f) = 0$, with $\mathrm{KS}$ as Def C.2 defines it "
                r"(class-wise conditionals $\Pr(Y = k \mid f_k(X))$, weighted by "
                r"$\Pr(C = k)$).",
        correction=r"It holds for the top-label KS that the proofs use (eqs. (10), (18)); for "
                   r"the KS of Def C.2, $t^f \circ f$ has $\mathrm{KS} > 0$ in general.",
        severity=IMPRECISE,
        why=r"Def C.2 and the proofs define different KS; with the proofs' KS the statement "
            r"is verified."),
    "003.prop3.3.cross.calibrated_bin": ErratumNote(
        title=r"Prop 3.3: $\frac{d^2 \mu_{(n)}}{dn\, d\mathrm{ECE}} > 0$ fails at a "
              r"calibrated bin",
        printed=r"$\frac{d^2 \mu_{(n)}}{dn\, d\mathrm{ECE}} > 0$, through eq. (34)'s "
                r"$\frac{d\mu_i^2}{d\mathrm{ECE}} > 0$ for every bin $i$.",
        correction=r"Through a calibrated bin ($\mu_i = 0$) the derivative is $0$ (eq. (34) "
                   r"gives $\frac{d\mu_i^2}{d\mathrm{ECE}} = \frac{2\lvert\mu_i\rvert}{p_i} = 0$; "
                   r"measured below $10^{-5}$ of its value one $\sigma_i$ off); it is "
                   r"$\ge 0$, strict for $\mu_i \ne 0$.",
        severity=IMPRECISE,
        why=r"Holds for every miscalibrated bin (verified); the paper's reading, that worse "
            r"calibration makes the estimate less sensitive to $n$, stands."),
    "003.prop3.3.printed_derivatives": ErratumNote(
        title=r"Prop 3.3, proof: the derivatives lack $\frac{dn_j}{dn} = p_j$",
        printed=r"Eqs. (31)-(33) write the chain rule with $\frac{dn_j}{dn} = 1$.",
        correction=r"With $n_j = n p_j$, $\frac{dn_j}{dn} = p_j$: every term of eq. (31) and "
                   r"(33) lacks a factor $p_j$, every term of eq. (32) a factor $p_j^2$; the "
                   r"signs, and so the shape statements, are as printed (verified).",
        severity=FALSE_UNAFFECTED,
        why=r"The closed forms are off by factors $1/p_j$, but every term keeps its sign, so "
            r"monotonicity and convexity in $n$ hold."),
    "003.thm3.1.cwce0_implies_tce0": ErratumNote(
        title=r"Thm 3.1: $\mathrm{CWCE}_p = 0$ does not imply $\mathrm{TCE}_p = 0$",
        printed=r"$\mathrm{CWCE}_p(f) = 0 \implies \mathrm{TCE}_p(f) = 0$, with "
                r"$\mathrm{TCE}_p$ as Def C.1 defines it.",
        correction=r"A population of two atoms with 4 classes has $\mathrm{CWCE}_p = 0$ and "
                   r"$\mathrm{TCE}_1 = \frac1{16}$. Calibration, $\mathrm{CE}_p = 0$, does "
                   r"imply $\mathrm{TCE}_p = 0$.",
        severity=FALSE_UNAFFECTED,
        why=r"The implication fails for $\mathrm{TCE}_p$ as defined; the route from "
            r"calibration, $\mathrm{CE}_p = 0 \implies \mathrm{TCE}_p = 0$, holds (verified)."),
    "003.thm3.1.cwce_ge_tce": ErratumNote(
        title=r"Thm 3.1: $\mathrm{CWCE}_p \ge \mathrm{TCE}_p$ fails",
        printed=r"$\mathrm{CWCE}_p(f) \ge \mathrm{TCE}_p(f)$ (eqs. (6), (16)), with "
                r"$\mathrm{TCE}_p$ as Def C.1 defines it.",
        correction=r"The same population has $\mathrm{CWCE}_p = 0 < \mathrm{TCE}_1 = "
                   r"\frac1{16}$. The inequality holds (with equality attained) when "
                   r"$\Pr(Y = C \mid f_C(X))$ is read class-wise, as step (ii) of eq. (16) "
                   r"does.",
        severity=FALSE_UNAFFECTED,
        why=r"The proof bounds a class-wise quantity, not $\mathrm{TCE}_p$; calibration still "
            r"implies $\mathrm{TCE}_p = 0$ (verified)."),
    "003.thm3.1.tce_ge_c_mmce": ErratumNote(
        title=r"Thm 3.1: the constant of $\mathrm{TCE}_1 \ge c\,\mathrm{MMCE}$ is on the "
              r"wrong side",
        printed=r"$\mathrm{TCE}_1(f) \ge c\,\mathrm{MMCE}(f)$ with "
                r"$c = \sqrt{\max_r k(r, r)}$.",
        correction=r"$c\,\mathrm{TCE}_1(f) \ge \mathrm{MMCE}(f)$, with equality at a single "
                   r"confidence value; the printed form fails for $c > 1$.",
        severity=FALSE_UNAFFECTED,
        why=r"The zero sets still agree ($\mathrm{TCE}_p = 0 \iff \mathrm{MMCE} = 0$, "
            r"verified), and for kernels with $k(r, r) \le 1$ the printed form follows."),
    "003.thm3.1.tce_ge_ks.definition": ErratumNote(
        title=r"Def C.2 and Thm 3.1: $\mathrm{TCE}_1 \ge \mathrm{KS}$ only for the proofs' KS",
        printed=r"$\mathrm{TCE}_1(f) \ge \mathrm{KS}(f)$ and "
                r"$\mathrm{TCE}_p(f) = 0 \iff \mathrm{KS}(f) = 0$, with $\mathrm{KS}$ as "
                r"Def C.2 defines it.",
        correction=r"Both hold for the KS the proof integrates (the top-label conditional "
                   r"against $\Pr_{f_C(X) \mid C}$); for Def C.2 read literally, a binary "
                   r"population has $\mathrm{TCE}_1 = 0$ and $\mathrm{KS} = \frac14$.",
        severity=IMPRECISE,
        why="Def C.2 does not define the KS the proofs use; with the proofs' KS both "
            "statements are verified."),
}
"""Erratum claim id -> :class:`ErratumNote` (every claim registered with ``expect="disagrees"``)."""


PAPER_NOTES = {
    "000": PaperNote(
        short=PAPER_NAMES["000"],
        title="Making and Evaluating Calibrated Forecasts",
        authors="anonymous (a multi-class follow-up of Hartline, Hu and Wu 2025)",
        venue="manuscript under double-blind review, 2025",
        cite="paper000",
        holds=(
            (r"The $\ell_2$ quantile-binned ECE is truthful for every bin count (Thm 2.6); "
             r"class-wise aggregation keeps truthfulness and confidence aggregation loses it "
             r"(Thm 3.1, Obs 3.2); and the truthful class-wise measure preserves dominance "
             r"between calibrated predictors (Thm 4.1).",
             ("000.thm2.6.exact", "000.thm3.1", "000.obs3.2", "000.thm4.1")),
        )),
    "001": PaperNote(
        short=PAPER_NAMES["001"],
        title="Scalable Utility-Aware Multiclass Calibration",
        authors="Mahmoud Hegazy, Michael I. Jordan and Aymeric Dieuleveut",
        venue="AISTATS 2026",
        cite="hegazy2026utility",
        holds=(
            (r"A small $\mathrm{UC}(f, u)$ bounds the regret of decisions (Prop 3.2); the "
             r"estimator of Lemma 3.4 takes one sort; binned errors are at most $m$ times UC "
             r"(App. B.2); and each step of patching (Algorithm 1) lowers the Brier score by "
             r"at least $\mathrm{err}_t^2/C$, so it never raises it and stops within "
             r"$O(C/\varepsilon^2)$ steps (Prop 4.4).",
             ("001.prop3.2", "001.lemma3.4.estimator", "001.appB2.bound",
              "001.prop4.4.decrease", "001.prop4.4.brier")),
        )),
    "003": PaperNote(
        short=PAPER_NAMES["003"],
        title="Better Uncertainty Calibration via Proper Scores for Classification and Beyond",
        authors="Sebastian G. Gruber and Florian Buettner",
        venue="NeurIPS 2022; the book uses its appendix",
        cite="gruber2022better",
        holds=(
            (r"Proper scores split into entropy, sharpness and calibration (Lemma 4.1); the "
             r"upper part of the hierarchy of Thm 3.1 holds "
             r"($\mathrm{BS} \ge \mathrm{CE}_2^2$, $\mathrm{CE}_p \ge \mathrm{CWCE}_p$, "
             r"$\mathrm{TCE}_1 \ge \mathrm{ECE}$); the binned ECE estimator is biased upwards "
             r"as a folded normal predicts (Prop 3.3); and $U_S$ bounds $\mathrm{CE}_S$ from "
             r"above (Thm 4.3).",
             ("003.lemma4.1", "003.thm3.1.brier_ge_ce2", "003.thm3.1.ce_ge_cwce",
              "003.thm3.1.tce_ge_ece", "003.prop3.3.approximation", "003.thm4.3.upper_bound")),
        )),
    "004": PaperNote(
        short=PAPER_NAMES["004"],
        title="Reassessing How to Compare and Improve the Calibration of Machine Learning "
              "Models",
        authors="Muthu Chidambaram and Rong Ge",
        venue="arXiv preprint 2406.04068, under review",
        cite="paper004",
        holds=(
            (r"The Bregman decomposition into sharpness gap and calibration error (Lemma 4.1), "
             r"larger sharpness gaps for coarser predictors (Prop 4.2), the $L^2$ ECE as the "
             r"only Bregman $L^q$ ECE (Prop 4.4), the confidence calibration error as a lower "
             r"bound (Lemma 4.6), the nonnegative band of the calibration-sharpness diagrams "
             r"(Prop 4.8) and the consistency of the kernel estimate (Thm C.4) all hold.",
             ("004.lemma4.1", "004.prop4.2", "004.prop4.4", "004.lemma4.6", "004.prop4.8",
              "004.thmC.4.rate")),
        )),
}
"""Paper number -> :class:`PaperNote` (the numbers of ``calnotes.book.claims.inventory.PAPERS``)."""


def anchor(claim_id: str) -> str:
    """The MyST target of an erratum's entry on the errata page (``{ref}`` links to it).

    Examples
    --------
    >>> anchor("003.thm3.1.cwce_ge_tce")
    'erratum-003-thm3-1-cwce-ge-tce'
    """
    return "erratum-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


_DOLLAR = re.compile(r"(?<!\\)\$")


def tex_problems(text: str) -> list:
    """What is wrong with a Markdown-with-inline-TeX string; empty when it renders.

    Checked: no display math (``$$``); an even number of unescaped ``$``; inside each
    ``$...$``, braces balanced (``\\{`` and ``\\}`` are literal braces and do not count), and
    ``\\bigl``/``\\bigr`` paired; no line break (a formula must not span lines).

    Examples
    --------
    >>> tex_problems(r"$\\frac{1}{2}$ and $x$")
    []
    >>> tex_problems(r"$\\frac{1}{2$")
    ['formula 1 has unbalanced braces: \\\\frac{1}{2']
    """
    out = []
    if "$$" in text:
        out.append("display math ($$) is not allowed: keep formulas inline")
    if "\n" in text:
        out.append("line break inside the text")
    parts = _DOLLAR.split(text)
    if len(parts) % 2 == 0:
        out.append("odd number of $")
        return out
    for i, formula in enumerate(parts[1::2], 1):
        if not formula.strip():
            out.append(f"formula {i} is empty")
            continue
        depth = 0
        plain = formula.replace(r"\{", "").replace(r"\}", "")
        for ch in plain:
            depth += {"{": 1, "}": -1}.get(ch, 0)
            if depth < 0:
                break
        if depth != 0:
            out.append(f"formula {i} has unbalanced braces: {formula}")
        if formula.count(r"\bigl") != formula.count(r"\bigr"):
            out.append(f"formula {i} has unpaired \\bigl/\\bigr: {formula}")
    return out


def problems(claims=None) -> list:
    """Everything wrong with :data:`NOTES` and :data:`PAPER_NOTES`; empty when consistent.

    Every claim registered with ``expect="disagrees"`` has a note and every note is such a
    claim; every severity is on :data:`SEVERITIES`; every text passes :func:`tex_problems`;
    every paper of :data:`calnotes.book.claims.inventory.PAPERS` has a :class:`PaperNote`, and the
    claims of its ``holds`` are registered with ``expect="agrees"``.

    Examples
    --------
    >>> from calnotes.book.claims import errata_notes
    >>> errata_notes.problems()
    []
    """
    from .inventory import PAPERS

    claims = tuple(all_claims() if claims is None else claims)
    registry = {c.id: c for c in claims}
    errata = {c.id for c in claims if c.expect == "disagrees"}
    out = [f"{i}: erratum claim without a note" for i in sorted(errata - set(NOTES))]
    out.extend(f"{i}: note for a claim that is not an erratum" for i in sorted(set(NOTES) - errata))
    for i, n in NOTES.items():
        if n.severity not in SEVERITIES:
            out.append(f"{i}: severity {n.severity!r} not in {SEVERITIES}")
        for name in ("title", "printed", "correction", "why"):
            text = getattr(n, name)
            if not text.strip():
                out.append(f"{i}: empty {name}")
            out.extend(f"{i}: {name}: {p}" for p in tex_problems(text))
    out.extend(f"paper {p}: no PaperNote" for p in PAPERS if p not in PAPER_NOTES)
    out.extend(f"paper {p}: PaperNote for a paper not in the inventory"
               for p in PAPER_NOTES if p not in PAPERS)
    for p, note in PAPER_NOTES.items():
        for sentence, ids in note.holds:
            out.extend(f"paper {p}: {t}" for t in tex_problems(sentence))
            if not ids:
                out.append(f"paper {p}: a result that holds without claims: {sentence[:40]}")
            for i in ids:
                if i not in registry:
                    out.append(f"paper {p}: claim {i!r} is not registered")
                elif registry[i].expect != "agrees":
                    out.append(f"paper {p}: claim {i!r} is not a verified claim "
                               f"(expect={registry[i].expect!r})")
                elif not i.startswith(p + "."):
                    out.append(f"paper {p}: claim {i!r} belongs to another paper")
    return out


# ------------------------------------------------------------------------------------------
# Findings on our data: short titles (what the data_findings page heads each entry with).

FINDING_TITLES = {
    "000.sec5.checkpoint_dominance": "Sec. 5.2: the checkpoints of one training run are ordered "
                                     "by dominance",
    "000.sec5.ece_conf_flips": "Sec. 5.2: the confidence ECE flips rankings between bin counts",
    "000.sec5.large_m": r"Sec. 5.2: class-wise $\ell_2$-QECE orders more pairs as $m$ grows",
    "000.sec5.qece_preserves": r"Sec. 5.2: class-wise $\ell_2$-QECE preserves dominance at "
                               r"every bin count",
    "003.propD.2.held_out": r"Prop D.2 on held-out data: the errors of $t^f$ are sampling noise",
    "004.appD.subsampling": "App. D: averaging over subsamples loses virtually nothing",
    "004.appH.over_smoothing": "App. H.1: bandwidths above 0.1 over-smooth and can change the "
                               "ranking",
    "004.appH.ranking_stable": "App. H: the ranking is stable over the recommended bandwidths "
                               "and kernels",
    "004.sec3.mrr_lowest_ece": "Sec. 3: MRR has the lowest ECE on every model",
    "004.sec3.proper_scores_detect_mrr": "Sec. 4: NLL or the Brier score alone detects MRR",
    "004.sec5.2.ir_beats_hb": "Sec. 5.2: isotonic regression beats histogram binning",
    "004.sec5.sharpness_gaps": "Sec. 5.1: the diagrams expose MRR and histogram binning",
}
"""Finding claim id -> a short title led by the paper's section (Markdown with inline TeX): the
heading of its entry on the findings page (every claim registered with ``expect="finding"``)."""

OUTCOME_WORDS = {"holds": "carries over", "does not hold": "does not carry over",
                 "inconclusive": "inconclusive"}
"""A finding's outcome (:attr:`calnotes.book.claims.Claim.outcome`) in the findings page's words."""


def finding_anchor(claim_id: str) -> str:
    """The MyST target of a finding's entry on the findings page.

    Examples
    --------
    >>> finding_anchor("004.sec5.2.ir_beats_hb")
    'finding-004-sec5-2-ir-beats-hb'
    """
    return "finding-" + re.sub(r"[^a-z0-9]+", "-", claim_id.lower()).strip("-")


def finding_problems(claims=None) -> list:
    """What is wrong with :data:`FINDING_TITLES`; empty when every finding claim has a title
    that renders and every title is a finding claim's.

    Examples
    --------
    >>> finding_problems()
    []
    """
    claims = tuple(all_claims() if claims is None else claims)
    findings = {c.id for c in claims if c.expect == "finding"}
    out = [f"{i}: finding without a title" for i in sorted(findings - set(FINDING_TITLES))]
    out.extend(f"{i}: title for a claim that is not a finding"
               for i in sorted(set(FINDING_TITLES) - findings))
    for i, title in FINDING_TITLES.items():
        out.extend(f"{i}: title: {p}" for p in tex_problems(title))
    return out


# ------------------------------------------------------------------------------------------
# Rendering: the registry's plain-text notation made readable, and the entries of the errata and
# findings pages (MyST Markdown).

_CODE = re.compile(r"\b(?:calnotes|practice|np|numpy)\.[\w.]+(?:\([\w.]*\))?"
                   r"|\b\d{3}\.[A-Za-z][\w.]*\w")
_SUB = str.maketrans("0123456789ijkmnpr", "₀₁₂₃₄₅₆₇₈₉ᵢⱼₖₘₙₚᵣ")
_SUP = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")
_WORDS = (  # (pattern, replacement), in order
    (r"<=>", "⇔"), (r"(?<![<=])=>", "⇒"), (r"<=", "≤"), (r">=", "≥"), (r"!=", "≠"), (r"->", "→"), (r"\+-", "±"),
    (r"(?<=\s)>>(?=\s)", "≫"), (r"(?<=\s)<<(?=\s)", "≪"), (r" -- ", " – "), (r" - ", " − "),
    (r"(?<=\s)~(?=\s)", "∼"), (r"(?<=\d) x (?=\d)", " × "), (r"(?<=\^f) o (?=f)", " ∘ "),
    (r"\bsqrt(?=\()", "√"), (r"\bTheta(?=\()", "Θ"),
    (r"\beps(\d)(?![\w])", lambda m: "ε" + m.group(1).translate(_SUB)),
    (r"\beps(?![\w])", "ε"), (r"\bpi(?![A-Za-z0-9])", "π"), (r"\bsigma(?![A-Za-z0-9])", "σ"),
    (r"\bmu(?![A-Za-z0-9])", "μ"), (r"\bdelta(?![A-Za-z0-9])", "δ"),
    (r"\btau(?![A-Za-z0-9])", "τ"),
    (r"(?:\bl|ℓ)([12])\b", lambda m: "ℓ" + m.group(1).translate(_SUB)),
    (r"\bf([1-4])\b", lambda m: "f" + m.group(1).translate(_SUB)),
    (r"\^(\d)(?!\d|\.\d)", lambda m: m.group(1).translate(_SUP)), (r"\^f\b", "ᶠ"), (r"\^p\b", "ᵖ"),
    (r"(?<=[(|]\w)-(?=\w)", "−"), (r"(?<=[(|]\w[²³])-(?=\w)", "−"),
    (r"(?<![\w.)\]-])-(?=\d)", "−"),
    (r"(?<=[A-Za-z*εμσδπ)|\]])_([0-9ijkmnpr])(?![A-Za-z0-9])",
     lambda m: m.group(1).translate(_SUB)),
)


def _readable_words(text: str) -> str:
    for pattern, replacement in _WORDS:
        text = re.sub(pattern, replacement, text)
    return text


def _split_code(text: str):
    """``(is_code, piece)`` for the pieces of ``text``: dotted code names and claim ids are
    code, the rest prose."""
    pos = 0
    for m in _CODE.finditer(text):
        if m.start() > pos:
            yield False, text[pos:m.start()]
        yield True, m.group()
        pos = m.end()
    if pos < len(text):
        yield False, text[pos:]


def readable(text: str) -> str:
    """The registry's plain-text notation (``eps1``, ``sqrt(...)``, ``>=``, ``l1-QECE``,
    ``TCE_p``) in Unicode, for a reader: ``ε₁``, ``√(...)``, ``≥``, ``ℓ₁-QECE``, ``TCEₚ``.
    Code names (``practice.bootstrap_sd(...)``) and claim ids are left as they are.

    Examples
    --------
    >>> readable("ECE ~ O(1/n): (n^2-1)/(3 n^2) -> 1/3 = Theta(1)")
    'ECE ∼ O(1/n): (n²−1)/(3 n²) → 1/3 = Θ(1)'
    >>> readable("sqrt(2/pi) sqrt((1-1/k)(1/k)m/n) for eps1 >= 0.2, l1-QECE^conf")
    '√(2/π) √((1−1/k)(1/k)m/n) for ε₁ ≥ 0.2, ℓ₁-QECE^conf'
    >>> readable("CWCE_p >= TCE_p; t^f o f; 2 x 0.058; see 003.thm3.1.tce_ge_ks")
    'CWCEₚ ≥ TCEₚ; tᶠ ∘ f; 2 × 0.058; see 003.thm3.1.tce_ge_ks'
    >>> readable("exponent 0.0000 (not -1), 1e-12, epochs 5-8, Tables 2-6, -0.0108")
    'exponent 0.0000 (not −1), 1e-12, epochs 5-8, Tables 2-6, −0.0108'
    >>> readable("E||E[Y | f(X)] - f(X)||_2^2, (E|f_C - P|^p)^(1/p), pi_Y")
    'E||E[Y | f(X)] − f(X)||₂², (E|f_C − P|ᵖ)^(1/p), π_Y'
    >>> readable("CWCE_p = 0 => TCE_p = 0; TCE_p = 0 <=> KS = 0")
    'CWCEₚ = 0 ⇒ TCEₚ = 0; TCEₚ = 0 ⇔ KS = 0'
    """
    return "".join(piece if code else _readable_words(piece)
                   for code, piece in _split_code(text))


_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>$|{}#])")
_EMPHASIS = re.compile(r"(?<![\w*])\*(\w+)\*(?![\w*])")


def markdown_text(text: str) -> str:
    """:func:`readable` text as MyST Markdown that shows exactly that text: Markdown's special
    characters escaped (``$`` would start a formula, ``{`` a role, ``|`` a table cell), code
    names and claim ids as inline code; a single word between asterisks stays emphasised.

    Examples
    --------
    >>> markdown_text("f2 is *below* f3; E|N(mu, s^2)| >= 0 (practice.bootstrap_sd(x))")
    'f₂ is *below* f₃; E\\\\|N(μ, s²)\\\\| ≥ 0 (`practice.bootstrap_sd(x)`)'
    """
    out = []
    for code, piece in _split_code(text):
        if code:
            out.append(f"`{piece}`")
            continue
        piece = _readable_words(piece)
        words = []
        pos = 0
        for m in _EMPHASIS.finditer(piece):
            words.append(_MD_SPECIAL.sub(r"\\\1", piece[pos:m.start()]))
            words.append(f"*{m.group(1)}*")
            pos = m.end()
        words.append(_MD_SPECIAL.sub(r"\\\1", piece[pos:]))
        out.append("".join(words))
    return "".join(out)


def _number(x: float) -> str:
    """A reference value as the pages print it (6 significant digits, a typographic minus)."""
    text = f"{float(x):.6g}"
    return "−" + text[1:] if text.startswith("-") else text


def _dropdown(title: str, body: str) -> str:
    """A collapsed sphinx-design dropdown (MyST Markdown) around ``body``."""
    return f"````{{dropdown}} {title}\n:class-container: evidence-dropdown\n\n{body}\n````"


SIZE_WORDS = {"smoke": "the small (smoke) size of the book build and the tests",
              "full": "full (publication) size"}


def measured_sentence(result) -> str:
    """What the check measured, in words, against what the paper implies: the claim line's text
    (``<quantity> = <measured> <symbol> <threshold>``, :func:`calnotes.book.claims.claim_sentence`)
    and the value the statement implies, as MyST Markdown."""
    from ._registry import claim_sentence

    c = result.claim
    sentence = claim_sentence(result)
    sentence = markdown_text(sentence[:1].upper() + sentence[1:])
    if c.outcome == "inconclusive":
        return (f"{sentence}; the check compares it with {_number(c.reference)}, no effect, "
                "within its sampling uncertainty.")
    bound = {"le": "at most ", "ge": "at least "}.get(c.comparison, "")
    whose = "as printed, the statement" if c.expect == "disagrees" else "the statement, as checked,"
    return f"{sentence}; {whose} implies {bound}{_number(c.reference)}."


def _small_id(result, labels=()) -> str:
    c = result.claim
    what = f" It checks {markdown_text('; '.join(labels))} of paper {c.id.split('.')[0]}." \
        if labels else ""
    size = SIZE_WORDS.get(result.size, result.size)
    return f"<small>Claim `{c.id}`, run at {size}.{what}</small>"


def erratum_entry(result, labels=()) -> str:
    """One erratum's entry on the errata page (MyST Markdown): its target
    (:func:`anchor`), a heading with the note's title (no claim id), where the paper states it
    and how serious it is, the paper's statement and what is true instead (typeset, from
    :data:`NOTES`), then a collapsed dropdown with the evidence: what the check measured, in
    words and numbers, the registry's account of it, the tolerance, and the claim id in small
    text. ``labels`` are the inventory's labels of the results the claim contradicts.

    The registry's one-line plain-text ``correction`` is not repeated: the note's typeset
    correction says the same.
    """
    c = result.claim
    n = NOTES[c.id]
    body = "\n\n".join([
        f"**Measured.** {measured_sentence(result)}",
        f"**How the check shows it.** {markdown_text(c.evidence)}",
        f"**Tolerance.** {markdown_text(c.tolerance_reason)}",
        _small_id(result, labels)])
    return "\n\n".join([
        f"({anchor(c.id)})=\n### {n.title}",
        f"*{markdown_text(c.source)}*, derived in {{doc}}`/{c.chapter}`. "
        f"**Severity: {n.severity}.** {n.why}",
        f"**The paper states.** {n.printed}",
        f"**What is true instead.** {n.correction}",
        _dropdown("The evidence: what the check measured", body)]) + "\n"


def errata_summary(results, labels_of) -> str:
    """The errata page's table at a glance (MyST Markdown): paper, result(s), the erratum's
    title linked to its entry, severity. ``labels_of`` maps a claim id to the inventory labels of
    the results it contradicts."""
    rows = ["| paper | result | erratum | severity |", "|---|---|---|---|"]
    for r in results:
        c, n = r.claim, NOTES[r.claim.id]
        rows.append(f"| {c.id.split('.')[0]} | {markdown_text('; '.join(labels_of(c.id)))} | "
                    f"[{n.title}](#{anchor(c.id)}) | {n.severity} |")
    return "\n".join(rows)


_OUTCOME_SENTENCE = {
    "holds": "The statement **carries over** to our data.",
    "does not hold": "The statement **does not carry over** to our data: the effect against it "
                     "lies beyond its sampling uncertainty.",
    "inconclusive": "**Inconclusive**: the effect lies within its sampling uncertainty, so our "
                    "data neither confirm nor contradict the statement; a larger sample would "
                    "be needed to tell.",
}


def finding_entry(result, labels=()) -> str:
    """One finding's entry on the findings page (MyST Markdown): its target
    (:func:`finding_anchor`), a heading with its title (:data:`FINDING_TITLES`, no claim id),
    where the paper states it and the chapter that reruns it (a ``{doc}`` link), the statement,
    the outcome in words, then a collapsed dropdown with what was measured, the sampling
    uncertainty and the claim id in small text."""
    c = result.claim
    body = "\n\n".join([
        f"**Measured.** {measured_sentence(result)}",
        f"**Sampling uncertainty and what it means.** {markdown_text(c.evidence)}",
        f"**Tolerance.** {markdown_text(c.tolerance_reason)}",
        _small_id(result, labels)])
    return "\n\n".join([
        f"({finding_anchor(c.id)})=\n### {FINDING_TITLES[c.id]}",
        f"*{markdown_text(c.source)}*, rerun in {{doc}}`/{c.chapter}`.",
        f"**The paper states.** {markdown_text(c.statement)}",
        f"**On our data.** {_OUTCOME_SENTENCE[c.outcome]}",
        _dropdown("The evidence: what was measured, with its sampling uncertainty", body)]) + "\n"


def findings_summary(results) -> str:
    """The findings page's table (MyST Markdown): the finding's title linked to its entry, the
    paper, the outcome on our data, the chapter that reruns it."""
    rows = ["| finding | paper | on our data | rerun in |", "|---|---|---|---|"]
    for r in results:
        c = r.claim
        rows.append(f"| [{FINDING_TITLES[c.id]}](#{finding_anchor(c.id)}) | "
                    f"{c.id.split('.')[0]} | {OUTCOME_WORDS[c.outcome]} | "
                    f"{{doc}}`/{c.chapter}` |")
    return "\n".join(rows)


COUNT_KEY = (("total", "numbered results of the paper, which the other columns split"),
             ("verif.", "verified"),
             ("consist.", "consistent with the paper's other printed numbers (the experiment is "
                          "not rerun)"),
             ("illus.", "illustrated only"), ("errata", "contradicted by an erratum"),
             ("findings", "checked only as findings on our data"),
             ("unchecked", "not checked yet"))
"""The short headers of the per-paper count tables (*Do the papers hold?*, the ledger) and what
each means: the key printed under the table, so that eight columns fit the text's width."""
COUNT_FIELDS = ("results", "verified", "consistent", "illustrations", "errata", "findings",
                "not_checked")
"""The :class:`calnotes.book.claims.inventory.Coverage` field under each header of :data:`COUNT_KEY`."""


def count_key_text() -> str:
    """The key under a count table, as one line of plain text with the short headers in
    asterisks (Markdown emphasis).

    Examples
    --------
    >>> count_key_text().startswith("*total*: numbered results of the paper, which the other")
    True
    """
    return "; ".join(f"*{h}*: {what}" for h, what in COUNT_KEY) + "."
