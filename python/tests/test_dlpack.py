"""DLPack both ways: numpy, JAX, torch (when importable), legacy and versioned capsules, zero copy
checked by pointer, and every exported or imported tensor freed exactly once."""
import ctypes
import gc
import os
import subprocess
import sys

import numpy as np
import pytest

import cjrt
from cjrt import _dlpack

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None


def capsule_name(cap):
    ctypes.pythonapi.PyCapsule_GetName.restype = ctypes.c_char_p
    ctypes.pythonapi.PyCapsule_GetName.argtypes = [ctypes.py_object]
    return ctypes.pythonapi.PyCapsule_GetName(cap).decode()


# ---- export: cjrt buffer -> consumers ----

def test_numpy_from_dlpack_is_zero_copy(client, no_leaks):
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    buf = client.put(a)
    v = np.from_dlpack(buf)
    assert v.ctypes.data == buf.unsafe_buffer_pointer()
    np.testing.assert_array_equal(v, a)
    assert not v.flags.writeable  # PJRT buffers are immutable: exported read-only
    # the view keeps the buffer's memory alive after the Python buffer is gone
    del buf
    gc.collect()
    np.testing.assert_array_equal(v, a)
    del v


@pytest.mark.parametrize("max_version,name,version", [
    (None, "dltensor", None), ((0, 8), "dltensor", None), ((1, 0), "dltensor_versioned", (1, 0)),
    ((1, 1), "dltensor_versioned", (1, 1)), ((1, 5), "dltensor_versioned", (1, 1)),
    ((2, 0), "dltensor_versioned", (1, 1))])
def test_capsule_versions(client, max_version, name, version, no_leaks):
    buf = client.put(np.arange(4, dtype=np.int32))
    cap = buf.__dlpack__(max_version=max_version) if max_version else buf.__dlpack__()
    assert capsule_name(cap) == name
    managed, versioned = _dlpack.open_capsule(cap)
    assert versioned == (version is not None)
    if versioned:
        major, minor = (ctypes.c_uint32 * 2).from_address(managed)
        assert (major, minor) == version
    # an unconsumed capsule releases its tensor (and the buffer) when it goes away
    del cap, buf


def test_consumers_of_both_capsules(client, no_leaks):
    buf = client.put(np.arange(6, dtype=np.float64))
    ptr = buf.unsafe_buffer_pointer()
    # a legacy consumer (no max_version) and a versioned one share the same memory
    legacy = client.from_dlpack(buf.__dlpack__())
    versioned = client.from_dlpack(buf.__dlpack__(max_version=(1, 0)))
    assert legacy.unsafe_buffer_pointer() == ptr == versioned.unsafe_buffer_pointer()
    assert not legacy._copied_on_import and not versioned._copied_on_import
    del buf, legacy, versioned


def test_exported_many_times_freed_once(client):
    gc.collect()
    before = cjrt.live_buffers()
    buf = client.put(np.ones((64, 64), np.float32))
    views = [np.from_dlpack(buf) for _ in range(20)]
    del buf
    gc.collect()
    assert cjrt.live_buffers() == before + 1  # still held by the views
    del views
    gc.collect()
    assert cjrt.live_buffers() == before


def test_types_dlpack_cannot_carry(client):
    if ml_dtypes is None:
        pytest.skip("needs ml_dtypes")
    b4 = client.put(np.array([1, -2], ml_dtypes.int4))
    with pytest.raises(BufferError, match="one byte each"):
        b4.__dlpack__()
    # numpy asks for DLPack 1.0: float8 codes only exist from 1.1 on
    f8 = client.put(np.array([1, 2], ml_dtypes.float8_e4m3fn))
    with pytest.raises(BufferError, match="float8 type codes exist from DLPack 1.1"):
        f8.__dlpack__(max_version=(1, 0))
    # a 1.1 consumer gets them (padded sub-byte types flagged as such)
    cap = b4.__dlpack__(max_version=(1, 1))
    buf = client.from_dlpack(cap)
    assert buf.dtype == np.dtype(ml_dtypes.int4)
    np.testing.assert_array_equal(np.asarray(buf), np.array([1, -2], ml_dtypes.int4))


