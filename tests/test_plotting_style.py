"""The book's figure style (calnotes.core.plotting): legible text at the column width, the
colour-blind-safe palette, legends off the data, and the smallest text size carried in the PNG.

Each check is a function of a drawn Figure and is shown to fail on a deliberately bad figure
(tiny text, red against green, a legend on the points), so that a pass means something.

Why 9 px: labels of 4-6 px, as the figures had them, proved unreadable on the page; 9 px is
the book's stated minimum (:data:`calnotes.core.plotting.MIN_FONT_PX`) and the browser check uses
the same number.  The display width, 688 CSS px, is the text column of the built book at a
1280 px window.
"""

import io
import json
import re

import matplotlib
import numpy as np
import pytest

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.colors import to_rgba  # noqa: E402
from PIL import Image  # noqa: E402

from calnotes.core import plotting  # noqa: E402
from calnotes.core.plotting import (DISPLAY_WIDTH_PX, MIN_FONT_PX, PALETTE,  # noqa: E402
                                    PNG_MIN_FONT_KEY, calibration_sharpness_diagram,
                                    classwise_reliability, corp_diagram, displayed_font_px,
                                    min_font_px, new_figure, reliability_diagram,
                                    reliability_panels, save_figure)


@pytest.fixture(autouse=True)
def _close_figures():
    with matplotlib.rc_context():          # new_figure and use_book_style change rcParams
        yield
    plt.close("all")


# ----------------------------------------------------------------------- the three checks
def _is_grey(rgba):
    r, g, b, _ = rgba
    return max(r, g, b) - min(r, g, b) < 1e-6


def foreign_colours(fig):
    """Colours of drawn data (lines, filled areas, bars, collections) that are neither in the
    Okabe-Ito palette nor grey."""
    allowed = {tuple(np.round(to_rgba(c)[:3], 4)) for c in PALETTE}
    seen = []
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        colours = [line.get_color() for line in ax.get_lines()]
        for coll in ax.collections:
            colours += list(coll.get_facecolors()) + list(coll.get_edgecolors())
        for patch in ax.patches:
            if patch.get_fill():
                colours.append(patch.get_facecolor())
            else:
                colours.append(patch.get_edgecolor())
        for colour in colours:
            rgba = to_rgba(colour)
            if rgba[3] == 0 or _is_grey(rgba):
                continue
            if tuple(np.round(rgba[:3], 4)) not in allowed:
                seen.append(matplotlib.colors.to_hex(rgba))
    return sorted(set(seen))


