/* cjrt: the LAPACK calls of k_lapack.c for one element type (included once per type, private).
 *
 * Before inclusion: LT (the element type), LR (its real type), LCPLX (0/1), LP (LAPACK's
 * letter for the type: s, d, c, z). From those: LX(name) (the Fortran routine of that type:
 * sgetrf_ ...), LS(name) (a name for this type's copy), L_ORGQR / L_SYEVD / L_SYTRD (orgqr or
 * ungqr, syevd or heevd, sytrd or hetrd). The end of this file undefines them all.
 *
 * Every buffer is one batch element, column-major (as jaxlib's kernels see it). Fortran
 * character arguments take a hidden length (gfortran: size_t) at the end of the list.
 */

#define LK_CAT3_(a, b, c) a##b##c
#define LK_CAT3(a, b, c) LK_CAT3_(a, b, c)
#define LX(name) LK_CAT3(LP, name, _)
#define LS(name) LK_CAT3(name, _, LP)
#if LCPLX
#define L_ORGQR LX(ungqr)
#define L_SYEVD LX(heevd)
#define L_SYTRD LX(hetrd)
#else
#define L_ORGQR LX(orgqr)
#define L_SYEVD LX(syevd)
#define L_SYTRD LX(sytrd)
#endif

void LX(trsm)(const char *, const char *, const char *, const char *, const int *, const int *,
              const LT *, const LT *, const int *, LT *, const int *, size_t, size_t, size_t,
              size_t);
void LX(getrf)(const int *, const int *, LT *, const int *, int *, int *);
void LX(geqrf)(const int *, const int *, LT *, const int *, LT *, LT *, const int *, int *);
void LX(geqp3)(const int *, const int *, LT *, const int *, int *, LT *, LT *, const int *,
#if LCPLX
               LR *,
#endif
               int *);
void L_ORGQR(const int *, const int *, const int *, LT *, const int *, const LT *, LT *,
             const int *, int *);
void LX(potrf)(const char *, const int *, LT *, const int *, int *, size_t);
void LX(gesdd)(const char *, const int *, const int *, LT *, const int *, LR *, LT *, const int *,
               LT *, const int *, LT *, const int *,
#if LCPLX
               LR *,
#endif
               int *, int *, size_t);
void LX(gesvd)(const char *, const char *, const int *, const int *, LT *, const int *, LR *,
               LT *, const int *, LT *, const int *, LT *, const int *,
#if LCPLX
               LR *,
#endif
               int *, size_t, size_t);
void L_SYEVD(const char *, const char *, const int *, LT *, const int *, LR *, LT *, const int *,
#if LCPLX
             LR *, const int *,
#endif
             int *, const int *, int *, size_t, size_t);
void LX(gehrd)(const int *, const int *, const int *, LT *, const int *, LT *, LT *, const int *,
               int *);
void L_SYTRD(const char *, const int *, LT *, const int *, LR *, LR *, LT *, LT *, const int *,
             int *, size_t);
#if LCPLX
void LX(geev)(const char *, const char *, const int *, LT *, const int *, LT *, LT *, const int *,
              LT *, const int *, LT *, const int *, LR *, int *, size_t, size_t);
void LX(gees)(const char *, const char *, void *, const int *, LT *, const int *, int *, LT *, LT *,
              const int *, LT *, const int *, LR *, int *, int *, size_t, size_t);
#else
void LX(geev)(const char *, const char *, const int *, LT *, const int *, LT *, LT *, LT *,
              const int *, LT *, const int *, LT *, const int *, int *, size_t, size_t);
void LX(gees)(const char *, const char *, void *, const int *, LT *, const int *, int *, LT *, LT *,
              LT *, const int *, LT *, const int *, int *, int *, size_t, size_t);
#endif
void LX(gtsv)(const int *, const int *, LT *, LT *, LT *, LT *, const int *, int *);

/* op(M) X = B (left) or X op(M) = B in place, M (m x m) and X (rows x cols) row-major, trans
 * 'N', 'T' or 'C'. Seen column-major they are M^T and X^T, so this is BLAS's solve on the other
 * side with the other triangle and the same op. */
static void LS(lk_trsm_rm)(bool left, bool lower, char trans, bool unit, int m, const void *M,
                           void *X, int rows, int cols) {
  const LT one = 1;
  char side = left ? 'R' : 'L', uplo = lower ? 'U' : 'L', diag = unit ? 'U' : 'N';
  int lda = m > 1 ? m : 1, ldb = cols > 1 ? cols : 1;
  LX(trsm)(&side, &uplo, &trans, &diag, &cols, &rows, &one, (const LT *)M, &lda, (LT *)X, &ldb,
           1, 1, 1, 1);
}

