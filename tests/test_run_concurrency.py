"""One `calnotes run` at a time per output folder: a run holds a lock on ``--out`` from start
to end, executes into a partial notebook of its own, and removes partial notebooks that killed
runs left behind; SIGTERM stops a run as Ctrl-C does (kernel shut down, partial removed)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from calnotes import cli
from calnotes.book import chapters
from myst_chapter import myst_chapter

fcntl = pytest.importorskip("fcntl")
papermill = pytest.importorskip("papermill")

_CHAPTER = myst_chapter('''# Tiny

```{code-cell} ipython3
:tags: [parameters]
marker = ""  # where the kernel writes its process id
wait = 0     # seconds the second cell sleeps
```

```{code-cell} ipython3
import os, time
if marker:
    open(marker, "w").write(str(os.getpid()))
time.sleep(wait)
```
''')


@pytest.fixture
def book(tmp_path):
    root = tmp_path / "book"
    root.mkdir()
    (root / "_toc.yml").write_text("format: jb-book\nroot: tiny\n")
    (root / "tiny.md").write_text(_CHAPTER)
    return root


@pytest.fixture
def fake_kernel(monkeypatch):
    """papermill without a kernel: writes the notebook to its output path; ``calls`` records
    the output paths, ``during`` (if set) runs while the 'kernel' works."""
    import nbformat

    state = {"calls": [], "during": None}

    def execute(notebook, output, **kwargs):
        state["calls"].append(output)
        nbformat.write(notebook, output)
        if state["during"] is not None:
            state["during"]()
        return notebook

    monkeypatch.setattr(papermill, "execute_notebook", execute)
    return state


def test_a_second_run_into_a_busy_folder_is_refused(book, tmp_path, fake_kernel, capsys):
    out = tmp_path / "out"
    refused = []

    def second_run():                     # another run, while the first one executes
        try:
            chapters.run_chapter("tiny", {"wait": 1}, out, root=book, force=True)
        except BlockingIOError as exc:
            refused.append(str(exc))

    fake_kernel["during"] = second_run
    assert chapters.run_chapter("tiny", {}, out, root=book) == out / "tiny.ipynb"
    assert refused == [f"--out: another calnotes run is writing into {out}; wait for it to"
                       " finish, or choose another folder"]
    assert len(fake_kernel["calls"]) == 1          # the second run never started executing
    assert "wait = 1" not in (out / "tiny.ipynb").read_text()


def test_the_command_line_names_the_busy_folder(book, tmp_path, fake_kernel, capsys):
    out = tmp_path / "out"
    out.mkdir()
    fd = os.open(out, os.O_RDONLY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)     # another run holds the folder
        assert cli.main(["--book", str(book), "run", "tiny", "--out", str(out)]) == 2
    finally:
        os.close(fd)
    assert f"another calnotes run is writing into {out}" in capsys.readouterr().err
    assert fake_kernel["calls"] == [] and os.listdir(out) == []
    assert cli.main(["--book", str(book), "run", "tiny", "--out", str(out)]) == 0


def test_an_output_written_meanwhile_is_not_replaced_without_force(book, tmp_path,
                                                                   fake_kernel):
    out = tmp_path / "out"
    out.mkdir()
    real_lock = chapters._OutLock.__enter__

    def finished_meanwhile(self):         # a run that ended between the check and the lock
        (out / "tiny.ipynb").write_text("{}")
        return real_lock(self)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(chapters._OutLock, "__enter__", finished_meanwhile)
        with pytest.raises(FileExistsError, match="pass --force"):
            chapters.run_chapter("tiny", {}, out, root=book)
    assert (out / "tiny.ipynb").read_text() == "{}" and fake_kernel["calls"] == []


def test_each_run_writes_a_partial_notebook_of_its_own(book, tmp_path, fake_kernel):
    out = tmp_path / "out"
    chapters.run_chapter("tiny", {}, out, root=book)
    chapters.run_chapter("tiny", {}, out, root=book, force=True)
    first, second = (os.path.basename(p) for p in fake_kernel["calls"])
    assert first != second
    for name in (first, second):
        assert name.startswith(f".tiny.{os.getpid()}-") and name.endswith(".partial.ipynb")
    assert sorted(os.listdir(out)) == ["tiny.ipynb"]


def test_partial_notebooks_of_killed_runs_are_removed(book, tmp_path, fake_kernel):
    out = tmp_path / "out"
    out.mkdir()
    left = [out / ".tiny.partial.ipynb",                   # an earlier version's name
            out / ".tiny.999999999-0a1b2c3d.partial.ipynb",  # a writer that is gone
            out / ".intro.4194304-deadbeef.partial.ipynb"]
    for path in left:
        path.write_text("{}")
    (out / "notes.ipynb").write_text("{}")                 # not a partial notebook: kept
    chapters.run_chapter("tiny", {}, out, root=book)
    assert sorted(os.listdir(out)) == ["notes.ipynb", "tiny.ipynb"]


def test_without_a_lock_only_partials_of_gone_writers_are_removed(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    alive = out / f".tiny.{os.getpid()}-00000000.partial.ipynb"
    gone = out / ".tiny.999999999-00000000.partial.ipynb"
    unknown = out / ".tiny.partial.ipynb"
    for path in (alive, gone, unknown):
        path.write_text("{}")
    assert chapters._remove_stale_partials(out, locked=False) == [gone]
    assert alive.exists() and unknown.exists()


@pytest.mark.skipif(os.name != "posix", reason="signals")
def test_sigterm_stops_a_run_like_ctrl_c(book, tmp_path):
    """A real kernel: SIGTERM during a cell ends the run by SIGTERM, with the partial
    notebook removed, the kernel shut down and its socket folder gone."""
    out, marker = tmp_path / "out", tmp_path / "kernel.pid"
    tmp = Path(tempfile.mkdtemp(prefix="cn-"))     # short: a socket path has at most 107 bytes
    script = textwrap.dedent(f"""
        from calnotes.book import chapters
        chapters.run_chapter("tiny", {{"marker": {str(marker)!r}, "wait": 120}}, {str(out)!r},
                             root={str(book)!r})
    """)
    env = {**os.environ, "TMPDIR": str(tmp)}
    run = subprocess.Popen([sys.executable, "-c", script], env=env, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        while not (marker.exists() and marker.read_text()):
            assert run.poll() is None, run.communicate()
            assert time.monotonic() < deadline, "the kernel never started its cell"
            time.sleep(0.2)
        assert [n for n in os.listdir(out) if n.endswith(".partial.ipynb")]
        run.send_signal(signal.SIGTERM)
        run.communicate(timeout=60)
    finally:
        if run.poll() is None:
            run.kill()
        kernel_folders = [n for n in os.listdir(tmp) if n.startswith("calnotes-kernel-")]
        shutil.rmtree(tmp, ignore_errors=True)
    assert run.returncode == -signal.SIGTERM
    assert os.listdir(out) == []
    kernel = int(marker.read_text())
    deadline = time.monotonic() + 10
    while chapters._pid_alive(kernel) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not chapters._pid_alive(kernel)
    assert kernel_folders == []
