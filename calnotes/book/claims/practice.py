"""Claims of Part V (practice): Sec. 5 of the truthfulness paper on real predictor suites, and
the recalibration pattern of the recalibration paper's Table 1 and Prop D.2 of the proper
calibration errors paper.

Both sizes use the default MNIST-5k suite (seed 0; built once in about 40 s and cached on disk by
:func:`calnotes.data.build_suite`): the claims are statements about one fixed set of trained
models, so a smaller suite would be a different experiment, not a quicker run of the same one.
"""

from __future__ import annotations

import math
from functools import lru_cache, partial

import numpy as np

from ...core.measures import classwise, l2_qece
from ...core.scores import brier_loss
from ._registry import INCONCLUSIVE, Claim, Control, cite, register

RANKINGS = "book/practice/rankings"


@lru_cache(maxsize=2)
def default_suite(dataset: str = "mnist5k"):
    """The default suite of the practice chapters (seed 0), from the disk cache when present."""
    from ...data import build_suite

    return build_suite(dataset, rng=0)


def _scaled_test(idx=None):
    """Labels and temperature-scaled probabilities of the test split (rows ``idx`` if given)."""
    suite = default_suite()
    y, P = suite.labels("test"), suite.probs("test", scaled=True)
    return (y, P) if idx is None else (y[idx], P[:, idx])


def bootstrap_sd(statistic, n_boot: int = 200, seed: int = 0) -> float:
    """Bootstrap standard deviation of ``statistic(idx)`` over resamples of the test split.

    ``statistic`` takes an index array into the test split (``None``: the whole split) and
    returns a number; the models, fitted temperatures and recalibrators are kept fixed, so this
    is the sampling uncertainty of the test evaluation only. The findings of this module quote
    it with ``n_boot = 200`` and ``seed = 0``.
    """
    n = default_suite().labels("test").shape[0]
    rng = np.random.default_rng(seed)
    values = [float(statistic(rng.integers(n, size=n))) for _ in range(n_boot)]
    return float(np.std(values, ddof=1))


# ------------------------------------------------------------------ Sec. 5: m = n identity
def _m_equals_n(size: str, samples_per_bin: int = 1, fewer_bins: int = 0) -> float:
    """max over the suite of |k n l2-QECE^cw_{m=n} / Brier - 1| (``samples_per_bin=2``, a
    control: m = n / 2 bins; ``fewer_bins=1``, the near control: m = n - 1 bins)."""
    y, P = _scaled_test()
    n, k = P.shape[1], P.shape[2]
    worst = 0.0
    for Pm in P:
        m = n // samples_per_bin - fewer_bins
        ratio = k * n * classwise(l2_qece, y, Pm, n_bins=m) / brier_loss(y, Pm)
        worst = max(worst, abs(ratio - 1.0))
    return worst


register(Claim(
    id="000.sec5.m_equals_n",
    source=cite("000", "Sec. 5.2"),
    statement=("With m = n bins (one sample per bin) the class-wise l2-QECE equals the"
               " multi-class Brier loss divided by k n, so it ranks predictors exactly as the"
               " squared loss does (checked on every temperature-scaled model of the MNIST-5k"
               " suite)."),
    quantity="largest |k n ℓ2-QECE^classwise(m = n) / Brier − 1| over the suite",
    check=_m_equals_n,
    reference=0.0, tolerance=1e-11,
    tolerance_reason=("both sides are sums of n = 1,000 squares of numbers in [-1, 1], summed in"
                      " different orders: relative rounding error at most about n * 2^-53"
                      " ~ 1e-13; 1e-11 leaves a margin. Region: all 26 suite models (k = 10,"
                      " n = 1,000), MLPs, logistic regressions and boosting, with tied"
                      " predictions where the models saturate"),
    chapter=RANKINGS,
    controls=(Control("m = n - 1", "The identity also holds with one bin fewer (m = n - 1, one"
                      " bin of two samples): k n l2-QECE^cw_{n-1} = Brier.",
                      partial(_m_equals_n, fewer_bins=1), kind="scaled", factor=999 / 1000),
              Control("m = n / 2", "The identity also holds with two samples per bin"
                      " (m = n / 2): k n l2-QECE^cw_{n/2} = Brier.",
                      partial(_m_equals_n, samples_per_bin=2), kind="scaled", factor=0.5)),
))


# ------------------------------------------------------- Sec. 5.2: the classical ECE flips
def ece_conf_flips(idx=None) -> float:
    """Pairs of suite models ordered differently by ECE^conf at m = 20 and at m = n."""
    from ...theory.rankings import measure_table, rank_flips

    y, P = _scaled_test(idx)
    values = measure_table(y, P, [20, y.shape[0]], ["ECE conf"])[0]
    return float(rank_flips(values[0], values[1]))


