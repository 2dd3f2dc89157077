"""scripts/course_pdf.py on a two-page fabricated site: every printed page carries "k / N"
(the page numbers of the course PDF), a block wider than the column is scaled to it, and a
page that cannot be printed leaves a partial PDF and a message naming it. Runs headless
Chromium; skipped only when /usr/bin/chromium, /usr/bin/chromedriver, selenium or pypdf is
missing (``make test`` installs the first three when it can; pypdf is in the course extra)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
pytest.importorskip("selenium")
pypdf = pytest.importorskip("pypdf")
if not (Path("/usr/bin/chromium").exists() and Path("/usr/bin/chromedriver").exists()):
    pytest.skip("Debian's chromium and chromium-driver are not installed", allow_module_level=True)


def _script():
    sys.path.insert(0, str(ROOT / "scripts"))
    spec = importlib.util.spec_from_file_location("calnotes_course_pdf", ROOT / "scripts"
                                                  / "course_pdf.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _site(folder: Path) -> None:
    (folder / "book").mkdir(parents=True)
    long_text = "".join(f"<p>Paragraph {i} of a long page.</p>" for i in range(160))
    (folder / "book" / "long.html").write_text(
        '<html><head><meta charset="utf-8"><title>Long — Book</title></head>'
        f"<body><main>{long_text}</main></body></html>")
    (folder / "book" / "wide.html").write_text(
        "<html><head><meta charset=\"utf-8\"><title>Wide — Book</title></head><body><main>"
        "<table id='t'><tr>" + "".join(f"<td>cell{i:02d}</td>" for i in range(60)) + "</tr></table>"
        "</main></body></html>")


def test_every_page_is_numbered_and_wide_blocks_fit(tmp_path):
    script = _script()
    _site(tmp_path / "html")
    out = tmp_path / "book.pdf"
    lines = []
    summary = script.print_book(tmp_path / "html", None, out, log=lines.append,
                                pages=["book/long", "book/wide"])
    reader = pypdf.PdfReader(str(out))
    assert summary["pages"] == len(reader.pages) >= 3           # the long page spans pages
    assert script.page_numbers_ok(out) == []
    total = len(reader.pages)
    assert f"{total} / {total}" in reader.pages[-1].extract_text()
    # the 60-cell table is wider than an A4 column (the book's own print script would scale
    # it; this bare page has none): scaled to the column, so its last cell is printed; nothing
    # is left overflowing; the long page needs no scaling
    assert any(line.startswith("course_pdf: book/wide:") and "1 wide blocks scaled" in line
               for line in lines)
    assert "cell59" in reader.pages[-1].extract_text()
    assert not any("wider than the printed column" in line for line in lines)
    assert not any("book/long" in line and "scaled" in line for line in lines)
    assert [item.title for item in reader.outline] == ["Long", "Wide"]
    # negative controls: a page without its number, and numbers of another total, fail
    bare = pypdf.PdfWriter()
    bare.add_page(reader.pages[0])
    bare.add_blank_page(width=595, height=842)
    with open(tmp_path / "bare.pdf", "wb") as fh:
        bare.write(fh)
    assert script.page_numbers_ok(tmp_path / "bare.pdf") == [1, 2]      # "1 / N" is not "1 / 2"


def test_a_page_that_cannot_be_printed_leaves_a_partial_pdf(tmp_path, monkeypatch):
    script = _script()
    _site(tmp_path / "html")
    real = script.print_document

    def failing(driver, params, log, name):
        if name == "book/wide":
            raise RuntimeError(f"{name}: pages 1-25 failed twice: renderer timeout")
        return real(driver, params, log, name)

    monkeypatch.setattr(script, "print_document", failing)
    out = tmp_path / "partial.pdf"
    lines = []
    with pytest.raises(SystemExit, match=r"1 page\(s\) could not be printed .*\['book/wide'\]"):
        script.print_book(tmp_path / "html", None, out, log=lines.append,
                          pages=["book/long", "book/wide"])
    assert len(pypdf.PdfReader(str(out)).pages) >= 2              # the long page is there
    assert any(line.startswith("course_pdf: FAILED book/wide") for line in lines)
