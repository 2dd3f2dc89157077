"""calnotes.core.expectation: exact expectations against enumeration and simulation, and the simulator."""

import itertools
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest
from scipy import stats

import calnotes
from calnotes.core import expectation as ex

AGGREGATE = {"classwise": calnotes.classwise, "confidence": calnotes.confidence}
MEASURE = {1: calnotes.l1_qece, 2: calnotes.l2_qece}


def _measure(y, y_prob, m, p, aggregation, ties="average"):
    if aggregation == "binary":
        return MEASURE[p](y, y_prob, m, ties=ties)
    return AGGREGATE[aggregation](MEASURE[p], y, y_prob, n_bins=m, ties=ties)


def _enumerate(y_prob, true_prob, m, p, aggregation, measure=None, ties="average"):
    """E[measure] by summing over all outcome vectors (2^n binary, k^n multi-class)."""
    T = np.asarray(true_prob, dtype=float)
    probs = np.column_stack([1 - T, T]) if T.ndim == 1 else T
    n, k = probs.shape
    total = 0.0
    for ys in itertools.product(range(k), repeat=n):
        y = np.array(ys)
        weight = np.prod(probs[np.arange(n), y])
        if weight == 0:
            continue
        value = measure(y) if measure else _measure(y, y_prob, m, p, aggregation, ties)
        total += weight * value
    return total


def _tied_binary(rng, n):
    """Predictions on a coarse grid (ties straddle bins), truths with exact 0s and 1s."""
    y_prob = np.round(rng.uniform(size=n) * 4) / 4
    true_prob = np.round(rng.uniform(size=n), 1)
    return y_prob, true_prob


def _tied_multiclass(rng, n, k):
    P = np.round(rng.dirichlet(np.ones(k), size=n), 1)
    P[:, -1] = 1 - P[:, :-1].sum(axis=1)
    P[P[:, -1] < 0] = 1.0 / k
    P = np.clip(P, 0, 1)
    P /= P.sum(axis=1, keepdims=True)
    return P, rng.dirichlet(np.ones(k), size=n)


# --------------------------------------------------------------------------- exact vs enumeration

@pytest.mark.parametrize("ties", ["average", "position"])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("n, m", [(1, 1), (5, 2), (7, 3), (9, 4), (10, 10)])
def test_binary_expectation_matches_enumeration(n, m, p, ties):
    rng = np.random.default_rng(100 * n + m)
    y_prob, true_prob = _tied_binary(rng, n)
    exact = _enumerate(y_prob, true_prob, m, p, "binary", ties=ties)
    got = ex.expected_qece(y_prob, true_prob, m, p=p, ties=ties)
    assert got == pytest.approx(exact, rel=1e-12, abs=1e-15)


def _mixed_tie_case():
    """Tie groups across every boundary, with unequal truths inside each group."""
    y_prob = np.array([0.2, 0.2, 0.2, 0.5, 0.5, 0.5, 0.5, 0.7, 0.7])
    true_prob = np.array([0.0, 0.3, 0.9, 0.1, 0.5, 1.0, 0.6, 0.2, 0.8])
    return y_prob, true_prob


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("m", [2, 3, 4, 5])
def test_tie_average_with_unequal_truths_inside_tie_groups(p, m):
    # The general path of expected_qece: a straddling group's share is a hypergeometric
    # thinning of its Poisson-binomial count.  Checked against 2^9 outcome vectors, each
    # scored by the tie-averaged measure; the position rule gives another value.
    y_prob, true_prob = _mixed_tie_case()
    groups = ex._mixed_truth_groups(np.sort(y_prob)[:, None], true_prob[:, None],
                                    ex._bounds(9, m))
    assert groups[0], "the case must exercise the general path"
    exact = _enumerate(y_prob, true_prob, m, p, "binary")
    assert ex.expected_qece(y_prob, true_prob, m, p=p) == pytest.approx(exact, rel=1e-12)
    position = _enumerate(y_prob, true_prob, m, p, "binary", ties="position")
    assert abs(position - exact) > 1e-6


def test_tie_rules_agree_when_truth_is_constant_on_ties():
    # Outcomes of a group with equal truths are exchangeable: the order does not matter in
    # distribution, so both rules have the same expectation (the calibrated reference).
    rng = np.random.default_rng(5)
    y_prob = np.round(rng.uniform(size=40), 1)
    for m in (3, 7, 40):
        for p in (1, 2):
            a = ex.expected_qece(y_prob, y_prob, m, p=p)
            b = ex.expected_qece(y_prob, y_prob, m, p=p, ties="position")
            assert a == pytest.approx(b, rel=1e-13)


