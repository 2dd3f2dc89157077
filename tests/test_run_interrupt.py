"""Ctrl-C during `calnotes run` ends with a one-line message and status 130 (the chapter's
partial notebook is removed by the run itself), not a traceback."""

from __future__ import annotations

import functools

from calnotes import cli
from calnotes.book import chapters


def test_ctrl_c_ends_the_run_with_a_message(monkeypatch, tmp_path, capsys):
    @functools.wraps(chapters.run_chapter)       # its signature: the command line reads its
    def interrupted(*args, **kwargs):             # defaults from it
        raise KeyboardInterrupt

    monkeypatch.setattr(chapters, "run_chapter", interrupted)
    out = tmp_path / "o"
    assert cli.main(["run", "benchmarks", "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert err.startswith("calnotes: run of benchmarks interrupted;")
    assert f"{out / 'benchmarks.ipynb'} left as it was" in err
    assert "Traceback" not in err
