/* cjrt: scatter (variadic, any update computation).
 *
 * The results start as copies of the inputs (converted to the body's types when those are
 * wider; in place when an input dies here). The update index space splits into the scatter
 * space (update dims that are not window dims, in the order of scatter_indices' dims without
 * index_vector_dim) and the window. For each scatter position the kernel reads the index
 * vector into a start per input dim (no clamping), adds the batching-dim positions, and when
 * the whole window lies inside the input (0 <= start and start + window size <= dim in every
 * dim) combines the window's updates into the results; a window with any element out of bounds
 * is skipped whole. That is XLA's behaviour, which JAX's mode="fill"/"drop" relies on; the
 * StableHLO spec's wording skips only the out-of-bounds elements, and the two agree whenever a
 * window is entirely in or entirely out (no conformance case has a window partly in):
 *   - one input with a body that is add/multiply/maximum/minimum/and/or/xor of its arguments
 *     or returns the update ("replace"): a combiner over runs of the window's innermost dim;
 *   - anything else: the body as a nested plan per element.
 * Positions are processed in update index order (so duplicates combine in that order), split
 * across the pool only when unique_indices says no two positions collide. */
#include <stdlib.h>
#include <string.h>

#include "cpu/k_gather.h"

typedef struct scatter_params {
  int32_t n;       /* inputs */
  int32_t rank;    /* input rank */
  int64_t dims[CJ_MAX_RANK];
  int64_t istr[CJ_MAX_RANK]; /* result element strides */
  /* scatter space */
  int32_t ns;
  int64_t sdims[CJ_MAX_RANK];
  int64_t s_idx[CJ_MAX_RANK]; /* bytes in scatter_indices */
  int64_t s_upd[CJ_MAX_RANK]; /* elements in updates */
  int32_t s_bat[CJ_MAX_RANK]; /* input dim this batching position feeds, or -1 */
  int64_t nscatter;
  /* index vector */
  int32_t nk;
  int64_t k_idx;              /* bytes between components */
  int32_t k_dim[CJ_MAX_RANK]; /* input dim of component k */
  kg_idx_fn rd;
  /* window, over the input dims whose window size is above 1 (nw of them, in input order) */
  int64_t wsize[CJ_MAX_RANK];  /* per input dim: 1 for inserted/batching dims */
  int32_t nw;
  int32_t wdim[CJ_MAX_RANK];   /* input dim */
  int64_t wupd[CJ_MAX_RANK];   /* update element stride */
  int64_t wnelems;             /* window elements (0: nothing to do) */
  /* the window walked as runs: window dims merged where they are contiguous in both the
   * result and the updates (whole rows of a table: one run per scatter position) */
  int32_t nr;
  int64_t rsize[CJ_MAX_RANK], rres[CJ_MAX_RANK], rupd[CJ_MAX_RANK]; /* elements */
  /* fast path */
  kg_comb_fn comb;
  int32_t es;                  /* result element bytes (fast path) */
  bool parallel;
  bool scalar;                 /* fast path, one-element windows and no batching dims */
  kg_sc_fn sc;                 /* scalar with a one-dim scatter space: blocks of elements */
  kg_idx_block_fn rdb;
  bool rows;                   /* fast path, one index component, a one-dim scatter space, no
                                * batching, one run per window: blocks of positions */
  /* initial copies */
  kg_cvt *init_cvt;            /* n: input -> result */
  cj_strided **init_view;      /* n: a virtual broadcast input's view (else NULL) */
  int64_t *nelems_in;
  /* general path */
  kg_body body;
  kg_cvt *upd_cvt;             /* n: update -> body argument */
  int32_t *res_es, *upd_es;
  /* slots: in = [inputs n][indices][updates n][body args 2n, rets n]; out = results n */
} scatter_params;

typedef struct scatter_run {
  const scatter_params *p;
  cj_exec_ctx *ctx;
  const cj_step *st;
  char *res0;
  const char *upd0, *idx;
  cj_status err;
  int64_t row0; /* rows_by_dest: the first row of the range split */
} scatter_run;

/* start (per input dim) of scatter position with index-vector address iv and batch position */
static void start_of(const scatter_params *p, const char *iv, const int64_t *spos,
                     int64_t *start) {
  for (int32_t d = 0; d < p->rank; d++) start[d] = 0;
  for (int32_t k = 0; k < p->nk; k++) start[p->k_dim[k]] = p->rd(iv + k * p->k_idx);
  for (int32_t j = 0; j < p->ns; j++)
    if (p->s_bat[j] >= 0) start[p->s_bat[j]] = spos[j];
}

