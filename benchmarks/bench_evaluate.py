"""`calnotes.evaluate` on the 50,000 x 1,000 problem of bench_measures.py, against the floor.

    .venv/bin/python benchmarks/bench_evaluate.py [--n 50000 --k 1000 --repeats 3
                                                   --out benchmarks/evaluate_results.json]

The floor is one ``np.sort(P, axis=0)`` of the same matrix (NumPy: one thread).  Timed in one
process after an untimed warm-up call on the first rows, round-robin over the three calls,
``--repeats`` times each:

* ``sort``: ``np.sort(P, axis=0)``;
* ``evaluate_binned``: every default binned row (3 bin counts x ECE, l1-QECE, l2-QECE x
  confidence, class-wise), their calibrated references, p-values (exact or 200 Monte Carlo
  draws) and bootstrap intervals, SmoothECE, the proper losses -- no utility calibration
  (``utility=False``): the speed target;
* ``evaluate_full``: the same plus utility calibration (U_TCE, U_CWE, U_topK and 500 + 500
  sampled utilities), i.e. ``calnotes evaluate`` with its defaults (information only).

Reported: the best (minimum) of the repeats of each call -- the least disturbed by the other
jobs of a shared machine -- and the ratio of the bests; the medians and every timing are
recorded too, with the load average before and after.  The target is
``evaluate_binned / sort <= 3`` (best of runs); the script exits 1 when it is above.  Both
calls allocate fresh memory: the first touch of pages a process has not used before is slow
on this VM (0.9 s for 400 MB), which is why the first repeat is often the slowest.  See
README.md.
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
    load_before = os.getloadavg()
    calnotes.evaluate(P[:2000], labels=y[:2000], progress=False)                  # warm-up
    times = {name: [] for name in calls}
    for _ in range(args.repeats):
        for name, call in calls.items():
            t = time.perf_counter()
            call()
            times[name].append(time.perf_counter() - t)
    load_after = os.getloadavg()
    best = {name: min(v) for name, v in times.items()}
    median = {name: statistics.median(v) for name, v in times.items()}
    ratios = {name: best[name] / best["sort"] for name in calls if name != "sort"}
    ratios_median = {name: median[name] / median["sort"] for name in calls if name != "sort"}
    result = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "problem": {"n": args.n, "k": args.k, "repeats": args.repeats,
                    "bins": list(calnotes.evaluation.DEFAULT_BINS),
                    "draws": calnotes._engine.significance.DEFAULT_DRAWS,
                    "bootstrap": calnotes._engine.significance.DEFAULT_BOOTSTRAP},
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "cpu_count": os.cpu_count(), "platform": platform.platform(),
                    "load_average_before": list(load_before),
                    "load_average_after": list(load_after)},
        "seconds_best": best, "seconds_median": median, "all_seconds": times,
        "ratio_to_sort": ratios, "ratio_to_sort_median": ratios_median,
        "target_binned": TARGET, "pass": ratios["evaluate_binned"] <= TARGET,
        "calnotes": calnotes.__version__,
    }
    Path(args.out).write_text(json.dumps(result, indent=2) + "\n")
    for name in calls:
        extra = (f"  ({ratios[name]:.2f} x sort; medians {ratios_median[name]:.2f})"
                 if name in ratios else "")
        runs = ", ".join(f"{t:.2f}" for t in times[name])
        print(f"{name:<16} best {best[name]:6.2f} s  [{runs}]{extra}")
    verdict = "PASS" if result["pass"] else "FAIL"
    print(f"{verdict}: evaluate (utility=False) / sort = {ratios['evaluate_binned']:.2f}"
          f" (target <= {TARGET:g}); load average {load_before[0]:.2f} -> {load_after[0]:.2f}")
    return 0 if result["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
