"""Plots of calibration (reliability diagrams, consistency bands, CORP) and the book's style.

Every drawing function takes ``ax=None`` (a new figure is made when it is ``None``) and returns
the matplotlib Axes it drew on, so figures compose: draw two predictors on one Axes, or one per
panel of ``plt.subplots``.  matplotlib is imported inside the functions, so importing
:mod:`calnotes` never loads it.

The numbers behind each plot come from the library (here :func:`calnotes.reliability_stats`,
:func:`calnotes.core.reliability.consistency_bands` and :func:`calnotes.core.reliability.corp`), with the
bin convention of :mod:`calnotes.core.binning`: a reliability diagram and the binned ECE computed
with the same ``n_bins`` and ``binning`` use the same bins.

The book's figure style is defined here, once: the colour-blind-safe palette of Okabe & Ito
(:data:`PALETTE`) with line styles (:data:`LINESTYLES`) and markers (:data:`MARKERS`) as a
second cue, figures at the width of the book's text column (:data:`COLUMN_WIDTH_IN`, shown at
about :data:`DISPLAY_WIDTH_PX` pixels) with 9-10 pt text, and legends off the data
(:func:`legend_below`, :func:`legend_in_axes`).  :func:`use_book_style` applies it; it also makes
every figure that IPython displays carry, in its PNG, the size of its smallest text in pixels
(:data:`PNG_MIN_FONT_KEY`, :func:`min_font_px`), which the book's browser check compares with
the size the figure is shown at.
"""

from __future__ import annotations

import numbers

import numpy as np

from .binning import _width_bins_unchecked
from .measures import reliability_stats
from .reliability import consistency_bands, corp

__all__ = ["reliability_diagram", "reliability_panels", "calibration_sharpness_diagram",
           "corp_diagram", "classwise_reliability", "use_book_style", "new_figure",
           "MIN_KERNEL_SAMPLES", "SPARSE_BIN_COUNT",
           "legend_below", "legend_above", "legend_in_axes", "share_labels", "label",
           "min_font_px", "displayed_font_px",
           "save_figure",
           "PALETTE", "LINESTYLES", "MARKERS", "COLUMN_WIDTH_IN", "DISPLAY_WIDTH_PX",
           "MIN_FONT_PX", "PNG_MIN_FONT_KEY"]

# ------------------------------------------------------------------------------ the book's style
#: Okabe & Ito's colour-blind-safe palette (blue, orange, bluish green, vermillion, reddish
#: purple, sky blue, black, yellow), in the order the figures use it.  Yellow comes last: it is
#: faint on white.
PALETTE = ("#0072B2", "#E69F00", "#009E73", "#D55E00", "#CC79A7", "#56B4E9", "#000000",
           "#F0E442")
#: Line styles cycled with :data:`PALETTE` (the second cue for readers who cannot tell the
#: colours apart, and for print in grey).
#: The plain ``"--"`` is kept for reference lines (the diagonal of perfect calibration).
LINESTYLES = ("-", (0, (6, 2)), "-.", ":", (0, (3, 1, 1, 1, 1, 1)), (0, (1, 1)),
              (0, (8, 2, 1, 2)), (0, (4, 1, 1, 1)))
#: Markers cycled with :data:`PALETTE` where points are drawn.
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
#: Colour of reference lines (the diagonal of perfect calibration, zero lines).
REFERENCE_GREY = "0.45"
#: Width of the book's text column in inches: figures are drawn at most this wide.
COLUMN_WIDTH_IN = 7.0
#: Width of the text column in CSS pixels (the book's theme at a 1280 px wide window).
DISPLAY_WIDTH_PX = 688
#: The smallest text size, in CSS pixels at the displayed size, that the book accepts.
MIN_FONT_PX = 9.0
#: Resolution of the book's figures (dots per inch): a 7 in figure is 1050 px wide, shown at
#: 688 px, so a 9 pt label is shown 12.3 px high.
BOOK_DPI = 150
#: PNG text key holding the smallest text size of a figure, in pixels of the saved image.
PNG_MIN_FONT_KEY = "calnotes:min_font_px"
_PAD_INCHES = 0.1       # matplotlib's savefig pad_inches, used with bbox_inches="tight"

_DIAGONAL_GID = "calnotes-diagonal"
_HIST_GID = "calnotes-histogram-axes"
_DENSITY_GID = "calnotes-density-axes"
_BAND_GID = "calnotes-sharpness-band"
_CURVE_GID = "calnotes-calibration-curve"
_CONSISTENCY_GID = "calnotes-consistency-band"
_CORP_GID = "calnotes-corp-curve"
_RELIABILITY_GID = "calnotes-reliability-curve"
#: Level of the consistency bands drawn by :func:`reliability_diagram`.
BAND_LEVEL = 0.9
_BAND_STYLE = {"alpha": 0.3, "linewidth": 6}
#: A bin with fewer predictions than this gets a thin, light consistency band in
#: :func:`reliability_diagram`: its band spans most of [0, 1] and would otherwise be the
#: most prominent mark of the panel (the same 10 rows a bin needs on average for the
#: report's bootstrap interval, ``calnotes._engine.rows.MIN_ROWS_PER_BIN``).
SPARSE_BIN_COUNT = 10
_SPARSE_BAND = {"alpha": 0.2, "linewidth": 1.0}


def _cue(i):
    """Colour, line style and marker number ``i`` of the book's cycle."""
    return PALETTE[i % len(PALETTE)], LINESTYLES[i % len(LINESTYLES)], MARKERS[i % len(MARKERS)]


def _book_rc():
    from cycler import cycler

    return {
        "figure.figsize": (COLUMN_WIDTH_IN, 3.2),
        "figure.dpi": BOOK_DPI,
        "figure.constrained_layout.use": True,
        "savefig.dpi": "figure",
        "font.size": 10,
        "axes.titlesize": 10,
        "axes.labelsize": 10,
        "xtick.labelsize": 9,
        "ytick.labelsize": 9,
        "legend.fontsize": 9,
        "legend.title_fontsize": 9,
        "figure.titlesize": 11,
        "legend.frameon": True,
        "legend.framealpha": 0.92,
        "legend.edgecolor": "0.8",
        "axes.prop_cycle": cycler(color=list(PALETTE)) + cycler(linestyle=list(LINESTYLES)),
        "image.cmap": "cividis",
        "lines.linewidth": 1.6,
    }


def _png_with_font_size(fig, base64=True):
    """The PNG of ``fig`` as IPython shows it, carrying :data:`PNG_MIN_FONT_KEY`."""
    from IPython.core.pylabtools import print_figure

    return print_figure(fig, "png", bbox_inches="tight", base64=base64,
                        metadata={PNG_MIN_FONT_KEY: f"{min_font_px(fig):.2f}"})


