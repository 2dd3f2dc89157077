"""Claims checked in Part IV, chapter *Which recalibrator, for which utility* (paper 001, Sec. 5
and App. C): the printed tables' internal consistency, and the comparison of recalibrators on
our data (:func:`compare_for_utilities`, :func:`ecdf_study`, :func:`prior_bundles`).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .. import utility as ut
from ..measures import binned_ece, classwise, confidence
from ..patching import UtilityPatching, comb_class
from ..recalibrate import (DegenerateFitWarning, DirichletCalibration, HistogramBinning,
                           IsotonicCalibration, MatrixScaling, TemperatureScaling,
                           VectorScaling, as_probabilities)
from ..scores import brier_loss
from ._registry import Claim, register

CHAPTER = "book/utility/recalibrators"
SOURCE = "Hegazy, Jordan & Dieuleveut (AISTATS 2026)"

# --------------------------------------------------------------------------------------------
# the printed tables (transcribed)
# --------------------------------------------------------------------------------------------
#: Table 1 (ViT-ImageNet-1K, "Mean +- 2 std. errors over 10 splits"): (mean, +-) for Brier
#: (x1e2), CWE^bin (x1e4), TCE^bin (x1e3), U_comb (x1e3).
TABLE1 = {
    "Uncalibrated": {"brier": (22.6, 0.29), "cwe": (2.46, 0.0212), "tce": (94.2, 2.03),
                     "comb": (124.0, 0.924)},
    "Dirichlet": {"brier": (21.3, 0.228), "cwe": (1.34, 0.0392), "tce": (13.7, 1.37),
                  "comb": (26.1, 0.67)},
    "IR": {"brier": (22.9, 0.235), "cwe": (1.1, 0.0164), "tce": (33.1, 1.59),
           "comb": (54.1, 0.94)},
    "Temp. Scaling": {"brier": (21.8, 0.252), "cwe": (1.26, 0.0214), "tce": (30.0, 2.55),
                      "comb": (45.2, 0.53)},
    "Vector Scaling": {"brier": (22.8, 0.238), "cwe": (1.54, 0.0395), "tce": (35.1, 2.53),
                       "comb": (37.4, 2.13)},
    "Patching": {"brier": (21.6, 0.31), "cwe": (1.56, 0.0432), "tce": (10.3, 2.04),
                 "comb": (19.4, 2.55)},
}

#: Table 7 (the same model and data, "mean +- std"): Brier (x1e2), CWE^bin (x1e4), TCE^bin
#: (x1e3), U_CWE (x1e4), U_topK (x1e3).
TABLE7 = {
    "Uncalibrated": {"brier": (22.6, 0.324), "cwe": (2.46, 0.0237), "tce": (94.2, 2.27),
                     "ucwe": (30.4, 0.976), "topk": (124.0, 1.03)},
    "Dirichlet": {"brier": (21.3, 0.361), "cwe": (1.34, 0.0438), "tce": (13.7, 1.53),
                  "ucwe": (27.0, 0.5), "topk": (26.1, 0.7)},
    "IR": {"brier": (22.9, 0.371), "cwe": (1.1, 0.0183), "tce": (33.1, 1.78),
           "ucwe": (27.4, 0.5), "topk": (54.1, 0.9)},
    "Temp. Scaling": {"brier": (21.8, 0.398), "cwe": (1.26, 0.0239), "tce": (30.0, 2.85),
                      "ucwe": (28.1, 0.6), "topk": (45.2, 0.5)},
    "Vector Scaling": {"brier": (22.8, 0.376), "cwe": (1.54, 0.0442), "tce": (35.1, 2.83),
                       "ucwe": (28.3, 0.3), "topk": (37.4, 2.0)},
    "Patching": {"brier": (21.6, 0.347), "cwe": (1.56, 0.0483), "tce": (10.3, 2.28),
                 "ucwe": (28.9, 0.816), "topk": (19.4, 2.85)},
}

#: Tables 2-8, means only: CWE^bin (x1e4), TCE^bin (x1e3), U_CWE (x1e4), U_topK (x1e3), per
#: method in the order Uncalibrated, Dirichlet, IR, TS, VS, Patching.
TABLES_2_8 = {
    "Table 2 (RepVGG-CIFAR10)": [(39.6, 37.3, 106.0, 39.0), (47.0, 17.6, 89.9, 18.5),
                                 (24.9, 9.05, 76.9, 15.4), (44.2, 19.6, 89.7, 22.8),
                                 (47.6, 17.0, 95.3, 16.1), (35.3, 10.5, 73.3, 10.0)],
    "Table 3 (ResNet-CIFAR10)": [(48.2, 40.5, 120.0, 41.3), (37.8, 14.4, 85.8, 14.2),
                                 (28.8, 10.2, 77.9, 16.2), (46.9, 14.2, 92.9, 17.1),
                                 (41.9, 13.1, 84.7, 13.1), (42.4, 10.4, 79.2, 11.0)],
    "Table 4 (RepVGG-CIFAR100)": [(15.2, 58.1, 72.8, 55.6), (16.9, 49.1, 78.0, 51.1),
                                  (14.4, 30.4, 66.2, 49.5), (16.2, 49.1, 76.0, 65.9),
                                  (17.8, 50.5, 75.0, 51.2), (18.4, 24.1, 65.3, 24.2)],
    "Table 5 (ResNet-CIFAR100)": [(14.9, 140.0, 80.1, 143.0), (15.9, 48.5, 74.0, 61.2),
                                  (15.4, 34.3, 70.7, 71.2), (15.0, 30.3, 67.2, 29.5),
                                  (18.1, 31.4, 76.0, 36.1), (21.8, 20.2, 68.6, 27.1)],
    "Table 6 (ResNet-ImageNet)": [(1.42, 87.0, 31.4, 91.0), (10.9, 99.0, 1860.0, 990.0),
                                  (1.45, 39.3, 30.5, 65.2), (1.59, 51.0, 31.5, 59.3),
                                  (1.9, 69.6, 31.6, 67.1), (2.15, 20.2, 32.1, 40.1)],
    "Table 7 (ViT-ImageNet)": [(2.46, 94.2, 30.4, 124.0), (1.34, 13.7, 27.0, 26.1),
                               (1.1, 33.1, 27.4, 54.1), (1.26, 30.0, 28.1, 45.2),
                               (1.54, 35.1, 28.3, 37.4), (1.56, 10.3, 28.9, 19.4)],
    "Table 8 (Yahoo)": [(100.0, 31.3, 213.0, 33.2), (67.6, 11.1, 158.0, 33.6),
                        (38.1, 10.1, 150.0, 30.8), (95.9, 18.8, 213.0, 31.4),
                        (80.1, 13.3, 169.0, 31.2), (72.7, 12.9, 172.0, 21.7)],
}

_ROUNDING = ("printed to three significant digits: each entry is within 0.5 unit of its last"
             " digit, a relative error below 0.5% for the entries compared")


def _sig3(x: float) -> bool:
    """Printed with at least three significant digits (e.g. 0.924, 22.6; not 0.5 or 2)."""
    text = f"{x:g}"
    digits = text.replace(".", "").lstrip("0")
    return len(digits) >= 3


def error_bar_ratios() -> list[dict]:
    """Table 1's +- over Table 7's +- for every entry printed with >= 3 significant digits."""
    pairs = {"brier": "brier", "cwe": "cwe", "tce": "tce", "comb": "topk"}
    rows = []
    for method, cols in TABLE1.items():
        for c1, c7 in pairs.items():
            e1, e7 = cols[c1][1], TABLE7[method][c7][1]
            if _sig3(e1) and _sig3(e7):
                rows.append({"method": method, "column": c1, "table1": e1, "table7": e7,
                             "ratio": e1 / e7})
    return rows


register(Claim(
    id="001.table1.error_bars",
    source=f"{SOURCE}, Tables 1 and 7 (captions)",
    statement=("Table 1 reports mean +- 2 standard errors over 10 splits and Table 7 mean +- std"
               " of the same experiment, so Table 1's +- should be 2/sqrt(10) = 0.632 times"
               " Table 7's (median ratio over the entries printed to 3 digits)."),
    check=lambda size: float(np.median([r["ratio"] for r in error_bar_ratios()])),
    reference=2 / math.sqrt(10), tolerance=0.01, tolerance_reason=_ROUNDING, chapter=CHAPTER,
    expect="disagrees",
    evidence=("The ratios cluster at two values: 0.632 = 2/sqrt(10) for the Brier entries of"
              " Dirichlet, IR, temperature and vector scaling, and 0.893-0.897 = sqrt(0.8) for"
              " the 14 other three-digit entries (every CWE and TCE entry and the U_comb/U_topK"
              " pairs of the uncalibrated model and patching; the two-digit Brier entries of"
              " those two methods give 0.895 and 0.893 too); the median is 0.894. The two captions cannot"
              " both describe one computation: the Table 1 bars of most entries are 2 SE with 5"
              " splits, or Table 7's are not standard deviations over the same 10 splits."),
))


def _brier_worsens() -> float:
    """Largest Brier increase over the uncalibrated model in Table 1 (x1e2)."""
    base = TABLE1["Uncalibrated"]["brier"][0]
    return max(v["brier"][0] - base for k, v in TABLE1.items() if k != "Uncalibrated")


register(Claim(
    id="001.sec5.all_improve_brier",
    source=f"{SOURCE}, Sec. 5 and Table 1",
    statement=("\"As expected, all post-hoc methods improve Brier and calibration errors\""
               " (measured: the largest Brier increase over the uncalibrated model in Table 1,"
               " x1e2; the statement says it is negative)."),
    check=lambda size: _brier_worsens(), reference=0.0, comparison="le", tolerance=0.05,
    tolerance_reason="one unit in the last printed digit (0.1) halved: rounding of two entries",
    chapter=CHAPTER, expect="disagrees",
    evidence=("Table 1 prints Brier 22.9 for isotonic regression and 22.8 for vector scaling"
              " against 22.6 for the uncalibrated model: both worsen it, by more than the"
              " printed error bars of the difference allow to attribute to rounding."),
))


def _comb_vs_max() -> float:
    """max |U_comb (Table 1) - max(U_CWE, U_topK) (Table 7)| in units of 1e-3."""
    worst = 0.0
    for method, cols in TABLE1.items():
        t7 = TABLE7[method]
        expect = max(t7["ucwe"][0] / 10, t7["topk"][0])      # U_CWE x1e4 -> x1e3
        worst = max(worst, abs(cols["comb"][0] - expect))
    return worst


register(Claim(
    id="001.table1.comb_is_max",
    source=f"{SOURCE}, Table 1 and Table 7",
    statement=("U_comb = U_CWE u U_topK, so UC(f, U_comb) = max(UC(f, U_CWE), UC(f, U_topK)):"
               " Table 1's U_comb column equals that maximum from Table 7 (x1e3)."),
    check=lambda size: _comb_vs_max(), reference=0.0, tolerance=0.05,
    tolerance_reason="half a unit of the last printed digit (0.1 x1e-3)", chapter=CHAPTER,
))


def _binned_bound_slack() -> float:
    """max over Tables 2-8 of TCE - 15 UC_topK (x1e3) and CWE - 15 UC_CWE (x1e4)."""
    worst = -math.inf
    for rows in TABLES_2_8.values():
        for cwe, tce, ucwe, topk in rows:
            worst = max(worst, tce - 15 * topk, cwe - 15 * ucwe)
    return worst


register(Claim(
    id="001.tables.binned_bound",
    source=f"{SOURCE}, Tables 2-8 with App. B.2",
    statement=("With 15 bins, TCE^bin <= 15 UC(f, U_TCE) <= 15 UC(f, U_topK) (top-1 is in U_topK)"
               " and CWE^bin <= 15 UC(f, U_CWE): every row of Tables 2-8 satisfies both."),
    check=lambda size: _binned_bound_slack(), reference=0.0, comparison="le", tolerance=0.0,
    tolerance_reason="the slack is hundreds of units; rounding cannot matter", chapter=CHAPTER,
))


# --------------------------------------------------------------------------------------------
# our data
# --------------------------------------------------------------------------------------------
METHODS = {
    "Uncalibrated": None,
    "TS": lambda inputs: TemperatureScaling(inputs=inputs),
    "Vector": lambda inputs: VectorScaling(inputs=inputs),
    "Matrix": lambda inputs: MatrixScaling(inputs=inputs),
    "Dirichlet": lambda inputs: DirichletCalibration(inputs=inputs),
    "HB": lambda inputs: HistogramBinning(inputs=inputs),
    "IR": lambda inputs: IsotonicCalibration(inputs=inputs),
    "Patching": lambda inputs: UtilityPatching(inputs=inputs),
}


def _scores(y, P) -> dict:
    C = P.shape[1]
    comb = ut.utility_calibration(y, P, comb_class(C))
    cwe_uc = ut.utility_calibration(y, P, ut.classwise(C)).max
    topk_uc = ut.utility_calibration(y, P, ut.top_k(C)).max
    return {
        "accuracy": float(np.mean(P.argmax(axis=1) == y)),
        "Brier": float(brier_loss(y, P)),
        "TCE_bin": float(confidence(binned_ece, y, P, n_bins=15, binning="mass")),
        "CWE_bin": float(classwise(binned_ece, y, P, n_bins=15, binning="mass")),
        "U_CWE": cwe_uc, "U_topK": topk_uc,
        "U_dcg": ut.utility_calibration(y, P, ut.dcg(C)).max,
        "U_comb": comb.max,
    }


def fit_all(X_cal, y_cal, X_test, inputs: str, methods=METHODS) -> dict:
    """Recalibrated test probabilities of every method (``"Uncalibrated"``: the model's)."""
    out = {}
    for name, make in methods.items():
        if make is None:
            out[name] = as_probabilities(X_test, inputs, "X_test")
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateFitWarning)
            out[name] = make(inputs).fit(X_cal, y_cal).transform(X_test)
    return out


