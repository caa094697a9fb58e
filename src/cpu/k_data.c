/* cjrt: constants and data movement: constant, iota, broadcast_in_dim, broadcast, reshape,
 * transpose, reverse, slice, dynamic_slice, dynamic_update_slice, concatenate, pad,
 * bitcast_convert. Most are one strided copy (cj_strided) whose strides the lowering computed;
 * reshape and equal-width bitcasts are aliases (no step). */
#include <stdlib.h>
#include <string.h>

#include "cpu/k_linalg.h"
#include "cpu/lower.h"

/* ======================================================================== strided copies */

void cj_strided_simplify(cj_strided *s) {
  int32_t r = 0;
  int64_t dims[CJ_MAX_RANK], ss[CJ_MAX_RANK], ds[CJ_MAX_RANK];
  for (int32_t d = 0; d < s->rank; d++) {
    if (s->dims[d] == 1) continue;
    if (s->dims[d] == 0) { /* empty: nothing to copy */
      s->rank = 1;
      s->dims[0] = 0;
      s->sstride[0] = s->dstride[0] = s->esize;
      return;
    }
    if (r > 0 && ss[r - 1] == s->sstride[d] * s->dims[d] && ds[r - 1] == s->dstride[d] * s->dims[d]) {
      dims[r - 1] *= s->dims[d];
      ss[r - 1] = s->sstride[d];
      ds[r - 1] = s->dstride[d];
    } else {
      dims[r] = s->dims[d];
      ss[r] = s->sstride[d];
      ds[r] = s->dstride[d];
      r++;
    }
  }
  s->rank = r;
  for (int32_t d = 0; d < r; d++) {
    s->dims[d] = dims[d];
    s->sstride[d] = ss[d];
    s->dstride[d] = ds[d];
  }
}

cj_strided *cj_strided_new(cj_lw *L, int32_t rank, const int64_t *dims, const int64_t *sst, int es) {
  cj_strided *s = cj_lw_alloc(L, sizeof *s);
  if (!s) return NULL;
  int64_t ds[CJ_MAX_RANK];
  cj_row_strides(rank, dims, ds);
  s->rank = rank;
  s->esize = es;
  for (int32_t d = 0; d < rank; d++) {
    s->dims[d] = dims[d];
    s->sstride[d] = sst[d] * es;
    s->dstride[d] = ds[d] * es;
  }
  return s;
}

static void copy_run(char *dst, const char *src, int es, int64_t n, int64_t ss, int64_t ds) {
  if (ss == es && ds == es) {
    memcpy(dst, src, (size_t)(n * es));
    return;
  }
  if (ss == 0 && ds == es) { /* broadcast one element: vector stores */
    cj_fill_elems(dst, src, es, n);
    return;
  }
  switch (es) {
    case 1:
      for (int64_t i = 0; i < n; i++) dst[i * ds] = src[i * ss];
      break;
    case 2:
      for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 2);
      break;
    case 4:
      for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 4);
      break;
    case 8:
      for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, 8);
      break;
    default:
      for (int64_t i = 0; i < n; i++) memcpy(dst + i * ds, src + i * ss, (size_t)es);
  }
}

/* Whether the last two dims (rank 2 or 3) transpose dense matrices of 4- or 8-byte elements:
 * dst rows are src columns (a transpose, a batched matrix transpose), which run in vector tiles
 * (k_linalg.h's transpose) rather than one element at a time down a column. */
static bool strided_swaps_last2(const cj_strided *s) {
  int r = s->rank;
  int64_t es = s->esize;
  return (r == 2 || r == 3) && (es == 4 || es == 8) && s->dstride[r - 1] == es &&
         s->dstride[r - 2] == s->dims[r - 1] * es && s->sstride[r - 2] == es &&
         s->sstride[r - 1] == s->dims[r - 2] * es;
}

/* Copies outer indices [o0, o1) of the outermost dim (all dims when rank is 1 or 0). */
static void strided_range(const cj_strided *s, char *dst, const char *src, int64_t o0, int64_t o1) {
  int r = s->rank;
  if (r == 0) {
    memcpy(dst, src, (size_t)s->esize);
    return;
  }
  if (strided_swaps_last2(s) && (r == 3 || (o0 == 0 && o1 == s->dims[0]))) {
    bool (*tr)(void *, const void *, int64_t, int64_t, int) = cj_la_pick()->transpose;
    bool done = true;
    if (r == 2)
      done = tr(dst, src, s->dims[1], s->dims[0], s->esize);
    else
      for (int64_t o = o0; o < o1 && done; o++)
        done = tr(dst + o * s->dstride[0], src + o * s->sstride[0], s->dims[2], s->dims[1],
                  s->esize);
    if (done) return;
  }
  if (r == 1) {
    copy_run(dst + o0 * s->dstride[0], src + o0 * s->sstride[0], s->esize, o1 - o0, s->sstride[0],
             s->dstride[0]);
    return;
  }
  int64_t idx[CJ_MAX_RANK] = {0};
  for (int64_t o = o0; o < o1; o++) {
    const char *sp = src + o * s->sstride[0];
    char *dp = dst + o * s->dstride[0];
    /* odometer over dims 1..r-2, inner run over dim r-1 */
    for (int d = 1; d < r - 1; d++) idx[d] = 0;
    for (;;) {
      copy_run(dp, sp, s->esize, s->dims[r - 1], s->sstride[r - 1], s->dstride[r - 1]);
      int d = r - 2;
      for (; d >= 1; d--) {
        idx[d]++;
        sp += s->sstride[d];
        dp += s->dstride[d];
        if (idx[d] < s->dims[d]) break;
        sp -= s->sstride[d] * s->dims[d];
        dp -= s->dstride[d] * s->dims[d];
        idx[d] = 0;
      }
      if (d < 1) break;
    }
  }
}

