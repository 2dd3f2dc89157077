"""Messages for the objects people hold name the argument and say what to do: a labels string
that is no file, a classifier without ``predict_proba``, Dask labels with unknown chunks, a
Dask DataFrame, a list column, a polars LazyFrame."""

from __future__ import annotations

import numpy as np
import pytest

import calnotes as cn


def _data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([1.0, 1.0], n)
    y = (rng.random(n) < P[:, 1]).astype(int)
    return P, y


def test_a_labels_string_that_is_no_file_names_labels(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    P, y = _data(3)
    with pytest.raises(FileNotFoundError) as info:
        cn.evaluate(P, labels="0 1 2")
    assert str(info.value) == ("labels: 0 1 2: no such file (the string '0 1 2' was read as a"
                               " file path; pass values as a list or an array)")
    with pytest.raises(FileNotFoundError, match=r"^labels: nothere\.npy: no such file$"):
        cn.evaluate(P, labels="nothere.npy")
    np.save(tmp_path / "p.npy", P)
    with pytest.raises(FileNotFoundError, match=r"^labels: nothere\.txt: no such file$"):
        cn.evaluate("p.npy", labels="nothere.txt")


@pytest.mark.parametrize("make", ["SVC", "LinearSVC"])
def test_a_classifier_without_predict_proba_is_named(make):
    from sklearn import svm

    rng = np.random.default_rng(1)
    X = rng.normal(size=(40, 2))
    y = (X[:, 0] > 0).astype(int)
    model = getattr(svm, make)().fit(X, y)
    with pytest.raises(TypeError) as info:
        cn.evaluate(model, X=X, labels=y)
    message = str(info.value)
    assert message.startswith(f"X: {make} has no predict_proba")
    assert f"CalibratedClassifierCV({make}(), ensemble=False)" in message
    assert ("probability=True" in message) == (make == "SVC")   # only SVC takes it
    with pytest.raises(TypeError, match=f"^predictions: {make} has no predict_proba"):
        cn.evaluate(model, labels=y)


def test_dask_labels_with_unknown_chunks_get_the_compute_chunk_sizes_hint():
    da = pytest.importorskip("dask.array")
    P, y = _data(300)
    labels = da.from_array(y, chunks=100)
    labels = labels[labels >= 0]                     # unknown chunk sizes
    with pytest.raises(ValueError, match=r"^labels: the Dask array has unknown chunk sizes;"
                                         r" call \.compute_chunk_sizes\(\) first"):
        cn.evaluate(da.from_array(P, chunks=(100, 2)), labels=labels)


def test_a_dask_dataframe_is_read_like_a_pandas_one():
    pd = pytest.importorskip("pandas")
    dd = pytest.importorskip("dask.dataframe")
    P, y = _data()
    frame = pd.DataFrame({"label": y, "p0": P[:, 0], "p1": P[:, 1]})
    lazy = dd.from_pandas(frame, npartitions=3)
    expected = cn.as_predictions(frame)
    got = cn.as_predictions(lazy)
    assert got.labels.tolist() == expected.labels.tolist()
    assert got.probs.tolist() == expected.probs.tolist()
    separate = cn.as_predictions(frame[["p0", "p1"]], lazy["label"])   # a Dask Series
    assert separate.labels.tolist() == y.tolist()
    with pytest.raises(TypeError, match="^predictions: a Dask DataFrame, where out_of_core"):
        cn.as_predictions(lazy, out_of_core=True)


def test_a_list_column_is_told_to_be_expanded():
    pd = pytest.importorskip("pandas")
    P, y = _data(4)
    frame = pd.DataFrame({"label": y, "probs": list(P)})
    with pytest.raises(ValueError, match=r"^predictions: column 'probs': its cells are lists"
                                         r" \(\[.*\]\): a list column\? expand it into one"
                                         r" column per class"):
        cn.as_predictions(frame)
    pl = pytest.importorskip("polars")
    with pytest.raises(ValueError, match=r"column 'probs': its cells are lists"):
        cn.as_predictions(pl.DataFrame({"label": y, "probs": P.tolist()}))


def test_a_polars_lazyframe_is_told_to_collect():
    pl = pytest.importorskip("polars")
    P, y = _data(4)
    lazy = pl.DataFrame({"label": y, "p0": P[:, 0], "p1": P[:, 1]}).lazy()
    with pytest.raises(TypeError, match=r"^predictions: a polars LazyFrame \(a query that has"
                                        r" not run\); call \.collect\(\) first$"):
        cn.as_predictions(lazy)
    assert cn.as_predictions(lazy.collect()).labels.tolist() == y.tolist()
