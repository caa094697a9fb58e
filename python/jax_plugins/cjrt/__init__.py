"""cjrt as a JAX backend: JAX imports this module at start-up (namespace package `jax_plugins`,
entry point `cjrt` in group `jax_plugins`) and calls initialize().

    pip install ./python              # builds and ships pjrt_c_api_cjrt_plugin.so next to this file
    python -c "import jax; print(jax.devices('cjrt'))"
    jax.jit(f, backend="cjrt"), with jax.default_device(jax.devices("cjrt")[0]): ...
    JAX_PLATFORMS=cjrt python prog.py # cjrt only (no XLA:CPU)

The platform registers with a priority below JAX's own CPU backend, so installing it never
changes the default device; select it by name. The plugin library is looked up, in order, at
$CJRT_JAX_PLUGIN_PATH, next to this file (installed wheels), and in the source tree's build/
folder (PYTHONPATH=python from a checkout). When none exists initialize() returns quietly.
When $PJRT_NAMES_AND_LIBRARY_PATHS names "cjrt", JAX registers that library itself and this
module stands aside (registering one name twice is an error in JAX); its platform rules then wait
until JAX has registered the name (JAX calls initialize() before it reads that variable, and
refuses lowering rules for a platform it does not know yet).

Client create options come from $CJRT_CPU_DEVICE_COUNT (number of devices; default: the
number of cores) and JAX's own jax_pjrt_client_create_options (e.g. "cpu_device_count:4").
"""

import logging
import math
import os

PLATFORM = "cjrt"
LIBRARY_NAME = "pjrt_c_api_cjrt_plugin.so"
# cpu registers with priority 0 and the default backend is the highest priority present: below
# zero, cjrt is used only when asked for (backend="cjrt", jax.default_device, JAX_PLATFORMS).
PRIORITY = -100

_log = logging.getLogger(__name__)


def library_path():
    """The plugin library this package would register, or None when there is none."""
    env = os.environ.get("CJRT_JAX_PLUGIN_PATH")
    if env:
        return env if os.path.isfile(env) else None
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [os.path.join(here, LIBRARY_NAME)]
    # python/jax_plugins/cjrt -> the repository root, when running from a checkout
    root = os.path.dirname(os.path.dirname(os.path.dirname(here)))
    if os.path.isfile(os.path.join(root, "src", "pjrt", "exports.map")):
        cands.append(os.path.join(root, "build", LIBRARY_NAME))
    for c in cands:
        if os.path.isfile(c):
            return c
    return None


def _named_in_env():
    spec = os.environ.get("PJRT_NAMES_AND_LIBRARY_PATHS", "")
    sep = ";" if os.name == "nt" else ":"
    for item in spec.split(","):
        if item.split(sep, 1)[0].strip().lower() == PLATFORM:
            return True
    return False


def options():
    """Create options for PJRT_Client_Create, read when JAX creates the client."""
    opts = {}
    n = os.environ.get("CJRT_CPU_DEVICE_COUNT")
    if n:
        try:
            opts["cpu_device_count"] = int(n)
        except ValueError:
            raise ValueError(f"cjrt: CJRT_CPU_DEVICE_COUNT={n!r} is not an integer") from None
    return opts


def initialize():
    if _named_in_env():
        _log.debug("cjrt: PJRT_NAMES_AND_LIBRARY_PATHS names cjrt; JAX registers it from there")
        _register_platform_rules_when_known()
        return
    path = library_path()
    if path is None:
        _log.debug("cjrt: %s not found; the cjrt platform is not registered", LIBRARY_NAME)
        return
    from jax._src import xla_bridge as xb

    if PLATFORM in getattr(xb, "_backend_factories", {}):
        return
    xb.register_plugin(PLATFORM, priority=PRIORITY, library_path=path, options=options)
    register_platform_rules()
    _install_ffi(path)
    _install_lapack(path)


def _install_lapack(path):
    """SciPy's LAPACK and BLAS (those XLA:CPU's jaxlib calls) for the plugin's LAPACK kernels,
    where SciPy is installed (see lapack.py); else the plugin keeps its own."""
    try:
        from . import lapack

        return lapack.install(path)
    except Exception as e:  # pragma: no cover - an older plugin without the routine table
        _log.warning("cjrt: the plugin keeps its own LAPACK: %s", e)
        return []


