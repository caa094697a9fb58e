"""libcjrt's .npy reader and writer against numpy's np.save / np.load, for every dtype numpy and
ml_dtypes write, in C and Fortran order."""
import ctypes
import io

import numpy as np
import pytest

import cjrt
from cjrt import _dtypes
from cjrt._lib import Array, lib

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None


def cjrt_read(data, dtype_code=0):
    L = lib()
    arr = Array()
    buf = ctypes.create_string_buffer(data, len(data))
    err = L.cjrt_npy_read_mem(buf, len(data), dtype_code, b"test", ctypes.byref(arr))
    if err:
        msg = L.cjrt_error_message(err).decode()
        L.cjrt_error_free(err)
        raise ValueError(msg)
    try:
        dt = _dtypes.to_numpy(arr.dtype)
        shape = tuple(arr.dims[i] for i in range(arr.rank))
        raw = ctypes.string_at(arr.data, arr.nbytes) if arr.nbytes else b""
        return np.frombuffer(raw, dtype=dt).reshape(shape).copy()
    finally:
        L.cjrt_array_free(ctypes.byref(arr))


def cjrt_write(a, fortran=False):
    L = lib()
    a = np.ascontiguousarray(a) if a.ndim else a.copy()
    dims = (ctypes.c_int64 * max(1, a.ndim))(*a.shape)
    arr = Array(_dtypes.from_numpy(a.dtype), a.ndim, dims, a.ctypes.data, a.nbytes)
    out = ctypes.c_void_p()
    size = ctypes.c_size_t()
    err = L.cjrt_npy_write_mem(ctypes.byref(arr), fortran, ctypes.byref(out), ctypes.byref(size))
    assert not err
    try:
        return ctypes.string_at(out.value, size.value)
    finally:
        L.cjrt_free(out)


def sample(dt, shape=(2, 3, 4)):
    n = int(np.prod(shape))
    if dt == np.bool_:
        return (np.arange(n) % 3 == 0).reshape(shape)
    if dt.kind in "iu":
        return (np.arange(n) * 7 - 5).astype(dt).reshape(shape)
    if dt.kind in "fc":
        return (np.arange(n) / 4 - 2).astype(dt).reshape(shape)
    return (np.arange(n) % 4).astype(dt).reshape(shape)


NUMERIC = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
           "float16", "float32", "float64", "complex64", "complex128"]


@pytest.mark.parametrize("name", NUMERIC)
@pytest.mark.parametrize("order", ["C", "F"])
def test_numpy_writes_we_read(name, order):
    a = np.asarray(sample(np.dtype(name)), order=order)
    f = io.BytesIO()
    np.save(f, a)
    np.testing.assert_array_equal(cjrt_read(f.getvalue()), a)


@pytest.mark.parametrize("name", ["int16", "int32", "int64", "uint32", "float32", "float64", "complex64",
                                  "complex128"])
def test_big_endian(name):
    a = sample(np.dtype(name)).astype(np.dtype(name).newbyteorder(">"))
    f = io.BytesIO()
    np.save(f, a)
    np.testing.assert_array_equal(cjrt_read(f.getvalue()), a)


@pytest.mark.parametrize("code", _dtypes.all_codes(), ids=_dtypes.name_of)
@pytest.mark.parametrize("fortran", [False, True])
def test_we_write_numpy_reads(code, fortran):
    dt = _dtypes.to_numpy(code)
    a = sample(dt)
    data = cjrt_write(a, fortran)
    back = np.load(io.BytesIO(data))
    if dt.kind == "V" or back.dtype.kind == "V":  # ml_dtypes types come back as raw bytes
        back = back.view(dt)
    assert back.dtype == dt
    assert back.shape == a.shape and np.ascontiguousarray(back).tobytes() == a.tobytes()
    assert back.flags.f_contiguous == (fortran and a.ndim > 1)
    # and our reader takes our file back (with the type for '<V1' files)
    assert cjrt_read(data, code if dt.itemsize == 1 else 0).tobytes() == a.tobytes()


def test_ml_dtypes_files():
    if ml_dtypes is None:
        pytest.skip("needs ml_dtypes")
    for t, code in ((ml_dtypes.bfloat16, 0), (ml_dtypes.float8_e5m2, 0),
                    (ml_dtypes.float8_e4m3fn, 17), (ml_dtypes.int4, 21)):
        a = sample(np.dtype(t))
        f = io.BytesIO()
        np.save(f, a)
        back = cjrt_read(f.getvalue(), code)
        assert back.dtype == np.dtype(t)
        np.testing.assert_array_equal(back, a)
    f = io.BytesIO()
    np.save(f, sample(np.dtype(ml_dtypes.float8_e4m3fn)))
    with pytest.raises(ValueError, match="give the type"):
        cjrt_read(f.getvalue())


@pytest.mark.parametrize("a", [np.array(2.5), np.zeros((0, 3), np.float32), np.arange(70000, dtype=np.int8)],
                         ids=["scalar", "empty", "large"])
def test_shapes(a):
    f = io.BytesIO()
    np.save(f, a)
    np.testing.assert_array_equal(cjrt_read(f.getvalue()), a)
    np.testing.assert_array_equal(np.load(io.BytesIO(cjrt_write(a))), a)


def test_rejects_other_dtypes():
    for a in (np.array(["ab"]), np.zeros(2, [("x", "<i4")]), np.zeros(2, "M8[s]"), np.array([None], object)):
        f = io.BytesIO()
        np.save(f, a, allow_pickle=True)
        with pytest.raises(ValueError, match="unsupported dtype"):
            cjrt_read(f.getvalue())


def test_format_helper_is_exported():
    assert cjrt.format_array(np.array([1.5, 2.0], np.float32)) == "[1.5 2. ]"
