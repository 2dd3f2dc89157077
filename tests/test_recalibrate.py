"""Recalibration maps: each tested for the property that defines it.

Tolerances
----------
``EXACT`` = 1e-12: quantities that are equal in exact arithmetic and differ only by rounding
of sums of at most a few thousand float64 terms of size <= 1 (error <= n * 2^-53 ~ 1e-12).

``OPT`` = 1e-7: comparisons between optimizer results.  The linear maps stop at gradient norm
``g <= 1e-8`` (or ``1e-5`` on rounding, never reached here); for a convex objective
``f(x) - f* <= g * ||x - x*||``, and the parameters here move by less than 10 from the
identity, so every fitted objective is within 1e-7 of its minimum.  Temperature scaling's
Brent search stops at ``|log beta - log beta*| <= 1e-10``, far inside that.

Statistical checks use a fixed seed and bands with a failure probability of order 1e-4 under
the model that generated the data (4 standard errors, or the 0.9999 quantile of the
chi-square law of the likelihood ratio), so a failure means a wrong estimator, not bad luck.
"""

import numpy as np
import pytest
from scipy import optimize, special, stats

import calnotes as cn
from calnotes.recalibrate import (AccuracyPreservingTransform, DegenerateFitWarning,
                                  DirichletCalibration,
                                  HistogramBinning, IsotonicCalibration, LOG_PROB_FLOOR,
                                  MatrixScaling, MeanReplacement, Recalibrator,
                                  TemperatureScaling, VectorScaling, _LogLossProblem,
                                  as_probabilities, softmax)

EXACT = 1e-12
OPT = 1e-7

#: Tests of shapes and messages fit on four samples (``P4``), fewer than vector scaling's
#: 2k = 6 parameters and separable for Dirichlet calibration: degenerate fits by design.
#: Their DegenerateFitWarning is tested in tests/test_report_cli_and_recalibrators.py.
TINY_FITS = pytest.mark.filterwarnings("ignore::calnotes.recalibrate.DegenerateFitWarning")


def draw_labels(rng, Q):
    """One label per row of the row-stochastic ``Q`` (inverse cdf, vectorized)."""
    cdf = np.cumsum(Q, axis=1)
    return np.minimum((cdf < rng.random(len(Q))[:, None] * cdf[:, -1:]).sum(axis=1),
                      Q.shape[1] - 1)


def overconfident(seed, n, k, scale=3.0, temperature=1.5):
    """Logits ``scale * N(0, 1)``; labels from ``softmax(Z / temperature)``."""
    rng = np.random.default_rng(seed)
    Z = scale * rng.standard_normal((n, k))
    return Z, draw_labels(rng, softmax(Z / temperature))


def nll(Z, y):
    """Mean log loss of softmax(Z), written out here (not calnotes' code)."""
    return float(np.mean(special.logsumexp(Z, axis=1) - Z[np.arange(len(y)), y]))


def accuracy(P, y):
    return float(np.mean(np.argmax(P, axis=1) == y))


@pytest.fixture(scope="module")
def splits():
    """A realistic over-confident 10-class model: calibration and test splits of 4,000."""
    Z, y = overconfident(0, 8000, 10)
    return Z[:4000], y[:4000], Z[4000:], y[4000:]


# ============================================================================ temperature

def test_temperature_scaling_never_changes_argmax(splits):
    Zc, yc, Zt, _ = splits
    ts = TemperatureScaling(inputs="logits").fit(Zc, yc)
    assert ts.temperature_ > 1.2          # the model is over-confident: T moved away from 1
    np.testing.assert_array_equal(ts.transform(Zt).argmax(axis=1), Zt.argmax(axis=1))


def test_temperature_scaling_recovers_known_temperature():
    # Labels drawn from softmax(Z / T0): beta0 = 1 / T0 is the true parameter.  The MLE of
    # beta is asymptotically normal with variance 1 / (n I), I the Fisher information per
    # sample = mean of Var_{softmax(beta0 z_i)}(z_i) (second derivative of the log loss).
    T0, n, k = 2.0, 20000, 5
    rng = np.random.default_rng(1)
    Z = 3.0 * rng.standard_normal((n, k))
    Q = softmax(Z / T0)
    y = draw_labels(rng, Q)
    info = np.mean(np.sum(Q * Z ** 2, axis=1) - np.sum(Q * Z, axis=1) ** 2)
    se_beta = 1.0 / np.sqrt(n * info)
    ts = TemperatureScaling(inputs="logits").fit(Z, y)
    assert abs(1.0 / ts.temperature_ - 1.0 / T0) < 4.0 * se_beta
    assert 4.0 * se_beta < 0.02           # the band is informative (T within ~8 %)


