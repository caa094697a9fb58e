#!/usr/bin/env python3
"""Writes tests/ops_rng/cases/*.mlir: rng_bit_generator programs whose expected outputs and
output states were produced by XLA:CPU (through JAX's PJRT client, compiling the same StableHLO)
when this script ran, for THREE_FRY, PHILOX and DEFAULT, every output width, float outputs
(compared through bitcast_convert, bit for bit), states of 2 and 3 words, counter wrap-around and
shapes that exercise the half-splitting of THREE_FRY's narrow outputs. Large outputs are checked
through two checksums computed in the program (a sum and an index-weighted sum, in ui64), whose
expected values numpy computes from XLA's output. Plus rng (UNIFORM and NORMAL, whose generator
the spec leaves to the implementation) checked by properties: range, mean and variance.

usage: python3 tests/ops_rng/make_cases.py   (needs jax with jaxlib, numpy, ml_dtypes)
"""
import os
import sys

import jax
import numpy as np

jax.config.update("jax_enable_x64", True)

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from casegen import write_case_files  # noqa: E402

OUT = os.path.join(HERE, "cases")
CASES = {}

# element type -> (numpy dtype of XLA's result, the unsigned type of that width for the check)
TYPES = {"ui8": "ui8", "ui16": "ui16", "ui32": "ui32", "ui64": "ui64", "i8": "ui8", "i16": "ui16",
         "i32": "ui32", "i64": "ui64", "f16": "ui16", "bf16": "ui16", "f32": "ui32", "f64": "ui64",
         "ui4": "ui4", "i4": "ui4", "f8E4M3FN": "ui8", "ui2": "ui2", "i2": "ui2", "f4E2M1FN": "ui4"}
NP = {"ui2": np.uint8, "ui4": np.uint8, "ui8": np.uint8, "ui16": np.uint16, "ui32": np.uint32, "ui64": np.uint64}
BITS = {"ui2": 2, "ui4": 4, "ui8": 8, "ui16": 16, "ui32": 32, "ui64": 64}


def ttype(shape, et):
    return "tensor<" + "".join(f"{d}x" for d in shape) + et + ">"


def dense(a, unsigned_type):
    a = np.ascontiguousarray(a).astype(NP[unsigned_type])
    if a.size == 0:
        return "dense<>"
    if a.size == 1:
        return f"dense<{int(a.ravel()[0])}>"
    return 'dense<"0x' + a.tobytes().hex().upper() + '">'


_client = jax.devices("cpu")[0].client


def xla_run(text, *args):
    exe = _client.compile_and_load(text, [jax.devices("cpu")[0]])
    outs = exe.execute([jax.device_put(a, jax.devices("cpu")[0]) for a in args])
    return [np.asarray(o) for o in outs]


def rbg(alg, state, shape, et):
    n = len(state)
    st, ot = ttype((n,), "ui64"), ttype(shape, et)
    text = f"""func.func @main(%s: {st}) -> ({st}, {ot}) {{
  %os, %o = stablehlo.rng_bit_generator %s, algorithm = {alg} : ({st}) -> ({st}, {ot})
  return %os, %o : {st}, {ot}
}}"""
    ns, out = xla_run(text, np.array(state, dtype=np.uint64))
    ut = TYPES[et]
    out = np.asarray(out).view(NP[ut] if out.dtype.itemsize == np.dtype(NP[ut]).itemsize else out.dtype)
    out = out.astype(np.uint64) & np.uint64((1 << BITS[ut]) - 1)
    return np.asarray(ns).astype(np.uint64), out.astype(NP[ut]).reshape(shape)


def checksum_lines(src, bt, out, shape, sfx=""):
    """Lines checking `src` (of type bt, expected values `out`) through two checksums computed in
    the program, a sum and an index-weighted sum in ui64; sfx keeps the names apart."""
    w = out.astype(np.uint64).ravel()
    idx = np.arange(w.size, dtype=np.uint64)
    with np.errstate(over="ignore"):
        s1 = int(np.sum(w, dtype=np.uint64))
        s2 = int(np.sum(w * (idx * np.uint64(2654435761) + np.uint64(1)), dtype=np.uint64))
    U = ttype(shape, "ui64")
    dims = ", ".join(str(d) for d in range(len(shape)))
    return [f"  %w{sfx} = stablehlo.convert {src} : ({bt}) -> {U}",
            f"  %z{sfx} = stablehlo.constant dense<0> : tensor<ui64>",
            f"  %s1{sfx} = stablehlo.reduce(%w{sfx} init: %z{sfx}) applies stablehlo.add across dimensions = [{dims}] : ({U}, tensor<ui64>) -> tensor<ui64>",
            f"  %lin{sfx} = stablehlo.iota dim = 0 : tensor<{w.size}xui64>",
            f"  %lin2{sfx} = stablehlo.reshape %lin{sfx} : (tensor<{w.size}xui64>) -> {U}",
            f"  %k{sfx} = stablehlo.constant dense<2654435761> : {U}",
            f"  %one{sfx} = stablehlo.constant dense<1> : {U}",
            f"  %lk{sfx} = stablehlo.multiply %lin2{sfx}, %k{sfx} : {U}",
            f"  %lk1{sfx} = stablehlo.add %lk{sfx}, %one{sfx} : {U}",
            f"  %wl{sfx} = stablehlo.multiply %w{sfx}, %lk1{sfx} : {U}",
            f"  %s2{sfx} = stablehlo.reduce(%wl{sfx} init: %z{sfx}) applies stablehlo.add across dimensions = [{dims}] : ({U}, tensor<ui64>) -> tensor<ui64>",
            f"  check.expect_eq_const %s1{sfx}, dense<{s1}> : tensor<ui64>",
            f"  check.expect_eq_const %s2{sfx}, dense<{s2}> : tensor<ui64>"]


