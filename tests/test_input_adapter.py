"""One door for every input form, and a report that says how long each part took.

:func:`calnotes.as_predictions` turns every input form into validated ``Predictions``;
:func:`calnotes.evaluate` computes.  The same predictions as NumPy arrays, a torch-like tensor
(``__array__``), a DLPack-only array, pandas and polars DataFrames, a fitted scikit-learn
classifier with ``X``, an ``.npz`` file and a CSV file give identical reports (every key of
``to_dict()`` except where the input came from and the timings).  Torch is not installed here:
the stand-ins of ``test_input_objects`` implement its protocols; polars runs for real where it
is importable, its stand-in otherwise.
"""

from __future__ import annotations

import csv
import inspect
import json
import time
import types

import numpy as np
import pandas as pd
import pytest

import calnotes as cn
from calnotes import cli, evaluation
from calnotes.evaluation.inputs import LOADER_OPTIONS, DeferredInput
from test_input_objects import ArrayTensor, DLPackTensor, PolarsFrame, PolarsSeries

#: Small but complete: every part of the report runs (p-values, intervals, SmoothECE, utility).
OPTIONS = dict(n_bins=[5, 10], draws=19, bootstrap=19, utility_samples=20, progress=False)
#: Keys that say where the input came from (the rest is computed and must agree).
PROVENANCE = ("source", "input_sha256", "labels_sha256", "class_columns", "timings")


@pytest.fixture(scope="module")
def fitted():
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(20)
    idx = rng.integers(0, 3, 600)
    X = rng.normal(size=(600, 2)) + idx[:, None] * 0.7
    model = LogisticRegression().fit(X[:300], idx[:300])
    X_test, y_test = X[300:], idx[300:]
    return model, X_test, y_test, model.predict_proba(X_test)


@pytest.fixture(scope="module")
def reference(fitted):
    _, _, y, P = fitted
    return cn.evaluate(P, labels=y, **OPTIONS).to_dict()


def _computed(report) -> dict:
    data = report.to_dict()
    return {key: value for key, value in data.items() if key not in PROVENANCE}


def _polars_frame(columns: dict):
    try:
        import polars as pl
    except ImportError:
        return PolarsFrame(columns)
    return pl.DataFrame(columns)


def _write_csv(path, y, P) -> None:
    """Full precision (repr round-trips a float exactly), so the file holds the same numbers."""
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["id", "label", "a", "b", "c"])
        for i, (label, row) in enumerate(zip(y, P)):
            writer.writerow([f"s{i}", int(label)] + [repr(float(v)) for v in row])


FORMS = {
    "torch-like": lambda model, X, y, P, tmp: cn.evaluate(ArrayTensor(P),
                                                          labels=ArrayTensor(y), **OPTIONS),
    "dlpack": lambda model, X, y, P, tmp: cn.evaluate(DLPackTensor(P), labels=DLPackTensor(y),
                                                      **OPTIONS),
    "pandas": lambda model, X, y, P, tmp: cn.evaluate(
        pd.DataFrame({"a": P[:, 0], "b": P[:, 1], "c": P[:, 2]}), labels=pd.Series(y),
        **OPTIONS),
    "pandas-label-column": lambda model, X, y, P, tmp: cn.evaluate(cn.as_predictions(
        pd.DataFrame({"y": y, "a": P[:, 0], "b": P[:, 1], "c": P[:, 2]}), label_column="y"),
        **OPTIONS),
    "polars": lambda model, X, y, P, tmp: cn.evaluate(
        _polars_frame({"label": y, "a": P[:, 0], "b": P[:, 1], "c": P[:, 2]}), **OPTIONS),
    "scikit-learn": lambda model, X, y, P, tmp: cn.evaluate(model, X=X, labels=y, **OPTIONS),
    "npz": lambda model, X, y, P, tmp: cn.evaluate(
        cn.save_predictions(tmp / "p.npz", y, probs=P), **OPTIONS),
    "csv": lambda model, X, y, P, tmp: (_write_csv(tmp / "p.csv", y, P),
                                        cn.evaluate(tmp / "p.csv", **OPTIONS))[1],
    "as_predictions": lambda model, X, y, P, tmp: cn.evaluate(cn.as_predictions(P, y),
                                                              **OPTIONS),
    "deferred": lambda model, X, y, P, tmp: cn.evaluate(DeferredInput(ArrayTensor(P), y),
                                                        **OPTIONS),
}


@pytest.mark.parametrize("form", list(FORMS))
def test_every_form_gives_the_same_report(form, fitted, reference, tmp_path):
    model, X, y, P = fitted
    report = FORMS[form](model, X, y, P, tmp_path)
    expected = {key: value for key, value in reference.items() if key not in PROVENANCE}
    if form == "csv":                      # the CSV rules skip the id column, and say so
        expected["notes"] = ["column 'id' skipped: an identifier, not a class"] + \
            expected["notes"]
    assert _computed(report) == expected
    # where the input came from is reported, not computed
    data = report.to_dict()
    if form in ("npz", "csv"):
        assert data["input_sha256"] is not None and len(data["input_sha256"]) == 64
    else:
        assert data["input_sha256"] is None
    if form in ("pandas", "pandas-label-column", "polars", "csv"):
        assert data["class_columns"] == ["a", "b", "c"]
    if form == "scikit-learn":
        assert data["class_columns"] == ["0", "1", "2"]