def use_book_style():
    """Apply the book's figure style, and label displayed figures with their smallest text.

    Sets matplotlib's ``rcParams``: :data:`PALETTE` cycled together with :data:`LINESTYLES`,
    figures :data:`COLUMN_WIDTH_IN` inches wide at :data:`BOOK_DPI` dpi with constrained
    layout, 10 pt labels and 9 pt ticks and legends, framed legends.  In IPython (a chapter's
    kernel), it also replaces the PNG formatter of matplotlib figures by one that writes
    :func:`min_font_px` into the PNG under the text key :data:`PNG_MIN_FONT_KEY`, so the
    browser check can tell how large the smallest text is shown.  Calling it again does no harm.

    Returns
    -------
    None

    Examples
    --------
    >>> import matplotlib
    >>> with matplotlib.rc_context():        # here only: leave the global style as it was
    ...     use_book_style()
    ...     print(matplotlib.rcParams["axes.prop_cycle"].by_key()["color"][:2])
    ['#0072B2', '#E69F00']
    """
    import matplotlib

    matplotlib.rcParams.update(_book_rc())
    _install_png_formatter()


def _install_png_formatter():
    """In IPython, display matplotlib figures as PNGs carrying :data:`PNG_MIN_FONT_KEY`.

    Does nothing outside IPython.  The inline backend registers its own PNG formatter when its
    module is first loaded, so the backend is loaded first and ours replaces it afterwards.
    """
    try:
        from IPython import get_ipython
    except ImportError:                                   # pragma: no cover - IPython optional
        return
    shell = get_ipython()
    if shell is None:
        return
    import matplotlib.pyplot as plt
    from matplotlib.figure import Figure

    plt._get_backend_mod()          # load the backend now: its formatter must not replace ours
    shell.display_formatter.formatters["image/png"].for_type(Figure, _png_with_font_size)