def case(name, alg, state, shape, et, checksum=False):
    ns, out = rbg(alg, state, shape, et)
    n = len(state)
    st, ot = ttype((n,), "ui64"), ttype(shape, et)
    ut = TYPES[et]
    bt = ttype(shape, ut)
    lines = [f"func.func @{name}() {{",
             f"  %s = stablehlo.constant {dense(np.array(state, dtype=np.uint64), 'ui64')} : {st}",
             f"  %os, %o = stablehlo.rng_bit_generator %s, algorithm = {alg} : ({st}) -> ({st}, {ot})",
             f"  check.expect_eq_const %os, {dense(ns, 'ui64')} : {st}"]
    if ut != et:
        lines.append(f"  %ob = stablehlo.bitcast_convert %o : ({ot}) -> {bt}")
        src = "%ob"
    else:
        src = "%o"
    if checksum:
        lines += checksum_lines(src, bt, out, shape)
    else:
        lines.append(f"  check.expect_eq_const {src}, {dense(out, ut)} : {bt}")
    lines += ["  func.return", "}", ""]
    CASES[name] = "// generated by tests/ops_rng/make_cases.py: expected values from XLA:CPU\n" + "\n".join(lines)


rng = np.random.default_rng(5)


def rstate(n):
    return [int(x) for x in rng.integers(0, 2 ** 64, size=n, dtype=np.uint64)]


SHAPES = [(), (1,), (2,), (5,), (3, 5), (4, 6), (5, 3), (2, 3, 3), (7, 1, 3), (0,), (3, 0)]
for alg in ("THREE_FRY", "PHILOX", "DEFAULT"):
    for et in ("ui8", "ui16", "ui32", "ui64"):
        for shape in SHAPES:
            sname = "x".join(map(str, shape)) if shape else "scalar"
            case(f"rbg_{alg.lower()}_{et}_{sname}", alg, rstate(2), shape, et)
    for et in ("i8", "i16", "i32", "i64", "f16", "bf16", "f32", "f64", "ui4", "i4", "f8E4M3FN",
               "ui2", "i2", "f4E2M1FN"):
        case(f"rbg_{alg.lower()}_{et}_3x4", alg, rstate(2), (3, 4), et)
        case(f"rbg_{alg.lower()}_{et}_5x3", alg, rstate(2), (5, 3), et)
# PHILOX with a 3-word state, and counters that wrap (with the carry into the high word)
for alg in ("PHILOX", "DEFAULT"):
    for et in ("ui32", "ui64", "ui16"):
        case(f"rbg_{alg.lower()}_state3_{et}_7x3", alg, rstate(3), (7, 3), et)
    m = 2 ** 64 - 1
    case(f"rbg_{alg.lower()}_state3_wrap", alg, [12345, m - 2, m], (9, 4), "ui32")
    case(f"rbg_{alg.lower()}_state2_wrap", alg, [m - 1, m - 1], (9, 4), "ui64")
case("rbg_three_fry_wrap", "THREE_FRY", [777, 2 ** 64 - 3], (6, 5), "ui32")
case("rbg_three_fry_wrap64", "THREE_FRY", [777, 2 ** 64 - 3], (6,), "ui64")
# large outputs: the parallel path, through checksums
case("rbg_three_fry_big_u32", "THREE_FRY", rstate(2), (301, 200), "ui32", checksum=True)
case("rbg_philox_big_u32", "PHILOX", rstate(2), (250, 263), "ui32", checksum=True)
case("rbg_philox_big_u64", "PHILOX", rstate(3), (129, 130), "ui64", checksum=True)
case("rbg_three_fry_big_u8", "THREE_FRY", rstate(2), (99, 333), "ui8", checksum=True)