register(Claim(
    id="000.sec5.ece_conf_flips",
    source=cite("000", "Sec. 5.2"),
    statement=("The classical binned ECE with confidence aggregation flips the ranking between"
               " predictors under different bin counts: on the temperature-scaled MNIST-5k suite"
               " at least one pair of models is ordered differently at m = 20 and at m = n."),
    quantity=("number of pairs of models ordered differently by the confidence ECE at m = 20 and "
              "at m = n"),
    check=lambda size: ece_conf_flips(),
    reference=1.0, tolerance=0.0, comparison="ge",
    tolerance_reason=("a count of pairs: exact integer arithmetic, no tolerance needed. Region:"
                      " all 325 pairs of the 26 suite models, m = 20 against m = n = 1,000"),
    chapter=RANKINGS, expect="finding", finding_holds=True,
    evidence=("On our data (MNIST-5k suite, not the paper's CIFAR-100 checkpoints) 80 of the 325"
              " pairs flip; bootstrap SD over the 1,000 test images 14.4 pairs (200 resamples,"
              " practice.bootstrap_sd(practice.ece_conf_flips)): more than five SDs above zero."),
))


def _checkpoints() -> list:
    return [i for i, f in enumerate(default_suite().families) if f == "mlp_checkpoints"]


def checkpoint_dominance_share(idx=None) -> float:
    """Share of the pairs of MLP checkpoints that dominance orders (all four losses agree)."""
    from ...theory.rankings import dominance_matrix, loss_table

    y, P = _scaled_test(idx)
    ck = _checkpoints()
    D = dominance_matrix(loss_table(y, P[ck]))
    return float((D | D.T).sum() / 2 / (len(ck) * (len(ck) - 1) / 2))


#: Bootstrap SD of :func:`checkpoint_dominance_share` over the test images (200 resamples,
#: seed 0: ``bootstrap_sd(checkpoint_dominance_share)``).
CHECKPOINT_SHARE_SD = 0.058

register(Claim(
    id="000.sec5.checkpoint_dominance",
    source=cite("000", "Sec. 5.2"),
    statement=("The checkpoints of one training run are consistently ordered by every proper loss"
               " (log, Brier, spherical, 0-1): every pair of the ten MLP checkpoints of the"
               " MNIST-5k suite is ordered by dominance (measured: the share of pairs left"
               " unordered, against none)."),
    quantity="share of the pairs of MLP checkpoints that dominance leaves unordered",
    check=lambda size: 1.0 - checkpoint_dominance_share(),
    reference=0.0, tolerance=2 * CHECKPOINT_SHARE_SD,
    tolerance_reason=("inconclusive finding: the share of unordered pairs is measured against 0"
                      " with a tolerance of 2 bootstrap SDs of the share (2 x 0.058, 200"
                      " resamples of the 1,000 test images). Smallest effect detected: 12% of"
                      " the pairs unordered. Region: the 45 pairs of the ten checkpoints (epochs"
                      " 1 to 60) of MLP(128), temperature-scaled"),
    chapter=RANKINGS, expect="finding", finding_holds=INCONCLUSIVE,
    evidence=("On our data 41 of the 45 checkpoint pairs are ordered by dominance (share 0.911;"
              " bootstrap SD over the test images 0.058, 200 resamples,"
              " practice.bootstrap_sd(practice.checkpoint_dominance_share)): the 4 unordered"
              " pairs (8.9%) are 1.5 SDs from none, within sampling noise, so our data neither"
              " confirm nor contradict the statement. The pairs left unordered are neighbours"
              " whose losses differ by less than the test sample resolves (epochs 30, 45 and 60,"
              " and epochs 5 and 8), reversed by the 0-1 or the spherical loss."),
))


def _chain_agreements(idx=None) -> tuple:
    """Agreeing chain pairs of l2-QECE^cw at m = 20 and 100, and the number of chain pairs."""
    from ...theory.rankings import chain_agreement, longest_dominance_chain, loss_table, measure_table

    y, P = _scaled_test(idx)
    chain = longest_dominance_chain(loss_table(y, P))
    values = measure_table(y, P, [20, 100], ["l2-QECE cw"])[0]
    agree = [chain_agreement(chain, v) for v in values]
    return agree[0].agreeing, agree[1].agreeing, agree[0].pairs


def qece_small_m_share(idx=None) -> float:
    """Smallest share, over m = 20 and 100, of the chain pairs l2-QECE^cw orders as the losses."""
    a20, a100, pairs = _chain_agreements(idx)
    return min(a20, a100) / pairs


def qece_large_m_gain(idx=None) -> float:
    """Chain pairs l2-QECE^cw orders as the losses at m = 100 minus at m = 20."""
    a20, a100, _ = _chain_agreements(idx)
    return float(a100 - a20)


register(Claim(
    id="000.sec5.qece_preserves",
    source=cite("000", "Sec. 5.2"),
    statement=("The truthful l2-QECE^classwise preserves the dominance between predictors at every"
               " bin count: on the MNIST-5k suite it orders every pair of the longest dominance"
               " chain as the four losses do, at m = 20 and m = 100."),
    quantity=("smallest share, over m = 20 and 100, of the chain pairs class-wise ℓ2-QECE orders "
              "as the losses do"),
    check=lambda size: qece_small_m_share(),
    reference=1.0, tolerance=0.0,
    tolerance_reason=("a share of pairs, exact. Region: the longest dominance chain of the 26 suite"
                      " models (13 models, 78 pairs), m = 20 and 100 (m = n is the identity"
                      " 000.sec5.m_equals_n)"),
    chapter=RANKINGS, expect="finding", finding_holds=False,
    evidence=("On our data l2-QECE^cw orders 63 of 78 chain pairs as the losses at m = 20 (72 at"
              " m = 100); the smaller share, 0.81, has bootstrap SD 0.045 over the test images"
              " (200 resamples, practice.bootstrap_sd(practice.qece_small_m_share)), four SDs"
              " below 1. Thm 4.1 is about expectations over the test sample for"
              " calibrated predictors; one test set of 1,000 images is one draw."),
))


