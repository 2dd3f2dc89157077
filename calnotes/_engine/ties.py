"""Tie groups across equal-mass bin boundaries, averaged over random orders: the numerics.

Setting.  A column of predictions is sorted; equal-mass bins cut the sorted positions (eq. (1)
of the truthfulness paper).  A *tie group* of ``N`` equal predictions that straddles a bin
boundary puts ``o`` of its members into a bin.  Under a uniformly random order of the group's
members, *which* members land there is a uniform random ``o``-subset, so the number of positive
outcomes the bin receives from the group is hypergeometric: ``H ~ Hyp(N, K, o)`` when the group
holds ``K`` positives.  A bin meets at most two straddling groups (one at each end; a bin inside
a single group meets only that one), and different groups are ordered independently, so a bin's
signed bias ``S = c - H_1 - H_2`` (``c`` the deterministic part) has an explicit law.

This module computes, vectorised over *rows* (one row per sample, or per Monte Carlo
replication, sharing the same ``N`` and ``o`` but with their own ``K`` and ``c``):

* :func:`hypergeom_pmf_rows` -- the pmf of ``Hyp(N, K, o)`` on ``0..o``, numpy only, from the
  ratio recurrence summed outwards from the mode (no ``lgamma`` of large arguments), for
  ``o > N / 2`` as the reflection of the law of the ``N - o`` members left out;
* :class:`WindowedLaws` -- the same laws on their *windows*, the values within
  ``e^-TAIL_LOG = e^-56`` of the mode (about 21 standard deviations wide, against ``o + 1``
  values: 8.7 times fewer entries on 50,000 binary predictions rounded to two decimals);
* :func:`abs_first_moments` -- ``E|c - H_1 - H_2|`` of many bins at once from the windowed
  laws: a sum over the shorter window, the other part through its running sums about its
  mean (``O(window)`` per bin, each distinct bin once);
* :func:`expected_abs_power` -- ``E|c - H_1 - H_2|^p``: closed form for ``p = 2`` (mean and
  variance), :func:`abs_first_moments` for ``p = 1``, direct sums otherwise.

The windows change ``E|S|`` by at most ``(o_1 + o_2 + 2) e^-56 (|c| + o_1 + o_2)`` besides
rounding (about 1e-21 relative for groups of a thousand); against a ``long double``
computation over the full supports they are within 1.5e-15 relative on groups of up to
20,000 members (tests/test_tie_windows.py), where the full-support sums of the earlier
engine, taken about 0 rather than the mean, lost up to 4.5e-13 to cancellation.

Used by :mod:`calnotes._engine.bin_stats` (the measures, ``ties="average"``) and
:mod:`calnotes.core.expectation` (exact expectations and Monte Carlo under the same rule).
"""

from __future__ import annotations

import numpy as np

from .poisson_binomial import accumulate_from_mode, ratios_from_mode

__all__ = ["TIES", "check_ties", "straddling_groups", "hypergeom_pmf_rows",
           "hypergeom_mean_var_arrays", "WindowedLaws", "abs_first_moments",
           "expected_abs_power"]

#: Accepted values of the ``ties`` argument of every equal-mass measure.
TIES = ("average", "position")


def check_ties(ties) -> str:
    """Validate the ``ties`` argument.

    Examples
    --------
    >>> check_ties("average")
    'average'
    """
    if ties not in TIES:
        raise ValueError(f"ties: expected 'average' (the default: the exact mean over random"
                         f" orders of tied predictions) or 'position' (eq. (1) with ties in"
                         f" input order), got {ties!r}")
    return ties


def straddling_groups(xs: np.ndarray, bounds: np.ndarray) -> list:
    """The tie groups of a sorted column that cross an equal-mass bin boundary.

    Parameters
    ----------
    xs : ndarray, shape (n,)
        Sorted predictions.
    bounds : ndarray of int, shape (m + 1,)
        First sorted position of each bin, then ``n`` (eq. (1)).

    Returns
    -------
    list of ``(a, e, overlaps)``
        Sorted positions ``[a, e)`` of each such group, in increasing order, and its overlaps
        ``[(bin j, o_j), ...]`` with the bins it meets.

    Examples
    --------
    >>> straddling_groups(np.array([0.1, 0.5, 0.5, 0.5, 0.9, 0.9]), np.array([0, 2, 4, 6]))
    [(1, 4, [(0, 1), (1, 2)])]
    """
    inner = bounds[1:-1]
    cut = inner[xs[inner - 1] == xs[inner]]
    if cut.size == 0:
        return []
    values = np.unique(xs[cut])
    lefts = np.searchsorted(xs, values, side="left")
    rights = np.searchsorted(xs, values, side="right")
    n, m = xs.shape[0], bounds.shape[0] - 1
    groups = []
    for a, e in zip(lefts.tolist(), rights.tolist()):
        j_lo = ((a + 1) * m + n - 1) // n - 1          # bin of sorted position a (eq. (1))
        j_hi = (e * m + n - 1) // n - 1                # bin of sorted position e - 1
        overlaps = [(j, min(e, int(bounds[j + 1])) - max(a, int(bounds[j])))
                    for j in range(j_lo, j_hi + 1)]
        groups.append((a, e, overlaps))
    return groups


