"""`calnotes.evaluate` on the 50,000 x 1,000 problem of bench_measures.py, against the floor.

    .venv/bin/python benchmarks/bench_evaluate.py [--n 50000 --k 1000 --repeats 3
                                                   --out benchmarks/evaluate_results.json]

The floor is one ``np.sort(P, axis=0)`` of the same matrix (one thread).  Timed in one process,
round-robin, median of ``--repeats``:

* ``evaluate_binned``: every default binned row (3 bin counts x ECE, l1-QECE, l2-QECE x
  confidence, class-wise), their calibrated references, p-values (exact or 200 Monte Carlo
  draws) and bootstrap intervals, SmoothECE, the proper losses -- no utility calibration;
* ``evaluate_full``: the same plus utility calibration (U_TCE, U_CWE, U_topK and 500 + 500
  sampled utilities), i.e. ``calnotes evaluate`` with its defaults.

The issue's target is ``evaluate_binned / sort <= 3``; the script records the ratio and exits 1
when it is above.  Timings on this 2-core machine are noisy (other jobs); see README.md.
"""

from __future__ import annotations

import argparse
import datetime
import json
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import calnotes  # noqa: E402
from bench_measures import make_problem  # noqa: E402

TARGET = 3.0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=50_000)
    ap.add_argument("--k", type=int, default=1_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "evaluate_results.json"))
    args = ap.parse_args(argv)
    y, P = make_problem(args.n, args.k)
    calls = {
        "sort": lambda: np.sort(P, axis=0),
        "evaluate_binned": lambda: calnotes.evaluate(P, labels=y, utility=False,
                                                     progress=False),
        "evaluate_full": lambda: calnotes.evaluate(P, labels=y, progress=False),
    }
    calnotes.evaluate(P[:2000], labels=y[:2000], utility=False, progress=False)   # warm-up
    times = {name: [] for name in calls}
    for _ in range(args.repeats):
        for name, call in calls.items():
            t = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t)
    median = {name: statistics.median(v) for name, v in times.items()}
    ratios = {name: median[name] / median["sort"] for name in calls if name != "sort"}
    result = {"date": datetime.date.today().isoformat(), "machine": platform.platform(),
              "n": args.n, "k": args.k, "repeats": args.repeats, "seconds": median,
              "all_seconds": times, "ratio_to_sort": ratios, "target_binned": TARGET,
              "calnotes": calnotes.__version__}
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    for name in calls:
        extra = f"  ({ratios[name]:.2f} x sort)" if name in ratios else ""
        print(f"{name:<16} {median[name]:8.2f} s{extra}")
    return 0 if ratios["evaluate_binned"] <= TARGET else 1


if __name__ == "__main__":
    sys.exit(main())
