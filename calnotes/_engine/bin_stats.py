"""Column-batched bin statistics: the one place where binned measures touch the data.

A *column problem* is a binary calibration problem: predictions ``P[:, c]`` and outcomes
``y_i = 1`` exactly for the rows listed in ``positives[c]``.  The class-wise aggregation of a
``k``-class problem is ``k`` column problems sharing one ``(n, k)`` matrix; the binary and the
confidence problems are a single column.  Everything here is vectorised over columns: one
sort of the whole matrix, ``reduceat`` for the bin sums of predictions, and a binary search
of the (few) positive rows per column for the bin counts of outcomes.  No ``(n, n)`` or
``(n, k, m)`` array is ever built.

Ties (equal-mass bins, ``ties="average"``): a positive is located by the first sorted position
of its value, so its tie group is known without any argsort; groups that straddle a boundary
(found by comparing the sorted values on each side of every boundary) become hypergeometric
parts of their bins (:class:`TieParts`), and :meth:`BinStats.abs_moment` averages ``|S_j|^p``
over them exactly up to rounding (:mod:`calnotes._engine.ties`: each law on the values within
e^-56 of its mode).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import ties as _ties
from ..core.binning import _width_bins_unchecked, quantile_bin_of_position


@dataclass(frozen=True)
class TieParts:
    """Straddling tie groups of a column problem, as hypergeometric parts of its bins.

    Entry ``q`` says: bin ``bin[q]`` of column ``col[q]`` receives ``o[q]`` members of a group
    of ``N[q]`` tied predictions holding ``K[q]`` positives, chosen uniformly at random (the
    random order of ``ties="average"``).  Every straddling group is recorded, also with
    ``K = 0`` or ``K = N`` (degenerate parts), so that a bin is computed the same way here and
    in the Monte Carlo engine of :mod:`calnotes.core.expectation`.
    """

    col: np.ndarray
    bin: np.ndarray
    N: np.ndarray
    K: np.ndarray
    o: np.ndarray

    @property
    def size(self) -> int:
        return int(self.col.shape[0])


_NO_PARTS = TieParts(*(np.empty(0, dtype=np.int64) for _ in range(5)))


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
        Number of positive outcomes in each bin; with ``ties="average"`` its mean over random
        orders of tied predictions (fractional where a tie group straddles a boundary).
    n : int
        Number of samples.
    parts : TieParts
        The random parts of the bins under ``ties="average"`` (empty otherwise, and whenever no
        tie group with a positive straddles a boundary).
    fixed_outcome : ndarray, shape (c, m), optional
        With parts: the positives of each bin outside the straddling groups (integers).
    """

    count: np.ndarray
    sum_prob: np.ndarray
    sum_outcome: np.ndarray
    n: int
    parts: TieParts = _NO_PARTS
    fixed_outcome: np.ndarray | None = None

    @property
    def bias_sum(self) -> np.ndarray:
        """``sum_{i in B_j} (p_i - y_i)`` per column and bin (its mean over orders of ties)."""
        return self.sum_prob - self.sum_outcome

    def gaps(self) -> np.ndarray:
        """``|mean prediction - mean outcome|`` per bin; NaN for empty bins.

        With tie parts, the mean over orders of ties of that gap, ``E|S_j| / |B_j|``.
        """
        with np.errstate(invalid="ignore", divide="ignore"):
            return self.abs_moment(1) / self.count

    def abs_moment(self, p: float) -> np.ndarray:
        """``|S_j|^p`` per column and bin, ``S_j = sum_{B_j} (p_i - y_i)``; with tie parts its
        exact mean over uniformly random orders of the tied predictions."""
        bias = self.bias_sum
        out = np.abs(bias) ** p
        parts = self.parts
        if parts.size == 0:
            return out
        # A bin meets at most two straddling groups (one at each end).  p = 1: every bin at
        # once from windowed laws (abs_first_moments_together); p = 2: mean and variance,
        # elementwise; other p: bins with the same shape of parts (parts, o_1, o_2)
        # together, one vectorised call per shape.  Each bin's value depends on its own
        # entries only, not on which bins share its call.
        if p == 1:
            return abs_first_moments_together([self])[0]
        fixed = self.fixed_outcome
        bins = self._tie_bins()
        if bins is None:                        # not produced by calnotes; kept general
            return self._abs_moment_loop(out, p)
        first, second, two = bins
        size = 1 + two
        if p == 2:                  # mean and variance: one elementwise pass for every shape
            cols, js = parts.col[first], parts.bin[first]
            mean = self.sum_prob[cols, js] - fixed[cols, js]
            var = np.zeros_like(mean)
            mu, v = _ties.hypergeom_mean_var_arrays(parts.N[first], parts.K[first],
                                                    parts.o[first])
            mean -= mu
            var += v
            if two.any():
                sec = second[two]
                mu, v = _ties.hypergeom_mean_var_arrays(parts.N[sec], parts.K[sec],
                                                        parts.o[sec])
                mean[two] -= mu
                var[two] += v
            out[cols, js] = mean ** 2 + var
            return out
        o1 = parts.o[first]
        o2 = np.where(size == 2, parts.o[second], -1)
        shapes, which = np.unique(np.stack([size, o1, o2], axis=1), axis=0,
                                  return_inverse=True)
        which = which.ravel()
        by_shape = np.argsort(which, kind="stable")          # bins of a shape in key order
        bounds = np.r_[0, np.cumsum(np.bincount(which, minlength=shapes.shape[0]))]
        for s_i, (k, a, b) in enumerate(shapes.tolist()):
            sel = by_shape[bounds[s_i]:bounds[s_i + 1]]
            rows = [first[sel]] if k == 1 else [first[sel], second[sel]]
            cols, js = parts.col[rows[0]], parts.bin[rows[0]]
            c = self.sum_prob[cols, js] - fixed[cols, js]
            pieces = [(parts.N[r], parts.K[r], o) for r, o in zip(rows, (a, b))]
            out[cols, js] = _ties.expected_abs_power(c, pieces, p)
        return out

    def _tie_bins(self):
        """The bins with tie parts: ``(first, second, two)``, ``first`` a part of each bin,
        ``second`` its other part where ``two``; ``None`` where a bin has more than two parts
        (not produced by calnotes)."""
        parts = self.parts
        key = parts.col * self.sum_prob.shape[1] + parts.bin
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        size = np.diff(np.r_[starts, key.shape[0]])
        if size.max() > 2:
            return None
        return order[starts], order[np.minimum(starts + 1, key.shape[0] - 1)], size == 2

    def _first_moment_inputs(self, first, second, two) -> tuple:
        """``(cols, js, args)``: the bins' places and the arguments of
        :func:`calnotes._engine.ties.abs_first_moments` for their ``E|S_j|``."""
        parts, fixed = self.parts, self.fixed_outcome
        cols, js = parts.col[first], parts.bin[first]
        c = self.sum_prob[cols, js] - fixed[cols, js]
        sec = np.where(two, second, first)
        return cols, js, (c, parts.N[first], parts.K[first], parts.o[first],
                          parts.N[sec], parts.K[sec], parts.o[sec], two)

    def _abs_moment_loop(self, out, p) -> np.ndarray:
        """:meth:`abs_moment` grouping bins by shape in a loop (any number of parts)."""
        parts, fixed = self.parts, self.fixed_outcome
        key = parts.col * self.sum_prob.shape[1] + parts.bin
        order = np.argsort(key, kind="stable")
        key = key[order]
        starts = np.flatnonzero(np.r_[True, key[1:] != key[:-1]])
        size = np.diff(np.r_[starts, key.shape[0]])
        shapes: dict = {}
        for s, k in zip(starts.tolist(), size.tolist()):
            idx = order[s:s + k]
            shapes.setdefault(tuple(parts.o[idx].tolist()), []).append(idx)
        for shape, members in shapes.items():
            rows = np.array(members)                                   # (bins, parts)
            cols, js = parts.col[rows[:, 0]], parts.bin[rows[:, 0]]
            c = self.sum_prob[cols, js] - fixed[cols, js]
            pieces = [(parts.N[rows[:, i]], parts.K[rows[:, i]], o) for i, o in enumerate(shape)]
            out[cols, js] = _ties.expected_abs_power(c, pieces, p)
        return out