def hypergeom_mean_var_arrays(N, K, o):
    """Mean and variance of ``Hyp(N, K, o)`` (``o`` draws without replacement from ``N``
    holding ``K`` successes), elementwise for arrays ``N``, ``K``, ``o`` of one shape.

    Examples
    --------
    >>> [v.tolist() for v in hypergeom_mean_var_arrays([4, 1], [2, 1], [2, 1])]
    [[1.0, 1.0], [0.3333333333333333, 0.0]]
    """
    N, K, o = (np.asarray(a, dtype=np.float64) for a in (N, K, o))
    frac = K / N
    with np.errstate(invalid="ignore", divide="ignore"):
        finite = np.where(N > 1, (N - o) / (N - 1), 0.0)
    return o * frac, o * frac * (1.0 - frac) * finite


def hypergeom_pmf_rows(N, K, o: int) -> np.ndarray:
    """``P(H = t)`` for ``t = 0..o``, ``H ~ Hyp(N_r, K_r, o)``, one row per entry of ``K``.

    Parameters
    ----------
    N : int or array_like of int, shape (R,)
        Group sizes (``N_r >= o``).
    K : array_like of int, shape (R,)
        Successes in the group, ``0 <= K_r <= N_r``.
    o : int
        Draws, ``0 <= o <= N_r``.

    Returns
    -------
    numpy.ndarray, shape (R, o + 1)
        Zero outside each row's support ``max(0, o - N + K) .. min(o, K)``.

    Notes
    -----
    ``log P(t+1) - log P(t) = log((K-t)(o-t)) - log((t+1)(N-K-o+t+1))``, summed outwards from
    the mode so that the partial sums stay small where the mass is; entries more than about
    ``e^-745`` below the mode underflow to zero.  Each row sums to one up to rounding.

    Examples
    --------
    >>> hypergeom_pmf_rows(4, [2], 2).round(12).tolist()   # C(2,t) C(2,2-t) / C(4,2)
    [[0.166666666667, 0.666666666667, 0.166666666667]]
    """
    K = np.atleast_1d(np.asarray(K, dtype=np.int64))
    if o == 0:
        return np.ones((K.shape[0], 1))
    return hypergeom_pmf_padded(N, K, np.full(K.shape[0], int(o), dtype=np.int64))


def hypergeom_pmf_padded(N, K, o) -> np.ndarray:
    """:func:`hypergeom_pmf_rows` with a draw count ``o[r]`` per row, zero-padded to
    ``max(o) + 1`` entries; row ``r`` is bit for bit what the rows of draw count ``o[r]`` alone
    give (:func:`hypergeom_pmf_rows` is this function with one ``o``).

    A row with ``o > N - o`` is the reflection of the law of the ``N - o`` members left out,
    ``P(H = t) = P(H' = K - t)`` with ``H' ~ Hyp(N, K, N - o)`` (:func:`_reflected`), so every
    law is computed by :func:`_pmf_recurrence` with at most ``N / 2`` draws: a bin that
    receives most of a tie group shares the law of its neighbour that receives the rest, and
    a long law is computed from the short one.

    Examples
    --------
    >>> got = hypergeom_pmf_padded([4, 6], [2, 3], [2, 3])
    >>> got[0].tolist() == hypergeom_pmf_rows(4, [2], 2)[0].tolist() + [0.0]
    True
    >>> got[1].tolist() == hypergeom_pmf_rows(6, [3], 3)[0].tolist()
    True
    >>> w = hypergeom_pmf_padded([5, 5], [2, 2], [1, 4])       # 4 of 5 = all but 1
    >>> w[1, :5].tolist() == w[0, 2::-1].tolist() + [0.0, 0.0]
    True
    """
    K = np.atleast_1d(np.asarray(K, dtype=np.int64))
    N = np.broadcast_to(np.asarray(N, dtype=np.int64), K.shape)
    o = np.broadcast_to(np.asarray(o, dtype=np.int64), K.shape)
    if K.shape[0] == 0:
        return np.empty((0, 1))
    oc = np.minimum(o, N - o)
    w = _pmf_recurrence(N, K, oc)
    flip = oc < o
    if not flip.any():
        return w
    out = np.zeros((K.shape[0], int(o.max()) + 1))
    out[:, :w.shape[1]] = w
    out[flip] = _reflected(w[flip], K[flip], o[flip], oc[flip], out.shape[1])
    return out


