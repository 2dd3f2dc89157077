"""The binned rows of :func:`calnotes.evaluate`: values, calibrated references, p-values and
bootstrap intervals, all from one sort per column (:mod:`calnotes._sorted`).

The inputs are validated once by :func:`calnotes.evaluate` (a :class:`calnotes.data.Predictions`)
and passed down as arrays; nothing here validates or sorts again.  See
:mod:`calnotes.significance` for what the p-values and intervals mean.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from ._binstats import positives_by_class
from ._sorted import MEASURES, SORT_WORKERS, Located, SortedColumns, measure_columns
from .expectation import _expected_abs_sums, _folded_normal_mean
from .significance import (CI_LEVEL, draw_categorical, exact_tail_bounds, monte_carlo_p_value,
                           poisson_binomial_pmf_fft)

#: Work budget of an exact class-wise l1 reference: columns x bins x (largest bin)^2.
EXACT_L1_BUDGET = 3e9
#: Largest ``n * k * B`` for which the class-wise rows get a bootstrap interval (each
#: resample rebuilds k sorted columns and every plan: 4e6 took about 7 s on one core).
CLASSWISE_BOOTSTRAP_BUDGET = 2e6
#: Replications of the null per Monte Carlo batch (memory: batch x k x m counts).
_BATCH_BUDGET = 1 << 23


@dataclass
class Problem:
    """One aggregation as binary column problems: ``X`` (n, c) and the rows with outcome 1."""

    aggregation: str
    X: np.ndarray
    positives: list
    sc: SortedColumns | None = None
    loc: Located | None = None

    def prepare(self, workers):
        self.sc = SortedColumns(self.X, workers)
        self.loc = self.sc.locate_positives(self.positives)


def problems(y, P, top, correct, conf, aggregations) -> list[Problem]:
    """The column problems of the report's aggregations, as :mod:`calnotes.measures` builds
    them (confidence: first maximum; class-wise: one column per class; binary: ``P(y = 1)``)."""
    out = []
    for agg in aggregations:
        if agg == "confidence":
            out.append(Problem(agg, conf[:, None], [np.flatnonzero(correct)]))
        elif agg == "classwise":
            out.append(Problem(agg, P, positives_by_class(y, P.shape[1])))
        else:
            out.append(Problem(agg, np.ascontiguousarray(P[:, 1:2]), [np.flatnonzero(y == 1)]))
    return out


def _single_pmfs(sc: SortedColumns, plan) -> list:
    """Exact laws of the bins' positive counts under the calibrated null (one column)."""
    s = plan.starts[0]
    return [poisson_binomial_pmf_fft(sc.values[0, s[j]:s[j + 1]]) for j in range(plan.m)]


def _padded(sc: SortedColumns, plan) -> np.ndarray:
    """``(c * m, L)`` rows of each bin's sorted predictions, zero-padded to the largest bin."""
    c, m = sc.c, plan.m
    L = max(1, int(plan.count.max()))
    idx = plan.starts[:, :-1, None] + np.arange(L)[None, None, :]          # (c, m, L)
    valid = idx < plan.starts[:, 1:, None]
    idx = np.minimum(idx, sc.n - 1).reshape(c, m * L)
    rows = np.where(valid, np.take_along_axis(sc.values, idx, axis=1).reshape(c, m, L), 0.0)
    return rows.reshape(c * m, L)


def l1_cost(sc: SortedColumns, plan) -> float:
    """Work units of an exact l1 reference: columns x bins x (largest bin)^2 for the padded
    class-wise convolutions; for one column (FFT convolutions) the sum of ``L log2(L)^2``."""
    if sc.c == 1:
        L = plan.count[0]
        return float((L * np.log2(L + 2.0) ** 2).sum())
    return sc.c * plan.m * float(plan.count.max()) ** 2


