/* cjrt: gather, dynamic_gather and torch_index_select.
 *
 * All three become one gather step. The lowering splits the result's index space into the batch
 * space (the result dims that are not offset dims, in the order of start_indices' dims without
 * index_vector_dim) and the slice (the offset dims). The kernel walks the batch space in blocks
 * along its innermost dim: for a block it reads each index vector component as one strided run,
 * clamps each start to [0, dim - slice size] as the spec says, adds the batching-dim offsets,
 * and then copies the block's slices with strides computed at lowering time: contiguous slices
 * as spans (fixed-size copies for one-element slices), slices that are one strided run
 * (x[:, ids]) run-outer and batch-inner, any others as strided copies. Large gathers split the
 * batch space across the pool. Quantized operands (per-tensor) are moved as their storage
 * values.
 *
 * A gather of contiguous slices whose one user is select(P, G, F) or select(P, F, G), with P
 * constant along the slice (a broadcast of a batch-shaped mask: JAX's mode="fill" take, as
 * nn.Embed looks tokens up) and F one value broadcast, is one step: the select's result is
 * written directly, the rows whose predicate picks F filled with it. The gather is lowered where
 * the select is (only constants and broadcasts lie between), so no gathered copy is stored and
 * read again by the select. */
#include <stdlib.h>
#include <string.h>

#include "cpu/k_gather.h"

typedef struct gather_params {
  int32_t nb;                       /* batch space rank */
  int64_t bdims[CJ_MAX_RANK];       /* batch space sizes */
  int64_t b_idx[CJ_MAX_RANK];       /* byte stride in start_indices */
  int64_t b_res[CJ_MAX_RANK];       /* byte stride in the result */
  int64_t b_opd[CJ_MAX_RANK];       /* byte stride in the operand (batching dims), else 0 */
  int64_t nbatch;
  int32_t nk;                       /* index vector length */
  int64_t k_idx;                    /* byte stride between index vector components */
  int64_t k_opd[CJ_MAX_RANK];       /* operand byte stride of start_index_map[k] */
  int64_t k_limit[CJ_MAX_RANK];     /* operand dim - slice size there */
  kg_idx_fn rd;
  kg_idx_block_fn rdb;              /* NULL for sub-byte index types */
  cj_strided slice;                 /* one slice, operand -> result (offsets 0) */
  int64_t slice_bytes;              /* contiguous in both: bytes of a slice, else -1 */
  int64_t slice_elems;
  /* fused select (inputs 2 and 3: the predicate and the fill value) */
  bool sel;
  bool fill_on_true;                /* the predicate true picks the fill value */
  int64_t b_pred[CJ_MAX_RANK];      /* byte stride of the predicate per batch dim */
  int32_t b_rdim[CJ_MAX_RANK];      /* the result dim of each batch dim */
} gather_params;

typedef struct gather_run {
  const gather_params *p;
  char *out;
  const char *x, *idx, *pred, *fill;
} gather_run;

enum { GB = 256 }; /* batch positions handled together */

/* Source offsets of m batch positions along the innermost batch dim: oo + i * bopd plus each
 * start index (clamped to [0, limit]) times its operand stride. Indices are read as a block. */
static void gather_offsets(const gather_params *p, const char *iv, int64_t istride, int64_t oo,
                           int64_t bopd, int64_t m, int64_t *off) {
  int64_t v[GB];
  for (int64_t i = 0; i < m; i++) off[i] = oo + i * bopd;
  for (int32_t k = 0; k < p->nk; k++) {
    const char *ik = iv + k * p->k_idx;
    if (p->rdb) {
      p->rdb(ik, istride, m, v);
    } else {
      for (int64_t i = 0; i < m; i++) v[i] = p->rd(ik + i * istride);
    }
    int64_t lim = p->k_limit[k], str = p->k_opd[k];
    for (int64_t i = 0; i < m; i++) {
      int64_t s = v[i] < 0 ? 0 : v[i] > lim ? lim : v[i];
      off[i] += s * str;
    }
  }
}

/* copies of n bytes (a constant after inlining) from x + off[i] to out + ro + i * rs */
#define GATHER_SPANS(NB)                                                   \
  for (int64_t i = 0; i < m; i++) memcpy(out + ro + i * rs, x + off[i], NB)

