/* cjrt: einsum and unary_einsum (deprecated ops; JAX lowers jnp.einsum to dot_general itself).
 *
 * The config ("ab,bc->ac", "ab->a"; labels are letters; "..." stands for the dimensions the
 * letters leave out, aligned from the right across operands, size 1 broadcasting) is parsed at
 * compile time into label classes: batch (in both operands and the result), lhs-free and
 * rhs-free (in one operand and the result), contracted (in both, not the result) and summed (in
 * one operand only). A label repeated within an operand takes its diagonal. The step then runs,
 * in a planned scratch buffer:
 *   1. each operand gathered (one strided copy: transposes, diagonals and broadcasts are just
 *      strides) into [batch, free, contracted, summed] order and converted to the compute type
 *      (f32 for float results up to 32 bits, f64, complex, or i64 for integers and booleans, which
 *      wraps like the result type's own arithmetic), the summed labels added up;
 *   2. one GEMM per batch element (the packed kernels of k_linalg_kern.c; a plain loop for i64);
 *   3. the [batch, lhs-free, rhs-free] product converted to the result type and copied into the
 *      result's label order.
 * unary_einsum is step 1 alone, gathered straight into the result's order. */
#include <string.h>

#include "cpu/k_linalg.h"
#include "cpu/lower.h"

enum { EIN_MAXL = 2 * CJ_MAX_RANK };

typedef struct ein_operand {
  cj_strided gather;   /* source -> [canonical dims..., summed dims...] in the source type */
  cj_ew_fn cvt;        /* source type -> compute type */
  cj_ew_aux aux;
  int64_t count;       /* canonical elements (without the summed labels) */
  int64_t nsum;        /* product of the summed labels' sizes */
  int64_t raw_off, cvt_off, red_off; /* scratch offsets */
  int src_eb;
} ein_operand;

typedef struct ein_params {
  bool unary;
  int ct;              /* LA_* or -1 for i64 */
  int ce;              /* compute element bytes */
  ein_operand op[2];
  int64_t B, M, N, K;
  cj_ew_fn cvt_out;    /* compute -> result type */
  cj_ew_aux aux_out;
  int64_t prod_off;    /* [B, M, N] in the compute type */
  int64_t cout_off;    /* [B, M, N] in the result type (when a permutation follows) */
  bool permute;
  cj_strided scatter;  /* [B, M, N] -> result order */
  const la_table *tab;
} ein_params;

/* ======================================================================== execution */

/* d[i] = the sum of s[i * nsum + r] over r, in order, for elements of T (complex: re/im pairs of T) */
#define SUM_REAL(T)                                                   \
  do {                                                                \
    T *d = dst;                                                       \
    const T *s = src;                                                 \
    for (int64_t i = 0; i < count; i++) {                             \
      T acc = 0;                                                      \
      for (int64_t r = 0; r < nsum; r++) acc += s[i * nsum + r];      \
      d[i] = acc;                                                     \
    }                                                                 \
  } while (0)
#define SUM_CPLX(T)                                                                                   \
  do {                                                                                                \
    T *d = dst;                                                                                       \
    const T *s = src;                                                                                 \
    for (int64_t i = 0; i < count; i++) {                                                             \
      T re = 0, im = 0;                                                                               \
      for (int64_t r = 0; r < nsum; r++) re += s[2 * (i * nsum + r)], im += s[2 * (i * nsum + r) + 1]; \
      d[2 * i] = re;                                                                                  \
      d[2 * i + 1] = im;                                                                              \
    }                                                                                                 \
  } while (0)
static void sum_inner(int ct, void *dst, const void *src, int64_t count, int64_t nsum) {
  if (nsum == 1) {
    if (dst != src) memmove(dst, src, (size_t)count * (size_t)(ct < 0 ? 8 : la_elem_bytes(ct)));
    return;
  }
  switch (ct) {
    case LA_F32: SUM_REAL(float); break;
    case LA_F64: SUM_REAL(double); break;
    case LA_C64: SUM_CPLX(float); break;
    case LA_C128: SUM_CPLX(double); break;
    default: SUM_REAL(uint64_t);
  }
#undef SUM_REAL
#undef SUM_CPLX
}

