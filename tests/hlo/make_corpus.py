"""Regenerates tests/hlo/data: HLO programs from JAX and the outputs XLA:CPU computes for them.

For each case NAME it writes
  NAME.pb            jax.jit(f).lower(*args).compiler_ir("hlo").as_serialized_hlo_module_proto()
  NAME.hlo           the same module's as_hlo_text()
  NAME.in<i>.npy     the arguments
  NAME.out<i>.npy    the outputs of jax.jit(f)(*args) on the CPU backend (XLA:CPU)
and one line per case in MANIFEST: `NAME NUM_INPUTS NUM_OUTPUTS RTOL ATOL`. (torch_xla's and
TensorFlow's programs are in MANIFEST.torch_xla and MANIFEST.tf, from make_corpus_torch_xla.py
and make_corpus_tf.py.)

Run with the project's venv (jax 0.12):  /work/main/.venv/bin/python tests/hlo/make_corpus.py
"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402

jax.config.update("jax_enable_x64", False)
HERE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "data")
rng = np.random.default_rng(1234)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def i32(lo, hi, *shape):
    return rng.integers(lo, hi, size=shape, dtype=np.int32)


CASES = []


def case(name, *args, rtol=1e-5, atol=1e-5, platform=None):
    """platform: lower for that platform instead of the CPU (JAX's CPU lowering of linear
    algebra is LAPACK custom calls; its TPU lowering keeps HLO's cholesky/triangular-solve)."""
    def deco(fn):
        CASES.append((name, fn, args, rtol, atol, platform))
        return fn
    return deco


@case("mlp", f32(8, 16), f32(16, 32), f32(32), f32(32, 4), f32(4), rtol=1e-4, atol=1e-4)
def mlp(x, w1, b1, w2, b2):
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.log_softmax(h @ w2 + b2)


@case("conv2d", f32(2, 9, 9, 3), f32(3, 3, 3, 8), rtol=1e-4, atol=1e-4)
def conv2d(x, w):
    return lax.conv_general_dilated(x, w, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))


@case("conv_depthwise", f32(1, 4, 8, 8), f32(4, 1, 3, 3), rtol=1e-4, atol=1e-4)
def conv_depthwise(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), ((1, 1), (1, 1)), feature_group_count=4)


@case("conv_transpose", f32(1, 2, 5, 5), f32(3, 2, 3, 3), rtol=1e-4, atol=1e-4)
def conv_transpose(x, w):
    return lax.conv_general_dilated(x, w, (1, 1), ((2, 2), (2, 2)), lhs_dilation=(2, 2),
                                    rhs_dilation=(1, 1))


@case("reductions", f32(5, 6, 7))
def reductions(x):
    return x.sum(axis=(0, 2)), x.max(axis=1), x.min(), jnp.prod(x[0, :3], axis=0)


@case("argmax", f32(6, 10))
def argmax(x):
    return jnp.argmax(x, axis=1), jnp.argmin(x, axis=0)


@case("mean_var", f32(16, 8), rtol=1e-4, atol=1e-5)
def mean_var(x):
    return x.mean(axis=0), x.var(axis=0)


@case("fori_loop", f32(4), np.int32(7))
def fori_loop(x, n):
    return lax.fori_loop(0, n, lambda i, c: c * 1.5 + i.astype(jnp.float32), x)


@case("while_tuple", np.float32(1.0))
def while_tuple(x):
    def cond(c):
        return c[0] < 100.0
    def body(c):
        return (c[0] * 2.0 + 1.0, c[1] + 1, c[2] + c[0])
    return lax.while_loop(cond, body, (x, jnp.int32(0), jnp.zeros((3,), jnp.float32)))


@case("cond", np.float32(2.5), f32(3))
def cond_(p, x):
    return lax.cond(p > 0, lambda v: jnp.sin(v) * p, lambda v: jnp.cos(v) - p, x)


@case("switch", np.int32(1), f32(4))
def switch(i, x):
    return lax.switch(i, [lambda v: v + 1.0, lambda v: v * v, lambda v: -v], x)


@case("scatter_add", f32(10, 3), i32(0, 10, 6), f32(6, 3))
def scatter_add(x, idx, v):
    return x.at[idx].add(v)


@case("scatter_set", f32(8), np.array([1, 5, 7], np.int32), f32(3))
def scatter_set(x, idx, v):
    return x.at[idx].set(v), x.at[idx].max(v)


@case("gather", f32(10, 4), i32(0, 10, 5))
def gather(x, idx):
    return x[idx], x[idx, 2]


@case("take_along_axis", f32(4, 6), i32(0, 6, 4, 3))
def take_along_axis(x, idx):
    return jnp.take_along_axis(x, idx, axis=1)