/* Copies m slices: contiguous ones as spans; a slice of one strided run walked run-outer and
 * batch-inner (x[:, ids] reads along rows of x); others as strided copies. */
static void gather_copy(const gather_params *p, char *out, const char *x, int64_t ro, int64_t rs,
                        const int64_t *off, int64_t m) {
  int64_t sb = p->slice_bytes;
  if (sb >= 0) {
    switch (sb) {
      case 1: GATHER_SPANS(1); break;
      case 2: GATHER_SPANS(2); break;
      case 4: GATHER_SPANS(4); break;
      case 8: GATHER_SPANS(8); break;
      case 16: GATHER_SPANS(16); break;
      default: GATHER_SPANS((size_t)sb);
    }
    return;
  }
  const cj_strided *s = &p->slice;
  if (s->rank == 1 && (s->esize == 4 || s->esize == 8)) {
    int64_t n = s->dims[0], ss = s->sstride[0], ds = s->dstride[0];
    for (int64_t j = 0; j < n; j++) {
      char *o = out + ro + j * ds;
      const char *xj = x + j * ss;
      if (s->esize == 4)
        for (int64_t i = 0; i < m; i++) memcpy(o + i * rs, xj + off[i], 4);
      else
        for (int64_t i = 0; i < m; i++) memcpy(o + i * rs, xj + off[i], 8);
    }
    return;
  }
  for (int64_t i = 0; i < m; i++) cj_strided_run(s, out + ro + i * rs, x + off[i]);
}

/* the fused select: rows whose predicate (bytes at pred + i * pb) picks the fill value */
static void gather_fill(const gather_params *p, char *out, const char *pred, int64_t pb,
                        const char *fill, int64_t rs, int64_t m) {
  int es = p->slice.esize;
  for (int64_t i = 0; i < m; i++)
    if ((pred[i * pb] != 0) == p->fill_on_true) cj_fill_elems(out + i * rs, fill, es, p->slice_elems);
}

static void gather_range(void *ctx, int64_t b0, int64_t b1) {
  const gather_run *R = ctx;
  const gather_params *p = R->p;
  int64_t pos[CJ_MAX_RANK];
  int64_t io = 0, ro = 0, oo = 0, po = 0;
  int64_t rem = b0;
  for (int32_t d = p->nb - 1; d >= 0; d--) {
    pos[d] = rem % p->bdims[d];
    rem /= p->bdims[d];
    io += pos[d] * p->b_idx[d];
    ro += pos[d] * p->b_res[d];
    oo += pos[d] * p->b_opd[d];
    po += pos[d] * p->b_pred[d];
  }
  /* blocks of the innermost batch dim (one position when the batch space is rank 0) */
  int32_t in = p->nb - 1;
  int64_t ib = in >= 0 ? p->b_idx[in] : 0, rb = in >= 0 ? p->b_res[in] : 0;
  int64_t ob = in >= 0 ? p->b_opd[in] : 0, pb = in >= 0 ? p->b_pred[in] : 0;
  int64_t off[GB];
  for (int64_t b = b0; b < b1;) {
    int64_t m = in >= 0 ? p->bdims[in] - pos[in] : 1;
    if (m > b1 - b) m = b1 - b;
    if (m > GB) m = GB;
    gather_offsets(p, R->idx + io, ib, oo, ob, m, off);
    gather_copy(p, R->out, R->x, ro, rb, off, m);
    if (p->sel) gather_fill(p, R->out + ro, R->pred + po, pb, R->fill, rb, m);
    b += m;
    if (in < 0) break;
    /* next batch position: m along the innermost dim, then carries */
    pos[in] += m;
    io += m * ib;
    ro += m * rb;
    oo += m * ob;
    po += m * pb;
    for (int32_t d = in; d > 0 && pos[d] == p->bdims[d]; d--) {
      io += p->b_idx[d - 1] - p->b_idx[d] * p->bdims[d];
      ro += p->b_res[d - 1] - p->b_res[d] * p->bdims[d];
      oo += p->b_opd[d - 1] - p->b_opd[d] * p->bdims[d];
      po += p->b_pred[d - 1] - p->b_pred[d] * p->bdims[d];
      pos[d] = 0;
      pos[d - 1]++;
    }
  }
}

