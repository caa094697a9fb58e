/* cjrt vmath: dedicated single-precision kernels. A body, see vmath_real.c; included after
 * vmath_real.c and vmath_special.c.
 *
 * kf32_<fn>(float) is the f32 kernel the array loops (vmath_loops.c) run for every real unary
 * function. Most are the double kernel rounded once (correctly rounded but in rare
 * double-rounding cases); exp, expm1, log, log1p, tanh, erf and logistic are float polynomials
 * (16 lanes per AVX-512 register instead of 8), and sin and cos evaluate short double
 * polynomials (see below why).
 *
 * Agreement with XLA:CPU. The conformance corpus' expected values were computed by XLA:CPU in
 * single precision, and many of its checks are absolute (|a - e| <= 1e-3) on values up to 1e5,
 * where a 1-ulp difference fails: there only the same arithmetic passes. So where XLA's own
 * algorithm is accurate, we use the same one, operation for operation (measured bit-identical on
 * millions of inputs against jaxlib 0.10.2's XLA:CPU, whose polynomials are Cephes'):
 *  - exp: n = floor(x log2(e) + 1/2), a = x - n C1 - n C2 (two fused multiply-adds), e^a by a
 *    degree-7 polynomial, times 2^n. We differ where XLA is inexact: it flushes subnormal results
 *    to zero (we scale in two steps and return them) and clamps n to 127, which costs it up to
 *    5 ulp on x in (88.38, 88.72] (we scale by 2^128 in two steps). Max error 1 ulp.
 *  - log: the mantissa m in [sqrt(1/2), sqrt(2)), log(m) = f - f^2/2 + f^3 P(f), plus e ln 2 in
 *    two parts; XLA treats subnormal inputs as zero (-inf), we scale them. Max error 1 ulp.
 *  - expm1(x) for x > 2.5 is XLA's exp(x) - 1 (error <= 2 ulp there); below, our own reduction
 *    2^k (1 + p(r)) - 1 (XLA's small-x branch uses a 5-ulp tanh approximation; we do not).
 *  - logistic(x) = 1 / (1 + exp(-x)), the expansion jax emits, for x >= -80; below, exp(x).
 *  - tanh: XLA's rational approximation exactly (see kf32_tanh): 4.3 ulp, as XLA's.
 *  - erf: XLA's rational approximation exactly (see kf32_erf): 3 ulp, as XLA's.
 * XLA's sin and cos are glibc's sinf/cosf, correctly rounded in all but about 1% of cases; a
 * float polynomial of ~0.6 ulp would differ from them in several percent of cases, enough to
 * fail corpus programs that multiply sin by cosh(y) ~ 1e5. So sin and cos reduce and evaluate
 * in double with polynomials of just the degree that makes the rounding to float correct
 * (relative error ~2^-46): about twice the work of a float kernel, half that of the f64 one.
 */
#ifdef CJ_VM_BODY

VM_FLOAT_BITS(float, uint32_t, 0x80000000u, vmf_bits, vmf_flt, vmf_abs, vmf_copysign)
VM_INLINE float vmf_clamp(float x, float lo, float hi) {
  x = x < lo ? lo : x;
  return x > hi ? hi : x; /* NaN stays NaN */
}

/* fused multiply-add in single precision: the instruction where the ISA has it; otherwise the
 * exact product in double plus c, rounded twice (differs from a true fma in rare ties only) */
#if VM_HAVE_FMA
#define VM_FMAF(a, b, c) __builtin_fmaf((a), (b), (c))
#else
#define VM_FMAF(a, b, c) ((float)((double)(a) * (double)(b) + (double)(c)))
#endif

#define VMF_SHIFT 0x1.8p23f
/* round to nearest integer, |y| < 2^22 */
VM_INLINE float vmf_rint(float y) { return (y + VMF_SHIFT) - VMF_SHIFT; }
/* floor, |y| < 2^22: the rounding instruction where the ISA has one (AVX2 builds: vroundps;
 * GCC makes two masked copies of a whole kernel out of the compare-and-subtract) */
VM_INLINE float vmf_floor(float y) {
#if VM_ISA_LEVEL >= 1
  return __builtin_floorf(y);
#else
  float r = vmf_rint(y);
  return r > y ? r - 1.0f : r;
#endif
}
/* an integer-valued float (|n| < 2^22) as int32, without a conversion instruction: defined for
 * any input (NaN gives some value) */