@pytest.mark.parametrize("aggregation", ["classwise", "confidence"])
@pytest.mark.parametrize("ties", ["average", "position"])
@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("n, m", [(4, 3), (6, 4), (7, 2)])
def test_multiclass_expectation_matches_enumeration(n, m, p, ties, aggregation):
    rng = np.random.default_rng(10 * n + m)
    y_prob, true_prob = _tied_multiclass(rng, n, k=3)
    y_prob[0] = [0.4, 0.4, 0.2]  # a tied argmax: the first maximum is the predicted class
    exact = _enumerate(y_prob, true_prob, m, p, aggregation, ties=ties)
    got = ex.expected_qece(y_prob, true_prob, m, p=p, aggregation=aggregation, ties=ties)
    assert got == pytest.approx(exact, rel=1e-12, abs=1e-15)


def test_truthful_value_is_theorem_2_6():
    rng = np.random.default_rng(3)
    p_star = np.round(rng.uniform(size=37), 1)
    expected = np.sum(p_star * (1 - p_star)) / 37 ** 2
    for m in (1, 2, 5, 7, 36, 37):
        assert ex.expected_qece(p_star, p_star, m) == pytest.approx(expected, rel=1e-13)


@pytest.mark.parametrize("binning", ["width", "mass"])
def test_expected_binned_ece_matches_enumeration(binning):
    rng = np.random.default_rng(5)
    y_prob = np.array([0.0, 0.1, 0.3, 0.3, 0.5, 0.7, 0.95, 1.0])
    true_prob = rng.uniform(size=8)
    exact = _enumerate(y_prob, true_prob, None, None, None,
                       measure=lambda y: calnotes.binned_ece(y, y_prob, 3, binning=binning))
    assert ex.expected_binned_ece(y_prob, true_prob, 3, binning=binning) == pytest.approx(
        exact, rel=1e-12)


def test_expected_unbinned_ece_matches_enumeration():
    rng = np.random.default_rng(6)
    y_prob = np.array([0.2, 0.2, 0.5, 0.9, 0.9, 0.9, 0.1])
    true_prob = rng.uniform(size=7)
    exact = _enumerate(y_prob, true_prob, None, None, None,
                       measure=lambda y: calnotes.unbinned_ece(y, y_prob))
    assert ex.expected_unbinned_ece(y_prob, true_prob) == pytest.approx(exact, rel=1e-12)
    # distinct predictions: (1/n) sum p(1-p*) + (1-p)p*
    t = np.arange(1, 51) / 50
    assert ex.expected_unbinned_ece(t, t) == pytest.approx((50 ** 2 - 1) / (3 * 50 ** 2), rel=1e-12)


def test_poisson_binomial_pmf():
    q = np.full(30, 0.3)
    assert ex.poisson_binomial_pmf(q) == pytest.approx(stats.binom.pmf(np.arange(31), 30, 0.3),
                                                      rel=1e-10, abs=1e-300)
    batch = ex.poisson_binomial_pmf([[0.2, 0.7, 0.0], [1.0, 0.0, 0.0]])
    assert batch.shape == (2, 4)
    assert batch[1].tolist() == [0.0, 1.0, 0.0, 0.0]
    assert batch.sum(axis=1) == pytest.approx([1.0, 1.0])


def test_l1_large_bins_are_fast_and_match_binomial():
    """All truths equal: each bin's count is binomial, E|a - K| from scipy."""
    n, m, q = 20_000, 4, 0.3
    y_prob = np.full(n, 0.35)
    size = n // m
    k = np.arange(size + 1)
    per_bin = stats.binom.pmf(k, size, q) @ np.abs(0.35 * size - k)
    expected = m * per_bin / n
    assert ex.expected_qece(y_prob, np.full(n, q), m, p=1) == pytest.approx(expected, rel=1e-10)


def test_binomial_shortcut_agrees_with_the_convolution():
    """Bins whose truths are all equal skip the convolution; a 1e-12 nudge forces it."""
    rng = np.random.default_rng(12)
    y_prob, q = rng.uniform(size=300), np.full(300, 0.3)
    nudged = q.copy()
    nudged[::100] += 1e-12          # one nudged sample per bin: every bin convolves
    assert ex.expected_qece(y_prob, q, 3, p=1) == pytest.approx(
        ex.expected_qece(y_prob, nudged, 3, p=1), rel=1e-10)


