"""Timing of the Table 1 expectations (paper 000, Sec. 4) at one grid point.

    .venv/bin/python benchmarks/bench_table1.py [--k 10 --n 2000 --m 20 --draws 2000
                                                 --reference-draws 40 --repeats 3]

Times, for the 16 cells of Table 1 (4 predictors x 4 measures):

* ``expected_table1(..., method="fast")``: the Rao-Blackwellized estimate the chapter uses --
  ``--draws`` feature draws, the exact conditional expectation given each draw (class counts,
  vectorised over draws), standard errors over the draws.  Acceptance: under 20 s.
* ``exact_table1``: every cell exactly (sum over the law of the class counts), no draws.
* ``expected_table1(..., method="reference")``: one ``calnotes.core.expectation.expected_qece``
  call per draw and cell, on ``--reference-draws`` draws, extrapolated to ``--draws``.
* ``simulate_table1``: plain Monte Carlo (features and outcomes drawn, the measures evaluated),
  on ``--reference-draws`` replications, extrapolated.

Also checks that the fast and reference paths give the same per-draw values (rtol 1e-12) and
that the exact values are within 4 standard errors of the fast estimate.  Exit status 1 if a
check fails.  Median of ``--repeats`` runs (the exact values are cached after the first call,
so ``exact_table1`` is timed on a cold cache each time).
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # time the calnotes of this checkout

from calnotes.theory import table1 as t1  # noqa: E402

BUDGET = 20.0  # seconds: acceptance bound for the default grid point


def timed(fn, repeats):
    times, result = [], None
    for _ in range(repeats):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--m", type=int, default=20)
    parser.add_argument("--eps", type=float, nargs=3, default=(0.1, 0.02, 0.003),
                        metavar=("EPS1", "EPS2", "EPS3"))
    parser.add_argument("--draws", type=int, default=2000)
    parser.add_argument("--reference-draws", type=int, default=40)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    params = (args.k, args.n, args.m, *args.eps)

    t1.printed_table1(*params)  # warm up: imports, sympy closed forms (not part of any timing)
    fast_s, fast = timed(lambda: t1.expected_table1(*params, n_draws=args.draws, rng=0),
                         args.repeats)

    def cold_exact():
        t1._exact_cells.cache_clear()
        return t1.exact_table1(*params)

    exact_s, exact = timed(cold_exact, args.repeats)
    r = args.reference_draws
    ref_s, ref = timed(lambda: t1.expected_table1(*params, n_draws=r, rng=1,
                                                  method="reference"), 1)
    fast_small = t1.expected_table1(*params, n_draws=r, rng=1)
    sim_s, _ = timed(lambda: t1.simulate_table1(*params, n_reps=r, rng=2), 1)

    scale = args.draws / r
    print(f"# Table 1 expectations: k={args.k}, n={args.n}, m={args.m},"
          f" eps={tuple(args.eps)}, {args.draws} draws\n")
    print(f"{platform.python_version()} / numpy {np.__version__} / {os.cpu_count()} CPUs;"
          f" median of {args.repeats}\n")
    print("| method | what | seconds |")
    print("|---|---|---|")
    print(f"| expected_table1, fast | {args.draws} feature draws, RB | {fast_s:.3f} |")
    print(f"| exact_table1 | no sampling | {exact_s:.3f} |")
    print(f"| expected_table1, reference | {r} draws x 16 expected_qece calls, "
          f"x{scale:.0f} | {ref_s * scale:.1f} (extrapolated) |")
    print(f"| simulate_table1 | {r} replications, x{scale:.0f} | {sim_s * scale:.1f}"
          f" (extrapolated) |")

    checks = []
    same = all(np.allclose(fast_small.values[c], ref.values[c], rtol=1e-12, atol=0)
               for c in fast_small.values)
    checks.append((same, "fast and reference per-draw values agree (rtol 1e-12)"))
    z = max(abs(fast.z_score(c, exact.mean[c])) for c in t1.CELLS)
    checks.append((z < 4, f"exact within 4 SE of the {args.draws}-draw estimate (max |z| {z:.2f})"))
    default = params == (10, 2000, 20, 0.1, 0.02, 0.003) and args.draws == 2000
    if default:
        checks.append((fast_s < BUDGET, f"default grid point under {BUDGET:.0f} s:"
                                        f" {fast_s:.3f} s"))
    print()
    for ok, text in checks:
        print(f"- {'PASS' if ok else 'FAIL'}: {text}")
    return 0 if all(ok for ok, _ in checks) else 1


if __name__ == "__main__":
    sys.exit(main())
