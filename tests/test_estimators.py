"""calnotes.estimators: binned plug-in CE_S and the debiased L2 ECE."""

import itertools
import math

import numpy as np
import pytest

from calnotes import population as pop
from calnotes.estimators import binned_ce, debiased_l2_ce


def _population_binned_ce(d, loss, n_bins):
    """E d(E[Y | B], E[f(X) | B]) with B the equal-width bin of the confidence (by hand)."""
    w, T, F = d.weights, d.truth, d.prediction
    conf = F.max(axis=1)
    b = np.maximum(np.ceil(conf * n_bins).astype(int) - 1, 0)
    total = 0.0
    for j in np.unique(b):
        sel = b == j
        mass = w[sel].sum()
        if mass == 0:
            continue
        ybar = (w[sel, None] * T[sel]).sum(axis=0) / mass
        pbar = (w[sel, None] * F[sel]).sum(axis=0) / mass
        from calnotes.scores import divergence
        total += mass * float(divergence(ybar[None], pbar[None], loss)[0])
    return total


@pytest.mark.parametrize("loss", ["brier", "log"])
def test_population_version_is_below_ce_s(loss):
    """Joint convexity of the Brier and KL divergences: the binned coarsening is <= CE_S, on
    200 random finite distributions (float64 rounding 1e-12)."""
    rng = np.random.default_rng(0)
    for _ in range(200):
        d = pop.random_finite_distribution(rng, n_atoms=10, n_classes=int(rng.integers(2, 5)),
                                           positive=True)
        for m in (1, 3, 15):
            assert _population_binned_ce(d, loss, m) <= pop.calibration_error_proper(d, loss) \
                + 1e-12


def test_plugin_matches_a_direct_loop():
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(4), size=300)
    y = rng.integers(4, size=300)
    conf = P.max(axis=1)
    b = np.minimum((conf * 5).astype(int), 4)
    b = np.where(conf * 5 == np.floor(conf * 5), b - 1, b)      # right-closed bins
    total = 0.0
    for j in range(5):
        sel = b == j
        if sel.any():
            ybar = np.eye(4)[y[sel]].mean(axis=0)
            total += sel.sum() * float(((ybar - P[sel].mean(axis=0)) ** 2).sum())
    assert math.isclose(binned_ce(y, P, "brier", n_bins=5, on="confidence"), total / 300,
                        rel_tol=1e-12)


def test_debiased_is_nearly_unbiased_where_the_plugin_is_not():
    """A calibrated model: over 400 test sets of 300, the debiased estimate averages to 0 within
    4 SE while the plug-in squared L2 ECE is many SE above 0 (003 Prop 3.3)."""
    rng = np.random.default_rng(2)
    plug, deb = [], []
    for _ in range(400):
        p = rng.uniform(0.5, 1.0, size=300)
        y = (rng.uniform(size=300) < p).astype(int)
        P = np.column_stack([1 - p, p])
        deb.append(debiased_l2_ce(y, P, n_bins=10))
        correct = (P.argmax(axis=1) == y).astype(float)
        conf = P.max(axis=1)
        b = np.argsort(np.argsort(conf, kind="stable"), kind="stable") * 10 // 300
        a = np.bincount(b, correct) / np.bincount(b)
        c = np.bincount(b, conf) / np.bincount(b)
        plug.append(float(np.bincount(b) @ (a - c) ** 2 / 300))
    deb, plug = np.array(deb), np.array(plug)
    se = lambda v: v.std(ddof=1) / math.sqrt(v.size)       # noqa: E731
    assert abs(deb.mean()) < 4 * se(deb)
    assert plug.mean() > 20 * se(plug)


def test_bad_arguments():
    P = np.array([[0.2, 0.8], [0.6, 0.4]])
    y = np.array([1, 0])
    with pytest.raises(ValueError, match="on"):
        binned_ce(y, P, on="classwise")
    with pytest.raises(ValueError, match="binning"):
        binned_ce(y, P, binning="quantile")
    with pytest.raises(ValueError, match="n_bins"):
        debiased_l2_ce(y, P, n_bins=5)                  # more bins than samples
    with pytest.raises(ValueError, match="y_prob"):
        binned_ce(y, np.array([[0.2, 0.9], [0.6, 0.4]]))


def test_row_order_does_not_matter_with_ties():
    rng = np.random.default_rng(5)
    p = np.round(rng.uniform(0.5, 1.0, size=600), 1)               # heavy ties
    y = (rng.uniform(size=600) < p).astype(int)
    P = np.column_stack([1 - p, p])
    by_label = np.argsort(y, kind="stable")
    shuffled = rng.permutation(600)
    for fn in (lambda a, b: debiased_l2_ce(a, b, n_bins=10),
               lambda a, b: binned_ce(a, b, binning="mass", n_bins=10)):
        assert math.isclose(fn(y[by_label], P[by_label]), fn(y[shuffled], P[shuffled]),
                            rel_tol=1e-12, abs_tol=1e-15)
