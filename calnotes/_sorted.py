"""One sort per column: every binned statistic of :func:`calnotes.evaluate` from one order.

:class:`SortedColumns` holds ``c`` binary column problems (predictions ``X[:, col]``; outcomes
given separately as *positives*) with each column sorted **once** (in column blocks on a thread
pool: NumPy's sort releases the GIL).  A :class:`BinPlan` fixes one binning (equal-mass bins of
eq. (1), or equal-width bins, for one bin count ``m``) on that order: bin boundaries as sorted
positions, the bins' sizes and prediction sums, and the tie groups that straddle an equal-mass
boundary.  Every statistic needed afterwards comes from the plan and the *sorted positions* of
the positives:

* the measured values (the positives of the data),
* the calibrated null's draws (positives drawn from the predictions, many replications at once),

so neither re-validates nor re-sorts anything.  Equal-width bins are contiguous runs of the
sorted order (their boundaries are binary searches of the edges ``j / m``), so every bin count
costs ``O(c m log n)`` plus one pass for the prediction sums.

The numbers are those of :func:`calnotes._binstats.bin_stats` (the same bins, the same tie rule
and the same :class:`calnotes._binstats.BinStats`); only the order of floating-point additions
in the equal-width prediction sums differs (``reduceat`` over the sorted order instead of
``bincount`` in input order), a relative difference of order ``n`` units in the last place.
"""

from __future__ import annotations

import os
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from . import _ties
from ._binstats import BinStats, TieParts
from .binning import quantile_bin_of_position

#: Worker threads for the column sorts (NumPy releases the GIL while sorting).
SORT_WORKERS = min(4, os.cpu_count() or 1)


def sort_columns(X: np.ndarray, workers: int | None = None) -> np.ndarray:
    """Each column of ``X`` (shape ``(n, c)``) sorted ascending, as a C-contiguous ``(c, n)``
    array (a column is a contiguous row, as binary searches need), in column blocks on
    ``workers`` threads.

    Examples
    --------
    >>> sort_columns(np.array([[0.3, 0.1], [0.2, 0.9]])).tolist()
    [[0.2, 0.3], [0.1, 0.9]]
    """
    n, c = X.shape
    workers = SORT_WORKERS if workers is None else max(1, int(workers))
    out = np.empty((c, n), dtype=np.float64)
    if workers == 1 or c < 2 or n * c < (1 << 20):
        out[...] = X.T
        out.sort(axis=1)
        return out
    blocks = np.array_split(np.arange(c), min(c, 4 * workers))

    def run(cols):
        lo, hi = int(cols[0]), int(cols[-1]) + 1
        part = out[lo:hi]
        part[...] = X[:, lo:hi].T
        part.sort(axis=1)

    with ThreadPoolExecutor(max_workers=workers) as pool:
        list(pool.map(run, [b for b in blocks if b.size]))
    return out


@dataclass(frozen=True)
class Located:
    """Positives of a batch of column problems, located in the sorted order.

    ``col[i]`` is the column (``0 .. c-1``), ``batch[i]`` the replication (``0 .. n_batch-1``),
    ``left[i]`` the first sorted position of the positive's value in its column (its tie group
    starts there) and ``row[i]`` its row in the input (the ``ties="position"`` rule orders a tie
    group by row).
    """

    col: np.ndarray
    batch: np.ndarray
    left: np.ndarray
    row: np.ndarray
    n_batch: int = 1


