/* cjrt vmath: complex functions, complex<f64> kernels (complex<f32> runs them in double and rounds
 * once). A body, see vmath_real.c.
 *
 * Algorithms: the formulas StableHLO's complex-math expansions document (stablehlo/transforms/
 * ChloDecompositionPatternsMath.td, after Hull, Fairgrieve and Tang for asin/acos and Kahan for
 * sqrt/tanh), written here as branch-free selects; |z| and 1 - |z|^2 are computed with
 * double-double products so that results stay accurate near |z| = 1. Special values follow
 * C99 Annex G. Functions that take sin/cos of a part use the vectorized reduction in the main
 * pass; lanes whose argument is beyond SINCOS_LIMIT are recomputed by the loop's fix-up pass
 * with libm's sin/cos (the `sc` argument of the kernels). */
#ifdef CJ_VM_BODY

/* ---------------- helpers ---------------- */

/* which sin/cos a kernel uses: 0 the vectorized one, 1 libm's (fix-up pass) */
typedef int vm_sincos_fn;

/* sin and cos in the vector pass (valid below SINCOS_LIMIT; the fix-up pass covers the rest;
 * inf and nan give nan). Callers pass the argument itself: GCC 12 does not vectorize a loop in
 * which the result of a select reaches the bit operations of the reduction. */
VM_INLINE void vm_sincos_fast_impl(double x, double *s, double *c) {
  double r, rl;
  int64_t k = vm_rem_pio2(x, &r, &rl);
  double sv = vm_sin_kern(r, rl), cv = vm_cos_kern(r, rl);
  double ss = (k & 1) ? cv : sv, cc = (k & 1) ? sv : cv;
  ss = (k & 2) ? -ss : ss;
  cc = ((k + 1) & 2) ? -cc : cc;
  ss = x == 0.0 ? x : ss;
  int bad = vm_isnan(x) | (vm_abs(x) == INFINITY);
  *s = bad ? x - x : ss;
  *c = bad ? x - x : cc;
}
static void vm_sincos_libm_call(double x, double *s, double *c) {
  int fin = vm_abs(x) < INFINITY;
  *s = fin ? sin(x) : x - x;
  *c = fin ? cos(x) : x - x;
}
#define vm_sincos_fast 0
#define vm_sincos_libm 1
VM_INLINE void vm_sincos_sel(vm_sincos_fn which, double x, double *s, double *c) {
  if (which) vm_sincos_libm_call(x, s, c);
  else vm_sincos_fast_impl(x, s, c);
}

/* |(a, b)| to about 0.5 ulp, no spurious overflow or underflow */
VM_INLINE double vm_hypot(double a, double b) {
  double x = vm_abs(a), y = vm_abs(b);
  double m = x > y ? x : y;
  double sc = m > 0x1p500 ? 0x1p-600 : (m < 0x1p-500 ? 0x1p600 : 1.0);
  double inv = m > 0x1p500 ? 0x1p600 : (m < 0x1p-500 ? 0x1p-600 : 1.0);
  double xs = x * sc, ys = y * sc;
  double xh, xl, yh, yl, sh, sl;
  vm_two_prod(xs, xs, &xh, &xl);
  vm_two_prod(ys, ys, &yh, &yl);
  vm_two_sum(xh, yh, &sh, &sl);
  sl += xl + yl;
  double s = vm_sqrt(sh);
  double ph, pl;
  vm_two_prod(s, s, &ph, &pl);
  double res = ((sh - ph) - pl) + sl;
  s = s + res / (2.0 * s + 0x1p-1000);
  double h = s * inv;
  h = m == 0.0 ? 0.0 : h;
  h = (vm_isnan(a) | vm_isnan(b)) ? a + b : h;
  h = (x == INFINITY) | (y == INFINITY) ? INFINITY : h;
  return h;
}

/* x^2 + y^2 - 1 as hi + lo (accurate for any |z| up to 2^500) */
VM_INLINE void vm_sqm1(double x, double y, double *hi, double *lo) {
  double xh, xl, yh, yl;
  vm_two_prod(x, x, &xh, &xl);
  vm_two_prod(y, y, &yh, &yl);
  double big = xh > yh ? xh : yh, small = xh > yh ? yh : xh;
  double s1, e1, s2, e2;
  vm_two_sum(big, -1.0, &s1, &e1);
  vm_two_sum(s1, small, &s2, &e2);
  vm_fast_two_sum(s2, (e1 + e2) + (xl + yl), hi, lo);
}

