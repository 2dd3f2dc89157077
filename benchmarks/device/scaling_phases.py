"""Wall-clock phases of evaluate(utility=False) at 50,000 x 1,000 (wrappers, main thread).

Written for the tree of its measurement (README.md here); later code no longer has every
wrapped function (NullSampler._locate is gone), so it stops at that wrap today.
"""
import os, sys, time
sys.path.insert(0, os.path.dirname(__file__))
from mkprob import make_problem
from timers import T, wrap
import calnotes
from calnotes import evaluation
from calnotes._engine import rows as _evalrows, sorted_columns as _sorted
wrap(_evalrows.Problem, "prepare", "prepare (sort, locate)")
wrap(_evalrows, "reference", "references (H1)")
wrap(_evalrows, "_monte_carlo", "monte carlo null")
wrap(_evalrows.NullSampler, "outcomes", "  mc: outcomes (labels + locate)")
wrap(_evalrows.NullSampler, "_locate", "  mc:   locate")
wrap(_evalrows, "_bootstrap", "bootstrap")
wrap(_evalrows, "canonical_order", "canonical order")
wrap(_evalrows, "binned_rows", "binned_rows total")
wrap(_sorted.SortedColumns, "plan", "plans (built or cached)")
wrap(_evalrows, "exact_tail_bounds", "exact p-values (significance)")
wrap(_evalrows, "_single_pmfs", "single pmfs (H1)")
n, k = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (50000, 1000)
y, P = make_problem(n, k)
calnotes.evaluate(P[:200], labels=y[:200], utility=False, progress=False)
T.clear()
t = time.perf_counter()
calnotes.evaluate(P, labels=y, utility=False, progress=False)
total = time.perf_counter() - t
t = time.perf_counter(); _sorted.sort_columns(P); s = time.perf_counter() - t
print(f"workers {_sorted.SORT_WORKERS}  evaluate {total:.3f}s  threaded sort {s:.4f}s")
for key, v in T.items():
    print(f"  {key:40s} {v:.3f}")
