"""calnotes.core.reliability (consistency bands, PAV, CORP) and the reliability figures of
calnotes.core.plotting (bands, share axis, corp_diagram, classwise_reliability)."""

import itertools
import subprocess
import sys

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from sklearn.isotonic import IsotonicRegression  # noqa: E402

from calnotes import binned_ece, poisson_binomial_pmf, reliability_stats  # noqa: E402
from calnotes.core.plotting import (classwise_reliability, corp_diagram,  # noqa: E402
                                    reliability_diagram, reliability_panels)
from calnotes.core.reliability import (CORPResult, _poisson_binomial,  # noqa: E402
                                       consistency_bands, corp, pav)


@pytest.fixture(autouse=True)
def _close_figures():
    yield
    plt.close("all")


def _calibrated(n, seed, a=2.0, b=2.0):
    rng = np.random.default_rng(seed)
    p = rng.beta(a, b, size=n)
    return (rng.uniform(size=n) < p).astype(np.int64), p


def _sklearn_pooled_fit(y, p):
    """sklearn's isotonic regression on the pooled points (distinct p, weight = count,
    value = mean outcome), evaluated at the distinct predictions."""
    x, inverse, counts = np.unique(p, return_inverse=True, return_counts=True)
    means = np.bincount(inverse.ravel(), weights=y) / counts
    iso = IsotonicRegression(increasing=True, out_of_bounds="clip")
    iso.fit(x, means, sample_weight=counts.astype(float))
    return x, iso.predict(x)


# ===================================================================== consistency bands

def _enumerated_pmf(q):
    """Law of sum Ber(q_i) by enumerating all 2^L outcomes (reference for small bins)."""
    pmf = np.zeros(len(q) + 1)
    for bits in itertools.product((0, 1), repeat=len(q)):
        pmf[sum(bits)] += np.prod([qi if b else 1 - qi for qi, b in zip(q, bits)])
    return pmf


@pytest.mark.parametrize("seed", range(6))
def test_band_ends_are_the_equal_tailed_quantiles_of_the_enumerated_law(seed):
    # one bin holding everything: the band is the interval of the count of positives
    rng = np.random.default_rng(seed)
    q = rng.uniform(0.05, 0.95, size=int(rng.integers(1, 11)))
    for level in (0.5, 0.8, 0.9, 0.99):
        b = consistency_bands(q, n_bins=1, level=level)
        a = (1 - level) / 2
        pmf = _enumerated_pmf(q)
        lo, hi = round(b.lower[0] * q.size), round(b.upper[0] * q.size)
        assert pmf[:lo].sum() <= a + 1e-12            # lower tail outside: at most a
        assert pmf[:lo + 1].sum() > a                 # and lower is the largest such count
        assert pmf[hi + 1:].sum() <= a + 1e-12
        assert pmf[hi:].sum() > a
        assert pmf[lo:hi + 1].sum() >= level - 1e-12  # coverage at least level


def test_large_bins_use_the_exact_law_not_an_approximation():
    rng = np.random.default_rng(3)
    for L in (257, 1000, 2500):
        q = rng.uniform(0.001, 0.2, size=L)           # skewed: a normal law would be off
        np.testing.assert_allclose(_poisson_binomial(q), poisson_binomial_pmf(q),
                                   rtol=0, atol=1e-14)
        pmf = poisson_binomial_pmf(q)
        b = consistency_bands(q, n_bins=1, level=0.9)
        lo = np.flatnonzero(np.concatenate([[0], np.cumsum(pmf)[:-1]]) <= 0.05)[-1]
        hi = np.flatnonzero(np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0]]) <= 0.05)[0]
        assert (b.lower[0], b.upper[0]) == (lo / L, hi / L)


