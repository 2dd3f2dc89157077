"""calnotes.evaluate and ``calnotes evaluate``: numbers, references, files, refusals."""

from __future__ import annotations

import csv
import json
import math

import numpy as np
import pytest

import calnotes
from calnotes import cli, evaluation
from calnotes.data.loaders import save_predictions


def _calibrated(n, k, rng, sharp=2.0):
    Z = rng.normal(size=(n, k)) * sharp
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return P, np.minimum(y, k - 1), Z


def test_report_numbers_are_the_library_measures():
    rng = np.random.default_rng(0)
    P, y, _ = _calibrated(400, 4, rng)
    report = calnotes.evaluate(P, labels=y, n_bins=[10, 40])
    # accuracy and log loss straight from numpy, not through calnotes
    assert report.accuracy == np.mean(P.argmax(axis=1) == y)
    assert math.isclose(report.scores["log"], -np.mean(np.log(P[np.arange(400), y])),
                        rel_tol=1e-12)
    onehot = np.eye(4)[y]
    assert math.isclose(report.scores["brier"], np.mean(((P - onehot) ** 2).sum(axis=1)),
                        rel_tol=1e-12)
    assert len(report.rows) == 2 * 3 * 2 + 1          # + SmoothECE of the confidences
    lookup = {(r["measure"], r["aggregation"], r["n_bins"]): r["value"] for r in report.rows}
    assert lookup["l2-QECE", "classwise", 40] == calnotes.classwise(calnotes.l2_qece, y, P,
                                                                     n_bins=40)
    # The report sums an equal-width bin's predictions in sorted order (one sort per column),
    # binned_ece in input order: the same sum of <= 400 terms in another order, so they agree
    # to n * eps ~ 1e-13 relative, not bit for bit.  Equal-mass sums are the same reduceat.
    assert math.isclose(lookup["ECE", "confidence", 10],
                        calnotes.confidence(calnotes.binned_ece, y, P, n_bins=10),
                        rel_tol=1e-12)
    assert lookup["l1-QECE", "confidence", 10] == calnotes.confidence(calnotes.l1_qece, y, P,
                                                                      n_bins=10)
    from calnotes.core.kernel import smooth_ece
    assert lookup["SmoothECE", "confidence", None] == smooth_ece(P.argmax(axis=1) == y,
                                                                 P.max(axis=1))


def test_calibrated_reference_is_the_mean_over_redrawn_labels():
    """For a calibrated model the reference is E[value]: 600 label redraws, |z| <= 4."""
    rng = np.random.default_rng(1)
    P, y, _ = _calibrated(300, 3, rng)
    report = calnotes.evaluate(P, labels=y, n_bins=[12], smooth_ece=False)
    draws = []
    for _ in range(600):
        y_new = (P.cumsum(axis=1) > rng.random((300, 1))).argmax(axis=1)
        draws.append([r["value"] for r in calnotes.evaluate(P, labels=y_new, n_bins=[12],
                                                            references=False,
                                                            smooth_ece=False,
                                                            utility=False,
                                                            significance=False).rows])
    draws = np.array(draws)
    for j, row in enumerate(report.rows):
        assert row["reference_method"] == "exact"
        se = draws[:, j].std(ddof=1) / np.sqrt(len(draws))
        z = (draws[:, j].mean() - row["calibrated_reference"]) / se
        assert abs(z) <= 4, (row, z)


def test_folded_normal_fallback_is_close_for_large_bins(monkeypatch):
    """Bins of >= 500 samples: the normal approximation of E|S_j| is within 1% of exact
    (the folded-normal mean's relative error for a Poisson-binomial sum is O(1/var_j))."""
    rng = np.random.default_rng(2)
    P, y, _ = _calibrated(3000, 3, rng, sharp=1.0)
    exact = calnotes.evaluate(P, labels=y, n_bins=[3, 6])
    monkeypatch.setattr(evaluation.entry, "EXACT_L1_BUDGET", 0)
    approx = calnotes.evaluate(P, labels=y, n_bins=[3, 6])
    checked = 0
    for e, a in zip(exact.rows, approx.rows):
        if e["measure"] == "l2-QECE":
            assert a["reference_method"] == "exact"
            continue
        if e["measure"] == "SmoothECE":                    # no reference
            continue
        assert e["reference_method"] == "exact" and a["reference_method"] == "folded-normal"
        if e["binning"] == "width":
            continue  # equal-width bins can be small; compared only where bins are large
        assert abs(a["calibrated_reference"] / e["calibrated_reference"] - 1) < 0.01
        checked += 1
    assert checked == 4
    assert any("folded-normal" in note for note in approx.notes)