def test_the_comparison_sees_a_changed_prediction(fitted, reference):
    """The check above can fail: one probability moved by 1e-9 changes the report."""
    _, _, y, P = fitted
    Q = P.copy()
    Q[0] += [1e-9, -1e-9, 0.0]
    expected = {key: value for key, value in reference.items() if key not in PROVENANCE}
    assert _computed(cn.evaluate(Q, labels=y, **OPTIONS)) != expected


# ------------------------------------------------------------------------------ the adapter

def test_predictions_are_validated_once_and_passed_through(fitted):
    _, _, y, P = fitted
    pred = cn.as_predictions(P, y)
    assert cn.as_predictions(pred) is pred
    with pytest.raises(ValueError, match=r"^labels: a Predictions object is already loaded;"
                                         " pass loader options to calnotes.as_predictions"):
        cn.as_predictions(pred, y)
    with pytest.raises(ValueError, match=r"^classes: a Predictions object is already loaded"):
        cn.as_predictions(pred, classes=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"^kind: a DeferredInput holds its own labels"):
        cn.as_predictions(DeferredInput(P, y), kind="logits")


def test_a_loaded_file_carries_its_hash(tmp_path, fitted):
    import hashlib

    _, _, y, P = fitted
    path = cn.save_predictions(tmp_path / "p.npz", y, probs=P)
    pred = cn.as_predictions(path)
    assert pred.input_sha256 == hashlib.sha256(path.read_bytes()).hexdigest()
    assert pred.labels_sha256 is None
    assert cn.evaluate(pred, **OPTIONS).input_sha256 == pred.input_sha256


def test_logits_through_the_adapter(fitted):
    _, _, y, P = fitted
    Z = np.log(P)
    pred = cn.as_predictions(Z, y, kind="logits")
    np.testing.assert_allclose(pred.probs, P, rtol=1e-12, atol=0)
    assert pred.logits is not None


def test_out_of_core_through_the_adapter(fitted):
    pytest.importorskip("dask")
    _, _, y, P = fitted
    chunked = cn.as_predictions(P, y, out_of_core=True)
    assert isinstance(chunked, cn.ChunkedPredictions) and chunked.source == "array"
    assert cn.as_predictions(chunked) is chunked
    options = dict(n_bins=[5], significance=False, smooth_ece=False, utility=False)
    via_adapter = cn.evaluate(chunked, **options)
    direct = cn.evaluate(P, labels=y, out_of_core=True, **options)
    assert via_adapter.rows == direct.rows and via_adapter.scores == direct.scores
    assert list(via_adapter.timings) == ["loading", "binned_rows", "total"]


# ------------------------------------------------------------------------------ moved options

@pytest.mark.parametrize("option", list(LOADER_OPTIONS))
def test_loader_options_moved_with_a_clear_error(option, fitted):
    _, _, y, P = fitted
    value = {"kind": "logits", "allow_pickle": True, "split": "val", "header": False,
             "renormalize": True, "force_logits": True}.get(option, ["a", "b", "c"])
    with pytest.raises(TypeError) as info:
        cn.evaluate(P, labels=y, **{option: value})
    message = str(info.value)
    assert message.startswith(f"evaluate() does not take {option}: ")
    assert "moved to calnotes.as_predictions" in message
    assert f"calnotes.as_predictions(predictions, labels, {option}={value!r})" in message


def test_evaluate_signature_is_about_computing():
    names = list(inspect.signature(cn.evaluate).parameters)
    assert not set(names) & set(LOADER_OPTIONS)
    assert names[:3] == ["predictions", "labels", "X"]
    assert set(inspect.signature(cn.as_predictions).parameters) >= set(LOADER_OPTIONS)


def test_cli_keeps_its_loader_flags(tmp_path, fitted, capsys):
    _, _, y, P = fitted
    path = tmp_path / "p.csv"
    with open(path, "w", newline="") as fh:
        writer = csv.writer(fh, delimiter=";")
        writer.writerow(["truth", "a", "b", "c"])
        for label, row in zip(y, P):
            writer.writerow(["abc"[label]] + [repr(float(v)) for v in row])
    argv = ["evaluate", str(path), "--label-column", "truth", "--delimiter", ";", "--classes",
            "a,b,c", "--bins", "5", "--no-utility", "--no-significance", "--json"]
    assert cli.main(argv) == 0
    data = json.loads(capsys.readouterr().out)
    expected = cn.evaluate(P, labels=y, n_bins=[5], utility=False, significance=False)
    assert data["measures"] == expected.to_dict()["measures"]
    assert data["label_mapping"] == {"a": 0, "b": 1, "c": 2}


