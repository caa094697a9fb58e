"""Helpers of the JAX suite: run one JAX function on cjrt and on XLA:CPU and compare.

    compare(f, *args)   jit f, put args on a cjrt device and on a CPU device, run both, check
                        every output leaf lives on the cjrt device and matches XLA:CPU in
                        dtype, shape and value (tolerance by dtype); returns the cjrt results.
"""
import collections
import os

import numpy as np

import jax
import jax.numpy as jnp

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - jax depends on ml_dtypes
    ml_dtypes = None

NDEV = 4  # devices of each platform (cjrt and XLA:CPU) in the suite

# rtol, atol by dtype name: XLA:CPU and cjrt use different polynomial approximations of the
# transcendental functions, so floats match to a few ulps, not bit for bit
TOL = {
    "float64": (1e-12, 1e-12), "complex128": (1e-12, 1e-12),
    "float32": (2e-5, 2e-6), "complex64": (2e-5, 2e-6),
    "float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1e-2),
}
F8_TOL = (0.13, 0.02)


def x64(on=True):
    """A context with 64-bit types on (or off): jax.enable_x64 in newer JAX, the
    jax.experimental context managers in older ones."""
    if hasattr(jax, "enable_x64"):
        return jax.enable_x64(on)
    from jax import experimental

    return experimental.enable_x64() if on else experimental.disable_x64()


def cjrt_devices():
    """jax.devices('cjrt'), or None when that platform is not registered."""
    try:
        return jax.devices("cjrt")
    except RuntimeError:
        return None


def cj():
    return jax.devices("cjrt")[0]


def cpu():
    return jax.devices("cpu")[0]


def _leaf_to_host(x):
    if isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jax.dtypes.prng_key):
        x = jax.random.key_data(x)
    return x


def run_on(dev, f, *args, jit=True, static_argnums=(), **jit_kw):
    """f(*args) with args committed to `dev` and `dev` the default device, results ready.

    With CJRT_JAX_VIA=hlo (or hlo_text), a jitted program bound for a cjrt device goes to the
    plugin as an xla.HloModuleProto (or as HLO text) instead of StableHLO: see _run_via_hlo."""
    args = tuple(jax.device_put(a, dev) if _is_array_like(a) else a for a in args)
    if VIA and jit and dev.platform == "cjrt":
        out = _run_via_hlo(dev, f, args, static_argnums, jit_kw)
        if out is not None:
            return out
    g = jax.jit(f, static_argnums=static_argnums, **jit_kw) if jit else f
    with jax.default_device(dev):
        out = g(*args)
    return jax.block_until_ready(out)


# ---- the JAX suite as HLO (issue 16): CJRT_JAX_VIA=hlo | hlo_text ----
VIA = os.environ.get("CJRT_JAX_VIA", "")
if VIA not in ("", "hlo", "hlo_text"):
    raise ValueError(f"CJRT_JAX_VIA={VIA!r}: expected hlo or hlo_text")
# programs that ran as HLO, and those that ran through JAX instead, by reason
VIA_STATS = {"hlo": 0, "through_jax": collections.Counter()}
_via_client = None


def _client_for_hlo():
    global _via_client
    if _via_client is None:
        import cjrt

        _via_client = cjrt.Client(os.environ.get("CJRT_JAX_PLUGIN_PATH")
                                  or os.environ.get("CJRT_PLUGIN"))
    return _via_client


def _through_jax(reason):
    VIA_STATS["through_jax"][reason] += 1
    return None


def _run_via_hlo(dev, f, args, static_argnums, jit_kw):
    """Lowers f as JAX would for `dev`, converts the module to HLO with JAX's own converter
    (`compiler_ir("hlo")`: an HloModuleProto, or its text), compiles that with the plugin through
    the framework-side client (cjrt.Client, format "hlo") and runs it on the same inputs; the
    outputs come back as jax Arrays on `dev`. Programs HLO cannot carry the same way (several
    devices, effects and host callbacks, donation) run through JAX and are counted, by reason,
    in VIA_STATS. Returns None in that case."""
    if jit_kw.get("donate_argnums") or jit_kw.get("donate_argnames"):
        return _through_jax("donation")
    if jit_kw.get("in_shardings") is not None or jit_kw.get("out_shardings") is not None:
        return _through_jax("shardings")
    static = {static_argnums} if isinstance(static_argnums, int) else set(static_argnums)
    try:
        with jax.default_device(dev):
            lowered = jax.jit(f, static_argnums=static_argnums, **jit_kw).lower(*args)
    except Exception:  # noqa: BLE001 - let JAX report its own error on the normal path
        return _through_jax("does not lower")
    ca = getattr(lowered, "_lowering", None)
    ca = getattr(ca, "compile_args", {}) or {}
    if ca.get("ordered_effects") or ca.get("unordered_effects") or ca.get("host_callbacks"):
        return _through_jax("effects or host callbacks")
    if ca.get("num_devices", 1) != 1:
        return _through_jax("several devices")
    flat = [x for i, a in enumerate(args) if i not in static for x in jax.tree.leaves(a)]
    if any(isinstance(x, jax.Array) and len(x.devices()) != 1 for x in flat):
        return _through_jax("several devices")
    if any(isinstance(x, jax.Array) and jnp.issubdtype(x.dtype, jax.dtypes.prng_key)
           for x in flat):
        return _through_jax("typed PRNG keys")
    kept = ca.get("kept_var_idx")
    if kept is not None:
        flat = [flat[i] for i in sorted(kept)]
    try:
        comp = lowered.compiler_ir("hlo")
    except Exception:  # noqa: BLE001
        return _through_jax("JAX cannot convert it to HLO")
    code = (comp.as_hlo_text(print_large_constants=True) if VIA == "hlo_text"
            else comp.as_serialized_hlo_module_proto())
    exe = _client_for_hlo().compile(code, format="hlo")
    outs = exe(*[np.asarray(x) for x in flat])
    outs = outs if isinstance(outs, tuple) else (outs,)
    host = [np.asarray(o) for o in outs]
    VIA_STATS["hlo"] += 1
    return jax.tree.unflatten(lowered.out_tree, [jax.device_put(h, dev) for h in host])