VM_INLINE int vm_isinf(double x) { return vm_abs(x) == INFINITY; }
VM_INLINE int vm_isfinite(double x) { return vm_abs(x) < INFINITY; }

/* cosh(x) * c and sinh(x) * c without overflow before the product (|x| large) */
VM_INLINE void vm_coshsinh_mul(double x, double c, double s, double *ch_c, double *sh_s) {
  double a = vm_clamp(vm_abs(x), 0.0, 1100.0);
  double chs = k_cosh(a), shs = k_sinh(a);
  int64_t k;
  double q;
  vm_exp_parts(a, 0.0, &k, &q);
  double big_c = vm_scale((1.0 + q) * c, k - 1);
  double big_s = vm_scale((1.0 + q) * s, k - 1);
  int big = a > 22.0;
  *ch_c = big ? big_c : chs * c;
  double shv = big ? big_s : shs * s;
  *sh_s = vm_signbit(x) ? -shv : shv;
}

/* ---------------- exp, expm1, logistic ---------------- */

VM_INLINE void kc_exp_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  double s, c;
  vm_sincos_sel(sc, y, &s, &c);
  double xc = vm_clamp(x, -1100.0, 1100.0); /* keeps 2^k within vm_scale's range */
  int64_t k;
  double q;
  vm_exp_parts(xc, 0.0, &k, &q);
  double r = vm_scale((1.0 + q) * c, k);
  double i = vm_scale((1.0 + q) * s, k);
  /* beyond x = 1455 even e^x times the smallest subnormal overflows: inf times the part */
  r = x > 1455.0 ? c * INFINITY : r;
  i = x > 1455.0 ? s * INFINITY : i;
  i = y == 0.0 ? y : i; /* exp(x + i0) = e^x + i0 */
  /* a non-finite imaginary part gives nan + i nan (as the mpmath references of
   * stablehlo/tests/math expect, also for x = -inf where Annex G allows +-0) */
  int yfin = vm_isfinite(y);
  r = yfin ? r : NAN;
  i = yfin ? i : NAN;
  r = vm_isnan(x) ? x : r;
  i = vm_isnan(x) ? (y == 0.0 ? y : x) : i;
  *re = r;
  *im = i;
}
VM_INLINE void kc_exp(double x, double y, double *re, double *im) {
  kc_exp_sc(x, y, re, im, vm_sincos_fast);
}

/* expm1(z) = (e^x cos y - 1) + i e^x sin y; the real part as expm1(x) cos y - 2 sin^2(y/2) */
VM_INLINE void kc_expm1_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  double s, c, s2, c2;
  vm_sincos_sel(sc, y, &s, &c);
  vm_sincos_sel(sc, 0.5 * y, &s2, &c2);
  double em = k_expm1(vm_clamp(x, -1100.0, 1100.0));
  double r = VM_FMA(em, c, -2.0 * s2 * s2);
  double er, ei;
  kc_exp_sc(x, y, &er, &ei, sc);
  /* large x: the exp itself */
  r = x > 40.0 ? er : r;
  double i = x > 40.0 ? ei : (em + 1.0) * s;
  i = y == 0.0 ? y : i;
  int special = !(vm_isfinite(x) & vm_isfinite(y));
  *re = special ? er - 1.0 : r;
  *im = special ? ei : i;
}
VM_INLINE void kc_expm1(double x, double y, double *re, double *im) {
  kc_expm1_sc(x, y, re, im, vm_sincos_fast);
}

/* complex division (a + ib) / (c + id), Smith's method with scaling */
VM_INLINE void vm_cdiv(double a, double b, double c, double d, double *re, double *im) {
  int cbig = vm_abs(c) >= vm_abs(d);
  double r = cbig ? d / c : c / d;
  double den = cbig ? c + d * r : c * r + d;
  double e = cbig ? (a + b * r) / den : (a * r + b) / den;
  double f = cbig ? (b - a * r) / den : (b * r - a) / den;
  *re = e;
  *im = f;
}

