"""Reading predictions files as people export them: hints that do not lead to a wrong number
(rounded rows, percentages, logits), pandas index and id columns, empty files, byte-order
marks, separators, decimal commas and compression, string and one-based labels, binary and
transposed matrices, directories, labels files, error messages that name the file, line and
column, zips, old pickles, huge labels, float residue and float16 rows.

Each test rebuilds its input in ``tmp_path``; each fails on commit 2ee615c.  Reference
values are computed here from the arrays written to the files (never from calnotes).
"""

from __future__ import annotations

import gzip
import pickle

import numpy as np
import pytest

import calnotes as cn
from calnotes.cli import main
from calnotes.data.loaders import Predictions, load_predictions


def _calibrated(n=300, k=3, seed=0):
    """Probabilities with 6 decimals and labels drawn from them."""
    rng = np.random.default_rng(seed)
    P = np.round(rng.dirichlet(np.ones(k) * 2, size=n), 6)
    P[:, -1] = 1.0 - P[:, :-1].sum(axis=1)
    y = (rng.random(n)[:, None] > np.cumsum(P, axis=1)).sum(axis=1).clip(0, k - 1)
    return y, P


def _write_csv(path, header, y, P, fmt="{:.6f}", sep=","):
    lines = [sep.join(header)]
    for label, row in zip(y, P):
        lines.append(sep.join([str(label)] + [fmt.format(v) for v in row]))
    path.write_text("\n".join(lines) + "\n")
    return path


def _top_label_ece(y, P, m):
    """Equal-width top-label ECE from its definition (edges j/m, 1.0 in the last bin)."""
    conf = P.max(axis=1)
    correct = (P.argmax(axis=1) == y).astype(float)
    bins = np.minimum((conf * m).astype(int), m - 1)
    total = 0.0
    for j in range(m):
        sel = bins == j
        if sel.any():
            total += sel.mean() * abs(conf[sel].mean() - correct[sel].mean())
    return total


# ---------------------------------------------------------- wrong numbers and refused files

def test_rounded_probabilities_get_the_renormalize_hint_not_the_logits_hint(tmp_path):
    """Rows rounded to 2 decimals were refused with "(if the file holds logits, pass
    --logits)", and following the hint printed ECE 0.171 instead of 0.066."""
    y, P = _calibrated()
    path = _write_csv(tmp_path / "rounded2_k3.csv", ["label", "p0", "p1", "p2"], y, P,
                      fmt="{:.2f}")
    with pytest.raises(ValueError) as info:
        load_predictions(path)
    message = str(info.value)
    assert "rounded probabilities? pass renormalize=True (command line: --renormalize)" in message
    assert "logits" not in message
    pred = load_predictions(path, renormalize=True)
    R = np.round(P, 2)
    np.testing.assert_allclose(pred.probs, R / R.sum(axis=1, keepdims=True), rtol=1e-12)
    assert any("divided" in note for note in pred.notes)
    # 4 decimals: the message must not read as self-contradictory
    path4 = _write_csv(tmp_path / "rounded4.csv", ["label", "p0", "p1", "p2"], y,
                       np.round(P, 4) + np.array([0, 0, 2e-4]), fmt="{:.4f}")
    with pytest.raises(ValueError, match="rounded probabilities"):
        load_predictions(path4)


def test_percentages_get_the_percentages_message(tmp_path):
    """Percentages were refused with the logits hint, and --logits gave ECE 0.244."""
    y, P = _calibrated()
    path = _write_csv(tmp_path / "percent.csv", ["label", "p0", "p1", "p2"], y, 100 * P,
                      fmt="{:.4f}")
    with pytest.raises(ValueError, match="look like percentages") as info:
        load_predictions(path)
    assert "kind='logits'" not in str(info.value)
    pred = load_predictions(path, renormalize=True)
    np.testing.assert_allclose(pred.probs, P, atol=1e-6)


def test_logits_hint_only_where_values_could_be_logits(tmp_path):
    y, P = _calibrated(50)
    np.save(tmp_path / "z.npy", np.log(P) + 2.0)
    np.save(tmp_path / "y.npy", y)
    with pytest.raises(ValueError, match=r"if these are logits, pass kind='logits'"):
        load_predictions(tmp_path / "z.npy", labels=tmp_path / "y.npy")


