"""The report's figures show only what the data support, with names that match the table.

Checked on the plotted data (matplotlib Line2D / PolyCollection / LineCollection), not only
that a figure is made:

* ``sharpness.png``: the calibration curve and band are drawn only over the observed top-label
  confidences (at least ``1/k``) where the kernel reaches at least ``MIN_KERNEL_SAMPLES`` = 10
  of them; the band is clipped to [0, 1] and the y-axis stays within [0, 1.02]; ``d_TOT`` is
  printed on its own scale and named as the table's "Brier (all classes)".
* ``reliability.png``: a bin with fewer than ``SPARSE_BIN_COUNT`` = 10 predictions gets a
  thin, light consistency band, not a 0-to-1 bar as wide as the others; the CORP panel names
  its score "top-label Brier" and explains MCB / DSC / UNC.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import calnotes as cn  # noqa: E402
from calnotes.core.plotting import (MIN_KERNEL_SAMPLES, SPARSE_BIN_COUNT, _kernel_samples,  # noqa: E402
                                    calibration_sharpness_diagram)
from calnotes.theory.sharpness import calibration_sharpness  # noqa: E402


def _softmax(Z):
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


@pytest.fixture(scope="module")
def five_class():
    """An overconfident 5-class model: no top-label confidence below 1/5 (none near it)."""
    rng = np.random.default_rng(1)
    Z = rng.normal(size=(2000, 5)) * 1.5
    y = (_softmax(Z).cumsum(axis=1) > rng.random((2000, 1))).argmax(axis=1)
    return _softmax(2.5 * Z), y


@pytest.fixture(scope="module")
def report(five_class):
    P, y = five_class
    return cn.evaluate(P, labels=y, n_bins=[15], utility=False, significance=False,
                       smooth_ece=False)


def _main_axes(fig):
    return next(ax for ax in fig.axes if any(
        line.get_gid() == "calnotes-calibration-curve" for line in ax.get_lines()))


def test_sharpness_curve_is_drawn_only_where_there_are_confidences(five_class, report):
    P, y = five_class
    k, conf = P.shape[1], P.max(axis=1)
    fig = report._sharpness_figure()
    ax = _main_axes(fig)
    (curve,) = [ln for ln in ax.get_lines() if ln.get_gid() == "calnotes-calibration-curve"]
    x, yv = curve.get_xdata(), curve.get_ydata()
    drawn = np.isfinite(yv)
    assert drawn.any() and not drawn.all()
    assert x[drawn].min() >= 1 / k                      # no curve point below 1/k
    assert x[drawn].min() >= conf.min() - 1e-12 and x[drawn].max() <= conf.max() + 1e-12
    result = calibration_sharpness(y, P, "brier")
    assert np.all(_kernel_samples(result)[drawn] >= MIN_KERNEL_SAMPLES)
    assert np.all((yv[drawn] >= 0) & (yv[drawn] <= 1))
    # the band: clipped to the unit square, and only where the curve is
    (band,) = [c for c in ax.collections if c.get_gid() == "calnotes-sharpness-band"]
    verts = np.concatenate([p.vertices for p in band.get_paths()])
    assert verts[:, 1].min() >= 0.0 and verts[:, 1].max() <= 1.0
    assert verts[:, 0].min() >= x[drawn].min() - 1e-12
    assert result.upper.max() > 1.0                     # unclipped, it would leave the square
    lo, hi = ax.get_ylim()
    assert lo == 0.0 and 1.0 <= hi <= 1.02 + 1e-12
    assert "clipped to [0, 1]" in band.get_label()


def test_sharpness_box_states_its_scale_and_names_d_tot_as_the_tables_brier(report):
    ax = _main_axes(report._sharpness_figure())
    text = " ".join(t.get_text() for t in ax.texts)
    assert f"{report.scores['brier']:.4f} = Brier (all classes)" in text
    assert "60.00" not in text and r"\times" not in text
    assert "Brier (all classes)" in report.format_table()


def test_sharpness_diagram_defaults_keep_the_papers_x100_and_say_so():
    rng = np.random.default_rng(0)
    h = rng.uniform(0.5, 1.0, size=2000)
    y = (rng.uniform(size=h.size) < h ** 2).astype(int)
    r = calibration_sharpness(y, h)
    ax = calibration_sharpness_diagram(r)
    text = " ".join(t.get_text() for t in ax.texts)
    assert r"$\times$100" in text and f"{100 * r.total:.2f}" in text
    (curve,) = [ln for ln in ax.get_lines() if ln.get_gid() == "calnotes-calibration-curve"]
    assert np.array_equal(curve.get_ydata(), r.curve)   # the whole grid, as App. D draws it
    with pytest.raises(ValueError, match="^scale:"):
        calibration_sharpness_diagram(r, scale=10)
    matplotlib.pyplot.close("all")


def _sparse_bin_model():
    """Confidences mostly above 0.45, plus 3 predictions near 0.3: one almost empty bin."""
    rng = np.random.default_rng(2)
    p = np.concatenate([rng.uniform(0.45, 1.0, size=1500), [0.30, 0.31, 0.32]])
    y = (rng.uniform(size=p.size) < p).astype(int)
    return y, p


def test_almost_empty_bin_gets_a_thin_light_band():
    y, p = _sparse_bin_model()
    P = np.column_stack([1 - p, p])
    rep = cn.evaluate(P, labels=y, n_bins=[15], utility=False, significance=False,
                      smooth_ece=False)
    fig = rep._figure()
    width_panel = next(ax for ax in fig.axes if ax.get_title() == "P(y = 1), 15 equal-width bins")
    (bands,) = [c for c in width_panel.collections if c.get_gid() == "calnotes-consistency-band"]
    segments = bands.get_segments()
    widths = np.broadcast_to(bands.get_linewidths(), (len(segments),))
    alphas = np.asarray(bands.get_colors())[:, 3]
    xs = np.array([s[0][0] for s in segments])
    heights = np.array([s[1][1] - s[0][1] for s in segments])
    sparse = (xs > 0.25) & (xs < 0.35)                   # the bin holding the 3 predictions
    assert sparse.sum() == 1
    assert widths[sparse][0] == 1.0 and alphas[sparse][0] == pytest.approx(0.2)
    assert np.all(widths[~sparse] == 6) and np.allclose(alphas[~sparse], 0.3)
    assert heights[sparse][0] > 0.5                      # the band it would otherwise draw
    legend = " ".join(t.get_text() for lg in fig.legends for t in lg.get_texts())
    assert f"thin: bins of fewer than {SPARSE_BIN_COUNT} predictions" in legend
    matplotlib.pyplot.close("all")


@pytest.mark.parametrize("k", [2, 4])
def test_corp_panel_names_the_top_label_brier_and_explains_its_terms(k):
    rng = np.random.default_rng(3)
    Z = rng.normal(size=(600, k))
    y = (_softmax(Z).cumsum(axis=1) > rng.random((600, 1))).argmax(axis=1)
    P = _softmax(1.8 * Z)
    rep = cn.evaluate(P, labels=y, n_bins=[10], utility=False, significance=False,
                      smooth_ece=False)
    fig = rep._figure()
    texts = [t.get_text() for ax in fig.axes if ax.get_legend() for t in
             ax.get_legend().get_texts()] + [t.get_text() for lg in fig.legends
                                             for t in lg.get_texts()]
    corp = next(t for t in texts if t.startswith("CORP"))
    conf, _, correct = cn.confidence_scores(y, P)
    top_brier = float(np.mean((conf - correct) ** 2))
    assert f"top-label Brier {top_brier:.4f}" in corp
    assert "Brier score" not in corp
    assert "= MCB" in corp and "\u2212 DSC" in corp and "+ UNC" in corp
    for word in ("MCB: miscalibration", "DSC: discrimination", "UNC: uncertainty"):
        assert word in corp
    assert f"Brier (all classes) {rep.scores['brier']:.4f}" in rep.format_table()
    matplotlib.pyplot.close("all")