# ============================================================================ rng (properties)

def rng_case(name, dist, et, a, b, shape, checks):
    t = ttype(shape, et)
    s = ttype((len(shape),), "i64")
    lines = [f"func.func @{name}() {{",
             f"  %a = stablehlo.constant dense<{a}> : tensor<{et}>",
             f"  %b = stablehlo.constant dense<{b}> : tensor<{et}>",
             f"  %shape = stablehlo.constant dense<[{', '.join(map(str, shape))}]> : {s}",
             f"  %r = stablehlo.rng %a, %b, %shape, distribution = {dist} : (tensor<{et}>, tensor<{et}>, {s}) -> {t}"]
    lines += checks
    lines += ["  func.return", "}", ""]
    CASES[name] = "// generated by tests/ops_rng/make_cases.py: rng checked by its properties\n" + "\n".join(lines)


def reduce_lines(src, t, et, op, init, out):
    dims = ", ".join(str(d) for d in range(t.count("x")))
    return [f"  %{out}_i = stablehlo.constant dense<{init}> : tensor<{et}>",
            f"  %{out} = stablehlo.reduce({src} init: %{out}_i) applies stablehlo.{op} across dimensions = [{dims}] : ({t}, tensor<{et}>) -> tensor<{et}>"]


def uniform_float(name, et, a, b, shape, tol_mean):
    t = ttype(shape, et)
    n = int(np.prod(shape))
    L = reduce_lines("%r", t, et, "minimum", "0x7F800000" if et == "f32" else "0x7FF0000000000000", "mn")
    L += reduce_lines("%r", t, et, "maximum", "0xFF800000" if et == "f32" else "0xFFF0000000000000", "mx")
    L += reduce_lines("%r", t, et, "add", "0.0", "sum")
    lo, hi = a, b
    mean = (a + b) / 2
    L += [f"  %lo = stablehlo.constant dense<{lo}> : tensor<{et}>",
          f"  %hi = stablehlo.constant dense<{hi}> : tensor<{et}>",
          f"  %okmin = stablehlo.compare GE, %mn, %lo : (tensor<{et}>, tensor<{et}>) -> tensor<i1>",
          f"  %okmax = stablehlo.compare LT, %mx, %hi : (tensor<{et}>, tensor<{et}>) -> tensor<i1>",
          "  check.expect_eq_const %okmin, dense<true> : tensor<i1>",
          "  check.expect_eq_const %okmax, dense<true> : tensor<i1>",
          f"  %nn = stablehlo.constant dense<{float(n)}> : tensor<{et}>",
          f"  %mean = stablehlo.divide %sum, %nn : tensor<{et}>",
          f"  check.expect_almost_eq_const %mean, dense<{mean}> : tensor<{et}> {{tolerance = {tol_mean} : f64}}"]
    rng_case(name, "UNIFORM", et, a, b, shape, L)


uniform_float("rng_uniform_f32", "f32", -2.0, 3.0, (200, 100), 0.05)
uniform_float("rng_uniform_f64", "f64", 10.0, 10.5, (64, 64), 0.01)
# a range one ulp wide: every value must be a (never b)
rng_case("rng_uniform_f32_one_ulp", "UNIFORM", "f32", "1.0", "1.00000012", (1000,),
         ["  check.expect_eq_const %r, dense<1.0> : tensor<1000xf32>"])
rng_case("rng_uniform_f32_empty_range", "UNIFORM", "f32", "4.0", "4.0", (10,),
         ["  check.expect_eq_const %r, dense<4.0> : tensor<10xf32>"])


def uniform_int(name, et, a, b, shape):
    t = ttype(shape, et)
    n = int(np.prod(shape))
    L = reduce_lines("%r", t, et, "minimum", b, "mn")
    L += reduce_lines("%r", t, et, "maximum", a, "mx")
    L += [f"  check.expect_eq_const %mn, dense<{a}> : tensor<{et}>",
          f"  check.expect_eq_const %mx, dense<{b - 1}> : tensor<{et}>",
          # every value in [a, b) appears: a histogram by comparisons
          ]
    for v in range(a, b):
        L += [f"  %c{v - a} = stablehlo.constant dense<{v}> : {t}",
              f"  %e{v - a} = stablehlo.compare EQ, %r, %c{v - a} : ({t}, {t}) -> {ttype(shape, 'i1')}"]
        L += reduce_lines(f"%e{v - a}", ttype(shape, "i1"), "i1", "or", "false", f"any{v - a}")
        L += [f"  check.expect_eq_const %any{v - a}, dense<true> : tensor<i1>"]
    rng_case(name, "UNIFORM", et, a, b, shape, L)