/* logistic(z) = 1 / (1 + e^-z) */
VM_INLINE void kc_logistic_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  double er, ei;
  kc_exp_sc(-x, -y, &er, &ei, sc);
  double r, i;
  vm_cdiv(1.0, 0.0, 1.0 + er, ei, &r, &i);
  *re = r;
  *im = i;
}
VM_INLINE void kc_logistic(double x, double y, double *re, double *im) {
  kc_logistic_sc(x, y, re, im, vm_sincos_fast);
}

/* ---------------- log, log1p ---------------- */

/* log|z| for z = (x, y), accurate near |z| = 1 */
VM_INLINE double vm_log_abs(double x, double y) {
  double ax = vm_abs(x), ay = vm_abs(y);
  double M = ax > ay ? ax : ay, m = ax > ay ? ay : ax;
  /* near 1: log1p(|z|^2 - 1) / 2 */
  double h, l;
  vm_sqm1(ax < 0x1p500 ? ax : 1.0, ay < 0x1p500 ? ay : 1.0, &h, &l);
  double near = 0.5 * vm_log1p_e(h, l, 0.0);
  /* elsewhere: log(M) + log1p((m/M)^2) / 2 */
  double t = m / M;
  double far = k_log(M) + 0.5 * k_log1p(t * t);
  double r = (M > 0.5) & (M < 2.0) ? near : far;
  r = M == 0.0 ? -INFINITY : r;
  r = M == INFINITY ? INFINITY : r;
  return r;
}

VM_INLINE void kc_log(double x, double y, double *re, double *im) {
  double r = vm_log_abs(x, y);
  double i = k_atan2(y, x);
  int anynan = vm_isnan(x) | vm_isnan(y);
  int anyinf = vm_isinf(x) | vm_isinf(y);
  r = anynan ? (anyinf ? INFINITY : NAN) : r;
  i = anynan ? NAN : i;
  *re = r;
  *im = i;
}

VM_INLINE void kc_log1p(double x, double y, double *re, double *im) {
  double ax = vm_abs(x), ay = vm_abs(y);
  double M = ax > ay ? ax : ay;
  /* |1 + z|^2 - 1 = 2x + x^2 + y^2 exactly as a double-double */
  double xh, xl, yh, yl;
  vm_two_prod(x, x, &xh, &xl);
  vm_two_prod(y, y, &yh, &yl);
  double s1, e1, s2, e2;
  vm_two_sum(2.0 * x, xh, &s1, &e1);
  vm_two_sum(s1, yh, &s2, &e2);
  double sh, sl;
  vm_fast_two_sum(s2, (e1 + e2) + (xl + yl), &sh, &sl);
  double small = 0.5 * vm_log1p_e(sh, sl, 0.0);
  double xp1 = 1.0 + x;
  double big = vm_log_abs(xp1, y);
  double r = M < 0x1p400 ? small : big;
  r = (sh < -0.5) | (M > 0x1p400) ? big : r; /* far from the origin of log1p: plain form */
  double i = k_atan2(y, xp1);
  int anynan = vm_isnan(x) | vm_isnan(y);
  int anyinf = vm_isinf(x) | vm_isinf(y);
  r = anyinf ? INFINITY : r;
  r = anynan ? (anyinf ? INFINITY : NAN) : r;
  i = anynan ? NAN : i;
  *re = r;
  *im = i;
}

/* ---------------- sqrt, rsqrt ---------------- */

