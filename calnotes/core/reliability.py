"""Reliability diagrams people use today: consistency bands and the CORP curve (numbers only).

Two additions to the binned reliability diagram of :func:`calnotes.reliability_stats`:

:func:`consistency_bands`
    The consistency band of Broecker and Smith (2007), "Increasing the reliability of
    reliability diagrams": for each bin, the range in which the bin's mean outcome would fall
    with probability (at least) ``level`` if the predictor were calibrated, i.e. if every
    outcome were drawn independently as ``y_i ~ Ber(p_i)``.  A point of the diagram outside
    its band is evidence of miscalibration in that bin; a point inside is consistent with
    calibration.  The band is exact: the number of positives in a bin is Poisson-binomial
    under the null, and its law is computed, not simulated.

:func:`corp`
    The CORP reliability curve of Dimitriadis, Gneiting and Jordan (2021, PNAS), "Stable
    reliability diagrams for probabilistic classifiers": the isotonic (pool-adjacent-violators)
    regression of the outcomes on the predictions, which needs no choice of bins, and the CORP
    decomposition of a mean score, ``S = MCB - DSC + UNC`` (miscalibration, discrimination,
    uncertainty), for the Brier and the log score.

Both are binary: ``y`` in ``{0, 1}`` and ``p = P(y = 1)`` in ``[0, 1]``.  For a ``k``-class
model pass the confidence problem, ``conf, _, correct = calnotes.confidence_scores(y, P)``,
or one class, ``P[:, r]`` against ``y == r``.  The figures are in :mod:`calnotes.core.plotting`
(``reliability_diagram(..., bands=True)``, ``corp_diagram``, ``classwise_reliability``);
chapter *Evaluate your own model* (``book/practice/evaluate.md``) uses them.
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass

import numpy as np

from .._validate import _as_array_and_dtype, check_labels, check_probabilities
from .binning import _width_bins_unchecked, equal_mass_bins
from .expectation import poisson_binomial_pmf
from .measures import _check_binning, _check_bins

__all__ = ["ConsistencyBands", "consistency_bands", "pav", "ScoreDecomposition", "CORPResult",
           "corp"]

#: Poisson-binomial laws with more random terms than this are computed as a product of
#: exact pieces of this size (:func:`calnotes.poisson_binomial_pmf`), multiplied by FFT.
_EXACT_CHUNK = 256


# ----------------------------------------------------------------------------- validation

def _check_level(level) -> float:
    if isinstance(level, bool) or not isinstance(level, numbers.Real):
        raise TypeError(f"level: expected a number in (0, 1), got {level!r}")
    level = float(level)
    if not (0.0 < level < 1.0):          # NaN fails too
        raise ValueError(f"level: expected a number strictly between 0 and 1, got {level!r}")
    return level


def _binary_prob(y_prob) -> np.ndarray:
    """``y_prob`` of a binary problem, with a hint for a ``(n, k)`` matrix."""
    y_prob, dtype = _as_array_and_dtype(y_prob, "y_prob")
    try:
        ndim = np.ndim(y_prob)
    except (TypeError, ValueError):     # ragged input: check_probabilities words the error
        ndim = None
    if ndim == 2:
        raise ValueError(
            f"y_prob: a binary function needs shape (n,) with P(y = 1), got shape"
            f" {np.shape(y_prob)}; for k classes pass the confidence problem"
            " (calnotes.confidence_scores(y, P)) or one class, P[:, r] against y == r")
    return check_probabilities(y_prob, name="y_prob", allow_2d=False, dtype=dtype)


# ------------------------------------------------------------------- Poisson-binomial laws

def _poisson_binomial(q: np.ndarray) -> np.ndarray:
    """Exact law of a sum of independent ``Ber(q_i)``, ``q`` strictly inside (0, 1).

    Up to :data:`_EXACT_CHUNK` terms: the convolution recursion of
    :func:`calnotes.poisson_binomial_pmf` (relative error of each entry ``O(L eps)``).  Longer:
    the recursion on pieces of :data:`_EXACT_CHUNK` terms (all pieces in one batch), then the
    pieces multiplied pairwise as polynomials with the real FFT, ``O(L log^2 L)``.  The FFT
    products carry an *absolute* error of a few ``1e-16`` per entry (clipped at 0, then the law
    is renormalised); the band only compares tail sums with ``(1 - level) / 2``, so this is
    far below anything that could move a quantile, except for a tail sum equal to that
    threshold to 15 digits.
    """
    L = q.shape[0]
    if L <= _EXACT_CHUNK:
        return poisson_binomial_pmf(q)
    pieces = -(-L // _EXACT_CHUNK)
    padded = np.zeros(pieces * _EXACT_CHUNK)
    padded[:L] = q                         # Ber(0) terms change nothing
    polys = list(poisson_binomial_pmf(padded.reshape(pieces, _EXACT_CHUNK)))
    from scipy import fft

    while len(polys) > 1:
        merged = []
        for a, b in zip(polys[0::2], polys[1::2]):
            size = a.shape[0] + b.shape[0] - 1
            nfft = fft.next_fast_len(size, real=True)
            c = fft.irfft(fft.rfft(a, nfft) * fft.rfft(b, nfft), nfft)[:size]
            np.clip(c, 0.0, None, out=c)
            merged.append(c)
        if len(polys) % 2:
            merged.append(polys[-1])
        polys = merged
    pmf = polys[0][:L + 1]                 # the padding's Ber(0) terms add no mass beyond L
    return pmf / pmf.sum()


def _count_interval(q: np.ndarray, alpha_half: float) -> tuple[int, int]:
    """``(lower, upper)`` counts of positives: the largest ``lower`` with ``P(S < lower) <=
    alpha_half`` and the smallest ``upper`` with ``P(S > upper) <= alpha_half``."""
    shift = int(np.count_nonzero(q == 1.0))
    rand = q[(q > 0.0) & (q < 1.0)]
    if rand.size == 0:
        return shift, shift
    pmf = _poisson_binomial(rand)
    below = np.concatenate([[0.0], np.cumsum(pmf)[:-1]])           # P(S < s), s = 0..L
    above = np.concatenate([np.cumsum(pmf[::-1])[::-1][1:], [0.0]])  # P(S > s), s = 0..L
    lower = int(np.flatnonzero(below <= alpha_half)[-1])
    upper = int(np.flatnonzero(above <= alpha_half)[0])
    return shift + lower, shift + upper


# ---------------------------------------------------------------------- consistency bands

@dataclass(frozen=True)
class ConsistencyBands:
    """Per-bin consistency bands of a reliability diagram (:func:`consistency_bands`).

    Attributes
    ----------
    count : ndarray of float, shape (m,)
        Samples per bin (as in :func:`calnotes.reliability_stats`).
    mean_prob : ndarray, shape (m,)
        Mean prediction per bin; NaN for an empty bin.
    lower, upper : ndarray, shape (m,)
        Ends of the band of the bin's mean outcome (fractions in ``[0, 1]``); NaN for an
        empty bin.
    level : float
        Nominal probability that a calibrated predictor's mean outcome falls in the band.
    n_bins : int
    binning : str
    """

    count: np.ndarray
    mean_prob: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    level: float
    n_bins: int
    binning: str

    def contains(self, mean_outcome) -> np.ndarray:
        """Whether each bin's mean outcome lies in its band (``False`` for empty bins).

        Examples
        --------
        >>> b = consistency_bands([0.0, 0.0, 1.0], n_bins=2)
        >>> b.contains([0.0, 1.0]).tolist(), b.contains([0.5, 1.0]).tolist()
        ([True, True], [False, True])
        """
        y = np.asarray(mean_outcome, dtype=np.float64)
        if y.shape != self.lower.shape:
            raise ValueError(f"mean_outcome: expected shape {self.lower.shape}, got {y.shape}")
        with np.errstate(invalid="ignore"):
            return (y >= self.lower) & (y <= self.upper)


def consistency_bands(y_prob, n_bins: int = 15, *, binning: str = "width",
                      level: float = 0.9) -> ConsistencyBands:
    """Consistency band of each bin's mean outcome under calibration (Broecker & Smith 2007).

    Under the null hypothesis that the predictor is calibrated, the outcomes are independent,
    ``y_i ~ Ber(p_i)``, so the number of positives ``S_j`` of bin ``j`` is Poisson-binomial
    with the bin's predictions as success probabilities.  The band is the equal-tailed
    interval of that law at ``level``, divided by the bin's size ``n_j``: with
    ``a = (1 - level) / 2``, ``lower = l / n_j`` for the largest ``l`` with ``P(S_j < l) <= a``
    and ``upper = u / n_j`` for the smallest ``u`` with ``P(S_j > u) <= a``.  Each tail outside
    the band has probability at most ``a``, so a calibrated predictor's mean outcome lies in
    the band with probability **at least** ``level`` (more for small bins: the law is
    discrete).

    Parameters
    ----------
    y_prob : array_like, shape (n,)
        Predicted ``P(y = 1)`` of a binary problem (for ``k`` classes: the confidences of
        :func:`calnotes.confidence_scores`, or one class column).
    n_bins : int, default 15
        Number of bins ``m``: any positive integer for equal-width bins (empty bins get NaN),
        ``1 <= m <= n`` for equal-mass bins.
    binning : {"width", "mass"}, default "width"
        The bins of :func:`calnotes.reliability_stats` with the same arguments
        (:mod:`calnotes.core.binning`).
    level : float, default 0.9
        Coverage of each band, strictly between 0 and 1.

    Returns
    -------
    ConsistencyBands
        ``count``, ``mean_prob``, ``lower``, ``upper`` per bin (NaN for empty bins), and the
        arguments.

    Notes
    -----
    The band depends on the predictions only, not on the outcomes: it is where the points of
    the reliability diagram should be if the model were calibrated.  It is a per-bin band (each
    bin on its own at ``level``), not a simultaneous one: with 15 bins, a calibrated model
    has on average at most 1.5 points outside its 90% bands.

    The law is exact at every bin size: up to 256 random terms by the recursion of
    :func:`calnotes.poisson_binomial_pmf`, beyond by multiplying exact pieces of 256 terms with
    the FFT (cost ``O(L log^2 L)`` for a bin of ``L`` samples; absolute rounding error of
    order ``1e-16`` per probability, no normal approximation).  Predictions of exactly 0 or 1
    are deterministic: a bin whose predictions are all 0 has the band ``[0, 0]``.

    Equal-mass bins split a group of tied predictions across a boundary by position; under
    calibration tied samples have the same law, so the band is the same for every order of
    the ties -- also for :func:`calnotes.reliability_stats`'s default ``ties="average"``,
    whose mean outcomes it brackets.

    Used in chapter *Evaluate your own model* (``book/practice/evaluate.md``), drawn by
    :func:`calnotes.core.plotting.reliability_diagram`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> p = rng.uniform(size=1000)
    >>> b = consistency_bands(p, n_bins=10)
    >>> b.count.tolist()[:3], bool(np.all(b.lower <= b.mean_prob)), bool(np.all(b.mean_prob <= b.upper))
    ([89.0, 104.0, 84.0], True, True)
    >>> y = (rng.uniform(size=1000) < p).astype(int)
    >>> from calnotes import reliability_stats
    >>> int(b.contains(reliability_stats(y, p, n_bins=10)["mean_outcome"]).sum())  # of 10
    10
    >>> b = consistency_bands([0.0, 0.0, 0.5], n_bins=4)    # bins 1 and 3 are empty
    >>> b.lower.tolist(), b.upper.tolist()
    ([0.0, nan, 0.0, nan], [0.0, nan, 1.0, nan])
    """
    p = _binary_prob(y_prob)
    binning = _check_binning(binning)
    m = _check_bins(n_bins, p.shape[0], binning)
    level = _check_level(level)
    if binning == "width":
        bins = _width_bins_unchecked(p, m)
    else:
        bins = equal_mass_bins(p, m)

    count = np.bincount(bins, minlength=m).astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_prob = np.bincount(bins, weights=p, minlength=m) / count
    lower = np.full(m, np.nan)
    upper = np.full(m, np.nan)
    order = np.argsort(bins, kind="stable")
    starts = np.concatenate([[0], np.cumsum(count.astype(np.int64))])
    alpha_half = (1.0 - level) / 2.0
    for j in np.flatnonzero(count > 0):
        q = p[order[starts[j]:starts[j + 1]]]
        lo, hi = _count_interval(q, alpha_half)
        lower[j] = lo / q.shape[0]
        upper[j] = hi / q.shape[0]
    return ConsistencyBands(count=count, mean_prob=mean_prob, lower=lower, upper=upper,
                            level=level, n_bins=m, binning=binning)


# ----------------------------------------------------------------------------------- CORP

def pav(values, weights) -> np.ndarray:
    """Weighted isotonic (non-decreasing) least-squares fit by pool-adjacent-violators.

    Parameters
    ----------
    values : array_like, shape (v,)
        Responses, in the order of increasing (distinct) covariate.
    weights : array_like, shape (v,)
        Positive weights.

    Returns
    -------
    numpy.ndarray, shape (v,)
        The fit: the weighted means of the pooled blocks, non-decreasing.

    Notes
    -----
    A stack of blocks (sum of weighted values, weight); each new point is pushed and merged
    with the block below while that block's mean is larger: ``O(v)``.  The fit minimises
    every Bregman (proper-score) loss among non-decreasing fits, not only squared error,
    which is why :func:`corp` may use it for the log score too.  Used in chapter *Evaluate
    your own model* (``book/practice/evaluate.md``) through :func:`corp`.

    Examples
    --------
    >>> pav([1.0, 0.0, 1.0, 0.5], [1, 1, 2, 2]).tolist()
    [0.5, 0.5, 0.75, 0.75]
    """
    v = np.asarray(values, dtype=np.float64)
    w = np.asarray(weights, dtype=np.float64)
    if v.ndim != 1 or w.shape != v.shape:
        raise ValueError(f"weights: expected the shape of values {v.shape}, got {w.shape}")
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(w)) and np.all(w > 0)):
        raise ValueError("values, weights: expected finite values and positive finite weights")
    sums: list[float] = []
    wts: list[float] = []
    sizes: list[int] = []
    for vi, wi in zip((v * w).tolist(), w.tolist()):
        s, t, k = vi, wi, 1
        while sums and sums[-1] * t > s * wts[-1]:      # mean below > mean of the new block
            s += sums.pop()
            t += wts.pop()
            k += sizes.pop()
        sums.append(s)
        wts.append(t)
        sizes.append(k)
    means = np.asarray(sums) / np.asarray(wts)
    return np.repeat(means, sizes)


@dataclass(frozen=True)
class ScoreDecomposition:
    """CORP decomposition ``score = mcb - dsc + unc`` of a mean score (:func:`corp`).

    Attributes
    ----------
    score : float
        Mean score of the predictions, ``S(p)``.
    mcb : float
        Miscalibration ``S(p) - S(p_hat)`` (``>= 0``; ``inf`` with an infinite log score).
    dsc : float
        Discrimination ``S(r) - S(p_hat)`` (``>= 0``), ``r`` the base rate.
    unc : float
        Uncertainty ``S(r)``, the score of the constant base rate.
    """

    score: float
    mcb: float
    dsc: float
    unc: float


def _mean_score(prob: np.ndarray, positives: np.ndarray, negatives: np.ndarray,
                score: str) -> float:
    """Mean score of the pooled points: ``positives[j]`` samples with outcome 1 and
    ``negatives[j]`` with outcome 0 received the prediction ``prob[j]``.

    Summed over the distinct predictions in increasing order, so the value does not depend on
    the order of the rows (not even in the last bit).
    """
    n = positives.sum() + negatives.sum()
    if score == "brier":
        return float((positives @ (1.0 - prob) ** 2 + negatives @ prob ** 2) / n)
    # log score: -log of the probability given to the outcome.  Only the terms of outcomes
    # that occur are taken (0 log 0 = 0); a probability 0 given to an outcome that occurs
    # costs +inf, without a warning.
    total = 0.0
    for count, q in ((positives, prob), (negatives, 1.0 - prob)):
        seen = count > 0
        with np.errstate(divide="ignore"):
            total += float(count[seen] @ -np.log(q[seen]))
    return total / float(n)


def _decompose(x, p_hat, positives, negatives, score) -> ScoreDecomposition:
    base_rate = positives.sum() / (positives.sum() + negatives.sum())
    s = _mean_score(x, positives, negatives, score)
    s_hat = _mean_score(p_hat, positives, negatives, score)
    unc = _mean_score(np.array([base_rate]), np.array([positives.sum()]),
                      np.array([negatives.sum()]), score)
    return ScoreDecomposition(score=s, mcb=s - s_hat, dsc=unc - s_hat, unc=unc)


@dataclass(frozen=True)
class CORPResult:
    """The CORP reliability curve and score decompositions of a binary predictor (:func:`corp`).

    Attributes
    ----------
    x : ndarray, shape (v,)
        The distinct predictions, increasing.
    fitted : ndarray, shape (v,)
        The PAV-recalibrated probability at each of ``x`` (non-decreasing): the curve is the
        step function through ``(x, fitted)``.
    weight : ndarray, shape (v,)
        Number of samples with each prediction.
    recalibrated : ndarray, shape (n,)
        ``p_hat``, the recalibrated value of each sample, in input order.
    base_rate : float
        Mean outcome ``r``.
    brier, log : ScoreDecomposition
        The decompositions for the Brier score ``(p - y)^2`` and the log score
        ``-log(p if y = 1 else 1 - p)``.
    """

    x: np.ndarray
    fitted: np.ndarray
    weight: np.ndarray
    recalibrated: np.ndarray
    base_rate: float
    brier: ScoreDecomposition
    log: ScoreDecomposition

    def decomposition(self, score: str = "brier") -> ScoreDecomposition:
        """The decomposition for ``score`` in ``{"brier", "log"}``.

        Examples
        --------
        >>> d = corp([0, 1, 1], [0.2, 0.6, 0.9]).decomposition("brier")
        >>> round(d.score, 12), round(d.mcb, 12)     # already isotonic in p: p_hat = y
        (0.07, 0.07)
        """
        if score == "brier":
            return self.brier
        if score == "log":
            return self.log
        raise ValueError(f"score: expected 'brier' or 'log', got {score!r}")


def corp(y_true, y_prob) -> CORPResult:
    """CORP reliability curve and score decomposition (Dimitriadis, Gneiting & Jordan 2021).

    The curve is the isotonic regression of the outcomes on the predictions, by
    pool-adjacent-violators: **C**\\ onsistent, **O**\\ ptimally binned (PAV chooses the bins),
    **R**\\ eproducible (no tuning parameter) and based on **P**\\ AV.  Tied predictions are
    pooled first: each distinct prediction is one point, weighted by its count, with its mean
    outcome as value, so the result does not depend on the order of the rows.

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Outcomes in ``{0, 1}``.
    y_prob : array_like, shape (n,)
        Predicted ``P(y = 1)``.  For ``k`` classes pass the confidence problem
        (:func:`calnotes.confidence_scores`) or one class column ``P[:, r]`` against
        ``y == r``.

    Returns
    -------
    CORPResult
        The step function (``x``, ``fitted``), the recalibrated ``p_hat`` of every sample and
        the decompositions ``brier`` and ``log`` (also ``decomposition(score)``).

    Notes
    -----
    With ``S(x)`` the mean score of predictions ``x`` and ``r`` the base rate,

    * ``MCB = S(p) - S(p_hat)``: miscalibration, what recalibration would gain;
    * ``DSC = S(r) - S(p_hat)``: discrimination, what the recalibrated forecast gains over
      the climatological one;
    * ``UNC = S(r)``: uncertainty, the score of the constant base rate;

    and ``S(p) = MCB - DSC + UNC`` holds by construction.  Both ``MCB >= 0`` and
    ``DSC >= 0`` (up to rounding): the PAV fit minimises every proper score among
    non-decreasing functions of ``p``, and both ``p`` itself and the constant ``r`` are such
    functions.  ``MCB = 0`` exactly when ``p`` is its own PAV fit.

    Log score: a recalibrated value of 0 or 1 only occurs where all pooled outcomes are 0 or 1,
    so ``S(p_hat)`` and ``S(r)`` are finite; a prediction of exactly 0 with outcome 1 (or 1
    with outcome 0) makes ``S(p)`` and so ``MCB`` infinite, which is returned as ``inf``
    without a warning.

    Used in chapter *Evaluate your own model* (``book/practice/evaluate.md``), drawn by
    :func:`calnotes.core.plotting.corp_diagram`.

    Examples
    --------
    >>> res = corp([0, 1, 0, 1, 1], [0.1, 0.3, 0.5, 0.5, 0.9])
    >>> res.x.tolist(), np.round(res.fitted, 4).tolist()    # 0.3 and 0.5 pooled
    ([0.1, 0.3, 0.5, 0.9], [0.0, 0.6667, 0.6667, 1.0])
    >>> d = res.brier
    >>> round(d.mcb, 6), round(d.dsc, 6), round(d.unc, 6), round(d.mcb - d.dsc + d.unc - d.score, 12)
    (0.068667, 0.106667, 0.24, 0.0)
    >>> corp([1, 0], [0.0, 0.5]).log.mcb      # prediction 0, outcome 1
    inf
    """
    p = _binary_prob(y_prob)
    y = check_labels(y_true, n_classes=2, n_samples=p.shape[0], name="y_true")
    x, inverse, weight = np.unique(p, return_inverse=True, return_counts=True)
    inverse = inverse.ravel()
    weight = weight.astype(np.float64)
    positives = np.bincount(inverse, weights=y, minlength=x.shape[0])
    negatives = weight - positives
    fitted = pav(positives / weight, weight)
    np.clip(fitted, 0.0, 1.0, out=fitted)       # rounding of block means stays in [0, 1]
    return CORPResult(x=x, fitted=fitted, weight=weight, recalibrated=fitted[inverse],
                      base_rate=float(positives.sum() / weight.sum()),
                      brier=_decompose(x, fitted, positives, negatives, "brier"),
                      log=_decompose(x, fitted, positives, negatives, "log"))