static CJ_MUST_USE cj_status k_gather(cj_exec_ctx *ctx, const cj_step *st) {
  const gather_params *p = st->params;
  gather_run R = {p, CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->in[0]), CJ_PTR(ctx, st->in[1]),
                  p->sel ? CJ_PTR(ctx, st->in[2]) : NULL, p->sel ? CJ_PTR(ctx, st->in[3]) : NULL};
  if (p->nbatch == 0 || p->slice_elems == 0) return NULL;
  int64_t work = p->nbatch * (p->slice_elems + 8);
  if (work >= CJ_PAR_MIN_ELEMS * 2 && p->nbatch > 1 && ctx->pool && cj_pool_size(ctx->pool) > 1) {
    int64_t grain = CJ_PAR_MIN_ELEMS / (p->slice_elems + 8);
    cj_pool_parallel_for(ctx->pool, p->nbatch, grain < 1 ? 1 : grain, gather_range, &R);
  } else {
    gather_range(&R, 0, p->nbatch);
  }
  return NULL;
}

/* The gather of the spec, its attributes given as lists. */
typedef struct gather_spec {
  int64_t offset_dims[CJ_MAX_RANK], n_offset;
  int64_t collapsed[CJ_MAX_RANK], n_collapsed;
  int64_t obatch[CJ_MAX_RANK], n_obatch;
  int64_t ibatch[CJ_MAX_RANK], n_ibatch;
  int64_t start_index_map[CJ_MAX_RANK], n_sim;
  int64_t ivd;
  int64_t slice_sizes[CJ_MAX_RANK], n_slice;
} gather_spec;

static bool in_list(const int64_t *l, int64_t n, int64_t v) {
  for (int64_t i = 0; i < n; i++)
    if (l[i] == v) return true;
  return false;
}

static bool unique_in(const int64_t *l, int64_t n, int64_t lo, int64_t hi, bool sorted) {
  for (int64_t i = 0; i < n; i++) {
    if (l[i] < lo || l[i] >= hi) return false;
    for (int64_t j = 0; j < i; j++)
      if (l[j] == l[i] || (sorted && l[j] > l[i])) return false;
  }
  return true;
}

/* The result's element type and shape, before its buffer is bound (a gather fused with its select
 * writes the select's result instead). */
static CJ_MUST_USE cj_status result_shape(cj_op *op, cj_lw_tensor *r) {
  const cj_type *t = op->nresults == 1 ? op->results[0].type : NULL;
  if (!t || t->kind != CJ_TYPE_TENSOR || !cj_type_is_static(t))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "the result must be a tensor of static shape");
  if (cj_type_is_quant(t) && t->elem->quant && t->elem->quant->axis >= 0)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "per-axis quantized types are not supported here");
  memset(r, 0, sizeof *r);
  r->buf = -1;
  r->type = t;
  r->dtype = t->dtype; /* the storage type of a quantized type */
  r->rank = t->rank;
  r->dims = t->dims;
  r->nelems = t->num_elements;
  r->nbytes = cj_lw_type_bytes(t);
  return NULL;
}

/* The gather's step parameters into *out and its operand buffers into in[0..1]; the result is
 * not bound. */
