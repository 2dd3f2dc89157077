"""calnotes.core.kernel against brute force, its stated error bounds, and relplot."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from calnotes.core.kernel import grid_size, kde, nadaraya_watson, smooth_ece


def _K(u, kernel):
    if kernel == "gaussian":
        return norm.pdf(u)
    return np.where(np.abs(u) <= 1, 0.75 * (1 - u * u), 0.0)


def _brute_sums(x, w, t, sigma, kernel, reflect):
    """sum_i w_i K_sigma(t, x_i), the images x + 2m and -x + 2m written out (|m| <= 3)."""
    t = np.asarray(t, dtype=float)[:, None]
    images = [x[None, :]] if not reflect else \
        [s * x[None, :] + 2 * m for m in range(-3, 4) for s in (1, -1)]
    return sum((_K((t - im) / sigma, kernel) / sigma * w[None, :]).sum(axis=1) for im in images)


@pytest.mark.parametrize("kernel", ["gaussian", "epanechnikov"])
@pytest.mark.parametrize("reflect", [False, True])
def test_exact_method_matches_brute_force(kernel, reflect):
    rng = np.random.default_rng(0)
    x = rng.beta(2, 5, size=300)
    y = rng.normal(size=300)
    t = np.linspace(0, 1, 57)
    sigma = 0.07
    num = _brute_sums(x, y, t, sigma, kernel, reflect)
    den = _brute_sums(x, np.ones_like(y), t, sigma, kernel, reflect)
    with np.errstate(invalid="ignore"):
        expected = num / den
    got = nadaraya_watson(x, y, t, bandwidth=sigma, kernel=kernel, reflect=reflect,
                          method="exact")
    finite = np.isfinite(expected)
    # sums of 300 terms of size <= 1/sigma: relative rounding below 1e-12
    assert np.array_equal(finite, np.isfinite(got))
    assert np.allclose(got[finite], expected[finite], rtol=1e-11, atol=1e-12)
    assert np.allclose(kde(x, t, bandwidth=sigma, kernel=kernel, reflect=reflect,
                           method="exact"), den / 300, rtol=1e-11, atol=1e-12)


@pytest.mark.parametrize("reflect", [False, True])
def test_binned_density_within_the_stated_bound(reflect):
    """|F_binned - F| <= (delta^2/4) ||K''|| sum|w| with ||K_sigma''|| = phi(0)/sigma^3, three
    times that with reflection (module docstring)."""
    rng = np.random.default_rng(1)
    x = rng.uniform(size=5000)
    t = np.linspace(0, 1, 301)
    for sigma in (0.01, 0.05, 0.2):
        exact = kde(x, t, bandwidth=sigma, reflect=reflect, method="exact")
        binned = kde(x, t, bandwidth=sigma, reflect=reflect, method="binned")
        delta = 1.0 / grid_size(sigma)
        bound = (delta ** 2 / 4) * (3 if reflect else 1) * norm.pdf(0) / sigma ** 3
        assert np.max(np.abs(binned - exact)) <= bound + 1e-12


def test_reflected_density_integrates_to_one_and_constant_regression():
    rng = np.random.default_rng(2)
    x = np.concatenate([rng.uniform(size=200), [0.0, 1.0]])
    t = np.linspace(0, 1, 20001)
    p = kde(x, t, bandwidth=0.1, reflect=True)
    integral = float(((p[1:] + p[:-1]) / 2).sum() / (len(t) - 1))
    # trapezoid error h^2/12 max|p''| with h = 5e-5: below 1e-8
    assert abs(integral - 1.0) < 1e-8
    assert np.allclose(nadaraya_watson(x, np.full(x.size, 0.3), t[::100], bandwidth=0.1), 0.3)
    assert np.isnan(nadaraya_watson([0.1, 0.2], [0.0, 1.0], [0.9], bandwidth=0.05,
                                    kernel="epanechnikov"))[0]


def _smece_reference(y, f, sigma):
    """int_0^1 |(1/n) sum_i K_R(t, f_i) (y_i - f_i)| dt by the trapezoid rule on 20001 points,
    with its error estimated by the difference to the rule on every other point (Richardson:
    the error of the finer rule is about a third of that difference), and max |F|."""
    t = np.linspace(0, 1, 20001)
    g = np.abs(_brute_sums(f, y - f, t, sigma, "gaussian", True) / f.size)
    fine = float(((g[1:] + g[:-1]) / 2).sum() / (t.size - 1))
    h = g[::2]
    coarse = float(((h[1:] + h[:-1]) / 2).sum() / (h.size - 1))
    return fine, abs(fine - coarse), float(np.max(g))


@pytest.fixture(scope="module")
def sample():
    rng = np.random.default_rng(3)
    f = rng.uniform(size=300)
    y = (rng.uniform(size=f.size) < 0.5 + 0.8 * (f - 0.5) ** 3).astype(int)   # sign changes
    return y, f


@pytest.mark.parametrize("sigma", [0.01, 0.05, 0.3])
def test_smooth_ece_matches_the_quadrature_reference(sample, sigma):
    y, f = sample
    ref, ref_err, _ = _smece_reference(y, f, sigma)
    # the stated bound 4.3e-6 mean|y - f| (binning and integration) plus the reference's own
    # quadrature error (Richardson estimate, doubled for safety)
    tol = 4.3e-6 * np.mean(np.abs(y - f)) + 2 * ref_err
    assert abs(smooth_ece(y, f, bandwidth=sigma) - ref) <= tol


def test_fixed_point_and_monotonicity(sample):
    y, f = sample
    value, sigma = smooth_ece(y, f, return_bandwidth=True)
    assert value <= sigma
    below = sigma - 2.0 ** -20
    assert smooth_ece(y, f, bandwidth=below) > below           # the bracket is 2^-20 wide
    sigmas = np.geomspace(0.002, 1.0, 25)
    values = np.array([smooth_ece(y, f, bandwidth=s) for s in sigmas])
    # reflected Gaussians form a semigroup of L1 contractions: non-increasing in sigma,
    # up to twice the stated discretisation error
    assert np.all(np.diff(values) <= 2 * 4.3e-6 * np.mean(np.abs(y - f)))


def test_agrees_with_relplot_within_its_discretisation(sample):
    relplot = pytest.importorskip("relplot")
    y, f = sample
    for sigma in (0.02, 0.05, 0.2):
        ref, ref_err, gmax = _smece_reference(y, f, sigma)
        ours = smooth_ece(y, f, bandwidth=sigma)
        theirs = float(relplot.smECE_sigma(f, y, sigma))
        # relplot's own discretisation (its source, relplot/kernels.py and metrics.py):
        # (a) the Gaussian is sampled on a window of width 1, so its mass beyond 1/2 is lost,
        #     changing int|F| by at most mean|y - f| x 2 Phi(-0.5/sigma) (and as much again
        #     through the normalisation by the summed density);
        # (b) |F| is integrated by a normalised rectangle rule on max(10/sigma, 200) points:
        #     first-order error up to (spacing) x max|F|;
        # (c) the data are rounded to a grid of E = max(2000, 20/sigma)//2 + 1 points, a
        #     second-order error (delta/sigma)^2 relative, delta = 1/(E - 1).
        r = np.mean(np.abs(y - f))
        spacing = 1.0 / (max(round(10 / sigma), 200) - 1)
        delta = 1.0 / (max(2000, round(20 / sigma)) // 2)
        bound = 4 * norm.cdf(-0.5 / sigma) * r + spacing * gmax + (delta / sigma) ** 2 * ref
        assert abs(theirs - ref) <= bound + ref_err
        assert abs(ours - ref) < abs(theirs - ref)              # ours is the closer one
        assert abs(ours - theirs) <= bound + ref_err + 4.3e-6 * r   # within relplot's error


def test_perfectly_calibrated_sample_has_small_smooth_ece():
    rng = np.random.default_rng(4)
    f = rng.uniform(size=20000)
    y = (rng.uniform(size=f.size) < f).astype(int)
    # smECE_sigma <= sup_t |F(t)| and F(t) is a mean of n independent zero-mean terms of size
    # <= K(0)/sigma; at sigma* ~ 0.01-0.02 its SD is about sqrt(0.25 / (2 sqrt(pi) n sigma)),
    # about 0.01 at n = 20000: the fixed point cannot be far above that
    assert smooth_ece(y, f) < 0.05


def test_one_signed_residual_has_the_closed_form_for_every_sigma():
    """If y_i - f_i <= 0 for all i, F(t) <= 0 on [0, 1] and, the reflected kernel integrating
    to one in t, smECE_sigma = |int F| = mean(f - y) exactly, for every sigma."""
    rng = np.random.default_rng(5)
    f = rng.uniform(size=3000)
    for y, expected in ((np.zeros(f.size, int), f.mean()), (np.ones(f.size, int), (1 - f).mean())):
        for sigma in (1e-4, 0.003, 0.05, 0.4, 1.0):
            # binning keeps the total weight, the FFT keeps mode 0 and the trapezoid sum of a
            # cosine series on the nodes is its mode 0: equal up to rounding (1e-12 relative)
            assert smooth_ece(y, f, bandwidth=sigma) == pytest.approx(expected, rel=1e-12)
        value, sigma = smooth_ece(y, f, return_bandwidth=True)
        assert value == pytest.approx(expected, rel=1e-12)
        assert sigma - 2.0 ** -20 < value <= sigma                  # the fixed point bracket


def test_zero_when_predictions_equal_labels_and_small_in_the_limit():
    y = np.array([0, 1, 1, 0, 1])
    value, sigma = smooth_ece(y, y.astype(float), return_bandwidth=True)
    assert value == 0.0 and sigma == 1e-4                  # residuals 0: the bandwidth floor
    assert smooth_ece(y, y.astype(float), bandwidth=0.05) == 0.0
    for eps in (1e-1, 1e-3, 1e-6):
        f = np.where(y == 1, 1 - eps, eps)
        # int |F| <= (1/n) sum_i |y_i - f_i| int K_R(t, f_i) dt = mean|y - f| (triangle
        # inequality; it holds for the binned sums too: binning, the positive discrete kernel
        # with unit trapezoid mass and the |.| of a linear interpolant each keep it), up to
        # rounding (1e-12 relative).  mean|y - f| is eps up to the rounding of 1 - eps.
        bound = np.mean(np.abs(y - f)) * (1 + 1e-12)
        assert bound == pytest.approx(eps, rel=1e-9)
        for sigma in (1e-3, 0.05, 1.0):
            assert 0.0 <= smooth_ece(y, f, bandwidth=sigma) <= bound
        assert smooth_ece(y, f) <= bound


def test_bad_input_is_named():
    for bad in (0.0, -0.1, 1.5, math.nan, math.inf, True, "0.1"):
        with pytest.raises(ValueError, match="bandwidth"):
            kde([0.2, 0.4], bandwidth=bad)
    with pytest.raises(ValueError, match="bandwidth"):
        smooth_ece([0, 1], [0.2, 0.3], bandwidth=1e-5)          # below the resolved floor
    with pytest.raises(ValueError, match="kernel"):
        kde([0.2, 0.4], kernel="box")
    with pytest.raises(ValueError, match="method"):
        kde([0.2, 0.4], method="fft")
    with pytest.raises(ValueError, match="reflect"):
        nadaraya_watson([0.2, 0.4], [1.0, 0.0], reflect="yes")
    for x in ([0.2, 1.4], [0.2, -0.1], [0.2, math.nan], [], [[0.2, 0.3]]):
        with pytest.raises(ValueError, match="x"):
            kde(x)
    for grid in ([0.5, 1.5], [math.nan], []):
        with pytest.raises(ValueError, match="grid"):
            kde([0.2, 0.4], grid)
    for y in ([1.0], [1.0, math.nan], [[1.0, 0.0]]):
        with pytest.raises(ValueError, match="y"):
            nadaraya_watson([0.2, 0.4], y)
    with pytest.raises(ValueError, match="y_prob"):
        smooth_ece([0, 1], [0.2, math.nan])
    with pytest.raises(ValueError, match="y_prob"):
        smooth_ece([], [])
    with pytest.raises(ValueError, match="y_true"):
        smooth_ece([0, 2], [0.2, 0.3])
    with pytest.raises(ValueError, match="y_true"):
        smooth_ece([0, 1, 1], [0.2, 0.3])
