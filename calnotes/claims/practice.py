"""Claims of Part V (practice): Sec. 5 of the truthfulness paper on real predictor suites, and
the recalibration pattern of the recalibration paper's Table 1 and Prop D.2 of the proper
calibration errors paper.

Both sizes use the default MNIST-5k suite (seed 0; built once in about 40 s and cached on disk by
:func:`calnotes.data.build_suite`): the claims are statements about one fixed set of trained
models, so a smaller suite would be a different experiment, not a quicker run of the same one.
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..measures import classwise, l2_qece
from ..scores import brier_loss
from ._registry import Claim, register

RANKINGS = "book/practice/rankings"
SOURCE_000 = "Making and Evaluating Calibrated Forecasts"


@lru_cache(maxsize=2)
def default_suite(dataset: str = "mnist5k"):
    """The default suite of the practice chapters (seed 0), from the disk cache when present."""
    from ..data import build_suite

    return build_suite(dataset, rng=0)


def _scaled_test():
    suite = default_suite()
    return suite.labels("test"), suite.probs("test", scaled=True)


# ------------------------------------------------------------------ Sec. 5: m = n identity
def _m_equals_n(size: str) -> float:
    """max over the suite of |k n l2-QECE^cw_{m=n} / Brier - 1|."""
    y, P = _scaled_test()
    n, k = P.shape[1], P.shape[2]
    worst = 0.0
    for Pm in P:
        ratio = k * n * classwise(l2_qece, y, Pm, n_bins=n) / brier_loss(y, Pm)
        worst = max(worst, abs(ratio - 1.0))
    return worst


register(Claim(
    id="000.sec5.m_equals_n",
    source=f"{SOURCE_000}, Sec. 5.2",
    statement=("With m = n bins (one sample per bin) the class-wise l2-QECE equals the"
               " multi-class Brier loss divided by k n, so it ranks predictors exactly as the"
               " squared loss does (checked on every temperature-scaled model of the MNIST-5k"
               " suite)."),
    check=_m_equals_n,
    reference=0.0, tolerance=1e-11,
    tolerance_reason=("both sides are sums of n = 1,000 squares of numbers in [-1, 1], summed in"
                      " different orders: relative rounding error at most about n * 2^-53"
                      " ~ 1e-13; 1e-11 leaves a margin"),
    chapter=RANKINGS,
))


# ------------------------------------------------------- Sec. 5.2: the classical ECE flips
def _ece_conf_flips(size: str) -> float:
    """Pairs of suite models ordered differently by ECE^conf at m = 20 and at m = n."""
    from ..rankings import measure_table, rank_flips

    y, P = _scaled_test()
    values = measure_table(y, P, [20, y.shape[0]], ["ECE conf"])[0]
    return float(rank_flips(values[0], values[1]))


register(Claim(
    id="000.sec5.ece_conf_flips",
    source=f"{SOURCE_000}, Sec. 5.2",
    statement=("The classical binned ECE with confidence aggregation flips the ranking between"
               " predictors under different bin counts: on the temperature-scaled MNIST-5k suite"
               " at least one pair of models is ordered differently at m = 20 and at m = n."),
    check=_ece_conf_flips,
    reference=1.0, tolerance=0.0, comparison="ge",
    tolerance_reason="a count of pairs: exact integer arithmetic, no tolerance needed",
    chapter=RANKINGS,
))


# ------------------------------------------------- recalibration paper, Sec. 3 and Table 1
RECALIBRATION = "book/practice/recalibration"
SOURCE_004 = "Reassessing How to Compare and Improve the Calibration of Machine Learning Models"
SOURCE_003 = "Better Uncertainty Calibration via Proper Scores for Classification and Beyond"
_EXACT = ("an identity of the construction: both sides are means of the same 1,000 0/1"
          " indicators or constants, summed in different orders; float64 rounding stays below"
          " 1,000 * 2^-53 ~ 1e-13, so 1e-12 leaves a margin")


@lru_cache(maxsize=1)
def suite_recalibration_rows():
    """compare_recalibrators on every model of the default suite (logits, 15 bins)."""
    from ..recalibrate import compare_recalibrators

    suite = default_suite()
    zc, zt = suite.logits("cal"), suite.logits("test")
    yc, yt = suite.labels("cal"), suite.labels("test")
    return [compare_recalibrators(zc[j], yc, zt[j], yt, inputs="logits")
            for j in range(len(suite))]


def _by_method(rows):
    return {r["method"]: r for r in rows}


def _mrr_in_sample(size: str) -> float:
    """max over the suite of ECE^conf (15 bins) of MRR on its own calibration split."""
    from ..measures import binned_ece, confidence
    from ..recalibrate import MeanReplacement

    suite = default_suite()
    y = suite.labels("cal")
    worst = 0.0
    for z in suite.logits("cal"):
        P = MeanReplacement(inputs="logits").fit(z, y).transform(z)
        worst = max(worst, confidence(binned_ece, y, P, n_bins=15))
    return worst


register(Claim(
    id="004.sec3.mrr_zero_ece",
    source=f"{SOURCE_004}, Sec. 3, eq. (3.1)",
    statement=("Mean replacement recalibration (confidence := accuracy on the calibration split,"
               " prediction unchanged) has ECE exactly 0 on the split it was fitted on (checked"
               " for every model of the MNIST-5k suite)."),
    check=_mrr_in_sample, reference=0.0, tolerance=1e-12, tolerance_reason=_EXACT,
    chapter=RECALIBRATION,
))


def _mrr_test_gap(size: str) -> float:
    """max over the suite of | ECE_test(MRR) - |acc_cal - acc_test| |."""
    worst = 0.0
    for rows in suite_recalibration_rows():
        mrr = _by_method(rows)["MRR"]
        acc_cal = mrr["model"].accuracy_
        worst = max(worst, abs(mrr["ece"] - abs(acc_cal - mrr["accuracy"])))
    return worst


register(Claim(
    id="004.sec3.mrr_ece_is_accuracy_gap",
    source=f"{SOURCE_004}, Sec. 3",
    statement=("On a test split, MRR's ECE is exactly |calibration accuracy - test accuracy|: all"
               " its confidences are one number, so one bin holds every sample. Its ECE therefore"
               " shrinks like the sampling error of an accuracy, 1/sqrt(n), whatever the model."),
    check=_mrr_test_gap, reference=0.0, tolerance=1e-12, tolerance_reason=_EXACT,
    chapter=RECALIBRATION,
))


def _accuracy_kept(size: str) -> float:
    """max over the suite of |test accuracy after TS or MRR - test accuracy before|."""
    worst = 0.0
    for rows in suite_recalibration_rows():
        r = _by_method(rows)
        worst = max(worst, abs(r["TS"]["accuracy"] - r["baseline"]["accuracy"]),
                    abs(r["MRR"]["accuracy"] - r["baseline"]["accuracy"]))
    return worst


register(Claim(
    id="004.sec3.accuracy_kept",
    source=f"{SOURCE_004}, Sec. 3 and Table 1",
    statement=("Temperature scaling and MRR leave the test accuracy unchanged (they never change"
               " the predicted class), for every model of the MNIST-5k suite."),
    check=_accuracy_kept, reference=0.0, tolerance=0.0,
    tolerance_reason="the predicted classes are compared exactly: no rounding is involved",
    chapter=RECALIBRATION,
))


def _proper_detects(size: str) -> float:
    """min over the suite of min(NLL_MRR - NLL_TS, Brier_MRR - Brier_TS) on the test split."""
    worst = np.inf
    for rows in suite_recalibration_rows():
        r = _by_method(rows)
        worst = min(worst, r["MRR"]["nll"] - r["TS"]["nll"], r["MRR"]["brier"] - r["TS"]["brier"])
    return float(worst)


register(Claim(
    id="004.sec3.proper_scores_detect_mrr",
    source=f"{SOURCE_004}, Sec. 4 (first paragraph) and Table 1",
    statement=("Either NLL or the Brier score alone detects the trivial MRR: on every model of the"
               " MNIST-5k suite both are worse (larger) after MRR than after temperature scaling."),
    check=_proper_detects, reference=0.0, tolerance=0.0, comparison="ge",
    tolerance_reason=("a sign: the smallest gap over the suite must be positive; the gaps are"
                      " differences of means far larger than float64 rounding"),
    chapter=RECALIBRATION,
))


def _mrr_lowest(size: str) -> float:
    """Share of suite models on which MRR has the lowest test ECE of the five rows."""
    wins = [min(rows, key=lambda r: r["ece"])["method"] == "MRR"
            for rows in suite_recalibration_rows()]
    return float(np.mean(wins))


register(Claim(
    id="004.sec3.mrr_lowest_ece",
    source=f"{SOURCE_004}, Sec. 3, Table 1 and Tables 2-6",
    statement=("MRR dominates in terms of the pure calibration metrics: of the baseline, TS, HB,"
               " IR and MRR, MRR has the lowest ECE (15 equal-width bins, top label)."),
    check=_mrr_lowest, reference=1.0, tolerance=0.0,
    tolerance_reason="a share of models, exact; the paper's tables imply every model",
    chapter=RECALIBRATION, expect="disagrees",
    evidence=("Not a general property. MRR's test ECE equals |calibration accuracy - test"
              " accuracy| exactly (claim 004.sec3.mrr_ece_is_accuracy_gap), a sampling error of"
              " order sqrt(acc (1 - acc) (1/n_cal + 1/n_test)); temperature scaling's ECE is the"
              " model's residual miscalibration plus the binning noise of a calibrated model."
              " Which is smaller depends on the split sizes and the model: on the 26 models of"
              " the MNIST-5k suite (1,000 calibration and 1,000 test images) MRR has the lowest"
              " ECE for only some of them (the share measured here); the paper's 10,000 / 40,000"
              " split makes its accuracy gap about three times smaller. The chapter also draws the"
              " paper-scale logistic-normal simulation, where MRR wins in most but not all draws."
              " The paper's broader point -- a low ECE can be bought without improving the"
              " model -- stands (see 004.sec3.proper_scores_detect_mrr)."),
))


def _tf_zero(size: str) -> float:
    """max over the suite of max(ECE, TCE, |accuracy change|) of t^f on its fitting split."""
    from ..measures import binned_ece, confidence, tce
    from ..recalibrate import AccuracyPreservingTransform

    suite = default_suite()
    y = suite.labels("cal")
    worst = 0.0
    for z in suite.logits("cal"):
        P = AccuracyPreservingTransform(kind="sorted", inputs="logits").fit(z, y).transform(z)
        before = np.mean(z.argmax(axis=1) == y)
        worst = max(worst, confidence(binned_ece, y, P, n_bins=15), tce(y, P, n_bins=15),
                    abs(np.mean(P.argmax(axis=1) == y) - before))
    return float(worst)


register(Claim(
    id="003.propD.2",
    source=f"{SOURCE_003}, Prop D.2",
    statement=("The transform t^f (the top entry replaced by the model's accuracy, the rest"
               " spread evenly) gives ECE = 0 and TCE = 0 and keeps the accuracy; here on the"
               " split the accuracy is estimated on, for every model of the MNIST-5k suite."),
    check=_tf_zero, reference=0.0, tolerance=1e-12, tolerance_reason=_EXACT,
    chapter=RECALIBRATION,
))
