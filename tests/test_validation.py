"""Input validation: every bad input gets a clear ValueError/TypeError naming the argument.

Each check is run against every public function that accepts that input (parametrized),
and asserts three things: the exception type, the key words of the message (argument
name and problem, and the index where there is one), and that the exception was raised
inside calnotes -- never from deep inside numpy or Python's argument handling.
"""

import math
import os

import numpy as np
import pytest

import calnotes as cn
from calnotes._validate import ROW_SUM_ATOL, check_rng

CALNOTES_DIR = os.path.dirname(cn.__file__)


def raises_here(exc, match, func, *args, **kwargs):
    """pytest.raises plus: the innermost frame of the traceback is a calnotes module."""
    with pytest.raises(exc, match=match) as info:
        func(*args, **kwargs)
    origin = str(info.traceback[-1].path)
    assert origin.startswith(CALNOTES_DIR), f"raised from {origin}, not from calnotes"
    return info


def _wrapped_l1(y, p, **kw):
    """A callable without a column kernel (exercises the generic aggregation path)."""
    return cn.l1_qece(y, p, **kw)


# ----------------------------------------------------------------------------- registries
# Binary measures (y_prob of shape (n,)); n = 4 in the inputs below, so n_bins = 2.
BINARY = {
    "binned_ece": lambda y, p: cn.binned_ece(y, p, n_bins=2),
    "binned_ece_mass": lambda y, p: cn.binned_ece(y, p, n_bins=2, p=2, binning="mass"),
    "l1_qece": lambda y, p: cn.l1_qece(y, p, n_bins=2),
    "l2_qece": lambda y, p: cn.l2_qece(y, p, n_bins=2),
    "max_calibration_error": lambda y, p: cn.max_calibration_error(y, p, n_bins=2),
    "ks_calibration_error": lambda y, p: cn.ks_calibration_error(y, p),
    "unbinned_ece": lambda y, p: cn.unbinned_ece(y, p),
    "reliability_stats": lambda y, p: cn.reliability_stats(y, p, n_bins=2),
}
# Multi-class entry points (y_prob of shape (n, k)).
MULTI = {
    "classwise_l2_qece": lambda y, P: cn.classwise(cn.l2_qece, y, P, n_bins=2),
    "classwise_binned_ece": lambda y, P: cn.classwise(cn.binned_ece, y, P, n_bins=2),
    "classwise_ks": lambda y, P: cn.classwise(cn.ks_calibration_error, y, P),
    "classwise_generic": lambda y, P: cn.classwise(_wrapped_l1, y, P, n_bins=2),
    "confidence_l1_qece": lambda y, P: cn.confidence(cn.l1_qece, y, P, n_bins=2),
    "confidence_unbinned": lambda y, P: cn.confidence(cn.unbinned_ece, y, P),
    "confidence_generic": lambda y, P: cn.confidence(_wrapped_l1, y, P, n_bins=2),
    "tce": lambda y, P: cn.tce(y, P, n_bins=2),
    "cwce": lambda y, P: cn.cwce(y, P, n_bins=2),
    "confidence_scores": lambda y, P: cn.confidence_scores(y, P),
}
# Proper losses accept both shapes.
LOSSES = {
    "log_loss": cn.log_loss,
    "brier_loss": cn.brier_loss,
    "spherical_loss": cn.spherical_loss,
    "zero_one_loss": cn.zero_one_loss,
}
# Everything that takes a binary (n,) y_prob, including the losses.
ANY_BINARY = {**BINARY, **LOSSES}
# Everything that takes an (n, k) y_prob.
ANY_MULTI = {**MULTI, **LOSSES}

Y4 = [0, 1, 1, 0]
P4 = [0.1, 0.6, 0.7, 0.4]
Y4K = [0, 1, 2, 1]
P4K = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]]


def test_registries_accept_good_input():
    # The fixtures above are valid: every entry point runs on them (so the failures below
    # are caused by the one bad ingredient each test injects).
    for f in BINARY.values():
        f(Y4, P4)
    for f in ANY_MULTI.values():
        f(Y4K, P4K)
    for f in LOSSES.values():
        f(Y4, P4)


