/* cjrt: the LAPACK calls of k_lapack.c for one element type (included once per type, private).
 *
 * Before inclusion: LT (the element type), LR (its real type), LCPLX (0/1), LP (LAPACK's
 * letter for the type: s, d, c, z). From those: LX(name) (the Fortran routine of that type:
 * sgetrf_ ...), LS(name) (a name for this type's copy), LK_CX(...) (its arguments for the
 * complex types only). The end of this file undefines them all.
 *
 * Every routine is called through this type's table of entry points, LS(lk_fns), whose types
 * are those of SciPy's scipy.linalg.cython_lapack / cython_blas (the routines' Fortran arguments,
 * all by pointer, with no hidden character lengths): k_lapack.c fills it with the linked LAPACK
 * (LS(lk_builtin), below) or with what cjrt_lapack_set_routine installed. The linked routines
 * are Fortran's, whose character arguments take a hidden length (gfortran: size_t) at the end of
 * the list: the builtin entries for routines with character arguments are wrappers that pass 1.
 *
 * Every buffer is one batch element, column-major (as jaxlib's kernels see it).
 */

#define LK_CAT3_(a, b, c) a##b##c
#define LK_CAT3(a, b, c) LK_CAT3_(a, b, c)
#define LX(name) LK_CAT3(LP, name, _)
#define LS(name) LK_CAT3(name, _, LP)
#if LCPLX
#define LK_CX(...) __VA_ARGS__
typedef int (*LS(lk_select))(LT *); /* gees's (unused) eigenvalue selection */
#else
#define LK_CX(...)
typedef int (*LS(lk_select))(LT *, LT *);
#endif

/* This type's entry points (members named by the real routines: orgqr is ungqr, syevd heevd,
 * sytrd hetrd for complex types). */
typedef struct LS(lk_fns) {
  void (*trsm)(char *, char *, char *, char *, int *, int *, LT *, LT *, int *, LT *, int *);
  void (*getrf)(int *, int *, LT *, int *, int *, int *);
  void (*geqrf)(int *, int *, LT *, int *, LT *, LT *, int *, int *);
  void (*geqp3)(int *, int *, LT *, int *, int *, LT *, LT *, int *, LK_CX(LR *,) int *);
  void (*orgqr)(int *, int *, int *, LT *, int *, LT *, LT *, int *, int *);
  void (*potrf)(char *, int *, LT *, int *, int *);
  void (*gesdd)(char *, int *, int *, LT *, int *, LR *, LT *, int *, LT *, int *, LT *, int *,
                LK_CX(LR *,) int *, int *);
  void (*gesvd)(char *, char *, int *, int *, LT *, int *, LR *, LT *, int *, LT *, int *, LT *,
                int *, LK_CX(LR *,) int *);
  void (*syevd)(char *, char *, int *, LT *, int *, LR *, LT *, int *, LK_CX(LR *, int *,) int *,
                int *, int *);
  void (*gehrd)(int *, int *, int *, LT *, int *, LT *, LT *, int *, int *);
  void (*sytrd)(char *, int *, LT *, int *, LR *, LR *, LT *, LT *, int *, int *);
#if LCPLX
  void (*geev)(char *, char *, int *, LT *, int *, LT *, LT *, int *, LT *, int *, LT *, int *,
               LR *, int *);
  void (*gees)(char *, char *, LS(lk_select), int *, LT *, int *, int *, LT *, LT *, int *, LT *,
               int *, LR *, int *, int *);
#else
  void (*geev)(char *, char *, int *, LT *, int *, LT *, LT *, LT *, int *, LT *, int *, LT *,
               int *, int *);
  void (*gees)(char *, char *, LS(lk_select), int *, LT *, int *, int *, LT *, LT *, LT *, int *,
               LT *, int *, int *, int *);
#endif
  void (*gtsv)(int *, int *, LT *, LT *, LT *, LT *, int *, int *);
} LS(lk_fns);