def _reflected(w: np.ndarray, K: np.ndarray, o: np.ndarray, oc: np.ndarray,
               width: int) -> np.ndarray:
    """Rows of ``Hyp(N, K, o)`` (zero-padded to ``width``) from rows ``w`` of
    ``Hyp(N, K, oc)``, ``oc = N - o``: the ``o`` members drawn hold ``K - H'`` positives when
    the ``oc`` left out hold ``H'``, so ``P(H = t) = w[K - t]``."""
    t = np.arange(width, dtype=np.int64)[None, :]
    s = K[:, None] - t
    inside = (s >= 0) & (s <= oc[:, None]) & (t <= o[:, None])
    return np.where(inside, np.take_along_axis(w, np.where(inside, s, 0), axis=1), 0.0)


def _hyp_grid(N, K, o, lo, width) -> tuple:
    """The grid of :func:`_log_mode_ratios` and :func:`_mode_ratios`: ``(t, Kf, Nf, of, step,
    mode, below, outside)`` -- the values ``t = lo + j`` (float), ``K``, ``N``, ``o`` as float
    columns, where a step from ``t`` to ``t + 1`` lies in the support, the mode
    (``floor((o+1)(K+1)/(N+2))`` clipped to the support), the columns before it, and the
    entries outside the row's window or support."""
    K = np.atleast_1d(np.asarray(K, dtype=np.int64))
    N = np.broadcast_to(np.asarray(N, dtype=np.int64), K.shape)
    o = np.broadcast_to(np.asarray(o, dtype=np.int64), K.shape)
    lo = np.broadcast_to(np.asarray(lo, dtype=np.int64), K.shape)
    width = np.broadcast_to(np.asarray(width, dtype=np.int64), K.shape)
    idx = np.arange(int(width.max()), dtype=np.int64)[None, :]
    t = (lo[:, None] + idx).astype(np.float64)
    Kf = K[:, None].astype(np.float64)
    Nf = N[:, None].astype(np.float64)
    of = o[:, None].astype(np.float64)
    s_lo = np.maximum(0, o - (N - K))
    s_hi = np.minimum(o, K)
    step = (t >= s_lo[:, None]) & (t < s_hi[:, None])
    mode = np.clip(np.floor((of + 1.0) * (Kf + 1.0) / (Nf + 2.0)).astype(np.int64)[:, 0],
                   s_lo, s_hi)
    below = idx < (mode - lo)[:, None]
    absolute = lo[:, None] + idx
    outside = ((idx >= width[:, None]) | (absolute < s_lo[:, None])
               | (absolute > s_hi[:, None]))
    return t, Kf, Nf, of, step, mode, below, outside


def _log_mode_ratios(N, K, o, lo, width) -> tuple:
    """``log P(t) - log P(mode)`` of ``Hyp(N[r], K[r], o[r])`` at ``t = lo[r] + j`` for
    ``j < width[r]`` (a window inside the support), padded to ``max(width)`` columns.

    The increments ``log P(t+1) - log P(t) = log((K-t)(o-t)) - log((t+1)(N-K-o+t+1))`` are
    summed outwards from the mode (``floor((o+1)(K+1)/(N+2))`` clipped to the support): above
    it a running sum from the mode, below it minus the reversed running sum down to it.  Each
    entry is that sequential sum, so it does not depend on how far the window reaches on
    either side (the padding adds zeros) nor on the other rows of the call.  Entries outside
    the row's window or support are ``-inf``.  Returns ``(logp, mode)``, ``mode`` absolute.
    """
    t, Kf, Nf, of, step, mode, below, outside = _hyp_grid(N, K, o, lo, width)
    with np.errstate(divide="ignore", invalid="ignore"):
        inc = (np.log(np.where(step, (Kf - t) * (of - t), 1.0))
               - np.log(np.where(step, (t + 1.0) * (Nf - Kf - of + t + 1.0), 1.0)))
    # below the mode the outward steps are -inc (a sum of negated terms is the negated sum,
    # bit for bit)
    logp = accumulate_from_mode(np.where(below, -inc, inc), below, np.add)
    logp[outside] = -np.inf
    return logp, mode