/* trsm straight on the buffers (k_lapack.c's direct path): `a` the triangular matrix, `x` the
 * right-hand sides, solved in place. When the call sees them column-major (`rm`), our row-major
 * buffers hold their transposes, and the solve is BLAS's on the other side with the other
 * triangle (lk_trsm_rm; with this OpenBLAS also 2x faster than the left-side solve at 128). */
static void LS(lk_trsm_direct)(const lk_params *p, bool rm, const char *a, char *x) {
  const LT one = 1;
  int m = p->m, n = p->n;
  if (rm) {
    LS(lk_trsm_rm)(p->side == 'L', p->uplo == 'L', p->job0, p->diag == 'U', p->ldu, a, x, m, n);
    return;
  }
  int lda = p->ldu, ldb = p->lda;
  LX(trsm)(&p->side, &p->uplo, &p->job0, &p->diag, &m, &n, &one, (const LT *)a, &lda, (LT *)x,
           &ldb, 1, 1, 1, 1);
}

/* Workspace sizes from LAPACK's own queries (lwork = -1), before any program runs. Returns
 * false when a query fails. */
static bool LS(lk_query)(lk_params *p) {
  int m = p->m, n = p->n, k = p->k, ld = p->lda, info = 0, q = -1;
  p->lxwork = 0;
  LT w = 0, a[1] = {0}, t[1] = {0};
  LR rw[1] = {0};
  int iw[1] = {0};
  (void)rw;
  p->lwork = p->liwork = p->lrwork = 0;
  switch (p->kind) {
    case LK_GEQRF:
      LX(geqrf)(&m, &n, a, &ld, t, &w, &q, &info);
      break;
    case LK_GEQP3:
      LX(geqp3)(&m, &n, a, &ld, iw, t, &w, &q,
#if LCPLX
                rw,
#endif
                &info);
#if LCPLX
      p->lrwork = 2 * n;
#endif
      break;
    case LK_ORGQR:
      L_ORGQR(&m, &n, &k, a, &ld, t, &w, &q, &info);
      break;
    case LK_GESDD: {
      int ldu = p->ldu, ldvt = p->ldvt;
      LX(gesdd)(&p->job0, &m, &n, a, &ld, rw, a, &ldu, a, &ldvt, &w, &q,
#if LCPLX
                rw,
#endif
                iw, &info, 1);
      int mn = m < n ? m : n, mx = m < n ? n : m;
      p->liwork = 8 * mn;
#if LCPLX
      /* LAPACK's documented bound for rwork (the 'N' case asks for 7 min(m, n) in older
       * releases, 5 in newer ones) */
      int64_t r1 = 5 * (int64_t)mn * mn + 7 * (int64_t)mn;
      int64_t r2 = 2 * (int64_t)mx * mn + 2 * (int64_t)mn * mn + mn;
      p->lrwork = (int)(r1 > r2 ? r1 : r2);
#else
      (void)mx;
#endif
      break;
    }
    case LK_GESVD: {
      int ldu = p->ldu, ldvt = p->ldvt;
      LX(gesvd)(&p->job0, &p->job0, &m, &n, a, &ld, rw, a, &ldu, a, &ldvt, &w, &q,
#if LCPLX
                rw,
#endif
                &info, 1, 1);
#if LCPLX
      p->lrwork = 5 * (m < n ? m : n);
#endif
      break;
    }
    case LK_SYEVD: {
      int lrq = 0;
      LR rq = 0;
      (void)lrq;
      (void)rq;
      L_SYEVD(&p->job0, &p->uplo, &n, a, &ld, rw, &w, &q,
#if LCPLX
              &rq, &q,
#endif
              iw, &q, &info, 1, 1);
      p->liwork = iw[0];
#if LCPLX
      p->lrwork = (int)rq;
#endif
      break;
    }
    case LK_GEHRD:
      LX(gehrd)(&n, &p->ilo, &p->ihi, a, &ld, t, &w, &q, &info);
      break;
    case LK_GEEV:
    case LK_GEEV_C:
#if LCPLX
      LX(geev)(&p->job0, &p->job1, &n, a, &ld, t, a, &ld, a, &ld, &w, &q, rw, &info, 1, 1);
      p->lrwork = 2 * n;
#else
      LX(geev)(&p->job0, &p->job1, &n, a, &ld, t, t, a, &ld, a, &ld, &w, &q, &info, 1, 1);
      p->lxwork = 2 * (int64_t)n * n; /* LAPACK's packed real eigenvectors, unpacked after */
#endif
      break;
    case LK_GEES:
    case LK_GEES_C: {
      int sdim = 0;
#if LCPLX
      LX(gees)(&p->job0, &p->job1, NULL, &n, a, &ld, &sdim, t, a, &ld, &w, &q, rw, NULL, &info, 1,
               1);
      p->lrwork = n;
#else
      LX(gees)(&p->job0, &p->job1, NULL, &n, a, &ld, &sdim, t, t, a, &ld, &w, &q, NULL, &info, 1,
               1);
#endif
      break;
    }
    case LK_SYTRD:
      L_SYTRD(&p->uplo, &n, a, &ld, rw, rw, t, &w, &q, &info, 1);
      break;
    default:
      return true;
  }
  if (info != 0) return false;
#if LCPLX
  double wl = creal(w);
#else
  double wl = w;
#endif
  p->lwork = (int)wl > 1 ? (int)wl : 1;
  if (p->liwork < 1) p->liwork = 1;
  if (p->lrwork < 1) p->lrwork = 1;
  return true;
}