@case("sort", f32(3, 9))
def sort(x):
    return jnp.sort(x, axis=1), jnp.sort(x, axis=0)


@case("argsort", f32(12))
def argsort(x):
    return jnp.argsort(x), lax.sort((x, jnp.arange(12, dtype=jnp.int32)), num_keys=1)[1]


@case("dot_batch", f32(3, 4, 5), f32(3, 5, 2), rtol=1e-4, atol=1e-5)
def dot_batch(a, b):
    return jnp.einsum("bij,bjk->bik", a, b), lax.dot_general(a, a, (((1,), (1,)), ((0,), (0,))))


@case("int_ops", i32(-1000, 1000, 16), i32(1, 20, 16))
def int_ops(a, b):
    return (a + b, a * b, a // b, a % b, a << (b % 8), a >> (b % 8),
            lax.shift_right_logical(a, b % 8), a & b, a | b, a ^ b, ~a,
            lax.population_count(a), lax.clz(a), jnp.abs(a), jnp.sign(a), jnp.maximum(a, b))


@case("uint_ops", rng.integers(0, 2**32 - 1, size=8, dtype=np.uint32),
      rng.integers(1, 2**16, size=8, dtype=np.uint32))
def uint_ops(a, b):
    return a // b, a % b, a >> 3, (a * b).astype(jnp.uint8), a > b


@case("bf16", f32(4, 8).astype(jnp.bfloat16), f32(8, 3).astype(jnp.bfloat16), rtol=2e-2, atol=2e-2)
def bf16(a, b):
    c = jnp.dot(a, b, preferred_element_type=jnp.float32)
    return c, (a.astype(jnp.float32) * 2).astype(jnp.bfloat16), jnp.tanh(a)


@case("f16_softmax", f32(3, 7).astype(np.float16), rtol=2e-3, atol=2e-3)
def f16_softmax(x):
    return jax.nn.softmax(x, axis=-1)


@case("select_clamp", f32(10), f32(10))
def select_clamp(a, b):
    return (jnp.where(a > b, a, b * 2), jnp.clip(a, -0.5, 0.5), a == b, a != b, a <= b,
            lax.clamp(-1.0, b, 1.0))


@case("cumsum", f32(6, 5), rtol=1e-5, atol=1e-5)
def cumsum(x):
    return jnp.cumsum(x, axis=1), jnp.cumprod(x[:, :3], axis=0), lax.cummax(x, axis=0)


@case("max_pool", f32(1, 8, 8, 2))
def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"), \
        lax.reduce_window(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")


