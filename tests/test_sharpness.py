"""Tests of calnotes.theory.sharpness (004 Sec. 4.2, Apps. C-E) and the calibration-sharpness plot.

References are independent: brute-force kernel sums written out here, closed forms, exact
Fractions, calnotes.theory.population's separate code paths, and scipy quadrature.
"""

from fractions import Fraction as Fr

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from scipy import integrate, special, stats  # noqa: E402

from calnotes.theory import population as pop  # noqa: E402
from calnotes.core.plotting import calibration_sharpness_diagram  # noqa: E402
from calnotes.core.scores import SQUARED_NORM  # noqa: E402
from calnotes.theory.sharpness import (BRIER_PAIR, LOG_PAIR, CalibrationSharpness,  # noqa: E402
                                       ConfidencePair, calibration_sharpness,
                                       confidence_calibration_plugin, get_pair,
                                       grouping_loss_decomposition, pointwise_sharpness_gap)

TWO_X2 = ConfidencePair("2x^2", SQUARED_NORM, lambda x: 2 * x * x, lambda x: 4 * x)
QUARTIC = ConfidencePair("x^4", SQUARED_NORM, lambda x: x ** 4, lambda x: 4 * x ** 3)


# ----------------------------------------------------------------------------- helpers

def gauss_sums(x, y, t, sigma):
    """Brute force (m, p): Nadaraya-Watson and density with the plain Gaussian kernel."""
    K = stats.norm.pdf((np.asarray(t)[:, None] - np.asarray(x)[None, :]) / sigma) / sigma
    return (K @ y) / K.sum(axis=1), K.mean(axis=1)


def binary_kl(a, b):
    return special.rel_entr(a, b) + special.rel_entr(1 - a, 1 - b)


def draw_binary(rng, n, m=lambda h: h * h):
    """h ~ U(1/2, 1) predicted for class 1, correct with probability m(h)."""
    h = rng.uniform(0.5, 1.0, size=n)
    return (rng.uniform(size=n) < m(h)).astype(int), h


def random_dists(seed, count, positive=False):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(count):
        k = int(rng.integers(2, 6))
        n_atoms = int(rng.integers(6, 13))
        out.append(pop.random_finite_distribution(rng, n_atoms=n_atoms, n_classes=k,
                                                  positive=positive))
    return out


# ----------------------------------------------------------------------------- pairs

def test_pair_divergences_closed_forms():
    a = np.array([0.0, 0.3, 0.9, 1.0, 0.5])
    b = np.array([0.5, 0.6, 0.9, 0.7, 0.25])
    assert np.allclose(BRIER_PAIR.divergence(a, b), (a - b) ** 2, rtol=0, atol=1e-15)
    # binary KL from scipy's rel_entr; rounding of a few logs: 1e-14
    assert np.allclose(LOG_PAIR.divergence(a, b), binary_kl(a, b), rtol=0, atol=1e-14)
    # limits at the edges: 0 for equal arguments, inf where varphi' is infinite
    assert LOG_PAIR.divergence(np.array([1.0, 0.0, 0.4]), np.array([1.0, 1.0, 1.0])).tolist() \
        == [0.0, np.inf, np.inf]
    assert QUARTIC.divergence(np.array([Fr(1, 2)], dtype=object),
                              np.array([Fr(1)], dtype=object))[0] == Fr(17, 16)
    assert get_pair("brier") is BRIER_PAIR and get_pair(QUARTIC) is QUARTIC


# ----------------------------------------------------------------------------- plug-in (C.3)

@pytest.mark.parametrize("pair", ["brier", "log"])
def test_plugin_matches_brute_force(pair):
    rng = np.random.default_rng(3)
    y, h = draw_binary(rng, 60)
    sigma = 0.07
    m, _ = gauss_sums(h, y.astype(float), h, sigma)
    if pair == "brier":
        ref = np.mean(m ** 2 - h ** 2 - 2 * h * (y - h))
    else:
        def vphi(x):
            return special.xlogy(x, x) + special.xlogy(1 - x, 1 - x)
        ref = np.mean(vphi(m) - vphi(h) - np.log(h / (1 - h)) * (y - h))
    got = confidence_calibration_plugin(y, h, pair, bandwidth=sigma)
    # 60-term sums of O(1) values: rounding ~1e-15; 1e-12 leaves room
    assert abs(got - ref) < 1e-12


