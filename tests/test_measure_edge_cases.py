"""Measures at their edges: ties and row order (a label-sorted file gives the shuffled file's
value), binary semantics in messages, equal-width bins that outnumber the samples, and a
non-measure passed to an aggregation.

Each test fails on commit 2ee615c.
"""

import numpy as np
import pytest

import calnotes as cn


def close(a, b, tol):
    return abs(a - b) <= tol * max(1.0, abs(b))


def _three_valued_calibrated(n=1000, seed=1):
    rng = np.random.default_rng(seed)
    p = np.array([0.2, 0.5, 0.8])[rng.integers(0, 3, n)]
    y = (rng.random(n) < p).astype(int)
    return y, p, rng


def test_label_sorted_file_gives_the_shuffled_value():
    """A calibrated 3-valued predictor, rows sorted by label, scored 28-47x its reference
    on the equal-mass measures (ties ordered by position leak the labels into the bins)."""
    rng = np.random.default_rng(1)
    values = np.array([0.2, 0.5, 0.8])
    p = values[rng.integers(0, 3, 1000)]
    y = (rng.random(1000) < p).astype(int)
    P = np.column_stack([1 - p, p])
    by_label = np.argsort(y, kind="stable")
    shuffled = rng.permutation(1000)
    for measure in (cn.l1_qece, cn.l2_qece):
        for lift in (cn.classwise, cn.confidence):
            a = lift(measure, y[by_label], P[by_label], n_bins=10)
            b = lift(measure, y[shuffled], P[shuffled], n_bins=10)
            assert close(a, b, 1e-12), (measure.__name__, lift.__name__)
            # and the position rule does leak: the label-sorted value is far larger
            a_pos = lift(measure, y[by_label], P[by_label], n_bins=10, ties="position")
            assert a_pos > 3 * a


def test_evaluate_report_identical_for_label_sorted_and_shuffled_rows():
    """The report: the same rows in label order and shuffled give the same table."""
    y, p, rng = _three_valued_calibrated(600, seed=3)
    P = np.column_stack([1 - p, p])
    by_label = np.argsort(y, kind="stable")
    shuffled = rng.permutation(600)
    a = cn.evaluate(P[by_label], labels=y[by_label], n_bins=[10, 30])
    b = cn.evaluate(P[shuffled], labels=y[shuffled], n_bins=[10, 30])
    assert len(a.rows) == len(b.rows)
    for ra, rb in zip(a.rows, b.rows):
        assert (ra["measure"], ra["aggregation"], ra["n_bins"]) == \
            (rb["measure"], rb["aggregation"], rb["n_bins"])
        assert close(ra["value"], rb["value"], 1e-12), ra
        if ra["reference_method"] == "none":                 # SmoothECE: no reference
            assert rb["calibrated_reference"] is ra["calibrated_reference"] is None
            continue
        assert close(ra["calibrated_reference"], rb["calibrated_reference"], 1e-12), ra


def test_knn_style_predictions_on_a_tenths_grid():
    """Realistic: kNN probabilities (multiples of 0.1) over 3 classes, label-sorted."""
    rng = np.random.default_rng(7)
    n, k = 900, 3
    counts = rng.multinomial(10, rng.dirichlet(np.ones(k), size=n))
    P = counts / 10
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(0, k - 1)
    by_label = np.argsort(y, kind="stable")
    perm = rng.permutation(n)
    for measure in (cn.l1_qece, cn.l2_qece):
        a = cn.classwise(measure, y[by_label], P[by_label], n_bins=15)
        b = cn.classwise(measure, y[perm], P[perm], n_bins=15)
        assert close(a, b, 1e-12)


def test_tce_on_a_binary_vector_explains_the_binary_ece():
    """tce(y, p) with 1-d p said "call the measure directly", which computes another number."""
    y = [0, 1, 1, 0]
    p = [0.2, 0.9, 0.6, 0.4]
    with pytest.raises(ValueError) as info:
        cn.tce(y, p)
    message = str(info.value)
    assert "binned_ece(y, p)" in message and "P(y=1)" in message
    assert "np.column_stack([1 - p, p])" in message
    # and the two quantities it names are indeed different here
    P = np.column_stack([1 - np.array(p), p])
    assert cn.binned_ece(y, p, n_bins=2) != cn.tce(y, P, n_bins=2)


