"""The objects people hold.

The same predictions as NumPy arrays, pandas Series/DataFrames, objects implementing the array
protocols (``__array__``, ``__dlpack__``), a GPU tensor, polars, and a fitted scikit-learn
classifier with ``X`` give identical measure values and identical reports
(:func:`calnotes._validate.as_array`, :meth:`calnotes.data.Predictions.from_estimator`).

Which runs where: torch and polars are not dependencies.  Small stand-ins implementing the
protocols (as torch, polars and CuPy do) run always; the real libraries run where they are
importable (``pytest.importorskip``), and nothing in calnotes imports them (checked in a
subprocess).
"""

from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pandas as pd
import pytest

import calnotes as cn
from calnotes._validate import HostCopyWarning, as_array


# ------------------------------------------------------------------------------ stand-ins

class ArrayTensor:
    """A CPU tensor the way torch presents one: ``__array__``, and a ``dtype`` that NumPy
    cannot interpret (``torch.float32``, which once crashed the measures)."""

    def __init__(self, values):
        self._values = np.asarray(values)
        self.dtype = f"torch.{self._values.dtype}"
        self.shape = self._values.shape

    def __array__(self, dtype=None, copy=None):
        return self._values if dtype is None else self._values.astype(dtype)


class DLPackTensor:
    """Only the DLPack protocol (a JAX or CuPy-on-host array without ``__array__``)."""

    def __init__(self, values):
        self._values = np.ascontiguousarray(values)

    def __dlpack__(self, *args, **kwargs):
        return self._values.__dlpack__(*args, **kwargs)

    def __dlpack_device__(self):
        return self._values.__dlpack_device__()


class CudaTensor:
    """A torch CUDA tensor: ``is_cuda``, ``.cpu()``, and an ``__array__`` that refuses (torch:
    "can't convert cuda:0 device type tensor to numpy")."""

    is_cuda = True
    device = "cuda:0"

    def __init__(self, values, requires_grad=False):
        self._values = np.asarray(values)
        self.requires_grad = requires_grad

    def cpu(self):
        return GradTensor(self._values) if self.requires_grad else ArrayTensor(self._values)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("can't convert cuda:0 device type tensor to numpy. Use Tensor.cpu()")


class GradTensor(ArrayTensor):
    """A tensor with autograd history: ``__array__`` refuses until ``.detach()``."""

    requires_grad = True

    def detach(self):
        return ArrayTensor(self._values)

    def __array__(self, dtype=None, copy=None):
        raise RuntimeError("Can't call numpy() on Tensor that requires grad")


class BFloat16Tensor:
    """A torch bfloat16 tensor: NumPy has no bfloat16, so ``__array__`` refuses;
    ``.float()`` gives float32 (exact)."""

    dtype = "torch.bfloat16"

    def __init__(self, values):
        self._values = _to_bfloat16(values)

    def float(self):
        return ArrayTensor(self._values)

    def __array__(self, dtype=None, copy=None):
        raise TypeError("Got unsupported ScalarType BFloat16")


