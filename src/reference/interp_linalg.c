/* cjrt reference backend: dot_general (and the deprecated dot), convolution, fft,
 * triangular_solve, cholesky. Straight from the specification's formulas: every result element
 * is one sum computed in the result's wide domain (double, int64 wrapping to the result's width,
 * double complex) and rounded once. FFTs are direct O(n^2) DFTs in double complex, but for the
 * f32 real transforms of short odd prime lengths, which follow XLA's float arithmetic
 * (rfft_prime_f32). */
#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

static int64_t ravel(int32_t rank, const int64_t *dims, const int64_t *idx) {
  int64_t k = 0;
  for (int32_t d = 0; d < rank; d++) k = k * dims[d] + idx[d];
  return k;
}

static bool in_list(int64_t d, const int64_t *l, int64_t n) {
  for (int64_t i = 0; i < n; i++)
    if (l[i] == d) return true;
  return false;
}

/* an element of v converted to the domain of dtype `to` */
static rs elem_as(const rv *v, int64_t i, cj_dtype to) { return cj_rs_convert(v->dt, to, cj_rs_get(v->dt, v->data, i)); }

/* The type sums of products are kept in: the result's type, at least f32 (the spec sums in the
 * result type; narrower floats accumulate in f32 as XLA does). Each product and each partial sum
 * is rounded to it, so results match a float32 machine's. */
static cj_dtype acc_type(cj_dtype out) {
  if (cj_dtype_is_float(out)) return out == CJ_F64 ? CJ_F64 : CJ_F32;
  return out;
}

static double rnd(cj_dtype dt, double v) { return dt == CJ_F32 || dt == CJ_C64 ? (double)(float)v : v; }

static void acc_add(cj_dtype adt, rs *acc, rs a, rs b) {
  switch (cj_dtype_kindof(adt)) {
    case CJ_DK_FLOAT: acc->f = rnd(adt, acc->f + rnd(adt, a.f * b.f)); break;
    case CJ_DK_COMPLEX: {
      double ar = creal(a.c), ai = cimag(a.c), br = creal(b.c), bi = cimag(b.c);
      double complex p = adt == CJ_C64 ? CMPLX(fmaf((float)ar, (float)br, -(float)(ai * bi)),
                                               fmaf((float)ar, (float)bi, (float)(ai * br)))
                                       : CMPLX(ar * br - ai * bi, ar * bi + ai * br);
      acc->c = CMPLX(rnd(adt, creal(acc->c) + creal(p)), rnd(adt, cimag(acc->c) + cimag(p)));
      break;
    }
    case CJ_DK_BOOL: acc->i = acc->i || (a.i && b.i); break;
    default: acc->i = (int64_t)((uint64_t)acc->i + (uint64_t)a.i * (uint64_t)b.i); break;
  }
}

/* out[k] = dims[idx[k]] for k < n; returns their product (the number of points they span) */
static int64_t pick_dims(const int64_t *dims, const int64_t *idx, int64_t n, int64_t *out) {
  int64_t p = 1;
  for (int64_t k = 0; k < n; k++) p *= out[k] = dims[idx[k]];
  return p;
}

/* ---------------------------------------------------------------- dot_general */

typedef struct dot_dims {
  int64_t lb[RF_MAX_RANK], rb[RF_MAX_RANK], lc[RF_MAX_RANK], rc[RF_MAX_RANK];
  int64_t nb, nc;
} dot_dims;

