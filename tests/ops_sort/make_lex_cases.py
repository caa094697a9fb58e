#!/usr/bin/env python3
"""Writes tests/ops_sort/lex_cases.mlir: sorts with lexicographic comparators of several keys
(jnp.lexsort, lax.sort with num_keys > 1), which the CPU backend sorts by one packed key when
the keys' widths add up to 64 bits or less (k_sort.c, lex_setup), and by the nested comparator
otherwise, with XLA:CPU's outputs (make_jax_cases.py's JaxCase). Keys with many ties (stability
decides the order), float keys with -0, +0, NaN and infinities, descending keys, signed and
unsigned integer keys of 8, 16 and 32 bits and booleans, slices along a strided dim, a prefix
read through a slice (top-k style), and 3 keys of 96 bits (the nested comparator); and sorts of
slices of 1500 (the radix sort): ints of 8-64 bits with ties, floats with NaN and signed zeros,
descending, top_k of a large k. Run with
/work/main/.venv/bin/python tests/ops_sort/make_lex_cases.py
"""
import os
import sys

sys.dont_write_bytecode = True
os.environ.setdefault("JAX_PLATFORMS", "cpu")
HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "ops_gather"))

import numpy as np  # noqa: E402
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402
from make_jax_cases import JaxCase  # noqa: E402  (puts tests/common on the path)
from casegen import write_beside  # noqa: E402


def cases():
    r = np.random.default_rng(20261128)
    n = 97
    i32 = lambda lo, hi, m=n: r.integers(lo, hi, m).astype(np.int32)
    fvals = np.array([0.0, -0.0, np.nan, 1.5, -1.5, np.inf, -np.inf, 2.0], np.float32)
    f32 = r.choice(fvals, n)
    cs = [JaxCase("lexsort of two int32 keys with ties", lambda a, b: jnp.lexsort((b, a)),
                  (i32(-5, 5), i32(-4, 4)), exact=True),
          JaxCase("lexsort: f32 first key (-0, +0, NaN, inf), int32 second",
                  lambda a, b: jnp.lexsort((b, a)), (f32, i32(-3, 3)), exact=True),
          JaxCase("lexsort: int32 first key, f32 second", lambda a, b: jnp.lexsort((b, a)),
                  (i32(-3, 3), f32), exact=True),
          JaxCase("lexsort of uint8, int16 and bool keys",
                  lambda a, b, c: jnp.lexsort((c, b, a)),
                  (r.integers(0, 3, n).astype(np.uint8), r.integers(-3, 3, n).astype(np.int16),
                   r.random(n) > 0.5), exact=True),
          JaxCase("lax.sort num_keys=2 along dim 0 of [12, 5] (strided slices), all operands",
                  lambda a, b, c: lax.sort((a, b, c), dimension=0, num_keys=2),
                  (i32(-2, 2, 60).reshape(12, 5), r.choice(fvals, 60).reshape(12, 5),
                   np.arange(60, dtype=np.int32).reshape(12, 5)), exact=True),
          JaxCase("descending first key (negated) and ascending second, positions",
                  lambda a, b: lax.sort((-a, b, jnp.arange(n, dtype=jnp.int32)), num_keys=2)[2],
                  (i32(-3, 3), i32(-5, 5)), exact=True),
          JaxCase("the first 7 of a two-key sort (a slice of the results)",
                  lambda a, b: lax.sort((a, b, jnp.arange(n, dtype=jnp.int32)), num_keys=2)[2][:7],
                  (i32(-3, 3), i32(-5, 5)), exact=True),
          JaxCase("3 int32 keys (96 bits: the nested comparator)",
                  lambda a, b, c: jnp.lexsort((c, b, a)), (i32(-2, 2), i32(-2, 2), i32(-2, 2)),
                  exact=True)]
    # long slices (>= 512: the radix sort over the bytes in which the keys differ)
    m = 1500
    big = r.integers(-2**31, 2**31 - 1, m).astype(np.int32)
    big[::7] = big[3]  # ties: stability decides
    fl = r.standard_normal(m).astype(np.float32)
    fl[::11] = np.nan
    fl[1::13] = -0.0
    fl[2::13] = 0.0
    fl[3::17] = -np.inf
    cs += [JaxCase("argsort and sort of 1500 int32 (ties) and of int32 rows [3, 700]",
                   lambda a, b: (jnp.argsort(a, stable=True), jnp.sort(a), jnp.sort(b, axis=1)),
                   (big, r.integers(-5, 5, (3, 700)).astype(np.int32)), exact=True),
           JaxCase("sort and argsort of 1500 f32 with NaN, -0, +0, -inf; descending",
                   lambda a: (jnp.sort(a), jnp.argsort(a, stable=True),
                              jnp.argsort(a, stable=True, descending=True)), (fl,), exact=True),
           JaxCase("argsort of 1500 uint8, int16 and int64 values",
                   lambda a, b, c: (jnp.argsort(a, stable=True), jnp.argsort(b, stable=True),
                                    jnp.argsort(c, stable=True)),
                   (r.integers(0, 256, m).astype(np.uint8), r.integers(-300, 300, m).astype(np.int16),
                    np.concatenate([r.integers(-2**40, 2**40, m // 2), r.integers(-9, 9, m - m // 2)])),
                   exact=True),
           JaxCase("lax.top_k k=400 of 1500 f32 (a full sort of the slice)",
                   lambda a: jax.lax.top_k(a, 400), (fl,), exact=True)]
    return cs


def main():
    write_beside(__file__, "lex_cases.mlir", cases(),
                 "lexicographic sorts: JAX programs and XLA:CPU's outputs (jax %s)." % jax.__version__)


if __name__ == "__main__":
    main()