class SortedColumns:
    """``c`` binary column problems ``X[:, col]`` (validated, in ``[0, 1]``), sorted once.

    Parameters
    ----------
    X : ndarray, shape (n, c)
        Validated predictions, one column per binary problem.
    workers : int, optional
        Threads for the sort (default :data:`SORT_WORKERS`).
    """

    def __init__(self, X: np.ndarray, workers: int | None = None):
        self.X = X
        self.n, self.c = X.shape
        self.values = sort_columns(X, workers)
        self._plans: dict = {}

    @classmethod
    def presorted(cls, values: np.ndarray) -> "SortedColumns":
        """Columns already sorted (``values``, shape ``(c, n)``, each row ascending) whose
        rows *are* in that order (a bootstrap resample of sorted data): row ``i`` of column
        ``col`` is sorted position ``i``, so the ``ties="position"`` order of a tie group is
        its sorted order."""
        self = cls.__new__(cls)
        self.values = np.ascontiguousarray(values, dtype=np.float64)
        self.c, self.n = self.values.shape
        self.X = self.values.T
        self._plans = {}
        return self

    def group_starts(self, col: int, positions: np.ndarray) -> np.ndarray:
        """First sorted position of the tie group of each sorted position of column ``col``."""
        v = self.values[col]
        new = np.empty(self.n, dtype=bool)
        new[0] = True
        np.not_equal(v[1:], v[:-1], out=new[1:])
        first = np.maximum.accumulate(np.where(new, np.arange(self.n), 0))
        return first[positions]

    # ------------------------------------------------------------------ positives
    def locate(self, cols: np.ndarray, rows: np.ndarray, batch: np.ndarray | None = None,
               n_batch: int = 1) -> Located:
        """Sorted positions of the positives ``(cols[i], rows[i])`` (one binary search per
        column that has positives)."""
        cols = np.asarray(cols, dtype=np.int64)
        rows = np.asarray(rows, dtype=np.int64)
        batch = np.zeros(cols.shape[0], dtype=np.int64) if batch is None else batch
        left = np.empty(cols.shape[0], dtype=np.int64)
        if self.c == 1:
            left[:] = np.searchsorted(self.values[0], self.X[rows, 0], side="left")
        else:
            order = np.argsort(cols, kind="stable")
            counts = np.bincount(cols, minlength=self.c)
            starts = np.concatenate([[0], np.cumsum(counts)])
            vals = self.X[rows[order], cols[order]]
            for col in np.flatnonzero(counts).tolist():
                s, e = starts[col], starts[col + 1]
                left[order[s:e]] = np.searchsorted(self.values[col], vals[s:e], side="left")
        return Located(cols, batch, left, rows, n_batch)

    def locate_positives(self, positives: list) -> Located:
        """:meth:`locate` for one list of positive rows per column (the data's outcomes)."""
        cols = np.concatenate([np.full(r.shape[0], c, dtype=np.int64)
                               for c, r in enumerate(positives)])
        rows = np.concatenate([np.asarray(r, dtype=np.int64) for r in positives])
        return self.locate(cols, rows)

    # ------------------------------------------------------------------ plans
    def plan(self, m: int, binning: str) -> "BinPlan":
        """The :class:`BinPlan` of ``m`` bins (cached)."""
        key = (int(m), binning)
        if key not in self._plans:
            self._plans[key] = BinPlan(self, int(m), binning)
        return self._plans[key]

    def variance_sums(self, plan: "BinPlan") -> np.ndarray:
        """``sum p (1 - p)`` over each bin, shape ``(c, m)``: the variance of the bin's
        positive count under the calibrated null."""
        return plan.reduce(self.pq)

    @property
    def pq(self) -> np.ndarray:
        """``p (1 - p)`` in sorted order, shape ``(c, n)`` (computed once)."""
        if getattr(self, "_pq", None) is None:
            self._pq = self.values * (1.0 - self.values)
        return self._pq