def test_equal_width_bins_may_outnumber_the_samples():
    """binned_ece(y[:6], p[:6], 10) was refused; equal-width ECE is defined for m > n."""
    y = np.array([0, 1, 1, 0, 1, 0])
    p = np.array([0.05, 0.93, 0.71, 0.38, 0.66, 0.12])
    # m = 10: every sample in its own bin, so ECE_1 = mean |p - y|
    assert close(cn.binned_ece(y, p, 10), np.mean(np.abs(p - y)), 1e-15)
    assert close(cn.max_calibration_error(y, p, 100), np.max(np.abs(p - y)), 1e-15)
    P = np.column_stack([1 - p, p])
    assert close(cn.tce(y, P, 1000), cn.binned_ece((P.argmax(1) == y).astype(int),
                                                   P.max(1), 1000), 1e-15)
    assert cn.reliability_stats(y, p, 50)["count"].sum() == 6
    # equal-mass bins still need a sample per bin
    with pytest.raises(ValueError, match="n_bins: 10 bins for 6 samples"):
        cn.binned_ece(y, p, 10, binning="mass")
    with pytest.raises(ValueError, match="n_bins: 10 bins for 6 samples"):
        cn.l2_qece(y, p, 10)


def test_classwise_with_a_non_measure_names_the_measure():
    """classwise(np.mean, y, P) failed inside numpy with a TypeError about scalar indexes."""
    P = np.array([[0.2, 0.8], [0.6, 0.4], [0.5, 0.5]])
    y = [1, 0, 1]
    with pytest.raises(TypeError, match=r"measure mean: calling it as mean\(y_true, y_prob\)"):
        cn.classwise(np.mean, y, P)
    with pytest.raises(TypeError, match="returned .* not a number"):
        cn.confidence(lambda yy, pp: np.array([1.0, 2.0]), y, P)
    with pytest.raises(TypeError, match="measure: expected a binary measure"):
        cn.classwise(5, y, P)


def test_cli_reports_identical_for_label_sorted_and_shuffled_csv(tmp_path, capsys):
    """Through the command line: the same rows, rounded to 2 decimals, written to two CSV
    files (sorted by label; shuffled) give identical reports (calnotes evaluate --json)."""
    import json

    from calnotes.cli import main

    rng = np.random.default_rng(11)
    n = 800
    p = np.round(rng.beta(2, 2, n), 2)
    y = (rng.random(n) < p).astype(int)
    files = {}
    for name, order in (("sorted", np.argsort(y, kind="stable")), ("shuffled", rng.permutation(n))):
        path = tmp_path / f"ties_{name}.csv"
        lines = ["label,p0,p1"] + [f"{y[i]},{1 - p[i]:.2f},{p[i]:.2f}" for i in order]
        path.write_text("\n".join(lines) + "\n")
        assert main(["evaluate", str(path), "--bins", "15", "--json"]) == 0
        files[name] = json.loads(capsys.readouterr().out)
    a, b = files["sorted"]["measures"], files["shuffled"]["measures"]
    assert len(a) == len(b) > 0
    for ra, rb in zip(a, b):
        assert ra["measure"] == rb["measure"] and ra["aggregation"] == rb["aggregation"]
        assert close(ra["value"], rb["value"], 1e-12), ra
        if ra["reference_method"] == "none":                 # SmoothECE: no reference
            assert rb["calibrated_reference"] is ra["calibrated_reference"] is None
            continue
        assert close(ra["calibrated_reference"], rb["calibrated_reference"], 1e-12), ra


def test_evaluate_can_reproduce_eq1_literally_with_ties_position(tmp_path, capsys):
    """The position rule stays available (paper literal), in the API and the CLI, with a
    note in the report; on label-sorted rows its rows differ from the default."""
    import json

    from calnotes.cli import main

    y, p, _ = _three_valued_calibrated(400, seed=5)
    order = np.argsort(y, kind="stable")
    P = np.column_stack([1 - p, p])[order]
    y = y[order]
    literal = cn.evaluate(P, labels=y, n_bins=[10], ties="position")
    default = cn.evaluate(P, labels=y, n_bins=[10])
    row = next(r for r in literal.rows if r["measure"] == "l2-QECE" and r["aggregation"] == "binary")
    assert close(row["value"], cn.l2_qece(y, P[:, 1], 10, ties="position"), 1e-12)
    assert close(row["calibrated_reference"],
                 cn.expected_qece(P[:, 1], P[:, 1], 10, ties="position"), 1e-12)
    other = next(r for r in default.rows if r["measure"] == "l2-QECE" and r["aggregation"] == "binary")
    assert row["value"] > 2 * other["value"]
    assert any("ties='position'" in note for note in literal.notes)
    np.savez(tmp_path / "p.npz", labels=y, probs=P)
    assert main(["evaluate", str(tmp_path / "p.npz"), "--bins", "10", "--ties", "position",
                 "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["measures"]
    cli_row = next(r for r in rows if r["measure"] == "l2-QECE" and r["aggregation"] == "binary")
    assert close(cli_row["value"], row["value"], 1e-12)
    with pytest.raises(ValueError, match="ties: expected 'average'"):
        cn.evaluate(P, labels=y, ties="random")
