"""The one table of binned measures (calnotes.core.measure_spec): a measure added to the table alone
gets correct rows from calnotes.evaluate, checked against brute force written here.

The added measure is the l3 binned ECE on equal-mass bins,
``(sum_j |B_j|/n |pbar_j - ybar_j|^3)^(1/3)``, which the engine did not have.  Its strategies,
as its specification states them: the value from the bins' third absolute moments; the
calibrated reference by Monte Carlo (the mean of the calibrated null's draws: the cube root of
a sum has no exact mean); the p-value exact for one column without straddling ties (the l3 ECE
is an increasing function of a sum of independent bin terms), Monte Carlo otherwise; no
Chernoff bound.

Brute force: the values from ``tests/brute.py`` (exact rational bin sums, no calnotes), and the
reference and the p-value from the calibrated null's exact joint law, enumerated here over every
vector of the bins' positive counts (a few bins of few rows, so the enumeration is small).
Negative controls: the same checks reject the l1 numbers under the l3 name (what the engine
printed before the table existed), so each check can fail.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

import brute
import calnotes
from calnotes.core.measure_spec import BINNED_MEASURES, BinnedMeasure
from calnotes._engine.significance import tail_bound

N, M = 60, 3                    # three equal-mass bins of 20 rows: 21^3 count vectors
DRAWS = 400
BOOTSTRAP = 2000


@pytest.fixture
def with_l3(monkeypatch):
    """The l3 ECE on equal-mass bins, added through the table alone."""
    monkeypatch.setitem(BINNED_MEASURES, "l3-ECE", BinnedMeasure.lp_ece("l3-ECE", 3, "mass"))


def _data(seed=4, rounded=False):
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.05, 0.95, N)
    if rounded:
        p = np.round(p, 1)
    y = (rng.random(N) < np.clip(p + 0.15, 0.0, 1.0)).astype(int)   # under-confident
    return y, p


def _rows(y, p, **kwargs):
    report = calnotes.evaluate(np.c_[1 - p, p], labels=y, n_bins=[M], utility=False,
                               smooth_ece=False, progress=False, rng=1, **kwargs)
    return {(r["measure"], r["aggregation"]): r for r in report.rows}


def _pb_pmf(q):
    """Law of a sum of independent Bernoulli(q_i), by the textbook recursion."""
    pmf = np.array([1.0])
    for qi in q:
        pmf = np.append(pmf * (1 - qi), 0.0) + np.append(0.0, pmf * qi)
    return pmf


def _null_law(p):
    """The l3 ECE's exact law under the calibrated null ``y_i ~ Ber(p_i)`` (distinct
    predictions): ``(values, probabilities)`` over every vector of bin counts."""
    order = np.argsort(p, kind="stable")
    bins = np.array_split(np.sort(p), M)            # eq. (1): n / m rows each (n = 60, m = 3)
    assert np.array_equal(np.concatenate(bins), p[order])
    sizes = [len(b) for b in bins]
    a = [float(sum(b)) for b in bins]
    pmfs = [_pb_pmf(b) for b in bins]
    values, probs = [], []
    for ks in itertools.product(*(range(s + 1) for s in sizes)):
        t = sum(L * (abs(aj - k) / L) ** 3 for L, aj, k in zip(sizes, a, ks)) / N
        values.append(t ** (1 / 3))
        probs.append(np.prod([pmf[k] for pmf, k in zip(pmfs, ks)]))
    return np.array(values), np.array(probs)


def _value_agrees(row, truth):
    return abs(row["value"] - truth) <= 1e-12 * truth


def _reference_agrees(row, mean, sd, draws):
    """Within 4 standard errors of a Monte Carlo mean of ``draws`` draws."""
    return abs(row["calibrated_reference"] - mean) <= 4 * sd / np.sqrt(draws)


def _p_value_agrees(row, p_true, sd_mc=0.0):
    """An exact bracket contains the truth; a Monte Carlo p-value is within 4 standard errors."""
    if row["p_value_method"] == "exact":
        return row["p_value_lower"] - 1e-9 <= p_true <= row["p_value"] + 1e-9
    return abs(row["p_value"] - p_true) <= 4 * sd_mc + 1.0 / DRAWS


def test_l3_ece_rows_match_brute_force(with_l3):
    y, p = _data()
    rows = _rows(y, p, draws=DRAWS, bootstrap=BOOTSTRAP)
    binary, l1 = rows["l3-ECE", "binary"], rows["l1-QECE", "binary"]
    truth = brute.binned_ece(y, p, M, power=3, binning="mass")
    assert binary["binning"] == "mass"
    assert _value_agrees(binary, truth)
    assert not _value_agrees(l1, truth)                    # negative control: the old bug
    # the other aggregations' values, each against its own brute force
    P = np.c_[1 - p, p]
    assert _value_agrees(rows["l3-ECE", "confidence"],
                         brute.confidence(brute.binned_ece, y, P, m=M, power=3,
                                          binning="mass"))
    assert _value_agrees(rows["l3-ECE", "classwise"],
                         brute.classwise(brute.binned_ece, y, P, m=M, power=3, binning="mass"))

    values, probs = _null_law(p)
    assert abs(probs.sum() - 1) < 1e-12
    mean = float(values @ probs)
    sd = float(np.sqrt(((values - mean) ** 2) @ probs))
    assert binary["reference_method"] == "monte-carlo"
    assert binary["reference_draws"] == DRAWS
    assert _reference_agrees(binary, mean, sd, DRAWS)
    assert not _reference_agrees(l1, mean, sd, DRAWS)      # negative control

    p_true = float(probs[values >= binary["value"] * (1 - 1e-12)].sum())
    assert binary["p_value_method"] == "exact"
    assert _p_value_agrees(binary, p_true)
    assert not _p_value_agrees(l1, p_true)                 # negative control
    # the class-wise row's p-value by Monte Carlo: its two columns are one binary problem here
    cw = rows["l3-ECE", "classwise"]
    assert cw["p_value_method"] == "monte-carlo"
    assert _p_value_agrees(cw, p_true, np.sqrt(p_true * (1 - p_true) / DRAWS))

    # the bootstrap interval against a brute-force basic bootstrap interval of the l3 ECE
    # (``[T - q95(d), T - q05(d)]``, ``d`` the resamples' deviations from their mean): its ends
    # within 0.012, four standard errors of the difference of two 5% (95%) quantiles of 2,000
    # resamples (each about 0.002 here, the resamples' sd being 0.043); the l1-QECE's interval
    # ends 0.022 below at the top, and fails
    rng = np.random.default_rng(11)
    boot = np.array([_l3_brute_fast(y[i], p[i])
                     for i in (rng.integers(0, N, N) for _ in range(BOOTSTRAP))])
    d = boot - boot.mean()
    lower, upper = truth - np.quantile(d, 0.95), truth - np.quantile(d, 0.05)

    def interval_agrees(row):
        return abs(row["ci_lower"] - lower) <= 0.012 and abs(row["ci_upper"] - upper) <= 0.012

    assert interval_agrees(binary)
    assert not interval_agrees(l1)                         # negative control


def test_l3_ece_with_straddling_ties_takes_monte_carlo(with_l3):
    """Rounded predictions: tie groups straddle the equal-mass edges, the bins are no longer
    independent sums, so the p-value is Monte Carlo; the value is the exact mean over the
    orders of the tied predictions (brute force: every order's bins' laws)."""
    y, p = _data(seed=7, rounded=True)
    rows = _rows(y, p, draws=DRAWS, bootstrap=0)
    row = rows["l3-ECE", "binary"]
    assert _value_agrees(row, brute.binned_ece(y, p, M, power=3, binning="mass"))
    assert not _value_agrees(rows["l1-QECE", "binary"],
                             brute.binned_ece(y, p, M, power=3, binning="mass"))
    assert row["p_value_method"] == "monte-carlo"
    assert row["reference_method"] == "monte-carlo"


def test_l3_ece_reference_without_p_values(with_l3):
    """No p-values (``significance=False``): the Monte Carlo reference still gets draws of
    its own (:data:`calnotes._engine.significance.DEFAULT_DRAWS`)."""
    from calnotes._engine.significance import DEFAULT_DRAWS

    y, p = _data()
    row = _rows(y, p, significance=False)["l3-ECE", "binary"]
    values, probs = _null_law(p)
    mean = float(values @ probs)
    sd = float(np.sqrt(((values - mean) ** 2) @ probs))
    assert row["reference_method"] == "monte-carlo"
    assert row["reference_draws"] == DEFAULT_DRAWS
    assert _reference_agrees(row, mean, sd, DEFAULT_DRAWS)
    assert row.get("p_value") is None


def _l3_brute_fast(y, p):
    """l3 ECE on equal-mass bins, float sums, for the bootstrap's many resamples; a resample's
    duplicated rows are tied predictions, taken here in their (stable) sorted order rather than
    averaged over their orders: a small difference beside the tolerance of the interval's
    ends."""
    order = np.argsort(p, kind="stable")
    n = len(p)
    bins = -(-(np.arange(1, n + 1) * M) // n) - 1
    S = np.bincount(bins, weights=(p - y)[order], minlength=M)
    L = np.bincount(bins, minlength=M)
    return float((np.sum(L * (np.abs(S) / L) ** 3) / n) ** (1 / 3))


def test_entries_the_engine_cannot_compute_are_refused(monkeypatch):
    """An old-style ``(p, binning)`` entry is named and refused, not read as another measure;
    a strategy its form does not support is refused when the measure is built."""
    y, p = _data()
    monkeypatch.setitem(BINNED_MEASURES, "l3-ECE", (3, "mass"))
    with pytest.raises(TypeError, match="'l3-ECE'.*BinnedMeasure"):
        _rows(y, p, significance=False)
    with pytest.raises(ValueError, match="'l3-QECE'.*exact-variance"):
        BinnedMeasure("l3-QECE", "mass", 3, False, "exact-variance", False)
    with pytest.raises(ValueError, match="'l2-ECE'.*Chernoff"):
        BinnedMeasure("l2-ECE", "mass", 2, True, "monte-carlo", True)
    with pytest.raises(ValueError, match="power: tail_bound bounds power 1"):
        tail_bound(0.1, 3, 10, [1.0], [10])


def test_out_of_core_says_it_has_no_l3_reference(with_l3, tmp_path):
    """Out of core no null is drawn: the l3 rows get their values (those of memory) and no
    reference, and a note names the measure."""
    y, p = _data()
    P = np.c_[1 - p, p]
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    ooc = calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "y.npy", out_of_core=True,
                            n_bins=[M], progress=False)
    mem = _rows(y, p, significance=False, bootstrap=0)
    for r in ooc.rows:
        if r["measure"] == "l3-ECE":
            assert r["value"] == pytest.approx(mem["l3-ECE", r["aggregation"]]["value"],
                                               rel=1e-12)
            assert r["calibrated_reference"] is None
    assert any("no calibrated reference for l3-ECE out of core" in note for note in ooc.notes)