def test_plugin_multiclass_is_the_confidence_problem():
    rng = np.random.default_rng(4)
    P = rng.dirichlet(np.ones(4) * 0.5, size=300)
    y = rng.integers(0, 4, size=300)
    c = P.argmax(axis=1)
    h = P.max(axis=1)
    correct = (y == c).astype(int)
    # (C.3) sees only (h, correct): brute force on the confidence problem
    sigma = 0.05
    m, _ = gauss_sums(h, correct.astype(float), h, sigma)
    ref = np.mean(m ** 2 - h ** 2 - 2 * h * (correct - h))
    assert abs(confidence_calibration_plugin(y, P, bandwidth=sigma) - ref) < 1e-12


def test_plugin_log_at_confidence_one():
    # h = 1 exactly: a correct sample contributes varphi(m_hat) (residual 0, 0 * inf = 0),
    # a wrong one makes the estimate +inf
    h = np.array([1.0, 1.0, 0.8, 0.7, 0.9])
    y = np.array([1, 1, 1, 0, 1])
    got = confidence_calibration_plugin(y, h, "log", bandwidth=0.1)
    m, _ = gauss_sums(h, y.astype(float), h, 0.1)

    def vphi(x):
        return special.xlogy(x, x) + special.xlogy(1 - x, 1 - x)
    lin = np.where(h < 1, np.log(h / (1 - np.where(h < 1, h, 0.5))) * (y - h), 0.0)
    ref = np.mean(vphi(m) - vphi(h) - lin)
    assert np.isfinite(got) and abs(got - ref) < 1e-12
    assert confidence_calibration_plugin([1, 0, 1], [1.0, 1.0, 0.7], "log") == np.inf


def population_value(pair):
    if pair == "brier":
        return 1 / 30       # int_{1/2}^1 2 h^2 (1 - h)^2 dh = int_0^1 h^2 (1 - h)^2 dh = B(3, 3)
    return integrate.quad(lambda t: 2 * binary_kl(t * t, t), 0.5, 1)[0]


def smoothing_bias(pair, sigma):
    """B(sigma) = E varphi(m_bar_sigma(h)) - E varphi(m(h)), m_bar the kernel-smoothed
    regression of the population (h ~ U(1/2, 1), m = h^2): the deterministic bias of (C.3)."""
    def vphi(x):
        return x * x if pair == "brier" else float(special.xlogy(x, x)
                                                   + special.xlogy(1 - x, 1 - x))

    def mbar(t):
        num = integrate.quad(lambda s: stats.norm.pdf((t - s) / sigma) * s * s, 0.5, 1,
                             points=[t])[0]
        den = stats.norm.cdf((1 - t) / sigma) - stats.norm.cdf((0.5 - t) / sigma)
        return num / sigma / den

    pts = [0.5 + sigma, 1 - sigma] if sigma < 0.25 else None
    return (integrate.quad(lambda t: 2 * vphi(mbar(t)), 0.5, 1, limit=200, points=pts)[0]
            - integrate.quad(lambda t: 2 * vphi(t * t), 0.5, 1)[0])


def test_smoothing_bias_is_second_order_including_the_boundary():
    # Derivation: the interior bias of m_hat is sigma^2/2 (m'' + 2 m' f'/f) = O(sigma^2); within
    # sigma of the two edges of the support the bias is O(sigma) (the kernel is cut and its
    # mean shifts inwards) but that layer has probability O(sigma), so the integrated bias is
    # O(sigma^2) as well (O(sigma^2 log(1/sigma)) for log, whose varphi' grows like
    # log(1/(1 - m)) at the edge h = 1 where m -> 1).  Local order log2(B(s) / B(s/2)):
    orders = {}
    for pair in ("brier", "log"):
        b = [smoothing_bias(pair, s) for s in (0.0125, 0.00625)]
        orders[pair] = np.log2(b[0] / b[1])
    # brier: 2 - O(sigma) (measured 1.96); log: 2 - log2(log(2/s)/log(1/s)) = 1.79 at s=0.0125
    assert 1.9 < orders["brier"] < 2.05
    assert 1.65 < orders["log"] < 1.9


