"""Laws of many Poisson-binomial sums at once: the one engine behind the exact l1 references
(:mod:`calnotes.core.expectation`, :func:`calnotes.evaluate`) and the exact p-values
(:mod:`calnotes._engine.significance`).

A Poisson-binomial sum ``K = sum_i Ber(q_i)`` has the pmf whose generating function is
``prod_i (1 - q_i + q_i z)``.  Terms with ``q_i`` exactly 0 or 1 are deterministic: they are
taken out first and only shift ``K`` (:func:`random_parts`).  The remaining product is built

* for a sum of at most :data:`LEAF` random terms (:data:`DIRECT_MAX` in
  :func:`expected_abs_deviation`, where the recursion is still the faster) by the direct
  recursion ``pmf_t(s) = pmf_{t-1}(s) (1 - q_t) + pmf_{t-1}(s - 1) q_t``
  (:func:`pmf_recursion`), all such sums at once, each step over the sums still running
  (sorted by length);
* for a longer sum from leaves of :data:`LEAF` terms (the recursion, all leaves of all sums in
  one batch) multiplied pairwise up a balanced tree of real FFT convolutions, one FFT call per
  tree level for all sums with the same number of leaves.  Cost ``O(L log^2 L)`` per sum of
  length ``L`` instead of the recursion's ``O(L^2)``;
* for a longer sum whose terms, in their given order, change value at most
  :data:`RUN_DISTINCT` - 1 times (at most once per :data:`RUN_SHARE` terms: a bin of sorted
  predictions rounded to two decimals holds a handful of values) as the product of the DFTs
  of its binomial factors, inverted once
  (``_run_pmfs``): ``O(d L + L log L)`` for ``d`` values.

Accuracy
    The recursion adds and multiplies non-negative numbers only: every entry carries a relative
    error of at most about ``2 L eps`` (``eps = 2^-52``), and relative errors of the leaves pass
    through convolutions of non-negative vectors without growth beyond their sum, so the tree's
    entries inherit at most ``2 L eps pmf[s]``.  An FFT convolution of two pmfs (non-negative,
    summing to one) of size ``N`` adds an absolute error of ``O(eps log2 N)`` to every entry (the
    error of a computed FFT is ``O(eps log2 N)`` relative to the 2-norm of its input, and the
    inputs' 2-norms are at most 1); an error in an input passes through a convolution with a
    pmf without growth (``||e * b||_2 <= ||e||_2 ||b||_1``), and clipping at 0 and the final
    renormalisation move entries towards their exact values or by ``O(eps)``.  Over the
    ``log2(L / LEAF)`` levels:

        ``|pmf_engine[s] - pmf[s]| <= 2 L eps pmf[s] + c_fft eps log2(2 L)^2``

    with ``c_fft`` = :data:`ABS_ERROR_FACTOR` = 1, asserted by ``tests/test_poisson_binomial.py``
    against exact rational arithmetic (lengths 1 to 160, sums of few values included), mpmath
    binomial laws (up to ``L = 10^5``, now by the binomial path) and the direct recursion (up
    to ``L = 6000``); the largest error seen there is ``0.05 eps log2(2 L)^2``.  The binomial
    path (``_run_pmfs``) has errors of the same kind (an absolute ``O((d + 1) eps log2
    N)``); on the mpmath binomials it was within 0.003 of the bound (the tree: 0.005), and
    on sums of 2 to 11 values within 3e-17 absolute of a ``long double`` recursion.  ``E|a - K|`` then carries an absolute error of at most
    ``sum_s bound[s] |a - s|``; in the reports' references the relative change against the
    direct recursion was at most ``3e-13`` (``calnotes.evaluate`` on 500 to 50,000 rows).

Work units (:func:`work`): a cost model fitted to measured CPU time, one unit about a
nanosecond of one core, so that the budget :data:`calnotes._engine.rows.EXACT_L1_BUDGET` is a
time.

Examples
--------
>>> [p.tolist() for p in pmfs([[0.5, 0.5], [1.0, 0.5], []])]
[[0.25, 0.5, 0.25], [0.0, 0.5, 0.5], [1.0]]
>>> expected_abs_deviation([1.0], [0.5, 0.5], [2]).tolist()   # E|1 - K|, K ~ Bin(2, 1/2)
[0.5]
"""

