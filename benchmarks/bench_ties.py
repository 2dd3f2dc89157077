"""What averaging over the orders of tied predictions costs: equal-mass measures on tied data.

    .venv/bin/python benchmarks/bench_ties.py [--n 2000000 --n-multi 50000 --k 1000
                                               --repeats 5 --out benchmarks/ties_results.json]

Two problems with heavy ties, the rows sorted by label (the order that makes ties leak the
labels into the bins under ``ties="position"``):

* binary: ``n`` predictions rounded to two decimals (101 distinct values), l1- and l2-QECE with
  15 equal-mass bins;
* multi-class: ``n_multi x k`` softmax probabilities rounded to three decimals (most entries of
  every column are the tied value 0), class-wise l1- and l2-QECE with 15 and 100 bins.

Each measure is timed with ``ties="average"`` (the default) and ``ties="position"`` (eq. (1)
with ties in input order), against the floor: one ``np.sort`` of the same column or matrix,
which any equal-mass measure needs.  Reported: median seconds over ``--repeats`` round-robin
calls, the ratio average / position and average / floor, and the values (the position rule on
label-sorted rows is inflated; the averaged value equals the one on shuffled rows, asserted).
uncertainty-calibration (installed by the bench extra) merges tied bins instead; its class-wise
time is shown for scale where it is installed.  Not part of the tests; see benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import calnotes  # noqa: E402

RTOL = 1e-10   # averaged values on two row orders: same sums up to summation order


def binary_problem(n, seed):
    rng = np.random.default_rng(seed)
    p = np.round(rng.beta(2, 2, n), 2)
    y = (rng.random(n) < p).astype(np.int64)
    order = np.argsort(y, kind="stable")
    return y[order], p[order], rng.permutation(n)


def multiclass_problem(n, k, seed):
    rng = np.random.default_rng(seed)
    z = 3.0 * rng.standard_normal((n, k))
    z -= z.max(axis=1, keepdims=True)
    P = np.exp(z)
    P /= P.sum(axis=1, keepdims=True)
    P = np.round(P, 3)
    top = P.argmax(axis=1)
    P[np.arange(n), top] += 1.0 - P.sum(axis=1)          # rows sum to one again
    cdf = np.cumsum(P, axis=1)
    y = np.minimum((cdf < rng.random(n)[:, None]).sum(axis=1), k - 1)
    order = np.argsort(y, kind="stable")
    return y[order], P[order], rng.permutation(n)


def timed(calls, repeats):
    """Median seconds and last value of each call, taken round-robin."""
    times = {name: [] for name in calls}
    values = {}
    for _ in range(repeats):
        for name, fn in calls.items():
            t0 = time.perf_counter()
            values[name] = fn()
            times[name].append(time.perf_counter() - t0)
    return {name: statistics.median(t) for name, t in times.items()}, values


def run(title, calls, floor, repeats, shuffled_check):
    seconds, values = timed({**calls, "floor": floor}, repeats)
    print(f"\n### {title}\n")
    print("| measure | average (s) | position (s) | floor (s) | average/position |"
          " average/floor | value, average | value, position |")
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    names = sorted({name.rsplit(" ", 1)[0] for name in calls})
    for name in names:
        a, p = seconds[f"{name} average"], seconds[f"{name} position"]
        va, vp = values[f"{name} average"], values[f"{name} position"]
        shuffled = shuffled_check[name]()
        assert np.isclose(va, shuffled, rtol=RTOL, atol=0), (name, va, shuffled)
        row = {"measure": name, "average_seconds": a, "position_seconds": p,
               "floor_seconds": seconds["floor"], "average_over_position": a / p,
               "average_over_floor": a / seconds["floor"], "value_average": va,
               "value_position_label_sorted": vp, "value_average_shuffled": shuffled}
        rows.append(row)
        print(f"| {name} | {a:.3f} | {p:.3f} | {seconds['floor']:.3f} | {a / p:.2f} |"
              f" {a / seconds['floor']:.1f} | {va:.4e} | {vp:.4e} |")
    return rows


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=2_000_000)
    ap.add_argument("--n-multi", type=int, default=50_000)
    ap.add_argument("--k", type=int, default=1_000)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "ties_results.json")
    args = ap.parse_args(argv)

    y, p, perm = binary_problem(args.n, args.seed)
    binary_calls, binary_shuffled = {}, {}
    for name, measure in (("l1-QECE", calnotes.l1_qece), ("l2-QECE", calnotes.l2_qece)):
        for ties in ("average", "position"):
            binary_calls[f"{name} {ties}"] = (lambda f=measure, t=ties: f(y, p, 15, ties=t))
        binary_shuffled[name] = lambda f=measure: f(y[perm], p[perm], 15)
    binary = run(f"Binary, n = {args.n}, two decimals, rows sorted by label, m = 15",
                 binary_calls, lambda: np.sort(p), args.repeats, binary_shuffled)

    y, P, perm = multiclass_problem(args.n_multi, args.k, args.seed)
    multi_calls, multi_shuffled = {}, {}
    for m in (15, 100):
        for name, measure in (("l1-QECE", calnotes.l1_qece), ("l2-QECE", calnotes.l2_qece)):
            label = f"class-wise {name} m={m}"
            for ties in ("average", "position"):
                multi_calls[f"{label} {ties}"] = (
                    lambda f=measure, t=ties, mm=m: calnotes.classwise(f, y, P, n_bins=mm, ties=t))
            multi_shuffled[label] = (lambda f=measure, mm=m:
                                     calnotes.classwise(f, y[perm], P[perm], n_bins=mm))
    multi = run(f"Class-wise, {args.n_multi} x {args.k}, three decimals, rows sorted by label",
                multi_calls, lambda: np.sort(P, axis=0), args.repeats, multi_shuffled)

    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "cpu_count": os.cpu_count(), "platform": platform.platform()},
        "calnotes": calnotes.__version__, "repeats": args.repeats,
        "problem": {"n": args.n, "n_multi": args.n_multi, "k": args.k, "seed": args.seed},
        "binary": binary, "classwise": multi,
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