def test_bool_and_complex_to_numpy(client, no_leaks):
    cases = [np.array([1 + 2j, 3 - 4j], np.complex128)]
    if np.lib.NumpyVersion(np.__version__) >= "1.25.0":  # older numpy cannot import kDLBool
        cases.append(np.array([True, False, True]))
    for a in cases:
        buf = client.put(a)
        v = np.from_dlpack(buf)
        assert v.ctypes.data == buf.unsafe_buffer_pointer()
        np.testing.assert_array_equal(v, a)
        del v, buf


def test_dlpack_device_and_copy(client, no_leaks):
    buf = client.put(np.arange(3, dtype=np.float32))
    assert buf.__dlpack_device__() == (1, 0)
    with pytest.raises(BufferError, match="not \\(2, 0\\)"):
        buf.__dlpack__(dl_device=(2, 0))
    cap = buf.__dlpack__(copy=True)  # a copy, exported by numpy
    c = client.from_dlpack(cap)
    assert c.unsafe_buffer_pointer() != buf.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(c), [0, 1, 2])


# ---- import: numpy -> cjrt ----

def test_import_numpy_zero_copy_and_released_once(client, no_leaks):
    a = np.arange(64, dtype=np.float32).reshape(8, 8)
    refs = sys.getrefcount(a)
    buf = client.from_dlpack(a)
    assert buf.unsafe_buffer_pointer() == a.ctypes.data
    assert not buf._copied_on_import
    assert sys.getrefcount(a) > refs  # numpy's tensor holds the array while the buffer views it
    np.testing.assert_array_equal(np.asarray(buf), a)
    del buf
    gc.collect()
    assert sys.getrefcount(a) == refs  # numpy's deleter ran, exactly once


def test_import_slices(client, no_leaks):
    base = np.arange(100, dtype=np.int64).reshape(10, 10)
    rows = base[2:5]  # contiguous rows: the pointer moves, no copy
    buf = client.from_dlpack(rows)
    assert buf.unsafe_buffer_pointer() == rows.ctypes.data == base.ctypes.data + 2 * 10 * 8
    np.testing.assert_array_equal(np.asarray(buf), rows)
    cols = base[:, 3:5]  # strided: copied in one pass
    buf2 = client.from_dlpack(cols)
    assert buf2._copied_on_import
    np.testing.assert_array_equal(np.asarray(buf2), cols)
    with pytest.raises(BufferError, match="without a copy"):
        client.from_dlpack(base.T, copy=False)
    t = client.from_dlpack(base.T)
    np.testing.assert_array_equal(np.asarray(t), base.T)
    del buf, buf2, t


def test_import_copy_true_and_consumed_capsule(client, no_leaks):
    a = np.arange(5, dtype=np.int16)
    buf = client.from_dlpack(a, copy=True)
    assert buf.unsafe_buffer_pointer() != a.ctypes.data
    cap = a.__dlpack__()
    b2 = client.from_dlpack(cap)
    with pytest.raises(BufferError, match="already consumed"):
        client.from_dlpack(cap)
    del buf, b2


# ---- JAX ----

def test_jax_both_ways(client, no_leaks):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    x = jnp.arange(16, dtype=jnp.float32).reshape(4, 4)
    # JAX -> cjrt: a view of JAX's buffer
    buf = client.from_dlpack(x)
    assert buf.unsafe_buffer_pointer() == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(buf), np.asarray(x))
    # cjrt -> JAX
    src = client.put(np.arange(6, dtype=np.float32).reshape(2, 3))
    y = jax.dlpack.from_dlpack(src)
    assert y.unsafe_buffer_pointer() == src.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(y), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert float((y * 2).sum()) == 30.0
    del buf, src, y, x
    gc.collect()