def _install_ffi(path):
    """jax.ffi targets registered for platform cjrt, and JAX's host callbacks (pure_callback,
    io_callback, jax.debug.*), through the plugin's PJRT FFI extension (see ffi.py)."""
    try:
        from . import ffi

        return ffi.install(path)
    except Exception as e:  # pragma: no cover - depends on the JAX version
        _log.warning("cjrt: no XLA FFI custom calls or host callbacks on cjrt: %s", e)
        return []


def _library_from_env():
    spec = os.environ.get("PJRT_NAMES_AND_LIBRARY_PATHS", "")
    sep = ";" if os.name == "nt" else ":"
    for item in spec.split(","):
        name, _, lib = item.partition(sep)
        if name.strip().lower() == PLATFORM and lib:
            return lib.strip()
    return None


def _register_platform_rules_when_known():
    """register_platform_rules() as soon as JAX knows the platform name. JAX's plugin discovery
    imports the jax_plugins modules and calls initialize() first, and only then registers the
    libraries named in $PJRT_NAMES_AND_LIBRARY_PATHS, then calls the plugin callbacks: rules
    registered from initialize() would name a platform JAX does not know yet (and be refused),
    so they are registered from such a callback."""
    from jax._src import xla_bridge as xb

    if xb.is_known_platform(PLATFORM):
        register_platform_rules()
        _install_ffi(_library_from_env())
        _install_lapack(_library_from_env())
        return
    add_callback = getattr(xb, "register_plugin_callbacks", None)
    if add_callback is None:  # pragma: no cover - every JAX we support has it (0.4.31+)
        _log.warning("cjrt: this JAX has no plugin callbacks; registered through "
                     "PJRT_NAMES_AND_LIBRARY_PATHS, cjrt lacks its platform rules")
        return

    def on_plugins_registered(*_args, **_kwargs):  # called once per plugin with a C API
        if not _rules_registered and xb.is_known_platform(PLATFORM):
            register_platform_rules()
            _install_ffi(_library_from_env())
            _install_lapack(_library_from_env())

    add_callback(on_plugins_registered)


_rules_registered = []  # the rules register_platform_rules() registered, once


