"""Loading a user's predictions: every format, and every malformed file refused clearly."""

from __future__ import annotations

import pickle

import numpy as np
import pytest

from calnotes.data.loaders import Predictions, load_predictions, save_predictions


@pytest.fixture
def arrays():
    rng = np.random.default_rng(0)
    P = rng.dirichlet(np.ones(3), size=40)
    y = rng.integers(0, 3, size=40)
    return y, P


def _write_csv(path, text):
    path.write_text(text)
    return path


# ---------------------------------------------------------------------------------------- npz
def test_npz_round_trip_probs_and_logits(tmp_path, arrays):
    y, P = arrays
    got = load_predictions(save_predictions(tmp_path / "p.npz", y, probs=P))
    np.testing.assert_array_equal(got.labels, y)
    np.testing.assert_array_equal(got.probs, P)
    assert got.logits is None and got.n_classes == 3 and got.n_samples == 40
    Z = np.log(P) + 5.0
    got = load_predictions(save_predictions(tmp_path / "z.npz", y, logits=Z))
    np.testing.assert_array_equal(got.logits, Z)
    np.testing.assert_allclose(got.probs, P, rtol=1e-12)  # softmax(log P + c) = P


def test_npz_binary_vector_becomes_two_columns(tmp_path):
    np.savez(tmp_path / "b.npz", labels=np.array([0, 1, 1]), probs=np.array([0.1, 0.7, 1.0]))
    got = load_predictions(tmp_path / "b.npz")
    np.testing.assert_array_equal(got.probs[:, 1], [0.1, 0.7, 1.0])
    np.testing.assert_allclose(got.probs.sum(axis=1), 1.0)


@pytest.mark.parametrize("contents, message", [
    ({"probs": np.full((2, 2), 0.5)}, "no array named 'labels'"),
    ({"labels": np.array([0, 1])}, "neither of 'probs' and 'logits'"),
    ({"labels": np.array([0, 1]), "probs": np.full((2, 2), 0.5), "logits": np.zeros((2, 2))},
     "both of 'probs' and 'logits'"),
    ({"labels": np.array([0, 1]), "probs": np.array([[0.5, 0.6], [0.5, 0.5]])},
     "row 0 sums to 1.1.*must sum to one"),
    ({"labels": np.array([0, 1]), "probs": np.array([[np.nan, 1.0], [0.5, 0.5]])},
     "non-finite value nan"),
    ({"labels": np.array([0, 2]), "probs": np.full((2, 2), 0.5)}, "label 2 at index 1 is out"),
    ({"labels": np.array([0, 1, 1]), "probs": np.full((2, 2), 0.5)}, "has 3 labels but"),
    ({"labels": np.array([], dtype=int), "probs": np.empty((0, 2))}, "empty input"),
    ({"labels": np.array(["a", "b"]), "probs": np.full((2, 2), 0.5)},
     r"label 'a' is not a class index; pass the class names.*--classes"),
    ({"labels": np.array([0, 1]), "logits": np.array([[0.0, np.inf], [0.0, 1.0]])},
     "non-finite logit inf"),
])
def test_npz_malformed_is_refused(tmp_path, contents, message):
    np.savez(tmp_path / "bad.npz", **contents)
    with pytest.raises(ValueError, match=message):
        load_predictions(tmp_path / "bad.npz")


def test_npz_object_array_is_refused_without_unpickling(tmp_path):
    np.savez(tmp_path / "obj.npz", labels=np.array([0, 1], dtype=object),
             probs=np.full((2, 2), 0.5))
    with pytest.raises(ValueError, match="holds Python objects"):
        load_predictions(tmp_path / "obj.npz")


def test_npz_kind_must_match_file(tmp_path, arrays):
    y, P = arrays
    path = save_predictions(tmp_path / "p.npz", y, probs=P)
    with pytest.raises(ValueError, match="kind='logits' but the file holds 'probs'"):
        load_predictions(path, kind="logits")
    with pytest.raises(ValueError, match="holds its own labels"):
        load_predictions(path, labels="y.npy")


