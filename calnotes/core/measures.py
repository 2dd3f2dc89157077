"""Calibration measures: binary estimators and their lifts to ``k`` classes.

Binary measures take ``(y_true, y_prob)`` with ``y_prob`` of shape ``(n,)`` holding
``P(y = 1)``.  Multi-class inputs ``(n, k)`` are reduced to binary problems by one of two
aggregations (truthfulness paper, Defs 2.7 and 2.8):

* :func:`classwise` -- the average of the measure over the ``k`` one-vs-rest problems;
* :func:`confidence` -- the measure on (top probability, "was the top class right").

Both accept any binary measure of this module (fast, vectorised path) or any callable
``measure(y_true, y_prob, **kwargs)`` (a loop over classes).

Binned measures use the bin convention documented in :mod:`calnotes.core.binning`: equal-width
bins ``[j/m, (j+1)/m)`` with 1 in the last bin, and equal-mass bins by sorted position
(eq. (1)).  A group of equal predictions that straddles an equal-mass boundary is, by default
(``ties="average"``), split over all its orders and the measure averaged exactly over them, so
no equal-mass measure depends on the order of the rows; ``ties="position"`` keeps eq. (1) with
ties in input order.

The chapter *The measures* (``book/foundations/measures.md``) defines each quantity and shows
where popular libraries disagree.
"""

from __future__ import annotations

import inspect
import numbers
from typing import Callable

import numpy as np

from .._engine import bin_stats as _binstats
from .measure_spec import L1_QECE, L2_QECE, BinnedMeasure
from .._engine.ties import check_ties
from .._validate import _as_array_and_dtype, check_labels, check_n_bins, check_probabilities

__all__ = [
    "binned_ece",
    "l1_qece",
    "l2_qece",
    "max_calibration_error",
    "ks_calibration_error",
    "unbinned_ece",
    "classwise",
    "confidence",
    "confidence_scores",
    "tce",
    "cwce",
    "reliability_stats",
]


def _check_p(p) -> float:
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not np.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1 (the exponent of the lp error), got {p!r}")
    return float(p)


def _check_bins(n_bins, n: int, binning: str = "mass") -> int:
    """``n_bins`` for ``n`` samples: ``1 <= m <= n`` for equal-mass bins (eq. (1) needs a sample
    per bin); any positive ``m`` for equal-width bins, where empty bins are allowed."""
    if binning == "width":
        return check_n_bins(n_bins, np.iinfo(np.int64).max)
    return check_n_bins(n_bins, n)


def _check_binning(binning) -> str:
    if binning not in ("width", "mass"):
        raise ValueError(f"binning: expected 'width' or 'mass', got {binning!r}")
    return binning


def _binary_problem(y_true, y_prob):
    """Validate a binary problem; return (P as (n, 1), [positive rows])."""
    p = check_probabilities(y_prob)
    if p.ndim == 2:
        raise ValueError(
            f"y_prob: a binary measure needs shape (n,) with P(y=1), got shape {p.shape};"
            " for k classes use calnotes.classwise(measure, ...) or calnotes.confidence(measure, ...)"
        )
    y = check_labels(y_true, n_classes=2, n_samples=p.shape[0])
    return p[:, None], [np.flatnonzero(y == 1)]


def _attach(columns: Callable):
    """Decorator: give a public binary measure its column-batched kernel."""
    def wrap(func):
        func._columns = columns
        return func
    return wrap


# --------------------------------------------------------------------------- kernels
# Each kernel maps (P (n, c), positives, **kwargs) -> values (c,), inputs already valid.

def _ece_columns(P, positives, n_bins=15, p=1, binning="width", ties="average"):
    # sum_j |B_j|/n |S_j/|B_j||^p = sum_j |B_j|^(1-p) E|S_j|^p / n  (empty bins contribute 0)
    stats = _binstats.bin_stats(P, positives, n_bins, binning, ties)
    return BinnedMeasure.lp_ece(f"l{p:g}-ECE", p, binning).of_stats(stats)


def _mce_columns(P, positives, n_bins=15, binning="width", ties="average"):
    stats = _binstats.bin_stats(P, positives, n_bins, binning, ties)
    return np.nanmax(stats.gaps(), axis=1)


