#!/usr/bin/env python3
"""Writes h16_cases.mlir: bf16 and f16 arithmetic in fused elementwise groups, which compute in
f32 and round to the 16-bit type after every op (src/cpu/lower_ew.c). Its chains (ew_chain.h:
16-bit chains) round in registers, read 16-bit operands converting on load and store a 16-bit
result; every case is checked against numpy computing one op at a time in f32 rounded to the
16-bit type (ml_dtypes for bf16), with check.expect_eq. Covers chains of 1 to 14 ops (add,
subtract, multiply, divide, maximum, minimum, negate, abs, sqrt, square, clamp) with the chained
value on either side; splat constants, broadcast rows and slices as operands; NaN (with
payloads), infinities, -0.0, subnormals, overflow to infinity and rounding ties (signed zeros and
NaN bits checked through bitcast_convert); bias + relu and x * s + b as models write them; f32
inputs converted to the 16-bit type and 16-bit results converted to f32; an intermediate that
is also a result; element counts that are not multiples of a vector; rows read in place; two
threads. The ctest runs the cases with chains on and off (CJ_EW_CHAIN=off) and on the AVX2 and
baseline kernels.

usage: python tests/ops_ew_chain/make_h16_cases.py   (needs numpy and ml_dtypes)
"""
import os
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from casegen import BF16, Case, ttype, write_beside  # noqa: E402

rng = np.random.default_rng(1616)
cases = []
F16 = np.dtype(np.float16)
F32 = np.float32


def r16(x, dt):
    """f32 values rounded to dt (to nearest even)"""
    return np.asarray(x, F32).astype(dt)


def special(shape, dt):
    """NaN, infinities, signed zeros, subnormals, the largest finite value, operands of rounding
    ties (1 + 2^-8 and 1 + 3 * 2^-8 in bf16, 1 + 2^-11 in f16) and ordinary numbers"""
    fi = ml_dtypes.finfo(dt)
    ulp = 2.0 ** -8 if dt == BF16 else 2.0 ** -11
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, float(fi.smallest_subnormal),
                     -float(fi.smallest_subnormal), float(fi.max), -float(fi.max), 1.0, -1.0,
                     ulp, 3 * ulp, 1 + 2 * ulp, -(1 + 2 * ulp), 2.5, -0.75, 16.0], F32)
    a = rng.choice(pool, size=shape)
    return r16(np.where(rng.random(shape) < 0.5, a, rng.integers(-64, 64, shape) / 8), dt)


def data(shape, dt):
    return r16(rng.standard_normal(shape) * 2, dt)


def np_max(a, b):
    """stablehlo.maximum in f32: a NaN operand gives NaN, max(-0, +0) = +0"""
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    m = np.where(a > b, a, b)
    m = np.where(a == b, (a.view(np.uint32) & b.view(np.uint32)).view(F32), m)
    return np.where(np.isnan(a) | np.isnan(b), F32(np.nan), m)


def np_min(a, b):
    a, b = np.broadcast_arrays(np.asarray(a, F32), np.asarray(b, F32))
    m = np.where(a < b, a, b)
    m = np.where(a == b, (a.view(np.uint32) | b.view(np.uint32)).view(F32), m)
    return np.where(np.isnan(a) | np.isnan(b), F32(np.nan), m)


BIN = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
       "maximum": np_max, "minimum": np_min}
UN = {"negate": np.negative, "abs": np.abs, "sqrt": np.sqrt, "chlo.square": np.square}


def apply_op(c, name, args, vals, dt, shape):
    """one op on dt values: computed in f32, rounded to dt"""
    t = ttype(shape, dt)
    f = [np.asarray(v).astype(F32) for v in vals]
    if name in UN:
        if name.startswith("chlo."):
            r = c.op("{r} = %s %s : %s -> %s" % (name, args[0], t, t))
        else:
            r = c.op("{r} = stablehlo.%s %s : %s" % (name, args[0], t))
        return r, r16(UN[name](f[0]), dt)
    r = c.op("{r} = stablehlo.%s %s, %s : %s" % (name, args[0], args[1], t))
    return r, r16(BIN[name](f[0], f[1]), dt)


def clamp(c, lo, x, hi, dt, shape):
    t = ttype(shape, dt)
    r = c.op("{r} = stablehlo.clamp %s, %s, %s : %s" % (lo[0], x[0], hi[0], t))
    f = [np.asarray(v[1]).astype(F32) for v in (lo, x, hi)]
    return r, r16(np_min(np_max(f[1], f[0]), f[2]), dt)


