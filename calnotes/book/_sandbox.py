"""A process in which ``calnotes check-notebook`` runs one student's notebook, contained as far
as the platform allows without new dependencies.

This module uses the standard library only, and is loaded by file path (not through the
``calnotes`` package) as the first thing the new process does: the Linux namespaces below can
be entered only by a process with a single thread, before NumPy starts its own.

:func:`enter` applies, in this order, whatever the platform allows, and returns the list of
what it achieved (printed by the checker; :data:`NOT_CONTAINED` names what it never does):

* limits: address space (``memory_mb``), no core files, files written at most
  :data:`MAX_FILE_BYTES`;
* a new user namespace, in which the student's code runs as an unprivileged user (also when
  the teacher is root);
* a new network namespace without interfaces: no network;
* a new mount namespace: every file system read-only except the private scratch folder
  (and ``/dev``, ``/dev/shm``); the submissions, the output folder and the book's sources
  hidden behind empty mounts;
* a new PID namespace whose first process is the worker, so that every process the
  notebook starts (also one that detaches itself) ends when the worker ends, and the worker
  ends when its parent does;
* the worker not dumpable: the student's processes cannot read its memory or open its files
  through ``/proc``.

Where user namespaces are not available (``/proc/sys/user/max_user_namespaces`` is 0, a
container that forbids them, not Linux), only the limits apply, and the checker says so.

Examples
--------
>>> "network" in " ".join(NOT_CONTAINED) or "CPU" in " ".join(NOT_CONTAINED)
True
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import resource
import select
import signal
import sys

#: What the sandbox never contains (said on the teacher page and by the checker).
NOT_CONTAINED = (
    "CPU use within the time limits (a notebook may use every core until it is stopped)",
    "disk space in the scratch folder (each file at most 1 GiB)",
    "files the student's code can read where it is not hidden (the libraries, the system)",
)

#: Largest file the student's code may write (RLIMIT_FSIZE): a notebook's outputs are far
#: smaller; a runaway writer stops at this size.
MAX_FILE_BYTES = 1 << 30

_CLONE_NEWNS, _CLONE_NEWUSER, _CLONE_NEWPID, _CLONE_NEWNET = (0x00020000, 0x10000000,
                                                              0x20000000, 0x40000000)
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_NOATIME, _MS_NODIRATIME, _MS_BIND = 32, 1024, 2048, 4096
_MS_REC, _MS_PRIVATE, _MS_RELATIME, _MS_STRICTATIME = 16384, 1 << 18, 1 << 21, 1 << 24
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_CHILD_SUBREAPER = 1, 4, 36
_FLAG_OF_OPTION = {"nosuid": _MS_NOSUID, "nodev": _MS_NODEV, "noexec": _MS_NOEXEC,
                   "noatime": _MS_NOATIME, "nodiratime": _MS_NODIRATIME,
                   "relatime": _MS_RELATIME, "strictatime": _MS_STRICTATIME}
_KEEP_WRITABLE = ("/proc", "/sys", "/dev")


def _libc():
    return ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)


def _call(result: int, what: str) -> None:
    if result != 0:
        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def _mount(libc, source, target, fstype, flags, data=None) -> None:
    enc = (lambda s: None if s is None else os.fsencode(s))
    _call(libc.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags),
                     enc(data)), f"mount {target}")


def _mounts() -> list:
    """``[(mount point, per-mount flags)]`` of this mount namespace."""
    out = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            fields = line.split()
            point = fields[4].encode().decode("unicode_escape")
            flags = 0
            for option in fields[5].split(","):
                flags |= _FLAG_OF_OPTION.get(option, 0)
            out.append((point, flags))
    return out


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _limits(memory_mb: int) -> None:
    limit = memory_mb << 20
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    resource.setrlimit(resource.RLIMIT_FSIZE, (MAX_FILE_BYTES, MAX_FILE_BYTES))


def _namespaces(libc, config: dict, achieved: list) -> None:
    uid, gid = os.getuid(), os.getgid()
    _call(libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWPID),
          "unshare")
    inner = uid if uid != 0 else 1000        # never root inside, even for a root teacher
    with open("/proc/self/setgroups", "w") as fh:
        fh.write("deny")
    with open("/proc/self/uid_map", "w") as fh:
        fh.write(f"{inner} {uid} 1")
    with open("/proc/self/gid_map", "w") as fh:
        fh.write(f"{inner if gid == 0 else gid} {gid} 1")
    achieved.append("student code runs as an unprivileged user")
    achieved.append("no network")
    _mount(libc, None, "/", None, _MS_REC | _MS_PRIVATE)
    scratch = config["scratch"]
    _mount(libc, scratch, scratch, None, _MS_BIND | _MS_REC)
    failed = []
    for point, flags in _mounts():
        if any(_under(point, keep) for keep in _KEEP_WRITABLE) or _under(point, scratch):
            continue
        try:
            _mount(libc, None, point, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | flags)
        except OSError:
            failed.append(point)
    achieved.append("files read-only outside the scratch folder"
                    + (f" (except {', '.join(failed)})" if failed else ""))
    hidden = []
    for path in config.get("hide", []):
        try:
            if os.path.isdir(path):
                _mount(libc, "tmpfs", path, "tmpfs",
                       _MS_NOSUID | _MS_NODEV | _MS_NOEXEC | _MS_RDONLY, "size=4k,mode=0555")
            else:
                _mount(libc, config["empty"], path, None, _MS_BIND)
                _mount(libc, None, path, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY)
            hidden.append(path)
        except OSError:
            pass
    wanted = config.get("hide", [])
    if wanted:
        achieved.append("the submissions, the output folder and the book's checkout hidden"
                        + ("" if len(hidden) == len(wanted) else
                           f" ({len(wanted) - len(hidden)} of {len(wanted)} paths not hidden)"))


def enter(config: dict) -> list:
    """Apply the limits and the namespaces; return what was achieved (a list of phrases).

    With the namespaces, the process forks: the parent waits for the child and exits with
    its status (it never returns), the child (the first process of the new PID namespace)
    returns and runs the worker.  ``config``: ``memory_mb``, ``scratch`` (the writable
    folder), ``hide`` (paths to hide), ``empty`` (an empty file to mount over hidden files),
    ``contain`` (try the namespaces).
    """
    achieved = []
    _limits(int(config["memory_mb"]))
    achieved.append(f"memory at most {config['memory_mb']} MB per process")
    libc = _libc() if sys.platform.startswith("linux") else None
    if libc is None or not config.get("contain", True):
        if libc is not None:
            libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)    # detached processes come back
        return achieved
    try:
        _namespaces(libc, config, achieved)
    except OSError as exc:
        achieved.append(f"no namespaces ({exc.strerror or exc})")
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        return achieved
    alive_read, alive_write = os.pipe()       # at EOF once the parent is gone
    pid = os.fork()
    if pid:                                   # the parent: wait, and pass the status on
        os.close(alive_read)
        for fd in config.get("close_in_parent", []):
            os.close(fd)
        signal.signal(signal.SIGTERM, lambda *_: os.kill(pid, signal.SIGKILL))
        while True:
            try:
                _, status = os.waitpid(pid, 0)
                break
            except ChildProcessError:
                status = 0
                break
            except InterruptedError:
                continue
        os._exit(os.waitstatus_to_exitcode(status) & 0xFF)
    libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    os.close(alive_write)
    if select.select([alive_read], [], [], 0)[0]:   # the parent died before the line above
        os._exit(1)
    os.close(alive_read)
    try:
        _mount(libc, "proc", "/proc", "proc", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC)
        achieved.append("other processes invisible")
    except OSError:
        pass
    achieved.append("every process it starts ends with the check")
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    return achieved
