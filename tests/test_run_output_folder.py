"""`calnotes run --out` refuses calnotes' own sources (the book, the package, the tests, the
repository's root), with or without ``--force``, before a kernel starts; other folders of the
repository (``runs/``) and folders elsewhere are fine."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

import calnotes
from calnotes import cli
from calnotes.book import chapters
from calnotes._outdir import refuse_source_folder

ROOT = chapters.find_book_root()
CHECKOUT = (ROOT / ".git").exists() and (ROOT / "pyproject.toml").is_file()


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("out, force", [
    ("book", False),
    ("book/new/folder", False),
    ("book/truthfulness/figures", True),     # holds table1_grid.ipynb, a tracked source
    ("calnotes", False),
    ("calnotes/figures", True),
])
def test_run_refuses_an_out_folder_in_the_sources(out, force, no_kernel, capsys, tmp_path,
                                                  monkeypatch):
    source = ROOT / "book/truthfulness/figures/table1_grid.ipynb"
    before = _digest(source)
    listing = sorted(os.listdir(ROOT / "book"))
    existed = (ROOT / out).exists()
    monkeypatch.chdir(tmp_path)
    argv = ["--book", str(ROOT), "run", "table1_grid", "--out", str(ROOT / out)]
    assert cli.main(argv + (["--force"] if force else [])) == 2
    err = capsys.readouterr().err
    assert "writes no outputs there, with or without --force" in err
    assert "--out: " in err
    assert _digest(source) == before
    assert sorted(os.listdir(ROOT / "book")) == listing
    assert (ROOT / out).exists() == existed


@pytest.mark.skipif(not CHECKOUT, reason="not a source checkout")
@pytest.mark.parametrize("out", [".", "tests", "tests/runs", ".git/x"])
def test_run_refuses_the_repository_root_and_tests(out, no_kernel, capsys, tmp_path,
                                                   monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--book", str(ROOT), "run", "benchmarks", "--out", str(ROOT / out),
                     "--force"]) == 2
    assert "writes no outputs there" in capsys.readouterr().err
    assert not (ROOT / "benchmarks.ipynb").exists()


def test_linked_and_dotted_spellings_are_refused(tmp_path):
    link = tmp_path / "book-link"
    link.symlink_to(ROOT / "book", target_is_directory=True)
    for spelling in (link / "run", ROOT / "runs" / ".." / "book", ROOT / "book/../book/x"):
        with pytest.raises(ValueError, match="the book's sources"):
            refuse_source_folder(spelling, "--out")


def test_runs_and_folders_elsewhere_are_allowed(tmp_path):
    assert refuse_source_folder(ROOT / "runs" / "intro") == (ROOT / "runs" / "intro").resolve()
    assert refuse_source_folder(ROOT / "book" / ".." / "runs") == (ROOT / "runs").resolve()
    assert refuse_source_folder(tmp_path / "o") == (tmp_path / "o").resolve()


def test_the_package_folder_is_refused_wherever_it_is_installed():
    package = Path(calnotes.__file__).resolve().parent
    with pytest.raises(ValueError, match=r"^out \(command line: --out\): .* the calnotes"
                                         r" package"):
        refuse_source_folder(package / "out")


def test_a_small_books_source_folders(tmp_path, no_kernel, capsys):
    """The rule follows the book's _toc.yml: the top-level folders holding its chapters."""
    book = tmp_path / "mybook"
    (book / "chapters").mkdir(parents=True)
    (book / "_toc.yml").write_text("format: jb-book\nroot: chapters/one\n")
    (book / "chapters" / "one.md").write_text("# One\n")
    with pytest.raises(ValueError, match="the book's sources"):
        refuse_source_folder(book / "chapters" / "out", root=book)
    assert refuse_source_folder(book / "runs", root=book) == (book / "runs").resolve()
    flat = tmp_path / "flat"                     # a chapter at the book root: only the root
    flat.mkdir()
    (flat / "_toc.yml").write_text("format: jb-book\nroot: intro\n")
    with pytest.raises(ValueError, match="the book's root"):
        refuse_source_folder(flat, root=flat)
    assert refuse_source_folder(flat / "runs", root=flat) == (flat / "runs").resolve()


def test_report_dir_in_the_sources_is_refused(no_kernel, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["--book", str(ROOT), "run", "evaluate", "-p", "report_dir",
                     str(ROOT / "book" / "practice" / "report"), "--out",
                     str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err
    assert "-p report_dir: " in err and "the book's sources" in err
    assert not (ROOT / "book" / "practice" / "report").exists()
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize("command", ["evaluate", "check-notebook"])
def test_evaluate_and_check_notebook_refuse_an_out_folder_in_the_sources(command, tmp_path,
                                                                         capsys):
    """The same rule for every command that writes: nothing is computed or created."""
    given = tmp_path / "tiny.csv"
    given.write_text("label,p0,p1\n0,0.8,0.2\n1,0.3,0.7\n")
    if command == "check-notebook":
        given = tmp_path / "class"
        given.mkdir()
        (given / "a.ipynb").write_text("{}")
    target = ROOT / "book" / "appendix" / "report-here"
    assert cli.main([command, str(given), "--out", str(target), "--force"]) == 2
    assert "the book's sources" in capsys.readouterr().err
    assert not target.exists()