def test_temperature_scaling_is_the_grid_minimum():
    Z, y = overconfident(2, 3000, 4)
    grid = np.exp(np.linspace(np.log(0.5), np.log(4.0), 801))   # step 0.0026 in log T
    losses = np.array([nll(Z / T, y) for T in grid])
    j = int(np.argmin(losses))
    assert 0 < j < len(grid) - 1          # an interior minimum
    ts = TemperatureScaling(inputs="logits").fit(Z, y)
    step = np.log(grid[1] / grid[0])
    assert abs(np.log(ts.temperature_) - np.log(grid[j])) <= step
    assert nll(Z / ts.temperature_, y) <= losses[j] + EXACT
    assert abs(ts.nll_ - nll(Z / ts.temperature_, y)) <= EXACT


@pytest.mark.parametrize("seed", range(4))
def test_fitted_log_loss_never_above_identity_and_maps_nest(seed):
    # Identity (T = 1) is in every family; TS is in VS (w = 1/T, b = 0); VS is in MS
    # (W = diag(w)); MS(reg=0) on log-softmax features is Dirichlet(0, 0).
    Z, y = overconfident(seed, 1500, 4, temperature=[0.7, 1.0, 1.5, 3.0][seed])
    base = nll(Z, y)
    ts = TemperatureScaling(inputs="logits").fit(Z, y)
    vs = VectorScaling(inputs="logits").fit(Z, y)
    ms = MatrixScaling(inputs="logits").fit(Z, y)
    assert ts.nll_ <= base + EXACT
    assert vs.nll_ <= ts.nll_ + OPT
    assert ms.nll_ <= vs.nll_ + OPT
    for m in (vs, ms):
        assert m.converged_
        assert abs(m.nll_ - cn.log_loss(y, m.transform(Z))) <= EXACT


