"""Claims that the library computes a paper's printed definition, checked against the text.

A definition is a statement too: "l2-QECE_m is (1/n^2) sum_j (sum_{i in B_j} (p_i - y_i))^2
over the bins of eq. (1)". The check here re-derives the definition from the printed text
alone (sorted positions, the inequalities of eq. (1) in integer arithmetic, the two sums) on
every label vector of small instances and compares it with the library's public function;
its controls are the other readings of the same text that a hurried implementation takes
(bins cut as ``numpy.array_split`` cuts them, ties in input order, the ``|B_j| / n`` weight of
l1 used for l2). Each reading differs from eq. (1) only where the statement's edge lies --
``m`` not dividing ``n``, tied predictions straddling a bin boundary -- so each is a near
control.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from ...core import measures
from ._registry import Claim, Control, cite, register

__all__ = ["printed_qece", "def25_gap"]

CHAPTER = "book/foundations/measures"

#: Prediction values of the enumerated instances: a grid coarse enough that predictions tie
#: (groups of up to three) and straddle bin boundaries, and a point mass at each end.
_GRID = np.array([0.0, 0.2, 0.5, 0.5, 0.7, 0.7, 0.7, 1.0, 0.35, 0.9])


def _bin_of_position(i: np.ndarray, n: int, m: int, rule: str) -> np.ndarray:
    """0-indexed bin of 1-indexed sorted positions ``i``.

    ``"printed"``: eq. (1), ``(j-1) n / m < i <= j n / m``, i.e. ``(j-1) n < i m <= j n``
    (integers only). ``"array_split"``: position ``i`` in bin ``floor((i-1) m / n)``, the
    cut of ``numpy.array_split`` (larger bins first).
    """
    if rule == "printed":
        return -((-i * m) // n) - 1          # ceil(i m / n) - 1, exactly
    if rule == "array_split":
        return ((i - 1) * m) // n
    raise ValueError(f"rule: {rule!r}")


def printed_qece(p, Y, m: int, *, rule: str = "printed", ties: str = "average",
                 l2_weight: str = "printed"):
    """l1- and l2-QECE_m of Def 2.5 from the printed text, for every row of outcomes ``Y``.

    Parameters
    ----------
    p : array_like, shape (n,)
        Predictions.
    Y : array_like, shape (r, n)
        Outcome vectors (0/1), one per row.
    m : int
        Number of bins.
    rule : {"printed", "array_split"}
        How sorted positions are cut into bins (:func:`_bin_of_position`).
    ties : {"average", "position"}
        ``"average"``: the mean over every order of tied predictions (eq. (1) sorts the pairs
        without a rule for ties); ``"position"``: ties in input order.
    l2_weight : {"printed", "ece"}
        ``"printed"``: ``(1/n^2) sum_j S_j^2``; ``"ece"``: ``sum_j (|B_j|/n)(S_j/|B_j|)^2``.

    Returns
    -------
    (l1, l2) : two arrays of shape (r,)

    Examples
    --------
    >>> l1, l2 = printed_qece([0.1, 0.4, 0.6, 0.9], [[0, 1, 1, 0]], 2)
    >>> float(l1[0]), float(l2[0])
    (0.25, 0.03125)
    """
    p = np.asarray(p, dtype=float)
    Y = np.atleast_2d(np.asarray(Y, dtype=float))
    n = p.shape[0]
    base = np.argsort(p, kind="stable")
    groups = [list(g) for _, g in itertools.groupby(base, key=lambda i: p[i])]
    orders = ([base] if ties == "position" else
              [np.concatenate(c) for c in itertools.product(
                  *(list(itertools.permutations(g)) for g in groups))])
    bins = _bin_of_position(np.arange(1, n + 1), n, m, rule)
    l1 = np.zeros(Y.shape[0])
    l2 = np.zeros(Y.shape[0])
    for order in orders:
        R = p[order][None, :] - Y[:, order]                    # residuals in sorted order
        S = np.stack([R[:, bins == j].sum(axis=1) for j in range(m)], axis=1)
        sizes = np.array([(bins == j).sum() for j in range(m)])
        l1 += np.abs(S).sum(axis=1) / n
        if l2_weight == "printed":
            l2 += (S ** 2).sum(axis=1) / n ** 2
        else:
            l2 += ((S[:, sizes > 0] ** 2) / sizes[sizes > 0]).sum(axis=1) / n
    return l1 / len(orders), l2 / len(orders)


def _instances(size: str):
    """``(p, m)`` pairs: n = 1 .. n_max, every m = 1 .. n, predictions drawn from the grid in
    two arrangements (sorted and shuffled), so that ties straddle boundaries and m does not
    always divide n."""
    n_max = 6 if size == "smoke" else 8
    rng = np.random.default_rng(20261128)
    for n in range(1, n_max + 1):
        for arrangement in range(2):
            p = rng.choice(_GRID, size=n, replace=True)
            if arrangement == 0:
                p = np.sort(p)
            for m in range(1, n + 1):
                yield p, m


def _outcomes(n: int) -> np.ndarray:
    return np.array(list(itertools.product((0, 1), repeat=n)), dtype=int)


@functools.lru_cache(maxsize=2)
def _library_values(size: str) -> tuple:
    """The library's public l1_qece and l2_qece on every instance and label vector (computed
    once per size and shared by the claim and its controls)."""
    out = []
    for p, m in _instances(size):
        Y = _outcomes(p.shape[0])
        out.append((np.array([measures.l1_qece(y, p, m) for y in Y]),
                    np.array([measures.l2_qece(y, p, m) for y in Y])))
    return tuple(out)


def def25_gap(size: str, **reading) -> float:
    """Largest ``|library - printed|`` of l1- and l2-QECE_m over every instance and every
    label vector (:func:`printed_qece` with the given reading of the text)."""
    worst = 0.0
    for (p, m), (l1, l2) in zip(_instances(size), _library_values(size)):
        l1_ref, l2_ref = printed_qece(p, _outcomes(p.shape[0]), m, **reading)
        worst = max(worst, float(np.max(np.abs(l1 - l1_ref))),
                    float(np.max(np.abs(l2 - l2_ref))))
    return worst


register(Claim(
    id="000.def2.5.as_printed",
    source=cite("000", "Def 2.5 with eq. (1)"),
    statement="The library's l1- and l2-QECE_m are Def 2.5 as printed: the predictions sorted, "
              "sorted position i in bin j iff (j-1)n/m < i <= jn/m, l1 = (1/n) sum_j |S_j| and "
              "l2 = (1/n^2) sum_j S_j^2 with S_j the bin's sum of p_i - y_i (tied predictions "
              "averaged over their orders, which the printed sort leaves open).",
    quantity=("largest |library − printed Def 2.5| of ℓ1- and ℓ2-QECE_m over every instance and "
              "label vector"),
    check=def25_gap,
    reference=0.0,
    tolerance=1e-12,
    tolerance_reason="Both sides are exact sums of at most 8 terms of size <= 1 (rounding "
                     "below 1e-15); the check covers every label vector of n = 1..6 (smoke) or "
                     "1..8 (full), every m from one bin to one sample per bin (m not dividing "
                     "n included), predictions with ties of up to three straddling bin "
                     "boundaries and point masses at 0 and 1.",
    chapter=CHAPTER,
    controls=(
        Control("bins as array_split",
                "The library cuts sorted positions as numpy.array_split does (position i in "
                "bin floor((i-1)m/n) + 1: the larger bins first), not as eq. (1).",
                check=lambda size: def25_gap(size, rule="array_split"), kind="reading"),
        Control("ties in input order",
                "Tied predictions keep their input order (a stable sort) instead of being "
                "averaged over their orders.",
                check=lambda size: def25_gap(size, ties="position"), kind="reading"),
        Control("l2 with the ECE weight",
                "l2-QECE_m weighs bin j by |B_j|/n, as l1 does (the square of the l2 binned "
                "ECE), instead of the printed 1/n^2.",
                check=lambda size: def25_gap(size, l2_weight="ece"), kind="reading"),
    ),
))


# ---------------------------------------------------------------------------------------------
# Paper 003, eq. (25): the binned ECE estimator with equal-width bins
# ---------------------------------------------------------------------------------------------

def _width_bin(c: float, m: int, closed: str) -> int:
    """0-indexed equal-width bin of ``c`` against the edges ``e_j = j / m`` (each a correctly
    rounded division, as written in decimal). ``closed="left"``: ``[e_j, e_{j+1})``, the last
    bin closed (the library's documented convention); ``closed="right"``: ``(e_{j-1}, e_j]`` as
    paper 003 prints its bins, the first closed at 0."""
    edges = [j / m for j in range(m + 1)]
    if closed == "left":
        return max(j for j in range(m) if c >= edges[j])
    return min(j for j in range(m) if c <= edges[j + 1])


def printed_ece25(y, P, m: int, *, closed: str = "left") -> float:
    """Eq. (25) of paper 003 from the printed text: ``sum_i (n_i / n) |acc_i - conf_i|`` over
    equal-width bins of the confidence ``max_r P_r``, the prediction its first arg max.

    Examples
    --------
    >>> round(printed_ece25([0, 1], [[0.9, 0.1], [0.7, 0.3]], 2), 12)
    0.3
    """
    P = np.asarray(P, dtype=float)
    y = np.asarray(y)
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == y).astype(float)
    bins = np.array([_width_bin(float(c), m, closed) for c in conf])
    n = len(y)
    return float(sum(abs(correct[bins == j].sum() - conf[bins == j].sum())
                     for j in range(m)) / n)


def _ece_instances(size: str):
    """``(y, P, m)``: k = 2 and 3 classes, probabilities on a grid of twentieths (so that
    confidences fall exactly on the edges of m = 2, 4, 5, 10 and 20 bins, 0.5 and 1 among
    them) or drawn from a Dirichlet law (off the edges), n from 1 up, m from one bin up."""
    rng = np.random.default_rng(25)
    reps = 40 if size == "smoke" else 400
    for r in range(reps):
        k = 2 + r % 2
        n = 1 + int(rng.integers(0, 12))
        if r % 3:      # a random composition of 20 twentieths into k parts
            cuts = np.sort(rng.integers(0, 21, size=(n, k - 1)), axis=1)
            P = np.diff(np.concatenate([np.zeros((n, 1)), cuts, np.full((n, 1), 20)],
                                       axis=1), axis=1) / 20
        else:
            P = rng.dirichlet(np.ones(k), size=n)
        y = rng.integers(0, k, size=n)
        for m in (1, 2, 3, 4, 5, 7, 10, 15, 20):
            yield y, P, m


def ece25_gap(size: str, closed: str = "left") -> float:
    """Largest ``|library - eq. (25)|`` over the instances (:func:`printed_ece25` with bins
    closed on ``closed``)."""
    from ...core.measures import binned_ece, confidence
    worst = 0.0
    for y, P, m in _ece_instances(size):
        worst = max(worst, abs(confidence(binned_ece, y, P, n_bins=m)
                               - printed_ece25(y, P, m, closed=closed)))
    return worst


register(Claim(
    id="003.eq25.ece_estimator",
    source=cite("003", "eq. (25)", "in the proof of Prop 3.3, with equal-width bins"),
    statement="The library's confidence ECE (calnotes.confidence(binned_ece, ...)) is eq. (25): "
              "sum_i (n_i/n)|acc_i - conf_i| over m equal-width bins of the top-label "
              "confidence, with the library's edges: bins [ (i-1)/m, i/m ), the last closed, so "
              "a confidence exactly on an interior edge belongs to the bin above (the paper "
              "prints (i-1)/m < c <= i/m, which differs only on the edges).",
    quantity="largest |library's confidence ECE − eq. (25)| over the instances",
    check=ece25_gap,
    reference=0.0,
    tolerance=1e-12,
    tolerance_reason="Both sides are sums of at most 12 terms of size <= 1 (rounding below "
                     "1e-15). Instances: k = 2 and 3, n = 1..12, m = 1..20 bins (1, 2, 3, 4, 5, "
                     "7, 10, 15, 20), probabilities on a grid of twentieths whose confidences "
                     "fall exactly on interior edges, 0.5 and 1 included, and Dirichlet draws "
                     "off the edges; 40 instances per m at smoke size, 400 at full.",
    chapter=CHAPTER,
    controls=(
        Control("bins closed on the right",
                "The library's bins are the printed (i-1)/m < c <= i/m also on the edges (a "
                "confidence exactly on an interior edge in the bin below).",
                check=lambda size: ece25_gap(size, closed="right"), kind="reading"),
    ),
))