from __future__ import annotations

import os

import numpy as np

from .pool import in_worker

__all__ = ["LEAF", "DIRECT_MAX", "ABS_ERROR_FACTOR", "pmf_recursion", "random_parts", "pmfs",
           "pmf_blocks", "expected_abs_deviation", "work"]

#: Sums of at most this many random terms use the direct recursion; longer ones are built from
#: leaves of this many terms by FFT convolutions.
LEAF = 64
#: ``c_fft`` of the accuracy bound ``2 L eps pmf[s] + c_fft eps log2(2 L)^2`` of the module
#: docstring, as asserted by the tests (observed errors stay below a tenth of it).
ABS_ERROR_FACTOR = 1.0
#: :func:`expected_abs_deviation` uses the recursion up to this many random terms: measured on
#: this project's 2-core machine, the recursion costs about ``90 + 1.6 L`` ns per term and the
#: FFT tree about ``200 + 20 levels`` ns, equal near ``L = 128``.
DIRECT_MAX = 128
#: Threads of each batched FFT call (``scipy.fft`` splits a batch of rows over them), where
#: :func:`fft_workers` allows more than one.
FFT_WORKERS = min(2, os.cpu_count() or 1)
#: Fewest elements (rows x transform length) of a batched FFT call that :func:`fft_workers`
#: splits over threads: smaller transforms are slower on two threads than on one.
FFT_THREAD_MIN = 1 << 18
#: Elements of one padded block (rows x width) of binomial pmfs or recursion rows.
_BLOCK = 1 << 22


def pmf_recursion(q: np.ndarray, lengths=None) -> np.ndarray:
    """Direct recursion for the rows of ``q`` (shape ``(B, L)``), shape ``(B, L + 1)``.

    With ``lengths`` (non-increasing, one per row), row ``b`` uses its first ``lengths[b]``
    terms only and each step runs over the rows still going; the entries of a row beyond its
    length stay 0.  Without it, every row runs all ``L`` steps (a padded 0 changes nothing:
    ``x * 1.0`` and ``x + 0.0`` are exact).

    Examples
    --------
    >>> pmf_recursion(np.array([[0.5, 0.5], [0.5, 0.0]])).tolist()
    [[0.25, 0.5, 0.25], [0.5, 0.5, 0.0]]
    """
    B, L = q.shape
    # computed transposed, (L + 1, B): each step's operations run along contiguous rows of
    # all sums at once instead of strided column slices (2.6 times faster for 4,700 leaves
    # of 64 terms); every entry sees the same operations in the same order, so the numbers
    # are those of the row layout, bit for bit
    pmf = np.zeros((L + 1, B))
    pmf[0] = 1.0
    qT = np.ascontiguousarray(np.asarray(q, dtype=np.float64).T)
    if lengths is None:
        active = np.full(L, B)
    else:   # rows still running at step t: lengths > t (lengths sorted non-increasing)
        active = np.searchsorted(-np.asarray(lengths), -np.arange(L), side="left")
    for t in range(L):
        b = int(active[t])
        if b == 0:
            break
        qt = qT[t, :b]
        moved = pmf[:t + 1, :b] * qt
        pmf[:t + 1, :b] *= 1.0 - qt
        pmf[1:t + 2, :b] += moved
    return np.ascontiguousarray(pmf.T)


def _check_terms(q: np.ndarray, name: str) -> None:
    """Success probabilities must be numbers in [0, 1] (NaN fails)."""
    if q.size and not (q.min() >= 0.0 and q.max() <= 1.0):
        raise ValueError(f"{name}: expected success probabilities in [0, 1], got values from"
                         f" {q.min()!r} to {q.max()!r}")