/* One batch element: a[i] for the operands, a[nin + j] for the results (an aliased result is its
 * operand's buffer), w the workspace (lwork elements, lrwork reals, liwork ints). */
static bool LS(lk_finite)(const LT *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) {
#if LCPLX
    if (!isfinite(creal(x[i])) || !isfinite(cimag(x[i]))) return false;
#else
    if (!isfinite(x[i])) return false;
#endif
  }
  return true;
}

#if !LCPLX
/* geev's real eigenvectors: a complex pair (wi[j] > 0) is stored as columns j (real part) and
 * j + 1 (imaginary part) for eigenvalues j and j + 1 = conj(j). */
static void LS(lk_unpack)(int n, const LT *wi, const LT *v, LR _Complex *out) {
  for (int j = 0; j < n; j++) {
    const LT *re = v + (size_t)j * n;
    if (wi[j] == 0 || j + 1 >= n) {
      for (int i = 0; i < n; i++) out[(size_t)j * n + i] = re[i];
      continue;
    }
    const LT *im = re + n;
    for (int i = 0; i < n; i++) {
      out[(size_t)j * n + i] = re[i] + im[i] * (LR _Complex)I;
      out[(size_t)(j + 1) * n + i] = re[i] - im[i] * (LR _Complex)I;
    }
    j++;
  }
}
#endif

