"""Input a practitioner actually has: label mappings (names, sorted order,
numbered columns) and their place in the report, rounded rows refused naming the worst row,
``unbinned_ece(p=...)``, equal-width bins beyond ``n``, and the progress bar of ``evaluate``.

Every new path has a test of its malformed input; reference values are computed here from
the arrays written to the files.
"""

from __future__ import annotations

import csv
import io
import json
import math

import numpy as np
import pytest

import calnotes as cn
from calnotes import cli, evaluation
from calnotes.data.loaders import Predictions, load_predictions


def _csv(path, header, rows):
    path.write_text("\n".join([",".join(header)] + [",".join(map(str, r)) for r in rows])
                    + "\n")
    return path


def _three_class(n=30, seed=0):
    rng = np.random.default_rng(seed)
    P = np.round(rng.dirichlet(np.ones(3) * 2, size=n), 6)
    P[:, 2] = 1.0 - P[:, 0] - P[:, 1]
    y = rng.integers(0, 3, size=n)
    y[:3] = [0, 1, 2]                      # every class occurs
    return y, P


def _rows(labels, P):
    return [[label] + [f"{v:.6f}" for v in row] for label, row in zip(labels, P)]


# ------------------------------------------------------------------ string labels, sorted order

def test_string_labels_that_are_not_column_names_are_mapped_in_sorted_order(tmp_path):
    # Sorted order is kept for two classes (scikit-learn's classes_); with more
    # than two classes the guess is refused unless classes= is given
    y, P = _three_class()
    yb, Pb = y % 2, np.column_stack([P[:, 0] + P[:, 2], P[:, 1]])
    text = np.array(["zebra", "ant"])[yb]               # sorted: ant, zebra
    path = _csv(tmp_path / "sk2.csv", ["label", "p0", "p1"], _rows(text, Pb))
    pred = load_predictions(path)
    order = {"ant": 0, "zebra": 1}
    assert pred.labels.tolist() == [order[t] for t in text]
    assert pred.label_mapping == order
    note = next(n for n in pred.notes if "sorted order" in n)
    assert "classes_" in note and "'ant' -> column 'p0'" in note and "--classes" in note
    names = np.array(["zebra", "ant", "moth"])
    path = _csv(tmp_path / "sk.csv", ["label", "p0", "p1", "p2"], _rows(names[y], P))
    with pytest.raises(ValueError, match="does not guess.*classes=.*--classes"):
        load_predictions(path)
    pred = load_predictions(path, classes=["ant", "moth", "zebra"])
    assert pred.label_mapping == {"ant": 0, "moth": 1, "zebra": 2}


def test_string_labels_follow_prefixed_column_names_not_sorted_order(tmp_path):
    y, P = _three_class()
    # columns in a non-sorted order: names must win over sorted order
    cols = ["prob_dog", "prob_cat", "prob_bird"]
    text = np.array(["dog", "cat", "bird"])[y]
    pred = load_predictions(_csv(tmp_path / "named.csv", ["label"] + cols, _rows(text, P)))
    assert pred.labels.tolist() == y.tolist()
    assert pred.label_mapping == {"dog": 0, "cat": 1, "bird": 2}
    # a shared suffix and a different case work too
    cols = ["Dog_score", "Cat_score", "Bird_score"]
    pred = load_predictions(_csv(tmp_path / "suffix.csv", ["label"] + cols, _rows(text, P)))
    assert pred.labels.tolist() == y.tolist()


def test_single_probability_column_is_the_class_it_is_named_after(tmp_path):
    rows = [["spam", 0.9], ["ham", 0.2], ["spam", 0.7], ["ham", 0.4]]
    pred = load_predictions(_csv(tmp_path / "named.csv", ["label", "p_ham"], rows))
    assert pred.labels.tolist() == [0, 1, 0, 1]           # the column is P(ham): ham is 1
    assert pred.label_mapping == {"spam": 0, "ham": 1}
    np.testing.assert_array_equal(pred.probs[:, 1], [0.9, 0.2, 0.7, 0.4])
    pred = load_predictions(_csv(tmp_path / "score.csv", ["label", "score"], rows))
    assert pred.labels.tolist() == [1, 0, 1, 0]           # sorted: ham 0, spam 1
    assert any("P(y = 'spam')" in n and "classes_[1]" in n for n in pred.notes)