/* the linked LAPACK's routines (Fortran symbols) */
void LX(trsm)(char *, char *, char *, char *, int *, int *, LT *, LT *, int *, LT *, int *, size_t,
              size_t, size_t, size_t);
void LX(getrf)(int *, int *, LT *, int *, int *, int *);
void LX(geqrf)(int *, int *, LT *, int *, LT *, LT *, int *, int *);
void LX(geqp3)(int *, int *, LT *, int *, int *, LT *, LT *, int *, LK_CX(LR *,) int *);
#if LCPLX
void LX(ungqr)(int *, int *, int *, LT *, int *, LT *, LT *, int *, int *);
void LX(heevd)(char *, char *, int *, LT *, int *, LR *, LT *, int *, LR *, int *, int *, int *,
               int *, size_t, size_t);
void LX(hetrd)(char *, int *, LT *, int *, LR *, LR *, LT *, LT *, int *, int *, size_t);
void LX(geev)(char *, char *, int *, LT *, int *, LT *, LT *, int *, LT *, int *, LT *, int *,
              LR *, int *, size_t, size_t);
void LX(gees)(char *, char *, LS(lk_select), int *, LT *, int *, int *, LT *, LT *, int *, LT *,
              int *, LR *, int *, int *, size_t, size_t);
#else
void LX(orgqr)(int *, int *, int *, LT *, int *, LT *, LT *, int *, int *);
void LX(syevd)(char *, char *, int *, LT *, int *, LR *, LT *, int *, int *, int *, int *, size_t,
               size_t);
void LX(sytrd)(char *, int *, LT *, int *, LR *, LR *, LT *, LT *, int *, int *, size_t);
void LX(geev)(char *, char *, int *, LT *, int *, LT *, LT *, LT *, int *, LT *, int *, LT *, int *,
              int *, size_t, size_t);
void LX(gees)(char *, char *, LS(lk_select), int *, LT *, int *, int *, LT *, LT *, LT *, int *,
              LT *, int *, int *, int *, size_t, size_t);
#endif
void LX(potrf)(char *, int *, LT *, int *, int *, size_t);
void LX(gesdd)(char *, int *, int *, LT *, int *, LR *, LT *, int *, LT *, int *, LT *, int *,
               LK_CX(LR *,) int *, int *, size_t);
void LX(gesvd)(char *, char *, int *, int *, LT *, int *, LR *, LT *, int *, LT *, int *, LT *,
               int *, LK_CX(LR *,) int *, size_t, size_t);
void LX(gehrd)(int *, int *, int *, LT *, int *, LT *, LT *, int *, int *);
void LX(gtsv)(int *, int *, LT *, LT *, LT *, LT *, int *, int *);

/* The builtin entries of the routines with character arguments: the Fortran routine with each
 * character's hidden length (1). */
