"""The course edition of the book: `make course` (and `make course-smoke`, for CI).

1. Copies the book sources (``_config.yml``, ``_toc.yml`` less the teacher-only pages,
   ``book/``) to ``_build/course-src/`` and removes every solution (the gated
   ``{solution-start}`` ... ``{solution-end}`` blocks, code cells included, and the
   ``{solution}`` directive form), putting in place of each a box that shows how to check an
   answer with :func:`calnotes.book.exercises.check` (for exercises that have a checker; nothing for
   proofs and explanations).
2. Refuses to go on if a removed solution cell defines something the rest of its chapter uses,
   glues a value referenced outside the solution, or holds a label referenced elsewhere (the
   student build would break or silently change); reports solution cells that draw from a
   random generator before later cells of the chapter (their numbers would differ).
3. Reuses the teacher build's execution (:func:`reuse_execution`): a page that ``make book``
   ran after its last edit gets that run's outputs and is not executed again; the others are.
4. Builds the student edition with jupyter-book like ``make book`` (``-W -n --keep-going``)
   into ``_build/course/html``, keeping the executed chapters (their glued values) in
   ``_build/course/executed``.
5. Writes every page with code as a notebook for a plain Jupyter front end (:func:`write_notebooks`):
   ``_build/course/notebooks/<part>/<chapter>.ipynb`` (``<part>`` is the chapter's folder
   under ``book/``; figure pages go to their part's folder), without outputs or solutions,
   ``parameters`` cells intact, prose in plain Markdown with the glued numbers filled in and a
   note below the title that a rerun changes only the outputs, no glue plumbing in the code
   (runs without myst-nb), an answer and a check cell after each exercise, kernel
   ``calnotes``; with a ``README.md`` (with the students' lean install)
   listing them in the order of the book; and checks them (:func:`check_notebooks`).

The PDF is printed by ``scripts/course_pdf.py``.  Run from the repository root with the
virtual environment's Python: ``.venv/bin/python scripts/course.py [--only DOCNAME ...]
[--out DIR] [--reuse auto|no|any] [--no-html]``; ``--only`` builds a reduced table of contents
(the root page and the given pages) while still writing every chapter's notebook.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
SRC = ROOT / "_build" / "course-src"
OUT = ROOT / "_build" / "course"

# ---------------------------------------------------------------------------------------------
# parsing the MyST sources
# ---------------------------------------------------------------------------------------------
_GATED_START = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution-start\}\s*(?P<label>\S+)?\s*$")
_GATED_END = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution-end\}\s*$")
_DIRECTIVE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{solution\}\s*(?P<label>\S+)?\s*$")
_EXERCISE = re.compile(r"^(?P<fence>`{3,}|:{3,})\{exercise(?:-start)?\}[^\n]*\n"
                       r"(?:(?::[^\n]*\n)*?):label:\s*(?P<label>\S+)", re.MULTILINE)
_CODE_CELL = re.compile(r"^```\{code-cell\}[^\n]*\n(?P<body>.*?)^```\s*$",
                        re.MULTILINE | re.DOTALL)


def _shown(path: Path) -> str:
    """A path relative to the repository when it is inside it."""
    return str(path.relative_to(ROOT) if path.is_relative_to(ROOT) else path)


def _closes(line: str, fence: str) -> bool:
    """Is ``line`` a closing fence for a block opened with ``fence``?"""
    stripped = line.strip()
    return (len(stripped) >= len(fence) and set(stripped) == {fence[0]})


def exercise_labels(text: str) -> list:
    """The ``:label:`` of every ``{exercise}`` directive, in order."""
    return [m.group("label") for m in _EXERCISE.finditer(text)]


@dataclass
class Solution:
    label: str | None
    first_line: int            # 0-based, inclusive
    last_line: int             # 0-based, inclusive
    text: str


def _first(lines: list, start: int, found, problem: str) -> int:
    """Index of the first line at or after ``start`` for which ``found(line)`` holds."""
    for j in range(start, len(lines)):
        if found(lines[j]):
            return j
    raise ValueError(problem)


def find_solutions(text: str) -> list:
    """Every solution block: gated start..end (with both directive fences) or ``{solution}``."""
    lines = text.split("\n")
    out, i = [], 0
    while i < len(lines):
        start = _GATED_START.match(lines[i])
        plain = _DIRECTIVE.match(lines[i])
        if start:
            j = _first(lines, i + 1, _GATED_END.match,
                       f"line {i + 1}: solution-start without solution-end")
            end_fence = _GATED_END.match(lines[j]).group("fence")
            last = _first(lines, j + 1, lambda line: _closes(line, end_fence),
                          f"line {j + 1}: solution-end directive is not closed")
            label = start.group("label")
        elif plain:
            fence = plain.group("fence")
            last = _first(lines, i + 1, lambda line: _closes(line, fence),
                          f"line {i + 1}: solution directive is not closed")
            label = plain.group("label")
        else:
            i += 1
            continue
        out.append(Solution(label, i, last, "\n".join(lines[i:last + 1])))
        i = last + 1
    return out


def check_box(label: str) -> str:
    """The box that replaces a solution whose exercise has a checker."""
    from calnotes.book import exercises
    parts = [line.split(":", 1) for line in exercises.describe(label).splitlines()]
    names = [name for name, _ in parts]
    answer = names[0] if len(names) == 1 else "(" + ", ".join(names) + ")"
    lines = [
        "````{admonition} Check your answer",
        ":class: tip",
        "",
        "The solutions are not part of this edition. Check your answer with",
        "",
        "```python",
        "from calnotes.book.exercises import check",
        f'check("{label}", {answer})',
        "```",
        "",
    ]
    if len(names) == 1:
        lines += [f"where `{names[0]}` is {parts[0][1].strip()}."]
    else:
        lines += ["where", ""]
        lines += [f"- `{name}` is {give.strip()}" for name, give in parts]
        lines += ["", "(or a dict with some of these names as keys)."]
    note = exercises.note(label)
    if note:
        lines += ["", note]
    lines += ["````"]
    return "\n".join(lines)


def strip_solutions(text: str) -> tuple:
    """``(text without solutions, [Solution])``; each solution replaced by :func:`check_box`
    when its exercise has a checker, else removed."""
    from calnotes.book import exercises
    solutions = find_solutions(text)
    lines = text.split("\n")
    for sol in reversed(solutions):
        if sol.label in exercises.labels():
            replacement = check_box(sol.label).split("\n")
        elif sol.label in exercises.NO_CHECKER:
            replacement = []
        else:
            raise ValueError(f"solution {sol.label!r}: its exercise is neither in"
                             " calnotes.book.exercises nor in calnotes.book.exercises.NO_CHECKER")
        lines[sol.first_line:sol.last_line + 1] = replacement
    new = "\n".join(lines)
    new = re.sub(r"\n{3,}", "\n\n", new)
    return new, solutions


# ---------------------------------------------------------------------------------------------
# what the removed solution cells leave behind
# ---------------------------------------------------------------------------------------------
def _code_cells(text: str, solutions: list) -> list:
    """``[(source, in_solution)]`` of the code cells of a chapter, in order."""
    line_starts = [0]
    for line in text.split("\n"):
        line_starts.append(line_starts[-1] + len(line) + 1)
    cells = []
    for m in _CODE_CELL.finditer(text):
        line = text.count("\n", 0, m.start())
        in_sol = any(s.first_line <= line <= s.last_line for s in solutions)
        body = m.group("body").split("\n")
        while body and body[0].startswith(":"):
            body.pop(0)
        cells.append(("\n".join(body), in_sol))
    return cells


def _top_level_defined(tree: ast.AST) -> set:
    """Names bound at the top level of a cell (not inside functions or classes)."""
    out = set()

    def targets(node):
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                out.add(n.id)

    def visit(stmts):
        for st in stmts:
            if isinstance(st, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                out.add(st.name)
            elif isinstance(st, (ast.Import, ast.ImportFrom)):
                for alias in st.names:
                    out.add((alias.asname or alias.name).split(".")[0])
            elif isinstance(st, ast.Assign):
                for t in st.targets:
                    targets(t)
            elif isinstance(st, (ast.AugAssign, ast.AnnAssign)):
                targets(st.target)
            elif isinstance(st, (ast.For, ast.AsyncFor)):
                targets(st.target)
                visit(st.body)
                visit(st.orelse)
            elif isinstance(st, (ast.With, ast.AsyncWith)):
                for item in st.items:
                    if item.optional_vars is not None:
                        targets(item.optional_vars)
                visit(st.body)
            elif isinstance(st, (ast.If, ast.While)):
                visit(st.body)
                visit(st.orelse)
            elif isinstance(st, ast.Try):
                visit(st.body)
                for h in st.handlers:
                    if h.name:
                        out.add(h.name)
                    visit(h.body)
                visit(st.orelse)
                visit(st.finalbody)
            for n in ast.walk(st):
                if isinstance(n, ast.NamedExpr):
                    out.add(n.target.id)
    visit(tree.body)
    return out


def _loaded(tree: ast.AST) -> set:
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}


_RNG_CALL = re.compile(r"\brng\b")


@dataclass
class Leftovers:
    """What removing the solutions of one chapter leaves behind."""
    needed: dict = field(default_factory=dict)     # name -> solution labels defining it
    shadowed: dict = field(default_factory=dict)   # name rebound by a solution, read later
    glue: list = field(default_factory=list)       # glue keys of solutions used outside
    labels: list = field(default_factory=list)     # labels inside solutions referenced elsewhere
    rng: list = field(default_factory=list)        # solutions drawing before later cells


def leftovers(text: str, solutions: list, other_text: str = "") -> Leftovers:
    """Names, glue keys and labels that the chapter (or ``other_text``) needs from its solutions.

    A name is *needed* when a code cell after a solution reads it and no main-text cell
    defined it before; it is *shadowed* when the main text defined it before but the solution
    rebinds it and a later main cell reads it (the student edition would read the older value).
    """
    out = Leftovers()
    main_defined: set = set()
    from_solution: dict = {}
    sol_of_cell = []
    for m in _CODE_CELL.finditer(text):
        line = text.count("\n", 0, m.start())
        sol_of_cell.append(next((s.label for s in solutions
                                 if s.first_line <= line <= s.last_line), None))
    cells = _code_cells(text, solutions)
    drew_from_rng = []
    for (source, in_sol), label in zip(cells, sol_of_cell):
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue                                    # IPython magics: nothing to learn
        defined = _top_level_defined(tree)
        if in_sol:
            for name in defined:
                from_solution.setdefault(name, set()).add(label)
            if _RNG_CALL.search(source):
                drew_from_rng.append(label)
            continue
        if drew_from_rng:
            out.rng.extend(x for x in drew_from_rng if x not in out.rng)
        for name in _loaded(tree):
            if name in from_solution:
                if name in main_defined:
                    out.shadowed.setdefault(name, set()).update(from_solution[name])
                else:
                    out.needed.setdefault(name, set()).update(from_solution[name])
        main_defined |= defined
        for name in defined:
            from_solution.pop(name, None)
    outside = _outside(text, solutions) + "\n" + other_text
    for sol in solutions:
        for key in re.findall(r"""\bglue\(\s*["']([^"']+)["']""", sol.text):
            if re.search(r"\{glue(?::\w+)?\}`" + re.escape(key) + r"(?::[^`]*)?`", outside):
                out.glue.append(key)
        for lab in re.findall(r"^\((\S+)\)=\s*$|^:(?:label|name):\s*(\S+)", sol.text,
                              flags=re.MULTILINE):
            lab = next(x for x in lab if x)
            if re.search(r"`" + re.escape(lab) + r"`|<" + re.escape(lab) + r">|\(#?"
                         + re.escape(lab) + r"\)", outside):
                out.labels.append(lab)
    return out


def _outside(text: str, solutions: list) -> str:
    lines = text.split("\n")
    keep = [line for i, line in enumerate(lines)
            if not any(s.first_line <= i <= s.last_line for s in solutions)]
    return "\n".join(keep)


# ---------------------------------------------------------------------------------------------
# the table of contents
# ---------------------------------------------------------------------------------------------
def toc_docnames(toc: dict) -> list:
    """Every ``file``/``root`` of a jb-book table of contents, in reading order."""
    out = [toc["root"]]

    def walk(entries):
        for entry in entries or []:
            if "file" in entry:
                out.append(entry["file"])
            walk(entry.get("sections"))
            walk(entry.get("chapters"))

    for part in toc.get("parts", []):
        walk(part.get("chapters"))
    walk(toc.get("chapters"))
    return out


def reduced_toc(toc: dict, keep: list) -> dict:
    """The table of contents restricted to ``keep`` (docnames), parts without pages dropped."""
    def prune(entries):
        kept = []
        for entry in entries or []:
            sections = prune(entry.get("sections"))
            if entry.get("file") in keep:
                new = {k: v for k, v in entry.items() if k != "sections"}
                if sections:
                    new["sections"] = sections
                kept.append(new)
            else:
                kept.extend(sections)
        return kept

    new = {k: v for k, v in toc.items() if k not in ("parts", "chapters")}
    parts = []
    for part in toc.get("parts", []):
        chapters = prune(part.get("chapters"))
        if chapters:
            parts.append({**{k: v for k, v in part.items() if k != "chapters"},
                          "chapters": chapters})
    new["parts"] = parts
    return new


#: Pages of the teacher edition only (left out of the student edition's table of contents).
TEACHER_ONLY = ("book/appendix/teachers",)


def student_toc() -> dict:
    """The repository's table of contents less :data:`TEACHER_ONLY`."""
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    keep = [d for d in toc_docnames(toc) if d.removesuffix(".md") not in TEACHER_ONLY]
    return reduced_toc(toc, keep)


# ---------------------------------------------------------------------------------------------
# the steps
# ---------------------------------------------------------------------------------------------
_SKIP = {"__pycache__", ".ipynb_checkpoints", "_build", "jupyter_execute"}


def _ignore(folder: str, names: list) -> set:
    """Left out of the copy: caches, and anything but files and folders (a kernel's IPC
    sockets while a chapter runs in book/ with `calnotes run`, ...)."""
    base = Path(folder)
    return {name for name in names
            if name in _SKIP or not ((base / name).is_file() or (base / name).is_dir())}


def make_sources(only: list | None = None, log=print) -> dict:
    """Copy and strip the sources into ``_build/course-src``; ``{docname: (n_removed, n_boxes)}``."""
    from calnotes.book import exercises
    if SRC.exists():
        shutil.rmtree(SRC)
    SRC.mkdir(parents=True)
    shutil.copytree(ROOT / "book", SRC / "book", ignore=_ignore)
    config = (ROOT / "_config.yml").read_text()
    config, n = re.subn(r'^title:\s*"(.*)"\s*$', r'title: "\1 (student edition)"', config,
                        count=1, flags=re.MULTILINE)
    if n != 1:
        raise ValueError("_config.yml: no double-quoted title line to mark the student edition")
    (SRC / "_config.yml").write_text(config)
    toc = student_toc()
    if only:
        keep = [toc["root"], *only]
        missing = [d for d in only if d not in toc_docnames(toc)]
        if missing:
            raise ValueError(f"--only: not in the student edition's table of contents: {missing}")
        toc = reduced_toc(toc, keep)
    (SRC / "_toc.yml").write_text(
        "# Student edition: generated by scripts/course.py from the repository's _toc.yml\n"
        + yaml.safe_dump(toc, sort_keys=False))

    sources = sorted((SRC / "book").rglob("*.md"))
    texts = {p: p.read_text() for p in sources}
    report, problems = {}, []
    all_labels = []
    for path, text in texts.items():
        rel = path.relative_to(SRC).with_suffix("").as_posix()
        all_labels += exercise_labels(text)
        new, sols = strip_solutions(text)
        if not sols:
            continue
        others = "\n".join(t for p, t in texts.items() if p != path)
        left = leftovers(text, sols, others)
        for name, labs in sorted(left.needed.items()):
            problems.append(f"{rel}: {name!r} is defined in solution(s) {sorted(labs)} and"
                            " used later in the chapter")
        for name, labs in sorted(left.shadowed.items()):
            problems.append(f"{rel}: solution(s) {sorted(labs)} rebind {name!r}, which a later"
                            " cell reads")
        for key in left.glue:
            problems.append(f"{rel}: glue key {key!r} of a solution is used outside it")
        for lab in left.labels:
            problems.append(f"{rel}: label {lab!r} inside a solution is referenced elsewhere")
        for lab in left.rng:
            log(f"note: {rel}: solution {lab} draws from rng before later cells of the"
                " chapter; their random numbers differ in the student edition")
        path.write_text(new)
        boxes = sum(1 for s in sols if s.label in exercises.labels())
        report[rel] = (len(sols), boxes)
    unknown = sorted(set(all_labels) - set(exercises.labels()) - set(exercises.NO_CHECKER))
    if unknown:
        problems.append(f"exercises neither checked nor listed in NO_CHECKER: {unknown}")
    if problems:
        raise SystemExit("course: the student edition would break:\n  " + "\n  ".join(problems))
    leaked = [p.relative_to(SRC).as_posix() for p in sources
              if re.search(r"\{solution(-start|-end)?\}", p.read_text())]
    if leaked:
        raise SystemExit(f"course: solutions left in {leaked}")
    n_sol = sum(r[0] for r in report.values())
    n_box = sum(r[1] for r in report.values())
    log(f"course: {n_sol} solutions removed from {len(report)} chapters, {n_box} check boxes"
        f" inserted, {len(all_labels)} exercises; sources in {_shown(SRC)}")
    return report


def build_html(log=print, strict: bool = True) -> Path:
    """jupyter-book build of the stripped sources, as strict as `make book` (``strict``)."""
    html = OUT / "html"
    work = OUT / ".jb"
    for folder in (html, work):
        if folder.exists():
            shutil.rmtree(folder)
    OUT.mkdir(parents=True, exist_ok=True)
    cmd = [str(ROOT / ".venv" / "bin" / "jupyter-book"), "build", str(SRC), "--all",
           *(["-W", "-n", "--keep-going"] if strict else []), "--path-output", str(work)]
    log("course: " + " ".join(cmd))
    t0 = time.time()
    subprocess.run(cmd, check=True, cwd=ROOT)
    shutil.move(str(work / "_build" / "html"), str(html))
    executed = OUT / "executed"
    if executed.exists():
        shutil.rmtree(executed)
    if (work / "_build" / "jupyter_execute").is_dir():     # the glued values, for the notebooks
        shutil.move(str(work / "_build" / "jupyter_execute"), str(executed))
    shutil.rmtree(work)
    log(f"course: student edition built in {time.time() - t0:.0f} s: "
        f"{_shown(html / 'index.html')}")
    return html


TEACHER_EXECUTED = ROOT / "_build" / "jupyter_execute"
#: The note below the title of every student notebook: the prose keeps
#: the book's numbers, a rerun changes only the outputs.
RERUN_NOTE = ("*The numbers in this text are the book's, from its run with the default"
              " parameters; if you change a parameter and rerun, only the outputs change.*")
#: The lean install for students (the notebooks' README; book/appendix/teachers.md says the
#: same): the library with the data extra (MNIST-5k, scikit-learn; pandas comes with it), the
#: scale extra (one chapter runs on Dask arrays) and the course extra (JupyterLab, the kernel).
#: Measured 2026-11-29: 585 MB, every import of the student notebooks works.
STUDENT_INSTALL = (
    "python3 -m venv .venv",
    ".venv/bin/pip install -e '.[data,scale,course]'",
    '.venv/bin/python -m ipykernel install --sys-prefix --name calnotes'
    ' --display-name "calnotes (Python 3)"',
)
KERNEL = {"name": "calnotes", "display_name": "calnotes (Python 3)", "language": "python"}


def _read_notebook(path: Path):
    from calnotes.book.chapters import _read_notebook as read
    return read(path)


def _glue_for(docname: str, glue_dirs: list, source_nb=None) -> dict | None:
    """The values ``docname`` glued when it ran: from the first of ``glue_dirs`` that has its
    ``.glue.json`` (myst-nb's record of an executed chapter), else from the outputs of
    ``source_nb`` (a page whose outputs were reused), else None."""
    from calnotes.book import notebook_markdown as nm
    for folder in glue_dirs:
        path = Path(folder) / f"{docname}.glue.json"
        if path.is_file():
            return nm.glue_from_json(path)
    if source_nb is not None:
        found = nm.glue_from_notebook(source_nb)
        if found:
            return found
    return None


def student_notebook(nb, glue: dict, index, docname: str):
    """One page (solutions already stripped) as a student notebook: the prose in plain Markdown
    with the glued numbers filled in and an answer and a check cell per exercise
    (:func:`calnotes.book.notebook_markdown.convert_notebook`), :data:`RERUN_NOTE` below the title,
    no glue plumbing in the code (:func:`calnotes.book.notebook_markdown.strip_glue`), no outputs,
    kernel ``calnotes``. Raises :class:`calnotes.book.notebook_markdown.MissingGlueError`."""
    from calnotes.book import notebook_markdown as nm
    nb = nm.convert_notebook(nb, glue, index, docname=docname, with_exercise_cells=True)
    nb = nm.add_note_below_title(nm.strip_glue(nb), RERUN_NOTE)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    for key in ("jupytext", "mystnb", "source_map", "language_info"):
        nb.metadata.pop(key, None)
    nb.metadata["kernelspec"] = dict(KERNEL)
    return nb


def write_notebooks(log=print, glue_dirs: list | None = None) -> list:
    """Every page with code of the student edition as a notebook for a plain Jupyter front end,
    in ``_build/course/notebooks/<part>/<chapter>.ipynb``: no outputs, solutions removed, the
    prose in plain Jupyter Markdown with the glued numbers filled in
    (:mod:`calnotes.book.notebook_markdown`) and :data:`RERUN_NOTE` below the title, the code
    without glue plumbing (:func:`calnotes.book.notebook_markdown.strip_glue`: the notebooks run in
    plain Jupyter), each exercise followed by an answer cell and a ready ``check`` cell,
    kernel ``calnotes``.

    The glued numbers come from ``glue_dirs`` (default: this course build's executed chapters,
    then the teacher build's ``_build/jupyter_execute``); a page whose prose uses a glued value
    none of them has stops the script, naming the page and the keys.
    """
    import nbformat

    from calnotes.book import notebook_markdown as nm
    if glue_dirs is None:
        glue_dirs = [OUT / "executed", TEACHER_EXECUTED]
    folder = OUT / "notebooks"
    if folder.exists():
        shutil.rmtree(folder)
    index = nm.book_index(SRC)
    written, problems = [], []
    for docname in toc_docnames(student_toc()):
        docname = docname.removesuffix(".md")
        md, ipynb = SRC / f"{docname}.md", SRC / f"{docname}.ipynb"
        if md.is_file() or ipynb.is_file():
            nb = _read_notebook(md if md.is_file() else ipynb)
        else:
            continue
        if not any(c.cell_type == "code" for c in nb.cells):
            continue
        glue = _glue_for(docname, glue_dirs, nb if ipynb.is_file() else None) or {}
        try:
            nb = student_notebook(nb, glue, index, docname)
        except nm.MissingGlueError as exc:
            problems.append(f"{exc} (no executed build has it: run `make book` or a full"
                            " `make course` first)")
            continue
        parts = Path(docname).parts
        part = parts[1] if len(parts) > 2 and parts[0] == "book" else "."
        target = folder / part / f"{Path(docname).name}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        title = next((line[2:].strip() for c in nb.cells if c.cell_type == "markdown"
                      for line in c.source.splitlines() if line.startswith("# ")), target.stem)
        written.append((target, title))
    if problems:
        raise SystemExit("course: notebooks without their numbers:\n  " + "\n  ".join(problems))
    readme = ["# calnotes: the chapters as notebooks (student edition)", "",
              "Open them in the calnotes environment. The notebooks need the library, its data"
              " and JupyterLab, not the book's toolchain; in the book's folder:", "",
              "```bash", *STUDENT_INSTALL, "```", "",
              "then run `.venv/bin/jupyter lab` in this folder. (`make course` installs the"
              " same into the book's full environment.) The notebooks ask for the `calnotes`"
              " kernel, so a Jupyter installed elsewhere asks you to pick a kernel instead of"
              " running a Python without calnotes.", "",
              "The numbers in the text are those of the book's own run, with the default"
              " parameters; rerun a notebook with other values and only its outputs change."
              " The notebooks run in plain Jupyter: the book's plumbing that put the numbers"
              " into its text (myst-nb's `glue`) is removed. Solutions are removed:"
              " after each exercise, write your work in the answer cell and replace each `...`"
              " in the check cell by your answer; `calnotes.book.exercises.check` says *right* or"
              " gives a hint. The first code cell of each notebook (tagged `parameters`) holds"
              " its sizes and seeds.", ""]
    readme += [f"1. [{title}]({path.relative_to(folder).as_posix()})" for path, title in written]
    (folder / "README.md").write_text("\n".join(readme) + "\n")
    log(f"course: {len(written)} notebooks in {_shown(folder)}")
    return [p for p, _ in written]


