"""Utility calibration: the utility paper (Hegazy, Jordan & Dieuleveut, AISTATS 2026).

A *utility* ``u(p, e_j) in [-1, 1]`` is what a user gains when the model predicts ``p`` and
class ``j`` occurs.  The model's own forecast of that gain is the *predicted utility*
``v_u(X) = <f(X), ubar(X)>`` with ``ubar(X) = (u(f(X), e_1), ..., u(f(X), e_C))`` (eq. 3.1),
and the *realized utility* is ``u(f(X), Y)``.  The utility calibration error (eq. 3.2) is the
worst interval of predicted utility on which the two disagree on average::

    UC(f, u) = sup_I | E[(u(f(X), Y) - v_u(X)) 1{v_u(X) in I}] |,

equivalently ``sup_I |E[<Y - f(X), ubar(X)> 1{v_u(X) in I}]|`` (eq. 3.3: a weighted
calibration error with witnesses ``xi ubar 1{v_u in I}``).  For a class ``U`` of utilities,
``UC(f, U) = sup_{u in U} UC(f, u)`` (eq. 3.5).

**Utility families.**

A :class:`UtilityFamily` holds ``M`` utilities of one kind, vectorised:

* ``linear`` (Example 3.6, ``U_lin``): ``u_a(p, e_j) = a_j``; ``v = <p, a>``.  The class-wise
  utilities ``U_CWE`` (Example 3.5) are ``a = e_c`` (:func:`classwise`).
* ``rank`` (Example 3.7, ``U_rank``): ``u_theta(p, e_j) = theta_{rank(p, j)}``; top-``K``
  (:func:`top_k`, with ``K = 1`` the top-class utility ``U_TCE`` of Example 3.5) and DCG
  (:func:`dcg`, App. C.4) are rank utilities.
* ``decision`` (Example 3.8, ``U_dec,K``; App. C.2 gain matrices): a loss matrix
  ``l(y, a)``, the Bayes action ``delta(p) = argmin_a E_{Y~p} l(Y, a)``, and
  ``u(p, y) = -l(y, delta(p))`` (:func:`decision`, :func:`gain_matrix`).
* ``similarity`` (App. C.4, ``U_w2v``): ``u(p, e_j) = sum_i p_i S[i, j]`` (:func:`similarity`).

**Tie rules.**

*Tied probabilities* (rank and decision utilities): tied classes share their positions, and a
tied class gets the *average* of ``theta`` over the positions of its tie group (for decisions:
the average loss over the tied Bayes actions).  This is the expected utility when ties are
broken uniformly at random (the paper's "broken arbitrarily/randomly"), it does not depend on
the order of the classes, and it keeps ``v_theta(p) = <sort_desc(p), theta>`` exact (Cor. B.10).

*Tied predicted utilities* (the estimator): every sample with the same predicted utility lies
in every interval or in none, so the estimator pools them (:func:`uc_from_values`).  Predicted
utilities computed by a matrix product carry rounding that differs between identical
prediction rows (the BLAS kernel depends on the row's position), so
:func:`utility_calibration` treats values within ``4 C eps`` of each other as equal: at most
twice the rounding bound ``C eps`` of a length-``C`` dot product with ``|a_j| <= 1``,
``sum p = 1``, and far below the spacing of distinct utilities of most data sets (not of
all: a confident model's probabilities a few ulp from 0 or 1 are that close, and there the
computed values decide which of them are one value).

The estimator of Lemma 3.4 (:func:`uc_from_values`) is one sort per utility and the
max-minus-min of the prefix sums at tie-group boundaries: ``O(n log n)``, vectorised over an
``(M, n)`` array.

**Speed.** :func:`utility_calibration` runs chunks of utilities on every available CPU; the
class-wise, top-``K`` and two-class cases skip the matrix product or the sort, with the plain
computation's numbers (how, and what was measured: benchmarks/README.md, *Utility
calibration*; tests/test_utility_fast.py and tests/test_uc_two.py check it against loops over
the definition).

The book's Part IV uses this module (chapters *Utility calibration*, *Bounds and guarantees*,
*Patching* and *Which recalibrator, for which utility*).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

from .._engine import (NUMPY_THREAD_ROWS, cumsum_rows, finish_stable_order, stable_row_order,
                       take_rows)
from .._validate import check_labels, check_probabilities, check_rng

__all__ = [
    "UtilityFamily", "UCResult", "UtilityECDF",
    "linear", "classwise", "rank", "top_k", "top_class", "dcg", "decision", "gain_matrix",
    "similarity", "sample_linear", "sample_rank", "sample_gain_matrices",
    "uc_from_values", "uc_brute_force", "utility_calibration", "uc_class",
    "population_uc", "dkw_halfwidth", "utility_ecdf", "ecdf_from_errors",
    "step_cdf_distance", "band_covers", "rank_positions", "utility_tie_tolerance",
    "DCG_GAMMAS",
]

_KINDS = ("linear", "rank", "decision", "similarity")

#: The DCG discount exponents of App. C.4.
DCG_GAMMAS = (0.5, 0.75, 1.0, 1.25, 1.5, 2.0)

#: Relative tolerance under which :meth:`UCResult.worst` treats two errors as tied (lower index
#: first): above the rounding of the errors' cumulative sums (at worst ``n`` machine epsilons,
#: ``2e-10`` at ``n = 10^6``; typically ``sqrt(n)`` of them) and far below any difference a
#: sample of that size can resolve (its standard error is about ``1 / sqrt(n)``).
WORST_TIE_RTOL = 1e-9

#: Utilities processed together in :func:`utility_calibration` (bounds the ``(M, n)`` arrays).
_CHUNK = 64


def utility_tie_tolerance(n_classes: int) -> float:
    """Predicted utilities closer than this are one value (``4 C eps``; module *Tie rules*).

    Examples
    --------
    >>> utility_tie_tolerance(1000) < 1e-12
    True
    """
    return 4.0 * int(n_classes) * float(np.finfo(np.float64).eps)


# --------------------------------------------------------------------------------------------
# validation helpers
# --------------------------------------------------------------------------------------------
def _check_data(labels, predictions):
    """``(y, P)`` validated, errors naming ``labels`` / ``predictions``; binary ``(n,)`` widened."""
    P = check_probabilities(predictions, name="predictions")
    if P.ndim == 1:
        P = np.column_stack([1.0 - P, P])
    y = check_labels(labels, n_classes=P.shape[1], n_samples=P.shape[0], name="labels")
    return y, P


def _check_count(value, name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < minimum:
        raise ValueError(f"{name}: expected an integer >= {minimum}, got {value!r}")
    return int(value)


def _check_bounded(arr, name: str, ndim: int) -> np.ndarray:
    try:
        a = np.asarray(arr, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{name}: expected numbers, got {type(arr).__name__}") from exc
    if a.ndim == ndim - 1:
        a = a[None]
    if a.ndim != ndim:
        raise ValueError(f"{name}: expected a {ndim}-d array, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name}: is empty")
    if not np.all(np.isfinite(a)):
        raise ValueError(f"{name}: contains NaN or infinite values")
    if np.any(np.abs(a) > 1.0 + 1e-12):
        raise ValueError(f"{name}: utilities must lie in [-1, 1] (paper 001, Sec. 3); the"
                         f" largest |value| is {np.abs(a).max():.6g}")
    return np.clip(a, -1.0, 1.0)


def _check_delta(delta, name: str = "delta") -> float:
    if isinstance(delta, bool) or not isinstance(delta, numbers.Real) or not 0 < delta < 1:
        raise ValueError(f"{name}: expected a number in (0, 1), got {delta!r}")
    return float(delta)


# --------------------------------------------------------------------------------------------
# ranks with tie groups
# --------------------------------------------------------------------------------------------
def rank_positions(P: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Tie-group positions of every class in the descending order of each row.

    Class ``j`` of row ``i`` occupies positions ``lo[i, j] .. hi[i, j] - 1`` (0-based) of
    ``sort_desc(P[i])``: ``lo`` counts the strictly larger entries, ``hi`` the entries at
    least as large.  Untied classes have ``hi = lo + 1``; the paper's
    ``rank(p, j) = #{i : p_j <= p_i}`` is ``hi``.

    Examples
    --------
    >>> lo, hi = rank_positions(np.array([[0.2, 0.4, 0.4]]))
    >>> lo.tolist(), hi.tolist()
    ([[2, 0, 0]], [[3, 2, 2]])
    """
    P = np.asarray(P, dtype=np.float64)
    n, C = P.shape
    order = np.argsort(-P, axis=1, kind="stable")
    Ps = np.take_along_axis(P, order, axis=1)
    idx = np.broadcast_to(np.arange(C), (n, C))
    new = np.ones((n, C), dtype=bool)
    new[:, 1:] = Ps[:, 1:] != Ps[:, :-1]
    start = np.maximum.accumulate(np.where(new, idx, 0), axis=1)
    last = np.ones((n, C), dtype=bool)
    last[:, :-1] = new[:, 1:]
    end = np.minimum.accumulate(np.where(last, idx + 1, C)[:, ::-1], axis=1)[:, ::-1]
    lo = np.empty((n, C), dtype=np.int64)
    hi = np.empty((n, C), dtype=np.int64)
    np.put_along_axis(lo, order, start, axis=1)
    np.put_along_axis(hi, order, end, axis=1)
    return lo, hi