def test_logits_flag_on_probabilities_is_refused_unless_forced(tmp_path):
    """--logits on probabilities ran softmax on them silently."""
    y, P = _calibrated(200)
    np.save(tmp_path / "probs.npy", P)
    np.save(tmp_path / "labels.npy", y)
    with pytest.raises(ValueError, match="look like probabilities, not logits.*--force-logits"):
        load_predictions(tmp_path / "probs.npy", labels=tmp_path / "labels.npy", kind="logits")
    with pytest.raises(ValueError, match="look like probabilities"):
        cn.evaluate(cn.as_predictions(P, y, kind="logits"))
    assert main(["evaluate", str(tmp_path / "probs.npy"), "--labels",
                 str(tmp_path / "labels.npy"), "--logits"]) == 2
    forced = load_predictions(tmp_path / "probs.npy", labels=tmp_path / "labels.npy",
                              kind="logits", force_logits=True)
    e = np.exp(P - P.max(axis=1, keepdims=True))
    np.testing.assert_allclose(forced.probs, e / e.sum(axis=1, keepdims=True), rtol=1e-12)


def test_pandas_index_column_is_skipped(tmp_path):
    """A pandas CSV with its index column was refused, or read with one extra class."""
    y, P = _calibrated(300, k=2)
    lines = [",label,p0,p1"] + [f"{i},{y[i]},{P[i, 0]:.6f},{P[i, 1]:.6f}" for i in range(300)]
    (tmp_path / "pandas_index.csv").write_text("\n".join(lines) + "\n")
    pred = load_predictions(tmp_path / "pandas_index.csv")
    assert pred.n_classes == 2 and pred.n_samples == 300
    np.testing.assert_allclose(pred.probs, P, atol=1e-6)
    assert any("pandas index" in note for note in pred.notes)
    # the one-row file was accepted as k = 4
    (tmp_path / "n1.csv").write_text(",label,p0,p1\n0,1,0.3,0.7\n")
    one = load_predictions(tmp_path / "n1.csv")
    assert one.n_classes == 2 and one.labels.tolist() == [1]
    # "Unnamed: 0" (pandas read-then-write) too
    (tmp_path / "unnamed.csv").write_text("Unnamed: 0,label,p0,p1\n0,1,0.3,0.7\n1,0,0.6,0.4\n")
    assert load_predictions(tmp_path / "unnamed.csv").n_classes == 2


def test_zero_byte_files_give_a_clear_error(tmp_path):
    """A zero-byte .npz gave EOFError and a traceback."""
    for name in ("zero.npz", "zero.npy", "zero.csv", "noext"):
        (tmp_path / name).write_bytes(b"")
        with pytest.raises(ValueError, match=r"empty file \(0 bytes\)"):
            load_predictions(tmp_path / name, labels=None)
    assert main(["evaluate", str(tmp_path / "zero.npz")]) == 2


# -------------------------------------------------------------------- common export formats

def test_utf8_bom_csv_is_read(tmp_path):
    """Excel's "CSV UTF-8" (a byte-order mark) gave "found none in ['\\ufefflabel', ...]"."""
    (tmp_path / "bom.csv").write_bytes(b"\xef\xbb\xbflabel,p0,p1\n1,0.2,0.8\n0,0.7,0.3\n")
    pred = load_predictions(tmp_path / "bom.csv")
    assert pred.labels.tolist() == [1, 0]


@pytest.mark.parametrize("sep, name", [(";", "semicolon.csv"), ("\t", "tab.csv"),
                                       ("\t", "tab.tsv")])
def test_semicolon_and_tab_separators(tmp_path, sep, name):
    """';' and tab separators, and .tsv, were refused."""
    y, P = _calibrated(20, k=2)
    pred = load_predictions(_write_csv(tmp_path / name, ["label", "p0", "p1"], y, P, sep=sep))
    np.testing.assert_allclose(pred.probs, P, atol=1e-6)


def test_decimal_commas_and_gzip(tmp_path):
    """Decimal commas ("0,4") and .csv.gz were refused."""
    (tmp_path / "comma.csv").write_text("label;p0;p1\n1;0,25;0,75\n0;0,6;0,4\n")
    pred = load_predictions(tmp_path / "comma.csv")
    assert pred.probs.tolist() == [[0.25, 0.75], [0.6, 0.4]]
    assert any("decimal commas" in note for note in pred.notes)
    (tmp_path / "quoted.csv").write_text('label,p0,p1\n1,"0,25","0,75"\n')
    assert load_predictions(tmp_path / "quoted.csv").probs.tolist() == [[0.25, 0.75]]
    (tmp_path / "good.csv.gz").write_bytes(gzip.compress(b"label,p0,p1\n1,0.2,0.8\n"))
    assert load_predictions(tmp_path / "good.csv.gz").probs.tolist() == [[0.2, 0.8]]


