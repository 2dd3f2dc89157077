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
    variables (exact pmfs from the engine of :mod:`calnotes._engine.poisson_binomial`,
    :func:`poisson_binomial_pmf_fft`) and ``T = sum_j g(a_j - K_j)`` with
    ``g(s) = |s| / n`` (ECE, l1-QECE) or ``s^2 / n^2`` (l2-QECE) -- or ``T`` is an increasing
    function of such a sum (an ``lp`` binned ECE: weighted terms ``|B_j|^(1-p) |s|^p / n``;
    each measure's sum form is stated once, by
    :meth:`calnotes.core.measure_spec.BinnedMeasure.exact_sum_form`).  The law of the sum is
    computed on a grid with every term rounded down and, separately, up
    (:func:`exact_tail_bounds`): the two tails bracket the exact p-value, and the report gives
    the upper one (a valid, conservative p-value) with the bracket's lower end.  Every term is
    rounded by up to a grid cell, so the grid widens the bracket with the number of bins ``m``
    (about ``m^1.5 / GRID_CELLS`` near the null's centre: 0.03 at ``m = 100``, most of
    ``[0, 1]`` at ``m = 1000``); where that widening is predicted
    (:func:`predicted_bracket_width`) to exceed :func:`exact_bracket_limit` (the largest
    standard error of the Monte Carlo p-value, 0.035 with 200 draws), the row gets the Monte
    Carlo p-value below instead, and its ``p_value_note`` says so.  Where a Chernoff bound
    (:func:`tail_bound`: Bennett for l1, Hoeffding for l2) already puts ``P(T >= t)`` below
    :data:`BOUND_DECISIVE` = 1e-15 -- a clearly miscalibrated column -- the row gets the
    certified bracket ``[0, bound]`` (``p_value_method = "bound"``) and no exact law is
    computed (at ``10^6`` rows those laws cost seconds).
