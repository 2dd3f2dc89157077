"""The coverage study of the report's intervals and p-values (``calnotes.evaluation.coverage``): what a
cell counts, the tolerance it is judged by, and the test sets it draws.

Properties pinned (each by a ``check_*`` function that ``tests/test_engine_slips.py`` also
calls under planted slips):

* :func:`check_cell_counts` -- one cell of :func:`calnotes.evaluation.coverage.coverage_table` with the
  report's engine replaced by scripted rows: the target is the mean of the ``truth_sims``
  values, an interval covers it when ``ci_lower <= target <= ci_upper`` (an end *equal* to
  the target covers), a p-value rejects at ``alpha`` when ``p <= alpha`` (a p-value *equal*
  to alpha rejects), every one of the ``sims`` test sets is evaluated once, with
  ``bootstrap`` resamples and, for a calibrated population, 19 draws of the null.  The
  expected shares are counted here from the script.
* :func:`check_tolerance_formula` -- :func:`calnotes.evaluation.coverage.tolerance` is
  ``z sqrt(c (1 - c) / S)`` with ``Phi(z) = 1 - 0.01 / cells`` (checked through
  ``scipy.special.ndtr``), for several ``S``, ``c`` and ``cells``.
* :func:`check_check_coverage` -- :func:`calnotes.evaluation.coverage.check_coverage` flags a coverage
  below ``level - tol(level)`` and a rejection rate above ``alpha + tol(alpha)``, each with
  the tolerance at its own nominal rate, at the ``level`` it is given (0.8 as well as 0.9):
  rates 1% of a tolerance inside pass, 1% outside fail.
* :func:`check_populations` -- the populations are what the docstring says: truth equal to
  the prediction (calibrated) or ``(2/3) p + 1/(3k)`` (overconfident), rows that sum to 1.
* :func:`check_test_set_law` -- :func:`calnotes.evaluation.coverage.draw_test_set` draws each row's
  label from the atom's *truth*: over 20,000 rows the share of labels equal to the predicted
  top class matches the mean truth of that class within 5 standard errors
  (``sqrt(sum q (1 - q)) / n``, given the drawn atoms), for every population.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtr

from calnotes.evaluation import coverage

KEY = ("ECE", "binary")
#: The scripted intervals (lower, upper) around the target 0.5 and whether each covers it.
INTERVALS = [((0.5, 0.7), True), ((0.3, 0.5), True), ((0.2, 0.8), True),
             ((0.55, 0.9), False), ((0.1, 0.45), False), ((0.5, 0.5), True)]
#: The scripted p-values (0.1 and 0.5 are the checked alphas themselves).
P_VALUES = [0.1, 0.5, 0.05, 0.7, 0.5000001]


def scripted_rows(log: list):
    """A stand-in for ``coverage._rows``: truth values alternately 0.25 and 0.75 (mean 0.5
    exactly for an even count), then the scripted intervals and p-values in turn."""
    state = {"truth": 0, "sim": 0}

    def rows(P, y, *, draws=0, bootstrap=0, rng=None):
        log.append({"n": P.shape[0], "draws": draws, "bootstrap": bootstrap})
        if bootstrap == 0:
            i = state["truth"]
            state["truth"] += 1
            return {KEY: {"value": 0.25 if i % 2 == 0 else 0.75}}
        i = state["sim"]
        state["sim"] += 1
        (lo, hi), _ = INTERVALS[i % len(INTERVALS)]
        return {KEY: {"value": 0.5, "ci_lower": lo, "ci_upper": hi,
                      "p_value": P_VALUES[i % len(P_VALUES)]}}

    return rows


def check_cell_counts(monkeypatch) -> None:
    """One scripted cell, counted here."""
    cfg = {"n": (30,), "sims": 23, "truth_sims": 8, "bootstrap": 40,
           "populations": ("calibrated, k = 2",)}
    for name in ("calibrated, k = 2", "overconfident, k = 2"):
        log: list = []
        monkeypatch.setattr(coverage, "_rows", scripted_rows(log))
        (row,) = coverage._cell((name, 30, 0, cfg))
        calibrated = coverage.POPULATIONS[name][1]
        truth_calls = [c for c in log if c["bootstrap"] == 0]
        sim_calls = [c for c in log if c["bootstrap"] > 0]
        assert len(truth_calls) == cfg["truth_sims"] and len(sim_calls) == cfg["sims"]
        assert all(c["n"] == 30 for c in log)
        assert all(c["bootstrap"] == 40 and c["draws"] == (19 if calibrated else 0)
                   for c in sim_calls)
        assert row["target"] == 0.5 and row["sims"] == cfg["sims"]
        covers = sum(INTERVALS[i % len(INTERVALS)][1] for i in range(cfg["sims"]))
        assert row["coverage"] == covers / cfg["sims"], (name, row)
        if calibrated:
            for a in coverage.ALPHAS:
                hits = sum(P_VALUES[i % len(P_VALUES)] <= a for i in range(cfg["sims"]))
                assert row[f"reject_{a}"] == hits / cfg["sims"], (name, a, row)
        else:
            assert not any(k.startswith("reject_") for k in row)


def check_tolerance_formula() -> None:
    """``tol = z sqrt(c (1 - c) / S)``, ``Phi(z) = 1 - FAMILY_ALARM / cells``."""
    assert coverage.FAMILY_ALARM == 0.01
    for S in (8, 200, 1000):
        for c in (0.1, 0.5, 0.8, 0.9):
            for cells in (1, 12, 60):
                tol = coverage.tolerance(S, cells, c)
                z = tol / np.sqrt(c * (1 - c) / S)
                assert abs(ndtr(z) - (1 - 0.01 / cells)) <= 1e-12, (S, c, cells, z)


def _table(level_cov: float, reject: dict, sims: int = 200) -> list:
    """Two calibrated rows with the given coverage and rejection rates."""
    rows = []
    for n in (100, 300):
        row = {"population": "calibrated, k = 2", "n": n, "measure": "ECE",
               "aggregation": "binary", "target": 0.1, "coverage": level_cov, "sims": sims}
        row.update({f"reject_{a}": r for a, r in reject.items()})
        rows.append(row)
    return rows


def check_check_coverage() -> None:
    """Rates 1% of a tolerance inside pass, 1% outside fail, each tolerance at its own
    nominal rate and at the level given."""
    S = 200
    cells = 2 * (1 + len(coverage.ALPHAS))           # two rows, each: coverage + alphas

    def tol(c):
        return float(np.sqrt(c * (1 - c) / S) * _z(cells))

    for level in (0.9, 0.8):
        inside = {a: a + 0.99 * tol(a) for a in coverage.ALPHAS}
        table = _table(level - 0.99 * tol(level), inside)
        assert coverage.check_coverage(table, level=level) == [], level
        low = _table(level - 1.01 * tol(level), inside)
        assert len(coverage.check_coverage(low, level=level)) == 2, level
        for a in coverage.ALPHAS:
            high = {**inside, a: a + 1.01 * tol(a)}
            bad = coverage.check_coverage(_table(level - 0.99 * tol(level), high), level=level)
            assert len(bad) == 2 and all(f"reject_{a}" in b for b in bad), (level, a, bad)


def _z(cells: int) -> float:
    """``Phi^-1(1 - 0.01 / cells)`` by bisection on ``scipy.special.ndtr``."""
    lo, hi = 0.0, 10.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if ndtr(mid) < 1 - 0.01 / cells:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def check_populations() -> None:
    """Truth equal to the prediction, or shrunk a third of the way to uniform."""
    for name, (k, calibrated) in coverage.POPULATIONS.items():
        try:
            d = coverage.population(name)
        except ValueError as exc:           # the population's own validation refused it
            raise AssertionError(f"{name}: {exc}") from exc
        P, Q = np.asarray(d.prediction, float), np.asarray(d.truth, float)
        assert P.shape == Q.shape and P.shape[1] == k
        assert d.n_atoms == (49 if k == 2 else 120)
        np.testing.assert_allclose(np.asarray(d.weights, float), 1 / d.n_atoms, rtol=1e-12)
        np.testing.assert_allclose(Q.sum(axis=1), 1.0, atol=1e-12)
        np.testing.assert_allclose(Q, P if calibrated else (2 / 3) * P + 1 / (3 * k),
                                   atol=1e-12)


def check_test_set_law() -> None:
    """Labels follow the truth of the drawn atoms (5 standard errors)."""
    for i, name in enumerate(coverage.POPULATIONS):
        d = coverage.population(name)
        P, y = coverage.draw_test_set(d, 20000, np.random.default_rng([7, i]))
        pred = np.asarray(d.prediction, float)
        truth = np.asarray(d.truth, float)
        # the drawn rows' atoms: the atom whose prediction row it is (atoms with equal
        # predictions have equal truths, so any of them will do)
        index = {tuple(row): a for a, row in enumerate(pred.tolist())}
        atom = np.array([index[tuple(row)] for row in P.tolist()])
        top = P.argmax(axis=1)
        q = truth[atom, top]
        se = np.sqrt((q * (1 - q)).sum()) / q.shape[0]
        share = np.mean(y == top)
        assert abs(share - q.mean()) <= 5 * se, (name, share, q.mean(), se)


# ----------------------------------------------------------------------------- tests


def test_cell_counts_covers_and_rejections_inclusively(monkeypatch):
    check_cell_counts(monkeypatch)


def test_tolerance_is_the_bonferroni_binomial_error():
    check_tolerance_formula()


def test_check_coverage_uses_each_rate_and_the_given_level():
    check_check_coverage()


def test_populations_are_as_documented():
    check_populations()


def test_test_set_labels_follow_the_truth():
    check_test_set_law()