@pytest.mark.parametrize("header, labels, message", [
    (["label", "p0", "p1", "p2"], ["a", "b", "a", "b"],
     r"labels: 2 distinct labels \(\['a', 'b'\]\), fewer than the 3 classes.*cannot tell which"
     r" class has no sample.*--classes"),
    (["label", "p0", "p1", "p2"], ["a", "b", "c", "d"],
     r"labels: 4 distinct labels.*more than the 3 classes.*--classes"),
    (["label", "cat", "dog", "bird"], ["cat", "dog", "fish", "bird"],
     r"labels: label 'fish' at line 4, column 'label' is not the name of a class column, though"
     r" other labels are.*--classes"),
    (["label", "spam"], ["spam", "spam", "spam", "spam"],
     r"labels: every label is 'spam', the class of column 'spam'.*--classes"),
    (["label", "spam"], ["spam", "ham", "eggs", "spam"],
     r"labels: 3 distinct labels .* for one probability column 'spam'.*--classes"),
    (["label", "score"], ["yes", "yes", "yes", "yes"],
     r"labels: 1 distinct label \(\['yes'\]\), fewer than the 2 classes"),
])
def test_string_labels_that_cannot_be_mapped_are_refused(tmp_path, header, labels, message):
    k = len(header) - 1
    P = np.full((4, k), 1.0 / k) if k > 1 else np.full((4, 1), 0.5)
    path = _csv(tmp_path / "bad.csv", header, _rows(labels, P))
    with pytest.raises(ValueError, match=message):
        load_predictions(path)


def test_classes_overrides_the_sorted_order(tmp_path):
    y, P = _three_class()
    text = np.array(["zebra", "ant", "moth"])[y]
    path = _csv(tmp_path / "sk.csv", ["label", "p0", "p1", "p2"], _rows(text, P))
    pred = load_predictions(path, classes=["zebra", "ant", "moth"])
    assert pred.labels.tolist() == y.tolist()
    assert pred.label_mapping == {"zebra": 0, "ant": 1, "moth": 2}


# ------------------------------------------------------------------- numbered class columns

@pytest.mark.parametrize("cols", [["p1", "p2", "p3"], ["prob_1", "prob_2", "prob_3"],
                                  ["class_1", "class_2", "class_3"], ["1", "2", "3"]])
def test_labels_one_to_k_follow_columns_numbered_one_to_k(tmp_path, cols):
    y, P = _three_class()
    pred = load_predictions(_csv(tmp_path / "one.csv", ["label"] + cols, _rows(y + 1, P)))
    assert pred.labels.tolist() == y.tolist()
    np.testing.assert_allclose(pred.probs, P, atol=1e-6)
    assert pred.label_mapping == {"1": 0, "2": 1, "3": 2}
    assert any("numbers in the class columns' names" in n for n in pred.notes)
    assert not any("1-based" in n for n in pred.notes)    # the old hint is not needed


def test_permuted_numbered_columns_and_zero_based_columns(tmp_path):
    y, P = _three_class()
    # columns named 2, 0, 1: label j is the column named j
    pred = load_predictions(_csv(tmp_path / "perm.csv", ["label", "c2", "c0", "c1"],
                                 _rows(y, P)))
    assert pred.labels.tolist() == [{2: 0, 0: 1, 1: 2}[v] for v in y.tolist()]
    # columns named 0..k-1: labels unchanged, no mapping, no note about it
    pred = load_predictions(_csv(tmp_path / "zero.csv", ["label", "p0", "p1", "p2"],
                                 _rows(y, P)))
    assert pred.labels.tolist() == y.tolist() and pred.label_mapping is None
    assert not any("label" in n for n in pred.notes)


def test_zero_based_labels_with_columns_numbered_from_one_stay_positions(tmp_path):
    y, P = _three_class()
    pred = load_predictions(_csv(tmp_path / "zb.csv", ["label", "p1", "p2", "p3"],
                                 _rows(y, P)))
    assert pred.labels.tolist() == y.tolist() and pred.label_mapping is None
    assert any("column positions 0..2" in n for n in pred.notes)


