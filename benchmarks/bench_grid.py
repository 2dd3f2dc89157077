"""Speed at every size: `calnotes.evaluate` on a grid of sizes, each point
against its floor, the threaded column sort of the same matrix on the same threads.

    .venv/bin/python benchmarks/bench_grid.py [--points 50000x1000,500x2 --repeats 3
                                               --threads T --large --budget S --out FILE]
    .venv/bin/python benchmarks/bench_grid.py --quick          # small points: a smoke check
    .venv/bin/python benchmarks/bench_grid.py --list           # the points and the skipped ones

The grid: n in {500, 10^4, 10^5, 10^6} x k in {2, 10, 100, 1000}, where the float64 matrix
fits (n k <= 10^8; n k = 10^8, 800 MB, only with ``--large``), plus the named target point
50,000 x 1,000 (run first), two points with the bin count close to n (``200000x2:m200000``
and ``10000x10:m5000``), ``50000x2`` (the most rows at which the
one-second target of n k <= 10^5 applies) and five tie-heavy variants (``:ties``, the
probabilities rounded to two decimals, as predictions exported to a CSV often are; the
one-second target applies to them too). A point is written ``NxK[:mM][:ties]``.

Every point runs in a fresh Python process (so that its peak memory is its own), which
times, round-robin, ``--repeats`` times each:

* ``floor``: ``calnotes._engine.sorted_columns.sort_columns(P, workers=T)``, the threaded sort of every
  column (a call under 20 ms is repeated in a loop and the mean taken);
* ``utility_off``: ``calnotes.evaluate(P, labels=y, utility=False, progress=False)``;
* ``full``: ``calnotes.evaluate(P, labels=y, progress=False)``, the full default report
  (every row, reference, p-value, interval, SmoothECE and utility calibration);
* ``bare`` (the ``:m`` points and 10^6 x 2): ``utility=False, significance=False``, the call
  with m close to n, and the memory comparison with and without significance (the full
  report should not need five times the memory of the bare one).

after five untimed floor calls (which fix its loop count) and one untimed warm-up
``evaluate`` on the first ``min(200, n // 2)`` rows. A call slower than ``--slow`` seconds is
not repeated. Reported: the best of the repeats, the ratio of the bests to the floor's, the
load average before and after, the user and system CPU seconds of every call (all threads,
``getrusage``: the system time is chiefly page faults, the zeroing of fresh memory, whose cost
varies with the host -- benchmarks/README.md, "Fresh memory"; the transparent-hugepage
settings are recorded with the machine), and the peak memory of each call: the process's
peak resident set size (``ru_maxrss``) read after the untimed floor calls, then after the
first call of each kind in the order bare, utility_off, full, minus the resident size before
the call (for the floor, once the data were built; for ``evaluate``, after the warm-up:
modules loaded), so it counts what the call allocates beyond the input.
``ru_maxrss`` is a running maximum: a call's peak is exact where it exceeds the peaks before it
(the warm-up's included), else an upper bound (marked; at the small points the warm-up's own
transient, ~100 MB, hides the calls').

Threads: ``--threads T`` sets, before NumPy is imported, ``OMP_NUM_THREADS``,
``OPENBLAS_NUM_THREADS``, ``MKL_NUM_THREADS`` and ``CALNOTES_THREADS`` (read by calnotes
where supported) to T, and after import every module-level integer ``*WORKERS`` of the loaded
calnotes modules (today ``_sorted.SORT_WORKERS``, its copy in ``_evalrows``,
``evaluation.utility_part._UC_WORKERS`` and ``poisson_binomial.FFT_WORKERS``; again after the warm-up, for
modules imported lazily) and the floor's ``workers``; without it the library's defaults are
used and the floor gets ``_sorted.SORT_WORKERS``. The settings read back are recorded.

Targets (printed PASS/FAIL, recorded): the full report at most 1 s where n k <= 10^5 (stated
for two cores); at 50,000 x 1,000 ``utility_off`` at most 3x and ``full`` at
most 5x the floor. Writes ``--out`` (default ``benchmarks/grid_results_<cpus>cores.json``,
``..._t<T>.json`` when T differs from the CPU count) after every point, and exits 1 when a
target fails or a point does not finish. See benchmarks/README.md, "Speed at every size".
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

N_VALUES = (500, 10_000, 100_000, 1_000_000)
K_VALUES = (2, 10, 100, 1000)
NAMED = "50000x1000"                 # the named target point
EXTRA = ("200000x2:m200000", "10000x10:m5000", "50000x2", "10000x2:ties", "10000x10:ties",
         "50000x2:ties", "100000x2:ties", "10000x100:ties")
QUICK = ("500x2", "500x10", "10000x2", "2000x2:m1000", "2000x10:ties")
MAX_ENTRIES = 10 ** 8                # n k above this: 8 GB or more, skipped
SMALL_ENTRIES = 10 ** 5              # the 1-second target applies up to here
SMALL_SECONDS = 1.0
RATIO_UTILITY_OFF = 3.0
RATIO_FULL = 5.0
FLOOR_MIN_SECONDS = 0.02             # a faster floor is timed in a loop
WARMUP_ROWS = 200
BARE_BINARY_ROWS = 10 ** 6           # binary points this large also time significance=False
THREAD_ENV = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS",
              "VECLIB_MAXIMUM_THREADS", "NUMEXPR_NUM_THREADS", "CALNOTES_THREADS")
SCALE, TEMPERATURE = 5.0, 1.5        # as bench_measures.make_problem


# ----------------------------------------------------------------------------- points

def parse_point(text: str) -> dict:
    """``"NxK[:mM][:ties]"`` -> the point's description (bins None: calnotes' defaults)."""
    parts = text.strip().split(":")
    try:
        n, k = (int(float(v)) for v in parts[0].lower().split("x"))
    except ValueError:
        raise SystemExit(f"--points: {text!r} is not NxK[:mM][:ties]") from None
    point = {"id": None, "n": n, "k": k, "bins": None, "ties": False}
    for extra in parts[1:]:
        if extra == "ties":
            point["ties"] = True
        elif extra.startswith("m") and extra[1:].isdigit():
            point["bins"] = int(extra[1:])
        else:
            raise SystemExit(f"--points: {text!r}: unknown part {extra!r}"
                             " (expected mM or ties)")
    if n < 2 or k < 2:
        raise SystemExit(f"--points: {text!r}: need n >= 2 and k >= 2")
    point["id"] = point_id(point)
    point["entries"] = n * k
    point["matrix_bytes"] = 8 * n * k
    return point


def point_id(p: dict) -> str:
    return (f"{p['n']}x{p['k']}" + (f":m{p['bins']}" if p["bins"] else "")
            + (":ties" if p["ties"] else ""))


def default_points(large: bool) -> tuple[list, list]:
    """The grid, the named point first, then by size; and the skipped points with reasons."""
    run, skipped = [], []
    grid = [parse_point(f"{n}x{k}") for n in N_VALUES for k in K_VALUES]
    for p in grid + [parse_point(e) for e in EXTRA]:
        if p["entries"] > MAX_ENTRIES:
            skipped.append({"point": p["id"], "reason":
                            f"n x k x 8 bytes = {p['matrix_bytes'] / 1e9:.0f} GB: the matrix"
                            " alone exceeds the memory the grid allows (n k <= 10^8)"})
        elif p["entries"] == MAX_ENTRIES and not large:
            skipped.append({"point": p["id"], "reason":
                            f"{p['matrix_bytes'] / 1e6:.0f} MB matrix, minutes per report:"
                            " only with --large"})
        else:
            run.append(p)
    run.sort(key=lambda p: (p["entries"], p["bins"] or 0, p["ties"]))
    return [parse_point(NAMED)] + run, skipped


# ------------------------------------------------------------------ the worker process

def make_problem(n, k, seed=0, scale=SCALE, temperature=TEMPERATURE, ties=False):
    """``bench_measures.make_problem`` built in row blocks (peak memory: ``P`` plus one
    block, so that the build does not set the process's peak): the same normal draws in the
    same order, then the same uniforms; the label law ``softmax(scale z / T)`` is
    ``P ** (1 / T)`` renormalized. ``ties``: ``P`` rounded to two decimals, each row's largest
    entry set to one minus the others (rows still sum to one; most entries tie)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    P = np.empty((n, k))
    block = max(1, (1 << 22) // k)
    for lo in range(0, n, block):
        z = rng.standard_normal((min(block, n - lo), k))
        z *= scale
        z -= z.max(axis=1, keepdims=True)
        np.exp(z, out=z)
        z /= z.sum(axis=1, keepdims=True)
        P[lo:lo + len(z)] = z
    u = rng.random(n)
    y = np.empty(n, dtype=np.int64)
    for lo in range(0, n, block):
        Q = P[lo:lo + block] ** (1.0 / temperature)
        Q /= Q.sum(axis=1, keepdims=True)
        np.cumsum(Q, axis=1, out=Q)
        y[lo:lo + len(Q)] = np.minimum((Q < u[lo:lo + len(Q), None]).sum(axis=1), k - 1)
    if ties:
        for lo in range(0, n, block):
            R = np.round(P[lo:lo + block], 2)
            top = R.argmax(axis=1)
            rows = np.arange(len(R))
            R[rows, top] = 0.0
            R[rows, top] = np.clip(1.0 - R.sum(axis=1), 0.0, 1.0)
            P[lo:lo + len(R)] = R
    return y, P


def rss_bytes() -> int:
    """Current resident set size (Linux /proc; 0 elsewhere)."""
    try:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def peak_rss_bytes() -> int:
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak if sys.platform == "darwin" else peak * 1024


def apply_threads(threads):
    """Set every calnotes worker count to ``threads`` (None: leave the defaults); return
    the settings read back and the floor's worker count."""
    import calnotes

    settings = {}
    setter = getattr(calnotes, "set_threads", None)
    if threads is not None and callable(setter):
        setter(threads)
        settings["calnotes.set_threads"] = threads
    for name, module in sorted(sys.modules.items()):
        if not (name == "calnotes" or name.startswith("calnotes.")) or module is None:
            continue
        for attr, value in sorted(vars(module).items()):
            if attr.endswith("WORKERS") and isinstance(value, int) \
                    and not isinstance(value, bool):
                if threads is not None:
                    setattr(module, attr, threads)
                settings[f"{name}.{attr}"] = getattr(module, attr)
    floor_workers = threads if threads is not None else calnotes._engine.sorted_columns.SORT_WORKERS
    return settings, floor_workers


def run_worker(spec: dict) -> dict:
    """One point in this (fresh) process; writes partial results to ``spec['state']``."""
    import resource

    import numpy as np

    import calnotes
    from calnotes._engine.sorted_columns import sort_columns

    settings, workers = apply_threads(spec["threads"])
    p = spec["point"]
    state_path = Path(spec["state"])
    out = {"point": p["id"], "numpy": np.__version__, "calnotes": calnotes.__version__,
           "python": platform.python_version(), "thread_settings": settings,
           "floor_workers": workers, "status": "running", "seconds": {}, "cpu_seconds": {},
           "floor_loops": 1,
           "peak_rss_bytes": {}, "peak_extra_bytes": {}, "peak_exact": {},
           "not_repeated": []}

    def save():
        state_path.write_text(json.dumps(out))

    t0 = time.perf_counter()
    y, P = make_problem(p["n"], p["k"], ties=p["ties"])
    out["build_seconds"] = time.perf_counter() - t0
    if p["ties"]:
        out["distinct_values_per_column"] = float(np.mean(
            [np.unique(P[:, j]).size for j in range(min(p["k"], 20))]))
    bins = {} if p["bins"] is None else {"n_bins": [p["bins"]]}
    out["base_rss_bytes"] = rss_bytes()
    out["base_peak_rss_bytes"] = peak_rss_bytes()

    def floor():
        return sort_columns(P, workers=workers)

    # The floor's memory, before anything else runs; its loop count from the fastest of 5.
    fastest = math.inf
    for _ in range(5):
        t = time.perf_counter()
        floor()
        fastest = min(fastest, time.perf_counter() - t)
    peak = peak_rss_bytes()
    out["peak_rss_bytes"]["floor"] = peak
    out["peak_extra_bytes"]["floor"] = max(0, peak - out["base_rss_bytes"])
    out["peak_exact"]["floor"] = peak > out["base_peak_rss_bytes"]
    loops = 1
    if fastest < FLOOR_MIN_SECONDS:
        loops = min(1000, math.ceil(FLOOR_MIN_SECONDS / max(fastest, 1e-6)))
    out["floor_loops"] = loops
    w = max(2, min(WARMUP_ROWS, p["n"] // 2))
    t0 = time.perf_counter()
    calnotes.evaluate(P[:w], labels=y[:w], progress=False, **bins)
    out["warmup_seconds"] = time.perf_counter() - t0
    out["warmup_rows"] = w
    out["warmup_peak_extra_bytes"] = max(0, peak_rss_bytes() - out["base_rss_bytes"])
    out["rest_rss_bytes"] = rss_bytes()       # modules loaded, caches warm: the calls' base
    # again, for the modules the warm-up imported lazily
    out["thread_settings"], _ = apply_threads(spec["threads"])
    save()

    calls = {"floor": floor}
    if p["bins"] is not None or (p["k"] == 2 and p["n"] >= BARE_BINARY_ROWS):
        calls["bare"] = lambda: calnotes.evaluate(P, labels=y, utility=False,
                                                  significance=False, progress=False, **bins)
    calls["utility_off"] = lambda: calnotes.evaluate(P, labels=y, utility=False,
                                                     progress=False, **bins)
    calls["full"] = lambda: calnotes.evaluate(P, labels=y, progress=False, **bins)
    for name in calls:
        out["seconds"][name] = []
        out["cpu_seconds"][name] = []
    for r in range(spec["repeats"]):
        for name, call in calls.items():
            if name in out["not_repeated"]:
                continue
            reps = loops if name == "floor" else 1
            before_cpu = resource.getrusage(resource.RUSAGE_SELF)
            t = time.perf_counter()
            for _ in range(reps):
                result = call()
            seconds = (time.perf_counter() - t) / reps
            after_cpu = resource.getrusage(resource.RUSAGE_SELF)
            del result
            out["seconds"][name].append(seconds)
            # CPU seconds of every thread, user and system (page faults: zeroing fresh
            # memory), per call
            out["cpu_seconds"][name].append(
                [(after_cpu.ru_utime - before_cpu.ru_utime) / reps,
                 (after_cpu.ru_stime - before_cpu.ru_stime) / reps])
            if r == 0 and name != "floor":
                before = max([out["base_rss_bytes"] + out["warmup_peak_extra_bytes"]]
                             + list(out["peak_rss_bytes"].values()))
                peak = peak_rss_bytes()
                out["peak_rss_bytes"][name] = peak
                out["peak_extra_bytes"][name] = max(0, peak - out["rest_rss_bytes"])
                out["peak_exact"][name] = peak > before
            if seconds > spec["slow"]:
                out["not_repeated"].append(name)
            print(f"    {p['id']:<18} {name:<12} {seconds:9.4f} s", file=sys.stderr,
                  flush=True)
            save()
    out["status"] = "ok"
    save()
    return out


# --------------------------------------------------------------------- the main process

def machine_info() -> dict:
    info = {"cpu_count": os.cpu_count(), "platform": platform.platform(),
            "python": platform.python_version(), "machine": platform.machine()}
    try:
        info["cpus_usable"] = len(os.sched_getaffinity(0))
    except AttributeError:
        info["cpus_usable"] = os.cpu_count()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu_model"] = line.split(":", 1)[1].strip()
                break
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal"):
                info["memory_bytes"] = int(line.split()[1]) * 1024
                break
    except OSError:
        pass
    # what fresh memory costs depends on these (benchmarks/README.md, "Fresh memory")
    for key, path in (("transparent_hugepage", "/sys/kernel/mm/transparent_hugepage/enabled"),
                      ("transparent_hugepage_defrag",
                       "/sys/kernel/mm/transparent_hugepage/defrag")):
        try:
            info[key] = Path(path).read_text().strip()
        except OSError:
            pass
    info["NUMPY_MADVISE_HUGEPAGE"] = os.environ.get("NUMPY_MADVISE_HUGEPAGE")
    return info


def git_commit() -> str | None:
    try:
        head = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], check=True,
                              capture_output=True, text=True, timeout=10).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "--",
                                "calnotes"], capture_output=True, text=True,
                               timeout=20).stdout.strip()
        return head + ("+uncommitted calnotes changes" if dirty else "")
    except (OSError, subprocess.SubprocessError):
        return None