def data_points_under_legends(fig):
    """Number of data vertices (line points, collection vertices and offsets, in display
    coordinates) that fall inside a visible legend's box."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    if not isinstance(fig.canvas, FigureCanvasAgg):      # a bare Figure: give it a canvas
        FigureCanvasAgg(fig)
    fig.canvas.draw()
    renderer = fig.canvas.get_renderer()
    legends = [ax.get_legend() for ax in fig.axes if ax.get_legend() is not None]
    legends = [lg for lg in legends + list(fig.legends) if lg.get_visible()]
    boxes = [lg.get_window_extent(renderer) for lg in legends]
    points = []
    for ax in fig.axes:
        if not ax.get_visible() or not ax.axison:    # a legend-only cell holds no data
            continue
        for line in ax.get_lines():
            xy = line.get_xydata()
            if len(xy):
                points.append(line.get_transform().transform(xy))
        for coll in ax.collections:
            for path in coll.get_paths():
                if len(path.vertices):
                    points.append(coll.get_transform().transform(path.vertices))
    if not points or not boxes:
        return 0
    pts = np.concatenate(points)
    pts = pts[np.all(np.isfinite(pts), axis=1)]
    inside = 0
    for box in boxes:
        inside += int(np.sum((pts[:, 0] > box.x0) & (pts[:, 0] < box.x1)
                             & (pts[:, 1] > box.y0) & (pts[:, 1] < box.y1)))
    return inside


def check_figure(fig):
    """The three requirements of a book figure, as a list of failures (empty: it passes)."""
    failures = []
    shown = displayed_font_px(fig, DISPLAY_WIDTH_PX)
    if shown < MIN_FONT_PX:
        failures.append(f"smallest text {shown:.1f} px at {DISPLAY_WIDTH_PX} px display width")
    foreign = foreign_colours(fig)
    if foreign:
        failures.append(f"colours outside the palette: {foreign}")
    covered = data_points_under_legends(fig)
    if covered:
        failures.append(f"{covered} data points under a legend")
    return failures


# --------------------------------------------------------------------------- the data
def _binary(n=1500, seed=0):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    return (rng.uniform(size=n) < p ** 1.4).astype(int), p


def _multiclass(n=1200, k=5, seed=1):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.full(k, 0.6), size=n)
    y = (rng.uniform(size=(n, 1)) > np.cumsum(P, axis=1)).sum(axis=1)
    return np.minimum(y, k - 1), P


def _sharpness_result():
    from calnotes.theory.sharpness import calibration_sharpness

    y, P = _multiclass()
    return calibration_sharpness(y, P, "brier")


def _library_figures():
    """One figure per figure-producing function of the library, drawn as a user would."""
    y, p = _binary()
    yk, P = _multiclass()
    figs = {}
    ax = reliability_diagram(y, p, 10, label="model")
    reliability_diagram(y, np.clip(p * 1.2, 0, 1), 10, ax=ax, label="other")
    figs["reliability_diagram"] = ax.figure
    figs["reliability_panels binary"] = reliability_panels(y, p, 10)[0].figure
    figs["reliability_panels k=5"] = reliability_panels(yk, P, 10)[0].figure
    figs["calibration_sharpness_diagram"] = calibration_sharpness_diagram(
        _sharpness_result(), title="a model").figure
    figs["corp_diagram"] = corp_diagram(y, p, label="model").figure
    figs["classwise_reliability"] = classwise_reliability(yk, P, 10)[0].figure
    from calnotes.evaluation.figures import _reliability_figure, _sharpness_figure

    figs["evaluate reliability.png"] = _reliability_figure(y, np.column_stack([1 - p, p]), 15,
                                                           "model.npz")
    figs["evaluate sharpness.png"] = _sharpness_figure(yk, P, "model.npz")
    return figs


# ----------------------------------------------------------------------------- tests
def test_every_library_figure_is_legible_colour_blind_safe_and_keeps_legends_off_the_data():
    failures = {name: check_figure(fig) for name, fig in _library_figures().items()}
    assert not {name: f for name, f in failures.items() if f}


def test_negative_controls_each_check_fails_on_a_bad_figure():
    # tiny text: 5 pt tick labels on a column-wide figure are 5 * 100 / 72 = 6.9 px < 9
    fig, ax = plt.subplots(figsize=(7, 3), dpi=100)
    ax.plot([0, 1], [0, 1], color=PALETTE[0])
    ax.tick_params(labelsize=5)
    (failure,) = check_figure(fig)
    assert failure.startswith("smallest text")
    # a figure twice the column width: its 10 pt text is shrunk below 9 px
    fig, ax = plt.subplots(figsize=(14, 3), dpi=100)
    ax.plot([0, 1], [0, 1], color=PALETTE[0])
    assert check_figure(fig)[0].startswith("smallest text")
    # red against green (tab10)
    fig, ax = plt.subplots(figsize=(5, 3), dpi=100)
    ax.plot([0, 1], [0, 1], color="tab:red")
    ax.plot([0, 1], [1, 0], color="tab:green")
    (failure,) = check_figure(fig)
    assert "colours outside the palette" in failure and "#d62728" in failure
    # a legend placed on the points
    fig, ax = plt.subplots(figsize=(5, 3), dpi=100)
    x = np.linspace(0, 1, 200)
    ax.plot(x, np.full_like(x, 0.5), "o", color=PALETTE[0], label="points")
    ax.legend(loc="center")
    (failure,) = check_figure(fig)
    assert failure.endswith("data points under a legend")


def test_min_font_px_is_the_smallest_drawn_text_times_dpi_over_72():
    fig = matplotlib.figure.Figure(figsize=(6, 3), dpi=144)
    ax = fig.subplots()
    ax.set_xlabel("x", fontsize=11)
    ax.tick_params(labelsize=8)
    ax.set_title("hidden", fontsize=3).set_visible(False)   # not drawn: does not count
    ax.text(0.5, 0.5, "", fontsize=2)                       # empty: does not count
    assert min_font_px(fig) == pytest.approx(8 * 144 / 72)
    assert min_font_px(fig, dpi=100) == pytest.approx(8 * 100 / 72)
    # shown in a 688 px column: the natural width exceeds 688 px, so the text is shrunk by
    # 688 / natural width (natural = tight box + 2 * 0.1 in padding, times the dpi)
    natural = (fig.get_tightbbox().width + 0.2) * 144
    assert natural > DISPLAY_WIDTH_PX
    assert displayed_font_px(fig) == pytest.approx(8 * 144 / 72 * DISPLAY_WIDTH_PX / natural,
                                                   rel=1e-6)


def test_pngs_carry_their_smallest_text_size():
    from calnotes.core.plotting import _png_with_font_size

    fig = matplotlib.figure.Figure(figsize=(3, 2), dpi=100)
    fig.subplots().tick_params(labelsize=9)
    png = _png_with_font_size(fig, base64=False)
    assert Image.open(io.BytesIO(png)).text[PNG_MIN_FONT_KEY] == f"{9 * 100 / 72:.2f}"
    buf = io.BytesIO()
    save_figure(fig, buf, dpi=120)
    assert Image.open(io.BytesIO(buf.getvalue())).text[PNG_MIN_FONT_KEY] == f"{9 * 120 / 72:.2f}"


def test_use_book_style_makes_ipython_display_figures_with_the_font_size_key():
    import base64

    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    try:
        plotting.use_book_style()
        fig, ax = new_figure(1, 2)
        (line,) = ax[0].plot([0, 1])
        assert line.get_color().upper() == PALETTE[0]
        data, _ = shell.display_formatter.format(fig)
        png = base64.b64decode(data["image/png"])
        smallest = float(Image.open(io.BytesIO(png)).text[PNG_MIN_FONT_KEY])
        assert smallest == pytest.approx(9 * plotting.BOOK_DPI / 72, abs=0.01)   # 9 pt ticks
    finally:
        InteractiveShell.clear_instance()


def test_new_figure_refuses_layouts_too_wide_for_the_column():
    with pytest.raises(ValueError, match="^ncols:"):
        new_figure(1, 4)
    with pytest.raises(ValueError, match="^width:"):
        new_figure(1, 2, width=9)
    with pytest.raises(ValueError, match="^nrows:"):
        new_figure(0, 2)


# ------------------------------------------------------------------ the book's figure cells
from pathlib import Path  # noqa: E402

import yaml  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?:---\n(?P<yaml>.*?)^---\n)?(?P<code>.*?)^```\s*$",
                   re.MULTILINE | re.DOTALL)
_SHOWS = re.compile(r"^(plt\.show\(\)|display\(Image\(|draw\w*\("
                    r"|fig, \w+ = (new_figure|plt\.subplots)\()", re.MULTILINE)


def book_code_cells():
    """(page, metadata, code) of every code cell of the book's MyST pages and notebooks."""
    cells = []
    for path in sorted((ROOT / "book").rglob("*.md")):
        for match in _CELL.finditer(path.read_text()):
            meta = yaml.safe_load(match["yaml"]) if match["yaml"] else {}
            cells.append((path, meta or {}, match["code"]))
    for path in sorted((ROOT / "book").rglob("*.ipynb")):
        if ".ipynb_checkpoints" in path.parts:
            continue
        for cell in json.loads(path.read_text())["cells"]:
            if cell["cell_type"] == "code":
                cells.append((path, cell.get("metadata", {}), "".join(cell["source"])))
    return cells


