"""calnotes check-notebook as a batch over a class: one row per file, verdicts the notebook
cannot write, submissions kept out of each other's way, rows written as they come."""

import csv
import hashlib
import json
import os
import socket
from pathlib import Path

import nbformat
import pytest

from calnotes.book import _answers, coursework
from calnotes.book.notebook_markdown import exercise_cells

RIGHT = (4612, 0.0351)            # ex-001-dkw-m: M and the half-width (test_exercises checks)


def _notebook(path, m="...", h="...", before=(), after=()):
    cells = [nbformat.v4.new_code_cell(src) for src in before] + exercise_cells("ex-001-dkw-m")
    for cell in cells:
        if cell.metadata.get("calnotes", {}).get("role") == "check":
            cell.source = cell.source.replace('"M": ...,', f'"M": {m},').replace(
                '"halfwidth": ...,', f'"halfwidth": {h},')
    cells += [nbformat.v4.new_code_cell(src) for src in after]
    nbformat.write(nbformat.v4.new_notebook(cells=cells), path)


def _rows(out):
    with open(Path(out) / "summary.csv", newline="") as fh:
        return {row["student"]: row for row in csv.DictReader(fh)}


def _digests(folder):
    return {p: hashlib.sha256(p.read_bytes()).hexdigest()
            for p in Path(folder).rglob("*") if p.is_file() and not p.is_symlink()}


CONTAINED = coursework.containment()
NAMESPACES = "no network" in CONTAINED


# ------------------------------------------------------------------ rows, without a kernel
def test_every_file_found_is_a_row_and_special_files_are_never_opened(tmp_path):
    root = tmp_path / "class"
    root.mkdir()
    _notebook(root / "alice.ipynb", *RIGHT)
    _notebook(root / "BOB.IPYNB", *RIGHT)
    (root / "carol.ipynb.json").write_text("{}")
    (root / "dave.zip").write_bytes(b"PK\x03\x04")
    (root / ".hidden.ipynb").write_text("{}")
    os.mkfifo(root / "erin.ipynb")
    os.symlink("/dev/zero", root / "frank.ipynb")
    os.symlink("/etc/hostname", root / "gina.ipynb")
    os.symlink(root / "alice.ipynb", root / "harry.ipynb")          # inside: followed
    (root / "sub").mkdir()
    os.symlink("..", root / "sub" / "loop")
    rows = {s.student: s for s in coursework.find_submissions([root])}
    assert sorted(rows) == ["BOB", "alice", "carol.ipynb.json", "dave.zip", "erin", "frank",
                            "gina", "harry", "sub/loop"]
    assert rows["BOB"].verdict == rows["alice"].verdict == rows["harry"].verdict == "checked"
    assert rows["harry"].data == rows["alice"].data
    assert rows["erin"].verdict == "special file" and "FIFO" in rows["erin"].reason
    assert rows["frank"].verdict == rows["gina"].verdict == "linked outside"
    assert rows["sub/loop"].reason == "a link to a folder: not followed"
    assert "archive" in rows["dave.zip"].reason and "rename" in rows["carol.ipynb.json"].reason
    assert not any(s.data for name, s in rows.items() if name not in ("alice", "BOB", "harry"))


def test_a_notebook_above_the_size_limit_is_not_read(tmp_path, monkeypatch):
    _notebook(tmp_path / "big.ipynb", *RIGHT)
    size = (tmp_path / "big.ipynb").stat().st_size
    monkeypatch.setattr(coursework, "MAX_NOTEBOOK_BYTES", size - 1)
    (sub,) = coursework.find_submissions([tmp_path / "big.ipynb"])
    assert sub.verdict == "too large" and sub.data == b""
    monkeypatch.setattr(coursework, "MAX_NOTEBOOK_BYTES", size)
    (sub,) = coursework.find_submissions([tmp_path / "big.ipynb"])
    assert sub.verdict == "checked" and len(sub.data) == size