def test_string_labels_through_column_names_or_classes(tmp_path):
    """Labels 'cat'/'dog' were refused even with columns named after the classes."""
    (tmp_path / "str_labels.csv").write_text("label,cat,dog\ncat,0.9,0.1\ndog,0.2,0.8\n")
    pred = load_predictions(tmp_path / "str_labels.csv")
    assert pred.labels.tolist() == [0, 1]
    np.savez(tmp_path / "labels_str.npz", labels=np.array(["b", "a"]),
             probs=np.array([[0.3, 0.7], [0.6, 0.4]]))
    with pytest.raises(ValueError, match="pass the class names in column order"):
        load_predictions(tmp_path / "labels_str.npz")
    assert load_predictions(tmp_path / "labels_str.npz",
                            classes=["a", "b"]).labels.tolist() == [1, 0]
    assert cn.evaluate(cn.as_predictions(np.array([[0.3, 0.7], [0.6, 0.4]]), ["b", "a"],
                                         classes=["a", "b"]), n_bins=[2]).accuracy == 1.0
    (tmp_path / "bool_labels.csv").write_text("label,p\nTrue,0.9\nFalse,0.2\n")
    assert load_predictions(tmp_path / "bool_labels.csv").labels.tolist() == [1, 0]


def test_id_columns_label_column_and_prob_columns(tmp_path):
    """Id columns could not be skipped, a numeric id was read as class 0, and the label
    column name was fixed."""
    (tmp_path / "id_col.csv").write_text("id,label,p0,p1\nimg_0,1,0.2,0.8\nimg_1,0,0.7,0.3\n")
    pred = load_predictions(tmp_path / "id_col.csv")
    assert pred.n_classes == 2 and any("'id' skipped" in note for note in pred.notes)
    (tmp_path / "numeric_id.csv").write_text("id,label,p0,p1\n1000,1,0.2,0.8\n1001,0,0.7,0.3\n")
    assert load_predictions(tmp_path / "numeric_id.csv").probs.tolist() == [[0.2, 0.8],
                                                                             [0.7, 0.3]]
    (tmp_path / "label_class.csv").write_text("class,p0,p1\n1,0.2,0.8\n")
    assert load_predictions(tmp_path / "label_class.csv").labels.tolist() == [1]
    (tmp_path / "custom.csv").write_text("truth,score_a,score_b,extra\n1,0.2,0.8,42\n")
    with pytest.raises(ValueError, match="--label-column"):
        load_predictions(tmp_path / "custom.csv")
    pred = load_predictions(tmp_path / "custom.csv", label_column="truth",
                            prob_columns=["score_a", "score_b"])
    assert pred.labels.tolist() == [1] and pred.probs.tolist() == [[0.2, 0.8]]
    pred = load_predictions(tmp_path / "custom.csv", label_column="truth",
                            ignore_columns=["extra"])
    assert pred.n_classes == 2
    # an unskippable text column: the error names it
    (tmp_path / "text_col.csv").write_text("label,source,p0,p1\n1,web,0.2,0.8\n")
    with pytest.raises(ValueError, match="line 2, column 'source': 'web' is not a number"):
        load_predictions(tmp_path / "text_col.csv")


def test_binary_n1_probabilities_and_1d_logits(tmp_path):
    """(n, 1) sigmoid outputs and 1-d / (n, 1) logits were refused."""
    p = np.array([[0.2], [0.9], [0.6]])
    np.savez(tmp_path / "probs_n1.npz", labels=np.array([0, 1, 1]), probs=p)
    pred = load_predictions(tmp_path / "probs_n1.npz")
    assert pred.probs[:, 1].tolist() == [0.2, 0.9, 0.6]
    z = np.array([0.3, -0.2])
    for logits in (z, z[:, None]):
        pred = Predictions.from_arrays([0, 1], logits=logits)
        np.testing.assert_allclose(pred.probs[:, 1], 1 / (1 + np.exp(-z)), rtol=1e-14)
    report = cn.evaluate(cn.as_predictions(z, [0, 1], kind="logits"), n_bins=[2])
    assert report.n_classes == 2


def test_float16_probabilities_are_accepted(tmp_path):
    """Float16 rows summing to 1.00012 were refused with the logits hint."""
    y, P = _calibrated(500)
    P16 = P.astype(np.float16)
    assert np.abs(P16.astype(np.float64).sum(axis=1) - 1).max() > 1e-4   # the case refused before
    np.savez(tmp_path / "f16.npz", labels=y, probs=P16)
    pred = load_predictions(tmp_path / "f16.npz")
    assert pred.n_samples == 500
    assert cn.tce(y, P16, 10) >= 0.0