@pytest.mark.parametrize("binning", ["width", "mass"])
def test_bands_use_the_bins_of_reliability_stats(binning):
    y, p = _calibrated(301, 0)
    p = np.round(p, 2)                                # ties straddle equal-mass boundaries
    b = consistency_bands(p, 12, binning=binning)
    s = reliability_stats(y, p, 12, binning=binning)
    np.testing.assert_array_equal(b.count, s["count"])
    np.testing.assert_allclose(b.mean_prob, s["mean_prob"], rtol=0, atol=1e-15)
    assert (b.n_bins, b.binning, b.level) == (12, binning, 0.9)


def test_equal_width_allows_more_bins_than_samples_and_empty_bins_are_nan():
    b = consistency_bands([0.05, 0.95, 0.97], n_bins=10)
    assert b.count.tolist() == [1, 0, 0, 0, 0, 0, 0, 0, 0, 2]
    empty = b.count == 0
    for arr in (b.mean_prob, b.lower, b.upper):
        assert np.isnan(arr[empty]).all() and np.isfinite(arr[~empty]).all()
    with pytest.raises(ValueError, match="n_bins"):
        consistency_bands([0.1, 0.2], n_bins=3, binning="mass")


def test_deterministic_bins():
    b = consistency_bands([0.0, 0.0, 0.0, 1.0, 1.0], n_bins=2)
    assert (b.lower[0], b.upper[0]) == (0.0, 0.0)     # all predictions 0: band [0, 0]
    assert (b.lower[1], b.upper[1]) == (1.0, 1.0)
    # a 0 or 1 inside a random bin only shifts the count
    # (random part: Bin(2, 1/2) = [0.25, 0.5, 0.25], plus 1 positive for certain, of 4)
    b = consistency_bands([0.5, 0.5, 1.0, 0.0], n_bins=1, level=0.9)   # tails <= 0.05
    assert (b.lower[0], b.upper[0]) == ((0 + 1) / 4, (2 + 1) / 4)
    b = consistency_bands([0.5, 0.5, 1.0, 0.0], n_bins=1, level=0.4)   # tails <= 0.3
    assert (b.lower[0], b.upper[0]) == ((1 + 1) / 4, (1 + 1) / 4)


def test_band_coverage_for_calibrated_data():
    """Outcomes drawn from the predictions themselves: the observed mean outcome of a bin lies
    in its 90% band with probability >= 0.9 (the law is discrete, so the bands are
    conservative).  Bins are independent given the predictions (disjoint samples) and seeds
    are independent, so the covered fraction over N bins has standard error at most
    sqrt(0.9 * 0.1 / N) (about 0.004 for N = 6,000); we assert coverage >= 0.9 - 3 SE.  A
    generous upper bound (0.99) checks the bands are not trivially wide."""
    covered = []
    for seed in range(300):
        y, p = _calibrated(400, seed)
        for binning in ("width", "mass"):
            b = consistency_bands(p, 10, binning=binning)
            mean_outcome = reliability_stats(y, p, 10, binning=binning,
                                             ties="position")["mean_outcome"]
            covered.append(b.contains(mean_outcome)[b.count > 0])
    covered = np.concatenate(covered)
    se = np.sqrt(0.9 * 0.1 / covered.size)
    assert covered.size >= 5900
    assert 0.9 - 3 * se <= covered.mean() <= 0.99


def test_bands_flag_a_miscalibrated_model():
    rng = np.random.default_rng(7)
    p = rng.uniform(size=4000)
    y = (rng.uniform(size=p.size) < p).astype(int)
    overconfident = np.clip(0.5 + 1.6 * (p - 0.5), 0, 1)
    b = consistency_bands(overconfident, 10)
    inside = b.contains(reliability_stats(y, overconfident, 10)["mean_outcome"])
    assert inside[b.count > 0].mean() < 0.5


