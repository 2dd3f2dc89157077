"""The course edition of the book: `make course`.

1. Copies the book sources (``_config.yml``, ``_toc.yml``, ``book/``) to ``_build/course-src/``
   and removes every solution (the gated ``{solution-start}`` ... ``{solution-end}`` blocks,
   code cells included, and the ``{solution}`` directive form), putting in place of each a box
   that shows how to check an answer with :func:`calnotes.exercises.check` (for exercises
   that have a checker; nothing for proofs and explanations).
2. Refuses to go on if a removed solution cell defines something the rest of its chapter uses,
   glues a value referenced outside the solution, or holds a label referenced elsewhere (the
   student build would break or silently change); reports solution cells that draw from a
   random generator before later cells of the chapter (their numbers would differ).
3. Builds the student edition with jupyter-book exactly like ``make book`` (every chapter
   executed, ``-W -n --keep-going``) into ``_build/course/html``.
4. Writes the chapters as notebooks without outputs, solutions removed, ``parameters`` cells
   intact: ``_build/course/notebooks/<part>/<chapter>.ipynb`` (``<part>`` is the chapter's
   folder under ``book/``; figure pages go to their part's folder), with a ``README.md``
   listing them in the order of the book.

The PDF is printed by ``scripts/course_pdf.py``.  Run from the repository root with the
virtual environment's Python: ``.venv/bin/python scripts/course.py [--only DOCNAME ...]``;
``--only`` builds a reduced table of contents (the root page and the given pages), for
development.
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
    from calnotes import exercises
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
        "from calnotes.exercises import check",
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
    from calnotes import exercises
    solutions = find_solutions(text)
    lines = text.split("\n")
    for sol in reversed(solutions):
        if sol.label in exercises.labels():
            replacement = check_box(sol.label).split("\n")
        elif sol.label in exercises.NO_CHECKER:
            replacement = []
        else:
            raise ValueError(f"solution {sol.label!r}: its exercise is neither in"
                             " calnotes.exercises nor in calnotes.exercises.NO_CHECKER")
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
    from calnotes import exercises
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
    toc = yaml.safe_load((ROOT / "_toc.yml").read_text())
    if only:
        keep = [toc["root"], *only]
        missing = [d for d in only if d not in toc_docnames(toc)]
        if missing:
            raise ValueError(f"--only: not in _toc.yml: {missing}")
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
        f" inserted, {len(all_labels)} exercises; sources in {SRC.relative_to(ROOT)}")
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
    shutil.rmtree(work)
    log(f"course: student edition built in {time.time() - t0:.0f} s: "
        f"{(html / 'index.html').relative_to(ROOT)}")
    return html


def write_notebooks(log=print) -> list:
    """The chapters with code as notebooks without outputs, in ``_build/course/notebooks``."""
    import jupytext
    import nbformat
    folder = OUT / "notebooks"
    if folder.exists():
        shutil.rmtree(folder)
    toc = yaml.safe_load((SRC / "_toc.yml").read_text())
    written = []
    for docname in toc_docnames(toc):
        md, ipynb = SRC / f"{docname}.md", SRC / f"{docname}.ipynb"
        if md.is_file():
            nb = jupytext.read(md)
        elif ipynb.is_file():
            nb = nbformat.read(ipynb, as_version=4)
        else:
            continue
        if not any(c.cell_type == "code" for c in nb.cells):
            continue
        for cell in nb.cells:
            if cell.cell_type == "code":
                cell.outputs, cell.execution_count = [], None
        nb.metadata.pop("jupytext", None)
        nb.metadata.setdefault("kernelspec", {"display_name": "Python 3", "language": "python",
                                              "name": "python3"})
        parts = Path(docname).parts
        part = parts[1] if len(parts) > 2 and parts[0] == "book" else "."
        target = folder / part / f"{Path(docname).name}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(nb, target)
        title = next((line[2:].strip() for c in nb.cells if c.cell_type == "markdown"
                      for line in c.source.splitlines() if line.startswith("# ")), target.stem)
        written.append((target, title))
    readme = ["# calnotes: the chapters as notebooks (student edition)", "",
              "Run them with the calnotes environment (`make env`, then `.venv/bin/jupyter lab`"
              " or any Jupyter front end on the `python3` kernel). Solutions are removed; check"
              " an answer with `calnotes.exercises.check(label, answer)`. The first code cell"
              " of each notebook (tagged `parameters`) holds its sizes and seeds.", ""]
    readme += [f"1. [{title}]({path.relative_to(folder).as_posix()})" for path, title in written]
    (folder / "README.md").write_text("\n".join(readme) + "\n")
    log(f"course: {len(written)} notebooks in {folder.relative_to(ROOT)}")
    return [p for p, _ in written]


def check_notebooks(paths: list) -> None:
    """No outputs, no solutions, a parameters cell where the chapter has one."""
    for path in paths:
        nb = json.loads(path.read_text())
        text = json.dumps(nb)
        if re.search(r"\{solution(-start|-end)?\}", text):
            raise SystemExit(f"course: {path}: a solution is left")
        for cell in nb["cells"]:
            if cell["cell_type"] == "code" and (cell.get("outputs") or cell.get("execution_count")):
                raise SystemExit(f"course: {path}: outputs left")


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="+", metavar="DOCNAME",
                        help="reduced table of contents: the root page and these pages"
                             " (e.g. book/foundations/measures), built without -W since"
                             " references to the pages left out cannot resolve")
    parser.add_argument("--no-html", action="store_true", help="skip the jupyter-book build")
    args = parser.parse_args(argv)
    make_sources(args.only)
    if not args.no_html:
        build_html(strict=not args.only)
    check_notebooks(write_notebooks())
    return 0


if __name__ == "__main__":
    sys.exit(main())
