"""Finite decision problems, the proper losses they induce, and dominance between predictors.

A *decision problem* (Def B.1 of the truthfulness paper) is a finite set of actions ``A``,
the outcomes ``0..k-1`` and a non-negative loss matrix ``L`` of shape ``(|A|, k)``.  A decision
maker who believes ``q`` picks a *best response*, an action of least expected loss
(:meth:`DecisionProblem.best_response`); the loss it then suffers is the *induced loss*
``l_L(q, y) = L[BR(q), y]``.  Thm B.3 says that induced losses are exactly the proper losses,
so "better under every proper loss" (dominance, Def 2.9) means "better for every downstream
decision".

Conventions
-----------
* Distributions follow the rest of calnotes: ``q`` of shape ``(n, k)`` holds ``n``
  distributions, one per row; ``q`` of shape ``(n,)`` holds ``n`` binary distributions
  ``P(y = 1)`` (for problems with ``k = 2``).  A single distribution is a one-row matrix.
* Risks ``R(a; q) = sum_y q_y L[a, y]`` are accumulated over ``y = 0, 1, ..., k-1`` in that
  order for every action, so two actions whose risks are equal in exact arithmetic because
  their loss rows agree on the support of ``q`` get exactly equal floats.
* **Ties**: among actions of equal (computed) risk the best response is the one with the
  **smallest index**, as ``numpy.argmin`` and the 0-1 loss of :mod:`calnotes.core.scores` do.
  Properness does not depend on the tie rule; the induced loss does.

The module also holds the tools of the chapter *Dominance*: :func:`dominates` compares two
predictors under a list of proper losses and decision problems, :func:`garble` and
:func:`garbling_population` build a calibrated predictor that is a Blackwell garbling of
another (so is dominated by it), and :func:`iid_expectation` computes the exact expectation of
a statistic of ``n`` i.i.d. draws from a finite population by enumeration.
"""

from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

from .._validate import check_labels, check_probabilities, check_rng
from ..core.scores import PROPER_LOSSES, ProperLoss, as_matrix, expected_loss, get_loss

__all__ = [
    "DecisionProblem",
    "random_decision_problem",
    "simplex_grid",
    "Dominance",
    "dominates",
    "DEFAULT_LOSSES",
    "garble",
    "garbling_population",
    "iid_expectation",
    "calibrated_expected_qece",
]

#: The proper losses :func:`dominates` uses when none are given.
DEFAULT_LOSSES = ("log", "brier", "spherical", "zero_one")

#: Largest number of terms :func:`iid_expectation` enumerates before refusing.
MAX_ENUMERATION = 2_000_000


def _fmt_index(idx) -> str:
    return "[" + ", ".join(str(int(i)) for i in idx) + "]"


def _check_loss_matrix(losses, name: str = "losses") -> np.ndarray:
    try:
        L = np.array(losses, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: could not convert to a float array ({exc})") from None
    if L.ndim != 2:
        raise ValueError(
            f"{name}: expected a 2-d array of shape (n_actions, n_outcomes), got shape {L.shape}")
    if L.shape[0] < 1:
        raise ValueError(f"{name}: a decision problem needs at least one action, got shape {L.shape}")
    if L.shape[1] < 2:
        raise ValueError(
            f"{name}: a decision problem needs at least two outcomes (columns), got shape {L.shape}")
    bad = ~np.isfinite(L)
    if bad.any():
        idx = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), L.shape)
        raise ValueError(f"{name}: non-finite loss {float(L[idx])} at index {_fmt_index(idx)}"
                         " (action, outcome); losses must be finite")
    bad = L < 0
    if bad.any():
        idx = np.unravel_index(int(np.flatnonzero(bad.ravel())[0]), L.shape)
        raise ValueError(f"{name}: negative loss {float(L[idx])!r} at index {_fmt_index(idx)}"
                         " (action, outcome); Def B.1 needs losses >= 0")
    L.setflags(write=False)
    return L


