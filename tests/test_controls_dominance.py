"""Helpers behind the controls of the dominance, practice and foundations claims."""

from fractions import Fraction as Fr

import numpy as np
import pytest

from calnotes.theory import population as pop
from calnotes.book.claims import dominance, practice


def test_auc_matches_scikit_learn_with_ties():
    metrics = pytest.importorskip("sklearn.metrics")
    rng = np.random.default_rng(0)
    score = np.round(rng.uniform(size=300), 1)  # many ties
    positive = rng.uniform(size=300) < score
    assert practice._auc(score, positive) == pytest.approx(
        metrics.roc_auc_score(positive, score), abs=1e-12)


def test_auc_of_a_constant_score_is_exactly_one_half():
    positive = np.array([True, False, False, True, True])
    assert practice._auc(np.full(5, 0.83), positive) == 0.5


def test_propD2_populations_respect_the_accuracy_split():
    high, low = practice._propD2_populations("smoke")
    assert len(high) >= 12 and len(low) >= 4
    for d in high:
        assert pop.accuracy(d, exact=True) > Fr(1, d.n_classes)
    for d in low:
        assert pop.accuracy(d, exact=True) <= Fr(1, d.n_classes)


def test_tf_errors_vanish_for_the_transform_and_not_for_a_miscalibrated_model():
    d = pop.FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0), Fr(0)], [Fr(0), Fr(1), Fr(0)]],
                               [[Fr(1, 2), Fr(1, 4), Fr(1, 4)], [Fr(1, 2), Fr(1, 2), Fr(0)]])
    t = pop.accuracy_preserving_transform(d)
    assert practice._tf_errors(t) == pytest.approx(0.0, abs=1e-15)
    assert practice._tf_errors(t, calibration=True) > 0   # not calibrated
    overconfident = pop.FiniteDistribution(
        [Fr(1, 2)] * 2, [[Fr(1), Fr(0), Fr(0)], [Fr(0), Fr(1), Fr(0)]],
        [[Fr(9, 10), Fr(1, 20), Fr(1, 20)], [Fr(4, 5), Fr(1, 5), Fr(0)]])
    assert practice._tf_errors(overconfident) > 0
    assert practice._tf_errors(pop.accuracy_preserving_transform(overconfident)) == 0


def test_shrink_keeps_ties_and_rows():
    P = np.array([[0.5, 0.5, 0.0], [0.5, 0.5, 0.0], [0.2, 0.3, 0.5]])
    S = dominance._shrink(P)
    assert np.allclose(S.sum(axis=1), 1) and np.array_equal(S[0], S[1])
    assert np.allclose(dominance._shrink(np.array([0.0, 1.0])), [0.1, 0.9])


def test_covering_radius_wrong_neighbours_differ_where_the_controls_need_it():
    # k/4 is right for even k only; (k - 1)/k for k <= 3 only
    for k in (2, 3, 4, 5):
        r = dominance.covering_radius_sq(k)
        assert (abs(r - k / 4) < 1e-15) == (k % 2 == 0)
        assert (abs(r - (k - 1) / k) < 1e-15) == (k <= 3)


def test_absolute_loss_is_improper():
    # reporting the mode with certainty beats the truth under ||q - e_y||_1
    p = np.array([[0.6, 0.4]])
    truthful = float(p[0] @ dominance._ABSOLUTE.matrix(p)[0])
    mode = float(p[0] @ dominance._ABSOLUTE.matrix(np.array([[1.0, 0.0]]))[0])
    assert mode < truthful


def test_brier_with_absolute_is_improper_but_close_to_brier():
    # 10% of the absolute loss pulls the best report towards the mode: reporting a point
    # slightly sharper than the truth beats it, yet the loss differs from Brier by at most 0.2
    p = np.array([[0.6, 0.4]])
    mixed = dominance._BRIER_WITH_ABSOLUTE
    truthful = float(p[0] @ mixed.matrix(p)[0])
    sharper = float(p[0] @ mixed.matrix(np.array([[0.61, 0.39]]))[0])  # optimum 0.6111
    assert sharper < truthful
    grid = np.array([[0.0, 1.0], [0.3, 0.7], [0.5, 0.5]])
    from calnotes.core import scores
    assert np.abs(mixed.matrix(grid) - scores.get_loss("brier").matrix(grid)).max() <= 0.2


def test_sharpen_is_the_identity_at_power_one_and_sharpens_above():
    Q = np.array([[0.6, 0.3, 0.1], [0.5, 0.5, 0.0]])
    assert np.allclose(dominance._sharpen(Q, 1.0), Q)
    S = dominance._sharpen(Q, 1.1)
    assert np.allclose(S.sum(axis=1), 1) and S[0, 0] > Q[0, 0] and S[0, 2] < Q[0, 2]
    assert np.allclose(S[1], Q[1])  # a tie between the top classes stays a tie


def test_l2_qece_replicates_equal_the_measure_row_by_row():
    from calnotes.core.measures import l2_qece
    rng = np.random.default_rng(3)
    p = np.round(rng.uniform(size=(7, 12)), 1)          # ties straddle the bins
    y = (rng.uniform(size=(7, 12)) < p).astype(np.int64)
    batched = dominance._l2_qece_replicates(y, p, 5, chunk=3)
    assert np.array_equal(batched, [l2_qece(y[r], p[r], 5) for r in range(7)])
