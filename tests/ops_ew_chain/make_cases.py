#!/usr/bin/env python3
"""Writes cases.mlir: chains of f32/f64 arithmetic in fused elementwise groups (each result used
only by the next op: src/cpu/ew_chain.h), checked against numpy computing one rounded op at a
time, with check.expect_eq. Covers chains of 2 to 20 ops (add, subtract, multiply, divide,
maximum, minimum, negate, abs, sqrt, square) with the chained value on either side, splat
constants, broadcasts and slices as operands, NaN/inf/-0.0/subnormal inputs (signed zeros
checked on the bits), an intermediate that is also a result, a loop-carried value updated in
place, a Jacobi stencil (pad + 4 slices), stencils reading padded slices through boxes (nonzero padding,
either side, the chain's start) and element counts that are not multiples of a vector.
The ctest runs the cases with chains on and off (CJ_EW_CHAIN=off).

usage: python tests/ops_ew_chain/make_cases.py   (needs numpy and ml_dtypes)
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from casegen import Case, counted_while, np_neighbours, pad_neighbours, ttype, write  # noqa: E402

rng = np.random.default_rng(2026)
cases = []
INT = {np.dtype(np.float32): (np.int32, np.uint32), np.dtype(np.float64): (np.int64, np.uint64)}


def special(shape, dt):
    """values with NaN, infinities, signed zeros, subnormals and ordinary numbers"""
    dt = np.dtype(dt)
    tiny = np.finfo(dt).smallest_subnormal
    pool = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, 1.0, -1.0, 2.5, -0.75,
                     3.0, 1e30 if dt == np.float32 else 1e300], dt)
    a = rng.choice(pool, size=shape)
    return np.where(rng.random(shape) < 0.5, a, (rng.integers(-64, 64, shape) / 8).astype(dt))


def data(shape, dt):
    return (rng.integers(-64, 64, shape) / 8 + 0.0625).astype(dt)


def np_max(a, b):
    """stablehlo.maximum: a NaN operand gives NaN, max(-0, +0) = +0"""
    a, b = np.broadcast_arrays(a, b)
    it = INT[a.dtype][1]
    m = np.where(a > b, a, b)
    m = np.where(a == b, (a.view(it) & b.view(it)).view(a.dtype), m)
    return np.where(np.isnan(a) | np.isnan(b), np.array(np.nan, a.dtype), m)


def np_min(a, b):
    a, b = np.broadcast_arrays(a, b)
    it = INT[a.dtype][1]
    m = np.where(a < b, a, b)
    m = np.where(a == b, (a.view(it) | b.view(it)).view(a.dtype), m)
    return np.where(np.isnan(a) | np.isnan(b), np.array(np.nan, a.dtype), m)


BIN = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "divide": np.divide,
       "maximum": np_max, "minimum": np_min}
UN = {"negate": np.negative, "abs": np.abs, "sqrt": np.sqrt, "chlo.square": np.square}


def apply_op(c, name, args, vals, dt, shape):
    t = ttype(shape, dt)
    if name in UN:
        if name.startswith("chlo."):
            r = c.op("{r} = %s %s : %s -> %s" % (name, args[0], t, t))
        else:
            r = c.op("{r} = stablehlo.%s %s : %s" % (name, args[0], t))
        return r, UN[name](vals[0]).astype(dt)
    r = c.op("{r} = stablehlo.%s %s, %s : %s" % (name, args[0], args[1], t))
    return r, np.asarray(BIN[name](vals[0], vals[1])).astype(dt)


def clamp(c, lo, x, hi, dt, shape):
    """stablehlo.clamp(lo, x, hi) = min(max(x, lo), hi), each a (value, array) pair"""
    t = ttype(shape, dt)
    r = c.op("{r} = stablehlo.clamp %s, %s, %s : %s" % (lo[0], x[0], hi[0], t))
    return r, np_min(np_max(x[1], lo[1]), hi[1]).astype(dt)


def bits(c, v, a, dt):
    """the result as integers, NaNs made one quiet NaN (which NaN an add or a multiply of two
    NaNs gives is the compiler's choice of operand order): checks the signs of zeros"""
    dt = np.dtype(dt)
    it = INT[dt][0]
    t, bt = ttype(a.shape, dt), ttype(a.shape, np.bool_)
    qn = c.op("{r} = stablehlo.constant dense<%s> : %s" % (
        "0x7FC00000" if dt == np.float32 else "0x7FF8000000000000", t))
    isn = c.op("{r} = stablehlo.compare NE, %s, %s, FLOAT : (%s, %s) -> %s" % (v, v, t, t, bt))
    s = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (isn, qn, v, bt, t))
    r = c.op("{r} = stablehlo.bitcast_convert %s : (%s) -> %s" % (s, t, ttype(a.shape, it)))
    return r, np.where(np.isnan(a), np.array(np.nan, dt), a).view(it)


