#!/usr/bin/env python3
"""Writes tests/ops_fft/cases/*.mlir: fft programs (FFT, IFFT, RFFT, IRFFT; 1-D, 2-D, 3-D; f32 and
f64; lengths with small and large prime factors, powers of two, primes handled directly and by
Bluestein's algorithm) whose expected results are numpy.fft's, computed in f64 from the same
inputs. Each check allows an absolute error of a few ulps of the largest output magnitude.

usage: python3 tests/ops_fft/make_cases.py   (needs numpy and ml_dtypes)
"""
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "common"))
from casegen import dense_hex, ttype, write_case_files  # noqa: E402

OUT = os.path.join(HERE, "cases")
rng = np.random.default_rng(7)

CASES = []


def case(name, kind, shape, lengths, real_dt=np.float32):
    """shape: the operand shape for FFT/IFFT/RFFT; for IRFFT the result shape."""
    L = len(lengths)
    axes = tuple(range(len(shape) - L, len(shape)))
    cdt = np.complex64 if real_dt == np.float32 else np.complex128
    if kind in ("FFT", "IFFT"):
        x = (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(cdt)
        xd = x.astype(np.complex128)
        y = np.fft.fftn(xd, axes=axes) if kind == "FFT" else np.fft.ifftn(xd, axes=axes)
        y = y.astype(cdt)
        it, ot = cdt, cdt
    elif kind == "RFFT":
        x = rng.standard_normal(shape).astype(real_dt)
        y = np.fft.rfftn(x.astype(np.float64), axes=axes).astype(cdt)
        it, ot = real_dt, cdt
    else:  # IRFFT: make a real signal, take its rfftn as the input (Hermitian where it must be)
        sig = rng.standard_normal(shape)
        x = np.fft.rfftn(sig, axes=axes)
        if L == 1:  # perturb what IRFFT ignores: the imaginary parts of the self-conjugate bins
            x[..., 0] += 1j * rng.standard_normal(x.shape[:-1])
            if lengths[-1] % 2 == 0:
                x[..., -1] += 1j * rng.standard_normal(x.shape[:-1])
        x = x.astype(cdt)
        y = np.fft.irfftn(x.astype(np.complex128), s=lengths, axes=axes).astype(real_dt)
        it, ot = cdt, real_dt
    mag = float(np.max(np.abs(y))) if y.size else 0.0
    eps = 6e-8 if real_dt == np.float32 else 1.2e-16
    n = int(np.prod(lengths)) if lengths else 1
    tol = (8 + 2 * np.log2(max(n, 2))) * eps * max(mag, 1.0)
    lines = [f"func.func @{name}() {{",
             f"  %x = stablehlo.constant {dense_hex(x)} : {ttype(x.shape, it)}",
             f"  %y = stablehlo.fft %x, type = {kind}, length = [{', '.join(map(str, lengths))}] : "
             f"({ttype(x.shape, it)}) -> {ttype(y.shape, ot)}",
             f"  check.expect_almost_eq_const %y, {dense_hex(y)} : {ttype(y.shape, ot)} {{tolerance = {tol:.3e} : f64}}",
             "  func.return", "}"]
    CASES.append((name, "\n".join(lines) + "\n"))


for n in [1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 15, 16, 17, 25, 31, 32, 49, 60, 61, 64, 67, 97,
          100, 127, 128, 131, 243, 257, 1000, 1009, 1024]:
    case(f"fft_c64_{n}", "FFT", [3 if n < 500 else 1, n], [n])
for n in [2, 7, 16, 30, 97, 256]:
    case(f"fft_c128_{n}", "FFT", [2, n], [n], np.float64)
    case(f"ifft_c128_{n}", "IFFT", [2, n], [n], np.float64)
for n in [1, 5, 17, 64, 211]:
    case(f"ifft_c64_{n}", "IFFT", [4, n], [n])
for n in [1, 2, 3, 4, 5, 7, 8, 11, 13, 16, 17, 19, 31, 64, 97, 100, 127, 131, 137, 256, 1009]:
    case(f"rfft_f32_{n}", "RFFT", [5 if n < 500 else 1, n], [n])
for n in [2, 7, 17, 64, 97, 1000]:
    case(f"rfft_f64_{n}", "RFFT", [3, n], [n], np.float64)
for n in [1, 2, 3, 4, 7, 8, 16, 17, 33, 97, 100]:
    case(f"irfft_f32_{n}", "IRFFT", [4, n], [n])
for n in [2, 5, 16, 63, 101]:
    case(f"irfft_f64_{n}", "IRFFT", [3, n], [n], np.float64)
case("fft_2d", "FFT", [2, 6, 10], [6, 10])
case("fft_3d", "FFT", [2, 4, 3, 5], [4, 3, 5], np.float64)
case("ifft_2d", "IFFT", [3, 8, 7], [8, 7])
case("ifft_3d", "IFFT", [5, 3, 4], [5, 3, 4])
case("rfft_2d", "RFFT", [3, 6, 17], [6, 17])
case("rfft_2d_even", "RFFT", [2, 8, 12], [8, 12], np.float64)
case("rfft_3d", "RFFT", [2, 3, 5, 8], [3, 5, 8])
case("irfft_2d", "IRFFT", [3, 6, 10], [6, 10])
case("irfft_2d_odd", "IRFFT", [2, 5, 9], [5, 9], np.float64)
case("irfft_3d", "IRFFT", [4, 3, 6], [4, 3, 6])
case("fft_no_batch", "FFT", [12], [12])
case("fft_2d_big", "FFT", [32, 48], [32, 48])
case("rfft_batch_big", "RFFT", [64, 4, 37], [37])
case("fft_empty_batch", "FFT", [0, 8], [8])


def xla_case(name, n, batch):
    """f32 RFFT of an odd prime length, expected bit for bit as XLA:CPU computes it (JAX)."""
    import jax
    import jax.numpy as jnp
    jax.config.update("jax_platforms", "cpu")
    x = rng.standard_normal((batch, n)).astype(np.float32)
    y = np.asarray(jax.jit(lambda a: jnp.fft.rfft(a, axis=-1))(x)).astype(np.complex64)
    lines = [f"func.func @{name}() {{",
             f"  %x = stablehlo.constant {dense_hex(x)} : {ttype(x.shape, np.float32)}",
             f"  %y = stablehlo.fft %x, type = RFFT, length = [{n}] : "
             f"({ttype(x.shape, np.float32)}) -> {ttype(y.shape, np.complex64)}",
             f"  check.expect_eq_const %y, {dense_hex(y)} : {ttype(y.shape, np.complex64)}",
             "  func.return", "}"]
    CASES.append((name, "\n".join(lines) + "\n"))


HAVE_JAX = True
try:  # bit-compatibility with XLA:CPU for f32 real transforms of odd prime lengths 7..131
    for n in [7, 11, 13, 17, 31, 61, 67, 127, 131]:
        xla_case(f"rfft_f32_xla_bits_{n}", n, 16)
except ImportError:
    HAVE_JAX = False
    print("jax is not installed: the rfft_f32_xla_bits cases are kept as they are")

# paths of the kernels' later forms (after the cases above, whose inputs stay as they were): an
# odd number of Stockham stages (the result left in the scratch, radix 5 and 7 unrolled), passes
# of 16 lines and more with a tail of fewer (16 lanes, then 8), IRFFT's f32 earlier axes with
# its f64 last one, real transforms whose half length has an odd number of stages
for n in [140, 3000]:
    case(f"fft_c64_{n}", "FFT", [2 if n < 500 else 1, n], [n])
case("fft_c128_140", "FFT", [2, 140], [140], np.float64)
case("ifft_c128_343", "IFFT", [2, 343], [343], np.float64)
case("rfft_f32_250", "RFFT", [3, 250], [250])
case("irfft_f32_250", "IRFFT", [3, 250], [250])
case("rfft_f64_250", "RFFT", [2, 250], [250], np.float64)
case("fft_2d_tail", "FFT", [3, 37, 20], [37, 20])
case("ifft_3d_tail", "IFFT", [2, 18, 5, 17], [18, 5, 17])
case("rfft_2d_tail", "RFFT", [2, 24, 34], [24, 34])
case("irfft_2d_tail", "IRFFT", [2, 24, 34], [24, 34])
case("irfft_3d_odd", "IRFFT", [2, 6, 5, 9], [6, 5, 9])
case("irfft_2d_c128_tail", "IRFFT", [2, 20, 34], [20, 34], np.float64)


def main():
    n = write_case_files(OUT, CASES, "// generated by tests/ops_fft/make_cases.py: expected values "
                         "from numpy.fft\n",
                         keep=lambda f: not HAVE_JAX and f.startswith("rfft_f32_xla_bits_"))
    print(n, "cases")


if __name__ == "__main__":
    main()
