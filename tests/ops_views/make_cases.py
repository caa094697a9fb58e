#!/usr/bin/env python3
"""Writes cases.mlir: pads and static slices read in place by fused elementwise loops (bounded
views: a pad whose users are elementwise ops or slices of it is not written out; slices of it
read the operand's box and the padding value outside it), checked against numpy with
check.expect_eq. Covers shifted stencil slices, strided slices, negative (cropping) padding,
non-zero padding values, slices wholly inside or outside the box, broadcasts fused beside them,
f32/f64/bf16/i32/i1/complex, groups of several blocks, a pad in a while body, and pads that
must be written out (a non-elementwise user of the pad or of a slice of it).

usage: python tests/ops_views/make_cases.py   (needs numpy and ml_dtypes)
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from casegen import BF16, Case, counted_while, np_neighbours, pad_neighbours, ttype, write  # noqa: E402

rng = np.random.default_rng(13)


def data(shape, dt):
    dt = np.dtype(dt)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        return rng.integers(-50, 50, shape).astype(dt)
    if dt.kind == "c":
        return (rng.integers(-8, 8, shape) + 1j * rng.integers(-8, 8, shape)).astype(dt)
    return (rng.integers(-64, 64, shape) / 8).astype(dt)  # exact in every float type here


def np_pad(x, lo, hi, v):
    shape = [lo[d] + x.shape[d] + hi[d] for d in range(x.ndim)]
    out = np.full(shape, v, x.dtype)
    src, dst = [], []
    for d in range(x.ndim):
        a = max(lo[d], 0)
        b = min(lo[d] + x.shape[d], shape[d])
        dst.append(slice(a, max(a, b)))
        src.append(slice(a - lo[d], a - lo[d] + max(0, b - a)))
    out[tuple(dst)] = x[tuple(src)]
    return out


def scalar(c, dt, v):
    """a scalar constant (complex ones as (re, im))"""
    if np.dtype(dt).kind == "c":
        return c.op("{r} = stablehlo.constant dense<(%r, %r)> : %s" % (
            float(np.real(v)), float(np.imag(v)), ttype((), dt)))
    return c.splat((), dt, v)


def pad(c, xv, x, lo, hi, pv, pval):
    rt = ttype(tuple(lo[d] + x.shape[d] + hi[d] for d in range(x.ndim)), x.dtype)
    r = c.op("{r} = stablehlo.pad %s, %s, low = %s, high = %s, interior = %s : (%s, %s) -> %s" % (
        xv, pv, list(lo), list(hi), [0] * x.ndim, ttype(x.shape, x.dtype), ttype((), x.dtype), rt))
    return r, np_pad(x, lo, hi, pval)


def sl(c, v, a, start, limit, strides=None):
    strides = strides or [1] * a.ndim
    r = a[tuple(slice(s, l, k) for s, l, k in zip(start, limit, strides))]
    t = c.op("{r} = stablehlo.slice %s [%s] : (%s) -> %s" % (
        v, ", ".join("%d:%d:%d" % z for z in zip(start, limit, strides)),
        ttype(a.shape, a.dtype), ttype(r.shape, r.dtype)))
    return t, r


def binop(c, name, u, w, a, b, f):
    r = f(a, b)
    return c.op("{r} = stablehlo.%s %s, %s : %s" % (name, u, w, ttype(r.shape, r.dtype))), r


cases = []


def stencil(name, shape, dt, pval=0, threads=None):
    """4-neighbour sum of a zero-padded grid plus a scaled centre, as jnp.pad + slices"""
    c = Case(name, threads)
    x = data(shape, dt)
    xv = c.const(x)
    pv = scalar(c, dt, pval)
    p, pa = pad(c, xv, x, [1, 1], [1, 1], pv, pval)
    n, m = shape
    s1, a1 = sl(c, p, pa, [0, 1], [n, m + 1])
    s2, a2 = sl(c, p, pa, [2, 1], [n + 2, m + 1])
    s3, a3 = sl(c, p, pa, [1, 0], [n + 1, m])
    s4, a4 = sl(c, p, pa, [1, 2], [n + 1, m + 2])
    t, ta = binop(c, "add", s1, s2, a1, a2, np.add)
    t, ta = binop(c, "add", t, s3, ta, a3, np.add)
    t, ta = binop(c, "add", t, s4, ta, a4, np.add)
    k = c.splat(shape, dt, 2)
    u, ua = binop(c, "multiply", k, xv, np.full(shape, 2, dt), x, np.multiply)
    t, ta = binop(c, "subtract", t, u, ta, ua, np.subtract)
    c.expect(t, ta)
    cases.append(c)


stencil("stencil f32 8x8", (8, 8), np.float32)
stencil("stencil f32 40x100 (several blocks)", (40, 100), np.float32)
stencil("stencil f64 5x3, padding value 1.5", (5, 3), np.float64, 1.5)
stencil("stencil i32 6x9, padding value -3", (6, 9), np.int32, -3)
stencil("stencil bf16 9x40", (9, 40), BF16)
# rows of at least 1 KiB: read in place a row at a time (row mode), edge rows gathered
stencil("stencil f32 6x300, rows read in place", (6, 300), np.float32)
stencil("stencil f64 4x140, padding value 1.5, rows read in place", (4, 140), np.float64, 1.5)
stencil("stencil bf16 3x260, rows read in place", (3, 260), BF16)
stencil("stencil bf16 40x300 on 2 threads (ranges start mid-row)", (40, 300), BF16,
        threads=2)


def cropped(name, dt, pval, lo, hi, start, limit, strides, shape=(5, 6, 7)):
    """a pad with negative (cropping) and positive edges, a strided slice of it, times a row
    broadcast and plus the operand's own slice"""
    c = Case(name)
    x = data(shape, dt)
    xv = c.const(x)
    pv = scalar(c, dt, pval)
    p, pa = pad(c, xv, x, lo, hi, pv, pval)
    s, sa = sl(c, p, pa, start, limit, strides)
    row = data((sa.shape[-1],), dt)
    rv = c.const(row)
    b = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [%d] : (%s) -> %s" % (
        rv, sa.ndim - 1, ttype(row.shape, dt), ttype(sa.shape, dt)))
    t, ta = binop(c, "multiply", s, b, sa, np.broadcast_to(row, sa.shape), np.multiply)
    c.expect(t, ta)
    cases.append(c)


