"""The student notebooks and `calnotes run` outputs in plain Jupyter Markdown
(calnotes.book.notebook_markdown): no MyST left, glued numbers filled with the values the run
glued, an answer and a check cell per exercise; `calnotes run` on a figure sub-page."""

import json
import logging
import re
import sys
from pathlib import Path

import jupytext
import nbformat
import pytest

from calnotes.book import chapters, exercises
from calnotes.book import notebook_markdown as nm
from course_script import course_script
from myst_chapter import myst_chapter

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted((ROOT / "book").rglob("*.md"))


_course = course_script     # scripts/course.py as a module (tests/course_script.py)


class _AnyGlue(dict):
    """Every key has the value 1.5 (the conversion of every page, without running it)."""

    def __contains__(self, key):
        return True

    def __getitem__(self, key):
        return {"text/plain": "1.5", "text/markdown": "1.5"}


@pytest.mark.parametrize("path", [p for p in SOURCES if "{code-cell}" in p.read_text()],
                         ids=lambda p: str(p.relative_to(ROOT)))
def test_every_student_notebook_is_plain_markdown_with_cells_per_exercise(path):
    """Each chapter as the course edition writes it: solutions stripped (scripts/course.py),
    then converted. No MyST markup is left, and every exercise is followed by an answer cell
    and, when it has a checker, a check cell calling check with its label."""
    course = _course()
    text, _ = course.strip_solutions(path.read_text())
    labels = course.exercise_labels(text)
    nb = jupytext.reads(text, fmt="md:myst")
    new = course.student_notebook(nb, _AnyGlue(), nm.book_index(ROOT),
                                  path.relative_to(ROOT).with_suffix("").as_posix())
    assert nm.leftover_markup(new) == []
    # no glue plumbing left in the code, the rerun note on top
    code = [c.source for c in new.cells if c.cell_type == "code"]
    assert not [src for src in code if "myst_nb" in src or re.search(r"(?<![\w.])glue\(", src)]
    assert course.RERUN_NOTE in new.cells[0].source
    markdown = "\n".join(c.source for c in new.cells if c.cell_type == "markdown")
    for piece in ("{glue", ":::{prf", "```{exercise}", "Check your answer\n"):
        assert piece not in markdown
    assert not re.search(r"^\(\S+\)=$", markdown, flags=re.MULTILINE)       # no label lines
    roles = [(c.metadata.get("calnotes", {}).get("exercise"),
              c.metadata.get("calnotes", {}).get("role")) for c in new.cells]
    for label in labels:
        assert (label, "answer") in roles
        check_cells = [c for c in new.cells
                       if c.metadata.get("calnotes", {}) == {"exercise": label, "role": "check"}]
        assert len(check_cells) == (label in exercises.labels())
        for cell in check_cells:
            assert f'check("{label}", {{' in cell.source
            for part in exercises.describe(label).splitlines():
                assert f'"{part.split(":")[0]}": ...,' in cell.source
    only_glue = sum(c.cell_type == "code" and "glue" in c.source
                    and not nm.remove_glue(c.source).strip() for c in nb.cells)
    assert sum(c.cell_type == "code" for c in new.cells) \
        == sum(c.cell_type == "code" for c in nb.cells) - only_glue + len(labels) \
        + sum(lab in exercises.labels() for lab in labels)