/* Whether the window at `start` lies entirely inside the input; if so *base receives the
 * result element offset of its first element. (A window of size 0 never gets here: the kernel
 * returns early when the window has no elements.) */
static bool in_bounds(const scatter_params *p, const int64_t *start, int64_t *base) {
  int64_t off = 0;
  for (int32_t d = 0; d < p->rank; d++) {
    int64_t s = start[d];
    if (s < 0 || s > p->dims[d] - p->wsize[d]) return false; /* no overflow: both >= 0 */
    off += s * p->istr[d];
  }
  *base = off;
  return true;
}

/* fast: combine the window with runs of its innermost dim */
static void fast_window(const scatter_params *p, char *res, const char *upd, int64_t base,
                        int64_t ubase) {
  int32_t es = p->es;
  if (p->nr == 0) {
    p->comb(res + base * es, es, upd + ubase * es, es, 1);
    return;
  }
  int32_t in = p->nr - 1;
  int64_t run = p->rsize[in];
  int64_t ras = p->rres[in] * es, rus = p->rupd[in] * es;
  char *r = res + base * es;
  const char *u = upd + ubase * es;
  if (in == 0) {
    p->comb(r, ras, u, rus, run);
    return;
  }
  int64_t pos[CJ_MAX_RANK];
  for (int32_t w = 0; w < in; w++) pos[w] = 0;
  for (;;) {
    p->comb(r, ras, u, rus, run);
    int32_t w = in - 1;
    for (; w >= 0; w--) {
      r += p->rres[w] * es;
      u += p->rupd[w] * es;
      if (++pos[w] < p->rsize[w]) break;
      r -= p->rres[w] * es * pos[w];
      u -= p->rupd[w] * es * pos[w];
      pos[w] = 0;
    }
    if (w < 0) break;
  }
}

/* general: the body per element */
static CJ_MUST_USE cj_status body_window(const scatter_run *R, int64_t base, int64_t ubase) {
  const scatter_params *p = R->p;
  cj_exec_ctx *ctx = R->ctx;
  const cj_step *st = R->st;
  const kg_body *b = &p->body;
  int32_t n = p->n;
  int64_t pos[CJ_MAX_RANK];
  for (int32_t w = 0; w < p->nr; w++) pos[w] = 0;
  int64_t r = base, u = ubase;
  for (;;) {
    for (int32_t i = 0; i < n; i++) {
      char *res = CJ_PTR(ctx, st->out[i]);
      const char *upd = CJ_PTR(ctx, st->in[n + 1 + i]);
      memcpy(KG_ARG(ctx, st, b, i), res + r * p->res_es[i], (size_t)p->res_es[i]);
      kg_cvt_run(&p->upd_cvt[i], KG_ARG(ctx, st, b, n + i), upd + u * p->upd_es[i], 1);
    }
    cj_status s = cj_plan_run(ctx, &b->plan);
    if (s) return s;
    for (int32_t i = 0; i < n; i++) {
      char *res = CJ_PTR(ctx, st->out[i]);
      memcpy(res + r * p->res_es[i], KG_RET(ctx, st, b, i), (size_t)p->res_es[i]);
    }
    int32_t w = p->nr - 1;
    for (; w >= 0; w--) {
      r += p->rres[w];
      u += p->rupd[w];
      if (++pos[w] < p->rsize[w]) break;
      r -= p->rres[w] * pos[w];
      u -= p->rupd[w] * pos[w];
      pos[w] = 0;
    }
    if (w < 0) break;
  }
  return NULL;
}

/* scatter index number s (row-major over sdims): spos, and the offsets io and uo into the
 * indices and the updates */
static inline void scatter_at(const scatter_params *p, int64_t s, int64_t *spos, int64_t *io, int64_t *uo) {
  int64_t rem = s;
  *io = 0;
  *uo = 0;
  for (int32_t j = p->ns - 1; j >= 0; j--) {
    spos[j] = rem % p->sdims[j];
    rem /= p->sdims[j];
    *io += spos[j] * p->s_idx[j];
    *uo += spos[j] * p->s_upd[j];
  }
}

/* the scatter index after spos (io and uo follow) */
static inline void next_scatter(const scatter_params *p, int64_t *spos, int64_t *io, int64_t *uo) {
  for (int32_t j = p->ns - 1; j >= 0; j--) {
    *io += p->s_idx[j];
    *uo += p->s_upd[j];
    if (++spos[j] < p->sdims[j]) break;
    *io -= p->s_idx[j] * p->sdims[j];
    *uo -= p->s_upd[j] * p->sdims[j];
    spos[j] = 0;
  }
}

