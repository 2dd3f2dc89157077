"""Does the report's 90% interval cover what it claims, and are its p-values valid?  Measured
by simulation on exact populations.

What the interval is an interval *of*: ``E[T_n]``, the mean of the measure ``T`` (one row of
:func:`calnotes.evaluate`: ECE, l1-QECE or l2-QECE; confidence, class-wise or binary) over
test sets of the same size ``n`` drawn from the same population, i.e. where the value of
another test set of this size falls on average.  (Not the population calibration error:
every binned estimator is biased upward at finite ``n``, and for a calibrated model the
population error, 0, lies on the boundary where no bootstrap reaches its level.)  The
construction (:func:`calnotes._engine.rows.basic_interval`) reflects the bootstrap's deviations
from their own mean around the value, which removes the upward shift that resampling (and its
duplicated rows) adds to a binned error.

The simulation: a :class:`calnotes.theory.population.FiniteDistribution` is a finite population
(atoms with weights, true label distributions and predictions), so a test set is ``n`` atoms
drawn with their weights and a label drawn from each atom's truth.  For each population and
size, ``E[T_n]`` is estimated from ``truth_sims`` independent test sets (values only), and
``sims`` further test sets are evaluated by the report's engine
(:func:`calnotes._engine.rows.binned_rows`, what :func:`calnotes.evaluate` runs) with
``bootstrap`` resamples; the coverage is the share of intervals containing ``E[T_n]``.

Tolerance (:func:`tolerance`): the coverage of ``S`` independent test sets is a binomial share
with standard error ``sqrt(c (1 - c) / S)`` at the nominal ``c``; every cell of the table is
checked at ``z`` standard errors with ``z`` the Bonferroni quantile for a 1% family-wise false
alarm over all cells.  The error of the estimated ``E[T_n]`` (``sd(T_n) / sqrt(truth_sims)``)
is not added: the interval is about symmetric around ``T`` to first order, so a small shift
of the target changes the coverage only to second order.

The check is one-sided (coverage at least the level, minus the tolerance): a confidence
interval is valid when it covers at least at its level.  Near calibration the interval is
conservative (the bootstrap spread of ``|bin sum|`` centred at an observed sum exceeds the
spread of ``|bin sum|`` centred at 0); the table shows by how much.

The p-values (calibrated populations only: the null holds): the share of test sets with
``p <= alpha`` is at most ``alpha`` plus the same tolerance (valid p-values are
super-uniform; the exact ones are the upper end of a certified bracket and discrete).

Chapter "Evaluate your own model" (``book/practice/evaluate``) builds the table at smoke size;
``tests/test_report_intervals.py`` runs it at full size under ``-m slow``.
"""

from __future__ import annotations

import numpy as np
from scipy.stats import norm

from .._engine import rows as _evalrows
from ..core.measures import confidence_scores
from ..theory.population import FiniteDistribution
from .._engine.significance import CI_LEVEL

__all__ = ["POPULATIONS", "SIZES", "population", "draw_test_set", "coverage_table",
           "tolerance", "coverage_tolerance", "check_coverage"]

#: The populations of the table (name: (classes, calibrated?)).
POPULATIONS = {"calibrated, k = 2": (2, True), "overconfident, k = 2": (2, False),
               "calibrated, k = 3": (3, True), "overconfident, k = 3": (3, False)}
#: Sizes (test-set sizes n), simulations per cell and bootstrap resamples, per run size.  The
#: smoke size keeps the chapter fast (fewer resamples than the report's 200, which makes its
#: quantiles noisier): its tolerance is wide, about 0.4.
SIZES = {"smoke": {"n": (100, 200, 400), "sims": 8, "truth_sims": 60, "bootstrap": 40,
                   "populations": ("calibrated, k = 2", "overconfident, k = 2")},
         "full": {"n": (100, 300, 1000), "sims": 200, "truth_sims": 1000, "bootstrap": 200,
                  "populations": tuple(POPULATIONS)}}
