#!/usr/bin/env python3
"""Writes tests/ops_reduce/sibling_cases.mlir: several reductions of one input over the same
axes (sum, max, min, ... of one array, as statistics, batch norm and softmax write them), which
the CPU backend runs as one step reading the input once. Every axis class (leading, middle,
innermost, two adjacent minor axes, all axes), f32, f64, bf16 (accumulated in f32), s32 and u8,
each init a constant written right before its reduce (as JAX writes them), NaN and signed zeros
for maximum/minimum, a reduction whose result is also used by later ops, repeated reductions
with different inits, inputs large enough for several blocks of outputs and for the thread
pool, and random floats whose grouped sum, max and min must equal, bit for bit, those of
copies of the input (x + 0, x - 0, x * 1: single reductions; fused from 1 MiB on).

Expected values: make_cases.py's reference folds (small integers: exact in every order). Run
with a Python that has numpy and ml_dtypes:

  /work/main/.venv/bin/python tests/ops_reduce/make_sibling_cases.py
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
AXES = mc.AXES


def ref_fns(dt):
    """(init, fold) per combiner, folding Python numbers"""
    if np.dtype(dt).kind in "iu":
        info = np.iinfo(dt)
        wrap = 1 << info.bits
        if np.dtype(dt).kind == "u":  # (folded as floats by reduce_ref: exact below 2^53)
            return {"add": (0, lambda a, b: (a + b) % wrap), "maximum": (info.min, max),
                    "minimum": (info.max, min), "multiply": (1, lambda a, b: (a * b) % wrap)}
        return {"add": (0, lambda a, b: a + b), "maximum": (info.min, max),
                "minimum": (info.max, min), "multiply": (1, lambda a, b: a * b)}
    return {"add": (0.0, lambda a, b: a + b), "maximum": (-np.inf, mc.fmax),
            "minimum": (np.inf, mc.fmin), "multiply": (1.0, lambda a, b: a * b)}


def reduce_op(c, xv, iv, op, axes, shape, dt, rshape):
    return c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.%s across dimensions = "
                "[%s] : (%s, %s) -> %s" % (xv, iv, op, ", ".join(map(str, axes)),
                                          ttype(shape, dt), ttype((), dt), ttype(rshape, dt)))


def iota_data(c, shape, dt, smooth):
    """x computed from an iota (no large constants): smooth: sin(0.37 i) (random-looking
    floats), else the integers (7 i mod 17) - 8; returns (value, numpy array or None)"""
    n = int(np.prod(shape))
    it, ft, t = ttype((n,), np.int32), ttype((n,), np.float32), ttype((n,), dt)
    if smooth:
        i = c.op("{r} = stablehlo.iota dim = 0 : %s" % ft)
        k = c.splat((n,), np.float32, 0.37)
        m = c.op("{r} = stablehlo.multiply %s, %s : %s" % (i, k, ft))
        f = c.op("{r} = stablehlo.sine %s : %s" % (m, ft))
        want = None
    else:
        i = c.op("{r} = stablehlo.iota dim = 0 : %s" % it)
        seven, mod = c.splat((n,), np.int32, 7), c.splat((n,), np.int32, 17)
        eight = c.splat((n,), np.int32, 8)
        m = c.op("{r} = stablehlo.multiply %s, %s : %s" % (i, seven, it))
        r = c.op("{r} = stablehlo.remainder %s, %s : %s" % (m, mod, it))
        d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (r, eight, it))
        f = c.op("{r} = stablehlo.convert %s : (%s) -> %s" % (d, it, ft))
        want = ((np.arange(n, dtype=np.int64) * 7) % 17 - 8).reshape(shape).astype(dt)
    if np.dtype(dt) != np.float32:
        f = c.op("{r} = stablehlo.convert %s : (%s) -> %s" % (f, ft, t))
    x = c.op("{r} = stablehlo.reshape %s : (%s) -> %s" % (f, t, ttype(shape, dt)))
    return x, want


def sibling_case(dt, axes, shape, ops, special=False, reuse=False, threads=None, data=None):
    """reduce(x) for each (op, init) in ops, every init a constant right before its reduce;
    reuse: the first result also feeds a later subtract (first - second), checked too"""
    c = Case("sibling reductions %s of %s%s over %s%s%s"
             % ("/".join(o for o, _ in ops), elem(dt), list(shape), list(axes),
                " (NaN, signed zeros)" if special else "", " (a result used again)" if reuse else ""),
             threads=threads)
    kshape = tuple(shape[d] for d in range(len(shape)) if d not in axes)
    fns = ref_fns(dt)
    if data is None and np.prod(shape) > 2000:
        xv, x = iota_data(c, shape, dt, False)
    else:
        x = data if data is not None else mc.data(dt, special, shape)
        xv = c.const(x)
    res, wants = [], []
    for op, init in ops:
        init = fns[op][0] if init is None else init
        iv = c.const(np.array(init, dtype=dt))
        res.append(reduce_op(c, xv, iv, op, axes, shape, dt, kshape))
        wants.append(mc.reduce_ref(x, axes, fns[op][1], np.array(init, dtype=dt)[()]))
    if reuse:
        d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (res[0], res[1], ttype(kshape, dt)))
        dwant = (wants[0].astype(np.float64) - wants[1].astype(np.float64)).astype(dt)
        c.expect(d, dwant)
    for r, w in zip(res, wants):
        c.expect(r, w)
    return c


def same_bits_case(dt, axes, shape, threads=None):
    """random floats: sum, max and min of x (one step) against the same reductions of x + 0 (a
    second input, each its own step): the same tree, so the same bits"""
    c = Case("sibling reductions of random %s%s over %s equal single reductions bit for bit"
             % (elem(dt), list(shape), list(axes)), threads=threads)
    kshape = tuple(shape[d] for d in range(len(shape)) if d not in axes)
    t = ttype(shape, dt)
    xv, _ = iota_data(c, shape, dt, True)
    z, one = c.splat(shape, dt, 0.0), c.splat(shape, dt, 1.0)
    fns = ref_fns(dt)
    # copies of x by three different identities (not merged): each the input of one reduce only
    # (fused into it from 1 MiB on: h_pair's tree on computed runs)
    for op, how, k in (("add", "add", z), ("maximum", "subtract", z), ("minimum", "multiply", one)):
        iv = c.const(np.array(fns[op][0], dtype=dt))
        a = reduce_op(c, xv, iv, op, axes, shape, dt, kshape)
        yv = c.op("{r} = stablehlo.%s %s, %s : %s" % (how, xv, k, t))
        jv = c.const(np.array(fns[op][0], dtype=dt))
        b = reduce_op(c, yv, jv, op, axes, shape, dt, kshape)
        c.expect_same(a, b, kshape, dt)
    return c


def computed_init_case():
    """inits that are not constants: one computed before the first reduce (a sibling), one
    computed between the reduces (its reduce stays a step of its own)"""
    c = Case("sibling reductions with computed inits")
    x = mc.data(np.float32, False, mc.SHAPE)
    xv = c.const(x)
    st = ttype((), np.float32)
    a = c.const(np.float32(1.5))
    i0 = c.op("{r} = stablehlo.add %s, %s : %s" % (a, a, st))  # 3
    r0 = reduce_op(c, xv, i0, "add", (0, 2), mc.SHAPE, np.float32, (3,))
    i1 = c.op("{r} = stablehlo.negate %s : %s" % (a, st))  # -1.5
    r1 = reduce_op(c, xv, i1, "maximum", (0, 2), mc.SHAPE, np.float32, (3,))
    b = c.const(np.float32(100.0))
    r2 = reduce_op(c, xv, b, "minimum", (0, 2), mc.SHAPE, np.float32, (3,))
    xf = x.astype(np.float64)
    c.expect(r0, (xf.sum(axis=(0, 2)) + 3).astype(np.float32))
    c.expect(r1, np.maximum(xf.max(axis=(0, 2)), -1.5).astype(np.float32))
    c.expect(r2, np.minimum(xf.min(axis=(0, 2)), 100.0).astype(np.float32))
    return c


def argm_op(c, xv, io, gt, axes, shape, dt, it, kshape, i0=0):
    """JAX's argmax/argmin reduce of (xv, io), its inits constants right before it"""
    if np.dtype(dt).kind == "i":
        init = np.iinfo(dt).min if gt else np.iinfo(dt).max
    else:
        init = -np.inf if gt else np.inf
    iv, i0 = c.const(np.array(init, dtype=dt)), c.const(np.array(i0, dtype=it))
    vt, itt = ttype((), dt), ttype((), it)
    ct = "SIGNED" if np.dtype(dt).kind == "i" else "FLOAT"
    r = c.op("{r}:2 = \"stablehlo.reduce\"(%s, %s, %s, %s) %s {dimensions = array<i64: %s>}"
             " : (%s, %s, %s, %s) -> (%s, %s)"
             % (xv, io, iv, i0,
                mc.ARGM_BODY % {"v": vt, "i": itt, "dir": "GT" if gt else "LT", "ct": ct},
                ", ".join(map(str, axes)), ttype(shape, dt), ttype(shape, it), vt, itt,
                ttype(kshape, dt), ttype(kshape, it)))
    return r, np.array(init, dtype=dt)[()]


