"""Provenance and outputs that cannot mix, and one representation of the same input in memory
and out of core: the input's hash taken when it is read, report folders replaced whole or not
at all, concurrent runs, repeated ``--bins``, the utility tie-break, huge integer answers,
tuple parameters and up-front checks of ``calnotes run``, shard folders.  The speed of the
report is left to the benchmarks (see the end of the file).

Every test builds its own small input in ``tmp_path``.  Expected values come from the inputs
(hashlib on the bytes written, accuracy from the arrays), never from the code under test.
Out-of-core tests use Dask's threaded scheduler (what is tested is what is read, not
processes).  In-memory and out-of-core numbers are compared as in ``tests/test_scale.py``:
integer quantities (accuracy) exactly, floating-point sums to ``1e-12`` relative (the same
sums in another order; fewer than 10^4 terms each, so rounding stays below ``1e-12``), with
the l1 references folded-normal in memory as out of core.

Every test fails on commit 9a2840a except ``test_stale_utility_figure_removed_by_force``:
that half of the stale-figure case (``--force --no-utility`` over a full report) already
removed the old ``utility_ecdf.png`` there (``EvaluationReport.write`` unlinked it), so it
stays as a guard; the half that failed (an out-of-core report over an in-memory one kept all
three old figures) is ``test_out_of_core_report_over_in_memory_one``.  Run time: about 25 s
on two shared cores.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import calnotes
from calnotes import cli, evaluation
from calnotes.evaluation import inputs
from calnotes.data import save_predictions
from myst_chapter import myst_chapter

FAST = dict(significance=False, utility=False, smooth_ece=False, progress=False)
CLI_FAST = ["--no-significance", "--no-utility", "--bins", "5"]


def calibrated(n, k, seed):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k), size=n)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return P, y


def sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def snapshot(folder) -> dict:
    return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir())}


def accuracy(P, y) -> float:
    return float(np.mean(P.argmax(axis=1) == y))


@pytest.fixture
def threads():
    dask = pytest.importorskip("dask")
    with dask.config.set(scheduler="threads"):
        yield


@pytest.fixture
def folded(monkeypatch):
    """In-memory l1 references by the folded-normal approximation, as out of core."""
    monkeypatch.setattr(evaluation.entry, "EXACT_L1_BUDGET", 0)


def assert_same_report(mem, ooc):
    assert (ooc.n_samples, ooc.n_classes) == (mem.n_samples, mem.n_classes)
    assert ooc.accuracy == mem.accuracy
    for key, value in mem.scores.items():
        assert ooc.scores[key] == pytest.approx(value, rel=1e-12, abs=0), key
    pairs = [(a, b) for a in mem.rows for b in ooc.rows
             if (a["measure"], a["aggregation"], a["n_bins"])
             == (b["measure"], b["aggregation"], b["n_bins"])]
    assert len(pairs) == len(ooc.rows) > 0
    for a, b in pairs:
        assert b["value"] == pytest.approx(a["value"], rel=1e-12, abs=1e-15)
        assert b["calibrated_reference"] == pytest.approx(a["calibrated_reference"],
                                                          rel=1e-12, abs=1e-15)


# =================================================================================== provenance

def test_hash_taken_at_load_time(tmp_path, monkeypatch):
    """The file is replaced during the computation: the report keeps the numbers and the hash
    of the file that was loaded (A), not of its replacement (B)."""
    Pa, ya = calibrated(200, 3, 1)
    Pb, yb = calibrated(300, 3, 2)
    path = save_predictions(tmp_path / "race.npz", ya, probs=Pa)
    other = save_predictions(tmp_path / "b.npz", yb, probs=Pb)
    sha_a, sha_b = sha(path), sha(other)
    real = calnotes._engine.rows.binned_rows

    def replace_then_compute(*args, **kwargs):
        os.replace(other, path)                  # B replaces A after A was loaded
        return real(*args, **kwargs)

    monkeypatch.setattr(calnotes._engine.rows, "binned_rows", replace_then_compute)
    report = calnotes.evaluate(path, n_bins=[5], **FAST)
    assert sha(path) == sha_b                    # the file now holds B
    assert report.input_sha256 == sha_a
    assert report.n_samples == 200 and report.accuracy == accuracy(Pa, ya)
    assert json.loads(report.to_json())["input_sha256"] == sha_a


def test_input_removed_during_run_keeps_the_report(tmp_path, monkeypatch, capsys):
    P, y = calibrated(200, 3, 3)
    path = save_predictions(tmp_path / "gone.npz", y, probs=P)
    expected = sha(path)
    real = calnotes._engine.rows.binned_rows

    def remove_then_compute(*args, **kwargs):
        os.remove(path)
        return real(*args, **kwargs)

    monkeypatch.setattr(calnotes._engine.rows, "binned_rows", remove_then_compute)
    out = tmp_path / "out"
    assert cli.main(["evaluate", str(path), *CLI_FAST, "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert f"input sha256 {expected}" in printed and not path.exists()
    assert json.loads((out / "report.json").read_text())["input_sha256"] == expected


def test_file_changed_while_loading_is_refused(tmp_path, monkeypatch):
    """A file rewritten while it is being read: its hash and the loaded numbers could describe
    different bytes, so the run stops with the file named (not a silent mismatch)."""
    Pa, ya = calibrated(200, 3, 4)
    Pb, yb = calibrated(200, 3, 5)
    path = save_predictions(tmp_path / "moving.npz", ya, probs=Pa)
    real = inputs.load_predictions

    def load_then_rewrite(*args, **kwargs):
        pred = real(*args, **kwargs)
        save_predictions(tmp_path / "new.npz", yb, probs=Pb)
        os.replace(tmp_path / "new.npz", path)
        return pred

    monkeypatch.setattr(inputs, "load_predictions", load_then_rewrite)
    with pytest.raises(ValueError, match=r"predictions: .*moving\.npz changed while it was"
                                         " being read"):
        calnotes.evaluate(path, n_bins=[5], **FAST)


def test_labels_file_hashed_at_load_time(tmp_path, monkeypatch):
    P, y = calibrated(150, 3, 6)
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    expected = sha(tmp_path / "y.npy")
    real = calnotes._engine.rows.binned_rows

    def rewrite_labels(*args, **kwargs):
        np.save(tmp_path / "y.npy", np.zeros_like(y))
        return real(*args, **kwargs)

    monkeypatch.setattr(calnotes._engine.rows, "binned_rows", rewrite_labels)
    report = calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "y.npy", n_bins=[5], **FAST)
    assert report.labels_sha256 == expected != sha(tmp_path / "y.npy")
    assert report.input_sha256 == sha(tmp_path / "p.npy")


def test_out_of_core_hash_and_file_replaced_during_run(tmp_path, monkeypatch, threads):
    """Out of core the .npy file is read during the computation: its hash is recorded as in
    memory, and a file replaced during the run (the numbers would mix two files) is refused."""
    from calnotes._engine import out_of_core as scale

    P, y = calibrated(200, 3, 18)
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    report = calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "y.npy", n_bins=[5],
                               out_of_core=True)
    assert report.input_sha256 == sha(tmp_path / "p.npy")
    assert report.labels_sha256 == sha(tmp_path / "y.npy")
    real = scale.evaluate_dask

    def replace_then_compute(*args, **kwargs):
        np.save(tmp_path / "new.npy", P[::-1].copy())
        os.replace(tmp_path / "new.npy", tmp_path / "p.npy")
        return real(*args, **kwargs)

    monkeypatch.setattr(scale, "evaluate_dask", replace_then_compute)
    with pytest.raises(ValueError, match=r"p\.npy changed while it was being read"):
        calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "y.npy", n_bins=[5],
                          out_of_core=True)


# ======================================================================== outputs that cannot mix

def _first_run(tmp_path, capsys, extra=()):
    P, y = calibrated(120, 3, 7)
    first = save_predictions(tmp_path / "first.npz", y, probs=P)
    out = tmp_path / "runs" / "report"
    assert cli.main(["evaluate", str(first), *CLI_FAST, "--out", str(out), *extra]) == 0
    capsys.readouterr()
    P2, y2 = calibrated(80, 3, 8)
    second = save_predictions(tmp_path / "second.npz", y2, probs=P2)
    return out, second


def test_force_run_failing_halfway_keeps_the_earlier_set(tmp_path, monkeypatch, capsys):
    out, second = _first_run(tmp_path, capsys)
    before = snapshot(out)
    assert set(before) == {"report.json", "report.csv", "reliability.png", "sharpness.png"}

    def denied(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(evaluation.entry, "_sharpness_figure", denied)
    assert cli.main(["evaluate", str(second), *CLI_FAST, "--out", str(out), "--force"]) == 2
    captured = capsys.readouterr()
    assert "second.npz: n = 80" in captured.out            # the table came first
    assert "sharpness.png" in captured.err and "nothing in" in captured.err
    assert "was changed" in captured.err
    assert snapshot(out) == before                           # not one file of the new run
    assert sorted(p.name for p in out.parent.iterdir()) == ["report"]   # no temporary folder


def test_failure_while_moving_restores_the_earlier_set(tmp_path, monkeypatch, capsys):
    out, second = _first_run(tmp_path, capsys)
    before = snapshot(out)
    real = os.replace
    failed = []

    def fail_on_reliability(src, dst, *args, **kwargs):
        """The new reliability.png cannot be moved in place (once: restoring works)."""
        if Path(dst) == out / "reliability.png" and ".earlier" not in str(src) and not failed:
            failed.append(src)
            raise PermissionError(13, "Permission denied")
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", fail_on_reliability)
    assert cli.main(["evaluate", str(second), *CLI_FAST, "--out", str(out), "--force"]) == 2
    err = capsys.readouterr().err
    monkeypatch.setattr(os, "replace", real)
    assert "cannot replace" in err and "reliability.png" in err
    assert "kept unchanged" in err
    assert snapshot(out) == before
    kept = [p for p in out.parent.iterdir() if p.name != "report"]
    assert len(kept) == 1 and str(kept[0]) in err          # the new files, named in the error
    assert json.loads((kept[0] / "report.json").read_text())["n_samples"] == 80


def test_stale_utility_figure_removed_by_force(tmp_path, capsys):
    """A guard: this case (--force --no-utility over a full report) already removed the old
    utility_ecdf.png on 9a2840a; the case that failed there is the next test's."""
    P, y = calibrated(120, 3, 7)
    first = save_predictions(tmp_path / "first.npz", y, probs=P)
    out = tmp_path / "out"
    assert cli.main(["evaluate", str(first), "--no-significance", "--bins", "5",
                     "--utility-samples", "20", "--out", str(out)]) == 0
    assert (out / "utility_ecdf.png").exists()
    (out / "notes.txt").write_text("the user's own file")
    P2, y2 = calibrated(80, 3, 8)
    second = save_predictions(tmp_path / "second.npz", y2, probs=P2)
    assert cli.main(["evaluate", str(second), *CLI_FAST, "--out", str(out), "--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["notes.txt", "reliability.png",
                                                     "report.csv", "report.json",
                                                     "sharpness.png"]
    assert (out / "notes.txt").read_text() == "the user's own file"   # not a report file
    assert json.loads((out / "report.json").read_text())["n_samples"] == 80


def test_out_of_core_report_over_in_memory_one(tmp_path, capsys, threads):
    out, _ = _first_run(tmp_path, capsys)
    P, y = calibrated(90, 3, 9)
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y)
    args = ["evaluate", str(tmp_path / "p.npy"), "--labels", str(tmp_path / "y.npy"),
            "--out-of-core", "--bins", "5", "--out", str(out)]
    assert cli.main(args) == 2                               # the old figures count
    assert "reliability.png" in capsys.readouterr().err
    assert cli.main(args + ["--force"]) == 0
    assert sorted(p.name for p in out.iterdir()) == ["report.csv", "report.json"]
    assert json.loads((out / "report.json").read_text())["n_samples"] == 90


