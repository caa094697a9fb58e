/* cjrt reference backend: ops with reduction bodies or index arithmetic: reduce, reduce_window,
 * select_and_scatter, sort (and chlo.top_k), gather, scatter. Each follows the StableHLO
 * specification's index formulas literally, one element at a time; bodies run through
 * cj_rf_call_scalar. */
#include <stdlib.h>
#include <string.h>

#include "reference/ref.h"

enum { MAXN = 16 };

static int64_t pad_at(const cj_op *op, const char *name, int32_t d, int side) {
  const cj_attr *a = cj_op_attr(op, name);
  if (!a || a->kind != CJ_ATTR_DENSE) return 0;
  return cj_dense_get_i64(a, 2 * d + side);
}

static void get_i64s_or(const cj_op *op, const char *name, int64_t *out, int32_t n, int64_t dflt) {
  int64_t got = 0;
  if (!cj_op_get_i64s(op, name, out, RF_MAX_RANK, &got) || got != n)
    for (int32_t i = 0; i < n; i++) out[i] = dflt;
}

/* ---------------------------------------------------------------- reduce */

/* the body is `return add(arg0, arg1)` on a float type */
static bool float_sum_body(const cj_block *b) {
  const cj_op *op = b ? b->first : NULL;
  if (!op || b->nargs != 2 || op->kind != CJ_OP_ADD || !op->next || op->next->kind != CJ_OP_RETURN) return false;
  if (op->next->nopnds != 1 || op->next->operands[0] != &op->results[0]) return false;
  if (!cj_dtype_is_float(op->results[0].type->dtype)) return false;
  const cj_value *x = op->operands[0], *y = op->operands[1];
  return (x == &b->args[0] && y == &b->args[1]) || (x == &b->args[1] && y == &b->args[0]);
}

static CJ_MUST_USE cj_status reduce(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  uint32_t n = op->nopnds / 2;
  if (n == 0 || n > MAXN) return cj_op_error(op, CJ_UNIMPLEMENTED, "reduce of %u operands", n);
  int64_t dims[RF_MAX_RANK], nd = 0, idx[RF_MAX_RANK], oi[RF_MAX_RANK];
  cj_op_get_i64s(op, "dimensions", dims, RF_MAX_RANK, &nd);
  const rv *in0 = ins[0];
  rv *o0 = outs[0];
  for (uint32_t k = 0; k < n; k++) {
    rs init = cj_rs_convert(ins[n + k]->dt, outs[k]->dt, cj_rs_get(ins[n + k]->dt, ins[n + k]->data, 0));
    for (int64_t j = 0; j < outs[k]->n; j++) cj_rs_set(outs[k]->dt, outs[k]->data, j, init);
  }
  cj_block *b = op->regions[0].first;
  rs a[2 * MAXN], r[MAXN];
  if (n == 1 && float_sum_body(b)) { /* a float sum: exact in double, rounded once */
    double *sum = calloc((size_t)(o0->n ? o0->n : 1), sizeof(double));
    if (!sum) return cj_oom();
    for (int64_t j = 0; j < o0->n; j++) sum[j] = cj_rf_getf(o0->dt, o0->data, j);
    for (int64_t i = 0; i < in0->n; i++) {
      cj_rf_unravel(i, in0->rank, in0->dims, idx);
      int32_t q = 0;
      for (int32_t d = 0; d < in0->rank; d++)
        if (!cj_rf_in_list(d, dims, nd)) oi[q++] = idx[d];
      sum[cj_rf_ravel(o0->rank, o0->dims, oi)] += cj_rf_getf(in0->dt, in0->data, i);
    }
    for (int64_t j = 0; j < o0->n; j++) cj_rf_setf(o0->dt, o0->data, j, sum[j]);
    free(sum);
    return NULL;
  }
  for (int64_t i = 0; i < in0->n; i++) {
    cj_rf_unravel(i, in0->rank, in0->dims, idx);
    int32_t q = 0;
    for (int32_t d = 0; d < in0->rank; d++)
      if (!cj_rf_in_list(d, dims, nd)) oi[q++] = idx[d];
    int64_t o = cj_rf_ravel(o0->rank, o0->dims, oi);
    for (uint32_t k = 0; k < n; k++) {
      a[k] = cj_rs_get(outs[k]->dt, outs[k]->data, o);
      a[n + k] = cj_rs_get(ins[k]->dt, ins[k]->data, i);
    }
    CJ_RETURN_IF_ERROR(cj_rf_call_scalar(x, b, a, r));
    for (uint32_t k = 0; k < n; k++) cj_rs_set(outs[k]->dt, outs[k]->data, o, r[k]);
  }
  return NULL;
}