static CJ_MUST_USE cj_status gather_build(cj_lw *L, cj_op *op, const gather_spec *g,
                                          gather_params **out, int32_t *in) {
  cj_lw_tensor x, idx, r = {0};
  CJ_RETURN_IF_ERROR(cj_kg_operand(L, op, 0, true, &x));
  CJ_RETURN_IF_ERROR(cj_kg_operand(L, op, 1, false, &idx));
  CJ_RETURN_IF_ERROR(result_shape(op, &r));
  if (r.dtype != x.dtype)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "result and operand element types differ");
  kg_idx_fn rd = cj_kg_idx_reader(idx.dtype);
  if (!rd) return cj_op_error(op, CJ_INVALID_ARGUMENT, "start_indices must be integers");
  int32_t xr = x.rank, ir = idx.rank, rr = r.rank;
  if (g->n_slice != xr)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "slice_sizes must have %d entries", xr);
  if (g->ivd < 0 || g->ivd > ir)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad index_vector_dim %lld", (long long)g->ivd);
  int64_t nk = g->ivd < ir ? idx.dims[g->ivd] : 1;
  if (g->n_sim != nk)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "start_index_map must have %lld entries",
                       (long long)nk);
  if (g->n_obatch != g->n_ibatch)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "batching dims differ in number");
  if (g->n_offset + g->n_collapsed + g->n_obatch != xr)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "offset, collapsed and batching dims must "
                                                "cover the operand's rank");
  /* the constraints the kernel's addressing relies on (spec C4, C6, C13-C16, C18) */
  bool ok = unique_in(g->offset_dims, g->n_offset, 0, rr, true) &&
            unique_in(g->obatch, g->n_obatch, 0, xr, false) &&
            unique_in(g->ibatch, g->n_ibatch, 0, ir, false) &&
            unique_in(g->start_index_map, g->n_sim, 0, xr, false) &&
            !in_list(g->ibatch, g->n_ibatch, g->ivd);
  for (int64_t i = 0; ok && i < g->n_sim; i++) ok = !in_list(g->obatch, g->n_obatch, g->start_index_map[i]);
  if (!ok)
    return cj_op_error(op, CJ_INVALID_ARGUMENT,
                       "dimension numbers repeat a dimension or are out of range");
  if (ir - (g->ivd < ir ? 1 : 0) + g->n_offset != rr)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "the result must have rank %lld",
                       (long long)(ir - (g->ivd < ir ? 1 : 0) + g->n_offset));
  int64_t es = cj_dtype_bytes(x.dtype), ies = cj_dtype_bytes(idx.dtype);
  int64_t xs[CJ_MAX_RANK], is[CJ_MAX_RANK], rs[CJ_MAX_RANK];
  cj_row_strides(xr, x.dims, xs);
  cj_row_strides(ir, idx.dims, is);
  cj_row_strides(rr, r.dims, rs);
  for (int32_t d = 0; d < xr; d++)
    if (g->slice_sizes[d] < 0 || g->slice_sizes[d] > x.dims[d])
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "slice size %lld of dim %d out of range",
                         (long long)g->slice_sizes[d], d);
  gather_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->rd = rd;
  p->rdb = cj_kg_idx_block_reader(idx.dtype);
  /* batch space: start_indices dims except index_vector_dim, in order; they are the result
   * dims not in offset_dims, in order */
  int32_t rdim = 0;
  p->nbatch = 1;
  for (int32_t d = 0; d < ir; d++) {
    if (d == g->ivd) continue;
    while (rdim < rr && in_list(g->offset_dims, g->n_offset, rdim)) rdim++;
    if (rdim >= rr) return cj_op_error(op, CJ_INVALID_ARGUMENT, "result rank too small");
    if (r.dims[rdim] != idx.dims[d])
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "result dim %d must be %lld", rdim,
                         (long long)idx.dims[d]);
    int32_t j = p->nb++;
    p->bdims[j] = idx.dims[d];
    p->b_idx[j] = is[d] * ies;
    p->b_res[j] = rs[rdim] * es;
    p->b_opd[j] = 0;
    p->b_rdim[j] = rdim;
    for (int64_t i = 0; i < g->n_ibatch; i++)
      if (g->ibatch[i] == d) {
        int64_t od = g->obatch[i];
        if (od < 0 || od >= xr || x.dims[od] != idx.dims[d])
          return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad batching dims");
        p->b_opd[j] = xs[od] * es;
      }
    p->nbatch *= idx.dims[d];
    rdim++;
  }
  p->nk = (int32_t)nk;
  p->k_idx = g->ivd < ir ? is[g->ivd] * ies : 0;
  for (int64_t k = 0; k < nk; k++) {
    int64_t od = g->start_index_map[k];
    if (od < 0 || od >= xr) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad start_index_map");
    p->k_opd[k] = xs[od] * es;
    p->k_limit[k] = x.dims[od] - g->slice_sizes[od];
  }
  /* the slice: operand dims with slice sizes; offset dims map to result offset dims in order */
  cj_strided *s = &p->slice;
  s->rank = xr;
  s->esize = (int32_t)es;
  int64_t j = 0;
  p->slice_elems = 1;
  for (int32_t d = 0; d < xr; d++) {
    s->dims[d] = g->slice_sizes[d];
    s->sstride[d] = xs[d] * es;
    p->slice_elems *= g->slice_sizes[d];
    bool dropped = in_list(g->collapsed, g->n_collapsed, d) || in_list(g->obatch, g->n_obatch, d);
    if (dropped) {
      if (g->slice_sizes[d] > 1)
        return cj_op_error(op, CJ_INVALID_ARGUMENT, "collapsed dim %d has slice size > 1", d);
      s->dstride[d] = 0;
      continue;
    }
    if (j >= g->n_offset) return cj_op_error(op, CJ_INVALID_ARGUMENT, "too few offset_dims");
    int64_t rd_ = g->offset_dims[j++];
    if (rd_ < 0 || rd_ >= rr || r.dims[rd_] != g->slice_sizes[d])
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "offset dim %lld must have size %lld",
                         (long long)rd_, (long long)g->slice_sizes[d]);
    s->dstride[d] = rs[rd_] * es;
  }
  if (p->nbatch * p->slice_elems != r.nelems)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "result shape does not match the gather");
  cj_strided_simplify(s);
  p->slice_bytes = -1;
  if (s->rank == 0 || (s->rank == 1 && s->sstride[0] == es && s->dstride[0] == es))
    p->slice_bytes = p->slice_elems * es;
  *out = p;
  in[0] = x.buf;
  in[1] = idx.buf;
  return NULL;
}