#: Bin count of every row of the table.
N_BINS = 10
#: p-value thresholds whose rejection rates are checked under the null.
ALPHAS = (0.1, 0.5)
#: Family-wise false-alarm rate of the table's checks (Bonferroni over its cells).
FAMILY_ALARM = 0.01


def population(name: str) -> FiniteDistribution:
    """The population ``name`` of :data:`POPULATIONS` (fixed: built from seed 0).

    k = 2: 49 equally likely atoms with ``P(y = 1) = 0.02, 0.04, ..., 0.98`` predicted;
    k = 3: 120 equally likely atoms with predictions drawn from a Dirichlet(0.7) law and
    rounded to 0.01.  Calibrated: the truth is the prediction.  Overconfident: the truth is
    the prediction shrunk a third of the way to uniform (``(2/3) p + 1/(3k)``).

    Examples
    --------
    >>> d = population("overconfident, k = 2")
    >>> last_p, last_q = d.prediction[-1, 1], d.truth[-1, 1]
    >>> d.n_atoms, float(last_p), round(float(last_q), 4)
    (49, 0.98, 0.82)
    """
    if name not in POPULATIONS:
        raise ValueError(f"population: expected one of {sorted(POPULATIONS)}, got {name!r}")
    k, calibrated = POPULATIONS[name]
    if k == 2:
        p1 = np.arange(1, 50) / 50
        pred = np.column_stack([1 - p1, p1])
    else:
        rng = np.random.default_rng(0)
        raw = np.round(rng.dirichlet(np.full(3, 0.7), size=120), 2)
        raw[:, 2] = 1 - raw[:, 0] - raw[:, 1]
        pred = np.clip(raw, 0, 1)
        pred /= pred.sum(axis=1, keepdims=True)
    truth = pred if calibrated else (2 / 3) * pred + 1 / (3 * k)
    w = np.full(pred.shape[0], 1 / pred.shape[0])
    return FiniteDistribution(w, truth, pred)


def draw_test_set(dist: FiniteDistribution, n: int, rng) -> tuple[np.ndarray, np.ndarray]:
    """``(P, y)``: ``n`` atoms drawn with the population's weights, their predictions, and a
    label drawn from each atom's truth."""
    idx = rng.choice(dist.n_atoms, size=n, p=dist.weights)
    cdf = np.cumsum(dist.truth[idx], axis=1)
    y = (cdf > rng.random((n, 1)) * cdf[:, -1:]).argmax(axis=1)
    return np.ascontiguousarray(dist.prediction[idx]), y


def _rows(P, y, *, draws=0, bootstrap=0, rng=None):
    """The binned rows of the report for ``N_BINS`` bins (the engine of
    :func:`calnotes.evaluate`, without references)."""
    conf, top, correct = confidence_scores(y, P)
    aggs = ("confidence", "classwise") + (("binary",) if P.shape[1] == 2 else ())
    probs = _evalrows.problems(y, P, top, correct, conf, aggs)
    for prob in probs:
        prob.prepare(1)
    rows, _ = _evalrows.binned_rows(y, P, probs, [N_BINS], "average", references=False,
                                    draws=draws, bootstrap=bootstrap, rng=rng, workers=1)
    return {(r["measure"], r["aggregation"]): r for r in rows}


def tolerance(sims: int, cells: int, level: float = CI_LEVEL) -> float:
    """``z sqrt(level (1 - level) / sims)`` with ``z`` the Bonferroni quantile
    ``Phi^-1(1 - FAMILY_ALARM / cells)``.

    Examples
    --------
    >>> round(tolerance(200, 60), 4)
    0.0761
    """
    z = norm.ppf(1 - FAMILY_ALARM / cells)
    return float(z * np.sqrt(level * (1 - level) / sims))


