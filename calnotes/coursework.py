"""Teaching with the book: the exercise index, and checking a folder of submitted notebooks.

:func:`exercise_index` lists every exercise of the book (its label, chapter, a suggested week,
and whether :func:`calnotes.exercises.check` can check it), read from the book's sources in
the order of ``_toc.yml``.  :func:`check_submissions` runs submitted student notebooks (the
course edition's notebooks, with a ``check(...)`` cell after each exercise) and collects the
verdicts; ``calnotes check-notebook`` is its command line and writes the CSV files.

How a submission is checked
    Each notebook is executed from top to bottom in a fresh kernel (``nbclient``; a cell that
    fails does not stop the later ones; ``timeout`` seconds per cell), with the environment
    variable :data:`calnotes.exercises.CHECK_LOG` naming a temporary file.  Every call of
    :func:`calnotes.exercises.check` in the notebook appends its verdict to that file, so the
    verdicts are those the library computed, not text parsed from the notebook (a student who
    types "right" into a cell gets nothing for it).  The last verdict per exercise counts.
    An exercise with a check cell but no verdict is reported as ``error`` (its cell failed:
    the error is given) or ``not run``.

What this is for
    Feedback, not exams: the checker computes the right answers from the library, so a student
    can recover them (the verdict never prints them, but the code that computes them is in
    the package), and running a submission runs the student's code with the teacher's rights.
    Run untrusted submissions in a container or a throwaway account.

Examples
--------
>>> rows = exercise_index()
>>> len(rows) == len(set(r.label for r in rows))
True
>>> next(r for r in rows if r.label == "ex-qece-by-hand").checkable
True
"""

from __future__ import annotations

import csv
import json
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from . import exercises as _exercises
from .chapters import _kernel_manager_class, find_book_root

__all__ = ["Exercise", "exercise_index", "Submission", "check_submissions",
           "submission_files", "write_csv"]

_EXERCISE = re.compile(r"^(`{3,}|:{3,})\{exercise(?:-start)?\}[^\n]*\n(?::[^\n]*\n)*?"
                       r":label:\s*(\S+)", re.MULTILINE)


@dataclass(frozen=True)
class Exercise:
    """One exercise of the book."""

    label: str
    chapter: str        #: the chapter's title
    docname: str        #: ``book/foundations/measures``
    part: str           #: the part's caption in ``_toc.yml``
    week: int           #: suggested week: the chapter's rank among chapters with exercises
    checkable: bool     #: :func:`calnotes.exercises.check` has a checker for it
    answer: str         #: what to give (the checker's parts), or why there is no checker


def exercise_index(root: str | Path | None = None) -> list:
    """Every exercise of the book in reading order (:class:`Exercise`).

    The suggested week is one chapter per week, counting only the chapters that have
    exercises, in the order of ``_toc.yml``.

    Raises
    ------
    ValueError
        An exercise of the book is neither checked nor listed in
        :data:`calnotes.exercises.NO_CHECKER` (the index would be wrong about it).
    """
    import yaml

    root = find_book_root(root)
    toc = yaml.safe_load((root / "_toc.yml").read_text())
    rows, week = [], 0
    for part in toc.get("parts", []):
        for docname in _files(part.get("chapters")):
            path = root / f"{docname.removesuffix('.md')}.md"
            if not path.is_file():
                continue
            text = path.read_text()
            labels = [m.group(2) for m in _EXERCISE.finditer(text)]
            if not labels:
                continue
            week += 1
            title = re.search(r"^# (.+)$", text, flags=re.MULTILINE)
            for label in labels:
                checkable = label in _exercises.labels()
                if not checkable and label not in _exercises.NO_CHECKER:
                    raise ValueError(f"exercise {label!r} ({docname}) is neither checked nor"
                                     " listed in calnotes.exercises.NO_CHECKER")
                answer = ("; ".join(_exercises.describe(label).splitlines()) if checkable
                          else _exercises.NO_CHECKER[label])
                rows.append(Exercise(label, title.group(1).strip() if title else docname,
                                     docname.removesuffix(".md"), part.get("caption", ""),
                                     week, checkable, answer))
    return rows


def _files(entries) -> list:
    out = []
    for entry in entries or []:
        if "file" in entry:
            out.append(entry["file"])
        out.extend(_files(entry.get("sections")))
    return out


# ---------------------------------------------------------------------------------------------
# submissions
# ---------------------------------------------------------------------------------------------
@dataclass
class Submission:
    """The verdicts of one submitted notebook."""

    student: str                 #: the file name without ``.ipynb`` (relative to the folder)
    path: Path
    verdicts: dict = field(default_factory=dict)   #: label -> {"status", "hints", ...}
    error: str = ""              #: the notebook could not be run at all
    failed_cells: int = 0        #: code cells that raised an error when it ran

    def status(self, label: str) -> str:
        return self.verdicts.get(label, {}).get("status", "")


def submission_files(paths) -> list:
    """``[(student, path)]``: each ``.ipynb`` given, and every ``.ipynb`` under each folder
    given (checkpoints skipped), sorted.

    Raises
    ------
    FileNotFoundError, ValueError
        A path that does not exist, a file that is not a notebook, a folder without one.
    """
    out = []
    for given in paths:
        path = Path(given)
        if path.is_dir():
            found = sorted(p for p in path.rglob("*.ipynb")
                           if ".ipynb_checkpoints" not in p.parts)
            if not found:
                raise ValueError(f"SUBMISSION: folder {given} holds no .ipynb file")
            out += [(p.relative_to(path).with_suffix("").as_posix(), p) for p in found]
        elif path.is_file():
            if path.suffix != ".ipynb":
                raise ValueError(f"SUBMISSION: {given} is not a notebook (.ipynb)")
            out.append((path.stem, path))
        else:
            raise FileNotFoundError(f"SUBMISSION: {given}: no such file or folder")
    return out