@pytest.mark.parametrize("labels, message", [
    ([1, 2, 4, 3], r"labels: label 4 at line 4, column 'label' is out of range: it is neither"
                   r" the number in a class column's name \(1, 2, 3"),
    ([0, 1, 3, 2], r"labels: label 0 at line 2, column 'label' is not the number in a class"
                   r" column's name .* and label 3 at line 4, column 'label' is not a column"
                   r" position 0..2: the labels fit neither reading"),
    ([1, 2, -1, 3], r"labels: label -1 at line 4, column 'label' is out of range"),
])
def test_labels_outside_numbered_columns_are_refused(tmp_path, labels, message):
    P = np.full((4, 3), 1 / 3)
    path = _csv(tmp_path / "bad.csv", ["label", "p1", "p2", "p3"], _rows(labels, P))
    with pytest.raises(ValueError, match=message):
        load_predictions(path)
    assert cli.main(["evaluate", str(path)]) == 2


def test_numbered_columns_do_not_apply_to_one_binary_column(tmp_path):
    # a single column p1 is P(y = 1): labels 0/1 are read as they are
    pred = load_predictions(_csv(tmp_path / "b.csv", ["label", "p1"],
                                 [[0, 0.2], [1, 0.8]]))
    assert pred.labels.tolist() == [0, 1] and pred.label_mapping is None


# ------------------------------------------------------------------ the mapping in the report

def test_label_mapping_is_printed_and_saved(tmp_path, capsys):
    y, P = _three_class(60)
    text = np.array(["zebra", "ant", "moth"])[y]
    path = _csv(tmp_path / "sk.csv", ["", "label", "p0", "p1", "p2"],
                [[i] + r for i, r in enumerate(_rows(text, P))])     # with a pandas index
    out = tmp_path / "out"
    assert cli.main(["evaluate", str(path), "--bins", "5", "--no-utility",
                     "--no-significance", "--out", str(out), "--classes", "ant,moth,zebra"]) == 0
    printed = capsys.readouterr().out
    lines = printed.splitlines()
    source = next(i for i, line in enumerate(lines) if line.endswith(": n = 60, k = 3"))
    header = lines[source + 1]                  # under the source line (the verdict is first)
    assert header == "labels -> classes: 'ant' -> 0, 'moth' -> 1, 'zebra' -> 2"
    data = json.loads((out / "report.json").read_text())
    assert data["label_mapping"] == {"ant": 0, "moth": 1, "zebra": 2}
    assert any("through classes" in n for n in data["notes"])
    rows = list(csv.DictReader(io.StringIO((out / "report.csv").read_text())))
    mapped = {r["aggregation"]: int(r["value"]) for r in rows
              if r["quantity"] == "label_mapping"}
    assert mapped == {"ant": 0, "moth": 1, "zebra": 2}
    assert rows[0]["quantity"] == "accuracy"             # the mapping does not move the rows
    # the numbers are those of the mapped labels
    order = {"ant": 0, "moth": 1, "zebra": 2}
    ya = np.array([order[t] for t in text])
    assert data["accuracy"] == np.mean(P.argmax(axis=1) == ya)


def test_report_without_a_mapping_has_none(tmp_path):
    y, P = _three_class()
    report = cn.evaluate(P, labels=y, n_bins=[3], utility=False, significance=False)
    assert report.label_mapping is None and report.to_dict()["label_mapping"] is None
    assert "label_mapping" not in report.to_csv()
    assert "labels -> classes" not in report.format_table()
    # arrays with classes= get the mapping too
    names = np.array(["a", "b", "c"])[y]
    report = cn.evaluate(cn.as_predictions(P, names, classes=["a", "b", "c"]), n_bins=[3],
                         utility=False, significance=False)
    assert report.label_mapping == {"a": 0, "b": 1, "c": 2}
    assert "labels -> classes: 'a' -> 0, 'b' -> 1, 'c' -> 2" in report.format_table()


