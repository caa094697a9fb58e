#!/usr/bin/env python3
"""Writes cases.mlir: dot_general and reduce_window cases with long sums of integer-valued
data (exact in f32 partial sums), checked with check.expect_eq. Inputs are built in the program
(iota, splat constants) so the file stays small.

usage: python tests/ops_accum/make_cases.py   (needs numpy and ml_dtypes)
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from casegen import BF16, Case, write_beside  # noqa: E402

out = []


def ty(shape, t):
    return "tensor<" + "".join(f"{d}x" for d in shape) + t + ">"


def _nested(v):
    if v.ndim == 0:
        return repr(float(v))
    return "[" + ", ".join(_nested(x) for x in v) + "]"


def case(name, body):
    """a case of the ops in body (lines, each ending in a newline)"""
    c = Case(name)
    c.raw(body[:-1])
    out.append(c)


def iota_f(name, shape, dim, t):
    """%name = convert(iota along dim) of type t"""
    return (f"  %{name}_i = stablehlo.iota dim = {dim} : {ty(shape, 'i32')}\n"
            f"  %{name} = stablehlo.convert %{name}_i : ({ty(shape, 'i32')}) -> {ty(shape, t)}\n")


def splat(name, shape, t, v):
    return f"  %{name} = stablehlo.constant dense<{v}> : {ty(shape, t)}\n"


def expect(got, want, shape, t):
    want = np.asarray(want)
    lit = repr(float(want.reshape(-1)[0])) if want.size and np.all(want == want.reshape(-1)[0]) \
        else _nested(want)
    return (f"  %want = stablehlo.constant dense<{lit}> : {ty(shape, t)}\n"
            f"  stablehlo.custom_call @check.expect_eq(%{got}, %want) {{has_side_effect = true}} : "
            f"({ty(shape, t)}, {ty(shape, t)}) -> ()\n")


def dot(name, lhs, rhs, lshape, rshape, lt, rt, ot, oshape, lb, rb, lc, rc):
    dims = ""
    if lb:
        dims += f"batching_dims = {lb} x {rb}, "
    dims += f"contracting_dims = {lc} x {rc}"
    return (f"  %{name} = stablehlo.dot_general %{lhs}, %{rhs}, {dims} : "
            f"({ty(lshape, lt)}, {ty(rshape, rt)}) -> {ty(oshape, ot)}\n")


ROUND = {"f32": np.float32, "f64": np.float64, "bf16": BF16, "f16": np.float16}

# ---- dot: long K (the GEMM's chunked path past K = 4096), GEMV forms, generic loop
K = 5000
ks = np.arange(K, dtype=np.float64)
for ot in ("f32", "f64", "bf16"):
    it = "f64" if ot == "f64" else "f32"
    # ones(8 x K) . iota(K x 40) along K: every element sum(k) = 12497500, exact in f32
    want = np.full((8, 40), ks.sum()).astype(ROUND[ot])
    case(f"dot long K {it}->{ot} (GEMM chunks)",
         splat("a", (8, K), it, 1.0) + iota_f("b", (K, 40), 0, it)
         + dot("d", "a", "b", (8, K), (K, 40), it, it, ot, (8, 40), [], [], [1], [0])
         + expect("d", want.astype(np.float64), (8, 40), ot))
# more than 256 rows with a long K: tasks capped at 256 rows
want = np.full((300, 33), ks.sum())
case("dot long K, 300 rows, 33 columns",
     splat("a", (300, K), "f32", 1.0) + iota_f("b", (K, 33), 0, "f32")
     + dot("d", "a", "b", (300, K), (K, 33), "f32", "f32", "f32", (300, 33), [], [], [1], [0])
     + expect("d", want, (300, 33), "f32"))
# GEMV forms: A x (dot form), A^T x (axpy form), x W (axpy), x W^T (dot), batched, bf16 matrix
for mt in ("f32", "bf16"):
    case(f"gemv A x, {mt} matrix",
         splat("a", (37, K), mt, 1.0) + iota_f("x", (K,), 0, "f32")
         + dot("d", "a", "x", (37, K), (K,), mt, "f32", "f32", (37,), [], [], [1], [0])
         + expect("d", np.full(37, ks.sum()), (37,), "f32"))
    case(f"gemv A^T x, {mt} matrix",
         splat("a", (K, 37), mt, 1.0) + iota_f("x", (K,), 0, "f32")
         + dot("d", "a", "x", (K, 37), (K,), mt, "f32", "f32", (37,), [], [], [0], [0])
         + expect("d", np.full(37, ks.sum()), (37,), "f32"))
    case(f"gemv x W, {mt} matrix",
         iota_f("x", (K,), 0, "f32") + splat("w", (K, 150), mt, 1.0)
         + dot("d", "x", "w", (K,), (K, 150), "f32", mt, "f32", (150,), [], [], [0], [0])
         + expect("d", np.full(150, ks.sum()), (150,), "f32"))
    case(f"gemv x W^T, {mt} matrix",
         iota_f("x", (K,), 0, "f32") + splat("w", (150, K), mt, 1.0)
         + dot("d", "x", "w", (K,), (150, K), "f32", mt, "f32", (150,), [], [], [0], [1])
         + expect("d", np.full(150, ks.sum()), (150,), "f32"))
case("gemv batched x W, bf16 result",
     iota_f("x", (3, K), 1, "bf16") + splat("w", (3, K, 70), "bf16", 1.0)
     + dot("d", "x", "w", (3, K), (3, K, 70), "bf16", "bf16", "bf16", (3, 70), [0], [0], [1], [1])
     # the bf16 iota rounds its values first
     + expect("d", np.full((3, 70), np.arange(K).astype(BF16).astype(np.float64).sum())
              .astype(BF16).astype(np.float64), (3, 70), "bf16"))
case("vdot",
     iota_f("x", (K,), 0, "f32") + splat("y", (K,), "f32", 1.0)
     + dot("d", "x", "y", (K,), (K,), "f32", "f32", "f32", (), [], [], [0], [0])
     + expect("d", ks.sum(), (), "f32"))
# the generic loop: f32 inputs with an f64 result, complex64
case("dot f32 -> f64 (generic loop)",
     splat("a", (4, K), "f32", 1.0) + iota_f("b", (K, 5), 0, "f32")
     + dot("d", "a", "b", (4, K), (K, 5), "f32", "f32", "f64", (4, 5), [], [], [1], [0])
     + expect("d", np.full((4, 5), ks.sum()), (4, 5), "f64"))
case("dot complex64 (generic loop)", f"""  %one = stablehlo.constant dense<1.0> : tensor<4x{K}xf32>
  %a = stablehlo.complex %one, %one : tensor<4x{K}xcomplex<f32>>
{iota_f("r", (K, 3), 0, "f32")}  %z = stablehlo.constant dense<0.0> : tensor<{K}x3xf32>
  %b = stablehlo.complex %r, %z : tensor<{K}x3xcomplex<f32>>
  %d = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0] : (tensor<4x{K}xcomplex<f32>>, tensor<{K}x3xcomplex<f32>>) -> tensor<4x3xcomplex<f32>>
  %wr = stablehlo.constant dense<{float(ks.sum())!r}> : tensor<4x3xf32>
  %want = stablehlo.complex %wr, %wr : tensor<4x3xcomplex<f32>>
  stablehlo.custom_call @check.expect_eq(%d, %want) {{has_side_effect = true}} : (tensor<4x3xcomplex<f32>>, tensor<4x3xcomplex<f32>>) -> ()