VAR_TERM = {"brier": 0.07, "log": 0.141}


def _convergence(pair, c, sizes, reps, seed):
    rng = np.random.default_rng(seed)
    truth = population_value(pair)
    out = []
    for n, R in zip(sizes, reps):
        sigma = c * n ** -0.2
        e = np.array([confidence_calibration_plugin(*draw_binary(rng, n), pair,
                                                    bandwidth=sigma) - truth
                      for _ in range(R)])
        out.append((n, sigma, e.mean(), e.std(ddof=1) / np.sqrt(R), np.abs(e).mean()))
    return out


@pytest.mark.parametrize("pair", ["brier", "log"])
@pytest.mark.parametrize("c", [1.0, 0.25])
def test_plugin_converges_at_the_bias_rate(pair, c):
    # sigma_n = c n^(-1/5): sigma -> 0 and n sigma^2 / log n = c^2 n^(3/5) / log n -> inf
    # (Thm C.4).  Error of (C.3) = B(sigma) [smoothing bias, O(sigma^2) by the test above]
    # + O(1/(n sigma)) [E(m_hat - m)^2 through varphi''/2: Var m_hat <= m(1-m) R(K)/(n sigma
    # f kappa) with R(K) = 0.282, f = 2, kernel mass in the support kappa >= 1/2, so the term is
    # <= 0.07/(n sigma) for brier and <= 0.141/(n sigma) for log (VAR_TERM)]
    # + sampling noise O(n^-1/2).  So the mean error must match B(sigma_n) within 4 standard
    # errors + VAR_TERM/(n sigma), and log|error| falls with slope d log|B| / d log n, between -2/5
    # (asymptotic O(sigma^2)) and 0; at c = 1 the bandwidths 0.25..0.1 are pre-asymptotic
    # (half the support is 0.25) and |B| falls only like sigma^0.8 there: slope ~ -0.15.
    sizes, reps = (1000, 10000, 100000), (40, 12, 4)
    rows = _convergence(pair, c, sizes, reps, seed=11)
    for n, sigma, mean, se, _ in rows:
        assert abs(mean - smoothing_bias(pair, sigma)) < 4 * se + VAR_TERM[pair] / (n * sigma)
    abs_err = [r[4] for r in rows]
    assert abs_err[0] > abs_err[1] > abs_err[2]
    slope = np.polyfit(np.log(sizes), np.log(abs_err), 1)[0]
    predicted = np.polyfit(np.log(sizes), np.log([abs(smoothing_bias(pair, r[1]))
                                                  for r in rows]), 1)[0]
    assert -0.45 < slope < -0.1
    # the noise at n = 1e5 is <= 10% of |B|, so the slope matches to ~0.05 (log(1.1)/log(100))
    assert abs(slope - predicted) < 0.05


@pytest.mark.slow
@pytest.mark.parametrize("pair", ["brier", "log"])
def test_plugin_converges_large(pair):
    # as above to n = 1e6 with c = 0.25: the slope approaches -2/5 (brier) from above
    sizes, reps = (1000, 10000, 100000, 1000000), (200, 60, 20, 6)
    rows = _convergence(pair, 0.25, sizes, reps, seed=12)
    for n, sigma, mean, se, _ in rows:
        assert abs(mean - smoothing_bias(pair, sigma)) < 4 * se + VAR_TERM[pair] / (n * sigma)
    slope = np.polyfit(np.log(sizes), np.log([r[4] for r in rows]), 1)[0]
    assert -0.45 < slope < -0.25


# ----------------------------------------------------------------------------- the diagram