def test_corrupt_npz_is_refused(tmp_path):
    (tmp_path / "c.npz").write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(ValueError, match="cannot read as .npz"):
        load_predictions(tmp_path / "c.npz")


# ------------------------------------------------------------------------------------- pickle
def _nn_calibration_pickle(path, rng):
    z_val, z_test = rng.normal(size=(10, 4)), rng.normal(size=(12, 4))
    y_val, y_test = rng.integers(0, 4, size=(10, 1)), rng.integers(0, 4, size=(12, 1))
    with open(path, "wb") as fh:
        pickle.dump(((z_val, y_val), (z_test, y_test)), fh)
    return z_val, y_val, z_test, y_test


@pytest.mark.parametrize("name", ["logits.p", "logits.pkl", "disguised.npz", "noext"])
def test_pickle_is_refused_without_opt_in(tmp_path, name):
    _nn_calibration_pickle(tmp_path / name, np.random.default_rng(1))
    with pytest.raises(ValueError, match="pickle file; unpickling can run arbitrary code.*"
                                         "--allow-pickle"):
        load_predictions(tmp_path / name)


def test_pickle_with_opt_in_reads_both_splits(tmp_path):
    z_val, y_val, z_test, y_test = _nn_calibration_pickle(tmp_path / "l.p",
                                                          np.random.default_rng(2))
    test = load_predictions(tmp_path / "l.p", allow_pickle=True)
    np.testing.assert_array_equal(test.logits, z_test)
    np.testing.assert_array_equal(test.labels, y_test[:, 0])
    val = load_predictions(tmp_path / "l.p", allow_pickle=True, split="val")
    np.testing.assert_array_equal(val.logits, z_val)
    assert "[val]" in val.source


def test_pickle_of_wrong_structure(tmp_path):
    with open(tmp_path / "w.pkl", "wb") as fh:
        pickle.dump({"a": 1}, fh)
    with pytest.raises(ValueError, match=r"expected \(\(logits_val"):
        load_predictions(tmp_path / "w.pkl", allow_pickle=True)


# ---------------------------------------------------------------------------------------- npy
def test_npy_pair(tmp_path, arrays):
    y, P = arrays
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    got = load_predictions(tmp_path / "p.npy", labels=tmp_path / "y.npy")
    np.testing.assert_array_equal(got.probs, P)
    np.save(tmp_path / "z.npy", np.log(P))
    got = load_predictions(tmp_path / "z.npy", labels=tmp_path / "y.npy", kind="logits")
    np.testing.assert_allclose(got.probs, P, rtol=1e-12)