/* Blocks of the scatter space [s0, s1) along its innermost dim (one position at a time when the
 * space has rank 0): a block of m positions starts at byte offset io in the indices and element
 * offset uo in the updates, and steps by ib bytes and ub elements. */
typedef struct scatter_block {
  int64_t spos[CJ_MAX_RANK];
  int64_t io, uo, ib, ub, s, s1;
  int32_t in;
} scatter_block;

enum { SB = 256 }; /* scatter positions handled together */

static void block_begin(const scatter_params *p, scatter_block *b, int64_t s0, int64_t s1) {
  scatter_at(p, s0, b->spos, &b->io, &b->uo);
  b->in = p->ns - 1;
  b->ib = b->in >= 0 ? p->s_idx[b->in] : 0;
  b->ub = b->in >= 0 ? p->s_upd[b->in] : 0;
  b->s = s0;
  b->s1 = s1;
}

/* the size of the next block (0: done) */
static int64_t block_size(const scatter_params *p, const scatter_block *b) {
  int64_t m = b->in >= 0 ? p->sdims[b->in] - b->spos[b->in] : 1;
  if (m > b->s1 - b->s) m = b->s1 - b->s;
  return m > SB ? SB : m;
}

/* past a block of m positions: along the innermost dim, then carries */
static void block_next(const scatter_params *p, scatter_block *b, int64_t m) {
  b->s += m;
  if (b->in < 0) return;
  b->spos[b->in] += m;
  b->io += m * b->ib;
  b->uo += m * b->ub;
  for (int32_t j = b->in; j > 0 && b->spos[j] == p->sdims[j]; j--) {
    b->io += p->s_idx[j - 1] - p->s_idx[j] * p->sdims[j];
    b->uo += p->s_upd[j - 1] - p->s_upd[j] * p->sdims[j];
    b->spos[j] = 0;
    b->spos[j - 1]++;
  }
}

/* fast path with one-element windows: the index vector is the element's position */
static void scalar_range(scatter_run *R, int64_t s0, int64_t s1) {
  const scatter_params *p = R->p;
  if (p->sc && p->rdb) { /* blocks: offsets first, then one combine call */
    int64_t off[SB], v[SB];
    scatter_block b;
    block_begin(p, &b, s0, s1);
    for (int64_t m; (m = block_size(p, &b)) > 0; block_next(p, &b, m)) {
      for (int64_t i = 0; i < m; i++) off[i] = 0;
      for (int32_t k = 0; k < p->nk; k++) {
        p->rdb(R->idx + b.io + k * p->k_idx, b.ib, m, v);
        uint64_t dim = (uint64_t)p->dims[p->k_dim[k]];
        int64_t str = p->istr[p->k_dim[k]];
        for (int64_t i = 0; i < m; i++)
          off[i] = off[i] < 0 || (uint64_t)v[i] >= dim ? -1 : off[i] + v[i] * str;
      }
      p->sc(R->res0, off, R->upd0 + b.uo * p->es, b.ub * p->es, m);
    }
    return;
  }
  int64_t spos[CJ_MAX_RANK];
  int64_t io, uo;
  scatter_at(p, s0, spos, &io, &uo);
  int32_t es = p->es;
  for (int64_t s = s0; s < s1; s++) {
    const char *iv = R->idx + io;
    int64_t off = 0;
    int32_t k = 0;
    for (; k < p->nk; k++) {
      int64_t v = p->rd(iv + k * p->k_idx);
      int32_t d = p->k_dim[k];
      if ((uint64_t)v >= (uint64_t)p->dims[d]) break;
      off += v * p->istr[d];
    }
    if (k == p->nk) p->comb(R->res0 + off * es, es, R->upd0 + uo * es, es, 1);
    next_scatter(p, spos, &io, &uo);
  }
}

/* fast path, whole windows of one run (table.at[ids].add(rows), ids of any rank): a block of
 * indices along the innermost scatter dim is read at once and each in-bounds window whose start
 * lies in [lo, hi) is one combine, in update order */
static void rows_range_in(scatter_run *R, int64_t s0, int64_t s1, int64_t lo, int64_t hi) {
  const scatter_params *p = R->p;
  int64_t v[SB];
  int32_t d = p->k_dim[0], es = p->es;
  uint64_t span = (uint64_t)(hi - lo);
  int64_t str = p->istr[d] * es;
  int64_t run = p->nr ? p->rsize[0] : 1, ras = p->nr ? p->rres[0] * es : es;
  int64_t rus = p->nr ? p->rupd[0] * es : es;
  scatter_block b;
  block_begin(p, &b, s0, s1);
  for (int64_t m; (m = block_size(p, &b)) > 0; block_next(p, &b, m)) {
    p->rdb(R->idx + b.io, b.ib, m, v);
    const char *u = R->upd0 + b.uo * es;
    int64_t us = b.ub * es;
    for (int64_t i = 0; i < m; i++)
      if ((uint64_t)v[i] - (uint64_t)lo < span) p->comb(R->res0 + v[i] * str, ras, u + i * us, rus, run);
  }
}