def _pmf_recurrence(N, K, o) -> np.ndarray:
    """The laws ``Hyp(N[r], K[r], o[r])`` from the ratio recurrence (see
    :func:`hypergeom_pmf_rows` and :func:`_log_mode_ratios`), zero-padded to ``max(o) + 1``
    entries.

    Every step of the recurrence is elementwise or a running sum along the row, except the
    final normalisation, whose pairwise sum depends on the row's length: it is taken over each
    row's own ``o + 1`` entries, rows of one ``o`` at a time.  So row ``r`` does not depend on
    the other rows of the call.
    """
    K = np.atleast_1d(np.asarray(K, dtype=np.int64))
    N = np.broadcast_to(np.asarray(N, dtype=np.int64), K.shape)
    o = np.broadcast_to(np.asarray(o, dtype=np.int64), K.shape)
    R = K.shape[0]
    if R == 0:
        return np.empty((0, 1))
    logp, _ = _log_mode_ratios(N, K, o, 0, o + 1)
    # exp(logp) <= about 1 everywhere (the mode is the largest term); zero outside the support
    w = np.exp(logp, out=logp)
    # rows of one o at a time: runs of o in ascending order (slices where o is sorted)
    ascending = bool((o[1:] >= o[:-1]).all())
    order = None if ascending else np.argsort(o, kind="stable")
    o_sorted = o if ascending else o[order]
    bounds = np.r_[0, np.flatnonzero(o_sorted[1:] != o_sorted[:-1]) + 1, R].tolist()
    for a, b in zip(bounds[:-1], bounds[1:]):
        value = int(o_sorted[a])
        rows = slice(a, b) if ascending else order[a:b]
        if ascending:
            part = w[rows, :value + 1]                      # a view: divided in place
            np.divide(part, part.sum(axis=1, keepdims=True), out=part)
        else:
            part = w[rows, :value + 1]
            w[rows, :value + 1] = part / part.sum(axis=1, keepdims=True)
    return w


def _unique_triples(a: np.ndarray, b: np.ndarray, c: np.ndarray) -> tuple:
    """``np.unique(np.stack([a, b, c], axis=1), axis=0, return_inverse=True)`` for
    non-negative integer arrays: the distinct triples in lexicographic order and each entry's
    index among them, from one integer key per triple (mixed radix ``max + 1``) where it fits
    in 63 bits -- a one-dimensional ``np.unique``, not a sort of rows.

    Examples
    --------
    >>> t, inv = _unique_triples(np.array([2, 1, 2]), np.array([5, 9, 5]), np.array([0, 3, 0]))
    >>> t.tolist(), inv.tolist()
    ([[1, 9, 3], [2, 5, 0]], [1, 0, 1])
    """
    rb, rc = int(b.max()) + 1, int(c.max()) + 1
    if (int(a.max()) + 1) * rb * rc >= 2 ** 63:
        triples, inverse = np.unique(np.stack([a, b, c], axis=1), axis=0, return_inverse=True)
        return triples, inverse.ravel()
    key = (a * rb + b) * rc + c
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    return np.stack([a[first], b[first], c[first]], axis=1), inverse.ravel()


def _budget_runs(sizes: np.ndarray, budget: int, spread: float | None = None) -> list:
    """Consecutive runs ``(lo, hi)`` of rows (``sizes`` ascending) whose padded entries
    ``(hi - lo) * (sizes[hi - 1] + 1)`` stay within ``budget`` (at least one row each), and,
    with ``spread``, whose widths ``sizes + 1`` stay within ``spread`` times the run's first
    (so that padding to the run's widest wastes little)."""
    runs, lo, U = [], 0, sizes.shape[0]
    while lo < U:
        end = U
        if spread is not None:
            end = max(lo + 1, int(np.searchsorted(sizes, spread * (sizes[lo] + 1) - 1,
                                                  side="right")))
        hi = lo + max(1, int(np.searchsorted((np.arange(lo + 1, end + 1) - lo)
                                             * (sizes[lo:end] + 1), budget, side="right")))
        hi = min(hi, end)
        runs.append((lo, hi))
        lo = hi
    return runs


#: Most widest-to-narrowest ratio of the rows of a chunk of windowed laws or of their sums:
#: less padding against more chunks.
_SPREAD = 1.5


