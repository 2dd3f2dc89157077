"""Rank predictors by losses and calibration measures; find dominance chains; count agreement.

The truthfulness paper's Sec. 5 compares checkpoints of a network: checkpoint A *dominates* B
when **every** proper loss of A is smaller (footnote 4: log, Brier, spherical and 0-1 losses);
this is a partial order, and the longest chain in it is a set of predictors that every loss ranks
the same way.  A calibration measure *preserves* the chain when it ranks the chain in the same
order.  Thm 4.1 says truthful measures do so in expectation for calibrated predictors; this
module counts, on real predictions, how many pairs of a chain each measure orders correctly.

Chapter "Rankings that survive the bin count" (``book/practice/rankings``).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..core.measures import binned_ece, classwise, confidence, l1_qece, l2_qece
from ..core.scores import brier_loss, log_loss, spherical_loss, zero_one_loss

__all__ = ["LOSSES", "MEASURES", "loss_table", "measure_table", "dominance_matrix",
           "longest_dominance_chain", "ChainAgreement", "chain_agreement", "rank_flips"]

#: The four proper losses of footnote 4, in the order of the columns of :func:`loss_table`.
LOSSES = {"log": log_loss, "brier": brier_loss, "spherical": spherical_loss,
          "zero_one": zero_one_loss}

#: The calibration measures compared in Sec. 5: name -> (aggregation, measure, fixed kwargs).
MEASURES = {
    "l1-QECE conf": (confidence, l1_qece, {}),
    "l2-QECE conf": (confidence, l2_qece, {}),
    "l1-QECE cw": (classwise, l1_qece, {}),
    "l2-QECE cw": (classwise, l2_qece, {}),
    "ECE conf": (confidence, binned_ece, {"p": 1, "binning": "width"}),
    "l2-ECE conf": (confidence, binned_ece, {"p": 2, "binning": "width"}),
    "ECE cw": (classwise, binned_ece, {"p": 1, "binning": "width"}),
    "l2-ECE cw": (classwise, binned_ece, {"p": 2, "binning": "width"}),
}


def _stack(probs) -> np.ndarray:
    P = np.asarray(probs, dtype=np.float64)
    if P.ndim != 3:
        raise ValueError(f"probs: expected shape (n_models, n, k), got {P.shape}")
    if P.shape[0] == 0:
        raise ValueError("probs: no models (n_models = 0)")
    return P


def loss_table(y_true, probs) -> np.ndarray:
    """Mean proper losses of each model: shape ``(n_models, 4)``, columns as :data:`LOSSES`.

    Parameters
    ----------
    y_true : array_like of int, shape (n,)
    probs : array_like, shape (n_models, n, k)

    Examples
    --------
    >>> P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.6, 0.4], [0.4, 0.6]]])
    >>> loss_table([0, 1], P)[:, 3].tolist()  # 0-1 loss: both models are always right
    [0.0, 0.0]
    """
    P = _stack(probs)
    return np.array([[f(y_true, Pm) for f in LOSSES.values()] for Pm in P])


def measure_table(y_true, probs, n_bins, measures=None) -> np.ndarray:
    """Calibration measures of each model at each bin count.

    Returns
    -------
    numpy.ndarray, shape (n_measures, n_bin_counts, n_models)
        Indexed like ``measures`` (default: all of :data:`MEASURES`) and ``n_bins``.

    Examples
    --------
    >>> P = np.array([[[0.9, 0.1], [0.2, 0.8]], [[0.6, 0.4], [0.4, 0.6]]])
    >>> measure_table([0, 1], P, [1, 2], ["l1-QECE conf"]).shape
    (1, 2, 2)
    """
    P = _stack(probs)
    names = list(MEASURES) if measures is None else list(measures)
    unknown = [m for m in names if m not in MEASURES]
    if unknown:
        raise ValueError(f"measures: unknown {unknown}; expected names from {list(MEASURES)}")
    bins = [n_bins] if np.isscalar(n_bins) else list(n_bins)
    out = np.empty((len(names), len(bins), P.shape[0]))
    for a, name in enumerate(names):
        lift, measure, kwargs = MEASURES[name]
        for b, m in enumerate(bins):
            for j, Pm in enumerate(P):
                out[a, b, j] = lift(measure, y_true, Pm, n_bins=m, **kwargs)
    return out


def dominance_matrix(losses) -> np.ndarray:
    """``D[i, j]`` is True when model ``i`` has a strictly smaller value of every loss than ``j``.

    Examples
    --------
    >>> dominance_matrix([[1, 1], [2, 2], [0, 3]]).astype(int).tolist()
    [[0, 1, 0], [0, 0, 0], [0, 0, 0]]
    """
    L = np.asarray(losses, dtype=np.float64)
    if L.ndim != 2 or L.shape[0] == 0:
        raise ValueError(f"losses: expected shape (n_models, n_losses), got {L.shape}")
    if np.isnan(L).any():
        raise ValueError("losses: contains NaN")
    return np.all(L[:, None, :] < L[None, :, :], axis=2)


def longest_dominance_chain(losses) -> list[int]:
    """The longest chain ``c_0, c_1, ...`` with ``c_t`` dominating ``c_{t+1}`` (best first).

    The dominance relation is a strict partial order, so the chain is a longest path in a DAG,
    found by dynamic programming over the models sorted by their first loss (a dominating model
    has a smaller first loss).  Among longest chains the one found first in that order is
    returned (deterministic).

    Examples
    --------
    >>> longest_dominance_chain([[3, 3], [1, 1], [2, 2], [0, 5]])
    [1, 2, 0]
    """
    L = np.asarray(losses, dtype=np.float64)
    D = dominance_matrix(L)
    order = np.argsort(L[:, 0], kind="stable")[::-1]  # worst first: extend chains downwards
    length = np.ones(L.shape[0], dtype=np.int64)
    nxt = np.full(L.shape[0], -1)
    for i in order:  # every model i dominates has a larger first loss, so it was visited
        better = np.flatnonzero(D[i])
        if better.size:
            best = better[np.argmax(length[better])]
            length[i] = length[best] + 1
            nxt[i] = best
    start = int(np.argmax(length))
    chain = [start]
    while nxt[chain[-1]] >= 0:
        chain.append(int(nxt[chain[-1]]))
    return chain


@dataclass(frozen=True)
class ChainAgreement:
    """How a measure ranks a dominance chain.

    Attributes
    ----------
    agreeing : int
        Pairs ``(i, j)`` of the chain (``i`` dominates ``j``) with ``measure(i) < measure(j)``.
    pairs : int
        All pairs of the chain, ``L (L - 1) / 2``.
    adjacent_agreeing, adjacent_pairs : int
        The same for consecutive pairs only.
    """

    agreeing: int
    pairs: int
    adjacent_agreeing: int
    adjacent_pairs: int

    @property
    def preserved(self) -> bool:
        """Every pair of the chain is ordered as the losses order it."""
        return self.agreeing == self.pairs


def chain_agreement(chain, values) -> ChainAgreement:
    """Count the pairs of ``chain`` (best first) that ``values`` orders the same way.

    Examples
    --------
    >>> chain_agreement([2, 0, 1], [0.5, 0.9, 0.1])   # values 0.1 < 0.5 < 0.9: all agree
    ChainAgreement(agreeing=3, pairs=3, adjacent_agreeing=2, adjacent_pairs=2)
    >>> chain_agreement([2, 0, 1], [0.5, 0.3, 0.1]).preserved
    False
    """
    v = np.asarray(values, dtype=np.float64)[list(chain)]
    L = v.shape[0]
    upper = np.triu(np.ones((L, L), dtype=bool), k=1)
    agree = (v[:, None] < v[None, :]) & upper
    return ChainAgreement(agreeing=int(agree.sum()), pairs=int(upper.sum()),
                          adjacent_agreeing=int(np.sum(v[:-1] < v[1:])),
                          adjacent_pairs=max(L - 1, 0))


def rank_flips(values_a, values_b) -> int:
    """Number of model pairs that two value vectors order differently (discordant pairs).

    Examples
    --------
    >>> rank_flips([1, 2, 3], [1, 3, 2])
    1
    """
    a = np.asarray(values_a, dtype=np.float64)
    b = np.asarray(values_b, dtype=np.float64)
    if a.shape != b.shape or a.ndim != 1:
        raise ValueError(f"values_a, values_b: expected two 1-d arrays of one shape,"
                         f" got {a.shape} and {b.shape}")
    sa = np.sign(a[:, None] - a[None, :])
    sb = np.sign(b[:, None] - b[None, :])
    return int(np.sum(np.triu(sa * sb < 0, k=1)))