# ---------------------------------------------------------------------------------------------
# reusing the teacher build's execution
# ---------------------------------------------------------------------------------------------
def _matched_outputs(student_cells: list, executed_cells: list):
    """The executed cell for each student code cell, matched in order by source (the student
    cells are the teacher cells less the solutions'); None if some cell has no match."""
    out, j = [], 0
    for source in student_cells:
        while j < len(executed_cells) and executed_cells[j].source.strip() != source.strip():
            j += 1
        if j == len(executed_cells):
            return None
        out.append(executed_cells[j])
        j += 1
    return out


def reuse_execution(executed: Path = TEACHER_EXECUTED, log=print, any_age: bool = False) -> tuple:
    """Give each student page the outputs of the teacher build's run of the same page.

    The teacher edition (``make book``) executed every page; the student edition is the same
    pages less the solution cells, which :func:`leftovers` has shown the rest does not need.
    For each page whose executed notebook in ``executed`` is newer than the page's source, the
    library (``calnotes/``) and ``_config.yml``, and holds every student code cell, the
    student source is written as a notebook with those outputs (and the values it glued) and
    ``execution_mode: off`` added to the page's own ``mystnb`` settings (a page's
    ``render_markdown_format: myst`` is kept), so the student build does not run it again. A
    page without such a run is executed by the student build as before.
    With ``any_age`` a run is reused whatever its age (``--reuse any``: for working on the
    course scripts while the library changes; the outputs may be stale).
    Returns ``(reused, executed_again)``: lists of docnames.
    """
    import nbformat

    reused, again = [], []
    # a run older than the library or the configuration is stale whatever its page says
    floor = max(p.stat().st_mtime for p in [*(ROOT / "calnotes").rglob("*.py"),
                                             ROOT / "_config.yml"])
    for docname in toc_docnames(yaml.safe_load((SRC / "_toc.yml").read_text())):
        docname = docname.removesuffix(".md")
        md, ipynb = SRC / f"{docname}.md", SRC / f"{docname}.ipynb"
        source = md if md.is_file() else ipynb if ipynb.is_file() else None
        if source is None:
            continue
        nb = _read_notebook(source)
        code = [c for c in nb.cells if c.cell_type == "code"]
        if not code:
            continue
        run = executed / f"{docname}.ipynb"
        original = next((ROOT / f"{docname}{suffix}" for suffix in (".md", ".ipynb")
                         if (ROOT / f"{docname}{suffix}").is_file()), None)
        if not run.is_file() or original is None or (
                not any_age and run.stat().st_mtime < max(original.stat().st_mtime, floor)):
            again.append(docname)
            continue
        ran = nbformat.read(run, as_version=4)
        matched = _matched_outputs([c.source for c in code],
                                   [c for c in ran.cells if c.cell_type == "code"])
        if matched is None:
            again.append(docname)
            continue
        for cell, done in zip(code, matched):
            cell.outputs = done.get("outputs", [])
            cell.execution_count = done.get("execution_count")
        glue_file = executed / f"{docname}.glue.json"
        hidden = json.loads(glue_file.read_text()) if glue_file.is_file() else {}
        shown = {o.get("metadata", {}).get("scrapbook", {}).get("name")
                 for c in code for o in c.outputs}
        extra = []
        for key, output in hidden.items():
            if key in shown:
                continue
            prefix = output.get("metadata", {}).get("scrapbook", {}).get("mime_prefix", "")
            extra.append(nbformat.from_dict({
                "output_type": "display_data",
                "metadata": output.get("metadata", {}),
                "data": {prefix + mime: data for mime, data in output.get("data", {}).items()},
            }))
        code[0].outputs = list(code[0].outputs) + extra
        # merged, not replaced: a page's own myst-nb settings (render_markdown_format: myst,
        # which renders its Markdown(...) outputs' tables, math and roles) must survive
        nb.metadata["mystnb"] = {**nb.metadata.get("mystnb", {}), "execution_mode": "off"}
        nb.metadata.setdefault("kernelspec", dict(KERNEL))
        nbformat.write(nb, ipynb)
        if source == md:
            md.unlink()
        reused.append(docname)
    log(f"course: outputs of {len(reused)} pages reused from {_shown(executed)}"
        f" (the teacher build); {len(again)} executed again"
        + (f": {again}" if again else ""))
    return reused, again


