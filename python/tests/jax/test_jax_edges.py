"""Edges JAX's own test suite found (issue 11): each case failed on cjrt while XLA:CPU ran it,
and each is compared with XLA:CPU here."""
import numpy as np
import pytest

import jax
import jax.numpy as jnp
import jaxcheck
from jaxcheck import compare


# ---- zero-element arrays with a constant in the program (an empty dense constant is a
# splat in MLIR bytecode) ----

@pytest.mark.parametrize("f,dtype", [
    (jnp.sinh, np.int8),
    (jnp.spacing, np.float16),
    (lambda x: x * 2 + 1, np.float32),
    (lambda x: jnp.where(x > 0, x, jnp.zeros_like(x)), np.int32),
    (lambda x: jnp.fft.fft(x), np.complex64),
])
def test_empty_arrays_with_constants(f, dtype):
    compare(f, np.zeros((0,), dtype))


def test_empty_2d_with_constant():
    compare(lambda x: jnp.cosh(x) + jnp.arange(3, dtype=x.dtype), np.zeros((0, 3), np.float32))


# ---- copies to the memory a buffer is already in ----

def test_device_put_same_device_no_alias(cj):
    x = jax.device_put(np.arange(6, dtype=np.float32), cj)
    y = jax.device_put(x, cj, may_alias=False)
    assert y.devices() == {cj}
    np.testing.assert_array_equal(np.asarray(y), np.arange(6, dtype=np.float32))
    x.delete()  # y is a copy: it outlives x
    np.testing.assert_array_equal(np.asarray(y), np.arange(6, dtype=np.float32))


def test_device_put_same_memory_kind(cj):
    x = jax.device_put(np.ones(4, np.float32), cj)
    s = jax.sharding.SingleDeviceSharding(cj, memory_kind="device")
    y = jax.device_put(x, s, may_alias=False)
    np.testing.assert_array_equal(np.asarray(y), np.ones(4, np.float32))


# ---- tokens as arguments and results ----

def test_token_argument_and_result(cj):
    with jax.default_device(cj):
        a, t = jax.jit(lambda a, t: (a, t))(jnp.ones(3), jax.lax.create_token())
    np.testing.assert_array_equal(np.asarray(a), np.ones(3))
    with jax.default_device(cj):  # the token that came back goes in again
        b, _ = jax.jit(lambda a, t: (a * 2, t))(a, t)
    np.testing.assert_array_equal(np.asarray(b), np.full(3, 2.0))


# ---- donation of a buffer passed twice: XLA refuses it ----

@pytest.mark.parametrize("platform", ["cpu", "cjrt"])
@pytest.mark.filterwarnings("ignore:Some donated buffers were not usable")
def test_donating_a_buffer_passed_twice_fails(platform):
    dev = jax.devices(platform)[0]
    y = jax.device_put(np.ones(3, np.float32), dev)
    f = jax.jit(lambda a, b: a + b, donate_argnums=(0, 1))
    with pytest.raises(Exception, match="donat"):
        jax.block_until_ready(f(y, y))
    # nothing was lost: y is still alive and f runs on distinct buffers
    np.testing.assert_array_equal(np.asarray(y), np.ones(3, np.float32))
    out = f(jax.device_put(np.ones(3, np.float32), dev), jax.device_put(np.ones(3, np.float32), dev))
    np.testing.assert_array_equal(np.asarray(out), np.full(3, 2.0, np.float32))


# ---- compiler_options: XLA refuses unknown names and ill-typed values; so does cjrt ----

@pytest.mark.parametrize("platform", ["cpu", "cjrt"])
@pytest.mark.parametrize("opts,needle", [
    ({"xla_nonexistent_option": True}, "xla_nonexistent_option"),
    ({"xla_cpu_enable_fast_math": "notabool"}, "notabool"),
])
def test_bad_compiler_options_refused(platform, opts, needle):
    x = jax.device_put(np.ones(3, np.float32), jax.devices(platform)[0])
    with pytest.raises(Exception, match=needle):
        jax.jit(lambda a: a + 1).lower(x).compile(compiler_options=opts)


@pytest.mark.parametrize("platform", ["cpu", "cjrt"])
def test_known_compiler_options_accepted(platform):
    x = jax.device_put(np.ones(3, np.float32), jax.devices(platform)[0])
    c = jax.jit(lambda a: a + 1).lower(x).compile(
        compiler_options={"xla_cpu_enable_fast_math": False, "xla_embed_ir_in_executable": True})
    np.testing.assert_array_equal(np.asarray(c(x)), np.full(3, 2.0, np.float32))


# ---- the optimized program keeps the calls JAX asks XLA to inline late ----

@pytest.mark.skipif(not hasattr(jax, "Inline"), reason="jax.Inline is new in jax 0.12")
@pytest.mark.parametrize("platform", ["cpu", "cjrt"])
def test_optimized_program_keeps_late_calls(platform):
    dev = jax.devices(platform)[0]
    x = jax.device_put(np.float32(3.0), dev)

    def hlo(mode):
        c = jax.jit(lambda v: jax.jit(lambda y: y * 2, inline=mode)(v) + 1.0).lower(x).compile()
        assert float(c(x)) == 7.0
        return c.as_text()

    assert "call(" not in hlo(jax.Inline.JAX_EARLY)
    assert "call(" not in hlo(jax.Inline.XLA_EARLY)
    assert "call(" in hlo(jax.Inline.XLA_LATE)


def test_late_calls_run_like_inlined_ones():
    if not hasattr(jax, "Inline"):
        pytest.skip("jax.Inline is new in jax 0.12")
    inner = jax.jit(lambda y: jnp.sin(y) @ y.T, inline=jax.Inline.XLA_LATE)
    compare(lambda a: inner(a) + inner(a * 2) + jax.lax.fori_loop(0, 3, lambda i, c: c + inner(c), a),
            jaxcheck.rand((8, 8), np.float32) / 8)


# ---- a value returned more than once: every result gets it (one was left unwritten) ----

def test_same_value_returned_twice():
    compare(lambda x: (jnp.sin(x), x, jnp.sin(x)), jaxcheck.rand((4,), np.float32))


def test_loop_result_returned_twice():
    def f(x):
        def body(i, c):
            a, b = c
            return a + x, b + x * i
        a, b = jax.lax.fori_loop(0, 3, body, (jnp.zeros_like(x), jnp.zeros_like(x)))
        return b, a, b, a * 2, b
    compare(f, jaxcheck.rand((5,), np.float32))


# ---- long float64 cumulative sums through an infinity stay infinite (the compensation term
# was inf - inf = NaN from there on) ----

def test_cumsum_f64_through_infinity():
    with jaxcheck.x64():
        x = np.array([1.0] * 70 + [np.inf] + [1.0] * 10 + [-1.0, 2.0], np.float64)
        compare(jnp.cumsum, x)
        compare(lambda v: jnp.cumsum(v[::-1]), x)