static CJ_MUST_USE cj_status dot_run(cj_op *op, const rv *l, const rv *r, rv *out, const dot_dims *dd) {
  int64_t lf[RF_MAX_RANK], rf[RF_MAX_RANK], nlf = 0, nrf = 0;
  for (int32_t d = 0; d < l->rank; d++)
    if (!in_list(d, dd->lb, dd->nb) && !in_list(d, dd->lc, dd->nc)) lf[nlf++] = d;
  for (int32_t d = 0; d < r->rank; d++)
    if (!in_list(d, dd->rb, dd->nb) && !in_list(d, dd->rc, dd->nc)) rf[nrf++] = d;
  if (dd->nb + nlf + nrf != out->rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "dot result rank mismatch");
  int64_t cdims[RF_MAX_RANK], cn = pick_dims(l->dims, dd->lc, dd->nc, cdims);
  cj_dtype_kind kind = cj_dtype_kindof(out->dt);
  cj_dtype adt = acc_type(out->dt);
  int64_t oi[RF_MAX_RANK], li[RF_MAX_RANK], ri[RF_MAX_RANK], ci[RF_MAX_RANK];
  for (int64_t o = 0; o < out->n; o++) {
    cj_rf_unravel(o, out->rank, out->dims, oi);
    int32_t q = 0;
    for (int64_t k = 0; k < dd->nb; k++, q++) {
      li[dd->lb[k]] = oi[q];
      ri[dd->rb[k]] = oi[q];
    }
    for (int64_t k = 0; k < nlf; k++) li[lf[k]] = oi[q++];
    for (int64_t k = 0; k < nrf; k++) ri[rf[k]] = oi[q++];
    rs acc = {0, 0, 0};
    for (int64_t c = 0; c < cn; c++) {
      cj_rf_unravel(c, (int32_t)dd->nc, cdims, ci);
      for (int64_t k = 0; k < dd->nc; k++) {
        li[dd->lc[k]] = ci[k];
        ri[dd->rc[k]] = ci[k];
      }
      acc_add(adt, &acc, elem_as(l, ravel(l->rank, l->dims, li), adt), elem_as(r, ravel(r->rank, r->dims, ri), adt));
    }
    if (kind == CJ_DK_SINT || kind == CJ_DK_UINT) acc.i = cj_rf_wrap(out->dt, acc.i);
    cj_rs_set(out->dt, out->data, o, acc);
  }
  return NULL;
}

static void dot_field(const cj_attr *a, int f, int64_t *out, int64_t *n) {
  *n = 0;
  const cj_attr *v = cj_attr_field(a, CJ_SK_DOT, f);
  if (v) cj_attr_get_i64s(v, out, RF_MAX_RANK, n);
}

static CJ_MUST_USE cj_status dot_general(cj_op *op, rv **ins, rv *out) {
  dot_dims dd;
  int64_t n2;
  const cj_attr *a = cj_op_attr(op, "dot_dimension_numbers");
  dot_field(a, CJ_SF_DOT_lhs_batching_dimensions, dd.lb, &dd.nb);
  dot_field(a, CJ_SF_DOT_rhs_batching_dimensions, dd.rb, &n2);
  dot_field(a, CJ_SF_DOT_lhs_contracting_dimensions, dd.lc, &dd.nc);
  dot_field(a, CJ_SF_DOT_rhs_contracting_dimensions, dd.rc, &n2);
  return dot_run(op, ins[0], ins[1], out, &dd);
}

static CJ_MUST_USE cj_status dot(cj_op *op, rv **ins, rv *out) {
  dot_dims dd;
  memset(&dd, 0, sizeof dd);
  dd.nc = 1;
  dd.lc[0] = ins[0]->rank - 1;
  dd.rc[0] = 0;
  return dot_run(op, ins[0], ins[1], out, &dd);
}

/* ---------------------------------------------------------------- convolution */

static int64_t conv1(const cj_attr *dn, int f) {
  int64_t v = 0;
  cj_attr_get_i64(cj_attr_field(dn, CJ_SK_CONV, f), &v);
  return v;
}
static void convn(const cj_attr *dn, int f, int64_t *out) {
  int64_t n = 0;
  cj_attr_get_i64s(cj_attr_field(dn, CJ_SK_CONV, f), out, RF_MAX_RANK, &n);
}

