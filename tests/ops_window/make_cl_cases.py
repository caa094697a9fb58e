#!/usr/bin/env python3
"""Writes tests/ops_window/cl_cases.mlir: pooling of channels-last data (NWC, NHWC: the last dim
has a unit window), which the CPU backend runs over slabs of whole channel runs (k_window.c,
rw_slabs) and, for f32 max/min pooling gradients, over channel lanes (sas_lanes), with
XLA:CPU's outputs (make_jax_cases.py's JaxCase): max, min and average pools with SAME and
VALID padding, strides 1-3, windows overlapping and not, ties (the first element in window
order is selected), NaN and signed zeros in the inputs, f64, f32 pools of 3-D and 4-D data,
and a min pool's gradient. Run with /work/main/.venv/bin/python tests/ops_window/make_cl_cases.py
"""
import os
import sys

sys.dont_write_bytecode = True
os.environ.setdefault("JAX_PLATFORMS", "cpu")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ops_gather"))

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from make_jax_cases import JaxCase  # noqa: E402  (puts tests/common on the path)
from casegen import write_beside  # noqa: E402

jax.config.update("jax_enable_x64", True)


def pool(x, init, op, win, strides, pad):
    return lax.reduce_window(x, init, op, win, strides, pad)


def maxp(win, strides, pad):
    return lambda x: pool(x, -jnp.inf, lax.max, win, strides, pad)


def cases():
    r = np.random.default_rng(20261128)
    # few distinct values: ties inside windows decide which position the gradient goes to
    x1 = r.integers(-3, 4, (3, 23, 5)).astype(np.float32)
    x1[0, 4, 1] = np.nan
    x1[1, 7, 2] = -0.0
    x1[2, 10, 3] = np.nan
    x1[2, 11, 3] = np.nan
    x2 = r.integers(-2, 3, (2, 9, 11, 4)).astype(np.float32)
    x2[1, 3, 3, 0] = np.nan
    g = lambda f: jax.grad(lambda x: jnp.sum(jnp.where(jnp.isnan(f(x)), 0.0, f(x)) ** 2 *
                                           jnp.arange(f(x).size, dtype=x.dtype).reshape(f(x).shape)))
    cs = [JaxCase("1-D max pools (NWC) SAME 3/2, VALID 2/2, SAME 4/3 with NaN and -0",
                  lambda x: (maxp((1, 3, 1), (1, 2, 1), "SAME")(x), maxp((1, 2, 1), (1, 2, 1), "VALID")(x),
                             maxp((1, 4, 1), (1, 3, 1), "SAME")(x)), (x1,), exact=True),
          JaxCase("1-D min and sum pools (NWC), stride 1 and 2",
                  lambda x: (pool(x, jnp.inf, lax.min, (1, 3, 1), (1, 1, 1), "SAME"),
                             pool(x, 0.0, lax.add, (1, 3, 1), (1, 2, 1), "VALID"),
                             pool(x, 0.0, lax.add, (1, 2, 1), (1, 1, 1), ((0, 0), (1, 1), (0, 0)))),
                  (x1,)),
          JaxCase("2-D max and sum pools (NHWC) 2x2/2, 3x3/2 SAME, 3x3/1",
                  lambda x: (maxp((1, 2, 2, 1), (1, 2, 2, 1), "VALID")(x),
                             maxp((1, 3, 3, 1), (1, 2, 2, 1), "SAME")(x),
                             pool(x, 0.0, lax.add, (1, 3, 3, 1), (1, 1, 1, 1), "SAME")), (x2,)),
          JaxCase("gradient of a 1-D max pool SAME 3/2 (ties, NaN)",
                  g(maxp((1, 3, 1), (1, 2, 1), "SAME")), (x1,)),
          JaxCase("gradient of a 1-D max pool VALID 2/1 (overlapping windows)",
                  g(maxp((1, 2, 1), (1, 1, 1), "VALID")), (x1,)),
          JaxCase("gradient of 2-D max pools 2x2/2 and 3x3/2 SAME",
                  lambda x: (g(maxp((1, 2, 2, 1), (1, 2, 2, 1), "VALID"))(x),
                             g(maxp((1, 3, 3, 1), (1, 2, 2, 1), "SAME"))(x)), (x2,)),
          JaxCase("gradient of a 1-D min pool SAME 3/2",
                  g(lambda x: pool(x, jnp.inf, lax.min, (1, 3, 1), (1, 2, 1), "SAME")), (x1,)),
          JaxCase("f64 1-D max pool and its gradient",
                  lambda x: (maxp((1, 3, 1), (1, 2, 1), "SAME")(x), g(maxp((1, 3, 1), (1, 2, 1), "SAME"))(x)),
                  (x1.astype(np.float64),))]
    return cs + half_cases()


