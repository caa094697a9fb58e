/* cjrt vmath: AVX-512 array functions for the f32 exp, expm1, logistic, log and log1p, by
 * intrinsics. A body, see vmath_real.c; included after vmath_f32.c, and compiles to nothing but
 * in the AVX-512 build (VM_ISA_LEVEL 2), where its functions replace the kernel loops in the table (vmath_loops.c).
 *
 * Each is its kf32_<fn> (vmath_f32.c) operation for operation, so the results are the same
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

/* vmf_log_split: u = 2^e (1 + f) for u positive and finite (normal or not) */
VM_INLINE void x5_log_split(__m512 u, __m512 *e, __m512 *f) {
  __m512 mant = _mm512_getmant_ps(u, _MM_MANT_NORM_1_2, _MM_MANT_SIGN_zero);
  __m512 ex = _mm512_getexp_ps(u);
  __mmask16 hi = _mm512_cmp_ps_mask(mant, X5_SET(2.0f * XF_SQRTHF), _CMP_GE_OQ);
  *e = _mm512_mask_add_ps(ex, hi, ex, X5_SET(1.0f));
  *f = _mm512_sub_ps(_mm512_mask_mul_ps(mant, hi, mant, X5_SET(0.5f)), X5_SET(1.0f));
}

/* f - f^2/2 + f^3 P(f) + tail + C1 e: vmf_log_poly and the sums around it */
VM_INLINE __m512 x5_log_poly(__m512 f, __m512 e, __m512 tail) {
  __m512 z = _mm512_mul_ps(f, f);
  __m512 x3 = _mm512_mul_ps(z, f);
  __m512 y1 = _mm512_fmadd_ps(f, X5_SET(XF_L0), X5_SET(XF_L1));
  __m512 y2 = _mm512_fmadd_ps(f, X5_SET(XF_L3), X5_SET(XF_L4));
  __m512 y3 = _mm512_fmadd_ps(f, X5_SET(XF_L6), X5_SET(XF_L7));
  y1 = _mm512_fmadd_ps(y1, f, X5_SET(XF_L2));
  y2 = _mm512_fmadd_ps(y2, f, X5_SET(XF_L5));
  y3 = _mm512_fmadd_ps(y3, f, X5_SET(XF_L8));
  __m512 y = _mm512_fmadd_ps(y1, x3, y2);
  y = _mm512_fmadd_ps(y, x3, y3);
  y = _mm512_fmadd_ps(y, x3, tail);
  __m512 r = _mm512_fmadd_ps(X5_SET(-0.5f), z, f);
  r = _mm512_add_ps(r, y);
  return _mm512_fmadd_ps(X5_SET(XF_C1), e, r);
}

#define X5_MASK(a, cmp, b) _mm512_cmp_ps_mask((a), (b), (cmp))

VM_INLINE __m512 x5_log(__m512 x) {
  __m512 e, f;
  x5_log_split(x, &e, &f); /* lanes <= 0, inf, NaN compute something, replaced below */
  __m512 r = x5_log_poly(f, e, _mm512_mul_ps(X5_SET(XF_C2), e));
  /* the special lanes, in kf32_log's order */
  __m512 zero = _mm512_setzero_ps();
  r = _mm512_mask_mov_ps(r, X5_MASK(x, _CMP_EQ_OQ, zero), X5_SET(-INFINITY));
  r = _mm512_mask_mov_ps(r, X5_MASK(x, _CMP_LT_OQ, zero), X5_SET(NAN));
  r = _mm512_mask_mov_ps(r, X5_MASK(x, _CMP_EQ_OQ, X5_SET(INFINITY)), x);
  return _mm512_mask_add_ps(r, X5_MASK(x, _CMP_UNORD_Q, x), x, x);
}