/* source operand -> canonical compute-type array at scratch + red_off */
static void prepare(cj_exec_ctx *ctx, const ein_params *p, const ein_operand *o, const char *src,
                    char *ws) {
  cj_strided_run_par(ctx, &o->gather, ws + o->raw_off, src);
  int64_t n = o->count * o->nsum;
  o->cvt(ws + o->cvt_off, ws + o->raw_off, NULL, NULL, n, &o->aux);
  sum_inner(p->ct, ws + o->red_off, ws + o->cvt_off, o->count, o->nsum);
}

static void gemm_i64(int64_t M, int64_t N, int64_t K, const uint64_t *a, const uint64_t *b,
                     uint64_t *c) {
  for (int64_t i = 0; i < M; i++) {
    uint64_t *ci = c + i * N;
    for (int64_t j = 0; j < N; j++) ci[j] = 0;
    for (int64_t k = 0; k < K; k++) {
      uint64_t aik = a[i * K + k];
      const uint64_t *bk = b + k * N;
      for (int64_t j = 0; j < N; j++) ci[j] += aik * bk[j];
    }
  }
}

typedef struct ein_run {
  const ein_params *p;
  cj_exec_ctx *ctx;
  const char *A, *Bm;
  char *C;
} ein_run;

static void gemm_batch(ein_run *R, int64_t b, void *work) {
  const ein_params *p = R->p;
  size_t ce = (size_t)p->ce;
  const char *a = R->A + (size_t)(b * p->M * p->K) * ce, *bb = R->Bm + (size_t)(b * p->K * p->N) * ce;
  char *c = R->C + (size_t)(b * p->M * p->N) * ce;
  if (p->ct < 0) {
    gemm_i64(p->M, p->N, p->K, (const uint64_t *)a, (const uint64_t *)bb, (uint64_t *)c);
    return;
  }
  la_gemm g;
  memset(&g, 0, sizeof g);
  g.m = p->M, g.n = p->N, g.k = p->K;
  g.a = a, g.sai = p->K, g.sap = 1;
  g.b = bb, g.sbp = p->N, g.sbj = 1;
  g.c = c, g.ldc = p->N;
  g.mode = LA_SET;
  p->tab->gemm[p->ct](&g, work);
}

static void gemm_body(void *vr, int64_t b, int64_t e) {
  ein_run *R = vr;
  cj_tls_area *area = cj_tls_claim(R->ctx);
  if (!area) return;
  for (int64_t i = b; i < e; i++) gemm_batch(R, i, area->mem);
  cj_tls_release(R->ctx, area);
}

static CJ_MUST_USE cj_status k_einsum(cj_exec_ctx *ctx, const cj_step *st) {
  const ein_params *p = st->params;
  char *out = CJ_PTR(ctx, st->out[0]);
  char *ws = CJ_PTR(ctx, st->out[1]);
  prepare(ctx, p, &p->op[0], CJ_PTR(ctx, st->in[0]), ws);
  if (p->unary) {
    p->cvt_out(out, ws + p->op[0].red_off, NULL, NULL, p->op[0].count, &p->aux_out);
    return NULL;
  }
  prepare(ctx, p, &p->op[1], CJ_PTR(ctx, st->in[1]), ws);
  ein_run R = {p, ctx, ws + p->op[0].red_off, ws + p->op[1].red_off, ws + p->prod_off};
  if (p->B > 1 && ctx->pool && cj_pool_size(ctx->pool) > 1 &&
      (double)p->B * (double)p->M * (double)p->N * (double)p->K >= 1e5) {
    cj_pool_parallel_for(ctx->pool, p->B, 1, gemm_body, &R);
  } else if (p->ct >= 0 && p->B == 1 && ctx->pool && cj_pool_size(ctx->pool) > 1) {
    cj_tls_area *area = cj_tls_claim(ctx);
    if (!area) return cj_internal("%s: no per-thread work area", st->what);
    la_env E = {ctx, cj_pool_size(ctx->pool), area->mem};
    la_gemm g;
    memset(&g, 0, sizeof g);
    g.m = p->M, g.n = p->N, g.k = p->K;
    g.a = R.A, g.sai = p->K, g.sap = 1;
    g.b = R.Bm, g.sbp = p->N, g.sbj = 1;
    g.c = R.C, g.ldc = p->N;
    g.mode = LA_SET;
    p->tab->gemm_par[p->ct](&E, &g);
    cj_tls_release(ctx, area);
  } else {
    gemm_body(&R, 0, p->B);
  }
  int64_t n = p->B * p->M * p->N;
  if (!p->permute) {
    p->cvt_out(out, R.C, NULL, NULL, n, &p->aux_out);
    return NULL;
  }
  p->cvt_out(ws + p->cout_off, R.C, NULL, NULL, n, &p->aux_out);
  cj_strided_run_par(ctx, &p->scatter, out, ws + p->cout_off);
  return NULL;
}