static CJ_MUST_USE cj_status convolution(cj_op *op, rv **ins, rv *out) {
  const rv *l = ins[0], *r = ins[1];
  const cj_attr *dn = cj_op_attr(op, "dimension_numbers");
  int64_t ib = conv1(dn, CJ_SF_CONV_input_batch_dimension), ifd = conv1(dn, CJ_SF_CONV_input_feature_dimension);
  int64_t kif = conv1(dn, CJ_SF_CONV_kernel_input_feature_dimension), kof = conv1(dn, CJ_SF_CONV_kernel_output_feature_dimension);
  int64_t ob = conv1(dn, CJ_SF_CONV_output_batch_dimension), of = conv1(dn, CJ_SF_CONV_output_feature_dimension);
  int64_t isp[RF_MAX_RANK], ksp[RF_MAX_RANK], osp[RF_MAX_RANK];
  convn(dn, CJ_SF_CONV_input_spatial_dimensions, isp);
  convn(dn, CJ_SF_CONV_kernel_spatial_dimensions, ksp);
  convn(dn, CJ_SF_CONV_output_spatial_dimensions, osp);
  int32_t S = l->rank - 2;
  int64_t st[RF_MAX_RANK], ld[RF_MAX_RANK], rd[RF_MAX_RANK], lo[RF_MAX_RANK], n = 0;
  bool rev[RF_MAX_RANK];
  for (int32_t i = 0; i < S; i++) {
    st[i] = ld[i] = rd[i] = 1;
    lo[i] = 0;
    rev[i] = false;
  }
  if (cj_op_get_i64s(op, "window_strides", st, RF_MAX_RANK, &n) && n != S) return cj_op_error(op, CJ_INVALID_ARGUMENT, "window_strides");
  if (!cj_op_get_i64s(op, "lhs_dilation", ld, RF_MAX_RANK, &n)) for (int32_t i = 0; i < S; i++) ld[i] = 1;
  if (!cj_op_get_i64s(op, "rhs_dilation", rd, RF_MAX_RANK, &n)) for (int32_t i = 0; i < S; i++) rd[i] = 1;
  if (!cj_op_get_i64s(op, "window_strides", st, RF_MAX_RANK, &n)) for (int32_t i = 0; i < S; i++) st[i] = 1;
  const cj_attr *pa = cj_op_attr(op, "padding");
  if (pa && pa->kind == CJ_ATTR_DENSE)
    for (int32_t i = 0; i < S; i++) lo[i] = cj_dense_get_i64(pa, 2 * i);
  const cj_attr *wr = cj_op_attr(op, "window_reversal");
  if (wr && wr->kind == CJ_ATTR_DENSE_ARRAY)
    for (int32_t i = 0; i < S && i < wr->darr.n; i++) rev[i] = ((const uint8_t *)wr->darr.data)[i] != 0;
  int64_t fgc = 1, bgc = 1;
  cj_op_get_i64(op, "feature_group_count", &fgc);
  cj_op_get_i64(op, "batch_group_count", &bgc);
  int64_t OF = out->dims[of], OB = out->dims[ob], IFK = r->dims[kif];
  int64_t ofg = OF / (fgc ? fgc : 1), obg = OF / (bgc ? bgc : 1);
  int64_t kdims[RF_MAX_RANK], kn = pick_dims(r->dims, ksp, S, kdims);
  cj_dtype_kind kind = cj_dtype_kindof(out->dt);
  cj_dtype adt = acc_type(out->dt);
  int64_t oi[RF_MAX_RANK], li[RF_MAX_RANK], ri[RF_MAX_RANK], ki[RF_MAX_RANK];
  for (int64_t o = 0; o < out->n; o++) {
    cj_rf_unravel(o, out->rank, out->dims, oi);
    int64_t b = oi[ob], f = oi[of];
    int64_t g = ofg ? f / ofg : 0, bg = obg ? f / obg : 0;
    li[ib] = bg * OB + b;
    ri[kof] = f;
    rs acc = {0, 0, 0};
    for (int64_t kf = 0; kf < IFK; kf++) {
      li[ifd] = g * IFK + kf;
      ri[kif] = kf;
      for (int64_t k = 0; k < kn; k++) {
        cj_rf_unravel(k, S, kdims, ki);
        bool inside = true;
        for (int32_t i = 0; i < S && inside; i++) {
          int64_t p = oi[osp[i]] * st[i] + ki[i] * rd[i] - lo[i];
          if (p < 0 || p % ld[i] != 0 || p / ld[i] >= l->dims[isp[i]]) inside = false;
          else li[isp[i]] = p / ld[i];
          ri[ksp[i]] = rev[i] ? kdims[i] - 1 - ki[i] : ki[i];
        }
        if (!inside) continue;
        acc_add(adt, &acc, elem_as(l, ravel(l->rank, l->dims, li), adt), elem_as(r, ravel(r->rank, r->dims, ri), adt));
      }
    }
    if (kind == CJ_DK_SINT || kind == CJ_DK_UINT) acc.i = cj_rf_wrap(out->dt, acc.i);
    cj_rs_set(out->dt, out->data, o, acc);
  }
  return NULL;
}

