"""Recalibration maps: fit on one split, apply to another.

Every recalibrator follows scikit-learn's shape: ``fit(X, y)`` returns the fitted object,
``transform(X)`` returns probabilities of shape ``(n, k)``.  ``X`` is either a row-stochastic
probability matrix (``inputs="probs"``, the default) or a matrix of real logits
(``inputs="logits"``); the choice is explicit, never guessed from the values.  A binary 1-d
probability vector ``p`` is read as the matrix ``[1 - p, p]``, so ``transform`` returns shape
``(n, 2)`` for it.

What each map works on
----------------------
* Scaling maps (:class:`TemperatureScaling`, :class:`VectorScaling`, :class:`MatrixScaling`)
  work on logits; probabilities are turned into logits by ``log``.  A zero probability becomes
  ``-inf``: temperature scaling keeps it at zero (``-inf / T = -inf``), vector and matrix
  scaling refuse it (``-inf`` times a weight of either sign, or zero, is not a logit).
* :class:`DirichletCalibration` works on log-probabilities, ``log p`` or ``log softmax(z)``;
  it floors zero probabilities at :data:`LOG_PROB_FLOOR` (its own choice, documented there).
* One-vs-rest maps (:class:`HistogramBinning`, :class:`IsotonicCalibration`) work on
  probabilities (``softmax(z)`` for logits) and can output exact zeros: their log loss can be
  infinite, as in Table 1 of the ECE-pitfalls paper (NLL = inf for HB and IR).  Nothing here
  hides that.
* Top-label maps (:class:`MeanReplacement`, :class:`AccuracyPreservingTransform`) use only
  the predicted class, the first maximum of each row of ``X`` (logits or probabilities).

Hyperparameters are checked when the object is constructed; inputs when ``fit`` and
``transform`` are called (:mod:`calnotes._validate` and :func:`check_logits`).  Logits may be
``-inf`` (a masked class, probability 0) as long as every row has a finite logit; ``+inf``
and NaN are refused.

Warnings
--------
``fit`` warns, with :class:`DegenerateFitWarning` (a :class:`UserWarning`), when the data
cannot determine the map; the fit still returns, so that a loop over many models keeps going:

* classes of ``0..k-1`` never occur in ``y`` (every recalibrator);
* ``n`` is below the number of parameters that no penalty constrains (the scaling maps:
  1 for temperature scaling, ``2k`` for vector scaling, ``k^2 + k`` for unpenalized matrix
  scaling; for Dirichlet calibration ``k`` plus the off-diagonal entries when
  ``reg_lambda = 0`` plus the intercepts when ``reg_mu = 0``);
* the temperature is at its search bound (``T`` within 0.1% of ``0.001`` or ``1000``);
* a scaling map gives (near) one-hot outputs, top probability ``>= 1 - 1e-6``, on every fit
  sample (separable or too few data: the log loss has no minimizer).

``inputs="logits"`` given a matrix that looks like probabilities (every value in ``[0, 1]``,
every row summing to 1 within 1e-4) issues :class:`InputKindWarning`, a warning rather than
an error because such logits are possible (only unlikely); pass probabilities with
``inputs="probs"``.  To silence either warning on purpose, use
``warnings.filterwarnings("ignore", category=DegenerateFitWarning)``.

Recalibrators follow scikit-learn's estimator API far enough for ``sklearn.base.clone``:
``get_params`` / ``set_params`` (the constructor's arguments) and ``predict_proba`` (the same
as ``transform``).  They do not derive from ``sklearn.base.BaseEstimator`` (scikit-learn is
an optional dependency), so scikit-learn's ``Pipeline`` and ``GridSearchCV``, which ask for
estimator tags, do not take them.

Used in the chapters "Trivial recalibration wins ECE" (``book/practice/recalibration``: TS,
HB, IR, MRR) and "Rankings that survive the bin count" (Part V), for the recalibration
transformation ``t^f`` of Prop D.2 of the proper-calibration-errors paper, and by the
predictor suites of :mod:`calnotes.data`.
"""

from __future__ import annotations

import inspect
import numbers
import warnings

import numpy as np

from ._validate import check_labels, check_logits, check_n_bins, check_probabilities
from ._validate import looks_like_probabilities as _looks_like_probabilities
from .core.binning import _width_bins_unchecked

__all__ = [
    "DegenerateFitWarning",
    "InputKindWarning",
    "Recalibrator",
    "TemperatureScaling",
    "VectorScaling",
    "MatrixScaling",
    "DirichletCalibration",
    "HistogramBinning",
    "IsotonicCalibration",
    "MeanReplacement",
    "AccuracyPreservingTransform",
    "LOG_PROB_FLOOR",
    "MAX_HISTOGRAM_CELLS",
    "softmax",
    "log_softmax",
    "as_logits",
    "as_probabilities",
    "check_logits",
    "TABLE1_METHODS",
    "compare_recalibrators",
]

_INPUTS = ("probs", "logits")

#: Floor applied to probabilities before ``log`` in :class:`DirichletCalibration` only:
#: ``log 0 = -inf`` would make ``W log p`` undefined (``0 * -inf``).  ``1e-300`` is above the
#: float64 subnormal range, so only exact zeros and subnormal probabilities are changed, and
#: ``log(1e-300) = -690.8`` is finite.
LOG_PROB_FLOOR = 1e-300


class DegenerateFitWarning(UserWarning):
    """A recalibrator's fit is not determined by the data (see the module's *Warnings*)."""


class InputKindWarning(UserWarning):
    """``inputs="logits"`` was given a matrix that looks like probabilities."""


#: Largest table of :class:`HistogramBinning`: ``k * n_bins`` bin values (three int64/float64
#: tables of this size, 240 MB at the limit).  More bins than samples only leaves bins empty.
MAX_HISTOGRAM_CELLS = 10_000_000


# ----------------------------------------------------------------------------- helpers

def softmax(logits) -> np.ndarray:
    """Row-wise softmax of a logit matrix; ``-inf`` entries give probability 0.

    Computed as ``exp(z - max z)`` normalized, with overflow of ``z - max z`` (logits
    beyond ``+-9e307``) silenced: that difference is then ``-inf``, whose exponential is the
    correct 0.  A row without a finite logit has no softmax (NaN); :func:`check_logits`
    refuses such rows.

    Examples
    --------
    >>> softmax(np.array([[0.0, np.log(3.0)]])).round(3).tolist()
    [[0.25, 0.75]]
    >>> softmax([[0.0, -np.inf], [1e308, -1e308]]).tolist()
    [[1.0, 0.0], [1.0, 0.0]]
    """
    z = np.asarray(logits, dtype=np.float64)
    with np.errstate(over="ignore"):
        e = np.exp(z - z.max(axis=1, keepdims=True))
    return e / e.sum(axis=1, keepdims=True)


def log_softmax(logits) -> np.ndarray:
    """Row-wise ``log softmax(z)``, stable for huge logits; ``-inf`` stays ``-inf``.

    Examples
    --------
    >>> log_softmax([[0.0, 0.0, -np.inf]]).round(6).tolist()
    [[-0.693147, -0.693147, -inf]]
    """
    z = np.asarray(logits, dtype=np.float64)
    with np.errstate(over="ignore"):
        shifted = z - z.max(axis=1, keepdims=True)
        return shifted - np.log(np.exp(shifted).sum(axis=1, keepdims=True))


