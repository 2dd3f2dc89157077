"""What `calnotes run` says when a chapter ran: the claims ran at their
registered size whatever the -p parameters, counted with the right grammar; the prose numbers
that differ from the built book's, in the terminal and in OUT/<chapter>_numbers.csv, or why
there are no defaults to compare with; values that only fail together are refused up front."""

from __future__ import annotations

import csv
import json
import os
import textwrap
from pathlib import Path

import pytest

from calnotes import cli
from calnotes.book import chapters

ROOT = chapters.find_book_root()


def _notebook(path: Path, glued: dict | None = None) -> Path:
    """An executed notebook whose code cells glued ``glued`` (as myst_nb.glue records it)."""
    outputs = [{"output_type": "display_data", "metadata": {"scrapbook": {"name": key}},
                "data": {"application/papermill.record/text/plain": repr(value)}}
               for key, value in (glued or {}).items()]
    cells = [{"cell_type": "code", "execution_count": 1, "id": "c1", "metadata": {},
              "outputs": outputs, "source": ""}]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4,
                                "nbformat_minor": 5}))
    return path


# --------------------------------------------------------------------------- claims line

def test_claims_line_says_they_ran_at_their_registered_size_not_at_the_parameters(tmp_path):
    summary = chapters.summarize_run("table1", _notebook(tmp_path / "table1.ipynb"), {"m": 10})
    first = summary.text().splitlines()[0]
    assert first.startswith("claims do not depend on your parameters: they ran at their"
                            " registered size ('smoke'): ")
    assert "claims of table1 at size" not in summary.text()


def test_claims_line_without_parameters_names_the_registered_size(tmp_path):
    summary = chapters.summarize_run("table1", _notebook(tmp_path / "table1.ipynb"), {})
    assert summary.text().startswith("claims ran at their registered size ('smoke'): ")


def test_claims_line_names_the_size_parameter_when_it_was_given(tmp_path):
    nb = _notebook(tmp_path / "proper_errors.ipynb")
    alone = chapters.summarize_run("proper_errors", nb, {"size": "full"}).text()
    assert alone.startswith("claims ran at size 'full' (-p size): ")
    more = chapters.summarize_run("proper_errors", nb, {"size": "full", "n_demo": 5}).text()
    assert more.startswith("claims ran at size 'full' (-p size) and do not depend on your"
                           " other parameters: ")


@pytest.mark.parametrize("counts, controls, expected", [
    ({"verified": 1, "erratum": 1}, 1, ["1 verified, 1 erratum",
                                        "its negative control was rejected"]),
    ({"verified": 13, "erratum": 8}, 28, ["13 verified, 8 errata",
                                          "all 28 negative controls were rejected"]),
    ({"illustration": 1, "finding": 2}, 0, ["1 illustration, 2 findings on our data"]),
    ({"illustration": 3, "finding": 1}, 0, ["3 illustrations, 1 finding on our data"]),
])
def test_claim_counts_are_singular_or_plural(counts, controls, expected):
    text = chapters.RunSummary("x", "smoke", counts, controls, Path("x.ipynb"), ()).text()
    for part in expected:
        assert part in text
    assert "8 erratum" not in text and "1 controls" not in text


def test_one_figure_is_one_png_file():
    summary = chapters.RunSummary("x", "smoke", {}, 0, Path("x.ipynb"),
                                  (Path("x_figures/figure-01.png"),))
    assert summary.text().endswith("figures: 1 PNG file in x_figures")


# --------------------------------------------------------------------------- prose numbers

@pytest.fixture
def book(tmp_path):
    """A one-chapter book: parameters n and seed, prose with three glued numbers."""
    root = tmp_path / "book_root"
    (root / "book").mkdir(parents=True)
    (root / "_toc.yml").write_text("format: jb-book\nroot: book/demo\n")
    (root / "book" / "demo.md").write_text(textwrap.dedent("""\
        # Demo

        ```{code-cell} ipython3
        :tags: [parameters]
        seed = 0  # seed
        n = 100   # samples
        ```

        With {glue:text}`n` samples the error is {glue:text}`err:.3f`, and the bias
        {glue:text}`bias:.2f` ({glue:md}`verdict`).

        ```{code-cell} ipython3
        glue("unused_in_prose", 1)  # {glue:text}`in_code` is not prose
        ```
        """))
    return root


def _build(root: Path, glued: dict) -> Path:
    path = root / "_build" / "jupyter_execute" / "book" / "demo.glue.json"
    path.parent.mkdir(parents=True)
    data = {key: {"data": ({"text/plain": "<IPython.core.display.Markdown object>",
                            "text/markdown": value} if isinstance(value, str)
                           else {"text/plain": repr(value)}), "metadata": {}}
            for key, value in glued.items()}
    path.write_text(json.dumps(data))
    return path


DEFAULTS = {"n": 100, "err": 0.04213, "bias": 0.0049, "verdict": "too optimistic"}