cropped("cropping pad, strided slice, f32", np.float32, 0.25, [-1, 2, 3], [2, -2, 1],
        [0, 1, 1], [6, 6, 11], [2, 2, 3])
cropped("cropping pad, strided slice, i32", np.int32, 7, [2, -3, 0], [-1, 4, 2],
        [1, 0, 0], [6, 7, 9], [1, 3, 2])
cropped("pad, slice starting in the padding, complex64", np.complex64, 0, [3, 1, 1], [1, 1, 1],
        [0, 0, 0], [9, 8, 9], [3, 1, 4])
cropped("pad, slice wholly inside the operand, f64", np.float64, 9.0, [2, 2, 2], [2, 2, 2],
        [2, 3, 2], [7, 8, 9], [1, 1, 2])
cropped("pad, slice wholly in the padding, bf16", BF16, -2.0, [2, 1, 4], [1, 1, 1],
        [0, 0, 0], [2, 8, 4], [1, 1, 1])


def direct(name, dt, pval, lo, hi):
    """an elementwise op reading the pad itself (no slice)"""
    c = Case(name)
    x = data((4, 9), dt)
    xv = c.const(x)
    pv = scalar(c, dt, pval)
    p, pa = pad(c, xv, x, lo, hi, pv, pval)
    y = data(pa.shape, dt)
    yv = c.const(y)
    if np.dtype(dt) == np.bool_:
        t, ta = binop(c, "xor", p, yv, pa, y, np.logical_xor)
    else:
        t, ta = binop(c, "add", p, yv, pa, y, np.add)
    c.expect(t, ta)
    cases.append(c)


direct("pad read by an add, f32", np.float32, -1.0, [1, 3], [2, 0])
direct("pad read by an xor, i1, padding true", np.bool_, True, [0, 2], [3, -1])
direct("pad read by an add, complex128", np.complex128, 0, [-1, 1], [1, -2])
cropped("pad with size-1 dims, f32", np.float32, 0.5, [0, 1, 0, 2], [0, 1, 0, 0],
        [0, 0, 0, 0], [1, 7, 1, 7], [1, 1, 1, 1], shape=(1, 5, 1, 5))
cropped("pad with whole rows of padding (collapsed runs), f64", np.float64, -1.0, [2, 0, 0],
        [1, 0, 0], [0, 0, 0], [9, 6, 7], [1, 1, 1], shape=(6, 6, 7))
cropped("cropping pad, row broadcast, rows read in place, i32", np.int32, 5, [1, -1, 3],
        [-1, 2, 2], [0, 0, 0], [5, 7, 300], [1, 1, 1], shape=(5, 6, 295))


