"""Sample estimators of proper calibration errors (paper 003, Secs. 3-5, App. G.4).

* :func:`binned_ce` -- the binned plug-in of ``CE_S`` for a proper loss: samples grouped by
  binning the confidence (or each class's probability), ``sum_b (n_b/n) d(mean label vector in
  b, mean prediction in b)``.
* :func:`debiased_l2_ce` -- the squared top-label L2 ECE with each bin's sampling variance
  subtracted (Kumar, Liang & Ma 2019), nearly unbiased for a calibrated model where the plug-in
  is biased upwards (003 Prop 3.3).
* :func:`calibration_upper_bound` -- the calibration upper bound ``U_S = E S(f(X), Y) - inf g_S``
  of 003 Thm 4.3 estimated by the mean loss (unbiased; ``inf g_S = 0`` for the Brier, log,
  spherical and 0-1 losses).
* :func:`recalibration_improvement` -- ``e(D, f) - e(D, h o f)`` of 003 App. G.4 for the Brier
  score (unbiased for the ``CE_2^2`` improvement of an injective ``h``, 003 Prop 4.5), its root,
  the binned ECE, the debiased L2 ECE and the SKCE.

The SKCE U-statistic is :func:`calnotes.theory.skce.skce_unbiased`; the folded-normal approximation of
the expected binned ECE (003 Prop 3.3) is :func:`calnotes.core.expectation.folded_normal_ece_bias`.
"""

from __future__ import annotations

import math

import numpy as np

from .._validate import check_n_bins, check_pair_matrix, check_probabilities
from ..core.binning import equal_width_bins
from ..core.scores import divergence, entropy, get_loss

__all__ = ["binned_ce", "debiased_l2_ce", "calibration_upper_bound", "recalibration_improvement",
           "IMPROVEMENT_ESTIMATORS"]

_ON = ("confidence", "class_and_confidence", "classwise")


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


def _binned_divergence(y, P, conf, groups, m, binning, loss) -> float:
    """sum_b n_b d(Ybar_b, Pbar_b) over the confidence bins of each group of rows."""
    k = P.shape[1]
    total = 0.0
    for idx in groups:
        if idx.size == 0:
            continue
        b = _bins(conf[idx], m if binning == "width" else min(m, idx.size), binning)
        count = np.bincount(b).astype(float)
        used = count > 0
        Ybar = np.zeros((count.size, k))
        np.add.at(Ybar, (b, y[idx]), 1.0)
        Pbar = np.zeros((count.size, k))
        np.add.at(Pbar, b, P[idx])
        c = count[used]
        total += float(c @ divergence(Ybar[used] / c[:, None], Pbar[used] / c[:, None], loss))
    return total


