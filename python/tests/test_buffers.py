"""Clients, devices and numpy round trips of every element type through the plugin."""
import gc
import threading

import numpy as np
import pytest

import cjrt
from cjrt import _dtypes

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None


def test_client_describes_itself(client):
    assert client.platform
    assert client.api_version[0] == 0 and client.api_version[1] >= 57
    assert "xla_version" in client.plugin_attributes
    devs = client.devices
    assert len(devs) == 2 and client.addressable_devices == devs
    assert [d.id for d in devs] == sorted(d.id for d in devs)
    for d in devs:
        assert d.is_addressable and d.kind and repr(d) and str(d)
        assert d.default_memory() in d.memories
        assert d in d.default_memory().devices
        assert isinstance(d.attributes, dict)
    assert client.memories


def test_client_options_and_errors(plugin):
    c = cjrt.Client(plugin, cpu_device_count=3)
    assert len(c.devices) == 3
    with pytest.raises(cjrt.CjrtError) as e:
        cjrt.Client(plugin, no_such_option=1)
    assert e.value.code == "INVALID_ARGUMENT" and "no_such_option" in str(e.value)
    with pytest.raises(cjrt.CjrtError) as e:
        cjrt.Client("/nonexistent/plugin.so")
    assert e.value.code == "NOT_FOUND"
    with pytest.raises(TypeError):
        cjrt.Client(plugin, bad={"a": 1})


def _sample(dtype, shape, seed=0):
    r = np.random.default_rng(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return r.integers(0, 2, shape).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return r.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    if dt.kind == "c":
        return (r.standard_normal(shape) + 1j * r.standard_normal(shape)).astype(dt)
    if dt.kind == "f":
        return (r.standard_normal(shape) * 10).astype(dt)
    # ml_dtypes types: values from a small range every one of them can hold
    try:
        info = ml_dtypes.iinfo(dt)
        return r.integers(info.min, info.max, shape, endpoint=True).astype(dt)
    except ValueError:
        return (r.integers(0, 4, shape) * 0.5).astype(dt)


ALL_CODES = _dtypes.all_codes()


@pytest.mark.parametrize("code", ALL_CODES, ids=_dtypes.name_of)
def test_round_trip_every_dtype(client, code, no_leaks):
    dt = _dtypes.to_numpy(code)
    a = _sample(dt, (3, 4, 5), seed=code)
    buf = client.put(a)
    assert buf.dtype == dt and buf.shape == (3, 4, 5) and buf.ndim == 3 and buf.size == 60
    assert buf.nbytes == a.nbytes
    back = np.asarray(buf)
    assert back.dtype == dt
    assert back.tobytes() == a.tobytes()
    del buf, back


@pytest.mark.parametrize("make", [
    lambda: np.arange(12, dtype=np.float32).reshape(3, 4).T,          # transposed
    lambda: np.arange(24, dtype=np.int32).reshape(4, 6)[::2, 1::2],   # sliced
    lambda: np.arange(10, dtype=np.float64)[::-1],                    # negative stride
    lambda: np.asfortranarray(np.arange(6, dtype=np.int16).reshape(2, 3)),
    lambda: np.arange(6, dtype=">i4").reshape(2, 3),                  # big-endian
    lambda: np.array(3.5, np.float32),                                # 0-d
    lambda: np.zeros((0, 3), np.float32),                             # empty
    lambda: np.broadcast_to(np.arange(3, dtype=np.float32), (4, 3)),  # zero strides
], ids=["transposed", "sliced", "reversed", "fortran", "bigendian", "scalar", "empty", "broadcast"])
def test_layouts(client, make, no_leaks):
    a = make()
    buf = client.put(a)
    np.testing.assert_array_equal(np.asarray(buf), a)
    assert np.asarray(buf).dtype == a.dtype.newbyteorder("=")


def test_put_on_device_and_copy(client, no_leaks):
    d0, d1 = client.devices
    a = np.arange(6, dtype=np.float32)
    b1 = client.put(a, device=d1)
    assert b1.device == d1
    b0 = b1.copy_to_device(d0)
    assert b0.device == d0
    np.testing.assert_array_equal(np.asarray(b0), a)
    assert client.put(a, device=d1.id).device == d1
    with pytest.raises(ValueError):
        client.put(a, device=99)


def test_unsupported_dtypes(client):
    for bad in (np.array(["a", "b"]), np.array([object()]), np.zeros(2, "M8[s]")):
        with pytest.raises(TypeError, match="has no PJRT element type"):
            client.put(bad)


def test_delete(client, no_leaks):
    buf = client.put(np.ones(4, np.float32))
    assert not buf.is_deleted()
    buf.delete()
    assert buf.is_deleted()
    with pytest.raises(cjrt.CjrtError):
        np.asarray(buf)
    with pytest.raises(BufferError, match="deleted"):
        np.from_dlpack(buf)


def test_threads(client, no_leaks):
    errors = []

    def work(k):
        try:
            for i in range(50):
                a = np.full((8, 8), k * 100 + i, np.int32)
                assert np.array_equal(np.asarray(client.put(a)), a)
        except Exception as e:  # pragma: no cover - reported below
            errors.append(e)

    ts = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errors
    gc.collect()


def test_buffer_outlives_client_object(plugin, no_leaks):
    c = cjrt.Client(plugin)
    buf = c.put(np.arange(3.0))
    c.close()
    del c
    gc.collect()
    np.testing.assert_array_equal(np.asarray(buf), np.arange(3.0))