def test_diagram_arrays_match_brute_force():
    rng = np.random.default_rng(5)
    P = rng.dirichlet(np.ones(3), size=80)
    y = rng.integers(0, 3, size=80)
    sigma = 0.06
    r = calibration_sharpness(y, P, "brier", bandwidth=sigma)
    assert isinstance(r, CalibrationSharpness)
    t = np.linspace(0, 1, 201)
    assert np.array_equal(r.grid, t)
    h, c = P.max(axis=1), P.argmax(axis=1)
    correct = (y == c).astype(float)
    div = ((P - np.eye(3)[y]) ** 2).sum(axis=1)           # ||g - e_y||^2
    m, p = gauss_sums(h, correct, t, sigma)
    tot, _ = gauss_sums(h, div, t, sigma)
    # 80-term kernel sums, exact method: rounding ~1e-14 relative
    assert np.allclose(r.curve, m, rtol=1e-11, atol=1e-13)
    assert np.allclose(r.density, p, rtol=1e-11, atol=1e-13)
    assert np.allclose(r.total_given_h, tot, rtol=1e-11, atol=1e-13)
    assert np.allclose(r.rho, tot - (m - t) ** 2, rtol=1e-10, atol=1e-12)
    assert abs(r.total - div.mean()) < 1e-15
    # the band has TOTAL length p_hat * rho and is centred on the curve (App. D)
    assert np.allclose(r.upper - r.lower, p * r.rho, rtol=1e-10, atol=1e-12)
    assert np.allclose((r.upper + r.lower) / 2, r.curve, rtol=0, atol=1e-12)
    assert r.sharpness_gap == r.total - r.calibration
    assert np.isnan(r.calibration_sd) and r.subsample_calibrations.shape == (0,)
    with pytest.raises(ValueError):
        r.curve[0] = 1.0                                  # read-only


def test_log_total_is_mean_nll_and_binary_vector_input():
    rng = np.random.default_rng(6)
    y, p1 = rng.integers(0, 2, size=100), rng.uniform(0.05, 0.95, size=100)
    r1 = calibration_sharpness(y, p1, "log", grid=[0.5, 0.75, 1.0])
    r2 = calibration_sharpness(y, np.column_stack([1 - p1, p1]), "log", grid=[0.5, 0.75, 1.0])
    nll = -np.mean(np.log(np.where(y == 1, p1, 1 - p1)))
    assert abs(r1.total - nll) < 1e-13
    assert np.array_equal(r1.rho, r2.rho) and r1.calibration == r2.calibration


def test_rho_estimates_appendix_d_target():
    # binary, h ~ U(1/2, 1), P(correct | h) = m(h) = h^2.  App. D's rho estimates
    # E[d_phi(e_Y, g) | h] - d_varphi(m, h) = 2[m (1-h)^2 + (1-m) h^2] - (m - h)^2 for Brier
    # (||g - e_Y||^2 = 2 (1{correct} - h)^2 for two classes), i.e. (4.7)'s rho plus the
    # irreducible 2 m (1 - m).  At interior points (>= 3 sigma from the edges 1/2 and 1) the
    # smoothing bias is sigma^2/2 * (target)'' <= 0.00125 * 6 and the noise SD of the regression
    # is <= sqrt(Var R(K)/(n sigma f)) = sqrt(1 * 0.282 / (40000 * 0.05 * 2)) = 0.0084: 4 SD +
    # bias < 0.042.
    rng = np.random.default_rng(7)
    y, h = draw_binary(rng, 40000)
    t = np.linspace(0.65, 0.85, 5)
    r = calibration_sharpness(y, h, bandwidth=0.05, grid=t)
    m = t * t
    target = 2 * (m * (1 - t) ** 2 + (1 - m) * t ** 2) - (m - t) ** 2
    assert np.max(np.abs(r.rho - target)) < 0.042
    # and (4.7) itself (with pi_{Y|X} = (1 - m, m)) is smaller by the irreducible 2 m (1 - m)
    rho_47 = 2 * (m - t) ** 2 - (m - t) ** 2
    assert np.allclose(target - rho_47, 2 * m * (1 - m))
    assert np.all(r.curve > 0) and np.max(np.abs(r.curve - m)) < 0.03   # same bound, SD 0.0053