static CJ_MUST_USE cj_status gather_emit(cj_lw *L, cj_op *op, const gather_spec *g, int32_t extra_in) {
  gather_params *p;
  int32_t in[3];
  CJ_RETURN_IF_ERROR(gather_build(L, op, g, &p, in));
  in[2] = extra_in;
  cj_lw_tensor r;
  CJ_RETURN_IF_ERROR(cj_kg_result(L, op, 0, true, &r));
  if (!cj_lw_emit(L, op, k_gather, p, extra_in >= 0 ? 3 : 2, in, 1, &r.buf)) return cj_oom();
  return NULL;
}

static CJ_MUST_USE cj_status struct_list(const cj_op *op, const cj_attr *a, cj_struct_kind sk, int field,
                             int64_t *out, int64_t *n) {
  *n = 0;
  const cj_attr *f = cj_attr_field(a, sk, field);
  if (!f) return NULL;
  int64_t k = 0;
  if (!cj_attr_get_i64s(f, out, CJ_MAX_RANK, &k) || k > CJ_MAX_RANK)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad %s field %s", cj_struct_mnemonic(sk),
                       cj_struct_field_name(sk, field));
  *n = k;
  return NULL;
}

static CJ_MUST_USE cj_status read_gather_dims(const cj_op *op, gather_spec *g) {
  const cj_attr *a = cj_op_attr(op, "dimension_numbers");
  if (!a || a->kind != CJ_ATTR_STRUCT || a->st.sk != CJ_SK_GATHER)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing dimension_numbers");
  CJ_RETURN_IF_ERROR(struct_list(op, a, CJ_SK_GATHER, CJ_SF_GATHER_offset_dims, g->offset_dims,
                                 &g->n_offset));
  CJ_RETURN_IF_ERROR(struct_list(op, a, CJ_SK_GATHER, CJ_SF_GATHER_collapsed_slice_dims,
                                 g->collapsed, &g->n_collapsed));
  CJ_RETURN_IF_ERROR(struct_list(op, a, CJ_SK_GATHER, CJ_SF_GATHER_operand_batching_dims,
                                 g->obatch, &g->n_obatch));
  CJ_RETURN_IF_ERROR(struct_list(op, a, CJ_SK_GATHER, CJ_SF_GATHER_start_indices_batching_dims,
                                 g->ibatch, &g->n_ibatch));
  CJ_RETURN_IF_ERROR(struct_list(op, a, CJ_SK_GATHER, CJ_SF_GATHER_start_index_map,
                                 g->start_index_map, &g->n_sim));
  g->ivd = 0;
  const cj_attr *f = cj_attr_field(a, CJ_SK_GATHER, CJ_SF_GATHER_index_vector_dim);
  if (f && !cj_attr_get_i64(f, &g->ivd))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad index_vector_dim");
  return NULL;
}

static CJ_MUST_USE cj_status gather_spec_of(const cj_op *op, gather_spec *g) {
  memset(g, 0, sizeof *g);
  CJ_RETURN_IF_ERROR(read_gather_dims(op, g));
  if (!cj_kg_i64s(op, "slice_sizes", g->slice_sizes, CJ_MAX_RANK, &g->n_slice))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing slice_sizes");
  return NULL;
}

/* The select that is the one use of gather op's result, when the gather is lowered there (the
 * module comment): only constants and broadcasts not reading the gather lie between. NULL if
 * none. The answer does not change while a block is lowered: the gather asks it, and the
 * select asks it again to find the gather it has to lower. */
