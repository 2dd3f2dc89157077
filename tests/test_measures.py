"""Calibration measures: hand-computed cases, brute force on random data, scikit-learn.

Tolerances
----------
Hand-computed values are exact decimals; calnotes sums at most 10 float64 terms per
value, each term in [-1, 1], so its result is within 10 * 2^-53 * 10 < 1e-14 of the exact
value, and the decimal literal we compare to is within 2^-53 of it.  ``HAND`` = 1e-13.

Brute-force references are exact rationals rounded once (tests/brute.py).  calnotes
sums n <= 300 float64 terms of size <= 1 per bin: recursive-summation error is below
n * 2^-53 * n ~ 1e-11 in the worst case and in practice ~ sqrt(n) * 1e-16; we use
``BRUTE`` = 1e-12, far below any real bin or weighting mistake (those move values by
at least 1/n^2 >= 1e-5 for these sizes).
"""

import math

import numpy as np
import pytest

import brute
import calnotes as cn

HAND = 1e-13
BRUTE = 1e-12


def close(a, b, tol):
    return abs(a - b) <= tol


# =============================================================================
# Hand-computed binary case H (n = 10): edges, 0 and 1, ties, m not dividing n.
#
# idx   0    1    2     3     4    5     6    7     8    9
# p   0.3  0.3  0.35  0.29  0.0  0.05  1.0  0.95  0.5  0.5
# y    1    0    1     0     0    1     1    0     1    1
#
# Equal width, m = 10 (edges j/10; 0.3 is ON the edge 3/10 and goes UP into bin 3,
# 0.5 on the edge 5/10 goes into bin 5, 0.0 in bin 0, 1.0 in the last bin 9):
#   bin 0: {0.0/0, 0.05/1}        sum p 0.05, sum y 1 -> bias -0.95, |B| 2, gap 0.475
#   bin 2: {0.29/0}               bias  0.29,  |B| 1, gap 0.29
#   bin 3: {0.3/1, 0.3/0, 0.35/1} sum p 0.95, sum y 2 -> bias -1.05, |B| 3, gap 0.35
#   bin 5: {0.5/1, 0.5/1}         bias -1.00,  |B| 2, gap 0.5
#   bin 9: {1.0/1, 0.95/0}        sum p 1.95, sum y 1 -> bias 0.95, |B| 2, gap 0.475
#   ECE_1 = (0.95 + 0.29 + 1.05 + 1 + 0.95) / 10 = 0.424
#   ECE_2^2 = 0.2*0.475^2 + 0.1*0.29^2 + 0.3*0.35^2 + 0.2*0.5^2 + 0.2*0.475^2
#           = 0.045125 + 0.00841 + 0.03675 + 0.05 + 0.045125 = 0.18541
#   MCE = 0.5
#   (Had 0.3 gone DOWN into bin 2 -- linspace-style edges -- bin 2 would hold
#    {0.29/0, 0.3/1, 0.3/0}: bias -0.11, bin 3 {0.35/1}: -0.65, ECE_1 = 0.366.)
#
# Equal mass, stable sort: 4(0.0) 5(0.05) 3(0.29) 0(0.3) 1(0.3) 2(0.35) 8(0.5) 9(0.5)
#                          7(0.95) 6(1.0)
#   m = 3, sizes floor(10/3)=3, 6-3=3, 10-6=4 (3 does not divide 10):
#     B1 = {4,5,3}: 0.34 - 1 = -0.66;  B2 = {0,1,2}: 0.95 - 2 = -1.05;
#     B3 = {8,9,7,6}: 2.95 - 3 = -0.05
#     l1-QECE = (0.66 + 1.05 + 0.05)/10 = 0.176
#     l2-QECE = (0.4356 + 1.1025 + 0.0025)/100 = 0.015406
#     ECE_2 (mass)^2 = sum_j b_j^2 / (n |B_j|) = (0.1452 + 0.3675 + 0.000625)/10
#                    = 0.0513325
#     MCE (mass) = max(0.66/3, 1.05/3, 0.05/4) = 0.35
#   m = 4, sizes 2, 3, 2, 3; the tie 0.5 (idx 8, 9) straddles bins 3 and 4:
#     B1 = {4,5}: -0.95;  B2 = {3,0,1}: 0.89 - 1 = -0.11;  B3 = {2,8}: 0.85 - 2 = -1.15;
#     B4 = {9,7,6}: 2.45 - 2 = 0.45
#     l1-QECE = 2.66/10 = 0.266;  l2-QECE = (0.9025 + 0.0121 + 1.3225 + 0.2025)/100 = 0.024396
#
# KS: cumulative bias over distinct values (ties enter together):
#   0.0: 0 | 0.05: -0.95 | 0.29: -0.66 | 0.3 (x2): -0.66 + (-0.7+0.3) = -1.06
#   0.35: -1.71 | 0.5 (x2): -2.71 | 0.95: -1.76 | 1.0: -1.76     -> KS = 2.71/10 = 0.271
# Unbinned ECE: |.05-1| + .29 + 2*|.3-.5| + |.35-1| + 2*|.5-1| + .95 + 0 + 0 = 4.24 -> 0.424
# =============================================================================

H_P = [0.3, 0.3, 0.35, 0.29, 0.0, 0.05, 1.0, 0.95, 0.5, 0.5]
H_Y = [1, 0, 1, 0, 0, 1, 1, 0, 1, 1]


def test_hand_width_ece1_edges_go_up():
    assert close(cn.binned_ece(H_Y, H_P, n_bins=10), 0.424, HAND)


def test_hand_width_ece2():
    assert close(cn.binned_ece(H_Y, H_P, n_bins=10, p=2), math.sqrt(0.18541), HAND)


def test_hand_width_ece3():
    # Same bins, p = 3: (sum |B|/n gap^3)^(1/3), gaps from the table above.
    s = 0.2 * 0.475**3 + 0.1 * 0.29**3 + 0.3 * 0.35**3 + 0.2 * 0.5**3 + 0.2 * 0.475**3
    assert close(cn.binned_ece(H_Y, H_P, n_bins=10, p=3), s ** (1 / 3), HAND)