#: Bootstrap SD of :func:`qece_large_m_gain` over the test images (200 resamples, seed 0).
LARGE_M_GAIN_SD = 4.9

register(Claim(
    id="000.sec5.large_m",
    source=cite("000", "Sec. 5.2"),
    statement=("As m grows, the truthful l2-QECE^classwise orders the predictors more as the"
               " losses do: on the MNIST-5k suite it orders more pairs of the dominance chain"
               " correctly at m = 100 than at m = 20 (measured: the gain in pairs, against no"
               " gain)."),
    quantity=("pairs of the dominance chain class-wise ℓ2-QECE orders as the losses do at m = "
              "100, minus at m = 20"),
    check=lambda size: qece_large_m_gain(),
    reference=0.0, tolerance=2 * LARGE_M_GAIN_SD,
    tolerance_reason=("inconclusive finding: the gain (chain pairs agreeing at m = 100 minus at"
                      " m = 20) is measured against 0 with a tolerance of 2 bootstrap SDs (2 x"
                      " 4.9 pairs, 200 resamples of the 1,000 test images). Smallest effect"
                      " detected: a gain of 10 of the 78 pairs. Region: the longest dominance"
                      " chain, m = 20 against m = 100"),
    chapter=RANKINGS, expect="finding", finding_holds=INCONCLUSIVE,
    evidence=("On our data 72 - 63 = 9 more chain pairs agree at m = 100 than at m = 20;"
              " bootstrap SD 4.9 pairs over the test images (200 resamples,"
              " practice.bootstrap_sd(practice.qece_large_m_gain)): 1.8 SDs, within sampling"
              " noise, so the direction is suggested, not established, by one test set of 1,000"
              " images."),
))


# ------------------------------------------------- recalibration paper, Sec. 3 and Table 1
RECALIBRATION = "book/practice/recalibration"
_EXACT = ("an identity of the construction: both sides are means of the same 1,000 0/1"
          " indicators or constants, summed in different orders; float64 rounding stays below"
          " 1,000 * 2^-53 ~ 1e-13, so 1e-12 leaves a margin")


@lru_cache(maxsize=1)
def suite_recalibration_rows():
    """compare_recalibrators on every model of the default suite (logits, 15 bins)."""
    from ...recalibrate import compare_recalibrators

    suite = default_suite()
    zc, zt = suite.logits("cal"), suite.logits("test")
    yc, yt = suite.labels("cal"), suite.labels("test")
    return [compare_recalibrators(zc[j], yc, zt[j], yt, inputs="logits")
            for j in range(len(suite))]


def _by_method(rows):
    return {r["method"]: r for r in rows}


@lru_cache(maxsize=1)
def suite_recalibrated_test():
    """Test labels and, per suite model, ``method -> test probabilities`` of the five rows of
    :func:`suite_recalibration_rows` (the recalibrators fitted there, on the calibration split)."""
    from ...recalibrate import as_probabilities

    suite = default_suite()
    zt = suite.logits("test")
    probs = [{r["method"]: (as_probabilities(zt[j], "logits") if r["model"] is None
                            else r["model"].transform(zt[j])) for r in rows}
             for j, rows in enumerate(suite_recalibration_rows())]
    return suite.labels("test"), probs


def _test_scores(idx=None) -> list:
    """Per model, ``method -> (ECE^conf 15 bins, NLL, Brier)`` on the test split (rows ``idx``)."""
    from ...core.measures import binned_ece, confidence
    from ...core.scores import log_loss

    y, probs = suite_recalibrated_test()
    if idx is not None:
        y = y[idx]
    out = []
    for by in probs:
        row = {}
        for method, P in by.items():
            P = P if idx is None else P[idx]
            with np.errstate(divide="ignore"):
                row[method] = (float(confidence(binned_ece, y, P, n_bins=15)),
                               float(log_loss(y, P)), float(brier_loss(y, P)))
        out.append(row)
    return out


def _mrr_test_ece(size: str) -> float:
    """The control: max over the suite of MRR's ECE^conf on the test split."""
    return max(_by_method(rows)["MRR"]["ece"] for rows in suite_recalibration_rows())


def _mrr_in_sample(size: str) -> float:
    """max over the suite of ECE^conf (15 bins) of MRR on its own calibration split."""
    from ...core.measures import binned_ece, confidence
    from ...recalibrate import MeanReplacement

    suite = default_suite()
    y = suite.labels("cal")
    worst = 0.0
    for z in suite.logits("cal"):
        P = MeanReplacement(inputs="logits").fit(z, y).transform(z)
        worst = max(worst, confidence(binned_ece, y, P, n_bins=15))
    return worst