def abs_first_moments_together(stats_list: list) -> list:
    """``[stats.abs_moment(1) for stats in stats_list]`` (which is this function of one
    :class:`BinStats`), the tie parts of them all in one call of
    :func:`calnotes._engine.ties.abs_first_moments` (fewer, larger vectorised passes: the plans of a
    block of resamples or of a slice of the null); the same numbers as one at a time, since
    each bin's value is a function of its own parts."""
    outs, jobs = [], []
    for stats in stats_list:
        out = np.abs(stats.bias_sum)
        outs.append(out)
        if stats.parts.size == 0:
            continue
        bins = stats._tie_bins()
        if bins is None:                        # not produced by calnotes; kept general
            stats._abs_moment_loop(out, 1)
            continue
        cols, js, args = stats._first_moment_inputs(*bins)
        jobs.append((out, cols, js, args))
    if jobs:
        values = _ties.abs_first_moments(*(np.concatenate([job[3][i] for job in jobs])
                                           for i in range(8)))
        at = 0
        for out, cols, js, _ in jobs:
            out[cols, js] = values[at:at + cols.shape[0]]
            at += cols.shape[0]
    return outs


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
              binning: str, ties: str = "average") -> BinStats:
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
        See :mod:`calnotes.core.binning` for the convention.
    ties : {"average", "position"}
        Equal-mass bins only: how a group of equal predictions that straddles a bin boundary
        is split.  ``"average"``: every order of the group equally likely, so the bins receive
        hypergeometric shares of its positives (recorded in :attr:`BinStats.parts`; the counts
        are their means).  ``"position"``: eq. (1) with ties in input order.
    """
    n, c = P.shape
    m = int(n_bins)
    if binning == "mass":
        sorted_P = np.sort(P, axis=0)
        bounds = (np.arange(m + 1, dtype=np.int64) * n) // m
        sum_prob = np.add.reduceat(sorted_P, bounds[:-1], axis=0).T  # (c, m)
        count = np.broadcast_to(np.diff(bounds).astype(np.float64), (c, m))
        sum_outcome = np.zeros((c, m))
        fixed = np.zeros((c, m))
        parts: list = []
        inner = bounds[1:-1]
        straddled = (sorted_P[inner - 1] == sorted_P[inner]).any(axis=0)   # (c,)
        for col, rows in enumerate(positives):
            if not rows.size and not (ties == "average" and straddled[col]):
                continue
            column = np.ascontiguousarray(sorted_P[:, col])
            if ties == "position":
                pos = _stable_positions(P[:, col], column, rows)
                sum_outcome[col] = np.bincount(quantile_bin_of_position(pos, n, m), minlength=m)
                continue
            left = np.searchsorted(column, P[rows, col], side="left")
            bins = quantile_bin_of_position(left, n, m)
            if not straddled[col]:
                sum_outcome[col] = np.bincount(bins, minlength=m)
                continue
            # Straddling groups (also those without positives, so that every such bin is
            # computed the way the Monte Carlo engine computes it): K positives among N
            # members, o of them in bin j -> mean o K / N there, and a hypergeometric part.
            groups = _ties.straddling_groups(column, bounds)
            starts = np.array([a for a, _, _ in groups], dtype=np.int64)
            member = np.isin(left, starts)
            fixed[col] = np.bincount(bins[~member], minlength=m)
            sum_outcome[col] = fixed[col]
            K = np.searchsorted(np.sort(left[member]), starts, side="right") \
                - np.searchsorted(np.sort(left[member]), starts, side="left")
            for (a, e, overlaps), k in zip(groups, K.tolist()):
                for j, o in overlaps:
                    sum_outcome[col, j] += o * k / (e - a)
                    parts.append((col, j, e - a, k, o))
        tie_parts = (TieParts(*(np.array(a, dtype=np.int64) for a in zip(*parts)))
                     if parts else _NO_PARTS)
        return BinStats(count=np.array(count), sum_prob=np.ascontiguousarray(sum_prob),
                        sum_outcome=sum_outcome, n=n, parts=tie_parts,
                        fixed_outcome=fixed if parts else None)
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