def _check_inputs(inputs) -> str:
    if inputs not in _INPUTS:
        raise ValueError(f"inputs: expected one of {_INPUTS}, got {inputs!r}")
    return inputs


def _probability_matrix(X, name: str) -> np.ndarray:
    P = check_probabilities(X, name)
    return np.column_stack([1.0 - P, P]) if P.ndim == 1 else P


def as_logits(X, inputs: str, name: str = "X") -> np.ndarray:
    """Logits of ``X``: validated logits, or ``log`` of validated probabilities.

    A binary 1-d probability vector ``p`` is read as the matrix ``[1 - p, p]``.

    Examples
    --------
    >>> as_logits([[0.5, 0.5]], "probs").tolist()
    [[-0.6931471805599453, -0.6931471805599453]]
    """
    if _check_inputs(inputs) == "logits":
        return check_logits(X, name)
    P = _probability_matrix(X, name)
    with np.errstate(divide="ignore"):
        return np.log(P)


def as_probabilities(X, inputs: str, name: str = "X") -> np.ndarray:
    """Probabilities of ``X``: validated probabilities, or ``softmax`` of validated logits.

    A binary 1-d probability vector ``p`` is read as the matrix ``[1 - p, p]``.

    Examples
    --------
    >>> as_probabilities([0.25], "probs").tolist()
    [[0.75, 0.25]]
    >>> as_probabilities([[0.0, np.log(3.0)]], "logits").round(3).tolist()
    [[0.25, 0.75]]
    """
    if _check_inputs(inputs) == "logits":
        return softmax(check_logits(X, name))
    return _probability_matrix(X, name)