VM_INLINE int32_t vmf_f2i(float n) { return (int32_t)(vmf_bits(n + VMF_SHIFT) - 0x4b400000u); }
/* 2^k for k in [-126, 127] */
VM_INLINE float vmf_pow2i(int32_t k) { return vmf_flt((uint32_t)(k + 127) << 23); }

/* ---------------- exp ---------------- */

#define XF_LOG2E 0x1.715476p+0f /* log2(e) */
#define XF_C1 0.693359375f      /* ln 2 = C1 - C2, C1 with 10 bits */
#define XF_C2 -2.12194440e-4f
#define XF_P0 1.9875691500e-4f /* e^a = 1 + a + a^2 P(a), |a| <= ln2/2 (Cephes) */
#define XF_P1 1.3981999507e-3f
#define XF_P2 8.3334519073e-3f
#define XF_P3 4.1665795894e-2f
#define XF_P4 1.6666665459e-1f
#define XF_P5 5.0000001201e-1f

/* e^x = z 2^n for x in [-104, 88.8] (no NaN): the operation sequence of XLA:CPU */
VM_INLINE void vmf_exp_zn(float x, float *z, float *n) {
  float nn = vmf_floor(VM_FMAF(x, XF_LOG2E, 0.5f));
  float a = VM_FMAF(-nn, XF_C1, x);
  a = VM_FMAF(-nn, XF_C2, a);
  float p = VM_FMAF(a, XF_P0, XF_P1);
  p = VM_FMAF(p, a, XF_P2);
  p = VM_FMAF(p, a, XF_P3);
  p = VM_FMAF(p, a, XF_P4);
  p = VM_FMAF(p, a, XF_P5);
  p = VM_FMAF(p, a * a, a);
  *z = p + 1.0f;
  *n = nn;
}

VM_INLINE float kf32_exp(float x) {
  float xc = vmf_clamp(x, -104.0f, 88.8f);
  float z, n;
  vmf_exp_zn(xc, &z, &n);
  int32_t k = vmf_f2i(n); /* [-150, 128] */
  /* z 2^k as (z 2^(k - k2)) 2^k2: exact, then one rounding (subnormal results) or overflow */
  int32_t k2 = k < -126 ? -64 : (k > 127 ? 1 : 0);
  float r = (z * vmf_pow2i(k - k2)) * vmf_pow2i(k2);
  return x != x ? x + x : r;
}

/* ---------------- expm1 ---------------- */

/* (e^r - 1 - r) / r^2 for |r| <= ln2/2 (fit.py em1f 5: rel err 2.7e-9) */
VM_INLINE float vmf_em1_q(float r) {
  float q = 0x1.a0464cp-13f;
  q = VM_FMAF(q, r, 0x1.6d42bap-10f);
  q = VM_FMAF(q, r, 0x1.111166p-7f);
  q = VM_FMAF(q, r, 0x1.5554eap-5f);
  q = VM_FMAF(q, r, 0x1.555556p-3f);
  return VM_FMAF(q, r, 0.5f);
}

#define XF_EM1_BIG 2.5f /* above: XLA's exp(x) - 1 */

VM_INLINE float kf32_expm1(float x) {
  float big = kf32_exp(x) - 1.0f;
  /* x <= 2.5: x = k ln2 + r, e^x - 1 = 2^k (1 + p) - 1 = 2^k p + (2^k - 1), 2^k - 1 exact */
  float xc = vmf_clamp(x, -30.0f, XF_EM1_BIG);
  float k = vmf_rint(xc * XF_LOG2E);
  float r = VM_FMAF(-k, XF_C1, xc);
  r = VM_FMAF(-k, XF_C2, r);
  float p = VM_FMAF(r * r, vmf_em1_q(r), r);
  float t = vmf_pow2i(vmf_f2i(k)); /* k in [-44, 4] */
  float small = VM_FMAF(t, p, t - 1.0f);
  float res = x > XF_EM1_BIG ? big : small;
  res = x == 0.0f ? x : res; /* expm1(-0) = -0 */
  return x != x ? x + x : res;
}

