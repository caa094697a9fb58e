"""Accuracy of large reductions (issue 11 item 11): cjrt against a float64 numpy reference of
the same (already rounded) inputs, next to XLA:CPU's error on the same program and inputs.

A long naive running sum loses digits (32,768 f32 values around 2.0 summed one after the other
are off by ~5e-6 relative); partial sums per lane and per block combined pairwise (or XLA's
tree of windows) stay near 1e-7. Each case checks that cjrt's error is no worse than about
twice XLA:CPU's (or one rounding of the result type, when XLA happens to be exact) and below a
fixed bound, for every axis combination of a 4-D array, for sum, mean and variance, in f32,
bf16 and f16 (sums in the input type through lax.reduce as well as jnp's upcasting sum), and
for cumulative sums along long axes.
"""
import itertools

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

import jaxcheck

SHAPE = (32, 32, 32, 32)
AXES = [c for k in range(1, 5) for c in itertools.combinations(range(4), k)]
DTYPES = ["float32", "bfloat16", "float16"]
# the rounding error of one correctly rounded result, relative (unit roundoff)
UNIT = {"float32": 2.0 ** -24, "bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}
# the fixed bounds (relative to the largest reference magnitude): f32 within 16 unit roundoffs
# (a naive sum of 32,768 elements was ~80), 16-bit results within two of theirs
BOUND = {"float32": 16 * UNIT["float32"], "bfloat16": 2 * UNIT["bfloat16"],
         "float16": 2 * UNIT["float16"]}


def _inputs(dtype, scale=1.0):
    rng = np.random.default_rng(11)
    x = (2.0 + 0.5 * rng.random(SHAPE)) * scale
    x = np.asarray(x.astype(jaxcheck.dtype(dtype)))  # the inputs both platforms see
    return x, x.astype(np.float64)


def _err(got, ref):
    got = np.asarray(got).astype(np.float64)
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300))


def _both(f, x):
    return (np.asarray(jaxcheck.run_on(jaxcheck.cj(), f, x)),
            np.asarray(jaxcheck.run_on(jaxcheck.cpu(), f, x)))


def _check(what, dtype, cj_out, xla_out, ref):
    assert cj_out.dtype == xla_out.dtype, what
    e_cj, e_xla = _err(cj_out, ref), _err(xla_out, ref)
    allowed = min(max(2 * e_xla, UNIT[dtype]), BOUND[dtype])
    assert e_cj <= allowed, (f"{what} {dtype}: cjrt relative error {e_cj:.3g}, XLA:CPU "
                             f"{e_xla:.3g}, allowed {allowed:.3g}")


# name: (jax function of (x, axes), float64 reference, input scale per dtype)
def _sum_raw(x, axes):  # in the input type: the reduce body adds bf16/f16 values
    return lax.reduce(x, np.array(0, x.dtype), lax.add, axes)


OPS = {
    "sum": (lambda x, a: jnp.sum(x, axis=a), lambda r, a: r.sum(axis=a)),
    "sum_raw": (_sum_raw, lambda r, a: r.sum(axis=a)),
    "mean": (lambda x, a: jnp.mean(x, axis=a), lambda r, a: r.mean(axis=a)),
    "var": (lambda x, a: jnp.var(x, axis=a), lambda r, a: r.var(axis=a)),
}


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("op", sorted(OPS))
def test_reduce_accuracy_every_axis_combination(cj, op, dtype):
    f, ref_f = OPS[op]
    # f16 sums of 32,768 values around 2 would overflow: smaller values there
    scale = 1.0 / 64 if dtype == "float16" and op.startswith("sum") else 1.0
    x, r = _inputs(dtype, scale)
    failures = []
    for axes in AXES:
        cj_out, xla_out = _both(lambda v: f(v, axes), x)
        try:
            _check(f"{op} over axes {axes}", dtype, cj_out, xla_out, ref_f(r, axes))
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_mean_over_leading_axes_matches_issue_case(cj):
    """The case of the issue: per-channel mean over axes 0, 1, 2 (32,768 elements each)."""
    x, r = _inputs("float32")
    cj_out, xla_out = _both(lambda v: jnp.mean(v, axis=(0, 1, 2)), x)
    assert _err(cj_out, r.mean(axis=(0, 1, 2))) < 4 * UNIT["float32"]
    _check("mean over axes (0, 1, 2)", "float32", cj_out, xla_out, r.mean(axis=(0, 1, 2)))