def test_conversion_of_each_construct():
    index = nm.BookIndex(labels={"thm-a": "Theorem (Main)"}, docs={"book/y": "The Y page"},
                         cites={"paper000": ("Anonymous", "2025")})
    glue = {"v": {"text/plain": "0.123456"}, "k": {"text/plain": "7"},
            "s": {"text/plain": "'name'"}, "md": {"text/markdown": "**bold**",
                                                  "text/plain": "x"}}
    text = "\n".join([
        "(sec-a)=", "## A section", "% a comment",
        "Value {glue:text}`v:.3f`, count {glue:text}`k`, name {glue}`s`, {glue:md}`md`.",
        "See {prf:ref}`thm-a`, {prf:ref}`the theorem <thm-a>`, {doc}`../y` and {cite:p}`paper000`,"
        " as {cite:t}`paper000` says; {py:func}`calnotes.l2_qece`, {func}`~calnotes.core.measures.ece`.",
        "", ":::{prf:theorem} Main", ":label: thm-a", ":nonumber:", "", "It holds: $x$.", ":::",
        "", ":::{prf:proof}", "Trivial.", ":::", "",
        "$$", "a = b", "$$ (eq-ab)", "",
        "```python", "{glue:text}`kept_in_code`", "```",
    ])
    out = nm.convert_markdown(text, glue, index, docname="book/x/z")
    assert "Value 0.123, count 7, name name, **bold**." in out
    assert ("See Theorem (Main), the theorem, The Y page and (Anonymous, 2025), as Anonymous"
            " (2025) says; `calnotes.l2_qece`, `ece`.") in " ".join(out.split("\n"))
    assert "> **Theorem** (Main)\n>\n> It holds: $x$." in out
    assert "*Proof.* Trivial. $\\blacksquare$" in out
    assert "$$\na = b\n$$" in out and "(eq-ab)" not in out
    assert "(sec-a)=" not in out and "a comment" not in out
    assert "```python\n{glue:text}`kept_in_code`\n```" in out      # code is left as written
    # a key without a value is an error naming it, or marked on request
    with pytest.raises(nm.MissingGlueError, match="glue key 'nope'"):
        nm.convert_markdown("{glue:text}`nope:.2f`", glue, index)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("x {glue:text}`nope`")])
    marked = nm.convert_notebook(nb, {}, index, missing="mark")
    assert marked.cells[0].source == "x [nope: no value]"


def test_a_glued_figure_becomes_an_attachment():
    glue = {"fig": {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}}
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "```{glue:figure} fig\n:name: fig-x\n\nThe caption.\n```")])
    new = nm.convert_notebook(nb, glue, nm.BookIndex())
    cell = new.cells[0]
    assert "![The caption.](attachment:fig.png)" in cell.source
    assert cell.attachments == {"fig.png": {"image/png": "iVBORw0KGgo="}}
    nbformat.validate(new)


# ---------------------------------------------------------------------------------------------
# calnotes run: the glued numbers of the run, in a small book of one chapter
# ---------------------------------------------------------------------------------------------
MINI = myst_chapter("""# Mini

```{code-cell} ipython3
:tags: [parameters]
n = 10       # size
```

```{code-cell} ipython3
from myst_nb import glue
glue("double", 2 * n, display=False)
glue("third", n / 3, display=False)
```

Twice $n$ is {glue:text}`double` and a third is {glue:text}`third:.2f`.

:::{prf:theorem} Doubling
:label: thm-double
Twice is more.
:::

```{exercise}
:label: ex-001-dkw-m

Compute $M$.
```
""")


def _mini_book(tmp_path):
    (tmp_path / "book" / "part").mkdir(parents=True)
    (tmp_path / "book" / "part" / "mini.md").write_text(MINI)
    (tmp_path / "_toc.yml").write_text("format: jb-book\nroot: book/part/mini\n")
    return tmp_path


def test_calnotes_run_fills_the_runs_own_glued_numbers(tmp_path):
    """With -p n 21 the prose says 42 and 7.00 (2 * 21 and 21 / 3, by hand), not the
    defaults' 20 and 3.33: the numbers are this run's. Negative control: the default run."""
    root = _mini_book(tmp_path / "book")
    target = chapters.run_chapter("mini", {"n": 21}, tmp_path / "out", root=root)
    nb = nbformat.read(target, as_version=4)
    markdown = "\n".join(c.source for c in nb.cells if c.cell_type == "markdown")
    assert "Twice $n$ is 42 and a third is 7.00." in markdown
    assert nm.leftover_markup(nb) == []
    assert "> **Theorem** (Doubling)" in markdown and "### Exercise (`ex-001-dkw-m`)" in markdown
    default = chapters.run_chapter("mini", {}, tmp_path / "default", root=root)
    text = "\n".join(c.source for c in nbformat.read(default, as_version=4).cells)
    assert "Twice $n$ is 20 and a third is 3.33." in text and "42" not in text


