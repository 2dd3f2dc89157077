"""Calibration-sharpness diagrams and the grouping-loss decomposition (paper 004, Sec. 4.2).

The reassessing paper (*Reassessing How to Compare and Improve the Calibration of Machine
Learning Models*, "004") augments the kernel calibration curve ``E[1{Y = c(X)} | h(X)]`` with a
band whose length is the **pointwise sharpness gap** (4.7),

    rho(p) = E[d_phi(pi_{Y|X}, g(X)) | h(X) = p] - d_varphi(E[1{Y = c(X)} | h(X) = p], p),

scaled by the density of the confidences (App. D), and prints the confidence calibration error
``d_{phi,CAL}`` (the plug-in (C.3) of Thm C.4) and the total divergence ``d_{phi,TOT}``.
Standard confidence calibration throughout: ``c`` is the first argmax of ``g(X)`` and
``h = max_r g_r(X)``.

Pairs ``(phi, varphi)`` (:class:`ConfidencePair`)
-------------------------------------------------
* ``"brier"``: ``phi(x) = ||x||^2`` on the simplex (the Brier score summed over classes,
  ``d_phi(x, y) = ||x - y||^2``) and ``varphi(x) = x^2`` (``d_varphi(a, b) = (a - b)^2``, not
  the binary Brier ``2 (a - b)^2``, which violates Lemma 4.6's condition for ``k >= 3``);
* ``"log"``: ``phi(x) = sum_r x_r log x_r`` (KL) and ``varphi(x) = x log x + (1-x) log(1-x)``
  (binary KL, Cor 4.7).

Any other pair can be built with :class:`ConfidencePair` (used here to show that Lemma 4.6's
condition matters for Prop 4.8).

**Functions.**

* :func:`confidence_calibration_plugin` -- the estimator (C.3) of Thm C.4.
* :func:`calibration_sharpness` -- every ingredient of the diagram (App. D), optionally
  averaged over random subsamples; drawn by :func:`calnotes.core.plotting.calibration_sharpness_diagram`.
* :func:`pointwise_sharpness_gap` -- the exact population ``rho`` of (4.7) on a
  :class:`calnotes.theory.population.FiniteDistribution` (Prop 4.8: ``rho >= 0``), and the quantity the
  sample diagram actually estimates (one-hot labels in place of ``pi_{Y|X}``).
* :func:`grouping_loss_decomposition` -- Kull & Flach's decomposition (E.1), exact, and its
  relation to the sharpness gap of Lemma 4.1.

**What the sample band estimates.**

(4.7) conditions ``d_phi(pi_{Y|X}, g(X))``, which needs the unknown ``pi_{Y|X}``.  App. D
replaces each sample by ``d_phi(e_{y_i}, g(x_i))`` and smooths that on ``h``.  For a Bregman
divergence, ``d_phi(e_Y, g) - d_phi(pi, g) = phi(e_Y) - phi(pi) - grad phi(g)^T (e_Y - pi)``,
whose conditional mean given ``X`` is ``E[d_phi(e_Y, pi) | X]`` (the last term averages to zero).
So the sample band estimates

    rho_D(p) = rho(p) + E[d_phi(e_Y, pi_{Y|X}) | h(X) = p]     (>= rho(p) >= 0),

(4.7) plus the conditional **irreducible loss** (``1 - ||pi||^2`` for Brier, the Shannon
entropy of ``pi`` for log), which is the same for every model (App. E's remark).  Its mean is
``E rho_D(h) = d_TOT - d_CAL``, the quantity reported as :attr:`CalibrationSharpness.sharpness_gap`;
by Lemma 4.1 with ``Z = e_Y`` it equals the sharpness gap ``E phi(e_Y) - E phi(E[e_Y | g])``
plus the slack ``E d_phi(E[Y | g], g) - d_CAL >= 0`` of Lemma 4.6.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from fractions import Fraction
from typing import Callable

import numpy as np

from .._validate import check_pair_matrix, check_rng
from ..core.kernel import default_bandwidth, kde, nadaraya_watson
from .population import (FiniteDistribution, bregman_decomposition, conditional_expectation,
                         _group_ids, _group_means)
from ..core.scores import NEG_ENTROPY, SQUARED_NORM, BregmanGenerator, bregman_divergence

__all__ = [
    "ConfidencePair",
    "BRIER_PAIR",
    "LOG_PAIR",
    "PAIRS",
    "get_pair",
    "confidence_calibration_plugin",
    "CalibrationSharpness",
    "calibration_sharpness",
    "pointwise_sharpness_gap",
    "grouping_loss_decomposition",
    "DEFAULT_GRID_POINTS",
]

#: Points of the default evaluation grid ``linspace(0, 1, 201)``.
DEFAULT_GRID_POINTS = 201


# ----------------------------------------------------------------------------- pairs

@dataclass(frozen=True)
class ConfidencePair:
    """A pair ``(phi, varphi)`` of 004 Sec. 4.1: a Bregman generator on the simplex and its
    1-d counterpart on ``[0, 1]``.

    Lemma 4.6 and Prop 4.8 need ``d_phi(x, y) >= d_varphi(x_i, y_i)`` for every coordinate
    ``i``; the built-in pairs satisfy it, a custom pair need not (that is how the condition is
    tested).

    Attributes
    ----------
    name : str
    generator : calnotes.BregmanGenerator
        ``phi`` on the simplex, e.g. ``calnotes.SQUARED_NORM``.
    varphi : callable
        ``varphi`` on ``[0, 1]``, vectorised; finite on the closed interval.
    varphi_prime : callable
        Its derivative (may be infinite at 0 or 1).

    Examples
    --------
    >>> import numpy as np
    >>> BRIER_PAIR.divergence(np.array([0.5]), np.array([0.75])).tolist()
    [0.0625]
    >>> LOG_PAIR.divergence(np.array([1.0, 0.5]), np.array([1.0, 1.0])).tolist()
    [0.0, inf]
    >>> quartic = ConfidencePair("quartic", SQUARED_NORM, lambda x: x ** 4,
    ...                          lambda x: 4 * x ** 3)
    >>> float(quartic.divergence(np.array([0.5]), np.array([1.0]))[0])
    1.0625
    """

    name: str
    generator: BregmanGenerator
    varphi: Callable[[np.ndarray], np.ndarray]
    varphi_prime: Callable[[np.ndarray], np.ndarray]

    def divergence(self, a, b):
        """``d_varphi(a, b) = varphi(a) - varphi(b) - varphi'(b) (a - b)``, elementwise.

        Zero where ``a == b`` (also where ``varphi'(b)`` is infinite); ``+inf`` where the
        gradient is infinite and ``a != b``.  Object arrays of Fractions are evaluated exactly
        (no infinities can occur for polynomial ``varphi``).
        """
        if isinstance(a, np.ndarray) and a.dtype == object:
            return self.varphi(a) - self.varphi(b) - self.varphi_prime(b) * (a - b)
        a = np.asarray(a, dtype=np.float64)
        b = np.asarray(b, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            val = self.varphi(a) - self.varphi(b) - self.varphi_prime(b) * (a - b)
        return np.where(a == b, 0.0, val)


def _xlogx(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(x > 0, x * np.log(np.where(x > 0, x, 1.0)), 0.0)


def _binary_neg_entropy(x):
    x = np.asarray(x, dtype=np.float64)
    return _xlogx(x) + _xlogx(1.0 - x)


def _logit(x):
    x = np.asarray(x, dtype=np.float64)
    with np.errstate(divide="ignore"):
        return np.log(x) - np.log1p(-x)


def _square(x):
    return x * x


def _twice(x):
    return 2 * x


#: ``phi = ||x||^2``, ``varphi = x^2`` (004 Sec. 4.1, the Brier score / MSE).
BRIER_PAIR = ConfidencePair("brier", SQUARED_NORM, _square, _twice)
#: ``phi = sum x log x``, ``varphi`` the binary negative entropy (004 Cor 4.7, the log loss).
LOG_PAIR = ConfidencePair("log", NEG_ENTROPY, _binary_neg_entropy, _logit)
#: The built-in pairs by name, as ``calnotes.theory.population.confidence_calibration_error`` names them.
PAIRS = {"brier": BRIER_PAIR, "log": LOG_PAIR}


def get_pair(pair) -> ConfidencePair:
    """A :class:`ConfidencePair` from itself or a name in :data:`PAIRS`.

    Examples
    --------
    >>> get_pair("log").generator.name
    'neg_entropy'
    >>> get_pair("kl")
    Traceback (most recent call last):
    ...
    ValueError: pair: expected 'brier', 'log' or a ConfidencePair, got 'kl'
    """
    if isinstance(pair, ConfidencePair):
        return pair
    if isinstance(pair, str) and pair in PAIRS:
        return PAIRS[pair]
    raise ValueError(f"pair: expected 'brier', 'log' or a ConfidencePair, got {pair!r}")


# ----------------------------------------------------------------------------- samples

def _confidence_problem(y_true, y_prob):
    """``(P, y, h, correct)`` from validated inputs; binary ``(n,)`` read as ``[1 - p, p]``."""
    y, P = check_pair_matrix(y_true, y_prob)
    c = np.argmax(P, axis=1)                              # first argmax
    h = P[np.arange(P.shape[0]), c]
    return P, y, h, (y == c).astype(np.float64)


def _plugin(h, correct, pair, bandwidth, kernel, reflect):
    """(C.3) on validated arrays."""
    m = np.clip(nadaraya_watson(h, correct, bandwidth=bandwidth, kernel=kernel,
                                reflect=reflect), 0.0, 1.0)
    resid = correct - h
    with np.errstate(invalid="ignore", over="ignore"):
        lin = np.where(resid == 0.0, 0.0, pair.varphi_prime(h) * resid)
    terms = pair.varphi(m) - pair.varphi(h) - lin
    return float(np.mean(terms))


def confidence_calibration_plugin(y_true, y_prob, pair="brier", bandwidth=None,
                                  kernel="gaussian", reflect=False) -> float:
    r"""The plug-in estimator (C.3) of the confidence calibration error (004 Thm C.4).

    .. math::

        \hat d_{\varphi,n} = \frac1n \sum_{i=1}^n \varphi(\hat m(h_i)) - \varphi(h_i)
        - \varphi'(h_i)\,(\mathbb 1\{y_i = c_i\} - h_i),

    with ``h_i = max_r g_r(x_i)``, ``c_i`` the first argmax and ``m_hat`` the Nadaraya-Watson
    regression (4.8) of the correctness ``1{y_i = c_i}`` on the confidence, evaluated at the
    samples themselves (each sample included, as (C.3) is written).  It estimates
    ``E[d_varphi(E[1{Y = c(X)} | h(X)], h(X))]`` (C.4): the linear term uses the observed
    correctness in place of ``m(h_i)`` (covariance matching, proof of Thm C.4), so individual
    terms can be negative, and so can the estimate.

    Limits for ``pair="log"``: ``m_hat`` is a weighted mean of 0/1 values, so it lies in
    ``[0, 1]`` (it is clipped there against rounding), and ``varphi(0) = varphi(1) = 0`` by
    ``0 log 0 = 0``.  ``varphi'(h) = log(h / (1 - h))`` is finite for ``h < 1`` (``h >= 1/k > 0``
    always); at ``h_i = 1`` exactly, a correct sample's term is ``varphi(m_hat) - 0 - 0`` (its
    residual is 0, and ``0 * inf`` is read as 0, the limit of the term as ``h_i -> 1``), and a
    wrong sample's term is ``+inf``: a wrong prediction made with certainty has infinite log
    loss, and the estimate is ``inf``, as the population error is whenever
    ``P(h = 1, wrong) > 0``.

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Labels in ``0..k-1``.
    y_prob : array_like, shape (n, k) or (n,)
        Class probabilities, or binary ``P(y = 1)`` (read as ``[1 - p, p]``).
    pair : {"brier", "log"} or ConfidencePair
        ``varphi(x) = x^2`` or the binary negative entropy.
    bandwidth : float, optional
        Kernel bandwidth ``sigma`` in ``(0, 1]``.  Default
        :func:`calnotes.core.kernel.default_bandwidth` of the number of samples,
        ``sigma_n = 0.1 n^(-1/5)`` (0.025 at ``n = 1,000``, 0.012 at 40,000): the estimate is
        consistent only if ``sigma_n -> 0`` (Thm C.4), and a fixed width keeps a bias that does
        not shrink with ``n``.  004 uses a fixed 0.05, whose bias in the example below is -22%.
    kernel : {"gaussian", "epanechnikov"}
    reflect : bool
        Reflect the kernel at 0 and 1 (not in 004; removes the boundary bias of the regression).

    Returns
    -------
    float

    Examples
    --------
    An over-confident binary predictor, ``h ~ Uniform(1/2, 1)`` and ``P(correct | h) = h^2``,
    whose population value is ``int_{1/2}^1 2 (h^2 - h)^2 dh = 1/30 = 0.0333``.  At 004's
    ``sigma = 0.05`` the kernel smoothing (mostly at the edges of the support, where the
    regression is pulled inwards) biases the plug-in down by about ``0.0074`` (the smoothed
    population functional, by quadrature); at ``sigma = 0.02`` by ``0.0015``; the default
    ``0.1 n^(-1/5) = 0.0138`` is within the sampling error:

    >>> rng = np.random.default_rng(0)
    >>> h = rng.uniform(0.5, 1.0, size=20000)
    >>> y = (rng.uniform(size=h.size) < h ** 2).astype(int)     # class 1 predicted
    >>> round(confidence_calibration_plugin(y, h, bandwidth=0.05), 4)
    0.0268
    >>> round(confidence_calibration_plugin(y, h, bandwidth=0.02), 4)
    0.0328
    >>> round(confidence_calibration_plugin(y, h), 4)
    0.0336
    """
    pair = get_pair(pair)
    _, _, h, correct = _confidence_problem(y_true, y_prob)
    sigma = default_bandwidth(h.size) if bandwidth is None else bandwidth
    return _plugin(h, correct, pair, sigma, kernel, reflect)


def _readonly(a) -> np.ndarray:
    a = np.array(a, dtype=np.float64, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class CalibrationSharpness:
    """The ingredients of a calibration-sharpness diagram (004 Sec. 4.2, App. D).

    Arrays are read-only and share the shape of :attr:`grid`.  With subsampling, every array
    and :attr:`calibration` are means over the subsamples (App. D).

    Attributes
    ----------
    pair : str
        Name of the ``(phi, varphi)`` pair.
    grid : numpy.ndarray
        Confidence values ``p`` in ``[0, 1]``, increasing.
    curve : numpy.ndarray
        Calibration curve ``E[1{Y = c(X)} | h(X) = p]`` (Nadaraya-Watson of the correctness).
    density : numpy.ndarray
        Kernel density of the confidences ``p_hat_{h(X)}(p)``.
    total_given_h : numpy.ndarray
        ``E[d_phi(e_Y, g(X)) | h(X) = p]`` (Nadaraya-Watson of ``d_phi(e_{y_i}, g(x_i))``).
    rho : numpy.ndarray
        Pointwise sharpness gap ``total_given_h - d_varphi(curve, p)``: App. D's estimate of
        (4.7), which with one-hot labels estimates (4.7) plus the conditional irreducible loss
        (module docstring).
    lower, upper : numpy.ndarray
        The band ``curve -/+ density * rho / 2``: total length ``density * rho``, centred on
        the curve (App. D).  Not clipped here; the plot clips the bottom at 0.
    calibration : float
        ``d_{phi,CAL}``: the plug-in (C.3).
    total : float
        ``d_{phi,TOT}``: the mean of ``d_phi(e_{y_i}, g(x_i))`` over all samples.
    sharpness_gap : float
        ``total - calibration``, the mean of the pointwise gap ``rho_D``.
    n_samples : int
    bandwidth : float
    kernel : str
    reflect : bool
    subsample : int or None
        Subsample size (``None``: all samples, once).
    subsample_calibrations : numpy.ndarray
        The plug-in on each subsample (empty without subsampling).
    calibration_sd : float
        Their standard deviation (``ddof=1``); NaN without subsampling.
    """

    pair: str
    grid: np.ndarray
    curve: np.ndarray
    density: np.ndarray
    total_given_h: np.ndarray
    rho: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    calibration: float
    total: float
    sharpness_gap: float
    n_samples: int
    bandwidth: float
    kernel: str
    reflect: bool
    subsample: int | None
    subsample_calibrations: np.ndarray
    calibration_sd: float


def _check_grid(grid) -> np.ndarray:
    if grid is None:
        return np.linspace(0.0, 1.0, DEFAULT_GRID_POINTS)
    try:
        t = np.asarray(grid, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"grid: could not convert to a float array ({exc})") from None
    if t.ndim != 1 or t.size < 2:
        raise ValueError(f"grid: expected a 1-d array of at least 2 points, got shape {t.shape}")
    if not (t.min() >= 0.0 and t.max() <= 1.0):            # NaN fails both
        raise ValueError("grid: values must be finite and in [0, 1] (confidences)")
    if not np.all(np.diff(t) > 0):
        raise ValueError("grid: values must be strictly increasing")
    return t


def _check_int(value, name: str, low: int, high: int | None = None) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name}: expected an integer, got {value!r}")
    value = int(value)
    if value < low or (high is not None and value > high):
        bound = f">= {low}" if high is None else f"in {low}..{high}"
        raise ValueError(f"{name}: expected an integer {bound}, got {value}")
    return value


def _sample_divergence(P, y, generator) -> np.ndarray:
    """``d_phi(e_{y_i}, g(x_i))`` row by row (``+inf`` for log where ``g_{y_i} = 0``)."""
    E = np.zeros_like(P)
    E[np.arange(P.shape[0]), y] = 1.0
    return bregman_divergence(E, P, generator)


def _diagram_arrays(h, correct, div, t, pair, bandwidth, kernel, reflect):
    curve = nadaraya_watson(h, correct, t, bandwidth=bandwidth, kernel=kernel, reflect=reflect)
    density = kde(h, t, bandwidth=bandwidth, kernel=kernel, reflect=reflect)
    total = nadaraya_watson(h, div, t, bandwidth=bandwidth, kernel=kernel, reflect=reflect)
    rho = total - pair.divergence(np.clip(curve, 0.0, 1.0), t)
    cal = _plugin(h, correct, pair, bandwidth, kernel, reflect)
    return curve, density, total, rho, cal


def calibration_sharpness(y_true, y_prob, pair="brier", *, bandwidth=None, kernel="gaussian",
                          reflect=False, grid=None, subsample=None, n_subsamples=10,
                          rng=None) -> CalibrationSharpness:
    r"""Estimate a calibration-sharpness diagram (004 Sec. 4.2, App. D).

    Following App. D literally: the calibration curve is the Nadaraya-Watson regression (4.8)
    of the correctness ``1{y_i = c_i}`` on the confidence ``h_i``; the conditional divergence is
    the regression of ``d_phi(e_{y_i}, g(x_i))`` on ``h_i``; the density is the kernel density
    estimate of ``h`` with the same kernel; the pointwise sharpness gap is

    .. math::

        \hat\rho(p) = \hat{\mathbb E}[d_\phi(e_Y, g(X)) \mid h = p]
        - d_\varphi(\hat m(p), p),

    and the band has **total length** ``p_hat(p) rho(p)``, centred on the curve, i.e.
    ``curve -/+ p_hat rho / 2`` (App. D: "a band whose length is p_hat rho centered around the
    calibration curve"; the density scaling makes the band's area ``int p_hat rho``, the mean
    of ``rho(h)``, match the total sharpness gap).

    **What rho estimates.**  (4.7) conditions ``d_phi(pi_{Y|X}, g(X))`` on ``h``; the one-hot
    labels of App. D give ``E[d_phi(e_Y, g(X)) | h] = E[d_phi(pi_{Y|X}, g(X)) | h] +
    E[d_phi(e_Y, pi_{Y|X}) | h]``, so ``rho_hat`` estimates (4.7) **plus** the conditional
    irreducible loss (``1 - ||pi||^2`` for Brier, the entropy of ``pi`` for log): a version of
    ``rho`` shifted up by a model-independent amount, nonnegative whenever (4.7) is.  Both
    are computed exactly on finite populations by :func:`pointwise_sharpness_gap`.

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Labels in ``0..k-1``.
    y_prob : array_like, shape (n, k) or (n,)
        Class probabilities, or binary ``P(y = 1)`` (read as the two-class matrix
        ``[1 - p, p]``).
    pair : {"brier", "log"} or ConfidencePair
        The Bregman divergence ``d_phi`` and its 1-d counterpart ``d_varphi``.  For ``"log"``
        every sample needs ``g_{y_i}(x_i) > 0`` (otherwise its log loss is infinite and the
        band undefined: a ``ValueError``).
    bandwidth : float, optional
        ``sigma`` in ``(0, 1]``.  Default :func:`calnotes.core.kernel.default_bandwidth` of the
        number of samples each estimate uses (``n``, or ``subsample``): ``0.1 m^(-1/5)``, a
        bandwidth that shrinks with the sample size as consistency requires (Thm C.4).  004 uses
        a fixed 0.05 (Sec. 5) and recommends 0.01-0.05 (App. H.1); a fixed width is not a
        consistent choice, and at 0.05 ``d_CAL`` is about 20-25% low on smooth calibration
        curves (the sharpness-diagram chapter measures it).
    kernel : {"gaussian", "epanechnikov"}
    reflect : bool
        Reflect the kernel at 0 and 1 (004 does not).
    grid : array_like, optional
        Increasing evaluation points in ``[0, 1]``; default ``linspace(0, 1, 201)``.
    subsample : int, optional
        App. D's subsampling: the diagram's arrays and the plug-in are averaged over
        ``n_subsamples`` random subsets of this size (drawn without replacement); 004 uses
        10 subsets of 5000.  ``total`` is always the mean over all samples (it needs no kernel).
    n_subsamples : int
        At least 2 (a standard deviation is reported).
    rng : numpy.random.Generator or int
        Required with ``subsample``; unused otherwise.

    Returns
    -------
    CalibrationSharpness

    Raises
    ------
    ValueError
        Invalid probabilities, labels, grid, bandwidth, kernel or subsample size; an infinite
        per-sample divergence (``pair="log"`` with ``g_{y_i} = 0``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> h = rng.uniform(0.5, 1.0, size=5000)
    >>> y = (rng.uniform(size=h.size) < h ** 2).astype(int)
    >>> r = calibration_sharpness(y, h)
    >>> r.grid.shape, r.curve.shape, bool(np.all(r.upper >= r.lower))
    ((201,), (201,), True)
    >>> round(100 * r.calibration, 2), round(100 * r.total, 2)       # d_CAL, d_TOT (x100)
    (3.73, 46.42)
    >>> round(r.total - r.calibration - r.sharpness_gap, 12)
    0.0
    >>> s = calibration_sharpness(y, h, subsample=1000, n_subsamples=5, rng=1)
    >>> s.subsample_calibrations.shape, bool(s.calibration_sd > 0)
    ((5,), True)
    """
    pair_obj = get_pair(pair)
    P, y, h, correct = _confidence_problem(y_true, y_prob)
    n = P.shape[0]
    t = _check_grid(grid)
    if bandwidth is None:
        used = n if subsample is None else _check_int(subsample, "subsample", 1, n)
        bandwidth = default_bandwidth(used)
    div = _sample_divergence(P, y, pair_obj.generator)
    if not np.all(np.isfinite(div)):
        i = int(np.flatnonzero(~np.isfinite(div))[0])
        raise ValueError(f"y_prob: sample {i} gives probability 0 to its label {int(y[i])}, so"
                         f" d_phi(e_y, g(x)) is infinite for pair {pair_obj.name!r} and the"
                         " sharpness band is undefined; use pair='brier'")
    total = float(div.mean())
    if subsample is None:
        curve, density, tot_h, rho, cal = _diagram_arrays(h, correct, div, t, pair_obj,
                                                          bandwidth, kernel, reflect)
        cals = np.empty(0)
        sd = math.nan
    else:
        size = _check_int(subsample, "subsample", 1, n)
        reps = _check_int(n_subsamples, "n_subsamples", 2)
        gen = check_rng(rng)
        acc = None
        cals = np.empty(reps)
        for j in range(reps):
            idx = gen.choice(n, size=size, replace=False)
            *arrays, cals[j] = _diagram_arrays(h[idx], correct[idx], div[idx], t, pair_obj,
                                               bandwidth, kernel, reflect)
            stack = np.stack(arrays)
            acc = stack if acc is None else acc + stack
        curve, density, tot_h, rho = acc / reps
        cal = float(cals.mean())
        sd = float(cals.std(ddof=1))
    half = 0.5 * density * rho
    return CalibrationSharpness(
        pair=pair_obj.name, grid=_readonly(t), curve=_readonly(curve),
        density=_readonly(density), total_given_h=_readonly(tot_h), rho=_readonly(rho),
        lower=_readonly(curve - half), upper=_readonly(curve + half),
        calibration=float(cal), total=total, sharpness_gap=total - float(cal), n_samples=n,
        bandwidth=float(bandwidth), kernel=str(kernel).lower(), reflect=bool(reflect),
        subsample=None if subsample is None else int(subsample),
        subsample_calibrations=_readonly(cals), calibration_sd=sd,
    )


# ----------------------------------------------------------------------------- populations

def _check_dist(dist) -> None:
    if not isinstance(dist, FiniteDistribution):
        raise TypeError(f"dist: expected a calnotes.theory.population.FiniteDistribution, got"
                        f" {type(dist).__name__}")


def _phi_exact(X):
    return (X * X).sum(axis=1)


def _div_exact(Q, P):
    D = Q - P
    return (D * D).sum(axis=1)


def _irreducible_atoms(T, generator, exact):
    """``E[d_phi(e_Y, q) | X] = sum_y q_y phi(e_y) - phi(q)`` per atom (the linear term of the
    divergence averages to zero because ``E[e_Y | X] = q``)."""
    k = T.shape[1]
    if exact:
        return np.array([1 - sum(v * v for v in row) for row in T], dtype=object)
    phi_e = generator.phi(np.eye(k))
    return T @ phi_e - generator.phi(T)


def _weighted(w, values, exact):
    if exact:
        return np.array([wi * vi for wi, vi in zip(w, values)], dtype=object)
    with np.errstate(invalid="ignore"):
        return np.where(w > 0, w * values, 0.0)


def _group_avg(ids, n, mass, wv, exact):
    if exact:
        out = np.full(n, Fraction(0), dtype=object)
        np.add.at(out, ids, wv)
        return np.array([s / m if m > 0 else Fraction(0) for s, m in zip(out, mass)],
                        dtype=object)
    s = np.bincount(ids, weights=wv, minlength=n)
    return s / np.where(mass > 0, mass, 1.0)


def pointwise_sharpness_gap(dist: FiniteDistribution, pair="brier", *,
                            exact: bool = False) -> dict:
    r"""The exact population pointwise sharpness gap (4.7) at each distinct confidence.

    For every distinct value ``p`` of ``h(X) = max_r g_r(X)`` with ``P(h = p) > 0``:

    * ``total``: ``E[d_phi(pi_{Y|X}, g(X)) | h = p]`` with the **true** ``pi_{Y|X}`` (the atoms'
      ``truth``), as (4.7) is written;
    * ``calibration``: ``E[d_phi(E[pi | g(X)], g(X)) | h = p]`` (full calibration, given ``h``);
    * ``accuracy``: ``E[1{Y = c(X)} | h = p]`` and ``confidence_error``:
      ``d_varphi(accuracy, p)``;
    * ``rho = total - confidence_error`` (4.7), which splits as
      ``(total - calibration) + (calibration - confidence_error)``: the conditional sharpness
      gap of Lemma 4.1 (``>= 0`` by Jensen, ``h`` being a function of ``g``) plus the slack of
      Lemma 4.6 (``>= 0`` under its condition).  That is Prop 4.8's proof: ``rho >= 0``;
    * ``irreducible``: ``E[d_phi(e_Y, pi_{Y|X}) | h = p]`` and ``rho_labels = rho +
      irreducible``, what the sample diagram (App. D, one-hot labels) estimates.

    Parameters
    ----------
    dist : calnotes.theory.population.FiniteDistribution
    pair : {"brier", "log"} or ConfidencePair
    exact : bool
        Fractions; needs an exact ``dist``, ``phi = ||x||^2`` and a ``varphi`` that evaluates
        Fractions exactly (a polynomial such as ``x^2`` or ``2 x^2``).

    Returns
    -------
    dict
        Arrays over the distinct confidences (sorted): ``confidence``, ``mass``, ``accuracy``,
        ``total``, ``calibration``, ``confidence_error``, ``rho``, ``irreducible``,
        ``rho_labels``.

    Examples
    --------
    Two atoms with confidence 3/4 for different classes (the top-label conditioning pools
    them), label always 0:

    >>> from fractions import Fraction as Fr
    >>> from calnotes.theory.population import FiniteDistribution
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1), Fr(0)]],
    ...                        [[Fr(3, 4), Fr(1, 4)], [Fr(1, 4), Fr(3, 4)]])
    >>> r = pointwise_sharpness_gap(d, exact=True)
    >>> r["total"][0], r["confidence_error"][0], r["rho"][0]
    (Fraction(5, 8), Fraction(1, 16), Fraction(9, 16))
    """
    _check_dist(dist)
    pair = get_pair(pair)
    gen = pair.generator
    if exact and gen is not SQUARED_NORM:
        raise ValueError("exact=True: only phi = ||x||^2 (SQUARED_NORM) gives rational terms,"
                         f" got {gen.name!r}")
    w, T, F = dist.exact if exact else (dist.weights, dist.truth, dist.prediction)
    if exact and not dist.is_exact:
        raise ValueError("exact=True needs a FiniteDistribution built from exact rationals")
    N = F.shape[0]
    C = np.argmax(F, axis=1)                               # first argmax
    conf = F[np.arange(N), C]
    ids, n, values = _group_ids(conf)
    acc, mass = _group_means(ids, n, w, T[np.arange(N), C], exact)
    Cn = conditional_expectation(dist, "canonical", exact=exact)
    if exact:
        tot_atoms, cal_atoms = _div_exact(T, F), _div_exact(Cn, F)
    else:
        tot_atoms = bregman_divergence(T, F, gen)
        cal_atoms = bregman_divergence(Cn, F, gen)
    irr_atoms = _irreducible_atoms(T, gen, exact)
    total = _group_avg(ids, n, mass, _weighted(w, tot_atoms, exact), exact)
    cal = _group_avg(ids, n, mass, _weighted(w, cal_atoms, exact), exact)
    irr = _group_avg(ids, n, mass, _weighted(w, irr_atoms, exact), exact)
    cerr = pair.divergence(acc, values)
    keep = mass > 0
    out = {"confidence": values, "mass": mass, "accuracy": acc, "total": total,
           "calibration": cal, "confidence_error": cerr, "rho": total - cerr,
           "irreducible": irr, "rho_labels": total - cerr + irr}
    return {key: v[keep] for key, v in out.items()}


def _expect(w, values, exact):
    if exact:
        return sum((wi * vi for wi, vi in zip(w, values)), Fraction(0))
    return float(_weighted(w, values, False).sum())


def grouping_loss_decomposition(dist: FiniteDistribution, generator="squared_norm", *,
                                exact: bool = False) -> dict:
    r"""Kull & Flach's decomposition (004 App. E, eq. (E.1)), exactly, for ``k >= 2`` classes.

    With ``Q = pi_{Y|X}`` (the atom's ``truth``), ``C = E[e_Y | g(X)]`` (the canonical
    conditional, pooled over atoms with equal prediction vectors) and one-hot labels ``e_Y``:

    .. math::

        \mathbb E\,d_\phi(e_Y, g) = \underbrace{\mathbb E\,d_\phi(e_Y, Q)}_{\text{irreducible}}
        + \underbrace{\mathbb E\,d_\phi(Q, C)}_{\text{grouping}}
        + \underbrace{\mathbb E\,d_\phi(C, g)}_{\text{calibration}} .

    Relation to the sharpness gap of Lemma 4.1, ``SG(Z) = E phi(Z) - E phi(E[Z | g])``:

    * with ``Z = pi_{Y|X}`` (as in (4.2)-(4.4)): ``SG = grouping``;
    * with ``Z = e_Y`` (the labels, as the sample diagram uses): ``SG = irreducible + grouping``.

    Both hold exactly.  *Proof.*  The three-point identity of Bregman divergences,

    ``d(a, c) = d(a, b) + d(b, c) + (grad phi(b) - grad phi(c))^T (a - b)``,

    (expand the three definitions) is applied three times; each time the cross term has mean
    zero.  (i) ``a = e_Y, b = C, c = g``: given ``g(X)``, ``grad phi(C) - grad phi(g)`` is fixed
    and ``E[e_Y - C | g] = 0``, so ``E d(e_Y, g) = E d(e_Y, C) + E d(C, g)``.  (ii) ``a = e_Y,
    b = Q, c = C``: given ``X``, ``Q`` and ``C`` are fixed and ``E[e_Y - Q | X] = 0``, so
    ``E d(e_Y, C) = E d(e_Y, Q) + E d(Q, C)``; with (i) this is (E.1).  (iii) For any ``Z``
    with ``E[Z | g] = C`` (both ``Z = Q``, since ``E[Q | g] = E[E[e_Y | X] | g] = C``, and
    ``Z = e_Y``): ``E d(Z, C) = E phi(Z) - E phi(C) - E[grad phi(C)^T (Z - C)]`` and the last
    expectation vanishes given ``g``, so ``SG(Z) = E d(Z, C)``: ``SG(pi) = grouping`` and, by
    (ii), ``SG(e_Y) = irreducible + grouping``.  (For ``phi = sum x log x`` a term is infinite
    where a gradient is; the identities hold whenever every term is finite.)

    Parameters
    ----------
    dist : calnotes.theory.population.FiniteDistribution
    generator : {"squared_norm", "neg_entropy", "brier", "log"} or calnotes.BregmanGenerator
    exact : bool
        Fractions (squared norm only; needs an exact ``dist``).

    Returns
    -------
    dict
        ``total`` (computed directly as ``E sum_y Q_y d_phi(e_y, g)``), ``irreducible``,
        ``grouping``, ``calibration``, ``sharpness_gap_truth`` (Lemma 4.1, ``Z = pi``, from
        :func:`calnotes.theory.population.bregman_decomposition`) and ``sharpness_gap_labels``
        (``Z = e_Y``: ``E phi(e_Y) - E phi(C)``).

    Examples
    --------
    >>> from fractions import Fraction as Fr
    >>> from calnotes.theory.population import FiniteDistribution
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1, 2), Fr(1, 2)]],
    ...                        [[Fr(1, 2), Fr(1, 2)]] * 2)
    >>> r = grouping_loss_decomposition(d, exact=True)
    >>> r["total"], r["irreducible"], r["grouping"], r["calibration"]
    (Fraction(1, 2), Fraction(1, 4), Fraction(1, 8), Fraction(1, 8))
    >>> r["total"] == r["irreducible"] + r["grouping"] + r["calibration"]
    True
    >>> r["sharpness_gap_labels"] == r["irreducible"] + r["grouping"]
    True
    """
    _check_dist(dist)
    names = {"squared_norm": SQUARED_NORM, "brier": SQUARED_NORM,
             "neg_entropy": NEG_ENTROPY, "log": NEG_ENTROPY}
    if isinstance(generator, BregmanGenerator):
        gen = generator
    elif isinstance(generator, str) and generator in names:
        gen = names[generator]
    else:
        raise ValueError(f"generator: expected a BregmanGenerator or one of {sorted(names)},"
                         f" got {generator!r}")
    if exact and gen is not SQUARED_NORM:
        raise ValueError(f"exact=True: only the squared norm gives rational terms, got"
                         f" {gen.name!r}")
    if exact and not dist.is_exact:
        raise ValueError("exact=True needs a FiniteDistribution built from exact rationals")
    w, T, F = dist.exact if exact else (dist.weights, dist.truth, dist.prediction)
    N, k = T.shape
    Cn = conditional_expectation(dist, "canonical", exact=exact)
    if exact:
        phi, div = _phi_exact, _div_exact
    else:
        phi = gen.phi

        def div(Q, P):
            return bregman_divergence(Q, P, gen)
    # total: sum_y Q_y d(e_y, g), terms with Q_y = 0 dropped (they may be infinite for log)
    per_atom = np.full(N, Fraction(0), dtype=object) if exact else np.zeros(N)
    for y in range(k):
        E = np.zeros((N, k), dtype=object if exact else np.float64)
        if exact:
            E[:] = Fraction(0)
        E[:, y] = 1
        dy = div(E, F)
        if exact:
            per_atom = per_atom + T[:, y] * dy
        else:
            with np.errstate(invalid="ignore"):
                per_atom = per_atom + np.where(T[:, y] > 0, T[:, y] * dy, 0.0)
    phi_e = _phi_exact(np.eye(k, dtype=np.int64).astype(object)) if exact \
        else gen.phi(np.eye(k))
    gap_truth = bregman_decomposition(dist, gen, exact=exact)["sharpness_gap"]
    return {
        "total": _expect(w, per_atom, exact),
        "irreducible": _expect(w, _irreducible_atoms(T, gen, exact), exact),
        "grouping": _expect(w, div(T, Cn), exact),
        "calibration": _expect(w, div(Cn, F), exact),
        "sharpness_gap_truth": gap_truth,
        "sharpness_gap_labels": _expect(w, T @ phi_e, exact) - _expect(w, phi(Cn), exact),
    }