def argm_pair_case(dt, it, shape, axes, special=True, threads=None, idx="iota", order=(1, 0),
                   between=False, i0=0):
    """argmax and argmin (order: 1 argmax, 0 argmin) of one input over the same axes, as JAX
    writes them (idx "iota": an iota along the reduced axis before each; "shared": one iota for
    both; "const": constants of distinct values in no order, the first's also the second's;
    "apart": the second's its own constant, not the same numbers: two steps); between: a sum
    of the input between the two; i0: the init index (above 0: the index compare is needed)"""
    c = Case("argmax/argmin pair %s of %s%s, %s indices (%s) over %s%s%s"
             % ("".join("+" if g else "-" for g in order), elem(dt), list(shape), elem(it), idx,
                list(axes), " (NaN, ties, signed zeros)" if special else "",
                " (a sum between)" if between else "") + (" init index %d" % i0 if i0 else ""),
             threads=threads)
    kshape = tuple(shape[d] for d in range(len(shape)) if d not in axes)
    if np.prod(shape) > 2000:
        xv, x = iota_data(c, shape, dt, False)
    else:
        x = mc.data(dt, special, shape)
        xv = c.const(x)
    red = [d for d in axes if shape[d] > 1] or list(axes)
    perm = rng.permutation(int(np.prod(shape))).reshape(shape)
    ix0 = np.indices(shape)[red[0]] if idx in ("iota", "shared") else perm
    shared = None
    if idx == "shared":
        shared = c.op("{r} = stablehlo.iota dim = %d : %s" % (red[0], ttype(shape, it)))
    elif idx in ("const", "apart"):
        shared = c.const(perm.astype(it))
    for k, gt in enumerate(order):
        ix = ix0
        if idx == "iota":
            io = c.op("{r} = stablehlo.iota dim = %d : %s" % (red[0], ttype(shape, it)))
        elif idx == "apart" and k == 1:
            ix = rng.permutation(int(np.prod(shape))).reshape(shape)
            io = c.const(ix.astype(it))
        else:
            io = shared
        if between and k == 1:
            zero = c.const(np.array(0, dtype=dt))
            c.expect(reduce_op(c, xv, zero, "add", axes, shape, dt, kshape),
                     mc.reduce_ref(x, axes, ref_fns(dt)["add"][1], np.array(0, dtype=dt)[()]))
        r, init = argm_op(c, xv, io, gt, axes, shape, dt, it, kshape, i0)
        vals, idxs = mc.argm_fold(x, ix, axes, gt, init, i0)
        c.expect(r + "#0", vals)
        c.expect(r + "#1", idxs.astype(it))
    return c