class Operands:
    """operands of a chain's steps: full arrays, splat constants, a broadcast row, a slice"""

    def __init__(self, c, shape, dt, spec):
        self.c, self.shape, self.dt = c, shape, dt
        self.pool = []
        for _ in range(3):
            a = special(shape, dt) if spec else data(shape, dt)
            self.pool.append((c.const(a), a))
        for v in (0.5, -3.0, 0.0) if spec else (0.5, -3.0, 7.25):
            self.pool.append((c.splat(shape, dt, v), np.full(shape, v, dt)))
        row = special(shape[-1:], dt) if spec else data(shape[-1:], dt)
        rv = c.const(row)
        b = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [%d] : (%s) -> %s" % (
            rv, len(shape) - 1, ttype(row.shape, dt), ttype(shape, dt)))
        self.pool.append((b, np.broadcast_to(row, shape)))
        big = data(tuple(d + 3 for d in shape), dt)
        bv = c.const(big)
        sa = big[tuple(slice(1, 1 + d) for d in shape)]
        s = c.op("{r} = stablehlo.slice %s [%s] : (%s) -> %s" % (
            bv, ", ".join("1:%d:1" % (1 + d) for d in shape), ttype(big.shape, dt),
            ttype(shape, dt)))
        self.pool.append((s, sa))

    def pick(self):
        return self.pool[rng.integers(len(self.pool))]


def chain(name, shape, dt, length, spec=False, threads=None, mid_result=False, ops=None,
          reuse=False):
    """a left-deep chain of `length` ops on random operands, the chained value on a random side;
    reuse: intermediate values also become operands of later ops, inputs of a floor
    added in later, or results (a chain's tee steps: ew_chain.h)"""
    c = Case(name, threads)
    dt = np.dtype(dt)
    o = Operands(c, shape, dt, spec)
    acc, a = o.pick()
    names = ops or list(BIN) + list(UN)
    with np.errstate(all="ignore"):
        for k in range(length):
            op = names[rng.integers(len(names))]
            if op in UN:
                acc, a = apply_op(c, op, [acc], [a], dt, shape)
            elif op == "clamp":  # the chained value as the operand (a chain's two steps)
                acc, a = clamp(c, o.pick(), (acc, a), o.pick(), dt, shape)
            else:
                x, xa = o.pick()
                if rng.random() < 0.5:
                    acc, a = apply_op(c, op, [acc, x], [a, xa], dt, shape)
                else:
                    acc, a = apply_op(c, op, [x, acc], [xa, a], dt, shape)
            if reuse and k + 1 < length:
                u = rng.random()
                if u < 0.35:
                    o.pool.append((acc, a))
                elif u < 0.5:
                    c.expect(acc, a)
                elif u < 0.6:
                    t = ttype(shape, dt)
                    x, xa = (acc, a) if len(o.pool) < 9 else o.pool[-1]  # an earlier value
                    e = c.op("{r} = stablehlo.floor %s : %s" % (x, t))
                    if rng.random() < 0.5:
                        o.pool.append((e, np.floor(xa).astype(dt)))
                    else:  # read before the chain's later steps, by no step of it
                        c.expect(e, np.floor(xa).astype(dt))
            if mid_result and k == length // 2:
                c.expect(acc, a)
                r, ra = bits(c, acc, a, dt)
                c.expect(r, ra)
    c.expect(acc, a)
    if spec:
        r, ra = bits(c, acc, a, dt)
        c.expect(r, ra)
    cases.append(c)


for L in (2, 3, 5, 8, 13, 20):
    chain("chain of %d, f32 7x37" % L, (7, 37), np.float32, L)
    chain("chain of %d, f64 5x29" % L, (5, 29), np.float64, L)
