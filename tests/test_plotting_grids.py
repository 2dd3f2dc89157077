"""Grids of panels for reading: axis labels once per row and column
(plotting.share_labels), the legend of a tall grid on top (plotting.legend_above).

Each check is shown to fail on the grid as drawn without the helper."""

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from calnotes.core.plotting import (calibration_sharpness_diagram, legend_above,  # noqa: E402
                                    legend_below, legend_in_axes, new_figure, share_labels)


@pytest.fixture(autouse=True)
def _close_figures():
    with matplotlib.rc_context():
        yield
    plt.close("all")


def _diagrams_grid(shared: bool):
    """Five calibration-sharpness panels in a 2 x 3 grid, the sixth cell holding the legend."""
    from calnotes.theory.sharpness import calibration_sharpness

    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.full(4, 0.7), size=600)
    y = (rng.uniform(size=(600, 1)) > np.cumsum(P, axis=1)).sum(axis=1).clip(0, 3)
    result = calibration_sharpness(y, P, "brier")
    fig, axes = new_figure(2, 3, height=5.6)
    for ax in axes.ravel()[:5]:
        calibration_sharpness_diagram(result, ax=ax, clip=True)
        ax.get_legend().remove()
    legend_in_axes(axes[1, 2], *axes[0, 0].get_legend_handles_labels())
    if shared:
        share_labels(axes)
    return fig, axes


def _labels(axes):
    left = [[a.get_ylabel() for a in row] for row in axes]
    bottom = [[a.get_xlabel() for a in row] for row in axes]
    right = [[t.get_ylabel() for t in a.figure.axes if getattr(t, "_calnotes_parent", None) is a]
             for row in axes for a in row]
    return left, bottom, right


def test_share_labels_keeps_one_label_per_row_and_column():
    fig, axes = _diagrams_grid(shared=True)
    left, bottom, right = _labels(axes)
    acc, conf = "accuracy given confidence", "confidence $h(x)$"
    assert left == [[acc, "", ""], [acc, "", ""]]
    # the bottom of each column: row 2 for the first two, row 1 above the legend cell
    assert bottom == [["", "", conf], [conf, conf, ""]]
    density = "density of confidences"
    assert right == [[""], [""], [density], [""], [density], []]   # the row's last panel
    assert all(a.get_visible() for a in axes.ravel())


def test_without_share_labels_every_panel_repeats_them_negative_control():
    fig, axes = _diagrams_grid(shared=False)
    left, bottom, right = _labels(axes)
    assert sum(label != "" for row in left for label in row[:3]) == 5
    assert sum(r == ["density of confidences"] for r in right) == 5


def test_share_labels_sets_given_labels_and_rejects_bad_grids():
    fig, axes = new_figure(2, 2)
    share_labels(axes, xlabel="n", ylabel="error")
    assert [a.get_ylabel() for a in axes[:, 0]] == ["error", "error"]
    assert [a.get_xlabel() for a in axes[1]] == ["n", "n"] and axes[0, 0].get_xlabel() == ""
    with pytest.raises(ValueError, match="^axes:"):
        share_labels(np.empty((1, 1, 1), dtype=object))


def _legend_box_and_panels(place):
    fig, axes = new_figure(4, 2, height=6.4, sharex=True)
    for a in axes.ravel():
        a.plot([1, 2], [1, 2], label="printed")
        a.plot([1, 2], [2, 1], "o", label="exact")
    legend = place(fig, ncols=2)
    fig.canvas.draw()
    box = legend.get_window_extent()
    tops = [a.get_window_extent().y1 for a in axes.ravel()]
    return box, tops, legend


def test_legend_above_sits_over_every_panel():
    box, tops, legend = _legend_box_and_panels(legend_above)
    assert box.y0 >= max(tops) - 1e-6
    assert [t.get_text() for t in legend.get_texts()] == ["printed", "exact"]


def test_legend_below_is_under_them_negative_control():
    box, tops, _ = _legend_box_and_panels(legend_below)
    assert box.y1 <= min(tops)