#: The windowed laws (:class:`WindowedLaws`) keep the values ``t`` of a law with
#: ``log P(t) - log P(mode) >= -TAIL_LOG``: an entry left out is below ``e^-56`` (about
#: ``2^-80.8``) times the mode's, so a law of ``o`` draws loses at most ``o e^-56`` of its mass.
TAIL_LOG = 56.0

#: Entries (rows x padded width) of the laws and sweeps computed at once: about a dozen
#: float arrays of this size (512 KB each) stay in cache.
_CHUNK = 1 << 16


def _row_sums(values: np.ndarray, length: np.ndarray) -> np.ndarray:
    """``values[r, :length[r]].sum()`` for every row of a zero-padded block: the rows' own
    entries gathered flat and summed by ``np.add.reduceat`` (pairwise within each segment,
    whatever the segment's place in memory), so a row's sum depends on its own entries
    alone -- not on the block's width, which a padded row's ``sum(axis=1)`` would (NumPy's
    pairwise blocks run over the zeros too).  Every ``length[r] >= 1``.

    Examples
    --------
    >>> _row_sums(np.array([[1.0, 2.0, 0.0], [3.0, 0.0, 0.0]]), np.array([2, 1])).tolist()
    [3.0, 3.0]
    """
    inside = np.arange(values.shape[1], dtype=np.int64)[None, :] < length[:, None]
    starts = np.zeros(length.shape[0], dtype=np.int64)
    np.cumsum(length[:-1], out=starts[1:])
    return np.add.reduceat(values[inside], starts)


def _mode_ratios(N, K, o, lo, width) -> np.ndarray:
    """``P(t) / P(mode)`` of ``Hyp(N[r], K[r], o[r])`` at ``t = lo[r] + j`` for
    ``j < width[r]``, padded with zeros to ``max(width)`` columns (zero outside the support
    too).

    Running products of the ratios ``P(t+1) / P(t) = (K-t)(o-t) / ((t+1)(N-K-o+t+1))`` from the
    mode outwards (their inverses below it), one division each: no logarithm or exponential,
    and about 3 roundings per step (a log-ratio's increments carry about 2 x 23 eps each for
    groups of 10^5).  Each entry is that sequential product, so it does not depend on how far
    the window reaches or on the other rows of the call.  Inside a window of
    :func:`_window_laws` the products lie between ``e^-56`` and about 1: no underflow.
    """
    t, Kf, Nf, of, step, _, below, outside = _hyp_grid(N, K, o, lo, width)
    val = ratios_from_mode((Kf - t) * (of - t), (t + 1.0) * (Nf - Kf - of + t + 1.0), step,
                           below)
    val[outside] = 0.0
    return val


def _window_laws(N, K, o, budget: int | None = None) -> tuple:
    """Each law ``Hyp(N[r], K[r], o[r])`` on its window ``lo[r] .. lo[r] + length[r] - 1``, the
    values within ``e^-TAIL_LOG`` of the mode (contiguous: the law is log-concave),
    normalised over the window.  Returns ``(flat, start, lo, length)``, row ``r``'s values
    ``flat[start[r]:start[r] + length[r]]``.

    The window is first guessed from the normal approximation (``1.25 sqrt(2 TAIL_LOG)``
    standard deviations plus 8) and widened fourfold until the computed ratio to the mode at
    each end that is not the support's end lies below ``e^-TAIL_LOG``; the values kept are
    those of :func:`_mode_ratios`, which do not depend on the guess, and the normalising sum is
    pairwise over the window's own entries (``np.add.reduceat``): a row's numbers are a
    function of ``(N, K, o)`` alone.
    """
    budget = _CHUNK if budget is None else budget
    tail = np.exp(-TAIL_LOG)
    K = np.asarray(K, dtype=np.int64)
    N = np.asarray(N, dtype=np.int64)
    o = np.asarray(o, dtype=np.int64)
    R = K.shape[0]
    s_lo = np.maximum(0, o - (N - K))
    s_hi = np.minimum(o, K)
    mode = np.clip(np.floor((o + 1.0) * (K + 1.0) / (N + 2.0)).astype(np.int64), s_lo, s_hi)
    q = K / N
    var = o * q * (1.0 - q) * (N - o) / np.maximum(N - 1, 1)
    d = np.ceil(1.25 * np.sqrt(2.0 * TAIL_LOG * var)).astype(np.int64) + 8
    lo_out = np.empty(R, dtype=np.int64)
    length = np.empty(R, dtype=np.int64)
    pieces = []
    pending = np.arange(R)
    while pending.size:
        lo = np.maximum(s_lo[pending], mode[pending] - d[pending])
        hi = np.minimum(s_hi[pending], mode[pending] + d[pending])
        width = hi - lo + 1
        order = np.argsort(width, kind="stable")
        retry = []
        for a, b in _budget_runs(width[order] - 1, budget, _SPREAD):
            sel = order[a:b]
            rows = pending[sel]
            ratio = _mode_ratios(N[rows], K[rows], o[rows], lo[sel], width[sel])
            keep = ratio >= tail
            W = ratio.shape[1]
            last_col = keep[np.arange(sel.shape[0]), width[sel] - 1]
            ok = (((lo[sel] == s_lo[rows]) | ~keep[:, 0])
                  & ((hi[sel] == s_hi[rows]) | ~last_col))
            retry.append(rows[~ok])
            if not ok.any():
                continue
            rows, keep, ratio = rows[ok], keep[ok], ratio[ok]
            first = np.argmax(keep, axis=1)
            last = W - 1 - np.argmax(keep[:, ::-1], axis=1)
            lo_out[rows] = lo[sel][ok] + first
            length[rows] = last - first + 1
            pieces.append((rows, first, ratio))
        d[np.concatenate(retry)] *= 4
        pending = np.concatenate(retry)
    start = np.r_[0, np.cumsum(length)]
    flat = np.empty(int(start[-1]))
    for rows, first, ratio in pieces:
        L = length[rows]
        j = np.arange(int(L.max()), dtype=np.int64)[None, :]
        inside = j < L[:, None]
        cols = np.minimum(first[:, None] + j, ratio.shape[1] - 1)
        flat[(start[rows][:, None] + j)[inside]] = np.take_along_axis(ratio, cols, axis=1)[inside]
    # each law normalised by the pairwise sum of its own entries (a function of the law alone)
    flat /= np.repeat(np.add.reduceat(flat, start[:-1]), length)
    return flat, start[:-1], lo_out, length


