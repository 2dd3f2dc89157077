"""calnotes.theory.skce against brute force and the exact population SKCE."""

import itertools

import numpy as np
import pytest

from calnotes.theory import population as pop
from calnotes.theory.skce import BLOCK_ENTRIES, skce_unbiased


def _brute(y, P, kernel="laplacian", bandwidth=1.0):
    n = len(y)
    R = P.copy()
    R[np.arange(n), y] -= 1.0
    total = 0.0
    for i, j in itertools.combinations(range(n), 2):
        dist = np.linalg.norm(P[i] - P[j])
        kap = np.exp(-dist / bandwidth) if kernel == "laplacian" else \
            np.exp(-dist ** 2 / (2 * bandwidth ** 2))
        total += kap * float(R[i] @ R[j])
    return total / (n * (n - 1) / 2)


@pytest.mark.parametrize("kernel, bandwidth", [("laplacian", 1.0), ("laplacian", 0.3),
                                               ("gaussian", 0.5)])
def test_quadratic_matches_the_double_loop(kernel, bandwidth):
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(4), size=150)
    y = rng.integers(4, size=150)
    # float64 sums of ~1e4 terms of size <= 2: agreement to 1e-12 relative
    assert np.isclose(skce_unbiased(y, P, kernel=kernel, bandwidth=bandwidth),
                      _brute(y, P, kernel, bandwidth), rtol=1e-12, atol=1e-15)


def test_blocks_do_not_change_the_value(monkeypatch):
    rng = np.random.default_rng(1)
    P = rng.dirichlet(np.ones(3), size=101)
    y = rng.integers(3, size=101)
    whole = skce_unbiased(y, P)
    monkeypatch.setattr("calnotes.theory.skce.BLOCK_ENTRIES", 7 * 101)      # 7 rows per block
    assert np.isclose(skce_unbiased(y, P), whole, rtol=1e-12)
    assert BLOCK_ENTRIES >= 101


def test_linear_estimator_is_the_mean_over_disjoint_pairs():
    rng = np.random.default_rng(2)
    P = rng.dirichlet(np.ones(3), size=9)          # odd: the last sample is unused
    y = rng.integers(3, size=9)
    pairs = [_brute(y[[2 * i, 2 * i + 1]], P[[2 * i, 2 * i + 1]]) for i in range(4)]
    assert np.isclose(skce_unbiased(y, P, estimator="linear"), np.mean(pairs), rtol=1e-12)


def test_expectation_over_pairs_is_the_population_skce():
    """E h(Z_1, Z_2) for independent samples, by enumerating atoms and labels, equals
    population.skce exactly (to rounding): the U-statistic is unbiased."""
    rng = np.random.default_rng(3)
    d = pop.random_finite_distribution(rng, n_atoms=7, n_classes=3)
    w, Q, F = d.weights, d.truth, d.prediction
    total = 0.0
    for a, b in itertools.product(range(d.n_atoms), repeat=2):
        for y1, y2 in itertools.product(range(3), repeat=2):
            total += w[a] * w[b] * Q[a, y1] * Q[b, y2] * _brute(
                np.array([y1, y2]), np.vstack([F[a], F[b]]))
    assert np.isclose(total, pop.skce(d), rtol=1e-12, atol=1e-15)


def test_binary_input_and_bad_arguments():
    p = np.array([0.2, 0.7, 0.9, 0.4])
    y = np.array([0, 1, 1, 1])
    assert np.isclose(skce_unbiased(y, p), skce_unbiased(y, np.column_stack([1 - p, p])))
    with pytest.raises(ValueError, match="kernel"):
        skce_unbiased(y, p, kernel="rbf")
    with pytest.raises(ValueError, match="bandwidth"):
        skce_unbiased(y, p, bandwidth=0)
    with pytest.raises(ValueError, match="estimator"):
        skce_unbiased(y, p, estimator="cubic")
    with pytest.raises(ValueError, match="at least 2"):
        skce_unbiased(y[:1], p[:1])
    with pytest.raises(ValueError, match="y_prob"):
        skce_unbiased(y, np.array([0.2, np.nan, 0.9, 0.4]))
    with pytest.raises(ValueError):
        skce_unbiased(np.array([0, 1, 2, 1]), p)                  # label out of range