/* ---------------------------------------------------------------- reduce_window */

static CJ_MUST_USE cj_status reduce_window(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  uint32_t n = op->nopnds / 2;
  if (n == 0 || n > MAXN) return cj_op_error(op, CJ_UNIMPLEMENTED, "reduce_window of %u operands", n);
  const rv *in0 = ins[0];
  int32_t R = in0->rank;
  int64_t wd[RF_MAX_RANK], ws[RF_MAX_RANK], bdl[RF_MAX_RANK], wdl[RF_MAX_RANK], lo[RF_MAX_RANK];
  get_i64s_or(op, "window_dimensions", wd, R, 1);
  get_i64s_or(op, "window_strides", ws, R, 1);
  get_i64s_or(op, "base_dilations", bdl, R, 1);
  get_i64s_or(op, "window_dilations", wdl, R, 1);
  for (int32_t d = 0; d < R; d++) lo[d] = pad_at(op, "padding", d, 0);
  int64_t wn = 1;
  for (int32_t d = 0; d < R; d++) wn *= wd[d];
  cj_block *b = op->regions[0].first;
  rs a[2 * MAXN], acc[MAXN];
  int64_t oi[RF_MAX_RANK], wi[RF_MAX_RANK], ii[RF_MAX_RANK];
  rv *o0 = outs[0];
  for (int64_t o = 0; o < o0->n; o++) {
    cj_rf_unravel(o, R, o0->dims, oi);
    for (uint32_t k = 0; k < n; k++) acc[k] = cj_rs_get(ins[n + k]->dt, ins[n + k]->data, 0);
    for (int64_t w = 0; w < wn; w++) {
      cj_rf_unravel(w, R, wd, wi);
      bool inside = true;
      for (int32_t d = 0; d < R && inside; d++) {
        int64_t p = oi[d] * ws[d] + wi[d] * wdl[d] - lo[d];
        if (p < 0 || p % bdl[d] != 0 || p / bdl[d] >= in0->dims[d]) inside = false;
        else ii[d] = p / bdl[d];
      }
      int64_t src = inside ? cj_rf_ravel(R, in0->dims, ii) : 0;
      for (uint32_t k = 0; k < n; k++) {
        a[k] = acc[k];
        a[n + k] = inside ? cj_rs_get(ins[k]->dt, ins[k]->data, src) : cj_rs_get(ins[n + k]->dt, ins[n + k]->data, 0);
      }
      CJ_RETURN_IF_ERROR(cj_rf_call_scalar(x, b, a, acc));
    }
    for (uint32_t k = 0; k < n; k++) cj_rs_set(outs[k]->dt, outs[k]->data, o, acc[k]);
  }
  return NULL;
}

/* ---------------------------------------------------------------- select_and_scatter */

static CJ_MUST_USE cj_status select_and_scatter(rf_exec *x, cj_op *op, rv **ins, rv *out) {
  const rv *in = ins[0], *src = ins[1], *init = ins[2];
  int32_t R = in->rank;
  int64_t wd[RF_MAX_RANK], ws[RF_MAX_RANK], lo[RF_MAX_RANK];
  get_i64s_or(op, "window_dimensions", wd, R, 1);
  get_i64s_or(op, "window_strides", ws, R, 1);
  for (int32_t d = 0; d < R; d++) lo[d] = pad_at(op, "padding", d, 0);
  for (int64_t i = 0; i < out->n; i++) memcpy(out->data + i * out->esize, init->data, (size_t)out->esize);
  int64_t wn = 1;
  for (int32_t d = 0; d < R; d++) wn *= wd[d];
  cj_block *sel = op->regions[0].first, *sc = op->regions[1].first;
  int64_t si[RF_MAX_RANK], wi[RF_MAX_RANK], ii[RF_MAX_RANK];
  for (int64_t s = 0; s < src->n; s++) {
    cj_rf_unravel(s, R, src->dims, si);
    int64_t best = -1;
    rs bv = {0, 0, 0};
    for (int64_t w = 0; w < wn; w++) {
      cj_rf_unravel(w, R, wd, wi);
      bool inside = true;
      for (int32_t d = 0; d < R && inside; d++) {
        ii[d] = si[d] * ws[d] + wi[d] - lo[d];
        if (ii[d] < 0 || ii[d] >= in->dims[d]) inside = false;
      }
      if (!inside) continue;
      int64_t e = cj_rf_ravel(R, in->dims, ii);
      rs ev = cj_rs_get(in->dt, in->data, e);
      if (best < 0) {
        best = e;
        bv = ev;
        continue;
      }
      rs a[2] = {bv, ev}, keep;
      CJ_RETURN_IF_ERROR(cj_rf_call_scalar(x, sel, a, &keep));
      if (!keep.i) {
        best = e;
        bv = ev;
      }
    }
    if (best < 0) continue;
    rs a[2] = {cj_rs_get(out->dt, out->data, best), cj_rs_get(src->dt, src->data, s)}, r;
    CJ_RETURN_IF_ERROR(cj_rf_call_scalar(x, sc, a, &r));
    cj_rs_set(out->dt, out->data, best, r);
  }
  return NULL;
}

