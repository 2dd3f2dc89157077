"""The calnotes command: listing chapters and rerunning one with new parameters."""

import json

import pytest

from calnotes import cli
from calnotes.book import chapters


def test_chapters_lists_every_chapter_with_parameters(capsys):
    assert cli.main(["chapters"]) == 0
    out = capsys.readouterr().out
    for name in ("intro", "measures", "proper_scores", "ledger"):
        assert f"{name}  (" in out
    assert "-p size 'smoke'" in out


def test_every_toc_chapter_has_a_parameters_cell():
    names = {c.name for c in chapters.list_chapters()}
    assert {"intro", "measures", "proper_scores", "ledger", "errata"} <= names


def test_parse_value():
    assert chapters.parse_value("3") == 3
    assert chapters.parse_value("2.5") == 2.5
    assert chapters.parse_value("[1, 2]") == [1, 2]
    assert chapters.parse_value("path/to.npz") == "path/to.npz"


def test_run_injects_parameters_and_refuses_to_overwrite(tmp_path, capsys):
    # The benchmarks page is the quickest chapter to execute (it only reads a JSON file).
    out = tmp_path / "runs"
    results = "benchmarks/results.json"
    assert cli.main(["run", "benchmarks", "-p", "results_file", results, "--out", str(out)]) == 0
    nb = json.loads((out / "benchmarks.ipynb").read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1
    assert "results_file" in "".join(injected[0]["source"])
    assert not any(o.get("output_type") == "error"
                   for c in nb["cells"] for o in c.get("outputs", []))
    printed = capsys.readouterr().out
    assert f"notebook: {out / 'benchmarks.ipynb'}" in printed
    figures = sorted((out / "benchmarks_figures").glob("figure-*.png"))
    n_images = sum("image/png" in o.get("data", {})
                   for c in nb["cells"] for o in c.get("outputs", []))
    assert len(figures) == n_images
    if figures:
        assert f"figures: {n_images} PNG files" in printed
        assert figures[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    before = (out / "benchmarks.ipynb").stat().st_mtime_ns
    assert cli.main(["run", "benchmarks", "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert (out / "benchmarks.ipynb").stat().st_mtime_ns == before
    assert cli.main(["run", "benchmarks", "--out", str(out), "--force"]) == 0


@pytest.mark.parametrize("argv, message", [
    (["run", "nochapter", "--out", "x"], "no chapter 'nochapter'"),
    (["run", "errata", "-p", "bogus", "1", "--out", "x"], "no parameter(s) ['bogus']"),
    (["run", "errata", "-p", "size", "a", "-p", "size", "b", "--out", "x"], "given twice"),
    (["run", "errata", "-p", "size", "huge", "--out", "x"],
     "-p size: expected one of 'smoke', 'full', got 'huge'"),
    (["run", "measures", "-p", "n_bins", "0", "--out", "x"],
     "-p n_bins: expected a positive integer, got 0"),
    (["run", "measures", "-p", "n_samples", "-5", "--out", "x"],
     "-p n_samples: expected a positive integer, got -5"),
    (["run", "measures", "-p", "n_classes", "1", "--out", "x"], "at least 2 classes"),
    (["run", "measures", "-p", "seed", "-1", "--out", "x"], "non-negative integer"),
    (["run", "measures", "-p", "overconfidence", "0", "--out", "x"], "positive number"),
    (["run", "evaluate", "-p", "predictions", "nope.npz", "--out", "x"],
     "-p predictions: no such file: nope.npz"),
])
def test_run_errors_are_clear(argv, message, capsys, tmp_path, monkeypatch):
    root = chapters.find_book_root()
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--book", str(root)] + argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "x").exists()


def test_every_default_is_in_its_range():
    root = chapters.find_book_root()
    for chapter in chapters.list_chapters():
        for name, (value, _) in chapter.parameters.items():
            chapters.check_range(name, value, root)       # raises on a rule that is wrong


def test_summary_counts_the_chapters_claims(tmp_path):
    from calnotes.book.claims import all_claims
    nb = tmp_path / "errata.ipynb"
    nb.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4,
                              "nbformat_minor": 5}))
    summary = chapters.summarize_run("proper_errors", nb, {"size": "full"})
    mine = [c for c in all_claims() if c.chapter == "book/proper/proper_errors"]
    assert summary.size == "full" and sum(summary.counts.values()) == len(mine)
    assert summary.counts["erratum"] == sum(c.expect == "disagrees" for c in mine)
    assert summary.controls == sum(len(c.controls) for c in mine)
    assert summary.text().startswith("claims ran at size 'full' (-p size): ")
