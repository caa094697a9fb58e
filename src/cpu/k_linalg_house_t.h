/* cjrt: the Householder QR and Jacobi eigensolver routines of k_linalg_house.c, written once for
 * one compute element type and included twice by that file (private; no include guard):
 *
 *   HT         the element type (double, or double _Complex)
 *   HS(name)   the name with the type's suffix
 *   HCPLX      1 for the complex type
 *
 * Matrices are row-major with row stride equal to their column count. The routines never
 * allocate: every temporary comes from the caller's workspace.
 */

#if HCPLX
#define HCONJ(x) conj(x)
#define HRE(x) creal(x)
#define HIM(x) cimag(x)
#define HABS(x) cabs(x)
#else
#define HCONJ(x) (x)
#define HRE(x) (x)
#define HIM(x) 0.0
#define HABS(x) fabs(x)
#endif

/* sqrt(sum |x_i|^2) over n elements `stride` apart, scaled so that it neither overflows nor
 * underflows */
static double HS(hh_norm)(const HT *x, int64_t n, int64_t stride) {
  double scale = 0, ssq = 1;
  for (int64_t i = 0; i < n; i++) {
    double parts[2] = {fabs(HRE(x[i * stride])), fabs(HIM(x[i * stride]))};
    for (int c = 0; c < 1 + HCPLX; c++) {
      double v = parts[c];
      if (v == 0) continue;
      if (!(v <= scale)) { /* also takes NaN in, which then propagates */
        ssq = 1 + ssq * (scale / v) * (scale / v);
        scale = v;
      } else {
        ssq += (v / scale) * (v / scale);
      }
    }
  }
  return scale * sqrt(ssq);
}

/* LAPACK's geqrf on a (m x n): on return R is in the upper triangle, the Householder vectors
 * v_i (v_i[i] = 1 implicit, zeros above) below the diagonal, and tau (min(m, n)) such that
 * a = H_0 H_1 ... H_{k-1} R with H_i = I - tau_i v_i v_i^H. w: n elements of scratch. */
static void HS(hh_geqrf)(HT *a, int64_t m, int64_t n, HT *tau, HT *w) {
  int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; j++) {
    HT *col = a + j * n + j; /* a[j][j], rows below n apart */
    HT alpha = col[0];
    double xnorm = m - j > 1 ? HS(hh_norm)(col + n, m - j - 1, n) : 0.0;
    if (xnorm == 0 && HIM(alpha) == 0) {
      tau[j] = 0; /* H = I */
      continue;
    }
    double beta = hypot(hypot(HRE(alpha), HIM(alpha)), xnorm);
    beta = HRE(alpha) >= 0 ? -beta : beta;
#if HCPLX
    union { double _Complex z; double d[2]; } tz; /* no CMPLX in clang with older glibc */
    tz.d[0] = (beta - HRE(alpha)) / beta;
    tz.d[1] = -HIM(alpha) / beta;
    tau[j] = tz.z;
#else
    tau[j] = (beta - alpha) / beta;
#endif
    HT scal = 1.0 / (alpha - beta);
    for (int64_t i = 1; i < m - j; i++) col[i * n] *= scal;
    col[0] = beta;
    /* a[j:, j+1:] := (I - conj(tau) v v^H) a[j:, j+1:] */
    int64_t nc = n - j - 1;
    if (nc <= 0) continue;
    HT *blk = col + 1;
    for (int64_t c = 0; c < nc; c++) w[c] = blk[c]; /* v[0] = 1 */
    for (int64_t i = 1; i < m - j; i++) {
      HT vi = HCONJ(col[i * n]);
      const HT *row = blk + i * n;
      for (int64_t c = 0; c < nc; c++) w[c] += vi * row[c];
    }
    HT ct = HCONJ(tau[j]);
    for (int64_t c = 0; c < nc; c++) blk[c] -= ct * w[c];
    for (int64_t i = 1; i < m - j; i++) {
      HT f = ct * col[i * n];
      HT *row = blk + i * n;
      for (int64_t c = 0; c < nc; c++) row[c] -= f * w[c];
    }
  }
}

/* LAPACK's orgqr/ungqr: q (m x n, m >= n) = H_0 ... H_{k-1} applied to the first n columns of
 * the identity, the vectors read below the diagonal of a (m x n) and tau (k <= n). w: n
 * elements of scratch. */