@pytest.mark.parametrize("content, says", [
    (b"root:x:0:0:root:/root:/bin/bash\n", "not JSON (line 1 column 1)"),
    (b"", "not JSON"),
    (b"[]", "JSON without a notebook's fields"),
    (b'{"nbformat": 5, "cells": []}', "nbformat 5 is not supported"),
    (b'{"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": null}',
     "its cells are not a list"),
    (json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "metadata": {}, "source": None, "outputs": []}]}).encode(),
     "cell 1 has no source text"),
    ("{\"s\": \"caf\u00e9\"}".encode("latin-1"), "not UTF-8 text"),
])
def test_an_unreadable_notebook_is_named_without_quoting_it(tmp_path, content, says):
    path = tmp_path / "x.ipynb"
    path.write_bytes(content)
    (sub,) = coursework.find_submissions([path])
    assert coursework._parsed(sub) is None
    assert sub.verdict == "unreadable" and says in sub.reason
    assert "root:" not in sub.reason


def test_malformed_check_cell_metadata_is_ignored_not_fatal(tmp_path):
    from calnotes.book._notebook_worker import check_cells
    raw = {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "code", "id": "a", "metadata": {"calnotes": "check"}, "source": "x = 1",
         "outputs": [], "execution_count": None},
        {"cell_type": "code", "id": "b", "metadata": {"calnotes": {"role": "check"}},
         "source": "y = 1", "outputs": [], "execution_count": None},
        {"cell_type": "code", "id": "c", "metadata": {}, "source": 'check("ex-a", 1)',
         "outputs": [], "execution_count": None}]}
    path = tmp_path / "m.ipynb"
    path.write_text(json.dumps(raw))
    (sub,) = coursework.find_submissions([path])
    assert check_cells(coursework._parsed(sub)) == {"ex-a": 2}


def test_csv_cells_that_a_spreadsheet_would_compute_are_quoted(tmp_path):
    rows = [coursework.Submission(name, tmp_path / f"{name}.ipynb", verdict="unreadable",
                                  reason="-x") for name in ("=1+2", "+1", "@SUM(A1)", "bob")]
    coursework.write_csv(rows, tmp_path / "out")
    with open(tmp_path / "out" / "summary.csv", newline="") as fh:
        got = [(r["student"], r["reason"]) for r in csv.DictReader(fh)]
    assert got == [("'=1+2", "'-x"), ("'+1", "'-x"), ("'@SUM(A1)", "'-x"), ("bob", "'-x")]


def test_an_output_folder_is_locked_and_never_inside_the_submissions(tmp_path):
    (tmp_path / "subs").mkdir()
    first = coursework._State(tmp_path / "out", [tmp_path / "subs"], False, "k")
    try:
        with pytest.raises(RuntimeError, match="another check-notebook is writing"):
            coursework._State(tmp_path / "out", [tmp_path / "subs"], False, "k")
    finally:
        first.close()
    with pytest.raises(ValueError, match="inside the submissions folder"):
        coursework._State(tmp_path / "subs" / "results", [tmp_path / "subs"], False, "k")
    (tmp_path / "old").mkdir()
    (tmp_path / "old" / "summary.csv").write_text("student\n")
    with pytest.raises(FileExistsError, match="pass --force"):
        coursework._State(tmp_path / "old", [tmp_path / "subs"], False, "k")
    coursework._State(tmp_path / "old", [tmp_path / "subs"], True, "k").close()
    assert not (tmp_path / "old" / "summary.csv").exists()


def test_an_unknown_kernel_or_exercise_is_refused_before_anything_runs(tmp_path):
    _notebook(tmp_path / "a.ipynb", *RIGHT)
    with pytest.raises(ValueError, match="--kernel.*no Jupyter kernel named 'nosuch'"):
        coursework.check_submissions([tmp_path], kernel="nosuch")
    with pytest.raises(ValueError, match="--exercises.*ex-nope"):
        coursework.check_submissions([tmp_path], exercises=["ex-nope"])


