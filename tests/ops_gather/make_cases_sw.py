"""Cases for sort / chlo.top_k (tests/ops_sort) and reduce_window / select_and_scatter / map
(tests/ops_window); called by make_cases.py. References follow docs/spec.md (select_and_scatter
never selects padding, as XLA does)."""
import functools
import os
import struct

import numpy as np

from casegen import BF16, Case, array_attr, body2, ttype, write

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
rng = np.random.default_rng(20260818)


# an argmax fold of (f32 value, i32 index) pairs: the larger value, on ties the lower index
ARGMAX_BODY = ("({\n  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):\n"
               "    %gt = stablehlo.compare GT, %b, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
               "    %eq = stablehlo.compare EQ, %b, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
               "    %lt = stablehlo.compare LT, %bi, %ai : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
               "    %t = stablehlo.and %eq, %lt : tensor<i1>\n"
               "    %p = stablehlo.or %gt, %t : tensor<i1>\n"
               "    %v = stablehlo.select %p, %b, %a : tensor<i1>, tensor<f32>\n"
               "    %i = stablehlo.select %p, %bi, %ai : tensor<i1>, tensor<i32>\n"
               "    stablehlo.return %v, %i : tensor<f32>, tensor<i32>\n  })")


def argmax(a, x):
    """ARGMAX_BODY on the accumulator a and the element x"""
    take = x[0] > a[0] or (x[0] == a[0] and x[1] < a[1])
    return [x[0], x[1]] if take else [a[0], a[1]]


def total_key(v):
    """IEEE totalOrder as an integer (floats); the value itself for integers and booleans"""
    a = np.asarray(v)
    if a.dtype.kind in "iub":
        return int(a)
    if a.dtype == BF16 or a.dtype == np.float16:
        b = int(a.view(np.uint16))
        return (~b & 0xFFFF) if b & 0x8000 else b | 0x8000
    if a.dtype == np.float32:
        b = struct.unpack("<I", a.astype(np.float32).tobytes())[0]
        return (~b & 0xFFFFFFFF) if b & 0x80000000 else b | 0x80000000
    b = struct.unpack("<Q", a.astype(np.float64).tobytes())[0]
    return (~b & (2**64 - 1)) if b & (1 << 63) else b | (1 << 63)


# ======================================================================== sort

def sort_ref(inputs, dim, less):
    """stable sort of the slices along dim; less(lhs_list, rhs_list) -> bool"""
    outs = [x.copy() for x in inputs]
    x0 = inputs[0]
    dim = dim % x0.ndim
    other = [d for d in range(x0.ndim) if d != dim]
    for oi in np.ndindex(*[x0.shape[d] for d in other]):
        def at(j):
            idx = list(oi)
            idx.insert(dim, j)
            return tuple(idx)
        n = x0.shape[dim]

        def cmp(a, b):
            la = [x[at(a)] for x in inputs]
            lb = [x[at(b)] for x in inputs]
            if less(la, lb):
                return -1
            if less(lb, la):
                return 1
            return 0
        order = sorted(range(n), key=functools.cmp_to_key(cmp))
        for k, x in enumerate(inputs):
            for j, src in enumerate(order):
                outs[k][at(j)] = x[at(src)]
    return outs


def sort_case(name, inputs, dim, body, less, dim_attr=True, stable=False):
    c = Case(name)
    es = sort_ref(inputs, dim, less)
    vs = [c.const(x) for x in inputs]
    n = len(inputs)
    res = "%%s%d" % c.n
    c.n += 1
    lhs = res if n == 1 else "%s:%d" % (res, n)
    attrs = []
    if dim_attr:
        attrs.append("dimension = %d : i64" % dim)
    if stable:
        attrs.append("is_stable = true")
    types = ", ".join(ttype(x.shape, x.dtype) for x in inputs)
    c.raw('  %s = "stablehlo.sort"(%s) <{%s}> %s : (%s) -> (%s)' % (
        lhs, ", ".join(vs), ", ".join(attrs), body, types, types))
    for k, e in enumerate(es):
        c.expect(res if n == 1 else "%s#%d" % (res, k), e)
    return c


def cmp_body(dts, direction, k=0, ctype=None, swapped=False):
    args = []
    for i, dt in enumerate(dts):
        t = ttype((), dt)
        args += ["%%a%d: %s" % (i, t), "%%b%d: %s" % (i, t)]
    t = ttype((), dts[k])
    lhs, rhs = ("%%b%d" % k, "%%a%d" % k) if swapped else ("%%a%d" % k, "%%b%d" % k)
    ct = (", " + ctype) if ctype else ""
    return ("({\n  ^bb0(%s):\n    %%p = stablehlo.compare %s, %s, %s%s : (%s, %s) -> tensor<i1>\n"
            "    stablehlo.return %%p : tensor<i1>\n  })" % (", ".join(args), direction, lhs, rhs, ct, t, t))