/* ---------------------------------------------------------------- fft */

/* in-place DFT of a[0..n) with stride s */
static CJ_MUST_USE cj_status dft(double complex *a, int64_t n, int64_t s, bool inverse) {
  double complex *t = malloc(sizeof(double complex) * (size_t)(n ? n : 1));
  if (!t) return cj_oom();
  double sign = inverse ? 1 : -1;
  for (int64_t k = 0; k < n; k++) {
    double complex sum = 0;
    for (int64_t j = 0; j < n; j++) {
      double ang = sign * 2 * M_PI * (double)((j * k) % n) / (double)n;
      sum += a[j * s] * CMPLX(cos(ang), sin(ang));
    }
    t[k] = inverse ? sum / (double)n : sum;
  }
  for (int64_t k = 0; k < n; k++) a[k * s] = t[k];
  free(t);
  return NULL;
}

/* DFT along axis `ax` of a dense complex array of dims */
static CJ_MUST_USE cj_status dft_axis(double complex *a, int32_t rank, const int64_t *dims, int32_t ax, bool inverse) {
  int64_t strides[RF_MAX_RANK], idx[RF_MAX_RANK], total = 1;
  cj_rf_strides(rank, dims, strides);
  for (int32_t d = 0; d < rank; d++) total *= dims[d];
  if (!dims[ax]) return NULL;
  int64_t red[RF_MAX_RANK];
  memcpy(red, dims, sizeof(int64_t) * (size_t)rank);
  red[ax] = 1;
  for (int64_t s = 0; s < total / dims[ax]; s++) {
    cj_rf_unravel(s, rank, red, idx);
    int64_t base = 0;
    for (int32_t d = 0; d < rank; d++) base += idx[d] * strides[d];
    CJ_RETURN_IF_ERROR(dft(a + base, dims[ax], strides[ax], inverse));
  }
  return NULL;
}

/* The f32 real transform of an odd prime length n in [7, 131] as XLA:CPU computes it. XLA's FFT
 * library (DUCC, of FFTPACK's design) runs such a length as one generic odd-radix pass in float
 * (larger primes it may route through Bluestein's algorithm instead), and the corpus' expected
 * values carry that arithmetic's roundings (up to thousands of ulps from the exact transform on
 * outputs near zero, where a 3-ulp check looks). The pass:
 * s_j = x_j + x_{n-j} and t_j = x_{n-j} - x_j for 0 < j < h = (n + 1) / 2; X_0 = s_0 + s_1 + ...
 * summed in order; for 0 < k < h, Re X_k = s_0 + sum_j cos(2 pi jk/n) s_j and
 * Im X_k = sum_j sin(2 pi jk/n) t_j, both sums taking terms j = 1, 2 one by one, then the rest
 * in groups of four (fewer at the end: two, then one), each group summed on its own and then
 * added. cs holds cos and sin of 2 pi k / n, k < n, as floats; s is n floats of scratch. */
