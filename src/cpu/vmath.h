/* cjrt: the vectorized math library of the CPU backend.
 *
 * Array functions over contiguous element arrays, self-contained (no IR, no status: every input
 * value, including NaN, infinities, signed zeros and subnormals, has a defined result, so nothing
 * can fail).
 *
 *   real, unary:    void cj_vm_<fn>_f32(const float *x, float *y, int64_t n);
 *                   void cj_vm_<fn>_f64(const double *x, double *y, int64_t n);
 *   real, binary:   void cj_vm_<fn>_f32(const float *x, const float *y, float *out, int64_t n);
 *   complex:        void cj_vm_<fn>_c64(const float *x, float *y, int64_t n);   (complex<f32>)
 *                   void cj_vm_<fn>_c128(const double *x, double *y, int64_t n); (complex<f64>)
 *     complex arrays are interleaved (re, im) pairs; n counts complex elements, so x holds 2n
 *     floats; abs_c64/abs_c128 write n real values.
 *
 * Contract, for every function: any n >= 0 (n <= 0 does nothing); pointers need only the
 * element type's natural alignment; the output may be the same array as an input (in place),
 * but must not otherwise partially overlap it. Functions are thread-safe and never allocate.
 * Borrowed pointers only: nothing is retained.
 *
 * Accuracy (tests/vmath/test_vmath.c against an 80-bit long double reference; max measured):
 *   f32: exp 1, expm1 2, log 1.5, log1p 1.5, logistic 2, tanh 4.3 and erf 3 ulp (float
 *        polynomials; tanh and erf are XLA:CPU's own approximations, bit for bit, see
 *        vmath_f32.c); every other function <= 0.5 ulp + a hair (computed in double and rounded
 *        once), i.e. correctly rounded in all but rare double-rounding cases, on a 4.4M-point
 *        sweep.
 *   f64: exp 0.8, exp2 1.0, expm1 1.0, log 0.75, log2 0.7, log10 0.65, log1p 0.7, sin/cos 0.8,
 *        tan 1.9, tanh 0.7, sinh 0.9, cosh 1.1, asin/acos 0.85, atan 0.75, asinh 1.0, acosh 1.2,
 *        atanh 1.0, sqrt 0.5, rsqrt 0.5, cbrt 0.7, logistic 0.8, pow 0.8, atan2 1.3, erf 1.4,
 *        erfc 2.7, erf_inv 1.7, lgamma 2.8, digamma 6.7 (near its poles), bessel_i1e 2.3 ulp;
 *        for lgamma/digamma at x < 0 the error is measured against the size of the reflection
 *        terms (near their zeros between the poles no fixed-precision formula is relative).
 *   complex: the stablehlo/tests/math cases (mpmath references, <= 3-4 ulp per part) pass, and
 *        the single-op JAX testdata cases pass but for three whose XLA references are themselves
 *        off (tests/vmath/test_vmath_corpus.c lists them with the reason).
 * Special values follow C99 Annex F for the real functions; the complex functions follow
 * Annex G and, where the upstream references differ (exp(x + i inf) = nan + i nan), those.
 *
 * Implementation: branch-free kernels over blocks of 16 elements that GCC vectorizes; each is
 * compiled for AVX-512, AVX2+FMA and baseline x86-64 (the host's default target elsewhere) and
 * the widest one the CPU supports (CPUID feature bits) is chosen at first use. No libm call is
 * made per element except in the fix-up pass for sin/cos/tan (and complex functions taking sin/cos
 * of a part) of arguments beyond 1e6. Vectorized today (AVX-512 and AVX2, checked on the object
 * code): every real function, and the complex abs, log, sqrt, sign, square, atan, atanh; the
 * other complex kernels compile to straight-line scalar code (no calls) that GCC 12 declines to
 * vectorize (boolean selects in their special-value handling). The AVX-512 build runs the f32
 * exp, expm1, logistic, log, log1p (vmath_avx512.c) and sqrt, rsqrt as intrinsics, the same bits
 * as the kernels (rounding, scaling and exponent/mantissa instructions GCC does not emit).
 */