/* ---------------------------------------------------------------- sort */

typedef struct sort_ctx {
  rf_exec *x;
  cj_block *cmp;
  rv **ins;
  uint32_t n;
  int64_t base, stride; /* element j of the slice is at base + j * stride */
  cj_status st;
  bool top_k; /* chlo.top_k: descending in the total order */
} sort_ctx;

/* a < b for the comparator */
static bool less(sort_ctx *c, int64_t ja, int64_t jb) {
  if (c->st) return false;
  int64_t ea = c->base + ja * c->stride, eb = c->base + jb * c->stride;
  if (c->top_k) {
    rs va = cj_rs_get(c->ins[0]->dt, c->ins[0]->data, ea), vb = cj_rs_get(c->ins[0]->dt, c->ins[0]->data, eb);
    return cj_rf_compare_total(c->ins[0]->dt, va, vb) > 0;
  }
  rs a[2 * MAXN], r;
  for (uint32_t k = 0; k < c->n; k++) {
    a[2 * k] = cj_rs_get(c->ins[k]->dt, c->ins[k]->data, ea);
    a[2 * k + 1] = cj_rs_get(c->ins[k]->dt, c->ins[k]->data, eb);
  }
  c->st = cj_rf_call_scalar(c->x, c->cmp, a, &r);
  return !c->st && r.i != 0;
}

/* stable merge sort of perm[0..n) */
static void merge_sort(sort_ctx *c, int64_t *perm, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  merge_sort(c, perm, tmp, h);
  merge_sort(c, perm + h, tmp, n - h);
  int64_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = less(c, perm[j], perm[i]) ? perm[j++] : perm[i++];
  while (i < h) tmp[k++] = perm[i++];
  while (j < n) tmp[k++] = perm[j++];
  memcpy(perm, tmp, sizeof(int64_t) * (size_t)n);
}

/* Sorts every slice along `dim`; writes outs[k] (same shape), or for top_k the first kk. */
static CJ_MUST_USE cj_status sort_slices(rf_exec *x, cj_op *op, rv **ins, uint32_t n, int64_t dim, rv **outs, bool top_k,
                             int64_t kk) {
  const rv *in0 = ins[0];
  int64_t len = in0->dims[dim], strides[RF_MAX_RANK], idx[RF_MAX_RANK];
  cj_rf_strides(in0->rank, in0->dims, strides);
  int64_t *perm = malloc(sizeof(int64_t) * (size_t)(len + 1) * 2);
  if (!perm) return cj_oom();
  int64_t *tmp = perm + len + 1;
  sort_ctx c = {x, op->nregions ? op->regions[0].first : NULL, ins, n, 0, strides[dim], NULL, top_k};
  int64_t nslices = len ? in0->n / len : 0;
  int64_t odims[RF_MAX_RANK], ostr[RF_MAX_RANK];
  memcpy(odims, outs[0]->dims, sizeof(int64_t) * (size_t)outs[0]->rank);
  cj_rf_strides(outs[0]->rank, odims, ostr);
  int64_t reduced[RF_MAX_RANK];
  memcpy(reduced, in0->dims, sizeof reduced);
  reduced[dim] = 1;
  for (int64_t s = 0; s < nslices && !c.st; s++) {
    cj_rf_unravel(s, in0->rank, reduced, idx);
    c.base = 0;
    int64_t obase = 0;
    for (int32_t d = 0; d < in0->rank; d++) {
      c.base += idx[d] * strides[d];
      obase += idx[d] * ostr[d];
    }
    for (int64_t j = 0; j < len; j++) perm[j] = j;
    merge_sort(&c, perm, tmp, len);
    if (top_k) {
      for (int64_t j = 0; j < kk; j++) {
        memcpy(outs[0]->data + (obase + j * ostr[dim]) * outs[0]->esize,
               in0->data + (c.base + perm[j] * c.stride) * in0->esize, (size_t)in0->esize);
        cj_rf_seti(outs[1]->dt, outs[1]->data, obase + j * ostr[dim], perm[j]);
      }
    } else {
      for (uint32_t k = 0; k < n; k++)
        for (int64_t j = 0; j < len; j++)
          memcpy(outs[k]->data + (c.base + j * c.stride) * outs[k]->esize,
                 ins[k]->data + (c.base + perm[j] * c.stride) * ins[k]->esize, (size_t)ins[k]->esize);
    }
  }
  free(perm);
  return c.st;
}