static void rfft_prime_f32(const float *x, int64_t n, const float *cs, float *s, double complex *out) {
  int64_t h = (n + 1) / 2;
  s[0] = x[0];
  for (int64_t j = 1; j < h; j++) {
    s[j] = x[j] + x[n - j];
    s[n - j] = x[n - j] - x[j]; /* t_j */
  }
  float sum = s[0];
  for (int64_t j = 1; j < h; j++) sum = sum + s[j];
  out[0] = sum;
  for (int64_t k = 1; k < h; k++) {
    const float *c1 = cs + 2 * k, *c2 = cs + 2 * (2 * k % n);
    float re = (s[0] + c1[0] * s[1]) + c2[0] * s[2];
    float im = c1[1] * s[n - 1] + c2[1] * s[n - 2];
    for (int64_t j = 3; j < h;) {
      int64_t g = j + 3 < h ? 4 : j + 1 < h ? 2 : 1;
      const float *c = cs + 2 * (j * k % n);
      float gr = c[0] * s[j], gi = c[1] * s[n - j];
      for (int64_t q = 1; q < g; q++) {
        c = cs + 2 * ((j + q) * k % n);
        gr = gr + c[0] * s[j + q];
        gi = gi + c[1] * s[n - j - q];
      }
      re = re + gr;
      im = im + gi;
      j += g;
    }
    out[k] = CMPLX(re, im);
  }
}

static bool is_prime(int64_t n) {
  for (int64_t d = 2; d * d <= n; d++)
    if (n % d == 0) return false;
  return n > 1;
}

/* the last axis of an f32 RFFT of odd prime length n (rfft_prime_f32) into w, the complex
 * work array of the full shape (n along the last axis) */
static CJ_MUST_USE cj_status rfft_last_axis_f32(const rv *in, int64_t n, double complex *w) {
  float *cs = malloc(sizeof(float) * (size_t)(4 * n));
  if (!cs) return cj_oom();
  float *x = cs + 2 * n, *s = cs + 3 * n;
  for (int64_t k = 0; k <= n / 2; k++) { /* rounded from double; the second half mirrors */
    double a = 2 * M_PI * (double)k / (double)n;
    cs[2 * k] = (float)cos(a);
    cs[2 * k + 1] = (float)sin(a);
    if (k) cs[2 * (n - k)] = cs[2 * k], cs[2 * (n - k) + 1] = -cs[2 * k + 1];
  }
  for (int64_t line = 0; line < in->n / n; line++) {
    for (int64_t j = 0; j < n; j++) x[j] = (float)cj_rf_getf(in->dt, in->data, line * n + j);
    rfft_prime_f32(x, n, cs, s, w + line * n);
  }
  free(cs);
  return NULL;
}

