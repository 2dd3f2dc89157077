r"""The four predictors of Table 1 (truthfulness paper, Sec. 4) and their expected errors.

The distribution (Sec. 4, *Numerical examples*).  Classes are numbered ``0 .. k-1`` here
(the paper numbers them ``1 .. k``): the feature ``x`` is uniform on ``{0, .., k-1}`` and, given
``x``, the outcome is ``y = x`` with probability ``1 - eps1`` and ``y = (x + 1) mod k`` with
probability ``eps1``.

The predictors, exactly as printed:

* ``f1`` -- the truth: ``1 - eps1`` on class ``x``, ``eps1`` on class ``x + 1 (mod k)``;
* ``f2`` -- ``f1`` with ``1 - eps1 - eps2`` and ``eps1 + eps2`` in place of ``1 - eps1`` and
  ``eps1``;
* ``f3`` -- the constant ``(1/k, .., 1/k)``;
* ``f4`` -- the constant ``(1/k + (k-1) eps3, 1/k - eps3, .., 1/k - eps3)`` (the large
  coordinate is the paper's class 1, our class 0).

The measures: ``l1``/``l2``-QECE\ :sub:`m` (Def 2.5) with confidence (Def 2.8) or class-wise
(Def 2.7) aggregation.  A *cell* is ``"<predictor>.<measure>"``, e.g. ``"f3.l1_cw"``; see
:data:`CELLS`.

What is computed
----------------
``E[CAL(f(x_1), .., f(x_n); y_1, .., y_n)]`` over ``n`` i.i.d. pairs ``(x_i, y_i)`` -- over both
the features and the outcomes.  Three estimators, from cheapest to most literal:

:func:`exact_table1`
    All 16 cells exactly, with no sampling at all.  Given ``x``, the outcomes are independent
    with known probabilities, and every cell's conditional expectation depends on ``x`` only
    through class counts (below), whose law is multinomial: summing over it is exact.
:func:`expected_table1`
    The Rao-Blackwellized Monte Carlo of the chapter: draw the features ``n_draws`` times and
    average the *exact* conditional expectation given ``x`` (outcomes integrated out, as in
    :func:`calnotes.core.expectation.expected_qece`), with a standard error over the draws.
    ``method="reference"`` does literally that, one :func:`~calnotes.core.expectation.expected_qece`
    call per draw, predictor and measure; ``method="fast"`` (default) gets the same per-draw
    values from the class counts, vectorised over draws, and takes the cells that do not
    depend on ``x`` exactly.
:func:`simulate_table1`
    Plain Monte Carlo: draw ``x`` and ``y`` and evaluate the measures of
    :mod:`calnotes.core.measures`.  Slow and noisy; it exists to check the other two.

Why class counts suffice.  In the column of class ``r`` the predictions of ``f1`` (and ``f2``)
take three values: ``0`` (rows with ``x`` not in ``{r-1, r}``, truth 0), a low value (rows with
``x = r - 1``, truth ``eps1``) and a high value (rows with ``x = r``, truth ``1 - eps1``).  Within
each tie group the (prediction, truth) pairs are identical, so the sorted order puts the groups
in the order zeros, low, high and the bins of eq. (1) see only the group sizes
``(N_{r-1}, N_r)``; the outcomes inside a group are exchangeable, so the tie rule
(:mod:`calnotes.core.binning`, ``ties="average"`` or ``"position"``) does not change any
expectation.  The confidence problems of ``f1`` and ``f2`` do not
depend on ``x`` at all (every sample has confidence ``1 - eps1 (- eps2)`` and truth
``1 - eps1``), and the constant predictors ``f3``, ``f4`` have bins that do not depend on ``x``, so
their outcomes are, marginally, i.i.d. uniform labels.

Chapter *Table 1: four predictors, four measures* (``book/truthfulness/table1.md``); the printed
and derived closed forms are in :func:`calnotes.theory.symbolic.table1_printed` and
:func:`calnotes.theory.symbolic.table1_derived`.
"""

from __future__ import annotations

import functools
import math
import numbers
from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np
from scipy.stats import binom

from .._validate import check_rng

__all__ = [
    "PREDICTORS",
    "MEASURES",
    "CELLS",
    "Table1Params",
    "Table1Estimate",
    "check_table1_params",
    "draw_features",
    "true_conditional",
    "table1_predictions",
    "draw_outcomes",
    "table1_values",
    "conditional_table1",
    "expected_table1",
    "exact_table1",
    "simulate_table1",
    "binomial_abs_deviation",
    "printed_table1",
    "derived_table1",
    "clt_allowance",
    "boundary_allowance",
    "table1_allowances",
    "compare_cells",
    "table1_by_bins",
    "rank_changes",
    "rankings",
]

#: The four predictors, in the order of the rows of Table 1.
PREDICTORS = ("f1", "f2", "f3", "f4")
#: The four measures, in the order of the columns of Table 1: l1-QECE^conf, l1-QECE^classwise,
#: l2-QECE^conf, l2-QECE^classwise.
MEASURES = ("l1_conf", "l1_cw", "l2_conf", "l2_cw")
#: The 16 cells ``"<predictor>.<measure>"``, row by row.
CELLS = tuple(f"{f}.{mm}" for f in PREDICTORS for mm in MEASURES)

_SPEC = {"l1_conf": (1, "confidence"), "l1_cw": (1, "classwise"),
         "l2_conf": (2, "confidence"), "l2_cw": (2, "classwise")}
# Cells whose conditional expectation given x varies with x (the others are taken exactly).
# (f1.l2_cw does not either: given x it is 2 eps1 (1 - eps1) / (k n), Lemma C.1 draw by draw.)
_DRAWN = ("f1.l1_cw", "f2.l1_cw", "f2.l2_cw")
_PAIR_CHUNK = 1 << 21  # elements per block when summing over a binomial support
_TAIL = 1e-18        # binomial tail mass left out of those sums


# --------------------------------------------------------------------------- parameters

class Table1Params(NamedTuple):
    """Validated parameters of the Table 1 example."""

    k: int        #: number of classes
    n: int        #: sample size
    m: int        #: number of equal-mass bins
    eps1: float   #: label noise of the distribution
    eps2: float   #: bias of f2
    eps3: float   #: bias of f4


def _check_int(value, name, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name}: expected an integer >= {low}, got {value!r}")
    return int(value)


def _check_real(value, name):
    if isinstance(value, bool) or not isinstance(value, numbers.Real) or not math.isfinite(value):
        raise ValueError(f"{name}: expected a finite number, got {value!r}")
    return float(value)