VM_INLINE void kc_sqrt(double x, double y, double *re, double *im) {
  double ax = vm_abs(x), ay = vm_abs(y);
  double M = ax > ay ? ax : ay;
  /* scale into a safe range by an even power of two */
  double sc = M > 0x1p1000 ? 0x1p-200 : (M < 0x1p-1000 ? 0x1p200 : 1.0);
  double un = M > 0x1p1000 ? 0x1p100 : (M < 0x1p-1000 ? 0x1p-100 : 1.0);
  double xs = ax * sc, ys = ay * sc;
  double h = vm_hypot(xs, ys);
  double t = vm_sqrt(0.5 * (xs + h)) * un; /* sqrt((|x| + |z|)/2), exact unscaling */
  /* the other part from the unscaled |y|: t >= sqrt(max(|x|, |y|) / 2) is normal (>= 2^-538)
   * and below 2^512, so nothing overflows, and a |y| far below |x| (at 2^1000, where the
   * scaled |y| would be subnormal or zero) keeps its precision */
  double u = ay / (2.0 * t);
  u = t == 0.0 ? 0.0 : u;
  double r = x >= 0.0 ? t : u;
  double i = x >= 0.0 ? u : t;
  /* special values */
  r = vm_isnan(x) ? x : r;
  i = vm_isnan(x) ? x : i;
  r = (x == INFINITY) ? INFINITY : r;
  i = (x == INFINITY) ? (vm_isnan(y) ? y : 0.0) : i;
  r = (x == -INFINITY) ? (vm_isnan(y) ? y : 0.0) : r;
  i = (x == -INFINITY) ? INFINITY : i;
  r = vm_isnan(y) & vm_isfinite(x) ? y : r;
  i = vm_isnan(y) & vm_isfinite(x) ? y : i;
  r = ay == INFINITY ? INFINITY : r;
  i = ay == INFINITY ? INFINITY : i;
  *re = r;
  *im = vm_copysign(i, y);
}

VM_INLINE void kc_rsqrt(double x, double y, double *re, double *im) {
  double sr, si;
  kc_sqrt(x, y, &sr, &si);
  double r, i;
  vm_cdiv(1.0, 0.0, sr, si, &r, &i);
  /* 1/0 and 1/inf */
  int zero = (sr == 0.0) & (si == 0.0);
  r = zero ? INFINITY : r;
  i = zero ? NAN : i;
  int inf = vm_isinf(sr) | vm_isinf(si);
  r = inf ? 0.0 : r;
  i = inf ? vm_copysign(0.0, -si) : i;
  *re = r;
  *im = i;
}

/* ---------------- hyperbolic and trigonometric ---------------- */

VM_INLINE void kc_sinh_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  double s, c;
  vm_sincos_sel(sc, y, &s, &c);
  double chc, shc, chs, shs;
  vm_coshsinh_mul(x, c, s, &chc, &shs); /* cosh x cos y (unused), sinh x sin y (unused) */
  vm_coshsinh_mul(x, s, c, &chs, &shc); /* cosh x sin y, sinh x cos y */
  (void)chc;
  (void)shs;
  double r = shc, i = chs;
  r = x == 0.0 ? x : r;   /* sinh(+-0 + iy) real part is +-0 */
  i = y == 0.0 ? y : i;
  /* non-finite: Annex G csinh */
  int yfin = vm_isfinite(y);
  r = (!yfin) & vm_isfinite(x) & (x != 0.0) ? NAN : r;
  r = (!yfin) & (x == 0.0) ? x : r;
  i = (!yfin) ? y - y : i;
  r = (!yfin) & vm_isinf(x) ? x : r;
  r = vm_isnan(x) ? x : r;
  i = vm_isnan(x) & (y != 0.0) ? x : i;
  *re = r;
  *im = i;
}
VM_INLINE void kc_cosh_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  double s, c;
  vm_sincos_sel(sc, y, &s, &c);
  double chc, shs, d1, d2;
  vm_coshsinh_mul(x, c, s, &chc, &shs);
  (void)d1;
  (void)d2;
  double r = chc, i = shs;
  i = (x == 0.0) | (y == 0.0) ? (vm_signbit(x) ^ vm_signbit(y) ? -0.0 : 0.0) : i;
  int yfin = vm_isfinite(y);
  r = (!yfin) ? (vm_isinf(x) ? INFINITY : NAN) : r;
  i = (!yfin) ? ((x == 0.0) ? 0.0 : NAN) : i;
  r = vm_isnan(x) ? x : r;
  i = vm_isnan(x) ? ((y == 0.0) ? y : x) : i;
  *re = r;
  *im = i;
}
VM_INLINE void kc_sinh(double x, double y, double *re, double *im) {
  kc_sinh_sc(x, y, re, im, vm_sincos_fast);
}
VM_INLINE void kc_cosh(double x, double y, double *re, double *im) {
  kc_cosh_sc(x, y, re, im, vm_sincos_fast);
}

/* tanh(x + iy) (Kahan): t = tan y, b = 1 + t^2, s = sinh x, r = sqrt(1 + s^2):
 * (b r s + i t) / (1 + b s^2); |x| > 22: sign(x) + i 4 sin y cos y e^-2|x| */