def test_folded_normal_approximation():
    rng = np.random.default_rng(8)
    t = rng.uniform(0.1, 0.9, size=4000)
    p = np.clip(t + rng.normal(0, 0.05, size=4000), 0, 1)
    exact = ex.expected_qece(p, t, 10, p=1)
    approx = ex.folded_normal_l1_approximation(p, t, 10)
    assert approx == pytest.approx(exact, rel=5e-3)        # bins of 400: lattice error ~1e-3
    # deterministic outcomes: sigma = 0, the approximation is exact (|mu|)
    y_prob, truth = np.array([0.2, 0.6, 0.9]), np.array([0.0, 1.0, 1.0])
    assert ex.folded_normal_l1_approximation(y_prob, truth, 3) == pytest.approx(
        ex.expected_qece(y_prob, truth, 3, p=1), rel=1e-14)
    P = rng.dirichlet(np.ones(4), size=300)
    for agg in ("classwise", "confidence"):
        assert ex.folded_normal_l1_approximation(P, P, 3, aggregation=agg) == pytest.approx(
            ex.expected_qece(P, P, 3, p=1, aggregation=agg), rel=0.02)


# --------------------------------------------------------------------------- simulation

@pytest.mark.parametrize("aggregation", ["binary", "classwise", "confidence"])
def test_exact_l2_matches_100k_simulation_within_4_se(aggregation):
    """Acceptance: exact E[l2-QECE_m] vs 10^5 replications, ties, m not dividing n."""
    rng = np.random.default_rng({"binary": 1, "classwise": 2, "confidence": 3}[aggregation])
    for n, m in ((17, 5), (30, 7)):
        if aggregation == "binary":
            y_prob, true_prob = _tied_binary(rng, n)
        else:
            y_prob, true_prob = _tied_multiclass(rng, n, k=4)
        assert n % m != 0
        for report in (true_prob, y_prob):  # the truthful report and a different one
            exact = ex.expected_qece(report, true_prob, m, aggregation=aggregation)
            sim = ex.simulate_qece(report, true_prob, m, 100_000, rng, aggregation=aggregation)
            assert sim.n_reps == 100_000 and sim.values.shape == (100_000,)
            assert abs(sim.mean - exact) <= 4 * sim.se, (n, m, sim, exact)


@pytest.mark.parametrize("aggregation", ["binary", "classwise", "confidence"])
def test_exact_l1_matches_simulation_within_4_se(aggregation):
    rng = np.random.default_rng(4)
    if aggregation == "binary":
        y_prob, true_prob = _tied_binary(rng, 23)
    else:
        y_prob, true_prob = _tied_multiclass(rng, 23, k=3)
    exact = ex.expected_qece(y_prob, true_prob, 4, p=1, aggregation=aggregation)
    sim = ex.simulate_qece(y_prob, true_prob, 4, 50_000, rng, p=1, aggregation=aggregation)
    assert abs(sim.z_score(exact)) <= 4


@pytest.mark.parametrize("p", [1, 2])
@pytest.mark.parametrize("aggregation", ["binary", "classwise", "confidence"])
def test_simulated_values_are_the_measures_on_the_drawn_samples(aggregation, p):
    rng = np.random.default_rng(9)
    if aggregation == "binary":
        y_prob, true_prob = _tied_binary(rng, 25)
    else:
        y_prob, true_prob = _tied_multiclass(rng, 25, k=4)
    sim = ex.simulate_qece(y_prob, true_prob, 6, 40, 123, p=p, aggregation=aggregation,
                           keep_outcomes=True, chunk_reps=15)
    assert sim.outcomes.shape == (40, 25)
    direct = [_measure(y, y_prob, 6, p, aggregation) for y in sim.outcomes]
    assert sim.values.tolist() == direct  # bit for bit
    # keeping the outcomes does not change the draws (confidence uses a shortcut otherwise)
    again = ex.simulate_qece(y_prob, true_prob, 6, 40, 123, p=p, aggregation=aggregation,
                             chunk_reps=15)
    assert np.array_equal(again.values, sim.values)


def test_outcome_frequencies_follow_the_truth():
    P = np.array([[0.2, 0.5, 0.3], [0.0, 0.0, 1.0], [0.6, 0.4, 0.0]])
    sim = ex.simulate_qece(P, P, 1, 20_000, 0, aggregation="classwise", keep_outcomes=True)
    freq = np.stack([(sim.outcomes == r).mean(axis=0) for r in range(3)], axis=1)
    assert np.abs(freq - P).max() < 0.015
    assert set(np.unique(sim.outcomes[:, 1])) == {2}