@pytest.mark.parametrize("kwargs, exc, name", [
    ({"y_prob": [0.1, np.nan]}, ValueError, "y_prob"),
    ({"y_prob": [0.1, 1.5]}, ValueError, "y_prob"),
    ({"y_prob": [[0.5, 0.5], [0.2, 0.8]]}, ValueError, "y_prob"),
    ({"y_prob": np.zeros((2, 2, 2))}, ValueError, "y_prob"),
    ({"y_prob": []}, ValueError, "y_prob"),
    ({"y_prob": ["a", "b"]}, TypeError, "y_prob"),
    ({"y_prob": [0.1, 0.2], "n_bins": 0}, ValueError, "n_bins"),
    ({"y_prob": [0.1, 0.2], "n_bins": 2.5}, TypeError, "n_bins"),
    ({"y_prob": [0.1, 0.2], "binning": "quantile"}, ValueError, "binning"),
    ({"y_prob": [0.1, 0.2], "level": 0.0}, ValueError, "level"),
    ({"y_prob": [0.1, 0.2], "level": 1.0}, ValueError, "level"),
    ({"y_prob": [0.1, 0.2], "level": 90}, ValueError, "level"),
    ({"y_prob": [0.1, 0.2], "level": float("nan")}, ValueError, "level"),
    ({"y_prob": [0.1, 0.2], "level": "0.9"}, TypeError, "level"),
    ({"y_prob": [0.1, 0.2], "level": True}, TypeError, "level"),
])
def test_consistency_bands_rejects_malformed_inputs(kwargs, exc, name):
    with pytest.raises(exc, match=rf"^{name}:"):
        consistency_bands(**kwargs)


# =========================================================================== PAV and CORP

@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("decimals", [None, 1, 2])
def test_pav_agrees_with_sklearn_on_pooled_points(seed, decimals):
    y, p = _calibrated(700, seed, a=0.7, b=1.3)
    p = np.clip(p + np.random.default_rng(seed).normal(0, 0.1, p.size), 0, 1)
    if decimals is not None:
        p = np.round(p, decimals)                     # heavy ties
    res = corp(y, p)
    x, expected = _sklearn_pooled_fit(y, p)
    np.testing.assert_array_equal(res.x, x)
    np.testing.assert_allclose(res.fitted, expected, rtol=0, atol=1e-12)
    assert np.all(np.diff(res.fitted) >= 0)
    np.testing.assert_array_equal(res.recalibrated, res.fitted[np.searchsorted(res.x, p)])
    # pav itself, with real-valued responses and uneven weights
    rng = np.random.default_rng(seed)
    v, w = rng.normal(size=200), rng.integers(1, 6, size=200).astype(float)
    iso = IsotonicRegression().fit(np.arange(200.0), v, sample_weight=w)
    np.testing.assert_allclose(pav(v, w), iso.predict(np.arange(200.0)), rtol=0, atol=1e-12)


def _assert_same(a: CORPResult, b: CORPResult):
    np.testing.assert_array_equal(a.x, b.x)
    np.testing.assert_array_equal(a.fitted, b.fitted)
    np.testing.assert_array_equal(a.weight, b.weight)
    assert a.base_rate == b.base_rate
    assert a.brier == b.brier and a.log == b.log      # exact equality of every number


def test_corp_does_not_depend_on_the_row_order():
    y, p = _calibrated(500, 11)
    p = np.round(p, 1)
    res = corp(y, p)
    rng = np.random.default_rng(0)
    for _ in range(5):
        perm = rng.permutation(p.size)
        other = corp(y[perm], p[perm])
        _assert_same(res, other)
        np.testing.assert_array_equal(other.recalibrated, res.recalibrated[perm])
    # within each tie group, positives first or negatives first: the same result
    up = np.lexsort((y, p))
    down = np.lexsort((-y, p))
    _assert_same(corp(y[up], p[up]), corp(y[down], p[down]))
    # duplicating every row changes no mean: the same curve and decomposition
    twice = corp(np.concatenate([y, y]), np.concatenate([p, p]))
    np.testing.assert_array_equal(twice.fitted, res.fitted)
    for score in ("brier", "log"):
        d1, d2 = res.decomposition(score), twice.decomposition(score)
        np.testing.assert_allclose([d1.score, d1.mcb, d1.dsc, d1.unc],
                                   [d2.score, d2.mcb, d2.dsc, d2.unc], rtol=1e-13, atol=1e-15)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("score", ["brier", "log"])
