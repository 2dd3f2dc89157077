"""calnotes: measure the calibration of probabilistic classifiers, and verify the theory.

The public API is flat: ``from calnotes import l2_qece, classwise, brier_loss, evaluate``.
Behind it, the package is grouped by role:

``calnotes.core``
    The measures and scores a reader of the book computes: :mod:`~calnotes.core.binning`,
    :mod:`~calnotes.core.measures` (with :mod:`~calnotes.core.measure_spec`, the one
    specification of each binned measure), :mod:`~calnotes.core.scores`,
    :mod:`~calnotes.core.expectation`, :mod:`~calnotes.core.kernel`,
    :mod:`~calnotes.core.reliability`, :mod:`~calnotes.core.plotting`.
``calnotes.theory``
    The four papers' theory: :mod:`~calnotes.theory.population`,
    :mod:`~calnotes.theory.decisions`, :mod:`~calnotes.theory.sharpness`,
    :mod:`~calnotes.theory.utility`, :mod:`~calnotes.theory.patching`,
    :mod:`~calnotes.theory.skce`, :mod:`~calnotes.theory.estimators`,
    :mod:`~calnotes.theory.symbolic`, :mod:`~calnotes.theory.table1`,
    :mod:`~calnotes.theory.rankings`.
:mod:`calnotes.recalibrate`
    Recalibration maps.
:mod:`calnotes.evaluation`
    ``calnotes evaluate``: the entry point, the report and its verdict, the inputs
    (:mod:`~calnotes.evaluation.inputs`), publishing, and the coverage study of its intervals
    (:mod:`~calnotes.evaluation.coverage`).
``calnotes._engine``
    Private: the sorted-once columns, bin statistics, ties, Poisson-binomial laws, the rows'
    null draws and bootstrap, out of core; its README says what it guarantees.
:mod:`calnotes.data`
    Loading predictions, and the data of the practice chapters.
``calnotes.book``
    The book's own tooling: chapters, notebooks, exercises, the course, tables, the claims
    registry (:mod:`~calnotes.book.claims`).
``calnotes.cli``
    The command line.

The modules' old paths (``calnotes.measures``, ``calnotes.claims``, ...) still import, for
one release (``calnotes._old_paths``).
"""

from . import _old_paths

_old_paths.install()

from .core.binning import (assign_bins, equal_mass_bin_sizes, equal_mass_bins, equal_width_bins,
                           equal_width_edges, quantile_bin_of_position)
from .core.measures import (binned_ece, classwise, confidence, confidence_scores, cwce,
                            ks_calibration_error, l1_qece, l2_qece, max_calibration_error,
                            reliability_stats, tce, unbinned_ece)
from .core.scores import (BRIER, LOG, NEG_ENTROPY, PROPER_LOSSES, SPHERICAL, SQUARED_NORM, ZERO_ONE,
                          BregmanGenerator, ProperLoss, brier_loss, bregman_divergence, divergence,
                          entropy, expected_loss, get_loss, log_loss, log_loss_from_logits,
                          score_decomposition, spherical_loss, zero_one_loss, pool_by_prediction)
from .core.plotting import reliability_diagram, reliability_panels
from .core.expectation import (SimulationResult, expected_binned_ece, expected_qece,
                               expected_unbinned_ece, folded_normal_ece_bias,
                               folded_normal_l1_approximation,
                               poisson_binomial_pmf, simulate_qece)
from .theory.decisions import (DEFAULT_LOSSES, DecisionProblem, Dominance, calibrated_expected_qece,
                               dominates, garble, garbling_population, iid_expectation,
                               random_decision_problem, simplex_grid)
from .recalibrate import (AccuracyPreservingTransform, DegenerateFitWarning, DirichletCalibration,
                          HistogramBinning, InputKindWarning, IsotonicCalibration, MatrixScaling,
                          MeanReplacement, Recalibrator, TemperatureScaling, VectorScaling,
                          compare_recalibrators)
from .data.loaders import Predictions, load_predictions, save_predictions
from .evaluation.inputs import ChunkedPredictions, as_predictions
from .evaluation import EvaluationReport, evaluate
from . import data, recalibrate
from .theory import estimators, patching, population, rankings, skce, utility


def __getattr__(name):
    # A module's old name (calnotes.claims, calnotes.kernel, ...) loads it on first use: the
    # claims registry imports every checked module (scipy.stats among them, ~1 s), so it and
    # kernel / sharpness / exercises are not imported by `import calnotes`, which keeps the
    # command line quick (tests/test_utility_fast.py checks that no scipy module is loaded).
    if name in _old_paths.MOVED:
        import importlib

        return importlib.import_module(f"calnotes.{name}")
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
