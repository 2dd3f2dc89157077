"""The logistic-normal simulator (calnotes.data.simulate): labels drawn from the predictions.

Statistical checks use z-scores whose standard errors follow from the model: given the
predictions, the indicators ``1[y_i = j]`` are independent Bernoulli(``p_ij``), so a sum over a set
of rows has mean ``sum p_ij`` and variance ``sum p_ij (1 - p_ij)``.  The threshold ``|z| < 4.5``
has a two-sided normal tail of 6.8e-6 per check, so even a hundred checks together fail by chance
with probability below 1e-3 (and the seeds are fixed, so a pass is reproducible).  Cells are kept
only where the variance is at least 10, so the normal approximation is sound.
"""

import numpy as np
import pytest

from calnotes.data import (logistic_normal_predictions, sample_categorical, scale_for_accuracy,
                           simulate_logistic_normal)

Z = 4.5


def _onehot_means(component, k):
    means = np.zeros((component.size, k))
    rows = np.flatnonzero(component < k)
    means[rows, component[rows]] = 1.0
    return means


def _classwise_z(P, y, n_bins=10, min_var=10.0):
    """z-scores of (observed - expected) label counts per class and equal-width bin of P[:, j]."""
    out = []
    for j in range(P.shape[1]):
        p = P[:, j]
        hit = (y == j).astype(float)
        bins = np.minimum((p * n_bins).astype(int), n_bins - 1)
        for b in range(n_bins):
            rows = bins == b
            var = np.sum(p[rows] * (1 - p[rows]))
            if var >= min_var:
                out.append((hit[rows].sum() - p[rows].sum()) / np.sqrt(var))
    return np.array(out)


def test_label_frequencies_match_mean_predictions():
    sim = simulate_logistic_normal(20_000, 10, rng=0)
    P, y = sim.true_prob, sim.labels
    expected = P.sum(axis=0)
    sd = np.sqrt(np.sum(P * (1 - P), axis=0))
    z = (np.bincount(y, minlength=10) - expected) / sd
    assert np.all(sd ** 2 >= 10)
    assert np.max(np.abs(z)) < Z


def test_calibrated_classwise_and_miscalibrated_not():
    # scale = 1 spreads the probabilities over (0, 1), so many bins are populated.
    sim = simulate_logistic_normal(50_000, 5, scale=1.0, temperatures=(1.0, 0.5, 2.0), rng=1)
    z = _classwise_z(sim.true_prob, sim.labels)
    assert z.size >= 30
    assert np.max(np.abs(z)) < Z
    # Power: the tempered predictions are visibly miscalibrated by the same check.
    for T in (0.5, 2.0):
        assert np.max(np.abs(_classwise_z(sim.predictions[T], sim.labels))) > 10


def test_accuracy_matches_expected_accuracy():
    sim = simulate_logistic_normal(20_000, 20, scale=0.1, rng=2)
    m = sim.true_prob.max(axis=1)
    # P(correct | p) = max_j p_j: the empirical accuracy is a Poisson-binomial mean
    assert sim.expected_accuracy == pytest.approx(m.mean(), rel=0, abs=1e-15)
    se = np.sqrt(np.sum(m * (1 - m))) / m.size
    assert abs(sim.accuracy - sim.expected_accuracy) < Z * se


def test_paper_accuracy_roughly_reproduced():
    # Paper 003, App. G.1: k = 100, scale matrix I / 0.01, "~87.6 %" accuracy.  Eight seeds
    # gave expected accuracies 0.848-0.874 (sd about 0.009 from the random covariances);
    # 0.04 is about 4.5 of those sds.
    sim = simulate_logistic_normal(5_000, rng=0)
    assert sim.true_prob.shape == (5_000, 100)
    assert abs(sim.expected_accuracy - 0.876) < 0.04


def test_temperature_one_is_the_truth_and_argmax_is_kept():
    sim = simulate_logistic_normal(3_000, 8, scale=0.5, temperatures=(0.5, 1.0, 3.0), rng=3)
    assert np.array_equal(sim.probs(1.0), sim.true_prob)
    assert np.array_equal(sim.predictions[1.0], sim.true_prob)
    truth_top = sim.true_prob.argmax(axis=1)
    truth_max = sim.true_prob.max(axis=1)
    for T in (0.5, 3.0):
        P = sim.predictions[T]
        assert np.allclose(P.sum(axis=1), 1.0, rtol=0, atol=1e-12)
        assert np.array_equal(P.argmax(axis=1), truth_top)
        assert not np.allclose(P, sim.true_prob)
    # softmax(z / T) has a larger top probability for T < 1 and a smaller one for T > 1
    assert np.all(sim.predictions[0.5].max(axis=1) >= truth_max)
    assert np.all(sim.predictions[3.0].max(axis=1) <= truth_max)
    assert np.allclose(sim.predictions[0.5], sim.probs(0.5), rtol=0, atol=0)


