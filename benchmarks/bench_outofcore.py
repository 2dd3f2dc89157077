"""Out-of-core evaluate: 10^8 binary predictions from memory-mapped .npy files, with Dask.

    .venv/bin/python benchmarks/bench_outofcore.py [--n 100000000 --fits 10000000
                                                    --data /tmp/calnotes-ooc
                                                    --out benchmarks/outofcore_results.json]

Writes (once; reused when present) ``--n`` binary predictions ``p ~ Beta(2, 2)`` rounded to three
decimals (heavy ties: every bin boundary falls inside a tie group) with outcomes
``y ~ Bernoulli(p^1.1)``, as ``<data>/n<N>.probs.npy`` (float64) and ``.labels.npy`` (int8).
Times, in one process:

* ``calnotes.evaluate(path, labels=..., out_of_core=True)`` on a ``distributed.LocalCluster`` of
  2 worker processes (1 thread each) and on Dask's default threaded scheduler, bin counts 15, 20
  and 100 (every row: ECE, l1-QECE, l2-QECE x confidence, class-wise, binary; exact equal-mass
  bins; references);
* the floor: one read of the file and one ``np.sort`` of the predictions, in chunks (the
  predictions do not have to fit);
* on the first ``--fits`` rows (a size that fits in memory): the in-memory ``evaluate`` doing
  the same work (``significance=False, smooth_ece=False, utility=False`` and folded-normal l1
  references, ``calnotes.evaluation.entry.EXACT_L1_BUDGET = 0``) against the out-of-core path, and
  checks that they agree within the tolerances tests/test_scale.py derives from the rounding
  of the bin sums (absolute ``1e-12`` for l1 measures, ``2e-12 sqrt(value)`` for l2 measures,
  ``1e-12`` relative for the references).

Reports throughput in predictions per second per core and the ratios; writes ``--out``.  Not a
test (see benchmarks/README.md).
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

BINS = [15, 20, 100]


def write_problem(base: Path, n: int, seed: int = 0) -> None:
    probs, labels = Path(f"{base}.probs.npy"), Path(f"{base}.labels.npy")
    if probs.is_file() and labels.is_file():
        return
    rng = np.random.default_rng(seed)
    P = np.lib.format.open_memmap(f"{base}.tmp.probs.npy", mode="w+", dtype=np.float64,
                                  shape=(n,))
    Y = np.lib.format.open_memmap(f"{base}.tmp.labels.npy", mode="w+", dtype=np.int8,
                                  shape=(n,))
    step = 1 << 22
    for s in range(0, n, step):
        e = min(n, s + step)
        p = np.round(rng.beta(2, 2, size=e - s), 3)
        P[s:e] = p
        Y[s:e] = rng.random(e - s) < p ** 1.1
    P.flush()
    Y.flush()
    del P, Y
    os.replace(f"{base}.tmp.probs.npy", probs)
    os.replace(f"{base}.tmp.labels.npy", labels)


def floor_time(base: Path, n: int) -> float:
    """One read and one sort of the predictions, chunk by chunk (the out-of-core floor)."""
    start = time.perf_counter()
    mm = np.load(f"{base}.probs.npy", mmap_mode="r")
    step = 1 << 22
    for s in range(0, n, step):
        np.sort(np.array(mm[s:s + step]))
    return time.perf_counter() - start


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100_000_000)
    ap.add_argument("--fits", type=int, default=10_000_000)
    ap.add_argument("--data", type=Path, default=Path("/tmp/calnotes-ooc"))
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks" / "outofcore_results.json")
    args = ap.parse_args(argv)

    import dask
    from distributed import Client, LocalCluster

    from calnotes import evaluate

    args.data.mkdir(parents=True, exist_ok=True)
    base = args.data / f"n{args.n}"
    t_write, _ = timed(lambda: write_problem(base, args.n))
    probs, labels = f"{base}.probs.npy", f"{base}.labels.npy"
    cores = os.cpu_count() or 1
    result = {"n": args.n, "bins": BINS, "cores": cores}

    run = lambda: evaluate(probs, labels=labels, out_of_core=True, n_bins=BINS)  # noqa: E731
    with LocalCluster(n_workers=2, processes=True, threads_per_worker=1,
                      dashboard_address=None) as cluster, Client(cluster):
        t_cluster, rep_cluster = timed(run)
    with dask.config.set(scheduler="threads"):
        t_threads, rep_threads = timed(run)
    t_floor = floor_time(base, args.n)
    same = all(a["value"] == b["value"] for a, b in zip(rep_cluster.rows, rep_threads.rows))
    result.update(
        seconds_cluster=t_cluster, seconds_threads=t_threads, seconds_floor=t_floor,
        per_core_cluster=args.n / t_cluster / 2, per_core_threads=args.n / t_threads / cores,
        ratio_floor_cluster=t_cluster / t_floor, ratio_floor_threads=t_threads / t_floor,
        cluster_equals_threads=bool(same),
        rows=[{k: r[k] for k in ("measure", "aggregation", "n_bins", "value",
                                 "calibrated_reference", "reference_method")}
              for r in rep_threads.rows])

    # a size that fits: in memory against out of core, same rows
    m = args.fits
    p = np.array(np.load(probs, mmap_mode="r")[:m])
    y = np.array(np.load(labels, mmap_mode="r")[:m])
    from calnotes import evaluation
    evaluation.entry.EXACT_L1_BUDGET = 0          # folded-normal l1 references, as out of core
    t_mem, rep_mem = timed(lambda: evaluate(p, labels=y, n_bins=BINS, significance=False,
                                            smooth_ece=False, utility=False, progress=False))
    with dask.config.set(scheduler="threads"):
        t_ooc, rep_ooc = timed(lambda: evaluate(p, labels=y, n_bins=BINS, out_of_core=True))
    worst = 0.0          # largest |difference| / tolerance
    for a, b in zip(rep_mem.rows, rep_ooc.rows):
        tol = 1e-12 if a["measure"] != "l2-QECE" else 2e-12 * np.sqrt(a["value"])
        worst = max(worst, abs(a["value"] - b["value"]) / tol,
                    abs(a["calibrated_reference"] - b["calibrated_reference"])
                    / (1e-12 * a["calibrated_reference"]))
    result.update(fits=m, seconds_in_memory=t_mem, seconds_out_of_core_fits=t_ooc,
                  ratio_out_of_core_to_memory=t_ooc / t_mem, worst_difference_over_tolerance=worst)
    result.update(date=datetime.date.today().isoformat(), numpy=np.__version__,
                  dask=dask.__version__, python=platform.python_version(),
                  seconds_write_problem=t_write)

    print(f"n = {args.n:,} binary predictions, bins {BINS}, {cores} cores")
    print(f"out of core, LocalCluster(2 processes): {t_cluster:7.1f} s"
          f"  {result['per_core_cluster']:,.0f} predictions/s/core"
          f"  ({t_cluster / t_floor:.1f}x the floor)")
    print(f"out of core, threads:                  {t_threads:7.1f} s"
          f"  {result['per_core_threads']:,.0f} predictions/s/core"
          f"  ({t_threads / t_floor:.1f}x the floor)")
    print(f"floor (read + sort, chunked):          {t_floor:7.1f} s")
    print(f"n = {m:,} (fits): in memory {t_mem:.1f} s, out of core {t_ooc:.1f} s"
          f" (ratio {t_ooc / t_mem:.2f}); largest difference / tolerance {worst:.2f}")
    ok = same and worst <= 1.0
    print("PASS" if ok else "FAIL: the paths disagree")
    args.out.write_text(json.dumps(result, indent=1) + "\n")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
