#!/usr/bin/env python3
"""Writes the test cases of the indexing, sorting and window ops:

  tests/ops_gather/cases.mlir   gather, dynamic_gather, torch_index_select, scatter
  tests/ops_sort/cases.mlir     sort, chlo.top_k
  tests/ops_window/cases.mlir   reduce_window, select_and_scatter, map

Expected values come from the reference implementations below: plain loops over numpy arrays
that follow the StableHLO specification's definitions (docs/spec.md) line by line, written
independently of the C kernels, except where XLA (which JAX relies on) is stricter than the spec's
wording: scatter skips a whole update window when any of its elements is out of bounds (the spec
skips only those elements). Large cases (which take the kernels' parallel and bulk paths)
compare with results derived by hand and computed in the program by other ops (reverse, iota,
transpose), to keep the files small. Run with the venv that has numpy and ml_dtypes:

  /work/venv-probe/bin/python tests/ops_gather/make_cases.py
"""
import os
import sys

sys.dont_write_bytecode = True

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from casegen import BF16, Case, ErrorCase, array_attr, body2, i64s, ttype, write  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
rng = np.random.default_rng(20260817)


def clamp(v, lo, hi):
    return max(lo, min(v, hi))


# ======================================================================== references

def start_index(si, bi, ivd):
    """the start index vector of si at the batch position bi (index_vector_dim ivd)"""
    if ivd < si.ndim:
        idx = list(bi)
        idx.insert(ivd, slice(None))
        return si[tuple(idx)]
    return [si[tuple(bi)]]


def spread(inner, rank, skipped):
    """a full index of rank dims: 0 in the skipped ones, the inner (window) indices in the rest"""
    it = iter(inner)
    return [0 if d in skipped else next(it) for d in range(rank)]


def gather_ref(x, si, offset_dims, collapsed, obatch, ibatch, sim, ivd, ss):
    batch_shape = [si.shape[d] for d in range(si.ndim) if d != ivd]
    offset_sizes = [ss[d] for d in range(x.ndim) if d not in collapsed and d not in obatch]
    rank = len(batch_shape) + len(offset_sizes)
    batch_dims = [d for d in range(rank) if d not in offset_dims]
    shape = [0] * rank
    for i, d in enumerate(batch_dims):
        shape[d] = batch_shape[i]
    for i, d in enumerate(offset_dims):
        shape[d] = offset_sizes[i]
    res = np.zeros(shape, x.dtype)
    for ri in np.ndindex(*shape):
        bi = [ri[d] for d in batch_dims]
        start = start_index(si, bi, ivd)
        fsi = [0] * x.ndim
        for ds, do in enumerate(sim):
            fsi[do] = clamp(int(start[ds]), 0, x.shape[do] - ss[do])
        fbi = [0] * x.ndim
        for ob, ib in zip(obatch, ibatch):
            fbi[ob] = bi[ib - (0 if ib < ivd else 1)]
        foi = spread([ri[d] for d in offset_dims], x.ndim, collapsed + obatch)
        res[ri] = x[tuple(a + b + c for a, b, c in zip(fsi, fbi, foi))]
    return res


def scatter_ref(inputs, si, updates, uwd, iwd, ibd, sibd, sdod, ivd, comp, out_dtypes=None):
    """The spec's definition, but an update is applied only when its whole window is in bounds
    (0 <= full start index and full start index + window size <= dim in every dim), as XLA does
    and JAX's mode="fill"/"drop" needs."""
    out_dtypes = out_dtypes or [x.dtype for x in inputs]
    results = [x.astype(dt) for x, dt in zip(inputs, out_dtypes)]
    u0 = updates[0]
    rank = inputs[0].ndim
    wsize, j = [], 0
    for d in range(rank):
        if d in iwd or d in ibd:
            wsize.append(1)
        else:
            wsize.append(u0.shape[uwd[j]])
            j += 1
    usd = [d for d in range(u0.ndim) if d not in uwd]
    for ui in np.ndindex(*u0.shape):
        usi = [ui[d] for d in usd]
        start = start_index(si, usi, ivd)
        fsi = [0] * rank
        for ds, din in enumerate(sdod):
            fsi[din] = int(start[ds])
        fbi = [0] * rank
        for ib, sb in zip(ibd, sibd):
            fbi[ib] = usi[sb - (0 if sb < ivd else 1)]
        fwi = spread([ui[d] for d in uwd], rank, iwd + ibd)
        ri = tuple(a + b + c for a, b, c in zip(fsi, fbi, fwi))
        if all(0 <= fsi[d] + fbi[d] <= results[0].shape[d] - wsize[d] for d in range(rank)):
            cur = [r[ri] for r in results]
            upd = [np.asarray(u[ui]).astype(dt) for u, dt in zip(updates, out_dtypes)]
            vals = comp(cur, upd)
            for r, v in zip(results, vals):
                r[ri] = v
    return results


