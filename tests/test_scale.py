"""Out-of-core evaluate (calnotes._engine.out_of_core) on a distributed.LocalCluster of 2 worker processes.

The reference is the in-memory :func:`calnotes.evaluate` on the same rows.  Integer quantities
(accuracy, 0-1 loss) must be equal exactly.  Floating-point values come from the same bin sums
added in another order (per chunk, then across chunks, instead of one pass over the sorted
column), so they agree to the rounding of those sums: a measure is a function of
``S_j = sum_p_j - sum_y_j`` and each ``sum_p_j`` carries a relative rounding error of order
``1e-16 * (number of terms)``.  With at most 10^4 terms the error of ``sum_j |S_j| / n`` is below
``1e-12 * mean(p) <= 1e-12`` in absolute terms (l1 rows), and that of ``sum_j S_j^2 / n^2``
below ``2 sqrt(value) * 1e-12`` (l2 rows, since ``max_j |S_j| / n <= sqrt(value)``); sums of
positive terms (the references, the proper losses) agree to ``1e-12`` relative.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("dask")
distributed = pytest.importorskip("distributed")

import dask.array as da  # noqa: E402

from calnotes import as_predictions, evaluate, evaluation  # noqa: E402
from calnotes._engine import out_of_core as scale  # noqa: E402
from calnotes.data import save_predictions  # noqa: E402

BINS = [3, 7, 15, 100]


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                                  dashboard_address=None) as cluster:
        with distributed.Client(cluster) as c:
            yield c


@pytest.fixture
def folded(monkeypatch):
    """In-memory l1 references by the folded-normal approximation, as out of core."""
    monkeypatch.setattr(evaluation.entry, "EXACT_L1_BUDGET", 0)


def in_memory(P, y, ties="average", bins=BINS):
    return evaluate(P, labels=y, n_bins=bins, ties=ties, significance=False,
                    smooth_ece=False, utility=False, progress=False)


def assert_same(mem, ooc):
    assert ooc.n_samples == mem.n_samples and ooc.n_classes == mem.n_classes
    assert ooc.accuracy == mem.accuracy                     # an integer count / n
    assert ooc.scores["zero_one"] == mem.scores["zero_one"]
    for key, value in mem.scores.items():
        assert ooc.scores[key] == pytest.approx(value, rel=1e-12, abs=0), key
    assert ooc.mean_confidence == pytest.approx(mem.mean_confidence, rel=1e-12, abs=0)
    assert len(ooc.rows) == len(mem.rows)
    for a, b in zip(mem.rows, ooc.rows):
        spec = (a["measure"], a["aggregation"], a["n_bins"])
        assert spec == (b["measure"], b["aggregation"], b["n_bins"])
        tol = 1e-12 if a["measure"] != "l2-QECE" else 2e-12 * np.sqrt(a["value"])
        assert abs(a["value"] - b["value"]) <= tol, (spec, a["value"], b["value"])
        assert b["reference_method"] == a["reference_method"], spec
        assert b["calibrated_reference"] == pytest.approx(a["calibrated_reference"],
                                                          rel=1e-12, abs=0), spec


def tied_problem(n=3000, k=4, seed=0):
    """Probabilities on a coarse grid (tie groups of ~100 rows, spread over every chunk), with
    outcomes from a miscalibrated model so the values are far from 0."""
    rng = np.random.default_rng(seed)
    P = np.round(rng.dirichlet(np.full(k, 0.7), size=n) * 10) / 10
    P[P.sum(axis=1) == 0, 0] = 1.0
    P /= P.sum(axis=1, keepdims=True)
    Q = P ** 1.5
    Q /= Q.sum(axis=1, keepdims=True)
    y = (Q.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return P, y


def straddled(x: np.ndarray, m: int) -> bool:
    """Does a tie group of ``x`` straddle an equal-mass boundary of ``m`` bins?"""
    xs = np.sort(x)
    b = (np.arange(1, m) * x.shape[0]) // m
    return bool(np.any(xs[b - 1] == xs[b]))


@pytest.mark.parametrize("ties", ["average", "position"])
@pytest.mark.parametrize("step", [None, 1, 7, 400])
def test_multiclass_heavy_ties_equal_in_memory(client, folded, ties, step):
    P, y = tied_problem()
    conf = P.max(axis=1)
    assert all(straddled(conf, m) for m in BINS[:3])            # the case under test exists
    assert straddled(P[:, 0], 15)
    mem = in_memory(P, y, ties)
    part = scale.evaluate_dask(da.from_array(P, chunks=(250, -1)), y, bins=BINS, ties=ties,
                               sample_step=step)
    ooc = evaluation.EvaluationReport(source="x", n_samples=part["n"], n_classes=part["k"],
                                      accuracy=part["accuracy"],
                                      mean_confidence=part["mean_confidence"],
                                      scores=part["scores"], rows=part["rows"])
    assert_same(mem, ooc)


def test_position_and_average_differ_here(folded):
    """The data make the tie rule matter, so the position test above can fail."""
    P, y = tied_problem()
    a, p = in_memory(P, y, "average"), in_memory(P, y, "position")
    assert any(abs(r["value"] - s["value"]) > 1e-6 for r, s in zip(a.rows, p.rows))


def test_evaluate_dask_array_binary_vector(client, folded):
    rng = np.random.default_rng(3)
    p = rng.choice([0.05, 0.2, 0.5, 0.5, 0.8, 0.95], size=2500)
    y = (rng.random(2500) < np.clip(p + 0.1, 0, 1)).astype(int)
    for ties in ("average", "position"):
        mem = in_memory(p, y, ties, bins=[2, 5, 15])
        ooc = evaluate(da.from_array(p, chunks=333), labels=da.from_array(y, chunks=500),
                       n_bins=[2, 5, 15], ties=ties)
        assert_same(mem, ooc)
        assert any("out of core" in note for note in ooc.notes)
        assert all("p_value" not in row for row in ooc.rows)


def test_shard_folder_equals_concatenation(client, folded, tmp_path):
    P, y = tied_problem(n=1200, k=3, seed=5)
    cuts = [0, 100, 550, 551, 1200]                     # uneven shards, one of a single row
    for i, (a, b) in enumerate(zip(cuts[:-1], cuts[1:])):
        save_predictions(tmp_path / f"part-{i}.npz", y[a:b], probs=P[a:b])
    (tmp_path / "part-10.npz").write_bytes((tmp_path / "part-3.npz").read_bytes())
    (tmp_path / "part-3.npz").unlink()                 # natural order: part-2 < part-10
    ooc = evaluate(tmp_path, n_bins=BINS)
    assert_same(in_memory(P, y), ooc)
    assert ooc.source == str(tmp_path)


def test_npy_pair_shards_and_memmap(client, folded, tmp_path):
    P, y = tied_problem(n=900, k=3, seed=6)
    shards = tmp_path / "shards"
    shards.mkdir()
    for i, (a, b) in enumerate([(0, 400), (400, 900)]):
        np.save(shards / f"s{i}.probs.npy", P[a:b])
        np.save(shards / f"s{i}.labels.npy", y[a:b])
    mem = in_memory(P, y)
    assert_same(mem, evaluate(shards, n_bins=BINS))
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    ooc = evaluate(tmp_path / "p.npy", labels=tmp_path / "y.npy", out_of_core=True,
                   n_bins=BINS)
    assert_same(mem, ooc)
    P_chunks, _ = scale.open_npy(tmp_path / "p.npy", y, chunk_rows=128)
    assert P_chunks.chunks[0] == (128,) * 7 + (4,)


def test_write_skips_figures(client, tmp_path):
    P, y = tied_problem(n=300, k=3)
    report = evaluate(da.from_array(P, chunks=(100, -1)), labels=y, n_bins=[5],
                      out=tmp_path / "r")
    assert sorted(p.name for p in (tmp_path / "r").iterdir()) == ["report.csv", "report.json"]
    assert any("figures are not drawn" in note for note in report.notes)


def test_out_of_false_computes_dask_in_memory(folded):
    P, y = tied_problem(n=400, k=3)
    mem = in_memory(P, y)
    got = evaluate(da.from_array(P, chunks=(100, -1)), labels=y, n_bins=BINS,
                   out_of_core=False, significance=False, smooth_ece=False, utility=False,
                   progress=False)
    assert got.rows == mem.rows


# ---------------------------------------------------------------------- malformed input
def test_nan_in_a_chunk_names_the_rows():
    P, y = tied_problem(n=600, k=3)
    P[450, 1] = np.nan
    with pytest.raises(ValueError, match=r"rows 400\.\.599 of the out-of-core input"
                                         r".*nan at index \[450, 1\]"):
        evaluate(da.from_array(P, chunks=(200, -1)), labels=y, n_bins=[5])


def test_labels_out_of_range_in_a_chunk():
    P, y = tied_problem(n=600, k=3)
    y[10] = 3
    with pytest.raises(ValueError, match=r"rows 0\.\.199 .*labels"):
        evaluate(da.from_array(P, chunks=(200, -1)), labels=y, n_bins=[5])


def test_rows_not_summing_to_one():
    P, y = tied_problem(n=600, k=3)
    P[599] = [0.5, 0.4, 0.05]
    with pytest.raises(ValueError, match=r"rows 400\.\.599 .*sum"):
        evaluate(da.from_array(P, chunks=(200, -1)), labels=y, n_bins=[5])


@pytest.mark.parametrize("labels, message", [
    (None, "labels: required"),
    (np.zeros(5, dtype=int), r"labels: expected shape \(600,\)"),
])
def test_dask_labels_checked(labels, message):
    P, _ = tied_problem(n=600, k=3)
    with pytest.raises(ValueError, match=message):
        evaluate(da.from_array(P, chunks=(200, -1)), labels=labels, n_bins=[5])


def test_unknown_chunks_and_empty_input():
    P, y = tied_problem(n=60, k=3)
    x = da.from_array(P, chunks=(20, -1))
    unknown = x[x[:, 0] >= 0]
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        evaluate(unknown, labels=y, n_bins=[5])
    with pytest.raises(ValueError, match="empty input"):
        evaluate(da.zeros((0, 3), chunks=(10, 3)), labels=np.zeros(0, dtype=int))


def test_options_that_do_not_apply_out_of_core(tmp_path):
    P, y = tied_problem(n=60, k=3)
    x = da.from_array(P, chunks=(20, -1))
    with pytest.raises(ValueError, match="kind: logits are not supported out of core"):
        evaluate(as_predictions(x, y, kind="logits"))
    with pytest.raises(ValueError, match="renormalize: a loader option"):
        evaluate(as_predictions(x, y, renormalize=True))
    with pytest.raises(TypeError, match="out_of_core .*expected True, False or None"):
        evaluate(x, labels=y, out_of_core="yes")
    csv = tmp_path / "p.csv"
    csv.write_text("label,a,b\n0,0.5,0.5\n")
    with pytest.raises(ValueError, match="out of core reads a .npy file"):
        evaluate(csv, out_of_core=True)
    with pytest.raises(ValueError, match="out_of_core=False"):
        evaluate(tmp_path, out_of_core=False)


def test_bad_shard_folders(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(ValueError, match="holds no shards"):
        evaluate(empty)
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    save_predictions(mixed / "a.npz", [0, 1], probs=[0.2, 0.9])
    np.save(mixed / "b.probs.npy", np.array([0.5]))
    with pytest.raises(ValueError, match="mixes .npz shards and .probs.npy"):
        evaluate(mixed)
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    np.save(lonely / "b.probs.npy", np.array([0.5]))
    with pytest.raises(FileNotFoundError, match="no labels file b.labels.npy"):
        evaluate(lonely)
    short = tmp_path / "short"
    short.mkdir()
    np.save(short / "b.probs.npy", np.array([0.5, 0.5]))
    np.save(short / "b.labels.npy", np.array([1]))
    with pytest.raises(ValueError, match=r"shape \(2,\) and labels of shape \(1,\)"):
        evaluate(short)
    logits = tmp_path / "logits"
    logits.mkdir()
    np.savez(logits / "a.npz", labels=np.array([0, 1]), logits=np.zeros((2, 2)))
    with pytest.raises(ValueError, match="no array named 'probs'"):
        evaluate(logits)
    widths = tmp_path / "widths"
    widths.mkdir()
    save_predictions(widths / "a.npz", [0, 1], probs=[[0.5, 0.5], [0.2, 0.8]])
    save_predictions(widths / "b.npz", [0, 1], probs=[[0.5, 0.25, 0.25], [0.2, 0.4, 0.4]])
    with pytest.raises(ValueError, match="disagree on the number of classes"):
        evaluate(widths)
    with pytest.raises(ValueError, match="labels: a folder of shards holds its own labels"):
        evaluate(widths, labels=[0, 1])


def test_object_arrays_refused(tmp_path):
    np.save(tmp_path / "p.npy", np.array([0.5, "x"], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="Python objects"):
        evaluate(tmp_path / "p.npy", labels=np.zeros(2, dtype=int), out_of_core=True)


def test_brackets_are_certain():
    """The regular-sampling brackets contain the order statistics for every rank, whatever
    the chunking (the property the exactness rests on), on data with heavy ties."""
    rng = np.random.default_rng(11)
    x = np.round(rng.random(997), 1)
    xs = np.sort(x)
    for chunks in ([997], [100] * 9 + [97], [1, 500, 496]):
        for s in (1, 2, 5, 13, 600):
            parts = np.split(x, np.cumsum(chunks)[:-1])
            pooled = np.sort(np.concatenate([np.sort(p)[s - 1::s] for p in parts]))
            ranks = np.arange(997)
            lo, hi = scale._brackets(pooled, ranks, s, len(parts))
            assert np.all(lo <= xs) and np.all(xs <= hi)


def test_command_line_folder_and_out_of_core_flag(client, tmp_path, capsys):
    from calnotes.cli import main

    P, y = tied_problem(n=300, k=3, seed=8)
    shards = tmp_path / "shards"
    shards.mkdir()
    save_predictions(shards / "a.npz", y[:120], probs=P[:120])
    save_predictions(shards / "b.npz", y[120:], probs=P[120:])
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    assert main(["evaluate", str(shards), "--bins", "5"]) == 0
    folder_out = capsys.readouterr().out
    assert main(["evaluate", str(tmp_path / "p.npy"), "--labels", str(tmp_path / "y.npy"),
                 "--bins", "5", "--out-of-core", "--out", str(tmp_path / "r")]) == 0
    flag_out = capsys.readouterr().out
    for text in (folder_out, flag_out):
        assert "computed out of core" in text and "l2-QECE" in text
    table = lambda text: [line for line in text.splitlines() if "QECE" in line]  # noqa: E731
    assert table(folder_out) == table(flag_out)          # same rows, same numbers
    assert (tmp_path / "r" / "report.json").is_file()
    assert not (tmp_path / "r" / "reliability.png").exists()