def test_directory_is_named_as_a_directory(tmp_path):
    """A directory was reported as "no such file"."""
    (tmp_path / "adir.npz").mkdir()
    with pytest.raises(IsADirectoryError, match="is a directory, not a file"):
        load_predictions(tmp_path / "adir.npz")
    np.save(tmp_path / "p.npy", np.array([[0.5, 0.5]]))
    (tmp_path / "ydir").mkdir()
    with pytest.raises(IsADirectoryError, match="ydir: is a directory"):
        load_predictions(tmp_path / "p.npy", labels=tmp_path / "ydir")


def test_transposed_matrix_is_diagnosed(tmp_path):
    """A (k, n) matrix got "row 0 sums to 163.8 ... logits"."""
    y, P = _calibrated(500)
    np.savez(tmp_path / "transposed.npz", labels=y, probs=P.T)
    with pytest.raises(ValueError, match=r"shape \(3, 500\) but there are 500 labels: transposed"):
        load_predictions(tmp_path / "transposed.npz")
    np.savez(tmp_path / "swapped.npz", labels=P, probs=y)
    with pytest.raises(ValueError, match="swapped"):
        load_predictions(tmp_path / "swapped.npz")


def test_labels_array_with_a_predictions_file(tmp_path):
    """A label array with a .npy predictions file."""
    y, P = _calibrated(40)
    np.save(tmp_path / "p.npy", P)
    pred = load_predictions(tmp_path / "p.npy", labels=y)
    assert pred.labels.tolist() == y.tolist()


def test_csv_errors_name_the_file_line_and_column(tmp_path):
    """CSV errors used file lines, 0-based rows or matrix indexes, depending on the check."""
    header = "label,p0,p1\n"
    cases = {
        "nan": (header + "1,0.2,0.8\n0,nan,1\n", "line 3, column 'p0'"),
        "range": (header + "1,0.2,0.8\n0,1.5,-0.5\n", "line 3, column 'p0'"),
        "rowsum": (header + "1,0.2,0.8\n\n0,0.5,0.6\n", "line 4: the row sums to 1.1"),
        "label": (header + "1,0.2,0.8\n7,0.5,0.5\n", "line 3, column 'label'"),
        "text": (header + "1,0.2,x\n", "line 2, column 'p1': 'x' is not a number"),
    }
    for name, (text, where) in cases.items():
        (tmp_path / f"{name}.csv").write_text(text)
        with pytest.raises(ValueError, match=where):
            load_predictions(tmp_path / f"{name}.csv")


def test_one_based_labels_are_diagnosed(tmp_path):
    """Labels 1..k gave no hint; with class k absent they were silently off by one."""
    P = np.full((4, 3), 1 / 3)
    with pytest.raises(ValueError, match="1-based"):
        Predictions.from_arrays([1, 2, 3, 1], P)
    pred = Predictions.from_arrays([1, 2, 2, 1], P)
    assert any("1-based" in note for note in pred.notes)
    report = cn.evaluate(P, labels=[1, 2, 2, 1], n_bins=[2])
    assert any("1-based" in note for note in report.notes)
    fixed = Predictions.from_arrays([1, 2, 3, 1], P, classes=["1", "2", "3"])
    assert fixed.labels.tolist() == [0, 1, 2, 0]


def test_separate_labels_files_for_a_csv_and_headerless_files(tmp_path):
    """--labels had to be .npy and could not go with a CSV; no header was impossible."""
    (tmp_path / "probs.csv").write_text("p0,p1\n0.2,0.8\n0.7,0.3\n")
    (tmp_path / "labels.txt").write_text("1\n0\n")
    (tmp_path / "labels.csv").write_text("id,label\na,1\nb,0\n")
    for labels in ("labels.txt", "labels.csv"):
        pred = load_predictions(tmp_path / "probs.csv", labels=tmp_path / labels)
        assert pred.labels.tolist() == [1, 0]
    np.save(tmp_path / "p.npy", np.array([[0.2, 0.8], [0.7, 0.3]]))
    assert load_predictions(tmp_path / "p.npy",
                            labels=tmp_path / "labels.txt").labels.tolist() == [1, 0]
    (tmp_path / "noheader.csv").write_text("1,0.2,0.8\n0,0.7,0.3\n")
    pred = load_predictions(tmp_path / "noheader.csv", header=False, label_column=0)
    assert pred.probs.tolist() == [[0.2, 0.8], [0.7, 0.3]]
    with pytest.raises(ValueError, match="label_column=0"):
        load_predictions(tmp_path / "noheader.csv", header=False)
    (tmp_path / "comment.csv").write_text("# exported 2026-11-01\nlabel,p0,p1\n1,0.2,0.8\n")
    pred = load_predictions(tmp_path / "comment.csv")
    assert pred.labels.tolist() == [1] and any("comment" in note for note in pred.notes)