def wrap(f):
    """applies a numpy ufunc to 1-element arrays (integer arithmetic wraps silently)"""
    def g(a, b):
        with np.errstate(all="ignore"):
            return f(np.asarray([a]), np.asarray([b]))[0]
    return g


# ======================================================================== gather family

# the fields of #stablehlo.gather<> and #stablehlo.scatter<> before index_vector_dim; the middle
# three are written only when not empty
GATHER_DIMS = ("offset_dims", "collapsed_slice_dims", "operand_batching_dims",
               "start_indices_batching_dims", "start_index_map")
SCATTER_DIMS = ("update_window_dims", "inserted_window_dims", "input_batching_dims",
                "scatter_indices_batching_dims", "scatter_dims_to_operand_dims")


def dims_attr(kind, names, *dims):
    """#stablehlo.<kind><...>: dims are the five fields' values and the index_vector_dim"""
    parts = ["%s = %s" % (n, i64s(d)) for k, (n, d) in enumerate(zip(names, dims))
             if d or k in (0, 4)]
    parts.append("index_vector_dim = %d" % dims[5])
    return "#stablehlo.%s<%s>" % (kind, ", ".join(parts))


def gather_op(c, vx, vi, dims, ss, types, sorted_=False):
    """a stablehlo.gather of vx at the indices vi: dims the gather fields and index_vector_dim
    (dims_attr), ss the slice sizes, types the operand's, the indices' and the result's"""
    return c.op('{r} = "stablehlo.gather"(%s, %s) <{dimension_numbers = %s, slice_sizes = %s%s}> '
                ': (%s, %s) -> %s' % ((vx, vi, dims_attr("gather", GATHER_DIMS, *dims), array_attr(ss),
                                       ", indices_are_sorted = true" if sorted_ else "") + types))


def gather_case(name, x, si, offset_dims, collapsed, obatch, ibatch, sim, ivd, ss, sorted_=False):
    c = Case(name)
    e = gather_ref(x, si, offset_dims, collapsed, obatch, ibatch, sim, ivd, ss)
    vx, vi = c.const(x), c.const(si)
    r = gather_op(c, vx, vi, (offset_dims, collapsed, obatch, ibatch, sim, ivd), ss,
                  (ttype(x.shape, x.dtype), ttype(si.shape, si.dtype), ttype(e.shape, e.dtype)),
                  sorted_)
    c.expect(r, e)
    return c


def index_select_case(name, x, idx, dim, batch_dims, e):
    c = Case(name)
    r = c.op('{r} = "stablehlo.torch_index_select"(%s, %s) {dim = %d : i64, batch_dims = %d : i64} : '
             '(%s, %s) -> %s' % (c.const(x), c.const(idx), dim, batch_dims, ttype(x.shape, x.dtype),
                                 ttype(idx.shape, idx.dtype), ttype(e.shape, e.dtype)))
    c.expect(r, e)
    return c


