"""The p-value machinery of the report (``calnotes._engine.significance``,
``calnotes._engine.poisson_binomial``): the Chernoff tail bounds, the exact tail brackets, the Monte
Carlo p-value and the binomial path of the Poisson-binomial laws.

Properties pinned (each by a ``check_*`` function that ``tests/test_engine_slips.py`` also
calls under planted slips); every expected value is computed here without the code under
test (``numpy.convolve`` recursions, scipy's binomial law, scipy's scalar minimiser):

* :func:`check_bennett_formula` -- :func:`calnotes._engine.significance.tail_bound` with
  ``power = 1`` is ``min(1, exp(m' log 2 - V h(n t / V)))``, ``h(x) = (1 + x) log(1 + x) - x``,
  over the ``m'`` bins with ``V_j > 0`` (its docstring), to 1e-12 in the log.
* :func:`check_hoeffding_formula` -- with ``power = 2`` it is ``min(1, exp(min_lambda
  [-lambda n^2 t - sum_j log(1 - lambda L_j / 2) / 2]))`` over the live bins (sub-Gaussian
  proxy ``L_j / 4``), the minimum found here by scipy's bounded Brent search, to 1e-7 in the
  log (the minimum is flat: an error ``e`` in lambda moves the value by ``O(e^2)``).
* :func:`check_tail_bound_is_valid` -- the bound is at least the exact ``P(T >= t)``:
  ten bins of ten fair coins near the null's centre (where the factor ``2^m'`` matters),
  one bin of ``Bin(1000, 0.001)`` far in the tail (where Bennett is within ``e^{0.9}``
  to ``e^{4.7}`` of the truth, so a 10% error in the exponent shows), and a skewed bin
  ``Bin(100, 0.02)`` for ``power = 2`` (whose upper tail is heavier than a Gaussian of the
  same variance: the proxy must be ``L / 4``, not ``V``).
* :func:`check_exact_bracket` -- :func:`calnotes._engine.significance.exact_tail_bounds` brackets
  the exact ``P(T >= t)`` for asymmetric Poisson-binomial bins (``power = 1`` and ``2``), at
  every atom of ``T``'s law and between atoms: on the default grid the upper end is
  ``P(T >= t)`` itself and the lower end at least ``P(T > t)`` (the atoms are further apart
  than the ``m`` cells the grid can round by); on a grid of 8 cells the bracket still
  contains the truth.  The terms are dyadic, so the exact law is exact in floating point.
* :func:`check_report_exact_p_values` -- a one-column report's exact p-values (l1- and
  l2-QECE, 24 rows, 3 bins) bracket ``P(T >= t)`` under the exact null law of its own bins
  (brute force from the sorted predictions): ``p_value_lower <= P(T >= t) <= p_value``.
* :func:`check_monte_carlo_p_value` -- ``(1 + #{T_r >= t}) / (R + 1)``: its floor
  ``1 / (R + 1)``, draws equal to ``t`` (and within ``1e-12`` relative below it) counted,
  draws above ``t`` by ``1e-9`` relative not missed, a draw ``1e-9`` relative below not counted.
* :func:`check_run_path_laws` -- sums of more than ``LEAF`` terms of a few values (the
  binomial path) equal the convolution of their binomial laws, top entry included
  (``P(K = L) = prod q`` is 0.22 for the sum tested).
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import minimize_scalar
from scipy.special import logsumexp
from scipy.stats import binom

from calnotes._engine import rows as _evalrows, poisson_binomial, significance
from calnotes.core.measures import confidence_scores

# ----------------------------------------------------------------------------- helpers


def pb_pmf(q) -> np.ndarray:
    """Poisson-binomial pmf by repeated ``numpy.convolve`` with ``[1 - q_i, q_i]``."""
    pmf = np.ones(1)
    for qi in np.asarray(q, dtype=np.float64):
        pmf = np.convolve(pmf, [1.0 - qi, qi])
    return pmf


def law_of_sum(a, pmfs, power: int, n: int) -> dict:
    """Exact law ``{value: probability}`` of ``T = sum_j |a_j - K_j|^power / n^power``."""
    law = {0.0: 1.0}
    for aj, pmf in zip(a, pmfs):
        nxt: dict = {}
        for k, w in enumerate(pmf):
            g = abs(aj - k) ** power / float(n) ** power
            for v, pv in law.items():
                nxt[v + g] = nxt.get(v + g, 0.0) + pv * w
        law = nxt
    return law


def tail(law: dict, t: float, strict: bool = False, slack: float = 0.0) -> float:
    """``P(T >= t - slack)`` (``P(T > t + slack)`` where ``strict``)."""
    if strict:
        return float(sum(w for v, w in law.items() if v > t + slack))
    return float(sum(w for v, w in law.items() if v >= t - slack))


def log_binomial_upper(K0: int, L: int, p: float) -> float:
    """``log P(Bin(L, p) >= K0)`` by a log-sum of the pmf's terms."""
    k = np.arange(K0, L + 1)
    return float(logsumexp(binom.logpmf(k, L, p)))