def bits(c, v, a, dt, exact_nan=False):
    """the result's bits as i16; NaNs made one quiet NaN unless exact_nan (which NaN an add of
    two NaNs gives is the compiler's choice of operand order): checks signed zeros, and with
    exact_nan the NaN payloads kept and made quiet"""
    t, it = ttype(a.shape, dt), ttype(a.shape, np.int16)
    if not exact_nan:
        qn = c.op("{r} = stablehlo.constant dense<%s> : %s" % (
            "0x7FC0" if dt == BF16 else "0x7E00", t))
        bt = ttype(a.shape, np.bool_)
        isn = c.op("{r} = stablehlo.compare NE, %s, %s, FLOAT : (%s, %s) -> %s" % (v, v, t, t, bt))
        v = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (isn, qn, v, bt, t))
        a = np.where(np.isnan(a.astype(F32)), np.array(np.nan, F32).astype(dt), a).astype(dt)
    r = c.op("{r} = stablehlo.bitcast_convert %s : (%s) -> %s" % (v, t, it))
    return r, np.ascontiguousarray(a).view(np.int16)


class Operands:
    """operands of a chain's steps: full arrays, splat constants, a broadcast row, a slice"""

    def __init__(self, c, shape, dt, spec):
        self.pool = []
        for _ in range(3):
            a = special(shape, dt) if spec else data(shape, dt)
            self.pool.append((c.const(a), a))
        for v in (0.5, -3.0, 0.0) if spec else (0.5, -3.0, 7.25):
            self.pool.append((c.splat(shape, dt, v), r16(np.full(shape, v), dt)))
        row = special(shape[-1:], dt) if spec else data(shape[-1:], dt)
        b = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [%d] : (%s) -> %s" % (
            c.const(row), len(shape) - 1, ttype(row.shape, dt), ttype(shape, dt)))
        self.pool.append((b, np.broadcast_to(row, shape)))
        big = data(tuple(d + 3 for d in shape), dt)
        s = c.op("{r} = stablehlo.slice %s [%s] : (%s) -> %s" % (
            c.const(big), ", ".join("1:%d:1" % (1 + d) for d in shape), ttype(big.shape, dt),
            ttype(shape, dt)))
        self.pool.append((s, big[tuple(slice(1, 1 + d) for d in shape)]))

    def pick(self):
        return self.pool[rng.integers(len(self.pool))]


def chain(name, shape, dt, length, spec=False, threads=None, mid_result=False, ops=None):
    """a left-deep chain of `length` ops on random operands, the chained value on a random side"""
    c = Case(name, threads)
    o = Operands(c, shape, dt, spec)
    acc, a = o.pick()
    names = ops or list(BIN) + list(UN) + ["clamp"]
    with np.errstate(all="ignore"):
        for k in range(length):
            op = names[rng.integers(len(names))]
            if op in UN:
                acc, a = apply_op(c, op, [acc], [a], dt, shape)
            elif op == "clamp":
                acc, a = clamp(c, o.pick(), (acc, a), o.pick(), dt, shape)
            else:
                x, xa = o.pick()
                args = ([acc, x], [a, xa]) if rng.random() < 0.5 else ([x, acc], [xa, a])
                acc, a = apply_op(c, op, args[0], args[1], dt, shape)
            if mid_result and k == length // 2:
                c.expect(acc, a)
                r, ra = bits(c, acc, a, dt)
                c.expect(r, ra)
    c.expect(acc, a)
    if spec:
        r, ra = bits(c, acc, a, dt)
        c.expect(r, ra)
    cases.append(c)


def name_of(dt):
    return "bf16" if dt == BF16 else "f16"


for dt in (BF16, F16):
    n = name_of(dt)
    for L in (1, 2, 3, 5, 8, 14):
        chain("chain of %d, %s 7x37" % (L, n), (7, 37), dt, L)
    chain("chain of 6, %s 3x45 (a strip and a tail)" % n, (3, 45), dt, 6)
    chain("chain of 12, %s 24x100 (several blocks)" % n, (24, 100), dt, 12)
    chain("chain of 9, %s 2x700 (rows read in place)" % n, (2, 700), dt, 9)
    chain("chain of 10, %s 16x300 on 2 threads" % n, (16, 300), dt, 10, threads=2)
    chain("chain of 8, %s 5 elements (too few for a chain)" % n, (5,), dt, 8)
    for k in range(4):
        chain("chain %d with NaN, inf, -0, subnormals, ties, %s 9x23" % (k, n), (9, 23), dt, 10,
              spec=True)
    chain("chain of 9 whose intermediate is also a result, %s 11x13" % n, (11, 13), dt, 9,
          spec=True, mid_result=True)


