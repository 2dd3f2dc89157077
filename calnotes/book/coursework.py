"""Teaching with the book: the exercise index, and checking a folder of submitted notebooks.

:func:`exercise_index` lists every exercise of the book (its label, chapter, a suggested week,
and whether :func:`calnotes.book.exercises.check` can check it), read from the book's sources in
the order of ``_toc.yml``.  :func:`check_submissions` runs submitted student notebooks (the
course edition's notebooks, with a ``check(...)`` cell after each exercise) and collects the
verdicts; ``calnotes check-notebook`` is its command line and writes the CSV files.

How a submission is checked
    Every file found is a row (:func:`find_submissions`): FIFOs, devices and links to files
    outside the folder are never opened, other kinds of files are named, notebooks are read
    within :data:`MAX_NOTEBOOK_BYTES`.  Each notebook is copied into a private scratch
    folder and run from top to bottom in a fresh kernel, in a process of its own
    (:mod:`calnotes.book._sandbox`) with its own time and memory limits, a clean environment
    (:data:`KEPT_ENVIRONMENT`), and, where the platform allows, no network, every file system
    read-only except the scratch folder, the submissions, the output folder and the book's
    sources hidden, and every process it starts stopped with it.  A cell that runs past
    ``timeout`` is interrupted and the next cells run.

Verdicts the notebook cannot write
    While the checker runs a notebook, each ``check(...)`` call shows the *answer* it was
    given as data; the checker reads the answers out of the executed notebook and computes
    every verdict itself (:mod:`calnotes.book._notebook_worker`).  Nothing a notebook prints or
    writes becomes a verdict: a notebook that writes "right" anywhere gets the verdict of the
    answer it gave.

What this is for
    Feedback, not exams: the right answers are computed from the library, so a student can
    recover them by reading the package, and a submission still runs as code with the
    checker's rights where the platform offers no namespaces (:func:`containment` says what
    is contained on this machine).

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
import fcntl
import hashlib
import json
import math
import os
import re
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path

from .chapters import find_book_root

__all__ = ["Exercise", "exercise_index", "Submission", "check_submissions",
           "find_submissions", "write_csv", "containment", "VERDICTS", "MAX_JOBS",
           "MAX_NOTEBOOK_BYTES", "KEPT_ENVIRONMENT"]

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
    checkable: bool     #: :func:`calnotes.book.exercises.check` has a checker for it
    answer: str         #: what to give (the checker's parts), or why there is no checker


def exercise_index(root: str | Path | None = None) -> list:
    """Every exercise of the book in reading order (:class:`Exercise`).

    The suggested week is one chapter per week, counting only the chapters that have
    exercises, in the order of ``_toc.yml``.

    Raises
    ------
    ValueError
        An exercise of the book is neither checked nor listed in
        :data:`calnotes.book.exercises.NO_CHECKER` (the index would be wrong about it).
    """
    import yaml

    from . import exercises as _exercises  # here: it imports sympy (half a second)

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
                                     " listed in calnotes.book.exercises.NO_CHECKER")
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
# submissions: one row per file found
# ---------------------------------------------------------------------------------------------
#: Most notebooks run at once by default (``jobs=None``: the cores available, up to this).
MAX_JOBS = 8
#: Largest notebook file read (bytes): a course notebook with all its figures is a few MB; a
#: larger file is reported, not read.
MAX_NOTEBOOK_BYTES = 50 * 2 ** 20

#: What a row says about the whole submission (:attr:`Submission.verdict`).
VERDICTS = {
    "checked": "every cell was run (a cell that failed is counted in failed_cells)",
    "stopped": "the run stopped early (the reason says where); later check cells are 'not run'",
    "timed out": "the notebook ran past its total time limit and was stopped; nothing counted",
    "crashed": "the checker's process for this notebook ended without a result",
    "not run": "the kernel could not be started",
    "unreadable": "not a notebook file that can be read (the reason says why)",
    "not a notebook": "a file of another kind in the folder",
    "special file": "a FIFO, device or socket: never opened",
    "linked outside": "a symbolic link to a file outside the submissions folder: not followed",
    "too large": f"larger than {MAX_NOTEBOOK_BYTES >> 20} MB: not read",
    "other notebook": "a notebook whose checks are all for exercises not assigned",
    "no check cells": "a notebook without a check(...) cell: nothing to check",
    "not checked": "interrupted, or the total time budget ran out: a rerun resumes here",
}


@dataclass
class Submission:
    """One row of the check: a file found, what became of it, and its exercises' verdicts."""

    student: str                 #: the path below the folder given, without ``.ipynb``
    path: Path
    verdict: str = "checked"     #: one of :data:`VERDICTS`
    reason: str = ""             #: why, where not "checked"; else the first failing cell
    verdicts: dict = field(default_factory=dict)   #: label -> {"status", "hints", ...}
    failed_cells: int = 0        #: code cells that ended in an error (timeouts included)
    seconds: float = 0.0         #: time the check of this file took
    sha256: str = ""             #: of the bytes checked (a rerun reuses an unchanged file's row)
    labels: tuple = ()           #: the exercises of the notebook's check cells
    data: bytes = field(default=b"", repr=False, compare=False)

    @property
    def error(self) -> str:
        """The reason, where the submission could not be checked in full (else empty)."""
        return "" if self.verdict == "checked" else self.reason

    def status(self, label: str) -> str:
        return self.verdicts.get(label, {}).get("status", "")