def test_dangling_symlink_out_refused_before_computing(tmp_path, capsys, monkeypatch):
    P, y = calibrated(60, 3, 10)
    path = save_predictions(tmp_path / "a.npz", y, probs=P)
    link = tmp_path / "outdangling"
    link.symlink_to(tmp_path / "nowhere")

    def never(*args, **kwargs):
        raise AssertionError("computed before --out was checked")

    monkeypatch.setattr(calnotes._engine.rows, "binned_rows", never)
    assert cli.main(["evaluate", str(path), *CLI_FAST, "--out", str(link)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "--out" in captured.err and "symbolic link" in captured.err
    assert "nowhere" in captured.err
    with pytest.raises(FileNotFoundError, match="symbolic link"):
        evaluation.check_out(link / "below")
    monkeypatch.undo()
    # a link to an existing folder is followed: the files land in its target
    target = tmp_path / "elsewhere" / "reports"
    target.mkdir(parents=True)
    good = tmp_path / "outlink"
    good.symlink_to(target)
    report = calnotes.evaluate(P, labels=y, n_bins=[5], **FAST)
    report.write(good, figure=False)
    assert sorted(p.name for p in target.iterdir()) == ["report.csv", "report.json"]
    assert sorted(p.name for p in target.parent.iterdir()) == ["reports"]


class _SlowFigure:
    """A figure whose file is written in many small pieces, tagged by its writer."""

    def __init__(self, tag: bytes):
        self.tag = tag

    def savefig(self, path, dpi=None):
        with open(path, "wb") as fh:
            for _ in range(40):
                fh.write(self.tag * 64)
                fh.flush()
                time.sleep(0.0005)


def test_concurrent_runs_never_interleave(tmp_path):
    """Two runs write into the same folder at the same moment (a barrier starts them
    together; each figure takes about 20 ms to write): every file holds one run's bytes, in
    full, and the whole set comes from one run."""
    reports = {}
    for tag, n in ((b"A", 50), (b"B", 70)):
        P, y = calibrated(n, 3, n)
        report = calnotes.evaluate(P, labels=y, n_bins=[5], **FAST)
        report._figure = lambda tag=tag: _SlowFigure(tag)
        report._sharpness_figure = lambda tag=tag: _SlowFigure(tag)
        reports[tag] = report
    out = tmp_path / "out"
    for _ in range(3):
        errors, barrier = [], threading.Barrier(2)

        def writer(tag):
            try:
                barrier.wait()
                reports[tag].write(out, force=True)
            except Exception as exc:                      # noqa: BLE001 - reported below
                errors.append(exc)

        workers = [threading.Thread(target=writer, args=(tag,)) for tag in reports]
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        assert errors == []
        files = snapshot(out)
        tags = {name: set(c) for name, c in files.items() if name.endswith(".png")}
        assert all(len(t) == 1 for t in tags.values()), "a figure holds two runs' bytes"
        assert all(len(c) == 40 * 64 for name, c in files.items() if name.endswith(".png"))
        (tag,) = set.union(*tags.values())                   # one run wrote every figure
        assert json.loads(files["report.json"])["n_samples"] == {ord("A"): 50,
                                                                 ord("B"): 70}[tag]
        assert files["report.csv"] == reports[bytes([tag])].to_csv().encode()
        assert sorted(p.name for p in tmp_path.iterdir()) == ["out"]   # no temporary folder


# =================================================================================== --bins twice

def test_repeated_bins_adds_counts(tmp_path, capsys):
    P, y = calibrated(100, 3, 11)
    path = save_predictions(tmp_path / "a.npz", y, probs=P)
    assert cli.main(["evaluate", str(path), "--no-significance", "--no-utility", "--bins", "5",
                     "--bins", "8", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)["measures"]
    assert {r["n_bins"] for r in rows if r["measure"] == "ECE"} == {5, 8}


# ============================================================================ utility tie-break

def test_worst_class_does_not_depend_on_row_order():
    """A binary model: U_CWE's two class errors are equal in exact arithmetic (p_1 = 1 - p_0,
    1{y = 1} = 1 - 1{y = 0}), so the worst class is a tie that must not follow the row order:
    the lower class index wins, with the same interval and direction in every order."""
    rng = np.random.default_rng(12)
    p = np.round(rng.uniform(0.05, 0.95, size=300), 2)
    y = (rng.uniform(size=300) < np.clip(p + 0.08, 0, 1)).astype(int)
    P = np.column_stack([1 - p, p])
    orders = [np.arange(300), np.argsort(y, kind="stable"), np.argsort(-y, kind="stable"),
              np.argsort(p, kind="stable")] + [rng.permutation(300) for _ in range(4)]
    seen = set()
    for order in orders:
        report = calnotes.evaluate(P[order], labels=y[order], n_bins=[5], utility_samples=20,
                                   significance=False, smooth_ece=False, progress=False)
        cwe = next(c for c in report.utility["classes"] if c["class"] == "U_CWE")
        seen.add((cwe["utility"], cwe["direction"], round(cwe["lower"], 12),
                  round(cwe["upper"], 12), round(cwe["uc"], 12)))
    assert len(seen) == 1 and next(iter(seen))[0] == "class 0"


def test_ties_go_to_the_lower_index():
    from calnotes.theory.utility import UCResult

    values = np.array([0.25, 0.25 + 1e-14, 0.1, 0.25 - 1e-14])
    res = UCResult(values, np.zeros(4), np.ones(4), np.array([1, -1, 1, -1]), np.ones(4),
                   names=("class 0", "class 1", "class 2", "class 3"))
    assert [w["utility"] for w in res.worst(4)] == ["class 0", "class 1", "class 3", "class 2"]
    assert [w["uc"] for w in res.worst(4)] == [values[0], values[1], values[3], values[2]]
    assert res.max == values[1]                              # the values are not changed


# ============================================================================== huge integers

def test_huge_integer_answer_is_not_yet():
    from calnotes.book.exercises import check

    for answer in (10**400, -10**400, "10**400"):
        verdict = check("ex-smallest-k", answer)
        assert verdict.correct is False and "not yet" in str(verdict)


# ================================================================ tuple parameters of calnotes run

def test_tuple_parameter_injected_as_tuple(caplog):
    from calnotes.book.chapters import _python_translator

    translator = _python_translator()
    cell = translator.codify({"sim_size": (4, 60, 6), "one": (1,), "s": "x"})
    assert "sim_size = (4, 60, 6)" in cell and "one = (1,)" in cell and 's = "x"' in cell
    with caplog.at_level("WARNING"):                # table1's line 5 has '=' in its comment
        found = translator.inspect({"source": "eps1 = 0.1  # y = x + 1 (mod k)\n"
                                              "sim_size = (4, 60, 6)  # (k, n, m)"})
    assert [p.name for p in found] == ["eps1", "sim_size"]
    assert "Unable to parse" not in caplog.text


_CHAPTER = myst_chapter('''# Tiny

```{code-cell} ipython3
:tags: [parameters]
eps1 = 0.1             # label noise: y = x + 1 (mod k) with this probability
sim_size = (4, 60, 6)  # (k, n, m)
```

```{code-cell} ipython3
assert isinstance(sim_size, tuple) and sim_size == (3, 30, 5), repr(sim_size)
print("k, n, m =", *sim_size)
```
''')


def test_tuple_parameter_end_to_end(tmp_path, caplog):
    pytest.importorskip("papermill")
    from calnotes.book import chapters

    book = tmp_path / "book"
    book.mkdir()
    (book / "_toc.yml").write_text("format: jb-book\nroot: tiny\n")
    (book / "tiny.md").write_text(_CHAPTER)
    value = chapters.parse_value("(3, 30, 5)", (4, 60, 6))
    with caplog.at_level("WARNING"):
        target = chapters.run_chapter("tiny", {"sim_size": value}, tmp_path / "run", root=book)
    assert "Unable to parse" not in caplog.text
    text = target.read_text()
    assert "sim_size = (3, 30, 5)" in text and "k, n, m = 3 30 5" in text


# =========================================================== in memory and out of core alike

def test_dot_files_in_shard_folder_skipped(tmp_path, threads, folded):
    P, y = calibrated(400, 3, 13)
    folder = tmp_path / "shards"
    folder.mkdir()
    save_predictions(folder / "part-0.npz", y[:250], probs=P[:250])
    save_predictions(folder / "part-1.npz", y[250:], probs=P[250:])
    (folder / "._part-0.npz").write_bytes(b"\x00\x05\x16\x07\x00\x02\x00\x00Mac OS X        ")
    (folder / ".DS_Store").write_bytes(b"\x00\x00\x00\x01Bud1")
    ooc = calnotes.evaluate(folder, n_bins=[5, 10])
    assert ooc.n_samples == 400 and ooc.accuracy == accuracy(P, y)
    assert_same_report(calnotes.evaluate(P, labels=y, n_bins=[5, 10], **FAST), ooc)


def test_string_labels_in_a_shard_named(tmp_path, threads):
    P, y = calibrated(300, 3, 14)
    folder = tmp_path / "shards"
    folder.mkdir()
    save_predictions(folder / "part-0.npz", y[:150], probs=P[:150])
    np.savez(folder / "part-1.npz", labels=np.array(["a", "b", "c"])[y[150:]], probs=P[150:])
    with pytest.raises(ValueError) as info:
        calnotes.evaluate(folder, n_bins=[5])
    text = str(info.value)
    assert "part-1.npz" in text and "part-0.npz" not in text and "rows 0.." not in text


def test_text_labels_file_same_in_memory_and_out_of_core(tmp_path, threads, folded):
    P, y = calibrated(300, 3, 15)
    np.save(tmp_path / "p.npy", P)
    (tmp_path / "labels.txt").write_text("".join(f"{v}\n" for v in y))
    mem = calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "labels.txt", n_bins=[5, 10],
                            **FAST)
    ooc = calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "labels.txt", n_bins=[5, 10],
                            out_of_core=True)
    assert mem.accuracy == accuracy(P, y)
    assert_same_report(mem, ooc)
    assert ooc.input_sha256 == mem.input_sha256 == sha(tmp_path / "p.npy")
    assert ooc.labels_sha256 == mem.labels_sha256 == sha(tmp_path / "labels.txt")
    # the same wrong file gives an error either way
    (tmp_path / "short.txt").write_text("".join(f"{v}\n" for v in y[:-1]))
    for out_of_core in (None, True):
        with pytest.raises(ValueError, match="299|300"):
            calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "short.txt", n_bins=[5],
                              out_of_core=out_of_core, significance=False, utility=False,
                              smooth_ece=False)