def test_hand_width_mce():
    assert close(cn.max_calibration_error(H_Y, H_P, n_bins=10), 0.5, HAND)


def test_hand_width_reliability_stats():
    s = cn.reliability_stats(H_Y, H_P, n_bins=10)
    assert s["count"].tolist() == [2, 0, 1, 3, 0, 2, 0, 0, 0, 2]
    exp_p = [0.025, None, 0.29, 0.95 / 3, None, 0.5, None, None, None, 0.975]
    exp_y = [0.5, None, 0.0, 2 / 3, None, 1.0, None, None, None, 0.5]
    for j in range(10):
        if exp_p[j] is None:
            assert np.isnan(s["mean_prob"][j]) and np.isnan(s["mean_outcome"][j])
        else:
            assert close(s["mean_prob"][j], exp_p[j], HAND)
            assert close(s["mean_outcome"][j], exp_y[j], HAND)


def test_hand_mass_m3_not_dividing_n():
    assert close(cn.l1_qece(H_Y, H_P, n_bins=3), 0.176, HAND)
    assert close(cn.l2_qece(H_Y, H_P, n_bins=3), 0.015406, HAND)
    assert close(cn.binned_ece(H_Y, H_P, n_bins=3, binning="mass"), 0.176, HAND)
    assert close(cn.binned_ece(H_Y, H_P, n_bins=3, p=2, binning="mass"),
                 math.sqrt(0.0513325), HAND)
    assert close(cn.max_calibration_error(H_Y, H_P, n_bins=3, binning="mass"), 0.35, HAND)
    s = cn.reliability_stats(H_Y, H_P, n_bins=3, binning="mass")
    assert s["count"].tolist() == [3, 3, 4]


def test_hand_mass_m4_tie_straddles_boundary():
    assert close(cn.l1_qece(H_Y, H_P, n_bins=4), 0.266, HAND)
    assert close(cn.l2_qece(H_Y, H_P, n_bins=4), 0.024396, HAND)
    assert cn.equal_mass_bins(H_P, 4).tolist() == [1, 1, 2, 1, 0, 0, 3, 3, 2, 3]


def test_hand_ks():
    assert close(cn.ks_calibration_error(H_Y, H_P), 0.271, HAND)


def test_hand_unbinned():
    assert close(cn.unbinned_ece(H_Y, H_P), 0.424, HAND)


def test_hand_case_brute_agrees():
    # The brute-force reference reproduces every hand value (checks tests/brute.py itself).
    assert close(brute.binned_ece(H_Y, H_P, 10), 0.424, HAND)
    assert close(brute.binned_ece(H_Y, H_P, 10, power=2), math.sqrt(0.18541), HAND)
    assert close(brute.max_calibration_error(H_Y, H_P, 10), 0.5, HAND)
    assert close(brute.l1_qece(H_Y, H_P, 3), 0.176, HAND)
    assert close(brute.l2_qece(H_Y, H_P, 3), 0.015406, HAND)
    assert close(brute.l1_qece(H_Y, H_P, 4), 0.266, HAND)
    assert close(brute.l2_qece(H_Y, H_P, 4), 0.024396, HAND)
    assert close(brute.ks_calibration_error(H_Y, H_P), 0.271, HAND)
    assert close(brute.unbinned_ece(H_Y, H_P), 0.424, HAND)


# -----------------------------------------------------------------------------
# Small case S: p = [0.2, 0.5, 0.5, 0.8], m = 2.
#
# Equal width with y = [0, 1, 1, 0]: 0.5 is the edge 1/2 and goes UP:
#   bin 0 {0.2/0}: bias 0.2;  bin 1 {0.5/1, 0.5/1, 0.8/0}: 1.8 - 2 = -0.2 -> ECE_1 = 0.1
#   (0.5 DOWN would give bin 0: 1.2 - 2 = -0.8, bin 1: 0.8 -> 0.4)
# KS: 0.2 -> 0.2 ; 0.5 (x2) -> 0.2 - 1 = -0.8 ; 0.8 -> 0.0              -> KS = 0.8/4 = 0.2
# Unbinned: 0.2 + 2 * |0.5 - 1| + 0.8 = 2.0                         -> 0.5
#
# Equal mass, sizes 2, 2, the tie 0.5 straddles; with y = [0, 1, 0, 1]:
#   B1 = {0.2/0, 0.5/1} : 0.7 - 1 = -0.3 ;  B2 = {0.5/0, 0.8/1} : 1.3 - 1 = 0.3
#   l1 = 0.6/4 = 0.15 ; l2 = 0.18/16 = 0.01125
# swapping the two tied samples (y = [0, 0, 1, 1], same p):
#   B1 = {0.2/0, 0.5/0} : 0.7 ;  B2 = {0.5/1, 0.8/1} : -0.7 -> l1 = 0.35, l2 = 0.98/16 = 0.06125
# -----------------------------------------------------------------------------
S_P = [0.2, 0.5, 0.5, 0.8]


def test_small_width_half_goes_up():
    assert close(cn.binned_ece([0, 1, 1, 0], S_P, n_bins=2), 0.1, HAND)
    assert cn.reliability_stats([0, 1, 1, 0], S_P, n_bins=2)["count"].tolist() == [1, 3]


def test_small_ks_and_unbinned_with_ties():
    assert close(cn.ks_calibration_error([0, 1, 1, 0], S_P), 0.2, HAND)
    assert close(cn.unbinned_ece([0, 1, 1, 0], S_P), 0.5, HAND)


