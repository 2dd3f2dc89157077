"""Part III figure notebooks under papermill, at small sizes (the book runs the defaults)."""

import json
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
FIGURES = ROOT / "book" / "proper" / "figures"


@pytest.mark.parametrize("name, parameters", [
    ("ece_bias", {"n_classes": 5, "sizes": [60, 1000], "n_reps": 12, "n_pool": 4000}),
])
def test_figure_notebook_runs_under_papermill(name, parameters, tmp_path):
    papermill = pytest.importorskip("papermill")
    source = FIGURES / f"{name}.ipynb"
    raw = json.loads(source.read_text())
    code = [c for c in raw["cells"] if c["cell_type"] == "code"]
    assert "parameters" in code[0]["metadata"].get("tags", [])
    assert all(not c["outputs"] and c["execution_count"] is None for c in code)
    out = tmp_path / f"{name}.ipynb"
    papermill.execute_notebook(str(source), str(out), parameters=parameters,
                               kernel_name="python3", cwd=str(FIGURES), progress_bar=False)
    nb = json.loads(out.read_text())
    injected = [c for c in nb["cells"] if "injected-parameters" in c["metadata"].get("tags", [])]
    assert len(injected) == 1
    assert not any(o.get("output_type") == "error" for c in nb["cells"]
                   for o in c.get("outputs", []))


def test_cs_diagrams_on_a_user_file(tmp_path):
    """The calibration-sharpness notebook on a user's file (digits suite, logits .npz)."""
    from calnotes import save_predictions
    from calnotes.book import chapters
    from calnotes.data import build_suite

    suite = build_suite("digits", families=("mlp_checkpoints",), rng=0,
                        cache_dir=tmp_path / "cache")
    path = save_predictions(tmp_path / "mine.npz", suite.labels("test"),
                            logits=suite.logits("test")[-1])
    out = chapters.run_chapter("cs_diagrams", {"predictions": str(path)}, tmp_path / "run")
    nb = json.loads(out.read_text())
    assert not any(o.get("output_type") == "error" for c in nb["cells"]
                   for o in c.get("outputs", []))
    text = "".join("".join(o.get("text", "")) for c in nb["cells"] for o in c.get("outputs", []))
    assert "mine.npz" in text