# ------------------------------------------------------------------ answers as data
def test_answers_travel_as_data_and_typed_code_never_runs(tmp_path):
    import numpy as np
    import sympy as sp
    x = sp.Symbol("x")
    for answer in [4612, 10 ** 400, 0.0351, float("nan"), (1, "2/3", ...), {"M": 3},
                   np.arange(6).reshape(2, 3) / 7, sp.sqrt(x) / 2 + sp.pi, -sp.oo]:
        back = _answers.decode(json.loads(json.dumps(_answers.encode(answer))))
        if isinstance(answer, np.ndarray):
            assert np.array_equal(back, answer)
        elif isinstance(answer, float) and answer != answer:
            assert back != back
        else:
            assert back == answer
    marker = tmp_path / "ran"
    evil = f"__import__('os').system('touch {marker}')"
    for text in [evil, f"().__class__.__base__", "x.__class__", "open('/etc/passwd')",
                 "lambda: 1", "[1][0]", "'a'", "sqrt(x, evaluate=False)"]:
        assert _answers.parse_expression(text) is None
    from calnotes.book.exercises import check
    assert check("ex-001-dkw-m", (evil, evil)).status == "unreadable"   # never run, never read
    assert not marker.exists()
    assert isinstance(_answers.decode({"sympy": {"call": "lambdify", "args": []}}),
                      _answers.Unsupported)
    assert isinstance(_answers.decode(_answers.encode(object())), _answers.Unsupported)


def test_a_typed_expression_reads_as_sympy_reads_it():
    import sympy as sp
    p = sp.Symbol("p")
    assert _answers.parse_expression("1/2") == sp.Rational(1, 2)
    assert _answers.parse_expression("p*(1-p)/n", {"p": p}) == p * (1 - p) / sp.Symbol("n")
    assert _answers.parse_expression("2^3") is None                  # ** for powers


def _escape(victim):
    """A cell that tries to rewrite another student's notebook by its absolute path, to read
    the book's solutions and to reach the network; ``M`` is the right answer only if all
    three fail, so the verdict shows whether the submission was contained."""
    return ("import pathlib, calnotes\n"
            "book = pathlib.Path(calnotes.__file__).parents[1] / 'book' / 'utility'\n"
            "try:\n    solved = 'ex-001-dkw-m' in (book / 'bounds.md').read_text()\n"
            "except OSError:\n    solved = False\n"
            f"import socket\ntry:\n    text = open({str(victim)!r}).read()\n"
            f"    open({str(victim)!r}, 'w').write(text.replace('4612', '1'))\n"
            "    wrote = True\n"
            "except Exception:\n    wrote = False\n"
            "try:\n    socket.create_connection(('10.255.255.1', 9), timeout=2)\n"
            "    net = True\nexcept OSError as e:\n"
            "    net = 'unreachable' not in str(e).lower() and e.errno not in (101, 99)\n"
            "M = 1 if (wrote or net or solved) else 4612")


# ------------------------------------------------------------------ a class, with kernels
@pytest.fixture(scope="module")
def checked_class(tmp_path_factory):
    """One batch over a small class with hostile submissions (each kernel costs seconds)."""
    tmp = tmp_path_factory.mktemp("class")
    root = tmp / "week3"
    root.mkdir()
    victim = root / "c_good.ipynb"
    _notebook(root / "a_good.ipynb", *RIGHT)
    _notebook(root / "b_wrong.ipynb", 4000, 0.03)
    forge = ("import json, os\n"
             "open(os.environ.get('CALNOTES_CHECK_LOG', 'log.jsonl'), 'a').write("
             "json.dumps({'label': 'ex-001-dkw-m', 'status': 'right'}) + '\\n')\n"
             "print('ex-001-dkw-m: right.')")
    _notebook(root / "b_forge.ipynb", 1, 1, after=[forge])
    forge_display = ("from IPython.display import display\n"
                     "display({'application/vnd.calnotes.answer+json': {'label': 'ex-001-dkw-m',"
                     " 'status': 'right', 'answer': {'str': 'right'}}}, raw=True)")
    _notebook(root / "b_forge_display.ipynb", 1, 1, after=[forge_display])
    _notebook(root / "b_escape.ipynb", "M", RIGHT[1], before=[_escape(victim)])
    _notebook(root / "b_noint.ipynb", *RIGHT, before=[
        "import signal\nsignal.signal(signal.SIGINT, signal.SIG_IGN)\nwhile True:\n    pass"])
    _notebook(root / "b_orphan.ipynb", *RIGHT, before=[
        "import subprocess\nsubprocess.Popen(['sleep', '1371'], start_new_session=True)"])
    (root / "b_broken.ipynb").write_text(json.dumps(
        {"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
            {"cell_type": "code", "id": "a", "metadata": {"calnotes": {"role": "check"}},
             "source": None, "outputs": []}]}))
    os.mkfifo(root / "b_fifo.ipynb")
    _notebook(victim, *RIGHT)
    before = _digests(root)
    out = tmp / "out"
    lines = []
    coursework.check_submissions([root], timeout=8, out=out, jobs=2, log=lines.append)
    return root, out, before, lines


