"""Exact expected values of binned calibration measures under a known truth, and Monte Carlo.

Setting (truthfulness paper, Def 2.3): the predictions ``p_1..p_n`` are fixed and the outcomes
are drawn independently, ``y_i ~ p*_i`` (``Ber(p*_i)`` for a binary problem, the categorical
distribution ``p*_i`` for ``k`` classes).  Equal-mass bins depend on the predictions only, so
for a fixed order of tied predictions (``ties="position"``) each bin's signed bias
``S_j = sum_{i in B_j} (p_i - y_i)`` is a sum of independent terms and

* ``E[S_j^2] = (sum_{B_j} (p_i - p*_i))^2 + sum_{B_j} p*_i (1 - p*_i)`` (squared bias plus
  variance) -- the exact expectation of l2-QECE_m in ``O(n log n)``, one sort per column;
* ``E|S_j|`` needs the distribution of the bin's positive count ``sum_{B_j} y_i``, a
  Poisson-binomial law, computed for all bins of all columns at once by the engine of
  :mod:`calnotes._engine.poisson_binomial` (direct recursion for short sums, FFT convolutions of
  exact leaves for long ones); :func:`poisson_binomial_pmf` is the direct recursion alone,
  kept as the reference it is checked against.

Under the default ``ties="average"`` (:mod:`calnotes.core.binning`) a tie group straddling a bin
boundary contributes a uniformly random subset of its members instead: when the truths inside the
group are equal its outcomes are exchangeable and nothing changes; otherwise the bin's mean and
variance gain the finite-population terms, and its law a hypergeometric thinning
(:func:`expected_qece`).  The Monte Carlo engine evaluates the tie-averaged measure on every
replication, as :func:`calnotes.l2_qece` does.

Multi-class problems reduce to binary columns (Defs 2.7 and 2.8): class-wise aggregation
averages the per-class binary expectations (linearity of expectation; the indicators
``1[y_i = r]`` of one class are independent across samples), confidence aggregation is the
binary problem ``(max_r p_ir, 1[y_i = argmax_r p_ir])`` whose truth is ``p*_{i, argmax}``
(argmax: first maximum, as :func:`calnotes.confidence_scores`).

:func:`simulate_qece` is the Monte Carlo counterpart: it draws outcomes for many replications
at once (the bins are fixed, so each replication is a ``reduceat`` over the sorted order) and
can map chunks of replications over any :class:`concurrent.futures.Executor`.

Chapter *Truthful calibration measures* (``book/truthfulness/truthfulness.md``) derives the
formulas (Thm 2.6, Thm 3.1, Obs 3.2) and checks them against each other.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Optional

import numpy as np

from .._engine import bin_stats as _binstats, ties as _ties
from .._engine import poisson_binomial as _pb
from .._engine.ties import check_ties
from .._validate import check_n_bins, check_probabilities, check_rng

__all__ = [
    "expected_qece",
    "expected_binned_ece",
    "expected_unbinned_ece",
    "folded_normal_l1_approximation",
    "folded_normal_ece_bias",
    "poisson_binomial_pmf",
    "simulate_qece",
    "SimulationResult",
]

_AGGREGATIONS = ("binary", "classwise", "confidence")


# --------------------------------------------------------------------------- validation

def _check_aggregation(aggregation, ndim: int) -> str:
    if aggregation not in _AGGREGATIONS:
        raise ValueError(
            f"aggregation: expected 'binary', 'classwise' or 'confidence', got {aggregation!r}")
    if aggregation == "binary" and ndim != 1:
        raise ValueError(
            "y_prob: aggregation='binary' needs shape (n,) with P(y=1); for a (n, k) matrix of"
            " class probabilities pass aggregation='classwise' or 'confidence'")
    if aggregation != "binary" and ndim != 2:
        raise ValueError(
            f"y_prob: aggregation={aggregation!r} needs a (n, k) matrix of class probabilities;"
            " for a binary problem (shape (n,)) pass aggregation='binary'")
    return aggregation


def _check_order(p) -> int:
    if isinstance(p, bool) or p not in (1, 2):
        raise ValueError(
            f"p: expected 1 or 2 (l1- or l2-QECE, Def 2.5), got {p!r}")
    return int(p)


def _check_inputs(y_prob, true_prob, aggregation):
    """Validated ``(P, T, top)``; ``top`` is the first argmax of each row of ``P`` (2-d only)."""
    P = check_probabilities(y_prob, name="y_prob")
    T = check_probabilities(true_prob, name="true_prob")
    if P.shape != T.shape:
        raise ValueError(
            f"true_prob: shape {T.shape} differs from y_prob's shape {P.shape}; give one true"
            " probability (vector) per prediction")
    _check_aggregation(aggregation, P.ndim)
    top = None
    if P.ndim == 2:
        P, top = check_probabilities(P, name="y_prob", return_argmax=True)
    return P, T, top


def _columns(P, T, top, aggregation):
    """Binary columns ``(X, Q)`` of shape ``(n, c)``: predictions and their true probabilities.

    ``X`` is built exactly as :mod:`calnotes.core.measures` builds it, so that the bins agree.
    """
    if aggregation == "binary":
        return P[:, None], T[:, None]
    if aggregation == "classwise":
        return P, T
    rows = np.arange(P.shape[0])
    return P[rows, top][:, None], T[rows, top][:, None]


def _bounds(n: int, m: int) -> np.ndarray:
    """Start positions of the eq. (1) bins in the sorted order, plus ``n``."""
    return (np.arange(m + 1, dtype=np.int64) * n) // m


def _sorted_pair(X, Q):
    """``X`` sorted column by column, and ``Q`` in the stable ascending order of ``X``.

    When the truth is the prediction itself (the calibrated reference of
    :func:`calnotes.evaluate`), the reordered ``Q`` is the sorted ``X``: one sort, no argsort.
    """
    Xs = np.sort(X, axis=0)
    if Q is X or np.array_equal(Q, X):
        return Xs, Xs
    order = np.argsort(X, axis=0, kind="stable")
    return Xs, np.take_along_axis(Q, order, axis=0)


def _bin_bias_and_variance(X, Q, m, ties="average"):
    """Per column and bin: ``mu_j = E S_j`` and ``sigma_j^2 = Var S_j``, shape (c, m), where
    ``S_j = sum_{B_j} (p - y)``: ``sum (p - p*)`` and ``sum p*(1-p*)`` over the bin's positions,
    corrected under ``ties="average"`` for straddling tie groups with unequal truths.

    The prediction sums are those of :func:`calnotes._engine.bin_stats.bin_stats` (same sort, same
    ``reduceat``), so a bin's mean bias is computed from the very numbers the measure uses.
    """
    n = X.shape[0]
    bounds = _bounds(n, m)
    start = bounds[:-1]
    Xs, Qs = _sorted_pair(X, Q)
    sum_prob = np.add.reduceat(Xs, start, axis=0).T
    sum_true = np.add.reduceat(Qs, start, axis=0).T
    var = np.add.reduceat(Qs * (1.0 - Qs), start, axis=0).T
    if ties == "average" and Qs is not Xs:
        groups = _mixed_truth_groups(Xs, Qs, bounds)
        if any(groups):
            d_mean, d_var = _tie_moment_corrections(Qs, bounds, groups)
            sum_true = sum_true + d_mean
            var = var + d_var
    return sum_prob - sum_true, var, Qs


# --------------------------------------------------------------------------- tie groups

def _mixed_truth_groups(Xs, Qs, bounds) -> list:
    """Per column, the straddling tie groups whose true probabilities are not all equal.

    Where a straddling group's truths are all equal its outcomes are exchangeable, so a random
    order of the group changes nothing in distribution and the position-based computation is
    already the expectation under ``ties="average"``; only these groups need more.
    """
    out = []
    for col in range(Xs.shape[1]):
        groups = [g for g in _ties.straddling_groups(Xs[:, col], bounds)
                  if np.ptp(Qs[g[0]:g[1], col]) > 0]
        out.append(groups)
    return out


def _thinned_pmf(q: np.ndarray, o: int) -> np.ndarray:
    """Law of the positives among a uniform random ``o``-subset of independent ``Ber(q_i)``.

    The group's positive count ``K`` is Poisson-binomial; given ``K`` the subset holds a
    ``Hyp(N, K, o)`` number of them.  Cost ``O(N^2 + N o)``.
    """
    N = q.shape[0]
    pmf_K = _pb.pmfs([q])[0]
    table = _ties.hypergeom_pmf_rows(N, np.arange(N + 1), o)
    return pmf_K @ table


def _tie_moment_corrections(Qs, bounds, groups):
    """Per column and bin: the change in ``sum p*`` and in the variance when the straddling
    groups in ``groups`` are ordered at random instead of by position (see
    :func:`_mixed_truth_groups`); both arrays of shape (c, m)."""
    c, m = Qs.shape[1], bounds.shape[0] - 1
    d_mean = np.zeros((c, m))
    d_var = np.zeros((c, m))
    for col, col_groups in enumerate(groups):
        for a, e, overlaps in col_groups:
            q = Qs[a:e, col]
            N = e - a
            qbar, v_mean = q.mean(), (q * (1.0 - q)).mean()
            spread = q.var() * N / (N - 1) if N > 1 else 0.0   # sum (q - qbar)^2 / (N - 1)
            for j, o in overlaps:
                lo, hi = max(a, int(bounds[j])), min(e, int(bounds[j + 1]))
                seg = Qs[lo:hi, col]
                d_mean[col, j] += o * qbar - seg.sum()
                d_var[col, j] += (o * v_mean + o * (N - o) / N * spread
                                  - (seg * (1.0 - seg)).sum())
    return d_mean, d_var


# --------------------------------------------------------------------------- Poisson-binomial

def poisson_binomial_pmf(probs) -> np.ndarray:
    """Distribution of a sum of independent ``Ber(probs[i])`` variables, exactly.

    Parameters
    ----------
    probs : array_like, shape (L,) or (B, L)
        Success probabilities; a 2-d input gives ``B`` independent sums at once (pad a shorter
        sum with zeros: a ``Ber(0)`` term changes nothing).

    Returns
    -------
    numpy.ndarray, shape (L + 1,) or (B, L + 1)
        ``pmf[..., s] = P(sum = s)``.

    Notes
    -----
    The recursion ``pmf_t(s) = pmf_{t-1}(s) (1 - q_t) + pmf_{t-1}(s - 1) q_t`` adds non-negative
    numbers only, so every entry carries a relative rounding error of at most about
    ``2 L`` units in the last place.  Cost ``O(B L^2)`` arithmetic in ``L`` vectorised steps.
    This is the direct reference implementation; the expectations here and
    :func:`calnotes.evaluate` use :func:`calnotes._engine.poisson_binomial.pmfs` (the same recursion up
    to 64 terms, ``O(L log^2 L)`` FFT convolutions beyond).

    Examples
    --------
    >>> poisson_binomial_pmf([0.5, 0.5]).tolist()
    [0.25, 0.5, 0.25]
    >>> poisson_binomial_pmf([[0.5, 0.0], [1.0, 0.5]]).tolist()
    [[0.5, 0.5, 0.0], [0.0, 0.5, 0.5]]
    """
    q = np.asarray(probs, dtype=np.float64)
    one_d = q.ndim == 1
    q = np.atleast_2d(q)
    B, L = q.shape
    pmf = np.zeros((B, L + 1))
    pmf[:, 0] = 1.0
    for t in range(L):
        qt = q[:, t:t + 1]
        moved = pmf[:, :t + 1] * qt
        pmf[:, :t + 1] *= 1.0 - qt
        pmf[:, 1:t + 2] += moved
    return pmf[0] if one_d else pmf


def _expected_abs_sums(bias_sum_prob, q_rows, lengths=None):
    """``E|a_b - K_b|`` for each row ``b``: ``K_b`` a sum of independent ``Ber(q_rows[b])``.

    ``q_rows`` is ``(B, L)`` zero-padded, or (with ``lengths``) the flat terms of the sums one
    after another, ``lengths[b]`` of sum ``b``.  The engine is
    :func:`calnotes._engine.poisson_binomial.expected_abs_deviation`: terms exactly 0 or 1 are
    deterministic and only shift ``K`` (the many zeros of sparse multi-class truths cost
    nothing), binomial sums need no convolution, the rest is batched (recursion up to 128
    random terms, FFT tree beyond).
    """
    q = np.asarray(q_rows, dtype=np.float64)
    if lengths is None:
        B, L = q.shape
        q, lengths = q.ravel(), np.full(B, L, dtype=np.int64)
    return _pb.expected_abs_deviation(bias_sum_prob, q, lengths)


def _bin_terms(Qs, bounds):
    """The sorted truths of each bin of each column, flat (column by column, bin by bin), and
    the bin sizes, shape ``(c * m,)``: the sums of :func:`_expected_abs_sums`."""
    c = Qs.shape[1]
    return np.ascontiguousarray(Qs.T).ravel(), np.tile(np.diff(bounds), c)


def _expected_l1_columns(X, Q, m, ties="average"):
    """Exact ``E[l1-QECE_m]`` of each binary column, shape (c,).

    Under ``ties="average"`` the bins met by a straddling tie group with unequal truths are
    recomputed from the convolution of the bin's own Poisson-binomial part with the thinned
    law of each such group's share (:func:`_thinned_pmf`).
    """
    n, c = X.shape
    bounds = _bounds(n, m)
    Xs, Qs = _sorted_pair(X, Q)
    sum_prob = np.add.reduceat(Xs, bounds[:-1], axis=0).T  # (c, m)
    e_abs = _expected_abs_sums(sum_prob.ravel(), *_bin_terms(Qs, bounds)).reshape(c, m)
    if ties == "average" and Qs is not Xs:
        for col, col_groups in enumerate(_mixed_truth_groups(Xs, Qs, bounds)):
            if not col_groups:
                continue
            shares: dict = {}
            in_group = np.zeros(n, dtype=bool)
            for a, e, overlaps in col_groups:
                in_group[a:e] = True
                for j, o in overlaps:
                    shares.setdefault(j, []).append(_thinned_pmf(Qs[a:e, col], o))
            for j, pmfs in shares.items():
                lo, hi = int(bounds[j]), int(bounds[j + 1])
                own = Qs[lo:hi, col][~in_group[lo:hi]]
                pmf = _pb.pmfs([own])[0]
                for share in pmfs:
                    pmf = np.convolve(pmf, share)
                k = np.arange(pmf.shape[0], dtype=np.float64)
                e_abs[col, j] = float((pmf * np.abs(sum_prob[col, j] - k)).sum())
    return e_abs.sum(axis=1) / n


# --------------------------------------------------------------------------- exact expectations

def expected_qece(y_prob, true_prob, n_bins: int, *, p: int = 2,
                  aggregation: str = "binary", ties: str = "average") -> float:
    r"""Exact expectation of :math:`\ell_p`-QECE\ :sub:`m` when the outcomes follow ``true_prob``.

    The predictions ``y_prob`` are fixed; the outcomes are drawn independently,
    ``y_i ~ true_prob[i]``.  The bins are those of :func:`calnotes.l2_qece` /
    :func:`calnotes.l1_qece`: equal-mass bins of eq. (1) over the sorted predictions, which do
    not depend on the outcomes; a tie group straddling a boundary is split over its random
    orders (``ties="average"``, the measures' default) or by input position.

    Parameters
    ----------
    y_prob : array_like, shape (n,) or (n, k)
        The reported predictions.
    true_prob : array_like, same shape as ``y_prob``
        The true probabilities ``p*_i`` (rows of a ``(n, k)`` array sum to one).
    n_bins : int
        Number of bins ``m``, ``1 <= m <= n``.
    p : {2, 1}, default 2
        ``2``: closed form, squared bias plus variance per bin, ``O(n log n)`` per column.
        ``1``: exact, from the Poisson-binomial law of each bin's positive count
        (:func:`calnotes._engine.poisson_binomial.expected_abs_deviation`, all bins and classes at
        once): bins of ``L = n / m <= 128`` by the direct recursion (``O(n L)``), larger ones by
        FFT convolutions of exact leaves (``O(n log^2 L)``; error of each pmf entry at most
        ``2 L eps pmf[s] + eps log2(2 L)^2``, :mod:`calnotes._engine.poisson_binomial`).  Outcome
        probabilities of exactly 0 or 1 are deterministic and cost nothing, and a bin whose
        other truths are all equal is binomial (no convolution).
        :func:`folded_normal_l1_approximation` is the ``O(n log n)`` alternative.
    aggregation : {"binary", "classwise", "confidence"}, default "binary"
        ``"binary"`` needs 1-d inputs; the others ``(n, k)`` inputs (Defs 2.7 and 2.8).
    ties : {"average", "position"}, default "average"
        The tie rule of the measure whose expectation is taken (:func:`calnotes.l2_qece`).
        The two agree whenever the true probabilities are equal within every tie group of the
        predictions -- in particular for the calibrated reference ``true_prob = y_prob`` --
        because the outcomes of such a group are exchangeable.  Otherwise a straddling group's
        share of a bin is a uniform random subset: its mean is ``o`` times the group's mean
        truth and its variance gains ``o (N - o) / (N - 1)`` times the truths' variance
        (``l2``), and its law is a hypergeometric thinning of the group's Poisson-binomial
        count (``l1``, ``O(N^2)`` per such group of ``N``).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        Invalid probabilities (naming ``y_prob`` or ``true_prob``), different shapes,
        ``n_bins`` outside ``1..n``, ``p`` not 1 or 2, an unknown aggregation or one that does
        not fit the shape, an unknown tie rule.

    See Also
    --------
    simulate_qece : the same expectation by Monte Carlo.

    Notes
    -----
    For a bin :math:`B_j` write :math:`S_j = \sum_{i\in B_j}(p_i - y_i)`.  Then

    .. math::
        \mathbb E[\ell_2\text{-QECE}_m] = \frac1{n^2}\sum_j \Big(\sum_{i\in B_j}(p_i-p^*_i)\Big)^2
        + \frac1{n^2}\sum_{i} p^*_i(1-p^*_i),

    which at ``y_prob == true_prob`` is Thm 2.6 of the truthfulness paper.  Class-wise: the mean
    over classes of the binary expectation (Thm 3.1); confidence: the binary expectation of the
    top class (first maximum) with truth :math:`p^*_{i,\arg\max_r p_{ir}}` (Obs 3.2).  Chapter
    *Truthful calibration measures*, claims ``000.thm2.6.*``, ``000.thm3.1``, ``000.obs3.2``.

    Examples
    --------
    >>> expected_qece([0.2, 0.8], [0.2, 0.8], n_bins=1)  # (0.16 + 0.16) / 4
    0.08
    >>> round(expected_qece([0.5, 0.5], [0.2, 0.8], n_bins=2, p=1), 12)  # E|0.5 - y| per sample
    0.5
    >>> P = [[0.6, 0.3, 0.1], [0.2, 0.5, 0.3]]
    >>> round(expected_qece(P, P, n_bins=1, aggregation="classwise"), 12)  # (.40+.46+.30)/12
    0.096666666667
    """
    P, T, top = _check_inputs(y_prob, true_prob, aggregation)
    m = check_n_bins(n_bins, P.shape[0])
    p = _check_order(p)
    ties = check_ties(ties)
    X, Q = _columns(P, T, top, aggregation)
    n = X.shape[0]
    if p == 2:
        bias, var, _ = _bin_bias_and_variance(X, Q, m, ties)
        per_column = ((bias ** 2).sum(axis=1) + var.sum(axis=1)) / n ** 2
    else:
        per_column = _expected_l1_columns(X, Q, m, ties)
    return float(per_column.mean())


def _partition_columns(X, Q, labels_fn):
    """Exact ``E[(1/n) sum_g |sum_{i in g} (p_i - y_i)|]`` per column for a fixed partition."""
    n, c = X.shape
    out = np.empty(c)
    for col in range(c):
        group = labels_fn(X[:, col])
        order = np.argsort(group, kind="stable")
        g_sorted = group[order]
        starts = np.flatnonzero(np.r_[True, g_sorted[1:] != g_sorted[:-1]])
        bounds = np.r_[starts, n]
        xs, qs = X[order, col], Q[order, col]
        sum_prob = np.add.reduceat(xs, starts)
        out[col] = _expected_abs_sums(sum_prob, qs, np.diff(bounds)).sum() / n
    return out


def expected_binned_ece(y_prob, true_prob, n_bins: int = 15, *, binning: str = "width",
                        aggregation: str = "binary", ties: str = "average") -> float:
    r"""Exact expectation of the binned :math:`\mathrm{ECE}_1` (:func:`calnotes.binned_ece`, p=1).

    :math:`\mathrm{ECE}_1 = \frac1n\sum_j |\sum_{i\in B_j}(p_i - y_i)|` for any partition that
    does not look at the outcomes, so its expectation is a sum of Poisson-binomial absolute
    moments, as in :func:`expected_qece` with ``p=1`` (to which it reduces for
    ``binning="mass"``).

    Parameters
    ----------
    y_prob, true_prob : array_like, shape (n,) or (n, k)
        Predictions and true probabilities.
    n_bins : int, default 15
        Number of bins.
    binning : {"width", "mass"}
        Bin convention of :mod:`calnotes.core.binning`.
    aggregation : {"binary", "classwise", "confidence"}
    ties : {"average", "position"}, default "average"
        Equal-mass bins only; see :func:`expected_qece`.

    Returns
    -------
    float

    Notes
    -----
    Used for Example 1.1 in the chapter *Truthful calibration measures*.

    Examples
    --------
    >>> p = [0.1, 0.15, 0.8, 0.9]
    >>> round(expected_binned_ece(p, p, n_bins=2), 6)  # (0.3825+0.432)/4
    0.203625
    """
    P, T, top = _check_inputs(y_prob, true_prob, aggregation)
    ties = check_ties(ties)
    if binning == "mass":
        return expected_qece(P, T, n_bins, p=1, aggregation=aggregation, ties=ties)
    if binning != "width":
        raise ValueError(f"binning: expected 'width' or 'mass', got {binning!r}")
    m = check_n_bins(n_bins, np.iinfo(np.int64).max)
    from .binning import _width_bins_unchecked
    X, Q = _columns(P, T, top, aggregation)
    return float(_partition_columns(X, Q, lambda x: _width_bins_unchecked(x, m)).mean())


def expected_unbinned_ece(y_prob, true_prob, *, aggregation: str = "binary") -> float:
    r"""Exact expectation of the unbinned ECE (Def 2.4, :func:`calnotes.unbinned_ece`).

    The samples are pooled by exact prediction value, a partition that ignores the outcomes, so
    :math:`\mathbb E[\mathrm{ECE}] = \frac1n\sum_{v}\mathbb E\,|\sum_{i:p_i=v}(p_i-y_i)|`.  With all
    predictions distinct it is :math:`\frac1n\sum_i \big(p_i(1-p^*_i) + (1-p_i)p^*_i\big)`.

    Examples
    --------
    >>> round(expected_unbinned_ece([0.2, 0.7], [0.2, 0.7]), 12)  # (2*0.16 + 2*0.21) / 2
    0.37
    """
    P, T, top = _check_inputs(y_prob, true_prob, aggregation)
    X, Q = _columns(P, T, top, aggregation)
    return float(_partition_columns(
        X, Q, lambda x: np.unique(x, return_inverse=True)[1].ravel()).mean())


def _width_bin_sums(X, m: int, *weights):
    """Per column of ``X`` (n, c): the size of each equal-width bin, and the sum over it of each
    matrix in ``weights`` (shape of ``X``); a list of arrays of shape (c, m).

    Columns are processed in blocks of about 4M entries, so memory stays bounded.
    """
    from .binning import _width_bins_unchecked

    n, c = X.shape
    outs = [np.empty((c, m)) for _ in range(1 + len(weights))]
    block = max(1, (1 << 22) // max(n, 1))
    for lo in range(0, c, block):
        hi = min(c, lo + block)
        keys = (_width_bins_unchecked(X[:, lo:hi], m) + m * np.arange(hi - lo)).ravel()
        size = m * (hi - lo)
        outs[0][lo:hi] = np.bincount(keys, minlength=size).reshape(-1, m)
        for out, W in zip(outs[1:], weights):
            out[lo:hi] = np.bincount(keys, weights=W[:, lo:hi].ravel(),
                                     minlength=size).reshape(-1, m)
    return outs


def folded_normal_l1_approximation(y_prob, true_prob, n_bins: int, *,
                                   aggregation: str = "binary", binning: str = "mass",
                                   ties: str = "average") -> float:
    r"""Normal approximation of ``E[l1-QECE_m]`` (Prop 3.3 of the proper-calibration-errors paper).

    Each bin's signed sum :math:`S_j = \sum_{i\in B_j}(p_i - y_i)` is treated as
    :math:`N(\mu_j, \sigma_j^2)` with :math:`\mu_j = \sum_{B_j}(p_i - p^*_i)` and
    :math:`\sigma_j^2 = \sum_{B_j} p^*_i(1-p^*_i)`, and :math:`\mathbb E|S_j|` is the folded-normal
    mean

    .. math::
        \sigma_j\sqrt{2/\pi}\,e^{-\mu_j^2/(2\sigma_j^2)} + \mu_j\big(1 - 2\Phi(-\mu_j/\sigma_j)\big)

    (:math:`|\mu_j|` when :math:`\sigma_j = 0`), summed over bins and divided by ``n``.  Cost
    ``O(n log n)``; its accuracy against the exact :func:`expected_qece` (``p=1``) is tabulated
    in the chapter *Truthful calibration measures* (it is poor for bins of a few samples).

    With ``binning="width"`` the same approximation of the equal-width binned
    :math:`\mathrm{ECE}_1` (the expectation :func:`expected_binned_ece` computes exactly); it is
    what :func:`calnotes.evaluate` reports when the exact sums would be too slow, i.e. when some
    bin is large, where the normal approximation is at its best.

    Parameters
    ----------
    y_prob, true_prob, n_bins, aggregation
        As for :func:`expected_qece`.
    binning : {"mass", "width"}, default "mass"
        Equal-mass bins of eq. (1) (l1-QECE) or equal-width bins (binned ECE).
    ties : {"average", "position"}, default "average"
        Equal-mass bins only: the mean and variance of each bin's sum under that tie rule
        (:func:`expected_qece`).

    Returns
    -------
    float

    Examples
    --------
    >>> p = np.full(400, 0.5)
    >>> exact = expected_qece(p, p, n_bins=4, p=1)
    >>> approx = folded_normal_l1_approximation(p, p, n_bins=4)
    >>> bool(abs(approx / exact - 1) < 0.01)
    True
    >>> q = np.linspace(0.05, 0.95, 900)
    >>> exact = expected_binned_ece(q, q, n_bins=3)
    >>> approx = folded_normal_l1_approximation(q, q, n_bins=3, binning="width")
    >>> bool(abs(approx / exact - 1) < 0.01)
    True
    """
    P, T, top = _check_inputs(y_prob, true_prob, aggregation)
    X, Q = _columns(P, T, top, aggregation)
    ties = check_ties(ties)
    if binning == "mass":
        mu, var, _ = _bin_bias_and_variance(X, Q, check_n_bins(n_bins, P.shape[0]), ties)
    elif binning == "width":  # as expected_binned_ece: empty bins are allowed
        m = check_n_bins(n_bins, np.iinfo(np.int64).max)
        _, mu, var = _width_bin_sums(X, m, X - Q, Q * (1.0 - Q))
    else:
        raise ValueError(f"binning: expected 'mass' or 'width', got {binning!r}")
    folded = _folded_normal_mean(mu, np.sqrt(var))
    return float((folded.sum(axis=1) / X.shape[0]).mean())


def _folded_normal_mean(mu, sigma):
    """``E|Z|`` for ``Z ~ N(mu, sigma^2)``: ``sigma sqrt(2/pi) e^{-mu^2/(2 sigma^2)} + mu (1 -
    2 Phi(-mu/sigma))``, and ``|mu|`` where ``sigma = 0``."""
    from scipy.stats import norm

    mu, sigma = np.asarray(mu, dtype=np.float64), np.asarray(sigma, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        z = mu / sigma
        folded = (sigma * np.sqrt(2.0 / np.pi) * np.exp(-0.5 * z ** 2)
                  + mu * (1.0 - 2.0 * norm.cdf(-z)))
    return np.where(sigma > 0, folded, np.abs(mu))


def folded_normal_ece_bias(bin_prob, conf_mean, conf_var, accuracy, n):
    r"""003 Prop 3.3: the folded-normal approximation :math:`\mu_{(n)}` of the expected binned ECE.

    With bin probabilities :math:`p_i`, mean confidences :math:`\mathrm{conf}_i`, confidence
    variances :math:`V_i^{\mathrm{conf}}` and accuracies :math:`\mathrm{acc}_i` of the population
    (eqs. (22)-(24)), a test set of size ``n`` puts :math:`n_i = n p_i` samples in bin ``i``, and
    :math:`\hat{\mathrm{acc}}_i - \hat{\mathrm{conf}}_i` is treated as
    :math:`N(\mu_i, \sigma_i^2)` with :math:`\mu_i = \mathrm{conf}_i - \mathrm{acc}_i` and
    :math:`\sigma_i^2 = (V_i^{\mathrm{conf}} + \mathrm{acc}_i(1 - \mathrm{acc}_i))/n_i`, so

    .. math::
        \mathbb E\,\widehat{\mathrm{ECE}}_{(n)} \approx \mu_{(n)} = \sum_i p_i\,
        \mathbb E\lvert N(\mu_i, \sigma_i^2)\rvert \ \ge\ \sum_i p_i \lvert\mu_i\rvert = \mathrm{ECE}.

    Unlike :func:`folded_normal_l1_approximation` (Part II: the predictions fixed, only the
    labels random), the confidences are random here too (the :math:`V^{\mathrm{conf}}` term), as
    in the paper's setting of a fresh test set.

    Parameters
    ----------
    bin_prob, conf_mean, conf_var, accuracy : array_like, shape (m,)
        Per-bin population quantities; ``bin_prob`` sums to one (bins of probability 0 are
        skipped).
    n : float or array_like
        Test-set size(s); a real number (the derivatives of Prop 3.3 treat ``n`` as continuous).

    Returns
    -------
    float or numpy.ndarray
        :math:`\mu_{(n)}` for each ``n``.

    Examples
    --------
    A calibrated population (``mu_i = 0``): the approximation is ``sum_i p_i sigma_i
    sqrt(2/pi)``, decreasing like ``n^{-1/2}``:

    >>> b = [0.5, 0.5]; c = [0.6, 0.9]; v = [0.001, 0.001]
    >>> round(float(folded_normal_ece_bias(b, c, v, c, 100)), 6)
    0.044717
    >>> round(float(folded_normal_ece_bias(b, c, v, c, 400)), 6)
    0.022358
    """
    arrays = []
    for name, value in (("bin_prob", bin_prob), ("conf_mean", conf_mean), ("conf_var", conf_var),
                        ("accuracy", accuracy)):
        a = np.asarray(value, dtype=np.float64)
        if a.ndim != 1 or a.size == 0 or not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: expected a non-empty 1-d array of finite numbers")
        arrays.append(a)
    p, conf, vconf, acc = arrays
    if not p.size == conf.size == vconf.size == acc.size:
        raise ValueError("bin_prob, conf_mean, conf_var, accuracy: lengths differ"
                         f" ({p.size}, {conf.size}, {vconf.size}, {acc.size})")
    if np.any(p < 0) or abs(p.sum() - 1.0) > 1e-9:
        raise ValueError("bin_prob: expected non-negative bin probabilities summing to one")
    if np.any(vconf < 0) or np.any((acc < 0) | (acc > 1)):
        raise ValueError("conf_var, accuracy: expected variances >= 0 and accuracies in [0, 1]")
    n_arr = np.asarray(n, dtype=np.float64)
    if not np.all(np.isfinite(n_arr)) or np.any(n_arr <= 0):
        raise ValueError(f"n: expected positive test-set sizes, got {n!r}")
    keep = p > 0
    p, conf, vconf, acc = p[keep], conf[keep], vconf[keep], acc[keep]
    ni = n_arr[..., None] * p
    sigma = np.sqrt((vconf + acc * (1.0 - acc)) / ni)
    out = (p * _folded_normal_mean(conf - acc, sigma)).sum(axis=-1)
    return float(out) if np.ndim(out) == 0 else out


# --------------------------------------------------------------------------- Monte Carlo

@dataclass(frozen=True)
class SimulationResult:
    """Monte Carlo estimate of an expected calibration measure.

    Attributes
    ----------
    mean : float
        Mean of the replication values.
    se : float
        Standard error of the mean: sample standard deviation (``ddof=1``) over
        ``sqrt(n_reps)``; NaN for a single replication.
    n_reps : int
        Number of replications.
    values : numpy.ndarray, shape (n_reps,)
        The measure on each replication's outcomes.
    outcomes : numpy.ndarray or None
        With ``keep_outcomes=True``: the drawn outcomes, shape ``(n_reps, n)`` (0/1 for a binary
        problem, labels ``0..k-1`` otherwise).
    """

    mean: float
    se: float
    n_reps: int
    values: np.ndarray
    outcomes: Optional[np.ndarray] = None

    def z_score(self, reference: float) -> float:
        """``(mean - reference) / se``: how many standard errors the estimate is off."""
        return float((self.mean - reference) / self.se)

    def __repr__(self) -> str:
        return f"SimulationResult(mean={self.mean!r}, se={self.se!r}, n_reps={self.n_reps})"


#: Replications per chunk are chosen so that a chunk draws about this many uniforms (8 MB).
_CHUNK_ELEMENTS = 1 << 20


@dataclass(frozen=True)
class _Problem:
    """Everything a worker needs for one chunk; small and picklable."""

    kind: str               # "binary", "classwise", "confidence"
    order: np.ndarray       # (c, n) stable ascending order of each column
    sum_prob: np.ndarray    # (c, m) bin sums of predictions, as calnotes.core.measures has them
    start: np.ndarray       # (m,) first sorted position of each bin
    draw: np.ndarray        # binary: p* (n,); multi-class: cumulative p* (n, k - 1)
    top: Optional[np.ndarray]  # confidence: predicted class (n,)
    n: int
    p: int
    groups: tuple = ()      # ties="average": per column, the straddling tie groups


def _draw_outcomes(problem: _Problem, u: np.ndarray) -> np.ndarray:
    """Outcomes from uniforms ``u`` (R, n): ``u < p*`` or the label ``#{r < k-1: cum_r <= u}``."""
    if problem.kind == "binary":
        return (u < problem.draw[None, :]).astype(np.int8)
    labels = np.zeros(u.shape, dtype=np.int16)
    for r in range(problem.draw.shape[1]):
        labels += u >= problem.draw[None, :, r]
    return labels


def _tie_averaged_moment(problem: _Problem, col: int, sorted_positive: np.ndarray):
    """``sum_j E|S_j|^p`` per replication, the mean over orders of the straddling tie groups.

    A group's positives in a replication, ``K``, are shared hypergeometrically among its bins
    (:mod:`calnotes._engine.ties`); the rest of each bin is as drawn.
    """
    groups = problem.groups[col]
    mask = np.ones(problem.n, dtype=bool)
    K = []
    for a, e, _ in groups:
        mask[a:e] = False
        K.append(sorted_positive[:, a:e].sum(axis=1, dtype=np.int64))
    counts = np.add.reduceat(sorted_positive * mask[None, :], problem.start, axis=1,
                             dtype=np.float64)
    c = problem.sum_prob[col][None, :] - counts             # (R, m) deterministic parts
    by_bin: dict = {}
    for (a, e, overlaps), k in zip(groups, K):
        for j, o in overlaps:
            by_bin.setdefault(j, []).append((e - a, k, o))
    out = (c ** 2 if problem.p == 2 else np.abs(c))
    for j, parts in by_bin.items():
        out[:, j] = _ties.expected_abs_power(c[:, j], parts, problem.p)
    return out.sum(axis=1)


def _measure_values(problem: _Problem, columns_positive) -> np.ndarray:
    """Measure per replication from per-column positive indicators (each (R, n), input order)."""
    n = problem.n
    per_col = []
    for col, positive in enumerate(columns_positive):
        sorted_positive = positive[:, problem.order[col]]
        if problem.groups and problem.groups[col]:
            total = _tie_averaged_moment(problem, col, sorted_positive)
            per_col.append(total / (n ** 2 if problem.p == 2 else n))
            continue
        counts = np.add.reduceat(sorted_positive, problem.start, axis=1, dtype=np.float64)
        S = problem.sum_prob[col][None, :] - counts
        if problem.p == 2:
            per_col.append((S ** 2).sum(axis=1) / n ** 2)
        else:
            per_col.append(np.abs(S).sum(axis=1) / n)
    if len(per_col) == 1:
        return per_col[0]
    return np.ascontiguousarray(np.stack(per_col, axis=1)).mean(axis=1)


def _simulate_chunk(problem: _Problem, seed: np.random.SeedSequence, n_reps: int,
                    keep_outcomes: bool):
    """Values (and outcomes) of ``n_reps`` replications drawn from ``seed``."""
    u = np.random.default_rng(seed).random((n_reps, problem.n))
    if problem.kind == "binary":
        outcomes = _draw_outcomes(problem, u)
        values = _measure_values(problem, [outcomes])
    elif problem.kind == "confidence" and not keep_outcomes:
        # label == top  <=>  cum[top - 1] <= u < cum[top]  (no need for the full labels)
        cum = problem.draw
        rows = np.arange(problem.n)
        lo = np.where(problem.top > 0, cum[rows, np.maximum(problem.top - 1, 0)], -np.inf)
        last = cum.shape[1]            # k - 1: the last class has no upper boundary
        hi = np.where(problem.top < last, cum[rows, np.minimum(problem.top, last - 1)], np.inf)
        outcomes = None
        values = _measure_values(problem, [(u >= lo) & (u < hi)])
    else:
        outcomes = _draw_outcomes(problem, u)
        if problem.kind == "confidence":
            values = _measure_values(problem, [outcomes == problem.top[None, :]])
        else:
            k = problem.order.shape[0]
            values = _measure_values(problem, [outcomes == r for r in range(k)])
    return values, (outcomes if keep_outcomes else None)


def _make_problem(y_prob, true_prob, n_bins, p, aggregation, ties) -> _Problem:
    P, T, top = _check_inputs(y_prob, true_prob, aggregation)
    m = check_n_bins(n_bins, P.shape[0])
    p = _check_order(p)
    ties = check_ties(ties)
    X, _ = _columns(P, T, top, aggregation)
    n, c = X.shape
    bounds = _bounds(n, m)
    start = bounds[:-1]
    groups = ()
    if ties == "average":
        Xs = np.sort(X, axis=0)
        groups = tuple(_ties.straddling_groups(Xs[:, col], bounds) for col in range(c))
    empty = [np.empty(0, dtype=np.int64)] * c
    sum_prob = _binstats.bin_stats(X, empty, m, "mass").sum_prob  # the measures' own numbers
    order = np.ascontiguousarray(np.argsort(X, axis=0, kind="stable").T)
    if aggregation == "binary":
        draw = T
    else:
        draw = np.ascontiguousarray(np.cumsum(T, axis=1)[:, :-1])
    return _Problem(kind=aggregation, order=order, sum_prob=np.ascontiguousarray(sum_prob),
                    start=start, draw=draw, top=top if aggregation == "confidence" else None,
                    n=n, p=p, groups=groups)


def _seed_sequence(rng) -> np.random.SeedSequence:
    """A SeedSequence to spawn chunk seeds from: a child of the generator's own sequence."""
    gen = check_rng(rng)
    return gen.bit_generator.seed_seq.spawn(1)[0] if hasattr(gen.bit_generator, "seed_seq") \
        else np.random.SeedSequence(gen.integers(2 ** 63))


def _child_seed(parent: np.random.SeedSequence, index: int) -> np.random.SeedSequence:
    """Child ``index`` of ``parent``: what ``parent.spawn(index + 1)[index]`` returns for a
    fresh ``parent``, built directly so that a task can make its own children from the
    (small, picklable) parent and an index range."""
    return np.random.SeedSequence(parent.entropy, spawn_key=parent.spawn_key + (int(index),),
                                  pool_size=parent.pool_size)


def _map_ordered(fn, tasks, executor=None) -> list:
    """``[fn(*task) for task in tasks]``, on ``executor`` if one is given, results in order.

    ``fn`` must be a module-level function (worker processes import it by name).  On an
    error the tasks not yet started are cancelled and the error is raised.
    """
    if executor is None:
        return [fn(*task) for task in tasks]
    futures = [executor.submit(fn, *task) for task in tasks]
    try:
        return [future.result() for future in futures]
    finally:
        for future in futures:
            future.cancel()


def _check_chunk(value, name: str) -> Optional[int]:
    """``None`` or a positive integer (a task size)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}: expected a positive integer, got {value!r}")
    return int(value)


def simulate_qece(y_prob, true_prob, n_bins: int, n_reps: int, rng, *, p: int = 2,
                  aggregation: str = "binary", ties: str = "average", executor=None,
                  chunk_reps: Optional[int] = None, progress: bool = False,
                  keep_outcomes: bool = False) -> SimulationResult:
    r"""Monte Carlo estimate of ``E[l_p-QECE_m]``: draw the outcomes ``n_reps`` times.

    Each replication draws ``y_i ~ true_prob[i]`` independently and evaluates exactly what
    :func:`calnotes.l2_qece` / :func:`calnotes.l1_qece` (wrapped in :func:`calnotes.classwise` or
    :func:`calnotes.confidence` for ``k`` classes) return on that sample.  The bins depend on the
    predictions only, so they are computed once; a chunk of ``R`` replications is then one
    ``(R, n)`` array of uniforms and one ``reduceat`` per column -- no Python loop over
    replications.

    Parameters
    ----------
    y_prob, true_prob : array_like, shape (n,) or (n, k)
        Predictions and true probabilities, as for :func:`expected_qece`.
    n_bins : int
        Number of equal-mass bins ``m``.
    n_reps : int
        Number of replications (``>= 1``).
    rng : numpy.random.Generator or int
        Source of randomness.  Chunk ``j`` draws from child ``j`` of a
        :class:`numpy.random.SeedSequence` spawned from ``rng``, so the result depends on
        ``rng``, ``n_reps`` and ``chunk_reps`` only -- not on the executor or on the order in
        which chunks finish.
    p : {2, 1}, default 2
        ``l2``- or ``l1``-QECE.
    aggregation : {"binary", "classwise", "confidence"}, default "binary"
    ties : {"average", "position"}, default "average"
        The measure's tie rule: with ``"average"`` each replication's value is the measure's
        exact mean over the orders of tied predictions, as :func:`calnotes.l2_qece` returns it.
    executor : concurrent.futures.Executor, optional
        Where the chunks run, e.g. ``ProcessPoolExecutor()`` or a Dask
        ``Client.get_executor()``.  Default: in this process, one chunk after another.
    chunk_reps : int, optional
        Replications per chunk.  Default: as many as keep a chunk near 10^6 drawn uniforms
        (``n_reps`` for small ``n``); set it smaller to spread a large run over workers.
    progress : bool, default False
        Show a tqdm progress bar over chunks.
    keep_outcomes : bool, default False
        Also return the drawn outcomes (``n_reps x n`` labels; memory!).

    Returns
    -------
    SimulationResult
        ``mean``, ``se`` (sample standard deviation / sqrt(n_reps)), ``n_reps``, ``values``.

    Notes
    -----
    Outcomes come from one uniform ``u`` per sample and replication: ``y = 1[u < p*]`` for a
    binary problem, the label ``#{r < k - 1 : u >= p*_1 + ... + p*_{r+1}}`` for ``k`` classes
    (the last class takes any rounding slack of the row sum).  Class-wise and confidence runs
    with the same ``rng`` therefore see the same samples.  Chapter *Truthful calibration
    measures*, claim ``000.thm2.6.simulation``.

    Examples
    --------
    >>> p_star = np.linspace(0.05, 0.95, 12)
    >>> sim = simulate_qece(p_star, p_star, n_bins=5, n_reps=20_000, rng=0)
    >>> exact = expected_qece(p_star, p_star, n_bins=5)
    >>> bool(abs(sim.z_score(exact)) < 4)
    True
    """
    problem = _make_problem(y_prob, true_prob, n_bins, p, aggregation, ties)
    if isinstance(n_reps, bool) or not isinstance(n_reps, (int, np.integer)) or n_reps < 1:
        raise ValueError(f"n_reps: expected a positive integer, got {n_reps!r}")
    n_reps = int(n_reps)
    if chunk_reps is None:
        chunk_reps = max(1, _CHUNK_ELEMENTS // problem.n)
    elif isinstance(chunk_reps, bool) or not isinstance(chunk_reps, (int, np.integer)) \
            or chunk_reps < 1:
        raise ValueError(f"chunk_reps: expected a positive integer, got {chunk_reps!r}")
    chunk_reps = min(int(chunk_reps), n_reps)
    sizes = [chunk_reps] * (n_reps // chunk_reps)
    if n_reps % chunk_reps:
        sizes.append(n_reps % chunk_reps)
    seeds = _seed_sequence(rng).spawn(len(sizes))

    bar = None
    if progress:
        from tqdm import tqdm
        bar = tqdm(total=n_reps, unit="rep", desc="simulate_qece")
    results = [None] * len(sizes)
    try:
        if executor is None:
            for j, (seed, size) in enumerate(zip(seeds, sizes)):
                results[j] = _simulate_chunk(problem, seed, size, keep_outcomes)
                if bar is not None:
                    bar.update(size)
        else:
            from concurrent.futures import as_completed
            futures = {executor.submit(_simulate_chunk, problem, seed, size, keep_outcomes): j
                       for j, (seed, size) in enumerate(zip(seeds, sizes))}
            for future in as_completed(futures):
                j = futures[future]
                results[j] = future.result()
                if bar is not None:
                    bar.update(sizes[j])
    finally:
        if bar is not None:
            bar.close()
    values = np.concatenate([r[0] for r in results])
    outcomes = np.concatenate([r[1] for r in results]) if keep_outcomes else None
    se = float(values.std(ddof=1) / math.sqrt(n_reps)) if n_reps > 1 else float("nan")
    return SimulationResult(mean=float(values.mean()), se=se, n_reps=n_reps, values=values,
                            outcomes=outcomes)
