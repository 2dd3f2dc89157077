"""Planted slips in the library functions behind the claims of Part IV (paper 001).

Targets: the UC estimator (:mod:`calnotes.theory.utility`: the sorted prefix-sum scan and its tie
merging, the per-sample weights, the brute-force reference, the population weights, the
rank utilities' tie rule, the DKW half-width and band) and Algorithm 1 (:mod:`calnotes.theory.patching`:
the step size, the patch, the Brier score).
Where the slip is inside a function body, the slipped copy below is the library's function with
one line changed, marked ``# SLIP``.
"""

import math

import numpy as np

from planting import Plant, with_kwargs, wrap_result


# ------------------------------------------------------------------------------------------
# slipped copies (each the library's function with the line marked SLIP changed)
# ------------------------------------------------------------------------------------------
def _scan_sorted_ties_split(original):
    """calnotes.theory.utility._scan_sorted with ``>=`` for ``>``: equal predicted utilities (at
    ``tie_tol = 0``) become separate blocks, so ties are no longer pooled."""
    from calnotes._engine.pool import cumsum_rows

    def _scan_sorted(Vs, Rs, tie_tol):
        M, n = Vs.shape
        S = np.empty((M, n + 1))
        S[:, 0] = 0.0
        cumsum_rows(Rs, S[:, 1:])
        inner = (Vs[:, 1:] - Vs[:, :-1]) >= tie_tol               # SLIP: was > tie_tol
        if inner.all():
            top, bottom = S.argmax(axis=1), S.argmin(axis=1)
        else:
            boundary = np.ones((M, n + 1), dtype=bool)
            boundary[:, 1:n] = inner
            top = np.where(boundary, S, -np.inf).argmax(axis=1)
            bottom = np.where(boundary, S, np.inf).argmin(axis=1)
        rows = np.arange(M)
        values = S[rows, top] - S[rows, bottom]
        lo = np.minimum(top, bottom)
        hi = np.maximum(top, bottom)
        empty = values <= 0
        lower = np.where(empty, np.nan, Vs[rows, np.minimum(lo, n - 1)])
        upper = np.where(empty, np.nan, Vs[rows, np.maximum(hi - 1, 0)])
        sign = np.where(empty, 0, np.where(top > bottom, 1, -1))
        return np.maximum(values, 0.0), lower, upper, sign, lo, hi
    return _scan_sorted


def _scan_sorted_last_boundary_dropped(original):
    """calnotes.theory.utility._scan_sorted with the prefix sum after the last sample left out of the
    boundaries (an off-by-one in the prefix sums: intervals ending at the largest value lost)."""
    from calnotes._engine.pool import cumsum_rows

    def _scan_sorted(Vs, Rs, tie_tol):
        M, n = Vs.shape
        S = np.empty((M, n + 1))
        S[:, 0] = 0.0
        cumsum_rows(Rs, S[:, 1:])
        inner = (Vs[:, 1:] - Vs[:, :-1]) > tie_tol
        boundary = np.ones((M, n + 1), dtype=bool)
        boundary[:, 1:n] = inner
        boundary[:, n] = n == 1                                   # SLIP: was always True
        top = np.where(boundary, S, -np.inf).argmax(axis=1)
        bottom = np.where(boundary, S, np.inf).argmin(axis=1)
        rows = np.arange(M)
        values = S[rows, top] - S[rows, bottom]
        lo = np.minimum(top, bottom)
        hi = np.maximum(top, bottom)
        empty = values <= 0
        lower = np.where(empty, np.nan, Vs[rows, np.minimum(lo, n - 1)])
        upper = np.where(empty, np.nan, Vs[rows, np.maximum(hi - 1, 0)])
        sign = np.where(empty, 0, np.where(top > bottom, 1, -1))
        return np.maximum(values, 0.0), lower, upper, sign, lo, hi
    return _scan_sorted


def _uc_from_values_n_minus_1(original):
    """calnotes.theory.utility.uc_from_values with the unweighted residuals divided by ``n - 1``."""
    from calnotes.theory import utility as ut

    def uc_from_values(predicted, realized, *, weights=None, tie_tol=0.0):
        V, U, w, _ = ut._check_values(predicted, realized, weights)
        tol = float(tie_tol)
        n = V.shape[1]
        R = (U - V) * (w if w is not None else 1.0 / max(n - 1, 1))   # SLIP: was 1.0 / n
        (values, lower, upper, sign, lo, hi), order = ut._scan_ordered(V, R, tol)
        if w is None:
            mass = (hi - lo) / n
        else:
            cw = np.concatenate([np.zeros((V.shape[0], 1)), np.cumsum(w[order], axis=1)], axis=1)
            rows = np.arange(V.shape[0])
            mass = cw[rows, hi] - cw[rows, lo]
        return ut.UCResult(values, lower, upper, sign, mass)
    return uc_from_values