# ----------------------------------------------------------------------------- y_prob, binary

BAD_BINARY_PROB = [
    ("nan", [0.1, 0.6, float("nan"), 0.4], ValueError, r"y_prob: non-finite value nan at index \[2\]"),
    ("inf", [0.1, math.inf, 0.7, 0.4], ValueError, r"y_prob: non-finite value inf at index \[1\]"),
    ("-inf", [-math.inf, 0.6, 0.7, 0.4], ValueError, r"y_prob: non-finite value -inf at index \[0\]"),
    ("above_one", [0.1, 0.6, 0.7, 1.5], ValueError, r"y_prob: value .*1\.5.* at index \[3\] is outside \[0, 1\]"),
    ("below_zero", [-0.1, 0.6, 0.7, 0.4], ValueError, r"y_prob: value .*-0\.1.* at index \[0\] is outside \[0, 1\]"),
    # No silent clipping: 1 + 1e-7 is an error.
    ("barely_above_one", [0.1, 1.0000001, 0.7, 0.4], ValueError, r"y_prob: value .*1\.0000001.* at index \[1\] is outside"),
    ("strings", ["a", "b", "c", "d"], TypeError, r"y_prob: could not convert"),
    ("scalar", 0.5, ValueError, r"y_prob: expected shape \(n,\) or \(n, k\), got shape \(\)"),
    ("ragged", [[0.1, 0.9], [0.5], [0.2, 0.8], [0.3, 0.7]], (TypeError, ValueError), r"y_prob"),
]


@pytest.mark.parametrize("name", ANY_BINARY)
@pytest.mark.parametrize("case, p, exc, match", BAD_BINARY_PROB, ids=[c[0] for c in BAD_BINARY_PROB])
def test_bad_binary_probabilities(name, case, p, exc, match):
    raises_here(exc, match, ANY_BINARY[name], Y4, p)


@pytest.mark.parametrize("name", BINARY)
def test_matrix_to_binary_measure_points_to_aggregations(name):
    raises_here(ValueError, r"y_prob: a binary measure needs shape \(n,\).*got shape \(4, 3\)"
                r".*classwise.*confidence", BINARY[name], Y4K, P4K)


@pytest.mark.parametrize("name", BINARY)
def test_single_column_to_binary_measure(name):
    raises_here(ValueError, r"y_prob: .*shape \(4, 1\)", BINARY[name], Y4, [[v] for v in P4])


@pytest.mark.parametrize("name", ANY_BINARY)
def test_empty_input(name):
    raises_here(ValueError, r"y_prob: empty input \(n = 0\)", ANY_BINARY[name], [], [])


def test_messages_show_plain_numbers():
    # The offending value is shown as the number the user typed ("1.5"), not as numpy's
    # repr of a scalar ("np.float64(1.5)" under numpy >= 2), which makes messages depend
    # on the numpy version.  One focused test; the parametrized tests above and below
    # only require the key words.
    from calnotes._validate import check_labels, check_probabilities

    with pytest.raises(ValueError) as info:
        check_probabilities([0.1, 1.5])
    assert str(info.value) == ("y_prob: value 1.5 at index [1] is outside [0, 1]; pass"
                               " probabilities, not scores or logits")
    with pytest.raises(ValueError) as info:
        check_labels([0, 0.5], n_classes=2)
    assert str(info.value) == "y_true: label 0.5 at index 1 is not an integer"


# ----------------------------------------------------------------------------- y_prob, (n, k)