register(Claim(
    id="004.sec3.mrr_zero_ece",
    source=cite("004", "Sec. 3, eq. (3.1)"),
    statement=("Mean replacement recalibration (confidence := accuracy on the calibration split,"
               " prediction unchanged) has ECE exactly 0 on the split it was fitted on (checked"
               " for every model of the MNIST-5k suite)."),
    quantity="largest ECE of MRR on its own calibration split over the suite",
    check=_mrr_in_sample, reference=0.0, tolerance=1e-12,
    tolerance_reason=_EXACT + ". Region: all 26 suite models (accuracies 0.77 to 0.92)",
    chapter=RECALIBRATION, expect="illustrates",
    evidence=("true by construction: MRR sets every confidence to the accuracy it measures on the"
              " calibration split, so on that split the one non-empty bin's accuracy is its"
              " confidence and the ECE is 0 up to rounding (2e-14 on the worst of the 26"
              " models); no false neighbour of an identity of the construction can be near. The"
              " far control shows that the check can fail: on the test split the ECE is not 0"),
    controls=(Control("on the test split", "MRR's ECE is 0 on any split, not only on the one"
                      " its accuracy was fitted on.", _mrr_test_ece, kind="alternative"),),
))


def _mrr_test_gap(size: str, method: str = "MRR") -> float:
    """max over the suite of | ECE_test(method) - |acc_cal - acc_test| | (``method="TS"``: the
    control, a recalibration with many confidence values)."""
    worst = 0.0
    for rows in suite_recalibration_rows():
        by = _by_method(rows)
        acc_cal = by["MRR"]["model"].accuracy_
        worst = max(worst, abs(by[method]["ece"] - abs(acc_cal - by[method]["accuracy"])))
    return worst


register(Claim(
    id="004.sec3.mrr_ece_is_accuracy_gap",
    source=cite("004", "Sec. 3"),
    statement=("On a test split, MRR's ECE is exactly |calibration accuracy - test accuracy|: all"
               " its confidences are one number, so one bin holds every sample. Its ECE therefore"
               " shrinks like the sampling error of an accuracy, 1/sqrt(n), whatever the model."),
    quantity="largest |MRR's test ECE − |calibration accuracy − test accuracy|| over the suite",
    check=_mrr_test_gap, reference=0.0, tolerance=1e-12,
    tolerance_reason=(_EXACT + ". Region: all 26 suite models, 1,000 calibration and 1,000"
                      " test images"),
    chapter=RECALIBRATION, expect="illustrates",
    evidence=("true by construction: MRR's test confidences are all the calibration accuracy,"
              " so every test sample falls in one bin whose gap is |acc_cal - acc_test| (2e-14"
              " on the worst model, rounding); no near false neighbour of an identity of the"
              " construction exists. The far control shows that the check can fail: temperature"
              " scaling's test ECE is not the accuracy gap"),
    controls=(Control("temperature scaling", "Temperature scaling's test ECE is also the accuracy"
                      " gap |acc_cal - acc_test| (false: its confidences take many values).",
                      partial(_mrr_test_gap, method="TS"), kind="alternative"),),
))


def _accuracy_kept(size: str, methods=("TS", "MRR")) -> float:
    """max over the suite of |test accuracy after TS or MRR - test accuracy before| (``methods=
    ("HB", "IR")``: the control, recalibrations that act on each class separately)."""
    worst = 0.0
    for rows in suite_recalibration_rows():
        r = _by_method(rows)
        for method in methods:
            worst = max(worst, abs(r[method]["accuracy"] - r["baseline"]["accuracy"]))
    return worst


register(Claim(
    id="004.sec3.accuracy_kept",
    source=cite("004", "Sec. 3 and Table 1"),
    statement=("Temperature scaling and MRR leave the test accuracy unchanged (they never change"
               " the predicted class), for every model of the MNIST-5k suite."),
    quantity="largest |test accuracy after TS or MRR − before| over the suite",
    check=_accuracy_kept, reference=0.0, tolerance=0.0,
    tolerance_reason=("the predicted classes are compared exactly: no rounding is involved."
                      " Region: all 26 suite models"),
    chapter=RECALIBRATION, expect="illustrates",
    evidence=("true by construction: a positive temperature divides every logit by the same"
              " number and MRR changes only the confidence, so neither can move the arg max"
              " (difference exactly 0 on all 26 models); no near false neighbour of an identity"
              " of the construction exists. The far control shows that the check can fail: HB"
              " and IR, fitted class by class, change the test accuracy"),
    controls=(Control("histogram binning and isotonic regression", "HB and IR, fitted class by"
                      " class and renormalized, leave the test accuracy unchanged too.",
                      partial(_accuracy_kept, methods=("HB", "IR")), kind="alternative"),),
))


def proper_scores_gap(idx=None) -> float:
    """min over the suite of min(NLL_MRR - NLL_TS, Brier_MRR - Brier_TS) on the test split."""
    return float(min(min(r["MRR"][1] - r["TS"][1], r["MRR"][2] - r["TS"][2])
                     for r in _test_scores(idx)))


