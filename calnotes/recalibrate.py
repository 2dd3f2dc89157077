"""Recalibration maps: fit on one split, apply to another.

Every recalibrator follows scikit-learn's shape: ``fit(X, y)`` returns the fitted object,
``transform(X)`` returns probabilities of shape ``(n, k)``.  ``X`` is either a row-stochastic
probability matrix (``inputs="probs"``, the default) or a matrix of real logits
(``inputs="logits"``); the choice is explicit, never guessed from the values.  Probabilities are
turned into logits by ``log`` (a zero probability becomes ``-inf`` and stays zero after every
scaling map).

Used in the chapters "Trivial recalibration wins ECE" and "Rankings that survive the bin count"
(Part V), and by the predictor suites of :mod:`calnotes.data`.
"""

from __future__ import annotations

import numpy as np
from scipy import optimize, special

from ._validate import check_labels, check_probabilities

__all__ = ["Recalibrator", "TemperatureScaling", "softmax", "as_logits"]

_INPUTS = ("probs", "logits")


def softmax(logits) -> np.ndarray:
    """Row-wise softmax of a logit matrix; ``-inf`` entries give probability 0.

    Examples
    --------
    >>> softmax(np.array([[0.0, np.log(3.0)]])).round(3).tolist()
    [[0.25, 0.75]]
    """
    z = np.asarray(logits, dtype=np.float64)
    return special.softmax(z, axis=1)


def check_logits(logits, name: str = "X") -> np.ndarray:
    """Validate a logit matrix: 2-d, ``k >= 2`` columns, finite, non-empty.

    Examples
    --------
    >>> check_logits([[0.0, np.nan]])
    Traceback (most recent call last):
    ...
    ValueError: X: non-finite logit nan at index [0, 1]
    """
    try:
        z = np.asarray(logits, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: could not convert to a float array ({exc})") from None
    if z.ndim != 2:
        raise ValueError(f"{name}: expected logits of shape (n, k), got shape {z.shape}")
    if z.shape[0] == 0:
        raise ValueError(f"{name}: empty input (n = 0); at least one sample is needed")
    if z.shape[1] < 2:
        raise ValueError(f"{name}: logits need k >= 2 columns, got shape {z.shape}")
    bad = ~np.isfinite(z)
    if bad.any():
        i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), z.shape)
        raise ValueError(f"{name}: non-finite logit {z[i, j]} at index [{i}, {j}]")
    return z


def as_logits(X, inputs: str, name: str = "X") -> np.ndarray:
    """Logits of ``X``: validated logits, or ``log`` of validated probabilities.

    A binary 1-d probability vector ``p`` is read as the matrix ``[1 - p, p]``.

    Examples
    --------
    >>> as_logits([[0.5, 0.5]], "probs").tolist()
    [[-0.6931471805599453, -0.6931471805599453]]
    """
    if inputs not in _INPUTS:
        raise ValueError(f"inputs: expected one of {_INPUTS}, got {inputs!r}")
    if inputs == "logits":
        return check_logits(X, name)
    P = check_probabilities(X, name)
    if P.ndim == 1:
        P = np.column_stack([1.0 - P, P])
    with np.errstate(divide="ignore"):
        return np.log(P)


class Recalibrator:
    """Base class: input handling shared by every recalibration map.

    Subclasses implement ``_fit(Z, y)`` and ``_transform(Z)`` on logits ``Z`` (or override
    ``fit``/``transform`` when they work on probabilities).

    Parameters
    ----------
    inputs : {"probs", "logits"}
        What ``X`` holds in :meth:`fit` and :meth:`transform`.
    """

    def __init__(self, *, inputs: str = "probs"):
        if inputs not in _INPUTS:
            raise ValueError(f"inputs: expected one of {_INPUTS}, got {inputs!r}")
        self.inputs = inputs

    # -- input handling -------------------------------------------------------------------
    def _logits(self, X, name: str = "X") -> np.ndarray:
        return as_logits(X, self.inputs, name)

    def _check_fitted(self) -> None:
        if not getattr(self, "n_classes_", None):
            raise RuntimeError(f"{type(self).__name__}: call fit(X, y) before transform(X)")

    def _check_width(self, Z: np.ndarray) -> None:
        if Z.shape[1] != self.n_classes_:
            raise ValueError(
                f"X: has {Z.shape[1]} columns but {type(self).__name__} was fitted on"
                f" {self.n_classes_} classes")

    # -- public API -----------------------------------------------------------------------
    def fit(self, X, y):
        """Fit the map on predictions ``X`` and labels ``y``; returns ``self``."""
        Z = self._logits(X)
        y = check_labels(y, n_classes=Z.shape[1], n_samples=Z.shape[0], name="y")
        self.n_classes_ = Z.shape[1]
        self._fit(Z, y)
        return self

    def transform(self, X) -> np.ndarray:
        """Recalibrated probabilities, shape ``(n, k)``."""
        self._check_fitted()
        Z = self._logits(X)
        self._check_width(Z)
        return self._transform(Z)

    def fit_transform(self, X, y) -> np.ndarray:
        """``fit(X, y)`` then ``transform(X)``."""
        return self.fit(X, y).transform(X)

    def _fit(self, Z, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform(self, Z):  # pragma: no cover - abstract
        raise NotImplementedError


def _true_class_logits(Z: np.ndarray, y: np.ndarray) -> np.ndarray:
    zy = Z[np.arange(Z.shape[0]), y]
    bad = ~np.isfinite(zy)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(
            f"X: sample {i} gives probability 0 to its label {int(y[i])}; the log loss is"
            " infinite for every scaling map")
    return zy


class TemperatureScaling(Recalibrator):
    """Temperature scaling (Guo et al., 2017): ``softmax(z / T)`` with ``T`` minimizing log loss.

    The log loss is convex in ``beta = 1 / T`` (a log-sum-exp of functions linear in ``beta``
    minus a linear term), so the fit is a one-dimensional convex minimization; scipy's bounded
    Brent search runs on ``log beta`` in ``[-log 1000, log 1000]``.

    Scaling by a positive constant never changes the order of a row, hence never the argmax.

    Attributes
    ----------
    temperature_ : float
        Fitted ``T`` (``> 1`` softens an overconfident model).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(500, 3)) * 3.0
    >>> y = np.array([rng.choice(3, p=row) for row in softmax(Z / 3.0)])  # truth is T = 3
    >>> ts = TemperatureScaling(inputs="logits").fit(Z, y)
    >>> 2.0 < ts.temperature_ < 4.5
    True
    """

    _LOG_BETA_BOUND = np.log(1000.0)

    def _fit(self, Z, y):
        zy = _true_class_logits(Z, y)
        finite = np.isfinite(Z)
        Zf = np.where(finite, Z, 0.0)

        def nll(log_beta: float) -> float:
            beta = np.exp(log_beta)
            lse = special.logsumexp(np.where(finite, beta * Zf, -np.inf), axis=1)
            return float(np.mean(lse - beta * zy))

        res = optimize.minimize_scalar(nll, bounds=(-self._LOG_BETA_BOUND, self._LOG_BETA_BOUND),
                                       method="bounded", options={"xatol": 1e-10})
        self.temperature_ = float(np.exp(-res.x))
        self.nll_ = float(res.fun)

    def _transform(self, Z):
        return softmax(Z / self.temperature_)
