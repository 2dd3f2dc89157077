"""Instances and kernels for the negative controls of 003 Thm 3.1 (claims ``003.thm3.1.*``).

The random family of :mod:`calnotes.book.claims.proper` rarely comes near the places where the
statements of Thm 3.1 are sharp or break.  This module supplies what it misses:

* :func:`small_grid`: **every** binary population with one or two atoms on a small rational
  grid (weights 1/2, 1/2 and, at full size, 1/4, 3/4), and every three-class single atom: point
  masses, ties ``f = (1/2, 1/2)``, one-hot predictions and truths;
* :func:`sharp_instances`: hand-built populations where an inequality of eq. (6) holds with
  equality and both sides are positive (so a constant tightened by 1% must fail);
* :func:`retruth`: the same predictions with the truths rebuilt so that the top-label gap
  ``f_C - P(Y = C | f_C)`` vanishes for every confidence value (``"zero"``: multi-valued,
  tied, top-label calibrated, atoms individually miscalibrated), or so that only its mean
  (``"mean"``) or its first moment ``E[gap f_C]`` (``"linear"``) vanishes: what a constant or a
  linear kernel cannot tell from calibration;
* :func:`shrunk`: ``f' = (E[Y | f] + P_Y) / 2``, miscalibrated with ``E f' = P_Y`` (invisible
  to a constant matrix kernel);
* non-characteristic kernels for :func:`calnotes.theory.population.mmce` and
  :func:`calnotes.theory.population.skce`.
"""

from __future__ import annotations

import itertools
from fractions import Fraction
from functools import lru_cache

import numpy as np

from ...theory import population as pop

__all__ = ["small_grid", "sharp_instances", "retruth", "shrunk", "constant_kernel",
           "linear_kernel", "constant_matrix_kernel", "cwce_proof_sharp", "norm_order_sharp",
           "linear_mmce_blind", "ks_definition_instance"]


def _simplex(k: int, grid: int):
    """Every point of the ``k``-simplex with coordinates in ``{0, 1/grid, ..., 1}``."""
    out = []
    for c in itertools.product(range(grid + 1), repeat=k - 1):
        if sum(c) <= grid:
            out.append([Fraction(x, grid) for x in c] + [Fraction(grid - sum(c), grid)])
    return out


@lru_cache(maxsize=None)
def small_grid(size: str) -> tuple:
    """Every binary population with one or two atoms on the grid ``1/2`` (smoke) or ``1/4``
    (full), two-atom weights ``(1/2, 1/2)`` (and ``(1/4, 3/4)`` at full size), plus every
    three-class single atom on the grid ``1/2`` (smoke) or ``1/3`` (full)."""
    g2, g3 = (2, 2) if size == "smoke" else (4, 3)
    pts = _simplex(2, g2)
    out = [pop.FiniteDistribution([Fraction(1)], [t], [f]) for f in pts for t in pts]
    weights = [(Fraction(1, 2), Fraction(1, 2))]
    if size != "smoke":
        weights.append((Fraction(1, 4), Fraction(3, 4)))
    for w in weights:
        for f1, t1, f2, t2 in itertools.product(pts, repeat=4):
            out.append(pop.FiniteDistribution(list(w), [t1, t2], [f1, f2]))
    pts3 = _simplex(3, g3)
    out += [pop.FiniteDistribution([Fraction(1)], [t], [f]) for f in pts3 for t in pts3]
    return tuple(out)


def cwce_proof_sharp() -> pop.FiniteDistribution:
    """k = 3, two atoms of weight 1/2 with the same confidence 1/2 in different classes:
    only the top classes are class-wise miscalibrated, so ``CWCE_p = TCE_p`` (class-wise
    reading) ``= 1/4`` for every ``p``, while Def C.1's ``TCE_1`` (pooling both) is 0."""
    F = Fraction
    return pop.FiniteDistribution(
        [F(1, 2), F(1, 2)],
        [[F(3, 4), F(1, 4), F(0)], [F(1, 4), F(1, 4), F(1, 2)]],
        [[F(1, 2), F(1, 4), F(1, 4)], [F(1, 4), F(1, 2), F(1, 4)]])