def half_cases():
    """f16 and bf16 pools, whose max/min combiners work on the bit patterns (k_gather_common.c,
    h16_max): NaN of both signs, infinities, signed zeros, subnormals (f16 only: XLA:CPU flushes
    bf16 subnormals in these pools to zero, cjrt keeps them) and ties"""
    r = np.random.default_rng(20261129)
    # NaN's sign left out: XLA:CPU gives +NaN, cjrt the NaN operand's sign
    bits = lambda y: jnp.where(jnp.isnan(y), 0, lax.bitcast_convert_type(y, jnp.int16))
    out = []
    for dt, tiny in ((jnp.float16, 2.0 ** -24), (jnp.bfloat16, 2.0 ** -126)):
        x = (r.integers(-6, 7, (2, 7, 9, 5)) * 0.25).astype(np.float32)
        sp = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, 3 * tiny, -5 * tiny])
        m = r.random(x.shape) < 0.25
        x[m] = sp[r.integers(0, len(sp), m.sum())]
        x[1, 2:4, 2:4, 1] = -0.0    # a window of negative zeros only
        x[1, 4:6, 4:6, 2] = [[0.0, -0.0], [-0.0, 0.0]]
        x[0, 0:2, 0:2, 3] = -tiny   # a window of equal subnormals
        x = x.astype(dt)
        init = np.array(-np.inf, dt)
        mp = lambda w, s, p: (lambda a: pool(a, init, lax.max, w, s, p))
        out.append(JaxCase(f"{np.dtype(dt).name} max 2x2/2, 3x3/2 SAME, min 3x3/2 pools and a sum pool"
                           " (NHWC; NaN, inf, signed zeros, subnormals)",
                           lambda a: (mp((1, 2, 2, 1), (1, 2, 2, 1), "VALID")(a),
                                      mp((1, 3, 3, 1), (1, 2, 2, 1), "SAME")(a),
                                      pool(a, np.array(np.inf, dt), lax.min, (1, 3, 3, 1), (1, 2, 2, 1), "SAME"),
                                      pool(a, np.array(0, dt), lax.add, (1, 2, 2, 1), (1, 1, 1, 1), "VALID"),
                                      jnp.max(a, axis=2), jnp.min(a, axis=1),
                                      # the bits: the sign of zeros
                                      bits(mp((1, 2, 2, 1), (1, 2, 2, 1), "VALID")(a)),
                                      bits(pool(a, np.array(np.inf, dt), lax.min, (1, 2, 2, 1), (1, 2, 2, 1), "VALID"))),
                           (x,), exact=True))
    # f16 sums and products of pairs (one rounding, XLA:CPU's too): ties, subnormal results,
    # overflow to inf, for the f16 add/mul combiners' conversions (k_gather_common.c, h16_from_f32)
    y = (r.choice([-1.0, 1.0], (2, 6, 16, 8)) * 2.0 ** r.uniform(-26, 16, (2, 6, 16, 8))).astype(np.float16)
    pair = lambda a, op, iv: pool(a, np.array(iv, np.float16), op, (1, 1, 2, 1), (1, 1, 2, 1), "VALID")
    out.append(JaxCase("f16 sums and products of pairs (NHWC; rounding, subnormals, overflow)",
                       lambda a: (pair(a, lax.add, 0), pair(a, lax.mul, 1), bits(pair(a, lax.add, 0)),
                                  bits(pair(a, lax.mul, 1))), (y,), exact=True))
    return out


def main():
    write_beside(__file__, "cl_cases.mlir", cases(),
                 "channels-last pooling: JAX programs and XLA:CPU's outputs (jax %s)." % jax.__version__)


if __name__ == "__main__":
    main()