def gather_cases():
    cs = []
    # the spec's example (batching dims)
    x = np.arange(1, 49, dtype=np.int32).reshape(2, 3, 4, 2)
    si = np.array([[[[0, 0], [1, 0], [2, 1]], [[0, 1], [1, 1], [0, 9]]],
                   [[[0, 0], [2, 1], [2, 2]], [[1, 2], [0, 1], [1, 0]]]], np.int64)
    cs.append(gather_case("spec example with batching dims", x, si, [3, 4], [1], [0], [1], [2, 1], 3,
                          [1, 1, 2, 2]))
    # rows of a matrix (embedding lookup), indices out of range on both sides are clamped
    x = rng.standard_normal((7, 5)).astype(np.float32)
    si = np.array([[3], [0], [6], [-4], [100], [2]], np.int32)
    cs.append(gather_case("embedding rows, clamped", x, si, [1], [0], [], [], [0], 1, [1, 5]))
    # index_vector_dim = 0, two index components, a 2x3 window, unsigned indices
    x = rng.integers(-100, 100, (6, 7, 3)).astype(np.int16)
    si = np.array([[0, 5, 4, 1], [2, 1, 6, 9]], np.uint32)
    cs.append(gather_case("ivd 0, window 2x3x3, ui32 indices", x, si, [1, 2, 3], [], [], [], [0, 1], 0,
                          [2, 3, 3]))
    # index_vector_dim = rank (scalar indices), collapsed inner dim, offset dims first
    x = rng.standard_normal((4, 6)).astype(np.float64)
    si = np.array([[5, 0, 2], [1, 7, -1]], np.int8)
    cs.append(gather_case("scalar indices into the inner dim", x, si, [0], [1], [], [], [1], 2, [4, 1]))
    # a window in the middle, start map reversed
    x = (np.arange(5 * 4 * 6) % 23).astype(np.uint8).reshape(5, 4, 6)
    si = np.array([[[1, 3], [0, 0]], [[2, 4], [9, 9]], [[3, 1], [1, 2]]], np.int64)
    cs.append(gather_case("start_index_map reversed", x, si, [2, 3], [0], [], [], [2, 0], 2,
                          [1, 2, 3]))
    # batching dims not leading, bf16
    x = rng.standard_normal((3, 4, 5)).astype(BF16)
    si = np.array([[[2], [0], [4]], [[1], [1], [3]]], np.int32).transpose(1, 0, 2).copy()  # 3x2x1
    cs.append(gather_case("batching dim 0 with indices dim 0, bf16", x, si, [2], [2], [0], [0], [2], 2,
                          [1, 4, 1]))
    # complex and bool operands
    x = (rng.standard_normal((4, 3)) + 1j * rng.standard_normal((4, 3))).astype(np.complex64)
    si = np.array([[3], [1]], np.int32)
    cs.append(gather_case("complex rows", x, si, [1], [0], [], [], [0], 1, [1, 3]))
    x = rng.integers(0, 2, (5, 4)).astype(np.bool_)
    si = np.array([[4, 1], [0, 3], [2, 2]], np.int64)
    cs.append(gather_case("bool 2x2 windows", x, si, [1, 2], [], [], [], [0, 1], 1, [2, 2]))
    # empty batch
    x = rng.standard_normal((3, 3)).astype(np.float32)
    si = np.zeros((0, 1), np.int32)
    cs.append(gather_case("no indices", x, si, [1], [0], [], [], [0], 1, [1, 3]))
    # large: every row of a 512x128 matrix in reverse order (parallel path): = reverse(x, 0)
    c = Case("large row gather = reverse", threads=2)
    x = c.op("{r} = stablehlo.iota dim = 1 : tensor<512x128xf32>")
    y = c.op("{r} = stablehlo.iota dim = 0 : tensor<512x128xf32>")
    xv = c.op("{r} = stablehlo.add %s, %s : tensor<512x128xf32>" % (x, c.op(
        "{r} = stablehlo.multiply %s, %s : tensor<512x128xf32>" % (y, c.splat((512, 128), np.float32, 1000.0)))))
    idx = c.op("{r} = stablehlo.iota dim = 0 : tensor<512x1xi32>")
    ridx = c.op("{r} = stablehlo.reverse %s, dims = [0] : tensor<512x1xi32>" % idx)
    g = gather_op(c, xv, ridx, ([1], [0], [], [], [0], 1), [1, 128],
                  ("tensor<512x128xf32>", "tensor<512x1xi32>", "tensor<512x128xf32>"))
    rev = c.op("{r} = stablehlo.reverse %s, dims = [0] : tensor<512x128xf32>" % xv)
    c.expect_same(g, rev, (512, 128), np.float32)
    cs.append(c)
    # large: element gather with (j, i) indices = transpose
    c = Case("large element gather = transpose", threads=2)
    a = c.op("{r} = stablehlo.iota dim = 0 : tensor<256x256x1xi32>")
    b = c.op("{r} = stablehlo.iota dim = 1 : tensor<256x256x1xi32>")
    ij = c.op("{r} = stablehlo.concatenate %s, %s, dim = 2 : (tensor<256x256x1xi32>, tensor<256x256x1xi32>) -> "
              "tensor<256x256x2xi32>" % (b, a))
    xi = c.op("{r} = stablehlo.iota dim = 0 : tensor<65536xi32>")
    xm = c.op("{r} = stablehlo.reshape %s : (tensor<65536xi32>) -> tensor<256x256xi32>" % xi)
    g = gather_op(c, xm, ij, ([], [0, 1], [], [], [0, 1], 2), [1, 1],
                  ("tensor<256x256xi32>", "tensor<256x256x2xi32>", "tensor<256x256xi32>"))
    t = c.op("{r} = stablehlo.transpose %s, dims = [1, 0] : (tensor<256x256xi32>) -> tensor<256x256xi32>" % xm)
    c.expect_same(g, t, (256, 256), np.int32)
    cs.append(c)
    # dynamic_gather with constant slice sizes
    x = rng.standard_normal((5, 6)).astype(np.float32)
    si = np.array([[1, 2], [4, 5], [-1, 3]], np.int32)
    e = gather_ref(x, si, [1, 2], [], [], [], [0, 1], 1, [2, 3])
    c = Case("dynamic_gather with constant slice sizes")
    vx, vi, vs = c.const(x), c.const(si), c.const(np.array([2, 3], np.int32))
    r = c.op('{r} = "stablehlo.dynamic_gather"(%s, %s, %s) <{dimension_numbers = #stablehlo.gather<'
             'offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1>}> : '
             '(tensor<5x6xf32>, tensor<3x2xi32>, tensor<2xi32>) -> tensor<3x2x3xf32>' % (vx, vi, vs))
    c.expect(r, e)
    cs.append(c)
    cs.append(ErrorCase(
        "dynamic_gather with computed slice sizes", "slice_sizes must be a constant",
        "func.func @main(%s: tensor<2xi32>) -> tensor<3x2x3xf32> {\n"
        "  %x = stablehlo.constant dense<1.0> : tensor<5x6xf32>\n"
        "  %i = stablehlo.constant dense<0> : tensor<3x2xi32>\n"
        "  %r = \"stablehlo.dynamic_gather\"(%x, %i, %s) <{dimension_numbers = #stablehlo.gather<"
        "offset_dims = [1, 2], start_index_map = [0, 1], index_vector_dim = 1>}> : "
        "(tensor<5x6xf32>, tensor<3x2xi32>, tensor<2xi32>) -> tensor<3x2x3xf32>\n"
        "  return %r : tensor<3x2x3xf32>\n}\n"))
    # torch_index_select: numpy's take (batch_dims 0) and a per-batch take
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    idx = np.array([[4, 0], [2, 2], [1, 3]], np.int32)
    e = np.take(x, idx, axis=1)
    cs.append(index_select_case("torch_index_select dim 1", x, idx, 1, 0, e))
    x = rng.integers(-50, 50, (3, 6, 2)).astype(np.int64)
    idx = np.array([[5, 0, 1, 1], [2, 3, 4, 5], [0, 0, 0, 1]], np.int64)
    e = np.stack([np.take(x[b], idx[b], axis=0) for b in range(3)])  # 3x4x2
    cs.append(index_select_case("torch_index_select with batch_dims 1", x, idx, 1, 1, e))
    x = rng.integers(0, 200, (4, 3)).astype(np.uint8)
    idx = np.array(2, np.int32)
    e = np.take(x, idx, axis=1)
    cs.append(index_select_case("torch_index_select scalar index", x, idx, 1, 0, e))
    # blocked kernel paths (own generator, so the cases above keep their values): columns
    # x[:, ids] (one strided run per slice, f32) with a 2-D batch space whose inner dim crosses
    # the 256-position block, clamped ids; one-element slices with a batching dim and i64 ids
    r2 = np.random.default_rng(20261127)
    x = r2.standard_normal((6, 40)).astype(np.float32)
    si = r2.integers(-5, 45, (2, 300)).astype(np.int32)
    cs.append(gather_case("columns by a 2x300 id block, clamped", x, si, [0], [1], [], [], [1], 2,
                          [6, 1]))
    x = r2.standard_normal((3, 50)).astype(np.float64)
    si = r2.integers(-3, 53, (3, 270, 1)).astype(np.int64)
    cs.append(gather_case("take_along_axis elements, batching dim, i64 ids", x, si, [], [1], [0], [0],
                          [1], 2, [1, 1]))
    return cs


