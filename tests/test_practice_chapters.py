"""Part V chapters rerun on a user's own predictions files (the `predictions` parameter).

Each chapter runs under papermill (the path of ``calnotes run``) with files written by
:func:`calnotes.save_predictions`; a failing cell fails the test. The files come from the
digits suite, so these runs also check the chapters on a second dataset.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from calnotes import save_predictions
from calnotes.book import chapters
from calnotes.data import build_suite


@pytest.fixture(scope="module")
def digits(tmp_path_factory):
    cache = tmp_path_factory.mktemp("cache")
    return build_suite("digits", families=("mlp_checkpoints",), rng=0, cache_dir=cache)


def _outputs(path):
    nb = json.loads(path.read_text())
    errors = [o for c in nb["cells"] for o in c.get("outputs", []) if o.get("output_type") == "error"]
    assert not errors
    text = []
    for cell in nb["cells"]:
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                text.append("".join(out["text"]))
            elif "text/html" in out.get("data", {}):    # a styled table: its cells' text
                html = "".join(out["data"]["text/html"])
                text.append(re.sub(r"<[^>]+>", " ", re.sub(r"<style.*?</style>", "", html,
                                                          flags=re.S)))
            elif "text/plain" in out.get("data", {}):
                text.append("".join(out["data"]["text/plain"]))
    return "\n".join(text)


def test_evaluate_chapter_on_a_user_file(digits, tmp_path):
    path = save_predictions(tmp_path / "mine.npz", digits.labels("test"),
                            logits=digits.logits("test")[-1])
    out = chapters.run_chapter("evaluate", {"predictions": str(path), "bins": [10, 20]},
                               tmp_path / "run")
    text = _outputs(out)
    assert "mine.npz: n = 447, k = 10" in text
    assert "report.json" in text
    # the user's report: its verdict first, the user's file named, no demo prose and none of
    # the method's own checks (section 7 runs in the book and with -p validate True)
    assert text.index("verdict: ") < text.index("mine.npz: n = 447")
    nb = json.loads(out.read_text())
    shown = "".join("".join(o["data"]["text/markdown"]) for c in nb["cells"]
                    for o in c.get("outputs", []) if "text/markdown" in o.get("data", {}))
    assert "your file" in shown and "For the demo" not in shown
    assert "skipped: validate is False" in text
    assert "refused" not in text and "coverage >=" not in text
    assert "p-values of the calibrated redraw" not in text


def test_recalibration_chapter_on_a_user_file(digits, tmp_path):
    path = save_predictions(tmp_path / "mine.npz", digits.labels("test"),
                            probs=digits.probs("test")[-1])
    out = chapters.run_chapter("recalibration", {"predictions": str(path), "n_draws": 1,
                                                 "sim_cal": 2000, "sim_test": 2000,
                                                 "sim_classes": 10}, tmp_path / "run")
    text = _outputs(out)
    assert "mine.npz" in text and "MRR" in text


def test_rankings_chapter_on_user_files(digits, tmp_path):
    paths = [str(save_predictions(tmp_path / f"ckpt{j:02d}.npz", digits.labels("test"),
                                  probs=P)) for j, P in enumerate(digits.probs("test", scaled=True))]
    out = chapters.run_chapter("rankings", {"predictions": paths, "bins": [10]}, tmp_path / "run")
    text = _outputs(out)
    # the user's files by name in the dominance chain, and the agreement table's caption
    assert "ckpt09.npz" in text and "how many each measure orders as the losses do" in text


def test_rankings_chapter_refuses_files_with_different_labels(digits, tmp_path):
    y = digits.labels("test")
    a = save_predictions(tmp_path / "a.npz", y, probs=digits.probs("test")[0])
    b = save_predictions(tmp_path / "b.npz", np.roll(y, 1), probs=digits.probs("test")[1])
    with pytest.raises(RuntimeError, match="failed in cell .*different labels"):
        chapters.run_chapter("rankings", {"predictions": [str(a), str(b)]}, tmp_path / "run")
