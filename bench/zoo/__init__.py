"""The model benchmark suite's workloads: programs written the way JAX users write them (flax
linen and nnx, optax, equinox, plain jax.numpy), each a function to jit plus its inputs.

A workload is registered with @workload(name, what, ...) on a `make()` that returns (fn, args):
fn is jitted as jax.jit(fn) and called as fn(*args); args are pytrees of host arrays. Nothing in
this package times anything: bench/models.py measures, python/tests/jax/test_bench_models.py
checks each workload once.

Correctness: outputs on cjrt are compared with XLA:CPU's leaf by leaf at the dtype's tolerance
(python/tests/jax/jaxcheck.py's table), scaled by the workload's `tol_scale` where a long
program accumulates rounding (the reason is written next to the workload), with an absolute
tolerance of at least rtol x the leaf's largest magnitude: the engines sum in different orders,
and a sum with cancellation is exact only to the scale of its terms, not of its result.

Train steps with Adam-like optimizers start from a warmed state: the workload's `advance(out,
args)` turns one step's outputs into the next step's inputs, and `warm` steps are run on
XLA:CPU before both engines run the checked (and timed) step. Adam's first step moves each
parameter by about lr * g/|g|, whose sign is rounding noise where g is near zero; with a
history in the moments that sensitivity is mostly gone (and a mid-training step is the
realistic one). A parameter whose gradient is zero in exact arithmetic (an attention key bias)
stays sensitive at any step: the models leave such parameters out.

A workload whose outputs are not unique (eigenvectors, QR and SVD factors: signs, order
within degenerate subspaces) has a `canon(out, args)` that maps its outputs to unique
quantities (reconstructions, absolute values, singular values) in float64 on the host, and
those are compared instead.
"""
import importlib
import importlib.util

import numpy as np

MODULES = ["flax_linen", "flax_nnx", "eqx_models", "transformer", "loops", "ops", "lowp",
           "linalg", "fft", "conv", "kinds"]

REGISTRY = []


class Workload:
    def __init__(self, name, what, make, needs=(), canon=None, tol_scale=1.0, tol=None,
                 advance=None, warm=0, x64=False):
        self.name, self.what, self.make = name, what, make
        self.x64 = x64  # made, compiled and run under jax.enable_x64 (float64 models)
        self.advance, self.warm = advance, warm
        self.needs = tuple(needs)
        self.canon = canon
        self.tol_scale = tol_scale
        self.tol = tol  # {dtype name: (rtol, atol)} overriding the scaled defaults

    def missing(self):
        """The packages this workload needs that are not installed."""
        return [p for p in self.needs if importlib.util.find_spec(p) is None]

    def __repr__(self):
        return f"Workload({self.name})"


def workload(name, what, needs=(), canon=None, tol_scale=1.0, tol=None, advance=None, warm=0,
             x64=False):
    def deco(make):
        REGISTRY.append(Workload(name, what, make, needs, canon, tol_scale, tol, advance, warm,
                                 x64))
        return make
    return deco


def all_workloads():
    if not REGISTRY:
        for m in MODULES:
            importlib.import_module(f"{__name__}.{m}")
        names = [w.name for w in REGISTRY]
        dup = {n for n in names if names.count(n) > 1}
        if dup:
            raise RuntimeError(f"duplicate workload names: {sorted(dup)}")
    return list(REGISTRY)


def x64_scope(wl):
    """The context a workload is made, compiled, run and compared in: jax.enable_x64 for the
    float64 ones (a process-wide flag would change every other workload's dtypes)."""
    import contextlib

    import jax

    if not wl.x64:
        return contextlib.nullcontext()
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(True)
    from jax.experimental import enable_x64  # jax before 0.8
    return enable_x64()


def _wide(x):
    return np.asarray(x, np.complex128 if x.dtype.kind == "c" else np.float64)


def warm_args(wl, call, args):
    """The inputs of the step to check and time: `args` advanced by wl.warm steps of `call`
    (XLA:CPU's compiled function), for workloads that say so; `args` otherwise."""
    for _ in range(wl.warm):
        args = wl.advance(host(call(args)), args)
    return args


def _path_str(path):
    import jax

    return jax.tree_util.keystr(path) or "<root>"


def compare(wl, got, want, args):
    """Raises AssertionError naming the first output leaf where cjrt's `got` differs from
    XLA:CPU's `want` (dtype, shape or value beyond the tolerance)."""
    import jax
    import jaxcheck

    if wl.canon is not None:
        host_args = jax.tree.map(np.asarray, args)
        got = wl.canon(jax.tree.map(np.asarray, got), host_args)
        want = wl.canon(jax.tree.map(np.asarray, want), host_args)
        check_dtypes = False
    else:
        check_dtypes = True
    gl, gt = jax.tree_util.tree_flatten_with_path(got)
    wl_, wt = jax.tree_util.tree_flatten_with_path(want)
    if gt != wt:
        raise AssertionError(f"output structure {gt} != XLA:CPU's {wt}")
    for (path, g), (_, w) in zip(gl, wl_):
        g = np.asarray(jaxcheck._leaf_to_host(g))
        w = np.asarray(jaxcheck._leaf_to_host(w))
        name = np.dtype(w.dtype).name
        r, a = jaxcheck.tolerance(w.dtype)
        if w.dtype.kind in "fc" or name in ("bfloat16",) or name.startswith("float"):
            r, a = r * wl.tol_scale, a * wl.tol_scale
        if wl.tol and name in wl.tol:
            r, a = wl.tol[name]
        if w.dtype.kind in "fc" or name.startswith(("float", "bfloat")):
            finite = np.abs(_wide(w))[np.isfinite(_wide(w))]
            if finite.size:
                a = max(a, r * float(finite.max()))
        try:
            jaxcheck.assert_close(g, w, rtol=r, atol=a, check_dtypes=check_dtypes,
                                  what=_path_str(path))
        except AssertionError as e:
            # numpy's message: keep the lines that say how far off, drop the array dumps
            lines = [l.strip() for l in str(e).splitlines() if l.strip()]
            keep = [l for l in lines if not l.startswith(("x:", "y:", "[", "array"))]
            raise AssertionError(f"mismatch at {_path_str(path)} ({w.dtype}{list(w.shape)}): "
                                 + "; ".join(keep[:6])) from None


# ---- input helpers shared by the modules ----

def rng(seed=0):
    return np.random.RandomState(seed)


def normal(shape, dtype=np.float32, seed=0, scale=1.0):
    return (rng(seed).standard_normal(shape) * scale).astype(dtype)


def uniform(shape, dtype=np.float32, seed=0, low=-1.0, high=1.0):
    return rng(seed).uniform(low, high, shape).astype(dtype)


def labels(n, classes, seed=0):
    return rng(seed).randint(0, classes, size=(n,)).astype(np.int32)


def host(tree):
    """A pytree of jax arrays (e.g. flax params made on the default device) as numpy arrays,
    so that the harness commits them to each platform itself."""
    import jax

    def conv(x):
        if not hasattr(x, "shape"):
            return x
        if hasattr(x, "dtype") and jax.dtypes.issubdtype(x.dtype, jax.dtypes.prng_key):
            return x  # typed PRNG keys (nnx.Rngs state) stay jax arrays; device_put moves them
        return np.asarray(x)
    return jax.tree.map(conv, tree)
