"""The report's intervals, their meaning and measured coverage; the footer without
significance; the fewest bootstrap resamples.

The interval is of ``E[T_n]`` (the mean of the measure over test sets of the same size from
the same population), built by a bias-corrected bootstrap (calnotes._engine.rows.
basic_interval); its coverage is measured on exact populations by calnotes.evaluation.coverage (the
Evaluate chapter builds the table at smoke size; ``-m slow`` here runs it at full size).  The
level itself is pinned by tests/test_interval_level_and_patching_blocks.py on an exact
bootstrap law.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from scipy.stats import binom

import calnotes
from calnotes import cli
from calnotes.evaluation import coverage


def _calibrated(n, k, rng):
    P = rng.dirichlet(np.ones(k), size=n)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return P, y


def test_calibrated_model_interval_contains_its_value_and_reference():
    """A calibrated k = 3 model (n = 300, m = 10): for a calibrated model the
    calibrated reference is ``E[T_n | predictions]``, the target of the interval, so the
    intervals contain it in most test sets; the percentile interval of 9a2840a contained it
    in 9-12% (class-wise) and put the value itself below the interval.

    Over S = 12 test sets per row kind, a coverage of 0.9 gives at most 7 misses out of 12
    with probability ``binom.cdf(7, 12, 0.9)`` < 0.005 (checked below); the rows are required
    to contain the reference in at least 8 of 12, and the value in every one (the interval is
    ``[T - q_hi(d), T - q_lo(d)]`` with deviations ``d`` of mean 0, so ``q_lo <= 0 <= q_hi``)."""
    assert binom.cdf(7, 12, 0.9) < 0.005
    rng = np.random.default_rng(21)
    hits: dict = {}
    for seed in range(12):
        P, y = _calibrated(300, 3, rng)
        report = calnotes.evaluate(P, labels=y, n_bins=[10], utility=False, smooth_ece=False,
                                   draws=19, bootstrap=60, rng=seed)
        for r in report.rows:
            if r["binning"] == "kernel":
                continue
            assert r["ci_lower"] <= r["value"] <= r["ci_upper"], r
            key = (r["measure"], r["aggregation"])
            hits[key] = hits.get(key, 0) + (r["ci_lower"] <= r["calibrated_reference"]
                                            <= r["ci_upper"])
    assert len(hits) == 6
    low = {key: h for key, h in hits.items() if h < 8}
    assert not low, f"intervals containing the calibrated reference, of 12: {low}"


def test_no_interval_below_the_measured_rows_per_bin():
    """The coverage table measures bins down to 10 rows (n = 100, m = 10); a row with fewer
    rows per bin gets no interval, and its ``ci_note`` and a report note say why.  At n = 150:
    m = 15 (10 rows per bin) has intervals, m = 16 and 20 do not."""
    rng = np.random.default_rng(6)
    P, y = _calibrated(150, 3, rng)
    report = calnotes.evaluate(P, labels=y, n_bins=[15, 16, 20], utility=False,
                               smooth_ece=False, draws=19, bootstrap=19)
    for r in report.rows:
        if r["binning"] == "kernel":
            continue
        if r["n_bins"] == 15:
            assert "ci_lower" in r and "ci_note" not in r
        else:
            assert "ci_lower" not in r and "rows per bin" in r["ci_note"], r
    assert any("no 90% interval for m = 16, 20" in note for note in report.notes)
    table = report.format_table()
    line = next(ln for ln in table.splitlines() if ln.startswith("ECE") and " 20 " in ln)
    assert line.split()[-2] == "-"


def test_coverage_table_checks_catch_a_bad_interval():
    """The table's check flags coverage below the level and rejection rates above alpha by
    more than the tolerance, and passes cells inside it; the tolerance is the Bonferroni
    binomial one (sqrt(0.09 / 200) = 0.0212 standard error at S = 200)."""
    tol = coverage.tolerance(200, 10)
    assert tol == pytest.approx(3.0902 * np.sqrt(0.09 / 200), rel=1e-4)   # Phi^-1(0.999)
    good = {"population": "p", "n": 100, "measure": "ECE", "aggregation": "binary",
            "coverage": 0.9 - 0.5 * tol, "sims": 200, "reject_0.1": 0.1, "reject_0.5": 0.45}
    assert coverage.check_coverage([good]) == []
    for key, value in (("coverage", 0.80), ("reject_0.1", 0.2), ("reject_0.5", 0.6)):
        bad = dict(good, **{key: value})
        out = coverage.check_coverage([bad])
        assert len(out) == 1 and key in out[0], out


def test_populations_are_what_the_docstring_says():
    """The coverage table's populations: calibrated ones have truth = prediction; the
    overconfident ones are shrunk a third of the way to uniform."""
    for name, (k, calibrated) in coverage.POPULATIONS.items():
        d = coverage.population(name)
        assert d.n_classes == k and np.isclose(d.weights.sum(), 1)
        expected = d.prediction if calibrated else (2 / 3) * d.prediction + 1 / (3 * k)
        assert np.allclose(d.truth, expected, atol=1e-15)
    P, y = coverage.draw_test_set(coverage.population("calibrated, k = 3"), 50,
                                  np.random.default_rng(0))
    assert P.shape == (50, 3) and y.shape == (50,) and set(y) <= {0, 1, 2}
    with pytest.raises(ValueError, match="population"):
        coverage.population("nope")
    with pytest.raises(ValueError, match="size"):
        coverage.coverage_table("huge")


@pytest.mark.slow
def test_coverage_full_size():
    """The coverage table at full size (all four populations, n = 100, 300, 1000, 200 test
    sets per cell, the default 200 resamples): every interval's coverage of ``E[T_n]`` is at
    least 0.9 and every rejection rate of the calibrated null at most its alpha, within the
    Bonferroni binomial tolerance (calnotes.evaluation.coverage.check_coverage).  2,400 test sets of
    about 1-2.5 s each: about an hour on one core; the cells run in parallel processes."""
    table = coverage.coverage_table("full", workers=os.cpu_count() or 1)
    kinds = {(r["measure"], r["aggregation"]) for r in table}
    assert len(kinds) == 9 and len({r["n"] for r in table}) >= 3
    assert coverage.check_coverage(table) == []


def _footer(report):
    text = report.format_table()
    return text[text.index("calibrated = "):]


def test_no_significance_footer_does_not_explain_p_values_or_intervals():
    """With --no-significance (significance=False) no row has a p-value or an interval, so
    the footer does not explain them; with significance it does."""
    rng = np.random.default_rng(3)
    P, y = _calibrated(200, 3, rng)
    off = _footer(calnotes.evaluate(P, labels=y, n_bins=[10], utility=False,
                                    smooth_ece=False, significance=False))
    assert "p-value =" not in off and "interval =" not in off
    assert "classwise = " in off
    on = _footer(calnotes.evaluate(P, labels=y, n_bins=[10], utility=False, smooth_ece=False,
                                   draws=19, bootstrap=19))
    assert "p-value =" in on and "90% interval =" in on
    no_ci = _footer(calnotes.evaluate(P, labels=y, n_bins=[10], utility=False,
                                      smooth_ece=False, draws=19, bootstrap=0))
    assert "p-value =" in no_ci and "interval =" not in no_ci


def test_too_few_bootstrap_resamples_refused(tmp_path, capsys):
    """bootstrap=1 printed an "interval" from one resample; now 1..18 are refused with a
    message naming the argument and the minimum (19: a 90% interval's 5% quantile needs
    (B + 1) * 0.05 >= 1), 0 (no intervals) and 19 are accepted, on the API and the CLI."""
    rng = np.random.default_rng(4)
    P, y = _calibrated(60, 2, rng)
    kw = dict(labels=y, n_bins=[5], utility=False, smooth_ece=False, draws=19)
    for B in (1, 2, 18):
        with pytest.raises(ValueError, match=r"bootstrap \(command line: --bootstrap\).*19"):
            calnotes.evaluate(P, bootstrap=B, **kw)
    assert "ci_lower" not in calnotes.evaluate(P, bootstrap=0, **kw).rows[0]
    assert calnotes.evaluate(P, bootstrap=19, **kw).rows[0]["bootstrap"] == 19
    path = tmp_path / "p.npz"
    np.savez(path, probs=P, labels=y)
    assert cli.main(["evaluate", str(path), "--bootstrap", "5", "--no-utility"]) != 0
    err = capsys.readouterr().err
    assert "--bootstrap" in err and "19" in err