def test_small_mass_straddling_tie_depends_on_sample_order_with_ties_position():
    # eq. (1) literally (ties="position"): ties ordered by input position.
    assert close(cn.l1_qece([0, 1, 0, 1], S_P, n_bins=2, ties="position"), 0.15, HAND)
    assert close(cn.l2_qece([0, 1, 0, 1], S_P, n_bins=2, ties="position"), 0.01125, HAND)
    assert close(cn.l1_qece([0, 0, 1, 1], S_P, n_bins=2, ties="position"), 0.35, HAND)
    assert close(cn.l2_qece([0, 0, 1, 1], S_P, n_bins=2, ties="position"), 0.06125, HAND)


def test_small_mass_straddling_tie_averaged_by_default():
    # ties="average" (default): the two orders of the tied 0.5s are equally likely, so both
    # inputs give the mean of the two values above: l1 (0.15 + 0.35) / 2, l2 (0.01125 +
    # 0.06125) / 2; the reliability diagram's bins each get half a positive from the tie.
    for y in ([0, 1, 0, 1], [0, 0, 1, 1]):
        assert close(cn.l1_qece(y, S_P, n_bins=2), 0.25, HAND)
        assert close(cn.l2_qece(y, S_P, n_bins=2), 0.03625, HAND)
        assert close(cn.binned_ece(y, S_P, n_bins=2, binning="mass"), 0.25, HAND)
        # ECE_2 = sqrt(mean over orders of sum_j |B_j|/n gap_j^2) = sqrt(0.03625 * 2)
        assert close(cn.binned_ece(y, S_P, n_bins=2, p=2, binning="mass"),
                     math.sqrt(0.0725), HAND)
        # per-bin mean gap: bin 1 (|-0.3| + 0.7) / 2 / 2 = 0.25, bin 2 the same
        assert close(cn.max_calibration_error(y, S_P, n_bins=2, binning="mass"), 0.25, HAND)
        s = cn.reliability_stats(y, S_P, n_bins=2, binning="mass")
        assert s["mean_outcome"].tolist() == [0.25, 0.75]


def test_ks_ties_enter_together():
    # p = [0.5, 0.5], y = [1, 0]: the only sigmas are "below 0.5" (sum 0) and 0.5 (sum
    # 0.5 - 1 + 0.5 - 0 = 0): KS = 0.  Cutting inside the tie (0.5 - 1 = -0.5 -> 0.25) is
    # not a threshold on the prediction and must not count.
    assert cn.ks_calibration_error([1, 0], [0.5, 0.5]) == 0.0
    assert cn.ks_calibration_error([0, 1], [0.5, 0.5]) == 0.0
    # Docstring case: y = [1, 0, 0], p = [0.2, 0.5, 0.5]: -0.8, then -0.8 + 1.0 = 0.2
    assert close(cn.ks_calibration_error([1, 0, 0], [0.2, 0.5, 0.5]), 0.8 / 3, HAND)


def test_unbinned_pools_ties():
    # p = 0.25 four times with one positive (ybar = 0.25: zero), 0.6 once with y = 1 (0.4).
    assert close(cn.unbinned_ece([1, 0, 0, 0, 1], [0.25] * 4 + [0.6]), 0.4 / 5, HAND)
    # All distinct: (1/n) sum |p_i - y_i| = (0.1 + 0.3 + 0.4) / 3
    assert close(cn.unbinned_ece([0, 1, 0], [0.1, 0.7, 0.4]), 0.8 / 3, HAND)


@pytest.mark.parametrize("p, y", [(0.3, 1), (0.0, 0), (1.0, 0), (0.0, 1), (1.0, 1)])
def test_single_sample(p, y):
    # n = 1, m = 1: every measure is |p - y| (l2-QECE its square).
    g = abs(p - y)
    assert close(cn.binned_ece([y], [p], n_bins=1), g, HAND)
    assert close(cn.binned_ece([y], [p], n_bins=1, binning="mass"), g, HAND)
    assert close(cn.binned_ece([y], [p], n_bins=1, p=2), g, HAND)
    assert close(cn.max_calibration_error([y], [p], n_bins=1), g, HAND)
    assert close(cn.l1_qece([y], [p], n_bins=1), g, HAND)
    assert close(cn.l2_qece([y], [p], n_bins=1), g * g, HAND)
    assert close(cn.ks_calibration_error([y], [p]), g, HAND)
    assert close(cn.unbinned_ece([y], [p]), g, HAND)


def test_docstring_examples_by_hand():
    # binned_ece([1,0,1,1], [0.9,0.1,0.8,0.6], m=2): bin 0 {0.1/0}: 0.1; bin 1
    # {0.9/1, 0.8/1, 0.6/1}: 2.3 - 3 = -0.7 -> (0.1 + 0.7)/4 = 0.2; MCE = max(0.1, 0.7/3)
    assert close(cn.binned_ece([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6], n_bins=2), 0.2, HAND)
    assert close(cn.max_calibration_error([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6], n_bins=2),
                 0.7 / 3, HAND)
    # l1/l2-QECE([0,1,1,0], [0.1,0.4,0.6,0.9], m=2): B1 = 0.5 - 1 = -0.5, B2 = 1.5 - 1 = 0.5
    assert close(cn.l1_qece([0, 1, 1, 0], [0.1, 0.4, 0.6, 0.9], n_bins=2), 0.25, HAND)
    assert close(cn.l2_qece([0, 1, 1, 0], [0.1, 0.4, 0.6, 0.9], n_bins=2), 0.5 / 16, HAND)


def test_labels_as_bool_and_integral_floats():
    # Booleans and integral floats are the same labels as 0/1 ints.
    a = cn.binned_ece([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6], n_bins=2)
    assert cn.binned_ece([True, False, True, True], [0.9, 0.1, 0.8, 0.6], n_bins=2) == a
    assert cn.binned_ece([1.0, 0.0, 1.0, 1.0], [0.9, 0.1, 0.8, 0.6], n_bins=2) == a