def random_parts(q: np.ndarray, lengths: np.ndarray):
    """Split flat sums into their deterministic shift and random terms.

    ``q`` holds the terms of ``B`` sums one after another, ``lengths[b]`` of sum ``b``.
    Returns ``(shift, random_q, counts)``: the number of terms equal to 1 per sum, the terms
    strictly between 0 and 1 (in their order), and how many of them each sum has.
    """
    q = np.asarray(q, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    B = lengths.shape[0]
    row = np.repeat(np.arange(B), lengths)
    shift = np.bincount(row[q == 1.0], minlength=B)
    random = (q > 0.0) & (q < 1.0)
    counts = np.bincount(row[random], minlength=B)
    return shift, q[random], counts


def fft_workers(rows: int, nfft: int) -> int:
    """Threads for one batched real FFT of ``rows`` transforms of length ``nfft``:
    :data:`FFT_WORKERS` for a batch of more than one row and at least :data:`FFT_THREAD_MIN`
    elements called outside the library's worker pools, else one (a pool's threads already
    share the cores: :mod:`calnotes._engine.pool`).  ``scipy.fft`` computes each row the same way
    on any thread, so the numbers do not depend on it.

    Examples
    --------
    >>> fft_workers(1, 1 << 20), fft_workers(8, 1024), fft_workers(64, 1 << 14) == FFT_WORKERS
    (1, 1, True)
    """
    if rows < 2 or rows * nfft < FFT_THREAD_MIN or in_worker():
        return 1
    return FFT_WORKERS


def _fft_convolve_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Full linear convolutions of the rows of ``a`` with those of ``b`` (same leading
    shape), by real FFTs of ``scipy.fft.next_fast_len`` size (as ``scipy.signal.fftconvolve``),
    clipped at 0."""
    from scipy import fft

    size = a.shape[-1] + b.shape[-1] - 1
    nfft = fft.next_fast_len(size, real=True)
    workers = fft_workers(int(np.prod(a.shape[:-1])), nfft)
    out = fft.irfft(fft.rfft(a, nfft, axis=-1, workers=workers)
                    * fft.rfft(b, nfft, axis=-1, workers=workers), nfft, axis=-1,
                    workers=workers)
    return np.clip(out[..., :size], 0.0, None)


def _long_blocks(random_q: np.ndarray, offsets: np.ndarray, members: np.ndarray, K: int):
    """The pmfs (before renormalisation) of the sums ``members`` (each of ``(K - 1) * LEAF <
    count <= K * LEAF`` random terms, at ``random_q[offsets[b]:offsets[b + 1]]``), shape
    ``(len(members), K * LEAF + 1)``: leaves by the recursion, then the convolution tree."""
    counts = offsets[members + 1] - offsets[members]
    padded = np.zeros((members.shape[0], K * LEAF))
    row = np.repeat(np.arange(members.shape[0]), counts)
    col = np.arange(row.shape[0]) - np.repeat(np.cumsum(counts) - counts, counts)
    padded[row, col] = random_q[np.repeat(offsets[members], counts) + col]
    leaves = pmf_recursion(padded.reshape(-1, LEAF)).reshape(members.shape[0], K, -1)
    std, odd = leaves, None          # pieces in order: std[:, 0..M-1], then odd
    while std.shape[1] + (odd is not None) > 1:
        M = std.shape[1]
        pairs = _fft_convolve_rows(std[:, 0:M - 1:2], std[:, 1:M:2]) if M > 1 else None
        if M % 2:                    # the last std piece pairs with odd, or is carried
            last = std[:, -1]
            odd = last if odd is None else _fft_convolve_rows(last, odd)
        std = pairs if pairs is not None else std[:, :0]
    return std[:, 0] if odd is None else odd


def pmf_blocks(random_q, counts, direct_max: int = LEAF):
    """Pmfs of sums of random terms only, as padded blocks.

    ``random_q`` holds the terms (all strictly between 0 and 1) of the sums one after another,
    ``counts[b]`` of sum ``b``.  Yields ``(rows, P, normalised)``: ``P[r, :counts[rows[r]] +
    1]`` is the pmf of sum ``rows[r]`` (zeros beyond); ``normalised`` is False for the FFT
    blocks, whose rows the caller divides by their sums (:func:`pmfs` does it row by row).
    Sums of at most ``direct_max`` random terms use the recursion (default :data:`LEAF`);
    longer sums of few distinct probabilities (:data:`RUN_DISTINCT`) are convolved binomials
    (``_run_pmfs``), the others come from the FFT tree (``_tree_blocks``).
    """
    counts = np.asarray(counts, dtype=np.int64)
    runs, values, mults = _split_runs(random_q, counts, direct_max)
    if runs.size:           # sums of a few repeated probabilities: convolved binomials
        from scipy import fft

        L_runs = counts[runs]
        sizes = np.array([fft.next_fast_len(int(L) + 1, real=True) for L in L_runs.tolist()])
        for N in np.unique(sizes).tolist():
            sel = np.flatnonzero(sizes == N)
            step = max(1, _BLOCK // (N + 1))
            for lo in range(0, sel.shape[0], step):
                part = sel[lo:lo + step]
                yield runs[part], _run_pmfs([values[i] for i in part],
                                            [mults[i] for i in part], L_runs[part], N), False
        keep = np.ones(counts.shape[0], dtype=bool)
        keep[runs] = False
        rest = np.flatnonzero(keep)
        for rows, P, normalised in _tree_blocks(random_q[np.repeat(keep, counts)],
                                                counts[rest], direct_max):
            yield rest[rows], P, normalised
        return
    yield from _tree_blocks(random_q, counts, direct_max)


def _tree_blocks(random_q, counts, direct_max: int):
    """:func:`pmf_blocks` of sums that are not built from runs: the recursion up to
    ``direct_max`` random terms, the FFT tree beyond."""
    offsets = np.concatenate([[0], np.cumsum(counts)])
    short = np.flatnonzero(counts <= direct_max)
    if short.size:
        order = short[np.argsort(-counts[short], kind="stable")]
        c = counts[order]
        # blocks of at most _BLOCK elements (the longest first)
        start = 0
        while start < order.shape[0]:
            width = max(1, int(c[start]))
            stop = min(order.shape[0], start + max(1, _BLOCK // (width + 1)))
            rows, cr = order[start:stop], c[start:stop]
            padded = np.zeros((rows.shape[0], int(cr[0])))
            r = np.repeat(np.arange(rows.shape[0]), cr)
            col = np.arange(r.shape[0]) - np.repeat(np.cumsum(cr) - cr, cr)
            padded[r, col] = random_q[np.repeat(offsets[rows], cr) + col]
            yield rows, pmf_recursion(padded, cr), True
            start = stop
    long = np.flatnonzero(counts > direct_max)
    if long.size:
        K_of = -(-counts[long] // LEAF)
        for K in np.unique(K_of).tolist():
            members = long[K_of == K]
            step = max(1, _BLOCK // (K * LEAF + 1))
            for lo in range(0, members.shape[0], step):
                rows = members[lo:lo + step]
                yield rows, _long_blocks(random_q, offsets, rows, K), False


#: Sums of more than :data:`LEAF` random terms taking at most this many distinct values, and
#: at most one per :data:`RUN_SHARE` terms, are built as convolutions of binomial laws
#: (``_run_pmfs``): a sum of rounded probabilities (a bin of predictions exported with
#: two decimals holds a handful of values) is a convolution of a few binomials.
RUN_DISTINCT = 16
RUN_SHARE = 8


def ratios_from_mode(num: np.ndarray, den: np.ndarray, step: np.ndarray,
                     below: np.ndarray) -> np.ndarray:
    """``P(t) / P(mode)`` along each row of a unimodal law given by its step ratios
    ``P(t+1) / P(t) = num / den`` (where ``step``; elsewhere no step): running products from
    the mode outwards, the ratios above it and their inverses (``den / num``) below it
    (``below`` marks the columns before the mode), one division per step.  Each entry is that
    sequential product, so it depends on its own row only, and not on how far the row
    reaches on either side (the padding multiplies by 1).  The engine of
    :func:`calnotes._engine.ties._mode_ratios` (hypergeometric laws) and of the binomial laws of
    :func:`pmf_blocks`.

    Examples
    --------
    >>> t = np.arange(3.0)[None, :]                       # Bin(2, 1/2): ratios (2 - t)/(t + 1)
    >>> ratios_from_mode(2 - t, t + 1, t < 2, t < 1).tolist()
    [[0.5, 1.0, 0.5]]
    """
    with np.errstate(divide="ignore", invalid="ignore"):
        f = np.where(step, np.where(below, den, num) / np.where(below, num, den), 1.0)
    return accumulate_from_mode(f, below, np.multiply)


def accumulate_from_mode(f: np.ndarray, below: np.ndarray, op) -> np.ndarray:
    """Running ``op``-accumulations of the outward steps ``f`` from each row's mode: column
    ``j`` above the mode accumulates ``f`` from the mode up to ``j - 1``, column ``j`` below
    it accumulates ``f`` from ``j`` up to the mode's left neighbour (``f`` there being the
    inverse steps); the mode itself, and the padding, are ``op``'s identity.  ``op`` is
    ``np.multiply`` for ratios (:func:`ratios_from_mode`) and ``np.add`` for log-ratios
    (:func:`calnotes._engine.ties._log_mode_ratios`).  Sequential, so each entry depends on its own
    row and its distance from the mode only.

    Examples
    --------
    >>> f = np.array([[2.0, 3.0, 0.5, 0.25]])           # steps; the mode is column 2
    >>> accumulate_from_mode(f, np.arange(4)[None, :] < 2, np.multiply).tolist()
    [[6.0, 3.0, 1.0, 0.5]]
    """
    identity = op.identity
    out = np.empty_like(f)
    out[:, 0] = identity
    fwd = np.where(below, identity, f)
    op.accumulate(fwd, axis=1, out=fwd)
    out[:, 1:] = fwd[:, :-1]
    back = np.where(below, f, identity)[:, ::-1]
    op.accumulate(back, axis=1, out=back)
    np.copyto(out, back[:, ::-1], where=below)
    return out


def _binomial_rows(r: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The laws ``Bin(r[i], v[i])`` (``0 < v < 1``) relative to their modes (``P(t) /
    P(mode)``, not normalised), zero-padded to ``max(r) + 1`` entries: running products of the
    ratios ``P(t+1) / P(t) = (r - t) v / ((t + 1)(1 - v))`` from the mode outwards (their
    inverses below it).  An entry at distance ``d`` from the mode carries about ``3 d``
    roundings (relative); entries below about ``1e-308`` of the mode underflow to 0.  Each
    row is computed elementwise: its numbers do not depend on the other rows."""
    r = np.asarray(r, dtype=np.float64)[:, None]
    v = np.asarray(v, dtype=np.float64)[:, None]
    t = np.arange(int(r.max()) + 1, dtype=np.float64)[None, :]
    mode = np.floor((r + 1.0) * v)
    mode = np.minimum(mode, r)
    # a step from t to t + 1 where t < r
    law = ratios_from_mode((r - t) * v, (t + 1.0) * (1.0 - v), t < r, t < mode)
    law[t > r] = 0.0
    return law