chain("chain of 12, f32 3 elements (too few for a chain: array kernels)", (3,), np.float32, 12)
chain("chain of 12, f64 2x3 (too few for a chain: array kernels)", (2, 3), np.float64, 12)
chain("chain of 16, f32 24x100 (several blocks, strips)", (24, 100), np.float32, 16)
chain("chain of 16, f64 33x65 (several blocks, strips)", (33, 65), np.float64, 16)
chain("chain of 10, f32 2x700 (rows read in place)", (2, 700), np.float32, 10)
chain("chain of 14, f32 16x300 on 2 threads", (16, 300), np.float32, 14, threads=2)
for k in range(4):
    chain("max/min/sub/div chain %d with NaN, inf, -0, subnormals, f32 9x23" % k, (9, 23),
          np.float32, 14, spec=True, ops=["maximum", "minimum", "subtract", "divide", "negate",
                                          "abs", "multiply", "add", "sqrt", "clamp"])
    chain("max/min/sub/div chain %d with NaN, inf, -0, subnormals, f64 9x17" % k, (9, 17),
          np.float64, 14, spec=True, ops=["maximum", "minimum", "subtract", "divide", "negate",
                                          "abs", "multiply", "add", "sqrt", "clamp"])
chain("chain of 12 with clamps, f32 7x37", (7, 37), np.float32, 12,
      ops=["clamp", "add", "multiply", "subtract", "clamp"])
for k in range(6):
    dt = np.float32 if k % 2 == 0 else np.float64
    chain("chain of 16 whose values are reused (tees) %d, %s 9x37" % (k, np.dtype(dt).name),
          (9, 37), dt, 16, reuse=True, ops=["add", "subtract", "multiply", "maximum", "negate"])
chain("chain of 12 whose values are reused (tees), f32 24x100 (strips)", (24, 100), np.float32,
      12, reuse=True, ops=["add", "multiply", "subtract", "minimum", "abs"])


def tee_inputs(name, shape, dt):
    """a tee case's start: inputs a, b, e of dt and p = floor(a);
    returns (case, type, arrays, their values, p)"""
    c = Case(name)
    t = ttype(shape, dt)
    a, b, e = data(shape, dt), data(shape, dt), data(shape, dt)
    av, bv, ev = c.const(a), c.const(b), c.const(e)
    return c, t, (a, b, e), (av, bv, ev), c.op("{r} = stablehlo.floor %s : %s" % (av, t))


def tee_side(name, shape, dt):
    """a chain that tees d (read again after it) and takes a side branch x computed before d
    from a register that d's may reuse: x's steps, moved after the tee, must read the old value"""
    c, t, (a, b, e), (av, bv, ev), p = tee_inputs(name, shape, dt)
    x = c.op("{r} = stablehlo.multiply %s, %s : %s" % (p, ev, t))
    xa = (np.floor(a) * e).astype(dt)
    d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (av, bv, t))
    dn = (a - b).astype(dt)
    y1 = c.op("{r} = stablehlo.multiply %s, %s : %s" % (d, ev, t))
    y2 = c.op("{r} = stablehlo.add %s, %s : %s" % (y1, x, t))
    c.expect(y2, ((dn * e).astype(dt) + xa).astype(dt))
    f = c.op("{r} = stablehlo.floor %s : %s" % (d, t))
    c.expect(f, np.floor(dn))
    cases.append(c)


def tee_between(name, shape, dt):
    """a chain z = (b * e - a) * e that tees its d (read again after it) into the register
    that p, read by x before d, held; x's chain (x + b) must not run after z's tee"""
    c, t, (a, b, e), (av, bv, ev), p = tee_inputs(name, shape, dt)
    s0 = c.op("{r} = stablehlo.multiply %s, %s : %s" % (bv, ev, t))
    x = c.op("{r} = stablehlo.multiply %s, %s : %s" % (p, ev, t))
    d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (s0, av, t))
    y1 = c.op("{r} = stablehlo.multiply %s, %s : %s" % (d, ev, t))
    f = c.op("{r} = stablehlo.floor %s : %s" % (d, t))
    y3 = c.op("{r} = stablehlo.add %s, %s : %s" % (x, bv, t))
    dn = ((b * e).astype(dt) - a).astype(dt)
    c.expect(y1, (dn * e).astype(dt))
    c.expect(f, np.floor(dn))
    c.expect(y3, ((np.floor(a) * e).astype(dt) + b).astype(dt))
    cases.append(c)