def norm_order_sharp() -> pop.FiniteDistribution:
    """k = 4, one prediction with ``|Delta_k| = 1/4`` in every class: ``||Delta||_p =
    n^(1/p - 1/q) ||Delta||_q`` exactly, so eq. (13) holds with equality at k = 4."""
    F = Fraction
    q = F(1, 4)
    return pop.FiniteDistribution([F(1, 3), F(2, 3)], [[F(1, 2), F(1, 2), 0, 0]] * 2,
                                  [[q, q, q, q]] * 2)


def linear_mmce_blind() -> pop.FiniteDistribution:
    """Binary, confidences 1/2 (a tie) and 1 with gaps -1/4 and +1/8: ``E[gap f_C] = 0``, so
    the MMCE with the linear kernel ``k(r, s) = r s`` is 0 while ``TCE_1 = 3/16``."""
    F = Fraction
    return pop.FiniteDistribution([F(1, 2), F(1, 2)], [[F(3, 4), F(1, 4)], [F(7, 8), F(1, 8)]],
                                  [[F(1, 2), F(1, 2)], [F(1), F(0)]])


def ks_definition_instance() -> pop.FiniteDistribution:
    """Binary, both atoms of confidence 3/4 in different classes, pooled accuracy 3/4:
    ``TCE_1 = 0`` but Def C.2's KS (class-wise conditional) is ``1/4``."""
    F = Fraction
    return pop.FiniteDistribution([F(1, 2), F(1, 2)], [[F(1), F(0)], [F(1, 2), F(1, 2)]],
                                  [[F(3, 4), F(1, 4)], [F(1, 4), F(3, 4)]])


def sharp_instances() -> list:
    """Populations where one inequality of eq. (6) is an equality with positive sides."""
    F = Fraction
    return [
        # BS = 2 = CWCE_1: prediction e_1, label always e_2 (a point mass, k = 2 and k = 3)
        pop.FiniteDistribution([F(1)], [[F(0), F(1)]], [[F(1), F(0)]]),
        pop.FiniteDistribution([F(1)], [[F(0), F(1), F(0)]], [[F(1), F(0), F(0)]]),
        # BS = CE_2^2 (P_{Y|f} one-hot) and eq. (13) tight (k = 2): sqrt-Brier bound tight
        pop.FiniteDistribution([F(1)], [[F(1), F(0)]], [[F(1, 2), F(1, 2)]]),
        # two confidences, same-sign gaps of equal size, one predicted class: TCE_p = TCE_1,
        # TCE_1 = KS = ECE (any binning)
        pop.FiniteDistribution([F(1, 2), F(1, 2)], [[F(1), F(0)], [F(7, 8), F(1, 8)]],
                               [[F(7, 8), F(1, 8)], [F(3, 4), F(1, 4)]]),
        # ties: one confidence value shared by two predicted classes (k = 3): MMCE = c TCE_1
        pop.FiniteDistribution([F(1, 3), F(2, 3)],
                               [[F(1), F(0), F(0)], [F(1, 4), F(3, 4), F(0)]],
                               [[F(1, 2), F(1, 2), F(0)], [F(1, 4), F(1, 2), F(1, 4)]]),
        cwce_proof_sharp(),
        norm_order_sharp(),
    ]


def _top(F):
    C = [max(range(len(row)), key=lambda j: (row[j], -j)) for row in F]
    return C, [row[c] for row, c in zip(F, C)]