def check_table1_params(k, n, m, eps1, eps2, eps3) -> Table1Params:
    """Validate the parameters of the Table 1 example and return them as :class:`Table1Params`.

    Requirements: ``k >= 2``; ``1 <= m <= n``; ``0 <= eps1``, ``0 <= eps2`` and
    ``eps1 + eps2 < 1/2`` (so that ``f1`` and ``f2`` put their larger probability on ``x``, as
    the paper's "small" errors do); ``0 <= eps3 <= 1/k`` (so that ``f4`` is a distribution).

    Examples
    --------
    >>> check_table1_params(10, 2000, 20, 0.1, 0.02, 0.003).k
    10
    >>> check_table1_params(10, 2000, 20, 0.3, 0.25, 0.0)
    Traceback (most recent call last):
    ...
    ValueError: eps2: need eps1 + eps2 < 1/2 (f2's larger probability on class x), got eps1 = 0.3, eps2 = 0.25
    """
    k = _check_int(k, "k", 2)
    n = _check_int(n, "n", 1)
    m = _check_int(m, "m", 1)
    if m > n:
        raise ValueError(f"m: {m} bins for n = {n} samples; use at most n bins")
    eps1, eps2, eps3 = (_check_real(v, name) for v, name in
                        ((eps1, "eps1"), (eps2, "eps2"), (eps3, "eps3")))
    if not 0.0 <= eps1 < 0.5:
        raise ValueError(f"eps1: expected 0 <= eps1 < 1/2, got {eps1!r}")
    if eps2 < 0.0:
        raise ValueError(f"eps2: expected eps2 >= 0, got {eps2!r}")
    if not eps1 + eps2 < 0.5:
        raise ValueError(f"eps2: need eps1 + eps2 < 1/2 (f2's larger probability on class x),"
                         f" got eps1 = {eps1!r}, eps2 = {eps2!r}")
    if not 0.0 <= eps3 <= 1.0 / k:
        raise ValueError(f"eps3: expected 0 <= eps3 <= 1/k = {1.0 / k!r}, got {eps3!r}")
    return Table1Params(k, n, m, eps1, eps2, eps3)


# --------------------------------------------------------------------------- the example

def draw_features(n: int, k: int, rng, size: int | None = None) -> np.ndarray:
    """Draw ``n`` features uniformly from ``{0, .., k-1}``; ``size`` draws give shape ``(size, n)``.

    Examples
    --------
    >>> draw_features(5, 3, rng=0).shape, draw_features(5, 3, rng=0, size=2).shape
    ((5,), (2, 5))
    """
    gen = check_rng(rng)
    shape = n if size is None else (size, n)
    return gen.integers(k, size=shape)


def _one_hot_pair(x, k, low, high):
    """Rows with ``high`` at class ``x`` and ``low`` at class ``x + 1 (mod k)``; any leading shape."""
    x = np.asarray(x)
    out = np.zeros(x.shape + (k,))
    np.put_along_axis(out, x[..., None], high, axis=-1)
    np.put_along_axis(out, ((x + 1) % k)[..., None], low, axis=-1)
    return out


def true_conditional(x, k: int, eps1: float) -> np.ndarray:
    """The true conditional distribution ``P(y = . | x)`` of each feature, shape ``x.shape + (k,)``.

    Examples
    --------
    >>> true_conditional([0, 2], 3, 0.1).tolist()
    [[0.9, 0.1, 0.0], [0.1, 0.0, 0.9]]
    """
    return _one_hot_pair(x, k, eps1, 1.0 - eps1)


def table1_predictions(x, k: int, eps1: float, eps2: float, eps3: float) -> dict:
    """The predictions of ``f1 .. f4`` on the features ``x``: ``{name: array x.shape + (k,)}``.

    Examples
    --------
    >>> P = table1_predictions([1], 4, 0.1, 0.05, 0.01)
    >>> [round(float(v), 4) for v in P["f2"][0]], [round(float(v), 4) for v in P["f4"][0]]
    ([0.0, 0.85, 0.15, 0.0], [0.28, 0.24, 0.24, 0.24])
    """
    x = np.asarray(x)
    f4 = np.full(k, 1.0 / k - eps3)
    f4[0] = 1.0 / k + (k - 1) * eps3
    return {
        "f1": _one_hot_pair(x, k, eps1, 1.0 - eps1),
        "f2": _one_hot_pair(x, k, eps1 + eps2, 1.0 - eps1 - eps2),
        "f3": np.full(x.shape + (k,), 1.0 / k),
        "f4": np.broadcast_to(f4, x.shape + (k,)).copy(),
    }


def draw_outcomes(x, k: int, eps1: float, rng) -> np.ndarray:
    """Draw ``y | x``: ``x`` with probability ``1 - eps1``, ``(x + 1) mod k`` otherwise.

    Examples
    --------
    >>> draw_outcomes([0, 1, 2], 3, 0.0, rng=0).tolist()
    [0, 1, 2]
    """
    gen = check_rng(rng)
    x = np.asarray(x)
    return (x + (gen.uniform(size=x.shape) < eps1)) % k


def table1_values(y, predictions: dict, m: int) -> dict:
    """The 16 measures on one sample: ``{cell: value}``, computed by :mod:`calnotes.core.measures`.

    Examples
    --------
    >>> x = draw_features(40, 4, rng=1)
    >>> v = table1_values(draw_outcomes(x, 4, 0.1, rng=2), table1_predictions(x, 4, 0.1, 0.0, 0.0), 4)
    >>> v["f1.l2_cw"] == v["f2.l2_cw"]  # eps2 = 0: f2 is f1
    True
    """
    from ..core.measures import classwise, confidence, l1_qece, l2_qece

    measure = {1: l1_qece, 2: l2_qece}
    out = {}
    for f in PREDICTORS:
        for mm in MEASURES:
            p, agg = _SPEC[mm]
            lift = classwise if agg == "classwise" else confidence
            out[f"{f}.{mm}"] = lift(measure[p], y, predictions[f], n_bins=m)
    return out


def conditional_table1(x, k: int, m: int, eps1: float, eps2: float, eps3: float) -> dict:
    """Exact ``E[cell | x]`` for the 16 cells by :func:`calnotes.core.expectation.expected_qece`.

    The outcomes are integrated out exactly (``y_i ~ P(. | x_i)`` independently); the
    features are fixed.  One ``expected_qece`` call per cell: the literal, slow reference.

    Examples
    --------
    >>> x = draw_features(30, 3, rng=0)
    >>> e = conditional_table1(x, 3, 3, 0.1, 0.02, 0.01)
    >>> round(e["f1.l2_conf"], 12) == round(0.1 * 0.9 / 30, 12)  # Thm 2.6
    True
    """
    from ..core.expectation import expected_qece

    x = np.asarray(x)
    truth = true_conditional(x, k, eps1)
    preds = table1_predictions(x, k, eps1, eps2, eps3)
    out = {}
    for f in PREDICTORS:
        for mm in MEASURES:
            p, agg = _SPEC[mm]
            out[f"{f}.{mm}"] = expected_qece(preds[f], truth, m, p=p, aggregation=agg)
    return out