def test_band_area_is_total_with_reflection():
    # with reflect=True the kernel integrates to one over [0, 1], so
    # int p_hat(t) E_hat[d | h = t] dt = (1/n) sum_i d_i int K(t, h_i) dt = d_TOT exactly;
    # quadrature on 4001 points: trapezoid error <= (1/4000)^2/12 * 0.968/sigma^2 * max d
    # = 2e-6 max d, plus the binned sums' relative error <= 1.1e-5: tolerance 1e-4 * max d.
    rng = np.random.default_rng(8)
    P = rng.dirichlet(np.ones(4), size=2000)
    y = rng.integers(0, 4, size=2000)
    t = np.linspace(0, 1, 4001)
    r = calibration_sharpness(y, P, grid=t, reflect=True)
    dmax = ((P - np.eye(4)[y]) ** 2).sum(axis=1).max()
    assert abs(np.trapezoid(r.density * r.total_given_h, t) - r.total) < 1e-4 * dmax
    assert abs(np.trapezoid(r.density, t) - 1.0) < 1e-4


def test_subsampling_mean_and_sd():
    rng = np.random.default_rng(9)
    y, h = draw_binary(rng, 20000)
    full = calibration_sharpness(y, h)
    s = calibration_sharpness(y, h, subsample=5000, n_subsamples=10, rng=123)
    # the reported mean and SD are those of the ten subsample estimates, each of which is the
    # unsubsampled estimate on its subset (same generator, same draws)
    gen = np.random.default_rng(123)
    singles = [calibration_sharpness(y[idx], h[idx])
               for idx in (gen.choice(h.size, size=5000, replace=False) for _ in range(10))]
    cals = np.array([x.calibration for x in singles])
    assert np.allclose(s.subsample_calibrations, cals, rtol=0, atol=1e-15)
    assert abs(s.calibration_sd - cals.std(ddof=1)) < 1e-15
    assert np.allclose(s.curve, np.mean([x.curve for x in singles], axis=0), atol=1e-14)
    assert s.total == full.total and s.subsample == 5000
    # subsampling loses little (App. D): same smoothing bias; the mean of 10 estimates differs
    # from the full one by noise (4 SD / sqrt(10)) plus the variance term's change,
    # <= 0.07/(5000 * 0.05) = 2.8e-4 (see the convergence test)
    assert abs(s.calibration - full.calibration) < 4 * s.calibration_sd / np.sqrt(10) + 2.8e-4
    # curves: pointwise NW SD on 5000 points <= sqrt(0.25 * 0.282 / (5000 * 0.05 * 2)) = 0.012,
    # one subsample's deviation from the full curve is at most that; interior points only
    inner = (s.grid > 0.6) & (s.grid < 0.9)
    assert np.max(np.abs(s.curve - full.curve)[inner]) < 4 * 0.012


def test_validation_errors():
    y, p = [0, 1, 1], [0.2, 0.7, 0.9]
    with pytest.raises(ValueError, match="pair"):
        calibration_sharpness(y, p, "spherical")
    with pytest.raises(ValueError, match="grid"):
        calibration_sharpness(y, p, grid=[0.2, 0.1])
    with pytest.raises(ValueError, match="grid"):
        calibration_sharpness(y, p, grid=[0.0, 1.5])
    with pytest.raises(ValueError, match="grid"):
        calibration_sharpness(y, p, grid=[[0.0, 1.0]])
    with pytest.raises(ValueError, match="subsample"):
        calibration_sharpness(y, p, subsample=4, rng=0)
    with pytest.raises(ValueError, match="n_subsamples"):
        calibration_sharpness(y, p, subsample=2, n_subsamples=1, rng=0)
    with pytest.raises(TypeError, match="rng"):
        calibration_sharpness(y, p, subsample=2)
    with pytest.raises(TypeError, match="subsample"):
        calibration_sharpness(y, p, subsample=2.5, rng=0)
    with pytest.raises(ValueError, match="y_true"):
        calibration_sharpness([0, 2, 1], p)
    with pytest.raises(ValueError, match="y_prob"):
        calibration_sharpness(y, [0.2, 1.7, 0.9])
    with pytest.raises(ValueError, match="y_prob: sample 0"):
        calibration_sharpness([1, 1, 0], [0.0, 0.7, 0.9], "log")
    with pytest.raises(ValueError, match="bandwidth"):
        confidence_calibration_plugin(y, p, bandwidth=0.0)
    with pytest.raises(ValueError, match="kernel"):
        confidence_calibration_plugin(y, p, kernel="box")
    with pytest.raises(TypeError, match="dist"):
        pointwise_sharpness_gap("not a distribution")
    with pytest.raises(ValueError, match="generator"):
        grouping_loss_decomposition(pop.FiniteDistribution([1.0], [0.5], [0.5]), "spherical")


