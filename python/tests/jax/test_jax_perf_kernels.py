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


# ---------------------------------------------------------------------------- scatter

SCATTER_DTYPES = FLOATS + INTS


def _exact(shape, dtype, seed):
    """Small multiples of 1/4 (floats) or small integers: sums of a few are exact in every
    dtype, so any accumulation order gives XLA:CPU's bits."""
    rng = np.random.default_rng(seed)
    dt = jaxcheck.dtype(dtype)
    if np.dtype(dt).kind == "u":
        return rng.integers(0, 4, shape).astype(dt)
    if np.dtype(dt).kind == "i":
        return rng.integers(-3, 4, shape).astype(dt)
    return (rng.integers(-8, 9, shape) / 4).astype(dt)


def _idx(n, count, seed, oob=False):
    """Indices in [0, n) with many duplicates (a Zipf-like skew); with oob, some negative and
    some >= n as well."""
    rng = np.random.default_rng(seed)
    i = np.minimum(rng.zipf(1.5, count) - 1, n - 1)
    if oob:
        sel = rng.random(count)
        i = np.where(sel < 0.1, -1 - rng.integers(0, 3, count), i)
        i = np.where(sel > 0.9, n + rng.integers(0, 3, count), i)
    return i.astype(np.int32)


INITS = {
    "zeros": lambda shape, dt: jnp.zeros(shape, dt),
    "splat": lambda shape, dt: jnp.full(shape, 3, dt),
    "row_bcast": lambda shape, dt: jnp.broadcast_to(
        jnp.arange(shape[-1], dtype=dt)[None, :] % 5, shape),
    "col_bcast": lambda shape, dt: jnp.broadcast_to(
        jnp.arange(shape[0], dtype=dt)[:, None] % 3, shape),
}


@pytest.mark.parametrize("dtype", SCATTER_DTYPES)
@pytest.mark.parametrize("init", sorted(INITS))
@pytest.mark.parametrize("op", ["add", "max", "min", "mul", "set"])
def test_scatter_into_broadcast_rows(cj, dtype, init, op):
    """Whole rows scattered (an embedding gradient) into a broadcast that stays a view (the
    scatter's initial copy fills it): duplicates combine, the row window is contiguous."""
    dt = jaxcheck.dtype(dtype)
    ids = _idx(40, 96, seed=1)
    u = _exact((96, 24), dtype, seed=2)

    def f(ids, u):
        t = INITS[init]((40, 24), dt)
        return getattr(t.at[ids], op)(u), t.at[ids].get().sum(0) if op == "add" else u
    _same(f, ids, u)


@pytest.mark.parametrize("dtype", SCATTER_DTYPES)
@pytest.mark.parametrize("mode", ["drop", "clip", "promise_in_bounds"])
def test_scatter_into_broadcast_modes_and_windows(cj, dtype, mode):
    """Out-of-bounds modes (a window partly or wholly outside is dropped or clipped), windows
    that are not contiguous in the result (a column range of rows, a [k, 2, 3] block of a 3-D
    table), one-element windows, and a 2-D index vector."""
    dt = jaxcheck.dtype(dtype)
    oob = mode != "promise_in_bounds"
    ids = _idx(30, 64, seed=3, oob=oob)
    cols = _exact((64, 3), dtype, seed=4)
    blk = _exact((64, 2, 3), dtype, seed=5)
    one = _exact((64,), dtype, seed=6)
    ij = np.stack([_idx(30, 64, seed=7, oob=oob), _idx(9, 64, seed=8, oob=oob)], axis=1)

    def f(ids, ij, cols, blk, one):
        z2 = jnp.zeros((30, 9), dt)
        z3 = jnp.full((30, 4, 6), 1, dt)
        a = z2.at[ids, 2:5].add(cols, mode=mode)
        b = z3.at[ids, 1:3, 3:6].add(blk, mode=mode)
        c = z2.at[ids, 4].add(one, mode=mode)
        d = z2.at[ij[:, 0], ij[:, 1]].add(one, mode=mode)
        e = z3.at[:, 2, ids % 6].max(jnp.broadcast_to(one, (30, 64)), mode=mode)
        return a, b, c, d, e
    _same(f, ids, ij, cols, blk, one)