/* ---------------- log, log1p ---------------- */

#define XF_SQRTHF 0x1.6a09e6p-1f /* sqrt(1/2) */
#define XF_L0 7.0376836292e-2f   /* log(1+f) = f - f^2/2 + f^3 P(f) (Cephes) */
#define XF_L1 -1.1514610310e-1f
#define XF_L2 1.1676998740e-1f
#define XF_L3 -1.2420140846e-1f
#define XF_L4 1.4249322787e-1f
#define XF_L5 -1.6668057665e-1f
#define XF_L6 2.0000714765e-1f
#define XF_L7 -2.4999993993e-1f
#define XF_L8 3.3333331174e-1f

/* u = 2^e (1 + f), 1 + f in [sqrt(1/2), sqrt(2)), for u positive, normal and finite; f exact */
VM_INLINE void vmf_log_split(float u, float *e, float *f) {
  uint32_t b = vmf_bits(u);
  float m = vmf_flt((b & 0x807fffffu) | 0x3f000000u); /* [1/2, 1) */
  int lo = m < XF_SQRTHF;
  *e = (float)((int32_t)(b >> 23) - 126 - lo);
  *f = (m - 1.0f) + (lo ? m : 0.0f);
}

/* f^3 P(f) + tail, with XLA's evaluation order (Estrin in three strands) */
VM_INLINE float vmf_log_poly(float f, float x3, float tail) {
  float y1 = VM_FMAF(f, XF_L0, XF_L1);
  float y2 = VM_FMAF(f, XF_L3, XF_L4);
  float y3 = VM_FMAF(f, XF_L6, XF_L7);
  y1 = VM_FMAF(y1, f, XF_L2);
  y2 = VM_FMAF(y2, f, XF_L5);
  y3 = VM_FMAF(y3, f, XF_L8);
  float y = VM_FMAF(y1, x3, y2);
  y = VM_FMAF(y, x3, y3);
  return VM_FMAF(y, x3, tail);
}

VM_INLINE float kf32_log(float x) {
  int sub = x < 0x1p-126f;
  float xs = sub ? x * 0x1p23f : x;
  xs = x > 0.0f ? xs : 1.0f;
  xs = x < INFINITY ? xs : 1.0f;
  float e, f;
  vmf_log_split(xs, &e, &f);
  e = sub ? e - 23.0f : e;
  float z = f * f;
  float x3 = z * f;
  float y = vmf_log_poly(f, x3, XF_C2 * e);
  float r = VM_FMAF(-0.5f, z, f);
  r = r + y;
  r = VM_FMAF(XF_C1, e, r);
  r = x == 0.0f ? -INFINITY : r;
  r = x < 0.0f ? NAN : r;
  r = x == INFINITY ? x : r;
  return x != x ? x + x : r;
}

VM_INLINE float kf32_log1p(float x) {
  float u = 1.0f + x; /* >= 2^-24 when positive */
  float uc = u > 0.0f ? u : 1.0f;
  uc = u < INFINITY ? uc : 1.0f;
  float e, f;
  vmf_log_split(uc, &e, &f);
  /* 1 + x = u (1 + c) with c = (x - (u - 1)) / u: u - 1 is exact below 2^24; where e = 0,
   * 1 + x itself lies in [sqrt(1/2), sqrt(2)) (but for rounding at the ends): f = x exactly */
  float c = (x - (uc - 1.0f)) / uc;
  c = uc < 0x1p24f ? c : 0.0f;
  f = e == 0.0f ? x : f;
  c = e == 0.0f ? 0.0f : c;
  float z = f * f;
  float x3 = z * f;
  float y = vmf_log_poly(f, x3, VM_FMAF(XF_C2, e, c));
  float r = VM_FMAF(-0.5f, z, f);
  r = r + y;
  r = VM_FMAF(XF_C1, e, r);
  r = x == 0.0f ? x : r; /* log1p(-0) = -0 */
  r = u == 0.0f ? -INFINITY : r;
  r = x < -1.0f ? NAN : r;
  r = x == INFINITY ? x : r;
  return x != x ? x + x : r;
}

/* ---------------- tanh, logistic ---------------- */

