"""Arrays too large to read into memory are refused from their headers, before NumPy
allocates them: an ``.npz`` member whose uncompressed size (zip directory, ``.npy`` header)
exceeds :data:`calnotes.data.loaders.MAX_ARRAY_BYTES` (a "zip bomb": megabytes that
decompress to gigabytes), a ``.npy`` file above it or promising more than it holds, a gzipped
CSV that decompresses beyond it.  A ``MemoryError`` on the command line is one line.

The limit is lowered here so that the files stay small.
"""

from __future__ import annotations

import gzip
import io
import zipfile

import numpy as np
import pytest

import calnotes as cn
from calnotes import cli
from calnotes.data import loaders
from calnotes.data.loaders import load_predictions

LIMIT = 100_000                                  # bytes, for these tests


@pytest.fixture
def small_limit(monkeypatch):
    monkeypatch.setattr(loaders, "MAX_ARRAY_BYTES", LIMIT)


def _bomb(path, n=50_000):
    """An .npz of n x 3 zeros (1.2 MB of float64) that compresses to about a kilobyte."""
    np.savez_compressed(path, labels=np.zeros(n, dtype=np.int8), probs=np.zeros((n, 3)))
    return path


def test_default_limit_is_half_the_memory_at_least_256_mb():
    assert loaders.MAX_ARRAY_BYTES >= 1 << 28
    assert loaders.MAX_ARRAY_BYTES <= max(1 << 28, loaders._memory_bytes() // 2)


def test_compressed_npz_member_above_the_limit_is_refused_before_reading(tmp_path,
                                                                         small_limit,
                                                                         monkeypatch):
    path = _bomb(tmp_path / "bomb.npz")
    assert path.stat().st_size < 20_000          # small on disk
    calls = []
    monkeypatch.setattr(np, "load", lambda *a, **k: calls.append(a) or pytest.fail("read"))
    with pytest.raises(ValueError) as info:
        load_predictions(path)
    message = str(info.value)
    assert message.startswith(f"predictions: {path}: array 'probs' holds 1.2 MB")
    assert "(shape (50000, 3), float64;" in message and "in the file)" in message
    assert "above the limit of 100 kB" in message and "MAX_ARRAY_BYTES" in message
    assert "out_of_core=True (command line: --out-of-core)" in message
    assert not calls


def test_npz_within_the_limit_still_loads(tmp_path, small_limit):
    y = np.arange(30) % 2
    P = np.column_stack([np.full(30, 0.3), np.full(30, 0.7)])
    np.savez_compressed(tmp_path / "ok.npz", labels=y, probs=P)
    assert load_predictions(tmp_path / "ok.npz").probs.tolist() == P.tolist()


def test_npz_member_whose_header_promises_more_than_it_holds(tmp_path):
    # a hand-made member: the header says (10**12, 3) float64, the data is a few bytes
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (10 ** 12, 3)})
    path = tmp_path / "liar.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("labels.npy", _npy_bytes(np.zeros(2, dtype=np.int64)))
        z.writestr("probs.npy", header.getvalue() + b"\0" * 48)
    with pytest.raises(ValueError, match=r"array 'probs' holds 24 TB \(shape \(1000000000000,"
                                         r" 3\), float64"):
        load_predictions(path)


def test_truncated_npz_member_is_named(tmp_path):
    header = io.BytesIO()
    np.lib.format.write_array_header_1_0(header, {"descr": "<f8", "fortran_order": False,
                                                  "shape": (100, 3)})
    path = tmp_path / "short.npz"
    with zipfile.ZipFile(path, "w") as z:
        z.writestr("labels.npy", _npy_bytes(np.zeros(100, dtype=np.int64)))
        z.writestr("probs.npy", header.getvalue() + b"\0" * 80)
    with pytest.raises(ValueError, match=r"array 'probs' is truncated: its header promises"
                                         r" shape \(100, 3\), float64, 2.4 kB, but only 80"
                                         r" bytes of data follow"):
        load_predictions(path)


def _npy_bytes(arr):
    buf = io.BytesIO()
    np.save(buf, arr)
    return buf.getvalue()


def test_npy_above_the_limit_and_truncated_npy(tmp_path, small_limit):
    big = tmp_path / "big.npy"
    np.save(big, np.full((20_000, 2), 0.5))
    y = np.zeros(20_000, dtype=int)
    with pytest.raises(ValueError, match=r"^predictions: .*big\.npy holds 320 kB \(shape"
                                         r" \(20000, 2\), float64\), above the limit of 100 kB"):
        cn.evaluate(big, labels=y)
    short = tmp_path / "short.npy"
    short.write_bytes(_npy_bytes(np.full((100, 2), 0.5))[:-8])
    with pytest.raises(ValueError, match=r"short\.npy is truncated: its header promises shape"
                                         r" \(100, 2\), float64, 1.6 kB, but only 1.59 kB"):
        load_predictions(short, labels=np.zeros(100, dtype=int))
    # the limit bounds memory only: out of core reads the same file in row chunks
    assert cn.evaluate(big, labels=y, out_of_core=True).n_samples == 20_000


def test_gzipped_csv_that_decompresses_beyond_the_limit(tmp_path, small_limit):
    rows = "".join(f"{i % 2},0.25,0.75\n" for i in range(20_000))
    path = tmp_path / "p.csv.gz"
    path.write_bytes(gzip.compress(("label,p0,p1\n" + rows).encode()))
    with pytest.raises(ValueError, match=r"^predictions: .*p\.csv\.gz: more than 100 kB once"
                                         r" decompressed"):
        load_predictions(path)


def test_shard_bomb_is_refused_before_out_of_core_reads_it(tmp_path, small_limit):
    folder = tmp_path / "shards"
    folder.mkdir()
    _bomb(folder / "part-0.npz")
    with pytest.raises(ValueError, match=r"predictions \(shard part-0\.npz\): .*array 'probs'"
                                         r" holds 1.2 MB"):
        cn.evaluate(folder)


def test_memory_error_on_the_command_line_is_one_line(tmp_path, monkeypatch, capsys):
    from calnotes import evaluation

    def exhausted(*args, **kwargs):
        raise MemoryError("Unable to allocate 7.11 PiB for an array with shape (10, 10)")

    monkeypatch.setattr(evaluation.entry, "_evaluate_in_memory", exhausted)
    y = np.arange(20) % 2
    cn.save_predictions(tmp_path / "p.npz", y, probs=np.full((20, 2), 0.5))
    assert cli.main(["evaluate", str(tmp_path / "p.npz")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("calnotes: error: out of memory (Unable to allocate 7.11 PiB")
    assert "--out-of-core" in err
    monkeypatch.setattr(evaluation.entry, "_evaluate_in_memory",
                        lambda *a, **k: (_ for _ in ()).throw(MemoryError()))
    assert cli.main(["evaluate", str(tmp_path / "p.npz")]) == 2
    assert capsys.readouterr().err.startswith("calnotes: error: out of memory; evaluate")
