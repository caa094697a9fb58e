#!/usr/bin/env python3
"""Writes tests/ops_window/rows_cases.mlir: pooling whose window moves along the last dim
(channels-first NCW/NCHW data, and channels-last 1-D pools with stride 1, whose last two dims
the CPU backend merges into one), which the CPU backend runs over output rows with f32/f64
add/max/min run loops for strides 1, 2, 3 and any (k_window.c, rw_rows and rwr_*), with
XLA:CPU's outputs (make_jax_cases.py's JaxCase): max, min and sum pools with SAME and VALID
padding, strides 1-4, odd sizes, windows overlapping and not, max/min with a non-identity
init value (the padding combines it), NaN and signed zeros in the inputs (the sign of zeros
checked on the bits), f64, and f16/bf16 (strided runs gathered for the combiners). Sums are
of small integers (exact in any order). Run with
/work/main/.venv/bin/python tests/ops_window/make_rows_cases.py
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
    return lax.reduce_window(x, np.array(init, x.dtype), op, win, strides, pad)


def bits(y):
    """the bit patterns (NaN's left out: which NaN is the engines' choice)"""
    it = jnp.int32 if y.dtype == jnp.float32 else jnp.int64
    return jnp.where(jnp.isnan(y), 0, lax.bitcast_convert_type(y, it))


def special(r, shape, dt):
    """small integers with NaN, signed zeros and infinities sprinkled in, and a run of -0"""
    x = r.integers(-3, 4, shape).astype(dt)
    m = r.random(shape) < 0.12
    sp = np.array([np.nan, -0.0, 0.0, np.inf, -np.inf], dt)
    x[m] = sp[r.integers(0, len(sp), m.sum())]
    x.reshape(-1)[5:9] = -0.0
    return x


def cases():
    r = np.random.default_rng(20261130)
    out = []
    for dt in (np.float32, np.float64):
        nm = np.dtype(dt).name
        x4 = special(r, (2, 2, 13, 11), dt)          # NCHW
        mx = lambda w, s, p: (lambda a: pool(a, -np.inf, lax.max, (1, 1) + w, (1, 1) + s, p))
        mn = lambda w, s, p: (lambda a: pool(a, np.inf, lax.min, (1, 1) + w, (1, 1) + s, p))
        out.append(JaxCase(
            f"{nm} NCHW max pools 2x2/2 VALID, 3x3/2 SAME, 3x3/3 SAME, 2x2/1 SAME, 3x3/4 SAME "
            "(NaN, inf, signed zeros) and their bits",
            lambda a: (mx((2, 2), (2, 2), "VALID")(a), mx((3, 3), (2, 2), "SAME")(a),
                       mx((3, 3), (3, 3), "SAME")(a), mx((2, 2), (1, 1), "SAME")(a),
                       mx((3, 3), (4, 4), "SAME")(a),
                       bits(mx((2, 2), (2, 2), "VALID")(a)), bits(mx((3, 3), (2, 2), "SAME")(a))),
            (x4,), exact=True))
        out.append(JaxCase(
            f"{nm} NCHW min pools 2x2/2 VALID, 3x3/2 SAME, 3x3/3 VALID, 4x4/1 SAME and their bits",
            lambda a: (mn((2, 2), (2, 2), "VALID")(a), mn((3, 3), (2, 2), "SAME")(a),
                       mn((3, 3), (3, 3), "VALID")(a), mn((4, 4), (1, 1), "SAME")(a),
                       bits(mn((2, 2), (2, 2), "VALID")(a)), bits(mn((3, 3), (3, 3), "VALID")(a))),
            (x4,), exact=True))
        xs = r.integers(-4, 5, (2, 2, 13, 11)).astype(dt)
        sm = lambda w, s, p, iv=0: (lambda a: pool(a, iv, lax.add, (1, 1) + w, (1, 1) + s, p))
        out.append(JaxCase(
            f"{nm} NCHW sum pools 2x2/2 VALID, 3x3/2 SAME, 3x3/3 SAME, 3x3/1 SAME, 2x2/4 VALID, "
            "and 3x2/2x3 with padding (1, 2)",
            lambda a: (sm((2, 2), (2, 2), "VALID")(a), sm((3, 3), (2, 2), "SAME")(a),
                       sm((3, 3), (3, 3), "SAME")(a), sm((3, 3), (1, 1), "SAME")(a),
                       sm((2, 2), (4, 4), "VALID")(a),
                       sm((3, 2), (2, 3), ((0, 0), (0, 0), (1, 2), (1, 2)))(a)),
            (xs,), exact=True))
        # a max pool with init 0 (padding combines it: relu and pool in one)
        out.append(JaxCase(
            f"{nm} NCHW max pool with init 0 and padding (1, 1), stride 2; min with init 1",
            lambda a: (pool(a, 0.0, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), ((0, 0), (0, 0), (1, 1), (1, 1))),
                       pool(a, 1.0, lax.min, (1, 1, 2, 3), (1, 1, 3, 2), ((0, 0), (0, 0), (1, 0), (2, 1)))),
            (x4,), exact=True))
        x3 = special(r, (3, 5, 37), dt)                # NCW
        out.append(JaxCase(
            f"{nm} NCW max 3/2 SAME, 2/2 VALID, 4/3 SAME, min 3/1 SAME, sum 2/2 VALID pools",
            lambda a: (pool(a, -np.inf, lax.max, (1, 1, 3), (1, 1, 2), "SAME"),
                       pool(a, -np.inf, lax.max, (1, 1, 2), (1, 1, 2), "VALID"),
                       pool(a, -np.inf, lax.max, (1, 1, 4), (1, 1, 3), "SAME"),
                       pool(a, np.inf, lax.min, (1, 1, 3), (1, 1, 1), "SAME"),
                       bits(pool(a, -np.inf, lax.max, (1, 1, 3), (1, 1, 2), "SAME"))),
            (x3,), exact=True))
        xc = special(r, (3, 29, 7), dt)                # NWC, stride 1: merged rows
        out.append(JaxCase(
            f"{nm} NWC stride-1 max 2 VALID, 3 SAME, 4 SAME, min 3 SAME pools (merged rows) and bits",
            lambda a: (pool(a, -np.inf, lax.max, (1, 2, 1), (1, 1, 1), "VALID"),
                       pool(a, -np.inf, lax.max, (1, 3, 1), (1, 1, 1), "SAME"),
                       pool(a, -np.inf, lax.max, (1, 4, 1), (1, 1, 1), "SAME"),
                       pool(a, np.inf, lax.min, (1, 3, 1), (1, 1, 1), "SAME"),
                       bits(pool(a, -np.inf, lax.max, (1, 3, 1), (1, 1, 1), "SAME")),
                       bits(pool(a, np.inf, lax.min, (1, 2, 1), (1, 1, 1), "VALID"))),
            (xc,), exact=True))
    for dt in (jnp.bfloat16, np.float16):          # strided 16-bit runs: gathered (gather16)
        nm = np.dtype(dt).name
        xh = special(r, (2, 2, 11, 17), np.float32).astype(dt)
        b16 = lambda y: jnp.where(jnp.isnan(y), 0, lax.bitcast_convert_type(y, jnp.int16))
        out.append(JaxCase(
            f"{nm} NCHW max 3x3/2 SAME, 2x2/2 VALID, min 3x3/3 SAME, 4x4/4 SAME, sum 2x2/2 VALID "
            "pools (NaN, inf, signed zeros) and their bits",
            lambda a: (pool(a, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME"),
                       pool(a, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
                       pool(a, np.inf, lax.min, (1, 1, 3, 3), (1, 1, 3, 3), "SAME"),
                       pool(a, np.inf, lax.min, (1, 1, 4, 4), (1, 1, 4, 4), "SAME"),
                       pool(a, 0, lax.add, (1, 1, 2, 2), (1, 1, 2, 2), "VALID"),
                       b16(pool(a, -np.inf, lax.max, (1, 1, 3, 3), (1, 1, 2, 2), "SAME")),
                       b16(pool(a, np.inf, lax.min, (1, 1, 3, 3), (1, 1, 3, 3), "SAME"))),
            (xh,), exact=True))
    return out


def main():
    write_beside(__file__, "rows_cases.mlir", cases(),
                 "pooling along the last dim: JAX programs and XLA:CPU's outputs (jax %s)."
                 % jax.__version__)


if __name__ == "__main__":
    main()
