"""Writing a report's files: the output folder checked, files published whole under a lock."""

from __future__ import annotations

import os
import time
from pathlib import Path


#: Files :meth:`EvaluationReport.write` creates in the output folder.
REPORT_FILES = ("report.json", "report.csv", "reliability.png", "sharpness.png",
                "utility_ecdf.png")




def _plural(items: list, one: str, many: str) -> str:
    return one if len(items) == 1 else many


def check_out(out, *, force: bool = False, figure: bool = True) -> Path:
    """Check an output folder for :meth:`EvaluationReport.write` before anything is computed.

    Refuses (nothing is created): ``out`` inside the book's or the library's sources
    (:func:`calnotes._outdir.refuse_source_folder`); ``out`` that exists and is not a folder, or lies below a
    file; ``out`` (or a folder above it) that is a symbolic link to nothing; any existing
    report file of :data:`REPORT_FILES` unless ``force=True`` (also the figures a report
    without figures would not write: with ``force=True`` they are removed); a report file
    name that is a folder; a folder that cannot be written (the nearest existing folder is
    checked with :func:`os.access`).  ``figure`` is kept for compatibility: every report
    file is checked.

    Returns
    -------
    pathlib.Path

    Examples
    --------
    >>> import tempfile, os
    >>> folder = tempfile.mkdtemp()
    >>> open(os.path.join(folder, "report.csv"), "w").close()
    >>> check_out(folder)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    FileExistsError: out (command line: --out): .../report.csv exists; pass force=True (command line: --force) to overwrite it
    """
    if not isinstance(out, (str, os.PathLike)):
        raise TypeError(f"out (command line: --out): expected a folder path, got"
                        f" {type(out).__name__}")
    out = Path(out)
    from .._outdir import refuse_source_folder
    refuse_source_folder(out)                    # never a report inside the sources
    if out.exists() and not out.is_dir():
        raise NotADirectoryError(f"out (command line: --out): {out} exists and is not a folder")
    # every report file counts, also one this run would not write (the figures of an earlier
    # in-memory report under an out-of-core one): a folder never mixes two reports
    existing = [str(out / name) for name in REPORT_FILES if os.path.lexists(out / name)]
    if existing and not force:
        raise FileExistsError(
            f"out (command line: --out): {', '.join(existing)}"
            f" {_plural(existing, 'exists', 'exist')}; pass force=True (command line: --force)"
            f" to overwrite {_plural(existing, 'it', 'them')}")
    folders = [str(out / name) for name in REPORT_FILES
               if (out / name).is_dir() and not (out / name).is_symlink()]
    if folders:
        raise IsADirectoryError(f"out (command line: --out): {folders[0]} is a folder, where"
                                " the report writes a file; move it away")
    folder = out
    while not folder.exists() and folder != folder.parent:
        if folder.is_symlink():     # a dangling link: mkdir would fail after the computation
            raise FileNotFoundError(f"out (command line: --out): {folder} is a symbolic link to"
                                    f" {os.readlink(folder)}, which does not exist; create its"
                                    " target or remove the link")
        folder = folder.parent
    if not folder.is_dir():
        raise NotADirectoryError(f"out (command line: --out): {folder} is a file, so {out}"
                                 " cannot be a folder")
    if not os.access(folder, os.W_OK | os.X_OK):
        raise PermissionError(f"out (command line: --out): cannot write in {folder}"
                              " (permission denied)")
    return out


_OUT_NAME = "out (command line: --out)"


#: Age after which a temporary report folder (``_publish``) is removed whoever wrote it:
#: a writer takes seconds, so a day-old folder is left over even if its process id is in use
#: again (or was on another machine sharing the folder).
STALE_SECONDS = 24 * 3600


def _writer_tag() -> str:
    """``HOST-PID`` in a temporary folder's name: which process writes it (``HOST``: eight hex
    digits of the host name's hash, so a folder shared between machines is not judged by
    another machine's process ids)."""
    import hashlib
    import socket

    host = hashlib.sha256(socket.gethostname().encode()).hexdigest()[:8]
    return f"{host}-{os.getpid()}"


def _writer_gone(tag: str) -> bool:
    """Whether the process of a ``HOST-PID`` tag has ended (``False`` when it runs, when it
    cannot be told, and for another host)."""
    host, _, pid = tag.partition("-")
    if host != _writer_tag().split("-")[0] or not pid.isdigit():
        return False
    if int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OSError, OverflowError):
        return False                            # alive under another user, or unknown
    return False