BAD_MULTI_PROB = [
    ("nan", [[0.7, 0.2, 0.1], [0.1, 0.8, float("nan")], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]],
     ValueError, r"y_prob: non-finite value nan at index \[1, 2\]"),
    ("inf", [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [math.inf, 0.3, 0.4], [0.6, 0.3, 0.1]],
     ValueError, r"y_prob: non-finite value inf at index \[2, 0\]"),
    ("negative", [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.5, -0.1]],
     ValueError, r"y_prob: value .*-0\.1.* at index \[3, 2\] is outside \[0, 1\]"),
    ("row_sum", [[0.7, 0.2, 0.1], [0.5, 0.6, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]],
     ValueError, r"y_prob: row 1 sums to 1\.2, not 1 .*tolerance 0\.0001.*not scores or logits"),
    ("logits", [[2.0, 0.5, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]],
     ValueError, r"y_prob: value .*2\.0.* at index \[0, 0\] is outside \[0, 1\]"),
    ("one_column", [[1.0], [1.0], [1.0], [1.0]],
     ValueError, r"y_prob: a 2-d array needs k >= 2 columns.*shape \(4, 1\)"),
    ("three_d", np.full((4, 3, 1), 1 / 3), ValueError, r"y_prob: expected .*got shape \(4, 3, 1\)"),
    ("ragged", [[0.7, 0.2, 0.1], [0.1, 0.9], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]],
     (TypeError, ValueError), r"y_prob"),
]


MULTI_PROB_CASES = [pytest.param(name, *case[1:], id=f"{case[0]}-{name}")
                    for case in BAD_MULTI_PROB for name in ANY_MULTI]


@pytest.mark.parametrize("name, P, exc, match", MULTI_PROB_CASES)
def test_bad_multiclass_probabilities(name, P, exc, match):
    raises_here(exc, match, ANY_MULTI[name], Y4K, P)


@pytest.mark.parametrize("name", MULTI)
def test_vector_to_multiclass_entry_point(name):
    raises_here(ValueError, r"y_prob: expected a \(n, k\) matrix.*got shape \(4,\)"
                r".*binary problem with p = P\(y=1\): binned_ece\(y, p\)", MULTI[name], Y4, P4)


@pytest.mark.parametrize("name", MULTI)
def test_empty_multiclass(name):
    raises_here(ValueError, r"y_prob: empty input", MULTI[name], [], np.zeros((0, 3)))


@pytest.mark.parametrize("name", ANY_MULTI)
def test_row_sum_tolerance_is_the_documented_one(name):
    # ROW_SUM_ATOL = 1e-4: a row off by half of it passes, a row off by twice it fails.
    assert ROW_SUM_ATOL == 1e-4
    ok = [[0.7, 0.2, 0.1 + ROW_SUM_ATOL / 2], P4K[1], P4K[2], P4K[3]]
    ANY_MULTI[name](Y4K, ok)
    too_high = [[0.7, 0.2, 0.1 + 2 * ROW_SUM_ATOL], P4K[1], P4K[2], P4K[3]]
    raises_here(ValueError, r"y_prob: row 0 sums to 1\.0002", ANY_MULTI[name], Y4K, too_high)
    too_low = [P4K[0], P4K[1], P4K[2], [0.6, 0.3, 0.1 - 2 * ROW_SUM_ATOL]]
    raises_here(ValueError, r"y_prob: row 3 sums to 0\.9998", ANY_MULTI[name], Y4K, too_low)


# ----------------------------------------------------------------------------- y_true

BAD_BINARY_LABELS = [
    ("out_of_range", [0, 1, 2, 0], ValueError,
     r"y_true: label 2 at index 2 is out of range; expected integers in 0\.\.1"),
    ("negative", [0, -1, 1, 0], ValueError, r"y_true: label -1 at index 1 is out of range"),
    ("non_integer_float", [0, 0.5, 1, 0], ValueError,
     r"y_true: label .*0\.5.* at index 1 is not an integer"),
    ("nan_label", [0, 1, float("nan"), 0], ValueError, r"y_true: non-finite label nan at index 2"),
    ("string_labels", ["a", "b", "a", "b"], TypeError, r"y_true: labels must be integers"),
    ("too_short", [0, 1, 1], ValueError, r"y_true: has 3 labels but the predictions have 4 rows"),
    ("too_long", [0, 1, 1, 0, 1], ValueError, r"y_true: has 5 labels but the predictions have 4 rows"),
    ("two_d", [[0, 1], [1, 1]], ValueError, r"y_true: expected a 1-d array of labels"),
    ("one_hot", [[0, 1], [1, 0]], ValueError, r"y_true: labels of shape \(2, 2\) look one-hot"),
    ("empty_labels", [], ValueError, r"y_true: empty input"),
]


