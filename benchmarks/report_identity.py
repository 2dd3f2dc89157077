"""Whole evaluate reports of a fixed set of problems, as one JSON file, to compare two commits.

    PYTHONPATH=<checkout> .venv/bin/python benchmarks/report_identity.py --out A.json
    PYTHONPATH=<other>    .venv/bin/python benchmarks/report_identity.py --out B.json
    .venv/bin/python benchmarks/report_identity.py --compare A.json B.json

A change to the engine that should not change a number (a refactor, a faster path) is checked
by running this on the commit before and after: ``--compare`` lists every value, reference,
p-value and interval that differs, bit for bit, and exits 1 if any does. The problems: six
(n, k) shapes from two classes to 300, each with both tie rules (probabilities rounded to three
decimals for the tie-heavy ones), with the utility part, plus two class-wise reports with more
than 16 classes (3,000 x 300 and 1,500 x 1,000), whose null draws take another path. The
timings and the run's environment in the report are left out; everything else is compared.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

#: (n, k, decimals or None, ties): the recorded problems.
PROBLEMS = [(n, k, dec, ties)
            for n, k, dec in [(2_000, 2, None), (5_000, 2, 3), (3_000, 3, None),
                              (4_000, 5, 3), (2_000, 10, None), (1_000, 30, 2)]
            for ties in ("average", "position")]
#: (n, k): class-wise reports past 16 classes (the null's sparse path).
CLASSWISE = [(3_000, 300), (1_500, 1_000)]


def problem(n: int, k: int, decimals: int | None, seed: int = 0):
    """Over-confident predictions: softmax(2 z) against labels drawn from softmax(2 z / 1.5)."""
    rng = np.random.default_rng(seed + 1000 * k + n)
    logits = 2.0 * rng.standard_normal((n, k))
    logits -= logits.max(axis=1, keepdims=True)
    P = np.exp(logits)
    P /= P.sum(axis=1, keepdims=True)
    Q = np.exp(logits / 1.5)
    Q /= Q.sum(axis=1, keepdims=True)
    y = np.minimum((np.cumsum(Q, axis=1) < rng.random(n)[:, None]).sum(axis=1), k - 1)
    if decimals is not None:
        P = np.round(P, decimals)
        P[:, -1] = 1.0 - P[:, :-1].sum(axis=1)        # rows still sum to one
        keep = P[:, -1] >= 0
        P, y = P[keep], y[keep]
    return y, P


_VOLATILE = {"timings", "seconds", "environment", "created", "sha256", "versions", "elapsed"}


def _strip(obj):
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in _VOLATILE}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def reports() -> dict:
    import calnotes
    out = {"calnotes": str(Path(calnotes.__file__).resolve().parent)}
    for n, k, dec, ties in PROBLEMS:
        y, P = problem(n, k, dec)
        r = calnotes.evaluate(P, labels=y, ties=ties, rng=1, smooth_ece=False)
        out[f"{n}x{k} rounded={dec} ties={ties}"] = _strip(r.to_dict())
    for n, k in CLASSWISE:
        y, P = problem(n, k, None)
        r = calnotes.evaluate(P, labels=y, rng=1, utility=False, smooth_ece=False)
        out[f"{n}x{k} class-wise"] = _strip(r.to_dict())
    return out


def differences(a, b, path="") -> list:
    """Every leaf where ``a`` and ``b`` differ (floats compared bit for bit; NaN equals NaN)."""
    if isinstance(a, dict) and isinstance(b, dict):
        diffs = [f"{path}/{key}: only in one" for key in sorted(set(a) ^ set(b))]
        for key in sorted(set(a) & set(b)):
            diffs += differences(a[key], b[key], f"{path}/{key}")
        return diffs
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return [f"{path}: {len(a)} vs {len(b)} items"]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in differences(x, y, f"{path}[{i}]")]
    if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
        return []
    return [] if a == b and type(a) is type(b) else [f"{path}: {a!r} vs {b!r}"]


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, help="write the reports here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("A", "B"),
                        help="compare two files written by --out")
    args = parser.parse_args(argv)
    if args.compare:
        a, b = (json.loads(p.read_text()) for p in args.compare)
        a.pop("calnotes", None), b.pop("calnotes", None)
        diffs = differences(a, b)
        for line in diffs[:50]:
            print(line)
        print(f"{len(diffs)} difference(s) over {len(a)} reports")
        return 1 if diffs else 0
    if args.out is None:
        parser.error("give --out or --compare")
    args.out.write_text(json.dumps(reports(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