static bool strided_empty(const cj_strided *s) {
  for (int32_t d = 0; d < s->rank; d++)
    if (s->dims[d] == 0) return true;
  return false;
}

void cj_strided_run(const cj_strided *s, char *dst, const char *src) {
  if (strided_empty(s)) return;
  strided_range(s, dst + s->doff, src + s->soff, 0, s->rank ? s->dims[0] : 1);
}

typedef struct par_strided {
  const cj_strided *s;
  char *dst;
  const char *src;
} par_strided;

static void par_strided_body(void *ctx, int64_t b, int64_t e) {
  par_strided *p = ctx;
  strided_range(p->s, p->dst, p->src, b, e);
}

void cj_strided_run_par(cj_exec_ctx *ctx, const cj_strided *s, char *dst, const char *src) {
  if (strided_empty(s)) return;
  int64_t total = s->esize;
  for (int d = 0; d < s->rank; d++) total *= s->dims[d];
  if (s->rank >= 1 && total >= (1 << 20) && ctx && ctx->pool && cj_pool_size(ctx->pool) > 1 &&
      s->dims[0] > 1) {
    par_strided p = {s, dst + s->doff, src + s->soff};
    int64_t per = total / s->dims[0];
    int64_t grain = (256 << 10) / (per ? per : 1);
    cj_pool_parallel_for(ctx->pool, s->dims[0], grain < 1 ? 1 : grain, par_strided_body, &p);
    return;
  }
  cj_strided_run(s, dst, src);
}

static CJ_MUST_USE cj_status k_strided(cj_exec_ctx *ctx, const cj_step *st) {
  cj_strided_run_par(ctx, st->params, CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->in[0]));
  return NULL;
}

/* emits out = strided view of in */
static CJ_MUST_USE cj_status emit_strided(cj_lw *L, cj_op *op, cj_strided *s, int32_t in, int32_t out) {
  cj_strided_simplify(s);
  if (!cj_lw_emit(L, op, k_strided, s, 1, &in, 1, &out)) return cj_oom();
  return NULL;
}

/* ======================================================================== constant, iota */

typedef struct fill_params {
  int64_t n;
  int esize;
} fill_params;

static CJ_MUST_USE cj_status k_fill(cj_exec_ctx *ctx, const cj_step *st) {
  const fill_params *p = st->params;
  char *d = CJ_PTR(ctx, st->out[0]);
  const char *v = CJ_PTR(ctx, st->in[0]);
  size_t es = (size_t)p->esize, total = (size_t)p->n * es;
  if (total == 0) return NULL;
  bool bytes_equal = true;
  for (size_t i = 1; i < es; i++) bytes_equal = bytes_equal && v[i] == v[0];
  if (bytes_equal) { /* zeros, all-ones, ...: one memset */
    memset(d, v[0], total);
    return NULL;
  }
  /* one element, then doubling copies of what is filled so far (a few KiB at a time) */
  memcpy(d, v, es);
  size_t done = es;
  while (done < total) {
    size_t m = done < ((size_t)1 << 16) ? done : ((size_t)1 << 16) / es * es;
    if (m > total - done) m = total - done;
    memcpy(d + done, d, m);
    done += m;
  }
  return NULL;
}

/* out = n copies of the element in buffer `scalar` */
static CJ_MUST_USE cj_status emit_fill(cj_lw *L, cj_op *op, int32_t scalar, int esize, int64_t n,
                                       int32_t out) {
  fill_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->n = n;
  p->esize = esize;
  if (!cj_lw_emit(L, op, k_fill, p, 1, &scalar, 1, &out)) return cj_oom();
  return NULL;
}

cj_status cj_lw_emit_fill(cj_lw *L, cj_op *op, const void *elem, int esize, int64_t n, int32_t out) {
  return emit_fill(L, op, cj_lw_const(L, elem, esize), esize, n, out);
}

enum { MAX_EXPAND = 4 << 20 };

cj_status cj_lower_constant(cj_lw *L, cj_op *op) {
  const cj_attr *a = cj_op_attr(op, "value");
  cj_value *v = &op->results[0];
  const cj_type *t = v->type;
  if (!a || a->kind != CJ_ATTR_DENSE)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "constant without dense elements");
  if (!cj_type_is_static(t)) return cj_op_error(op, CJ_UNIMPLEMENTED, "dynamic constant");
  if (cj_type_is_quant(t))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "quantized element types are not supported yet");
  int es = cj_dtype_bytes(t->dtype);
  int64_t n = t->num_elements, bytes = n * es;
  if (!a->dense.splat) {
    if ((int64_t)a->dense.nbytes < bytes)
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "constant data is %zu bytes, expected %lld",
                         a->dense.nbytes, (long long)bytes);
    int32_t b = cj_lw_const(L, a->dense.data, bytes);
    return cj_lw_bind(L, v, 1, &b);
  }
  if ((int64_t)a->dense.nbytes < es)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "splat constant without data");
  int32_t scalar = cj_lw_const(L, a->dense.data, es);
  if (n == 1 || n == 0) return cj_lw_bind(L, v, 1, &scalar);
  if (cj_lw_only_ew_users(L, v)) {
    int64_t zeros[CJ_MAX_RANK] = {0};
    if (t->rank > CJ_MAX_RANK) return cj_op_error(op, CJ_UNIMPLEMENTED, "rank too large");
    return cj_lw_make_virtual(L, v, scalar, t->dtype, zeros);
  }
  if (bytes <= MAX_EXPAND) {
    char *buf = malloc((size_t)bytes);
    if (!buf) return cj_oom();
    for (int64_t i = 0; i < n; i++) memcpy(buf + i * es, a->dense.data, (size_t)es);
    int32_t b = cj_lw_const(L, buf, bytes);
    free(buf);
    return cj_lw_bind(L, v, 1, &b);
  }
  int32_t out = cj_lw_new_buf(L, bytes, CJ_BK_ARENA);
  CJ_RETURN_IF_ERROR(emit_fill(L, op, scalar, es, n, out));
  return cj_lw_bind(L, v, 1, &out);
}