def new_figure(nrows: int = 1, ncols: int = 1, *, height=None, width=None, **subplots):
    """A figure for the book: column wide, one row of at most three panels per ``nrows``.

    Applies :func:`use_book_style`, then ``plt.subplots(nrows, ncols, figsize=(width,
    height), layout="constrained", **subplots)``.

    Parameters
    ----------
    nrows, ncols : int, default 1
        Grid of panels; ``ncols`` at most 3, so that each panel keeps legible text.
    height : float, optional
        Height in inches (default ``2.6 * nrows + 0.4``, or ``width / ncols * nrows`` when
        the panels are squares: pass ``height`` then).
    width : float, optional
        Width in inches, at most :data:`COLUMN_WIDTH_IN` (the default).
    **subplots
        Passed to ``plt.subplots`` (``sharex``, ``sharey``, ``squeeze``, ...).

    Returns
    -------
    (matplotlib.figure.Figure, Axes or array of Axes)

    Examples
    --------
    >>> import matplotlib, matplotlib.pyplot as plt
    >>> with matplotlib.rc_context():        # new_figure applies the book style
    ...     fig, axes = new_figure(1, 2)
    >>> fig.get_size_inches().tolist(), len(axes)
    ([7.0, 3.0], 2)
    >>> plt.close(fig)
    """
    for name, value in (("nrows", nrows), ("ncols", ncols)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
            raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    if ncols > 3:
        raise ValueError(f"ncols: at most 3 panels per row keep their text legible in the"
                         f" column, got {ncols}; use more rows")
    width = COLUMN_WIDTH_IN if width is None else float(width)
    if not 0 < width <= COLUMN_WIDTH_IN:
        raise ValueError(f"width: expected inches in (0, {COLUMN_WIDTH_IN}], got {width!r}")
    height = 2.6 * nrows + 0.4 if height is None else float(height)
    if not height > 0:
        raise ValueError(f"height: expected a positive number of inches, got {height!r}")
    use_book_style()
    import matplotlib.pyplot as plt

    return plt.subplots(nrows, ncols, figsize=(width, height), layout="constrained",
                        **subplots)


def label(name, names=None):
    """The reader's name of a code name in matplotlib's math (``"f2.l1_conf"``: f₂, ℓ₁-QECE).

    :func:`calnotes.book.tables.math_name` with ``$`` delimiters (matplotlib mathtext) instead of
    ``\\(`` and ``\\)`` (MathJax), for titles, axis labels and legend entries.

    Examples
    --------
    >>> print(label("f2.l1_conf"))
    $f_2$, $\\ell_1$-QECE, confidence
    """
    from ..book.tables import math_name

    shown = math_name(name, names)
    return shown.replace("\\(", "$").replace("\\)", "$") if isinstance(shown, str) else shown


def _unique_handles(axes):
    handles, labels = [], []
    for ax in axes:
        for handle, label in zip(*ax.get_legend_handles_labels()):
            if label not in labels:
                handles.append(handle)
                labels.append(label)
    return handles, labels


def legend_below(fig, axes=None, *, ncols=None, handles=None, labels=None, **kwargs):
    """One legend for the whole figure, below its panels (never on the data).

    Collects the labelled artists of ``axes`` (default: every Axes of ``fig``), one entry per
    distinct label, removes the Axes' own legends and draws ``fig.legend(...,
    loc="outside lower center")``; constrained layout makes room for it.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
        A figure with constrained layout (as made by :func:`new_figure`).
    axes : sequence of Axes, optional
        Where to collect the entries (default ``fig.axes``).
    ncols : int, optional
        Columns of the legend (default: up to 3 entries side by side).
    handles, labels : sequence, optional
        The entries, instead of collecting them.
    **kwargs
        Passed to ``fig.legend``.

    Returns
    -------
    matplotlib.legend.Legend

    Examples
    --------
    >>> import matplotlib, matplotlib.pyplot as plt
    >>> with matplotlib.rc_context():        # new_figure applies the book style
    ...     fig, axes = new_figure(1, 2)
    >>> for a in axes:
    ...     _ = a.plot([0, 1], [0, 1], label="diagonal")
    >>> legend = legend_below(fig)
    >>> [t.get_text() for t in legend.get_texts()]
    ['diagonal']
    >>> plt.close(fig)
    """
    return _figure_legend(fig, axes, "outside lower center", ncols, handles, labels, kwargs)


def legend_above(fig, axes=None, *, ncols=None, handles=None, labels=None, **kwargs):
    """One legend for the whole figure, above its panels: for tall grids, read before the data.

    As :func:`legend_below`, with ``fig.legend(..., loc="outside upper center")``: in a grid
    taller than a screen a legend at the bottom is read last, or not at all.

    Examples
    --------
    >>> import matplotlib, matplotlib.pyplot as plt
    >>> with matplotlib.rc_context():        # new_figure applies the book style
    ...     fig, axes = new_figure(2, 1)
    >>> for a in axes:
    ...     _ = a.plot([0, 1], [0, 1], label="diagonal")
    >>> legend = legend_above(fig)
    >>> fig.canvas.draw()
    >>> [t.get_text() for t in legend.get_texts()]
    ['diagonal']
    >>> bool(legend.get_window_extent().y0 >= axes[0].get_window_extent().y1)   # above them
    True
    >>> plt.close(fig)
    """
    return _figure_legend(fig, axes, "outside upper center", ncols, handles, labels, kwargs)


def _figure_legend(fig, axes, loc, ncols, handles, labels, kwargs):
    """:func:`legend_below` and :func:`legend_above`: one legend at ``loc`` for ``axes``."""
    axes = list(fig.axes if axes is None else np.ravel(axes))
    if handles is None:
        handles, labels = _unique_handles(axes)
    elif labels is None:
        labels = [h.get_label() for h in handles]
    for ax in axes:
        if ax.get_legend() is not None:
            ax.get_legend().remove()
    if ncols is None:
        ncols = min(3, max(1, len(handles)))
    return fig.legend(handles, labels, loc=loc, ncols=ncols, **kwargs)


def _twins(ax):
    """The Axes drawn over ``ax`` with their own y-axis (``ax.twinx()``: a density, a share)."""
    return [other for other in ax.figure.axes if other is not ax
            and other in ax.get_shared_x_axes().get_siblings(ax)
            and np.allclose(other.get_position().bounds, ax.get_position().bounds)]


def share_labels(axes, *, xlabel=None, ylabel=None, right_ylabel=None):
    """Axis labels once per grid of panels instead of on every panel.

    Keeps the y-label of the first visible panel of each row, the x-label of the last visible
    panel of each column and the right-hand label (of a twin y-axis, e.g. the density of a
    :func:`calibration_sharpness_diagram`) of the last visible panel of each row; the labels
    of the other panels are removed, which gives each panel back the width they took.  Labels
    given here replace the kept ones.

    Parameters
    ----------
    axes : 2-d array of Axes
        The grid (as returned by :func:`new_figure` with ``nrows, ncols > 1``; a 1-d array is
        one row).  Hidden panels (a free cell holding the legend) are skipped.
    xlabel, ylabel, right_ylabel : str, optional
        The shared labels; default: the kept panels' own.

    Returns
    -------
    None

    Examples
    --------
    >>> import matplotlib, matplotlib.pyplot as plt
    >>> with matplotlib.rc_context():        # new_figure applies the book style
    ...     fig, axes = new_figure(2, 2)
    >>> for a in axes.ravel():
    ...     _ = a.set(xlabel="confidence", ylabel="accuracy")
    >>> share_labels(axes)
    >>> [[a.get_ylabel() for a in row] for row in axes]
    [['accuracy', ''], ['accuracy', '']]
    >>> [[a.get_xlabel() for a in row] for row in axes]
    [['', ''], ['confidence', 'confidence']]
    >>> plt.close(fig)
    """
    grid = np.asarray(axes, dtype=object)
    if grid.ndim == 1:
        grid = grid[None, :]
    if grid.ndim != 2:
        raise ValueError(f"axes: expected a 1-d or 2-d array of Axes, got {grid.ndim} dimensions")
    visible = np.vectorize(lambda a: a.get_visible() and a.axison, otypes=[bool])(grid)
    for i, row in enumerate(grid):
        shown = [j for j in range(row.size) if visible[i, j]]
        for j in shown:
            ax = row[j]
            if j == shown[0]:
                if ylabel is not None:
                    ax.set_ylabel(ylabel)
            else:
                ax.set_ylabel("")
            for twin in _twins(ax):
                if j == shown[-1]:
                    if right_ylabel is not None:
                        twin.set_ylabel(right_ylabel)
                else:
                    twin.set_ylabel("")
    for j in range(grid.shape[1]):
        shown = [i for i in range(grid.shape[0]) if visible[i, j]]
        for i in shown:
            if i == shown[-1]:
                if xlabel is not None:
                    grid[i, j].set_xlabel(xlabel)
            else:
                grid[i, j].set_xlabel("")


def _legend_above(ax, ncols=1):
    """The legend of ``ax`` above its panel (constrained layout makes room for it)."""
    return ax.legend(loc="lower center", bbox_to_anchor=(0.5, 1.02), borderaxespad=0,
                     ncols=ncols, frameon=False, fontsize=9)


def legend_in_axes(ax, handles, labels=None, **kwargs):
    """A legend filling a spare panel ``ax`` (its axis switched off), e.g. the 6th of a 2x3 grid.

    Examples
    --------
    >>> import matplotlib, matplotlib.pyplot as plt
    >>> with matplotlib.rc_context():        # new_figure applies the book style
    ...     fig, axes = new_figure(1, 2)
    >>> (line,) = axes[0].plot([0, 1], label="a line")
    >>> legend_in_axes(axes[1], [line]).get_texts()[0].get_text()
    'a line'
    >>> plt.close(fig)
    """
    if labels is None:
        labels = [h.get_label() for h in handles]
    ax.set_axis_off()
    return ax.legend(handles, labels, loc="center", frameon=False, **kwargs)


def min_font_px(fig, *, dpi=None):
    """Size of the smallest visible text of ``fig``, in pixels of its saved image.

    ``min(fontsize) * dpi / 72`` over the drawn, non-empty Text artists (titles, axis labels,
    tick labels, legend entries, annotations).  The figure is drawn first, so tick labels exist.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    dpi : float, optional
        Resolution of the saved image (default ``fig.dpi``, which IPython's inline display uses).

    Returns
    -------
    float
        Pixels; ``inf`` for a figure without text.

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(4, 3), dpi=100)
    >>> ax = fig.subplots()
    >>> _ = ax.set_xlabel("x", fontsize=7.2)
    >>> round(min_font_px(fig), 2)
    10.0
    """
    dpi = fig.dpi if dpi is None else float(dpi)
    sizes = _AggView(fig).sizes
    return min(sizes) * dpi / 72 if sizes else float("inf")


class _AggView:
    """Draw ``fig`` with an Agg renderer and record the size of every text actually drawn."""

    def __init__(self, fig):
        from matplotlib.backends.backend_agg import FigureCanvasAgg

        old = fig.canvas
        canvas = old if isinstance(old, FigureCanvasAgg) else FigureCanvasAgg(fig)
        renderer = canvas.get_renderer()
        sizes = []
        draw_text = renderer.draw_text

        def recording(gc, x, y, s, prop, angle, ismath=False, mtext=None):
            if str(s).strip():
                sizes.append(prop.get_size_in_points())
            return draw_text(gc, x, y, s, prop, angle, ismath=ismath, mtext=mtext)

        renderer.draw_text = recording
        try:
            fig.draw(renderer)
            self.tight_inches = fig.get_tightbbox(renderer)
        finally:
            del renderer.draw_text
            if canvas is not old:
                fig.set_canvas(old)
        self.sizes = sizes


def displayed_font_px(fig, display_width_px: float = DISPLAY_WIDTH_PX):
    """Size of the smallest text of ``fig`` in CSS pixels when it is shown in the book's column.

    The inline display saves ``fig`` at ``fig.dpi`` with ``bbox_inches="tight"``; a browser
    shows that image at its natural width, or shrunk to ``display_width_px`` when wider.  So
    the smallest text is shown ``min_font_px(fig) * min(1, display_width_px / natural_width)``
    pixels high.

    Parameters
    ----------
    fig : matplotlib.figure.Figure
    display_width_px : float, default :data:`DISPLAY_WIDTH_PX`
        Width of the text column in CSS pixels.

    Returns
    -------
    float

    Examples
    --------
    >>> from matplotlib.figure import Figure
    >>> fig = Figure(figsize=(14, 4), dpi=100)     # twice the column: the text is shrunk
    >>> _ = fig.subplots().set_title("title", fontsize=10)
    >>> round(min_font_px(fig), 1), bool(displayed_font_px(fig) < MIN_FONT_PX)
    (13.9, True)
    """
    view = _AggView(fig)
    if not view.sizes:
        return float("inf")
    natural = (view.tight_inches.width + 2 * _PAD_INCHES) * fig.dpi
    return min(view.sizes) * fig.dpi / 72 * min(1.0, display_width_px / natural)


def save_figure(fig, path, *, dpi=None):
    """``fig.savefig(path, bbox_inches="tight")`` with :data:`PNG_MIN_FONT_KEY` in the PNG.

    ``fig`` is a matplotlib Figure; any other object is only asked to ``savefig(path, dpi=dpi)``
    (there is no text to measure).

    Examples
    --------
    >>> import tempfile, pathlib
    >>> from matplotlib.figure import Figure
    >>> from PIL import Image
    >>> fig = Figure(figsize=(3, 2), dpi=100)
    >>> _ = fig.subplots().set_xlabel("x", fontsize=9)
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "f.png"
    >>> save_figure(fig, path)
    >>> Image.open(path).text[PNG_MIN_FONT_KEY]
    '12.50'
    """
    from matplotlib.figure import Figure

    if not isinstance(fig, Figure):         # a stand-in with its own savefig: no text to measure
        fig.savefig(path, dpi=dpi)
        return
    dpi = fig.dpi if dpi is None else float(dpi)
    fig.savefig(path, dpi=dpi, bbox_inches="tight",
                metadata={PNG_MIN_FONT_KEY: f"{min_font_px(fig, dpi=dpi):.2f}"})



def _share_bars(twin, edges, share, i: int, color, style) -> None:
    """The histogram of where the predictions fall (shares of the rows per bin) on the twin
    axes: filled for the first predictor drawn on a panel, outlines for the next ones (a second
    filled histogram would hide the first); a fixed [0, 1] axis, so heights are true shares."""
    if i == 0:
        twin.bar(edges[:-1], share, width=np.diff(edges), align="edge", color=color,
                 alpha=0.2, linewidth=0)
    else:
        twin.bar(edges[:-1], share, width=np.diff(edges), align="edge", fill=False,
                 edgecolor=color, linewidth=1, linestyle=style)
    twin.set_ylim(0, 1)

def _histogram_axes(ax):
    """The twin Axes holding the prediction histograms of ``ax`` (created on first use)."""
    for other in ax.figure.axes:
        if other.get_gid() == _HIST_GID and getattr(other, "_calnotes_parent", None) is ax:
            return other
    twin = ax.twinx()
    twin.set_gid(_HIST_GID)
    twin.set_box_aspect(1)
    twin._calnotes_parent = ax
    twin.set_ylim(0, 1)                 # shares are fractions: the axis is [0, 1]
    twin.set_ylabel("share of predictions", color="0.45")
    twin.tick_params(axis="y", colors="0.45")
    twin.spines["right"].set_color("0.6")
    # The curve stays on top of the bars: draw ax above its twin, with a transparent face.
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)
    return twin