uniform_int("rng_uniform_i32", "i32", -3, 4, (50, 20))
uniform_int("rng_uniform_ui8", "ui8", 250, 255, (300,))
uniform_int("rng_uniform_i64", "i64", 1000, 1003, (7, 9))


def normal(name, et, mu, sigma, shape):
    t = ttype(shape, et)
    n = int(np.prod(shape))
    L = reduce_lines("%r", t, et, "add", "0.0", "sum")
    L += [f"  %mu = stablehlo.constant dense<{mu}> : {t}",
          f"  %d = stablehlo.subtract %r, %mu : {t}",
          f"  %d2 = stablehlo.multiply %d, %d : {t}"]
    L += reduce_lines("%d2", t, et, "add", "0.0", "ss")
    L += [f"  %nn = stablehlo.constant dense<{float(n)}> : tensor<{et}>",
          f"  %mean = stablehlo.divide %sum, %nn : tensor<{et}>",
          f"  %var = stablehlo.divide %ss, %nn : tensor<{et}>",
          f"  check.expect_almost_eq_const %mean, dense<{mu}> : tensor<{et}> {{tolerance = {5 * sigma / np.sqrt(n):.4f} : f64}}",
          f"  check.expect_almost_eq_const %var, dense<{sigma * sigma}> : tensor<{et}> {{tolerance = {8 * sigma * sigma * np.sqrt(2.0 / n):.4f} : f64}}"]
    rng_case(name, "NORMAL", et, mu, sigma, shape, L)


normal("rng_normal_f32", "f32", 1.5, 2.0, (100, 100))
normal("rng_normal_f64", "f64", -3.0, 0.5, (3, 5001))


# ============================================================ @cjrt_threefry2x32 (bit for bit)
# The plugin's custom call for JAX's threefry2x32 primitive (python/jax_plugins/cjrt lowers it
# there): expected values from XLA:CPU running the primitive (JAX's own rule for cpu). Operands
# of the results' shape or of one element; large ones (the parallel path) through checksums.

def threefry_case(name, shapes, out_shape, checksum=False):
    from jax.extend.core.primitives import threefry2x32_p

    r = np.random.default_rng(sum(map(ord, name)))
    args = [r.integers(0, 2 ** 32, size=sh, dtype=np.uint64).astype(np.uint32) for sh in shapes]
    cpu = jax.devices("cpu")[0]
    full = [np.broadcast_to(a.reshape(()) if a.size == 1 else a, out_shape) for a in args]
    y = jax.jit(lambda *a: threefry2x32_p.bind(*a))(*[jax.device_put(a, cpu) for a in full])
    ys = [np.asarray(v).reshape(out_shape) for v in y]
    ot = ttype(out_shape, "ui32")
    its = [ttype(sh, "ui32") for sh in shapes]
    lines = [f"func.func @{name}() {{"]
    for i, (a, t) in enumerate(zip(args, its)):
        lines.append(f"  %a{i} = stablehlo.constant {dense(a, 'ui32')} : {t}")
    lines.append(f"  %y:2 = stablehlo.custom_call @cjrt_threefry2x32(%a0, %a1, %a2, %a3) : "
                 f"({', '.join(its)}) -> ({ot}, {ot})")
    for j in range(2):
        if checksum:
            lines += checksum_lines(f"%y#{j}", ot, ys[j], out_shape, f"_{j}")
        else:
            lines.append(f"  check.expect_eq_const %y#{j}, {dense(ys[j], 'ui32')} : {ot}")
    lines += ["  func.return", "}", ""]
    CASES[name] = "// generated by tests/ops_rng/make_cases.py: expected values from XLA:CPU\n" + "\n".join(lines)


threefry_case("threefry2x32_scalar_keys_3x5", [(), (), (3, 5), (3, 5)], (3, 5))
threefry_case("threefry2x32_full_7", [(7,), (7,), (7,), (7,)], (7,))
threefry_case("threefry2x32_one_elem_keys_2x3x4", [(1,), (1,), (2, 3, 4), (2, 3, 4)], (2, 3, 4))
threefry_case("threefry2x32_scalar_count_5", [(5,), (5,), (), (5,)], (5,))
threefry_case("threefry2x32_all_scalar", [(), (), (), ()], ())
threefry_case("threefry2x32_empty", [(), (), (0,), (0,)], (0,))
threefry_case("threefry2x32_big", [(), (), (301, 200), (301, 200)], (301, 200), checksum=True)
threefry_case("threefry2x32_big_full_keys", [(150, 131), (150, 131), (150, 131), (150, 131)],
              (150, 131), checksum=True)


def main():
    print(f"{write_case_files(OUT, CASES.items())} cases in {OUT}")


if __name__ == "__main__":
    main()
