"""The utility-calibration part of a report (the utility paper's Lemma 3.4
and the eCDF of sampled utilities)."""

from __future__ import annotations

import math
import numbers

import numpy as np

from .._engine.sorted_columns import available_workers as _available_workers
from .._engine.sorted_columns import threads_for
from .report import _finite_or_none


#: Default number of sampled utilities per class (``U_lin``, ``U_rank``) in the eCDF.
DEFAULT_UTILITY_SAMPLES = 500
#: Elements of one task's ``(chunk, n)`` array of predicted utilities in the utility estimator
#: (64 MB), and of all the threads' such arrays together (512 MB): see ``_uc_results``.
_UC_BUDGET = 1 << 23
_UC_MEMORY = 1 << 26
#: Utilities x rows per worker thread of the utility estimator: below it a thread costs more
#: than it saves (measurements: benchmarks/README.md, *Utility calibration*).
_UC_THREAD_WORK = 1 << 22
#: Worker threads of the utility estimator (NumPy's sorts release the GIL): every CPU this
#: process may use (``os.sched_getaffinity``), or ``CALNOTES_THREADS``.
_UC_WORKERS = _available_workers()

_DIRECTION = {1: "too pessimistic", -1: "too optimistic", 0: "none"}


_UTILITY_DESCRIPTIONS = {
    "U_TCE": "top-class utility: 1 when the top class occurs (predicted utility max_j p_j)",
    "U_CWE": "class-wise utilities: 1 when class c occurs (predicted utility p_c), one per class",
    "U_topK": "top-K utilities: 1 when the label is among the K most probable classes,"
              " K = 1..k-1",
    "U_lin": "linear utilities u(p, e_j) = a_j, a uniform on the surface max_j |a_j| = 1",
    "U_rank": "rank utilities u(p, e_j) = theta_rank(j), theta uniform on the surface"
              " max_r |theta_r| = 1 and decreasing",
}


_SAMPLES_NAME = "utility_samples (command line: --utility-samples)"


_RNG_NAME = "rng (command line: --seed)"


def _check_utility_options(utility, samples, delta, rng):
    """The utility options, checked before anything is loaded: ``(M, delta, rng, seed)``."""
    if not isinstance(utility, (bool, np.bool_)):
        raise TypeError(f"utility (command line: --no-utility): expected True or False, got"
                        f" {utility!r}")
    if (isinstance(samples, (bool, np.bool_)) or not isinstance(samples, numbers.Integral)
            or samples < 1):
        raise ValueError(f"{_SAMPLES_NAME}: expected an integer >= 1, got {samples!r}")
    if (isinstance(delta, (bool, np.bool_)) or not isinstance(delta, numbers.Real)
            or not 0 < delta < 1):
        raise ValueError(f"utility_delta: expected a number in (0, 1), got {delta!r}")
    if isinstance(rng, np.random.Generator):
        seed = None
    elif isinstance(rng, numbers.Integral) and not isinstance(rng, (bool, np.bool_)):
        if rng < 0:
            raise ValueError(f"{_RNG_NAME}: expected a non-negative integer seed, got {rng!r}")
        seed = int(rng)
    else:
        raise TypeError(f"{_RNG_NAME}: expected a non-negative integer seed or a"
                        f" numpy.random.Generator, got {rng!r}")
    return int(samples), float(delta), rng, seed