def _to_bfloat16(values):
    """float32 values rounded (to nearest even) to bfloat16's 8 significant bits."""
    bits = np.asarray(values, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


class PolarsSeries:
    """polars' Series as calnotes sees it: ``to_numpy`` (no ``__array__`` needed)."""

    def __init__(self, values):
        self._values = np.asarray(values)

    def to_numpy(self):
        return self._values


class PolarsFrame:
    """polars' DataFrame as calnotes sees it: ``columns``, ``shape``, ``to_numpy``,
    ``get_column``."""

    def __init__(self, columns: dict):
        self._columns = {name: np.asarray(v) for name, v in columns.items()}

    @property
    def columns(self):
        return list(self._columns)

    @property
    def shape(self):
        return (len(next(iter(self._columns.values()))), len(self._columns))

    def get_column(self, name):
        return PolarsSeries(self._columns[name])

    def to_numpy(self):
        return np.column_stack(list(self._columns.values()))


# ------------------------------------------------------------------------------ data

def _binary(n=240, seed=1):
    rng = np.random.default_rng(seed)
    p = rng.uniform(size=n)
    y = (rng.uniform(size=n) < p).astype(np.int64)
    return y, p


def _multiclass(n=300, k=3, seed=2):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet(np.ones(k), size=n)
    y = (P.cumsum(axis=1) > rng.random((n, 1))).argmax(axis=1)
    return y, P


#: Every form of one array, built from the NumPy array itself.
FORMS = {
    "numpy": lambda a: a,
    "list": lambda a: a.tolist(),
    "pandas": lambda a: pd.Series(a) if a.ndim == 1 else pd.DataFrame(a),
    "__array__": ArrayTensor,
    "__dlpack__": DLPackTensor,
    "cuda": CudaTensor,
    "requires_grad": GradTensor,
    "polars": lambda a: PolarsSeries(a) if a.ndim == 1 else PolarsFrame(
        {f"c{j}": a[:, j] for j in range(a.shape[1])}),
}

BINARY = {
    "binned_ece": lambda y, p: cn.binned_ece(y, p, 10),
    "binned_ece_mass": lambda y, p: cn.binned_ece(y, p, 10, binning="mass", p=2),
    "l1_qece": lambda y, p: cn.l1_qece(y, p, 10),
    "l2_qece": lambda y, p: cn.l2_qece(y, p, 10),
    "max_calibration_error": lambda y, p: cn.max_calibration_error(y, p, 10),
    "ks_calibration_error": cn.ks_calibration_error,
    "unbinned_ece": cn.unbinned_ece,
}

MULTICLASS = {
    "classwise_l2": lambda y, P: cn.classwise(cn.l2_qece, y, P, n_bins=8),
    "classwise_per_class": lambda y, P: cn.classwise(cn.binned_ece, y, P, per_class=True),
    "confidence_l1": lambda y, P: cn.confidence(cn.l1_qece, y, P, n_bins=8),
    "confidence_scores": cn.confidence_scores,
    "tce": cn.tce,
    "cwce": cn.cwce,
    "brier_loss": cn.brier_loss,
    "log_loss": lambda y, P: cn.log_loss(y, P, per_sample=True),
    "spherical_loss": cn.spherical_loss,
    "zero_one_loss": cn.zero_one_loss,
}


def _same(a, b):
    """Exactly equal: floats, arrays and tuples of arrays alike."""
    if isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for u, v in zip(a, b):
            _same(u, v)
        return
    np.testing.assert_array_equal(np.asarray(a), np.asarray(b), strict=True)


def _call(form, y, p, measure):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HostCopyWarning)       # checked on its own below
        return measure(FORMS[form](y), FORMS[form](p))


# ------------------------------------------------------------------------------ measures

@pytest.mark.parametrize("form", [f for f in FORMS if f != "numpy"])
def test_binary_measures_identical_for_every_form(form):
    y, p = _binary()
    for name, measure in BINARY.items():
        expected = measure(y, p)
        assert isinstance(expected, float) and expected > 0, name
        _same(_call(form, y, p, measure), expected)


@pytest.mark.parametrize("form", [f for f in FORMS if f != "numpy"])
def test_multiclass_measures_identical_for_every_form(form):
    y, P = _multiclass()
    for name, measure in MULTICLASS.items():
        _same(_call(form, y, P, measure), measure(y, P))


def test_logits_from_a_tensor():
    y, P = _multiclass()
    Z = np.log(P) + 3.0
    expected = cn.log_loss_from_logits(y, Z)
    for form in ("__array__", "__dlpack__", "cuda", "pandas", "polars"):
        _same(_call(form, y, Z, cn.log_loss_from_logits), expected)


def test_torch_dtype_is_not_handed_to_numpy():
    """``l2_qece(y, torch_tensor, m)`` failed with "Cannot interpret 'torch.float32'
    as a data type" because the tensor's ``dtype`` went to ``numpy.dtype``."""
    y, p = _binary()
    t = ArrayTensor(p.astype(np.float32))
    assert t.dtype == "torch.float32"
    assert cn.l2_qece(y, t, 10) == cn.l2_qece(y, p.astype(np.float32), 10)