# ------------------------------------------------------------------------------- edge cases

def test_zip_with_non_npy_members(tmp_path):
    """A zip whose members are not .npy gave AttributeError."""
    import zipfile

    with zipfile.ZipFile(tmp_path / "textzip.npz", "w") as zf:
        zf.writestr("labels", "0,1")
        zf.writestr("probs", "0.5,0.5")
    with pytest.raises(ValueError, match="is not a NumPy array"):
        load_predictions(tmp_path / "textzip.npz")


@pytest.mark.parametrize("protocol", [0, 1])
def test_old_protocol_pickles_are_recognised(tmp_path, protocol):
    """Protocol 0/1 pickles renamed .npz got numpy's allow_pickle text, and
    --allow-pickle still refused them."""
    rng = np.random.default_rng(protocol)
    z, y = rng.normal(size=(6, 3)), rng.integers(0, 3, size=6)
    with open(tmp_path / "pickle_p.npz", "wb") as fh:
        pickle.dump(((z, y), (z, y)), fh, protocol=protocol)
    with pytest.raises(ValueError, match="this is a pickle file"):
        load_predictions(tmp_path / "pickle_p.npz")
    pred = load_predictions(tmp_path / "pickle_p.npz", allow_pickle=True)
    np.testing.assert_array_equal(pred.logits, z)


def test_huge_float_labels_show_the_value_and_leak_no_warning():
    """Labels 1e20 leaked a RuntimeWarning and were shown as -9223372036854775808."""
    with pytest.raises(ValueError, match=r"label 1e\+20 at index 0 is out of range"):
        Predictions.from_arrays(np.array([1e20, 0.0]), [[0.5, 0.5], [0.5, 0.5]])