@pytest.mark.parametrize("name", ANY_BINARY)
@pytest.mark.parametrize("case, y, exc, match", BAD_BINARY_LABELS, ids=[c[0] for c in BAD_BINARY_LABELS])
def test_bad_binary_labels(name, case, y, exc, match):
    raises_here(exc, match, ANY_BINARY[name], y, P4)


BAD_MULTI_LABELS = [
    ("out_of_range", [0, 1, 3, 1], ValueError,
     r"y_true: label 3 at index 2 is out of range; expected integers in 0\.\.2"),
    ("non_integer_float", [0, 1, 1.5, 1], ValueError, r"y_true: label .*1\.5.* at index 2 is not an integer"),
    ("mismatch", [0, 1, 2], ValueError, r"y_true: has 3 labels but the predictions have 4 rows"),
]


@pytest.mark.parametrize("name", ANY_MULTI)
@pytest.mark.parametrize("case, y, exc, match", BAD_MULTI_LABELS, ids=[c[0] for c in BAD_MULTI_LABELS])
def test_bad_multiclass_labels(name, case, y, exc, match):
    raises_here(exc, match, ANY_MULTI[name], y, P4K)


# ----------------------------------------------------------------------------- n_bins

# Binned entry points as functions of n_bins (n = 4 samples).
BINNED = {
    "binned_ece": lambda m: cn.binned_ece(Y4, P4, n_bins=m),
    "binned_ece_mass": lambda m: cn.binned_ece(Y4, P4, n_bins=m, binning="mass"),
    "l1_qece": lambda m: cn.l1_qece(Y4, P4, n_bins=m),
    "l2_qece": lambda m: cn.l2_qece(Y4, P4, n_bins=m),
    "max_calibration_error": lambda m: cn.max_calibration_error(Y4, P4, n_bins=m),
    "reliability_stats": lambda m: cn.reliability_stats(Y4, P4, n_bins=m),
    "classwise_l2_qece": lambda m: cn.classwise(cn.l2_qece, Y4K, P4K, n_bins=m),
    "classwise_binned_ece": lambda m: cn.classwise(cn.binned_ece, Y4K, P4K, n_bins=m),
    "classwise_generic": lambda m: cn.classwise(_wrapped_l1, Y4K, P4K, n_bins=m),
    "confidence_l1_qece": lambda m: cn.confidence(cn.l1_qece, Y4K, P4K, n_bins=m),
    "confidence_mce": lambda m: cn.confidence(cn.max_calibration_error, Y4K, P4K, n_bins=m),
    "tce": lambda m: cn.tce(Y4K, P4K, n_bins=m),
    "cwce": lambda m: cn.cwce(Y4K, P4K, n_bins=m),
    "equal_mass_bins": lambda m: cn.equal_mass_bins(P4, m),
    "assign_bins_mass": lambda m: cn.assign_bins(P4, m, "mass"),
    "equal_mass_bin_sizes": lambda m: cn.equal_mass_bin_sizes(4, m),
}

BAD_N_BINS = [
    ("zero", 0, ValueError, r"n_bins: expected a positive integer, got 0"),
    ("negative", -3, ValueError, r"n_bins: expected a positive integer, got -3"),
    ("float", 2.0, TypeError, r"n_bins: expected a positive integer, got 2\.0"),
    ("numpy_float", np.float64(2.0), TypeError, r"n_bins: expected a positive integer"),
    ("bool", True, TypeError, r"n_bins: expected a positive integer, got True"),
    ("string", "2", TypeError, r"n_bins: expected a positive integer, got '2'"),
    ("none", None, TypeError, r"n_bins: expected a positive integer, got None"),
    ("more_than_n", 5, ValueError, r"n_bins: 5 bins for 4 samples; use at most as many bins as samples"),
]