register(Claim(
    id="004.sec3.proper_scores_detect_mrr",
    source=cite("004", "Sec. 4 and Table 1", "first paragraph"),
    statement=("Either NLL or the Brier score alone detects the trivial MRR: on every model of the"
               " MNIST-5k suite both are worse (larger) after MRR than after temperature scaling."),
    quantity="smallest increase of NLL or Brier from TS to MRR over the suite",
    check=lambda size: proper_scores_gap(), reference=0.0, tolerance=0.0, comparison="ge",
    tolerance_reason=("a sign: the smallest gap over the suite must be positive; the gaps are"
                      " differences of means far larger than float64 rounding. Region: all 26"
                      " suite models, 1,000 test images"),
    chapter=RECALIBRATION, expect="finding", finding_holds=True,
    evidence=("On our data (not the paper's ImageNet models) the smallest gap over the 26 models"
              " is 0.026; bootstrap SD over the 1,000 test images 0.005 (200 resamples,"
              " practice.bootstrap_sd(practice.proper_scores_gap)), five SDs above zero."),
))


def mrr_lowest_share(idx=None) -> float:
    """Share of suite models on which MRR has the lowest test ECE of the five rows."""
    return float(np.mean([min(r, key=lambda m: r[m][0]) == "MRR" for r in _test_scores(idx)]))


register(Claim(
    id="004.sec3.mrr_lowest_ece",
    source=cite("004", "Sec. 3, Table 1 and Tables 2-6"),
    statement=("MRR dominates in terms of the pure calibration metrics: of the baseline, TS, HB,"
               " IR and MRR, MRR has the lowest ECE (15 equal-width bins, top label), on every"
               " model of the MNIST-5k suite."),
    quantity=("share of the suite's models on which MRR has the lowest test ECE of the five "
              "methods"),
    check=lambda size: mrr_lowest_share(), reference=1.0, tolerance=0.0,
    tolerance_reason=("a share of models, exact; the paper's tables imply every model. Region:"
                      " all 26 suite models"),
    chapter=RECALIBRATION, expect="finding", finding_holds=False,
    evidence=("A finding on our data, not an error of the paper's tables. MRR's test ECE equals"
              " |calibration accuracy - test accuracy| exactly (claim"
              " 004.sec3.mrr_ece_is_accuracy_gap), a sampling error of order"
              " sqrt(acc (1 - acc) (1/n_cal + 1/n_test)); temperature scaling's ECE is the"
              " model's residual miscalibration plus the binning noise of a calibrated model."
              " On the 26 models of the MNIST-5k suite (1,000 calibration and 1,000 test images)"
              " MRR has the lowest ECE on 17 (share 0.65, bootstrap SD 0.16 over the test"
              " images, 200 resamples, practice.bootstrap_sd(practice.mrr_lowest_share)): share 1,"
              " 'every model', lies two SDs above. The paper's 10,000 / 40,000 split makes its"
              " accuracy gap about three times smaller."
              " The paper's broader point -- a low ECE can be bought without improving the model"
              " -- stands (004.sec3.proper_scores_detect_mrr, 004.remark3.1.roc_auc)."),
))


def ir_beats_hb_share(idx=None) -> float:
    """Share of suite models on which IR has both a lower test ECE and a lower Brier than HB."""
    return float(np.mean([r["IR"][0] < r["HB"][0] and r["IR"][2] < r["HB"][2]
                          for r in _test_scores(idx)]))


register(Claim(
    id="004.sec5.2.ir_beats_hb",
    source=cite("004", "Sec. 5.2"),
    statement=("HB is worse calibrated than IR and IR generalizes better (the paper's ViT): on most"
               " models of the MNIST-5k suite (a share of at least 1/2) IR has both the lower test"
               " ECE and the lower Brier score."),
    quantity=("share of the suite's models on which IR has both a lower test ECE and a lower "
              "Brier score than HB"),
    check=lambda size: ir_beats_hb_share(), reference=0.5, tolerance=0.0, comparison="ge",
    tolerance_reason="a share of models, exact. Region: all 26 suite models, 1,000 test images",
    chapter=RECALIBRATION, expect="finding", finding_holds=True,
    evidence=("On our data IR has both the lower test ECE and the lower Brier score than HB on"
              " 24 of the 26 models (share 0.92, bootstrap SD 0.10 over the test images, 200"
              " resamples, practice.bootstrap_sd(practice.ir_beats_hb_share)), four SDs above 1/2;"
              " the paper's ViT predictions are not available offline."),
))


def _auc(score: np.ndarray, positive: np.ndarray) -> float:
    """ROC-AUC (Mann-Whitney, ties counted one half): P(score_pos > score_neg) + P(=) / 2."""
    from scipy.stats import rankdata

    ranks = rankdata(score)
    n1 = int(positive.sum())
    n0 = positive.size - n1
    return float((ranks[positive].sum() - n1 * (n1 + 1) / 2) / (n1 * n0))


def _confidence_auc(size: str, method: str = "MRR", worst: bool = True) -> float:
    """max over the suite of |AUC(confidence, correct) - 1/2| on the test split (``worst=False``:
    the smallest over the suite)."""
    y, probs = suite_recalibrated_test()
    gaps = []
    for by in probs:
        P = by[method]
        correct = P.argmax(axis=1) == y
        gaps.append(abs(_auc(P.max(axis=1), correct) - 0.5))
    return float(max(gaps) if worst else min(gaps))