static void LS(lk_run)(const lk_params *p, char *const *a, char *ws) {
  int m = p->m, n = p->n, k = p->k, ld = p->lda, info = 0;
  LT *w = (LT *)ws;
  LT *xw = w + p->lwork; /* lxwork extra elements */
  LR *rw = (LR *)(xw + p->lxwork);
  int *iw = (int *)((char *)rw + (size_t)p->lrwork * sizeof(LR));
  (void)xw;
  (void)rw;
  (void)k;
  int32_t *info_out = NULL;
  switch (p->kind) {
    case LK_TRSM: {
      const LT one = 1;
      int lda = p->ldu, ldb = p->lda;
      LX(trsm)(&p->side, &p->uplo, &p->job0, &p->diag, &m, &n, &one, (const LT *)a[0], &lda,
               (LT *)a[1], &ldb, 1, 1, 1, 1);
      return;
    }
    case LK_GETRF:
      LX(getrf)(&m, &n, (LT *)a[0], &ld, (int *)a[2], &info);
      info_out = (int32_t *)a[3];
      break;
    case LK_GEQRF:
      LX(geqrf)(&m, &n, (LT *)a[0], &ld, (LT *)a[2], w, &p->lwork, &info);
      return;
    case LK_GEQP3:
      LX(geqp3)(&m, &n, (LT *)a[0], &ld, (int *)a[1], (LT *)a[4], w, &p->lwork,
#if LCPLX
                rw,
#endif
                &info);
      return;
    case LK_ORGQR:
      L_ORGQR(&m, &n, &k, (LT *)a[0], &ld, (const LT *)a[1], w, &p->lwork, &info);
      return;
    case LK_POTRF:
      LX(potrf)(&p->uplo, &n, (LT *)a[0], &ld, &info, 1);
      info_out = (int32_t *)a[2];
      break;
    case LK_GESDD: {
      int ldu = p->ldu, ldvt = p->ldvt;
      LX(gesdd)(&p->job0, &m, &n, (LT *)a[0], &ld, (LR *)a[2], (LT *)a[3], &ldu, (LT *)a[4],
                &ldvt, w, &p->lwork,
#if LCPLX
                rw,
#endif
                iw, &info, 1);
      info_out = (int32_t *)a[5];
      break;
    }
    case LK_GESVD: {
      int ldu = p->ldu, ldvt = p->ldvt;
      LX(gesvd)(&p->job0, &p->job0, &m, &n, (LT *)a[0], &ld, (LR *)a[2], (LT *)a[3], &ldu,
                (LT *)a[4], &ldvt, w, &p->lwork,
#if LCPLX
                rw,
#endif
                &info, 1, 1);
      info_out = (int32_t *)a[5];
      break;
    }
    case LK_SYEVD:
      L_SYEVD(&p->job0, &p->uplo, &n, (LT *)a[0], &ld, (LR *)a[2], w, &p->lwork,
#if LCPLX
              rw, &p->lrwork,
#endif
              iw, &p->liwork, &info, 1, 1);
      info_out = (int32_t *)a[3];
      break;
    case LK_GEHRD:
      LX(gehrd)(&n, &p->ilo, &p->ihi, (LT *)a[0], &ld, (LT *)a[2], w, &p->lwork, &info);
      info_out = (int32_t *)a[3];
      break;
    case LK_SYTRD:
      L_SYTRD(&p->uplo, &n, (LT *)a[0], &ld, (LR *)a[2], (LR *)a[3], (LT *)a[4], w, &p->lwork,
              &info, 1);
      info_out = (int32_t *)a[5];
      break;
    case LK_GEEV:
    case LK_GEEV_C:
      if (!LS(lk_finite)((const LT *)a[0], (int64_t)n * n)) {
        info = -4; /* as jaxlib: a matrix with a NaN or infinity is not decomposed */
        info_out = (int32_t *)a[p->nin + p->nout - 1];
        break;
      }
#if LCPLX
      LX(geev)(&p->job0, &p->job1, &n, (LT *)a[0], &ld, (LT *)a[1], (LT *)a[2], &ld, (LT *)a[3],
               &ld, w, &p->lwork, rw, &info, 1, 1);
      info_out = (int32_t *)a[4];
#else
      LX(geev)(&p->job0, &p->job1, &n, (LT *)a[0], &ld, (LT *)a[1], (LT *)a[2], xw, &ld,
               xw + (size_t)n * n, &ld, w, &p->lwork, &info, 1, 1);
      info_out = (int32_t *)a[5];
      if (info == 0) {
        if (p->job0 == 'V') LS(lk_unpack)(n, (LT *)a[2], xw, (LR _Complex *)a[3]);
        if (p->job1 == 'V') LS(lk_unpack)(n, (LT *)a[2], xw + (size_t)n * n, (LR _Complex *)a[4]);
      }
#endif
      break;
    case LK_GEES:
    case LK_GEES_C: {
      int sdim = 0;
#if LCPLX
      LX(gees)(&p->job0, &p->job1, NULL, &n, (LT *)a[0], &ld, &sdim, (LT *)a[3], (LT *)a[2], &ld,
               w, &p->lwork, rw, NULL, &info, 1, 1);
      *(int32_t *)a[4] = sdim;
      info_out = (int32_t *)a[5];
#else
      LX(gees)(&p->job0, &p->job1, NULL, &n, (LT *)a[0], &ld, &sdim, (LT *)a[3], (LT *)a[4],
               (LT *)a[2], &ld, w, &p->lwork, NULL, &info, 1, 1);
      *(int32_t *)a[5] = sdim;
      info_out = (int32_t *)a[6];
#endif
      break;
    }
    case LK_GTSV: {
      /* jaxlib's convention: dl[0] and du[n-1] are not part of the matrix */
      LT *dl = (LT *)a[0], *d = (LT *)a[1], *du = (LT *)a[2];
      int nrhs = p->k, ldb = p->lda;
      LX(gtsv)(&n, &nrhs, dl + (n > 0), d, du, (LT *)a[3], &ldb, &info);
      info_out = (int32_t *)a[8];
      break;
    }
    default:
      return;
  }
  if (info_out) *info_out = info;
}

#undef LT
#undef LR
#undef LCPLX
#undef LX
#undef LS
#undef L_ORGQR
#undef L_SYEVD
#undef L_SYTRD
#undef LP
#undef LK_CAT3
#undef LK_CAT3_