# Equal-width entry points accept more bins than samples (empty bins carry no weight).
WIDTH_ONLY = {"binned_ece", "max_calibration_error", "reliability_stats",
              "classwise_binned_ece", "confidence_mce", "tce", "cwce"}


@pytest.mark.parametrize("name", BINNED)
@pytest.mark.parametrize("case, m, exc, match", BAD_N_BINS, ids=[c[0] for c in BAD_N_BINS])
def test_bad_n_bins(name, case, m, exc, match):
    if case == "more_than_n" and name in WIDTH_ONLY:
        BINNED[name](m)      # equal-width: 5 bins for 4 samples is fine
        return
    raises_here(exc, match, BINNED[name], m)


@pytest.mark.parametrize("name", BINNED)
def test_numpy_integer_n_bins_accepted(name):
    # np.int64 is an Integral: accepted and equal to the Python int result.
    a, b = BINNED[name](np.int64(2)), BINNED[name](2)
    if isinstance(a, dict):
        assert all(np.array_equal(a[key], b[key], equal_nan=True) for key in a)
    else:
        assert np.array_equal(np.asarray(a), np.asarray(b))


def test_default_n_bins_too_large_for_small_data():
    # The default 15 equal-width bins on 4 samples are fine; 15 equal-mass bins are
    # refused with a clear message.
    assert cn.binned_ece(Y4, P4) >= 0 and cn.tce(Y4K, P4K) >= 0
    raises_here(ValueError, r"n_bins: 15 bins for 4 samples", cn.binned_ece, Y4, P4,
                binning="mass")
    raises_here(ValueError, r"n_bins: 15 bins for 4 samples", cn.tce, Y4K, P4K, binning="mass")
    raises_here(ValueError, r"n_bins: 15 bins for 4 samples",
                cn.classwise, cn.binned_ece, Y4K, P4K, binning="mass")


@pytest.mark.parametrize("m, exc", [(0, ValueError), (-1, ValueError), (2.5, TypeError),
                                    (True, (TypeError, ValueError)), (2.0, TypeError)])
def test_equal_width_bin_count(m, exc):
    # equal_width_bins allows m > n (the data size is irrelevant to the edges), but m
    # must still be a positive integer.
    raises_here(exc, r"n_bins", cn.equal_width_bins, P4, m)


@pytest.mark.parametrize("m", [0, -2, 1.5, True])
def test_equal_width_edges_bin_count(m):
    raises_here(ValueError, r"n_bins: expected a positive integer", cn.equal_width_edges, m)


@pytest.mark.parametrize("func", [cn.equal_width_bins, cn.equal_mass_bins])
@pytest.mark.parametrize("p, match", [
    ([0.1, float("nan")], r"y_prob: non-finite value nan at index \[1\]"),
    ([0.1, 1.2], r"y_prob: value .*1\.2.* at index \[1\] is outside \[0, 1\]"),
    ([[0.5, 0.5]], r"y_prob: expected a 1-d array"),
    ([], r"y_prob: empty input"),
])
def test_binning_functions_validate_predictions(func, p, match):
    raises_here(ValueError, match, func, p, 1)


# ----------------------------------------------------------------------------- p and binning

P_EXPONENT = {
    "binned_ece": lambda p: cn.binned_ece(Y4, P4, n_bins=2, p=p),
    "binned_ece_mass": lambda p: cn.binned_ece(Y4, P4, n_bins=2, p=p, binning="mass"),
    "classwise_binned_ece": lambda p: cn.classwise(cn.binned_ece, Y4K, P4K, n_bins=2, p=p),
    "confidence_binned_ece": lambda p: cn.confidence(cn.binned_ece, Y4K, P4K, n_bins=2, p=p),
    "tce": lambda p: cn.tce(Y4K, P4K, n_bins=2, p=p),
    "cwce": lambda p: cn.cwce(Y4K, P4K, n_bins=2, p=p),
}