def _l1_qece_columns(P, positives, n_bins, ties="average"):
    return L1_QECE.of_stats(_binstats.bin_stats(P, positives, n_bins, "mass", ties))


def _l2_qece_columns(P, positives, n_bins, ties="average"):
    return L2_QECE.of_stats(_binstats.bin_stats(P, positives, n_bins, "mass", ties))


def _outcome_column(n, rows):
    y = np.zeros(n)
    y[rows] = 1.0
    return y


def _ks_columns(P, positives):
    n, c = P.shape
    out = np.empty(c)
    for col in range(c):
        x = P[:, col]
        order = np.argsort(x, kind="stable")
        xs = x[order]
        partial = np.cumsum(xs - _outcome_column(n, positives[col])[order])
        ends = np.flatnonzero(np.append(xs[1:] != xs[:-1], True))  # last of each tie group
        out[col] = np.abs(partial[ends]).max() / n
    return out


def _unbinned_columns(P, positives, p=1):
    # Each distinct prediction value is its own bin: sum_v |G_v|^(1-p) |S_v|^p / n, then the
    # 1/p root (the ECE_p of _ece_columns with one bin per value; p = 1: sum_v |S_v| / n).
    n, c = P.shape
    out = np.empty(c)
    for col in range(c):
        _, group = np.unique(P[:, col], return_inverse=True)
        bias = np.abs(np.bincount(group, weights=P[:, col] - _outcome_column(n, positives[col])))
        if p == 1:
            out[col] = bias.sum() / n
        else:
            size = np.bincount(group).astype(np.float64)
            out[col] = ((size ** (1.0 - p) * bias ** p).sum() / n) ** (1.0 / p)
    return out


# --------------------------------------------------------------------------- binary API

@_attach(_ece_columns)
def binned_ece(y_true, y_prob, n_bins: int = 15, *, p: float = 1,
               binning: str = "width", ties: str = "average") -> float:
    r"""lp binned expected calibration error of a binary predictor.

    .. math::
        \mathrm{ECE}_p = \Big(\sum_{j:\,|B_j|>0} \tfrac{|B_j|}{n}\,
        |\bar p_j - \bar y_j|^p\Big)^{1/p}

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Outcomes in ``{0, 1}``.
    y_prob : array_like, shape (n,)
        Predicted ``P(y = 1)``.
    n_bins : int, default 15
        Number of bins ``m``: any positive integer for equal-width bins (empty bins carry no
        weight), ``1 <= m <= n`` for equal-mass bins.
    p : float, default 1
        Exponent; ``p = 1`` is the usual ECE, ``p = 2`` the root-mean-square version.
    binning : {"width", "mass"}
        Equal-width or equal-mass bins (:mod:`calnotes.core.binning`).
    ties : {"average", "position"}, default "average"
        Equal-mass bins only (equal predictions always share an equal-width bin): a group of
        equal predictions straddling a bin boundary is split over all its orders, each equally
        likely, and the value is the exact mean of :math:`\mathrm{ECE}_p^p` over them (then the
        ``1/p`` root), so it does not depend on the order of the rows; ``"position"`` orders
        ties by input position as eq. (1) literally does.  See :mod:`calnotes.core.binning`.

    Returns
    -------
    float

    Notes
    -----
    With :func:`confidence` and ``p = 1`` this is the ECE of Guo et al. (2017) and the
    ``TCE_p`` estimator of the proper-calibration-errors paper (see :func:`tce`).  Chapter
    *The measures*.

    Examples
    --------
    >>> round(binned_ece([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6], n_bins=2), 12)  # 1/4 * 0.1 + 3/4 * 0.2333
    0.2
    """
    P, pos = _binary_problem(y_true, y_prob)
    n_bins = _check_bins(n_bins, P.shape[0], _check_binning(binning))
    return float(_ece_columns(P, pos, n_bins=n_bins, p=_check_p(p), binning=binning,
                              ties=check_ties(ties))[0])