# ----------------------------------------------------------------------------- checks


def check_bennett_formula() -> None:
    """``power = 1``: the documented closed form."""
    cases = [(0.05, 200, [10.0, 0.0, 6.5, 12.25], [50, 7, 40, 60]),
             (0.2, 200, [10.0, 0.0, 6.5, 12.25], [50, 7, 40, 60]),
             (0.03, 1000, [0.999], [1000]),
             (0.4, 100, [25.0], [100]),
             (0.12, 60, [1.5, 2.0, 0.7, 3.1, 0.2], [12, 12, 12, 12, 12])]
    for t, n, V, L in cases:
        V = np.asarray(V)
        live = V > 0
        total, x = V[live].sum(), n * t / V[live].sum()
        log_p = live.sum() * np.log(2.0) - total * ((1 + x) * np.log1p(x) - x)
        want = min(0.0, log_p)
        got = np.log(significance.tail_bound(t, 1, n, V, L))
        assert abs(got - want) <= 1e-12 * max(1.0, abs(want)), (t, n, got, want)
    assert significance.tail_bound(0.0, 1, 10, [1.0], [10]) == 1.0


def check_hoeffding_formula() -> None:
    """``power = 2``: the documented Chernoff minimum with proxies ``L_j / 4``."""
    cases = [(0.02, 120, [4.0, 0.0, 9.0, 5.5], [30, 10, 40, 40]),
             (0.006, 100, [1.96], [100]),
             (0.0081, 400, [20.0, 30.0, 12.0, 40.0], [100, 100, 100, 100]),
             (0.05, 64, [0.5, 3.0, 2.0, 0.9], [8, 20, 16, 20])]
    for t, n, V, L in cases:
        V, L = np.asarray(V), np.asarray(L, dtype=np.float64)
        s2 = (L / 4.0)[V > 0]
        u = n ** 2 * t
        assert u > s2.sum()                     # beyond the centre: the bound says something

        def f(lam):
            return -lam * u - 0.5 * np.log1p(-2.0 * lam * s2).sum()

        top = 1.0 / (2.0 * s2.max())
        res = minimize_scalar(f, bounds=(0.0, top * (1 - 1e-12)), method="bounded",
                              options={"xatol": 1e-15 * top})
        want = min(0.0, float(res.fun))
        got = np.log(significance.tail_bound(t, 2, n, V, L))
        assert abs(got - want) <= 1e-7 * max(1.0, abs(want)), (t, n, got, want)
    # at or below the centre (u <= sum of the proxies) the bound is 1
    assert significance.tail_bound(20 / 100 ** 2, 2, 100, [25.0], [100]) == 1.0


def check_tail_bound_is_valid() -> None:
    """The bound is at least the exact tail probability (compared in logs far out)."""
    # ten bins of ten fair coins, l1: T = sum_j |5 - K_j| / 100, near its mean
    pmf = binom.pmf(np.arange(11), 10, 0.5)
    law = law_of_sum([5.0] * 10, [pmf] * 10, 1, 100)
    mean = sum(v * w for v, w in law.items())
    for t in (mean, 1.3 * mean):
        exact = tail(law, t, slack=1e-12)
        assert exact > 0.05
        assert significance.tail_bound(t, 1, 100, [2.5] * 10, [10] * 10) >= exact, t
    # one bin of Bin(1000, 0.001), a = 1: P(|1 - K| >= u) = P(K >= 1 + u) for u >= 2
    V = 1000 * 0.001 * 0.999
    for u in (19, 29, 49):
        log_exact = log_binomial_upper(1 + u, 1000, 0.001)
        b = significance.tail_bound(u / 1000, 1, 1000, [V], [1000])
        assert np.log(b) >= log_exact, u
    # one bin of Bin(100, 0.02), a = 2, l2: P((K - 2)^2 >= s^2) = P(K >= 2 + s) for s > 2
    for s in (8, 12):
        log_exact = log_binomial_upper(2 + s, 100, 0.02)
        b = significance.tail_bound(s ** 2 / 100 ** 2, 2, 100, [100 * 0.02 * 0.98], [100])
        assert np.log(b) >= log_exact, s


_BRACKET_Q = ([0.1, 0.7, 0.3], [0.9, 0.85], [0.2, 0.2, 0.6, 0.5, 0.95])
_BRACKET_A = [1.25, 0.5, 2.75]


