"""Planted slips in the library functions behind the claims of this part of the book.

Part III, chapter *Proper calibration errors* (paper 003): the exact population errors of
:mod:`calnotes.theory.population` (TCE, CWCE, KS, MMCE, SKCE, CE_p, the proper calibration error and
the expected score), the SKCE U-statistic (:mod:`calnotes.theory.skce`), the folded-normal bias of the
binned ECE (:mod:`calnotes.core.expectation`), the binned ECE and the Brier loss the chapters print
(:mod:`calnotes.core.measures`, :mod:`calnotes.core.scores`) and the logistic-normal simulator of App. G.1
(:mod:`calnotes.data`). Each plant names the cheapest claims that reach its target.
"""

from __future__ import annotations

import numpy as np

from planting import Plant, scale_result, with_kwargs, wrap_result  # noqa: F401


def _cwce_mean_over_classes(value, dist, p=1, **kwargs):
    """CWCE_p with the sum over classes replaced by a mean (the p-th power divided by k)."""
    k = dist.n_classes
    return value / k if kwargs.get("powered") else value / k ** (1 / p)


def _ce_p_root_dropped(value, dist, p=2, **kwargs):
    """CE_p returned as CE_p^p although ``powered=False`` (the p-th root forgotten)."""
    return value if kwargs.get("powered") else value ** p


def _skce_over_n_squared(value, y_true, y_prob, **kwargs):
    """The all-pairs U-statistic divided by n^2 / 2 instead of n (n - 1) / 2."""
    if kwargs.get("estimator", "quadratic") != "quadratic":
        return value
    n = len(y_true)
    return value * (n - 1) / n


def _ece_columns_over_n_minus_1(value, P, positives, **kwargs):
    """The binned ECE's bin weights n_i / (n - 1) instead of n_i / n (p = 1; for p > 1 the
    p-th root of the same)."""
    n = P.shape[0]
    return value * (n / (n - 1)) ** (1.0 / kwargs.get("p", 1))


def _brier_mean_over_classes(value, y_true, y_prob, **kwargs):
    """The Brier loss averaged over the k classes instead of summed."""
    return value / np.shape(y_prob)[-1]


def _divergence_arguments_swapped(original):
    """d(P, Q) for d(Q, P): the asymmetric divergence of CE_S taken the other way round."""
    def slipped(Q, P, loss, exact):
        return original(P, Q, loss, exact)
    return slipped


def _expected_score_brier_mean(value, dist, loss="brier", **kwargs):
    """The expected Brier score averaged over the classes instead of summed."""
    return value / dist.n_classes if loss == "brier" else value


def _folded_normal_bins_share_dropped(original):
    """SLIPPED COPY of ``calnotes.core.expectation.folded_normal_ece_bias``: every bin gets
    ``n_i = n`` samples (the factor ``p_i`` of ``n_i = n p_i`` forgotten)."""
    from calnotes.core import expectation

    def slipped(bin_prob, conf_mean, conf_var, accuracy, n):
        p, conf, vconf, acc = (np.asarray(a, dtype=np.float64)
                               for a in (bin_prob, conf_mean, conf_var, accuracy))
        keep = p > 0
        p, conf, vconf, acc = p[keep], conf[keep], vconf[keep], acc[keep]
        n_arr = np.asarray(n, dtype=np.float64)
        ni = n_arr[..., None] * np.ones_like(p)              # slipped: n_arr[..., None] * p
        sigma = np.sqrt((vconf + acc * (1.0 - acc)) / ni)
        out = (p * expectation._folded_normal_mean(conf - acc, sigma)).sum(axis=-1)
        return float(out) if np.ndim(out) == 0 else out
    return slipped


