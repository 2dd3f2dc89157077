"""Unbiased estimators of the squared kernel calibration error (SKCE) from samples.

The SKCE of Widmann, Lindsten & Zachariah (2019) is, for independent copies ``X, X'``,

    SKCE(f) = E[(f(X) - P_{Y|f(X)})^T k(f(X), f(X')) (f(X') - P_{Y|f(X')})],

with the matrix-valued kernel ``k(p, q) = kappa(p, q) I_k`` (the population value on a finite
distribution is :func:`calnotes.theory.population.skce`).  003 App. F (eq. (52)) writes it as the
calibration term of the **U-score** ``S(P_1, P_2, y_1, y_2) = (P_1 - e_{y_1})^T k(P_1, P_2)
(P_2 - e_{y_2})``: for two independent samples ``E[S | f(X_1), f(X_2)]`` is the summand above, so
the U-statistic

    U = (n choose 2)^{-1} sum_{i < j} (p_i - e_{y_i})^T k(p_i, p_j) (p_j - e_{y_j})

is an unbiased estimator of the SKCE (Hoeffding 1948), and the block ("linear") version averages
the ``n // 2`` disjoint pairs ``(2i, 2i + 1)`` -- unbiased too, with ``O(n)`` work and a larger
variance.  With ``kappa(p, q) I_k`` the summand is ``kappa(p_i, p_j) r_i . r_j`` for the residuals
``r_i = p_i - e_{y_i}``; the quadratic estimator is accumulated in row blocks of at most
:data:`BLOCK_ENTRIES` kernel values, never an ``n x n`` matrix.

Kernels: ``"laplacian"``, ``kappa = exp(-||p - q||_2 / bandwidth)`` (Widmann et al.'s choice, a
characteristic kernel: SKCE = 0 iff calibrated), and ``"gaussian"``,
``exp(-||p - q||^2 / (2 bandwidth^2))`` -- the conventions of :func:`calnotes.theory.population.skce`.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._validate import check_pair_matrix

__all__ = ["skce_unbiased", "BLOCK_ENTRIES"]

#: Kernel values held at a time by the quadratic estimator (8 MB of float64).
BLOCK_ENTRIES = 2 ** 20


def _kappa(A: np.ndarray, B: np.ndarray, kernel: str, bandwidth: float) -> np.ndarray:
    sq = (A * A).sum(axis=1)[:, None] + (B * B).sum(axis=1)[None, :] - 2.0 * A @ B.T
    sq = np.maximum(sq, 0.0)
    if kernel == "laplacian":
        return np.exp(-np.sqrt(sq) / bandwidth)
    return np.exp(-sq / (2.0 * bandwidth * bandwidth))


def skce_unbiased(y_true, y_prob, *, kernel: str = "laplacian", bandwidth: float = 1.0,
                  estimator: str = "quadratic") -> float:
    """Unbiased estimate of the SKCE (003 App. F eq. (55); Widmann et al. 2019).

    Parameters
    ----------
    y_true : array_like, shape (n,)
        Labels ``0 .. k-1``.
    y_prob : array_like, shape (n, k) or (n,)
        Predicted probabilities (``(n,)``: binary, ``P(y = 1)``).
    kernel : {"laplacian", "gaussian"}
        The scalar kernel ``kappa`` of ``k = kappa I_k`` (see the module docstring).
    bandwidth : float, default 1.0
    estimator : {"quadratic", "linear"}
        The U-statistic over all pairs (``O(n^2)`` time, ``O(n)`` memory) or the block
        estimator over disjoint consecutive pairs (``O(n)``; needs ``n >= 2``).

    Returns
    -------
    float
        Can be negative (an unbiased estimate of a non-negative quantity).

    Examples
    --------
    A calibrated model: the estimate is near zero (it is unbiased for 0):

    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(3), size=2000)
    >>> y = (P.cumsum(axis=1) > rng.random((2000, 1))).argmax(axis=1)
    >>> abs(skce_unbiased(y, P)) < 1e-3
    True
    >>> Pbad = 0.5 * P + 0.5 * np.eye(3)[P.argmax(axis=1)]     # over-confident
    >>> skce_unbiased(y, Pbad) > 10 * abs(skce_unbiased(y, P))
    True
    """
    y, P = check_pair_matrix(y_true, y_prob)
    n, k = P.shape
    if kernel not in ("laplacian", "gaussian"):
        raise ValueError(f"kernel: expected 'laplacian' or 'gaussian', got {kernel!r}")
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real) \
            or not math.isfinite(bandwidth) or bandwidth <= 0:
        raise ValueError(f"bandwidth: expected a positive number, got {bandwidth!r}")
    if estimator not in ("quadratic", "linear"):
        raise ValueError(f"estimator: expected 'quadratic' or 'linear', got {estimator!r}")
    if n < 2:
        raise ValueError(f"y_prob: the SKCE estimators need at least 2 samples, got {n}")
    R = P.copy()
    R[np.arange(n), y] -= 1.0                       # residuals p_i - e_{y_i}
    if estimator == "linear":
        m = n // 2
        a, b = slice(0, 2 * m, 2), slice(1, 2 * m, 2)
        diff = P[a] - P[b]
        sq = (diff * diff).sum(axis=1)
        kap = np.exp(-np.sqrt(sq) / bandwidth) if kernel == "laplacian" else \
            np.exp(-sq / (2.0 * bandwidth ** 2))
        return float(np.mean(kap * (R[a] * R[b]).sum(axis=1)))
    total = 0.0
    rows = max(1, BLOCK_ENTRIES // n)
    for start in range(0, n - 1, rows):
        stop = min(start + rows, n)
        # pairs i < j with i in [start, stop): columns j in (i, n)
        H = _kappa(P[start:stop], P[start:], kernel, float(bandwidth)) * (R[start:stop]
                                                                          @ R[start:].T)
        total += float(np.triu(H, k=1).sum())
    return total / (n * (n - 1) / 2.0)
