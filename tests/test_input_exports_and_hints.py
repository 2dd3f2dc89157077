"""No hint that leads to a wrong number, and the inputs as common tools export them: binary
logits, index and integer columns, string labels, pandas and ``__array__`` objects, percent
strings, Parquet and Feather, CSV shapes (trailing separators, comments, Excel's ``sep=``
line, pipes, no header), alias keys of ``.npz`` files, missing labels, rounded logits and
float16 rows.

Every test builds its own small input in ``tmp_path``, shaped like the files of those tools
(pandas, Excel, R, Keras, Hugging Face exports).  Expected values are computed here from the
arrays written to the files, never by the code under test.

Behaviour kept, with the reason:

* A value outside ``[0, 1]`` by more than floating-point residue (``1.00005``) is still
  refused while a row summing to ``0.99995`` passes: no rounding of a probability produces a
  value above one, whereas float32 softmax rows do sum to ``1 +- 1e-5``.  What changed is the
  advice: no logits hint, and ``--renormalize`` now clips such values and renormalizes.
* pyarrow is not a dependency (nor in the test environment): the Parquet/Feather read
  itself is tested when pyarrow is importable; without it, the message names pyarrow and the
  conversion to CSV (tested always).
"""

from __future__ import annotations

import json

import numpy as np
import pytest

import calnotes as cn
from calnotes import cli
from calnotes.data.loaders import Predictions, load_predictions


def _calibrated(n=200, k=3, seed=0):
    rng = np.random.default_rng(seed)
    P = np.round(rng.dirichlet(np.ones(k), size=n), 6)
    P[:, -1] = np.round(1.0 - P[:, :-1].sum(axis=1), 6)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    y[:k] = np.arange(k)                      # every class occurs
    return y, P


def _write(path, lines):
    path.write_text("\n".join(lines) + "\n")
    return path


def _csv_lines(header, rows, sep=","):
    return [sep.join(header)] + [sep.join(str(c) for c in row) for row in rows]


def _base_rows(y, P):
    return [[int(label)] + [f"{v:.6f}" for v in row] for label, row in zip(y, P)]


def _accuracy(y, P):
    return float(np.mean(np.asarray(P).argmax(axis=1) == np.asarray(y)))


def _fast(**kwargs):
    return dict(n_bins=[5], utility=False, significance=False, smooth_ece=False, **kwargs)


# ----------------------------------------------------------------------------- binary logits

def test_logits_on_binary_probabilities_refused(tmp_path):
    rng = np.random.default_rng(1)
    p = np.round(rng.uniform(size=120), 4)
    y = (rng.uniform(size=120) < p).astype(int)
    for given in (p, p[:, None], p.astype(np.float32)[:, None]):    # 1-d, Keras (n, 1)
        with pytest.raises(ValueError, match=r"every one in \[0, 1\].*binary probabilities"
                                             r".*force_logits=True"):
            cn.evaluate(cn.as_predictions(given, y, kind="logits"), **_fast())
    path = _write(tmp_path / "binary_1col.csv",
                  _csv_lines(["label", "p1"], [[a, b] for a, b in zip(y, p)]))
    with pytest.raises(ValueError, match="binary probabilities"):
        load_predictions(path, kind="logits")
    assert cli.main(["evaluate", str(path), "--logits", "--bins", "5", "--no-utility",
                     "--no-significance"]) == 2
    # read as probabilities, the accuracy is that of p >= 1/2 (ties to class 0)
    assert cn.evaluate(path, **_fast()).accuracy == pytest.approx(np.mean((p > 0.5) == y))
    # force_logits reads them as logits all the same: sigmoid(z) > 1/2 for every z > 0
    forced = cn.evaluate(cn.as_predictions(p, y, kind="logits", force_logits=True), **_fast())
    assert forced.accuracy == pytest.approx(np.mean((p > 0) == y))
    # real binary logits (some negative) are untouched
    z = np.log(p + 1e-3) - np.log(1 - p + 1e-3)
    assert cn.evaluate(cn.as_predictions(z, y, kind="logits"), **_fast()).accuracy == \
        pytest.approx(np.mean((z > 0) == y))


# ------------------------------------------------------------------ index and integer columns