def written_out(name, dt):
    """pads that must be written out: one also read by a transpose, one whose slice is read by
    a transpose (the bounded view materialized), both next to fused reads"""
    c = Case(name)
    x = data((6, 5), dt)
    xv = c.const(x)
    pv = c.splat((), dt, 3)
    p, pa = pad(c, xv, x, [1, 2], [2, 1], pv, 3)
    tr = c.op("{r} = stablehlo.transpose %s, dims = [1, 0] : (%s) -> %s" % (
        p, ttype(pa.shape, dt), ttype(pa.T.shape, dt)))
    c.expect(tr, pa.T)
    q, qa = pad(c, xv, x, [2, 0], [0, 2], pv, 3)
    s, sa = sl(c, q, qa, [1, 1], [8, 7], [2, 1])
    tr2 = c.op("{r} = stablehlo.transpose %s, dims = [1, 0] : (%s) -> %s" % (
        s, ttype(sa.shape, dt), ttype(sa.T.shape, dt)))
    c.expect(tr2, sa.T)
    s2, sa2 = sl(c, q, qa, [0, 0], [7, 6])
    t, ta = binop(c, "add", s2, s2, sa2, sa2, np.add)
    c.expect(t, ta)
    cases.append(c)


written_out("pads written out beside fused reads, f32", np.float32)
written_out("pads written out beside fused reads, i32", np.int32)


def loop(name, shape, dt, iters):
    """a Jacobi-like sweep in a while body: u <- (sum of 4 shifted slices of pad(u)) - u + f"""
    c = Case(name)
    f = data(shape, dt)
    fv = c.const(f)
    u0 = np.zeros(shape, dt)
    u0v = c.const(u0)
    t = ttype(shape, dt)
    counted_while(c, iters, [("u", u0v, t)], pad_neighbours(shape, dt, "0") + [
        "%%s1 = stablehlo.add %%a, %%b : %s" % t,
        "%%s2 = stablehlo.add %%s1, %%c : %s" % t,
        "%%s3 = stablehlo.add %%s2, %%d : %s" % t,
        "%%s4 = stablehlo.subtract %%s3, %%u : %s" % t,
        "%%s5 = stablehlo.add %%s4, %s : %s" % (fv, t)], ["%s5"])
    u = u0.copy()
    for _ in range(iters):
        a, b, cc, d = np_neighbours(u)
        u = (a + b + cc + d - u + f).astype(dt)
    c.expect("%w#1", u)
    cases.append(c)


loop("jacobi-like while loop, i32", (7, 11), np.int32, 5)
loop("jacobi-like while loop, f64", (20, 33), np.float64, 3)
# the carry is double-buffered (k_control.c): even and odd counts end in either buffer
loop("jacobi-like while loop, f32, 4 iterations", (9, 16), np.float32, 4)
loop("jacobi-like while loop, f32, 1 iteration", (9, 16), np.float32, 1)
loop("jacobi-like while loop, f32, no iteration", (9, 16), np.float32, 0)

def flat(name, shape, dt, pval=0, threads=None):
    """Flat mode (run_flat in lower_ew.c): short rows, slices of a pad shifted by several columns
    either way (read in place at an offset, the columns outside their box computed again from
    packed copies), beside a full input the output may be written over (a transpose's result),
    a strided slice (gathered) and a broadcast row; the last rows leave the buffer (blocks)."""
    c = Case(name, threads)
    n, m = shape
    x = data(shape, dt)
    xv = c.const(x)
    pv = scalar(c, dt, pval)
    p, pa = pad(c, xv, x, [1, 3], [1, 2], pv, pval)
    s1, a1 = sl(c, p, pa, [0, 3], [n, m + 3])          # rows shifted: rank 1
    s2, a2 = sl(c, p, pa, [2, 0], [n + 2, m])          # 3 columns of padding on the left
    s3, a3 = sl(c, p, pa, [1, 5], [n + 1, m + 5])      # 2 on the right
    s4, a4 = sl(c, p, pa, [1, 4], [n + 1, m + 4])      # 1 on the right
    z = data((m, n), dt)
    zv = c.const(z)
    yv = c.op("{r} = stablehlo.transpose %s, dims = [1, 0] : (%s) -> %s" % (
        zv, ttype((m, n), dt), ttype(shape, dt)))
    g = data((n, 2 * m + 1), dt)
    gv = c.const(g)
    s5, a5 = sl(c, gv, g, [0, 1], [n, 2 * m + 1], [1, 2])  # strided: gathered
    row = data((m,), dt)
    rv = c.const(row)
    bv = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [1] : (%s) -> %s" % (
        rv, ttype((m,), dt), ttype(shape, dt)))
    t, ta = binop(c, "add", s1, s2, a1, a2, np.add)
    t, ta = binop(c, "subtract", t, s3, ta, a3, np.subtract)
    t, ta = binop(c, "multiply", t, s4, ta, a4, np.multiply)
    t, ta = binop(c, "add", t, yv, ta, z.T, np.add)
    t, ta = binop(c, "subtract", t, s5, ta, a5, np.subtract)
    t, ta = binop(c, "add", t, bv, ta, np.broadcast_to(row, shape), np.add)
    c.expect(t, ta)
    cases.append(c)