# =============================================================================
# Hand-computed multi-class case M: n = 4, k = 3, m = 2.
#
# row  P                   y   argmax (first)  conf  correct
# 0    [0.7, 0.2, 0.1 ]    0   0               0.7   1
# 1    [0.1, 0.8, 0.1 ]    1   1               0.8   1
# 2    [0.4, 0.4, 0.2 ]    1   0 (tie, first)  0.4   0
# 3    [0.5, 0.25, 0.25]   2   0               0.5   0
#
# Confidence, width m = 2 (0.5 goes UP): bin 0 {0.4/0}: 0.4; bin 1 {0.7/1, 0.8/1, 0.5/0}:
#   2.0 - 2 = 0.  TCE_1 = 0.4/4 = 0.1;  TCE_2 = sqrt(1/4 * 0.4^2) = 0.2;  MCE = 0.4.
#   (With "last argmax" row 2 would be correct: bin 0 bias -0.6 -> 0.15.)
# Confidence, mass m = 2: {0.4/0, 0.5/0}: 0.9 ; {0.7/1, 0.8/1}: -0.5
#   l1 = 1.4/4 = 0.35 ; l2 = (0.81 + 0.25)/16 = 0.06625
# Confidence KS: 0.4 -> 0.4, 0.5 -> 0.9, 0.7 -> 0.6, 0.8 -> 0.4   -> 0.9/4 = 0.225
# Confidence unbinned (distinct): 0.3 + 0.2 + 0.4 + 0.5 = 1.4      -> 0.35
#
# Class columns:
#   c0: p [0.7, 0.1, 0.4, 0.5 ], y [1, 0, 0, 0]
#   c1: p [0.2, 0.8, 0.4, 0.25], y [0, 1, 1, 0]
#   c2: p [0.1, 0.1, 0.2, 0.25], y [0, 0, 0, 1]
# Width m = 2:
#   c0: {0.1, 0.4}/0: bias 0.5 (gap 0.25) ; {0.7/1, 0.5/0}: 0.2 (gap 0.1)
#       ECE_1 = 0.7/4 = 0.175 ; ECE_2^2 = 0.5*0.0625 + 0.5*0.01 = 0.03625 ; MCE 0.25
#   c1: {0.2/0, 0.4/1, 0.25/0}: -0.15 (gap 0.05) ; {0.8/1}: -0.2 (gap 0.2)
#       ECE_1 = 0.35/4 = 0.0875 ; ECE_2^2 = 0.75*0.0025 + 0.25*0.04 = 0.011875 ; MCE 0.2
#   c2: all in bin 0: 0.65 - 1 = -0.35 (gap 0.0875)
#       ECE_1 = 0.0875 ; ECE_2^2 = 0.00765625 ; MCE 0.0875
#   classwise ECE_1 = 0.35/3 ; CWCE_1 = 0.35 ; CWCE_2 = sqrt(0.05578125)
#   classwise MCE = (0.25 + 0.2 + 0.0875)/3
# Mass m = 2 (sizes 2, 2; stable sort):
#   c0: 0.1/0 0.4/0 | 0.5/0 0.7/1 : 0.5, 0.2     -> l1 0.175,  l2 0.29/16
#   c1: 0.2/0 0.25/0 | 0.4/1 0.8/1 : 0.45, -0.8  -> l1 0.3125, l2 0.8425/16
#   c2: 0.1/0 0.1/0 | 0.2/0 0.25/1 : 0.2, -0.55  -> l1 0.1875, l2 0.3425/16
#   classwise l1 = 0.675/3 = 0.225 ; classwise l2 = 1.475/48 ; CWCE_1 (mass) = 0.675
# KS per class: c0: 0.1, 0.5, 1.0, 0.7 -> 0.25 ; c1: 0.2, 0.45, -0.15, -0.35 -> 0.1125
#   c2: (0.1 x2) 0.2, 0.4, -0.35 -> 0.1 ;  classwise KS = 0.4625/3
# Unbinned per class: c0 (0.3+0.1+0.4+0.5)/4 = 0.325 ; c1 (0.2+0.2+0.6+0.25)/4 = 0.3125
#   c2 (0.1+0.1+0.2+0.75)/4 = 0.2875 ;  classwise = 0.925/3
# =============================================================================

M_P = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.4, 0.4, 0.2], [0.5, 0.25, 0.25]]
M_Y = [0, 1, 1, 2]


def test_hand_confidence_scores_first_argmax():
    conf, pred, correct = cn.confidence_scores(M_Y, M_P)
    assert conf.tolist() == [0.7, 0.8, 0.4, 0.5]
    assert pred.tolist() == [0, 1, 0, 0]
    assert correct.tolist() == [1, 1, 0, 0]


def test_hand_confidence_width():
    assert close(cn.confidence(cn.binned_ece, M_Y, M_P, n_bins=2), 0.1, HAND)
    assert close(cn.tce(M_Y, M_P, n_bins=2), 0.1, HAND)
    assert close(cn.tce(M_Y, M_P, n_bins=2, p=2), 0.2, HAND)
    assert close(cn.confidence(cn.max_calibration_error, M_Y, M_P, n_bins=2), 0.4, HAND)


def test_hand_confidence_mass():
    assert close(cn.confidence(cn.l1_qece, M_Y, M_P, n_bins=2), 0.35, HAND)
    assert close(cn.confidence(cn.l2_qece, M_Y, M_P, n_bins=2), 0.06625, HAND)
    assert close(cn.tce(M_Y, M_P, n_bins=2, binning="mass"), 0.35, HAND)


def test_hand_confidence_ks_unbinned():
    assert close(cn.confidence(cn.ks_calibration_error, M_Y, M_P), 0.225, HAND)
    assert close(cn.confidence(cn.unbinned_ece, M_Y, M_P), 0.35, HAND)


def test_hand_classwise_width():
    assert close(cn.classwise(cn.binned_ece, M_Y, M_P, n_bins=2), 0.35 / 3, HAND)
    per = cn.classwise(cn.binned_ece, M_Y, M_P, n_bins=2, per_class=True)
    assert per.shape == (3,)
    assert np.all(np.abs(per - [0.175, 0.0875, 0.0875]) <= HAND)
    e2 = [math.sqrt(0.03625), math.sqrt(0.011875), 0.0875]
    assert close(cn.classwise(cn.binned_ece, M_Y, M_P, n_bins=2, p=2), sum(e2) / 3, HAND)
    assert close(cn.classwise(cn.max_calibration_error, M_Y, M_P, n_bins=2),
                 (0.25 + 0.2 + 0.0875) / 3, HAND)