def _uc_results(y, P, families, presorted=None) -> list:
    """:func:`calnotes.theory.utility.utility_calibration` of every family (one result each), on
    :data:`_UC_WORKERS` threads, without validating ``(y, P)`` again.

    A task holds one or two ``(chunk, n)`` arrays (its other arrays are blocks of about 1 MB):
    ``chunk x n`` at most ``_UC_BUDGET``, and the threads' such arrays together at most
    ``_UC_MEMORY`` elements; one thread per ``_UC_THREAD_WORK`` utility-rows.  A task's
    matrix product reads all of ``P``, so chunks stay large (64 utilities, the default of
    :func:`~calnotes.theory.utility.utility_calibration`, up to ``n = 131072``: about 15 flops per
    byte read with many classes).  The numbers do not depend
    on the number of threads; BLAS may round a product differently for another number of rows,
    so with the same chunk the report's numbers are ``utility_calibration``'s.  ``presorted``:
    the columns of ``P`` sorted, ``(k, n)``, if the caller has them (the class-wise utilities
    then sort nothing).
    """
    from ..theory.utility import _uc_families

    n = P.shape[0]
    total = sum(len(f) for f in families)
    chunk = max(2, min(64, _UC_BUDGET // n))
    workers = threads_for(total * n, _UC_THREAD_WORK,
                          min(_UC_WORKERS, _UC_MEMORY // (chunk * n), -(-total // chunk)))
    return _uc_families(y, P, families, chunk=chunk, workers=workers, presorted=presorted)


#: Level of the noise bound of utility calibration (``_uc_noise_level``): a perfectly
#: calibrated model's UC exceeds the ``noise_level`` of one of its utilities with probability
#: at most this, over all the utilities of a class together.
UC_NOISE_ALPHA = 0.05


def _uc_noise_level(v: np.ndarray, n_utilities: int, alpha: float = UC_NOISE_ALPHA) -> float:
    """A level that ``UC`` of a utility with values in ``[0, 1]`` and predicted utilities
    ``v`` exceeds with probability at most ``alpha / n_utilities`` when the model is
    calibrated (outcomes drawn from its predictions).

    Given the predictions, ``D_i = u_i - v_i`` are independent, mean zero (calibration), at
    most 1, with variance at most ``v_i (1 - v_i)``; ``UC`` is the largest ``|sum of D_i|/n``
    over runs of samples in the order of ``v``, at most twice ``max_j |S_j| / n`` for the
    partial sums ``S_j`` in that order.  Freedman's (Bernstein's maximal) inequality gives
    ``P(max_j |S_j| >= t) <= 2 exp(-t^2 / (2 (V + t/3)))`` with ``V = sum v_i (1 - v_i)``;
    solved for ``t`` at level ``alpha / n_utilities`` (a union bound over the class's
    utilities), the level is ``2 t / n``.  Conservative: a calibrated model's UC is typically
    a third to a half of it.

    Examples
    --------
    >>> v = np.full(10_000, 0.5)
    >>> round(_uc_noise_level(v, 1), 4)      # 2 t / n, t = L/3 + sqrt(L^2/9 + 2 L V)
    0.0274
    """
    n = int(v.shape[0])
    V = float(np.sum(v * (1.0 - v)))
    L = math.log(2.0 * n_utilities / alpha)
    t = L / 3.0 + math.sqrt(L * L / 9.0 + 2.0 * L * V)
    return min(1.0, 2.0 * t / n)


def _predicted_utility(fam, index: int, P: np.ndarray) -> np.ndarray:
    """Predicted utility ``v`` of utility ``index`` of one of the fixed families: a class
    probability (``U_CWE``), the sum of the ``K`` largest probabilities (``U_TCE``,
    ``U_topK``: no full sort), else :meth:`UtilityFamily.predicted`."""
    theta = fam.params[index]
    if fam.kind == "linear":
        return P @ theta
    K = int(theta.sum())
    if fam.kind == "rank" and np.array_equal(theta, (np.arange(theta.size) < K).astype(float)):
        if K == 1:
            return P.max(axis=1)
        return -np.partition(-P, K - 1, axis=1)[:, :K].sum(axis=1)
    return fam.take(index).predicted(P)[0]


def _worst_entries(fam, res, k: int = 5, params: bool = False) -> list:
    index = {name: i for i, name in enumerate(fam.names)}
    entries = []
    for w in res.worst(k):
        entry = {"utility": w["utility"], "uc": w["uc"], "lower": _finite_or_none(w["lower"]),
                 "upper": _finite_or_none(w["upper"]), "mass": w["mass"], "sign": w["sign"],
                 "direction": _DIRECTION[w["sign"]]}
        if params:
            entry["a" if fam.kind == "linear" else "theta"] = \
                fam.params[index[w["utility"]]].tolist()
        entries.append(entry)
    return entries


def _utility_part(y, P, samples, delta, rng, seed, notes, presorted=None):
    """The ``utility`` dictionary of the report and the two :class:`UtilityECDF` objects.

    ``presorted``, optional: the columns of ``P`` sorted ascending, shape ``(k, n)`` (e.g. the
    class-wise problem's ``SortedColumns.values``), reused by ``U_CWE`` instead of sorting."""
    from .._validate import check_rng
    from ..theory.utility import (classwise, ecdf_from_errors, sample_linear, sample_rank, top_class,
                                  top_k)

    k = P.shape[1]
    gen = check_rng(rng)
    fixed = [top_class(k), classwise(k), top_k(k)]
    sampled = [sample_linear(k, samples, rng=gen), sample_rank(k, samples, rng=gen)]
    results = _uc_results(y, P, fixed + sampled, presorted)
    classes = []
    for fam, res in zip(fixed, results[:3]):
        worst = _worst_entries(fam, res)
        index = fam.names.index(worst[0]["utility"])
        noise = _uc_noise_level(_predicted_utility(fam, index, P), len(fam))
        if fam.label == "U_CWE":            # each listed class against its own level (a
            for entry in worst:             # column of P: cheap), for the verdict's classes
                level = _uc_noise_level(P[:, fam.names.index(entry["utility"])], len(fam))
                entry.update(noise_level=level, beyond_noise=bool(entry["uc"] > level))
        classes.append({"class": fam.label, "description": _UTILITY_DESCRIPTIONS[fam.label],
                        "n_utilities": len(fam), **worst[0], "noise_level": noise,
                        "beyond_noise": bool(worst[0]["uc"] > noise), "worst": worst})
    ecdfs, sampled_entries = [], []
    for fam, res in zip(sampled, results[3:]):
        F = ecdf_from_errors(res.values, delta=delta, label=fam.label, result=res)
        ecdfs.append(F)
        sampled_entries.append({
            "class": fam.label, "description": _UTILITY_DESCRIPTIONS[fam.label],
            "median": float(F.quantile(0.5)), "q90": float(F.quantile(0.9)),
            "max": float(F.errors[-1]), "worst": _worst_entries(fam, res, params=True),
            "errors": F.errors.tolist()})
    if seed is None:
        notes.append("utility calibration: the utilities were drawn from the Generator passed"
                     " as rng (no seed recorded)")
    part = {
        "estimator": "Lemma 3.4 of paper 001: sup over intervals I of predicted utility of"
                     " |mean((realized - predicted utility) 1{predicted in I})|",
        "classes": classes,
        "ecdf": {"n_utilities": samples, "seed": seed, "delta": delta,
                 "halfwidth": ecdfs[0].halfwidth, "eps_stat": 0.0,
                 "band": "DKW band of the eCDF at level 1 - delta with eps_stat = 0: it covers"
                         " the CDF of the estimated errors on these samples over the sampling"
                         " prior, not the CDF of the true UC(f, u)",
                 "classes": sampled_entries},
    }
    return part, ecdfs


