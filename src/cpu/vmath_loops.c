/* cjrt vmath: the array loops over the kernels of vmath_real.c, vmath_special.c and
 * vmath_cplx.c, and the table of one instruction set. A body: included by vmath_isa_*.c with
 * CJ_VM_BODY and VM_TABLE (the table's name) defined; compiles to nothing on its own.
 *
 * Each loop works on blocks of VM_B elements copied into local arrays (so in-place calls and
 * unaligned pointers are fine and the fixed-count inner loop vectorizes); the last partial
 * block is zero-padded. Functions with a rare slow path (sin/cos/tan of huge arguments) patch
 * the lanes that need it after the vector pass, with a scalar libm call.
 */
#ifdef CJ_VM_BODY

#define VM_B 16
/* the kernel loops must stay loops for the vectorizer: a small kernel would otherwise be
 * unrolled completely first, and its selects become branches */
#define VM_NOUNROLL _Pragma("GCC unroll 1")

/* slow-path patches: default none */
#define VM_FIX_NONE(fn)                                                                           \
  VM_INLINE void vm_fix_##fn(const double *in, double *out) {                                   \
    (void)in;                                                                                   \
    (void)out;                                                                                  \
  }                                                                                             \
  VM_INLINE void vm_fix32_##fn(const float *in, float *out) {                                   \
    (void)in;                                                                                   \
    (void)out;                                                                                  \
  }
#define VM_FIX_LIBM(fn, libfn)                                                                    \
  static void vm_fix_slow_##fn(const double *in, double *out) {                                 \
    for (int j = 0; j < VM_B; j++)                                                              \
      if (vm_abs(in[j]) >= SINCOS_LIMIT && vm_abs(in[j]) < INFINITY) out[j] = libfn(in[j]);     \
  }                                                                                             \
  VM_INLINE void vm_fix_##fn(const double *in, double *out) {                                   \
    int any = 0;                                                                                \
    for (int j = 0; j < VM_B; j++) any |= vm_abs(in[j]) >= SINCOS_LIMIT;                        \
    if (any) vm_fix_slow_##fn(in, out);                                                         \
  }                                                                                             \
  static void vm_fix32_slow_##fn(const float *in, float *out) {                                 \
    for (int j = 0; j < VM_B; j++) {                                                            \
      double v = in[j];                                                                         \
      if (vm_abs(v) >= SINCOS_LIMIT && vm_abs(v) < INFINITY) out[j] = (float)libfn(v);          \
    }                                                                                           \
  }                                                                                             \
  VM_INLINE void vm_fix32_##fn(const float *in, float *out) {                                   \
    int any = 0;                                                                                \
    for (int j = 0; j < VM_B; j++) any |= (double)in[j] >= SINCOS_LIMIT;                        \
    for (int j = 0; j < VM_B; j++) any |= (double)in[j] <= -SINCOS_LIMIT;                       \
    if (any) vm_fix32_slow_##fn(in, out);                                                       \
  }

VM_FIX_LIBM(sin, sin)
VM_FIX_LIBM(cos, cos)
VM_FIX_LIBM(tan, tan)
#define VM_NOFIX_LIST(X)                                                                          \
  X(exp) X(exp2) X(expm1) X(log) X(log2) X(log10) X(log1p) X(tanh) X(sinh) X(cosh) X(asin)      \
  X(acos) X(atan) X(asinh) X(acosh) X(atanh) X(sqrt) X(rsqrt) X(cbrt) X(logistic) X(erf)        \
  X(erfc) X(erf_inv) X(lgamma) X(digamma) X(bessel_i1e)
VM_NOFIX_LIST(VM_FIX_NONE)

/* f32 kernels: the unary ones kf32_<fn> are defined by vmath_f32.c (some are the double kernel:
 * exact enough that the rounding to float is correct or within a hair of it); the binary and
 * complex ones are the double kernels, here */
#define VM_K32_DEFAULT_RB(fn)                                                                     \
  VM_INLINE float kf32_##fn(float x, float y) { return (float)k_##fn((double)x, (double)y); }
