"""Scatter and gather in every JAX indexing mode, on random dimension numbers and random indices
(negative, past the end, windows that stick out on either side), checked against a direct numpy
implementation of XLA's semantics and against XLA:CPU on the same inputs.

XLA's rules, which JAX's modes rely on:
  scatter: a window (full start index per operand dim; inserted and batching dims have size 1)
           is applied whole when 0 <= start and start + size <= dim in every dim, else skipped
           whole. mode="clip": JAX clamps the indices first; mode="fill"/"drop" (FILL_OR_DROP):
           JAX passes them through; "promise_in_bounds": only in-bound indices are used here.
  gather:  each start is clamped to [0, dim - slice size]; mode="fill" fills the whole slice
           when any start was out of that range (JAX's masking around a clamping gather).
"""
import numpy as np
import pytest

import jax
from jax import lax

import jaxcheck

SEED = 1127
NCONFIGS = 6  # per dtype
NDRAWS = 5  # inputs per config


# ---- numpy reference of XLA's semantics ----

def window_sizes(xshape, ushape, dn):
    """Window size per operand dim: 1 for inserted and batching dims."""
    sizes, pos = [], 0
    for d in range(len(xshape)):
        if d in dn.inserted_window_dims or d in dn.operand_batching_dims:
            sizes.append(1)
        else:
            sizes.append(ushape[dn.update_window_dims[pos]])
            pos += 1
    return sizes


def clamp_indices(idx, xshape, sizes, index_map):
    hi = np.array([xshape[d] - sizes[d] for d in index_map], np.int64)
    return np.clip(idx.astype(np.int64), 0, hi).astype(idx.dtype)