class BinPlan:
    """One binning of a :class:`SortedColumns`: bin boundaries as sorted positions.

    Attributes
    ----------
    m, requested : int
        Bins in the plan and bins asked for: equal-mass plans keep all ``m``; equal-width
        plans keep only the non-empty bins (at most ``min(m, n)`` per column, padded at the
        end with empty ones to a common count), since an empty bin adds nothing to any
        measure -- so ``m = 10^6`` bins on 50 samples costs nothing.
    starts : ndarray, shape (c, m + 1)
        First sorted position of each bin, then ``n`` (equal-mass: the same in every column).
    count, sum_prob : ndarray, shape (c, m)
    groups : dict
        Equal-mass bins only: for each column with a tie group straddling a boundary, the
        groups ``(a, e, overlaps)`` of :func:`calnotes._ties.straddling_groups`.
    """

    def __init__(self, sc: SortedColumns, m: int, binning: str):
        self.sc, self.m, self.binning = sc, m, binning
        self.requested = m
        n, c = sc.n, sc.c
        if binning == "mass":
            bounds = (np.arange(m + 1, dtype=np.int64) * n) // m
            self.starts = np.broadcast_to(bounds, (c, m + 1))
            inner = bounds[1:-1]
            straddled = np.flatnonzero((sc.values[:, inner - 1] == sc.values[:, inner])
                                       .any(axis=1)) if inner.size else np.empty(0, np.int64)
            self.groups = {int(col): _ties.straddling_groups(sc.values[col], bounds)
                           for col in straddled.tolist()}
        elif binning == "width":
            # Equal-width bins are runs of the sorted order; only the non-empty ones matter
            # (an empty bin has S_j = 0), so the plan keeps those, at most min(m, n) per
            # column, padded at the end with empty bins to a common count.
            edges = np.arange(m + 1, dtype=np.float64) / m
            kept = []
            for col in range(c):
                s = np.concatenate([[0], np.searchsorted(sc.values[col], edges[1:m],
                                                         side="left"), [n]])
                kept.append(s[:-1][np.diff(s) > 0])
            width = max(1, max(k.shape[0] for k in kept))
            starts = np.full((c, width + 1), n, dtype=np.int64)
            for col, k in enumerate(kept):
                starts[col, :k.shape[0]] = k
            self.requested = m
            self.m = m = width
            self.starts = starts
            self.groups = {}
        else:
            raise ValueError(f"binning: expected 'width' or 'mass', got {binning!r}")
        self.count = np.diff(self.starts, axis=1).astype(np.float64)
        self.sum_prob = self.reduce(sc.values)
        self._group_rows: dict = {}

    def reduce(self, sorted_values: np.ndarray) -> np.ndarray:
        """Sums of a ``(c, n)`` array (in sorted order) over each bin, shape ``(c, m)``."""
        n, m = self.sc.n, self.m
        if self.binning == "mass":
            return np.add.reduceat(sorted_values, self.starts[0, :-1], axis=1)
        c = sorted_values.shape[0]
        out = np.zeros((c, m))
        for col in range(c):
            s = self.starts[col]
            filled = s[1:] > s[:-1]
            if filled.any():
                out[col, filled] = np.add.reduceat(sorted_values[col], s[:-1][filled])
        return out

    # ------------------------------------------------------------------ statistics
    def bins_of(self, loc: Located) -> np.ndarray:
        """Bin of each positive of ``loc`` (its tie group's first position decides; a group
        never straddles an equal-width edge)."""
        n, m = self.sc.n, self.m
        if self.binning == "mass":
            return quantile_bin_of_position(loc.left, n, m)
        # integer keys, exact: the last kept bin of the column starting at or before `left`
        flat = (self.starts[:, :m] + (np.arange(self.sc.c) * (n + 1))[:, None]).ravel()
        keys = loc.col * (n + 1) + loc.left
        return np.searchsorted(flat, keys, side="right") - 1 - loc.col * m

    def measure_values(self, loc: Located, ties: str, names) -> dict:
        """``{name: values}`` of the measures ``names`` (all on this binning) for the
        ``loc.n_batch * c`` column problems of ``loc``; one pass over the positives."""
        c, m, n, nb = self.sc.c, self.m, self.sc.n, loc.n_batch
        if self.groups:
            stats = self.stats(loc, ties)
            return {name: measure_columns(stats, name) for name in names}
        keys = (loc.batch * c + loc.col) * m + self.bins_of(loc)
        counts = np.bincount(keys, minlength=nb * c * m).reshape(nb, c, m)
        S = np.abs(self.sum_prob[None] - counts)
        out = {}
        for name in names:
            p = MEASURES[name][0]
            out[name] = ((S * S).sum(axis=2) / n ** 2 if p == 2 else S.sum(axis=2) / n).ravel()
        return out

    def stats(self, loc: Located, ties: str = "average") -> BinStats:
        """:class:`BinStats` of the ``loc.n_batch * c`` column problems of ``loc`` (column
        ``b * c + col`` is column ``col`` of replication ``b``)."""
        c, m, n = self.sc.c, self.m, self.sc.n
        nb = loc.n_batch
        flat_col = loc.batch * c + loc.col
        bins = self.bins_of(loc)
        count = np.broadcast_to(self.count[None], (nb, c, m)).reshape(nb * c, m)
        sum_prob = np.broadcast_to(self.sum_prob[None], (nb, c, m)).reshape(nb * c, m)
        if not self.groups:
            sum_outcome = np.bincount(flat_col * m + bins, minlength=nb * c * m)
            return BinStats(count=count, sum_prob=sum_prob,
                            sum_outcome=sum_outcome.reshape(nb * c, m).astype(np.float64), n=n)
        member = np.zeros(loc.left.shape[0], dtype=bool)
        parts: list = []
        adds: list = []
        fixed_adds: list = []
        by_col = np.argsort(loc.col, kind="stable")          # positives grouped by column
        col_start = np.concatenate([[0], np.cumsum(np.bincount(loc.col, minlength=c))])
        for col, groups in self.groups.items():
            in_col = by_col[col_start[col]:col_start[col + 1]]
            left_col = loc.left[in_col]
            for a, e, overlaps in groups:
                sel = in_col[left_col == a]                  # indices of the group's positives
                if not sel.size and ties == "position":
                    continue
                member[sel] = True
                if ties == "position":
                    rank = np.searchsorted(self._rows_of_group(col, a, e), loc.row[sel])
                    pos = a + rank
                    adds.append((flat_col[sel] * m + quantile_bin_of_position(pos, n, m),
                                 np.ones(pos.shape[0])))
                    continue
                K = np.bincount(loc.batch[sel], minlength=nb)             # per replication
                targets = np.arange(nb, dtype=np.int64) * c + col
                # K = 0 or K = N: the group's share of a bin is certain (0 or o positives)
                random = (K > 0) & (K < e - a)
                for j, o in overlaps:
                    adds.append((targets * m + j, o * K / (e - a)))
                    fixed_adds.append((targets[~random] * m + j, (o * K // (e - a))[~random]))
                    if random.any():
                        parts.append((targets[random], np.full(int(random.sum()), j),
                                      np.full(int(random.sum()), e - a), K[random],
                                      np.full(int(random.sum()), o)))
        fixed = np.bincount((flat_col * m + bins)[~member], minlength=nb * c * m)
        fixed = fixed.astype(np.float64)
        sum_outcome = fixed.copy()
        for keys, weights in adds:
            sum_outcome += np.bincount(keys, weights=weights, minlength=nb * c * m)
        for keys, weights in fixed_adds:
            fixed += np.bincount(keys, weights=weights, minlength=nb * c * m)
        shape = (nb * c, m)
        if ties == "position" or not parts:
            return BinStats(count=count, sum_prob=sum_prob, sum_outcome=sum_outcome.reshape(shape),
                            n=n)
        tie_parts = TieParts(*(np.concatenate([p[i] for p in parts]).astype(np.int64)
                               for i in range(5)))
        return BinStats(count=count, sum_prob=sum_prob, sum_outcome=sum_outcome.reshape(shape),
                        n=n, parts=tie_parts, fixed_outcome=fixed.reshape(shape))

    def _rows_of_group(self, col: int, a: int, e: int) -> np.ndarray:
        """Rows of the tie group at sorted positions ``[a, e)`` of column ``col``, ascending
        (the order ``ties="position"`` gives them)."""
        key = (col, a)
        if key not in self._group_rows:
            value = self.sc.values[col, a]
            self._group_rows[key] = np.flatnonzero(self.sc.X[:, col] == value)
        return self._group_rows[key]




# ---------------------------------------------------------------------- measures from stats
MEASURES = {
    # name: (p, binning): the binned measures of calnotes.evaluate's rows
    "ECE": (1, "width"),
    "l1-QECE": (1, "mass"),
    "l2-QECE": (2, "mass"),
}


def measure_columns(stats: BinStats, name: str) -> np.ndarray:
    """Value of measure ``name`` for every column of ``stats`` (shape ``(columns,)``), exactly
    as :mod:`calnotes.measures` computes it from the same :class:`BinStats`."""
    p, _ = MEASURES[name]
    if p == 2:
        return stats.abs_moment(2).sum(axis=1) / stats.n ** 2
    return stats.abs_moment(1).sum(axis=1) / stats.n