def test_npy_errors(tmp_path, arrays):
    y, P = arrays
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    with pytest.raises(ValueError, match="pass the labels file too"):
        load_predictions(tmp_path / "p.npy")
    with pytest.raises(FileNotFoundError, match="missing.npy: no such file"):
        load_predictions(tmp_path / "p.npy", labels=tmp_path / "missing.npy")
    np.save(tmp_path / "short.npy", y[:-1])
    with pytest.raises(ValueError, match="has 39 labels but the predictions have 40 rows"):
        load_predictions(tmp_path / "p.npy", labels=tmp_path / "short.npy")
    np.save(tmp_path / "obj.npy", np.array([0, 1], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="obj.npy: labels holds Python objects"):
        load_predictions(tmp_path / "p.npy", labels=tmp_path / "obj.npy")
    (tmp_path / "text.npy").write_text("0,1,2")
    with pytest.raises(ValueError, match="not a .npy file"):
        load_predictions(tmp_path / "p.npy", labels=tmp_path / "text.npy")
    np.save(tmp_path / "logits.npy", np.log(P) + 3)
    with pytest.raises(ValueError, match=r"outside \[0, 1\].*if these are logits, pass"
                                         r" kind='logits' \(command line: --logits\)"):
        load_predictions(tmp_path / "logits.npy", labels=tmp_path / "y.npy")


# ---------------------------------------------------------------------------------------- csv
def test_csv_reads_label_column_anywhere(tmp_path):
    path = _write_csv(tmp_path / "p.csv", "p0,Label,p1\n0.25,1,0.75\n0.5,0,0.5\n")
    got = load_predictions(path)
    np.testing.assert_array_equal(got.labels, [1, 0])
    np.testing.assert_array_equal(got.probs, [[0.25, 0.75], [0.5, 0.5]])


def test_csv_binary_score_column_and_logits(tmp_path):
    got = load_predictions(_write_csv(tmp_path / "b.csv", "y,p\n1,0.9\n0,0.2\n"))
    np.testing.assert_allclose(got.probs, [[0.1, 0.9], [0.8, 0.2]])
    got = load_predictions(_write_csv(tmp_path / "z.csv", "z0,z1,target\n0,0,1\n0,2,0\n"),
                           kind="logits")
    np.testing.assert_allclose(got.probs[0], [0.5, 0.5])


@pytest.mark.parametrize("text, message", [
    ("", r"empty file \(0 bytes\)"),
    ("# a comment only\n", "empty CSV file"),
    ("p0,p1,label\n", "no data rows"),
    ("p0,p1\n0.5,0.5\n", "exactly one label column"),
    ("label,y,p\n1,1,0.5\n", r"found \['label', 'y'\]"),
    ("p0,p1,label\n0.5,0.5,1\n0.5,oops,0\n", "line 3, column 'p1': 'oops' is not a number"),
    ("p0,p1,label\n0.5,0.5,1\n0.5,0.5\n", "line 3 has 2 fields, the header has 3"),
    ("p0,p1,label\n0.5,0.5,1.5\n", "label 1.5 at line 2, column 'label' is not an integer"),
    ("p0,p1,label\n0.5,0.6,1\n", "line 2: the row sums to 1.1"),
    ("p0,p1,label\n0.5,0.5,2\n", "label 2 at line 2, column 'label' is out of range"),
    ("p0,p1,label\nnan,1,1\n", "non-finite value nan at line 2, column 'p0'"),
])
def test_csv_malformed_is_refused(tmp_path, text, message):
    with pytest.raises(ValueError, match=message):
        load_predictions(_write_csv(tmp_path / "bad.csv", text))


# -------------------------------------------------------------------------------------- other
def test_missing_file_and_unknown_format(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such file"):
        load_predictions(tmp_path / "nothing.npz")
    (tmp_path / "x.json").write_text("{}")
    with pytest.raises(ValueError, match="unknown format '.json'"):
        load_predictions(tmp_path / "x.json")


def test_bad_arguments(tmp_path, arrays):
    y, P = arrays
    path = save_predictions(tmp_path / "p.npz", y, probs=P)
    with pytest.raises(ValueError, match="kind: expected 'probs' or 'logits'"):
        load_predictions(path, kind="scores")
    with pytest.raises(ValueError, match="split: expected 'test' or 'val'"):
        load_predictions(path, split="train")


def test_save_never_clobbers_without_force(tmp_path, arrays):
    y, P = arrays
    path = save_predictions(tmp_path / "p.npz", y, probs=P)
    before = path.read_bytes()
    with pytest.raises(FileExistsError, match="pass force=True"):
        save_predictions(path, y, probs=np.full_like(P, 1 / 3))
    assert path.read_bytes() == before
    save_predictions(path, y, probs=np.full_like(P, 1 / 3), force=True)
    np.testing.assert_array_equal(load_predictions(path).probs, np.full_like(P, 1 / 3))
    with pytest.raises(ValueError, match="should end in .npz"):
        save_predictions(tmp_path / "p.npy", y, probs=P)
    with pytest.raises(ValueError, match="exactly one of probs or logits"):
        save_predictions(tmp_path / "q.npz", y)
    with pytest.raises(ValueError, match="row 0 sums to"):  # validated before writing
        save_predictions(tmp_path / "r.npz", [0], probs=[[0.5, 0.6]])
    assert not (tmp_path / "r.npz").exists()


def test_predictions_from_arrays_validates():
    with pytest.raises(ValueError, match="label 5 at index 0"):
        Predictions.from_arrays([5], [[0.5, 0.5]])