def _under(path, folder) -> bool:
    path, folder = os.path.abspath(path), os.path.abspath(folder)
    return os.path.commonpath([path, folder]) == folder


def _kind(mode) -> str:
    return ("a FIFO (named pipe)" if stat.S_ISFIFO(mode) else
            "a character device" if stat.S_ISCHR(mode) else
            "a block device" if stat.S_ISBLK(mode) else
            "a socket" if stat.S_ISSOCK(mode) else "not a regular file")


def _found(student: str, path: Path, root: Path) -> Submission:
    """A file found under ``root``, read (bytes, hash) if it is a notebook to run."""
    sub = Submission(student, path)
    try:
        st = os.lstat(path)
        if stat.S_ISLNK(st.st_mode):
            target = os.path.realpath(path)
            if not _under(target, os.path.realpath(root)):
                sub.verdict, sub.reason = "linked outside", VERDICTS["linked outside"]
                return sub
            st = os.stat(target)
            if stat.S_ISDIR(st.st_mode):
                sub.verdict, sub.reason = "special file", "a link to a folder: not followed"
                return sub
            path = Path(target)
        if not stat.S_ISREG(st.st_mode):
            sub.verdict, sub.reason = "special file", f"{_kind(st.st_mode)}: never opened"
            return sub
        name = sub.path.name.casefold()
        if not name.endswith(".ipynb"):
            hint = ("an archive: unpack it into the folder first"
                    if name.endswith((".zip", ".tar", ".gz", ".tgz", ".7z", ".rar")) else
                    "rename it to .ipynb if it is a notebook"
                    if name.endswith(".ipynb.json") or name.endswith(".json") else
                    "not a .ipynb file")
            sub.verdict, sub.reason = "not a notebook", hint
            return sub
        if st.st_size > MAX_NOTEBOOK_BYTES:
            sub.verdict = "too large"
            sub.reason = (f"{st.st_size / 2 ** 20:.0f} MB, above the limit of"
                          f" {MAX_NOTEBOOK_BYTES >> 20} MB (calnotes.book.coursework."
                          "MAX_NOTEBOOK_BYTES)")
            return sub
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOFOLLOW", 0))
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):   # replaced meanwhile
                sub.verdict, sub.reason = "special file", "not a regular file: never read"
                return sub
            chunks, size = [], 0
            while size <= MAX_NOTEBOOK_BYTES and (block := os.read(fd, 1 << 20)):
                chunks.append(block)
                size += len(block)
        finally:
            os.close(fd)
        if size > MAX_NOTEBOOK_BYTES:
            sub.verdict, sub.reason = "too large", VERDICTS["too large"]
            return sub
        sub.data = b"".join(chunks)
        sub.sha256 = hashlib.sha256(sub.data).hexdigest()
    except OSError as exc:
        sub.verdict, sub.reason = "unreadable", f"cannot read it: {exc.strerror or exc}"
    return sub


def find_submissions(paths) -> list:
    """One :class:`Submission` per file given or found below each folder given, sorted.

    Nothing found is executed or parsed here.  Notebooks (``.ipynb``, any case) are read,
    within :data:`MAX_NOTEBOOK_BYTES`; every other file gets a row saying what it is: another
    kind of file, a FIFO or device (never opened), a link to a file outside the folder (never
    followed), too large, unreadable.  Hidden files, ``.ipynb_checkpoints`` and
    ``__MACOSX`` are skipped; folders behind links are not entered.

    Raises
    ------
    FileNotFoundError, ValueError
        A path that does not exist; a folder in which nothing was found.
    """
    out = []
    for given in paths:
        path = Path(given)
        if not os.path.lexists(path):
            raise FileNotFoundError(f"SUBMISSION: {given}: no such file or folder")
        if path.is_dir() and not path.is_symlink():
            found = []
            for folder, dirs, files in os.walk(path):
                dirs[:] = sorted(d for d in dirs if not d.startswith(".")
                                 and d not in (".ipynb_checkpoints", "__MACOSX"))
                for name in sorted(files) + [d for d in dirs
                                             if os.path.islink(os.path.join(folder, d))]:
                    if name.startswith("."):
                        continue
                    file = Path(folder) / name
                    rel = file.relative_to(path).as_posix()
                    student = rel[:-6] if rel.casefold().endswith(".ipynb") else rel
                    found.append(_found(student, file, path))
                dirs[:] = [d for d in dirs if not os.path.islink(os.path.join(folder, d))]
            if not found:
                raise ValueError(f"SUBMISSION: folder {given} holds no file")
            out += found
        else:
            stem = path.name[:-6] if path.name.casefold().endswith(".ipynb") else path.name
            sub = _found(stem, path, path.parent)
            if sub.verdict == "not a notebook":
                raise ValueError(f"SUBMISSION: {given} is not a notebook (.ipynb)")
            out.append(sub)
    return out