def coverage_table(size: str = "smoke", seed: int = 0, workers: int = 1) -> list[dict]:
    """The coverage of the report's intervals and the rejection rates of its p-values under
    the null, per population, size ``n``, measure and aggregation (see the module docstring).

    ``size`` is ``"smoke"`` or ``"full"`` (:data:`SIZES`).  Each (population, n) cell has its
    own generator ``default_rng([seed, population index, n])``, so the table does not depend
    on ``workers`` (processes computing cells in parallel).  Each dict has ``population``,
    ``n``, ``measure``, ``aggregation``, ``target`` (the estimated ``E[T_n]``), ``coverage``,
    ``sims`` and, for calibrated populations, ``reject_<alpha>`` (share of ``p <= alpha``).
    """
    if size not in SIZES:
        raise ValueError(f"size: expected one of {sorted(SIZES)}, got {size!r}")
    cfg = SIZES[size]
    cells = [(name, n, seed, cfg) for name in cfg["populations"] for n in cfg["n"]]
    if workers > 1:
        from concurrent.futures import ProcessPoolExecutor

        with ProcessPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(_cell, cells))
    else:
        parts = [_cell(c) for c in cells]
    return [row for part in parts for row in part]


def _cell(args) -> list[dict]:
    """The rows of one (population, n) cell of :func:`coverage_table`."""
    name, n, seed, cfg = args
    dist = population(name)
    calibrated = POPULATIONS[name][1]
    rng = np.random.default_rng([seed, list(POPULATIONS).index(name), n])
    truth: dict = {}
    for _ in range(cfg["truth_sims"]):
        for key, r in _rows(*draw_test_set(dist, n, rng)).items():
            truth.setdefault(key, []).append(r["value"])
    target = {key: float(np.mean(v)) for key, v in truth.items()}
    hits = {key: 0 for key in truth}
    rejects = {(key, a): 0 for key in truth for a in ALPHAS}
    for _ in range(cfg["sims"]):
        P, y = draw_test_set(dist, n, rng)
        rows = _rows(P, y, draws=19 if calibrated else 0, bootstrap=cfg["bootstrap"], rng=rng)
        for key, r in rows.items():
            hits[key] += r["ci_lower"] <= target[key] <= r["ci_upper"]
            if calibrated:
                for a in ALPHAS:
                    rejects[key, a] += r["p_value"] <= a
    out = []
    for key in truth:
        row = {"population": name, "n": n, "measure": key[0], "aggregation": key[1],
               "target": target[key], "coverage": hits[key] / cfg["sims"], "sims": cfg["sims"]}
        if calibrated:
            for a in ALPHAS:
                row[f"reject_{a}"] = rejects[key, a] / cfg["sims"]
        out.append(row)
    return out


def _checks(table):
    return ([(row, "coverage", CI_LEVEL, -1) for row in table]
            + [(row, f"reject_{a}", a, +1) for row in table for a in ALPHAS
               if f"reject_{a}" in row])


def coverage_tolerance(table: list[dict]) -> float:
    """The tolerance :func:`check_coverage` allows the coverage of the table's first cell."""
    return tolerance(table[0]["sims"], len(_checks(table)))


def check_coverage(table: list[dict], level: float = CI_LEVEL) -> list[str]:
    """The cells of ``table`` out of tolerance (empty: all pass): coverage below
    ``level - tolerance``, or a rejection rate above ``alpha + tolerance`` (the tolerance of
    :func:`tolerance` at the cell's rate, Bonferroni over all checked cells)."""
    checks = [(row, key, level if key == "coverage" else nominal, side)
              for row, key, nominal, side in _checks(table)]
    failures = []
    for row, key, nominal, side in checks:
        tol = tolerance(row["sims"], len(checks), nominal)
        bad = row[key] < nominal - tol if side < 0 else row[key] > nominal + tol
        if bad:
            failures.append(f"{row['population']}, n = {row['n']}, {row['measure']}"
                            f" {row['aggregation']}: {key} {row[key]:.3f} outside"
                            f" {nominal} {'-' if side < 0 else '+'} {tol:.3f}")
    return failures
