"""JAX numerics on cjrt against XLA:CPU: elementwise math over every dtype, reductions, control
flow, vmap, jax.random, FFT, linear algebra, sorting and top_k."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax import lax

import jaxcheck
from jaxcheck import COMPLEX, F8, FLOATS, INTS, SINTS, UINTS, compare, pending, positive, rand

SHAPE = (5, 7)


def _x64(*names):
    return jaxcheck.x64(any(jaxcheck.is_64(n) for n in names))


# ---- elementwise: unary ----

# name -> (function, dtypes, input kind)
UNARY = {
    "neg": (lax.neg, FLOATS + SINTS + COMPLEX, "any"),
    "abs": (jnp.abs, FLOATS + SINTS + COMPLEX, "any"),
    "sign": (jnp.sign, FLOATS + SINTS, "any"),
    "floor": (jnp.floor, FLOATS, "any"),
    "ceil": (jnp.ceil, FLOATS, "any"),
    "round": (jnp.round, FLOATS, "any"),
    "round_away": (lambda a: lax.round(a, lax.RoundingMethod.AWAY_FROM_ZERO), FLOATS, "any"),
    "sqrt": (jnp.sqrt, FLOATS + COMPLEX, "pos"),
    "rsqrt": (lax.rsqrt, FLOATS, "pos"),
    "cbrt": (jnp.cbrt, FLOATS, "any"),
    "exp": (jnp.exp, FLOATS + COMPLEX, "any"),
    "exp2": (jnp.exp2, FLOATS, "any"),
    "expm1": (jnp.expm1, FLOATS, "any"),
    "log": (jnp.log, FLOATS + COMPLEX, "pos"),
    "log1p": (jnp.log1p, FLOATS, "pos"),
    "sin": (jnp.sin, FLOATS + COMPLEX, "any"),
    "cos": (jnp.cos, FLOATS + COMPLEX, "any"),
    "tan": (jnp.tan, FLOATS, "any"),
    "arcsin": (jnp.arcsin, ["float32", "float64"], "unit"),
    "arccos": (jnp.arccos, ["float32", "float64"], "unit"),
    "arctan": (jnp.arctan, FLOATS, "any"),
    "sinh": (jnp.sinh, FLOATS, "any"),
    "cosh": (jnp.cosh, FLOATS, "any"),
    "tanh": (jnp.tanh, FLOATS + COMPLEX, "any"),
    "arcsinh": (jnp.arcsinh, ["float32", "float64"], "any"),
    "arctanh": (jnp.arctanh, ["float32", "float64"], "unit"),
    "logistic": (jax.nn.sigmoid, FLOATS, "any"),
    "erf": (jax.scipy.special.erf, FLOATS, "any"),
    "erfc": (jax.scipy.special.erfc, ["float32", "float64"], "any"),
    "erf_inv": (jax.scipy.special.erfinv, ["float32", "float64"], "unit"),
    "lgamma": (jax.scipy.special.gammaln, ["float32", "float64"], "pos"),
    "digamma": (jax.scipy.special.digamma, ["float32", "float64"], "pos"),
    "is_finite": (jnp.isfinite, FLOATS, "special"),
    "isnan": (jnp.isnan, FLOATS, "special"),
    "real": (jnp.real, COMPLEX, "any"),
    "imag": (jnp.imag, COMPLEX, "any"),
    "conj": (jnp.conj, COMPLEX, "any"),
    "not": (lax.bitwise_not, ["bool"] + INTS, "any"),
    "population_count": (lax.population_count, INTS, "any"),
    "clz": (lax.clz, INTS, "any"),
    "square": (jnp.square, FLOATS + INTS + COMPLEX, "any"),
    "reciprocal": (jnp.reciprocal, FLOATS + COMPLEX, "pos"),
    "integer_pow3": (lambda a: lax.integer_pow(a, 3), FLOATS + SINTS + COMPLEX, "any"),
    "relu": (jax.nn.relu, FLOATS, "any"),
    "gelu": (jax.nn.gelu, ["bfloat16", "float32", "float64"], "any"),
    "silu": (jax.nn.silu, FLOATS, "any"),
}


def _input(kind, name, seed=0):
    dt = jaxcheck.dtype(name)
    if kind == "pos" and dt.kind in "fcV":
        return positive(SHAPE, dt, seed)
    if kind == "unit":
        return rand(SHAPE, dt, seed, -0.9, 0.9)
    if kind == "special":
        x = rand(SHAPE, dt, seed)
        flat = x.reshape(-1)
        flat[:3] = [np.inf, -np.inf, np.nan]
        return x
    return rand(SHAPE, dt, seed)


def _unary_cases():
    for op, (_, dts, _) in UNARY.items():
        for d in dts:
            yield pytest.param(op, d, id=f"{op}-{d}")


@pytest.mark.parametrize("op,name", list(_unary_cases()))
def test_unary(cj, op, name):
    f, _, kind = UNARY[op]
    with _x64(name):
        x = _input(kind, name)
        compare(f, x)


def test_tanh_f32_is_xlas(cj):
    """f32 tanh is XLA:CPU's own approximation (src/cpu/vmath_f32.c, kf32_tanh): the same bits on
    a sweep over the whole curve, the clamp where it reaches +-1, the small-x branch, signed
    zeros, infinities and NaN (also through bf16, which computes in f32)."""
    x = np.concatenate([np.linspace(-12, 12, 120001, dtype=np.float32),
                        np.float32([0.0, -0.0, 3.99e-4, 4.0e-4, 4.01e-4, 7.9988, 7.9989, -7.9989,
                                    1e-30, np.inf, -np.inf, np.nan])])
    got = np.asarray(jaxcheck.run_on(jaxcheck.cj(), jnp.tanh, x))
    want = np.asarray(jaxcheck.run_on(jaxcheck.cpu(), jnp.tanh, x))
    same = (got.view(np.int32) == want.view(np.int32)) | (np.isnan(got) & np.isnan(want))
    assert same.all(), f"{(~same).sum()} values differ, first at x = {x[~same][:5]}"
    xb = jnp.asarray(x[:20000], jnp.bfloat16)
    gb = np.asarray(jaxcheck.run_on(jaxcheck.cj(), jnp.tanh, xb)).astype(np.float32)
    wb = np.asarray(jaxcheck.run_on(jaxcheck.cpu(), jnp.tanh, xb)).astype(np.float32)
    assert np.array_equal(gb, wb, equal_nan=True)


# ---- elementwise: binary ----

BINARY = {
    "add": (jnp.add, FLOATS + INTS + COMPLEX + ["bool"] + F8, "any"),
    "sub": (jnp.subtract, FLOATS + INTS + COMPLEX + F8, "any"),
    "mul": (jnp.multiply, FLOATS + INTS + COMPLEX + F8, "any"),
    "div": (lax.div, FLOATS + COMPLEX, "nonzero"),
    "int_div": (lax.div, INTS, "nonzero"),
    "floor_divide": (jnp.floor_divide, FLOATS + SINTS, "nonzero"),
    "rem": (lax.rem, FLOATS + INTS, "nonzero"),
    "pow": (jnp.power, FLOATS + COMPLEX, "pos"),
    "max": (jnp.maximum, FLOATS + INTS + ["bool"], "any"),
    "min": (jnp.minimum, FLOATS + INTS + ["bool"], "any"),
    "atan2": (jnp.arctan2, FLOATS, "any"),
    "nextafter": (jnp.nextafter, ["float32", "float64"], "any"),
    "and": (lax.bitwise_and, ["bool"] + INTS, "any"),
    "or": (lax.bitwise_or, ["bool"] + INTS, "any"),
    "xor": (lax.bitwise_xor, ["bool"] + INTS, "any"),
    "shift_left": (lax.shift_left, INTS, "shift"),
    "shift_right_a": (lax.shift_right_arithmetic, INTS, "shift"),
    "shift_right_l": (lax.shift_right_logical, INTS, "shift"),
    "eq": (lax.eq, FLOATS + INTS + COMPLEX + ["bool"], "any"),
    "lt": (lax.lt, FLOATS + INTS, "any"),
    "ge": (lax.ge, FLOATS + INTS, "any"),
    "ne": (lax.ne, FLOATS + INTS + ["bool"], "any"),
    "complex": (lax.complex, ["float32", "float64"], "any"),
    "hypot": (jnp.hypot, ["float32", "float64"], "any"),
    "logaddexp": (jnp.logaddexp, ["float32", "float64"], "any"),
}


def _binary_inputs(kind, name):
    dt = jaxcheck.dtype(name)
    a = _input("pos" if kind == "pos" else "any", name, 1)
    b = _input("any", name, 2)
    if kind == "pos":
        b = rand(SHAPE, dt, 2, -2.0, 2.0)
    if kind == "nonzero":
        b = np.where(b == 0, np.ones((), dt), b).astype(dt)
        if dt.kind in "iu":
            a = np.where((a == np.iinfo(dt).min) & (b == -1), np.ones((), dt), a).astype(dt)
    if kind == "shift":
        b = (np.abs(b.astype(np.int64)) % (8 * dt.itemsize + 2)).astype(dt)  # incl. >= width
    return a, b


def _binary_cases():
    for op, (_, dts, _) in BINARY.items():
        for d in dts:
            yield pytest.param(op, d, id=f"{op}-{d}")


@pytest.mark.parametrize("op,name", list(_binary_cases()))
def test_binary(cj, op, name):
    f, _, kind = BINARY[op]
    with _x64(name):
        a, b = _binary_inputs(kind, name)
        compare(f, a, b)


def test_broadcasting_and_scalars(cj):
    compare(lambda a, b: a * b + 2.5 - a.T.sum(), rand((4, 1), np.float32),
            rand((1, 4), np.float32, 3))


def test_select_clamp_where(cj):
    compare(lambda a, b: (jnp.where(a > b, a, b), jnp.clip(a, -1, 1), lax.clamp(-0.5, b, 0.5)),
            rand(SHAPE, np.float32), rand(SHAPE, np.float32, 1))


CONVERT_NAMES = ["bool", "int8", "uint8", "int32", "uint32", "int64", "bfloat16", "float16",
                 "float32", "float64", "complex64", "float8_e4m3fn", "float8_e5m2"]


@pytest.mark.parametrize("src", CONVERT_NAMES)
@pytest.mark.parametrize("dst", CONVERT_NAMES)
def test_convert(cj, src, dst):
    if jaxcheck.dtype(src).kind == "c" and jaxcheck.dtype(dst).kind != "c":
        pytest.skip("complex -> real discards the imaginary part (a warning in JAX)")
    with _x64(src, dst):
        x = rand(SHAPE, jaxcheck.dtype(src), low=-100, high=100)
        compare(lambda a: lax.convert_element_type(a, jaxcheck.dtype(dst)), x)


@pytest.mark.parametrize("pair", [("float32", "int32"), ("int32", "float32"),
                                  ("float64", "uint64"), ("uint16", "bfloat16")])
def test_bitcast(cj, pair):
    src, dst = pair
    with _x64(src, dst):
        compare(lambda a: lax.bitcast_convert_type(a, jaxcheck.dtype(dst)),
                rand(SHAPE, jaxcheck.dtype(src)))


# ---- reductions ----

RED_DTYPES = ["float32", "float64", "bfloat16", "int32", "uint8", "int64"]
REDUCTIONS = {
    "sum": jnp.sum, "prod": lambda a, axis: jnp.prod(a / 2 if a.dtype.kind == "f" else a, axis),
    "max": jnp.max, "min": jnp.min, "argmax": jnp.argmax, "argmin": jnp.argmin,
}


@pytest.mark.parametrize("red", list(REDUCTIONS))
@pytest.mark.parametrize("name", RED_DTYPES)
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_reduce(cj, red, name, axis):
    with _x64(name):
        x = rand((6, 9), jaxcheck.dtype(name))
        compare(lambda a: REDUCTIONS[red](a, axis=axis), x, rtol=1e-3 if name == "bfloat16" else None)


def test_reduce_bool_and_complex(cj):
    compare(lambda a, c: (jnp.any(a, 0), jnp.all(a, 1), jnp.sum(c), jnp.prod(c[0] / 2)),
            rand((4, 5), np.bool_), rand((4, 5), np.complex64))


def test_mean_var_std_norm(cj):
    compare(lambda a: (a.mean(0), a.var(1), a.std(), jnp.linalg.norm(a)), rand((16, 33), np.float32))


def test_large_sum(cj):
    # summation order differs (blocked/parallel vs XLA's): compare with an absolute tolerance
    # scaled to the terms' magnitude
    compare(lambda a: (a.sum(), a.sum(0), a.sum(1)), rand((512, 300), np.float32), rtol=1e-5,
            atol=1e-3)


def test_logsumexp_softmax(cj):
    x = rand((8, 100), np.float32)
    compare(lambda a: (jax.nn.logsumexp(a, axis=1), jax.nn.softmax(a, axis=-1),
                       jax.nn.log_softmax(a)), x)


@pytest.mark.parametrize("fn", ["cumsum", "cumprod", "cummax", "cumlogsumexp"])
def test_cumulative(cj, fn):
    f = {"cumsum": lambda a: jnp.cumsum(a, 1), "cumprod": lambda a: jnp.cumprod(a / 2, 0),
         "cummax": lambda a: lax.cummax(a, 1), "cumlogsumexp": lambda a: lax.cumlogsumexp(a, 0)}
    compare(f[fn], rand((6, 40), np.float32))


def test_reduce_window_pools(cj):
    x = rand((2, 9, 9, 3), np.float32)
    compare(lambda a: (lax.reduce_window(a, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                       lax.reduce_window(a, 0.0, lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID")), x)


# ---- indexing and data movement ----

def test_slicing_and_updates(cj):
    def f(a, i):
        return (a[1:4, ::2], a[::-1], a[i], a.at[2].set(0.0), a.at[:, 1].add(5.0),
                lax.dynamic_slice(a, (i, 1), (2, 3)), lax.dynamic_update_slice(a, a[:2, :2], (i, 2)),
                jnp.take(a, jnp.array([3, 0, 1]), axis=1))
    compare(f, rand((6, 8), np.float32), np.int32(2))


def test_gather_scatter(cj):
    def f(a, idx):
        return (a[idx], a.at[idx].add(1.0), a.at[idx].max(0.5),
                jnp.take_along_axis(a[idx], (idx[:, None] + jnp.arange(2)) % 4, axis=1))
    compare(f, rand((8, 4), np.float32), np.array([0, 3, 3, 7, 1], np.int32))


def test_concat_pad_transpose_reshape(cj):
    compare(lambda a, b: (jnp.concatenate([a, b], 0), jnp.pad(a, ((1, 2), (0, 3))),
                          jnp.transpose(a.reshape(2, 3, 4), (2, 0, 1)), jnp.stack([a, b]),
                          lax.pad(a, 0.0, ((1, 1, 1), (0, -1, 0))), jnp.tile(b, (2, 1)),
                          jnp.roll(a, 3, 1), jnp.flip(b), jnp.rot90(a)),
            rand((6, 4), np.float32), rand((6, 4), np.float32, 1))


def test_iota_eye_tri(cj):
    compare(lambda a: (jnp.arange(10) * a, jnp.eye(4, 5, 1), jnp.tril(jnp.ones((4, 4))),
                       jnp.triu(a.reshape(1, 1) * jnp.ones((3, 3)))), np.float32(2.0))


def test_dot_general_dtypes(cj):
    for name in ["float32", "bfloat16", "float16", "int32", "int8"]:
        dt = jaxcheck.dtype(name)
        compare(lambda a, b: (a @ b, jnp.einsum("ij,kj->ik", a, b.T), jnp.dot(a[0], b[:, 0])),
                rand((7, 9), dt), rand((9, 5), dt, 1), rtol=2e-2 if name in ("bfloat16", "float16") else 1e-5)


def test_batched_matmul_f64_complex(cj):
    with _x64("float64"):
        compare(lambda a, b: jnp.einsum("bij,bjk->bik", a, b), rand((3, 4, 5), np.float64),
                rand((3, 5, 2), np.float64, 1))
    compare(lambda a, b: a @ b, rand((4, 5), np.complex64), rand((5, 3), np.complex64, 1))


# ---- control flow ----

def test_scan(cj):
    def f(xs):
        def body(carry, x):
            h, total = carry
            h = jnp.tanh(h * 0.5 + x)
            return (h, total + h.sum()), h * 2
        return lax.scan(body, (jnp.zeros(xs.shape[1]), 0.0), xs)
    compare(f, rand((20, 6), np.float32))


def test_scan_reverse_unroll(cj):
    compare(lambda xs: lax.scan(lambda c, x: (c * 0.9 + x, c), 0.0, xs, reverse=True, unroll=3),
            rand((17,), np.float32))


def test_while_and_fori(cj):
    def f(a):
        n, v = lax.while_loop(lambda c: c[0] < 12, lambda c: (c[0] + 1, c[1] * 1.05 + 0.1), (0, a))
        w = lax.fori_loop(0, 7, lambda i, acc: acc + i * a, jnp.zeros_like(a))
        return n, v, w
    compare(f, rand((3, 4), np.float32))


def test_while_data_dependent(cj):
    def collatz(n):
        return lax.while_loop(lambda c: c[0] != 1,
                              lambda c: (jnp.where(c[0] % 2 == 0, c[0] // 2, 3 * c[0] + 1), c[1] + 1),
                              (n, 0))
    compare(jax.vmap(collatz), np.array([6, 7, 27, 1, 97], np.int32))


def test_cond_switch(cj):
    def f(a, i):
        r1 = lax.cond(a.sum() > 0, lambda v: jnp.sin(v), lambda v: jnp.cos(v) * 2, a)
        r2 = lax.switch(i, [lambda v: v + 1, lambda v: v * v, lambda v: -v], a)
        return r1, r2
    for i in (0, 1, 2, 5):
        compare(f, rand((4,), np.float32), np.int32(i))


def test_nested_control_flow(cj):
    def f(xs):
        def body(c, x):
            c = lax.cond(x > 0, lambda: c + lax.fori_loop(0, 3, lambda i, a: a + x, 0.0), lambda: c * 0.5)
            return c, c
        return lax.scan(body, 1.0, xs)
    compare(f, rand((9,), np.float32))


# ---- vmap ----

def test_vmap(cj):
    def model(w, x):
        return jnp.tanh(x @ w).sum()
    w = rand((5, 3), np.float32)
    xs = rand((8, 4, 5), np.float32, 1)
    compare(lambda w, xs: (jax.vmap(model, (None, 0))(w, xs),
                           jax.vmap(jax.grad(model), (None, 0))(w, xs),
                           jax.vmap(lambda r: lax.cond(r.sum() > 0, jnp.sin, jnp.cos, r))(xs[:, 0])),
            w, xs)


# ---- jax.random ----

@pytest.mark.parametrize("impl", ["threefry2x32",
                                  "rbg", "unsafe_rbg"])
def test_random(cj, impl):
    def f():
        k = jax.random.key(42, impl=impl)
        k1, k2, k3, k4 = jax.random.split(k, 4)
        return (jax.random.normal(k1, (4, 5)), jax.random.uniform(k2, (7,), minval=-1, maxval=3),
                jax.random.randint(k3, (10,), 0, 100), jax.random.bits(k4, (3,)),
                jax.random.bernoulli(k1, 0.3, (8,)), jax.random.key_data(jax.random.fold_in(k, 7)))
    compare(f)


def test_random_threefry_custom_call(cj):
    """threefry2x32 lowers to the plugin's @cjrt_threefry2x32 on cjrt (python/jax_plugins/cjrt),
    whose bits equal XLA:CPU's: scalar keys, keys per element (vmap over split keys), and a draw
    large enough to be split over the pool."""
    text = jax.jit(lambda k: jax.random.bits(k, (5,))).lower(
        jax.device_put(jax.random.key(3), cj)).as_text()
    assert "cjrt_threefry2x32" in text
    compare(lambda: (jax.random.bits(jax.random.key(3), (300, 257)),
                     jax.vmap(lambda k: jax.random.bits(k, (33,)))(
                         jax.random.split(jax.random.key(4), 9)),
                     jax.random.uniform(jax.random.key(5), (1000,))), rtol=0, atol=0)


def test_random_distributions(cj):
    def f(seed):
        k = jax.random.key(seed)
        ks = jax.random.split(k, 6)
        return (jax.random.gamma(ks[0], 2.0, (6,)), jax.random.categorical(ks[1], jnp.log(jnp.arange(1.0, 6.0)), shape=(9,)),
                jax.random.truncated_normal(ks[2], -1.0, 1.0, (5,)), jax.random.exponential(ks[3], (4,)),
                jax.random.beta(ks[4], 2.0, 3.0, (4,)), jax.random.dirichlet(ks[5], jnp.ones(3)))
    compare(f, np.uint32(3), rtol=1e-4, atol=1e-5)


def test_random_permutation(cj):
    compare(lambda: (jax.random.permutation(jax.random.key(1), 12),
                     jax.random.choice(jax.random.key(2), 20, (5,), replace=False)))


# ---- FFT ----

@pytest.mark.parametrize("fn", ["fft", "ifft", "rfft", "irfft", "fft2", "rfftn", "fft_odd"])
def test_fft(cj, fn):
    x = rand((6, 8), np.float32)
    c = rand((6, 8), np.complex64, 1)
    f = {"fft": lambda: jnp.fft.fft(c), "ifft": lambda: jnp.fft.ifft(c, axis=0),
         "rfft": lambda: jnp.fft.rfft(x), "irfft": lambda: jnp.fft.irfft(c[:, :5], n=8),
         "fft2": lambda: jnp.fft.fft2(c), "rfftn": lambda: jnp.fft.rfftn(x),
         "fft_odd": lambda: jnp.fft.fft(rand((3, 15), np.complex64, 2))}[fn]
    compare(f, rtol=1e-4, atol=1e-4)


def test_fft_f64(cj):
    with jaxcheck.x64(True):
        compare(lambda a: (jnp.fft.fft(a), jnp.fft.irfft(jnp.fft.rfft(a))), rand((4, 16), np.float64),
                rtol=1e-9, atol=1e-9)


# ---- linear algebra ----

def _spd(n, dt=np.float32, seed=0):
    a = rand((n, n), dt, seed)
    return (a @ a.T + n * np.eye(n)).astype(dt)


# the missing pieces each function needs (jaxcheck.PENDING): none since @Qr, @Eigh and
# @ProductOfElementaryHouseholderReflectors run
LINALG_NEEDS = {}

LINALG = {
    "inv": lambda a: jnp.linalg.inv(a),
    "solve": lambda a: jnp.linalg.solve(a, a[:, :2] + 1),
    "det": lambda a: jnp.linalg.det(a),
    "slogdet": lambda a: jnp.linalg.slogdet(a),
    "cholesky": lambda a: jnp.linalg.cholesky(a),
    "triangular_solve": lambda a: jax.scipy.linalg.solve_triangular(jnp.tril(a), a[:, :3], lower=True),
    "lu": lambda a: jax.scipy.linalg.lu(a),
    "qr": lambda a: jnp.abs(jnp.linalg.qr(a)[1]),
    "eigh": lambda a: jnp.linalg.eigh(a)[0],
    "svd": lambda a: jnp.linalg.svd(a, compute_uv=False),
    "pinv": lambda a: jnp.linalg.pinv(a),
    "lstsq": lambda a: jnp.linalg.lstsq(a, a[:, :1])[0],
    "eig": lambda a: jnp.sort(jnp.linalg.eig(a)[0].real),
    "expm": lambda a: jax.scipy.linalg.expm(a / 40),
    "cho_solve": lambda a: jax.scipy.linalg.cho_solve(jax.scipy.linalg.cho_factor(a), a[:, :1]),
}


def _linalg_cases():
    for fn in LINALG:
        marks = [pending(*LINALG_NEEDS[fn])] if fn in LINALG_NEEDS else []
        yield pytest.param(fn, marks=marks, id=fn)


@pytest.mark.parametrize("fn", list(_linalg_cases()))
def test_linalg(cj, fn):
    compare(LINALG[fn], _spd(6), rtol=2e-4, atol=2e-4)


def test_linalg_f64_batched(cj):
    with jaxcheck.x64(True):
        a = np.stack([_spd(5, np.float64, s) for s in range(3)])
        compare(lambda m: (jnp.linalg.cholesky(m), jnp.linalg.inv(m), jnp.linalg.det(m)), a,
                rtol=1e-9, atol=1e-9)


# ---- sorting, top_k ----

@pytest.mark.parametrize("name", ["float32", "int32", "uint8", "bfloat16", "float64", "int64"])
def test_sort(cj, name):
    with _x64(name):
        x = rand((5, 33), jaxcheck.dtype(name))
        compare(lambda a: (jnp.sort(a, axis=1), jnp.argsort(a, axis=0, stable=True),
                           jnp.sort(a.reshape(-1))[::-1]), x)


def test_sort_nan_and_multi_operand(cj):
    x = rand((40,), np.float32)
    x[[3, 9]] = np.nan
    x[5] = -0.0
    keys = rand((40,), np.int32, 1) % 4
    compare(lambda a, k: (jnp.sort(a), lax.sort((k, a), num_keys=1), lax.sort((k, a, -a), num_keys=2)),
            x, keys)


def test_top_k(cj):
    compare(lambda a: lax.top_k(a, 5), rand((4, 50), np.float32))


def test_approx_top_k(cj):
    # custom_call @ApproxTopK off TPUs; computed exactly, as XLA:CPU does. (bfloat16 rounding
    # makes ties, whose order is free: only the values are compared there.)
    compare(lambda a: (lax.approx_max_k(a, 5), lax.approx_min_k(a, 3, reduction_dimension=0),
                       lax.approx_max_k(a.astype(jnp.bfloat16), 4)[0]), rand((6, 50), np.float32))


def test_searchsorted_unique(cj):
    compare(lambda a, v: (jnp.searchsorted(jnp.sort(a), v), jnp.unique(jnp.round(a), size=8, fill_value=0)),
            rand((30,), np.float32), rand((6,), np.float32, 1))