def binned_ce(y_true, y_prob, loss="brier", *, n_bins: int = 15, binning: str = "width",
              on: str = "class_and_confidence") -> float:
    r"""Binned plug-in estimate of the proper calibration error ``CE_S`` (003 Def 4.2).

    The samples are grouped by their predicted class (the first argmax) and a bin of the
    top-label confidence ``max_r p_r``; in each group ``b`` the mean one-hot label
    :math:`\bar y_b` and the mean prediction :math:`\bar p_b` (whole vectors) give

    .. math::  \widehat{\mathrm{CE}}_S = \sum_b \frac{n_b}{n}\, d_S(\bar y_b, \bar p_b),

    the divergence in the book's order, truth first.  ``on="confidence"`` groups by the
    confidence bin alone (averaging prediction vectors of different predicted classes washes
    most of the error out); ``on="classwise"`` solves the binary problem ``(1[Y = c], p_c)`` of
    each class ``c``, binning ``p_c``, and **sums** the ``k`` binary estimates (the binary
    Brier divergence is ``2 (q - p)^2``, so with equal-width bins the Brier value is twice the
    squared ``CWCE_2`` estimate of :func:`calnotes.cwce`).

    Population version: with ``B`` the group of ``X``, the estimate converges to
    :math:`\mathbb E\, d_S(\mathbb E[Y \mid B], \mathbb E[f(X) \mid B])` (class-wise: the sum over
    classes of the binary versions).  For the Brier and log losses this is at most ``CE_S``
    (class-wise: at most the sum of the binary ``CE_S`` of the one-vs-rest problems): their
    divergences are jointly convex, and ``B`` is a function of ``f(X)`` (of ``f_c(X)``), so
    conditional Jensen applies to the pair ``(E[Y | f(X)], f(X))`` given ``B`` -- the
    coarsening argument of 003 Prop E.2.  For other losses the coarsening can go either way.
    Like every plug-in it is biased upwards at small sample sizes (003 Prop 3.3).

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Labels ``0 .. k-1``.
    y_prob : array_like, shape (n, k) or (n,)
        Predicted probabilities (``(n,)``: binary, ``P(y = 1)``).
    loss : str or ProperLoss, default "brier"
        A proper loss of :mod:`calnotes.core.scores` (``"brier"``, ``"log"``, ``"spherical"``, ...).
    n_bins : int, default 15
    binning : {"width", "mass"}
        Equal-width bins of the confidence or equal-mass bins (eq. (1) of the truthfulness
        paper, with tied confidences kept in one bin so that the row order does not matter;
        a group with fewer rows than ``n_bins`` gets one bin per row).
    on : {"class_and_confidence", "confidence", "classwise"}

    Returns
    -------
    float
        ``inf`` for the log loss when a bin's mean prediction gives probability 0 to a label
        that occurs in the bin.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=5000)
    >>> y = (P.cumsum(axis=1) > rng.random((5000, 1))).argmax(axis=1)     # calibrated
    >>> small = binned_ce(y, P)
    >>> over = binned_ce(y, 0.5 * P + 0.5 * np.eye(3)[P.argmax(axis=1)])   # over-confident
    >>> bool(over > 10 * small)
    True
    >>> bool(binned_ce(y, P, on="classwise") < 0.01)
    True
    """
    y, P = check_pair_matrix(y_true, y_prob)
    n, k = P.shape
    m = check_n_bins(n_bins, n) if binning == "mass" else check_n_bins(n_bins, 2 ** 62)
    if binning not in ("width", "mass"):
        raise ValueError(f"binning: expected 'width' or 'mass', got {binning!r}")
    if on not in _ON:
        raise ValueError(f"on: expected one of {_ON}, got {on!r}")
    loss = get_loss(loss)
    everything = [np.arange(n)]
    if on == "classwise":
        total = 0.0
        for c in range(k):
            Pc = np.column_stack([1.0 - P[:, c], P[:, c]])
            total += _binned_divergence((y == c).astype(np.intp), Pc, P[:, c], everything, m,
                                        binning, loss)
        return total / n
    top = P.argmax(axis=1)
    conf = P[np.arange(n), top]
    if on == "confidence":
        groups = everything
    else:
        order = np.argsort(top, kind="stable")
        groups = np.split(order, np.cumsum(np.bincount(top, minlength=k))[:-1])
    return _binned_divergence(y, P, conf, groups, m, binning, loss) / n