def check_exact_bracket() -> None:
    """:func:`exact_tail_bounds` against the exact law (dyadic terms: exact arithmetic)."""
    pmfs = [pb_pmf(q) for q in _BRACKET_Q]
    n = 4
    for power in (1, 2):
        law = law_of_sum(_BRACKET_A, pmfs, power, n)
        atoms = sorted(v for v, w in law.items() if v > 0 and w > 1e-9)
        gaps = np.diff(atoms)
        assert gaps.min() >= 1 / 64                  # far wider than m cells of t / 2^14
        points = atoms + [0.5 * (x + z) for x, z in zip(atoms[:-1], atoms[1:])]
        for t in points:
            at_least, above = tail(law, t), tail(law, t, strict=True)
            lo, hi = significance.exact_tail_bounds(_BRACKET_A, pmfs, t, power, n)
            assert abs(hi - at_least) <= 1e-12, (power, t, lo, hi, at_least)
            assert above - 1e-12 <= lo <= hi + 1e-12, (power, t, lo, hi, above)
            lo8, hi8 = significance.exact_tail_bounds(_BRACKET_A, pmfs, t, power, n, cells=8)
            assert lo8 - 1e-12 <= at_least <= hi8 + 1e-12, (power, t, lo8, hi8, at_least)
    # the floor: t above every value of T
    assert significance.exact_tail_bounds(_BRACKET_A, pmfs, 10.0, 1, n)[1] <= 1e-12


def check_report_exact_p_values() -> None:
    """The report's exact p-values of a binary column bracket ``P(T >= t)`` under the exact
    law of its bins:
    ``K_j`` Poisson-binomial over the bin's predictions, ``a_j`` their sum, equal-mass bins
    of sorted positions ``[floor(j n / m), floor((j + 1) n / m))`` (values compared with a
    slack of ``1e-12`` relative: the engine sums in another order)."""
    rng = np.random.default_rng(31)
    n, m = 24, 3
    p1 = rng.uniform(0.05, 0.95, n)
    y = (rng.uniform(size=n) < 0.8 * p1 + 0.1).astype(np.int64)
    P = np.column_stack([1 - p1, p1])
    conf, top, correct = confidence_scores(y, P)
    probs = _evalrows.problems(y, P, top, correct, conf, ("binary",))
    probs[0].prepare(1)
    rows, _ = _evalrows.binned_rows(y, P, probs, [m], "average", references=False, draws=200,
                                    bootstrap=0, rng=np.random.default_rng(0), workers=1)
    ps = np.sort(p1)
    bins = [ps[j * n // m:(j + 1) * n // m] for j in range(m)]
    checked = 0
    for row in rows:
        if row["binning"] != "mass":
            continue
        power = 2 if row["measure"] == "l2-QECE" else 1
        assert row["p_value_method"] == "exact", row
        law = law_of_sum([b.sum() for b in bins], [pb_pmf(b) for b in bins], power, n)
        t = row["value"]
        assert row["p_value"] >= tail(law, t, slack=1e-12 * t) - 1e-12, row
        assert row["p_value_lower"] <= tail(law, t, slack=1e-12 * t) + 1e-12, row
        checked += 1
    assert checked == 2


def check_monte_carlo_p_value() -> None:
    """``(1 + #{T_r >= t}) / (R + 1)`` with equal values counted."""
    t = 0.3
    R = 19
    below = np.linspace(0.0, 0.29, R)
    assert significance.monte_carlo_p_value(t, below) == 1 / (R + 1)                # the floor
    assert significance.monte_carlo_p_value(t, np.full(R, 0.31)) == 1.0
    draws = np.r_[below[:15], [t, t * (1 - 1e-13), t * (1 + 1e-9), t * (1 - 1e-9)]]
    # counted: t itself, t within 1e-12 relative below it, t above it; not: 1e-9 below
    assert significance.monte_carlo_p_value(t, draws) == (1 + 3) / (R + 1)
    # a value computed in another order: 0.1 + 0.2 != 0.3 in floating point
    assert significance.monte_carlo_p_value(0.1 + 0.2, np.r_[below[:18], 0.3]) == 2 / (R + 1)
    assert significance.monte_carlo_p_value(0.3, np.r_[below[:18], 0.1 + 0.2]) == 2 / (R + 1)


def check_run_path_laws() -> None:
    """Long sums of few values (the binomial path) equal convolved scipy binomials."""
    cases = [np.r_[np.full(100, 0.99), np.full(100, 0.995)],        # P(K = 200) = 0.22
             np.r_[np.full(80, 0.3), np.full(40, 0.55), np.full(60, 0.02)],
             np.r_[np.full(40, 0.01), np.full(50, 0.999)]]
    laws = poisson_binomial.pmfs(cases)
    for q, got in zip(cases, laws):
        want = np.ones(1)
        for v in np.unique(q):
            r = int((q == v).sum())
            want = np.convolve(want, binom.pmf(np.arange(r + 1), r, v))
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=0, atol=1e-13)
    assert laws[0][-1] > 0.2


# ----------------------------------------------------------------------------- tests


def test_bennett_bound_is_its_closed_form():
    check_bennett_formula()


def test_hoeffding_bound_is_its_chernoff_minimum():
    check_hoeffding_formula()


def test_tail_bound_is_above_the_exact_tail():
    check_tail_bound_is_valid()


def test_exact_bracket_holds_the_exact_tail():
    check_exact_bracket()


def test_report_exact_p_values_bracket_the_null_law():
    check_report_exact_p_values()


def test_monte_carlo_p_value_counts_ties_and_has_its_floor():
    check_monte_carlo_p_value()


def test_binomial_path_keeps_every_entry():
    check_run_path_laws()
