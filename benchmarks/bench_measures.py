"""Side-by-side timings of calnotes and peer libraries on one large multi-class problem.

    .venv/bin/python benchmarks/bench_measures.py [--n 50000 --k 1000 --repeats 9
                                                   --out benchmarks/results.json]

Two measures, each computed by every installed library that offers it:

* top-label ECE, l1, 15 equal-width bins (Guo et al. 2017);
* class-wise l2 ECE, 15 equal-mass bins.

Each call gets the same (y, P): the time includes everything a library needs to get from
(labels, probability matrix) to the number, e.g. max/argmax for the libraries that take
(confidence, correct) pairs.  One untimed warm-up call on the first rows precedes the
timed calls, which are taken round-robin over the libraries; the reported time is the median
of ``--repeats`` calls (one call when the first takes more than ``SLOW`` seconds).
Writes ``--out`` and exits 1 if an acceptance check fails.  See benchmarks/README.md.
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

import calibration as uc  # noqa: E402  (uncertainty-calibration)
import relplot.metrics  # noqa: E402
from sklearn.calibration import calibration_curve  # noqa: E402

import calnotes  # noqa: E402

N_BINS = 15
SLOW = 30.0          # seconds: a call slower than this is timed once, not `repeats` times
WARMUP_ROWS = 2000   # an untimed call on the first rows warms imports and caches
CLASSWISE_BUDGET = 5.0  # seconds: acceptance bound for calnotes' class-wise equal-mass l2 ECE
# Values computed under the same definition must agree to rounding: the estimators are the
# same sum over the same bins and differ only in the order of ~n floating-point additions
# (relative error ~1e-12 here), while any real difference (one sample changing bins) is far
# larger than 1e-9.
RTOL = 1e-9
SCALE, TEMPERATURE = 5.0, 1.5  # logit scale; label temperature (> 1: over-confident model)


def make_problem(n, k, seed=0, scale=SCALE, temperature=TEMPERATURE):
    """Predictions softmax(scale * z), z ~ N(0, 1); labels drawn from softmax(scale * z / T).

    With T > 1 the true class probabilities are flatter than the predictions: the model is
    over-confident (accuracy ~0.33 at mean confidence ~0.53 for the defaults).
    """
    rng = np.random.default_rng(seed)
    logits = scale * rng.standard_normal((n, k))
    logits -= logits.max(axis=1, keepdims=True)
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    Q = np.exp(logits / temperature, out=logits)
    Q /= Q.sum(axis=1, keepdims=True)
    cdf = np.cumsum(Q, axis=1, out=Q)
    y = np.minimum((cdf < rng.random(n)[:, None]).sum(axis=1), k - 1)
    return y, P


# ----------------------------------------------------------------------- the calls timed

def sklearn_top_label_ece(y, P):
    """ECE from scikit-learn's reliability curve; calibration_curve returns only the nonzero
    bins' means, so the counts are recomputed with its own rule (interior edges of
    np.linspace(0, 1, m + 1), np.searchsorted: a value on an edge goes to the bin below)."""
    pred = P.argmax(axis=1)
    conf = P[np.arange(len(P)), pred]
    prob_true, prob_pred = calibration_curve(pred == y, conf, n_bins=N_BINS)
    edges = np.linspace(0.0, 1.0, N_BINS + 1)[1:-1]
    counts = np.bincount(np.searchsorted(edges, conf), minlength=N_BINS)
    return float(np.sum(counts[counts > 0] / len(conf) * np.abs(prob_true - prob_pred)))


def calnotes_from_confidences(y, P):
    """calnotes' binary binned ECE on the same (correct, confidence) vectors the scikit-learn
    wrapper builds: the same work as that wrapper, with the matrix left unvalidated."""
    pred = P.argmax(axis=1)
    conf = P[np.arange(len(P)), pred]
    return calnotes.binned_ece((pred == y).astype(np.int64), conf, n_bins=N_BINS)


def relplot_top_label_ece(y, P):
    """relplot's binary binned ECE on relplot's own (confidence, correct) conversion."""
    conf, correct = relplot.metrics.multiclass_logits_to_confidences(P, y, probs=True)
    return float(relplot.metrics.binnedECE(conf, correct, nbins=N_BINS))


def calnotes_classwise_rms(y, P):
    """calnotes' per-class l2 ECEs aggregated as uncertainty-calibration does:
    the root of the mean over classes of the squared per-class errors."""
    per_class = calnotes.classwise(calnotes.binned_ece, y, P, per_class=True,
                                   n_bins=N_BINS, p=2, binning="mass")
    return float(np.sqrt(np.mean(per_class ** 2)))


def uc_marginal(y, P):
    # What get_calibration_error(P, y, p=2, debias=False, mode='marginal') runs for
    # continuous scores, called directly to skip its is_discrete() heuristic.
    return float(uc.lower_bound_scaling_ce(P, y, p=2, debias=False, num_bins=N_BINS,
                                           binning_scheme=uc.get_equal_bins, mode="marginal"))


# Each row: library, call shown in the table, function (y, P) -> value, the row it is compared
# with, and None if the definitions agree (asserted) or one line saying how they differ.
TOP_LABEL = [
    ("calnotes", "calnotes.tce(y, P, n_bins=15)",
     lambda y, P: calnotes.tce(y, P, n_bins=N_BINS), None, None),
    ("calnotes (from confidences)", "binned_ece(correct, conf, n_bins=15) after argmax",
     calnotes_from_confidences, "calnotes", None),
    ("scikit-learn", "calibration_curve(correct, conf, n_bins=15) + bin counts",
     sklearn_top_label_ece, "calnotes", None),
    ("relplot", "metrics.binnedECE(*multiclass_logits_to_confidences(P, y, probs=True), nbins=15)",
     relplot_top_label_ece, "calnotes", None),
    ("uncertainty-calibration", "get_ece(P, y, num_bins=15)",
     lambda y, P: float(uc.get_ece(P, y, num_bins=N_BINS)), "calnotes", None),
]
CLASSWISE = [
    ("calnotes", "classwise(binned_ece, y, P, n_bins=15, p=2, binning='mass')",
     lambda y, P: calnotes.classwise(calnotes.binned_ece, y, P, n_bins=N_BINS, p=2,
                                     binning="mass"), None, None),
    ("calnotes (RMS over classes)", "sqrt(mean(classwise(..., per_class=True) ** 2))",
     calnotes_classwise_rms, "calnotes",
     "aggregation: root of the mean of squared per-class errors vs mean of per-class errors"),
    ("uncertainty-calibration", "lower_bound_scaling_ce(P, y, p=2, debias=False, num_bins=15, "
     "binning_scheme=get_equal_bins, mode='marginal')",
     uc_marginal, "calnotes (RMS over classes)",
     "bin sizes: np.array_split gives the n mod m larger bins first, eq. (1) spreads them;"
     " agreement when m divides n is asserted separately"),
]


# ----------------------------------------------------------------------- running

def time_rows(rows, y, P, repeats):
    """Values and timings of every row, the repeats taken round-robin over the libraries so
    that load from elsewhere on the machine hits them alike."""
    values, times = {}, {row[0]: [] for row in rows}
    for _, _, fn, _, _ in rows:
        fn(y[:WARMUP_ROWS], P[:WARMUP_ROWS])  # untimed warm-up
    for _ in range(repeats):
        for library, _, fn, _, _ in rows:
            if times[library] and times[library][0] > SLOW:
                continue
            t0 = time.perf_counter()
            values[library] = float(fn(y, P))
            times[library].append(time.perf_counter() - t0)
    return values, times


def run_measure(title, rows, y, P, repeats, same_definition=True):
    print(f"\n### {title}\n", flush=True)
    values, times = time_rows(rows, y, P, repeats)
    results = {}
    for library, call, _, compare_to, note in rows:
        value, seconds = values[library], statistics.median(times[library])
        row = {"library": library, "call": call, "value": value, "seconds": seconds,
               "repeats": len(times[library]), "compared_with": compare_to, "note": note,
               "ratio": seconds / statistics.median(times["calnotes"])}
        if compare_to is not None:
            ref = values[compare_to]
            row["difference"] = value - ref
            if note is None and same_definition:
                assert np.isclose(value, ref, rtol=RTOL, atol=0.0), (library, value, ref)
                row["note"] = f"same definition: equal to rounding (asserted, rtol {RTOL:g})"
            elif note is None:
                row["note"] = "confidences on bin edges: edge conventions differ"
        results[library] = row
    print_table(list(results.values()))
    return list(results.values())


def print_table(rows):
    print("\n| library | value | seconds | ratio | difference |")
    print("|---|---|---|---|---|")
    for r in rows:
        diff = ("" if r["compared_with"] is None else
                f"{r['difference']:+.1e} vs {r['compared_with']}: {r['note']}")
        timed = "" if r["repeats"] > 1 else " (1 run)"
        print(f"| {r['library']} | {r['value']:.10f} | {r['seconds']:.3f}{timed} "
              f"| {r['ratio']:.2f} | {diff} |")


def check_equal_mass_rules_agree(y, P, n_classes=5):
    """Where m divides n and predictions are distinct, uncertainty-calibration's equal-mass
    bins are exactly eq. (1): assert the per-class l2 ECEs then agree to RTOL."""
    n = len(P) - len(P) % N_BINS
    worst = 0.0
    for r in range(n_classes):
        p, hit = P[:n, r], (y[:n] == r).astype(np.int64)
        assert np.unique(p).size == n
        ours = calnotes.binned_ece(hit, p, n_bins=N_BINS, p=2, binning="mass")
        theirs = uc.lower_bound_scaling_ce(p, hit, p=2, debias=False, num_bins=N_BINS,
                                           binning_scheme=uc.get_equal_bins)
        assert np.isclose(ours, theirs, rtol=RTOL, atol=0.0), (r, ours, theirs)
        worst = max(worst, abs(ours - theirs) / theirs)
    print(f"\nequal-mass check: n = {n} (divisible by {N_BINS}), classes 0..{n_classes - 1}:"
          f" calnotes and uncertainty-calibration agree, max relative difference {worst:.1e}")
    return {"n": n, "classes": n_classes, "max_relative_difference": worst}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--k", type=int, default=1_000)
    ap.add_argument("--repeats", type=int, default=9)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "results.json")
    args = ap.parse_args(argv)

    t0 = time.perf_counter()
    y, P = make_problem(args.n, args.k, args.seed)
    conf = P.max(axis=1)
    # The four top-label conventions (edges j/m or linspace, values on an edge up or down,
    # 1.0 in the last or an extra bin) coincide unless a confidence is (nearly) on an edge.
    off_edges = bool(np.abs(conf * N_BINS - np.round(conf * N_BINS)).min() > 1e-9
                     and conf.max() < 1.0)
    problem = {"n": args.n, "k": args.k, "seed": args.seed, "n_bins": N_BINS,
               "logit_scale": SCALE, "label_temperature": TEMPERATURE,
               "accuracy": float(np.mean(P.argmax(axis=1) == y)),
               "mean_confidence": float(conf.mean()), "confidences_off_edges": off_edges,
               "seconds_to_generate": time.perf_counter() - t0}
    print(f"problem: n = {args.n}, k = {args.k}, accuracy {problem['accuracy']:.3f},"
          f" mean confidence {problem['mean_confidence']:.3f}")

    measures = {
        "top_label": {"title": "Top-label ECE, l1, 15 equal-width bins",
                      "rows": run_measure("Top-label ECE, l1, 15 equal-width bins", TOP_LABEL,
                                          y, P, args.repeats, same_definition=off_edges)},
        "classwise": {"title": "Class-wise l2 ECE, 15 equal-mass bins",
                      "rows": run_measure("Class-wise l2 ECE, 15 equal-mass bins", CLASSWISE,
                                          y, P, args.repeats)},
    }
    equal_mass_check = check_equal_mass_rules_agree(y, P)

    acceptance = []
    for key, m in measures.items():
        rows = m["rows"]
        ours = rows[0]["seconds"]
        peers = [r for r in rows if not r["library"].startswith("calnotes")]
        fastest = min(peers, key=lambda r: r["seconds"])
        acceptance.append({"check": f"{m['title']}: calnotes not slower than the fastest peer"
                                    f" ({fastest['library']})",
                           "seconds": ours, "limit": fastest["seconds"],
                           "pass": ours <= fastest["seconds"]})
    # The like-for-like comparison: calnotes on the (correct, confidence) vectors that the
    # scikit-learn wrapper builds, without validating the matrix (reported, not a substitute
    # for the check above, which includes calnotes' validation of every matrix entry).
    rows = {r["library"]: r for r in measures["top_label"]["rows"]}
    same_work = rows["calnotes (from confidences)"]["seconds"]
    acceptance.append({"check": "Top-label ECE from the same (correct, confidence) vectors:"
                                " calnotes binned_ece not slower than scikit-learn",
                       "seconds": same_work, "limit": rows["scikit-learn"]["seconds"],
                       "pass": same_work <= rows["scikit-learn"]["seconds"]})
    cw = measures["classwise"]["rows"][0]["seconds"]
    acceptance.append({"check": f"class-wise equal-mass l2 ECE on {args.n} x {args.k}"
                                f" under {CLASSWISE_BUDGET:g} s",
                       "seconds": cw, "limit": CLASSWISE_BUDGET, "pass": cw < CLASSWISE_BUDGET})
    print("\n### Acceptance\n")
    for a in acceptance:
        print(f"{'PASS' if a['pass'] else 'FAIL'}: {a['check']}:"
              f" {a['seconds']:.3f} s (limit {a['limit']:.3f} s)")

    versions = {name: importlib.metadata.version(name) for name in
                ("numpy", "scikit-learn", "relplot", "uncertainty-calibration")}
    versions["calnotes"] = calnotes.__version__
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "cpu_count": os.cpu_count(), "platform": platform.platform(),
                    "processor": platform.processor() or platform.machine()},
        "versions": versions, "repeats": args.repeats, "slow_seconds": SLOW,
        "warmup_rows": WARMUP_ROWS, "problem": problem,
        "measures": measures, "equal_mass_check": equal_mass_check, "acceptance": acceptance,
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0 if all(a["pass"] for a in acceptance) else 1


if __name__ == "__main__":
    sys.exit(main())
