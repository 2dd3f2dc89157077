"""Record every binned row of evaluate() on the 4 problems, both tie rules."""
import json, sys, time
import numpy as np
import calnotes

def problem(n, k, seed=0, rnd=None):
    rng = np.random.default_rng(seed)
    z = 2 * rng.standard_normal((n, k))
    P = np.exp(z - z.max(1, keepdims=True)); P /= P.sum(1, keepdims=True)
    if rnd is not None:
        P = np.round(P, rnd)
        P[:, -1] = np.clip(1 - P[:, :-1].sum(1), 0, 1)   # keep rows summing to 1
        P = np.round(P, 10)
        P /= P.sum(1, keepdims=True)
    y = (P.cumsum(1) < rng.random(n)[:, None]).sum(1).clip(0, k - 1)
    return P, y

PROBLEMS = {"bin500": (500, 2, None), "bin50000": (50000, 2, None),
            "k10_ties": (1000, 10, 2), "k100": (10000, 100, None)}
KEYS = ("value", "calibrated_reference", "reference_method", "p_value", "p_value_lower",
        "p_value_method", "ci_lower", "ci_upper", "ci_note")
def main():
    out = {}
    names = sys.argv[2:] or list(PROBLEMS)
    for name in names:
        n, k, rnd = PROBLEMS[name]
        P, y = problem(n, k, rnd=rnd)
        for ties in ("average", "position"):
            t = time.perf_counter()
            rep = calnotes.evaluate(P, labels=y, utility=False, smooth_ece=False, ties=ties,
                                    progress=False)
            dt = time.perf_counter() - t
            rows = [{**{"key": f"{r['measure']}|{r['aggregation']}|{r['n_bins']}"},
                     **{k_: r.get(k_) for k_ in KEYS}} for r in rep.rows]
            out[f"{name}|{ties}"] = {"rows": rows, "notes": rep.notes, "time": dt}
            print(name, ties, f"{dt:.2f}s", len(rows), flush=True)
    json.dump(out, open(sys.argv[1], "w"), indent=1)

if __name__ == '__main__':
    main()
