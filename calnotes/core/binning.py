"""Bin assignment: equal-width and equal-mass (quantile) bins, with one convention.

The convention (used by every binned measure in calnotes)
----------------------------------------------------------
Equal width, ``m`` bins
    Edges are ``e_j = j / m`` computed by one correctly rounded division, so a prediction
    written in decimal on the grid (``0.3`` with ``m = 10``) *is* the edge ``3/10``.  Bins are
    half-open on the right, ``[e_j, e_{j+1})``; a value exactly on an interior edge belongs to
    the bin **above** it; ``0`` is in the first bin and ``1`` in the last (which is closed,
    ``[e_{m-1}, 1]``).  Off the edges this agrees with ``sklearn.calibration.calibration_curve``;
    on an edge it does not: scikit-learn (1.9) uses ``searchsorted(edges, p)`` with left-closed
    intervals, so a value exactly on an interior edge goes to the bin *below*, and its edges
    come from ``linspace`` (``0.30000000000000004`` rather than ``0.3``).  The chapter
    *The measures* shows both effects and what other libraries do.

Equal mass, ``m`` bins (eq. (1) of the truthfulness paper)
    Sort the predictions ascending; the sample in (1-indexed) sorted position ``i`` goes to
    bin ``ceil(i * m / n)``, i.e. bin ``j`` holds positions ``(j-1) n / m < i <= j n / m``.
    Bin sizes are ``floor(j n / m) - floor((j-1) n / m)``: they differ by at most one and are
    all positive when ``m <= n``, also when ``m`` does not divide ``n``.

    **Ties.**  A group of equal predictions can straddle a bin boundary, exactly as eq. (1)
    allows, and eq. (1) alone does not say which of the tied samples go to which bin.  Ties are
    never ordered by outcome (that would break Thm 2.6).  Every equal-mass measure takes
    ``ties=``:

    ``"average"`` (default)
        Every order of the tied samples is equally likely and the measure is its exact mean
        over them: the ``o`` members of a group of ``N`` (with ``K`` positives) that fall in a
        bin bring a ``Hyp(N, K, o)`` number of positives, so the mean needs only hypergeometric
        laws (``calnotes._engine.ties``), not an enumeration of orders.  The value does not depend
        on the order of the rows -- a file sorted by label gives the same number as a shuffled
        one -- and the average of truthful measures is truthful (chapter *The measures*,
        ``prop-tie-average``).  ``binned_ece`` with ``p != 1`` averages ``ECE_p^p`` before the
        root; ``max_calibration_error`` takes the maximum of each bin's mean gap.
    ``"position"``
        Ties are ordered by input position (a stable sort), eq. (1) taken literally: the bins
        depend on the predictions and the row order, so with straddling ties the value of a
        measure changes when rows are permuted (its distribution does not, as long as the row
        order is independent of the outcomes).

    :func:`equal_mass_bins` returns the hard assignment of the ``"position"`` rule.

Both functions return 0-indexed bin numbers ``0 .. m-1`` in the order of the input.
"""

from __future__ import annotations

import numpy as np

from .._validate import check_n_bins, check_probabilities

__all__ = [
    "equal_width_edges",
    "equal_width_bins",
    "equal_mass_bin_sizes",
    "equal_mass_bins",
    "quantile_bin_of_position",
    "assign_bins",
]


def equal_width_edges(n_bins: int) -> np.ndarray:
    """Edges ``j / m`` for ``j = 0..m`` (each a correctly rounded division).

    Examples
    --------
    >>> bool(equal_width_edges(10)[3] == 0.3)
    True
    >>> float(np.linspace(0, 1, 11)[3]) == 0.3   # linspace does not give the decimal
    False
    """
    if isinstance(n_bins, bool) or int(n_bins) != n_bins or n_bins < 1:
        raise ValueError(f"n_bins: expected a positive integer, got {n_bins!r}")
    m = int(n_bins)
    return np.arange(m + 1, dtype=np.float64) / m


def _width_bins_unchecked(values: np.ndarray, m: int) -> np.ndarray:
    """Bin numbers for values already known to lie in [0, 1]; any shape.

    ``floor(v * m)`` is off by at most one from the exact rule (the product carries one
    rounding); the two comparisons against the edges put it right.
    """
    edges = np.arange(m + 1, dtype=np.float64) / m
    edges[m] = np.inf  # so that the "move up" test never fires for the last bin
    j = np.floor(values * m).astype(np.intp)
    np.clip(j, 0, m - 1, out=j)
    j -= values < edges[j]
    j += values >= edges[j + 1]
    return j


