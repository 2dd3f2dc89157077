"""bfloat16 through every door: a NumPy array of ml_dtypes' bfloat16 (what ``np.asarray`` of a
JAX array gives), an object whose ``__array__`` returns one, a torch-like tensor.  Probabilities
are widened to float64 with a note and their row sums checked to bfloat16's precision (they
used to be refused as rounded when they came as a NumPy array, because a NumPy array was
returned before the bfloat16 branch); labels holding whole numbers are read like float64
``0.0/1.0`` labels, up to 256, the largest whole number bfloat16 holds exactly beyond which a
class index may already be rounded.

ml_dtypes is not a dependency: the tests that need it are skipped without it, and a
stand-in -- bfloat16 bit patterns in a 2-byte void dtype, declared bfloat16 through
``calnotes._validate._BFLOAT16_NAMES`` -- exercises the same NumPy-array door without it.
"""

from __future__ import annotations

import numpy as np
import pytest

import calnotes as cn
from calnotes import _validate
from calnotes._validate import BFLOAT16_EPS, check_labels


def _calibrated(n=300, k=3, seed=4):
    rng = np.random.default_rng(seed)
    P = rng.dirichlet([0.7] * k, n)
    y = (P.cumsum(1) > rng.random((n, 1))).argmax(1)
    return P, y


def _bits(values) -> np.ndarray:
    """bfloat16 bit patterns of ``values`` (rounded to nearest even), as uint16."""
    f = np.asarray(values, dtype=np.float32).view(np.uint32)
    rounded = f + 0x7FFF + ((f >> 16) & 1)
    return (rounded >> 16).astype(np.uint16)


def _bf16_as_float(values) -> np.ndarray:
    return (_bits(values).astype(np.uint32) << 16).view(np.float32).astype(np.float64)


class OnlyArray:
    """An object with nothing but ``__array__`` (returning ``arr``) and a dtype."""

    def __init__(self, arr):
        self._arr, self.dtype = arr, arr.dtype

    def __array__(self, dtype=None, copy=None):
        return self._arr


def _report(P, y):
    return cn.evaluate(P, labels=y, significance=False, utility=False, n_bins=[15])


def _check_widened(report, P):
    """The report of bfloat16 probabilities: noted, renormalized, numbers of the widened
    values."""
    assert any(n.startswith("probs: bfloat16 values widened to float64 (row sums checked to"
                            " bfloat16's precision)") for n in report.notes)
    expected = _report(_renormalized(_bf16_as_float(P)), _calibrated()[1])
    assert report.accuracy == expected.accuracy
    assert [r["value"] for r in report.rows] == pytest.approx(
        [r["value"] for r in expected.rows], rel=1e-12, abs=1e-15)


def _renormalized(P):
    sums = P.sum(axis=1, keepdims=True)
    off = np.abs(sums[:, 0] - 1) > 1e-4
    P = P.copy()
    P[off] /= sums[off]
    return P


# ------------------------------------------------------------------ stand-in, no ml_dtypes

@pytest.fixture
def stand_in(monkeypatch):
    """Declare the 2-byte void dtype a bfloat16 dtype (its bytes are bfloat16 patterns)."""
    monkeypatch.setattr(_validate, "_BFLOAT16_NAMES", _validate._BFLOAT16_NAMES + ("|V2",))
    return lambda values: _bits(values).view("V2")


def test_stand_in_numpy_array_is_widened_not_refused_as_rounded(stand_in):
    P, y = _calibrated()
    Pb = stand_in(P)
    dev = np.abs(_bf16_as_float(P).sum(axis=1) - 1).max()
    assert 1e-4 < dev <= 3 * BFLOAT16_EPS            # float64's tolerance would refuse them
    _check_widened(_report(Pb, y), P)
    _check_widened(_report(OnlyArray(Pb), y), P)       # the __array__ door, same numbers


def test_stand_in_labels_with_whole_numbers_are_read(stand_in):
    P, y = _calibrated()
    report = _report(P, stand_in(y))
    assert report.accuracy == _report(P, y).accuracy
    assert "labels: bfloat16 values widened to float64 (whole numbers up to 256 are exact)" \
        in report.notes
    assert check_labels(stand_in(y), 3).tolist() == y.tolist()


def test_stand_in_labels_beyond_256_are_refused(stand_in):
    y = np.array([0, 1, 300])
    with pytest.raises(ValueError, match=r"^labels: labels stored as bfloat16, which holds"
                                         r" whole numbers exactly only up to 256: label 300 at"
                                         r" index 2 may be a rounded class index"):
        cn.as_predictions(np.full((3, 400), 1 / 400), stand_in(y))


def test_float16_labels_follow_the_same_rule():
    P, y = _calibrated()
    assert _report(P, y.astype(np.float16)).accuracy == _report(P, y).accuracy
    with pytest.raises(ValueError, match="float16, which holds whole numbers exactly only up"
                                         " to 2048: label 2050"):
        check_labels(np.array([0, 2050], dtype=np.float16), 3000)


# ------------------------------------------------------------------ ml_dtypes itself

def test_ml_dtypes_bfloat16_through_every_door():
    ml_dtypes = pytest.importorskip("ml_dtypes")
    P, y = _calibrated()
    Pb = P.astype(ml_dtypes.bfloat16)
    assert np.array_equal(Pb.astype(np.float64), _bf16_as_float(P))
    _check_widened(_report(Pb, y), P)
    _check_widened(_report(OnlyArray(Pb), y), P)
    yb = y.astype(ml_dtypes.bfloat16)
    assert _report(P, yb).accuracy == _report(P, y).accuracy
    assert _report(P, OnlyArray(yb)).accuracy == _report(P, y).accuracy
    with pytest.raises(ValueError, match="only up to 256"):
        check_labels(np.array([0, 1000]).astype(ml_dtypes.bfloat16), 2000)


def test_a_dlpack_only_bfloat16_object_gets_a_clear_message():
    class OnlyDLPack:                                # NumPy cannot import bfloat16 DLPack
        dtype = "bfloat16"

        def __dlpack__(self, **kwargs):
            raise BufferError("DLPack only supports signed/unsigned integers, float and"
                              " complex dtypes.")

        def __dlpack_device__(self):
            return (1, 0)

    with pytest.raises(TypeError, match=r"^probs: bfloat16 values that NumPy cannot read"
                                        r" through __dlpack__: .*convert them to float32"):
        cn.as_predictions(OnlyDLPack(), [0, 1])