def test_many_labels_are_shortened_in_the_table_only():
    k = 30
    P = np.full((k, k), 1.0 / k)
    names = [f"c{j:02d}x" for j in range(k)]
    report = cn.evaluate(cn.as_predictions(P, names, classes=names), n_bins=[2], utility=False,
                         significance=False, smooth_ece=False)
    line = next(t for t in report.format_table().splitlines() if t.startswith("labels ->"))
    assert "'c19x' -> 19" in line and "'c20x'" not in line and "30 labels in all" in line
    assert len(report.to_dict()["label_mapping"]) == k


# ------------------------------------------------------------------------------ rounded rows

def test_rounded_rows_are_refused_naming_the_worst_row(tmp_path):
    rows = [[0, 0.5, 0.5, 0.0]] * 3 + [[1, 0.33, 0.33, 0.33]] + [[2, 0.3, 0.3, 0.39]] \
        + [[0, 0.2, 0.2, 0.59]]
    path = _csv(tmp_path / "rounded.csv", ["label", "p0", "p1", "p2"], rows)
    with pytest.raises(ValueError) as info:
        load_predictions(path)
    message = str(info.value)
    # rows at lines 5, 6, 7 sum to 0.99, 0.99, 0.99 -- all equally far: the first of them;
    # make line 7 the worst and check again
    assert "line 5: the row sums to 0.99" in message and "3 of 6 rows" in message
    rows[-1] = [0, 0.2, 0.2, 0.585]
    _csv(path, ["label", "p0", "p1", "p2"], rows)
    with pytest.raises(ValueError, match=r"line 7: the row sums to 0\.985, the furthest from 1"
                                         r" of the 3 of 6 rows.*rounded probabilities\? pass"
                                         r" renormalize=True \(command line: --renormalize\)"):
        load_predictions(path)
    pred = load_predictions(path, renormalize=True)
    np.testing.assert_allclose(pred.probs.sum(axis=1), 1.0, rtol=1e-15)
    assert any("divided 3 of 6 rows" in n for n in pred.notes)