def test_hand_classwise_mass():
    assert close(cn.classwise(cn.l1_qece, M_Y, M_P, n_bins=2), 0.225, HAND)
    assert close(cn.classwise(cn.l2_qece, M_Y, M_P, n_bins=2), 1.475 / 48, HAND)
    per = cn.classwise(cn.l2_qece, M_Y, M_P, n_bins=2, per_class=True)
    assert np.all(np.abs(per - np.array([0.29, 0.8425, 0.3425]) / 16) <= HAND)
    assert close(cn.classwise(cn.binned_ece, M_Y, M_P, n_bins=2, binning="mass"),
                 0.225, HAND)


def test_hand_classwise_ks_unbinned():
    assert close(cn.classwise(cn.ks_calibration_error, M_Y, M_P), 0.4625 / 3, HAND)
    assert close(cn.classwise(cn.unbinned_ece, M_Y, M_P), 0.925 / 3, HAND)


def test_hand_cwce():
    # CWCE_p sums over classes (no 1/k) and takes one root outside.
    assert close(cn.cwce(M_Y, M_P, n_bins=2), 0.35, HAND)
    assert close(cn.cwce(M_Y, M_P, n_bins=2, p=2), math.sqrt(0.05578125), HAND)
    assert close(cn.cwce(M_Y, M_P, n_bins=2, binning="mass"), 0.675, HAND)


def test_hand_multiclass_brute_agrees():
    # tests/brute.py reproduces the hand values above (a check of the reference itself).
    assert close(brute.tce(M_Y, M_P, 2), 0.1, HAND)
    assert close(brute.confidence(brute.l2_qece, M_Y, M_P, m=2), 0.06625, HAND)
    assert close(brute.classwise(brute.l2_qece, M_Y, M_P, m=2), 1.475 / 48, HAND)
    assert close(brute.classwise(brute.ks_calibration_error, M_Y, M_P), 0.4625 / 3, HAND)
    assert close(brute.classwise(brute.unbinned_ece, M_Y, M_P), 0.925 / 3, HAND)
    assert close(brute.cwce(M_Y, M_P, 2, power=2), math.sqrt(0.05578125), HAND)
    assert close(brute.cwce(M_Y, M_P, 2, binning="mass"), 0.675, HAND)


def test_docstring_multiclass_examples_by_hand():
    # P = [[.7,.2,.1],[.1,.8,.1],[.3,.3,.4],[.6,.3,.1]], y = [0,1,2,1], m = 2.
    # conf = [.7, .8, .4, .6], correct = [1, 1, 1, 0].  Width: bin 0 {.4/1}: -0.6 ;
    # bin 1 {.7/1, .8/1, .6/0}: 2.1 - 2 = 0.1 -> TCE_1 = 0.7/4 = 0.175.
    # Class columns, width m=2: c0 [.7,.1,.3,.6] y[1,0,0,0]: {.1,.3}: 0.4 ; {.7,.6}: 0.3
    #   c1 [.2,.8,.3,.3] y[0,1,0,1]: {.2,.3,.3}/(0,0,1): -0.2 ; {.8/1}: -0.2
    #   c2 [.1,.1,.4,.1] y[0,0,1,0]: all bin 0: 0.7 - 1 = -0.3
    #   CWCE_1 = (0.7 + 0.4 + 0.3)/4 = 0.35
    # Mass, l2: c0 sorted .1/0 .3/0 | .6/0 .7/1: 0.4, 0.3 -> 0.25/16
    #   c1 sorted .2/0 .3/0(row2) | .3/1(row3) .8/1: 0.5, -0.9 -> 1.06/16
    #   c2 sorted .1/0 .1/0 | .1/0(row3) .4/1: 0.2, -0.5 -> 0.29/16
    #   classwise l2 with ties="position" = (0.25 + 1.06 + 0.29)/48 = 1.6/48 = 1/30
    #   ties="average": c1's tied .3 pair in the other order gives -0.5, 0.1 -> 0.26, so c1
    #   averages (1.06 + 0.26)/2 = 0.66; c2's tie holds no positive (no change):
    #   classwise l2 = (0.25 + 0.66 + 0.29)/48 = 1.2/48
    P = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]]
    y = [0, 1, 2, 1]
    assert close(cn.tce(y, P, n_bins=2), 0.175, HAND)
    assert close(cn.cwce(y, P, n_bins=2), 0.35, HAND)
    assert close(cn.classwise(cn.l2_qece, y, P, n_bins=2, ties="position"), 1 / 30, HAND)
    assert close(cn.classwise(cn.l2_qece, y, P, n_bins=2), 1.2 / 48, HAND)


def test_generic_callable_path_equals_kernel_path():
    # A wrapped measure has no column kernel, so classwise/confidence loop over classes;
    # the result must be the kernel result (same definition, two code paths).
    def wrapped(yb, pb, **kw):
        return cn.l2_qece(yb, pb, **kw)

    assert close(cn.classwise(wrapped, M_Y, M_P, n_bins=2), 1.475 / 48, HAND)
    assert close(cn.confidence(wrapped, M_Y, M_P, n_bins=2), 0.06625, HAND)