@_attach(_l1_qece_columns)
def l1_qece(y_true, y_prob, n_bins: int, *, ties: str = "average") -> float:
    r"""l1 quantile-binned ECE, Def 2.5 of the truthfulness paper, exactly as printed.

    .. math::
        \ell_1\text{-QECE}_m = \frac1n \sum_{j=1}^m \Big|\sum_{i\in B_j} (p_i - y_i)\Big|

    with the equal-mass bins of eq. (1) (:func:`calnotes.core.binning.equal_mass_bins`).
    Equal to :func:`binned_ece` with ``p=1, binning="mass"``.

    ``ties="average"`` (default): when a group of equal predictions straddles a bin boundary,
    the value is the exact mean over all orders of the group (each bin then receives a
    hypergeometric share of the group's positives), so it does not depend on the row order and
    stays truthful; ``ties="position"`` is eq. (1) with ties in input order.

    Examples
    --------
    >>> l1_qece([0, 1, 1, 0], [0.1, 0.4, 0.6, 0.9], n_bins=2)
    0.25
    >>> l1_qece([1, 0], [0.5, 0.5], n_bins=2)  # average of |0.5 - 1| + |0.5 - 0| over 2 orders
    0.5
    """
    P, pos = _binary_problem(y_true, y_prob)
    return float(_l1_qece_columns(P, pos, check_n_bins(n_bins, P.shape[0]),
                                  ties=check_ties(ties))[0])


@_attach(_l2_qece_columns)
def l2_qece(y_true, y_prob, n_bins: int, *, ties: str = "average") -> float:
    r"""l2 quantile-binned ECE, Def 2.5 of the truthfulness paper, exactly as printed.

    .. math::
        \ell_2\text{-QECE}_m = \frac1{n^2} \sum_{j=1}^m \Big(\sum_{i\in B_j} (p_i - y_i)\Big)^2

    Note the weights: this is :math:`\sum_j (|B_j|/n)^2 (\bar p_j - \bar y_j)^2`, not the
    square of the ``p = 2`` binned ECE.  It is truthful (Thm 2.6): its expectation is
    minimised by predicting the true probabilities, where it equals
    :math:`n^{-2}\sum_i p_i^*(1-p_i^*)`.

    ``ties`` as for :func:`l1_qece`: by default the exact mean over the orders of tied
    predictions that straddle a bin boundary (the mean of truthful measures is truthful;
    chapter *The measures*, label ``thm-tie-average-truthful``).

    Examples
    --------
    >>> l2_qece([0, 1, 1, 0], [0.1, 0.4, 0.6, 0.9], n_bins=2)
    0.03125
    >>> l2_qece([1, 0], [0.5, 0.5], n_bins=2)  # (0.25 + 0.25) / 4 in either order
    0.125
    """
    P, pos = _binary_problem(y_true, y_prob)
    return float(_l2_qece_columns(P, pos, check_n_bins(n_bins, P.shape[0]),
                                  ties=check_ties(ties))[0])


@_attach(_mce_columns)
def max_calibration_error(y_true, y_prob, n_bins: int = 15, *, binning: str = "width",
                          ties: str = "average") -> float:
    r"""Maximum calibration error: :math:`\max_{j:|B_j|>0} |\bar p_j - \bar y_j|`.

    With equal-mass bins and ``ties="average"`` each bin's gap is its exact mean over the
    orders of tied predictions, :math:`\mathbb E|\bar p_j - \bar y_j|`, and the maximum is
    taken over those (the expected maximum over orders has no cheap exact form).

    Examples
    --------
    >>> round(max_calibration_error([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6], n_bins=2), 12)
    0.233333333333
    """
    P, pos = _binary_problem(y_true, y_prob)
    return float(_mce_columns(P, pos, n_bins=_check_bins(n_bins, P.shape[0],
                                                          _check_binning(binning)),
                              binning=binning, ties=check_ties(ties))[0])


@_attach(_ks_columns)
def ks_calibration_error(y_true, y_prob) -> float:
    r"""Kolmogorov-Smirnov (cumulative) calibration error, binning-free.

    .. math::
        \mathrm{KS} = \max_{\sigma\in[0,1]} \Big|\frac1n \sum_{i:\,p_i\le\sigma} (p_i - y_i)\Big|

    (Gupta et al., 2021).  The maximum runs over the distinct prediction values, so tied
    predictions enter together and the value does not depend on the sample order.

    Examples
    --------
    >>> ks_calibration_error([1, 0, 0], [0.2, 0.5, 0.5])
    0.26666666666666666
    """
    P, pos = _binary_problem(y_true, y_prob)
    return float(_ks_columns(P, pos)[0])


