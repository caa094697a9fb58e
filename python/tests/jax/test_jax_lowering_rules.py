"""Which JAX primitives have no lowering rule for the cjrt platform.

JAX lowers most primitives with one generic rule, but some only with rules registered for named
platforms (cpu, cuda, rocm, tpu); for any other platform name lowering raises
"MLIR translation rule for primitive 'X' not found for platform cjrt". docs/JAX.md lists them;
this test recomputes the list from the installed JAX, so a JAX upgrade that changes it shows up.
"""
import jax
import pytest

# primitive -> the platforms JAX 0.10.2 has rules for (none of them generic). The linear algebra
# primitives with cpu-only rules (eig, geqp3, hessenberg, schur, tridiagonal) are not here: the
# package registers JAX's cpu rules for cjrt, whose LAPACK calls the plugin runs; nor are the host
# callbacks (check, debug_callback, debug_print), whose cpu rules it registers too (ffi.py).
NO_RULE_FOR_CJRT = {
    "cudnn_fusion": "cuda",
    "dot_product_attention_bwd": "cuda",               # cuDNN attention
    "dot_product_attention_fp8_bwd": "cuda",
    "dot_product_attention_fp8_fwd": "cuda",
    "dot_product_attention_fwd": "cuda",
    "pbroadcast": "cuda oneapi rocm",
    "pbroadcast_start": "cuda oneapi rocm",
    "scaled_matmul": "cuda rocm",
}


def _rules():
    # import the modules that register lowerings
    import jax.experimental  # noqa: F401
    import jax.scipy.linalg  # noqa: F401
    import jax.nn  # noqa: F401
    from jax._src import checkify  # noqa: F401
    from jax._src.cudnn import fused_attention_stablehlo  # noqa: F401
    from jax._src.cudnn import scaled_matmul_stablehlo  # noqa: F401
    from jax._src.interpreters import mlir

    return mlir._lowerings, mlir._platform_specific_lowerings


def test_primitives_without_a_rule_for_cjrt(cj):
    generic, per_platform = _rules()
    found = {}
    for plat, table in per_platform.items():
        for prim in table:
            if prim not in generic and prim not in per_platform.get("cjrt", {}):
                found.setdefault(prim.name, set()).add(plat)
    found = {k: " ".join(sorted(v)) for k, v in found.items()}
    if jax.__version__ != "0.10.2":
        pytest.skip(f"the list is JAX 0.10.2's; this is {jax.__version__}: {sorted(found)}")
    assert found == NO_RULE_FOR_CJRT


def test_cjrt_rules_registered(cj):
    """The package adds what it can: JAX's cpu (LAPACK) rules for the linear algebra primitives
    and buffer donation."""
    generic, per_platform = _rules()
    from jax._src.lax import linalg
    from jax._src.interpreters import mlir

    for p in (linalg.eigh_p, linalg.eig_p, linalg.schur_p, linalg.cholesky_p, linalg.svd_p):
        assert p in per_platform.get("cjrt", {}), p
    assert "cjrt" in mlir._platforms_with_donation


def test_checkify_check_without_checkify_runs_like_cpu(cj, cpu):
    """checkify.check staged out without the checkify transformation: cjrt has cpu's rule, so
    it fails as on cpu (JAX 0.12: at trace time, "not functionalized")."""
    import numpy as np
    from jax.experimental import checkify

    def f(x):
        checkify.check(x.sum() > 0, "positive")
        return x

    errors = []
    for dev in (cpu, cj):
        try:
            jax.block_until_ready(jax.jit(f)(jax.device_put(-np.ones(3, dtype=np.float32), dev)))
            errors.append(None)
        except Exception as e:  # the type and message, whatever this JAX makes of it
            errors.append((type(e).__name__, str(e).split("\n")[0].replace("cjrt", "cpu")))
    assert errors[1] == errors[0]
    assert errors[0] is not None