def register_platform_rules():
    """What JAX decides by platform name in Python, for which PJRT has no way to ask a plugin:

    - donation: JAX marks donated arguments (tf.aliasing_output / jax.buffer_donor) only for
      platforms in mlir._platforms_with_donation; cjrt honours them (PJRT input/output
      aliasing), so it joins that list.
    - eigh (and the svd built on it): JAX has lowering rules for cpu (LAPACK calls), cuda/rocm
      (cuSolver) and tpu only. cjrt lowers a whole eigendecomposition to the platform-neutral
      custom call XLA itself expands on TPUs, @Eigh (backend_config "lower,sort,max_iter,tol",
      results eigenvectors and eigenvalues), for the plugin to run; a partial one
      (subset_by_index) or an explicit QDWH request takes the TPU's QDWH rule, written in JAX
      on top of @Eigh, @Qr and @ProductOfElementaryHouseholderReflectors (the CPU backend
      runs all three: src/cpu/k_linalg_house.c).

    Each step is best effort: these are JAX internals, and a JAX that lacks them only loses the
    feature (logged), never the platform. Returns the names of the rules registered. Runs once;
    later calls return the first call's answer.
    """
    if _rules_registered:
        return list(_rules_registered)
    done = _rules_registered
    try:
        from jax._src.interpreters import mlir

        if PLATFORM not in mlir._platforms_with_donation:
            mlir._platforms_with_donation.append(PLATFORM)
        done.append("donation")
    except Exception as e:  # pragma: no cover - depends on the JAX version
        _log.warning("cjrt: cannot enable buffer donation for JAX on cjrt: %s", e)
    try:
        from jax._src.interpreters import mlir
        from jax._src.lax import linalg as lax_linalg
        from jax._src.tpu.linalg import eigh as tpu_eigh

        if hasattr(tpu_eigh, "_eigh_tpu_lowering"):  # JAX >= 0.8: takes an algorithm
            def eigh_rule(ctx, operand, *, subset_by_index=None, algorithm=None, **params):
                n = ctx.avals_in[0].shape[-1]
                impl = lax_linalg.EighImplementation
                whole = subset_by_index is None or tuple(subset_by_index) == (0, n)
                algo = impl.JACOBI if whole and algorithm != impl.QDWH else impl.QDWH
                return tpu_eigh._eigh_tpu_lowering(ctx, operand, subset_by_index=subset_by_index,
                                                   algorithm=algo, **params)
        else:  # older JAX: the TPU's QDWH, written in JAX
            eigh_rule = mlir.lower_fun(tpu_eigh._eigh_tpu_impl, multiple_results=True)

        _tpu_eigh_rule = eigh_rule
    except Exception as e:  # pragma: no cover - depends on the JAX version
        _tpu_eigh_rule = None
        _log.warning("cjrt: no TPU-style eigh lowering for cjrt: %s", e)
    try:
        done.extend(_register_lu_permutation_rule())
    except Exception as e:  # pragma: no cover - depends on the JAX version
        _log.warning("cjrt: lu_pivots_to_permutation keeps JAX's generic rule: %s", e)
    try:
        done.extend(_register_threefry_rule())
    except Exception as e:  # pragma: no cover - depends on the JAX version
        _log.warning("cjrt: threefry2x32 keeps JAX's generic rule: %s", e)
    try:
        done.extend(_register_lapack_rules(_tpu_eigh_rule))
    except Exception as e:  # pragma: no cover - depends on the JAX version
        _log.warning("cjrt: cannot reuse JAX's cpu (LAPACK) lowering rules for cjrt: %s", e)
        if _tpu_eigh_rule is not None:
            from jax._src.interpreters import mlir
            from jax._src.lax import linalg as lax_linalg

            mlir.register_lowering(lax_linalg.eigh_p, _tpu_eigh_rule, platform=PLATFORM)
            done.append("eigh")
    return list(done)


def _register_lu_permutation_rule():
    """lu_pivots_to_permutation (after every LU: solve, inv, lu_factor ...) as the plugin's own
    custom call @cjrt_lu_pivots_to_permutation (src/cpu/k_lapack_perm.c), as JAX does for
    cuda/rocm with theirs, instead of JAX's generic rule: a while loop of one row swap per
    pivot, which cost 5-7x XLA:CPU's compiled loop on cjrt (60 us for 128 pivots)."""
    import jax
    from jax._src.interpreters import mlir
    from jax._src.lax import linalg as lax_linalg

    prim = lax_linalg.lu_pivots_to_permutation_p
    ffi_rule = jax.ffi.ffi_lowering("cjrt_lu_pivots_to_permutation")

    def rule(ctx, pivots, *, permutation_size):
        del permutation_size  # the result's shape
        return ffi_rule(ctx, pivots)

    rule.__name__ = "cjrt_lu_pivots_to_permutation_lowering"
    mlir.register_lowering(prim, rule, platform=PLATFORM)
    return [prim.name]


