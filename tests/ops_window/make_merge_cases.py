#!/usr/bin/env python3
"""Writes tests/ops_window/merge_cases.mlir: reduce_window whose last dims the window passes
through (size 1, stride 1, no padding or dilation), which the CPU backend merges into the dim
before them (k_window.c, rw_merge_last: that dim's padding and window dilation scaled by the
merged size): NHWC pooling gradients (stride 1 with padding), window dilation, a non-identity
init (padded positions combine it), two passthrough dims, max with -inf, s32; and cases the
merge must leave alone (a stride or base dilation before the passthrough dim).

Expected values come from a plain numpy loop over the StableHLO definition, on small integers
(f32 sums exact in every order). Run with a Python that has numpy and ml_dtypes:

  /work/main/.venv/bin/python tests/ops_window/make_merge_cases.py
"""
import itertools
import os
import sys

sys.dont_write_bytecode = True

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "common"))
from casegen import Case, array_attr, body2, dense, ttype, write_beside  # noqa: E402

rng = np.random.default_rng(20261128)


def ref(x, init, op, wd, ws, bd, wdl, pad):
    """reduce_window by its definition: the window's elements of the padded, dilated input in
    row-major window order, folded from init"""
    r = x.ndim
    dil = [(x.shape[d] - 1) * bd[d] + 1 for d in range(r)]
    padded = [pad[d][0] + dil[d] + pad[d][1] for d in range(r)]
    span = [(wd[d] - 1) * wdl[d] + 1 for d in range(r)]
    oshape = [(padded[d] - span[d]) // ws[d] + 1 for d in range(r)]
    out = np.empty(oshape, x.dtype)
    for o in itertools.product(*[range(n) for n in oshape]):
        acc = x.dtype.type(init)
        for w in itertools.product(*[range(n) for n in wd]):
            q = [o[d] * ws[d] + w[d] * wdl[d] - pad[d][0] for d in range(r)]
            if all(0 <= q[d] < dil[d] and q[d] % bd[d] == 0 for d in range(r)):
                v = x[tuple(q[d] // bd[d] for d in range(r))]
            else:
                v = x.dtype.type(init)
            acc = op(acc, v)
        out[o] = acc
    return out


def case(name, x, init, opname, wd, ws=None, bd=None, wdl=None, pad=None):
    r = x.ndim
    ws, bd, wdl = ws or [1] * r, bd or [1] * r, wdl or [1] * r
    pad = pad or [[0, 0]] * r
    op = {"add": lambda a, b: a + b, "maximum": lambda a, b: max(a, b)}[opname]
    want = ref(x, init, op, wd, ws, bd, wdl, pad)
    c = Case(name)
    xv = c.const(x)
    iv = c.const(np.array(init, x.dtype))
    t0 = ttype((), x.dtype)
    body = body2(x.dtype, "stablehlo.%s %%a, %%b : {t}" % opname)
    attrs = ("window_dimensions = %s, window_strides = %s, base_dilations = %s, "
             "window_dilations = %s, padding = dense<%s> : tensor<%dx2xi64>"
             % (array_attr(wd), array_attr(ws), array_attr(bd), array_attr(wdl),
                [list(p) for p in pad], r))
    v = c.op('{r} = "stablehlo.reduce_window"(%s, %s) <{%s}> %s : (%s, %s) -> (%s)'
             % (xv, iv, attrs, body, ttype(x.shape, x.dtype), t0, ttype(want.shape, x.dtype)))
    c.expect(v, want)
    return c


def ints(shape, dt=np.float32, lo=-8, hi=9):
    return rng.integers(lo, hi, size=shape).astype(dt)


def main():
    cs = []
    x = ints((2, 5, 5, 3))
    cs.append(case("NHWC pooling gradient: 2x2 stride 1, padding 1", x, 0, "add", [1, 2, 2, 1],
                   pad=[[0, 0], [1, 1], [1, 1], [0, 0]]))
    cs.append(case("NHWC window dilation 2, asymmetric padding", x, 0, "add", [1, 1, 2, 1],
                   wdl=[1, 1, 2, 1], pad=[[0, 0], [0, 0], [2, 1], [0, 0]]))
    cs.append(case("NHWC add with init 1: padded positions combine it", x, 1, "add",
                   [1, 2, 3, 1], pad=[[0, 0], [1, 0], [2, 1], [0, 0]]))
    cs.append(case("two passthrough dims merged into a windowed one", ints((2, 4, 3, 2)), 0, "add",
                   [1, 2, 1, 1], pad=[[0, 0], [1, 2], [0, 0], [0, 0]]))
    cs.append(case("max with -inf init and padding", ints((1, 4, 6, 5)), -np.inf, "maximum",
                   [1, 3, 3, 1], pad=[[0, 0], [1, 1], [1, 1], [0, 0]]))
    cs.append(case("s32 add, window along the merged dim only", ints((3, 7, 4), np.int32), 0,
                   "add", [1, 3, 1], pad=[[0, 0], [2, 0], [0, 0]]))
    cs.append(case("left alone: stride 2 before the passthrough dim", x, 0, "add", [1, 2, 2, 1],
                   ws=[1, 2, 2, 1]))
    cs.append(case("left alone: base dilation before the passthrough dim", x, 0, "add",
                   [1, 2, 2, 1], bd=[1, 1, 2, 1], pad=[[0, 0], [0, 0], [1, 1], [0, 0]]))
    write_beside(__file__, "merge_cases.mlir", cs,
                 "reduce_window with passthrough last dims (the CPU backend merges them).")


if __name__ == "__main__":
    main()