def _check_penalty(value, name: str) -> float:
    """A regularization strength: a real number, finite, ``>= 0``."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name}: expected a non-negative real number, got {value!r}")
    value = float(value)
    if not np.isfinite(value) or value < 0.0:
        raise ValueError(f"{name}: expected a finite non-negative number, got {value!r}")
    return value


def _check_bins(n_bins) -> int:
    # Any positive integer up to the table limit: more bins than samples only leaves bins
    # empty (see the fallback).  k >= 2 classes, so k * n_bins <= MAX_HISTOGRAM_CELLS needs
    # n_bins <= MAX_HISTOGRAM_CELLS // 2.
    m = check_n_bins(n_bins, np.iinfo(np.int64).max)
    if m > MAX_HISTOGRAM_CELLS // 2:
        raise ValueError(
            f"n_bins: {m} bins is above the limit {MAX_HISTOGRAM_CELLS // 2} (k * n_bins <="
            f" {MAX_HISTOGRAM_CELLS:.0e} table cells, calnotes.recalibrate.MAX_HISTOGRAM_CELLS);"
            " more bins than samples only leaves bins empty")
    return m


def _normalize_rows(V: np.ndarray) -> np.ndarray:
    """Rows divided by their sums; an all-zero row becomes uniform ``1/k``."""
    total = V.sum(axis=1, keepdims=True)
    zero = total[:, 0] == 0.0
    out = np.empty_like(V)
    np.divide(V, total, out=out, where=~zero[:, None])
    out[zero] = 1.0 / V.shape[1]
    return out


def _first_argmax(S: np.ndarray) -> np.ndarray:
    return np.argmax(S, axis=1)


# ----------------------------------------------------------------------------- base class

class Recalibrator:
    """Base class: input handling shared by every recalibration map.

    Subclasses implement ``_fit(F, y)`` and ``_transform(F)`` on the features ``F`` that
    ``_prepare`` makes from ``X``: logits (the default, :func:`as_logits`), probabilities
    (``_space = "probs"``, :func:`as_probabilities`) or the validated input as given
    (``_space = "scores"``, for maps that only use the argmax).

    Parameters
    ----------
    inputs : {"probs", "logits"}
        What ``X`` holds in :meth:`fit` and :meth:`transform`.

    Attributes
    ----------
    n_classes_ : int
        Number of classes ``k`` seen in :meth:`fit`; set only when ``fit`` succeeds.

    Warns
    -----
    DegenerateFitWarning
        From :meth:`fit`: classes missing from ``y``; for the scaling maps also ``n`` below
        the number of unpenalized parameters, and (near) one-hot outputs on every fit sample;
        for temperature scaling a temperature at the search bound.
    InputKindWarning
        From :meth:`fit`: ``inputs="logits"`` with an ``X`` that looks like probabilities.

    Examples
    --------
    scikit-learn's ``clone`` works (``get_params`` / ``set_params``):

    >>> from sklearn.base import clone
    >>> clone(HistogramBinning(n_bins=7, inputs="logits"))
    HistogramBinning(n_bins=7, inputs='logits')
    """

    _space = "logits"

    def __init__(self, *, inputs: str = "probs"):
        self.inputs = _check_inputs(inputs)

    # -- input handling -------------------------------------------------------------------
    def _logits(self, X, name: str = "X") -> np.ndarray:
        return as_logits(X, self.inputs, name)

    def _prepare(self, X, name: str = "X") -> np.ndarray:
        if self._space == "logits":
            return as_logits(X, self.inputs, name)
        if self._space == "probs":
            return as_probabilities(X, self.inputs, name)
        if self.inputs == "logits":  # "scores": the validated input, whichever it is
            return check_logits(X, name)
        return _probability_matrix(X, name)

    def _check_fitted(self) -> None:
        if not getattr(self, "n_classes_", None):
            raise RuntimeError(f"{type(self).__name__}: call fit(X, y) before transform(X)")

    def _check_width(self, Z: np.ndarray) -> None:
        if Z.shape[1] != self.n_classes_:
            raise ValueError(
                f"X: has {Z.shape[1]} columns but {type(self).__name__} was fitted on"
                f" {self.n_classes_} classes")

    # -- scikit-learn estimator API ---------------------------------------------------------
    @classmethod
    def _param_names(cls) -> list[str]:
        signature = inspect.signature(cls.__init__)
        return [p.name for p in signature.parameters.values()
                if p.name != "self" and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD)]

    def get_params(self, deep: bool = True) -> dict:
        """The constructor's arguments, ``{name: value}`` (scikit-learn's estimator API).

        ``deep`` is accepted for scikit-learn and has no effect (no nested estimators).

        Examples
        --------
        >>> HistogramBinning(n_bins=10).get_params()
        {'n_bins': 10, 'inputs': 'probs'}
        """
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params):
        """Set constructor arguments (validated as in the constructor); returns ``self``.

        A fitted object becomes unfitted when a value changes: its fit was for the old
        values.

        Examples
        --------
        >>> HistogramBinning().set_params(n_bins=5).n_bins
        5
        >>> HistogramBinning().set_params(bins=5)
        Traceback (most recent call last):
        ...
        ValueError: set_params: HistogramBinning has no parameter(s) ['bins']; its parameters are ['n_bins', 'inputs']
        """
        names = self._param_names()
        unknown = sorted(set(params) - set(names))
        if unknown:
            raise ValueError(f"set_params: {type(self).__name__} has no parameter(s) {unknown};"
                             f" its parameters are {names}")
        old = self.get_params()
        fresh = type(self)(**{**old, **params})       # validates every value
        for name in names:
            setattr(self, name, getattr(fresh, name))
        if any(old[name] is not getattr(self, name) and old[name] != getattr(self, name)
               for name in names):
            self.__dict__.pop("n_classes_", None)
        return self

    def __repr__(self) -> str:
        defaults = {p.name: p.default
                    for p in inspect.signature(type(self).__init__).parameters.values()}
        shown = [f"{name}={value!r}" for name, value in self.get_params().items()
                 if not (defaults.get(name) is value or defaults.get(name) == value)]
        return f"{type(self).__name__}({', '.join(shown)})"

    # -- degenerate fits --------------------------------------------------------------------
    #: Scaling maps: warn when every fit sample gets a (near) one-hot output.
    _warn_one_hot = False
    _ONE_HOT = 1.0 - 1e-6

    def _n_parameters(self, k: int) -> int:
        """Parameters that no penalty constrains (0: not a parametric map, never warned)."""
        return 0

    def _warn(self, message: str) -> None:
        # stacklevel: _warn -> fit -> the caller of fit
        warnings.warn(f"{type(self).__name__}: {message}", DegenerateFitWarning, stacklevel=3)

    def _warn_if_probabilities(self, X) -> None:
        try:
            arr = np.asarray(X, dtype=np.float64)
        except (TypeError, ValueError):
            return  # refused with a clear message by the input checks
        if arr.ndim == 2 and arr.shape[1] >= 2 and _looks_like_probabilities(arr):
            warnings.warn(
                f"{type(self).__name__}: inputs='logits' but X looks like probabilities (every"
                " value in [0, 1], every row summing to 1); softmax of probabilities is not"
                " what the model predicted. Pass inputs='probs' if X holds probabilities.",
                InputKindWarning, stacklevel=3)

    def _check_fit_data(self, F, y) -> None:
        n, k = F.shape
        absent = np.flatnonzero(np.bincount(y, minlength=k) == 0)
        if absent.size:
            self._warn(f"class(es) {absent.tolist()} of 0..{k - 1} never occur in y; the map is"
                       " fitted without seeing them (their outputs are extrapolated)")
        n_params = self._n_parameters(k)
        if n < n_params:
            self._warn(f"{n_params} parameters fitted on n = {n} samples; the data cannot"
                       " determine the map (use more data, or a map with fewer parameters or a"
                       " penalty)")

    def _check_fitted_map(self, F) -> None:
        if not self._warn_one_hot:
            return
        out = self._transform(F)
        if np.all(out.max(axis=1) >= self._ONE_HOT):
            self._warn(f"every fit sample gets a (near) one-hot output (top probability >="
                       f" {self._ONE_HOT}); the fit data are separable or too few, so the log"
                       " loss has no minimizer and the map is overconfident")

    # -- public API -----------------------------------------------------------------------
    def fit(self, X, y):
        """Fit the map on predictions ``X`` and labels ``y``; returns ``self``.

        Warns with :class:`DegenerateFitWarning` when the data cannot determine the map, and
        with :class:`InputKindWarning` when ``inputs="logits"`` receives probabilities (see
        the module's *Warnings*).
        """
        self.__dict__.pop("n_classes_", None)  # a failed refit leaves the object unfitted
        if self.inputs == "logits":
            self._warn_if_probabilities(X)
        F = self._prepare(X)
        y = check_labels(y, n_classes=F.shape[1], n_samples=F.shape[0], name="y")
        self._fit(F, y)
        self._check_fit_data(F, y)
        self._check_fitted_map(F)
        self.n_classes_ = F.shape[1]
        return self

    def transform(self, X) -> np.ndarray:
        """Recalibrated probabilities, shape ``(n, k)``."""
        self._check_fitted()
        F = self._prepare(X)
        self._check_width(F)
        return self._transform(F)

    def predict_proba(self, X) -> np.ndarray:
        """The same as :meth:`transform` (scikit-learn's name for class probabilities)."""
        return self.transform(X)

    def fit_transform(self, X, y) -> np.ndarray:
        """``fit(X, y)`` then ``transform(X)``."""
        return self.fit(X, y).transform(X)

    def _fit(self, F, y):  # pragma: no cover - abstract
        raise NotImplementedError

    def _transform(self, F):  # pragma: no cover - abstract
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
    One of the four maps of the chapter "Trivial recalibration wins ECE".

    Parameters
    ----------
    inputs : {"probs", "logits"}
        What ``X`` holds; probabilities are mapped to ``log p`` (zeros stay zero).

    Attributes
    ----------
    temperature_ : float
        Fitted ``T`` (``> 1`` softens an overconfident model).
    nll_ : float
        Mean log loss on the fit data at ``T``.

    Warns
    -----
    DegenerateFitWarning
        ``T`` at a bound of the search (one class in ``y``, ``n = 1``, separable data), every
        fit output (near) one-hot, or classes missing from ``y``.

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
    _warn_one_hot = True

    def _n_parameters(self, k: int) -> int:
        return 1

    def _fit(self, Z, y):
        zy = _true_class_logits(Z, y)
        # With beta > 0 the row maximum of beta * z is beta * max(z), so
        # mean(logsumexp(beta z) - beta z_y) = beta * mean(max z - z_y)
        #                                       + mean(log sum exp(beta (z - max z))).
        # z - max z <= 0, and -inf for a zero probability (or a masked logit), which exp maps
        # to 0; an overflow of the difference (logits beyond 9e307) is -inf too.
        top = Z.max(axis=1)
        with np.errstate(over="ignore"):
            D = Z - top[:, None]
            gap = float(np.mean(top - zy))
        buf = np.empty_like(D)

        def nll(log_beta: float) -> float:
            beta = np.exp(log_beta)
            np.multiply(D, beta, out=buf)
            np.exp(buf, out=buf)
            return beta * gap + float(np.mean(np.log(buf.sum(axis=1))))

        from scipy import optimize  # lazily: scipy.optimize takes ~1 s to import

        res = optimize.minimize_scalar(nll, bounds=(-self._LOG_BETA_BOUND, self._LOG_BETA_BOUND),
                                       method="bounded", options={"xatol": 1e-10})
        self.temperature_ = float(np.exp(-res.x))
        self.nll_ = float(res.fun)
        if abs(abs(float(res.x)) - self._LOG_BETA_BOUND) < 1e-3:
            self._warn(f"the fitted temperature {self.temperature_:.6g} is at the bound of the"
                       " search, T in [0.001, 1000]: the data do not determine T (one class"
                       " only, too few samples, or separable data)")

    def _transform(self, Z):
        return softmax(Z / self.temperature_)


# ----------------------------------------------------------------------------- linear maps

def _penalty_weights(k: int, off_diag: float, diag: float) -> np.ndarray:
    a = np.full((k, k), float(off_diag))
    np.fill_diagonal(a, float(diag))
    return a


def _gauge_shift(D: np.ndarray, b: np.ndarray, a: np.ndarray, bias: float):
    """The softmax-invariant shift ``(u, c)`` of ``(W, b)`` with the smallest penalty.

    ``D = W - I``.

    ``softmax(F W^T + b)`` does not change when the same vector ``u`` is added to every row of
    ``W`` (every logit of a sample moves by ``F_i . u``) or the same constant ``c`` to every
    entry of ``b``.  The penalty ``sum_jl a_jl (W - I)_jl^2 + bias * ||b||^2`` is a separable
    quadratic in ``(u, c)``, minimized at ``u_l = -sum_j a_jl (W - I)_jl / sum_j a_jl`` (0 for
    a column without weight) and ``c = -mean(b)`` (0 when ``bias = 0``).  Both are linear in
    ``(D, b)``, so the same function maps a direction ``(dW, db)`` to its shift.
    """
    weight = a.sum(axis=0)
    u = np.zeros(D.shape[1])
    np.divide(-(a * D).sum(axis=0), weight, out=u, where=weight > 0)
    c = -float(b.mean()) if bias > 0 else 0.0
    return u, c


class _LogLossProblem:
    """Mean log loss of ``softmax(linear map of F)``, with gradient and Hessian products.

    ``full=False``: ``softmax(F * w + b)``, ``theta = (w, b)`` (vector scaling).
    ``full=True``: ``softmax(F W^T + b)``, ``theta = (W.ravel(), b)``, plus the penalty
    ``off_diag * sum_{i != j} W_ij^2 + diag * sum_i (W_ii - 1)^2 + bias * sum_j b_j^2``
    minimized over the softmax-invariant shifts of ``(W, b)`` (:func:`_gauge_shift`).
    Minimizing this over ``theta`` and then applying the shift (:meth:`canonical`) solves the
    unshifted problem exactly, since the log loss does not see the shift; it removes the
    nearly flat direction that a weak penalty leaves along the shift.  By the envelope
    theorem the gradient is the penalty's gradient at the optimal shift.

    The objective is convex in ``theta`` (log-sum-exp of linear functions, plus a convex
    quadratic).  Its Hessian-vector product is exact: for ``G = (softmax(S) - Y) / n`` and a
    direction ``dS`` of the logits, ``dG = (P * dS - P * rowsum(P * dS)) / n``.
    """

    def __init__(self, F, y, *, full, off_diag=0.0, diag=0.0, bias=0.0):
        self.F, self.y, self.full = F, y, full
        self.n, self.k = F.shape
        self.rows = np.arange(self.n)
        self.a = _penalty_weights(self.k, off_diag, diag)
        self.bias = float(bias)
        self._key = self._P = None

    def initial(self) -> np.ndarray:
        """The identity map: ``W = I`` (or ``w = 1``), ``b = 0``."""
        k = self.k
        w = np.eye(k).ravel() if self.full else np.ones(k)
        return np.concatenate([w, np.zeros(k)])

    def split(self, theta):
        k = self.k
        if self.full:
            return theta[:k * k].reshape(k, k), theta[k * k:]
        return theta[:k], theta[k:]

    def logits(self, theta) -> np.ndarray:
        w, b = self.split(theta)
        return (self.F @ w.T if self.full else self.F * w) + b

    def _back(self, G):
        """Gradient in theta from the gradient ``G`` in the logits."""
        if self.full:
            return np.concatenate([(G.T @ self.F).ravel(), G.sum(axis=0)])
        return np.concatenate([np.einsum("ij,ij->j", G, self.F), G.sum(axis=0)])

    def _forward(self, v):
        """The change of the logits along the direction ``v`` of theta."""
        dw, db = self.split(v)
        return (self.F @ dw.T if self.full else self.F * dw) + db

    def value_grad(self, theta):
        """Objective (penalized mean log loss) and its gradient."""
        S = self.logits(theta)
        top = S.max(axis=1, keepdims=True)
        E = np.exp(S - top)
        total = E.sum(axis=1, keepdims=True)
        nll = float(np.mean(top[:, 0] + np.log(total[:, 0]) - S[self.rows, self.y]))
        P = E / total
        self._key, self._P = theta.tobytes(), P
        G = P.copy()
        G[self.rows, self.y] -= 1.0
        G /= self.n
        grad = self._back(G)
        if self.full:
            W, b = self.split(theta)
            D = W - np.eye(self.k)
            u, c = _gauge_shift(D, b, self.a, self.bias)
            R, bc = D + u, b + c
            nll += float(np.sum(self.a * R * R)) + self.bias * float(bc @ bc)
            gW, gb = self.split(grad)  # views: updated in place
            gW += 2.0 * self.a * R
            gb += 2.0 * self.bias * bc
        return nll, grad

    def hessp(self, theta, v):
        """Hessian of the objective at ``theta`` times ``v``."""
        if self._key != theta.tobytes():
            self.value_grad(theta)
        P = self._P
        PdS = P * self._forward(v)
        dG = (PdS - P * PdS.sum(axis=1, keepdims=True)) / self.n
        out = self._back(dG)
        if self.full:
            V, dc = self.split(v)
            du, ddc = _gauge_shift(V, dc, self.a, self.bias)
            hW, hb = self.split(out)
            hW += 2.0 * self.a * (V + du)
            hb += 2.0 * self.bias * (dc + ddc)
        return out

    def log_loss(self, theta) -> float:
        """Mean log loss without the penalty."""
        from scipy import special    # lazily: scipy.special is most of `import calnotes`

        S = self.logits(theta)
        return float(np.mean(special.logsumexp(S, axis=1) - S[self.rows, self.y]))

    def canonical(self, theta):
        """``(W, b)`` shifted to the smallest penalty (``full``), or ``(w, b)``."""
        w, b = self.split(theta)
        if not self.full:
            return w.copy(), b.copy()
        u, c = _gauge_shift(w - np.eye(self.k), b, self.a, self.bias)
        return w + u, b + c


class _LinearScaling(Recalibrator):
    """Shared fitting for the linear maps: trust-region Newton-CG with exact derivatives.

    scipy's ``trust-ncg`` with the analytic gradient and exact Hessian-vector products of
    :class:`_LogLossProblem`.  (L-BFGS-B, tried first, needed hundreds to thousands of
    iterations on log-probability features, whose shared large negative mean makes the
    problem badly conditioned; Newton steps do not care about the conditioning and converge
    in about ten iterations.)  Stops when the gradient norm is below ``gtol = 1e-8``.
    """

    _GTOL = 1e-8
    _MAX_ITER = 500

    def _solve(self, problem: _LogLossProblem) -> np.ndarray:
        from scipy import optimize

        res = optimize.minimize(problem.value_grad, problem.initial(), jac=True,
                                hessp=problem.hessp, method="trust-ncg",
                                options={"gtol": self._GTOL, "maxiter": self._MAX_ITER})
        self.n_iter_ = int(res.nit)
        # Near the optimum of a large sample the trust region can stop on rounding ("a bad
        # approximation caused failure to predict improvement") with a gradient just above
        # gtol: that is convergence too.
        grad_norm = float(np.linalg.norm(problem.value_grad(res.x)[1]))
        self.converged_ = bool(res.success or grad_norm < 1e3 * self._GTOL)
        if not self.converged_:
            warnings.warn(
                f"{type(self).__name__}: the optimizer stopped after {res.nit} iterations"
                f" with gradient norm {grad_norm:.2g} ({res.message})",
                RuntimeWarning, stacklevel=4)
        self.nll_ = problem.log_loss(res.x)
        return res.x

    _warn_one_hot = True

    def _finite_logits(self, Z, name: str = "X") -> np.ndarray:
        bad = ~np.isfinite(Z)
        if bad.any():
            i, j = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), Z.shape)
            if self.inputs == "logits":
                raise ValueError(
                    f"{name}: logit -inf (a masked class) at index [{i}, {j}];"
                    f" {type(self).__name__} needs finite logits (-inf times a weight is not a"
                    " logit); use TemperatureScaling, which keeps masked classes at 0, or"
                    " DirichletCalibration, which floors log p")
            raise ValueError(
                f"{name}: probability 0 at index [{i}, {j}] has log-probability -inf;"
                f" {type(self).__name__} needs finite logits (pass inputs='logits', or use"
                " DirichletCalibration, which floors log p)")
        return Z

    def _prepare(self, X, name: str = "X") -> np.ndarray:
        Z = super()._prepare(X, name)
        if getattr(self, "n_classes_", None):   # transform: the width first, then the values
            self._check_width(Z)
        return self._finite_logits(Z, name)


