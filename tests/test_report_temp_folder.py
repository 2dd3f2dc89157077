"""The temporary folder ``EvaluationReport.write`` writes into (``.OUT.calnotes-HOST-PID-XXXX``
beside ``--out``) never outlives the run: removed on an error, on Ctrl-C and on SIGTERM, and a
folder left by a killed run (``kill -9``) is removed by the next run into the same place once
its writer has ended -- while a folder of a live writer is kept."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import numpy as np
import pytest

import calnotes as cn
from calnotes import evaluation
from calnotes.evaluation import REPORT_FILES


@pytest.fixture(scope="module")
def report():
    rng = np.random.default_rng(0)
    P = rng.dirichlet([1.0, 1.0, 1.0], 200)
    y = (P.cumsum(1) > rng.random((200, 1))).argmax(1)
    return cn.evaluate(P, labels=y, significance=False, utility=False, smooth_ece=False,
                       n_bins=[10])


def _leftovers(parent):
    return sorted(p.name for p in parent.rglob("*") if ".calnotes-" in p.name)


def _interrupting(monkeypatch, report, exc_factory):
    """Make the first figure raise ``exc_factory()``: report.json and report.csv are written
    by then."""
    def make():
        raise exc_factory()

    monkeypatch.setattr(report, "_figure", make)


def test_ctrl_c_while_writing_leaves_nothing(tmp_path, report, monkeypatch):
    seen = []
    real_publish = evaluation.publish._place

    def watching(out, tmp, makers, force):
        seen.append(tmp)
        return real_publish(out, tmp, makers, force)

    monkeypatch.setattr(evaluation.publish, "_place", watching)
    _interrupting(monkeypatch, report, KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        report.write(tmp_path / "out")
    assert seen and seen[0].name.startswith(f".out.calnotes-{evaluation.publish._writer_tag()}-")
    assert not seen[0].exists()
    assert _leftovers(tmp_path) == [] and not (tmp_path / "out").exists()


def test_ctrl_c_over_an_earlier_report_keeps_it_and_leaves_nothing(tmp_path, report,
                                                                   monkeypatch):
    out = tmp_path / "out"
    report.write(out, figure=False)
    before = (out / "report.json").read_bytes()
    _interrupting(monkeypatch, report, KeyboardInterrupt)
    with pytest.raises(KeyboardInterrupt):
        report.write(out, force=True)
    assert (out / "report.json").read_bytes() == before
    assert _leftovers(tmp_path) == []


def test_sigterm_while_writing_leaves_nothing_and_exits_143(tmp_path, report, monkeypatch):
    if signal.getsignal(signal.SIGTERM) != signal.SIG_DFL:
        pytest.skip("a SIGTERM handler is installed")
    _interrupting(monkeypatch, report,
                  lambda: os.kill(os.getpid(), signal.SIGTERM) or RuntimeError())
    with pytest.raises(SystemExit) as info:
        report.write(tmp_path / "out")
    assert info.value.code == 128 + signal.SIGTERM
    assert _leftovers(tmp_path) == []
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL      # restored


def test_an_error_while_writing_leaves_nothing(tmp_path, report, monkeypatch):
    _interrupting(monkeypatch, report, lambda: ValueError("no figure"))
    with pytest.raises(RuntimeError, match="could not write .*reliability.png"):
        report.write(tmp_path / "out")
    assert _leftovers(tmp_path) == []


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_next_run_removes_folders_of_ended_writers_only(tmp_path, report):
    host = evaluation.publish._writer_tag().split("-")[0]
    dead = tmp_path / f".out.calnotes-{host}-{_dead_pid()}-k1l2m3n4"
    alive = tmp_path / f".out.calnotes-{host}-{os.getppid()}-a1b2c3d4"  # a running process
    foreign = tmp_path / f".out.calnotes-0badc0de-{_dead_pid()}-zz99yy88"  # another host
    old_style = tmp_path / ".out.calnotes-5tr8dfma"        # no writer in the name
    young_old_style = tmp_path / ".out.calnotes-q2w3e4r5"
    unrelated = tmp_path / ".other.calnotes-x1y2z3w4"
    for folder in (dead, alive, foreign, old_style, young_old_style, unrelated):
        folder.mkdir()
        (folder / "report.json").write_text("{}")
    week_ago = time.time() - 7 * 24 * 3600
    os.utime(old_style, (week_ago, week_ago))
    report.write(tmp_path / "out", figure=False)
    assert not dead.exists() and not old_style.exists()
    assert alive.exists() and foreign.exists() and young_old_style.exists()
    assert unrelated.exists()
    assert (tmp_path / "out" / "report.json").is_file()


def test_a_folder_holding_an_earlier_report_not_put_back_is_kept(tmp_path, report):
    host = evaluation.publish._writer_tag().split("-")[0]
    kept = tmp_path / f".out.calnotes-{host}-{_dead_pid()}-e5r6t7y8"
    (kept / ".earlier").mkdir(parents=True)
    (kept / ".earlier" / "report.json").write_text("{}")
    report.write(tmp_path / "out", figure=False)
    assert (kept / ".earlier" / "report.json").is_file()


def test_killed_writer_leftover_inside_out_is_removed(tmp_path, report):
    # the fallback place: inside out, when out's parent cannot be written
    out = tmp_path / "out"
    out.mkdir()
    host = evaluation.publish._writer_tag().split("-")[0]
    stale = out / f".calnotes-{host}-{_dead_pid()}-p0o9i8u7"
    stale.mkdir()
    report.write(out, figure=False)
    assert not stale.exists()
    assert sorted(p.name for p in out.iterdir()) == sorted(REPORT_FILES[:2])
