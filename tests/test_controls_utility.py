"""Helpers behind the paper-001 claims and their negative controls (calnotes.book.claims.utility).

Expected values are worked out by hand (or by an independent brute force), not taken from the
code under test."""

import itertools
import math

import numpy as np
import pytest

from calnotes.theory import utility as ut
from calnotes.book.claims import utility as cu
from calnotes.theory.population import FiniteDistribution


def _b2_population():
    # App. B.2: top-class confidence 0.45 / 0.55 with accuracies 0.05 / 0.95 (C = 2)
    return FiniteDistribution([0.5, 0.5], [[0.05, 0.95], [0.95, 0.05]],
                              [[0.45, 0.55], [0.55, 0.45]])


def test_weighted_calibration_brute_on_app_b2_example():
    d = _b2_population()
    w, T, F = (np.asarray(a, float) for a in (d.weights, d.truth, d.prediction))
    ubar = ut.classwise(2).per_class(F)[0]            # utility 1{Y = e_1}: v = f_1
    # residuals 0.5 * (0.05 - 0.45) = -0.2 at v = 0.45 and 0.5 * (0.95 - 0.55) = 0.2 at 0.55
    assert cu.weighted_calibration_brute(w, T, F, ubar, 1e-12) == pytest.approx(0.2, abs=1e-12)
    # half-lines: {0.45} gives 0.2, both give 0 -> 0.2; no indicator: |-0.2 + 0.2| = 0
    assert cu.weighted_calibration_brute(w, T, F, ubar, 1e-12, "half-line") == pytest.approx(0.2)
    assert cu.weighted_calibration_brute(w, T, F, ubar, 1e-12, "no indicator") == pytest.approx(
        0.0, abs=1e-12)


def test_position_rule_splits_ties_and_pooled_estimator_does_not():
    v = np.array([0.2, 0.2, 0.6])
    u = v + np.array([0.3, -0.3, 0.1])
    assert cu.uc_position_rule(v, u) == pytest.approx(0.3 / 3)
    assert ut.uc_from_values(v, u).values[0] == pytest.approx(0.1 / 3)


def test_sup_block_sums_matches_enumeration():
    rng = np.random.default_rng(0)
    v = np.array([0.1, 0.1, 0.3, 0.5, 0.5, 0.9])
    g = rng.normal(size=6)
    signs = np.array(list(itertools.product((-1.0, 1.0), repeat=6)))
    vals = np.unique(v)
    brute = np.array([max([0.0] + [float(np.sum((s * g)[(v >= a) & (v <= b)]))
                                   for a in vals for b in vals if b >= a]) for s in signs])
    np.testing.assert_allclose(cu.sup_block_sums(v, g, signs, 0.0), brute, atol=1e-12)


def test_rademacher_of_a_shattered_sample_is_one_half():
    # all subsets of n distinct points: E sum_i (sigma_i)_+ / n = 1/2, against sqrt(2)
    table = cu._result1_table("smoke")
    assert np.any(np.isclose(table[:, 0], 0.5) & np.isclose(table[:, 1], math.sqrt(2)))


def test_rademacher_tight_instance_reaches_the_sum_of_coordinates():
    fams, P, Y = cu.rademacher_tight_instance(8)
    g, pj = cu.rademacher_gu(fams, P, Y)
    # <Y - f, (1, -1)> = 2 (Y_1 - f_1), about 2, against u(f, e_j) = +-1 per coordinate
    assert g == pytest.approx(pj.sum(), rel=0.01)
    assert g <= 2 * pj.sum()


def test_prop32_two_atom_instance_gains_two_uc_with_non_increasing_h():
    t0, g, eta = 0.0, 0.4, 0.004
    d = cu.two_atom_population([t0 - eta, t0 + eta], [t0 - eta + g, t0 + eta - g], 0.5)
    fam = ut.linear([[1.0, -1.0]])
    up, uc = cu.risk_gap(d, fam, t0, "up")
    both, _ = cu.risk_gap(d, fam, t0, "both")
    assert uc[0] == pytest.approx(0.5 * g)                   # one atom's interval
    assert both[0] == pytest.approx(2 * 0.5 * (g - eta))     # act on the lower atom only
    assert up[0] <= uc[0] + 1e-12                            # one direction: at most UC


def test_cutoff_gap_on_straddling_atoms():
    tau, g, eta = 0.5, 0.2, 0.002
    gap, delta = cu.cutoff_gap([tau - eta, tau + eta], [tau - eta + g, tau + eta - g],
                               [0.5, 0.5], tau)
    assert delta == pytest.approx(0.5 * g)
    assert gap == pytest.approx(2 * 0.5 * (g - eta))