def test_unnamed_index_column_skipped(tmp_path):
    y, P = _calibrated()
    # pd.read_csv(f).to_csv(g) of a file saved with its index: ",Unnamed: 0,label,p0,p1,p2"
    rows = [[i, i] + r for i, r in enumerate(_base_rows(y, P))]
    path = _write(tmp_path / "twice.csv", _csv_lines(["", "Unnamed: 0", "label", "p0", "p1",
                                                      "p2"], rows))
    pred = load_predictions(path)
    assert pred.n_classes == 3 and np.allclose(pred.probs, P)
    assert pred.class_columns == ("p0", "p1", "p2")
    assert any("'Unnamed: 0'" in n or "(Unnamed: 0)" in n for n in pred.notes)
    # an "Unnamed: N" column elsewhere than first is skipped too, and so with logits
    Z = np.log(P + 1e-3)
    rows = [[f"{a:.5f}", int(t), i] + [f"{v:.5f}" for v in z[1:]]
            for i, (a, t, z) in enumerate(zip(Z[:, 0], y, Z))]
    path = _write(tmp_path / "mid.csv", _csv_lines(["z0", "label", "Unnamed: 2", "z1", "z2"],
                                                   rows))
    pred = load_predictions(path, kind="logits")
    assert pred.class_columns == ("z0", "z1", "z2")
    assert pred.n_classes == 3 and _accuracy(pred.labels, pred.probs) == _accuracy(y, Z)


def test_named_index_column_skipped(tmp_path):
    y, P = _calibrated()
    for name, start in (("sample_name", 0), ("row_number", 1), ("Unnamed_thing", 0)):
        rows = [[i + start] + r for i, r in enumerate(_base_rows(y, P))]
        path = _write(tmp_path / f"{name}.csv", _csv_lines([name, "label", "p0", "p1", "p2"],
                                                           rows))
        pred = load_predictions(path)
        assert pred.n_classes == 3 and np.allclose(pred.probs, P), name
        note = next(n for n in pred.notes if name in n)
        assert "numbers the rows" in note and (f"{start}.." in note)
        report = cn.evaluate(path, **_fast())
        assert report.n_classes == 3 and report.accuracy == _accuracy(y, P)
    # a column that is not 0..n-1 / 1..n (a shuffled index) is not taken for an index
    rows = [[(i * 7) % len(y)] + r for i, r in enumerate(_base_rows(y, P))]
    path = _write(tmp_path / "shuffled.csv", _csv_lines(["sample", "label", "p0", "p1", "p2"],
                                                        rows))
    assert load_predictions(path).n_classes == 3          # skipped by its identifier name
    # an index of names is not numbers: the message says how to skip it
    rows = [[f"s{i:03d}"] + r for i, r in enumerate(_base_rows(y, P))]
    path = _write(tmp_path / "names.csv", _csv_lines(["sample_name", "label", "p0", "p1",
                                                      "p2"], rows))
    with pytest.raises(ValueError, match=r"column 'sample_name'.*ignore_columns=\['sample_name'\]"):
        load_predictions(path)


def test_integer_column_never_hinted_as_logits(tmp_path):
    y, P = _calibrated()
    rows = [[int(t), int(p.argmax())] + [f"{v:.6f}" for v in p] for t, p in zip(y, P)]
    path = _write(tmp_path / "pred_col.csv", _csv_lines(["label", "pred", "p0", "p1", "p2"],
                                                        rows))
    with pytest.raises(ValueError, match="column 'pred' holds whole numbers") as info:
        load_predictions(path)
    assert "logits" not in str(info.value) and "ignore_columns=['pred']" in str(info.value)
    with pytest.raises(ValueError, match="column 'pred' holds whole numbers.*not logits"):
        load_predictions(path, kind="logits")
    assert cli.main(["evaluate", str(path), "--logits", "--bins", "5"]) == 2
    pred = load_predictions(path, ignore_columns=["pred"])
    assert pred.n_classes == 3 and np.allclose(pred.probs, P)
    # a matrix of whole numbers is not hinted as logits either
    with pytest.raises(ValueError, match="whole numbers, not probabilities") as info:
        Predictions.from_arrays([0, 1, 2], [[3, 0, 1], [0, 2, 5], [1, 1, 4]])
    assert "logits" not in str(info.value)


