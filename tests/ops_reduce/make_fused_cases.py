#!/usr/bin/env python3
"""Writes tests/ops_reduce/fused_cases.mlir: stablehlo.reduce of an elementwise chain whose only
user is the reduce, which the CPU backend computes inside the reduction loop (input fusion:
the chain is never stored). Every axis class the kernels tell apart (leading axes: vertical
rows, several leaves, several chunks; the innermost axis: short runs, rows of 16..512, runs
longer than a leaf; strided reduced axes), for f32, f64, bf16, f16 and s32, add/max/min/mul,
NaN and signed zeros for max/min; the chain reads a broadcast of a kept-shape array (as a
variance or logsumexp does), splat constants and the input; one case whose chain value has
a second user (not fused). The backend fuses inputs of 1 MiB or more only: the small cases
check the chains' values stored, the large ones (built from iotas: no large constants) the
fused loops on every axis class, and the thread pool's split of one output.

Expected values: small integers (exact in every order; a 16-bit sum is rounded once, as the
kernels accumulate it in f32), folded by make_cases.py's reference. Run with a Python that has
numpy and ml_dtypes:

  /work/main/.venv/bin/python tests/ops_reduce/make_fused_cases.py
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_cases as mc  # noqa: E402  (puts tests/common on the path)
from casegen import BF16, Case, elem, ttype, write_beside  # noqa: E402

rng = np.random.default_rng(20261128)
OPS = {"add": ("sum", lambda a, b: a + b), "multiply": ("prod", lambda a, b: a * b),
       "maximum": ("max", mc.fmax), "minimum": ("min", mc.fmin)}


def kept_of(shape, axes):
    return [d for d in range(len(shape)) if d not in axes]


def fused_case(dt, op, axes, shape, special=False, second_use=False):
    """y = (x - B) * 2 + 1 (max/min with NaN and signed zeros: y = x * 1 - B, B with zeros;
    prod: y = (x - B) * 0 + s with s in {1, 2}, kept small), B = a kept-shape array broadcast
    along the reduced axes; reduce(y)"""
    name, fn = OPS[op]
    c = Case("fused reduce %s of an elementwise chain, %s%s over %s%s%s"
             % (name, elem(dt), list(shape), list(axes), " (NaN, signed zeros)" if special else "",
                " (chain also returned)" if second_use else ""))
    kept = kept_of(shape, axes)
    kshape = tuple(shape[d] for d in kept)
    x = mc.data(dt, special, shape) if not special else mc.data(dt, True, shape)
    b = rng.integers(-2, 3, size=kshape).astype(np.float64)
    bb = np.broadcast_to(np.expand_dims(b, tuple(axes)), shape)
    xf = x.astype(np.float64)
    if op == "multiply":
        s = rng.integers(1, 3, size=shape).astype(np.float64)  # the product stays small
        y = (xf - bb) * 0 + s
    elif special:
        y = xf * 1 - bb
    else:
        y = (xf - bb) * 2 + 1
    y = y.astype(dt)
    if np.dtype(dt).kind == "i":
        init = {"add": 0, "multiply": 1, "maximum": np.iinfo(dt).min,
                "minimum": np.iinfo(dt).max}[op]
        fns = {"add": fn, "multiply": fn, "maximum": max, "minimum": min}
        fn = fns[op]
    else:
        init = {"add": 0.0, "multiply": 1.0, "maximum": -np.inf, "minimum": np.inf}[op]
    init = np.array(init, dtype=dt)
    want = mc.reduce_ref(y, axes, fn, init[()])
    t, kt = ttype(shape, dt), ttype(kshape, dt)
    xv, bv, iv = c.const(x), c.const(b.astype(dt)), c.const(init)
    bb_v = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [%s] : (%s) -> %s"
                % (bv, ", ".join(map(str, kept)), kt, t))
    if op == "multiply":
        sv = c.const(s.astype(dt))
        z = c.splat(shape, dt, 0 if np.dtype(dt).kind == "i" else 0.0)
        d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (xv, bb_v, t))
        m = c.op("{r} = stablehlo.multiply %s, %s : %s" % (d, z, t))
        y_v = c.op("{r} = stablehlo.add %s, %s : %s" % (m, sv, t))
    elif special:
        one = c.splat(shape, dt, 1.0)
        m = c.op("{r} = stablehlo.multiply %s, %s : %s" % (xv, one, t))
        y_v = c.op("{r} = stablehlo.subtract %s, %s : %s" % (m, bb_v, t))
    else:
        isint = np.dtype(dt).kind == "i"
        two, one = c.splat(shape, dt, 2 if isint else 2.0), c.splat(shape, dt, 1 if isint else 1.0)
        d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (xv, bb_v, t))
        m = c.op("{r} = stablehlo.multiply %s, %s : %s" % (d, two, t))
        y_v = c.op("{r} = stablehlo.add %s, %s : %s" % (m, one, t))
    r = c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.%s across dimensions = [%s]"
             " : (%s, %s) -> %s" % (y_v, iv, op, ", ".join(map(str, axes)), t, ttype((), dt),
                                    ttype(want.shape, dt)))
    c.expect(r, want)
    if second_use:
        c.expect(y_v, y)
    return c


F32 = np.dtype(np.float32)


def storage(a, dt):
    """a (float64 or float32 values) in dt, as a chain step stores it"""
    return np.asarray(a).astype(dt)


def iota_x(c, shape, dt):
    """x = (i0 * 3 + i1 * 5 + ... ) mod 17 - 8 from f32 iotas (exact small integers), in dt:
    large inputs without large constants. Returns (value, numpy array)"""
    t = ttype(shape, np.float32)
    idx = np.indices(shape).astype(np.float64)
    acc, want = None, np.zeros(shape)
    for d in range(len(shape)):
        k = 2 * d + 3
        i = c.op("{r} = stablehlo.iota dim = %d : %s" % (d, t))
        kv = c.splat(shape, np.float32, float(k))
        term = c.op("{r} = stablehlo.multiply %s, %s : %s" % (i, kv, t))
        acc = term if acc is None else c.op("{r} = stablehlo.add %s, %s : %s" % (acc, term, t))
        want += idx[d] * k
    m17, m8 = c.splat(shape, np.float32, 17.0), c.splat(shape, np.float32, 8.0)
    r = c.op("{r} = stablehlo.remainder %s, %s : %s" % (acc, m17, t))
    x = c.op("{r} = stablehlo.subtract %s, %s : %s" % (r, m8, t))
    want = np.fmod(want, 17.0) - 8.0
    if np.dtype(dt) != F32:
        x = c.op("{r} = stablehlo.convert %s : (%s) -> %s" % (x, t, ttype(shape, dt)))
    return x, want.astype(dt)


def big_case(dt, op, shape, axes, special=False, threads=None):
    """inputs of 1 MiB or more, which the backend fuses: y = (x - 1) * 2 + 1 (sum), or
    y = sqrt(x) * s with s = +-1 (max/min: NaN for x < 0, both signed zeros, irrational values
    compared exactly)"""
    name, fn = OPS[op]
    isint = np.dtype(dt).kind == "i"
    c = Case("fused reduce %s of a chain on iota, %s%s over %s%s (1 MiB or more)"
             % (name, elem(dt), list(shape), list(axes), " (NaN, signed zeros)" if special else ""),
             threads=threads)
    t = ttype(shape, dt)
    if isint:
        xf, xw = iota_x(c, shape, np.float32)
        x = c.op("{r} = stablehlo.convert %s : (%s) -> %s" % (xf, ttype(shape, np.float32), t))
        xw = xw.astype(dt)
    else:
        x, xw = iota_x(c, shape, dt)
    if special:
        sgn = np.where(np.indices(shape)[-1] % 2 == 0, 1.0, -1.0)
        s_v = c.const(sgn.astype(dt)) if shape[-1] <= 2 else None
        if s_v is None:  # s = 1 - 2 (i_last mod 2), from an iota
            tf = ttype(shape, np.float32)
            i = c.op("{r} = stablehlo.iota dim = %d : %s" % (len(shape) - 1, tf))
            two, one = c.splat(shape, np.float32, 2.0), c.splat(shape, np.float32, 1.0)
            m = c.op("{r} = stablehlo.remainder %s, %s : %s" % (i, two, tf))
            m2 = c.op("{r} = stablehlo.multiply %s, %s : %s" % (m, two, tf))
            s_v = c.op("{r} = stablehlo.subtract %s, %s : %s" % (one, m2, tf))
            if np.dtype(dt) != F32:
                s_v = c.op("{r} = stablehlo.convert %s : (%s) -> %s" % (s_v, tf, t))
        with np.errstate(invalid="ignore"):
            sq = storage(np.sqrt(xw.astype(np.float32)), dt)
        y = storage(sq.astype(np.float32) * sgn.astype(np.float32), dt)
        r1 = c.op("{r} = stablehlo.sqrt %s : %s" % (x, t))
        y_v = c.op("{r} = stablehlo.multiply %s, %s : %s" % (r1, s_v, t))
    else:
        one = c.splat(shape, dt, 1 if isint else 1.0)
        two = c.splat(shape, dt, 2 if isint else 2.0)
        d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (x, one, t))
        m = c.op("{r} = stablehlo.multiply %s, %s : %s" % (d, two, t))
        y_v = c.op("{r} = stablehlo.add %s, %s : %s" % (m, one, t))
        y = ((xw.astype(np.float64) - 1) * 2 + 1).astype(dt)
    if isint:
        init = {"add": 0, "maximum": np.iinfo(dt).min, "minimum": np.iinfo(dt).max}[op]
    else:
        init = {"add": 0.0, "maximum": -np.inf, "minimum": np.inf}[op]
    init = np.array(init, dtype=dt)
    if op == "add":  # small integers: exact in float64, rounded once
        want = y.astype(np.float64).sum(axis=tuple(axes)).astype(dt)
    else:
        want = mc.reduce_ref(y, axes, fn if not isint else (max if op == "maximum" else min),
                             init[()])
    iv = c.const(init)
    r = c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.%s across dimensions = [%s]"
             " : (%s, %s) -> %s" % (y_v, iv, op, ", ".join(map(str, axes)), t, ttype((), dt),
                                    ttype(want.shape, dt)))
    c.expect(r, np.asarray(want, dtype=dt))
    return c


def big_cases():
    out = []
    for dt in (np.float32, np.float64, BF16, np.float16, np.int32):
        a = (1 << 20) // (np.dtype(dt).itemsize * 8 * 512)
        shape = (a, 8, 512)
        for axes in ((0,), (1,), (2,), (1, 2), (0, 1), (0, 2), (0, 1, 2)):
            if (axes == (0, 1, 2) and np.dtype(dt) == np.float16) or \
                    (axes == (1,) and np.dtype(dt) != F32):
                continue  # the f16 sum leaves f16's range; axis 1 has many outputs
            out.append(big_case(dt, "add", shape, axes))
        if np.dtype(dt).kind == "f" or np.dtype(dt) == BF16:
            for axes in ((0,), (2,), (0, 2)):
                for op in ("maximum", "minimum"):
                    out.append(big_case(dt, op, shape, axes, special=True))
    # short rows side by side (outputs: a quarter of the input)
    out.append(big_case(np.float32, "add", (32768, 8), (1,)))
    # one output of many elements: the pool splits its tree (vertical: one chunk)
    out.append(big_case(np.float32, "add", (4096, 64), (0,), threads=2))
    out.append(big_case(np.float32, "add", (262144,), (0,), threads=2))
    return out


def main():
    cases = []
    dts = (np.float32, np.float64, BF16, np.float16, np.int32)
    for dt in dts:
        for axes in mc.AXES:
            for op in ("add", "maximum", "minimum"):
                cases.append(fused_case(dt, op, axes, mc.SHAPE))
                if np.dtype(dt).kind != "i" and op != "add":
                    cases.append(fused_case(dt, op, axes, mc.SHAPE, special=True))
        cases.append(fused_case(dt, "multiply", (1,), mc.SHAPE))
        # several leaves and chunks (vertical); rows (16..512), short runs, runs longer than a
        # leaf, and reduced axes that are not adjacent (horizontal)
        if np.dtype(dt) == F32:
            for shape, axes in (((20, 3, 30), (0,)), ((70, 20), (1,)), ((200, 5), (1,)),
                                ((3, 600), (1,)), ((4, 6, 10, 4), (1, 3))):
                cases.append(fused_case(dt, "add", axes, shape))
    cases.append(fused_case(np.float32, "add", (1,), mc.SHAPE, second_use=True))
    cases += big_cases()
    write_beside(__file__, "fused_cases.mlir", cases, "stablehlo.reduce of elementwise chains "
                 "(input fusion) on every axis class and dtype.")


if __name__ == "__main__":
    main()