def test_decomposition_identity_and_signs(seed, score):
    y, p = _calibrated(400, seed)
    p = np.clip(p ** 1.5 + 0.02, 0, 0.99)             # a miscalibrated model
    if seed % 2:
        p = np.round(p, 1)
    res = corp(y, p)
    d = res.decomposition(score)
    assert d is getattr(res, score)
    assert d.mcb >= -1e-14 and d.dsc >= -1e-14
    assert d.score == pytest.approx(d.mcb - d.dsc + d.unc, abs=1e-13)
    # against a direct row-by-row computation with sklearn's fit
    x, fit = _sklearn_pooled_fit(y, p)
    p_hat = fit[np.searchsorted(x, p)]
    r = y.mean()

    def mean_score(q):
        if score == "brier":
            return np.mean((q - y) ** 2)
        with np.errstate(divide="ignore"):
            return np.mean(-np.log(np.where(y == 1, q, 1 - q)))

    assert d.score == pytest.approx(mean_score(p), abs=1e-12)
    assert d.mcb == pytest.approx(mean_score(p) - mean_score(p_hat), abs=1e-12)
    assert d.unc == pytest.approx(mean_score(np.full(p.shape, r)), abs=1e-12)
    assert d.dsc == pytest.approx(mean_score(np.full(p.shape, r)) - mean_score(p_hat), abs=1e-12)


def test_mcb_vanishes_for_an_isotonically_calibrated_model():
    y, p = _calibrated(600, 5)
    p = np.clip(0.5 + 1.4 * (p - 0.5), 0, 1)           # miscalibrated: MCB > 0
    first = corp(y, p)
    assert first.brier.mcb > 1e-3 and first.log.mcb > 1e-3
    again = corp(y, first.recalibrated)               # p equal to its own pooled PAV fit
    for d in (again.brier, again.log):
        assert abs(d.mcb) <= 1e-12
    np.testing.assert_allclose(again.fitted, again.x, rtol=0, atol=1e-15)
    assert again.brier.dsc == pytest.approx(first.brier.dsc, abs=1e-12)


def test_log_score_edge_cases_give_inf_or_zero_without_warnings():
    # outcomes all 0 or 1 in a block: fitted 0 / 1 and finite scores
    res = corp([0, 0, 1, 1], [0.1, 0.2, 0.7, 0.8])
    assert res.fitted.tolist() == [0.0, 0.0, 1.0, 1.0]
    assert res.log.mcb == res.log.score and res.log.dsc == res.log.unc == np.log(2)
    # a prediction of exactly 0 for a positive: infinite log score and MCB; Brier finite
    res = corp([1, 0, 1], [0.0, 0.5, 0.9])
    assert res.log.score == np.inf and res.log.mcb == np.inf
    assert np.isfinite(res.log.dsc) and np.isfinite(res.brier.score)
    # constant outcomes: no uncertainty
    res = corp([1, 1, 1], [0.2, 0.9, 0.9])
    assert res.brier.unc == 0.0 and res.log.unc == 0.0 and res.base_rate == 1.0
    with pytest.raises(ValueError, match="^score:"):
        res.decomposition("spherical")


@pytest.mark.parametrize("y, p, exc, name", [
    ([0, 1], [0.1, np.nan], ValueError, "y_prob"),
    ([0, 1], [0.1, -0.5], ValueError, "y_prob"),
    ([0, 1], [[0.9, 0.1], [0.2, 0.8]], ValueError, "y_prob"),
    ([], [], ValueError, "y_prob"),
    ([0, 1, 1], [0.1, 0.2], ValueError, "y_true"),
    ([0, 2], [0.1, 0.2], ValueError, "y_true"),
    ([0, 0.5], [0.1, 0.2], ValueError, "y_true"),
    ([0, np.nan], [0.1, 0.2], ValueError, "y_true"),
    ([[0, 1], [1, 0]], [0.1, 0.2], ValueError, "y_true"),
    (["a", "b"], [0.1, 0.2], TypeError, "y_true"),
])
def test_corp_rejects_malformed_inputs(y, p, exc, name):
    with pytest.raises(exc, match=rf"^{name}:"):
        corp(y, p)