def test_report_lists_class_columns(tmp_path, capsys):
    y, P = _calibrated(60)
    path = _write(tmp_path / "m.csv", _csv_lines(["id", "label", "cat", "dog", "emu"],
                                                 [[f"img{i}"] + r for i, r in
                                                  enumerate(_base_rows(y, P))]))
    fast = ["--bins", "5", "--no-utility", "--no-significance"]
    assert cli.main(["evaluate", str(path)] + fast) == 0
    printed = capsys.readouterr().out
    assert "classes read from columns: 0 = 'cat', 1 = 'dog', 2 = 'emu'" in printed
    assert cli.main(["evaluate", str(path), "--json"] + fast) == 0
    assert json.loads(capsys.readouterr().out)["class_columns"] == ["cat", "dog", "emu"]
    binary = _write(tmp_path / "b.csv", _csv_lines(["label", "p_yes"],
                                                   [[int(t), f"{v:.4f}"] for t, v in
                                                    zip(y % 2, P[:, 1])]))
    report = cn.evaluate(binary, **_fast())
    assert report.class_columns == ["p_yes"]
    assert "P(y = 1) read from column 'p_yes'" in report.format_table()
    arrays = cn.evaluate(P, labels=y, **_fast())
    assert arrays.class_columns is None
    assert "classes: the 3 columns of the probability matrix, in order" in arrays.format_table()


# ----------------------------------------------------------------------------- string labels

def test_unmatched_string_labels_refused_for_k_above_2(tmp_path):
    y, P = _calibrated()
    # columns hold classes b, a, c; labels are a/b/c: sorted order would be wrong
    order = np.array(["b", "a", "c"])
    rows = [[order[t]] + [f"{v:.6f}" for v in p] for t, p in zip(y, P)]
    path = _write(tmp_path / "guess.csv", _csv_lines(["label", "score_0", "score_1",
                                                      "score_2"], rows))
    with pytest.raises(ValueError, match=r"\['a', 'b', 'c'\] are not the class columns' names"
                                         r".*classes="):
        load_predictions(path)
    assert cli.main(["evaluate", str(path), "--bins", "5", "--no-utility"]) == 2
    report = cn.evaluate(cn.as_predictions(path, classes=["b", "a", "c"]), **_fast())
    assert report.accuracy == _accuracy(y, P)
    assert report.label_mapping == {"b": 0, "a": 1, "c": 2}
    # without a header, too (no names to match)
    nohead = _write(tmp_path / "nohead.csv", [",".join(r) for r in
                                              ([str(c) for c in row] for row in rows)])
    with pytest.raises(ValueError, match="no header.*classes="):
        load_predictions(nohead, header=False, label_column=0)
    # names that are the columns' names still map, in any column order
    rows = [[order[t]] + [f"{v:.6f}" for v in p] for t, p in zip(y, P)]
    named = _write(tmp_path / "named.csv", _csv_lines(["label", "prob_b", "prob_a", "prob_c"],
                                                      rows))
    assert cn.evaluate(named, **_fast()).accuracy == _accuracy(y, P)
    # two classes keep scikit-learn's sorted order, with the columns named in the note
    yb, pb = y % 2, P[:, 1]
    text = np.array(["no", "yes"])[yb]
    rows = [[t, f"{1 - v:.6f}", f"{v:.6f}"] for t, v in zip(text, pb)]
    pred = load_predictions(_write(tmp_path / "k2.csv", _csv_lines(["label", "s0", "s1"],
                                                                   rows)))
    assert pred.labels.tolist() == yb.tolist()
    assert any("'no' -> column 's0'" in n for n in pred.notes)


# --------------------------------------------------------------------------- pandas, __array__

class _Tensor:
    """A stand-in for a CPU torch/jax tensor: an object with ``__array__`` only."""

    def __init__(self, values):
        self._values = np.asarray(values)

    def __array__(self, dtype=None, copy=None):
        return self._values if dtype is None else self._values.astype(dtype)