flat("flat stencil f32 30x64, shifts of 1-3 columns", (30, 64), np.float32)
flat("flat stencil f64 9x40, padding value 1.5", (9, 40), np.float64, 1.5)
flat("flat stencil i32 17x24, padding value -3", (17, 24), np.int32, -3)
flat("flat stencil bf16 12x48", (12, 48), BF16)
flat("flat stencil f32 300x60 on 2 threads", (300, 60), np.float32, threads=2)


def carry_pair(name, iters):
    """a while whose body returns a new value and its previous one (v <- u, u <- 2u + v): the
    double-buffered carry of u must leave v reading u's buffer of the iteration before"""
    c = Case(name)
    shape, dt = (5, 7), np.float64
    u0, v0 = data(shape, dt), data(shape, dt)
    uv, vv = c.const(u0), c.const(v0)
    t = ttype(shape, dt)
    counted_while(c, iters, [("u", uv, t), ("v", vv, t)], [
        "%%two = stablehlo.constant dense<2.0> : %s" % t,
        "%%d = stablehlo.multiply %%u, %%two : %s" % t,
        "%%n = stablehlo.add %%d, %%v : %s" % t], ["%n", "%u"])
    u, v = u0.copy(), v0.copy()
    for _ in range(iters):
        u, v = 2 * u + v, u
    c.expect("%w#1", u)
    c.expect("%w#2", v)
    cases.append(c)


carry_pair("while returning a new value and its previous one, 3 iterations", 3)
carry_pair("while returning a new value and its previous one, 4 iterations", 4)


def reduced(name, rows, cols, threads=None):
    """A reduce whose elementwise producer reads a pad and a row-shifted slice of it (bounded
    views, rows of at least 1 KiB: row mode) on an input of 1 MiB or more, so that the reduce
    evaluates the producer run by run inside its own loop (input fusion, k_reduce.c): the views'
    offsets and the runs' output positions must agree with the group's own step. x is built from
    iotas and a transpose (materialized, no large constant); every value is a small integer, so
    the sums are exact."""
    c = Case(name, threads)
    t = ttype((cols, rows), np.float32)
    i0 = c.op("{r} = stablehlo.iota dim = 0 : %s" % t)
    i1 = c.op("{r} = stablehlo.iota dim = 1 : %s" % t)
    k3, k7 = c.splat((cols, rows), np.float32, 3.0), c.splat((cols, rows), np.float32, 7.0)
    a = c.op("{r} = stablehlo.multiply %s, %s : %s" % (i0, k7, t))
    b = c.op("{r} = stablehlo.multiply %s, %s : %s" % (i1, k3, t))
    s_ = c.op("{r} = stablehlo.add %s, %s : %s" % (a, b, t))
    m17, m8 = c.splat((cols, rows), np.float32, 17.0), c.splat((cols, rows), np.float32, 8.0)
    r_ = c.op("{r} = stablehlo.remainder %s, %s : %s" % (s_, m17, t))
    w = c.op("{r} = stablehlo.subtract %s, %s : %s" % (r_, m8, t))
    xv = c.op("{r} = stablehlo.transpose %s, dims = [1, 0] : (%s) -> %s" % (
        w, t, ttype((rows, cols), np.float32)))
    jj, ii = np.meshgrid(np.arange(cols), np.arange(rows))
    x = (np.fmod(ii * 3.0 + jj * 7.0, 17.0) - 8.0).astype(np.float32)
    pv = scalar(c, np.float32, 0.0)
    p, pa = pad(c, xv, x, [2, 0], [1, 0], pv, 0.0)
    e, ea = binop(c, "multiply", p, p, pa, pa, np.multiply)
    e, ea = binop(c, "add", e, p, ea, pa, np.add)
    zero = scalar(c, np.float32, 0.0)
    n = rows + 3
    r1 = c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.add across dimensions = [1] "
              ": (%s, %s) -> %s" % (e, zero, ttype((n, cols), np.float32),
                                    ttype((), np.float32), ttype((n,), np.float32)))
    c.expect(r1, ea.sum(axis=1, dtype=np.float64).astype(np.float32))
    q, qa = sl(c, p, pa, [1, 0], [n, cols])
    k2 = c.splat((n - 1, cols), np.float32, 2.0)
    f, fa = binop(c, "multiply", q, k2, qa, np.full(qa.shape, 2, np.float32), np.multiply)
    r2 = c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.add across dimensions = [0] "
              ": (%s, %s) -> %s" % (f, zero, ttype((n - 1, cols), np.float32),
                                    ttype((), np.float32), ttype((cols,), np.float32)))
    c.expect(r2, fa.sum(axis=0, dtype=np.float64).astype(np.float32))
    cases.append(c)