VM_INLINE void kc_tanh_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  double sn, cs;
  vm_sincos_sel(sc, y, &sn, &cs);
  double t = sn / cs;
  double b = VM_FMA(t, t, 1.0);
  double ax = vm_abs(x);
  double s = k_sinh(x < 40.0 ? (x > -40.0 ? x : -40.0) : 40.0);
  double rho = vm_sqrt(VM_FMA(s, s, 1.0));
  double den = VM_FMA(b * s, s, 1.0);
  double r = (b * rho * s) / den;
  double i = t / den;
  /* cos y = 0: tanh = 1/tanh(x) + ... : use the form with t infinite */
  int cz = cs == 0.0;
  r = cz ? rho / s : r;
  i = cz ? 1.0 / t : i;
  double e = k_exp(-2.0 * vm_clamp(ax, 0.0, 400.0));
  double rb = vm_copysign(1.0, x);
  double ib = 4.0 * sn * cs * e;
  int big = ax > 22.0;
  r = big ? rb : r;
  i = big ? ib : i;
  i = y == 0.0 ? y : i;
  /* non-finite */
  int yfin = vm_isfinite(y);
  r = vm_isinf(x) ? rb : r;
  i = vm_isinf(x) ? vm_copysign(0.0, yfin ? sn * cs : y) : i;
  r = (!yfin) & (!vm_isinf(x)) ? NAN : r;
  i = (!yfin) & (!vm_isinf(x)) ? NAN : i;
  r = vm_isnan(x) ? x : r;
  i = vm_isnan(x) & (y != 0.0) ? x : i;
  *re = r;
  *im = i;
}
VM_INLINE void kc_tanh(double x, double y, double *re, double *im) {
  kc_tanh_sc(x, y, re, im, vm_sincos_fast);
}

/* sin z = -i sinh(iz), cos z = cosh(iz), tan z = -i tanh(iz), iz = (-y, x) */
VM_INLINE void kc_sin_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  double a, b;
  kc_sinh_sc(-y, x, &a, &b, sc);
  *re = b;
  *im = -a;
}
VM_INLINE void kc_cos_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  kc_cosh_sc(-y, x, re, im, sc);
}
VM_INLINE void kc_tan_sc(double x, double y, double *re, double *im, vm_sincos_fn sc) {
  double a, b;
  kc_tanh_sc(-y, x, &a, &b, sc);
  *re = b;
  *im = -a;
}
VM_INLINE void kc_sin(double x, double y, double *re, double *im) {
  kc_sin_sc(x, y, re, im, vm_sincos_fast);
}
VM_INLINE void kc_cos(double x, double y, double *re, double *im) {
  kc_cos_sc(x, y, re, im, vm_sincos_fast);
}
VM_INLINE void kc_tan(double x, double y, double *re, double *im) {
  kc_tan_sc(x, y, re, im, vm_sincos_fast);
}

/* ---------------- inverse functions ---------------- */

#define VM_SAFE_MIN 0x1p-509  /* ~ sqrt(smallest normal) * 4 */
#define VM_SAFE_MAX 0x1p508   /* ~ sqrt(largest finite) / 8 */

/* the asin/acos kernel for x, y >= 0: returns (sqrt((a + x)(a - x)), log(a + sqrt(a^2 - 1)))
 * with a = (|z + 1| + |z - 1|) / 2 */
