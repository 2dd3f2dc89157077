"""``calnotes evaluate`` errors speak the command line's language: the flags, never the API's
``renormalize=True``, ``kind='logits'``, ``labels=...`` or ``label_column:``."""

from __future__ import annotations

import pickle
import re

import numpy as np
import pytest

from calnotes import cli

#: API spellings that must not reach a command-line error.
_API = re.compile(r"\b(?:label_column|prob_columns|ignore_columns|force_logits|allow_pickle"
                  r"|out_of_core|n_bins|utility_samples|renormalize=|kind=|labels=|force="
                  r"|header=)|command line:")


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    folder = tmp_path_factory.mktemp("wording")
    rng = np.random.default_rng(0)
    P = rng.dirichlet([1.0, 1.0, 1.0], 30)
    y = np.arange(30) % 3
    lines = ["label,a,b,c"] + [f"{v}," + ",".join(f"{p:.6f}" for p in row)
                               for v, row in zip(y, P)]
    (folder / "ok.csv").write_text("\n".join(lines) + "\n")
    (folder / "nolabel.csv").write_text("\n".join(["a,b,c"] + [x.split(",", 1)[1]
                                                             for x in lines[1:]]) + "\n")
    np.savez(folder / "probs.npz", labels=y, probs=P)
    np.save(folder / "p.npy", P)
    np.save(folder / "y.npy", y)
    with open(folder / "m.pkl", "wb") as fh:
        pickle.dump(((np.log(P), y), (np.log(P), y)), fh)
    return folder


@pytest.mark.parametrize("argv, says", [
    (["ok.csv", "--force-logits"], "--force-logits: applies to logits only, and these"
     " predictions are read as probabilities; pass --logits with it, or drop it"),
    (["ok.csv", "--renormalize", "5"], "--renormalize: expected True or a tolerance in (0, 1)"),
    (["nolabel.csv"], "name it with --label-column NAME, or pass the labels in a separate"
     " file, --labels FILE"),
    (["p.npy"], "pass the labels file too, --labels FILE"),
    (["probs.npz", "--logits"], "probs.npz: --logits but the file holds 'probs'"),
    (["probs.npz", "--labels", "y.npy"], "an .npz holds its own labels; do not pass --labels"),
    (["m.pkl", "--allow-pickle", "--labels", "y.npy"], "do not pass --labels"),
    (["ok.csv", "--label-column", "nope"], "calnotes: error: --label-column: "),
    (["ok.csv", "--prob-columns", "a,q"], "calnotes: error: --prob-columns: "),
    (["ok.csv", "--delimiter", "ab"], "calnotes: error: --delimiter: expected one character"),
    (["probs.npz", "--delimiter", ";"], "--delimiter: applies to CSV files only"),
    (["probs.npz", "--classes", "a,b"], "probs.npz: --classes: 2 names for 3 classes"),
    (["p.npy", "--labels", "y.npy", "--out-of-core", "--logits"],
     "--logits: logits are not supported out of core (--out-of-core)"),
])
def test_errors_name_the_flags(files, monkeypatch, capsys, argv, says):
    monkeypatch.chdir(files)
    assert cli.main(["evaluate", *argv, "--no-significance", "--no-utility"]) == 2
    err = capsys.readouterr().err
    assert says in err
    assert not _API.search(err), err


def test_wording_rules():
    wording = cli._cli_wording
    assert wording("x.csv: label_column: no column 'q'") == "x.csv: --label-column: no column 'q'"
    assert wording("pass renormalize=True (command line: --renormalize)") == \
        "pass --renormalize"
    assert wording("kind='logits' but the file holds 'probs'") == \
        "--logits but the file holds 'probs'"
    # a column or a phrase that only looks like an option is left alone
    assert wording("column 'classes': not a number") == "column 'classes': not a number"
    assert wording("the header: one field") == "the header: one field"