def test_array_like_objects_accepted():
    y, P = _calibrated(80)
    report = cn.evaluate(_Tensor(P), labels=_Tensor(y), **_fast())
    assert report.n_classes == 3 and report.accuracy == _accuracy(y, P)
    z = np.log(P)
    logits = cn.evaluate(cn.as_predictions(_Tensor(z), y, kind="logits"), **_fast())
    assert logits.accuracy == _accuracy(y, P)


def test_dataframe_accepted_with_column_names():
    pd = pytest.importorskip("pandas")
    y, P = _calibrated(80)
    names = np.array(["setosa", "versicolor", "virginica"])
    frame = pd.DataFrame(P, columns=["versicolor", "setosa", "virginica"])  # not sorted
    frame.insert(0, "species", names[[1, 0, 2]][y])
    report = cn.evaluate(cn.as_predictions(frame, label_column="species"), **_fast())
    assert report.accuracy == _accuracy(y, P)
    assert report.class_columns == ["versicolor", "setosa", "virginica"]
    assert report.label_mapping == {"versicolor": 0, "setosa": 1, "virginica": 2}
    # a DataFrame saved and re-read with its index, and labels as a Categorical Series
    frame = pd.DataFrame(P, columns=["p0", "p1", "p2"])
    frame.insert(0, "Unnamed: 0", np.arange(len(y)))
    labels = pd.Series(pd.Categorical(np.array(["a", "b", "c"])[y]))
    report = cn.evaluate(cn.as_predictions(frame, labels, classes=["a", "b", "c"]), **_fast())
    assert report.n_classes == 3 and report.accuracy == _accuracy(y, P)
    # a Series of binary probabilities
    p = pd.Series(P[:, 1] / (P[:, 0] + P[:, 1]))
    yb = (y == 1).astype(int)
    assert cn.evaluate(p, labels=pd.Series(yb), **_fast()).accuracy == \
        pytest.approx(np.mean((p.to_numpy() > 0.5) == yb))
    with pytest.raises(ValueError, match="delimiter: describes a text file"):
        cn.evaluate(cn.as_predictions(frame, labels, delimiter=";"), **_fast())


# --------------------------------------------------------------------------- percent strings

def test_percent_strings_read(tmp_path):
    rows = [[0, "50%", "25%", "25%"], [1, "12.5%", "75%", "12.5%"], [2, "0%", "10%", "90%"]]
    pred = load_predictions(_write(tmp_path / "pct.csv",
                                   _csv_lines(["label", "p0", "p1", "p2"], rows)))
    assert np.allclose(pred.probs, [[0.5, 0.25, 0.25], [0.125, 0.75, 0.125], [0, 0.1, 0.9]])
    assert any("percent signs read as percentages" in n for n in pred.notes)
    # Excel's "75,0 %" with ';' separators; one decimal, so the rows are renormalized
    y, P = _calibrated(50)
    rows = [[int(t)] + [f"{100 * v:.1f}".replace(".", ",") + " %" for v in p]
            for t, p in zip(y, P)]
    path = _write(tmp_path / "excel.csv", _csv_lines(["label", "p0", "p1", "p2"], rows, ";"))
    with pytest.raises(ValueError, match="renormalize"):
        load_predictions(path)
    pred = load_predictions(path, renormalize=True)
    expected = np.round(100 * P, 1) / 100
    assert np.allclose(pred.probs, expected / expected.sum(axis=1, keepdims=True))


# ------------------------------------------------------------------------ Parquet and Feather

def test_parquet_and_feather_read(tmp_path):
    pd = pytest.importorskip("pandas")
    pytest.importorskip("pyarrow")
    y, P = _calibrated(60)
    frame = pd.DataFrame(P, columns=["p0", "p1", "p2"])
    frame.insert(0, "label", y)
    frame.to_parquet(tmp_path / "m.parquet")
    frame.to_feather(tmp_path / "m.feather")
    for name in ("m.parquet", "m.feather"):
        pred = load_predictions(tmp_path / name)
        assert np.array_equal(pred.labels, y) and np.allclose(pred.probs, P)
        assert pred.class_columns == ("p0", "p1", "p2")


