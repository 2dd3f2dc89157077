"""Planted slips in the library functions behind the claims of Part I (foundations.py: the
measures, proper scores and Bregman divergences; paper 000's Thm 2.6 by enumeration, paper
003's Lemma 4.1, paper 004's Sec. 4)."""

import numpy as np

from planting import Plant, scale_result, with_kwargs, wrap_result  # noqa: F401


def _n_minus_1_for_n(value, y_true, *args, **kwargs):
    """``n (n - 1)`` in place of ``n^2`` in the normalisation of a quantile-binned measure."""
    n = len(y_true)
    return value * n / (n - 1) if n > 1 else value


def _kl_arguments_swapped(original):
    """``divergence(q, p)`` computed as ``divergence(p, q)``: the arguments of an asymmetric
    divergence swapped (the same for Brier, not for KL)."""
    def divergence(q, p, loss="log"):
        return original(p, q, loss)
    return divergence


def _gradient_at_q(original):
    """The slipped copy of :func:`calnotes.core.scores.bregman_divergence` with the gradient taken
    at the first argument ``q`` instead of ``p`` (one line changed)."""
    from calnotes.core.scores import _two

    def bregman_divergence(q, p, generator=None):
        from calnotes.core.scores import SQUARED_NORM
        generator = SQUARED_NORM if generator is None else generator
        Q, P = _two(q, p)
        with np.errstate(divide="ignore", invalid="ignore"):
            # SLIPPED: generator.grad(Q) in place of generator.grad(P)
            inner = np.where(Q - P != 0, generator.grad(Q) * (Q - P), 0.0).sum(axis=1)
        return generator.phi(Q) - generator.phi(P) - inner
    return bregman_divergence


def _pooled_by_count(original):
    """The slipped copy of :func:`calnotes.core.scores.pool_by_prediction`: the pooled truth
    ``C_j`` is the plain mean of the atoms' truths (divided by their count) instead of their
    mass-weighted mean."""
    from calnotes.core.scores import _check_weights, _two

    def pool_by_prediction(weights, y_prob, true_prob):
        w = _check_weights(weights)
        F, T = _two(y_prob, true_prob)
        values, group = np.unique(F, axis=0, return_inverse=True)
        group = group.ravel()
        mass = np.bincount(group, weights=w, minlength=len(values))
        conditional = np.zeros_like(values)
        # SLIPPED: the truths summed unweighted and divided by the count of atoms
        np.add.at(conditional, group, T)
        count = np.bincount(group, minlength=len(values)).astype(float)
        conditional /= np.where(count > 0, count, 1.0)[:, None]
        return values, mass, conditional, group
    return pool_by_prediction


def _sharpness_swapped(original):
    """The slipped copy of :func:`calnotes.core.scores.score_decomposition` with the sharpness
    term's divergence taken as ``d(pi, C)`` instead of ``d(C, pi)``."""
    from calnotes.core.scores import _check_weights, _two, divergence, entropy, expected_loss, \
        pool_by_prediction

    def score_decomposition(weights, y_prob, true_prob, loss="log"):
        w = _check_weights(weights)
        F, T = _two(y_prob, true_prob)
        values, mass, C, _ = pool_by_prediction(w, F, T)
        values, mass, C = values[mass > 0], mass[mass > 0], C[mass > 0]
        pi = (w[:, None] * T).sum(axis=0, keepdims=True)
        score = float(w @ expected_loss(T, F, loss))
        return {
            "score": score,
            "entropy": float(entropy(pi, loss)[0]),
            # SLIPPED: divergence(pi, C) in place of divergence(C, pi)
            "sharpness": float(mass @ divergence(np.repeat(pi, len(C), axis=0), C, loss)),
            "calibration": float(mass @ divergence(C, values, loss)),
        }
    return score_decomposition


def _entropy_at_the_report(original):
    """The slipped copy of ``calnotes.theory.symbolic._div``: the divergence ``E_q l(p) - H(p)``, the
    entropy taken at the report ``p`` instead of the truth ``q``."""
    from calnotes.theory.symbolic import _expected

    def _div(name, q, p):
        return _expected(name, q, p) - _expected(name, p, p)  # SLIPPED: H(p) for H(q)
    return _div


PLANTS: list = [
    Plant("l2_qece: n (n - 1) in place of n^2", "calnotes.core.measures.l2_qece",
          wrap_result(_n_minus_1_for_n), ("000.thm2.6.enumeration",)),
    Plant("divergence: arguments of KL swapped", "calnotes.core.scores.divergence",
          _kl_arguments_swapped, ("004.sec4.bregman_examples", "003.lemma4.1")),
    Plant("bregman_divergence: gradient at q, not p", "calnotes.core.scores.bregman_divergence",
          _gradient_at_q, ("004.sec4.bregman_examples",)),
    Plant("pool_by_prediction: pooled truth by count, not mass",
          "calnotes.core.scores.pool_by_prediction", _pooled_by_count,
          ("004.lemma4.1", "003.lemma4.1")),
    Plant("score_decomposition: sharpness as d(pi, C)", "calnotes.core.scores.score_decomposition",
          _sharpness_swapped, ("003.lemma4.1",)),
    Plant("symbolic divergence: entropy at p, not q", "calnotes.theory.symbolic._div",
          _entropy_at_the_report, ("003.lemma4.1.symbolic",)),
]


# --- binning: the bins of eq. (1), the equal-width edges, the tie rule ----------------------

def _array_split_cut(original):
    """``quantile_bin_of_position`` cutting sorted positions as ``numpy.array_split`` does
    (``floor(pos m / n)``: the larger bins first) instead of eq. (1)."""
    def quantile_bin_of_position(positions, n_samples, n_bins):
        pos = np.asarray(positions, dtype=np.int64)
        return (pos * int(n_bins)) // int(n_samples)       # SLIPPED: eq. (1) is ceil - 1
    return quantile_bin_of_position


def _width_bins_closed_right(original):
    """The slipped copy of ``calnotes.core.binning._width_bins_unchecked`` with the bins closed on
    the right (a value exactly on an interior edge goes to the bin below)."""
    def _width_bins_unchecked(values, m):
        edges = np.arange(m + 1, dtype=np.float64) / m
        edges[m] = np.inf
        j = np.floor(values * m).astype(np.intp)
        np.clip(j, 0, m - 1, out=j)
        j -= (values <= edges[j]) & (j > 0)               # SLIPPED: < for the left-closed rule
        j += values > edges[j + 1]                        # SLIPPED: >= likewise
        return j
    return _width_bins_unchecked


def _ties_by_position(original):
    """``check_ties`` mapping every rule to ``"position"``: ties across bin boundaries kept in
    input order by default instead of averaged over their orders."""
    def check_ties(ties):
        original(ties)
        return "position"                                   # SLIPPED: the default ignored
    return check_ties


PLANTS += [
    Plant("quantile bins cut as array_split", "calnotes.core.binning.quantile_bin_of_position",
          _array_split_cut, ("000.def2.5.as_printed",)),
    Plant("equal-width bins closed on the right", "calnotes.core.binning._width_bins_unchecked",
          _width_bins_closed_right, ("003.eq25.ece_estimator",)),
    Plant("ties in input order by default", "calnotes._engine.ties.check_ties",
          _ties_by_position, ("000.def2.5.as_printed",)),
]