def test_a_class_yields_one_row_per_file_with_a_verdict(checked_class):
    root, out, _, lines = checked_class
    rows = _rows(out)
    assert sorted(rows) == sorted(p.name[:-6] for p in root.iterdir())
    assert rows["a_good"]["ex-001-dkw-m"] == rows["c_good"]["ex-001-dkw-m"] == "right"
    assert rows["b_wrong"]["ex-001-dkw-m"] == "not yet"
    assert rows["b_fifo"]["verdict"] == "special file"
    assert rows["b_broken"]["verdict"] == "unreadable"
    assert rows["b_noint"]["verdict"] == "stopped"
    assert "did not stop when interrupted" in rows["b_noint"]["reason"]
    assert rows["b_noint"]["ex-001-dkw-m"] == "not run"
    assert rows["b_noint"]["failed_cells"] == "1"
    assert all(row["verdict"] and (row["verdict"] == "checked" or row["reason"])
               for row in rows.values())
    assert lines[0].startswith("each notebook runs as code with your rights")


def test_a_forging_notebook_gets_the_verdict_of_its_wrong_answer(checked_class):
    _, out, _, _ = checked_class
    row = _rows(out)["b_forge"]
    assert row["ex-001-dkw-m"] == "not yet" and row["right"] == "0"
    # an answer shown by hand is an answer like any other, its "status" ignored: the string
    # "right" is not an answer of the right form
    row = _rows(out)["b_forge_display"]
    assert row["ex-001-dkw-m"] == "unreadable" and row["right"] == "0"


def test_no_submission_changes_on_disk(checked_class):
    root, _, before, _ = checked_class
    assert _digests(root) == before
    assert _rows(checked_class[1])["c_good"]["ex-001-dkw-m"] == "right"


def test_no_process_a_submission_started_outlives_the_check(checked_class):
    assert _rows(checked_class[1])["b_orphan"]["ex-001-dkw-m"] == "right"
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit()
                and _cmdline(p) == b"sleep\x001371\x00"]


def _cmdline(proc) -> bytes:
    try:
        return (proc / "cmdline").read_bytes()
    except OSError:
        return b""


@pytest.mark.skipif(not NAMESPACES, reason="no user namespaces on this machine: "
                    + "; ".join(CONTAINED))
def test_contained_code_can_write_no_other_file_and_reach_no_network(checked_class):
    assert _rows(checked_class[1])["b_escape"]["ex-001-dkw-m"] == "right"


def test_uncontained_the_escaping_notebook_does_rewrite_its_neighbour(tmp_path):
    """The control of the test above: without the namespaces the same cell succeeds."""
    victim = tmp_path / "c_good.ipynb"
    _notebook(victim, *RIGHT)
    _notebook(tmp_path / "b_escape.ipynb", "M", RIGHT[1], before=[_escape(victim)])
    _notebook(tmp_path / "b_orphan.ipynb", *RIGHT, before=[
        "import subprocess\nsubprocess.Popen(['sleep', '1372'], start_new_session=True)"])
    results = coursework.check_submissions([tmp_path / "b_escape.ipynb",
                                            tmp_path / "b_orphan.ipynb"], timeout=20,
                                           contain=False)
    # without namespaces the checker's process is the detached one's subreaper and stops it
    assert not [p for p in Path("/proc").iterdir() if p.name.isdigit()
                and _cmdline(p) == b"sleep\x001372\x00"]
    assert results[0].status("ex-001-dkw-m") == "not yet"
    assert "4612" not in victim.read_text()                # rewritten


