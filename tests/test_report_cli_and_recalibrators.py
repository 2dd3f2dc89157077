"""The evaluation report, the command line and the recalibrators on the inputs people hand
them: binary rows and the Brier convention, huge and infinite logits, warnings of degenerate
fits, scikit-learn conventions, arguments checked before anything is read or computed, bin
counts above ``n``, the table's alignment and the messages' flags, ``calnotes run``'s checks
and outputs, a broken pipe, ``--version`` and provenance, the binary figure.  Inputs are
generated in ``tmp_path``.

Tolerances
----------
``EXACT = 1e-12``: two computations of the same finite sum of at most a few thousand float64
terms of size <= 1 in different orders (rounding error <= n * 2^-53 ~ 1e-13 for n <= 1000).
Expected values are computed here by naive code (loops, textbook formulas, scikit-learn),
never by the function under test.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

import calnotes
from calnotes import cli, evaluation, recalibrate
from calnotes.book import chapters
from calnotes.evaluation import inputs
from calnotes.core import scores
from calnotes.data import save_predictions
from calnotes.recalibrate import (AccuracyPreservingTransform, DirichletCalibration,
                                  HistogramBinning, IsotonicCalibration, MatrixScaling,
                                  MeanReplacement, TemperatureScaling, VectorScaling, check_logits,
                                  compare_recalibrators, softmax)

EXACT = 1e-12


# Names added by the fixes are looked up when a test runs, so that each test fails on its own
# (not the whole module at import) on the code before the fixes.
#: A valid notebook with no cells (a stand-in for what papermill writes).
EMPTY_NOTEBOOK = '{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}'

def log_loss_from_logits(*args, **kwargs):
    return scores.log_loss_from_logits(*args, **kwargs)


def _warning(name):
    return getattr(recalibrate, name)


def _binary(n, seed):
    """Calibrated binary data: P(y = 1) = p, labels drawn from p."""
    rng = np.random.default_rng(seed)
    p = rng.uniform(0.02, 0.98, size=n)
    return p, (rng.uniform(size=n) < p).astype(np.int64)


def _multiclass(n, k, seed, scale=2.0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, k)) * scale
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = np.minimum((P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1), k - 1)
    return P, y, Z


def _naive_width_ece(y, p, m):
    """Equal-width ECE_1 by a loop: bin floor(p m) (1 in the last bin), sum |sum(p - y)| / n."""
    total = 0.0
    for j in range(m):
        inside = [i for i in range(len(p)) if min(int(math.floor(p[i] * m)), m - 1) == j]
        total += abs(sum(p[i] - y[i] for i in inside))
    return total / len(p)


def _rows(report):
    return {(r["measure"], r["aggregation"], r["n_bins"]): r for r in report.rows}


def _npz(tmp_path, n=200, k=3, seed=0, name="model.npz"):
    P, y, _ = _multiclass(n, k, seed)
    return save_predictions(tmp_path / name, y, probs=P), P, y


# ======================================================= binary rows, the Brier convention

def test_binary_rows_on_p1_with_their_calibrated_references():
    p, y = _binary(400, 1)
    report = calnotes.evaluate(p, labels=y, n_bins=[10])
    rows = _rows(report)
    ece = rows["ECE", "binary", 10]
    assert ece["binning"] == "width"
    assert abs(ece["value"] - _naive_width_ece(y, p, 10)) <= EXACT
    # Thm 2.6: for a calibrated predictor E[l2-QECE] = n^-2 sum p (1 - p), for every m
    l2 = rows["l2-QECE", "binary", 10]
    assert abs(l2["calibrated_reference"] - np.sum(p * (1 - p)) / 400 ** 2) <= EXACT
    assert rows["l1-QECE", "binary", 10]["reference_method"] == "exact"
    # the references are the ones the brief names, on P(y = 1)
    assert ece["calibrated_reference"] == calnotes.expected_binned_ece(
        p, p, 10, binning="width", aggregation="binary")
    assert rows["l1-QECE", "binary", 10]["calibrated_reference"] == calnotes.expected_qece(
        p, p, 10, p=1, aggregation="binary")
    # the binary row is a third quantity, next to top-label and class-wise
    assert {a for (_, a, _) in rows} == {"confidence", "classwise", "binary"}
    table = report.format_table()
    for sentence in ("confidence = top-label: the measure on (the largest probability, whether"
                     " the top class was right).",
                     "classwise = the mean of the k one-vs-rest measures",
                     "binary = the usual binary measure on P(y = 1)"):
        assert sentence in table
    P3, y3, _ = _multiclass(200, 3, 2)
    three = calnotes.evaluate(P3, labels=y3, n_bins=[10])
    assert not any(r["aggregation"] == "binary" for r in three.rows)
    assert "binary = " not in three.format_table()


def test_brier_convention_and_sklearn_binary_brier():
    from sklearn.metrics import brier_score_loss

    p, y = _binary(300, 3)
    report = calnotes.evaluate(p, labels=y, n_bins=[5])
    sk = brier_score_loss(y, p)
    assert abs(report.scores["brier_binary"] - sk) <= EXACT
    assert abs(report.scores["brier"] - 2 * sk) <= EXACT
    table = report.format_table()
    assert "Brier (binary)" in table
    assert "twice scikit-learn's brier_score_loss" in table
    documented = " ".join(calnotes.EvaluationReport.__doc__.split())   # the report's fields
    assert "twice scikit-learn's ``brier_score_loss``, which is ``brier_binary``" in documented
    P3, y3, _ = _multiclass(100, 3, 4)
    assert "brier_binary" not in calnotes.evaluate(P3, labels=y3, n_bins=[5]).scores


# =============================================================== log loss from huge logits

def test_log_loss_from_logits_is_finite_for_huge_logits():
    # a gap of 800: softmax underflows to probability 0, the loss is 800 (label on the small
    # logit) and log(1 + e^-800) = 0 in float64 (label on the large one): mean 400
    Z = np.array([[0.0, 800.0], [0.0, 800.0]])
    y = np.array([0, 1])
    assert log_loss_from_logits(y, Z) == 400.0
    report = calnotes.evaluate(calnotes.as_predictions(Z, y, kind="logits"), n_bins=[1])
    assert report.scores["log"] == 400.0
    assert not any("infinite" in note for note in report.notes)
    assert any("from the logits" in note for note in report.notes)
    # moderate logits: the textbook formula, log sum exp - z_y, written out with math
    rng = np.random.default_rng(5)
    Z = rng.normal(size=(50, 4)) * 3
    y = rng.integers(0, 4, size=50)
    naive = np.mean([math.log(sum(math.exp(v) for v in row)) - row[label]
                     for row, label in zip(Z, y)])
    assert abs(log_loss_from_logits(y, Z) - naive) <= EXACT
    # a masked label gives inf; NaN and +inf are refused, naming the argument
    assert log_loss_from_logits([1], [[0.0, -np.inf]]) == math.inf
    with pytest.raises(ValueError, match=r"logits: non-finite logit inf at index \[0, 1\]"):
        log_loss_from_logits([0], [[0.0, np.inf]])
    with pytest.raises(ValueError, match="logits: row 0 has no finite logit"):
        log_loss_from_logits([0], [[-np.inf, -np.inf]])


# ================================================================= -inf logits, overflow

def test_minus_inf_logits_are_masked_classes():
    Z = np.array([[0.0, -np.inf, 1.0], [2.0, 0.5, -np.inf], [-np.inf, 0.0, 0.0]])
    assert np.array_equal(check_logits(Z), Z)
    P = softmax(Z)
    assert P[0, 1] == 0.0 and P[1, 2] == 0.0 and P[2, 0] == 0.0
    assert abs(P[2, 1] - 0.5) <= EXACT
    for bad, match in (([[0.0, np.inf]], r"non-finite logit inf at index \[0, 1\]"),
                       ([[np.nan, 0.0]], r"non-finite logit nan at index \[0, 0\]"),
                       ([[0.0, 1.0], [-np.inf, -np.inf]], "row 1 has no finite logit")):
        with pytest.raises(ValueError, match=match):
            check_logits(bad)
    rng = np.random.default_rng(6)
    Zb = rng.normal(size=(300, 3)) * 2
    Zb[::3, 2] = -np.inf                         # class 2 masked on every third sample
    y = np.array([rng.choice(3, p=row) for row in softmax(Zb)])
    ts = TemperatureScaling(inputs="logits").fit(Zb, y)
    assert np.all(ts.transform(Zb)[::3, 2] == 0.0)
    report = calnotes.evaluate(calnotes.as_predictions(Zb, y, kind="logits"), n_bins=[5])
    assert math.isfinite(report.scores["log"])


def test_huge_logits_leak_no_overflow_warning():
    Z = np.array([[1e308, -1e308], [-1e308, 1e308]])
    with warnings.catch_warnings():
        warnings.simplefilter("error")            # any RuntimeWarning fails the test
        assert softmax(Z).tolist() == [[1.0, 0.0], [0.0, 1.0]]
        assert log_loss_from_logits([0, 1], Z) == 0.0
        report = calnotes.evaluate(calnotes.as_predictions(Z, [0, 1], kind="logits"), n_bins=[1])
    assert report.accuracy == 1.0 and report.scores["log"] == 0.0


# ===================== warnings of degenerate fits and of logits that are probabilities

def _degenerate_messages(fit):
    with pytest.warns(_warning("DegenerateFitWarning")) as record:
        fit()
    return " | ".join(str(w.message) for w in record)


def test_degenerate_fits_warn():
    P, y, Z = _multiclass(200, 3, 7)
    one_class = _degenerate_messages(lambda: TemperatureScaling().fit(P, np.zeros(200, int)))
    assert "at the bound of the search" in one_class and "class(es) [1, 2]" in one_class
    tiny = _degenerate_messages(lambda: VectorScaling().fit(P[:2], [0, 1]))
    assert "6 parameters fitted on n = 2 samples" in tiny
    ms = _degenerate_messages(lambda: MatrixScaling().fit(P[:5], [0, 1, 2, 0, 1]))
    assert "12 parameters fitted on n = 5" in ms
    # separable data: every output one-hot
    separable = _degenerate_messages(
        lambda: TemperatureScaling(inputs="logits").fit(Z * 10, Z.argmax(axis=1)))
    assert "one-hot" in separable
    for make in (lambda: HistogramBinning(n_bins=5), IsotonicCalibration,
                 lambda: DirichletCalibration(reg_lambda=1.0, reg_mu=1.0)):
        assert "never occur in y" in _degenerate_messages(
            lambda: make().fit(P, np.where(y == 2, 0, y)))
    # a healthy fit warns about nothing
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for model in (TemperatureScaling(inputs="logits"), VectorScaling(inputs="logits"),
                      MatrixScaling(inputs="logits"), DirichletCalibration(),
                      HistogramBinning(), MeanReplacement()):
            model.fit(Z if model.inputs == "logits" else P, y)
    doc = " ".join(calnotes.recalibrate.__doc__.split())      # each case is documented
    for case in ("never occur in ``y``", "number of parameters that no penalty constrains",
                 "search bound", "one-hot"):
        assert case in doc


def test_logits_mode_on_probabilities_warns():
    P, y, Z = _multiclass(200, 3, 8)
    with pytest.warns(_warning("InputKindWarning"), match="looks like probabilities"):
        TemperatureScaling(inputs="logits").fit(P, y)
    with pytest.warns(_warning("InputKindWarning")):
        AccuracyPreservingTransform(inputs="logits").fit(P, y)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        TemperatureScaling(inputs="logits").fit(Z, y)     # real logits: no warning


# ============================================================ histogram binning's bin count

def test_histogram_binning_bin_count_is_bounded():
    with pytest.raises(ValueError, match=r"n_bins: 1000000000000 bins is above the limit"):
        HistogramBinning(n_bins=10 ** 12)
    P, y, _ = _multiclass(50, 3, 9)
    with pytest.raises(ValueError, match=r"n_bins: 4000000 bins x 3 classes .* use at most"
                                         r" 3333333 bins"):
        HistogramBinning(n_bins=4_000_000).fit(P, y)
    # more bins than samples stays allowed (bins are left empty)
    assert HistogramBinning(n_bins=500).fit(P, y).bin_counts_.sum() == 150


# ================================================================= scikit-learn conventions

def test_sklearn_clone_params_predict_proba_and_named_lengths():
    from sklearn.base import clone

    P, y, Z = _multiclass(300, 3, 10)
    models = [TemperatureScaling(inputs="logits"), VectorScaling(), MatrixScaling(reg=0.1),
              DirichletCalibration(reg_lambda=0.5, reg_mu=0.2), HistogramBinning(n_bins=7),
              IsotonicCalibration(), MeanReplacement(),
              AccuracyPreservingTransform(kind="conditional")]
    for model in models:
        copy = clone(model)
        assert type(copy) is type(model) and copy is not model
        assert copy.get_params() == model.get_params()
        X = Z if model.inputs == "logits" else P
        fitted = copy.fit(X, y)
        np.testing.assert_array_equal(fitted.predict_proba(X), fitted.transform(X))
    hb = HistogramBinning().fit(P, y)
    hb.set_params(n_bins=4)
    assert hb.n_bins == 4
    with pytest.raises(RuntimeError, match="call fit"):   # refitting is needed
        hb.transform(P)
    with pytest.raises(ValueError, match="n_bins: expected a positive integer, got 0"):
        HistogramBinning().set_params(n_bins=0)
    with pytest.raises(ValueError, match=r"has no parameter\(s\) \['bins'\]"):
        HistogramBinning().set_params(bins=3)
    with pytest.raises(ValueError, match="y_test: has 199 labels but the predictions have 200"):
        compare_recalibrators(P[:100], y[:100], P[100:], y[101:])
    with pytest.raises(ValueError, match="y_cal: has 99 labels"):
        compare_recalibrators(P[:100], y[:99], P[100:], y[100:])


# ================================================================ logit width checked first

def test_width_checked_before_taking_logs():
    P, y, _ = _multiclass(300, 3, 11)
    X4 = np.column_stack([P, np.zeros(300)])            # an extra all-zero column
    for model in (VectorScaling(), MatrixScaling()):
        model.fit(P, y)
        with pytest.raises(ValueError, match="X: has 4 columns but .* was fitted on 3"
                                             " classes"):
            model.transform(X4)


# ============================================== calnotes run: parameter values, failed runs

def test_parameter_values_checked_before_running(tmp_path, monkeypatch, capsys):
    import papermill

    def never(*args, **kwargs):
        raise AssertionError("the chapter was executed")

    monkeypatch.setattr(papermill, "execute_notebook", never)
    out = tmp_path / "run_ps"
    assert cli.main(["run", "proper_scores", "-p", "n_classes", "abc", "--out", str(out)]) == 2
    assert "-p n_classes: expected an integer like the default 3, got 'abc'" in \
        capsys.readouterr().err
    assert not out.exists()
    for value, default, expected in ((10, [15, 20], [10]), (1, 0.5, 1.0), ([4, 5], (1, 2), (4, 5)),
                                     ("x", None, "x"), (True, False, True)):
        assert chapters.check_parameter("p", value, default) == expected
    for value, default in (("yes", True), (2.5, 3), (1, True), (["a"], [1, 2]),
                           ((1, 2, 3), (1, 2)), (5, "smoke")):
        with pytest.raises(ValueError, match="-p p: "):
            chapters.check_parameter("p", value, default)
    assert chapters.parse_value("5", default="smoke") == "5"   # a str default keeps the text


def test_failed_run_does_not_block_a_rerun(tmp_path, monkeypatch):
    import papermill

    calls = []

    def fake(notebook, output, parameters, **kwargs):
        calls.append(parameters)
        Path(output).write_text(EMPTY_NOTEBOOK)  # what papermill would leave
        if len(calls) == 1:
            raise papermill.PapermillExecutionError(cell_index=5, exec_count=6, source="",
                                                    ename="TypeError", evalue="bad value",
                                                    traceback=[])
        return None

    monkeypatch.setattr(papermill, "execute_notebook", fake)
    out = tmp_path / "run"
    with pytest.raises(RuntimeError, match=r"failed in cell 6: TypeError: bad value .*"
                                           r"benchmarks\.failed\.ipynb"):
        chapters.run_chapter("benchmarks", {}, out)
    assert (out / "benchmarks.failed.ipynb").exists()
    assert not (out / "benchmarks.ipynb").exists()
    assert chapters.run_chapter("benchmarks", {}, out) == out / "benchmarks.ipynb"  # no force
    assert (out / "benchmarks.ipynb").exists()
    assert sorted(p.name for p in out.iterdir()) == ["benchmarks.failed.ipynb",
                                                     "benchmarks.ipynb"]   # no hidden files


# ============================================================ calnotes run: path parameters

def test_only_path_parameters_are_made_absolute(tmp_path, monkeypatch):
    import papermill

    seen = {}

    def fake(notebook, output, parameters, **kwargs):
        seen.update(parameters)
        Path(output).write_text(EMPTY_NOTEBOOK)  # what papermill would leave

    monkeypatch.setattr(papermill, "execute_notebook", fake)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "smoke").write_text("a file that happens to share the value's name")
    (tmp_path / "a.npz").write_text("")
    (tmp_path / "b.npz").write_text("")
    root = Path(calnotes.__file__).resolve().parent.parent
    chapters.run_chapter("errata", {"size": "smoke"}, tmp_path / "o1", root=root)
    assert seen["size"] == "smoke"
    chapters.run_chapter("rankings", {"predictions": ["a.npz", "b.npz"]}, tmp_path / "o2",
                         root=root)
    assert seen["predictions"] == [str(tmp_path / "a.npz"), str(tmp_path / "b.npz")]
    chapters.run_chapter("evaluate", {"predictions": "a.npz", "report_dir": "rep"},
                         tmp_path / "o3", root=root)
    assert seen["predictions"] == str(tmp_path / "a.npz")
    assert seen["report_dir"] == str(tmp_path / "rep")       # an output folder: always


# ======================================================================= bin counts above n

def test_bin_counts_above_n_keep_equal_width_rows():
    p, y = _binary(6, 12)
    P = np.column_stack([1 - p, p])
    report = calnotes.evaluate(P, labels=y, n_bins=[4, 10])
    rows = _rows(report)
    assert abs(rows["ECE", "binary", 10]["value"] - _naive_width_ece(y, p, 10)) <= EXACT
    assert ("ECE", "confidence", 10) in rows and ("ECE", "classwise", 10) in rows
    assert not any(m == 10 and measure != "ECE" for (measure, _, m) in rows)
    assert ("l2-QECE", "confidence", 4) in rows
    assert any("skipped for m = [10] > n = 6" in note for note in report.notes)


def test_evaluate_logic_for_m_above_n(monkeypatch):
    """The plan of rows, independent of the measures: m > n gets ECE rows only (no
    equal-mass binning is ever planned for m = 7 > n = 5)."""
    from calnotes._engine.sorted_columns import SortedColumns

    calls = []
    original = SortedColumns.plan
    monkeypatch.setattr(SortedColumns, "plan",
                        lambda self, m, binning: calls.append((m, binning))
                        or original(self, m, binning))
    P, y, _ = _multiclass(5, 3, 13)
    report = calnotes.evaluate(P, labels=y, n_bins=[3, 7], utility=False)
    assert sorted(set(calls)) == [(3, "mass"), (3, "width"), (7, "width")]
    assert [r["n_bins"] for r in report.rows].count(7) == 2       # ECE x 2 aggregations
    assert any("[7]" in note for note in report.notes)


# ========================================================= arguments checked before reading

def test_n_bins_and_predictions_are_checked_first(tmp_path):
    P, y, _ = _multiclass(40, 3, 14)
    for bad, exc, match in (
            (10.0, TypeError, r"n_bins \(command line: --bins\): .*got 10\.0 \(float\)"),
            (True, TypeError, r"n_bins \(command line: --bins\): .*got True"),
            ("15", TypeError, r"n_bins \(command line: --bins\): .*the string '15'"),
            ([], ValueError, r"n_bins \(command line: --bins\): give at least one bin count"),
            ([5, 2.5], TypeError, r"n_bins \(command line: --bins\): bin count 2\.5")):
        with pytest.raises(exc, match=match):
            calnotes.evaluate(P, labels=y, n_bins=bad)
        with pytest.raises(exc, match=match):   # before the file is looked at
            calnotes.evaluate(tmp_path / "missing.npz", n_bins=bad)
    for good in (np.array(5), np.int64(5), 5):
        assert {r["n_bins"] for r in calnotes.evaluate(P, labels=y, n_bins=good).rows
                if r["n_bins"] is not None} == {5}
    for bad, got in ((None, "NoneType"), (5, "int 5"), ({"a": 1}, "dict")):
        with pytest.raises(TypeError, match=r"predictions: expected a file path, Predictions, an"
                                            rf" \(n, k\) array or a fitted classifier, got {got}"):
            calnotes.evaluate(bad, labels=y)


def test_npy_file_with_a_label_array(tmp_path):
    P, y, _ = _multiclass(60, 3, 15)
    np.save(tmp_path / "probs.npy", P)
    report = calnotes.evaluate(tmp_path / "probs.npy", labels=y, n_bins=[5])
    assert report.n_samples == 60 and report.accuracy == np.mean(P.argmax(axis=1) == y)


# =========================================================== --out checked before computing

def test_out_checked_before_computing(tmp_path, monkeypatch):
    path, P, y = _npz(tmp_path)

    def never(*args, **kwargs):
        raise AssertionError("loaded before out was checked")

    monkeypatch.setattr(inputs, "load_predictions", never)
    out = tmp_path / "rep"
    out.mkdir()
    (out / "report.json").write_text("keep me")
    with pytest.raises(FileExistsError, match=r"report\.json exists; pass force=True \(command"
                                              r" line: --force\) to overwrite it"):
        calnotes.evaluate(path, out=out)
    assert (out / "report.json").read_text() == "keep me"
    afile = tmp_path / "afile.txt"
    afile.write_text("x")
    with pytest.raises(NotADirectoryError, match="afile.txt exists and is not a folder"):
        calnotes.evaluate(path, out=afile)
    with pytest.raises(NotADirectoryError, match="afile.txt is a file"):
        calnotes.evaluate(path, out=afile / "sub")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        if os.access(locked, os.W_OK):          # root ignores the mode bits: simulate them
            real = os.access
            monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == locked
                                else real(p, mode))
        with pytest.raises(PermissionError, match="out .*: cannot write in .*locked"):
            calnotes.evaluate(path, out=locked / "rep")
    finally:
        locked.chmod(0o755)


def test_table_printed_before_a_failed_write(tmp_path, monkeypatch, capsys):
    path, P, y = _npz(tmp_path)

    def disk_full(self, out, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(evaluation.EvaluationReport, "write", disk_full)
    assert cli.main(["evaluate", str(path), "--bins", "5", "--out", str(tmp_path / "r")]) == 2
    captured = capsys.readouterr()
    assert "l2-QECE" in captured.out and "accuracy" in captured.out
    assert "No space left on device" in captured.err


# ============================================================= the table and the messages

def test_ratio_is_inf_or_dash_never_nan():
    y = np.array([0, 1, 2, 0, 1, 2, 0, 1])
    P = np.eye(3)[[0, 1, 2, 1, 1, 2, 0, 0]]            # one-hot: every reference is 0
    table = calnotes.evaluate(P, labels=y, n_bins=[2]).format_table()
    lines = [line for line in table.splitlines() if line.startswith(("ECE", "l1-", "l2-"))]
    assert lines and all(line.split()[5] in ("inf", "-") for line in lines)   # the ratio column
    assert any(line.split()[5] == "inf" for line in lines)
    skipped = calnotes.evaluate(P, labels=y, n_bins=[2], references=False).format_table()
    rows = [line for line in skipped.splitlines() if line.startswith(("ECE", "l1-", "l2-"))]
    assert all(line.split()[5] == "-" for line in rows)
    assert "nan" not in table and "nan" not in skipped


def test_messages_name_keyword_and_flag(tmp_path, capsys):
    path, P, y = _npz(tmp_path)
    out = tmp_path / "rep"
    out.mkdir()
    for name in ("report.json", "report.csv"):
        (out / name).write_text("x")
    with pytest.raises(FileExistsError, match=r"report\.csv exist; pass force=True \(command"
                                              r" line: --force\) to overwrite them"):
        calnotes.evaluate(path, out=out)
    assert cli.main(["evaluate", str(path), "--bins", "0"]) == 2
    assert "--bins" in capsys.readouterr().err


def _assert_m_column_aligned(table: str, counts: set):
    lines = table.splitlines()
    header = next(line for line in lines if line.startswith("measure"))
    end = header.index(" m ") + 2                     # the column is right-aligned at 'm'
    rows = [line for line in lines if line.startswith(("ECE ", "l1-QECE ", "l2-QECE "))]
    assert {line.split()[2] for line in rows} == counts
    for line in rows:
        m = line.split()[2]
        assert line[end - len(m):end] == m and line[end] == " ", (header, line)
        assert line[:end - len(m)].endswith(" ")


def test_table_aligned_for_large_bin_counts():
    row = {"measure": "ECE", "aggregation": "confidence", "binning": "width", "value": 0.1,
           "calibrated_reference": 0.05, "reference_method": "exact"}
    report = evaluation.EvaluationReport(
        source="x", n_samples=3_000_000, n_classes=3, accuracy=0.5, mean_confidence=0.5,
        scores={"log": 1.0, "brier": 0.5, "spherical": 0.3, "zero_one": 0.5},
        rows=[dict(row, n_bins=15), dict(row, n_bins=2_000_000)])
    _assert_m_column_aligned(report.format_table(), {"15", "2000000"})
    P, y, _ = _multiclass(50, 3, 16)
    table = calnotes.evaluate(P, labels=y, n_bins=[5, 1_000_000]).format_table()
    _assert_m_column_aligned(table, {"5", "1000000"})


# ================================================== calnotes run: --out and --book errors

def test_run_out_errors_name_out(tmp_path, capsys):
    afile = tmp_path / "afile.txt"
    afile.write_text("keep")
    assert cli.main(["run", "benchmarks", "--out", str(afile)]) == 2
    assert f"--out: {afile} exists and is not a folder" in capsys.readouterr().err
    assert afile.read_text() == "keep"
    assert cli.main(["run", "benchmarks", "--out", str(afile / "sub")]) == 2
    err = capsys.readouterr().err
    assert "--out:" in err and "is a file" in err and ".input" not in err


def test_unwritable_run_out_is_named(tmp_path, capsys, monkeypatch):
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o555)
    try:
        if os.access(locked, os.W_OK):          # root ignores the mode bits: simulate them
            real = os.access
            monkeypatch.setattr(os, "access", lambda p, mode: False if Path(p) == locked
                                else real(p, mode))
        assert cli.main(["run", "benchmarks", "--out", str(locked / "o")]) == 2
    finally:
        locked.chmod(0o755)
    err = capsys.readouterr().err
    assert f"--out: cannot write in {locked}" in err and ".input" not in err


def test_missing_book_folder_is_an_error(tmp_path, capsys):
    assert cli.main(["--book", str(tmp_path / "nonexistent"), "chapters"]) == 2
    assert "--book:" in capsys.readouterr().err
    assert cli.main(["--book", str(tmp_path), "chapters"]) == 2
    assert "holds no _toc.yml" in capsys.readouterr().err


# ====================================================== --bins before the predictions file

def test_bins_before_the_predictions_file(tmp_path, capsys):
    path, P, y = _npz(tmp_path)
    for argv in (["evaluate", "--bins", "15", "20", str(path), "--json"],
                 ["evaluate", "--bins", "15,20", str(path), "--json"],
                 ["evaluate", str(path), "--bins", "15", "20", "--json"]):
        assert cli.main(argv) == 0
        data = json.loads(capsys.readouterr().out)
        assert sorted({r["n_bins"] for r in data["measures"] if r["n_bins"] is not None}) == [15, 20]
    with pytest.raises(SystemExit) as exc:
        cli.main(["evaluate", "--bins", "15", "x", str(path)])
    assert exc.value.code == 2
    assert "'x' is not a whole number" in capsys.readouterr().err


# ================================================= the Evaluate chapter's temporary folder

def test_evaluate_chapter_leaves_no_temporary_folder(tmp_path, monkeypatch):
    """The run also checks, in the chapter, that a bin count above n is kept, with a note."""
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))   # the kernel's temporary folder
    (tmp_path / "tmp").mkdir()
    p, y = _binary(120, 17)
    path = save_predictions(tmp_path / "mine.npz", y, probs=p)
    target = chapters.run_chapter("evaluate", {"predictions": str(path), "bins": [10, 500],
                                               "report_dir": str(tmp_path / "report")},
                                  tmp_path / "run")
    leftovers = [p.name for p in (tmp_path / "tmp").iterdir() if "calnotes" in p.name]
    assert leftovers == []
    assert sorted(p.name for p in (tmp_path / "report").iterdir()) == sorted(
        evaluation.REPORT_FILES)
    text = target.read_text()
    assert "skipped for m = [500] > n = 120" in text
    assert ">binary</td>" in text            # the chapter's report table has the binary rows


# ========================================================================== no TCP warning

def test_run_prints_no_tcp_warning(tmp_path, capfd):
    assert cli.main(["run", "benchmarks", "--out", str(tmp_path / "o")]) == 0
    captured = capfd.readouterr()
    assert "without encryption" not in captured.err + captured.out


# ============================================================================= broken pipe

def test_broken_pipe_exits_quietly():
    with subprocess.Popen([sys.executable, "-m", "calnotes.cli", "chapters"],
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE) as proc:
        proc.stdout.close()                      # the reader is gone before anything is written
        err = proc.stderr.read()
        assert proc.wait(timeout=120) == 0
    assert err == b""


# ============================================================= --version, JSON, provenance

def test_version_json_and_provenance(tmp_path, capsys):
    with pytest.raises(SystemExit) as exc:
        cli.main(["--version"])
    assert exc.value.code == 0
    assert capsys.readouterr().out.strip() == f"calnotes {calnotes.__version__}"
    path, P, y = _npz(tmp_path)
    assert cli.main(["evaluate", str(path), "--bins", "5", "--json",
                     "--out", str(tmp_path / "r")]) == 0
    data = json.loads(capsys.readouterr().out)        # stdout is JSON only
    assert data["calnotes_version"] == calnotes.__version__
    assert data["input_sha256"] == hashlib.sha256(path.read_bytes()).hexdigest()
    written = json.loads((tmp_path / "r" / "report.json").read_text())
    assert written["input_sha256"] == data["input_sha256"]


# ======================================================================= the binary figure

def test_binary_figure_has_a_p1_panel_and_explains_the_bars():
    p, y = _binary(200, 18)
    report = calnotes.evaluate(p, labels=y, n_bins=[10])
    fig = report._figure()
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["confidence, 10 equal-width bins", "confidence, 10 equal-mass bins",
                      "P(y = 1), 10 equal-width bins", "confidence, CORP (isotonic)"]
    boxes = [ax.get_legend() for ax in fig.axes if ax.get_legend()] + list(fig.legends)
    legends = [t.get_text() for box in boxes for t in box.get_texts()]
    assert sum("equal-width bin" in text for text in legends) == 1   # one legend, every panel
    P3, y3, _ = _multiclass(100, 3, 19)
    fig3 = calnotes.evaluate(P3, labels=y3, n_bins=[10])._figure()
    assert len([ax for ax in fig3.axes if ax.get_title()]) == 3     # 2 binned + CORP


# ============================================================================ loader options

def test_loader_options_are_passed_through_only_when_given(tmp_path, monkeypatch, capsys):
    path, P, y = _npz(tmp_path)
    seen = []
    real = inputs.load_predictions

    def spy(p, **kwargs):
        seen.append(kwargs)
        pred = real(p, labels=kwargs.get("labels"), kind=kwargs.get("kind"))
        object.__setattr__(pred, "notes", ("column 'id' ignored",))
        return pred

    monkeypatch.setattr(inputs, "load_predictions", spy)
    assert cli.main(["evaluate", str(path), "--bins", "5"]) == 0
    assert set(seen[-1]) == {"labels", "kind", "allow_pickle", "split"}
    assert cli.main(["evaluate", str(path), "--bins", "5", "--label-column", "class",
                     "--prob-columns", "a,b", "--ignore-columns", "id", "--delimiter", "\\t",
                     "--classes", "cat,dog", "--renormalize", "0.02", "--force-logits"]) == 0
    options = seen[-1]
    assert options["label_column"] == "class" and options["prob_columns"] == ["a", "b"]
    assert options["ignore_columns"] == ["id"] and options["delimiter"] == "\t"
    assert options["classes"] == ["cat", "dog"] and options["renormalize"] == 0.02
    assert options["force_logits"] is True and "header" not in options
    assert "note: column 'id' ignored" in capsys.readouterr().out
    assert cli.main(["evaluate", "--renormalize", str(path), "--no-header",
                     "--label-column", "0", "--bins", "5"]) == 0
    assert seen[-1]["renormalize"] is True and seen[-1]["header"] is False
    assert seen[-1]["label_column"] == 0
    report = calnotes.evaluate(calnotes.as_predictions(path, delimiter=";"), n_bins=5)
    assert seen[-1]["delimiter"] == ";" and "column 'id' ignored" in report.notes
    with pytest.raises(ValueError, match="delimiter: describes a predictions file"):
        calnotes.evaluate(calnotes.as_predictions(P, y, delimiter=";"))