register(Claim(
    id="004.remark3.1.roc_auc",
    source=cite("004", "Remark 3.1"),
    statement=("Trivial calibration such as MRR is detectable with ROC-AUC applied to the"
               " confidence as a predictor of correctness: MRR's confidences are one number, so"
               " their AUC is exactly 1/2 (no discrimination) on every model of the MNIST-5k"
               " suite."),
    quantity=("largest |AUC of MRR's confidence as a predictor of correctness − 1/2| over the "
              "suite"),
    check=_confidence_auc, reference=0.0, tolerance=1e-12,
    tolerance_reason=("exact: with one confidence value every rank is the mid-rank, and the"
                      " Mann-Whitney statistic is n1 n0 / 2 in float64 without rounding. Region:"
                      " all 26 suite models, 1,000 test images"),
    chapter=RECALIBRATION, expect="illustrates",
    evidence=("true by construction: MRR gives every test sample the same confidence, so every"
              " rank is the mid-rank and the AUC is exactly 1/2 (|AUC - 1/2| = 0 on all 26"
              " models); no near false neighbour of an identity of the construction exists. The"
              " far control shows that the check can fail: temperature scaling's confidences"
              " discriminate (|AUC - 1/2| at least 0.33 on every model)"),
    controls=(Control("temperature scaling", "Temperature scaling's confidences are as"
                      " uninformative: AUC 1/2 on some model of the suite (the smallest"
                      " |AUC - 1/2| over the suite is 0).",
                      partial(_confidence_auc, method="TS", worst=False), kind="alternative"),),
))


def _tf_errors(dist, *, calibration: bool = False) -> float:
    """The largest of the errors Prop D.2 sets to zero: binned ECE (15 bins), TCE_1, TCE_2^2,
    KS (top-label, the reading of the proofs, eqs. (10), (18), and the confidence reading of
    Gupta et al.), MMCE (Laplacian, width 0.4); exact except MMCE. ``calibration=True`` adds the
    canonical CE_2^2, for the control "t^f is calibrated" (squares: zero iff the error is)."""
    from ...theory import population as pop

    errors = [pop.binned_ece(dist, 15, exact=dist.is_exact), pop.tce(dist, 1, exact=dist.is_exact),
              pop.tce(dist, 2, exact=dist.is_exact, powered=True),
              pop.ks_error(dist, reading="proof", exact=dist.is_exact),
              pop.ks_error(dist, reading="confidence", exact=dist.is_exact), pop.mmce(dist)]
    if calibration:
        errors.append(pop.ce_p(dist, 2, exact=dist.is_exact, powered=True))
    return max(float(e) for e in errors)


@lru_cache(maxsize=2)
def _propD2_populations(size: str) -> tuple:
    """Exact finite populations (Fractions) split by the proof's hypothesis ACC(f) > 1/k:
    random ones (k = 2..5, forced collisions: tied predictions, shared coordinates, equal top
    values of different classes), a single atom, a constant predictor, one-hot truths (point
    masses) and f = truth (f calibrated)."""
    from fractions import Fraction

    from ...theory import population as pop

    rng = np.random.default_rng(302)
    want = 12 if size == "smoke" else 120
    high, low = [], []
    while len(high) < want or len(low) < want // 3:
        k = int(rng.integers(2, 6))
        d = pop.random_finite_distribution(rng, n_atoms=int(rng.integers(6, 10)), n_classes=k)
        (high if pop.accuracy(d, exact=True) > Fraction(1, k) else low).append(d)
    one = Fraction(1)
    third = [Fraction(1, 3)] * 3
    high += [
        pop.FiniteDistribution([one], [[Fraction(3, 4), Fraction(1, 4)]],
                               [[Fraction(1, 2) + Fraction(1, 8), Fraction(3, 8)]]),  # one atom
        pop.FiniteDistribution(third, [[one, 0, 0], [0, one, 0], [one, 0, 0]],          # constant f
                               [[Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]] * 3),
        pop.FiniteDistribution(third, [[one, 0, 0], [0, one, 0], [0, 0, one]],          # one-hot
                               [[Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)],
                                [Fraction(1, 4), Fraction(1, 2), Fraction(1, 4)],
                                [Fraction(1, 2), Fraction(1, 4), Fraction(1, 4)]]),
    ]
    truth = [[Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)],
             [Fraction(1, 8), Fraction(3, 4), Fraction(1, 8)]]
    high.append(pop.FiniteDistribution([Fraction(1, 2)] * 2, truth, truth))        # f calibrated
    return tuple(high), tuple(low)


def propD2_edge_population():
    """A population at the edge of the proof's hypothesis, ACC(f) = 1/k exactly (k = 3): f
    predicts class 1 with (1/6, 2/3, 1/6) and the truth is (1/2, 1/3, 1/6), so ACC(f) = 1/3;
    t^f is the uniform vector, whose first arg max (class 0) is right half of the time."""
    from fractions import Fraction

    from ...theory import population as pop

    return pop.FiniteDistribution([Fraction(1)], [[Fraction(1, 2), Fraction(1, 3), Fraction(1, 6)]],
                                  [[Fraction(1, 6), Fraction(2, 3), Fraction(1, 6)]])