/* ======================================================================== lowering */

typedef struct ein_term {
  int n;             /* labels after expanding "..." */
  int lab[CJ_MAX_RANK];
  bool has_ellipsis;
} ein_term;

/* labels: letters are their code (< 128); the i-th ellipsis dimension from the right is 200+i */
static CJ_MUST_USE cj_status parse_term(cj_op *op, const char *s, size_t len, int rank, int *emax, ein_term *t) {
  int letters = 0;
  size_t i = 0;
  t->has_ellipsis = false;
  t->n = 0;
  int pre[CJ_MAX_RANK], npre = 0, post[CJ_MAX_RANK], npost = 0;
  while (i < len) {
    char c = s[i];
    if (c == ' ') {
      i++;
      continue;
    }
    if (c == '.') {
      if (t->has_ellipsis || i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.')
        return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config: a malformed or repeated '...'");
      t->has_ellipsis = true;
      i += 3;
      continue;
    }
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z')))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config: '%c' is not a label (letters and '...')", c);
    if (letters >= CJ_MAX_RANK) return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config: too many labels");
    if (t->has_ellipsis)
      post[npost++] = c;
    else
      pre[npre++] = c;
    letters++;
    i++;
  }
  int e = 0;
  if (rank >= 0) {
    e = rank - letters;
    if (e < 0 || (e > 0 && !t->has_ellipsis))
      return cj_op_error(op, CJ_INVALID_ARGUMENT,
                         "einsum_config: a term has %d labels for an operand of rank %d", letters, rank);
    if (e > *emax) *emax = e;
  } else {
    e = t->has_ellipsis ? *emax : 0; /* the result: every ellipsis dimension */
  }
  if (npre + e + npost > CJ_MAX_RANK) return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config: too many labels");
  for (int k = 0; k < npre; k++) t->lab[t->n++] = pre[k];
  for (int k = 0; k < e; k++) t->lab[t->n++] = 200 + (e - 1 - k);
  for (int k = 0; k < npost; k++) t->lab[t->n++] = post[k];
  return NULL;
}

static int compute_type(cj_dtype out, cj_dtype a, cj_dtype b, bool unary) {
  cj_dtype_kind k = cj_dtype_kindof(out);
  bool wide = out == CJ_F64 || a == CJ_F64 || (!unary && b == CJ_F64) || out == CJ_C128 ||
              a == CJ_C128 || (!unary && b == CJ_C128);
  if (k == CJ_DK_COMPLEX) return wide ? LA_C128 : LA_C64;
  if (k == CJ_DK_FLOAT) return wide ? LA_F64 : LA_F32;
  return -1;
}

typedef struct label_info {
  int lab;
  int64_t size;
  int in_l, in_r, in_o; /* occurrences */
  int64_t sl, sr, so;   /* element strides (summed over repeats); 0 where absent or broadcast */
} label_info;

static label_info *find_label(label_info *L, int *n, int lab) {
  for (int i = 0; i < *n; i++)
    if (L[i].lab == lab) return &L[i];
  if (*n >= EIN_MAXL) return NULL;
  memset(&L[*n], 0, sizeof L[*n]);
  L[*n].lab = lab;
  L[*n].size = -1;
  return &L[(*n)++];
}

/* the gather of one operand: canonical label order `order` (nord), then the summed labels */
static CJ_MUST_USE cj_status setup_operand(cj_op *op, ein_operand *o, const cj_lw_tensor *t, const label_info *labs,
                               int nl, const int *order, int nord, int which, cj_dtype ctype) {
  o->src_eb = cj_dtype_bytes(t->dtype);
  cj_strided *s = &o->gather;
  memset(s, 0, sizeof *s);
  s->esize = o->src_eb;
  int r = 0;
  o->count = 1;
  o->nsum = 1;
  int idx[EIN_MAXL], ni = 0;
  for (int k = 0; k < nord; k++) idx[ni++] = order[k];
  for (int i = 0; i < nl; i++) { /* summed: only in this operand, not in the result */
    const label_info *l = &labs[i];
    bool mine = which == 0 ? l->in_l > 0 : l->in_r > 0;
    bool other = which == 0 ? l->in_r > 0 : l->in_l > 0;
    if (mine && !other && !l->in_o) idx[ni++] = i;
  }
  if (ni > CJ_MAX_RANK)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "einsum: too many dimensions in the gathered operand");
  int64_t dst_strides[CJ_MAX_RANK];
  int64_t dims[CJ_MAX_RANK];
  for (int k = 0; k < ni; k++) dims[k] = labs[idx[k]].size;
  cj_row_strides(ni, dims, dst_strides);
  for (int k = 0; k < ni; k++) {
    const label_info *l = &labs[idx[k]];
    s->dims[r] = l->size;
    s->sstride[r] = (which == 0 ? l->sl : l->sr) * o->src_eb;
    s->dstride[r] = dst_strides[k] * o->src_eb;
    r++;
    if (k < nord)
      o->count *= l->size;
    else
      o->nsum *= l->size;
  }
  s->rank = r;
  cj_strided_simplify(s);
  o->cvt = cj_cvt_lookup(t->dtype, ctype);
  o->aux.src = t->dtype;
  o->aux.dt = ctype;
  if (!o->cvt)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "einsum: no conversion from %s to %s",
                       cj_dtype_get(t->dtype)->id, cj_dtype_get(ctype)->id);
  return NULL;
}