def check_notebooks(paths: list) -> None:
    """No outputs, no solutions, no MyST markup left (glue roles, directives, references), no
    glue plumbing in the code (``from myst_nb import glue``, ``glue(...)``), the rerun note
    below the title, the ``calnotes`` kernel."""
    import nbformat

    from calnotes.book import notebook_markdown as nm
    for path in paths:
        text = path.read_text()
        if re.search(r"\{solution(-start|-end)?\}", text):
            raise SystemExit(f"course: {path}: a solution is left")
        nb = nbformat.reads(text, as_version=4)
        for cell in nb.cells:
            if cell.cell_type == "code" and (cell.get("outputs") or cell.get("execution_count")):
                raise SystemExit(f"course: {path}: outputs left")
        left = nm.leftover_markup(nb)
        if left:
            raise SystemExit(f"course: {path}: MyST markup left in the markdown: {left}")
        glued = [i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                 and ("myst_nb" in c.source or re.search(r"(?<![\w.])glue\(", c.source))]
        if glued:
            raise SystemExit(f"course: {path}: glue plumbing left in code cells {glued}")
        if RERUN_NOTE not in "\n".join(c.source for c in nb.cells[:2]):
            raise SystemExit(f"course: {path}: no note on rerunning below the title")
        if nb.metadata.get("kernelspec", {}).get("name") != KERNEL["name"]:
            raise SystemExit(f"course: {path}: kernel is not {KERNEL['name']!r}")