def _tie_mean(cum: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """Mean of ``theta[lo:hi]`` per utility from ``cum = [0, cumsum(theta)]``: ``(M, *lo.shape)``."""
    return (cum[:, hi] - cum[:, lo]) / (hi - lo)


# --------------------------------------------------------------------------------------------
# utility families
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class UtilityFamily:
    """``M`` utilities of one kind, evaluated together.

    Parameters
    ----------
    kind : {"linear", "rank", "decision", "similarity"}
        See the module docstring.
    params : ndarray
        ``linear``: payoffs ``A`` of shape ``(M, C)``; ``rank``: valuations ``Theta``
        ``(M, C)`` (position ``r`` of the descending order gets ``Theta[:, r]``);
        ``decision``: losses ``L`` ``(M, C, K)`` (``L[m, y, a]``); ``similarity``:
        ``S`` ``(M, C, C)``.  Every entry in ``[-1, 1]``.
    names : tuple of str
        One per utility (shown as the worst utilities in reports).
    label : str
        The class's name, e.g. ``"U_CWE"``.

    Examples
    --------
    >>> fam = classwise(3)
    >>> len(fam), fam.names
    (3, ('class 0', 'class 1', 'class 2'))
    >>> V, U = fam.values([0, 2], np.array([[0.5, 0.3, 0.2], [0.1, 0.1, 0.8]]))
    >>> V.tolist(), U.tolist()
    ([[0.5, 0.1], [0.3, 0.1], [0.2, 0.8]], [[1.0, 0.0], [0.0, 0.0], [0.0, 1.0]])
    """

    kind: str
    params: np.ndarray
    names: tuple
    label: str = ""

    def __post_init__(self):
        if self.kind not in _KINDS:
            raise ValueError(f"kind: expected one of {_KINDS}, got {self.kind!r}")
        ndim = 2 if self.kind in ("linear", "rank") else 3
        a = _check_bounded(self.params, "params", ndim)
        if self.kind == "similarity" and a.shape[1] != a.shape[2]:
            raise ValueError(f"params: similarity matrices must be square, got {a.shape[1:]}")
        names = tuple(str(s) for s in self.names)
        if len(names) != a.shape[0]:
            raise ValueError(f"names: {len(names)} names for {a.shape[0]} utilities")
        a.setflags(write=False)
        object.__setattr__(self, "params", a)
        object.__setattr__(self, "names", names)

    def __len__(self) -> int:
        return int(self.params.shape[0])

    def __repr__(self) -> str:
        return (f"UtilityFamily({self.label or self.kind!r}, {len(self)} utilities,"
                f" {self.n_classes} classes)")

    @property
    def n_classes(self) -> int:
        """Number of classes ``C`` the utilities are defined for."""
        return int(self.params.shape[1])

    def take(self, index) -> "UtilityFamily":
        """The utilities at ``index`` (an int, slice or integer array) as a family."""
        idx = np.atleast_1d(np.arange(len(self))[index])
        return UtilityFamily(self.kind, self.params[idx], tuple(self.names[i] for i in idx),
                             self.label)

    def _check_width(self, P: np.ndarray) -> None:
        if P.shape[1] != self.n_classes:
            raise ValueError(f"predictions: have {P.shape[1]} classes but the utilities"
                             f" {self.label or self.kind} are defined for {self.n_classes}")

    def per_class(self, P: np.ndarray) -> np.ndarray:
        """``ubar``: the utility of every class at every prediction, shape ``(M, n, C)``.

        ``P`` must be a validated ``(n, C)`` probability matrix.  Meant for small problems
        (populations, patching); :meth:`values` is the fast path.
        """
        P = np.asarray(P, dtype=np.float64)
        self._check_width(P)
        n, C = P.shape
        prm = self.params
        if self.kind == "linear":
            return np.broadcast_to(prm[:, None, :], (len(self), n, C)).copy()
        if self.kind == "rank":
            lo, hi = rank_positions(P)
            cum = np.concatenate([np.zeros((len(self), 1)), np.cumsum(prm, axis=1)], axis=1)
            return _tie_mean(cum, lo, hi)
        if self.kind == "similarity":
            return np.einsum("ni,mij->mnj", P, prm)
        return -self._decision_losses(P)

    def _decision_losses(self, P: np.ndarray) -> np.ndarray:
        """``l(e_j, delta(p))`` averaged over tied Bayes actions: ``(M, n, C)``."""
        out = np.empty((len(self), P.shape[0], self.n_classes))
        for m, L in enumerate(self.params):
            E = P @ L                                           # (n, K) expected losses
            best = E.min(axis=1, keepdims=True)
            tied = E <= best + utility_tie_tolerance(self.n_classes)
            out[m] = (tied @ L.T) / tied.sum(axis=1, keepdims=True)
        return out

    def predicted(self, P: np.ndarray) -> np.ndarray:
        """Predicted utilities ``v_u(X) = <f(X), ubar(X)>``, shape ``(M, n)``."""
        P = np.asarray(P, dtype=np.float64)
        self._check_width(P)
        if self.kind == "linear":
            return self.params @ P.T
        if self.kind == "rank":
            return self.params @ (-np.sort(-P, axis=1)).T
        return np.einsum("nj,mnj->mn", P, self.per_class(P))

    def values(self, labels, predictions) -> tuple[np.ndarray, np.ndarray]:
        """Predicted and realized utilities ``(V, U)``, each ``(M, n)``.

        Parameters
        ----------
        labels : array_like of int, shape (n,)
        predictions : array_like, shape (n, C)
            Probability rows (validated; binary ``(n,)`` is read as ``[1 - p, p]``).
        """
        y, P = _check_data(labels, predictions)
        return self._values(y, P)

    @staticmethod
    def _rank_inputs(y: np.ndarray, P: np.ndarray):
        """What every rank utility needs, computed once: sorted rows, the label's tie group."""
        py = P[np.arange(P.shape[0]), y][:, None]
        return -np.sort(-P, axis=1), (P > py).sum(axis=1), (P >= py).sum(axis=1)

    def _values(self, y: np.ndarray, P: np.ndarray, rank_inputs=None):
        self._check_width(P)
        prm = self.params
        if self.kind == "linear":
            return prm @ P.T, prm[:, y]
        if self.kind == "rank":
            Ps, lo, hi = rank_inputs or self._rank_inputs(y, P)
            cum = np.concatenate([np.zeros((len(self), 1)), np.cumsum(prm, axis=1)], axis=1)
            return prm @ Ps.T, _tie_mean(cum, lo, hi)
        ubar = self.per_class(P)
        V = np.einsum("nj,mnj->mn", P, ubar)
        return V, ubar[:, np.arange(P.shape[0]), y]


def linear(payoffs, names=None, label: str = "U_lin") -> UtilityFamily:
    """Linear utilities ``u_a(p, e_j) = a_j`` (Example 3.6), one per row of ``payoffs``.

    Examples
    --------
    >>> fam = linear([[1.0, -1.0]])
    >>> fam.values([0, 1], [[0.75, 0.25], [0.5, 0.5]])[0].tolist()
    [[0.5, 0.0]]
    """
    A = np.atleast_2d(np.asarray(payoffs, dtype=np.float64))
    names = names or tuple(f"lin[{m}]" for m in range(A.shape[0]))
    return UtilityFamily("linear", A, tuple(names), label)


def classwise(n_classes: int) -> UtilityFamily:
    """``U_CWE`` (Example 3.5): ``u_c(p, e_j) = 1{j = c}``, so ``v = p_c``; one per class.

    Examples
    --------
    >>> classwise(2).params.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    C = _check_count(n_classes, "n_classes", 2)
    return UtilityFamily("linear", np.eye(C), tuple(f"class {c}" for c in range(C)), "U_CWE")


def rank(valuations, names=None, label: str = "U_rank") -> UtilityFamily:
    """Rank-based utilities ``u_theta(p, e_j) = theta_{rank(p, j)}`` (Example 3.7).

    Ties share positions (module *Tie rules*).

    Examples
    --------
    >>> fam = rank([[1.0, 0.0, -1.0]])
    >>> fam.values([1], [[0.2, 0.5, 0.3]])[1].tolist()   # class 1 ranked first
    [[1.0]]
    >>> fam.values([1], [[0.4, 0.4, 0.2]])[1].tolist()   # tied for first: mean of 1 and 0
    [[0.5]]
    """
    T = np.atleast_2d(np.asarray(valuations, dtype=np.float64))
    names = names or tuple(f"rank[{m}]" for m in range(T.shape[0]))
    return UtilityFamily("rank", T, tuple(names), label)


def top_k(n_classes: int, ks=None) -> UtilityFamily:
    """``U_topK`` (Example 3.7): ``theta^(K)_r = 1{r <= K}`` for ``K`` in ``ks``.

    ``ks`` defaults to ``1 .. C - 1`` (``K = C`` is constant utility one, calibrated for every
    predictor).  ``K = 1`` is the top-class utility ``U_TCE``.

    Examples
    --------
    >>> top_k(3).params.tolist()
    [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]]
    """
    C = _check_count(n_classes, "n_classes", 2)
    ks = list(range(1, C)) if ks is None else [_check_count(k, "ks", 1) for k in ks]
    if not ks or max(ks) > C:
        raise ValueError(f"ks: expected a non-empty list of K in 1..{C}, got {ks}")
    T = (np.arange(C)[None, :] < np.asarray(ks)[:, None]).astype(np.float64)
    return UtilityFamily("rank", T, tuple(f"top-{k}" for k in ks), "U_topK")


def top_class(n_classes: int) -> UtilityFamily:
    """``U_TCE`` (Example 3.5): utility one when the top class occurs; ``v = max_j p_j``.

    Examples
    --------
    >>> top_class(3).values([0, 1], [[0.5, 0.3, 0.2], [0.6, 0.2, 0.2]])[1].tolist()
    [[1.0, 0.0]]
    """
    fam = top_k(n_classes, [1])
    return UtilityFamily("rank", fam.params, ("top class",), "U_TCE")


def dcg(n_classes: int, gammas=DCG_GAMMAS) -> UtilityFamily:
    """``U_dcg`` (App. C.4): ``theta_r = log2(1 + r)^(-gamma)``, ranks ``r = 1..C``.

    Examples
    --------
    >>> dcg(3, [1.0]).params.round(4).tolist()
    [[1.0, 0.6309, 0.5]]
    """
    C = _check_count(n_classes, "n_classes", 2)
    g = np.asarray(gammas, dtype=np.float64).ravel()
    if g.size == 0 or not np.all(np.isfinite(g)) or np.any(g < 0):
        raise ValueError(f"gammas: expected non-negative numbers, got {gammas!r}")
    T = np.log2(1.0 + np.arange(1, C + 1))[None, :] ** (-g[:, None])
    return UtilityFamily("rank", T, tuple(f"dcg(gamma={x:g})" for x in g), "U_dcg")


def decision(losses, names=None, label: str = "U_dec") -> UtilityFamily:
    """Decision utilities (Example 3.8): ``u_l(p, y) = -l(y, delta_l(p))``.

    ``losses`` has shape ``(M, C, K)`` (or ``(C, K)`` for one problem), entries in
    ``[-1, 1]``; ``delta_l(p) = argmin_a sum_y p_y l(y, a)``, tied Bayes actions averaged.

    Examples
    --------
    >>> L = [[0.0, 1.0], [1.0, 0.0]]               # 0-1 loss, two actions = two classes
    >>> V, U = decision(L).values([0, 0], [[0.8, 0.2], [0.3, 0.7]])
    >>> V.round(12).tolist(), (U + 0.0).tolist()      # action 0, then action 1
    ([[-0.2, -0.3]], [[0.0, -1.0]])
    """
    L = np.asarray(losses, dtype=np.float64)
    if L.ndim == 2:
        L = L[None]
    names = names or tuple(f"dec[{m}]" for m in range(L.shape[0]))
    return UtilityFamily("decision", L, tuple(names), label)


def gain_matrix(gains, names=None, label: str = "U_gain") -> UtilityFamily:
    """App. C.2 utilities: gain ``R[i, j]`` for choosing ``j`` when ``i`` is true.

    The user picks ``j*(p) = argmax_j sum_i p_i R[i, j]`` and gets ``u_R(p, e_i) = R[i, j*]``
    (the decision utility of the loss ``-R``).  ``gains`` is ``(M, C, C)`` or ``(C, C)``.

    Examples
    --------
    >>> fam = gain_matrix(np.eye(2))
    >>> fam.values([0], [[0.9, 0.1]])[1].tolist()
    [[1.0]]
    """
    R = np.asarray(gains, dtype=np.float64)
    if R.ndim == 2:
        R = R[None]
    names = names or tuple(f"gain[{m}]" for m in range(R.shape[0]))
    return UtilityFamily("decision", -R, tuple(names), label)


def similarity(matrices, names=None, label: str = "U_sim") -> UtilityFamily:
    """Semantic-similarity utilities (App. C.4, ``U_w2v``): ``u(p, e_j) = sum_i p_i S[i, j]``.

    ``S`` is ``(C, C)`` or ``(M, C, C)`` with entries in ``[-1, 1]`` (e.g. cosine
    similarities of class embeddings, ``S[i, i] = 1``).

    Examples
    --------
    >>> S = [[1.0, 0.5], [0.5, 1.0]]
    >>> V, U = similarity(S).values([1], [[0.5, 0.5]])
    >>> V.tolist(), U.tolist()
    ([[0.75]], [[0.75]])
    """
    S = np.asarray(matrices, dtype=np.float64)
    if S.ndim == 2:
        S = S[None]
    names = names or tuple(f"sim[{m}]" for m in range(S.shape[0]))
    return UtilityFamily("similarity", S, tuple(names), label)


def _boundary_of_cube(rng, M: int, C: int) -> np.ndarray:
    """``M`` points uniform on the surface ``{||a||_inf = 1}`` of ``[-1, 1]^C``.

    The surface is ``2C`` congruent facets: pick one uniformly (coordinate and sign), and put
    the other coordinates uniform on ``[-1, 1]``.
    """
    A = rng.uniform(-1.0, 1.0, size=(M, C))
    j = rng.integers(0, C, size=M)
    A[np.arange(M), j] = rng.choice(np.array([-1.0, 1.0]), size=M)
    return A


def sample_linear(n_classes: int, n_utilities: int, *, rng, sparsity=None) -> UtilityFamily:
    """``M`` linear utilities from the paper's prior (Sec. 4): ``a`` uniform on ``||a||_inf = 1``.

    With ``sparsity = k`` (App. C.3 priors): ``k`` classes chosen uniformly, their
    coefficients uniform on ``[-1, 1]``, the rest zero, then divided by ``max |a_j|`` (so
    ``||a||_inf = 1``).

    Examples
    --------
    >>> fam = sample_linear(5, 4, rng=0)
    >>> np.abs(fam.params).max(axis=1).tolist()
    [1.0, 1.0, 1.0, 1.0]
    >>> (sample_linear(10, 3, rng=0, sparsity=2).params != 0).sum(axis=1).tolist()
    [2, 2, 2]
    """
    rng = check_rng(rng)
    C = _check_count(n_classes, "n_classes", 2)
    M = _check_count(n_utilities, "n_utilities", 1)
    if sparsity is None:
        A = _boundary_of_cube(rng, M, C)
        label = "U_lin"
    else:
        k = _check_count(sparsity, "sparsity", 1)
        if k > C:
            raise ValueError(f"sparsity: {k} active classes but only {C} classes")
        chosen = np.argsort(rng.random((M, C)), axis=1)[:, :k]
        A = np.zeros((M, C))
        np.put_along_axis(A, chosen, rng.uniform(-1.0, 1.0, size=(M, k)), axis=1)
        A /= np.abs(A).max(axis=1, keepdims=True)
        label = f"U_lin(k={k})"
    return linear(A, label=label)


def sample_rank(n_classes: int, n_utilities: int, *, rng) -> UtilityFamily:
    """``M`` rank utilities from the paper's prior (Sec. 4): uniform on the ``||theta||_inf = 1``
    surface restricted to ``theta_1 >= ... >= theta_C``.

    The uniform law on the surface is invariant under coordinate permutations, so sorting a
    uniform draw in decreasing order samples it restricted to the ordered cone.

    Examples
    --------
    >>> T = sample_rank(4, 3, rng=0).params
    >>> decreasing = bool(np.all(np.diff(T, axis=1) <= 0))
    >>> decreasing, np.abs(T).max(axis=1).tolist()
    (True, [1.0, 1.0, 1.0])
    """
    rng = check_rng(rng)
    C = _check_count(n_classes, "n_classes", 2)
    M = _check_count(n_utilities, "n_utilities", 1)
    return rank(-np.sort(-_boundary_of_cube(rng, M, C), axis=1))


def sample_gain_matrices(n_classes: int, n_utilities: int, *, rng, kind: str = "aligned",
                         n_groups: int = 4) -> UtilityFamily:
    """App. C.2 gain-matrix classes: ``"aligned"`` or ``"misaligned"`` users.

    Aligned: ``R_ii = 1``, off-diagonal ``Unif(0, 0.1)`` i.i.d.  Misaligned (specialists):
    the classes are split into ``n_groups`` disjoint groups; a user specialising in group
    ``K_m`` has ``R_ij = 0.2`` for ``i != j`` both in ``K_m`` and 0 otherwise off the diagonal.
    The paper does not say how the groups are formed or how a specialist is drawn: here the
    groups are a random equal split drawn once per call and each utility's group is uniform.

    Examples
    --------
    >>> R = -sample_gain_matrices(4, 2, rng=0, kind="misaligned", n_groups=2).params
    >>> np.diag(R[0]).tolist(), sorted(set(R[0].ravel().tolist()))
    ([1.0, 1.0, 1.0, 1.0], [0.0, 0.2, 1.0])
    """
    rng = check_rng(rng)
    C = _check_count(n_classes, "n_classes", 2)
    M = _check_count(n_utilities, "n_utilities", 1)
    if kind == "aligned":
        R = rng.uniform(0.0, 0.1, size=(M, C, C))
    elif kind == "misaligned":
        G = _check_count(n_groups, "n_groups", 1)
        groups = np.array_split(rng.permutation(C), min(G, C))
        R = np.zeros((M, C, C))
        for m, g in enumerate(rng.integers(0, len(groups), size=M)):
            members = groups[g]
            R[m][np.ix_(members, members)] = 0.2
    else:
        raise ValueError(f"kind: expected 'aligned' or 'misaligned', got {kind!r}")
    R[:, np.arange(C), np.arange(C)] = 1.0
    return gain_matrix(R, tuple(f"{kind}[{m}]" for m in range(M)), f"U_gain({kind})")


# --------------------------------------------------------------------------------------------
# the estimator (Lemma 3.4)
# --------------------------------------------------------------------------------------------
@dataclass(frozen=True, eq=False)
class UCResult:
    """Utility calibration errors of ``M`` utilities and their worst intervals.

    Attributes
    ----------
    values : ndarray, shape (M,)
        ``UC`` (or its estimate) per utility.
    lower, upper : ndarray, shape (M,)
        The worst interval ``[lower, upper]`` of predicted utility (NaN when ``values`` is 0).
    sign : ndarray, shape (M,)
        ``+1``: realized utility *above* predicted on the worst interval (the model is too
        pessimistic there), ``-1``: below (too optimistic), ``0``: no deviation.
    mass : ndarray, shape (M,)
        Fraction of samples (probability) in the worst interval.
    names : tuple of str
    """

    values: np.ndarray
    lower: np.ndarray
    upper: np.ndarray
    sign: np.ndarray
    mass: np.ndarray
    names: tuple = ()

    def __len__(self) -> int:
        return int(self.values.size)

    @property
    def max(self) -> float:
        """``UC(f, U)``: the largest error (eq. 3.5 over the utilities evaluated)."""
        return float(self.values.max())

    def worst(self, k: int = 5) -> list[dict]:
        """The ``k`` utilities with the largest errors, largest first.

        Errors within :data:`WORST_TIE_RTOL` of the largest remaining one (relative to the
        largest error) count as tied, and the tie goes to the lower index (the lower class):
        for a binary model ``U_CWE``'s two errors are equal in exact arithmetic and differ by
        rounding alone (``1e-14``), which the row order would otherwise decide.  The values
        are not changed."""
        vals = np.asarray(self.values, dtype=np.float64)
        finite = vals[np.isfinite(vals)]
        tol = WORST_TIE_RTOL * (float(np.abs(finite).max()) if finite.size else 0.0)
        remaining = np.ones(vals.size, dtype=bool)
        order = []
        for _ in range(min(int(k), vals.size)):
            left = np.flatnonzero(remaining)
            best = np.nanmax(vals[left]) if np.isfinite(vals[left]).any() else np.nan
            tied = left[vals[left] >= best - tol] if np.isfinite(best) else left[:1]
            order.append(int(tied[0]))
            remaining[tied[0]] = False
        return [{"utility": self.names[i] if self.names else int(i),
                 "uc": float(self.values[i]), "lower": float(self.lower[i]),
                 "upper": float(self.upper[i]), "sign": int(self.sign[i]),
                 "mass": float(self.mass[i])} for i in order]

    @staticmethod
    def concatenate(results) -> "UCResult":
        """One result from several (e.g. the union of utility classes)."""
        results = list(results)
        cat = [np.concatenate([getattr(r, a) for r in results])
               for a in ("values", "lower", "upper", "sign", "mass")]
        return UCResult(*cat, names=tuple(n for r in results for n in r.names))


def _check_values(predicted, realized, weights):
    try:
        V = np.asarray(predicted, dtype=np.float64)
        U = np.asarray(realized, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError("predicted, realized: expected numbers") from exc
    if V.ndim not in (1, 2):
        raise ValueError(f"predicted: expected shape (n,) or (M, n), got {V.shape}")
    if V.shape != U.shape:
        raise ValueError(f"realized: shape {U.shape} differs from predicted's {V.shape}")
    if V.shape[-1] == 0:
        raise ValueError("predicted: is empty (no samples)")
    for name, a in (("predicted", V), ("realized", U)):
        if not np.all(np.isfinite(a)):
            raise ValueError(f"{name}: contains NaN or infinite values")
    one = V.ndim == 1
    V2, U2 = np.atleast_2d(V), np.atleast_2d(U)
    n = V2.shape[1]
    if weights is None:
        w = None
    else:
        w = np.asarray(weights, dtype=np.float64)
        if w.shape != (n,):
            raise ValueError(f"weights: expected shape ({n},), got {w.shape}")
        if not np.all(np.isfinite(w)) or np.any(w < 0) or w.sum() <= 0:
            raise ValueError("weights: expected finite non-negative numbers with a positive sum")
        w = w / w.sum()
    return V2, U2, w, one


def _scan(V: np.ndarray, R: np.ndarray, tie_tol: float):
    """Max-minus-min of prefix sums of ``R`` in the order of ``V``, at tie-group boundaries.

    ``R`` already carries the weights (sum of ``R`` over an interval is the interval's
    signed deviation).  Returns ``(values, lower, upper, sign, lo, hi)``.
    """
    return _scan_ordered(V, R, tie_tol)[0]


#: Elements of the row blocks that :func:`_scan_ordered` processes at a time (1 MB of float64:
#: the dozen passes over a block stay in the cache).
_SCAN_BLOCK = 1 << 17


def _scan_ordered(V: np.ndarray, R: np.ndarray, tie_tol: float, hint=None):
    """:func:`_scan` and the order used: ``np.argsort(V, axis=1, kind="stable")`` (equal
    predicted utilities in input order, so the sums do not depend on the platform's sort).

    ``hint``, optional: an order of the samples under which many rows of ``V`` are already
    monotone (for two classes every linear utility is ``a_0 + (a_1 - a_0) p_1`` up to rounding,
    so the order of ``p_1`` sorts it, ascending or descending).  A row that the hint (or its
    reverse) sorts, as checked on the gathered values, takes that order (ties among equal
    values then follow the hint); the other rows are sorted.
    """
    M, n = V.shape
    step = max(1, _SCAN_BLOCK // max(n, 1))
    parts, orders = [], []
    for a in range(0, M, step):
        idx, Vs, _ = _block_order(V[a:a + step], hint)
        parts.append(_scan_sorted(Vs, take_rows(R[a:a + step], idx), tie_tol))
        orders.append(idx)
    if len(parts) == 1:
        return parts[0], orders[0]
    return tuple(np.concatenate(x) for x in zip(*parts)), np.concatenate(orders)


def _scan_utilities(V: np.ndarray, table: np.ndarray, codes: np.ndarray, n: int,
                    tie_tol: float, hint=None, rows=None):
    """:func:`_scan` of predicted utilities ``V`` ``(M, n)`` with residuals ``(U - V) / n``,
    where the realized utility of sample ``i`` under utility ``m`` is ``U[m, i] =
    table[m, codes[i]]`` (the label for a linear utility, the label's tie group for a rank
    utility: a few distinct values per utility).

    Works in row blocks (see :func:`_scan_ordered` for ``hint``) and looks the realized
    utilities up directly in sorted order, so ``U`` and the residuals are only ever held for
    one block, in the cache.  Each residual is the same number as ``((U - V) / n)[order]``.
    ``rows``, optional: the utilities are the rows ``V[rows]`` (taken a block at a time)."""
    M = V.shape[0] if rows is None else len(rows)
    step = max(1, _SCAN_BLOCK // max(n, 1))
    ahead = None if hint is None else np.take(codes, hint)
    parts = []
    for a in range(0, M, step):
        Vb = V[a:a + step] if rows is None else V[rows[a:a + step]]
        idx, Vs, how = _block_order(Vb, hint)
        Rs = np.empty(Vs.shape)
        for r in range(Vs.shape[0]):
            c = (ahead if how[r] == 1 else ahead[::-1] if how[r] == -1
                 else np.take(codes, idx[r]))
            np.take(table[a + r], c, out=Rs[r])
        Rs -= Vs
        Rs /= n
        parts.append(_scan_sorted(Vs, Rs, tie_tol))
    if len(parts) == 1:
        return parts[0]
    return tuple(np.concatenate(x) for x in zip(*parts))


def _block_order(Vb: np.ndarray, hint):
    """``(order, sorted values, how)`` of the rows of ``Vb``: the ``hint`` (``how = 1``) or its
    reverse (``-1``) where that sorts the row (checked), else the stable order (``0``):
    :func:`~calnotes._engine.row_sort.stable_row_order`, or for a row the hint almost sorts
    :func:`~calnotes._engine.row_sort.finish_stable_order` (the same order, from the gathered values:
    a stable sort of almost sorted values: 10 ms against 37 ms for a full sort at n = 10^6)."""
    m, n = Vb.shape
    if hint is None or n < 2:
        idx, Vs = stable_row_order(Vb)
        return idx, Vs, np.zeros(m, dtype=np.int8)
    how = np.where(Vb[:, hint[-1]] < Vb[:, hint[0]], -1, 1).astype(np.int8)
    idx = np.empty((m, n), dtype=np.intp)
    idx[how == 1] = hint
    idx[how == -1] = hint[::-1]
    Vs = take_rows(Vb, idx)
    bad = np.flatnonzero((Vs[:, 1:] < Vs[:, :-1]).any(axis=1))
    for r in bad.tolist():
        idx[r], Vs[r] = finish_stable_order(Vs[r], idx[r], Vb[r])
        how[r] = 0
    return idx, Vs, how


def _scan_sorted(Vs: np.ndarray, Rs: np.ndarray, tie_tol: float):
    """:func:`_scan` on rows already sorted by predicted utility (``Vs`` ascending, ``Rs`` in
    the same order)."""
    M, n = Vs.shape
    S = np.empty((M, n + 1))
    S[:, 0] = 0.0
    cumsum_rows(Rs, S[:, 1:])
    inner = (Vs[:, 1:] - Vs[:, :-1]) > tie_tol
    if inner.all():                                   # no ties: every position is a boundary
        top, bottom = S.argmax(axis=1), S.argmin(axis=1)
    else:
        boundary = np.ones((M, n + 1), dtype=bool)
        boundary[:, 1:n] = inner
        top = np.where(boundary, S, -np.inf).argmax(axis=1)
        bottom = np.where(boundary, S, np.inf).argmin(axis=1)
    rows = np.arange(M)
    values = S[rows, top] - S[rows, bottom]
    lo = np.minimum(top, bottom)
    hi = np.maximum(top, bottom)
    empty = values <= 0
    lower = np.where(empty, np.nan, Vs[rows, np.minimum(lo, n - 1)])
    upper = np.where(empty, np.nan, Vs[rows, np.maximum(hi - 1, 0)])
    sign = np.where(empty, 0, np.where(top > bottom, 1, -1))
    return np.maximum(values, 0.0), lower, upper, sign, lo, hi


def uc_from_values(predicted, realized, *, weights=None, tie_tol: float = 0.0) -> UCResult:
    """The utility calibration estimator of Lemma 3.4, from predicted and realized utilities.

    ``sup_I |sum_i w_i (realized_i - predicted_i) 1{predicted_i in I}|`` over all intervals
    ``I``, with ``w_i = 1/n`` (the estimator) or given weights (a finite population: exact
    ``UC``).  Sorting by predicted utility turns intervals into contiguous blocks; samples
    with equal predicted utility form one block that an interval contains entirely or not at
    all (*tie pooling*), so the supremum is the largest minus the smallest prefix sum taken at
    the boundaries between distinct values.  ``O(n log n)`` per utility.

    Parameters
    ----------
    predicted, realized : array_like, shape (n,) or (M, n)
        ``v_u(X_i)`` and ``u(f(X_i), Y_i)``; rows are utilities.
    weights : array_like, shape (n,), optional
        Probabilities of the samples (normalised to sum to one).
    tie_tol : float, default 0
        Predicted values within ``tie_tol`` of their neighbour in sorted order are one value.

    Returns
    -------
    UCResult
        With the worst interval of each utility.

    Examples
    --------
    The App. B.2 example: ``p`` is 0.45 or 0.55 with accuracies 0.05 and 0.95.

    >>> res = uc_from_values([0.45, 0.55], [0.05, 0.95], weights=[0.5, 0.5])
    >>> value = round(float(res.values[0]), 12)
    >>> value, res.lower.tolist(), res.sign.tolist()
    (0.2, [0.45], [-1])

    Ties are pooled: two samples at the same predicted value cannot be separated.

    >>> float(uc_from_values([0.5, 0.5], [1.0, 0.0]).values[0])
    0.0
    """
    V, U, w, _ = _check_values(predicted, realized, weights)
    tol = float(tie_tol)
    if not math.isfinite(tol) or tol < 0:
        raise ValueError(f"tie_tol: expected a non-negative number, got {tie_tol!r}")
    R = (U - V) * (w if w is not None else 1.0 / V.shape[1])
    (values, lower, upper, sign, lo, hi), order = _scan_ordered(V, R, tol)
    if w is None:
        mass = (hi - lo) / V.shape[1]
    else:
        cw = np.concatenate([np.zeros((V.shape[0], 1)), np.cumsum(w[order], axis=1)], axis=1)
        rows = np.arange(V.shape[0])
        mass = cw[rows, hi] - cw[rows, lo]
    return UCResult(values, lower, upper, sign, mass)


def uc_brute_force(predicted, realized, *, weights=None, tie_tol: float = 0.0) -> float:
    """The Lemma 3.4 estimator by enumerating every interval: ``O(d^2)`` for ``d`` distinct values.

    An independent reference for :func:`uc_from_values` (tests, the chapter, the benchmark):
    tie groups are formed by a plain loop, and every pair of groups ``a <= b`` is an interval
    whose sum is accumulated directly.

    Examples
    --------
    >>> round(uc_brute_force([0.45, 0.55], [0.05, 0.95], weights=[0.5, 0.5]), 12)
    0.2
    """
    V, U, w, one = _check_values(predicted, realized, weights)
    if not one:
        raise ValueError("predicted: the brute force takes one utility, shape (n,)")
    v, u = V[0], U[0]
    n = v.size
    wt = np.full(n, 1.0 / n) if w is None else w
    order = sorted(range(n), key=lambda i: v[i])
    sums = []
    last = None
    for i in order:
        if last is None or v[i] - last > tie_tol:
            sums.append(0.0)
        sums[-1] += wt[i] * (u[i] - v[i])
        last = v[i]
    best = 0.0
    g = np.asarray(sums)
    for a in range(g.size):
        block = np.cumsum(g[a:])                        # intervals [group a, group b]
        best = max(best, float(np.abs(block).max()))
    return best


def _check_families(utilities) -> list:
    fams = [utilities] if isinstance(utilities, UtilityFamily) else list(utilities)
    if not fams or not all(isinstance(f, UtilityFamily) for f in fams):
        raise TypeError("utilities: expected a UtilityFamily or a sequence of them")
    return fams


def _default_workers() -> int:
    """Every CPU this process may use, or ``CALNOTES_THREADS`` (as the binned rows' sorts)."""
    from .._engine import available_workers

    return available_workers()


def _chunks(M: int, step: int) -> list:
    """Slices of ``range(M)`` of at most ``max(step, 2)`` utilities; a last chunk of one joins
    the one before it.  A one-row matrix product goes through BLAS's matrix-vector kernel,
    whose rounding differs from the matrix-matrix kernel's (and BLAS may round a product of
    another number of rows differently too: the values can differ between chunk sizes by the
    products' rounding, ``C eps``)."""
    starts = list(range(0, M, max(int(step), 2)))
    if len(starts) > 1 and M - starts[-1] == 1:
        starts.pop()
    return [slice(a, b) for a, b in zip(starts, starts[1:] + [M])]


def _engine(fam: UtilityFamily) -> str:
    """How :func:`utility_calibration` computes a family's predicted utilities.

    ``"columns"``: every utility is a class-wise ``e_c`` (``v = p_c`` exactly, as the matrix
    product gives it: the other terms are exact zeros), so each is one sorted column of ``P``;
    ``"topk"``: every utility is a top-``K`` indicator ``theta = (1, .., 1, 0, .., 0)``, so ``v`` is
    a running sum of the sorted row (no matrix product); ``"product"``: the general case."""
    prm = fam.params
    ones, zeros = prm == 1.0, prm == 0.0
    if not np.all(ones | zeros):
        return "product"
    if fam.kind == "linear" and np.all(ones.sum(axis=1) == 1):
        return "columns"
    if fam.kind == "rank" and np.all(ones[:, 0]) and np.all(np.diff(prm, axis=1) <= 0):
        return "topk"
    return "product"


def _blas_single_thread():
    """A context in which BLAS runs on one thread (``threadpoolctl`` where installed): the
    matrix products run inside worker threads, and a threaded BLAS on top of them
    oversubscribes the cores (on a loaded two-core machine a 64 x 10 x 1000 product took
    0.1-0.4 s instead of 0.1 ms)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:                                # optional: only the speed differs
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(limits=1, user_api="blas")


class _Calibration:
    """The work of :func:`utility_calibration` for validated ``(y, P)``: shared inputs computed
    once (sorted rows, the label's tie group, rows by class, running sums of the sorted rows)
    and one task per chunk of utilities, each scanned in cache-sized row blocks.  With two
    classes, the linear and rank utilities that :mod:`calnotes._engine.utility_two_class` can answer from two
    shared running sums (its certificate proves the tie groups are the product's) take no
    task; their values differ from this engine's by the two summations' rounding only.

    No task allocates more than one ``(chunk, n)`` array (the matrix product's, in a buffer
    kept per thread): large short-lived arrays cost page faults and, freed, cross-CPU TLB
    flushes that serialise the threads (on a 16-core host they kept 4 of 16 cores busy)."""

    def __init__(self, y, P, fams, step, pool=None, workers: int = 1, presorted=None):
        import threading

        self.y, self.P, self.fams, self.pool, self.workers = y, P, fams, pool, workers
        self.n, self.C = P.shape
        self.tol = utility_tie_tolerance(self.C)
        self.presorted = presorted
        self.kinds = [_engine(f) for f in fams]
        self.local = threading.local()
        self.hints = {}
        rank = any(f.kind == "rank" for f in fams)
        self.Ps = self.lo = self.hi = self.CT = None
        if rank:
            self._rank_inputs()
        if self.C == 2:
            self.hints["linear"] = np.argsort(P[:, 1], kind="stable")
            if rank:
                self.hints["rank"] = np.argsort(self.Ps[:, 0], kind="stable")
        self.pairs = {}
        self.two = {f: self._two_columns(fam) for f, fam in enumerate(fams)
                    if self.C == 2 and self.kinds[f] == "product"
                    and fam.kind in ("linear", "rank")}
        self.tasks = []
        for f, fam in enumerate(fams):
            rest = np.arange(len(fam))
            if f in self.two:
                rest = np.flatnonzero(~self.two[f].ok)
            for sl in _chunks(len(rest), step):
                self.tasks.append((f, rest[sl]))
        if "columns" in self.kinds:
            by = np.argsort(y, kind="stable")
            bounds = np.searchsorted(y[by], np.arange(self.C + 1))
            self.rows_of = [by[bounds[c]:bounds[c + 1]] for c in range(self.C)]

    def _two_columns(self, fam):
        """Two classes: the family's utilities that :mod:`calnotes._engine.utility_two_class` answers from two
        running sums (the others, ``ok`` false, go to the tasks)."""
        from .._engine import TwoColumns

        prm = fam.params
        if fam.kind == "linear":
            key, x, z, share = "linear", self.P[:, 1], self.P[:, 0], (self.y == 1) * 1.0
            wx, wz = prm[:, 1], prm[:, 0]
        else:       # the label's share of the top class: 1, 0, or 1/2 where p_0 = p_1
            key, x, z = "rank", self.Ps[:, 0], self.Ps[:, 1]
            share = np.where(self.hi - self.lo == 2, 0.5, (self.lo == 0) * 1.0)
            wx, wz = prm[:, 0], prm[:, 1]
        cols = self.pairs.get(key)
        if cols is None:
            cols = self.pairs[key] = TwoColumns(x, z, share, self.hints[key])
        return cols.scan(np.ascontiguousarray(wx), np.ascontiguousarray(wz), self.tol)

    def _row_blocks(self, fn):
        """``fn(a, b)`` on row blocks ``[a, b)`` in the pool."""
        n = self.n
        size = max(1, -(-n // (4 * self.workers)))
        list(self._map(lambda a: fn(a, min(n, a + size)), range(0, n, size)))

    def _map(self, fn, items):
        return self.pool.map(fn, items) if self.pool is not None else map(fn, items)

    def _rank_inputs(self):
        """:meth:`UtilityFamily._rank_inputs` (rows sorted descending, the label's tie group)
        in row blocks, and for top-K families the running sums of the sorted rows as rows,
        ``CT[j] = sum_{r <= j} Ps[:, r]`` (``np.cumsum``, left to right)."""
        P, y = self.P, self.y
        n, C = P.shape
        Ps = np.empty((n, C))
        lo = np.empty(n, dtype=np.int64)
        hi = np.empty(n, dtype=np.int64)
        kmax = max([int(self._ks(f, slice(None)).max()) for f in range(len(self.fams))
                    if self.kinds[f] == "topk"] or [0])
        CT = np.empty((kmax, n)) if kmax else None

        def block(a, b):
            part = Ps[a:b]                  # sorted in place: no block-sized temporary
            np.negative(P[a:b], out=part)
            part.sort(axis=1)
            np.negative(part, out=part)
            py = P[np.arange(a, b), y[a:b]][:, None]
            lo[a:b] = (P[a:b] > py).sum(axis=1)
            hi[a:b] = (P[a:b] >= py).sum(axis=1)
            if kmax:
                # the running sums written as rows of CT a few rows of Ps at a time: the
                # transposed copy of a whole block (50 MB at 6,250 x 1,000) missed the cache
                # at every element (0.6 s against 0.3 s at 50,000 x 1,000, one thread)
                # (the running sums themselves over more than NUMPY_THREAD_ROWS rows at a
                # time: over fewer NumPy keeps the interpreter lock, calnotes._engine.pool)
                step = max(1, _SCAN_BLOCK // kmax)
                many = -(-(NUMPY_THREAD_ROWS + 1) // step) * step
                for t in range(a, b, many):
                    f = min(b, t + many)
                    sums = np.cumsum(Ps[t:f, :kmax], axis=1)
                    for s in range(t, f, step):
                        e = min(f, s + step)
                        CT[:, s:e] = sums[s - t:e - t].T

        self._row_blocks(block)
        self.Ps, self.lo, self.hi, self.CT = Ps, lo, hi, CT
        pairs, self.group = np.unique(lo * (C + 1) + hi, return_inverse=True)
        self.group_lo, self.group_hi = pairs // (C + 1), pairs % (C + 1)

    def _ks(self, f, idx):
        return (self.fams[f].params[idx] == 1.0).sum(axis=1)

    def _buffer(self, m: int, name: str = "buf") -> np.ndarray:
        """This thread's ``(m, n)`` work array ``name`` (kept between tasks)."""
        buf = getattr(self.local, name, None)
        if buf is None or buf.shape[0] < m:
            buf = np.empty((m, self.n))
            setattr(self.local, name, buf)
        return buf[:m]

    def _product(self, prm: np.ndarray, Q: np.ndarray) -> np.ndarray:
        """Predicted utilities ``prm @ Q.T``, shape ``(len(prm), n)``, in this thread's buffer.

        Two classes: elementwise, ``fl(fl(w_1 q_1) + fl(w_0 q_0))`` (each operation rounded
        once; the sum does not depend on the order of its terms), so a sample's value does
        not depend on its place in a matrix product's kernel or on the chunk: the same
        number :mod:`calnotes._engine.utility_two_class` computes where it decides a tie at the tolerance.
        More classes: the matrix product."""
        out = self._buffer(len(prm))
        if self.C != 2:
            return np.matmul(prm, Q.T, out=out)
        np.multiply(prm[:, 1:2], Q[:, 1], out=out)
        out += np.multiply(prm[:, 0:1], Q[:, 0], out=self._buffer(len(prm), "other"))
        return out

    # ------------------------------------------------------------------ tasks
    def run(self, task):
        f, idx = task
        fam = self.fams[f]
        kind = self.kinds[f]
        if kind == "columns":
            return f, idx, self._columns(fam, idx)
        part = fam.take(idx)
        prm = part.params
        rows = None
        if part.kind == "rank":                     # UtilityFamily._values, one tie group at a time
            if kind == "topk":
                V, rows = self.CT, self._ks(f, idx) - 1
            else:
                V = self._product(prm, self.Ps)
            cum = np.concatenate([np.zeros((len(part), 1)), np.cumsum(prm, axis=1)], axis=1)
            table, codes = _tie_mean(cum, self.group_lo, self.group_hi), self.group
        elif part.kind == "linear":
            V = self._product(prm, self.P)
            table, codes = prm, self.y
        else:
            V, U = part._values(self.y, self.P)
            table, codes = U, np.arange(self.n)
        return f, idx, _scan_utilities(V, table, codes, self.n, self.tol, self._hint(fam),
                                       rows=rows)

    def _hint(self, fam):
        """For two classes, the order that sorts every linear utility (``p_1``) or every rank
        utility (the top probability), up to rounding (:func:`_scan_ordered` checks)."""
        if self.C != 2:
            return None
        key = "rank" if fam.kind == "rank" else "linear" if fam.kind == "linear" else None
        if key is None:
            return None
        return self.hints.get(key)

    def _columns(self, fam, idx):
        """:func:`_scan_sorted` of class-wise utilities from sorted class columns, in blocks:
        the residuals ``(1{y = c} - p_c) / n`` in sorted order, the labels of class ``c``
        placed at the start of their tie group (found by binary search), which gives the same
        sums at every tie-group boundary."""
        cls = fam.params[idx].argmax(axis=1)
        n = self.n
        step = max(1, _SCAN_BLOCK // max(n, 1))
        parts = []
        for a in range(0, cls.size, step):
            cb = cls[a:a + step]
            if self.presorted is not None:
                Vs = self.presorted[cb]
            else:
                Vs = np.empty((cb.size, n))
                Vs[...] = self.P[:, cb].T
                Vs.sort(axis=1)
            Rs = np.zeros(Vs.shape)
            for j, c in enumerate(cb):
                rows = self.rows_of[c]
                if rows.size:
                    left = np.sort(np.searchsorted(Vs[j], self.P[rows, c], side="left"))
                    left += np.arange(left.size) - np.searchsorted(left, left, side="left")
                    Rs[j, left] = 1.0
            Rs -= Vs
            Rs /= n
            parts.append(_scan_sorted(Vs, Rs, self.tol))
        if len(parts) == 1:
            return parts[0]
        return tuple(np.concatenate(x) for x in zip(*parts))

    def results(self):
        parts = list(self._map(self.run, self.tasks))
        for f, found in self.two.items():
            idx = np.flatnonzero(found.ok)
            parts.append((f, idx, found.take(idx)))
        out = []
        for f, fam in enumerate(self.fams):
            M = len(fam)
            arrays = {a: np.empty(M) for a in ("values", "lower", "upper", "mass")}
            sign = np.empty(M, dtype=np.int64)
            for g, idx, (values, lower, upper, sgn, lo, hi) in parts:
                if g != f:
                    continue
                arrays["values"][idx] = values
                arrays["lower"][idx] = lower
                arrays["upper"][idx] = upper
                arrays["mass"][idx] = (hi - lo) / self.n
                sign[idx] = sgn
            out.append(UCResult(arrays["values"], arrays["lower"], arrays["upper"], sign,
                                arrays["mass"], fam.names))
        return out


def _uc_families(y, P, fams, *, chunk: int, workers: int, presorted=None) -> list:
    """:func:`utility_calibration` of each family of ``fams`` on validated ``(y, P)``, one
    :class:`UCResult` per family, on ``workers`` threads.  ``presorted``, optional: the
    columns of ``P`` sorted ascending, shape ``(C, n)`` (the class-wise utilities reuse them)."""
    with _blas_single_thread():
        if workers > 1:
            from .._engine import worker_pool

            with worker_pool(workers) as pool:
                return _Calibration(y, P, fams, chunk, pool, workers, presorted).results()
        return _Calibration(y, P, fams, chunk, presorted=presorted).results()


def utility_calibration(labels, predictions, utilities, *, chunk: int = _CHUNK,
                        workers: int | None = None) -> UCResult:
    """Estimated ``UC(f, u)`` for every utility (Lemma 3.4), with the worst intervals.

    Parameters
    ----------
    labels : array_like of int, shape (n,)
    predictions : array_like, shape (n, C)
        Probability rows (checked: finite, in ``[0, 1]``, rows summing to one).
    utilities : UtilityFamily or sequence of UtilityFamily
        Several families are evaluated in turn and concatenated (a union class).
    chunk : int, default 64
        Utilities evaluated together; bounds the ``(chunk, n)`` working arrays.
    workers : int, optional
        Threads that evaluate chunks concurrently (NumPy's sorts release the GIL); default
        every CPU this process may use.  Every chunk is computed the same way whatever the
        number of threads, so the result does not depend on it.

    Returns
    -------
    UCResult
        ``.max`` is ``UC(f, U)`` over the utilities given (eq. 3.5).

    Raises
    ------
    ValueError
        Invalid labels or predictions (message names the argument), or a family defined for
        another number of classes.

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(4), size=2000)
    >>> y = (P.cumsum(axis=1) > rng.random((2000, 1))).argmax(axis=1)   # calibrated
    >>> res = utility_calibration(y, P, [classwise(4), top_k(4)])
    >>> len(res), bool(res.max < 0.05)
    (7, True)
    """
    y, P = _check_data(labels, predictions)
    fams = _check_families(utilities)
    step = _check_count(chunk, "chunk", 1)
    threads = _default_workers() if workers is None else _check_count(workers, "workers", 1)
    for fam in fams:
        fam._check_width(P)
    return UCResult.concatenate(_uc_families(y, P, fams, chunk=step, workers=threads))


def uc_class(labels, predictions, utilities) -> float:
    """``UC(f, U)`` (eq. 3.5): the largest estimated error over the given utilities.

    Examples
    --------
    >>> uc_class([0, 1], [[1.0, 0.0], [0.0, 1.0]], classwise(2))
    0.0
    """
    return utility_calibration(labels, predictions, utilities).max


def population_uc(dist, utilities) -> UCResult:
    """Exact ``UC(f, u)`` on a finite population (:class:`~calnotes.theory.population.FiniteDistribution`).

    Each atom contributes ``w_a <T_a - F_a, ubar(F_a)>`` (eq. 3.3) at its predicted utility
    ``<F_a, ubar(F_a)>``; the supremum over intervals is then the weighted estimator.

    Examples
    --------
    >>> from calnotes.theory.population import FiniteDistribution
    >>> d = FiniteDistribution([0.5, 0.5], [[0.95, 0.05], [0.05, 0.95]],
    ...                        [[0.55, 0.45], [0.45, 0.55]])
    >>> round(population_uc(d, top_class(2)).max, 12)      # App. B.2: both atoms at p* = 0.55
    0.4
    """
    F = np.asarray(dist.prediction, dtype=np.float64)
    T = np.asarray(dist.truth, dtype=np.float64)
    w = np.asarray(dist.weights, dtype=np.float64)
    out = []
    for fam in _check_families(utilities):
        ubar = fam.per_class(F)                              # (M, A, C)
        V = np.einsum("aj,maj->ma", F, ubar)
        Rexp = np.einsum("aj,maj->ma", T, ubar)              # E[u(f, Y) | atom]
        (values, lower, upper, sign, lo, hi), order = _scan_ordered(
            V, (Rexp - V) * w, utility_tie_tolerance(F.shape[1]))
        cw = np.concatenate([np.zeros((V.shape[0], 1)), np.cumsum(w[order], axis=1)], axis=1)
        rows = np.arange(V.shape[0])
        out.append(UCResult(values, lower, upper, sign, cw[rows, hi] - cw[rows, lo],
                            fam.names))
    return UCResult.concatenate(out)


# --------------------------------------------------------------------------------------------
# eCDF over a utility class, DKW band (Thm B.11)
# --------------------------------------------------------------------------------------------
def dkw_halfwidth(n_utilities: int, delta: float) -> float:
    """``sqrt(ln(2/delta) / (2M))``: the DKW-Massart band half-width (Thm B.11).

    ``P(sup_e |F_M(e) - F(e)| > halfwidth) <= delta`` for the eCDF ``F_M`` of ``M`` i.i.d.
    draws from any ``F`` (Massart, 1990).

    Examples
    --------
    >>> round(dkw_halfwidth(1500, 0.05), 4)
    0.0351
    """
    M = _check_count(n_utilities, "n_utilities", 1)
    return math.sqrt(math.log(2.0 / _check_delta(delta)) / (2.0 * M))


@dataclass(frozen=True, eq=False)
class UtilityECDF:
    """The eCDF of utility calibration errors over ``M`` sampled utilities, with its band.

    ``F(e) = #{m : E_m <= e} / M``.  The band at level ``1 - delta`` is

        max(F(e - eps_stat) - h, 0) <= F_E(e) <= min(F(e + eps_stat) + h, 1),
        h = sqrt(ln(2/delta) / (2M)),

    the DKW band widened horizontally by ``eps_stat``, a uniform bound on
    ``|UC_hat(f, u; S) - UC(f, u)|`` over the class (first step of the proof of Thm B.11).
    With ``eps_stat = 0`` it covers the CDF of the *estimated* errors, not of the true ones.

    Attributes
    ----------
    errors : ndarray, shape (M,)
        Sorted errors.
    delta, eps_stat, halfwidth : float
    label : str
    result : UCResult or None
        The per-utility results the errors came from.
    """

    errors: np.ndarray
    delta: float
    eps_stat: float
    halfwidth: float
    label: str = ""
    result: UCResult | None = None

    def __call__(self, e) -> np.ndarray:
        """``F(e)`` (right-continuous)."""
        return np.searchsorted(self.errors, np.asarray(e, dtype=np.float64),
                               side="right") / self.errors.size

    def lower(self, e) -> np.ndarray:
        """Lower band ``max(F(e - eps_stat) - h, 0)``."""
        return np.clip(self(np.asarray(e) - self.eps_stat) - self.halfwidth, 0.0, 1.0)

    def upper(self, e) -> np.ndarray:
        """Upper band ``min(F(e + eps_stat) + h, 1)``."""
        return np.clip(self(np.asarray(e) + self.eps_stat) + self.halfwidth, 0.0, 1.0)

    def quantile(self, q) -> np.ndarray:
        """Empirical quantiles of the errors (``numpy.quantile``, ``"inverted_cdf"``)."""
        return np.quantile(self.errors, q, method="inverted_cdf")


def ecdf_from_errors(errors, *, delta: float = 0.05, eps_stat: float = 0.0,
                     label: str = "", result=None) -> UtilityECDF:
    """A :class:`UtilityECDF` from precomputed errors.

    Examples
    --------
    >>> F = ecdf_from_errors([0.1, 0.3, 0.2, 0.4], delta=0.5)
    >>> F([0.0, 0.25, 1.0]).tolist(), round(F.halfwidth, 3)
    ([0.0, 0.5, 1.0], 0.416)
    """
    E = np.sort(np.asarray(errors, dtype=np.float64).ravel())
    if E.size == 0:
        raise ValueError("errors: is empty")
    if not np.all(np.isfinite(E)):
        raise ValueError("errors: contains NaN or infinite values")
    eps = float(eps_stat)
    if not math.isfinite(eps) or eps < 0:
        raise ValueError(f"eps_stat: expected a non-negative number, got {eps_stat!r}")
    E.setflags(write=False)
    return UtilityECDF(E, _check_delta(delta), eps, dkw_halfwidth(E.size, delta), label, result)


def utility_ecdf(labels, predictions, utilities, *, delta: float = 0.05,
                 eps_stat: float = 0.0) -> UtilityECDF:
    """eCDF of estimated utility calibration errors over sampled utilities (Sec. 4, Thm B.11).

    Examples
    --------
    >>> rng = np.random.default_rng(0)
    >>> P = rng.dirichlet(np.ones(5), size=500)
    >>> y = (P.cumsum(axis=1) > rng.random((500, 1))).argmax(axis=1)
    >>> F = utility_ecdf(y, P, sample_linear(5, 200, rng=1))
    >>> F.errors.size, bool(F.quantile(0.5) < 0.05)
    (200, True)
    """
    res = utility_calibration(labels, predictions, utilities)
    labels_ = [f.label for f in _check_families(utilities)]
    return ecdf_from_errors(res.values, delta=delta, eps_stat=eps_stat,
                            label=" + ".join(x for x in labels_ if x), result=res)


def _cdf_at(sorted_vals: np.ndarray, cum: np.ndarray, x: np.ndarray, side: str) -> np.ndarray:
    return cum[np.searchsorted(sorted_vals, x, side=side)]


def _step_cdf(values, weights):
    v = np.asarray(values, dtype=np.float64).ravel()
    w = (np.full(v.size, 1.0 / v.size) if weights is None
         else np.asarray(weights, dtype=np.float64).ravel() / np.sum(weights))
    order = np.argsort(v, kind="stable")
    return v[order], np.concatenate([[0.0], np.cumsum(w[order])])


def step_cdf_distance(sample, reference, *, reference_weights=None, norm: str = "sup",
                      support=(0.0, 2.0)) -> float:
    """Distance between the eCDF of ``sample`` and the (weighted) step CDF of ``reference``.

    ``norm="sup"``: ``sup_e |F_sample(e) - F_ref(e)|`` (attained at a jump or just before
    one; both are evaluated).  ``norm="l2"``: the ``L^2`` distance on ``support``
    (``[0, 2]`` in Thm B.11), integrated exactly between jumps.

    Examples
    --------
    >>> step_cdf_distance([0.5], [1.0])
    1.0
    >>> round(step_cdf_distance([0.5], [1.0], norm="l2"), 6)     # sqrt(0.5 * 1^2)
    0.707107
    """
    a, ca = _step_cdf(sample, None)
    b, cb = _step_cdf(reference, reference_weights)
    if norm == "sup":
        x = np.union1d(a, b)
        right = np.abs(_cdf_at(a, ca, x, "right") - _cdf_at(b, cb, x, "right"))
        left = np.abs(_cdf_at(a, ca, x, "left") - _cdf_at(b, cb, x, "left"))
        return float(max(right.max(), left.max()))
    if norm == "l2":
        lo, hi = support
        x = np.union1d(np.union1d(a, b), [lo, hi])
        x = x[(x >= lo) & (x <= hi)]
        diff = _cdf_at(a, ca, x[:-1], "right") - _cdf_at(b, cb, x[:-1], "right")
        return float(math.sqrt(np.sum(diff ** 2 * np.diff(x))))
    raise ValueError(f"norm: expected 'sup' or 'l2', got {norm!r}")


def band_covers(ecdf: UtilityECDF, reference, *, reference_weights=None) -> bool:
    """Does the band of ``ecdf`` contain the step CDF of ``reference`` everywhere?

    Checked at every jump of either function and just before it (the band and the reference
    are right-continuous step functions, so these points decide).

    Examples
    --------
    >>> F = ecdf_from_errors(np.linspace(0, 1, 101), delta=0.05)
    >>> band_covers(F, np.linspace(0, 1, 1001)), band_covers(F, np.linspace(0.5, 1.5, 11))
    (True, False)
    """
    b, cb = _step_cdf(reference, reference_weights)
    e = ecdf.errors
    x = np.unique(np.concatenate([b, e - ecdf.eps_stat, e + ecdf.eps_stat]))
    ok = True
    for side in ("right", "left"):
        ref = _cdf_at(b, cb, x, side)
        Fm = _cdf_at(e, np.arange(e.size + 1) / e.size, x - ecdf.eps_stat, side)
        Fp = _cdf_at(e, np.arange(e.size + 1) / e.size, x + ecdf.eps_stat, side)
        slack = 1e-12
        ok &= bool(np.all(ref >= np.clip(Fm - ecdf.halfwidth, 0, 1) - slack))
        ok &= bool(np.all(ref <= np.clip(Fp + ecdf.halfwidth, 0, 1) + slack))
    return ok