/* tanh: XLA:CPU's own approximation (Eigen's fast float tanh, which XLA:CPU emits), operation
 * for operation, so cjrt's f32 tanh gives XLA's bits (checked on 400,000 inputs against jaxlib
 * 0.12's XLA:CPU, and by python/tests/jax/test_jax_numerics.py): the argument clamped to
 * +-7.99881172 (where the quotient reaches +-1), x^2, an odd degree-13 numerator and an even
 * degree-6 denominator in Horner form with fused multiply-adds, one division; |x| < 0.0004
 * returns x. Max error 4.3 ulp against the exact tanh, the same as XLA's; it costs a third of
 * an exp-based tanh (no exponential, no reduction), and recurrent models are mostly tanh. */
VM_INLINE float kf32_tanh(float x) {
  const float lim = 7.99881172180175781f;
  float c = x < -lim ? -lim : x > lim ? lim : x; /* NaN stays NaN */
  float z = c * c;
  float p = -2.76076847742355e-16f;
  p = VM_FMAF(p, z, 2.00018790482477e-13f);
  p = VM_FMAF(p, z, -8.60467152213735e-11f);
  p = VM_FMAF(p, z, 5.12229709037114e-08f);
  p = VM_FMAF(p, z, 1.48572235717979e-05f);
  p = VM_FMAF(p, z, 6.37261928875436e-04f);
  p = VM_FMAF(p, z, 4.89352455891786e-03f);
  p = p * c;
  float q = 1.19825839466702e-06f;
  q = VM_FMAF(q, z, 1.18534705686654e-04f);
  q = VM_FMAF(q, z, 2.26843463243900e-03f);
  q = VM_FMAF(q, z, 4.89352518554385e-03f);
  float r = p / q;
  return vmf_abs(x) < 0.0004f ? x : r;
}

/* erf: XLA:CPU's own approximation (the rational interpolant it emits for f32 erf, Eigen's),
 * operation for operation, so cjrt's f32 erf gives XLA's bits: x^2, an odd degree-9 numerator
 * and an even degree-12 denominator in Horner form with fused multiply-adds, one division;
 * |x| >= 3.8325069 (erf rounds to +-1 there) gives +-1, NaN stays NaN. Max error 3 ulp against
 * the exact erf, as XLA's; no table, no branch, so it vectorizes (the double kernel it replaces
 * took 11 ns an element, 30x XLA's). */
VM_INLINE float kf32_erf(float x) {
  float z = x * x;
  float p = VM_FMAF(z, 0.00022905065861350646f, 0.0034082910107109506f);
  p = VM_FMAF(z, p, 0.050955695062380861f);
  p = VM_FMAF(z, p, 0.18520832239976145f);
  p = VM_FMAF(z, p, 1.128379143519084f);
  p = x * p;
  float q = VM_FMAF(z, -1.1791602954361697e-7f, 0.000023547966471313185f);
  q = VM_FMAF(z, q, 0.0010179625278914885f);
  q = VM_FMAF(z, q, 0.014070470171167667f);
  q = VM_FMAF(z, q, 0.11098505178285362f);
  q = VM_FMAF(z, q, 0.49746925110067538f);
  q = VM_FMAF(z, q, 1.0f);
  float r = p / q;
  return vmf_abs(x) >= 3.832506856900711f ? vmf_copysign(1.0f, x) : r;
}

VM_INLINE float kf32_logistic(float x) {
  /* 1 / (1 + e^-x), as jax expands it; below -80 that is e^x to the last bit, and e^-x may
   * overflow: one exp of the selected argument serves both */
  int tiny = x < -80.0f;
  float e = kf32_exp(tiny ? x : -x);
  float d = 1.0f + e;
  float r = 1.0f / d;
  /* x < 0: e = e^-x > 1; 1 / (1 + e) with the roundings of the sum and the quotient corrected
   * (1 + e = d + dl exactly; r (d + dl) = 1 - res): error ~ that of e alone */
  float dl = (1.0f - (d - e));
  float res = VM_FMAF(-r, d, 1.0f) - r * dl;
  float rn = VM_FMAF(r, res, r);
  r = x < 0.0f ? rn : r;
  r = tiny ? e : r;
  return x != x ? x + x : r;
}

/* ---------------- sin, cos (double inside) ---------------- */