def test_temperature_scaling_keeps_zero_probabilities_and_refuses_zero_on_label():
    P = np.array([[0.7, 0.3, 0.0], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    with pytest.warns(DegenerateFitWarning, match="one-hot"):   # 3 samples, all argmax right
        out = TemperatureScaling().fit(P, [0, 1, 2]).transform(P)
    assert out[0, 2] == 0.0
    with pytest.raises(ValueError, match=r"X: sample 0 gives probability 0 to its label 2"):
        TemperatureScaling().fit(P, [2, 1, 2])


# ============================================================================ vector / matrix

@pytest.mark.parametrize("full, pen", [
    (False, {}),
    (True, {}),
    (True, {"off_diag": 0.3, "diag": 0.1, "bias": 0.2}),     # matrix scaling, reg
    (True, {"off_diag": 0.05, "diag": 0.0, "bias": 0.07}),   # ODIR
])
def test_gradient_and_hessian_products_match_finite_differences(full, pen):
    rng = np.random.default_rng(3)
    F = special.log_softmax(3.0 * rng.standard_normal((60, 4)), axis=1)
    y = rng.integers(0, 4, 60)
    problem = _LogLossProblem(F, y, full=full, **pen)
    for _ in range(3):
        theta = problem.initial() + rng.standard_normal(problem.initial().size)
        err = optimize.check_grad(lambda t: problem.value_grad(t)[0],
                                  lambda t: problem.value_grad(t)[1], theta)
        # forward differences with step 1.5e-8: error ~ 1e-8 * |f''| * sqrt(dim) ~ 1e-6
        assert err < 1e-5 * max(1.0, np.linalg.norm(problem.value_grad(theta)[1]))
        v = rng.standard_normal(theta.size)
        h = 1e-5   # central differences: error ~ h^2 |f'''| + 1e-16 / h ~ 1e-10
        fd = (problem.value_grad(theta + h * v)[1] - problem.value_grad(theta - h * v)[1]) / (2 * h)
        np.testing.assert_allclose(problem.hessp(theta, v), fd, atol=1e-7)


def literal_odir(theta, L, y, lam, mu):
    """Kull et al.'s ODIR objective, written out independently of calnotes."""
    k = L.shape[1]
    W, b = theta[:k * k].reshape(k, k), theta[k * k:]
    off = W[~np.eye(k, dtype=bool)]
    return (nll(L @ W.T + b, y) + lam / (k * (k - 1)) * np.sum(off ** 2)
            + mu / k * np.sum(b ** 2))


def central_gradient(f, x, h=1e-5):
    g = np.empty_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("lam, mu", [(0.5, 0.2), (1e-3, 1e-3), (50.0, 0.0)])
def test_dirichlet_fit_is_stationary_for_the_literal_odir_objective(lam, mu):
    # calnotes optimizes the penalty minimized over softmax-invariant shifts and then shifts;
    # the result must be a stationary point (hence, by convexity, a minimizer) of the plain
    # objective of the paper.
    Z, y = overconfident(4, 800, 4)
    dc = DirichletCalibration(lam, mu, inputs="logits").fit(Z, y)
    L = special.log_softmax(Z, axis=1)
    theta = np.concatenate([dc.weights_.ravel(), dc.bias_])
    g = central_gradient(lambda t: literal_odir(t, L, y, lam, mu), theta)
    assert np.abs(g).max() < 1e-6
    assert abs(dc.nll_ - nll(L @ dc.weights_.T + dc.bias_, y)) <= EXACT


@pytest.mark.parametrize("cls, p_eff", [
    (lambda: VectorScaling(inputs="logits"), lambda k: 2 * k - 1),
    (lambda: MatrixScaling(inputs="logits"), lambda k: k * k - 1),
    (lambda: DirichletCalibration(0.0, 0.0, inputs="logits"), lambda k: k * k - 1),
])
def test_identity_truth_likelihood_ratio(cls, p_eff):
    # Labels from softmax(Z): the identity map is the truth, inside every family.  Wilks:
    # 2 n (NLL(identity) - NLL(fit)) ~ chi-square with as many degrees of freedom as
    # identifiable parameters (softmax ignores one shift of b, and for a full W one shift
    # vector added to every row).  It must be >= 0 (the fit is the minimum) and below the
    # 0.9999 quantile.
    n, k = 6000, 4
    rng = np.random.default_rng(5)
    Z = 2.0 * rng.standard_normal((n, k))
    y = draw_labels(rng, softmax(Z))
    m = cls().fit(Z, y)
    lr = 2 * n * (nll(Z, y) - m.nll_)
    assert -2 * n * OPT <= lr <= stats.chi2.ppf(0.9999, p_eff(k))
    assert lr > stats.chi2.ppf(0.0001, p_eff(k))   # and not suspiciously small either


def test_matrix_scaling_learns_a_class_permutation():
    rng = np.random.default_rng(6)
    Z = 2.0 * rng.standard_normal((3000, 3))
    y = draw_labels(rng, softmax(Z[:, [2, 0, 1]]))   # class j is driven by logit perm[j]
    ms = MatrixScaling(inputs="logits").fit(Z, y)
    assert ms.weights_.argmax(axis=1).tolist() == [2, 0, 1]
    assert accuracy(ms.transform(Z), y) > accuracy(Z, y) + 0.3
    # vector scaling cannot permute classes
    vs = VectorScaling(inputs="logits").fit(Z, y)
    assert vs.nll_ > ms.nll_ + 0.1


def test_matrix_scaling_regularization_shrinks_to_identity():
    Z, y = overconfident(7, 1000, 3)
    free = MatrixScaling(inputs="logits").fit(Z, y)
    tight = MatrixScaling(reg=1e6, inputs="logits").fit(Z, y)
    assert np.abs(free.weights_ - np.eye(3)).max() > 0.1
    assert np.abs(tight.weights_ - np.eye(3)).max() < 1e-5
    assert np.abs(tight.bias_).max() < 1e-5
    assert tight.nll_ >= free.nll_ - OPT


def test_vector_and_matrix_scaling_refuse_zero_probabilities():
    P = np.array([[0.7, 0.3, 0.0], [0.2, 0.5, 0.3], [0.1, 0.1, 0.8]])
    for m in (VectorScaling(), MatrixScaling()):
        with pytest.raises(ValueError, match=r"X: probability 0 at index \[0, 2\].*logits"):
            m.fit(P, [0, 1, 2])
        with pytest.warns(DegenerateFitWarning) as record:   # 2 samples, class 0 absent
            m.fit(P[1:], [1, 2])
        assert any("class(es) [0]" in str(w.message) for w in record)
        with pytest.raises(ValueError, match=r"X: probability 0 at index \[0, 2\]"):
            m.transform(P)


def test_vector_scaling_probabilities_equal_logits_on_log_softmax():
    Z, y = overconfident(8, 1000, 4)
    a = VectorScaling(inputs="logits").fit(special.log_softmax(Z, axis=1), y)
    b = VectorScaling().fit(softmax(Z), y)
    np.testing.assert_allclose(a.transform(special.log_softmax(Z, axis=1)),
                               b.transform(softmax(Z)), atol=1e-6)


# ============================================================================ Dirichlet

def off_diagonal(W):
    return W[~np.eye(len(W), dtype=bool)]


@pytest.fixture(scope="module")
def mixed_truth():
    """Labels from softmax(A log softmax(Z)) with a real off-diagonal part in A."""
    rng = np.random.default_rng(9)
    Z = 2.0 * rng.standard_normal((3000, 4))
    A = 0.8 * np.eye(4) + 0.6 * np.eye(4)[[1, 2, 3, 0]]
    y = draw_labels(rng, softmax(special.log_softmax(Z, axis=1) @ A.T))
    return Z, y


def test_dirichlet_large_lambda_gives_diagonal_w(mixed_truth):
    Z, y = mixed_truth
    free = DirichletCalibration(0.0, 0.0, inputs="logits").fit(Z, y)
    diag = DirichletCalibration(1e7, 0.0, inputs="logits").fit(Z, y)
    assert np.abs(off_diagonal(free.weights_)).max() > 0.3
    assert np.abs(off_diagonal(diag.weights_)).max() < 1e-4
    assert diag.nll_ > free.nll_ + 0.01   # the off-diagonal signal is real and now lost


def test_dirichlet_log_loss_grows_with_lambda(mixed_truth):
    # Along the path of penalized minimizers the unpenalized loss is non-decreasing.
    Z, y = mixed_truth
    losses = [DirichletCalibration(lam, 1e-3, inputs="logits").fit(Z, y).nll_
              for lam in (0.0, 1e-2, 1.0, 1e2, 1e4)]
    assert all(b >= a - OPT for a, b in zip(losses, losses[1:]))
    assert losses[-1] > losses[0] + 0.01


def test_dirichlet_without_penalty_is_matrix_scaling_on_log_softmax(mixed_truth):
    Z, y = mixed_truth
    L = special.log_softmax(Z, axis=1)
    dc = DirichletCalibration(0.0, 0.0, inputs="logits").fit(Z, y)
    ms = MatrixScaling(inputs="logits").fit(L, y)
    assert abs(dc.nll_ - ms.nll_) <= OPT
    np.testing.assert_allclose(dc.transform(Z), ms.transform(L), atol=1e-5)


def test_dirichlet_probabilities_and_logits_agree(mixed_truth):
    Z, y = mixed_truth
    a = DirichletCalibration(inputs="logits").fit(Z, y)
    b = DirichletCalibration().fit(softmax(Z), y)
    np.testing.assert_allclose(a.transform(Z), b.transform(softmax(Z)), atol=1e-6)


def test_dirichlet_floors_zero_probabilities():
    rng = np.random.default_rng(10)
    P = softmax(2.0 * rng.standard_normal((300, 3)))
    P[:20, 2] = 0.0
    P[:20] /= P[:20].sum(axis=1, keepdims=True)
    y = draw_labels(rng, P)
    dc = DirichletCalibration(1.0, 1.0).fit(P, y)
    out = dc.transform(P)
    assert np.isfinite(out).all() and dc.converged_
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=EXACT)
    assert LOG_PROB_FLOOR == 1e-300


# ============================================================================ histogram binning

# Hand-worked example: k = 3, m = 4 bins, edges 0, .25, .5, .75, 1 (an edge value goes UP,
# 1.0 is in the last bin).
#
# idx    p0    p1    p2    y     bins (class 0, 1, 2)
#  0   0.50  0.25  0.25    0     2 1 1
#  1   0.25  0.50  0.25    1     1 2 1
#  2   0.00  1.00  0.00    1     0 3 0
#  3   0.75  0.25  0.00    0     3 1 0
#  4   0.60  0.20  0.20    2     2 0 0
#  5   0.10  0.30  0.60    2     0 1 2
#  6   0.40  0.40  0.20    0     1 1 0
#  7   0.20  0.70  0.10    1     0 2 0
#
# class 0: bin0 {2,5,7} labels 1,2,1 -> 0/3;  bin1 {1,6} -> 1/2;  bin2 {0,4} -> 1/2;
#          bin3 {3} -> 1
# class 1: bin0 {4} -> 0;  bin1 {0,3,5,6} -> 0/4;  bin2 {1,7} -> 2/2;  bin3 {2} -> 1
# class 2: bin0 {2,3,4,6,7} labels 1,0,2,0,1 -> 1/5;  bin1 {0,1} -> 0;  bin2 {5} -> 1;
#          bin3 empty -> midpoint 7/8
HB_P = np.array([[0.50, 0.25, 0.25], [0.25, 0.50, 0.25], [0.00, 1.00, 0.00],
                 [0.75, 0.25, 0.00], [0.60, 0.20, 0.20], [0.10, 0.30, 0.60],
                 [0.40, 0.40, 0.20], [0.20, 0.70, 0.10]])
HB_Y = np.array([0, 1, 1, 0, 2, 2, 0, 1])
HB_VALUES = [[0.0, 0.5, 0.5, 1.0], [0.0, 0.0, 1.0, 1.0], [0.2, 0.0, 1.0, 0.875]]
HB_COUNTS = [[3, 2, 2, 1], [1, 4, 2, 1], [5, 2, 1, 0]]
# Rows on the fit data: the per-class values above, divided by their sum.
HB_OUT = [[1, 0, 0], [1 / 3, 2 / 3, 0], [0, 5 / 6, 1 / 6], [5 / 6, 0, 1 / 6],
          [5 / 7, 0, 2 / 7], [0, 0, 1], [5 / 7, 0, 2 / 7], [0, 5 / 6, 1 / 6]]


def test_histogram_binning_hand_example():
    hb = HistogramBinning(n_bins=4).fit(HB_P, HB_Y)
    np.testing.assert_allclose(hb.bin_values_, HB_VALUES, rtol=0, atol=EXACT)
    np.testing.assert_array_equal(hb.bin_counts_, HB_COUNTS)
    np.testing.assert_allclose(hb.transform(HB_P), HB_OUT, rtol=0, atol=EXACT)


def test_histogram_binning_fallbacks_and_infinite_log_loss():
    hb = HistogramBinning(n_bins=4).fit(HB_P, HB_Y)
    # (0.2, 0.4, 0.4): bins 0, 1, 1 -> values 0, 0, 0 -> uniform
    # (0.0, 0.2, 0.8): class 2 in the empty bin 3 -> its midpoint 0.875, then (0, 0, 1)
    # (0.1, 0.2, 0.7): values 0, 0, 1 -> (0, 0, 1): label 0 gets probability exactly 0
    X = [[0.2, 0.4, 0.4], [0.0, 0.2, 0.8], [0.1, 0.2, 0.7]]
    np.testing.assert_allclose(hb.transform_ovr(X), [[0, 0, 0], [0, 0, 0.875], [0, 0, 1]],
                               atol=EXACT)
    np.testing.assert_allclose(hb.transform(X), [[1 / 3] * 3, [0, 0, 1], [0, 0, 1]], atol=EXACT)
    assert cn.log_loss([0, 2, 0], hb.transform(X)) == np.inf    # not hidden


def test_histogram_binning_values_are_bin_frequencies(splits):
    # On the fit split, the one-vs-rest value of every sample and class is the frequency of
    # the class among the fit samples in the same bin (loops over an explicit bin rule).
    Zc, yc, _, _ = splits
    P = softmax(Zc[:600, :4])
    y = yc[:600] % 4
    m = 7
    hb = HistogramBinning(n_bins=m).fit(P, y)
    V = hb.transform_ovr(P)
    edges = [j / m for j in range(m + 1)]

    def bin_of(v):
        return m - 1 if v == 1.0 else max(j for j in range(m) if edges[j] <= v)

    for r in range(4):
        bins = [bin_of(v) for v in P[:, r]]
        for i in range(0, 600, 37):
            members = [t for t in range(600) if bins[t] == bins[i]]
            assert abs(V[i, r] - np.mean([y[t] == r for t in members])) <= EXACT
    np.testing.assert_allclose(hb.transform(P).sum(axis=1), 1.0, atol=EXACT)


def test_histogram_binning_logits_use_softmax(splits):
    Zc, yc, Zt, _ = splits
    a = HistogramBinning(inputs="logits").fit(Zc, yc).transform(Zt)
    b = HistogramBinning().fit(softmax(Zc), yc).transform(softmax(Zt))
    np.testing.assert_array_equal(a, b)


# ============================================================================ isotonic

def test_isotonic_maps_are_monotone_and_rows_sum_to_one(splits):
    Zc, yc, Zt, _ = splits
    k = Zc.shape[1]
    ir = IsotonicCalibration().fit(softmax(Zc), yc)
    t = np.linspace(0.0, 1.0, 501)
    for r in range(k):
        rows = np.tile(((1.0 - t) / (k - 1))[:, None], (1, k))
        rows[:, r] = t                     # column r runs over [0, 1]
        values = ir.transform_ovr(rows)
        assert np.all(np.diff(values[:, r]) >= 0.0)
        assert values[:, r].min() >= 0.0 and values[:, r].max() <= 1.0
    np.testing.assert_allclose(ir.transform(softmax(Zt)).sum(axis=1), 1.0, atol=EXACT)


def test_isotonic_matches_sklearn_before_normalization(splits):
    from sklearn.isotonic import IsotonicRegression

    Zc, yc, Zt, _ = splits
    Pc, Pt = softmax(Zc), softmax(Zt)
    ir = IsotonicCalibration().fit(Pc, yc)
    V = ir.transform_ovr(Pt)
    for r in range(Pc.shape[1]):
        ref = IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1)
        ref.fit(Pc[:, r], (yc == r).astype(float))
        np.testing.assert_array_equal(V[:, r], ref.predict(Pt[:, r]))
    total = V.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(ir.transform(Pt), V / total, rtol=1e-15)