#define VM_K32_DEFAULT_CU(fn)                                                                     \
  VM_INLINE void kc32_##fn(double a, double b, double *c, double *d) { kc_##fn(a, b, c, d); }
#define VM_K32_DEFAULT_CB(fn)                                                                     \
  VM_INLINE void kc32_##fn(double a, double b, double c, double d, double *e, double *f) {      \
    kc_##fn(a, b, c, d, e, f);                                                                  \
  }
CJ_VM_REAL_BINARY(VM_K32_DEFAULT_RB)
CJ_VM_COMPLEX_UNARY(VM_K32_DEFAULT_CU)
CJ_VM_COMPLEX_BINARY(VM_K32_DEFAULT_CB)

/* block copies are element loops, not memcpy: GCC expands a 128-byte memcpy into 256-bit moves,
 * and a 512-bit load of data just stored in halves cannot be store-forwarded (a stall per
 * block that serializes the blocks) */
#define VM_LOAD(T, dst, src, m)                                                                   \
  do {                                                                                          \
    if ((m) == VM_B) {                                                                          \
      for (int j_ = 0; j_ < VM_B; j_++) (dst)[j_] = (src)[j_];                                  \
    } else {                                                                                    \
      memset(dst, 0, sizeof(T) * VM_B);                                                         \
      memcpy(dst, src, sizeof(T) * (size_t)(m));                                                \
    }                                                                                           \
  } while (0)

/* complex fix-ups: lanes with a part beyond SINCOS_LIMIT are recomputed with libm's sin/cos;
 * the input is the interleaved block (double, or float for c64) */
#define VM_CFIX_NONE(fn)                                                                          \
  VM_INLINE void vm_cfix_##fn(const double *b, double *ore, double *oim) {                      \
    (void)b;                                                                                    \
    (void)ore;                                                                                  \
    (void)oim;                                                                                  \
  }                                                                                             \
  VM_INLINE void vm_cfix32_##fn(const float *b, double *ore, double *oim) {                     \
    (void)b;                                                                                    \
    (void)ore;                                                                                  \
    (void)oim;                                                                                  \
  }
#define VM_CFIX_SC(fn)                                                                            \
  static void vm_cfix_slow_##fn(double re, double im, double *ore, double *oim) {               \
    double m = vm_abs(re) > vm_abs(im) ? vm_abs(re) : vm_abs(im);                               \
    if (m >= SINCOS_LIMIT) kc_##fn##_sc(re, im, ore, oim, vm_sincos_libm);                      \
  }                                                                                             \
  VM_INLINE void vm_cfix_##fn(const double *b, double *ore, double *oim) {                      \
    int any = 0;                                                                                \
    for (int j = 0; j < 2 * VM_B; j++) any |= vm_abs(b[j]) >= SINCOS_LIMIT;                     \
    if (any)                                                                                    \
      for (int j = 0; j < VM_B; j++)                                                            \
        vm_cfix_slow_##fn(b[2 * j], b[2 * j + 1], &ore[j], &oim[j]);                            \
  }                                                                                             \
  VM_INLINE void vm_cfix32_##fn(const float *b, double *ore, double *oim) {                     \
    int any = 0;                                                                                \
    for (int j = 0; j < 2 * VM_B; j++) any |= (double)b[j] >= SINCOS_LIMIT;                     \
    for (int j = 0; j < 2 * VM_B; j++) any |= (double)b[j] <= -SINCOS_LIMIT;                    \
    if (any)                                                                                    \
      for (int j = 0; j < VM_B; j++)                                                            \
        vm_cfix_slow_##fn(b[2 * j], b[2 * j + 1], &ore[j], &oim[j]);                            \
  }