@pytest.mark.parametrize("m", [1, 2, 5, 15])
def test_b2_tight_instance_attains_the_bound(m):
    d, edges = cu.b2_tight_instance(m)
    tce_bin, _ = cu.binned_top_and_classwise(d, edges)
    uc = ut.population_uc(d, ut.top_class(4)).max
    assert tce_bin == pytest.approx(0.05) and tce_bin == pytest.approx(m * uc)


def test_shatter_lp_counts_the_impossible_labeling():
    assert cu.shatter_fraction_lp([0.5, 0.5], 1) == 1.0
    assert cu.shatter_fraction_lp([0.5, 0.5], 2) == 0.75     # all-negative is impossible
    assert cu.shatter_fraction_lp([0.2, 0.3, 0.5], 2) == 1.0


def test_dcu_grid_point_mass_and_two_atoms():
    grid = cu.dcu_exact_grid()
    # a single atom with v = -1, r = 1: DCU = UC = 2, against the bound sqrt(16) + 2 = 6
    assert np.any(np.isclose(grid["uc"], 2.0) & np.isclose(grid["dcu"], 2.0))
    assert np.all(grid["dcu"] <= np.sqrt(8 * grid["uc"]) + grid["uc"] + 1e-12)


def test_c2_supremum_over_linear_utilities_is_twice_the_classwise_estimate():
    rng = np.random.default_rng(3)
    P, y = cu.calibrated_sample(300, 2, rng)
    exact = 2 * ut.utility_calibration(y, P, ut.linear([[1.0, 0.0]])).values[0]
    grid = np.linspace(-1, 1, 9)
    A = np.array([[a, b] for a in grid for b in grid])
    values = ut.utility_calibration(y, P, ut.linear(A)).values
    assert values.max() == pytest.approx(exact, abs=1e-12)


def test_lemma34_control_factor_is_false_only_for_the_worst_case():
    # the coin's 95% quantile is about 2.5 / sqrt(n): the bound / 12 (1.74 / sqrt(n)) fails
    rows = cu.deviation_study("smoke")
    coin = [r for r in rows if r["simulator"].startswith("calibrated coin")]
    assert coin and all(r["ratio"] > 1 / cu.LEMMA34_CONTROL_FACTOR for r in coin)


def test_edge_step_lowers_brier_by_exactly_err_squared_over_c():
    # one atom, f = (0.5, 0.5), E[Y] = (0.6, 0.4), u = (1, -1): err = |<(0.1, -0.1), (1, -1)>|
    # = 0.2; eta = err / 2 = 0.1 moves f to (0.6, 0.4): Brier 0.02 + 0.48 -> 0.48, a decrease
    # of 0.02 = err^2 / C
    runs = cu.edge_patch_runs()
    d, _, trace, _ = next(r for r in runs if np.allclose(r[0].prediction, [[0.5, 0.5]])
                          and np.allclose(r[0].truth, [[0.6, 0.4]]))
    (step,) = trace.steps
    assert step.err == pytest.approx(0.2)
    assert step.brier_before - step.brier_after == pytest.approx(0.02, abs=1e-14)
    for d, _, trace, _ in runs:
        for s in trace.steps:
            assert s.brier_before - s.brier_after == pytest.approx(s.err ** 2 / d.n_classes,
                                                                   abs=1e-14)


def test_edge_step_size_twice_err_over_c_is_the_edge():
    # the decrease 2 eta err - eta^2 C vanishes at eta = 2 err / C and turns negative past it
    assert abs(cu.edge_step_increase(2.0)) < 1e-14
    assert cu.edge_step_increase(1.9) < 0 < cu.edge_step_increase(2.2)


def test_fresh_count_patching_corrects_a_single_atom():
    # with 10^9 fresh samples per step the counts are E[Y] to about 2e-5: one step of the
    # optimal size err / ||ubar||^2 = 0.2 / 2 moves f = (0.5, 0.5) onto E[Y] = (0.6, 0.4)
    d, fams = next((d, f) for d, f in cu.edge_populations()
                   if np.allclose(d.prediction, [[0.5, 0.5]]) and np.allclose(d.truth, [[0.6, 0.4]]))
    patched, steps, stopped = cu.patch_with_fresh_counts(d, fams, eps=0.01, N=10 ** 9,
                                                         max_iter=5, rng=0)
    assert stopped and steps == 1
    np.testing.assert_allclose(patched, [[0.6, 0.4]], atol=1e-3)


def test_sup_lower_study_marginal_identity_for_two_classes():
    # for C = 2, |ybar_2 - pbar_2| = |ybar_1 - pbar_1|, so ||ybar - pbar||_1 = 2 |mean(Y_1 - p_1)|
    rng = np.random.default_rng(5)
    P, y = cu.calibrated_sample(500, 2, rng)
    diff = np.eye(2)[y].mean(axis=0) - P.mean(axis=0)
    assert np.abs(diff).sum() == pytest.approx(2 * abs(np.mean((y == 0) - P[:, 0])), abs=1e-14)