/* x = k pi/2 + r, |r| <= pi/4 (+ a hair), x a float below SINCOS_LIMIT in magnitude; relative
 * error of r ~2^-52 */
VM_INLINE int64_t vmd_rem_pio2_f(double x, double *r) {
  double xc = vm_abs(x) < SINCOS_LIMIT ? x : 0.0;
  double kd = VM_FMA(xc, TWO_OVER_PI, VM_SHIFT);
  int64_t k = (int64_t)(vm_bits(kd) - vm_bits(VM_SHIFT));
  kd -= VM_SHIFT;
#if VM_HAVE_FMA
  double rr = VM_FMA(-kd, PIO2_HI, xc);
  *r = VM_FMA(-kd, PIO2_LO, rr);
#else
  /* k < 2^20 and the parts have 33 bits: both products exact */
  *r = ((xc - kd * PIO2_1) - kd * PIO2_2) - kd * PIO2_3;
#endif
  return k;
}

/* sin and cos of |r| <= pi/4 + a hair to ~2^-46 relative (fit.py sinf/cosf 4) */
VM_INLINE double vmd_sin_short(double r) {
  double z = r * r;
  double p = -2.4805275454569255e-08;
  p = VM_FMA(p, z, 2.7555986474143734e-06);
  p = VM_FMA(p, z, -0.00019841266899785204);
  p = VM_FMA(p, z, 0.008333333331057959);
  p = VM_FMA(p, z, -0.16666666666663846);
  return VM_FMA(r * z, p, r);
}
VM_INLINE double vmd_cos_short(double r) {
  double z = r * r;
  double p = 2.0700431440412876e-09;
  p = VM_FMA(p, z, -2.755636760861653e-07);
  p = VM_FMA(p, z, 2.4801585202936692e-05);
  p = VM_FMA(p, z, -0.0013888888887267391);
  p = VM_FMA(p, z, 0.04166666666666466);
  return VM_FMA(z * z, p, VM_FMA(-0.5, z, 1.0));
}

VM_INLINE float kf32_sin(float xf) {
  double x = xf, r;
  int64_t k = vmd_rem_pio2_f(x, &r);
  double s = vmd_sin_short(r), c = vmd_cos_short(r);
  double v = (k & 1) ? c : s;
  v = (k & 2) ? -v : v;
  float res = (float)v;
  res = xf == 0.0f ? xf : res; /* sin(-0) = -0 */
  return vmf_abs(xf) == INFINITY ? xf - xf : (xf != xf ? xf + xf : res);
}

VM_INLINE float kf32_cos(float xf) {
  double x = xf, r;
  int64_t k = vmd_rem_pio2_f(x, &r);
  double s = vmd_sin_short(r), c = vmd_cos_short(r);
  double v = (k & 1) ? s : c;
  v = ((k + 1) & 2) ? -v : v;
  float res = (float)v;
  return vmf_abs(xf) == INFINITY ? xf - xf : (xf != xf ? xf + xf : res);
}

/* ---------------- atan2 as glibc's atan2f computes it ----------------
 * XLA:CPU calls the C library's atan2f for f32 atan2 (inside its complex power, for one);
 * glibc's is the classic single-precision fdlibm algorithm (up to ~1.5 ulp): |y/x| reduced
 * around 0, 1/2, 1, 3/2 or inf, an 11-term odd polynomial in two strands, evaluated in float
 * without fused multiply-adds. This is that arithmetic, branch-free, for the XLA-compatible
 * complex power below; cj_vm_atan2_f32 itself stays correctly rounded. */
#define XF_PI 0x1.921fb6p+1f
#define XF_PI_LO -0x1.777a5cp-24f
#define XF_PIO2 0x1.921fb6p+0f
#define XF_PIO4 0x1.921fb6p-1f