static CJ_MUST_USE cj_status sort(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  int64_t dim = -1;
  cj_op_get_i64(op, "dimension", &dim);
  if (dim < 0) dim += ins[0]->rank;
  if (op->nopnds > MAXN) return cj_op_error(op, CJ_UNIMPLEMENTED, "sort of %u operands", op->nopnds);
  if (ins[0]->rank == 0) {
    for (uint32_t k = 0; k < op->nopnds; k++) memcpy(outs[k]->data, ins[k]->data, (size_t)ins[k]->esize);
    return NULL;
  }
  return sort_slices(x, op, ins, op->nopnds, dim, outs, false, 0);
}

static CJ_MUST_USE cj_status top_k(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  int64_t k = 0;
  cj_op_get_i64(op, "k", &k);
  if (ins[0]->rank == 0) return cj_op_error(op, CJ_INVALID_ARGUMENT, "top_k of a scalar");
  return sort_slices(x, op, ins, 1, ins[0]->rank - 1, outs, true, k);
}

/* ---------------------------------------------------------------- gather / scatter */

typedef struct dims_list {
  int64_t v[RF_MAX_RANK];
  int64_t n;
} dims_list;

static void field(const cj_attr *a, cj_struct_kind sk, int f, dims_list *out) {
  out->n = 0;
  const cj_attr *v = cj_attr_field(a, sk, f);
  if (v) cj_attr_get_i64s(v, out->v, RF_MAX_RANK, &out->n);
}

/* the integer-list fields f[0..n) of a struct attribute into out[0..n) */
static void fields(const cj_attr *a, cj_struct_kind sk, const int *f, dims_list *const *out, int n) {
  for (int i = 0; i < n; i++) field(a, sk, f[i], out[i]);
}

static int64_t field1(const cj_attr *a, cj_struct_kind sk, int f) {
  int64_t v = 0;
  const cj_attr *x = cj_attr_field(a, sk, f);
  if (x) cj_attr_get_i64(x, &v);
  return v;
}

/* start index vector at batch index bi (the result's/updates' batch coordinates, in order) */
static void index_vector(const rv *ix, int64_t ivd, const int64_t *bi, int64_t *vec, int64_t nvec) {
  int64_t idx[RF_MAX_RANK];
  int32_t q = 0;
  for (int32_t d = 0; d < ix->rank; d++) idx[d] = d == ivd ? 0 : bi[q++];
  for (int64_t k = 0; k < nvec; k++) {
    if (ivd < ix->rank) idx[ivd] = k;
    vec[k] = cj_rf_geti(ix->dt, ix->data, cj_rf_ravel(ix->rank, ix->dims, idx));
  }
}

/* Splits index idx (rank entries) into the coordinates of the dims in l (to in_l, in order) and
 * those of the other dims (to rest); returns how many went to in_l. */
static int32_t split_index(int32_t rank, const int64_t *idx, const dims_list *l, int64_t *in_l,
                           int64_t *rest) {
  int32_t nl = 0, nr = 0;
  for (int32_t d = 0; d < rank; d++) {
    if (cj_rf_in_list(d, l->v, l->n)) in_l[nl++] = idx[d];
    else rest[nr++] = idx[d];
  }
  return nl;
}

/* Adds to the operand index `full` the batch coordinates bi of its batching dims (obat[k] pairs
 * with indices batching dim sbat[k]; bi leaves out the index vector dim ivd). */