def max_min_consts(name, shape, dt):
    """max/min steps against splat constants (NaN, zeros, infinities, ordinary: the plain
    scalar's one-compare form and the general one), either side, on values with NaN, -0.0 and
    infinities"""
    c = Case(name)
    dt = np.dtype(dt)
    t = ttype(shape, dt)
    a = special(shape, dt)
    acc, av = c.const(a), a
    np.seterr(all="ignore")
    for k, v in enumerate((2.5, np.nan, -0.0, 0.0, np.inf, -1.5, -np.inf, 0.75, np.nan, 1.0)):
        ka = np.full(shape, v, dt)
        kv = c.op("{r} = stablehlo.constant dense<0x%0*X> : %s" % (
            2 * dt.itemsize, int(ka.view(INT[dt][1]).flat[0]), t))
        op = "maximum" if k % 2 == 0 else "minimum"
        args, vals = ([acc, kv], [av, ka]) if k % 3 else ([kv, acc], [ka, av])
        acc, av = apply_op(c, op, args, vals, dt, shape)
        if k % 4 == 3:  # another operand mixed in, so later steps see NaN and zeros again
            b = special(shape, dt)
            acc, av = apply_op(c, "add", [acc, c.const(b)], [av, b], dt, shape)
    r, ra = bits(c, acc, av, dt)
    c.expect(r, ra)
    cases.append(c)


max_min_consts("max/min against NaN, zero, inf splats, f32 9x23", (9, 23), np.float32)
max_min_consts("max/min against NaN, zero, inf splats, f64 9x17", (9, 17), np.float64)
tee_between("tee in another chain between a chain's members, f32 5x40", (5, 40), np.float32)
tee_side("tee, then a side branch over the teed register's old value, f32 5x40", (5, 40),
         np.float32)
tee_side("tee, then a side branch over the teed register's old value, f64 7x21", (7, 21),
         np.float64)
chain("chain of 9 whose intermediate is also a result, f32 11x13", (11, 13), np.float32, 9,
      spec=True, mid_result=True)
chain("chain of 9 whose intermediate is also a result, f64 4x50", (4, 50), np.float64, 9,
      spec=True, mid_result=True)


def tree(name, shape, dt, depth, spec=False, threads=None):
    """a random expression tree: both operands of an op may be results of other ops (a chain
    with side branches, and trees split into several chains)"""
    c = Case(name, threads)
    dt = np.dtype(dt)
    o = Operands(c, shape, dt, spec)
    names = list(BIN) + list(UN)

    def gen(d):
        if d == 0 or rng.random() < 0.15:
            return o.pick()
        op = names[rng.integers(len(names))]
        if op in UN:
            v, a = gen(d - 1)
            return apply_op(c, op, [v], [a], dt, shape)
        if rng.random() < 0.1:  # a clamp, the subtree as lo, operand or hi
            args = [o.pick(), o.pick(), o.pick()]
            args[rng.integers(3)] = gen(d - 1)
            return clamp(c, args[0], args[1], args[2], dt, shape)
        l, la = gen(d - 1)
        r, ra = gen(d - 1) if rng.random() < 0.6 else o.pick()
        return apply_op(c, op, [l, r], [la, ra], dt, shape)

    with np.errstate(all="ignore"):
        v, a = gen(depth)
    c.expect(v, a)
    if spec:
        r, ra = bits(c, v, a, dt)
        c.expect(r, ra)
    cases.append(c)


for k in range(4):
    tree("expression tree %d, f32 7x37" % k, (7, 37), np.float32, 4)
    tree("expression tree %d, f64 5x29" % k, (5, 29), np.float64, 4)
tree("expression tree with NaN, inf, -0, f32 9x23", (9, 23), np.float32, 4, spec=True)
tree("expression tree with NaN, inf, -0, f64 9x17", (9, 17), np.float64, 4, spec=True)
tree("expression tree, f32 24x100 (several blocks)", (24, 100), np.float32, 5)