class VectorScaling(_LinearScaling):
    """Vector scaling (Guo et al., 2017): ``softmax(z * w + b)`` with per-class ``w``, ``b``.

    Fitted by minimizing the mean log loss from ``w = 1, b = 0`` (the identity map) with
    scipy's trust-region Newton-CG, analytic gradient and Hessian-vector products.  The loss
    is convex in ``(w, b)``; the family contains temperature scaling (``w = 1/T``, ``b = 0``),
    so its fitted log loss on the fit data is at most temperature scaling's (up to the
    optimizer tolerance).  Unlike temperature scaling it can change the argmax.

    Parameters
    ----------
    inputs : {"probs", "logits"}
        What ``X`` holds.  Probabilities are mapped to ``log p``; a zero probability raises
        ``ValueError`` (``-inf * w`` is not a logit), in ``fit`` and in ``transform``.

    Attributes
    ----------
    weights_ : ndarray, shape (k,)
    bias_ : ndarray, shape (k,)
        Defined up to a common constant (softmax ignores it); the fit starts from 0 and the
        optimizer never moves along that direction.
    nll_ : float
        Mean log loss on the fit data at the optimum.
    n_iter_ : int
    converged_ : bool
        The optimizer converged (gradient norm ``< 1e-8``, or ``< 1e-5`` when it stopped on
        rounding); a ``RuntimeWarning`` is issued otherwise.  When the classes are perfectly
        separable on the fit data the log loss has no minimizer: the weights then grow until
        the gradient is below the tolerance (fit log loss near 0).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(400, 3))
    >>> y = np.array([rng.choice(3, p=row) for row in softmax(Z * [2.0, 1.0, 0.5])])
    >>> vs = VectorScaling(inputs="logits").fit(Z, y)
    >>> bool(vs.weights_[0] > vs.weights_[2])
    True
    >>> vs.transform(Z).shape
    (400, 3)
    """

    def _n_parameters(self, k: int) -> int:
        return 2 * k

    def _fit(self, Z, y):
        problem = _LogLossProblem(Z, y, full=False)
        self.weights_, self.bias_ = problem.canonical(self._solve(problem))

    def _transform(self, Z):
        return softmax(Z * self.weights_ + self.bias_)


