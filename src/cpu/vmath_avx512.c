/* cjrt vmath: AVX-512 array functions for the f32 exp and log, by intrinsics. A body, see
 * vmath_real.c; included after vmath_f32.c, and compiles to nothing but in the AVX-512 build
 * (VM_ISA_LEVEL 2), where its functions replace the kernel loops in the table (vmath_loops.c).
 *
 * Each is kf32_exp / kf32_log (vmath_f32.c) operation for operation, so the results are the same
 * bits on every input (test_vmath compares them with the AVX2 build's on bit-pattern sweeps); only
 * the instructions that emulate what AVX-512 does in one go change:
 *  - exp: floor(x log2(e) + 1/2) is vrndscaleps (GCC turns the rint-and-compare of vmf_floor into
 *    two shifted copies of the whole kernel under masks), and z 2^n is vscalefps, which rounds
 *    once, as the two-step scaling of kf32_exp does (its first step is exact), for subnormal
 *    results and overflow alike;
 *  - log: the split u = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), from vgetexpps/vgetmantps,
 *    which normalize subnormal inputs themselves (kf32_log scales them by 2^23 first): with
 *    u = M 2^E, M in [1, 2), it is e = E, f = M - 1 below sqrt(2) and e = E + 1, f = M/2 - 1
 *    above, the same exact e and f as vmf_log_split's.
 * The last partial vector is read and written under a mask (lanes past n are never touched). */
#ifdef CJ_VM_BODY
#if defined(__x86_64__) && defined(__GNUC__) && VM_ISA_LEVEL == 2
#define VM_HAVE_X512_EXP_LOG 1

#define X5_SET(c) _mm512_set1_ps(c)

VM_INLINE __m512 x5_exp(__m512 x) {
  /* the clamp of kf32_exp: a NaN lane computes something and is replaced at the end */
  __m512 xc = _mm512_min_ps(_mm512_max_ps(x, X5_SET(-104.0f)), X5_SET(88.8f));
  __m512 nn = _mm512_roundscale_ps(_mm512_fmadd_ps(xc, X5_SET(XF_LOG2E), X5_SET(0.5f)),
                                   _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC);
  __m512 a = _mm512_fnmadd_ps(nn, X5_SET(XF_C1), xc);
  a = _mm512_fnmadd_ps(nn, X5_SET(XF_C2), a);
  __m512 p = _mm512_fmadd_ps(a, X5_SET(XF_P0), X5_SET(XF_P1));
  p = _mm512_fmadd_ps(p, a, X5_SET(XF_P2));
  p = _mm512_fmadd_ps(p, a, X5_SET(XF_P3));
  p = _mm512_fmadd_ps(p, a, X5_SET(XF_P4));
  p = _mm512_fmadd_ps(p, a, X5_SET(XF_P5));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(a, a), a);
  __m512 r = _mm512_scalef_ps(_mm512_add_ps(p, X5_SET(1.0f)), nn);
  __mmask16 nan = _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q);
  return _mm512_mask_add_ps(r, nan, x, x);
}

VM_INLINE __m512 x5_log(__m512 x) {
  __m512 mant = _mm512_getmant_ps(x, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  __m512 e = _mm512_getexp_ps(x);
  __mmask16 hi = _mm512_cmp_ps_mask(mant, X5_SET(2.0f * XF_SQRTHF), _CMP_GE_OQ);
  e = _mm512_mask_add_ps(e, hi, e, X5_SET(1.0f));
  __m512 f = _mm512_mask_mul_ps(mant, hi, mant, X5_SET(0.5f));
  f = _mm512_sub_ps(f, X5_SET(1.0f));
  __m512 z = _mm512_mul_ps(f, f);
  __m512 x3 = _mm512_mul_ps(z, f);
  /* vmf_log_poly */
  __m512 y1 = _mm512_fmadd_ps(f, X5_SET(XF_L0), X5_SET(XF_L1));
  __m512 y2 = _mm512_fmadd_ps(f, X5_SET(XF_L3), X5_SET(XF_L4));
  __m512 y3 = _mm512_fmadd_ps(f, X5_SET(XF_L6), X5_SET(XF_L7));
  y1 = _mm512_fmadd_ps(y1, f, X5_SET(XF_L2));
  y2 = _mm512_fmadd_ps(y2, f, X5_SET(XF_L5));
  y3 = _mm512_fmadd_ps(y3, f, X5_SET(XF_L8));
  __m512 y = _mm512_fmadd_ps(y1, x3, y2);
  y = _mm512_fmadd_ps(y, x3, y3);
  y = _mm512_fmadd_ps(y, x3, _mm512_mul_ps(X5_SET(XF_C2), e));
  __m512 r = _mm512_fmadd_ps(X5_SET(-0.5f), z, f);
  r = _mm512_add_ps(r, y);
  r = _mm512_fmadd_ps(X5_SET(XF_C1), e, r);
  /* the special lanes, in kf32_log's order */
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_EQ_OQ),
                         X5_SET(-INFINITY));
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, _mm512_setzero_ps(), _CMP_LT_OQ), X5_SET(NAN));
  r = _mm512_mask_mov_ps(r, _mm512_cmp_ps_mask(x, X5_SET(INFINITY), _CMP_EQ_OQ), x);
  return _mm512_mask_add_ps(r, _mm512_cmp_ps_mask(x, x, _CMP_UNORD_Q), x, x);
}

/* the array loop over a vector kernel K: whole vectors, then the rest under a mask */
#define X5_LOOP(NAME, K)                                                                        \
  static void NAME(const float *x, float *y, int64_t n) {                                       \
    int64_t i = 0;                                                                              \
    for (; i + 16 <= n; i += 16) _mm512_storeu_ps(y + i, K(_mm512_loadu_ps(x + i)));            \
    if (i < n) {                                                                                \
      __mmask16 m = (__mmask16)((1u << (n - i)) - 1u);                                          \
      _mm512_mask_storeu_ps(y + i, m, K(_mm512_maskz_loadu_ps(m, x + i)));                      \
    }                                                                                           \
  }
X5_LOOP(vl_x5_exp_f32, x5_exp)
X5_LOOP(vl_x5_log_f32, x5_log)

#endif
#endif /* CJ_VM_BODY */