@_attach(_unbinned_columns)
def unbinned_ece(y_true, y_prob, *, p: float = 1) -> float:
    r"""lp ECE conditioning on exact prediction values (Def 2.4 of the truthfulness paper).

    .. math::
        \mathrm{ECE}_p = \Big(\frac1n \sum_i |p_i - \bar y_{p_i}|^p\Big)^{1/p},\qquad
        \bar y_v = \text{mean of } y_i \text{ over } \{i : p_i = v\}.

    This is :func:`binned_ece` with every distinct prediction value in a bin of its own
    (``sum_v |G_v|/n |v - ybar_v|^p``, ``G_v`` the samples predicting ``v``), e.g. equal-width
    bins finer than the smallest gap between distinct values.  With all predictions distinct
    it is :math:`(\frac1n\sum_i |p_i - y_i|^p)^{1/p}`.

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Outcomes in ``{0, 1}``.
    y_prob : array_like, shape (n,)
        Predicted ``P(y = 1)``.
    p : float, default 1
        Exponent, ``p >= 1``, as in :func:`binned_ece`: ``p = 1`` is Def 2.4, ``p = 2`` the
        root-mean-square version.

    Returns
    -------
    float

    Examples
    --------
    >>> unbinned_ece([1, 0, 1, 0], [0.5, 0.5, 0.5, 0.5])
    0.0
    >>> y, prob = [1, 0, 0, 1], [0.2, 0.2, 0.9, 0.9]   # gaps 0.3 and 0.4, two samples each
    >>> round(unbinned_ece(y, prob), 12), round(unbinned_ece(y, prob, p=2), 12)
    (0.35, 0.353553390593)
    >>> round(binned_ece(y, prob, n_bins=10, p=2), 12)    # one bin per distinct value
    0.353553390593
    """
    P, pos = _binary_problem(y_true, y_prob)
    return float(_unbinned_columns(P, pos, p=_check_p(p))[0])


# --------------------------------------------------------------------------- aggregation

def _check_matrix(y_prob, return_argmax=False):
    y_prob, dtype = _as_array_and_dtype(y_prob, "y_prob")    # once: a GPU copy warns once
    try:
        return check_probabilities(y_prob, allow_1d=False, return_argmax=return_argmax,
                                   dtype=dtype)
    except ValueError as exc:
        if "expected a 2-d array" not in str(exc):
            raise
        raise ValueError(
            f"y_prob: expected a (n, k) matrix of class probabilities, got shape"
            f" {np.shape(y_prob)}. For a binary problem with p = P(y=1): binned_ece(y, p) (or"
            " l2_qece(y, p, m), ...) measures P(y=1) itself, the usual binary ECE; the top-label"
            " (confidence) and class-wise aggregations are different quantities -- pass"
            " np.column_stack([1 - p, p]) to compute those") from None


def _multiclass_problem(y_true, y_prob):
    P = _check_matrix(y_prob)
    return check_labels(y_true, n_classes=P.shape[1], n_samples=P.shape[0]), P


def _kernel_kwargs(measure, P, kwargs):
    """The measure's keyword arguments with its defaults filled in, validated for ``P``."""
    try:
        bound = inspect.signature(measure).bind(None, None, **kwargs)
    except TypeError as exc:
        raise TypeError(f"{measure.__name__}: {exc}") from None
    bound.apply_defaults()
    kwargs = {k: v for k, v in bound.arguments.items() if k not in ("y_true", "y_prob")}
    if "binning" in kwargs:
        _check_binning(kwargs["binning"])
    if "n_bins" in kwargs:
        kwargs = dict(kwargs, n_bins=_check_bins(kwargs["n_bins"], P.shape[0],
                                                 kwargs.get("binning", "mass")))
    if "p" in kwargs:
        kwargs = dict(kwargs, p=_check_p(kwargs["p"]))
    if "ties" in kwargs:
        check_ties(kwargs["ties"])
    return kwargs