By seeded Monte Carlo otherwise
    Class-wise rows (the columns of one sample are dependent: one label per row), tie groups
    straddling an equal-mass boundary (the tie-averaged measure is not a sum over independent
    bins) and SmoothECE: ``R`` replications of the null computed in batches from the sorted
    order of :mod:`calnotes._engine.sorted_columns` (nothing is re-sorted), ``p = (1 + #{T_r >= t}) / (R + 1)``,
    which is a valid p-value for any ``R`` (Davison & Hinkley 1997, eq. 4.11); its resolution is
    ``1 / (R + 1)``.

The bootstrap interval is an interval of ``E[T_n]``, the mean of the measure over test sets of
the same size ``n`` from the same population.  It resamples the rows (``n`` with replacement,
``B >= MIN_BOOTSTRAP`` times), recomputes the measure with its own bins on each resample, and
reflects the resamples' deviations from their own mean around the value
(:func:`calnotes._engine.rows.basic_interval`): the percentile interval of the resamples would
be shifted upward, since a binned error grows on a resample (duplicated rows inflate it once
more).  Its coverage is measured on exact populations by :mod:`calnotes.evaluation.coverage`.

Row order: the null's uniforms and the resamples' multiplicities are assigned to the rows in a
canonical order (rows sorted by their predictions, then outcome; see
``calnotes._engine.rows.canonical_order``), so with ``ties="average"`` the p-values and intervals,
like the values, do not depend on the order of the input rows (for a given seed).  The interval
says where the value of other data of the same size from the same population lies on average;
the p-value says whether it is larger than calibration alone explains.

Chapter "Evaluate your own model" (``book/practice/evaluate``).
"""

from __future__ import annotations

import numpy as np

from . import poisson_binomial as _pb
from .poisson_binomial import _fft_convolve_rows  # noqa: F401  (old home)

__all__ = ["poisson_binomial_pmf_fft", "exact_tail_bounds", "exact_bracket_limit",
           "predicted_bracket_width", "tail_bound", "monte_carlo_p_value",
           "draw_categorical", "DEFAULT_DRAWS", "DEFAULT_BOOTSTRAP", "CI_LEVEL",
           "MIN_BOOTSTRAP", "MIN_DRAWS"]

#: Monte Carlo draws of the calibrated null per row when the exact law is not available
#: (``draws`` of :func:`calnotes.evaluate`, command line ``--draws``).  The number has two
#: jobs, which move together when it changes:
#:
#: * the replications of every Monte Carlo p-value: the class-wise rows, and the equal-mass
#:   rows whose bins are split by tie groups under ``ties="average"`` (the tie-split rows,
#:   which have no exact law and are always Monte Carlo; their draws run on at most
#:   ``calnotes._engine.rows.TIED_THREAD_CAP`` threads, so their time grows with it).  The
#:   resolution is ``1 / (draws + 1)``, whose floor decides whether the report's verdict is
#:   resolved (``rows / (draws + 1)`` against the level);
#: * the switch between exact and Monte Carlo p-values of the one-column rows: the exact
#:   bracket is kept only while its predicted grid widening stays below
#:   :func:`exact_bracket_limit` ``(draws) = 1 / (2 sqrt(draws))`` (0.035 at 200), so more
#:   draws hold the exact brackets to a tighter limit and send more one-column rows (those
#:   with many bins) to Monte Carlo.
#:
#: No separate tolerance for the exact bracket exists to decouple the second from the first.
DEFAULT_DRAWS = 200
#: Fewest Monte Carlo draws (``draws >= 19``): with fewer, no p-value can reach 0.05, the
#: Monte Carlo floor ``1 / (draws + 1)`` being above it.
MIN_DRAWS = 19
#: Bootstrap resamples per row.
DEFAULT_BOOTSTRAP = 200
#: Level of the bootstrap interval (of ``E[T_n]``; :func:`calnotes._engine.rows.basic_interval`).
CI_LEVEL = 0.9
#: Fewest bootstrap resamples (besides 0: none): the interval's ends are the ``(1 -+ level) / 2``
#: quantiles of the resamples' deviations, and at level 0.9 a sample of ``B`` places its 5%
#: quantile strictly inside its range only when ``(B + 1) * 0.05 >= 1`` (as ``draws >= 19``).
MIN_BOOTSTRAP = 19
#: Grid cells below the observed value in :func:`exact_tail_bounds`.
GRID_CELLS = 1 << 14
#: A term of :func:`exact_tail_bounds` with at most this many cells below the observed value
#: is added by shifted adds instead of an FFT convolution (measured crossover on 2 cores).
SPARSE_POINTS = 24
#: Probabilities at most this small are left out of :func:`exact_tail_bounds`' convolutions
#: and counted on the safe side of each bound.
TAIL_DROP = 1e-18
#: A one-column row whose :func:`tail_bound` is at most this gets the bracket ``[0, bound]``
#: (``p_value_method = "bound"``) without its bins' exact laws: the exact bracket's own
#: resolution is about ``1e-14`` (floating-point rounding of the convolutions, ``TAIL_DROP``).
BOUND_DECISIVE = 1e-15
_LEAF = _pb.LEAF


def poisson_binomial_pmf_fft(q) -> np.ndarray:
    """Law of a sum of independent ``Ber(q_i)``: :func:`calnotes._engine.poisson_binomial.pmfs` of one
    vector (leaves of 64 by the exact recursion, then a balanced tree of FFT convolutions,
    ``O(L log^2 L)``; entry ``s`` carries a rounding error of at most ``2 L eps pmf[s] + eps
    log2(2 L)^2``, see :mod:`calnotes._engine.poisson_binomial`; clipped at 0 and renormalised).

    Examples
    --------
    >>> from scipy.stats import binom
    >>> bool(abs(poisson_binomial_pmf_fft([0.5] * 200)[100] - binom.pmf(100, 200, 0.5)) < 1e-14)
    True
    """
    return _pb.pmfs([q])[0]


def poisson_binomial_pmfs_fft(qs) -> list:
    """:func:`poisson_binomial_pmf_fft` of each probability vector of ``qs``, batched
    (:func:`calnotes._engine.poisson_binomial.pmfs`: the short sums in one recursion, the leaves of
    the long ones in one recursion, and each level of the convolution trees of the sums with
    the same number of leaves in one FFT call).

    Examples
    --------
    >>> a, b = poisson_binomial_pmfs_fft([[0.5] * 3, [0.1] * 300])
    >>> a.tolist(), bool(abs(b.sum() - 1) < 1e-12)
    ([0.125, 0.375, 0.375, 0.125], True)
    """
    return _pb.pmfs(qs)


def _term_values(a, pmfs, power: int, n: int, weights=None):
    """Every term's law flat: ``(term, w, g)``, entry ``(j, k)`` of ``K_j ~ pmfs[j]`` with its
    probability ``w`` and its value ``g = |a_j - k|^power / n^power``, times ``weights[j]``
    where given."""
    sizes = np.array([pmf.shape[0] for pmf in pmfs], dtype=np.int64)
    w = np.concatenate([np.asarray(pmf, dtype=np.float64) for pmf in pmfs])
    term = np.repeat(np.arange(sizes.shape[0]), sizes)
    k = np.arange(w.shape[0], dtype=np.float64) - np.repeat(np.cumsum(sizes) - sizes, sizes)
    g = np.abs(np.asarray(a, dtype=np.float64)[term] - k) ** power / float(n) ** power
    if weights is not None:
        g *= np.asarray(weights, dtype=np.float64)[term]
    return term, w, g


def _grid_terms(a, pmfs, t: float, power: int, n: int, cells: int, weights=None):
    """Every term's law on the grid of :func:`exact_tail_bounds`, flat: ``(term, w, idx)``
    with ``idx[r]`` the cell of each entry rounded down (``r = 0``) and up (``r = 1``); only
    entries of positive weight (``cells`` pools everything at or above ``t``)."""
    term, w, g = _term_values(a, pmfs, power, n, weights)
    keep = w > TAIL_DROP
    dropped = float(w[~keep].sum())
    term, w, g = term[keep], w[keep], g[keep]
    h = t / cells
    # a tiny relative slack keeps a term equal to a grid point on it after rounding
    idx = np.stack([np.minimum(np.floor(g / h * (1 + 1e-12)), cells),
                    np.minimum(np.ceil(g / h * (1 - 1e-12)), cells)]).astype(np.int64)
    return term, w, idx, dropped


def _trim(d: np.ndarray, lo: int, hi: int) -> tuple[int, int, float]:
    """Narrow the window ``d[lo:hi]`` to its entries above :data:`TAIL_DROP`; the entries cut
    off are zeroed and their mass returned."""
    big = np.flatnonzero(d[lo:hi] > TAIL_DROP)
    if big.size == 0:
        cut = float(d[lo:hi].sum())
        d[lo:hi] = 0.0
        return lo, lo, cut
    a, e = lo + int(big[0]), lo + int(big[-1]) + 1
    cut = float(d[lo:a].sum() + d[e:hi].sum())
    d[lo:a] = 0.0
    d[e:hi] = 0.0
    return a, e, cut


def exact_tail_bounds(a, pmfs, t: float, power: int, n: int,
                      cells: int = GRID_CELLS, weights=None) -> tuple[float, float]:
    """Bounds ``lo <= P(T >= t) <= hi`` for ``T = sum_j w_j |a_j - K_j|^power / n^power`` with
    independent ``K_j ~ pmfs[j]`` (a list of 1-d pmfs on ``0, 1, ...``) and ``w_j =
    weights[j] >= 0`` (all 1 where ``weights`` is ``None``; a size-weighted measure's sum
    form, :meth:`calnotes.core.measure_spec.BinnedMeasure.exact_sum_form`).

    Every term is rounded down (for ``lo``) and up (for ``hi``) to a grid of ``cells`` steps
    below ``t``; the sums of the rounded terms are exact integer convolutions truncated at
    ``t`` (a term never decreases the sum, so the mass that reaches ``t`` stays there and is
    ``1 -`` the mass below), so the bracket is rigorous up to floating-point rounding of the
    convolutions (about ``1e-12``).

    Cost: the distribution below ``t`` lives on a window of the grid; a term with at most
    :data:`SPARSE_POINTS` cells below ``t`` (the bins of a few samples at small ``n``) is added
    by that many shifted adds over the window, a larger one by one real FFT convolution of the
    window with the term's own window (both cut at ``t``; ``scipy.fft``, both roundings in one
    call, or one chain for both: where no term's value lies on a grid point (continuous
    predictions), rounding up adds exactly one cell to every term, so the upper sum is the
    lower one plus ``m`` cells).  Probabilities at most :data:`TAIL_DROP` are left out of the
    terms and cut off the window's ends; their total mass ``D`` is counted on the safe side (at
    or above ``t`` for ``hi``, below it for ``lo``), so the bracket stays rigorous and widens
    by ``D <= (n + m) TAIL_DROP`` (1e-12 at ``n = 10^6``; usually far less, since such tails
    fall off fast).  Each of the ``m`` terms costs one FFT convolution of about the grid's
    size.

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
    m = len(pmfs)
    term, w, idx, dropped = _grid_terms(a, pmfs, t, power, n, cells, weights)
    # Where every entry's upward rounding is its downward one plus a cell (no value on a grid
    # point), the upper sum is the lower one plus m cells: one chain gives both bounds.
    R = 1 if np.array_equal(idx[1], np.minimum(idx[0] + 1, cells)) else 2
    idx = idx[:R]
    below = idx < cells
    points = np.stack([np.bincount(term[below[r]], minlength=m) for r in range(R)]).max(axis=0)
    starts = np.searchsorted(term, np.arange(m + 1))
    # dist[r]: the law of the partial sum below t, on cells lo[r] .. hi[r] - 1
    dist = np.zeros((R, cells))
    dist[:, 0] = 1.0
    lo, hi = [0] * R, [1] * R
    cut_lo = 0.0                  # mass cut off the window of the lower bound
    sparse = points <= SPARSE_POINTS
    for j in np.concatenate([np.flatnonzero(sparse), np.flatnonzero(~sparse)]).tolist():
        s, e = starts[j], starts[j + 1]
        if sparse[j]:
            for r in range(R):
                if lo[r] >= cells:
                    continue
                sel = below[r, s:e]
                cells_j, w_j = idx[r, s:e][sel].tolist(), w[s:e][sel].tolist()
                src = dist[r, lo[r]:hi[r]].copy()
                dist[r, lo[r]:hi[r]] = 0.0
                for i, wi in zip(cells_j, w_j):
                    a0 = lo[r] + i
                    if a0 < cells:
                        e0 = min(cells, hi[r] + i)
                        dist[r, a0:e0] += wi * src[:e0 - a0]
                if cells_j:
                    lo[r], hi[r] = lo[r] + min(cells_j), min(cells, hi[r] + max(cells_j))
                    lo[r], hi[r], cut = _trim(dist[r], lo[r], hi[r])
                    cut_lo += cut if r == 0 else 0.0
                    if lo[r] == hi[r]:
                        lo[r] = cells
                else:
                    lo[r] = cells
            continue
        if min(lo) >= cells:
            break
        # one window for both roundings: the term's cells below t, and the distribution's
        d0, d1 = min(lo), max(hi)
        sel = below[:, s:e].any(axis=0)
        t0 = int(idx[:, s:e][:, sel].min())
        need = cells - d0 - t0
        if need <= 0:
            lo = [cells] * R
            break
        t1 = min(int(idx[:, s:e][:, sel].max()) + 1, t0 + need)
        spread = np.zeros((R, t1 - t0))
        for r in range(R):
            ok = below[r, s:e] & (idx[r, s:e] < t1)
            spread[r] = np.bincount(idx[r, s:e][ok] - t0, weights=w[s:e][ok],
                                    minlength=t1 - t0)
        d1 = min(d1, d0 + need)
        size = (d1 - d0) + (t1 - t0) - 1
        nfft = fft.next_fast_len(size, real=True)
        workers = _pb.fft_workers(dist.shape[0], nfft)
        conv = fft.irfft(fft.rfft(dist[:, d0:d1], nfft, axis=-1, workers=workers)
                         * fft.rfft(spread, nfft, axis=-1, workers=workers), nfft,
                         axis=-1, workers=workers)
        out = min(size, need)
        dist[:, d0:] = 0.0
        np.clip(conv[:, :out], 0.0, None, out=dist[:, d0 + t0:d0 + t0 + out])
        for r in range(R):
            lo[r], hi[r], cut = _trim(dist[r], d0 + t0, min(cells, d0 + t0 + out))
            cut_lo += cut if r == 0 else 0.0
            if lo[r] == hi[r]:
                lo[r] = cells
    # the mass left out (dropped, cut) counts as >= t for hi, below t for lo
    lo_p = float(min(1.0, max(0.0, 1.0 - dist[0].sum() - dropped - cut_lo)))
    upper = dist[1] if R == 2 else dist[0, :max(0, cells - m)]
    hi_p = float(min(1.0, max(0.0, 1.0 - upper.sum())))
    return lo_p, hi_p


