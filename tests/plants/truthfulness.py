"""Planted slips in the library functions behind the claims of Part II (paper 000: chapters
*Truthful calibration measures*, *Dominance* and *Table 1*)."""

import math

import numpy as np

from planting import Plant, scale_result, with_kwargs, wrap_result  # noqa: F401


def _n_minus_1_for_n(value, y_prob, *args, **kwargs):
    """``n (n - 1)`` in place of ``n^2`` in the normalisation of l2-QECE's expectation."""
    n = len(y_prob)
    return value * n / (n - 1) if n > 1 else value


def _classwise_sum(value, y_prob, *args, **kwargs):
    """The class-wise aggregation summed over the k classes instead of averaged."""
    if kwargs.get("aggregation") == "classwise":
        return value * np.shape(y_prob)[1]
    return value


def _classwise_measure_sum(value, measure, y_true, y_prob, *args, **kwargs):
    """:func:`calnotes.classwise` summed over the k classes instead of averaged."""
    if kwargs.get("per_class"):
        return value
    return value * np.shape(y_prob)[1]


def _confidence_truth_argmax(original):
    """The slipped copy of ``calnotes.core.expectation._columns``: under confidence aggregation the
    correctness column takes the truth's argmax instead of the report's (one line changed)."""
    def _columns(P, T, top, aggregation):
        if aggregation == "binary":
            return P[:, None], T[:, None]
        if aggregation == "classwise":
            return P, T
        rows = np.arange(P.shape[0])
        # SLIPPED: the truth's argmax in place of the report's (top)
        return P[rows, top][:, None], T[rows, T.argmax(axis=1)][:, None]
    return _columns


def _best_response_argmax(original):
    """``DecisionProblem.best_response`` with ``argmax`` in place of ``argmin`` of the risks."""
    def best_response(self, q):
        return self.risks(q).argmax(axis=1)  # SLIPPED: argmax for argmin
    return best_response


def _tail_of_bin_h(original):
    """The slipped copy of :func:`calnotes.theory.table1.binomial_abs_deviation` whose second tail
    probability is of ``Bin(h, q)`` instead of ``Bin(h - 1, q)``."""
    from scipy.stats import binom

    def binomial_abs_deviation(t, h, q):
        t = np.asarray(t, dtype=np.float64)
        h = np.asarray(h, dtype=np.int64)
        q = np.asarray(q, dtype=np.float64)
        mean = h * q
        s = np.floor(t) + 1.0
        tail = binom.sf(s - 1.0, h, q)
        tail_1 = binom.sf(s - 2.0, h, q)    # SLIPPED: h in place of max(h - 1, 0)
        out = (t - mean) + 2.0 * (mean * tail_1 - t * tail)
        return np.where(h == 0, np.abs(t), out)
    return binomial_abs_deviation


def _derived_bias_over_k(value, k, *args, **kwargs):
    """Our derived class-wise l1 cell of f2 with the bias coefficient 1/k for 2/k (the
    printed cell's coefficient): the derived value's bias part halved."""
    out = dict(value)
    out["f2.l1_cw"] = value["f2.l1_cw"] / 2.0
    return out


def _multinomial_dropped(original):
    """The slipped copy of :func:`calnotes.theory.decisions.iid_expectation` whose unordered
    enumeration weights each multiset by its probability as one sequence (the multinomial
    coefficient dropped)."""
    import itertools

    def iid_expectation(mass, n_samples, statistic, *, ordered=False):
        w = np.asarray(mass, dtype=np.float64)
        n, s = int(n_samples), w.size
        total = 0.0
        if ordered:
            for seq in itertools.product(range(s), repeat=n):
                idx = np.array(seq, dtype=np.intp)
                p = float(np.prod(w[idx]))
                if p > 0:
                    total += p * float(statistic(idx))
            return total
        for combo in itertools.combinations_with_replacement(range(s), n):
            idx = np.array(combo, dtype=np.intp)
            counts = np.bincount(idx, minlength=s)
            if np.any(w[counts > 0] == 0):
                continue
            coef = 1  # SLIPPED: math.factorial(n) // prod(factorial(counts)) dropped
            p = coef * float(np.prod(w ** counts))
            total += p * float(statistic(idx))
        return total
    assert math  # the original's coefficient uses math.factorial
    return iid_expectation


def _outcomes_from_the_report(original):
    """:func:`calnotes.core.expectation.simulate_qece` drawing the outcomes from the report instead
    of the truth (its two probability arguments confused)."""
    def simulate_qece(y_prob, true_prob, n_bins, n_reps, rng, **kwargs):
        return original(y_prob, y_prob, n_bins, n_reps, rng, **kwargs)  # SLIPPED: y_prob twice
    return simulate_qece


PLANTS: list = [
    Plant("expected_qece: n (n - 1) in place of n^2", "calnotes.core.expectation.expected_qece",
          wrap_result(_n_minus_1_for_n), ("000.thm2.6.exact",)),
    Plant("expected_qece: class-wise summed, not averaged",
          "calnotes.core.expectation.expected_qece", wrap_result(_classwise_sum), ("000.lemmaC.1",)),
    Plant("classwise: summed over classes, not averaged", "calnotes.core.measures.classwise",
          wrap_result(_classwise_measure_sum), ("000.lemmaC.1.simulation",)),
    Plant("expected_unbinned_ece: 5% too large", "calnotes.core.expectation.expected_unbinned_ece",
          scale_result(1.05), ("000.ex1.1.simulation",)),
    Plant("confidence columns: correctness of the truth's argmax",
          "calnotes.core.expectation._columns", _confidence_truth_argmax, ("000.obs3.2",)),
    Plant("best_response: argmax of the risks", "calnotes.theory.decisions.DecisionProblem.best_response",
          _best_response_argmax, ("000.thmB.3.induced_is_proper",)),
    Plant("binomial_abs_deviation: tail of Bin(h, q) for Bin(h - 1, q)",
          "calnotes.theory.table1.binomial_abs_deviation", _tail_of_bin_h,
          ("000.table1.f1.l1_conf", "000.table1.f3.l1_conf")),
    Plant("derived_table1: class-wise l1 bias 1/k for 2/k", "calnotes.theory.table1.derived_table1",
          wrap_result(_derived_bias_over_k), ("000.table1.derivation",)),
    Plant("iid_expectation: multinomial coefficient dropped",
          "calnotes.theory.decisions.iid_expectation", _multinomial_dropped, ("000.thm4.1",)),
    Plant("simulate_qece: outcomes drawn from the report", "calnotes.core.expectation.simulate_qece",
          _outcomes_from_the_report, ("000.thm2.6.simulation",)),
    Plant("calibrated_expected_qece: aggregation moved to confidence",
          "calnotes.theory.decisions.calibrated_expected_qece", with_kwargs(aggregation="confidence"),
          ("000.thm4.1",)),
]