VM_INLINE void vm_asin_acos_kernel(double x, double y, double *wr, double *wi) {
  double xp1 = x + 1.0, xm1 = x - 1.0;
  double r = vm_hypot(xp1, y), s = vm_hypot(xm1, y);
  double a = 0.5 * (r + s);
  double apx = a + x;
  double yy = y * y;
  double rpxp1 = r + xp1, smxm1 = s - xm1, spxm1 = s + xm1;
  /* real: sqrt((a + x)(a - x)) */
  double half_apx = 0.5 * apx;
  double re_le1 = vm_sqrt(half_apx * (yy / rpxp1 + smxm1));
  double re_gt1 = y * vm_sqrt(half_apx / rpxp1 + half_apx / spxm1);
  double wre = x <= 1.0 ? re_le1 : re_gt1;
  double mx = x > y ? x : y;
  int huge = mx >= VM_SAFE_MAX;
  wre = huge ? y : wre;
  /* imaginary: log(a + sqrt(a^2 - 1)) */
  double safe_max_opt = x < VM_SAFE_MAX * 1e12 ? VM_SAFE_MAX * 1e-6 : VM_SAFE_MAX * 1e2;
  double yb = y > 0.0 ? y : 1.0;
  double xy = x / yb;
  double im_big = LN2 + k_log(yb) + 0.5 * k_log1p(xy * xy);
  double am1_ge1 = 0.5 * (yy / rpxp1) + 0.5 * spxm1;
  double am1_lt1 = 0.5 * yy * (1.0 / rpxp1 + 1.0 / smxm1);
  double am1 = x >= 1.0 ? am1_ge1 : (a < 1.5 ? am1_lt1 : a - 1.0);
  am1 = (x < 1.0) & (smxm1 == 0.0) ? 0.0 : am1;
  double sq = vm_sqrt(am1 * (a + 1.0));
  double im_mid = k_log1p(am1 + sq);
  /* y tiny, x < 1: y / sqrt((a - 1)(a + 1)) with a - 1 = -(x + 1)(x - 1)/(a + 1) */
  double am1_tiny = -(xp1 * xm1) / (a + 1.0);
  double im_tiny = y / vm_sqrt(am1_tiny * (a + 1.0));
  double wim = y >= safe_max_opt ? im_big : im_mid;
  wim = (y < VM_SAFE_MIN) & (x < 1.0) ? im_tiny : wim;
  wim = (x >= VM_SAFE_MAX) & (y < safe_max_opt) ? LN2 + k_log(x) + 0.5 * k_log1p((y / x) * (y / x)) : wim;
  *wr = wre;
  *wi = wim;
}

/* the kernel on |x|, |y| with infinities taken as 1 (their special values are set after it) */
VM_INLINE void vm_asin_acos_finite(double x, double y, double *wr, double *wi) {
  double ax = vm_abs(x), ay = vm_abs(y);
  double axc = vm_isfinite(ax) ? ax : 1.0, ayc = vm_isfinite(ay) ? ay : 1.0;
  vm_asin_acos_kernel(axc, ayc, wr, wi);
}

VM_INLINE void kc_asin(double x, double y, double *re, double *im) {
  double wr, wi;
  vm_asin_acos_finite(x, y, &wr, &wi);
  double r = k_atan2(x, wr);
  double i = vm_signbit(y) ? -wi : wi;
  /* special values (Annex G casinh applied to iz) */
  int xinf = vm_isinf(x), yinf = vm_isinf(y), xnan = vm_isnan(x), ynan = vm_isnan(y);
  r = yinf ? vm_copysign(xinf ? PIO4_HI : 0.0, x) : r;
  r = yinf & xnan ? x : r;
  i = yinf ? y : i;
  r = xinf & (!yinf) ? vm_copysign(PIO2_HI, x) : r;
  i = xinf & (!yinf) ? vm_copysign(INFINITY, y) : i;
  r = xinf & ynan ? y : r;
  r = xnan & (!yinf) ? x : r;
  i = xnan & (!yinf) ? x : i;
  r = ynan & (!xinf) ? ((x == 0.0) ? x : y) : r;
  i = ynan ? (xinf ? vm_copysign(INFINITY, y) : y) : i;
  *re = r;
  *im = i;
}

VM_INLINE void kc_acos(double x, double y, double *re, double *im) {
  double wr, wi;
  vm_asin_acos_finite(x, y, &wr, &wi);
  double r = k_atan2(wr, x);
  double i = vm_signbit(y) ? wi : -wi;
  int xinf = vm_isinf(x), yinf = vm_isinf(y), xnan = vm_isnan(x), ynan = vm_isnan(y);
  /* Annex G cacos */
  r = yinf ? (xinf ? (x > 0.0 ? PIO4_HI : 3.0 * PIO4_HI) : PIO2_HI) : r;
  r = yinf & xnan ? x : r;
  i = yinf ? -y : i;
  r = xinf & (!yinf) ? (x > 0.0 ? 0.0 : PI_HI) : r;
  i = xinf & (!yinf) ? (vm_signbit(y) ? INFINITY : -INFINITY) : i;
  r = xinf & ynan ? y : r;
  i = xinf & ynan ? INFINITY : i;
  r = xnan & (!yinf) ? x : r;
  i = xnan & (!yinf) ? x : i;
  r = ynan & (!xinf) ? ((x == 0.0) ? PIO2_HI : y) : r;
  i = ynan & (!xinf) ? y : i;
  *re = r;
  *im = i;
}