# ----------------------------------------------------------------------------- population

def test_prop_4_8_rho_nonnegative_exactly_brier():
    for d in random_dists(20, 200):
        r = pointwise_sharpness_gap(d, "brier", exact=True)
        # Prop 4.8's proof, exactly: conditional sharpness gap >= 0 and Lemma 4.6 slack >= 0
        assert all(v >= 0 for v in r["total"] - r["calibration"])
        assert all(v >= 0 for v in r["calibration"] - r["confidence_error"])
        assert all(v >= 0 for v in r["rho"])
        assert all(v >= 0 for v in r["irreducible"])


def test_prop_4_8_rho_nonnegative_log():
    worst = np.inf
    for d in random_dists(21, 200, positive=True):
        r = pointwise_sharpness_gap(d, "log")
        worst = min(worst, r["rho"].min())
    # float64 sums of a dozen O(1) logs: rounding well below 1e-12
    assert worst >= -1e-12


def test_pointwise_gap_agrees_with_population_paths():
    for d in random_dists(22, 30):
        r = pointwise_sharpness_gap(d, "brier", exact=True)
        ref = pop.confidence_calibration_error(d, "brier", exact=True, per_confidence=True)
        assert list(r["confidence"]) == list(ref["confidence"])
        assert list(r["accuracy"]) == list(ref["accuracy"])
        assert list(r["calibration"]) == list(ref["full"])
        assert list(r["confidence_error"]) == list(ref["confidence_error"])
        # E rho = E d(pi, g) - confidence CE (Lemma 4.1 total), exactly
        total = pop.bregman_decomposition(d, "squared_norm", exact=True)["total"]
        cce = pop.confidence_calibration_error(d, "brier", exact=True)
        assert sum(r["mass"] * r["rho"]) == total - cce
        # App. D's target integrates to the expected Brier score minus the confidence CE
        assert sum(r["mass"] * r["rho_labels"]) == pop.expected_score(d, "brier", exact=True) - cce
    for d in random_dists(23, 30, positive=True):
        r = pointwise_sharpness_gap(d, "log")
        expected = pop.expected_score(d, "log") - pop.confidence_calibration_error(d, "log")
        assert abs(np.sum(r["mass"] * r["rho_labels"]) - expected) < 1e-12


def test_pointwise_gap_hand_example():
    # atoms (1/2 each) predicting (3/4, 1/4) and (1/4, 3/4), label 0 always: h = 3/4 pooled,
    # accuracy 1/2; E||pi - g||^2 = 2 (1/4)^2 = 1/8 and 2 (3/4)^2 = 9/8, mean 5/8;
    # d_varphi = (1/2 - 3/4)^2 = 1/16; rho = 9/16; no label noise: irreducible 0
    d = pop.FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1), Fr(0)]],
                               [[Fr(3, 4), Fr(1, 4)], [Fr(1, 4), Fr(3, 4)]])
    r = pointwise_sharpness_gap(d, exact=True)
    assert (r["rho"][0], r["irreducible"][0], r["rho_labels"][0]) == (Fr(9, 16), 0, Fr(9, 16))
    # a noisy label: pi = (1/2, 1/2) at g = (1/2, 1/2): total 0, irreducible 1 - 1/2 = 1/2
    d2 = pop.FiniteDistribution([Fr(1)], [[Fr(1, 2), Fr(1, 2)]], [[Fr(1, 2), Fr(1, 2)]])
    r2 = pointwise_sharpness_gap(d2, exact=True)
    assert (r2["rho"][0], r2["rho_labels"][0]) == (0, Fr(1, 2))