@pytest.mark.parametrize("name", P_EXPONENT)
@pytest.mark.parametrize("p", [0.5, 0, -1, float("nan"), math.inf, True, None, "2"],
                         ids=["half", "zero", "negative", "nan", "inf", "bool", "none", "string"])
def test_bad_exponent(name, p):
    raises_here((ValueError, TypeError), r"p: expected a number >= 1", P_EXPONENT[name], p)


BINNING = {
    "binned_ece": lambda b: cn.binned_ece(Y4, P4, n_bins=2, binning=b),
    "max_calibration_error": lambda b: cn.max_calibration_error(Y4, P4, n_bins=2, binning=b),
    "reliability_stats": lambda b: cn.reliability_stats(Y4, P4, n_bins=2, binning=b),
    "classwise_binned_ece": lambda b: cn.classwise(cn.binned_ece, Y4K, P4K, n_bins=2, binning=b),
    "confidence_mce": lambda b: cn.confidence(cn.max_calibration_error, Y4K, P4K, n_bins=2,
                                              binning=b),
    "tce": lambda b: cn.tce(Y4K, P4K, n_bins=2, binning=b),
    "cwce": lambda b: cn.cwce(Y4K, P4K, n_bins=2, binning=b),
    "assign_bins": lambda b: cn.assign_bins(P4, 2, b),
}


@pytest.mark.parametrize("name", BINNING)
@pytest.mark.parametrize("b", ["quantile", "Width", "", None])
def test_unknown_binning(name, b):
    raises_here(ValueError, r"binning: expected 'width' or 'mass', got " + repr(b).replace("'", "."),
                BINNING[name], b)


# ----------------------------------------------------------------------------- rng


@pytest.mark.parametrize("rng", [None, True, 1.5, "0", np.random.RandomState(0)],
                         ids=["none", "bool", "float", "string", "legacy_randomstate"])
def test_check_rng_refuses(rng):
    raises_here(TypeError, r"rng: expected a numpy\.random\.Generator or an integer seed"
                r".*never draws from unseeded global state", check_rng, rng)


def test_check_rng_accepts_generator_seed_and_seedsequence():
    g = np.random.default_rng(3)
    assert check_rng(g) is g
    assert check_rng(7).integers(10**9) == np.random.default_rng(7).integers(10**9)
    assert check_rng(np.int64(7)).integers(10**9) == np.random.default_rng(7).integers(10**9)
    ss = np.random.SeedSequence(11)
    assert check_rng(ss).integers(10**9) == np.random.default_rng(np.random.SeedSequence(11)).integers(10**9)


# ----------------------------------------------------------------------------- scores


def test_get_loss_unknown_name():
    raises_here(ValueError, r"loss: expected a ProperLoss or one of \['brier', 'log', "
                r"'spherical', 'zero_one'\], got 'hinge'", cn.get_loss, "hinge")
    raises_here(ValueError, r"loss: expected a ProperLoss", cn.expected_loss,
                [[0.5, 0.5]], [[0.5, 0.5]], "hinge")
    raises_here(ValueError, r"loss: expected a ProperLoss", cn.get_loss, ["log"])


@pytest.mark.parametrize("func", [cn.expected_loss, cn.divergence, cn.bregman_divergence])
def test_two_argument_shape_mismatch(func):
    raises_here(ValueError, r"q and p: shapes differ, \(1, 2\) vs \(1, 3\)", func,
                [[0.5, 0.5]], [[0.2, 0.3, 0.5]])


@pytest.mark.parametrize("func", [cn.expected_loss, cn.divergence, cn.entropy])
def test_divergence_family_validates_probabilities(func):
    args = ([[0.5, 0.6]],) if func is cn.entropy else ([[0.5, 0.6]], [[0.5, 0.5]])
    raises_here(ValueError, r"row 0 sums to 1\.1", func, *args)


GOOD_F = [[0.2, 0.8], [0.6, 0.4]]
GOOD_T = [[0.1, 0.9], [0.5, 0.5]]