def _remove_stale(folder: Path, prefix: str) -> list[Path]:
    """Remove the temporary report folders ``prefix*`` in ``folder`` that an interrupted or
    killed :func:`_publish` left behind: those whose writer (the ``HOST-PID`` in the name)
    has ended, and any older than :data:`STALE_SECONDS` (also those of calnotes versions that
    put no writer in the name).  A folder being written by a live process is kept, and so is
    one holding an earlier report that a failed move could not put back (``.earlier``, named
    in that run's error message).  Returns the folders removed."""
    import re
    import shutil

    removed = []
    pattern = re.compile(re.escape(prefix) + r"(?:([0-9a-f]{8}-\d+)-)?[A-Za-z0-9_]+$")
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for entry in entries:
        match = pattern.match(entry.name)
        if not match:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            old = now - entry.stat(follow_symlinks=False).st_mtime > STALE_SECONDS
        except OSError:
            continue
        if _holds_earlier_report(Path(entry.path)):
            continue                            # an earlier report not put back: kept
        if old or (match.group(1) is not None and _writer_gone(match.group(1))):
            shutil.rmtree(entry.path, ignore_errors=True)
            removed.append(Path(entry.path))
    return removed


def _holds_earlier_report(tmp: Path) -> bool:
    try:
        with os.scandir(tmp / ".earlier") as entries:
            return any(True for _ in entries)
    except OSError:
        return False


class _Terminated(SystemExit):
    """SIGTERM while report files are written: exits like an unhandled SIGTERM's status
    (128 + 15), after the temporary folder is removed."""


def _on_sigterm(signum, frame):
    raise _Terminated(128 + signum)


class _terminable:
    """SIGTERM raises :class:`_Terminated` while the block runs (main thread only, and only
    where no handler of the program's own is installed), so that cleanup code runs; the
    earlier handler is restored afterwards."""

    def __enter__(self):
        import signal
        import threading

        self.previous = None
        if (threading.current_thread() is threading.main_thread()
                and hasattr(signal, "SIGTERM")
                and signal.getsignal(signal.SIGTERM) == signal.SIG_DFL):
            self.previous = signal.signal(signal.SIGTERM, _on_sigterm)
        return self

    def __exit__(self, *exc):
        if self.previous is not None:
            import signal
            signal.signal(signal.SIGTERM, self.previous)
        return False


def _publish(out: Path, makers: dict, force: bool) -> list[Path]:
    """Write ``makers`` (file name -> function writing that file) into a temporary folder next
    to ``out``, then move them in place under a lock on ``out``; report files of an earlier
    run that this run does not write are removed.  All or nothing: on a failure ``out`` keeps
    its earlier files and the error names the file.

    The temporary folder, ``.OUT.calnotes-HOST-PID-XXXX`` beside ``out`` (or
    ``.calnotes-HOST-PID-XXXX`` inside it when its parent is read-only), is removed whatever
    stops the writing: an error, Ctrl-C (``KeyboardInterrupt``) or SIGTERM.  One left by a
    killed process (``kill -9``) is removed by the next run into the same place, once its
    writer has ended (:func:`_remove_stale`)."""
    with _terminable():
        return _publish_files(out, makers, force)


def _publish_files(out: Path, makers: dict, force: bool) -> list[Path]:
    import shutil
    import tempfile

    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise type(exc)(f"{_OUT_NAME}: cannot create the folder {out.parent}"
                        f" ({exc.strerror or exc}); nothing was written") from None
    home = out.resolve() if out.is_dir() else out    # a linked folder: beside its target
    _remove_stale(home.parent, f".{home.name}.calnotes-")
    if out.is_dir():
        _remove_stale(out, ".calnotes-")
    tag = _writer_tag()
    try:
        tmp = Path(tempfile.mkdtemp(prefix=f".{home.name}.calnotes-{tag}-", dir=home.parent))
        if out.is_dir() and os.stat(tmp).st_dev != os.stat(out).st_dev:
            shutil.rmtree(tmp, ignore_errors=True)       # out is a mount point: moves would
            raise PermissionError("another file system")  # copy, so write inside it
    except OSError as exc:
        if not out.is_dir():
            raise type(exc)(f"{_OUT_NAME}: cannot write in {out.parent}"
                            f" ({exc.strerror or exc}); nothing was written") from None
        tmp = Path(tempfile.mkdtemp(prefix=f".calnotes-{tag}-", dir=out))  # read-only parent
    try:
        return _place(out, tmp, makers, force)
    except BaseException as exc:                 # Ctrl-C, SIGTERM: nothing left behind,
        if tmp.is_dir() and not _holds_earlier_report(tmp) and str(tmp) not in str(exc):
            shutil.rmtree(tmp, ignore_errors=True)   # unless the message points there
        raise