typedef struct iota_params {
  cj_dtype dt;
  int64_t n, dimsize, inner;
} iota_params;

#define IOTA_TYPED(T)                                                       \
  do {                                                                      \
    T *o = (T *)out;                                                        \
    for (int64_t i = 0; i < p->n;)                                          \
      for (int64_t k = 0; k < p->dimsize && i < p->n; k++) {                \
        T v = (T)k;                                                         \
        for (int64_t j = 0; j < p->inner && i < p->n; j++) o[i++] = v;      \
      }                                                                     \
  } while (0)

static void iota_fill(const iota_params *p, char *out) {
  switch (p->dt) {
    case CJ_S8: IOTA_TYPED(int8_t); return;
    case CJ_S16: IOTA_TYPED(int16_t); return;
    case CJ_S32: IOTA_TYPED(int32_t); return;
    case CJ_S64: IOTA_TYPED(int64_t); return;
    case CJ_U8: IOTA_TYPED(uint8_t); return;
    case CJ_U16: IOTA_TYPED(uint16_t); return;
    case CJ_U32: IOTA_TYPED(uint32_t); return;
    case CJ_U64: IOTA_TYPED(uint64_t); return;
    case CJ_F32: IOTA_TYPED(float); return;
    case CJ_F64: IOTA_TYPED(double); return;
    default: break;
  }
  cj_dtype_kind kind = cj_dtype_kindof(p->dt);
  for (int64_t i = 0; i < p->n; i++) {
    int64_t k = (i / p->inner) % p->dimsize;
    if (kind == CJ_DK_FLOAT || kind == CJ_DK_COMPLEX)
      cj_elem_set_f64(p->dt, out, (size_t)i, (double)k);
    else
      cj_elem_set_i64(p->dt, out, (size_t)i, k);
  }
}
#undef IOTA_TYPED

static CJ_MUST_USE cj_status k_iota(cj_exec_ctx *ctx, const cj_step *st) {
  iota_fill(st->params, CJ_PTR(ctx, st->out[0]));
  return NULL;
}

cj_status cj_lower_iota(cj_lw *L, cj_op *op) {
  cj_value *v = &op->results[0];
  const cj_type *t = v->type;
  int64_t dim;
  if (!cj_op_get_i64(op, "iota_dimension", &dim) || !cj_type_is_static(t) || dim < 0 ||
      dim >= t->rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad iota");
  if (cj_type_is_quant(t))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "quantized element types are not supported yet");
  iota_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->dt = t->dtype;
  p->n = t->num_elements;
  p->dimsize = t->dims[dim];
  p->inner = 1;
  for (int32_t d = (int32_t)dim + 1; d < t->rank; d++) p->inner *= t->dims[d];
  int64_t bytes = cj_lw_type_bytes(t);
  if (bytes <= MAX_EXPAND * 4) {
    char *buf = calloc(1, (size_t)(bytes ? bytes : 1));
    if (!buf) return cj_oom();
    iota_fill(p, buf);
    int32_t b = cj_lw_const(L, buf, bytes);
    free(buf);
    return cj_lw_bind(L, v, 1, &b);
  }
  int32_t out = cj_lw_new_buf(L, bytes, CJ_BK_ARENA);
  if (!cj_lw_emit(L, op, k_iota, p, 0, NULL, 1, &out)) return cj_oom();
  return cj_lw_bind(L, v, 1, &out);
}

/* ======================================================================== broadcasts */

static CJ_MUST_USE cj_status broadcast_common(cj_lw *L, cj_op *op, const int64_t *bd, int64_t nbd) {
  cj_value *v = &op->results[0];
  cj_value *x = op->operands[0];
  const cj_type *t = v->type, *xt = x->type;
  if (!cj_type_is_static(t) || !cj_type_is_static(xt))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "dynamic shapes are not supported here");
  if (cj_type_is_quant(t))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "quantized element types are not supported yet");
  if (nbd != xt->rank || t->rank > CJ_MAX_RANK)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "broadcast_dimensions has %lld entries for rank %d",
                       (long long)nbd, xt->rank);
  int32_t src;
  cj_dtype sdt = xt->dtype;
  int64_t xs[CJ_MAX_RANK];
  if (cj_lw_value_is_virtual(L, x)) {
    const int64_t *vs;
    cj_lw_virtual_view(L, x, &src, &sdt, &vs);
    memcpy(xs, vs, sizeof(int64_t) * (size_t)xt->rank);
  } else {
    cj_lw_tensor xt_;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &xt_));
    src = xt_.buf;
    cj_row_strides(xt->rank, xt->dims, xs);
  }
  int64_t strides[CJ_MAX_RANK] = {0};
  for (int64_t i = 0; i < nbd; i++) {
    int64_t d = bd[i];
    if (d < 0 || d >= t->rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad broadcast dimension");
    strides[d] = (xt->dims[i] == t->dims[d]) ? xs[i] : 0;
  }
  if (cj_lw_only_ew_users(L, v) && t->num_elements > 0)
    return cj_lw_make_virtual(L, v, src, sdt, strides);
  cj_strided *s = cj_strided_new(L, t->rank, t->dims, strides, cj_dtype_bytes(sdt));
  if (!s) return cj_oom();
  int32_t out = cj_lw_new_buf(L, cj_lw_type_bytes(t), CJ_BK_ARENA);
  CJ_RETURN_IF_ERROR(emit_strided(L, op, s, src, out));
  return cj_lw_bind(L, v, 1, &out);
}