def test_changed_prose_numbers_are_listed_with_default_and_this_run(book, tmp_path):
    built = _build(book, DEFAULTS)
    os.utime(built, (built.stat().st_mtime + 10,) * 2)          # built after the edit
    run = {"n": 50, "err": 0.0618, "bias": 0.0041, "verdict": "too optimistic"}
    (tmp_path / "out").mkdir()
    nb = _notebook(tmp_path / "out" / "demo.ipynb", run)
    summary = chapters.summarize_run("demo", nb, {"n": 50}, root=book)
    text = summary.text()
    table = text[text.index("prose numbers"):]
    assert table.startswith(f"prose numbers that differ from the book's (2 of 4; all 4 in"
                            f" {tmp_path / 'out' / 'demo_numbers.csv'}):")
    rows = [line.split() for line in table.splitlines()[1:4]]
    assert rows == [["name", "default", "this", "run"], ["n", "100", "50"],
                    ["err", "0.042", "0.062"]]
    assert "bias" not in table.split("notebook:")[0]     # 0.00 in the prose both times
    assert "in_code" not in text and "unused_in_prose" not in text
    with open(tmp_path / "out" / "demo_numbers.csv", newline="") as handle:
        written = list(csv.DictReader(handle))
    assert [(r["name"], r["default"], r["this_run"], r["changed"]) for r in written] == [
        ("n", "100", "50", "yes"), ("err", "0.042", "0.062", "yes"),
        ("bias", "0.00", "0.00", "no"),       # differs, but not as the prose shows it
        ("verdict", "too optimistic", "too optimistic", "no")]


def test_unchanged_prose_numbers_are_summed_up_in_one_line(book, tmp_path):
    built = _build(book, DEFAULTS)
    os.utime(built, (built.stat().st_mtime + 10,) * 2)
    nb = _notebook(tmp_path / "demo.ipynb", DEFAULTS)
    text = chapters.summarize_run("demo", nb, {}, root=book).text()
    assert "prose numbers: all 4 as in the book" in text


def test_prose_numbers_without_a_built_book_say_so_instead_of_failing(book, tmp_path):
    nb = _notebook(tmp_path / "demo.ipynb", {"n": 50, "err": 0.06, "bias": 0.0,
                                             "verdict": "fine"})
    summary = chapters.summarize_run("demo", nb, {"n": 50}, root=book)
    expected = book / "_build" / "jupyter_execute" / "book" / "demo.glue.json"
    assert (f"prose numbers: no defaults to compare with (the book is not built: no {expected};"
            " make book builds it)") in summary.text()
    with open(tmp_path / "demo_numbers.csv", newline="") as handle:
        written = list(csv.DictReader(handle))
    assert written[0] == {"name": "n", "default": "", "this_run": "50", "changed": ""}


def test_a_book_built_before_the_chapter_changed_is_flagged(book, tmp_path):
    built = _build(book, DEFAULTS)
    os.utime(built, (built.stat().st_mtime - 100,) * 2)          # the chapter is newer
    nb = _notebook(tmp_path / "demo.ipynb", {**DEFAULTS, "n": 50})
    text = chapters.summarize_run("demo", nb, {"n": 50}, root=book).text()
    assert "the chapter changed after the book was built" in text


def test_a_page_without_glued_prose_has_no_table_and_no_csv(tmp_path):
    (tmp_path / "table1_grid_numbers.csv").write_text("left by an earlier run")
    nb = _notebook(tmp_path / "table1_grid.ipynb")
    text = chapters.summarize_run("table1_grid", nb, {"k": 5}).text()
    assert "prose numbers" not in text
    assert not (tmp_path / "table1_grid_numbers.csv").exists()


# --------------------------------------------------------------------------- refused up front

@pytest.mark.parametrize("argv, message", [
    (["table1", "-p", "m", "3000"],
     "-p m: 3000 bins for 2000 samples (-p n); use at most as many bins as samples"),
    (["table1_grid", "-p", "n_values", "7"],
     "-p m: 20 bins for 7 samples (-p n_values); use at most as many bins as samples (m = 20"
     " is the chapter's default: lower it with -p m)"),
    (["table1", "-p", "eps1", "0.49"],
     "-p eps2: need eps1 + eps2 < 1/2 (f2's larger probability on class x), got eps1 = 0.49,"
     " eps2 = 0.02 (eps2 = 0.02 is the chapter's default)"),
    (["table1", "-p", "k", "400"],
     "-p eps3: expected 0 <= eps3 <= 1/k = 0.0025, got 0.003 (eps3 = 0.003 is the chapter's"
     " default)"),
    (["table1_grid", "-p", "eps1", "0.6"], "-p eps1: expected 0 <= eps1 < 1/2, got 0.6"),
    (["rankings_vs_bins", "-p", "eps2", "0.5"], "-p eps2: need eps1 + eps2 < 1/2"),
    (["table1", "-p", "sim_size", "(4, 6, 60)"],
     "-p sim_size: the cross-check's (k, n, m) = (4, 6, 60) does not fit: m: 60 bins for"
     " n = 6 samples"),
])
def test_values_that_only_fail_together_are_refused_before_a_kernel(
        argv, message, no_kernel, tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--book", str(ROOT), "run", *argv, "--out", str(tmp_path / "o")]) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "o").exists()