def _parsed(sub: Submission):
    """The notebook of ``sub`` (nbformat 4), or ``None`` with the row marked unreadable.
    Error messages never quote the file's content."""
    import nbformat
    try:
        text = sub.data.decode("utf-8")
    except UnicodeDecodeError as exc:
        sub.verdict, sub.reason = "unreadable", f"not UTF-8 text (byte {exc.start})"
        return None
    try:
        raw = json.loads(text)
    except ValueError as exc:
        where = f"line {exc.lineno} column {exc.colno}" if hasattr(exc, "lineno") else ""
        sub.verdict, sub.reason = "unreadable", f"not a readable notebook: not JSON ({where})"
        return None
    if not isinstance(raw, dict) or raw.get("nbformat") not in (3, 4):
        version = raw.get("nbformat") if isinstance(raw, dict) else None
        sub.verdict = "unreadable"
        sub.reason = ("not a readable notebook: " + (f"nbformat {version!r} is not supported"
                                                      if version is not None else
                                                      "JSON without a notebook's fields"))
        return None
    try:
        nb = nbformat.convert(nbformat.from_dict(raw), 4)
        cells = nb.get("cells")
        if not isinstance(cells, list):
            raise ValueError("its cells are not a list")
        for number, cell in enumerate(cells, 1):
            if not isinstance(cell, dict) or not isinstance(cell.get("cell_type"), str):
                raise ValueError(f"cell {number} is not a cell")
            source = cell.get("source")
            if isinstance(source, list) and all(isinstance(s, str) for s in source):
                cell["source"] = "".join(source)
            elif not isinstance(source, str):
                raise ValueError(f"cell {number} has no source text")
            if not isinstance(cell.get("metadata"), dict):
                cell["metadata"] = nbformat.NotebookNode()
            if cell["cell_type"] == "code":
                cell["outputs"], cell["execution_count"] = [], None
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds on malformed input
        sub.verdict = "unreadable"
        sub.reason = f"not a readable notebook: {str(exc).splitlines()[0][:200] if str(exc) else type(exc).__name__}"
        return None
    return nb


# ---------------------------------------------------------------------------------------------
# running one submission in its own process
# ---------------------------------------------------------------------------------------------
#: The start of a submission's process (``python -c``): the sandbox (calnotes/book/_sandbox.py,
#: standard library only) loaded by its path and entered before anything of calnotes is imported.
_ENTER = (
    "import importlib.util, json, os, sys\n"
    "sys.path[:] = [p for p in sys.path if p not in ('', '.')]\n"
    "config = json.loads(sys.argv[1])\n"
    "spec = importlib.util.spec_from_file_location('_calnotes_sandbox', config['sandbox'])\n"
    "sandbox = importlib.util.module_from_spec(spec)\n"
    "spec.loader.exec_module(sandbox)\n"
    "achieved = sandbox.enter(config)\n")
#: A submission's process: enter the sandbox, then run the notebook.
_BOOT = _ENTER + "from calnotes.book._notebook_worker import main\nmain(config, achieved)\n"
#: The probe of :func:`containment`: enter the sandbox, report what it achieved.
_PROBE = _ENTER + "os.write(config['result_fd'], json.dumps(achieved).encode())\n"

#: Environment variables passed to a submission's process; every other one of the teacher's
#: is dropped (tokens, credentials, paths that say where the teacher's files are).
KEPT_ENVIRONMENT = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "PYTHONPATH", "VIRTUAL_ENV",
                    "SYSTEMROOT")

#: Largest result a submission's process may send back (bytes): verdicts and hints are small.
MAX_RESULT_BYTES = 16 * 2 ** 20


