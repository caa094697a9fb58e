"""Writes tests/ops_gather/window_cases.mlir: scatter-adds of one whole window at constant
indices (x.at[:, :-1].add(u)), which the fold pass turns into add(x, pad(u)) (compiler/fold.c),
and the loop-invariant hoisting and broadcast-of-broadcast folds beside it. Values are compared
as bits (bitcast to integers): the padding must keep -0.0 and NaN outside the window.

    python tests/ops_gather/make_window_cases.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from casegen import Case, array_attr, body2, ttype, write_beside  # noqa: E402

RNG = np.random.default_rng(13)


def bits_of(a):
    a = np.asarray(a)
    return a.view({4: np.int32, 8: np.int64}[a.dtype.itemsize]) if a.dtype.kind == "f" else a


def operand(shape, dt):
    """values with -0.0, +0.0 and a NaN outside any window (the last column / row)"""
    x = RNG.standard_normal(shape).astype(dt) if np.dtype(dt).kind == "f" else \
        RNG.integers(-100, 100, shape).astype(dt)
    if np.dtype(dt).kind == "f":
        x.reshape(-1)[::5] = -0.0
        x.reshape(-1)[1::7] = 0.0
        x.reshape(-1)[-1] = np.nan
    return x


def load(c, a):
    """a constant of a's bits, bitcast to a's type (so -0.0 and NaN survive the text)"""
    a = np.asarray(a)
    if a.dtype.kind != "f":
        return c.const(a)
    v = c.const(bits_of(a))
    return c.op("{r} = stablehlo.bitcast_convert %s : (%s) -> %s"
                % (v, ttype(a.shape, bits_of(a).dtype), ttype(a.shape, a.dtype)))


def expect_bits(c, v, a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        v = c.op("{r} = stablehlo.bitcast_convert %s : (%s) -> %s"
                 % (v, ttype(a.shape, a.dtype), ttype(a.shape, bits_of(a).dtype)))
    c.expect(v, bits_of(a))


def scatter_text(x, idx, upd, xs, ishape, ushape, dt, uwd, iwd, sdod, ivd):
    t = ttype((), dt)
    dn = ("#stablehlo.scatter<update_window_dims = [%s], inserted_window_dims = [%s], "
          "scatter_dims_to_operand_dims = [%s], index_vector_dim = %d>"
          % (", ".join(map(str, uwd)), ", ".join(map(str, iwd)), ", ".join(map(str, sdod)), ivd))
    return ('{r} = "stablehlo.scatter"(%s, %s, %s) <{indices_are_sorted = true, '
            "scatter_dimension_numbers = %s, unique_indices = true}> %s : (%s, %s, %s) -> %s"
            % (x, idx, upd, dn, body2(dt, "stablehlo.add %a, %b : {t}"), ttype(xs, dt),
               ttype(ishape, np.int32), ttype(ushape, dt), ttype(xs, dt)))


def window_case(name, xs, dt, start_dim, start, ushape, negate=False, inserted=()):
    """x.at[window].add(u) with the window at `start` along start_dim, u of ushape"""
    c = Case(name)
    x = operand(xs, dt)
    u = (RNG.standard_normal(ushape) if np.dtype(dt).kind == "f" else
         RNG.integers(-50, 50, ushape)).astype(dt)
    xv, uv = load(c, x), load(c, u)
    if negate:
        uv = c.op("{r} = stablehlo.negate %s : %s" % (uv, ttype(ushape, dt)))
        u = -u
    iv = c.const(np.array([start], np.int32))
    uwd = list(range(len(ushape)))
    r = c.op(scatter_text(xv, iv, uv, xs, (1,), ushape, dt, uwd, list(inserted), [start_dim], 0))
    want = x.copy()
    wshape = list(ushape)
    for d in inserted:
        wshape.insert(d, 1)
    lo = [0] * len(xs)
    lo[start_dim] = start
    inside = all(lo[d] + wshape[d] <= xs[d] for d in range(len(xs)))
    if inside:  # else the whole window is skipped (XLA; compiler/fold.c keeps the scatter)
        sl = tuple(slice(lo[d], lo[d] + wshape[d]) for d in range(len(xs)))
        want[sl] = want[sl] + u.reshape(wshape)
    expect_bits(c, r, want)
    return c


def splat_case():
    """jnp.zeros_like(p).at[..., 1].add(-9.81) on a -0.0 splat: folded to a constant"""
    c = Case("splat operand and splat update: a constant; -0.0 kept outside the window")
    xs, dt = (4, 6, 3), np.float32
    x = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [] : (%s) -> %s"
             % (c.splat((), dt, -0.0), ttype((), dt), ttype(xs, dt)))
    u = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [] : (%s) -> %s"
             % (c.splat((), dt, -9.81), ttype((), dt), ttype((4, 6), dt)))
    iv = c.const(np.array([1], np.int32))
    r = c.op(scatter_text(x, iv, u, xs, (1,), (4, 6), dt, [0, 1], [2], [2], 0))
    want = np.full(xs, -0.0, dt)
    want[..., 1] = np.float32(-0.0) + np.float32(-9.81)
    expect_bits(c, r, want)
    return c


def loop_case():
    """a while body whose mask (iota == 0, broadcast twice) is computed from constants alone:
    hoisted to the start of the body, the broadcasts folded into one"""
    c = Case("loop: invariant mask hoisted, select with a broadcast of a broadcast")
    n, dt = 6, np.float32
    v0 = RNG.standard_normal((n, 8, 3)).astype(dt)
    v = load(c, v0)
    t3, tb = ttype((n, 8, 3), dt), ttype((n, 8, 3), np.bool_)
    i0 = c.splat((), np.int32, 0)
    body = """  %w:2 = stablehlo.while(%i = I0, %x = V) : tensor<i32>, T3
    cond {
      %k = stablehlo.constant dense<3> : tensor<i32>
      %lt = stablehlo.compare LT, %i, %k, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %h = stablehlo.constant dense<5.000000e-01> : tensor<f32>
      %hb = stablehlo.broadcast_in_dim %h, dims = [] : (tensor<f32>) -> T3
      %y = stablehlo.multiply %x, %hb : T3
      %io = stablehlo.iota dim = 0 : tensor<NNxi32>
      %z = stablehlo.constant dense<1> : tensor<NNxi32>
      %m = stablehlo.compare EQ, %io, %z, SIGNED : (tensor<NNxi32>, tensor<NNxi32>) -> tensor<NNxi1>
      %m1 = stablehlo.broadcast_in_dim %m, dims = [1] : (tensor<NNxi1>) -> tensor<1xNNxi1>
      %m2 = stablehlo.broadcast_in_dim %m1, dims = [1, 0] : (tensor<1xNNxi1>) -> TB
      %zero = stablehlo.constant dense<-0.000000e+00> : T3
      %s = stablehlo.select %m2, %zero, %y : TB, T3
      %one = stablehlo.constant dense<1> : tensor<i32>
      %i1 = stablehlo.add %i, %one : tensor<i32>
      stablehlo.return %i1, %s : tensor<i32>, T3
    }"""
    for k, val in (("I0", i0), ("V", v), ("T3", t3), ("TB", tb), ("NN", str(n))):
        body = body.replace(k, val)
    c.raw(body)
    want = v0.copy()
    for _ in range(3):
        want = want * np.float32(0.5)
        want[1] = -0.0
    expect_bits(c, "%w#1", want)
    return c


def main():
    cases = [
        window_case("f32 [4,8,3] += u[4,7,3] at dim 1 offset 0", (4, 8, 3), np.float32, 1, 0, (4, 7, 3)),
        window_case("f32 [4,8,3] += u[4,7,3] at dim 1 offset 1", (4, 8, 3), np.float32, 1, 1, (4, 7, 3)),
        window_case("f32 [5,8,3] += u[4,8,3] at dim 0 offset 1", (5, 8, 3), np.float32, 0, 1, (4, 8, 3)),
        window_case("f32 negated update: subtract, +0.0 padding", (4, 8, 3), np.float32, 1, 1, (4, 7, 3),
                    negate=True),
        window_case("f32 negated update at dim 0", (5, 8, 3), np.float32, 0, 0, (4, 8, 3), negate=True),
        window_case("f64 [6,20] += u[5,20] at dim 0 offset 1", (6, 20), np.float64, 0, 1, (5, 20)),
        window_case("f64 negated update", (6, 20), np.float64, 0, 0, (5, 20), negate=True),
        window_case("i32 [6,20] += u[5,20]", (6, 20), np.int32, 0, 1, (5, 20)),
        window_case("f32 inserted dim: row 2 of [5,24] += u[24]", (5, 24), np.float32, 0, 2, (24,),
                    inserted=(0,)),
        window_case("f32 window out of bounds: skipped", (4, 8, 3), np.float32, 1, 2, (4, 7, 3)),
        window_case("f32 short runs (u[4,6] into [..., 1]): the scatter stays", (4, 6, 3), np.float32, 2, 1,
                    (4, 6), inserted=(2,)),
        splat_case(),
        loop_case(),
    ]
    write_beside(__file__, "window_cases.mlir", cases,
                 "one-window scatter-adds at constant indices, loop-invariant masks")


if __name__ == "__main__":
    main()