def test_pav_rejects_bad_weights():
    with pytest.raises(ValueError, match="weights"):
        pav([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="weights"):
        pav([1.0, 2.0], [1.0, 0.0])


# ================================================================================ figures

def _twin(ax):
    return next(a for a in ax.figure.axes
                if a.get_gid() == "calnotes-histogram-axes" and a._calnotes_parent is ax)


def test_reliability_diagram_share_axis_is_a_fraction_axis_and_bands_are_drawn():
    y, p = _calibrated(300, 1)
    ax = reliability_diagram(y, p, 10, label="model")
    assert isinstance(ax, matplotlib.axes.Axes)
    twin = _twin(ax)
    assert twin.get_ylim() == (0.0, 1.0)
    heights = sorted(b.get_height() for b in twin.patches)
    counts = reliability_stats(y, p, 10)["count"]
    np.testing.assert_allclose(heights, sorted(counts / 300))   # true heights, sum 1
    # a second predictor on the same Axes keeps the [0, 1] axis
    reliability_diagram(y, np.clip(p * 1.2, 0, 1), 10, ax=ax, label="other")
    assert twin.get_ylim() == (0.0, 1.0)
    bands = [c for c in ax.collections if c.get_gid() == "calnotes-consistency-band"]
    assert len(bands) == 2
    segments = bands[0].get_segments()
    b = consistency_bands(p, 10)
    filled = b.count > 0
    assert len(segments) == filled.sum()
    np.testing.assert_allclose([s[0] for s in segments],
                               np.column_stack([b.mean_prob, b.lower])[filled])
    np.testing.assert_allclose([s[1] for s in segments],
                               np.column_stack([b.mean_prob, b.upper])[filled])
    labels = [t.get_text() for t in ax.get_legend().get_texts()]
    assert "model: 90% consistency band" in labels


def test_reliability_diagram_without_bands_and_with_mass_bins():
    y, p = _calibrated(200, 2)
    fig, ax = plt.subplots()
    assert reliability_diagram(y, p, 8, binning="mass", ax=ax, bands=False) is ax
    assert not [c for c in ax.collections if c.get_gid() == "calnotes-consistency-band"]
    assert ax.get_legend() is None
    ax2 = reliability_diagram(y, p, 8, binning="mass", show_hist=False)
    assert len(ax2.collections) == 1 and len(ax2.figure.axes) == 1


def test_reliability_panels_show_and_explain_the_bands():
    y, p = _calibrated(300, 3)
    axes = reliability_panels(y, p, 10)
    assert len(axes) == 3
    fig = axes[0].figure
    for a in axes:
        assert any(c.get_gid() == "calnotes-consistency-band" for c in a.collections)
        assert a.get_legend() is None                   # no legend on the data
        assert _twin(a).get_ylim() == (0.0, 1.0)
    # one legend explains every panel: in the free fourth cell of the 2 x 2 grid
    legends = [a.get_legend() for a in fig.axes if a.get_legend() is not None] + fig.legends
    assert len(legends) == 1 and legends[0].axes not in axes
    texts = [t.get_text() for t in legends[0].get_texts()]
    assert sum("consistency band" in t for t in texts) == 1
    assert sum("equal-width bin" in t for t in texts) == 1
    y3, P3 = _multiclass(300, 3, 5)                     # k > 2: two panels, legend below them
    axes3 = reliability_panels(y3, P3, 10)
    assert len(axes3) == 2 and len(axes3[0].figure.legends) == 1


def test_corp_diagram():
    y, p = _calibrated(400, 4)
    p = np.round(p, 2)
    ax = corp_diagram(y, p, label="model")
    assert isinstance(ax, matplotlib.axes.Axes)
    res = corp(y, p)
    (curve,) = [line for line in ax.get_lines() if line.get_gid() == "calnotes-corp-curve"]
    np.testing.assert_array_equal(curve.get_xdata(), res.x)
    np.testing.assert_array_equal(curve.get_ydata(), res.fitted)
    assert curve.get_drawstyle() == "steps-post"
    text = ax.get_legend().get_texts()[0].get_text()
    d = res.brier
    assert text.splitlines()[0] == "model"
    assert f"MCB {d.mcb:.4f}  DSC {d.dsc:.4f}\nUNC {d.unc:.4f}" in text
    assert _twin(ax).get_ylim() == (0.0, 1.0)
    assert ax.get_xlim() == (0.0, 1.0) and ax.get_ylim() == (0.0, 1.0)
    fig, ax2 = plt.subplots()
    assert corp_diagram(y, p, ax=ax2, decomposition="log", show_hist=False) is ax2
    assert f"MCB {res.log.mcb:.4f}" in ax2.get_legend().get_texts()[0].get_text()
    assert len(fig.axes) == 1
    assert "MCB inf" in corp_diagram([1, 0], [0.0, 0.5], decomposition="log") \
        .get_legend().get_texts()[0].get_text()
    with pytest.raises(ValueError, match="^decomposition:"):
        corp_diagram(y, p, decomposition="brierr")


def _multiclass(n, k, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k), size=n)
    y = (rng.uniform(size=(n, 1)) > np.cumsum(P, axis=1)).sum(axis=1)
    return np.minimum(y, k - 1), P


