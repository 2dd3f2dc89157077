"""calnotes: measure the calibration of probabilistic classifiers, and verify the theory.

The public API is flat: ``from calnotes import l2_qece, classwise, brier_loss``.
Modules: :mod:`~calnotes.binning`, :mod:`~calnotes.measures`, :mod:`~calnotes.scores`,
:mod:`~calnotes.expectation`, :mod:`~calnotes.decisions`, :mod:`~calnotes.symbolic`,
:mod:`~calnotes.table1`, :mod:`~calnotes.plotting`, :mod:`~calnotes.claims`,
:mod:`~calnotes.recalibrate`, :mod:`~calnotes.data`, :mod:`~calnotes.evaluation`,
:mod:`~calnotes.rankings`, :mod:`~calnotes.population`, :mod:`~calnotes.kernel`,
:mod:`~calnotes.sharpness`, :mod:`~calnotes.skce`, :mod:`~calnotes.estimators`,
:mod:`~calnotes.utility`, :mod:`~calnotes.patching`.
"""

from .binning import (assign_bins, equal_mass_bin_sizes, equal_mass_bins, equal_width_bins,
                      equal_width_edges, quantile_bin_of_position)
from .measures import (binned_ece, classwise, confidence, confidence_scores, cwce,
                       ks_calibration_error, l1_qece, l2_qece, max_calibration_error,
                       reliability_stats, tce, unbinned_ece)
from .scores import (BRIER, LOG, NEG_ENTROPY, PROPER_LOSSES, SPHERICAL, SQUARED_NORM, ZERO_ONE,
                     BregmanGenerator, ProperLoss, brier_loss, bregman_divergence, divergence,
                     entropy, expected_loss, get_loss, log_loss, log_loss_from_logits,
                     score_decomposition, spherical_loss, zero_one_loss, pool_by_prediction)
from .plotting import reliability_diagram, reliability_panels
from .expectation import (SimulationResult, expected_binned_ece, expected_qece,
                          expected_unbinned_ece, folded_normal_ece_bias,
                          folded_normal_l1_approximation,
                          poisson_binomial_pmf, simulate_qece)
from .decisions import (DEFAULT_LOSSES, DecisionProblem, Dominance, calibrated_expected_qece,
                        dominates, garble, garbling_population, iid_expectation,
                        random_decision_problem, simplex_grid)
from .recalibrate import (AccuracyPreservingTransform, DegenerateFitWarning, DirichletCalibration,
                          HistogramBinning, InputKindWarning, IsotonicCalibration, MatrixScaling,
                          MeanReplacement, Recalibrator, TemperatureScaling, VectorScaling,
                          compare_recalibrators)
from .data.loaders import Predictions, load_predictions, save_predictions
from .inputs import ChunkedPredictions, as_predictions
from .evaluation import EvaluationReport, evaluate
from . import data, estimators, patching, population, rankings, recalibrate, skce, utility


def __getattr__(name):
    # The claims registry imports every checked module (scipy.stats among them, ~1 s); it and
    # kernel / sharpness / exercises load on first use so that `import calnotes` and the
    # command line start quickly (`import calnotes`, and a SmoothECE, import no scipy module
    # at all: tests/test_utility_fast.py checks it).
    if name in ("claims", "kernel", "sharpness", "exercises"):
        import importlib

        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'calnotes' has no attribute {name!r}")


__version__ = "0.2.0"

__all__ = [
    "assign_bins", "equal_mass_bin_sizes", "equal_mass_bins", "equal_width_bins",
    "equal_width_edges", "quantile_bin_of_position",
    "binned_ece", "classwise", "confidence", "confidence_scores", "cwce",
    "ks_calibration_error", "l1_qece", "l2_qece", "max_calibration_error", "reliability_stats",
    "tce", "unbinned_ece",
    "BRIER", "LOG", "NEG_ENTROPY", "PROPER_LOSSES", "SPHERICAL", "SQUARED_NORM", "ZERO_ONE",
    "BregmanGenerator", "ProperLoss", "brier_loss", "bregman_divergence", "divergence",
    "entropy", "expected_loss", "get_loss", "log_loss", "log_loss_from_logits",
    "score_decomposition", "spherical_loss", "zero_one_loss", "pool_by_prediction",
    "reliability_diagram", "reliability_panels",
    "SimulationResult", "expected_binned_ece", "expected_qece", "expected_unbinned_ece",
    "folded_normal_ece_bias", "folded_normal_l1_approximation", "poisson_binomial_pmf",
    "simulate_qece",
    "DEFAULT_LOSSES", "DecisionProblem", "Dominance", "calibrated_expected_qece", "dominates",
    "garble", "garbling_population", "iid_expectation", "random_decision_problem",
    "simplex_grid",
    "AccuracyPreservingTransform", "DegenerateFitWarning", "DirichletCalibration",
    "HistogramBinning", "InputKindWarning", "IsotonicCalibration", "MatrixScaling", "MeanReplacement", "Recalibrator",
    "TemperatureScaling", "VectorScaling", "compare_recalibrators",
    "Predictions", "load_predictions", "save_predictions",
    "EvaluationReport", "evaluate", "as_predictions", "ChunkedPredictions",
    "data", "estimators", "kernel", "patching", "population", "rankings", "recalibrate",
    "sharpness", "skce", "utility",
    "claims", "exercises",
]