def _folded_normal_constant_squared(original):
    """SLIPPED COPY of ``calnotes.core.expectation._folded_normal_mean``: ``2 / pi`` where
    ``sqrt(2 / pi)`` belongs (about 20% small)."""
    def slipped(mu, sigma):
        from scipy.stats import norm

        mu, sigma = np.asarray(mu, dtype=np.float64), np.asarray(sigma, dtype=np.float64)
        with np.errstate(divide="ignore", invalid="ignore"):
            z = mu / sigma
            folded = (sigma * (2.0 / np.pi) * np.exp(-0.5 * z ** 2)    # slipped: np.sqrt(2/pi)
                      + mu * (1.0 - 2.0 * norm.cdf(-z)))
        return np.where(sigma > 0, folded, np.abs(mu))
    return slipped


def _simulator_sqrt_dropped(original):
    """The logits' noise divided by ``s`` instead of ``sqrt(s)`` (passing ``s^2`` to the
    original, which divides by its square root)."""
    def slipped(n, n_classes=100, *, scale=0.01, **kwargs):
        return original(n, n_classes, scale=scale ** 2, **kwargs)
    return slipped


PLANTS: list = [
    Plant("003 tce: given= ignored, class-wise conditional always", "calnotes.theory.population.tce",
          with_kwargs(given="classwise"), ("003.thm3.1.cwce_ge_tce",)),
    Plant("003 tce: 10% too small", "calnotes.theory.population.tce", scale_result(0.9),
          ("003.thm3.1.tce_ge_ks",)),
    Plant("003 cwce: mean over classes instead of sum", "calnotes.theory.population.cwce",
          wrap_result(_cwce_mean_over_classes), ("003.thm3.1.cwce_ge_tce.proof_reading",)),
    Plant("003 ks_error: reading= ignored, Def C.2 always", "calnotes.theory.population.ks_error",
          with_kwargs(reading="definition"), ("003.thm3.1.tce_ge_ks",)),
    Plant("003 mmce: 10% too large", "calnotes.theory.population.mmce", scale_result(1.1),
          ("003.thm3.1.mmce_le_c_tce",)),
    Plant("003 skce: bandwidth 1.1 for 1", "calnotes.theory.population.skce",
          with_kwargs(bandwidth=1.1), ("003.appF.calibration_term",)),
    Plant("003 ce_p: p-th root dropped", "calnotes.theory.population.ce_p",
          wrap_result(_ce_p_root_dropped), ("003.thm3.1.eq14",)),
    Plant("003 calibration error: divergence arguments swapped",
          "calnotes.theory.population._divergence", _divergence_arguments_swapped,
          ("003.lemmaD.1",)),
    Plant("003 expected_score: Brier averaged over classes",
          "calnotes.theory.population.expected_score", wrap_result(_expected_score_brier_mean),
          ("003.lemmaD.1",)),
    Plant("003 skce_unbiased: pairs over n^2 / 2", "calnotes.theory.skce.skce_unbiased",
          wrap_result(_skce_over_n_squared), ("003.appF.u_statistic",)),
    Plant("003 folded_normal_ece_bias: n_i = n", "calnotes.core.expectation.folded_normal_ece_bias",
          _folded_normal_bins_share_dropped, ("003.prop3.3.approximation",)),
    Plant("003 folded normal mean: 2/pi for sqrt(2/pi)",
          "calnotes.core.expectation._folded_normal_mean", _folded_normal_constant_squared,
          ("003.prop3.3.approximation",)),
    Plant("003 binned_ece: bin weights n_i / (n - 1)", "calnotes.core.measures.binned_ece._columns",
          wrap_result(_ece_columns_over_n_minus_1), ("003.prop3.3.estimator_law",)),
    Plant("003 brier_loss: mean over classes", "calnotes.core.scores.brier_loss",
          wrap_result(_brier_mean_over_classes), ("003.appG.4.brier_unbiased",)),
    Plant("003 simulate_logistic_normal: noise over s, not sqrt(s)",
          "calnotes.data.simulate_logistic_normal", _simulator_sqrt_dropped,
          ("003.appG.1.accuracy",)),
]
