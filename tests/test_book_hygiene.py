"""Static checks of the book sources: what the build alone would not catch."""

import json
import re
import subprocess
from pathlib import Path

import pytest

from calnotes import chapters

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