def test_isotonic_zero_probabilities_and_pooling():
    P = np.array([[0.9, 0.1], [0.8, 0.2], [0.3, 0.7], [0.2, 0.8]])
    ir = IsotonicCalibration().fit(P, [0, 0, 1, 1])   # perfectly separated: 0/1 steps
    # below the fit data the class-0 map is clipped to 0, above it the class-1 map to 1
    np.testing.assert_array_equal(ir.transform([[0.1, 0.9]]), [[0.0, 1.0]])
    assert cn.log_loss([0], ir.transform([[0.1, 0.9]])) == np.inf    # not hidden
    # The top class is always wrong: per class, x = 0.2 (twice, one positive) averages to
    # 1/2 and x = 0.6 (negative) to 0; the violation pools all three to 1/3.
    P3 = np.array([[0.6, 0.2, 0.2], [0.2, 0.6, 0.2], [0.2, 0.2, 0.6]])
    ir3 = IsotonicCalibration().fit(P3, [1, 2, 0])
    np.testing.assert_allclose(ir3.transform_ovr(P3), np.full((3, 3), 1 / 3), atol=EXACT)


def test_all_zero_rows_become_uniform():
    from calnotes.recalibrate import _normalize_rows   # shared by HB and IR

    out = _normalize_rows(np.array([[0.0, 0.0, 0.0, 0.0], [0.0, 0.5, 0.0, 1.5]]))
    np.testing.assert_array_equal(out, [[0.25] * 4, [0.0, 0.25, 0.0, 0.75]])