class MatrixScaling(_LinearScaling):
    """Matrix scaling (Guo et al., 2017): ``softmax(z W^T + b)``, a full ``k x k`` linear map.

    Fitted by minimizing ``mean log loss + reg * (||W - I||_F^2 + ||b||^2)`` from
    ``W = I, b = 0`` with scipy's trust-region Newton-CG, analytic gradient and
    Hessian-vector products.  The penalty shrinks towards the identity map (the uncalibrated
    model), not towards zero (the uniform prediction).  With ``reg = 0`` the family contains
    vector and temperature scaling, so its fitted log loss on the fit data is at most theirs
    (up to the optimizer tolerance).  ``k^2 + k`` parameters: prone to overfitting for many
    classes; see :class:`DirichletCalibration` for the ODIR penalty.

    ``softmax`` ignores adding one vector to every row of ``W`` and one constant to every
    entry of ``b``; the fitted ``(W, b)`` is the representative with the smallest penalty
    (for ``reg = 0``: the one the optimizer reached from the identity).

    Parameters
    ----------
    reg : float, default 0
        L2 penalty strength (``>= 0``) added to the mean log loss.
    inputs : {"probs", "logits"}
        What ``X`` holds.  Probabilities are mapped to ``log p``; a zero probability raises
        ``ValueError``.

    Attributes
    ----------
    weights_ : ndarray, shape (k, k)
        ``W``; row ``j`` gives the logit of output class ``j`` (scikit-learn's ``coef_``
        layout).
    bias_ : ndarray, shape (k,)
    nll_ : float
        Mean log loss (without the penalty) on the fit data at the optimum.
    n_iter_ : int
    converged_ : bool
        As for :class:`VectorScaling`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(400, 3))
    >>> y = np.array([rng.choice(3, p=row) for row in softmax(Z[:, [1, 0, 2]])])  # swapped
    >>> ms = MatrixScaling(inputs="logits").fit(Z, y)
    >>> ms.weights_.argmax(axis=1).tolist()
    [1, 0, 2]
    """

    def __init__(self, reg: float = 0.0, *, inputs: str = "probs"):
        super().__init__(inputs=inputs)
        self.reg = _check_penalty(reg, "reg")

    def _penalties(self, k):
        return {"off_diag": self.reg, "diag": self.reg, "bias": self.reg}

    def _n_parameters(self, k: int) -> int:
        return k * k + k if self.reg == 0 else 0

    def _problem(self, F, y) -> _LogLossProblem:
        return _LogLossProblem(F, y, full=True, **self._penalties(F.shape[1]))

    def _fit(self, F, y):
        problem = self._problem(F, y)
        self.weights_, self.bias_ = problem.canonical(self._solve(problem))

    def _transform(self, F):
        return softmax(F @ self.weights_.T + self.bias_)