static void LS(lk_b_trsm)(char *side, char *uplo, char *tr, char *diag, int *m, int *n, LT *alpha,
                          LT *a, int *lda, LT *b, int *ldb) {
  LX(trsm)(side, uplo, tr, diag, m, n, alpha, a, lda, b, ldb, 1, 1, 1, 1);
}
static void LS(lk_b_potrf)(char *uplo, int *n, LT *a, int *lda, int *info) {
  LX(potrf)(uplo, n, a, lda, info, 1);
}
static void LS(lk_b_gesdd)(char *job, int *m, int *n, LT *a, int *lda, LR *s, LT *u, int *ldu,
                           LT *vt, int *ldvt, LT *w, int *lw, LK_CX(LR *rw, ) int *iw, int *info) {
  LX(gesdd)(job, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, LK_CX(rw, ) iw, info, 1);
}
static void LS(lk_b_gesvd)(char *ju, char *jv, int *m, int *n, LT *a, int *lda, LR *s, LT *u,
                           int *ldu, LT *vt, int *ldvt, LT *w, int *lw, LK_CX(LR *rw, ) int *info) {
  LX(gesvd)(ju, jv, m, n, a, lda, s, u, ldu, vt, ldvt, w, lw, LK_CX(rw, ) info, 1, 1);
}
#if LCPLX
#define LK_RX(...)
#define L_SYEVD LX(heevd)
#define L_SYTRD LX(hetrd)
#define LK_B_ORGQR LX(ungqr)
#else
#define LK_RX(...) __VA_ARGS__
#define L_SYEVD LX(syevd)
#define L_SYTRD LX(sytrd)
#define LK_B_ORGQR LX(orgqr)
#endif
static void LS(lk_b_syevd)(char *jobz, char *uplo, int *n, LT *a, int *lda, LR *ev, LT *w, int *lw,
                           LK_CX(LR *rw, int *lrw, ) int *iw, int *liw, int *info) {
  L_SYEVD(jobz, uplo, n, a, lda, ev, w, lw, LK_CX(rw, lrw, ) iw, liw, info, 1, 1);
}
static void LS(lk_b_sytrd)(char *uplo, int *n, LT *a, int *lda, LR *d, LR *e, LT *tau, LT *w,
                           int *lw, int *info) {
  L_SYTRD(uplo, n, a, lda, d, e, tau, w, lw, info, 1);
}
/* (complex: eigenvalues w1; real: real parts w1, imaginary parts w2) */
static void LS(lk_b_geev)(char *jl, char *jr, int *n, LT *a, int *lda, LT *w1, LK_RX(LT *w2, )
                          LT *vl, int *ldvl, LT *vr, int *ldvr, LT *w, int *lw,
                          LK_CX(LR *rw, ) int *info) {
  LX(geev)(jl, jr, n, a, lda, w1, LK_RX(w2, ) vl, ldvl, vr, ldvr, w, lw, LK_CX(rw, ) info, 1, 1);
}
static void LS(lk_b_gees)(char *jobvs, char *sort, LS(lk_select) sel, int *n, LT *a, int *lda,
                          int *sdim, LT *w1, LK_RX(LT *w2, ) LT *vs, int *ldvs, LT *w, int *lw,
                          LK_CX(LR *rw, ) int *bw, int *info) {
  LX(gees)(jobvs, sort, sel, n, a, lda, sdim, w1, LK_RX(w2, ) vs, ldvs, w, lw, LK_CX(rw, ) bw, info,
           1, 1);
}
#undef L_SYEVD
#undef L_SYTRD
#undef LK_RX

static const LS(lk_fns) LS(lk_builtin) = {
    .trsm = LS(lk_b_trsm),   .getrf = LX(getrf),      .geqrf = LX(geqrf),
    .geqp3 = LX(geqp3),      .orgqr = LK_B_ORGQR,     .potrf = LS(lk_b_potrf),
    .gesdd = LS(lk_b_gesdd), .gesvd = LS(lk_b_gesvd), .syevd = LS(lk_b_syevd),
    .gehrd = LX(gehrd),      .sytrd = LS(lk_b_sytrd), .geev = LS(lk_b_geev),
    .gees = LS(lk_b_gees),   .gtsv = LX(gtsv),
};
#undef LK_B_ORGQR

/* Each entry point's place in LS(lk_fns), in the order of LK_FN_LIST (k_lapack.c). */
#define LK_OFFSET(member, rname, cname) offsetof(LS(lk_fns), member),
static const size_t LS(lk_offsets)[] = {LK_FN_LIST(LK_OFFSET)};
#undef LK_OFFSET

/* op(M) X = B (left) or X op(M) = B in place, M (m x m) and X (rows x cols) row-major, trans
 * 'N', 'T' or 'C'. Seen column-major they are M^T and X^T, so this is BLAS's solve on the other
 * side with the other triangle and the same op. */
static void LS(lk_trsm_rm)(const LS(lk_fns) *f, bool left, bool lower, char trans, bool unit,
                           int m, const void *M, void *X, int rows, int cols) {
  LT one = 1;
  char side = left ? 'R' : 'L', uplo = lower ? 'U' : 'L', diag = unit ? 'U' : 'N';
  int lda = m > 1 ? m : 1, ldb = cols > 1 ? cols : 1;
  f->trsm(&side, &uplo, &trans, &diag, &cols, &rows, &one, (LT *)M, &lda, (LT *)X, &ldb);
}