class WindowedLaws:
    """The laws ``Hyp(N[r], K[r], o[r])`` of many parts, each on its window of values within
    ``e^-TAIL_LOG`` of its mode (:func:`_window_laws`): each distinct
    ``(N, K, min(o, N - o))`` computed once, a law of more than ``N / 2`` draws read backwards
    from the law of the ``N - o`` members left out (``P(H = t) = P(H' = K - t)``).

    Attributes
    ----------
    lo, length : ndarray of int
        The window of entry ``r``: ``P(H = lo[r] + j)``, ``0 <= j < length[r]``.
    rank : ndarray of int
        The rank of entry ``r``'s ``(o, N, K)`` among the distinct triples of the call, in
        lexicographic order: equal ranks are equal laws, and ranks order two laws the way
        their triples compare.

    Examples
    --------
    >>> laws = WindowedLaws([4, 5], [2, 2], [2, 4])
    >>> w, lo = laws.padded(np.array([0, 1]))
    >>> lo.tolist(), w.round(12).tolist()
    ([0, 1], [[0.166666666667, 0.666666666667, 0.166666666667], [0.4, 0.6, 0.0]])
    """

    def __init__(self, N, K, o, budget: int | None = None):
        K = np.atleast_1d(np.asarray(K, dtype=np.int64))
        N = np.broadcast_to(np.asarray(N, dtype=np.int64), K.shape)
        o = np.broadcast_to(np.asarray(o, dtype=np.int64), K.shape)
        if K.shape[0] == 0:
            self.flat = np.empty(0)
            self.start = self.lo = self.length = self.rank = np.empty(0, dtype=np.int64)
            self.backwards = np.empty(0, dtype=bool)
            return
        triples, inverse = _unique_triples(o, N, K)
        u_o, u_N, u_K = triples[:, 0], triples[:, 1], triples[:, 2]
        u_oc = np.minimum(u_o, u_N - u_o)
        canon, c_of = _unique_triples(u_oc, u_N, u_K)           # the laws computed
        flat, c_start, c_lo, c_len = _window_laws(canon[:, 1], canon[:, 2], canon[:, 0], budget)
        back = u_oc < u_o
        length = c_len[c_of]
        lo = np.where(back, u_K - (c_lo[c_of] + length - 1), c_lo[c_of])
        self.flat = flat
        self.start = c_start[c_of][inverse]
        self.lo = lo[inverse]
        self.length = length[inverse]
        self.backwards = back[inverse]
        self.rank = inverse

    def padded(self, rows: np.ndarray, width: int | None = None) -> tuple:
        """``(w, lo)``: the windows of ``rows`` (``w[i, j] = P(H = lo[i] + j)``), zero-padded
        to ``width`` (default the longest) entries."""
        L = self.length[rows]
        width = int(L.max()) if width is None else width
        j = np.arange(width, dtype=np.int64)[None, :]
        inside = j < L[:, None]
        start = self.start[rows][:, None]
        idx = np.where(self.backwards[rows][:, None], start + L[:, None] - 1 - j, start + j)
        return np.where(inside, self.flat[np.where(inside, idx, 0)], 0.0), self.lo[rows]