# --------------------------------------------------------------------------- exact bin sums

def binomial_abs_deviation(t, h, q) -> np.ndarray:
    r"""``E|t - Y|`` for ``Y ~ Bin(h, q)``, exactly, vectorised (arrays broadcast).

    With :math:`s = \lfloor t \rfloor + 1`, :math:`\mathbb E|t - Y| = t - hq + 2\,\mathbb E(Y-t)^+`
    and :math:`\mathbb E(Y - t)^+ = hq\,P(\mathrm{Bin}(h-1, q) \ge s-1) - t\,P(Y \ge s)`
    (from :math:`y\binom{h}{y} = h\binom{h-1}{y-1}`): two binomial tail probabilities, no sum.

    Examples
    --------
    >>> float(binomial_abs_deviation(1.0, 2, 0.5))  # |1 - Y|: 1, 0, 1 w.p. 1/4, 1/2, 1/4
    0.5
    >>> float(binomial_abs_deviation(-0.5, 0, 0.3))
    0.5
    """
    t = np.asarray(t, dtype=np.float64)
    h = np.asarray(h, dtype=np.int64)
    q = np.asarray(q, dtype=np.float64)
    mean = h * q
    s = np.floor(t) + 1.0
    tail = binom.sf(s - 1.0, h, q)                           # P(Y >= s)
    tail_1 = binom.sf(s - 2.0, np.maximum(h - 1, 0), q)      # P(Bin(h-1, q) >= s-1)
    out = (t - mean) + 2.0 * (mean * tail_1 - t * tail)
    return np.where(h == 0, np.abs(t), out)


def _two_group_abs(l, h, pL, qL, pH, qH) -> np.ndarray:
    """``E|l pL + h pH - Bin(l, qL) - Bin(h, qH)|`` for arrays of counts ``(l, h)``."""
    l = np.asarray(l, dtype=np.int64)
    h = np.asarray(h, dtype=np.int64)
    c = l * pL + h * pH
    out = np.where(l == 0, binomial_abs_deviation(c, h, qH),
                   binomial_abs_deviation(c, l, qL))  # exact when h == 0 (or l == 0)
    mixed = np.flatnonzero((l > 0) & (h > 0))
    if mixed.size:
        out[mixed] = _mixed_abs(l[mixed], h[mixed], c[mixed], qL, qH)
    return out


def _window(count, q):
    """Support window of ``Bin(count, q)`` outside which the pmf sums to below ``2 * _TAIL``."""
    lo = np.maximum(binom.ppf(_TAIL, count, q) - 1, 0).astype(np.int64)
    hi = np.minimum(binom.isf(_TAIL, count, q) + 1, count).astype(np.int64)
    return lo, hi


