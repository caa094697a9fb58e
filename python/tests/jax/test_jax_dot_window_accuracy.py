"""Accuracy of long dot products and long window sums (issue 11 item 11): cjrt against a
float64 numpy reference of the same (already rounded) inputs, next to XLA:CPU's error on the
same program and inputs.

Each case checks that cjrt's error (largest absolute error over the largest reference
magnitude) is no worse than about twice XLA:CPU's (or two roundings of the result type, when
XLA happens to be exact: a scalar result one ulp off is not a failure) and below a fixed
bound. Before the blocked / pairwise accumulation these
failed: f32 dots with K = 2^16..2^18 (the 256-wide blocks were added one after the other),
complex64 dots (one running f32 sum), and every reduce_window sum over a long window (a
running sum in the element type: bf16 sum-pools of 4096 values were off by 92%). Cases marked
"guard" already passed and stay as guards.
"""
import numpy as np
import pytest

import jax.numpy as jnp
from jax import lax

import jaxcheck

UNIT = {"float32": 2.0 ** -24, "bfloat16": 2.0 ** -8, "float16": 2.0 ** -11,
        "float64": 2.0 ** -53, "complex64": 2.0 ** -24}
# fixed bounds, relative to the largest reference magnitude: f32 accumulations within 16 unit
# roundoffs, 16-bit results within two of theirs
BOUND = {"float32": 16 * UNIT["float32"], "bfloat16": 2 * UNIT["bfloat16"],
         "float16": 2 * UNIT["float16"], "float64": 64 * UNIT["float64"],
         "complex64": 16 * UNIT["complex64"]}


def _err(got, ref):
    got = np.asarray(got)
    got = got.astype(np.complex128 if np.iscomplexobj(got) else np.float64)
    return float(np.max(np.abs(got - ref)) / max(np.max(np.abs(ref)), 1e-300))


def _both(f, *xs):
    return (np.asarray(jaxcheck.run_on(jaxcheck.cj(), f, *xs)),
            np.asarray(jaxcheck.run_on(jaxcheck.cpu(), f, *xs)))


def _check(what, acc_dtype, cj_out, xla_out, ref):
    """acc_dtype: the type whose rounding bounds the result (the output type)"""
    assert cj_out.dtype == xla_out.dtype, what
    e_cj, e_xla = _err(cj_out, ref), _err(xla_out, ref)
    allowed = min(max(2 * e_xla, 2 * UNIT[acc_dtype]), BOUND[acc_dtype])
    assert e_cj <= allowed, (f"{what}: cjrt relative error {e_cj:.3g}, XLA:CPU {e_xla:.3g}, "
                             f"allowed {allowed:.3g}")


def _pos(rng, shape, dtype, scale=1.0):
    """values in [scale, 2 scale), rounded to dtype; and the same values in float64"""
    x = np.asarray(((1.0 + rng.random(shape)) * scale).astype(jaxcheck.dtype(dtype)))
    return x, x.astype(np.float64)


# ---------------------------------------------------------------------------------- dot

# (M, K, N): long contractions; the first two failed before (f32: 2.6x XLA's error)
DOT_SHAPES = [(4, 65536, 4), (32, 262144, 32), (64, 32768, 64), (8, 65536, 8)]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("shape", DOT_SHAPES, ids=lambda s: "x".join(map(str, s)))
def test_dot_long_contraction_f32_accumulation(cj, shape, dtype):
    """x @ y with an f32 result (bf16 / f16 inputs through preferred_element_type)"""
    M, K, N = shape
    rng = np.random.default_rng(21)
    scale = 1.0 / 256 if dtype == "float16" else 1.0
    a, ar = _pos(rng, (M, K), dtype, scale)
    b, br = _pos(rng, (K, N), dtype)
    f = lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float32)
    cj_out, xla_out = _both(f, a, b)
    _check(f"dot {shape} {dtype}->f32", "float32", cj_out, xla_out, ar @ br)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
def test_dot_long_contraction_16bit_result(cj, dtype):
    """guard: 16-bit results are accumulated in f32 and rounded once"""
    rng = np.random.default_rng(22)
    scale = 1.0 / 256 if dtype == "float16" else 1.0
    a, ar = _pos(rng, (64, 32768), dtype, scale)
    b, br = _pos(rng, (32768, 64), dtype)
    cj_out, xla_out = _both(lambda x, y: x @ y, a, b)
    _check(f"dot 64x32768x64 {dtype}", dtype, cj_out, xla_out, ar @ br)


