"""`calnotes run -p NAME VALUE`: values that do not fit are refused with a clear message
before a kernel starts -- non-finite numbers, parameters whose default is None (typed from
their name and comment), negative scales and biases, more bins than samples, input paths
that are not regular files or not JSON of the expected kind, and over-long values, which are
not echoed whole."""

from __future__ import annotations

import json
import os
import time

import pytest

from calnotes import cli
from calnotes.book import chapters

ROOT = chapters.find_book_root()


def _run(argv, tmp_path, capsys, monkeypatch) -> str:
    monkeypatch.chdir(tmp_path)
    start = time.perf_counter()
    assert cli.main(["--book", str(ROOT), "run", *argv, "--out", str(tmp_path / "o")]) == 2
    assert time.perf_counter() - start < 30
    assert not (tmp_path / "o").exists()
    return capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [
    (["intro", "-p", "overconfidence", "1e999"],
     "-p overconfidence: expected a finite number like the default 2.5, got inf"),
    (["intro", "-p", "overconfidence", "1" * 400],
     "-p overconfidence: expected a finite number"),
    (["cs_diagrams", "-p", "bandwidth", "1e999"],
     "-p bandwidth: expected a finite number or None (the default), got inf"),
    (["evaluate", "-p", "report_dir", "-1"],
     "-p report_dir: expected a folder name (text) or None (the default), got the number -1"),
    (["evaluate", "-p", "predictions", "5"], "-p predictions: expected a file name (text)"),
    (["cs_diagrams", "-p", "subsample", "5000.5"],
     "-p subsample: expected an integer or None (the default), got 5000.5"),
    (["cs_diagrams", "-p", "subsample", "0"], "-p subsample: expected a positive integer"),
    (["evaluate", "-p", "kind", "5"], "-p kind: expected a string or None (the default)"),
    (["evaluate", "-p", "kind", "'odds'"], "-p kind: expected one of 'logits', 'probs'"),
    (["rankings", "-p", "predictions", "[1, 2]"],
     "-p predictions: expected a list of file names or None (the default)"),
    (["ece_bias", "-p", "scale", "-1.0"], "-p scale: expected a positive number, got -1.0"),
    (["table1_grid", "-p", "bias_in_sd", "[-1]"],
     "-p bias_in_sd: expected non-negative numbers, got [-1.0]"),
    (["measures", "-p", "n_bins", "100000000"],
     "-p n_bins: 100000000 bins for 1000 samples (-p n_samples); use at most as many bins"
     " as samples"),
    (["intro", "-p", "n_samples", "10"], "-p n_bins: 15 bins for 10 samples"),
    (["table1_grid", "-p", "m", "600"], "-p m: 600 bins for 500 samples (the smallest of"),
])
def test_values_refused_before_a_kernel(argv, message, no_kernel, tmp_path, capsys,
                                        monkeypatch):
    assert message in _run(argv, tmp_path, capsys, monkeypatch)


def test_a_very_long_value_is_not_echoed_whole(no_kernel, tmp_path, capsys, monkeypatch):
    digits = "7" * 5000
    err = _run(["measures", "-p", "n_samples", digits], tmp_path, capsys, monkeypatch)
    assert "-p n_samples: expected an integer like the default 1000" in err
    assert "7" * 200 not in err and "(5000 characters)" in err
    assert len(err) < 400


def test_input_paths_must_be_regular_files(no_kernel, tmp_path, capsys, monkeypatch):
    folder = tmp_path / "preds.npz"
    folder.mkdir()
    err = _run(["evaluate", "-p", "predictions", str(folder)], tmp_path, capsys, monkeypatch)
    assert f"-p predictions: {folder} is a folder, not a file" in err
    if hasattr(os, "mkfifo"):
        fifo = tmp_path / "fifo.npz"
        os.mkfifo(fifo)
        err = _run(["evaluate", "-p", "predictions", str(fifo)], tmp_path, capsys, monkeypatch)
        assert f"-p predictions: {fifo} is a FIFO, not a regular file" in err