@dataclass(frozen=True)
class _Options:
    cell_timeout: int
    notebook_timeout: int
    kernel: str
    memory_mb: int
    contain: bool
    jupyter_path: str
    hide: tuple

    def key(self) -> str:
        from .. import __version__
        return json.dumps([self.cell_timeout, self.kernel, __version__])


def _environment(scratch: Path, options: _Options) -> dict:
    env = {k: os.environ[k] for k in KEPT_ENVIRONMENT if k in os.environ}
    folders = {"HOME": "home", "TMPDIR": "tmp", "JUPYTER_RUNTIME_DIR": "runtime",
               "JUPYTER_CONFIG_DIR": "jupyter", "JUPYTER_DATA_DIR": "jupyter-data",
               "IPYTHONDIR": "ipython", "MPLCONFIGDIR": "matplotlib"}
    for name, sub in folders.items():
        (scratch / sub).mkdir(exist_ok=True)
        env[name] = str(scratch / sub)
    env.update(MPLBACKEND="Agg", PYTHONDONTWRITEBYTECODE="1", OPENBLAS_NUM_THREADS="1",
               OMP_NUM_THREADS="1", MKL_NUM_THREADS="1", PYDEVD_DISABLE_FILE_VALIDATION="1",
               PYTHONUNBUFFERED="1")
    if options.jupyter_path:
        env["JUPYTER_PATH"] = options.jupyter_path
    return env


def _kill(proc) -> None:
    """Stop a submission's process: SIGTERM (it stops its kernel and everything the kernel
    started), then SIGKILL to its process group."""
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(wait)
            return
        except subprocess.TimeoutExpired:
            continue


class _Runner:
    """Runs submissions, each in its own process and scratch folder below one private root,
    and stops them all on request (Ctrl-C, the time budget)."""

    def __init__(self, options: _Options):
        self.options = options
        self.root = Path(tempfile.mkdtemp(prefix="calnotes-check-"))
        (self.root / "pid").write_text(str(os.getpid()))
        self.procs, self.lock, self.stopping = set(), threading.Lock(), False
        self._mpl_cache = _matplotlib_cache()

    def stop(self) -> None:
        with self.lock:
            self.stopping = True
            procs = list(self.procs)
        for proc in procs:
            _kill(proc)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)

    def run(self, sub: Submission, nb, limit: float) -> None:
        """Execute ``nb`` (the parsed notebook of ``sub``) within ``limit`` seconds."""
        import nbformat

        opts = self.options
        scratch = Path(tempfile.mkdtemp(dir=self.root))
        try:
            work = scratch / "work"
            work.mkdir()
            notebook = work / "submission.ipynb"
            notebook.write_text(nbformat.writes(nb, version=nbformat.NO_CONVERT))
            (scratch / "empty").write_bytes(b"")
            env = _environment(scratch, opts)
            if self._mpl_cache:
                shutil.copy(self._mpl_cache, env["MPLCONFIGDIR"])
            read, write = os.pipe()
            config = {"sandbox": str(Path(__file__).with_name("_sandbox.py")),
                      "memory_mb": opts.memory_mb, "contain": opts.contain,
                      "scratch": str(scratch), "empty": str(scratch / "empty"),
                      "hide": list(opts.hide), "notebook": str(notebook),
                      "workdir": str(work), "cell_timeout": opts.cell_timeout,
                      "kernel": opts.kernel, "result_fd": write, "close_in_parent": [write]}
            with self.lock:
                if self.stopping:
                    os.close(read), os.close(write)
                    sub.verdict, sub.reason = "not checked", "the check was interrupted"
                    return
                with open(scratch / "log.txt", "wb") as log:
                    proc = subprocess.Popen(
                        [sys.executable, "-c", _BOOT, json.dumps(config)], cwd=work, env=env,
                        stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                        pass_fds=(write,), start_new_session=True)
                self.procs.add(proc)
            os.close(write)
            chunks = []
            reader = threading.Thread(target=_read_all, args=(read, chunks), daemon=True)
            reader.start()
            timed_out = False
            try:
                proc.wait(timeout=max(limit, 1))
            except subprocess.TimeoutExpired:
                timed_out = True
                _kill(proc)
            reader.join(10)
            with self.lock:
                self.procs.discard(proc)
                stopping = self.stopping
            self._result(sub, b"".join(chunks), proc.returncode, timed_out, stopping, limit,
                         scratch / "log.txt")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)

    def _result(self, sub, data, code, timed_out, stopping, limit, log) -> None:
        if stopping:
            sub.verdict, sub.reason = "not checked", "the check was interrupted"
            return
        if timed_out:
            sub.verdict = "timed out"
            sub.reason = f"the notebook ran past {limit:.0f} s in all and was stopped"
            return
        try:
            result = json.loads(data.decode())
            verdicts = result["verdicts"]
            if not isinstance(verdicts, dict):
                raise TypeError
        except (ValueError, KeyError, TypeError, UnicodeDecodeError):
            sub.verdict = "crashed"
            sub.reason = (f"the checker's process ended without a result (exit status"
                          f" {code}){_last_line(log)}")
            return
        sub.verdicts = verdicts
        sub.failed_cells = int(result.get("failed_cells", 0))
        if result.get("error"):
            sub.verdict = "not run"
            sub.reason = result["error"]
        elif result.get("stopped"):
            sub.verdict, sub.reason = "stopped", result["stopped"]
        elif result.get("first_error"):
            sub.reason = f"first failing {str(result['first_error'])[:300]}"