def figure_problems(cells, text_of):
    """Figure cells without caption, name or alt text; figures never cited; duplicate names."""
    problems, names = [], {}
    for path, meta, code in cells:
        figure = meta.get("mystnb", {}).get("figure")
        shows = bool(_SHOWS.search(code))           # a figure drawn at the top level
        if not shows and figure is None:
            continue
        where = f"{path.relative_to(ROOT) if path.is_absolute() else path}"
        if figure is None:
            problems.append(f"{where}: a figure without caption and number")
            continue
        alt = meta.get("mystnb", {}).get("image", {}).get("alt", "")
        if not figure.get("caption") or not figure.get("name"):
            problems.append(f"{where}: figure without caption or name")
        if not alt or re.search(r"\.(png|svg|jpe?g)\b|/", alt):
            problems.append(f"{where}: alt text missing or a file path")
        name = figure.get("name")
        if name in names:
            problems.append(f"{where}: figure name {name} also used in {names[name]}")
        names[name] = where
    corpus = "\n".join(text_of)
    for name, where in names.items():
        if name and f"{{numref}}`{name}`" not in corpus:
            problems.append(f"{where}: figure {name} is never cited with {{numref}}")
    return problems


def test_every_book_figure_is_numbered_captioned_described_and_cited():
    texts = [p.read_text() for p in (ROOT / "book").rglob("*.md")]
    texts += [p.read_text() for p in (ROOT / "book").rglob("*.ipynb")]
    assert figure_problems(book_code_cells(), texts) == []


def test_figure_cell_check_negative_control():
    page = Path("book/x.md")
    cells = [(page, {}, "fig, ax = new_figure()\nplt.show()\n"),
             (page, {"mystnb": {"figure": {"caption": "c", "name": "fig-a"},
                                "image": {"alt": "book/x_files/a.png"}}}, "plt.show()\n"),
             (page, {"mystnb": {"figure": {"caption": "c", "name": "fig-b"},
                                "image": {"alt": "a curve"}}}, "plt.show()\n"),
             (page, {}, "def draw():\n    plt.show()\n")]          # a helper: not a figure
    problems = figure_problems(cells, ["see {numref}`fig-a`"])
    assert problems == ["book/x.md: a figure without caption and number",
                        "book/x.md: alt text missing or a file path",
                        "book/x.md: figure fig-b is never cited with {numref}"]