def test_rounded_rows_on_the_command_line(tmp_path, capsys):
    path = _csv(tmp_path / "r.csv", ["label", "p0", "p1", "p2"],
                [[0, 0.33, 0.33, 0.33], [1, 0.5, 0.5, 0.0], [2, 0.1, 0.2, 0.69]])
    assert cli.main(["evaluate", str(path), "--bins", "2"]) == 2
    err = capsys.readouterr().err
    assert "line 2: the row sums to 0.99" in err and "--renormalize" in err
    assert cli.main(["evaluate", str(path), "--bins", "2", "--renormalize", "--no-utility",
                     "--no-significance", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert any("divided 2 of 3 rows" in n for n in data["notes"])
    # rows too far off for rounding are refused even with --renormalize, naming the option
    _csv(path, ["label", "p0", "p1", "p2"], [[0, 0.3, 0.3, 0.3], [1, 0.5, 0.5, 0.0]])
    assert cli.main(["evaluate", str(path), "--renormalize"]) == 2
    assert "renormalize's tolerance" in capsys.readouterr().err


# -------------------------------------------------------------------------- unbinned_ece(p)

def _unbinned_by_hand(y, p, power):
    y, p = np.asarray(y, float), np.asarray(p, float)
    total = 0.0
    for v in np.unique(p):
        sel = p == v
        total += sel.sum() / len(p) * abs(v - y[sel].mean()) ** power
    return total ** (1 / power)


@pytest.mark.parametrize("power", [1, 1.5, 2, 3])
def test_unbinned_ece_p_is_binned_ece_with_one_bin_per_value(power):
    rng = np.random.default_rng(11)
    p = rng.integers(1, 20, size=200) / 20            # 19 distinct values, 0.05 apart
    y = (rng.random(200) < p ** 1.3).astype(int)
    value = cn.unbinned_ece(y, p, p=power)
    assert value == pytest.approx(_unbinned_by_hand(y, p, power), rel=1e-12)
    # 1000 equal-width bins put every distinct value in a bin of its own
    assert value == pytest.approx(cn.binned_ece(y, p, n_bins=1000, p=power), rel=1e-12)
    if power == 1:
        assert value == cn.unbinned_ece(y, p)


def test_unbinned_ece_p_through_the_aggregations():
    rng = np.random.default_rng(12)
    P = rng.dirichlet(np.ones(3), size=80)
    P = np.round(P, 1)
    P[:, 2] = 1.0 - P[:, 0] - P[:, 1]
    P = np.clip(P, 0.0, 1.0)
    P /= P.sum(axis=1, keepdims=True)
    y = rng.integers(0, 3, size=80)
    per = cn.classwise(cn.unbinned_ece, y, P, p=2, per_class=True)
    for r in range(3):
        assert per[r] == pytest.approx(_unbinned_by_hand(y == r, P[:, r], 2), rel=1e-12)
    conf, _, correct = cn.confidence_scores(y, P)
    assert cn.confidence(cn.unbinned_ece, y, P, p=2) == pytest.approx(
        _unbinned_by_hand(correct, conf, 2), rel=1e-12)


@pytest.mark.parametrize("p", [0.5, 0, -1, float("nan"), math.inf, True, None, "2"])
def test_unbinned_ece_bad_p_is_named(p):
    with pytest.raises(ValueError, match=r"p: expected a number >= 1"):
        cn.unbinned_ece([0, 1], [0.2, 0.7], p=p)
    with pytest.raises(ValueError, match=r"p: expected a number >= 1"):
        cn.classwise(cn.unbinned_ece, [0, 1], [[0.8, 0.2], [0.3, 0.7]], p=p)


# ------------------------------------------------------------ equal-width bins beyond n

def _ece(prob, outcome, m):
    """Equal-width ECE from its definition: edges j/m, 1.0 in the last bin, empty bins
    skipped."""
    prob, outcome = np.asarray(prob, float), np.asarray(outcome, float)
    bins = np.minimum((prob * m).astype(int), m - 1)
    return sum((bins == j).mean() * abs(prob[bins == j].mean() - outcome[bins == j].mean())
               for j in range(m) if (bins == j).any())


def _top_label_ece(y, P, m):
    return _ece(P.max(axis=1), P.argmax(axis=1) == y, m)


def test_equal_width_measures_accept_more_bins_than_samples():
    rng = np.random.default_rng(13)
    P = rng.dirichlet(np.ones(3), size=10)
    y = rng.integers(0, 3, size=10)
    assert cn.tce(y, P, 15) == pytest.approx(_top_label_ece(y, P, 15), rel=1e-12)
    assert cn.tce(y, P, 200) == pytest.approx(_top_label_ece(y, P, 200), rel=1e-12)
    stats = cn.reliability_stats((y == 0).astype(int), P[:, 0], n_bins=15)
    assert stats["count"].sum() == 10 and (stats["count"] == 0).sum() >= 5   # empty bins
    assert np.all(np.isnan(stats["mean_prob"][stats["count"] == 0]))
    # an empty bin contributes nothing: 15 bins on these 10 values = the sum over filled bins
    assert cn.binned_ece((y == 0).astype(int), P[:, 0], n_bins=15) == pytest.approx(
        _ece(P[:, 0], y == 0, 15), rel=1e-12)
    assert cn.cwce(y, P, 15) == pytest.approx(sum(_ece(P[:, r], y == r, 15) for r in range(3)),
                                              rel=1e-12)


@pytest.mark.parametrize("call", [
    lambda y, P: cn.tce(y, P, 15, binning="mass"),
    lambda y, P: cn.cwce(y, P, 15, binning="mass"),
    lambda y, P: cn.l1_qece((y == 0).astype(int), P[:, 0], 15),
    lambda y, P: cn.l2_qece((y == 0).astype(int), P[:, 0], 15),
    lambda y, P: cn.classwise(cn.l2_qece, y, P, n_bins=15),
    lambda y, P: cn.binned_ece((y == 0).astype(int), P[:, 0], 15, binning="mass"),
])
def test_equal_mass_measures_still_need_a_sample_per_bin(call):
    rng = np.random.default_rng(13)
    P = rng.dirichlet(np.ones(3), size=10)
    y = rng.integers(0, 3, size=10)
    with pytest.raises(ValueError, match=r"n_bins: 15 bins for 10 samples; use at most as many"
                                         " bins as samples"):
        call(y, P)


# ------------------------------------------------------------------------------ progress bar

def test_evaluate_progress_bar(monkeypatch, capsys):
    rng = np.random.default_rng(14)
    P = rng.dirichlet(np.ones(3), size=200)
    y = rng.integers(0, 3, size=200)
    kwargs = dict(labels=y, n_bins=[5], utility=False, significance=False, smooth_ece=False)
    cn.evaluate(P, progress=True, **kwargs)
    assert "calnotes evaluate" in capsys.readouterr().err
    cn.evaluate(P, **kwargs)                 # 600 entries: far below PROGRESS_ENTRIES
    assert capsys.readouterr().err == ""
    assert P.size < evaluation.PROGRESS_ENTRIES
    monkeypatch.setattr(evaluation.progress, "PROGRESS_ENTRIES", 600)   # as if the input were large
    cn.evaluate(P, **kwargs)                 # ... but standard error is not a terminal
    assert capsys.readouterr().err == ""
    monkeypatch.setattr(evaluation.progress, "_stderr_is_terminal", lambda: True)
    cn.evaluate(P, **kwargs)
    assert "calnotes evaluate" in capsys.readouterr().err
    cn.evaluate(P, progress=False, **kwargs)
    assert capsys.readouterr().err == ""


def test_cli_evaluate_shows_the_progress_bar_on_large_inputs(tmp_path, monkeypatch, capsys):
    rng = np.random.default_rng(15)
    P = rng.dirichlet(np.ones(3), size=100)
    y = rng.integers(0, 3, size=100)
    path = cn.save_predictions(tmp_path / "m.npz", y, probs=P)
    argv = ["evaluate", str(path), "--bins", "5", "--no-utility", "--no-significance"]
    assert cli.main(argv) == 0
    small = capsys.readouterr()
    assert "calnotes evaluate" not in small.err and "l2-QECE" in small.out
    monkeypatch.setattr(evaluation.progress, "PROGRESS_ENTRIES", 300)
    monkeypatch.setattr(evaluation.progress, "_stderr_is_terminal", lambda: True)
    assert cli.main(argv) == 0
    large = capsys.readouterr()
    assert "calnotes evaluate" in large.err and "l2-QECE" in large.out
    assert "calnotes evaluate:" not in large.out          # the bar stays off stdout


def test_predictions_from_arrays_keeps_the_mapping_through_files(tmp_path):
    # .npz string labels still need classes (no column names to go by); with them, the
    # mapping travels with the predictions
    np.savez(tmp_path / "s.npz", labels=np.array(["b", "a"]),
             probs=np.array([[0.3, 0.7], [0.6, 0.4]]))
    with pytest.raises(ValueError, match="pass the class names in column order"):
        load_predictions(tmp_path / "s.npz")
    pred = load_predictions(tmp_path / "s.npz", classes=["a", "b"])
    assert pred.label_mapping == {"a": 0, "b": 1}
    assert Predictions.from_arrays([0, 1], [[0.5, 0.5], [0.2, 0.8]]).label_mapping is None


def test_headerless_files_have_no_column_names_to_follow(tmp_path):
    # without a header the columns are called "1", "2" after their positions: labels 1 must
    # stay class 1, not become the "column named 1"
    (tmp_path / "nh.csv").write_text("1,0.2,0.8\n1,0.7,0.3\n")
    pred = load_predictions(tmp_path / "nh.csv", header=False, label_column=0)
    assert pred.labels.tolist() == [1, 1] and pred.label_mapping is None
    (tmp_path / "nh_str.csv").write_text("b,0.2,0.8\na,0.7,0.3\n")
    pred = load_predictions(tmp_path / "nh_str.csv", header=False, label_column=0)
    assert pred.labels.tolist() == [1, 0] and pred.label_mapping == {"a": 0, "b": 1}
    assert any(n.startswith("the class columns have no names (no header)") for n in pred.notes)
    (tmp_path / "nh_bad.csv").write_text("b,0.2,0.3,0.5\na,0.7,0.1,0.2\n")
    with pytest.raises(ValueError, match=r"labels: 2 distinct labels .* fewer than the 3"
                                         r" classes, and the class columns have no names"):
        load_predictions(tmp_path / "nh_bad.csv", header=False, label_column=0)