cj_status cj_lower_broadcast_in_dim(cj_lw *L, cj_op *op) {
  int64_t bd[CJ_MAX_RANK], n = 0;
  if (!cj_op_get_i64s(op, "broadcast_dimensions", bd, CJ_MAX_RANK, &n) || n > CJ_MAX_RANK)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad broadcast_dimensions");
  return broadcast_common(L, op, bd, n);
}

cj_status cj_lower_broadcast(cj_lw *L, cj_op *op) {
  int64_t sizes[CJ_MAX_RANK], n = 0;
  if (!cj_op_get_i64s(op, "broadcast_sizes", sizes, CJ_MAX_RANK, &n))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad broadcast_sizes");
  int32_t xr = op->operands[0]->type->rank;
  int64_t bd[CJ_MAX_RANK];
  if (xr + n > CJ_MAX_RANK) return cj_op_error(op, CJ_UNIMPLEMENTED, "rank too large");
  for (int32_t i = 0; i < xr; i++) bd[i] = n + i;
  return broadcast_common(L, op, bd, xr);
}

/* ======================================================================== shape ops */

cj_status cj_lower_reshape(cj_lw *L, cj_op *op) {
  const cj_type *t = op->results[0].type;
  if (!cj_type_is_static(t)) return cj_op_error(op, CJ_UNIMPLEMENTED, "dynamic reshape");
  return cj_lw_alias(L, op, 0, op->operands[0]);
}