@pytest.mark.parametrize("dist", ["positive", "normal"])
def test_dot_long_contraction_random_signs_and_ragged_tiles(cj, dist):
    """f32 rows past the 256-row task limit of long contractions and a ragged last column
    tile: every element checked"""
    rng = np.random.default_rng(23)
    M, K, N = 300, 8200, 530
    if dist == "normal":
        a = rng.standard_normal((M, K)).astype(np.float32)
        b = rng.standard_normal((K, N)).astype(np.float32)
    else:
        a, _ = _pos(rng, (M, K), "float32")
        b, _ = _pos(rng, (K, N), "float32")
    ref = a.astype(np.float64) @ b.astype(np.float64)
    cj_out, xla_out = _both(lambda x, y: x @ y, a, b)
    # relative to each element's scale (sum of |products|), not only to the largest result
    scale = np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64))
    e = np.max(np.abs(cj_out.astype(np.float64) - ref) / scale)
    assert e < 16 * UNIT["float32"], e
    _check(f"dot {M}x{K}x{N} {dist}", "float32", cj_out, xla_out, ref)


def test_batched_dot_general_long_contraction(cj):
    """batch dims and a contraction over two dims (2 x 65536)"""
    rng = np.random.default_rng(24)
    a, ar = _pos(rng, (3, 4, 2, 65536), "float32")
    b, br = _pos(rng, (3, 2, 65536, 5), "float32")
    f = lambda x, y: jnp.einsum("bmck,bckn->bmn", x, y)
    cj_out, xla_out = _both(f, a, b)
    _check("batched dot_general", "float32", cj_out, xla_out, np.einsum("bmck,bckn->bmn", ar, br))


@pytest.mark.parametrize("K", [65536, 262144])
def test_matvec_and_vector_dot(cj, K):
    """matrix-vector (batch-1 inference), vector-matrix and vector-vector products; the vector
    dot of 65536 values failed before (1e-7 relative, XLA:CPU 1.8e-8)"""
    rng = np.random.default_rng(25)
    A, Ar = _pos(rng, (16, K), "float32")
    v, vr = _pos(rng, (K,), "float32")
    W, Wr = _pos(rng, (K, 16), "float32")
    for what, f, ref, args in (("matvec", lambda m, x: m @ x, Ar @ vr, (A, v)),
                               ("vecmat", lambda x, m: x @ m, vr @ Wr, (v, W)),
                               ("vdot", lambda x, y: jnp.dot(x, y), vr @ vr, (v, v))):
        cj_out, xla_out = _both(f, *args)
        _check(f"{what} K={K}", "float32", cj_out, xla_out, ref)


GEMV_CASES = {
    # name: (einsum spec: dot_general's dimension numbers, lhs shape, rhs shape)
    "A x": ("mk,k->m", (37, 1000), (1000,)),
    "A^T x": ("km,k->m", (1000, 37), (1000,)),
    "x W": ("k,kn->n", (1000,), (1000, 150)),
    "x W^T": ("k,nk->n", (1000,), (150, 1000)),
    "batched A x": ("bmk,bk->bm", (3, 37, 1000), (3, 1000)),
    "batched x W": ("bk,bkn->bn", (3, 1000), (3, 1000, 150)),
    "short K": ("mk,k->m", (5, 3), (3,)),
    "1x1": ("mk,kn->mn", (1, 70), (70, 1)),
}


@pytest.mark.parametrize("types", ["float32", "bfloat16", "bfloat16*float32", "float16",
                                   "bfloat16->float32"])
@pytest.mark.parametrize("case", sorted(GEMV_CASES))
def test_gemv_layouts_and_types(cj, case, types):
    """matrix-vector products in every layout the GEMV path takes (and f16 ones, which stay on
    the GEMM), mixed operand types and 16-bit results: each element within a few roundings of
    its own scale"""
    spec, ls, rs = GEMV_CASES[case]
    out_t = None
    if "->" in types:
        types, out_t = types.split("->")
    lt, rt = (types.split("*") + [types])[:2]
    rng = np.random.default_rng(28)
    a = np.asarray(rng.standard_normal(ls).astype(jaxcheck.dtype(lt)))
    b = np.asarray(rng.standard_normal(rs).astype(jaxcheck.dtype(rt)))
    pet = jnp.float32 if out_t else None
    g = lambda x, y: jnp.einsum(spec, x, y, preferred_element_type=pet)
    got = np.asarray(jaxcheck.run_on(jaxcheck.cj(), g, a, b))
    want_t = jnp.result_type(a.dtype, b.dtype) if not out_t else np.float32
    assert got.dtype == want_t, (got.dtype, want_t)
    ar, br = a.astype(np.float64), b.astype(np.float64)
    ref = np.einsum(spec, ar, br)
    scale = np.einsum(spec, np.abs(ar), np.abs(br))
    unit = UNIT.get(np.dtype(got.dtype).name, UNIT["float32"])
    e = np.max(np.abs(got.astype(np.float64) - ref) / np.maximum(scale, 1e-30))
    assert e <= 4 * unit, (case, types, e)