def ref_scatter(x, idx, upd, dn, combine):
    """XLA's scatter (index_vector_dim last): positions in order, each window whole or not at
    all."""
    sizes = window_sizes(x.shape, upd.shape, dn)
    wdims = [d for d in range(x.ndim)
             if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    ns = idx.ndim - 1
    nw = len(dn.update_window_dims)
    u = np.moveaxis(upd, dn.update_window_dims, range(ns, ns + nw))  # scatter dims, then window
    out = x.copy()
    for s in np.ndindex(*idx.shape[:-1]):
        start = [0] * x.ndim
        for k, d in enumerate(dn.scatter_dims_to_operand_dims):
            start[d] = int(idx[s + (k,)])
        for od, idim in zip(dn.operand_batching_dims, dn.scatter_indices_batching_dims):
            start[od] = s[idim]
        if any(start[d] < 0 or start[d] + sizes[d] > x.shape[d] for d in range(x.ndim)):
            continue
        for w in np.ndindex(*[sizes[d] for d in wdims]):
            at = list(start)
            for j, d in enumerate(wdims):
                at[d] += w[j]
            at = tuple(at)
            out[at] = combine(out[at], u[s + w])
    return out


def ref_gather(x, idx, dn, sizes, fill=None):
    """XLA's gather with clamped starts; with fill, JAX's FILL_OR_DROP masking."""
    nb = idx.ndim - 1
    sdims = [d for d in range(x.ndim)
             if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    tmp = np.empty(idx.shape[:-1] + tuple(sizes[d] for d in sdims), x.dtype)
    for b in np.ndindex(*idx.shape[:-1]):
        start = [0] * x.ndim
        oob = False
        for k, d in enumerate(dn.start_index_map):
            v = int(idx[b + (k,)])
            oob |= v < 0 or v > x.shape[d] - sizes[d]
            start[d] = min(max(v, 0), x.shape[d] - sizes[d])
        for od, idim in zip(dn.operand_batching_dims, dn.start_indices_batching_dims):
            start[od] = b[idim]
        sl = x[tuple(slice(start[d], start[d] + sizes[d]) for d in range(x.ndim))]
        sl = sl.reshape([sizes[d] for d in sdims])
        tmp[b] = fill if fill is not None and oob else sl
    return np.moveaxis(tmp, range(nb, nb + len(sdims)), dn.offset_dims)


# ---- random cases ----

def random_config(rng):
    """Shapes and dimension numbers of one random scatter (and the gather with the same
    numbers): operand rank 1 to 3, window, inserted and batching dims, windows of every size."""
    rank = int(rng.randint(1, 4))
    xshape = [int(rng.randint(1, 7)) for _ in range(rank)]
    roles = []
    for d in range(rank):
        r = rng.rand()
        roles.append("batch" if r < 0.15 and "batch" not in roles else
                     "inserted" if r < 0.4 else "window")
    sizes = [1 if roles[d] != "window" else
             int(rng.randint(2, xshape[d] + 1)) if xshape[d] > 1 and rng.rand() < 0.7 else
             int(rng.randint(1, xshape[d] + 1)) for d in range(rank)]
    batching = [d for d in range(rank) if roles[d] == "batch"]
    if len(batching) == rank:  # every dim a batching dim: make it a window dim
        roles[0], batching = "window", []
    inserted = [d for d in range(rank) if roles[d] == "inserted"]
    windows = [d for d in range(rank) if roles[d] == "window"]
    # the index vector: every inserted dim and most window dims, in random order
    mapped = inserted + [d for d in windows if rng.rand() < 0.8]
    if not mapped:
        mapped = [d for d in range(rank) if roles[d] != "batch"][:1]
    index_map = [int(d) for d in rng.permutation(mapped)]
    # scatter dims: one per batching dim (its size) and one or two free ones, shuffled
    sdims = [("b", d) for d in batching] + [("f", int(rng.randint(1, 5)))
                                            for _ in range(int(rng.randint(1, 3)))]
    sdims = [sdims[i] for i in rng.permutation(len(sdims))]
    sshape = [xshape[v] if kind == "b" else v for kind, v in sdims]
    sib = [next(i for i, (kind, v) in enumerate(sdims) if kind == "b" and v == d)
           for d in batching]
    ns, nw = len(sshape), len(windows)
    uwd = sorted(int(v) for v in rng.choice(ns + nw, nw, replace=False))
    ushape = [0] * (ns + nw)
    for i, v in zip([i for i in range(ns + nw) if i not in uwd], sshape):
        ushape[i] = v
    for i, d in zip(uwd, windows):
        ushape[i] = sizes[d]
    sdn = lax.ScatterDimensionNumbers(
        update_window_dims=tuple(uwd), inserted_window_dims=tuple(inserted),
        scatter_dims_to_operand_dims=tuple(index_map), operand_batching_dims=tuple(batching),
        scatter_indices_batching_dims=tuple(sib))
    gdn = lax.GatherDimensionNumbers(
        offset_dims=tuple(uwd), collapsed_slice_dims=tuple(inserted),
        start_index_map=tuple(index_map), operand_batching_dims=tuple(batching),
        start_indices_batching_dims=tuple(sib))
    return tuple(xshape), tuple(sshape), tuple(ushape), sdn, gdn, tuple(sizes)


def random_inputs(rng, cfg, dtype):
    """Operand, indices (half in range, half anywhere in [-dim - 1, dim + 1]: negative, past
    the end, windows sticking out on either side), in-range indices, updates."""
    xshape, sshape, ushape, sdn, _, sizes = cfg
    index_map = sdn.scatter_dims_to_operand_dims
    idx = np.empty(sshape + (len(index_map),), np.int32)
    ok = np.empty_like(idx)
    for k, d in enumerate(index_map):
        hi = xshape[d] - sizes[d]
        anyv = rng.randint(-xshape[d] - 1, xshape[d] + 2, sshape)
        idx[..., k] = np.where(rng.rand(*sshape) < 0.5, rng.randint(0, hi + 1, sshape), anyv)
        ok[..., k] = rng.randint(0, hi + 1, sshape)
    x = rng.randint(-3, 4, xshape).astype(dtype)
    upd = rng.randint(-2, 3, ushape).astype(dtype)
    return x, idx, ok, upd


def partial_windows(idx, xshape, sizes, index_map):
    """How many windows are partly in and partly out of bounds in some mapped dim."""
    n = 0
    for s in np.ndindex(*idx.shape[:-1]):
        n += any(v < 0 < v + sizes[d] or v < xshape[d] < v + sizes[d]
                 for d, v in ((d, int(idx[s + (k,)])) for k, d in enumerate(index_map)))
    return n


def apply_fn(v):
    return v * 2 + 1  # not one binary op of its arguments: the kernel runs the body itself


COMBINERS = {  # name -> (lax function or None for scatter_apply, numpy combine)
    "scatter": (lax.scatter, lambda a, b: b),
    "add": (lax.scatter_add, lambda a, b: a + b),
    "mul": (lax.scatter_mul, lambda a, b: a * b),
    "min": (lax.scatter_min, min),
    "max": (lax.scatter_max, max),
    "apply": (None, lambda a, b: apply_fn(a)),
}
SCATTER_MODES = ("clip", "fill", "promise_in_bounds")
GATHER_MODES = ("clip", "fill", "promise_in_bounds")
FILL = 77


def program(sdn, gdn, sizes):
    """Every scatter combiner and gather in every mode, one jitted function."""
    def f(x, idx, ok, upd):
        out = {}
        for mode in SCATTER_MODES:
            i = ok if mode == "promise_in_bounds" else idx
            for name, (fn, _) in COMBINERS.items():
                if fn is None:
                    out[f"{name}/{mode}"] = lax.scatter_apply(
                        x, i, apply_fn, sdn, update_shape=upd.shape, mode=mode)
                else:
                    out[f"{name}/{mode}"] = fn(x, i, upd, sdn, mode=mode)
        for mode in GATHER_MODES:
            i = ok if mode == "promise_in_bounds" else idx
            out[f"gather/{mode}"] = lax.gather(
                x, i, gdn, sizes, mode=mode, fill_value=FILL if mode == "fill" else None)
        return out
    return jax.jit(f)


def expected(x, idx, ok, upd, sdn, gdn, sizes):
    out = {}
    for mode in SCATTER_MODES:
        i = ok if mode == "promise_in_bounds" else idx
        if mode == "clip":
            i = clamp_indices(i, x.shape, window_sizes(x.shape, upd.shape, sdn),
                              sdn.scatter_dims_to_operand_dims)
        for name, (_, comb) in COMBINERS.items():
            out[f"{name}/{mode}"] = ref_scatter(x, i, upd, sdn, comb)
    for mode in GATHER_MODES:
        i = ok if mode == "promise_in_bounds" else idx
        out[f"gather/{mode}"] = ref_gather(x, i, gdn, sizes, FILL if mode == "fill" else None)
    return out


@pytest.mark.parametrize("dtype", ["float32", "int32"])
def test_scatter_gather_modes_random(cj, cpu, dtype):
    rng = np.random.RandomState(SEED + (dtype == "int32"))
    partial = 0
    for c in range(NCONFIGS):
        cfg = random_config(rng)
        f = program(*cfg[3:])
        for draw in range(NDRAWS):  # one compilation, several inputs
            x, idx, ok, upd = random_inputs(rng, cfg, np.dtype(dtype))
            partial += partial_windows(idx, x.shape, cfg[5], cfg[3].scatter_dims_to_operand_dims)
            what = f"config {c} draw {draw}: x{x.shape} idx{idx.shape} upd{upd.shape} {cfg[3]}"
            want = expected(x, idx, ok, upd, *cfg[3:])
            got = jaxcheck.run_on(cj, f, x, idx, ok, upd, jit=False)
            xla = jaxcheck.run_on(cpu, f, x, idx, ok, upd, jit=False)
            for key in want:
                np.testing.assert_array_equal(np.asarray(xla[key]), want[key],
                                              err_msg=f"XLA:CPU vs the reference, {key}, {what}")
                np.testing.assert_array_equal(np.asarray(got[key]), want[key],
                                              err_msg=f"cjrt vs the reference, {key}, {what}")
    assert partial >= 15  # the generator does make windows that stick out


# ---- explicit cases ----

DN1 = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(),
                                  scatter_dims_to_operand_dims=(0,))
IDX1 = np.array([[9], [-3], [3]], np.int32)


@pytest.mark.parametrize("mode", ["fill", "drop"])
def test_scatter_add_drops_whole_window(cj, mode):
    """The window at 9 (2 wide, operand of 10) is dropped whole, not its first element added."""
    f = jax.jit(lambda a, b: lax.scatter_add(a, IDX1, b, DN1, mode=mode))
    got = jaxcheck.run_on(cj, f, np.arange(10, dtype=np.float32),
                          np.full((3, 2), 100, np.float32), jit=False)
    np.testing.assert_array_equal(np.asarray(got), [0, 1, 2, 103, 104, 5, 6, 7, 8, 9])


@pytest.mark.parametrize("op", ["scatter", "scatter_add", "scatter_mul", "scatter_min",
                                "scatter_max"])
def test_scatter_partial_windows_vs_xla(op, cj, cpu):
    """Windows sticking out past the end and before the start, every combiner, 2-d."""
    dn = lax.ScatterDimensionNumbers(update_window_dims=(1, 2), inserted_window_dims=(),
                                     scatter_dims_to_operand_dims=(0, 1))
    idx = np.array([[3, 0], [0, 4], [-1, 1], [1, -2], [2, 2], [4, 4]], np.int32)
    x = np.arange(30, dtype=np.float32).reshape(5, 6)
    u = np.full((6, 2, 3), -50 if op == "scatter_min" else 50, np.float32)
    f = lambda a, b: getattr(lax, op)(a, idx, b, dn, mode="fill")
    jaxcheck.compare(f, x, u)
    want = ref_scatter(x, idx, u, dn, COMBINERS[op.replace("scatter_", "") if op != "scatter"
                                               else "scatter"][1])
    np.testing.assert_array_equal(np.asarray(jaxcheck.run_on(cj, f, x, u)), want)


def test_scatter_max_jvp_partial_window(cj, cpu):
    """scatter_max's JVP counts how many updates reach each element; a partly applied window
    made the counts disagree with the values (a NaN on jax 0.12)."""
    x = np.arange(10, dtype=np.float32)
    u = np.full((3, 2), 100, np.float32)
    f = jax.jit(lambda a, b: lax.scatter_max(a, IDX1, b, DN1, mode="fill"))
    jvp = lambda a, b, ta, tb: jax.jvp(f, (a, b), (ta, tb))
    args = (x, u, np.ones_like(x), np.ones_like(u))
    primal, tangent = jaxcheck.run_on(cj, jvp, *args)
    np.testing.assert_array_equal(np.asarray(tangent), np.ones(10, np.float32))
    np.testing.assert_array_equal(np.asarray(primal), [0, 1, 2, 100, 100, 5, 6, 7, 8, 9])
    jaxcheck.compare(jvp, *args)