""")


# ---- reduce_window: long windows (64+ positions), padding, init, dilation, 2-D
def rw_ref(x, init, w, s, lo, hi, bd=1, wd=1):
    d = np.full((len(x) - 1) * bd + 1, np.nan)
    d[::bd] = x
    p = np.concatenate([np.full(lo, np.nan), d, np.full(hi, np.nan)])
    span = (w - 1) * wd + 1
    res = []
    for st in range(0, len(p) - span + 1, s):
        v = p[st:st + span:wd]
        res.append(init + np.where(np.isnan(v), init, v).sum())
    return np.array(res)


def rw(name, x, xshape, t, init, wdims, strides, bdil, wdil, pad, oshape):
    r = len(xshape)
    arr = lambda v: "array<i64: " + ", ".join(map(str, v)) + ">"
    padt = "dense<" + _nested(np.array(pad)).replace(".0", "") + f"> : tensor<{r}x2xi64>"
    return (f"  %init = stablehlo.constant dense<{init!r}> : tensor<{t}>\n"
            f"  %{name} = \"stablehlo.reduce_window\"(%{x}, %init) <{{window_dimensions = {arr(wdims)}, "
            f"window_strides = {arr(strides)}, base_dilations = {arr(bdil)}, window_dilations = {arr(wdil)}, "
            f"padding = {padt}}}> ({{\n"
            f"  ^bb0(%p: tensor<{t}>, %q: tensor<{t}>):\n"
            f"    %s = stablehlo.add %p, %q : tensor<{t}>\n"
            f"    stablehlo.return %s : tensor<{t}>\n"
            f"  }}) : ({ty(xshape, t)}, tensor<{t}>) -> {ty(oshape, t)}\n")


N = 256  # iota values exact in bf16 and f16
xs = np.arange(N, dtype=np.float64)
for t in ("f32", "bf16", "f16", "f64"):
    for label, init, w, s, lo, hi, bd, wd in (("padded", 0.0, 100, 3, 50, 20, 1, 1),
                                               ("init 1.5", 1.5, 100, 7, 30, 99, 1, 1),
                                               ("dilated", 0.0, 70, 5, 10, 10, 2, 3)):
        want = rw_ref(xs, init, w, s, lo, hi, bd, wd)
        if t == "f16":
            want = want / 64  # keep f16 sums in range: inputs iota / 64
        body = iota_f("x0", (N,), 0, t)
        if t == "f16":
            body += (f"  %sc = stablehlo.constant dense<0.015625> : {ty((N,), t)}\n"
                     f"  %x = stablehlo.multiply %x0, %sc : {ty((N,), t)}\n")
            initv = init / 64
        else:
            body = body.replace("%x0 =", "%x =").replace("%x0_i", "%x_i")
            initv = init
        body += rw("r", "x", (N,), t, initv, [w], [s], [bd], [wd], [[lo, hi]], (len(want),))
        body += expect("r", want.astype(ROUND[t]).astype(np.float64), (len(want),), t)
        case(f"reduce_window long window {label} {t}", body)
# 2-D: an 8x16 window (128 positions) over a padded 40x64 image with init 2, row chunks of the
# output (its last dim longer than 1024 columns is covered by the 1-D 4096-wide case below)
img = np.add.outer(np.arange(40), np.arange(64)).astype(np.float64) % 16
p = np.full((47, 75), 2.0)
p[3:43, 5:69] = img
want2 = np.array([[2.0 + p[i:i + 8, j:j + 16].sum() for j in range(0, 75 - 16 + 1, 3)]
                  for i in range(0, 47 - 8 + 1, 2)])
body = (f"  %ii = stablehlo.iota dim = 0 : tensor<40x64xi32>\n"
        f"  %jj = stablehlo.iota dim = 1 : tensor<40x64xi32>\n"
        f"  %s0 = stablehlo.add %ii, %jj : tensor<40x64xi32>\n"
        f"  %m = stablehlo.constant dense<16> : tensor<40x64xi32>\n"
        f"  %s1 = stablehlo.remainder %s0, %m : tensor<40x64xi32>\n"
        f"  %x = stablehlo.convert %s1 : (tensor<40x64xi32>) -> tensor<40x64xbf16>\n")
body += rw("r", "x", (40, 64), "bf16", 2.0, [8, 16], [2, 3], [1, 1], [1, 1], [[3, 4], [5, 6]],
           want2.shape)
body += expect("r", want2.astype(BF16).astype(np.float64), want2.shape, "bf16")
case("reduce_window 2-D 8x16 window, padding, init 2, bf16", body)
# a 1-D window of 64 over 3000 elements: the output row is done in column chunks
M = 3000
ms = np.arange(M, dtype=np.float64) % 100
want3 = np.convolve(ms, np.ones(64), mode="valid")
body = (f"  %i = stablehlo.iota dim = 0 : tensor<{M}xi32>\n"
        f"  %h = stablehlo.constant dense<100> : tensor<{M}xi32>\n"
        f"  %r0 = stablehlo.remainder %i, %h : tensor<{M}xi32>\n"
        f"  %x = stablehlo.convert %r0 : (tensor<{M}xi32>) -> tensor<{M}xf32>\n")
body += rw("r", "x", (M,), "f32", 0.0, [64], [1], [1], [1], [[0, 0]], want3.shape)
body += expect("r", want3, want3.shape, "f32")
case("reduce_window 1-D 64-wide window over 3000 elements (column chunks)", body)

write_beside(__file__, "cases.mlir", out, "dot_general and reduce_window cases with long, exact sums.")
