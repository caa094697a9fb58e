"""Kernels that replace general paths (issue 13): lax.top_k (and any sort whose results are only
read through prefix slices), argmax/argmin (the variadic reduce JAX writes), and cumulative
reductions with a general body (lax.cumlogsumexp: a reduce_window over the whole prefix).

Each result is compared bit for bit with XLA:CPU's on inputs full of ties, NaNs of both
signs, infinities and zeros of both signs, in every dtype the kernels specialize; the
cumulative log-sum-exp against a float64 reference as well.
"""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

import jaxcheck

FLOATS = ["float32", "bfloat16", "float16"]
INTS = ["int32", "int8", "uint8"]


def _special(shape, dtype, seed):
    """Values with many ties, and (floats) NaN, -NaN, +-inf, +-0 sprinkled in."""
    rng = np.random.default_rng(seed)
    dt = jaxcheck.dtype(dtype)
    if np.dtype(dt).kind in "iu":
        lo, hi = (0, 12) if np.dtype(dt).kind == "u" else (-6, 6)
        return rng.integers(lo, hi, shape).astype(dt)
    x = np.round(rng.normal(size=shape) * 4) / 4  # ties
    flat = x.reshape(-1)
    n = flat.size
    if n == 0:
        return x.astype(dt)
    for v, frac in ((np.nan, 0.01), (-np.nan, 0.01), (np.inf, 0.01), (-np.inf, 0.01),
                    (0.0, 0.05), (-0.0, 0.05)):
        flat[rng.choice(n, max(1, int(n * frac)), replace=False)] = v
    x = flat.reshape(shape).astype(dt)
    # a -NaN: negate the sign bit of some NaNs (numpy's -np.nan keeps it positive on some builds)
    bits = x.view(np.uint16 if np.dtype(dt).itemsize == 2 else np.uint32)
    sel = rng.random(shape) < 0.5
    bits[np.isnan(x.astype(np.float32)) & sel] |= np.array(1 << (8 * np.dtype(dt).itemsize - 1),
                                                           bits.dtype)
    return x


def _bits(a):
    a = np.asarray(a)
    if a.dtype.kind == "f" or a.dtype.name == "bfloat16":
        return a.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[a.dtype.itemsize])
    return a


def _same(f, *args):
    got = jaxcheck.run_on(jaxcheck.cj(), f, *args)
    want = jaxcheck.run_on(jaxcheck.cpu(), f, *args)
    gl, wl = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(gl) == len(wl)
    for i, (g, w) in enumerate(zip(gl, wl)):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, i
        np.testing.assert_array_equal(_bits(g), _bits(w), err_msg=f"output {i}")


# ---------------------------------------------------------------------------- top_k

@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("k", [1, 5, 16, 17, 70, 300, 333])
def test_top_k(cj, dtype, k):
    x = _special((6, 333), dtype, seed=k)
    _same(lambda x: lax.top_k(x, k), x)


def test_top_k_3d_and_sorted_input(cj):
    x = _special((3, 4, 1000), "float32", seed=1)
    _same(lambda x: [lax.top_k(x, k) for k in (1, 8, 64, 200)], x)
    asc = np.sort(np.random.default_rng(2).normal(size=(4, 2048)).astype(np.float32), axis=1)
    _same(lambda x: [lax.top_k(x, k) for k in (3, 40, 100)], asc)  # every element enters


def test_sort_then_prefix_slices(cj):
    x = _special((5, 600), "float32", seed=3)
    _same(lambda x: (jnp.sort(x, axis=1)[:, :7], jnp.argsort(x, axis=1)[:, 2:40:3],
                     jnp.sort(x, axis=0)[:3]), x)
    # a slice past the prefix bound, and a whole-result use: full sorts
    _same(lambda x: (jnp.sort(x, axis=1)[:, 590:], jnp.sort(x, axis=1)[:, :5] + 1,
                     jnp.sort(x, axis=1)), x)


# ---------------------------------------------------------------------------- argmax/argmin

@pytest.mark.parametrize("dtype", FLOATS + INTS)
@pytest.mark.parametrize("shape,axis", [((256, 512), None), ((256, 512), 0), ((256, 512), 1),
                                        ((8, 16, 32, 32), 0), ((8, 16, 32, 32), 1),
                                        ((8, 16, 32, 32), 2), ((8, 16, 32, 32), 3),
                                        ((3, 1, 5), 1), ((70000,), 0), ((2, 0, 3), 2)])
def test_argmax_argmin(cj, dtype, shape, axis):
    x = _special(shape, dtype, seed=len(shape) * 10 + (axis or 0))
    _same(lambda x: (jnp.argmax(x, axis=axis), jnp.argmin(x, axis=axis)), x)


def _argm_body(gt):
    def body(acc, el):  # the body lax.argmax_p lowers to, both results kept
        (a, ia), (b, ib) = acc, el
        pick = lax.bitwise_or(lax.gt(a, b) if gt else lax.lt(a, b), lax.ne(a, a))
        pick_i = lax.bitwise_or(pick, lax.bitwise_and(lax.eq(a, b), lax.lt(ia, ib)))
        return lax.select(pick, a, b), lax.select(pick_i, ia, ib)
    return body