def exact_bracket_limit(draws: int) -> float:
    """The widest grid rounding :func:`calnotes.evaluate` lets the exact p-value carry:
    ``1 / (2 sqrt(draws))``, the largest standard error of a Monte Carlo p-value from
    ``draws`` replications (``p (1 - p) / draws <= 1 / (4 draws)``).

    :func:`exact_tail_bounds` rounds each of the ``m`` terms by up to a cell of
    ``t / GRID_CELLS``, so its upper end, the p-value printed, can exceed ``P(T >= t)`` by up
    to about ``P(t - m t / GRID_CELLS <= T < t)``, which grows like ``m^1.5 / GRID_CELLS`` near
    the null's centre (0.03 at ``m = 100``; at ``m = 1000`` the bracket can span most of
    ``[0, 1]``).  Where :func:`predicted_bracket_width` exceeds this limit, the exact bracket
    would say less than the Monte Carlo estimate, and the row gets that instead.  (A bracket
    can also be wide at small ``n`` for another reason: the observed value is an atom of
    ``T``'s law, and the bracket is about ``[P(T > t), P(T >= t)]``, whose upper end is the
    p-value itself; that width is not rounding, and the bracket is kept.)

    Examples
    --------
    >>> round(exact_bracket_limit(200), 4)
    0.0354
    """
    return 0.5 / float(np.sqrt(draws))