def _read_all(fd: int, chunks: list) -> None:
    size = 0
    with os.fdopen(fd, "rb") as fh:
        while block := fh.read(1 << 16):
            size += len(block)
            if size <= MAX_RESULT_BYTES:
                chunks.append(block)


def _last_line(log: Path) -> str:
    """The last line the process printed (a kernel's or Python's complaint), shortened."""
    try:
        lines = [ln for ln in log.read_bytes()[-4000:].decode(errors="replace").splitlines()
                 if ln.strip()]
    except OSError:
        return ""
    return f": {lines[-1].strip()[:200]}" if lines else ""


def _matplotlib_cache():
    """The teacher's matplotlib font list, copied into each scratch folder (else every kernel
    that imports matplotlib rebuilds it)."""
    try:
        import matplotlib
        found = sorted(Path(matplotlib.get_cachedir()).glob("fontlist-*.json"))
    except Exception:  # noqa: BLE001 - an optional speed-up
        return None
    return found[-1] if found else None


def _stale_roots() -> None:
    """Remove the private roots of earlier checks whose process is gone (a killed checker)."""
    for root in Path(tempfile.gettempdir()).glob("calnotes-check-*"):
        try:
            pid = int((root / "pid").read_text())
            os.kill(pid, 0)
        except ProcessLookupError:
            shutil.rmtree(root, ignore_errors=True)
        except (OSError, ValueError):
            continue