def test_binary_problem_as_two_classes():
    # For k = 2 with P = [1 - p, p], class 1 of classwise is the binary problem itself;
    # class 0 has predictions 1 - p and outcomes 1 - y, so bias sums of the opposite sign,
    # with the sorted order reversed.  With distinct p and m | n (n = 6, m = 2: the reversed
    # equal-mass bins are the same sets) its l2-QECE equals the binary one, so the
    # class-wise mean is the binary value.
    p = [0.12, 0.37, 0.58, 0.91, 0.66, 0.23]
    y = [0, 1, 1, 1, 0, 0]
    P = [[1 - v, v] for v in p]
    # By hand: sorted p 0.12/0 0.23/0 0.37/1 | 0.58/1 0.66/0 0.91/1 (m = 2):
    #   B1: 0.72 - 1 = -0.28 ; B2: 2.15 - 2 = 0.15 -> l2 = (0.0784 + 0.0225)/36
    expected = (0.0784 + 0.0225) / 36
    assert close(cn.l2_qece(y, p, n_bins=2), expected, HAND)
    assert close(cn.classwise(cn.l2_qece, y, P, n_bins=2), expected, HAND)


# =============================================================================
# Brute force vs calnotes on random inputs.
# =============================================================================


def _binary_data(rng, n, decimals):
    p = rng.random(n)
    if decimals is not None:
        p = np.round(p, decimals)
    # Outcomes: half drawn from the predictions (near-calibrated), half independent.
    y = np.where(rng.random(n) < 0.5, rng.random(n) < p, rng.random(n) < 0.5).astype(int)
    return y, p