static CJ_MUST_USE cj_status fft(cj_op *op, const rv *in, rv *out) {
  int32_t ty = 0;
  cj_op_get_enum(op, "fft_type", CJ_EK_FFT_TYPE, &ty);
  int64_t len[RF_MAX_RANK], nl = 0;
  cj_op_get_i64s(op, "fft_length", len, RF_MAX_RANK, &nl);
  int32_t R = out->rank;
  /* work on a complex array of the full (complex-domain) shape */
  int64_t wd[RF_MAX_RANK], wn = 1;
  memcpy(wd, out->dims, sizeof(int64_t) * (size_t)R);
  if (ty == CJ_FFT_TYPE_RFFT || ty == CJ_FFT_TYPE_IRFFT) wd[R - 1] = len[nl - 1];
  for (int32_t d = 0; d < R; d++) wn *= wd[d];
  double complex *w = calloc((size_t)(wn ? wn : 1), sizeof(double complex));
  if (!w) return cj_oom();
  int64_t idx[RF_MAX_RANK];
  cj_status st = NULL;
  if (ty == CJ_FFT_TYPE_IRFFT) {
    /* rebuild the full Hermitian spectrum along the last axis */
    int64_t n = wd[R - 1], h = in->dims[R - 1];
    for (int64_t i = 0; i < wn; i++) {
      cj_rf_unravel(i, R, wd, idx);
      int64_t k = idx[R - 1];
      bool conj_ = k >= h;
      if (conj_) { /* X[k] = conj(X[-k]) over every transformed axis */
        idx[R - 1] = n - k;
        for (int32_t ax = R - (int32_t)nl; ax < R - 1; ax++) idx[ax] = (wd[ax] - idx[ax]) % wd[ax];
      }
      if (idx[R - 1] >= h) continue;
      double complex v = cj_rf_getc(in->dt, in->data, ravel(R, in->dims, idx));
      w[i] = conj_ ? conj(v) : v;
    }
    for (int32_t a = R - (int32_t)nl; a < R - 1 && !st; a++) st = dft_axis(w, R, wd, a, true);
    if (!st) st = dft_axis(w, R, wd, R - 1, true);
    for (int64_t i = 0; i < wn && !st; i++) cj_rf_setf(out->dt, out->data, i, creal(w[i]));
  } else {
    int64_t n = wd[R - 1];
    bool f32_prime = ty == CJ_FFT_TYPE_RFFT && in->dt == CJ_F32 && n >= 7 && n <= 131 && is_prime(n);
    for (int64_t i = 0; i < wn && !f32_prime; i++) {
      if (ty == CJ_FFT_TYPE_RFFT) w[i] = cj_rf_getf(in->dt, in->data, i);
      else w[i] = cj_rf_getc(in->dt, in->data, i);
    }
    if (f32_prime) st = rfft_last_axis_f32(in, n, w);
    bool inv = ty == CJ_FFT_TYPE_IFFT;
    int32_t end = f32_prime ? R - 1 : R; /* axes still to transform */
    for (int32_t a = R - (int32_t)nl; a < end && !st; a++) st = dft_axis(w, R, wd, a, inv);
    for (int64_t o = 0; o < out->n && !st; o++) {
      cj_rf_unravel(o, R, out->dims, idx);
      cj_rf_setc(out->dt, out->data, o, w[ravel(R, wd, idx)]);
    }
  }
  free(w);
  return st;
}

/* ---------------------------------------------------------------- triangular_solve, cholesky */

