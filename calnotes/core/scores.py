"""Proper losses, generalized entropies, divergences and the calibration decomposition.

Orientation: **losses** (smaller is better).  A proper loss ``l(p, y)`` is described by its
*loss matrix*: for predictions ``P`` of shape ``(n, k)`` the matrix ``L[i, y] = l(P[i], y)``.
Everything else follows from it:

* score on data: ``mean_i L[i, y_i]``;
* expected loss of predicting ``p`` when the truth is ``q``: ``sum_y q_y L(p)_y``;
* generalized entropy ``H(q) = expected loss of predicting q under q``;
* divergence ``d(q, p) = E_q l(p, Y) - H(q) >= 0`` (zero at ``p = q`` by properness).

For the log loss ``d`` is the KL divergence, for the Brier loss the squared Euclidean
distance -- both Bregman divergences of the negative entropy (:func:`bregman_divergence`).

The decomposition (chapter *Proper scores and Bregman divergences*; Lemma 4.1 of the
proper-calibration-errors paper, Lemma 4.1 of the reassessing paper)::

    E[l(f(X), Y)] = H(pi) - E[d(C, pi)] + E[d(C, f(X))]
                    entropy  sharpness     calibration

with ``pi`` the label marginal and ``C = P(Y | f(X))``; :func:`score_decomposition` computes
each term exactly for a predictor that takes finitely many values.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np

from .._validate import as_array, check_labels, check_logits, check_probabilities

__all__ = [
    "ProperLoss",
    "LOG",
    "BRIER",
    "SPHERICAL",
    "ZERO_ONE",
    "PROPER_LOSSES",
    "get_loss",
    "as_matrix",
    "log_loss",
    "log_loss_from_logits",
    "brier_loss",
    "spherical_loss",
    "zero_one_loss",
    "expected_loss",
    "entropy",
    "divergence",
    "BregmanGenerator",
    "NEG_ENTROPY",
    "SQUARED_NORM",
    "bregman_divergence",
    "pool_by_prediction",
    "score_decomposition",
]


def as_matrix(y_prob) -> np.ndarray:
    """``(n,)`` binary probabilities as ``(n, 2)`` rows ``[1 - p, p]``; ``(n, k)`` unchanged.

    Examples
    --------
    >>> as_matrix([0.25]).tolist()
    [[0.75, 0.25]]
    """
    P = check_probabilities(y_prob)
    return np.column_stack([1.0 - P, P]) if P.ndim == 1 else P


def _log_matrix(P):
    with np.errstate(divide="ignore"):
        return -np.log(P)


def _row_squares(P):
    """``||p||^2`` of every row, summed in the same order whatever ``P``'s memory layout
    (``np.einsum`` sums a column-major array's rows in another order: a DataFrame's values
    are often column-major, and its losses must be the array's bit for bit)."""
    Q = np.ascontiguousarray(P)
    return np.einsum("ij,ij->i", Q, Q)


def _brier_matrix(P):
    # ||p - e_y||^2 = ||p||^2 - 2 p_y + 1
    return _row_squares(P)[:, None] - 2.0 * P + 1.0


def _spherical_matrix(P):
    # ||p||_2 from the same row sums of squares as the Brier loss (np.linalg.norm would build
    # an (n, k) temporary of squares: 1 s of 5 at 50,000 x 1,000 in calnotes.evaluate)
    return 1.0 - P / np.sqrt(_row_squares(P))[:, None]


def _zero_one_matrix(P):
    L = np.ones_like(P)
    L[np.arange(P.shape[0]), P.argmax(axis=1)] = 0.0
    return L


@dataclass(frozen=True)
class ProperLoss:
    """A proper loss given by its loss matrix.

    Attributes
    ----------
    name : str
    matrix : callable
        ``P (n, k) -> L (n, k)`` with ``L[i, y] = l(P[i], y)``.
    strict : bool
        Strictly proper (the truth is the unique minimiser)?
    """

    name: str
    matrix: Callable[[np.ndarray], np.ndarray]
    strict: bool

    def __call__(self, y_true, y_prob, *, per_sample: bool = False):
        """Mean loss on data (or per-sample losses)."""
        P = as_matrix(y_prob)
        y = check_labels(y_true, n_classes=P.shape[1], n_samples=P.shape[0])
        values = self.matrix(P)[np.arange(P.shape[0]), y]
        return values if per_sample else float(values.mean())


LOG = ProperLoss("log", _log_matrix, strict=True)
BRIER = ProperLoss("brier", _brier_matrix, strict=True)
SPHERICAL = ProperLoss("spherical", _spherical_matrix, strict=True)
#: 0-1 loss of the argmax decision (smallest index among ties): proper, not strictly.
ZERO_ONE = ProperLoss("zero_one", _zero_one_matrix, strict=False)
PROPER_LOSSES = {loss.name: loss for loss in (LOG, BRIER, SPHERICAL, ZERO_ONE)}


def get_loss(loss) -> ProperLoss:
    """A :class:`ProperLoss` from itself or its name (``"log"``, ``"brier"``, ...).

    Examples
    --------
    >>> get_loss("brier").name
    'brier'
    """
    if isinstance(loss, ProperLoss):
        return loss
    try:
        return PROPER_LOSSES[loss]
    except (KeyError, TypeError):
        raise ValueError(
            f"loss: expected a ProperLoss or one of {sorted(PROPER_LOSSES)}, got {loss!r}"
        ) from None


def log_loss(y_true, y_prob, *, per_sample: bool = False):
    """Log loss ``-log p_y`` (``inf`` where ``p_y = 0``).

    Examples
    --------
    >>> round(log_loss([1], [0.5]), 6)
    0.693147
    """
    return LOG(y_true, y_prob, per_sample=per_sample)


def log_loss_from_logits(y_true, logits, *, per_sample: bool = False):
    r"""Log loss of ``softmax(z)`` computed from the logits: ``logsumexp(z) - z_y``.

    Equal to ``log_loss(y_true, softmax(logits))`` in exact arithmetic, but stable: the
    log-sum-exp is taken after subtracting each row's maximum, so a logit gap of 800 gives
    a loss of 800 where ``softmax`` underflows to probability 0 and :func:`log_loss` gives
    ``inf``.  NumPy only.

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
        Labels in ``0..k-1``.
    logits : array_like, shape (n, k)
        Real logits, ``k >= 2``.  ``-inf`` marks a masked class (probability 0); every row
        needs at least one finite logit.  ``+inf`` and NaN are refused.
    per_sample : bool, default False
        Return the ``n`` per-sample losses instead of their mean.

    Returns
    -------
    float or numpy.ndarray
        ``inf`` only where the label's logit is ``-inf`` (the label has probability 0), or
        where the loss exceeds the float64 range (about ``1.8e308``).

    Raises
    ------
    ValueError
        Wrong shape, ``k < 2``, empty input, NaN or ``+inf``, a row of ``-inf`` only, or
        labels out of range.

    Examples
    --------
    >>> log_loss_from_logits([0], [[0.0, 800.0]])      # softmax gives p_y = 0 here
    800.0
    >>> round(log_loss_from_logits([1], [[0.0, 0.0]]), 6)
    0.693147
    >>> log_loss_from_logits([1, 0], [[0.0, -np.inf], [0.0, -np.inf]], per_sample=True).tolist()
    [inf, 0.0]
    """
    Z = check_logits(logits, name="logits")
    top = Z.max(axis=1)
    y = check_labels(y_true, n_classes=Z.shape[1], n_samples=Z.shape[0])
    rows = np.arange(Z.shape[0])
    with np.errstate(over="ignore"):   # z - max below -1.8e308 is -inf: exp gives 0, exactly
        shifted = Z - top[:, None]
        # the sum is >= 1 (the maximum contributes exp(0)), so its log is finite and >= 0
        losses = np.log(np.exp(shifted).sum(axis=1)) - shifted[rows, y]
    return losses if per_sample else float(losses.mean())


def brier_loss(y_true, y_prob, *, per_sample: bool = False):
    """Multi-class Brier loss ``||p - e_y||^2`` (twice the binary ``(p - y)^2`` for ``k = 2``).

    Examples
    --------
    >>> brier_loss([1], [0.75])
    0.125
    """
    return BRIER(y_true, y_prob, per_sample=per_sample)


def spherical_loss(y_true, y_prob, *, per_sample: bool = False):
    """Spherical loss ``1 - p_y / ||p||_2``.

    Examples
    --------
    >>> spherical_loss([0], [[1.0, 0.0]])
    0.0
    """
    return SPHERICAL(y_true, y_prob, per_sample=per_sample)


def zero_one_loss(y_true, y_prob, *, per_sample: bool = False):
    """0-1 loss of the argmax decision (ties: smallest class index).

    Examples
    --------
    >>> zero_one_loss([0, 1], [[0.5, 0.5], [0.5, 0.5]])
    0.5
    """
    return ZERO_ONE(y_true, y_prob, per_sample=per_sample)


def _losses_at_labels(y: np.ndarray, P: np.ndarray) -> dict:
    """Per-sample log, Brier, spherical and 0-1 losses of *validated* ``(y, P)`` (labels in
    range, ``P`` of shape ``(n, k)``), without validating again and without building the
    ``(n, k)`` loss matrices: each is the entry ``L[i, y_i]`` of :class:`ProperLoss`'s matrix,
    computed by the same expression, so the numbers are those of :func:`log_loss`,
    :func:`brier_loss`, :func:`spherical_loss` and :func:`zero_one_loss`.  For
    :func:`calnotes.evaluate`, which validates its inputs once.

    Examples
    --------
    >>> P, y = np.array([[0.5, 0.5], [0.9, 0.1]]), np.array([1, 1])
    >>> losses = _losses_at_labels(y, P)
    >>> [float(losses[name].mean()) == f(y, P) for name, f in
    ...  [("log", log_loss), ("brier", brier_loss), ("spherical", spherical_loss),
    ...   ("zero_one", zero_one_loss)]]
    [True, True, True, True]
    """
    from .._engine.sorted_columns import parallel_ranges

    n = P.shape[0]
    out = {name: np.empty(n) for name in ("log", "brier", "spherical", "zero_one")}

    def run(a, b):              # row blocks on the worker threads: each row on its own
        Pb, yb = P[a:b], y[a:b]
        p_y = Pb[np.arange(b - a), yb]
        with np.errstate(divide="ignore"):
            out["log"][a:b] = -np.log(p_y)
        sq = _row_squares(Pb)
        out["brier"][a:b] = sq - 2.0 * p_y + 1.0
        out["spherical"][a:b] = 1.0 - p_y / np.sqrt(sq)
        out["zero_one"][a:b] = Pb.argmax(axis=1) != yb

    parallel_ranges(run, n, cost=P.shape[1])
    return out


def _log_loss_from_logits_unchecked(y: np.ndarray, Z: np.ndarray) -> np.ndarray:
    """Per-sample :func:`log_loss_from_logits` of validated labels and logits (same
    arithmetic, no validation)."""
    top = Z.max(axis=1)
    rows = np.arange(Z.shape[0])
    with np.errstate(over="ignore"):
        shifted = Z - top[:, None]
        return np.log(np.exp(shifted).sum(axis=1)) - shifted[rows, y]


def _two(q, p):
    Q, P = as_matrix(q), as_matrix(p)
    if Q.shape != P.shape:
        raise ValueError(f"q and p: shapes differ, {Q.shape} vs {P.shape}")
    return Q, P


def expected_loss(q, p, loss="log") -> np.ndarray:
    r"""``E_{Y ~ q}[l(p, Y)] = sum_y q_y l(p, y)`` row by row.

    Terms with ``q_y = 0`` contribute zero even where ``l(p, y) = inf``.

    Examples
    --------
    >>> expected_loss([[0.5, 0.5]], [[0.5, 0.5]], "brier").tolist()
    [0.5]
    """
    Q, P = _two(q, p)
    L = get_loss(loss).matrix(P)
    with np.errstate(invalid="ignore"):
        terms = np.where(Q > 0, Q * L, 0.0)
    return terms.sum(axis=1)


def entropy(q, loss="log") -> np.ndarray:
    """Generalized entropy ``H(q) = E_{Y~q} l(q, Y)`` row by row (Shannon entropy for log).

    Examples
    --------
    >>> round(float(entropy([[0.5, 0.5]], "log")[0]), 6)
    0.693147
    """
    Q = as_matrix(q)
    return expected_loss(Q, Q, loss)


def divergence(q, p, loss="log") -> np.ndarray:
    """Divergence ``d(q, p) = E_q l(p, Y) - H(q)`` of a proper loss (KL for log).

    Examples
    --------
    >>> divergence([[0.5, 0.5]], [[0.75, 0.25]], "brier").tolist()
    [0.125]
    """
    return expected_loss(q, p, loss) - entropy(q, loss)


@dataclass(frozen=True)
class BregmanGenerator:
    """A strictly convex, differentiable ``phi`` on the simplex and its gradient.

    Attributes
    ----------
    name : str
    phi : callable ``(n, k) -> (n,)``
    grad : callable ``(n, k) -> (n, k)``
    """

    name: str
    phi: Callable[[np.ndarray], np.ndarray]
    grad: Callable[[np.ndarray], np.ndarray]


def _xlogx(X):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(X > 0, X * np.log(X), 0.0)


NEG_ENTROPY = BregmanGenerator(
    "neg_entropy", lambda X: _xlogx(X).sum(axis=1), lambda X: np.log(X) + 1.0
)
SQUARED_NORM = BregmanGenerator(
    "squared_norm", lambda X: np.einsum("ij,ij->i", X, X), lambda X: 2.0 * X
)


def bregman_divergence(q, p, generator: BregmanGenerator = SQUARED_NORM) -> np.ndarray:
    r"""Bregman divergence ``phi(q) - phi(p) - <grad phi(p), q - p>`` row by row (eq. 4.1).

    With :data:`NEG_ENTROPY` it is the KL divergence, with :data:`SQUARED_NORM` the
    squared Euclidean distance.  ``p`` must lie in the domain of the gradient (strictly
    positive for the negative entropy).

    Examples
    --------
    >>> bregman_divergence([[0.5, 0.5]], [[0.75, 0.25]]).tolist()
    [0.125]
    """
    Q, P = _two(q, p)
    with np.errstate(divide="ignore", invalid="ignore"):
        inner = np.where(Q - P != 0, generator.grad(P) * (Q - P), 0.0).sum(axis=1)
    return generator.phi(Q) - generator.phi(P) - inner


def _check_weights(weights) -> np.ndarray:
    w = np.asarray(as_array(weights, "weights"), dtype=np.float64)
    if w.ndim != 1 or w.size == 0:
        raise ValueError(f"weights: expected a non-empty 1-d array, got shape {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-12:
        raise ValueError("weights: expected finite non-negative weights summing to one")
    return w


def pool_by_prediction(weights, y_prob, true_prob):
    """Pool the atoms of a finite population that share a prediction.

    Parameters
    ----------
    weights : array_like, shape (s,)
        Probability of each atom (non-negative, summing to one).
    y_prob : array_like, shape (s, k) or (s,)
        The predictor's output on each atom.
    true_prob : array_like, same shape
        ``P(Y | atom)``.

    Returns
    -------
    values : ndarray, shape (v, k)
        The distinct predictions (sorted).
    mass : ndarray, shape (v,)
        ``P(f(X) = values[j])``.
    conditional : ndarray, shape (v, k)
        ``C_j = P(Y | f(X) = values[j])``: the calibrated version of the predictor (a row of
        zeros where ``mass[j] == 0``: atoms of weight zero define no conditional).
    index : ndarray of int, shape (s,)
        The value of each atom: ``values[index]`` is the prediction and
        ``conditional[index]`` the calibrated prediction, atom by atom.

    Examples
    --------
    >>> values, mass, C, index = pool_by_prediction([0.5, 0.5], [0.8, 0.8], [0.9, 0.5])
    >>> mass.tolist(), np.round(C[:, 1], 12).tolist()
    ([1.0], [0.7])
    """
    w = _check_weights(weights)
    F, T = _two(y_prob, true_prob)
    if F.shape[0] != w.size:
        raise ValueError(f"y_prob: has {F.shape[0]} rows but weights has {w.size} entries")
    values, group = np.unique(F, axis=0, return_inverse=True)
    group = group.ravel()
    mass = np.bincount(group, weights=w, minlength=len(values))
    conditional = np.zeros_like(values)
    np.add.at(conditional, group, w[:, None] * T)
    conditional /= np.where(mass > 0, mass, 1.0)[:, None]
    return values, mass, conditional, group


def score_decomposition(weights, y_prob, true_prob, loss="log") -> dict:
    r"""Exact entropy - sharpness + calibration decomposition of a finite-valued predictor.

    The population is a finite mixture: with probability ``weights[i]`` the predictor
    outputs ``y_prob[i]`` and the label is drawn from ``true_prob[i]``.  Rows with equal
    predictions are pooled, so ``C = P(Y | f(X))`` is the weighted mean of their truths.

    Parameters
    ----------
    weights : array_like, shape (s,)
        Non-negative, summing to one.
    y_prob : array_like, shape (s, k) or (s,)
        The predictor's outputs on each atom.
    true_prob : array_like, same shape
        ``P(Y | X = atom)``.
    loss : str or ProperLoss

    Returns
    -------
    dict
        ``score`` (``E l(f(X), Y)``), ``entropy`` (``H(pi)``), ``sharpness``
        (``E d(C, pi)``), ``calibration`` (``E d(C, f(X))``); ``score = entropy - sharpness
        + calibration`` holds exactly (up to rounding).

    Notes
    -----
    Lemma 4.1 of the proper-calibration-errors paper; chapter *Proper scores and Bregman
    divergences*, claim ``003.lemma4.1``.

    Examples
    --------
    >>> d = score_decomposition([0.5, 0.5], [0.8, 0.8], [0.9, 0.5], "brier")
    >>> round(d["entropy"] - d["sharpness"] + d["calibration"] - d["score"], 12)
    0.0
    """
    w = _check_weights(weights)
    F, T = _two(y_prob, true_prob)
    values, mass, C, _ = pool_by_prediction(w, F, T)
    values, mass, C = values[mass > 0], mass[mass > 0], C[mass > 0]  # no C without mass
    pi = (w[:, None] * T).sum(axis=0, keepdims=True)
    score = float(w @ expected_loss(T, F, loss))
    return {
        "score": score,
        "entropy": float(entropy(pi, loss)[0]),
        "sharpness": float(mass @ divergence(C, np.repeat(pi, len(C), axis=0), loss)),
        "calibration": float(mass @ divergence(C, values, loss)),
    }
