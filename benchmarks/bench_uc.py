"""Utility calibration (paper 001, Lemma 3.4): the estimator against its floor and the brute force.

    .venv/bin/python benchmarks/bench_uc.py [--n 50000 --classes 1000 --utilities 1500
                                             --repeats 3 --out benchmarks/uc_results.json]

1. The bench problem: ``UC_hat`` of ``M = 1,500`` sampled linear utilities (and rank utilities)
   on ``n = 50,000 x C = 1,000`` predictions, timed against its *floor*: one ``(n x C) @ (C x
   M)`` matrix product plus one ``np.sort`` of the ``(M, n)`` matrix of predicted utilities (for
   rank utilities also the row sort of the predictions).  Target: time / floor <= 1.5.  The
   estimator runs its chunks in worker threads (one per CPU, at most 4; NumPy's sorts release
   the GIL) while the floor's sort is single-threaded and its matrix product uses every core;
   the single-threaded time (``workers=1``) is recorded too.
2. The estimator against the ``O(d^2)`` brute force (:func:`calnotes.theory.utility.uc_brute_force`)
   at ``n = 2,000``, continuous and heavily tied forecasts; the values must agree to 1e-12.

No other library computes utility calibration (netcal, torchmetrics, relplot,
uncertainty-calibration, scikit-learn: none), so there is no peer to run beside it.  Exits
non-zero when a ratio misses its target or the values disagree.  Not part of the tests; see
benchmarks/README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from calnotes.theory import utility as ut  # noqa: E402


def problem(n: int, C: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    Z = rng.normal(size=(n, C)) * 2.0
    P = np.exp(Z - Z.max(axis=1, keepdims=True))
    P /= P.sum(axis=1, keepdims=True)
    y = np.minimum((P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1), C - 1)
    return y, P


def best_of(fn, repeats):
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--classes", type=int, default=1000)
    ap.add_argument("--utilities", type=int, default=1500)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n = 10,000, M = 300")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "uc_results.json")
    args = ap.parse_args(argv)
    n, C, M = args.n, args.classes, args.utilities
    if args.quick:
        n, M = 10_000, 300
    y, P = problem(n, C)
    lin = ut.sample_linear(C, M, rng=1)
    rnk = ut.sample_rank(C, M, rng=2)
    A, T = lin.params, rnk.params

    t_mm, V = best_of(lambda: A @ P.T, args.repeats)
    t_sort, _ = best_of(lambda: np.sort(V, axis=1), args.repeats)
    t_rowsort, Ps = best_of(lambda: -np.sort(-P, axis=1), args.repeats)
    t_mm_rank, _ = best_of(lambda: T @ Ps.T, args.repeats)
    t_lin, res_lin = best_of(lambda: ut.utility_calibration(y, P, lin), args.repeats)
    t_rank, res_rank = best_of(lambda: ut.utility_calibration(y, P, rnk), args.repeats)
    t_lin1, _ = best_of(lambda: ut.utility_calibration(y, P, lin, workers=1), args.repeats)
    t_rank1, _ = best_of(lambda: ut.utility_calibration(y, P, rnk, workers=1), args.repeats)
    rows = [
        {"computation": f"UC over {M} linear utilities", "seconds": t_lin,
         "single_thread_seconds": t_lin1, "single_thread_over_floor": t_lin1 / (t_mm + t_sort),
         "floor_seconds": t_mm + t_sort, "matmul_seconds": t_mm, "sort_seconds": t_sort,
         "over_floor": t_lin / (t_mm + t_sort), "max_uc": res_lin.max},
        {"computation": f"UC over {M} rank utilities", "seconds": t_rank,
         "single_thread_seconds": t_rank1,
         "single_thread_over_floor": t_rank1 / (t_rowsort + t_mm_rank + t_sort),
         "floor_seconds": t_rowsort + t_mm_rank + t_sort, "matmul_seconds": t_mm_rank,
         "sort_seconds": t_sort, "row_sort_seconds": t_rowsort,
         "over_floor": t_rank / (t_rowsort + t_mm_rank + t_sort), "max_uc": res_rank.max},
    ]
    rng = np.random.default_rng(3)
    brute = []
    for label, v in (("continuous", rng.uniform(-1, 1, 2000)),
                     ("heavy ties (20 values)", rng.integers(0, 20, 2000) / 19 * 2 - 1)):
        u = np.clip(v + rng.normal(0, 0.4, v.size), -1, 1)
        t_fast, fast = best_of(lambda: ut.uc_from_values(v, u).values[0], args.repeats)
        t_slow, slow = best_of(lambda: ut.uc_brute_force(v, u), 1)
        brute.append({"input": label, "n": int(v.size), "estimator_seconds": t_fast,
                      "brute_force_seconds": t_slow, "brute_over_estimator": t_slow / t_fast,
                      "difference": abs(fast - slow)})
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "problem": {"n": n, "classes": C, "utilities": M, "repeats": args.repeats,
                    "target_over_floor": 1.5},
        "peers": "none: no other library implements utility calibration",
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "cpu_count": os.cpu_count(), "platform": platform.platform()},
        "rows": rows,
        "brute_force": brute,
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    for r in rows:
        print(f"{r['computation']:32s} {r['seconds']:.2f} s  floor {r['floor_seconds']:.2f} s"
              f"  ratio {r['over_floor']:.2f} (one thread {r['single_thread_over_floor']:.2f})")
    for b in brute:
        print(f"brute force, {b['input']:24s} {b['brute_over_estimator']:.0f}x slower,"
              f" |difference| {b['difference']:.1e}")
    ok = all(r["over_floor"] <= 1.5 for r in rows) and all(b["difference"] <= 1e-12 for b in brute)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