def _mixed_abs(l, h, c, qL, qH):
    r"""``E|c - Y1 - Y2|``, ``Y1 ~ Bin(l, qL)``, ``Y2 ~ Bin(h, qH)`` independent, per row.

    Condition on ``Y1``: with ``D(t) = E|t - Y2| = t (2 F(s) - 1) + h qH - 2 G(s)``, ``s`` the
    floor of ``t``, ``F(s) = P(Y2 <= s)`` and ``G(s) = E[Y2; Y2 <= s]`` (prefix sums of the pmf
    of ``Y2``), the answer is ``sum_y P(Y1 = y) D(c - y)``.  Both binomials are cut to their
    ``1e-18`` tail windows; the dropped mass times the terms (at most ``l + h``) is far below
    float64 resolution of the result.
    """
    # pmf rows (and prefix sums) once per distinct count, gathered per pair
    ul, il = np.unique(l, return_inverse=True)
    uh, ih = np.unique(h, return_inverse=True)
    lo1, hi1 = _window(ul, qL)
    lo2, hi2 = _window(uh, qH)
    w1, w2 = int((hi1 - lo1).max()) + 1, int((hi2 - lo2).max()) + 1
    y1 = lo1[:, None] + np.arange(w1)[None, :]
    P1 = np.where(y1 <= hi1[:, None], binom.pmf(y1, ul[:, None], qL), 0.0)
    y2 = lo2[:, None] + np.arange(w2)[None, :]
    p2 = np.where(y2 <= hi2[:, None], binom.pmf(y2, uh[:, None], qH), 0.0)
    F, G = np.cumsum(p2, axis=1), np.cumsum(p2 * y2, axis=1)
    out = np.empty(l.shape[0])
    per_block = max(1, _PAIR_CHUNK // w1)
    for start in range(0, l.shape[0], per_block):
        sl = slice(start, start + per_block)
        a, b = il[sl], ih[sl]
        t = c[sl, None] - (lo1[a, None] + np.arange(w1)[None, :])
        idx = np.floor(t).astype(np.int64) - lo2[b, None]
        below = idx < 0
        idx = np.clip(idx, 0, w2 - 1)
        Fs = np.where(below, 0.0, F[b[:, None], idx])
        Gs = np.where(below, 0.0, G[b[:, None], idx])
        D = t * (2.0 * Fs - 1.0) + (h[sl, None] * qH) - 2.0 * Gs
        out[sl] = (P1[a] * D).sum(axis=1)
    return out


def _bounds(n: int, m: int) -> np.ndarray:
    return (np.arange(m + 1, dtype=np.int64) * n) // m


def _constant_column(n, m, c, q):
    """(E l1, E l2) of a binary column with every prediction ``c`` and every truth ``q``."""
    sizes = np.diff(_bounds(n, m))
    l1 = binomial_abs_deviation(sizes * c, sizes, q).sum() / n
    l2 = (((sizes * (c - q)) ** 2).sum() + n * q * (1.0 - q)) / n ** 2
    return float(l1), float(l2)


def _groups(prm: Table1Params, f: str):
    """(low prediction, low truth, high prediction, high truth) of a class column of f1 or f2."""
    e1 = prm.eps1
    e2 = prm.eps2 if f == "f2" else 0.0
    return e1 + e2, e1, 1.0 - e1 - e2, 1.0 - e1


def _bin_compositions(prm: Table1Params, n_low, n_high):
    """Per count pair and bin: the numbers ``(l, h)`` of low and high samples in the bin.

    The sorted class column is: zeros, then ``n_low`` samples of the low group, then
    ``n_high`` of the high group (the order of the predictions ``0 < pL < pH``).  Leading bins
    that hold zeros for every pair (no bias, no variance) are left out.
    """
    n, m = prm.n, prm.m
    n_low = np.asarray(n_low, dtype=np.int64)[:, None]
    n_high = np.asarray(n_high, dtype=np.int64)[:, None]
    bounds = _bounds(n, m)
    start = n - n_low - n_high
    first = int(np.searchsorted(bounds[1:], start.min(), side="right"))  # bins below: zeros only
    lo, hi = bounds[None, first:-1], bounds[None, first + 1:]
    l = np.clip(np.minimum(hi, start + n_low) - np.maximum(lo, start), 0, None)
    h = np.clip(np.minimum(hi, n) - np.maximum(lo, start + n_low), 0, None)
    return l, h


def _distinct(keys, size):
    """``np.unique(keys, return_inverse=True)`` for non-negative ints below ``size``."""
    if size > 1 << 24:
        values, inverse = np.unique(keys, return_inverse=True)
        return values, inverse.reshape(keys.shape)
    present = np.zeros(size, dtype=bool)
    present[keys] = True
    values = np.flatnonzero(present)
    lookup = np.empty(size, dtype=np.int64)
    lookup[values] = np.arange(values.size)
    return values, lookup[keys]


def _classwise_given_counts(prm: Table1Params, f: str, n_low, n_high, compositions=None):
    """Exact ``E[. | counts]`` of one class column of f1/f2: arrays (l1, l2) per count pair.

    Each bin holds ``l`` low samples (prediction ``pL``, truth ``qL``) and ``h`` high samples
    (``pH``, ``qH``); the few distinct ``(l, h)`` are evaluated once.
    """
    n = prm.n
    pL, qL, pH, qH = _groups(prm, f)
    l, h = compositions if compositions is not None else _bin_compositions(prm, n_low, n_high)
    bias = l * (pL - qL) + h * (pH - qH)
    var = (np.asarray(n_low) * qL * (1 - qL) + np.asarray(n_high) * qH * (1 - qH))
    l2 = ((bias ** 2).sum(axis=1) + var) / n ** 2
    base = int(np.diff(_bounds(n, prm.m)).max()) + 1
    keys, inverse = _distinct(l * base + h, base * base)  # distinct (l, h) pairs
    e_abs = _two_group_abs(keys // base, keys % base, pL, qL, pH, qH)
    l1 = e_abs[inverse].sum(axis=1) / n
    return l1, l2


def _x_free_cells(prm: Table1Params) -> dict:
    """The 13 cells whose expectation needs no feature draws, exactly."""
    k, n, m, e1, e2, e3 = prm
    out = {}
    for f, c in (("f1", 1.0 - e1), ("f2", 1.0 - e1 - e2)):
        out[f"{f}.l1_conf"], out[f"{f}.l2_conf"] = _constant_column(n, m, c, 1.0 - e1)
    uniform = _constant_column(n, m, 1.0 / k, 1.0 / k)
    # f1 class-wise l2 given x: no bias, variance eps1 (1 - eps1) twice per sample (Thm 2.6)
    out["f1.l2_cw"] = (n * 2.0 * e1 * (1.0 - e1)) / (k * n ** 2)
    out["f3.l1_conf"], out["f3.l2_conf"] = uniform
    out["f3.l1_cw"], out["f3.l2_cw"] = uniform  # every class column is the same problem
    high = _constant_column(n, m, 1.0 / k + (k - 1) * e3, 1.0 / k)
    low = _constant_column(n, m, 1.0 / k - e3, 1.0 / k)
    out["f4.l1_conf"], out["f4.l2_conf"] = high
    out["f4.l1_cw"] = (high[0] + (k - 1) * low[0]) / k
    out["f4.l2_cw"] = (high[1] + (k - 1) * low[1]) / k
    return out


# --------------------------------------------------------------------------- estimators

@dataclass(frozen=True)
class Table1Estimate:
    """Expected values of the 16 cells of Table 1, with standard errors.

    Attributes
    ----------
    params : Table1Params
    mean : dict
        ``{cell: estimate}`` for the 16 :data:`CELLS`.
    se : dict
        ``{cell: standard error}``; ``0.0`` for a cell computed exactly.
    n_draws : int
        Number of feature draws (or, for :func:`simulate_table1`, of full replications); 0 for
        :func:`exact_table1`.
    method : str
        ``"exact"``, ``"fast"``, ``"reference"`` or ``"simulation"``.
    values : dict
        ``{cell: array (n_draws,)}``: the per-draw values behind each sampled cell.
    """

    params: Table1Params
    mean: dict
    se: dict
    n_draws: int
    method: str
    values: dict = field(default_factory=dict, repr=False)

    def z_score(self, cell: str, reference: float) -> float:
        """``(mean - reference) / se`` of a cell.

        For an exact cell (``se == 0``): 0 if the two agree to 1e-12 (relative), else ``+-inf``.
        """
        gap = self.mean[cell] - reference
        if self.se[cell] > 0:
            return float(gap / self.se[cell])
        return 0.0 if abs(gap) <= 1e-12 * abs(reference) else math.copysign(math.inf, gap)

    def to_frame(self):
        """A pandas DataFrame: predictors as rows, measures as columns, of the means."""
        import pandas as pd

        return pd.DataFrame([[self.mean[f"{f}.{mm}"] for mm in MEASURES] for f in PREDICTORS],
                            index=list(PREDICTORS), columns=list(MEASURES))


def _summarise(prm, values: dict, exact: dict, n_draws, method):
    mean, se = dict(exact), {c: 0.0 for c in exact}
    for cell, v in values.items():
        mean[cell] = float(v.mean())
        se[cell] = float(v.std(ddof=1) / math.sqrt(v.size)) if v.size > 1 else math.nan
    return Table1Estimate(prm, {c: mean[c] for c in CELLS}, {c: se[c] for c in CELLS},
                          n_draws, method, values)


def _draw_chunks(prm, n_draws, rng, chunk):
    """Feature draws in blocks of ``chunk`` rows (the same stream for every method)."""
    gen = check_rng(rng)
    for start in range(0, n_draws, chunk):
        yield draw_features(prm.n, prm.k, gen, size=min(chunk, n_draws - start))


def _chunk_rows(n):
    return max(1, (1 << 22) // max(n, 1))


#: With an executor, a call is cut into about this many tasks (unless told otherwise).
_TASKS = 64


def _fast_block(prm, counts):
    """Per-draw values of the :data:`_DRAWN` cells from the class counts ``(draws, k)``."""
    n_low, n_high = np.roll(counts, 1, axis=1), counts   # N_{r-1}, N_r for class r
    out = {}
    for f in ("f1", "f2"):
        l1, l2 = _unique_pairs(prm, f, n_low.ravel(), n_high.ravel())
        out[f"{f}.l1_cw"] = l1.reshape(counts.shape).mean(axis=1)
        if f == "f2":
            out["f2.l2_cw"] = l2.reshape(counts.shape).mean(axis=1)
    return out


def _reference_block(prm, block):
    """:func:`conditional_table1` of every draw in ``block`` ``(draws, n)``: ``(draws, 16)``."""
    out = np.empty((block.shape[0], len(CELLS)))
    for i, x in enumerate(block):
        cond = conditional_table1(x, prm.k, prm.m, prm.eps1, prm.eps2, prm.eps3)
        out[i] = [cond[c] for c in CELLS]
    return out


def expected_table1(k: int, n: int, m: int, eps1: float, eps2: float, eps3: float,
                    n_draws: int, rng, *, method: str = "fast",
                    executor=None) -> Table1Estimate:
    r"""Expected Table 1 over features and outcomes, Rao-Blackwellized over the outcomes.

    Draw the ``n`` features ``n_draws`` times; for each draw take the **exact** conditional
    expectation of every cell given the features (the outcomes integrated out); report the
    average over draws and its standard error.  This has far less variance than simulating
    the outcomes too (:func:`simulate_table1`).

    Parameters
    ----------
    k, n, m, eps1, eps2, eps3
        Classes, sample size, bins, and the three error parameters (see
        :func:`check_table1_params`).
    n_draws : int
        Number of feature draws (``>= 1``; the standard error needs ``>= 2``).
    rng : numpy.random.Generator or int
        Source of the feature draws (drawn in blocks of rows; both methods consume the same
        stream, so they see the same features).
    method : {"fast", "reference"}
        ``"reference"``: one :func:`calnotes.core.expectation.expected_qece` call per draw and cell,
        literally (about 30 s for 2,000 draws at ``k=10, n=2000, m=20``).  ``"fast"``: the
        per-draw conditional expectations of the three cells that depend on the features
        (``f1.l1_cw``, ``f2.l1_cw``, ``f2.l2_cw``) from the class counts (identical to the
        reference values up to rounding), vectorised over draws; the other 13 cells exactly
        over features and outcomes (:func:`exact_table1`; standard error 0): their bins do not
        depend on the features, or (``f1.l2_cw``) their conditional expectation does not.
    executor : concurrent.futures.Executor, optional
        Where the per-draw conditional expectations are computed, e.g. a
        ``ThreadPoolExecutor``, ``ProcessPoolExecutor`` or a Dask ``Client.get_executor()``.
        The features are always drawn here, from ``rng``, in the same blocks; only the work on
        them is sent out (for ``"fast"`` just the class counts), so the result is identical
        with or without an executor.  Worth it for ``method="reference"``; ``"fast"`` takes
        well under a second anyway.

    Returns
    -------
    Table1Estimate

    Examples
    --------
    >>> est = expected_table1(4, 200, 4, 0.1, 0.02, 0.01, n_draws=50, rng=0)
    >>> est.se["f3.l2_cw"], est.se["f2.l1_cw"] > 0
    (0.0, True)
    >>> abs(est.mean["f1.l2_cw"] - 2 * 0.1 * 0.9 / (4 * 200)) < 1e-15  # Lemma C.1
    True

    The same numbers with the work spread over threads:

    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     ref = expected_table1(4, 40, 4, 0.1, 0.02, 0.01, n_draws=6, rng=0,
    ...                           method="reference", executor=pool)
    >>> ref.mean == expected_table1(4, 40, 4, 0.1, 0.02, 0.01, n_draws=6, rng=0,
    ...                             method="reference").mean
    True
    """
    from ..core.expectation import _map_ordered

    prm = check_table1_params(k, n, m, eps1, eps2, eps3)
    n_draws = _check_int(n_draws, "n_draws", 1)
    if method not in ("fast", "reference"):
        raise ValueError(f"method: expected 'fast' or 'reference', got {method!r}")
    chunks = _draw_chunks(prm, n_draws, rng, _chunk_rows(prm.n))
    if method == "reference":
        # every draw is computed on its own: cutting blocks into tasks changes nothing
        per_task = max(1, -(-n_draws // _TASKS))
        tasks = [(prm, block[start:start + per_task]) for block in chunks
                 for start in range(0, block.shape[0], per_task)]
        rows = np.concatenate(_map_ordered(_reference_block, tasks, executor))
        values = {c: rows[:, i].copy() for i, c in enumerate(CELLS)}
        return _summarise(prm, values, {}, n_draws, method)
    # one task per block of draws, as drawn: the distinct count pairs of a block are
    # evaluated together, so the block (not the executor) fixes every rounding
    tasks = [(prm, np.stack([np.bincount(x, minlength=prm.k) for x in block]))  # (draws, k)
             for block in chunks]
    parts = _map_ordered(_fast_block, tasks, executor)
    values = {c: np.concatenate([part[c] for part in parts]) for c in _DRAWN}
    return _summarise(prm, values, _x_free_cells(prm), n_draws, method)


def _unique_pairs(prm, f, n_low, n_high):
    """:func:`_classwise_given_counts` evaluated once per distinct count pair."""
    base = prm.n + 1
    keys, inverse = _distinct(np.asarray(n_low, dtype=np.int64) * base + n_high, base * base)
    l1, l2 = _classwise_given_counts(prm, f, keys // base, keys % base)
    return l1[inverse], l2[inverse]


def _count_pair_law(k: int, n: int, tail: float = 1e-17):
    """Support and probabilities of ``(N_{r-1}, N_r)`` (a trinomial), tails below ``tail`` cut."""
    first = np.arange(int(binom.ppf(tail, n, 1.0 / k)), int(binom.isf(tail, n, 1.0 / k)) + 1)
    if k == 2:
        return first, n - first, binom.pmf(first, n, 0.5)
    margin = binom.pmf(first, n, 1.0 / k)  # both margins are Bin(n, 1/k)
    # pre-select by the product of the margins (within a few orders of the joint law there)
    i, j = np.nonzero(margin[:, None] * margin[None, :] > tail * 1e-13)
    a, b = first[i], first[j]
    keep = a + b <= n
    a, b = a[keep], b[keep]
    weight = binom.pmf(a, n, 1.0 / k) * binom.pmf(b, n - a, 1.0 / (k - 1))
    keep = weight > tail * 1e-6  # at most ~1e6 pairs dropped: total dropped mass < tail
    return a[keep], b[keep], weight[keep]


@functools.lru_cache(maxsize=256)
def _exact_cells(prm: Table1Params) -> tuple:
    exact = _x_free_cells(prm)
    a, b, w = _count_pair_law(prm.k, prm.n)
    compositions = _bin_compositions(prm, a, b)
    for f in ("f1", "f2"):
        l1, l2 = _classwise_given_counts(prm, f, a, b, compositions)
        exact[f"{f}.l1_cw"] = float(w @ l1 / w.sum())
        if f == "f2":
            exact["f2.l2_cw"] = float(w @ l2 / w.sum())
    return tuple(exact[c] for c in CELLS)


def exact_table1(k: int, n: int, m: int, eps1: float, eps2: float, eps3: float) -> Table1Estimate:
    r"""The 16 cells exactly: expectation over features and outcomes, no sampling.

    The class-wise cells of ``f1`` (l1) and ``f2`` are sums, over the trinomial law of the counts
    :math:`(N_{r-1}, N_r)`, of their exact conditional expectations (see the module
    docstring); count pairs in the ``1e-17`` tails of either margin, or of joint probability
    below ``1e-23``, are dropped (the dropped mass, below ``1e-16``, bounds the error since
    every cell is at most 1).  The other 13 cells do not depend on the features and are
    closed-form sums over the bins.

    Returns
    -------
    Table1Estimate
        ``se`` is 0 for every cell, ``n_draws`` 0, ``method`` ``"exact"``.

    Examples
    --------
    >>> ex = exact_table1(4, 200, 4, 0.1, 0.02, 0.01)
    >>> formula = 0.02 ** 2 / 4 + 0.1 * 0.9 / 200
    >>> abs(ex.mean["f2.l2_conf"] - formula) < 1e-15
    True
    """
    prm = check_table1_params(k, n, m, eps1, eps2, eps3)
    exact = dict(zip(CELLS, _exact_cells(prm)))  # cached: claims and chapters reuse points
    return _summarise(prm, {}, exact, 0, "exact")


def _simulate_block(prm, parent, start, stop):
    """The 16 measures of replications ``start .. stop - 1``: ``(stop - start, 16)``.

    Replication ``i`` draws its features, then its outcomes, from child ``i`` of ``parent``.
    """
    from ..core.expectation import _child_seed

    out = np.empty((stop - start, len(CELLS)))
    for row, i in enumerate(range(start, stop)):
        gen = np.random.default_rng(_child_seed(parent, i))
        x = draw_features(prm.n, prm.k, gen)
        y = draw_outcomes(x, prm.k, prm.eps1, gen)
        v = table1_values(y, table1_predictions(x, prm.k, prm.eps1, prm.eps2, prm.eps3), prm.m)
        out[row] = [v[c] for c in CELLS]
    return out


def simulate_table1(k: int, n: int, m: int, eps1: float, eps2: float, eps3: float,
                    n_reps: int, rng, *, executor=None,
                    chunk_reps: int | None = None) -> Table1Estimate:
    """Plain Monte Carlo: draw features *and* outcomes ``n_reps`` times, evaluate the measures.

    Every replication calls :func:`table1_values` (:mod:`calnotes.core.measures`), so this checks
    the whole chain; it is slow (a Python loop, about 10 ms per replication at ``k = 10,
    n = 2000``) and meant for small sizes -- or for an executor.

    Parameters
    ----------
    k, n, m, eps1, eps2, eps3
        As for :func:`expected_table1`.
    n_reps : int
        Number of replications (``>= 1``; the standard error needs ``>= 2``).
    rng : numpy.random.Generator or int
        Source of randomness.  Replication ``i`` draws from child ``i`` of a
        :class:`numpy.random.SeedSequence` spawned from ``rng`` (as in
        :func:`calnotes.core.expectation.simulate_qece`), so the result depends on ``rng`` and
        ``n_reps`` only -- not on the executor, ``chunk_reps`` or the order in which tasks
        finish -- and the first ``r`` replications are those of a run with ``n_reps = r``.
    executor : concurrent.futures.Executor, optional
        Where the replications run, e.g. ``ProcessPoolExecutor()`` or a Dask
        ``Client.get_executor()``.  Default: in this process, one after another.
    chunk_reps : int, optional
        Replications per task (default: all of them without an executor, else about
        ``n_reps / 64``).  Does not change the result.

    Returns
    -------
    Table1Estimate
        ``method`` ``"simulation"``, ``n_draws = n_reps``; ``values`` holds every cell's
        ``n_reps`` replications.

    Examples
    --------
    >>> sim = simulate_table1(3, 30, 3, 0.1, 0.02, 0.01, n_reps=20, rng=0)
    >>> sim.n_draws, sim.se["f1.l2_conf"] > 0
    (20, True)
    >>> from concurrent.futures import ThreadPoolExecutor
    >>> with ThreadPoolExecutor(2) as pool:
    ...     par = simulate_table1(3, 30, 3, 0.1, 0.02, 0.01, n_reps=20, rng=0, executor=pool,
    ...                           chunk_reps=3)
    >>> par.mean == sim.mean
    True
    """
    from ..core.expectation import _check_chunk, _map_ordered, _seed_sequence

    prm = check_table1_params(k, n, m, eps1, eps2, eps3)
    n_reps = _check_int(n_reps, "n_reps", 1)
    chunk_reps = _check_chunk(chunk_reps, "chunk_reps")
    if chunk_reps is None:
        chunk_reps = n_reps if executor is None else max(1, -(-n_reps // _TASKS))
    parent = _seed_sequence(rng)
    tasks = [(prm, parent, start, min(start + chunk_reps, n_reps))
             for start in range(0, n_reps, chunk_reps)]
    rows = np.concatenate(_map_ordered(_simulate_block, tasks, executor))
    values = {c: rows[:, i].copy() for i, c in enumerate(CELLS)}
    return _summarise(prm, values, {}, n_reps, "simulation")


# --------------------------------------------------------------------------- closed forms, numerically

_LAMBDIFIED: dict = {}


def _lambdified(kind: str):
    if kind not in _LAMBDIFIED:
        import sympy as sp

        from . import symbolic

        exprs = (symbolic.table1_printed_with_constants() if kind == "printed"
                 else symbolic.table1_derived())
        s = symbolic.table1_symbols()
        args = [s[name] for name in ("k", "n", "m", "eps1", "eps2", "eps3")]
        _LAMBDIFIED[kind] = {cell: sp.lambdify(args, expr, modules=["scipy", "numpy"])
                             for cell, expr in exprs.items()}
    return _LAMBDIFIED[kind]


def printed_table1(k, n, m, eps1, eps2, eps3) -> dict:
    """Table 1 as printed, evaluated: ``{cell: float}``, each ``Theta(u)`` read as ``c u``.

    The constants ``c`` are those of :func:`calnotes.theory.symbolic.table1_printed_with_constants`
    (derived; for ``f3.l1_cw``, where no ``k``-free constant exists, the ``f1.l1_cw`` one).

    Examples
    --------
    >>> round(printed_table1(10, 2000, 20, 0.1, 0.02, 0.003)["f2.l2_conf"], 12)
    6.5e-05
    """
    prm = check_table1_params(k, n, m, eps1, eps2, eps3)
    return {cell: float(f(*prm)) for cell, f in _lambdified("printed").items()}


def derived_table1(k, n, m, eps1, eps2, eps3) -> dict:
    """Our asymptotic derivation, evaluated: ``{cell: float}`` (:func:`calnotes.theory.symbolic.table1_derived`).

    Examples
    --------
    >>> d = derived_table1(10, 2000, 20, 0.1, 0.02, 0.003)
    >>> d["f3.l1_cw"] == d["f3.l1_conf"]
    True
    """
    prm = check_table1_params(k, n, m, eps1, eps2, eps3)
    return {cell: float(f(*prm)) for cell, f in _lambdified("derived").items()}


def _folded_normal(mu, sigma):
    from scipy.special import erf

    mu, sigma = np.asarray(mu, dtype=float), np.asarray(sigma, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        value = (sigma * math.sqrt(2 / math.pi) * np.exp(-0.5 * (mu / sigma) ** 2)
                 + mu * erf(mu / (math.sqrt(2) * sigma)))
    return np.where(sigma > 0, value, np.abs(mu))


def clt_allowance(b: int, p: float) -> float:
    r"""Leading-order relative CLT error of ``E|S|`` for a bin of ``b`` i.i.d. ``Ber(p)`` outcomes.

    Edgeworth expansion of the bin sum (``v = p(1-p)``): the skewness term changes
    :math:`\mathbb E|S|` by :math:`\sigma\frac{\gamma}{6}\,2|z|\varphi(z)` at
    :math:`z = \mu/\sigma`, ``gamma = (1-2p)/sqrt(b v)``, at most ``|1-2p| / (10 sqrt(b v))``
    of the folded-normal value (the maximum of :math:`\varphi(z)\min(1, z/0.8)/3` is
    0.097); it vanishes for a calibrated bin.  The ``1/(b v)`` terms (kurtosis and squared
    skewness, :math:`-(1-v)/(12 b v)` for a centred bin, and the lattice: ``E|S - t|`` is
    piecewise linear in ``t``, at most ``1/(8 b v)`` from the smooth curve) add at most
    ``1/(4 b v)``.

    Examples
    --------
    >>> round(clt_allowance(100, 0.1), 4)
    0.0544
    """
    v = p * (1.0 - p)
    return abs(1.0 - 2.0 * p) / (10.0 * math.sqrt(b * v)) + 1.0 / (4.0 * b * v)


def boundary_allowance(prm: Table1Params, f: str) -> float:
    r"""Relative effect of the bins straddling group boundaries on ``f1``/``f2`` class-wise l1.

    Per class, the active samples (``2n/k`` on average) fill ``2m/k`` bins when ``k | m``; the
    count fluctuations move the two group boundaries (zeros/low, low/high) off the bin edges.
    In the normal approximation, with ``F = E|N(b eps2, b v)|`` the value of a full active bin:

    * the partial bin at the zeros/low boundary, holding ``a`` low samples, contributes
      ``g(a) = E|N(a eps2, a v)|`` where the linear count gives ``a F / b``; ``g`` is concave
      with ``g(0) = 0``, so the excess is between 0 and ``max_a (g(a) - a F/b)`` (``F/4`` for
      ``eps2 = 0``: the maximum of ``sqrt(a) - a/sqrt(b)``);
    * the bin at the low/high boundary loses bias ``2 min(l, h) eps2 <= 2 |d| eps2``,
      ``d = N_r - n/k``, and ``E|d| <= sd(N_r) = sqrt(n (1/k)(1-1/k))`` (none for ``f1``).

    Relative to the derived value ``(2m/k) F``.  Requires ``k | m`` and ``m >= 2k`` (every
    group spans whole bins, and the low group fills at least one bin with overwhelming
    probability).

    Examples
    --------
    >>> prm = check_table1_params(10, 2000, 20, 0.1, 0.0, 0.0)
    >>> boundary_allowance(prm, "f1") == 10 / (8 * 20)
    True
    """
    k, n, m, e1, e2, _ = prm
    if m % k or m < 2 * k or n % m:
        raise ValueError(f"boundary_allowance: needs k | m, m >= 2k and m | n; got k={k},"
                         f" m={m}, n={n}")
    b = n // m
    v = e1 * (1.0 - e1)
    delta = e2 if f == "f2" else 0.0
    if delta == 0.0:
        return k / (8.0 * m)  # exactly F/4 per class: max of sqrt(a) - a/sqrt(b)
    full = float(_folded_normal(b * delta, math.sqrt(b * v)))
    a = np.arange(b + 1)
    partial = float(np.max(_folded_normal(a * delta, np.sqrt(a * v)) - a * full / b))
    mixed = 2.0 * delta * math.sqrt(n * (1.0 / k) * (1.0 - 1.0 / k))
    return (partial + mixed) / (2.0 * m / k * full)


def table1_allowances(k, n, m, eps1, eps2, eps3) -> dict:
    r"""How far the exact expectation may be from the printed cell if the cell is right.

    ``{cell: (allowance, reason)}``: an absolute allowance on ``|E[cell] - printed|``, derived
    from what the closed form neglects, never from the measured gap:

    * l2 cells: exact identities when ``m | n`` (Thm 2.6 / Lemma C.1 with equal bins) --
      ``1e-12`` relative (float64 rounding); ``f2.l2_cw`` counts every active bin as fully
      biased, and at most two bins per class straddle a group boundary, each off by at most
      ``(b eps2 / n)^2``: allowance ``2 eps2^2 / m^2`` (the printed form can only be *above*).
    * l1 cells: ``tau * printed`` with ``tau`` the CLT error of one bin (:func:`clt_allowance`,
      ``p = eps1`` for ``f1, f2`` and ``1/k`` for ``f3, f4``) plus, for the class-wise cells of
      ``f1`` and ``f2``, the boundary bins (:func:`boundary_allowance`).

    Requires ``m | n`` (equal bins) and, for the l1 class-wise cells of ``f1``/``f2``, ``k | m``
    and ``m >= 2k``; where a requirement fails the allowance is NaN (no statement is made).

    Examples
    --------
    >>> a = table1_allowances(10, 2000, 20, 0.1, 0.02, 0.003)
    >>> round(a["f1.l1_cw"][0] / printed_table1(10, 2000, 20, 0.1, 0.02, 0.003)["f1.l1_cw"], 3)
    0.117
    """
    prm = check_table1_params(k, n, m, eps1, eps2, eps3)
    printed = printed_table1(*prm)
    if prm.n % prm.m:
        return {cell: (math.nan, f"no allowance: the closed forms assume equal bins (m | n),"
                                 f" here n = {prm.n}, m = {prm.m}") for cell in CELLS}
    b = prm.n // prm.m
    aligned = prm.m % prm.k == 0 and prm.m >= 2 * prm.k
    out = {}
    rounding = "exact identity with equal bins (m | n); float64 rounding, 1e-12 relative"
    for cell, value in printed.items():
        f, measure = cell.split(".")
        if measure.startswith("l2"):
            tol = 1e-12 * abs(value)
            reason = rounding
            if cell == "f2.l2_cw":
                tol += 2.0 * prm.eps2 ** 2 / prm.m ** 2
                reason = ("at most two bins per class straddle a group boundary, each off by"
                          " at most (b eps2/n)^2: 2 eps2^2/m^2 (the printed form is an upper bound)")
            out[cell] = (tol, reason)
            continue
        p = prm.eps1 if f in ("f1", "f2") else 1.0 / prm.k
        tau = clt_allowance(b, p)
        reason = f"CLT error of a bin of b = {b} Ber({p:.3g}) outcomes, leading Edgeworth order ({tau:.3f})"
        if measure == "l1_cw" and f in ("f1", "f2"):
            if not aligned:
                out[cell] = (math.nan, "no allowance: the class-wise l1 closed form assumes"
                                       " k | m and m >= 2k (class groups fill whole bins)")
                continue
            extra = boundary_allowance(prm, f)
            tau += extra
            reason += f" + boundary bins ({extra:.3f})"
        out[cell] = (tau * abs(value), reason + f"; relative {tau:.3f}")
    return out


# --------------------------------------------------------------------------- rankings

def table1_by_bins(k, n, bins, eps1, eps2, eps3) -> dict:
    """Exact expectations for several bin counts: ``{measure: array (len(bins), 4)}``.

    Row ``i`` holds ``f1 .. f4`` at ``m = bins[i]`` (:func:`exact_table1`).

    Examples
    --------
    >>> v = table1_by_bins(4, 200, [1, 4], 0.1, 0.02, 0.01)
    >>> v["l2_cw"].shape
    (2, 4)
    """
    rows = [exact_table1(k, n, int(m), eps1, eps2, eps3).mean for m in bins]
    return {mm: np.array([[r[f"{f}.{mm}"] for f in PREDICTORS] for r in rows])
            for mm in MEASURES}


def rank_changes(values, rtol: float = 1e-9) -> int:
    """Order flips between consecutive rows: pairs of predictors whose order reverses.

    ``values`` is ``(len(bins), n_predictors)``; for each consecutive pair of rows, count the
    predictor pairs ``(a, b)`` with ``a`` strictly better in one row and strictly worse in the
    next (the Kendall distance of the two rankings), and sum.  Values within ``rtol``
    (relative) of each other are tied, not ordered: ``f1`` and ``f3`` tie exactly under the
    confidence measures when ``eps1 = 1/k``.

    Examples
    --------
    >>> rank_changes([[1, 2, 3], [2, 1, 3], [2, 1, 3]])
    1
    >>> rank_changes([[1.0, 1.0 + 1e-15], [1.0 + 1e-15, 1.0]])  # a tie, not a flip
    0
    """
    v = np.asarray(values, dtype=float)
    gap = v[:, :, None] - v[:, None, :]
    scale = np.maximum(np.abs(v[:, :, None]), np.abs(v[:, None, :]))
    diff = np.where(np.abs(gap) <= rtol * scale, 0.0, np.sign(gap))   # (rows, a, b)
    flips = (diff[1:] * diff[:-1]) < 0
    return int(np.triu(flips, k=1).sum())


def rankings(values, rtol: float = 1e-9) -> list:
    """Each row's predictors from best (smallest) to worst, ties joined by ``=``.

    Examples
    --------
    >>> rankings([[3.0, 1.0, 2.0, 2.0]])
    ['f2 < f3 = f4 < f1']
    """
    out = []
    for row in np.asarray(values, dtype=float):
        order = np.argsort(row, kind="stable")
        groups = [[order[0]]]
        for prev, cur in zip(order[:-1], order[1:]):
            if abs(row[cur] - row[prev]) <= rtol * max(abs(row[cur]), abs(row[prev])):
                groups[-1].append(cur)
            else:
                groups.append([cur])
        out.append(" < ".join(" = ".join(PREDICTORS[i] for i in sorted(g)) for g in groups))
    return out


def compare_cells(k, n, m, eps1, eps2, eps3) -> dict:
    """Exact, printed and derived values of every cell, with the allowance and the verdict.

    ``{cell: {"exact", "printed", "derived", "allowance", "reason", "ratio", "deviation",
    "derived_deviation"}}``: ``ratio = exact / printed``; ``deviation = |exact - printed| /
    allowance`` (at most 1 if the printed cell holds); ``derived_deviation`` the same for our
    derivation (allowance rescaled to the derived value).

    Examples
    --------
    >>> c = compare_cells(10, 2000, 20, 0.1, 0.02, 0.003)
    >>> c["f1.l2_cw"]["deviation"] < 1 < c["f3.l1_cw"]["deviation"]
    True
    """
    exact = exact_table1(k, n, m, eps1, eps2, eps3).mean
    printed = printed_table1(k, n, m, eps1, eps2, eps3)
    derived = derived_table1(k, n, m, eps1, eps2, eps3)
    allowances = table1_allowances(k, n, m, eps1, eps2, eps3)
    out = {}
    for cell in CELLS:
        tol, reason = allowances[cell]
        scaled = tol * abs(derived[cell] / printed[cell]) if printed[cell] else tol
        out[cell] = {
            "exact": exact[cell], "printed": printed[cell], "derived": derived[cell],
            "allowance": tol, "reason": reason,
            "ratio": exact[cell] / printed[cell] if printed[cell] else math.nan,
            "deviation": abs(exact[cell] - printed[cell]) / tol,
            "derived_deviation": abs(exact[cell] - derived[cell]) / scaled,
        }
    return out
