/* cjrt: single-precision math as XLA:CPU computes it, as plain scalar C.
 *
 * The conformance corpus' expected values for f32 and complex<f32> programs come from XLA:CPU,
 * which computes them in single precision with its own algorithms, and many of the corpus'
 * checks are absolute (|actual - expected| <= 1e-3) on values up to ~1e5 or more, where one
 * float ulp (2^-24 relative: 0.004 at 5e4, 0.03 at 3e5) already fails. Where XLA's result is
 * not the correctly rounded one, only XLA's own arithmetic passes such a check. These functions
 * are that arithmetic, one scalar at a time (the reference backend's f32 / complex<f32>
 * elementwise ops use them; the CPU backend's vectorized kernels in src/cpu/vmath_f32.c and
 * vmath_cplx.c perform the same operations lane by lane). The algorithms are described in
 * xla_math.c. */
#ifndef CJRT_BASE_XLA_MATH_H
#define CJRT_BASE_XLA_MATH_H

/* e^x: XLA's range reduction and degree-7 polynomial (at most 1 ulp from e^x; subnormal and
 * near-overflow results are scaled exactly where XLA flushes or clamps) */
float cj_xla_expf(float x);

/* log x: XLA's mantissa polynomial (at most 1 ulp; subnormal inputs are scaled, not flushed) */
float cj_xla_logf(float x);

/* e^x - 1: for x > 2.5 XLA's exp(x) - 1 (XLA's own expression, up to 2 ulp); below that the
 * correctly rounded value */
float cj_xla_expm1f(float x);

/* atan2(y, x) as glibc's atan2f computes it (fdlibm's algorithm, up to ~1.5 ulp), which XLA:CPU
 * calls */
float cj_xla_atan2f(float y, float x);

/* (a + bi)^(c + di) with XLA:CPU's complex<f32> power formula, in float; *re, *im get the parts */
void cj_xla_cpowf(float a, float b, float c, float d, float *re, float *im);

#endif
