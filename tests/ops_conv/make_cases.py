#!/usr/bin/env python3
"""Writes tests/ops_conv/cases/*.mlir: convolution programs whose expected results are computed
here with numpy, straight from the StableHLO spec's definition (pad and dilate the lhs, take
strided, dilated, optionally reversed windows, dot each with the kernel; feature groups split lhs
features and kernel outputs, batch groups split lhs batches and kernel outputs) and, for the
quantized cases, from the reference interpreter's lowering of quantized convolution (integer
form or dequantize-convolve-quantize). Nothing here runs cjrt.

Values are small integers wherever the element type allows, so that every sum is exact in f32
and the results must match bit for bit whatever order an implementation sums in.

usage: python3 tests/ops_conv/make_cases.py   (needs numpy and ml_dtypes)
"""
import os
import sys

import ml_dtypes
import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from casegen import write_case_files  # noqa: E402
OUT = os.path.join(HERE, "cases")
rng = np.random.default_rng(20260822)

MLIR = {"f32": np.float32, "f64": np.float64, "bf16": ml_dtypes.bfloat16, "f16": np.float16,
        "i8": np.int8, "i16": np.int16, "i32": np.int32, "i64": np.int64, "ui8": np.uint8,
        "ui32": np.uint32, "i1": np.bool_, "complex<f32>": np.complex64,
        "complex<f64>": np.complex128}


def ttype(shape, et):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def dense(a, et):
    a = np.ascontiguousarray(a.astype(MLIR[et]))
    if et == "i1":
        flat = ", ".join("true" if v else "false" for v in a.reshape(-1))
        if a.ndim == 0:
            return f"dense<{flat}>"
        # nested literal
        def nest(x):
            if x.ndim == 1:
                return "[" + ", ".join("true" if v else "false" for v in x) + "]"
            return "[" + ", ".join(nest(y) for y in x) + "]"
        return "dense<" + nest(a) + ">" if a.size else "dense<>"
    if a.size == 0:
        return "dense<>"
    return 'dense<"0x' + a.tobytes().hex().upper() + '">'


def dn_string(rank, ib, ifd, isp, kif, kof, ksp, ob, ofd, osp):
    def one(n, b, f, sp, bl, fl):
        s = [""] * n
        s[b] = bl
        s[f] = fl
        for i, d in enumerate(sp):
            s[d] = str(i)
        return "[" + ", ".join(s) + "]"
    return (one(rank, ib, ifd, isp, "b", "f") + "x" + one(rank, kif, kof, ksp, "i", "o") + "->" +
            one(rank, ob, ofd, osp, "b", "f"))