def compare_for_utilities(X, y, *, inputs: str, n_splits: int, rng, cal_fraction: float = 0.7,
                          methods=METHODS):
    """Table 1-8 columns for every method, over random calibration/test splits (C.1: 70/30).

    Returns ``(per_split, last)``: a list of ``{"split", "method", column: value}`` rows and
    the recalibrated test predictions of the last split (for the eCDFs).
    """
    rng = np.random.default_rng(rng)
    n = len(y)
    rows, last = [], None
    for s in range(n_splits):
        perm = rng.permutation(n)
        cut = int(round(cal_fraction * n))
        cal, test = perm[:cut], perm[cut:]
        preds = fit_all(X[cal], y[cal], X[test], inputs, methods)
        for name, P in preds.items():
            rows.append({"split": s, "method": name, **_scores(y[test], P)})
        last = (y[test], preds)
    return rows, last


def ecdf_study(y, preds: dict, *, n_utilities: int, rng, delta: float = 0.05) -> dict:
    """eCDFs over sampled U_lin and U_rank (the same utilities for every method)."""
    C = next(iter(preds.values())).shape[1]
    rng = np.random.default_rng(rng)
    classes = {"U_lin": ut.sample_linear(C, n_utilities, rng=rng),
               "U_rank": ut.sample_rank(C, n_utilities, rng=rng)}
    return {cls: {m: ut.utility_ecdf(y, P, fam, delta=delta) for m, P in preds.items()}
            for cls, fam in classes.items()}


def prior_bundles(y, preds: dict, methods=("Uncalibrated", "Patching"), *, sparsities,
                  draws: int, n_utilities: int, rng) -> dict:
    """App. C.3: eCDFs of ``methods`` under sparse priors (``k`` active classes), several draws.

    Returns ``{method: array (n_priors, n_utilities) of sorted errors}``.
    """
    rng = np.random.default_rng(rng)
    C = next(iter(preds.values())).shape[1]
    out = {m: [] for m in methods}
    for k in sparsities:
        for _ in range(draws):
            fam = ut.sample_linear(C, n_utilities, rng=rng, sparsity=int(k))
            for m in methods:
                out[m].append(np.sort(ut.utility_calibration(y, preds[m], fam).values))
    return {m: np.array(v) for m, v in out.items()}
