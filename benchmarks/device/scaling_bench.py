"""Device timing: threaded sort vs evaluate(utility=False), best of R, one process."""
import json, os, sys, time
sys.path.insert(0, os.path.dirname(__file__))
import numpy as np
from mkprob import make_problem
from rows import problem
import calnotes
from calnotes._engine import sorted_columns as _sorted
label, which, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])  # e.g. after16 big,bin500,k10,k100 3
out = {"label": label, "calnotes": calnotes.__file__, "workers": _sorted.SORT_WORKERS,
       "affinity": len(os.sched_getaffinity(0)), "numpy": np.__version__}
def best(f, r):
    ts = []
    for _ in range(r):
        t = time.perf_counter(); f(); ts.append(time.perf_counter() - t)
    return min(ts), ts
for name in which.split(","):
    if name == "big":
        y, P = make_problem(50000, 1000)
    else:
        n, k, rnd = {"bin500": (500, 2, None), "k10": (1000, 10, 2), "k100": (10000, 100, None),
                     "bin50000": (50000, 2, None)}[name]
        P, y = problem(n, k, rnd=rnd)
    calnotes.evaluate(P[:200], labels=y[:200], utility=False, progress=False)   # warm-up
    ts = {}
    ts["sort"] = best(lambda: _sorted.sort_columns(P), reps + 2)
    ts["np_sort_1thread"] = best(lambda: np.sort(P, axis=0), 1)
    ts["evaluate_utility_off"] = best(lambda: calnotes.evaluate(P, labels=y, utility=False,
                                                               progress=False), reps)
    ts["ratio"] = ts["evaluate_utility_off"][0] / ts["sort"][0]
    out[name] = ts
    print(label, name, json.dumps(ts), flush=True)
    del P, y
json.dump(out, open(os.path.join(os.environ.get("OUT", "/tmp"), f"{label}.json"), "w"), indent=1)