VM_INLINE __m512 x5_log1p(__m512 x) {
  __m512 one = X5_SET(1.0f), zero = _mm512_setzero_ps();
  __m512 u = _mm512_add_ps(one, x);
  __mmask16 ok = X5_MASK(u, _CMP_GT_OQ, zero) & X5_MASK(u, _CMP_LT_OQ, X5_SET(INFINITY));
  __m512 uc = _mm512_mask_mov_ps(one, ok, u);
  __m512 e, f;
  x5_log_split(uc, &e, &f);
  __m512 c = _mm512_div_ps(_mm512_sub_ps(x, _mm512_sub_ps(uc, one)), uc);
  c = _mm512_maskz_mov_ps(X5_MASK(uc, _CMP_LT_OQ, X5_SET(0x1p24f)), c);
  __mmask16 e0 = X5_MASK(e, _CMP_EQ_OQ, zero);
  f = _mm512_mask_mov_ps(f, e0, x);
  c = _mm512_mask_mov_ps(c, e0, zero);
  __m512 r = x5_log_poly(f, e, _mm512_fmadd_ps(X5_SET(XF_C2), e, c));
  r = _mm512_mask_mov_ps(r, X5_MASK(x, _CMP_EQ_OQ, zero), x);
  r = _mm512_mask_mov_ps(r, X5_MASK(u, _CMP_EQ_OQ, zero), X5_SET(-INFINITY));
  r = _mm512_mask_mov_ps(r, X5_MASK(x, _CMP_LT_OQ, X5_SET(-1.0f)), X5_SET(NAN));
  r = _mm512_mask_mov_ps(r, X5_MASK(x, _CMP_EQ_OQ, X5_SET(INFINITY)), x);
  return _mm512_mask_add_ps(r, X5_MASK(x, _CMP_UNORD_Q, x), x, x);
}

/* kf32_expm1: above 2.5 exp(x) - 1; below 2^k (1 + p(r)) - 1 with k = rint(x log2(e)) */
VM_INLINE __m512 x5_expm1(__m512 x) {
  __m512 one = X5_SET(1.0f);
  __m512 big = _mm512_sub_ps(x5_exp(x), one);
  __m512 xc = _mm512_min_ps(_mm512_max_ps(x, X5_SET(-30.0f)), X5_SET(XF_EM1_BIG));
  __m512 k = _mm512_roundscale_ps(_mm512_mul_ps(xc, X5_SET(XF_LOG2E)),
                                  _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(k, X5_SET(XF_C1), xc);
  r = _mm512_fnmadd_ps(k, X5_SET(XF_C2), r);
  /* vmf_em1_q */
  __m512 q = _mm512_fmadd_ps(X5_SET(0x1.a0464cp-13f), r, X5_SET(0x1.6d42bap-10f));
  q = _mm512_fmadd_ps(q, r, X5_SET(0x1.111166p-7f));
  q = _mm512_fmadd_ps(q, r, X5_SET(0x1.5554eap-5f));
  q = _mm512_fmadd_ps(q, r, X5_SET(0x1.555556p-3f));
  q = _mm512_fmadd_ps(q, r, X5_SET(0.5f));
  __m512 p = _mm512_fmadd_ps(_mm512_mul_ps(r, r), q, r);
  __m512 t = _mm512_scalef_ps(one, k); /* k in [-44, 4]: exact */
  __m512 res = _mm512_fmadd_ps(t, p, _mm512_sub_ps(t, one));
  res = _mm512_mask_mov_ps(res, X5_MASK(x, _CMP_GT_OQ, X5_SET(XF_EM1_BIG)), big);
  res = _mm512_mask_mov_ps(res, X5_MASK(x, _CMP_EQ_OQ, _mm512_setzero_ps()), x);
  return _mm512_mask_add_ps(res, X5_MASK(x, _CMP_UNORD_Q, x), x, x);
}

/* kf32_logistic: 1 / (1 + e^-x) with the roundings corrected for x < 0; e^x below -80 */
VM_INLINE __m512 x5_logistic(__m512 x) {
  __m512 one = X5_SET(1.0f), zero = _mm512_setzero_ps();
  __mmask16 tiny = X5_MASK(x, _CMP_LT_OQ, X5_SET(-80.0f));
  __m512 e = x5_exp(_mm512_mask_mov_ps(_mm512_mul_ps(x, X5_SET(-1.0f)), tiny, x));
  __m512 d = _mm512_add_ps(one, e);
  __m512 r = _mm512_div_ps(one, d);
  __m512 dl = _mm512_sub_ps(one, _mm512_sub_ps(d, e));
  __m512 res = _mm512_sub_ps(_mm512_fnmadd_ps(r, d, one), _mm512_mul_ps(r, dl));
  __m512 rn = _mm512_fmadd_ps(r, res, r);
  r = _mm512_mask_mov_ps(r, X5_MASK(x, _CMP_LT_OQ, zero), rn);
  r = _mm512_mask_mov_ps(r, tiny, e);
  return _mm512_mask_add_ps(r, X5_MASK(x, _CMP_UNORD_Q, x), x, x);
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
X5_LOOP(vl_x5_log1p_f32, x5_log1p)
X5_LOOP(vl_x5_expm1_f32, x5_expm1)
X5_LOOP(vl_x5_logistic_f32, x5_logistic)

#endif
#endif /* CJ_VM_BODY */
