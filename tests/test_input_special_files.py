"""Paths that are not regular files -- a FIFO, a pipe from process substitution, a device such
as ``/dev/zero``, a link to one, a socket -- are refused before anything reads them, with a
message naming the argument and the kind of file.

Reading one blocks forever (a FIFO with no writer) or never ends (``/dev/zero``), so every
call here runs in a helper thread with a deadline: a regression fails the test instead of
hanging the suite.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading

import numpy as np
import pytest

import calnotes as cn
from calnotes import cli
from calnotes.data.loaders import load_predictions

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="POSIX special files")

#: Seconds a refusal may take (it takes milliseconds; reading /dev/zero never ends).
DEADLINE = 10.0


def _outcome(call):
    """``call()``'s exception (or result), failing the test if it has not returned within
    :data:`DEADLINE` seconds."""
    box = {}

    def run():
        try:
            box["result"] = call()
        except BaseException as exc:  # noqa: BLE001 - handed back to the test
            box["error"] = exc

    worker = threading.Thread(target=run, daemon=True)
    worker.start()
    worker.join(DEADLINE)
    assert not worker.is_alive(), f"still reading after {DEADLINE} s"
    return box.get("error", box.get("result"))


def _probs(n=6):
    P = np.tile([[0.2, 0.8], [0.6, 0.4]], (n // 2, 1))
    return P, np.arange(n) % 2


@pytest.fixture
def fifo(tmp_path):
    path = tmp_path / "preds.csv"
    os.mkfifo(path)
    yield path
    try:                                  # release a reader a regression left blocked
        fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK)
        os.close(fd)
    except OSError:
        pass


def test_fifo_as_predictions_is_refused_naming_it(fifo):
    err = _outcome(lambda: cn.evaluate(fifo, significance=False, utility=False))
    assert isinstance(err, ValueError)
    assert str(err) == (f"predictions: {fifo} is a FIFO (named pipe), not a regular file;"
                        " save the data to a file first")


def test_fifo_as_labels_is_refused_naming_labels(fifo, tmp_path):
    P, y = _probs()
    np.save(tmp_path / "p.npy", P)
    for call in (lambda: cn.evaluate(tmp_path / "p.npy", labels=fifo, significance=False,
                                     utility=False),
                 lambda: cn.evaluate(P, labels=str(fifo), significance=False, utility=False),
                 lambda: load_predictions(tmp_path / "p.npy", labels=fifo)):
        err = _outcome(call)
        assert isinstance(err, ValueError)
        assert str(err).startswith(f"labels: {fifo} is a FIFO (named pipe), not a regular file")


def test_dev_zero_and_a_link_to_it_are_refused(tmp_path):
    link = tmp_path / "model.npz"
    link.symlink_to("/dev/zero")
    err = _outcome(lambda: cn.evaluate("/dev/zero", significance=False, utility=False))
    assert isinstance(err, ValueError)
    assert "predictions: /dev/zero is a character device, not a regular file" in str(err)
    err = _outcome(lambda: cn.evaluate(link, significance=False, utility=False))
    assert isinstance(err, ValueError)
    assert f"predictions: {link} (a link to /dev/zero) is a character device" in str(err)
    err = _outcome(lambda: load_predictions(link))          # the loader alone, too
    assert isinstance(err, ValueError) and "character device" in str(err)


def test_socket_is_refused(tmp_path):
    path = tmp_path / "s.npz"
    server = socket.socket(socket.AF_UNIX)
    try:
        server.bind(str(path))
        err = _outcome(lambda: cn.evaluate(path, significance=False, utility=False))
    finally:
        server.close()
    assert isinstance(err, ValueError)
    assert f"predictions: {path} is a socket, not a regular file" in str(err)


def test_pipe_of_process_substitution_is_named_as_a_pipe(tmp_path):
    # <(cat f.csv) passes /dev/fd/N, a pipe: it used to be read for the hash, then reported
    # as "no such file"
    read_end, write_end = os.pipe()
    try:
        os.write(write_end, b"label,p0,p1\n0,0.2,0.8\n1,0.4,0.6\n")
        path = f"/dev/fd/{read_end}"
        if not os.path.exists(path):
            pytest.skip("no /dev/fd on this system")
        err = _outcome(lambda: cn.evaluate(path, significance=False, utility=False))
    finally:
        os.close(read_end)
        os.close(write_end)
    assert isinstance(err, ValueError)
    assert str(err).startswith(f"predictions: {path} is a pipe (as process substitution,"
                               " <(...), passes), not a regular file")
    assert "no such file" not in str(err)


def test_out_of_core_paths_are_checked_too(fifo, tmp_path):
    P, y = _probs()
    np.save(tmp_path / "p.npy", P)
    err = _outcome(lambda: cn.evaluate(fifo.rename(tmp_path / "q.npy"), labels=y,
                                       out_of_core=True))
    assert isinstance(err, ValueError) and "is a FIFO (named pipe)" in str(err)
    err = _outcome(lambda: cn.evaluate(tmp_path / "p.npy", labels="/dev/zero",
                                       out_of_core=True))
    assert isinstance(err, ValueError)
    assert str(err).startswith("labels: /dev/zero is a character device")


def test_a_special_file_in_a_shard_folder_is_named(tmp_path):
    # open_shards skipped anything that is not a regular file silently; a link to /dev/zero
    # among the shards is named instead
    folder = tmp_path / "shards"
    folder.mkdir()
    P, y = _probs()
    cn.save_predictions(folder / "part-0.npz", y, probs=P)
    (folder / "part-1.npz").symlink_to("/dev/zero")
    err = _outcome(lambda: cn.evaluate(folder))
    assert isinstance(err, ValueError)
    assert "predictions (shard part-1.npz)" in str(err) and "character device" in str(err)


def test_missing_and_folder_paths_still_name_the_argument(tmp_path):
    P, y = _probs()
    with pytest.raises(FileNotFoundError, match=r"^predictions: .*nothere\.npz: no such file$"):
        cn.evaluate(tmp_path / "nothere.npz")
    (tmp_path / "adir.npz").mkdir()
    with pytest.raises(IsADirectoryError, match="^predictions: .*is a directory, not a file"):
        load_predictions(tmp_path / "adir.npz")
    dangling = tmp_path / "gone.npz"
    dangling.symlink_to(tmp_path / "elsewhere.npz")
    with pytest.raises(FileNotFoundError, match="is a symbolic link to .*which does not exist"):
        cn.evaluate(dangling)


def test_command_line_ends_at_once_with_one_line(tmp_path):
    # the command itself, in a process of its own (a regression hangs: the timeout fails it)
    fifo = tmp_path / "f.csv"
    os.mkfifo(fifo)
    for target, kind in (("/dev/zero", "is a character device"),
                         (str(fifo), "is a FIFO (named pipe)")):
        done = subprocess.run([sys.executable, "-m", "calnotes.cli", "evaluate", target,
                               "--no-significance", "--no-utility"], capture_output=True,
                              text=True, timeout=60)
        assert done.returncode == 2
        assert done.stderr.strip().splitlines() == [
            f"calnotes: error: predictions: {target} {kind}, not a regular file; save the"
            " data to a file first"]


def test_command_line_in_process(capsys):
    code = _outcome(lambda: cli.main(["evaluate", "/dev/zero", "--no-significance"]))
    assert code == 2
    assert "predictions: /dev/zero is a character device" in capsys.readouterr().err