static cj_op *select_user(cj_lw *L, cj_op *op) {
  if (op->kind != CJ_OP_GATHER || op->nresults != 1) return NULL;
  cj_value *g = &op->results[0];
  const cj_type *t = g->type;
  if (!t || t->kind != CJ_TYPE_TENSOR || !cj_type_is_static(t) || cj_type_is_quant(t) ||
      cj_lw_num_uses(L, g) != 1)
    return NULL;
  cj_op *n = op->next;
  for (; n && (n->kind == CJ_OP_CONSTANT || n->kind == CJ_OP_BROADCAST_IN_DIM); n = n->next)
    for (uint32_t i = 0; i < n->nopnds; i++)
      if (n->operands[i] == g) return NULL;
  if (!n || n->kind != CJ_OP_SELECT || n->nopnds != 3 || n->nresults != 1 ||
      n->operands[0] == g || (n->operands[1] == g) == (n->operands[2] == g) ||
      n->results[0].type != t)
    return NULL;
  return n;
}

/* Whether the select's predicate is a view of a mask constant along the gathered slice (strides
 * 0 in the result dims that are not batch dims) and its other value one element broadcast; sets
 * p's predicate strides and the two buffers. */
static bool select_inputs(cj_lw *L, const cj_op *sel, bool fill_on_true, gather_params *p,
                          int32_t *pred, int32_t *fill) {
  cj_value *P = sel->operands[0], *F = sel->operands[fill_on_true ? 1 : 2];
  const cj_type *rt = sel->results[0].type;
  int32_t src;
  cj_dtype dt;
  const int64_t *vs;
  if (!cj_lw_value_is_virtual(L, F) || !cj_lw_value_is_virtual(L, P)) return false;
  cj_lw_virtual_view(L, F, &src, &dt, &vs);
  if (dt != rt->dtype) return false;
  for (int32_t d = 0; d < rt->rank; d++)
    if (vs[d] != 0) return false;
  *fill = src;
  cj_lw_virtual_view(L, P, &src, &dt, &vs);
  if (dt != CJ_PRED || !P->type || P->type->rank != rt->rank) return false;
  bool batch[CJ_MAX_RANK] = {false};
  for (int32_t j = 0; j < p->nb; j++) {
    batch[p->b_rdim[j]] = true;
    p->b_pred[j] = vs[p->b_rdim[j]]; /* one byte per element */
  }
  for (int32_t d = 0; d < rt->rank; d++)
    if (!batch[d] && vs[d] != 0) return false;
  *pred = src;
  return true;
}

/* The gather deferred to select `sel` (select_user): one step writing the select's result when
 * the slices are contiguous and the select's other inputs qualify (*done); else the plain gather
 * here, and the select is lowered as usual. */
static CJ_MUST_USE cj_status gather_select_emit(cj_lw *L, cj_op *gop, cj_op *sel, bool fill_on_true,
                                                bool *done) {
  gather_spec g;
  CJ_RETURN_IF_ERROR(gather_spec_of(gop, &g));
  CJ_RETURN_IF_ERROR(cj_lw_ew_flush(L));
  gather_params *p;
  int32_t in[4];
  CJ_RETURN_IF_ERROR(gather_build(L, gop, &g, &p, in));
  cj_lw_tensor r;
  if (p->slice_bytes < 0 || !select_inputs(L, sel, fill_on_true, p, &in[2], &in[3])) {
    memset(p->b_pred, 0, sizeof p->b_pred);
    CJ_RETURN_IF_ERROR(cj_kg_result(L, gop, 0, true, &r));
    if (!cj_lw_emit(L, gop, k_gather, p, 2, in, 1, &r.buf)) return cj_oom();
    return NULL;
  }
  p->sel = true;
  p->fill_on_true = fill_on_true;
  CJ_RETURN_IF_ERROR(cj_lw_result(L, sel, 0, &r));
  if (!cj_lw_emit(L, sel, k_gather, p, 4, in, 1, &r.buf)) return cj_oom();
  *done = true;
  return NULL;
}