static CJ_MUST_USE cj_status triangular_solve(cj_op *op, rv **ins, rv *out) {
  const rv *A = ins[0], *B = ins[1];
  bool left = false, lower = false, unit = false;
  int32_t tr = CJ_TRANSPOSE_NO_TRANSPOSE;
  cj_op_get_bool(op, "left_side", &left);
  cj_op_get_bool(op, "lower", &lower);
  cj_op_get_bool(op, "unit_diagonal", &unit);
  cj_op_get_enum(op, "transpose_a", CJ_EK_TRANSPOSE, &tr);
  int32_t R = A->rank;
  int64_t m = A->dims[R - 1], bm = B->dims[R - 2], bn = B->dims[R - 1];
  int64_t batch = m ? A->n / (m * m) : 0;
  double complex *M = malloc(sizeof(double complex) * (size_t)(m * m + 1));
  double complex *X = malloc(sizeof(double complex) * (size_t)(bm * bn + 1));
  if (!M || !X) {
    free(M);
    free(X);
    return cj_oom();
  }
  for (int64_t bi = 0; bi < batch; bi++) {
    /* M = op(tri(A)) */
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < m; j++) {
        int64_t si = i, sj = j;
        if (tr != CJ_TRANSPOSE_NO_TRANSPOSE) {
          si = j;
          sj = i;
        }
        bool keep = lower ? sj <= si : sj >= si;
        double complex a = 0;
        if (keep) {
          rs s = cj_rs_get(A->dt, A->data, bi * m * m + si * m + sj);
          a = cj_dtype_is_complex(A->dt) ? s.c : s.f;
          if (si == sj && unit) a = 1;
          if (tr == CJ_TRANSPOSE_ADJOINT) a = conj(a);
        }
        M[i * m + j] = a;
      }
    bool mlower = lower != (tr != CJ_TRANSPOSE_NO_TRANSPOSE);
    for (int64_t i = 0; i < bm * bn; i++) {
      rs s = cj_rs_get(B->dt, B->data, bi * bm * bn + i);
      X[i] = cj_dtype_is_complex(B->dt) ? s.c : s.f;
    }
    if (left) { /* M X = B, column by column */
      for (int64_t c = 0; c < bn; c++) {
        if (mlower) {
          for (int64_t i = 0; i < m; i++) {
            double complex s = X[i * bn + c];
            for (int64_t k = 0; k < i; k++) s -= M[i * m + k] * X[k * bn + c];
            X[i * bn + c] = s / M[i * m + i];
          }
        } else {
          for (int64_t i = m - 1; i >= 0; i--) {
            double complex s = X[i * bn + c];
            for (int64_t k = i + 1; k < m; k++) s -= M[i * m + k] * X[k * bn + c];
            X[i * bn + c] = s / M[i * m + i];
          }
        }
      }
    } else { /* X M = B, row by row: x_j = (b_j - sum_{k} x_k M[k][j]) / M[j][j] */
      for (int64_t r = 0; r < bm; r++) {
        if (mlower) {
          for (int64_t j = m - 1; j >= 0; j--) {
            double complex s = X[r * bn + j];
            for (int64_t k = j + 1; k < m; k++) s -= X[r * bn + k] * M[k * m + j];
            X[r * bn + j] = s / M[j * m + j];
          }
        } else {
          for (int64_t j = 0; j < m; j++) {
            double complex s = X[r * bn + j];
            for (int64_t k = 0; k < j; k++) s -= X[r * bn + k] * M[k * m + j];
            X[r * bn + j] = s / M[j * m + j];
          }
        }
      }
    }
    for (int64_t i = 0; i < bm * bn; i++) {
      rs s = {creal(X[i]), 0, X[i]};
      cj_rs_set(out->dt, out->data, bi * bm * bn + i, s);
    }
  }
  free(M);
  free(X);
  return NULL;
}

static CJ_MUST_USE cj_status cholesky(cj_op *op, const rv *A, rv *out) {
  bool lower = false;
  cj_op_get_bool(op, "lower", &lower);
  int32_t R = A->rank;
  int64_t n = A->dims[R - 1];
  int64_t batch = n ? A->n / (n * n) : 0;
  double complex *L = malloc(sizeof(double complex) * (size_t)(n * n + 1));
  if (!L) return cj_oom();
  bool cx = cj_dtype_is_complex(A->dt);
  for (int64_t bi = 0; bi < batch; bi++) {
    /* work on the lower form: a[i][j] for i >= j from the chosen triangle */
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        int64_t si = lower ? i : j, sj = lower ? j : i;
        rs s = cj_rs_get(A->dt, A->data, bi * n * n + si * n + sj);
        double complex v = cx ? s.c : s.f;
        L[i * n + j] = lower ? v : conj(v);
      }
    bool failed = false; /* not positive definite (or NaN): the whole matrix is NaN, as XLA gives */
    for (int64_t j = 0; j < n; j++) {
      double complex d = L[j * n + j];
      for (int64_t k = 0; k < j; k++) d -= L[j * n + k] * conj(L[j * n + k]);
      double dr = creal(d);
      double ljj = dr > 0 ? sqrt(dr) : NAN;
      if (!(dr > 0)) failed = true;
      L[j * n + j] = ljj;
      for (int64_t i = j + 1; i < n; i++) {
        double complex s = L[i * n + j];
        for (int64_t k = 0; k < j; k++) s -= L[i * n + k] * conj(L[j * n + k]);
        L[i * n + j] = s / ljj;
      }
      for (int64_t i = 0; i < j; i++) L[i * n + j] = 0;
    }
    for (int64_t i = 0; i < n; i++)
      for (int64_t j = 0; j < n; j++) {
        double complex v = failed ? NAN : lower ? L[i * n + j] : conj(L[j * n + i]);
        rs s = {creal(v), 0, v};
        cj_rs_set(out->dt, out->data, bi * n * n + i * n + j, s);
      }
  }
  free(L);
  return NULL;
}