/* atan(t) for t >= 0 (finite or inf) */
VM_INLINE float vmf_atan_fd(float t) {
  int i0 = t >= 0.4375f, i1 = t >= 0.6875f, i2 = t >= 1.1875f, i3 = t >= 2.4375f;
  float num = t, den = 1.0f, hi = 0.0f, lo = 0.0f;
  num = i0 ? 2.0f * t - 1.0f : num;
  den = i0 ? 2.0f + t : den;
  hi = i0 ? 4.6364760399e-01f : hi;
  lo = i0 ? 5.0121582440e-09f : lo;
  num = i1 ? t - 1.0f : num;
  den = i1 ? t + 1.0f : den;
  hi = i1 ? 7.8539812565e-01f : hi;
  lo = i1 ? 3.7748947079e-08f : lo;
  num = i2 ? t - 1.5f : num;
  den = i2 ? 1.0f + 1.5f * t : den;
  hi = i2 ? 9.8279368877e-01f : hi;
  lo = i2 ? 3.4473217170e-08f : lo;
  num = i3 ? -1.0f : num;
  den = i3 ? t : den;
  hi = i3 ? 1.5707962513e+00f : hi;
  lo = i3 ? 7.5497894159e-08f : lo;
  float u = num / den;
  float z = u * u, w = z * z;
  float s1 = 1.6285819933e-02f;
  s1 = 4.9768779427e-02f + w * s1;
  s1 = 6.6610731184e-02f + w * s1;
  s1 = 9.0908870101e-02f + w * s1;
  s1 = 1.4285714924e-01f + w * s1;
  s1 = z * (3.3333334327e-01f + w * s1);
  float s2 = -3.6531571299e-02f;
  s2 = -5.8335702866e-02f + w * s2;
  s2 = -7.6918758452e-02f + w * s2;
  s2 = -1.1111110449e-01f + w * s2;
  s2 = w * (-2.0000000298e-01f + w * s2);
  float us = u * (s1 + s2);
  float r = i0 ? hi - ((us - lo) - u) : u - us;
  return t >= 0x1p25f ? 1.5707963705e+00f : r; /* = atanhi[3] + atanlo[3] */
}

VM_INLINE float kf32_atan2_fd(float y, float x) {
  uint32_t bx = vmf_bits(x), by = vmf_bits(y);
  float ax = vmf_abs(x), ay = vmf_abs(y);
  int xneg = (int)(bx >> 31), yneg = (int)(by >> 31);
  /* |y/x| by exponent difference as fdlibm: beyond 2^60 pi/2, below 2^-60 (x < 0) 0 */
  float z = vmf_atan_fd(vmf_abs(y / x));
  int32_t k = (int32_t)((by & 0x7fffffffu) - (bx & 0x7fffffffu)) >> 23;
  z = k > 60 ? XF_PIO2 + 0.5f * XF_PI_LO : z;
  z = (k < -60) & xneg ? 0.0f : z;
  float r = xneg ? (XF_PI - (z - XF_PI_LO)) : z;
  r = yneg ? -r : r; /* (z - pi_lo) - pi = -(pi - (z - pi_lo)) */
  /* x == 1: atan(y) itself */
  float r1 = vmf_copysign(vmf_atan_fd(ay), y);
  r = x == 1.0f ? r1 : r;
  /* zeros and infinities */
  float r0 = xneg ? vmf_copysign(XF_PI, y) : y; /* y = +-0 */
  float rxinf = ay == INFINITY ? (xneg ? 3.0f * XF_PIO4 : XF_PIO4)
                               : (xneg ? XF_PI : 0.0f);
  rxinf = vmf_copysign(rxinf, y);
  float ryinf = vmf_copysign(XF_PIO2, y);
  r = ay == INFINITY ? ryinf : r;
  r = ax == INFINITY ? rxinf : r;
  r = ax == 0.0f ? ryinf : r;
  r = ay == 0.0f ? r0 : r;
  return (x != x) | (y != y) ? x + y : r;
}

/* ---------------- the others: the double kernel, rounded once ---------------- */
#define VM_F32_VIA_DOUBLE(fn)                                                                     \
  VM_INLINE float kf32_##fn(float x) { return (float)k_##fn((double)x); }
#define VM_F32_VIA_DOUBLE_LIST(X)                                                                 \
  X(exp2) X(log2) X(log10) X(tan) X(sinh) X(cosh) X(asin) X(acos) X(atan) X(asinh) X(acosh)     \
  X(atanh) X(sqrt) X(rsqrt) X(cbrt) X(erfc) X(erf_inv) X(lgamma) X(digamma) X(bessel_i1e)
VM_F32_VIA_DOUBLE_LIST(VM_F32_VIA_DOUBLE)

#endif /* CJ_VM_BODY */