def conv_ref(lhs, rhs, c, acc):
    """The spec's convolution in exact arithmetic (acc: a numpy dtype wide enough)."""
    ns = lhs.ndim - 2
    L = np.transpose(lhs, [c["ib"], c["ifd"]] + c["is"]).astype(acc)
    R = np.transpose(rhs, [c["kof"], c["kif"]] + c["ks"]).astype(acc)
    N, C = L.shape[:2]
    O, I = R.shape[:2]
    S, Kd = L.shape[2:], R.shape[2:]
    # lhs dilation
    dil = [(s - 1) * d + 1 if s > 0 else 0 for s, d in zip(S, c["ldil"])]
    D = np.zeros((N, C) + tuple(dil), dtype=acc)
    D[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in c["ldil"])] = L
    # padding (negative: cropping)
    for i, (lo, hi) in enumerate(c["pad"]):
        ax = 2 + i
        if lo < 0:
            D = np.take(D, range(-lo, D.shape[ax]), axis=ax)
        elif lo > 0:
            z = list(D.shape); z[ax] = lo
            D = np.concatenate([np.zeros(z, acc), D], axis=ax)
        if hi < 0:
            D = np.take(D, range(0, D.shape[ax] + hi), axis=ax)
        elif hi > 0:
            z = list(D.shape); z[ax] = hi
            D = np.concatenate([D, np.zeros(z, acc)], axis=ax)
    # window reversal
    for i, r in enumerate(c["rev"]):
        if r:
            R = np.flip(R, axis=2 + i)
    wk = [(k - 1) * d + 1 if k > 0 else 0 for k, d in zip(Kd, c["rdil"])]
    osz = [(p - w) // s + 1 if p >= w else 0 for p, w, s in zip(D.shape[2:], wk, c["stride"])]
    fgc, bgc = c["fgc"], c["bgc"]
    G = max(fgc, bgc)
    Nout = N // bgc
    Og = O // G
    res = np.zeros((Nout, O) + tuple(osz), dtype=acc)
    for g in range(G):
        if fgc > 1:
            Lg = D[:, g * I:(g + 1) * I]
        elif bgc > 1:
            Lg = D[g * Nout:(g + 1) * Nout]
        else:
            Lg = D
        Rg = R[g * Og:(g + 1) * Og]
        for pos in np.ndindex(*osz):
            sl = tuple(slice(p * s, p * s + w, d) for p, s, w, d in
                       zip(pos, c["stride"], wk, c["rdil"]))
            win = Lg[(slice(None), slice(None)) + sl]  # [Nout, I, K...]
            res[(slice(None), slice(g * Og, (g + 1) * Og)) + pos] = np.tensordot(
                win, Rg, axes=(list(range(1, 2 + ns)), [1] + list(range(2, 2 + ns))))
    return res  # [Nout, O, S...]


def to_layout(res, c):
    ns = res.ndim - 2
    src = [0] * (2 + ns)  # src[d] = axis of res holding result dim d
    src[c["ob"]] = 0
    src[c["ofd"]] = 1
    for i, d in enumerate(c["os"]):
        src[d] = 2 + i
    return np.transpose(res, src)


def conv_ref_layout(lhs, rhs, c, acc):
    ns = lhs.ndim - 2
    L = np.transpose(lhs, [c["ib"], c["ifd"]] + c["is"]).astype(acc)
    R = np.transpose(rhs, [c["kof"], c["kif"]] + c["ks"]).astype(acc)
    cc = dict(c)
    cc.update(ib=0, ifd=1, kof=0, kif=1, ob=0, ofd=1)
    cc["is"] = list(range(2, 2 + ns)); cc["ks"] = list(range(2, 2 + ns)); cc["os"] = list(range(2, 2 + ns))
    res = conv_ref(L, R, cc, acc)  # canonical [N, O, S...]
    return to_layout(res, c)


def out_shape(lhs_shape, rhs_shape, c):
    ns = len(lhs_shape) - 2
    sp = []
    for i in range(ns):
        s = lhs_shape[c["is"][i]]
        k = rhs_shape[c["ks"][i]]
        dil = (s - 1) * c["ldil"][i] + 1 if s > 0 else 0
        p = c["pad"][i][0] + dil + c["pad"][i][1]
        w = (k - 1) * c["rdil"][i] + 1 if k > 0 else 0
        sp.append((p - w) // c["stride"][i] + 1 if p >= w else 0)
    shape = [0] * (2 + ns)
    shape[c["ob"]] = lhs_shape[c["ib"]] // c["bgc"]
    shape[c["ofd"]] = rhs_shape[c["kof"]]
    for i, d in enumerate(c["os"]):
        shape[d] = sp[i]
    return shape


def layout(rank, rng_, kind):
    """Random or named dimension numbers."""
    ns = rank - 2
    if kind == "nhwc":
        return dict(ib=0, ifd=rank - 1, is_=list(range(1, rank - 1)), kif=rank - 2, kof=rank - 1,
                    ks=list(range(ns)), ob=0, ofd=rank - 1, os_=list(range(1, rank - 1)))
    if kind == "nchw":
        return dict(ib=0, ifd=1, is_=list(range(2, rank)), kif=1, kof=0, ks=list(range(2, rank)),
                    ob=0, ofd=1, os_=list(range(2, rank)))
    p1, p2, p3 = (list(rng_.permutation(rank)) for _ in range(3))
    return dict(ib=int(p1[0]), ifd=int(p1[1]), is_=[int(x) for x in p1[2:]], kif=int(p2[0]),
                kof=int(p2[1]), ks=[int(x) for x in p2[2:]], ob=int(p3[0]), ofd=int(p3[1]),
                os_=[int(x) for x in p3[2:]])


def make_conf(rank, lay, stride=None, pad=None, ldil=None, rdil=None, rev=None, fgc=1, bgc=1):
    ns = rank - 2
    c = dict(ib=lay["ib"], ifd=lay["ifd"], kif=lay["kif"], kof=lay["kof"], ob=lay["ob"],
             ofd=lay["ofd"], fgc=fgc, bgc=bgc)
    c["is"], c["ks"], c["os"] = lay["is_"], lay["ks"], lay["os_"]
    c["stride"] = stride or [1] * ns
    c["pad"] = pad or [[0, 0]] * ns
    c["ldil"] = ldil or [1] * ns
    c["rdil"] = rdil or [1] * ns
    c["rev"] = rev or [False] * ns
    return c


def shapes_for(c, N, C, O, S, K):
    rank = len(S) + 2
    ls = [0] * rank
    ls[c["ib"]] = N
    ls[c["ifd"]] = C
    for i, d in enumerate(c["is"]):
        ls[d] = S[i]
    rs = [0] * rank
    rs[c["kif"]] = C // c["fgc"]
    rs[c["kof"]] = O
    for i, d in enumerate(c["ks"]):
        rs[d] = K[i]
    return ls, rs


def window_text(c):
    parts = []
    ns = len(c["stride"])
    if any(s != 1 for s in c["stride"]):
        parts.append("stride = [" + ", ".join(map(str, c["stride"])) + "]")
    if any(p != [0, 0] for p in c["pad"]):
        parts.append("pad = [" + ", ".join(f"[{a}, {b}]" for a, b in c["pad"]) + "]")
    if any(d != 1 for d in c["ldil"]):
        parts.append("lhs_dilate = [" + ", ".join(map(str, c["ldil"])) + "]")
    if any(d != 1 for d in c["rdil"]):
        parts.append("rhs_dilate = [" + ", ".join(map(str, c["rdil"])) + "]")
    if any(c["rev"]) and ns:
        parts.append("reverse = [" + ", ".join("true" if r else "false" for r in c["rev"]) + "]")
    return "window = {" + ", ".join(parts) + "}"


def conv_text(c, lhs_shape, rhs_shape, oshape, let, ret, oet, generic=False, precision=None,
              lname="%lhs", rname="%rhs"):
    rank = len(lhs_shape)
    dn = dn_string(rank, c["ib"], c["ifd"], c["is"], c["kif"], c["kof"], c["ks"], c["ob"], c["ofd"], c["os"])
    tys = f"({ttype(lhs_shape, let)}, {ttype(rhs_shape, ret)}) -> {ttype(oshape, oet)}"
    if generic:
        ns = rank - 2
        pad = ", ".join(f"[{a}, {b}]" for a, b in c["pad"])
        attrs = [f"batch_group_count = {c['bgc']} : i64",
                 f"dimension_numbers = #stablehlo.conv<{dn}>",
                 f"feature_group_count = {c['fgc']} : i64"]
        if ns:
            attrs += [f"lhs_dilation = array<i64: {', '.join(map(str, c['ldil']))}>",
                      f"padding = dense<[{pad}]> : tensor<{ns}x2xi64>",
                      f"rhs_dilation = array<i64: {', '.join(map(str, c['rdil']))}>",
                      "window_reversal = array<i1: " + ", ".join("true" if r else "false" for r in c["rev"]) + ">",
                      f"window_strides = array<i64: {', '.join(map(str, c['stride']))}>"]
        return (f'"stablehlo.convolution"({lname}, {rname}) {{' + ", ".join(attrs) + "} : " + tys)
    extra = f"batch_group_count = {c['bgc']} : i64, feature_group_count = {c['fgc']} : i64"
    if precision:
        extra += f", precision_config = [#stablehlo<precision {precision}>, #stablehlo<precision {precision}>]"
    return (f"stablehlo.convolution({lname}, {rname}) dim_numbers = {dn}, {window_text(c)} {{{extra}}} : {tys}")


CASES = []


def emit(name, body):
    CASES.append((name, body))


def formula(shape, a, b, m, c):
    """((i * a + b) mod m) - c over the flattened index i: numpy values and the StableHLO that
    computes them (so that big inputs need no literal data)."""
    n = int(np.prod(shape))
    vals = (((np.arange(n, dtype=np.int64) * a + b) % m) - c).reshape(shape)
    return vals


def formula_ops(var, shape, et, a, b, m, c):
    n = int(np.prod(shape))
    t1 = f"tensor<{n}xi32>"
    ops = [f"  {var}_i = stablehlo.iota dim = 0 : {t1}",
           f"  {var}_a = stablehlo.constant dense<{a}> : {t1}",
           f"  {var}_b = stablehlo.constant dense<{b}> : {t1}",
           f"  {var}_m = stablehlo.constant dense<{m}> : {t1}",
           f"  {var}_c = stablehlo.constant dense<{c}> : {t1}",
           f"  {var}_1 = stablehlo.multiply {var}_i, {var}_a : {t1}",
           f"  {var}_2 = stablehlo.add {var}_1, {var}_b : {t1}",
           f"  {var}_3 = stablehlo.remainder {var}_2, {var}_m : {t1}",
           f"  {var}_4 = stablehlo.subtract {var}_3, {var}_c : {t1}",
           f"  {var}_5 = stablehlo.convert {var}_4 : ({t1}) -> tensor<{n}x{et}>",
           f"  {var} = stablehlo.reshape {var}_5 : (tensor<{n}x{et}>) -> {ttype(shape, et)}"]
    return ops


def program(name, lhs, rhs, let, ret, oet, c, expect, check="eq", tol=None, runtime_rhs=False,
            generic=False, precision=None, lhs_type=None, rhs_type=None, out_type=None, gen=None):
    oshape = list(expect.shape)
    lt = lhs_type or ttype(lhs.shape, let)
    rt = rhs_type or ttype(rhs.shape, ret)
    lines = [f"func.func @{name}() {{"]
    if gen:  # inputs computed by the program from formulas
        lines += formula_ops("%lhs", list(lhs.shape), let, *gen[0])
        lines += formula_ops("%rhs0", list(rhs.shape), ret, *gen[1])
    else:
        lines += [f"  %lhs = stablehlo.constant {dense(lhs, let)} : {ttype(lhs.shape, let)}",
                  f"  %rhs0 = stablehlo.constant {dense(rhs, ret)} : {ttype(rhs.shape, ret)}"]
    if runtime_rhs:
        lines.append(f"  %rhs = stablehlo.optimization_barrier %rhs0 : {ttype(rhs.shape, ret)}")
    rname = "%rhs" if runtime_rhs else "%rhs0"
    lines.append("  %r = " + conv_text(c, list(lhs.shape), list(rhs.shape), oshape, let, ret, oet,
                                        generic=generic, precision=precision, rname=rname))
    if check == "eq":
        lines.append(f"  check.expect_eq_const %r, {dense(expect, oet)} : {ttype(oshape, oet)}")
    else:
        lines.append(f"  check.expect_almost_eq_const %r, {dense(expect, oet)} : {ttype(oshape, oet)} "
                     f"{{tolerance = {tol} : f64}}")
    lines += ["  func.return", "}"]
    emit(name, "\n".join(lines) + "\n")


def ints(shape, lo, hi, dt=np.float32):
    return rng.integers(lo, hi + 1, size=shape).astype(dt)


def case(name, rank, N, C, O, S, K, lay="nhwc", et="f32", oet=None, lo=-3, hi=3, check="eq",
         tol=None, **kw):
    oet = oet or et
    runtime_rhs = kw.pop("runtime_rhs", False)
    gen = kw.pop("gen", None)
    generic = kw.pop("generic", False)
    precision = kw.pop("precision", None)
    laydict = layout(rank, rng, lay) if isinstance(lay, str) else lay
    c = make_conf(rank, laydict, **kw)
    ls, rs = shapes_for(c, N, C, O, S, K)
    npdt = MLIR[et]
    if et == "i1":
        lhs = rng.integers(0, 2, size=ls).astype(bool)
        rhs = rng.integers(0, 2, size=rs).astype(bool)
        exp = conv_ref_layout(lhs.astype(np.int64), rhs.astype(np.int64), c, np.int64) != 0
    elif et.startswith("complex"):
        lhs = (ints(ls, lo, hi, np.float64) + 1j * ints(ls, lo, hi, np.float64)).astype(npdt)
        rhs = (ints(rs, lo, hi, np.float64) + 1j * ints(rs, lo, hi, np.float64)).astype(npdt)
        exp = conv_ref_layout(lhs, rhs, c, np.complex128)
    elif et in ("f64",):
        lhs = rng.standard_normal(ls)
        rhs = rng.standard_normal(rs)
        exp = conv_ref_layout(lhs, rhs, c, np.float64)
    else:
        if gen:
            lhs = formula(ls, *gen[0]).astype(np.float64)
            rhs = formula(rs, *gen[1]).astype(np.float64)
        else:
            lhs = ints(ls, lo, hi, np.float64)
            rhs = ints(rs, lo, hi, np.float64)
        exp = conv_ref_layout(lhs, rhs, c, np.float64 if et[0] in "fb" else np.int64)
        lhs = lhs.astype(npdt) if et[0] in "fb" else lhs.astype(np.int64).astype(npdt)
        rhs = rhs.astype(npdt) if et[0] in "fb" else rhs.astype(np.int64).astype(npdt)
        if oet[0] in "iu":  # integer result: wraps modulo 2^bits
            bits = int(oet.lstrip("ui"))
            e = exp.astype(np.int64).astype(np.uint64)
            if bits < 64:
                e = e & np.uint64((1 << bits) - 1)
            exp = e.astype(np.dtype(f"uint{bits}")).view(MLIR[oet])
    assert list(exp.shape) == out_shape(ls, rs, c), (name, exp.shape, out_shape(ls, rs, c))
    program(name, lhs, rhs, et, et, oet, c, np.asarray(exp).astype(MLIR[oet]), check=check, tol=tol,
            runtime_rhs=runtime_rhs, generic=generic, precision=precision, gen=gen)


# ---------------------------------------------------------------- small cases (generic path)
case("basic_nhwc", 4, 1, 2, 3, [5, 5], [3, 3])
case("basic_nchw", 4, 2, 3, 2, [4, 6], [2, 3], lay="nchw")
case("one_d", 3, 2, 3, 4, [9], [3], pad=[[1, 2]])
case("no_spatial", 2, 3, 5, 4, [], [])
case("three_d", 5, 1, 2, 3, [4, 3, 5], [2, 2, 3], pad=[[1, 0], [0, 1], [1, 1]])
case("stride", 4, 2, 3, 3, [9, 10], [3, 2], stride=[2, 3])
case("pad_neg", 4, 1, 2, 2, [8, 8], [3, 3], pad=[[-2, 1], [2, -3]])
case("lhs_dilation", 4, 1, 1, 2, [4, 4], [3, 3], ldil=[2, 3], pad=[[1, 1], [2, 0]])
case("rhs_dilation", 4, 2, 2, 3, [9, 10], [3, 2], rdil=[2, 3])
case("reversal", 4, 1, 2, 3, [5, 6], [3, 4], rev=[True, False], pad=[[1, 1], [0, 2]])
case("reversal_both", 3, 2, 2, 2, [7], [4], rev=[True], stride=[2], rdil=[2])
case("everything", 4, 2, 4, 6, [7, 8], [3, 2], stride=[2, 1], pad=[[2, -1], [1, 3]],
     ldil=[2, 1], rdil=[1, 2], rev=[False, True], fgc=2)
case("feature_groups", 4, 2, 6, 6, [5, 5], [3, 3], fgc=3)
case("depthwise", 4, 2, 4, 8, [6, 6], [3, 3], fgc=4, pad=[[1, 1], [1, 1]])
case("depthwise_m1_nhwc", 4, 2, 16, 16, [9, 8], [3, 3], fgc=16, pad=[[1, 1], [1, 1]])
case("depthwise_m3_nchw", 4, 1, 5, 15, [7, 6], [3, 2], lay="nchw", fgc=5, stride=[2, 1], rdil=[1, 2])
case("depthwise_runtime_rhs_bf16", 4, 1, 8, 8, [6, 6], [3, 3], et="bf16", fgc=8, runtime_rhs=True,
     lo=-2, hi=2)
case("batch_groups", 4, 4, 3, 6, [5, 5], [2, 2], bgc=2)
case("batch_groups_all", 4, 6, 2, 6, [4, 5], [2, 3], bgc=6)
case("random_layout_a", 4, 2, 3, 4, [6, 5], [2, 3], lay="random", stride=[1, 2], pad=[[1, 0], [0, 1]])
case("random_layout_b", 5, 2, 2, 3, [4, 3, 4], [2, 2, 2], lay="random", rdil=[1, 2, 1])
case("random_layout_c", 4, 3, 4, 4, [5, 5], [3, 3], lay="random", fgc=2, rev=[True, True])
case("random_layout_d", 4, 4, 2, 4, [5, 4], [2, 2], lay="random", bgc=2, ldil=[1, 2])
case("window_bigger_than_input", 4, 1, 1, 1, [2, 2], [3, 3], pad=[[0, 0], [0, 0]])
case("empty_kernel_spatial", 3, 1, 2, 3, [4], [0], pad=[[0, 0]])
case("generic_form", 4, 1, 2, 3, [5, 6], [2, 3], stride=[1, 2], pad=[[1, 1], [0, 1]],
     rev=[False, True], generic=True)
case("f64", 4, 2, 3, 4, [6, 6], [3, 3], et="f64", check="almost", tol="1.0e-12", pad=[[1, 1], [1, 1]])
case("bf16", 4, 1, 3, 4, [6, 6], [3, 3], et="bf16", lo=-2, hi=2)
case("f16", 4, 1, 3, 4, [6, 6], [3, 3], et="f16", lo=-2, hi=2)
case("i8_to_i32", 4, 2, 3, 4, [6, 6], [3, 3], et="i8", oet="i32", lo=-128, hi=127)
case("ui8_to_ui32", 4, 1, 3, 4, [5, 5], [2, 2], et="ui8", oet="ui32", lo=0, hi=255)
case("i32", 4, 1, 3, 4, [5, 5], [2, 2], et="i32", lo=-1000, hi=1000)
case("i64_groups", 4, 2, 4, 4, [5, 5], [2, 2], et="i64", fgc=2, lo=-50, hi=50)
case("i16_wraps", 3, 1, 8, 2, [6], [3], et="i16", lo=-3000, hi=3000)
case("pred", 4, 1, 3, 4, [5, 5], [2, 2], et="i1")
case("c64", 4, 1, 2, 3, [5, 5], [2, 2], et="complex<f32>")
case("c128", 3, 2, 2, 3, [6], [3], et="complex<f64>", stride=[2])
case("precision_highest", 4, 1, 2, 3, [5, 5], [3, 3], precision="HIGHEST")
case("runtime_rhs_small", 4, 1, 2, 3, [5, 5], [3, 3], runtime_rhs=True, fgc=1)

# ---------------------------------------------------------------- GEMM path (f32, bigger)
case("gemm_nhwc_3x3", 4, 2, 16, 32, [10, 10], [3, 3], pad=[[1, 1], [1, 1]],
     gen=((5, 1, 7, 3), (3, 2, 5, 2)))
case("gemm_nhwc_runtime_rhs", 4, 2, 16, 24, [9, 11], [3, 3], pad=[[1, 1], [1, 1]], runtime_rhs=True,
     gen=((3, 1, 7, 3), (5, 2, 5, 2)))
case("gemm_nchw", 4, 2, 8, 20, [10, 9], [3, 3], lay="nchw", pad=[[1, 1], [0, 0]])
case("gemm_random_layout", 4, 3, 8, 12, [13, 12], [2, 3], lay="random", stride=[2, 1],
     pad=[[1, -1], [2, 1]], rdil=[1, 2], rev=[True, False])
case("gemm_k_blocks", 4, 1, 40, 36, [9, 9], [3, 3], pad=[[1, 1], [1, 1]],
     gen=((7, 3, 5, 2), (5, 1, 3, 1)))
case("gemm_channel_split", 3, 1, 1300, 8, [16], [2], gen=((11, 2, 3, 1), (3, 0, 5, 2)))
case("gemm_many_outputs", 4, 1, 4, 300, [6, 6], [2, 2], gen=((3, 0, 5, 2), (7, 1, 5, 2)))
case("gemm_feature_groups", 4, 2, 16, 32, [8, 8], [3, 3], fgc=2, pad=[[1, 1], [1, 1]])
case("gemm_batch_groups", 4, 4, 8, 16, [8, 8], [3, 3], bgc=2)
case("gemm_lhs_dilation", 4, 1, 8, 16, [7, 7], [3, 3], ldil=[2, 2], pad=[[2, 2], [1, 1]], stride=[1, 2])
case("gemm_odd_rows", 4, 1, 6, 17, [15, 13], [3, 2], stride=[1, 1])
case("gemm_bf16", 4, 2, 8, 16, [8, 8], [3, 3], et="bf16", lo=-2, hi=2, pad=[[1, 1], [1, 1]])
case("gemm_bf16_nchw", 4, 2, 8, 16, [10, 10], [3, 3], et="bf16", lay="nchw", lo=-2, hi=2, runtime_rhs=True)
case("gemm_f16", 4, 2, 8, 12, [10, 10], [3, 3], et="f16", lo=-2, hi=2)
case("gemm_3d", 5, 1, 4, 8, [6, 6, 6], [3, 3, 3], pad=[[1, 1], [1, 1], [1, 1]], lo=-2, hi=2)
case("gemm_direct_kblocks", 4, 1, 200, 64, [7, 9], [3, 3], pad=[[1, 1], [1, 1]],
     gen=((13, 5, 3, 1), (7, 2, 3, 1)))
case("gemm_direct_groups", 4, 2, 8, 128, [6, 7], [2, 2], fgc=2, stride=[1, 2], pad=[[0, 1], [1, 0]])
case("gemm_1d_long_kernel", 3, 2, 4, 16, [200], [40], lo=-1, hi=1, rdil=[2])


# ---------------------------------------------------------------- quantized
def quant_type(shape, st, scale, zp, axis=None, scales=None, zps=None):
    if axis is None:
        q = f"!quant.uniform<{st}:f32, {scale!r}:{zp}>"
    else:
        inner = ", ".join(f"{s!r}:{z}" for s, z in zip(scales, zps))
        q = f"!quant.uniform<{st}:f32:{axis}, {{{inner}}}>"
    return ttype(shape, q)


def f32(x):
    return np.float32(x)


def qdq_ref(lq, rq, lzp, lsc, rzp, rsc, c, oscale, ozp, omin, omax, per_axis_r=None, per_axis_o=None):
    """dequantize (f32: (x - zp) * scale), convolve in f32 summing in the reference interpreter's
    order ((q, c) row-major, one rounding per multiply and per add), quantize (x / scale + zp,
    clamp, round half to even)."""
    L = ((lq.astype(np.int32) - np.int32(lzp)).astype(np.float32) * f32(lsc)).astype(np.float32)
    if per_axis_r is None:
        R = ((rq.astype(np.int32) - np.int32(rzp)).astype(np.float32) * f32(rsc)).astype(np.float32)
    else:
        ax, scs, zs = per_axis_r
        shp = [1] * rq.ndim
        shp[ax] = -1
        R = ((rq.astype(np.int32) - np.array(zs, np.int32).reshape(shp)).astype(np.float32) *
             np.array(scs, np.float32).reshape(shp)).astype(np.float32)
    res = conv_f32_ordered(L, R, c)
    if per_axis_o is None:
        y = res / f32(oscale) + f32(ozp)
    else:
        ax, scs, zs = per_axis_o
        shp = [1] * res.ndim
        shp[ax] = -1
        y = res / np.array(scs, np.float32).reshape(shp) + np.array(zs, np.float32).reshape(shp)
    y = np.minimum(np.maximum(y.astype(np.float32), f32(omin)), f32(omax))
    return np.rint(y).astype(np.int64)


def conv_f32_ordered(L, R, c):
    """f32 convolution summing each output over (kernel position, feature) in row-major order
    with a rounding after every multiply and add (as the reference interpreter does)."""
    ns = L.ndim - 2
    Lc = np.transpose(L, [c["ib"], c["ifd"]] + c["is"])
    Rc = np.transpose(R, [c["kof"], c["kif"]] + c["ks"])
    N, C = Lc.shape[:2]
    O, I = Rc.shape[:2]
    dil = [(s - 1) * d + 1 for s, d in zip(Lc.shape[2:], c["ldil"])]
    D = np.zeros((N, C) + tuple(dil), np.float32)
    D[(slice(None), slice(None)) + tuple(slice(None, None, d) for d in c["ldil"])] = Lc
    for i, (lo, hi) in enumerate(c["pad"]):
        ax = 2 + i
        z = list(D.shape); z[ax] = lo
        D = np.concatenate([np.zeros(z, np.float32), D], axis=ax)
        z = list(D.shape); z[ax] = hi
        D = np.concatenate([D, np.zeros(z, np.float32)], axis=ax)
    Kd = Rc.shape[2:]
    wk = [(k - 1) * d + 1 for k, d in zip(Kd, c["rdil"])]
    osz = [(p - w) // s + 1 for p, w, s in zip(D.shape[2:], wk, c["stride"])]
    G = max(c["fgc"], c["bgc"])
    Nout, Og = N // c["bgc"], O // G
    res = np.zeros((Nout, O) + tuple(osz), np.float32)
    for g in range(G):
        Lg = D[:, g * I:(g + 1) * I] if c["fgc"] > 1 else (D[g * Nout:(g + 1) * Nout] if c["bgc"] > 1 else D)
        for pos in np.ndindex(*osz):
            acc = np.zeros((Nout, Og), np.float32)
            for kq in np.ndindex(*Kd):
                idx = tuple(p * s + k * d for p, s, k, d in zip(pos, c["stride"], kq, c["rdil"]))
                for ci in range(I):
                    x = Lg[(slice(None), ci) + idx]  # [Nout]
                    w = Rc[(slice(g * Og, (g + 1) * Og), ci) + kq]  # [Og]
                    acc = (acc + (x[:, None] * w[None, :]).astype(np.float32)).astype(np.float32)
            res[(slice(None), slice(g * Og, (g + 1) * Og)) + pos] = acc
    return to_layout(res, c)


def qint_ref(lq, rq, lzp, lsc, rsc, osc, ozp, c, obits):
    """The integer form: sum((lhs - zp_l) * rhs) in i32, combined scale in f32 when it is not
    within 0.001 of 1, plus the result zero point, wrapped into the storage type."""
    acc = conv_ref_layout(lq.astype(np.int64) - lzp, rq.astype(np.int64), c, np.int64)
    cs = lsc * rsc / osc
    rsum = np.sum(rq.astype(np.int64), axis=tuple(i for i in range(rq.ndim) if i != c["kof"]))
    zpoff = (lzp * rsum).astype(np.int64)
    shp = [1] * acc.ndim
    shp[c["ofd"]] = -1
    zpoff = zpoff.reshape(shp)
    wrap32 = lambda v: ((v + 2**31) % 2**32) - 2**31
    if abs(cs - 1.0) > 0.001:
        at = wrap32(acc + zpoff)
        r = np.trunc(at.astype(np.float32) * f32(cs)).astype(np.int64)
        z = np.trunc(wrap32(zpoff).astype(np.float32) * f32(cs)).astype(np.int64)
        v = wrap32(r + ozp - z)
    else:
        v = wrap32(acc + ozp)
    m = 1 << obits
    v = v % m
    return np.where(v >= m // 2, v - m, v)


def qcase(name, rank, N, C, O, S, K, lay, lsc, lzp, rsc, rzp, osc, ozp, ostore="i32", qdq=False,
          runtime_rhs=False, per_axis=None, **kw):
    laydict = layout(rank, rng, lay) if isinstance(lay, str) else lay
    c = make_conf(rank, laydict, **kw)
    ls, rs = shapes_for(c, N, C, O, S, K)
    lq = rng.integers(-128, 128, size=ls).astype(np.int8)
    rq = rng.integers(-128, 128, size=rs).astype(np.int8)
    if per_axis is not None:  # rhs and result per-axis along the kernel / result output feature
        rscs = [rsc * (1 + 0.25 * i) for i in range(O)]
        oscs = [osc * (1 + 0.25 * i) for i in range(O)]
        lt = quant_type(ls, "i8", lsc, lzp)
        rt = quant_type(rs, "i8", None, None, axis=c["kof"], scales=rscs, zps=[0] * O)
        ot = quant_type(out_shape(ls, rs, c), ostore, None, None, axis=c["ofd"], scales=oscs, zps=[0] * O)
    else:
        lt = quant_type(ls, "i8", lsc, lzp)
        rt = quant_type(rs, "i8", rsc, rzp)
        ot = quant_type(out_shape(ls, rs, c), ostore, osc, ozp)
    obits = int(ostore.lstrip("i"))
    omin, omax = -(1 << (obits - 1)), (1 << (obits - 1)) - 1
    if qdq:
        pa_r = (c["kof"], rscs, [0] * O) if per_axis is not None else None
        pa_o = (c["ofd"], oscs, [0] * O) if per_axis is not None else None
        exp = qdq_ref(lq, rq, lzp, lsc, rzp, rsc, c, osc, ozp, omin, omax, pa_r, pa_o)
    else:
        exp = qint_ref(lq, rq, lzp, lsc, rscs[0] if per_axis is not None else rsc,
                       oscs[0] if per_axis is not None else osc, ozp, c, obits)
    oshape = list(exp.shape)
    st = "i32" if obits == 32 else "i8"
    # the storage values enter and leave through optimization_barrier, whose result type is
    # written as the quantized type (the verifier would refuse this; the test compiles without it)
    lines = [f"func.func @{name}() {{",
             f"  %l = stablehlo.constant {dense(lq, 'i8')} : {ttype(ls, 'i8')}",
             f"  %r = stablehlo.constant {dense(rq, 'i8')} : {ttype(rs, 'i8')}",
             f"  %lhs = \"stablehlo.optimization_barrier\"(%l) : ({ttype(ls, 'i8')}) -> {lt}",
             f"  %rhs = \"stablehlo.optimization_barrier\"(%r) : ({ttype(rs, 'i8')}) -> {rt}",
             "  %q = " + conv_text(c, ls, rs, oshape, "", "", "", lname="%lhs", rname="%rhs")
             .replace(f"({ttype(ls, '')}, {ttype(rs, '')}) -> {ttype(oshape, '')}", f"({lt}, {rt}) -> {ot}"),
             f"  %o = \"stablehlo.optimization_barrier\"(%q) : ({ot}) -> {ttype(oshape, st)}",
             f"  check.expect_eq_const %o, {dense(exp.astype(MLIR[st]), st)} : {ttype(oshape, st)}",
             "  func.return", "}"]
    QCASES.append((name, "\n".join(lines) + "\n"))


QCASES = []
qcase("q_int_nhwc", 4, 1, 3, 4, [6, 6], [3, 3], "nhwc", 0.0039215482917486456, -128,
      0.0039212498010373579, 0, 1.5377370458777768e-05, 0, pad=[[1, 1], [1, 1]])
qcase("q_int_nhwc_scaled", 4, 2, 3, 5, [6, 5], [2, 3], "nhwc", 0.05, -20, 0.02, 0, 0.003, 7)
qcase("q_int_nchw_groups", 4, 2, 4, 4, [5, 5], [2, 2], "nchw", 0.05, 3, 0.02, 0, 0.0007, -2, fgc=2,
      stride=[2, 1])
qcase("q_int_i8_result", 4, 1, 2, 3, [5, 5], [2, 2], "nhwc", 0.05, -5, 0.04, 0, 0.9, 3, ostore="i8")
qcase("q_int_per_axis", 4, 1, 3, 4, [5, 5], [2, 2], "nhwc", 0.05, -7, 0.01, 0, 0.002, 0, per_axis=True)
qcase("q_int_runtime_rhs", 5, 1, 2, 3, [4, 4, 3], [2, 2, 2], "nhwc", 0.1, 12, 0.05, 0, 0.004, 1,
      pad=[[1, 0], [0, 1], [1, 1]])
qcase("q_qdq_lhs_dilation", 4, 1, 2, 3, [4, 4], [3, 3], "nhwc", 0.0039215482917486456, -128,
      0.0039212498010373579, 0, 1.5377370458777768e-05, 0, qdq=True, ldil=[2, 2], pad=[[1, 1], [2, 1]])
qcase("q_qdq_1d", 3, 1, 2, 4, [10], [3], "nhwc", 0.02, -3, 0.03, 0, 0.0005, 4, qdq=True, rdil=[2],
      pad=[[2, 2]])
qcase("q_qdq_rhs_zp", 4, 1, 2, 3, [5, 5], [2, 2], "nhwc", 0.02, -3, 0.03, 5, 0.0005, 4, qdq=True)
qcase("q_qdq_i8_result", 4, 1, 2, 3, [5, 5], [2, 2], "nchw", 0.05, 1, 0.05, 0, 0.25, -3, ostore="i8",
      qdq=True, ldil=[2, 1])
qcase("q_int_nchw_i8_result", 4, 1, 2, 3, [5, 5], [2, 2], "nchw", 0.05, 1, 0.05, 0, 0.25, -3,
      ostore="i8")
qcase("q_qdq_random_layout", 4, 2, 2, 4, [5, 4], [2, 2], "random", 0.02, -3, 0.03, 0, 0.0005, 4,
      qdq=True)
qcase("q_qdq_per_axis_nchw", 4, 1, 2, 3, [5, 5], [2, 2], "nchw", 0.05, -7, 0.01, 0, 0.002, 0,
      per_axis=True, qdq=True)


# ---------------------------------------------------------------- GEMM path, lhs dilation split
# into output phases (runtime weights): the input gradient of a stride-2 3x3 conv, a 1-D
# dilation 3 with stride 2 (three phases), phases with feature and batch groups. Added last so
# the cases above keep their random values.
case("gemm_phases_input_grad", 4, 2, 16, 12, [8, 8], [3, 3], ldil=[2, 2], pad=[[1, 2], [1, 2]],
     rev=[True, True], runtime_rhs=True)
case("gemm_phases_1d", 3, 4, 16, 16, [40], [5], ldil=[3], stride=[2], pad=[[2, 1]], runtime_rhs=True)
case("gemm_phases_groups_nchw", 4, 4, 8, 8, [9, 7], [3, 3], lay="nchw", fgc=2, ldil=[2, 1],
     rdil=[1, 2], pad=[[2, 2], [1, 1]], runtime_rhs=True)
case("gemm_phases_batch_groups", 4, 4, 8, 8, [6, 6], [2, 2], bgc=2, ldil=[2, 2],
     pad=[[1, 1], [1, 1]], runtime_rhs=True)
# GEMM path, the innermost kernel dim merged into few input features (its padding written out):
# the kernel gradient of a causal dilated 1-D conv (features = the forward batch, stride = the
# forward dilation, left padding), and a 2-D case with padding on both sides and a stride
case("gemm_merged_1d_kernel_grad", 3, 8, 4, 16, [300], [150], stride=[2], pad=[[2, 0]], lo=-2,
     hi=2, runtime_rhs=True)
case("gemm_merged_2d", 4, 4, 3, 16, [12, 11], [3, 4], stride=[1, 2], pad=[[1, 1], [2, 3]],
     runtime_rhs=True)
# phases that no tap reaches (lhs dilation 4, kernel dilation 2: odd outputs are zeros), as in
# the input gradient of a stride-4 dilation-2 1-D conv
case("gemm_phases_zero", 3, 4, 16, 16, [60], [5], ldil=[4], rdil=[2], pad=[[4, 5]], runtime_rhs=True)
# merged taps through a deinterleaved lhs: kernel gradients of strided 1-D convs (kernel
# dilation 2 and 4, a negative high padding, a left padding)
case("gemm_merged_dilated_kernel", 3, 8, 8, 16, [400], [190], rdil=[2], pad=[[0, -1]], lo=-2, hi=2,
     runtime_rhs=True)
case("gemm_merged_dilated_padded", 3, 6, 4, 16, [203], [50], rdil=[4], stride=[2], pad=[[3, 2]],
     lo=-2, hi=2, runtime_rhs=True)
# bf16 x bf16 GEMM convolutions on the pair kernel (k_dot_bf.h, even features per group): a
# strided CNN layer past one 32-column panel, an f32 result accumulated in place, feature groups,
# lhs dilation (phases), merged taps, features past one K block; odd features take the f32 path
case("gemm_bf16_cnn", 4, 2, 32, 64, [12, 12], [3, 3], et="bf16", lo=-2, hi=2, stride=[2, 2],
     pad=[[1, 1], [1, 1]])
case("gemm_bf16_f32out", 4, 1, 16, 32, [9, 9], [3, 3], et="bf16", oet="f32", lo=-2, hi=2)
case("gemm_bf16_groups", 4, 2, 8, 64, [6, 7], [3, 2], et="bf16", fgc=2, lo=-2, hi=2)
case("gemm_bf16_phases", 4, 2, 16, 12, [8, 8], [3, 3], et="bf16", ldil=[2, 2], pad=[[1, 2], [1, 2]],
     lo=-2, hi=2, runtime_rhs=True)
case("gemm_bf16_merged", 3, 8, 8, 16, [100], [40], et="bf16", rdil=[2], lo=-1, hi=1,
     runtime_rhs=True)
case("gemm_bf16_kblocks", 3, 1, 1100, 8, [16], [2], et="bf16", lo=-1, hi=1)
case("gemm_bf16_odd_features", 4, 1, 3, 32, [8, 8], [3, 3], et="bf16", lo=-2, hi=2)

# runtime f32 weights packed straight into the GEMM's panels, read along a kernel whose output
# features are far apart (NCW / OIW layouts: the kernel gradient's shape), 12 output features
# (half a panel) and 40 (a full panel and a partial one); the merged kernel gradient of a 1-input-
# feature conv (the first layer of an audio net: 9 output positions, 16 features)
case("gemm_runtime_rhs_half_panel_ncw", 3, 3, 6, 12, [70], [5], lay="nchw", rdil=[2], pad=[[4, 0]],
     lo=-2, hi=2, runtime_rhs=True)
case("gemm_runtime_rhs_two_panels_ncw", 3, 2, 5, 40, [200], [4], lay="nchw", stride=[2],
     pad=[[1, 2]], lo=-2, hi=2, runtime_rhs=True)
case("gemm_merged_kernel_grad_one_feature", 3, 1, 8, 16, [1000], [480], rdil=[2], pad=[[0, -1]],
     lo=-1, hi=1, runtime_rhs=True)
# the kernel gradient of a NWC/WIO conv as JAX writes it ([f, 0, b] x [i, 0, o] -> [0, b, f]):
# the lhs batch (the forward's channels) is its contiguous dimension, prepared in row blocks
# (17 and 37 rows: a partial block), with the forward dilation as stride and causal padding
KGRAD = dict(ib=2, ifd=0, is_=[1], kif=0, kof=2, ks=[1], ob=1, ofd=2, os_=[0])
case("gemm_kernel_grad_nwc_dilated", 3, 17, 3, 24, [300], [280], lay=KGRAD, stride=[8],
     pad=[[8, 0]], lo=-2, hi=2, runtime_rhs=True)
case("gemm_kernel_grad_nwc_causal", 3, 37, 4, 16, [200], [200], lay=KGRAD, pad=[[1, 0]], lo=-2,
     hi=2, runtime_rhs=True)
# few output rows and panels over a long K (kernel gradients: the kernel's positions as rows, the
# image as K): up to 4 tasks per tile sum ranges of kernel positions into partial results added
# at the end (k_conv_gemm.c, ksplit): a 3x3 output of 32 features (4 ranges, the last one
# shorter), batch 1 with stride and dilation and 40 features (two panels, the second partial),
# the same in NCHW (features far apart in the result), feature groups, an f16 result
case("gemm_ksplit_3x3", 4, 1, 32, 32, [28, 28], [26, 26], runtime_rhs=True)
case("gemm_ksplit_strided_dilated", 4, 1, 24, 40, [40, 37], [17, 16], stride=[2, 1], rdil=[2, 2],
     runtime_rhs=True)
case("gemm_ksplit_nchw", 4, 1, 24, 40, [40, 37], [17, 16], lay="nchw", stride=[2, 1],
     rdil=[2, 2], runtime_rhs=True)
case("gemm_ksplit_groups", 4, 1, 32, 32, [34, 34], [32, 32], fgc=2, runtime_rhs=True)
case("gemm_ksplit_f16", 4, 1, 32, 32, [28, 28], [26, 26], et="f16", lo=-1, hi=1, runtime_rhs=True)
# kernel-gradient-like GEMMs whose runtime f32 weights (output features contiguous, whole
# panels, 8+ input features, 16 result rows or fewer) are read in place instead of packed
# (k_conv_gemm.c, inplace): 1-D dilated and padded, 3-D with 16 output features (half panel) and odd sizes,
# batch groups, strided over two panels, and a layout with the weights' input features outermost
# and the lhs features not contiguous (prepared lhs)
case("gemm_inplace_1d_dil", 3, 1, 17, 32, [301], [146], rdil=[2], pad=[[1, 2]], runtime_rhs=True)
case("gemm_inplace_3d_half", 5, 1, 19, 16, [9, 10, 11], [8, 9, 9], runtime_rhs=True)
case("gemm_inplace_bgroups", 4, 2, 24, 64, [20, 21], [18, 19], bgc=2, runtime_rhs=True)
case("gemm_inplace_strided", 4, 1, 20, 64, [31, 29], [26, 25], stride=[2, 2],
     pad=[[1, 1], [0, 1]], runtime_rhs=True)
case("gemm_inplace_layout", 4, 1, 16, 32, [23, 25], [20, 22],
     lay=dict(ib=3, ifd=0, is_=[1, 2], kif=0, ks=[1, 2], kof=3, ob=2, ofd=3, os_=[0, 1]),
     runtime_rhs=True)

def main():
    head = "// generated by tests/ops_conv/make_cases.py: expected values from numpy\n"
    n = write_case_files(OUT, CASES, head)
    nq = write_case_files(os.path.join(HERE, "quant_cases"), QCASES, head)
    print(n, "cases,", nq, "quantized cases")


if __name__ == "__main__":
    main()