static void rows_range(scatter_run *R, int64_t s0, int64_t s1) {
  const scatter_params *p = R->p;
  rows_range_in(R, s0, s1, 0, p->dims[p->k_dim[0]] - p->wsize[p->k_dim[0]] + 1);
}

/* Duplicate indices across threads: each task takes the windows starting in its range of the
 * indexed dim (one row each, so the ranges write disjoint rows) and reads every index; a row's
 * updates stay in update order, so the sums equal the serial ones bit for bit. */
static void rows_by_dest(void *ctx_, int64_t r0, int64_t r1) {
  scatter_run *R = ctx_;
  rows_range_in(R, 0, R->p->nscatter, R->row0 + r0, R->row0 + r1);
}

/* The rows the in-bounds indices reach, [*lo, *hi) (empty when none is): the range split across
 * threads (ids drawn from the first rows of a big table leave the others idle otherwise). */
static void rows_span(const scatter_run *R, int64_t *lo, int64_t *hi) {
  const scatter_params *p = R->p;
  int64_t v[SB], mn = INT64_MAX, mx = -1;
  uint64_t lim = (uint64_t)(p->dims[p->k_dim[0]] - p->wsize[p->k_dim[0]]);
  scatter_block b;
  block_begin(p, &b, 0, p->nscatter);
  for (int64_t m; (m = block_size(p, &b)) > 0; block_next(p, &b, m)) {
    p->rdb(R->idx + b.io, b.ib, m, v);
    for (int64_t i = 0; i < m; i++)
      if ((uint64_t)v[i] <= lim) {
        mn = v[i] < mn ? v[i] : mn;
        mx = v[i] > mx ? v[i] : mx;
      }
  }
  *lo = mx >= 0 ? mn : 0;
  *hi = mx + 1 > *lo ? mx + 1 : *lo;
}

static void scatter_range(void *ctx_, int64_t s0, int64_t s1) {
  scatter_run *R = ctx_;
  const scatter_params *p = R->p;
  if (p->scalar) {
    scalar_range(R, s0, s1);
    return;
  }
  if (p->rows) {
    rows_range(R, s0, s1);
    return;
  }
  int64_t spos[CJ_MAX_RANK], start[CJ_MAX_RANK];
  int64_t io, uo;
  scatter_at(p, s0, spos, &io, &uo);
  for (int64_t s = s0; s < s1; s++) {
    start_of(p, R->idx + io, spos, start);
    int64_t base;
    if (in_bounds(p, start, &base)) {
      if (p->comb) {
        fast_window(p, R->res0, R->upd0, base, uo);
      } else {
        cj_status st = body_window(R, base, uo);
        if (st) {
          R->err = st;
          return;
        }
      }
    }
    next_scatter(p, spos, &io, &uo);
  }
}

static CJ_MUST_USE cj_status k_scatter(cj_exec_ctx *ctx, const cj_step *st) {
  const scatter_params *p = st->params;
  int32_t n = p->n;
  for (int32_t i = 0; i < n; i++) {
    char *out = CJ_PTR(ctx, st->out[i]);
    const char *in = CJ_PTR(ctx, st->in[i]);
    if (p->init_view[i]) /* a broadcast (zeros for gradients): filled, never materialized */
      cj_strided_run_par(ctx, p->init_view[i], out, in);
    else if (out != in)
      kg_cvt_run(&p->init_cvt[i], out, in, p->nelems_in[i]);
  }
  /* nothing to update; an empty input must stop here: the one-element-window path checks only
   * the dims the index vector maps, and an unmapped inserted dim of size 0 has no element */
  if (p->wnelems == 0 || p->nscatter == 0 || p->nelems_in[0] == 0) return NULL;
  scatter_run R = {p, ctx, st, CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->in[n + 1]),
                   CJ_PTR(ctx, st->in[n]), NULL, 0};
  int nth = ctx->pool ? cj_pool_size(ctx->pool) : 1;
  int64_t lo = 0, hi = 0;
  /* every task reads all the indices, and a hot row keeps its task longest: only big ones, and
   * windows of several elements (with one, reading an index costs as much as combining its update:
   * a bincount of 1M ids into 1000 bins took twice as long on two threads as on one) */
  if (!p->parallel && p->rows && nth > 1 && p->wsize[p->k_dim[0]] == 1 && p->wnelems >= 8 &&
      p->nscatter * p->wnelems >= CJ_PAR_MIN_ELEMS * 8)
    rows_span(&R, &lo, &hi);
  if (hi - lo >= 2 * nth) {
    /* two ranges a thread: duplicates of a few hot rows (token ids) make ranges uneven */
    R.row0 = lo;
    cj_pool_parallel_for(ctx->pool, hi - lo, (hi - lo + 2 * nth - 1) / (2 * nth), rows_by_dest, &R);
  } else if (p->parallel && nth > 1 && p->nscatter * p->wnelems >= CJ_PAR_MIN_ELEMS * 2) {
    int64_t grain = CJ_PAR_MIN_ELEMS / p->wnelems;
    cj_pool_parallel_for(ctx->pool, p->nscatter, grain < 1 ? 1 : grain, scatter_range, &R);
  } else {
    scatter_range(&R, 0, p->nscatter);
  }
  return R.err;
}