def summarize(p: dict, res: dict) -> dict:
    """Best of repeats, ratios to the floor, the point's checks."""
    times = res.get("seconds", {})
    best = {name: min(v) for name, v in times.items() if v}
    ratio = {name: best[name] / best["floor"] for name in best
             if name != "floor" and "floor" in best and best["floor"] > 0}
    # user and system CPU seconds (all threads) of each best call
    cpu = {name: res["cpu_seconds"][name][v.index(min(v))]
           for name, v in times.items() if v and len(res.get("cpu_seconds", {}).get(name, []))
           == len(v)}
    checks = []
    plain = p["bins"] is None and not p["ties"]
    if p["bins"] is None and p["entries"] <= SMALL_ENTRIES:     # rounded predictions too
        checks.append({"check": "full report <= 1 s (n k <= 1e5; stated for 2 cores)",
                       "point": p["id"], "value": best.get("full"), "limit": SMALL_SECONDS,
                       "unit": "s"})
    if plain and p["id"] == NAMED:
        checks.append({"check": "utility=False <= 3x floor at 50,000 x 1,000",
                       "point": p["id"], "value": ratio.get("utility_off"),
                       "limit": RATIO_UTILITY_OFF, "unit": "x floor"})
        checks.append({"check": "full report <= 5x floor at 50,000 x 1,000",
                       "point": p["id"], "value": ratio.get("full"), "limit": RATIO_FULL,
                       "unit": "x floor"})
    for c in checks:
        c["pass"] = c["value"] is not None and c["value"] <= c["limit"]
    return {"best_seconds": best, "ratio_to_floor": ratio, "best_cpu_seconds": cpu,
            "checks": checks}