/* asinh(z) = -i asin(iz), iz = (-y, x) */
VM_INLINE void kc_asinh(double x, double y, double *re, double *im) {
  double a, b;
  kc_asin(-y, x, &a, &b);
  *re = b;
  *im = -a;
}

/* acosh(z) = (Im acos-kernel, sign(y) * Re acos) */
VM_INLINE void kc_acosh(double x, double y, double *re, double *im) {
  double a, b;
  kc_acos(x, y, &a, &b);
  /* acosh = i acos for y >= 0 (sign bit clear), -i acos otherwise */
  int neg = vm_signbit(y);
  double r = neg ? b : -b;
  double i = neg ? -a : a;
  r = vm_isnan(b) ? vm_abs(b) : r;
  r = vm_isinf(b) ? INFINITY : r;
  *re = r;
  *im = i;
}

/* atanh(x + iy): real sign(x) log1p(4|x| / ((|x|-1)^2 + y^2)) / 4,
 * imag atan2(2y, (1 - x)(1 + x) - y^2) / 2 */
VM_INLINE void kc_atanh(double x, double y, double *re, double *im) {
  double ax = vm_abs(x), ay = vm_abs(y);
  double M = ax > ay ? ax : ay;
  double am1 = ax - 1.0;
  double d = VM_FMA(am1, am1, ay * ay);
  double r_mid = 0.25 * k_log1p(4.0 * ax / d);
  /* large |z|: atanh(z) ~ 1/z, real part x / |z|^2 */
  double xs = ax / M, ys = ay / M;
  double r_big = (xs / VM_FMA(xs, xs, ys * ys)) / M;
  double r = M > 0x1p500 ? r_big : r_mid;
  r = (ax == 1.0) & (ay == 0.0) ? INFINITY : r;
  double h, l;
  vm_sqm1(M > 0x1p500 ? 1.0 : ax, M > 0x1p500 ? 0.0 : ay, &h, &l);
  double i = 0.5 * k_atan2(2.0 * ay, -(h + l));
  i = M > 0x1p500 ? PIO2_HI : i;
  /* non-finite */
  int xinf = vm_isinf(x), yinf = vm_isinf(y), xnan = vm_isnan(x), ynan = vm_isnan(y);
  r = xinf | yinf ? 0.0 : r;
  i = xinf | yinf ? PIO2_HI : i;
  r = xnan ? (yinf ? 0.0 : x) : r;
  i = xnan ? (yinf ? PIO2_HI : x) : i;
  r = ynan ? (xinf ? 0.0 : (x == 0.0 ? x : y)) : r;
  i = ynan ? y : i;
  *re = vm_copysign(r, x);
  *im = vm_copysign(i, y);
}

/* atan(z) = -i atanh(iz) */
VM_INLINE void kc_atan(double x, double y, double *re, double *im) {
  double a, b;
  kc_atanh(-y, x, &a, &b);
  *re = b;
  *im = -a;
}

/* ---------------- square, sign, pow ---------------- */

VM_INLINE void kc_square(double x, double y, double *re, double *im) {
  double r = (x - y) * (x + y);
  double i = (x * y) * 2.0;
  /* keep the exact real part where x^2 - y^2 would cancel: x == y gives 0 */
  r = (vm_abs(x) == vm_abs(y)) & vm_isfinite(x) ? 0.0 : r;
  /* (x - y)(x + y) as upstream: also for infinities */
  *re = r;
  *im = i;
}

VM_INLINE void kc_sign(double x, double y, double *re, double *im) {
  double h = vm_hypot(x, y);
  /* x / abs(x) part by part, as the spec and XLA compute it: an infinite part gives NaN
   * (sign(-inf + 2i) = NaN + 0i), not the direction of the infinity */
  double r = x / h, i = y / h;
  r = h == 0.0 ? x : r;
  i = h == 0.0 ? y : i;
  int nan = vm_isnan(x) | vm_isnan(y);
  *re = nan ? NAN : r;
  *im = nan ? NAN : i;
}