# ============================================================================ MRR and t^f

def test_mrr_preserves_argmax_and_zeroes_top_label_ece_on_fit_split(splits):
    Zc, yc, Zt, yt = splits
    Pc, Pt = softmax(Zc), softmax(Zt)
    mrr = MeanReplacement().fit(Pc, yc)
    assert mrr.accuracy_ == accuracy(Pc, yc) and mrr.accuracy_preserving_
    for P, y in ((Pc, yc), (Pt, yt)):
        out = mrr.transform(P)
        np.testing.assert_array_equal(out.argmax(axis=1), P.argmax(axis=1))
        assert accuracy(out, y) == accuracy(P, y)
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=EXACT)
    out = mrr.transform(Pc)
    assert cn.confidence(cn.binned_ece, yc, out, n_bins=15) <= EXACT
    assert cn.tce(yc, out) <= EXACT
    assert cn.tce(yc, Pc) > 0.1           # the original model is far from calibrated
    k = Pc.shape[1]
    np.testing.assert_allclose(np.sort(out[0]), [(1 - mrr.accuracy_) / (k - 1)] * (k - 1)
                               + [mrr.accuracy_], atol=EXACT)


def test_mrr_wins_ece_and_loses_log_loss_and_brier(splits):
    # The pattern of Table 1 of the ECE-pitfalls paper: same accuracy as temperature
    # scaling, lower top-label ECE on the calibration split, worse proper scores on test.
    Zc, yc, Zt, yt = splits
    ts = TemperatureScaling(inputs="logits").fit(Zc, yc)
    mrr = MeanReplacement(inputs="logits").fit(Zc, yc)
    assert accuracy(mrr.transform(Zt), yt) == accuracy(ts.transform(Zt), yt)
    assert cn.tce(yc, mrr.transform(Zc)) < cn.tce(yc, ts.transform(Zc))
    assert cn.log_loss(yt, mrr.transform(Zt)) > cn.log_loss(yt, ts.transform(Zt)) + 0.1
    assert cn.brier_loss(yt, mrr.transform(Zt)) > cn.brier_loss(yt, ts.transform(Zt)) + 0.02