def ties(dt):
    """additions whose exact f32 sums lie halfway between 16-bit neighbours (both ways to even),
    and sums past the largest finite value (to infinity, or back to it)"""
    c = Case("rounding ties and overflow, %s 4x40" % name_of(dt))
    shape = (4, 40)
    ulp = 2.0 ** -8 if dt == BF16 else 2.0 ** -11
    big = float(ml_dtypes.finfo(dt).max)
    half = 2.0 ** 119 if dt == BF16 else 16.0  # half an ulp of the largest finite value
    lo = np.array([1.0, 1 + 2 * ulp, -1.0, -(1 + 2 * ulp), 2.0, big, big, -big], F32)
    hi = np.array([ulp, ulp, -ulp, -ulp, 2 * ulp, half, half / 2, -big], F32)
    a = r16(np.resize(lo, shape), dt)
    b = r16(np.resize(hi, shape), dt)
    t = ttype(shape, dt)
    av, bv = c.const(a), c.const(b)
    s = c.op("{r} = stablehlo.add %s, %s : %s" % (av, bv, t))
    sa = r16(a.astype(F32) + b.astype(F32), dt)
    m = c.op("{r} = stablehlo.multiply %s, %s : %s" % (s, av, t))
    ma = r16(sa.astype(F32) * a.astype(F32), dt)
    with np.errstate(all="ignore"):
        d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (m, bv, t))
        da = r16(ma.astype(F32) - b.astype(F32), dt)
    c.expect(s, sa)
    r, ra = bits(c, d, da, dt)
    c.expect(r, ra)
    cases.append(c)


def nan_payloads(dt):
    """max/min/negate/abs/clamp pass a NaN on unchanged in f32; rounding to bf16 keeps its top
    bits and makes it quiet (signaling NaNs with payloads, either sign), checked bit for bit"""
    c = Case("NaN payloads through max/min/negate/abs, %s 6x29" % name_of(dt))
    shape = (6, 29)
    nans = np.array([0x7F81, 0xFF81, 0x7FC1, 0xFFA5, 0x7F80, 0x0001, 0x8000], np.uint16)
    a = np.where(rng.random(shape) < 0.4, rng.choice(nans, shape),
                 data(shape, dt).view(np.uint16)).astype(np.uint16).view(dt)
    b = data(shape, dt)
    t = ttype(shape, dt)
    av, bv = c.const(a), c.const(b)
    x = c.op("{r} = stablehlo.maximum %s, %s : %s" % (av, bv, t))
    x = c.op("{r} = stablehlo.negate %s : %s" % (x, t))
    x = c.op("{r} = stablehlo.minimum %s, %s : %s" % (x, bv, t))
    x = c.op("{r} = stablehlo.abs %s : %s" % (x, t))
    af, bf = a.astype(F32), b.astype(F32)
    u = a.view(np.uint16)
    isn = (u & 0x7FFF) > 0x7F80
    with np.errstate(all="ignore"):
        e = r16(np.abs(np_min(-r16(np_max(af, bf), dt).astype(F32), bf)), dt).view(np.uint16)
    e = np.where(isn, (u | 0x0040) & 0x7FFF, e)  # the NaN kept, quiet, abs clears the sign
    r, _ = bits(c, x, a, dt, exact_nan=True)
    c.expect(r, e.view(np.int16))
    cases.append(c)


