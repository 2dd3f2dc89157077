"""Focused tests of the helpers behind the controls and new claims of paper 003 (proper.py)."""

from fractions import Fraction

import numpy as np
import pytest

from calnotes.theory import population as pop
from calnotes.book.claims import proper as P


def _random_pair(seed, k=3, n=5):
    rng = np.random.default_rng(seed)
    w = rng.dirichlet(np.ones(n))
    return w, rng.dirichlet(np.ones(k), size=n), rng.dirichlet(np.ones(k), size=n)


def test_kernel_u_score_has_zero_entropy():
    """Eq. (53): g_S(Q1, Q2) = 0 for the kernel U-score, whatever Q."""
    w, Q, _ = _random_pair(0)
    assert abs(P._u_expected_score(w, Q, Q)) < 1e-14


def test_strictly_proper_u_score_divergence():
    """With the Brier terms, E d = 2 E||P - Q||^2 + (a non-negative kernel term)."""
    w, Q, Pm = _random_pair(1)
    brier_part = 2 * float(w @ ((Pm - Q) ** 2).sum(axis=1))
    total = P._u_divergence(w, Pm, Q, brier=True)
    kernel = P._u_divergence(w, Pm, Q)
    assert total == pytest.approx(brier_part + kernel, abs=1e-12)
    assert kernel >= -1e-15 and total > 0
    assert abs(P._u_divergence(w, Q, Q, brier=True)) < 1e-14


def test_constant_kernel_divergence_is_squared_mean_gap():
    """kappa = 1: E d = ||E[P - Q]||^2, zero when the means agree although P != Q."""
    w, Q, Pm = _random_pair(2)
    gap = w @ (Pm - Q)
    assert P._u_divergence(w, Pm, Q, P._constant_gram) == pytest.approx(gap @ gap, abs=1e-14)
    swapped = Q[[1, 2, 3, 4, 0]]
    uniform = np.full(5, 0.2)
    assert abs(P._u_divergence(uniform, swapped, Q, P._constant_gram)) < 1e-14


def test_binary_counterexample_by_hand():
    """App. E.1.1: a = 1/10 < b = 2/5, yet the accuracy moves from 13/20 to 3/4."""
    w, q, f = next(P._binary_scalar_cases("smoke"))
    a, b = P._scalar_t(w, q, f)
    assert (a, b) == (Fraction(1, 10), Fraction(2, 5))
    t = [a if v < Fraction(1, 2) else b for v in f]
    assert P._scalar_accuracy(w, q, f) == Fraction(13, 20)
    assert P._scalar_accuracy(w, q, t) == Fraction(3, 4)


def test_scalar_accuracy_threshold_is_at_one_half():
    w, q = [Fraction(1)], [Fraction(3, 10)]
    assert P._scalar_accuracy(w, q, [Fraction(1, 2)]) == Fraction(3, 10)   # predicts 1
    assert P._scalar_accuracy(w, q, [Fraction(49, 100)]) == Fraction(7, 10)


def test_prop33_closed_forms_match_a_hand_computed_bin():
    """One bin (p = 1): d mu/dn = -g sigma/(2n), d2 mu/dn2 = g (mu^2/sigma + 3 sigma)/(4 n^2)."""
    p, conf, vconf, acc = (np.array([1.0]), np.array([0.7]), np.array([0.0]),
                           np.array([0.6]))
    n = 100.0
    sigma = np.sqrt(0.6 * 0.4 / n)
    g = np.sqrt(2 / np.pi) * np.exp(-0.1 ** 2 / (2 * sigma ** 2))
    assert P._p33_closed(p, conf, vconf, acc, n, "d1") == pytest.approx(-g * sigma / (2 * n))
    assert P._p33_closed(p, conf, vconf, acc, n, "d2") == pytest.approx(
        g * (0.01 / sigma + 3 * sigma) / (4 * n ** 2))
    assert P._p33_closed(p, conf, vconf, acc, n, "cross")[0] == pytest.approx(
        0.1 * g / (2 * n * sigma))


def test_prop33_printed_closed_forms_lack_the_bin_probability():
    """With n_j = n p_j, eq. (31) as printed is the corrected form divided by p_j, bin by bin."""
    rng = np.random.default_rng(0)
    p, conf, vconf, acc = P._random_bins(rng, m=1)
    p = np.array([0.25])
    ratio = (P._p33_closed(p, conf, vconf, acc, 400.0, "d1", printed=True)
             / P._p33_closed(p, conf, vconf, acc, 400.0, "d1"))
    assert ratio == pytest.approx(4.0)


def test_exact_binned_ece_mean_of_one_deterministic_bin():
    """acc = 1 and conf = 3/4 in a single bin: every sample errs by 1/4, E[ECE_hat] = 1/4."""
    got = P._exact_binned_ece_mean(np.array([1.0]), np.array([0.75]), np.array([1.0]), 50)
    assert got == pytest.approx(0.25, abs=1e-12)


def test_exact_binned_ece_mean_of_two_samples_by_hand():
    """n = 2, one bin, conf = 1/2, acc = 1/2: |2 c - A| / 2 is 1/2, 0, 1/2 for A = 0, 1, 2."""
    got = P._exact_binned_ece_mean(np.array([1.0]), np.array([0.5]), np.array([0.5]), 2)
    assert got == pytest.approx(0.25 * 0.5 + 0.25 * 0.5, abs=1e-12)


def test_shared_conditional_merge_loses_nothing():
    """The lossless merge keeps every conditional, so sharpness and the identity are kept."""
    for d in P._family("smoke", 950):
        e = P._shared_conditional(d)
        m = P._merge_two(e)
        assert P._sharpness(e) == P._sharpness(m)
        assert P._bound_minus_ce_change(e, m) == 0


def test_binary_cwce_equals_ce():
    """The fact behind 003.prop3.2.binary, on one population built by hand."""
    F = Fraction
    d = pop.FiniteDistribution([F(1, 3), F(2, 3)], [[F(1), F(0)], [F(1, 4), F(3, 4)]],
                               [[F(1, 2), F(1, 2)], [F(1, 4), F(3, 4)]])
    assert pop.cwce(d, 2, exact=True, powered=True) == pop.ce_p(d, 2, exact=True, powered=True)
    assert pop.ce_p(d, 2, exact=True, powered=True) == F(1, 3) * 2 * F(1, 4)


def test_cyclic_shift_is_injective_relabelling():
    F = Fraction
    d = pop.FiniteDistribution([F(1)], [[F(1), F(0), F(0)]], [[F(1, 2), F(1, 3), F(1, 6)]])
    assert [list(r) for r in P._cyclic_shift(d).exact[2]] == [[F(1, 3), F(1, 6), F(1, 2)]]