def test_float16_same_in_memory_and_out_of_core(tmp_path, threads, folded):
    P, y = calibrated(300, 3, 16)
    np.save(tmp_path / "p16.npy", P.astype(np.float16))
    np.save(tmp_path / "y.npy", y)
    mem = calnotes.evaluate(tmp_path / "p16.npy", labels=tmp_path / "y.npy", n_bins=[5, 10],
                            **FAST)
    ooc = calnotes.evaluate(tmp_path / "p16.npy", labels=tmp_path / "y.npy", n_bins=[5, 10],
                            out_of_core=True)
    assert mem.accuracy == accuracy(P.astype(np.float16).astype(np.float64), y)
    assert_same_report(mem, ooc)
    note = [x for x in mem.notes if "float16" in x]         # the rows divided, said both ways
    assert len(note) == 1 and note[0] in ooc.notes


def test_n1_labels_same_in_memory_and_out_of_core(tmp_path, threads, folded):
    P, y = calibrated(300, 3, 17)
    folder = tmp_path / "shards"
    folder.mkdir()
    np.savez(folder / "part-0.npz", labels=y[:100, None], probs=P[:100])
    np.savez(folder / "part-1.npz", labels=y[100:, None], probs=P[100:])
    np.save(tmp_path / "p.npy", P)
    np.save(tmp_path / "y.npy", y[:, None])
    mem = calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "y.npy", n_bins=[5, 10],
                            **FAST)
    assert mem.accuracy == accuracy(P, y)
    assert_same_report(mem, calnotes.evaluate(folder, n_bins=[5, 10]))
    assert_same_report(mem, calnotes.evaluate(tmp_path / "p.npy", labels=tmp_path / "y.npy",
                                              n_bins=[5, 10], out_of_core=True))