def reference(prob: Problem, plan, name: str, pmfs, budget: float) -> tuple[float, str]:
    """The calibrated reference of one row (exact, or folded-normal beyond ``budget``)."""
    sc = prob.sc
    p, _ = MEASURES[name]
    n = sc.n
    if p == 2:      # E S_j = 0 and Var S_j = sum p(1 - p): the bins do not matter
        return float(sc.pq.sum(axis=1).mean() / n ** 2), "exact"
    if l1_cost(sc, plan) > budget:
        sigma = np.sqrt(sc.variance_sums(plan))
        return float((_folded_normal_mean(0.0, sigma).sum(axis=1) / n).mean()), "folded-normal"
    if pmfs is not None:
        e_abs = sum(float((pmf * np.abs(a - np.arange(pmf.shape[0]))).sum())
                    for a, pmf in zip(plan.sum_prob[0].tolist(), pmfs))
        return e_abs / n, "exact"
    if sc.c == 1:
        pmfs = _single_pmfs(sc, plan)
        e_abs = sum(float((pmf * np.abs(a - np.arange(pmf.shape[0]))).sum())
                    for a, pmf in zip(plan.sum_prob[0].tolist(), pmfs))
        return e_abs / n, "exact"
    e_abs = _expected_abs_sums(plan.sum_prob.ravel(), _padded(sc, plan))
    return float(e_abs.reshape(sc.c, plan.m).sum(axis=1).mean() / n), "exact"


class NullSampler:
    """Replications of the calibrated null for one problem, in batches, from its sorted order."""

    def __init__(self, prob: Problem, P: np.ndarray):
        self.prob = prob
        sc = prob.sc
        self.n = sc.n
        if prob.aggregation == "classwise":
            self.cdf = np.cumsum(P, axis=1)
        else:
            rows = np.arange(self.n)
            self.left_all = sc.locate(np.zeros(self.n, dtype=np.int64), rows).left
            self.x = sc.X[:, 0]

    def batch(self, u: np.ndarray) -> Located:
        """The positives of ``u.shape[0]`` replications drawn with uniforms ``u`` (R, n)."""
        nb, n = u.shape
        sc = self.prob.sc
        if self.prob.aggregation == "classwise":
            labels = draw_categorical(self.cdf, u)                       # (nb, n)
            rows = np.broadcast_to(np.arange(n), (nb, n)).ravel()
            batch = np.repeat(np.arange(nb, dtype=np.int64), n)
            return sc.locate(labels.ravel(), rows, batch, nb)
        b, rows = np.nonzero(u < self.x[None, :])
        return Located(np.zeros(rows.shape[0], dtype=np.int64), b.astype(np.int64),
                       self.left_all[rows], rows.astype(np.int64), nb)


def binned_rows(y, P, probs_list: list, bins, ties, *, references=True, draws=0,
                bootstrap=0, rng=None, workers=None, progress=None,
                budget: float = EXACT_L1_BUDGET):
    """Rows ``(measure, aggregation, m)`` with value, reference and significance.

    ``probs_list`` are the prepared :class:`Problem` objects; ``draws`` Monte Carlo
    replications of the null (0: no p-values), ``bootstrap`` resamples (0: no intervals).
    Returns ``(rows, notes)``.
    """
    n = P.shape[0]
    workers = SORT_WORKERS if workers is None else workers
    notes: list = []
    rows = []
    specs = [(m, name) for m in bins for name, (_, binning) in MEASURES.items()
             if not (binning == "mass" and m > n)]
    for prob in probs_list:
        single = prob.sc.c == 1
        mc_specs = []
        for m, name in specs:
            plan = prob.sc.plan(m, MEASURES[name][1])
            value = float(measure_columns(plan.stats(prob.loc, ties), name).mean())
            row = {"measure": name, "aggregation": prob.aggregation, "binning": plan.binning,
                   "n_bins": m, "value": value, "calibrated_reference": None,
                   "reference_method": "skipped"}
            exact_ok = single and (ties == "position" or not plan.groups)
            pmfs = _single_pmfs(prob.sc, plan) if single and draws and exact_ok else None
            if references:
                ref, method = reference(prob, plan, name, pmfs, budget)
                row["calibrated_reference"], row["reference_method"] = ref, method
            if draws:
                if exact_ok:
                    lo, hi = exact_tail_bounds(plan.sum_prob[0], pmfs, value,
                                               MEASURES[name][0], n)
                    row.update(p_value=hi, p_value_method="exact", p_value_lower=lo)
                else:
                    mc_specs.append((row, plan, name))
            rows.append(row)
            if progress is not None:
                progress.update(1)
        if mc_specs:
            _monte_carlo(prob, P, mc_specs, ties, draws, rng, workers)
        if bootstrap:
            if single or n * prob.sc.c * bootstrap <= CLASSWISE_BOOTSTRAP_BUDGET:
                _bootstrap(prob, [r for r in rows if r["aggregation"] == prob.aggregation
                                  and r["binning"] != "kernel"], ties, bootstrap, rng)
            else:
                notes.append(f"bootstrap intervals of the {prob.aggregation} rows skipped:"
                             f" n x k x B = {n * prob.sc.c * bootstrap:.2g} exceeds"
                             f" {CLASSWISE_BOOTSTRAP_BUDGET:.0e}"
                             " (calnotes._evalrows.CLASSWISE_BOOTSTRAP_BUDGET)")
    # the report's order: bin count, then measure, then aggregation
    position = {spec: i for i, spec in enumerate(specs)}
    agg = {prob.aggregation: i for i, prob in enumerate(probs_list)}
    rows.sort(key=lambda r: (position[r["n_bins"], r["measure"]], agg[r["aggregation"]]))
    return rows, notes