def test_mrr_below_chance_changes_the_argmax():
    # accuracy 1/4 <= 1/k = 1/3: the predicted class gets 1/4 < 3/8 -- another class wins.
    P = [[0.8, 0.1, 0.1], [0.1, 0.8, 0.1], [0.1, 0.1, 0.8], [0.8, 0.1, 0.1]]
    mrr = MeanReplacement().fit(P, [1, 2, 0, 0])
    assert mrr.accuracy_ == 0.25 and not mrr.accuracy_preserving_
    np.testing.assert_allclose(mrr.transform([[0.1, 0.1, 0.8]]), [[0.375, 0.375, 0.25]])


def test_sorted_tf_coincides_with_mrr(splits):
    Zc, yc, Zt, _ = splits
    for inputs, X, Xt in (("logits", Zc, Zt), ("probs", softmax(Zc), softmax(Zt))):
        tf = AccuracyPreservingTransform(kind="sorted", inputs=inputs).fit(X, yc)
        mrr = MeanReplacement(inputs=inputs).fit(X, yc)
        np.testing.assert_array_equal(tf.transform(Xt), mrr.transform(Xt))
        assert tf.accuracy_ == mrr.accuracy_
    # ACC on the largest entry, the first among tied maxima
    with pytest.warns(DegenerateFitWarning, match=r"class\(es\) \[2\]"):
        tf = AccuracyPreservingTransform().fit([[0.6, 0.3, 0.1]] * 4, [0, 0, 0, 1])  # ACC 3/4
    np.testing.assert_allclose(tf.transform([[0.4, 0.4, 0.2], [0.1, 0.2, 0.7]]),
                               [[0.75, 0.125, 0.125], [0.125, 0.125, 0.75]], atol=EXACT)


def test_conditional_tf_is_canonically_calibrated_on_fit_split(splits):
    Zc, yc, _, _ = splits
    tf = AccuracyPreservingTransform(kind="conditional", inputs="logits").fit(Zc, yc)
    out = tf.transform(Zc)
    k = Zc.shape[1]
    onehot = np.eye(k)[yc]
    # E[Y | output] = output: group the fit samples by their output vector.
    vectors, group = np.unique(out, axis=0, return_inverse=True)
    group = group.ravel()
    for g, v in enumerate(vectors):
        np.testing.assert_allclose(onehot[group == g].mean(axis=0), v, atol=EXACT)
    # and by predicted label a: the output is the label frequency over I_a
    pred = Zc.argmax(axis=1)
    for a in range(k):
        freq = np.bincount(yc[pred == a], minlength=k) / np.sum(pred == a)
        np.testing.assert_allclose(tf.class_distributions_[a], freq, atol=EXACT)
    assert tf.fallback_classes_.size == 0
    assert tf.accuracy_preserving_
    np.testing.assert_array_equal(out.argmax(axis=1), pred)
    assert cn.tce(yc, out) < cn.tce(yc, softmax(Zc))