cj_status cj_lower_transpose(cj_lw *L, cj_op *op) {
  cj_lw_tensor x, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  int64_t perm[CJ_MAX_RANK], n = 0;
  if (!cj_op_get_i64s(op, "permutation", perm, CJ_MAX_RANK, &n) || n != x.rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad permutation");
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  int64_t xs[CJ_MAX_RANK], sst[CJ_MAX_RANK];
  cj_row_strides(x.rank, x.dims, xs);
  for (int32_t d = 0; d < r.rank; d++) {
    if (perm[d] < 0 || perm[d] >= x.rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad permutation");
    sst[d] = xs[perm[d]];
  }
  cj_strided *s = cj_strided_new(L, r.rank, r.dims, sst, cj_dtype_bytes(x.dtype));
  if (!s) return cj_oom();
  return emit_strided(L, op, s, x.buf, r.buf);
}

cj_status cj_lower_reverse(cj_lw *L, cj_op *op) {
  cj_lw_tensor x, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  int64_t dims[CJ_MAX_RANK], n = 0;
  if (!cj_op_get_i64s(op, "dimensions", dims, CJ_MAX_RANK, &n))
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dimensions");
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  int64_t xs[CJ_MAX_RANK];
  cj_row_strides(x.rank, x.dims, xs);
  cj_strided *s = cj_strided_new(L, x.rank, x.dims, xs, cj_dtype_bytes(x.dtype));
  if (!s) return cj_oom();
  for (int64_t i = 0; i < n; i++) {
    int64_t d = dims[i];
    if (d < 0 || d >= x.rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dimension");
    if (s->sstride[d] > 0 && x.dims[d] > 0) { /* (a dimension listed twice flips back) */
      s->soff += (x.dims[d] - 1) * s->sstride[d];
      s->sstride[d] = -s->sstride[d];
    } else if (x.dims[d] > 0) {
      s->sstride[d] = -s->sstride[d];
      s->soff -= (x.dims[d] - 1) * s->sstride[d];
    }
  }
  return emit_strided(L, op, s, x.buf, r.buf);
}

cj_status cj_lower_slice(cj_lw *L, cj_op *op) {
  cj_lw_tensor x, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  int64_t start[CJ_MAX_RANK], stride[CJ_MAX_RANK], n1 = 0, n2 = 0;
  if (!cj_op_get_i64s(op, "start_indices", start, CJ_MAX_RANK, &n1) ||
      !cj_op_get_i64s(op, "strides", stride, CJ_MAX_RANK, &n2) || n1 != x.rank || n2 != x.rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad slice attributes");
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  int es = cj_dtype_bytes(x.dtype);
  int64_t xs[CJ_MAX_RANK], sst[CJ_MAX_RANK];
  cj_row_strides(x.rank, x.dims, xs);
  for (int32_t d = 0; d < r.rank; d++) sst[d] = xs[d] * stride[d];
  cj_strided *s = cj_strided_new(L, r.rank, r.dims, sst, es);
  if (!s) return cj_oom();
  for (int32_t d = 0; d < r.rank; d++)
    if (r.dims[d] > 0) s->soff += start[d] * xs[d] * es;
  return emit_strided(L, op, s, x.buf, r.buf);
}

/* ---- dynamic_slice / dynamic_update_slice: start indices read at run time, clamped ---- */

typedef struct dyn_params {
  cj_strided s;       /* offsets filled at run time */
  int32_t rank;
  cj_dtype idx_dt[CJ_MAX_RANK];
  int64_t limit[CJ_MAX_RANK];  /* operand dim - slice size (the largest start) */
  int64_t stride[CJ_MAX_RANK]; /* operand row stride in bytes */
  int64_t full_bytes;          /* dynamic_update_slice: operand bytes */
  bool update;
} dyn_params;

static int64_t dyn_offset(const dyn_params *p, cj_exec_ctx *ctx, const cj_step *st, int first) {
  int64_t off = 0;
  for (int32_t d = 0; d < p->rank; d++) {
    int64_t i = cj_elem_get_i64(p->idx_dt[d], CJ_PTR(ctx, st->in[first + d]), 0);
    if (cj_dtype_kindof(p->idx_dt[d]) == CJ_DK_UINT && i < 0) i = INT64_MAX;
    if (i < 0) i = 0;
    if (i > p->limit[d]) i = p->limit[d];
    off += i * p->stride[d];
  }
  return off;
}

static CJ_MUST_USE cj_status k_dynamic_slice(cj_exec_ctx *ctx, const cj_step *st) {
  const dyn_params *p = st->params;
  cj_strided s = p->s;
  s.soff = dyn_offset(p, ctx, st, 1);
  cj_strided_run(&s, CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->in[0]));
  return NULL;
}

static CJ_MUST_USE cj_status k_dynamic_update_slice(cj_exec_ctx *ctx, const cj_step *st) {
  const dyn_params *p = st->params;
  char *out = CJ_PTR(ctx, st->out[0]);
  const char *x = CJ_PTR(ctx, st->in[0]);
  if (out != x && p->full_bytes) memcpy(out, x, (size_t)p->full_bytes);
  cj_strided s = p->s;
  s.doff = dyn_offset(p, ctx, st, 2);
  cj_strided_run(&s, out, CJ_PTR(ctx, st->in[1]));
  return NULL;
}

/* the copy between operand x and a window w of it at a start found at run time: x into w
 * (dynamic_slice), or w into x (update) */
static void dyn_window(dyn_params *p, const cj_lw_tensor *x, const cj_lw_tensor *w, bool update) {
  int es = cj_dtype_bytes(x->dtype);
  int64_t xs[CJ_MAX_RANK], ws[CJ_MAX_RANK];
  cj_row_strides(x->rank, x->dims, xs);
  cj_row_strides(w->rank, w->dims, ws);
  p->rank = x->rank;
  p->s.rank = w->rank;
  p->s.esize = es;
  for (int32_t d = 0; d < w->rank; d++) {
    p->s.dims[d] = w->dims[d];
    p->s.sstride[d] = (update ? ws[d] : xs[d]) * es;
    p->s.dstride[d] = (update ? xs[d] : ws[d]) * es;
    p->limit[d] = x->dims[d] - w->dims[d];
    p->stride[d] = xs[d] * es;
  }
}

static CJ_MUST_USE cj_status dyn_indices(cj_lw *L, cj_op *op, uint32_t first, int32_t rank, dyn_params *p,
                             int32_t *bufs) {
  if (op->nopnds != first + (uint32_t)rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "expected %d start indices", rank);
  for (int32_t d = 0; d < rank; d++) {
    cj_lw_tensor it;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, first + (uint32_t)d, &it));
    if (it.nelems != 1 || !cj_dtype_is_int(it.dtype))
      return cj_op_error(op, CJ_INVALID_ARGUMENT, "start index %d must be an integer scalar", d);
    p->idx_dt[d] = it.dtype;
    bufs[d] = it.buf;
  }
  return NULL;
}

/* ---- a dynamic_slice read in place by the dot that is its only user ----
 * A window that is contiguous in its operand (ones, then one partial dim, then whole dims: rows
 * of a signal, one step of a scan's stacked inputs) is not copied when its only user is a dot:
 * the dot is lowered right away (ahead of its place) and each of its steps that reads the window
 * runs through k_dynview, which points those inputs at the clamped start in the operand. The
 * dot reads the same elements in the same order, so its results are the same bits (the dot
 * kernels do not depend on the alignment of their operands). 500 steps of a loop that slid a
 * [64,128] f32 window over a signal copied 32 KiB per step for a 64 x 128 matvec. */
enum { DYNVIEW_MAX_IN = 16 };

typedef struct dynview_params {
  const dyn_params *d;
  cj_kernel_fn fn;      /* the reader's kernel and parameters */
  const void *params;
  uint32_t nin;         /* the reader's inputs: in[0, nin), then the indices */
  uint32_t view;        /* bit i: input i is the window, read from the operand in its slot */
} dynview_params;

static CJ_MUST_USE cj_status k_dynview(cj_exec_ctx *ctx, const cj_step *st) {
  const dynview_params *p = st->params;
  cj_slot in[DYNVIEW_MAX_IN];
  memcpy(in, st->in, sizeof(cj_slot) * p->nin);
  int64_t off = dyn_offset(p->d, ctx, st, (int)p->nin);
  for (uint32_t i = 0; i < p->nin; i++)
    if (p->view >> i & 1) in[i].off += off;
  cj_step s = *st;
  s.fn = p->fn;
  s.params = p->params;
  s.in = in;
  s.nin = p->nin;
  return p->fn(ctx, &s);
}

/* the uses of v in op, its operands and (anywhere) in its regions; *nested when any is there */
static int64_t uses_in(const cj_op *op, const cj_value *v, bool *nested) {
  int64_t n = 0;
  for (uint32_t i = 0; i < op->nopnds; i++) n += op->operands[i] == v;
  for (uint32_t r = 0; r < op->nregions; r++)
    for (const cj_block *b = op->regions[r].first; b; b = b->next)
      for (const cj_op *o = b->first; o; o = o->next) {
        int64_t k = uses_in(o, v, nested);
        if (k) *nested = true;
        n += k;
      }
  return n;
}

/* The dot that is the only user of v (the result of op), in op's block, with its other operands
 * lowered already; else NULL. */
static cj_op *dynview_user(cj_lw *L, cj_op *op, cj_value *v) {
  cj_op *user = NULL;
  for (cj_op *o = op->next; o; o = o->next) {
    bool nested = false;
    int64_t k = uses_in(o, v, &nested);
    if (!k) continue;
    if (nested || user || (o->kind != CJ_OP_DOT_GENERAL && o->kind != CJ_OP_DOT)) return NULL;
    user = o;
  }
  for (uint32_t i = 0; user && i < user->nopnds; i++)
    if (user->operands[i] != v && !cj_lw_value_is_bound(L, user->operands[i])) return NULL;
  return user;
}

/* whether window w of x is one contiguous run of x's elements */
static bool dyn_contiguous(const cj_lw_tensor *x, const cj_lw_tensor *w) {
  if (w->rank != x->rank || w->nelems <= 0) return false;
  int32_t d = 0;
  while (d < w->rank && w->dims[d] == 1) d++;
  for (d++; d < w->rank; d++)
    if (w->dims[d] != x->dims[d]) return false;
  return true;
}

/* Lowers the dot reading window r (buffer r->buf, never written) of x ahead, wrapping its
 * readers of the window (*done); *done = false when it cannot, and nothing was emitted. */
static CJ_MUST_USE cj_status dynview_lower(cj_lw *L, cj_op *op, const dyn_params *p, const int32_t *in,
                                           const cj_lw_tensor *x, const cj_lw_tensor *r, bool *done) {
  *done = false;
  cj_op *user = dynview_user(L, op, &op->results[0]);
  if (!user || !dyn_contiguous(x, r)) return NULL;
  uint32_t first = cj_lw_nsteps(L);
  CJ_RETURN_IF_ERROR(user->kind == CJ_OP_DOT ? cj_lower_dot(L, user) : cj_lower_dot_general(L, user));
  if (!cj_lw_take_op(L, user)) return cj_oom();
  *done = true;
  for (uint32_t k = first; k < cj_lw_nsteps(L); k++) {
    cj_step *st = cj_lw_step_at(L, k);
    uint32_t view = 0;
    for (uint32_t i = 0; i < st->nin; i++)
      if (st->in[i].buf == (uint32_t)r->buf) view |= 1u << (i < 31 ? i : 31);
    if (!view) continue;
    if (st->nin > DYNVIEW_MAX_IN) /* (no dot kernel has as many inputs) */
      return cj_op_error(op, CJ_INTERNAL, "a step reading a dynamic window has %u inputs", st->nin);
    dynview_params *v = cj_lw_alloc(L, sizeof *v);
    int32_t bufs[DYNVIEW_MAX_IN + CJ_MAX_RANK];
    if (!v) return cj_oom();
    *v = (dynview_params){p, st->fn, st->params, st->nin, view};
    for (uint32_t i = 0; i < st->nin; i++) bufs[i] = view >> i & 1 ? x->buf : (int32_t)st->in[i].buf;
    for (int32_t d = 0; d < x->rank; d++) bufs[st->nin + (uint32_t)d] = in[1 + d];
    if (!cj_lw_step_set_inputs(L, st, st->nin + (uint32_t)x->rank, bufs)) return cj_oom();
    st->fn = k_dynview;
    st->params = v;
  }
  return NULL;
}

cj_status cj_lower_dynamic_slice(cj_lw *L, cj_op *op) {
  cj_lw_tensor x, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  dyn_params *p = cj_lw_alloc(L, sizeof *p);
  int32_t *in = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(x.rank + 1));
  if (!p || !in) return cj_oom();
  in[0] = x.buf;
  CJ_RETURN_IF_ERROR(dyn_indices(L, op, 1, x.rank, p, in + 1));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  dyn_window(p, &x, &r, false);
  bool done;
  CJ_RETURN_IF_ERROR(dynview_lower(L, op, p, in, &x, &r, &done));
  if (done) return NULL;
  /* no simplification: the offsets depend on the original dims */
  if (!cj_lw_emit(L, op, k_dynamic_slice, p, (uint32_t)x.rank + 1, in, 1, &r.buf)) return cj_oom();
  return NULL;
}