def _per_class(measure, y, P, kwargs):
    k = P.shape[1]
    kernel = getattr(measure, "_columns", None)
    if kernel is not None:
        return kernel(P, _binstats.positives_by_class(y, k), **_kernel_kwargs(measure, P, kwargs))
    return np.array([_call_binary(measure, (y == r).astype(np.int64), P[:, r], kwargs)
                     for r in range(k)], dtype=np.float64)


def _call_binary(measure, y, p, kwargs) -> float:
    """``measure(y, p, **kwargs)`` for a user-supplied binary measure, checked to give a number."""
    name = getattr(measure, "__name__", repr(measure))
    if not callable(measure):
        raise TypeError(f"measure: expected a binary measure f(y_true, y_prob, **kwargs), got"
                        f" {measure!r}")
    try:
        value = measure(y, p, **kwargs)
    except TypeError as exc:
        raise TypeError(f"measure {name}: calling it as {name}(y_true, y_prob"
                        f"{''.join(', ' + k + '=...' for k in kwargs)}) failed ({exc}); classwise"
                        " and confidence expect a binary measure such as calnotes.l2_qece") from None
    if np.ndim(value) != 0 or not isinstance(np.asarray(value).item(), numbers.Real) \
            or isinstance(np.asarray(value).item(), bool):
        raise TypeError(f"measure {name}: returned {value!r}, not a number; classwise and"
                        " confidence expect a binary measure f(y_true, y_prob) -> float")
    return float(value)


def classwise(measure: Callable, y_true, y_prob, *, per_class: bool = False, **kwargs):
    r"""Class-wise aggregation (Def 2.7): the mean of a binary measure over the k classes.

    .. math::
        \mathrm{CAL}^{(\mathrm{classwise})} = \frac1k \sum_{r=1}^k
        \mathrm{CAL}\big(p^{(r)}_{1..n};\ \mathbb{1}[y_{1..n}=r]\big)

    Parameters
    ----------
    measure : callable
        A binary measure, e.g. :func:`l2_qece` or :func:`binned_ece`.
    y_true : array_like of int, shape (n,)
        Labels in ``0..k-1``.
    y_prob : array_like, shape (n, k)
        Rows are probability vectors.
    per_class : bool, default False
        Return the ``k`` per-class values instead of their mean.
    **kwargs
        Passed to the measure (``n_bins``, ``p``, ``binning``).

    Notes
    -----
    Truthful whenever the binary measure is (Thm 3.1 of the truthfulness paper); the
    chapter *The measures* and Part II use it with :func:`l2_qece`.

    Examples
    --------
    >>> P = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]]
    >>> round(classwise(l2_qece, [0, 1, 2, 1], P, n_bins=2), 6)  # (0.25 + 0.66 + 0.29) / 48
    0.025
    """
    y, P = _multiclass_problem(y_true, y_prob)
    values = _per_class(measure, y, P, kwargs)
    return values if per_class else float(values.mean())


def confidence_scores(y_true, y_prob):
    """Top-class probability, the predicted class and whether it was right.

    The predicted class is ``argmax_r p_r``; among tied maxima the **smallest class index**
    wins (``numpy.argmax``).  The confidence value does not depend on the tie rule, the
    correctness indicator does.

    Returns
    -------
    conf : ndarray, shape (n,)
    predicted : ndarray of int, shape (n,)
    correct : ndarray of int, shape (n,)

    Examples
    --------
    >>> conf, pred, correct = confidence_scores([1, 0], [[0.5, 0.5], [0.9, 0.1]])
    >>> conf.tolist(), pred.tolist(), correct.tolist()
    ([0.5, 0.9], [0, 0], [0, 1])
    """
    P, predicted = _check_matrix(y_prob, return_argmax=True)
    y = check_labels(y_true, n_classes=P.shape[1], n_samples=P.shape[0])
    conf = P[np.arange(P.shape[0]), predicted]
    return conf, predicted, (predicted == y).astype(np.int64)