def test_a_rerun_into_the_same_folder_resumes(checked_class, tmp_path):
    root, out, _, _ = checked_class
    first = (out / "summary.csv").read_text()
    lines = []
    coursework.check_submissions([root], timeout=8, out=out, log=lines.append)
    assert not lines[0].startswith("each notebook")          # nothing run: no kernel
    assert "0 notebook(s)" in lines[0] and "unchanged" in lines[0]
    assert (out / "summary.csv").read_text() == first


def test_rows_not_reached_within_the_time_budget_are_written_as_not_checked(tmp_path):
    _notebook(tmp_path / "a.ipynb", *RIGHT)
    results = coursework.check_submissions([tmp_path / "a.ipynb"], time_budget=1e-9,
                                           out=tmp_path / "out")
    assert [r.verdict for r in results] == ["not checked"]
    assert _rows(tmp_path / "out")["a"]["verdict"] == "not checked"
    import tempfile
    mine = [p for p in Path(tempfile.gettempdir()).glob("calnotes-check-*/pid")
            if p.read_text() == str(os.getpid())]
    assert mine == []                               # the private root is removed


def test_a_notebook_of_another_exercise_is_named_and_not_run(tmp_path):
    nb = nbformat.v4.new_notebook(cells=exercise_cells("ex-qece-by-hand"))
    nbformat.write(nb, tmp_path / "other.ipynb")
    nbformat.write(nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")]),
                   tmp_path / "blank.ipynb")
    results = {r.student: r for r in coursework.check_submissions(
        [tmp_path], exercises=["ex-001-dkw-m"], contain=False)}
    assert results["other"].verdict == "other notebook"
    assert "ex-qece-by-hand" in results["other"].reason
    assert "ex-001-dkw-m" in results["other"].reason
    assert results["blank"].verdict == "no check cells"
    assert all(not r.verdicts and r.seconds == 0 for r in results.values())   # none ran


def test_a_stopped_check_keeps_its_rows_and_leaves_nothing_behind(tmp_path):
    import signal
    import subprocess
    import sys
    import tempfile
    import time
    (tmp_path / "class").mkdir()
    for name in ("a", "b", "c"):
        _notebook(tmp_path / "class" / f"{name}.ipynb", *RIGHT)
    out = tmp_path / "out"
    proc = subprocess.Popen([sys.executable, "-c", "import sys; from calnotes.cli import main; sys.exit(main())",
                             "check-notebook", str(tmp_path / "class"),
                             "--out", str(out), "--jobs", "1"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline and proc.poll() is None:
        if (out / "summary.csv").exists() and "checked,1" in (out / "summary.csv").read_text():
            break
        time.sleep(0.2)
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130 and "interrupted" in err
    verdicts = sorted(row["verdict"] for row in _rows(out).values())
    assert verdicts[0] == "checked" and set(verdicts[1:]) <= {"checked", "not checked"}
    assert "not checked" in verdicts
    roots = [p for p in Path(tempfile.gettempdir()).glob("calnotes-check-*/pid")
             if p.read_text() == str(proc.pid)]
    assert roots == []


@pytest.mark.parametrize("seconds", [39.0512, 0.05, 12.3499999])
def test_a_resumed_row_prints_the_seconds_it_printed_first(tmp_path, seconds):
    """The record keeps the seconds unrounded, so the resumed CSV rounds them as the first
    one did (39.0512 printed 39.1 first; stored as 39.05 it printed 39.0 on resume)."""
    sub = coursework.Submission("s", tmp_path / "s.ipynb", verdict="checked", sha256="x",
                                seconds=seconds)
    state = coursework._State(tmp_path / "out", [], force=False, key="k")
    state.record(sub)
    state.close()
    first = coursework.write_csv([sub], tmp_path / "a")[0].read_text()
    again = coursework.Submission("s", tmp_path / "s.ipynb", sha256="x")
    state = coursework._State(tmp_path / "out", [], force=False, key="k")
    assert state.reuse(again)
    state.close()
    assert coursework.write_csv([again], tmp_path / "b")[0].read_text() == first