cj_status cj_lower_dynamic_update_slice(cj_lw *L, cj_op *op) {
  cj_lw_tensor x, u, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &u));
  dyn_params *p = cj_lw_alloc(L, sizeof *p);
  int32_t *in = cj_lw_alloc(L, sizeof(int32_t) * (size_t)(x.rank + 2));
  if (!p || !in) return cj_oom();
  in[0] = x.buf;
  in[1] = u.buf;
  CJ_RETURN_IF_ERROR(dyn_indices(L, op, 2, x.rank, p, in + 2));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  p->update = true;
  p->full_bytes = x.nbytes;
  dyn_window(p, &x, &u, true);
  cj_lw_hint_inplace(L, r.buf, x.buf);
  if (!cj_lw_emit(L, op, k_dynamic_update_slice, p, (uint32_t)x.rank + 2, in, 1, &r.buf))
    return cj_oom();
  return NULL;
}

/* ======================================================================== concatenate */

typedef struct concat_params {
  int64_t outer, out_row; /* bytes per outer index in the result */
  int32_t n;
  int64_t *row;           /* bytes per outer index of each operand */
} concat_params;

/* Rows of a few bytes copy with a constant size (one load and store each, where a memcpy call
 * per row cost more than the copy): JAX builds every multi-dimensional gather or scatter index
 * (x[r, c], .at[r, c], take_along_axis) by concatenating [n, 1] columns. */
#define CONCAT_ROWS(NB)                                                           \
  for (int64_t o = 0; o < p->outer; o++) memcpy(out + o * p->out_row + off, in + o * row, NB)
static CJ_MUST_USE cj_status k_concat(cj_exec_ctx *ctx, const cj_step *st) {
  const concat_params *p = st->params;
  char *out = CJ_PTR(ctx, st->out[0]);
  int64_t off = 0;
  for (int32_t k = 0; k < p->n; k++) {
    const char *in = CJ_PTR(ctx, st->in[k]);
    int64_t row = p->row[k];
    switch (row) {
      case 0: break;
      case 1: CONCAT_ROWS(1); break;
      case 2: CONCAT_ROWS(2); break;
      case 4: CONCAT_ROWS(4); break;
      case 8: CONCAT_ROWS(8); break;
      case 16: CONCAT_ROWS(16); break;
      default: CONCAT_ROWS((size_t)row);
    }
    off += row;
  }
  return NULL;
}
#undef CONCAT_ROWS