@case("max_pool_grad", f32(1, 6, 6, 1))
def max_pool_grad(x):
    def pool(v):
        return lax.reduce_window(v, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID").sum()
    return jax.grad(pool)(x)


@case("shapes", f32(2, 3), f32(3))
def shapes(x, y):
    a = jnp.pad(x, ((1, 2), (0, 1)), constant_values=7.0)
    b = jnp.concatenate([x, x * 2], axis=0)
    c = jnp.flip(x, axis=1).T
    d = jnp.broadcast_to(y, (4, 3)) + jnp.arange(3, dtype=jnp.float32)
    e = lax.pad(x, 0.0, ((0, 0, 0), (1, 1, 1)))
    return a, b, c, d, e, x.reshape(3, 2), x[:, ::2]


@case("dynamic_slice", f32(6, 5), np.int32(2), np.int32(3), f32(2, 2))
def dynamic_slice(x, i, j, u):
    return lax.dynamic_slice(x, (i, j), (3, 2)), lax.dynamic_update_slice(x, u, (j, i))


@case("threefry_normal", np.uint32(42), rtol=1e-5, atol=1e-5)
def threefry_normal(seed):
    k = jax.random.PRNGKey(seed)
    return jax.random.normal(k, (5,)), jax.random.randint(k, (4,), 0, 100)


@case("fft", f32(8), f32(4, 6), rtol=1e-4, atol=1e-4)
def fft(x, y):
    return jnp.fft.fft(x.astype(jnp.complex64)), jnp.fft.rfft(y, axis=-1), jnp.fft.irfft(
        jnp.fft.rfft(x))


@case("complex", f32(5), f32(5), rtol=1e-5, atol=1e-5)
def complex_(a, b):
    z = lax.complex(a, b)
    return z * z + 1, jnp.abs(z), jnp.real(z * 1j), jnp.imag(jnp.conj(z)), jnp.exp(z)


@case("unary_float", np.abs(f32(12)) + 0.1, rtol=1e-5, atol=1e-6)
def unary_float(x):
    return (jnp.exp(x), jnp.log(x), jnp.expm1(x), jnp.log1p(x), jnp.sqrt(x), lax.rsqrt(x),
            jnp.cbrt(x), jnp.sin(x), jnp.cos(x), jnp.tan(x), jnp.arctan2(x, x - 1), jnp.floor(x * 3),
            jnp.ceil(x * 3), jnp.round(x * 3), lax.round(x * 3), jax.nn.sigmoid(x),
            jnp.isfinite(x / (x - x)), x ** 1.5, jnp.fmod(x * 7, 1.5))


@case("special", f32(9), rtol=1e-5, atol=1e-6)
def special(x):
    return (jax.scipy.special.erf(x), lax.reduce_precision(x, exponent_bits=5, mantissa_bits=10),
            lax.bitcast_convert_type(x, jnp.int32), lax.bitcast_convert_type(
                x.astype(jnp.bfloat16), jnp.uint16), x.astype(jnp.int8), x.astype(jnp.bool_))


@case("linalg", np.tril(f32(4, 4)) + 4 * np.eye(4, dtype=np.float32), f32(4, 2),
      rtol=1e-4, atol=1e-4, platform="tpu")
def linalg(a, b):
    return (lax.linalg.triangular_solve(a, b, left_side=True, lower=True),
            lax.linalg.triangular_solve(a, b.T, left_side=False, lower=True, transpose_a=True),
            jnp.linalg.cholesky(a @ a.T))


@case("linalg_cpu", f32(2, 4, 4) + 4 * np.eye(4, dtype=np.float32), f32(2, 4, 3), rtol=1e-4,
      atol=1e-4)
def linalg_cpu(a, b):
    """JAX's CPU lowering: jaxlib's lapack_*_ffi custom calls, whose operands and results are
    column-major (operand_shapes_with_layout / the result shape's layout)."""
    spd = a @ jnp.swapaxes(a, -1, -2)
    return (jnp.linalg.solve(a, b), jnp.linalg.cholesky(spd), jnp.linalg.qr(a)[1],
            jnp.linalg.eigvalsh(spd), jnp.linalg.det(a))


_nan_x = f32(40)
_nan_x[[3, 9]] = np.nan
_nan_x[5] = -0.0


@case("sort_nan", _nan_x, i32(0, 4, 40))
def sort_nan(a, k):
    """Sorts whose comparators compare floats in total order (NaN last, -0 before +0): newer
    HloModuleProtos say so in the comparison's order field, HLO text as order=TOTAL."""
    return jnp.sort(a), lax.sort((k, a), num_keys=1), lax.sort((k, a, -a), num_keys=2)


@case("top_k", f32(3, 10))
def top_k(x):
    return lax.top_k(x, 4)


@case("vmap_gather", f32(4, 7), i32(0, 5, 4))
def vmap_gather(x, i):
    return jax.vmap(lambda r, k: lax.dynamic_slice(r, (k,), (3,)))(x, i)


@case("nested_calls", f32(5))
def nested_calls(x):
    @jax.jit
    def inner(v):
        return jnp.sin(v) + 1.0

    @jax.jit
    def outer(v):
        return inner(v) * inner(v * 2)
    return outer(x), lax.optimization_barrier((x, x + 1))[1]


def main():
    os.makedirs(HERE, exist_ok=True)
    only = set(sys.argv[1:])
    lines = []
    for name, fn, args, rtol, atol, platform in CASES:
        if only and name not in only:
            continue
        if platform:
            lowered = jax.jit(fn).trace(*args).lower(lowering_platforms=(platform,))
        else:
            lowered = jax.jit(fn).lower(*args)
        comp = lowered.compiler_ir("hlo")
        with open(os.path.join(HERE, name + ".pb"), "wb") as f:
            f.write(comp.as_serialized_hlo_module_proto())
        with open(os.path.join(HERE, name + ".hlo"), "w") as f:
            f.write(comp.as_hlo_text())
        outs = jax.tree_util.tree_leaves(jax.jit(fn)(*args))
        for i, a in enumerate(args):
            np.save(os.path.join(HERE, f"{name}.in{i}.npy"), np.asarray(a))
        for i, o in enumerate(outs):
            np.save(os.path.join(HERE, f"{name}.out{i}.npy"), np.asarray(o))
        lines.append(f"{name} {len(args)} {len(outs)} {rtol:g} {atol:g}")
    if not only:
        # cases not made here are kept: tf_* are TensorFlow 2.21's HloModuleProtos as it sends
        # them to a PJRT plugin (written by cjrt's CJRT_DUMP_DIR; docs/TENSORFLOW.md)
        with open(os.path.join(HERE, "MANIFEST")) as f:
            lines += [l.rstrip("\n") for l in f if l.startswith("tf_")]
        with open(os.path.join(HERE, "MANIFEST"), "w") as f:
            f.write("\n".join(lines) + "\n")
    print(f"{len(lines)} cases written to {HERE}")


if __name__ == "__main__":
    main()