def _run_pmfs(values: list, mults: list, L: np.ndarray, N: int) -> np.ndarray:
    """Pmfs, up to a positive factor per row, of sums of ``L[b]`` random terms (each strictly
    between 0 and 1), sum ``b`` holding ``mults[b][i]`` terms equal to ``values[b][i]``, shape
    ``(B, N)`` (zeros beyond each ``L[b] + 1``): the product of the real DFTs on ``N >=
    max(L) + 1`` points (no aliasing) of the binomial laws ``Bin(mults[b][i], values[b][i])``
    relative to their modes (:func:`_binomial_rows`), inverted and clipped at 0; the caller
    divides each row by its sum (:func:`pmf_blocks`' ``normalised = False``).

    Accuracy: each binomial law is within ``3 d eps`` relative at distance ``d`` from its
    mode; a computed DFT is off by ``O(eps log2 N)`` relative to its input's 2-norm (at most
    1 for a pmf), the product of ``k`` coefficients of modulus at most 1 adds their absolute
    errors, and the inverse adds ``O(eps log2 N)`` again (all relative to the product's
    scale, which the caller's division removes): an absolute error of
    ``O((k + 1) eps log2 N)`` per entry of the normalised pmf, the FFT tree's order (module
    docstring) for the few values this path takes (:data:`RUN_DISTINCT`).  Each row's
    numbers depend on its own values and on ``N`` only (its transforms and products, in the
    order of its values, and its width ``N``)."""
    from scipy import fft

    B = len(values)
    spec = np.ones((B, N // 2 + 1), dtype=np.complex128)
    depth = np.array([v.shape[0] for v in values], dtype=np.int64)
    first = np.cumsum(depth) - depth                 # each sum's first value in r_all, v_all
    r_all, v_all = np.concatenate(mults), np.concatenate(values)
    # the binomials' transforms of as many values (of every sum at once) as fit a block,
    # then multiplied in, value by value in each sum's order (a row's transform does not
    # depend on the batch; NumPy's multiply.reduceat rounds complex products differently)
    per = max(1, _BLOCK // (N // 2 + 1))
    rows_at = [np.flatnonzero(depth > d) for d in range(int(depth.max()))]  # sums with value d
    i = 0
    while i < len(rows_at):
        j, size = i + 1, rows_at[i].shape[0]            # value indices i .. j - 1 in a batch
        while j < len(rows_at) and size + rows_at[j].shape[0] <= per:
            size += rows_at[j].shape[0]
            j += 1
        at = np.concatenate([first[rows_at[d]] + d for d in range(i, j)])
        F = fft.rfft(_binomial_rows(r_all[at], v_all[at]), N, axis=-1,
                     workers=fft_workers(at.shape[0], N))
        k = 0
        for d in range(i, j):
            spec[rows_at[d]] *= F[k:k + rows_at[d].shape[0]]
            k += rows_at[d].shape[0]
        i = j
    out = fft.irfft(spec, N, axis=-1, workers=fft_workers(B, N))
    out[np.arange(N)[None, :] > np.asarray(L)[:, None]] = 0.0
    return np.clip(out, 0.0, None)


def _split_runs(random_q: np.ndarray, counts: np.ndarray, direct_max: int) -> tuple:
    """The sums that ``_run_pmfs`` builds (more than ``direct_max`` random terms, at most
    :data:`RUN_DISTINCT` distinct values and one per :data:`RUN_SHARE` terms) as
    ``(runs, values, mults)``: their indices and each one's distinct values (ascending) with
    their multiplicities.  A sum is a candidate where its terms, in their given order, change
    value at most ``RUN_DISTINCT - 1`` times (bins of sorted predictions; one pass, no sort
    of every term); only the candidates' terms are sorted."""
    long = np.flatnonzero(counts > direct_max)
    if long.size == 0:
        return long, [], []
    offsets = np.concatenate([[0], np.cumsum(counts)])
    # value changes inside each long sum: neq[i] = q[i + 1] != q[i], summed over
    # [start, end - 1) of each sum by one reduceat over interleaved bounds (nothing of the
    # terms' size but these bytes: no row index per term)
    neq = np.zeros(random_q.shape[0], dtype=np.uint8)
    np.not_equal(random_q[1:], random_q[:-1], out=neq[:-1].view(bool))
    bounds = np.stack([offsets[long], offsets[long + 1] - 1], axis=1).reshape(-1)
    pieces = 1 + np.add.reduceat(neq, bounds, dtype=np.int64)[0::2]
    keep = (pieces <= RUN_DISTINCT) & (pieces * RUN_SHARE <= counts[long])
    runs = long[keep]
    if runs.size == 0:
        return runs, [], []
    values, mults = [], []
    for b in runs.tolist():
        v, r = np.unique(random_q[offsets[b]:offsets[b + 1]], return_counts=True)
        values.append(v)
        mults.append(r.astype(np.float64))
    return runs, values, mults


def pmfs(qs) -> list:
    """Pmf of each sum ``sum_i Ber(q[i])`` for the probability vectors ``q`` in ``qs``.

    Parameters
    ----------
    qs : sequence of array_like
        One 1-d vector of success probabilities per sum (any lengths; 0s and 1s allowed).

    Returns
    -------
    list of numpy.ndarray
        ``out[b][s] = P(sum_b = s)``, length ``len(qs[b]) + 1``.

    Notes
    -----
    The terms equal to 1 shift the pmf and those equal to 0 drop out; the rest goes through
    :func:`pmf_blocks` (recursion up to :data:`LEAF` random terms, FFT tree beyond, each FFT
    pmf clipped at 0 and divided by its sum).  For a single vector the result is that of
    ``calnotes._engine.significance.poisson_binomial_pmf_fft``, bit for bit.

    Examples
    --------
    >>> from scipy.stats import binom
    >>> p = pmfs([np.full(300, 0.3)])[0]
    >>> bool(np.abs(p - binom.pmf(np.arange(301), 300, 0.3)).max() < 1e-15)
    True
    """
    qs = [np.asarray(q, dtype=np.float64).ravel() for q in qs]
    lengths = np.array([q.shape[0] for q in qs], dtype=np.int64)
    flat = np.concatenate(qs) if qs else np.empty(0)
    _check_terms(flat, "qs")
    shift, random_q, counts = random_parts(flat, lengths)
    out = [None] * len(qs)
    for rows, P, normalised in pmf_blocks(random_q, counts):
        for r, b in enumerate(rows.tolist()):
            pmf = P[r, :counts[b] + 1]
            if not normalised:
                pmf = pmf / pmf.sum()
            full = np.zeros(lengths[b] + 1)
            full[shift[b]:shift[b] + pmf.shape[0]] = pmf
            out[b] = full
    return out


def _binomial_abs(a, counts, p):
    """``E|a_b - K_b|`` for ``K_b ~ Bin(counts[b], p[b])`` (scipy's binomial pmf), in blocks."""
    from scipy.stats import binom

    out = np.abs(a)                       # no random term: K is 0
    rest = np.flatnonzero(counts > 0)
    # rows grouped by the power of two of their count (a group's counts differ by < 2x), each
    # group in blocks of at most _BLOCK pmf entries
    group = np.floor(np.log2(counts[rest])).astype(np.int64)
    for g in np.unique(group).tolist():
        members = rest[group == g]
        step = max(1, _BLOCK // (2 ** (g + 1) + 1))
        for lo in range(0, members.shape[0], step):
            rows = members[lo:lo + step]
            k = np.arange(int(counts[rows].max()) + 1, dtype=np.float64)
            pmf = binom.pmf(k[None, :], counts[rows][:, None], p[rows][:, None])
            out[rows] = (pmf * np.abs(a[rows][:, None] - k[None, :])).sum(axis=1)
    return out


def expected_abs_deviation(a, q, lengths) -> np.ndarray:
    """``E|a_b - K_b|`` for ``B`` Poisson-binomial sums ``K_b`` at once.

    Parameters
    ----------
    a : array_like, shape (B,)
        The constants.
    q : array_like, shape (sum(lengths),)
        The success probabilities of sum 0, then of sum 1, ...
    lengths : array_like of int, shape (B,)
        Terms per sum (0 allowed).

    Returns
    -------
    numpy.ndarray, shape (B,)

    Notes
    -----
    Terms equal to 0 or 1 only shift ``K``; a sum whose random terms all share one
    probability is binomial (scipy's pmf, no convolution); the others go through
    :func:`pmf_blocks`.

    Examples
    --------
    >>> expected_abs_deviation([0.5, 2.0], [0.5, 1.0, 1.0, 0.5, 0.25], [1, 4]).tolist()
    [0.5, 0.75]
    """
    a = np.asarray(a, dtype=np.float64)
    lengths = np.asarray(lengths, dtype=np.int64)
    q = np.asarray(q, dtype=np.float64).ravel()
    if a.shape != lengths.shape or a.ndim != 1:
        raise ValueError(f"a: expected shape (B,) as lengths', got {a.shape} and"
                         f" {lengths.shape}")
    if lengths.size and lengths.min() < 0 or q.shape[0] != lengths.sum():
        raise ValueError(f"q: expected sum(lengths) = {int(lengths.sum())} probabilities (lengths"
                         f" >= 0), got {q.shape[0]}")
    _check_terms(q, "q")
    shift, random_q, counts = random_parts(q, lengths)
    a = a - shift
    out = np.empty(a.shape[0])
    B = a.shape[0]
    row = np.repeat(np.arange(B), counts)
    q_hi = np.full(B, -np.inf)
    np.maximum.at(q_hi, row, random_q)
    q_lo = np.full(B, np.inf)
    np.minimum.at(q_lo, row, random_q)
    binomial = (counts == 0) | (q_hi == q_lo)
    if binomial.any():
        rows = np.flatnonzero(binomial)
        out[rows] = _binomial_abs(a[rows], counts[rows], np.where(counts[rows] > 0,
                                                                  q_hi[rows], 0.0))
    rest = np.flatnonzero(~binomial)
    if rest.size:
        keep = np.repeat(~binomial, counts)
        sub = random_q[keep]
        for rows, P, normalised in pmf_blocks(sub, counts[rest], DIRECT_MAX):
            b = rest[rows]
            if not normalised:
                width = np.arange(P.shape[1])
                P = np.where(width[None, :] <= counts[b][:, None], P, 0.0)
                P = P / P.sum(axis=1, keepdims=True)
            k = np.arange(P.shape[1], dtype=np.float64)
            out[b] = (P * np.abs(a[b][:, None] - k[None, :])).sum(axis=1)
    return out


def work(counts) -> float:
    """Work units of :func:`expected_abs_deviation` for sums of ``counts`` terms (bin sizes:
    an upper bound, since terms equal to 0 or 1 cost less): per term ``90 + 1.6 L`` for a sum
    of ``L <= DIRECT_MAX`` terms (the recursion) and ``200 + 20 levels`` for a longer one (the
    FFT tree of ``levels = ceil(log2(L / LEAF))`` levels).  A unit is about one nanosecond of
    one core: the constants are CPU times measured on the project's 2-core machine
    (``L = 5`` to ``10^6``; the model is within a factor of 1.5 of the measurements there).

    Examples
    --------
    >>> work([10, 100]), work([1000])
    (26060.0, 280000.0)
    """
    L = np.asarray(counts, dtype=np.float64).ravel()
    short = L <= DIRECT_MAX
    levels = np.ceil(np.log2(np.maximum(L, 1.0) / LEAF))
    return float((L[short] * (90 + 1.6 * L[short])).sum()
                 + (L[~short] * (200 + 20 * levels[~short])).sum())