cj_status cj_lw_gather_select(cj_lw *L, cj_op *op, bool *done) {
  *done = false;
  if (op->kind != CJ_OP_SELECT || op->nopnds != 3) return NULL;
  for (uint32_t k = 1; k <= 2; k++) {
    cj_op *gop = op->operands[k] ? op->operands[k]->def : NULL;
    if (gop && select_user(L, gop) == op) return gather_select_emit(L, gop, op, k == 2, done);
  }
  return NULL;
}

cj_status cj_lower_gather(cj_lw *L, cj_op *op) {
  if (select_user(L, op)) return NULL; /* lowered at the select: cj_lw_gather_select */
  gather_spec g;
  CJ_RETURN_IF_ERROR(gather_spec_of(op, &g));
  return gather_emit(L, op, &g, -1);
}

/* dynamic_gather: the slice sizes must be a constant (after folding) */
cj_status cj_lower_dynamic_gather(cj_lw *L, cj_op *op) {
  gather_spec g;
  memset(&g, 0, sizeof g);
  CJ_RETURN_IF_ERROR(read_gather_dims(op, &g));
  if (op->nopnds != 3) return cj_op_error(op, CJ_INVALID_ARGUMENT, "expected 3 operands");
  cj_op *def = op->operands[2]->def;
  const cj_attr *v = def && def->kind == CJ_OP_CONSTANT ? cj_op_attr(def, "value") : NULL;
  if (!v || v->kind != CJ_ATTR_DENSE || !cj_type_is_static(v->dense.type))
    return cj_op_error(op, CJ_UNIMPLEMENTED,
                       "slice_sizes must be a constant (a value known at compile time)");
  int64_t n = cj_dense_num_elements(v);
  if (n > CJ_MAX_RANK) return cj_op_error(op, CJ_INVALID_ARGUMENT, "too many slice sizes");
  g.n_slice = n;
  for (int64_t i = 0; i < n; i++) g.slice_sizes[i] = cj_dense_get_i64(v, i);
  /* the slice sizes are read at compile time; the operand stays an input of the step so that
   * its buffer is live (it may be an argument) */
  cj_lw_tensor sz;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 2, &sz));
  return gather_emit(L, op, &g, sz.buf);
}

/* torch_index_select(operand, index, dim, batch_dims): result = operand[:dim] batch-shared with
 * index[:batch_dims], then index[batch_dims:], then operand[dim+1:] (a gather). */
cj_status cj_lower_torch_index_select(cj_lw *L, cj_op *op) {
  if (op->nopnds != 2 || op->nresults != 1)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "expected 2 operands and 1 result");
  const cj_type *xt = op->operands[0]->type, *it = op->operands[1]->type;
  if (!cj_type_is_static(xt) || !cj_type_is_static(it))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "dynamic shapes are not supported here");
  int64_t dim = 0, bd = 0;
  if (!cj_op_get_i64(op, "dim", &dim) || !cj_op_get_i64(op, "batch_dims", &bd))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "missing dim or batch_dims");
  int32_t xr = xt->rank, ir = it->rank;
  if (dim < 0) dim += xr;
  if (bd < 0) bd += ir;
  if (dim < 0 || dim >= xr || bd < 0 || bd > ir || bd > dim)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dim %lld or batch_dims %lld",
                       (long long)dim, (long long)bd);
  if (xr > CJ_MAX_RANK || ir >= CJ_MAX_RANK)
    return cj_op_error(op, CJ_UNIMPLEMENTED, "rank above %d", CJ_MAX_RANK);
  gather_spec g;
  memset(&g, 0, sizeof g);
  int64_t nidx = ir - bd; /* index dims that are not batch dims */
  for (int64_t d = 0; d < bd; d++) {
    g.obatch[g.n_obatch++] = d;
    g.ibatch[g.n_ibatch++] = d;
  }
  g.collapsed[g.n_collapsed++] = dim;
  g.start_index_map[g.n_sim++] = dim;
  g.ivd = ir;
  for (int64_t d = 0; d < xr; d++) g.slice_sizes[d] = (d < bd || d == dim) ? 1 : xt->dims[d];
  g.n_slice = xr;
  /* result: [operand bd..dim) are offset dims at bd..dim, index dims at dim..dim+nidx, then the
   * operand dims after dim */
  for (int64_t d = bd; d < dim; d++) g.offset_dims[g.n_offset++] = d;
  for (int64_t d = dim + 1; d < xr; d++) g.offset_dims[g.n_offset++] = d - 1 + nidx;
  return gather_emit(L, op, &g, -1);
}