def predicted_bracket_width(a, pmfs, t: float, power: int, n: int,
                            cells: int = GRID_CELLS, weights=None) -> float:
    """How much :func:`exact_tail_bounds`' grid widens its bracket, predicted before it is
    computed: with ``T``'s exact mean and variance (from the terms' laws) and a normal law,
    ``P(t - u <= T < t + d)``, where ``u`` and ``d`` are the expected amounts by which the grid
    rounds ``T`` up and down (each term by up to a cell of ``t / cells``, exactly as
    :func:`exact_tail_bounds` rounds it; together about ``m`` cells).  It chooses the method only (exact bracket, or Monte Carlo where it
    exceeds :func:`exact_bracket_limit`).  Checked on single columns with ``n`` from 30 to
    8,000 and ``m`` from 2 to 1,000, four prediction laws, calibrated and not
    (``tests/test_significance.py``): every row predicted within the limit has an upper end
    within the limit of the same bracket on a grid at least 8 times finer, and every row
    predicted beyond it has a computed bracket wider than the limit; the predicted and
    computed widths agree to about 0.005 where the grid dominates (at small ``n`` the
    bracket is wider than predicted: the atom at ``t``, see :func:`exact_bracket_limit`).

    Examples
    --------
    >>> pmf = np.array([0.25, 0.5, 0.25])
    >>> predicted_bracket_width([1.0] * 4, [pmf] * 4, 1.0, 1, 8) < 1e-3       # 4 terms
    True
    >>> predicted_bracket_width([1.0] * 40000, [pmf] * 40000, 0.5, 1, 80000) > 0.9
    True
    """
    from scipy.special import ndtr

    m = len(pmfs)
    if m == 0 or not t > 0:
        return 0.0
    term, w, g = _term_values(a, pmfs, power, n, weights)
    mean = np.bincount(term, weights=w * g, minlength=m)
    var = np.maximum(np.bincount(term, weights=w * g * g, minlength=m) - mean ** 2, 0.0)
    mu, sigma = float(mean.sum()), float(np.sqrt(var.sum()))
    h = t / cells
    x = g / h
    up = float((w * (np.ceil(x) - x)).sum()) * h          # E[T rounded up] - E[T]
    down = float((w * (x - np.floor(x))).sum()) * h       # E[T] - E[T rounded down]
    if sigma == 0.0:
        return 1.0 if t - up <= mu < t + down else 0.0
    return float(max(0.0, ndtr((t + down - mu) / sigma) - ndtr((t - up - mu) / sigma)))


