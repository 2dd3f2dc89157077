r"""The logistic-normal simulator of the proper-calibration-errors paper (App. G.1).

Predictions of a ``k``-class "model" are drawn from a mixture of multivariate logistic-normal
distributions, and each label is drawn from its own prediction, so the predictions are
calibrated by construction: :math:`P(Y = j \mid p) = p_j`.  Scaling the logits by a temperature
``T`` gives miscalibrated predictions ``softmax(z / T)`` whose true conditional class
distribution is still ``softmax(z)``, so every calibration measure has a known target.

The generative model, following the paper's text and its authors' public notebook
(``ECE bias ground truth simulation.ipynb`` in MLO-lab/better_uncertainty_calibration):

1. ``n_components`` covariance matrices (default one per class, ``k`` of them)
   :math:`\Sigma_c \sim W^{-1}(I_k / s,\ \nu)`, inverse-Wishart with scale matrix
   :math:`I_k / s` (the paper's ``I_100 / 0.01``: ``s = scale = 0.01``) and ``df`` :math:`\nu`;
2. each row ``i`` belongs to a component ``c_i`` (balanced, in random order) and has logits
   :math:`z_i \sim N(e_{c_i}, \Sigma_{c_i})` (the mean is the one-hot vector of its component);
3. the calibrated prediction is :math:`p_i = \mathrm{softmax}(z_i)` and the label
   :math:`y_i \sim \mathrm{Categorical}(p_i)`.

Choices the paper leaves open, and what is used here:

* ``df``: the paper does not state it.  The authors' notebook calls
  ``scipy.stats.invwishart(scale=eye / s)`` without ``df``, and scipy then uses ``df = k``
  (the dimension), the smallest integer it accepts; ``df=None`` here means the same.  With
  ``df = k`` the inverse-Wishart has no finite mean and its draws are very ill-conditioned
  (condition numbers around 1e5, up to 1e9, at ``k = 100``): a few directions carry most of
  the logit variance (root-mean-square logit sd about 170 at ``s = 0.01``), so the predictions
  are far less confident than independent logits of that size would be.
* means: not stated in the paper; the notebook uses one-hot means, one component per class.
* accuracy: "tempered to give ~87.6 %".  Measured here with ``k = 100``, ``s = 0.01``,
  ``df = k`` and ``n = 20,000``: the expected accuracy of the calibrated predictor,
  :math:`E[\max_j p_j]`, is 0.848, 0.863, 0.861, 0.864, 0.860, 0.874, 0.859, 0.872 for seeds
  0-7 (mean 0.862; the spread comes from the 100 random covariance matrices, the sampling error
  at this ``n`` is about 0.0015).  So the paper's stated scale gives roughly its accuracy: 87.6 %
  lies just above the range of these eight seeds, plausibly one draw with the authors' seed.
  :func:`scale_for_accuracy` finds the ``s`` that gives a target exactly on a given draw
  (0.0067, 0.0082, 0.0079 for 87.6 % with seeds 0, 1, 2).  Nothing here adjusts ``s``
  silently: the default is the paper's 0.01.

Used by the chapters "Rankings that survive the bin count" (``book/practice/rankings``) and
"Trivial recalibration wins ECE" (``book/practice/recalibration``).
"""

from __future__ import annotations

import contextlib
import numbers
from dataclasses import dataclass

import numpy as np

from .._validate import check_probabilities, check_rng

__all__ = ["LogisticNormalSample", "sample_categorical", "simulate_logistic_normal",
           "logistic_normal_predictions", "scale_for_accuracy"]


def _softmax(z: np.ndarray, axis: int = -1) -> np.ndarray:
    """Softmax along ``axis`` (as scipy.special.softmax, without importing scipy.special)."""
    e = np.exp(z - z.max(axis=axis, keepdims=True))
    e /= e.sum(axis=axis, keepdims=True)
    return e