def _propD2_population(size: str, variant: str = "claim") -> float:
    """max over the populations with ACC(f) > 1/k of the errors of t^f o f and |ACC change|.

    Controls: ``"calibrated"`` (CE_2 added: t^f calibrated too), ``"untransformed"`` (the
    errors of f itself), ``"low accuracy"`` (the populations with ACC(f) <= 1/k).
    """
    from ...theory import population as pop

    high, low = _propD2_populations(size)
    worst = 0.0
    chosen = {"low accuracy": low, "edge": (propD2_edge_population(),)}.get(variant, high)
    for d in chosen:
        t = d if variant == "untransformed" else pop.accuracy_preserving_transform(d)
        err = _tf_errors(t, calibration=(variant == "calibrated"))
        acc_change = float(abs(pop.accuracy(t, exact=True) - pop.accuracy(d, exact=True)))
        worst = max(worst, err, acc_change)
    return worst


register(Claim(
    id="003.propD.2",
    source=cite("003", "Prop D.2"),
    statement=("The transform t^f (the top entry replaced by the model's accuracy ACC(f), the rest"
               " spread evenly) has zero MMCE, KS, ECE and TCE_p (p = 1, 2) and keeps the accuracy,"
               " yet is not calibrated in general: exact population values (Fractions) with"
               " ACC(f) > 1/k, the assumption of the proof."),
    quantity=("largest MMCE, KS, ECE, TCE_p of t^f∘f or |accuracy change| over the populations "
              "with ACC(f) > 1/k"),
    check=_propD2_population, reference=0.0, tolerance=1e-12,
    tolerance_reason=("exact rational arithmetic for ECE, TCE, KS and the accuracy; MMCE in"
                      " float64 (a kernel sum of at most a hundred terms of size <= 1, rounding"
                      " below 1e-14). Region: k = 2..5, 6..9 atoms with tied predictions, shared"
                      " coordinates and equal top values of different classes; a single atom, a"
                      " constant predictor, one-hot truths and a calibrated f"),
    chapter=RECALIBRATION,
    controls=(
        Control("ACC(f) = 1/k", "The statement also holds at the edge of the proof's assumption,"
                " ACC(f) = 1/k exactly (k = 3: t^f is uniform, its first arg max moves and the"
                " accuracy changes).", partial(_propD2_population, variant="edge"),
                kind="boundary"),
        Control("t^f calibrated", "t^f o f is calibrated as well: the canonical CE_2 vanishes"
                " with the other errors (the 'not calibrated in general' part negated).",
                partial(_propD2_population, variant="calibrated"), kind="alternative"),
        Control("no transform", "The model f itself already has zero MMCE, KS, ECE and TCE_p.",
                partial(_propD2_population, variant="untransformed"), kind="alternative"),
        Control("ACC(f) <= 1/k", "The statement also holds without the proof's assumption"
                " ACC(f) > 1/k (the argmax and the accuracy then change).",
                partial(_propD2_population, variant="low accuracy"), kind="alternative"),
    ),
))


register(Claim(
    id="003.propD.2.all_models",
    source=cite("003", "Prop D.2", "'for all models'"),
    statement=("For ALL models f, as the proposition states, t^f o f has zero MMCE, KS, ECE and"
               " TCE_p and keeps the accuracy: exact population values on the populations with"
               " ACC(f) <= 1/k, which the statement includes and the proof's assumption excludes."),
    quantity=("largest MMCE, KS, ECE, TCE_p of t^f∘f or |accuracy change| over the populations "
              "with ACC(f) ≤ 1/k"),
    check=partial(_propD2_population, variant="low accuracy"), reference=0.0, tolerance=1e-12,
    tolerance_reason=("exact rational arithmetic (MMCE in float64, rounding below 1e-14); the"
                      " populations of 003.propD.2 with ACC(f) <= 1/k, k = 2..5"),
    chapter=RECALIBRATION, expect="disagrees",
    evidence=("Exact (Fractions): when ACC(f) <= 1/k, putting ACC(f) on the top class and"
              " spreading the rest evenly makes another class at least as large, so t^f moves"
              " the argmax: the accuracy changes and the errors are not zero (the measured value"
              " is the largest error or accuracy change over these populations). The proof"
              " assumes ACC(f) > 1/k ('in every practical setting'); the statement does not."),
    correction=("Prop D.2 holds for every model with ACC(f) > 1/k (exactly, claim 003.propD.2);"
                " for ACC(f) <= 1/k, t^f changes the argmax and the accuracy."),
))


def _ks_definition(size: str) -> float:
    """max over the populations with ACC(f) > 1/k of KS(t^f o f) read as Def C.2 literally."""
    from ...theory import population as pop

    high, _ = _propD2_populations(size)
    return max(float(pop.ks_error(pop.accuracy_preserving_transform(d), exact=True))
               for d in high)


