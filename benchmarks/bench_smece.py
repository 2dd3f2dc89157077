"""SmoothECE: calnotes against relplot on 10^6 binary predictions, in one process.

    .venv/bin/python benchmarks/bench_smece.py [--n 1000000 --repeats 3
                                                --out benchmarks/smece_results.json]

Both libraries compute the SmoothECE of Blasiok & Nakkiran (2023) (reflected Gaussian kernel):
at the fixed bandwidth sigma = 0.05 and with the automatic fixed-point bandwidth.  Reported: the
best of ``--repeats`` round-robin timings, the ratios relplot / calnotes and calnotes / floor
(the floor: one ``np.sort`` of the ``n`` predictions), both values and their difference.  The
values differ by relplot's discretisation error (its kernel window, rectangle rule and data
rounding; tests/test_kernel.py derives the bound and checks that calnotes is the closer one to a
quadrature reference).  Exits non-zero when calnotes is not faster than relplot.  Not part of the
tests; see benchmarks/README.md.
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

from calnotes.core.kernel import smooth_ece  # noqa: E402


def problem(n: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    f = rng.beta(2, 2, size=n)
    # E[y | f] = f + 0.1 sin(2 pi f), in [0, 1]: under-confident below 1/2, over-confident
    # above, so the smoothed residual changes sign.  (A one-signed residual, e.g. E[y | f] =
    # f^1.3, would make every smECE_sigma equal |mean(y - f)| and hide the kernel's work.)
    y = (rng.random(n) < f + 0.1 * np.sin(2 * np.pi * f)).astype(np.int64)
    return y, f


def best_of(fn, repeats):
    times, value = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        value = fn()
        times.append(time.perf_counter() - start)
    return min(times), value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=1_000_000)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="n = 10^5")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "smece_results.json")
    args = ap.parse_args(argv)
    import relplot

    n = 100_000 if args.quick else args.n
    y, f = problem(n)
    floor, _ = best_of(lambda: np.sort(f), args.repeats)
    rows = []
    for label, ours, theirs in (
            ("sigma = 0.05", lambda: smooth_ece(y, f, bandwidth=0.05),
             lambda: float(relplot.smECE_sigma(f, y, 0.05))),
            ("fixed-point sigma", lambda: smooth_ece(y, f, return_bandwidth=True),
             lambda: relplot.smECE(f, y, return_width=True))):
        ours(), theirs()                                      # warm up
        t_ours, v_ours = best_of(ours, args.repeats)
        t_theirs, v_theirs = best_of(theirs, args.repeats)
        value_ours = v_ours[0] if isinstance(v_ours, tuple) else v_ours
        value_theirs = float(v_theirs[0]) if isinstance(v_theirs, tuple) else v_theirs
        rows.append({
            "computation": label,
            "calnotes_seconds": t_ours, "relplot_seconds": t_theirs,
            "relplot_over_calnotes": t_theirs / t_ours, "calnotes_over_floor": t_ours / floor,
            "calnotes_value": float(value_ours), "relplot_value": value_theirs,
            "difference": float(value_ours) - value_theirs,
            "calnotes_sigma": float(v_ours[1]) if isinstance(v_ours, tuple) else 0.05,
            "relplot_sigma": float(v_theirs[1]) if isinstance(v_theirs, tuple) else 0.05,
        })
    results = {
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(),
        "problem": {"n": n, "repeats": args.repeats, "floor_seconds": floor},
        "machine": {"python": platform.python_version(), "numpy": np.__version__,
                    "relplot": getattr(relplot, "__version__", "unknown"),
                    "cpu_count": os.cpu_count(), "platform": platform.platform()},
        "rows": rows,
    }
    args.out.write_text(json.dumps(results, indent=2) + "\n")
    for r in rows:
        print(f"{r['computation']:18s} calnotes {r['calnotes_seconds']:.3f} s  relplot"
              f" {r['relplot_seconds']:.3f} s  ratio {r['relplot_over_calnotes']:.1f}  values"
              f" {r['calnotes_value']:.6f} / {r['relplot_value']:.6f}")
    return 0 if all(r["relplot_over_calnotes"] > 1 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