def containment(contain: bool = True, memory_mb: int = 4096, hide=()) -> list:
    """What the checker's process per submission achieves on this machine (phrases), found by
    starting one with nothing to run.

    Examples
    --------
    >>> any("memory" in line for line in containment(contain=False))
    True
    """
    root = Path(tempfile.mkdtemp(prefix="calnotes-probe-"))
    try:
        (root / "empty").write_bytes(b"")
        read, write = os.pipe()
        config = {"sandbox": str(Path(__file__).with_name("_sandbox.py")),
                  "memory_mb": memory_mb, "contain": contain, "scratch": str(root),
                  "empty": str(root / "empty"), "hide": list(hide), "result_fd": write,
                  "close_in_parent": [write]}
        proc = subprocess.Popen([sys.executable, "-c", _PROBE, json.dumps(config)],
                                pass_fds=(write,), stdin=subprocess.DEVNULL,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(write)
        chunks = []
        _read_all(read, chunks)
        proc.wait(30)
        try:
            return json.loads(b"".join(chunks).decode())
        except ValueError:
            return ["the sandbox could not be started"]
    finally:
        shutil.rmtree(root, ignore_errors=True)


# ---------------------------------------------------------------------------------------------
# the batch
# ---------------------------------------------------------------------------------------------
def _kernel_path(kernel: str) -> str:
    """The ``JUPYTER_PATH`` under which the submissions' processes find ``kernel``.

    Raises
    ------
    ValueError
        No kernel of that name is installed (the message lists those that are).
    """
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel
    manager = KernelSpecManager()
    try:
        spec = manager.get_kernel_spec(kernel)
    except NoSuchKernel:
        names = ", ".join(sorted(manager.find_kernel_specs())) or "none"
        raise ValueError(f"kernel (command line: --kernel): no Jupyter kernel named"
                         f" {kernel!r}; installed: {names}") from None
    resource = Path(spec.resource_dir) if getattr(spec, "resource_dir", "") else None
    return str(resource.parents[1]) if resource and resource.parent.name == "kernels" else ""


def _hidden_paths(paths, out) -> tuple:
    """The folders (or files) the students' code must not see: each submissions folder (or
    each submitted file), the output folder and the book's checkout (its sources, solutions,
    build and history), except what the check itself needs (this Python, calnotes, the
    temporary folder)."""
    import calnotes
    needed = [sys.prefix, os.path.dirname(os.path.abspath(calnotes.__file__)),
              tempfile.gettempdir(), sys.executable]
    hide = []
    for given in [*paths, *( [out] if out is not None else [])]:
        path = os.path.realpath(given)
        if not os.path.exists(path):
            continue
        if os.path.isdir(path) and any(_under(n, path) for n in needed):
            if os.path.isdir(path) and given != out:
                hide += [str(p) for p in Path(path).rglob("*") if p.is_file()
                         and not p.is_symlink() and p.name.casefold().endswith(".ipynb")]
            continue
        hide.append(path)
    try:                        # the book's checkout, but for the library and its Python
        book = os.path.realpath(find_book_root())
        if any(_under(n, book) for n in needed):
            hide += [os.path.join(book, name) for name in sorted(os.listdir(book))
                     if not any(_under(n, os.path.join(book, name)) for n in needed)
                     and not name.endswith((".egg-info", ".dist-info"))]
        else:
            hide.append(book)
    except (FileNotFoundError, ValueError, OSError):
        pass
    return tuple(dict.fromkeys(hide))


def _assigned(notebooks: list, exercises) -> set:
    """The exercises assigned: those given, else those whose check cells are in at least half
    of the notebooks that have check cells."""
    if exercises:
        return set(exercises)
    with_checks = [set(sub.labels) for sub in notebooks if sub.labels]
    counts = {}
    for labels in with_checks:
        for label in labels:
            counts[label] = counts.get(label, 0) + 1
    return {label for label, n in counts.items() if 2 * n >= len(with_checks)}


def check_submissions(paths, *, timeout: int = 120, notebook_timeout: int = 900,
                      kernel: str = "python3", jobs: int | None = None,
                      memory_mb: int = 4096, time_budget: float | None = None,
                      exercises=None, out=None, force: bool = False, contain: bool = True,
                      log=None) -> list:
    """Run each submitted notebook in its own contained process and compute its verdicts.

    Every file found is a row (:func:`find_submissions`).  Each notebook is copied into a
    private scratch folder (never run where it was handed in) and run there from top to
    bottom in a fresh kernel, in a process of its own with its own limits
    (:mod:`calnotes.book._sandbox`: no network, files read-only outside the scratch folder, the
    submissions and the book hidden, every process it starts stopped with it, where the
    platform allows).  Its ``check(...)`` calls show their answers, and the verdicts are
    computed from those answers by the checker (:mod:`calnotes.book._notebook_worker`), never
    taken from the notebook.

    Parameters
    ----------
    paths : list of path
        Notebooks, or folders of them.
    timeout : int
        Seconds per cell: a cell still running is interrupted, and the next cells run.
    notebook_timeout : int
        Seconds for a whole notebook (kernel start included) before it is stopped.
    kernel : str
        The Jupyter kernel that runs the notebooks (default ``python3``).
    jobs : int, optional
        Notebooks run at once (default: the cores available to this process, at most
        :data:`MAX_JOBS`).
    memory_mb : int
        Address space allowed to each process of a submission.
    time_budget : float, optional
        Seconds for the whole batch; submissions not started by then are "not checked"
        (a rerun with the same ``out`` resumes).
    exercises : list of str, optional
        The exercises assigned; default: those in at least half of the notebooks.  A notebook
        with check cells for none of them is an "other notebook" and is not run.
    out : path, optional
        Folder for ``summary.csv``, ``details.csv`` and ``checks.jsonl`` (the rows checked so
        far, rewritten after every notebook).  A folder of an earlier check is resumed: an
        unchanged notebook (same name, same bytes, same options) keeps its row.
    force : bool
        Start ``out`` afresh (the earlier check's files are replaced).
    contain : bool
        Use the namespaces of :mod:`calnotes.book._sandbox` where available.
    log : callable, optional
        Called with one line per notebook (progress), and first with what is contained.

    Returns
    -------
    list of Submission
    """
    for name, value, low in (("timeout", timeout, 1), ("notebook_timeout", notebook_timeout, 1),
                             ("memory_mb", memory_mb, 256)):
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            flag = "--" + name.replace("_", "-").replace("-mb", "")
            raise ValueError(f"{name} (command line: {flag}): expected a whole number of at"
                             f" least {low}, got {value!r}")
    if jobs is None:
        jobs = min(MAX_JOBS, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
                   else os.cpu_count() or 1)
    if not isinstance(jobs, int) or isinstance(jobs, bool) or jobs < 1:
        raise ValueError(f"jobs (command line: --jobs): expected a positive whole number,"
                         f" got {jobs!r}")
    if time_budget is not None and not (isinstance(time_budget, (int, float))
                                        and math.isfinite(time_budget) and time_budget > 0):
        raise ValueError(f"time_budget (command line: --time-budget): expected a positive"
                         f" number of seconds, got {time_budget!r}")
    if exercises is not None:
        from . import exercises as _exercises

        unknown = sorted(set(exercises) - set(_exercises.labels()))
        if unknown:
            raise ValueError(f"exercises (command line: --exercises): {', '.join(unknown)}:"
                             f" no checker; checked exercises: {', '.join(_exercises.labels())}")
    options = _Options(timeout, notebook_timeout, kernel, memory_mb, contain,
                       _kernel_path(kernel), ())
    found = find_submissions(paths)
    state = _State(out, paths, force, options.key()) if out is not None else None
    try:
        options = _Options(**{**options.__dict__, "hide": _hidden_paths(paths, out)})
        return _run_batch(found, options, jobs, time_budget, exercises, state, log)
    finally:
        if state is not None:
            state.close()


def _run_batch(found, options, jobs, time_budget, exercises, state, log) -> list:
    notebooks = []
    for sub in found:
        if sub.verdict == "checked":
            nb = _parsed(sub)
            if nb is not None:
                from ._notebook_worker import check_cells
                sub.labels = tuple(check_cells(nb))
                notebooks.append((sub, nb))
    assigned = _assigned([s for s, _ in notebooks], exercises)
    todo = []
    for sub, nb in notebooks:
        if not sub.labels:
            sub.verdict, sub.reason = "no check cells", VERDICTS["no check cells"]
        elif assigned and not assigned & set(sub.labels):
            sub.verdict = "other notebook"
            sub.reason = (f"its checks are for {', '.join(sorted(sub.labels))}, not for the"
                          f" assigned {', '.join(sorted(assigned))}")
        elif state is not None and state.reuse(sub):
            pass
        else:
            todo.append((sub, nb))
    if state is not None:
        state.write(found)
    _stale_roots()
    runner = _Runner(options)
    start = time.monotonic()
    if log and todo:
        from ._sandbox import NOT_CONTAINED
        log("each notebook runs as code with your rights; contained: "
            + "; ".join(containment(options.contain, options.memory_mb, options.hide))
            + ". Not contained: " + "; ".join(NOT_CONTAINED) + ".")
    if log:
        reused = sum(1 for s in found if getattr(s, "reused", False))
        log(f"checking {len(todo)} notebook(s) of {len(found)} file(s), {jobs} at a time"
            + (f"; {reused} unchanged since the last check into this folder" if reused else ""))
    done = 0
    try:
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            def task(item):
                sub, nb = item
                began = time.monotonic()
                left = options.notebook_timeout
                if time_budget is not None:
                    left = min(left, time_budget - (began - start))
                    if left <= 0:
                        sub.verdict = "not checked"
                        sub.reason = (f"the time budget of {time_budget:g} s ran out; run"
                                      " again into the same folder to resume")
                        return sub
                runner.run(sub, nb, left)
                sub.seconds = time.monotonic() - began
                return sub

            futures = [pool.submit(task, item) for item in todo]
            try:
                for future in as_completed(futures):
                    sub = future.result()
                    done += 1
                    if state is not None:
                        state.record(sub)
                        state.write(found)
                    if log:
                        log(_progress(sub, done, len(todo), time.monotonic() - start))
            except BaseException:
                runner.stop()
                for future in futures:
                    future.cancel()
                raise
    except BaseException:
        for sub, _ in todo:
            if sub.verdict == "checked" and not sub.verdicts:
                sub.verdict, sub.reason = "not checked", "the check was interrupted"
        if state is not None:
            state.write(found)
        raise
    finally:
        runner.close()
    return found


def _progress(sub: Submission, done: int, total: int, elapsed: float) -> str:
    counts = {}
    for row in sub.verdicts.values():
        counts[row["status"]] = counts.get(row["status"], 0) + 1
    summary = ", ".join(f"{n} {s}" for s, n in sorted(counts.items())) or "no checks"
    if sub.failed_cells:
        summary += f"; {sub.failed_cells} cell(s) raised an error"
    if sub.verdict != "checked":
        summary = f"{sub.verdict}: {sub.reason}" + (f" ({summary})" if sub.verdicts else "")
    left = elapsed / done * (total - done)
    return (f"[{done}/{total}] {sub.student}: {summary} ({sub.seconds:.1f} s"
            + (f"; about {left / 60:.0f} min left" if total > done and left >= 60 else "")
            + ")")


# ---------------------------------------------------------------------------------------------
# the output folder: rows written as they come, resumed by a rerun
# ---------------------------------------------------------------------------------------------
_STATE_FILES = ("checks.jsonl", "summary.csv", "details.csv")


class _State:
    """``OUT/checks.jsonl`` (one line per notebook run), the CSV files, and a lock."""

    def __init__(self, out, paths, force: bool, key: str):
        from .._outdir import refuse_source_folder
        out = Path(out)
        refuse_source_folder(out)
        for given in paths:
            if Path(given).is_dir() and _under(os.path.realpath(out),
                                               os.path.realpath(given)):
                raise ValueError(f"out (command line: --out): {out} is inside the submissions"
                                 f" folder {given}; write the results elsewhere")
        if out.exists() and not out.is_dir():
            raise NotADirectoryError(f"out (command line: --out): {out} exists and is not a"
                                     " folder")
        out.mkdir(parents=True, exist_ok=True)
        self.out, self.key = out, key
        self.lock = open(out / ".check.lock", "a")
        try:
            fcntl.flock(self.lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self.lock.close()
            raise RuntimeError(f"out (command line: --out): another check-notebook is writing"
                               f" into {out}; wait for it, or choose another folder") from None
        records = out / "checks.jsonl"
        if force:
            for name in _STATE_FILES:
                (out / name).unlink(missing_ok=True)
        elif not records.exists() and any((out / n).exists() for n in _STATE_FILES):
            self.close()
            raise FileExistsError(f"out (command line: --out): {out} holds the CSV files of"
                                  " a check this version cannot resume; pass --force to"
                                  " replace them")
        self.records = {}
        if records.exists():
            for line in records.read_text(errors="replace").splitlines():
                try:
                    row = json.loads(line)
                    self.records[(row["student"], row["sha256"], row["key"])] = row
                except (ValueError, KeyError, TypeError):
                    continue
        self.file = open(records, "a", encoding="utf-8")

    def reuse(self, sub: Submission) -> bool:
        row = self.records.get((sub.student, sub.sha256, self.key))
        if row is None:
            return False
        sub.verdict, sub.reason = row["verdict"], row["reason"]
        sub.verdicts, sub.failed_cells = row["verdicts"], row["failed_cells"]
        sub.seconds, sub.reused = row["seconds"], True
        return True

    def record(self, sub: Submission) -> None:
        if sub.verdict == "not checked":
            return
        row = {"student": sub.student, "sha256": sub.sha256, "key": self.key,
               "verdict": sub.verdict, "reason": sub.reason, "verdicts": sub.verdicts,
               "failed_cells": sub.failed_cells,
               "seconds": sub.seconds}    # unrounded: a resumed CSV rounds it as the first did
        self.file.write(json.dumps(row) + "\n")
        self.file.flush()
        os.fsync(self.file.fileno())

    def write(self, found: list) -> None:
        write_csv(found, self.out)

    def close(self) -> None:
        if getattr(self, "file", None):
            self.file.close()
        fcntl.flock(self.lock, fcntl.LOCK_UN)
        self.lock.close()


def _cell(value) -> str:
    """A CSV cell a spreadsheet shows as text (a leading = + - @ would be a formula)."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _replace(path: Path, rows: list) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    os.replace(tmp, path)


def write_csv(results: list, out: str | Path) -> tuple:
    """Write ``OUT/summary.csv`` (one row per file, one column per exercise, the status) and
    ``OUT/details.csv`` (one row per notebook and exercise, with the hints); returns the two
    paths.  Each file is replaced whole (written beside it, then renamed), so a reader never
    sees half a file; cells that a spreadsheet would read as a formula are quoted."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    try:                        # the book's order of the exercises, when the book is at hand
        index = {e.label: i for i, e in enumerate(exercise_index())}
    except (FileNotFoundError, ValueError):
        index = {}
    labels = sorted({label for r in results for label in r.verdicts},
                    key=lambda lab: (index.get(lab, len(index)), lab))
    summary = [["student", "verdict", "right", "checked", *labels, "failed_cells", "seconds",
                "reason"]]
    details = [["student", "exercise", "status", "hints", "file"]]
    for r in results:
        statuses = [r.status(lab) for lab in labels]
        summary.append([_cell(r.student), r.verdict, statuses.count("right"),
                        sum(bool(s) for s in statuses), *statuses, r.failed_cells,
                        f"{r.seconds:.1f}", _cell(r.reason)])
        for lab in labels:
            if lab in r.verdicts:
                row = r.verdicts[lab]
                hints = "; ".join(f"{k}: {v}" for k, v in row.get("hints", {}).items())
                if row.get("problem"):
                    hints = f"could not read the answer: {row['problem']}"
                details.append([_cell(r.student), lab, row["status"], _cell(hints),
                                _cell(r.path.name)])
    paths = out / "summary.csv", out / "details.csv"
    _replace(paths[0], summary)
    _replace(paths[1], details)
    return paths
