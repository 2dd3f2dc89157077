"""Each part of the default report at 1, 2, 4, 8 and 16 threads, and with calnotes' own
thread rule (:func:`calnotes._engine.sorted_columns.threads_for`), on a many-core host, in one process per
point (best of ``--repeats``, after a warm-up on the same matrix).

    PYTHONPATH=. python3 benchmarks/device/thread_sweep.py --out sweep.json [--budget S]

Configurations per point: ``rule@T`` (the thread counts calnotes chooses, at most T) and
``all@T`` (every part that can be split is split across T threads: the units of the rule
set to one).  The parts are the report's own ``timings`` (binned rows, references, p-values,
intervals, utility) and the wall time of the three threaded steps of the binned rows
(``_monte_carlo``, ``_bootstrap``, ``_exact_p_values``).  Every configuration's report, its
timings removed, is compared with the first one's: the numbers must not depend on threads
(``identical`` in the output).  The JSON is rewritten after every configuration, so a run
stopped by ``--budget`` or a time limit keeps what it measured.
"""
import argparse
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", ".."))

import numpy as np  # noqa: E402

import calnotes  # noqa: E402
from calnotes import evaluation  # noqa: E402
from calnotes._engine import rows as _evalrows, sorted_columns as _sorted
from bench_grid import make_problem, parse_point  # noqa: E402
from timers import T as STEPS, wrap  # noqa: E402

POINTS = "10000x2,500x2,10000x10,50000x2,10000x2:ties,10000x100"
CONFIGS = "rule@16,all@16,all@2,all@1,all@4,all@8,rule@2"
UNITS = {(evaluation, "_UC_THREAD_WORK"), (_evalrows, "_MIN_THREAD_WORK"),
         (_evalrows, "_EXACT_THREAD_ROWS")}
DEFAULTS = {(mod, name): getattr(mod, name) for mod, name in UNITS}


for step in ("_monte_carlo", "_bootstrap", "_exact_p_values"):
    wrap(_evalrows, step, step)


def configure(text):
    mode, threads = text.split("@")
    threads = int(threads)
    for mod in (_sorted, _evalrows):
        mod.SORT_WORKERS = threads
    evaluation.utility_part._UC_WORKERS = threads
    for (mod, name), value in DEFAULTS.items():
        setattr(mod, name, 1 if mode == "all" else value)


def untimed(report):
    data = json.loads(report.to_json())
    data.pop("timings")
    return json.dumps(data, sort_keys=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", default=POINTS)
    ap.add_argument("--configs", default=CONFIGS)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--budget", type=float, default=1e9)
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    start = time.monotonic()
    result = {"cpus": os.cpu_count(), "numpy": np.__version__, "python": sys.version.split()[0],
              "units": {f"{mod.__name__}.{name}": v for (mod, name), v in DEFAULTS.items()},
              "points": []}
    for text in args.points.split(","):
        p = parse_point(text)
        y, P = make_problem(p["n"], p["k"], ties=p["ties"])
        configure("rule@16")
        calnotes.evaluate(P, labels=y, progress=False)           # warm-up
        entry = {"point": p["id"], "configs": []}
        result["points"].append(entry)
        first = None
        for cfg in args.configs.split(","):
            if time.monotonic() - start > args.budget:
                entry["configs"].append({"config": cfg, "skipped": "budget"})
                continue
            configure(cfg)
            best = None
            for _ in range(args.repeats):
                STEPS.clear()
                t = time.perf_counter()
                report = calnotes.evaluate(P, labels=y, progress=False)
                total = time.perf_counter() - t
                parts = dict(report.timings, **STEPS, wall=total)
                if best is None or total < best["wall"]:
                    best = parts
            text_now = untimed(report)
            first = first or text_now
            row = {"config": cfg, "identical": text_now == first,
                   "seconds": {a: round(v, 4) for a, v in best.items()}}
            entry["configs"].append(row)
            print(f"{p['id']:<16} {cfg:<8} wall {best['wall']:.3f} s  "
                  + " ".join(f"{a} {v:.3f}" for a, v in best.items()
                             if a not in ("wall", "total") and v >= 0.01)
                  + ("" if row["identical"] else "  NOT IDENTICAL"), flush=True)
            with open(args.out + ".tmp", "w") as f:
                json.dump(result, f, indent=1)
            os.replace(args.out + ".tmp", args.out)
    print(f"thread_sweep: done in {time.monotonic() - start:.0f} s")


if __name__ == "__main__":
    main()
