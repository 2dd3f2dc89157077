"""Exact population calibration errors on finite discrete distributions.

The ground truth of Part III.  A population is a :class:`FiniteDistribution`: atoms
``i = 1..N`` with probability ``weights[i]``, the true conditional distribution of the label
``truth[i] = P(Y | X = x_i)`` and the predictor's output ``prediction[i] = f(x_i)``, both in the
simplex.  Every population quantity of the proper-calibration-errors paper (Gruber & Buettner,
*Better Uncertainty Calibration via Proper Scores for Classification and Beyond*, NeurIPS 2022,
"003") and of the reassessing paper (*Reassessing How to Compare and Improve the Calibration of
Machine Learning Models*, "004") is then a finite sum over atoms, computed here exactly:

* conditional expectations (:func:`conditional_expectation`): canonical ``E[Y | f(X)]``,
  class-wise ``P(Y = r | f_r(X))``, top-label ``P(Y = C | f_C(X))``;
* the proper calibration error ``CE_S`` (003 Def 4.2 / Lemma D.1,
  :func:`calibration_error_proper`), the canonical ``CE_p`` (003 Def 2, :func:`ce_p`),
  ``TCE_p`` and ``CWCE_p`` (003 Def C.1), ``KS`` (Def C.2, :func:`ks_error`), ``MMCE``
  (Def C.3), ``KCE`` / ``SKCE`` (Def C.4 and App. F eq. (55));
* the Bregman decomposition of 004 Lemma 4.1 (:func:`bregman_decomposition`) and the confidence
  calibration error of 004 Sec. 4.1 / Lemma 4.6 (:func:`confidence_calibration_error`).

Exact rationals: a distribution built from :class:`fractions.Fraction` (or integer) entries keeps
them, and ``exact=True`` returns Fractions for every quantity that is rational (conditional
expectations, Brier and 0-1 based errors, ``TCE_p^p``, ``CWCE_p^p``, ``CE_p^p`` for integer
``p``, KS), so identities can be checked with ``==``.  :func:`random_finite_distribution` draws
such distributions on a grid and *forces* the collisions that make canonical, class-wise and
top-label conditioning differ (when all values are distinct the three coincide and every claim
about them holds vacuously).

**Conventions.**

* **Divergence order**: truth first, as :func:`calnotes.core.scores.divergence` and 004 (4.1):
  ``d(q, p) = E_{Y~q} l(p, Y) - H(q)`` with ``q`` the conditional ``E[Y | f(X)]`` and ``p``
  the prediction.  003 (Def C.6) writes the same number as ``d_S(f(X), P_{Y|f(X)})``,
  prediction first.
* **Brier** is summed over classes, ``||p - e_y||^2`` (``calnotes.BRIER``); its divergence
  is ``||q - p||^2``, the Bregman divergence of ``calnotes.SQUARED_NORM``.
* **Predicted class** ``C``: the first maximum (smallest index) of ``f(X)``, as
  :func:`calnotes.confidence_scores` and ``numpy.argmax``.
* **Top-label conditioning** follows 003 Def C.1 and eq. (9) literally: ``P(Y = C | f_C(X))``
  conditions on the *value* of the top probability ``max_r f_r(X)`` only, so atoms with the same
  confidence but different predicted classes are pooled (also 004 (2.2): ``h(X) = max``).
  ``given="class_and_confidence"`` conditions on ``(C, f_C(X))`` instead.
* **Null sets**: a group of atoms of total weight zero has no conditional distribution; the
  plain average of its truths is used (any choice is a version of the conditional expectation,
  and it contributes nothing to any expectation).
* Floating-point results are sums of at most a few hundred terms: they agree with the exact
  rational values to about ``1e-12`` relative.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Callable

import numpy as np

from .._validate import check_probabilities, check_rng
from ..core.scores import (NEG_ENTROPY, SQUARED_NORM, BregmanGenerator, ProperLoss, bregman_divergence,
                           divergence, expected_loss, get_loss)

__all__ = [
    "FiniteDistribution",
    "random_finite_distribution",
    "collision_counts",
    "conditional_expectation",
    "expected_score",
    "calibration_error_proper",
    "ce_p",
    "tce",
    "cwce",
    "ks_error",
    "mmce",
    "skce",
    "kce",
    "bregman_decomposition",
    "confidence_calibration_error",
    "accuracy",
    "binned_ece",
    "accuracy_preserving_transform",
    "top_label_calibrated_not_calibrated",
    "CONDITIONING",
    "KS_READINGS",
    "CONFIDENCE_PAIRS",
]

#: The kinds of conditioning :func:`conditional_expectation` knows.
CONDITIONING = ("canonical", "classwise", "top_label", "top_label_class")
#: The readings of 003 Def C.2 that :func:`ks_error` computes.
KS_READINGS = ("definition", "proof", "confidence")
#: The pairs ``(phi, varphi)`` of 004 Sec. 4.1 that :func:`confidence_calibration_error` knows.
CONFIDENCE_PAIRS = ("brier", "log")

_WEIGHT_SUM_ATOL = 1e-12


# --------------------------------------------------------------------------- validation

def _is_rational_array(x) -> bool:
    """Every entry of ``x`` is a Fraction or a (non-bool) integer."""
    if isinstance(x, np.ndarray) and x.dtype != object:
        return bool(np.issubdtype(x.dtype, np.integer))
    try:
        arr = np.asarray(x, dtype=object)
    except (TypeError, ValueError):
        return False
    return arr.size > 0 and all(
        isinstance(v, Fraction) or (isinstance(v, numbers.Integral) and not isinstance(v, bool))
        for v in arr.ravel())


def _to_fractions(x) -> np.ndarray:
    arr = np.asarray(x, dtype=object)
    out = np.empty(arr.shape, dtype=object)
    for idx, v in np.ndenumerate(arr):
        out[idx] = Fraction(v)
    return out


def _check_weights(weights) -> np.ndarray:
    try:
        w = np.asarray(weights, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"weights: could not convert to a float array ({exc})") from None
    if w.ndim != 1 or w.size == 0:
        raise ValueError("weights: expected a non-empty 1-d array of atom probabilities, got"
                         f" shape {w.shape}")
    bad = ~np.isfinite(w)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"weights: non-finite weight {float(w[i])} at index {i}")
    bad = w < 0
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"weights: negative weight {float(w[i])!r} at index {i}; atom"
                         " probabilities must be non-negative")
    total = float(w.sum())
    if abs(total - 1.0) > _WEIGHT_SUM_ATOL:
        raise ValueError(f"weights: the atom probabilities sum to {total!r}, not 1 (tolerance"
                         f" {_WEIGHT_SUM_ATOL:g}); divide them by their sum")
    return w


def _check_matrix(x, name: str) -> np.ndarray:
    P = check_probabilities(x, name=name)
    return np.column_stack([1.0 - P, P]) if P.ndim == 1 else P


def _exact_matrix(x, name: str) -> np.ndarray:
    Q = _to_fractions(x)
    if Q.ndim == 1:
        Q = np.column_stack([1 - Q, Q])
    for i, row in enumerate(Q):
        total = sum(row)
        if total != 1:
            raise ValueError(f"{name}: row {i} sums to {total}, not exactly 1 (the entries are"
                             " exact rationals, so the sum must be exact)")
    return Q


def _readonly(a: np.ndarray) -> np.ndarray:
    a = np.array(a, copy=True)
    a.setflags(write=False)
    return a


@dataclass(frozen=True, eq=False)
class FiniteDistribution:
    """A finite population: atoms with weights, true conditionals and predictions.

    With probability ``weights[i]`` the input is atom ``i``; then the label is drawn from
    ``truth[i] = P(Y | X = x_i)`` and the predictor outputs ``prediction[i] = f(x_i)``.

    Parameters
    ----------
    weights : array_like, shape (N,)
        Non-negative, summing to one (within ``1e-12``; exactly for rational input).
    truth, prediction : array_like, shape (N, k) or (N,)
        Rows in the simplex (``(N,)`` means binary, ``P(Y = 1)``), checked by
        the shared probability checks.

    Notes
    -----
    If every entry of the three inputs is a :class:`fractions.Fraction` or an integer, the
    distribution is *exact*: the rationals are kept (rows and weights must then sum to one
    exactly) and the functions of this module accept ``exact=True``.  The attributes are
    read-only float64 arrays in every case.  Equality is identity (``eq=False``): arrays have
    no single truth value.

    Examples
    --------
    Two atoms with the same prediction (``E[Y | f(X)]`` pools them, 003 App. B notation
    ``P_{Y|f(X)}``):

    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1, 2), Fr(1, 2)], [[Fr(1), Fr(0)], [Fr(1, 2), Fr(1, 2)]],
    ...                        [[Fr(1, 2), Fr(1, 2)], [Fr(1, 2), Fr(1, 2)]])
    >>> d.n_atoms, d.n_classes, d.is_exact
    (2, 2, True)
    >>> p = d.pooled()
    >>> p.weights.tolist(), p.truth.tolist()
    ([1.0], [[0.75, 0.25]])
    """

    weights: np.ndarray
    truth: np.ndarray
    prediction: np.ndarray
    _exact: tuple | None = field(default=None, init=False, repr=False)

    def __post_init__(self):
        raw = (self.weights, self.truth, self.prediction)
        w = _check_weights(self.weights)
        T = _check_matrix(self.truth, "truth")
        F = _check_matrix(self.prediction, "prediction")
        if T.shape != F.shape:
            raise ValueError(f"truth and prediction: shapes differ, {T.shape} vs {F.shape}")
        if T.shape[0] != w.size:
            raise ValueError(f"truth: has {T.shape[0]} rows (atoms) but weights has {w.size}"
                             " entries")
        exact = None
        if all(_is_rational_array(x) for x in raw):
            we = _to_fractions(self.weights)
            total = sum(we)
            if total != 1:
                raise ValueError(f"weights: the exact atom probabilities sum to {total}, not"
                                 " exactly 1")
            exact = tuple(_readonly(a) for a in (we, _exact_matrix(self.truth, "truth"),
                                                 _exact_matrix(self.prediction, "prediction")))
        object.__setattr__(self, "weights", _readonly(w))
        object.__setattr__(self, "truth", _readonly(T))
        object.__setattr__(self, "prediction", _readonly(F))
        object.__setattr__(self, "_exact", exact)

    @property
    def n_atoms(self) -> int:
        """Number of atoms ``N``."""
        return int(self.weights.size)

    @property
    def n_classes(self) -> int:
        """Number of classes ``k``."""
        return int(self.truth.shape[1])

    @property
    def is_exact(self) -> bool:
        """Built from exact rationals (``exact=True`` is available)?"""
        return self._exact is not None

    @property
    def exact(self) -> tuple:
        """``(weights, truth, prediction)`` as object arrays of :class:`~fractions.Fraction`."""
        if self._exact is None:
            raise ValueError("exact=True needs a FiniteDistribution built from exact rationals"
                             " (fractions.Fraction or int entries); this one holds floats")
        return self._exact

    def label_marginal(self, *, exact: bool = False) -> np.ndarray:
        """``P_Y = sum_i weights[i] truth[i]``.

        Examples
        --------
        >>> FiniteDistribution([0.5, 0.5], [0.25, 0.75], [0.5, 0.5]).label_marginal().tolist()
        [0.5, 0.5]
        """
        w, T, _ = _arrays(self, exact)
        return (w[:, None] * T).sum(axis=0)

    def pooled(self) -> "FiniteDistribution":
        """Pool atoms with equal prediction vectors: the canonical recalibration's population.

        One atom per distinct prediction (sorted lexicographically): its weight is
        ``P(f(X) = v)`` and its truth ``E[Y | f(X) = v]`` (the weight-weighted mean of the pooled
        truths).  Every quantity of this module that conditions on ``f(X)`` is unchanged, and
        pooling twice changes nothing.  Exact distributions stay exact.

        Examples
        --------
        >>> d = FiniteDistribution([0.25, 0.25, 0.5], [0.0, 1.0, 0.5], [0.5, 0.5, 0.25])
        >>> p = d.pooled()
        >>> p.prediction[:, 1].tolist(), p.weights.tolist(), p.truth[:, 1].tolist()
        ([0.5, 0.25], [0.5, 0.5], [0.5, 0.5])
        """
        exact = self.is_exact
        w, T, F = _arrays(self, exact)
        ids, n, values = _group_ids(F)
        means, mass = _group_means(ids, n, w, T, exact)
        return FiniteDistribution(mass, means, values)

    def recalibrated(self) -> "FiniteDistribution":
        """The same atoms with the prediction replaced by ``E[Y | f(X)]``: a calibrated predictor.

        ``g = E[Y | f(X)]`` is a function of ``f(X)``, so ``E[Y | g(X)] = g(X)`` (tower
        property): every calibration error of this module is zero for it (003 Thm 3.1).

        Examples
        --------
        >>> d = FiniteDistribution([0.5, 0.5], [0.0, 1.0], [0.5, 0.5]).recalibrated()
        >>> d.prediction[:, 1].tolist(), calibration_error_proper(d, "log")
        ([0.5, 0.5], 0.0)
        """
        exact = self.is_exact
        w, T, _ = _arrays(self, exact)
        return FiniteDistribution(w, T, conditional_expectation(self, exact=exact))


def _arrays(dist: FiniteDistribution, exact: bool):
    if not isinstance(dist, FiniteDistribution):
        raise TypeError(f"dist: expected a FiniteDistribution, got {type(dist).__name__}")
    if exact:
        return dist.exact
    return dist.weights, dist.truth, dist.prediction


# --------------------------------------------------------------------------- grouping

def _group_ids(keys: np.ndarray):
    """Group rows of ``keys`` (1-d: scalars) by equality; ``(ids, n_groups, unique_rows)``.

    Groups are numbered in lexicographic order of their keys (as ``numpy.unique``), for float
    and Fraction keys alike.
    """
    K = keys[:, None] if keys.ndim == 1 else keys
    if K.dtype == object:
        rows = [tuple(r) for r in K]
        uniq = sorted(set(rows))
        index = {r: j for j, r in enumerate(uniq)}
        ids = np.array([index[r] for r in rows], dtype=np.intp)
        values = np.array(uniq, dtype=object).reshape(len(uniq), K.shape[1])
    else:
        values, ids = np.unique(K, axis=0, return_inverse=True)
        ids = ids.ravel()
    values = values[:, 0] if keys.ndim == 1 else values
    return ids, len(values), values


def _zeros(shape, exact: bool) -> np.ndarray:
    return np.full(shape, Fraction(0), dtype=object) if exact else np.zeros(shape)


def _group_sum(ids, n, values, exact):
    out = _zeros((n,) + values.shape[1:], exact)
    np.add.at(out, ids, values)
    return out


def _group_means(ids, n, w, V, exact):
    """Weight-weighted mean of ``V`` per group (plain mean for groups of zero weight), and the
    group weights."""
    mass = _group_sum(ids, n, w, exact)
    wv = w[:, None] * V if V.ndim == 2 else w * V
    num = _group_sum(ids, n, wv, exact)
    count = np.bincount(ids, minlength=n)
    plain = _group_sum(ids, n, V, exact)
    null = ~(mass > 0)
    safe_mass = np.where(null, 1, mass)
    if V.ndim == 2:
        means = np.where(null[:, None], plain / count[:, None], num / safe_mass[:, None])
    else:
        means = np.where(null, plain / count, num / safe_mass)
    return means, mass


def _expect(w, values, exact):
    """``sum_i w_i values_i``; atoms of weight zero contribute zero even where values are inf."""
    if exact:
        return sum((wi * vi for wi, vi in zip(w, values)), Fraction(0))
    with np.errstate(invalid="ignore"):
        return float(np.where(w > 0, w * values, 0.0).sum())


def _first_argmax(F: np.ndarray) -> np.ndarray:
    return np.argmax(F, axis=1)


def _top(F):
    C = _first_argmax(F)
    return C, F[np.arange(F.shape[0]), C]


def _check_on(on) -> str:
    if on not in CONDITIONING:
        raise ValueError(f"on: expected one of {CONDITIONING}, got {on!r}")
    return on


def _conditional(dist, on, exact):
    w, T, F = _arrays(dist, exact)
    N = w.size
    if on == "canonical":
        ids, n, _ = _group_ids(F)
        means, _ = _group_means(ids, n, w, T, exact)
        return means[ids]
    if on == "classwise":
        out = _zeros(T.shape, exact)
        for r in range(T.shape[1]):
            ids, n, _ = _group_ids(F[:, r])
            means, _ = _group_means(ids, n, w, T[:, r], exact)
            out[:, r] = means[ids]
        return out
    C, conf = _top(F)
    hit = T[np.arange(N), C]
    if on == "top_label":
        keys = conf
    else:
        keys = np.column_stack([C.astype(object) if exact else C.astype(np.float64), conf])
    ids, n, _ = _group_ids(keys)
    means, _ = _group_means(ids, n, w, hit, exact)
    return means[ids]


def conditional_expectation(dist: FiniteDistribution, on: str = "canonical", *,
                            exact: bool = False) -> np.ndarray:
    r"""The conditional expectations behind the calibration errors, atom by atom.

    Parameters
    ----------
    dist : FiniteDistribution
    on : {"canonical", "classwise", "top_label", "top_label_class"}
        * ``"canonical"``: ``E[Y | f(X)] = P_{Y|f(X)}`` (003 App. B, Def 2), shape ``(N, k)``;
        * ``"classwise"``: ``P(Y = r | f_r(X))`` in column ``r`` (003 Def C.1, CWCE), shape
          ``(N, k)``;
        * ``"top_label"``: ``P(Y = C | f_C(X))`` with ``C`` the first argmax, conditioning on
          the value ``max_r f_r(X)`` only (003 Def C.1 and eq. (9); 004 eq. (2.2)), shape
          ``(N,)``;
        * ``"top_label_class"``: ``P(Y = C | C, f_C(X))``, conditioning on the predicted class
          as well (the reading the proof of 003 eq. (10) integrates against), shape ``(N,)``.
    exact : bool, default False
        Return :class:`~fractions.Fraction` objects (needs an exact ``dist``).

    Returns
    -------
    numpy.ndarray
        Entry ``i`` is the conditional expectation at atom ``i``.

    Examples
    --------
    003 Def C.1: two atoms share the top probability 3/4 but not the predicted class, so the
    top-label conditional pools them while the canonical one does not:

    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1), Fr(0)]],
    ...                        [[Fr(3, 4), Fr(1, 4)], [Fr(1, 4), Fr(3, 4)]])
    >>> [str(v) for v in conditional_expectation(d, "top_label", exact=True)]
    ['1/2', '1/2']
    >>> conditional_expectation(d, "top_label_class").tolist()
    [1.0, 0.0]
    >>> conditional_expectation(d, "canonical")[:, 0].tolist()
    [1.0, 1.0]
    """
    return _conditional(dist, _check_on(on), exact)


# --------------------------------------------------------------------------- random populations

def _composition(rng, total: int, parts: int, minimum: int) -> np.ndarray:
    """A uniformly random composition of ``total`` into ``parts`` integers ``>= minimum``."""
    free = total - parts * minimum
    cuts = np.sort(rng.choice(free + parts - 1, size=parts - 1, replace=False))
    edges = np.concatenate([[-1], cuts, [free + parts - 1]])
    return np.diff(edges) - 1 + minimum


def random_finite_distribution(rng, *, n_atoms: int, n_classes: int, collisions: bool = True,
                               grid: int | None = None,
                               positive: bool = False) -> FiniteDistribution:
    """A random exact population on a rational grid, with forced collisions.

    Predictions and truths are multiples of ``1 / grid`` (uniform random compositions of
    ``grid``), the weights are ``u_i / sum(u)`` for integers ``u_i`` in ``1..grid``.  With
    ``collisions=True`` the draw contains, at shuffled positions,

    1. two atoms with the **same prediction vector** (canonical conditioning pools them);
    2. two atoms sharing **one coordinate** ``f_r`` but not the whole vector (class-wise
       conditioning pools them for class ``r``; needs ``n_classes >= 3``: for two classes
       ``f_0`` determines ``f``);
    3. two atoms with the **same largest value but different predicted classes** (top-label
       conditioning pools them, class-and-confidence conditioning does not);

    and the remaining atoms copy (1/3), permute (1/3) or redraw (1/3) earlier predictions, so
    more collisions occur.  Truths are drawn independently, so the pooled conditionals differ.

    Parameters
    ----------
    rng : numpy.random.Generator or int
    n_atoms : int
        At least 6 with collisions (4 for two classes).
    n_classes : int
        At least 2.
    collisions : bool, default True
        Force the three kinds (otherwise collisions occur only by chance).
    grid : int, optional
        Denominator of the grid; default ``4 * n_classes``.
    positive : bool, default False
        Every predicted probability at least ``1 / grid`` (finite log-loss divergences); needs
        ``grid > n_classes`` with collisions.

    Returns
    -------
    FiniteDistribution
        Exact (Fraction) entries.

    Examples
    --------
    >>> d = random_finite_distribution(0, n_atoms=8, n_classes=3)
    >>> d.is_exact, d.n_atoms, all(v > 0 for v in collision_counts(d).values())
    (True, 8, True)
    """
    rng = check_rng(rng)
    for name, value, low in (("n_atoms", n_atoms, 1), ("n_classes", n_classes, 2)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
    n_atoms, k = int(n_atoms), int(n_classes)
    G = 4 * k if grid is None else grid
    if isinstance(G, bool) or not isinstance(G, numbers.Integral) or G < 1:
        raise ValueError(f"grid: expected a positive integer, got {grid!r}")
    G = int(G)
    lo = 1 if positive else 0
    if positive and G < k:
        raise ValueError(f"grid: positive=True needs grid >= n_classes ({k}), got {G}")
    if collisions:
        need = 6 if k >= 3 else 4
        if n_atoms < need:
            raise ValueError(f"n_atoms: forcing the collisions needs at least {need} atoms for"
                             f" {k} classes, got {n_atoms}")
        if positive and G <= k:
            raise ValueError(f"grid: positive=True with collisions needs grid > n_classes"
                             f" ({k}), got {G}")

    def draw():
        return _composition(rng, G, k, lo)

    preds = []
    if collisions:
        a = draw()                                     # 1. the same vector
        preds += [a, a.copy()]
        while True:                                    # 3. same max, another first argmax
            b = draw()
            if b.max() != b.min():
                break
        top = int(np.argmax(b))
        while True:
            b2 = rng.permutation(b)
            if int(np.argmax(b2)) != top:
                break
        preds += [b, b2]
        if k >= 3:                                     # 2. one shared coordinate only
            while True:
                c = draw()
                ok = [r for r in range(k) if G - c[r] - (k - 1) * lo >= 1]
                if ok:
                    break
            r = int(rng.choice(ok))
            rest = np.delete(c, r)
            while True:
                new = _composition(rng, G - int(c[r]), k - 1, lo)
                if not np.array_equal(new, rest):
                    break
            preds += [c, np.insert(new, r, c[r])]
    while len(preds) < n_atoms:
        u = rng.random() if preds else 1.0
        if u < 1 / 3:
            preds.append(preds[rng.integers(len(preds))].copy())
        elif u < 2 / 3:
            preds.append(rng.permutation(preds[rng.integers(len(preds))]))
        else:
            preds.append(draw())
    order = rng.permutation(n_atoms)
    counts = np.array(preds)[order]
    truths = np.array([_composition(rng, G, k, 0) for _ in range(n_atoms)])
    u = rng.integers(1, G + 1, size=n_atoms)
    total = int(u.sum())
    weights = [Fraction(int(x), total) for x in u]
    prediction = [[Fraction(int(x), G) for x in row] for row in counts]
    truth = [[Fraction(int(x), G) for x in row] for row in truths]
    return FiniteDistribution(weights, truth, prediction)


def collision_counts(dist: FiniteDistribution) -> dict:
    """How many pairs of atoms collide, by kind (see :func:`random_finite_distribution`).

    Returns
    -------
    dict
        ``same_prediction``: pairs ``i < j`` with ``f(x_i) = f(x_j)``; ``same_coordinate``:
        pairs and classes ``r`` with ``f_r(x_i) = f_r(x_j)`` but ``f(x_i) != f(x_j)``;
        ``same_confidence_other_class``: pairs with ``max f(x_i) = max f(x_j)`` but different
        first argmax.  Exact rationals are compared when ``dist`` is exact.

    Examples
    --------
    >>> d = FiniteDistribution([0.5, 0.5], [0.5, 0.5], [0.25, 0.75])
    >>> collision_counts(d)
    {'same_prediction': 0, 'same_coordinate': 0, 'same_confidence_other_class': 1}
    """
    _, _, F = _arrays(dist, dist.is_exact)
    eq = F[:, None, :] == F[None, :, :]               # (N, N, k)
    upper = np.triu(np.ones(eq.shape[:2], dtype=bool), k=1)
    same = eq.all(axis=2)
    C, conf = _top(F)
    return {
        "same_prediction": int((same & upper).sum()),
        "same_coordinate": int((eq & (~same & upper)[:, :, None]).sum()),
        "same_confidence_other_class": int(((conf[:, None] == conf[None, :])
                                            & (C[:, None] != C[None, :]) & upper).sum()),
    }


# --------------------------------------------------------------------------- proper scores

_GENERATORS = {"squared_norm": SQUARED_NORM, "neg_entropy": NEG_ENTROPY}


def _resolve_loss(loss):
    """A ProperLoss or a BregmanGenerator from either or a name."""
    if isinstance(loss, (ProperLoss, BregmanGenerator)):
        return loss
    if isinstance(loss, str) and loss in _GENERATORS:
        return _GENERATORS[loss]
    try:
        return get_loss(loss)
    except ValueError:
        raise ValueError(f"loss: expected a ProperLoss, a BregmanGenerator or one of"
                         f" {sorted(['log', 'brier', 'spherical', 'zero_one', *_GENERATORS])},"
                         f" got {loss!r}") from None


def _is_squared(loss) -> bool:
    return loss is SQUARED_NORM or (isinstance(loss, ProperLoss) and loss.name == "brier")


def _exact_divergence(Q, P, loss):
    """Row-wise divergence ``d(q, p)`` in Fractions (Brier / squared norm, 0-1)."""
    if _is_squared(loss):
        D = Q - P
        return (D * D).sum(axis=1)
    if isinstance(loss, ProperLoss) and loss.name == "zero_one":
        rows = np.arange(Q.shape[0])
        return Q.max(axis=1) - Q[rows, _first_argmax(P)]
    raise ValueError(f"exact=True: the {getattr(loss, 'name', loss)!r} divergence is not"
                     " rational; exact results exist for 'brier', 'squared_norm' and"
                     " 'zero_one'")


def _divergence(Q, P, loss, exact):
    if exact:
        return _exact_divergence(Q, P, loss)
    if isinstance(loss, BregmanGenerator):
        return bregman_divergence(Q, P, loss)
    return divergence(Q, P, loss)


def expected_score(dist: FiniteDistribution, loss="brier", *, exact: bool = False):
    """Expected loss ``E[S(f(X), Y)] = sum_i w_i sum_y truth[i, y] S(f(x_i), y)``.

    The first term of 003 Lemma D.1; ``calnotes.BRIER`` is summed over classes.

    Parameters
    ----------
    dist : FiniteDistribution
    loss : str or ProperLoss
    exact : bool
        Fractions (Brier and 0-1 only).

    Examples
    --------
    >>> d = FiniteDistribution([1.0], [[0.5, 0.5]], [[0.75, 0.25]])
    >>> expected_score(d, "brier")        # 0.5 * (0.125 + 1.125)
    0.625
    """
    loss = get_loss(loss)
    w, T, F = _arrays(dist, exact)
    if exact:
        if loss.name == "brier":
            values = (F * F).sum(axis=1) - 2 * (F * T).sum(axis=1) + 1
        elif loss.name == "zero_one":
            values = 1 - T[np.arange(w.size), _first_argmax(F)]
        else:
            raise ValueError(f"exact=True: the {loss.name!r} score is not rational; exact"
                             " results exist for 'brier' and 'zero_one'")
        return _expect(w, values, True)
    return _expect(w, expected_loss(T, F, loss), False)


def calibration_error_proper(dist: FiniteDistribution, loss="brier", *, exact: bool = False):
    r"""The proper calibration error ``CE_S(f) = E[d_S(E[Y | f(X)], f(X))]`` (003 Def 4.2).

    003 Lemma D.1: ``CE_S = E[S(f(X), Y)] - E[g_S(P_{Y|f(X)})]``; 003 Lemma 4.1: it is the
    calibration term of ``score = entropy - sharpness + calibration``
    (:func:`calnotes.score_decomposition`).

    Parameters
    ----------
    dist : FiniteDistribution
    loss : str, ProperLoss or BregmanGenerator
        A proper loss of :mod:`calnotes.core.scores` (``"log"``: KL, ``"brier"``: squared
        Euclidean distance summed over classes, ``"spherical"``, ``"zero_one"``) or a Bregman
        generator (``"squared_norm"``, ``"neg_entropy"`` or any :class:`BregmanGenerator`; 004
        eq. (4.1)).
    exact : bool
        Fractions; Brier / squared norm and 0-1 only.

    Returns
    -------
    float or Fraction
        ``>= 0``; ``inf`` for the log loss where ``f`` gives probability 0 to a class of
        positive conditional probability.

    Notes
    -----
    Divergence order: ``d(truth, prediction)`` as :func:`calnotes.divergence` (003 Def C.6
    writes ``d_S(prediction, truth)`` for the same number).  For Brier, ``CE_S = CE_2^2``
    (003 eq. (12) (ii)).

    Examples
    --------
    003 Def 4.2 with the Brier score: ``E[Y | f(X)] = (3/4, 1/4)`` against ``f = (1/2, 1/2)``:

    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1, 2), Fr(1, 2)]],
    ...                        [[Fr(1, 2), Fr(1, 2)]] * 2)
    >>> calibration_error_proper(d, "brier", exact=True)
    Fraction(1, 8)
    >>> round(calibration_error_proper(d, "log"), 12)     # KL((3/4, 1/4) || (1/2, 1/2))
    0.130812035941
    """
    loss = _resolve_loss(loss)
    w, T, F = _arrays(dist, exact)
    Cn = _conditional(dist, "canonical", exact)
    return _expect(w, _divergence(Cn, F, loss, exact), exact)


# --------------------------------------------------------------------------- lp errors

def _check_p(p, exact: bool, powered: bool):
    if isinstance(p, bool) or not isinstance(p, numbers.Real) or not math.isfinite(p) or p < 1:
        raise ValueError(f"p: expected a number >= 1, got {p!r}")
    if exact:
        if p != int(p):
            raise ValueError(f"exact=True needs an integer p (|x|^p of a rational is rational"
                             f" only then), got p={p!r}")
        if not powered and p != 1:
            raise ValueError(f"exact=True with p={p!r}: the p-th root is not rational; pass"
                             " powered=True for the p-th power of the error")
        return int(p)
    return float(p)


def _finish(value, p, powered, exact):
    if exact:
        return value
    return value if powered or p == 1 else value ** (1.0 / p)


def _abs_pow(x, p, exact):
    return abs(x) ** p if exact else np.abs(x) ** p


def ce_p(dist: FiniteDistribution, p: float = 2, *, exact: bool = False,
         powered: bool = False):
    r"""Canonical ``L^p`` calibration error ``CE_p = (E ||f(X) - P_{Y|f(X)}||_p^p)^{1/p}``.

    003 Def 2 (restated in App. D.2, eqs. (13)-(14)); ``CE_2^2`` is the Brier ``CE_S``.

    Parameters
    ----------
    dist : FiniteDistribution
    p : float, default 2
        ``>= 1``.
    exact : bool
        Fractions; needs an integer ``p`` and ``powered=True`` unless ``p = 1``.
    powered : bool
        Return ``CE_p^p``.

    Examples
    --------
    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1)], [[Fr(1), Fr(0)]], [[Fr(1, 2), Fr(1, 2)]])
    >>> ce_p(d, 2, exact=True, powered=True), ce_p(d, 1)
    (Fraction(1, 2), 1.0)
    """
    p = _check_p(p, exact, powered)
    w, _, F = _arrays(dist, exact)
    Cn = _conditional(dist, "canonical", exact)
    return _finish(_expect(w, _abs_pow(F - Cn, p, exact).sum(axis=1), exact), p, powered, exact)


_GIVEN = {"confidence": "top_label", "class_and_confidence": "top_label_class",
          "classwise": "classwise"}


def tce(dist: FiniteDistribution, p: float = 1, *, given: str = "confidence",
        exact: bool = False, powered: bool = False):
    r"""Top-label calibration error ``TCE_p = (E|f_C(X) - P(Y = C | f_C(X))|^p)^{1/p}``.

    003 Def C.1, ``C`` the first argmax of ``f(X)``.

    Parameters
    ----------
    dist : FiniteDistribution
    p : float, default 1
    given : {"confidence", "class_and_confidence", "classwise"}
        How ``P(Y = C | f_C(X))`` is read:

        * ``"confidence"`` (default; Def C.1 and eq. (9) literally, 004 (2.2)): condition on
          the value ``max_r f_r(X)`` only;
        * ``"class_and_confidence"``: condition on ``(C, f_C(X))``;
        * ``"classwise"``: the class-wise conditional ``P(Y = k | f_k(X))`` evaluated at
          ``k = C`` -- the reading of step (ii) of the proof of Thm 3.1 (eq. (16)), under which
          ``CWCE_p >= TCE_p`` does hold.
    exact, powered : bool
        As :func:`ce_p`.

    Notes
    -----
    ``TCE_2^2`` (given the confidence) is 004's confidence calibration error for the Brier
    pair, :func:`confidence_calibration_error`.  003 Thm 3.1 states ``CWCE_p >= TCE_p``; its
    proof (eq. (16), step (ii)) replaces the top-label conditional by the class-wise
    conditional of class ``C``, which is a different random variable when atoms share a
    coordinate value.  Given the confidence, the inequality -- and the implication
    ``CWCE_p = 0 => TCE_p = 0`` of eq. (9) -- fail: below, class-wise calibration holds exactly
    (atoms share ``f_0 = 3/8`` and ``f_1 = 1/8`` with compensating truths) yet the atom of
    confidence ``3/8`` is right with probability ``1/2``.

    Examples
    --------
    003 Def C.1: two atoms with confidence 3/4 (classes 0 and 1), both labelled 0:

    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1), Fr(0)]],
    ...                        [[Fr(3, 4), Fr(1, 4)], [Fr(1, 4), Fr(3, 4)]])
    >>> tce(d, exact=True), tce(d, given="class_and_confidence", exact=True)
    (Fraction(1, 4), Fraction(1, 2))

    Class-wise calibrated, not top-label calibrated (a counterexample to 003 eq. (9)):

    >>> e = FiniteDistribution([Fr(1, 2)] * 2,
    ...                        [[Fr(4, 8), 0, Fr(2, 8), Fr(2, 8)],
    ...                         [Fr(2, 8), Fr(2, 8), Fr(4, 8), 0]],
    ...                        [[Fr(3, 8), Fr(1, 8), Fr(2, 8), Fr(2, 8)],
    ...                         [Fr(3, 8), Fr(1, 8), Fr(4, 8), 0]])
    >>> cwce(e, exact=True), tce(e, exact=True), tce(e, given="classwise", exact=True)
    (Fraction(0, 1), Fraction(1, 16), Fraction(0, 1))
    """
    if given not in _GIVEN:
        raise ValueError(f"given: expected one of {tuple(_GIVEN)}, got {given!r}")
    p = _check_p(p, exact, powered)
    w, _, F = _arrays(dist, exact)
    C, conf = _top(F)
    h = _conditional(dist, _GIVEN[given], exact)
    if given == "classwise":
        h = h[np.arange(w.size), C]
    return _finish(_expect(w, _abs_pow(conf - h, p, exact), exact), p, powered, exact)


def cwce(dist: FiniteDistribution, p: float = 1, *, exact: bool = False,
         powered: bool = False):
    r"""Class-wise calibration error ``CWCE_p = (sum_r E|f_r(X) - P(Y = r | f_r(X))|^p)^{1/p}``.

    003 Def C.1: a **sum** over classes (no ``1/k``, no class weights; ``CWCE_p <= 2^{1/p}``).

    Parameters
    ----------
    dist : FiniteDistribution
    p : float, default 1
    exact, powered : bool
        As :func:`ce_p`.

    Examples
    --------
    Two classes: class-wise conditioning is canonical, each class contributes ``|3/4 - 1/2|``:

    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1)], [[Fr(3, 4), Fr(1, 4)]], [[Fr(1, 2), Fr(1, 2)]])
    >>> cwce(d, exact=True), cwce(d, 2, exact=True, powered=True)
    (Fraction(1, 2), Fraction(1, 8))
    """
    p = _check_p(p, exact, powered)
    w, _, F = _arrays(dist, exact)
    CW = _conditional(dist, "classwise", exact)
    return _finish(_expect(w, _abs_pow(F - CW, p, exact).sum(axis=1), exact), p, powered, exact)


# --------------------------------------------------------------------------- KS

def _max_abs_partial_sum(s, m, exact):
    """``max_sigma |sum_{i: s_i <= sigma} m_i|`` over ``sigma`` (0 for no atoms)."""
    if s.size == 0:
        return Fraction(0) if exact else 0.0
    order = np.argsort(s, kind="stable")
    s, m = s[order], m[order]
    partial = np.cumsum(m)
    ends = np.append(s[1:] != s[:-1], True)          # last atom of each run of equal scores
    return max(abs(v) for v in partial[ends]) if exact else float(np.abs(partial[ends]).max())


def ks_error(dist: FiniteDistribution, *, reading: str = "definition", exact: bool = False):
    r"""Kolmogorov-Smirnov calibration error ``KS(f) = E[KS(f, C)]`` (003 Def C.2).

    ``KS(f, k) = max_{sigma in [0,1]} |int_{[0, sigma]} z - P(Y = k | f_k(X) = z)
    dP_{f_k(X)}(z)|``.  The definition and its use in the proof of 003 Thm 3.1 (eq. (10),
    (18)) differ; ``reading`` picks one:

    * ``"definition"`` (default, Def C.2 literally): class-wise conditional
      ``P(Y = k | f_k(X))`` integrated against the law of ``f_k(X)`` on the whole population,
      then averaged with weights ``P(C = k)``:
      ``sum_k P(C = k) max_sigma |sum_{i: f_k(x_i) <= sigma} w_i (f_k(x_i) - P(Y=k | f_k))|``.
    * ``"proof"`` (eqs. (10), (18)): the top-label conditional ``P(Y = C | f_C(X))`` integrated
      against ``P_{f_C(X) | C}``, i.e. ``sum_k max_sigma |sum_{i: C_i = k, f_C(x_i) <= sigma}
      w_i (f_C(x_i) - P(Y = C | f_C(X)))|`` (the ``P(C = k)`` cancels).  ``TCE_p >= KS``
      holds for this reading.
    * ``"confidence"``: the top-label KS of Gupta et al. (2021), cumulative over the
      confidence without splitting by class:
      ``max_sigma |sum_{i: f_C(x_i) <= sigma} w_i (f_C(x_i) - P(Y = C | f_C(X)))|``.

    Parameters
    ----------
    dist : FiniteDistribution
    reading : {"definition", "proof", "confidence"}
    exact : bool
        Fractions.

    Examples
    --------
    One atom, ``f = (3/4, 1/4)``, label 0 always: every reading gives ``|3/4 - 1| = 1/4``:

    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1)], [[Fr(1), Fr(0)]], [[Fr(3, 4), Fr(1, 4)]])
    >>> [ks_error(d, reading=r, exact=True) for r in KS_READINGS]
    [Fraction(1, 4), Fraction(1, 4), Fraction(1, 4)]
    """
    if reading not in KS_READINGS:
        raise ValueError(f"reading: expected one of {KS_READINGS}, got {reading!r}")
    w, _, F = _arrays(dist, exact)
    C, conf = _top(F)
    zero = Fraction(0) if exact else 0.0
    if reading == "definition":
        CW = _conditional(dist, "classwise", exact)
        total = zero
        for k in range(F.shape[1]):
            pk = _expect(w, (C == k).astype(np.int64), exact)
            if pk > 0:
                total += pk * _max_abs_partial_sum(F[:, k], w * (F[:, k] - CW[:, k]), exact)
        return total
    h = _conditional(dist, "top_label", exact)
    m = w * (conf - h)
    if reading == "confidence":
        return _max_abs_partial_sum(conf, m, exact)
    total = zero
    for k in np.unique(C):
        sel = C == k
        total += _max_abs_partial_sum(conf[sel], m[sel], exact)
    return total


# --------------------------------------------------------------------------- kernels

def _check_bandwidth(bandwidth) -> float:
    if isinstance(bandwidth, bool) or not isinstance(bandwidth, numbers.Real) \
            or not math.isfinite(bandwidth) or bandwidth <= 0:
        raise ValueError(f"bandwidth: expected a positive number, got {bandwidth!r}")
    return float(bandwidth)


def _kernel_matrix(kernel, X, bandwidth, name):
    """Gram matrix of a scalar kernel on the rows of ``X`` (``(m,)`` scalars or ``(m, k)``)."""
    A = X[:, None] if X.ndim == 1 else X[:, None, :]
    B = X[None, :] if X.ndim == 1 else X[None, :, :]
    if callable(kernel):
        K = np.asarray(kernel(A, B), dtype=np.float64)
    elif kernel in ("laplacian", "gaussian"):
        bw = _check_bandwidth(bandwidth)
        diff = A - B
        sq = diff * diff if X.ndim == 1 else (diff * diff).sum(axis=-1)
        K = np.exp(-np.sqrt(sq) / bw) if kernel == "laplacian" else np.exp(-sq / (2 * bw * bw))
    else:
        raise ValueError(f"kernel: expected 'laplacian', 'gaussian' or a callable, got"
                         f" {kernel!r}")
    m = X.shape[0]
    if K.shape[:2] != (m, m) or not np.all(np.isfinite(K)):
        raise ValueError(f"{name}: the kernel must return a finite ({m}, {m}) matrix for"
                         f" inputs of shapes {A.shape} and {B.shape}, got shape {K.shape}")
    return K


def mmce(dist: FiniteDistribution, kernel="laplacian", *, bandwidth: float = 0.4,
         squared: bool = False) -> float:
    r"""Maximum mean calibration error (003 Def C.3, Kumar et al. 2018).

    ``MMCE(f) = || E[(f_C(X) - P(Y = C | f_C(X))) k(f_C(X), .)] ||_H``, so
    ``MMCE^2 = sum_{a, b} m_a m_b delta_a delta_b k(r_a, r_b)`` over the distinct confidences
    ``r_a`` with mass ``m_a`` and gap ``delta_a = r_a - P(Y = C | f_C(X) = r_a)``.

    Parameters
    ----------
    dist : FiniteDistribution
    kernel : {"laplacian", "gaussian"} or callable
        Scalar kernel on ``[0, 1]``: ``exp(-|r - s| / bandwidth)`` (Laplacian, Kumar et al.'s
        choice with width 0.4) or ``exp(-(r - s)^2 / (2 bandwidth^2))``; a callable gets
        broadcastable arrays of shapes ``(m, 1)`` and ``(1, m)`` and returns the ``(m, m)``
        Gram matrix (it must be positive semi-definite).
    bandwidth : float, default 0.4
    squared : bool
        Return ``MMCE^2``.

    Notes
    -----
    ``||k(r, .)||_H = sqrt(k(r, r))``, so ``MMCE <= c TCE_1`` with ``c = sqrt(max_r k(r, r))``.
    003 Thm 3.1 prints ``TCE_1 >= c MMCE``; the two agree for the kernels here (``c = 1``) but
    not for a kernel with ``k(r, r) > 1`` (see the tests).

    Examples
    --------
    One confidence value: ``MMCE = |delta| sqrt(k(r, r)) = |3/4 - 1| = 1/4``:

    >>> d = FiniteDistribution([1.0], [[1.0, 0.0]], [[0.75, 0.25]])
    >>> mmce(d)
    0.25
    """
    w, _, F = _arrays(dist, False)
    _, conf = _top(F)
    h = _conditional(dist, "top_label", False)
    ids, n, values = _group_ids(conf)
    acc, mass = _group_means(ids, n, w, h, False)
    v = mass * (values - acc)
    value = float(v @ _kernel_matrix(kernel, values, bandwidth, "kernel") @ v)
    value = max(value, 0.0)                            # PSD kernel: rounding only
    return value if squared else math.sqrt(value)


def skce(dist: FiniteDistribution, kernel="laplacian", *, bandwidth: float = 1.0) -> float:
    r"""Squared kernel calibration error ``SKCE = KCE^2`` (003 Def C.4, App. F eq. (55)).

    ``SKCE(f) = E[(f(X) - P_{Y|f(X)})^T k(f(X), f(X')) (f(X') - P_{Y|f(X')})]`` with ``X, X'``
    independent copies (Widmann et al. 2019): on a finite population the double sum over
    distinct predictions ``v_a`` with masses ``m_a``, *including* ``a = b`` (``X = X'`` has
    positive probability).

    Parameters
    ----------
    dist : FiniteDistribution
    kernel : {"laplacian", "gaussian"} or callable
        The matrix-valued kernel is ``kappa(p, q) I_k``, a scalar kernel on the simplex times
        the identity: ``exp(-||p - q||_2 / bandwidth)`` (Laplacian) or
        ``exp(-||p - q||_2^2 / (2 bandwidth^2))``.  A callable gets arrays of shapes
        ``(m, 1, k)`` and ``(1, m, k)`` and returns the ``(m, m)`` Gram matrix of ``kappa``, or
        an ``(m, m, k, k)`` array for a general matrix-valued kernel.
    bandwidth : float, default 1.0

    Returns
    -------
    float
        ``>= 0`` (rounding residue below zero is clipped).

    Examples
    --------
    One prediction: ``SKCE = ||f - E[Y | f]||^2 kappa(f, f) = 2 (1/4)^2``:

    >>> d = FiniteDistribution([1.0], [[1.0, 0.0]], [[0.75, 0.25]])
    >>> skce(d)
    0.125
    """
    w, T, F = _arrays(dist, False)
    ids, n, values = _group_ids(F)
    means, mass = _group_means(ids, n, w, T, False)
    V = mass[:, None] * (values - means)
    K = _kernel_matrix(kernel, values, bandwidth, "kernel")
    if K.ndim == 4:
        value = float(np.einsum("ai,abij,bj->", V, K, V))
    elif K.ndim == 2:
        value = float(np.einsum("ai,ab,bi->", V, K, V))
    else:
        raise ValueError(f"kernel: expected an (m, m) or (m, m, k, k) result, got shape"
                         f" {K.shape}")
    return max(value, 0.0)


def kce(dist: FiniteDistribution, kernel="laplacian", *, bandwidth: float = 1.0) -> float:
    """Kernel calibration error ``KCE = sqrt(SKCE)`` (003 Def C.4); see :func:`skce`.

    Examples
    --------
    >>> d = FiniteDistribution([1.0], [[1.0, 0.0]], [[0.75, 0.25]])
    >>> round(kce(d), 12)        # sqrt(2) / 4
    0.353553390593
    """
    return math.sqrt(skce(dist, kernel, bandwidth=bandwidth))


# --------------------------------------------------------------------------- 004

def _generator(generator) -> BregmanGenerator:
    if isinstance(generator, BregmanGenerator):
        return generator
    names = {"brier": SQUARED_NORM, "log": NEG_ENTROPY, **_GENERATORS}
    if isinstance(generator, str) and generator in names:
        return names[generator]
    raise ValueError(f"generator: expected a BregmanGenerator or one of {sorted(names)}, got"
                     f" {generator!r}")


def bregman_decomposition(dist: FiniteDistribution, generator="squared_norm", *,
                          exact: bool = False) -> dict:
    r"""The Bregman divergence decomposition of 004 Lemma 4.1.

    With ``Z = P(Y | X)`` (``truth``) and the prediction ``g(X)``::

        E[d_phi(Z, g)] = (E[phi(Z)] - E[phi(E[Z | g])]) + E[d_phi(E[Z | g], g)]
           total            sharpness gap                   calibration error

    Parameters
    ----------
    dist : FiniteDistribution
    generator : BregmanGenerator or str
        ``"squared_norm"`` / ``"brier"`` (``phi = ||x||^2``, the Brier score) or
        ``"neg_entropy"`` / ``"log"`` (``phi = sum x log x``, KL), or any generator.
    exact : bool
        Fractions (squared norm only).

    Returns
    -------
    dict
        ``total``, ``sharpness_gap``, ``calibration``, and the two halves of the gap
        ``phi_truth = E[phi(Z)]`` and ``phi_conditional = E[phi(E[Z | g])]``.  The calibration
        term equals :func:`calibration_error_proper` with the same generator.

    Examples
    --------
    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1, 2), Fr(1, 2)]],
    ...                        [[Fr(1, 2), Fr(1, 2)]] * 2)
    >>> r = bregman_decomposition(d, "brier", exact=True)
    >>> r["total"], r["sharpness_gap"], r["calibration"]
    (Fraction(1, 4), Fraction(1, 8), Fraction(1, 8))
    >>> r["total"] == r["sharpness_gap"] + r["calibration"]
    True
    """
    gen = _generator(generator)
    if exact and gen is not SQUARED_NORM:
        raise ValueError(f"exact=True: only the squared norm gives rational terms, got"
                         f" {gen.name!r}")
    w, T, F = _arrays(dist, exact)
    Cn = _conditional(dist, "canonical", exact)
    if exact:
        def phi(X):
            return (X * X).sum(axis=1)

        def div(Q, P):
            return _exact_divergence(Q, P, SQUARED_NORM)
    else:
        phi = gen.phi

        def div(Q, P):
            return bregman_divergence(Q, P, gen)
    phi_truth = _expect(w, phi(T), exact)
    phi_cond = _expect(w, phi(Cn), exact)
    return {
        "total": _expect(w, div(T, F), exact),
        "sharpness_gap": phi_truth - phi_cond,
        "calibration": _expect(w, div(Cn, F), exact),
        "phi_truth": phi_truth,
        "phi_conditional": phi_cond,
    }


def _pair(pair):
    if pair not in CONFIDENCE_PAIRS:
        raise ValueError(f"pair: expected one of {CONFIDENCE_PAIRS}, got {pair!r}")
    return SQUARED_NORM if pair == "brier" else NEG_ENTROPY


def _d_varphi(a, b, pair, exact):
    """The 1-d divergence: ``(a - b)^2`` (varphi = x^2) or binary KL (varphi = binary neg.
    entropy)."""
    if pair == "brier":
        return (a - b) * (a - b)
    A = np.column_stack([1.0 - a, a])
    B = np.column_stack([1.0 - b, b])
    return bregman_divergence(A, B, NEG_ENTROPY)


def confidence_calibration_error(dist: FiniteDistribution, pair: str = "brier", *,
                                 exact: bool = False, per_confidence: bool = False):
    r"""004's confidence calibration error ``E[d_varphi(E[1{Y = c(X)} | h(X)], h(X))]``.

    Standard confidence calibration (004 Sec. 2): ``c`` the argmax (first maximum), ``h`` the
    maximum.  ``pair`` fixes ``(phi, varphi)`` of 004 Sec. 4.1:

    * ``"brier"``: ``phi = ||x||^2``, ``varphi(x) = x^2``, ``d_varphi(a, b) = (a - b)^2`` --
      **not** the binary Brier ``2 (a - b)^2``: 004 needs ``d_phi(x, y) >= d_varphi(x_i, y_i)``
      and ``||x - y||^2 >= 2 (x_i - y_i)^2`` fails for three or more classes;
    * ``"log"``: ``phi = sum x log x`` (KL), ``varphi(x) = x log x + (1 - x) log(1 - x)``,
      ``d_varphi`` the binary KL divergence (Cor 4.7).

    Lemma 4.6: ``E[d_phi(E[P(Y|X) | g(X)], g(X)) | h(X)] >= d_varphi(E[1{Y=c(X)} | h(X)], h(X))``
    at every confidence value; ``per_confidence=True`` returns both sides.

    Parameters
    ----------
    dist : FiniteDistribution
    pair : {"brier", "log"}
    exact : bool
        Fractions (``"brier"`` only).
    per_confidence : bool
        Return a dict of arrays over the distinct confidences: ``confidence`` (sorted), ``mass``
        (``P(h(X) = v)``), ``accuracy`` (``E[1{Y = c(X)} | h(X) = v]``), ``confidence_error``
        (``d_varphi(accuracy, v)``) and ``full`` (``E[d_phi(E[Y | g(X)], g(X)) | h(X) = v]``).

    Returns
    -------
    float, Fraction or dict
        ``sum_v mass_v confidence_error_v``; for ``"brier"`` it equals ``TCE_2^2``.

    Examples
    --------
    004 Lemma 4.6 with the Brier pair, exactly:

    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0)], [Fr(1), Fr(0)]],
    ...                        [[Fr(3, 4), Fr(1, 4)], [Fr(1, 4), Fr(3, 4)]])
    >>> confidence_calibration_error(d, exact=True)
    Fraction(1, 16)
    >>> r = confidence_calibration_error(d, exact=True, per_confidence=True)
    >>> r["full"][0], r["confidence_error"][0]
    (Fraction(5, 8), Fraction(1, 16))
    """
    gen = _pair(pair)
    if exact and pair != "brier":
        raise ValueError("exact=True: only the 'brier' pair gives rational terms")
    w, _, F = _arrays(dist, exact)
    _, conf = _top(F)
    h = _conditional(dist, "top_label", exact)
    ids, n, values = _group_ids(conf)
    acc, mass = _group_means(ids, n, w, h, exact)
    err = _d_varphi(acc, values, pair, exact)
    total = _expect(mass, err, exact)
    if not per_confidence:
        return total
    Cn = _conditional(dist, "canonical", exact)
    full_atoms = _divergence(Cn, F, gen, exact)
    if exact:
        full, _ = _group_means(ids, n, w, full_atoms, True)
    else:
        with np.errstate(invalid="ignore"):
            wd = np.where(w > 0, w * full_atoms, 0.0)
        full = np.bincount(ids, weights=wd, minlength=n) / np.where(mass > 0, mass, 1.0)
    return {"confidence": values, "mass": mass, "accuracy": acc, "confidence_error": err,
            "full": full}


# --------------------------------------------------------------------------- 003 Secs. 3, D.3-D.4

def accuracy(dist: FiniteDistribution, *, exact: bool = False):
    """``ACC(f) = P(Y = C)``, ``C`` the first argmax of ``f(X)``.

    Examples
    --------
    >>> d = FiniteDistribution([0.5, 0.5], [[1.0, 0.0], [0.25, 0.75]], [[0.75, 0.25]] * 2)
    >>> accuracy(d)
    0.625
    """
    w, T, F = _arrays(dist, exact)
    C = _first_argmax(F)
    return _expect(w, T[np.arange(w.size), C], exact)


def binned_ece(dist: FiniteDistribution, n_bins: int = 15, *, exact: bool = False):
    r"""The population binned ECE of 003 Def 3 (App. D.2, eq. (19)).

    ``ECE = sum_i P(f_C(X) in B_i) |E[f_C(X) | B_i] - P(Y = C | B_i)|`` with the equal-width bins
    ``B_i = ((i - 1)/m, i/m]``: the confidence is conditioned on its bin only.

    Parameters
    ----------
    dist : FiniteDistribution
    n_bins : int, default 15
    exact : bool
        Fractions.

    Examples
    --------
    Two confidences in one bin whose gaps cancel (003 Thm 3.1: ``TCE_1 >= ECE``, not ``=``):

    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(5, 8), Fr(3, 8)], [Fr(6, 8), Fr(2, 8)]],
    ...                        [[Fr(6, 8), Fr(2, 8)], [Fr(5, 8), Fr(3, 8)]])
    >>> binned_ece(d, 2, exact=True), tce(d, exact=True)
    (Fraction(0, 1), Fraction(1, 8))
    """
    if isinstance(n_bins, bool) or not isinstance(n_bins, numbers.Integral) or n_bins < 1:
        raise ValueError(f"n_bins: expected a positive integer, got {n_bins!r}")
    w, T, F = _arrays(dist, exact)
    C, conf = _top(F)
    hit = T[np.arange(w.size), C]
    m = int(n_bins)
    # bin i (1-based) holds (i-1)/m < conf <= i/m: i = ceil(m conf), exactly for Fractions
    if exact:
        b = np.array([max(math.ceil(c * m), 1) for c in conf], dtype=np.intp)
    else:
        b = np.maximum(np.ceil(conf * m).astype(np.intp), 1)
    ids, n, _ = _group_ids(b)
    mass = _group_sum(ids, n, w, exact)
    gap = _group_sum(ids, n, w * (conf - hit), exact)
    return sum((abs(g) for g in gap), Fraction(0)) if exact else float(np.abs(gap).sum())


def accuracy_preserving_transform(dist: FiniteDistribution) -> FiniteDistribution:
    r"""003 Prop D.2's ``t^f o f``: the top probability replaced by ``ACC(f)``.

    ``t^f(p) = sigma_p^{-1}(c_f)`` with ``c_f = (ACC, (1 - ACC)/(k - 1), ...)``: the predicted
    class keeps ``ACC(f)``, every other class gets ``(1 - ACC)/(k - 1)``.  The argmax is kept
    (when ``ACC > 1/k``), the confidence is the constant ``ACC``, so every top-label error
    vanishes (Prop D.2) while the full prediction is in general not calibrated.  The same
    transform is fitted on data by :class:`calnotes.AccuracyPreservingTransform`.

    Examples
    --------
    >>> from fractions import Fraction as Fr
    >>> d = FiniteDistribution([Fr(1, 2)] * 2, [[Fr(1), Fr(0), Fr(0)], [Fr(0), Fr(1), Fr(0)]],
    ...                        [[Fr(1, 2), Fr(1, 4), Fr(1, 4)], [Fr(1, 2), Fr(1, 2), Fr(0)]])
    >>> t = accuracy_preserving_transform(d)
    >>> [str(v) for v in t.exact[2][0]], tce(t, exact=True)
    (['1/2', '1/4', '1/4'], Fraction(0, 1))
    """
    exact = dist.is_exact
    w, T, F = _arrays(dist, exact)
    k = F.shape[1]
    acc = accuracy(dist, exact=exact)
    C = _first_argmax(F)
    rest = (1 - acc) / (k - 1)
    out = np.full(F.shape, rest, dtype=object if exact else np.float64)
    out[np.arange(w.size), C] = acc
    return FiniteDistribution(w, T, out)


def top_label_calibrated_not_calibrated(n_classes: int = 3, grid: int = 4, *,
                                        time_limit: float = 60.0) -> FiniteDistribution:
    r"""A finite instance for 003 Prop 3.2: class-wise and top-label calibrated, not calibrated.

    The joint law ``z[u, j] = P(f(X) = u, Y = j)`` over the predictions ``u`` of the simplex
    grid with denominator ``grid`` is a point of the polytope cut out by the linear equations
    ``sum_{u: u_r = x} z[u, r] = x sum_{u: u_r = x, j} z[u, j]`` (class-wise calibration: every
    class ``r``, every value ``x``), ``sum_{u: max u = x} z[u, C(u)] = x sum_{u: max u = x, j}
    z[u, j]`` (top-label calibration given the confidence) and ``sum z = 1``.  Requiring each
    prediction to carry a single label (binary ``b[u, j] >= z[u, j]``, ``sum_j b[u, j] <= 1``)
    makes ``E[Y | f(X)]`` one-hot, and then ``CE_2^2 = E||e_Y - f(X)||^2`` -- the Brier score,
    *linear* in ``z``.  The mixed-integer program maximising it (scipy's HiGHS ``milp``) is the
    search for the most miscalibrated predictor that every common error calls perfect; its
    solution is then solved again *exactly* on its support with rational arithmetic, so the
    returned distribution is exact (one atom per ``(u, j)`` with ``z > 0``, truth ``e_j``).
    Every common error of 003 Prop 3.2 (``CWCE_p``, ``TCE_p``, ``KS``, ``ECE``, ``MMCE``) is then
    zero, exactly, while ``CE_2^2 = 1 - E||f(X)||^2`` (eq. (20)).  The largest value grows with
    ``grid`` towards ``1 - 1/k``, the bound of the proposition.

    Parameters
    ----------
    n_classes : int, default 3
    grid : int, default 4
        Denominator of the candidate predictions (the grid has ``C(grid + k - 1, k - 1)``
        points; ``k = 3, grid = 8`` takes about a second).
    time_limit : float
        Seconds allowed to the MILP solver.

    Examples
    --------
    >>> d = top_label_calibrated_not_calibrated()
    >>> cwce(d, exact=True), tce(d, exact=True), ce_p(d, 2, exact=True, powered=True) > 0
    (Fraction(0, 1), Fraction(0, 1), True)
    """
    import itertools

    import sympy
    from scipy.optimize import Bounds, LinearConstraint, milp

    for name, value, low in (("n_classes", n_classes, 2), ("grid", grid, 2)):
        if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
            raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
    k, G = int(n_classes), int(grid)
    counts = [c for c in itertools.product(range(G + 1), repeat=k) if sum(c) == G]
    U = [[Fraction(c, G) for c in row] for row in counts]
    n_var = len(U) * k
    rows = []
    for r in range(k):
        for x in sorted({u[r] for u in U}):
            row = [Fraction(0)] * n_var
            for a, u in enumerate(U):
                if u[r] == x:
                    row[a * k + r] += 1
                    for j in range(k):
                        row[a * k + j] -= x
            rows.append(row)
    for x in sorted({max(u) for u in U}):
        row = [Fraction(0)] * n_var
        for a, u in enumerate(U):
            if max(u) == x:
                row[a * k + u.index(max(u))] += 1
                for j in range(k):
                    row[a * k + j] -= x
        rows.append(row)
    rows.append([Fraction(1)] * n_var)
    rhs = [Fraction(0)] * (len(rows) - 1) + [Fraction(1)]
    # variables: z[u, j] (continuous) and b[u, j] (binary) with z <= b and sum_j b[u, j] <= 1,
    # so that each prediction u carries one label and E[Y | f(X)] is one-hot; then CE_2^2 is the
    # linear function sum z[u, j] ||e_j - u||^2 (the Brier score), which the MILP maximises
    n_u = len(U)
    A_eq = np.zeros((len(rows), 2 * n_var))
    A_eq[:, :n_var] = np.array(rows, dtype=float)
    link = np.hstack([np.eye(n_var), -np.eye(n_var)])
    one = np.zeros((n_u, 2 * n_var))
    for a in range(n_u):
        one[a, n_var + a * k:n_var + (a + 1) * k] = 1.0
    brier = np.array([float(sum((u[i] - (i == j)) ** 2 for i in range(k)))
                      for u in U for j in range(k)])
    rhs_f = np.array(rhs, dtype=float)
    res = milp(np.concatenate([-brier, np.zeros(n_var)]),
               constraints=[LinearConstraint(A_eq, rhs_f, rhs_f),
                            LinearConstraint(link, -np.inf, 0.0),
                            LinearConstraint(one, 0.0, 1.0)],
               integrality=np.concatenate([np.zeros(n_var), np.ones(n_var)]),
               bounds=Bounds(0.0, 1.0), options={"time_limit": time_limit})
    if res.x is None:                                      # pragma: no cover - scipy failure
        raise RuntimeError(f"mixed-integer program failed: {res.message}")
    support = [v for v in range(n_var) if res.x[v] > 1e-9]
    A = sympy.Matrix([[sympy.Rational(row[v].numerator, row[v].denominator) for v in support]
                      for row in rows])
    b = sympy.Matrix([sympy.Rational(x.numerator, x.denominator) for x in rhs])
    sol, params = A.gauss_jordan_solve(b)
    if params.shape[0]:                                    # a face, not a vertex: pin it
        sol = sol.subs({p: sympy.Rational(round(res.x[support[i]] * 10**6), 10**6)
                        for i, p in enumerate(params)})
    z = [Fraction(int(s.p), int(s.q)) for s in sol]
    if min(z) <= 0:                                        # pragma: no cover
        raise RuntimeError("the exact solution on the MILP support is not positive")
    weights, truth, prediction = [], [], []
    for v, zv in zip(support, z):
        a, j = divmod(v, k)
        weights.append(zv)
        truth.append([Fraction(int(i == j)) for i in range(k)])
        prediction.append(U[a])
    return FiniteDistribution(weights, truth, prediction)