@pytest.mark.parametrize("weights, match", [
    ([0.5, 0.6], r"weights: expected finite non-negative weights summing to one"),
    ([1.5, -0.5], r"weights: expected finite non-negative weights summing to one"),
    ([float("nan"), 1.0], r"weights: expected finite non-negative weights summing to one"),
    ([], r"weights: expected a non-empty 1-d array"),
    ([[0.5, 0.5]], r"weights: expected a non-empty 1-d array"),
    ([0.25, 0.25, 0.5], r"y_prob: has 2 rows but weights has 3 entries"),
])
def test_score_decomposition_bad_weights(weights, match):
    raises_here(ValueError, match, cn.score_decomposition, weights, GOOD_F, GOOD_T)


def test_score_decomposition_bad_truth():
    raises_here(ValueError, r"row 1 sums to", cn.score_decomposition, [0.5, 0.5], GOOD_F,
                [[0.1, 0.9], [0.5, 0.6]])
    raises_here(ValueError, r"q and p: shapes differ", cn.score_decomposition, [0.5, 0.5],
                GOOD_F, [[0.1, 0.8, 0.1], [0.5, 0.4, 0.1]])


# ----------------------------------------------------------------------------- large and odd


def test_negative_zero_is_a_valid_probability():
    # -0.0 == 0.0: accepted everywhere (a sign-bit range check must not reject it).
    assert cn.confidence_scores([1, 0], [[-0.0, 1.0], [1.0, -0.0]])[1].tolist() == [1, 0]
    assert cn.binned_ece([0, 1], [-0.0, 1.0], n_bins=1) == 0.0
    assert cn.log_loss([1], [[-0.0, 1.0]]) == 0.0


def test_large_matrix_validation_and_argmax():
    # 600 x 7000 = 4.2e6 entries: big enough for any blocked / multi-threaded scan of the
    # rows.  Errors must still name the FIRST bad index, and the confidence argmax must be
    # the first maximal column (rows with ties placed in both halves of the matrix).
    from calnotes._validate import check_probabilities

    rng = np.random.default_rng(0)
    n, k = 600, 7000
    P = rng.random((n, k))
    P /= P.sum(axis=1, keepdims=True)
    for i in (3, 450):  # tie for the maximum: columns 10 and 20
        P[i] = 0.0
        P[i, 10] = P[i, 20] = 0.25
        P[i, 30:530] = 0.5 / 500
    y = rng.integers(0, k, n)
    conf, pred, _ = cn.confidence_scores(y, P)
    first = np.array([int(np.flatnonzero(row == row.max())[0]) for row in P])
    assert np.array_equal(pred, first)
    assert pred[3] == 10 and pred[450] == 10
    assert np.array_equal(conf, P.max(axis=1))
    for (i, j), value, match in [
        ((599, 6999), np.nan, r"y_prob: non-finite value nan at index \[599, 6999\]"),
        ((301, 5), -0.25, r"y_prob: value -0\.25 at index \[301, 5\] is outside"),
        ((0, 1), 1.5, r"y_prob: value 1\.5 at index \[0, 1\] is outside"),
    ]:
        Q = P.copy()
        Q[i, j] = value
        if (i, j) != (599, 6999):
            Q[599, 6998] = 2.0  # a later out-of-range entry: the first one is reported
        with pytest.raises(ValueError, match=match):
            check_probabilities(Q)
    Q = P.copy()
    Q[520] *= 1.01  # row sum 1.01, second half
    with pytest.raises(ValueError, match=r"y_prob: row 520 sums to 1\.01"):
        cn.confidence_scores(y, Q)


def test_aggregation_names_the_measure_on_bad_keywords():
    P = [[0.7, 0.3], [0.2, 0.8], [0.5, 0.5]]
    with pytest.raises(TypeError, match="l2_qece: missing a required argument: 'n_bins'"):
        cn.classwise(cn.l2_qece, [0, 1, 1], P)
    with pytest.raises(TypeError, match="binned_ece: got an unexpected keyword argument 'nbins'"):
        cn.confidence(cn.binned_ece, [0, 1, 1], P, nbins=2)