# ---------------------------------------------------------------------------- checks
def _check_int(value, name: str, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_positive(value, name: str) -> float:
    if (isinstance(value, bool) or not isinstance(value, numbers.Real)
            or not np.isfinite(value) or value <= 0):
        raise ValueError(f"{name}: expected a positive finite number, got {value!r}")
    return float(value)


def _check_df(df, k: int) -> float:
    if df is None:
        return float(k)
    if (isinstance(df, bool) or not isinstance(df, numbers.Real) or not np.isfinite(df)
            or df <= k - 1):
        raise ValueError(f"df: the inverse-Wishart in dimension {k} needs df > {k - 1}, "
                         f"got {df!r}")
    return float(df)


def _check_temperatures(temperatures) -> tuple:
    temps = (temperatures,) if isinstance(temperatures, numbers.Real) else tuple(temperatures)
    if not temps:
        raise ValueError("temperatures: expected at least one temperature")
    return tuple(_check_positive(t, "temperature") for t in temps)


# ---------------------------------------------------------------------------- sampling
def sample_categorical(P, *, rng) -> np.ndarray:
    """One label per row of ``P``, drawn from the row as a categorical distribution.

    Inverse-CDF sampling with one uniform ``u_i`` per row: the label is the number of
    cumulative probabilities ``P_i1 + ... + P_ij`` (``j < k``) at or below ``u_i`` times the row
    total, so class ``j`` is drawn with probability ``P_ij``, and a class of probability 0 never.
    Vectorized (no loop over rows).

    Parameters
    ----------
    P : array_like, shape (n, k)
        Row-stochastic matrix.
    rng : numpy.random.Generator or int

    Returns
    -------
    numpy.ndarray of int64, shape (n,)

    Examples
    --------
    >>> y = sample_categorical(np.tile([0.2, 0.0, 0.8], (10_000, 1)), rng=0)
    >>> counts = np.bincount(y, minlength=3)
    >>> int(counts[1]), bool(abs(counts[2] / 10_000 - 0.8) < 4 * 0.004)  # sd = 0.004
    (0, True)
    """
    P = check_probabilities(P, "P", allow_1d=False)
    rng = check_rng(rng)
    cum = np.cumsum(P, axis=1)
    u = rng.random(P.shape[0]) * cum[:, -1]
    return np.count_nonzero(cum[:, :-1] <= u[:, None], axis=1).astype(np.int64)


def _single_threaded():
    """One BLAS thread (threadpoolctl, from the ``data`` extra, if installed).

    The draws are a hundred small BLAS calls; with two threads on a busy 2-core machine they
    took 1.6 s instead of 0.04 s, and one thread also makes the floating-point results
    independent of the thread count.
    """
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - the simulator works without it, only slower
        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


def _unit_noise(n: int, k: int, df: float, n_components: int, gen: np.random.Generator):
    """Components, one-hot means and the logit noise for ``s = 1``.

    With the same random numbers, an inverse-Wishart draw with scale ``I / s`` is the draw with
    scale ``I`` divided by ``s`` (scipy forms it as ``(C A^{-1})^T (C A^{-1})`` with ``C`` the
    Cholesky factor of the scale), so the noise for any ``s`` is this noise over ``sqrt(s)``.
    """
    from scipy import stats  # imported here: scipy.stats costs ~1 s at startup

    covs = stats.invwishart(df=df, scale=np.eye(k)).rvs(size=n_components, random_state=gen)
    covs = np.reshape(covs, (n_components, k, k))
    component = gen.permutation(np.arange(n) % n_components)
    noise = gen.standard_normal((n, k))
    for c in range(n_components):
        rows = np.flatnonzero(component == c)
        if rows.size:
            L = np.linalg.cholesky(covs[c])
            noise[rows] = noise[rows] @ L.T
    return component, noise


def _mean(component: np.ndarray, k: int) -> np.ndarray:
    means = np.zeros((component.size, k))
    hit = component < k  # components beyond k (n_components > k) have mean zero
    means[np.flatnonzero(hit), component[hit]] = 1.0
    return means


@dataclass(frozen=True, eq=False, repr=False)
class LogisticNormalSample:
    """A draw of :func:`simulate_logistic_normal`: logits, the calibrated truth and labels.

    Attributes
    ----------
    logits : numpy.ndarray, shape (n, k)
        ``z``; the calibrated predictions are ``softmax(z)``.
    true_prob : numpy.ndarray, shape (n, k)
        ``softmax(z)``: the prediction, and the true conditional distribution of each label.
    labels : numpy.ndarray of int64, shape (n,)
        Drawn from ``true_prob`` row by row.
    component : numpy.ndarray of int64, shape (n,)
        Mixture component of each row (its mean is the one-hot vector ``e_component``).
    temperatures : tuple of float
        The temperatures requested (keys of :attr:`predictions`).
    scale, df : float
        The inverse-Wishart parameters (scale matrix ``I / scale``).
    """

    logits: np.ndarray
    true_prob: np.ndarray
    labels: np.ndarray
    component: np.ndarray
    temperatures: tuple
    scale: float
    df: float

    def __repr__(self) -> str:
        n, k = self.logits.shape
        return (f"LogisticNormalSample(n={n}, k={k}, scale={self.scale:g}, df={self.df:g}, "
                f"temperatures={self.temperatures}, accuracy={self.accuracy:.4f})")

    def probs(self, temperature: float = 1.0) -> np.ndarray:
        """Predictions at temperature ``T``: ``softmax(z / T)``; ``T = 1`` is the truth.

        ``T > 1`` is underconfident, ``T < 1`` overconfident; the argmax never changes.  (The
        paper multiplies the logits by 1.5 and 2.5: ``T = 1/1.5`` and ``T = 1/2.5``.)
        """
        T = _check_positive(temperature, "temperature")
        return self.true_prob if T == 1.0 else _softmax(self.logits / T, axis=1)

    @property
    def predictions(self) -> dict:
        """``{T: probs(T)}`` for the requested :attr:`temperatures`."""
        return {T: self.probs(T) for T in self.temperatures}

    @property
    def accuracy(self) -> float:
        """Empirical accuracy of the calibrated predictor: the share of labels at the argmax."""
        return float(np.mean(self.true_prob.argmax(axis=1) == self.labels))

    @property
    def expected_accuracy(self) -> float:
        """Its expected accuracy given the predictions, ``mean_i max_j p_ij`` (no label noise)."""
        return float(self.true_prob.max(axis=1).mean())


def simulate_logistic_normal(n: int, n_classes: int = 100, *, scale: float = 0.01, df=None,
                             n_components: int | None = None, temperatures=(1.0,),
                             rng) -> LogisticNormalSample:
    """Calibrated logistic-normal predictions, labels drawn from them, and tempered variants.

    Parameters
    ----------
    n : int
        Number of rows (the paper: 10,000 validation + 10,000 test).
    n_classes : int
        ``k >= 2`` (the paper: 100).
    scale : float
        ``s`` of the inverse-Wishart scale matrix ``I_k / s`` (the paper: 0.01).  Smaller
        ``s`` means larger logits and higher accuracy.
    df : float, optional
        Inverse-Wishart degrees of freedom, ``> k - 1``; default ``k`` (scipy's default, used by
        the paper's authors; see the module notes).
    n_components : int, optional
        Number of mixture components (covariance matrices); default ``k``.
    temperatures : float or sequence of float
        Temperatures ``T > 0`` of the predictions ``softmax(z / T)`` to offer in
        :attr:`LogisticNormalSample.predictions`; ``1.0`` is the calibrated truth.
    rng : numpy.random.Generator or int

    Returns
    -------
    LogisticNormalSample

    Examples
    --------
    >>> sim = simulate_logistic_normal(2000, 10, temperatures=(1.0, 0.5), rng=0)
    >>> sim.true_prob.shape, sim.labels.shape
    ((2000, 10), (2000,))
    >>> over = sim.predictions[0.5]  # T < 1: overconfident, same argmax
    >>> bool(over.max(axis=1).mean() > sim.expected_accuracy)
    True
    >>> bool(np.array_equal(over.argmax(axis=1), sim.true_prob.argmax(axis=1)))
    True
    """
    n = _check_int(n, "n", 1)
    k = _check_int(n_classes, "n_classes", 2)
    s = _check_positive(scale, "scale")
    df = _check_df(df, k)
    m = k if n_components is None else _check_int(n_components, "n_components", 1)
    temps = _check_temperatures(temperatures)
    gen = check_rng(rng)
    with _single_threaded():
        component, noise = _unit_noise(n, k, df, m, gen)
    logits = _mean(component, k) + noise / np.sqrt(s)
    true_prob = _softmax(logits, axis=1)
    labels = sample_categorical(true_prob, rng=gen)
    return LogisticNormalSample(logits=logits, true_prob=true_prob, labels=labels,
                                component=component.astype(np.int64), temperatures=temps,
                                scale=s, df=df)


def logistic_normal_predictions(n: int, n_classes: int = 100, *, scale: float = 0.01, df=None,
                                rng) -> tuple[np.ndarray, np.ndarray]:
    """Calibrated predictions and labels of the paper's simulator: ``(P, y)``.

    The same draw as ``simulate_logistic_normal(n, n_classes, scale=scale, df=df, rng=rng)``
    (``true_prob`` and ``labels``); see that function and the module notes.

    Examples
    --------
    >>> P, y = logistic_normal_predictions(1000, 5, rng=1)
    >>> P.shape, y.shape, bool(np.allclose(P.sum(axis=1), 1.0))
    ((1000, 5), (1000,), True)
    """
    sim = simulate_logistic_normal(n, n_classes, scale=scale, df=df, rng=rng)
    return sim.true_prob, sim.labels


def scale_for_accuracy(target: float, n_classes: int = 100, *, df=None, n: int = 20_000,
                       n_components: int | None = None, rng) -> float:
    """The scale ``s`` at which the simulator's expected accuracy equals ``target``.

    Draws the unit-scale noise once (as :func:`simulate_logistic_normal` would with the same
    ``rng``), then solves ``mean_i max_j softmax(e_c + noise / sqrt(s))_ij = target`` for
    ``s`` by Brent's method on ``log s``.  The answer belongs to that draw: other seeds give
    somewhat different accuracies at the same ``s`` (about +-1 point at ``k = 100``).

    Parameters
    ----------
    target : float
        Expected accuracy in ``(1/k, 1)``, e.g. the paper's 0.876.
    n_classes, df, n, n_components, rng
        As in :func:`simulate_logistic_normal`.

    Returns
    -------
    float

    Examples
    --------
    >>> s = scale_for_accuracy(0.8, 10, n=2000, rng=0)
    >>> sim = simulate_logistic_normal(2000, 10, scale=s, rng=0)
    >>> round(sim.expected_accuracy, 6)
    0.8
    """
    from scipy import optimize

    k = _check_int(n_classes, "n_classes", 2)
    if (isinstance(target, bool) or not isinstance(target, numbers.Real)
            or not 1.0 / k < target < 1.0):
        raise ValueError(f"target: expected an accuracy in (1/k, 1) = ({1 / k:.4g}, 1), "
                         f"got {target!r}")
    n = _check_int(n, "n", 1)
    df = _check_df(df, k)
    m = k if n_components is None else _check_int(n_components, "n_components", 1)
    with _single_threaded():
        component, noise = _unit_noise(n, k, df, m, check_rng(rng))
    mean = _mean(component, k)

    def gap(log_s: float) -> float:
        P = _softmax(mean + noise * np.exp(-0.5 * log_s), axis=1)
        return float(P.max(axis=1).mean()) - target

    lo, hi = np.log(1e-8), np.log(1e8)
    if gap(lo) < 0 or gap(hi) > 0:
        raise ValueError(f"target: accuracy {target} is not reached for s in [1e-8, 1e8] on "
                         "this draw")
    return float(np.exp(optimize.brentq(gap, lo, hi, xtol=1e-12, rtol=1e-12)))