def test_classwise_reliability_one_panel_per_class():
    y, P = _multiclass(500, 4, 0)
    axes = classwise_reliability(y, P, 10, classes=["a", "b", "c", "d"])
    assert len(axes) == 4 and all(isinstance(a, matplotlib.axes.Axes) for a in axes)
    for r, a in enumerate(axes):
        ece = binned_ece((y == r).astype(int), P[:, r], 10)
        assert a.get_title() == f"class {'abcd'[r]}: ECE {ece:.3f}"
        assert _twin(a).get_ylim() == (0.0, 1.0)
    assert axes[0].get_shared_x_axes().joined(axes[0], axes[3])
    assert axes[0].figure.get_suptitle() == ""


def test_classwise_reliability_shows_the_worst_classes_when_there_are_many():
    y, P = _multiclass(800, 20, 1)
    P[:, 7] = P[:, 7] ** 0.2                          # make class 7 badly calibrated
    P /= P.sum(axis=1, keepdims=True)
    axes = classwise_reliability(y, P, 10, binning="mass", max_panels=5)
    assert len(axes) == 5
    eces = [float(a.get_title().split("ECE ")[1]) for a in axes]
    assert eces == sorted(eces, reverse=True)
    assert axes[0].get_title().startswith("class 7:")
    assert "5 of 20 classes" in axes[0].figure.get_suptitle()
    fig, given = plt.subplots(1, 5)
    assert classwise_reliability(y, P, 10, ax=given, max_panels=5) == list(given)
    with pytest.raises(ValueError, match="^ax:"):
        classwise_reliability(y, P, 10, ax=given[:3], max_panels=5)
    with pytest.raises(ValueError, match="^classes:"):
        classwise_reliability(y, P, 10, classes=["a", "b"])
    with pytest.raises(ValueError, match="^max_panels:"):
        classwise_reliability(y, P, 10, max_panels=0)
    with pytest.raises(ValueError, match="^y_true:"):
        classwise_reliability(np.full(800, 20), P, 10)


def test_importing_calnotes_does_not_load_matplotlib():
    code = ("import sys, calnotes, calnotes.core.reliability, calnotes.core.plotting;"
            " assert 'matplotlib' not in sys.modules; assert 'sklearn' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True)