# --- calnotes run checks ranges and paths before a kernel starts -----------------------------

@pytest.mark.parametrize("argv, message", [
    (["run", "measures", "-p", "n_samples", "-5"], "-p n_samples: expected a positive integer"),
    (["run", "measures", "-p", "n_bins", "0"], "-p n_bins: expected a positive integer"),
    (["run", "measures", "-p", "n_classes", "1"], "-p n_classes: expected at least 2 classes"),
    (["run", "ledger", "-p", "size", "huge"], "-p size: expected one of 'smoke', 'full'"),
    (["run", "evaluate", "-p", "predictions", "nothere.npz"],
     "-p predictions: no such file: nothere.npz"),
])
def test_run_checks_ranges_and_paths_before_a_kernel(argv, message, tmp_path, capsys,
                                                         monkeypatch):
    import calnotes.book.chapters as chapters

    def no_kernel(*args, **kwargs):                 # a kernel must never start for these
        raise AssertionError("papermill was called")

    import papermill
    monkeypatch.setattr(papermill, "execute_notebook", no_kernel)
    root = chapters.find_book_root()
    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    assert cli.main(["--book", str(root), *argv, "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err
    assert time.perf_counter() - start < 30          # refused up front, not after a run
    assert not (tmp_path / "o").exists()


# The speed of --bins m close to n, and of the full report on 10^6 rows, is measured by the
# benchmark grid (benchmarks/, m close to n included), not by a timed test (developers' guide:
# performance lives in benchmarks/).