def test_json_inputs_must_be_json_of_the_expected_kind(no_kernel, tmp_path, capsys,
                                                       monkeypatch):
    text = tmp_path / "passwd"
    text.write_text("root:x:0:0:root:/root:/bin/bash\n")
    err = _run(["benchmarks", "-p", "results_file", str(text)], tmp_path, capsys, monkeypatch)
    assert f"-p results_file: {text} is not a JSON file" in err
    other = tmp_path / "other.json"
    other.write_text(json.dumps({"unrelated": 1}))
    err = _run(["benchmarks", "-p", "results_file", str(other)], tmp_path, capsys, monkeypatch)
    assert "holds none of the keys of the default 'benchmarks/results.json'" in err
    listed = tmp_path / "list.json"
    listed.write_text("[1, 2]")
    err = _run(["benchmarks", "-p", "results_file", str(listed)], tmp_path, capsys, monkeypatch)
    assert "holds a list, where the chapter reads an object" in err


def test_a_file_name_pattern_keeps_its_fields_and_matches_json(no_kernel, tmp_path, capsys,
                                                               monkeypatch):
    err = _run(["benchmarks", "-p", "scaling_files", "/etc/passwd"], tmp_path, capsys,
               monkeypatch)
    assert "-p scaling_files: expected a file-name pattern with {threads}" in err
    err = _run(["benchmarks", "-p", "scaling_files", str(tmp_path / "none_t{threads}.json")],
               tmp_path, capsys, monkeypatch)
    assert "-p scaling_files: no file matches" in err
    (tmp_path / "bad_t2.json").write_text("not json")
    err = _run(["benchmarks", "-p", "scaling_files", str(tmp_path / "bad_t{threads}.json")],
               tmp_path, capsys, monkeypatch)
    assert f"{tmp_path / 'bad_t2.json'} is not a JSON file" in err


def test_the_defaults_and_good_values_pass():
    for chapter in chapters.list_chapters():
        for name, (value, comment) in chapter.parameters.items():
            assert chapters.check_parameter(name, value, value, comment) == value
            chapters.check_range(name, value, ROOT, default=value)
        chapters.check_together({k: v for k, (v, _) in chapter.parameters.items()})
    pattern = "benchmarks/grid_results_16cores_t{threads}.json"
    if list(ROOT.glob("benchmarks/grid_results_16cores_t*.json")):
        chapters.check_range("scaling_files", pattern, ROOT, default=pattern)
    assert chapters.check_parameter("subsample", 5000, None, "") == 5000
    assert chapters.check_parameter("bandwidth", 1, None, "") == 1.0
    assert chapters.check_parameter("report_dir", "runs/r", None, "") == "runs/r"
    assert chapters.check_parameter("predictions", "a.npz", None,
                                    "None, or a list of .npz files") == ["a.npz"]
    assert chapters.check_parameter("predictions", None, None, "") is None


def test_every_none_default_declares_what_it_takes():
    """A new parameter with a None default needs a rule (chapters.declared_kind): else any
    value would reach the kernel unchecked."""
    for chapter in chapters.list_chapters():
        for name, (value, comment) in chapter.parameters.items():
            if value is None:
                assert chapters.declared_kind(name, comment) is not None, (chapter.name, name)


def test_a_cap_on_the_number_of_bins_may_exceed_the_samples(no_kernel, tmp_path, capsys,
                                                             monkeypatch):
    """rankings_vs_bins' m is only the largest bin count of its grid (divisors of n up to m):
    m > n is a valid run, so it reaches the kernel (here: papermill's stand-in refuses)."""
    monkeypatch.chdir(tmp_path)
    with pytest.raises(AssertionError, match="papermill was called"):
        cli.main(["--book", str(ROOT), "run", "rankings_vs_bins", "-p", "m", "2000", "--out",
                  str(tmp_path / "o")])
    # the same numbers under a chapter whose m is the number of bins are refused
    with pytest.raises(ValueError, match="2000 bins for 1000 samples"):
        chapters.check_together({"m": 2000, "n": 1000}, given={"m"})
    chapters.check_together({"m": 2000, "n": 1000}, given={"m"}, caps={"m"})