def sort_cases():
    cs = []
    f32 = np.float32
    # argsort with FLOAT LT: -0 and +0 are equal and keep their order (stable)
    x = np.array([[3.0, -0.0, 1.5, 0.0, -2.0, 1.5, 0.0, -0.0],
                  [1.0, 1.0, -1.0, 7.0, 2.0, -1.0, 0.5, 1.0]], f32)
    ids = np.tile(np.arange(8, dtype=np.int32), (2, 1))
    cs.append(sort_case("argsort FLOAT LT, signed zeros tie", [x, ids], 1,
                        cmp_body([f32, np.int32], "LT", ctype="FLOAT"),
                        lambda a, b: float(a[0]) < float(b[0]), stable=True))
    # TOTALORDER GT over NaNs, infinities and signed zeros (descending)
    v = np.array([np.nan, -np.inf, 1.0, -0.0, 0.0, np.inf, -1.0, -np.nan, 2.5, 0.0], np.float64)
    cs.append(sort_case("TOTALORDER GT f64 with NaN", [v], 0,
                        cmp_body([np.float64], "GT", ctype="TOTALORDER"),
                        lambda a, b: total_key(a[0]) > total_key(b[0])))
    # a 3-operand lexicographic comparator (general path): key1 ascending, key2 descending
    k1 = rng.integers(0, 3, (2, 12)).astype(np.int32)
    k2 = rng.integers(0, 4, (2, 12)).astype(f32)
    pay = rng.integers(0, 100, (2, 12)).astype(np.int64)
    body = ("({\n  ^bb0(%a0: tensor<i32>, %b0: tensor<i32>, %a1: tensor<f32>, %b1: tensor<f32>, "
            "%a2: tensor<i64>, %b2: tensor<i64>):\n"
            "    %lt = stablehlo.compare LT, %a0, %b0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            "    %eq = stablehlo.compare EQ, %a0, %b0 : (tensor<i32>, tensor<i32>) -> tensor<i1>\n"
            "    %gt = stablehlo.compare GT, %a1, %b1 : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "    %t = stablehlo.and %eq, %gt : tensor<i1>\n"
            "    %p = stablehlo.or %lt, %t : tensor<i1>\n"
            "    stablehlo.return %p : tensor<i1>\n  })")
    cs.append(sort_case("lexicographic comparator, 3 operands", [k1, k2, pay], 1, body,
                        lambda a, b: a[0] < b[0] or (a[0] == b[0] and a[1] > b[1]), stable=True))
    # along dim 0 of a 3-d tensor; the dimension attribute absent on a rank-1 sort (-1)
    x = rng.integers(-1000, 1000, (5, 3, 4)).astype(np.int16)
    cs.append(sort_case("i16 along dim 0", [x], 0, cmp_body([np.int16], "LT"), lambda a, b: a[0] < b[0]))
    x = rng.integers(0, 255, (9,)).astype(np.uint8)
    cs.append(sort_case("ui8 GT, default dimension", [x], 0, cmp_body([np.uint8], "GT"),
                        lambda a, b: a[0] > b[0], dim_attr=False))
    # small floats and booleans; compare written with swapped arguments
    x = rng.standard_normal((3, 7)).astype(BF16)
    cs.append(sort_case("bf16 GT(b, a) = ascending", [x], 1,
                        cmp_body([BF16], "GT", swapped=True), lambda a, b: float(a[0]) < float(b[0])))
    x = np.array([1.0, -0.0, np.inf, -3.5, 0.0, 65504.0, -np.inf], np.float16)
    cs.append(sort_case("f16 TOTALORDER LT", [x], 0, cmp_body([np.float16], "LT", ctype="TOTALORDER"),
                        lambda a, b: total_key(a[0]) < total_key(b[0])))
    x = np.array([[True, False, True, False, False], [False, False, True, True, False]])
    ids = np.tile(np.arange(5, dtype=np.int32), (2, 1))
    cs.append(sort_case("bool keys carry ids", [x, ids], 1, cmp_body([np.bool_, np.int32], "LT"),
                        lambda a, b: int(a[0]) < int(b[0]), stable=True))
    # the key is the second operand
    x = rng.standard_normal((4,)).astype(f32)
    y = np.array([3, 1, 2, 0], np.int64)
    cs.append(sort_case("key is operand 1", [x, y], 0, cmp_body([f32, np.int64], "LT", k=1),
                        lambda a, b: a[1] < b[1]))
    # a comparator using a value defined outside its region (NaN canonicalization, as JAX does)
    x = np.array([2.0, np.nan, -1.0, -np.nan, 0.5, np.nan, -7.0], f32)
    c = Case("comparator with an outer constant")
    vx = c.const(x)
    nan = c.const(np.array(np.nan, f32))
    c.raw('  %%srt = "stablehlo.sort"(%s) <{dimension = 0 : i64}> ({\n'
          '  ^bb0(%%a: tensor<f32>, %%b: tensor<f32>):\n'
          '    %%na = stablehlo.compare NE, %%a, %%a : (tensor<f32>, tensor<f32>) -> tensor<i1>\n'
          '    %%ca = stablehlo.select %%na, %s, %%a : tensor<i1>, tensor<f32>\n'
          '    %%nb = stablehlo.compare NE, %%b, %%b : (tensor<f32>, tensor<f32>) -> tensor<i1>\n'
          '    %%cb = stablehlo.select %%nb, %s, %%b : tensor<i1>, tensor<f32>\n'
          '    %%p = stablehlo.compare LT, %%ca, %%cb, TOTALORDER : (tensor<f32>, tensor<f32>) -> tensor<i1>\n'
          '    stablehlo.return %%p : tensor<i1>\n  }) : (tensor<7xf32>) -> tensor<7xf32>'
          % (vx, nan, nan))
    # NaNs compare equal after canonicalization; sort_ref is stable: the NaN positions keep the
    # input's NaN payloads in order
    e = sort_ref([x], 0, lambda a, b: total_key(np.float32(np.nan) if np.isnan(a[0]) else a[0]) <
                 total_key(np.float32(np.nan) if np.isnan(b[0]) else b[0]))[0]
    c.expect("%srt", e)
    cs.append(c)
    # large: 256 rows of 512 descending values sorted ascending, carrying positions (parallel)
    c = Case("large argsort of descending rows", threads=2)
    io = c.op("{r} = stablehlo.iota dim = 1 : tensor<256x512xf32>")
    row = c.op("{r} = stablehlo.iota dim = 0 : tensor<256x512xf32>")
    x = c.op("{r} = stablehlo.reverse %s, dims = [1] : tensor<256x512xf32>" % io)
    x = c.op("{r} = stablehlo.add %s, %s : tensor<256x512xf32>" % (x, row))
    ids = c.op("{r} = stablehlo.iota dim = 1 : tensor<256x512xi32>")
    c.raw('  %%srt:2 = "stablehlo.sort"(%s, %s) <{dimension = 1 : i64}> %s : '
          '(tensor<256x512xf32>, tensor<256x512xi32>) -> (tensor<256x512xf32>, tensor<256x512xi32>)'
          % (x, ids, cmp_body([f32, np.int32], "LT", ctype="TOTALORDER")))
    want = c.op("{r} = stablehlo.add %s, %s : tensor<256x512xf32>" % (io, row))
    rids = c.op("{r} = stablehlo.reverse %s, dims = [1] : tensor<256x512xi32>" % ids)
    c.expect_same("%srt#0", want, (256, 512), f32)
    c.expect_same("%srt#1", rids, (256, 512), np.int32)
    cs.append(c)
    # large general comparator: (key, tie) lexicographic over 3000 elements
    c = Case("large general comparator")
    io = c.op("{r} = stablehlo.iota dim = 0 : tensor<3000xi32>")
    key = c.op("{r} = stablehlo.divide %s, %s : tensor<3000xi32>" % (io, c.splat((3000,), np.int32, 10)))
    rkey = c.op("{r} = stablehlo.reverse %s, dims = [0] : tensor<3000xi32>" % key)
    rio = c.op("{r} = stablehlo.reverse %s, dims = [0] : tensor<3000xi32>" % io)
    c.raw('  %%srt:2 = "stablehlo.sort"(%s, %s) <{dimension = 0 : i64}> ({\n'
          '  ^bb0(%%a: tensor<i32>, %%b: tensor<i32>, %%c: tensor<i32>, %%d: tensor<i32>):\n'
          '    %%lt = stablehlo.compare LT, %%a, %%b : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
          '    %%eq = stablehlo.compare EQ, %%a, %%b : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
          '    %%lt2 = stablehlo.compare LT, %%c, %%d : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
          '    %%t = stablehlo.and %%eq, %%lt2 : tensor<i1>\n'
          '    %%p = stablehlo.or %%lt, %%t : tensor<i1>\n'
          '    stablehlo.return %%p : tensor<i1>\n'
          '  }) : (tensor<3000xi32>, tensor<3000xi32>) -> (tensor<3000xi32>, tensor<3000xi32>)'
          % (rkey, rio))
    c.expect_same("%srt#0", key, (3000,), np.int32)
    c.expect_same("%srt#1", io, (3000,), np.int32)
    cs.append(c)
    return cs


