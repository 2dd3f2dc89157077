"""Static checks of the book sources: what the build alone would not catch."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from calnotes.book import chapters

ROOT = Path(__file__).resolve().parent.parent
CHAPTERS = chapters.list_chapters(ROOT)
SOURCES = sorted((ROOT / "book").rglob("*.md"))


def test_toc_chapters_exist():
    toc = (ROOT / "_toc.yml").read_text()
    for docname in re.findall(r"(?:file|root):\s*(\S+)", toc):
        assert (ROOT / f"{docname}.md").is_file() or (ROOT / f"{docname}.ipynb").is_file(), docname


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_first_code_cell_is_the_parameters_cell(path):
    text = path.read_text()
    cells = re.findall(r"^```\{code-cell\}[^\n]*\n((?::[^\n]*\n)*)", text, flags=re.MULTILINE)
    if not cells:
        return  # a page without code (e.g. the bibliography)
    assert "parameters" in cells[0], f"{path.name}: first code cell is not tagged parameters"


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_installs_no_printed_comparisons_no_agg(path):
    text = path.read_text()
    assert not re.search(r"^\s*[!%]\s*(pip|uv|conda)\b", text, flags=re.MULTILINE), path.name
    assert not re.search(r"print\((np\.)?(all)?close|print\(.*isclose", text), path.name
    assert 'matplotlib.use("Agg")' not in text and "matplotlib.use('Agg')" not in text


def test_no_committed_notebook_outputs():
    tracked = subprocess.run(["git", "ls-files", "*.ipynb"], cwd=ROOT, capture_output=True,
                             text=True, check=True).stdout.split()
    for name in tracked:
        nb = json.loads((ROOT / name).read_text())
        for cell in nb.get("cells", []):
            if cell.get("cell_type") == "code":
                assert not cell.get("outputs"), f"{name} carries outputs"
                assert cell.get("execution_count") is None, f"{name} carries execution counts"


def test_chapter_names_are_unique():
    names = [c.name for c in CHAPTERS]
    assert len(names) == len(set(names))


_CODE_BLOCKS = re.compile(r"^```(?:\{code-cell\}|\{eval-rst\}|bash)[^\n]*\n.*?^```\s*$",
                          flags=re.MULTILINE | re.DOTALL)
_LIST_MARKER = re.compile(r"\s*(?:[-+*]|\d+[.)])\s")


def list_markers_inside_inline_math(text: str) -> list:
    """Lines that begin with a list marker (``+ ``, ``- ``, ``* ``, ``1. ``) while an inline
    ``$...$`` formula opened on an earlier line of the same paragraph is still open: Markdown
    turns such a line into a list item and cuts the formula in half."""
    text = _CODE_BLOCKS.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    found, open_math = [], False
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith(("```", ":::", "$$")):
            open_math = False
            continue
        if open_math and _LIST_MARKER.match(line):
            found.append((number, line.strip()[:60]))
        dollars = len(re.findall(r"(?<![\\$])\$(?!\$)", line))
        if dollars % 2:
            open_math = not open_math
    return found


def test_the_math_lint_finds_a_broken_formula():
    broken = "Then $a = b\n+ c$ and $d$.\n\nFine: $a +\nb$ and\n- a real list item\n"
    assert list_markers_inside_inline_math(broken) == [(2, "+ c$ and $d$.")]
    assert list_markers_inside_inline_math("```{code-cell} ipython3\nx = '$a'\n- 1\n```\n") == []


@pytest.mark.parametrize("path", SOURCES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_list_marker_inside_inline_math(path):
    assert list_markers_inside_inline_math(path.read_text()) == [], (
        f"{path.name}: a line inside an open inline formula starts with a list marker; move "
        "the operator to the end of the previous line")
