"""Recalibration maps: calnotes side by side with scikit-learn's CalibratedClassifierCV.

    .venv/bin/python benchmarks/bench_recalibrate.py [--n 50000 --k 10 --repeats 5
                                                      --out benchmarks/recalibrate_results.json]

One seeded problem: synthetic logits of an over-confident 10-class model with a class-prior
shift, split in half (calibration / test).  Two maps have a scikit-learn peer, fitted on the
same numbers through a frozen pass-through classifier:

* temperature scaling: ``TemperatureScaling(inputs="logits")`` vs
  ``CalibratedClassifierCV(FrozenEstimator(logits model), method="temperature")``
  (scikit-learn >= 1.8; the script stops if it is older);
* isotonic regression: ``IsotonicCalibration()`` on ``softmax(z)`` vs
  ``CalibratedClassifierCV(FrozenEstimator(probabilities model), method="isotonic")``.

Both pairs are the same estimator (one-dimensional convex fit of ``log beta``; per-class
isotonic regression on ``p_r`` then row normalization), so the script asserts that they agree.
The other calnotes maps are timed and scored alone.  Fit time (on the calibration split) and
transform time (on the test split) are medians of ``--repeats`` calls taken round-robin after
one untimed warm-up on the first rows; *ratio* = calnotes / peer.  Writes ``--out``.
See benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import importlib.metadata
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # time the calnotes of this checkout, however it is installed

import sklearn  # noqa: E402
from sklearn.base import BaseEstimator, ClassifierMixin  # noqa: E402
from sklearn.calibration import CalibratedClassifierCV  # noqa: E402
from sklearn.frozen import FrozenEstimator  # noqa: E402

import calnotes  # noqa: E402
from calnotes import recalibrate as rc  # noqa: E402

SCALE, TEMPERATURE, PRIOR_SHIFT = 3.0, 1.5, 1.0
WARMUP_ROWS = 2000
N_BINS = 15
# Temperature: both minimize the same convex function of log beta to xatol ~1e-10 (calnotes)
# and 64 eps (scikit-learn); the minimizers agree far below 1e-6.  Isotonic: the same PAV fit
# and the same normalization; outputs agree to rounding.
TEMPERATURE_RTOL, ISOTONIC_ATOL = 1e-6, 1e-12


def make_problem(n, k, seed=0):
    """Logits ``SCALE * N(0, 1)``; labels from ``softmax(z / TEMPERATURE + c)``.

    ``c`` runs linearly from ``-PRIOR_SHIFT/2`` to ``+PRIOR_SHIFT/2`` over the classes, so the
    model is over-confident and its class priors are off: temperature scaling fixes the first,
    the per-class maps both.
    """
    rng = np.random.default_rng(seed)
    Z = SCALE * rng.standard_normal((n, k))
    c = np.linspace(-PRIOR_SHIFT / 2, PRIOR_SHIFT / 2, k)
    cdf = np.cumsum(rc.softmax(Z / TEMPERATURE + c), axis=1)
    y = np.minimum((cdf < rng.random(n)[:, None]).sum(axis=1), k - 1)
    return Z, y


class _Passthrough(ClassifierMixin, BaseEstimator):
    """A "model" whose features are its outputs, so that CalibratedClassifierCV sees exactly
    the logits (or probabilities) calnotes gets."""

    def fit(self, X, y):
        self.classes_ = np.unique(y)
        return self

    def predict(self, X):
        return self.classes_[np.argmax(X, axis=1)]


class LogitModel(_Passthrough):
    def decision_function(self, X):
        return np.asarray(X)

    def predict_proba(self, X):
        return rc.softmax(X)


class ProbaModel(_Passthrough):
    def predict_proba(self, X):
        return np.asarray(X)


def sklearn_map(method, model):
    """(fit, transform) for CalibratedClassifierCV on a frozen, already fitted pass-through
    model (fitting the pass-through, i.e. setting ``classes_``, is not timed)."""
    frozen = FrozenEstimator(model)
    return (lambda X, y: CalibratedClassifierCV(frozen, method=method).fit(X, y),
            lambda fitted, X: fitted.predict_proba(X))


def calnotes_map(factory):
    return (lambda X, y: factory().fit(X, y)), (lambda fitted, X: fitted.transform(X))


# Rows: name, call shown, input ("logits" or "probs"), fit, transform, peer of (or None).
def rows(k):
    classes = np.arange(k)
    return [
        ("calnotes TS", 'TemperatureScaling(inputs="logits")', "logits",
         *calnotes_map(lambda: rc.TemperatureScaling(inputs="logits")), None),
        ("scikit-learn TS", 'CalibratedClassifierCV(FrozenEstimator(m), method="temperature")',
         "logits", *sklearn_map("temperature", LogitModel().fit(None, classes)), "calnotes TS"),
        ("calnotes IR", "IsotonicCalibration()", "probs",
         *calnotes_map(rc.IsotonicCalibration), None),
        ("scikit-learn IR", 'CalibratedClassifierCV(FrozenEstimator(m), method="isotonic")',
         "probs", *sklearn_map("isotonic", ProbaModel().fit(None, classes)), "calnotes IR"),
        ("calnotes VS", 'VectorScaling(inputs="logits")', "logits",
         *calnotes_map(lambda: rc.VectorScaling(inputs="logits")), None),
        ("calnotes MS", 'MatrixScaling(inputs="logits")', "logits",
         *calnotes_map(lambda: rc.MatrixScaling(inputs="logits")), None),
        ("calnotes Dirichlet", "DirichletCalibration()  (lambda = mu = 1e-3)", "probs",
         *calnotes_map(rc.DirichletCalibration), None),
        ("calnotes HB", "HistogramBinning(n_bins=15)", "probs",
         *calnotes_map(rc.HistogramBinning), None),
        ("calnotes MRR", "MeanReplacement()", "probs",
         *calnotes_map(rc.MeanReplacement), None),
        ("calnotes t^f conditional", 'AccuracyPreservingTransform("conditional")', "probs",
         *calnotes_map(lambda: rc.AccuracyPreservingTransform("conditional")), None),
    ]


def scores(y, P):
    return {"accuracy": float(np.mean(P.argmax(axis=1) == y)),
            "tce": calnotes.tce(y, P, n_bins=N_BINS),
            "log_loss": calnotes.log_loss(y, P),
            "brier": calnotes.brier_loss(y, P)}


def run(table, data, repeats):
    fit_times = {r[0]: [] for r in table}
    transform_times = {r[0]: [] for r in table}
    fitted, outputs = {}, {}
    for name, _, kind, fit, transform, _ in table:       # untimed warm-up
        Xc, yc, _ = data[kind]
        transform(fit(Xc[:WARMUP_ROWS], yc[:WARMUP_ROWS]), Xc[:WARMUP_ROWS])
    for _ in range(repeats):
        for name, _, kind, fit, transform, _ in table:
            Xc, yc, Xt = data[kind]
            t0 = time.perf_counter()
            fitted[name] = fit(Xc, yc)
            fit_times[name].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            outputs[name] = transform(fitted[name], Xt)
            transform_times[name].append(time.perf_counter() - t0)
    return fitted, outputs, fit_times, transform_times


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--k", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "recalibrate_results.json")
    args = ap.parse_args(argv)
    if tuple(int(v) for v in sklearn.__version__.split(".")[:2]) < (1, 8):
        sys.exit(f"scikit-learn {sklearn.__version__} has no method='temperature' (needs 1.8)")

    t_start = time.perf_counter()
    Z, y = make_problem(args.n, args.k, args.seed)
    half = args.n // 2
    P = rc.softmax(Z)
    data = {"logits": (Z[:half], y[:half], Z[half:]), "probs": (P[:half], y[:half], P[half:])}
    yt = y[half:]
    problem = {"n": args.n, "k": args.k, "seed": args.seed, "calibration": half,
               "test": args.n - half, "logit_scale": SCALE, "label_temperature": TEMPERATURE,
               "prior_shift": PRIOR_SHIFT, "uncalibrated_test": scores(yt, P[half:])}
    print(f"problem: n = {args.n} (half calibration, half test), k = {args.k}; uncalibrated"
          f" test accuracy {problem['uncalibrated_test']['accuracy']:.3f},"
          f" log loss {problem['uncalibrated_test']['log_loss']:.3f}")

    table = rows(args.k)
    fitted, outputs, fit_times, transform_times = run(table, data, args.repeats)

    # The pairs compute the same estimator: check it.
    T_ours = fitted["calnotes TS"].temperature_
    T_peer = 1.0 / float(fitted["scikit-learn TS"].calibrated_classifiers_[0]
                         .calibrators[0].beta_)
    assert np.isclose(T_ours, T_peer, rtol=TEMPERATURE_RTOL), (T_ours, T_peer)
    ir_diff = float(np.abs(outputs["calnotes IR"] - outputs["scikit-learn IR"]).max())
    assert ir_diff <= ISOTONIC_ATOL, ir_diff
    ts_diff = float(np.abs(outputs["calnotes TS"] - outputs["scikit-learn TS"]).max())
    agreement = {"temperature_calnotes": T_ours, "temperature_sklearn": T_peer,
                 "temperature_relative_difference": abs(T_ours - T_peer) / T_peer,
                 "ts_max_abs_probability_difference": ts_diff,
                 "isotonic_max_abs_probability_difference": ir_diff}

    results = []
    for name, call, kind, _, _, peer in table:
        fit_s = statistics.median(fit_times[name])
        tr_s = statistics.median(transform_times[name])
        row = {"name": name, "call": call, "input": kind, "fit_seconds": fit_s,
               "transform_seconds": tr_s, "peer_of": peer, "test": scores(yt, outputs[name])}
        m = fitted[name]
        for attr in ("temperature_", "n_iter_", "converged_", "accuracy_",
                     "accuracy_preserving_"):
            if hasattr(m, attr):
                row[attr.rstrip("_")] = getattr(m, attr)
        results.append(row)
    by_name = {r["name"]: r for r in results}
    for r in results:
        if r["peer_of"] is not None:
            ours = by_name[r["peer_of"]]
            ours["fit_ratio"] = ours["fit_seconds"] / r["fit_seconds"]
            ours["transform_ratio"] = ours["transform_seconds"] / r["transform_seconds"]

    print(f"\n| map | fit s | transform s | ratio fit / transform (calnotes / peer) | "
          f"test acc | test TCE | test log loss | test Brier |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        ratio = (f"{r['fit_ratio']:.2f} / {r['transform_ratio']:.2f}" if "fit_ratio" in r
                 else "")
        s = r["test"]
        print(f"| {r['name']} | {r['fit_seconds']:.3f} | {r['transform_seconds']:.4f} | {ratio} "
              f"| {s['accuracy']:.4f} | {s['tce']:.4f} | {s['log_loss']:.4f} "
              f"| {s['brier']:.4f} |")
    print(f"\nagreement: T calnotes {T_ours:.10f}, scikit-learn {T_peer:.10f}"
          f" (relative {agreement['temperature_relative_difference']:.1e});"
          f" TS probabilities max |diff| {ts_diff:.1e}; IR probabilities max |diff| {ir_diff:.1e}")

    versions = {name: importlib.metadata.version(name) for name in
                ("numpy", "scipy", "scikit-learn")}
    versions["calnotes"] = calnotes.__version__
    out = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "cpu_count": os.cpu_count(),
                    "platform": platform.platform(),
                    "processor": platform.processor() or platform.machine(),
                    "note": "shared machine: expect tens of percent of timing noise"},
        "versions": versions, "repeats": args.repeats, "warmup_rows": WARMUP_ROWS,
        "problem": problem, "agreement": agreement, "rows": results,
        "total_seconds": time.perf_counter() - t_start,
    }
    args.out.write_text(json.dumps(out, indent=2) + "\n")
    print(f"\nwrote {args.out} ({out['total_seconds']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
