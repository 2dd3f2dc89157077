"""Is a measured calibration error more than noise?  p-values under the calibrated null and
bootstrap confidence intervals, for the rows of :func:`calnotes.evaluate`.

The calibrated null (consistency resampling, Broecker & Smith 2007): the predictions are
exactly right, so the outcomes are drawn from them -- a label ``y*_i ~ Cat(p_i)`` for the
class-wise rows, a correct/incorrect indicator ``~ Ber(max_r p_ir)`` for the confidence rows and
``y*_i ~ Ber(P(y = 1))`` for the binary rows.  The bins depend on the predictions only, so they
are the same under the null.  The p-value of a measured value ``t`` is ``P(T >= t)`` for the
measure ``T`` under that null.

Exact where the machinery of Part II gives it
    For one binary column (the confidence and binary rows) whose equal-mass bins are not
    straddled by ties, the bins' positive counts ``K_j`` are independent Poisson-binomial
    variables (exact pmfs, :func:`poisson_binomial_pmf_fft`) and ``T = sum_j g(a_j - K_j)`` with
    ``g(s) = |s| / n`` (ECE, l1-QECE) or ``s^2 / n^2`` (l2-QECE).  The law of the sum is
    computed on a grid with every term rounded down and, separately, up
    (:func:`exact_tail_bounds`): the two tails bracket the exact p-value, and the report gives
    the upper one (a valid, slightly conservative p-value) with the bracket's width.
By seeded Monte Carlo otherwise
    Class-wise rows (the columns of one sample are dependent: one label per row), tie groups
    straddling an equal-mass boundary (the tie-averaged measure is not a sum over independent
    bins) and SmoothECE: ``R`` replications of the null computed in batches from the sorted
    order of :mod:`calnotes._sorted` (nothing is re-sorted), ``p = (1 + #{T_r >= t}) / (R + 1)``,
    which is a valid p-value for any ``R`` (Davison & Hinkley 1997, eq. 4.11); its resolution is
    ``1 / (R + 1)``.

The bootstrap interval is an interval of ``E[T_n]``, the mean of the measure over test sets of
the same size ``n`` from the same population.  It resamples the rows (``n`` with replacement,
``B >= MIN_BOOTSTRAP`` times), recomputes the measure with its own bins on each resample, and
reflects the resamples' deviations from their own mean around the value
(:func:`calnotes._evalrows.basic_interval`): the percentile interval of the resamples would
be shifted upward, since a binned error grows on a resample (duplicated rows inflate it once
more).  Its coverage is measured on exact populations by :mod:`calnotes.coverage`.

Row order: the null's uniforms and the resamples' multiplicities are assigned to the rows in a
canonical order (rows sorted by their predictions, then outcome; see
``calnotes._evalrows.canonical_order``), so with ``ties="average"`` the p-values and intervals,
like the values, do not depend on the order of the input rows (for a given seed).  The interval
says where the value of other data of the same size from the same population lies on average;
the p-value says whether it is larger than calibration alone explains.

Chapter "Evaluate your own model" (``book/practice/evaluate``).
"""

from __future__ import annotations

import numpy as np

from .expectation import poisson_binomial_pmf

__all__ = ["poisson_binomial_pmf_fft", "exact_tail_bounds", "monte_carlo_p_value",
           "draw_categorical", "DEFAULT_DRAWS", "DEFAULT_BOOTSTRAP", "CI_LEVEL",
           "MIN_BOOTSTRAP"]

#: Monte Carlo draws of the calibrated null per row when the exact law is not available.
DEFAULT_DRAWS = 200
#: Bootstrap resamples per row.
DEFAULT_BOOTSTRAP = 200
#: Level of the bootstrap interval (of ``E[T_n]``; :func:`calnotes._evalrows.basic_interval`).
CI_LEVEL = 0.9
#: Fewest bootstrap resamples (besides 0: none): the interval's ends are the ``(1 -+ level) / 2``
#: quantiles of the resamples' deviations, and at level 0.9 a sample of ``B`` places its 5%
#: quantile strictly inside its range only when ``(B + 1) * 0.05 >= 1`` (as ``draws >= 19``).
MIN_BOOTSTRAP = 19
#: Grid cells below the observed value in :func:`exact_tail_bounds`.
GRID_CELLS = 1 << 14
_LEAF = 64