static bool in_list(const int64_t *l, int64_t n, int64_t v) {
  for (int64_t i = 0; i < n; i++)
    if (l[i] == v) return true;
  return false;
}

static CJ_MUST_USE cj_status field_list(const cj_op *op, const cj_attr *a, int field, int64_t *out,
                            int64_t *n) {
  *n = 0;
  const cj_attr *f = cj_attr_field(a, CJ_SK_SCATTER, field);
  if (!f) return NULL;
  int64_t k = 0;
  if (!cj_attr_get_i64s(f, out, CJ_MAX_RANK, &k) || k > CJ_MAX_RANK)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad scatter field %s",
                       cj_struct_field_name(CJ_SK_SCATTER, field));
  *n = k;
  return NULL;
}

/* Whether operand i is a virtual broadcast of dtype dt that can be read as a view; then *t
 * describes it with t->buf its source and *vs its element strides. */
static bool virtual_operand(cj_lw *L, cj_op *op, uint32_t i, cj_dtype dt, cj_lw_tensor *t,
                            const int64_t **vs) {
  cj_value *v = op->operands[i];
  const cj_type *ty = v->type;
  if (!cj_lw_value_is_virtual(L, v) || !ty || ty->kind != CJ_TYPE_TENSOR ||
      !cj_type_is_static(ty) || cj_type_is_quant(ty) || ty->rank > CJ_MAX_RANK ||
      ty->dtype != dt)
    return false;
  int32_t src;
  cj_dtype vdt;
  cj_lw_virtual_view(L, v, &src, &vdt, vs);
  if (vdt != dt) return false;
  t->buf = src;
  t->type = ty;
  t->dtype = dt;
  t->rank = ty->rank;
  t->dims = ty->dims;
  t->nelems = ty->num_elements;
  t->nbytes = cj_lw_type_bytes(ty);
  return true;
}

/* Scatter input i: a virtual broadcast of the result's type stays a view (*view: a strided copy
 * from t->buf, its source), anything else is an ordinary operand. */
static cj_status scatter_input(cj_lw *L, cj_op *op, uint32_t i, cj_lw_tensor *t,
                               cj_strided **view) {
  const int64_t *vs;
  *view = NULL;
  if (virtual_operand(L, op, i, op->results[i].type->dtype, t, &vs)) {
    cj_strided *s = cj_strided_new(L, t->rank, t->dims, vs, cj_dtype_bytes(t->dtype));
    if (!s) return cj_oom();
    cj_strided_simplify(s);
    *view = s;
    return NULL;
  }
  return cj_lw_operand(L, op, i, t);
}

/* The updates of a one-input scatter: a virtual broadcast (the gradient of a gather whose
 * cotangent was broadcast) is read through its strides, never materialized; anything else is an
 * ordinary operand with row-major strides. us: element strides of the updates. */
static cj_status scatter_updates(cj_lw *L, cj_op *op, int32_t n, cj_lw_tensor *u, int64_t *us) {
  const int64_t *vs;
  if (n == 1 && virtual_operand(L, op, 2, op->operands[2]->type->dtype, u, &vs)) {
    memcpy(us, vs, sizeof(int64_t) * (size_t)u->rank);
    return NULL;
  }
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)n + 1, u));
  cj_row_strides(u->rank, u->dims, us);
  return NULL;
}

/* The scatter's update window in the result (input dims neither inserted nor batching take
 * update_window_dims in order) and its contiguous runs: window dim w merges into the run before
 * it when one step of that run's outer dim is exactly the extent of w in both the result and
 * the updates. */