def equal_width_bins(y_prob, n_bins: int) -> np.ndarray:
    """Equal-width bin number of each prediction.

    Parameters
    ----------
    y_prob : array_like, shape (n,)
        Values in ``[0, 1]``.
    n_bins : int
        Number of bins ``m``.

    Returns
    -------
    numpy.ndarray of intp, shape (n,)
        Bin numbers in ``0..m-1``; see the module docstring for edges.

    Notes
    -----
    Used by :func:`calnotes.binned_ece` with ``binning="width"`` (chapter *The measures*).

    Examples
    --------
    >>> equal_width_bins([0.0, 0.1, 0.3, 0.35, 0.999, 1.0], 10).tolist()
    [0, 1, 3, 3, 9, 9]
    """
    p = check_probabilities(y_prob, name="y_prob", allow_2d=False)
    m = check_n_bins(n_bins, np.iinfo(np.int64).max)
    return _width_bins_unchecked(p, m)


def equal_mass_bin_sizes(n_samples: int, n_bins: int) -> np.ndarray:
    """Sizes ``|B_j| = floor(j n / m) - floor((j-1) n / m)`` of the eq. (1) bins.

    Examples
    --------
    >>> equal_mass_bin_sizes(10, 3).tolist()
    [3, 3, 4]
    """
    m = check_n_bins(n_bins, n_samples)
    bounds = (np.arange(m + 1, dtype=np.int64) * n_samples) // m
    return np.diff(bounds)


def quantile_bin_of_position(positions, n_samples: int, n_bins: int) -> np.ndarray:
    """0-indexed bin of 0-indexed sorted positions: ``ceil((pos + 1) m / n) - 1``.

    Examples
    --------
    >>> quantile_bin_of_position(np.arange(10), 10, 3).tolist()
    [0, 0, 0, 1, 1, 1, 2, 2, 2, 2]
    """
    pos = np.asarray(positions, dtype=np.int64)
    n, m = int(n_samples), int(n_bins)
    return ((pos + 1) * m + n - 1) // n - 1


def equal_mass_bins(y_prob, n_bins: int) -> np.ndarray:
    """Equal-mass (quantile) bin number of each prediction, eq. (1) of the truthfulness paper.

    Parameters
    ----------
    y_prob : array_like, shape (n,)
        Values in ``[0, 1]``.
    n_bins : int
        Number of bins ``m``; ``1 <= m <= n``.

    Returns
    -------
    numpy.ndarray of intp, shape (n,)
        Bin numbers ``0..m-1`` in input order.  Ties are ordered by input position (stable
        sort, the ``ties="position"`` rule), so equal predictions may fall in two adjacent
        bins; the measures' default ``ties="average"`` instead averages over the orders of
        such ties (module docstring).

    Notes
    -----
    Used by :func:`calnotes.l2_qece` and :func:`calnotes.l1_qece` (Def 2.5; chapter
    *The measures*, label ``eq-quantile-bins``).

    Examples
    --------
    >>> equal_mass_bins([0.9, 0.1, 0.5, 0.5, 0.2, 0.5], 2).tolist()  # the 0.5s straddle
    [1, 0, 0, 1, 0, 1]
    """
    p = check_probabilities(y_prob, name="y_prob", allow_2d=False)
    m = check_n_bins(n_bins, p.shape[0])
    order = np.argsort(p, kind="stable")
    bins = np.empty(p.shape[0], dtype=np.intp)
    bins[order] = quantile_bin_of_position(np.arange(p.shape[0]), p.shape[0], m)
    return bins


def assign_bins(y_prob, n_bins: int, binning: str = "width") -> np.ndarray:
    """Dispatch to :func:`equal_width_bins` (``"width"``) or :func:`equal_mass_bins` (``"mass"``).

    Examples
    --------
    >>> assign_bins([0.2, 0.7], 2, "mass").tolist()
    [0, 1]
    """
    if binning == "width":
        return equal_width_bins(y_prob, n_bins)
    if binning == "mass":
        return equal_mass_bins(y_prob, n_bins)
    raise ValueError(f"binning: expected 'width' or 'mass', got {binning!r}")