# ======================================================================== top_k

def topk_ref(x, k):
    n = x.shape[-1]
    k = min(k, n)
    rows = x.reshape(-1, n)
    vals = np.zeros((rows.shape[0], k), x.dtype)
    idxs = np.zeros((rows.shape[0], k), np.int32)
    for r in range(rows.shape[0]):
        order = sorted(range(n), key=lambda j: (-total_key(rows[r, j]), j))[:k]
        vals[r] = rows[r, order]
        idxs[r] = order
    return vals.reshape(x.shape[:-1] + (k,)), idxs.reshape(x.shape[:-1] + (k,))


def topk_case(name, x, k):
    c = Case(name)
    v, i = topk_ref(x, k)
    vx = c.const(x)
    c.raw("  %%tv, %%ti = chlo.top_k(%s, k = %d) : %s -> (%s, %s)" % (
        vx, k, ttype(x.shape, x.dtype), ttype(v.shape, v.dtype), ttype(i.shape, i.dtype)))
    c.expect("%tv", v)
    c.expect("%ti", i)
    return c


def topk_cases():
    cs = []
    x = rng.integers(-4, 5, (5, 14)).astype(np.float32)
    x[0, 3] = np.nan
    x[1, 5] = -0.0
    x[1, 6] = 0.0
    x[2, :] = 1.0
    x[3, 7] = -np.nan
    x[4, 2] = np.inf
    cs.append(topk_case("f32 k=3 (bounded insertion), NaN, zeros, ties", x, 3))
    cs.append(topk_case("f32 k=12 of 14 (full sort)", x, 12))
    cs.append(topk_case("i32 ties", rng.integers(-3, 3, (3, 9)).astype(np.int32), 4))
    cs.append(topk_case("ui16", rng.integers(0, 60000, (2, 3, 10)).astype(np.uint16), 2))
    cs.append(topk_case("bool", rng.integers(0, 2, (4, 6)).astype(np.bool_), 3))
    cs.append(topk_case("f16 k=2", rng.standard_normal((3, 20)).astype(np.float16), 2))
    cs.append(topk_case("bf16 k = n", rng.standard_normal((2, 3)).astype(BF16), 3))
    cs.append(topk_case("f64 rank 1", rng.standard_normal((40,)).astype(np.float64), 7))
    # large, parallel: ascending rows (iota) -> the last k values, descending
    for (rows, n, k) in [(300, 1000, 5), (64, 300, 50)]:
        c = Case("large top_k %dx%d k=%d" % (rows, n, k), threads=2)
        x = c.op("{r} = stablehlo.iota dim = 1 : tensor<%dx%dxf32>" % (rows, n))
        c.raw("  %%tv, %%ti = chlo.top_k(%s, k = %d) : tensor<%dx%dxf32> -> (tensor<%dx%dxf32>, tensor<%dx%dxi32>)"
              % (x, k, rows, n, rows, k, rows, k))
        t = "tensor<%dx%dxi32>" % (rows, k)
        io = c.op("{r} = stablehlo.iota dim = 1 : %s" % t)
        want_i = c.op("{r} = stablehlo.subtract %s, %s : %s" % (c.splat((rows, k), np.int32, n - 1), io, t))
        want_v = c.op("{r} = stablehlo.convert %s : (%s) -> tensor<%dx%dxf32>" % (want_i, t, rows, k))
        c.expect_same("%tv", want_v, (rows, k), np.float32)
        c.expect_same("%ti", want_i, (rows, k), np.int32)
        cs.append(c)
    return cs


# ======================================================================== reduce_window

