#!/usr/bin/env python3
"""Writes h16_cases.mlir: stablehlo.reduce of f16 (and bf16) arrays, whose fast-path kernels
accumulate in f32 and convert each element on the bits (k_reduce_kern.h: rk_f16), checked
against numpy with check.expect_eq: maximum and minimum with NaN, infinities, signed zeros,
subnormals and the largest finite value (NaN propagates, max(-0, +0) = +0), sums and products
of small integers and halves (exact in every order, so any tree gives them), over each axis
and over all axes of shapes with odd lengths (tails of the vector loops), contiguous and
strided, and on 2 threads.

usage: python tests/ops_reduce/make_h16_cases.py   (needs numpy and ml_dtypes)
"""
import os
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from casegen import BF16, Case, body2, ttype, write_beside  # noqa: E402

rng = np.random.default_rng(1617)
cases = []
F16 = np.dtype(np.float16)
F32 = np.float32


def special(shape, dt):
    fi = ml_dtypes.finfo(dt)
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, float(fi.smallest_subnormal),
                     -float(fi.smallest_subnormal), float(fi.max), -float(fi.max), 1.5, -2.25],
                    F32)
    a = rng.choice(pool, size=shape)
    keep = rng.random(shape) < 0.7
    return np.where(keep, rng.integers(-40, 40, shape) / 4, a).astype(F32).astype(dt)


def np_max(a, b):
    m = np.where(a > b, a, b)
    m = np.where(a == b, (a.view(np.uint32) & b.view(np.uint32)).view(F32), m)
    return np.where(np.isnan(a) | np.isnan(b), F32(np.nan), m)


def np_min(a, b):
    m = np.where(a < b, a, b)
    m = np.where(a == b, (a.view(np.uint32) | b.view(np.uint32)).view(F32), m)
    return np.where(np.isnan(a) | np.isnan(b), F32(np.nan), m)


OPS = {"max": ("maximum", "0xFC00", np_max), "min": ("minimum", "0x7C00", np_min),
       "sum": ("add", "0x0000", np.add), "prod": ("multiply", "0x3C00", np.multiply)}


def fold(x, axes, f):
    """folds dims axes of the f32 array x with f, in index order"""
    for ax in sorted(axes, reverse=True):
        r = np.take(x, 0, axis=ax)
        for k in range(1, x.shape[ax]):
            r = f(r, np.take(x, k, axis=ax))
        x = r
    return x


def reduce_case(name, shape, axes, dt, kind, threads=None):
    c = Case("reduce %s %s%s over %s%s" % (kind, "f16" if dt == F16 else "bf16", list(shape),
                                          list(axes), name), threads)
    op, init_bits, f = OPS[kind]
    if kind in ("max", "min"):
        x = special(shape, dt)
    elif kind == "prod":  # +-1, +-2 and +-0.5: exact products
        x = rng.choice(np.array([1, -1, 2, 0.5, -0.5, 1, 1], F32), size=shape).astype(dt)
    else:
        x = (rng.integers(-16, 16, shape) / 2).astype(F32).astype(dt)
    if dt == BF16:
        init_bits = {"0xFC00": "0xFF80", "0x7C00": "0x7F80", "0x0000": "0x0000",
                     "0x3C00": "0x3F80"}[init_bits]
    xv = c.const(x)
    rshape = tuple(d for i, d in enumerate(shape) if i not in axes)
    t0 = ttype((), dt)
    iv = c.op("{r} = stablehlo.constant dense<%s> : %s" % (init_bits, t0))
    r = c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.%s across dimensions = [%s] "
             ": (%s, %s) -> %s" % (xv, iv, op, ", ".join(map(str, axes)), ttype(shape, dt), t0,
                                   ttype(rshape, dt)))
    with np.errstate(all="ignore"):
        e = fold(x.astype(F32), axes, f).astype(dt)
    c.expect(r, e)
    if kind in ("max", "min"):  # signed zeros and NaN signs on the bits
        it = ttype(rshape, np.int16)
        b = c.op("{r} = stablehlo.bitcast_convert %s : (%s) -> %s" % (r, ttype(rshape, dt), it))
        c.expect(b, np.asarray(e).view(np.int16))
    cases.append(c)


for dt in (F16, BF16):
    for kind in ("max", "min", "sum", "prod"):
        for shape, axes in (((7, 53), (1,)), ((7, 53), (0,)), ((3, 5, 37), (2,)),
                            ((3, 5, 37), (0, 2)), ((130,), (0,)), ((9, 1100), (1,)),
                            ((41, 67), (0, 1))):
            reduce_case("", shape, axes, dt, kind)
    reduce_case(" on 2 threads", (64, 300), (1,), dt, "max", threads=2)
    reduce_case(" on 2 threads", (300, 64), (0,), dt, "min", threads=2)

write_beside(__file__, "h16_cases.mlir", cases,
             "f16/bf16 reductions (k_reduce_kern.h: f32 accumulation, f16 converted on the bits).")