def argm_pair_cases():
    """argmax + argmin of one input over the same axes: one step (both read each block while
    it is in cache); every axis class and dtype, NaN, ties, signed zeros, both orders, index
    arrays shared or not, 1 and 2 threads, inputs of several chunks and blocks of rows"""
    out = []
    for dt, it in ((np.float32, np.int32), (np.float64, np.int64), (BF16, np.int32),
                   (np.int32, np.int32)):
        for axes in AXES:
            out.append(argm_pair_case(dt, it, mc.SHAPE, axes, dt != np.int32))
        out.append(argm_pair_case(dt, it, mc.SHAPE, (0,), dt != np.int32, order=(0, 1)))
        out.append(argm_pair_case(dt, it, mc.SHAPE, (2,), dt != np.int32, order=(1, 1)))
    for idx in ("shared", "const", "apart"):
        for axes in ((0,), (2,), (0, 2)):
            out.append(argm_pair_case(np.float32, np.int32, mc.SHAPE, axes, idx=idx))
    out.append(argm_pair_case(np.float32, np.int32, mc.SHAPE, (1,), between=True))
    out.append(argm_pair_case(np.float32, np.int32, (5, 1, 21), (1,)))
    # outputs in whole pairs of vectors (the vector kernels' iota rows), NaN, ties, signed
    # zeros; an init index above 0 (then ties need the index compare)
    for dt, it in ((np.float32, np.int32), (np.float64, np.int64), (BF16, np.int32)):
        for i0 in (0, 3):
            out.append(argm_pair_case(dt, it, (6, 70), (0,), i0=i0))
            out.append(argm_pair_case(dt, it, (4, 5, 40), (1,), i0=i0))
    for shape, axes in (((8, 16, 32, 32), (0,)), ((8, 16, 32, 32), (1,)), ((8, 16, 32, 32), (3,)),
                        ((40, 600), (0,)), ((600, 40), (1,)), ((3, 9000), (1,)), ((9000, 3), (0,)),
                        ((1, 70000), (1,))):
        for threads in (1, 2):
            for dt in (np.float32, BF16):
                out.append(argm_pair_case(dt, np.int32, shape, axes, False, threads=threads))
    return out