static void HS(hh_orgqr)(const HT *a, int64_t m, int64_t n, const HT *tau, int64_t k, HT *q,
                         HT *w) {
  for (int64_t i = 0; i < m * n; i++) q[i] = 0;
  for (int64_t i = 0; i < n && i < m; i++) q[i * n + i] = 1;
  for (int64_t j = k - 1; j >= 0; j--) {
    HT t = tau[j];
    if (t == 0) continue;
    /* rows j.. of columns j.. (columns before j are still identity columns, zero there) */
    int64_t nc = n - j;
    HT *blk = q + j * n + j;
    const HT *v = a + j * n + j; /* v[0] = 1 implicit; v[i] = v[i * n] */
    for (int64_t c = 0; c < nc; c++) w[c] = blk[c];
    for (int64_t i = 1; i < m - j; i++) {
      HT vi = HCONJ(v[i * n]);
      const HT *row = blk + i * n;
      for (int64_t c = 0; c < nc; c++) w[c] += vi * row[c];
    }
    for (int64_t c = 0; c < nc; c++) blk[c] -= t * w[c];
    for (int64_t i = 1; i < m - j; i++) {
      HT f = t * v[i * n];
      HT *row = blk + i * n;
      for (int64_t c = 0; c < nc; c++) row[c] -= f * w[c];
    }
  }
}

/* Cyclic two-sided Jacobi on the full Hermitian matrix a (n x n, both triangles filled,
 * destroyed): on return v (n x n) holds the eigenvectors in its columns and w the eigenvalues,
 * in the order of a's diagonal. A pair (p, q) is rotated unless |a_pq| is negligible next to
 * sqrt(|a_pp a_qq|) (relative to the unit roundoff) or to the whole matrix; sweeps stop when
 * one rotates nothing, or after max_sweeps. */
static void HS(hh_jacobi)(HT *a, int64_t n, HT *v, double *w, int64_t max_sweeps) {
  for (int64_t i = 0; i < n * n; i++) v[i] = 0;
  for (int64_t i = 0; i < n; i++) v[i * n + i] = 1;
  const double eps = DBL_EPSILON;
  double fro = HS(hh_norm)(a, n * n, 1);
  double floor_abs = fro * eps * 1e-3;
  if (!(floor_abs >= DBL_MIN)) floor_abs = DBL_MIN; /* zero matrix */
  for (int64_t sweep = 0; sweep < max_sweeps; sweep++) {
    int64_t rotated = 0;
    for (int64_t p = 0; p < n - 1; p++) {
      for (int64_t q = p + 1; q < n; q++) {
        HT apq = a[p * n + q];
        double g = HABS(apq);
        double app = HRE(a[p * n + p]), aqq = HRE(a[q * n + q]);
        if (g <= floor_abs || g <= eps * sqrt(fabs(app)) * sqrt(fabs(aqq))) {
          a[p * n + q] = a[q * n + p] = 0;
          continue;
        }
        rotated++;
#if HCPLX
        /* make a_pq real: scale column q by d and row q by conj(d) (a unitary similarity) */
        HT d = HCONJ(apq) / g;
        for (int64_t r = 0; r < n; r++) {
          if (r != q) {
            a[r * n + q] *= d;
            a[q * n + r] *= HCONJ(d);
          }
          v[r * n + q] *= d;
        }
        /* now a_pq = g */
#else
        g = apq; /* real: the rotation takes the signed value */
#endif
        double theta = (aqq - app) / (2 * g);
        double t = fabs(theta) > 1e150 ? 0.5 / theta
                                       : (theta >= 0 ? 1.0 : -1.0) /
                                             (fabs(theta) + sqrt(theta * theta + 1));
        double c = 1 / sqrt(t * t + 1), s = t * c;
        for (int64_t r = 0; r < n; r++) {
          if (r == p || r == q) continue;
          HT arp = a[r * n + p], arq = a[r * n + q];
          HT np = c * arp - s * arq, nq = s * arp + c * arq;
          a[r * n + p] = np;
          a[r * n + q] = nq;
          a[p * n + r] = HCONJ(np);
          a[q * n + r] = HCONJ(nq);
        }
        a[p * n + p] = app - t * g;
        a[q * n + q] = aqq + t * g;
        a[p * n + q] = a[q * n + p] = 0;
        for (int64_t r = 0; r < n; r++) {
          HT vrp = v[r * n + p], vrq = v[r * n + q];
          v[r * n + p] = c * vrp - s * vrq;
          v[r * n + q] = s * vrp + c * vrq;
        }
      }
    }
    if (!rotated) break;
  }
  for (int64_t i = 0; i < n; i++) w[i] = HRE(a[i * n + i]);
}

#undef HCONJ
#undef HRE
#undef HIM
#undef HABS