def reliability_diagram(y_true, y_prob, n_bins: int = 15, *, binning: str = "width",
                        ax=None, label=None, show_hist: bool = True, bands: bool = True,
                        sparse_below: int = SPARSE_BIN_COUNT):
    """Reliability diagram of a binary predictor: mean outcome against mean prediction per bin.

    Each non-empty bin is a point at (mean prediction, mean outcome) -- the two averages
    whose weighted gaps make up the binned ECE -- joined by a line; the dashed diagonal is
    perfect calibration.  Behind each point, a shaded vertical bar is its 90% consistency band
    (Broecker & Smith 2007, :func:`calnotes.core.reliability.consistency_bands`): where the bin's
    mean outcome falls with probability at least 0.9 if the predictor is calibrated, given
    the bin's predictions.  A histogram of the predictions (the share of samples in each of
    ``n_bins`` equal-width bins) is drawn on a twin axis whose scale is the fraction, from 0
    to 1, so that sparsely populated bins are easy to spot.

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Outcomes in ``{0, 1}``.
    y_prob : array_like, shape (n,)
        Predicted ``P(y = 1)``.  For a ``k``-class model plot the confidence problem,
        ``conf, _, correct = calnotes.confidence_scores(y, P)``, or one class ``P[:, r]``
        against ``y == r``.
    n_bins : int, default 15
        Number of bins ``m`` (``1 <= m <= n``).
    binning : {"width", "mass"}, default "width"
        Equal-width or equal-mass (eq. (1)) bins for the points; see :mod:`calnotes.core.binning`.
        The histogram always uses equal-width bins.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure and Axes when omitted.  Calling the function again with
        the same ``ax`` overlays a second predictor (its histogram shares the twin axis).
    label : str, optional
        Legend label of the curve; when given, a legend is drawn.
    show_hist : bool, default True
        Draw the histogram of predictions (right axis: share of predictions, from 0 to 1).
    bands : bool, default True
        Draw the 90% consistency band of each non-empty bin, in the curve's colour (with a
        legend entry when ``label`` is given).
    sparse_below : int, default :data:`SPARSE_BIN_COUNT` (10)
        A bin with fewer predictions gets a thin, light band (line width 1, alpha 0.2): with
        a handful of outcomes its band covers most of ``[0, 1]``; 0 draws every band alike.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes with the curve (the histogram lives on a twin of it).

    Notes
    -----
    The points are ``reliability_stats(y_true, y_prob, n_bins, binning=binning)``; the
    distance of a point from the diagonal, weighted by its bin's share of the samples, is
    that bin's term of :func:`calnotes.binned_ece`.  The bands are
    ``consistency_bands(y_prob, n_bins, binning=binning, level=0.9)``, on the same bins; they
    are per-bin bands, so a calibrated model may still have up to about one point in ten
    outside its band.  Used in the chapters *Introduction* (``book/intro.md``), *The measures*
    (``book/foundations/measures.md``) and *Evaluate your own model*
    (``book/practice/evaluate.md``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p).astype(int)
    >>> fig, ax = plt.subplots()
    >>> out = reliability_diagram(y, p, 10, ax=ax, label="calibrated")
    >>> out is ax, type(out).__name__
    (True, 'Axes')
    >>> [c.get_label() for c in ax.collections]
    ['calibrated: 90% consistency band']
    >>> plt.close(fig)
    """
    stats = reliability_stats(y_true, y_prob, n_bins, binning=binning)
    p = np.asarray(y_prob, dtype=np.float64)

    import matplotlib.pyplot as plt  # lazily: importing calnotes must not load matplotlib
    _install_png_formatter()      # shown in IPython: the PNG says its smallest text size

    made_here = ax is None
    if made_here:
        _, ax = plt.subplots(figsize=(4.6, 4.6), layout="constrained")

    if not any(line.get_gid() == _DIAGONAL_GID for line in ax.get_lines()):
        ax.plot([0, 1], [0, 1], linestyle="--", color=REFERENCE_GREY, linewidth=1,
                gid=_DIAGONAL_GID, label="_perfect calibration")

    # the i-th predictor on these Axes: colour, line style and marker i of the book's cycle
    i = sum(line.get_gid() == _RELIABILITY_GID for line in ax.get_lines())
    color, style, marker = _cue(i)
    keep = stats["count"] > 0
    (line,) = ax.plot(stats["mean_prob"][keep], stats["mean_outcome"][keep], marker=marker,
                      markersize=4.5, linewidth=1.5, color=color, linestyle=style,
                      gid=_RELIABILITY_GID,
                      label=label if label is not None else "_nolegend_")
    if bands:
        band = consistency_bands(p, n_bins, binning=binning, level=BAND_LEVEL)
        filled = band.count > 0
        # the first predictor's bands are wide translucent bars, later ones narrow opaque
        # lines: where two bands meet they stay apart instead of mixing into a third colour
        style_kw = _BAND_STYLE if i == 0 else {"alpha": 0.75, "linewidth": 2}
        from matplotlib.colors import to_rgba

        sparse = band.count[filled] < sparse_below
        ax.vlines(band.mean_prob[filled], band.lower[filled], band.upper[filled],
                  colors=[to_rgba(color, _SPARSE_BAND["alpha"] if s else style_kw["alpha"])
                          for s in sparse],
                  linewidths=[_SPARSE_BAND["linewidth"] if s else style_kw["linewidth"]
                              for s in sparse],
                  capstyle="butt", zorder=line.get_zorder() - 0.5, gid=_CONSISTENCY_GID,
                  label=(f"{label}: {100 * BAND_LEVEL:.0f}% consistency band"
                         if label is not None else "_nolegend_"))

    if show_hist:
        twin = _histogram_axes(ax)
        width = stats if binning == "width" else reliability_stats(y_true, y_prob, n_bins,
                                                                  binning="width")
        share = width["count"] / p.shape[0]
        _share_bars(twin, np.arange(n_bins + 1) / n_bins, share, i, color, style)

    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_box_aspect(1)  # square panel; set_aspect("equal") is refused on twinned Axes
    ax.set_xlabel("mean prediction in bin")
    ax.set_ylabel("mean outcome in bin")
    if label is not None:
        if made_here:                   # nothing above the panel: the legend goes there
            _legend_above(ax)
        else:
            ax.legend(loc="best", frameon=True, framealpha=0.92, fontsize=9)
    return ax