def retruth(d: pop.FiniteDistribution, rng, mode: str = "zero"):
    """The predictions of ``d`` with rebuilt truths (exact), or ``None`` if impossible.

    Every atom first gets ``P(Y = C | x) = f_C(x)`` (the rest of the mass spread at random
    over the other classes); then, within each group of atoms sharing a confidence value,
    consecutive atoms trade accuracy (one gains ``s / w_i``, the next loses ``s / w_j``), so
    the atoms are individually miscalibrated but ``P(Y = C | f_C) = f_C``: ``TCE_p = 0`` with
    several confidence values, ties across classes and ``k`` as in ``d`` (``mode="zero"``).
    ``"mean"`` and ``"linear"`` then trade once more between two atoms of *different*
    confidences ``r_i != r_j``, weighted so that ``E[gap] = 0`` (``"mean"``) or
    ``E[gap f_C] = 0`` (``"linear"``): ``TCE_1 > 0`` but a constant or a linear kernel's MMCE
    (and, for ``"mean"``, the one-bin ECE) is zero.
    """
    if mode not in ("zero", "mean", "linear"):
        raise ValueError(f"mode: expected 'zero', 'mean' or 'linear', got {mode!r}")
    w, _, Fm = d.exact
    k = d.n_classes
    Fm = [list(row) for row in Fm]
    C, r = _top(Fm)
    T = []
    for i in range(len(w)):
        rest = 1 - r[i]
        parts = rng.integers(0, 4, size=k - 1).astype(int) + 1
        share = [rest * Fraction(int(p), int(parts.sum())) for p in parts]
        row = share[:C[i]] + [r[i]] + share[C[i]:]
        T.append(row)

    def trade(i, j, gain_i, loss_j):
        """Atom i gains accuracy gain_i (taken from its largest other class), j loses loss_j."""
        oi = max((c for c in range(k) if c != C[i]), key=lambda c: T[i][c])
        oj = next(c for c in range(k) if c != C[j])
        T[i][C[i]] += gain_i
        T[i][oi] -= gain_i
        T[j][C[j]] -= loss_j
        T[j][oj] += loss_j

    def room(i):
        """Accuracy atom i can gain: the mass of its largest other class."""
        return max(T[i][c] for c in range(k) if c != C[i])

    groups = {}
    for i, v in enumerate(r):
        groups.setdefault(v, []).append(i)
    for members in groups.values():
        for i, j in zip(members, members[1:]):
            s = min(w[i] * room(i), w[j] * T[j][C[j]]) / 2
            if s > 0:
                trade(i, j, s / w[i], s / w[j])
    if mode != "zero":
        pairs = [(i, j) for i in range(len(w)) for j in range(len(w))
                 if r[i] != r[j] and room(i) > 0 and T[j][C[j]] > 0]
        if not pairs:
            return None
        i, j = pairs[int(rng.integers(len(pairs)))]
        a, b = (Fraction(1), Fraction(1)) if mode == "mean" else (r[j], r[i])
        s = min(w[i] * room(i) / a, w[j] * T[j][C[j]] / b) / 2
        trade(i, j, s * a / w[i], s * b / w[j])
    return pop.FiniteDistribution(list(w), T, Fm)


def shrunk(d: pop.FiniteDistribution) -> pop.FiniteDistribution:
    """``f' = (E[Y | f(X)] + P_Y) / 2`` on the atoms of ``d`` (exact): ``E[Y | f'] = E[Y | f]``
    (``f'`` is injective in ``E[Y | f]``), so ``f'`` is miscalibrated unless ``E[Y | f] = P_Y``,
    yet ``E[f'(X)] = P_Y``."""
    w, T, _ = d.exact
    Q = pop.conditional_expectation(d, exact=True)
    P = d.label_marginal(exact=True)
    return pop.FiniteDistribution(list(w), [list(t) for t in T],
                                  [[(q + p) / 2 for q, p in zip(row, P)] for row in Q])


def constant_kernel(A, B):
    """``k(r, s) = 1``: positive semi-definite, not characteristic (sees only the mean)."""
    return np.ones(np.broadcast(A, B).shape[:2])


def linear_kernel(A, B):
    """``k(r, s) = r s``: positive semi-definite, not characteristic (sees ``E[gap f_C]``)."""
    return np.asarray(A, dtype=np.float64) * np.asarray(B, dtype=np.float64)


def constant_matrix_kernel(A, B):
    """``kappa(p, q) = 1`` on the simplex (times the identity): the SKCE becomes
    ``||E[f(X) - Y]||^2``, blind to every miscalibration with ``E f(X) = P_Y``."""
    return np.ones((A.shape[0], B.shape[1]))