def poisson_binomial_pmf_fft(q) -> np.ndarray:
    """Law of a sum of independent ``Ber(q_i)``: leaves of 64 by the exact recursion of
    :func:`calnotes.poisson_binomial_pmf`, then a balanced tree of FFT convolutions,
    ``O(L log^2 L)`` (entries carry an absolute rounding error of about ``1e-16`` times the
    largest; clipped at 0 and renormalised).

    Examples
    --------
    >>> from scipy.stats import binom
    >>> bool(abs(poisson_binomial_pmf_fft([0.5] * 200)[100] - binom.pmf(100, 200, 0.5)) < 1e-14)
    True
    """
    return poisson_binomial_pmfs_fft([q])[0]


def _fft_convolve_rows(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Full linear convolutions of the rows of ``a`` with those of ``b`` (same leading
    shape), by real FFTs of ``scipy.fft.next_fast_len`` size (as ``scipy.signal.fftconvolve``),
    clipped at 0."""
    from scipy import fft

    size = a.shape[-1] + b.shape[-1] - 1
    nfft = fft.next_fast_len(size, real=True)
    out = fft.irfft(fft.rfft(a, nfft, axis=-1) * fft.rfft(b, nfft, axis=-1), nfft, axis=-1)
    return np.clip(out[..., :size], 0.0, None)


def poisson_binomial_pmfs_fft(qs) -> list:
    """:func:`poisson_binomial_pmf_fft` of each probability vector of ``qs``, batched: the
    leaves of all sums in one exact recursion, and each level of the convolution trees of the
    sums with the same number of leaves in one FFT call (the same tree, pairing and clipping
    as one at a time).

    Examples
    --------
    >>> a, b = poisson_binomial_pmfs_fft([[0.5] * 3, [0.1] * 300])
    >>> a.tolist(), bool(abs(b.sum() - 1) < 1e-12)
    ([0.125, 0.375, 0.375, 0.125], True)
    """
    qs = [np.asarray(q, dtype=np.float64) for q in qs]
    out = [None] * len(qs)
    random, shifts = [], []
    for q in qs:
        shifts.append(int((q == 1.0).sum()))
        random.append(q[(q > 0.0) & (q < 1.0)])
    by_leaves: dict = {}
    for i, r in enumerate(random):
        if r.size <= _LEAF:
            pmf = poisson_binomial_pmf(r) if r.size else np.ones(1)
            out[i] = _placed(pmf, qs[i].shape[0], shifts[i])
        else:
            by_leaves.setdefault(-(-r.size // _LEAF), []).append(i)
    for K, members in by_leaves.items():
        padded = np.zeros((len(members), K * _LEAF))
        for row, i in enumerate(members):
            padded[row, :random[i].size] = random[i]
        leaves = poisson_binomial_pmf(padded.reshape(-1, _LEAF)).reshape(len(members), K, -1)
        std, odd = leaves, None          # pieces in order: std[:, 0..M-1], then odd
        while std.shape[1] + (odd is not None) > 1:
            M = std.shape[1]
            pairs = _fft_convolve_rows(std[:, 0:M - 1:2], std[:, 1:M:2]) if M > 1 else None
            if M % 2:                    # the last std piece pairs with odd, or is carried
                last = std[:, -1]
                odd = last if odd is None else _fft_convolve_rows(last, odd)
            std = pairs if pairs is not None else std[:, :0]
        final = std[:, 0] if odd is None else odd
        for row, i in enumerate(members):
            pmf = final[row, :random[i].size + 1]
            out[i] = _placed(pmf / pmf.sum(), qs[i].shape[0], shifts[i])
    return out


def _placed(pmf: np.ndarray, total: int, shift: int) -> np.ndarray:
    out = np.zeros(total + 1)
    out[shift:shift + pmf.shape[0]] = pmf          # the length of poisson_binomial_pmf's
    return out


def exact_tail_bounds(a, pmfs, t: float, power: int, n: int,
                      cells: int = GRID_CELLS) -> tuple[float, float]:
    """Bounds ``lo <= P(T >= t) <= hi`` for ``T = sum_j |a_j - K_j|^power / n^power`` with
    independent ``K_j ~ pmfs[j]`` (a list of 1-d pmfs on ``0, 1, ...``).

    Every term is rounded down (for ``lo``) and up (for ``hi``) to a grid of ``cells`` steps
    below ``t``; the sums of the rounded terms are exact integer convolutions (FFT, all mass at
    or above ``t`` pooled), so the bracket is rigorous up to floating-point rounding of the
    convolutions (about ``1e-12``).

    Examples
    --------
    >>> # one bin of two fair coins, a = 1: T = |1 - K| / 2 is 0 (K = 1) or 1/2 (K = 0, 2)
    >>> [float(round(b, 12)) for b in exact_tail_bounds([1.0], [np.array([.25, .5, .25])],
    ...                                                   0.5, 1, 2)]
    [0.5, 0.5]
    """
    from scipy import fft

    if not t > 0:
        return 1.0, 1.0
    h = t / cells
    a = np.asarray(a, dtype=np.float64).tolist()
    nfft = fft.next_fast_len(2 * cells, real=True)      # the size fftconvolve would take
    # dist[r] for the two roundings (r = 0: down, 1: up); cell `cells` pools everything >= t
    dist = np.zeros((2, cells + 1))
    dist[:, 0] = 1.0
    chunk = max(1, (1 << 22) // nfft)                  # terms transformed at once
    for lo in range(0, len(a), chunk):
        terms = np.zeros((min(chunk, len(a) - lo), 2, cells + 1))
        for j, (a_j, pmf) in enumerate(zip(a[lo:lo + chunk], pmfs[lo:lo + chunk])):
            k = np.arange(pmf.shape[0], dtype=np.float64)
            g = np.abs(a_j - k) ** power / float(n) ** power
            for r, (rounding, slack) in enumerate(((np.floor, 1e-12), (np.ceil, -1e-12))):
                # a tiny relative slack keeps a term equal to a grid point on it after rounding
                idx = np.minimum(rounding(g / h * (1 + slack)), cells).astype(np.int64)
                terms[j, r] = np.bincount(idx, weights=pmf, minlength=cells + 1)
        spectra = fft.rfft(terms, nfft, axis=-1)
        for spectrum in spectra:
            below = fft.irfft(fft.rfft(dist[:, :cells], nfft, axis=-1) * spectrum, nfft,
                              axis=-1)[:, :cells]
            np.clip(below, 0.0, None, out=dist[:, :cells])
            dist[:, cells] = np.maximum(0.0, 1.0 - dist[:, :cells].sum(axis=1))  # pooled >= t
    lo_p, hi_p = (float(min(1.0, max(0.0, d))) for d in dist[:, cells])
    return lo_p, hi_p


def monte_carlo_p_value(observed: float, draws: np.ndarray) -> float:
    """``(1 + #{draws >= observed}) / (R + 1)``; values equal to ``observed`` up to ``1e-12``
    relative count as ``>=`` (they are the same number computed in another order).

    Examples
    --------
    >>> monte_carlo_p_value(0.5, np.array([0.1, 0.5, 0.7, 0.2]))
    0.6
    """
    draws = np.asarray(draws, dtype=np.float64)
    slack = 1e-12 * abs(observed)
    return float((1 + np.count_nonzero(draws >= observed - slack)) / (draws.shape[0] + 1))


def draw_categorical(cdf: np.ndarray, u: np.ndarray) -> np.ndarray:
    """Labels ``y_i = min{j : cdf[i, j] > u_i cdf[i, -1]}`` for a batch of uniforms ``u``
    (shape ``(R, n)``): a vectorised binary search over the rows' cumulative sums (``log2 k``
    gathers), so a class of probability 0 is never drawn.

    Examples
    --------
    >>> cdf = np.cumsum([[0.2, 0.0, 0.8]], axis=1)
    >>> draw_categorical(cdf, np.array([[0.1], [0.2], [0.95]])).ravel().tolist()
    [0, 2, 2]
    """
    n, k = cdf.shape
    if k > 16:      # one binary search per row over its contiguous cumulative sums
        out = np.empty(u.shape, dtype=np.int64)
        uT = np.ascontiguousarray(u.T)
        for i in range(n):
            out[:, i] = np.searchsorted(cdf[i], uT[i] * cdf[i, -1], side="right")
        return np.minimum(out, k - 1)
    target = u * cdf[:, -1][None, :]
    flat = cdf.ravel()
    base = (np.arange(n, dtype=np.int64) * k)[None, :]
    label = np.zeros(u.shape, dtype=np.int64)         # = #{j : cdf[i, j] <= target}
    step = 1 << max(0, (k - 1).bit_length())
    while step:
        nxt = label + step
        ok = nxt <= k - 1
        probe = np.where(ok, nxt, k - 1) - 1
        label = np.where(ok & (flat[base + probe] <= target), nxt, label)
        step >>= 1
    return label