cj_status cj_lower_concatenate(cj_lw *L, cj_op *op) {
  int64_t dim;
  if (!cj_op_get_i64(op, "dimension", &dim)) return cj_op_error(op, CJ_INVALID_ARGUMENT, "no dimension");
  cj_lw_tensor r;
  uint32_t n = op->nopnds;
  concat_params *p = cj_lw_alloc(L, sizeof *p);
  int32_t *in = cj_lw_alloc(L, sizeof(int32_t) * (n ? n : 1));
  int64_t *row = cj_lw_alloc(L, sizeof(int64_t) * (n ? n : 1));
  if (!p || !in || !row) return cj_oom();
  for (uint32_t k = 0; k < n; k++) {
    cj_lw_tensor x;
    CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, k, &x));
    if (dim < 0 || dim >= x.rank) return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad dimension");
    in[k] = x.buf;
    int64_t inner = cj_dtype_bytes(x.dtype);
    for (int32_t d = (int32_t)dim; d < x.rank; d++) inner *= x.dims[d];
    row[k] = inner;
  }
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  p->outer = 1;
  for (int32_t d = 0; d < dim; d++) p->outer *= r.dims[d];
  p->out_row = cj_dtype_bytes(r.dtype);
  for (int32_t d = (int32_t)dim; d < r.rank; d++) p->out_row *= r.dims[d];
  p->n = (int32_t)n;
  p->row = row;
  if (!cj_lw_emit(L, op, k_concat, p, n, in, 1, &r.buf)) return cj_oom();
  return NULL;
}

/* ======================================================================== pad */

typedef struct pad_params {
  int64_t n;
  int esize;
  bool any;
  cj_strided s;
} pad_params;

/* (lower.h) A memcpy call of a variable size per element cost more than the rest of a pad. */
void cj_fill_value(char *out, const char *v, int es, int64_t n) {
  bool same = true;
  for (int i = 1; i < es; i++) same = same && v[i] == v[0];
  if (same) {
    memset(out, v[0], (size_t)(n * es));
    return;
  }
  switch (es) {
    case 2: {
      uint16_t x;
      memcpy(&x, v, 2);
      for (int64_t i = 0; i < n; i++) memcpy(out + i * 2, &x, 2);
      break;
    }
    case 4: {
      uint32_t x;
      memcpy(&x, v, 4);
      for (int64_t i = 0; i < n; i++) memcpy(out + i * 4, &x, 4);
      break;
    }
    case 8: {
      uint64_t x;
      memcpy(&x, v, 8);
      for (int64_t i = 0; i < n; i++) memcpy(out + i * 8, &x, 8);
      break;
    }
    default:
      for (int64_t i = 0; i < n; i++) memcpy(out + i * es, v, (size_t)es);
  }
}

static CJ_MUST_USE cj_status k_pad(cj_exec_ctx *ctx, const cj_step *st) {
  const pad_params *p = st->params;
  char *out = CJ_PTR(ctx, st->out[0]);
  const char *pv = CJ_PTR(ctx, st->in[1]);
  cj_fill_value(out, pv, p->esize, p->n);
  if (p->any) cj_strided_run(&p->s, out, CJ_PTR(ctx, st->in[0]));
  return NULL;
}

cj_status cj_lower_pad(cj_lw *L, cj_op *op) {
  cj_lw_tensor x, v, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &v));
  int64_t lo[CJ_MAX_RANK], hi[CJ_MAX_RANK], in_[CJ_MAX_RANK], a = 0, b = 0, c = 0;
  if (!cj_op_get_i64s(op, "edge_padding_low", lo, CJ_MAX_RANK, &a) ||
      !cj_op_get_i64s(op, "edge_padding_high", hi, CJ_MAX_RANK, &b) ||
      !cj_op_get_i64s(op, "interior_padding", in_, CJ_MAX_RANK, &c) || a != x.rank ||
      b != x.rank || c != x.rank)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bad padding attributes");
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  pad_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  int es = cj_dtype_bytes(x.dtype);
  p->n = r.nelems;
  p->esize = es;
  p->any = x.nelems > 0;
  int64_t xs[CJ_MAX_RANK], rs[CJ_MAX_RANK];
  cj_row_strides(x.rank, x.dims, xs);
  cj_row_strides(r.rank, r.dims, rs);
  p->s.rank = x.rank;
  p->s.esize = es;
  for (int32_t d = 0; d < x.rank && p->any; d++) {
    int64_t step = in_[d] + 1;
    /* operand indices i with 0 <= lo + i*step < out dim */
    int64_t imin = 0;
    if (lo[d] < 0) imin = (-lo[d] + step - 1) / step;
    int64_t imax = x.dims[d] - 1;
    int64_t lim = r.dims[d] - 1 - lo[d];
    if (lim < 0)
      imax = -1;
    else if (lim / step < imax)
      imax = lim / step;
    int64_t cnt = imax - imin + 1;
    if (cnt <= 0) {
      p->any = false;
      break;
    }
    p->s.dims[d] = cnt;
    p->s.sstride[d] = xs[d] * es;
    p->s.dstride[d] = rs[d] * step * es;
    p->s.soff += imin * xs[d] * es;
    p->s.doff += (lo[d] + imin * step) * rs[d] * es;
  }
  if (p->any) cj_strided_simplify(&p->s);
  int32_t ins[2] = {x.buf, v.buf};
  if (!cj_lw_emit(L, op, k_pad, p, 2, ins, 1, &r.buf)) return cj_oom();
  return NULL;
}

/* A pad whose users are all elementwise ops or static slices of them stays virtual: a bounded
 * view of its operand (elements outside the operand's box read the padding value), read in
 * place by the fused loops (lower_ew.c) instead of a padded copy per execution (a stencil's
 * jnp.pad then four shifted slices). Only constant padding values and no interior padding;
 * otherwise *done stays false and cj_lower_pad runs. */