def test_cli_checks_its_options_before_reading_the_file(tmp_path, capsys):
    assert cli.main(["evaluate", str(tmp_path / "missing.csv"), "--bins", "0"]) == 2
    err = capsys.readouterr().err
    assert "--bins" in err and "missing.csv" not in err


# ------------------------------------------------------------------------------ timings

def test_timings_present_and_within_the_wall_time(fitted, tmp_path):
    _, _, y, P = fitted
    started = time.perf_counter()
    report = cn.evaluate(P, labels=y, out=tmp_path / "r", **OPTIONS)
    wall = time.perf_counter() - started
    t = report.timings
    assert list(t) == ["loading", "scores", "binned_rows", "references", "p_values", "intervals",
                       "smooth_ece", "utility", "writing", "total"]
    assert set(t) <= set(evaluation.TIMED_PARTS)
    assert all(seconds >= 0 for seconds in t.values())
    parts = sum(seconds for name, seconds in t.items() if name != "total")
    assert parts <= t["total"] <= wall
    # report.json was written before the writing was timed: the computation's timings
    written = json.loads((tmp_path / "r" / "report.json").read_text())["timings"]
    assert "writing" not in written and written["total"] <= t["total"]
    assert report.to_dict()["timings"]["writing"] == round(t["writing"], 6)


def test_parts_never_overlap(monkeypatch):
    """A part inside another (binned_rows timing its references) pauses the outer clock: on a
    clock that ticks 1 s per reading, the parts add up to the total exactly."""
    ticks = iter(range(100))
    clock = types.SimpleNamespace(perf_counter=lambda: next(ticks))
    monkeypatch.setattr(evaluation.progress, "time", clock)
    work = evaluation.progress._Work()                      # reads 0
    with work.part("binned_rows"):                 # 1
        with work.part("references"):              # 2 .. 3
            pass
        with work.part("references"):              # 4 .. 5
            pass
    # binned_rows ends at 6: 1..2, 3..4 and 5..6 are its own (3 s), 2..3 and 4..5 not
    with work.part("utility"):                     # 7 .. 8
        pass
    timings = work.timings()                       # 9
    assert timings == {"binned_rows": 3, "references": 2, "utility": 1, "total": 9}
    assert sum(v for k, v in timings.items() if k != "total") <= timings["total"]


def test_cli_prints_the_timings(tmp_path, fitted, capsys):
    _, _, y, P = fitted
    path = cn.save_predictions(tmp_path / "p.npz", y, probs=P)
    argv = ["evaluate", str(path), "--bins", "5", "--no-utility", "--draws", "19",
            "--bootstrap", "19"]
    assert cli.main(argv + ["--timings"]) == 0
    out = capsys.readouterr().out
    lines = out.split("timings (seconds; the parts do not overlap)\n")[1].splitlines()
    assert [line.split()[0] for line in lines] == ["loading", "scores", "binned_rows",
                                                   "references", "p_values", "intervals",
                                                   "smooth_ece", "total"]
    assert cli.main(argv) == 0
    assert "timings (seconds" not in capsys.readouterr().out
    assert cli.main(argv + ["--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)["timings"]) >= {"loading", "total"}


# ------------------------------------------------------------------------------ progress

@pytest.mark.parametrize("bad", ["yes", 1, 0, 2.0, [True]])
def test_progress_is_checked(bad, fitted):
    _, _, y, P = fitted
    with pytest.raises(TypeError, match=r"^progress \(command line: --progress / --no-progress"
                                        r"\): expected True, False or None"):
        cn.evaluate(P, labels=y, progress=bad)


def test_the_bar_covers_the_whole_computation(monkeypatch, fitted, tmp_path, capsys):
    """Every part advances the bar, and it ends exactly at its total."""
    _, _, y, P = fitted
    seen = {}

    class Spy(evaluation.progress._Work):
        def show(self, show, units):
            seen["show"], seen["units"] = show, dict(units)
            seen["done"] = 0
            super().show(show, units)

        def update(self, units=1):
            seen["done"] += units
            super().update(units)

    monkeypatch.setattr(evaluation.entry, "_Work", Spy)
    cn.evaluate(P, labels=y, out=tmp_path / "r", **{**OPTIONS, "progress": True})
    assert seen["show"] is True
    assert {name for name, units in seen["units"].items() if units} == {
        "scores", "binned_rows", "smooth_ece", "utility", "writing"}
    assert seen["done"] == sum(seen["units"].values())
    assert "calnotes evaluate" in capsys.readouterr().err
    cn.evaluate(P, labels=y, **{**OPTIONS, "progress": np.bool_(False)})
    assert seen["show"] is False and capsys.readouterr().err == ""


def test_cli_progress_flags(tmp_path, fitted, capsys):
    _, _, y, P = fitted
    path = cn.save_predictions(tmp_path / "p.npz", y, probs=P)
    argv = ["evaluate", str(path), "--bins", "5", "--no-utility", "--no-significance"]
    assert cli.main(argv + ["--progress"]) == 0
    assert "calnotes evaluate" in capsys.readouterr().err
    assert cli.main(argv + ["--no-progress"]) == 0
    assert capsys.readouterr().err == ""