def adam(name, shape, dt):
    """an AdamW step: m, v and the parameters as three results of one group"""
    c = Case(name)
    p, g, m, v = (data(shape, dt) for _ in range(4))
    v = np.abs(v)
    pv, gv, mv, vv = (c.const(x) for x in (p, g, m, v))
    t = ttype(shape, dt)
    k = {}
    for nm, val in (("b1", 0.9), ("c1", 0.1), ("b2", 0.999), ("c2", 0.001), ("h1", 1 / 0.19),
                    ("h2", 1 / 0.0199), ("eps", 1e-8), ("lr", 1e-3), ("wd", 1e-4)):
        k[nm] = (c.splat(shape, dt, val), np.full(shape, val, dt))

    def op(name, x, y):
        return apply_op(c, name, [x[0], y[0]], [x[1], y[1]], dt, shape)
    P, G, M, V = (pv, p), (gv, g), (mv, m), (vv, v)
    m1 = op("add", op("multiply", k["b1"], M), op("multiply", k["c1"], G))
    gg = apply_op(c, "multiply", [G[0], G[0]], [g, g], dt, shape)
    v1 = op("add", op("multiply", k["b2"], V), op("multiply", k["c2"], gg))
    mh = op("multiply", m1, k["h1"])
    vh = op("multiply", v1, k["h2"])
    sq = apply_op(c, "sqrt", [vh[0]], [vh[1]], dt, shape)
    upd = op("divide", mh, op("add", sq, k["eps"]))
    upd = op("add", upd, op("multiply", k["wd"], P))
    p1 = op("subtract", P, op("multiply", k["lr"], upd))
    for r in (m1, v1, p1):
        c.expect(r[0], r[1])
    cases.append(c)


adam("AdamW step (three results, trees), f32 33x65", (33, 65), np.float32)
adam("AdamW step (three results, trees), f64 9x31", (9, 31), np.float64)


def const_sides(name, dt):
    """constants on both sides of subtract and divide, maximum and minimum against -0.0"""
    c = Case(name)
    shape = (7, 21)
    x = special(shape, dt)
    xv = c.const(x)
    t = ttype(shape, dt)
    with np.errstate(all="ignore"):
        steps = [("subtract", 2.0, False), ("subtract", 2.0, True), ("divide", 3.0, True),
                 ("divide", -0.5, False), ("maximum", -0.0, False), ("minimum", 0.0, True),
                 ("maximum", 0.0, True), ("minimum", -0.0, False)]
        acc, a = xv, x
        for op, v, rev in steps:
            k = c.splat(shape, dt, v)
            ka = np.full(shape, v, dt)
            if rev:
                acc = c.op("{r} = stablehlo.%s %s, %s : %s" % (op, k, acc, t))
                a = np.asarray(BIN[op](ka, a)).astype(dt)
            else:
                acc = c.op("{r} = stablehlo.%s %s, %s : %s" % (op, acc, k, t))
                a = np.asarray(BIN[op](a, ka)).astype(dt)
    c.expect(acc, a)
    r, ra = bits(c, acc, a, dt)
    c.expect(r, ra)
    cases.append(c)


const_sides("constants on either side of sub/div/max/min, f32", np.float32)
const_sides("constants on either side of sub/div/max/min, f64", np.float64)


def jacobi(name, shape, dt, iters, pad, sum_lines, np_sum):
    """a Jacobi-like sweep u <- 0.25 * (s + h2 * f) in a while body (the carried value updated in
    place), s the neighbours of pad(u, pad) combined by sum_lines (%s1, %s2, ... over %a, %b, %c,
    %d: pad_neighbours; each line's %s its type), np_sum the same in numpy"""
    c = Case(name)
    f = data(shape, dt)
    fv = c.const(f)
    u0 = data(shape, dt)
    u0v = c.const(u0)
    t = ttype(shape, dt)
    k = len(sum_lines)
    body = pad_neighbours(shape, dt, repr(pad)) + [line % t for line in sum_lines] + [
        "%%h2 = stablehlo.constant dense<0.01> : %s" % t,
        "%%hf = stablehlo.multiply %%h2, %s : %s" % (fv, t),
        "%%s%d = stablehlo.add %%s%d, %%hf : %s" % (k + 1, k, t),
        "%%q = stablehlo.constant dense<0.25> : %s" % t,
        "%%s%d = stablehlo.multiply %%q, %%s%d : %s" % (k + 2, k + 1, t)]
    counted_while(c, iters, [("u", u0v, t)], body, ["%%s%d" % (k + 2)])
    u = u0.copy()
    h2 = np.full(shape, 0.01, dt)
    q = np.full(shape, 0.25, dt)
    for _ in range(iters):
        s = np_sum(*np_neighbours(u, dt(pad)))
        s = (s + (h2 * f).astype(dt)).astype(dt)
        u = (q * s).astype(dt)
    c.expect("%w#1", u)
    cases.append(c)