#ifndef CJ_CPU_VMATH_H
#define CJ_CPU_VMATH_H

#include <stdint.h>

/* ---- the function lists (X-macros): X(name) ---- */

/* the trigonometric and hyperbolic functions (and inverses), in both the real and complex lists */
#define CJ_VM_TRIG(X)                                                                           \
  X(sin)                                                                                        \
  X(cos)                                                                                        \
  X(tan)                                                                                        \
  X(tanh)                                                                                       \
  X(sinh)                                                                                       \
  X(cosh)                                                                                       \
  X(asin)                                                                                       \
  X(acos)                                                                                       \
  X(atan)                                                                                       \
  X(asinh)                                                                                      \
  X(acosh)                                                                                      \
  X(atanh)

/* real unary functions, f32 and f64 */
#define CJ_VM_REAL_UNARY(X)                                                                     \
  X(exp)        /* e^x */                                                                       \
  X(exp2)       /* 2^x */                                                                       \
  X(expm1)      /* e^x - 1 */                                                                   \
  X(log)        /* natural log; log(-x) = nan, log(0) = -inf */                                  \
  X(log2)                                                                                       \
  X(log10)                                                                                      \
  X(log1p)      /* log(1 + x) */                                                                \
  CJ_VM_TRIG(X)                                                                                 \
  X(sqrt)                                                                                       \
  X(rsqrt)      /* 1/sqrt(x); rsqrt(+-0) = +-inf, rsqrt(x<0) = nan */                           \
  X(cbrt)       /* real cube root, odd */                                                       \
  X(logistic)   /* 1/(1+e^-x) */                                                                \
  X(erf)                                                                                        \
  X(erfc)                                                                                       \
  X(erf_inv)    /* inverse of erf on [-1,1]; +-1 -> +-inf, |x|>1 -> nan */                       \
  X(lgamma)     /* log|Gamma(x)|; +inf at the poles 0, -1, -2, ... and at +-inf */              \
  X(digamma)    /* Gamma'/Gamma; nan at 0, -1, -2, ... and -inf; +inf at +inf */                \
  X(bessel_i1e) /* exp(-|x|) * I1(x), the exponentially scaled modified Bessel function */

/* real binary functions, f32 and f64: out[i] = f(x[i], y[i]) */
#define CJ_VM_REAL_BINARY(X)                                                                    \
  X(atan2)      /* atan2(y = x[i], x = y[i]): argument order as C's atan2 and StableHLO's */    \
  X(pow)        /* x^y with C99 Annex F special cases (pow(x, +-0) = 1, pow(1, y) = 1, ...) */

/* complex unary functions, complex<f32> (c64) and complex<f64> (c128), complex result */
#define CJ_VM_COMPLEX_UNARY(X)                                                                  \
  X(exp)                                                                                        \
  X(expm1)                                                                                      \
  X(log)                                                                                        \
  X(log1p)                                                                                      \
  X(sqrt)       /* principal branch, Annex G */                                                 \
  X(rsqrt)      /* 1/sqrt(z) */                                                                 \
  CJ_VM_TRIG(X)                                                                                 \
  X(logistic)   /* 1/(1+e^-z) */                                                                \
  X(square)     /* z*z computed as ((re-im)(re+im), 2 re im), as chlo.square */                 \
  X(sign)       /* z/|z|; 0 for 0; nan parts propagate */

/* complex binary functions: out[i] = f(x[i], y[i]) */
#define CJ_VM_COMPLEX_BINARY(X) X(pow) /* exp(y * log(x)); pow(x, 0) = 1 */

/* ---- declarations ---- */

/* CJ_VM_EACH(P) applies P_RU, P_RB, P_CU and P_CB to every real unary, real binary, complex
 * unary and complex binary function. Such a P_xx(fn) is CJ_VM_xx(X, fn): X(fn, suffix, T, A) for
 * both precisions, suffix f32/f64 or c64/c128 and T the (component) element type, with
 * CJ_VM_<A>_PARAMS(T) the parameters of the array function and CJ_VM_<A>_ARGS its arguments. */