def test_gpu_tensor_is_copied_with_a_warning():
    y, p = _binary()
    with pytest.warns(HostCopyWarning, match=r"y_prob: a .*CudaTensor on cuda:0, copied to"
                                             r" host memory \(\.cpu\(\)\)") as record:
        value = cn.l2_qece(y, CudaTensor(p), 10)
    assert value == cn.l2_qece(y, p, 10)
    assert len(record) == 1 and record[0].filename == __file__     # points at the caller


def test_cupy_like_array_is_copied_with_get():
    class CupyArray:
        __cuda_array_interface__ = {}

        def __init__(self, values):
            self._values = values

        def get(self):
            return self._values

    y, P = _multiclass()
    with pytest.warns(HostCopyWarning, match=r"\.get\(\)"):
        value = cn.classwise(cn.l2_qece, y, CupyArray(P), n_bins=8)
    assert value == cn.classwise(cn.l2_qece, y, P, n_bins=8)


def test_jax_array_on_a_gpu_is_noted():
    class Device:
        platform = "gpu"

        def __str__(self):
            return "cuda:0"

    class JaxArray(ArrayTensor):
        device = Device()

    y, p = _binary()
    with pytest.warns(HostCopyWarning, match=r"y_prob: a .*JaxArray on cuda:0, copied to host"
                                             r" memory \(\.__array__\(\)\)"):
        value = cn.binned_ece(y, JaxArray(p))
    assert value == cn.binned_ece(y, p)
    assert not [n for n in cn.evaluate(ArrayTensor(p), labels=y, n_bins=[5], utility=False,
                                       significance=False, smooth_ece=False).notes
                if "host memory" in n]                          # a CPU array: no note


def test_bfloat16_is_widened_with_its_own_tolerance():
    y, P = _multiclass()
    P16 = _to_bfloat16(P).astype(np.float64)
    dev = np.abs(P16.sum(axis=1) - 1.0).max()
    assert 1e-4 < dev <= 3 * 2.0 ** -7                    # refused as float64, not as bfloat16
    with pytest.raises(ValueError, match="row .* sums to"):
        cn.classwise(cn.l2_qece, y, P16, n_bins=8)
    value = cn.classwise(cn.l2_qece, y, BFloat16Tensor(P), n_bins=8, per_class=True)
    _same(value, np.array([cn.l2_qece((y == r).astype(int), P16[:, r], 8) for r in range(3)]))
    _same(as_array(BFloat16Tensor(P)), P16)                # exact: bfloat16 fits float64
    y1, p1 = _binary()
    assert cn.l2_qece(y1, BFloat16Tensor(p1), 10) == cn.l2_qece(y1, _to_bfloat16(p1)
                                                              .astype(np.float64), 10)


@pytest.mark.parametrize("bad, name", [
    (object(), "y_prob"), ({"a": 1}, "y_prob"), ({0.5, 0.2}, "y_prob")])
def test_unsupported_objects_are_refused_naming_the_argument(bad, name):
    y, p = _binary(4)
    with pytest.raises(TypeError, match=rf"^{name}: cannot read an object of type \w+ as an"
                                        " array .*__dlpack__"):
        cn.l2_qece(y, bad, 2)
    with pytest.raises(TypeError, match=r"^y_true: cannot read an object of type"):
        cn.binned_ece(object(), p)


def test_a_failing_protocol_is_named_in_the_error():
    class Broken:
        def __array__(self, dtype=None, copy=None):
            raise RuntimeError("device lost")

    with pytest.raises(TypeError, match=r"^y_prob: cannot read .*Broken.*__array__: device"
                                        " lost"):
        cn.brier_loss([0, 1], Broken())