def test_scatter_into_large_zeros_table(cj):
    """The benchmark's shape class: a 10000x128 float32 table (above the size below which
    splat constants are expanded at compile time), 2048 rows added with heavy duplication,
    and the same table read by another op as well (it is then materialized once)."""
    ids = _idx(10000, 2048, seed=9)
    u = _exact((2048, 128), "float32", seed=10)

    def f(ids, u):
        t = jnp.zeros((10000, 128), jnp.float32)
        return t.at[ids].add(u)

    def g(ids, u):
        t = jnp.full((10000, 128), 0.5, jnp.float32)
        return t.at[ids].add(u), jnp.sin(t[:2]), t
    _same(f, ids, u)
    _same(g, ids, u)


@pytest.mark.parametrize("dtype,value", [("float32", 1.5), ("float32", -0.0), ("int32", -1),
                                         ("float16", 0.1), ("int8", 7), ("bfloat16", -2.25)])
def test_large_splat_constant_fill(cj, dtype, value):
    """Splat constants too large to expand at compile time are filled at run time (a memset
    when all bytes agree, else doubling copies): results, and operands of non-elementwise ops."""
    dt = jaxcheck.dtype(dtype)
    n = (5 << 20) // np.dtype(dt).itemsize + 3  # above 4 MiB, not a multiple of a block

    def f(x):
        c = jnp.full((n,), value, dt)
        return c, lax.dynamic_slice(c, (x,), (5,))
    _same(f, np.int32(n - 4))


# ---------------------------------------------------------------------------- fused broadcasts

@pytest.mark.parametrize("dtype", ["float32", "float16", "int8", "int32", "uint8"])
@pytest.mark.parametrize("shape,k", [((7, 23), 3), ((24, 23), 3), ((5, 9, 37), 2),
                                     ((3, 700), 3), ((2, 3, 345), 4), ((40, 31), 5),
                                     ((9, 130), 16), ((11, 13), 17), ((1, 5000), 3)])
def test_elementwise_broadcast_along_short_inner_dim(cj, dtype, shape, k):
    """x[..., None] broadcast along a short innermost dim inside a fused elementwise chain
    (cloth's per-spring length times its 3-vector): rows repeated in one loop, with fusion
    blocks that start and end inside a row and inside the outer dims."""
    dt = jaxcheck.dtype(dtype)
    x = _exact(shape, dtype, seed=11)
    y = _exact(shape + (k,), dtype, seed=12)

    def f(x, y):
        b = jnp.broadcast_to(x[..., None], shape + (k,))
        return b * y + b, jnp.maximum(y, b) - y
    _same(f, x, y)


# ---------------------------------------------------------------------------- matrix-vector

@pytest.mark.parametrize("k", [1, 7, 63, 64, 65, 256, 1000, 1024, 1025, 2100])
def test_gemv_row_dots_lane_tails(cj, k):
    """Matrix-vector products along contiguous rows (64 lanes per block of 1024, added pairwise),
    with row lengths at and around the lane and block edges: the error against a float64
    reference stays within XLA:CPU's (plus a few ulps of the magnitude)."""
    rng = np.random.default_rng(k)
    a = rng.normal(size=(37, k)).astype(np.float32)
    x = rng.normal(size=(k,)).astype(np.float32)

    def f(a, x):
        return a @ x, x @ a.T[:, :5]
    got = [np.asarray(v, np.float64) for v in jaxcheck.run_on(jaxcheck.cj(), f, a, x)]
    want = [np.asarray(v, np.float64) for v in jaxcheck.run_on(jaxcheck.cpu(), f, a, x)]
    a64, x64 = a.astype(np.float64), x.astype(np.float64)
    refs = [a64 @ x64, x64 @ a64.T[:, :5]]
    mags = [np.abs(a64) @ np.abs(x64), np.abs(x64) @ np.abs(a64.T[:, :5])]
    eps = np.finfo(np.float32).eps
    for g, w, r, m in zip(got, want, refs, mags):
        assert np.all(np.abs(g - r) <= 2 * np.abs(w - r) + 4 * eps * m), (g - r, w - r)