static CJ_MUST_USE cj_status scatter_window(const cj_op *op, scatter_params *p,
                                            const cj_lw_tensor *x0, const cj_lw_tensor *u0,
                                            const int64_t *us, const int64_t *uwd, int64_t n_uwd,
                                            const int64_t *iwd, int64_t n_iwd, const int64_t *ibd,
                                            int64_t n_ibd) {
  int32_t xr = x0->rank, ur = u0->rank;
  int64_t j = 0;
  p->wnelems = 1;
  for (int32_t d = 0; d < xr; d++) {
    if (in_list(iwd, n_iwd, d) || in_list(ibd, n_ibd, d)) {
      p->wsize[d] = 1;
      continue;
    }
    if (j >= n_uwd) return cj_op_error(op, CJ_INVALID_ARGUMENT, "too few update_window_dims");
    int64_t udim = uwd[j++];
    if (udim < 0 || udim >= ur || u0->dims[udim] > x0->dims[d])
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad update window dim %lld", (long long)udim);
    p->wsize[d] = u0->dims[udim];
    p->wnelems *= u0->dims[udim];
    if (u0->dims[udim] != 1) {
      p->wdim[p->nw] = d;
      p->wupd[p->nw] = us[udim];
      p->nw++;
    }
  }
  if (p->nscatter * p->wnelems != u0->nelems)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "updates shape does not match the scatter");
  for (int32_t w = 0; w < p->nw; w++) {
    int64_t sz = p->wsize[p->wdim[w]], rs = p->istr[p->wdim[w]], us_ = p->wupd[w];
    int32_t k = p->nr - 1;
    if (k >= 0 && p->rres[k] == rs * sz && p->rupd[k] == us_ * sz) {
      p->rsize[k] *= sz;
      p->rres[k] = rs;
      p->rupd[k] = us_;
    } else {
      p->rsize[p->nr] = sz;
      p->rres[p->nr] = rs;
      p->rupd[p->nr] = us_;
      p->nr++;
    }
  }
  return NULL;
}

