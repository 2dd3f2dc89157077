"""The sharpness diagrams pinned with an asymmetric divergence.

The Brier pair is symmetric (``||x - y||^2``, ``(a - b)^2``), so a swap of a divergence's
arguments inside :mod:`calnotes.theory.sharpness` leaves every Brier number unchanged. These tests pin
the calibration/sharpness components with the KL (log-loss) pair, on instances where swapping
the arguments changes the numbers (asserted here), against references written out from the
definitions: ``KL(x || y) = sum x log(x / y)`` and the binary KL, on a finite distribution
(population functions) and on a sample whose two confidence values lie far apart compared with
the bandwidth (so that every kernel average is a plain group mean).
"""

import numpy as np
import pytest

from calnotes.theory import population as pop
from calnotes.core.scores import NEG_ENTROPY, bregman_divergence
from calnotes.theory.sharpness import (calibration_sharpness, confidence_calibration_plugin,
                                       grouping_loss_decomposition, pointwise_sharpness_gap)


def kl(x, y):
    """Row-wise KL(x || y) = sum x log(x / y), 0 log 0 = 0 (written out, not the library's)."""
    x, y = np.atleast_2d(np.asarray(x, float)), np.atleast_2d(np.asarray(y, float))
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(x > 0, x * np.log(x / y), 0.0)
    return terms.sum(axis=1)


def bkl(a, b):
    """Binary KL(Ber(a) || Ber(b))."""
    return float(kl([[a, 1 - a]], [[b, 1 - b]])[0])


# Three classes, four atoms: atoms 0 and 1 share confidence 0.5 for different predicted classes
# (the pooling of the top-label conditioning); atoms 2 and 3 share a prediction vector (the
# pooling of E[pi | g]); strictly positive predictions and truths.
W = np.array([0.2, 0.3, 0.1, 0.4])
T = np.array([[0.6, 0.3, 0.1],
              [0.1, 0.2, 0.7],
              [0.7, 0.2, 0.1],
              [0.3, 0.5, 0.2]])
F = np.array([[0.5, 0.3, 0.2],
              [0.2, 0.3, 0.5],
              [0.8, 0.1, 0.1],
              [0.8, 0.1, 0.1]])


@pytest.fixture(scope="module")
def dist():
    return pop.FiniteDistribution(W, T, F)


def _by_hand():
    """Every component of (4.7) and (E.1) for the log pair, from the definitions."""
    c = F.argmax(axis=1)
    conf = F.max(axis=1)
    C = np.empty_like(T)                                  # E[pi | g(X)], pooled by prediction
    for i in range(len(W)):
        same = np.all(F == F[i], axis=1)
        C[i] = W[same] @ T[same] / W[same].sum()
    out = {}
    for p in np.unique(conf):
        g = conf == p
        w = W[g] / W[g].sum()
        acc = float(w @ T[g, c[g]])
        total = float(w @ kl(T[g], F[g]))
        cerr = bkl(acc, p)
        out[p] = {"accuracy": acc, "total": total, "calibration": float(w @ kl(C[g], F[g])),
                  "confidence_error": cerr, "rho": total - cerr,
                  "irreducible": float(w @ -np.sum(T[g] * np.log(T[g]), axis=1))}
    parts = {"total": float(W @ (T * -np.log(F)).sum(axis=1)),
             "irreducible": float(W @ -np.sum(T * np.log(T), axis=1)),
             "grouping": float(W @ kl(T, C)), "calibration": float(W @ kl(C, F))}
    return out, parts, C


def test_instance_tells_the_arguments_apart(dist):
    """Swapping KL's arguments moves every component by far more than the tolerances used."""
    per, parts, C = _by_hand()
    assert np.all(np.abs(kl(T, F) - kl(F, T)) > 1e-3)
    assert np.all(np.abs(kl(C, F) - kl(F, C))[[0, 1]] > 1e-3)
    assert abs(parts["grouping"] - float(W @ kl(C, T))) > 1e-3
    for p, v in per.items():
        assert abs(v["confidence_error"] - bkl(p, v["accuracy"])) > 1e-3
    # the library's divergence is the KL written out here
    np.testing.assert_allclose(bregman_divergence(T, F, NEG_ENTROPY), kl(T, F), atol=1e-14)


def test_pointwise_sharpness_gap_log_pair(dist):
    per, _, _ = _by_hand()
    r = pointwise_sharpness_gap(dist, "log")
    assert list(r["confidence"]) == sorted(per)
    for j, p in enumerate(r["confidence"]):
        for key in ("accuracy", "total", "calibration", "confidence_error", "rho",
                    "irreducible"):
            assert r[key][j] == pytest.approx(per[p][key], abs=1e-12), key
        assert r["rho_labels"][j] == pytest.approx(per[p]["rho"] + per[p]["irreducible"],
                                                   abs=1e-12)


def test_grouping_loss_decomposition_kl(dist):
    _, parts, _ = _by_hand()
    r = grouping_loss_decomposition(dist, "neg_entropy")
    for key, value in parts.items():
        assert r[key] == pytest.approx(value, abs=1e-12), key
    assert r["sharpness_gap_truth"] == pytest.approx(parts["grouping"], abs=1e-12)
    assert r["sharpness_gap_labels"] == pytest.approx(parts["irreducible"] + parts["grouping"],
                                                      abs=1e-12)


@pytest.fixture(scope="module")
def sample():
    """Two confidence values 0.6 and 0.9, 0.3 apart against sigma = 0.01 (cross weights
    exp(-450) = 0): every kernel average is the group mean. Three classes; labels fixed."""
    rows, labels = [], []
    for probs, ys in (([0.6, 0.3, 0.1], [0, 1, 1, 2, 2]),      # accuracy 1/5 at h = 0.6
                      ([0.05, 0.9, 0.05], [1, 1, 0, 1, 1, 1, 1, 2])):   # 6/8 at h = 0.9
        for y in ys:
            rows.append(probs)
            labels.append(y)
    return np.array(labels), np.array(rows)


def test_calibration_sharpness_log_pair(sample):
    y, P = sample
    groups = {0.6: (0.6, slice(0, 5)), 0.9: (0.9, slice(5, 13))}
    loss = -np.log(P[np.arange(len(y)), y])                  # KL(e_y || g) = -log g_y
    n = len(y)
    expect_cal = 0.0
    curve, total_h, rho = [], [], []
    for p, idx in groups.values():
        acc = float(np.mean(y[idx] == P[idx].argmax(axis=1)))
        expect_cal += (idx.stop - idx.start) / n * bkl(acc, p)
        assert abs(bkl(acc, p) - bkl(p, acc)) > 1e-3            # the swap would show
        curve.append(acc)
        total_h.append(float(loss[idx].mean()))
        rho.append(float(loss[idx].mean()) - bkl(acc, p))
    res = calibration_sharpness(y, P, "log", bandwidth=0.01, grid=[0.6, 0.9])
    np.testing.assert_allclose(res.curve, curve, atol=1e-12)
    np.testing.assert_allclose(res.total_given_h, total_h, atol=1e-12)
    np.testing.assert_allclose(res.rho, rho, atol=1e-12)
    assert res.total == pytest.approx(float(loss.mean()), abs=1e-12)
    assert res.calibration == pytest.approx(expect_cal, abs=1e-12)
    assert res.sharpness_gap == pytest.approx(float(loss.mean()) - expect_cal, abs=1e-12)
    assert confidence_calibration_plugin(y, P, "log", bandwidth=0.01) == pytest.approx(
        expect_cal, abs=1e-12)
