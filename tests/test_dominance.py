"""Dominance, garbling and exact i.i.d. expectations (calnotes.theory.decisions; chapter Dominance)."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from calnotes.core import scores
from calnotes.book.claims import dominance as dom_claims
from calnotes.theory.decisions import (DEFAULT_LOSSES, DecisionProblem, Dominance,
                                       calibrated_expected_qece, dominates, garble,
                                       garbling_population, iid_expectation, random_decision_problem)
from calnotes.core.expectation import expected_qece


# --------------------------------------------------------------------------- dominates

def test_labels_and_point_masses_give_the_same_expected_losses():
    rng = np.random.default_rng(0)
    F, G = rng.dirichlet(np.ones(3), size=(2, 40))
    y = rng.integers(3, size=40)
    by_labels = dominates(F, G, y)
    by_truth = dominates(F, G, np.eye(3)[y])
    np.testing.assert_allclose(by_labels.loss_f, by_truth.loss_f, atol=1e-14)
    np.testing.assert_allclose(by_labels.loss_g, by_truth.loss_g, atol=1e-14)
    assert by_labels.names == DEFAULT_LOSSES


def test_binary_inputs_and_the_result_object():
    f = [0.2, 0.2, 0.8, 0.8]
    g = [0.5] * 4
    result = dominates(f, g, truth=f)
    assert isinstance(result, Dominance) and result and result.holds
    assert result.margin < 0
    frame = result.to_frame()
    assert list(frame.index) == list(DEFAULT_LOSSES) and frame["f no worse"].all()
    assert "holds=True" in repr(result)
    reverse = dominates(g, f, truth=f)
    assert not reverse and reverse.margin > 0
    # binary 0/1 truth read as probabilities equals the labels
    a = dominates(f, g, truth=[0, 1, 1, 1])
    b = dominates(f, g, truth=np.array([0.0, 1.0, 1.0, 1.0]))
    np.testing.assert_allclose(a.loss_f, b.loss_f)


def test_sample_weight_is_normalised_and_used():
    F = np.array([[0.9, 0.1], [0.2, 0.8]])
    G = np.array([[0.5, 0.5], [0.5, 0.5]])
    T = F
    w = [3.0, 1.0]
    result = dominates(F, G, T, ["brier"], sample_weight=w)
    expected = 0.75 * scores.entropy(F[:1], "brier")[0] + 0.25 * scores.entropy(F[1:], "brier")[0]
    assert result.loss_f[0] == pytest.approx(expected, abs=1e-15)


def test_infinite_log_losses():
    F = np.array([[0.5, 0.5]])
    G = np.array([[1.0, 0.0]])
    result = dominates(F, G, np.array([[0.5, 0.5]]), ["log"])
    assert np.isinf(result.loss_g[0]) and result.holds
    same = dominates(G, G, np.array([[0.5, 0.5]]), ["log"])
    assert same.holds and np.isnan(same.margin)          # inf <= inf: no worse


def test_decision_problems_and_duplicate_names():
    rng = np.random.default_rng(1)
    dps = [random_decision_problem(3, 2, rng, name="dp") for _ in range(2)]
    result = dominates([0.3, 0.7], [0.5, 0.5], [0.3, 0.7], ["brier", "brier", *dps])
    assert result.names == ("brier", "brier #2", "dp", "dp #2")
    single = dominates([0.3], [0.5], [0.3], "brier")
    assert single.names == ("brier",)


def test_dominates_bad_inputs():
    with pytest.raises(ValueError, match="P_g: shape"):
        dominates([[0.5, 0.5]], [[0.2, 0.3, 0.5]], [0])
    with pytest.raises(ValueError, match="truth: shape"):
        dominates([[0.5, 0.5]], [[0.5, 0.5]], [[0.2, 0.3, 0.5]])
    with pytest.raises(ValueError, match="truth: label 2 at index 0 is out of range"):
        dominates([[0.5, 0.5]], [[0.5, 0.5]], [2])
    with pytest.raises(ValueError, match=r"P_f: non-finite value nan"):
        dominates([[np.nan, 0.5]], [[0.5, 0.5]], [0])
    with pytest.raises(ValueError, match="sample_weight: expected shape"):
        dominates([0.5], [0.5], [0.5], sample_weight=[1, 2])
    with pytest.raises(ValueError, match="sample_weight: expected finite non-negative"):
        dominates([0.5], [0.5], [0.5], sample_weight=[-1])
    with pytest.raises(ValueError, match="atol"):
        dominates([0.5], [0.5], [0.5], atol=-1)
    with pytest.raises(ValueError, match="losses: expected at least one"):
        dominates([0.5], [0.5], [0.5], losses=[])
    with pytest.raises(ValueError, match="losses: 'decision problem .3 x 3.' has 3 outcomes but"
                                         " the predictions have 2 classes"):
        dominates([0.5], [0.5], [0.5], losses=[DecisionProblem(1 - np.eye(3))])
    bad = scores.ProperLoss("bad", lambda P: P[:, :1], strict=False)
    with pytest.raises(ValueError, match=r"losses: bad gives a loss matrix of shape \(1, 1\)"):
        dominates([0.5], [0.5], [0.5], losses=[bad])
    with pytest.raises(ValueError, match="losses: expected ProperLoss objects, .* got 'hinge'"):
        dominates([0.5], [0.5], [0.5], losses=["hinge"])


# --------------------------------------------------------------------------- garbling

def test_merge_garbling_by_hand():
    v, m = garble([0.1, 0.3, 0.9], [0.25, 0.25, 0.5], np.eye(2)[[0, 0, 1]])
    np.testing.assert_allclose(v, [0.2, 0.9], atol=1e-15)
    np.testing.assert_allclose(m, [0.5, 0.5])
    w, f, g = garbling_population([0.1, 0.3, 0.9], [0.25, 0.25, 0.5], np.eye(2)[[0, 0, 1]])
    np.testing.assert_allclose(w, [0.25, 0.25, 0.5])
    np.testing.assert_allclose(f, [0.1, 0.3, 0.9])
    np.testing.assert_allclose(g, [0.2, 0.2, 0.9], atol=1e-15)


def test_zero_mass_signals_are_dropped_and_identity_is_identity():
    V = np.array([[0.7, 0.3], [0.1, 0.9]])
    v, m = garble(V, [0.5, 0.5], [[1, 0, 0], [0, 1, 0]])
    assert v.shape == (2, 2) and m.tolist() == [0.5, 0.5]
    w, f, g = garbling_population(V, [0.5, 0.5], np.eye(2))
    np.testing.assert_allclose(f, g, atol=1e-15)


@given(st.integers(2, 4), st.integers(1, 5), st.integers(1, 4), st.integers(0, 2 ** 32 - 1))
def test_garbling_is_calibrated_and_dominated(k, s, t, seed):
    rng = np.random.default_rng(seed)
    values = rng.dirichlet(np.ones(k), size=s)
    mass = rng.dirichlet(np.ones(s))
    kernel = rng.dirichlet(np.ones(t), size=s)
    w, f, g = garbling_population(values, mass, kernel)
    vals, pooled_mass, conditional, _ = scores.pool_by_prediction(w, g, f)
    np.testing.assert_allclose(conditional, vals, atol=1e-12)
    problems = [random_decision_problem(3, k, rng) for _ in range(3)]
    assert dominates(f, g, truth=f, losses=[*DEFAULT_LOSSES, *problems], sample_weight=w)
    # Brier: the gap is E ||f - g||^2 (exercise of the chapter)
    brier = dominates(f, g, truth=f, losses=["brier"], sample_weight=w)
    assert brier.loss_g[0] - brier.loss_f[0] == pytest.approx(
        float(w @ ((f - g) ** 2).sum(axis=1)), abs=1e-12)


@pytest.mark.parametrize("kwargs, message", [
    (dict(values=[0.2, 0.8], mass=[0.5, 0.6], kernel=[[1.0], [1.0]]), "mass: expected finite"),
    (dict(values=[0.2, 0.8], mass=[1.0], kernel=[[1.0], [1.0]]), r"mass: expected shape \(2,\)"),
    (dict(values=[0.2, 0.8], mass=[0.5, 0.5], kernel=[[1.0]]), r"kernel: expected shape \(2, n_signals\)"),
    (dict(values=[0.2, 0.8], mass=[0.5, 0.5], kernel=[[0.5, 0.4], [1.0, 0.0]]), "kernel: row 0 sums to 0.9"),
    (dict(values=[0.2, 0.8], mass=[0.5, 0.5], kernel=[[1.5, -0.5], [1.0, 0.0]]), "kernel: expected finite non-negative"),
    (dict(values=[0.2, 1.8], mass=[0.5, 0.5], kernel=[[1.0], [1.0]]), "values: value 1.8"),
])
def test_garbling_bad_inputs(kwargs, message):
    for func in (garble, garbling_population):
        with pytest.raises(ValueError, match=message):
            func(**kwargs)


# --------------------------------------------------------------------------- iid_expectation

def test_iid_expectation_of_symmetric_statistics():
    mass = np.array([0.2, 0.5, 0.3])
    atoms = np.array([1.0, 4.0, 10.0])
    mean = mass @ atoms
    for ordered in (False, True):
        assert iid_expectation(mass, 4, lambda i: atoms[i].sum(), ordered=ordered) == \
            pytest.approx(4 * mean, rel=1e-14)
    # E[max] by the distribution function, independently
    cdf = np.cumsum(mass)
    e_max = sum(a * (c ** 3 - (c - p) ** 3) for a, c, p in zip(atoms, cdf, mass))
    assert iid_expectation(mass, 3, lambda i: atoms[i].max()) == pytest.approx(e_max, rel=1e-14)


def test_iid_expectation_ordered_statistic():
    mass = np.array([0.25, 0.75])
    # P(first draw is atom 1 and last is atom 0)
    value = iid_expectation(mass, 3, lambda i: float(i[0] == 1 and i[-1] == 0), ordered=True)
    assert value == pytest.approx(0.75 * 0.25, rel=1e-15)


def test_iid_expectation_skips_zero_mass_atoms():
    calls = []
    iid_expectation([0.0, 1.0], 3, lambda i: calls.append(i.tolist()) or 0.0)
    assert calls == [[1, 1, 1]]


def test_iid_expectation_bad_inputs():
    with pytest.raises(ValueError, match="mass"):
        iid_expectation([0.5, 0.6], 2, lambda i: 0.0)
    with pytest.raises(ValueError, match="n_samples: expected a positive integer"):
        iid_expectation([1.0], 0, lambda i: 0.0)
    with pytest.raises(ValueError, match="exact enumeration needs"):
        iid_expectation(np.full(10, 0.1), 10, lambda i: 0.0, ordered=True)


# --------------------------------------------------------------------------- calibrated_expected_qece

@pytest.mark.parametrize("k, n, m", [(2, 5, 3), (3, 4, 1), (3, 5, 2), (4, 6, 4)])
def test_calibrated_expected_qece_is_brier_over_kn(k, n, m):
    rng = np.random.default_rng(k * 100 + n * 10 + m)
    values = rng.dirichlet(np.ones(k), size=3)
    mass = rng.dirichlet(np.ones(3))
    brier = float(mass @ scores.entropy(values, "brier"))
    assert calibrated_expected_qece(values, mass, n, m) == pytest.approx(brier / (k * n), rel=1e-12)


def test_calibrated_expected_qece_binary_and_against_ordered_enumeration():
    values = np.array([0.1, 0.1, 0.6])     # a repeated value: ties with equal truth
    mass = np.array([0.3, 0.3, 0.4])
    n, m = 4, 3
    binary = calibrated_expected_qece(values, mass, n, m)
    assert binary == pytest.approx(float(mass @ (values * (1 - values))) / n, rel=1e-12)
    V = np.column_stack([1 - values, values])
    for p, agg in [(1, "confidence"), (2, "confidence"), (1, "classwise")]:
        unordered = calibrated_expected_qece(V, mass, n, m, p=p, aggregation=agg)
        ordered = iid_expectation(mass, n, lambda i: expected_qece(V[i], V[i], m, p=p,
                                                                   aggregation=agg), ordered=True)
        assert unordered == pytest.approx(ordered, rel=1e-12)


# --------------------------------------------------------------------------- claim helpers

def test_covering_radius_and_deep_holes():
    assert [dom_claims.covering_radius_sq(k) for k in (2, 3, 4, 5)] == [0.5, 2 / 3, 1.0, 1.2]
    rng = np.random.default_rng(5)
    for k, N in [(2, 3), (3, 5), (4, 4)]:
        holes = dom_claims.deep_holes(k, N, 5, rng)
        np.testing.assert_allclose(holes.sum(axis=1), 1.0, atol=1e-14)
        assert holes.min() >= 0
        grid = np.array([c for c in itertools.product(range(N + 1), repeat=k) if sum(c) == N]) / N
        dist = ((holes[:, None, :] - grid[None]) ** 2).sum(axis=2).min(axis=1)
        np.testing.assert_allclose(dist * N ** 2, dom_claims.covering_radius_sq(k), atol=1e-12)


def test_claim_populations_are_calibrated_but_not_the_truth():
    rng = np.random.default_rng(6)
    for merge in (True, False):
        w, truth, pred = dom_claims.calibrated_population(rng, 4, 3, 2, merge=merge)
        values, mass, conditional, _ = scores.pool_by_prediction(w, pred, truth)
        np.testing.assert_allclose(conditional, values, atol=1e-12)
        assert np.abs(truth - pred).max() > 1e-3
    w, truth, pred = dom_claims.calibrated_population(rng, 4, 2, 2, merge=True, binary=True, grid=10)
    assert truth.ndim == 1 and np.allclose(truth * 10, np.round(truth * 10))


def test_blackwell_pairs_cover_every_kind():
    pairs = dom_claims.blackwell_pairs(np.random.default_rng(7), 4, 3)
    kernels = [kernel for _, _, kernel in pairs]
    assert set(np.unique(kernels[0])) <= {0.0, 1.0}                # a merge
    assert kernels[1].shape[1] == 3 and kernels[2].shape[1] == 2   # kernel, kernel of kernels
    assert np.array_equal(kernels[3], np.eye(4))                   # identity
    for kernel in kernels:
        np.testing.assert_allclose(kernel.sum(axis=1), 1.0, atol=1e-12)


def test_multinomial_weights_sum_to_one():
    mass = np.array([0.1, 0.2, 0.3, 0.4])
    assert iid_expectation(mass, 6, lambda i: 1.0) == pytest.approx(1.0, abs=1e-14)
    assert math.comb(6 + 3, 3) == 84