/* ---------------------------------------------------------------- rng_bit_generator */

/* Threefry-2x32, 20 rounds (Salmon et al., Random123) */
static void threefry2x32(uint32_t k0, uint32_t k1, uint32_t *x0, uint32_t *x1) {
  static const int rot[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  uint32_t a = *x0 + k0, b = *x1 + k1;
  for (int r = 0; r < 20; r++) {
    a += b;
    b = (b << rot[r % 8]) | (b >> (32 - rot[r % 8]));
    b ^= a;
    if (r % 4 == 3) {
      uint32_t s = (uint32_t)(r + 1) / 4;
      a += ks[s % 3];
      b += ks[(s + 1) % 3] + s;
    }
  }
  *x0 = a;
  *x1 = b;
}

/* THREE_FRY with 64-bit outputs, XLA's stream: the key is state[0] (low word first), element i
 * is the output pair for the 64-bit counter state[1] + i (low word first); the new state is
 * [key, state[1] + count]. (Narrower outputs and PHILOX are refused by supports_op.) */
static CJ_MUST_USE cj_status rng_bit_generator(cj_op *op, rv **ins, rv **outs) {
  const rv *st = ins[0];
  rv *ns = outs[0], *out = outs[1];
  uint64_t key = (uint64_t)cj_rf_geti(st->dt, st->data, 0), ctr = (uint64_t)cj_rf_geti(st->dt, st->data, 1);
  if (cj_dtype_bits(out->dt) != 64 || st->n != 2) return cj_op_error(op, CJ_UNIMPLEMENTED, "rng_bit_generator form");
  for (int64_t i = 0; i < out->n; i++) {
    uint64_t c = ctr + (uint64_t)i;
    uint32_t x0 = (uint32_t)c, x1 = (uint32_t)(c >> 32);
    threefry2x32((uint32_t)key, (uint32_t)(key >> 32), &x0, &x1);
    uint64_t v = (uint64_t)x0 | (uint64_t)x1 << 32;
    memcpy(out->data + i * 8, &v, 8);
  }
  cj_rf_seti(ns->dt, ns->data, 0, (int64_t)key);
  cj_rf_seti(ns->dt, ns->data, 1, (int64_t)(ctr + (uint64_t)out->n));
  return NULL;
}

/* ---------------------------------------------------------------- ref.def's rows */

cj_status cj_rf_x_dot_general(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return dot_general(op, ins, outs[0]); }
cj_status cj_rf_x_dot(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return dot(op, ins, outs[0]); }
cj_status cj_rf_x_convolution(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return convolution(op, ins, outs[0]); }
cj_status cj_rf_x_fft(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return fft(op, ins[0], outs[0]); }
cj_status cj_rf_x_triangular_solve(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return triangular_solve(op, ins, outs[0]); }
cj_status cj_rf_x_cholesky(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return cholesky(op, ins[0], outs[0]); }
cj_status cj_rf_x_rng_bit_generator(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return rng_bit_generator(op, ins, outs); }