def _register_threefry_rule():
    """threefry2x32 (every jax.random draw with the default threefry keys: bits, uniform,
    dropout masks, split, fold_in) as the plugin's own custom call @cjrt_threefry2x32
    (src/cpu/k_rng.c: vectorized lanes, the same bits), as JAX does for cuda/rocm with theirs,
    instead of JAX's generic rule: 20 rounds of elementwise ops per element, which cost about 3x
    XLA:CPU's compiled loop on cjrt. Operands that are neither one element nor the result's
    shape are broadcast to it here (the primitive broadcasts its operands)."""
    import jax
    from jax._src.interpreters import mlir

    try:
        from jax._src.random.threefry2x32 import threefry2x32_p as prim  # JAX >= 0.8
    except ImportError:
        from jax._src.prng import threefry2x32_p as prim
    ffi_rule = jax.ffi.ffi_lowering("cjrt_threefry2x32")

    def rule(ctx, k1, k2, x1, x2):
        aval_out = ctx.avals_out[0]
        if 0 in aval_out.shape:
            zeros = mlir.full_like_aval(ctx, 0, aval_out)
            return [zeros, zeros]
        rank = len(aval_out.shape)
        args, avals = [], []
        for x, aval in zip((k1, k2, x1, x2), ctx.avals_in):
            if aval.shape != aval_out.shape and math.prod(aval.shape) != 1:
                x = mlir.broadcast_in_dim(ctx, x, aval_out, broadcast_dimensions=range(
                    rank - len(aval.shape), rank))
                aval = aval_out
            args.append(x)
            avals.append(aval)
        return ffi_rule(ctx.replace(avals_in=tuple(avals)), *args)

    rule.__name__ = "cjrt_threefry2x32_lowering"
    mlir.register_lowering(prim, rule, platform=PLATFORM)
    return [prim.name]


# The linear algebra primitives whose cpu lowering rules (jaxlib's lapack_*_ffi custom calls)
# the plugin runs (src/cpu/k_lapack.c): JAX's own rule objects are registered for cjrt too.
LAPACK_PRIMITIVES = ("cholesky_p", "lu_p", "geqrf_p", "geqp3_p", "householder_product_p",
                     "triangular_solve_p", "eigh_p", "svd_p", "eig_p", "schur_p", "hessenberg_p",
                     "tridiagonal_p", "tridiagonal_solve_p")
_LAPACK_DTYPES = ("float32", "float64", "complex64", "complex128")


def _register_lapack_rules(tpu_eigh_rule):
    """For each of LAPACK_PRIMITIVES, the cpu rule (LAPACK) where it applies: element types
    LAPACK has, and the parameters JAX's cpu rule accepts; elsewhere the rule cjrt had before
    (JAX's generic rule, or for eigh the TPU-style one above), so nothing that ran stops
    running (bf16 QR, a Jacobi or partial eigh, a QDWH or partial SVD ...)."""
    from jax._src.interpreters import mlir
    from jax._src.lax import linalg as lax_linalg

    cpu_rules = mlir._platform_specific_lowerings["cpu"]
    done = []
    for name in LAPACK_PRIMITIVES:
        prim = getattr(lax_linalg, name, None)
        entry = cpu_rules.get(prim) if prim is not None else None
        if entry is None:
            continue
        cpu_rule = getattr(entry, "rule", entry)
        if name == "eigh_p":
            fallback = tpu_eigh_rule
        else:
            generic = mlir._lowerings.get(prim)
            fallback = getattr(generic, "rule", generic)
        rule = cpu_rule if fallback is None else _choose(prim.name, cpu_rule, fallback)
        mlir.register_lowering(prim, rule, platform=PLATFORM,
                               inline=getattr(entry, "inline", True))
        done.append(prim.name)
    return done


def _lapack_applies(primitive, ctx, params):
    if any(str(a.dtype) not in _LAPACK_DTYPES for a in ctx.avals_in
           if hasattr(a, "dtype") and a.dtype.kind in "fc"):
        return False
    subset = params.get("subset_by_index")
    algorithm = params.get("algorithm")
    if primitive == "eigh":
        n = ctx.avals_in[0].shape[-1]
        if not (subset is None or tuple(subset) == (0, n)):
            return False
        return algorithm is None or getattr(algorithm, "name", "") not in ("QDWH", "JACOBI")
    if primitive == "svd":
        m, n = ctx.avals_in[0].shape[-2:]
        if not (subset is None or tuple(subset) == (0, min(m, n))):
            return False
        return algorithm is None or getattr(algorithm, "name", "") in (
            "DEFAULT", "QR", "DIVIDE_AND_CONQUER")
    return True


def _choose(primitive, cpu_rule, fallback):
    def rule(ctx, *args, **params):
        if _lapack_applies(primitive, ctx, params):
            return cpu_rule(ctx, *args, **params)
        return fallback(ctx, *args, **params)

    rule.__name__ = f"cjrt_{primitive}_lowering"
    return rule