class DirichletCalibration(MatrixScaling):
    r"""Dirichlet calibration with ODIR regularization (Kull et al., 2019).

    ``softmax(W log p + b)``: a linear map on log-probabilities, fitted by minimizing

    .. math::
        \frac1n \sum_i -\log \hat p_{i, y_i}
        + \frac{\lambda}{k(k-1)} \sum_{i \ne j} W_{ij}^2 + \frac{\mu}{k} \sum_j b_j^2

    (Off-Diagonal and Intercept Regularization, ODIR: the diagonal is free, so
    temperature-scaling-like maps are not penalized) from ``W = I, b = 0``, with scipy's
    trust-region Newton-CG, analytic gradient and Hessian-vector products.  The objective is
    convex.  With ``reg_lambda = reg_mu = 0`` it is :class:`MatrixScaling` on the features
    ``log p``; with ``reg_lambda`` large, ``W`` is (near) diagonal.  Kull et al. choose
    ``lambda`` and ``mu`` by cross-validation; the defaults here are only a mild
    regularization.

    Parameters
    ----------
    reg_lambda : float, default 1e-3
        ``lambda >= 0``, penalty on the off-diagonal entries of ``W``.
    reg_mu : float, default 1e-3
        ``mu >= 0``, penalty on the intercept ``b``.
    inputs : {"probs", "logits"}
        ``"probs"``: features ``log(max(p, LOG_PROB_FLOOR))`` (the floor, ``1e-300``, only
        touches zeros and subnormals, and only in this class: ``log 0 = -inf`` would make
        ``W log p`` undefined).  ``"logits"``: features ``log softmax(z)``.

    Attributes
    ----------
    weights_ : ndarray, shape (k, k)
        ``W`` (row ``j``: output class ``j``).  For ``lambda > 0`` and ``mu > 0`` the
        minimizer is unique; for ``lambda = 0`` (or ``mu = 0``) it is defined up to the
        softmax-invariant shift described in :class:`MatrixScaling`.
    bias_ : ndarray, shape (k,)
    nll_ : float
        Mean log loss (without the penalty) on the fit data at the optimum.
    n_iter_ : int
    converged_ : bool
        As for :class:`VectorScaling`.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = softmax(rng.normal(size=(400, 3)) * 2.0)
    >>> y = np.array([rng.choice(3, p=row) for row in softmax(np.log(P) / 2.0)])
    >>> dc = DirichletCalibration(reg_lambda=1e3).fit(P, y)
    >>> off = dc.weights_ - np.diag(np.diagonal(dc.weights_))
    >>> bool(np.abs(off).max() < 1e-2), bool(np.all(np.diagonal(dc.weights_) < 1.0))
    (True, True)
    """

    def __init__(self, reg_lambda: float = 1e-3, reg_mu: float = 1e-3, *,
                 inputs: str = "probs"):
        Recalibrator.__init__(self, inputs=inputs)
        self.reg_lambda = _check_penalty(reg_lambda, "reg_lambda")
        self.reg_mu = _check_penalty(reg_mu, "reg_mu")

    def _penalties(self, k):
        return {"off_diag": self.reg_lambda / (k * (k - 1)), "diag": 0.0,
                "bias": self.reg_mu / k}

    def _n_parameters(self, k: int) -> int:
        return k + (k * k - k if self.reg_lambda == 0 else 0) + (k if self.reg_mu == 0 else 0)

    def _prepare(self, X, name: str = "X") -> np.ndarray:
        if self.inputs == "logits":   # a masked class (-inf) is floored like a zero probability
            return np.maximum(log_softmax(check_logits(X, name)), np.log(LOG_PROB_FLOOR))
        return np.log(np.maximum(_probability_matrix(X, name), LOG_PROB_FLOOR))


# ----------------------------------------------------------------------------- one-vs-rest

class _OneVsRest(Recalibrator):
    """Per-class maps ``[0, 1] -> [0, 1]`` on probabilities, then row normalization."""

    _space = "probs"

    def transform_ovr(self, X) -> np.ndarray:
        """The per-class values before row normalization, shape ``(n, k)``."""
        self._check_fitted()
        P = self._prepare(X)
        self._check_width(P)
        return self._per_class(P)

    def _transform(self, P):
        return _normalize_rows(self._per_class(P))


class HistogramBinning(_OneVsRest):
    """Histogram binning (Zadrozny & Elkan, 2001), one-vs-rest as in Guo et al. (2017).

    For each class ``r``: the column ``p_r`` is cut into ``n_bins`` equal-width bins with the
    calnotes convention (edges ``j/m``, a value on an edge goes to the bin above, ``1`` to the
    last bin; :func:`calnotes.equal_width_bins`); a bin's value is the frequency of class
    ``r`` among the fit samples whose ``p_r`` falls in it.  An **empty bin** gets its midpoint
    ``(j + 1/2) / m`` (the identity map's average over the bin).  ``transform`` looks up each
    column's bin value and divides each row by its sum; a row whose values are **all zero**
    becomes uniform ``1/k``.

    The output can put probability exactly 0 on a class (the true one included), so the log
    loss can be infinite; the ECE-pitfalls paper reports NLL = inf for HB in its Table 1.  The
    argmax can change.  One of the four maps of the chapter "Trivial recalibration wins ECE".
    ``transform_ovr`` returns the per-class values before the row normalization.

    Parameters
    ----------
    n_bins : int, default 15
        Bins per class (``>= 1``; more bins than samples only leaves bins empty).  Bounded by
        the table size: ``k * n_bins <= MAX_HISTOGRAM_CELLS`` (``1e7``), checked in ``fit``
        (and ``n_bins <= 5e6`` when the object is made), so a huge count is a clear
        ``ValueError``, not a ``MemoryError``.
    inputs : {"probs", "logits"}
        ``"logits"``: binning is applied to ``softmax(z)``.

    Attributes
    ----------
    bin_values_ : ndarray, shape (k, n_bins)
        Value of bin ``j`` for class ``r`` (before row normalization).
    bin_counts_ : ndarray of int, shape (k, n_bins)
        Fit samples in each bin.
    bin_hits_ : ndarray of int, shape (k, n_bins)
        Fit samples in each bin whose label is the class.

    Examples
    --------
    >>> P = [[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.2, 0.8]]
    >>> hb = HistogramBinning(n_bins=2).fit(P, [0, 0, 1, 1])
    >>> hb.bin_values_.tolist()  # class 0: bin [0, .5) has {0.2 -> no}; [.5, 1] 2 of 3
    [[0.0, 0.6666666666666666], [0.3333333333333333, 1.0]]
    >>> hb.transform([[0.6, 0.4]]).tolist()
    [[0.6666666666666666, 0.3333333333333333]]
    """

    def __init__(self, n_bins: int = 15, *, inputs: str = "probs"):
        super().__init__(inputs=inputs)
        self.n_bins = _check_bins(n_bins)

    def _fit(self, P, y):
        n, k = P.shape
        m = self.n_bins
        if k * m > MAX_HISTOGRAM_CELLS:
            raise ValueError(
                f"n_bins: {m} bins x {k} classes = {k * m} table cells, above the limit"
                f" {MAX_HISTOGRAM_CELLS:.0e} (calnotes.recalibrate.MAX_HISTOGRAM_CELLS); use at"
                f" most {MAX_HISTOGRAM_CELLS // k} bins (more bins than samples only leaves"
                " bins empty)")
        bins = _width_bins_unchecked(P, m)                 # (n, k)
        flat = bins + m * np.arange(k)                     # class r's bins at r*m .. r*m+m-1
        counts = np.bincount(flat.ravel(), minlength=k * m).reshape(k, m)
        hits = np.bincount(flat[np.arange(n), y], minlength=k * m).reshape(k, m)
        mid = np.broadcast_to((np.arange(m) + 0.5) / m, (k, m))
        values = np.array(mid)
        np.divide(hits, counts, out=values, where=counts > 0)
        self.bin_counts_, self.bin_hits_, self.bin_values_ = counts, hits, values

    def _per_class(self, P):
        bins = _width_bins_unchecked(P, self.n_bins)
        return self.bin_values_[np.arange(P.shape[1]), bins]