def test_complex64_dot_long_contraction(cj):
    """complex<f32> runs the generic loop: 6.7e-6 relative before (XLA:CPU 4e-7)"""
    rng = np.random.default_rng(26)
    a = (1 + rng.random((8, 65536)) + 1j * (1 + rng.random((8, 65536)))).astype(np.complex64)
    b = (1 + rng.random((65536, 8)) + 1j * (1 + rng.random((65536, 8)))).astype(np.complex64)
    ref = a.astype(np.complex128) @ b.astype(np.complex128)
    cj_out, xla_out = _both(lambda x, y: x @ y, a, b)
    _check("dot complex64 8x65536x8", "complex64", cj_out, xla_out, ref)


def test_f64_dot_long_contraction(cj):
    """guard: the f64 GEMM's long-K path and f32 inputs with an f64 result (generic loop)"""
    with jaxcheck.x64():
        rng = np.random.default_rng(27)
        a = 1 + rng.random((16, 65536))
        b = 1 + rng.random((65536, 16))
        ref = (a.astype(np.longdouble) @ b.astype(np.longdouble)).astype(np.float64)
        cj_out, xla_out = _both(lambda x, y: x @ y, a, b)
        _check("dot f64 16x65536x16", "float64", cj_out, xla_out, ref)
        a32, b32 = a.astype(np.float32), b.astype(np.float32)
        ref32 = a32.astype(np.float64) @ b32.astype(np.float64)
        f = lambda x, y: jnp.matmul(x, y, preferred_element_type=jnp.float64)
        cj_out, xla_out = _both(f, a32, b32)
        _check("dot f32->f64 16x65536x16", "float64", cj_out, xla_out, ref32)


# ------------------------------------------------------------------------- reduce_window

def _window_sum_ref(r, w, stride):
    """sums over windows of w along the last axis of r (VALID), every stride-th"""
    cs = np.concatenate([np.zeros(r.shape[:-1] + (1,)), np.cumsum(r, axis=-1)], axis=-1)
    return (cs[..., w:] - cs[..., :-w])[..., ::stride]


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
@pytest.mark.parametrize("stride", [1, 512])
def test_reduce_window_long_window_sum(cj, dtype, stride):
    """lax.reduce_window(x, 0, lax.add, (1, 4096), (1, stride), 'VALID') in the input type"""
    rng = np.random.default_rng(31)
    scale = 1.0 / 64 if dtype == "float16" else 1.0
    x, r = _pos(rng, (4, 8192), dtype, scale)
    f = lambda v: lax.reduce_window(v, np.array(0, v.dtype), lax.add, (1, 4096), (1, stride),
                                    "VALID")
    cj_out, xla_out = _both(f, x)
    _check(f"reduce_window sum 1x4096 stride {stride} {dtype}", dtype, cj_out, xla_out,
           _window_sum_ref(r, 4096, stride))


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_avg_pool_large_window(cj, dtype):
    """average pooling over 64x64 windows of an NHWC image (what flax's nn.avg_pool emits:
    a reduce_window sum, then a division)"""
    rng = np.random.default_rng(32)
    scale = 1.0 / 64 if dtype == "float16" else 1.0
    x, r = _pos(rng, (2, 128, 128, 4), dtype, scale)
    f = lambda v: lax.reduce_window(v, np.array(0, v.dtype), lax.add, (1, 64, 64, 1),
                                    (1, 64, 64, 1), "VALID") / np.array(4096, v.dtype)
    cj_out, xla_out = _both(f, x)
    ref = r.reshape(2, 2, 64, 2, 64, 4).mean(axis=(2, 4))
    _check(f"avg_pool 64x64 {dtype}", dtype, cj_out, xla_out, ref)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16"])
