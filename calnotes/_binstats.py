"""Column-batched bin statistics: the one place where binned measures touch the data.

A *column problem* is a binary calibration problem: predictions ``P[:, c]`` and outcomes
``y_i = 1`` exactly for the rows listed in ``positives[c]``.  The class-wise aggregation of a
``k``-class problem is ``k`` column problems sharing one ``(n, k)`` matrix; the binary and the
confidence problems are a single column.  Everything here is vectorised over columns: one
sort of the whole matrix, ``reduceat`` for the bin sums of predictions, and a binary search
of the (few) positive rows per column for the bin counts of outcomes.  No ``(n, n)`` or
``(n, k, m)`` array is ever built.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .binning import _width_bins_unchecked, quantile_bin_of_position


@dataclass(frozen=True)
class BinStats:
    """Per-column, per-bin sufficient statistics of a binned calibration measure.

    Attributes
    ----------
    count : ndarray, shape (c, m)
        Number of samples in each bin.
    sum_prob : ndarray, shape (c, m)
        Sum of predictions in each bin.
    sum_outcome : ndarray, shape (c, m)
        Number of positive outcomes in each bin.
    n : int
        Number of samples.
    """

    count: np.ndarray
    sum_prob: np.ndarray
    sum_outcome: np.ndarray
    n: int

    @property
    def bias_sum(self) -> np.ndarray:
        """``sum_{i in B_j} (p_i - y_i)`` per column and bin."""
        return self.sum_prob - self.sum_outcome

    def gaps(self) -> np.ndarray:
        """``|mean prediction - mean outcome|`` per bin; NaN for empty bins."""
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.abs(self.bias_sum) / self.count


def positives_by_class(labels: np.ndarray, n_classes: int) -> list[np.ndarray]:
    """Rows with ``labels == r`` for each ``r``, in increasing row order (one stable sort)."""
    order = np.argsort(labels, kind="stable")
    counts = np.bincount(labels, minlength=n_classes)
    return np.split(order, np.cumsum(counts)[:-1])


def _stable_positions(column: np.ndarray, sorted_column: np.ndarray,
                      rows: np.ndarray) -> np.ndarray:
    """0-indexed positions of ``rows`` in the stable ascending order of ``column``."""
    if rows.size == 0:
        return rows.astype(np.int64)
    values = column[rows]
    left = np.searchsorted(sorted_column, values, side="left")
    right = np.searchsorted(sorted_column, values, side="right")
    if np.all(right - left == 1):
        return left
    # Some positive sits in a group of equal predictions: order the group by row number.
    order = np.argsort(column, kind="stable")
    position = np.empty(column.shape[0], dtype=np.int64)
    position[order] = np.arange(column.shape[0])
    return position[rows]


def bin_stats(P: np.ndarray, positives: list[np.ndarray], n_bins: int,
              binning: str) -> BinStats:
    """Bin statistics of every column of ``P`` (shape ``(n, c)``).

    Parameters
    ----------
    P : ndarray, shape (n, c)
        Validated predictions, one column per binary problem.
    positives : list of c int arrays
        Rows with outcome 1 for each column.
    n_bins : int
        ``m``, already validated against ``n``.
    binning : {"width", "mass"}
        See :mod:`calnotes.binning` for the convention.
    """
    n, c = P.shape
    m = int(n_bins)
    if binning == "mass":
        sorted_P = np.sort(P, axis=0)
        bounds = (np.arange(m + 1, dtype=np.int64) * n) // m
        sum_prob = np.add.reduceat(sorted_P, bounds[:-1], axis=0).T  # (c, m)
        count = np.broadcast_to(np.diff(bounds).astype(np.float64), (c, m))
        sum_outcome = np.zeros((c, m))
        for col, rows in enumerate(positives):
            if rows.size:
                pos = _stable_positions(P[:, col], np.ascontiguousarray(sorted_P[:, col]), rows)
                sum_outcome[col] = np.bincount(quantile_bin_of_position(pos, n, m), minlength=m)
        return BinStats(count=np.array(count), sum_prob=np.ascontiguousarray(sum_prob),
                        sum_outcome=sum_outcome, n=n)
    if binning == "width":
        bins = _width_bins_unchecked(P, m)  # (n, c)
        flat = bins + (np.arange(c) * m)[None, :]
        count = np.bincount(flat.ravel(), minlength=c * m).reshape(c, m).astype(np.float64)
        sum_prob = np.bincount(flat.ravel(), weights=P.ravel(), minlength=c * m).reshape(c, m)
        sum_outcome = np.zeros((c, m))
        for col, rows in enumerate(positives):
            if rows.size:
                sum_outcome[col] = np.bincount(bins[rows, col], minlength=m)
        return BinStats(count=count, sum_prob=sum_prob, sum_outcome=sum_outcome, n=n)
    raise ValueError(f"binning: expected 'width' or 'mass', got {binning!r}")
