"""libcjrt's numpy-style printer (what `cjrt run` prints) against numpy's own str()."""
import numpy as np
import pytest

import cjrt

try:
    import ml_dtypes
except ImportError:  # pragma: no cover
    ml_dtypes = None

rng = np.random.default_rng(0)


def float_cases(t):
    return [
        np.array([1.5, 2.25, 3], t), np.array([[1.5, 2.25], [1e-5, 3]], t),
        np.array([1e-5, 1.5e-5, -np.inf, np.nan], t), np.arange(30, dtype=t) / t(7),
        np.array([0.1, 0.2], t), np.array([0.0, -0.0], t), rng.standard_normal((4, 5)).astype(t),
        (rng.standard_normal(2000) * 100).astype(t), np.array([-np.inf, 1.5, 100], t),
        np.array([np.nan, np.inf], t), np.array([3.14159265358979], t), np.array(3.0, t),
        np.array(1e-5, t), np.array(-0.0, t), np.array(np.nan, t), np.array(0.1, t),
        np.array([0.001, 0.01], t), np.array([1, 1000.5], t), np.array([1e-4, 1], t),
        np.arange(8, dtype=t).reshape(2, 2, 2), (rng.standard_normal((3, 4, 5)) * 100).astype(t),
        np.array([2.0 ** -20], t), np.array([1 / 3], t), np.array([100.0, 200.0], t),
    ]


CASES = []
for _t in (np.float16, np.float32, np.float64):
    CASES += float_cases(_t)
CASES += [
    np.array([1 + 2j, 3 - 4.5j], np.complex64), np.array([1 + 1j, np.nan + 1j, 1 - np.inf * 1j]),
    np.array(1 + 2j, np.complex64), np.array(2j), np.array(complex(1.5, -np.inf)),
    (rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))).astype(np.complex64),
    np.array([True, False]), np.array(True), np.array([[1, -20], [100, 4]], np.int8),
    np.arange(3000).reshape(3, 10, 100), np.array(5, np.int32), np.array([2**64 - 1, 5], np.uint64),
    np.array([-2**63, 5], np.int64), np.zeros((2, 0, 3)), np.zeros((0,)), np.arange(100),
    np.arange(1001, dtype=np.uint8), np.arange(24, dtype=np.int16).reshape(2, 3, 4),
    np.arange(2000, dtype=np.float32).reshape(2, 1000), np.ones((1, 1, 1, 1), np.float32),
]
if ml_dtypes is not None:
    CASES += [
        np.array([1, 2.5, 3], ml_dtypes.bfloat16),
        np.array([np.nan, np.inf, -np.inf, 1e10, 123456789, 1.5e-7, 0.5], ml_dtypes.bfloat16),
        np.array(2.5, ml_dtypes.bfloat16), np.array([1, 0.1], ml_dtypes.float8_e4m3fn),
        np.array([-3, 2], ml_dtypes.int4), np.array(-3, ml_dtypes.int4),
        np.array([[1, 2], [3, 4]], ml_dtypes.uint4), np.array([1, -2], ml_dtypes.float8_e5m2),
    ]


@pytest.mark.parametrize("a", CASES, ids=lambda a: f"{a.dtype}{list(a.shape)}")
def test_format_matches_numpy(a):
    if tuple(int(x) for x in np.__version__.split(".")[:2]) < (2, 3):
        pytest.skip("the printer follows numpy >= 2.3 (type-aware exponent cutoff)")
    assert cjrt.format_array(a) == str(a)
