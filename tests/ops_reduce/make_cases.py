#!/usr/bin/env python3
"""Writes tests/ops_reduce/cases.mlir: stablehlo.reduce over every class of axes the kernels
tell apart (leading axes with a contiguous kept block, a middle axis, the innermost axis, two
adjacent minor axes, all axes, empty dims), for f32, f64, bf16 and s32, with NaN and signed
zeros for maximum/minimum; JAX's argmax/argmin body (values and s32/s64 indices; ties, NaN,
signed zeros) on every axis; and programs whose repeated subexpressions the compiler merges
(the same reduce twice, the same elementwise chain twice, returned side by side).

Expected values come from plain numpy loops written from the StableHLO semantics: sums of small
integers (exact in every order), maximum/minimum with NaN propagating and max(-0, +0) = +0, and
the argmax fold (the first NaN, else the largest value with the smallest index). Run with a
Python that has numpy and ml_dtypes:

  /work/main/.venv/bin/python tests/ops_reduce/make_cases.py
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))
from casegen import BF16, Case, elem, ttype, write_beside  # noqa: E402

rng = np.random.default_rng(20261127)
SHAPE = (5, 3, 21)  # 21: whole vectors and a tail in the kept innermost run

AXES = [(0,), (1,), (2,), (1, 2), (0, 1), (0, 1, 2)]


def pick(a, b, first, zero_first):
    """maximum's or minimum's choice: a NaN (a's first), between zeros a when zero_first, else a
    when first"""
    if a != a:
        return a
    if b != b:
        return b
    if a == b == 0:
        return a if zero_first else b
    return a if first else b


def fmax(a, b):
    return pick(a, b, a > b, not np.signbit(a))


def fmin(a, b):
    return pick(a, b, a < b, np.signbit(a))


def reduce_ref(x, axes, fn, init):
    """fn folds Python numbers (floats for float types: sums stay exact, and a bf16 sum is
    rounded once, as the kernels accumulate it in f32)"""
    kept = [d for d in range(x.ndim) if d not in axes]
    moved = np.moveaxis(x, kept + list(axes), range(x.ndim))
    kshape = moved.shape[:len(kept)]
    flat = moved.reshape(kshape + (-1,))
    out = np.empty(kshape, dtype=x.dtype)
    conv = int if x.dtype.kind == "i" else float
    for idx in np.ndindex(*kshape):
        acc = conv(init)
        for v in flat[idx]:
            acc = fn(acc, conv(v))
        out[idx] = acc
    return out


def data(dt, special, shape=SHAPE):
    x = rng.integers(-8, 9, size=shape).astype(np.float64)
    if special:
        flat = x.reshape(-1)
        flat[rng.choice(flat.size, 6, replace=False)] = np.nan
        flat[rng.choice(flat.size, 20, replace=False)] = 0.0
        flat[rng.choice(flat.size, 20, replace=False)] = -0.0
    return x.astype(dt)


def reduce_case(dt, op, axes, special, shape=SHAPE):
    name = {"add": "sum", "maximum": "max", "minimum": "min"}[op]
    c = Case("reduce %s %s%s over %s%s" % (name, elem(dt), list(shape), list(axes),
                                           " (NaN, signed zeros)" if special else ""))
    x = data(dt, special, shape)
    if np.dtype(dt).kind == "i":
        inits = {"add": 0, "maximum": np.iinfo(dt).min, "minimum": np.iinfo(dt).max}
        fns = {"add": lambda a, b: a + b, "maximum": max, "minimum": min}
    else:
        inits = {"add": 0.0, "maximum": -np.inf, "minimum": np.inf}
        fns = {"add": lambda a, b: a + b, "maximum": fmax, "minimum": fmin}
    init = np.array(inits[op], dtype=dt)
    want = reduce_ref(x, axes, fns[op], init[()])
    xv, iv = c.const(x), c.const(init)
    rt = ttype(want.shape, dt)
    r = c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.%s across dimensions = [%s]"
             " : (%s, %s) -> %s" % (xv, iv, op, ", ".join(map(str, axes)), ttype(shape, dt),
                                    ttype((), dt), rt))
    c.expect(r, want)
    return c


ARGM_BODY = """({
  ^bb0(%%a: %(v)s, %%ia: %(i)s, %%b: %(v)s, %%ib: %(i)s):
    %%p0 = stablehlo.compare %(dir)s, %%a, %%b, %(ct)s : (%(v)s, %(v)s) -> tensor<i1>
    %%p1 = stablehlo.compare NE, %%a, %%a, %(ct)s : (%(v)s, %(v)s) -> tensor<i1>
    %%p = stablehlo.or %%p0, %%p1 : tensor<i1>
    %%e = stablehlo.compare EQ, %%a, %%b, %(ct)s : (%(v)s, %(v)s) -> tensor<i1>
    %%l = stablehlo.compare LT, %%ia, %%ib, SIGNED : (%(i)s, %(i)s) -> tensor<i1>
    %%el = stablehlo.and %%e, %%l : tensor<i1>
    %%pi = stablehlo.or %%p, %%el : tensor<i1>
    %%rv = stablehlo.select %%p, %%a, %%b : tensor<i1>, %(v)s
    %%ri = stablehlo.select %%pi, %%ia, %%ib : tensor<i1>, %(i)s
    stablehlo.return %%rv, %%ri : %(v)s, %(i)s
  })"""


def argm_ref(x, axis, gt):
    """the in-order fold of JAX's body, from (init value, index 0)"""
    init = np.array(-np.inf if gt else np.inf, dtype=x.dtype) if x.dtype.kind == "f" or \
        x.dtype == BF16 else np.array(np.iinfo(x.dtype).min if gt else np.iinfo(x.dtype).max,
                                      dtype=x.dtype)
    moved = np.moveaxis(x, axis, -1)
    vals = np.empty(moved.shape[:-1], dtype=x.dtype)
    idxs = np.empty(moved.shape[:-1], dtype=np.int64)
    for k in np.ndindex(*moved.shape[:-1]):
        a, ia = init[()], 0
        for ib, b in enumerate(moved[k]):
            fa, fb = float(a), float(b)
            pick = (fa > fb if gt else fa < fb) or fa != fa
            pick_i = pick or (fa == fb and ia < ib)
            a, ia = (a if pick else b), (ia if pick_i else ib)
        vals[k], idxs[k] = a, ia
    return init, vals, idxs


def argm_case(dt, it, axis, gt):
    c = Case("arg%s %s, %s indices, over axis %d" % ("max" if gt else "min", elem(dt), elem(it),
                                                      axis))
    x = data(dt, np.dtype(dt).kind == "f" or dt == BF16)
    init, vals, idxs = argm_ref(x, axis, gt)
    vt, itt = ttype((), dt), ttype((), it)
    ct = "SIGNED" if np.dtype(dt).kind == "i" else "FLOAT"
    xv, iv = c.const(x), c.const(init)
    io = c.op("{r} = stablehlo.iota dim = %d : %s" % (axis, ttype(SHAPE, it)))
    i0 = c.const(np.array(0, dtype=it))
    kshape = vals.shape
    r = c.op("{r}:2 = \"stablehlo.reduce\"(%s, %s, %s, %s) %s {dimensions = array<i64: %d>}"
             " : (%s, %s, %s, %s) -> (%s, %s)"
             % (xv, io, iv, i0,
                ARGM_BODY % {"v": vt, "i": itt, "dir": "GT" if gt else "LT", "ct": ct},
                axis, ttype(SHAPE, dt), ttype(SHAPE, it), vt, itt, ttype(kshape, dt),
                ttype(kshape, it)))
    c.expect(r + "#0", vals)
    c.expect(r + "#1", idxs.astype(it))
    return c


def argm_fold(x, ix, axes, gt, init, i0=0):
    """the in-order fold of JAX's argmax (gt) / argmin body from (init, i0), indices from ix"""
    kept = [d for d in range(x.ndim) if d not in axes]
    order = kept + list(axes)
    kshape = tuple(x.shape[d] for d in kept)
    xf = np.moveaxis(x, order, range(x.ndim)).reshape(kshape + (-1,))
    xi = np.moveaxis(ix, order, range(x.ndim)).reshape(kshape + (-1,))
    vals = np.empty(kshape, dtype=x.dtype)
    idxs = np.empty(kshape, dtype=np.int64)
    for k in np.ndindex(*kshape):
        a, ia = init, i0
        for b, ib in zip(xf[k], xi[k]):
            fa, fb = float(a), float(b)
            pick = (fa > fb if gt else fa < fb) or fa != fa
            pick_i = pick or (fa == fb and ia < ib)
            a, ia = (a if pick else b), (ia if pick_i else int(ib))
        vals[k], idxs[k] = a, ia
    return vals, idxs


def argm_gen_ref(x, ix, axes, gt):
    """the in-order fold of JAX's body over the reduced axes (row-major), indices from ix"""
    init = np.array(-np.inf if gt else np.inf, dtype=x.dtype)
    vals, idxs = argm_fold(x, ix, axes, gt, init[()])
    return init, vals, idxs


def argm_gen_case(dt, it, shape, axes, gt, iota_dim=None):
    """argmax/argmin of JAX's body with indices from an iota along iota_dim (reduced or kept),
    or (iota_dim None) from a constant of distinct values in no order: the fold reads them"""
    c = Case("arg%s %s%s, %s indices %s, over %s"
             % ("max" if gt else "min", elem(dt), list(shape), elem(it),
                "an iota along %d" % iota_dim if iota_dim is not None else "a constant",
                list(axes)))
    x = data(dt, True, shape)
    if iota_dim is None:
        ix = rng.permutation(int(np.prod(shape))).reshape(shape)
    else:
        ix = np.indices(shape)[iota_dim]
    init, vals, idxs = argm_gen_ref(x, ix, axes, gt)
    vt, itt = ttype((), dt), ttype((), it)
    xv, iv = c.const(x), c.const(init)
    if iota_dim is None:
        io = c.const(ix.astype(it))
    else:
        io = c.op("{r} = stablehlo.iota dim = %d : %s" % (iota_dim, ttype(shape, it)))
    i0 = c.const(np.array(0, dtype=it))
    r = c.op("{r}:2 = \"stablehlo.reduce\"(%s, %s, %s, %s) %s {dimensions = array<i64: %s>}"
             " : (%s, %s, %s, %s) -> (%s, %s)"
             % (xv, io, iv, i0,
                ARGM_BODY % {"v": vt, "i": itt, "dir": "GT" if gt else "LT", "ct": "FLOAT"},
                ", ".join(map(str, axes)), ttype(shape, dt), ttype(shape, it), vt, itt,
                ttype(vals.shape, dt), ttype(vals.shape, it)))
    c.expect(r + "#0", vals)
    c.expect(r + "#1", idxs.astype(it))
    return c


def argm_gen_cases():
    """the argmax/argmin folds across contiguous outputs: many blocks of vector width and a
    tail, indices an iota along the reduced axis (computed, not read) or read (a constant, an
    iota along a kept axis, several reduced axes, strided outputs)"""
    out = []
    for dt, it in ((np.float32, np.int32), (np.float64, np.int64), (np.float32, np.int64),
                   (BF16, np.int32)):
        for gt in (True, False):
            out.append(argm_gen_case(dt, it, (37, 4, 10), (0,), gt, 0))
            out.append(argm_gen_case(dt, it, (4, 37, 40), (1,), gt, 1))
            out.append(argm_gen_case(dt, it, (6, 50), (0,), gt))
            out.append(argm_gen_case(dt, it, (9, 3, 40), (0,), gt, 1))
            out.append(argm_gen_case(dt, it, (5, 3, 21), (0, 2), gt))
            out.append(argm_gen_case(dt, it, (5, 1, 21), (1,), gt, 1))
    return out


def norm_case(dt, shape, axis):
    """x - broadcast(max(x, axis)) returned whole: the broadcast read back along every axis
    (in place along leading axes, rows copied along a middle one, filled along the last)"""
    c = Case("x - max(x) over axis %d broadcast back, %s%s" % (axis, elem(dt), list(shape)))
    x = data(dt, False, shape)
    kept = [d for d in range(len(shape)) if d != axis]
    kshape = tuple(shape[d] for d in kept)
    t, kt = ttype(shape, dt), ttype(kshape, dt)
    xv, iv = c.const(x), c.const(np.array(-np.inf, dtype=dt))
    m = c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.maximum across dimensions = "
             "[%d] : (%s, %s) -> %s" % (xv, iv, axis, t, ttype((), dt), kt))
    b = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [%s] : (%s) -> %s"
             % (m, ", ".join(map(str, kept)), kt, t))
    y = c.op("{r} = stablehlo.subtract %s, %s : %s" % (xv, b, t))
    c.expect(y, (x.astype(np.float64) - np.max(x.astype(np.float64), axis=axis,
                                                keepdims=True)).astype(dt))
    return c