def reliability_panels(y_true, y_prob, n_bins: int = 15, *, ax=None, title=None,
                       sparse_below: int = SPARSE_BIN_COUNT):
    """The reliability diagrams of a ``k``-class model, as in :func:`calnotes.evaluate`'s report.

    Panels: the confidence (top-label) problem with equal-width bins, the same with equal-mass
    bins, and, for a binary model (``k = 2``), the usual diagram of ``P(y = 1)`` against ``y``
    with equal-width bins.  One legend explains every panel (in the free fourth cell of a
    binary model's 2 x 2 grid, else below the panels): the points are (mean prediction, mean
    outcome) per bin, the shaded vertical bars are their 90% consistency bands (where the
    points of a calibrated model fall with probability at least 0.9,
    :func:`calnotes.core.reliability.consistency_bands`), the dashed line is perfect calibration,
    and the bars on the right axis (from 0 to 1) are the share of predictions in each of
    ``n_bins`` **equal-width** bins, in every panel (the equal-mass panel too: its bins would
    all hold the same share).

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Labels in ``0..k-1``.
    y_prob : array_like, shape (n, k) or (n,)
        Class probabilities (rows summing to one), or binary ``P(y = 1)``.
    n_bins : int, default 15
        Bins ``m`` of every panel; the equal-mass panel needs ``m <= n``.
    ax : sequence of matplotlib.axes.Axes, optional
        One Axes per panel (2, or 3 for a binary model); a new figure when omitted.
    title : str, optional
        Figure title (``suptitle``), only when the figure is made here.
    sparse_below : int, default :data:`SPARSE_BIN_COUNT` (10)
        Bins with fewer predictions get a thin, light band (:func:`reliability_diagram`);
        the legend says so when a panel has one.

    Returns
    -------
    list of matplotlib.axes.Axes
        The panels, in the order above.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=400)
    >>> y = (rng.uniform(size=400) < p).astype(int)
    >>> axes = reliability_panels(y, p, n_bins=10)
    >>> [a.get_title() for a in axes]
    ['confidence, 10 equal-width bins', 'confidence, 10 equal-mass bins', 'P(y = 1), 10 equal-width bins']
    >>> plt.close(axes[0].figure)
    """
    from .measures import confidence_scores
    from .scores import as_matrix

    P = as_matrix(y_prob)
    conf, _, correct = confidence_scores(y_true, P)
    panels = [(correct, conf, "width", "confidence"), (correct, conf, "mass", "confidence")]
    if P.shape[1] == 2:
        y = (np.asarray(y_true) == 1).astype(np.int64)    # labels validated just above
        panels.append((y, P[:, 1], "width", "P(y = 1)"))
    spare = None
    if ax is None:
        import matplotlib.pyplot as plt

        # two panels per row at the column width; a binary model's fourth cell holds the legend
        if len(panels) == 3:
            fig, grid = plt.subplots(2, 2, figsize=(COLUMN_WIDTH_IN, 6.6), layout="constrained")
            ax, spare = grid.ravel()[:3], grid.ravel()[3]
        else:
            fig, ax = plt.subplots(1, 2, figsize=(COLUMN_WIDTH_IN, 3.9), layout="constrained")
        if title:
            fig.suptitle(title, fontsize=11)
    axes = list(np.ravel(ax))
    if len(axes) != len(panels):
        raise ValueError(f"ax: expected {len(panels)} Axes (one per panel), got {len(axes)}")
    from matplotlib.lines import Line2D
    from matplotlib.patches import Patch

    thin = False
    for a, (outcome, prob, binning, what) in zip(axes, panels):
        reliability_diagram(outcome, prob, n_bins, binning=binning, ax=a,
                            sparse_below=sparse_below)
        a.set_title(f"{what}, {n_bins} equal-{binning} bins", fontsize=10)
        thin |= any(float(w) < _BAND_STYLE["linewidth"] for c in a.collections
                    if c.get_gid() == _CONSISTENCY_GID for w in c.get_linewidths())
    color = PALETTE[0]
    band_text = f"{100 * BAND_LEVEL:.0f}% consistency band (if calibrated)"
    if thin:
        band_text += f";\nthin: bins of fewer than {sparse_below} predictions"
    handles = [Line2D([], [], color=color, marker=MARKERS[0], markersize=4.5,
                      label="mean outcome per bin"),
               Line2D([], [], color=color, solid_capstyle="butt", **_BAND_STYLE,
                      label=band_text),
               Line2D([], [], color=REFERENCE_GREY, linestyle="--", label="perfect calibration"),
               Patch(color=color, alpha=0.2,
                     label="share of predictions per equal-width bin (right axis)")]
    # one legend for all the panels, off the data: in the spare cell, or below the panels
    if spare is not None:
        legend_in_axes(spare, handles, fontsize=9)
    else:
        legend_below(axes[0].figure, axes, handles=handles, ncols=2, fontsize=9)
    return axes