class DecisionProblem:
    r"""A finite decision problem: actions ``0..|A|-1``, outcomes ``0..k-1``, losses ``L``.

    Def B.1 of the truthfulness paper.  The induced loss
    :math:`l_L(q, y) = L(\mathrm{BR}_L(q), y)` is proper (Thm B.3); :meth:`proper_loss`
    wraps it as a :class:`calnotes.core.scores.ProperLoss`, usable wherever a loss name is.

    Parameters
    ----------
    losses : array_like, shape (n_actions, k)
        ``losses[a, y]`` is the loss of action ``a`` when the outcome is ``y``: finite and
        non-negative, ``n_actions >= 1``, ``k >= 2``.
    name : str, optional
        Used in tables (:func:`dominates`); default ``"decision problem (|A| x k)"``.

    Attributes
    ----------
    losses : ndarray, shape (n_actions, k)
        Read-only copy of the loss matrix.
    n_actions, n_outcomes : int
    name : str

    Notes
    -----
    Best responses break ties by the smallest action index (see the module notes).
    Chapter *Dominance*, Thm B.3 (claims ``000.thmB.3.induced_is_proper`` and
    ``000.thmB.3.proper_is_induced``).

    Examples
    --------
    Carry an umbrella (action 0, costs 1 whatever happens) or not (action 1, costs 4 if it
    rains, outcome 1):

    >>> umbrella = DecisionProblem([[1, 1], [0, 4]])
    >>> umbrella.best_response([0.1, 0.25, 0.5]).tolist()   # binary q = P(rain)
    [1, 0, 0]
    >>> umbrella.bayes_risk([0.1, 0.25, 0.5]).tolist()      # at 0.25 both cost 1: action 0
    [0.4, 1.0, 1.0]
    >>> umbrella.induced_loss([0.1, 0.5], [1, 0]).tolist()   # no umbrella and rain: 4
    [4.0, 1.0]
    """

    def __init__(self, losses, *, name: str | None = None):
        self.losses = _check_loss_matrix(losses)
        self.n_actions, self.n_outcomes = self.losses.shape
        self.name = name if name is not None else (
            f"decision problem ({self.n_actions} x {self.n_outcomes})")

    @classmethod
    def from_proper_loss(cls, loss, actions, *, name: str | None = None) -> "DecisionProblem":
        """The decision problem ``A = actions``, ``L(a, y) = loss(a, y)`` of Thm B.3 (converse).

        Parameters
        ----------
        loss : str or ProperLoss
        actions : array_like, shape (n_actions, k) or (n_actions,)
            Distributions used as actions, e.g. :func:`simplex_grid`.  The loss must be finite
            on them (the log loss needs ``interior=True`` grids).
        name : str, optional

        Examples
        --------
        >>> dp = DecisionProblem.from_proper_loss("brier", simplex_grid(2, 4))
        >>> dp.best_response([[0.25, 0.75]]).tolist()   # the grid point itself
        [1]
        """
        A = as_matrix(actions)
        lossobj = get_loss(loss)
        with np.errstate(divide="ignore", invalid="ignore"):
            L = lossobj.matrix(A)
        if not np.all(np.isfinite(L)):
            row = int(np.flatnonzero(~np.isfinite(L).all(axis=1))[0])
            raise ValueError(
                f"actions: the {lossobj.name} loss is not finite at action {row}"
                f" ({A[row].tolist()}); drop such actions (simplex_grid(..., interior=True))")
        return cls(L, name=name if name is not None else f"{lossobj.name} on {len(A)} actions")

    def __repr__(self) -> str:
        return f"DecisionProblem({self.losses.tolist()!r}, name={self.name!r})"

    def _beliefs(self, q) -> np.ndarray:
        Q = as_matrix(check_probabilities(q, name="q"))
        if Q.shape[1] != self.n_outcomes:
            raise ValueError(
                f"q: has {Q.shape[1]} outcomes per row but the decision problem has"
                f" {self.n_outcomes}" + (" (a 1-d q is binary: P(y = 1))"
                                         if np.ndim(q) == 1 else ""))
        return Q

    def risks(self, q) -> np.ndarray:
        """Expected loss ``R(a; q) = sum_y q_y L[a, y]`` of every action, row by row.

        Parameters
        ----------
        q : array_like, shape (n, k) or (n,)
            Beliefs (binary ``P(y = 1)`` when 1-d).

        Returns
        -------
        ndarray, shape (n, n_actions)

        Examples
        --------
        >>> DecisionProblem([[1, 1], [0, 4]]).risks([0.5]).tolist()
        [[1.0, 2.0]]
        """
        Q = self._beliefs(q)
        R = np.zeros((Q.shape[0], self.n_actions))
        for y in range(self.n_outcomes):  # the same summation order for every action
            R += Q[:, y, None] * self.losses[None, :, y]
        return R

    def best_response(self, q) -> np.ndarray:
        """An action of least expected loss for each belief; ties go to the smallest index.

        Examples
        --------
        >>> DecisionProblem([[0, 1], [1, 0]]).best_response([0.5, 0.6]).tolist()
        [0, 1]
        """
        return self.risks(q).argmin(axis=1)

    def bayes_risk(self, q) -> np.ndarray:
        """``min_a R(a; q)``: the generalized entropy of the induced loss, row by row.

        Concave in ``q`` (a minimum of linear functions); equal to
        ``calnotes.entropy(q, self.proper_loss())``.

        Examples
        --------
        >>> DecisionProblem([[0, 1], [1, 0]]).bayes_risk([0.3]).tolist()
        [0.3]
        """
        return self.risks(q).min(axis=1)

    def loss_matrix(self, q) -> np.ndarray:
        """``L[BR(q_i), :]`` for each row: the loss matrix of the induced loss, shape ``(n, k)``.

        This is the ``matrix`` function of :meth:`proper_loss`.

        Examples
        --------
        >>> DecisionProblem([[0, 1], [1, 0]]).loss_matrix([[0.8, 0.2]]).tolist()
        [[0.0, 1.0]]
        """
        return self.losses[self.best_response(q)]

    def induced_loss(self, q, y) -> np.ndarray:
        """``l_L(q_i, y_i) = L[BR(q_i), y_i]`` for each pair.

        Parameters
        ----------
        q : array_like, shape (n, k) or (n,)
        y : array_like of int, shape (n,)
            Outcomes in ``0..k-1``.

        Returns
        -------
        ndarray, shape (n,)

        Examples
        --------
        >>> DecisionProblem([[0, 1], [1, 0]]).induced_loss([0.8, 0.8], [0, 1]).tolist()
        [1.0, 0.0]
        """
        Q = self._beliefs(q)
        labels = check_labels(y, n_classes=self.n_outcomes, n_samples=Q.shape[0], name="y")
        return self.losses[self.best_response(Q), labels]

    def proper_loss(self, name: str | None = None) -> ProperLoss:
        """The induced loss as a :class:`calnotes.core.scores.ProperLoss` (not strictly proper).

        Examples
        --------
        >>> from calnotes.core.scores import divergence
        >>> loss = DecisionProblem([[0, 1], [1, 0]]).proper_loss()
        >>> divergence([[0.3, 0.7]], [[0.6, 0.4]], loss).round(12).tolist()   # >= 0
        [0.4]
        """
        return ProperLoss(name if name is not None else self.name, self.loss_matrix,
                          strict=False)