def _place(out: Path, tmp: Path, makers: dict, force: bool) -> list[Path]:
    """:func:`_publish`'s work once the temporary folder ``tmp`` exists."""
    import shutil

    name = None
    try:
        for name, make in makers.items():
            make(tmp / name)
    except Exception as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        kind = type(exc) if isinstance(exc, OSError) else RuntimeError
        raise kind(f"{_OUT_NAME}: could not write {out / name} ({exc}); nothing in {out} was"
                   " changed") from exc
    mask = os.umask(0)
    os.umask(mask)
    if not out.exists():
        os.chmod(tmp, 0o777 & ~mask)             # mkdtemp's folder is private (0700)
        try:
            os.rename(tmp, out)                  # the whole folder appears at once
            return [out / name for name in makers]
        except OSError:
            os.chmod(tmp, 0o700)
            try:                                 # another run made it meanwhile
                out.mkdir(parents=True, exist_ok=True)
            except OSError as exc:
                shutil.rmtree(tmp, ignore_errors=True)
                raise type(exc)(f"{_OUT_NAME}: cannot create the folder {out}"
                                f" ({exc.strerror or exc}); nothing was written") from None
    with _locked(out):
        existing = [str(out / n) for n in REPORT_FILES if os.path.lexists(out / n)]
        if existing and not force:               # written by another run since check_out
            shutil.rmtree(tmp, ignore_errors=True)
            raise FileExistsError(f"{_OUT_NAME}: {', '.join(existing)} appeared during the"
                                  " run (another run writing there?); pass force=True (command"
                                  " line: --force) to overwrite; nothing was written")
        earlier = tmp / ".earlier"
        moved, placed, name = [], [], None
        try:
            earlier.mkdir()
            for name in REPORT_FILES:            # the earlier report, set aside as a whole
                if os.path.lexists(out / name):
                    os.replace(out / name, earlier / name)
                    moved.append(name)
            for name in makers:
                os.replace(tmp / name, out / name)
                placed.append(name)
        except BaseException as exc:             # an OSError, or Ctrl-C / SIGTERM
            stuck, lost = [], []
            for done in placed:                  # roll back: the new files out again ...
                try:
                    os.replace(out / done, tmp / done)
                except OSError:
                    stuck.append(done)
            for done in moved:                   # ... and the earlier ones in again
                try:
                    os.replace(earlier / done, out / done)
                except OSError:
                    lost.append(done)
            if not isinstance(exc, OSError):
                if not (stuck or lost):
                    shutil.rmtree(tmp, ignore_errors=True)
                raise
            kept = (f"the earlier report files in {out} are kept unchanged"
                    if not (stuck or lost) else
                    f"{out} could not be restored in full (new there: {stuck or 'none'};"
                    f" earlier files not put back, now in {earlier}: {lost or 'none'})")
            raise type(exc)(f"{_OUT_NAME}: cannot replace {out / name}"
                            f" ({exc.strerror or exc}); {kept}; the new report files are in"
                            f" {tmp}") from None
        shutil.rmtree(tmp, ignore_errors=True)   # with the earlier report's files
    return [out / name for name in makers]


class _locked:
    """An exclusive lock on folder ``path`` (``flock`` on POSIX; none elsewhere), held while
    report files are moved in place, so that concurrent writers never mix their files."""

    def __init__(self, path: Path):
        self.path, self.fd = path, None

    def __enter__(self):
        try:
            import fcntl
            self.fd = os.open(self.path, os.O_RDONLY)
            fcntl.flock(self.fd, fcntl.LOCK_EX)
        except (ImportError, OSError):
            if self.fd is not None:
                os.close(self.fd)
            self.fd = None
        return self

    def __exit__(self, *exc):
        if self.fd is not None:
            os.close(self.fd)                    # releases the lock
        return False