#: The fewest confidences that the kernel must reach at a point for
#: :func:`calibration_sharpness_diagram` (with ``min_samples``) to draw the curve there.
MIN_KERNEL_SAMPLES = 10


def _kernel_samples(result) -> np.ndarray:
    """About how many confidences the kernel smooths over at each grid point: ``n p_hat(t)``
    times the Gaussian kernel's effective width ``2 sqrt(pi) sigma`` (the effective sample size
    ``(sum K)^2 / sum K^2`` of the Nadaraya-Watson estimate for locally uniform data; the
    Epanechnikov kernel's is ``(5/3) sigma``)."""
    width = (2 * np.sqrt(np.pi) if result.kernel == "gaussian" else 5.0 / 3.0) * result.bandwidth
    return result.n_samples * np.asarray(result.density) * width


def calibration_sharpness_diagram(result, ax=None, title=None, *, support=None,
                                  min_samples=None, clip=False, scale=100):
    """Calibration-sharpness diagram (004 Sec. 4.2, Figs 1-2, App. D).

    Draws, from a ``calnotes.theory.sharpness.CalibrationSharpness``:

    * the dashed diagonal (perfect confidence calibration);
    * the calibration curve ``E[1{Y = c(X)} | h(X) = p]``;
    * the shaded sharpness band ``curve -/+ p_hat(p) rho(p) / 2`` (total length
      ``p_hat rho``, centred on the curve), its bottom clipped at 0 and its top **not**
      clipped at 1, as App. D does "for stylistic reasons";
    * the kernel density ``p_hat`` of the confidences, filled in grey on a twin axis (right),
      scaled to fill the bottom quarter of the panel;
    * the confidence calibration error ``d_CAL`` (with its subsampling SD when there is one)
      and the total divergence ``d_TOT``, both x100 as in the paper (the box says so), or on
      their own scale with ``scale=1``; for the Brier pair ``d_TOT`` is the mean multi-class
      Brier score, ``sum_r (p_r - 1[y = r])^2``, and the box says that too.

    By default, as in App. D, the curve and band are drawn over the whole grid; a report on
    one model's data can restrict them (``support``, ``min_samples``) to where there are
    confidences to smooth, and keep the panel on the unit square (``clip``).

    Parameters
    ----------
    result : calnotes.theory.sharpness.CalibrationSharpness
        From ``calnotes.theory.sharpness.calibration_sharpness``.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure and Axes when omitted.
    title : str, optional
        Axes title.
    support : (float, float), optional
        The range of the observed confidences (for a ``k``-class model the top-label
        confidence is at least ``1/k``): curve and band are not drawn outside it, where the
        kernel estimates only extrapolate.
    min_samples : float, optional
        Draw curve and band only where the kernel reaches at least this many confidences,
        ``n p_hat(t) 2 sqrt(pi) sigma`` (Gaussian kernel; :data:`MIN_KERNEL_SAMPLES` is the
        report's choice, 10): elsewhere the curve is the average of a handful of outcomes.
    clip : bool, default False
        Clip the band to ``[0, 1]`` and the y-axis to ``[0, 1.02]`` (accuracy is a
        probability); by default the band's top is not clipped, as in App. D.
    scale : {100, 1}, default 100
        ``d_CAL`` and ``d_TOT`` x100 as in the paper, or as they are.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes with the curve and band (the density lives on a twin of it).  The y-axis
        runs from 0 to the top of the band (at least 1; 1.02 with ``clip``): not aligned
        across panels, as in 004's Fig 1; align with ``ax.set_ylim`` when comparing models
        (Fig 2).  Where the curve is not drawn, the plotted values are NaN (the grid stays).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from calnotes.theory.sharpness import calibration_sharpness
    >>> rng = np.random.default_rng(0)
    >>> h = rng.uniform(0.5, 1.0, size=2000)
    >>> y = (rng.uniform(size=h.size) < h ** 2).astype(int)
    >>> ax = calibration_sharpness_diagram(calibration_sharpness(y, h), title="h^2")
    >>> ax.get_title(), len(ax.collections)
    ('h^2', 1)
    >>> plt.close(ax.figure)
    """
    from ..theory.sharpness import CalibrationSharpness

    if not isinstance(result, CalibrationSharpness):
        raise TypeError("result: expected a calnotes.theory.sharpness.CalibrationSharpness (from"
                        f" calibration_sharpness), got {type(result).__name__}")

    import matplotlib.pyplot as plt  # lazily: importing calnotes must not load matplotlib
    _install_png_formatter()      # shown in IPython: the PNG says its smallest text size

    made_here = ax is None
    if made_here:
        _, ax = plt.subplots(figsize=(4.8, 4.6), layout="constrained")

    if scale not in (1, 100):
        raise ValueError(f"scale: expected 100 (x100, as in 004) or 1, got {scale!r}")
    t = result.grid
    drawn = np.ones(t.shape, dtype=bool)
    if support is not None:
        lo, hi = (float(v) for v in support)
        drawn &= (t >= lo - 1e-12) & (t <= hi + 1e-12)
    if min_samples is not None:
        drawn &= _kernel_samples(result) >= float(min_samples)
    curve = np.where(drawn, result.curve, np.nan)
    lower = np.where(drawn, np.maximum(result.lower, 0.0), np.nan)
    upper = np.where(drawn, result.upper, np.nan)
    if clip:
        upper = np.minimum(upper, 1.0)
        curve = np.clip(curve, 0.0, 1.0)
    ax.plot([0, 1], [0, 1], linestyle="--", color=REFERENCE_GREY, linewidth=1,
            gid=_DIAGONAL_GID, label="perfect calibration")
    # Okabe-Ito vermillion band (translucent) around a blue curve: apart for colour-blind eyes
    ax.fill_between(t, lower, upper, where=np.isfinite(upper) & np.isfinite(lower),
                    color=PALETTE[3], alpha=0.25, linewidth=0, gid=_BAND_GID,
                    label=r"sharpness gap $\hat p\,\rho$"
                          + (" (clipped to [0, 1])" if clip else ""))
    ax.plot(t, curve, color=PALETTE[0], linewidth=1.8, gid=_CURVE_GID,
            label="calibration curve")

    twin = ax.twinx()
    twin.set_gid(_DENSITY_GID)
    twin._calnotes_parent = ax
    twin.fill_between(t, 0.0, result.density, color="0.5", alpha=0.25, linewidth=0)
    twin.plot(t, result.density, color="0.45", linewidth=1)
    top = float(np.nanmax(result.density)) if np.any(np.isfinite(result.density)) else 0.0
    twin.set_ylim(0, 4 * top if top > 0 else 1)     # the density fills the bottom quarter
    twin.set_ylabel("density of confidences", color="0.45")
    twin.tick_params(axis="y", colors="0.45")
    twin.spines["right"].set_color("0.6")
    ax.set_zorder(twin.get_zorder() + 1)
    ax.patch.set_visible(False)

    sd = result.calibration_sd
    digits = 2 if scale == 100 else 4
    cal = f"{scale * result.calibration:.{digits}f}"
    if np.isfinite(sd):
        cal += rf" $\pm$ {scale * sd:.{digits}f}"
    times = r" $\times$100" if scale == 100 else ""
    brier = " = Brier (all classes)" if result.pair == "brier" and scale == 1 else ""
    ax.text(0.03, 0.97, rf"$d_{{\phi,\mathrm{{CAL}}}}${times} = {cal}" "\n"
            rf"$d_{{\phi,\mathrm{{TOT}}}}${times} = {scale * result.total:.{digits}f}{brier}",
            transform=ax.transAxes, va="top", ha="left", fontsize=9,
            bbox={"boxstyle": "round,pad=0.3", "facecolor": "white", "edgecolor": "0.8",
                  "alpha": 0.92})

    finite = upper[np.isfinite(upper)]
    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1.02 if clip else
                max(1.0, float(finite.max()) if finite.size else 1.0) * 1.02)
    ax.set_xlabel("confidence $h(x)$")
    ax.set_ylabel("accuracy given confidence")
    if made_here:
        legend_below(ax.figure, [ax], ncols=2, fontsize=9)
    else:
        ax.legend(loc="best", frameon=True, framealpha=0.92, fontsize=9)
    if title is not None:
        ax.set_title(title, fontsize=10)
    return ax