def _centre(N, K, o) -> np.ndarray:
    """``floor(o K / N)``, the integer part of the mean of ``Hyp(N, K, o)``: the origin of the
    running sums of :func:`abs_first_moments`."""
    return (o * K) // N


def abs_first_moments(c, N1, K1, o1, N2, K2, o2, two, budget: int | None = None) -> np.ndarray:
    r"""``E|c_r - H_{1r} - H_{2r}|`` for independent ``H_1 ~ Hyp(N_1, K_1, o_1)`` and, where
    ``two[r]``, ``H_2 ~ Hyp(N_2, K_2, o_2)`` (else ``H_2 = 0``), every row at once.

    The laws are windowed (:class:`WindowedLaws`): entries below ``e^-TAIL_LOG`` times the
    mode's are left out, which moves a row's value by at most ``(o_1 + o_2 + 2) e^-56
    (|c| + o_1 + o_2)`` besides rounding.  With two parts the shorter window is summed over
    and the other enters through its running sums:
    ``E|t - H_2| = t (2 F(s) - 1) - 2 M(s) + E H_2``, ``s = floor(t)``, ``F`` and ``M`` the
    cdf and partial mean.  Each distinct ``(c, law 1, law 2)`` is computed once, and each
    row's final sum is over its window's own entries (:func:`_row_sums`; the running sums are
    sequential, so the padding does not touch them): a row's value is a function of its own
    ``c`` and parts alone, whatever rows share the call.

    Examples
    --------
    >>> # a group of 4 with 2 positives, 2 of them in the bin; c = 1: E|1 - H| = 2 * 1/6
    >>> z = np.zeros(1, dtype=np.int64)
    >>> float(abs_first_moments(np.array([1.0]), [4], [2], [2], z, z, z,
    ...                         np.zeros(1, dtype=bool))[0].round(12))
    0.333333333333
    """
    budget = _CHUNK if budget is None else budget
    c = np.asarray(c, dtype=np.float64)
    B = c.shape[0]
    two = np.asarray(two, dtype=bool)
    both = np.flatnonzero(two)
    cat = [np.concatenate([np.asarray(u, dtype=np.int64), np.asarray(v, dtype=np.int64)[both]])
           for u, v in ((N1, N2), (K1, K2), (o1, o2))]
    laws = WindowedLaws(*cat, budget=budget)
    a = np.arange(B, dtype=np.int64)
    b = np.full(B, -1, dtype=np.int64)
    b[both] = B + np.arange(both.shape[0])
    # the shorter window first (equal lengths: the smaller (o, N, K)): the bin's own choice
    bb = np.maximum(b, 0)
    la, lb, ra, rb = laws.length[a], laws.length[bb], laws.rank[a], laws.rank[bb]
    swap = two & ((lb < la) | ((lb == la) & (rb < ra)))
    a, b = np.where(swap, b, a), np.where(swap, a, b)
    # each distinct (c, law a, law b) once
    key_b = np.where(two, laws.rank[np.maximum(b, 0)], -1)
    order = np.lexsort((key_b, laws.rank[a], c.view(np.int64)))
    ks = (c.view(np.int64)[order], laws.rank[a][order], key_b[order])
    new = np.r_[True, (ks[0][1:] != ks[0][:-1]) | (ks[1][1:] != ks[1][:-1])
                | (ks[2][1:] != ks[2][:-1])]
    reps = order[new]
    group = np.cumsum(new) - 1
    val = np.empty(reps.shape[0])
    for sel in (np.flatnonzero(~two[reps]), np.flatnonzero(two[reps])):
        if sel.size == 0:
            continue
        by_len = np.argsort(laws.length[a[reps[sel]]], kind="stable")
        sel = sel[by_len]
        lens = laws.length[a[reps[sel]]]
        for lo_, hi_ in _budget_runs(lens - 1, budget, _SPREAD):
            s = sel[lo_:hi_]
            r = reps[s]
            width = int(lens[hi_ - 1])
            w1, lo1 = laws.padded(a[r], width)
            j1 = np.arange(width, dtype=np.int64)[None, :]
            if not two[r[0]]:
                val[s] = _row_sums(w1 * np.abs(c[r][:, None] - (lo1[:, None] + j1)), lens[lo_:hi_])
                continue
            # about H_2's mean (the integer ref): the running sums stay of the order of its
            # spread instead of its size, and t - H_2 loses nothing to cancellation
            w2, lo2 = laws.padded(b[r])
            ref = _centre(cat[0][b[r]], cat[1][b[r]], cat[2][b[r]])
            t = c[r][:, None] - (lo1[:, None] + j1 + ref[:, None])
            h2 = (lo2 - ref)[:, None] + np.arange(w2.shape[1], dtype=np.int64)[None, :]
            F = np.cumsum(w2, axis=1)
            M = np.cumsum(w2 * h2, axis=1)
            EH = M[:, -1:]
            k = np.clip(np.floor(t) - (lo2 - ref)[:, None], -1,
                        w2.shape[1] - 1).astype(np.int64)
            safe = np.maximum(k, 0)
            Fs = np.where(k >= 0, np.take_along_axis(F, safe, axis=1), 0.0)
            Ms = np.where(k >= 0, np.take_along_axis(M, safe, axis=1), 0.0)
            val[s] = _row_sums(w1 * (t * (2.0 * Fs - 1.0) - 2.0 * Ms + EH), lens[lo_:hi_])
    out = np.empty(B)
    out[order] = val[group]
    return out