def test_conditional_tf_can_change_accuracy_when_condition_fails():
    # Predicted label 0 is right once in four times; label 1 is what those samples are:
    # P_0 = (1/4, 3/4, 0) puts its maximum on 1, so t^f moves the prediction and the
    # accuracy rises from 5/8 to 7/8 -- t^f is accuracy-preserving only under the condition.
    P = [[0.6, 0.3, 0.1]] * 4 + [[0.2, 0.7, 0.1]] * 2 + [[0.1, 0.2, 0.7]] * 2
    y = [1, 1, 1, 0, 1, 1, 2, 2]
    tf = AccuracyPreservingTransform(kind="conditional").fit(P, y)
    assert not tf.accuracy_preserving_
    np.testing.assert_allclose(tf.class_distributions_[0], [0.25, 0.75, 0.0])
    out = tf.transform(P)
    assert accuracy(np.array(P), np.array(y)) == 5 / 8
    assert accuracy(out, np.array(y)) == 7 / 8


def test_conditional_tf_falls_back_to_the_marginal():
    P = [[0.7, 0.2, 0.1], [0.2, 0.7, 0.1], [0.6, 0.3, 0.1], [0.3, 0.6, 0.1]]
    y = [0, 1, 2, 1]                    # class 2 is never predicted
    tf = AccuracyPreservingTransform(kind="conditional").fit(P, y)
    assert tf.fallback_classes_.tolist() == [2]
    assert tf.counts_.tolist() == [2, 2, 0]
    np.testing.assert_allclose(tf.transform([[0.1, 0.1, 0.8]]), [[0.25, 0.5, 0.25]])


# ============================================================================ shapes and inputs

ALL = {
    "ts": lambda inputs: TemperatureScaling(inputs=inputs),
    "vs": lambda inputs: VectorScaling(inputs=inputs),
    "ms": lambda inputs: MatrixScaling(reg=0.01, inputs=inputs),
    "dir": lambda inputs: DirichletCalibration(inputs=inputs),
    "hb": lambda inputs: HistogramBinning(n_bins=3, inputs=inputs),
    "ir": lambda inputs: IsotonicCalibration(inputs=inputs),
    "mrr": lambda inputs: MeanReplacement(inputs=inputs),
    "tf_sorted": lambda inputs: AccuracyPreservingTransform("sorted", inputs=inputs),
    "tf_cond": lambda inputs: AccuracyPreservingTransform("conditional", inputs=inputs),
}
P4 = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]]
Y4 = [0, 1, 2, 1]


@TINY_FITS
@pytest.mark.parametrize("name", ALL)
def test_outputs_are_probabilities_for_both_input_kinds(name):
    for inputs, X in (("probs", P4), ("logits", np.log(P4))):
        m = ALL[name](inputs)
        assert isinstance(m, Recalibrator)
        out = m.fit(X, Y4).transform(X)
        assert out.shape == (4, 3) and m.n_classes_ == 3
        assert np.all(out >= 0.0) and np.all(np.isfinite(out))
        np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=EXACT)
        np.testing.assert_array_equal(m.fit_transform(X, Y4), out)


@pytest.mark.parametrize("name", ALL)
def test_binary_vector_input_gives_two_columns(name):
    p = [0.2, 0.9, 0.6, 0.4]
    m = ALL[name]("probs").fit(p, [0, 1, 0, 1])
    out = m.transform([0.3, 0.8])
    assert out.shape == (2, 2)
    np.testing.assert_allclose(out.sum(axis=1), 1.0, atol=EXACT)


def test_as_probabilities_reads_binary_vectors():
    np.testing.assert_array_equal(as_probabilities([0.25], "probs"), [[0.75, 0.25]])


# ============================================================================ errors

BAD_X = [
    ("nan", "probs", [[0.7, 0.3, np.nan], *P4[1:]], ValueError, r"X: non-finite value nan at index \[0, 2\]"),
    ("row_sum", "probs", [[0.7, 0.3, 0.1], *P4[1:]], ValueError, r"X: row 0 sums to 1\.1, not 1"),
    ("negative", "probs", [[1.1, -0.1, 0.0], *P4[1:]], ValueError, r"X: value .*1\.1.* at index \[0, 0\] is outside"),
    ("logit_inf", "logits", [[0.0, np.inf, 1.0], *P4[1:]], ValueError, r"X: non-finite logit inf at index \[0, 1\]"),
    ("logit_nan", "logits", [[0.0, 1.0, 1.0], [np.nan, 0, 0], *P4[2:]], ValueError, r"X: non-finite logit nan at index \[1, 0\]"),
    ("empty", "probs", np.empty((0, 3)), ValueError, r"X: empty input \(n = 0\)"),
    ("empty_logits", "logits", np.empty((0, 3)), ValueError, r"X: empty input \(n = 0\)"),
    ("one_column", "logits", [[1.0]] * 4, ValueError, r"X: logits need k >= 2 columns"),
    ("3d", "probs", np.full((4, 3, 1), 1 / 3), ValueError, r"X: expected shape \(n,\) or \(n, k\)"),
]