def _brute_force_ties_split(original):
    """calnotes.theory.utility.uc_brute_force with ``>=`` for ``>`` in its tie grouping."""
    from calnotes.theory import utility as ut

    def uc_brute_force(predicted, realized, *, weights=None, tie_tol=0.0):
        V, U, w, one = ut._check_values(predicted, realized, weights)
        v, u = V[0], U[0]
        n = v.size
        wt = np.full(n, 1.0 / n) if w is None else w
        order = sorted(range(n), key=lambda i: v[i])
        sums, last = [], None
        for i in order:
            if last is None or v[i] - last >= tie_tol:            # SLIP: was > tie_tol
                sums.append(0.0)
            sums[-1] += wt[i] * (u[i] - v[i])
            last = v[i]
        best = 0.0
        g = np.asarray(sums)
        for a in range(g.size):
            best = max(best, float(np.abs(np.cumsum(g[a:])).max()))
        return best
    return uc_brute_force


def _population_uc_unweighted(original):
    """calnotes.theory.utility.population_uc with the atoms' weights dropped (a uniform mean over
    atoms instead of the weighted sum)."""
    from calnotes.theory import utility as ut

    def population_uc(dist, utilities):
        F = np.asarray(dist.prediction, dtype=np.float64)
        T = np.asarray(dist.truth, dtype=np.float64)
        w = np.full(F.shape[0], 1.0 / F.shape[0])                # SLIP: was dist.weights
        out = []
        for fam in ut._check_families(utilities):
            ubar = fam.per_class(F)
            V = np.einsum("aj,maj->ma", F, ubar)
            Rexp = np.einsum("aj,maj->ma", T, ubar)
            (values, lower, upper, sign, lo, hi), order = ut._scan_ordered(
                V, (Rexp - V) * w, ut.utility_tie_tolerance(F.shape[1]))
            cw = np.concatenate([np.zeros((V.shape[0], 1)), np.cumsum(w[order], axis=1)], axis=1)
            rows = np.arange(V.shape[0])
            out.append(ut.UCResult(values, lower, upper, sign, cw[rows, hi] - cw[rows, lo],
                                   fam.names))
        return ut.UCResult.concatenate(out)
    return population_uc


def _tie_mean_first_position(original):
    """calnotes.theory.utility._tie_mean returning the payoff of the first position of the tie group
    instead of the group's mean (a tie rule changed: ties broken by position)."""
    def _tie_mean(cum, lo, hi):
        return cum[:, lo + 1] - cum[:, lo]                        # SLIP: was / (hi - lo) mean
    return _tie_mean


def _step_size_c_plus_1(original):
    """calnotes.theory.patching._step_size with ``err / (C + 1)`` for Prop. 4.4's ``err / C``."""
    def _step_size(err, step, w, inside, ubar):
        wsq = float(w[inside] @ np.sum(ubar[inside] ** 2, axis=1))
        return (err / (ubar.shape[1] + 1) if step == "theory"          # SLIP: was / C
                else err / wsq), wsq
    return _step_size


def _apply_step_10pc_long(original):
    """calnotes.theory.patching._apply moving ``1.1 eta`` along the witness (a constant 10% off)."""
    def _apply(F, fam, m, lower, upper, sign, eta):
        return original(F, fam, m, lower, upper, sign, 1.1 * eta)    # SLIP: was eta
    return _apply


PLANTS = [
    Plant("utility _scan_sorted: ties split (>= for >)", "calnotes.theory.utility._scan_sorted",
          _scan_sorted_ties_split, ("001.lemma3.4.estimator",)),
    Plant("utility _scan_sorted: last prefix boundary dropped", "calnotes.theory.utility._scan_sorted",
          _scan_sorted_last_boundary_dropped, ("001.lemma3.4.estimator",)),
    Plant("utility uc_from_values: residuals over n - 1", "calnotes.theory.utility.uc_from_values",
          _uc_from_values_n_minus_1, ("001.lemma3.4.estimator",)),
    Plant("utility uc_brute_force: ties split (>= for >)", "calnotes.theory.utility.uc_brute_force",
          _brute_force_ties_split, ("001.lemma3.4.estimator",)),
    Plant("utility population_uc: atom weights dropped", "calnotes.theory.utility.population_uc",
          _population_uc_unweighted, ("001.appB2.bound",)),
    Plant("utility _tie_mean: first position of the tie group", "calnotes.theory.utility._tie_mean",
          _tie_mean_first_position, ("001.corB.10",)),
    Plant("utility dkw_halfwidth: ln(1/delta) for ln(2/delta)", "calnotes.theory.utility.dkw_halfwidth",
          wrap_result(lambda h, M, delta: math.sqrt(math.log(1 / delta) / (2 * M))),
          ("001.thmB.11.dkw_coverage",)),
    Plant("utility ecdf_from_errors: eps_stat dropped", "calnotes.theory.utility.ecdf_from_errors",
          with_kwargs(eps_stat=0.0), ("001.thmB.11.eps_stat_needed",)),
    Plant("patching _step_size: err / (C + 1)", "calnotes.theory.patching._step_size",
          _step_size_c_plus_1, ("001.prop4.4.decrease",)),
    Plant("patching _apply: step 10% long", "calnotes.theory.patching._apply",
          _apply_step_10pc_long, ("001.prop4.4.decrease",)),
    Plant("patching _brier: mean over classes", "calnotes.theory.patching._brier",
          wrap_result(lambda value, F, T, w: value / F.shape[1]), ("001.prop4.4.decrease",)),
]