def tail_bound(t: float, power: int, n: int, variances, sizes) -> float:
    """A certified upper bound on ``P(T >= t)`` under the calibrated null for one column,
    ``T = sum_j |S_j|^power / n^power`` over bins ``j``, ``S_j = sum_{i in B_j} (y_i - p_i)``
    with independent ``y_i ~ Ber(p_i)`` (Chernoff: ``P(X >= u) <= e^{-lambda u} E e^{lambda X}``).

    ``power = 1`` (ECE, l1-QECE), Bennett: each ``y_i - p_i`` and ``p_i - y_i`` is at most 1
    with variance ``p_i (1 - p_i)``, so ``E e^{lambda |S_j|} <= 2 exp(V_j phi(lambda))``,
    ``phi(x) = e^x - 1 - x``, ``V_j = sum_{B_j} p (1 - p)``; with ``u = n t``, ``V = sum V_j``
    and ``m'`` bins of ``V_j > 0`` the best ``lambda`` gives
    ``log P <= m' log 2 - V h(u / V)``, ``h(x) = (1 + x) log(1 + x) - x``.

    ``power = 2`` (l2-QECE), Hoeffding: ``S_j`` is sub-Gaussian with ``sigma_j^2 = L_j / 4``
    (``L_j`` rows; 0 where ``V_j = 0``: then ``S_j = 0``), so
    ``E e^{lambda S_j^2} <= (1 - 2 lambda sigma_j^2)^{-1/2}`` and, with ``u = n^2 t``,
    ``log P <= -lambda u - sum_j log(1 - 2 lambda sigma_j^2) / 2`` at the ``lambda`` where its
    derivative vanishes (found by bisection; any ``lambda`` gives a valid bound).

    Far in the tail (a clearly miscalibrated column) the bound is astronomically small and
    decides the p-value without the bins' exact laws (:data:`BOUND_DECISIVE`); near the
    null's centre it exceeds 1 and says nothing.

    Examples
    --------
    >>> # one bin of 100 fair coins: P(|S| >= 30) = P(|K - 50| >= 30) = 1.1e-9
    >>> b = tail_bound(30 / 100, 1, 100, [25.0], [100])
    >>> bool(1.1e-9 < b < 1e-5)         # 3.1e-6: Chernoff keeps the exponent's order
    True
    >>> tail_bound(0.05, 1, 100, [25.0], [100])            # near the centre: no information
    1.0
    """
    if power not in (1, 2):
        raise ValueError(f"power: tail_bound bounds power 1 (Bennett) and 2 (Hoeffding), got"
                         f" {power!r}")
    V = np.asarray(variances, dtype=np.float64).ravel()
    L = np.asarray(sizes, dtype=np.float64).ravel()
    if not t > 0:
        return 1.0
    live = V > 0
    if power == 1:
        u, total = float(n) * t, float(V[live].sum())
        if total == 0.0:
            return 0.0 if u > 0 else 1.0
        x = u / total
        log_p = float(live.sum()) * np.log(2.0) - total * ((1.0 + x) * np.log1p(x) - x)
    else:
        u = float(n) ** 2 * t
        s2 = np.where(live, L / 4.0, 0.0)
        s2 = s2[s2 > 0]
        if s2.size == 0:
            return 0.0
        if u <= s2.sum():                   # the derivative at 0 is >= 0: lambda = 0 is best
            return 1.0
        top = 1.0 / (2.0 * float(s2.max()))
        lo, hi = 0.0, top
        for _ in range(100):
            mid = 0.5 * (lo + hi)
            if (s2 / (1.0 - 2.0 * mid * s2)).sum() > u:
                hi = mid
            else:
                lo = mid
        log_p = -lo * u - 0.5 * float(np.log1p(-2.0 * lo * s2).sum())
    return float(np.exp(min(0.0, log_p)))


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