def test_reduce_window_whole_axis(cj, dtype):
    """a window over the whole axis (65536 values): bf16 was off by 99% (XLA:CPU 0.2%)"""
    rng = np.random.default_rng(33)
    scale = 1.0 / 64 if dtype == "float16" else 1.0
    x, r = _pos(rng, (8, 65536), dtype, scale)
    f = lambda v: lax.reduce_window(v, np.array(0, v.dtype), lax.add, (1, 65536), (1, 1),
                                    "VALID")
    cj_out, xla_out = _both(f, x)
    _check(f"reduce_window whole axis {dtype}", dtype, cj_out, xla_out,
           r.sum(axis=1, keepdims=True))


def _rw_ref(r, init, window, strides, padding, base_dil=1, win_dil=1):
    """float64 reduce_window sum along the last axis (numpy loop)"""
    lo, hi = padding
    if base_dil > 1:
        d = np.full(r.shape[:-1] + ((r.shape[-1] - 1) * base_dil + 1,), np.nan)
        d[..., ::base_dil] = r
    else:
        d = r
    pad = np.full(d.shape[:-1] + (lo + d.shape[-1] + hi,), np.nan)
    pad[..., lo:lo + d.shape[-1]] = d
    span = (window - 1) * win_dil + 1
    outs = []
    for s in range(0, pad.shape[-1] - span + 1, strides):
        v = pad[..., s:s + span:win_dil]
        # padding and dilation holes hold the init value
        outs.append(init + np.where(np.isnan(v), init, v).sum(axis=-1))
    return np.stack(outs, axis=-1)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float64"])
@pytest.mark.parametrize("case", ["padded", "init", "dilated"])
def test_reduce_window_long_window_padding_init_dilation(cj, dtype, case):
    """the long-window path with padding, a non-zero init value (combined at every padding
    position, as the reference does) and base/window dilation, along the last axis and
    across two dims"""
    with jaxcheck.x64(dtype == "float64"):
        rng = np.random.default_rng(34)
        x, r = _pos(rng, (3, 2000), dtype)
        init = {"padded": 0.0, "init": 1.5, "dilated": 0.0}[case]
        kw = {"padded": dict(window=100, strides=3, padding=(50, 20)),
              "init": dict(window=100, strides=7, padding=(30, 99)),
              "dilated": dict(window=70, strides=5, padding=(10, 10), base_dil=2,
                              win_dil=3)}[case]
        f = lambda v: lax.reduce_window(
            v, np.array(init, v.dtype), lax.add, (1, kw["window"]), (1, kw["strides"]),
            ((0, 0), kw["padding"]), base_dilation=(1, kw.get("base_dil", 1)),
            window_dilation=(1, kw.get("win_dil", 1)))
        ref = _rw_ref(r, init, **kw)
        cj_out, xla_out = _both(f, x)
        assert cj_out.shape == ref.shape
        _check(f"reduce_window {case} {dtype}", dtype, cj_out, xla_out, ref)
        # across two dims: a 8x16 window of a 2-D image with padding
        y, yr = _pos(rng, (40, 300), dtype)
        g = lambda v: lax.reduce_window(v, np.array(init, v.dtype), lax.add, (8, 16), (2, 3),
                                        ((3, 4), (5, 6)))
        p = np.full((47, 311), init)
        p[3:43, 5:305] = yr
        ref2 = np.array([[init + p[i:i + 8, j:j + 16].sum() for j in range(0, 311 - 16 + 1, 3)]
                         for i in range(0, 47 - 8 + 1, 2)])
        cj_out, xla_out = _both(g, y)
        _check(f"reduce_window 2-D 8x16 {case} {dtype}", dtype, cj_out, xla_out, ref2)


@pytest.mark.parametrize("dtype", ["float32", "bfloat16", "float16", "float64"])
def test_reduce_window_long_window_special_values(cj, dtype):
    """signed zeros (-0 init and terms: -0; a +0 init: +0), infinities and NaN through the
    long-window path, as XLA:CPU computes them"""
    with jaxcheck.x64(dtype == "float64"):
        dt = jaxcheck.dtype(dtype)
        x = np.full((3, 300), -0.0, dt)
        x[1, 150] = np.inf
        x[2, 10] = np.nan
        for init in (-0.0, 0.0):
            f = lambda v: lax.reduce_window(v, np.array(init, v.dtype), lax.add, (1, 100),
                                            (1, 7), ((0, 0), (3, 4)))
            cj_out, xla_out = _both(f, x)
            np.testing.assert_array_equal(np.isnan(cj_out), np.isnan(xla_out))
            np.testing.assert_array_equal(cj_out[~np.isnan(cj_out)], xla_out[~np.isnan(xla_out)])
            np.testing.assert_array_equal(np.signbit(cj_out), np.signbit(xla_out))
