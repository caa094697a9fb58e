"""FFTs (jnp.fft): complex 1-D and 2-D, real-input and its inverse. Tolerances are 10x the
f32 default: an FFT's rounding error grows with log2(N) and the engines factor N differently."""
import numpy as np

from . import normal, workload


def _c64(shape, seed):
    return (normal(shape, seed=seed) + 1j * normal(shape, seed=seed + 1)).astype(np.complex64)


@workload("fft_1d",
          "jnp.fft.fft and ifft of complex64[64,1024] rows, and fft of a complex64[65536] "
          "vector (power-of-two lengths)", tol_scale=10)
def fft_1d():
    import jax.numpy as jnp

    def f(x, v):
        return jnp.fft.fft(x), jnp.fft.ifft(x), jnp.fft.fft(v)
    return f, (_c64((64, 1024), 1), _c64((65536,), 3))


@workload("fft_2d",
          "jnp.fft.fft2 of complex64[16,128,128] and ifft2 of the result; fft along axis 0 of "
          "complex64[256,64]; a non-power-of-two length fft of complex64[32,300]",
          tol_scale=10)
def fft_2d():
    import jax.numpy as jnp

    def f(x, y, z):
        k = jnp.fft.fft2(x)
        return k, jnp.fft.ifft2(k), jnp.fft.fft(y, axis=0), jnp.fft.fft(z)
    return f, (_c64((16, 128, 128), 5), _c64((256, 64), 7), _c64((32, 300), 9))


@workload("fft_real",
          "jnp.fft.rfft of f32[64,2048] and irfft back, rfft2/irfft2 of f32[16,128,128], and an "
          "FFT convolution (rfft, multiply, irfft) of two f32[8,4096] signals", tol_scale=10)
def fft_real():
    import jax.numpy as jnp

    def f(x, img, a, b):
        r = jnp.fft.rfft(x)
        r2 = jnp.fft.rfft2(img)
        n = 2 * a.shape[-1]
        conv = jnp.fft.irfft(jnp.fft.rfft(a, n) * jnp.fft.rfft(b, n), n)
        return r, jnp.fft.irfft(r, x.shape[-1]), r2, jnp.fft.irfft2(r2, img.shape[-2:]), conv
    return f, (normal((64, 2048), seed=11), normal((16, 128, 128), seed=12),
               normal((8, 4096), seed=13), normal((8, 4096), seed=14))