def test_scale_matrix_is_identity_over_s():
    # Sigma ~ W^{-1}(I / s, df): E[Sigma] = I / (s (df - k - 1)).  With many components, the
    # pooled covariance of the logit noise averages many draws.  Per draw, the diagonal has
    # relative sd sqrt(2 / (df - k - 3)) = 0.71 (k = 3, df = 10); averaged over 2,000 draws,
    # 0.016; with the normal sampling of 200,000 rows, a relative error of 0.10 is over 5 sds.
    k, df, s = 3, 10, 0.25
    sim = simulate_logistic_normal(200_000, k, scale=s, df=df, n_components=2_000, rng=4)
    noise = sim.logits - _onehot_means(sim.component, k)
    cov = noise.T @ noise / noise.shape[0]
    target = 1.0 / (s * (df - k - 1))
    assert np.allclose(np.diag(cov), target, rtol=0.10, atol=0)
    off = cov[~np.eye(k, dtype=bool)]
    assert np.max(np.abs(off)) < 0.10 * target
    # and the noise scales as 1 / sqrt(s): the same draw at 4 s has half the noise
    quarter = simulate_logistic_normal(200_000, k, scale=4 * s, df=df, n_components=2_000,
                                       rng=4)
    assert np.allclose(quarter.logits - _onehot_means(quarter.component, k), noise / 2,
                       rtol=1e-10, atol=1e-12)


def test_components_balanced_and_means_one_hot():
    # df = 30: E[Sigma] = I / 19, so with s = 100 the noise sd is about 0.02 << 0.5
    sim = simulate_logistic_normal(1_000, 10, scale=100.0, df=30, rng=5)
    assert np.bincount(sim.component).tolist() == [100] * 10
    assert np.array_equal(sim.logits.argmax(axis=1), sim.component)


def test_reproducible():
    a = simulate_logistic_normal(500, 6, temperatures=(0.7,), rng=7)
    b = simulate_logistic_normal(500, 6, temperatures=(0.7,), rng=np.random.default_rng(7))
    assert np.array_equal(a.logits, b.logits) and np.array_equal(a.labels, b.labels)
    c = simulate_logistic_normal(500, 6, rng=8)
    assert not np.array_equal(a.logits, c.logits)
    P, y = logistic_normal_predictions(500, 6, rng=7)
    assert np.array_equal(P, a.true_prob) and np.array_equal(y, a.labels)


def test_sample_categorical():
    P = np.array([[0.1, 0.0, 0.6, 0.3], [0.0, 0.0, 0.0, 1.0], [0.5, 0.5, 0.0, 0.0]])
    reps = 30_000
    y = sample_categorical(np.repeat(P, reps, axis=0), rng=9).reshape(3, reps)
    for row, p in zip(y, P):
        counts = np.bincount(row, minlength=4)
        assert np.all(counts[p == 0] == 0)  # impossible classes never drawn
        sd = np.sqrt(reps * p * (1 - p))
        live = p * (1 - p) > 0
        assert np.all(np.abs(counts[live] - reps * p[live]) < Z * sd[live])
    assert y.dtype == np.int64


def test_scale_for_accuracy_hits_target():
    s = scale_for_accuracy(0.7, 10, n=3_000, rng=11)
    sim = simulate_logistic_normal(3_000, 10, scale=s, rng=11)
    assert sim.expected_accuracy == pytest.approx(0.7, abs=1e-9)
    # larger s, smaller logits, lower accuracy
    assert simulate_logistic_normal(3_000, 10, scale=4 * s, rng=11).expected_accuracy < 0.7


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(n=0), ValueError, "n: expected an integer >= 1"),
    (dict(n=-3), ValueError, "n:"),
    (dict(n=2.5), ValueError, "n:"),
    (dict(n=True), ValueError, "n:"),
    (dict(n_classes=1), ValueError, "n_classes"),
    (dict(temperatures=(1.0, 0.0)), ValueError, "temperature"),
    (dict(temperatures=(-1.0,)), ValueError, "temperature"),
    (dict(temperatures=(float("nan"),)), ValueError, "temperature"),
    (dict(temperatures=()), ValueError, "at least one"),
    (dict(scale=0.0), ValueError, "scale"),
    (dict(scale=-1.0), ValueError, "scale"),
    (dict(df=4), ValueError, "df > 4"),
    (dict(n_components=0), ValueError, "n_components"),
    (dict(rng=None), TypeError, "rng"),
])
def test_bad_inputs(kwargs, error, match):
    args = {"n": 10, "n_classes": 5, "rng": 0, **kwargs}
    with pytest.raises(error, match=match):
        simulate_logistic_normal(args.pop("n"), args.pop("n_classes"), **args)


def test_bad_inputs_elsewhere():
    sim = simulate_logistic_normal(10, 3, rng=0)
    with pytest.raises(ValueError, match="temperature"):
        sim.probs(0.0)
    with pytest.raises(ValueError, match="sums to"):
        sample_categorical([[0.5, 0.6]], rng=0)
    with pytest.raises(ValueError, match="2-d"):
        sample_categorical([0.5, 0.5], rng=0)
    with pytest.raises(TypeError, match="rng"):
        sample_categorical([[0.5, 0.5]], rng=None)
    with pytest.raises(ValueError, match="target"):
        scale_for_accuracy(0.05, 10, rng=0)
    with pytest.raises(ValueError, match="target"):
        scale_for_accuracy(1.0, 10, rng=0)
    with pytest.raises(TypeError, match="rng"):
        logistic_normal_predictions(10, 3, rng=None)