_DECOMPOSITION_NAMES = {"brier": "Brier score", "log": "log score"}


def corp_diagram(y_true, y_prob, *, ax=None, label=None, show_hist: bool = True,
                 decomposition: str | None = "brier", score_name: str | None = None,
                 explain: bool = False):
    """CORP reliability diagram (Dimitriadis, Gneiting & Jordan 2021): the PAV-recalibrated curve.

    The curve is :func:`calnotes.core.reliability.corp`'s isotonic regression of the outcomes on
    the predictions, drawn as a step function through the distinct predictions (at a
    prediction ``x_j`` and up to the next one, the recalibrated value of ``x_j``) on the unit
    square with the dashed diagonal of perfect calibration.  No bins are chosen: PAV pools the
    predictions into the blocks of the step function, and tied predictions always share a
    value.  The legend gives the score decomposition ``S = MCB - DSC + UNC``
    (miscalibration, discrimination, uncertainty).

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Outcomes in ``{0, 1}``.
    y_prob : array_like, shape (n,)
        Predicted ``P(y = 1)``; for ``k`` classes the confidence problem
        (:func:`calnotes.confidence_scores`) or one class column.
    ax : matplotlib.axes.Axes, optional
        Where to draw; a new figure and Axes when omitted.  Call again with the same ``ax`` to
        overlay another predictor.
    label : str, optional
        Name of the predictor in the legend (default ``"CORP"``).
    show_hist : bool, default True
        Histogram of the predictions (20 equal-width bins) on a twin axis, share of
        predictions from 0 to 1.
    decomposition : {"brier", "log"} or None, default "brier"
        Score whose decomposition is written in the legend; ``None`` for the name only.
    score_name : str, optional
        The score's name in the legend (default "Brier score" or "log score"); e.g.
        "top-label Brier" when ``y_prob`` is a multi-class model's confidence, whose binary
        Brier score is not the multi-class one.
    explain : bool, default False
        Write the decomposition as ``score = MCB - DSC + UNC`` and say what the three terms
        are (miscalibration, discrimination, uncertainty), for a reader who meets them here.

    Returns
    -------
    matplotlib.axes.Axes
        The Axes with the curve (the histogram lives on a twin of it).

    Notes
    -----
    With the log score, a prediction of exactly 0 for a positive (or 1 for a negative) makes
    the score and MCB infinite; the legend then reads ``inf``.  Used in chapter *Evaluate your
    own model* (``book/practice/evaluate.md``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=500)
    >>> y = (rng.uniform(size=500) < p ** 2).astype(int)
    >>> ax = corp_diagram(y, p, label="model")
    >>> type(ax).__name__, ax.get_legend().get_texts()[0].get_text().splitlines()[0]
    ('Axes', 'model')
    >>> plt.close(ax.figure)
    """
    if decomposition is not None and decomposition not in _DECOMPOSITION_NAMES:
        raise ValueError("decomposition: expected 'brier', 'log' or None, got"
                         f" {decomposition!r}")
    result = corp(y_true, y_prob)

    import matplotlib.pyplot as plt  # lazily: importing calnotes must not load matplotlib
    _install_png_formatter()      # shown in IPython: the PNG says its smallest text size

    made_here = ax is None
    if made_here:
        _, ax = plt.subplots(figsize=(4.6, 5.0), layout="constrained")
    if not any(line.get_gid() == _DIAGONAL_GID for line in ax.get_lines()):
        ax.plot([0, 1], [0, 1], linestyle="--", color=REFERENCE_GREY, linewidth=1,
                gid=_DIAGONAL_GID, label="_perfect calibration")
    i = sum(line.get_gid() == _CORP_GID for line in ax.get_lines())
    color, style, _ = _cue(i)

    text = label if label is not None else "CORP"
    if decomposition is not None:
        d = result.decomposition(decomposition)
        name = score_name if score_name is not None else _DECOMPOSITION_NAMES[decomposition]
        if explain:                                  # narrow lines: fits a panel
            text += (f"\n{name} {d.score:.4f}\n= MCB {d.mcb:.4f} \u2212 DSC {d.dsc:.4f}"
                     f"\n+ UNC {d.unc:.4f}\nMCB: miscalibration,\nDSC: discrimination,"
                     "\nUNC: uncertainty")
        else:
            text += (f"\n{name} {d.score:.4f}"
                     f"\nMCB {d.mcb:.4f}  DSC {d.dsc:.4f}\nUNC {d.unc:.4f}")
    (line,) = ax.step(result.x, result.fitted, where="post", linewidth=1.6, gid=_CORP_GID,
                      color=color, linestyle=style, label=text)

    if show_hist:
        twin = _histogram_axes(ax)
        share = np.bincount(_width_bins_unchecked(result.x, 20), weights=result.weight,
                            minlength=20) / result.weight.sum()
        _share_bars(twin, np.arange(21) / 20, share, i, color, style)

    ax.set_xlim(0, 1)
    ax.set_ylim(0, 1)
    ax.set_box_aspect(1)
    ax.set_xlabel("prediction")
    ax.set_ylabel("PAV-recalibrated probability")
    if made_here:
        _legend_above(ax)
    else:
        ax.legend(loc="best", frameon=True, framealpha=0.92, fontsize=9)
    return ax