@pytest.mark.parametrize("dtype", ["float32", "float16", "int32"])
@pytest.mark.parametrize("dims", [(0,), (1,), (0, 1), (0, 2)])
def test_argmax_values_and_indices(cj, dtype, dims):
    """Both results of the variadic reduce, the value's zero sign included, and a permuted
    index operand (not an iota)."""
    x = _special((40, 30, 20), dtype, seed=7)
    idx = np.random.default_rng(8).permutation(x.size).reshape(x.shape).astype(np.int32)
    init = (np.array(-np.inf if dtype != "int32" else -2 ** 31, x.dtype), np.int32(0))
    for gt in (True, False):
        _same(lambda x, i: lax.reduce((x, i), init, _argm_body(gt), dims), x, idx)


def test_argmax_all_nan_and_init_ties(cj):
    x = np.full((4, 100), np.nan, np.float32)
    x[1] = -np.inf
    x[2, 50:] = np.nan
    x[3] = 0.0
    x[3, ::7] = -0.0
    _same(lambda x: (jnp.argmax(x, axis=1), jnp.argmin(x, axis=1), jnp.argmax(x),
                     jnp.argmin(x, axis=0)), x)
    init = (np.float32(-np.inf), np.int32(5))  # an init index that ties with element 0
    _same(lambda x, i: lax.reduce((x, i), init, _argm_body(True), (1,)),
          x, np.broadcast_to(np.arange(100, dtype=np.int32), x.shape).copy())


# ---------------------------------------------------------------------------- cumulative scans

def _logcumsumexp_ref(x, axis, reverse):
    x = np.asarray(x).astype(np.float64)
    if reverse:
        x = np.flip(x, axis)
    out = np.logaddexp.accumulate(x, axis=axis)
    return np.flip(out, axis) if reverse else out


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("axis", [0, 1])
@pytest.mark.parametrize("reverse", [False, True])
def test_cumlogsumexp(cj, dtype, axis, reverse):
    """A reduce_window over the whole prefix with a log-add-exp body: cjrt against a float64
    reference, infinities and NaN kept as XLA:CPU keeps them."""
    rng = np.random.default_rng(axis + 2 * reverse)
    x = (rng.normal(size=(96, 130)) * 3).astype(jaxcheck.dtype(dtype))
    f = lambda x: lax.cumlogsumexp(x, axis=axis, reverse=reverse)  # noqa: E731
    got = np.asarray(jaxcheck.run_on(jaxcheck.cj(), f, x)).astype(np.float64)
    want = np.asarray(jaxcheck.run_on(jaxcheck.cpu(), f, x)).astype(np.float64)
    ref = _logcumsumexp_ref(x, axis, reverse)
    unit = {"float32": 2.0 ** -24, "bfloat16": 2.0 ** -8, "float16": 2.0 ** -11}[dtype]
    err = np.max(np.abs(got - ref) / np.maximum(np.abs(ref), 1.0))
    err_xla = np.max(np.abs(want - ref) / np.maximum(np.abs(ref), 1.0))
    # the body rounds every op to the element type (XLA:CPU keeps excess precision inside its
    # fusion: about half the error); a running fold of the rounded body stays within 16 units
    assert err <= max(16 * unit, 2 * err_xla), (err / unit, err_xla / unit)
    # special values: -inf prefixes stay -inf, +inf and NaN propagate as XLA's
    y = np.array([[-np.inf, -np.inf, 0.0, np.inf, 1.0, -np.inf],
                  [1.0, np.nan, 2.0, -np.inf, 3.0, 4.0]], jaxcheck.dtype(dtype))
    g = lambda y: lax.cumlogsumexp(y, axis=1, reverse=reverse)  # noqa: E731
    np.testing.assert_allclose(
        np.asarray(jaxcheck.run_on(jaxcheck.cj(), g, y)).astype(np.float32),
        np.asarray(jaxcheck.run_on(jaxcheck.cpu(), g, y)).astype(np.float32), rtol=4 * unit)


@pytest.mark.skipif(jaxcheck.OLD_JAX, reason="XLA:CPU of jaxlib 0.7 cannot compile this variadic "
                    "reduce_window (an internal RET_CHECK in its optimizer): no reference there")
def test_cumulative_general_body_variadic_and_non_idempotent_init(cj):
    """Prefix windows with other bodies: a variadic running argmax (both outputs bit-exact), and
    an init that is not the body's identity (body(init, init) != init: the padding counts, and
    the general kernel runs)."""
    x = _special((50, 40), "float32", seed=5)
    # no NaNs: with them this body is not associative, and XLA:CPU folds these windows in an
    # order of its own (the ties, infinities and zeros still pin the in-order fold)
    x = np.where(np.isnan(x), np.float32(1.5), x)
    i = np.broadcast_to(np.arange(40, dtype=np.int32), x.shape).copy()
    n = x.shape[1]

    def running_argmax(x, i):
        return lax.reduce_window((x, i), (np.float32(-np.inf), np.int32(0)), _argm_body(True),
                                 (1, n), (1, 1), ((0, 0), (n - 1, 0)))
    _same(running_argmax, x, i)

    def padded_sum_sq(x):  # body a + b*b with init 1: every padding element adds 1
        return lax.reduce_window(x, np.float32(1.0), lambda a, b: a + b * b, (1, n), (1, 1),
                                 ((0, 0), (n - 1, 0)))
    y = np.random.default_rng(6).integers(-3, 4, (5, n)).astype(np.float32)  # exact sums
    # StableHLO folds the padding (init) elements too: output j adds 1 for each of its n-1-j;
    # XLA:CPU skips padding, so the reference here is the spec's
    got = np.asarray(jaxcheck.run_on(jaxcheck.cj(), padded_sum_sq, y))
    want = 1 + (n - 1 - np.arange(n)) + np.cumsum(y * y, axis=1)
    np.testing.assert_array_equal(got, want.astype(np.float32))