/* pow(x, y) = exp(y log x); pow(x, 0) = 1 */
VM_INLINE void kc_pow_sc(double a, double b, double c, double d, double *re, double *im,
                         vm_sincos_fn sc) {
  double lr, li;
  kc_log(a, b, &lr, &li);
  /* (c + id)(lr + i li) */
  double pr = VM_FMA(c, lr, -d * li);
  double pi = VM_FMA(c, li, d * lr);
  pr = (lr == -INFINITY) & (c > 0.0) & (d == 0.0) ? -INFINITY : pr; /* 0^positive = 0 */
  pi = (lr == -INFINITY) & (c > 0.0) & (d == 0.0) ? 0.0 : pi;
  double r, i;
  kc_exp_sc(pr, pi, &r, &i, sc);
  int one = (c == 0.0) & (d == 0.0);
  *re = one ? 1.0 : r;
  *im = one ? 0.0 : i;
}
VM_INLINE void kc_pow(double a, double b, double c, double d, double *re, double *im) {
  kc_pow_sc(a, b, c, d, re, im, vm_sincos_fast);
}

/* ---------------- complex<f32> pow, as XLA:CPU computes it ----------------
 * XLA's elemental emitter computes complex power in the element type's own precision as
 *   h = |x| = max * sqrt(1 + (min/max)^2),  theta = atan2(Im x, Re x),
 *   x^y = pow(h, c) e^(-d theta) (cos q + i sin q),  q = c theta + d log h   (y = c + i d)
 * with its single-precision exp and log (vmath_f32.c), the C library's powf, atan2f and
 * sincosf, and fused multiply-adds where LLVM contracts (1 + t^2, c theta + (d log h)). For
 * |x^y| ~ 1e5 the corpus checks |a - e| <= 1e-3, i.e. the last bit of every step: so
 * complex<f32> pow is this same arithmetic (glibc's atan2f arithmetic in kf32_atan2_fd, a
 * correctly rounded pow, sin and cos in place of powf and sincosf, which are correctly rounded in
 * all but rare cases), and its accuracy is that of the formula in float (q's rounding moves the
 * result by |q| 2^-24 relative). complex<f64> pow stays exp(y log x) in double (kc_pow).
 * Stage 1 gives the modulus factor and q; the loop takes sin and cos of q and applies the
 * special cases (kcf_pow_xla_finish). */
VM_INLINE void kcf_pow_xla_stage1(float a, float b, float c, float d, float *coeff, float *q) {
  float aa = vmf_abs(a), ab = vmf_abs(b);
  int nan = (a != a) | (b != b);
  float mx = aa > ab ? aa : ab, mn = aa > ab ? ab : aa;
  mx = nan ? NAN : mx;
  mn = nan ? NAN : mn;
  float t = mn / mx;
  float h = mx * (float)vm_sqrt((double)VM_FMAF(t, t, 1.0f));
  h = h != h ? mn : h;
  float p = (float)k_pow((double)h, (double)c);
  float arg = kf32_atan2_fd(b, a);
  float e = kf32_exp(arg * -d);
  *coeff = e * p;
  *q = VM_FMAF(c, arg, d * kf32_log(h));
}

VM_INLINE void kcf_pow_xla_finish(float a, float b, float c, float d, float coeff, float cs,
                                  float sn, float *re, float *im) {
  /* h == 0 exactly when a and b are zeros */
  int h0 = (a == 0.0f) & (b == 0.0f);
  int d0 = d == 0.0f, c0 = c == 0.0f;
  float r = coeff * cs, i = coeff * sn;
  int zero_base = h0 & d0 & (c >= 0.0f); /* 0^c = 0 (c > 0), 1 (c = 0) */
  r = zero_base ? (c0 ? 1.0f : 0.0f) : r;
  int one = (c0 & d0) | ((a == 1.0f) & (b == 0.0f));
  r = one ? 1.0f : r;
  int inf_base = (a == INFINITY) & (b == 0.0f) & d0;
  int inf_pos = inf_base & (c > 0.0f), inf_neg = inf_base & (c < 0.0f);
  r = inf_pos ? INFINITY : r;
  r = inf_neg ? 0.0f : r;
  i = zero_base | one | inf_pos | inf_neg ? 0.0f : i;
  *re = r;
  *im = i;
}

#endif /* CJ_VM_BODY */
