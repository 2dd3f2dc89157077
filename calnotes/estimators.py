"""Sample estimators of proper calibration errors (paper 003, Secs. 3-5).

* :func:`binned_ce` -- the binned plug-in of ``CE_S`` for a proper loss: samples grouped by
  binning the confidence, ``sum_b (n_b/n) d(mean label vector in b, mean prediction in b)``.
* :func:`debiased_l2_ce` -- the squared top-label L2 ECE with each bin's sampling variance
  subtracted (Kumar, Liang & Ma 2019), nearly unbiased for a calibrated model where the plug-in
  is biased upwards (003 Prop 3.3).

The SKCE U-statistic is :func:`calnotes.skce.skce_unbiased`; the calibration upper bound of 003
Thm 4.3 is the mean proper loss itself (:func:`calnotes.brier_loss`, :func:`calnotes.log_loss`:
``inf g_S = 0`` for both), and the unbiased estimate of an injective recalibration's ``CE_2^2``
improvement is the difference of mean Brier losses (003 Prop 4.5, App. G.4; chapter
"Proper calibration errors").
"""

from __future__ import annotations

import numpy as np

from ._validate import check_labels, check_n_bins, check_probabilities
from .binning import equal_width_bins
from .scores import divergence, get_loss

__all__ = ["binned_ce", "debiased_l2_ce"]

_ON = ("confidence", "class_and_confidence")


def _problem(y_true, y_prob):
    P = check_probabilities(y_prob, name="y_prob")
    if P.ndim == 1:
        P = np.column_stack([1.0 - P, P])
    n, k = P.shape
    y = check_labels(y_true, n_classes=k, n_samples=n)
    return y, P


def _bins(conf: np.ndarray, n_bins: int, binning: str) -> np.ndarray:
    """Bin numbers; equal-mass bins keep tied confidences together (each run of equal values
    goes to the bin of its first member in sorted order), so no result depends on row order."""
    if binning == "width":
        return equal_width_bins(conf, n_bins)
    if binning != "mass":
        raise ValueError(f"binning: expected 'width' or 'mass', got {binning!r}")
    order = np.argsort(conf, kind="stable")
    sorted_conf = conf[order]
    by_position = np.arange(conf.size) * n_bins // conf.size       # eq. (1) on sorted rows
    first = np.flatnonzero(np.r_[True, sorted_conf[1:] != sorted_conf[:-1]])
    run = np.cumsum(np.r_[True, sorted_conf[1:] != sorted_conf[:-1]]) - 1
    b = np.empty(conf.size, dtype=np.intp)
    b[order] = by_position[first[run]]
    return b


def binned_ce(y_true, y_prob, loss="brier", *, n_bins: int = 15, binning: str = "width",
              on: str = "class_and_confidence") -> float:
    r"""Binned plug-in estimate of the proper calibration error ``CE_S`` (003 Def 4.2).

    The samples are grouped by their predicted class and a bin of the top-label confidence
    ``max_r p_r`` (``on="confidence"``: by the confidence bin alone, which averages prediction
    vectors of different predicted classes and washes most of the error out); in each group
    ``b`` the
    mean one-hot label :math:`\bar y_b` and the mean prediction :math:`\bar p_b` (whole vectors)
    give

    .. math::  \widehat{\mathrm{CE}}_S = \sum_b \frac{n_b}{n}\, d_S(\bar y_b, \bar p_b),

    the divergence in the book's order, truth first.  Its population version,
    :math:`\mathbb E\, d_S(\mathbb E[Y \mid B], \mathbb E[f(X) \mid B])` for the bin ``B``, is at
    most ``CE_S`` for the Brier and log losses: their divergences are jointly convex, so
    conditional Jensen applies to the pair ``(E[Y | f(X)], f(X))`` given ``B``.  (For other
    losses the coarsening can go either way.)  Like every plug-in it is biased upwards at small
    sample sizes (003 Prop 3.3).

    Parameters
    ----------
    y_true : array_like, shape (n,)
    y_prob : array_like, shape (n, k) or (n,)
    loss : str or ProperLoss, default "brier"
        A proper loss of :mod:`calnotes.scores`.
    n_bins : int, default 15
    binning : {"width", "mass"}
        Equal-width bins of the confidence or equal-mass bins (eq. (1) of the truthfulness
        paper, with tied confidences kept in one bin so that the row order does not matter).
    on : {"class_and_confidence", "confidence"}

    Returns
    -------
    float

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=5000)
    >>> y = (P.cumsum(axis=1) > rng.random((5000, 1))).argmax(axis=1)     # calibrated
    >>> small = binned_ce(y, P)
    >>> over = binned_ce(y, 0.5 * P + 0.5 * np.eye(3)[P.argmax(axis=1)])   # over-confident
    >>> bool(over > 10 * small)
    True
    """
    y, P = _problem(y_true, y_prob)
    n, k = P.shape
    m = check_n_bins(n_bins, n) if binning == "mass" else check_n_bins(n_bins, 2 ** 62)
    if on not in _ON:
        raise ValueError(f"on: expected one of {_ON}, got {on!r}")
    loss = get_loss(loss)
    top = P.argmax(axis=1)
    conf = P[np.arange(n), top]
    groups = [np.arange(n)] if on == "confidence" else [np.flatnonzero(top == c)
                                                          for c in range(k)]
    total = 0.0
    for idx in groups:
        if idx.size == 0:
            continue
        b = _bins(conf[idx], m, binning) if binning == "width" or idx.size >= m else \
            _bins(conf[idx], idx.size, binning)
        count = np.bincount(b, minlength=b.max() + 1).astype(float)
        used = count > 0
        Ybar = np.zeros((count.size, k))
        np.add.at(Ybar, (b, y[idx]), 1.0)
        Pbar = np.zeros((count.size, k))
        np.add.at(Pbar, b, P[idx])
        Ybar, Pbar, count = Ybar[used] / count[used, None], Pbar[used] / count[used, None], \
            count[used]
        total += float(count @ divergence(Ybar, Pbar, loss))
    return total / n