def test_bin_counts_above_n_get_equal_width_rows_only():
    """m > n: the equal-width ECE is defined (empty bins carry no weight), equal-mass bins are
    not (eq. (1) needs a sample per bin): ECE rows kept, QECE rows skipped with a note."""
    rng = np.random.default_rng(3)
    P, y, _ = _calibrated(50, 3, rng)
    for report in (calnotes.evaluate(P, labels=y), calnotes.evaluate(P, labels=y,
                                                                     n_bins=[15, 20, 100])):
        rows = {(r["measure"], r["n_bins"]) for r in report.rows}
        assert {m for measure, m in rows if measure == "ECE"} == {15, 20, 100}
        assert {m for measure, m in rows if measure not in ("ECE", "SmoothECE")} == {15, 20}
        assert any("[100]" in note and "skipped" in note for note in report.notes)
    with pytest.raises(ValueError, match="labels: required"):
        calnotes.evaluate(P)
    with pytest.raises(ValueError, match="kind: expected"):
        calnotes.evaluate(calnotes.as_predictions(P, y, kind="scores"))


def test_infinite_log_loss_is_reported_not_hidden(tmp_path):
    P = np.array([[1.0, 0.0], [0.3, 0.7], [0.6, 0.4]])
    y = np.array([1, 1, 0])
    report = calnotes.evaluate(P, labels=y, n_bins=[1], out=tmp_path / "r")
    assert report.scores["log"] == math.inf
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    assert data["scores"]["log"] is None
    assert any("sample 0 gives probability 0" in note for note in data["notes"])


def test_logit_array_input():
    rng = np.random.default_rng(4)
    P, y, Z = _calibrated(200, 3, rng)
    a = calnotes.evaluate(calnotes.as_predictions(Z, y, kind="logits"), n_bins=[5])
    b = calnotes.evaluate(P, labels=y, n_bins=[5])
    for ra, rb in zip(a.rows, b.rows):
        assert math.isclose(ra["value"], rb["value"], rel_tol=1e-9, abs_tol=1e-15)


# ------------------------------------------------------------------------------ command line
@pytest.fixture
def npz_file(tmp_path):
    rng = np.random.default_rng(5)
    P, y, _ = _calibrated(500, 4, rng)
    return save_predictions(tmp_path / "model.npz", y, probs=P), P, y