def empty_cases():
    """a reduced dim of size 0 (every output is the init) and an empty kept dim (no outputs)"""
    out = []
    for shape, axes in (((0, 4), (0,)), ((4, 0), (1,)), ((3, 0, 5), (1,)), ((2, 3, 0), (2,)),
                        ((0, 4), (1,)), ((3, 0, 5), (0, 2))):
        c = Case("reduce f32 %s over %s (empty)" % (list(shape), list(axes)))
        x = c.splat(shape, np.float32, 1.0)
        init = c.const(np.array(2.5, dtype=np.float32))
        kshape = tuple(d for i, d in enumerate(shape) if i not in axes)
        r = c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.add across dimensions = [%s]"
                 " : (%s, tensor<f32>) -> %s" % (x, init, ", ".join(map(str, axes)),
                                                 ttype(shape, np.float32),
                                                 ttype(kshape, np.float32)))
        if np.prod(kshape) > 0:
            c.expect(r, np.full(kshape, 2.5, dtype=np.float32))
        out.append(c)
    return out


def fold_cases():
    """reduced dims around a kept dim with a short contiguous reduced run inside it (GroupNorm's
    statistics: [N, H, W, G, C/G] over H, W, C/G; runs of 2 to 16, several vertical chunks, odd
    runs that do not divide a chunk, no kept dim outside, one reduced dim, NaN and zeros)"""
    out = []
    for shape, axes in (((2, 3, 5, 8, 4), (1, 2, 4)), ((2, 6, 3, 2), (1, 3)),
                        ((2, 5, 3, 16), (1, 3)), ((7, 5, 3), (0, 2)), ((2, 9, 90, 3), (1, 3)),
                        ((3, 11, 60, 5), (0, 1, 3))):
        for dt in (np.float32, np.float64, BF16, np.int32):
            for op in ("add", "maximum", "minimum"):
                if dt == np.int32 and op != "add" or dt in (np.float64, BF16) and op == "minimum":
                    continue
                out.append(reduce_case(dt, op, axes, op != "add" and dt != np.int32, shape))
    return out