def fmt_bytes(b) -> str:
    return "" if b is None else f"{b / 2 ** 20:,.0f} MiB"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--points", help="comma-separated NxK[:mM][:ties] (default: the grid)")
    ap.add_argument("--quick", action="store_true", help="small points only: " + ", ".join(QUICK))
    ap.add_argument("--large", action="store_true", help="include n k = 10^8 (800 MB) points")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--threads", type=int, default=None,
                    help="threads for the floor and evaluate (default: calnotes' defaults)")
    ap.add_argument("--slow", type=float, default=60.0,
                    help="a call slower than this (s) is not repeated")
    ap.add_argument("--budget", type=float, default=None,
                    help="total seconds: no point starts after it, a running one is stopped")
    ap.add_argument("--point-timeout", type=float, default=None, help="seconds per point")
    ap.add_argument("--out", default=None)
    ap.add_argument("--list", action="store_true", help="print the points and exit")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)

    if args.worker:                     # the environment was set by the parent
        sys.path.insert(0, str(ROOT))
        run_worker(json.loads(args.worker))
        return 0
    if args.repeats < 1:
        ap.error("--repeats: must be at least 1")
    if args.threads is not None and args.threads < 1:
        ap.error("--threads: must be at least 1")

    points, skipped = default_points(args.large)
    if args.points or args.quick:
        texts = args.points.split(",") if args.points else QUICK
        chosen = [parse_point(t) for t in texts if t.strip()]
        ids = {p["id"] for p in chosen}
        skipped += [{"point": p["id"], "reason": "not selected (--points or --quick)"}
                    for p in points if p["id"] not in ids]
        skipped = [s for s in skipped if s["point"] not in ids]
        points = chosen
    if args.list:
        for p in points:
            print(f"run   {p['id']:<18} {fmt_bytes(p['matrix_bytes'])}")
        for s in skipped:
            print(f"skip  {s['point']:<18} {s['reason']}")
        return 0

    cpus = os.cpu_count() or 1
    suffix = "" if args.threads in (None, cpus) else f"_t{args.threads}"
    out_path = Path(args.out or ROOT / "benchmarks" / f"grid_results_{cpus}cores{suffix}.json")
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    if args.threads is not None:
        env.update({name: str(args.threads) for name in THREAD_ENV})
    result = {
        "benchmark": "bench_grid", "date": datetime.datetime.now(datetime.timezone.utc)
        .isoformat(timespec="seconds"),
        "machine": machine_info(), "commit": git_commit(), "threads": args.threads,
        "repeats": args.repeats, "slow_seconds": args.slow, "budget_seconds": args.budget,
        "memory_method": "ru_maxrss of the point's own process after the first call of each"
                         " kind (order: floor, bare, utility_off, full), minus the resident"
                         " size after the data were built; exact where it rose, else an"
                         " upper bound",
        "targets": {"small_entries": SMALL_ENTRIES, "small_seconds": SMALL_SECONDS,
                    "named_point": NAMED, "utility_off_over_floor": RATIO_UTILITY_OFF,
                    "full_over_floor": RATIO_FULL},
        "points": [], "skipped": skipped, "checks": [], "complete": False,
    }

    def write():
        out_path.parent.mkdir(parents=True, exist_ok=True)
        tmp = out_path.with_suffix(".json.tmp")
        tmp.write_text(json.dumps(result, indent=1) + "\n")
        tmp.replace(out_path)

    print(f"bench_grid: {len(points)} points, threads {args.threads or 'default'},"
          f" repeats {args.repeats}, {cpus} CPUs, load {os.getloadavg()[0]:.2f};"
          f" writing {out_path}", flush=True)
    start = time.monotonic()
    failed = False
    for i, p in enumerate(points, 1):
        left = None if args.budget is None else args.budget - (time.monotonic() - start)
        if left is not None and left < 5:
            result["skipped"].append({"point": p["id"], "reason": "--budget spent"})
            print(f"[{i}/{len(points)}] {p['id']}: skipped (budget spent)", flush=True)
            write()
            continue
        timeout = min(t for t in (left, args.point_timeout, 1e9) if t is not None)
        print(f"[{i}/{len(points)}] {p['id']} ({fmt_bytes(p['matrix_bytes'])}),"
              f" {time.monotonic() - start:.0f} s elapsed", flush=True)
        with tempfile.NamedTemporaryFile(suffix=".json", delete=False) as f:
            state = f.name
        spec = {"point": p, "threads": args.threads, "repeats": args.repeats,
                "slow": args.slow, "state": state}
        load_before = os.getloadavg()
        t0 = time.monotonic()
        try:
            proc = subprocess.run([sys.executable, str(Path(__file__).resolve()), "--worker",
                                   json.dumps(spec)], env=env, timeout=timeout,
                                  stdout=subprocess.DEVNULL)
            status = "ok" if proc.returncode == 0 else f"error (exit {proc.returncode})"
        except subprocess.TimeoutExpired:
            status = f"timeout after {timeout:.0f} s"
        wall = time.monotonic() - t0
        try:
            res = json.loads(Path(state).read_text())
        except (OSError, ValueError):
            res = {}
        Path(state).unlink(missing_ok=True)
        entry = dict(p, **res)
        entry.update(status=status, wall_seconds=wall, load_before=list(load_before),
                     load_after=list(os.getloadavg()))
        entry.update(summarize(p, res))
        result["points"].append(entry)
        result["checks"].extend(entry["checks"])
        if "numpy" in res:
            result.setdefault("numpy", res["numpy"])
            result.setdefault("calnotes", res["calnotes"])
            result.setdefault("worker_python", res["python"])
            result.setdefault("thread_settings", res["thread_settings"])
        failed |= status != "ok"
        write()
        best, ratio = entry["best_seconds"], entry["ratio_to_floor"]
        parts = [f"floor {best['floor']:.4f} s" if "floor" in best else "floor -"]
        for name in ("bare", "utility_off", "full"):
            if name in best:
                sys_s = entry.get("best_cpu_seconds", {}).get(name, [None, None])[1]
                parts.append(f"{name} {best[name]:.3f} s ({ratio.get(name, float('nan')):.1f}x"
                             + (f", sys {sys_s:.2f} s" if sys_s is not None else "") + ")")
        peak = entry.get("peak_extra_bytes", {}).get("full")
        print(f"    {status}; " + "; ".join(parts) + f"; peak +{fmt_bytes(peak)}"
              f"; load {load_before[0]:.2f} -> {entry['load_after'][0]:.2f}", flush=True)
    result["complete"] = not failed
    result["total_seconds"] = time.monotonic() - start
    write()
    for c in result["checks"]:
        value = "n/a" if c["value"] is None else f"{c['value']:.2f} {c['unit']}"
        print(f"{'PASS' if c['pass'] else 'FAIL'}: {c['check']}: {c['point']}: {value}"
              f" (limit {c['limit']:g})")
    print(f"wrote {out_path} ({time.monotonic() - start:.0f} s)")
    return 1 if failed or not all(c["pass"] for c in result["checks"]) else 0


if __name__ == "__main__":
    sys.exit(main())