cj_status cj_lw_pad_view(cj_lw *L, cj_op *op, bool *done) {
  *done = false;
  cj_value *v = &op->results[0], *x = op->operands[0];
  const cj_type *t = v->type, *xt = x->type;
  if (op->nresults != 1 || op->nopnds != 2 || !cj_type_is_static(t) || !cj_type_is_static(xt) ||
      cj_type_is_quant(t) || cj_type_is_quant(xt) || t->num_elements <= 0 ||
      xt->num_elements <= 0 || t->rank != xt->rank || t->rank < 1 || t->rank > CJ_MAX_RANK ||
      cj_lw_value_is_view(L, x) || !cj_lw_only_view_users(L, v))
    return NULL;
  int64_t lo[CJ_MAX_RANK], hi[CJ_MAX_RANK], in_[CJ_MAX_RANK], a = 0, b = 0, c = 0;
  if (!cj_op_get_i64s(op, "edge_padding_low", lo, CJ_MAX_RANK, &a) ||
      !cj_op_get_i64s(op, "edge_padding_high", hi, CJ_MAX_RANK, &b) ||
      !cj_op_get_i64s(op, "interior_padding", in_, CJ_MAX_RANK, &c) || a != t->rank ||
      b != t->rank || c != t->rank)
    return NULL; /* cj_lower_pad reports it */
  for (int32_t d = 0; d < t->rank; d++)
    if (in_[d] != 0 || lo[d] + xt->dims[d] + hi[d] != t->dims[d]) return NULL;
  cj_lw_tensor xb, pv;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 1, &pv));
  if (!cj_lw_const_bytes(L, pv.buf)) return NULL;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &xb));
  int64_t xs[CJ_MAX_RANK], blo[CJ_MAX_RANK], bhi[CJ_MAX_RANK], off = 0;
  cj_row_strides(xt->rank, xt->dims, xs);
  for (int32_t d = 0; d < t->rank; d++) {
    off -= lo[d] * xs[d]; /* result index j reads operand index j - lo */
    blo[d] = lo[d] > 0 ? lo[d] : 0;
    bhi[d] = lo[d] + xt->dims[d] < t->dims[d] ? lo[d] + xt->dims[d] : t->dims[d];
  }
  *done = true;
  return cj_lw_make_bounded_view(L, v, xb.buf, xt->dtype, off, xs, blo, bhi, pv.buf);
}

/* (lower.h) a bounded view written out: the padding value everywhere, then the box */
cj_status cj_lw_emit_bounded(cj_lw *L, const cj_op *op, const cj_type *t, int32_t src, int64_t off,
                             const int64_t *strides, const int64_t *lo, const int64_t *hi,
                             int32_t pad, int32_t out) {
  pad_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  memset(p, 0, sizeof *p);
  int es = cj_dtype_bytes(t->dtype);
  int64_t rs[CJ_MAX_RANK];
  cj_row_strides(t->rank, t->dims, rs);
  p->n = t->num_elements;
  p->esize = es;
  p->any = true;
  p->s.rank = t->rank;
  p->s.esize = es;
  int64_t soff = off;
  for (int32_t d = 0; d < t->rank; d++) {
    if (hi[d] <= lo[d]) p->any = false;
    p->s.dims[d] = hi[d] - lo[d];
    p->s.sstride[d] = strides[d] * es;
    p->s.dstride[d] = rs[d] * es;
    soff += lo[d] * strides[d];
    p->s.doff += lo[d] * rs[d] * es;
  }
  p->s.soff = soff * es;
  if (p->any) cj_strided_simplify(&p->s);
  int32_t ins[2] = {src, pad};
  if (!cj_lw_emit(L, op, k_pad, p, 2, ins, 1, &out)) return cj_oom();
  return NULL;
}

/* ======================================================================== bitcast_convert */

typedef struct bitcast_params {
  int64_t out_bytes, n_out;
  int in_bits, out_bits;
} bitcast_params;

static CJ_MUST_USE cj_status k_bitcast(cj_exec_ctx *ctx, const cj_step *st) {
  const bitcast_params *p = st->params;
  cj_bitcast_copy(CJ_PTR(ctx, st->out[0]), CJ_PTR(ctx, st->in[0]), p->out_bytes, p->in_bits,
                  p->out_bits, p->n_out);
  return NULL;
}

cj_status cj_lower_bitcast_convert(cj_lw *L, cj_op *op) {
  const cj_type *xt = op->operands[0]->type, *rt = op->results[0].type;
  if (!cj_type_is_static(xt) || !cj_type_is_static(rt))
    return cj_op_error(op, CJ_UNIMPLEMENTED, "dynamic shapes are not supported here");
  int ib = cj_dtype_bits(xt->dtype), ob = cj_dtype_bits(rt->dtype);
  /* equal storage (incl. quantized <-> its storage type, as the quant pass bridges them) */
  if (((ib % 8 == 0 && ob % 8 == 0) || xt->dtype == rt->dtype) &&
      cj_lw_type_bytes(xt) == cj_lw_type_bytes(rt))
    return cj_lw_alias(L, op, 0, op->operands[0]);
  cj_lw_tensor x, r;
  CJ_RETURN_IF_ERROR(cj_lw_operand(L, op, 0, &x));
  CJ_RETURN_IF_ERROR(cj_lw_result(L, op, 0, &r));
  if (x.nelems * ib != r.nelems * ob)
    return cj_op_error(op, CJ_INVALID_ARGUMENT, "bitcast changes the number of bits");
  bitcast_params *p = cj_lw_alloc(L, sizeof *p);
  if (!p) return cj_oom();
  p->out_bytes = r.nbytes;
  p->n_out = r.nelems;
  p->in_bits = ib;
  p->out_bits = ob;
  if (!cj_lw_emit(L, op, k_bitcast, p, 1, &x.buf, 1, &r.buf)) return cj_oom();
  return NULL;
}