reduced("reduce of a padded view's chain, f32 256x1024 (input fusion, row mode)", 256, 1024)
reduced("reduce of a padded view's chain, f32 300x1024 on 2 threads", 300, 1024, threads=2)

def shifted_rows(name, shape, dt, pval=0, threads=None):
    """the scatter-adds of a mass-spring grid as pads (x.at[1:].add(a).at[:-1].add(-b)): a grid
    [n, m, c] plus pads of [n-1, m, c] arrays shifted by one row either way, and one shifted by
    one column (not contiguous in its buffer: gathered); the row-shifted ones are rank-1 views
    read in place between the block's cuts at their boxes' edges (lower_ew.c: block_cuts)"""
    c = Case(name, threads)
    n, m, ch = shape
    x = data(shape, dt)
    a = data((n - 1, m, ch), dt)
    b = data((n - 1, m, ch), dt)
    e = data((n, m - 1, ch), dt)
    xv, av, bv, ev = c.const(x), c.const(a), c.const(b), c.const(e)
    pv = scalar(c, dt, pval)
    pa_, paa = pad(c, av, a, [1, 0, 0], [0, 0, 0], pv, pval)
    pb_, pba = pad(c, bv, b, [0, 0, 0], [1, 0, 0], pv, pval)
    pe_, pea = pad(c, ev, e, [0, 1, 0], [0, 0, 0], pv, pval)
    t, ta = binop(c, "add", xv, pa_, x, paa, np.add)
    t, ta = binop(c, "subtract", t, pb_, ta, pba, np.subtract)
    t, ta = binop(c, "add", t, pe_, ta, pea, np.add)
    k = c.splat(shape, dt, 0.5)
    t, ta = binop(c, "multiply", t, k, ta, np.full(shape, 0.5, dt), np.multiply)
    c.expect(t, ta)
    cases.append(c)


shifted_rows("row-shifted pads of a grid, f32 24x24x3", (24, 24, 3), np.float32)
shifted_rows("row-shifted pads of a grid, f64 17x10x2, padding value -0.5", (17, 10, 2),
             np.float64, -0.5)
shifted_rows("row-shifted pads of a grid, f32 33x40x4 (several blocks)", (33, 40, 4),
             np.float32, 1.25)
shifted_rows("row-shifted pads of a grid, f32 5x7x3 (short: one piece)", (5, 7, 3), np.float32)
shifted_rows("row-shifted pads of a grid, f32 200x40x3 on 2 threads", (200, 40, 3), np.float32,
             threads=2)

def rep3(name, shape, dt):
    """a reduce-like [.., n, 1] result broadcast along a last dim of 3 beside a full array (a
    spring's length scaling its 3-vector: lower_ew.c's rep3_u32 for 4-byte elements, 8 rows
    per 3 shuffles and a tail)"""
    c = Case(name)
    s = data(shape, dt)
    x = data(shape + (3,), dt)
    sv, xv = c.const(s), c.const(x)
    b = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = %s : (%s) -> %s" % (
        sv, list(range(len(shape))), ttype(shape, dt), ttype(shape + (3,), dt)))
    t, ta = binop(c, "multiply", b, xv, np.broadcast_to(s[..., None], x.shape), x, np.multiply)
    c.expect(t, ta)
    cases.append(c)


rep3("[24, 23] broadcast to [24, 23, 3], f32", (24, 23), np.float32)
rep3("[37, 5] broadcast to [37, 5, 3], i32 (tails)", (37, 5), np.int32)
rep3("[301] broadcast to [301, 3], f32 (several blocks)", (301,), np.float32)

write(os.path.join(HERE, "cases.mlir"), cases,
      "Pads and slices read in place by fused elementwise loops (bounded views).")
