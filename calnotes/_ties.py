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
* :func:`expected_abs_power` -- ``E|c - H_1 - H_2|^p``: closed form for ``p = 2`` (mean and
  variance), a CDF sweep for ``p = 1`` (``O(o_1 + o_2)`` per row), direct sums otherwise.

Used by :mod:`calnotes._binstats` (the measures, ``ties="average"``) and
:mod:`calnotes.expectation` (exact expectations and Monte Carlo under the same rule).
"""

from __future__ import annotations

import numpy as np

__all__ = ["TIES", "check_ties", "straddling_groups", "hypergeom_pmf_rows",
           "hypergeom_mean_var_arrays",
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


def _pmf_recurrence(N, K, o) -> np.ndarray:
    """The laws ``Hyp(N[r], K[r], o[r])`` from the ratio recurrence (see
    :func:`hypergeom_pmf_rows`), zero-padded to ``max(o) + 1`` entries.

    Every step of the recurrence is elementwise or a running sum along the row (the padding
    adds zeros after the row's values, or before them in the reversed sum), except the final
    normalisation, whose pairwise sum depends on the row's length: it is taken over each
    row's own ``o + 1`` entries, rows of one ``o`` at a time.  So row ``r`` does not depend on
    the other rows of the call.
    """
    K = np.atleast_1d(np.asarray(K, dtype=np.int64))
    N = np.broadcast_to(np.asarray(N, dtype=np.int64), K.shape)
    o = np.broadcast_to(np.asarray(o, dtype=np.int64), K.shape)
    R = K.shape[0]
    if R == 0:
        return np.empty((0, 1))
    top = int(o.max())
    t = np.arange(top + 1, dtype=np.float64)[None, :]
    Kf = K[:, None].astype(np.float64)
    Nf = N[:, None].astype(np.float64)
    of = o[:, None].astype(np.float64)
    lo = np.maximum(0, o - (N - K))[:, None]
    hi = np.minimum(o, K)[:, None]
    step = (t >= lo) & (t < hi)
    with np.errstate(divide="ignore", invalid="ignore"):
        inc = (np.log(np.where(step, (Kf - t) * (of - t), 1.0))
               - np.log(np.where(step, (t + 1.0) * (Nf - Kf - of + t + 1.0), 1.0)))
    mode = np.clip(np.floor((of + 1.0) * (Kf + 1.0) / (Nf + 2.0)), lo, hi).astype(np.int64)
    idx = np.arange(top + 1)[None, :]
    below = idx < mode
    # log P(t) - log P(mode): above the mode the running sum of the increments from the mode
    # (zero up to it), below it minus the reversed running sum of those down to it
    logp = np.empty((R, top + 1))
    logp[:, 0] = 0.0
    fwd = np.where(below, 0.0, inc)
    np.cumsum(fwd, axis=1, out=fwd)
    logp[:, 1:] = fwd[:, :-1]
    back = np.where(below, inc, 0.0)[:, ::-1]
    np.cumsum(back, axis=1, out=back)
    np.negative(back, out=back)
    np.copyto(logp, back[:, ::-1], where=below)
    # exp(logp) <= about 1 everywhere (the mode is the largest term); zero outside the support
    w = np.exp(logp, out=logp)
    outside = (idx < lo) | (idx > hi)
    w[outside] = 0.0
    # rows of one o at a time: runs of o in ascending order (slices where o is sorted, as
    # HypergeomLaws passes it)
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


def _budget_runs(sizes: np.ndarray, budget: int) -> list:
    """Consecutive runs ``(lo, hi)`` of rows (``sizes`` ascending) whose padded entries
    ``(hi - lo) * (sizes[hi - 1] + 1)`` stay within ``budget`` (at least one row each)."""
    runs, lo, U = [], 0, sizes.shape[0]
    while lo < U:
        hi = lo + max(1, int(np.searchsorted((np.arange(lo + 1, U + 1) - lo)
                                             * (sizes[lo:] + 1), budget, side="right")))
        hi = min(hi, U)
        runs.append((lo, hi))
        lo = hi
    return runs


class HypergeomLaws:
    """The laws ``Hyp(N[r], K[r], o[r])`` of many parts, kept flat, row ``r``'s ``o[r] + 1``
    values from ``start[r]``: the laws of at most ``N / 2`` draws, each distinct
    ``(N, K, min(o, N - o))`` computed once (:func:`_pmf_recurrence`, in chunks of similar
    ``o`` of at most ``budget`` padded entries: 512 KB arrays stay in cache), and the
    reflections (:func:`_reflected`) of those with ``o > N - o``: the numbers of
    :func:`hypergeom_pmf_padded`, bit for bit.

    Examples
    --------
    >>> laws = HypergeomLaws([4, 4, 6, 5], [2, 2, 3, 2], [2, 2, 3, 4])
    >>> laws.padded(np.array([2, 0, 3])).tolist() == [
    ...     hypergeom_pmf_rows(6, [3], 3)[0].tolist() + [0.0],
    ...     hypergeom_pmf_rows(4, [2], 2)[0].tolist() + [0.0, 0.0],
    ...     hypergeom_pmf_rows(5, [2], 4)[0].tolist()]
    True
    """

    def __init__(self, N, K, o, budget: int = 1 << 16):
        K = np.atleast_1d(np.asarray(K, dtype=np.int64))
        N = np.broadcast_to(np.asarray(N, dtype=np.int64), K.shape)
        o = np.broadcast_to(np.asarray(o, dtype=np.int64), K.shape)
        self.o = o
        if K.shape[0] == 0:
            self.flat, self.start = np.empty(0), np.empty(0, dtype=np.int64)
            return
        triples, inverse = _unique_triples(o, N, K)              # sorted by o first
        u_o, u_N, u_K = triples[:, 0], triples[:, 1], triples[:, 2]
        u_oc = np.minimum(u_o, u_N - u_o)
        canon, c_of = _unique_triples(u_oc, u_N, u_K)          # the laws computed
        c_o = canon[:, 0]
        c_start = np.concatenate([[0], np.cumsum(c_o + 1)])
        flip = np.flatnonzero(u_oc < u_o)                       # reflected: stored after
        f_start = c_start[-1] + np.concatenate([[0], np.cumsum(u_o[flip] + 1)])
        flat = np.empty(int(f_start[-1]))
        for lo, hi in _budget_runs(c_o, budget):
            w = _pmf_recurrence(canon[lo:hi, 1], canon[lo:hi, 2], c_o[lo:hi])
            keep = np.arange(w.shape[1])[None, :] <= c_o[lo:hi, None]
            flat[c_start[lo]:c_start[hi]] = w[keep]             # row by row, own o + 1
        for lo, hi in _budget_runs(u_o[flip], budget):
            f = flip[lo:hi]
            c = c_of[f]
            w = _padded_rows(flat, c_start[c], c_o[c], int(c_o[c].max()) + 1)
            w = _reflected(w, u_K[f], u_o[f], c_o[c], int(u_o[f].max()) + 1)
            keep = np.arange(w.shape[1])[None, :] <= u_o[f][:, None]
            flat[f_start[lo]:f_start[hi]] = w[keep]
        u_start = c_start[:-1][c_of]
        u_start[flip] = f_start[:-1]
        self.flat = flat
        self.start = u_start[inverse.ravel()]

    def padded(self, rows: np.ndarray, width: int | None = None) -> np.ndarray:
        """The laws of ``rows``, zero-padded to ``width`` (default ``max(o) + 1``) entries."""
        o = self.o[rows]
        width = int(o.max()) + 1 if width is None else width
        return _padded_rows(self.flat, self.start[rows], o, width)


def _padded_rows(flat: np.ndarray, start: np.ndarray, o: np.ndarray, width: int) -> np.ndarray:
    """Rows of ``o[r] + 1`` values from ``flat[start[r]:]``, zero-padded to ``width``."""
    k = np.arange(width, dtype=np.int64)[None, :]
    inside = k <= o[:, None]
    return np.where(inside, flat[np.where(inside, start[:, None] + k, 0)], 0.0)


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
    if len(parts) == 1:
        N, K, o = parts[0]
        w = _unique_pmfs(N, K, o)
        h = np.arange(o + 1, dtype=np.float64)
        return (w * np.abs(c[:, None] - h[None, :]) ** p).sum(axis=1)
    (N1, K1, o1), (N2, K2, o2) = sorted(parts, key=lambda part: part[2])
    w1 = _unique_pmfs(N1, K1, o1)
    w2 = _unique_pmfs(N2, K2, o2)
    h1 = np.arange(o1 + 1, dtype=np.float64)
    if p == 1:
        # E|t - H2| = t (2 F(s) - 1) - 2 M(s) + E H2, s = floor(t): F, M the cdf and partial mean
        h2 = np.arange(o2 + 1, dtype=np.float64)
        F = np.cumsum(w2, axis=1)
        M = np.cumsum(w2 * h2[None, :], axis=1)
        EH = M[:, -1:]
        t = c[:, None] - h1[None, :]                                   # (R, o1 + 1)
        s = np.clip(np.floor(t), -1, o2).astype(np.int64)
        safe = np.maximum(s, 0)
        Fs = np.where(s >= 0, np.take_along_axis(F, safe, axis=1), 0.0)
        Ms = np.where(s >= 0, np.take_along_axis(M, safe, axis=1), 0.0)
        g = t * (2.0 * Fs - 1.0) - 2.0 * Ms + EH
        return (w1 * g).sum(axis=1)
    out = np.empty(c.shape[0])
    for r in range(c.shape[0]):
        w = np.convolve(w1[r], w2[r])
        h = np.arange(w.shape[0], dtype=np.float64)
        out[r] = (w * np.abs(c[r] - h) ** p).sum()
    return out