def test_parquet_without_pyarrow_names_the_conversion(tmp_path, monkeypatch, capsys):
    import sys
    for module in ("pyarrow", "pyarrow.parquet", "pyarrow.feather", "fastparquet"):
        monkeypatch.setitem(sys.modules, module, None)       # import fails: not installed
    path = tmp_path / "m.parquet"
    path.write_bytes(b"PAR1" + b"\0" * 32 + b"PAR1")
    with pytest.raises(ImportError, match="needs pyarrow.*pip install pyarrow.*to_csv"):
        load_predictions(path)
    assert cli.main(["evaluate", str(path), "--bins", "5"]) == 2
    assert "needs pyarrow" in capsys.readouterr().err


# -------------------------------------------------------------------------------- CSV shapes

def test_trailing_separators_dropped(tmp_path):
    y, P = _calibrated(30)
    lines = _csv_lines(["label", "p0", "p1", "p2"], _base_rows(y, P), ";")
    path = _write(tmp_path / "trail.csv", [line.replace(".", ",") + ";;" for line in lines])
    pred = load_predictions(path)
    assert pred.n_classes == 3 and np.allclose(pred.probs, P)
    assert any("empty column" in n for n in pred.notes)
    lines = _csv_lines(["label", "p0", "p1", "p2"], _base_rows(y, P))
    path = _write(tmp_path / "comma.csv", [lines[0]] + [line + "," for line in lines[1:]])
    assert np.allclose(load_predictions(path).probs, P)


def test_comment_after_data_skipped(tmp_path):
    y, P = _calibrated(30)
    path = _write(tmp_path / "c.csv", _csv_lines(["label", "p0", "p1", "p2"],
                                                 _base_rows(y, P)) + ["# end of export", ""])
    pred = load_predictions(path)
    assert pred.n_samples == 30 and any("after the data" in n for n in pred.notes)
    inside = _write(tmp_path / "i.csv", _csv_lines(["label", "p0", "p1", "p2"],
                                                   _base_rows(y, P))[:5] + ["# x"]
                    + _csv_lines(["label", "p0", "p1", "p2"], _base_rows(y, P))[5:])
    with pytest.raises(ValueError, match="line 6 is a comment inside the data"):
        load_predictions(inside)


def test_excel_sep_line_honoured(tmp_path):
    y, P = _calibrated(30)
    lines = [line.replace(".", ",") for line in
             _csv_lines(["label", "p0", "p1", "p2"], _base_rows(y, P), ";")]
    pred = load_predictions(_write(tmp_path / "sep.csv", ["sep=;"] + lines))
    assert np.allclose(pred.probs, P) and np.array_equal(pred.labels, y)


def test_pipe_separator_read(tmp_path):
    y, P = _calibrated(30)
    pred = load_predictions(_write(tmp_path / "pipe.csv",
                                   _csv_lines(["label", "p0", "p1", "p2"], _base_rows(y, P),
                                              "|")))
    assert np.allclose(pred.probs, P)
    printed = ["label       p0       p1       p2"] + [
        f"{t:5d} {a:.6f} {b:.6f} {c:.6f}" for t, (a, b, c) in zip(y, P)]
    with pytest.raises(ValueError, match="runs of spaces.*to_csv"):
        load_predictions(_write(tmp_path / "aligned.txt", printed))


def test_headerless_file_hinted_no_header(tmp_path):
    y, P = _calibrated(30)
    path = _write(tmp_path / "nh.csv", _csv_lines(["label", "p0", "p1", "p2"],
                                                  _base_rows(y, P))[1:])
    with pytest.raises(ValueError, match="holds numbers, not column names.*--no-header"):
        load_predictions(path)
    pred = load_predictions(path, header=False, label_column=0)
    assert np.allclose(pred.probs, P)


def test_pm1_and_minus100_labels_hinted():
    p = np.array([0.2, 0.7, 0.9, 0.4])
    with pytest.raises(ValueError, match=r"-1/\+1.*\(labels \+ 1\) // 2"):
        Predictions.from_arrays([-1, 1, 1, -1], p)
    with pytest.raises(ValueError, match="-100 marks tokens to ignore"):
        Predictions.from_arrays([0, -100, 1, 1], p)