@TINY_FITS
@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("case, inputs, X, exc, match", BAD_X, ids=[c[0] for c in BAD_X])
def test_bad_x_in_fit_and_transform(name, case, inputs, X, exc, match):
    with pytest.raises(exc, match=match):
        ALL[name](inputs).fit(X, Y4)
    good = np.log(P4) if inputs == "logits" else P4
    m = ALL[name](inputs).fit(good, Y4)
    with pytest.raises(exc, match=match):
        m.transform(X)


BAD_Y = [
    ("out_of_range", [0, 1, 3, 1], r"y: label 3 at index 2 is out of range; expected integers in 0\.\.2"),
    ("negative", [0, -1, 2, 1], r"y: label -1 at index 1 is out of range"),
    ("too_short", [0, 1, 2], r"y: has 3 labels but the predictions have 4 rows"),
    ("too_long", [0, 1, 2, 1, 0], r"y: has 5 labels but the predictions have 4 rows"),
    ("fractional", [0, 1, 2, 0.5], r"y: label 0\.5 at index 3 is not an integer"),
    ("2d", [[0, 1, 2, 1]], r"y: expected a 1-d array of labels"),
]


@pytest.mark.parametrize("name", ALL)
@pytest.mark.parametrize("case, y, match", BAD_Y, ids=[c[0] for c in BAD_Y])
def test_bad_labels(name, case, y, match):
    with pytest.raises(ValueError, match=match):
        ALL[name]("probs").fit(P4, y)


@TINY_FITS
@pytest.mark.parametrize("name", ALL)
def test_transform_checks_fitted_state_and_width(name):
    with pytest.raises(RuntimeError, match=r"call fit\(X, y\) before transform\(X\)"):
        ALL[name]("probs").transform(P4)
    m = ALL[name]("probs").fit(P4, Y4)
    with pytest.raises(ValueError, match=r"X: has 4 columns but \w+ was fitted on 3 classes"):
        m.transform([[0.25] * 4])
    with pytest.raises(ValueError, match=r"X: has 2 columns but \w+ was fitted on 3 classes"):
        m.transform([0.3, 0.4])          # binary vector = two columns
    # a failed refit leaves the object unfitted, not half-fitted with the old state
    with pytest.raises(ValueError):
        m.fit(P4, [0, 1, 2])
    with pytest.raises(RuntimeError, match="call fit"):
        m.transform(P4)


@pytest.mark.parametrize("name", ALL)
def test_bad_inputs_string(name):
    with pytest.raises(ValueError, match=r"inputs: expected one of \('probs', 'logits'\), got 'proba'"):
        ALL[name]("proba")


@pytest.mark.parametrize("make, exc, match", [
    (lambda: HistogramBinning(n_bins=0), ValueError, r"n_bins: expected a positive integer, got 0"),
    (lambda: HistogramBinning(n_bins=-3), ValueError, r"n_bins: expected a positive integer"),
    (lambda: HistogramBinning(n_bins=2.5), TypeError, r"n_bins: expected a positive integer"),
    (lambda: HistogramBinning(n_bins=True), TypeError, r"n_bins: expected a positive integer"),
    (lambda: MatrixScaling(reg=-1.0), ValueError, r"reg: expected a finite non-negative number, got -1\.0"),
    (lambda: MatrixScaling(reg=np.nan), ValueError, r"reg: expected a finite non-negative number, got nan"),
    (lambda: MatrixScaling(reg="big"), TypeError, r"reg: expected a non-negative real number"),
    (lambda: DirichletCalibration(reg_lambda=-0.1), ValueError, r"reg_lambda: expected a finite non-negative"),
    (lambda: DirichletCalibration(reg_mu=np.inf), ValueError, r"reg_mu: expected a finite non-negative number, got inf"),
    (lambda: AccuracyPreservingTransform(kind="sorting"), ValueError, r"kind: expected one of \('sorted', 'conditional'\), got 'sorting'"),
])
def test_bad_hyperparameters(make, exc, match):
    with pytest.raises(exc, match=match):
        make()


def test_histogram_binning_accepts_more_bins_than_samples():
    hb = HistogramBinning(n_bins=50).fit(P4, Y4)
    assert hb.bin_counts_.sum() == 4 * 3
    np.testing.assert_allclose(hb.transform(P4).sum(axis=1), 1.0, atol=EXACT)