static void add_batching(int64_t *full, const dims_list *obat, const dims_list *sbat,
                         const int64_t *bi, int64_t ivd) {
  for (int64_t k = 0; k < obat->n; k++) {
    int64_t sd = sbat->v[k];
    full[obat->v[k]] += bi[sd < ivd ? sd : sd - 1];
  }
}

static CJ_MUST_USE cj_status gather(cj_op *op, rv **ins, rv *out) {
  const rv *in = ins[0], *ix = ins[1];
  const cj_attr *dn = cj_op_attr(op, "dimension_numbers");
  dims_list offd, coll, obat, sbat, smap, ss;
  static const int gf[5] = {CJ_SF_GATHER_offset_dims, CJ_SF_GATHER_collapsed_slice_dims,
                            CJ_SF_GATHER_operand_batching_dims,
                            CJ_SF_GATHER_start_indices_batching_dims, CJ_SF_GATHER_start_index_map};
  fields(dn, CJ_SK_GATHER, gf, (dims_list *const[5]){&offd, &coll, &obat, &sbat, &smap}, 5);
  int64_t ivd = field1(dn, CJ_SK_GATHER, CJ_SF_GATHER_index_vector_dim);
  cj_op_get_i64s(op, "slice_sizes", ss.v, RF_MAX_RANK, &ss.n);
  int64_t ri[RF_MAX_RANK], bi[RF_MAX_RANK], oi[RF_MAX_RANK], vec[RF_MAX_RANK], full[RF_MAX_RANK];
  /* operand dims that take offset coordinates, in order */
  int64_t odims[RF_MAX_RANK], nod = 0;
  for (int32_t d = 0; d < in->rank; d++)
    if (!cj_rf_in_list(d, coll.v, coll.n) && !cj_rf_in_list(d, obat.v, obat.n)) odims[nod++] = d;
  for (int64_t r = 0; r < out->n; r++) {
    cj_rf_unravel(r, out->rank, out->dims, ri);
    int32_t no = split_index(out->rank, ri, &offd, oi, bi);
    index_vector(ix, ivd, bi, vec, smap.n);
    for (int32_t d = 0; d < in->rank; d++) full[d] = 0;
    for (int64_t k = 0; k < smap.n; k++) {
      int64_t d = smap.v[k], hi = in->dims[d] - ss.v[d], s = vec[k];
      full[d] = s < 0 ? 0 : s > hi ? hi : s;
    }
    add_batching(full, &obat, &sbat, bi, ivd);
    for (int64_t k = 0; k < nod && k < no; k++) full[odims[k]] += oi[k];
    memcpy(out->data + r * out->esize, in->data + cj_rf_ravel(in->rank, in->dims, full) * in->esize, (size_t)out->esize);
  }
  return NULL;
}