def test_npz_alias_keys_read(tmp_path):
    y, P = _calibrated(40)
    np.savez(tmp_path / "sk.npz", y_true=y, y_prob=P)
    pred = load_predictions(tmp_path / "sk.npz")
    assert np.array_equal(pred.labels, y) and np.allclose(pred.probs, P)
    assert any("'y_true' as the labels" in n for n in pred.notes)
    Z = np.log(P) + 1.0                                         # Trainer's logits
    np.savez(tmp_path / "hf.npz", predictions=Z, label_ids=y)
    with pytest.raises(ValueError, match="not probabilities.*--logits"):
        load_predictions(tmp_path / "hf.npz")
    pred = load_predictions(tmp_path / "hf.npz", kind="logits")
    assert np.allclose(pred.probs, P / P.sum(axis=1, keepdims=True))
    np.savez(tmp_path / "two.npz", y_true=y, label_ids=y, probs=P)
    with pytest.raises(ValueError, match="could each be the labels"):
        load_predictions(tmp_path / "two.npz")
    np.savez(tmp_path / "canon.npz", labels=y, y=y[::-1], probs=P)    # 'labels' wins
    assert np.array_equal(load_predictions(tmp_path / "canon.npz").labels, y)


def test_one_class_softmax_refused(tmp_path):
    np.savez(tmp_path / "k1.npz", labels=np.zeros(50, int), probs=np.ones((50, 1)))
    with pytest.raises(ValueError, match="every value is 1.*one-class model"):
        load_predictions(tmp_path / "k1.npz")
    # one sample with P(y = 1) = 1 is still a binary prediction
    assert Predictions.from_arrays([1], [1.0]).n_classes == 2


def test_force_logits_without_logits(tmp_path, capsys):
    y, P = _calibrated(30)
    path = _write(tmp_path / "b.csv", _csv_lines(["label", "p0", "p1", "p2"],
                                                 _base_rows(y, P)))
    with pytest.raises(ValueError, match="force_logits .*: applies to logits only"):
        load_predictions(path, force_logits=True)
    with pytest.raises(ValueError, match="force_logits"):
        cn.evaluate(cn.as_predictions(P, y, force_logits=True), **_fast())
    assert cli.main(["evaluate", str(path), "--force-logits", "--bins", "5"]) == 2
    assert "--force-logits: applies to logits only" in capsys.readouterr().err


def test_labels_path_with_array(tmp_path):
    y, P = _calibrated(40)
    np.save(tmp_path / "labels.npy", y)
    (tmp_path / "labels.txt").write_text("\n".join(map(str, y)) + "\n")
    for name in ("labels.npy", "labels.txt"):
        report = cn.evaluate(P, labels=str(tmp_path / name), **_fast())
        assert report.accuracy == _accuracy(y, P)


def test_masked_logit_notes_not_contradictory():
    Z = np.array([[0.0, -np.inf, 1.0], [2.0, 0.5, -1.0], [0.1, 0.2, 0.3]])
    report = cn.evaluate(cn.as_predictions(Z, [1, 0, 2], kind="logits"), **_fast())
    assert report.scores["log"] == np.inf
    assert not any("stays finite" in n for n in report.notes)
    assert any("log loss is infinite: sample 0 has logit -inf" in n for n in report.notes)
    finite = cn.evaluate(cn.as_predictions(Z, [0, 0, 2], kind="logits"), **_fast())
    assert any("stays finite" in n for n in finite.notes)


def test_na_label_named_missing(tmp_path):
    y, P = _calibrated(30)
    rows = _base_rows(y, P)
    rows[3][0] = "NA"
    path = _write(tmp_path / "na.csv", _csv_lines(["label", "p0", "p1", "p2"], rows))
    with pytest.raises(ValueError, match=r"missing label 'NA' at line 5, column 'label'"):
        load_predictions(path)
    rows[3][0] = ""
    path = _write(tmp_path / "empty.csv", _csv_lines(["label", "p0", "p1", "p2"], rows))
    with pytest.raises(ValueError, match=r"missing label '' at line 5"):
        load_predictions(path)
    # a class named "NA" (a column of that name) is a class, not a missing label
    names = np.array(["NA", "EU", "AS"])
    rows = [[names[t]] + r[1:] for t, r in zip(y, _base_rows(y, P))]
    path = _write(tmp_path / "regions.csv", _csv_lines(["label", "NA", "EU", "AS"], rows))
    assert np.array_equal(load_predictions(path).labels, y)