VM_CFIX_SC(exp)
VM_CFIX_SC(expm1)
VM_CFIX_SC(logistic)
VM_CFIX_SC(sinh)
VM_CFIX_SC(cosh)
VM_CFIX_SC(tanh)
VM_CFIX_SC(sin)
VM_CFIX_SC(cos)
VM_CFIX_SC(tan)
#define VM_CNOFIX_LIST(X)                                                                         \
  X(log) X(log1p) X(sqrt) X(rsqrt) X(asin) X(acos) X(atan) X(asinh) X(acosh) X(atanh) X(square) \
  X(sign)
VM_CNOFIX_LIST(VM_CFIX_NONE)

/* pow: the sine's argument is Im(y log x); lanes where it can pass SINCOS_LIMIT are redone */
static void vm_cfix_slow_pow(const double *a, const double *b, double *ore, double *oim) {
  for (int j = 0; j < VM_B; j++) {
    double m = vm_abs(b[2 * j]) > vm_abs(b[2 * j + 1]) ? vm_abs(b[2 * j]) : vm_abs(b[2 * j + 1]);
    if (m * 750.0 >= SINCOS_LIMIT)
      kc_pow_sc(a[2 * j], a[2 * j + 1], b[2 * j], b[2 * j + 1], &ore[j], &oim[j], vm_sincos_libm);
  }
}
VM_INLINE void vm_cfix_pow(const double *a, const double *b, double *ore, double *oim) {
  int any = 0;
  for (int j = 0; j < 2 * VM_B; j++) any |= vm_abs(b[j]) * 750.0 >= SINCOS_LIMIT;
  if (any) vm_cfix_slow_pow(a, b, ore, oim);
}

/* the input of one block: the caller's array for a full block, a zero-padded copy for the last */
#define VM_SRC(T, name, pad, src, m, width)                                                       \
  const T *name = (src);                                                                        \
  T pad[(width)];                                                                               \
  if ((m) < VM_B) {                                                                             \
    memset(pad, 0, sizeof pad);                                                                 \
    memcpy(pad, src, sizeof(T) * (size_t)(m) * ((width) / VM_B));                               \
    name = pad;                                                                                 \
  }

#define VM_STORE(dst, src, m)                                                                     \
  do {                                                                                          \
    if ((m) == VM_B) {                                                                          \
      for (int j_ = 0; j_ < VM_B; j_++) (dst)[j_] = (src)[j_];                                  \
    } else {                                                                                    \
      memcpy(dst, src, sizeof((src)[0]) * (size_t)(m));                                         \
    }                                                                                           \
  } while (0)

/* the same for interleaved complex blocks of 2*VM_B scalars, m complex elements */
#define VM_LOAD2(T, dst, src, m)                                                                  \
  do {                                                                                          \
    if ((m) == VM_B) {                                                                          \
      for (int j_ = 0; j_ < 2 * VM_B; j_++) (dst)[j_] = (src)[j_];                              \
    } else {                                                                                    \
      memset(dst, 0, sizeof(T) * 2 * VM_B);                                                     \
      memcpy(dst, src, sizeof(T) * 2 * (size_t)(m));                                            \
    }                                                                                           \
  } while (0)

/* re-interleaves the m complex results re[j], im[j] through the block buf into dst */
#define VM_STORE2(T, buf, re, im, dst, m)                                                       \
  do {                                                                                          \
    for (int j_ = 0; j_ < VM_B; j_++) {                                                         \
      (buf)[2 * j_] = (T)(re)[j_];                                                              \
      (buf)[2 * j_ + 1] = (T)(im)[j_];                                                          \
    }                                                                                           \
    memcpy(dst, buf, sizeof(T) * 2 * (size_t)(m));                                              \
  } while (0)

/* the loop of a real unary function: T elements, KERN(x) per element, FIX(in, out) per block */
#define VM_LOOP_RU(NAME, T, KERN, FIX)                                                          \
  static void NAME(const T *x, T *y, int64_t n) {                                               \
    for (int64_t i = 0; i < n; i += VM_B) {                                                     \
      int64_t m = n - i < VM_B ? n - i : VM_B;                                                  \
      T out[VM_B];                                                                              \
      VM_SRC(T, in, pad, x + i, m, VM_B)                                                        \
      VM_NOUNROLL for (int j = 0; j < VM_B; j++) out[j] = KERN(in[j]);                          \
      FIX(in, out);                                                                             \
      VM_STORE(y + i, out, m);                                                                  \
    }                                                                                           \
  }