def stencil_loop(name, shape, dt, iters):
    """Jacobi's sweep u <- 0.25 * (a + b + c + d + h2 * f) over pad(u) + 4 slices"""
    jacobi(name, shape, dt, iters, 0.0, ["%%s1 = stablehlo.add %%a, %%b : %s",
                                         "%%s2 = stablehlo.add %%s1, %%c : %s",
                                         "%%s3 = stablehlo.add %%s2, %%d : %s"],
           lambda a, b, cc, d: (((a + b).astype(dt) + cc).astype(dt) + d).astype(dt))


stencil_loop("jacobi sweep in a while loop, f32 64x64", (64, 64), np.float32, 4)
stencil_loop("jacobi sweep in a while loop, f32 13x7", (13, 7), np.float32, 3)
stencil_loop("jacobi sweep in a while loop, f64 30x21", (30, 21), np.float64, 3)
stencil_loop("jacobi sweep in a while loop, f32 6x300 (row mode)", (6, 300), np.float32, 2)


def stencil_box(name, shape, dt, iters, pad):
    """a stencil whose chain reads the column-shifted slices of pad(u, pad) in every boxed form
    (flat mode without the edge pass: ew_chain.h's boxes): the chain's start (c - a), the
    operand before the accumulator (d - s1), after it (max(s3, c)); rows of whole vectors"""
    def np_sum(a, b, cc, d):
        s = (cc - a).astype(dt)
        s = (d - s).astype(dt)
        return np_max((s * b).astype(dt), cc).astype(dt)
    jacobi(name, shape, dt, iters, pad, ["%%s1 = stablehlo.subtract %%c, %%a : %s",
                                         "%%s2 = stablehlo.subtract %%d, %%s1 : %s",
                                         "%%s3 = stablehlo.multiply %%s2, %%b : %s",
                                         "%%s4 = stablehlo.maximum %%s3, %%c : %s"], np_sum)


stencil_box("boxed stencil (padding -1.5, boxes first/either side), f32 40x32", (40, 32),
            np.float32, 3, -1.5)
stencil_box("boxed stencil (padding 0.75), f64 24x16", (24, 16), np.float64, 3, 0.75)
stencil_box("boxed stencil (padding -1.5), f32 70x64: rows past a block", (70, 64),
            np.float32, 2, -1.5)
stencil_box("boxed stencil (padding 0.5), f32 9x256: rows long enough for row mode", (9, 256),
            np.float32, 2, 0.5)
stencil_box("boxed stencil (padding -2), f64 5x192: rows of 3 strips", (5, 192), np.float64, 2,
            -2.0)
stencil_box("boxed stencil (padding 1.25), f32 11x100: vectors across rows", (11, 100),
            np.float32, 2, 1.25)
stencil_box("boxed stencil (padding -0.5), f64 9x21: vectors across rows", (9, 21), np.float64, 2,
            -0.5)