# ======================================================================== scatter

def scatter_case(name, inputs, si, updates, dims, body_dt, body_text, comp, unique=False,
                 out_dtypes=None):
    uwd, iwd, ibd, sibd, sdod, ivd = dims
    c = Case(name)
    es = scatter_ref(inputs, si, updates, uwd, iwd, ibd, sibd, sdod, ivd, comp, out_dtypes)
    vs = [c.const(x) for x in inputs]
    vi = c.const(si)
    vu = [c.const(u) for u in updates]
    n = len(inputs)
    types_in = ", ".join([ttype(x.shape, x.dtype) for x in inputs] + [ttype(si.shape, si.dtype)] +
                         [ttype(u.shape, u.dtype) for u in updates])
    types_out = ", ".join(ttype(e.shape, e.dtype) for e in es)
    res = "%%s%d" % c.n
    c.n += 1
    lhs = res if n == 1 else "%s:%d" % (res, n)
    c.raw('  %s = "stablehlo.scatter"(%s) <{scatter_dimension_numbers = %s%s}> %s : (%s) -> (%s)' % (
        lhs, ", ".join(vs + [vi] + vu), dims_attr("scatter", SCATTER_DIMS, uwd, iwd, ibd, sibd, sdod, ivd),
        ", unique_indices = true" if unique else "", body_text, types_in, types_out))
    for k, e in enumerate(es):
        c.expect(res if n == 1 else "%s#%d" % (res, k), e)
    return c