#define VM_DEF_RU(fn)                                                                             \
  VM_LOOP_RU(vl_##fn##_f64, double, k_##fn, vm_fix_##fn)                                        \
  VM_LOOP_RU(vl_##fn##_f32, float, kf32_##fn, vm_fix32_##fn)

/* the loop of a real binary function: T elements, KERN(x, y) per element */
#define VM_LOOP_RB(NAME, T, KERN)                                                               \
  static void NAME(const T *x, const T *y, T *o, int64_t n) {                                   \
    for (int64_t i = 0; i < n; i += VM_B) {                                                     \
      int64_t m = n - i < VM_B ? n - i : VM_B;                                                  \
      T out[VM_B];                                                                              \
      VM_SRC(T, a, pada, x + i, m, VM_B)                                                        \
      VM_SRC(T, b, padb, y + i, m, VM_B)                                                        \
      VM_NOUNROLL for (int j = 0; j < VM_B; j++) out[j] = KERN(a[j], b[j]);                     \
      VM_STORE(o + i, out, m);                                                                  \
    }                                                                                           \
  }
#define VM_DEF_RB(fn)                                                                             \
  VM_LOOP_RB(vl_##fn##_f64, double, k_##fn)                                                     \
  VM_LOOP_RB(vl_##fn##_f32, float, kf32_##fn)

/* complex: de-interleave into re/im blocks, compute, re-interleave */
#define VM_DEF_CU(fn)                                                                             \
  static void vl_c_##fn##_c128(const double *x, double *y, int64_t n) {                         \
    for (int64_t i = 0; i < n; i += VM_B) {                                                     \
      int64_t m = n - i < VM_B ? n - i : VM_B;                                                  \
      double buf[2 * VM_B], ore[VM_B], oim[VM_B];                                               \
      VM_LOAD2(double, buf, x + 2 * i, m);                                                      \
      VM_NOUNROLL for (int j = 0; j < VM_B; j++)                                                \
        kc_##fn(buf[2 * j], buf[2 * j + 1], &ore[j], &oim[j]);                                  \
      vm_cfix_##fn(buf, ore, oim);                                                              \
      VM_STORE2(double, buf, ore, oim, y + 2 * i, m);                                           \
    }                                                                                           \
  }                                                                                             \
  static void vl_c_##fn##_c64(const float *x, float *y, int64_t n) {                            \
    for (int64_t i = 0; i < n; i += VM_B) {                                                     \
      int64_t m = n - i < VM_B ? n - i : VM_B;                                                  \
      float buf[2 * VM_B];                                                                      \
      double ore[VM_B], oim[VM_B];                                                              \
      VM_LOAD2(float, buf, x + 2 * i, m);                                                       \
      VM_NOUNROLL for (int j = 0; j < VM_B; j++)                                                \
        kc32_##fn((double)buf[2 * j], (double)buf[2 * j + 1], &ore[j], &oim[j]);                \
      vm_cfix32_##fn(buf, ore, oim);                                                            \
      VM_STORE2(float, buf, ore, oim, y + 2 * i, m);                                            \
    }                                                                                           \
  }

#define VM_DEF_CB(fn)                                                                             \
  static void vl_c_##fn##_c128(const double *x, const double *y, double *o, int64_t n) {        \
    for (int64_t i = 0; i < n; i += VM_B) {                                                     \
      int64_t m = n - i < VM_B ? n - i : VM_B;                                                  \
      double ba[2 * VM_B], bb[2 * VM_B], ore[VM_B], oim[VM_B];                                  \
      VM_LOAD2(double, ba, x + 2 * i, m);                                                       \
      VM_LOAD2(double, bb, y + 2 * i, m);                                                       \
      VM_NOUNROLL for (int j = 0; j < VM_B; j++)                                                \
        kc_##fn(ba[2 * j], ba[2 * j + 1], bb[2 * j], bb[2 * j + 1], &ore[j], &oim[j]);          \
      vm_cfix_##fn(ba, bb, ore, oim);                                                           \
      VM_STORE2(double, ba, ore, oim, o + 2 * i, m);                                            \
    }                                                                                           \
  }                                                                                             \

CJ_VM_REAL_UNARY(VM_DEF_RU)
CJ_VM_REAL_BINARY(VM_DEF_RB)
CJ_VM_COMPLEX_UNARY(VM_DEF_CU)
CJ_VM_COMPLEX_BINARY(VM_DEF_CB)

/* complex<f32> pow: XLA's single-precision arithmetic (kcf_pow_xla_stage1 in vmath_cplx.c) */
static void vl_c_pow_c64(const float *x, const float *y, float *o, int64_t n) {
  for (int64_t i = 0; i < n; i += VM_B) {
    int64_t m = n - i < VM_B ? n - i : VM_B;
    float ba[2 * VM_B], bb[2 * VM_B], a[VM_B], b[VM_B], c[VM_B], d[VM_B];
    float coeff[VM_B], q[VM_B], cs[VM_B], sn[VM_B], re[VM_B], im[VM_B];
    VM_LOAD2(float, ba, x + 2 * i, m);
    VM_LOAD2(float, bb, y + 2 * i, m);
    for (int j = 0; j < VM_B; j++) {
      a[j] = ba[2 * j];
      b[j] = ba[2 * j + 1];
      c[j] = bb[2 * j];
      d[j] = bb[2 * j + 1];
    }
    VM_NOUNROLL for (int j = 0; j < VM_B; j++)
      kcf_pow_xla_stage1(a[j], b[j], c[j], d[j], &coeff[j], &q[j]);
    VM_NOUNROLL for (int j = 0; j < VM_B; j++) sn[j] = kf32_sin(q[j]);
    VM_NOUNROLL for (int j = 0; j < VM_B; j++) cs[j] = kf32_cos(q[j]);
    vm_fix32_sin(q, sn);
    vm_fix32_cos(q, cs);
    VM_NOUNROLL for (int j = 0; j < VM_B; j++)
      kcf_pow_xla_finish(a[j], b[j], c[j], d[j], coeff[j], cs[j], sn[j], &re[j], &im[j]);
    VM_STORE2(float, ba, re, im, o + 2 * i, m);
  }
}

/* |z| of complex<f32>: in double, without overflow (inf when a part is) */
VM_INLINE double vm_hypot_c64(double a, double b) {
  double r = vm_sqrt(a * a + b * b);
  return (vm_abs(a) == INFINITY || vm_abs(b) == INFINITY) ? INFINITY : r;
}
/* the loop of |z|: components of type T, HYPOT(re, im) per element */
#define VM_LOOP_ABS(NAME, T, HYPOT)                                                             \
  static void NAME(const T *x, T *y, int64_t n) {                                               \
    for (int64_t i = 0; i < n; i += VM_B) {                                                     \
      int64_t m = n - i < VM_B ? n - i : VM_B;                                                  \
      T buf[2 * VM_B], out[VM_B];                                                               \
      if (m == VM_B) {                                                                          \
        memcpy(buf, x + 2 * i, sizeof buf);                                                     \
      } else {                                                                                  \
        memset(buf, 0, sizeof buf);                                                             \
        memcpy(buf, x + 2 * i, sizeof(T) * 2 * (size_t)m);                                      \
      }                                                                                         \
      for (int j = 0; j < VM_B; j++) out[j] = (T)HYPOT(buf[2 * j], buf[2 * j + 1]);             \
      memcpy(y + i, out, sizeof(T) * (size_t)m);                                                \
    }                                                                                           \
  }
VM_LOOP_ABS(vl_c_abs_c128, double, vm_hypot)
VM_LOOP_ABS(vl_c_abs_c64, float, vm_hypot_c64)

/* sqrt and rsqrt arrays: the square-root instruction itself (correctly rounded), by intrinsics
 * because GCC does not vectorize sqrt() without -fno-math-errno on the command line. rsqrt is
 * 1/sqrt in double (f32 via double: correctly rounded but in rare ties; with AVX-512 the same
 * floats from vrsqrt14pd and Newton steps). */
#if defined(__x86_64__) && defined(__GNUC__) && VM_ISA_LEVEL == 2
/* sqrt of T elements, L to a vector (intrinsics _mm512_..._S), the tail under a mask of type M */
#define VM_HW_SQRT512(NAME, T, L, S, M)                                                         \
  static void NAME(const T *x, T *y, int64_t n) {                                               \
    int64_t i = 0;                                                                              \
    for (; i + (L) <= n; i += (L))                                                              \
      _mm512_storeu_##S(y + i, _mm512_sqrt_##S(_mm512_loadu_##S(x + i)));                       \
    if (i < n) {                                                                                \
      M m = (M)((1u << (n - i)) - 1u);                                                          \
      _mm512_mask_storeu_##S(y + i, m, _mm512_sqrt_##S(_mm512_maskz_loadu_##S(m, x + i)));      \
    }                                                                                           \
  }
VM_HW_SQRT512(vl_hw_sqrt_f64, double, 8, pd, __mmask8)
VM_HW_SQRT512(vl_hw_sqrt_f32, float, 16, ps, __mmask16)
/* rsqrt of 8 floats: in double from vrsqrt14pd (relative error 2^-14) by two Newton steps, the
 * second on the residual 1 - (x y) y by a fused multiply-add (error ~2^-53, as 1/sqrt in
 * double): the same floats as (float)(1 / sqrt((double)x)) on every positive finite input
 * (checked on all of them); the other lanes (zeros, infinities, negatives, NaNs: rare) take
 * that formula itself */
VM_INLINE __m256 vm_rsqrt8_ps(__m256 xf) {
  const __m512d one = _mm512_set1_pd(1.0), half = _mm512_set1_pd(0.5);
  __m512d x = _mm512_cvtps_pd(xf);
  __m512d y = _mm512_rsqrt14_pd(x);
  y = _mm512_mul_pd(y, _mm512_fnmadd_pd(_mm512_mul_pd(x, half), _mm512_mul_pd(y, y),
                                        _mm512_set1_pd(1.5)));
  __m512d r = _mm512_fnmadd_pd(_mm512_mul_pd(x, y), y, one);
  y = _mm512_fmadd_pd(_mm512_mul_pd(y, half), r, y);
  __mmask8 ok = _mm256_cmp_ps_mask(xf, _mm256_setzero_ps(), _CMP_GT_OQ) &
                _mm256_cmp_ps_mask(xf, _mm256_set1_ps(INFINITY), _CMP_LT_OQ);
  if (__builtin_expect(ok != 0xff, 0))
    y = _mm512_mask_div_pd(y, (__mmask8)~ok, one, _mm512_sqrt_pd(x));
  return _mm512_cvtpd_ps(y);
}
static void vl_hw_rsqrt_f32(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(y + i, vm_rsqrt8_ps(_mm256_loadu_ps(x + i)));
  if (i < n) {
    __mmask8 m = (__mmask8)((1u << (n - i)) - 1u);
    __m256 v = _mm256_mask_loadu_ps(_mm256_set1_ps(1.0f), m, x + i);
    _mm256_mask_storeu_ps(y + i, m, vm_rsqrt8_ps(v));
  }
}
#elif defined(__x86_64__) && defined(__GNUC__)
#if VM_ISA_LEVEL == 1
#define VM_PD __m256d
#define VM_PS __m256
#define VM_NPD 4
#define VM_NPS 8
#define VM_LDPD _mm256_loadu_pd
#define VM_STPD _mm256_storeu_pd
#define VM_SQPD _mm256_sqrt_pd
#define VM_DIVPD _mm256_div_pd
#define VM_SETPD _mm256_set1_pd
#define VM_LDPS _mm256_loadu_ps
#define VM_STPS _mm256_storeu_ps
#define VM_SQPS _mm256_sqrt_ps
#else
#define VM_PD __m128d
#define VM_PS __m128
#define VM_NPD 2
#define VM_NPS 4
#define VM_LDPD _mm_loadu_pd
#define VM_STPD _mm_storeu_pd
#define VM_SQPD _mm_sqrt_pd
#define VM_DIVPD _mm_div_pd
#define VM_SETPD _mm_set1_pd
#define VM_LDPS _mm_loadu_ps
#define VM_STPS _mm_storeu_ps
#define VM_SQPS _mm_sqrt_ps
#endif
static void vl_hw_sqrt_f64(const double *x, double *y, int64_t n) {
  int64_t i = 0;
  for (; i + VM_NPD <= n; i += VM_NPD) VM_STPD(y + i, VM_SQPD(VM_LDPD(x + i)));
  for (; i < n; i++) y[i] = __builtin_sqrt(x[i]);
}
static void vl_hw_sqrt_f32(const float *x, float *y, int64_t n) {
  int64_t i = 0;
  for (; i + VM_NPS <= n; i += VM_NPS) VM_STPS(y + i, VM_SQPS(VM_LDPS(x + i)));
  for (; i < n; i++) y[i] = __builtin_sqrtf(x[i]);
}
static void vl_hw_rsqrt_f32(const float *x, float *y, int64_t n) {
  double t[VM_NPD];
  int64_t i = 0;
  for (; i + VM_NPD <= n; i += VM_NPD) {
    for (int j = 0; j < VM_NPD; j++) t[j] = x[i + j];
    VM_STPD(t, VM_DIVPD(VM_SETPD(1.0), VM_SQPD(VM_LDPD(t))));
    for (int j = 0; j < VM_NPD; j++) y[i + j] = (float)t[j];
  }
  for (; i < n; i++) y[i] = (float)(1.0 / __builtin_sqrt((double)x[i]));
}
#else
static void vl_hw_sqrt_f64(const double *x, double *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = __builtin_sqrt(x[i]);
}
static void vl_hw_sqrt_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = __builtin_sqrtf(x[i]);
}
static void vl_hw_rsqrt_f32(const float *x, float *y, int64_t n) {
  for (int64_t i = 0; i < n; i++) y[i] = (float)(1.0 / __builtin_sqrt((double)x[i]));
}
#endif

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Woverride-init"
#define VM_TAB_RU(fn) .fn##_f32 = vl_##fn##_f32, .fn##_f64 = vl_##fn##_f64,
#define VM_TAB_CU(fn) .fn##_c64 = vl_c_##fn##_c64, .fn##_c128 = vl_c_##fn##_c128,
const cj_vm_table VM_TABLE = {
    CJ_VM_REAL_UNARY(VM_TAB_RU) CJ_VM_REAL_BINARY(VM_TAB_RU) CJ_VM_COMPLEX_UNARY(VM_TAB_CU)
        CJ_VM_COMPLEX_BINARY(VM_TAB_CU).abs_c64 = vl_c_abs_c64,
    .abs_c128 = vl_c_abs_c128,
    /* these entries replace the kernel loops above */
    .sqrt_f32 = vl_hw_sqrt_f32,
    .sqrt_f64 = vl_hw_sqrt_f64,
    .rsqrt_f32 = vl_hw_rsqrt_f32,
#ifdef VM_HAVE_X512_EXP_LOG
    .exp_f32 = vl_x5_exp_f32, /* vmath_avx512.c: the same bits as the kernel loops */
    .log_f32 = vl_x5_log_f32,
    .log1p_f32 = vl_x5_log1p_f32,
    .expm1_f32 = vl_x5_expm1_f32,
    .logistic_f32 = vl_x5_logistic_f32,
#endif
};
#pragma GCC diagnostic pop

#endif /* CJ_VM_BODY */