#define CJ_VM_EACH(P) \
  CJ_VM_REAL_UNARY(P##_RU) CJ_VM_REAL_BINARY(P##_RB) CJ_VM_COMPLEX_UNARY(P##_CU) CJ_VM_COMPLEX_BINARY(P##_CB)
#define CJ_VM_RU(X, fn) X(fn, f32, float, UN) X(fn, f64, double, UN)
#define CJ_VM_RB(X, fn) X(fn, f32, float, BIN) X(fn, f64, double, BIN)
#define CJ_VM_CU(X, fn) X(fn, c64, float, UN) X(fn, c128, double, UN)
#define CJ_VM_CB(X, fn) X(fn, c64, float, BIN) X(fn, c128, double, BIN)
#define CJ_VM_UN_PARAMS(T) const T *x, T *y, int64_t n
#define CJ_VM_UN_ARGS x, y, n
#define CJ_VM_BIN_PARAMS(T) const T *x, const T *y, T *out, int64_t n
#define CJ_VM_BIN_ARGS x, y, out, n

#define CJ_VM_DECL(fn, s, T, A) void cj_vm_##fn##_##s(CJ_VM_##A##_PARAMS(T));
#define CJ_VM_DECL_RU(fn) CJ_VM_RU(CJ_VM_DECL, fn)
#define CJ_VM_DECL_RB(fn) CJ_VM_RB(CJ_VM_DECL, fn)
#define CJ_VM_DECL_CU(fn) CJ_VM_CU(CJ_VM_DECL, fn)
#define CJ_VM_DECL_CB(fn) CJ_VM_CB(CJ_VM_DECL, fn)
CJ_VM_EACH(CJ_VM_DECL)

/* |z| (hypot of the parts, no spurious overflow): n complex inputs -> n real outputs */
void cj_vm_abs_c64(const float *x, float *y, int64_t n);
void cj_vm_abs_c128(const double *x, double *y, int64_t n);

/* ---- instruction-set selection (for tests and benchmarks) ----
 * The library picks the widest variant the CPU supports on first use; the environment variable
 * CJ_VMATH_ISA=generic|avx2|avx512 caps it. cj_vm_set_isa caps it at run time (a variant the CPU
 * lacks is never chosen) and returns the variant now in force; cj_vm_isa_name names one. */
typedef enum cj_vm_isa { CJ_VM_ISA_GENERIC = 0, CJ_VM_ISA_AVX2 = 1, CJ_VM_ISA_AVX512 = 2 } cj_vm_isa;
cj_vm_isa cj_vm_set_isa(cj_vm_isa max_isa);
cj_vm_isa cj_vm_get_isa(void);
const char *cj_vm_isa_name(cj_vm_isa isa);

/* ---- internal: the per-instruction-set tables (vmath.c, vmath_isa_*.c) ---- */
#ifdef CJ_VM_INTERNAL
#define CJ_VM_TAB(fn, s, T, A) void (*fn##_##s)(CJ_VM_##A##_PARAMS(T));
#define CJ_VM_TAB_RU(fn) CJ_VM_RU(CJ_VM_TAB, fn)
#define CJ_VM_TAB_RB(fn) CJ_VM_RB(CJ_VM_TAB, fn)
#define CJ_VM_TAB_CU(fn) CJ_VM_CU(CJ_VM_TAB, fn)
#define CJ_VM_TAB_CB(fn) CJ_VM_CB(CJ_VM_TAB, fn)
typedef struct cj_vm_table {
  CJ_VM_EACH(CJ_VM_TAB)
  void (*abs_c64)(const float *, float *, int64_t);
  void (*abs_c128)(const double *, double *, int64_t);
} cj_vm_table;
extern const cj_vm_table cj_vm_table_generic;
#if defined(__x86_64__) && defined(__GNUC__)
#define CJ_VM_X86 1
extern const cj_vm_table cj_vm_table_avx2;
extern const cj_vm_table cj_vm_table_avx512;
#endif
#endif

#endif