class IsotonicCalibration(_OneVsRest):
    """Isotonic regression (Zadrozny & Elkan, 2002), one-vs-rest as in Guo et al. (2017).

    For each class ``r``: scikit-learn's
    ``IsotonicRegression(out_of_bounds="clip", y_min=0, y_max=1)`` fitted to
    ``(p_r, 1[y = r])``, a non-decreasing step-and-ramp map of ``p_r``; ``transform`` applies
    it per column and divides each row by its sum; a row whose values are **all zero**
    becomes uniform ``1/k`` (as scikit-learn's ``CalibratedClassifierCV`` does).

    The output can put probability exactly 0 on a class, so the log loss can be infinite
    (NLL = inf for IR in Table 1 of the ECE-pitfalls paper).  The argmax can change.  One of
    the four maps of the chapter "Trivial recalibration wins ECE".  ``transform_ovr``
    returns the per-class values before the row normalization.  Needs scikit-learn
    (``pip install calnotes[data]``), imported when ``fit`` is called.

    Parameters
    ----------
    inputs : {"probs", "logits"}
        ``"logits"``: the regressions are fitted on ``softmax(z)``.

    Attributes
    ----------
    isotonic_ : list of sklearn.isotonic.IsotonicRegression
        The fitted per-class regressions.

    Examples
    --------
    >>> P = [[0.9, 0.1], [0.8, 0.2], [0.7, 0.3], [0.2, 0.8]]
    >>> ir = IsotonicCalibration().fit(P, [0, 1, 0, 1])
    >>> ir.transform_ovr(P)[:, 0].tolist()  # class 0 sorted by p: 0, 1, 0, 1 -> 0, .5, .5, 1
    [1.0, 0.5, 0.5, 0.0]
    """

    def _fit(self, P, y):
        try:
            from sklearn.isotonic import IsotonicRegression
        except ImportError as exc:  # pragma: no cover - scikit-learn is a test dependency
            raise ImportError(
                "IsotonicCalibration needs scikit-learn; install the data extra:"
                " pip install calnotes[data]") from exc
        self.isotonic_ = [
            IsotonicRegression(out_of_bounds="clip", y_min=0.0, y_max=1.0)
            .fit(P[:, r], (y == r).astype(np.float64))
            for r in range(P.shape[1])]

    def _per_class(self, P):
        return np.column_stack([iso.predict(P[:, r]) for r, iso in enumerate(self.isotonic_)])


# ----------------------------------------------------------------------------- top-label maps

class _TopLabel(Recalibrator):
    """Maps that use only the predicted class: the first maximum of each row of ``X``."""

    _space = "scores"

    def _fit(self, S, y):
        k = S.shape[1]
        self.accuracy_ = float(np.mean(_first_argmax(S) == y))
        rest = (1.0 - self.accuracy_) / (k - 1)
        self.target_ = np.array([self.accuracy_] + [rest] * (k - 1))
        # ACC on the predicted class is the (first) maximum of the output iff ACC > rest.
        self.accuracy_preserving_ = bool(self.accuracy_ > rest)

    def _replace(self, S):
        out = np.full(S.shape, self.target_[1])
        out[np.arange(S.shape[0]), _first_argmax(S)] = self.accuracy_
        return out

    _transform = _replace


class MeanReplacement(_TopLabel):
    """Mean replacement recalibration, MRR (ECE-pitfalls paper, Sec. 3).

    The confidence is replaced by a constant, the model's accuracy ``h`` on the fit split
    (fraction of samples whose first argmax equals the label); the output puts ``h`` on the
    predicted class (first maximum of the row of ``X``) and ``(1 - h)/(k - 1)`` on every other
    class.  On the fit split the top-label ECE is therefore 0 (one bin, confidence = accuracy),
    while log loss and Brier score get worse: the paper's demonstration that ECE and accuracy
    alone cannot detect a trivial recalibration (chapter "Trivial recalibration wins ECE").

    The argmax (hence the accuracy, on any data) is unchanged iff ``h > 1/k``, i.e.
    ``h > (1 - h)/(k - 1)``; for ``h <= 1/k`` the output's first maximum is another class.
    Same output as ``AccuracyPreservingTransform(kind="sorted")``.

    Parameters
    ----------
    inputs : {"probs", "logits"}
        Only the row argmax of ``X`` is used.

    Attributes
    ----------
    accuracy_ : float
        ``h``.
    target_ : ndarray, shape (k,)
        ``(h, (1-h)/(k-1), ..., (1-h)/(k-1))``.
    accuracy_preserving_ : bool
        ``h > 1/k``: the argmax of every output row is the input's.

    Examples
    --------
    >>> P = [[0.9, 0.1, 0.0], [0.2, 0.7, 0.1], [0.5, 0.1, 0.4], [0.1, 0.1, 0.8]]
    >>> mrr = MeanReplacement().fit(P, [0, 1, 2, 2])   # 3 of 4 right
    >>> mrr.accuracy_
    0.75
    >>> mrr.transform([[0.3, 0.3, 0.4]]).tolist()
    [[0.125, 0.125, 0.75]]
    """