def test_float_residue_just_outside_the_unit_interval_is_accepted():
    """1.0000000000000002 and -1e-17 were refused as outside [0, 1]."""
    P = np.array([[1.0000000000000002, 0.0], [-1e-17, 1.0]])
    pred = Predictions.from_arrays([0, 1], P)
    assert pred.probs.tolist() == [[1.0, 0.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match="outside"):
        Predictions.from_arrays([0], [[1.00005, 0.0, 0.0]])   # more than rounding: refused


def test_label_shapes(tmp_path):
    """(n, 1) labels were refused in .npz/.npy; one-hot labels got no hint."""
    np.savez(tmp_path / "y_n1.npz", labels=np.array([[0], [1]]), probs=np.array([0.2, 0.9]))
    assert load_predictions(tmp_path / "y_n1.npz").labels.tolist() == [0, 1]
    np.savez(tmp_path / "onehot.npz", labels=np.eye(3)[[0, 2]], probs=np.full((2, 3), 1 / 3))
    with pytest.raises(ValueError, match=r"one-hot.*argmax"):
        load_predictions(tmp_path / "onehot.npz")


def test_non_utf8_csv_names_the_file(tmp_path):
    """A latin-1 CSV gave "'utf-8' codec can't decode byte 0xe9" without the file name."""
    (tmp_path / "latin1.csv").write_bytes("label,caf\xe9,p1\n1,0.2,0.8\n".encode("latin-1"))
    with pytest.raises(ValueError, match=r"latin1.csv: not UTF-8 text \(byte 0xe9"):
        load_predictions(tmp_path / "latin1.csv")
    (tmp_path / "utf16.csv").write_bytes("label,p0,p1\n1,0.2,0.8\n".encode("utf-16"))
    assert load_predictions(tmp_path / "utf16.csv").labels.tolist() == [1]


def test_long_row_gets_a_line_number(tmp_path):
    """Rows longer than the header (every row, e.g. a trailing separator) gave "rows have
    4 fields, the header has 3" with no line number."""
    (tmp_path / "long.csv").write_text("label,p0,p1\n1,0.2,0.8,9\n0,0.5,0.5,9\n")
    with pytest.raises(ValueError, match="line 2 has 4 fields, the header has 3"):
        load_predictions(tmp_path / "long.csv")


def test_label_only_csv_and_single_column(tmp_path):
    """A CSV with only a label column got a confusing shape message."""
    (tmp_path / "only_label.csv").write_text("label\n1\n0\n")
    with pytest.raises(ValueError, match="no probability columns"):
        load_predictions(tmp_path / "only_label.csv")
    (tmp_path / "single.csv").write_text("label,p\n1,0.9\n")
    assert load_predictions(tmp_path / "single.csv").probs.tolist() == [[0.09999999999999998,
                                                                         0.9]]


def test_save_predictions_mentions_no_command_line_flag(tmp_path):
    """save_predictions said "(command line: --force)" but has no command line."""
    path = cn.save_predictions(tmp_path / "p.npz", [0], probs=[[0.5, 0.5]])
    with pytest.raises(FileExistsError) as info:
        cn.save_predictions(path, [0], probs=[[0.5, 0.5]])
    assert "command line" not in str(info.value)


def test_the_report_on_renormalized_input_matches_the_definition(tmp_path):
    """End to end: --renormalize on the 2-decimal file gives the ECE of the renormalized
    rows (the wrong number came from softmax on probabilities)."""
    y, P = _calibrated(400)
    path = _write_csv(tmp_path / "r.csv", ["label", "p0", "p1", "p2"], y, P, fmt="{:.2f}")
    report = cn.evaluate(cn.as_predictions(path, renormalize=True), n_bins=[15])
    R = np.round(P, 2)
    R = R / R.sum(axis=1, keepdims=True)
    row = next(r for r in report.rows
               if r["measure"] == "ECE" and r["aggregation"] == "confidence")
    assert abs(row["value"] - _top_label_ece(y, R, 15)) < 1e-12


def test_lines_are_file_lines_on_the_fast_path_too(tmp_path):
    """An all-numeric file is parsed by numpy; its errors must still give file lines
    (here after a comment line, CRLF line ends and a blank line) and column names."""
    text = "# exported\r\nlabel,p0,p1\r\n1,0.2,0.8\r\n\r\n0,0.25,0.8\r\n"
    (tmp_path / "crlf.csv").write_text(text, newline="")
    with pytest.raises(ValueError, match="line 5: the row sums to 1.05"):
        load_predictions(tmp_path / "crlf.csv")
    (tmp_path / "z.csv").write_text("label,z\n1,0.3\n0,nan\n")      # one logit column
    with pytest.raises(ValueError, match="non-finite logit nan at line 3, column 'z'"):
        load_predictions(tmp_path / "z.csv", kind="logits")
    (tmp_path / "mid.csv").write_text("label,p0,p1\n1,0.2,0.8\n# note\n0,0.5,0.5\n")
    with pytest.raises(ValueError, match="line 3 is a comment inside the data"):
        load_predictions(tmp_path / "mid.csv")


def test_utf16_without_bom_and_gzip_by_content(tmp_path):
    """UTF-16 without a byte-order mark (NUL bytes) is named as such; a gzip file is
    recognised by its content, and a .gz that is not gzip is refused clearly."""
    (tmp_path / "u16.csv").write_bytes("label,p0,p1\n1,0.2,0.8\n".encode("utf-16-le"))
    with pytest.raises(ValueError, match="u16.csv: contains NUL bytes: UTF-16"):
        load_predictions(tmp_path / "u16.csv")
    (tmp_path / "packed.csv").write_bytes(gzip.compress(b"label,p0,p1\n1,0.2,0.8\n"))
    assert load_predictions(tmp_path / "packed.csv").probs.tolist() == [[0.2, 0.8]]
    (tmp_path / "plain.csv.gz").write_bytes(b"label,p0,p1\n1,0.2,0.8\n")
    with pytest.raises(ValueError, match="named .gz but not gzip-compressed"):
        load_predictions(tmp_path / "plain.csv.gz")


def test_float16_probabilities_passed_as_logits_are_refused():
    """Logits mode on float16 probabilities: the simplex test uses the dtype's row-sum
    tolerance."""
    P = np.array([[0.1, 0.2, 0.7], [0.3, 0.3, 0.4]] * 20).astype(np.float16)
    assert np.abs(P.astype(np.float64).sum(axis=1) - 1).max() > 1e-4   # beyond ROW_SUM_ATOL
    with pytest.raises(ValueError, match="look like probabilities, not logits"):
        Predictions.from_arrays(np.zeros(40, dtype=int), logits=P)