static CJ_MUST_USE cj_status scatter(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  uint32_t n = (op->nopnds - 1) / 2;
  if (n == 0 || n > MAXN) return cj_op_error(op, CJ_UNIMPLEMENTED, "scatter of %u operands", n);
  const rv *in = ins[0], *ix = ins[n], *up0 = ins[n + 1];
  const cj_attr *dn = cj_op_attr(op, "scatter_dimension_numbers");
  dims_list uwd, iwd, ibat, sbat, s2o;
  static const int sf[5] = {CJ_SF_SCATTER_update_window_dims, CJ_SF_SCATTER_inserted_window_dims,
                            CJ_SF_SCATTER_input_batching_dims,
                            CJ_SF_SCATTER_scatter_indices_batching_dims,
                            CJ_SF_SCATTER_scatter_dims_to_operand_dims};
  fields(dn, CJ_SK_SCATTER, sf, (dims_list *const[5]){&uwd, &iwd, &ibat, &sbat, &s2o}, 5);
  int64_t ivd = field1(dn, CJ_SK_SCATTER, CJ_SF_SCATTER_index_vector_dim);
  for (uint32_t k = 0; k < n; k++) /* (the result type may be wider: promoted scatters) */
    for (int64_t i = 0; i < ins[k]->n; i++)
      cj_rs_set(outs[k]->dt, outs[k]->data, i, cj_rs_convert(ins[k]->dt, outs[k]->dt, cj_rs_get(ins[k]->dt, ins[k]->data, i)));
  int64_t wdims[RF_MAX_RANK], nwd = 0, wsize[RF_MAX_RANK];
  for (int32_t d = 0; d < in->rank; d++) {
    wsize[d] = 1;
    if (!cj_rf_in_list(d, iwd.v, iwd.n) && !cj_rf_in_list(d, ibat.v, ibat.n)) wdims[nwd++] = d;
  }
  for (int64_t k = 0; k < nwd && k < uwd.n; k++) wsize[wdims[k]] = up0->dims[uwd.v[k]];
  int64_t ui[RF_MAX_RANK], bi[RF_MAX_RANK], wi[RF_MAX_RANK], vec[RF_MAX_RANK], full[RF_MAX_RANK];
  cj_block *b = op->regions[0].first;
  rs a[2 * MAXN], r[MAXN];
  /* updates are applied one scatter index after the other, each whole window in order (XLA's
   * order, which decides overlapping non-commutative updates) */
  int64_t bd[RF_MAX_RANK], bdsz[RF_MAX_RANK], wd_[RF_MAX_RANK], wdsz[RF_MAX_RANK], nbd = 0, nwd_ = 0, bn = 1, wn = 1;
  for (int32_t d = 0; d < up0->rank; d++) {
    if (cj_rf_in_list(d, uwd.v, uwd.n)) {
      wd_[nwd_] = d;
      wdsz[nwd_++] = up0->dims[d];
      wn *= up0->dims[d];
    } else {
      bd[nbd] = d;
      bdsz[nbd++] = up0->dims[d];
      bn *= up0->dims[d];
    }
  }
  int64_t bix[RF_MAX_RANK], wix[RF_MAX_RANK];
  for (int64_t ub = 0; ub < bn * wn; ub++) {
    cj_rf_unravel(ub / wn, (int32_t)nbd, bdsz, bix);
    cj_rf_unravel(ub % wn, (int32_t)nwd_, wdsz, wix);
    for (int64_t k = 0; k < nbd; k++) ui[bd[k]] = bix[k];
    for (int64_t k = 0; k < nwd_; k++) ui[wd_[k]] = wix[k];
    int64_t u = cj_rf_ravel(up0->rank, up0->dims, ui);
    int32_t nw = split_index(up0->rank, ui, &uwd, wi, bi);
    index_vector(ix, ivd, bi, vec, s2o.n);
    for (int32_t d = 0; d < in->rank; d++) full[d] = 0;
    for (int64_t k = 0; k < s2o.n; k++) full[s2o.v[k]] = vec[k];
    add_batching(full, &ibat, &sbat, bi, ivd);
    /* a window that does not fit whole is dropped whole (XLA's semantics; the spec leaves
     * out-of-bounds updates to the implementation) */
    bool inside = true;
    for (int32_t d = 0; d < in->rank; d++)
      if (full[d] < 0 || full[d] + wsize[d] > in->dims[d]) inside = false;
    if (!inside) continue;
    for (int64_t k = 0; k < nwd && k < nw; k++) full[wdims[k]] += wi[k];
    int64_t o = cj_rf_ravel(in->rank, in->dims, full);
    for (uint32_t k = 0; k < n; k++) {
      a[k] = cj_rs_get(outs[k]->dt, outs[k]->data, o);
      a[n + k] = cj_rs_get(ins[n + 1 + k]->dt, ins[n + 1 + k]->data, u);
    }
    CJ_RETURN_IF_ERROR(cj_rf_call_scalar(x, b, a, r));
    for (uint32_t k = 0; k < n; k++) cj_rs_set(outs[k]->dt, outs[k]->data, o, r[k]);
  }
  return NULL;
}

/* ---------------------------------------------------------------- ref.def's rows */

cj_status cj_rf_x_reduce(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return reduce(x, op, ins, outs); }
cj_status cj_rf_x_reduce_window(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return reduce_window(x, op, ins, outs); }
cj_status cj_rf_x_select_and_scatter(rf_exec *x, cj_op *op, rv **ins, rv **outs) {
  return select_and_scatter(x, op, ins, outs[0]);
}
cj_status cj_rf_x_sort(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return sort(x, op, ins, outs); }
cj_status cj_rf_x_top_k(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return top_k(x, op, ins, outs); }
cj_status cj_rf_x_gather(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return gather(op, ins, outs[0]); }
cj_status cj_rf_x_scatter(rf_exec *x, cj_op *op, rv **ins, rv **outs) { return scatter(x, op, ins, outs); }