def _check_cells(nb) -> dict:
    """``{label: cell}`` of the notebook's check cells (tagged by the course edition), or of
    any code cell that calls ``check("label", ...)``."""
    out = {}
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("calnotes", {})
        if meta.get("role") == "check":
            out[meta["exercise"]] = cell
            continue
        for label in re.findall(r"""\bcheck\(\s*["']([\w.-]+)["']""", cell.source):
            out.setdefault(label, cell)
    return out


def _error_of(cell) -> str:
    for output in cell.get("outputs", []):
        if output.get("output_type") == "error":
            return f"{output.get('ename')}: {output.get('evalue')}"
    return ""


def check_submissions(paths, *, timeout: int = 120, kernel: str = "python3",
                      log=None) -> list:
    """Run each submitted notebook and collect its exercises' verdicts (:class:`Submission`).

    Parameters
    ----------
    paths : list of path
        Notebooks, or folders of notebooks (:func:`submission_files`).
    timeout : int
        Seconds per cell before the cell is stopped (a loop that never ends).
    kernel : str
        The Jupyter kernel that runs the notebooks (default ``python3``: the Python that runs
        this function, with calnotes installed), whatever kernel the notebook names.
    log : callable, optional
        Called with one line per notebook (progress).
    """
    import nbformat
    from nbclient import NotebookClient
    from nbclient.exceptions import CellTimeoutError, DeadKernelError

    if not isinstance(timeout, int) or isinstance(timeout, bool) or timeout < 1:
        raise ValueError(f"timeout (command line: --timeout): expected a positive number of"
                         f" seconds, got {timeout!r}")
    files = submission_files(paths)
    manager_class = _kernel_manager_class()       # IPC sockets on POSIX, as `calnotes run`
    manager = {"kernel_manager_class": manager_class} if manager_class else {}
    results = []
    for student, path in files:
        sub = Submission(student, path)
        try:
            nb = nbformat.read(path, as_version=4)
        except Exception as exc:  # noqa: BLE001 - any unreadable file is reported, not fatal
            sub.error = f"not a readable notebook: {exc}"
            results.append(sub)
            continue
        cells = _check_cells(nb)
        fd, record = tempfile.mkstemp(prefix="calnotes-check-", suffix=".jsonl")
        os.close(fd)
        old = os.environ.get(_exercises.CHECK_LOG)
        os.environ[_exercises.CHECK_LOG] = record
        here = os.getcwd()
        try:
            # run in the notebook's folder, as papermill does: the kernel's IPC sockets are
            # named relative to the current folder, for the kernel and for this client alike
            os.chdir(path.parent)
            client = NotebookClient(nb, timeout=timeout, kernel_name=kernel, allow_errors=True,
                                    startup_timeout=180, **manager)
            client.execute()
        except (CellTimeoutError, DeadKernelError, RuntimeError) as exc:
            sub.error = f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        finally:
            os.chdir(here)
            if old is None:
                os.environ.pop(_exercises.CHECK_LOG, None)
            else:
                os.environ[_exercises.CHECK_LOG] = old
        sub.failed_cells = sum(1 for c in nb.cells if c.cell_type == "code" and _error_of(c))
        for line in Path(record).read_text().splitlines():
            row = json.loads(line)
            sub.verdicts[row["label"]] = row
        Path(record).unlink()
        for label, cell in cells.items():
            if label not in sub.verdicts:
                error = _error_of(cell)
                sub.verdicts[label] = {"label": label, "status": "error" if error else "not run",
                                       "hints": {"cell": error} if error else {}}
        if log:
            counts = {}
            for row in sub.verdicts.values():
                counts[row["status"]] = counts.get(row["status"], 0) + 1
            summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no checks"
            if sub.failed_cells:
                summary += f"; {sub.failed_cells} cell(s) raised an error"
            log(f"{student}: {summary}{' (' + sub.error + ')' if sub.error else ''}")
        results.append(sub)
    return results


def write_csv(results: list, out: str | Path) -> tuple:
    """Write ``OUT/summary.csv`` (one row per student, one column per exercise, the status)
    and ``OUT/details.csv`` (one row per student and exercise, with the hints); returns the
    two paths."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    try:                        # the book's order of the exercises, when the book is at hand
        index = {e.label: i for i, e in enumerate(exercise_index())}
    except (FileNotFoundError, ValueError):
        index = {}
    labels = sorted({label for r in results for label in r.verdicts},
                    key=lambda lab: (index.get(lab, len(index)), lab))
    summary, details = out / "summary.csv", out / "details.csv"
    with open(summary, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["student", "right", "checked", *labels, "failed_cells", "error"])
        for r in results:
            statuses = [r.status(lab) for lab in labels]
            writer.writerow([r.student, statuses.count("right"),
                             sum(bool(s) for s in statuses), *statuses, r.failed_cells,
                             r.error])
    with open(details, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(["student", "exercise", "status", "hints", "notebook"])
        for r in results:
            for lab in labels:
                if lab in r.verdicts:
                    row = r.verdicts[lab]
                    hints = "; ".join(f"{k}: {v}" for k, v in row.get("hints", {}).items())
                    if row.get("problem"):
                        hints = f"could not read the answer: {row['problem']}"
                    writer.writerow([r.student, lab, row["status"], hints, str(r.path)])
    return summary, details