class AccuracyPreservingTransform(_TopLabel):
    """The accuracy-preserving recalibration ``t^f`` of the proper-calibration-errors paper.

    ``kind="sorted"`` (Prop D.2)
        ``c_f = (ACC, (1-ACC)/(k-1), ..., (1-ACC)/(k-1))`` and ``t^f(p) = sigma_p^{-1}(c_f)``:
        the entries of ``c_f`` placed in the order of the entries of ``p``, i.e. ``ACC`` on
        the largest entry of ``p`` (the first, among ties) and ``(1-ACC)/(k-1)`` elsewhere.
        Since all entries but the top one are equal, this is exactly the output of
        :class:`MeanReplacement`.  TCE, ECE, KS and MMCE of ``t^f o f`` are 0 and the accuracy
        is unchanged (if ``ACC > 1/k``), yet ``t^f o f`` is not calibrated in general.
    ``kind="conditional"`` (App. E.1.2, eq. (42))
        ``t^f(p) = P(Y | argmax f(X) = argmax p)``, estimated by ``P_a``, the mean one-hot
        label over the fit samples ``I_a`` whose predicted top label is ``a``.  ``t^f o f`` is
        canonically calibrated (exactly so on the fit data).  It preserves the accuracy iff
        for every predicted label ``a`` the most frequent true label in ``I_a`` is ``a``
        (the first most frequent, as ``argmax`` breaks ties); attribute
        ``accuracy_preserving_`` says whether this held on the fit data.  A top label never
        predicted on the fit data gets the marginal label distribution of the fit data
        (listed in ``fallback_classes_``; its argmax need not be that label).

    The binary scalar version (App. E.1.1) is ``kind="conditional"`` on ``[1 - p, p]`` with
    the threshold ``p >= 0.5`` replaced by the first-argmax rule (``p = 0.5`` goes to class 0).

    Parameters
    ----------
    kind : {"sorted", "conditional"}, default "sorted"
    inputs : {"probs", "logits"}
        Only the row argmax of ``X`` is used.

    Attributes
    ----------
    accuracy_ : float
        Accuracy of the model (first argmax) on the fit data.
    accuracy_preserving_ : bool
        ``"sorted"``: ``ACC > 1/k``.  ``"conditional"``: ``argmax P_a = a`` for every label
        ``a`` predicted on the fit data.
    target_ : ndarray, shape (k,)
        ``"sorted"`` only: ``c_f``.
    class_distributions_ : ndarray, shape (k, k)
        ``"conditional"`` only: row ``a`` is ``P_a`` (or the fallback).
    counts_ : ndarray of int, shape (k,)
        ``"conditional"`` only: ``|I_a|``.
    fallback_classes_ : ndarray of int
        ``"conditional"`` only: the labels ``a`` with ``|I_a| = 0``.

    Examples
    --------
    >>> P = [[0.9, 0.1], [0.8, 0.2], [0.6, 0.4], [0.3, 0.7]]
    >>> t = AccuracyPreservingTransform(kind="conditional").fit(P, [0, 0, 1, 1])
    >>> t.class_distributions_.tolist()   # predicted 0: labels 0, 0, 1; predicted 1: label 1
    [[0.6666666666666666, 0.3333333333333333], [0.0, 1.0]]
    >>> t.accuracy_preserving_
    True
    >>> AccuracyPreservingTransform().fit(P, [0, 0, 1, 1]).transform([[0.45, 0.55]]).tolist()
    [[0.25, 0.75]]
    """

    _KINDS = ("sorted", "conditional")

    def __init__(self, kind: str = "sorted", *, inputs: str = "probs"):
        super().__init__(inputs=inputs)
        if kind not in self._KINDS:
            raise ValueError(f"kind: expected one of {self._KINDS}, got {kind!r}")
        self.kind = kind

    def _fit(self, S, y):
        if self.kind == "sorted":
            return super()._fit(S, y)
        k = S.shape[1]
        pred = _first_argmax(S)
        self.accuracy_ = float(np.mean(pred == y))
        joint = np.bincount(pred * k + y, minlength=k * k).reshape(k, k)
        counts = joint.sum(axis=1)
        marginal = np.bincount(y, minlength=k) / y.shape[0]
        table = np.empty((k, k))
        table[:] = marginal
        seen = counts > 0
        table[seen] = joint[seen] / counts[seen, None]
        self.counts_ = counts
        self.class_distributions_ = table
        self.fallback_classes_ = np.flatnonzero(~seen)
        self.accuracy_preserving_ = bool(np.all(table[seen].argmax(axis=1)
                                                == np.flatnonzero(seen)))

    def _transform(self, S):
        if self.kind == "sorted":
            return self._replace(S)
        return self.class_distributions_[_first_argmax(S)].copy()


#: The recalibrators of the recalibration paper's Table 1 (Sec. 3), by their table names.
TABLE1_METHODS = {
    "TS": TemperatureScaling,
    "HB": HistogramBinning,
    "IR": IsotonicCalibration,
    "MRR": MeanReplacement,
}


def compare_recalibrators(X_cal, y_cal, X_test, y_test, *, inputs: str = "probs",
                          methods=None, n_bins: int = 15) -> list[dict]:
    """Fit each recalibrator on the calibration split and score it on the test split.

    The columns of Table 1 of the recalibration paper (Sec. 3): test accuracy, top-label ECE
    with ``n_bins`` equal-width bins, ACE (the same with equal-mass bins, eq. (1) of the
    truthfulness paper: ties are split by position, see :mod:`calnotes.core.binning`), the
    class-wise ECE, log loss (NLL; ``inf`` when a label gets probability 0) and Brier score.

    Parameters
    ----------
    X_cal, X_test : array_like, shape (n, k)
        Predictions (probabilities or, with ``inputs="logits"``, logits) of one model.
    y_cal, y_test : array_like of int
    inputs : {"probs", "logits"}
    methods : dict, optional
        ``name -> Recalibrator`` (instances or classes); default :data:`TABLE1_METHODS`.  The
        unmodified model is always the first row, ``"baseline"``.
    n_bins : int, default 15
        As in the paper (and Guo et al., 2017).

    Returns
    -------
    list of dict
        One row per method: ``method``, ``accuracy``, ``ece``, ``ace``, ``ece_classwise``,
        ``nll``, ``brier``, and the fitted ``model`` (``None`` for the baseline).

    Raises
    ------
    ValueError
        Invalid inputs; the message names the argument (``X_cal``, ``y_cal``, ``X_test``,
        ``y_test``).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> Z = rng.normal(size=(600, 3)) * 3
    >>> y = (softmax(Z / 3).cumsum(axis=1) > rng.random((600, 1))).argmax(axis=1)
    >>> rows = compare_recalibrators(Z[:300], y[:300], Z[300:], y[300:], inputs="logits")
    >>> [r["method"] for r in rows]
    ['baseline', 'TS', 'HB', 'IR', 'MRR']
    >>> rows[1]["accuracy"] == rows[0]["accuracy"] == rows[4]["accuracy"]  # argmax kept
    True
    """
    from .core.measures import binned_ece, classwise, confidence
    from .core.scores import brier_loss, log_loss

    methods = TABLE1_METHODS if methods is None else dict(methods)
    Xc = as_probabilities(X_cal, inputs, "X_cal")
    Xt = as_probabilities(X_test, inputs, "X_test")
    if Xt.shape[1] != Xc.shape[1]:
        raise ValueError(f"X_test: has {Xt.shape[1]} columns but X_cal has {Xc.shape[1]}")
    check_labels(y_cal, n_classes=Xc.shape[1], n_samples=Xc.shape[0], name="y_cal")
    y_test = check_labels(y_test, n_classes=Xt.shape[1], n_samples=Xt.shape[0], name="y_test")
    rows = []
    for name, method in [("baseline", None)] + list(methods.items()):
        if method is None:
            P, model = Xt, None
        else:
            model = method(inputs=inputs) if isinstance(method, type) else method
            P = model.fit(X_cal, y_cal).transform(X_test)
        with np.errstate(divide="ignore"):
            nll = float(log_loss(y_test, P))
        rows.append({
            "method": name,
            "accuracy": float(np.mean(_first_argmax(P) == np.asarray(y_test))),
            "ece": float(confidence(binned_ece, y_test, P, n_bins=n_bins)),
            "ace": float(confidence(binned_ece, y_test, P, n_bins=n_bins, binning="mass")),
            "ece_classwise": float(classwise(binned_ece, y_test, P, n_bins=n_bins)),
            "nll": nll,
            "brier": float(brier_loss(y_test, P)),
            "model": model,
        })
    return rows