def debiased_l2_ce(y_true, y_prob, *, n_bins: int = 15, binning: str = "mass") -> float:
    r"""Debiased squared top-label L2 ECE (Kumar, Liang & Ma 2019).

    With the confidences binned and, in bin ``b``, the accuracy :math:`\bar a_b`, the mean
    confidence :math:`\bar c_b` and ``n_b`` samples,

    .. math::  \sum_b \frac{n_b}{n}\Bigl[(\bar a_b - \bar c_b)^2
               - \frac{\bar a_b (1 - \bar a_b)}{n_b - 1}\Bigr].

    Given the bin counts, with i.i.d. samples the correctness indicators of a bin are i.i.d.
    Bernoulli(:math:`a_b`), so the subtracted term is the unbiased estimate of
    :math:`\mathrm{Var}(\bar a_b)` and the bracket estimates :math:`(a_b - \bar c_b)^2` without
    the upward bias of the plug-in (003 Prop 3.3).  Bins with one sample contribute their
    plug-in term.  The estimate can be negative.

    Parameters
    ----------
    y_true : array_like, shape (n,)
    y_prob : array_like, shape (n, k) or (n,)
    n_bins : int, default 15
    binning : {"mass", "width"}, default "mass"
        Equal-mass bins keep tied confidences together (row-order invariant).

    Returns
    -------
    float

    Examples
    --------
    >>> rng = np.random.default_rng(1)
    >>> p = rng.uniform(0.5, 1.0, size=4000)
    >>> y = (rng.uniform(size=p.size) < p).astype(int)             # calibrated
    >>> calibrated = debiased_l2_ce(y, np.column_stack([1 - p, p]))
    >>> q = (p + 1) / 2                                              # over-confident
    >>> over = debiased_l2_ce(y, np.column_stack([1 - q, q]))
    >>> bool(abs(calibrated) < 1e-3 < 0.01 < over)
    True
    """
    y, P = _problem(y_true, y_prob)
    n, _ = P.shape
    m = check_n_bins(n_bins, n) if binning == "mass" else check_n_bins(n_bins, 2 ** 62)
    top = P.argmax(axis=1)
    conf = P[np.arange(n), top]
    correct = (top == y).astype(float)
    b = _bins(conf, m, binning)
    count = np.bincount(b, minlength=m).astype(float)
    used = count > 0
    acc = np.bincount(b, correct, minlength=m)[used] / count[used]
    cbar = np.bincount(b, conf, minlength=m)[used] / count[used]
    c = count[used]
    correction = np.where(c > 1, acc * (1 - acc) / np.maximum(c - 1, 1), 0.0)
    return float(c @ ((acc - cbar) ** 2 - correction) / n)