def main():
    cases = []
    stats = [("add", None), ("maximum", None), ("minimum", None)]
    for dt in (np.float32, np.float64, BF16, np.int32):
        for axes in AXES:
            cases.append(sibling_case(dt, axes, mc.SHAPE, stats, reuse=axes == (1,)))
            if dt != np.int32:
                cases.append(sibling_case(dt, axes, mc.SHAPE,
                                          [("maximum", None), ("minimum", None),
                                           ("maximum", 5.0), ("minimum", -5.0)], special=True))
    cases.append(computed_init_case())
    # unsigned bytes: sum (wrapping), max, min, or-like combiners as integers
    for axes in ((0,), (2,), (1, 2)):
        x = rng.integers(0, 256, size=mc.SHAPE).astype(np.uint8)
        cases.append(sibling_case(np.uint8, axes, mc.SHAPE,
                                  [("add", None), ("maximum", None), ("minimum", None)], data=x))
    # products of powers of two are exact in every order: mul with the others, the same input
    for axes in ((0,), (2,), (1, 2)):
        x = rng.choice(np.array([0.5, 1.0, -1.0, 2.0], dtype=np.float32), size=mc.SHAPE)
        cases.append(sibling_case(np.float32, axes, mc.SHAPE,
                                  [("multiply", None), ("add", None), ("maximum", None),
                                   ("add", 1.0)], data=x))
    # several blocks of outputs, several chunks of a vertical row, runs longer than a leaf,
    # rows of 100 in groups; on one thread and on the pool
    for shape, axes in (((4, 3, 32, 33), (2, 3)), ((6, 700), (0,)), ((3, 2100), (1,)),
                        ((70, 100), (1,)), ((9, 40, 37), (0, 2))):
        for threads in (1, None):
            cases.append(sibling_case(np.float32, axes, shape, stats, reuse=True,
                                      threads=threads))
    for dt in (np.float32, np.float64, BF16):
        for shape, axes in (((8, 16, 32, 32), (2, 3)), ((8, 16, 32, 32), (0,)),
                            ((8, 16, 32, 32), (0, 2, 3)), ((200, 300), (1,)), ((200, 300), None),
                            ((4, 64, 1030), (2,)), ((16, 8, 48, 48), (2, 3))):
            axes = axes or (0, 1)
            for threads in (1, None):
                cases.append(same_bits_case(dt, axes, shape, threads=threads))
    cases += argm_pair_cases()
    write_beside(__file__, "sibling_cases.mlir", cases, "sibling reductions (one input, the same "
                 "axes) on every axis class and dtype.")


if __name__ == "__main__":
    main()
