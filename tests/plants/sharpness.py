"""Planted slips in the library functions behind the claims of Part III's sharpness and Bregman
chapters (paper 004) and of Part V's practice chapters (papers 000, 003, 004).

Each slip is one a hurried edit could make: a default moved, ``n`` for ``n - 1``, the
covariance-matching residual replaced by the smoothed one, the arguments of an asymmetric
divergence swapped, a kernel's exponent off by a factor, a mean over classes for a sum. Where
the slip is inside a function body, the module holds a copy of the function with that line
changed (marked ``SLIPPED COPY``).
"""

import math

import numpy as np

from planting import Plant, scale_result, with_kwargs, wrap_result  # noqa: F401


# ----------------------------------------------------------------------------- kernel

def _paper_default(original):
    """``default_bandwidth`` back to the paper's fixed 0.05 (a default moved)."""
    def default_bandwidth(n):
        return 0.05
    return default_bandwidth


def _gaussian_without_half(original):
    """The Gaussian kernel written ``exp(-u^2)`` for ``exp(-u^2 / 2)``: every bandwidth acts as
    ``sigma / sqrt(2)`` (29% narrower), the default included."""
    from calnotes.core.kernel import default_bandwidth

    def nadaraya_watson(x, y, grid=None, *, bandwidth=None, **kwargs):
        sigma = default_bandwidth(np.asarray(x).size) if bandwidth is None else bandwidth
        return original(x, y, grid, bandwidth=sigma / math.sqrt(2.0), **kwargs)
    return nadaraya_watson


# ----------------------------------------------------------------------------- sharpness

def _naive_plugin(original):
    """SLIPPED COPY of ``calnotes.theory.sharpness._plugin``: the linear term uses the smoothed
    accuracy ``m_hat(h_i)`` instead of the observed correctness (the naive plug-in
    ``d_varphi(m_hat(h_i), h_i)``, without (C.3)'s covariance matching)."""
    from calnotes.theory.sharpness import nadaraya_watson

    def _plugin(h, correct, pair, bandwidth, kernel, reflect):
        m = np.clip(nadaraya_watson(h, correct, bandwidth=bandwidth, kernel=kernel,
                                    reflect=reflect), 0.0, 1.0)
        resid = m - h                                        # SLIP: was correct - h
        with np.errstate(invalid="ignore", over="ignore"):
            lin = np.where(resid == 0.0, 0.0, pair.varphi_prime(h) * resid)
        terms = pair.varphi(m) - pair.varphi(h) - lin
        return float(np.mean(terms))
    return _plugin


def _divergence_swapped(original):
    """``ConfidencePair.divergence(a, b)`` computing ``d_varphi(b, a)``: the arguments of the
    (for the log pair asymmetric) binary divergence swapped."""
    def divergence(self, a, b):
        return original(self, b, a)
    return divergence


def _grouping_swapped(value, dist, generator="squared_norm", *, exact=False):
    """(E.1)'s grouping term computed as ``E d(C, Q)`` (arguments swapped)."""
    from calnotes.theory import population as pop
    from calnotes.core.scores import NEG_ENTROPY, SQUARED_NORM, bregman_divergence

    if exact:
        return value
    gen = NEG_ENTROPY if generator in ("neg_entropy", "log") else (
        SQUARED_NORM if isinstance(generator, str) else generator)
    C = pop.conditional_expectation(dist, "canonical")
    with np.errstate(divide="ignore", invalid="ignore"):
        swapped = float(dist.weights @ bregman_divergence(C, dist.truth, gen))
    return {**value, "grouping": swapped}


# ----------------------------------------------------------------------------- recalibrate

def _accuracy_over_n_minus_1(original):
    """SLIPPED COPY of ``calnotes.recalibrate._TopLabel._fit``: the accuracy ``h`` of MRR (and
    of ``t^f``) divided by ``n - 1`` instead of ``n``."""
    from calnotes.recalibrate import _first_argmax

    def _fit(self, S, y):
        k = S.shape[1]
        self.accuracy_ = float(np.sum(_first_argmax(S) == y) / (len(y) - 1))   # SLIP: mean
        rest = (1.0 - self.accuracy_) / (k - 1)
        self.target_ = np.array([self.accuracy_] + [rest] * (k - 1))
        self.accuracy_preserving_ = bool(self.accuracy_ > rest)
    return _fit


