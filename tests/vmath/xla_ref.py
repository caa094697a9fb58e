#!/usr/bin/env python3
"""Fingerprints of XLA:CPU's single-precision exp, log, expm1, logistic and erf for test_vmath.c.

The vmath f32 kernels of these functions repeat XLA:CPU's arithmetic operation for operation
(src/cpu/vmath_f32.c says why: the conformance corpus' expected values come from XLA and are
checked to 1e-3 absolute on values up to 1e5). This script evaluates each function with jax on
XLA:CPU over N deterministic inputs (splitmix64 -> uniform in [lo, hi), rounded to float; the
same generator as test_vmath.c) in XLA's exact ranges (normal results, n <= 127) and prints the
64-bit FNV-1a hash of the result bits, which test_vmath.c compares with ours. Run by hand:
    python3 tests/vmath/xla_ref.py        (needs numpy and jax; printed with jaxlib 0.10.2, erf's with
    0.12.0.1: 0.12's exp and expm1 differ from 0.10.2's in a few inputs, test_vmath keeps 0.10.2's)
"""
import numpy as np

N = 100000
M64 = (1 << 64) - 1

# name, jax function, lo, hi (inputs uniform in [lo, hi)); log draws 2^u with u in [lo, hi)
CASES = [
    ("exp", "exp", -87.3, 88.3),
    ("log", "log", -125.9, 127.9),
    ("expm1", "expm1", 2.5, 88.3),
    ("logistic", "logistic", 0.0, 80.0),
    ("erf", "erf", -5.0, 5.0),
]


def splitmix(state):
    state = (state + 0x9E3779B97F4A7C15) & M64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
    return state, z ^ (z >> 31)


def inputs(name, lo, hi):
    state = 0x243F6A8885A308D3
    out = np.empty(N, np.float32)
    for i in range(N):
        state, z = splitmix(state)
        u = (z >> 11) * 2.0**-53
        v = lo + (hi - lo) * u
        out[i] = np.float32(2.0**v) if name == "log" else np.float32(v)
    return out


def fnv(bits):
    h = 0xCBF29CE484222325
    for b in bits.view(np.uint32).tolist():
        h = ((h ^ b) * 0x100000001B3) & M64
    return h


def main():
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_platforms", "cpu")
    fns = {"exp": jnp.exp, "log": jnp.log, "expm1": jnp.expm1, "logistic": jax.nn.sigmoid,
           "erf": jax.scipy.special.erf}
    for name, fn, lo, hi in CASES:
        x = inputs(name, lo, hi)
        y = np.asarray(jax.jit(fns[fn])(x))
        print(f'    {{"{name}", {lo!r}, {hi!r}, 0x{fnv(y):016x}ULL}},')


if __name__ == "__main__":
    main()