static CJ_MUST_USE cj_status lower_einsum_common(cj_lw *L, cj_op *op, bool unary) {
  const cj_attr *cfg = cj_op_attr(op, "einsum_config");
  const char *s;
  size_t slen;
  if (!cj_attr_get_str(cfg, &s, &slen))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing einsum_config");
  cj_lw_tensor x[2], r;
  int nops = unary ? 1 : 2;
  for (int i = 0; i < nops; i++) CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)i, &x[i]));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  /* split "lhs,rhs->out" */
  const char *arrow = NULL;
  for (size_t i = 0; i + 1 < slen; i++)
    if (s[i] == '-' && s[i + 1] == '>') {
      arrow = s + i;
      break;
    }
  if (!arrow) return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config \"%.*s\" has no '->'", (int)slen, s);
  const char *comma = memchr(s, ',', (size_t)(arrow - s));
  if (unary == (comma != NULL))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config \"%.*s\" must have %s", (int)slen, s,
                       unary ? "one operand term" : "two operand terms");
  ein_term tl, tr, to;
  int emax = 0;
  CJ_RETURN_IF_ERROR(parse_term(op, s, (size_t)((comma ? comma : arrow) - s), x[0].rank, &emax, &tl));
  if (!unary)
    CJ_RETURN_IF_ERROR(parse_term(op, comma + 1, (size_t)(arrow - comma - 1), x[1].rank, &emax, &tr));
  CJ_RETURN_IF_ERROR(parse_term(op, arrow + 2, (size_t)(s + slen - arrow - 2), -1, &emax, &to));
  if (to.n != r.rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config: the result term has %d labels for a result of rank %d",
                       to.n, r.rank);
  /* label table */
  label_info labs[EIN_MAXL];
  int nl = 0;
  const ein_term *terms[3] = {&tl, unary ? NULL : &tr, &to};
  const cj_lw_tensor *tens[3] = {&x[0], unary ? NULL : &x[1], &r};
  for (int w = 0; w < 3; w++) {
    if (!terms[w]) continue;
    int64_t str[CJ_MAX_RANK];
    cj_row_strides(tens[w]->rank, tens[w]->dims, str);
    for (int k = 0; k < terms[w]->n; k++) {
      label_info *l = find_label(labs, &nl, terms[w]->lab[k]);
      if (!l) return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config: too many labels");
      int64_t d = tens[w]->dims[k];
      bool ell = l->lab >= 200;
      if (w == 2) {
        if (l->in_o) return cj_op_error(op, CJ_UNIMPLEMENTED, "einsum_config: a label repeated in the result");
        l->in_o = 1;
        l->so = str[k];
        if (!l->in_l && !l->in_r)
          return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum_config: result label '%c' is in no operand",
                             l->lab < 128 ? l->lab : '.');
        if (d != l->size)
          return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum: result dimension %d has size %lld, its label has %lld",
                             k, (long long)d, (long long)l->size);
        continue;
      }
      if (l->size < 0 || (ell && l->size == 1)) {
        if (l->size == 1 && d != 1) { /* an earlier size-1 ellipsis dimension broadcasts */
          if (l->in_l) l->sl = 0;
          if (l->in_r) l->sr = 0;
        }
        if (l->size < 0 || d != 1) l->size = d;
      } else if (d != l->size) {
        if (!(ell && d == 1))
          return cj_op_error(op, CJ_INVALID_ARGUMENT, "einsum: label '%c' has sizes %lld and %lld",
                             l->lab < 128 ? l->lab : '.', (long long)l->size, (long long)d);
        if (w == 0) l->in_l++;
        else l->in_r++;
        continue; /* broadcast: stride 0 */
      }
      if (w == 0) {
        l->in_l++;
        l->sl += str[k];
      } else {
        l->in_r++;
        l->sr += str[k];
      }
    }
  }
  ein_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->unary = unary;
  p->ct = compute_type(r.dtype, x[0].dtype, unary ? x[0].dtype : x[1].dtype, unary);
  p->ce = p->ct < 0 ? 8 : la_elem_bytes(p->ct);
  cj_dtype ctype = p->ct < 0 ? CJ_S64 : (cj_dtype[]){CJ_F32, CJ_F64, CJ_C64, CJ_C128}[p->ct];
  p->tab = cj_la_pick();
  p->cvt_out = cj_cvt_lookup(ctype, r.dtype);
  p->aux_out.src = ctype;
  p->aux_out.dt = r.dtype;
  if (!p->cvt_out)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "einsum: no conversion to %s", cj_dtype_get(r.dtype)->id);
  int64_t off = 0;
  if (unary) {
    int order[CJ_MAX_RANK];
    for (int k = 0; k < to.n; k++)
      for (int i = 0; i < nl; i++)
        if (labs[i].lab == to.lab[k]) order[k] = i;
    ein_operand *o = &p->op[0];
    CJ_RETURN_IF_ERROR(setup_operand(op, o, &x[0], labs, nl, order, to.n, 0, ctype));
    o->raw_off = 0;
    o->cvt_off = (o->count * o->nsum * o->src_eb + 63) & ~63;
    o->red_off = o->cvt_off;
    off = o->cvt_off + o->count * o->nsum * p->ce;
    cj_lw_add_cost(L, (double)(o->count * o->nsum), 0);
  } else {
    int ob[CJ_MAX_RANK], om[CJ_MAX_RANK], on[CJ_MAX_RANK], ok[CJ_MAX_RANK];
    int nb = 0, nm = 0, nn = 0, nk = 0;
    p->B = p->M = p->N = p->K = 1;
    for (int i = 0; i < nl; i++) {
      label_info *l = &labs[i];
      bool a = l->in_l > 0, b = l->in_r > 0;
      if (a && b && l->in_o) ob[nb++] = i, p->B *= l->size;
      else if (a && l->in_o) om[nm++] = i, p->M *= l->size;
      else if (b && l->in_o) on[nn++] = i, p->N *= l->size;
      else if (a && b) ok[nk++] = i, p->K *= l->size;
    }
    int lo[EIN_MAXL], ro[EIN_MAXL], nlo = 0, nro = 0;
    for (int k = 0; k < nb; k++) lo[nlo++] = ob[k], ro[nro++] = ob[k];
    for (int k = 0; k < nm; k++) lo[nlo++] = om[k];
    for (int k = 0; k < nk; k++) lo[nlo++] = ok[k], ro[nro++] = ok[k];
    for (int k = 0; k < nn; k++) ro[nro++] = on[k];
    if (nlo > CJ_MAX_RANK || nro > CJ_MAX_RANK)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "einsum: too many labels");
    CJ_RETURN_IF_ERROR(setup_operand(op, &p->op[0], &x[0], labs, nl, lo, nlo, 0, ctype));
    CJ_RETURN_IF_ERROR(setup_operand(op, &p->op[1], &x[1], labs, nl, ro, nro, 1, ctype));
    for (int w = 0; w < 2; w++) {
      ein_operand *o = &p->op[w];
      int64_t n = o->count * o->nsum;
      o->raw_off = off;
      off = (off + n * o->src_eb + 63) & ~63;
      o->cvt_off = off;
      off = (off + n * p->ce + 63) & ~63;
      if (o->nsum > 1) {
        o->red_off = off;
        off = (off + o->count * p->ce + 63) & ~63;
      } else {
        o->red_off = o->cvt_off;
      }
    }
    int64_t prod = p->B * p->M * p->N * p->ce;
    p->prod_off = off;
    off = (off + prod + 63) & ~63;
    /* [B, M, N] -> the result's order */
    int64_t pd[CJ_MAX_RANK];
    int np = 0;
    for (int k = 0; k < nb; k++) pd[np++] = ob[k];
    for (int k = 0; k < nm; k++) pd[np++] = om[k];
    for (int k = 0; k < nn; k++) pd[np++] = on[k];
    p->permute = false;
    for (int k = 0; k < np; k++)
      if (to.lab[k] != labs[pd[k]].lab) p->permute = true;
    int oeb = cj_dtype_bytes(r.dtype);
    if (p->permute) {
      cj_strided *sc = &p->scatter;
      memset(sc, 0, sizeof *sc);
      sc->esize = oeb;
      int64_t dims[CJ_MAX_RANK], st[CJ_MAX_RANK];
      for (int k = 0; k < np; k++) dims[k] = labs[pd[k]].size;
      cj_row_strides(np, dims, st);
      for (int k = 0; k < np; k++) {
        sc->dims[k] = dims[k];
        sc->sstride[k] = st[k] * oeb;
        sc->dstride[k] = labs[pd[k]].so * oeb;
      }
      sc->rank = np;
      cj_strided_simplify(sc);
      p->cout_off = off;
      off = (off + p->B * p->M * p->N * oeb + 63) & ~63;
    }
    cj_lw_add_cost(L, 2.0 * (double)p->B * (double)p->M * (double)p->N * (double)p->K, 0);
    cj_lw_set_tls_bytes(L, LA_TLS_BYTES);
  }
  int32_t ws = cj_lw_new_buf(L, off + 64, CJ_BK_ARENA);
  int32_t ins[2] = {x[0].buf, unary ? 0 : x[1].buf};
  int32_t outs[2] = {r.buf, ws};
  if (!cj_lw_emit(L, op, k_einsum, p, (uint32_t)nops, ins, 2, outs)) return cj_oom();
  return NULL;
}

cj_status cj_lower_einsum(cj_lw *L, cj_op *op) { return lower_einsum_common(L, op, false); }
cj_status cj_lower_unary_einsum(cj_lw *L, cj_op *op) { return lower_einsum_common(L, op, true); }