def test_cli_evaluate_npz_writes_report_and_refuses_to_overwrite(npz_file, tmp_path, capsys):
    path, P, y = npz_file
    out = tmp_path / "report"
    assert cli.main(["evaluate", str(path), "--out", str(out), "--bins", "10", "25"]) == 0
    printed = capsys.readouterr().out
    assert "accuracy" in printed and "l2-QECE" in printed and "calibrated" in printed
    data = json.loads((out / "report.json").read_text())
    assert data["n_samples"] == 500 and data["n_classes"] == 4
    assert len(data["measures"]) == 12 + 1       # + the SmoothECE row
    with open(out / "report.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert rows[0]["quantity"] == "accuracy"
    assert float(rows[0]["value"]) == np.mean(P.argmax(axis=1) == y)
    assert (out / "reliability.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert (out / "sharpness.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    stamps = {f: (out / f).stat().st_mtime_ns for f in evaluation.REPORT_FILES}
    assert cli.main(["evaluate", str(path), "--out", str(out)]) == 2
    assert "--force" in capsys.readouterr().err
    assert stamps == {f: (out / f).stat().st_mtime_ns for f in evaluation.REPORT_FILES}
    assert cli.main(["evaluate", str(path), "--out", str(out), "--force", "--bins", "5"]) == 0
    assert len(json.loads((out / "report.json").read_text())["measures"]) == 6 + 1  # SmoothECE


def test_cli_evaluate_csv_matches_npz(npz_file, tmp_path, capsys):
    path, P, y = npz_file
    csv_path = tmp_path / "model.csv"
    with open(csv_path, "w", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow([f"p{j}" for j in range(4)] + ["label"])
        for row, label in zip(P, y):
            writer.writerow([repr(float(v)) for v in row] + [int(label)])
    assert cli.main(["evaluate", str(csv_path), "--out", str(tmp_path / "a"), "--bins", "20"]) == 0
    assert cli.main(["evaluate", str(path), "--out", str(tmp_path / "b"), "--bins", "20"]) == 0
    a = json.loads((tmp_path / "a" / "report.json").read_text())
    b = json.loads((tmp_path / "b" / "report.json").read_text())
    assert a["measures"] == b["measures"] and a["scores"] == b["scores"]


def test_cli_evaluate_npy_pair_with_logits(tmp_path, capsys):
    rng = np.random.default_rng(6)
    _, y, Z = _calibrated(100, 3, rng)
    np.save(tmp_path / "z.npy", Z)
    np.save(tmp_path / "y.npy", y)
    assert cli.main(["evaluate", str(tmp_path / "z.npy"), "--labels", str(tmp_path / "y.npy"),
                     "--logits", "--bins", "10"]) == 0
    assert "n = 100, k = 3" in capsys.readouterr().out


def test_cli_evaluate_refuses_pickle_without_opt_in(tmp_path, capsys):
    import pickle

    rng = np.random.default_rng(7)
    z, y = rng.normal(size=(30, 3)), rng.integers(0, 3, size=30)
    with open(tmp_path / "logits.p", "wb") as fh:
        pickle.dump(((z, y), (z, y)), fh)
    assert cli.main(["evaluate", str(tmp_path / "logits.p")]) == 2
    assert "--allow-pickle" in capsys.readouterr().err
    assert cli.main(["evaluate", str(tmp_path / "logits.p"), "--allow-pickle",
                     "--bins", "3"]) == 0


@pytest.mark.parametrize("argv, message", [
    (["evaluate", "missing.npz"], "missing.npz: no such file"),
    (["evaluate", "{npz}", "--bins", "0"], "error: --bins: bin count 0 is not"
                                             " a positive integer"),
    (["evaluate", "{npz}", "--bins", "-3"], "--bins: bin count -3 is not a positive integer"),
])
def test_cli_evaluate_errors(npz_file, argv, message, capsys):
    path = npz_file[0]
    argv = [a.replace("{npz}", str(path)) for a in argv]
    assert cli.main(argv) == 2
    assert message in capsys.readouterr().err


def test_folded_normal_width_reference_is_the_zero_bias_folded_normal(monkeypatch):
    """The equal-width fallback, against the formula written out per column and bin."""
    rng = np.random.default_rng(8)
    P, y, _ = _calibrated(2000, 4, rng, sharp=1.5)
    monkeypatch.setattr(evaluation.entry, "EXACT_L1_BUDGET", 0)
    report = calnotes.evaluate(P, labels=y, n_bins=[7])
    got = {r["aggregation"]: r for r in report.rows if r["measure"] == "ECE"}
    conf = P.max(axis=1)
    for aggregation, cols in (("classwise", P), ("confidence", conf[:, None])):
        per_column = []
        for c in range(cols.shape[1]):
            bins = calnotes.equal_width_bins(cols[:, c], 7)
            total = 0.0
            for j in range(7):
                x = cols[bins == j, c]
                total += np.sqrt(np.sum(x * (1 - x))) * np.sqrt(2 / np.pi)
            per_column.append(total / len(cols))
        assert got[aggregation]["reference_method"] == "folded-normal"
        assert math.isclose(got[aggregation]["calibrated_reference"], np.mean(per_column),
                            rel_tol=1e-12)


# ---------------------------------------------------------------------- utility calibration
from calnotes.theory import utility as ut  # noqa: E402


def _sharpened(P, power=3.0):
    Q = P ** power
    return Q / Q.sum(axis=1, keepdims=True)


def test_utility_rows_are_direct_utility_calibration():
    rng = np.random.default_rng(20)
    P, y, _ = _calibrated(600, 4, rng)
    report = calnotes.evaluate(P, labels=y, n_bins=[10], smooth_ece=False, references=False)
    got = {c["class"]: c for c in report.utility["classes"]}
    assert list(got) == ["U_TCE", "U_CWE", "U_topK"]
    for label, fam in (("U_TCE", ut.top_class(4)), ("U_CWE", ut.classwise(4)),
                       ("U_topK", ut.top_k(4))):
        res = ut.utility_calibration(y, P, fam)
        i = int(np.argmax(res.values))
        row = got[label]
        assert row["n_utilities"] == len(fam)
        assert (row["uc"], row["utility"], row["lower"], row["upper"], row["mass"],
                row["sign"]) == (res.values[i], res.names[i], res.lower[i], res.upper[i],
                                 res.mass[i], res.sign[i])
        assert row["direction"] == {1: "too pessimistic", -1: "too optimistic"}[row["sign"]]
        assert [w["uc"] for w in row["worst"]] == sorted(res.values, reverse=True)[:5]
    # independently of utility_calibration: enumerate every interval (uc_brute_force)
    conf, correct = P.max(axis=1), (P.argmax(axis=1) == y).astype(float)
    assert math.isclose(got["U_TCE"]["uc"], ut.uc_brute_force(conf, correct), rel_tol=1e-12)
    per_class = [ut.uc_brute_force(P[:, c], (y == c).astype(float)) for c in range(4)]
    assert math.isclose(got["U_CWE"]["uc"], max(per_class), rel_tol=1e-12)
    assert got["U_CWE"]["utility"] == f"class {int(np.argmax(per_class))}"
    # the worst interval holds `mass` of the samples and its deviation is +-uc
    row = got["U_TCE"]
    inside = (conf >= row["lower"]) & (conf <= row["upper"])
    assert inside.mean() == row["mass"]
    gap = np.sum(correct[inside] - conf[inside]) / 600
    assert math.isclose(gap, row["sign"] * row["uc"], rel_tol=1e-9)


def test_utility_ecdf_is_the_sampled_classes_with_the_dkw_band():
    rng = np.random.default_rng(21)
    P, y, _ = _calibrated(500, 5, rng)
    report = calnotes.evaluate(P, labels=y, n_bins=[10], smooth_ece=False, references=False,
                               utility_samples=120, utility_delta=0.1, rng=7)
    ecdf = report.utility["ecdf"]
    assert (ecdf["n_utilities"], ecdf["seed"], ecdf["delta"], ecdf["eps_stat"]) == (120, 7,
                                                                                    0.1, 0.0)
    assert math.isclose(ecdf["halfwidth"], math.sqrt(math.log(2 / 0.1) / 240), rel_tol=1e-12)
    assert "estimated" in ecdf["band"]
    gen = np.random.default_rng(7)                     # documented order: U_lin, then U_rank
    families = [ut.sample_linear(5, 120, rng=gen), ut.sample_rank(5, 120, rng=gen)]
    for entry, fam in zip(ecdf["classes"], families):
        assert entry["class"] == fam.label
        direct = np.sort(ut.utility_calibration(y, P, fam).values)
        assert entry["errors"] == direct.tolist()
        errors = np.array(entry["errors"])
        assert entry["median"] == np.quantile(errors, 0.5, method="inverted_cdf")
        assert entry["q90"] == np.quantile(errors, 0.9, method="inverted_cdf")
        assert entry["max"] == errors.max()
        assert [w["uc"] for w in entry["worst"]] == sorted(errors, reverse=True)[:5]
        key = "a" if fam.kind == "linear" else "theta"
        for w in entry["worst"][:2]:
            # the reported parameters reproduce the reported error (brute force, by hand)
            prm = np.array(w[key])
            if key == "a":
                predicted, realized = P @ prm, prm[y]
            else:
                order = np.argsort(-P, axis=1)
                predicted = np.sort(P, axis=1)[:, ::-1] @ prm
                realized = prm[np.argmax(order == y[:, None], axis=1)]
            assert math.isclose(ut.uc_brute_force(predicted, realized), w["uc"],
                                rel_tol=1e-9)
    text = report.format_table()
    assert "M = 120 sampled utilities" in text and "seed 7" in text
    assert "+-0.112 at delta = 0.1" in text and "*estimated* errors" in text


def test_utility_calibrated_small_sharpened_large():
    """Labels drawn from the predictions: every UC is sampling noise (O(1/sqrt(n)));
    the same predictions raised to the 3rd power and renormalised are overconfident."""
    rng = np.random.default_rng(11)
    P, y, _ = _calibrated(4000, 5, rng, sharp=1.5)
    kw = {"n_bins": [10], "smooth_ece": False, "references": False}
    good = calnotes.evaluate(P, labels=y, **kw).utility
    bad = calnotes.evaluate(_sharpened(P), labels=y, **kw).utility
    assert all(c["uc"] < 0.05 for c in good["classes"])
    assert all(c["max"] < 0.05 for c in good["ecdf"]["classes"])
    tce = bad["classes"][0]
    assert tce["uc"] > 0.15 and tce["direction"] == "too optimistic"
    # the whole range is one interval: UC >= |mean(confidence - accuracy)|
    Q = _sharpened(P)
    assert tce["uc"] >= np.mean(Q.max(axis=1) - (Q.argmax(axis=1) == y)) - 1e-12
    for g, b in zip(good["ecdf"]["classes"], bad["ecdf"]["classes"]):
        assert b["median"] > g["max"]


def test_utility_binary_top_k_is_top_class():
    rng = np.random.default_rng(22)
    p = rng.uniform(size=400)
    yb = (rng.uniform(size=400) < p ** 2).astype(int)          # miscalibrated on purpose
    classes = calnotes.evaluate(p, labels=yb, n_bins=[10]).utility["classes"]
    tce, cwe, topk = classes
    assert topk["n_utilities"] == 1 and topk["utility"] == "top-1"
    assert topk["uc"] == tce["uc"] and (topk["lower"], topk["upper"]) == (tce["lower"],
                                                                          tce["upper"])
    # both class-wise utilities see the same deviations with opposite signs
    assert cwe["worst"][0]["uc"] == pytest.approx(cwe["worst"][1]["uc"], rel=1e-12)


def test_utility_perfect_predictions_have_no_interval(tmp_path):
    y = np.array([0, 1, 2, 1, 0, 2])
    report = calnotes.evaluate(np.eye(3)[y], labels=y, n_bins=[2], out=tmp_path / "r")
    data = json.loads((tmp_path / "r" / "report.json").read_text())
    for c in data["utility"]["classes"]:
        assert (c["uc"], c["lower"], c["upper"], c["direction"]) == (0.0, None, None, "none")
    assert " - " in report.format_table().split("utility calibration")[1]


def test_utility_figure_written_and_option_to_skip(tmp_path, capsys):
    rng = np.random.default_rng(23)
    P, y, _ = _calibrated(300, 3, rng)
    assert evaluation.REPORT_FILES[-1] == "utility_ecdf.png"
    written = calnotes.evaluate(P, labels=y, n_bins=[10], out=tmp_path / "a")
    png = tmp_path / "a" / "utility_ecdf.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert written.utility is not None
    skipped = calnotes.evaluate(P, labels=y, n_bins=[10], utility=False, out=tmp_path / "b")
    assert skipped.utility is None
    assert sorted(p.name for p in (tmp_path / "b").iterdir()) == sorted(
        evaluation.REPORT_FILES[:4])
    assert json.loads((tmp_path / "b" / "report.json").read_text())["utility"] is None
    assert "utility calibration" not in skipped.format_table()
    assert ",U_TCE," not in skipped.to_csv() and ",U_TCE," in written.to_csv()
    # the non-utility numbers do not change
    assert skipped.rows == written.rows and skipped.scores == written.scores
    # overwriting a report with one without utility part removes the stale figure
    calnotes.evaluate(P, labels=y, n_bins=[10], utility=False, out=tmp_path / "a", force=True)
    assert not png.exists()
    # command line
    out = tmp_path / "c"
    path = save_predictions(tmp_path / "m.npz", y, probs=P)
    assert cli.main(["evaluate", str(path), "--bins", "10", "--no-utility", "--out",
                     str(out)]) == 0
    assert "utility calibration" not in capsys.readouterr().out
    assert not (out / "utility_ecdf.png").exists()
    assert cli.main(["evaluate", str(path), "--bins", "10", "--utility-samples", "50",
                     "--seed", "3", "--out", str(out), "--force"]) == 0
    assert "M = 50 sampled utilities per class, seed 3" in capsys.readouterr().out
    assert (out / "utility_ecdf.png").exists()


def _untimed(report_json: str) -> str:
    """A report's JSON without its timings (the one part that differs between runs)."""
    data = json.loads(report_json)
    assert set(data.pop("timings")) >= {"loading", "total"}
    return json.dumps(data)


def test_utility_same_seed_same_json(monkeypatch, npz_file, capsys):
    rng = np.random.default_rng(24)
    P, y, _ = _calibrated(700, 6, rng)
    kw = {"n_bins": [10], "utility_samples": 100}
    a = _untimed(calnotes.evaluate(P, labels=y, rng=5, **kw).to_json())
    b = _untimed(calnotes.evaluate(P, labels=y, rng=5, **kw).to_json())
    assert a == b
    c = json.loads(calnotes.evaluate(P, labels=y, rng=6, **kw).to_json())
    assert c["utility"]["classes"] == json.loads(a)["utility"]["classes"]   # not sampled
    assert c["utility"]["ecdf"]["classes"] != json.loads(a)["utility"]["ecdf"]["classes"]
    # the worker threads do not change the numbers (the unit of work lowered to one
    # utility-row: by the rule this small problem would run on one thread)
    from calnotes.theory import utility
    used = []
    real = utility._uc_families
    monkeypatch.setattr(utility, "_uc_families",
                        lambda *a, **k: used.append(k["workers"]) or real(*a, **k))
    monkeypatch.setattr(evaluation.utility_part, "_UC_THREAD_WORK", 1)
    for workers in (1, 3):
        monkeypatch.setattr(evaluation.utility_part, "_UC_WORKERS", workers)
        assert _untimed(calnotes.evaluate(P, labels=y, rng=5, **kw).to_json()) == a
    assert used == [1, 3]
    # the same command prints the same JSON
    path = str(npz_file[0])
    outputs = []
    for _ in range(2):
        assert cli.main(["evaluate", path, "--bins", "5", "--json", "--utility-samples",
                         "40"]) == 0
        outputs.append(_untimed(capsys.readouterr().out))
    assert outputs[0] == outputs[1] and json.loads(outputs[0])["utility"]["ecdf"]["seed"] == 0


@pytest.mark.parametrize("option, value, error, message", [
    ("utility_samples", 0, ValueError, "utility_samples (command line: --utility-samples):"
                                       " expected an integer >= 1, got 0"),
    ("utility_samples", 2.5, ValueError, "utility_samples (command line: --utility-samples)"),
    ("utility_samples", True, ValueError, "utility_samples (command line: --utility-samples)"),
    ("utility_delta", 0.0, ValueError, "utility_delta: expected a number in (0, 1), got 0.0"),
    ("utility_delta", 1.5, ValueError, "utility_delta: expected a number in (0, 1)"),
    ("utility_delta", "0.05", ValueError, "utility_delta: expected a number in (0, 1)"),
    ("rng", -1, ValueError, "rng (command line: --seed): expected a non-negative integer"
                            " seed, got -1"),
    ("rng", None, TypeError, "rng (command line: --seed)"),
    ("rng", 1.5, TypeError, "rng (command line: --seed)"),
    ("utility", "yes", TypeError, "utility (command line: --no-utility): expected True or"
                                  " False"),
])
def test_utility_bad_options_are_named(option, value, error, message, tmp_path):
    """Checked before anything is loaded: a missing file is not what is reported."""
    with pytest.raises(error) as info:
        calnotes.evaluate(tmp_path / "missing.npz", **{option: value})
    assert message in str(info.value)


def test_cli_utility_bad_samples(npz_file, capsys):
    assert cli.main(["evaluate", str(npz_file[0]), "--utility-samples", "0"]) == 2
    assert "error: --utility-samples: expected an integer >= 1, got 0" in capsys.readouterr().err