def test_condition_of_lemma_4_6_matters_for_prop_4_8():
    # hand instance, k = 3: g = (1/2, 1/4, 1/4), pi = (5/8, 3/16, 3/16) (calibration gap only):
    # total = (1/8)^2 + 2 (1/16)^2 = 3/128; varphi = 2x^2 gives d_varphi = 2 (1/8)^2 = 4/128
    d = pop.FiniteDistribution([Fr(1)], [[Fr(5, 8), Fr(3, 16), Fr(3, 16)]],
                               [[Fr(1, 2), Fr(1, 4), Fr(1, 4)]])
    assert pointwise_sharpness_gap(d, TWO_X2, exact=True)["rho"][0] == Fr(-1, 128)
    counts = {}
    for d in random_dists(24, 200):
        k = d.n_classes
        for pair in (TWO_X2, QUARTIC):
            neg = min(pointwise_sharpness_gap(d, pair, exact=True)["rho"]) < 0
            key = (pair.name, "k=2" if k == 2 else "k>=3")
            counts[key] = counts.get(key, 0) + int(neg)
    # 2x^2: for k = 2, ||x - y||^2 = 2 (x_i - y_i)^2 exactly (the condition holds with
    # equality), so rho >= 0; for k >= 3 the condition fails (constant k/(k-1) < 2) and so
    # does Prop 4.8 on many random populations.  x^4: d_varphi = (a-b)^2 (a^2 + 2ab + 3b^2)
    # reaches 6 (a-b)^2 > 2 (a-b)^2 near 1, violated for every k.
    assert counts[("2x^2", "k=2")] == 0
    assert counts[("2x^2", "k>=3")] >= 20
    assert counts[("x^4", "k=2")] >= 10 and counts[("x^4", "k>=3")] >= 20


def test_grouping_loss_decomposition_exact():
    dists = random_dists(25, 100)
    dists.append(pop.FiniteDistribution([Fr(1, 3), Fr(2, 3)], [Fr(1, 4), Fr(1, 2)],
                                        [Fr(1, 2), Fr(1, 2)]))          # (N,) binary input
    for d in dists:
        r = grouping_loss_decomposition(d, exact=True)
        assert r["total"] == r["irreducible"] + r["grouping"] + r["calibration"]   # (E.1)
        assert r["sharpness_gap_labels"] == r["irreducible"] + r["grouping"]
        assert r["sharpness_gap_truth"] == r["grouping"]
        # independent paths: the expected Brier score, the entropy of the truth, CE_S
        assert r["total"] == pop.expected_score(d, "brier", exact=True)
        w, T, _ = d.exact
        assert r["irreducible"] == pop.expected_score(pop.FiniteDistribution(w, T, T), "brier",
                                                      exact=True)
        assert r["calibration"] == pop.calibration_error_proper(d, "brier", exact=True)


def test_grouping_loss_decomposition_log():
    for d in random_dists(26, 60, positive=True):
        r = grouping_loss_decomposition(d, "neg_entropy")
        # sums of a few dozen logs: 1e-12
        assert abs(r["total"] - (r["irreducible"] + r["grouping"] + r["calibration"])) < 1e-12
        assert abs(r["sharpness_gap_labels"] - r["irreducible"] - r["grouping"]) < 1e-12
        assert abs(r["sharpness_gap_truth"] - r["grouping"]) < 1e-12
        assert abs(r["total"] - pop.expected_score(d, "log")) < 1e-12
        T = d.truth
        shannon = -np.sum(d.weights * np.sum(special.xlogy(T, T), axis=1))
        assert abs(r["irreducible"] - shannon) < 1e-12


# ----------------------------------------------------------------------------- the plot