def test_optional_libraries_are_not_imported():
    code = (
        "import sys, numpy as np, calnotes as cn\n"
        "from tests.test_input_objects import ArrayTensor, CudaTensor, PolarsFrame\n"
        "import warnings; warnings.simplefilter('ignore')\n"
        "y = np.array([0, 1, 1, 0]); P = np.array([[.8, .2], [.3, .7], [.4, .6], [.6, .4]])\n"
        "cn.l2_qece(y, ArrayTensor(P[:, 1]), 2); cn.brier_loss(y, CudaTensor(P))\n"
        "cn.evaluate(PolarsFrame({'a': P[:, 0], 'b': P[:, 1]}), labels=y, n_bins=[2],\n"
        "            significance=False, utility=False, smooth_ece=False, progress=False)\n"
        "bad = [m for m in ('torch', 'polars', 'jax', 'cupy', 'tensorflow') if m in sys.modules]\n"
        "assert not bad, bad\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=str(__import__("pathlib").Path(__file__).parents[1]))
    assert out.returncode == 0, out.stderr[-2000:]


# ------------------------------------------------------------------------------ evaluate

FAST = dict(n_bins=[5, 10], utility=False, smooth_ece=False, draws=19, bootstrap=19,
            progress=False)


def _report_json(report):
    return json.dumps({"rows": report.rows, "scores": report.scores,
                       "accuracy": report.accuracy, "n": report.n_samples,
                       "k": report.n_classes, "confidence": report.mean_confidence},
                      sort_keys=True, default=str)


@pytest.fixture(scope="module")
def multiclass_reference():
    y, P = _multiclass()
    return y, P, _report_json(cn.evaluate(P, labels=y, **FAST))


@pytest.mark.parametrize("form", ["pandas", "__array__", "__dlpack__", "cuda", "polars"])
def test_evaluate_identical_for_every_form(form, multiclass_reference):
    y, P, expected = multiclass_reference
    labels = FORMS[form](y) if form != "polars" else PolarsSeries(y)
    report = cn.evaluate(FORMS[form](P), labels=labels, **FAST)
    assert _report_json(report) == expected
    if form == "cuda":
        assert [n for n in report.notes if "copied to host memory" in n] == [
            "labels: a test_input_objects.CudaTensor on cuda:0, copied to host memory (.cpu())"
            " to be measured",
            "probs: a test_input_objects.CudaTensor on cuda:0, copied to host memory (.cpu())"
            " to be measured"]
    if form in ("pandas", "polars"):           # a DataFrame's columns are the classes
        assert report.class_columns is not None and len(report.class_columns) == 3


def test_evaluate_frame_with_a_label_column_reads_like_a_csv():
    y, P = _multiclass()
    names = np.array(["bird", "cat", "dog"])
    cols = {"label": names[y], "bird": P[:, 0], "cat": P[:, 1], "dog": P[:, 2]}
    expected = _report_json(cn.evaluate(P, labels=y, **FAST))
    pandas = cn.evaluate(pd.DataFrame(cols), **FAST)
    polars = cn.evaluate(PolarsFrame(cols), **FAST)
    for report in (pandas, polars):
        assert _report_json(report) == expected
        assert report.class_columns == ["bird", "cat", "dog"]
        assert report.label_mapping == {"bird": 0, "cat": 1, "dog": 2}


def test_evaluate_bfloat16_tensor_is_noted():
    y, P = _multiclass()
    report = cn.evaluate(BFloat16Tensor(P), labels=y, n_bins=[5], utility=False,
                         smooth_ece=False, significance=False)
    assert any(n.startswith("probs: bfloat16 values widened to float64") for n in report.notes)
    assert any(n.startswith("probs: bfloat16 values, whose rounding") for n in report.notes)
    ref = cn.evaluate(P, labels=y, n_bins=[5], utility=False, smooth_ece=False,
                      significance=False)
    assert report.scores["brier"] == pytest.approx(ref.scores["brier"], rel=1e-2)


# ------------------------------------------------------------------------------ scikit-learn

def _fitted(classes):
    from sklearn.linear_model import LogisticRegression
    rng = np.random.default_rng(3)
    idx = rng.integers(0, len(classes), 400)
    X = rng.normal(size=(400, 3)) + idx[:, None] * 0.8
    y = np.asarray(classes)[idx]
    return LogisticRegression().fit(X[:200], y[:200]), X[200:], y[200:]


@pytest.mark.parametrize("classes", [[0, 1, 2], ["bird", "cat", "dog"], [-1, 1], [1, 2, 3]])
def test_evaluate_a_fitted_classifier(classes, tmp_path):
    model, X, y = _fitted(classes)
    P = model.predict_proba(X)
    index = np.searchsorted(model.classes_, y)           # labels as class indices
    assert model.classes_.tolist() == sorted(classes)
    expected = _report_json(cn.evaluate(P, labels=index, **FAST))
    report = cn.evaluate(model, X=X, labels=y, **FAST)
    assert _report_json(report) == expected
    assert report.class_columns == [str(c) for c in model.classes_]
    assert report.source == "LogisticRegression.predict_proba(X)"
    if classes == [0, 1, 2]:
        assert report.label_mapping is None
    else:
        assert report.label_mapping == {str(c): i for i, c in enumerate(model.classes_)}
    # the same labels in other forms
    assert _report_json(cn.evaluate(model, X=X, labels=pd.Series(y), **FAST)) == expected
    if classes == [1, 2, 3]:                                    # and in a labels file
        np.save(tmp_path / "y.npy", y)
        assert _report_json(cn.evaluate(model, X=X, labels=tmp_path / "y.npy", **FAST)) \
            == expected


def test_classifier_arguments_are_checked():
    model, X, y = _fitted([0, 1])
    with pytest.raises(ValueError, match=r"^X: required with a classifier"):
        cn.evaluate(model, labels=y)
    with pytest.raises(ValueError, match=r"^labels: required with a classifier"):
        cn.evaluate(model, X=X)
    with pytest.raises(ValueError, match=r"^X: applies to a fitted classifier"):
        cn.evaluate(model.predict_proba(X), X=X, labels=y)
    with pytest.raises(ValueError, match=r"^kind: does not apply to a classifier"):
        cn.evaluate(cn.as_predictions(model, y, X=X, kind="logits"))
    with pytest.raises(ValueError, match=r"^labels: label '7' at index 0 is not one of"):
        cn.evaluate(_fitted([3, 5])[0], X=X, labels=np.full(len(y), 7))


# ------------------------------------------------------------------------------ real libraries

def test_real_torch_tensors():
    torch = pytest.importorskip("torch")
    y, P = _multiclass()
    expected = _report_json(cn.evaluate(P, labels=y, **FAST))
    assert _report_json(cn.evaluate(torch.from_numpy(P), labels=torch.from_numpy(y),
                                    **FAST)) == expected
    y1, p1 = _binary()
    t = torch.tensor(p1, dtype=torch.float32, requires_grad=True)
    assert cn.l2_qece(torch.from_numpy(y1), t, 10) == cn.l2_qece(y1, p1.astype(np.float32), 10)
    bf = torch.from_numpy(P).to(torch.bfloat16)
    P16 = bf.float().numpy().astype(np.float64)
    _same(as_array(bf), P16)
    _same(cn.classwise(cn.l2_qece, y, bf, n_bins=8, per_class=True),
          np.array([cn.l2_qece((y == r).astype(int), P16[:, r], 8) for r in range(3)]))


def test_real_polars_frames():
    pl = pytest.importorskip("polars")
    y, P = _multiclass()
    expected = _report_json(cn.evaluate(P, labels=y, **FAST))
    frame = pl.DataFrame({"a": P[:, 0], "b": P[:, 1], "c": P[:, 2]})
    report = cn.evaluate(frame, labels=pl.Series(y), **FAST)
    assert _report_json(report) == expected and report.class_columns == ["a", "b", "c"]
    assert cn.classwise(cn.l2_qece, pl.Series(y), frame, n_bins=8) \
        == cn.classwise(cn.l2_qece, y, P, n_bins=8)
    y1, p1 = _binary()
    assert cn.l2_qece(pl.Series(y1), pl.Series(p1), 10) == cn.l2_qece(y1, p1, 10)