def debiased_l2_ce(y_true, y_prob, *, n_bins: int = 15, binning: str = "mass") -> float:
    r"""Debiased squared top-label L2 ECE (Kumar, Liang & Ma 2019).

    With the confidences binned and, in bin ``b``, the accuracy :math:`\bar a_b`, the mean
    confidence :math:`\bar c_b` and ``n_b`` samples,

    .. math::  \sum_b \frac{n_b}{n}\Bigl[(\bar a_b - \bar c_b)^2
               - \frac{\bar a_b (1 - \bar a_b)}{n_b - 1}\Bigr].

    Given the bin counts, with i.i.d. samples the correctness indicators of a bin are i.i.d.
    Bernoulli(:math:`a_b`), so the subtracted term is the unbiased estimate of
    :math:`\mathrm{Var}(\bar a_b)`.  What remains is the sampling variation of the confidence
    within the bin: :math:`\mathbb E[(\bar a_b - \bar c_b)^2] - \mathrm{Var}(\bar a_b) =
    (a_b - c_b)^2 + (\mathrm{Var}_b(\mathrm{conf}) - 2\,\mathrm{Cov}_b(\mathrm{correct},
    \mathrm{conf}))/n_b`, so the estimate is unbiased only when the confidence is constant within
    each bin, and otherwise removes most, not all, of the plug-in's upward bias (003 Prop 3.3;
    the residual term is checked in tests/test_estimators.py).  Bins with one sample contribute
    their plug-in term.  The estimate can be negative.

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
    y, P = check_pair_matrix(y_true, y_prob)
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


def _inf_entropy(loss, k: int) -> float:
    """inf of the generalized entropy over the simplex: its smallest value at a vertex."""
    return float(entropy(np.eye(k), loss).min())


def calibration_upper_bound(y_true, y_prob, loss="brier") -> float:
    r"""Sample estimate of the calibration upper bound :math:`\mathcal U_S(f)` (003 Thm 4.3).

    .. math::  \mathcal U_S(f) = \mathbb E[S(f(X), Y)] - \inf_P g_S(P) \ \ge\ \mathrm{CE}_S(f),

    estimated by the mean loss minus :math:`\inf g_S`; the mean loss is unbiased for the
    expected score, so the estimate is unbiased for :math:`\mathcal U_S`.  The generalized
    entropy :math:`g_S` is concave, so its infimum over the simplex is its smallest value at a
    vertex (003 eq. (37)); it is 0 for the Brier, log, spherical and 0-1 losses, where the bound
    is the mean loss itself.  For the Brier score ``CE_S = CE_2^2`` (003 eq. (12)), so
    ``sqrt(calibration_upper_bound(y, P))`` (the root Brier score, RBS) bounds ``CE_2``.
    By 003 Prop 4.5 a difference of two bounds for ``f`` and ``h o f`` with ``h`` injective is
    an unbiased estimate of the change of ``CE_S``
    (:func:`recalibration_improvement`).

    Parameters
    ----------
    y_true : array_like, shape (n,)
    y_prob : array_like, shape (n, k) or (n,)
    loss : str or ProperLoss, default "brier"

    Returns
    -------
    float
        ``inf`` for the log loss when a label gets probability 0.

    Examples
    --------
    >>> P = np.array([[0.8, 0.2], [0.3, 0.7], [0.6, 0.4]])
    >>> y = np.array([0, 1, 1])
    >>> round(calibration_upper_bound(y, P), 12)          # (0.08 + 0.18 + 0.72) / 3
    0.326666666667
    >>> round(calibration_upper_bound(y, P, "log"), 6)    # -(log .8 + log .7 + log .4) / 3
    0.498703
    """
    y, P = check_pair_matrix(y_true, y_prob)
    loss = get_loss(loss)
    return float(loss(y, P)) - _inf_entropy(loss, P.shape[1])


#: Estimators accepted by :func:`recalibration_improvement`.
IMPROVEMENT_ESTIMATORS = ("brier", "sqrt_brier", "ece", "debiased_l2", "skce")
_ROOT_SPACE = ("sqrt_brier", "ece")


def recalibration_improvement(y_true, P_before, P_after, estimator: str = "brier", *,
                              squared: bool = False, n_bins: int = 15, p: float = 1,
                              bandwidth: float = 1.0, skce_estimator: str = "quadratic") -> float:
    r"""Estimated calibration improvement ``e(D, f) - e(D, h o f)`` of a recalibration (003 G.4).

    ``P_before`` holds ``f(x_i)`` and ``P_after`` holds ``h(f(x_i))`` on the same test set
    ``D``; a positive value means the recalibration helped according to ``e``:

    * ``"brier"``: the mean Brier score (the squared-space upper bound
      :func:`calibration_upper_bound`).  For an injective ``h``, ``U(f) - U(h o f) = CE_2^2(f) -
      CE_2^2(h o f)`` (003 Prop 4.5), so the difference is an **unbiased** estimator of the
      ``CE_2^2`` improvement at every test-set size (the minimum-variance unbiased one, App. G.4);
      for a non-injective ``h`` the identity fails (the merged conditionals change).
    * ``"sqrt_brier"``: the root Brier score (RBS), the upper bound of ``CE_2``: consistent for
      ``U^{1/2}(f) - U^{1/2}(h o f)``, biased at finite ``n`` (a root of a mean).
    * ``"ece"``: the binned top-label ECE with ``n_bins`` equal-width bins and exponent ``p``
      (:func:`calnotes.tce`).
    * ``"debiased_l2"``: :func:`debiased_l2_ce` (equal-mass bins): estimates the change of the
      squared *binned top-label* error, not of ``CE_2^2``.
    * ``"skce"``: :func:`calnotes.theory.skce.skce_unbiased`: unbiased for the change of the SKCE, a
      different quantity.

    ``squared=True`` gives the paper's squared-space improvement ``e(D, f)^2 - e(D, h o f)^2``
    for the root-space estimators ``"sqrt_brier"`` (then equal to ``"brier"``) and ``"ece"``.

    Parameters
    ----------
    y_true : array_like, shape (n,)
    P_before, P_after : array_like, shape (n, k) or (n,)
        Predictions of ``f`` and of ``h o f`` on the same samples.
    estimator : {"brier", "sqrt_brier", "ece", "debiased_l2", "skce"}
    squared : bool, default False
        Square the two estimates first (``"sqrt_brier"`` and ``"ece"`` only).
    n_bins : int, default 15
        Bins of ``"ece"`` and ``"debiased_l2"``.
    p : float, default 1
        Exponent of ``"ece"``.
    bandwidth : float, default 1.0
        Laplacian-kernel bandwidth of ``"skce"``.
    skce_estimator : {"quadratic", "linear"}
        The SKCE U-statistic over all pairs or over disjoint pairs.

    Returns
    -------
    float

    Examples
    --------
    A model tempered to over-confidence, recalibrated by the inverse tempering (injective);
    labels drawn from the calibrated truth:

    >>> from calnotes.data import simulate_logistic_normal
    >>> sim = simulate_logistic_normal(5000, 10, temperatures=(0.5,), rng=0)
    >>> f, hf = sim.probs(0.5), sim.true_prob
    >>> gain = recalibration_improvement(sim.labels, f, hf)            # Brier difference
    >>> true_gain = float(((f - sim.true_prob) ** 2).sum(axis=1).mean())   # CE_2^2(f) - 0
    >>> from calnotes import brier_loss
    >>> d = brier_loss(sim.labels, f, per_sample=True) - brier_loss(sim.labels, hf, per_sample=True)
    >>> bool(abs(gain - true_gain) < 3 * d.std() / np.sqrt(d.size))     # 3 standard errors
    True
    >>> sq = recalibration_improvement(sim.labels, f, hf, "sqrt_brier", squared=True)
    >>> bool(abs(sq - gain) < 1e-12)                  # (sqrt a)^2 - (sqrt b)^2 = a - b
    True
    """
    if estimator not in IMPROVEMENT_ESTIMATORS:
        raise ValueError(f"estimator: expected one of {IMPROVEMENT_ESTIMATORS}, got {estimator!r}")
    if not isinstance(squared, (bool, np.bool_)):
        raise TypeError(f"squared: expected True or False, got {squared!r}")
    if squared and estimator not in _ROOT_SPACE:
        raise ValueError(f"squared: only for the root-space estimators {_ROOT_SPACE}; "
                         f"{estimator!r} already estimates a squared quantity")
    y, F = check_pair_matrix(y_true, P_before)
    H = check_probabilities(P_after, name="P_after")
    if H.ndim == 1:
        H = np.column_stack([1.0 - H, H])
    if H.shape != F.shape:
        raise ValueError(f"P_after: shape {H.shape} differs from P_before's {F.shape}")
    if estimator in ("brier", "sqrt_brier"):
        before, after = calibration_upper_bound(y, F), calibration_upper_bound(y, H)
        if estimator == "sqrt_brier":
            before, after = math.sqrt(before), math.sqrt(after)
    elif estimator == "ece":
        from ..core.measures import tce

        before, after = (tce(y, X, n_bins, p=p) for X in (F, H))
    elif estimator == "debiased_l2":
        before, after = (debiased_l2_ce(y, X, n_bins=n_bins) for X in (F, H))
    else:
        from .skce import skce_unbiased

        before, after = (skce_unbiased(y, X, bandwidth=bandwidth, estimator=skce_estimator)
                         for X in (F, H))
    if squared:
        return float(before ** 2 - after ** 2)
    return float(before - after)