register(Claim(
    id="003.propD.2.ks_definition",
    source=cite("003", "Prop D.2 with Def C.2"),
    statement=("KS(t^f o f) = 0 with KS as Def C.2 defines it (the class-wise conditional"
               " P(Y = k | f_k(X)) integrated against the law of f_k(X), weighted by P(C = k))."),
    quantity="largest KS(t^f∘f), with KS read as Def C.2, over the populations",
    check=_ks_definition, reference=0.0, tolerance=0.0,
    tolerance_reason="exact rational arithmetic; the same populations as 003.propD.2",
    chapter=RECALIBRATION, expect="disagrees",
    evidence=("Exact (Fractions): on the populations of 003.propD.2 with ACC(f) > 1/k, KS of Def"
              " C.2 is positive for t^f o f (the largest value is the measured one). Under Def"
              " C.2 the value f_k = ACC of class k is conditioned on alone, and"
              " P(Y = k | C = k) differs from ACC(f) unless every predicted class is equally"
              " accurate; the proof uses the top-label reading (eqs. (10), (18)), under which"
              " KS(t^f o f) = 0 (claim 003.propD.2). The same gap between Def C.2 and the proofs"
              " as 003.thm3.1.tce_ge_ks.definition."),
    correction=("KS(t^f o f) = 0 holds for the top-label KS of the proofs (eqs. (10), (18)); for"
                " KS as Def C.2 defines it, t^f o f has KS > 0 in general."),
))


def _tf_held_out(size: str, transform: bool = True, stop_above: float = math.inf) -> float:
    """max over the suite of max(ECE, TCE_1, TCE_2, KS, MMCE) of t^f on the TEST split, in units
    of the standard error sqrt(a (1 - a) (1/n_cal + 1/n_test)) of the accuracy difference
    (inf if the argmax changed). ``transform=False`` (the control): the model itself.

    ``stop_above``: return as soon as the running maximum exceeds it (the control stops at the
    claim's tolerance, 4 standard errors: the first model beyond it already rejects it, and the
    O(n^2) MMCE of the other 25 models is not needed)."""
    from ...theory import population as pop
    from ...recalibrate import AccuracyPreservingTransform, as_probabilities

    suite = default_suite()
    zc, zt = suite.logits("cal"), suite.logits("test")
    yc, yt = suite.labels("cal"), suite.labels("test")
    n_cal, n = yc.shape[0], yt.shape[0]
    onehot = np.eye(zt.shape[2])[yt]
    worst = 0.0
    for j in range(len(suite)):
        P = (AccuracyPreservingTransform(kind="sorted", inputs="logits").fit(zc[j], yc)
             .transform(zt[j]) if transform else as_probabilities(zt[j], "logits"))
        if np.any(P.argmax(axis=1) != zt[j].argmax(axis=1)):
            return float("inf")
        a = float(np.mean(P.argmax(axis=1) == yt))
        se = np.sqrt(a * (1 - a) * (1 / n_cal + 1 / n))
        worst = max(worst, _tf_errors(pop.FiniteDistribution(np.full(n, 1 / n), onehot, P)) / se)
        if worst > stop_above:
            break
    return worst


register(Claim(
    id="003.propD.2.held_out",
    source=cite("003", "Prop D.2"),
    statement=("On a held-out split the errors of Prop D.2 of t^f (fitted on the calibration"
               " split) are sampling noise: for every model of the MNIST-5k suite, ECE, TCE_1,"
               " TCE_2, KS and MMCE on the test split are within 4 standard errors of 0 (all"
               " equal |ACC_cal - ACC_test|: one confidence value), and the argmax is kept."),
    quantity=("largest of ECE, TCE_1, TCE_2, KS and MMCE of t^f on the test split over the "
              "suite, in standard errors of an accuracy difference"),
    check=_tf_held_out, reference=0.0, tolerance=4.0, comparison="le",
    tolerance_reason=("the accuracy ACC(f) is estimated on the 1,000 calibration images: the"
                      " errors on the 1,000 test images are |ACC_cal - ACC_test|, a difference"
                      " of two independent accuracies with standard error sqrt(a (1 - a)"
                      " (1/n_cal + 1/n_test)); 4 standard errors over 26 models (the largest of"
                      " 26 standard normal moduli exceeds 4 with probability 0.2%). Region: all"
                      " 26 suite models (accuracies 0.77 to 0.92)"),
    chapter=RECALIBRATION, expect="finding", finding_holds=True,
    evidence=("a result on our data (the MNIST-5k suite; Prop D.2 itself is about populations,"
              " checked exactly by 003.propD.2): on the test split every error of t^f equals"
              " |ACC_cal - ACC_test| (one confidence value), and the largest over the 26 models"
              " is 2.66 standard errors of that difference, what the largest of 26 sampling"
              " errors typically is (the expected maximum of 26 standard normal moduli is about"
              " 2.2, its 95% quantile 3.0); the untransformed models' errors reach 26 standard"
              " errors on the first model of the suite and 32 on the worst (the control)"),
    controls=(Control("no transform", "The untransformed models are as close to zero error on"
                      " the test split (measured until the first model beyond 4 standard"
                      " errors).", partial(_tf_held_out, transform=False, stop_above=4.0),
                      kind="alternative"),),
))
