"""What fresh memory costs on this machine (benchmarks/README.md, "Fresh memory").

    .venv/bin/python benchmarks/bench_fresh_memory.py [--idle 4] [--rounds 3] [--out FILE]

The grid's floor (``bench_grid.py``) is the best of repeated threaded sorts of the same
matrix: each call gets the 400 MB its predecessor just freed.  A report allocates its arrays
once, from memory that has been free for a while.  This times both situations for the same
two calls, ``np.ones`` of a 50,000 x 1,000 float64 matrix and the floor itself
(``calnotes._engine.sorted_columns.sort_columns`` of ``bench_grid.make_problem(50000, 1000)``):

* ``hot``: right after three allocations of the same size were made and freed;
* ``idle``: after the process slept ``--idle`` seconds (Linux's free page reporting, where a
  virtual machine's balloon device uses it, hands pages free for 2 s back to the host, and the
  next touch faults on the host too).

Each with the wall time and the process's user and system CPU seconds (all threads), under
NumPy's default transparent-hugepage advice and without it (``_set_madvise_hugepage(False)``,
the switch behind ``NUMPY_MADVISE_HUGEPAGE=0``).  Writes ``--out`` (default
``benchmarks/fresh_memory_results.json``).
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def timed(call) -> dict:
    """Wall seconds and user/system CPU seconds of ``call()``."""
    before = resource.getrusage(resource.RUSAGE_SELF)
    t = time.perf_counter()
    call()
    wall = time.perf_counter() - t
    after = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall": wall, "user": after.ru_utime - before.ru_utime,
            "sys": after.ru_stime - before.ru_stime,
            "minor_faults": after.ru_minflt - before.ru_minflt}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--idle", type=float, default=4.0)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--out", default=str(ROOT / "benchmarks" / "fresh_memory_results.json"))
    args = ap.parse_args(argv)

    sys.path.insert(0, str(ROOT))
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import numpy as np
    from numpy._core.multiarray import _set_madvise_hugepage

    from bench_grid import machine_info, make_problem
    from calnotes._engine.sorted_columns import sort_columns

    y, P = make_problem(50000, 1000)
    calls = {"ones_400MB": lambda: np.ones(P.shape),
             "floor_sort_columns": lambda: sort_columns(P)}
    results = []
    for hugepages in (True, False):
        _set_madvise_hugepage(hugepages)
        for rnd in range(args.rounds):
            for name, call in calls.items():
                for _ in range(3):                  # the same size made and freed
                    np.ones(P.shape)
                hot = timed(call)
                time.sleep(args.idle)
                idle = timed(call)
                results.append({"hugepages": hugepages, "round": rnd, "call": name,
                                "hot": hot, "idle": idle})
                print(f"hugepages={hugepages!s:5} {name:<20} hot {hot['wall']:.3f} s"
                      f" (sys {hot['sys']:.3f})  after {args.idle:g} s idle"
                      f" {idle['wall']:.3f} s (sys {idle['sys']:.3f})", flush=True)
    _set_madvise_hugepage(True)
    summary = {}
    for r in results:
        key = f"{r['call']}, hugepages={r['hugepages']}"
        s = summary.setdefault(key, {"hot_wall": [], "idle_wall": [], "hot_sys": [],
                                     "idle_sys": []})
        for when in ("hot", "idle"):
            s[f"{when}_wall"].append(r[when]["wall"])
            s[f"{when}_sys"].append(r[when]["sys"])
    summary = {k: {f: [min(v), max(v)] for f, v in s.items()} for k, s in summary.items()}
    out = {"benchmark": "bench_fresh_memory", "idle_seconds": args.idle,
           "machine": machine_info(), "numpy": np.__version__,
           "python": platform.python_version(), "results": results,
           "summary_min_max": summary}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
