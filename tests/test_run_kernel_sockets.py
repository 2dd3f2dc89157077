"""The kernel of `calnotes run` talks over IPC sockets in a private temporary folder, not in
the chapter's folder (which may be read-only), and is not interrupted when a run that went
well shuts it down (the interrupt printed "KeyboardInterrupt caught in kernel")."""

from __future__ import annotations

import json
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

import pytest

from calnotes.book import chapters
from myst_chapter import myst_chapter

pytest.importorskip("papermill")
pytestmark = pytest.mark.skipif(os.name != "posix", reason="IPC sockets are POSIX only")

_CHAPTER = myst_chapter('''# Sockets

```{code-cell} ipython3
:tags: [parameters]
n = 1  # unused
```

```{code-cell} ipython3
import json, os
from ipykernel.connect import get_connection_file
info = json.load(open(get_connection_file()))
print(json.dumps({"here": sorted(os.listdir(".")), "cwd": os.getcwd(),
                  "transport": info["transport"], "ip": info["ip"]}))
```
''')

_RUN = """
import json, sys
from calnotes.book import chapters

base = chapters._kernel_manager_class
sent = []

def recording(folder=None):
    class Recording(base(folder)):
        async def _async_signal_kernel(self, signum):
            sent.append(int(signum))
            await super()._async_signal_kernel(signum)
    return Recording

chapters._kernel_manager_class = recording
chapters.run_chapter("sockets", {{}}, {out!r}, root={book!r})
print("SIGNALS", json.dumps(sent))
"""


def _read_only_command() -> list[str] | None:
    """A command prefix under which a read-only folder cannot be written: none needed for a
    user; for root, ``setpriv`` without the capability that overrides permissions."""
    if os.geteuid() != 0:
        return []
    if shutil.which("setpriv") is None:
        return None
    return ["setpriv", "--inh-caps=-dac_override,-dac_read_search",
            "--bounding-set=-dac_override,-dac_read_search"]


def test_a_read_only_chapter_folder_runs_with_sockets_elsewhere(tmp_path):
    prefix = _read_only_command()
    if prefix is None:
        pytest.skip("running as root without setpriv: a read-only folder stays writable")
    book, out = tmp_path / "book", tmp_path / "out"
    tmp = Path(tempfile.mkdtemp(prefix="cn-"))     # short: a socket path has at most 107 bytes
    book.mkdir()
    (book / "_toc.yml").write_text("format: jb-book\nroot: sockets\n")
    (book / "sockets.md").write_text(_CHAPTER)
    before = sorted(os.listdir(book))
    book.chmod(stat.S_IRUSR | stat.S_IXUSR | stat.S_IRGRP | stat.S_IXGRP)
    try:
        check = prefix + [sys.executable, "-c",
                          f"import os, sys; sys.exit(os.access({str(book)!r}, os.W_OK))"]
        assert subprocess.run(check).returncode == 0, "the chapter folder is still writable"
        script = _RUN.format(out=str(out), book=str(book))
        done = subprocess.run(prefix + [sys.executable, "-c", script], capture_output=True,
                              text=True, timeout=300, env={**os.environ, "TMPDIR": str(tmp)})
    finally:
        book.chmod(0o755)
        leftover = os.listdir(tmp)
        shutil.rmtree(tmp, ignore_errors=True)
    assert done.returncode == 0, done.stderr[-2000:]
    assert sorted(os.listdir(book)) == before
    nb = json.loads((out / "sockets.ipynb").read_text())
    printed = [o["text"] for c in nb["cells"] for o in c.get("outputs", [])
               if o.get("name") == "stdout"]
    seen = json.loads("".join(printed[-1]))
    assert os.path.realpath(seen["cwd"]) == os.path.realpath(book)   # the chapter's folder
    assert seen["here"] == before                                   # no socket files there
    assert seen["transport"] == "ipc"
    assert os.path.realpath(seen["ip"]).startswith(os.path.realpath(tmp) + os.sep)
    assert leftover == []                          # the socket folder is removed afterwards
    signals = json.loads(done.stdout.split("SIGNALS", 1)[1])
    assert signal.SIGINT not in signals           # an idle kernel is not interrupted
    assert "KeyboardInterrupt caught" not in done.stderr


def test_the_manager_class_is_usable_without_arguments(tmp_path):
    manager = chapters._kernel_manager_class()
    km = manager(kernel_name="python3")
    folder = os.path.dirname(km.ip)
    assert km.transport == "ipc" and os.path.isdir(folder)
    assert os.path.realpath(folder).startswith(os.path.realpath(tempfile.gettempdir()))
    given = chapters._kernel_manager_class(tmp_path)(kernel_name="python3")
    assert given.ip == str(tmp_path / "kernel")
    del km
    import gc
    gc.collect()
    assert not os.path.exists(folder)             # removed with its manager at the latest
    script = textwrap.dedent("""
        from calnotes.book import chapters
        km = chapters._kernel_manager_class()(kernel_name="python3")
        print(km.transport, km.ip)
    """)
    long_tmp = tmp_path / ("x" * 100)            # too long for a socket path: /tmp instead
    long_tmp.mkdir()
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env={**os.environ, "TMPDIR": str(long_tmp)})
    transport, ip = done.stdout.split()
    assert transport == "ipc" and len(ip.encode()) < 100
    assert not os.path.exists(os.path.dirname(ip))   # removed at exit at the latest
    assert os.listdir(long_tmp) == []


def test_without_a_folder_for_sockets_the_kernel_uses_tcp(monkeypatch):
    monkeypatch.setattr(chapters, "_socket_folder", lambda: None)
    km = chapters._kernel_manager_class()(kernel_name="python3")
    assert km.transport == "tcp"