def confidence(measure: Callable, y_true, y_prob, **kwargs) -> float:
    r"""Confidence (top-label) aggregation (Def 2.8): the binary measure on (max prob, correct).

    The predicted class is the first maximum (smallest index) of each row; see
    :func:`confidence_scores`.

    Examples
    --------
    >>> P = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]]
    >>> round(confidence(binned_ece, [0, 1, 2, 1], P, n_bins=2), 12)
    0.175
    """
    conf, _, correct = confidence_scores(y_true, y_prob)
    kernel = getattr(measure, "_columns", None)
    if kernel is not None:
        Pc = conf[:, None]
        return float(kernel(Pc, [np.flatnonzero(correct)], **_kernel_kwargs(measure, Pc, kwargs))[0])
    return _call_binary(measure, correct, conf, kwargs)


def tce(y_true, y_prob, n_bins: int = 15, *, p: float = 1, binning: str = "width",
        ties: str = "average") -> float:
    r"""Top-label calibration error estimator ``TCE_p`` (proper-calibration-errors paper, Def C.1).

    The binned plug-in estimate of
    :math:`(\mathbb E|f_C(X) - P(Y=C\mid f_C(X))|^p)^{1/p}`, ``C`` the predicted class:
    identical to ``confidence(binned_ece, y_true, y_prob, n_bins=n_bins, p=p, binning=binning)``
    (with ``p = 1`` and equal-width bins, the ECE of Guo et al., 2017).

    Examples
    --------
    >>> P = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]]
    >>> round(tce([0, 1, 2, 1], P, n_bins=2), 12)
    0.175
    """
    return confidence(binned_ece, y_true, y_prob, n_bins=n_bins, p=p, binning=binning,
                      ties=ties)


def cwce(y_true, y_prob, n_bins: int = 15, *, p: float = 1, binning: str = "width",
         ties: str = "average") -> float:
    r"""Class-wise calibration error estimator ``CWCE_p`` (proper-calibration-errors paper, Def C.1).

    .. math::
        \mathrm{CWCE}_p = \Big(\sum_{r=1}^k \sum_{j} \tfrac{|B_{rj}|}{n}
        |\bar p_{rj} - \bar y_{rj}|^p\Big)^{1/p}

    A **sum** over classes with the root outside (the paper drops Kumar et al.'s 1/k so that
    ``CWCE_p <= 2^{1/p}``), unlike :func:`classwise`, which averages per-class values.

    Examples
    --------
    >>> P = [[0.7, 0.2, 0.1], [0.1, 0.8, 0.1], [0.3, 0.3, 0.4], [0.6, 0.3, 0.1]]
    >>> round(cwce([0, 1, 2, 1], P, n_bins=2), 6)
    0.35
    """
    per_class = classwise(binned_ece, y_true, y_prob, per_class=True,
                          n_bins=n_bins, p=p, binning=binning, ties=ties)
    pp = _check_p(p)
    return float((per_class ** pp).sum() ** (1.0 / pp))


def reliability_stats(y_true, y_prob, n_bins: int = 15, *, binning: str = "width",
                      ties: str = "average") -> dict:
    """Per-bin counts, mean predictions and mean outcomes of a binary problem.

    The numbers behind a reliability diagram; empty bins have NaN means.  With equal-mass bins
    and ``ties="average"``, a bin's mean outcome is its mean over the orders of tied
    predictions straddling its boundaries (the positives of such a group are shared in
    proportion to the members each bin receives).

    Returns
    -------
    dict with keys ``count``, ``mean_prob``, ``mean_outcome`` (arrays of length ``n_bins``)

    Examples
    --------
    >>> s = reliability_stats([1, 0, 1, 1], [0.9, 0.1, 0.8, 0.6], n_bins=2)
    >>> s["count"].tolist(), s["mean_outcome"].tolist()
    ([1.0, 3.0], [0.0, 1.0])
    """
    P, pos = _binary_problem(y_true, y_prob)
    stats = _binstats.bin_stats(P, pos, _check_bins(n_bins, P.shape[0], _check_binning(binning)),
                                binning, check_ties(ties))
    with np.errstate(invalid="ignore", divide="ignore"):
        return {
            "count": stats.count[0].copy(),
            "mean_prob": stats.sum_prob[0] / stats.count[0],
            "mean_outcome": stats.sum_outcome[0] / stats.count[0],
        }
