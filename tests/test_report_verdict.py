"""The report's verdict (``EvaluationReport.verdict``) and how its p-values print.

The verdict is three lines at the top of the printed report and the top-level ``"verdict"`` of
``report.json``: miscalibrated beyond chance or not, decided by the Holm-adjusted smallest
p-value over the rows (never by one row: with 18-27 rows a calibrated model's report shows some
row below 0.05 about 40% of the time); over- or underconfident and where; the usual next step.

Synthetic models: labels drawn from ``P = softmax(Z)`` (calibrated by construction), and the
reported predictions ``softmax(Z / T)``: ``T < 1`` sharpens them (overconfident), ``T > 1``
flattens them (underconfident).
"""

from __future__ import annotations

import csv
import io
import json
import re

import numpy as np
import pytest

import calnotes as cn
from calnotes.evaluation import RECALIBRATION_CHAPTER, VERDICT_ALPHA


def _softmax(Z):
    Z = Z - Z.max(axis=1, keepdims=True)
    E = np.exp(Z)
    return E / E.sum(axis=1, keepdims=True)


def _model(n, k, seed, temperature=1.0, scale=1.5):
    """Labels drawn from softmax(Z); predictions softmax(Z / temperature)."""
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, k)) * scale
    y = (_softmax(Z).cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return _softmax(Z / temperature), y


@pytest.fixture(scope="module")
def overconfident():
    P, y = _model(1500, 4, seed=5, temperature=0.6)
    return cn.evaluate(P, labels=y, smooth_ece=False)


@pytest.fixture(scope="module")
def underconfident():
    P, y = _model(1500, 4, seed=5, temperature=1.7)
    return cn.evaluate(P, labels=y, smooth_ece=False)


def test_verdict_is_first_in_the_printed_report_and_top_level_text_in_json(overconfident):
    lines = overconfident.format_table().splitlines()
    verdict = overconfident.verdict.splitlines()
    assert 2 <= len(verdict) <= 3
    assert lines[:len(verdict)] == verdict and lines[0].startswith("verdict: ")
    assert lines[len(verdict)] == ""                      # then the usual header
    data = json.loads(overconfident.to_json())
    assert list(data)[0] == "verdict" and data["verdict"] == overconfident.verdict
    assert isinstance(data["verdict"], str)


def test_verdict_of_an_overconfident_model(overconfident):
    text = overconfident.verdict
    summary = overconfident.p_value_summary
    assert summary["adjusted_min_p_value"] < VERDICT_ALPHA
    first, second, third = text.splitlines()
    assert first.startswith("verdict: miscalibrated beyond chance (Holm-adjusted p < 0.0001")
    # how far from the calibrated reference, from the report's own top-label ECE row
    row = next(r for r in overconfident.rows
               if r["measure"] == "ECE" and r["aggregation"] == "confidence")
    ratio = row["value"] / row["calibrated_reference"]
    assert f"top-label ECE (m = {row['n_bins']})" in first
    assert (f"= {ratio:.1f}x" if ratio < 10 else f"= {ratio:.0f}x") in first
    assert "its calibrated reference" in first
    assert overconfident.mean_confidence > overconfident.accuracy
    assert second.startswith("overconfident: mean confidence")
    assert f"{overconfident.mean_confidence:.3f}" in second
    tce = overconfident.utility["classes"][0]
    assert tce["beyond_noise"] and f"({tce['mass']:.0%} of the samples)" in second
    assert "temperature scaling" in third and RECALIBRATION_CHAPTER[0] in third
    assert RECALIBRATION_CHAPTER[1] in third


def test_verdict_of_an_underconfident_model(underconfident):
    first, second, third = underconfident.verdict.splitlines()
    assert first.startswith("verdict: miscalibrated beyond chance")
    assert underconfident.mean_confidence < underconfident.accuracy
    assert second.startswith("underconfident: mean confidence")
    assert "overconfident" not in second
    assert "temperature scaling" in third


def test_calibrated_models_get_no_miscalibration_beyond_chance_in_most_seeds():
    """Holm's adjustment keeps the family-wise error at VERDICT_ALPHA = 5% whatever the
    dependence between the rows (exact p-values are conservative, Monte Carlo ones valid), so
    each calibrated report says "miscalibrated" with probability at most 0.05.  With draws=399
    the Monte Carlo floor 1/400 times 18 rows is 0.045 < 0.05, so no report is "not
    resolved".  Over 20 independent seeds the number of false alarms X is at most
    Binomial(20, 0.05): P(X >= 5) = 0.0026, so allowing 4 (16 of 20 = 80%, expected 19 of 20)
    keeps this test's own false-failure rate below 0.3%."""
    said, adjusted = [], []
    for seed in range(20):
        P, y = _model(500, 3, seed=100 + seed)
        report = cn.evaluate(P, labels=y, smooth_ece=False, utility=False, bootstrap=0,
                             draws=399, rng=seed)
        assert report.p_value_summary["rows"] == 18
        said.append(report.verdict.startswith(
            "verdict: no miscalibration beyond chance at this sample size"))
        adjusted.append(report.p_value_summary["adjusted_min_p_value"])
    assert sum(not s for s in said) <= 4, (said, adjusted)
    # the verdict follows the adjusted p-value, nothing else
    assert said == [p >= VERDICT_ALPHA for p in adjusted]


def test_calibrated_verdict_says_so_plainly_with_its_interval():
    P, y = _model(800, 3, seed=1)
    report = cn.evaluate(P, labels=y, n_bins=[10], smooth_ece=False, utility=False)
    first, second, third = report.verdict.splitlines()
    assert first.startswith("verdict: no miscalibration beyond chance at this sample size")
    assert "n = 800" in first
    assert "90% interval of its expected value [" in second
    assert "nothing to recalibrate" in third
    for word in ("overconfident", "underconfident", "miscalibrated"):
        assert word not in report.verdict


def _classwise_only(n, seed):
    """Top-label calibrated, class-wise not: labels drawn from P, then classes 1 and 2 swap
    their probabilities wherever neither is the top class (class 1 usually the larger)."""
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([6, 3, 1, 1], n)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    Q = P.copy()
    top = P.argmax(axis=1)
    swap = (top != 1) & (top != 2)
    Q[swap, 1], Q[swap, 2] = P[swap, 2], P[swap, 1]
    return Q, y


def test_verdict_names_the_classes_when_the_class_wise_part_stands_out():
    Q, y = _classwise_only(1500, 5)
    report = cn.evaluate(Q, labels=y, smooth_ece=False, draws=1999, bootstrap=0)
    first, second, third = report.verdict.splitlines()
    assert first.startswith("verdict: miscalibrated beyond chance")
    assert "class-wise ECE (m = 15)" in first
    assert second.startswith("class-wise: the top label is within noise")
    assert "class 1 too pessimistic" in second and "class 2 too optimistic" in second
    assert "VectorScaling" in third


def test_verdict_is_not_resolved_when_monte_carlo_floors_cannot_pass_holm():
    """200 draws: floor 1/201; 18 rows x 1/201 = 0.09 >= 0.05, so class-wise rows at the floor
    cannot decide; the verdict says so and how many draws would."""
    Q, y = _classwise_only(1500, 5)
    report = cn.evaluate(Q, labels=y, smooth_ece=False, bootstrap=0)
    first, second, third = report.verdict.splitlines()
    assert first.startswith("verdict: not resolved at 200 Monte Carlo draws")
    assert "class-wise p-values sit at the draws' floor 0.005" in first
    assert "class 1 too pessimistic" in second
    assert third.startswith("next: rerun with draws=2000 (command line: --draws 2000)")


def test_verdict_without_p_values_does_not_judge():
    P, y = _model(300, 3, seed=2, temperature=0.5)
    report = cn.evaluate(P, labels=y, n_bins=[10], significance=False, utility=False,
                         smooth_ece=False)
    first = report.verdict.splitlines()[0]
    assert "cannot tell miscalibration from chance" in first and "--no-significance" in first
    assert "miscalibrated beyond" not in report.verdict
    assert "overconfident" not in report.verdict


def test_printed_p_values_have_no_m_suffix_and_floors_read_as_bounds(overconfident):
    text = overconfident.format_table()
    floors = [r for r in overconfident.rows if r.get("p_value_floor")]
    assert floors and all(r["p_value_method"] == "monte-carlo" for r in floors)
    assert "< 0.005 (MC)" in text
    rows = [line for line in text.splitlines() if line.startswith(("ECE ", "l1-", "l2-"))]
    assert len(rows) == 18
    assert not any(re.search(r"\d\.\d+m\b|<=\d", line) for line in rows)
    assert "0.0050m" not in text and "<=0.005" not in text
    # machine-readable: numbers plus the flag, in JSON and in CSV
    data = json.loads(overconfident.to_json())["measures"]
    for row in data:
        if row.get("p_value") is not None:
            assert isinstance(row["p_value"], float) and isinstance(row["p_value_floor"], bool)
    csv_rows = list(csv.DictReader(io.StringIO(overconfident.to_csv())))
    flagged = [r for r in csv_rows if r["p_value_floor"] == "true"]
    assert len(flagged) == len(floors)
    assert all(float(r["p_value"]) == pytest.approx(1 / 201) for r in flagged)


def test_report_table_prints_floors_as_bounds(overconfident):
    from calnotes.book.tables import report_table

    html = report_table(overconfident).to_html()
    assert "< 0.005 (MC)" in html and "0.0050 (MC)" not in html
    values = report_table(overconfident, part="values").to_html()
    details = report_table(overconfident, part="details").to_html()
    assert "< 0.005 (MC)" in values and "90% interval" not in values
    assert "90% interval of E[value]" in details and "MC (200)" in details
    assert "calibrated reference" not in details.split("<thead>")[1]
    with pytest.raises(ValueError, match="^part:"):
        report_table(overconfident, part="everything")


def test_verdict_of_a_binary_model_biased_in_p1_points_at_p1_not_the_top_label():
    """P(y = 1) raised by 0.08 everywhere: the top label barely moves, the binary rows do."""
    rng = np.random.default_rng(3)
    p = rng.uniform(size=3000)
    y = (rng.uniform(size=3000) < p).astype(int)
    report = cn.evaluate(np.clip(p + 0.08, 0, 1), labels=y, smooth_ece=False, utility=False)
    first, second, third = report.verdict.splitlines()
    assert first.startswith("verdict: miscalibrated beyond chance")
    assert "P(y = 1) ECE (m = 15)" in first
    assert second.startswith("class-wise: the top label is within noise") and "P(y = 1)" in second
    assert "overconfident" not in report.verdict and "VectorScaling" in third
