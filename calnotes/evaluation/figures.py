"""The figures a report writes: reliability, calibration-sharpness and utility eCDF."""

from __future__ import annotations

from pathlib import Path

import numpy as np


def _sharpness_figure(y, P, title):
    """004's calibration-sharpness diagram (Brier pair, Gaussian kernel, the library's default
    bandwidth 0.1 n^(-1/5) rather than the paper's fixed 0.05, which is not consistent), on all
    the predictions (the binned kernel sums need no subsampling, unlike the paper's App. D).
    Unlike App. D's figures, curve and band are drawn only between the smallest and largest
    top-label confidence (at least 1/k) and where the kernel reaches at least
    ``calnotes.core.plotting.MIN_KERNEL_SAMPLES`` (10) confidences, the band is clipped to [0, 1],
    and ``d_CAL`` and ``d_TOT`` are on their own scale (``d_TOT`` is the table's Brier (all
    classes))."""
    from matplotlib.figure import Figure

    from ..core.plotting import MIN_KERNEL_SAMPLES, calibration_sharpness_diagram
    from ..theory.sharpness import calibration_sharpness

    from ..core.plotting import legend_below

    result = calibration_sharpness(y, P, "brier")
    conf = P.max(axis=1)
    fig = Figure(figsize=(4.8, 4.8), layout="constrained")
    # drawn only over the observed confidences (>= 1/k) where the kernel reaches at least
    # MIN_KERNEL_SAMPLES of them; the band clipped to the unit square; d_CAL and d_TOT on
    # their own scale (d_TOT is the report's Brier (all classes))
    calibration_sharpness_diagram(result, ax=fig.subplots(),
                                  title=Path(title).name if title else None,
                                  support=(float(conf.min()), float(conf.max())),
                                  min_samples=MIN_KERNEL_SAMPLES, clip=True, scale=1)
    legend_below(fig, ncols=2)                        # off the data
    return fig


def _reliability_figure(y, P, m, title):
    from matplotlib.figure import Figure

    from ..core.measures import confidence_scores
    from ..core.plotting import corp_diagram, reliability_panels

    panels = 3 if P.shape[1] == 2 else 2
    fig = Figure(figsize=(7, 7.4), layout="constrained")   # 2 x 2 at the book's column width
    axes = fig.subplots(2, 2).ravel()
    reliability_panels(y, P, m, ax=axes[:panels])     # one legend, below the panels
    conf, _, correct = confidence_scores(y, P)
    # CORP: isotonic, ties pooled; its Brier score is the top-label one (binary, on the
    # confidence), not the report's multi-class "Brier (all classes)": named so, and its
    # MCB / DSC / UNC explained where they are shown
    corp_diagram(correct, conf, ax=axes[panels], score_name="top-label Brier", explain=True)
    axes[panels].set_title("confidence, CORP (isotonic)", fontsize=10)
    handles, labels = axes[panels].get_legend_handles_labels()
    axes[panels].get_legend().remove()                # its explanation would cover the curve
    if panels == 2:                                   # the free cell holds CORP's legend
        from ..core.plotting import legend_in_axes

        legend_in_axes(axes[3], handles, labels, fontsize=9)
    else:                                             # k = 2: with the panels' legend, below
        from ..core.plotting import legend_below

        below = fig.legends[0]
        handles = list(below.legend_handles) + handles
        labels = [t.get_text() for t in below.get_texts()] + labels
        below.remove()
        legend_below(fig, axes[:panels], handles=handles, labels=labels, ncols=3, fontsize=9)
    fig.suptitle(Path(title).name if title else "", fontsize=10)
    return fig


def _utility_figure(ecdfs, title):
    """eCDFs of the estimated utility calibration errors over ``U_lin`` and ``U_rank``, with the
    DKW band (:class:`calnotes.theory.utility.UtilityECDF`, ``eps_stat = 0``)."""
    from matplotlib.figure import Figure

    from ..core.plotting import PALETTE, legend_below

    fig = Figure(figsize=(7, 3.6), layout="constrained")          # the book's column width
    axes = fig.subplots(1, len(ecdfs), sharey=True)
    for ax, F in zip(np.atleast_1d(axes), ecdfs):
        top = float(F.errors[-1])
        xs = np.concatenate([[0.0], F.errors, [top * 1.05 if top > 0 else 1e-3]])
        band = f"DKW band ({1 - F.delta:.0%})"
        ax.fill_between(xs, F.lower(xs), F.upper(xs), step="post", alpha=0.25,
                        color=PALETTE[0], linewidth=0, label=band)
        ax.step(xs, F(xs), where="post", color=PALETTE[0], label="eCDF")
        median = float(F.quantile(0.5))
        ax.axvline(median, color="0.4", linestyle=":", linewidth=1, label="median")
        ax.set_xlim(left=0.0)
        ax.set_ylim(0.0, 1.0)
        ax.set_xlabel("estimated UC")
        name = {"U_lin": "linear utilities", "U_rank": "rank utilities"}.get(F.label, F.label)
        ax.set_title(f"{name}, M = {F.errors.size}\nmedian {median:.3g}, band"
                     f" \u00b1{F.halfwidth:.3f}", fontsize=10)
    np.atleast_1d(axes)[0].set_ylabel("fraction of sampled utilities")
    legend_below(fig, axes=np.atleast_1d(axes)[:1], ncols=3)     # off the data
    fig.suptitle(Path(title).name if title else "", fontsize=10)
    return fig