def model_ops(dt):
    """bias + relu, x * s + b and an f32 input converted to the 16-bit type, with a 16-bit
    result and one converted to f32, as mixed-precision models write them"""
    n = name_of(dt)
    shape = (33, 70)
    c = Case("bias + relu, x * s + b, converts, %s 33x70" % n)
    t, rt, ft = ttype(shape, dt), ttype(shape[-1:], dt), ttype(shape, F32)
    x = data(shape, dt)
    b, s = data(shape[-1:], dt), data(shape[-1:], dt)
    xf = (rng.standard_normal(shape) * 3).astype(F32)
    xv, bv, sv, xfv = c.const(x), c.const(b), c.const(s), c.const(xf)
    bb = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [1] : (%s) -> %s" % (bv, rt, t))
    sb = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [1] : (%s) -> %s" % (sv, rt, t))
    z = c.op("{r} = stablehlo.constant dense<0.0> : %s" % t)
    y = c.op("{r} = stablehlo.add %s, %s : %s" % (xv, bb, t))
    y = c.op("{r} = stablehlo.maximum %s, %s : %s" % (y, z, t))
    ya = r16(np_max(r16(x.astype(F32) + b.astype(F32), dt).astype(F32), 0), dt)
    c.expect(y, ya)
    r, ra = bits(c, y, ya, dt)
    c.expect(r, ra)
    w = c.op("{r} = stablehlo.multiply %s, %s : %s" % (xv, sb, t))
    w = c.op("{r} = stablehlo.add %s, %s : %s" % (w, bb, t))
    wa = r16(r16(x.astype(F32) * s.astype(F32), dt).astype(F32) + b.astype(F32), dt)
    c.expect(w, wa)
    h = c.op("{r} = stablehlo.convert %s : (%s) -> %s" % (xfv, ft, t))
    h = c.op("{r} = stablehlo.multiply %s, %s : %s" % (h, sb, t))
    h = c.op("{r} = stablehlo.subtract %s, %s : %s" % (h, xv, t))
    ha = r16(r16(r16(xf, dt).astype(F32) * s.astype(F32), dt).astype(F32) - x.astype(F32), dt)
    hf = c.op("{r} = stablehlo.convert %s : (%s) -> %s" % (h, t, ft))
    c.expect(hf, ha.astype(F32))
    cases.append(c)


def select_h16(dt, spec):
    """selects in a 16-bit chain (ew_chain.h: MASK, SELT/SELF): 16-bit array operands of the
    select converted on load, the chained value as either operand, a broadcast predicate"""
    shape = (9, 70)
    c = Case("selects in a %s chain%s 9x70" % (name_of(dt), ", NaN, inf, -0," if spec else ""))
    t, bt = ttype(shape, dt), ttype(shape, np.bool_)
    gen = special if spec else data
    x, y, b, a = (gen(shape, dt) for _ in range(4))
    xv, yv, bv, av = (c.const(v) for v in (x, y, b, a))
    m = rng.random(shape[0]) < 0.5
    m[0] = True
    mb = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [0] : (%s) -> %s" % (
        c.const(m), ttype(m.shape, np.bool_), bt))
    mm = np.broadcast_to(m[:, None], shape)
    sv, z = c.splat(shape, dt, 0.5), c.splat(shape, dt, 0.0)
    f = lambda v: v.astype(F32)  # noqa: E731
    with np.errstate(all="ignore"):
        u = c.op("{r} = stablehlo.multiply %s, %s : %s" % (xv, sv, t))
        u = c.op("{r} = stablehlo.add %s, %s : %s" % (u, bv, t))
        ua = r16(f(r16(f(x) * F32(0.5), dt)) + f(b), dt)
        r = c.op("{r} = stablehlo.maximum %s, %s : %s" % (yv, z, t))
        ra = r16(np_max(f(y), 0), dt)
        v = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (mb, u, r, bt, t))
        va = np.where(mm, ua, ra)
        w = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (mb, av, v, bt, t))
        wa = np.where(mm, a, va)
        w = c.op("{r} = stablehlo.subtract %s, %s : %s" % (w, yv, t))
        wa = r16(f(wa) - f(y), dt)
        g = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (mb, w, xv, bt, t))
        ga = np.where(mm, wa, x)
        g = c.op("{r} = stablehlo.multiply %s, %s : %s" % (g, bv, t))
        ga = r16(f(ga) * f(b), dt)
    c.expect(g, ga)
    rb, rba = bits(c, g, ga, dt)
    c.expect(rb, rba)
    cases.append(c)


for dt in (BF16, F16):
    with np.errstate(all="ignore"):
        ties(dt)
    model_ops(dt)
    select_h16(dt, False)
    select_h16(dt, True)
nan_payloads(BF16)

write_beside(__file__, "h16_cases.mlir", cases,
             "bf16/f16 arithmetic in fused elementwise groups (ew_chain.h: 16-bit chains).")