def cse_case():
    """the same reduce, broadcast and elementwise chain twice (as softmax and log_softmax
    write them), and near-repeats that differ in init, body or comparison: all returned"""
    c = Case("repeated subexpressions (merged by the compiler) and near-repeats")
    x = rng.integers(-8, 9, size=(6, 40)).astype(np.float32)
    xv = c.const(x)
    ninf, ninf2 = c.const(np.float32(-np.inf)), c.const(np.float32(-np.inf))
    zero, one = c.const(np.float32(0)), c.const(np.float32(1))
    t, rt = ttype(x.shape, np.float32), ttype((6,), np.float32)

    def red(init, op):
        return c.op("{r} = stablehlo.reduce(%s init: %s) applies stablehlo.%s across "
                    "dimensions = [1] : (%s, tensor<f32>) -> %s" % (xv, init, op, t, rt))

    m1, m2, s0, s1 = red(ninf, "maximum"), red(ninf2, "maximum"), red(zero, "add"), red(one, "add")
    outs = []
    for m in (m1, m2):
        b = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [0] : (%s) -> %s" % (m, rt, t))
        d = c.op("{r} = stablehlo.subtract %s, %s : %s" % (xv, b, t))
        outs.append(c.op("{r} = stablehlo.multiply %s, %s : %s" % (d, d, t)))
    mx, sm = x.max(axis=1), x.sum(axis=1)
    c.expect(m1, mx)
    c.expect(m2, mx)
    c.expect(s0, sm)
    c.expect(s1, sm + 1)
    sq = (x - mx[:, None]) ** 2
    c.expect(outs[0], sq)
    c.expect(outs[1], sq)
    return c