def rw_ref(inputs, inits, wd, ws, bd, wdil, pad, body, out_dtypes=None):
    x0 = inputs[0]
    r = x0.ndim
    out_dtypes = out_dtypes or [x.dtype for x in inputs]
    oshape = []
    for d in range(r):
        dil = 0 if x0.shape[d] == 0 else (x0.shape[d] - 1) * bd[d] + 1
        padded = pad[d][0] + dil + pad[d][1]
        dw = (wd[d] - 1) * wdil[d] + 1
        oshape.append(0 if padded <= 0 or dw > padded else (padded - dw) // ws[d] + 1)
    outs = [np.zeros(oshape, dt) for dt in out_dtypes]
    for oi in np.ndindex(*oshape):
        acc = [np.asarray(i).astype(dt)[()] for i, dt in zip(inits, out_dtypes)]
        for wi in np.ndindex(*wd):
            src = []
            ok = True
            for d in range(r):
                q = oi[d] * ws[d] + wi[d] * wdil[d] - pad[d][0]
                if q < 0 or q % bd[d] != 0 or q // bd[d] >= x0.shape[d]:
                    ok = False
                    break
                src.append(q // bd[d])
            xs = [np.asarray(x[tuple(src)] if ok else i).astype(dt)[()]
                  for x, i, dt in zip(inputs, inits, out_dtypes)]
            acc = body(acc, xs)
        for o, a in zip(outs, acc):
            o[oi] = a
    return outs


def rw_case(name, inputs, inits, wd, ws, bd, wdil, pad, body_text, body, out_dtypes=None,
            omit_defaults=False, expected=None):
    c = Case(name)
    es = expected or rw_ref(inputs, inits, wd, ws, bd, wdil, pad, body, out_dtypes)
    vs = [c.const(x) for x in inputs]
    vi = [c.const(np.asarray(i)) for i in inits]
    n = len(inputs)
    res = "%%w%d" % c.n
    c.n += 1
    lhs = res if n == 1 else "%s:%d" % (res, n)
    attrs = ["window_dimensions = %s" % array_attr(wd)]
    if not (omit_defaults and all(v == 1 for v in ws)):
        attrs.append("window_strides = %s" % array_attr(ws))
    if not (omit_defaults and all(v == 1 for v in bd)):
        attrs.append("base_dilations = %s" % array_attr(bd))
    if not (omit_defaults and all(v == 1 for v in wdil)):
        attrs.append("window_dilations = %s" % array_attr(wdil))
    if inputs[0].ndim and not (omit_defaults and all(p == [0, 0] for p in pad)):
        attrs.append("padding = dense<%s> : tensor<%dx2xi64>" % (
            "[" + ", ".join("[%d, %d]" % tuple(p) for p in pad) + "]", inputs[0].ndim))
    tin = [ttype(x.shape, x.dtype) for x in inputs] + [ttype((), np.asarray(i).dtype) for i in inits]
    tout = [ttype(e.shape, e.dtype) for e in es]
    c.raw('  %s = "stablehlo.reduce_window"(%s) <{%s}> %s : (%s) -> (%s)' % (
        lhs, ", ".join(vs + vi), ", ".join(attrs), body_text, ", ".join(tin), ", ".join(tout)))
    for k, e in enumerate(es):
        c.expect(res if n == 1 else "%s#%d" % (res, k), e)
    return c


def add1(a, x):
    with np.errstate(all="ignore"):
        return [np.add(np.asarray([a[0]]), np.asarray([x[0]]))[0]]


def window_cases():
    cs = []
    f32 = np.float32
    # the spec's example
    x = np.array([[1, 2], [3, 4], [5, 6]], np.int64)
    cs.append(rw_case("spec example", [x], [np.int64(0)], [2, 1], [4, 1], [2, 1], [3, 1], [[2, 1], [0, 0]],
                      body2(np.int64, "stablehlo.add %a, %b : {t}"), add1))
    # max pool 3x3 stride 2 pad 1 on NHWC
    x = rng.standard_normal((1, 7, 7, 3)).astype(f32)
    cs.append(rw_case("max pool NHWC", [x], [f32(-np.inf)], [1, 3, 3, 1], [1, 2, 2, 1], [1, 1, 1, 1], [1, 1, 1, 1],
                      [[0, 0], [1, 1], [1, 1], [0, 0]], body2(f32, "stablehlo.maximum %a, %b : {t}"),
                      lambda a, x: [np.maximum(a[0], x[0])]))
    # sum with a non-identity init: every padding element adds the init value too
    x = rng.integers(-5, 5, (4, 5)).astype(f32)
    cs.append(rw_case("add with init 1 and padding", [x], [f32(1.0)], [2, 3], [1, 2], [1, 1], [1, 1],
                      [[1, 0], [2, 1]], body2(f32, "stablehlo.add %a, %b : {t}"), add1))
    # multiply with init 2 (integers wrap), padding
    x = rng.integers(-3, 4, (6,)).astype(np.int32)
    cs.append(rw_case("multiply with init 2", [x], [np.int32(2)], [3], [1], [1], [1], [[2, 2]],
                      body2(np.int32, "stablehlo.multiply %a, %b : {t}"),
                      lambda a, x: [np.multiply(np.asarray([a[0]]), np.asarray([x[0]]))[0]]))
    # xor with the identity and with another init
    x = rng.integers(0, 255, (3, 8)).astype(np.uint8)
    for init in (0, 5):
        cs.append(rw_case("xor init %d" % init, [x], [np.uint8(init)], [2, 3], [1, 1], [1, 1], [1, 1],
                          [[1, 1], [1, 1]], body2(np.uint8, "stablehlo.xor %a, %b : {t}"),
                          lambda a, x: [np.bitwise_xor(a[0], x[0])]))
    # bf16 min, window and base dilation on the last dim and base dilation on the first
    x = rng.standard_normal((3, 6)).astype(BF16)
    cs.append(rw_case("bf16 min, dilations", [x], [np.asarray(np.inf).astype(BF16)[()]], [2, 3], [2, 1], [3, 2], [1, 2],
                      [[1, 2], [0, 3]], body2(BF16, "stablehlo.minimum %a, %b : {t}"),
                      lambda a, x: [min(a[0], x[0])]))
    x = rng.integers(-9, 9, (5, 7)).astype(np.int16)
    cs.append(rw_case("i16 add, base dilation on the last dim, no padding", [x], [np.int16(0)], [1, 4], [1, 3],
                      [1, 2], [1, 1], [[0, 0], [0, 0]], body2(np.int16, "stablehlo.add %a, %b : {t}"), add1,
                      omit_defaults=True))
    # variadic argmax (general path), ties to the lower index
    vals = rng.integers(0, 4, (3, 8)).astype(f32)
    ids = np.tile(np.arange(8, dtype=np.int32), (3, 1))
    cs.append(rw_case("variadic argmax", [vals, ids], [f32(-np.inf), np.int32(0)], [1, 3], [1, 2], [1, 1], [1, 1],
                      [[0, 0], [1, 1]], ARGMAX_BODY, argmax))
    # promotion: i8 inputs reduced in i32
    x = np.array([[100, 100, 100], [-128, -128, 5]], np.int8)
    cs.append(rw_case("promoted i8 -> i32 add", [x], [np.int8(0)], [2, 2], [1, 1], [1, 1], [1, 1],
                      [[0, 0], [0, 0]], body2(np.int32, "stablehlo.add %a, %b : {t}"), add1,
                      out_dtypes=[np.dtype(np.int32)]))
    # subtract (general path), padding with init 10
    x = rng.integers(-9, 9, (6,)).astype(f32)
    cs.append(rw_case("subtract body", [x], [f32(10.0)], [3], [2], [1], [1], [[1, 2]],
                      body2(f32, "stablehlo.subtract %a, %b : {t}"), lambda a, x: [a[0] - x[0]]))
    # rank 0, negative padding, a cumulative sum as JAX writes it
    cs.append(rw_case("rank 0", [np.array(3.5, f32)], [f32(1.0)], [], [], [], [], [],
                      body2(f32, "stablehlo.add %a, %b : {t}"), add1))
    x = rng.integers(-9, 9, (9,)).astype(np.int64)
    cs.append(rw_case("negative padding", [x], [np.int64(0)], [2], [2], [1], [1], [[-1, -2]],
                      body2(np.int64, "stablehlo.add %a, %b : {t}"), add1))
    x = rng.integers(-9, 9, (2, 9)).astype(f32)
    cs.append(rw_case("cumsum", [x], [f32(0.0)], [1, 9], [1, 1], [1, 1], [1, 1], [[0, 0], [8, 0]],
                      body2(f32, "stablehlo.add %a, %b : {t}"), add1))
    # an empty input with padding: every window holds only the init value
    cs.append(rw_case("empty input, padded", [np.zeros((0, 3), f32)], [f32(-2.5)], [1, 2], [1, 1], [1, 1], [1, 1],
                      [[1, 1], [0, 0]], body2(f32, "stablehlo.maximum %a, %b : {t}"),
                      lambda a, x: [max(a[0], x[0])]))
    # cumulative reductions: a running combine (forward, reverse, a middle dim), and with an
    # init value that is not the identity (every padding element counts)
    x = rng.integers(-3, 4, (3, 7, 2)).astype(np.int32)
    cs.append(rw_case("reverse cumulative product on a middle dim", [x], [np.int32(1)], [1, 7, 1], [1, 1, 1],
                      [1, 1, 1], [1, 1, 1], [[0, 0], [0, 6], [0, 0]],
                      body2(np.int32, "stablehlo.multiply %a, %b : {t}"),
                      lambda a, x: [np.multiply(np.asarray([a[0]]), np.asarray([x[0]]))[0]]))
    x = rng.integers(-9, 9, (2, 6)).astype(f32)
    cs.append(rw_case("cumulative sum with init 2", [x], [f32(2.0)], [1, 6], [1, 1], [1, 1], [1, 1],
                      [[0, 0], [5, 0]], body2(f32, "stablehlo.add %a, %b : {t}"), add1))
    x = rng.standard_normal((5, 4)).astype(np.float64)
    cs.append(rw_case("cumulative max along dim 0", [x], [np.float64(-np.inf)], [5, 1], [1, 1], [1, 1], [1, 1],
                      [[4, 0], [0, 0]], body2(np.float64, "stablehlo.maximum %a, %b : {t}"),
                      lambda a, x: [max(a[0], x[0])]))
    # large: window counts of ones (3x3, pad 1) = outer product of [2, 3, ..., 3, 2]
    c = Case("large 3x3 window counts", threads=2)
    ones = c.splat((512, 512), f32, 1.0)
    zero = c.splat((), f32, 0.0)
    w = c.op('{r} = "stablehlo.reduce_window"(%s, %s) <{window_dimensions = array<i64: 3, 3>, '
             'padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>}> %s : (tensor<512x512xf32>, tensor<f32>) '
             '-> tensor<512x512xf32>' % (ones, zero, body2(f32, "stablehlo.add %a, %b : {t}")))
    cnt = np.full(512, 3, f32)
    cnt[0] = cnt[-1] = 2
    vc = c.const(cnt)
    r0 = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [0] : (tensor<512xf32>) -> tensor<512x512xf32>" % vc)
    r1 = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [1] : (tensor<512xf32>) -> tensor<512x512xf32>" % vc)
    want = c.op("{r} = stablehlo.multiply %s, %s : tensor<512x512xf32>" % (r0, r1))
    c.expect_same(w, want, (512, 512), f32)
    cs.append(c)
    # large: 2x2 stride-2 max pool of i*512+j = (2a+1)*512 + 2b+1
    c = Case("large max pool of iota", threads=2)
    i0 = c.op("{r} = stablehlo.iota dim = 0 : tensor<512x512xf32>")
    i1 = c.op("{r} = stablehlo.iota dim = 1 : tensor<512x512xf32>")
    x = c.op("{r} = stablehlo.add %s, %s : tensor<512x512xf32>" % (
        c.op("{r} = stablehlo.multiply %s, %s : tensor<512x512xf32>" % (i0, c.splat((512, 512), f32, 512.0))), i1))
    ninf = c.const(np.array(-np.inf, f32))
    w = c.op('{r} = "stablehlo.reduce_window"(%s, %s) <{window_dimensions = array<i64: 2, 2>, '
             'window_strides = array<i64: 2, 2>}> %s : (tensor<512x512xf32>, tensor<f32>) -> tensor<256x256xf32>'
             % (x, ninf, body2(f32, "stablehlo.maximum %a, %b : {t}")))
    a0 = c.op("{r} = stablehlo.iota dim = 0 : tensor<256x256xf32>")
    a1 = c.op("{r} = stablehlo.iota dim = 1 : tensor<256x256xf32>")
    two = c.splat((256, 256), f32, 2.0)
    one = c.splat((256, 256), f32, 1.0)
    ra = c.op("{r} = stablehlo.add %s, %s : tensor<256x256xf32>" % (
        c.op("{r} = stablehlo.multiply %s, %s : tensor<256x256xf32>" % (a0, two)), one))
    rb = c.op("{r} = stablehlo.add %s, %s : tensor<256x256xf32>" % (
        c.op("{r} = stablehlo.multiply %s, %s : tensor<256x256xf32>" % (a1, two)), one))
    want = c.op("{r} = stablehlo.add %s, %s : tensor<256x256xf32>" % (
        c.op("{r} = stablehlo.multiply %s, %s : tensor<256x256xf32>" % (ra, c.splat((256, 256), f32, 512.0))), rb))
    c.expect_same(w, want, (256, 256), f32)
    cs.append(c)
    return cs


# ======================================================================== select_and_scatter, map

def sas_ref(x, src, init, wd, ws, pad, select, scatter, out_dtype=None):
    out_dtype = out_dtype or x.dtype
    res = np.full(x.shape, np.asarray(init).astype(out_dtype))
    for si in np.ndindex(*src.shape):
        sel = None
        for wi in np.ndindex(*wd):
            pos = tuple(si[d] * ws[d] + wi[d] - pad[d][0] for d in range(x.ndim))
            if not all(0 <= pos[d] < x.shape[d] for d in range(x.ndim)):
                continue
            if sel is None or not select(x[sel], x[pos]):
                sel = pos
        if sel is not None:
            res[sel] = scatter(res[sel], np.asarray(src[si]).astype(out_dtype)[()])
    return res


def sas_case(name, x, src, init, wd, ws, pad, sel_text, sc_text, select, scatter):
    c = Case(name)
    e = sas_ref(x, src, init, wd, ws, pad, select, scatter)
    vx, vs, vi = c.const(x), c.const(src), c.const(np.asarray(init))
    r = c.op('{r} = "stablehlo.select_and_scatter"(%s, %s, %s) <{window_dimensions = %s, window_strides = %s, '
             'padding = dense<%s> : tensor<%dx2xi64>}> (%s, %s) : (%s, %s, %s) -> %s' % (
                 vx, vs, vi, array_attr(wd), array_attr(ws),
                 "[" + ", ".join("[%d, %d]" % tuple(p) for p in pad) + "]", x.ndim, sel_text[1:-1],
                 sc_text[1:-1],
                 ttype(x.shape, x.dtype), ttype(src.shape, src.dtype), ttype((), np.asarray(init).dtype),
                 ttype(e.shape, e.dtype)))
    c.expect(r, e)
    return c


def sel_body(dt, text):
    t = ttype((), dt)
    return ("({\n  ^bb0(%%a: %s, %%b: %s):\n%s\n    stablehlo.return %%p : tensor<i1>\n  })"
            % (t, t, text.replace("{t}", t)))


def sas_map_cases():
    cs = []
    f32 = np.float32
    # the spec's example
    x = np.array([[1, 5], [2, 5], [3, 6], [4, 4]], np.int64)
    src = np.array([[5, 6], [7, 8]], np.int64)
    cs.append(sas_case("spec example", x, src, np.int64(0), [3, 1], [2, 1], [[1, 1], [0, 0]],
                       sel_body(np.int64, "    %p = stablehlo.compare GE, %a, %b : ({t}, {t}) -> tensor<i1>"),
                       body2(np.int64, "stablehlo.add %a, %b : {t}"), lambda a, b: a >= b, lambda a, b: a + b))
    # LE (min) with overlapping windows, padding and ties (a tie keeps the earlier element)
    x = rng.integers(0, 4, (5, 6)).astype(f32)
    src = rng.integers(1, 9, (5, 6)).astype(f32)
    cs.append(sas_case("LE, overlapping windows, ties", x, src, f32(0.5), [3, 3], [1, 1], [[1, 1], [1, 1]],
                       sel_body(f32, "    %p = stablehlo.compare LE, %a, %b : ({t}, {t}) -> tensor<i1>"),
                       body2(f32, "stablehlo.add %a, %b : {t}"), lambda a, b: a <= b, lambda a, b: a + b))
    # general select (not(b > a)) and general scatter (subtract)
    x = rng.integers(0, 5, (7,)).astype(np.int32)
    src = rng.integers(1, 9, (3,)).astype(np.int32)
    cs.append(sas_case("general select and scatter", x, src, np.int32(100), [3], [2], [[0, 0]],
                       sel_body(np.int32, "    %g = stablehlo.compare GT, %b, %a : ({t}, {t}) -> tensor<i1>\n"
                                          "    %p = stablehlo.not %g : tensor<i1>"),
                       body2(np.int32, "stablehlo.subtract %a, %b : {t}"),
                       lambda a, b: not (b > a), lambda a, b: a - b))
    # GT on bf16 with strides larger than the window (gaps), windows over padding only
    x = rng.standard_normal((2, 9)).astype(BF16)
    src = rng.standard_normal((2, 5)).astype(BF16)
    cs.append(sas_case("bf16 GT with gaps and padding-only windows", x, src, np.asarray(0.0).astype(BF16)[()], [1, 2], [1, 3],
                       [[0, 0], [2, 3]],
                       sel_body(BF16, "    %p = stablehlo.compare GT, %a, %b : ({t}, {t}) -> tensor<i1>"),
                       body2(BF16, "stablehlo.add %a, %b : {t}"), lambda a, b: float(a) > float(b),
                       lambda a, b: (np.float32(a) + np.float32(b)).astype(BF16)))
    # map
    a = rng.standard_normal((3, 4)).astype(f32)
    b = rng.standard_normal((3, 4)).astype(f32)
    c = Case("map add")
    r = c.op('{r} = "stablehlo.map"(%s, %s) <{dimensions = array<i64: 0, 1>}> %s : '
             '(tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>' % (
                 c.const(a), c.const(b), body2(f32, "stablehlo.add %a, %b : {t}")))
    c.expect(r, a + b)
    cs.append(c)
    p = rng.integers(-50, 50, (2, 5)).astype(np.int32)
    q = rng.integers(-50, 50, (2, 5)).astype(np.int32)
    s = rng.integers(-50, 50, (2, 5)).astype(np.int32)
    c = Case("map a*b+c > 0 (3 inputs, i1 result)")
    r = c.op('{r} = "stablehlo.map"(%s, %s, %s) <{dimensions = array<i64: 0, 1>}> ({\n'
             '  ^bb0(%%a: tensor<i32>, %%b: tensor<i32>, %%c: tensor<i32>):\n'
             '    %%m = stablehlo.multiply %%a, %%b : tensor<i32>\n'
             '    %%s = stablehlo.add %%m, %%c : tensor<i32>\n'
             '    %%z = stablehlo.constant dense<0> : tensor<i32>\n'
             '    %%p = stablehlo.compare GT, %%s, %%z : (tensor<i32>, tensor<i32>) -> tensor<i1>\n'
             '    stablehlo.return %%p : tensor<i1>\n'
             '  }) : (tensor<2x5xi32>, tensor<2x5xi32>, tensor<2x5xi32>) -> tensor<2x5xi1>' % (
                 c.const(p), c.const(q), c.const(s)))
    c.expect(r, p * q + s > 0)
    cs.append(c)
    return cs


# ======================================================================== cumulative scans, any body

def scan_window(x, axis, rev):
    """window dims, padding of a cumulative reduction of x along axis (rev: from the end)"""
    n = x.shape[axis]
    wd = [n if d == axis else 1 for d in range(x.ndim)]
    pad = [([0, n - 1] if rev else [n - 1, 0]) if d == axis else [0, 0] for d in range(x.ndim)]
    return wd, pad


def scan_ref(inputs, inits, axis, rev, body, out_dtypes):
    """out[i] = body(out[i-1], x[i]) from out[-1] = init along axis (rev: from the end), which
    is the window's fold when body(init, init) == init (a reversed window's suffix folded from
    its end, as XLA's scans do)"""
    x0 = inputs[0]
    outs = [np.zeros(x0.shape, dt) for dt in out_dtypes]
    n = x0.shape[axis]
    for line in np.ndindex(*[1 if d == axis else s for d, s in enumerate(x0.shape)]):
        acc = [np.asarray(i).astype(dt)[()] for i, dt in zip(inits, out_dtypes)]
        for j in range(n):
            idx = tuple((n - 1 - j if rev else j) if d == axis else line[d] for d in range(x0.ndim))
            acc = body(acc, [np.asarray(x[idx]).astype(dt)[()] for x, dt in zip(inputs, out_dtypes)])
            for o, a in zip(outs, acc):
                o[idx] = a
    return outs


def scan_case(name, inputs, inits, axis, rev, body_text, body, out_dtypes=None, fold=True):
    """fold: expect scan_ref's running fold, else the window's (rw_ref)"""
    wd, pad = scan_window(inputs[0], axis, rev)
    one = [1] * inputs[0].ndim
    es = scan_ref(inputs, inits, axis, rev, body, out_dtypes or [x.dtype for x in inputs]) if fold else None
    return rw_case(name, inputs, inits, wd, one, one, one, pad, body_text, body, out_dtypes, expected=es)


def decay_body(dt):
    """r = a * 0.5 + b: exact in numpy's arithmetic of dt, a splat constant in the body"""
    t = ttype((), dt)
    return ("({\n  ^bb0(%%a: %s, %%b: %s):\n    %%h = stablehlo.constant dense<5.000000e-01> : %s\n"
            "    %%m = stablehlo.multiply %%a, %%h : %s\n    %%r = stablehlo.add %%m, %%b : %s\n"
            "    stablehlo.return %%r : %s\n  })" % (t, t, t, t, t, t))


def decay(dt):
    return lambda a, x: [dt(dt(a[0] * dt(0.5)) + dt(x[0]))]


def logaddexp_body(dt):
    """lax.cumlogsumexp's body, as JAX writes it"""
    t = ttype((), dt)
    i1 = ttype((), np.bool_)
    return ("({\n  ^bb0(%%a: %s, %%b: %s):\n"
            "    %%1 = stablehlo.maximum %%a, %%b : {t}\n"
            "    %%2 = stablehlo.subtract %%a, %%b : {t}\n"
            "    %%3 = stablehlo.compare NE, %%2, %%2, FLOAT : ({t}, {t}) -> %s\n"
            "    %%4 = stablehlo.add %%a, %%b : {t}\n"
            "    %%5 = stablehlo.abs %%2 : {t}\n"
            "    %%6 = stablehlo.negate %%5 : {t}\n"
            "    %%7 = stablehlo.exponential %%6 : {t}\n"
            "    %%8 = stablehlo.log_plus_one %%7 : {t}\n"
            "    %%9 = stablehlo.add %%1, %%8 : {t}\n"
            "    %%10 = stablehlo.select %%3, %%4, %%9 : %s, {t}\n"
            "    stablehlo.return %%10 : {t}\n  })" % (t, t, i1, i1)).replace("{t}", t)


def lanes_vs_lines_case(name, x, axis, rev, dt):
    """A cumulative logaddexp of x (many lines: folded many at once) against the same scan of a
    few lines at a time (fewer than 8: folded one element at a time), bit for bit: each slice
    of lines is scanned on its own and compared with that slice of the whole scan."""
    c = Case(name)
    t = ttype(x.shape, x.dtype)
    vx = c.const(x)
    ninf = c.const(np.array(-np.inf, dt))
    body = logaddexp_body(dt)

    def scan(v, shape):
        wd, pad = scan_window(np.zeros(shape), axis, rev)
        tt = ttype(shape, dt)
        return c.op('{r} = "stablehlo.reduce_window"(%s, %s) <{window_dimensions = %s, padding = '
                    'dense<%s> : tensor<%dx2xi64>}> %s : (%s, %s) -> %s' % (
                        v, ninf, array_attr(wd), "[" + ", ".join("[%d, %d]" % tuple(p) for p in pad) + "]",
                        len(shape), body, tt, ttype((), dt), tt))
    whole = scan(vx, x.shape)
    other = [d for d in range(x.ndim) if d != axis][-1]  # slice the lines along this dim
    m = x.shape[other]
    for lo in (0, m // 2 - 3, m - 7):
        start = [lo if d == other else 0 for d in range(x.ndim)]
        limit = [lo + 7 if d == other else x.shape[d] for d in range(x.ndim)]
        shape = tuple(b - a for a, b in zip(start, limit))
        ts = ttype(shape, dt)
        sl = "{r} = stablehlo.slice %%s [%s] : (%s) -> %s" % (
            ", ".join("%d:%d" % (a, b) for a, b in zip(start, limit)), t, ts)
        part = scan(c.op(sl % vx), shape)
        c.expect_same(c.op(sl % whole), part, shape, dt)
    return c


def scan_body_cases():
    """Cumulative reductions whose body is no single combiner: with an elementwise body, lines
    are folded 64 at a time (contiguous when the scan dim is not the innermost, gathered
    otherwise; line counts not multiples of 64), else one element at a time."""
    cs = []
    f32, f64 = np.float32, np.float64
    x = rng.integers(-8, 8, (5, 130)).astype(f32)
    cs.append(scan_case("decaying sum along dim 0, 130 lines", [x], [f32(0)], 0, False, decay_body(f32), decay(f32)))
    x = rng.integers(-8, 8, (67, 6)).astype(f64)
    cs.append(scan_case("reverse f64 decaying sum along dim 1, 67 lines", [x], [f64(0)], 1, True,
                        decay_body(f64), decay(f64)))
    x = rng.integers(-8, 8, (3, 6, 45)).astype(f32)
    cs.append(scan_case("decaying sum along a middle dim, 135 lines", [x], [f32(0)], 1, False,
                        decay_body(f32), decay(f32)))
    x = rng.integers(-8, 8, (4, 9, 5)).astype(f32)
    cs.append(scan_case("reverse decaying sum along a middle dim, 20 lines", [x], [f32(0)], 1, True,
                        decay_body(f32), decay(f32)))
    # init not a fixed point of the body (0.5 * 1 + 1 != 1): the window's fold, padding counted
    x = rng.integers(-8, 8, (4, 20)).astype(f32)
    cs.append(scan_case("decaying sum with init 1 (no running fold)", [x], [f32(1)], 0, False,
                        decay_body(f32), decay(f32), fold=False))
    # bf16 inputs and init, an f32 body
    x = rng.standard_normal((70, 5)).astype(BF16)
    cs.append(scan_case("bf16 inputs, f32 decaying sum along dim 1", [x], [np.asarray(0).astype(BF16)[()]], 1, False,
                        decay_body(f32), decay(f32), out_dtypes=[np.dtype(f32)]))
    x = rng.standard_normal((6, 80)).astype(BF16)
    cs.append(scan_case("bf16 inputs, f32 decaying sum along dim 0", [x], [np.asarray(0).astype(BF16)[()]], 0, True,
                        decay_body(f32), decay(f32), out_dtypes=[np.dtype(f32)]))
    # cummax with its index (ties: the lower index), forward along dim 0 and reversed along dim 1
    vals = rng.integers(0, 4, (7, 75)).astype(f32)
    ids = np.broadcast_to(np.arange(7, dtype=np.int32)[:, None], vals.shape).copy()
    cs.append(scan_case("cummax with index along dim 0", [vals, ids], [f32(-np.inf), np.int32(0)], 0, False,
                        ARGMAX_BODY, argmax))
    vals = rng.integers(0, 4, (70, 6)).astype(f32)
    ids = np.broadcast_to(np.arange(6, dtype=np.int32)[None, :], vals.shape).copy()
    cs.append(scan_case("reverse cummax with index along dim 1", [vals, ids], [f32(-np.inf), np.int32(0)], 1, True,
                        ARGMAX_BODY, argmax))
    # cumlogsumexp: the lanes' exp / log1p give the one-element fold's bits
    x = rng.standard_normal((9, 70)).astype(f32) * 4
    cs.append(lanes_vs_lines_case("cumlogsumexp along dim 0, lanes vs one line at a time", x, 0, False, f32))
    x = rng.standard_normal((70, 9)).astype(f32) * 4
    x[3, 2] = -np.inf
    x[5, 4] = np.inf
    cs.append(lanes_vs_lines_case("reverse cumlogsumexp along dim 1, lanes vs one line at a time", x, 1, True, f32))
    x = rng.standard_normal((3, 8, 30)).astype(f64) * 4
    cs.append(lanes_vs_lines_case("f64 cumlogsumexp along a middle dim, lanes vs one line at a time", x, 1, False,
                                  f64))
    return cs


def main():
    write(os.path.join(TESTS, "ops_sort", "cases.mlir"), sort_cases() + topk_cases(),
          "sort and chlo.top_k cases.")
    write(os.path.join(TESTS, "ops_window", "cases.mlir"), window_cases() + sas_map_cases() + scan_body_cases(),
          "reduce_window, select_and_scatter and map cases.")