/* trsm straight on the buffers (k_lapack.c's direct path): `a` the triangular matrix, `x` the
 * right-hand sides, solved in place. When the call sees them column-major (`rm`), our row-major
 * buffers hold their transposes, and the solve is BLAS's on the other side with the other
 * triangle (lk_trsm_rm; with this OpenBLAS also 2x faster than the left-side solve at 128). */
static void LS(lk_trsm_direct)(const lk_params *p, bool rm, const char *a, char *x) {
  const LS(lk_fns) *f = p->fns;
  LT one = 1;
  int m = p->m, n = p->n;
  if (rm) {
    LS(lk_trsm_rm)(f, p->side == 'L', p->uplo == 'L', p->job0, p->diag == 'U', p->ldu, a, x, m, n);
    return;
  }
  int lda = p->ldu, ldb = p->lda;
  char side = p->side, uplo = p->uplo, tr = p->job0, diag = p->diag;
  f->trsm(&side, &uplo, &tr, &diag, &m, &n, &one, (LT *)a, &lda, (LT *)x, &ldb);
}

/* k_lapack.c's potrf on the pool (lk_pp_potrf), lower, column-major: potrf of a diagonal block
 * (L11 L11^H), and the panel below it, X L11^H = X (r x kb) */
static void LS(lk_potrf_blk)(const void *fns, int n, void *a, int ld, int *info) {
  const LS(lk_fns) *f = fns;
  char uplo = 'L';
  f->potrf(&uplo, &n, (LT *)a, &ld, info);
}
static void LS(lk_panel_blk)(const void *fns, int r, int kb, const void *l11, void *x, int ld) {
  const LS(lk_fns) *f = fns;
  LT one = 1;
  char side = 'R', uplo = 'L', tr = LCPLX ? 'C' : 'T', diag = 'N';
  f->trsm(&side, &uplo, &tr, &diag, &r, &kb, &one, (LT *)l11, &ld, (LT *)x, &ld);
}

/* Workspace sizes from LAPACK's own queries (lwork = -1), before any program runs, or where
 * jaxlib's kernels size them by formula instead (syevd / heevd), that formula: a routine may
 * take another path with another workspace. Returns false when a query fails. */