def scatter_cases():
    cs = []
    f32 = np.float32
    add = lambda cur, upd: [wrap(np.add)(cur[0], upd[0])]  # noqa: E731
    # duplicates, negative and out-of-range rows (windows partly out of bounds skipped whole)
    x = rng.standard_normal((6, 4)).astype(f32)
    si = np.array([[1, 0], [1, 0], [5, 2], [-1, 1], [2, -3], [4, 3], [7, 0]], np.int32)
    u = rng.standard_normal((7, 2, 3)).astype(f32)
    cs.append(scatter_case("add, duplicates, partial windows", [x], si, [u],
                           ([1, 2], [], [], [], [0, 1], 1), f32,
                           body2(f32, "stablehlo.add %a, %b : {t}"), add))
    # subtract (not commutative: current - update), general path, integer wrap
    x = rng.integers(-120, 120, (5,)).astype(np.int8)
    si = np.array([[0], [3], [3], [4], [0]], np.int64)
    u = rng.integers(-120, 120, (5,)).astype(np.int8)
    cs.append(scatter_case("subtract body, i8 wraps", [x], si, [u], ([], [0], [], [], [0], 1), np.int8,
                           body2(np.int8, "stablehlo.subtract %a, %b : {t}"),
                           lambda cur, upd: [wrap(np.subtract)(cur[0], upd[0])]))
    # variadic: keep the (value, index) pair with the smaller value (general path)
    vals = np.array([5.0, 1.0, 7.0, 3.0], f32)
    ids = np.array([0, 1, 2, 3], np.int32)
    si = np.array([[2], [0], [2], [1], [3], [0]], np.int32)
    uv = np.array([6.0, 0.5, 2.0, 1.0, 9.0, 0.25], f32)
    ui = np.array([10, 11, 12, 13, 14, 15], np.int32)
    body = ("({\n  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):\n"
            "    %lt = stablehlo.compare LT, %b, %a : (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "    %v = stablehlo.select %lt, %b, %a : tensor<i1>, tensor<f32>\n"
            "    %i = stablehlo.select %lt, %bi, %ai : tensor<i1>, tensor<i32>\n"
            "    stablehlo.return %v, %i : tensor<f32>, tensor<i32>\n  })")
    def argmin(cur, upd):
        return [upd[0], upd[1]] if upd[0] < cur[0] else [cur[0], cur[1]]
    cs.append(scatter_case("variadic argmin", [vals, ids], si, [uv, ui], ([], [0], [], [], [0], 1), None,
                           body, argmin))
    # replace with unique indices, scalar indices (index_vector_dim = rank), window in the middle
    x = rng.integers(0, 1000, (4, 5, 3)).astype(np.uint16)
    si = np.array([3, 0], np.int32)
    u = rng.integers(0, 1000, (4, 2, 3)).astype(np.uint16)
    cs.append(scatter_case("replace, scalar indices, middle dim", [x], si, [u], ([0, 2], [1], [], [], [1], 1),
                           np.uint16, ("({\n  ^bb0(%a: tensor<ui16>, %b: tensor<ui16>):\n"
                                       "    stablehlo.return %b : tensor<ui16>\n  })"),
                           lambda cur, upd: [upd[0]], unique=True))
    # index_vector_dim = 0, 2-d windows partially out of bounds, max
    x = rng.standard_normal((5, 6)).astype(np.float64)
    si = np.array([[0, 4, -1, 3], [1, 5, 2, -2]], np.int64)  # 2 x 4: columns are index vectors
    u = rng.standard_normal((2, 3, 4)).astype(np.float64)  # window 2x3, scatter dim last
    cs.append(scatter_case("max, ivd 0, partial 2x3 windows", [x], si, [u], ([0, 1], [], [], [], [0, 1], 0),
                           np.float64, body2(np.float64, "stablehlo.maximum %a, %b : {t}"),
                           lambda cur, upd: [max(cur[0], upd[0])]))
    # batching dims
    x = rng.integers(-9, 9, (2, 5, 3)).astype(np.int32)
    si = np.array([[[4], [0], [4]], [[1], [1], [2]]], np.int32)  # 2 x 3 x 1
    u = rng.integers(-9, 9, (2, 3, 3)).astype(np.int32)
    cs.append(scatter_case("add with batching dims", [x], si, [u], ([2], [1], [0], [0], [1], 2), np.int32,
                           body2(np.int32, "stablehlo.add %a, %b : {t}"), add))
    # promotion: i8 inputs and updates, the body computes in i32 (results are i32)
    x = rng.integers(-100, 100, (4,)).astype(np.int8)
    si = np.array([[1], [1], [3]], np.int32)
    u = np.array([100, 100, -128], np.int8)
    cs.append(scatter_case("promoted i8 -> i32 add", [x], si, [u], ([], [0], [], [], [0], 1), np.int32,
                           body2(np.int32, "stablehlo.add %a, %b : {t}"),
                           lambda cur, upd: [wrap(np.add)(cur[0], upd[0])], out_dtypes=[np.dtype(np.int32)]))
    # bf16 multiply, bool or, complex add, u64 indices beyond int64
    x = rng.standard_normal((3, 2)).astype(BF16)
    si = np.array([[2], [0], [2]], np.int32)
    u = rng.standard_normal((3, 2)).astype(BF16)
    cs.append(scatter_case("bf16 multiply", [x], si, [u], ([1], [0], [], [], [0], 1), BF16,
                           body2(BF16, "stablehlo.multiply %a, %b : {t}"),
                           lambda cur, upd: [(np.float32(cur[0]) * np.float32(upd[0])).astype(BF16)]))
    x = np.array([False, True, False, False])
    si = np.array([[0], [2], [2]], np.uint64)
    u = np.array([True, False, True])
    cs.append(scatter_case("bool or", [x], si, [u], ([], [0], [], [], [0], 1), np.bool_,
                           body2(np.bool_, "stablehlo.or %a, %b : {t}"), lambda cur, upd: [cur[0] | upd[0]]))
    x = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64)
    si = np.array([[1], [18446744073709551615], [1]], np.uint64)
    u = (rng.standard_normal(3) + 1j * rng.standard_normal(3)).astype(np.complex64)
    cs.append(scatter_case("complex add, huge unsigned index", [x], si, [u], ([], [0], [], [], [0], 1),
                           np.complex64, body2(np.complex64, "stablehlo.add %a, %b : {t}"),
                           lambda cur, upd: [cur[0] + upd[0]]))
    # large: scatter-add of 512 rows of 128 in reverse order, unique (parallel path)
    c = Case("large unique scatter-add = reverse", threads=2)
    upd = c.op("{r} = stablehlo.iota dim = 0 : tensor<512x128xf32>")
    col = c.op("{r} = stablehlo.iota dim = 1 : tensor<512x128xf32>")
    upd2 = c.op("{r} = stablehlo.add %s, %s : tensor<512x128xf32>" % (upd, col))
    base = c.op("{r} = stablehlo.iota dim = 1 : tensor<512x128xf32>")
    idx = c.op("{r} = stablehlo.iota dim = 0 : tensor<512x1xi32>")
    ridx = c.op("{r} = stablehlo.reverse %s, dims = [0] : tensor<512x1xi32>" % idx)
    s = c.op('{r} = "stablehlo.scatter"(%s, %s, %s) <{scatter_dimension_numbers = #stablehlo.scatter<'
             'update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], '
             'index_vector_dim = 1>, unique_indices = true}> %s : (tensor<512x128xf32>, tensor<512x1xi32>, '
             'tensor<512x128xf32>) -> tensor<512x128xf32>' % (base, ridx, upd2,
                                                               body2(f32, "stablehlo.add %a, %b : {t}")))
    rev = c.op("{r} = stablehlo.reverse %s, dims = [0] : tensor<512x128xf32>" % upd2)
    want = c.op("{r} = stablehlo.add %s, %s : tensor<512x128xf32>" % (base, rev))
    c.expect_same(s, want, (512, 128), f32)
    cs.append(c)
    # large: every element added 3 times through duplicate indices (serial path, ints)
    c = Case("large scatter-add with duplicates")
    idx0 = c.op("{r} = stablehlo.iota dim = 1 : tensor<3x4096x1xi32>")
    upd = c.op("{r} = stablehlo.iota dim = 1 : tensor<3x4096xi32>")
    zero = c.splat((4096,), np.int32, 0)
    s = c.op('{r} = "stablehlo.scatter"(%s, %s, %s) <{scatter_dimension_numbers = #stablehlo.scatter<'
             'update_window_dims = [], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], '
             'index_vector_dim = 2>}> %s : (tensor<4096xi32>, tensor<3x4096x1xi32>, tensor<3x4096xi32>) '
             '-> tensor<4096xi32>' % (zero, idx0, upd, body2(np.int32, "stablehlo.add %a, %b : {t}")))
    io = c.op("{r} = stablehlo.iota dim = 0 : tensor<4096xi32>")
    want = c.op("{r} = stablehlo.multiply %s, %s : tensor<4096xi32>" % (io, c.splat((4096,), np.int32, 3)))
    c.expect_same(s, want, (4096,), np.int32)
    cs.append(c)
    # windows sticking out on either side are dropped whole, on both kernel paths (a combiner
    # and a general body), expected values written out by hand: windows of 2 at 9 and at -1 in
    # a 10-element operand, and two in bounds (3, 0); JAX's mode="fill" passes such indices on
    x = np.arange(10, dtype=f32)
    si = np.array([[9], [-1], [3], [0]], np.int32)
    u = np.full((4, 2), 100, f32)
    want = np.array([100, 101, 2, 103, 104, 5, 6, 7, 8, 9], f32)
    assert (scatter_ref([x], si, [u], [1], [], [], [], [0], 1, add)[0] == want).all()
    general = ("({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
               "    %n = stablehlo.negate %b : tensor<f32>\n"
               "    %r = stablehlo.subtract %a, %n : tensor<f32>\n"
               "    stablehlo.return %r : tensor<f32>\n  })")
    for label, body in (("add", body2(f32, "stablehlo.add %a, %b : {t}")),
                        ("a - (-b), general path", general)):
        cs.append(scatter_case("windows partly out of bounds dropped whole, " + label, [x], si,
                               [u], ([1], [], [], [], [0], 1), f32, body, add))
    # 2-d windows sticking out in one dim only (rows in bounds, columns not), i32 multiply
    x = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    si = np.array([[1, 3], [0, 0], [0, -1], [1, 2]], np.int32)
    u = np.full((4, 2, 2), 2, np.int32)
    mul = lambda cur, upd: [wrap(np.multiply)(cur[0], upd[0])]  # noqa: E731
    want = np.array([[2, 4, 3, 4], [10, 12, 14, 16], [9, 10, 22, 24]], np.int32)
    assert (scatter_ref([x], si, [u], [1, 2], [], [], [], [0, 1], 1, mul)[0] == want).all()
    cs.append(scatter_case("2-d windows partly out of bounds dropped whole, multiply", [x], si,
                           [u], ([1, 2], [], [], [], [0, 1], 1), np.int32,
                           body2(np.int32, "stablehlo.multiply %a, %b : {t}"), mul))
    # an empty input whose size-0 dim is inserted but not in the index vector: no element can
    # be updated (the one-element-window path once wrote into the next buffer); a live neighbor
    # computed before and used after the scatter must keep its values
    c = Case("scatter into an empty input (unmapped inserted dim of size 0)")
    y0 = c.op("{r} = stablehlo.iota dim = 0 : tensor<16xf32>")
    y = c.op("{r} = stablehlo.add %s, %s : tensor<16xf32>" % (y0, y0))
    z = c.splat((0, 16), f32, 0.0)
    x = c.op("{r} = stablehlo.add %s, %s : tensor<0x16xf32>" % (z, z))
    si = c.const(np.array([[0], [1], [2], [3], [15]], np.int32))
    u = c.splat((5,), f32, 1000.0)
    s = c.op('{r} = "stablehlo.scatter"(%s, %s, %s) <{scatter_dimension_numbers = #stablehlo.scatter<'
             'update_window_dims = [], inserted_window_dims = [0, 1], scatter_dims_to_operand_dims = [1], '
             'index_vector_dim = 1>}> %s : (tensor<0x16xf32>, tensor<5x1xi32>, tensor<5xf32>) '
             '-> tensor<0x16xf32>' % (x, si, u, body2(f32, "stablehlo.add %a, %b : {t}")))
    y2 = c.op("{r} = stablehlo.add %s, %s : tensor<16xf32>" % (y, y0))
    c.expect_same(s, z, (0, 16), f32)
    c.expect(y2, 3 * np.arange(16, dtype=f32))
    cs.append(c)
    # whole rows by a block of 600 ids (the blocked rows path crosses its 256-id block), with
    # duplicates and out-of-range ids on both sides (own generator: the cases above keep their
    # values); max body
    r2 = np.random.default_rng(20261128)
    x = r2.standard_normal((40, 8)).astype(f32)
    si = r2.integers(-4, 44, (600, 1)).astype(np.int32)
    u = r2.standard_normal((600, 8)).astype(f32)
    cs.append(scatter_case("rows by 600 ids, duplicates, out of range", [x], si, [u],
                           ([1], [0], [], [], [0], 1), f32,
                           body2(f32, "stablehlo.add %a, %b : {t}"), add))
    mx = lambda cur, upd: [wrap(np.maximum)(cur[0], upd[0])]  # noqa: E731
    si = r2.integers(-2, 42, (300,)).astype(np.int64)
    u = r2.standard_normal((300, 8)).astype(f32)
    cs.append(scatter_case("rows max by 300 scalar i64 ids", [x], si, [u],
                           ([1], [0], [], [], [0], 1), f32,
                           body2(f32, "stablehlo.maximum %a, %b : {t}"), mx))
    cs += broadcast_update_cases()
    return cs