def _temperature_multiplies(original):
    """Temperature scaling multiplying the logits by ``T`` instead of dividing (the fitted
    temperature applied the wrong way round)."""
    def _transform(self, Z):
        T = self.temperature_
        self.temperature_ = 1.0 / T
        try:
            return original(self, Z)
        finally:
            self.temperature_ = T
    return _transform


# ----------------------------------------------------------------------------- population

def _last_argmax(original):
    """SLIPPED COPY of ``calnotes.theory.population.accuracy_preserving_transform``: the predicted
    class taken as the *last* maximum of a row (the tie rule changed; the library's is the
    first, as everywhere else)."""
    from calnotes.theory.population import FiniteDistribution, _arrays, accuracy

    def accuracy_preserving_transform(dist):
        exact = dist.is_exact
        w, T, F = _arrays(dist, exact)
        k = F.shape[1]
        acc = accuracy(dist, exact=exact)
        C = k - 1 - np.argmax(np.asarray(F[:, ::-1], dtype=np.float64), axis=1)   # SLIP
        rest = (1 - acc) / (k - 1)
        out = np.full(F.shape, rest, dtype=object if exact else np.float64)
        out[np.arange(w.size), C] = acc
        return FiniteDistribution(w, T, out)
    return accuracy_preserving_transform


def _per_confidence_scaled(value, *args, **kwargs):
    """The confidence calibration error 10% too large (a constant off by 10%), per confidence
    value and integrated."""
    if isinstance(value, dict):
        return {**value, "confidence_error": [1.1 * v for v in value["confidence_error"]]} \
            if not isinstance(value["confidence_error"], np.ndarray) else \
            {**value, "confidence_error": 1.1 * value["confidence_error"]}
    return 1.1 * value


def _spherical_score_as_loss(original):
    """The four losses of footnote 4 with the spherical *score* ``p_y / ||p||`` in place of the
    spherical loss ``1 - p_y / ||p||`` (the ``1 -`` dropped): higher is then better in that
    column of the loss table."""
    spherical = original["spherical"]

    def spherical_score(y_true, y_prob, **kwargs):
        return 1.0 - spherical(y_true, y_prob, **kwargs)
    return {**original, "spherical": spherical_score}


PLANTS = [
    Plant("default_bandwidth: the paper's fixed 0.05", "calnotes.core.kernel.default_bandwidth",
          _paper_default, ("004.thmC.4.consistency",)),
    Plant("nadaraya_watson: Gaussian exp(-u^2) for exp(-u^2/2)",
          "calnotes.core.kernel.nadaraya_watson", _gaussian_without_half,
          ("004.thmC.4.consistency", "004.thmC.4.rate")),
    Plant("plugin (C.3): naive residual m_hat - h", "calnotes.theory.sharpness._plugin", _naive_plugin,
          ("004.thmC.4.consistency", "004.thmC.4.rate")),
    Plant("ConfidencePair.divergence: arguments swapped",
          "calnotes.theory.sharpness.ConfidencePair.divergence", _divergence_swapped,
          ("004.prop4.8",)),
    Plant("grouping loss: E d(C, Q) for E d(Q, C)",
          "calnotes.theory.sharpness.grouping_loss_decomposition", wrap_result(_grouping_swapped),
          ("004.appE.grouping_loss",)),
    Plant("MRR / t^f: accuracy over n - 1", "calnotes.recalibrate._TopLabel._fit",
          _accuracy_over_n_minus_1, ("004.sec3.mrr_zero_ece",)),
    Plant("temperature scaling: logits times T", "calnotes.recalibrate.TemperatureScaling._transform",
          _temperature_multiplies, ("004.sec3.proper_scores_detect_mrr",)),
    Plant("t^f population: last arg max among ties",
          "calnotes.theory.population.accuracy_preserving_transform", _last_argmax, ("003.propD.2",)),
    Plant("classwise: sum over classes for the mean", "calnotes.core.measures.classwise",
          wrap_result(lambda value, measure, y, P, **kw: value * np.shape(P)[-1]),
          ("000.sec5.m_equals_n",)),
    Plant("loss table: spherical score for the spherical loss", "calnotes.theory.rankings.LOSSES",
          _spherical_score_as_loss, ("000.sec5.checkpoint_dominance",)),
    Plant("confidence calibration error (population): 10% too large",
          "calnotes.theory.population.confidence_calibration_error",
          wrap_result(_per_confidence_scaled), ("004.lemma4.6",)),
]