def _monte_carlo(prob: Problem, P, specs, ties, draws: int, rng, workers: int):
    """Monte Carlo p-values of ``specs`` (rows, plans, names) for one problem."""
    sampler = NullSampler(prob, P)
    n, c = prob.sc.n, prob.sc.c
    width = max(plan.m for _, plan, _ in specs)
    nb = int(max(1, min(draws, _BATCH_BUDGET // max(1, n + c * width))))
    sizes = [min(nb, draws - s) for s in range(0, draws, nb)]
    uniforms = [rng.random((size, n)) for size in sizes]      # drawn in order: reproducible

    by_plan: dict = {}
    for _, plan, name in specs:
        by_plan.setdefault(id(plan), (plan, []))[1].append(name)

    def run(u):
        loc = sampler.batch(u)
        values = {}
        for plan, names in by_plan.values():
            for name, v in plan.measure_values(loc, ties, names).items():
                values[(id(plan), name)] = v.reshape(u.shape[0], c).mean(axis=1)
        return np.array([values[(id(plan), name)] for _, plan, name in specs])

    if workers > 1 and len(uniforms) > 1:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            parts = list(pool.map(run, uniforms))
    else:
        parts = [run(u) for u in uniforms]
    T = np.concatenate(parts, axis=1)                           # (specs, draws)
    for (row, _, _), t in zip(specs, T):
        row.update(p_value=monte_carlo_p_value(row["value"], t), p_value_method="monte-carlo",
                   p_value_draws=draws)


class Resampler:
    """Bootstrap resamples of one problem from its sorted order: rows drawn with
    multiplicities ``w`` give, per column, the sorted predictions repeated ``w`` times (the
    sort is stable, so tie groups keep the resampled rows' order), with no new sort."""

    def __init__(self, prob: Problem):
        sc = prob.sc
        self.sc, self.n, self.c = sc, sc.n, sc.c
        self.order = np.argsort(sc.X, axis=0, kind="stable").T                # (c, n)
        outcome = np.zeros((self.n, self.c), dtype=bool)
        for col, r in enumerate(prob.positives):
            outcome[r, col] = True
        self.sorted_outcome = np.take_along_axis(outcome.T, self.order, axis=1)

    def values(self, w: np.ndarray, specs, ties) -> list:
        """Values of the measures ``specs`` (pairs ``(m, name)``) on the resample with row
        multiplicities ``w``."""
        ws = w[self.order]                                                  # (c, n)
        res = SortedColumns.presorted(np.stack([np.repeat(self.sc.values[col], ws[col])
                                                for col in range(self.c)]))
        cols, lefts, positions = [], [], []
        for col in range(self.c):
            pos = np.flatnonzero(np.repeat(self.sorted_outcome[col], ws[col]))
            cols.append(np.full(pos.shape[0], col, dtype=np.int64))
            lefts.append(res.group_starts(col, pos))
            positions.append(pos)
        pos = np.concatenate(positions)
        loc = Located(np.concatenate(cols), np.zeros(pos.shape[0], dtype=np.int64),
                      np.concatenate(lefts), pos, 1)
        return [float(res.plan(m, MEASURES[name][1]).measure_values(loc, ties, [name])[name]
                      .mean()) for m, name in specs]


def _bootstrap(prob: Problem, rows: list, ties, B: int, rng):
    """Percentile intervals of the rows' values over ``B`` resamples of the rows."""
    resampler = Resampler(prob)
    n = resampler.n
    specs = [(row["n_bins"], row["measure"]) for row in rows]
    values = np.empty((len(rows), B))
    for b in range(B):
        values[:, b] = resampler.values(rng.multinomial(n, np.full(n, 1.0 / n)), specs, ties)
    alpha = (1.0 - CI_LEVEL) / 2
    for row, v in zip(rows, values):
        lo, hi = np.quantile(v, [alpha, 1.0 - alpha])
        row.update(ci_lower=float(lo), ci_upper=float(hi), ci_level=CI_LEVEL, bootstrap=B)