def _unique_pmfs(N: np.ndarray, K: np.ndarray, o: int) -> np.ndarray:
    """:func:`hypergeom_pmf_rows` computed once per distinct ``(N, K)``."""
    N = np.asarray(N, dtype=np.int64)
    K = np.asarray(K, dtype=np.int64)
    if N.shape[0] == 0:
        return np.empty((0, o + 1))
    span = int(K.max()) + 1                     # 0 <= K <= N: one integer key per pair
    keys, first, inverse = np.unique(N * span + K, return_index=True, return_inverse=True)
    return hypergeom_pmf_rows(N[first], K[first], o)[inverse.ravel()]


def expected_abs_power(c, parts, p: float) -> np.ndarray:
    r"""``E|c_r - H_{1r} - H_{2r}|^p`` for independent hypergeometric parts, row by row.

    Parameters
    ----------
    c : array_like, shape (R,)
        Deterministic part of the bin's signed bias.
    parts : sequence of 0, 1 or 2 tuples ``(N, K, o)``
        ``o`` an integer shared by all rows; ``N`` and ``K`` integers or int arrays of shape
        (R,).
    p : float
        Exponent, ``p >= 1``.

    Returns
    -------
    numpy.ndarray, shape (R,)

    Examples
    --------
    >>> # a group of 4 with 2 positives, 2 of them in the bin; c = 1: E|1 - H| = 2 * 1/6
    >>> float(expected_abs_power([1.0], [(4, [2], 2)], 1)[0].round(12))
    0.333333333333
    """
    c = np.atleast_1d(np.asarray(c, dtype=np.float64))
    parts = [(np.broadcast_to(np.asarray(N, dtype=np.int64), c.shape),
              np.broadcast_to(np.asarray(K, dtype=np.int64), c.shape), int(o))
             for N, K, o in parts]
    if not parts:
        return np.abs(c) ** p
    if p == 2:
        mean = c.copy()
        var = np.zeros_like(c)
        for N, K, o in parts:
            mu, v = hypergeom_mean_var_arrays(N, K, o)
            mean -= mu
            var += v
        return mean ** 2 + var
    if p == 1:
        (N1, K1, o1), (N2, K2, o2) = parts if len(parts) == 2 else parts * 2
        R = c.shape[0]
        return abs_first_moments(c, N1, K1, np.full(R, o1), N2, K2, np.full(R, o2),
                                 np.full(R, len(parts) == 2))
    if len(parts) == 1:
        N, K, o = parts[0]
        w = _unique_pmfs(N, K, o)
        h = np.arange(o + 1, dtype=np.float64)
        return (w * np.abs(c[:, None] - h[None, :]) ** p).sum(axis=1)
    (N1, K1, o1), (N2, K2, o2) = sorted(parts, key=lambda part: part[2])
    w1 = _unique_pmfs(N1, K1, o1)
    w2 = _unique_pmfs(N2, K2, o2)
    out = np.empty(c.shape[0])
    for r in range(c.shape[0]):
        w = np.convolve(w1[r], w2[r])
        h = np.arange(w.shape[0], dtype=np.float64)
        out[r] = (w * np.abs(c[r] - h) ** p).sum()
    return out