def classwise_reliability(y_true, y_prob, n_bins: int = 15, *, binning: str = "width",
                          classes=None, ax=None, max_panels: int = 12):
    """Class-wise reliability diagrams: one panel per class, ``p_r`` against ``1[y = r]``.

    Small multiples of :func:`reliability_diagram` (points, 90% consistency bands, histogram
    of the class's predictions), one per class of a ``k``-class model, on a grid of panels
    with shared axes.  Each panel is titled with its class and that class's binned ECE,
    ``binned_ece(y == r, P[:, r], n_bins, binning=binning)``, whose mean over the classes is
    the class-wise ECE (:func:`calnotes.classwise`).  With more than ``max_panels`` classes,
    only the ``max_panels`` classes with the largest class-wise ECE are drawn, in decreasing
    order of it, and the figure title says so.

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Labels in ``0..k-1``.
    y_prob : array_like, shape (n, k)
        Class probabilities (rows summing to one); a binary ``(n,)`` vector is read as
        ``[1 - p, p]``.
    n_bins : int, default 15
        Bins of every panel and of the ECE in its title.
    binning : {"width", "mass"}, default "width"
        Equal-width or equal-mass bins (:mod:`calnotes.core.binning`).
    classes : sequence of str, optional
        Names of the ``k`` classes, for the titles (default: the class indices).
    ax : sequence of matplotlib.axes.Axes, optional
        One Axes per panel drawn (``min(k, max_panels)``); a new figure when omitted.
    max_panels : int, default 12
        Most panels drawn.

    Returns
    -------
    list of matplotlib.axes.Axes
        The panels drawn, in order (class order, or decreasing ECE when classes were left out).

    Notes
    -----
    Used in chapter *Evaluate your own model* (``book/practice/evaluate.md``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(5), size=600)
    >>> y = np.array([rng.choice(5, p=row) for row in P])
    >>> axes = classwise_reliability(y, P, n_bins=8, classes=list("abcde"), max_panels=3)
    >>> len(axes), axes[0].figure.get_suptitle()
    (3, 'the 3 of 5 classes with the largest class-wise ECE (8 equal-width bins)')
    >>> plt.close(axes[0].figure)
    """
    from .._validate import check_pair_matrix
    from .measures import _check_binning, _check_bins, binned_ece, classwise

    y, P = check_pair_matrix(y_true, y_prob)
    k = P.shape[1]
    binning = _check_binning(binning)
    n_bins = _check_bins(n_bins, P.shape[0], binning)
    if isinstance(max_panels, bool) or not isinstance(max_panels, numbers.Integral):
        raise TypeError(f"max_panels: expected a positive integer, got {max_panels!r}")
    if max_panels < 1:
        raise ValueError(f"max_panels: expected a positive integer, got {max_panels}")
    if classes is None:
        names = [str(r) for r in range(k)]
    else:
        names = [str(c) for c in classes]
        if len(names) != k:
            raise ValueError(f"classes: expected {k} names (one per column of y_prob), got"
                             f" {len(names)}")
    ece = classwise(binned_ece, y, P, per_class=True, n_bins=n_bins, binning=binning)
    if k > max_panels:
        shown = np.argsort(-ece, kind="stable")[:max_panels]
        note = (f"the {max_panels} of {k} classes with the largest class-wise ECE"
                f" ({n_bins} equal-{binning} bins)")
    else:
        shown = np.arange(k)
        note = None

    import matplotlib.pyplot as plt  # lazily: importing calnotes must not load matplotlib
    _install_png_formatter()      # shown in IPython: the PNG says its smallest text size

    count = len(shown)
    if ax is None:
        ncols = min(count, 3)                   # at most 3 panels per row of the column
        nrows = -(-count // ncols)
        fig, grid = plt.subplots(nrows, ncols, figsize=(COLUMN_WIDTH_IN, 2.5 * nrows + 0.4),
                                 sharex=True, sharey=True, layout="constrained", squeeze=False)
        for extra in grid.ravel()[count:]:
            extra.set_visible(False)
        axes = list(grid.ravel()[:count])
    else:
        axes = list(np.ravel(ax))
        if len(axes) != count:
            raise ValueError(f"ax: expected {count} Axes (one per panel), got {len(axes)}")
        ncols = count
        fig = axes[0].figure

    for i, (a, r) in enumerate(zip(axes, shown)):
        reliability_diagram((y == r).astype(np.int64), P[:, r], n_bins, binning=binning, ax=a)
        a.set_title(f"class {names[r]}: ECE {ece[r]:.3f}", fontsize=9)
        first_col, last_col = i % ncols == 0, (i % ncols == ncols - 1) or i == count - 1
        if not first_col:
            a.set_ylabel("")
        if i + ncols < count:
            a.set_xlabel("")
        else:                                   # no panel below: show the x tick labels
            a.tick_params(axis="x", labelbottom=True)
        twin = _histogram_axes(a)
        if not last_col:
            twin.set_ylabel("")
            twin.tick_params(axis="y", labelright=False)
    if note is not None:
        fig.suptitle(note, fontsize=10)
    return axes