def test_reproducible_and_independent_of_the_executor():
    rng = np.random.default_rng(10)
    y_prob, true_prob = _tied_multiclass(rng, 40, k=3)
    kw = dict(aggregation="classwise", chunk_reps=700)
    base = ex.simulate_qece(y_prob, true_prob, 6, 5000, 42, **kw)
    assert np.array_equal(base.values, ex.simulate_qece(y_prob, true_prob, 6, 5000, 42, **kw).values)
    with ThreadPoolExecutor(max_workers=3) as pool:
        threaded = ex.simulate_qece(y_prob, true_prob, 6, 5000, 42, executor=pool, **kw)
    assert np.array_equal(base.values, threaded.values)
    assert (base.mean, base.se) == (threaded.mean, threaded.se)
    other = ex.simulate_qece(y_prob, true_prob, 6, 5000, 43, **kw)
    assert not np.array_equal(base.values, other.values)
    # a Generator is consumed: two calls with the same generator give independent draws
    gen = np.random.default_rng(42)
    first = ex.simulate_qece(y_prob, true_prob, 6, 100, gen, **kw)
    second = ex.simulate_qece(y_prob, true_prob, 6, 100, gen, **kw)
    assert not np.array_equal(first.values, second.values)


def test_process_pool_smoke():
    t = np.linspace(0.05, 0.95, 50)
    serial = ex.simulate_qece(t, t, 7, 3000, 5, chunk_reps=1000)
    with ProcessPoolExecutor(max_workers=2) as pool:
        parallel = ex.simulate_qece(t, t, 7, 3000, 5, chunk_reps=1000, executor=pool)
    assert np.array_equal(serial.values, parallel.values)


def test_progress_bar_and_result_fields(capsys):
    t = np.linspace(0.1, 0.9, 20)
    sim = ex.simulate_qece(t, t, 4, 300, 0, chunk_reps=100, progress=True)
    assert "simulate_qece" in capsys.readouterr().err
    assert sim.se == pytest.approx(sim.values.std(ddof=1) / np.sqrt(300))
    assert sim.outcomes is None
    assert np.isnan(ex.simulate_qece(t, t, 4, 1, 0).se)


# --------------------------------------------------------------------------- bad inputs

@pytest.mark.parametrize("call, error, match", [
    (lambda: ex.expected_qece([0.2, 0.3], [0.2, 0.3, 0.4], 1), ValueError, "true_prob: shape"),
    (lambda: ex.expected_qece([0.2, 0.3], [0.2, 1.3], 1), ValueError, r"true_prob: value 1\.3"),
    (lambda: ex.expected_qece([0.2, np.nan], [0.2, 0.3], 1), ValueError, "y_prob: non-finite"),
    (lambda: ex.expected_qece([[0.5, 0.5]], [[0.5, 0.6]], 1, aggregation="classwise"),
     ValueError, "true_prob: row 0 sums"),
    (lambda: ex.expected_qece([0.2, 0.3], [0.2, 0.3], 3), ValueError, "n_bins: 3 bins for 2"),
    (lambda: ex.expected_qece([0.2, 0.3], [0.2, 0.3], 1, p=3), ValueError, "p: expected 1 or 2"),
    (lambda: ex.expected_qece([0.2, 0.3], [0.2, 0.3], 1, aggregation="top"), ValueError,
     "aggregation: expected"),
    (lambda: ex.expected_qece([[0.5, 0.5]], [[0.5, 0.5]], 1), ValueError, "aggregation='classwise'"),
    (lambda: ex.expected_qece([0.5], [0.5], 1, aggregation="confidence"), ValueError,
     "aggregation='binary'"),
    (lambda: ex.simulate_qece([0.2, 0.3], [0.2, 0.3], 1, 10, None), TypeError, "rng"),
    (lambda: ex.simulate_qece([0.2, 0.3], [0.2, 0.3], 1, 0, 0), ValueError, "n_reps"),
    (lambda: ex.simulate_qece([0.2, 0.3], [0.2, 0.3], 1, 10, 0, chunk_reps=0), ValueError,
     "chunk_reps"),
    (lambda: ex.simulate_qece([0.2, 0.3], [0.2, 0.3], 1, 10, 0, p=3), ValueError, "p: expected"),
    (lambda: ex.folded_normal_l1_approximation([0.2], [0.2, 0.1], 1), ValueError, "true_prob"),
    (lambda: ex.expected_binned_ece([0.2], [0.2], 1, binning="quantile"), ValueError, "binning"),
])
def test_bad_inputs_give_clear_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()
