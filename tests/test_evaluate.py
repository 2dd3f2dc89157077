"""calnotes.evaluate and ``calnotes evaluate``: numbers, references, files, refusals."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

import calnotes
from calnotes import cli, evaluation
from calnotes.data.loaders import save_predictions


def _calibrated(n, k, rng, sharp=2.0):
    Z = rng.normal(size=(n, k)) * sharp
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return P, np.minimum(y, k - 1), Z


def test_report_numbers_are_the_library_measures():
    rng = np.random.default_rng(0)
    P, y, _ = _calibrated(400, 4, rng)
    report = calnotes.evaluate(P, labels=y, n_bins=[10, 40])
    # accuracy and log loss straight from numpy, not through calnotes
    assert report.accuracy == np.mean(P.argmax(axis=1) == y)
    assert math.isclose(report.scores["log"], -np.mean(np.log(P[np.arange(400), y])),
                        rel_tol=1e-12)
    onehot = np.eye(4)[y]
    assert math.isclose(report.scores["brier"], np.mean(((P - onehot) ** 2).sum(axis=1)),
                        rel_tol=1e-12)
    assert len(report.rows) == 2 * 3 * 2 + 1          # + SmoothECE of the confidences
    lookup = {(r["measure"], r["aggregation"], r["n_bins"]): r["value"] for r in report.rows}
    assert lookup["l2-QECE", "classwise", 40] == calnotes.classwise(calnotes.l2_qece, y, P,
                                                                     n_bins=40)
    assert lookup["ECE", "confidence", 10] == calnotes.confidence(calnotes.binned_ece, y, P,
                                                                  n_bins=10)
    assert lookup["l1-QECE", "confidence", 10] == calnotes.confidence(calnotes.l1_qece, y, P,
                                                                      n_bins=10)
    from calnotes.kernel import smooth_ece
    assert lookup["SmoothECE", "confidence", None] == smooth_ece(P.argmax(axis=1) == y,
                                                                 P.max(axis=1))


def test_calibrated_reference_is_the_mean_over_redrawn_labels():
    """For a calibrated model the reference is E[value]: 600 label redraws, |z| <= 4."""
    rng = np.random.default_rng(1)
    P, y, _ = _calibrated(300, 3, rng)
    report = calnotes.evaluate(P, labels=y, n_bins=[12], smooth_ece=False)
    draws = []
    for _ in range(600):
        y_new = (P.cumsum(axis=1) > rng.random((300, 1))).argmax(axis=1)
        draws.append([r["value"] for r in calnotes.evaluate(P, labels=y_new, n_bins=[12],
                                                            references=False,
                                                            smooth_ece=False).rows])
    draws = np.array(draws)
    for j, row in enumerate(report.rows):
        assert row["reference_method"] == "exact"
        se = draws[:, j].std(ddof=1) / np.sqrt(len(draws))
        z = (draws[:, j].mean() - row["calibrated_reference"]) / se
        assert abs(z) <= 4, (row, z)


def test_folded_normal_fallback_is_close_for_large_bins(monkeypatch):
    """Bins of >= 500 samples: the normal approximation of E|S_j| is within 1% of exact
    (the folded-normal mean's relative error for a Poisson-binomial sum is O(1/var_j))."""
    rng = np.random.default_rng(2)
    P, y, _ = _calibrated(3000, 3, rng, sharp=1.0)
    exact = calnotes.evaluate(P, labels=y, n_bins=[3, 6])
    monkeypatch.setattr(evaluation, "EXACT_L1_BUDGET", 0)
    approx = calnotes.evaluate(P, labels=y, n_bins=[3, 6])
    checked = 0
    for e, a in zip(exact.rows, approx.rows):
        if e["measure"] == "l2-QECE":
            assert a["reference_method"] == "exact"
            continue
        if e["measure"] == "SmoothECE":                    # no reference
            continue
        assert e["reference_method"] == "exact" and a["reference_method"] == "folded-normal"
        if e["binning"] == "width":
            continue  # equal-width bins can be small; compared only where bins are large
        assert abs(a["calibrated_reference"] / e["calibrated_reference"] - 1) < 0.01
        checked += 1
    assert checked == 4
    assert any("folded-normal" in note for note in approx.notes)


def test_bin_counts_above_n_get_equal_width_rows_only():
    """m > n: the equal-width ECE is defined (empty bins carry no weight), equal-mass bins are
    not (eq. (1) needs a sample per bin): ECE rows kept, QECE rows skipped with a note."""
    rng = np.random.default_rng(3)
    P, y, _ = _calibrated(50, 3, rng)
    for report in (calnotes.evaluate(P, labels=y), calnotes.evaluate(P, labels=y,
                                                                     n_bins=[15, 20, 100])):
        rows = {(r["measure"], r["n_bins"]) for r in report.rows}
        assert {m for measure, m in rows if measure == "ECE"} == {15, 20, 100}
        assert {m for measure, m in rows if measure not in ("ECE", "SmoothECE")} == {15, 20}
        assert any("[100]" in note and "skipped" in note for note in report.notes)
    with pytest.raises(ValueError, match="labels: required"):
        calnotes.evaluate(P)
    with pytest.raises(ValueError, match="kind: expected"):
        calnotes.evaluate(P, labels=y, kind="scores")


def test_infinite_log_loss_is_reported_not_hidden(tmp_path):
    P = np.array([[1.0, 0.0], [0.3, 0.7], [0.6, 0.4]])
    y = np.array([1, 1, 0])
    report = calnotes.evaluate(P, labels=y, n_bins=[1], out=tmp_path / "r")
    assert report.scores["log"] == math.inf
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["scores"]["log"] is None
    assert any("sample 0 gives probability 0" in note for note in data["notes"])


def test_logit_array_input():
    rng = np.random.default_rng(4)
    P, y, Z = _calibrated(200, 3, rng)
    a = calnotes.evaluate(Z, labels=y, kind="logits", n_bins=[5])
    b = calnotes.evaluate(P, labels=y, n_bins=[5])
    for ra, rb in zip(a.rows, b.rows):
        assert math.isclose(ra["value"], rb["value"], rel_tol=1e-9, abs_tol=1e-15)


# ------------------------------------------------------------------------------ command line
@pytest.fixture
def npz_file(tmp_path):
    rng = np.random.default_rng(5)
    P, y, _ = _calibrated(500, 4, rng)
    return save_predictions(tmp_path / "model.npz", y, probs=P), P, y


def test_cli_evaluate_npz_writes_report_and_refuses_to_overwrite(npz_file, tmp_path, capsys):
    path, P, y = npz_file
    out = tmp_path / "report"
    assert cli.main(["evaluate", str(path), "--out", str(out), "--bins", "10", "25"]) == 0
    printed = capsys.readouterr().out
    assert "accuracy" in printed and "l2-QECE" in printed and "calibrated" in printed
    data = json.loads((out / "report.json").read_text())
    assert data["n_samples"] == 500 and data["n_classes"] == 4
    assert len(data["measures"]) == 12 + 1       # + the SmoothECE row
    with open(out / "report.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["quantity"] == "accuracy"
    assert float(rows[0]["value"]) == np.mean(P.argmax(axis=1) == y)
    assert (out / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "sharpness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    stamps = {f: (out / f).stat().st_mtime_ns for f in evaluation.REPORT_FILES}
    assert cli.main(["evaluate", str(path), "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert stamps == {f: (out / f).stat().st_mtime_ns for f in evaluation.REPORT_FILES}
    assert cli.main(["evaluate", str(path), "--out", str(out), "--force", "--bins", "5"]) == 0
    assert len(json.loads((out / "report.json").read_text())["measures"]) == 6 + 1  # SmoothECE


def test_cli_evaluate_csv_matches_npz(npz_file, tmp_path, capsys):
    path, P, y = npz_file
    csv_path = tmp_path / "model.csv"
    with open(csv_path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([f"p{j}" for j in range(4)] + ["label"])
        for row, label in zip(P, y):
            writer.writerow([repr(float(v)) for v in row] + [int(label)])
    assert cli.main(["evaluate", str(csv_path), "--out", str(tmp_path / "a"), "--bins", "20"]) == 0
    assert cli.main(["evaluate", str(path), "--out", str(tmp_path / "b"), "--bins", "20"]) == 0
    a = json.loads((tmp_path / "a" / "report.json").read_text())
    b = json.loads((tmp_path / "b" / "report.json").read_text())
    assert a["measures"] == b["measures"] and a["scores"] == b["scores"]


def test_cli_evaluate_npy_pair_with_logits(tmp_path, capsys):
    rng = np.random.default_rng(6)
    _, y, Z = _calibrated(100, 3, rng)
    np.save(tmp_path / "z.npy", Z)
    np.save(tmp_path / "y.npy", y)
    assert cli.main(["evaluate", str(tmp_path / "z.npy"), "--labels", str(tmp_path / "y.npy"),
                     "--logits", "--bins", "10"]) == 0
    assert "n = 100, k = 3" in capsys.readouterr().out


def test_cli_evaluate_refuses_pickle_without_opt_in(tmp_path, capsys):
    import pickle

    rng = np.random.default_rng(7)
    z, y = rng.normal(size=(30, 3)), rng.integers(0, 3, size=30)
    with open(tmp_path / "logits.p", "wb") as fh:
        pickle.dump(((z, y), (z, y)), fh)
    assert cli.main(["evaluate", str(tmp_path / "logits.p")]) == 2
    assert "--allow-pickle" in capsys.readouterr().err
    assert cli.main(["evaluate", str(tmp_path / "logits.p"), "--allow-pickle",
                     "--bins", "3"]) == 0


@pytest.mark.parametrize("argv, message", [
    (["evaluate", "missing.npz"], "missing.npz: no such file"),
    (["evaluate", "{npz}", "--bins", "0"], "n_bins (command line: --bins): bin count 0 is not"
                                             " a positive integer"),
    (["evaluate", "{npz}", "--bins", "-3"], "--bins): bin count -3 is not a positive integer"),
])
def test_cli_evaluate_errors(npz_file, argv, message, capsys):
    path = npz_file[0]
    argv = [a.replace("{npz}", str(path)) for a in argv]
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_folded_normal_width_reference_is_the_zero_bias_folded_normal(monkeypatch):
    """The equal-width fallback, against the formula written out per column and bin."""
    rng = np.random.default_rng(8)
    P, y, _ = _calibrated(2000, 4, rng, sharp=1.5)
    monkeypatch.setattr(evaluation, "EXACT_L1_BUDGET", 0)
    report = calnotes.evaluate(P, labels=y, n_bins=[7])
    got = {r["aggregation"]: r for r in report.rows if r["measure"] == "ECE"}
    conf = P.max(axis=1)
    for aggregation, cols in (("classwise", P), ("confidence", conf[:, None])):
        per_column = []
        for c in range(cols.shape[1]):
            bins = calnotes.equal_width_bins(cols[:, c], 7)
            total = 0.0
            for j in range(7):
                x = cols[bins == j, c]
                total += np.sqrt(np.sum(x * (1 - x))) * np.sqrt(2 / np.pi)
            per_column.append(total / len(cols))
        assert got[aggregation]["reference_method"] == "folded-normal"
        assert math.isclose(got[aggregation]["calibrated_reference"], np.mean(per_column),
                            rel_tol=1e-12)