def broadcast_update_cases():
    """Scatters whose updates are a broadcast (an embedding's gradient: the pooled cotangent
    broadcast over the sequence), read through the broadcast's strides instead of materialized:
    broadcast over the middle dim and over the inner dim, a combiner and a general body, ids
    with duplicates and out of range. The broadcast's operand is computed (x * 2 + x) so that it
    is no constant to fold."""
    r3 = np.random.default_rng(20261129)
    cs = []
    f32 = np.float32
    ids = r3.integers(-1, 12, (3, 5, 1)).astype(np.int32)
    ids[0, 1, 0] = ids[2, 3, 0] = 4  # duplicates
    general = ("({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
               "    %n = stablehlo.negate %b : tensor<f32>\n"
               "    %r = stablehlo.subtract %a, %n : tensor<f32>\n"
               "    stablehlo.return %r : tensor<f32>\n  })")
    add = lambda cur, upd: [cur[0] + upd[0]]  # noqa: E731
    for gshape, bdims, label in (((3, 8), [0, 2], "over the middle dim"),
                                 ((3, 5), [0, 1], "over the inner dim")):
        g = r3.integers(-8, 8, gshape).astype(f32)
        u = np.broadcast_to(np.expand_dims(3 * g, 1 if bdims == [0, 2] else 2), (3, 5, 8))
        for body_label, body in (("add", body2(f32, "stablehlo.add %a, %b : {t}")),
                                 ("general body", general)):
            c = Case("scatter-add of a broadcast %s into zeros, %s" % (label, body_label))
            want = scatter_ref([np.zeros((12, 8), f32)], ids, [np.ascontiguousarray(u)], [2], [0], [],
                               [], [0], 2, add)[0]
            gv = c.const(g)
            gt = ttype(gshape, f32)
            g2 = c.op("{r} = stablehlo.add %s, %s : %s" % (gv, gv, gt))
            g3 = c.op("{r} = stablehlo.add %s, %s : %s" % (g2, gv, gt))
            ub = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = %s : (%s) -> tensor<3x5x8xf32>"
                      % (g3, i64s(bdims), gt))
            z = c.splat((), f32, 0.0)
            zb = c.op("{r} = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> "
                      "tensor<12x8xf32>" % z)
            vi = c.const(ids)
            s = c.op('{r} = "stablehlo.scatter"(%s, %s, %s) <{scatter_dimension_numbers = '
                     '#stablehlo.scatter<update_window_dims = [2], inserted_window_dims = [0], '
                     'scatter_dims_to_operand_dims = [0], index_vector_dim = 2>}> %s : '
                     '(tensor<12x8xf32>, tensor<3x5x1xi32>, tensor<3x5x8xf32>) -> tensor<12x8xf32>'
                     % (zb, vi, ub, body))
            c.expect(s, want)
            cs.append(c)
    return cs


if __name__ == "__main__":
    write(os.path.join(HERE, "cases.mlir"), gather_cases() + scatter_cases(),
          "gather, dynamic_gather, torch_index_select and scatter cases.")
    if len(sys.argv) < 2 or sys.argv[1] != "--gather-only":
        import make_cases_sw
        make_cases_sw.main()