def _bin_counts(n):
    return sorted({m for m in (1, 2, 3, 5, 7, 10, 15, n // 3, n) if 1 <= m <= n})


BINARY_CASES = [(seed, n, dec) for seed in range(3) for n in (1, 2, 5, 13, 40, 150)
                for dec in (None, 1, 2)]


@pytest.mark.parametrize("seed, n, decimals", BINARY_CASES)
def test_binned_measures_match_brute(seed, n, decimals):
    rng = np.random.default_rng([seed, n, decimals or 0])
    y, p = _binary_data(rng, n, decimals)
    for m in _bin_counts(n):
        for binning in ("width", "mass"):
            for power in (1, 2, 1.5, 3):
                got = cn.binned_ece(y, p, n_bins=m, p=power, binning=binning)
                assert close(got, brute.binned_ece(y, p, m, power, binning), BRUTE), \
                    (m, binning, power)
            got = cn.max_calibration_error(y, p, n_bins=m, binning=binning)
            assert close(got, brute.max_calibration_error(y, p, m, binning), BRUTE)
        assert close(cn.l1_qece(y, p, n_bins=m), brute.l1_qece(y, p, m), BRUTE), m
        assert close(cn.l2_qece(y, p, n_bins=m), brute.l2_qece(y, p, m), BRUTE), m


@pytest.mark.parametrize("seed, n, decimals", BINARY_CASES)
def test_binless_measures_match_brute(seed, n, decimals):
    rng = np.random.default_rng([seed, n, decimals or 0, 7])
    y, p = _binary_data(rng, n, decimals)
    assert close(cn.ks_calibration_error(y, p), brute.ks_calibration_error(y, p), BRUTE)
    assert close(cn.unbinned_ece(y, p), brute.unbinned_ece(y, p), BRUTE)


@pytest.mark.parametrize("seed, n, decimals", BINARY_CASES[::2])
def test_reliability_stats_match_brute(seed, n, decimals):
    rng = np.random.default_rng([seed, n, decimals or 0, 11])
    y, p = _binary_data(rng, n, decimals)
    for m in _bin_counts(n):
        for binning in ("width", "mass"):
            s = cn.reliability_stats(y, p, n_bins=m, binning=binning)
            count, mp, my = brute.reliability(y, p, m, binning)
            assert s["count"].tolist() == count
            for j in range(m):
                if count[j] == 0:
                    assert np.isnan(s["mean_prob"][j]) and np.isnan(s["mean_outcome"][j])
                else:
                    assert close(s["mean_prob"][j], mp[j], BRUTE)
                    assert close(s["mean_outcome"][j], my[j], BRUTE)


def _multiclass_data(rng, n, k, grid):
    if grid is None:
        P = rng.dirichlet(np.full(k, 0.7), size=n)
    else:
        # Rows of counts/grid: heavy ties within columns and ties for the argmax.
        P = rng.multinomial(grid, rng.dirichlet(np.ones(k), size=n)) / grid
    # Labels: drawn from the rows (roughly calibrated) or uniformly.
    u = rng.random(n)
    drawn = (u[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(0, k - 1)
    y = np.where(rng.random(n) < 0.5, drawn, rng.integers(0, k, n))
    return y, P


MULTI_CASES = [(seed, n, k, grid) for n in (3, 17, 60) for seed in range(2 if n < 60 else 1)
               for k in (2, 3, 4, 5, 7) for grid in (None, 10)]


@pytest.mark.parametrize("seed, n, k, grid", MULTI_CASES)
def test_classwise_and_confidence_match_brute(seed, n, k, grid):
    rng = np.random.default_rng([seed, n, k, grid or 0])
    y, P = _multiclass_data(rng, n, k, grid)
    Pl = P.tolist()
    # m = 1, a divisor-free m, and m = n (n <= 17) or a moderate m (n = 60).
    for m in sorted({1, min(3, n), n if n <= 17 else 7}):
        for binning in ("width", "mass"):
            for power in (1, 2):
                kw = dict(n_bins=m, p=power, binning=binning)
                bk = dict(m=m, power=power, binning=binning)
                assert close(cn.classwise(cn.binned_ece, y, P, **kw),
                             brute.classwise(brute.binned_ece, y, Pl, **bk), BRUTE)
                assert close(cn.confidence(cn.binned_ece, y, P, **kw),
                             brute.confidence(brute.binned_ece, y, Pl, **bk), BRUTE)
                assert close(cn.tce(y, P, **kw), brute.tce(y, Pl, **bk), BRUTE)
                assert close(cn.cwce(y, P, **kw), brute.cwce(y, Pl, **bk), BRUTE)
            assert close(cn.classwise(cn.max_calibration_error, y, P, n_bins=m,
                                      binning=binning),
                         brute.classwise(brute.max_calibration_error, y, Pl, m=m,
                                         binning=binning), BRUTE)
        for name in ("l1_qece", "l2_qece"):
            ours, ref = getattr(cn, name), getattr(brute, name)
            per = cn.classwise(ours, y, P, n_bins=m, per_class=True)
            ref_per = brute.classwise_values(ref, y, Pl, m=m)
            assert np.all(np.abs(per - ref_per) <= BRUTE), name
            assert close(cn.classwise(ours, y, P, n_bins=m), sum(ref_per) / k, BRUTE)
            assert close(cn.confidence(ours, y, P, n_bins=m),
                         brute.confidence(ref, y, Pl, m=m), BRUTE)
    for name in ("ks_calibration_error", "unbinned_ece"):
        ours, ref = getattr(cn, name), getattr(brute, name)
        assert close(cn.classwise(ours, y, P), brute.classwise(ref, y, Pl), BRUTE), name
        assert close(cn.confidence(ours, y, P), brute.confidence(ref, y, Pl), BRUTE), name


@pytest.mark.parametrize("seed, n, k, grid", MULTI_CASES[::3])
def test_confidence_scores_match_brute(seed, n, k, grid):
    rng = np.random.default_rng([seed, n, k, grid or 0, 3])
    y, P = _multiclass_data(rng, n, k, grid)
    conf, pred, correct = cn.confidence_scores(y, P)
    bconf, bpred, bcorrect = brute.confidence_scores(y, P.tolist())
    assert conf.tolist() == bconf and pred.tolist() == bpred and correct.tolist() == bcorrect


def test_default_n_bins_is_15():
    # binned_ece and MCE default to 15 bins, also through the aggregations.
    rng = np.random.default_rng(5)
    y, p = _binary_data(rng, 50, None)
    assert close(cn.binned_ece(y, p), brute.binned_ece(y, p, 15), BRUTE)
    assert close(cn.max_calibration_error(y, p), brute.max_calibration_error(y, p, 15), BRUTE)
    yk, P = _multiclass_data(rng, 50, 4, None)
    assert close(cn.classwise(cn.binned_ece, yk, P),
                 brute.classwise(brute.binned_ece, yk, P.tolist(), m=15), BRUTE)
    assert close(cn.confidence(cn.max_calibration_error, yk, P),
                 brute.confidence(brute.max_calibration_error, yk, P.tolist(), m=15), BRUTE)
    assert close(cn.tce(yk, P), brute.tce(yk, P.tolist(), 15), BRUTE)
    assert close(cn.cwce(yk, P), brute.cwce(yk, P.tolist(), 15), BRUTE)


# =============================================================================
# scikit-learn calibration_curve(strategy="uniform").
#
# sklearn builds edges with np.linspace(0, 1, m + 1) and assigns with
# np.searchsorted(edges[1:-1], p) (side="left"): bins (e_{j}, e_{j+1}], a value ON an
# edge goes DOWN, and the edges are linspace's doubles, not j/m.  calnotes uses
# [j/m, (j+1)/m) (a value on an edge goes UP).  The two therefore agree exactly when no
# prediction lies on (or between) an edge of either -- true for continuous data with
# probability one; we also reject draws within 1e-9 of a grid point to make it certain.
# =============================================================================


def _sklearn_ece(y, p, m):
    from sklearn.calibration import calibration_curve

    prob_true, prob_pred = calibration_curve(y, p, n_bins=m, strategy="uniform")
    counts, _ = np.histogram(p, bins=np.linspace(0.0, 1.0, m + 1))
    counts = counts[counts > 0]  # calibration_curve drops empty bins
    assert counts.shape == prob_true.shape
    return float(np.sum(counts / len(p) * np.abs(prob_true - prob_pred))), prob_true, prob_pred


def _continuous_off_edges(rng, n, m):
    p = rng.random(n)
    grid = np.arange(m + 1) / m
    keep = np.min(np.abs(p[:, None] - grid[None, :]), axis=1) > 1e-9
    return p[keep]


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("m", [2, 5, 10, 15, 20])
def test_reliability_and_ece_match_sklearn_off_edges(seed, m):
    rng = np.random.default_rng([seed, m, 99])
    p = _continuous_off_edges(rng, 300, m)
    y = (rng.random(p.size) < p ** 1.3).astype(int)  # a miscalibrated truth
    ece_sk, prob_true, prob_pred = _sklearn_ece(y, p, m)
    s = cn.reliability_stats(y, p, n_bins=m)
    nonempty = s["count"] > 0
    # Same bins, same means: both divide a float64 bin sum by the count (summation order
    # may differ: tolerance 1e-12 as for BRUTE).
    assert np.all(np.abs(s["mean_outcome"][nonempty] - prob_true) <= BRUTE)
    assert np.all(np.abs(s["mean_prob"][nonempty] - prob_pred) <= BRUTE)
    assert close(cn.binned_ece(y, p, n_bins=m), ece_sk, BRUTE)


def test_sklearn_disagrees_on_the_decimal_edge_0_3():
    # p = 0.3 with m = 10: calnotes' edge 3/10 IS 0.3, so 0.3 goes up into bin 3;
    # linspace's edge is 0.30000000000000004 > 0.3, so sklearn puts 0.3 in bin 2.
    #
    # idx   0    1     2     3..9
    # p    0.3  0.35  0.25  0.95 (x7)
    # y    1    0     0     1 (x7)
    # calnotes: bin 2 {0.25/0}: 0.25 ; bin 3 {0.3/1, 0.35/0}: 0.65 - 1 = -0.35 ;
    #           bin 9 {0.95/1 x7}: 6.65 - 7 = -0.35           -> ECE = 0.95/10 = 0.095
    # sklearn:  bin 2 {0.25/0, 0.3/1}: 0.55 - 1 = -0.45 ; bin 3 {0.35/0}: 0.35 ;
    #           bin 9: -0.35                                   -> ECE = 1.15/10 = 0.115
    from sklearn.calibration import calibration_curve

    p = np.array([0.3, 0.35, 0.25] + [0.95] * 7)
    y = np.array([1, 0, 0] + [1] * 7)
    assert np.linspace(0, 1, 11)[3] > 0.3 == 3 / 10
    assert close(cn.binned_ece(y, p, n_bins=10), 0.095, HAND)
    assert cn.reliability_stats(y, p, n_bins=10)["count"].tolist() == \
        [0, 0, 1, 2, 0, 0, 0, 0, 0, 7]
    prob_true, prob_pred = calibration_curve(y, p, n_bins=10, strategy="uniform")
    # sklearn's non-empty bins: 2 {0.25, 0.3}, 3 {0.35}, 9 {0.95 x7}
    assert np.allclose(prob_true, [0.5, 0.0, 1.0], rtol=0, atol=HAND)
    assert np.allclose(prob_pred, [0.275, 0.35, 0.95], rtol=0, atol=HAND)
    ece_sk = 2 / 10 * abs(0.5 - 0.275) + 1 / 10 * 0.35 + 7 / 10 * 0.05
    assert close(ece_sk, 0.115, HAND)
    assert close(ece_sk - cn.binned_ece(y, p, n_bins=10), 0.02, HAND)


def test_sklearn_puts_exact_edges_down_even_where_linspace_is_exact():
    # linspace(0, 1, 3)[1] == 0.5 exactly, yet sklearn's searchsorted(side="left") puts a
    # prediction of exactly 0.5 in the LOWER bin; calnotes puts it in the upper bin.  So
    # the two differ on every prediction exactly on an interior edge, not only where
    # linspace's edge is inexact.
    from sklearn.calibration import calibration_curve

    assert np.linspace(0, 1, 3)[1] == 0.5
    p = np.array([0.5, 0.2, 0.9])
    y = np.array([1, 0, 0])
    prob_true, prob_pred = calibration_curve(y, p, n_bins=2, strategy="uniform")
    # sklearn: bin 0 {0.5/1, 0.2/0}, bin 1 {0.9/0}
    assert np.allclose(prob_pred, [0.35, 0.9], rtol=0, atol=HAND)
    assert np.allclose(prob_true, [0.5, 0.0], rtol=0, atol=HAND)
    # calnotes: bin 0 {0.2/0}, bin 1 {0.5/1, 0.9/0}
    s = cn.reliability_stats(y, p, n_bins=2)
    assert s["count"].tolist() == [1, 2]
    assert np.allclose(s["mean_prob"], [0.2, 0.7], rtol=0, atol=HAND)
    assert np.allclose(s["mean_outcome"], [0.0, 0.5], rtol=0, atol=HAND)


# ----------------------------------------------------------------------------- ties
# ties="average" (default) against two brute-force definitions: tests/brute.py's bin_laws
# (counting outcome arrangements with math.comb) and, on inputs small enough, the literal
# average over every arrangement of the outcomes inside each tie group (patterns_average).


def _tiny_tied_cases():
    rng = np.random.default_rng(2026)
    for n in (2, 3, 5, 7, 9):
        for _ in range(6):
            p = rng.choice([0.0, 0.25, 0.5, 0.75, 1.0], size=n, p=[0.1, 0.2, 0.4, 0.2, 0.1])
            y = (rng.random(n) < 0.5).astype(int)
            for m in sorted({1, 2, 3, n}):
                if m <= n:
                    yield y, p, m


def test_brute_tie_laws_equal_the_average_over_arrangements():
    # Checks tests/brute.py itself: the comb-counted laws against full enumeration.
    for y, p, m in _tiny_tied_cases():
        for inner, ref in (
                (lambda yy, ps, mm: brute._ece_inner(yy, ps, mm, 1, "mass", "position"),
                 brute._ece_inner(y, p, m, 1, "mass", "average")),
                (lambda yy, ps, mm: brute._ece_inner(yy, ps, mm, 2, "mass", "position"),
                 brute._ece_inner(y, p, m, 2, "mass", "average"))):
            assert brute.patterns_average(inner, y, p, m) == ref


def test_tie_average_matches_arrangement_enumeration():
    for y, p, m in _tiny_tied_cases():
        for power in (1, 2):
            ref = brute.patterns_average(
                lambda yy, ps, mm: brute._ece_inner(yy, ps, mm, power, "mass", "position"),
                y, p, m)
            got = cn.binned_ece(y, p, n_bins=m, p=power, binning="mass") ** power
            assert close(got, float(ref), BRUTE), (y, p, m, power)


@pytest.mark.parametrize("seed, n, decimals", BINARY_CASES)
def test_position_ties_match_brute(seed, n, decimals):
    rng = np.random.default_rng([seed, n, decimals or 0, 3])
    y, p = _binary_data(rng, n, decimals)
    for m in _bin_counts(n):
        for power in (1, 2, 1.5):
            got = cn.binned_ece(y, p, n_bins=m, p=power, binning="mass", ties="position")
            ref = brute.binned_ece(y, p, m, power, "mass", ties="position")
            assert close(got, ref, BRUTE), (m, power)
        assert close(cn.max_calibration_error(y, p, n_bins=m, binning="mass", ties="position"),
                     brute.max_calibration_error(y, p, m, "mass", ties="position"), BRUTE)
        assert close(cn.l1_qece(y, p, n_bins=m, ties="position"),
                     brute.l1_qece(y, p, m, ties="position"), BRUTE)
        assert close(cn.l2_qece(y, p, n_bins=m, ties="position"),
                     brute.l2_qece(y, p, m, ties="position"), BRUTE)


def test_ties_argument_is_validated():
    with pytest.raises(ValueError, match="ties: expected 'average'"):
        cn.l2_qece([0, 1], [0.5, 0.5], 2, ties="random")
    with pytest.raises(ValueError, match="ties: expected 'average'"):
        cn.classwise(cn.l1_qece, [0, 1], [[0.5, 0.5], [0.5, 0.5]], n_bins=2, ties="first")