static bool LS(lk_query)(lk_params *p) {
  const LS(lk_fns) *f = p->fns;
  int m = p->m, n = p->n, k = p->k, ld = p->lda, info = 0, q = -1;
  char j0 = p->job0, j1 = p->job1, uplo = p->uplo;
  p->lxwork = 0;
  LT w = 0, a[1] = {0}, t[1] = {0};
  LR rw[1] = {0};
  int iw[1] = {0};
  (void)rw;
  p->lwork = p->liwork = p->lrwork = 0;
  switch (p->kind) {
    case LK_GEQRF:
      f->geqrf(&m, &n, a, &ld, t, &w, &q, &info);
      break;
    case LK_GEQP3:
      f->geqp3(&m, &n, a, &ld, iw, t, &w, &q, LK_CX(rw, ) & info);
#if LCPLX
      p->lrwork = 2 * n;
#endif
      break;
    case LK_ORGQR:
      f->orgqr(&m, &n, &k, a, &ld, t, &w, &q, &info);
      break;
    case LK_GESDD: {
      int ldu = p->ldu, ldvt = p->ldvt;
      f->gesdd(&j0, &m, &n, a, &ld, rw, a, &ldu, a, &ldvt, &w, &q, LK_CX(rw, ) iw, &info);
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
      f->gesvd(&j0, &j0, &m, &n, a, &ld, rw, a, &ldu, a, &ldvt, &w, &q, LK_CX(rw, ) & info);
#if LCPLX
      p->lrwork = 5 * (m < n ? m : n);
#endif
      break;
    }
    case LK_SYEVD: { /* jaxlib's sizes (at least LAPACK's minimums) */
      int64_t N = n, V = p->job0 == 'V';
      p->liwork = (int)(V ? 3 + 5 * N : 1);
#if LCPLX
      p->lwork = (int)(V ? 2 * N + N * N : N + 1);
      p->lrwork = (int)(V ? 1 + 5 * N + 2 * N * N : (N > 1 ? N : 1));
#else
      p->lwork = (int)(V ? 1 + 6 * N + 2 * N * N : 2 * N + 1);
#endif
      return true;
    }
    case LK_GEHRD:
      f->gehrd(&n, &p->ilo, &p->ihi, a, &ld, t, &w, &q, &info);
      break;
    case LK_GEEV:
    case LK_GEEV_C:
#if LCPLX
      f->geev(&j0, &j1, &n, a, &ld, t, a, &ld, a, &ld, &w, &q, rw, &info);
      p->lrwork = 2 * n;
#else
      f->geev(&j0, &j1, &n, a, &ld, t, t, a, &ld, a, &ld, &w, &q, &info);
      p->lxwork = 2 * (int64_t)n * n; /* LAPACK's packed real eigenvectors, unpacked after */
#endif
      break;
    case LK_GEES:
    case LK_GEES_C: {
      int sdim = 0;
#if LCPLX
      f->gees(&j0, &j1, NULL, &n, a, &ld, &sdim, t, a, &ld, &w, &q, rw, NULL, &info);
      p->lrwork = n;
#else
      f->gees(&j0, &j1, NULL, &n, a, &ld, &sdim, t, t, a, &ld, &w, &q, NULL, &info);
#endif
      break;
    }
    case LK_SYTRD:
      f->sytrd(&uplo, &n, a, &ld, rw, rw, t, &w, &q, &info);
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

/* geev and gees (lk_run's eigenvalue routines); *info_out: where the info result goes */
static void LS(lk_run_eig)(const lk_params *p, char *const *a, LT *w, LR *rw, int *info,
                           int32_t **info_out) {
  const LS(lk_fns) *f = p->fns;
  int n = p->n, ld = p->lda, lw = p->lwork;
  char j0 = p->job0, j1 = p->job1;
  LT *xw = w + p->lwork; /* lxwork extra elements */
  (void)xw;
  (void)rw;
  if (p->kind == LK_GEEV || p->kind == LK_GEEV_C) {
    *info_out = (int32_t *)a[p->nin + p->nout - 1];
    if (!LS(lk_finite)((const LT *)a[0], (int64_t)n * n)) {
      *info = -4; /* as jaxlib: a matrix with a NaN or infinity is not decomposed */
      return;
    }
#if LCPLX
    f->geev(&j0, &j1, &n, (LT *)a[0], &ld, (LT *)a[1], (LT *)a[2], &ld, (LT *)a[3], &ld, w, &lw,
            rw, info);
#else
    f->geev(&j0, &j1, &n, (LT *)a[0], &ld, (LT *)a[1], (LT *)a[2], xw, &ld, xw + (size_t)n * n,
            &ld, w, &lw, info);
    if (*info == 0) {
      if (p->job0 == 'V') LS(lk_unpack)(n, (LT *)a[2], xw, (LR _Complex *)a[3]);
      if (p->job1 == 'V') LS(lk_unpack)(n, (LT *)a[2], xw + (size_t)n * n, (LR _Complex *)a[4]);
    }
#endif
    return;
  }
  int sdim = 0;
#if LCPLX
  f->gees(&j0, &j1, NULL, &n, (LT *)a[0], &ld, &sdim, (LT *)a[3], (LT *)a[2], &ld, w, &lw, rw,
          NULL, info);
  *(int32_t *)a[4] = sdim;
  *info_out = (int32_t *)a[5];
#else
  f->gees(&j0, &j1, NULL, &n, (LT *)a[0], &ld, &sdim, (LT *)a[3], (LT *)a[4], (LT *)a[2], &ld, w,
          &lw, NULL, info);
  *(int32_t *)a[5] = sdim;
  *info_out = (int32_t *)a[6];
#endif
}

static void LS(lk_run)(const lk_params *p, char *const *a, char *ws) {
  const LS(lk_fns) *f = p->fns;
  int m = p->m, n = p->n, k = p->k, ld = p->lda, info = 0;
  int lw = p->lwork, lrw = p->lrwork, liw = p->liwork;
  char j0 = p->job0, uplo = p->uplo;
  LT *w = (LT *)ws;
  LT *xw = w + p->lwork; /* lxwork extra elements */
  LR *rw = (LR *)(xw + p->lxwork);
  int *iw = (int *)((char *)rw + (size_t)p->lrwork * sizeof(LR));
  (void)rw;
  (void)lrw;
  int32_t *info_out = NULL;
  switch (p->kind) {
    case LK_TRSM:
      LS(lk_trsm_direct)(p, false, a[0], a[1]);
      return;
    case LK_GETRF:
      f->getrf(&m, &n, (LT *)a[0], &ld, (int *)a[2], &info);
      info_out = (int32_t *)a[3];
      break;
    case LK_GEQRF:
      f->geqrf(&m, &n, (LT *)a[0], &ld, (LT *)a[2], w, &lw, &info);
      return;
    case LK_GEQP3:
      f->geqp3(&m, &n, (LT *)a[0], &ld, (int *)a[1], (LT *)a[4], w, &lw, LK_CX(rw, ) & info);
      return;
    case LK_ORGQR:
      f->orgqr(&m, &n, &k, (LT *)a[0], &ld, (LT *)a[1], w, &lw, &info);
      return;
    case LK_POTRF:
      f->potrf(&uplo, &n, (LT *)a[0], &ld, &info);
      info_out = (int32_t *)a[2];
      break;
    case LK_GESDD: {
      int ldu = p->ldu, ldvt = p->ldvt;
      f->gesdd(&j0, &m, &n, (LT *)a[0], &ld, (LR *)a[2], (LT *)a[3], &ldu, (LT *)a[4], &ldvt, w,
               &lw, LK_CX(rw, ) iw, &info);
      info_out = (int32_t *)a[5];
      break;
    }
    case LK_GESVD: {
      int ldu = p->ldu, ldvt = p->ldvt;
      f->gesvd(&j0, &j0, &m, &n, (LT *)a[0], &ld, (LR *)a[2], (LT *)a[3], &ldu, (LT *)a[4], &ldvt,
               w, &lw, LK_CX(rw, ) & info);
      info_out = (int32_t *)a[5];
      break;
    }
    case LK_SYEVD:
      f->syevd(&j0, &uplo, &n, (LT *)a[0], &ld, (LR *)a[2], w, &lw, LK_CX(rw, &lrw, ) iw, &liw,
               &info);
      info_out = (int32_t *)a[3];
      break;
    case LK_GEHRD: {
      int ilo = p->ilo, ihi = p->ihi;
      f->gehrd(&n, &ilo, &ihi, (LT *)a[0], &ld, (LT *)a[2], w, &lw, &info);
      info_out = (int32_t *)a[3];
      break;
    }
    case LK_SYTRD:
      f->sytrd(&uplo, &n, (LT *)a[0], &ld, (LR *)a[2], (LR *)a[3], (LT *)a[4], w, &lw, &info);
      info_out = (int32_t *)a[5];
      break;
    case LK_GEEV:
    case LK_GEEV_C:
    case LK_GEES:
    case LK_GEES_C:
      LS(lk_run_eig)(p, a, w, rw, &info, &info_out);
      break;
    case LK_GTSV: {
      /* jaxlib's convention: dl[0] and du[n-1] are not part of the matrix */
      LT *dl = (LT *)a[0], *d = (LT *)a[1], *du = (LT *)a[2];
      int nrhs = p->k, ldb = p->lda;
      f->gtsv(&n, &nrhs, dl + (n > 0), d, du, (LT *)a[3], &ldb, &info);
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
#undef LK_CX
#undef LP
#undef LK_CAT3
#undef LK_CAT3_
