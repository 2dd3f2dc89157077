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

so neither re-validates nor re-sorts anything.  Which measures, and their formula, come from
their specifications (:mod:`calnotes.core.measure_spec`).  Equal-width bins are contiguous runs of the
sorted order (their boundaries are binary searches of the edges ``j / m``), so every bin count
costs ``O(c m log n)`` plus one pass for the prediction sums.

Every step works on all columns at once -- the binary searches of all columns in one
vectorised call (:func:`searchsorted_rows`), the straddling tie groups of all columns from one
comparison at the boundaries (:func:`straddling_groups_rows`), the bin sums of all columns from
one ``reduceat`` -- and the passes over the whole matrix run in column ranges on
:data:`SORT_WORKERS` threads (every CPU the process may use; ``CALNOTES_THREADS`` overrides).
A bootstrap block of resamples is a :meth:`SortedColumns.presorted` matrix with one column per
(resample, column), so the same code evaluates every resample of the block at once.

The numbers are those of :func:`calnotes._engine.bin_stats.bin_stats` (the same bins, the same tie rule
and the same :class:`calnotes._engine.bin_stats.BinStats`); only the order of floating-point additions
in the equal-width prediction sums differs (``reduceat`` over the sorted order instead of
``bincount`` in input order), a relative difference of order ``n`` units in the last place.
"""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass

import numpy as np

from .bin_stats import BinStats, TieParts
from ..core.measure_spec import BINNED_MEASURES, measure_spec
from .pool import reduceat_rows, worker_pool
from ..core.binning import quantile_bin_of_position


def available_workers() -> int:
    """Threads for calnotes' parallel NumPy work: the environment variable
    ``CALNOTES_THREADS`` if set (a positive integer), else every CPU this process may run on
    (``os.sched_getaffinity``; ``os.cpu_count`` where that does not exist).

    Examples
    --------
    >>> available_workers() >= 1
    True
    """
    env = os.environ.get("CALNOTES_THREADS", "").strip()
    if env:
        try:
            value = int(env)
        except ValueError:
            value = 0
        if value < 1:
            raise ValueError(f"CALNOTES_THREADS: expected a positive integer, got {env!r}")
        return value
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):          # not Linux
        return max(1, os.cpu_count() or 1)


#: Worker threads for the column sorts and the other parallel NumPy work of the binned rows
#: (NumPy releases the GIL in sorts, gathers and ufuncs on large arrays): every available CPU.
SORT_WORKERS = available_workers()
#: Fewest elements of work per thread chunk (smaller jobs run on the calling thread: a thread
#: hand-off costs about as much as a NumPy pass over this many elements).
_MIN_CHUNK = 1 << 16
#: Queries per row from which :func:`searchsorted_rows` calls ``np.searchsorted`` row by row
#: (a C binary search per query) rather than its vectorised bisection (about 8 NumPy passes
#: over the queries per halving).
_PER_ROW_SEARCH = 64
#: Largest ``columns x requested bins`` for which an equal-width plan keeps a direct index
#: from (column, bin of the edges) to its kept bin (otherwise: binary searches of positions).
_KEPT_INDEX_BUDGET = 1 << 24


def threads_for(work: int, unit: int, workers: int | None = None) -> int:
    """Threads worth starting for ``work`` elements of divisible work: one per ``unit``
    elements, at least one and at most ``workers`` (default :data:`SORT_WORKERS`).

    Between its NumPy calls a thread holds the interpreter lock, so threads given little
    work mostly wait for it: on a 16-core host the default report on 500 binary predictions
    took 0.45 s with every part split across 16 threads and 0.18 s on one
    (benchmarks/device/thread_sweep_16cores.json).

    Examples
    --------
    >>> threads_for(10 ** 6, 1 << 20, workers=16), threads_for(10 ** 8, 1 << 20, workers=16)
    (1, 16)
    """
    workers = SORT_WORKERS if workers is None else max(1, int(workers))
    return int(max(1, min(workers, work // max(1, unit))))


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

    with worker_pool(workers) as pool:
        list(pool.map(run, [b for b in blocks if b.size]))
    return out


def parallel_ranges(run, total: int, workers: int | None = None,
                    min_chunk: int | None = None, cost: int = 1) -> None:
    """Call ``run(lo, hi)`` on consecutive ranges covering ``0 .. total``, on ``workers``
    threads (default :data:`SORT_WORKERS`) when there is enough work: ``total * cost`` at
    least ``2 * min_chunk`` elements.  ``run`` must write disjoint outputs; the result does
    not depend on the split (each range is computed as on its own).

    Examples
    --------
    >>> out = np.zeros(10)
    >>> def run(lo, hi):
    ...     out[lo:hi] = np.arange(lo, hi)
    >>> parallel_ranges(run, 10, workers=2, min_chunk=1)
    >>> out.tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    """
    min_chunk = _MIN_CHUNK if min_chunk is None else min_chunk
    parts = min(total, threads_for(total * max(1, cost), min_chunk, workers))
    if parts <= 1:
        run(0, total)
        return
    cuts = np.linspace(0, total, parts + 1).astype(np.int64).tolist()
    with worker_pool(parts) as pool:
        for f in [pool.submit(run, lo, hi) for lo, hi in zip(cuts[:-1], cuts[1:]) if hi > lo]:
            f.result()


def searchsorted_rows(values: np.ndarray, rows: np.ndarray, queries: np.ndarray,
                      side: str = "left", workers: int | None = None) -> np.ndarray:
    """``np.searchsorted(values[rows[i]], queries[i], side)`` for every ``i`` at once, in
    chunks on ``workers`` threads.  Queries grouped by row, many per row: one
    ``np.searchsorted`` per row; otherwise a binary search vectorised over the queries
    (``bit_length(n)`` rounds of one gather and one comparison each).  Integer positions,
    so exactly what the per-row calls give.

    Parameters
    ----------
    values : ndarray, shape (r, n)
        C-contiguous, each row sorted ascending (no NaN).
    rows : ndarray of int, shape (q,)
    queries : ndarray, shape (q,)
    side : {"left", "right"}

    Examples
    --------
    >>> v = np.array([[0.1, 0.2, 0.2, 0.7], [0.0, 0.5, 0.5, 1.0]])
    >>> searchsorted_rows(v, np.array([0, 0, 1, 1]), np.array([0.2, 0.9, 0.5, -1.0])).tolist()
    [1, 4, 1, 0]
    >>> searchsorted_rows(v, np.array([0, 1]), np.array([0.2, 0.5]), side="right").tolist()
    [3, 3]
    """
    values = np.ascontiguousarray(values)
    r, n = values.shape
    rows = np.asarray(rows, dtype=np.int64)
    queries = np.asarray(queries)
    q = rows.shape[0]
    out = np.empty(q, dtype=np.int64)
    if q == 0:
        return out
    if q >= 2 and bool((rows[1:] >= rows[:-1]).all()):
        cut = np.flatnonzero(rows[1:] != rows[:-1]) + 1
        if q >= _PER_ROW_SEARCH * (cut.shape[0] + 1):
            # many queries per row, grouped by row: NumPy's own search, one call per row
            # (it releases the GIL), rows split across the threads
            seg = np.concatenate([[0], cut, [q]]).tolist()
            first_row = rows[np.asarray(seg[:-1], dtype=np.int64)].tolist()

            def per_row(a, b):
                for i in range(a, b):
                    lo, hi = seg[i], seg[i + 1]
                    out[lo:hi] = np.searchsorted(values[first_row[i]], queries[lo:hi], side)

            parallel_ranges(per_row, len(seg) - 1, workers, cost=q // (len(seg) - 1) * 16)
            return out
    flat = values.ravel()
    below = np.less if side == "left" else np.less_equal
    steps = int(n).bit_length()

    def run(a, b):
        base = rows[a:b] * n
        x = queries[a:b]
        lo = np.zeros(b - a, dtype=np.int64)
        hi = np.full(b - a, n, dtype=np.int64)
        for _ in range(steps):          # invariant: values[:lo] < x (left), values[hi:] >= x
            mid = (lo + hi) >> 1
            go = below(flat[base + np.minimum(mid, n - 1)], x)
            go &= lo < hi
            np.copyto(lo, mid + 1, where=go)
            np.copyto(hi, mid, where=~go & (lo < hi))
        out[a:b] = lo

    parallel_ranges(run, q, workers, cost=2 * steps)
    return out


def straddling_groups_rows(values: np.ndarray, bounds: np.ndarray,
                           workers: int | None = None) -> tuple:
    """:func:`calnotes._engine.ties.straddling_groups` of every row of ``values`` (shape ``(c, n)``,
    rows sorted) at once, as flat arrays in the order ``(row, group)`` (groups ascending):
    ``g_col, g_a, g_e`` -- the row and the sorted positions ``[a, e)`` of each group -- and its
    overlaps in the order ``(row, group, bin)``: ``q_g`` (group index), ``q_j`` (bin),
    ``q_o`` (members in the bin).

    Examples
    --------
    >>> v = np.array([[0.1, 0.5, 0.5, 0.5, 0.9, 0.9], [0.1, 0.2, 0.3, 0.4, 0.5, 0.6]])
    >>> [a.tolist() for a in straddling_groups_rows(v, np.array([0, 2, 4, 6]))]
    [[0], [1], [4], [0, 0], [0, 1], [1, 2]]
    """
    values = np.ascontiguousarray(values)
    c, n = values.shape
    m = bounds.shape[0] - 1
    inner = np.asarray(bounds[1:-1], dtype=np.int64)
    empty = np.empty(0, dtype=np.int64)
    if inner.size == 0 or c == 0:
        return (empty,) * 6
    cc, ii = np.nonzero(values[:, inner - 1] == values[:, inner])      # (row, boundary) order
    if cc.size == 0:
        return (empty,) * 6
    x = values[cc, inner[ii]]
    a = searchsorted_rows(values, cc, x, "left", workers)
    key = cc * (n + 1) + a                        # ascending: rows, then positions
    first = np.ones(key.shape[0], dtype=bool)
    np.not_equal(key[1:], key[:-1], out=first[1:])
    g_col, g_a, x = cc[first], a[first], x[first]
    g_e = searchsorted_rows(values, g_col, x, "right", workers)
    j_lo = ((g_a + 1) * m + n - 1) // n - 1       # bin of sorted position a (eq. (1))
    j_hi = (g_e * m + n - 1) // n - 1             # bin of sorted position e - 1
    per = j_hi - j_lo + 1
    q_g = np.repeat(np.arange(g_col.shape[0], dtype=np.int64), per)
    offsets = np.cumsum(per) - per
    q_j = j_lo[q_g] + (np.arange(q_g.shape[0], dtype=np.int64) - offsets[q_g])
    b = np.asarray(bounds, dtype=np.int64)
    q_o = np.minimum(g_e[q_g], b[q_j + 1]) - np.maximum(g_a[q_g], b[q_j])
    return g_col, g_a, g_e, q_g, q_j, q_o


def mass_edges(n: int, m: int) -> np.ndarray:
    """Sorted positions where the ``m`` equal-mass bins of ``n`` samples start, then ``n``:
    ``floor(j n / m)`` (eq. (1): position ``i`` is in bin ``ceil((i + 1) m / n) - 1``).

    Examples
    --------
    >>> mass_edges(10, 3).tolist()
    [0, 3, 6, 10]
    """
    return (np.arange(m + 1, dtype=np.int64) * n) // m


def _group_starts_rows(v: np.ndarray) -> np.ndarray:
    """First sorted position of the tie group of every position of each (sorted) row of
    ``v``, shape ``v.shape``, as the smallest integer type that holds ``n``."""
    n = v.shape[1]
    dtype = np.int32 if n < 2 ** 31 else np.int64
    new = np.empty(v.shape, dtype=bool)
    new[:, 0] = True
    np.not_equal(v[:, 1:], v[:, :-1], out=new[:, 1:])
    first = np.where(new, np.arange(n, dtype=dtype), dtype(0))
    np.maximum.accumulate(first, axis=1, out=first)
    return first


def width_raw_bins(values: np.ndarray, m: int) -> np.ndarray:
    """Equal-width bin of each value of ``[0, 1]`` among ``m``: ``#{j in 1..m-1 : j/m <=
    value}`` with the edges ``np.arange(m + 1) / m`` -- what ``np.searchsorted(edges[1:m],
    values, "right")`` gives, and the bins of the sorted positions of :class:`BinPlan`
    (``value >= edge`` exactly when its position is at or after the edge's start).  ``floor(m
    v)`` is off by at most one; one comparison with each neighbouring edge corrects it.

    Examples
    --------
    >>> width_raw_bins(np.array([0.0, 0.1, 1 / 3, np.nextafter(1 / 3, 0), 1.0]), 3).tolist()
    [0, 0, 1, 0, 2]
    """
    edges = np.arange(m + 1, dtype=np.float64) / m
    e = np.concatenate([[-np.inf], edges[1:m], [np.inf]])
    raw = (values * m).astype(np.int64)
    np.minimum(raw, m - 1, out=raw)
    raw += e[raw + 1] <= values
    raw -= e[raw] > values
    return raw


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

    Attributes
    ----------
    values : ndarray, shape (c, n)
        Each column sorted ascending.
    left : ndarray of int, shape (n, 1), or None
        One column only: the first sorted position of each row's value (its group start).
    order : ndarray of int, shape (1, n), or None
        One column only: its stable sorting permutation (``values[0] = X[order[0], 0]``),
        which the bootstrap uses.  (For many columns an argsort would cost about twice the
        sort; the class-wise null locates the few entries its draws hit instead.)
    """

    def __init__(self, X: np.ndarray, workers: int | None = None):
        self.X = X
        self.n, self.c = X.shape
        self.order = None
        self.left = None
        self.is_presorted = False
        self.group = self.c
        self.workers = workers
        if self.c == 1:
            order = np.argsort(X[:, 0], kind="stable")
            self.values = np.ascontiguousarray(X[order, 0], dtype=np.float64)[None, :]
            self.order = order[None, :]
            left = np.empty(self.n, dtype=np.int64)
            left[order] = _group_starts_rows(self.values)[0]
            self.left = left[:, None]
        else:
            self.values = sort_columns(X, workers)
        self._plans: dict = {}
        self._pq_sums = None

    @classmethod
    def presorted(cls, values: np.ndarray, group: int = 1) -> "SortedColumns":
        """Columns already sorted (``values``, shape ``(c, n)``, each row ascending) whose
        rows *are* in that order (a bootstrap resample of sorted data): row ``i`` of column
        ``col`` is sorted position ``i``, so the ``ties="position"`` order of a tie group is
        its sorted order.

        ``group``: the columns are consecutive groups of ``group`` columns that each stand
        for one problem (a block of bootstrap resamples of a ``group``-column problem); an
        equal-width plan then sums each column over the bins its own group would keep (the
        padding of a plan made for that group alone), so that every value is the one of the
        group evaluated alone, to the last bit."""
        self = cls.__new__(cls)
        self.group = int(group)
        self.values = np.ascontiguousarray(values, dtype=np.float64)
        self.c, self.n = self.values.shape
        self.X = self.values.T
        self.order = self.left = None
        self.is_presorted = True
        self.workers = None
        self._plans = {}
        self._pq_sums = None
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
        if self.left is not None:
            left[:] = self.left[rows, cols]
        elif self.c == 1:
            left[:] = np.searchsorted(self.values[0], self.X[rows, 0], side="left")
        else:                       # one vectorised binary search for all columns
            left[:] = searchsorted_rows(self.values, cols, self.X[rows, cols], "left",
                                        self.workers)
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
        positive count under the calibrated null.  Computed for every plan made so far in
        one pass over column blocks (``p (1 - p)`` is never held for the whole matrix), and
        cached."""
        if plan.variance is None:
            self._pq_pass()
        return plan.variance

    def pq_sums(self) -> np.ndarray:
        """``sum_i p_i (1 - p_i)`` of each column, shape ``(c,)`` (cached)."""
        if self._pq_sums is None:
            self._pq_pass()
        return self._pq_sums

    def _pq_pass(self, block: int = 16) -> None:
        """:meth:`pq_sums` and the :meth:`variance_sums` of every plan without them, from
        ``p (1 - p)`` of ``block`` columns at a time (the same sums as on the whole array),
        column ranges on the worker threads.

        Safe to call from several threads (the rows' references run on threads): one pass at
        a time (:data:`_PQ_LOCK`), and each plan's sums are published only once complete, so
        no thread reads sums that another's pass has not filled yet."""
        with _PQ_LOCK:
            plans = [p for p in self._plans.values() if p.variance is None]
            if not plans and self._pq_sums is not None:
                return                                  # another thread's pass did it
            sums = np.empty(self.c)
            variance = [np.empty((self.c, p.m)) for p in plans]

            def run(first, last):
                for lo in range(first, last, block):
                    hi = min(last, lo + block)
                    v = self.values[lo:hi]
                    pq = v * (1.0 - v)
                    sums[lo:hi] = pq.sum(axis=1)
                    for p, var in zip(plans, variance):
                        var[lo:hi] = p.reduce(pq, lo)

            parallel_ranges(run, self.c, self.workers, cost=self.n * (2 + len(plans)))
            for p, var in zip(plans, variance):
                p.variance = var
            self._pq_sums = sums

    @property
    def pq(self) -> np.ndarray:
        """``p (1 - p)`` in sorted order, shape ``(c, n)`` (computed on demand, not kept)."""
        return self.values * (1.0 - self.values)


#: One :meth:`SortedColumns._pq_pass` at a time, in every thread (module-level: the
#: objects stay picklable).
_PQ_LOCK = threading.Lock()


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
        groups ``(a, e, overlaps)`` of :func:`calnotes._engine.ties.straddling_groups`.
    """

    def __init__(self, sc: SortedColumns, m: int, binning: str):
        self.sc, self.m, self.binning = sc, m, binning
        self.requested = m
        n, c = sc.n, sc.c
        self._flat: tuple | None = None
        self._groups: dict | None = None
        self.row_width: np.ndarray | None = None      # width plans of grouped columns
        if binning == "mass":
            bounds = mass_edges(n, m)
            self.starts = np.broadcast_to(bounds, (c, m + 1))
            g_col, g_a, g_e, q_g, q_j, q_o = straddling_groups_rows(sc.values, bounds,
                                                                      sc.workers)
            self._flat = (g_col * (n + 1) + g_a, g_col, g_e - g_a, q_g, q_j, q_o)
            self._g_e = g_e
        elif binning == "width":
            # Equal-width bins are runs of the sorted order; only the non-empty ones matter
            # (an empty bin has S_j = 0), so the plan keeps those, at most min(m, n) per
            # column, padded at the end with empty bins to a common count.  The starts of
            # the runs: one vectorised binary search of the m - 1 inner edges in every column.
            edges = np.arange(m + 1, dtype=np.float64) / m
            s = np.empty((c, m + 1), dtype=np.int64)
            s[:, 0], s[:, m] = 0, n
            if m > 1:
                s[:, 1:m] = searchsorted_rows(
                    sc.values, np.repeat(np.arange(c, dtype=np.int64), m - 1),
                    np.tile(edges[1:m], c), "left", sc.workers).reshape(c, m - 1)
            filled = s[:, 1:] > s[:, :-1]                                       # (c, m)
            rank = np.cumsum(filled, axis=1) - 1
            width = max(1, int(rank[:, -1].max()) + 1) if c else 1
            starts = np.full((c, width + 1), n, dtype=np.int64)
            fc, fj = np.nonzero(filled)
            starts[fc, rank[fc, fj]] = s[fc, fj]
            self.requested = m
            self.m = width
            self.starts = starts
            self._groups = {}
            g = sc.group
            if 0 < g < c:                   # columns of separate problems: their own widths
                own = (rank[:, -1] + 1).reshape(-1, g).max(axis=1)
                self.row_width = np.repeat(np.maximum(own, 1), g)
            # kept bin of (column, bin of the edges): a value's bin is found from the value
            # itself (binary search of the m - 1 inner edges), which agrees with the sorted
            # positions' runs by construction (value >= edge <=> position >= its start)
            self._kept_index = None
            if c * m <= _KEPT_INDEX_BUDGET:
                index = np.full((c, m), -1, dtype=np.int64)
                index[fc, fj] = rank[fc, fj]
                self._kept_index = index.ravel()
            m = width
        else:
            raise ValueError(f"binning: expected 'width' or 'mass', got {binning!r}")
        self.count = np.diff(self.starts, axis=1).astype(np.float64)
        self.sum_prob = np.empty((c, self.m))

        def run(lo, hi):            # column ranges on the worker threads
            self.sum_prob[lo:hi] = self.reduce(sc.values[lo:hi], lo)

        parallel_ranges(run, c, sc.workers, cost=n)
        self._group_rows: dict = {}
        self.variance: np.ndarray | None = None     # set by SortedColumns.variance_sums

    def reduce(self, sorted_values: np.ndarray, first: int = 0) -> np.ndarray:
        """Sums of a ``(c, n)`` array (in sorted order) over each bin, shape ``(c, m)``; or of
        the columns ``first, first + 1, ...`` for a block of rows of such an array."""
        n, m = self.sc.n, self.m
        if self.binning == "mass":
            return reduceat_rows(sorted_values, self.starts[0, :-1])
        # the non-empty bins of all columns as consecutive runs of the flattened rows (the
        # first kept bin of a column starts at 0, its last ends at n): one reduceat, the same
        # sums as one reduceat per column
        c = sorted_values.shape[0]
        out = np.zeros((c, m))
        s = self.starts[first:first + c]
        filled = s[:, 1:] > s[:, :-1]
        fc, fj = np.nonzero(filled)
        if fc.size:
            flat = np.ascontiguousarray(sorted_values).reshape(-1)
            out[fc, fj] = np.add.reduceat(flat, fc * n + s[fc, fj])
        return out

    @property
    def has_groups(self) -> bool:
        """Whether a tie group straddles a boundary of this plan (equal-mass bins only)."""
        return self._flat is not None and self._flat[0].shape[0] > 0

    @property
    def groups(self) -> dict:
        """For each column with a tie group straddling a boundary, its groups ``(a, e,
        overlaps)`` as :func:`calnotes._engine.ties.straddling_groups` lists them (built on demand
        from the flat arrays of :func:`straddling_groups_rows`)."""
        if self._groups is None:
            out: dict = {}
            if self.has_groups:
                _, g_col, _, q_g, q_j, q_o = self._flat
                g_a = self._flat[0] - g_col * (self.sc.n + 1)
                per = np.bincount(q_g, minlength=g_col.shape[0])
                ends = np.cumsum(per).tolist()
                q_j, q_o = q_j.tolist(), q_o.tolist()
                lo = 0
                for g, (col, a, e) in enumerate(zip(g_col.tolist(), g_a.tolist(),
                                                    self._g_e.tolist())):
                    out.setdefault(col, []).append(
                        (a, e, list(zip(q_j[lo:ends[g]], q_o[lo:ends[g]]))))
                    lo = ends[g]
            self._groups = out
        return self._groups

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

    def bins_of_entries(self, cols: np.ndarray, left: np.ndarray,
                        values: np.ndarray | None) -> np.ndarray:
        """Bin of the entries ``(row, cols[i])`` with group starts ``left`` and predictions
        ``values`` (equal-width plans need the values; equal-mass plans only ``left``), as
        :meth:`bins_of` finds them."""
        if self.binning == "mass":
            return quantile_bin_of_position(left, self.sc.n, self.m)
        if self._kept_index is None:
            cols = np.asarray(cols, dtype=np.int64)
            return self.bins_of(Located(cols, cols, np.asarray(left, dtype=np.int64), cols))
        m = self.requested
        return self._kept_index[cols * np.int64(m) + width_raw_bins(values, m)]

    def tie_codes_of_entries(self, cols: np.ndarray, left: np.ndarray) -> np.ndarray:
        """One code per entry ``(row, cols[i])`` with group start ``left[i]`` (a plan with
        straddling tie groups): ``g`` where the entry's tie group is straddling group ``g``
        (``g < G``), else ``G + column * m + bin``.  A replication's ``bincount`` of its
        entries' codes holds the two integer tables of :meth:`_average_stats`: each
        straddling group's positives and each bin's other positives."""
        n, m = self.sc.n, self.m
        g_key = self._flat[0]
        G = g_key.shape[0]
        cols = np.asarray(cols, dtype=np.int64)
        left = np.asarray(left, dtype=np.int64)
        key = cols * (n + 1) + left
        idx = np.minimum(np.searchsorted(g_key, key), G - 1)
        member = g_key[idx] == key
        codes = cols * m + quantile_bin_of_position(left, n, m)
        codes += G
        codes[member] = idx[member]
        return codes

    def values_from_counts(self, counts: np.ndarray, names) -> dict:
        """``{name: values}`` from the positives' counts, shape ``(nb, c, m)``, of ``nb``
        replications (no straddling tie groups): shape ``(nb * c,)`` each, by
        :meth:`calnotes.core.measure_spec.BinnedMeasure.value` of ``|S_j|^p``."""
        S = counts.astype(np.float64)
        np.subtract(self.sum_prob[None], S, out=S)
        np.abs(S, out=S)
        specs = [measure_spec(name) for name in names]
        powers = sorted({spec.power for spec in specs})
        out = {}
        for i, p in enumerate(powers):
            if p == 1:
                moments = S
            elif p == 2 and i == len(powers) - 1:
                moments = np.multiply(S, S, out=S)          # in place: S is not read again
            else:
                moments = S ** p
            for spec in specs:
                if spec.power == p:
                    out[spec.name] = spec.value(moments, self.count, self.sc.n,
                                                self._bin_sums).ravel()
        return out

    def _bin_sums(self, S: np.ndarray) -> np.ndarray:
        """``S.sum(axis=2)`` for ``S`` of shape ``(nb, c, m)``; with :attr:`row_width`, each
        column summed over its own width only (the padding beyond it is zeros, but a pairwise
        sum over more terms groups the terms differently)."""
        if self.row_width is None:
            return S.sum(axis=2)
        out = np.empty(S.shape[:2])
        widths = self.row_width
        for w in np.unique(widths).tolist():
            cols = np.flatnonzero(widths == w)
            out[:, cols] = S[:, cols, :w].sum(axis=2)
        return out

    def measure_values(self, loc: Located, ties: str, names) -> dict:
        """``{name: values}`` of the measures ``names`` (all on this binning) for the
        ``loc.n_batch * c`` column problems of ``loc``; one pass over the positives."""
        c, m, nb = self.sc.c, self.m, loc.n_batch
        if self.has_groups:
            stats = self.stats(loc, ties)
            return {name: measure_columns(stats, name) for name in names}
        keys = (loc.batch * c + loc.col) * m + self.bins_of(loc)
        counts = np.bincount(keys, minlength=nb * c * m).reshape(nb, c, m)
        return self.values_from_counts(counts, names)

    def stats(self, loc: Located, ties: str = "average") -> BinStats:
        """:class:`BinStats` of the ``loc.n_batch * c`` column problems of ``loc`` (column
        ``b * c + col`` is column ``col`` of replication ``b``)."""
        c, m, n = self.sc.c, self.m, self.sc.n
        nb = loc.n_batch
        flat_col = loc.batch * c + loc.col
        bins = self.bins_of(loc)
        count = np.broadcast_to(self.count[None], (nb, c, m)).reshape(nb * c, m)
        sum_prob = np.broadcast_to(self.sum_prob[None], (nb, c, m)).reshape(nb * c, m)
        if not self.has_groups:
            sum_outcome = np.bincount(flat_col * m + bins, minlength=nb * c * m)
            return BinStats(count=count, sum_prob=sum_prob,
                            sum_outcome=sum_outcome.reshape(nb * c, m).astype(np.float64), n=n)
        if ties != "position":
            return self._average_stats(loc, flat_col, bins, count, sum_prob)
        if self.sc.is_presorted:
            # rows in sorted order: a tie group's "position" order is its sorted order, so
            # every positive is in the bin of its own sorted position (integer counts: the
            # same numbers as the loop over groups below)
            keys = flat_col * m + quantile_bin_of_position(loc.row, n, m)
            sum_outcome = np.bincount(keys, minlength=nb * c * m).astype(np.float64)
            return BinStats(count=count, sum_prob=sum_prob,
                            sum_outcome=sum_outcome.reshape(nb * c, m), n=n)
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

    def _flat_groups(self) -> tuple:
        """The straddling groups as flat arrays, in the order ``(column, group)``: keys
        ``col * (n + 1) + a`` (ascending), columns, sizes ``N``; and their overlaps in the
        order ``(column, group, bin)``: group index, bin, members ``o``
        (:func:`straddling_groups_rows`)."""
        return self._flat

    def _average_stats(self, loc: Located, flat_col, bins, count, sum_prob) -> BinStats:
        """:meth:`stats` with straddling tie groups under ``ties="average"``, vectorised over
        groups and replications; the same numbers, added in the same order, as the loop over
        groups of the ``"position"`` branch and of :func:`calnotes._engine.bin_stats.bin_stats`."""
        c, m, n, nb = self.sc.c, self.m, self.sc.n, loc.n_batch
        g_key, g_col, g_N, q_g, q_j, q_o = self._flat_groups()
        G = g_key.shape[0]
        key = loc.col * (n + 1)
        key += loc.left
        if c * (n + 1) <= 4 * key.shape[0]:
            # few (column, position) pairs for the positives: a table of the groups'
            # starts (G: in no straddling group), one gather per positive, not a search
            table = np.full(c * (n + 1), G, dtype=np.int64)
            table[g_key] = np.arange(G, dtype=np.int64)
            idx = table[key]
        else:
            idx = np.minimum(np.searchsorted(g_key, key), G - 1)
            idx[g_key[idx] != key] = G
        member = idx < G
        # K[b, g]: positives of group g in replication b (column G: all the others)
        idx += loc.batch * (G + 1)
        K = np.bincount(idx, minlength=nb * (G + 1)).reshape(nb, G + 1)[:, :G]
        # the other positives by bin (the members counted in a spare last cell)
        keys = flat_col * m
        keys += bins
        keys[member] = nb * c * m
        fixed = np.bincount(keys, minlength=nb * c * m + 1)[:nb * c * m].astype(np.float64)
        return self._average_from_counts(K, fixed, nb, count, sum_prob)

    def tie_positions(self, col: int) -> np.ndarray:
        """The sorted positions of column ``col`` at which
        :meth:`tie_counts_from_running` reads the running sums: the bins' starts (``0`` and
        ``n`` among them) and the straddling groups' first and past-the-end positions."""
        n = self.sc.n
        g_key, g_col, _, _, _, _ = self._flat_groups()
        gs = np.flatnonzero(g_col == col)
        return np.concatenate([self.starts[col], g_key[gs] - col * (n + 1), self._g_e[gs]])

    def tie_index(self, col: int, at: np.ndarray | None = None) -> tuple:
        """``(a, e, s)``: the straddling groups' first and past-the-end sorted positions and
        the bins' starts of column ``col`` (every group's entries; those of other columns are
        not read), or, with ``at`` (sorted positions holding :meth:`tie_positions`), their
        indices into ``at``."""
        n = self.sc.n
        g_key, g_col, _, _, _, _ = self._flat_groups()
        a = g_key - g_col * (n + 1)
        e = self._g_e
        s = self.starts[col]
        if at is not None:                               # positions -> rows of run
            a, e, s = (np.searchsorted(at, v) for v in (a, e, s))
        return a, e, s

    def tie_counts_from_running(self, run: np.ndarray, col: int, K: np.ndarray,
                                fixed: np.ndarray, index: tuple) -> None:
        """Fill ``K[:, g]`` (positives of each straddling group ``g`` of column ``col``) and
        ``fixed[:, col, :]`` (each bin's positives outside the straddling groups) of ``nb``
        replications from the running sums ``run`` of their outcomes in the column's sorted
        order, read through ``index`` = :meth:`tie_index` of ``col``: with ``at`` (sorted
        positions holding :meth:`tie_positions`), ``run[i]`` is the sum before position
        ``at[i]``; without, ``run`` has shape ``(n + 1, nb)``.  Every group lies
        in a run of sorted positions and a tie group that straddles no edge lies in one bin,
        so both are differences of two running sums: the integer counts
        :meth:`_average_stats` takes from the located positives."""
        _, g_col, _, q_g, q_j, _ = self._flat_groups()
        gs = np.flatnonzero(g_col == col)
        a, e, s = index
        K[:, gs] = (run[e[gs]] - run[a[gs]]).T
        total = (run[s[1:]] - run[s[:-1]]).astype(np.int64)                    # (m, nb)
        qs = np.flatnonzero(g_col[q_g] == col)
        g, j = q_g[qs], q_j[qs]
        inside = run[np.minimum(e[g], s[j + 1])] - run[np.maximum(a[g], s[j])]
        np.subtract.at(total, j, inside.astype(np.int64))
        fixed[:, col, :] = total.T

    def average_stats_from_counts(self, K: np.ndarray, fixed: np.ndarray) -> BinStats:
        """The tie-averaged :class:`BinStats` of ``nb`` replications from the integer counts
        of :meth:`tie_counts_from_running` (``K`` shape ``(nb, G)``, ``fixed`` ``(nb, c, m)``)."""
        c, m = self.sc.c, self.m
        nb = K.shape[0]
        count = np.broadcast_to(self.count[None], (nb, c, m)).reshape(nb * c, m)
        sum_prob = np.broadcast_to(self.sum_prob[None], (nb, c, m)).reshape(nb * c, m)
        return self._average_from_counts(K, fixed.reshape(-1).astype(np.float64), nb, count,
                                         sum_prob)

    def _average_from_counts(self, K, fixed, nb, count, sum_prob) -> BinStats:
        """The tie-averaged :class:`BinStats` from ``K[b, g]`` (positives of straddling group
        ``g`` in replication ``b``) and ``fixed`` (float, shape ``(nb * c * m,)``: the other
        positives by replication, column and bin)."""
        c, m, n = self.sc.c, self.m, self.sc.n
        g_key, g_col, g_N, q_g, q_j, q_o = self._flat_groups()
        # one entry per (overlap q, replication b), q-major: the loop order of bin_stats
        Kq = K[:, q_g].T                                               # (Q, nb)
        Nq, oq = g_N[q_g][:, None], q_o[:, None]
        targets = np.arange(nb, dtype=np.int64)[None, :] * c + g_col[q_g][:, None]
        keys = (targets * m + q_j[:, None]).ravel()
        sum_outcome = fixed.copy()
        np.add.at(sum_outcome, keys, (oq * Kq / Nq).ravel())        # sequential, in order
        random = ((Kq > 0) & (Kq < Nq)).ravel()
        fixed += np.bincount(keys[~random], weights=(oq * Kq // Nq).ravel()[~random],
                             minlength=nb * c * m)
        shape = (nb * c, m)
        if not random.any():
            return BinStats(count=count, sum_prob=sum_prob, sum_outcome=sum_outcome.reshape(shape),
                            n=n)
        Q = q_g.shape[0]
        tie_parts = TieParts(targets.ravel()[random],
                             np.broadcast_to(q_j[:, None], (Q, nb)).ravel()[random],
                             np.broadcast_to(Nq, (Q, nb)).ravel()[random],
                             Kq.ravel()[random],
                             np.broadcast_to(oq, (Q, nb)).ravel()[random])
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
#: The binned measures of calnotes.evaluate's rows (the one table of
#: :mod:`calnotes.core.measure_spec`, under its old name here).
MEASURES = BINNED_MEASURES


def measure_columns(stats: BinStats, name: str, first: np.ndarray | None = None) -> np.ndarray:
    """Value of measure ``name`` for every column of ``stats`` (shape ``(columns,)``):
    :meth:`calnotes.core.measure_spec.BinnedMeasure.of_stats` of its specification, the formula
    :mod:`calnotes.core.measures` uses too; ``first``, where given, is ``stats.abs_moment(1)``
    computed already."""
    return measure_spec(name).of_stats(stats, first)
