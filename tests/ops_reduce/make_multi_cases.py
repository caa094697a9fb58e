#!/usr/bin/env python3
"""Writes tests/ops_reduce/multi_cases.mlir: sibling reductions over the same axes of one input
and of elementwise functions of it, which the CPU backend runs as one step that reads the input
once (k_reduce.c, "sibling reductions"): BatchNorm's and LayerNorm's statistics as JAX writes
them (sq = x * x first, then sum(x), a use of it, then sum(sq): the square computed from x as it
is read), the same with sq written after sum(x) (two steps), a max beside the sums (softmax), and
variadic reduces whose body combines each input with its own accumulator ((x, x * x) with add/add,
max/add, add/max/min). Every class of reduced axes (leading, middle, innermost, minor pairs, all,
NHWC's N,H,W; GroupNorm's split channels), f32, f64 and bf16 (accumulated in f32), odd sizes,
inputs small (stored first) and large (from 256 KiB: computed as read; several chunks, leaves and
units; one and two threads, where the pool splits a unit's tree). Small integers make every
result exact; random floats (from an iota: no large constants) must give, bit for bit, what the
single reductions of copies of x give (the same tree per result).

  /work/main/.venv/bin/python tests/ops_reduce/make_multi_cases.py
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import make_cases as mc  # noqa: E402  (puts tests/common on the path)
from make_sibling_cases import iota_data, reduce_op, ref_fns  # noqa: E402
from casegen import BF16, Case, elem, ttype, write_beside  # noqa: E402

rng = np.random.default_rng(20261129)
INIT = {"add": 0.0, "maximum": -np.inf, "minimum": np.inf}


def inputs(c, dt, shape, smooth=False):
    if smooth or np.prod(shape) > 2000:
        return iota_data(c, shape, dt, smooth)
    x = mc.data(dt, False, shape)
    return c.const(x), x


def variadic_op(c, xs, inits, ops, axes, shape, dt, kshape):
    """one reduce of the inputs xs, each combined with its own accumulator by ops[k]"""
    n = len(xs)
    st = ttype((), dt)
    args = ", ".join("%%a%d: %s" % (k, st) for k in range(n))
    args += ", " + ", ".join("%%b%d: %s" % (k, st) for k in range(n))
    body = "\n".join("    %%r%d = stablehlo.%s %%a%d, %%b%d : %s" % (k, ops[k], k, k, st)
                     for k in range(n))
    ret = "    stablehlo.return %s : %s" % (", ".join("%%r%d" % k for k in range(n)),
                                            ", ".join([st] * n))
    r = c.op("{r}:%d = \"stablehlo.reduce\"(%s, %s) ({\n  ^bb0(%s):\n%s\n%s\n  }) "
             "{dimensions = array<i64: %s>} : (%s, %s) -> (%s)"
             % (n, ", ".join(xs), ", ".join(inits), args, body, ret, ", ".join(map(str, axes)),
                ", ".join([ttype(shape, dt)] * n), ", ".join([st] * n),
                ", ".join([ttype(kshape, dt)] * n)))
    return ["%s#%d" % (r, k) for k in range(n)]


def stats_case(dt, axes, shape, form, threads=None, with_max=False):
    """sum(x) and sum(x * x) over axes (with_max: and max(x)); form: "jax" (sq before sum(x),
    a use of sum(x) between), "after" (sq written after sum(x)), "variadic" (one reduce of
    (x, sq)), "variadic3" (x, sq, x with add, add, max; then max/min of x)"""
    kshape = tuple(shape[d] for d in range(len(shape)) if d not in axes)
    c = Case("statistics (%s) of %s%s over %s%s" % (form, elem(dt), list(shape), list(axes),
                                                    ", max too" if with_max else ""),
             threads=threads)
    t, kt = ttype(shape, dt), ttype(kshape, dt)
    xv, x = inputs(c, dt, shape)
    xf = x.astype(np.float64)
    sq = (xf * xf).astype(dt)
    add = ref_fns(dt)["add"][1]
    want_s = mc.reduce_ref(x, axes, add, np.array(0, dtype=dt)[()])
    want_q = mc.reduce_ref(sq, axes, add, np.array(0, dtype=dt)[()])
    half = c.splat(kshape, dt, 0.5)
    checks = []
    if form in ("jax", "after"):
        if form == "jax":
            qv = c.op("{r} = stablehlo.multiply %s, %s : %s" % (xv, xv, t))
        s = reduce_op(c, xv, c.const(np.array(0, dtype=dt)), "add", axes, shape, dt, kshape)
        h = c.op("{r} = stablehlo.multiply %s, %s : %s" % (s, half, kt))
        if form == "after":
            qv = c.op("{r} = stablehlo.multiply %s, %s : %s" % (xv, xv, t))
        q = reduce_op(c, qv, c.const(np.array(0, dtype=dt)), "add", axes, shape, dt, kshape)
        checks += [(s, want_s), (q, want_q), (h, (want_s.astype(np.float64) * 0.5).astype(dt))]
        if with_max:
            m = reduce_op(c, xv, c.const(np.array(-np.inf, dtype=dt)), "maximum", axes, shape,
                          dt, kshape)
            checks.append((m, mc.reduce_ref(x, axes, mc.fmax, np.array(-np.inf, dtype=dt)[()])))
    else:
        qv = c.op("{r} = stablehlo.multiply %s, %s : %s" % (xv, xv, t))
        ops = ["add", "add"] + (["maximum", "minimum"] if form == "variadic3" else [])
        inits = [c.const(np.array(INIT[o], dtype=dt)) for o in ops]
        rs = variadic_op(c, [xv, qv] + [xv] * (len(ops) - 2), inits, ops, axes, shape, dt, kshape)
        checks += [(rs[0], want_s), (rs[1], want_q)]
        if form == "variadic3":
            checks.append((rs[2], mc.reduce_ref(x, axes, mc.fmax, np.array(-np.inf, dtype=dt)[()])))
            checks.append((rs[3], mc.reduce_ref(x, axes, mc.fmin, np.array(np.inf, dtype=dt)[()])))
    for v, w in checks:
        c.expect(v, w)
    return c


def same_bits_case(dt, axes, shape, form, threads=None):
    """random floats: sum(x), sum(x * x) and max(x) in one step (form "jax" or "variadic")
    against single reductions of copies of x (x + 0, x - 0, x * 1: distinct, not merged),
    each written after the reduce before it (no pending sibling)"""
    kshape = tuple(shape[d] for d in range(len(shape)) if d not in axes)
    c = Case("statistics (%s) of random %s%s over %s equal single reductions bit for bit"
             % (form, elem(dt), list(shape), list(axes)), threads=threads)
    t = ttype(shape, dt)
    xv, _ = iota_data(c, shape, dt, True)
    zero = lambda: c.const(np.array(0, dtype=dt))  # noqa: E731
    ninf = lambda: c.const(np.array(-np.inf, dtype=dt))  # noqa: E731
    qv = c.op("{r} = stablehlo.multiply %s, %s : %s" % (xv, xv, t))
    if form == "jax":
        s = reduce_op(c, xv, zero(), "add", axes, shape, dt, kshape)
        q = reduce_op(c, qv, zero(), "add", axes, shape, dt, kshape)
        m = reduce_op(c, xv, ninf(), "maximum", axes, shape, dt, kshape)
    else:
        s, q, m = variadic_op(c, [xv, qv, xv], [zero(), zero(), ninf()],
                              ["add", "add", "maximum"], axes, shape, dt, kshape)
    # singles: each reduce's input computed after the reduce before it (no pending sibling)
    z = c.splat(shape, dt, 0.0)
    y = c.op("{r} = stablehlo.add %s, %s : %s" % (xv, z, t))
    s1 = reduce_op(c, y, zero(), "add", axes, shape, dt, kshape)
    y2 = c.op("{r} = stablehlo.subtract %s, %s : %s" % (xv, z, t))
    m1 = reduce_op(c, y2, ninf(), "maximum", axes, shape, dt, kshape)
    one = c.splat(shape, dt, 1.0)
    y3 = c.op("{r} = stablehlo.multiply %s, %s : %s" % (xv, one, t))  # (not y: CSE merges)
    q1v = c.op("{r} = stablehlo.multiply %s, %s : %s" % (y3, y3, t))
    q1 = reduce_op(c, q1v, zero(), "add", axes, shape, dt, kshape)
    for a, b in ((s, s1), (q, q1), (m, m1)):
        c.expect_same(a, b, kshape, dt)
    return c


def main():
    cases = []
    # every axis class, small (stored) inputs, odd sizes; each form
    for dt in (np.float32, np.float64, BF16):
        for axes in mc.AXES:
            for form in ("jax", "after", "variadic", "variadic3"):
                cases.append(stats_case(dt, axes, mc.SHAPE, form, with_max=form == "jax"))
        cases.append(stats_case(dt, (0, 1, 2), (3, 5, 7, 19), "jax"))  # NHWC over N, H, W
        cases.append(stats_case(dt, (1, 2, 4), (2, 5, 3, 4, 3), "jax"))  # GroupNorm's split C
    # large inputs (computed as read from 256 KiB): NHWC over N,H,W (a narrow and a wide
    # kept run), GroupNorm's [N, H, W, G, C/G], LayerNorm rows (short and longer than a unit's
    # cache block), a middle axis, all axes; one and two threads
    big = [((8, 16, 16, 64), (0, 1, 2)), ((2, 9, 9, 520), (0, 1, 2)),
           ((4, 32, 32, 8, 4), (1, 2, 4)), ((1100, 257), (1,)), ((9, 9000), (1,)),
           ((40, 9000), (1,)), ((40, 33, 70), (1,)), ((500, 600), (0, 1)), ((6, 12000), (0,))]
    for shape, axes in big:
        for threads in (1, 2):
            for form in ("jax", "variadic"):
                cases.append(stats_case(np.float32, axes, shape, form, threads=threads,
                                        with_max=form == "jax"))
    for dt in (np.float64, BF16):
        for shape, axes in big[:4]:
            cases.append(stats_case(dt, axes, shape, "jax", threads=2))
    for dt in (np.float32, np.float64, BF16):
        for shape, axes in (((8, 16, 16, 64), (0, 1, 2)), ((4, 32, 32, 8, 4), (1, 2, 4)),
                            ((1100, 257), (1,)), ((40, 9000), (1,)), ((40, 33, 70), (1,)),
                            ((7, 13, 5, 33), (0, 1, 2)), ((500, 600), (0, 1))):
            for threads in (1, 2):
                for form in ("jax", "variadic"):
                    cases.append(same_bits_case(dt, axes, shape, form, threads=threads))
    write_beside(__file__, "multi_cases.mlir", cases, "sibling reductions of one input and of "
                 "elementwise functions of it (statistics), every axis class and dtype.")


if __name__ == "__main__":
    main()