# ------------------------------ rounded logits, float16, residue above one, flags in messages

def test_rounded_and_percentage_logits_refused(tmp_path):
    y, P = _calibrated(100)
    rounded = np.round(P, 2)
    assert np.abs(rounded.sum(axis=1) - 1).max() > 1e-4          # really off by rounding
    with pytest.raises(ValueError, match="rounded probabilities, not logits.*force_logits"):
        Predictions.from_arrays(y, logits=rounded)
    with pytest.raises(ValueError, match="percentages, not logits"):
        Predictions.from_arrays(y, logits=100 * P)
    path = _write(tmp_path / "r2.csv", _csv_lines(["label", "p0", "p1", "p2"],
                                                  [[int(t)] + [f"{v:.2f}" for v in p]
                                                   for t, p in zip(y, P)]))
    with pytest.raises(ValueError, match="rounded probabilities, not logits"):
        load_predictions(path, kind="logits")
    forced = Predictions.from_arrays(y, logits=rounded, force_logits=True)
    assert forced.logits is not None


def test_float16_probabilities_evaluated(tmp_path):
    y, P = _calibrated(300, k=3)
    P16 = P.astype(np.float16)
    sums = P16.astype(np.float64).sum(axis=1)
    assert np.abs(sums - 1).max() > 1e-4                      # float16 rows are off
    np.savez(tmp_path / "f16.npz", labels=y, probs=P16)
    report = cn.evaluate(tmp_path / "f16.npz", **_fast())
    # rows off by more than 1e-4 (the float64/float32 tolerance) are divided by their sums
    off = np.abs(sums - 1) > 1e-4
    expected = P16.astype(np.float64)
    expected[off] /= sums[off, None]
    assert report.mean_confidence == pytest.approx(expected.max(axis=1).mean(), rel=1e-12)
    assert any("float16" in n for n in report.notes)
    assert cn.evaluate(P16, labels=y, **_fast()).mean_confidence == report.mean_confidence
    assert cli.main(["evaluate", str(tmp_path / "f16.npz"), "--bins", "5", "--no-utility",
                     "--no-significance"]) == 0


def test_value_just_above_one_not_hinted_as_logits():
    with pytest.raises(ValueError, match=r"1\.00005.*only by 5e-05.*renormalize") as info:
        Predictions.from_arrays([0, 1], [[1.00005, 0.0, 0.0], [0.2, 0.3, 0.5]])
    assert "logits" not in str(info.value)
    pred = Predictions.from_arrays([0, 1], [[1.00005, 0.0, 0.0], [0.2, 0.3, 0.5]],
                                   renormalize=True)
    assert pred.probs.tolist() == [[1.0, 0.0, 0.0], [0.2, 0.3, 0.5]]
    assert any("clipped 1 value" in n for n in pred.notes)
    # as before: 0.99995 passes, a value far outside [0, 1] is still hinted as logits
    assert Predictions.from_arrays([0], [[0.99995, 0.0, 0.0]]).n_classes == 3
    with pytest.raises(ValueError, match="kind='logits'"):
        Predictions.from_arrays([0], [[2.5, -1.3, 0.2]])


def test_cli_messages_use_flags(tmp_path, capsys):
    y, P = _calibrated(30)
    rows = [[int(t)] + [f"{v:.3f}" for v in 3 * np.log(p + 0.01)] for t, p in zip(y, P)]
    path = _write(tmp_path / "z.csv", _csv_lines(["label", "z0", "z1", "z2"], rows))
    assert cli.main(["evaluate", str(path), "--bins", "5"]) == 2
    err = capsys.readouterr().err
    assert "pass --logits" in err and "command line:" not in err and "kind=" not in err
    out = tmp_path / "out"
    out.mkdir()
    (out / "report.json").write_text("{}")
    assert cli.main(["evaluate", str(path), "--logits", "--bins", "5", "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "--force" in err and "force=True" not in err and "command line:" not in err