def stencil_3d(name, shape, dt, pad):
    """a 7-point 3-D stencil over pad(u, pad) + 6 slices: the column-shifted slices are boxed
    flat views, the others views of whole planes, so that the rows outside every view's box
    (where the boxed chains run on copied rows) are a plane's worth at each end"""
    c = Case(name)
    u = data(shape, dt)
    uv = c.const(u)
    n0, n1, n2 = shape
    t = ttype(shape, dt)
    pt = ttype((n0 + 2, n1 + 2, n2 + 2), dt)
    z = c.op("{r} = stablehlo.constant dense<%r> : %s" % (pad, ttype((), dt)))
    pv = c.op("{r} = stablehlo.pad %s, %s, low = [1, 1, 1], high = [1, 1, 1], interior = [0, 0, 0]"
              " : (%s, %s) -> %s" % (uv, z, t, ttype((), dt), pt))
    p = np.pad(u, 1, constant_values=dt(pad))
    sl = [(0, 1, 1), (2, 1, 1), (1, 0, 1), (1, 2, 1), (1, 1, 0), (1, 1, 2)]
    acc, a = None, None
    for k, (i, j, l) in enumerate(sl):
        v = c.op("{r} = stablehlo.slice %s [%d:%d, %d:%d, %d:%d] : (%s) -> %s"
                 % (pv, i, i + n0, j, j + n1, l, l + n2, pt, t))
        x = p[i:i + n0, j:j + n1, l:l + n2]
        if acc is None:
            acc, a = v, x
        elif k % 2:
            acc, a = c.op("{r} = stablehlo.add %s, %s : %s" % (acc, v, t)), (a + x).astype(dt)
        else:
            acc, a = c.op("{r} = stablehlo.subtract %s, %s : %s" % (v, acc, t)), (x - a).astype(dt)
    q = c.splat(shape, dt, 0.5)
    acc = c.op("{r} = stablehlo.multiply %s, %s : %s" % (acc, q, t))
    c.expect(acc, (a * np.full(shape, 0.5, dt)).astype(dt))
    cases.append(c)


stencil_3d("3-D boxed stencil (padding 0.25), f32 6x20x32: edge rows in blocks", (6, 20, 32),
           np.float32, 0.25)
stencil_3d("3-D boxed stencil (padding -1), f64 5x9x16", (5, 9, 16), np.float64, -1.0)

def update_loop(name, shape, dt, iters):
    """an optimizer-like update in a while body: u <- max(u - lr * (g / (sqrt(v) + eps)), lo),
    the carried value written in place over its input"""
    c = Case(name)
    g = data(shape, dt)
    v = np.abs(data(shape, dt))
    u0 = data(shape, dt)
    gv, vv, u0v = c.const(g), c.const(v), c.const(u0)
    t = ttype(shape, dt)
    counted_while(c, iters, [("u", u0v, t)], [
        "%%eps = stablehlo.constant dense<1.0e-3> : %s" % t,
        "%%lr = stablehlo.constant dense<0.125> : %s" % t,
        "%%lo = stablehlo.constant dense<-2.0> : %s" % t,
        "%%r = stablehlo.sqrt %s : %s" % (vv, t),
        "%%d = stablehlo.add %%r, %%eps : %s" % t,
        "%%q = stablehlo.divide %s, %%d : %s" % (gv, t),
        "%%m = stablehlo.multiply %%lr, %%q : %s" % t,
        "%%s = stablehlo.subtract %%u, %%m : %s" % t,
        "%%x = stablehlo.maximum %%s, %%lo : %s" % t], ["%x"])
    u = u0.copy()
    with np.errstate(all="ignore"):
        for _ in range(iters):
            d = (np.sqrt(v) + dt(1e-3)).astype(dt)
            m = (dt(0.125) * (g / d).astype(dt)).astype(dt)
            u = np_max((u - m).astype(dt), np.full(shape, -2.0, dt)).astype(dt)
    c.expect("%w#1", u)
    cases.append(c)


update_loop("optimizer-like update in place in a while loop, f32 17x31", (17, 31), np.float32, 5)
update_loop("optimizer-like update in place in a while loop, f64 9x9", (9, 9), np.float64, 5)