cj_status cj_lower_scatter(cj_lw *L, cj_op *op) {
  if (op->nopnds < 3 || op->nopnds % 2 != 1 || op->nregions != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "scatter needs N inputs, indices, N updates");
  int32_t n = (int32_t)(op->nopnds - 1) / 2;
  if ((int32_t)op->nresults != n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "scatter needs %d results", n);
  if (n > KG_MAX_BODY_VALUES / 2)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "more than %d scatter inputs",
                       KG_MAX_BODY_VALUES / 2);
  const cj_attr *a = cj_op_attr(op, "scatter_dimension_numbers");
  if (!a || a->kind != CJ_ATTR_STRUCT || a->st.sk != CJ_SK_SCATTER)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing scatter_dimension_numbers");
  int64_t uwd[CJ_MAX_RANK], iwd[CJ_MAX_RANK], ibd[CJ_MAX_RANK], sibd[CJ_MAX_RANK],
      sdod[CJ_MAX_RANK], ivd = 0;
  int64_t n_uwd, n_iwd, n_ibd, n_sibd, n_sdod;
  CJ_RETURN_IF_ERROR(field_list(op, a, CJ_SF_SCATTER_update_window_dims, uwd, &n_uwd));
  CJ_RETURN_IF_ERROR(field_list(op, a, CJ_SF_SCATTER_inserted_window_dims, iwd, &n_iwd));
  CJ_RETURN_IF_ERROR(field_list(op, a, CJ_SF_SCATTER_input_batching_dims, ibd, &n_ibd));
  CJ_RETURN_IF_ERROR(
      field_list(op, a, CJ_SF_SCATTER_scatter_indices_batching_dims, sibd, &n_sibd));
  CJ_RETURN_IF_ERROR(
      field_list(op, a, CJ_SF_SCATTER_scatter_dims_to_operand_dims, sdod, &n_sdod));
  const cj_attr *f = cj_attr_field(a, CJ_SK_SCATTER, CJ_SF_SCATTER_index_vector_dim);
  if (f && !cj_attr_get_i64(f, &ivd))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad index_vector_dim");
  bool unique = false;
  cj_op_get_bool(op, "unique_indices", &unique);

  cj_lw_tensor x0, idx, u0;
  cj_strided *view0 = NULL;
  CJ_RETURN_IF_ERROR(scatter_input(L, op, 0, &x0, &view0));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)n, &idx));
  int64_t is[CJ_MAX_RANK], us[CJ_MAX_RANK];
  CJ_RETURN_IF_ERROR(scatter_updates(L, op, n, &u0, us));
  kg_idx_fn rd = cj_kg_idx_reader(idx.dtype);
  if (!rd) return cj_op_error(op, CJ_INVALID_ARGUMENT, "scatter_indices must be integers");
  int32_t xr = x0.rank, ir = idx.rank, ur = u0.rank;
  if (ivd < 0 || ivd > ir) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad index_vector_dim");
  int64_t nk = ivd < ir ? idx.dims[ivd] : 1;
  if (n_sdod != nk)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "scatter_dims_to_operand_dims must have %lld "
                       "entries", (long long)nk);
  if (n_ibd != n_sibd) return cj_op_error(op, CJ_INVALID_ARGUMENT, "batching dims differ");
  if (n_uwd + n_iwd + n_ibd != xr)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "window, inserted and batching dims must cover the input's rank");

  /* the constraints the kernel's addressing relies on (spec C7, C9, C14-C16, C20) */
  bool ok = ir - (ivd < ir ? 1 : 0) + n_uwd == ur;
  for (int64_t i = 0; ok && i < n_uwd; i++)
    ok = uwd[i] >= 0 && uwd[i] < ur && (i == 0 || uwd[i - 1] < uwd[i]);
  for (int64_t i = 0; ok && i < n_ibd; i++)
    ok = ibd[i] >= 0 && ibd[i] < xr && !in_list(ibd, i, ibd[i]) && !in_list(iwd, n_iwd, ibd[i]);
  for (int64_t i = 0; ok && i < n_sibd; i++)
    ok = sibd[i] >= 0 && sibd[i] < ir && sibd[i] != ivd && !in_list(sibd, i, sibd[i]);
  for (int64_t i = 0; ok && i < n_iwd; i++)
    ok = iwd[i] >= 0 && iwd[i] < xr && !in_list(iwd, i, iwd[i]);
  if (!ok)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "dimension numbers repeat a dimension or are out of range");
  scatter_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->n = n;
  p->rank = xr;
  p->rd = rd;
  p->init_cvt = cj_lw_alloc(L, sizeof(kg_cvt) * (size_t)n);
  p->init_view = cj_lw_alloc(L, sizeof(cj_strided *) * (size_t)n);
  p->upd_cvt = cj_lw_alloc(L, sizeof(kg_cvt) * (size_t)n);
  p->nelems_in = cj_lw_alloc(L, sizeof(int64_t) * (size_t)n);
  p->res_es = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  p->upd_es = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  int32_t *ins = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(2 * n + 1 + 3 * n));
  int32_t *outs = cj_lw_alloc(L, sizeof(int32_t) * (size_t)n);
  if (!p->init_cvt || !p->init_view || !p->upd_cvt || !p->nelems_in || !p->res_es || !p->upd_es || !ins || !outs)
    return cj_oom();
  for (int32_t d = 0; d < xr; d++) p->dims[d] = x0.dims[d];
  cj_row_strides(xr, x0.dims, p->istr);
  cj_row_strides(ir, idx.dims, is);
  int64_t ies = cj_dtype_bytes(idx.dtype);
  /* scatter space: indices dims without ivd <-> update dims not in update_window_dims */
  int32_t ud = 0;
  p->nscatter = 1;
  for (int32_t d = 0; d < ir; d++) {
    if (d == ivd) continue;
    while (ud < ur && in_list(uwd, n_uwd, ud)) ud++;
    if (ud >= ur || u0.dims[ud] != idx.dims[d])
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "updates do not match scatter_indices");
    int32_t j = p->ns++;
    p->sdims[j] = idx.dims[d];
    p->s_idx[j] = is[d] * ies;
    p->s_upd[j] = us[ud];
    p->s_bat[j] = -1;
    for (int64_t i = 0; i < n_sibd; i++)
      if (sibd[i] == d) {
        if (ibd[i] < 0 || ibd[i] >= xr || x0.dims[ibd[i]] != idx.dims[d])
          return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad batching dims");
        p->s_bat[j] = (int32_t)ibd[i];
      }
    p->nscatter *= idx.dims[d];
    ud++;
  }
  p->nk = (int32_t)nk;
  p->k_idx = ivd < ir ? is[ivd] * ies : 0;
  for (int64_t k = 0; k < nk; k++) {
    if (sdod[k] < 0 || sdod[k] >= xr || in_list(sdod, k, sdod[k]) || in_list(ibd, n_ibd, sdod[k]))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad scatter_dims_to_operand_dims");
    p->k_dim[k] = (int32_t)sdod[k];
  }
  CJ_RETURN_IF_ERROR(scatter_window(op, p, &x0, &u0, us, uwd, n_uwd, iwd, n_iwd, ibd, n_ibd));

  /* operands and results */
  cj_block *blk = op->regions[0].first;
  if (!blk || blk->nargs != (uint32_t)(2 * n))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the update computation needs %d arguments",
                       2 * n);
  for (int32_t i = 0; i < n; i++) {
    cj_lw_tensor x, u;
    CJ_RETURN_IF_ERROR(scatter_input(L, op, (uint32_t)i, &x, &p->init_view[i]));
    if (i == 0) /* scatter_updates' view, or the materialized operand */
      u = u0;
    else
      CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, (uint32_t)(n + 1 + i), &u));
    if (x.nelems != x0.nelems || x.rank != xr || u.nelems != u0.nelems || u.rank != ur)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "inputs or updates differ in shape");
    cj_dtype bt = cj_kg_scalar_dtype(blk->args[i].type);
    cj_dtype bu = cj_kg_scalar_dtype(blk->args[n + i].type);
    if (bt == CJ_INVALID || bu != bt)
      return cj_op_error(op, CJ_UNIMPLEMENTED, "update computation argument types");
    if (op->results[i].type->dtype != bt)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "result %d must have the body's type", i);
    if (!cj_kg_cvt_init(&p->init_cvt[i], x.dtype, bt) || !cj_kg_cvt_init(&p->upd_cvt[i], u.dtype, bt))
      return cj_op_error(op, CJ_UNIMPLEMENTED, "unsupported promotion");
    p->nelems_in[i] = x.nelems;
    p->res_es[i] = cj_dtype_bytes(bt);
    p->upd_es[i] = cj_dtype_bytes(u.dtype);
    ins[i] = x.buf;
    ins[n + 1 + i] = u.buf;
  }
  ins[n] = idx.buf;
  int kop = n == 1 && x0.dtype == u0.dtype ? cj_kg_body_binop(op, 0, x0.dtype) : -1;
  kg_comb_fn comb = kop >= 0 ? cj_kg_comb_lookup(kop, x0.dtype) : NULL;
  cj_lw_add_cost(L, (double)u0.nelems * (double)n, 0);
  if (comb) {
    p->comb = comb;
    p->es = cj_dtype_bytes(x0.dtype);
    p->parallel = unique || kop == KG_KEEP;
    p->scalar = p->nw == 0 && n_ibd == 0;
    p->sc = cj_kg_sc_lookup(kop, x0.dtype);
    p->rdb = cj_kg_idx_block_reader(idx.dtype);
    p->rows = p->rdb && p->nk == 1 && n_ibd == 0 && p->nr <= 1;
    for (int32_t dd = 0; dd < p->rank; dd++) /* the windows fit in the other dims (start 0) */
      p->rows = p->rows && (dd == p->k_dim[0] || p->wsize[dd] <= p->dims[dd]);
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
    if (r.nelems != x0.nelems) return cj_op_error(op, CJ_INVALID_ARGUMENT, "result shape");
    if (!view0 && u0.buf != x0.buf && idx.buf != x0.buf) cj_lw_hint_inplace(L, r.buf, x0.buf);
    if (!cj_lw_emit(L, op, k_scatter, p, 3, ins, 1, &r.buf)) return cj_oom();
    return NULL;
  }
  /* general: the body as a nested plan */
  int32_t start = cj_lw_advance(L);
  for (int32_t i = 0; i < n; i++) {
    cj_lw_tensor r;
    CJ_RETURN_IF_ERROR(cj_lw_result(L, op, (uint32_t)i, &r));
    if (r.nelems != x0.nelems) return cj_op_error(op, CJ_INVALID_ARGUMENT, "result shape");
    outs[i] = r.buf;
    cj_lw_def_at(L, r.buf, start);
  }
  CJ_RETURN_IF_ERROR(cj_kg_body_lower(L, op, 0, start, &p->body, ins + 2 * n + 1));
  if (p->body.nrets != (uint32_t)n)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the update computation must return %d values",
                       n);
  for (int32_t i = 0; i < n; i++)
    if (p->body.ret_types[i]->dtype != p->body.arg_types[i]->dtype)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "the update computation returns a %s value",
                         cj_dtype_get(p->body.ret_types[i]->dtype)->id);
  p->body.slot0 = (uint32_t)(2 * n + 1);
  if (!cj_lw_emit(L, op, k_scatter, p, (uint32_t)(2 * n + 1 + 3 * n), ins, (uint32_t)n, outs))
    return cj_oom();
  cj_lw_extend_region(L, start);
  return NULL;
}