@pytest.mark.parametrize("name", ["bool", "int8", "uint8", "uint16", "int32", "float16", "complex64"])  # JAX without x64: no 64-bit types
def test_jax_dtypes(client, name, no_leaks):
    jax = pytest.importorskip("jax")
    a = np.arange(6).astype(name).reshape(2, 3)
    x = jax.numpy.asarray(a)
    buf = client.from_dlpack(x)
    assert not buf._copied_on_import and buf.unsafe_buffer_pointer() == x.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(buf), np.asarray(x))
    src = client.put(a)
    y = jax.dlpack.from_dlpack(src)
    assert y.unsafe_buffer_pointer() == src.unsafe_buffer_pointer()
    np.testing.assert_array_equal(np.asarray(y), a)
    del buf, src, y, x
    gc.collect()


def test_jax_bfloat16(client, no_leaks):
    jax = pytest.importorskip("jax")
    x = jax.numpy.arange(8, dtype=jax.numpy.bfloat16)
    buf = client.from_dlpack(x)
    assert buf.dtype == np.dtype(jax.numpy.bfloat16)
    np.testing.assert_array_equal(np.asarray(buf), np.asarray(x))
    y = jax.dlpack.from_dlpack(buf)
    assert y.dtype == jax.numpy.bfloat16
    np.testing.assert_array_equal(np.asarray(y), np.asarray(x))
    del buf, y, x
    gc.collect()


# ---- torch (if importable here) ----

def test_torch_both_ways(client, no_leaks):
    torch = pytest.importorskip("torch")
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    buf = client.from_dlpack(t)
    assert buf.unsafe_buffer_pointer() == t.data_ptr()
    src = client.put(np.arange(6, dtype=np.int64))
    u = torch.from_dlpack(src)
    assert u.data_ptr() == src.unsafe_buffer_pointer()
    assert u.tolist() == list(range(6))
    del buf, src, u


# ---- Debian's interpreter: numpy 1.24 and PyTorch 1.13 speak only the legacy capsule ----

SYSTEM_SCRIPT = r"""
import gc, sys
import numpy as np
import cjrt
client = cjrt.Client()
before = cjrt.live_buffers()
a = np.arange(12, dtype=np.float32).reshape(3, 4)
buf = client.from_dlpack(a)                      # numpy 1.24's __dlpack__ has no max_version
assert buf.unsafe_buffer_pointer() == a.ctypes.data, "numpy import copied"
v = np.from_dlpack(client.put(a))                # numpy 1.24 consumes the legacy capsule
assert np.array_equal(v, a)
try:
    import torch
except ImportError:
    torch = None
if torch is not None:
    t = torch.arange(6, dtype=torch.float64)
    tb = client.from_dlpack(t)
    assert tb.unsafe_buffer_pointer() == t.data_ptr(), "torch import copied"
    src = client.put(np.arange(4, dtype=np.int32))
    u = torch.utils.dlpack.from_dlpack(src)
    assert u.data_ptr() == src.unsafe_buffer_pointer(), "torch export copied"
    assert u.tolist() == [0, 1, 2, 3]
    del t, tb, src, u
del buf, v
gc.collect()
assert cjrt.live_buffers() == before, (cjrt.live_buffers(), before)
print("ok", np.__version__, torch.__version__ if torch else "no torch")
"""


def test_system_python_legacy_path(plugin):
    py = "/usr/bin/python3"
    if not os.path.exists(py):
        pytest.skip("no /usr/bin/python3")
    probe = subprocess.run([py, "-c", "import numpy"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("Debian's python3 has no numpy (apt install python3-numpy python3-torch)")
    env = dict(os.environ)
    env["PYTHONPATH"] = os.path.join(ROOT, "python")
    if plugin:
        env["CJRT_PLUGIN"] = plugin
    r = subprocess.run([py, "-c", SYSTEM_SCRIPT], capture_output=True, text=True, env=env, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.startswith("ok")