CUM_SHAPES = [((1 << 20,), 0), ((4096, 64), 0), ((64, 4096), 1), ((16, 4096, 4), 1)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", CUM_SHAPES)
def test_cumsum_accuracy(cj, shape, axis, reverse, dtype):
    rng = np.random.default_rng(13)
    n = shape[axis]
    # keep 16-bit prefix sums in range: values around 2 / n * 1000
    scale = 1.0 if dtype != "float16" else 256.0 / n
    x = np.asarray(((2.0 + 0.5 * rng.random(shape)) * scale).astype(jaxcheck.dtype(dtype)))
    r = x.astype(np.float64)
    if reverse:
        ref = np.flip(np.cumsum(np.flip(r, axis), axis=axis), axis)
    else:
        ref = np.cumsum(r, axis=axis)
    f = lambda v: lax.cumsum(v, axis=axis, reverse=reverse)
    cj_out, xla_out = _both(f, x)
    # elementwise relative error: every prefix, the short ones too, is a result
    got_cj = np.abs(cj_out.astype(np.float64) - ref) / np.abs(ref)
    got_xla = np.abs(xla_out.astype(np.float64) - ref) / np.abs(ref)
    e_cj, e_xla = float(got_cj.max()), float(got_xla.max())
    allowed = min(max(2 * e_xla, UNIT[dtype]), BOUND[dtype])
    assert e_cj <= allowed, (f"cumsum {shape} axis {axis} reverse={reverse} {dtype}: cjrt "
                             f"{e_cj:.3g}, XLA:CPU {e_xla:.3g}, allowed {allowed:.3g}")


@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "float16"])
@pytest.mark.parametrize("axis", [0, 1, None])
def test_max_min_nan_and_signed_zeros(cj, dtype, axis):
    """The vectorized max/min keep StableHLO's rules: a NaN anywhere gives NaN, max(-0, +0) is
    +0 and min(-0, +0) is -0, along kept and reduced innermost dims alike."""
    with jaxcheck.x64(dtype == "float64"):
        rng = np.random.default_rng(5)
        x = rng.standard_normal((300, 1000)).astype(jaxcheck.dtype(dtype))
        x[7, 123] = np.nan
        x[250, 999] = np.nan
        x[:, 500] = np.nan
        z = np.where(rng.random((300, 1000)) < 0.5, -0.0, 0.0).astype(jaxcheck.dtype(dtype))
        z[:, :7] = -0.0  # all -0 in those columns: both results -0 there
        for f, npf, zero_sign in ((jnp.max, np.max, False), (jnp.min, np.min, True)):
            got = np.asarray(jaxcheck.run_on(jaxcheck.cj(), lambda v: f(v, axis=axis), x))
            want = npf(x.astype(np.float64), axis=axis)
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
            ok = ~np.isnan(want)
            np.testing.assert_array_equal(got.astype(np.float64)[ok], want[ok])
            gz = np.asarray(jaxcheck.run_on(jaxcheck.cj(), lambda v: f(v, axis=axis), z))
            zf = z.astype(np.float64)
            # max is -0 only where every element is -0; min is -0 where any is
            neg = np.signbit(zf)
            want_sign = neg.any(axis=axis) if zero_sign else neg.all(axis=axis)
            np.testing.assert_array_equal(np.signbit(gz.astype(np.float64)), want_sign)
