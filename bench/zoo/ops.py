"""Operation families in plain jax.numpy: reductions of every kind over every axis,
normalization and softmax over every axis, cumulative ops, sort/top_k, gather/scatter.
Each workload returns a dict keyed by the sub-case, so a mismatch names it."""
import zlib

import numpy as np

from . import normal, uniform, workload

X2 = (256, 512)
X4 = (8, 16, 32, 32)


def _reductions(axis):
    import jax.numpy as jnp
    from jax.scipy.special import logsumexp

    def reduce_all(x):
        out = {
            "sum": jnp.sum(x, axis=axis), "max": jnp.max(x, axis=axis),
            "min": jnp.min(x, axis=axis), "prod": jnp.prod(1 + 0.01 * x, axis=axis),
            "mean": jnp.mean(x, axis=axis), "var": jnp.var(x, axis=axis),
            "logsumexp": logsumexp(x, axis=axis),
        }
        if axis is None or isinstance(axis, int):  # argmax/argmin take one axis (or none)
            out["argmax"] = jnp.argmax(x, axis=axis)
            out["argmin"] = jnp.argmin(x, axis=axis)
        return out
    return reduce_all


def _reg_reduce(name, shape, axis, what):
    @workload(name, f"sum, max, min, prod(1+0.01x), mean, var, logsumexp"
                    f"{', argmax, argmin' if axis is None or isinstance(axis, int) else ''} of "
                    f"f32{list(shape)} over {what}")
    def make():
        return _reductions(axis), (normal(shape, seed=zlib.crc32(name.encode()) % 1000),)


_reg_reduce("reduce_2d_axis0", X2, 0, "axis 0 (columns: strided)")
_reg_reduce("reduce_2d_axis1", X2, 1, "axis 1 (rows: contiguous)")
_reg_reduce("reduce_2d_all", X2, None, "all elements")
for _ax in range(4):
    _reg_reduce(f"reduce_4d_axis{_ax}", X4, _ax, f"axis {_ax}")
_reg_reduce("reduce_4d_axes23", X4, (2, 3), "axes (2, 3) (spatial, as a global pool)")


def _reg_norm(axis):
    @workload(f"norm_softmax_4d_axis{axis}",
              f"softmax, log_softmax, standardize ((x-mean)/sqrt(var+eps)) and an RMS norm of "
              f"f32{list(X4)} over axis {axis}")
    def make():
        import jax
        import jax.numpy as jnp

        def f(x):
            return {"softmax": jax.nn.softmax(x, axis=axis),
                    "log_softmax": jax.nn.log_softmax(x, axis=axis),
                    "standardize": jax.nn.standardize(x, axis=axis, epsilon=1e-5),
                    "rmsnorm": x * jax.lax.rsqrt(jnp.mean(x * x, axis=axis, keepdims=True)
                                                 + 1e-6)}
        return f, (normal(X4, seed=10 + axis),)


for _ax in range(4):
    _reg_norm(_ax)


def _reg_cum(axis):
    @workload(f"cumulative_2d_axis{axis}",
              f"cumsum, cumprod(1+0.01x), cummax, cummin, logcumsumexp of f32{list(X2)} over "
              f"axis {axis}, and an int32 cumsum")
    def make():
        import jax
        import jax.numpy as jnp

        def f(x, i):
            return {"cumsum": jnp.cumsum(x, axis=axis),
                    "cumprod": jnp.cumprod(1 + 0.01 * x, axis=axis),
                    "cummax": jax.lax.cummax(x, axis=axis),
                    "cummin": jax.lax.cummin(x, axis=axis),
                    "logcumsumexp": jax.lax.cumlogsumexp(x, axis=axis),
                    "cumsum_i32": jnp.cumsum(i, axis=axis)}
        ints = np.random.RandomState(20).randint(-50, 50, X2).astype(np.int32)
        return f, (normal(X2, seed=20 + axis), ints)


_reg_cum(0)
_reg_cum(1)


@workload("sort_argsort",
          "jnp.sort of f32[64,1024] along rows and along columns, argsort along rows, sort of "
          "a f32[16384] vector and of int32[64,1024] rows")
def sort_argsort():
    import jax.numpy as jnp

    def f(x, v, i):
        return {"sort_rows": jnp.sort(x, axis=1), "sort_cols": jnp.sort(x, axis=0),
                "argsort_rows": jnp.argsort(x, axis=1), "sort_vec": jnp.sort(v),
                "sort_i32": jnp.sort(i, axis=1)}
    ints = np.random.RandomState(30).randint(-10**6, 10**6, (64, 1024)).astype(np.int32)
    return f, (normal((64, 1024), seed=30), normal((16384,), seed=31), ints)


@workload("top_k",
          "lax.top_k (values and indices) k=1, 8, 64 of f32[128,4096] rows (logits of a "
          "sampler / beam search)")
def top_k():
    import jax

    def f(x):
        return {f"k{k}": jax.lax.top_k(x, k) for k in (1, 8, 64)}
    return f, (normal((128, 4096), seed=32),)


@workload("gather_ops",
          "gathers: table f32[4096,64] rows by int32[1024] ids, jnp.take_along_axis on "
          "[256,512] with [256,32] ids, x[:, ids] columns, a 2-D point gather x[r, c] of 4096 "
          "points, jnp.take with mode='clip' on out-of-range ids")
def gather_ops():
    import jax.numpy as jnp

    def f(table, ids, x, col_ids, r, c):
        return {"rows": table[ids],
                "take_along": jnp.take_along_axis(x, col_ids, axis=1),
                "cols": x[:, col_ids[0]],
                "points": x[r, c],
                "clip": jnp.take(table, ids * 3 - 100, axis=0, mode="clip")}
    rs = np.random.RandomState(40)
    return f, (normal((4096, 64), seed=41), rs.randint(0, 4096, 1024).astype(np.int32),
               normal(X2, seed=42), rs.randint(0, 512, (256, 32)).astype(np.int32),
               rs.randint(0, 256, 4096).astype(np.int32), rs.randint(0, 512, 4096).astype(np.int32))


@workload("scatter_ops",
          "scatters into f32[4096,64]: .at[ids].add of 1024 rows with duplicate ids, "
          ".at[].max, .at[unique ids].set, segment_sum into 256 segments, a 2-D point "
          ".at[r, c].add of 4096 scalars; int32 .at[].add (a histogram)")
def scatter_ops():
    import jax
    import jax.numpy as jnp

    def f(table, upd, ids, uniq, seg, x, r, c, vals):
        return {"add_dup": table.at[ids].add(upd),
                "max_dup": table.at[ids].max(upd),
                "set_unique": table.at[uniq].set(upd),
                "segment_sum": jax.ops.segment_sum(upd, seg, num_segments=256),
                "points_add": x.at[r, c].add(vals),
                "histogram": jnp.zeros(512, jnp.int32).at[c].add(1)}
    rs = np.random.RandomState(50)
    return f, (normal((4096, 64), seed=51), normal((1024, 64), seed=52),
               rs.randint(0, 512, 1024).astype(np.int32),
               rs.permutation(4096)[:1024].astype(np.int32),
               np.sort(rs.randint(0, 256, 1024)).astype(np.int32),
               normal(X2, seed=53), rs.randint(0, 256, 4096).astype(np.int32),
               rs.randint(0, 512, 4096).astype(np.int32), normal((4096,), seed=54))