def main():
    cases = []
    for dt in (np.float32, np.float64, BF16, np.int32):
        for axes in AXES:
            for op in ("add", "maximum", "minimum"):
                cases.append(reduce_case(dt, op, axes, False))
                if dt != np.int32 and op != "add":
                    cases.append(reduce_case(dt, op, axes, True))
    for dt, it in ((np.float32, np.int32), (np.float32, np.int64), (np.float64, np.int32),
                   (np.float64, np.int64), (BF16, np.int32), (np.int32, np.int32)):
        for axis in range(3):
            for gt in (True, False):
                cases.append(argm_case(dt, it, axis, gt))
    # rows of 100 and 40 elements, more outputs than one group of 64
    for dt, shape in ((np.float32, (70, 100)), (np.float64, (70, 100)), (BF16, (130, 40))):
        for op in ("add", "maximum", "minimum"):
            cases.append(reduce_case(dt, op, (1,), op != "add", shape))
    cases += argm_gen_cases()
    for dt in (np.float32, np.float64, BF16):
        for axis in range(4):
            cases.append(norm_case(dt, (3, 4, 40, 37), axis))
    cases += empty_cases()
    cases.append(cse_case())
    cases += fold_cases()
    write_beside(__file__, "cases.mlir", cases, "stablehlo.reduce on every axis class and dtype, "
                 "argmax/argmin, repeated subexpressions.")


if __name__ == "__main__":
    main()
