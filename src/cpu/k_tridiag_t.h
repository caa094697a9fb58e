/* cjrt: the perturbed tridiagonal solve of k_tridiag.c for one element type (included once per
 * type, private).
 *
 * Before inclusion: TT (the element type), TR (its real type), TS(name) (a name for this type's
 * copy), TABS(x) (|x| in TR), TRE(x) (the real part), TEPS / TMIN / TMAX (the real type's epsilon,
 * smallest normal and largest finite value). The header undefines them at its end.
 *
 * One batch element: dl, d, du hold the sub-, main and super-diagonal (n each; dl[0] and du[n-1]
 * are not part of the matrix), b and x are n x k, row-major (row i = k contiguous elements).
 * Workspace: u (3 n elements: U's diagonal and two superdiagonals) and a row of k.
 */

/* Makes a pivot safe to divide by: while |pivot| < 1 and dividing the row by it could overflow
 * (or the pivot is zero), the pivot grows by `perturb` (with the pivot's sign, doubled each time);
 * a tiny pivot that is not needed to avoid overflow scales the pivot and the row up instead. */
static void TS(tp_perturb)(TR perturb, TT *pivot, TT *row, int64_t k) {
  const TR one = 1;
  const TR small = one / TMAX;
  const TR safemin = small < TMIN ? TMIN : small * (one + TEPS);
  const TR bignum = one / safemin;
  TR a = TABS(*pivot);
  if (a >= one) return;
  perturb = fabs(perturb) > safemin ? (TR)fabs(perturb) : safemin;
  perturb = copysign(perturb, TRE(*pivot));
  TR maxf = 0;
  for (int64_t j = 0; j < k; j++)
    if (TABS(row[j]) > maxf) maxf = TABS(row[j]);
  for (bool stop = false; a < one && !stop; a = TABS(*pivot)) {
    if (a < safemin) {
      if (a == 0 || maxf * safemin > a) {
        *pivot += perturb;
        perturb *= 2;
      } else {
        *pivot *= bignum;
        for (int64_t j = 0; j < k; j++) row[j] *= bignum;
        stop = true;
      }
    } else if (maxf > a * bignum) {
      *pivot += perturb;
      perturb *= 2;
    } else {
      stop = true;
    }
  }
}

static void TS(tp_solve)(int64_t n, int64_t k, const TT *dl, const TT *d, const TT *du,
                         const TT *b, TT *x, TT *u, TT *row) {
  if (n == 0) return;
  if (n == 1) {
    TT p = d[0];
    memcpy(row, b, (size_t)k * sizeof(TT));
    TS(tp_perturb)(TEPS * TABS(p), &p, row, k);
    for (int64_t j = 0; j < k; j++) x[j] = row[j] / p;
    return;
  }
  /* Gaussian elimination with row pivoting, the forward solve done on the way: after step i,
   * rows 0..i of U (u0: diagonal, u1, u2: superdiagonals) and of L^-1 P b (in x) are final. */
  TT *u0 = u, *u1 = u + n, *u2 = u + 2 * n;
  memset(u, 0, (size_t)(3 * n) * sizeof(TT));
  u0[0] = d[0];
  u1[0] = du[0];
  TR maxu = TABS(u0[0]) > TABS(u1[0]) ? TABS(u0[0]) : TABS(u1[0]);
  TR scale1 = TABS(u0[0]) + TABS(u1[0]);
  memmove(x, b, (size_t)k * sizeof(TT));
  for (int64_t i = 0; i < n - 1; i++) {
    TT *xi = x + i * k, *xn = x + (i + 1) * k;
    const TT *bn = b + (i + 1) * k;
    u0[i + 1] = d[i + 1];
    TR scale2 = TABS(dl[i + 1]) + TABS(u0[i + 1]);
    if (i < n - 2) scale2 += TABS(du[i + 1]);
    if (dl[i + 1] == 0) {
      scale1 = scale2;
      u1[i + 1] = du[i + 1];
      u2[i] = 0;
      memmove(xn, bn, (size_t)k * sizeof(TT));
    } else {
      TR piv1 = u0[i] == 0 ? 0 : TABS(u0[i]) / scale1;
      TR piv2 = TABS(dl[i + 1]) / scale2;
      if (piv2 <= piv1) { /* row i keeps the pivot */
        scale1 = scale2;
        TT f = dl[i + 1] / u0[i];
        u0[i + 1] -= f * u1[i];
        u1[i + 1] = du[i + 1];
        u2[i] = 0;
        for (int64_t j = 0; j < k; j++) xn[j] = bn[j] - f * xi[j];
      } else { /* rows i and i + 1 change places */
        TT f = u0[i] / dl[i + 1];
        TT keep = u1[i];
        u0[i] = dl[i + 1];
        u0[i + 1] = keep - f * d[i + 1];
        u1[i] = d[i + 1];
        if (i < n - 2) {
          u2[i] = du[i + 1];
          u1[i + 1] = -f * du[i + 1];
        }
        memcpy(row, bn, (size_t)k * sizeof(TT)); /* b may be x (in place) */
        for (int64_t j = 0; j < k; j++) xn[j] = xi[j] - f * row[j];
        memcpy(xi, row, (size_t)k * sizeof(TT));
        scale1 = TABS(u0[i + 1]) + TABS(u1[i + 1]);
      }
    }
    if (i < n - 2) {
      if (TABS(u0[i]) > maxu) maxu = TABS(u0[i]);
      if (TABS(u1[i]) > maxu) maxu = TABS(u1[i]);
      if (TABS(u2[i]) > maxu) maxu = TABS(u2[i]);
    }
  }
  if (TABS(u0[n - 1]) > maxu) maxu = TABS(u0[n - 1]);
  /* back substitution through U, perturbing pivots on the scale of eps * max |U| */
  const TR perturb = TEPS * maxu;
  for (int64_t i = n - 1; i >= 0; i--) {
    TT p = u0[i];
    TT *xi = x + i * k;
    for (int64_t j = 0; j < k; j++) {
      TT v = xi[j];
      if (i + 1 < n) v -= u1[i] * xi[k + j];
      if (i + 2 < n) v -= u2[i] * xi[2 * k + j];
      row[j] = v;
    }
    TS(tp_perturb)(perturb, &p, row, k);
    TT r = (TT)1 / p;
    for (int64_t j = 0; j < k; j++) xi[j] = row[j] * r;
  }
}

#undef TT
#undef TR
#undef TS
#undef TABS
#undef TRE
#undef TEPS
#undef TMIN
#undef TMAX
