"""Reading a report of many rows: the p-values and the utility-calibration directions.

* The header carries one p-value for "any miscalibration beyond chance": the smallest row
  p-value adjusted for the number of rows (Holm; for the smallest, ``R p`` capped at 1).  A
  calibrated model's report of ~20 rows has some row below 0.05 about 40% of the time; the
  adjusted value is a valid p-value for the report.
* A Monte Carlo p-value at its floor ``1 / (draws + 1)`` is printed as ``< 0.005 (MC)``.
* A utility-calibration class prints a direction (too optimistic / pessimistic) only when its
  UC is above a noise level a calibrated model's UC exceeds with probability at most 5%;
  otherwise "within noise".
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import calnotes as cn
from calnotes.evaluation import p_value_summary
from calnotes.evaluation.utility_part import _uc_noise_level
from calnotes.theory.utility import uc_from_values


def _calibrated(n, k, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k), n)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    return P, y


def _overconfident(n, k, seed):
    """Labels drawn from P, reported as P^2 renormalized: too confident everywhere."""
    P, y = _calibrated(n, k, seed)
    Q = P ** 2
    return Q / Q.sum(axis=1, keepdims=True), y


@pytest.fixture(scope="module")
def calibrated_report():
    P, y = _calibrated(2000, 4, seed=3)
    return cn.evaluate(P, labels=y, smooth_ece=False)


@pytest.fixture(scope="module")
def overconfident_report():
    P, y = _overconfident(2000, 4, seed=3)
    return cn.evaluate(P, labels=y, smooth_ece=False)


def test_adjusted_p_value_of_a_calibrated_report(calibrated_report):
    rows = [r for r in calibrated_report.rows if r.get("p_value") is not None]
    summary = calibrated_report.to_dict()["p_value_summary"]
    assert summary == calibrated_report.p_value_summary
    smallest = min(r["p_value"] for r in rows)
    assert summary["rows"] == len(rows) >= 12
    assert summary["min_p_value"] == smallest
    assert summary["adjusted_min_p_value"] == min(1.0, len(rows) * smallest)
    assert summary["adjusted_min_p_value"] >= smallest
    assert summary["adjusted_min_p_value"] > 0.05          # no evidence, as it should be
    header = calibrated_report.format_table().split("\n\nmeasure")[0].splitlines()
    line = next(x for x in header if x.startswith("any miscalibration beyond chance"))
    assert f"of the {len(rows)} rows' p-values" in line


def test_adjusted_p_value_of_a_miscalibrated_report_is_tiny(overconfident_report):
    summary = p_value_summary(overconfident_report.rows)
    assert summary["adjusted_min_p_value"] < 1e-3
    shown = ("< 0.0001" if summary["adjusted_min_p_value"] < 1e-4
             else f"= {summary['adjusted_min_p_value']:.4f}")
    assert f"Holm-adjusted p {shown} " in overconfident_report.format_table()
    json.loads(overconfident_report.to_json())              # strict JSON, numbers as numbers


def test_legend_cautions_about_many_rows(calibrated_report):
    text = calibrated_report.format_table()
    assert "about 5% of the rows fall below 0.05 by chance" in text
    assert "Holm-adjusted p-value of the header" in text
    P, y = _calibrated(300, 3, 0)
    quiet = cn.evaluate(P, labels=y, significance=False, utility=False)
    assert "any miscalibration beyond chance" not in quiet.format_table()
    assert quiet.to_dict()["p_value_summary"] is None


def test_holm_adjustment_holds_its_level_where_single_rows_do_not():
    # 200 independent sets of 20 uniform p-values (the calibrated null's rows, at their most
    # independent): some row < 0.05 in about 1 - 0.95^20 = 64% of them, the adjusted smallest
    # below 0.05 in at most 5%
    rng = np.random.default_rng(0)
    some, adjusted = 0, 0
    for _ in range(200):
        rows = [{"measure": "ECE", "aggregation": "confidence", "n_bins": m,
                 "p_value": float(p)} for m, p in enumerate(rng.uniform(size=20))]
        summary = p_value_summary(rows)
        some += summary["min_p_value"] < 0.05
        adjusted += summary["adjusted_min_p_value"] < 0.05
    assert some > 100 and adjusted <= 15


def test_monte_carlo_floor_is_printed_as_a_bound(overconfident_report):
    floor = [r for r in overconfident_report.rows if r.get("p_value_method") == "monte-carlo"
             and r["p_value"] == pytest.approx(1 / (r["p_value_draws"] + 1))]
    assert floor, "the overconfident model should reach the Monte Carlo floor"
    text = overconfident_report.format_table()
    assert "< 0.005 (MC)" in text
    assert "0.0050m" not in text and "<=0.005" not in text and "0.005m" not in text
    data = overconfident_report.to_dict()["measures"]
    assert all(isinstance(r.get("p_value"), float) for r in data
               if r["measure"] != "SmoothECE")                       # machine-readable


def _utility_rows(report):
    lines = report.format_table().splitlines()
    start = next(i for i, x in enumerate(lines) if x.startswith("class ") and "noise 95%" in x)
    return lines[start + 1:start + 4]


def test_utility_directions_of_a_calibrated_model_are_within_noise(calibrated_report):
    for entry in calibrated_report.utility["classes"]:
        assert 0 < entry["uc"] < entry["noise_level"]
        assert entry["beyond_noise"] is False
        assert entry["direction"] in ("too optimistic", "too pessimistic")  # JSON: the sign
    for line in _utility_rows(calibrated_report):
        assert line.endswith("within noise")
        assert "optimistic" not in line and "pessimistic" not in line


def test_utility_direction_of_an_overconfident_model_is_printed(overconfident_report):
    tce = overconfident_report.utility["classes"][0]
    assert tce["class"] == "U_TCE" and tce["beyond_noise"] is True
    assert tce["uc"] > 2 * tce["noise_level"]
    assert _utility_rows(overconfident_report)[0].endswith("too optimistic")


def test_noise_level_holds_for_a_calibrated_model():
    # UC of calibrated outcomes exceeds the level in far fewer than 5% of draws
    rng = np.random.default_rng(1)
    n, exceed, ratios = 400, 0, []
    v = rng.beta(2, 2, size=n)
    level = _uc_noise_level(v, 1)
    for _ in range(300):
        u = (rng.random(n) < v).astype(float)
        uc = float(uc_from_values(v[None, :], u[None, :]).values[0])
        exceed += uc > level
        ratios.append(uc / level)
    assert exceed <= 15
    assert 0.2 < np.median(ratios) < 0.6                  # conservative, not vacuous