def _is_array_like(a):
    return isinstance(a, (np.ndarray, np.generic, jax.Array)) or (
        isinstance(a, (list, tuple, dict)) and all(
            isinstance(l, (np.ndarray, np.generic, jax.Array, float, int, bool))
            for l in jax.tree.leaves(a)))


def tolerance(dtype, rtol=None, atol=None):
    name = np.dtype(dtype).name
    if name.startswith("float8") or name.startswith("float4") or name.startswith("float6"):
        r, a = F8_TOL
    else:
        r, a = TOL.get(name, (0, 0))
    return (r if rtol is None else rtol), (a if atol is None else atol)


def _as_wide(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":
        return x.astype(np.complex128)
    if x.dtype.kind in "iub":
        return x
    return x.astype(np.float64)


def assert_close(got, want, rtol=None, atol=None, check_dtypes=True, what="output"):
    got = np.asarray(_leaf_to_host(got))
    want = np.asarray(_leaf_to_host(want))
    if check_dtypes:
        assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != XLA:CPU's {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != XLA:CPU's {want.shape}"
    r, a = tolerance(want.dtype, rtol, atol)
    g, w = _as_wide(got), _as_wide(want)
    if r == 0 and a == 0:
        np.testing.assert_array_equal(g, w, err_msg=f"{what} differs from XLA:CPU")
    else:
        np.testing.assert_allclose(g, w, rtol=r, atol=a, equal_nan=True,
                                   err_msg=f"{what} differs from XLA:CPU ({want.dtype})")


def compare(f, *args, rtol=None, atol=None, check_dtypes=True, jit=True, static_argnums=(),
            **jit_kw):
    """Runs f on cjrt and on XLA:CPU; asserts equal structure, placement, dtypes and values.
    Returns the cjrt outputs."""
    dev_c, dev_x = cj(), cpu()
    got = run_on(dev_c, f, *args, jit=jit, static_argnums=static_argnums, **jit_kw)
    want = run_on(dev_x, f, *args, jit=jit, static_argnums=static_argnums, **jit_kw)
    gl, gt = jax.tree.flatten(got)
    wl, wt = jax.tree.flatten(want)
    assert gt == wt, f"output structure {gt} != XLA:CPU's {wt}"
    for i, (g, w) in enumerate(zip(gl, wl)):
        if isinstance(g, jax.Array):
            assert g.devices() == {dev_c}, f"output {i} is on {g.devices()}, not {dev_c}"
        assert_close(g, w, rtol=rtol, atol=atol, check_dtypes=check_dtypes, what=f"output {i}")
    return got


# ---- inputs ----

def rand(shape, dtype, seed=0, low=-3.0, high=3.0):
    """Deterministic test data of any dtype (bool, ints, floats incl. bf16/f8, complex)."""
    rng = np.random.RandomState(seed)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.rand(*shape) < 0.5
    if dt.kind in "iu":
        lo = 0 if dt.kind == "u" else max(-100, np.iinfo(dt).min)
        hi = min(100, np.iinfo(dt).max)
        return rng.randint(lo, hi + 1, size=shape).astype(dt)
    if dt.kind == "c":
        return (rng.uniform(low, high, shape) + 1j * rng.uniform(low, high, shape)).astype(dt)
    return rng.uniform(low, high, shape).astype(dt)


def normal(shape, dtype, seed=0):
    """Standard normal test data of a float or complex dtype (complex: both parts normal), from
    numpy's default_rng(seed)."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def positive(shape, dtype, seed=0):
    return rand(shape, dtype, seed, low=0.1, high=4.0)


FLOATS = ["bfloat16", "float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
SINTS = ["int8", "int16", "int32", "int64"]
UINTS = ["uint8", "uint16", "uint32", "uint64"]
INTS = SINTS + UINTS
F8 = ["float8_e4m3fn", "float8_e5m2"]


def dtype(name):
    if hasattr(np, name):
        return np.dtype(getattr(np, name))
    return np.dtype(getattr(ml_dtypes, name))


def is_64(name):
    return name in ("float64", "int64", "uint64", "complex128")


# ---- what the plugin cannot run yet ----
# A test that needs one of these carries @pending(...): pytest.mark.xfail(strict=True) raising
# JaxRuntimeError. When the kernel lands the test passes, strict turns that into a failure, and
# the mark must go: the suite stays green and says exactly what is missing.
PENDING = {}  # nothing pending now (the linear algebra custom calls used to be)


OLD_JAX = tuple(int(v) for v in jax.__version__.split(".")[:2]) < (0, 8)


def pending(*what):
    import pytest

    return pytest.mark.xfail(strict=True, raises=jax.errors.JaxRuntimeError,
                             reason="; ".join(PENDING[w] for w in what))