def main(argv=None) -> int:
    global OUT, SRC
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="DOCNAME",
                        help="reduced table of contents: the root page and these pages"
                             " (e.g. book/foundations/measures), built without -W since"
                             " references to the pages left out cannot resolve; the notebooks"
                             " are still written for every chapter")
    parser.add_argument("--no-html", action="store_true", help="skip the jupyter-book build")
    parser.add_argument("--reuse", choices=("auto", "no", "any"), default="auto",
                        help="auto (default): pages that the teacher build (`make book`,"
                             " _build/jupyter_execute) ran after their last edit are not"
                             " executed again (their outputs are reused); no: execute every page;"
                             " any: reuse the teacher run of every page whatever its age (for"
                             " working on these scripts: outputs may be stale)")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="output folder (default _build/course; the stripped sources go to"
                             " DIR-src)")
    args = parser.parse_args(argv)
    if args.out is not None:
        OUT = args.out.resolve()
        SRC = OUT.with_name(OUT.name + "-src")
    t0 = time.time()
    make_sources(args.only)
    if not args.no_html:
        if args.reuse != "no" and TEACHER_EXECUTED.is_dir():
            reuse_execution(any_age=args.reuse == "any")
        build_html(strict=not args.only)
    check_notebooks(write_notebooks())
    print(f"course: done in {time.time() - t0:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