def select_chain(name, shape, dt, mask_dim, spec=False):
    """selects inside a chain (ew_chain.h: MASK, SELT/SELF): a cloth-like update
    v = where(pinned, 0, (v + dt * f) * damp); p = p + dt * v with the predicate a broadcast
    along dim mask_dim, v also a result (a tee); then selects with the chained value as the
    true operand against an array, and a select that starts a chain; signed zeros and NaNs
    checked on the bits when spec"""
    c = Case(name)
    t, bt = ttype(shape, dt), ttype(shape, np.bool_)
    gen = special if spec else data
    v0, f0, p0, a0 = gen(shape, dt), gen(shape, dt), gen(shape, dt), gen(shape, dt)
    vv, fv, pv, av = c.const(v0), c.const(f0), c.const(p0), c.const(a0)
    m = rng.random(shape[mask_dim]) < 0.4
    m[0] = True
    mv = c.const(m)
    b = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [%d] : (%s) -> %s" % (
        mv, mask_dim, ttype(m.shape, np.bool_), bt))
    mb = np.broadcast_to(m.reshape([-1 if d == mask_dim else 1 for d in range(len(shape))]), shape)
    dtv, damp = c.splat(shape, dt, 0.5), c.splat(shape, dt, 0.75)
    zero = c.splat(shape, dt, 0.0)
    with np.errstate(all="ignore"):
        x = c.op("{r} = stablehlo.multiply %s, %s : %s" % (dtv, fv, t))
        xa = (dt(0.5) * f0).astype(dt)
        x = c.op("{r} = stablehlo.add %s, %s : %s" % (vv, x, t))
        xa = (v0 + xa).astype(dt)
        x = c.op("{r} = stablehlo.multiply %s, %s : %s" % (x, damp, t))
        xa = (xa * dt(0.75)).astype(dt)
        v = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (b, zero, x, bt, t))
        va = np.where(mb, dt(0.0), xa).astype(dt)
        y = c.op("{r} = stablehlo.multiply %s, %s : %s" % (dtv, v, t))
        ya = (dt(0.5) * va).astype(dt)
        y = c.op("{r} = stablehlo.add %s, %s : %s" % (pv, y, t))
        ya = (p0 + ya).astype(dt)
        # the chained value as the true operand, an array as the false one
        z = c.op("{r} = stablehlo.subtract %s, %s : %s" % (pv, av, t))
        za = (p0 - a0).astype(dt)
        z = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (b, z, av, bt, t))
        za = np.where(mb, za, a0).astype(dt)
        z = c.op("{r} = stablehlo.abs %s : %s" % (z, t))
        z = c.op("{r} = stablehlo.sqrt %s : %s" % (z, t))
        za = np.sqrt(np.abs(za)).astype(dt)
        # a select that starts a chain (arrays both sides), then a scalar false operand
        w = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (b, fv, av, bt, t))
        wa = np.where(mb, f0, a0).astype(dt)
        w = c.op("{r} = stablehlo.negate %s : %s" % (w, t))
        wa = (-wa).astype(dt)
        w = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (b, w, damp, bt, t))
        wa = np.where(mb, wa, dt(0.75)).astype(dt)
        w = c.op("{r} = stablehlo.add %s, %s : %s" % (w, pv, t))
        wa = (wa + p0).astype(dt)
        # a predicate computed in the group, its register free after the select: the chain
        # must not store its result over the predicate bytes
        cm = c.op("{r} = stablehlo.compare GT, %s, %s, FLOAT : (%s, %s) -> %s" % (pv, av, t, t, bt))
        g = c.op("{r} = stablehlo.select %s, %s, %s : %s, %s" % (cm, pv, av, bt, t))
        g = c.op("{r} = stablehlo.multiply %s, %s : %s" % (g, damp, t))
        g = c.op("{r} = stablehlo.add %s, %s : %s" % (g, fv, t))
        ga = ((np.where(p0 > a0, p0, a0) * dt(0.75)).astype(dt) + f0).astype(dt)
    for r, a in ((v, va), (y, ya), (z, za), (w, wa), (g, ga)):
        if spec:
            r, a = bits(c, r, a, dt)
        c.expect(r, a)
    cases.append(c)


select_chain("select on a broadcast predicate in chains, f32 24x24x3", (24, 24, 3), np.float32, 0)
select_chain("select on a broadcast predicate in chains, f64 17x10x2", (17, 10, 2), np.float64, 1)
select_chain("select on a broadcast predicate in chains, f32 40x33 (tails)", (40, 33), np.float32,
             1)
select_chain("select on a broadcast predicate in chains, f32 5x7 (short)", (5, 7), np.float32, 0)
select_chain("select on a broadcast predicate with NaN, inf, -0, f32 9x23", (9, 23), np.float32, 0,
             spec=True)
select_chain("select on a broadcast predicate with NaN, inf, -0, f64 9x17", (9, 17), np.float64, 1,
             spec=True)

write(os.path.join(HERE, "cases.mlir"), cases,
      "Chains of f32/f64 arithmetic in fused elementwise groups (ew_chain.h).")