def test_calibration_sharpness_diagram_artists():
    rng = np.random.default_rng(10)
    # confidences concentrated near 0.9 with many errors: density ~ 8, rho ~ 0.3, so the band
    # reaches above 1 and below 0
    h = np.clip(rng.normal(0.9, 0.03, size=3000), 0.5, 1.0)
    y = (rng.uniform(size=h.size) < 0.6).astype(int)
    r = calibration_sharpness(y, h, subsample=1000, n_subsamples=3, rng=0)
    assert r.upper.max() > 1 and r.lower.min() < 0
    fig, ax0 = plt.subplots()
    ax = calibration_sharpness_diagram(r, ax=ax0, title="test")
    try:
        assert ax is ax0 and ax.get_title() == "test"
        dashed = [ln for ln in ax.get_lines() if ln.get_linestyle() == "--"]
        assert len(dashed) == 1 and list(dashed[0].get_xydata()[:, 0]) == [0, 1]
        curves = [ln for ln in ax.get_lines() if ln.get_label() == "calibration curve"]
        assert len(curves) == 1 and np.array_equal(curves[0].get_ydata(), r.curve)
        (band,) = ax.collections
        ys = np.concatenate([p.vertices[:, 1] for p in band.get_paths()])
        assert ys.min() >= 0.0                         # bottom clipped at 0
        assert np.isclose(ys.max(), r.upper.max())     # top not clipped at 1
        assert ax.get_ylim()[1] >= r.upper.max()
        twins = [a for a in fig.axes if a.get_gid() == "calnotes-density-axes"]
        assert len(twins) == 1
        dens = [ln for ln in twins[0].get_lines()]
        assert np.array_equal(dens[0].get_ydata(), r.density)
        text = " ".join(t.get_text() for t in ax.texts)
        assert f"{100 * r.calibration:.2f}" in text and f"{100 * r.total:.2f}" in text
        assert f"{100 * r.calibration_sd:.2f}" in text and "CAL" in text and "TOT" in text
    finally:
        plt.close(fig)
    with pytest.raises(TypeError, match="result"):
        calibration_sharpness_diagram({"curve": [0.5]})
    ax2 = calibration_sharpness_diagram(calibration_sharpness(y, h))
    assert ax2.figure is not fig
    plt.close(ax2.figure)


def test_default_bandwidth_shrinks_with_the_sample_size():
    """Without a bandwidth the estimators use 0.1 n^(-1/5) of the samples each estimate uses (a
    fixed width is not consistent, Thm C.4); an explicit bandwidth still wins."""
    from calnotes.core.kernel import default_bandwidth, kde, nadaraya_watson

    assert default_bandwidth(1000) == pytest.approx(0.1 * 1000 ** -0.2, rel=1e-15)
    assert default_bandwidth(1) == 0.1 and default_bandwidth(10 ** 6) < default_bandwidth(10 ** 3)
    with pytest.raises(ValueError, match="n"):
        default_bandwidth(0)
    rng = np.random.default_rng(5)
    h = rng.uniform(0.5, 1.0, size=3000)
    y = (rng.uniform(size=h.size) < h ** 2).astype(int)
    sigma = 0.1 * 3000 ** -0.2
    assert confidence_calibration_plugin(y, h) == confidence_calibration_plugin(
        y, h, bandwidth=sigma)
    assert confidence_calibration_plugin(y, h, bandwidth=0.05) != confidence_calibration_plugin(
        y, h)
    r = calibration_sharpness(y, h, grid=[0.6, 0.9])
    assert r.bandwidth == sigma
    s = calibration_sharpness(y, h, grid=[0.6, 0.9], subsample=500, n_subsamples=2, rng=0)
    assert s.bandwidth == pytest.approx(0.1 * 500 ** -0.2, rel=1e-15)
    t = np.array([0.6, 0.9])
    assert np.array_equal(nadaraya_watson(h, y, t), nadaraya_watson(h, y, t, bandwidth=sigma))
    assert np.array_equal(kde(h, t), kde(h, t, bandwidth=sigma))