def random_decision_problem(n_actions: int, n_outcomes: int, rng, *,
                            name: str | None = None) -> DecisionProblem:
    """A decision problem with i.i.d. ``Uniform[0, 1)`` losses.

    Parameters
    ----------
    n_actions : int
        ``|A| >= 1``.
    n_outcomes : int
        ``k >= 2``.
    rng : numpy.random.Generator or int
    name : str, optional

    Examples
    --------
    >>> dp = random_decision_problem(3, 4, rng=0)
    >>> dp.losses.shape, bool((dp.losses >= 0).all())
    ((3, 4), True)
    """
    for arg, value, low in (("n_actions", n_actions, 1), ("n_outcomes", n_outcomes, 2)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{arg}: expected an integer >= {low}, got {value!r}")
    rng = check_rng(rng)
    return DecisionProblem(rng.uniform(size=(int(n_actions), int(n_outcomes))), name=name)


def simplex_grid(n_classes: int, resolution: int, *, interior: bool = False) -> np.ndarray:
    """All distributions on ``k`` outcomes whose entries are multiples of ``1/N``.

    Parameters
    ----------
    n_classes : int
        ``k >= 2``.
    resolution : int
        ``N >= 1``; there are ``comb(N + k - 1, k - 1)`` points (``comb(N - 1, k - 1)`` with
        ``interior``).
    interior : bool, default False
        Only points with every entry ``>= 1/N`` (where the log loss is finite).

    Returns
    -------
    ndarray, shape (n_points, k)
        Rows ``counts / N`` in lexicographic order of the counts.

    Examples
    --------
    >>> simplex_grid(2, 2).tolist()
    [[0.0, 1.0], [0.5, 0.5], [1.0, 0.0]]
    >>> simplex_grid(3, 3, interior=True).tolist()
    [[0.3333333333333333, 0.3333333333333333, 0.3333333333333333]]
    """
    for arg, value, low in (("n_classes", n_classes, 2), ("resolution", resolution, 1)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{arg}: expected an integer >= {low}, got {value!r}")
    k, N = int(n_classes), int(resolution)
    total = N - k if interior else N
    if total < 0:
        raise ValueError(f"resolution: an interior grid on {k} classes needs N >= {k}, got {N}")
    # stars and bars: positions of the k - 1 bars among total + k - 1 slots
    bars = np.array(list(itertools.combinations(range(total + k - 1), k - 1)), dtype=np.int64)
    bars = bars.reshape(-1, k - 1)
    edges = np.column_stack([np.full(len(bars), -1), bars, np.full(len(bars), total + k - 1)])
    counts = np.diff(edges, axis=1) - 1 + (1 if interior else 0)
    counts = counts[np.lexsort(counts.T[::-1])]
    return counts / N


# --------------------------------------------------------------------------- dominance

def _weights(sample_weight, n: int) -> np.ndarray:
    if sample_weight is None:
        return np.full(n, 1.0 / n)
    w = np.asarray(sample_weight, dtype=np.float64)
    if w.shape != (n,):
        raise ValueError(f"sample_weight: expected shape ({n},), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
        raise ValueError("sample_weight: expected finite non-negative weights with a positive sum")
    return w / w.sum()


def _loss_objects(losses, n_classes: int) -> list[ProperLoss]:
    if isinstance(losses, (str, ProperLoss, DecisionProblem)):
        losses = [losses]
    out, seen = [], {}
    for item in losses:
        if isinstance(item, DecisionProblem) and item.n_outcomes != n_classes:
            raise ValueError(f"losses: {item.name!r} has {item.n_outcomes} outcomes but the"
                             f" predictions have {n_classes} classes")
        if isinstance(item, DecisionProblem):
            loss = item.proper_loss()
        elif isinstance(item, (str, ProperLoss)) and (isinstance(item, ProperLoss)
                                                      or item in PROPER_LOSSES):
            loss = get_loss(item)
        else:
            raise ValueError(f"losses: expected ProperLoss objects, DecisionProblem objects or"
                             f" names in {sorted(PROPER_LOSSES)}, got {item!r}")
        count = seen.get(loss.name, 0)
        seen[loss.name] = count + 1
        if count:
            loss = ProperLoss(f"{loss.name} #{count + 1}", loss.matrix, loss.strict)
        out.append(loss)
    if not out:
        raise ValueError("losses: expected at least one proper loss or decision problem")
    return out


@dataclass(frozen=True)
class Dominance:
    """Expected losses of two predictors ``f`` and ``g`` under a list of losses.

    Returned by :func:`dominates`; true (``bool(result)``) when ``f`` is no worse than ``g``
    under every loss, up to ``atol``.

    Attributes
    ----------
    names : tuple of str
        The losses, in the order given.
    loss_f, loss_g : ndarray
        Expected (or average) loss of each predictor under each loss.
    atol : float
        Absolute tolerance: ``f`` is no worse under a loss if ``loss_f <= loss_g + atol``.
    """

    names: tuple
    loss_f: np.ndarray
    loss_g: np.ndarray
    atol: float

    @property
    def no_worse(self) -> np.ndarray:
        """Per loss: ``loss_f <= loss_g + atol`` (``inf <= inf`` counts as no worse)."""
        return (self.loss_f <= self.loss_g + self.atol) | (self.loss_f == self.loss_g)

    @property
    def holds(self) -> bool:
        """``f`` dominates ``g`` on these losses."""
        return bool(self.no_worse.all())

    @property
    def margin(self) -> float:
        """``max(loss_f - loss_g)`` over the losses with finite values (``<= atol`` iff it holds,
        when every value is finite)."""
        with np.errstate(invalid="ignore"):
            diff = self.loss_f - self.loss_g
        diff = diff[np.isfinite(diff)]
        return float(diff.max()) if diff.size else float("nan")

    def __bool__(self) -> bool:
        return self.holds

    def to_frame(self):
        """A ``pandas.DataFrame`` with one row per loss."""
        import pandas as pd

        return pd.DataFrame({"f": self.loss_f, "g": self.loss_g,
                             "f - g": self.loss_f - self.loss_g,
                             "f no worse": self.no_worse}, index=list(self.names))

    def __repr__(self) -> str:
        return (f"Dominance(holds={self.holds}, margin={self.margin:.3g}, "
                f"losses={list(self.names)})")


def dominates(P_f, P_g, truth, losses: Sequence = DEFAULT_LOSSES, *, sample_weight=None,
              atol: float = 1e-12) -> Dominance:
    r"""Does predictor ``f`` have no larger expected loss than ``g`` under every given loss?

    Def 2.9 of the truthfulness paper asks this for *all* proper losses; this function checks
    a finite list of proper losses and/or decision problems (whose induced losses are proper,
    Thm B.3).

    Parameters
    ----------
    P_f, P_g : array_like, shape (n, k) or (n,)
        The two predictors' outputs on the same ``n`` samples (or atoms of a population).
    truth : array_like
        Either the outcomes, integer labels of shape ``(n,)`` (the average loss on the data), or
        the true conditional distributions, shape ``(n, k)`` (or ``(n,)`` of ``P(y = 1)`` for
        binary predictors): the exact expected loss ``sum_y truth[i, y] l(P[i], y)``.  A label
        ``y`` and the point mass on ``y`` give the same number, so for binary predictors a 1-d
        ``truth`` is read as probabilities and 0/1 labels work either way.
    losses : sequence of str, ProperLoss or DecisionProblem
        Default: log, Brier, spherical and 0-1 (:data:`DEFAULT_LOSSES`).
    sample_weight : array_like, shape (n,), optional
        Probability of each row (normalised to sum to one); default uniform.
    atol : float, default 1e-12
        Absolute tolerance on each comparison: floating-point rounding of the expected losses.

    Returns
    -------
    Dominance
        Truthy when ``f`` is no worse under every loss; ``.to_frame()`` shows the table.

    Notes
    -----
    Chapter *Dominance* (claims ``000.appB.blackwell`` and ``000.thm4.1``).

    Examples
    --------
    A calibrated predictor versus the constant prediction of the base rate (a garbling):

    >>> f = [0.2, 0.2, 0.8, 0.8]
    >>> g = [0.5, 0.5, 0.5, 0.5]
    >>> bool(dominates(f, g, truth=f))
    True
    >>> bool(dominates(g, f, truth=f))
    False
    >>> dominates(f, g, truth=[0, 1, 1, 1], losses=["brier"]).to_frame().round(3)
              f    g  f - g  f no worse
    brier  0.38  0.5  -0.12        True
    """
    F = as_matrix(check_probabilities(P_f, name="P_f"))
    G = as_matrix(check_probabilities(P_g, name="P_g"))
    if F.shape != G.shape:
        raise ValueError(f"P_g: shape {G.shape} differs from P_f's {F.shape}")
    n, k = F.shape
    labels = None
    truth_arr = np.asarray(truth)
    if truth_arr.ndim == 1 and np.ndim(P_f) == 2:
        labels = check_labels(truth_arr, n_classes=k, n_samples=n, name="truth")
        T = None
    else:
        T = as_matrix(check_probabilities(truth, name="truth"))
        if T.shape != F.shape:
            raise ValueError(f"truth: shape {T.shape} differs from the predictions' {F.shape}")
    w = _weights(sample_weight, n)
    if not isinstance(atol, numbers.Real) or not atol >= 0:
        raise ValueError(f"atol: expected a non-negative number, got {atol!r}")
    objs = _loss_objects(losses, k)
    for loss in objs:
        probe = loss.matrix(F[:1])
        if probe.shape != (1, k):
            raise ValueError(f"losses: {loss.name} gives a loss matrix of shape {probe.shape}"
                             f" for one prediction on {k} outcomes")

    def value(P, loss):
        if labels is not None:
            with np.errstate(divide="ignore"):
                per = loss.matrix(P)[np.arange(n), labels]
            with np.errstate(invalid="ignore"):
                return float(np.where(w > 0, w * per, 0.0).sum())
        with np.errstate(divide="ignore"):
            per = expected_loss(T, P, loss)
        with np.errstate(invalid="ignore"):
            return float(np.where(w > 0, w * per, 0.0).sum())

    loss_f = np.array([value(F, loss) for loss in objs])
    loss_g = np.array([value(G, loss) for loss in objs])
    return Dominance(tuple(loss.name for loss in objs), loss_f, loss_g, float(atol))


# --------------------------------------------------------------------------- garbling

def _check_finite_predictor(values, mass):
    V = check_probabilities(values, name="values")
    w = np.asarray(mass, dtype=np.float64)
    if w.ndim != 1 or w.shape[0] != V.shape[0]:
        raise ValueError(f"mass: expected shape ({V.shape[0]},) (one entry per value), got {w.shape}")
    if not np.all(np.isfinite(w)) or np.any(w < 0) or abs(w.sum() - 1.0) > 1e-12:
        raise ValueError("mass: expected finite non-negative probabilities summing to one"
                         " (within 1e-12)")
    return V, w


def _check_kernel(kernel, n_values: int) -> np.ndarray:
    K = np.asarray(kernel, dtype=np.float64)
    if K.ndim != 2 or K.shape[0] != n_values:
        raise ValueError(f"kernel: expected shape ({n_values}, n_signals), got {K.shape}")
    if not np.all(np.isfinite(K)) or np.any(K < 0):
        raise ValueError("kernel: expected finite non-negative entries")
    bad = np.abs(K.sum(axis=1) - 1.0) > 1e-12
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"kernel: row {i} sums to {K[i].sum():.6g}, not 1 (a Markov kernel)")
    return K


def garbling_population(values, mass, kernel):
    r"""The joint population of a calibrated predictor ``f`` and its garbling ``g``.

    ``f`` takes ``values[j]`` with probability ``mass[j]`` and is calibrated:
    ``P(Y | f = values[j]) = values[j]``.  A signal ``t`` is drawn from ``kernel[j]``
    independently of ``Y`` given ``f``, and ``g`` reports ``P(Y | t)``: the calibrated
    predictor that sees only the signal -- a *garbling* of ``f`` in Blackwell's sense.

    Parameters
    ----------
    values : array_like, shape (s, k) or (s,)
        The distinct values of ``f`` (binary ``P(y = 1)`` when 1-d).
    mass : array_like, shape (s,)
        ``P(f = values[j])``; non-negative, summing to one.
    kernel : array_like, shape (s, t)
        Row-stochastic: ``kernel[j, u] = P(signal u | f = values[j])``.  A merge of values
        into groups is ``numpy.eye(n_groups)[groups]``.

    Returns
    -------
    weights : ndarray, shape (r,)
        Probability of each atom ``(j, u)`` with positive mass.
    P_f : ndarray, shape (r, k) or (r,)
        ``f`` on each atom: ``values[j]`` -- also the atom's true distribution of ``Y``.
    P_g : ndarray, same shape
        ``g`` on each atom: ``P(Y | signal u)``.

    Notes
    -----
    Both predictors are calibrated and ``f`` dominates ``g``: for a proper loss with
    generalized entropy ``H``, ``E l(f) = E H(f) <= E H(E[f | u]) = E l(g)`` by Jensen
    (``H`` is concave).  Blackwell's theorem gives the converse.  Use
    ``dominates(P_f, P_g, truth=P_f, sample_weight=weights)``.  Chapter *Dominance*.

    Examples
    --------
    Merge the two values of a binary predictor:

    >>> w, f, g = garbling_population([0.2, 0.8], [0.5, 0.5],
    ...                               [[1.0], [1.0]])
    >>> w.tolist(), f.tolist(), g.round(12).tolist()
    ([0.5, 0.5], [0.2, 0.8], [0.5, 0.5])
    """
    V, m = _check_finite_predictor(values, mass)
    K = _check_kernel(kernel, V.shape[0])
    Vm = as_matrix(V)
    joint = m[:, None] * K                                   # (s, t)
    signal_mass = joint.sum(axis=0)
    with np.errstate(invalid="ignore", divide="ignore"):
        signal_values = (joint.T @ Vm) / signal_mass[:, None]  # (t, k)
    j, u = np.nonzero(joint > 0)
    weights = joint[j, u]
    P_f, P_g = Vm[j], signal_values[u]
    if V.ndim == 1:
        P_f, P_g = P_f[:, 1], P_g[:, 1]
    return weights, P_f, P_g


def garble(values, mass, kernel):
    """The distinct values and masses of the garbling of a calibrated predictor.

    Parameters and model as :func:`garbling_population`; signals of zero mass are dropped.

    Returns
    -------
    values_g : ndarray, shape (t', k) or (t',)
        ``P(Y | signal u)`` for each signal of positive mass (in signal order).
    mass_g : ndarray, shape (t',)

    Examples
    --------
    >>> v, m = garble([0.1, 0.3, 0.9], [0.25, 0.25, 0.5], [[1, 0], [1, 0], [0, 1]])
    >>> v.round(12).tolist(), m.tolist()
    ([0.2, 0.9], [0.5, 0.5])
    """
    V, m = _check_finite_predictor(values, mass)
    K = _check_kernel(kernel, V.shape[0])
    Vm = as_matrix(V)
    joint = m[:, None] * K
    signal_mass = joint.sum(axis=0)
    keep = signal_mass > 0
    out = (joint.T[keep] @ Vm) / signal_mass[keep, None]
    return (out[:, 1] if V.ndim == 1 else out), signal_mass[keep]


def iid_expectation(mass, n_samples: int, statistic: Callable[[np.ndarray], float], *,
                    ordered: bool = False) -> float:
    r"""Exact ``E[statistic(i_1, ..., i_n)]`` for ``i_1..i_n`` drawn i.i.d. from ``mass``.

    Parameters
    ----------
    mass : array_like, shape (s,)
        Probabilities of the ``s`` atoms (non-negative, summing to one).
    n_samples : int
        ``n >= 1``.
    statistic : callable
        ``statistic(idx) -> float`` for an index array ``idx`` of shape ``(n,)``; index your
        own arrays with it, e.g. ``lambda i: expected_qece(values[i], values[i], m)``.
    ordered : bool, default False
        ``False``: enumerate the ``comb(n + s - 1, s - 1)`` multisets, each once, sorted, with
        multinomial weights.  Correct when the statistic does not depend on the order of the
        samples, e.g. any equal-mass measure with the default ``ties="average"``, or a binned
        measure whose tied predictions always carry the same truth.
        ``True``: enumerate all ``s ** n`` sequences (needed for ``ties="position"`` when tied
        predictions can carry different truths: the order of the ties then matters).

    Returns
    -------
    float

    Raises
    ------
    ValueError
        If more than :data:`MAX_ENUMERATION` terms would be needed.

    Examples
    --------
    The mean of two fair coin flips:

    >>> iid_expectation([0.5, 0.5], 2, lambda i: i.mean())
    0.5
    >>> iid_expectation([0.5, 0.5], 2, lambda i: float(i[0]), ordered=True)
    0.5
    """
    w = np.asarray(mass, dtype=np.float64)
    if w.ndim != 1 or w.size == 0 or not np.all(np.isfinite(w)) or np.any(w < 0) \
            or abs(w.sum() - 1.0) > 1e-12:
        raise ValueError("mass: expected a non-empty 1-d array of probabilities summing to one")
    if isinstance(n_samples, bool) or not isinstance(n_samples, numbers.Integral) or n_samples < 1:
        raise ValueError(f"n_samples: expected a positive integer, got {n_samples!r}")
    n, s = int(n_samples), w.size
    terms = s ** n if ordered else math.comb(n + s - 1, s - 1)
    if terms > MAX_ENUMERATION:
        raise ValueError(f"n_samples: exact enumeration needs {terms} terms (more than"
                         f" {MAX_ENUMERATION}); use fewer atoms or samples, or Monte Carlo")
    total = 0.0
    if ordered:
        for seq in itertools.product(range(s), repeat=n):
            idx = np.array(seq, dtype=np.intp)
            p = float(np.prod(w[idx]))
            if p > 0:
                total += p * float(statistic(idx))
        return total
    fact_n = math.factorial(n)
    for combo in itertools.combinations_with_replacement(range(s), n):
        idx = np.array(combo, dtype=np.intp)
        counts = np.bincount(idx, minlength=s)
        if np.any(w[counts > 0] == 0):
            continue
        coef = fact_n // math.prod(math.factorial(int(c)) for c in counts)  # exact integer
        p = coef * float(np.prod(w ** counts))
        total += p * float(statistic(idx))
    return total


def calibrated_expected_qece(values, mass, n_samples: int, n_bins: int, *, p: int = 2,
                             aggregation: str = "classwise") -> float:
    r"""Exact ``E[l_p-QECE_m]`` of a calibrated finite-valued predictor over ``n`` i.i.d. samples.

    The predictor takes ``values[j]`` with probability ``mass[j]`` and is calibrated,
    ``Y | f = v ~ v``; so the law of the pairs ``(f(x_i), y_i)`` is fixed by ``values`` and
    ``mass`` whatever the features are.  The expectation over the outcomes given the
    predictions is :func:`calnotes.core.expectation.expected_qece` (exact); the expectation over the
    predictions is :func:`iid_expectation` over multisets (tied predictions carry the same truth,
    so the order of the samples does not matter).

    Parameters
    ----------
    values : array_like, shape (s, k) or (s,)
    mass : array_like, shape (s,)
    n_samples : int
        ``n``; there are ``comb(n + s - 1, s - 1)`` multisets.
    n_bins : int
        ``m <= n``.
    p : {1, 2}
    aggregation : {"classwise", "confidence", "binary"}
        Default ``"classwise"``; with 1-d (binary) ``values`` the default means ``"binary"``.

    Returns
    -------
    float

    Notes
    -----
    For ``p = 2`` and class-wise aggregation Lemma C.1 gives ``E[l_Brier(f(x), y)] / (k n)``
    for every ``m``; chapter *Dominance* (claim ``000.thm4.1``).

    Examples
    --------
    >>> v, w = [[0.8, 0.2], [0.3, 0.7]], [0.5, 0.5]
    >>> round(calibrated_expected_qece(v, w, 4, 3), 12)   # E Brier / (2 * 4) = 0.37 / 8
    0.04625
    """
    from ..core.expectation import expected_qece

    V = check_probabilities(values, name="values")
    if V.ndim == 1 and aggregation == "classwise":
        aggregation = "binary"
    return iid_expectation(mass, n_samples, lambda i: expected_qece(
        V[i], V[i], n_bins, p=p, aggregation=aggregation))