def test_figure_pages_are_chapters_of_calnotes_run(tmp_path, capsys):
    """The figure sub-pages (notebooks under book/*/figures/) are listed and run like the
    chapters; the output is plain markdown and the figure is written."""
    from calnotes import cli
    names = {c.name: c for c in chapters.list_chapters(ROOT)}
    for name in ("table1_grid", "rankings_vs_bins", "ece_bias", "cs_diagrams"):
        assert name in names and names[name].parameters, name
    assert names["rankings_vs_bins"].path.suffix == ".ipynb"
    assert cli.main(["chapters"]) == 0
    assert "rankings_vs_bins  (book/truthfulness/figures/rankings_vs_bins.ipynb)" \
        in capsys.readouterr().out
    out = tmp_path / "run"
    assert cli.main(["run", "rankings_vs_bins", "-p", "m", "10", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    nb = nbformat.read(out / "rankings_vs_bins.ipynb", as_version=4)
    assert nm.leftover_markup(nb) == []
    assert "figures: 1 PNG file in" in printed
    assert (out / "rankings_vs_bins_figures" / "figure-01.png").stat().st_size > 1000
    # the injected parameter reached the run: m = 10 keeps the divisors of 1000 up to 10
    injected = [c for c in nb.cells if "injected-parameters" in c.metadata.get("tags", [])]
    assert injected and "m = 10" in injected[0].source


def test_the_parameters_cell_of_table1_parses_without_papermill_warnings(caplog):
    """papermill warned "Unable to parse line 5 'eps1 = 0.1 # label noise: y = x + 1 (mod
    k) ...'" on every table1 run: the translator calnotes registers reads
    the cell with calnotes.book.chapters.parse_parameters instead."""
    chapter = chapters.get_chapter("table1", ROOT)
    nb = jupytext.read(chapter.path)
    cell = next(c for c in nb.cells if "parameters" in c.metadata.get("tags", []))
    assert "=" in cell.source.splitlines()[4].split("#", 1)[1]      # the line that warned
    with caplog.at_level(logging.DEBUG, logger="papermill"):
        found = chapters._python_translator().inspect(cell)
    assert [p.name for p in found] == list(chapter.parameters)
    assert not [r for r in caplog.records if "Unable to parse" in r.getMessage()]
    # negative control: papermill's own translator does warn on this cell
    from papermill.translators import PythonTranslator
    with caplog.at_level(logging.DEBUG, logger="papermill"):
        PythonTranslator.inspect(cell)
    assert [r for r in caplog.records if "Unable to parse" in r.getMessage()]


def test_exercise_cells_run_and_check(tmp_path):
    """The check cell as written runs: with the ... left it says 'not answered'."""
    cells = nm.exercise_cells("ex-001-dkw-m")
    source = next(c.source for c in cells
                  if c.metadata.get("calnotes", {}).get("role") == "check")
    namespace = {}
    exec(source.replace("check(", "verdict = check(", 1), namespace)
    assert namespace["verdict"].status == "not answered"
    note = nm.exercise_cells("ex-murphy")
    assert [c.cell_type for c in note] == ["markdown", "code"]
    assert "has no checker" in note[0].source
    assert json.dumps(note[1].metadata["calnotes"]) == '{"exercise": "ex-murphy", "role": "answer"}'


def test_reused_outputs_are_matched_to_the_student_cells_by_source():
    """make course reuses the teacher build's outputs (scripts/course.py): each student code
    cell gets the output of the teacher cell with the same source, skipping solution cells; a
    student cell the teacher run does not have means the page is executed again (None)."""
    course = _course()
    ran = [nbformat.v4.new_code_cell(src) for src in ("a = 1", "solution = 2", "b = a")]
    for i, cell in enumerate(ran):
        cell.outputs = [nbformat.v4.new_output("stream", text=str(i))]
    matched = course._matched_outputs(["a = 1", "b = a"], ran)
    assert [c.outputs[0].text for c in matched] == ["0", "2"]
    assert course._matched_outputs(["a = 1", "c = 3"], ran) is None
    assert course._matched_outputs(["b = a", "a = 1"], ran) is None        # order matters


def test_a_reused_page_keeps_its_own_mystnb_settings(tmp_path, monkeypatch):
    """make course reused the teacher run of *Do the papers hold?* and
    *Errata* but replaced their ``mystnb: {render_markdown_format: myst}`` by
    ``{execution_mode: off}``, so their Markdown(...) outputs (tables, $math$, roles) printed as
    raw text. The reused notebook keeps the page's settings and adds execution_mode."""
    import os

    course = _course()
    root, src, executed = tmp_path / "repo", tmp_path / "src", tmp_path / "executed"
    page = "\n".join([
        "---", "jupytext:", "  text_representation:", "    extension: .md",
        "    format_name: myst", "kernelspec:", "  display_name: Python 3",
        "  language: python", "  name: python3", "mystnb:", "  render_markdown_format: myst",
        "---", "", "# Page", "", "```{code-cell} ipython3", "x = 1", "```", ""])
    for folder in (root, src):
        (folder / "book").mkdir(parents=True)
        (folder / "book" / "page.md").write_text(page)
    (root / "calnotes").mkdir()
    (root / "calnotes" / "lib.py").write_text("")
    (root / "_config.yml").write_text("")
    (src / "_toc.yml").write_text("format: jb-book\nroot: book/page\n")
    ran = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    (executed / "book").mkdir(parents=True)
    nbformat.write(ran, executed / "book" / "page.ipynb")
    for path in (root / "book" / "page.md", root / "calnotes" / "lib.py", root / "_config.yml"):
        os.utime(path, (1e9, 1e9))                  # older than the run: the run is reused
    monkeypatch.setattr(course, "ROOT", root)
    monkeypatch.setattr(course, "SRC", src)
    reused, again = course.reuse_execution(executed, log=lambda *a: None)
    assert (reused, again) == (["book/page"], [])
    meta = nbformat.read(src / "book" / "page.ipynb", as_version=4).metadata["mystnb"]
    assert meta == {"render_markdown_format": "myst", "execution_mode": "off"}


GLUE_CELL = """from IPython.display import Markdown
from myst_nb import glue

x = 2  # kept
glue("x", x, display=False)
for name in ("x",):
    glue(name, globals()[name], display=False)
for k in (1, 2):
    y = k * x
    glue(f"y_{k}", y, display=False)  # a comment that goes with its line
if x > 1:
    glue("big", Markdown("yes"),
         display=False)


def helper(v):
    glue("v", v, display=False)


def measure(v):
    \"\"\"Glue v and return it.\"\"\"
    glue("v2", v, display=False)
    return v


z = measure(helper(3) or x)
"""


def test_glue_plumbing_is_removed_and_the_code_runs_without_myst_nb(monkeypatch):
    """21 of 25 student notebooks imported myst_nb and glued values
    only the book's prose reads. remove_glue drops the import, each glue statement (in loops,
    ifs and functions too) and loops or ifs that did nothing else; the rest runs with myst_nb
    not importable and gives the same values."""
    new = nm.remove_glue(GLUE_CELL)
    assert "glue(" not in new and "myst_nb" not in new
    assert "x = 2  # kept" in new and "    y = k * x" in new and "if x > 1" not in new
    assert 'for name in ("x",)' not in new
    assert "def helper(v):\n    pass" in new
    assert '    """Glue v and return it."""\n    return v' in new
    monkeypatch.setitem(sys.modules, "myst_nb", None)           # import myst_nb fails
    namespace = {}
    exec(compile(new, "<student cell>", "exec"), namespace)
    assert (namespace["x"], namespace["y"], namespace["z"]) == (2, 4, 2)
    with pytest.raises(ImportError):                              # the control: the original
        exec(compile(GLUE_CELL, "<book cell>", "exec"), {})
    # a glue call sharing its line with other code is refused, not silently cut
    with pytest.raises(ValueError, match="shares its line"):
        nm.remove_glue("x = 1; glue('x', x, display=False)")


def test_a_student_notebook_of_a_glued_chapter_runs_in_plain_python(tmp_path, monkeypatch):
    """The mini chapter (a parameters cell, glue calls, glued prose, an exercise) as the course
    edition writes it: the numbers are in the prose, the rerun note is below the title, and
    its code cells run one after another without myst_nb."""
    course = _course()
    nb = jupytext.reads(MINI, fmt="md:myst")
    glue = {"double": {"text/plain": "20"}, "third": {"text/plain": "3.3333"}}
    new = course.student_notebook(nb, glue, nm.BookIndex(), "book/part/mini")
    first = new.cells[0].source
    assert first.startswith("# Mini\n\n" + course.RERUN_NOTE)
    assert "Twice $n$ is 20 and a third is 3.33." in "\n".join(c.source for c in new.cells)
    monkeypatch.setitem(sys.modules, "myst_nb", None)
    namespace = {}
    for cell in new.cells:
        if cell.cell_type == "code" and "check(" not in cell.source:
            exec(compile(cell.source, "<cell>", "exec"), namespace)
    assert namespace["n"] == 10
    assert new.metadata["kernelspec"]["name"] == "calnotes"
